"""Goals on simulated resources: the running execution of a goal (:class:`_Execution`) and the
common part of arms and grippers (:class:`_SimResource`: goals, preemption, extra actions).

Moved out of :mod:`.backend` (issue 37 item 6); the backend's module docstring describes the
goal life cycle (PENDING until the backend next runs, a new goal preempts the running one).
"""

from __future__ import annotations

import weakref
from typing import Any, Callable, Optional

from ..backend import BackendError
from ..msgs.actions import GoalHandle, GoalStatus


def live_backend(ref: Callable[[], Optional["SimBackend"]]) -> "SimBackend":
    """The backend a weak reference (``weakref.ref``) points to, for the parts of a backend that must
    not keep it alive; BackendError when it is gone."""
    b = ref()
    if b is None:
        raise BackendError("the backend is gone")
    return b


# ================================================================================================
# Action executions
# ================================================================================================
class _Execution:
    """One running goal on a resource. ``step()`` runs before every physics step."""

    def __init__(self, resource: "_SimResource", handle: GoalHandle):
        self.resource = resource
        self.handle = handle

    def step(self) -> None:  # pragma: no cover - overridden
        pass

    def publish_feedback(self) -> None:
        pass

    def stop(self) -> Any:
        """Cancelled or preempted: hold still, return the result to attach."""
        return None

    def finish(self) -> None:
        self.resource._execution_done(self)


class _SimResource:
    """Common part of :class:`SimArm` and :class:`SimGripper`: goals, preemption, extra actions."""

    kind = "resource"

    def __init__(self, backend: "SimBackend", name: str):
        self._backend_ref = weakref.ref(backend)
        self.name = name
        self._servers: dict[str, Callable[[Any, GoalHandle], Optional[_Execution]]] = {}
        self._active: Optional[_Execution] = None
        self._incoming: list[tuple[Callable[[Any, GoalHandle], Optional[_Execution]], GoalHandle]] = []

    @property
    def backend(self) -> "SimBackend":
        return live_backend(self._backend_ref)

    @property
    def actions(self) -> frozenset[str]:
        return frozenset(self._servers)

    def add_action(self, action: str, server: Callable[[Any, GoalHandle], Optional[_Execution]]) -> None:
        """Serve ``action`` with ``server(resource, handle)``.

        The server validates ``handle.goal``; it either finishes the handle at once (rejected,
        aborted, succeeded) and returns None, or returns an execution object with ``step()`` (called
        before every physics step), ``publish_feedback()`` (once per ``advance``), ``stop()`` (on cancel
        or preemption; returns the result to attach) and that calls ``resource._execution_done(self)``
        when it finishes the handle itself. Replaces an existing server of the same name.
        """
        self._servers[action] = server

    def send_goal(self, action: str, goal: Any) -> GoalHandle:
        """Send ``goal`` to ``action``'s server; never blocks, and does no work in the caller's tick.

        Returns a :class:`GoalHandle`, PENDING until the backend next runs (``advance``, ``step``,
        :meth:`SimBackend.accept_goals`), as a goal sent to a real action server is: the server then
        takes it (validates it, prepares the motion, preempts the goal running on this resource) and
        it is ACTIVE while it runs, REJECTED for an invalid goal, or already ABORTED (e.g. a target
        out of reach). No physics step passes in between: the goal starts on the same step as if
        it had been taken at once. An unknown action is REJECTED at once.

        Raises:
            BackendError: the backend is closed.
        """
        backend = self.backend
        if backend.closed:
            raise BackendError(f"cannot send {action!r} to {self.name!r}: the backend is closed")
        handle = GoalHandle(action, goal, on_cancel=self._on_cancel)
        server = self._servers.get(action)
        if server is None:
            import difflib

            close = difflib.get_close_matches(action, sorted(self._servers), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; it serves {sorted(self._servers)}"
            handle.set_rejected(f"{self.kind} {self.name!r} has no action {action!r}{hint}")
            return handle
        self._incoming.append((server, handle))
        backend._incoming.append(self)
        return handle

    def _accept(self) -> None:
        """The server takes the goals sent since the backend last ran, in order (a later one preempts)."""
        incoming, self._incoming = self._incoming, []
        for server, handle in incoming:
            if handle.done:  # cancelled while PENDING
                continue
            self.preempt(f"preempted by a new {handle.action!r} goal")
            try:
                execution = server(self, handle)
            except (TypeError, ValueError) as e:
                handle.set_rejected(f"invalid {handle.action} goal: {e}")
                continue
            if execution is not None and not handle.done:
                handle.set_active()
                self._active = execution
                self.backend._dirty = True
                execution.publish_feedback()

    def preempt(self, text: str = "preempted") -> None:
        """Stop the running goal (PREEMPTED with ``text``) and hold still. No-op when idle."""
        ex = self._active
        if ex is None:
            return
        self._active = None
        self.backend._dirty = True
        result = ex.stop()
        ex.handle.set_preempted(result, text)

    def _on_cancel(self, handle: GoalHandle) -> None:
        if self._active is not None and self._active.handle is handle:
            self.preempt("cancelled")
        elif handle.status == GoalStatus.PENDING:
            handle.set_recalled()  # never taken by the server
        else:
            handle.set_preempted(None, "cancelled")

    def _execution_done(self, ex: _Execution) -> None:
        if self._active is ex:
            self._active = None
            self.backend._dirty = True
