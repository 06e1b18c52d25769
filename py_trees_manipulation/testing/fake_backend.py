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


class FakeBackend:
    """Backend with one arm and one gripper named ``name`` whose actions follow scripts.

    ``advance(dt)`` moves the clock and services goals; ``world.poses`` holds object poses.
    """

    def __init__(self, name: str = "panda", seed: int = 0):
        self.name = "fake"
        self.seed = seed
        self._t = 0.0
        self.arms = {name: FakeResource(self, name, ARM_ACTIONS)}
        self.grippers = {name: FakeResource(self, name, GRIPPER_ACTIONS)}
        self.world = _FakeWorld()
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
