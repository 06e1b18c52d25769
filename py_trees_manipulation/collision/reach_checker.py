"""The reachability check: :class:`ReachChecker` follows each path of a :class:`ReachTarget` the way
the task will (IK from the previous solution, in steps, the straight lines by the motion's own line
IK, every state collision-checked), and :func:`check_for_task` is the check a task runs before it
moves. Overview and sources: :mod:`~.reachability`.

Units: metres, radians (degrees in texts). Poses: (4, 4) homogeneous transforms, world frame.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Optional, Sequence

import numpy as np
import pybullet as pb

from ..geometry.poses import Pose
from ..scene.reach_targets import ReachSample, ReachTarget
from .arm_workspace import WristBounds, arm_mirror
from .base_pose import base_frame, base_overlap
from .ik import IKSolution, solve_ik
from .reach_results import SampleResult, TargetResult
from .contacts import AllowedContacts, Proximity
from .world import CollisionWorld

if TYPE_CHECKING:  # pragma: no cover
    from ..bullet.robots import LoadedRobot

__all__ = ["ReachChecker", "search_checker", "check_for_task", "POSITION_TOLERANCE_M", "ORIENTATION_TOLERANCE_RAD"]

#: IK position error accepted at a sample, metres (the screw follower's own bound)
POSITION_TOLERANCE_M = 0.005
#: IK position error accepted at a sample by the base search, metres (a margin on the check's)
SEARCH_TOLERANCE_M = 0.002
#: IK orientation error accepted at a sample, radians (the motion planner's default)
ORIENTATION_TOLERANCE_RAD = 0.1
#: largest joint change between two samples of a path, radians (the Cartesian planner's bound)
MAX_JOINT_JUMP_RAD = 0.5
#: random IK seeds tried for the first sample of a path, after the named configurations
RANDOM_SEEDS = 4
#: distinct starting solutions a path is followed from before it is given up
MAX_STARTS = 3
#: largest TCP step between two IK solutions along a path, metres and radians
STEP_M = 0.04
STEP_RAD = 0.15
#: ... along a line checked state by state (backing off), metres
FINE_STEP_M = 0.01
#: a pair closer than the padding where a line starts may get this much closer, metres (the motion
#: planner's rule)
START_RELAX_M = 0.002
#: clearance the arm keeps while the hand holds a handle, metres: the motion along a door's arc or a
#: drawer's line is compliant (the follow_screw impedance), so a link may brush the world (a door
#: jamb) by up to 5 mm; the planning padding applies to the free motions
HELD_PADDING_M = -0.005
#: ... and in a base search (a margin on the check's)
SEARCH_HELD_PADDING_M = 0.0
#: clearance a base search adds to the planning padding for the free samples (approach, back-off), metres
SEARCH_EXTRA_PADDING_M = 0.005
#: how far from its limits every joint stays along a path found by a base search, radians
SEARCH_JOINT_MARGIN_RAD = 0.05
#: distinct starting postures a base search follows a path from (``any_posture``; in the order of
#: :meth:`ReachChecker._check_path`, which :func:`check_for_task` repeats in the tree)
SEARCH_STARTS = 3
#: two IK solutions closer than this (joint-space distance, radians) are one arm posture (see
#: :meth:`ReachChecker._distinct_postures`)
POSTURE_DISTANCE_RAD = 1.0
#: IK stops refining below this error (metres, and radians), well inside the tolerances
IK_THRESHOLD = 5e-4


class ReachChecker:
    """Checks :class:`ReachTarget` s for one robot of a :class:`~.world.CollisionWorld` where it stands.

    Args:
        world: the collision world (synced by the caller); articulated bodies are moved to each
            sample's joint positions and put back afterwards.
        robot: the robot's name in it.
        seed: seeds the random IK seeds.
        start: the arm configuration the task starts from (radians; default: where the arm is in
            the world now); the first IK seed.
        position_tolerance_m: IK position error accepted at a sample, metres (the base search asks
            for less than the executor's 5 mm, to leave a margin).
        held_padding_m: the clearance the arm keeps while the hand holds a handle, metres
            (negative: how far a link may press into the world, the arm being compliant then).
        joint_margin_rad: how far from its limits every joint must stay along a path, radians
            (the base search keeps a margin: an arm tracking a path at a joint limit stalls).
        strict: a path must work from the IK solution the motion planner takes first; when that one
            is out of tolerance or in collision the planner picks among others (not predictable), so
            a strict check (the base search) fails there, a lenient one tries other postures; a line
            backing off a contact may not bring any pair closer (the planner allows 2 mm), and the free
            samples keep :data:`SEARCH_EXTRA_PADDING_M` more than the planning padding.
        max_starts: distinct first-sample solutions a path is followed from (``any_posture``), in
            the order of :meth:`_distinct_postures`; the base search follows :data:`SEARCH_STARTS`,
            and the check in the tree (:func:`check_for_task`) repeats that search's check first, so
            that it finds the same posture.

    Raises:
        KeyError: unknown robot.
    """

    def __init__(self, world: CollisionWorld, robot: str, seed: int = 0, start: Optional[Sequence[float]] = None,
                 position_tolerance_m: float = POSITION_TOLERANCE_M, held_padding_m: float = HELD_PADDING_M,
                 joint_margin_rad: float = 0.0, strict: bool = False, max_starts: int = MAX_STARTS):
        if robot not in world.robots:
            raise KeyError(f"no robot named {robot!r}; the collision world has {sorted(world.robots)}")
        self.world = world
        self.robot = robot
        self.loaded: "LoadedRobot" = world.robots[robot]
        self.seed = int(seed)
        self.start = np.asarray(start if start is not None else self.loaded.joint_positions(), dtype=float)
        self.position_tolerance_m = float(position_tolerance_m)
        self.held_padding_m = float(held_padding_m)
        self.joint_margin_rad = float(joint_margin_rad)
        self.strict = bool(strict)
        self.max_starts = int(max_starts)
        r = self.loaded
        self._named = [np.asarray(v, dtype=float) for v in r.model.named_configurations.values()]
        rng = np.random.default_rng(self.seed)
        self._random = list(rng.uniform(r.lower, r.upper, size=(RANDOM_SEEDS, len(r.lower))))
        self._mirror = arm_mirror(world, robot)
        self._hand = sorted(world.hand_links(robot))
        self._joint_cache: dict[tuple[str, str], int] = {}
        self._joint_links: dict[tuple[str, str], list[int]] = {}
        self._line_planner: Any = None
        self.ik_calls = 0

    # ---- world state --------------------------------------------------------------------------------
    def _joint(self, body: str, joint: str) -> int:
        key = (body, joint)
        if key not in self._joint_cache:
            bid = self.world.body_id(body)
            c = self.world.client
            for j in range(pb.getNumJoints(bid, physicsClientId=c)):
                if pb.getJointInfo(bid, j, physicsClientId=c)[1].decode() == joint:
                    self._joint_cache[key] = j
                    break
            else:
                raise KeyError(f"{body!r} has no joint {joint!r}")
        return self._joint_cache[key]

    def _set_joints(self, joints: tuple) -> None:
        by_body: dict[str, dict[int, float]] = {}
        for body, joint, value in joints:
            by_body.setdefault(body, {})[self._joint(body, joint)] = float(value)
        for body, values in by_body.items():
            self.world.set_joint_positions(body, values)

    def _joint_state(self, joints: tuple) -> tuple:
        """The current positions of the joints ``joints`` names (to put them back)."""
        c = self.world.client
        out = []
        for body, joint, _ in joints:
            j = self._joint(body, joint)
            out.append((body, joint, pb.getJointState(self.world.body_id(body), j, physicsClientId=c)[0]))
        return tuple(out)

    def _checker(self, sample: ReachSample, q_before: Optional[np.ndarray] = None) -> Any:
        """The state checker for ``sample`` (the world set to it): the hand may touch ``touch``; a
        ``held`` sample keeps ``held_padding_m`` instead of the planning padding; a ``from_contact``
        one lets pairs inside the padding at ``q_before`` stay (not :data:`START_RELAX_M` closer)."""
        pad = self.held_padding_m if sample.held else (self.world.padding_m + SEARCH_EXTRA_PADDING_M if self.strict
                                                          else None)
        allowed = self._allowed(sample.touch, held_object=sample.carried is not None)
        if sample.from_contact and q_before is not None:
            before = self.world.checker(self.robot, allowed, padding_m=pad)
            for p in before.proximities(q_before, before.padding_m):
                if p.distance_m < p.threshold_m:
                    allowed.relaxed[p.key] = p.distance_m - (0.0 if self.strict else START_RELAX_M)
        return self.world.checker(self.robot, allowed, padding_m=pad)

    def _allowed(self, touch: tuple, held_object: bool = False) -> AllowedContacts:
        out = AllowedContacts()
        for name in touch:
            body = self.world.body_id(name)
            for j in self._hand:
                out.pairs.add((("link", j), body, None))
            if held_object:
                out.pairs.add((("held", -1), body, None))
            out.reasons.append(f"hand-{name} (held)")
        return out

    def _enter(self, sample: ReachSample) -> None:
        """The world as ``sample`` needs it: articulated joints, movable objects, the carried object."""
        self._set_joints(sample.joints)
        w = self.world
        if w.attached(self.robot) is not None and (sample.carried is None or w.attached(self.robot) != sample.carried[0]):
            w.detach(self.robot)
        for name, pose in sample.objects:
            w.set_object_pose(name, pose)
        if sample.carried is not None and w.attached(self.robot) is None:
            w.attach(self.robot, sample.carried[0], sample.carried[1])

    # ---- seeds -----------------------------------------------------------------------------------------
    def seeds_for(self, pose: Pose, with_start: bool = True) -> list[np.ndarray]:
        """IK seeds for a first sample: the start configuration (``with_start``), each named
        configuration with the first joint turned toward the target (and as it is), then
        :data:`RANDOM_SEEDS` random ones; each followed by its mirror image (:class:`ArmMirror`: the
        mirror image of the seed the target's own mirror image would get), so that a target and its
        mirror image (a door hinged on the other side) are searched from mirror-image postures."""
        r = self.loaded
        base = self._base_pose()
        p = np.linalg.solve(base, np.append(pose[:3, 3], 1.0))[:3]
        bearing = math.atan2(p[1], p[0])

        def listed(b: float) -> list[np.ndarray]:
            out_ = []
            for q in self._named:
                turned = q.copy()
                turned[0] = b
                out_.append(r.clip_to_limits(turned))
            return out_ + list(self._named) + list(self._random)

        seeds = [self.start] if with_start else []
        if self._mirror is None:
            seeds.extend(listed(bearing))
        else:
            for a, b in zip(listed(bearing), listed(-bearing)):
                seeds.extend((a, self._mirror(b, r.lower, r.upper)))
        out: list[np.ndarray] = []
        for s in seeds:
            if all(np.max(np.abs(s - o)) > 1e-6 for o in out):
                out.append(np.asarray(s, dtype=float))
        return out

    def _base_pose(self) -> Pose:
        return base_frame(self.world, self.robot)

    # ---- checks ----------------------------------------------------------------------------------------
    def _ik(self, pose: Pose, seeds: Sequence[np.ndarray], iterations: int = 6) -> IKSolution:
        self.ik_calls += len(seeds)
        return solve_ik(self.loaded, pose, list(seeds), iterations, threshold_m=IK_THRESHOLD)

    def _within(self, sol: IKSolution) -> bool:
        return sol.position_error_m <= self.position_tolerance_m and sol.orientation_error_rad <= ORIENTATION_TOLERANCE_RAD

    def _limit_margin(self, q: np.ndarray) -> float:
        """The smallest distance of a joint from its limits, as a fraction of its range."""
        r = self.loaded
        return float(np.min(np.minimum(q - r.lower, r.upper - q) / np.maximum(r.upper - r.lower, 1e-9)))

    def _limit_text(self, q: np.ndarray) -> Optional[str]:
        """Why ``q`` is too close to a joint limit (``joint_margin_rad``), or None."""
        if self.joint_margin_rad <= 0:
            return None
        r = self.loaded
        m = np.minimum(q - r.lower, r.upper - q)
        j = int(np.argmin(m))
        if m[j] >= self.joint_margin_rad:
            return None
        return (f"needs {r.arm_joint_names[j]} within {max(m[j], 0.0):.2f} rad of its limit "
                f"(margin {self.joint_margin_rad:g} rad)")

    def _ik_text(self, sol: IKSolution) -> str:
        if sol.position_error_m > self.position_tolerance_m:
            return f"is out of reach: best IK {sol.position_error_m:.3f} m away"
        return f"is out of reach: the hand cannot turn that way (best IK {math.degrees(sol.orientation_error_rad):.0f} deg off)"

    @staticmethod
    def _hit_text(hit: Proximity) -> str:
        return f"is reachable only in collision: {hit.describe()}"

    def check_sample(self, sample: ReachSample, q: np.ndarray) -> Optional[Proximity]:
        """The collision at arm configuration ``q`` (radians) with the world set to ``sample``, or None."""
        self._enter(sample)
        return self._checker(sample).explain(q)

    def _steps_between(self, a: Pose, b: Pose, fine: bool = False) -> list[Pose]:
        """Poses between ``a`` and ``b`` (``b`` included) at most :data:`STEP_M` / :data:`STEP_RAD`
        apart (``fine``: :data:`FINE_STEP_M`, for lines checked state by state): position linear,
        orientation slerped (the straight line the task moves along)."""
        from transforms3d.quaternions import mat2quat, quat2mat, qmult, qinverse, axangle2quat, quat2axangle

        step_m = FINE_STEP_M if fine else STEP_M
        dp = float(np.linalg.norm(b[:3, 3] - a[:3, 3]))
        cos = (float(np.trace(a[:3, :3].T @ b[:3, :3])) - 1.0) / 2.0
        if dp <= step_m and math.acos(max(-1.0, min(1.0, cos))) <= STEP_RAD:
            return [np.array(b, dtype=float)]
        qa, qb = mat2quat(a[:3, :3]), mat2quat(b[:3, :3])
        if np.dot(qa, qb) < 0:
            qb = -qb
        axis, ang = quat2axangle(qmult(qb, qinverse(qa)))
        n = max(1, int(math.ceil(max(dp / step_m, abs(ang) / STEP_RAD) - 1e-9)))
        out = []
        for k in range(1, n + 1):
            f = k / n
            T = np.eye(4)
            T[:3, :3] = quat2mat(qmult(axangle2quat(axis, ang * f), qa)) if abs(ang) > 1e-9 else a[:3, :3]
            T[:3, 3] = a[:3, 3] + f * (b[:3, 3] - a[:3, 3])
            out.append(T)
        out[-1] = np.array(b, dtype=float)
        return out

    def _base_hit(self, sample: ReachSample) -> Optional[str]:
        """What a moved articulated body (a door leaf swinging) hits of the robot's base, or None."""
        if not sample.joints:
            return None
        bodies = {b for b, _, _ in sample.joints}
        return base_overlap(self.world, self.robot, only=bodies)

    def _mechanism_hit(self, sample: ReachSample) -> Optional[SampleResult]:
        """What a door leaf or a drawer, moved to ``sample``'s joint values, overlaps of the rest of
        the scene (robots aside: the arm's own checks see them), as a failure naming both and the
        depth; None when its sweep is clear there. A fixture or object in the way stops the
        mechanism however the arm moves."""
        moved = [(b, j) for b, j, v in sample.joints if abs(v) > 1e-9]
        if not moved:
            return None
        w, c = self.world, self.world.client
        robots = {w.body_id(r) for r in w.robots}
        for name, joint in moved:
            body = w.body_id(name)
            for link in self._moving_links(name, joint):
                for other_name, other in w.bodies.items():
                    if other in robots or other == body or (w._probe is not None and other == w._probe):
                        continue
                    pts = pb.getClosestPoints(body, other, 0.0, linkIndexA=link, physicsClientId=c)
                    if not pts or min(p[8] for p in pts) >= -1e-4:
                        continue
                    d = min(p[8] for p in pts)
                    part = w.link_name(body, link)
                    hit = Proximity(link=f"{part} of {name!r}", body=other_name, body_link="", distance_m=float(d),
                                    threshold_m=0.0)
                    return SampleResult(sample.label, False, collision=hit, blocked=True, reason=(
                        f"is blocked: {part} of {name!r} would hit {other_name!r} there ({-d * 1000:.0f} mm deep): "
                        f"it cannot move that far with {other_name!r} in its way (move {other_name!r} out of its "
                        "sweep)"))
        return None

    def blocked(self, target: ReachTarget) -> Optional[SampleResult]:
        """The first sample of ``target`` at which its door or drawer itself hits the scene
        (:meth:`_mechanism_hit`: every path's samples in order, the joints set there), or None. The
        articulated joints are put back."""
        joints = tuple({(b, j): (b, j, 0.0) for p in target.paths for s in p for b, j, _ in s.joints}.values())
        if not joints:
            return None
        saved = self._joint_state(joints)
        try:
            for path in target.paths:
                for s in path:
                    if s.joints:
                        self._set_joints(s.joints)
                        hit = self._mechanism_hit(s)
                        if hit is not None:
                            return hit
            return None
        finally:
            self._set_joints(saved)

    def _moving_links(self, name: str, joint: str) -> list[int]:
        """The links of body ``name`` that ``joint`` moves (its child and every link below it)."""
        key = (name, joint)
        if key not in self._joint_links:
            w = self.world
            body, c = w.body_id(name), w.client
            n = pb.getNumJoints(body, physicsClientId=c)
            parent = {i: pb.getJointInfo(body, i, physicsClientId=c)[16] for i in range(n)}
            start = next((i for i in range(n)
                          if pb.getJointInfo(body, i, physicsClientId=c)[1].decode() == joint), None)
            out: list[int] = []
            if start is not None:
                out = [start]
                for i in range(n):
                    p = parent[i]
                    while p >= 0 and p not in out:
                        p = parent[p]
                    if p in out and i not in out:
                        out.append(i)
            self._joint_links[key] = [i for i in out if pb.getCollisionShapeData(body, i, physicsClientId=c)]
        return self._joint_links[key]

    def _follow(self, path: tuple, q0: np.ndarray, explain: bool = True) -> tuple[int, list, Optional[SampleResult]]:
        """Follow ``path`` from ``q0`` (a solution of its first sample): ``(samples reached, their
        configurations, the failure or None)``. Between two samples more than :data:`STEP_M` apart
        the TCP line is followed in steps (IK from the previous step). ``explain``: on failure, tell
        "out of reach" from "reachable only in another posture" (more IK)."""
        qs = [q0]
        q = q0
        resume: Optional[tuple[np.ndarray, Pose]] = None   # where the path goes on after a probe
        for k in range(1, len(path)):
            s = path[k]
            prev_pose = path[k - 1].pose
            if s.probe and resume is None:
                resume = (q, prev_pose)
            elif not s.probe and resume is not None:
                q, prev_pose = resume
                resume = None
            self._enter(s)
            hit_base = self._base_hit(s)
            if hit_base is not None:
                return k, qs, SampleResult(s.label, False, q, reason=f"cannot be reached: {hit_base}")
            blocked = self._mechanism_hit(s)
            if blocked is not None:
                blocked.q = q
                return k, qs, blocked
            if s.free:
                # a planned free motion: this configuration only, IK from the one before first
                sol = self._ik(s.pose, [q] + self.seeds_for(s.pose, with_start=False)[:6])
                if not self._within(sol):
                    return k, qs, SampleResult(s.label, False, sol.q, sol.position_error_m, sol.orientation_error_rad,
                                               reason=self._ik_text(sol))
                q = sol.q
                hit = self._checker(s).explain(q)
                if hit is not None:
                    return k, qs, SampleResult(s.label, False, q, sol.position_error_m, sol.orientation_error_rad,
                                               hit, self._hit_text(hit))
                qs.append(q)
                continue
            if s.speed_mps is not None:
                line, fail = self._executed_line(s, q, self._checker(s, q))
                if fail is not None:
                    return k, qs, fail
                q = line[-1]
                limit = self._limit_text(q)
                if limit is not None:
                    return k, qs, SampleResult(s.label, False, q, reason=limit)
                qs.append(q)
                continue
            # the straight lines to and from a contact (approach, back-off) are checked state by state
            line = s.from_contact or (bool(s.touch) and not s.held)
            ck = self._checker(s, q) if line else None
            steps = self._steps_between(prev_pose, s.pose, fine=line)
            for pose in steps:
                sol = self._ik(pose, [q], iterations=4)
                jump = float(np.max(np.abs(sol.q - q)))
                if not self._within(sol) or jump > MAX_JOINT_JUMP_RAD:
                    return k, qs, self._path_failure(s, sol, jump, explain)
                q = sol.q
                if ck is not None:
                    hit = ck.explain(q)
                    if hit is not None:
                        return k, qs, SampleResult(s.label, False, q, sol.position_error_m, sol.orientation_error_rad,
                                                   hit, self._hit_text(hit))
            limit = self._limit_text(q)
            if limit is not None:
                return k, qs, SampleResult(s.label, False, q, sol.position_error_m, sol.orientation_error_rad,
                                           reason=limit)
            if ck is None:
                hit = self._checker(s).explain(q)
                if hit is not None:
                    return k, qs, SampleResult(s.label, False, q, sol.position_error_m, sol.orientation_error_rad,
                                               hit, self._hit_text(hit))
            qs.append(q)
        return len(path), qs, None

    def _executed_line(self, s: ReachSample, q: np.ndarray, ck: Any) -> tuple[np.ndarray, Optional[SampleResult]]:
        """The IK waypoints (n, dof) of the MoveCartesian line from ``q`` to ``s.pose`` as the motion
        computes them (:meth:`~.arm_planner.ArmMotionPlanner.lines`: the same IK waypoints, the
        same redundancy resolutions in the same order, its tolerance): the first one whose every
        waypoint ``ck`` finds clear, or the failure of the first."""
        from .arm_planner import ArmMotionPlanner, MotionPlanningError, MotionRequest

        planner = self._line_planner
        if planner is None:
            planner = self._line_planner = ArmMotionPlanner(self.world, self.robot)
        req = MotionRequest(robot=self.robot, kind="cartesian", start=q, target=s.pose, speed_mps=float(s.speed_mps),
                            position_tolerance_m=self.position_tolerance_m)
        first: Optional[SampleResult] = None
        for line in planner.lines(req, np.asarray(q, dtype=float), s.pose):
            self.ik_calls += 1 if isinstance(line, MotionPlanningError) else len(line[0])
            if isinstance(line, MotionPlanningError):
                first = first or SampleResult(s.label, False, q, reason=f"is out of reach: {line}")
                continue
            qs = line[0]
            for i, qi in enumerate(qs[1:], 1):
                hit = ck.explain(qi)
                if hit is not None:
                    first = first or SampleResult(s.label, False, qi, reason=(
                        f"is reachable only in collision {100 * i / max(len(qs) - 1, 1):.0f}% along the straight "
                        f"line to it: " + self._hit_text(hit).split(": ", 1)[-1]), collision=hit)
                    break
            else:
                return qs, None
        return np.asarray([q]), first

    def _path_failure(self, s: ReachSample, sol: IKSolution, jump: float, explain: bool) -> SampleResult:
        """Why sample ``s`` could not be reached from the sample before it (``sol``: the IK from there)."""
        if not explain:
            return SampleResult(s.label, False, sol.q, sol.position_error_m, sol.orientation_error_rad,
                                reason="is out of reach along the path")
        anywhere = self._ik(s.pose, self.seeds_for(s.pose)[:6], iterations=6)
        if not self._within(anywhere):
            best = anywhere if anywhere.position_error_m < sol.position_error_m else sol
            return SampleResult(s.label, False, best.q, best.position_error_m, best.orientation_error_rad,
                                reason=self._ik_text(best))
        if self._within(sol):
            reason = (f"is out of reach from the pose before it: a joint would jump by {jump:.2f} rad (a joint "
                      "limit or a singularity on the way)")
        else:
            reason = (f"is out of reach along the path: followed from the pose before it, the best IK ends "
                      f"{sol.position_error_m:.3f} m away (it is reachable only with the arm in another posture)")
        return SampleResult(s.label, False, sol.q, sol.position_error_m, sol.orientation_error_rad, reason=reason)

    def approach_start(self, configuration: Optional[str]) -> np.ndarray:
        """The arm configuration a path's approach starts from: the named ``configuration``, else the
        checker's start (radians)."""
        named = self.loaded.model.named_configurations
        if configuration is not None:
            if configuration not in named:
                raise KeyError(f"{self.robot} has no configuration {configuration!r}; it has {sorted(named)}")
            return np.asarray(named[configuration], dtype=float)
        return self.start

    def _check_path(self, path: tuple, approach_from: Optional[str] = None, explain: bool = True,
                    any_posture: bool = False) -> tuple[int, list, Optional[SampleResult]]:
        """Follow ``path`` as the task would (see the module docstring): from the IK solution the
        motion planner takes first (seeded by the approach configuration, then ``ready``) when it is
        clear, else from the first clear one of more seeds (as the planner then does)."""
        first = path[0]
        self._enter(first)
        hit_base = self._base_hit(first)
        if hit_base is not None:
            return 0, [], SampleResult(first.label, False, reason=f"cannot be reached: {hit_base}")
        ck = self._checker(first)
        q_from = self.approach_start(approach_from)
        ready = np.asarray(self.loaded.model.named_configurations.get("ready", q_from), dtype=float)
        sol = self._ik(first.pose, [q_from, ready])
        if not any_posture and self._within(sol) and ck.explain(sol.q) is None:
            # the motion planner takes this solution: the path must work from it
            limit = self._limit_text(sol.q)
            if limit is not None:
                return 0, [], SampleResult(first.label, False, sol.q, sol.position_error_m, sol.orientation_error_rad,
                                           reason=limit)
            reached, qs, fail = self._follow(path, sol.q, explain)
            if fail is None or not explain or (reached < len(path) and path[reached].free):
                # (a free motion's end failed from seeds that do not depend on the posture)
                return reached, qs, fail
            # would another posture have done it? (the task's own approach would not take it)
            for seed in self.seeds_for(first.pose)[:MAX_STARTS + 2]:
                other = self._ik(first.pose, [seed])
                if not self._within(other) or np.max(np.abs(other.q - sol.q)) < 0.05:
                    continue
                self._enter(first)
                if ck.explain(other.q) is not None:
                    continue
                if self._follow(path, other.q, explain=False)[2] is None:
                    start = f"from {approach_from!r}" if approach_from else "from where the arm is"
                    fail.reason += (f" (with the approach started {start}; the arm reaches the whole path from another "
                                    "posture)")
                    break
                self._enter(first)
            return reached, qs, fail
        best_reached, best_qs, best_fail = 0, [], None
        best_ik: IKSolution = sol
        first_hit: Optional[tuple[IKSolution, Proximity]] = None
        if self._within(sol) and not any_posture:
            first_hit = (sol, ck.explain(sol.q))
        if self.strict and not any_posture:
            if first_hit is not None:
                return 0, [], SampleResult(first.label, False, sol.q, sol.position_error_m, sol.orientation_error_rad,
                                           first_hit[1], self._hit_text(first_hit[1]))
            return 0, [], SampleResult(first.label, False, sol.q, sol.position_error_m, sol.orientation_error_rad,
                                       reason=self._ik_text(sol))
        seeds = self.seeds_for(first.pose)
        if any_posture:
            # the arm will be moved to the posture found: seeds that do not depend on where the arm
            # happens to be, so that a base search and the check in the tree find the same one
            named = self.loaded.model.named_configurations
            seeds = ([np.asarray(named[approach_from], dtype=float)] if approach_from in named else []) + \
                self.seeds_for(first.pose, with_start=False)
        # the clear solutions of every seed; with any posture the one farthest from the joint limits
        # first (a comfortable posture follows a path furthest), else in seed order (the planner's)
        clear: list[IKSolution] = []
        for seed in seeds:
            sol = self._ik(first.pose, [seed])
            if sol.position_error_m + 0.05 * sol.orientation_error_rad < \
                    best_ik.position_error_m + 0.05 * best_ik.orientation_error_rad:
                best_ik = sol
            if not self._within(sol) or any(np.max(np.abs(sol.q - c.q)) < 0.05 for c in clear) \
                    or self._limit_text(sol.q) is not None:
                continue
            self._enter(first)
            hit = ck.explain(sol.q)
            if hit is not None:
                first_hit = first_hit or (sol, hit)
                continue
            clear.append(sol)
            if not any_posture and len(clear) >= self.max_starts:
                break
        if any_posture:
            clear = self._distinct_postures(clear)
        for sol in clear[:self.max_starts]:
            self._enter(first)
            reached, qs, fail = self._follow(path, sol.q, explain)
            if fail is None:
                return reached, qs, None
            if best_fail is None or reached > best_reached:
                best_reached, best_qs, best_fail = reached, qs, fail
        if best_fail is not None:
            return best_reached, best_qs, best_fail
        if first_hit is not None:
            sol, hit = first_hit
            return 0, [], SampleResult(first.label, False, sol.q, sol.position_error_m, sol.orientation_error_rad,
                                       hit, self._hit_text(hit))
        return 0, [], SampleResult(first.label, False, best_ik.q, best_ik.position_error_m,
                                   best_ik.orientation_error_rad, reason=self._ik_text(best_ik))

    def _distinct_postures(self, clear: list[IKSolution]) -> list[IKSolution]:
        """``clear`` in the order the starts are followed: the one farthest from the joint limits
        first (a comfortable posture follows a path furthest), then, each time, the farthest from the
        limits of those at least :data:`POSTURE_DISTANCE_RAD` from every one taken (another elbow,
        shoulder or wrist: a 7-joint arm's solutions near each other are one posture moved along its
        self-motion), then the rest. So a door hinged on the right gets the mirror images of the
        postures one hinged on the left gets."""
        rest = sorted(clear, key=lambda c: -self._limit_margin(c.q))
        out: list[IKSolution] = []
        while rest:
            far = next((i for i, c in enumerate(rest)
                        if all(np.linalg.norm(c.q - o.q) >= POSTURE_DISTANCE_RAD for o in out)), None)
            if far is None:
                break
            out.append(rest.pop(far))
        return out + rest

    def sweep_hit(self, targets: Sequence[ReachTarget]) -> Optional[str]:
        """What of the robot's base a moving articulated body hits at the targets' joint positions
        (every fourth sample that sets joints, and the last), as a text, or None. Joints are put back."""
        states = [s.joints for t in targets for p in t.paths for s in p if s.joints]
        if not states:
            return None
        picks = states[::4] + [states[-1]]
        joints = tuple({(b, j): (b, j, 0.0) for st in picks for b, j, _ in st}.values())
        saved = self._joint_state(joints)
        try:
            for st in picks:
                self._set_joints(st)
                hit = base_overlap(self.world, self.robot, only={b for b, _, _ in st})
                if hit is not None:
                    return hit
            return None
        finally:
            self._set_joints(saved)

    def quick(self, target: ReachTarget, wrists: Optional[list] = None, bounds: Optional["WristBounds"] = None,
              base: Optional[Pose] = None) -> bool:
        """A cheap necessary test: some path of ``target`` has its hardest poses (the three with the
        wrist nearest either end of its range, and the last) reachable by IK from two seeds, no
        collision check. False rejects a base pose before the full :meth:`check`."""
        for n, path in enumerate(target.paths):
            idx = {len(path) - 1}
            if wrists is not None and bounds is not None and base is not None and wrists[n] is not None:
                S = base[:3, :3] @ bounds.shoulder_in_base + base[:3, 3]
                d = np.linalg.norm(wrists[n] - S, axis=1)
                m = np.minimum(d - bounds.lo, bounds.hi - d)
                idx |= set(np.argsort(m)[:3].tolist())
            else:
                idx |= {0, len(path) // 2}
            if all(self._roughly(path[i].pose) for i in sorted(idx)):
                return True
        return False

    def _roughly(self, pose: Pose) -> bool:
        """IK from up to five seeds, two refinements each, reaches ``pose`` within 2 cm and 0.2 rad."""
        for seed in self.seeds_for(pose, with_start=False)[:10 if self._mirror is not None else 5]:
            sol = self._ik(pose, [seed], iterations=2)
            if sol.position_error_m <= 0.02 and sol.orientation_error_rad <= 0.2:
                return True
        return False

    def check(self, target: ReachTarget, explain: bool = True) -> TargetResult:
        """Is one of ``target``'s paths reachable from where the robot stands? The articulated
        bodies are put back as they were. ``explain``: a failure says precisely why (more IK)."""
        joints = tuple({(b, j): (b, j, 0.0) for p in target.paths for s in p for b, j, _ in s.joints}.values())
        saved = self._joint_state(joints)
        moved = {n for p in target.paths for s in p for n, _ in s.objects} | \
            {s.carried[0] for p in target.paths for s in p if s.carried is not None}
        saved_objects = {n: self.world.object_pose(n) for n in moved}
        attached = self.world.attached(self.robot)
        attached_T = self.world.attached_transform(self.robot)
        best = TargetResult(target, False)
        try:
            for i, path in enumerate(target.paths):
                if not path:
                    continue
                reached, qs, fail = self._check_path(path, target.approach_from, explain, target.any_posture)
                if fail is None:
                    return TargetResult(target, True, i, reached, None, qs, i + 1)
                score = (reached / len(path), -(fail.position_error_m if math.isfinite(fail.position_error_m) else 9.0))
                if best.failure is None or score > (best.reached / max(best.samples, 1),
                                                    -(best.failure.position_error_m
                                                      if math.isfinite(best.failure.position_error_m) else 9.0)):
                    best = TargetResult(target, False, i, reached, fail, qs)
            best.tried = len(target.paths)
            return best
        finally:
            self._set_joints(saved)
            if moved:
                self.world.detach(self.robot)
                for n, T in saved_objects.items():
                    self.world.set_object_pose(n, T)
                if attached is not None:
                    self.world.attach(self.robot, attached, attached_T)

    def check_all(self, targets: Sequence[ReachTarget], stop_at_first: bool = False) -> list[TargetResult]:
        """:meth:`check` of each target (in order; with ``stop_at_first``, up to the first failure)."""
        out = []
        for t in targets:
            out.append(self.check(t))
            if stop_at_first and not out[-1].ok:
                break
        return out


def search_checker(world: CollisionWorld, robot: str, seed: int = 0, start: Optional[Sequence[float]] = None,
                   position_tolerance_m: float = SEARCH_TOLERANCE_M, held_padding_m: float = SEARCH_HELD_PADDING_M,
                   joint_margin_rad: float = SEARCH_JOINT_MARGIN_RAD) -> ReachChecker:
    """The :class:`ReachChecker` a base search checks each candidate with (its margins, strict,
    :data:`SEARCH_STARTS` postures)."""
    return ReachChecker(world, robot, seed=seed, start=start, position_tolerance_m=position_tolerance_m,
                        held_padding_m=held_padding_m, joint_margin_rad=joint_margin_rad, strict=True,
                        max_starts=SEARCH_STARTS)


def check_for_task(world: CollisionWorld, robot: str, targets: Sequence[ReachTarget],
                   margin_targets: Optional[Sequence[ReachTarget]] = None, seed: int = 0) -> list[TargetResult]:
    """The check a task runs before it moves (``CheckReachability``): each target as
    :meth:`ReachChecker.check` does, except that a target whose arm posture the task takes from the
    check (``any_posture``) is first checked the way a base search checks it (:func:`search_checker`
    on ``margin_targets``, the same targets with the search's margins): when that passes, its posture
    is the one reported (the configurations of the margin path), so a base placed by
    ``base_pose: auto`` is executed from the posture the search found; else the plain check decides.

    Args:
        targets: the task's targets. margin_targets: the same, with margins (same order), or None.

    Returns:
        One :class:`TargetResult` per target of ``targets``.
    """
    plain = ReachChecker(world, robot, seed=seed)
    strict = search_checker(world, robot, seed=seed, start=plain.start) if margin_targets is not None else None
    out = []
    for i, t in enumerate(targets):
        if strict is not None and t.any_posture:
            res = strict.check(margin_targets[i], explain=False)
            if res.ok:
                out.append(TargetResult(t, True, res.path, len(t.paths[res.path]), None, res.configurations,
                                        res.tried))
                continue
        out.append(plain.check(t))
    return out
