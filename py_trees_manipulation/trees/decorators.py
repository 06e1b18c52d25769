"""Decorators that need the backend clock, and the table of decorators a file may use.

py_trees' own ``Timeout`` reads the wall clock; ours (``Timeout`` in files) counts backend time,
so a run is deterministic at any real-time factor.
"""

from __future__ import annotations

from typing import Any

import py_trees
from py_trees.common import Status


class BackendTimeout(py_trees.decorators.Decorator):
    """FAILURE if the child is still RUNNING after ``duration_s`` of backend time (child is stopped).

    Args:
        child: the decorated behaviour.
        duration_s: seconds of backend (sim) time.
    """

    def __init__(self, name: str, child: py_trees.behaviour.Behaviour, duration_s: float):
        super().__init__(name=name, child=child)
        self.duration_s = float(duration_s)
        self._backend: Any = None
        self._t0 = 0.0

    def setup(self, **kwargs: Any) -> None:
        self._backend = kwargs.get("backend")

    def _now(self) -> float:
        return float(self._backend.now()) if self._backend is not None else 0.0

    def initialise(self) -> None:
        self._t0 = self._now()
        self.feedback_message = ""

    def update(self) -> Status:
        elapsed = self._now() - self._t0
        if self.decorated.status == Status.RUNNING and elapsed >= self.duration_s:
            self.feedback_message = f"timed out after {self.duration_s:g} s ({self.decorated.name} still running)"
            return Status.FAILURE
        if self.decorated.status == Status.FAILURE and self.decorated.feedback_message:
            self.feedback_message = self.decorated.feedback_message
        return self.decorated.status
