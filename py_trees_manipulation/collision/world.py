"""The collision world: a PyBullet DIRECT planning scene that answers "is this configuration clear?".

:class:`CollisionWorld` holds its own PyBullet client with kinematic copies of the task's bodies:
fixtures, objects, doors and cabinets, and every robot (URDF with self-collision). The simulator
keeps it synced to the true poses when a motion is planned; the hardware backend builds it from the
task file's scene and the robot's URDF. It is never stepped: bodies are teleported.

What a check covers, for the robot being planned (its *moving links*: every link whose pose depends
on an arm joint):

- the moving links against every other body (fixtures, objects, doors, the other robots), within
  the **padding** (metres): a state is invalid when a distance is below it;
- self-collision (penetration) between the robot's links (its fixed base included), except pairs
  whose relative pose does not depend on the arm joints (links joined by fixed or finger joints),
  pairs joined by one arm joint (adjacent in the URDF), the model's ``allowed_collision_pairs``, and
  pairs never in collision in 3,000 random configurations (MoveIt Setup Assistant's "Never" rule);
- the **attached** (held) object: it moves with the TCP and is checked against every other body and
  the robot's non-hand links within the padding, never against the hand links holding it;
- **allowed contacts** (:class:`AllowedContacts`): pairs a motion may bring into contact (the fingers
  with the object being grasped, the held object with the surface it is placed on), and *relaxed*
  pairs that start in contact and may stay so but not get deeper.

Speed (:meth:`StateChecker.is_valid`): PyBullet's own contact pass (``performCollisionDetection``)
reports only penetrations for convex pairs, never a distance below the padding, and costs ~40 us
per call; so the check does its own broadphase. One ``resetJointStatesMultiDof`` and one
``getLinkStates`` give the moving links' frames; each link's box in its own frame (fitted once per
robot from Bullet's AABBs) rotated with it gives the same world AABB Bullet's broadphase would
compute, in numpy; the obstacles' AABBs are cached when the checker is made (the scene does not move
while a motion is planned). Testing the link boxes against the obstacle boxes grown by each pair's
threshold (and the self-collision pairs' boxes against each other) leaves the few link pairs that
may be too close, and only those get an exact ``getClosestPoints`` call with the threshold as its
distance.

Sources: MoveIt's planning scene (padding, allowed collision matrix, attached bodies and their touch
links) and Setup Assistant (disabling never-colliding link pairs by sampling); Coumans & Bai,
PyBullet quickstart guide (``getClosestPoints``, ``getLinkStates``, ``getAABB``).
"""

from __future__ import annotations

import json
import math
import os
from itertools import chain
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Mapping, Optional, Sequence

import numpy as np
import pybullet as pb
import pybullet_data

from ..conventions import quat_wxyz_from_xyzw, quat_xyzw_from_wxyz
from ..geometry.poses import Pose, invert, pose_from_pq, pq_from_pose

if TYPE_CHECKING:  # pragma: no cover
    from ..bullet.robots import LoadedRobot, RobotModel
    from ..scene.spec import PrimitiveSpec, SceneSpec

__all__ = ["CollisionWorld", "StateChecker", "Collision", "AllowedContacts", "Proximity", "primitive_shapes",
           "DEFAULT_PADDING_M"]

DEFAULT_PADDING_M = 0.01
_SELF = 0.0  # self-collision threshold, metres (the padding applies to the environment only)
_CONFIRM_TOL = 1e-6
SELF_COLLISION_SAMPLES = 3000
_SELF_PAIRS_SEED = 12345
_SELF_PAIRS_CACHE: dict[tuple, frozenset] = {}
#: loadURDF flags of every body in a collision world: no visual shapes (meshes and textures a
#: planning copy never draws; they are most of a URDF's load time)
_NO_VISUALS = pb.URDF_IGNORE_VISUAL_SHAPES


def primitive_shapes(client: int, pr: "PrimitiveSpec", color: Optional[Sequence[float]] = None,
                     visual: bool = True) -> tuple[int, int]:
    """Collision (and visual) shape ids of a scene primitive in ``client``.

    Args:
        pr: the primitive: ``box`` (full extents ``size``, m), ``cylinder`` (``radius``, ``length``)
            or ``sphere`` (``radius``); the frame is at its centre.
        color: RGBA of the visual shape. visual: create a visual shape (else -1).

    Returns:
        ``(collision shape id, visual shape id or -1)``.
    """
    rgba = list(color) if color else [0.6, 0.6, 0.6, 1.0]
    vis = -1
    if pr.shape == "box":
        half = [s / 2 for s in pr.size]  # type: ignore[union-attr]
        col = pb.createCollisionShape(pb.GEOM_BOX, halfExtents=half, physicsClientId=client)
        if visual:
            vis = pb.createVisualShape(pb.GEOM_BOX, halfExtents=half, rgbaColor=rgba, physicsClientId=client)
    elif pr.shape == "cylinder":
        col = pb.createCollisionShape(pb.GEOM_CYLINDER, radius=pr.radius, height=pr.length, physicsClientId=client)
        if visual:
            vis = pb.createVisualShape(pb.GEOM_CYLINDER, radius=pr.radius, length=pr.length, rgbaColor=rgba,
                                       physicsClientId=client)
    else:
        col = pb.createCollisionShape(pb.GEOM_SPHERE, radius=pr.radius, physicsClientId=client)
        if visual:
            vis = pb.createVisualShape(pb.GEOM_SPHERE, radius=pr.radius, rgbaColor=rgba, physicsClientId=client)
    return col, vis


@dataclass(frozen=True)
class Proximity:
    """One close pair between the planned robot (or its held object) and something else.

    Attributes:
        link: the robot link's name, or the held object's name when ``held``.
        body: the other body's name. body_link: its link's name (``"base"`` for the base).
        distance_m: signed distance, metres (negative: penetration).
        threshold_m: the distance this pair must keep (the padding, 0 for self-collision, less
            for a relaxed pair).
        held: the pair is the held object's.
        self_collision: both sides are links of the planned robot.
        key: ``(moving side, other body id, other link index)``, the key of :class:`AllowedContacts`.
    """

    link: str
    body: str
    body_link: str
    distance_m: float
    threshold_m: float
    held: bool = False
    self_collision: bool = False
    key: tuple = ()

    @property
    def violation_m(self) -> float:
        """How far the pair is inside its threshold, metres (positive: a collision)."""
        return self.threshold_m - self.distance_m

    def describe(self) -> str:
        """``"panda_link6 would hit shelf"``, ``"the held box would hit table"``,
        ``"panda_hand would hit panda_link2 (self-collision)"``."""
        who = f"the held {self.link}" if self.held else self.link
        other = self.body_link if self.self_collision else self.body
        if not self.self_collision and self.body_link not in ("base", self.body):
            other = f"{self.body} ({self.body_link})"
        text = f"{who} would hit {other}"
        return text + (" (self-collision)" if self.self_collision else "")


Collision = Proximity  # a Proximity inside its threshold


@dataclass
class AllowedContacts:
    """Contacts a motion may make, for :meth:`CollisionWorld.checker`.

    Keys name the planned robot's side as ``("link", link index)`` or ``("held", -1)`` and the other
    side as a body id and a link index (``None``: any link of that body).

    Attributes:
        pairs: ``(moving side, other body id, other link or None)`` never checked.
        relaxed: ``(moving side, other body id, other link) -> threshold_m``: pairs that start closer
            than the padding and must not get closer than ``threshold_m``.
        reasons: one line per rule that allowed something (for logs).
    """

    pairs: set = field(default_factory=set)
    relaxed: dict = field(default_factory=dict)
    reasons: list = field(default_factory=list)

    def allows(self, key: tuple) -> bool:
        side, body, link = key
        return (side, body, None) in self.pairs or key in self.pairs

    def merge(self, other: "AllowedContacts") -> "AllowedContacts":
        out = AllowedContacts(set(self.pairs) | other.pairs, dict(self.relaxed), self.reasons + other.reasons)
        for k, v in other.relaxed.items():
            out.relaxed[k] = min(v, out.relaxed.get(k, v))
        return out


@dataclass
class _Robot:
    name: str
    loaded: "LoadedRobot"
    moving: frozenset          # link indices whose pose depends on an arm joint
    hand: frozenset            # the flange link, its descendants and the fingers
    parent: dict               # link -> parent link
    self_pairs: frozenset      # link pairs checked for self-collision
    box: dict                  # link -> (centre (3,), half extents (3,)): its AABB in its centre-of-mass frame
    collidable: frozenset      # links with a collision shape


@dataclass
class _Attached:
    name: str
    body: int
    rel_pos: tuple            # object base in the robot's TCP *link* frame
    rel_orn: tuple
    box: tuple                # (centre (3,), half extents (3,)): its AABB in its base (centre-of-mass) frame


class CollisionWorld:
    """A kinematic planning scene in its own PyBullet DIRECT client (see the module docstring).

    Args:
        padding_m: the clearance every checked pair must keep from the environment, metres.
        max_step_rad: joint-space resolution of path checks, radians.

    Attributes:
        client: the PyBullet client id.
        padding_m, max_step_rad: as given.
        bodies: body name -> PyBullet body id; names: the reverse.
        robots: robot name -> :class:`~py_trees_manipulation.bullet.robots.LoadedRobot` (kinematic copy).
        objects: names of the movable objects (they can be attached).
    """

    def __init__(self, padding_m: float = DEFAULT_PADDING_M, max_step_rad: float = 0.01):
        if padding_m < 0:
            raise ValueError(f"padding_m must be >= 0 m, got {padding_m}")
        if not max_step_rad > 0:
            raise ValueError(f"max_step_rad must be > 0 rad, got {max_step_rad}")
        self.padding_m = float(padding_m)
        self.max_step_rad = float(max_step_rad)
        self.client = pb.connect(pb.DIRECT)
        if self.client < 0:  # pragma: no cover
            raise RuntimeError("PyBullet could not connect a DIRECT client for the collision world")
        pb.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=self.client)
        self.bodies: dict[str, int] = {}
        self.names: dict[int, str] = {}
        self.objects: set[str] = set()
        self.robots: dict[str, "LoadedRobot"] = {}
        self._robots: dict[str, _Robot] = {}
        self._links: dict[int, list[int]] = {}
        self._link_names: dict[tuple[int, int], str] = {}
        self._attached: dict[str, _Attached] = {}       # robot -> attached object
        self._mask_owner: Optional[int] = None           # robot whose self-collision performCollisionDetection sees
        # (never change contactBreakingThreshold here: it is a process-wide Bullet global, the
        # simulator's contacts would change with it)
        self._probe: Optional[int] = None
        self.closed = False

    # ---- construction ----------------------------------------------------------------------------
    @classmethod
    def from_scene(cls, scene: "SceneSpec", models: Optional[Mapping[str, "RobotModel"]] = None,
                   padding_m: Optional[float] = None, max_step_rad: Optional[float] = None) -> "CollisionWorld":
        """A world of ``scene``: fixtures, objects (at their nominal poses), doors and cabinets
        (``scene.extra``), robots at their initial configuration.

        Args:
            scene: a parsed :class:`~py_trees_manipulation.scene.spec.SceneSpec`.
            models: robot name -> model (default: each scene robot's description, or its stock model
                from :func:`~py_trees_manipulation.bullet.robots.model_by_name`).
            padding_m, max_step_rad: default: the scene's ``motion_planning`` section, else 0.01 m
                and 0.01 rad.

        Raises:
            ValueError: an unknown robot model; a URDF that does not load.
        """
        from ..bullet.robots import model_by_name

        settings = scene.extra.get("motion_planning") if hasattr(scene, "extra") else None
        pad = padding_m if padding_m is not None else getattr(settings, "padding_m", DEFAULT_PADDING_M)
        step = max_step_rad if max_step_rad is not None else getattr(settings, "max_step_rad", 0.01)
        world = cls(padding_m=pad, max_step_rad=step)
        try:
            for f in scene.fixtures:
                world.add_urdf(f.name, f.urdf_path, f.pose, scale=f.scale)
            for r in scene.robots:
                model = ((models or {}).get(r.name) or getattr(r, "description", None)
                         or model_by_name(r.model))
                if model is None:
                    raise ValueError(f"unknown robot model {r.model!r} for robot {r.name!r}")
                loaded = world.add_robot(r.name, model, r.base_pose)
                q0 = (model.named_configurations[r.initial_configuration]
                      if isinstance(r.initial_configuration, str) else r.initial_configuration)
                world.set_robot_state(r.name, q0, fingers=loaded.finger_targets(r.initial_gap_m))
                del loaded
            for o in scene.objects:
                if o.primitive is not None:
                    world.add_primitive(o.name, o.primitive, o.pose, movable=not o.fixed)
                else:
                    world.add_urdf(o.name, o.urdf_path, o.pose, scale=o.scale, movable=not o.fixed)
            for key in ("doors", "cabinets"):
                for spec in scene.extra.get(key) or ():
                    world.add_urdf(spec.name, spec.asset.urdf_path, spec.pose)
        except BaseException:
            world.close()
            raise
        return world

    def _register(self, name: str, body: int, movable: bool = False) -> None:
        if name in self.bodies:
            raise ValueError(f"the collision world already has a body named {name!r}")
        c = self.client
        self.bodies[name] = body
        self.names[body] = name
        n = pb.getNumJoints(body, physicsClientId=c)
        self._links[body] = [-1, *range(n)]
        self._link_names[(body, -1)] = "base"
        if n:  # an articulated body (robot, door): its URDF base link's name
            self._link_names[(body, -1)] = pb.getBodyInfo(body, physicsClientId=c)[0].decode()
        for j in range(n):
            self._link_names[(body, j)] = pb.getJointInfo(body, j, physicsClientId=c)[12].decode()
        if movable:
            self.objects.add(name)

    def add_urdf(self, name: str, path: str, pose: Pose, scale: float = 1.0, movable: bool = False) -> int:
        """Load a URDF as a fixed (kinematic) body at ``pose`` ((4, 4), world). Returns its body id.

        Raises:
            ValueError: the URDF does not load, or the name is taken.
        """
        p, q = pq_from_pose(pose)
        try:
            body = pb.loadURDF(path, p.tolist(), quat_xyzw_from_wxyz(q), useFixedBase=True, globalScaling=scale,
                               flags=_NO_VISUALS, physicsClientId=self.client)
        except pb.error as e:
            raise ValueError(f"collision world: cannot load {name!r} from {path}: {e}") from None
        self._register(name, body, movable)
        return body

    def add_primitive(self, name: str, primitive: "PrimitiveSpec", pose: Pose, movable: bool = True) -> int:
        """Add a box, cylinder or sphere (scene primitive, frame at its centre) at ``pose``."""
        col, _ = primitive_shapes(self.client, primitive, visual=False)
        p, q = pq_from_pose(pose)
        body = pb.createMultiBody(baseMass=0.0, baseCollisionShapeIndex=col, basePosition=p.tolist(),
                                  baseOrientation=quat_xyzw_from_wxyz(q), physicsClientId=self.client)
        self._register(name, body, movable)
        self._mask_owner = None
        return body

    def add_robot(self, name: str, model: "RobotModel", base_pose: Pose) -> "LoadedRobot":
        """Load a robot model (URDF with self-collision) with its base at ``base_pose``.

        Self-collision pairs that cannot change with the arm joints, pairs joined by one arm joint,
        the model's ``allowed_collision_pairs`` and pairs never in collision in
        :data:`SELF_COLLISION_SAMPLES` random configurations are not checked (see the module docstring).
        """
        from ..bullet.robots import LoadedRobot

        c = self.client
        p, q = pq_from_pose(base_pose)
        try:
            body = pb.loadURDF(model.urdf, p.tolist(), quat_xyzw_from_wxyz(q), useFixedBase=True,
                               flags=pb.URDF_USE_SELF_COLLISION | _NO_VISUALS, physicsClientId=c)
        except pb.error as e:
            raise ValueError(f"collision world: cannot load robot {name!r} from {model.urdf}: {e}") from None
        self._register(name, body)
        self._mask_owner = None
        robot = LoadedRobot(c, body, model)
        n = pb.getNumJoints(body, physicsClientId=c)
        parent = {j: pb.getJointInfo(body, j, physicsClientId=c)[16] for j in range(n)}
        arm = set(robot.arm_joints)
        # rigid groups: links joined by any joint that is not an arm joint
        root = {j: j for j in [-1, *range(n)]}

        def find(x: int) -> int:
            while root[x] != x:
                root[x] = root[root[x]]
                x = root[x]
            return x

        for j in range(n):
            if j not in arm:
                root[find(j)] = find(parent[j])
        adjacent = {frozenset((find(j), find(parent[j]))) for j in arm}
        moving = set()
        for j in range(n):  # j moves when an arm joint is on its chain to the base
            k = j
            while k != -1:
                if k in arm:
                    moving.add(j)
                    break
                k = parent[k]
        flange = robot.link_index.get(model.flange_link_name, robot.tcp_link)
        hand = {flange, *robot.finger_links}
        for j in range(n):
            k = j
            while k != -1:
                if k == flange:
                    hand.add(j)
                    break
                k = parent[k]
        names = self._link_names
        allowed = {frozenset(p) for p in model.allowed_collision_pairs}
        links = [-1, *range(n)]
        collidable = frozenset(j for j in links if pb.getCollisionShapeData(body, j, physicsClientId=c))
        candidates = []
        for i, a in enumerate(links):
            for b in links[i + 1:]:
                ga, gb = find(a), find(b)
                if (a in collidable and b in collidable and (a in moving or b in moving) and ga != gb
                        and frozenset((ga, gb)) not in adjacent
                        and frozenset((names[(body, a)], names[(body, b)])) not in allowed):
                    candidates.append((a, b))
        self_pairs = _sampled_self_pairs(model, robot, candidates)
        for i, a in enumerate(links):  # only the checked self pairs reach the narrowphase
            for b in links[i + 1:]:
                if (a, b) not in self_pairs:
                    pb.setCollisionFilterPair(body, body, a, b, 0, physicsClientId=c)
        box = _local_boxes(robot, sorted(collidable))
        self.robots[name] = robot
        self._robots[name] = _Robot(name, robot, frozenset(moving), frozenset(hand), parent, self_pairs, box,
                                    collidable)
        return robot

    # ---- state -------------------------------------------------------------------------------------
    def set_object_pose(self, name: str, pose: Pose) -> None:
        """Teleport body ``name``'s base to ``pose`` ((4, 4), world; PyBullet's base frame, as
        ``getBasePositionAndOrientation`` reports it)."""
        p, q = pq_from_pose(pose)
        pb.resetBasePositionAndOrientation(self.bodies[name], p.tolist(), quat_xyzw_from_wxyz(q),
                                           physicsClientId=self.client)

    def set_base_pq(self, name: str, position: Sequence[float], orientation_xyzw: Sequence[float]) -> None:
        """Teleport body ``name``'s base (PyBullet position and (x, y, z, w) quaternion, as read
        from another client's ``getBasePositionAndOrientation``)."""
        pb.resetBasePositionAndOrientation(self.bodies[name], list(position), list(orientation_xyzw),
                                           physicsClientId=self.client)

    def object_pose(self, name: str) -> Pose:
        """(4, 4) base pose of body ``name``, world frame."""
        p, q = pb.getBasePositionAndOrientation(self.bodies[name], physicsClientId=self.client)
        return pose_from_pq(p, quat_wxyz_from_xyzw(q))

    def set_joint_positions(self, name: str, positions: Mapping[int, float]) -> None:
        """Teleport joints of body ``name``: joint index -> position (rad or m)."""
        body = self.bodies[name]
        for j, v in positions.items():
            pb.resetJointState(body, int(j), float(v), 0.0, physicsClientId=self.client)

    def set_robot_state(self, robot: str, arm: Sequence[float], fingers: Optional[Sequence[float]] = None) -> None:
        """Teleport a robot's arm joints (rad, the model's order) and finger joints (m each)."""
        r = self.robots[robot]
        pb.resetJointStatesMultiDof(r.body, list(r.arm_joints), [[float(v)] for v in arm],
                                    physicsClientId=self.client)
        if fingers is not None:
            for j, v in zip(r.finger_joints, fingers):
                pb.resetJointState(r.body, j, float(v), 0.0, physicsClientId=self.client)

    def tcp_pose(self, robot: str, q: Optional[Sequence[float]] = None) -> Pose:
        """(4, 4) TCP pose of ``robot`` (at arm joints ``q`` when given: the arm is teleported)."""
        r = self.robots[robot]
        if q is not None:
            self.set_robot_state(robot, q)
        return r.tcp_pose()

    # ---- attached objects ----------------------------------------------------------------------------
    def attach(self, robot: str, obj: str, T_tcp_obj: Optional[Pose] = None) -> None:
        """Attach movable object ``obj`` to ``robot``'s TCP: it moves with it in every check.

        Args:
            T_tcp_obj: (4, 4) object base pose in the TCP frame; default: where it is now relative to
                the TCP where the robot is now.

        Raises:
            KeyError: unknown robot or object; ValueError: the object is fixed or held by another robot.
        """
        if robot not in self.robots:
            raise KeyError(f"no robot named {robot!r}; the collision world has {sorted(self.robots)}")
        if obj not in self.bodies:
            raise KeyError(f"no object named {obj!r}; the collision world has {sorted(self.objects)}")
        if obj not in self.objects:
            raise ValueError(f"{obj!r} is fixed: it cannot be attached")
        for other, a in self._attached.items():
            if a.name == obj and other != robot:
                raise ValueError(f"{obj!r} is already attached to {other!r}")
        r = self.robots[robot]
        if T_tcp_obj is None:
            T_tcp_obj = invert(r.tcp_pose()) @ self.object_pose(obj)
        T_link_obj = r.tcp_in_link @ T_tcp_obj
        p, q = pq_from_pose(T_link_obj)
        body = self.bodies[obj]
        self._attached[robot] = _Attached(obj, body, tuple(p.tolist()), quat_xyzw_from_wxyz(q),
                                          _base_box(self.client, body))

    def detach(self, robot: str) -> Optional[str]:
        """Release what ``robot`` holds (it stays where it is). Returns its name, or None."""
        a = self._attached.pop(robot, None)
        return a.name if a is not None else None

    def attached(self, robot: str) -> Optional[str]:
        """The object attached to ``robot``, or None."""
        a = self._attached.get(robot)
        return a.name if a is not None else None

    def attached_transform(self, robot: str) -> Optional[Pose]:
        """(4, 4) pose of the attached object in ``robot``'s TCP frame, or None."""
        a = self._attached.get(robot)
        if a is None:
            return None
        r = self.robots[robot]
        return r.link_in_tcp @ pose_from_pq(a.rel_pos, quat_wxyz_from_xyzw(a.rel_orn))

    # ---- names ----------------------------------------------------------------------------------------
    def link_name(self, body: int, link: int) -> str:
        """Name of link ``link`` of body ``body`` (``"base"`` for -1)."""
        return self._link_names.get((body, link), str(link))

    def hand_links(self, robot: str) -> frozenset:
        """Link indices of ``robot``'s hand: the flange link, its descendants and the fingers."""
        return self._robots[robot].hand

    def moving_links(self, robot: str) -> frozenset:
        """Link indices of ``robot`` whose pose depends on an arm joint."""
        return self._robots[robot].moving

    def body_id(self, name: str) -> int:
        """Body id of ``name``. Raises KeyError listing the bodies."""
        if name not in self.bodies:
            raise KeyError(f"no body named {name!r} in the collision world; it has {sorted(self.bodies)}")
        return self.bodies[name]

    # ---- checks -----------------------------------------------------------------------------------
    def checker(self, robot: str, allowed: Optional[AllowedContacts] = None,
                padding_m: Optional[float] = None) -> "StateChecker":
        """A :class:`StateChecker` for ``robot`` with its attached object and ``allowed`` contacts.

        Raises:
            KeyError: unknown robot.
        """
        if robot not in self._robots:
            raise KeyError(f"no robot named {robot!r}; the collision world has {sorted(self._robots)}")
        return StateChecker(self, robot, allowed or AllowedContacts(),
                            self.padding_m if padding_m is None else float(padding_m))

    def probe_bodies(self, position: Sequence[float], radius: float = 0.01) -> list[tuple[int, int]]:
        """``(body id, link)`` of every body within ``radius`` (m) of a world point (for example the
        object whose geometry holds a grasp's TCP). Robots are included."""
        c = self.client
        if self._probe is None:
            col = pb.createCollisionShape(pb.GEOM_SPHERE, radius=1e-3, physicsClientId=c)
            self._probe = pb.createMultiBody(0.0, col, -1, [0, 0, -100], physicsClientId=c)
        pb.resetBasePositionAndOrientation(self._probe, list(position), [0, 0, 0, 1], physicsClientId=c)
        out = []
        for body in self._links:
            for pt in pb.getClosestPoints(self._probe, body, radius, physicsClientId=c):
                pair = (body, pt[4])
                if pair not in out:
                    out.append(pair)
        pb.resetBasePositionAndOrientation(self._probe, [0, 0, -100], [0, 0, 0, 1], physicsClientId=c)
        return out

    def close(self) -> None:
        """Disconnect the PyBullet client. Idempotent."""
        if self.closed:
            return
        self.closed = True
        try:
            pb.disconnect(physicsClientId=self.client)
        except pb.error:  # pragma: no cover
            pass

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self) -> str:
        return (f"CollisionWorld(robots={list(self.robots)}, bodies={len(self.bodies)}, padding={self.padding_m:g} m"
                f"{', closed' if self.closed else ''})")


class StateChecker:
    """Validity of ``robot``'s arm configurations in a :class:`CollisionWorld` (see the module docs).

    Made by :meth:`CollisionWorld.checker`; meant for one motion: the allowed contacts, the attached
    object and the obstacles' poses are those of the moment it is made. Not thread-safe: one thread
    uses a world at a time.

    Attributes:
        robot: the robot's name. padding_m: the environment clearance, metres.
        allowed: the motion's :class:`AllowedContacts`. checks: :meth:`is_valid` calls so far.
        lower, upper: the arm's joint limits, radians.
    """

    def __init__(self, world: CollisionWorld, robot: str, allowed: AllowedContacts, padding_m: float):
        self.world = world
        self.robot = robot
        self.allowed = allowed
        self.padding_m = padding_m
        self.checks = 0
        rb = world._robots[robot]
        r = rb.loaded
        c = world.client
        self._rb = rb
        self._body = r.body
        self._client = c
        self._arm = list(r.arm_joints)
        self._tcp_link = r.tcp_link
        self._moving = rb.moving
        self._hand = rb.hand
        self.lower, self.upper = r.lower.copy(), r.upper.copy()
        self._held = world._attached.get(robot)
        self._held_body = self._held.body if self._held is not None else None
        # moving links with geometry: their boxes move
        self._mv = [j for j in sorted(rb.moving) if j in rb.collidable]
        self._box_c = np.array([rb.box[j][0] for j in self._mv]).reshape(-1, 3)
        self._box_h = np.array([rb.box[j][1] for j in self._mv]).reshape(-1, 3)

        # obstacles: every link of every other body, AABB cached now
        obstacles = []
        for body, links in world._links.items():
            if body in (r.body, self._held_body, world._probe):
                continue
            for link in links:
                if pb.getCollisionShapeData(body, link, physicsClientId=c):
                    lo, hi = pb.getAABB(body, link, physicsClientId=c)
                    obstacles.append((body, link, lo, hi))
        self._obs = [(b, link) for b, link, _, _ in obstacles]
        lo = np.array([o[2] for o in obstacles]).reshape(-1, 3)
        hi = np.array([o[3] for o in obstacles]).reshape(-1, 3)
        self._oc, self._oh = (lo + hi) / 2, (hi - lo) / 2
        # per (moving link, obstacle) threshold; -inf: allowed (never checked)
        thr = np.full((len(self._mv), len(obstacles)), -np.inf)
        for i, link in enumerate(self._mv):
            for k, (ob, ol) in enumerate(self._obs):
                t = self._threshold(("link", link), ob, ol, False)
                if t is not None:
                    thr[i, k] = t
        self._thr = thr
        self._thr_list = thr.tolist()
        # obstacle boxes grown by each pair's threshold, (L, M, 3); empty (lo = +inf) where allowed
        grow = np.where(np.isfinite(thr), thr, -np.inf)[:, :, None]
        self._env_lo = np.where(np.isfinite(grow), (self._oc - self._oh)[None] - grow, np.inf)
        self._env_hi = np.where(np.isfinite(grow), (self._oc + self._oh)[None] + grow, -np.inf)
        # one linear map from a link's [p, R (row-major), |R|] to [lo, -hi] of its world AABB:
        # lo = p + R c - |R| h, -hi = -(p + R c) - |R| h; then "near" is [lo, -hi] <= [env_hi, -env_lo]
        L = len(self._mv)
        W = np.zeros((L, 6, 21))
        for i in range(L):
            c3, h3 = self._box_c[i], self._box_h[i]
            for a in range(3):
                W[i, a, a] = 1.0
                W[i, a, 3 + 3 * a:6 + 3 * a] = c3
                W[i, a, 12 + 3 * a:15 + 3 * a] = -h3
                W[i, 3 + a] = -W[i, a]
                W[i, 3 + a, 12 + 3 * a:15 + 3 * a] = -h3
        self._W = W
        self._env_bound = np.concatenate([self._env_hi, -self._env_lo], axis=2)   # (L, M, 6)
        if self._held is not None:
            hthr = np.full(len(obstacles), -np.inf)
            for k, (ob, ol) in enumerate(self._obs):
                t = self._threshold(("held", -1), ob, ol, False)
                if t is not None:
                    hthr[k] = t
            self._held_thr = hthr
            self._held_reach = self._oh + hthr[:, None]
            # the held object against the robot's own moving links, hand excluded
            self._held_links = [(i, j) for i, j in enumerate(self._mv) if j not in rb.hand]
            self._held_link_thr = np.array([
                -np.inf if (t := self._threshold(("held", -1), r.body, j, False)) is None else t
                for _, j in self._held_links])

    def _own_masks(self) -> None:
        """Collision filter groups so that ``performCollisionDetection`` sees this robot's links only
        (its checked self-collision pairs; everything else is tested by the box broadphase)."""
        c = self._client
        for body, links in self.world._links.items():
            for link in links:
                if body == self._body:
                    pb.setCollisionFilterGroupMask(body, link, 2, 2, physicsClientId=c)
                else:
                    pb.setCollisionFilterGroupMask(body, link, 1, 0, physicsClientId=c)
        self.world._mask_owner = self._body

    # ---- the check ---------------------------------------------------------------------------------
    def set_state(self, q: Sequence[float]) -> None:
        """Teleport the arm to ``q`` (radians) and the attached object with it."""
        c = self._client
        values = q.tolist() if isinstance(q, np.ndarray) else q
        pb.resetJointStatesMultiDof(self._body, self._arm, [[float(v)] for v in values], physicsClientId=c)
        h = self._held
        if h is not None:
            ls = pb.getLinkState(self._body, self._tcp_link, computeForwardKinematics=True, physicsClientId=c)
            p, o = pb.multiplyTransforms(ls[4], ls[5], h.rel_pos, h.rel_orn, physicsClientId=c)
            pb.resetBasePositionAndOrientation(h.body, p, o, physicsClientId=c)

    def _threshold(self, side: tuple, body: int, link: int, self_collision: bool) -> Optional[float]:
        """The distance the pair ``(side, body, link)`` must keep, or None when it is allowed."""
        if self_collision:
            return _SELF
        key = (side, body, link)
        if self.allowed.allows(key):
            return None
        return self.allowed.relaxed.get(key, self.padding_m)

    def _violations(self, q: Sequence[float], first: bool) -> list[tuple]:
        """``(side, other body, other link, self_collision, held, distance, threshold)`` of the pairs
        inside their threshold at ``q``; stops at the first with ``first``."""
        c = self._client
        body = self._body
        self.set_state(q)
        out: list[tuple] = []
        gcp = pb.getClosestPoints
        # resetJointStatesMultiDof has already updated the link frames (no forward kinematics again)
        states = pb.getLinkStates(body, self._mv, physicsClientId=c)
        # the links' world AABBs, as Bullet computes them: the local box rotated with the link
        gm = pb.getMatrixFromQuaternion
        frames = np.fromiter(chain.from_iterable(st[0] + gm(st[1]) for st in states), float,
                             count=12 * len(states)).reshape(-1, 12)
        feats = np.concatenate([frames, np.abs(frames[:, 3:])], axis=1)         # (L, 21): p, R, |R|
        lo_neg_hi = (self._W @ feats[:, :, None])[:, :, 0]                         # (L, 6): lo, -hi
        # environment: a link box overlaps an obstacle box grown by the pair's threshold
        near = (lo_neg_hi[:, None, :] <= self._env_bound).all(axis=2)
        if near.any():
            for i, k in np.argwhere(near).tolist():
                ob, ol = self._obs[k]
                thr = self._thr_list[i][k]
                pts = gcp(body, ob, thr, linkIndexA=self._mv[i], linkIndexB=ol, physicsClientId=c)
                if pts:
                    d = min(p[8] for p in pts)
                    if d < thr - _CONFIRM_TOL:
                        out.append((("link", self._mv[i]), ob, ol, False, False, d, thr))
                        if first:
                            return out
        # self-collision: PyBullet's contact pass sees only this robot's checked link pairs
        if self.world._mask_owner != body:
            self._own_masks()
        pb.performCollisionDetection(physicsClientId=c)
        for pt in pb.getContactPoints(physicsClientId=c):
            if pt[8] < _SELF - _CONFIRM_TOL and pt[1] == body and pt[2] == body:
                a, b = pt[3], pt[4]
                pts = gcp(body, body, 0.0, linkIndexA=a, linkIndexB=b, physicsClientId=c)
                d = min((x[8] for x in pts), default=0.0)
                if d < _SELF - _CONFIRM_TOL:
                    side_link, other = (a, b) if a in self._moving else (b, a)
                    out.append((("link", side_link), body, other, True, False, d, _SELF))
                    if first:
                        return out
        # the held object
        h = self._held
        if h is not None:
            hp, ho = pb.getBasePositionAndOrientation(h.body, physicsClientId=c)
            Rh = np.array(pb.getMatrixFromQuaternion(ho)).reshape(3, 3)
            hc = np.asarray(hp) + Rh @ h.box[0]
            hh = np.abs(Rh) @ h.box[1]
            if len(self._obs):
                near = np.all(np.abs(hc - self._oc) <= hh + self._held_reach, axis=1)
                for k in np.nonzero(near)[0]:
                    ob, ol = self._obs[k]
                    thr = float(self._held_thr[k])
                    pts = gcp(h.body, ob, thr, linkIndexA=-1, linkIndexB=ol, physicsClientId=c)
                    if pts:
                        d = min(x[8] for x in pts)
                        if d < thr - _CONFIRM_TOL:
                            out.append((("held", -1), ob, ol, False, True, d, thr))
                            if first:
                                return out
            lo, hi = lo_neg_hi[:, :3], -lo_neg_hi[:, 3:]
            for (i, j), thr in zip(self._held_links, self._held_link_thr):
                if not np.isfinite(thr) or np.any(lo[i] > hc + hh + thr) or np.any(hi[i] < hc - hh - thr):
                    continue
                pts = gcp(h.body, body, float(thr), linkIndexA=-1, linkIndexB=j, physicsClientId=c)
                if pts:
                    d = min(x[8] for x in pts)
                    if d < thr - _CONFIRM_TOL:
                        out.append((("held", -1), body, j, False, True, d, float(thr)))
                        if first:
                            return out
        return out

    def is_valid(self, q: Sequence[float]) -> bool:
        """True when ``q`` (radians, arm joint order) keeps every checked pair at its threshold."""
        self.checks += 1
        if self._held is not None:
            return not self._violations(q, first=True)
        # the same test as _violations, inlined for speed (the planner calls this ~1,000 times a plan)
        c = self._client
        body = self._body
        pb.resetJointStatesMultiDof(body, self._arm, [[float(v)] for v in q], physicsClientId=c)
        if self.world._mask_owner != body:
            self._own_masks()
        pb.performCollisionDetection(physicsClientId=c)
        for pt in pb.getContactPoints(physicsClientId=c):
            if pt[8] < -_CONFIRM_TOL and pt[1] == body and pt[2] == body:
                pts = pb.getClosestPoints(body, body, 0.0, linkIndexA=pt[3], linkIndexB=pt[4], physicsClientId=c)
                if min((x[8] for x in pts), default=0.0) < -_CONFIRM_TOL:
                    return False
        if not self._obs:
            return True
        gm = pb.getMatrixFromQuaternion
        states = pb.getLinkStates(body, self._mv, physicsClientId=c)
        frames = np.fromiter(chain.from_iterable(st[0] + gm(st[1]) for st in states), float,
                             count=12 * len(states)).reshape(-1, 12)
        feats = np.concatenate([frames, np.abs(frames[:, 3:])], axis=1)
        near = ((self._W @ feats[:, :, None])[:, None, :, 0] <= self._env_bound).all(axis=2)
        if not near.any():
            return True
        gcp = pb.getClosestPoints
        obs, thr_list, mv = self._obs, self._thr_list, self._mv
        for i, k in np.argwhere(near).tolist():
            ob, ol = obs[k]
            thr = thr_list[i][k]
            pts = gcp(body, ob, thr, linkIndexA=mv[i], linkIndexB=ol, physicsClientId=c)
            if pts and min(p[8] for p in pts) < thr - _CONFIRM_TOL:
                return False
        return True

    __call__ = is_valid

    def _classify(self, a: int, la: int, b: int, lb: int) -> Optional[tuple[tuple, int, int, bool, bool]]:
        """``(moving side, other body, other link, self_collision, held)`` for a pair of
        ``getClosestPoints``, None when it involves neither the moving links nor the held object."""
        rb, held = self._body, self._held_body
        a_moving = (a == rb and la in self._moving) or a == held
        b_moving = (b == rb and lb in self._moving) or b == held
        if not a_moving and not b_moving:
            return None
        if a == rb and b == rb:  # self-collision (the robot's fixed base included)
            return (("link", la), b, lb, True, False) if a_moving else (("link", lb), a, la, True, False)
        if a_moving and b_moving:
            # held object against one of the robot's moving links: the hand holding it never counts
            rlink = la if a == rb else lb
            if rlink in self._hand:
                return None
            return (("held", -1), rb, rlink, False, True)
        if a_moving:
            side = ("held", -1) if a == held else ("link", la)
            return (side, b, lb, False, a == held)
        side = ("held", -1) if b == held else ("link", lb)
        return (side, a, la, False, b == held)

    # ---- explanations and clearance --------------------------------------------------------------------
    def proximities(self, q: Optional[Sequence[float]] = None, max_distance: float = 0.05,
                    include_allowed: bool = False) -> list[Proximity]:
        """Every pair of the planned robot's moving links (or its held object) and another body within
        ``max_distance`` (m), closest first, exact distances (``getClosestPoints``); self-collision
        pairs are not listed (see :meth:`explain`).

        Args:
            q: arm joints to evaluate at (radians); default: where the arm is in the world now.
            include_allowed: also list the pairs the motion allows (their threshold is then -inf).
        """
        c = self._client
        w = self.world
        if q is not None:
            self.set_state(q)
        best: dict[tuple, Proximity] = {}
        held = self._held_body
        for src in ([self._body] if held is None else [self._body, held]):
            for body in w._links:
                if body == w._probe or body == src or (src == self._body and body == held):
                    continue
                for pt in pb.getClosestPoints(src, body, max_distance, physicsClientId=c):
                    cls = self._classify(pt[1], pt[3], pt[2], pt[4])
                    if cls is None or cls[3]:
                        continue
                    side, ob, ol, _, is_held = cls
                    thr = self._threshold(side, ob, ol, False)
                    if thr is None and not include_allowed:
                        continue
                    name = w.names[held] if side[0] == "held" else w.link_name(self._body, side[1])
                    prox = Proximity(link=name, body=w.names.get(ob, str(ob)), body_link=w.link_name(ob, ol),
                                     distance_m=float(pt[8]), threshold_m=-math.inf if thr is None else thr,
                                     held=is_held, key=(side, ob, ol))
                    k = (side, ob, ol)
                    if k not in best or prox.distance_m < best[k].distance_m:
                        best[k] = prox
        return sorted(best.values(), key=lambda p: p.distance_m)

    def explain(self, q: Sequence[float]) -> Optional[Proximity]:
        """The worst pair inside its threshold at ``q`` (largest violation), or None when ``q`` is valid."""
        w = self.world
        worst: Optional[Proximity] = None
        for side, ob, ol, self_col, held, d, thr in self._violations(q, first=False):
            if side[0] == "held":
                name = w.names[self._held_body]
            else:
                name = w.link_name(self._body, side[1])
            prox = Proximity(link=name, body=w.names.get(ob, str(ob)), body_link=w.link_name(ob, ol),
                             distance_m=float(d), threshold_m=float(thr), held=held, self_collision=self_col,
                             key=(side, ob, ol))
            if worst is None or prox.violation_m > worst.violation_m:
                worst = prox
        return worst

    def clearance(self, q: Sequence[float], max_distance: float = 0.25) -> Optional[Proximity]:
        """The closest checked pair within ``max_distance`` (m) at ``q``, or None; allowed pairs,
        relaxed pairs (in contact from the start) and self-collision pairs do not count."""
        for p in self.proximities(q, max_distance):
            if not p.self_collision and p.key not in self.allowed.relaxed:
                return p
        return None

    def within_limits(self, q: Sequence[float], tol: float = 1e-6) -> Optional[int]:
        """Index of the first joint of ``q`` outside the limits, or None."""
        qa = np.asarray(q, dtype=float)
        bad = np.nonzero((qa < self.lower - tol) | (qa > self.upper + tol))[0]
        return int(bad[0]) if len(bad) else None


def _rotations(quats_xyzw: np.ndarray) -> np.ndarray:
    """Rotation matrices, shape (n, 3, 3), of PyBullet quaternions ``(x, y, z, w)``, shape (n, 4)."""
    x, y, z, w = quats_xyzw.T
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], axis=1),
        np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], axis=1),
        np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], axis=1),
    ], axis=1)


def _frame(client: int, body: int, link: int) -> tuple:
    """World position and (x, y, z, w) orientation of a link's centre-of-mass frame (the frame its
    collision shape is attached to in a PyBullet multibody; the base's for -1)."""
    if link == -1:
        return pb.getBasePositionAndOrientation(body, physicsClientId=client)
    st = pb.getLinkState(body, link, computeForwardKinematics=True, physicsClientId=client)
    return st[0], st[1]


def _world_box(client: int, body: int, link: int) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = pb.getAABB(body, link, physicsClientId=client)
    lo, hi = np.array(lo), np.array(hi)
    return (lo + hi) / 2, (hi - lo) / 2


def _fit_box(samples: list[tuple]) -> tuple[np.ndarray, np.ndarray]:
    """The box (centre, half extents) in a frame whose world AABBs at the sampled frame poses were
    ``samples`` = ``[(position, quaternion xyzw, aabb centre, aabb half extents), ...]``: Bullet's
    AABB of a convex shape is its local box rotated (``btTransformAabb``), so
    ``half_world = |R| half_local`` and ``centre_world = p + R centre_local``; solved by least squares."""
    A, b, cs = [], [], []
    for p, o, wc, wh in samples:
        R = _rotations(np.array([o]))[0]
        cs.append(R.T @ (np.asarray(wc) - np.asarray(p)))
        A.extend(np.abs(R))
        b.extend(wh)
    half = np.linalg.lstsq(np.array(A), np.array(b), rcond=None)[0]
    resid = np.abs(np.array(A) @ half - np.array(b)).max()
    return np.mean(cs, axis=0), np.maximum(half, 0.0) + resid + 1e-5


def _local_boxes(robot: "LoadedRobot", links: Sequence[int], samples: int = 6) -> dict[int, tuple]:
    """Per link: its AABB in its centre-of-mass frame, from world AABBs at a few random arm
    configurations (:func:`_fit_box`). The arm is left at its configuration on entry."""
    c, body = robot.client, robot.body
    q0 = robot.joint_positions()
    rng = np.random.default_rng(0)
    data: dict[int, list] = {j: [] for j in links}
    for k in range(samples):
        robot.reset_arm(q0 if k == 0 else rng.uniform(robot.lower, robot.upper))
        for j in links:
            p, o = _frame(c, body, j)
            data[j].append((p, o, *_world_box(c, body, j)))
    robot.reset_arm(q0)
    return {j: _fit_box(v) for j, v in data.items()}


def _base_box(client: int, body: int) -> tuple:
    """A single-link body's AABB in its base (centre-of-mass) frame (:func:`_fit_box`)."""
    p, q = pb.getBasePositionAndOrientation(body, physicsClientId=client)
    data = []
    for orn in (q, (0.3826834, 0, 0, 0.9238795), (0, 0.3826834, 0, 0.9238795), (0, 0, 0.3826834, 0.9238795)):
        pb.resetBasePositionAndOrientation(body, p, orn, physicsClientId=client)
        data.append((p, orn, *_world_box(client, body, -1)))
    pb.resetBasePositionAndOrientation(body, p, q, physicsClientId=client)
    return _fit_box(data)


def _sampled_self_pairs(model: "RobotModel", robot: "LoadedRobot", candidates: list[tuple[int, int]]) -> frozenset:
    """The candidate link pairs found in collision in at least one of :data:`SELF_COLLISION_SAMPLES`
    random arm configurations (seeded) or at a named configuration, computed once per model in a
    scratch PyBullet client; the others are "never in collision" and not checked."""
    key = (model.urdf, tuple(candidates))
    if key in _SELF_PAIRS_CACHE:
        return _SELF_PAIRS_CACHE[key]
    disk = _self_pairs_file(model, candidates)
    stored = _read_self_pairs(disk, candidates)
    if stored is not None:
        _SELF_PAIRS_CACHE[key] = stored
        return stored
    c = pb.connect(pb.DIRECT)
    try:
        pb.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=c)
        body = pb.loadURDF(model.urdf, useFixedBase=True, flags=pb.URDF_USE_SELF_COLLISION | _NO_VISUALS,
                           physicsClientId=c)
        n = pb.getNumJoints(body, physicsClientId=c)
        wanted = set(candidates)
        for a in range(-1, n):
            for b in range(a + 1, n):
                if (a, b) not in wanted:
                    pb.setCollisionFilterPair(body, body, a, b, 0, physicsClientId=c)
        arm = list(robot.arm_joints)
        rng = np.random.default_rng(_SELF_PAIRS_SEED)
        configs = [*model.named_configurations.values(),
                   *rng.uniform(robot.lower, robot.upper, size=(SELF_COLLISION_SAMPLES, len(arm)))]
        seen: set[tuple[int, int]] = set()
        for q in configs:
            pb.resetJointStatesMultiDof(body, arm, [[float(v)] for v in q], physicsClientId=c)
            pb.performCollisionDetection(physicsClientId=c)
            for p in pb.getContactPoints(physicsClientId=c):
                if p[1] == body and p[2] == body:
                    seen.add((min(p[3], p[4]), max(p[3], p[4])))
    finally:
        pb.disconnect(physicsClientId=c)
    out = frozenset(p for p in candidates if p in seen)
    _SELF_PAIRS_CACHE[key] = out
    _write_self_pairs(disk, out)
    return out


def _self_pairs_file(model: "RobotModel", candidates: list[tuple[int, int]]) -> Optional[str]:
    """The disk cache file of a model's sampled self pairs (per user, in the temporary folder, next
    to the loadable URDF copies): named after a hash of everything the sampling depends on (the
    URDF's text, its meshes' sizes and times, the named configurations, the candidates, the sample
    count and seed, PyBullet's version), so a changed robot is sampled again. None: no such file can
    be named (an unreadable URDF)."""
    import hashlib
    import re
    import tempfile

    try:
        with open(model.urdf, encoding="utf-8") as f:
            text = f.read()
        meshes = []
        for name in sorted(set(re.findall(r"filename\s*=\s*[\"']([^\"']+)", text))):
            path = name if os.path.isabs(name) else os.path.join(os.path.dirname(model.urdf), name)
            st = os.stat(path) if os.path.exists(path) else None
            meshes.append((name, st.st_size if st else -1, st.st_mtime_ns if st else -1))
    except OSError:
        return None
    configs = sorted((k, [round(float(v), 9) for v in q]) for k, q in model.named_configurations.items())
    blob = repr((text, meshes, configs, candidates, SELF_COLLISION_SAMPLES, _SELF_PAIRS_SEED, pb.getAPIVersion()))
    digest = hashlib.sha1(blob.encode("utf-8")).hexdigest()[:16]
    folder = os.path.join(tempfile.gettempdir(), f"py_trees_manipulation-{os.getuid() if hasattr(os, 'getuid') else 'user'}",
                          "self_pairs")
    return os.path.join(folder, f"{os.path.splitext(os.path.basename(model.urdf))[0]}-{digest}.json")


def _read_self_pairs(path: Optional[str], candidates: list[tuple[int, int]]) -> Optional[frozenset]:
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as f:
            pairs = {tuple(p) for p in json.load(f)["pairs"]}
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not pairs <= set(candidates):  # not ours: sample again
        return None
    return frozenset(p for p in candidates if p in pairs)


def _write_self_pairs(path: Optional[str], pairs: frozenset) -> None:
    """Write atomically (several processes may sample the same robot at once); a failure only
    costs the next process the sampling."""
    if path is None:
        return
    import tempfile

    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"pairs": sorted(pairs)}, f)
        os.replace(tmp, path)
    except OSError:
        pass
