"""Grasp sets and stable placements of objects, in the object's own frame (HPP handles and contacts).

An object carries its grasps the way an HPP object carries handles: a grasp is the **TCP pose in the
object frame** at which a parallel gripper holds the object, so the grasp in the world is
``object_pose @ grasp.pose`` whatever the object's pose on the table. TCP frame (the robot
descriptions' convention, see ``sim/robots.py``): **z is the approach direction** (out of the
fingers, into the object), **y is the finger travel axis** (the fingers close along it), x completes
a right-handed frame. A top-down grasp of an upright object has TCP z = -object z.

Symmetry: a :class:`Handle` is one grasp pose plus a symmetry about an axis of the object frame
through its origin: ``order`` n gives n grasps rotated by 360/n degrees (a box face: 4); ``order`` 0
is a continuous symmetry (a cylinder about its axis), sampled at ``samples`` angles.

Defaults for primitives (:func:`box_grasps`, :func:`cylinder_grasps`, :func:`sphere_grasps`) and for
the shipped URDF objects (:func:`urdf_grasps`: the ``pybullet_data`` mug, whose handle is avoided)
are generated here; :func:`default_grasps` picks the right one. Which grasp a robot can use (finger
opening, inverse kinematics, collisions) is decided by the caller with the robot and the scene.

Placements: a :class:`Placement` is a stable resting pose of the object on one of its faces (HPP's
object contact surfaces): the object pose in a frame on the supporting surface (z up, origin at the
contact point, yaw free). :func:`box_placements` gives all six faces of a box.

Names: a box face is named by the outward axis of the object frame it faces, ``+x``, ``-x``, ``+y``,
``-y``, ``+z`` (top when upright), ``-z`` (bottom); handles are ``OBJECT/FACE`` (``box/+z``) and
grasps ``OBJECT/FACE/ANGLE`` (``box/+z/90``: the handle turned 90 degrees about its symmetry axis).

Units: metres, degrees in names only. Poses: (4, 4) homogeneous transforms.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from .poses import Pose, check_pose

#: Default depth of the TCP below the approached face, metres (the finger pads straddle the object).
GRASP_DEPTH_M = 0.03
#: Default stand-off of the pregrasp along the approach (TCP z), metres.
APPROACH_M = 0.10

_AXES = "xyz"


def _rot(axis: Sequence[float], angle: float) -> np.ndarray:
    """(3, 3) rotation by ``angle`` radians about the unit vector ``axis`` (Rodrigues)."""
    a = np.asarray(axis, dtype=float)
    a = a / np.linalg.norm(a)
    K = np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
    return np.eye(3) + math.sin(angle) * K + (1.0 - math.cos(angle)) * (K @ K)


def tcp_frame(position: Sequence[float], approach: Sequence[float], finger_axis: Sequence[float]) -> Pose:
    """(4, 4) TCP pose from its origin, approach direction (TCP z) and finger travel axis (TCP y).

    Args:
        position: TCP origin, shape (3,), metres.
        approach: direction the gripper moves in to grasp (into the object), shape (3,).
        finger_axis: direction the fingers close along, shape (3,); made orthogonal to ``approach``.

    Raises:
        ValueError: ``finger_axis`` is parallel to ``approach`` or either is zero.
    """
    z = np.asarray(approach, dtype=float)
    nz = np.linalg.norm(z)
    if nz < 1e-12:
        raise ValueError("approach direction is zero")
    z = z / nz
    y = np.asarray(finger_axis, dtype=float)
    y = y - np.dot(y, z) * z
    ny = np.linalg.norm(y)
    if ny < 1e-9:
        raise ValueError("finger axis is parallel to the approach direction")
    y = y / ny
    T = np.eye(4)
    T[:3, 0] = np.cross(y, z)
    T[:3, 1] = y
    T[:3, 2] = z
    T[:3, 3] = np.asarray(position, dtype=float)
    return T


def check_grasp_pose(pose: Pose, what: str = "grasp") -> Pose:
    """``pose`` as a float (4, 4) transform whose rotation is a proper rotation.

    Raises:
        ValueError: not (4, 4) with last row [0, 0, 0, 1], non-finite, or a rotation block that is
            scaled, sheared or a reflection (columns not orthonormal within 1e-6, or det != +1);
            the message starts with ``what``.
    """
    try:
        T = check_pose(pose)
    except ValueError as e:
        raise ValueError(f"{what}: {e}") from None
    if not np.all(np.isfinite(T)):
        raise ValueError(f"{what}: the pose holds a non-finite number")
    R = T[:3, :3]
    err = float(np.max(np.abs(R.T @ R - np.eye(3))))
    det = float(np.linalg.det(R))
    if err > 1e-6 or det < 0:
        raise ValueError(f"{what}: the pose's rotation is not a rotation (columns not orthonormal by {err:.3g}, "
                         f"determinant {det:.3g}); give position and rpy_deg or a unit quaternion (w, x, y, z)")
    return T


def translate_z(T: Pose, dz: float) -> Pose:
    """``T`` moved ``dz`` metres along its own z axis (``T @ trans(0, 0, dz)``)."""
    out = np.array(T, dtype=float)
    out[:3, 3] += dz * out[:3, 2]
    return out


@dataclass(frozen=True)
class Grasp:
    """One grasp of an object.

    Attributes:
        name: ``OBJECT/FACE/ANGLE`` (or the handle's name with ``/ANGLE``).
        handle: the handle (grasp family) it belongs to, e.g. ``box/+z``.
        pose: (4, 4) TCP pose in the object frame (z: approach, y: finger travel axis), metres.
        width_m: the object's extent between the fingers at this grasp, metres (the finger gap the
            gripper closes to; ``nan`` when unknown).
        approach_m: pregrasp stand-off along the approach direction, metres.
    """

    name: str
    handle: str
    pose: Pose
    width_m: float
    approach_m: float = APPROACH_M

    def in_world(self, object_pose: Pose) -> Pose:
        """(4, 4) TCP grasp pose in the world for an object at ``object_pose`` (world frame)."""
        return np.asarray(object_pose, dtype=float) @ self.pose

    def pregrasp_in_world(self, object_pose: Pose, approach_m: Optional[float] = None) -> Pose:
        """(4, 4) TCP pregrasp pose in the world: the grasp backed off ``approach_m`` along -z."""
        return translate_z(self.in_world(object_pose), -(self.approach_m if approach_m is None else approach_m))

    def approach_direction_world(self, object_pose: Pose) -> np.ndarray:
        """Unit approach direction (TCP z) in the world frame, shape (3,)."""
        return np.asarray(object_pose, dtype=float)[:3, :3] @ self.pose[:3, 2]


@dataclass(frozen=True)
class Handle:
    """An HPP handle: a grasp pose with a symmetry (see the module docstring).

    Attributes:
        name: handle name, ``OBJECT/NAME``.
        pose: (4, 4) TCP pose in the object frame.
        width_m: finger gap at the grasp, metres (``nan``: unknown).
        approach_m: pregrasp stand-off, metres.
        axis: symmetry axis in the object frame, through its origin, shape (3,).
        order: 1 (no symmetry), n >= 2 (n-fold), or 0 (continuous, sampled at ``samples`` angles).
        samples: grasps generated for a continuous symmetry.
    """

    name: str
    pose: Pose
    width_m: float = float("nan")
    approach_m: float = APPROACH_M
    axis: tuple[float, float, float] = (0.0, 0.0, 1.0)
    order: int = 1
    samples: int = 12

    def __post_init__(self) -> None:
        object.__setattr__(self, "pose", check_grasp_pose(self.pose, f"handle {self.name!r}"))
        if self.order < 0:
            raise ValueError(f"handle {self.name!r}: symmetry order must be >= 0, got {self.order}")
        if self.order == 0 and self.samples < 1:
            raise ValueError(f"handle {self.name!r}: a continuous symmetry needs samples >= 1")
        if np.linalg.norm(self.axis) < 1e-12:
            raise ValueError(f"handle {self.name!r}: symmetry axis is zero")

    def grasps(self) -> list[Grasp]:
        """The grasps of this handle: one per symmetry angle, in increasing angle from 0."""
        n = self.samples if self.order == 0 else self.order
        out = []
        for k in range(max(1, n)):
            ang = 2.0 * math.pi * k / max(1, n)
            T = np.eye(4)
            T[:3, :3] = _rot(self.axis, ang)
            out.append(Grasp(name=f"{self.name}/{round(math.degrees(ang)) % 360}", handle=self.name,
                             pose=T @ self.pose, width_m=self.width_m, approach_m=self.approach_m))
        return out


def _face_name(i: int, s: float) -> str:
    return ("+" if s > 0 else "-") + _AXES[i]


def box_grasps(size: Sequence[float], name: str = "box", depth_m: float = GRASP_DEPTH_M,
               approach_m: float = APPROACH_M, yaws: int = 4) -> list[Grasp]:
    """Grasps of a box centred on its frame: ``yaws`` per face, approach along each face's inward normal.

    Args:
        size: full extents (x, y, z), metres.
        name: object name (prefix of the grasp names).
        depth_m: TCP depth below the approached face, metres (clipped to the half extent: at most
            the box centre).
        approach_m: pregrasp stand-off, metres.
        yaws: grasps per face, evenly spaced about the face normal (4: the finger axis along each
            edge direction, both ways).

    Returns:
        6 * ``yaws`` grasps; ``width_m`` is the box extent along the finger axis.

    Raises:
        ValueError: a non-positive size.
    """
    sz = np.asarray(size, dtype=float)
    if sz.shape != (3,) or np.any(sz <= 0):
        raise ValueError(f"box size must be 3 positive extents (m), got {list(size)}")
    half = sz / 2.0
    out: list[Grasp] = []
    for i in (2, 0, 1):  # top/bottom faces first: the usual grasps of an upright box
        for s in (1.0, -1.0):
            n = np.zeros(3)
            n[i] = s
            j = (i + 1) % 3
            e_j = np.zeros(3)
            e_j[j] = 1.0
            d = min(depth_m, half[i])
            pos = n * (half[i] - d)
            handle = f"{name}/{_face_name(i, s)}"
            for m in range(yaws):
                ang = 2.0 * math.pi * m / yaws
                y = _rot(n, ang) @ e_j
                T = tcp_frame(pos, -n, y)
                width = float(np.abs(T[:3, 1]) @ sz)
                out.append(Grasp(name=f"{handle}/{round(math.degrees(ang)) % 360}", handle=handle, pose=T,
                                 width_m=width, approach_m=approach_m))
    return out


def cylinder_grasps(radius: float, length: float, name: str = "cylinder", depth_m: float = GRASP_DEPTH_M,
                    approach_m: float = APPROACH_M, samples: int = 12) -> list[Grasp]:
    """Grasps of a cylinder centred on its frame, axis along z.

    Top and bottom (approach along -+z, fingers across the diameter at ``samples`` angles) and side
    grasps (approach towards the axis from ``samples`` directions, fingers across the diameter,
    horizontal when the cylinder stands upright). The TCP sits ``depth_m`` inside the approached
    surface (at most on the axis).

    Returns:
        3 * ``samples`` grasps, ``width_m`` = the diameter.

    Raises:
        ValueError: a non-positive radius or length, or ``samples`` < 1.
    """
    if radius <= 0 or length <= 0:
        raise ValueError(f"cylinder radius and length must be > 0 m, got {radius}, {length}")
    if samples < 1:
        raise ValueError("samples must be >= 1")
    out: list[Grasp] = []
    for s, face in ((1.0, "+z"), (-1.0, "-z")):
        n = np.array([0.0, 0.0, s])
        pos = n * (length / 2.0 - min(depth_m, length / 2.0))
        base = tcp_frame(pos, -n, [0.0, 1.0, 0.0])
        out.extend(Handle(f"{name}/{face}", base, width_m=2.0 * radius, approach_m=approach_m,
                          axis=(0.0, 0.0, 1.0), order=0, samples=samples).grasps())
    d = np.array([1.0, 0.0, 0.0])
    side = tcp_frame(d * (radius - min(depth_m, radius)), -d, [0.0, 1.0, 0.0])
    out.extend(Handle(f"{name}/side", side, width_m=2.0 * radius, approach_m=approach_m,
                      axis=(0.0, 0.0, 1.0), order=0, samples=samples).grasps())
    return out


def sphere_grasps(radius: float, name: str = "sphere", approach_m: float = APPROACH_M,
                  samples: int = 8) -> list[Grasp]:
    """Grasps of a sphere centred on its frame: from above (fingers at ``samples`` angles) and from
    ``samples`` horizontal directions, TCP at the centre, ``width_m`` = the diameter.

    Raises:
        ValueError: a non-positive radius.
    """
    if radius <= 0:
        raise ValueError(f"sphere radius must be > 0 m, got {radius}")
    top = tcp_frame([0.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0])
    side = tcp_frame([0.0, 0.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 1.0, 0.0])
    return (Handle(f"{name}/top", top, width_m=2.0 * radius, approach_m=approach_m, order=0,
                   samples=samples).grasps()
            + Handle(f"{name}/side", side, width_m=2.0 * radius, approach_m=approach_m, order=0,
                     samples=samples).grasps())


# ---- shipped URDF objects ------------------------------------------------------------------------
# pybullet_data/objects/mug.urdf at scale 1 (measured from mug_col.obj by ray casts): a body of radius
# 0.0423 m from z = -0.004 to 0.104 m, the handle on the +y side out to y = 0.084 m. A top-down grasp
# closes the fingers across the body; with the finger axis near the handle's direction (+-y) one
# finger lands on the handle: in the collision world the Panda's open fingers touch it from 75
# degrees off the mug's x axis (scale 0.8; tests/unit/test_grasp_choice.py), so the finger axis
# stays within 45 degrees of it (lifted in the simulator at 0, 45 and 60 degrees).
_MUG = {"radius": 0.0423, "height": 0.104, "grasp_height": 0.05625}


def mug_grasps(scale: float = 1.0, name: str = "mug", approach_m: float = APPROACH_M) -> list[Grasp]:
    """Top-down grasps of the ``pybullet_data`` mug (``objects/mug.urdf``) that avoid its handle.

    Fourteen grasps: the finger axis at 0, +-15, +-30 and +-45 degrees from the mug's x axis (the
    handle points along +y), and the same turned by 180 degrees; the TCP on the mug's axis at 54 %
    of its height (the fingers straddle the body below the rim); ``width_m`` = the body's diameter.

    Args:
        scale: the URDF's ``globalScaling`` (the scene's ``scale``).
    """
    if scale <= 0:
        raise ValueError(f"scale must be > 0, got {scale}")
    pos = [0.0, 0.0, _MUG["grasp_height"] * scale]
    out = []
    for deg in (0, 30, -30, 15, -15, 45, -45, 180, 210, 150, 195, 165, 225, 135):
        a = math.radians(deg)
        T = tcp_frame(pos, [0.0, 0.0, -1.0], [math.cos(a), math.sin(a), 0.0])
        out.append(Grasp(name=f"{name}/top/{deg % 360}", handle=f"{name}/top", pose=T,
                         width_m=2.0 * _MUG["radius"] * scale, approach_m=approach_m))
    return out


#: Grasp generators of the shipped URDF objects, by URDF path (as written in a scene).
URDF_GRASPS = {"objects/mug.urdf": mug_grasps}


def urdf_grasps(urdf: str, scale: float = 1.0, name: str = "object") -> Optional[list[Grasp]]:
    """Default grasps of a shipped URDF object (a key of :data:`URDF_GRASPS`), or None if unknown."""
    fn = URDF_GRASPS.get(urdf.replace("\\", "/"))
    return None if fn is None else fn(scale=scale, name=name)


def default_grasps(shape: str, name: str, size: Optional[Sequence[float]] = None, radius: Optional[float] = None,
                   length: Optional[float] = None, **kw) -> list[Grasp]:
    """Default grasps of a primitive: ``shape`` is ``box`` (``size``), ``cylinder`` (``radius``,
    ``length``) or ``sphere`` (``radius``); keyword arguments go to the generator.

    Raises:
        ValueError: unknown shape or missing dimensions.
    """
    if shape == "box":
        if size is None:
            raise ValueError("a box needs size")
        return box_grasps(size, name=name, **kw)
    if shape == "cylinder":
        if radius is None or length is None:
            raise ValueError("a cylinder needs radius and length")
        return cylinder_grasps(radius, length, name=name, **kw)
    if shape == "sphere":
        if radius is None:
            raise ValueError("a sphere needs radius")
        kw.pop("depth_m", None)
        return sphere_grasps(radius, name=name, **kw)
    raise ValueError(f"unknown shape {shape!r}; known: box, cylinder, sphere")


# ---- placements ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Placement:
    """A stable resting pose of an object on one of its faces.

    Attributes:
        face: contact surface name, ``OBJECT/FACE`` (``box/-z``: standing on its bottom).
        pose: (4, 4) object pose in a surface frame (origin at the contact point on the surface,
            z up), for yaw 0 about the surface normal; rotate about z for other yaws.
        height_m: height of the object origin above the surface, metres.
    """

    face: str
    pose: Pose
    height_m: float

    def on_surface(self, surface_point: Sequence[float], yaw_rad: float = 0.0) -> Pose:
        """(4, 4) world pose of the object resting on a horizontal surface.

        Args:
            surface_point: the point on the surface under the object's origin, world frame, metres.
            yaw_rad: rotation about the world z axis, radians.
        """
        T = np.eye(4)
        T[:3, :3] = _rot((0.0, 0.0, 1.0), yaw_rad)
        T[:3, 3] = np.asarray(surface_point, dtype=float)
        return T @ self.pose


# rotation that turns the face with outward normal (axis i, sign s) to point down (-z)
def _face_down(i: int, s: float) -> np.ndarray:
    if i == 2:
        return np.eye(3) if s < 0 else _rot((1.0, 0.0, 0.0), math.pi)
    if i == 0:
        return _rot((0.0, 1.0, 0.0), math.pi / 2 if s > 0 else -math.pi / 2)
    return _rot((1.0, 0.0, 0.0), -math.pi / 2 if s > 0 else math.pi / 2)


def box_placements(size: Sequence[float], name: str = "box") -> list[Placement]:
    """The six stable placements of a box centred on its frame, one per face (bottom ``-z`` first).

    Raises:
        ValueError: a non-positive size.
    """
    sz = np.asarray(size, dtype=float)
    if sz.shape != (3,) or np.any(sz <= 0):
        raise ValueError(f"box size must be 3 positive extents (m), got {list(size)}")
    out = []
    for i, s in ((2, -1.0), (2, 1.0), (0, 1.0), (0, -1.0), (1, 1.0), (1, -1.0)):
        T = np.eye(4)
        T[:3, :3] = _face_down(i, s)
        T[2, 3] = sz[i] / 2.0
        out.append(Placement(face=f"{name}/{_face_name(i, s)}", pose=T, height_m=float(sz[i] / 2.0)))
    return out


def cylinder_placements(radius: float, length: float, name: str = "cylinder") -> list[Placement]:
    """The two stable placements of a cylinder (axis z, centred): standing on ``-z`` or on ``+z``."""
    if radius <= 0 or length <= 0:
        raise ValueError(f"cylinder radius and length must be > 0 m, got {radius}, {length}")
    out = []
    for s in (-1.0, 1.0):
        T = np.eye(4)
        T[:3, :3] = _face_down(2, s)
        T[2, 3] = length / 2.0
        out.append(Placement(face=f"{name}/{_face_name(2, s)}", pose=T, height_m=length / 2.0))
    return out


def tilt_deg(object_pose: Pose) -> float:
    """Angle between the object's z axis and world z, degrees in [0, 180] (0: upright)."""
    c = float(np.clip(np.asarray(object_pose, dtype=float)[2, 2], -1.0, 1.0))
    return math.degrees(math.acos(c))


def resting_face(object_pose: Pose, faces: Sequence[Placement]) -> Placement:
    """The placement of ``faces`` whose face points most nearly down for an object at ``object_pose``
    (world frame): the face the object rests on."""
    R = np.asarray(object_pose, dtype=float)[:3, :3]
    # a placement's pose maps the object frame to the surface frame (z up); the face points down
    # there when R_world ~ Rz(yaw) @ R_placement, i.e. both send the same object axis to -z
    best, best_dot = None, -2.0
    for p in faces:
        down_in_object = p.pose[:3, :3].T @ np.array([0.0, 0.0, -1.0])  # the face normal, object frame
        d = float((R @ down_in_object) @ np.array([0.0, 0.0, -1.0]))
        if d > best_dot:
            best, best_dot = p, d
    if best is None:
        raise ValueError("no placements given")
    return best


class NoGraspsError(ValueError):
    """An object with no grasp set: a URDF this module has no defaults for, that declares no ``grasps:``."""


def object_grasps(obj: object, where: str = "") -> list[Grasp]:
    """:func:`grasps_for_object`, or an error telling the user to declare them.

    Args:
        obj: a scene object (duck-typed as :func:`grasps_for_object`).
        where: where the object is written, for the message (``"scene.objects[2]"``).

    Raises:
        NoGraspsError: the object has no grasps (a URDF without defaults and no ``grasps:``).
    """
    out = grasps_for_object(obj)
    if not out:
        name = getattr(obj, "name", "object")
        what = f"URDF {getattr(obj, 'urdf', '')!r}" if getattr(obj, "urdf", None) else "shape"
        known = ", ".join(sorted(URDF_GRASPS))
        raise NoGraspsError(
            f"object {name!r} ({what}) has no known grasps: declare them under "
            f"{where or 'its scene entry'}.grasps (a list of {{name, pose (the TCP in the object frame: z approach, "
            f"y finger axis), symmetry, approach_m, width_m}}; see docs/grasps.md). Primitives and the "
            f"shipped {known} have defaults")
    return out


def select_grasps(grasps: Sequence[Grasp], names: Sequence[str], object_name: str = "") -> list[Grasp]:
    """The grasps of ``grasps`` that ``names`` name, in the set's order.

    A name is a grasp (``mug/top/30``), a handle (``mug/top``: all its grasps), or either without the
    object's prefix (``top``, ``top/30``).

    Raises:
        ValueError: a name no grasp or handle of the set has (the message lists the handles).
    """
    prefix = f"{object_name}/" if object_name else ""
    chosen: set[str] = set()
    for raw in names:
        name = str(raw)
        full = [name] + ([prefix + name] if prefix and not name.startswith(prefix) else [])
        hit = [g.name for g in grasps if g.name in full or g.handle in full]
        if not hit:
            import difflib

            handles = list(dict.fromkeys(g.handle for g in grasps))
            options = handles + [g.name for g in grasps]
            close = difflib.get_close_matches(full[-1], options, n=2, cutoff=0.6)
            hint = (f"did you mean {' or '.join(repr(c) for c in close)}? " if close else "") + \
                f"(its handles: {', '.join(handles)})"
            raise ValueError(f"object {object_name or 'the object'!r} has no grasp or handle {name!r}; {hint}")
        chosen.update(hit)
    return [g for g in grasps if g.name in chosen]


def grasps_for_object(obj: object) -> list[Grasp]:
    """The grasp set of a scene object, in its own frame: the handles it declares, else the defaults.

    Duck-typed on a scene object (``scene.spec.ObjectSpec``): ``grasps`` (declared :class:`Handle` s,
    optional), ``primitive`` (``shape``, ``size``, ``radius``, ``length``), ``urdf`` and ``scale``,
    ``name``. Declared handles win (a URDF object's are written in the URDF's units and scale with its
    ``scale``: positions and ``width_m``, as its geometry does); a primitive gets
    :func:`default_grasps`; a shipped URDF object :func:`urdf_grasps`.

    Returns:
        The grasps (an empty list when the object is a URDF this module does not know and it declares
        none: the caller should ask the user to declare ``grasps:``).
    """
    name = str(getattr(obj, "name", "object"))
    declared = getattr(obj, "grasps", None)
    if declared:
        out: list[Grasp] = []
        for h in declared:
            out.extend(h.grasps() if isinstance(h, Handle) else [h])
        scale = float(getattr(obj, "scale", 1.0) or 1.0) if getattr(obj, "urdf", None) else 1.0
        if scale != 1.0:  # written in the URDF's own units, like its geometry: they scale with it
            out = [_scaled(g, scale) for g in out]
        return out
    pr = getattr(obj, "primitive", None)
    if pr is not None:
        return default_grasps(pr.shape, name, size=getattr(pr, "size", None), radius=getattr(pr, "radius", None),
                              length=getattr(pr, "length", None))
    urdf = getattr(obj, "urdf", None)
    if isinstance(urdf, str):
        return urdf_grasps(urdf, float(getattr(obj, "scale", 1.0) or 1.0), name=name) or []
    return []


def _scaled(g: Grasp, scale: float) -> Grasp:
    """``g`` on the object scaled by ``scale`` (URDF ``globalScaling``): the TCP position and the
    width between the fingers scale, the orientation and the approach stand-off do not."""
    import dataclasses

    T = np.array(g.pose, dtype=float)
    T[:3, 3] *= scale
    return dataclasses.replace(g, pose=T, width_m=g.width_m * scale)


def placements_for_object(obj: object) -> list[Placement]:
    """The stable placements of a scene object (duck-typed as :func:`grasps_for_object`): every face
    of a box primitive, both ends of a cylinder; the shipped mug stands on its bottom only; others: []."""
    name = str(getattr(obj, "name", "object"))
    pr = getattr(obj, "primitive", None)
    if pr is not None:
        if pr.shape == "box":
            return box_placements(pr.size, name=name)
        if pr.shape == "cylinder":
            return cylinder_placements(pr.radius, pr.length, name=name)
        return []
    if str(getattr(obj, "urdf", "")).replace("\\", "/") == "objects/mug.urdf":
        # the mug's frame is at its bottom (z = -0.004 m at scale 1): upright on the surface
        s = float(getattr(obj, "scale", 1.0) or 1.0)
        T = np.eye(4)
        T[2, 3] = 0.00375 * s
        return [Placement(face=f"{name}/bottom", pose=T, height_m=0.00375 * s)]
    return []
