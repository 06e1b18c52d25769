"""A count of the geometric work done, per thread: IK solver calls (each
``calculateInverseKinematics`` of :func:`~.ik.solve_ik`) and arm states checked for collision (each
:meth:`~.state_checker.StateChecker.set_state`). A search bounded by it
(:class:`~.base_search.SearchBudget`) gives the same answer on any machine and under any load, as a
wall-clock budget does not. Per thread: a search and the whole-task tests it runs share a thread,
and work done meanwhile elsewhere (a planning worker, the simulator's own IK) is not counted.
"""

from __future__ import annotations

import threading

__all__ = ["WORK", "work_units"]


class _Work(threading.local):
    """The counters (plain ints, incremented in the hot paths), one pair per thread."""

    def __init__(self) -> None:
        self.ik_calls = 0
        self.state_checks = 0


WORK = _Work()


def work_units() -> int:
    """IK solver calls plus arm states checked, so far in this thread."""
    return WORK.ik_calls + WORK.state_checks
