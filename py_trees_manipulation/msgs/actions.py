"""Goal status and the goal handle shared by every backend (actionlib semantics).

``GoalStatus`` uses actionlib_msgs/GoalStatus numbers so a status read off a real robot over
rosbridge needs no translation. A :class:`GoalHandle` is the one object a behaviour holds while an
action runs: ``status``, ``feedback``, ``result``, ``text`` and ``cancel()``. The server side of a
backend (the simulator, the fake backend, the rosbridge client) drives it with ``set_active``,
``publish_feedback``, ``set_succeeded``, ``set_aborted``, ``set_preempted`` and ``set_rejected``.
"""

from __future__ import annotations

import enum
from typing import Any, Callable, Optional


class GoalStatus(enum.IntEnum):
    """actionlib_msgs/GoalStatus values."""

    PENDING = 0
    ACTIVE = 1
    PREEMPTED = 2
    SUCCEEDED = 3
    ABORTED = 4
    REJECTED = 5
    PREEMPTING = 6
    RECALLING = 7
    RECALLED = 8
    LOST = 9

    @property
    def is_terminal(self) -> bool:
        return self in _TERMINAL


_TERMINAL = {GoalStatus.PREEMPTED, GoalStatus.SUCCEEDED, GoalStatus.ABORTED, GoalStatus.REJECTED,
             GoalStatus.RECALLED, GoalStatus.LOST}


class GoalHandle:
    """Client view of one goal, with actionlib semantics.

    Args:
        action: the action's name, e.g. ``"move_to_pose"`` or ``"find_contact"``.
        goal: the goal message (a dataclass from :mod:`py_trees_manipulation.msgs`).
        on_cancel: called once, synchronously, when the client cancels a goal that is not done.
            The server must then finish the goal (normally ``set_preempted``).

    The handle never blocks: behaviours poll ``status`` once per tick.
    """

    def __init__(self, action: str, goal: Any, on_cancel: Optional[Callable[["GoalHandle"], None]] = None):
        self.action = action
        self.goal = goal
        self.status: GoalStatus = GoalStatus.PENDING
        self.feedback: Any = None
        self.result: Any = None
        self.text: str = ""
        self.cancel_requested = False
        self._on_cancel = on_cancel

    # ---- client side -------------------------------------------------------------------------
    @property
    def done(self) -> bool:
        """True once the goal reached a terminal status."""
        return self.status.is_terminal

    def cancel(self) -> None:
        """Ask the server to stop this goal. Idempotent; a no-op on a finished goal."""
        if self.done or self.cancel_requested:
            return
        self.cancel_requested = True
        if self._on_cancel is not None:
            self._on_cancel(self)
        elif self.status == GoalStatus.PENDING:
            self.set_recalled()

    # ---- server side -------------------------------------------------------------------------
    def set_active(self) -> None:
        if self.status == GoalStatus.PENDING:
            self.status = GoalStatus.ACTIVE

    def publish_feedback(self, feedback: Any) -> None:
        if not self.done:
            self.feedback = feedback

    def _finish(self, status: GoalStatus, result: Any, text: str) -> None:
        if self.done:
            return
        self.status = status
        if result is not None:
            self.result = result
        self.text = text

    def set_succeeded(self, result: Any = None, text: str = "") -> None:
        self._finish(GoalStatus.SUCCEEDED, result, text)

    def set_aborted(self, result: Any = None, text: str = "") -> None:
        self._finish(GoalStatus.ABORTED, result, text)

    def set_preempted(self, result: Any = None, text: str = "cancelled") -> None:
        self._finish(GoalStatus.PREEMPTED, result, text)

    def set_rejected(self, text: str) -> None:
        self._finish(GoalStatus.REJECTED, None, text)

    def set_recalled(self, text: str = "cancelled before it started") -> None:
        self._finish(GoalStatus.RECALLED, None, text)

    def set_lost(self, text: str) -> None:
        self._finish(GoalStatus.LOST, None, text)

    def __repr__(self) -> str:
        return f"GoalHandle({self.action!r}, {self.status.name}, text={self.text!r})"
