"""A small self-contained tree and fake backend, for tests, benchmarks and trying the viewer.

Not a simulator: :class:`FakeBackend` only keeps a clock and makes up gripper, object and door
telemetry in the shapes the PyBullet backend reports (see :mod:`py_trees_manipulation.observers`).
:func:`run_loop` ticks a tree and calls observers exactly as the runner does (``on_start`` after
setup, ``on_tick`` after every tick, ``on_end`` in a ``finally``), so observers can be tested
without the simulator.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Iterable, Optional

import numpy as np
import py_trees

from py_trees_manipulation.geometry.poses import pose_from_xyz_rpy
from py_trees_manipulation.observers import RunState


class FakeBackend:
    """A clock plus made-up telemetry.

    Streams: ``gripper/panda`` (``gap_m``, ``effort_n``, ``left_fingertip_force_n``,
    ``right_fingertip_force_n``, ``force_setpoint_n``, ``mode``), ``object/mug`` (``pose``, a
    (4, 4) array) and ``door/door`` (``angle_rad``). The grip closes from 0.08 m to 0.05 m over
    the first second, then squeezes with 5 N; the mug rises 1 cm/s after 1.5 s; the door opens at
    0.1 rad/s.
    """

    def __init__(self, dt: float = 1.0 / 30.0) -> None:
        self.dt = dt
        self._t = 0.0

    def now(self) -> float:
        return self._t

    def advance(self, dt: Optional[float] = None) -> None:
        self._t += self.dt if dt is None else dt

    def telemetry(self) -> dict[str, dict[str, Any]]:
        t = self._t
        closing = t < 1.0
        gap = 0.08 - 0.03 * min(t, 1.0)
        force = 0.0 if closing else 5.0 * (1.0 - np.exp(-(t - 1.0) / 0.1))
        z = 0.05 + 0.01 * max(0.0, t - 1.5)
        return {
            "gripper/panda": {
                "gap_m": gap,
                "effort_n": -force,
                "left_fingertip_force_n": force * 1.02,
                "right_fingertip_force_n": force * 0.98,
                "force_setpoint_n": 0.0 if closing else 5.0,
                "mode": "position" if closing else "force",
            },
            "object/mug": {"pose": pose_from_xyz_rpy([0.5, 0.0, z], [0.0, 0.0, 0.3])},
            "door/door": {"angle_rad": 0.1 * t},
        }


class WriteValue(py_trees.behaviour.Behaviour):
    """Writes ``value`` to blackboard ``key`` and succeeds, after ``ticks`` RUNNING ticks."""

    def __init__(self, name: str, key: str, value: Any, ticks: int = 0) -> None:
        super().__init__(name)
        self.key = key
        self.ticks = ticks
        self.value = value
        self._count = 0
        self.bb = self.attach_blackboard_client(name=name)
        self.bb.register_key(key=key, access=py_trees.common.Access.WRITE)

    def initialise(self) -> None:
        self._count = 0

    def update(self) -> py_trees.common.Status:
        self._count += 1
        if self._count <= self.ticks:
            self.feedback_message = f"waiting {self._count}/{self.ticks}"
            return py_trees.common.Status.RUNNING
        self.bb.set(self.key, self.value)
        self.feedback_message = f"wrote {self.key}"
        return py_trees.common.Status.SUCCESS


class ReadValue(py_trees.behaviour.Behaviour):
    """Reads ``key`` each tick and stays RUNNING (``forever``) or succeeds."""

    def __init__(self, name: str, key: str, forever: bool = True) -> None:
        super().__init__(name)
        self.key = key
        self.forever = forever
        self.bb = self.attach_blackboard_client(name=name)
        self.bb.register_key(key=key, access=py_trees.common.Access.READ)

    def update(self) -> py_trees.common.Status:
        value = self.bb.get(self.key)
        self.feedback_message = f"holding at {value!r}"
        return py_trees.common.Status.RUNNING if self.forever else py_trees.common.Status.SUCCESS


def demo_tree(wait_ticks: int = 3) -> py_trees.trees.BehaviourTree:
    """``Sequence "Pick"`` (memory) of ``WriteValue "Plan Grasp"`` (writes ``/grasp_width_m`` =
    0.042 after ``wait_ticks`` RUNNING ticks), ``Selector "Grasp"`` (no memory) of a failing
    ``Failure "Already Holding"`` and ``Success "Close Gripper"``, and ``ReadValue "Hold"``
    (RUNNING for ever)."""
    root = py_trees.composites.Sequence("Pick", memory=True)
    grasp = py_trees.composites.Selector("Grasp", memory=False)
    grasp.add_children(
        [py_trees.behaviours.Failure("Already Holding"), py_trees.behaviours.Success("Close Gripper")]
    )
    root.add_children(
        [
            WriteValue("Plan Grasp", "/grasp_width_m", 0.042, ticks=wait_ticks),
            grasp,
            ReadValue("Hold", "/grasp_width_m"),
        ]
    )
    return py_trees.trees.BehaviourTree(root)


def run_loop(
    tree: py_trees.trees.BehaviourTree,
    backend: Any,
    observers: Iterable[Any],
    ticks: int,
    *,
    source: str = "<memory>",
    extra: Optional[dict[str, Any]] = None,
    fail_at: Optional[int] = None,
    exception: type[BaseException] = RuntimeError,
    between_ticks: Optional[Callable[[RunState], None]] = None,
    tick_period_s: float = 0.0,
) -> RunState:
    """Tick ``tree`` ``ticks`` times, calling observers as the runner does.

    Args:
        fail_at: raise ``exception`` inside the loop just before this tick number (1-based), to
            test that observers still finish (``KeyboardInterrupt`` simulates Ctrl-C).
        between_ticks: called after each tick's observers (tests use it to pace or inspect).
        tick_period_s: wall-clock sleep after each tick (for watching live in a browser).

    Returns:
        The final :class:`RunState` (only if nothing was raised).
    """
    observers = list(observers)
    tree.setup(backend=backend)
    run = RunState(tree=tree, backend=backend, source=source, extra=dict(extra or {}))
    for obs in observers:
        obs.on_start(run)
    summary: dict[str, Any] = {"status": "INVALID", "ticks": 0}
    try:
        for i in range(1, ticks + 1):
            if fail_at is not None and i == fail_at:
                raise exception(f"fake failure before tick {i}")
            tree.tick()
            backend.advance()
            run.tick = i
            run.time_s = backend.now()
            if i % 10 == 0:
                run.events.append({"time_s": run.time_s, "source": "demo", "text": f"tick {i}"})
            for obs in observers:
                obs.on_tick(run)
            if between_ticks is not None:
                between_ticks(run)
            if tick_period_s > 0:
                time.sleep(tick_period_s)
        summary = {"status": tree.root.status.value, "ticks": run.tick, "time_s": run.time_s}
    except BaseException as exc:
        summary = {"status": "ERROR", "ticks": run.tick, "time_s": run.time_s,
                   "error": f"{type(exc).__name__}: {exc}"}
        raise
    finally:
        for obs in observers:
            obs.on_end(run, summary)
    return run
