"""What the simulated scene looks like, for 3D viewers: frames of every link and their visuals.

:class:`SceneModel` reads a :class:`~py_trees_manipulation.sim.backend.SimBackend`'s bodies
(robots, fixtures, objects, doors: everything in ``backend.world.body_names()``) once, and then
gives, tick after tick, the world pose of every link frame. The run log and the live Foxglove
server (:mod:`py_trees_manipulation.viewer.foxglove`) turn these into ``foxglove.FrameTransforms``
and a ``foxglove.SceneUpdate``; this module does not import foxglove.

Frames (child frames of ``world``): a body's base link is the frame named after the body
(``"panda"``, ``"table"``, ``"mug"``); every other link is ``"<body>/<URDF link name>"``
(``"panda/panda_hand"``, ``"door/handle"``). Frames are the URDF link frames (PyBullet's
``worldLinkFrame``; for the base, the base's centre-of-mass frame moved back by its inertial
origin).

Visuals: PyBullet's visual shapes of each link (``getVisualShapeData``): boxes, spheres, cylinders
and capsules as primitives, meshes as files. A visual mesh larger than ``max_mesh_bytes`` is
replaced by the link's collision mesh when that one is small enough (the Panda's visual meshes are
about 1 MB of OBJ text each, its collision meshes 20 to 140 kB); else the visual keeps its file
path and is drawn from there (Foxglove desktop reads ``file://`` URLs).
"""

from __future__ import annotations

from ..bullet import _quiet_import  # noqa: F401  (first: pybullet's import banner)

import functools
import os
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np
import pybullet as pb

from ..conventions import quat_wxyz_from_xyzw

#: visual meshes larger than this (bytes) are replaced by the collision mesh, or referenced by path
MAX_MESH_BYTES = 256 * 1024

_SHAPES = {pb.GEOM_BOX: "box", pb.GEOM_SPHERE: "sphere", pb.GEOM_CYLINDER: "cylinder",
           pb.GEOM_CAPSULE: "capsule", pb.GEOM_MESH: "mesh", pb.GEOM_PLANE: "plane"}


@dataclass
class Visual:
    """One visual shape, fixed in a link frame.

    Attributes:
        frame_id: the link frame it moves with.
        shape: ``"box"``, ``"sphere"``, ``"cylinder"``, ``"capsule"``, ``"mesh"`` or ``"plane"``.
        size: (3,) metres: box extents x, y, z; sphere diameter (x = y = z); cylinder and capsule
            diameter, diameter, length (along the shape's z); mesh scale factors; plane extents.
        position: (3,) metres, in the frame.
        orientation: (4,) quaternion w, x, y, z, in the frame.
        rgba: colour, each 0 to 1.
        mesh_path: absolute path of the mesh file (``shape == "mesh"``), else ``""``.
        mesh_data: the mesh file's bytes when at most ``max_mesh_bytes``, else ``b""`` (use the path).
        entity: name of the scene entity it belongs to (the body name).
    """

    frame_id: str
    shape: str
    size: np.ndarray
    position: np.ndarray
    orientation: np.ndarray
    rgba: tuple[float, float, float, float]
    entity: str
    mesh_path: str = ""
    mesh_data: bytes = b""


@dataclass
class _Body:
    name: str
    body: int
    links: list[int]
    frames: list[str]
    base_offset: tuple[Any, Any]  # inverse of the base's local inertial frame (pos, orn xyzw)
    static: bool
    cached: Optional[list[tuple[str, np.ndarray, np.ndarray]]] = field(default=None)


@functools.lru_cache(maxsize=256)
def _file_bytes(path: str, mtime: float) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _mesh_bytes(path: str, limit: int) -> Optional[bytes]:
    try:
        st = os.stat(path)
    except OSError:
        return None
    if st.st_size > limit:
        return None
    try:
        return _file_bytes(path, st.st_mtime)
    except OSError:
        return None


def _mul(p1: Any, q1: Any, p2: Any, q2: Any) -> tuple[Any, Any]:
    return pb.multiplyTransforms(p1, q1, p2, q2)


class SceneModel:
    """Frames and visuals of a :class:`~py_trees_manipulation.sim.backend.SimBackend` scene.

    Args:
        backend: the simulator backend (read, never changed).
        max_mesh_bytes: largest mesh file embedded as data (bytes).

    Attributes:
        world_frame: ``"world"``, the parent of every frame.
    """

    world_frame = "world"

    def __init__(self, backend: Any, max_mesh_bytes: int = MAX_MESH_BYTES) -> None:
        self._backend = backend
        self._client = backend.client
        self.max_mesh_bytes = int(max_mesh_bytes)
        self._bodies: list[_Body] = []
        c = self._client
        for name in backend.world.body_names():
            body = backend.world.body_id(name)
            n = pb.getNumJoints(body, physicsClientId=c)
            links = list(range(n))
            frames = [name] + [f"{name}/{pb.getJointInfo(body, j, physicsClientId=c)[12].decode()}" for j in links]
            dyn = pb.getDynamicsInfo(body, -1, physicsClientId=c)
            base_offset = pb.invertTransform(dyn[3], dyn[4])
            movable = any(pb.getJointInfo(body, j, physicsClientId=c)[2] != pb.JOINT_FIXED for j in links)
            static = dyn[0] == 0.0 and not movable  # no mass, no joints that move: never moves
            self._bodies.append(_Body(name, body, links, frames, base_offset, static))
        # each arm's TCP: a constant offset from its TCP link (identity for the Panda's grasp target)
        self._tcps: list[tuple[str, int, int, Any, Any]] = []
        for name, arm in getattr(backend, "arms", {}).items():
            robot = getattr(arm, "robot", None)
            if robot is None or getattr(robot, "tcp_link", None) is None:
                continue
            from ..geometry.poses import pq_from_pose
            from ..conventions import quat_xyzw_from_wxyz

            p, q = pq_from_pose(robot.tcp_in_link)
            self._tcps.append((f"{name}/tcp", robot.body, int(robot.tcp_link), tuple(float(x) for x in p),
                               quat_xyzw_from_wxyz(q)))

    # -- per tick ------------------------------------------------------------------------------
    def frames(self) -> list[tuple[str, np.ndarray, np.ndarray]]:
        """``[(frame_id, position (3,) m, quaternion (4,) w, x, y, z)]``: every link frame in the
        world frame, now, then each arm's TCP as ``"<arm>/tcp"`` (``arm.tcp_pose()``)."""
        return [(f, np.asarray(p, dtype=float), quat_wxyz_from_xyzw(q)) for f, p, q in self.frames_xyzw()]

    def frames_xyzw(self) -> list[tuple[str, tuple[float, ...], tuple[float, ...]]]:
        """:meth:`frames` as PyBullet gives them: ``(frame_id, (x, y, z), (qx, qy, qz, qw))``
        tuples (no arrays: the run log calls this every tick)."""
        out: list[tuple[str, Any, Any]] = []
        c = self._client
        for b in self._bodies:
            if b.static and b.cached is not None:
                out.extend(b.cached)
                continue
            p, q = pb.getBasePositionAndOrientation(b.body, physicsClientId=c)
            p, q = _mul(p, q, *b.base_offset)
            mine = [(b.frames[0], p, q)]
            if b.links:
                states = pb.getLinkStates(b.body, b.links, computeForwardKinematics=1, physicsClientId=c)
                mine.extend((frame, st[4], st[5]) for frame, st in zip(b.frames[1:], states))
            if b.static:
                b.cached = mine
            out.extend(mine)
        for frame, body, link, p_off, q_off in self._tcps:
            st = pb.getLinkState(body, link, computeForwardKinematics=1, physicsClientId=c)
            p, q = _mul(st[4], st[5], p_off, q_off)
            out.append((frame, p, q))
        return out

    # -- once ----------------------------------------------------------------------------------
    def visuals(self) -> list[Visual]:
        """Every visual shape of every body, in its link frame (see the module docstring)."""
        out: list[Visual] = []
        c = self._client
        for b in self._bodies:
            frame_of = {-1: b.frames[0], **{j: f for j, f in zip(b.links, b.frames[1:])}}
            collisions: dict[int, list[Any]] = {}
            for v in pb.getVisualShapeData(b.body, physicsClientId=c):
                link, gtype, dims, fname, lpos, lorn, rgba = v[1], v[2], v[3], v[4], v[5], v[6], v[7]
                shape = _SHAPES.get(gtype)
                if shape is None or link not in frame_of:
                    continue
                path = fname.decode("utf-8", "replace") if isinstance(fname, bytes) else str(fname or "")
                pos, orn = np.asarray(lpos, dtype=float), quat_wxyz_from_xyzw(lorn)
                vis = Visual(frame_id=frame_of[link], shape=shape, size=self._size(shape, dims), position=pos,
                             orientation=orn, rgba=tuple(float(x) for x in rgba), entity=b.name)  # type: ignore[arg-type]
                if shape == "mesh":
                    vis.mesh_path = os.path.abspath(path) if path else ""
                    data = _mesh_bytes(vis.mesh_path, self.max_mesh_bytes) if path else None
                    if data is None:
                        if link not in collisions:
                            collisions[link] = list(pb.getCollisionShapeData(b.body, link, physicsClientId=c))
                        sub = self._collision_mesh(b.body, link, collisions[link])
                        if sub is not None:
                            vis.mesh_path, data, vis.size, vis.position, vis.orientation = sub
                    vis.mesh_data = data or b""
                out.append(vis)
        return out

    @staticmethod
    def _size(shape: str, dims: Any) -> np.ndarray:
        d = [float(x) for x in dims]
        if shape == "sphere":
            return np.array([2 * d[0]] * 3)
        if shape in ("cylinder", "capsule"):  # PyBullet: (length, radius, -)
            return np.array([2 * d[1], 2 * d[1], d[0]])
        return np.array(d[:3])

    def _collision_mesh(self, body: int, link: int, shapes: list[Any]) -> Optional[tuple[str, bytes, np.ndarray, np.ndarray, np.ndarray]]:
        """The link's one collision mesh, if it is small enough: (path, bytes, scale, position,
        orientation in the link frame). PyBullet gives collision frames relative to the link's
        centre of mass, hence the inertial origin in front."""
        meshes = [s for s in shapes if s[2] == pb.GEOM_MESH]
        if len(meshes) != 1:
            return None
        s = meshes[0]
        path = s[4].decode("utf-8", "replace") if isinstance(s[4], bytes) else str(s[4])
        data = _mesh_bytes(path, self.max_mesh_bytes)
        if data is None:
            return None
        dyn = pb.getDynamicsInfo(body, link, physicsClientId=self._client)
        p, q = _mul(dyn[3], dyn[4], s[5], s[6])
        return (os.path.abspath(path), data, np.array([float(x) for x in s[3][:3]]), np.asarray(p, dtype=float),
                quat_wxyz_from_xyzw(q))
