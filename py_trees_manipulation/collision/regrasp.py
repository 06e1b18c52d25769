"""The geometry of regrasp plans: transitions checked by IK and collisions, placements on surfaces.

:class:`TransitionChecker` is the ``check`` callable of
:class:`~py_trees_manipulation.planning.geometric.GeometricRegraspPlanner`: given a
:class:`~py_trees_manipulation.planning.geometric_queries.TransitionQuery` (a grasp from or a release onto
a placement, or a handover), it places the objects in a :class:`~.world.CollisionWorld` as the
transition needs them and asks, waypoint by waypoint (HPP's waypoint states), whether the arm has a
collision-free IK solution there:

- **grasp** from a surface: ``pregrasp`` (``approach_m`` back along the TCP z axis; nothing may be
  touched), ``intersec`` (the grasp: the hand may touch the object it closes on), ``preplace``
  (lifted ``lift_m``, the object attached to the hand and checked with it);
- **release** onto a placement: ``preplace`` (``lift_m`` above it, object attached), ``intersec``
  (placed: the object may touch the surface, the hand may touch but not enter it), ``retreat``
  (``retreat_m`` back along the TCP z axis, the object left on the surface);
- **handover**: the holder's arm at the handover pose with the object, then the receiver's
  ``pregrasp`` and ``intersec`` (a grasp), or the giver's ``retreat`` (a release) with the receiver
  holding it.

Each waypoint's IK starts from the arm's configuration now and its named configurations (the first
waypoint) or from the previous waypoint's solution (the next ones, so that the straight approach,
lift and retreat lines join them), and is checked by :meth:`~.world.StateChecker.is_valid`;
with ``motions="straight"`` (the default) the whole of each straight TCP line between two waypoints
(approach, lift, lower, retreat) is checked as ``ExecuteRegraspPlan`` will move it: the Cartesian
line's own IK waypoints (:meth:`~.arm_planner.ArmMotionPlanner._line_ik`, the executor's
computation, a few millimetres apart), each collision-checked with the joint states between them
(every 0.05 rad), and the line's end is the configuration the next motion starts from. The free
motions to the first waypoints (pregrasp, preplace) are planned when they start (OMPL, with the
scene as it is then), not here. The world is restored after every query. Before any IK, two
position-independent tests: the grasp must fit in the gripper (``width_m`` against its opening) and
the pregrasp (retreat) point must not lie below the surface the object rests on; a hand link
hitting that surface is reported with ``cause="support"`` (the planner then prunes that grasp and
face at every position).

:func:`support_surface` and :func:`surface_placements` generate placement poses on an environment
contact surface (``"table/top"``: the top of body ``table``): a grid of points on it (found by ray
casts, so a point off the table or on something else is dropped) within reach of the robots, times
every face of the object (:func:`~py_trees_manipulation.geometry.grasps.placements_for_object`).

Timing: ``ik_s`` and ``collision_s`` of each result are the wall time spent in
:func:`~.ik.solve_ik` and in state checks (checker construction included).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

import numpy as np
import pybullet as pb

from ..geometry.grasps import Placement, translate_z
from ..geometry.poses import Pose, invert
from ..planning.geometric_model import PlacementCandidate, PlacementSettings
from ..planning.geometric_queries import TransitionQuery, TransitionResult
from .arm_planner import ArmMotionPlanner
from .ik import solve_ik
from .contacts import AllowedContacts, Proximity
from .world import CollisionWorld

__all__ = ["TransitionChecker", "SupportSurface", "support_surface", "surface_placements", "resting_gap",
           "ObjectGeometry", "build_placements", "robot_reach"]

SEGMENT_STEP_RAD = 0.05      # resolution of the straight segments between waypoints
#: seeded random IK seeds tried for a transition's first waypoint, after the arm now and the named
#: configurations (as they are and turned toward the target)
RANDOM_SEEDS = 10
#: the TCP speed the lines are followed at when checked (ExecuteRegraspPlan's approach_speed_mps default):
#: :meth:`ArmMotionPlanner._line_ik` places a waypoint every 20 ms of path
LINE_SPEED_MPS = 0.08
LOWER_SPEED_MPS = 0.05       # its guarded descent's speed (min(approach_speed_mps, 0.05))
LOWER_PAST_M = 0.005         # ExecuteRegraspPlan's guarded descent aims this far below the placement
WIDTH_MARGIN_M = 0.005       # the fingers must open this much wider than the grasp
_PARK = np.eye(4)
_PARK[2, 3] = -50.0          # where objects held elsewhere wait during a check (out of the scene)


def _fmt(v: Sequence[float]) -> str:
    return "(" + ", ".join(f"{x:.2f}" for x in v) + ")"


class _Fail(Exception):
    def __init__(self, waypoint: str, cause: str, reason: str, obstacle: str = ""):
        super().__init__(reason)
        self.waypoint, self.cause, self.reason, self.obstacle = waypoint, cause, reason, obstacle


class TransitionChecker:
    """Checks regrasp transitions in a collision world (see the module docstring).

    Args:
        world: the :class:`~.world.CollisionWorld`, synced to the scene (the robots' joints now are
            the first IK seeds; objects and robots are put back after every query).
        grippers: HPP gripper name -> robot name in the world.
        motions: ``"straight"`` (check the straight TCP lines between waypoints along their whole
            length) or ``"none"`` (the waypoints only).
        open_gap_m: gripper -> finger gap at the approach, metres (default: the gripper's widest).
        position_tolerance_m, orientation_tolerance_rad: accepted IK error (as a pose motion's).
        supports: body names objects may rest on (default: every fixture-like body, i.e. every
            body that is neither a robot nor a movable object).

    Attributes:
        queries, ik_calls, collision_checks: counters; ik_s, collision_s: wall time, seconds.

    Raises:
        KeyError: a gripper's robot is not in the world.
    """

    def __init__(self, world: CollisionWorld, grippers: Mapping[str, str], motions: str = "straight",
                 open_gap_m: Optional[Mapping[str, float]] = None, position_tolerance_m: float = 0.01,
                 orientation_tolerance_rad: float = 0.1):
        if motions not in ("straight", "none"):
            raise ValueError(f"motions must be 'straight' or 'none', got {motions!r}")
        self.world = world
        self.grippers = dict(grippers)
        for g, r in self.grippers.items():
            if r not in world.robots:
                raise KeyError(f"gripper {g!r}: no robot named {r!r} in the collision world; "
                               f"it has {sorted(world.robots)}")
        self.motions = motions
        self.pos_tol = float(position_tolerance_m)
        self.ori_tol = float(orientation_tolerance_rad)
        self._open = {g: float((open_gap_m or {}).get(g, world.robots[r].model.gripper.opening_m[1]))
                      for g, r in self.grippers.items()}
        self._planners = {r: ArmMotionPlanner(world, r) for r in set(self.grippers.values())}
        self._workspace: dict[str, Any] = {}
        self._random_seeds: dict[str, list[np.ndarray]] = {}
        self.queries = self.ik_calls = self.collision_checks = self.prefiltered = 0
        self.ik_s = self.collision_s = 0.0
        self._saved = self._save()

    # ---- world state ----------------------------------------------------------------------------
    def _save(self) -> dict[str, Any]:
        w = self.world
        robots = {}
        for name, r in w.robots.items():
            robots[name] = (r.joint_positions(), r.finger_positions())
        return {"objects": {o: w.object_pose(o) for o in w.objects}, "robots": robots,
                "attached": dict(w._attached)}

    def resync(self) -> None:
        """Take the world as it is now as the state to restore (after the caller synced it)."""
        self._saved = self._save()

    def _restore(self) -> None:
        w = self.world
        for o, T in self._saved["objects"].items():
            w.set_object_pose(o, T)
        for name, (q, fingers) in self._saved["robots"].items():
            w.set_robot_state(name, q, fingers=fingers)
        w._attached.clear()
        w._attached.update(self._saved["attached"])

    def current_configuration(self, gripper: str) -> np.ndarray:
        """The arm configuration of ``gripper``'s robot the checks start from, radians."""
        return np.array(self._saved["robots"][self.grippers[gripper]][0])

    # ---- the workspace test (no IK) ---------------------------------------------------------------
    def _bounds(self, robot: str) -> Optional[tuple[Any, np.ndarray, Pose]]:
        """``(WristBounds, shoulder point (3,) world, base frame (4, 4))`` of ``robot``, or None when
        its kinematics give no such bound (cached: the bases do not move while planning)."""
        if robot not in self._workspace:
            from .arm_workspace import wrist_bounds
            from .base_pose import base_frame
            wb = wrist_bounds(self.world, robot)
            if wb is None:
                self._workspace[robot] = None
            else:
                B = base_frame(self.world, robot)
                self._workspace[robot] = (wb, B[:3, :3] @ wb.shoulder_in_base + B[:3, 3], B)
        return self._workspace[robot]

    def waypoints(self, q: TransitionQuery) -> list[tuple[str, Pose]]:
        """The TCP poses (world) of a grasp's or release's waypoints, in order; [] for a handover."""
        T = q.object_pose @ q.variant.pose
        up = T.copy()
        up[2, 3] += q.lift_m
        if q.kind == "grasp":
            return [("pregrasp", translate_z(T, -q.approach_m)), ("intersec", T), ("preplace", up)]
        if q.kind == "release":
            return [("preplace", up), ("intersec", T), ("retreat", translate_z(T, -q.retreat_m))]
        return []

    def prefilter(self, q: TransitionQuery) -> Optional[TransitionResult]:
        """A failed :class:`TransitionResult` (cause ``"reach"``) when a waypoint of a grasp or release is
        outside the arm's workspace, without any IK: its wrist point (the TCP pose fixes it) is nearer
        to the shoulder or farther from it than any configuration of the arm puts it
        (:class:`~.arm_workspace.WristBounds`: the iiwa's elbow keeps its wrist 0.39 m or more from its
        shoulder, so a hand level and low close to its base is out of reach). A necessary
        condition only: None says "maybe", the full check decides. The planner asks this for every
        edge it generates, so that placements and grasps the arm cannot reach never become
        candidates (and cost none of the ``max_checks``).
        """
        robot = self.grippers.get(q.gripper)
        ws = self._bounds(robot) if robot is not None else None
        if ws is None:
            return None
        wb, S, B = ws
        for waypoint, T in self.waypoints(q):
            d = float(np.linalg.norm(wb.wrists(T[None])[0] - S))
            if wb.lo <= d <= wb.hi:
                continue
            self.prefiltered += 1
            how = "close to" if d < wb.lo else "far from"
            yaw = math.degrees(math.atan2(B[1, 0], B[0, 0]))
            return TransitionResult(
                ok=False, waypoint=waypoint, cause="reach",
                reason=f"target {_fmt(T[:3, 3])} is out of reach: too {how} {robot}'s shoulder for its wrist "
                       f"({d:.2f} m from it; it reaches {wb.lo:.2f}-{wb.hi:.2f} m, from {robot}'s base at "
                       f"{_fmt(B[:3, 3])} facing {yaw:.0f} deg)")
        return None

    # ---- the query ---------------------------------------------------------------------------------
    def __call__(self, q: TransitionQuery) -> TransitionResult:
        t0_ik, t0_col, n_ik, n_col = self.ik_s, self.collision_s, self.ik_calls, self.collision_checks
        self.queries += 1
        configs: dict[str, np.ndarray] = {}
        try:
            self._place_others(q)
            if q.kind == "grasp":
                self._grasp(q, configs)
            elif q.kind == "release":
                self._release(q, configs)
            elif q.kind == "handover_grasp":
                self._handover_grasp(q, configs)
            elif q.kind == "handover_release":
                self._handover_release(q, configs)
            else:
                raise ValueError(f"unknown transition kind {q.kind!r}")
            ok, reason, waypoint, cause, obstacle = True, "", "", "", ""
        except _Fail as f:
            ok, reason, waypoint, cause, obstacle = False, f.reason, f.waypoint, f.cause, f.obstacle
        finally:
            self._restore()
        return TransitionResult(ok=ok, reason=reason, waypoint=waypoint, cause=cause, obstacle=obstacle,
                                configurations={k: tuple(float(x) for x in v) for k, v in configs.items()},
                                ik_s=self.ik_s - t0_ik, collision_s=self.collision_s - t0_col,
                                ik_calls=self.ik_calls - n_ik, collision_checks=self.collision_checks - n_col)

    def _place_others(self, q: TransitionQuery) -> None:
        w = self.world
        for robot in list(w._attached):        # the transition says who holds what
            if w.attached(robot) in q.others or w.attached(robot) == q.object:
                w.detach(robot)
        for o, T in q.others.items():
            if o in w.bodies:
                w.set_object_pose(o, _PARK if T is None else T)

    # ---- kinds -------------------------------------------------------------------------------------
    def _grasp(self, q: TransitionQuery, configs: dict) -> None:
        w = self.world
        robot = self.grippers[q.gripper]
        r = w.robots[robot]
        obj_body = w.body_id(q.object)
        self._check_width(q)
        support = self._support_body(q)
        G = q.variant.pose
        T_g = q.object_pose @ G
        T_pre = translate_z(T_g, -q.approach_m)
        T_lift = T_g.copy()
        T_lift[2, 3] += q.lift_m
        self._below_support("pregrasp", T_pre, q, support)
        w.detach(robot)
        w.set_object_pose(q.object, q.object_pose)
        q_now = self.current_configuration(q.gripper)
        w.set_robot_state(robot, q_now, fingers=r.finger_targets(self._open[q.gripper]))
        hand = self._hand_pairs(robot, obj_body)
        q_pre = self._solve("pregrasp", robot, T_pre, self._seeds(robot, q_now, T_pre), AllowedContacts(), support)
        configs["pregrasp"] = q_pre
        q_g = self._solve("intersec", robot, T_g, [q_pre], hand, support)
        q_g = self._line("approach", robot, q_pre, T_g, hand)
        configs["intersec"] = q_g
        # lifted: the object moves with the hand, the fingers closed on it
        width = q.variant.width_m if math.isfinite(q.variant.width_m) else 0.0
        w.set_robot_state(robot, q_g, fingers=r.finger_targets(max(width, r.closed_gap)))
        w.attach(robot, q.object, invert(G))
        self._solve("preplace", robot, T_lift, [q_g], AllowedContacts(), support)
        lift_allowed = AllowedContacts()
        if support is not None:
            lift_allowed.pairs.add((("held", -1), support, None))
        configs["preplace"] = self._line("lift", robot, q_g, T_lift, lift_allowed)

    def _release(self, q: TransitionQuery, configs: dict) -> None:
        w = self.world
        robot = self.grippers[q.gripper]
        r = w.robots[robot]
        obj_body = w.body_id(q.object)
        support = self._support_body(q)
        G = q.variant.pose
        P = q.object_pose
        T_place = P @ G
        T_pre = T_place.copy()
        T_pre[2, 3] += q.lift_m
        T_ret = translate_z(T_place, -q.retreat_m)
        self._below_support("retreat", T_ret, q, support)
        width = q.variant.width_m if math.isfinite(q.variant.width_m) else 0.0
        q_now = self.current_configuration(q.gripper)
        w.set_object_pose(q.object, P)
        w.set_robot_state(robot, q_now, fingers=r.finger_targets(max(width, r.closed_gap)))
        w.attach(robot, q.object, invert(G))
        q_pre = self._solve("preplace", robot, T_pre, self._seeds(robot, q_now, T_pre), AllowedContacts(), support)
        configs["preplace"] = q_pre
        placed = self._touch_support(robot, support, held=True)
        self._solve("intersec", robot, T_place, [q_pre], placed, support)
        q_p = self._line("lower", robot, q_pre, T_place, placed, speed_mps=LOWER_SPEED_MPS)
        configs["intersec"] = q_p
        # the force-guarded descent aims LOWER_PAST_M below the placement (it stops on contact): the
        # arm must clear the surface there too (the hand and the object may touch it)
        T_low = T_place.copy()
        T_low[2, 3] -= LOWER_PAST_M
        self._solve("intersec", robot, T_low, [q_p], self._touch_support(robot, support, held=True, hand=True),
                    support)
        # released: the object stays, the fingers open, the hand backs off
        w.detach(robot)
        w.set_object_pose(q.object, P)
        w.set_robot_state(robot, q_p, fingers=r.finger_targets(self._open[q.gripper]))
        self._solve("retreat", robot, T_ret, [q_p], self._touch_support(robot, support, held=False), support)
        away = self._hand_pairs(robot, obj_body).merge(self._touch_support(robot, support, held=False))
        configs["retreat"] = self._line("retreat", robot, q_p, T_ret, away)

    def _present(self, q: TransitionQuery, configs: dict) -> tuple[str, np.ndarray]:
        """The partner's arm at the handover pose with the object: (robot, configuration)."""
        w = self.world
        assert q.partner is not None
        pg, pvar = q.partner
        probot = self.grippers[pg]
        pr = w.robots[probot]
        G = pvar.pose
        T = q.object_pose @ G
        w.detach(probot)
        w.set_object_pose(q.object, q.object_pose)
        q_now = self.current_configuration(pg)
        width = pvar.width_m if math.isfinite(pvar.width_m) else 0.0
        w.set_robot_state(probot, q_now, fingers=pr.finger_targets(max(width, pr.closed_gap)))
        w.attach(probot, q.object, invert(G))
        q_h = self._solve(f"present ({pg})", probot, T, self._seeds(probot, q_now), AllowedContacts(), None)
        configs[f"present {pg}"] = q_h
        w.set_robot_state(probot, q_h)
        w.set_object_pose(q.object, q.object_pose)
        return probot, q_h

    def _handover_grasp(self, q: TransitionQuery, configs: dict) -> None:
        w = self.world
        self._check_width(q)
        self._present(q, configs)
        robot = self.grippers[q.gripper]
        r = w.robots[robot]
        G = q.variant.pose
        T_g = q.object_pose @ G
        T_pre = translate_z(T_g, -q.approach_m)
        w.detach(robot)
        q_now = self.current_configuration(q.gripper)
        w.set_robot_state(robot, q_now, fingers=r.finger_targets(self._open[q.gripper]))
        hand = self._hand_pairs(robot, w.body_id(q.object))
        q_pre = self._solve("pregrasp", robot, T_pre, self._seeds(robot, q_now), AllowedContacts(), None)
        configs["pregrasp"] = q_pre
        q_g = self._solve("intersec", robot, T_g, [q_pre], hand, None)
        configs["intersec"] = self._line("approach", robot, q_pre, T_g, hand)

    def _handover_release(self, q: TransitionQuery, configs: dict) -> None:
        w = self.world
        self._present(q, configs)   # the receiver keeps it: its arm where it holds it
        robot = self.grippers[q.gripper]
        r = w.robots[robot]
        T_g = q.object_pose @ q.variant.pose
        T_ret = translate_z(T_g, -q.retreat_m)
        w.detach(robot)
        q_now = self.current_configuration(q.gripper)
        w.set_robot_state(robot, q_now, fingers=r.finger_targets(self._open[q.gripper]))
        hand = self._hand_pairs(robot, w.body_id(q.object))
        q_g = self._solve("intersec", robot, T_g, self._seeds(robot, q_now), hand, None)
        configs["intersec"] = q_g
        self._solve("retreat", robot, T_ret, [q_g], AllowedContacts(), None)
        configs["retreat"] = self._line("retreat", robot, q_g, T_ret, hand)

    # ---- building blocks ---------------------------------------------------------------------------
    def _check_width(self, q: TransitionQuery) -> None:
        width = q.variant.width_m
        opening = self._open[q.gripper]
        if math.isfinite(width) and width > opening - WIDTH_MARGIN_M:
            raise _Fail("intersec", "width", f"the grasp {q.variant.name} is {width:.3f} m wide; {q.gripper} opens "
                                             f"{opening:.3f} m")

    def _support_body(self, q: TransitionQuery) -> Optional[int]:
        if q.placement is None:
            return None
        name = q.placement.surface.partition("/")[0]
        return self.world.bodies.get(name)

    def _below_support(self, waypoint: str, T: Pose, q: TransitionQuery, support: Optional[int]) -> None:
        """A pregrasp / retreat point under the surface the object rests on: no position helps."""
        if support is None or q.placement is None:
            return
        top = q.object_pose[2, 3] - q.placement.height_m
        if T[2, 3] < top:
            raise _Fail(waypoint, "support", f"the {waypoint} point {_fmt(T[:3, 3])} is {top - T[2, 3]:.3f} m below "
                                             f"{q.placement.surface} (the approach comes from below)")

    def _seeds(self, robot: str, q_now: np.ndarray, T: Optional[Pose] = None) -> list[np.ndarray]:
        """IK seeds of a transition's first waypoint, in the order tried: the arm now, ``ready``, then
        (only reached when those give no clear solution) the arm now and each named configuration
        with the first joint turned toward ``T``, the named configurations as they are, and
        :data:`RANDOM_SEEDS` seeded random ones (a hand level and low beside the table, or an arm
        folded near its base, needs a posture neither the arm now nor ``ready`` leads to)."""
        r = self.world.robots[robot]
        named = [np.asarray(c, dtype=float) for c in r.model.named_configurations.values()]
        ready = r.model.named_configurations.get("ready")
        first = [np.asarray(q_now, dtype=float)] + ([np.asarray(ready, dtype=float)] if ready is not None else [])
        more: list[np.ndarray] = []
        if T is not None:
            from .base_pose import base_frame
            p = np.linalg.solve(base_frame(self.world, robot), np.append(T[:3, 3], 1.0))[:3]
            bearing = math.atan2(p[1], p[0])
            for q in first + named:
                turned = q.copy()
                turned[0] = bearing
                more.append(r.clip_to_limits(turned))
        more += named
        if robot not in self._random_seeds:
            rng = np.random.default_rng(0)
            self._random_seeds[robot] = [rng.uniform(r.lower, r.upper) for _ in range(RANDOM_SEEDS)]
        more += self._random_seeds[robot]
        out: list[np.ndarray] = []
        for s in first + more:
            if all(np.max(np.abs(s - o)) > 1e-3 for o in out):
                out.append(s)
        return out

    def _hand_pairs(self, robot: str, body: int) -> AllowedContacts:
        out = AllowedContacts()
        for j in self.world.hand_links(robot):
            out.pairs.add((("link", j), body, None))
        return out

    def _touch_support(self, robot: str, support: Optional[int], held: bool, hand: bool = False) -> AllowedContacts:
        """The hand may touch the support but not enter it (threshold 0; ``hand``: enter it too, as at
        the end of a force-guarded line); the held object may rest on it."""
        out = AllowedContacts()
        if support is None:
            return out
        w = self.world
        for j in w.hand_links(robot):
            if hand:
                out.pairs.add((("link", j), support, None))
                continue
            for link in w._links[support]:
                out.relaxed[(("link", j), support, link)] = 0.0
        if held:
            out.pairs.add((("held", -1), support, None))
        return out

    def _checker(self, robot: str, allowed: AllowedContacts) -> Any:
        t0 = time.perf_counter()
        ck = self.world.checker(robot, allowed)
        self.collision_s += time.perf_counter() - t0
        return ck

    def _valid(self, ck: Any, q: np.ndarray) -> bool:
        t0 = time.perf_counter()
        ok = ck.is_valid(q)
        self.collision_checks += 1
        self.collision_s += time.perf_counter() - t0
        return ok

    def _solve(self, waypoint: str, robot: str, T: Pose, seeds: Sequence[np.ndarray], allowed: AllowedContacts,
               support: Optional[int]) -> np.ndarray:
        """A collision-free IK solution at ``T`` from the first seed that gives one; else _Fail."""
        w = self.world
        r = w.robots[robot]
        ck = self._checker(robot, allowed)
        best = None
        hit: Optional[Proximity] = None
        for seed in seeds:
            t0 = time.perf_counter()
            sol = solve_ik(r, T, [seed])
            self.ik_s += time.perf_counter() - t0
            self.ik_calls += 1
            if sol.position_error_m > self.pos_tol or sol.orientation_error_rad > self.ori_tol:
                if best is None or sol.position_error_m + 0.05 * sol.orientation_error_rad < \
                        best.position_error_m + 0.05 * best.orientation_error_rad:
                    best = sol
                continue
            if self._valid(ck, sol.q):
                return sol.q
            if hit is None:
                t0 = time.perf_counter()
                hit = ck.explain(sol.q)
                self.collision_s += time.perf_counter() - t0
        planner = self._planners[robot]
        if hit is not None:
            cause = "collision"
            if support is not None and not hit.self_collision and hit.body == w.names.get(support):
                cause = "support" if (hit.held or hit.key[0][1] in w.hand_links(robot)) else "support_arm"
            raise _Fail(waypoint, cause, f"target {_fmt(T[:3, 3])} is only reachable in collision: "
                                         f"{planner._hit_text(hit)}", "" if hit.self_collision else hit.body)
        assert best is not None
        raise _Fail(waypoint, "reach", planner._unreachable_text(T, best, self.pos_tol, self.ori_tol))

    def _line(self, name: str, robot: str, qa: np.ndarray, target: Pose, allowed: AllowedContacts,
              speed_mps: float = LINE_SPEED_MPS) -> np.ndarray:
        """The straight TCP line from ``qa`` to ``target`` (world frame), followed as
        ``ExecuteRegraspPlan``'s MoveCartesian follows it (:meth:`ArmMotionPlanner.lines`: the same
        IK waypoints, 5 mm / 0.05 rad apart at most, the same redundancy resolutions in the same
        order: the first one clear is taken), every waypoint and the joint segments between them
        collision-checked (``motions="straight"``). Returns the
        configuration at the line's end (radians), where the executed motion ends; raises _Fail
        naming the motion, where along it (metres, percent) and the bodies."""
        if self.motions != "straight":
            return qa
        from .arm_planner import MotionPlanningError, MotionRequest

        w = self.world
        planner = self._planners[robot]
        T0 = w.tcp_pose(robot, qa)
        dist = float(np.linalg.norm(target[:3, 3] - T0[:3, 3]))
        req = MotionRequest(robot=robot, kind="cartesian", start=qa, target=target, speed_mps=speed_mps,
                            position_tolerance_m=self.pos_tol)
        ck = self._checker(robot, allowed)
        first: Optional[_Fail] = None
        lines = planner.lines(req, np.asarray(qa, dtype=float), target)
        while True:
            t0 = time.perf_counter()
            line = next(lines, None)
            self.ik_s += time.perf_counter() - t0
            if line is None:
                break
            if isinstance(line, MotionPlanningError):
                first = first or _Fail(name, "motion", f"the {name} motion: {line}")
                continue
            qs, s_wp, _ = line
            self.ik_calls += len(qs)
            fail = self._line_hit(name, robot, qs, s_wp, dist, ck)
            if fail is None:
                return np.asarray(qs[-1], dtype=float)
            first = first or fail
        assert first is not None
        raise first

    def _line_hit(self, name: str, robot: str, qs: np.ndarray, s_wp: np.ndarray, dist: float,
                  ck: Any) -> Optional["_Fail"]:
        """Where a line's waypoints (and the joint steps between two more than SEGMENT_STEP_RAD
        apart) first collide, as a _Fail naming how far along and the bodies, or None."""
        w = self.world
        planner = self._planners[robot]
        for k in range(1, len(qs)):
            # the waypoints are a few millimetres apart: each checked, and the states between two
            # that are more than SEGMENT_STEP_RAD apart in a joint
            n = max(1, int(math.ceil(float(np.max(np.abs(qs[k] - qs[k - 1]))) / SEGMENT_STEP_RAD)))
            for i in range(1, n + 1):
                qi = qs[k - 1] + (qs[k] - qs[k - 1]) * (i / n)
                if self._valid(ck, qi):
                    continue
                hit = ck.explain(qi)
                at = float(s_wp[k - 1] + (i / n) * (s_wp[k] - s_wp[k - 1]))
                tcp = w.tcp_pose(robot, qi)[:3, 3]
                return _Fail(name, "motion", f"the {name} motion collides {at * dist:.3f} m ({100 * at:.0f}%) along "
                                             f"its {dist:.3f} m line, TCP at {_fmt(tcp)}: {planner._hit_text(hit)}",
                             "" if hit is None or hit.self_collision else hit.body)
        return None


# ================================================================================================
# Surfaces and generated placements
# ================================================================================================
@dataclass(frozen=True)
class SupportSurface:
    """The top of a body, as a rectangle (world axes) at a height.

    Attributes:
        name: ``"table/top"``; body: the body's name.
        z: height of the surface at its centre, metres.
        lo, hi: (x, y) corners of the body's bounding box, metres.
    """

    name: str
    body: str
    z: float
    lo: tuple[float, float]
    hi: tuple[float, float]


def support_surface(world: CollisionWorld, name: str) -> SupportSurface:
    """The environment contact surface ``name`` (``"<body>/top"``) of the world.

    Raises:
        ValueError: no such body, or a surface other than its top.
    """
    body_name, _, part = name.partition("/")
    if body_name not in world.bodies:
        raise ValueError(f"environment contact {name!r}: no body named {body_name!r}; bodies are "
                         f"{sorted(b for b in world.bodies if b not in world.robots)}")
    if part not in ("", "top"):
        raise ValueError(f"environment contact {name!r}: only the top of a body is a contact surface "
                         f"(write '{body_name}/top')")
    c = world.client
    body = world.bodies[body_name]
    lo = np.full(3, np.inf)
    hi = np.full(3, -np.inf)
    for link in world._links[body]:
        a, b = pb.getAABB(body, link, physicsClientId=c)
        lo, hi = np.minimum(lo, a), np.maximum(hi, b)
    z = _ray_z(world, body, (lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, hi[2] + 0.5, lo[2] - 0.01)
    return SupportSurface(name, body_name, float(hi[2] if z is None else z), (float(lo[0]), float(lo[1])),
                          (float(hi[0]), float(hi[1])))


def _ray_z(world: CollisionWorld, body: int, x: float, y: float, z_from: float, z_to: float) -> Optional[float]:
    """Height of ``body``'s upper surface under the point (x, y), between ``z_to`` and ``z_from``, or None
    when the body is not under it. Other bodies are ignored (the closest point of ``body`` to a probe
    above it: straight below it when the point is over its top)."""
    c = world.client
    if world._probe is None:
        world.probe_bodies([0.0, 0.0, -100.0], 0.0)   # makes the world's probe sphere
    probe = world._probe
    pb.resetBasePositionAndOrientation(probe, [x, y, z_from], [0, 0, 0, 1], physicsClientId=c)
    try:
        pts = pb.getClosestPoints(probe, body, z_from - z_to + 1.0, physicsClientId=c)
    finally:
        pb.resetBasePositionAndOrientation(probe, [0, 0, -100], [0, 0, 0, 1], physicsClientId=c)
    if not pts:
        return None
    p = min(pts, key=lambda q: q[8])[6]   # the point on the body
    if math.hypot(p[0] - x, p[1] - y) > 1e-3 or not (z_to <= p[2] <= z_from):
        return None
    return float(p[2])


def resting_gap(world: CollisionWorld, obj: str, pose: Pose, surface: SupportSurface) -> float:
    """Distance from ``obj`` at ``pose`` to ``surface``'s body, metres (negative: it sinks in; ``inf`` when
    the surface is not under the object's origin). The object is put back."""
    c = world.client
    body = world.body_id(obj)
    sb = world.bodies[surface.body]
    if _ray_z(world, sb, float(pose[0, 3]), float(pose[1, 3]), surface.z + 1.0, surface.z - 0.5) is None:
        return math.inf
    old = world.object_pose(obj)
    world.set_object_pose(obj, pose)
    try:
        pts = pb.getClosestPoints(body, sb, 1.0, physicsClientId=c)
        return min((float(p[8]) for p in pts), default=math.inf)
    finally:
        world.set_object_pose(obj, old)


def _yaw(R: np.ndarray) -> float:
    """Yaw of a rotation about world z: the direction of its x axis, or of its y axis when x is vertical."""
    x = R[:, 0] if abs(R[2, 0]) < 0.9 else R[:, 1]
    return math.atan2(x[1], x[0])


def surface_placements(world: CollisionWorld, obj: str, faces: Sequence[Placement], surface: SupportSurface,
                       start_pose: Pose, reach: Sequence[tuple[Sequence[float], float]], spacing_m: float = 0.1,
                       margin_m: float = 0.02, yaws_deg: Sequence[float] = (0.0, 90.0, 180.0, 270.0),
                       max_points: int = 20) -> list[PlacementCandidate]:
    """Placement poses of ``obj`` generated on ``surface``: a grid times every face.

    Args:
        faces: the object's stable placements (``placements_for_object``).
        start_pose: the object's pose now (world): the grid's yaw follows its yaw, points nearest to it
            first.
        reach: ``(base position (3,), reach m)`` of every robot that may put the object down; a point
            is kept when some base is between 0.25 m and ``reach - 0.1`` m away horizontally.
        spacing_m: grid spacing, metres. margin_m: kept from the surface's edges besides the
            object's own footprint, metres. yaws_deg: yaws added to the object's yaw now, in the
            order tried (every grid point at the first yaw, then at the next).
        max_points: grid points kept (nearest to the object first).

    Returns:
        :class:`~py_trees_manipulation.planning.geometric_model.PlacementCandidate` s, source ``"grid"``,
        named ``"<face> at (x, y)"`` (and ``" yaw N"`` for extra yaws).
    """
    if spacing_m <= 0:
        raise ValueError(f"spacing_m must be > 0, got {spacing_m}")
    body = world.bodies[surface.body]
    foot = max((float(np.max(np.abs(p.pose[:2, 3]))) for p in faces), default=0.0)
    foot = max(foot, max((p.height_m for p in faces), default=0.0))  # the largest half extent
    lo = np.array(surface.lo) + foot + margin_m
    hi = np.array(surface.hi) - foot - margin_m
    if np.any(hi < lo):
        return []
    xs = np.arange(lo[0], hi[0] + 1e-9, spacing_m)
    ys = np.arange(lo[1], hi[1] + 1e-9, spacing_m)
    # align the grid on the object's position now (it is then one of the points)
    x0, y0 = float(start_pose[0, 3]), float(start_pose[1, 3])
    xs = xs + ((x0 - xs[0]) % spacing_m) - (spacing_m if (x0 - xs[0]) % spacing_m > spacing_m / 2 else 0.0)
    ys = ys + ((y0 - ys[0]) % spacing_m) - (spacing_m if (y0 - ys[0]) % spacing_m > spacing_m / 2 else 0.0)
    pts = []
    for x in xs:
        for y in ys:
            if not (lo[0] - 1e-9 <= x <= hi[0] + 1e-9 and lo[1] - 1e-9 <= y <= hi[1] + 1e-9):
                continue
            ok = False
            for base, r in reach:
                d = math.hypot(x - base[0], y - base[1])
                if 0.25 <= d <= r - 0.1:
                    ok = True
                    break
            if not ok:
                continue
            z = _ray_z(world, body, float(x), float(y), surface.z + 0.5, surface.z - 0.5)
            if z is None or abs(z - surface.z) > 0.02:
                continue   # off the surface, or something else stands there
            pts.append((math.hypot(x - x0, y - y0), float(x), float(y), z))
    pts.sort()
    yaw0 = _yaw(np.asarray(start_pose)[:3, :3])
    out = []
    # every point at the first yaw (the object's own) before any turned one: a plan turns the
    # object only when no placement at its yaw serves
    for dy in yaws_deg:
        for _, x, y, z in pts[:max_points]:
            for p in faces:
                T = p.on_surface([x, y, z], yaw0 + math.radians(dy))
                name = f"{p.face} at ({x:.2f}, {y:.2f})" + (f" yaw {dy:g}" if dy else "")
                out.append(PlacementCandidate(obj, name, p.face, p.face, surface.name, T, "grid", p.height_m))
    return out


# ================================================================================================
# The model of a problem
# ================================================================================================
@dataclass
class ObjectGeometry:
    """What :func:`build_model` needs about one object.

    Attributes:
        name: object name (a body of the world).
        pose: (4, 4) world pose now.
        held: a gripper holds it now.
        faces: its stable placements (``placements_for_object``; empty when unknown).
        contacts: the description's placements: contact name -> world poses.
        handover_pose: (4, 4) or None.
    """

    name: str
    pose: Pose
    held: bool = False
    faces: Sequence[Placement] = ()
    contacts: Mapping[str, Sequence[Pose]] = None  # type: ignore[assignment]
    handover_pose: Optional[Pose] = None


def build_placements(world: CollisionWorld, obj: ObjectGeometry, surfaces: Sequence[SupportSurface],
                     reach: Sequence[tuple[Sequence[float], float]], settings: PlacementSettings,
                     tolerance_m: float = 0.01) -> tuple[list[PlacementCandidate], list[str]]:
    """The placement candidates of one object: where it lies now (when free), the description's,
    the spot it lies on with its other faces, the grid (see :class:`PlacementSettings`).

    Returns:
        ``(candidates, notes)``.

    Raises:
        ValueError: a description placement that does not rest on an environment surface (it floats,
            sinks in, or is tilted off its faces), naming it: ``box/bottom #1: ...``.
    """
    from ..geometry.grasps import resting_face

    out: list[PlacementCandidate] = []
    notes: list[str] = []
    faces = list(obj.faces)

    def face_of(T: Pose, what: str, check: bool) -> tuple[str, float]:
        if not faces:
            return "", 0.0
        p = resting_face(T, faces)
        down = p.pose[:3, :3].T @ np.array([0.0, 0.0, -1.0])
        tilt = math.degrees(math.acos(float(np.clip((T[:3, :3] @ down) @ np.array([0.0, 0.0, -1.0]), -1, 1))))
        if check and tilt > 5.0:
            raise ValueError(f"{what}: the object is tilted {tilt:.0f} deg from resting on any face "
                             f"(the nearest is {p.face})")
        return p.face, p.height_m

    def surface_under(T: Pose, what: str, check: bool) -> Optional[SupportSurface]:
        best, best_gap = None, math.inf
        for s in surfaces:
            gap = resting_gap(world, obj.name, T, s)
            if abs(gap) < abs(best_gap):
                best, best_gap = s, gap
        if check:
            if best is None or not math.isfinite(best_gap):
                raise ValueError(f"{what}: at {_fmt(T[:3, 3])} it is over none of the environment contact "
                                 f"surfaces {[s.name for s in surfaces]}")
            if abs(best_gap) > tolerance_m:
                how = "floats" if best_gap > 0 else "sinks"
                x, y, z = (float(v) for v in T[:3, 3])
                raise ValueError(f"{what}: at {_fmt(T[:3, 3])} it does not rest on {best.name}: it {how} "
                                 f"{abs(best_gap):.3f} m {'above' if best_gap > 0 else 'into'} it; it rests "
                                 f"there at position [{x:.3f}, {y:.3f}, {z - best_gap:.3f}]")
        return best

    if not obj.held:
        face, h = face_of(obj.pose, "where it lies now", False)
        s = surface_under(obj.pose, "where it lies now", False)
        out.append(PlacementCandidate(obj.name, f"{face or 'where it lies'} at {_fmt(obj.pose[:2, 3])} (now)",
                                      face or "now", face or "now", s.name if s else "", obj.pose, "current", h))
    for contact, poses in (obj.contacts or {}).items():
        for i, T in enumerate(poses):
            what = f"{contact} #{i}"
            face, h = face_of(T, what, True)
            s = surface_under(T, what, bool(surfaces))
            out.append(PlacementCandidate(obj.name, f"{contact} #{i} at {_fmt(T[:2, 3])}", face or contact, contact,
                                          s.name if s else "", np.asarray(T, dtype=float), "description", h))
    if not faces:
        if settings.grid_spacing_m > 0:
            notes.append(f"{obj.name}: no known faces (not a box or cylinder primitive, nor the shipped mug): "
                         "only the description's placements")
        return out, notes
    yaw0 = _yaw(np.asarray(obj.pose)[:3, :3])
    if settings.spot and not obj.held and out:
        s = surface_under(obj.pose, "where it lies now", False)
        if s is not None:
            z = obj.pose[2, 3] - out[0].height_m
            for p in faces:
                if p.face == out[0].face:
                    continue
                T = p.on_surface([obj.pose[0, 3], obj.pose[1, 3], z], yaw0)
                out.append(PlacementCandidate(obj.name, f"{p.face} at {_fmt(T[:2, 3])}", p.face, p.face, s.name, T,
                                              "spot", p.height_m))
    if settings.grid_spacing_m > 0:
        for s in surfaces:
            out += surface_placements(world, obj.name, faces, s, obj.pose, reach, settings.grid_spacing_m,
                                      settings.margin_m, settings.yaws_deg, settings.max_points)
    return out, notes


def robot_reach(world: CollisionWorld, robots: Sequence[str]) -> list[tuple[np.ndarray, float]]:
    """``(base position, reach_m)`` of each robot (the model's reach, else 0.85 m)."""
    out = []
    for name in robots:
        r = world.robots[name]
        p, _ = pb.getBasePositionAndOrientation(r.body, physicsClientId=world.client)
        out.append((np.array(p), float(getattr(r.model, "reach_m", 0.0) or 0.85)))
    return out
