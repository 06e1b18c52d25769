"""Joint-space planning with OMPL (PyPI ``ompl`` 2.x, its own nanobind bindings).

:func:`plan_joint_path` plans from a start configuration to one goal configuration or to the first
reachable of several (``ompl.base.GoalStates``) in a box of joint limits, with a validity callable
it is given, by any OMPL geometric planner named in :data:`~py_trees_manipulation.motion.PLANNERS`,
and simplifies it by rope shortcutting and vertex reduction (no B-spline smoothing, which would add
vertices where the ruckig timing stops).

Determinism: OMPL draws every random number from generators seeded by one global seed generator.
``ompl.util.RNG.setSeed(seed)`` re-seeds that generator before each query, and every OMPL object of
the query (space, planner, samplers, path simplifier) is created after it, so the same seed, the
same start, goals and validity give the same path. This holds for planners that stop at their first
solution (RRTConnect, RRT, KPIECE1, ...); the optimising ones (RRTstar, BITstar, ...) improve the
path until ``time_s`` runs out, so how far they get depends on the machine.

Motions between states are checked lazily: the search (and the simplification) validates motions
every ``search_step_rad`` (3x ``max_step_rad`` by default: a third of the checks), and the path it
returns is then checked every ``max_step_rad``; when that finds a collision between two coarse
checks, the query is solved again with the search at ``max_step_rad`` (same seed). So every
returned path is clear at the fine resolution.

Every OMPL object is local to the call and released before it returns: nanobind prints "leaked
instances" at interpreter exit for objects still alive then, which a user must never see.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

import numpy as np

from . import DEFAULT_PLANNER, PLANNERS
from .paths import as_path, first_invalid, path_length

__all__ = ["JointPath", "NoPathError", "plan_joint_path"]

_LOCK = threading.Lock()  # OMPL's global seed generator: one query at a time per process


class NoPathError(RuntimeError):
    """No collision-free path was found.

    Attributes:
        reason: ``"timeout"``, ``"invalid_start"``, ``"invalid_goal"``, ``"cancelled"`` or ``"error"``.
        planner: the planner's name. time_s: the planning time budget, seconds.
    """

    def __init__(self, message: str, reason: str, planner: str, time_s: float):
        super().__init__(message)
        self.reason = reason
        self.planner = planner
        self.time_s = time_s


@dataclass
class JointPath:
    """A planned joint-space path.

    Attributes:
        waypoints: shape (n, dof), radians; straight segments in between (simplified when asked).
        planner: the OMPL planner's name.
        planning_time_s: wall time of ``solve``, seconds.
        simplify_time_s: wall time of the simplification, seconds.
        length_rad: Euclidean joint-space length, radians.
        goal_index: index in ``goals`` of the goal the path ends at.
        checks: calls to the validity callable.
        seed: the OMPL seed used.
    """

    waypoints: np.ndarray
    planner: str
    planning_time_s: float
    simplify_time_s: float
    length_rad: float
    goal_index: int = 0
    checks: int = 0
    seed: int = 1
    extra: dict = field(default_factory=dict)


def _quiet_seed(ou: object, seed: int) -> None:
    """``RNG.setSeed(seed)`` without OMPL's "random number generation already started" error line
    (re-seeding between queries is exactly what we want)."""
    level = ou.getLogLevel()  # type: ignore[attr-defined]
    ou.setLogLevel(ou.LogLevel.LOG_NONE)  # type: ignore[attr-defined]
    try:
        ou.RNG.setSeed(seed)  # type: ignore[attr-defined]
    finally:
        ou.setLogLevel(level)  # type: ignore[attr-defined]


def plan_joint_path(start: Sequence[float], goals: Sequence[Sequence[float]], lower: Sequence[float],
                    upper: Sequence[float], is_valid: Callable[[np.ndarray], bool], *,
                    planner: str = DEFAULT_PLANNER, time_s: float = 2.0, seed: int = 0, simplify: bool = True,
                    max_step_rad: float = 0.02, cancelled: Optional[Callable[[], bool]] = None,
                    try_direct: bool = True, search_step_rad: Optional[float] = None) -> JointPath:
    """Plan a collision-free joint path from ``start`` to one of ``goals``.

    Args:
        start: start configuration, radians, shape (dof,); must be valid.
        goals: one or more goal configurations, radians, each shape (dof,); the path ends at the
            first the planner reaches (the others are alternatives, e.g. IK solutions from other seeds).
        lower, upper: joint limits, radians, shape (dof,): the sampling box.
        is_valid: ``is_valid(q) -> bool`` (``q``: joint positions, a list of floats during the search, an
            array for the start and goals); called from this thread.
        planner: an OMPL geometric planner (one of :data:`~py_trees_manipulation.motion.PLANNERS`).
        time_s: planning time budget, seconds (wall clock).
        seed: any integer; the same seed gives the same path (see the module docstring).
        simplify: remove vertices by shortcuts between random pairs of them
            (``PathSimplifier.reduceVertices``, while it removes some); unless that leaves a
            straight line, pull the path tight (``ropeShortcutPath``) and reduce again.
        max_step_rad: resolution of the returned path's checks, radians of joint-space distance.
        search_step_rad: resolution of the search's motion checks (default ``3 * max_step_rad``);
            see the module docstring.
        cancelled: polled by the planner's termination condition; return True to stop early.
        try_direct: first check the straight segment to each goal (every ``max_step_rad``); a clear
            one is the path (``planner`` is then reported with ``extra["direct"] = True``): it is what
            simplification would end with, found for a fraction of the checks.

    Returns:
        JointPath: waypoints from ``start`` to the goal reached.

    Raises:
        ValueError: unknown planner, bad shapes, start or goals outside the limits.
        NoPathError: no exact solution within ``time_s`` (``reason="timeout"``), the start or every
            goal invalid, or the planner was cancelled.
    """
    if planner not in PLANNERS:
        raise ValueError(f"unknown planner {planner!r}; one of {', '.join(PLANNERS)}")
    if not time_s > 0:
        raise ValueError(f"time_s must be > 0 s, got {time_s}")
    q0 = np.asarray(start, dtype=float)
    dof = q0.shape[0]
    goal_arr = as_path(goals)
    lo, hi = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    if goal_arr.shape[1] != dof or lo.shape != (dof,) or hi.shape != (dof,):
        raise ValueError(f"start, goals and limits must all have {dof} joints")
    for name, q in (("start", q0), *((f"goal {i}", g) for i, g in enumerate(goal_arr))):
        if np.any(q < lo - 1e-6) or np.any(q > hi + 1e-6):
            raise ValueError(f"{name} {np.round(q, 4).tolist()} is outside the joint limits")
    q0 = np.clip(q0, lo, hi)
    goal_arr = np.clip(goal_arr, lo, hi)
    if not is_valid(q0):
        raise NoPathError("the start configuration is invalid", "invalid_start", planner, time_s)
    valid_goals = [i for i, g in enumerate(goal_arr) if is_valid(g)]
    if not valid_goals:
        raise NoPathError("every goal configuration is invalid", "invalid_goal", planner, time_s)
    if try_direct:
        t0 = time.perf_counter()
        counted = [0]

        def counting(q: np.ndarray) -> bool:
            counted[0] += 1
            return bool(is_valid(q))

        for k in valid_goals:
            if first_invalid([q0, goal_arr[k]], counting, max_step_rad) is None:
                wp = np.array([q0, goal_arr[k]])
                return JointPath(waypoints=wp, planner=planner, planning_time_s=time.perf_counter() - t0,
                                 simplify_time_s=0.0, length_rad=path_length(wp), goal_index=k,
                                 checks=counted[0] + len(valid_goals) + 1, seed=int(seed), extra={"direct": True})
    with _LOCK:
        coarse = 3.0 * max_step_rad if search_step_rad is None else max(search_step_rad, max_step_rad)
        path = _solve(q0, goal_arr, valid_goals, lo, hi, is_valid, planner, time_s, seed, simplify, coarse,
                      cancelled)
        if coarse > max_step_rad:
            fine = [0]

            def fine_check(q: np.ndarray) -> bool:
                fine[0] += 1
                return bool(is_valid(q))

            clear = first_invalid(path.waypoints, fine_check, max_step_rad) is None
            path.checks += fine[0]
            if not clear:  # a collision slipped between two coarse checks: search at the fine resolution
                again = _solve(q0, goal_arr, valid_goals, lo, hi, is_valid, planner, time_s, seed, simplify,
                               max_step_rad, cancelled)
                again.checks += path.checks
                again.planning_time_s += path.planning_time_s + path.simplify_time_s
                again.extra["refined"] = True
                path = again
        return path


def _solve(q0: np.ndarray, goal_arr: np.ndarray, valid_goals: list[int], lo: np.ndarray, hi: np.ndarray,
           is_valid: Callable[[np.ndarray], bool], planner: str, time_s: float, seed: int, simplify: bool,
           max_step_rad: float, cancelled: Optional[Callable[[], bool]]) -> JointPath:
    from ompl import base as ob
    from ompl import geometric as og
    from ompl import util as ou

    if ou.getLogLevel().value < ou.LogLevel.LOG_WARN.value:  # OMPL logs INFO and DEBUG to stdout by default
        ou.setLogLevel(ou.LogLevel.LOG_WARN)
    ompl_seed = int(seed) % 2147483646 + 1  # OMPL ignores seed 0
    _quiet_seed(ou, ompl_seed)
    dof = q0.shape[0]
    counter = [0]
    error: list[BaseException] = []

    def check(state: object) -> bool:
        counter[0] += 1
        try:
            return bool(is_valid([state[i] for i in range(dof)]))  # type: ignore[index]
        except BaseException as e:  # never let an exception cross into OMPL's C++
            if not error:
                error.append(e)
            return False

    space = ob.RealVectorStateSpace(dof)
    bounds = ob.RealVectorBounds(dof)
    for i in range(dof):
        bounds.setLow(i, float(lo[i]))
        bounds.setHigh(i, float(hi[i]))
    space.setBounds(bounds)
    ss = og.SimpleSetup(space)
    ss.setStateValidityChecker(check)
    si = ss.getSpaceInformation()
    si.setStateValidityCheckingResolution(min(0.5, max(1e-4, max_step_rad / space.getMaximumExtent())))
    start = space.allocState()
    for i in range(dof):
        start[i] = float(q0[i])
    goal_states = []
    if len(valid_goals) == 1:
        g = space.allocState()
        for i in range(dof):
            g[i] = float(goal_arr[valid_goals[0]][i])
        goal_states.append(g)
        ss.setStartAndGoalStates(start, g)
    else:
        ss.setStartState(start)
        gs = ob.GoalStates(si)
        for k in valid_goals:
            g = space.allocState()
            for i in range(dof):
                g[i] = float(goal_arr[k][i])
            gs.addState(g)
            goal_states.append(g)
        ss.setGoal(gs)
    ss.setPlanner(getattr(og, planner)(si))
    stop = [False]

    def should_stop() -> bool:
        if cancelled is not None and cancelled():
            stop[0] = True
        return stop[0] or bool(error)

    ptc = ob.plannerOrTerminationCondition(ob.timedPlannerTerminationCondition(float(time_s)),
                                           ob.PlannerTerminationCondition(should_stop))
    t0 = time.perf_counter()
    status = ss.solve(ptc)
    t_plan = time.perf_counter() - t0
    exact = ss.haveExactSolutionPath()
    waypoints = None
    t_simp = 0.0
    if exact and not error and not stop[0]:
        path = ss.getSolutionPath()
        if simplify:
            # vertex reduction (shortcuts between random pairs of vertices, until a pass removes none);
            # when that leaves more than a straight line, rope shortcutting (pulls the path tight:
            # half the length of a raw RRTConnect path) and vertex reduction again: the few-waypoint
            # path our timing wants. simplifySolution() (shortcuts, then B-spline smoothing to
            # convergence) costs ~6x the checks and adds vertices.
            t1 = time.perf_counter()
            ps = ss.getPathSimplifier()

            def reduce() -> None:
                for _ in range(4):
                    n = path.getStateCount()
                    ps.reduceVertices(path)
                    if path.getStateCount() == n or path.getStateCount() <= 2:
                        break

            reduce()
            if path.getStateCount() > 2:  # not a straight line yet: pull it tight, reduce again
                ps.ropeShortcutPath(path)
                reduce()
            del ps
            t_simp = time.perf_counter() - t1
        waypoints = np.array([[path.getState(k)[i] for i in range(dof)] for k in range(path.getStateCount())])
        del path
    status_text = str(status)
    # drop every OMPL reference before returning (no nanobind leak report at exit)
    del ptc, ss, si, space, bounds, start, goal_states, status
    if error:
        raise error[0]
    if stop[0]:
        raise NoPathError("planning was cancelled", "cancelled", planner, time_s)
    if waypoints is None:
        raise NoPathError(f"no collision-free path within {time_s:g} s ({planner}; OMPL: {status_text})",
                          "timeout", planner, time_s)
    # the path ends at the goal reached: the valid goal nearest to its last state
    d = [float(np.linalg.norm(goal_arr[k] - waypoints[-1])) for k in valid_goals]
    goal_index = valid_goals[int(np.argmin(d))]
    waypoints[0] = q0
    waypoints[-1] = goal_arr[goal_index]
    return JointPath(waypoints=waypoints, planner=planner, planning_time_s=t_plan, simplify_time_s=t_simp,
                     length_rad=path_length(waypoints), goal_index=goal_index, checks=counter[0], seed=ompl_seed)

