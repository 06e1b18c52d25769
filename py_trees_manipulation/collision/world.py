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

Speed (:meth:`StateChecker.is_valid`, ~35 us a state on the clutter scene): one
``resetJointStatesMultiDof`` puts the arm at the state; PyBullet's own contact pass
(``performCollisionDetection``, the collision filters letting through only this robot's checked
self-collision pairs) finds the self-collisions (it reports only penetrations for convex pairs,
never a distance below the padding, so it cannot do the environment); Bullet's world AABB of each
moving link (``getAABB``, read once per state) against the obstacles' AABBs, cached when the checker
is made (the scene does not move while a motion is planned) and grown by each pair's threshold, is
the broadphase of the environment (plain Python box tests for the usual few hundred pairs, NumPy for
more); only the few link pairs it leaves get an exact ``getClosestPoints`` with the threshold as its
distance. :meth:`StateChecker.proximities` measures only the bodies whose boxes come within its
range of the moving links' box.

Sources: MoveIt's planning scene (padding, allowed collision matrix, attached bodies and their touch
links) and Setup Assistant (disabling never-colliding link pairs by sampling); Coumans & Bai,
PyBullet quickstart guide (``getClosestPoints``, ``getLinkStates``, ``getAABB``).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence

import numpy as np
import pybullet as pb
import pybullet_data

from ..conventions import quat_wxyz_from_xyzw, quat_xyzw_from_wxyz
from ..bullet.clients import ClosedOnDelete, disconnect
from ..geometry.poses import Pose, invert, pose_from_pq, pq_from_pose
from .contacts import AllowedContacts, Collision, Proximity  # noqa: F401  (re-exported: their home was here)
from .state_checker import StateChecker

if TYPE_CHECKING:  # pragma: no cover
    from ..bullet.robots import LoadedRobot, RobotModel
    from ..scene.spec import PrimitiveSpec, SceneSpec

__all__ = ["CollisionWorld", "StateChecker", "Collision", "AllowedContacts", "Proximity", "primitive_shapes",
           "DEFAULT_PADDING_M"]

DEFAULT_PADDING_M = 0.01
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


@dataclass
class _Robot:
    name: str
    loaded: "LoadedRobot"
    moving: frozenset          # link indices whose pose depends on an arm joint
    hand: frozenset            # the flange link, its descendants and the fingers
    parent: dict               # link -> parent link
    self_pairs: frozenset      # link pairs checked for self-collision
    collidable: frozenset      # links with a collision shape


@dataclass
class _Attached:
    name: str
    body: int
    rel_pos: tuple            # object base in the robot's TCP *link* frame
    rel_orn: tuple


class CollisionWorld(ClosedOnDelete):
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
        kept_plans: the motions the check before the run planned in this world, for the run's
            motions to follow (:class:`~.kept_plans.KeptPlans`), or None (every motion planned as
            it starts).
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
        self.kept_plans: Any = None
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
        from ..bullet.contact import apply_fixture_material, apply_object_material
        from ..bullet.robots import model_by_name

        settings = scene.extra.get("motion_planning") if hasattr(scene, "extra") else None
        pad = padding_m if padding_m is not None else getattr(settings, "padding_m", DEFAULT_PADDING_M)
        step = max_step_rad if max_step_rad is not None else getattr(settings, "max_step_rad", 0.01)
        world = cls(padding_m=pad, max_step_rad=step)
        try:
            for f in scene.fixtures:
                apply_fixture_material(world.client, world.add_urdf(f.name, f.urdf_path, f.pose, scale=f.scale), f)
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
                    body = world.add_primitive(o.name, o.primitive, o.pose, movable=not o.fixed)
                else:
                    body = world.add_urdf(o.name, o.urdf_path, o.pose, scale=o.scale, movable=not o.fixed)
                apply_object_material(world.client, body, o)
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
        self.robots[name] = robot
        self._robots[name] = _Robot(name, robot, frozenset(moving), frozenset(hand), parent, self_pairs, collidable)
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
        """Teleport a robot's arm joints (rad, the model's order) and gripper: ``fingers`` are the
        actuated joints' positions (``LoadedRobot.finger_targets``: both finger joints, m each, or a
        linkage's driver), every ``<mimic>`` joint following its leader."""
        r = self.robots[robot]
        pb.resetJointStatesMultiDof(r.body, list(r.arm_joints), [[float(v)] for v in arm],
                                    physicsClientId=self.client)
        if fingers is not None:
            r.reset_gripper(fingers)

    def tcp_pose(self, robot: str, q: Optional[Sequence[float]] = None) -> Pose:
        """(4, 4) TCP pose of ``robot`` (at arm joints ``q`` when given: the arm is teleported)."""
        r = self.robots[robot]
        if q is not None:
            self.set_robot_state(robot, q)
        return r.tcp_pose()

    def save_state(self) -> dict[str, Any]:
        """Everything a check may move: every body's base pose and joint positions (robots, their
        fingers, doors, drawers, objects) and what each robot holds; :meth:`restore_state` puts it back."""
        c = self.client
        bodies = {}
        for name, body in self.bodies.items():
            p, q = pb.getBasePositionAndOrientation(body, physicsClientId=c)
            n = pb.getNumJoints(body, physicsClientId=c)
            joints = ({j: s[0] for j, s in enumerate(pb.getJointStates(body, list(range(n)), physicsClientId=c))}
                      if n else {})
            bodies[name] = (p, q, joints)
        return {"bodies": bodies, "attached": dict(self._attached)}

    def restore_state(self, state: Mapping[str, Any]) -> None:
        """Put the world back as :meth:`save_state` found it (poses, joints, attachments)."""
        for name, (p, q, joints) in state["bodies"].items():
            if name in self.bodies:
                self.set_base_pq(name, p, q)
                if joints:
                    self.set_joint_positions(name, joints)
        self._attached = dict(state["attached"])

    def object_at_tcp(self, robot: str, radius_m: float) -> Optional[str]:
        """The body whose geometry comes within ``radius_m`` of ``robot``'s TCP (what its fingers would
        close on): a movable object first, else another body (a door's lever, a drawer's bar), never a
        robot; None when there is none."""
        tcp = self.tcp_pose(robot)[:3, 3]
        found = [self.names.get(body) for body, _ in self.probe_bodies(tcp, radius_m)]
        found = [n for n in found if n is not None and n not in self.robots]
        movable = [n for n in found if n in self.objects]
        return (movable or found or [None])[0]

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
        self._attached[robot] = _Attached(obj, body, tuple(p.tolist()), quat_xyzw_from_wxyz(q))

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

    def contact_material(self, body: int, link: int = -1) -> Any:
        """A body's link's contact material (:class:`~py_trees_manipulation.scene.contact.ContactMaterial`,
        per contact point, as the simulator has it: the scene's fixtures and objects, the robots' URDFs),
        or None when it is rigid."""
        from ..bullet.contact import contact_material

        return contact_material(self.client, body, link)

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
        r = radius + 2e-3  # the probe sphere's radius and a margin
        lo, hi = [v - r for v in position], [v + r for v in position]
        for body, links in self._links.items():
            for link in links:  # only bodies with a link box round the point (one box test each)
                a, b = pb.getAABB(body, link, physicsClientId=c)
                if a[0] <= hi[0] and a[1] <= hi[1] and a[2] <= hi[2] and b[0] >= lo[0] and b[1] >= lo[1] and b[2] >= lo[2]:
                    break
            else:
                continue
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
        disconnect(self.client)

    def __repr__(self) -> str:
        return (f"CollisionWorld(robots={list(self.robots)}, bodies={len(self.bodies)}, padding={self.padding_m:g} m"
                f"{', closed' if self.closed else ''})")


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
