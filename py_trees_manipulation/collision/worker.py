"""The planning worker the simulator and the hardware client share: one thread, one collision world.

Motions are planned one at a time on a worker thread (PyBullet is used by one thread at a time per
client; OMPL's seed generator is global), each after the caller's snapshot of the scene was applied
to the world, so a request planned now sees the scene as it was when the goal arrived. Geometric
queries (:meth:`PlanningWorker.run`: grasp choice, regrasp checks) go through the same thread and
the same world.
:func:`request_from_goal` turns an arm action's goal message into a
:class:`~.arm_planner.MotionRequest`.
"""

from __future__ import annotations

import concurrent.futures
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

from ..msgs.motion import MoveCartesianGoal, MoveJointsGoal, MoveToPoseGoal
from .arm_planner import MotionRequest

__all__ = ["PlanFailure", "PlanningWorker", "request_from_goal", "planner_label"]


@dataclass(frozen=True)
class PlanFailure:
    """Why a motion was refused (``text``), after ``planning_time_s`` of planning (wall)."""

    text: str
    planning_time_s: float = 0.0


def planner_label(request: MotionRequest) -> str:
    """What the planning feedback calls the request's planner: ``line`` for a Cartesian motion."""
    return "line" if request.kind == "cartesian" else request.planner


def request_from_goal(robot: str, action: str, goal: Any, start: Sequence[float],
                      goal_positions: Optional[Sequence[float]] = None) -> MotionRequest:
    """The :class:`~.arm_planner.MotionRequest` of an arm action's goal.

    Args:
        robot: the robot's name in the collision world.
        action: ``move_joints``, ``move_to_pose`` or ``move_cartesian``.
        goal: its goal message (:class:`~py_trees_manipulation.msgs.motion.MoveJointsGoal`, ...).
        start: the arm's joint positions now, radians, the model's order.
        goal_positions: for ``move_joints``: the goal in the model's order, radians (a named
            configuration resolved by the caller); default ``goal.positions``.

    Raises:
        TypeError: a goal of the wrong type for the action. ValueError: an unknown action.
    """
    from ..geometry.poses import check_pose

    expected = {"move_joints": MoveJointsGoal, "move_to_pose": MoveToPoseGoal, "move_cartesian": MoveCartesianGoal}
    if action not in expected:
        raise ValueError(f"not an arm motion action: {action!r}")
    if not isinstance(goal, expected[action]):
        raise TypeError(f"{action} takes a {expected[action].__name__}, got {type(goal).__name__}")
    node = str(getattr(goal, "plan_key", "") or "")
    if action == "move_cartesian":
        return MotionRequest(robot=robot, kind="cartesian", start=list(start), target=check_pose(goal.pose),
                             speed_mps=goal.speed_mps, position_tolerance_m=goal.position_tolerance_m,
                             guarded=goal.max_force_n is not None, max_force_n=goal.max_force_n,
                             contact_speed_mps=getattr(goal, "contact_speed_mps", None),
                             allowed_contacts=goal.allowed_contacts, node=node)
    common = dict(planner=goal.planner, planning_time_s=goal.planning_time_s, velocity_scaling=goal.velocity_scaling,
                  acceleration_scaling=goal.acceleration_scaling, allowed_contacts=goal.allowed_contacts, node=node)
    if action == "move_joints":
        q = list(goal.positions) if goal_positions is None else list(goal_positions)
        return MotionRequest(robot=robot, kind="joints", start=list(start), goal=q, **common)
    return MotionRequest(robot=robot, kind="pose", start=list(start), target=check_pose(goal.pose),
                         position_tolerance_m=goal.position_tolerance_m,
                         orientation_tolerance_rad=goal.orientation_tolerance_rad,
                         ik_seeds=[list(goal.ik_seed)] if goal.ik_seed is not None else [], **common)


class PlanningWorker:
    """A worker thread and a collision world built on it when first needed.

    Args:
        make_world: builds the :class:`~.world.CollisionWorld` (called on the worker, once).
    """

    def __init__(self, make_world: Callable[[], Any]):
        self._make_world = make_world
        self._world: Any = None
        self._executor: Optional[concurrent.futures.ThreadPoolExecutor] = None
        self._inflight: list[concurrent.futures.Future] = []

    @property
    def world(self) -> Any:
        """The collision world (built now if it was not yet)."""
        if self._world is None:
            self._world = self._make_world()
        return self._world

    @property
    def kept_plans(self) -> Any:
        """The plans the check before the run kept in the world (:class:`~.kept_plans.KeptPlans`),
        or None (no check, or the world not built yet)."""
        return getattr(self._world, "kept_plans", None)

    def idle(self) -> bool:
        """Nothing is queued or running: the world may be used on the calling thread."""
        self._inflight = [f for f in self._inflight if not f.done()]
        return not self._inflight

    def kept_metrics(self) -> dict[str, Any]:
        """The run's metrics of the kept plans (:meth:`~.kept_plans.KeptPlans.summary`), {} without a
        check before the run."""
        kept = self.kept_plans
        return kept.summary() if kept is not None else {}

    def submit(self, request: MotionRequest, apply: Callable[[Any], None],
               now: bool = False) -> tuple[concurrent.futures.Future, threading.Event]:
        """Plan ``request`` on the worker after ``apply(world)`` synced the scene; or, when the check
        before the run kept a plan for it (the world's ``kept_plans``,
        :class:`~.kept_plans.KeptPlans`) that still fits, that plan.

        Args:
            now: plan on the calling thread before returning (a done future) when the worker has
                nothing in flight: a caller that would only wait for the plan saves two thread
                hand-overs (each a scheduling delay on a busy machine); else it queues as usual.

        Returns:
            ``(future, cancel)``: the future's result is the
            :class:`~.arm_planner.MotionPlan` or a :class:`PlanFailure` (never an exception: a
            traceback would keep OMPL objects alive to the interpreter's exit); setting ``cancel``
            stops the planner at its next check.
        """
        from .arm_planner import ArmMotionPlanner, MotionPlanningError

        cancel = threading.Event()

        def job() -> Any:
            if cancel.is_set():
                return PlanFailure("cancelled before planning started")
            note = ""
            try:
                apply(self.world)
                kept = getattr(self.world, "kept_plans", None)
                if kept is not None:   # the check before the run planned it: follow that plan when it fits
                    plan, note = kept.take(request, self.world)
                    if plan is not None:
                        return plan
                plan = ArmMotionPlanner(self.world, request.robot).plan(request, cancelled=cancel.is_set)
                plan.note = note
                return plan
            except MotionPlanningError as e:
                return PlanFailure(f"{e} ({note})" if note else str(e), e.planning_time_s)
            except (ValueError, KeyError) as e:
                return PlanFailure(f"invalid goal: {e}")
            except Exception as e:  # pragma: no cover - a bug: report it, do not hang the goal
                return PlanFailure(f"motion planning failed: {type(e).__name__}: {e}")

        return self._submit(job, now), cancel

    def run(self, fn: Callable[[Any, Callable[[], bool]], Any], apply: Callable[[Any], None],
            now: bool = False) -> tuple[concurrent.futures.Future, threading.Event]:
        """Run a geometric query ``fn(world, cancelled)`` on the worker after ``apply(world)`` synced the
        scene (grasp choice, regrasp checks: IK and collision checks in the same world, one thread);
        ``now``: on the calling thread when the worker has nothing in flight (as :meth:`submit`).

        Returns:
            ``(future, cancel)``: the future's result is what ``fn`` returned, or a :class:`PlanFailure`
            with the reason when it raised (``ValueError``/``KeyError``: the message; anything else:
            the exception's type too); setting ``cancel`` makes ``cancelled()`` true.
        """
        cancel = threading.Event()

        def job() -> Any:
            if cancel.is_set():
                return PlanFailure("cancelled before it started")
            t0 = time.perf_counter()
            try:
                apply(self.world)
                return fn(self.world, cancel.is_set)
            except (ValueError, KeyError) as e:
                text = str(e.args[0]) if isinstance(e, KeyError) and e.args else str(e)
                return PlanFailure(text, time.perf_counter() - t0)
            except Exception as e:  # pragma: no cover - a bug: report it, do not hang the caller
                return PlanFailure(f"{type(e).__name__}: {e}", time.perf_counter() - t0)

        return self._submit(job, now), cancel

    def _submit(self, job: Callable[[], Any], now: bool = False) -> concurrent.futures.Future:
        self._inflight = [f for f in self._inflight if not f.done()]
        if now and not self._inflight:
            done: concurrent.futures.Future = concurrent.futures.Future()
            done.set_result(job())  # the job never raises
            return done
        if self._executor is None:
            self._executor = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="ptm-motion")
        future = self._executor.submit(job)
        self._inflight.append(future)
        return future

    def call(self, fn: Callable[[Any], Any], apply: Optional[Callable[[Any], None]] = None) -> concurrent.futures.Future:
        """Run ``fn(world)`` on the worker after ``apply(world)`` (when given) synced the scene, after
        the jobs queued before it (one job at a time with the plans: the world is never used by two
        threads; it is built first if it was not yet). The future holds ``fn``'s result, or the
        exception it raised. Users: the regrasp planner's geometric checks, reachability."""
        def job() -> Any:
            if apply is not None:
                apply(self.world)
            return fn(self.world)

        return self._submit(job)

    def close(self) -> None:
        """Wait for the running plan (cancel it first) and free the world."""
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None
        if self._world is not None:
            self._world.close()
            self._world = None
