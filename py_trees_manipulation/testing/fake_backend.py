"""A scriptable fake backend (the counterpart of Nav2's TestActionServer).

Each action on each resource follows a :class:`Script`: how long the goal stays PENDING, how long it
runs (streaming feedback), and how it ends (SUCCEEDED, ABORTED, REJECTED, or never: ``hang``).
Every goal and cancel is recorded, so tests can assert that a preempted behaviour cancelled its goal.

Example::

    backend = FakeBackend()
    backend.arms["panda"].script("move_to_pose", Script(duration_s=0.5, outcome="succeeded"))
    tree.setup(backend=backend)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..msgs.actions import GoalHandle, GoalStatus

ARM_ACTIONS = frozenset({"move_to_pose", "move_cartesian", "move_joints"})
GRIPPER_ACTIONS = frozenset({"gripper_action", "find_contact", "force_servo", "slip_servo", "grab", "release", "event_detector"})


@dataclass
class Script:
    """What the fake server does with a goal.

    Attributes:
        outcome: ``"succeeded"``, ``"aborted"``, ``"rejected"`` or ``"hang"`` (runs forever).
        pending_s: backend time before the goal is accepted (ACTIVE).
        duration_s: backend time from ACTIVE to the outcome.
        result: result message (or a callable ``goal -> result``).
        feedback: feedback message published while ACTIVE (or a callable ``(goal, elapsed_s) -> fb``).
        text: status text (the reason on abort or reject).
    """

    outcome: str = "succeeded"
    pending_s: float = 0.0
    duration_s: float = 0.0
    result: Any = None
    feedback: Any = None
    text: str = ""


@dataclass
class _Goal:
    handle: GoalHandle
    script: Script
    sent_s: float


class FakeResource:
    """An arm or gripper whose actions follow scripts. ``goals`` and ``cancels`` record traffic."""

    def __init__(self, backend: "FakeBackend", name: str, actions: frozenset[str]):
        self.backend = backend
        self.name = name
        self.actions = actions
        self.scripts: dict[str, Script] = {}
        self.goals: list[tuple[str, Any]] = []
        self.cancels: list[tuple[str, GoalStatus]] = []
        self.live: list[_Goal] = []
        self.joint_names = [f"joint{i + 1}" for i in range(7)]
        self.named_configurations = {"ready": [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785]}
        self.max_gap_m = 0.08  # gripper opening range, m (GripperCommand position: open / closed)
        self.min_gap_m = 0.0
        self._tcp = np.eye(4)
        self._tcp[:3, 3] = [0.3, 0.0, 0.5]

    def script(self, action: str, script: Script) -> None:
        self.scripts[action] = script

    def tcp_pose(self) -> np.ndarray:
        return self._tcp.copy()

    def joint_positions(self) -> list[float]:
        return list(self.named_configurations["ready"])

    def gap_m(self) -> float:
        return self.max_gap_m

    def send_goal(self, action: str, goal: Any) -> GoalHandle:
        self.goals.append((action, goal))

        def on_cancel(h: GoalHandle) -> None:
            self.cancels.append((action, h.status))
            h.set_preempted(text="cancelled by the client")

        handle = GoalHandle(action, goal, on_cancel)
        if action not in self.actions:
            handle.set_rejected(f"{self.name} has no action {action!r}")
            return handle
        script = self.scripts.get(action, Script())
        if script.outcome == "rejected" and script.pending_s <= 0:
            handle.set_rejected(script.text or "rejected by the fake server")
            return handle
        self.live.append(_Goal(handle, script, self.backend.now()))
        self._service()
        return handle

    def _service(self) -> None:
        now = self.backend.now()
        for g in list(self.live):
            h, s = g.handle, g.script
            if h.done:
                self.live.remove(g)
                continue
            if h.status == GoalStatus.PENDING and now - g.sent_s >= s.pending_s:
                if s.outcome == "rejected":
                    h.set_rejected(s.text or "rejected by the fake server")
                    continue
                h.set_active()
            if h.status != GoalStatus.ACTIVE:
                continue
            elapsed = now - g.sent_s - s.pending_s
            fb = s.feedback(h.goal, elapsed) if callable(s.feedback) else s.feedback
            if fb is not None:
                h.publish_feedback(fb)
            if s.outcome != "hang" and elapsed >= s.duration_s:
                res = s.result(h.goal) if callable(s.result) else s.result
                if s.outcome == "succeeded":
                    h.set_succeeded(res, s.text)
                else:
                    h.set_aborted(res, s.text or "aborted by the fake server")


class _FakeWorld:
    def __init__(self) -> None:
        self.poses: dict[str, np.ndarray] = {}

    def object_names(self) -> list[str]:
        return sorted(self.poses)

    def object_pose(self, name: str) -> np.ndarray:
        return self.poses[name].copy()


class FakePlanning:
    """A planning service (:class:`~py_trees_manipulation.backend.PlanningService`) for the fake
    backend: a kinematic collision world of ``scene`` (built on the first query; the robots at their
    initial configuration, the objects where ``backend.world.poses`` puts them), queries answered at
    once. Geometry is real (IK, collisions), nothing moves.

    Args:
        backend: the fake backend. scene: a parsed :class:`~py_trees_manipulation.scene.spec.SceneSpec`.
    """

    def __init__(self, backend: "FakeBackend", scene: Any):
        self.backend = backend
        self.scene = scene
        self._world: Any = None

    @property
    def world(self) -> Any:
        if self._world is None:
            from ..collision.world import CollisionWorld

            self._world = CollisionWorld.from_scene(self.scene)
        return self._world

    def query(self, fn: Any, label: str = "query") -> GoalHandle:
        """Run ``fn(world, cancelled)`` now; the handle is SUCCEEDED with its value, or ABORTED with
        the message of the ValueError/KeyError it raised."""
        handle = GoalHandle("planning_query", label)
        handle.set_active()
        w = self.world
        for name, T in self.backend.world.poses.items():
            if name in w.bodies:
                w.set_object_pose(name, T)
        try:
            value = fn(w, lambda: False)
        except (ValueError, KeyError) as e:
            handle.set_aborted(None, str(e.args[0]) if isinstance(e, KeyError) and e.args else str(e))
            return handle
        handle.set_succeeded(value, "answered")
        return handle

    def close(self) -> None:
        if self._world is not None:
            self._world.close()
            self._world = None


class FakeBackend:
    """Backend with one arm and one gripper named ``name`` whose actions follow scripts.

    ``advance(dt)`` moves the clock and services goals; ``world.poses`` holds object poses;
    ``motion_planning`` is None unless a test (or :func:`~py_trees_manipulation.scenarios.sweep.fake_backend_for`)
    gives it a :class:`FakePlanning`.
    """

    def __init__(self, name: str = "panda", seed: int = 0):
        self.name = "fake"
        self.seed = seed
        self._t = 0.0
        self.arms = {name: FakeResource(self, name, ARM_ACTIONS)}
        self.grippers = {name: FakeResource(self, name, GRIPPER_ACTIONS)}
        self.world = _FakeWorld()
        self.motion_planning: Any = None
        self.closed = False
        self.extra_metrics: dict[str, Any] = {}

    def now(self) -> float:
        return self._t

    def advance(self, dt: float) -> None:
        if self.closed:
            raise RuntimeError("backend closed")
        self._t += dt
        for r in list(self.arms.values()) + list(self.grippers.values()):
            r._service()

    def metrics(self) -> dict[str, Any]:
        return {"sim_time_s": self._t, **self.extra_metrics}

    def close(self) -> None:
        self.closed = True
        if self.motion_planning is not None and hasattr(self.motion_planning, "close"):
            self.motion_planning.close()
