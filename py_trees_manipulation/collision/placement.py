"""Places that land on a free support (issue 32 item 2): is there room for an object at a place pose?

:func:`check_place` puts the object's copy in the collision world at the place pose and asks, as a
planner asks of a place pose (MoveIt Task Constructor's ``GeneratePlacePose``; HPP's placement
constraint: the object's face on a contact surface, the object in no collision):

- **a support**: a vertical ray from just above the object's bottom, under its centre of mass,
  meets a body (not a robot) whose surface is at most :data:`SUPPORT_GAP_M` below the object's
  lowest point (the force-guarded descent of a place goes 5 mm further than the surface);
- **room**: the object at the place keeps :data:`CLEARANCE_M` from every other body but its
  support and the robots (the hand holding it), and is no deeper than ``start_penetration_m``
  in its support.

On failure, :class:`PlaceCheck` names what is in the way (with the distance) or that nothing supports
the object, and the nearest free spot on the same support (rings 2 cm apart around the place, at
its height and orientation): the fix. Room for the object is not room for the hand that sets it
down: given the whole-task test (``accept``: ``ptm validate --plan`` with the place moved there,
:func:`py_trees_manipulation.trees.plan_check.place_accept`), a free spot is offered only if the
task passes from it (the grasp that can place it there, the approach, the carry with the object
attached, the lower, the release and the retreat, all collision-checked), as a base suggestion is
(:func:`~.base_search.find_base`'s ``accept``). The candidates are a grid fixed by the place as
written (rings around it), so the same scene gives the same spot. The world is left as it was found.
"""

from __future__ import annotations

from ..bullet import _quiet_import  # noqa: F401  (first: pybullet's import banner)

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np
import pybullet as pb

from ..geometry.poses import Pose
from .work import SearchBudget

#: the support's surface may lie this far below the object's lowest point at the place (m)
SUPPORT_GAP_M = 0.02
#: the object at the place keeps this much from every body but its support and the robots (m)
CLEARANCE_M = 0.002
#: the support may be this far inside the object at the place (m; the scene's start_penetration_m)
PENETRATION_M = 0.003
#: the worst case over a declared pose noise: yaws this far apart at most (deg), at most this many
#: each side of the written yaw (a wider noise is sampled more coarsely); shifts at the corners of the
#: position noise's square (the overhang past a straight or convex edge is largest at a corner)
NOISE_YAW_STEP_DEG, NOISE_YAW_STEPS = 1.0, 10
#: the search for a free spot: rings this far apart, out to this radius (m)
RING_STEP_M, SEARCH_RADIUS_M = 0.02, 0.6
#: with a whole-task test (``accept``), at most this many free spots are tested, spending at most
#: this much work (units of :func:`~.work.work_units`: IK solves plus arm states checked, the tests'
#: own included): counted, not timed, so the same scene suggests the same spot on any machine and
#: under any load (a 20 s wall-clock budget stopped a loaded machine's search sooner: another spot
#: suggested). Each test is a dry run of the task: ~1400 units for examples/pick_and_place.yaml's
#: mug (0.3-2 s), so about 40 tests, ~20 s on a quiet machine
ACCEPT_MAX_TESTS, ACCEPT_BUDGET = 150, 60000


@dataclass
class PlaceCheck:
    """The verdict on one place pose.

    Attributes:
        ok: the object fits there, on a support.
        support: the body that would carry it ("" when none).
        reason: why not, in words ("" when ok).
        blocker: the body in the way ("" when none or unsupported).
        suggestion: the nearest free place position on the same support (world x, y, z, m), or None;
            with a whole-task test, the nearest from which the task passes.
        refused: the free spots nearer than ``suggestion`` (or all tested, when none passed) that the
            whole-task test refused: ``(position, why)``, nearest first.
        tested: whether the suggestion was whole-task tested (an ``accept`` was given).
        stopped: why the search for a spot that passes stopped early ("" when it did not).
        fix: how to apply the suggestion (``--set 'parameters.place_position=[...]'``), "" when not known.
        worst: the pose of the declared pose noise at which the place as given fails (it stands
            on its support with room as given), None when none does or none was declared.
    """

    ok: bool
    support: str = ""
    reason: str = ""
    blocker: str = ""
    suggestion: Optional[tuple[float, float, float]] = None
    refused: list = field(default_factory=list)
    tested: bool = False
    stopped: str = ""
    fix: str = ""
    worst: Optional["NoiseMiss"] = None

    def message(self, obj: str, position: Any) -> str:
        """``"the place [0.450, 0.200, 0.629] of 'mug' is taken: ... ; the nearest free spot on 'table' is ..."``."""
        p = np.asarray(position, dtype=float)
        text = f"the place {_xyz(p)} of {obj!r} {self.reason}"
        if self.suggestion is not None:
            text += (f"; the nearest free spot on {self.support or 'a support'!r} is {_xyz(self.suggestion)} "
                     f"({float(np.linalg.norm(np.asarray(self.suggestion) - p)):.3f} m away)"
                     + (" and the whole task passes from it (ptm validate --plan)" if self.tested else "")
                     + ": place it there" + (f" with {self.fix}" if self.fix else ""))
            if self.refused:
                spot, why = self.refused[0]
                n = len(self.refused)
                text += (f" ({n} nearer spot{'s have' if n > 1 else ' has'} room for {obj!r} but not for the task; "
                         f"the nearest, {_xyz(spot)}: {_short(why)})")
        elif self.refused:
            spot, why = self.refused[0]
            text += (f"; {len(self.refused)} free spot{'s' if len(self.refused) > 1 else ''} near it with room for "
                     f"the object {'were' if len(self.refused) > 1 else 'was'} tested and the whole task fails from "
                     f"each (the nearest, {_xyz(spot)}: {_short(why)})"
                     + (f"; {self.stopped}" if self.stopped else "") + ": move what is in the way, or choose a place")
        elif not self.ok:
            text += ("; no free spot within 0.6 m of it on the same support" if self.support
                     else "; no free spot within 0.6 m of it at this height")
        return text


def _short(why: str, limit: int = 240) -> str:
    """A whole-task test's reason, shortened for a refusal's parenthesis (the file's location kept)."""
    why = " ".join(str(why).split())
    return why if len(why) <= limit else why[:limit - 3].rstrip() + "..."


def _xyz(p: Any) -> str:
    return "[" + ", ".join(f"{round(float(v), 3) + 0.0:.3f}" for v in p) + "]"


def _aabb(client: int, body: int) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = pb.getAABB(body, -1, physicsClientId=client)
    lo, hi = np.asarray(lo), np.asarray(hi)
    for link in range(pb.getNumJoints(body, physicsClientId=client)):
        a, b = pb.getAABB(body, link, physicsClientId=client)
        lo, hi = np.minimum(lo, a), np.maximum(hi, b)
    return lo, hi


class _Probe:
    """The object's copy moved around in the world; its pose put back at the end."""

    def __init__(self, world: Any, obj: str):
        self.world, self.obj = world, obj
        self.c = world.client
        self.body = world.bodies[obj]
        self.pose0 = pb.getBasePositionAndOrientation(self.body, physicsClientId=self.c)
        self.robots = {world.bodies[r] for r in world.robots if r in world.bodies}
        self.others = [b for n, b in world.bodies.items() if b != self.body and b not in self.robots]
        #: the body under the object's centre at the last :meth:`support` (-1: none), for an overhang's message
        self.centre_body = -1
        #: the declared pose noise, body -> (position_m, yaw_deg): the held object's and its support's
        #: (:meth:`worst`); empty: the pose as given is the only one tested
        self.noise: dict[int, tuple[float, float]] = {}

    def restore(self) -> None:
        pb.resetBasePositionAndOrientation(self.body, *self.pose0, physicsClientId=self.c)

    def at(self, position: np.ndarray, orn: Any) -> None:
        pb.resetBasePositionAndOrientation(self.body, position.tolist(), orn, physicsClientId=self.c)

    def support(self, position: np.ndarray, orn: Any) -> tuple[int, float]:
        """(the body under the object's centre, -1 for none; how far its surface is below the
        object's lowest point, m, negative: above it). One body under the whole footprint gives its
        gap however large (a place too high); parts of the footprint over nothing, or over another
        body farther than the gap, give -1 (an overhang). A point probe at the object's lowest height
        under its centre finds the nearest surface straight below it (closest points, which the
        world's collision filter masks do not hide, as they would a ray)."""
        self.at(position, orn)
        lo, hi = _aabb(self.c, self.body)
        bottom = float(lo[2])
        # under the centre, and under the middle of each side of the footprint (half way out)
        half = 0.25 * (hi[:2] - lo[:2])
        points = [(float(position[0]) + dx, float(position[1]) + dy)
                  for dx, dy in ((0.0, 0.0), (half[0], 0.0), (-half[0], 0.0), (0.0, half[1]), (0.0, -half[1]))]
        probe = getattr(self.world, "_place_probe", None)
        if probe is None:
            col = pb.createCollisionShape(pb.GEOM_SPHERE, radius=1e-4, physicsClientId=self.c)
            probe = pb.createMultiBody(0.0, col, -1, [0, 0, -100], physicsClientId=self.c)
            pb.setCollisionFilterGroupMask(probe, -1, 0, 0, physicsClientId=self.c)
            self.world._place_probe = probe
        self.at(position + np.array([0.0, 0.0, 100.0]), orn)   # out of the way of the probe
        found: list[tuple[int, float]] = []
        try:
            for x, y in points:
                best, best_gap = -1, math.inf
                pb.resetBasePositionAndOrientation(probe, [x, y, bottom], [0, 0, 0, 1], physicsClientId=self.c)
                for b in self.others:
                    for pt in pb.getClosestPoints(probe, b, 1.0, physicsClientId=self.c):
                        q = pt[6]   # the nearest point on the other body
                        if pt[8] < 0:                 # the probe is inside it: its surface is above the bottom
                            gap = -self._depth_below_top(probe, b, x, y, bottom)
                        elif math.hypot(q[0] - x, q[1] - y) <= 0.002 and q[2] <= bottom:
                            gap = bottom - q[2]
                        else:
                            continue
                        if abs(gap) < abs(best_gap):
                            best, best_gap = b, gap
                found.append((best, best_gap))
        finally:
            pb.resetBasePositionAndOrientation(probe, [0, 0, -100], [0, 0, 0, 1], physicsClientId=self.c)
        best, best_gap = found[0]
        self.centre_body = best
        bodies, gaps = {b for b, _ in found}, [g for _, g in found]
        if best >= 0 and len(bodies) == 1 and max(gaps) - min(gaps) <= SUPPORT_GAP_M:
            return best, min(gaps)   # one surface under all of it (too high when the gap is large)
        for b, g in found[1:]:   # every point of the footprint on a support within the gap
            if b < 0 or g > SUPPORT_GAP_M:
                return -1, math.inf
        return best, best_gap

    def _depth_below_top(self, probe: int, body: int, x: float, y: float, z: float) -> float:
        """How far below ``body``'s surface straight above it the point (x, y, z) lies, m (the point
        is inside the body): found by bisection up to the body's box top, to 0.1 mm. The nearest
        surface of a body the point is inside may be a side (a place 6 cm into a cereal box standing
        on the table is 0.1 mm from its bottom face and 28 cm below its top): measured vertically,
        a body the object stands inside is never taken for its support over the table under both."""
        lo, hi = z, float(_aabb(self.c, body)[1][2]) + 1e-3
        while hi - lo > 1e-4:
            mid = 0.5 * (lo + hi)
            pb.resetBasePositionAndOrientation(probe, [x, y, mid], [0, 0, 0, 1], physicsClientId=self.c)
            if any(pt[8] < 0 for pt in pb.getClosestPoints(probe, body, 0.0, physicsClientId=self.c)):
                lo = mid
            else:
                hi = mid
        pb.resetBasePositionAndOrientation(probe, [x, y, z], [0, 0, 0, 1], physicsClientId=self.c)
        return hi - z

    def bottom_offset(self, position: np.ndarray, orn: Any) -> float:
        """The object's lowest point below ``position`` (its base, as placed), m (>= 0 when the
        frame is at or above the base)."""
        self.at(position, orn)
        return float(_aabb(self.c, self.body)[0][2]) - float(position[2])

    def over(self, position: np.ndarray, orn: Any) -> tuple[int, float]:
        """(the body straight above the object's base at ``position`` or around it, -1 for none; the
        height of that body's top there, world z, m): a place given under a table top or inside a
        body. The same point probe as :meth:`support`, at the middle of the object's base."""
        self.at(position, orn)
        top = float(_aabb(self.c, self.body)[0][2])   # from the object's base up
        probe = getattr(self.world, "_place_probe", None)
        if probe is None:
            return -1, math.inf
        x, y = float(position[0]), float(position[1])
        self.at(position + np.array([0.0, 0.0, 100.0]), orn)
        best, best_d = -1, math.inf
        try:
            pb.resetBasePositionAndOrientation(probe, [x, y, top], [0, 0, 0, 1], physicsClientId=self.c)
            for b in self.others:
                for pt in pb.getClosestPoints(probe, b, 1.0, physicsClientId=self.c):
                    q = pt[6]
                    d = 0.0 if pt[8] < 0 else (q[2] - top if math.hypot(q[0] - x, q[1] - y) <= 0.002 and q[2] >= top
                                               else math.inf)
                    if d < best_d:
                        best, best_d = b, d
            if best < 0:
                return -1, math.inf
            z = top + best_d + 1e-4   # just inside it
            return best, z + self._depth_below_top(probe, best, x, y, z)
        finally:
            pb.resetBasePositionAndOrientation(probe, [0, 0, -100], [0, 0, 0, 1], physicsClientId=self.c)

    def in_the_way(self, position: np.ndarray, orn: Any, support: int) -> tuple[Optional[int], float]:
        """(the body nearest inside its clearance, its distance m) or (None, inf)."""
        self.at(position, orn)
        worst, worst_d = None, math.inf
        for b in self.others:
            limit = -PENETRATION_M if b == support else CLEARANCE_M
            pts = pb.getClosestPoints(self.body, b, limit, physicsClientId=self.c)
            if pts:
                d = min(p[8] for p in pts)
                if d < limit and d < worst_d:
                    worst, worst_d = b, d
        return worst, worst_d

    def free(self, position: np.ndarray, orn: Any, support: Optional[int]) -> bool:
        body, gap = self.support(position, orn)
        if body < 0 or gap > SUPPORT_GAP_M or (support is not None and body != support):
            return False
        return self.in_the_way(position, orn, body)[0] is None and self.worst(position, orn, body) is None

    def draws(self, support: int) -> list[tuple[float, float, float, float]]:
        """The poses of the declared noise the worst case is taken over, (held object's yaw, deg;
        shift x, y, m; the support's yaw, deg), the pose as given first: the held object's yaw at
        most :data:`NOISE_YAW_STEP_DEG` apart over ``[-yaw_deg, yaw_deg]`` (the noise of
        :meth:`~py_trees_manipulation.sim.loading.SimWorld._noisy_pose`: about world z, through its
        frame's origin), times the corners of the square the two position noises together span (the
        object's shift less the support's), times the support's own yaw at its two ends."""
        p_obj, y_obj = self.noise.get(self.body, (0.0, 0.0))
        p_sup, y_sup = self.noise.get(support, (0.0, 0.0))
        k = min(NOISE_YAW_STEPS, int(math.ceil(y_obj / NOISE_YAW_STEP_DEG - 1e-9))) if y_obj > 0 else 0
        yaws = [0.0] + [y_obj * i / k for i in range(-k, k + 1) if i != 0] if k else [0.0]
        p = p_obj + p_sup
        shifts = [(0.0, 0.0)] + ([(sx * p, sy * p) for sx in (1.0, -1.0) for sy in (1.0, -1.0)] if p > 0 else [])
        turns = [0.0] + ([y_sup, -y_sup] if y_sup > 0 else [])
        return [(y, dx, dy, t) for t in turns for y in yaws for dx, dy in shifts]

    def worst(self, position: np.ndarray, orn: Any, support: int,
              measure: bool = False) -> Optional["NoiseMiss"]:
        """None when the object stands on ``support`` with room at every pose of the declared noise
        (:meth:`draws`), else the pose where it does not (with ``measure``: of those where it stands
        only partly on it, the one it reaches farthest past the edge, :meth:`overhang`; else the
        first found). No noise declared for the object or ``support``: None (the pose as given is
        :meth:`free`'s own test)."""
        if self.body not in self.noise and support not in self.noise:
            return None
        base = np.asarray(position, dtype=float)
        s_pose = pb.getBasePositionAndOrientation(support, physicsClientId=self.c)
        found: Optional[NoiseMiss] = None
        try:
            for yaw, dx, dy, turn in self.draws(support)[1:] if not measure else self.draws(support):
                if turn:   # the support turned about its own frame's origin
                    pb.resetBasePositionAndOrientation(support, s_pose[0], _yawed(s_pose[1], turn), physicsClientId=self.c)
                else:
                    pb.resetBasePositionAndOrientation(support, *s_pose, physicsClientId=self.c)
                o = _yawed(orn, yaw)
                at = base + np.array([dx, dy, 0.0])
                body, gap = self.support(at, o)
                miss: Optional[NoiseMiss] = None
                if body != support or gap > SUPPORT_GAP_M:
                    miss = NoiseMiss(yaw, (dx, dy), turn)
                    if measure:
                        miss.overhang_m = self.overhang(at, o, support)
                else:
                    blocker, d = self.in_the_way(at, o, support)
                    if blocker is not None:
                        miss = NoiseMiss(yaw, (dx, dy), turn, blocker=blocker, distance_m=d)
                if miss is None:
                    continue
                if not measure:
                    return miss
                if (found is None or (miss.blocker is None and found.blocker is not None)
                        or (miss.blocker is None and miss.overhang_m > found.overhang_m)):
                    found = miss
        finally:
            pb.resetBasePositionAndOrientation(support, *s_pose, physicsClientId=self.c)
        return found

    def overhang(self, position: np.ndarray, orn: Any, support: int) -> float:
        """How far the object's footprint at ``position`` reaches past the edge of ``support``,
        horizontally, m (0: none of it). The object's farthest point in each of 32 horizontal
        directions, 11.25 deg apart (within 0.2 mm of a 4 cm can's overhang): its shape's own, not its
        bounding box's (a cylinder's is its radius whatever its yaw), from its closest point to a wall
        1 m out; and how far that point lies beside the nearest point of ``support`` at the object's
        bottom (the point probe of :meth:`support`)."""
        self.at(position, orn)
        lo, _hi = _aabb(self.c, self.body)
        bottom = float(lo[2])
        wall = getattr(self.world, "_place_wall", None)
        if wall is None:
            col = pb.createCollisionShape(pb.GEOM_BOX, halfExtents=[0.005, 3.0, 3.0], physicsClientId=self.c)
            wall = pb.createMultiBody(0.0, col, -1, [0, 0, -100], physicsClientId=self.c)
            pb.setCollisionFilterGroupMask(wall, -1, 0, 0, physicsClientId=self.c)
            self.world._place_wall = wall
        self.support(position, orn)   # the point probe made
        probe = self.world._place_probe
        worst = 0.0
        try:
            for k in range(32):
                a = 2 * math.pi * k / 32
                u = np.array([math.cos(a), math.sin(a)])
                self.at(position, orn)
                pb.resetBasePositionAndOrientation(
                    wall, [float(position[0] + u[0]), float(position[1] + u[1]), float(position[2])],
                    pb.getQuaternionFromEuler([0.0, 0.0, a]), physicsClientId=self.c)
                pts = pb.getClosestPoints(self.body, wall, 2.0, physicsClientId=self.c)
                if not pts:
                    continue
                e = min(pts, key=lambda pt: pt[8])[5]   # the object's point nearest the wall
                pb.resetBasePositionAndOrientation(probe, [e[0], e[1], bottom], [0, 0, 0, 1], physicsClientId=self.c)
                near = pb.getClosestPoints(probe, support, 1.0, physicsClientId=self.c)
                if not near or min(pt[8] for pt in near) < 0:
                    continue   # over it (the probe inside its top), or nothing to measure from
                q = min(near, key=lambda pt: pt[8])[6]
                worst = max(worst, math.hypot(q[0] - e[0], q[1] - e[1]))
        finally:
            pb.resetBasePositionAndOrientation(wall, [0, 0, -100], [0, 0, 0, 1], physicsClientId=self.c)
            pb.resetBasePositionAndOrientation(probe, [0, 0, -100], [0, 0, 0, 1], physicsClientId=self.c)
            self.at(position, orn)
        return worst


@dataclass
class NoiseMiss:
    """A pose of the declared noise (:meth:`_Probe.worst`) at which the place fails: the held
    object's yaw (deg) and shift (x, y, m) from the pose as given, the support's yaw (deg); the
    body in the way there and its distance (m), or (``blocker`` None) how far its footprint reaches
    past the support's edge (m, measured on request)."""

    yaw_deg: float
    shift_m: tuple[float, float]
    support_yaw_deg: float = 0.0
    blocker: Optional[int] = None
    distance_m: float = 0.0
    overhang_m: float = 0.0

    def pose(self) -> str:
        """``"yawed +5.0 deg and shifted [+0.005, +0.005] m"``."""
        parts = []
        if self.yaw_deg:
            parts.append(f"yawed {self.yaw_deg:+.1f} deg")
        if any(self.shift_m):
            parts.append(f"shifted [{self.shift_m[0]:+.3f}, {self.shift_m[1]:+.3f}] m")
        if self.support_yaw_deg:
            parts.append(f"its support yawed {self.support_yaw_deg:+.1f} deg")
        return " and ".join(parts) or "as given"


def _yawed(orn: Any, yaw_deg: float) -> Any:
    """The xyzw quaternion ``orn`` (PyBullet's convention) turned ``yaw_deg`` about world z."""
    q = pb.getQuaternionFromEuler([0.0, 0.0, math.radians(yaw_deg)])
    return pb.multiplyTransforms([0, 0, 0], q, [0, 0, 0], orn)[1]


def check_task_place(world: Any, task: Any, accept: Optional[Accept] = None,
                     noise: Optional[dict] = None) -> Optional[PlaceCheck]:
    """The scene's ``task`` section (:class:`~py_trees_manipulation.scene.spec.TaskSpec`-like:
    ``target_object``, ``place_position`` [x, y, z] world frame, metres, ``placed``) checked in
    ``world``: the target at the place position, its orientation as it stands now
    (:func:`check_place`). None when the task asks for no place (no target, no place position,
    or ``placed: false``). Raises KeyError for a target the world does not hold. The run's check
    before the first tick and ``ptm validate --plan`` both call it; ``accept``, ``noise``: as
    :func:`check_place`'s."""
    if (task is None or getattr(task, "place_position", None) is None or getattr(task, "target_object", None) is None
            or not getattr(task, "placed", True)):
        return None
    pose = np.array(world.object_pose(task.target_object), dtype=float)
    pose[:3, 3] = np.asarray(task.place_position, dtype=float)
    return check_place(world, task.target_object, pose, accept=accept, noise=noise)


#: a whole-task test of a spot: ``accept((x, y, z))`` -> None when the task passes with its place
#: there, else why not
Accept = Callable[[tuple], Optional[str]]


def check_place(world: Any, obj: str, place_pose: Pose, search: bool = True,
                accept: Optional[Accept] = None, noise: Optional[dict] = None) -> PlaceCheck:
    """Is there room for ``obj`` at ``place_pose`` ((4, 4) pose of its base, world frame), on a
    support? See the module docs. The object's copy in ``world`` (a
    :class:`~py_trees_manipulation.collision.world.CollisionWorld`) is moved and put back.

    ``accept``: the whole-task test of a spot (``accept((x, y, z))`` -> None or why not, world
    frame, m; it must not depend on ``world``'s state): a free spot is suggested only if it passes
    (at most :data:`ACCEPT_MAX_TESTS` tested, within :data:`ACCEPT_BUDGET` of counted work); those refused are
    listed (:attr:`PlaceCheck.refused`). None: room for the object decides.

    ``noise``: the scene's declared pose noise, body name -> ``pose_noise``
    (:class:`~py_trees_manipulation.scene.spec.PoseNoiseSpec`: ``position_m``, ``yaw_deg``). The
    place, and every spot suggested, must then stand on its support with room at every pose of the
    noise of ``obj`` and of its support (the worst case, :meth:`_Probe.worst`; ``place_pose`` is the
    pose as written): a run draws one of them, and the draw must not refuse what this passed. A
    place that fails only there says at which pose and how far it overhangs (:attr:`PlaceCheck.worst`).

    Raises:
        KeyError: ``obj`` is not a body of the world.
    """
    if obj not in world.bodies:
        raise KeyError(f"the collision world has no object {obj!r}")
    from ..conventions import quat_xyzw_from_wxyz
    from ..geometry.poses import pq_from_pose

    p, q = pq_from_pose(np.asarray(place_pose, dtype=float))
    orn = quat_xyzw_from_wxyz(q)
    probe = _Probe(world, obj)
    for name, n in (noise or {}).items():
        if name in world.bodies and (float(n.position_m) > 0 or float(n.yaw_deg) > 0):
            probe.noise[world.bodies[name]] = (float(n.position_m), float(n.yaw_deg))
    names = world.names
    spots = _Spots(probe, orn, accept)
    try:
        check = _check(probe, spots, p, orn, names, search)
        if accept is not None and search and not check.ok:
            check.tested, check.refused, check.stopped = True, spots.refused, spots.stopped
        return check
    finally:
        probe.restore()


def _check(probe: _Probe, spots: "_Spots", p: np.ndarray, orn: Any, names: dict, search: bool) -> PlaceCheck:
    body, gap = probe.support(p, orn)
    if body >= 0 and math.isfinite(gap) and gap > SUPPORT_GAP_M:
        # a surface under the whole footprint, below the gap: the place is too high, not unsupported
        name = names.get(body, f"body {body}")
        check = PlaceCheck(False, "", f"is {gap:.3f} m above {name!r}, the surface under it (at most "
                                      f"{SUPPORT_GAP_M:g} m): the object would be let go in the air; lower the "
                                      "place")
        if search:
            lowered = p - np.array([0.0, 0.0, gap])
            check.suggestion = spots.offer(lowered, body) or spots.nearest(lowered, body)
            check.support = name if check.suggestion is not None else ""
        return check
    if body < 0 or gap > SUPPORT_GAP_M:
        under = probe.centre_body
        if under >= 0:   # something under its centre, not under all of its footprint (trial 4)
            what = (f"stands only partly on {names.get(under, f'body {under}')!r}: part of its footprint "
                    "is over nothing or over a lower surface (an overhang): it would tip when let go")
        else:
            what = "has nothing under it to stand on: the object would be let go in the air"
            over, top_z = probe.over(p, orn)
            if over >= 0:   # under a table top, or inside a body: the place is on top of it
                name = names.get(over, f"body {over}")
                lift = top_z - (p[2] + probe.bottom_offset(p, orn))
                what = (f"is under {name!r} or inside it, not on it: the top of {name!r} is {lift:.3f} m above the "
                        "object's base there (a place is where the object's base rests, world frame)")
                check = PlaceCheck(False, "", what)
                if search:
                    raised = p + np.array([0.0, 0.0, lift])
                    check.suggestion = spots.offer(raised, over) or spots.nearest(raised, over)
                    check.support = name if check.suggestion is not None else ""
                return check
        check = PlaceCheck(False, "", what)
        if search:
            check.suggestion = spots.nearest(p, None)
            if check.suggestion is not None:
                check.support = names.get(probe.support(np.asarray(check.suggestion), orn)[0], "")
        return check
    support = names.get(body, f"body {body}")
    blocker, d = probe.in_the_way(p, orn, body)
    if blocker is None:
        miss = probe.worst(p, orn, body, measure=True)
        if miss is None:
            return PlaceCheck(True, support)
        written = probe.overhang(p, orn, body) if miss.blocker is None else 0.0
        check = PlaceCheck(False, support, _noise_reason(probe, names, body, miss, written), worst=miss)
        if miss.blocker is not None:
            check.blocker = names.get(miss.blocker, f"body {miss.blocker}")
        if search:
            check.suggestion = spots.nearest(p, body)
        return check
    who = names.get(blocker, f"body {blocker}")
    how = (f"{-d * 1000:.0f} mm inside it" if d < 0 else f"{d * 1000:.0f} mm from it")
    if blocker == body:
        reason = (f"is inside its support {who!r} ({-d * 1000:.0f} mm deep, more than "
                  f"{PENETRATION_M * 1000:g} mm): raise the place")
    else:
        reason = (f"is taken: {who!r} is in the way (the object there would be {how}; it keeps "
                  f"{CLEARANCE_M * 1000:g} mm from everything but its support {support!r})")
    check = PlaceCheck(False, support, reason, who)
    if search:
        raised = p + np.array([0.0, 0.0, -d]) if blocker == body else None   # on its support, not in it
        check.suggestion = ((spots.offer(raised, body) if raised is not None else None)
                            or spots.nearest(p if raised is None else raised, body))
    return check


def _noise_reason(probe: _Probe, names: dict, support: int, miss: NoiseMiss, written: float = 0.0) -> str:
    """Why a place that stands on ``support`` with room as written fails at a pose of the declared noise."""
    declared = []
    for body in (probe.body, support):
        if body in probe.noise:
            pos, yaw = probe.noise[body]
            who = names.get(body, f"body {body}")
            declared.append(f"the pose_noise of {who!r} (position_m {pos:g}, yaw_deg {yaw:g})")
    within = " and ".join(declared)
    name = names.get(support, f"body {support}")
    if miss.blocker is None:
        return (f"stands on {name!r} as written but only partly on it within {within}: {miss.pose()}, its "
                f"footprint reaches {miss.overhang_m * 1000:.0f} mm past the edge of {name!r} ({written * 1000:.0f} mm "
                "as written; the middle of each "
                "half of its footprint must stand on it: an overhang): it would tip when let go")
    who = names.get(miss.blocker, f"body {miss.blocker}")
    d = miss.distance_m
    how = f"{-d * 1000:.0f} mm inside it" if d < 0 else f"{d * 1000:.0f} mm from it"
    if miss.blocker == support:
        return (f"is free as written but not within {within}: {miss.pose()}, it is inside its support {who!r} "
                f"({how}, more than {PENETRATION_M * 1000:g} mm)")
    return (f"is free as written but taken within {within}: {miss.pose()}, {who!r} is in the way (the object "
            f"there would be {how}; it keeps {CLEARANCE_M * 1000:g} mm from everything but its support {name!r})")


class _Spots:
    """The search for a spot to suggest: free (room for the object on the support) and, with a
    whole-task test, passing it. Candidates are rounded to the millimetre, as printed: the spot the
    user applies is the spot tested."""

    def __init__(self, probe: _Probe, orn: Any, accept: Optional[Accept]):
        self.probe, self.orn, self.accept = probe, orn, accept
        self.refused: list[tuple[tuple[float, float, float], str]] = []
        self.tests, self.stopped = 0, ""
        self.budget = SearchBudget(ACCEPT_BUDGET).begin()

    def exhausted(self) -> bool:
        if self.accept is None:
            return False
        if self.tests >= ACCEPT_MAX_TESTS:
            self.stopped = f"the search stopped after {self.tests} spots tested"
        elif self.budget.exhausted():
            self.stopped = f"the search stopped after {self.budget.describe()} ({self.tests} spots tested)"
        return bool(self.stopped)

    def offer(self, cand: np.ndarray, support: Optional[int]) -> Optional[tuple[float, float, float]]:
        """The spot at ``cand`` (rounded to mm) when it is free and passes the test, else None."""
        cand = np.round(np.asarray(cand, dtype=float), 3)
        if not self.probe.free(cand, self.orn, support):
            return None
        spot = (float(cand[0]), float(cand[1]), float(cand[2]))
        if self.accept is None:
            return spot
        if self.exhausted():
            return None
        self.probe.restore()   # the world as found while the task is tested in its own
        why = self.accept(spot)
        self.tests += 1
        if why is None:
            return spot
        self.refused.append((spot, why))
        return None

    def nearest(self, p: np.ndarray, support: Optional[int]) -> Optional[tuple[float, float, float]]:
        """The nearest spot :meth:`offer` takes on rings :data:`RING_STEP_M` apart around ``p`` (a grid
        fixed by ``p``), out to :data:`SEARCH_RADIUS_M`; None when none (or the budget ran out)."""
        for k in range(1, int(round(SEARCH_RADIUS_M / RING_STEP_M)) + 1):
            r = k * RING_STEP_M
            n = max(8, int(math.ceil(2 * math.pi * r / RING_STEP_M)))
            for i in range(n):
                if self.exhausted():
                    return None
                a = 2 * math.pi * i / n
                spot = self.offer(p + np.array([r * math.cos(a), r * math.sin(a), 0.0]), support)
                if spot is not None:
                    return spot
        return None
