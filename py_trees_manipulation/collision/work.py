"""A count of the geometric work done, per thread: IK solver calls (each
``calculateInverseKinematics`` of :func:`~.ik.solve_ik`) and arm states checked for collision (each
:meth:`~.state_checker.StateChecker.set_state`). A search bounded by it
(:class:`SearchBudget`: the base search, the place-spot search) gives the same answer on any machine and under any load, as a
wall-clock budget does not. Per thread: a search and the whole-task tests it runs share a thread,
and work done meanwhile elsewhere (a planning worker, the simulator's own IK) is not counted.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Optional

__all__ = ["WORK", "work_units", "SearchBudget"]


class _Work(threading.local):
    """The counters (plain ints, incremented in the hot paths), one pair per thread."""

    def __init__(self) -> None:
        self.ik_calls = 0
        self.state_checks = 0


WORK = _Work()


def work_units() -> int:
    """IK solver calls plus arm states checked, so far in this thread."""
    return WORK.ik_calls + WORK.state_checks


@dataclass
class SearchBudget:
    """The work a search (a base search, a place-spot search) may spend, counted, not timed: ``units`` of
    :func:`~.work.work_units` (IK solver calls plus arm states checked for collision, those of the
    whole-task tests it runs included), from the first :meth:`begin` on. The search checks it
    before each candidate (one candidate may overrun it), so the same input stops at the same
    candidate on any machine and under any load (a wall-clock budget stopped a loaded machine's
    search earlier: another base suggested)."""

    units: int
    start: Optional[int] = None

    def begin(self) -> "SearchBudget":
        if self.start is None:
            self.start = work_units()
        return self

    def spent(self) -> int:
        return 0 if self.start is None else work_units() - self.start

    def exhausted(self) -> bool:
        return self.start is not None and self.spent() >= self.units

    def describe(self) -> str:
        return f"its budget of {self.units} IK solves and collision checks"
