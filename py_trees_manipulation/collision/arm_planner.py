"""Every arm motion goes through here: goals checked, planned with OMPL when needed, timed with ruckig.

:class:`ArmMotionPlanner` turns a :class:`MotionRequest` (a joint goal, a pose goal or a straight
Cartesian line, from the arm's current configuration) into a :class:`MotionPlan`: the joint path,
how it was found, its clearance, and the trajectory sampled at the controller rate. Or it raises
:class:`MotionPlanningError` with a reason a user can act on, before the robot moves:

- ``"target (0.62, 0.10, 0.71) is out of reach: best IK solution ends 0.123 m away (tolerance 0.01 m)"``
- ``"target (...) is only reachable in collision: panda_hand would hit shelf (-0.012 m, padding 0.01 m)"``
- ``"panda_link6 would hit shelf at 40% of the path (straight joint motion)"``
- ``"no collision-free path within 2.0 s (RRTConnect)"``

Planners (``MotionRequest.planner``): ``auto`` takes the straight joint motion when it is
collision-free, else plans with RRTConnect; ``straight`` only takes the straight motion; an OMPL
planner name always plans (:data:`~py_trees_manipulation.motion.PLANNERS`). Cartesian lines are never
planned around: the line is the motion, checked state by state (IK every 20 ms / 5 mm of path); a
7-joint arm's redundancy is resolved by the least joint motion, and when that line collides or leaves
the reachable space, with the start posture kept (:meth:`ArmMotionPlanner.lines`).

Pose goals: IK from the current configuration first (then ``ready``), as the straight motion would
use it; when that solution misses the tolerance, collides, or its straight path collides, IK from
more seeds (the named configurations and random ones from the request's seed) and the planner aims
at every distinct collision-free solution (``ompl.base.GoalStates``): the first reachable wins.

Contacts a motion allows (:class:`~.world.AllowedContacts`), besides ``allowed_contacts`` named in
the request (``"box"``: the hand and the held object may touch ``box``; ``"box:table"``: the held
``box``, or a named robot link, may touch ``table``):

- *the grasp target*: a pose or Cartesian motion whose TCP target lies inside (within 1 cm of) a
  body lets the hand touch that body, but not go more than 5 mm into it: the open fingers close
  around what they grasp, and fingers that would land on it (an object wider than the opening
  along the finger axis, a bar turned across the hand) are refused before moving;
- *where it started*: pairs closer than the padding at the start may stay so, but not get more than
  2 mm closer (lifting an object off the table, retreating from a released one);
- *a guarded line* (``max_force_n``): the hand and the held object may touch what they touch at the
  end of the line (placing on a surface, a descent until contact): the force guard stops it there.

A guarded line that ends in contact meets it slowly: where along the line the hand or the held
object first touches what it touches at the end (the *expected contact*: the table top under the
held object) is found in the collision world, and the line is at its contact speed
:data:`~py_trees_manipulation.scene.contact.CONTACT_APPROACH_M` before it: the request's
``contact_speed_mps``, else the fastest at which the guard stops within
:data:`~py_trees_manipulation.scene.contact.GUARD_BOUND` times its threshold on that pair's
contact stiffness and damping (the bodies' materials) with the robot's wrist force latency
(:func:`~py_trees_manipulation.scene.contact.guard_contact_speed`). A ``contact_speed_mps`` faster
than that is refused, with the speed that would do (:attr:`MotionPlan.guard`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Optional, Sequence

import numpy as np

from ..geometry.poses import Pose, check_pose, rotation_angle, translation_distance
from ..motion import DEFAULT_PLANNER, PLANNER_CHOICES
from ..motion.paths import densify, first_invalid, path_length
from ..motion.timing import LINE_RAMP_S, Trajectory, line_waypoint_times, slowed_line_timing, time_parameterize
from .ik import IKSolution, solve_ik
from .contacts import AllowedContacts, Proximity
from .state_checker import StateChecker
from .world import CollisionWorld

__all__ = ["MotionRequest", "MotionPlan", "GuardedApproach", "MotionPlanningError", "ArmMotionPlanner", "PoseCheck"]

START_RELAX_M = 0.002          # a pair that starts inside the padding may get this much closer
GRASP_PROBE_M = 0.01           # the TCP target within this of a body: the hand may touch it ...
GRASP_PENETRATION_M = 0.005    # ... and go this far into it at most (collision hulls are conservative)
IK_RANDOM_SEEDS = 6            # random IK seeds per batch
IK_MAX_SEEDS = 30              # seeds tried at most for a pose goal
IK_ENOUGH_SOLUTIONS = 3        # distinct collision-free IK solutions that end the search
GUARD_BOUND_TEXT = "twice the guard (scene/contact.py GUARD_BOUND)"
MAX_JOINT_JUMP_RAD = 0.5
CLEARANCE_RANGE_M = 0.25       # clearances are measured up to this distance
JERK_RAMP_S = 0.1              # without jerk limits: full acceleration reached in this long
MIN_DURATION_S = 0.05          # a joint motion lasts at least this long (a tiny one is not a jolt)
#: a guarded line whose guard trips more than this before its expected contact did not meet what it
#: was sent to meet (twice the slow zone before the contact, scene/contact.py CONTACT_APPROACH_M):
#: the motion fails there, before a release lets go of an object held in the air
EARLY_STOP_M = 0.02


def _fmt(v: Sequence[float]) -> str:
    return "(" + ", ".join(f"{x:.2f}" for x in v) + ")"


class MotionPlanningError(RuntimeError):
    """A motion that cannot be done without a collision, or at all; raised before the robot moves.

    Attributes:
        kind: ``"invalid"``, ``"unreachable"``, ``"goal_in_collision"``, ``"start_in_collision"``,
            ``"path_collision"``, ``"no_path"``, ``"guard_too_fast"`` or ``"cancelled"``.
        collision: the :class:`~.world.Proximity` at fault, when there is one.
        fraction: where along the path (0..1), for ``path_collision``.
        planning_time_s: wall time spent before giving up, seconds.
    """

    def __init__(self, message: str, kind: str, collision: Optional[Proximity] = None,
                 fraction: Optional[float] = None):
        super().__init__(message)
        self.kind = kind
        self.collision = collision
        self.fraction = fraction
        self.planning_time_s = 0.0


@dataclass
class MotionRequest:
    """What to plan for one arm motion.

    Attributes:
        robot: the robot's name in the collision world.
        kind: ``"joints"``, ``"pose"`` or ``"cartesian"``.
        start: arm joint positions now, radians.
        goal: joint goal (radians) for ``joints``.
        target: (4, 4) TCP target, world frame, for ``pose`` and ``cartesian``.
        planner: ``auto``, ``straight`` or an OMPL planner name (ignored by ``cartesian``).
        planning_time_s: OMPL's time budget, seconds.
        velocity_scaling, acceleration_scaling: fractions of the joint limits (MoveIt's names).
        position_tolerance_m, orientation_tolerance_rad: accepted IK error of a pose target.
        speed_mps: TCP speed of a Cartesian line, m/s.
        guarded: the line is force-guarded (``max_force_n``): contacts at its end are allowed.
        max_force_n: the guard's threshold, N (a guarded line meets its expected contact at the speed
            this allows; None: no slowing).
        contact_speed_mps: speed at the expected contact, m/s; None: the fastest the guard allows.
        allowed_contacts: named contacts the motion allows (module docstring).
        named_configurations: extra IK seeds by name (``ready`` is the second seed).
        ik_seeds: for ``pose``: arm configurations (radians) tried before the configuration now for
            the target's IK, in order: the goal is the solution nearest the first that gives a
            collision-free one (the caller picks the arm's branch, e.g. elbow up).
        seed: seeds the random IK seeds and OMPL.
        dt: trajectory sample period, seconds.
        node: the behaviour node the motion is for (the goal's ``plan_key``: its name and place in
            the task file), "" when unknown: a plan the check before the run kept for that node is
            followed when it fits (:class:`~.kept_plans.KeptPlans`).
    """

    robot: str
    kind: str
    start: Sequence[float]
    goal: Optional[Sequence[float]] = None
    target: Optional[Pose] = None
    planner: str = "auto"
    planning_time_s: float = 2.0
    velocity_scaling: float = 0.5
    acceleration_scaling: float = 0.5
    position_tolerance_m: float = 0.01
    orientation_tolerance_rad: float = 0.1
    speed_mps: float = 0.1
    guarded: bool = False
    max_force_n: Optional[float] = None
    contact_speed_mps: Optional[float] = None
    allowed_contacts: Sequence[str] = ()
    named_configurations: dict = field(default_factory=dict)
    ik_seeds: Sequence[Sequence[float]] = ()
    seed: int = 0
    dt: float = 0.001
    node: str = ""


@dataclass
class GuardedApproach:
    """How a guarded line meets its expected contact (see the module docstring).

    Attributes:
        pair: the pair that touches first (``"the held mug / table"``).
        contact_m: arc length of the line at the expected contact, metres (0: touching from the start).
        slow_from_m: arc length from which the line is at ``contact_speed_mps``, metres.
        contact_speed_mps: the speed there, m/s. max_speed_mps: the fastest the guard allows there.
        stiffness_n_per_m, damping_n_s_per_m: the pair's contact over a face (four points).
        peak_n: the predicted peak force when the guard trips (:func:`~py_trees_manipulation.scene.contact.guard_peak_n`), N.
    """

    pair: str
    contact_m: float
    slow_from_m: float
    contact_speed_mps: float
    max_speed_mps: float
    stiffness_n_per_m: float
    damping_n_s_per_m: float
    peak_n: float

    #: the line's length, metres (the arc length at its end)
    line_m: float = 0.0

    def describe(self) -> str:
        v = self.contact_speed_mps
        speed = f"{v:.3f} m/s" if v >= 0.01 else f"{v * 1000:.3g} mm/s"
        slow_m = max(0.0, min(self.contact_m, self.line_m or self.contact_m) - self.slow_from_m)
        crawl = ""
        if v > 0 and slow_m / v > 5.0:   # a stiff pair: say why the line takes so long
            crawl = (f"; its last {slow_m * 1000:.0f} mm take {slow_m / v:.0f} s: a contact this stiff "
                     f"({self.stiffness_n_per_m:.3g} N/m) lets the guard stop in time only this slowly (a softer "
                     "support, contact_stiffness in the scene, or a higher max_force_n is faster)")
        return f"meets {self.pair} {self.contact_m * 1000:.0f} mm along at {speed} (guard peak <= {self.peak_n:.1f} N{crawl})"

    def early_stop(self, remaining_m: float) -> str:
        """Why a guard that tripped with the TCP ``remaining_m`` (metres) short of the line's end
        stopped too early to be the expected contact (more than :data:`EARLY_STOP_M` before it), or
        ``""``. Used by every backend that executes the plan (the simulator, the hardware client)."""
        travelled = self.line_m - float(remaining_m)
        short = self.contact_m - travelled
        if short <= EARLY_STOP_M:
            return ""
        return (f"the guard tripped {short * 1000:.0f} mm before the expected contact ({self.pair} at "
                f"{self.contact_m * 1000:.0f} mm along the line, stopped at {max(travelled, 0.0) * 1000:.0f} mm): it "
                "did not meet what it was sent to meet. Something else is in the way, the scene is not as written "
                "(the support higher than modelled), or the arm's own motion jolted the wrist sensor; nothing was "
                "let go")


@dataclass
class MotionPlan:
    """A checked, timed motion.

    Attributes:
        robot, kind: as requested. mode: ``"straight"``, ``"planned"`` or ``"cartesian"``.
        planner: the OMPL planner that found the path ("" for straight motions and lines).
        planning_time_s: wall time of the whole request (IK, checks, OMPL, timing), seconds.
        waypoints: the joint path, shape (n, dof), radians (straight segments in between).
        path_length_rad: its joint-space length, radians.
        min_clearance_m: smallest distance of a checked pair along the path (sampled), metres;
            None when nothing is within 0.25 m. clearance_pair: which pair (``describe()`` text).
        trajectory: the timed trajectory (sampled at ``dt``).
        goal: the final configuration, radians. target: the TCP target (4, 4) or None.
        allowed: :class:`~.world.AllowedContacts` used. checks: validity checks made.
        attached: the held object's name, or None.
        guard: how a guarded line meets its expected contact (:class:`GuardedApproach`), or None.
        source: ``"check"`` when the plan is the one the check before the run made and kept
            (:class:`~.kept_plans.KeptPlans`), ``""`` when planned as the motion started.
        note: why a plan the check kept was not used (``"plan from the check not used: ..."``), or "".
    """

    robot: str
    kind: str
    mode: str
    planner: str
    planning_time_s: float
    waypoints: np.ndarray
    path_length_rad: float
    min_clearance_m: Optional[float]
    clearance_pair: str
    trajectory: Trajectory
    goal: np.ndarray
    target: Optional[Pose]
    allowed: AllowedContacts
    checks: int = 0
    attached: Optional[str] = None
    guard: Optional[GuardedApproach] = None
    source: str = ""
    note: str = ""

    def allowed_names(self, world: CollisionWorld) -> list[tuple[str, str, Optional[str]]]:
        """The allowed and relaxed pairs by name: ``(robot link or held object, body, body link or None)``."""
        out = []
        body = world.robots[self.robot].body
        for side, ob, ol in [*self.allowed.pairs, *self.allowed.relaxed]:
            who = self.attached if side[0] == "held" else world.link_name(body, side[1])
            out.append((str(who), world.names.get(ob, str(ob)), None if ol is None else world.link_name(ob, ol)))
        return out

    def describe(self, action: str) -> str:
        """One line for logs: ``"move_to_pose: planned with RRTConnect in 120 ms, 3 waypoints, ..."``."""
        how = {"straight": "straight joint motion", "planned": f"planned with {self.planner}",
               "cartesian": "straight line"}.get(self.mode, self.mode)
        clear = (f", min clearance {self.min_clearance_m * 1000:.0f} mm ({self.clearance_pair})"
                 if self.min_clearance_m is not None else "")
        guard = f"; {self.guard.describe()}" if self.guard is not None else ""
        if self.source == "check":
            guard += "; the plan from the check before the run"
        elif self.note:
            guard += f"; {self.note}"
        return (f"{action}: {how} in {self.planning_time_s * 1000:.0f} ms ({self.checks} checks), "
                f"{len(self.waypoints)} waypoints, {self.path_length_rad:.2f} rad, {self.trajectory.duration:.2f} s"
                f"{clear}{guard}")

    def summary(self) -> dict[str, Any]:
        """Plain values for the run log: planner, times, path, clearance, waypoints."""
        return {
            "robot": self.robot, "kind": self.kind, "mode": self.mode, "planner": self.planner,
            "planning_time_s": round(self.planning_time_s, 6),
            "path_length_rad": round(self.path_length_rad, 6),
            "duration_s": round(self.trajectory.duration, 4),
            "min_clearance_m": round(CLEARANCE_RANGE_M if self.min_clearance_m is None else self.min_clearance_m, 5),
            "clearance_pair": self.clearance_pair, "checks": self.checks,
            "attached": self.attached or "",
            "waypoints": [{"positions": [round(float(v), 6) for v in w]} for w in self.waypoints],
            "allowed_contacts": list(self.allowed.reasons),
            **({"from_check": True} if self.source == "check" else {}),
            **({"note": self.note} if self.note else {}),
            **({"guard": {"pair": self.guard.pair, "contact_m": round(self.guard.contact_m, 5),
                          "slow_from_m": round(self.guard.slow_from_m, 5),
                          "contact_speed_mps": round(self.guard.contact_speed_mps, 5),
                          "max_speed_mps": round(self.guard.max_speed_mps, 5),
                          "peak_n": round(self.guard.peak_n, 3)}} if self.guard is not None else {}),
        }


@dataclass
class PoseCheck:
    """Result of :meth:`ArmMotionPlanner.check_pose`: can the TCP be at a pose without collision?

    Attributes:
        ok: a collision-free IK solution exists. q: the best solution (radians) or None.
        position_error_m, orientation_error_rad: IK error of the best solution.
        collision: the collision of the best (in-collision) solution when not ``ok``.
        solutions: every distinct collision-free solution found, radians.
        reason: why not, in words ("" when ``ok``).
    """

    ok: bool
    q: Optional[np.ndarray]
    position_error_m: float
    orientation_error_rad: float
    collision: Optional[Proximity] = None
    solutions: list = field(default_factory=list)
    reason: str = ""


class ArmMotionPlanner:
    """Plans motions of one robot in a :class:`~.world.CollisionWorld` (see the module docstring).

    The public building blocks (for grasp choice and regrasp) are :meth:`checker`,
    :meth:`check_configuration`, :meth:`check_pose`, :meth:`plan_between` and :meth:`plan`.

    Args:
        world: the collision world (synced to the scene by the caller).
        robot: the robot's name in it.
        measure_clearance: False: a plan's ``min_clearance_m`` is not measured (None, no pair), for
            a caller that wants only whether the motion can be planned (the grasp choice's check of
            the lift: 16 proximity queries a plan saved; the verdict is the same).

    Raises:
        KeyError: unknown robot.
    """

    def __init__(self, world: CollisionWorld, robot: str, measure_clearance: bool = True):
        if robot not in world.robots:
            raise KeyError(f"no robot named {robot!r}; the collision world has {sorted(world.robots)}")
        self.world = world
        self.robot = robot
        self.loaded = world.robots[robot]
        self.measure_clearance = measure_clearance

    def jerk_limits(self, acceleration_scaling: float) -> np.ndarray:
        """Joint jerk limits used to time motions, rad/s^3: the robot's ``jerk_limits`` when it has
        them, else its acceleration limits over :data:`JERK_RAMP_S` (full acceleration in 0.1 s),
        times ``acceleration_scaling``. Smooth onsets keep a held object from being jolted loose."""
        r = self.loaded
        jerk = getattr(r, "jerk_limits", None)
        if jerk is None:
            return np.asarray(r.acceleration_limits, dtype=float) * acceleration_scaling / JERK_RAMP_S
        return np.asarray(jerk, dtype=float)

    # ---- building blocks ---------------------------------------------------------------------------
    def checker(self, allowed: Optional[AllowedContacts] = None) -> StateChecker:
        """A :class:`~.world.StateChecker` for this robot, its attached object and ``allowed``."""
        return self.world.checker(self.robot, allowed)

    def check_configuration(self, q: Sequence[float], allowed: Optional[AllowedContacts] = None) -> Optional[Proximity]:
        """The worst collision at arm configuration ``q`` (radians), or None when it is clear."""
        return self.checker(allowed).explain(q)

    def ik(self, target: Pose, seeds: Sequence[Sequence[float]], iterations: int = 6) -> list[IKSolution]:
        """One :func:`~.ik.solve_ik` solution per seed (same order)."""
        return [solve_ik(self.loaded, target, [s], iterations) for s in seeds]

    def check_pose(self, target: Pose, seeds: Sequence[Sequence[float]], allowed: Optional[AllowedContacts] = None,
                   position_tolerance_m: float = 0.01, orientation_tolerance_rad: float = 0.1) -> PoseCheck:
        """IK from every seed, keep the collision-free solutions within the tolerances (distinct ones).

        Args:
            target: (4, 4) TCP pose, world frame. seeds: arm configurations to start IK from, radians.
        """
        T = check_pose(target)
        ck = self.checker(allowed)
        sols = self.ik(T, seeds)
        good = [s for s in sols if s.position_error_m <= position_tolerance_m
                and s.orientation_error_rad <= orientation_tolerance_rad]
        best = min(sols, key=lambda s: s.position_error_m + 0.05 * s.orientation_error_rad)
        if not good:
            return PoseCheck(False, best.q, best.position_error_m, best.orientation_error_rad,
                             reason=self._unreachable_text(T, best, position_tolerance_m, orientation_tolerance_rad))
        free: list[IKSolution] = []
        first_hit: Optional[Proximity] = None
        for s in good:
            hit = ck.explain(s.q)
            if hit is None:
                if all(np.max(np.abs(s.q - f.q)) > 0.05 for f in free):
                    free.append(s)
            elif first_hit is None:
                first_hit = hit
        if not free:
            return PoseCheck(False, good[0].q, good[0].position_error_m, good[0].orientation_error_rad, first_hit,
                             reason=f"target {_fmt(T[:3, 3])} is only reachable in collision: "
                                    f"{self._hit_text(first_hit)}")
        return PoseCheck(True, free[0].q, free[0].position_error_m, free[0].orientation_error_rad,
                         solutions=[f.q for f in free])

    def plan_between(self, start: Sequence[float], goals: Sequence[Sequence[float]], checker: StateChecker,
                     planner: str = DEFAULT_PLANNER, time_s: float = 2.0, seed: int = 0,
                     cancelled: Optional[Callable[[], bool]] = None) -> np.ndarray:
        """An OMPL joint path from ``start`` to the first reachable of ``goals`` (radians), simplified.

        Raises:
            MotionPlanningError: ``no_path`` (with the planner and time in the text) or ``cancelled``.
        """
        from ..motion.ompl_planning import NoPathError, plan_joint_path

        try:
            # (no direct shortcut: the straight motion to the nearest goal was checked already, and a
            # straight swing to a far IK solution is not what "auto" means)
            path = plan_joint_path(start, goals, checker.lower, checker.upper, checker.is_valid, planner=planner,
                                   time_s=time_s, seed=seed, max_step_rad=self.world.max_step_rad, cancelled=cancelled,
                                   try_direct=False)
        except NoPathError as e:
            if e.reason == "cancelled":
                raise MotionPlanningError("planning was cancelled", "cancelled") from None
            if e.reason == "invalid_start":
                raise MotionPlanningError(f"the arm starts in collision: {self._hit_text(checker.explain(start))}",
                                          "start_in_collision") from None
            raise MotionPlanningError(f"no collision-free path within {time_s:.1f} s ({planner})", "no_path") from None
        return path.waypoints

    # ---- the whole motion --------------------------------------------------------------------------
    def plan(self, req: MotionRequest, cancelled: Optional[Callable[[], bool]] = None) -> MotionPlan:
        """Check, plan and time one motion (see the module docstring).

        Raises:
            MotionPlanningError: the reason, before anything moves.
            ValueError: a malformed request (unknown kind or planner, wrong shapes).
        """
        t0 = time.perf_counter()
        try:
            plan = self._plan(req, cancelled)
        except MotionPlanningError as e:
            e.planning_time_s = time.perf_counter() - t0
            raise
        plan.planning_time_s = time.perf_counter() - t0
        return plan

    def _plan(self, req: MotionRequest, cancelled: Optional[Callable[[], bool]]) -> MotionPlan:
        if req.kind not in ("joints", "pose", "cartesian"):
            raise ValueError(f"unknown motion kind {req.kind!r}; one of joints, pose, cartesian")
        if req.planner not in PLANNER_CHOICES:
            raise ValueError(f"unknown planner {req.planner!r}; one of {', '.join(PLANNER_CHOICES)}")
        r = self.loaded
        start = np.asarray(req.start, dtype=float)
        if start.shape != r.lower.shape:
            raise ValueError(f"start must hold {len(r.lower)} joint positions, got {start.shape}")
        start = np.clip(start, r.lower, r.upper)
        target = check_pose(req.target) if req.target is not None else None
        base = self.checker()
        # --- allowed contacts
        allowed = self._explicit(req.allowed_contacts)
        if req.kind == "joints":
            goal = np.asarray(req.goal, dtype=float)
            if goal.shape != start.shape:
                raise ValueError(f"the goal must hold {len(start)} joint positions, got {goal.shape}")
            bad = base.within_limits(goal)
            if bad is not None:
                raise MotionPlanningError(
                    f"{r.arm_joint_names[bad]} goal {goal[bad]:.4f} rad is outside its limits "
                    f"[{r.lower[bad]:.4f}, {r.upper[bad]:.4f}]", "invalid")
            goal = np.clip(goal, r.lower, r.upper)
            target = self.world.tcp_pose(self.robot, goal)
        if target is not None and self.world.attached(self.robot) is None:
            allowed = allowed.merge(self._grasp_target(target))
        allowed = allowed.merge(self._start_contacts(start, allowed))
        if req.kind == "cartesian":
            return self._cartesian(req, start, target, allowed)  # type: ignore[arg-type]
        ck = self.checker(allowed)
        start_hit = ck.explain(start)
        if start_hit is not None:
            raise MotionPlanningError(f"the arm starts in collision: {self._hit_text(start_hit)}", "start_in_collision",
                                      start_hit)
        if req.kind == "joints":
            hit = ck.explain(goal)
            if hit is not None:
                raise MotionPlanningError(f"the goal configuration is in collision: {self._hit_text(hit)}",
                                          "goal_in_collision", hit)
            return self._to_goals(req, start, [goal], ck, target, cancelled)
        # pose goal
        assert target is not None
        ready = list(req.named_configurations.get("ready", r.model.named_configurations.get("ready", start)))
        preferred = [self._ik_seed(q) for q in req.ik_seeds]
        first = solve_ik(r, target, [*preferred, start, ready])
        first_free = self._within(first, req) and ck.explain(first.q) is None
        if first_free and req.planner in ("auto", "straight"):
            bad = first_invalid([start, first.q], ck.is_valid, self.world.max_step_rad)
            if bad is None:
                return self._finish(req, "straight", "", np.array([start, first.q]), ck, target)
            if req.planner == "straight":
                hit = ck.explain(bad.q)
                raise MotionPlanningError(f"{self._hit_text(hit)} at {100 * bad.fraction:.0f}% of the path "
                                          "(straight joint motion)", "path_collision", hit, bad.fraction)
        # more IK seeds: named configurations, then random ones from the request's seed, in batches
        # until a few distinct collision-free solutions are found (or IK_MAX_SEEDS were tried)
        rng = np.random.default_rng(req.seed)
        seeds = [*preferred, start, *(np.asarray(v, dtype=float) for v in {**r.model.named_configurations,
                                                                           **req.named_configurations}.values())]
        check = self.check_pose(target, seeds, allowed, req.position_tolerance_m, req.orientation_tolerance_rad)
        tried = len(seeds)
        while len(check.solutions) < IK_ENOUGH_SOLUTIONS and tried < IK_MAX_SEEDS:
            batch = list(rng.uniform(r.lower, r.upper, size=(IK_RANDOM_SEEDS, len(start))))
            more = self.check_pose(target, batch, allowed, req.position_tolerance_m, req.orientation_tolerance_rad)
            tried += len(batch)
            known = list(check.solutions)
            known += [q for q in more.solutions if all(np.max(np.abs(q - k)) > 0.05 for k in known)]
            if known:
                check = PoseCheck(True, known[0], 0.0, 0.0, solutions=known)
            elif check.collision is None and more.collision is not None:
                check = more
        if not check.ok and check.collision is None and not self._within(first, req):
            # no seed reaches it: report the nearest miss (the current configuration's IK)
            raise MotionPlanningError(self._unreachable_text(target, first, req.position_tolerance_m,
                                                             req.orientation_tolerance_rad), "unreachable")
        if not check.ok:
            raise MotionPlanningError(check.reason, "goal_in_collision" if check.collision else "unreachable",
                                      check.collision)
        goals = check.solutions
        if req.planner == "straight":
            # the nearest solution collides: the straight motion to the first free one, or nothing
            return self._to_goals(req, start, goals, ck, target, cancelled)
        planner = DEFAULT_PLANNER if req.planner == "auto" else req.planner
        waypoints = self.plan_between(start, goals, ck, planner, req.planning_time_s, req.seed, cancelled)
        return self._finish(req, "planned", planner, waypoints, ck, target)

    def _ik_seed(self, q: Sequence[float]) -> np.ndarray:
        """A request's IK seed, checked: one position per arm joint (ValueError otherwise)."""
        r = self.loaded
        seed = np.asarray(q, dtype=float)
        if seed.shape != (len(r.arm_joint_names),):
            raise ValueError(f"ik_seed has {seed.size} positions; {self.robot!r} has {len(r.arm_joint_names)} arm "
                             f"joints ({', '.join(r.arm_joint_names)})")
        return seed

    def _to_goals(self, req: MotionRequest, start: np.ndarray, goals: list, ck: StateChecker, target: Optional[Pose],
                  cancelled: Optional[Callable[[], bool]]) -> MotionPlan:
        """Straight to the first goal (the IK solution nearest the current configuration) when allowed
        and clear, else an OMPL plan to any of them."""
        step = self.world.max_step_rad
        if req.planner in ("auto", "straight"):
            bad = first_invalid([start, goals[0]], ck.is_valid, step)
            if bad is None:
                return self._finish(req, "straight", "", np.array([start, goals[0]]), ck, target)
            if req.planner == "straight":
                hit = ck.explain(bad.q)
                raise MotionPlanningError(f"{self._hit_text(hit)} at {100 * bad.fraction:.0f}% of the path "
                                          "(straight joint motion)", "path_collision", hit, bad.fraction)
        planner = DEFAULT_PLANNER if req.planner == "auto" else req.planner
        waypoints = self.plan_between(start, goals, ck, planner, req.planning_time_s, req.seed, cancelled)
        return self._finish(req, "planned", planner, waypoints, ck, target)

    def _finish(self, req: MotionRequest, mode: str, planner: str, waypoints: np.ndarray, ck: StateChecker,
                target: Optional[Pose]) -> MotionPlan:
        r = self.loaded
        traj = time_parameterize(waypoints, r.velocity_limits, r.acceleration_limits,
                                 velocity_scaling=req.velocity_scaling, acceleration_scaling=req.acceleration_scaling,
                                 max_jerk=self.jerk_limits(req.acceleration_scaling), dt=req.dt,
                                 min_duration_s=MIN_DURATION_S)
        clearance, pair = self._path_clearance(waypoints, ck)
        return MotionPlan(robot=self.robot, kind=req.kind, mode=mode, planner=planner, planning_time_s=0.0,
                          waypoints=waypoints, path_length_rad=path_length(waypoints), min_clearance_m=clearance,
                          clearance_pair=pair, trajectory=traj, goal=waypoints[-1].copy(), target=target,
                          allowed=ck.allowed, checks=ck.checks, attached=self.world.attached(self.robot))

    def _path_clearance(self, waypoints: np.ndarray, ck: StateChecker, samples: int = 16) -> tuple[Optional[float], str]:
        """Smallest distance of a checked pair (not allowed, not relaxed) over ``samples`` states
        evenly spread along the path (ends included), within 0.25 m; (None, "") without
        ``measure_clearance``."""
        if not self.measure_clearance:
            return None, ""
        states, frac = densify(waypoints, max(path_length(waypoints) / samples, 1e-3))
        # (sorted(set()): np.unique would import numpy.ma, 12 ms of every ptm run's start-up)
        picks = sorted(set(np.searchsorted(frac, np.linspace(0.0, 1.0, samples + 1)).clip(0, len(states) - 1).tolist()))
        best: Optional[Proximity] = None
        for q in states[picks]:
            p = ck.clearance(q, 0.25)
            if p is not None and (best is None or p.distance_m < best.distance_m):
                best = p
        if best is None:
            return None, ""
        return best.distance_m, best.describe(numbers=False).replace(" would hit ", " / ")

    # ---- Cartesian lines ---------------------------------------------------------------------------------
    def _cartesian(self, req: MotionRequest, start: np.ndarray, target: Pose, allowed: AllowedContacts) -> MotionPlan:
        w = self.world
        first: Optional[MotionPlanningError] = None
        for line in self.lines(req, start, target):
            try:
                if isinstance(line, MotionPlanningError):
                    raise line
                qs, s_wp, t_wp = line
                end_allowed = allowed.merge(self._end_contacts(qs[-1], allowed)) if req.guarded else allowed
                ck = self.checker(end_allowed)
                hit0 = ck.explain(start)
                if hit0 is not None:
                    raise MotionPlanningError(f"the arm starts in collision: {self._hit_text(hit0)}",
                                              "start_in_collision", hit0)
                self._check_line(qs, s_wp, ck, target)
            except MotionPlanningError as e:
                if e.kind == "start_in_collision":
                    raise
                first = first or e
                continue
            traj = self._line_trajectory(qs, t_wp, req.dt)
            guard = None
            dist = translation_distance(w.tcp_pose(self.robot, start), target)
            if req.guarded and req.max_force_n is not None and dist > 0:
                arc = s_wp * dist
                guard = self._guarded_approach(req, qs, arc, ck)
                if guard is not None and guard.contact_speed_mps < req.speed_mps:
                    traj = slowed_line_timing(qs, arc, req.speed_mps, guard.contact_speed_mps, guard.slow_from_m,
                                              req.speed_mps / LINE_RAMP_S, self.loaded.velocity_limits, req.dt,
                                              max_acceleration=self.loaded.acceleration_limits)
            clearance, pair = self._path_clearance(qs, ck)
            return MotionPlan(robot=self.robot, kind="cartesian", mode="cartesian", planner="", planning_time_s=0.0,
                              waypoints=qs, path_length_rad=path_length(qs), min_clearance_m=clearance,
                              clearance_pair=pair, trajectory=traj, goal=qs[-1].copy(), target=target,
                              allowed=ck.allowed, checks=ck.checks, attached=w.attached(self.robot), guard=guard)
        assert first is not None
        raise first

    def _check_line(self, qs: np.ndarray, s_wp: np.ndarray, ck: StateChecker, target: Pose) -> None:
        """Every IK waypoint of a line (5 mm / 0.05 rad apart) and the joint-space segments between
        them at the world's resolution; raises MotionPlanningError naming the pair and where."""
        w = self.world
        for k in range(len(qs) - 1):
            bad = first_invalid(qs[k:k + 2], ck.is_valid, w.max_step_rad)
            if bad is None:
                continue
            hit = ck.explain(bad.q)
            tcp = w.tcp_pose(self.robot, bad.q)[:3, 3]
            at = float(s_wp[k] + bad.fraction * (s_wp[k + 1] - s_wp[k]))
            raise MotionPlanningError(f"{self._hit_text(hit)} at {100 * at:.0f}% of the straight line to "
                                      f"{_fmt(target[:3, 3])} (TCP at {_fmt(tcp)})", "path_collision", hit, at)

    def lines(self, req: MotionRequest, start: np.ndarray, target: Pose) -> Iterator[Any]:
        """The joint paths a straight TCP line from ``start`` (radians) to ``target`` ((4, 4), world)
        may take, in the order a ``move_cartesian`` motion tries them: the arm's redundancy resolved
        step by step (each waypoint's IK from the one before: the least joint motion), then with the
        start posture kept (the null-space IK pulled toward the start configuration at every
        waypoint: a 7-joint arm's elbow stays where it was instead of drifting along the line). A
        6-joint arm has one. Each item is ``(q (n, dof), path fraction (n,), time (n,))`` or the
        :class:`MotionPlanningError` why that resolution leaves the reachable space. Every check of
        a line before the task moves (reachability, grasp choice, regrasp transitions) takes the
        first line that is clear of collisions, as the motion does, so check and motion agree."""
        T0 = self.world.tcp_pose(self.robot, start)
        dist = translation_distance(T0, target)
        angle = rotation_angle(T0, target)
        for keep in (False, True) if len(start) > 6 else (False,):
            try:
                yield self._line_ik(req, start, T0, target, dist, angle, keep_posture=keep)
            except MotionPlanningError as e:
                yield e

    def _guarded_approach(self, req: MotionRequest, qs: np.ndarray, arc: np.ndarray,
                          ck: StateChecker) -> Optional[GuardedApproach]:
        """Where a guarded line first touches what the hand or the held object touches at its end
        (allowed or not: a descent into a table the TCP target lies in is allowed to touch it), and
        how fast it may meet it (module docstring); None when nothing touches at the end.

        Raises:
            MotionPlanningError: ``contact_speed_mps`` is faster than the guard allows (``guard_too_fast``).
        """
        from ..scene.contact import CONTACT_APPROACH_M, DEFAULT_WRIST_FORCE_LATENCY_S, guard_contact_speed, \
            guard_peak_n, pair_contact

        hand = self.world.hand_links(self.robot)
        end_pairs = {p.key for p in ck.proximities(qs[-1], CONTACT_APPROACH_M, include_allowed=True)
                     if p.distance_m <= 0.0 and (p.held or p.key[0][1] in hand)}

        def touching(q: np.ndarray) -> tuple[float, Optional[Proximity]]:
            best: tuple[float, Optional[Proximity]] = (math.inf, None)
            for p in ck.proximities(q, CONTACT_APPROACH_M, include_allowed=True):
                if p.key in end_pairs and p.distance_m < best[0]:
                    best = (p.distance_m, p)
            return best

        d_end, first = touching(qs[-1])
        if first is None or d_end > 0.0:
            return None        # the line ends short of what it may touch: no contact is expected
        i, d_i, contact_m = len(qs) - 1, d_end, 0.0
        while i > 0:
            d_prev, p_prev = touching(qs[i - 1])
            if d_prev > 0.0:   # the contact comes between waypoints i - 1 and i
                frac = d_prev / (d_prev - d_i) if d_prev > d_i else 1.0
                contact_m = float(arc[i - 1] + frac * (arc[i] - arc[i - 1]))
                break
            i, d_i = i - 1, d_prev
            if p_prev is not None:
                first = p_prev
        w = self.world
        side, other, other_link = first.key
        robot_body = w.robots[self.robot].body
        if side[0] == "held":
            mine = w.contact_material(w.body_id(w.attached(self.robot)), -1)
        else:
            mine = w.contact_material(robot_body, side[1])
        stiffness, damping = pair_contact(mine, w.contact_material(other, other_link))
        latency = float(getattr(self.loaded.model, "wrist_force_latency_s", DEFAULT_WRIST_FORCE_LATENCY_S))
        force = float(req.max_force_n)
        fastest = guard_contact_speed(force, stiffness, damping, latency)
        pair = f"{'the held ' + first.link if first.held else first.link} / {first.body}"
        if req.contact_speed_mps is not None and req.contact_speed_mps > fastest * (1 + 1e-9):
            peak = guard_peak_n(force, req.contact_speed_mps, stiffness, damping, latency)
            raise MotionPlanningError(
                f"contact_speed_mps {req.contact_speed_mps:g} m/s is too fast for max_force_n {force:g} N: meeting "
                f"{pair} ({stiffness:.3g} N/m, {damping:.3g} N s/m) the guard would stop at up to {peak:.0f} N; at most "
                f"{fastest:.4f} m/s keeps it within {GUARD_BOUND_TEXT}", "guard_too_fast")
        speed = min(float(req.contact_speed_mps or fastest), float(req.speed_mps))
        return GuardedApproach(pair=pair, contact_m=contact_m, slow_from_m=contact_m - CONTACT_APPROACH_M,
                               contact_speed_mps=speed, max_speed_mps=fastest, stiffness_n_per_m=stiffness,
                               damping_n_s_per_m=damping, line_m=float(arc[-1]),
                               peak_n=guard_peak_n(force, speed, stiffness, damping, latency))

    def _line_ik(self, req: MotionRequest, start: np.ndarray, T0: Pose, target: Pose, dist: float,
                 angle: float, keep_posture: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """IK waypoints along the straight TCP line (orientation slerped), timed by a trapezoidal speed
        profile at ``speed_mps`` with 0.1 s ramps; a waypoint every 20 ms of path, 5 mm and 0.05 rad
        at most, each solved from the previous one (``keep_posture``: the null-space iterations pulled
        toward ``start``, see :meth:`lines`); a segment is slowed down when a joint would exceed its
        velocity limit. Returns ``(q (n, dof), path fraction (n,), time (n,))``."""
        from ..geometry.poses import PoseInterpolation as _Interpolation

        r = self.loaded
        t_wp, s_wp = line_waypoint_times(dist, angle, req.speed_mps)
        n_wp = len(t_wp) - 1
        q_prev = start
        qs = [start]
        times = [0.0]
        vmax = r.velocity_limits
        line = _Interpolation(T0, target)
        for i in range(1, n_wp + 1):
            pose_i = line.at(float(s_wp[i]))
            sol = (solve_ik(r, pose_i, [q_prev], iterations=3, rest=start) if keep_posture
                   else solve_ik(r, pose_i, [q_prev], iterations=3, local=True))
            if sol.position_error_m > req.position_tolerance_m:
                raise MotionPlanningError(
                    f"the straight line to {_fmt(target[:3, 3])} leaves the reachable space "
                    f"{s_wp[i] * dist:.3f} m along it, at {_fmt(pose_i[:3, 3])}: best IK solution ends "
                    f"{sol.position_error_m:.3f} m away", "unreachable")
            jump = float(np.max(np.abs(sol.q - q_prev)))
            if jump > MAX_JOINT_JUMP_RAD:
                raise MotionPlanningError(
                    f"the straight line to {_fmt(target[:3, 3])} passes a singularity or joint limit at "
                    f"{_fmt(pose_i[:3, 3])}: a joint would jump by {jump:.2f} rad", "unreachable")
            # Retime: a segment never asks a joint for more than its velocity limit.
            seg = max(t_wp[i] - t_wp[i - 1], float(np.max(np.abs(sol.q - q_prev) / vmax)))
            times.append(times[-1] + seg)
            qs.append(sol.q)
            q_prev = sol.q
        return np.array(qs), s_wp, np.array(times)

    @staticmethod
    def _line_trajectory(qs: np.ndarray, times: np.ndarray, dt: float) -> Trajectory:
        """The IK waypoints (20 ms or less apart) sampled every ``dt`` along a C1 curve from rest to
        rest (:func:`~py_trees_manipulation.motion.timing.rest_to_rest_hermite`): the joint
        velocities never step, so the hand is not jolted at every waypoint."""
        from ..motion.timing import rest_to_rest_hermite

        return rest_to_rest_hermite(times, qs, dt)

    # ---- allowed contacts -----------------------------------------------------------------------------
    def _explicit(self, names: Sequence[str]) -> AllowedContacts:
        """``"body"``: the hand and the held object may touch it; ``"a:b"``: the held object ``a`` or
        robot link ``a`` may touch body ``b``.

        Raises:
            ValueError: an unknown body or link name (the message lists the known ones).
        """
        w = self.world
        out = AllowedContacts()
        held = w.attached(self.robot)
        hand = [("link", j) for j in sorted(w.hand_links(self.robot))]
        for entry in names:
            a, _, b = str(entry).partition(":")
            other = b or a
            if other not in w.bodies:
                raise ValueError(f"allowed contact {entry!r}: no body named {other!r}; known: {sorted(w.bodies)}")
            ob = w.bodies[other]
            if not b:
                sides = hand + ([("held", -1)] if held else [])
            elif held is not None and a == held:
                sides = [("held", -1)]
            elif a in self.loaded.link_index:
                sides = [("link", self.loaded.link_index[a])]
            else:
                raise ValueError(f"allowed contact {entry!r}: {a!r} is neither the held object nor a link of "
                                 f"{self.robot!r}")
            for side in sides:
                out.pairs.add((side, ob, None))
            out.reasons.append(f"{entry} (named by the motion)")
        return out

    def _grasp_target(self, target: Pose) -> AllowedContacts:
        """The hand may touch the bodies the TCP target lies in (the object being grasped), up to
        :data:`GRASP_PENETRATION_M` into them."""
        w = self.world
        out = AllowedContacts()
        own = w.robots[self.robot].body
        hand = [("link", j) for j in sorted(w.hand_links(self.robot))]
        for body in {b for b, _ in w.probe_bodies(target[:3, 3], GRASP_PROBE_M) if b != own}:
            for side in hand:
                for link in w._links.get(body, [-1]):
                    out.relaxed[(side, body, link)] = -GRASP_PENETRATION_M
            out.reasons.append(f"hand-{w.names[body]} (the TCP target is at {w.names[body]}: a grasp; at most "
                               f"{GRASP_PENETRATION_M * 1000:.0f} mm into it)")
        return out

    def _start_contacts(self, start: np.ndarray, allowed: AllowedContacts) -> AllowedContacts:
        """Pairs inside the padding at the start may stay there, but get at most 2 mm closer (self-collision
        pairs too: a compliant held motion can leave two links' conservative hulls overlapping, and the
        motion away from it must not be refused)."""
        ck = self.checker(allowed)
        out = AllowedContacts()
        for p in ck.proximities(start, self.world.padding_m):
            if p.distance_m < p.threshold_m:
                out.relaxed[p.key] = min(p.threshold_m, p.distance_m) - START_RELAX_M
                out.reasons.append(f"{p.link}-{p.body} (in contact at the start: {p.distance_m * 1000:.1f} mm, "
                                   f"may not get {START_RELAX_M * 1000:.0f} mm closer)")
        for p in ck.self_collisions(start):
            out.relaxed[p.key] = p.distance_m - START_RELAX_M
            out.reasons.append(f"{p.link}-{p.body_link} (overlapping at the start: {-p.distance_m * 1000:.1f} mm, "
                               f"may not get {START_RELAX_M * 1000:.0f} mm deeper)")
        return out

    def _end_contacts(self, end: np.ndarray, allowed: AllowedContacts) -> AllowedContacts:
        """A guarded line: the hand and the held object may touch what they touch at its end."""
        ck = self.checker(allowed)
        hand = self.world.hand_links(self.robot)
        out = AllowedContacts()
        for p in ck.proximities(end, self.world.padding_m):
            side = p.key[0]
            if p.distance_m < p.threshold_m and (side[0] == "held" or side[1] in hand):
                out.pairs.add(p.key)
                out.reasons.append(f"{p.link}-{p.body} (touching at the end of a force-guarded line)")
        return out

    # ---- texts -------------------------------------------------------------------------------------------
    @staticmethod
    def _within(sol: IKSolution, req: MotionRequest) -> bool:
        return sol.position_error_m <= req.position_tolerance_m and sol.orientation_error_rad <= req.orientation_tolerance_rad

    @staticmethod
    def _unreachable_text(T: Pose, sol: IKSolution, pos_tol: float, ori_tol: float) -> str:
        if sol.position_error_m > pos_tol:
            return (f"target {_fmt(T[:3, 3])} is out of reach: best IK solution ends {sol.position_error_m:.3f} m "
                    f"away (tolerance {pos_tol:g} m)")
        return (f"target orientation at {_fmt(T[:3, 3])} is out of reach: best IK solution is "
                f"{math.degrees(sol.orientation_error_rad):.1f} deg off (tolerance {math.degrees(ori_tol):.1f} deg)")

    def _hit_text(self, hit: Optional[Proximity]) -> str:
        if hit is None:
            return "a collision"
        fix = hit.fix()
        return hit.describe() + (f" ({fix})" if fix else "")

