"""Reachability before motion: can the robot reach every TCP pose a task needs, and where should it stand?

A task's **targets** (:class:`ReachTarget`) are what the arm must reach before anything moves: the
grasps of the object to pick (any one suffices), a door's lever along the whole opening arc, a
drawer's bar along its pull line. A target is one or more alternative **paths**; a path is a
sequence of :class:`ReachSample` (a TCP pose, the joint positions of the articulated bodies at that
moment, what the hand may touch there), reached in order and continuously, the way the task moves
through them:

- the first sample by inverse kinematics: from the solution the motion planner would take
  (seeded by the approach configuration, then ``ready``), or, when the task moves the arm to the
  posture the check found (``ReachTarget.any_posture``), from up to :data:`MAX_STARTS` distinct
  solutions of fixed seeds (named configurations, turned toward the target and as they are, seeded
  random ones);
- every later one from the previous solution (:func:`~.ik.solve_ik`, in steps of at most
  :data:`STEP_M` / :data:`STEP_RAD` of TCP motion, no joint jumping more than 0.5 rad), as the
  Cartesian and screw motions execute it;
- each solution collision-checked in the :class:`~.world.CollisionWorld` with the door or drawer
  set to the sample's joint positions (the hand may touch the handle it holds; while it holds it,
  the compliant arm may brush the world by :data:`HELD_PADDING_M`; free samples keep the planning
  padding; backing off a contact, every step keeps it or stays as far as it started, as the motion
  planner's lines do), and the robot's base clear of what swings.

:class:`ReachChecker` answers "is every target reachable from where the robot stands?" with a
:class:`TargetResult` per target; a failure names the sample and why, e.g.
``"the door handle at 40 deg of its 60 deg arc is out of reach: best IK 0.060 m away"``.

:func:`find_base` searches base poses on a :class:`MountingSurface` (the floor or a fixture's top)
from which every target is reachable: candidate positions on rings around the targets (0.2 m to the
arm's reach, every 0.05 m and 10 deg), facing the targets (and turned 30 and 60 deg, ranked lower),
ranked by where the targets fall in the arm's workspace (:class:`WristBounds`: the wrist point's
distance from the shoulder inside the arm's range and away from its ends; approaches pointing away
from the base), then checked in that order: the base and the starting arm clear of fixtures, doors,
cabinets and objects (the surface it stands on aside) and of a swinging leaf, a quick IK test of each
target's hardest poses, and the full check with margins (2 mm IK tolerance, no brushing, joints
0.05 rad from their limits, the probes a request adds beyond the motion), each path followed from
:data:`SEARCH_STARTS` distinct arm postures found from IK seeds and their mirror images
(:class:`ArmMirror`: a door hinged on the right is the mirror image of one hinged on the left). Of
the first few bases that pass, the best conditioned (:func:`_quality`: the held motion keeping the
joint axes apart, then :func:`_manipulability`) wins. When none passes, :func:`find_base_relaxing`
repeats the search with fewer margins (:data:`RELAX_STEPS`) and says so. Deterministic: fixed
candidate order, IK seeds from ``seed``. Sources: Zacharias et al., "Capturing robot workspace structure: representing
robot capabilities" (IROS 2007) and Vahrenkamp et al., "Robot placement based on reachability
inversion" (ICRA 2013) for ranking base poses by where the task's poses fall in the arm's workspace;
Yoshikawa, "Manipulability of robotic mechanisms" (IJRR 1985); the check itself is the motion
planner's IK and collision test.

Units: metres, radians (degrees in texts). Poses: (4, 4) homogeneous transforms, world frame.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence

import numpy as np
import pybullet as pb

from ..geometry.poses import Pose
from ..scene.reach_targets import ReachSample, ReachTarget
from .ik import IKSolution, solve_ik
from .world import AllowedContacts, CollisionWorld, Proximity

if TYPE_CHECKING:  # pragma: no cover
    from ..bullet.robots import LoadedRobot

__all__ = ["ReachSample", "ReachTarget", "SampleResult", "TargetResult", "ReachChecker", "MountingSurface",
           "BasePlacement", "WristBounds", "find_base", "wrist_bounds", "base_pose_at", "base_frame", "set_base_frame",
           "base_overlap", "check_for_task", "search_checker", "find_base_relaxing", "RELAX_STEPS", "arm_mirror", "ArmMirror", "POSITION_TOLERANCE_M", "ORIENTATION_TOLERANCE_RAD"]

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
#: what a base search gives up, step by step, when no base passes with its margins
#: (:func:`find_base_relaxing`): ``(what is relaxed, IK position tolerance m, held padding m, joint
#: margin rad, probe beyond the task's motion, candidates checked at most)``; the last step is the
#: check's own tolerances
RELAX_STEPS = (
    ("", SEARCH_TOLERANCE_M, SEARCH_HELD_PADDING_M, SEARCH_JOINT_MARGIN_RAD, True, 120),
    ("reduced margins (no probe beyond the task's motion, 3.5 mm IK tolerance, joints 0.02 rad from "
     "their limits, the held arm may brush the world by 2.5 mm)", 0.0035, -0.0025, 0.02, False, 60),
    ("no margins (the check's own 5 mm IK tolerance, no joint margin, the held arm may brush the world "
     "by 5 mm)", POSITION_TOLERANCE_M, HELD_PADDING_M, 0.0, False, 60),
)
#: two IK solutions closer than this (joint-space distance, radians) are one arm posture (see
#: :meth:`ReachChecker._distinct_postures`)
POSTURE_DISTANCE_RAD = 1.0
#: base yaws tried at each candidate position, degrees from facing the targets' centre (a robot close
#: to a door faces it at an angle, its starting arm clear of the leaf), and what turning away costs
#: in the ranking per 30 deg
YAW_OFFSETS_DEG = (0.0, -30.0, 30.0, -60.0, 60.0)
YAW_COST = 0.15
#: ranking (:func:`_workspace_cost`): the cost of a base beyond a path's first approach (behind the
#: door it must open); the fraction of the wrist range near either end that costs; the horizontal
#: wrist distance from the base axis, as a fraction of the reach, below which the arm folds against
#: its shoulder joint's limit; the weight of an approach (TCP z) not pointing away from the base
#: (per sample, times 1 - cos)
BEHIND_COST = 5.0
WRIST_EDGE = 0.25
WRIST_NEAR = 0.3
APPROACH_COST = 2.0
#: once a base reaches every target, up to this many more are looked for (at most this many more
#: full checks) and the best conditioned one is chosen (:func:`_manipulability`)
QUALITY_SUCCESSES = 3
QUALITY_EXTRA_CHECKS = 10
#: a held path (a lever turned, a door swung, a drawer pulled) is well conditioned when no two
#: joint axes of the arm come closer than this to being one line (the larger of the angle between
#: them, radians, and their distance over :data:`AXIS_DISTANCE_SCALE_M`)
AXIS_SEPARATION_MIN = 0.35
AXIS_DISTANCE_SCALE_M = 0.1
#: IK stops refining below this error (metres, and radians), well inside the tolerances
IK_THRESHOLD = 5e-4


@dataclass
class SampleResult:
    """How one sample went. ``reason`` is empty when ``ok``.

    Attributes:
        label: the sample's label. ok: reached, collision-free.
        q: the arm configuration (radians) found, or the best IK attempt.
        position_error_m, orientation_error_rad: IK error of ``q``.
        collision: the collision at ``q`` when that is why it failed.
        reason: ``"is out of reach: best IK 0.060 m away"`` and the like.
    """

    label: str
    ok: bool
    q: Optional[np.ndarray] = None
    position_error_m: float = float("nan")
    orientation_error_rad: float = float("nan")
    collision: Optional[Proximity] = None
    reason: str = ""


@dataclass
class TargetResult:
    """The check of one :class:`ReachTarget`.

    Attributes:
        target: the target. ok: one of its paths is reachable.
        path: the index of the reachable path (or of the one that got furthest).
        reached: samples of that path reached in order.
        failure: the sample that stopped the furthest path (None when ``ok``).
        configurations: the arm configurations along the reachable path, radians.
        tried: alternative paths tried.
    """

    target: ReachTarget
    ok: bool
    path: int = 0
    reached: int = 0
    failure: Optional[SampleResult] = None
    configurations: list = field(default_factory=list)
    tried: int = 0

    @property
    def samples(self) -> int:
        """Samples in the path that got furthest."""
        return len(self.target.paths[self.path]) if self.target.paths else 0

    def describe(self) -> str:
        """``"the door handle at 40 deg of its 60 deg arc is out of reach: best IK 0.060 m away"``;
        for a target with alternatives: ``"no grasp of 'mug' is reachable (24 tried); the nearest:
        ..."``; ``"reachable"`` when ``ok``."""
        if self.ok:
            return f"{self.target.name} is reachable"
        f = self.failure
        text = f"{f.label} {f.reason}" if f is not None else f"{self.target.name} has nothing to reach"
        if len(self.target.paths) > 1:
            return f"none of the {len(self.target.paths)} ways to reach {self.target.name} works; the nearest: {text}"
        return text


@dataclass(frozen=True)
class MountingSurface:
    """Where a robot base may stand: the floor or the top of a fixture.

    Attributes:
        name: ``"floor"`` or the fixture's name.
        z: height of the surface (the base frame's z), metres.
        region: ``(x_min, x_max, y_min, y_max)`` the base origin must lie in, metres; None: anywhere.
        body: the fixture's name (its contact with the robot base is not a collision), or None.
    """

    name: str
    z: float = 0.0
    region: Optional[tuple] = None
    body: Optional[str] = None

    def contains(self, x: float, y: float) -> bool:
        if self.region is None:
            return True
        x0, x1, y0, y1 = self.region
        return x0 <= x <= x1 and y0 <= y <= y1


@dataclass
class BasePlacement:
    """The outcome of :func:`find_base`.

    Attributes:
        robot: the robot's name. ok: every target is reachable from ``pose``.
        pose: (4, 4) base pose (on success; else the candidate that reached the most, or None).
        surface: the :class:`MountingSurface`.
        results: the target checks at ``pose``.
        failure: when not ``ok``: why (names the target no base reaches).
        candidates: candidate poses checked (IK and collision). time_s: wall time of the search.
        relaxed: empty when the pose passed with the search's full margins; else which margins
            :func:`find_base_relaxing` gave up to find it (:data:`RELAX_STEPS`).
    """

    robot: str
    ok: bool
    pose: Optional[Pose]
    surface: MountingSurface
    results: list = field(default_factory=list)
    failure: str = ""
    candidates: int = 0
    time_s: float = 0.0
    relaxed: str = ""

    @property
    def position(self) -> list[float]:
        return [round(float(v), 4) for v in self.pose[:3, 3]] if self.pose is not None else []

    @property
    def yaw_deg(self) -> float:
        if self.pose is None:
            return float("nan")
        return round(math.degrees(math.atan2(self.pose[1, 0], self.pose[0, 0])), 2) + 0.0

    def base_pose_spec(self) -> dict[str, Any]:
        """The pose as a task file writes it: ``{position: [x, y, z], rpy_deg: [0, 0, yaw]}``."""
        return {"position": self.position, "rpy_deg": [0.0, 0.0, self.yaw_deg]}

    def summary(self) -> dict[str, Any]:
        """Plain values for the run summary."""
        out: dict[str, Any] = {"ok": self.ok, "surface": self.surface.name, "candidates": self.candidates,
                               "search_time_s": round(self.time_s, 3),
                               "targets": [r.target.name for r in self.results]}
        if self.pose is not None:
            out.update(self.base_pose_spec())
        if self.relaxed:
            out["relaxed"] = self.relaxed
        if not self.ok:
            out["failure"] = self.failure
        return out

    def describe(self) -> str:
        """``"panda on the floor at (0.12, -0.30, 0.00) facing 35.0 deg (14 candidates, 0.8 s)"``."""
        where = "nowhere" if self.pose is None else (
            f"at ({', '.join(f'{v:.3f}' for v in self.position)}) facing {self.yaw_deg:.1f} deg")
        on = "on the floor" if self.surface.name == "floor" else f"on {self.surface.name!r}"
        relaxed = f"; with {self.relaxed}" if self.relaxed else ""
        return f"{self.robot} {on} {where} ({self.candidates} candidates, {self.time_s:.1f} s{relaxed})"


def base_frame(world: CollisionWorld, name: str) -> Pose:
    """(4, 4) world pose of body ``name``'s URDF base frame (what ``loadURDF`` and a scene's
    ``base_pose`` place; PyBullet's base position is the base link's centre of mass instead)."""
    c = world.client
    body = world.body_id(name)
    p, q = pb.getBasePositionAndOrientation(body, physicsClientId=c)
    info = pb.getDynamicsInfo(body, -1, physicsClientId=c)
    ip, iq = pb.invertTransform(info[3], info[4])
    p, q = pb.multiplyTransforms(p, q, ip, iq)
    T = np.eye(4)
    T[:3, :3] = np.array(pb.getMatrixFromQuaternion(q)).reshape(3, 3)
    T[:3, 3] = p
    return T


def set_base_frame(world: CollisionWorld, name: str, T: Pose) -> None:
    """Teleport body ``name`` so that its URDF base frame is at ``T`` ((4, 4), world)."""
    from ..geometry.poses import pq_from_pose
    from ..conventions import quat_xyzw_from_wxyz

    c = world.client
    body = world.body_id(name)
    info = pb.getDynamicsInfo(body, -1, physicsClientId=c)
    p, q = pq_from_pose(T)
    p, q = pb.multiplyTransforms(p.tolist(), quat_xyzw_from_wxyz(q), info[3], info[4])
    pb.resetBasePositionAndOrientation(body, p, q, physicsClientId=c)


def placed_base_pose(x: float, y: float, z: float, yaw: float) -> Pose:
    """The base pose :func:`find_base` places a robot at: ``(x, y, z)`` rounded to 0.1 mm, ``yaw``
    (radians) rounded to 0.01 deg, built as a task file's ``{position, rpy_deg}`` is, so that the
    pose printed and written back as ``base_pose`` is exactly this one (the same run)."""
    from ..geometry.poses import pose_from_spec

    return pose_from_spec({"position": [round(float(x), 4), round(float(y), 4), round(float(z), 4)],
                           "rpy_deg": [0.0, 0.0, round(math.degrees(yaw), 2)]})


def base_pose_at(x: float, y: float, z: float, yaw: float) -> Pose:
    """(4, 4) base pose at ``(x, y, z)`` metres turned ``yaw`` radians about world z."""
    c, s = math.cos(yaw), math.sin(yaw)
    T = np.eye(4)
    T[:3, :3] = [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]
    T[:3, 3] = [x, y, z]
    return T


def _fmt(v: Sequence[float]) -> str:
    return "(" + ", ".join(f"{x:.2f}" for x in v) + ")"


# ================================================================================================
# The check
# ================================================================================================
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
        depth = (f"penetrating by {-hit.distance_m * 1000:.0f} mm" if hit.distance_m < 0
                 else f"{hit.distance_m * 1000:.0f} mm away")
        limit = "" if hit.self_collision else f", padding {hit.threshold_m * 1000:.0f} mm"
        return f"is reachable only in collision: {hit.describe()} ({depth}{limit})"

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


# ================================================================================================
# Where to stand
# ================================================================================================
def _fixed_links(world: CollisionWorld, robot: str) -> list[int]:
    moving = world.moving_links(robot)
    body = world.robots[robot].body
    c = world.client
    return [j for j in [-1, *range(pb.getNumJoints(body, physicsClientId=c))]
            if j not in moving and pb.getCollisionShapeData(body, j, physicsClientId=c)]


def base_overlap(world: CollisionWorld, robot: str, ignore: Sequence[str] = (),
                 only: Optional[Any] = None) -> Optional[str]:
    """What the robot's fixed links (its base) overlap within the world's padding, as a text, or None.

    Args:
        ignore: body names whose contact with the base does not count (the surface it stands on).
        only: check only these body names (default: every other body).
    """
    body = world.robots[robot].body
    c = world.client
    skip = {body, *(world.bodies[n] for n in ignore if n in world.bodies)}
    others = world.bodies.values() if only is None else [world.bodies[n] for n in only if n in world.bodies]
    for j in _fixed_links(world, robot):
        for other in others:
            if other in skip or (world._probe is not None and other == world._probe):
                continue
            pts = pb.getClosestPoints(body, other, world.padding_m, linkIndexA=j, physicsClientId=c)
            if pts:
                d = min(p[8] for p in pts)
                return (f"{world.link_name(body, j)} would overlap {world.names.get(other, other)} "
                        f"({d * 1000:.0f} mm, padding {world.padding_m * 1000:.0f} mm)")
    return None


@dataclass(frozen=True)
class ArmMirror:
    """The arm's mirror symmetry about its base's x-z plane: ``q' = signs * q + offsets`` puts every
    arm link where the mirror image (base-frame y negated) of ``q`` puts it, and the TCP in the
    mirror image of its pose (approach z and finger line y mirrored, x = y cross z). A door hinged
    on the right is the mirror image of one hinged on the left, so an IK seed and its mirror image
    make the search treat both alike (:meth:`ReachChecker.seeds_for`). For the Panda: joints 1, 3,
    5 and 7 negated and joint 7 turned a further -90 deg (its hand sits 45 deg about the flange).

    Attributes:
        signs: (n,) +1 or -1 per arm joint. offsets: (n,) radians added after the signs.
    """

    signs: np.ndarray
    offsets: np.ndarray

    def __call__(self, q: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
        """The mirror image of configuration ``q`` (radians), wrapped by 2 pi into the limits where
        that fits, then clipped."""
        m = self.signs * np.asarray(q, dtype=float) + self.offsets
        for k in range(len(m)):
            for turn in (-2 * math.pi, 2 * math.pi):
                if not lower[k] <= m[k] <= upper[k] and lower[k] <= m[k] + turn <= upper[k]:
                    m[k] += turn
        return np.clip(m, lower, upper)


_MIRROR_CACHE: dict[tuple, Optional[ArmMirror]] = {}


def _model_key(r: Any) -> tuple:
    """What a per-model cache (:func:`arm_mirror`, :func:`wrist_bounds`) is keyed by: the model, its
    URDF and its TCP."""
    return (r.model.name, r.model.urdf_path, tuple(r.model.tcp_position), tuple(r.model.tcp_orientation))


def arm_mirror(world: CollisionWorld, robot: str) -> Optional[ArmMirror]:
    """The :class:`ArmMirror` of ``robot``'s model (cached per model), found numerically: the joint
    sign pattern that mirrors every arm link origin and the TCP position over three random
    configurations (1 mm), then the last joint's offset that mirrors the TCP orientation (the same
    within 0.01 rad for all three). None when the arm has no such symmetry."""
    import itertools

    r = world.robots[robot]
    key = _model_key(r)
    if key in _MIRROR_CACHE:
        return _MIRROR_CACHE[key]
    c, body = world.client, r.body
    q0 = r.joint_positions()
    B = base_frame(world, robot)
    Binv = np.linalg.inv(B)
    M = np.diag([1.0, -1.0, 1.0])
    n = len(r.arm_joints)
    lo, hi = r.lower, r.upper
    rng = np.random.default_rng(1)
    # configurations whose mirror image (odd joints negated) stays inside symmetric limits
    mid = np.minimum(np.abs(lo), np.abs(hi)) * 0.8
    qs = [rng.uniform(np.where(mid > 0.05, -mid, lo), np.where(mid > 0.05, mid, hi)) for _ in range(3)]

    def frames(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        r.reset_arm(q)
        pts = []
        for j in r.arm_joints:
            st = pb.getLinkState(body, j, computeForwardKinematics=True, physicsClientId=c)
            pts.append(Binv[:3, :3] @ np.array(st[4]) + Binv[:3, 3])
        T = Binv @ r.tcp_pose()
        pts.append(T[:3, 3])
        return np.array(pts), T[:3, :3]

    out: Optional[ArmMirror] = None
    try:
        ref = [frames(q) for q in qs]
        for signs in itertools.product((1.0, -1.0), repeat=n):
            s = np.array(signs)
            if not all(np.max(np.abs(frames(s * q)[0] - (M @ P.T).T)) < 1e-3 for q, (P, _) in zip(qs, ref)):
                continue
            # the last joint's offset: the TCP turns about that joint's axis (fixed in the TCP frame)
            R1 = frames(s * qs[0])[1]
            dq = np.zeros(n)
            dq[-1] = 0.1
            w = _rotvec(R1.T @ frames(s * qs[0] + dq)[1])
            axis = w / max(np.linalg.norm(w), 1e-12)
            offs = []
            for q, (_, R) in zip(qs, ref):
                e = _rotvec(frames(s * q)[1].T @ (M @ R @ np.diag([-1.0, 1.0, 1.0])))
                offs.append(float(np.dot(e, axis)) if np.linalg.norm(np.cross(e, axis)) < 1e-2 else math.nan)
            if all(math.isfinite(o) and abs(math.remainder(o - offs[0], 2 * math.pi)) < 1e-2 for o in offs):
                offsets = np.zeros(n)
                offsets[-1] = offs[0]
                out = ArmMirror(s, offsets)
                break
        return out
    finally:
        r.reset_arm(q0)
        _MIRROR_CACHE[key] = out


def _rotvec(R: np.ndarray) -> np.ndarray:
    """The rotation vector (axis times angle, radians) of a rotation matrix."""
    from transforms3d.axangles import mat2axangle

    ax, ang = mat2axangle(R, unit_thresh=1e-4)
    return np.asarray(ax, dtype=float) * ang


@dataclass(frozen=True)
class WristBounds:
    """A necessary condition for reaching a TCP pose, from the arm's kinematics: the **wrist point**
    (on the last arm joint's axis where it passes closest to the axis before it: a spherical wrist's
    centre; rigidly placed by the TCP pose) lies between ``lo`` and
    ``hi`` metres from the **shoulder** (the origin of the second arm joint's link, fixed in the base
    frame when it lies on the first joint's axis), over the joint limits (4,096 seeded
    configurations, 2 cm margin). The iiwa's 120 deg elbow, for example, keeps its wrist 0.41 m or
    more from its shoulder.

    Attributes:
        wrist_in_tcp: (3,) the wrist point in the TCP frame, metres.
        shoulder_in_base: (3,) the shoulder in the URDF base frame, metres.
        lo, hi: the distance range, metres.
    """

    wrist_in_tcp: np.ndarray
    shoulder_in_base: np.ndarray
    lo: float
    hi: float

    def wrists(self, poses: np.ndarray) -> np.ndarray:
        """Wrist points (n, 3) of TCP poses (n, 4, 4), world frame."""
        return poses[:, :3, :3] @ self.wrist_in_tcp + poses[:, :3, 3]


_WRIST_CACHE: dict[tuple, Optional[WristBounds]] = {}


def wrist_bounds(world: CollisionWorld, robot: str, samples: int = 4096) -> Optional[WristBounds]:
    """The :class:`WristBounds` of ``robot``'s model (cached per model), or None when its shoulder
    is not on the first joint's axis (then no such filter applies)."""
    r = world.robots[robot]
    key = _model_key(r)
    if key in _WRIST_CACHE:
        return _WRIST_CACHE[key]
    c, body = world.client, r.body
    q0 = r.joint_positions()
    B = base_frame(world, robot)
    Binv = np.linalg.inv(B)
    last, before, shoulder_link = r.arm_joints[-1], r.arm_joints[-2], r.arm_joints[1]

    def axis(j: int) -> tuple[np.ndarray, np.ndarray]:
        st = pb.getLinkState(body, j, computeForwardKinematics=True, physicsClientId=c)
        R = np.array(pb.getMatrixFromQuaternion(st[5])).reshape(3, 3)
        a = np.array(pb.getJointInfo(body, j, physicsClientId=c)[13], dtype=float)
        return np.array(st[4]), R @ (a / np.linalg.norm(a))

    rng = np.random.default_rng(0)
    qs = rng.uniform(r.lower, r.upper, size=(samples, len(r.lower)))
    d, w_tcp, s_base = [], [], []
    try:
        # the wrist point: on the last joint's axis (rigid with the TCP), where it passes closest to
        # the axis before it (a spherical wrist's centre)
        r.reset_arm(q0)
        p7, a7 = axis(last)
        p6, a6 = axis(before)
        n = np.cross(a7, a6)
        if np.linalg.norm(n) > 1e-6:
            t7 = float(np.dot(np.cross(p6 - p7, a6), n) / np.dot(n, n))
        else:
            t7 = 0.0
        T = r.tcp_pose()
        w_in_tcp = T[:3, :3].T @ (p7 + t7 * a7 - T[:3, 3])
        for q in qs:
            pb.resetJointStatesMultiDof(body, list(r.arm_joints), [[float(v)] for v in q], physicsClientId=c)
            s = np.array(pb.getLinkState(body, shoulder_link, computeForwardKinematics=True, physicsClientId=c)[4])
            T = r.tcp_pose()
            w = T[:3, :3] @ w_in_tcp + T[:3, 3]
            p7, a7 = axis(last)
            w_tcp.append(np.linalg.norm(np.cross(w - p7, a7)))   # stays on the last axis
            s_base.append(Binv[:3, :3] @ s + Binv[:3, 3])
            d.append(float(np.linalg.norm(w - s)))
    finally:
        r.reset_arm(q0)
    s_base_a = np.array(s_base)
    out: Optional[WristBounds] = None
    if max(w_tcp) < 1e-4 and np.ptp(s_base_a, axis=0).max() < 1e-4:
        out = WristBounds(w_in_tcp, s_base_a.mean(axis=0), max(0.0, min(d) - 0.02), max(d) + 0.02)
    _WRIST_CACHE[key] = out
    return out


def _workspace_cost(T_base: Pose, targets: Sequence[ReachTarget], wrists: list, bounds: Optional[WristBounds],
                    reach: float) -> float:
    """Heuristic rank of a base pose (lower is better; inf: some target cannot be reached). Each
    sample's wrist point should lie inside :class:`WristBounds`, away from both ends of the range
    (:data:`WRIST_EDGE`), not folded in over the base (:data:`WRIST_NEAR`); its horizontal distance
    from the base axis within the reach; its approach (TCP z) pointing away from the base
    (:data:`APPROACH_COST`, :data:`BEHIND_COST`). A target counts its best alternative."""
    total = 0.0
    S = T_base[:3, :3] @ bounds.shoulder_in_base + T_base[:3, 3] if bounds is not None else None
    p = T_base[:3, 3]
    for t, wr in zip(targets, wrists):
        best = math.inf
        for path, W in zip(t.paths, wr):
            P = np.array([s.pose[:3, 3] for s in path])
            horiz = np.hypot(P[:, 0] - p[0], P[:, 1] - p[1])
            if np.any(horiz > reach):
                continue
            cost = 0.0
            if S is not None:
                d = np.linalg.norm(W - S, axis=1)
                if np.any(d < bounds.lo) or np.any(d > bounds.hi):
                    continue
                m = np.minimum(d - bounds.lo, bounds.hi - d) / (bounds.hi - bounds.lo)
                cost += float(np.sum(np.where(m < WRIST_EDGE, ((WRIST_EDGE - m) / WRIST_EDGE) ** 2, 0.0)))
                # a wrist pulled in over the base folds the arm against its shoulder joint's limit
                hw = np.hypot(W[:, 0] - p[0], W[:, 1] - p[1])
                cost += float(np.sum(np.where(hw < WRIST_NEAR * reach, ((WRIST_NEAR * reach - hw) / (0.1 * reach)) ** 2,
                                              0.0)))
            A = np.array([s.pose[:2, 2] for s in path])
            na = np.hypot(A[:, 0], A[:, 1])
            if na[0] > 0.5 and float(np.dot(A[0], P[0, :2] - p[:2])) < 0.0:
                cost += BEHIND_COST  # the base is beyond the first approach (behind a door it must open)
            D = P[:, :2] - p[:2]
            ok = (na > 0.3) & (horiz > 1e-6)
            if np.any(ok):
                cos = np.sum(A[ok] * D[ok], axis=1) / (na[ok] * horiz[ok])
                cost += float(np.sum(APPROACH_COST * (1.0 - cos)))
            best = min(best, cost / max(len(path), 1))
        if not math.isfinite(best):
            return math.inf
        total += best
    return total


def _axis_separation(world: CollisionWorld, robot: str, results: Sequence[TargetResult]) -> float:
    """How far the arm stays from having two joint axes on one line while the hand holds a handle
    (the ``held`` samples of the reachable paths): the smallest, over those configurations and over
    pairs of arm joints, of the larger of the angle between the two axes (radians) and the distance
    between the two lines over :data:`AXIS_DISTANCE_SCALE_M`. Two collinear axes (the Panda's and the
    iiwa's joints 1 and 3 when joint 2 passes 0) turn two joints into one: the arm's self-motion then
    swings those two joints against each other, and with the hand held by a drawer or a door the
    joint impedance presses it sideways (a 0.25 m drawer pull from a base where joint 2 crosses 0
    peaks at 49 N against 5 N from one where it stays at -0.5 rad and below). inf without held
    samples."""
    r = world.robots[robot]
    c = world.client
    q0 = r.joint_positions()
    worst = math.inf
    info = [pb.getJointInfo(r.body, j, physicsClientId=c)[13] for j in r.arm_joints]
    try:
        for res in results:
            path = res.target.paths[res.path] if res.target.paths else ()
            for q, s in zip(res.configurations, path):
                if not s.held:
                    continue
                r.reset_arm(q)
                pts, axes = [], []
                for j, a in zip(r.arm_joints, info):
                    st = pb.getLinkState(r.body, j, computeForwardKinematics=True, physicsClientId=c)
                    R = np.array(pb.getMatrixFromQuaternion(st[5])).reshape(3, 3)
                    v = R @ np.asarray(a, dtype=float)
                    pts.append(np.array(st[4]))
                    axes.append(v / max(np.linalg.norm(v), 1e-12))
                for i in range(len(axes)):
                    for k in range(i + 1, len(axes)):
                        ang = math.asin(min(1.0, float(np.linalg.norm(np.cross(axes[i], axes[k])))))
                        dist = float(np.linalg.norm(np.cross(pts[k] - pts[i], axes[i])))
                        worst = min(worst, max(ang, dist / AXIS_DISTANCE_SCALE_M))
    finally:
        r.reset_arm(q0)
    return worst


def _quality(world: CollisionWorld, robot: str, results: Sequence[TargetResult]) -> tuple[float, float]:
    """How well a base that reaches every target suits the task, for ranking (larger is better):
    ``(how far the held paths keep the joint axes apart (:func:`_axis_separation`), up to
    :data:`AXIS_SEPARATION_MIN`, beyond which all are alike; the smallest manipulability along the
    paths (:func:`_manipulability`))``."""
    # rounded: bases alike within these steps keep their search order (the workspace ranking)
    return (round(min(_axis_separation(world, robot, results), AXIS_SEPARATION_MIN), 2),
            round(_manipulability(world, robot, results), 3))


def _manipulability(world: CollisionWorld, robot: str, results: Sequence[TargetResult]) -> float:
    """The smallest Yoshikawa manipulability ``sqrt(det(J J^T))`` of the TCP (6 x n Jacobian) over every
    configuration of the reachable paths: low near a singularity (an arm stretched straight, a wrist
    folded), where tracking a door's arc takes large joint motions and forces."""
    r = world.robots[robot]
    c = world.client
    arm_cols = [r.movable_joints.index(j) for j in r.arm_joints]
    q0 = r.joint_positions()
    fingers = [pb.getJointState(r.body, j, physicsClientId=c)[0] for j in r.movable_joints if j not in r.arm_joints]
    local = r.tcp_in_link[:3, 3].tolist()
    worst = math.inf
    try:
        for res in results:
            for q in res.configurations:
                r.reset_arm(q)
                full, k = [], 0
                it = iter(fingers)
                for j in r.movable_joints:
                    full.append(float(q[r.arm_joints.index(j)]) if j in r.arm_joints else float(next(it)))
                zero = [0.0] * len(full)
                lin, ang = pb.calculateJacobian(r.body, r.tcp_link, local, full, zero, zero, physicsClientId=c)
                J = np.vstack([np.array(lin)[:, arm_cols], np.array(ang)[:, arm_cols]])
                worst = min(worst, math.sqrt(max(float(np.linalg.det(J @ J.T)), 0.0)))
    finally:
        r.reset_arm(q0)
    return worst if math.isfinite(worst) else 0.0


def _ring_points(centre: np.ndarray, reach: float, surface: MountingSurface) -> list[tuple[float, float]]:
    """The candidate base positions of :func:`find_base`: rings around ``centre``, 0.2 m to the reach
    every 0.05 m, every 10 deg, on ``surface``."""
    out = []
    for rho in np.arange(0.2, reach + 1e-9, 0.05):
        for k in range(36):
            phi = math.radians(10.0 * k)
            x, y = centre[0] + rho * math.cos(phi), centre[1] + rho * math.sin(phi)
            if surface.contains(x, y):
                out.append((float(x), float(y)))
    return out


def _reach_excess(T_base: Pose, target: ReachTarget, wrists: list, bounds: Optional[WristBounds],
                  reach: float) -> float:
    """How far (m) the best path of ``target`` lies beyond the arm's workspace from ``T_base`` at
    worst along it (0: every sample within the wrist bounds and the horizontal reach)."""
    S = T_base[:3, :3] @ bounds.shoulder_in_base + T_base[:3, 3] if bounds is not None else None
    p = T_base[:3, 3]
    best = math.inf
    for path, W in zip(target.paths, wrists):
        P = np.array([s.pose[:3, 3] for s in path])
        ex = np.maximum(np.hypot(P[:, 0] - p[0], P[:, 1] - p[1]) - reach, 0.0)
        if S is not None:
            d = np.linalg.norm(W - S, axis=1)
            ex = np.maximum(ex, np.maximum(d - bounds.hi, bounds.lo - d))
        best = min(best, float(np.max(np.maximum(ex, 0.0))))
    return best


def find_base(world: CollisionWorld, robot: str, targets: Sequence[ReachTarget], surface: MountingSurface,
              seed: int = 0, start: Optional[Sequence[float]] = None, max_candidates: int = 60,
              time_budget_s: float = 60.0, restore: bool = True, position_tolerance_m: float = SEARCH_TOLERANCE_M,
              held_padding_m: float = SEARCH_HELD_PADDING_M, joint_margin_rad: float = SEARCH_JOINT_MARGIN_RAD,
              progress: Optional[Callable[[int, str], None]] = None) -> BasePlacement:
    """Search a base pose on ``surface`` from which every target is reachable (see the module docs).

    Args:
        world: the collision world; ``robot``'s base is moved while searching (put back when
            ``restore``, else left at the pose found).
        targets: what must be reachable (:class:`ReachTarget`).
        surface: where the base may stand.
        seed: seeds the IK seeds (the search is deterministic for a given seed).
        start: the arm configuration the task starts from (default: the arm's now).
        max_candidates, time_budget_s: stop after this many IK-checked candidates or this much wall time.
        position_tolerance_m: IK position error accepted at a sample (less than the check's 5 mm,
            so that the pose found works with a margin).
        progress: ``progress(candidates, text)`` after each candidate checked.

    Returns:
        :class:`BasePlacement`: ``ok`` with the pose found, or not ``ok`` with ``failure`` naming the
        target that no candidate reached (and the candidate that reached the most).
    """
    t0 = time.perf_counter()
    r = world.robots[robot]
    c = world.client
    body = r.body
    p_saved, q_saved = pb.getBasePositionAndOrientation(body, physicsClientId=c)
    arm_saved = r.joint_positions()
    q_start = np.asarray(start if start is not None else arm_saved, dtype=float)
    reach = float(getattr(r.model, "reach_m", 0.0) or 0.9)
    targets = [t for t in targets if t.paths]
    ignore = [surface.body] if surface.body else []
    if not targets:
        return BasePlacement(robot, False, None, surface, failure="nothing to reach: the task names no target")
    # the targets' centre: each target weighs the same (a pick with 24 grasps as much as a door)
    centre = np.mean([t.positions().mean(axis=0) for t in targets], axis=0)
    bounds = wrist_bounds(world, robot)
    wrists = [[bounds.wrists(np.array([s.pose for s in path])) if bounds is not None else None for path in t.paths]
              for t in targets]
    cands = []
    considered = 0
    for rho in np.arange(0.2, reach + 1e-9, 0.05):
        for k in range(36):
            phi = math.radians(10.0 * k)
            x, y = centre[0] + rho * math.cos(phi), centre[1] + rho * math.sin(phi)
            if not surface.contains(x, y):
                continue
            considered += 1
            p = np.array([x, y, surface.z])
            facing = math.atan2(centre[1] - y, centre[0] - x)
            # (the cost does not depend on the yaw: the shoulder is on the base's vertical axis)
            cost = _workspace_cost(base_pose_at(x, y, surface.z, facing), targets, wrists, bounds, reach)
            if not math.isfinite(cost):
                continue
            for j, dyaw in enumerate(YAW_OFFSETS_DEG):
                cands.append((round(cost + YAW_COST * abs(dyaw) / 30.0, 9), round(float(rho), 3), k * 10 + j, p,
                              facing + math.radians(dyaw)))
    cands.sort(key=lambda e: e[:3])
    # the arm must be clear where it starts and in every configuration a target is approached from
    named = r.model.named_configurations
    start_configs = [q_start] + [np.asarray(named[c_], dtype=float) for c_ in
                                 sorted({t.approach_from for t in targets if t.approach_from in named})]
    best: Optional[tuple] = None   # (ok, targets reached, samples reached, pose, results)
    order = list(range(len(targets)))
    checked = screened = 0
    hardest: dict[int, int] = {}
    explained: list = []
    overlap: list[str] = []        # why candidates within reach were not clear (first few)
    found, first_found = 0, None
    quick_failed: dict[int, int] = {}
    try:
        for cost, rho, k, p, yaw in cands:
            if checked >= max_candidates or screened >= 8 * max_candidates or time.perf_counter() - t0 > time_budget_s:
                break
            T = placed_base_pose(p[0], p[1], p[2], yaw)
            set_base_frame(world, robot, T)
            world.set_robot_state(robot, q_start)
            hit_base = base_overlap(world, robot, ignore)
            if hit_base is not None:
                overlap.append(hit_base)
                continue
            free = world.checker(robot)
            hit_arm = next((h for h in (free.explain(q) for q in start_configs) if h is not None), None)
            if hit_arm is not None:
                overlap.append(f"the arm where it starts: {hit_arm.describe()}")
                continue
            ck = search_checker(world, robot, seed=seed, start=q_start, position_tolerance_m=position_tolerance_m,
                                held_padding_m=held_padding_m, joint_margin_rad=joint_margin_rad)
            # cheap first: the base clear of what swings (a door leaf), each target's hardest poses by IK
            hit_sweep = ck.sweep_hit(targets)
            if hit_sweep is not None:
                overlap.append(hit_sweep)
                continue
            screened += 1
            missed = next((i for i in order if not ck.quick(targets[i], wrists[i], bounds, T)), None)
            if missed is not None:
                quick_failed[missed] = quick_failed.get(missed, 0) + 1
                continue
            checked += 1
            results: list[Optional[TargetResult]] = [None] * len(targets)
            ok = True
            for i in order:
                res = ck.check(targets[i], explain=False)
                results[i] = res
                if not res.ok:
                    ok = False
                    hardest[i] = hardest.get(i, 0) + 1
                    break
            world.set_robot_state(robot, q_start)
            done = [x for x in results if x is not None]
            n_ok = sum(x.ok for x in done)
            # among bases that reach everything the best conditioned wins (the fewest samples
            # reached decides between the others)
            quality = _quality(world, robot, done) if ok else float(sum(x.reached for x in done))
            if best is None or (ok, n_ok, quality) > best[:3]:
                best = (ok, n_ok, quality, T, done)
            if progress is not None:
                progress(checked, f"{checked} candidates checked")
            if ok:
                # only a well-conditioned base counts toward the few compared (an ill-conditioned one
                # is kept as the fallback while the search goes on)
                found += 1 if quality[0] >= AXIS_SEPARATION_MIN else 0
                if first_found is None:
                    first_found = checked
            if first_found is not None and (found >= QUALITY_SUCCESSES or checked - first_found >= QUALITY_EXTRA_CHECKS):
                break
            # the target that fails most often is checked first at the next candidate
            order.sort(key=lambda i: -hardest.get(i, 0))
        if best is not None and not best[0]:
            # say precisely why at the best candidate
            set_base_frame(world, robot, best[3])
            world.set_robot_state(robot, q_start)
            explained = ReachChecker(world, robot, seed=seed, start=q_start, position_tolerance_m=position_tolerance_m,
                                     held_padding_m=held_padding_m, joint_margin_rad=joint_margin_rad,
                                     strict=True).check_all(targets)
            world.set_robot_state(robot, q_start)
    finally:
        if restore or best is None or not best[0]:
            world.set_base_pq(robot, p_saved, q_saved)
            world.set_robot_state(robot, arm_saved)
        else:
            set_base_frame(world, robot, best[3])
            world.set_robot_state(robot, arm_saved)
    dt = time.perf_counter() - t0
    if best is not None and best[0]:
        return BasePlacement(robot, True, best[3], surface, best[4], "", checked, dt)
    where = "on the floor" if surface.name == "floor" else f"on {surface.name!r}"
    if best is None:
        if not cands:
            # name the target out of reach from every position: the one that misses by the most at best
            miss = []
            for t, wr in zip(targets, wrists):
                m = min(_reach_excess(base_pose_at(x, y, surface.z, 0.0), t, wr, bounds, reach)
                        for x, y in _ring_points(centre, reach, surface))
                miss.append(m)
            i = int(np.argmax(miss))
            if miss[i] > 0:
                reason = (f"no base position {where} reaches {targets[i].name}: from the best of {considered} "
                          f"positions it stays {miss[i]:.2f} m beyond what the arm can reach")
            else:
                reason = (f"no base position {where} has every target within reach at once "
                          f"({', '.join(t.name for t in targets)}; {considered} positions considered)")
        elif screened == 0:
            reason = (f"every base position {where} within reach of the targets is taken: {overlap[0]}"
                      + (f" ({len(overlap)} positions tried)" if len(overlap) > 1 else ""))
        else:
            i = max(quick_failed, key=lambda k_: quick_failed[k_])
            reason = (f"no base position {where} reaches {targets[i].name}: at {screened} clear positions within "
                      f"reach, inverse kinematics misses its hardest poses")
        return BasePlacement(robot, False, None, surface, [], reason, checked, dt)
    # the target that no candidate reached: the one the best candidate failed on
    failed = next((x for x in explained if not x.ok), None) or next(x for x in best[4] if not x.ok)
    reason = (f"no base position {where} reaches {failed.target.name} ({checked} candidates checked); "
              f"from the best one, at {_fmt(best[3][:3, 3])}, {failed.describe()}")
    return BasePlacement(robot, False, best[3], surface, explained or best[4], reason, checked, dt)


def find_base_relaxing(world: CollisionWorld, robot: str, targets: Callable[[bool], Sequence[ReachTarget]],
                       surface: MountingSurface, seed: int = 0, **kwargs: Any) -> BasePlacement:
    """:func:`find_base` with the search's margins, relaxed in steps (:data:`RELAX_STEPS`) when no
    base passes with them: a base found with fewer margins is better than none, and says which it
    gave up (:attr:`BasePlacement.relaxed`, in the printed pose and the summary). A search that found
    no candidate within the arm's reach at all is not repeated (margins do not change that).

    Args:
        targets: ``targets(probe)``: the task's targets, probed beyond the motion (the request's
            ``with_margin``) when ``probe``.
        kwargs: passed to :func:`find_base` (``restore``, ``max_candidates``, ``progress``, ...).

    Returns:
        The first step's :class:`BasePlacement` that is ``ok``; else the last step's (its failure
        says the margins were relaxed), candidates and time summed over the steps.
    """
    t0 = time.perf_counter()
    checked = steps = 0
    last: Optional[BasePlacement] = None
    for what, tol, held, margin, probe, count in RELAX_STEPS:
        steps += 1
        last = find_base(world, robot, targets(probe), surface, seed=seed, position_tolerance_m=tol,
                         held_padding_m=held, joint_margin_rad=margin, **{"max_candidates": count, **kwargs})
        checked += last.candidates
        if last.ok:
            last.relaxed = what
            break
        if last.candidates == 0:
            break
    assert last is not None
    last.candidates = checked
    last.time_s = time.perf_counter() - t0
    if not last.ok and steps > 1:
        last.failure += f" (with the search's margins relaxed in {steps - 1} step{'s' if steps > 2 else ''})"
    return last
