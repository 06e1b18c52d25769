"""Our own articulated assets, generated as URDF text from parameters: a door, a drawer cabinet.

Plain Python (numpy and transforms3d for the frames); no PyBullet import. Each generator writes
its URDF to a cache directory (content-addressed, so the same parameters give the same path) and
returns an asset record with the path, the link and joint names and the poses a behaviour needs.
:mod:`py_trees_manipulation.bullet.articulated` adds what URDF cannot express (latch, handle return
spring, Coulomb friction) every physics step.

Model frame (both assets)
-------------------------
Right-handed, z up, origin on the floor. **The front faces +x**: place the model so that its +x
axis points at the robot (the viewer). Widths run along y. The base link is static (mass 0), so
``loadURDF`` fixes it; its inertial origin is the link origin, so PyBullet's base pose *is* the
model frame. Poses are (4, 4) homogeneous transforms, metres; quaternions elsewhere are
``(w, x, y, z)``.

Door (:func:`door_asset`, :func:`door_urdf`)
--------------------------------------------
=================  ==========  ==========================================================
name               kind        what
=================  ==========  ==========================================================
``door_frame``     base link   jambs and header around a ``width_m + 2 * 4 mm`` doorway
``door_leaf``      link        the leaf; its frame is on the hinge line at floor level,
                               axes parallel to the model frame when closed
``door_hinge``     revolute    frame -> leaf, axis ``(0, 0, +-1)`` chosen so that the
                               angle runs ``0 .. max_opening_deg`` in the opening direction
                               (toward +x for ``opening='pull'``, toward -x for ``'push'``)
``door_handle``    link        lever handle on the front (+x) face; its frame is the pivot
``handle_joint``   revolute    leaf -> handle, axis ``(0, 0, 1)`` of the pivot frame, angle
                               ``0 .. handle.max_angle_deg``, positive pushes the lever down
=================  ==========  ==========================================================

``hinge_side`` is as seen by the viewer standing on +x looking at the door (``'left'``: hinge on
-y). The hinge line is on the front face for a pull door and on the back face for a push door.

Handle frames (MoveIt ``GetDoorHandle`` convention, see :mod:`..geometry.affordances`):

- ``handle_pivot_in_model``: on the lever's axis of rotation, at the lever bar; z = the
  ``handle_joint`` axis (so a positive twist about +z turns the handle toward unlatching), x along
  the lever from the pivot to its tip (toward the hinge), y = down (the tip's initial motion).
  z is therefore +x (out of the door) for a left-hinged door and -x for a right-hinged one.
  Pass it to :func:`~..geometry.affordances.calculate_grasp_and_twist_subframes`.
- ``handle_grasp_in_model``: a parallel-gripper TCP pose on the lever at
  ``handle.grasp_fraction`` of its length (MoveIt ``handle_grasp_offset_percent``): z into the door
  (-x, the approach), y vertical up (the fingers close across the bar), x = y cross z (-y).
- ``hinge_bottom_in_model`` / ``hinge_top_in_model``: poses on the hinge line at the bottom and top
  of the leaf with z into the door (-x), as
  :func:`~..geometry.affordances.calculate_move_along_arc_subframes` expects. The subframes it
  makes turn the grasp toward the viewer for a positive angle, which opens a pull door; a push door
  opens with a negative angle (:attr:`DoorAsset.arc_opening_sign`).

All of these are for the closed door with the handle at rest; the ``*_in_handle_link`` poses give
them on the moving handle link (use PyBullet's ``getLinkState(...)[4:6]``, the URDF link frame).

Cabinet (:func:`cabinet_asset`, :func:`cabinet_urdf`)
-----------------------------------------------------
``cabinet_body`` (base link: sides, top, bottom, back and a lower front panel), ``drawer`` (link:
an open box with a bar handle on its front), ``drawer_joint`` (prismatic, axis +x, ``0 ..
drawer_travel_m``: the opening in metres). ``drawer_grasp_in_model`` is the TCP pose at the centre
of the handle bar, same axes as the door grasp; pull along ``drawer_axis_in_model`` (+x).
"""

from __future__ import annotations

import hashlib
import math
import os
import tempfile
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np
import transforms3d as t3d
from numpy.typing import NDArray

from py_trees_manipulation.geometry.poses import Pose, invert

DOOR_FRAME_LINK = "door_frame"
DOOR_LEAF_LINK = "door_leaf"
DOOR_HANDLE_LINK = "door_handle"
DOOR_HINGE_JOINT = "door_hinge"
HANDLE_JOINT = "handle_joint"
CABINET_BODY_LINK = "cabinet_body"
DRAWER_LINK = "drawer"
DRAWER_JOINT = "drawer_joint"

_DOOR_GAP_M = 0.004  # leaf to jamb clearance, each side
_FLOOR_GAP_M = 0.01  # leaf bottom above the floor
_JAMB_M = 0.06  # jamb and header width


def default_cache_dir() -> str:
    """Directory the generated URDFs go to: ``<tmp>/py_trees_manipulation_assets``."""
    return os.path.join(tempfile.gettempdir(), "py_trees_manipulation_assets")


# --------------------------------------------------------------------------------------------
# Parameters
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LeverHandle:
    """A lever door handle with a return spring.

    Attributes:
        length_m: lever length from the pivot to the tip, metres.
        height_m: pivot height above the floor, metres.
        backset_m: pivot distance from the leaf's latch edge, metres.
        standoff_m: distance of the lever bar's centre line in front of the leaf face, metres.
        bar_height_m: vertical size of the lever bar (what the fingers close on), metres.
        bar_depth_m: size of the bar along the door normal, metres.
        mass_kg: lever mass, kg.
        max_angle_deg: joint upper limit, degrees (lower limit 0 = at rest).
        grasp_fraction: where along the lever the grasp pose sits, as a fraction of
            ``length_m`` from the pivot (MoveIt ``handle_grasp_offset_percent``: 0.75).
        spring_preload_nm: return-spring torque at rest, N*m (> the lever's own gravity torque,
            about ``mass_kg * 9.81 * length_m / 2``, so it rests against its stop).
        spring_stiffness_nm_per_rad: return-spring stiffness, N*m/rad.
        friction_nm: Coulomb friction in the handle joint, N*m.
        damping_nms_per_rad: viscous damping of the handle joint, N*m*s/rad (URDF, applied by
            PyBullet; the default makes the spring-lever about 15 % of critically damped).
    """

    length_m: float = 0.13
    height_m: float = 1.0
    backset_m: float = 0.07
    standoff_m: float = 0.06
    bar_height_m: float = 0.02
    bar_depth_m: float = 0.018
    mass_kg: float = 0.2
    max_angle_deg: float = 70.0
    grasp_fraction: float = 0.75
    spring_preload_nm: float = 0.3
    spring_stiffness_nm_per_rad: float = 1.0
    friction_nm: float = 0.02
    damping_nms_per_rad: float = 0.01

    def __post_init__(self) -> None:
        for name in ("length_m", "height_m", "backset_m", "standoff_m", "bar_height_m", "bar_depth_m", "mass_kg"):
            if not getattr(self, name) > 0:
                raise ValueError(f"LeverHandle.{name} must be > 0, got {getattr(self, name)}")
        if not 0 < self.max_angle_deg < 180:
            raise ValueError(f"LeverHandle.max_angle_deg must be in (0, 180), got {self.max_angle_deg}")
        if not 0 <= self.grasp_fraction <= 1:
            raise ValueError(f"LeverHandle.grasp_fraction must be in [0, 1], got {self.grasp_fraction}")
        for name in ("spring_preload_nm", "spring_stiffness_nm_per_rad", "friction_nm", "damping_nms_per_rad"):
            if getattr(self, name) < 0:
                raise ValueError(f"LeverHandle.{name} must be >= 0, got {getattr(self, name)}")


@dataclass(frozen=True)
class BarHandle:
    """A fixed bar (pull) handle on a drawer front.

    Attributes:
        length_m: bar length along the width (y), metres.
        diameter_m: bar diameter (what the fingers close on), metres.
        standoff_m: distance of the bar's axis in front of the drawer face, metres.
    """

    length_m: float = 0.12
    diameter_m: float = 0.012
    standoff_m: float = 0.035

    def __post_init__(self) -> None:
        for name in ("length_m", "diameter_m", "standoff_m"):
            if not getattr(self, name) > 0:
                raise ValueError(f"BarHandle.{name} must be > 0, got {getattr(self, name)}")
        if self.standoff_m <= self.diameter_m / 2:
            raise ValueError("BarHandle.standoff_m must exceed half the diameter")


@dataclass(frozen=True)
class DoorAsset:
    """A generated door: URDF path and text, parameters, names and frames (see module docs).

    Attributes:
        urdf_path: path of the written URDF (``str``, ready for ``pybullet.loadURDF``).
        urdf: the URDF text.
        width_m, height_m, thickness_m: leaf size, metres.
        hinge_side: ``'left'`` or ``'right'`` as seen from +x.
        opening: ``'pull'`` (opens toward +x) or ``'push'``.
        max_opening_deg: hinge upper limit, degrees.
        leaf_mass_kg: leaf mass, kg.
        hinge_damping: viscous hinge damping, N*m*s/rad (URDF ``<dynamics damping>``, applied by
            PyBullet natively).
        hinge_friction: Coulomb hinge friction, N*m (URDF ``<dynamics friction>``; PyBullet
            ignores it, :class:`~.articulated.ArticulatedDoor` applies it).
        handle: the lever handle, or ``None``.
        latch: whether the door has a latch (held shut until the handle turns).
        latch_release_deg: handle angle that withdraws the latch, degrees.
        latch_holding_torque_nm: most torque the engaged latch resists, N*m.
        locked: the latch never releases.
        hinge_axis_in_model: (3,) unit hinge axis; a positive hinge angle is right-handed about it.
        hinge_point_in_model: (3,) a point on the hinge line (the leaf link origin), metres.
        leaf_in_model: (4, 4) ``door_leaf`` link frame, door closed.
        hinge_bottom_in_model, hinge_top_in_model: (4, 4) poses on the hinge line, z into the door.
        handle_pivot_in_model, handle_grasp_in_model: (4, 4), door closed, handle at rest;
            ``None`` without a handle.
        handle_grasp_in_handle_link: (4, 4) the grasp pose in the ``door_handle`` link frame
            (the pivot frame).
    """

    urdf_path: str
    urdf: str
    width_m: float
    height_m: float
    thickness_m: float
    hinge_side: str
    opening: str
    max_opening_deg: float
    leaf_mass_kg: float
    hinge_damping: float
    hinge_friction: float
    handle: Optional[LeverHandle]
    latch: bool
    latch_release_deg: float
    latch_holding_torque_nm: float
    locked: bool
    hinge_axis_in_model: NDArray[np.float64]
    hinge_point_in_model: NDArray[np.float64]
    leaf_in_model: Pose
    hinge_bottom_in_model: Pose
    hinge_top_in_model: Pose
    handle_pivot_in_model: Optional[Pose]
    handle_grasp_in_model: Optional[Pose]
    handle_grasp_in_handle_link: Optional[Pose]
    frame_link: str = DOOR_FRAME_LINK
    leaf_link: str = DOOR_LEAF_LINK
    handle_link: str = DOOR_HANDLE_LINK
    hinge_joint: str = DOOR_HINGE_JOINT
    handle_joint: str = HANDLE_JOINT

    @property
    def arc_opening_sign(self) -> int:
        """+1 (pull) or -1 (push): the sign of the arc angle that opens the door when the arc
        subframes come from :func:`~..geometry.affordances.calculate_move_along_arc_subframes`
        (whose positive direction is toward the viewer on +x)."""
        return 1 if self.opening == "pull" else -1

    def __fspath__(self) -> str:
        return self.urdf_path


@dataclass(frozen=True)
class CabinetAsset:
    """A generated cabinet with one drawer (see module docs).

    Attributes:
        urdf_path: path of the written URDF. urdf: its text.
        width_m, depth_m, height_m: outer size of the cabinet body, metres.
        drawer_height_m: height of the drawer front, metres.
        drawer_travel_m: prismatic upper limit (how far the drawer opens), metres.
        drawer_mass_kg: kg. drawer_damping: viscous, N*s/m (URDF, applied by PyBullet).
        drawer_friction: Coulomb, N (applied by :class:`~.articulated.ArticulatedDrawer`).
        handle: the bar handle.
        drawer_axis_in_model: (3,) unit pull direction (+x).
        drawer_in_model: (4, 4) ``drawer`` link frame, drawer closed.
        drawer_grasp_in_model: (4, 4) TCP pose at the bar centre, drawer closed.
        drawer_grasp_in_drawer_link: (4, 4) the same in the ``drawer`` link frame.
    """

    urdf_path: str
    urdf: str
    width_m: float
    depth_m: float
    height_m: float
    drawer_height_m: float
    drawer_travel_m: float
    drawer_mass_kg: float
    drawer_damping: float
    drawer_friction: float
    handle: BarHandle
    drawer_axis_in_model: NDArray[np.float64]
    drawer_in_model: Pose
    drawer_grasp_in_model: Pose
    drawer_grasp_in_drawer_link: Pose
    body_link: str = CABINET_BODY_LINK
    drawer_link: str = DRAWER_LINK
    drawer_joint: str = DRAWER_JOINT

    def __fspath__(self) -> str:
        return self.urdf_path


# --------------------------------------------------------------------------------------------
# URDF text helpers
# --------------------------------------------------------------------------------------------


def _f(v: float) -> str:
    s = f"{float(v):.9g}"
    return "0" if s == "-0" else s


def _v(vs: Sequence[float]) -> str:
    return " ".join(_f(v) for v in vs)


def _origin(xyz: Sequence[float], rpy: Sequence[float] = (0.0, 0.0, 0.0)) -> str:
    return f'<origin xyz="{_v(xyz)}" rpy="{_v(rpy)}"/>'


def _rpy(R: NDArray[np.float64]) -> tuple[float, float, float]:
    r, p, y = t3d.euler.mat2euler(R, axes="sxyz")  # URDF rpy: fixed axes x, y, z
    return (float(r), float(p), float(y))


def _shape(kind: str, xyz: Sequence[float], size: Sequence[float], material: str, rpy=(0.0, 0.0, 0.0), collide=True) -> str:
    if kind == "box":
        geom = f'<box size="{_v(size)}"/>'
    else:  # cylinder: size = (radius, length) along the local z
        geom = f'<cylinder radius="{_f(size[0])}" length="{_f(size[1])}"/>'
    out = f'    <visual>{_origin(xyz, rpy)}<geometry>{geom}</geometry><material name="{material}"/></visual>\n'
    if collide:
        out += f"    <collision>{_origin(xyz, rpy)}<geometry>{geom}</geometry></collision>\n"
    return out


def _box_inertial(mass: float, com: Sequence[float], size: Sequence[float]) -> str:
    a, b, c = (float(s) for s in size)
    ixx, iyy, izz = (mass / 12.0 * (b * b + c * c), mass / 12.0 * (a * a + c * c), mass / 12.0 * (a * a + b * b))
    return (
        f'    <inertial>{_origin(com)}<mass value="{_f(mass)}"/>'
        f'<inertia ixx="{_f(ixx)}" ixy="0" ixz="0" iyy="{_f(iyy)}" iyz="0" izz="{_f(izz)}"/></inertial>\n'
    )


_STATIC_INERTIAL = (
    '    <inertial><origin xyz="0 0 0" rpy="0 0 0"/><mass value="0"/>'
    '<inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial>\n'
)

_MATERIALS = (
    '  <material name="frame"><color rgba="0.55 0.45 0.35 1"/></material>\n'
    '  <material name="leaf"><color rgba="0.85 0.78 0.65 1"/></material>\n'
    '  <material name="metal"><color rgba="0.75 0.75 0.78 1"/></material>\n'
    '  <material name="carcass"><color rgba="0.9 0.9 0.88 1"/></material>\n'
    '  <material name="front"><color rgba="0.45 0.6 0.7 1"/></material>\n'
)


def _write_cached(name: str, text: str, cache_dir: Optional[str]) -> str:
    d = cache_dir or default_cache_dir()
    os.makedirs(d, exist_ok=True)
    digest = hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]
    path = os.path.join(d, f"{name}_{digest}.urdf")
    if not os.path.exists(path):
        fd, tmp = tempfile.mkstemp(dir=d, suffix=".urdf.tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)  # atomic: concurrent writers of the same content are harmless
    return path


def _pose(R: NDArray[np.float64], p: Sequence[float]) -> Pose:
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = p
    return T


def _check_name(name: str) -> None:
    if not name or not all(c.isalnum() or c in "_-" for c in name):
        raise ValueError(f"name must be non-empty letters, digits, '_' or '-', got {name!r}")


# TCP orientation for a horizontal bar in front of a +x face: z into the face (-x), fingers
# closing vertically (y up), x = y cross z = -y.
_R_GRASP_FRONT = np.column_stack([[0.0, -1.0, 0.0], [0.0, 0.0, 1.0], [-1.0, 0.0, 0.0]])


# --------------------------------------------------------------------------------------------
# Door
# --------------------------------------------------------------------------------------------


def door_asset(
    width_m: float = 0.8,
    height_m: float = 2.0,
    thickness_m: float = 0.04,
    hinge_side: str = "left",
    opening: str = "pull",
    hinge_damping: float = 2.0,
    hinge_friction: float = 0.5,
    handle: Optional[LeverHandle] = LeverHandle(),
    *,
    leaf_mass_kg: float = 20.0,
    max_opening_deg: float = 100.0,
    latch: bool = True,
    latch_release_deg: float = 30.0,
    latch_holding_torque_nm: float = 300.0,
    locked: bool = False,
    name: str = "door",
    cache_dir: Optional[str] = None,
) -> DoorAsset:
    """Generate a hinged door with a lever handle and write its URDF (see the module docs).

    Args:
        width_m: leaf width, metres. height_m: leaf height, metres. thickness_m: leaf thickness, m.
        hinge_side: ``'left'`` (hinge on -y) or ``'right'`` (+y), as seen from the front (+x).
        opening: ``'pull'`` (toward +x, the robot) or ``'push'`` (away from it).
        hinge_damping: viscous hinge damping, N*m*s/rad (>= 0).
        hinge_friction: Coulomb hinge friction, N*m (>= 0).
        handle: lever handle parameters, or ``None`` for a leaf without a handle (and then no
            latch release: ``latch`` must be False).
        leaf_mass_kg: kg. max_opening_deg: hinge upper limit, degrees, in (0, 180).
        latch: the door is held shut until the handle turns past ``latch_release_deg`` (degrees,
            within the handle's range). latch_holding_torque_nm: N*m the latch resists.
        locked: the latch never releases (a locked door).
        name: robot name in the URDF and file-name prefix. cache_dir: where to write
            (default :func:`default_cache_dir`).

    Returns:
        :class:`DoorAsset`.

    Raises:
        ValueError: for a bad parameter, naming it.
    """
    if hinge_side not in ("left", "right"):
        raise ValueError(f"hinge_side must be 'left' or 'right', got {hinge_side!r}")
    if opening not in ("push", "pull"):
        raise ValueError(f"opening must be 'push' or 'pull', got {opening!r}")
    for pname, pval in (("width_m", width_m), ("height_m", height_m), ("thickness_m", thickness_m), ("leaf_mass_kg", leaf_mass_kg)):
        if not pval > 0:
            raise ValueError(f"{pname} must be > 0, got {pval}")
    for pname, pval in (("hinge_damping", hinge_damping), ("hinge_friction", hinge_friction), ("latch_holding_torque_nm", latch_holding_torque_nm)):
        if pval < 0:
            raise ValueError(f"{pname} must be >= 0, got {pval}")
    if not 0 < max_opening_deg < 180:
        raise ValueError(f"max_opening_deg must be in (0, 180), got {max_opening_deg}")
    if latch and handle is None:
        raise ValueError("a latched door needs a handle to release it; pass latch=False")
    if handle is not None:
        if not 0 < latch_release_deg <= handle.max_angle_deg:
            raise ValueError(f"latch_release_deg must be in (0, handle.max_angle_deg={handle.max_angle_deg}], got {latch_release_deg}")
        if handle.backset_m + handle.length_m > width_m:
            raise ValueError("handle.backset_m + handle.length_m must fit in width_m")
        if not 0 < handle.height_m < height_m:
            raise ValueError(f"handle.height_m must be within the leaf height {height_m}, got {handle.height_m}")
    _check_name(name)

    w, h, t = float(width_m), float(height_m), float(thickness_m)
    x_model, z_model = np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.0, 1.0])
    toward_hinge = np.array([0.0, -1.0, 0.0]) if hinge_side == "left" else np.array([0.0, 1.0, 0.0])
    n_open = x_model if opening == "pull" else -x_model
    # Axis sign: the latch edge (away from the hinge) must start moving along n_open.
    s_h = 1.0 if float(np.dot(np.cross(z_model, -toward_hinge), n_open)) > 0 else -1.0
    hinge_axis = s_h * z_model
    x_h = t / 2 if opening == "pull" else -t / 2
    hinge_point = np.array([x_h, -w / 2 if hinge_side == "left" else w / 2, 0.0])
    leaf_in_model = _pose(np.eye(3), hinge_point)
    leaf_centre_in_leaf = np.array([0.0, 0.0, _FLOOR_GAP_M + h / 2]) - hinge_point * np.array([1.0, 1.0, 0.0])

    # Hinge poses: on the hinge line at the leaf's bottom and top, z into the door (-x),
    # y along the hinge line (up), x = y cross z.
    R_hinge = np.column_stack([np.cross(z_model, -x_model), z_model, -x_model])
    hinge_bottom = _pose(R_hinge, hinge_point + np.array([0.0, 0.0, _FLOOR_GAP_M]))
    hinge_top = _pose(R_hinge, hinge_point + np.array([0.0, 0.0, _FLOOR_GAP_M + h]))

    # ---- frame (static base): two jambs and a header
    depth = t + 0.06
    jamb_y = w / 2 + _DOOR_GAP_M + _JAMB_M / 2
    jamb_h = _FLOOR_GAP_M + h + _DOOR_GAP_M + _JAMB_M
    frame = _STATIC_INERTIAL
    for sy in (-1.0, 1.0):
        frame += _shape("box", (0.0, sy * jamb_y, jamb_h / 2), (depth, _JAMB_M, jamb_h), "frame")
    frame += _shape("box", (0.0, 0.0, jamb_h - _JAMB_M / 2), (depth, w + 2 * _DOOR_GAP_M + 2 * _JAMB_M, _JAMB_M), "frame")

    # ---- leaf
    leaf = _box_inertial(leaf_mass_kg, leaf_centre_in_leaf, (t, w, h))
    leaf += _shape("box", leaf_centre_in_leaf, (t, w, h), "leaf")

    hinge_joint = (
        f'  <joint name="{DOOR_HINGE_JOINT}" type="revolute">\n'
        f'    <parent link="{DOOR_FRAME_LINK}"/><child link="{DOOR_LEAF_LINK}"/>\n'
        f"    {_origin(hinge_point)}\n"
        f'    <axis xyz="{_v(hinge_axis)}"/>\n'
        f'    <limit lower="0" upper="{_f(math.radians(max_opening_deg))}" effort="1000" velocity="10"/>\n'
        f'    <dynamics damping="{_f(hinge_damping)}" friction="{_f(hinge_friction)}"/>\n'
        "  </joint>\n"
    )

    handle_xml = ""
    pivot_in_model = grasp_in_model = grasp_in_handle = None
    if handle is not None:
        latch_edge_y = w / 2 if hinge_side == "left" else -w / 2
        pivot_pos = np.array([t / 2 + handle.standoff_m, latch_edge_y + toward_hinge[1] * handle.backset_m, handle.height_m])
        x_p, y_p = toward_hinge, -z_model
        R_p = np.column_stack([x_p, y_p, np.cross(x_p, y_p)])
        pivot_in_model = _pose(R_p, pivot_pos)
        grasp_in_model = _pose(_R_GRASP_FRONT, pivot_pos + handle.grasp_fraction * handle.length_m * x_p)
        grasp_in_handle = invert(pivot_in_model) @ grasp_in_model
        pivot_in_leaf = invert(leaf_in_model) @ pivot_in_model
        # Rose on the leaf face (visual) and the handle link: spindle back to the face, lever bar.
        face_dir_in_pivot = R_p.T @ (-x_model)  # +-z of the pivot frame
        rose_in_leaf = pivot_pos - hinge_point - (handle.standoff_m - 0.004) * x_model
        leaf += _shape("cylinder", rose_in_leaf, (0.028, 0.008), "metal", rpy=(0.0, math.pi / 2, 0.0), collide=False)
        hub = 0.015
        bar_c = ((handle.length_m - hub) / 2, 0.0, 0.0)
        bar_size = (handle.length_m + hub, handle.bar_height_m, handle.bar_depth_m)
        hlink = _box_inertial(handle.mass_kg, bar_c, bar_size)
        hlink += _shape("box", bar_c, bar_size, "metal")
        hlink += _shape("cylinder", face_dir_in_pivot * handle.standoff_m / 2, (0.008, handle.standoff_m), "metal")
        handle_xml = (
            f'  <link name="{DOOR_HANDLE_LINK}">\n{hlink}  </link>\n'
            f'  <joint name="{HANDLE_JOINT}" type="revolute">\n'
            f'    <parent link="{DOOR_LEAF_LINK}"/><child link="{DOOR_HANDLE_LINK}"/>\n'
            f"    {_origin(pivot_in_leaf[:3, 3], _rpy(pivot_in_leaf[:3, :3]))}\n"
            '    <axis xyz="0 0 1"/>\n'
            f'    <limit lower="0" upper="{_f(math.radians(handle.max_angle_deg))}" effort="50" velocity="20"/>\n'
            f'    <dynamics damping="{_f(handle.damping_nms_per_rad)}" friction="{_f(handle.friction_nm)}"/>\n'
            "  </joint>\n"
        )

    urdf = (
        '<?xml version="1.0"?>\n'
        f"<!-- Generated by py_trees_manipulation.scene.assets.door_asset: {w} x {h} x {t} m, "
        f"hinge {hinge_side}, {opening} to open. Front faces +x. -->\n"
        f'<robot name="{name}">\n{_MATERIALS}'
        f'  <link name="{DOOR_FRAME_LINK}">\n{frame}  </link>\n'
        f'  <link name="{DOOR_LEAF_LINK}">\n{leaf}  </link>\n'
        f"{hinge_joint}{handle_xml}</robot>\n"
    )
    return DoorAsset(
        urdf_path=_write_cached(name, urdf, cache_dir),
        urdf=urdf,
        width_m=w,
        height_m=h,
        thickness_m=t,
        hinge_side=hinge_side,
        opening=opening,
        max_opening_deg=float(max_opening_deg),
        leaf_mass_kg=float(leaf_mass_kg),
        hinge_damping=float(hinge_damping),
        hinge_friction=float(hinge_friction),
        handle=handle,
        latch=bool(latch),
        latch_release_deg=float(latch_release_deg),
        latch_holding_torque_nm=float(latch_holding_torque_nm),
        locked=bool(locked),
        hinge_axis_in_model=hinge_axis,
        hinge_point_in_model=hinge_point,
        leaf_in_model=leaf_in_model,
        hinge_bottom_in_model=hinge_bottom,
        hinge_top_in_model=hinge_top,
        handle_pivot_in_model=pivot_in_model,
        handle_grasp_in_model=grasp_in_model,
        handle_grasp_in_handle_link=grasp_in_handle,
    )


def door_urdf(*args, **kwargs) -> str:  # type: ignore[no-untyped-def]
    """:func:`door_asset` (same arguments) and return only the URDF path."""
    return door_asset(*args, **kwargs).urdf_path


# --------------------------------------------------------------------------------------------
# Cabinet with a drawer
# --------------------------------------------------------------------------------------------


def cabinet_asset(
    width_m: float = 0.6,
    depth_m: float = 0.5,
    height_m: float = 0.8,
    drawer_height_m: float = 0.2,
    drawer_travel_m: float = 0.35,
    drawer_damping: float = 5.0,
    drawer_friction: float = 1.0,
    handle: BarHandle = BarHandle(),
    *,
    drawer_mass_kg: float = 2.0,
    wall_m: float = 0.018,
    name: str = "cabinet",
    cache_dir: Optional[str] = None,
) -> CabinetAsset:
    """Generate a cabinet with one top drawer on a prismatic joint and write its URDF.

    Args:
        width_m, depth_m, height_m: outer size of the body, metres (front face at x = depth/2).
        drawer_height_m: drawer front height, metres (the drawer sits at the top).
        drawer_travel_m: how far the drawer opens (prismatic upper limit), metres; at most
            ``0.9 * depth_m``.
        drawer_damping: viscous, N*s/m. drawer_friction: Coulomb, N (both >= 0).
        handle: the bar handle on the drawer front.
        drawer_mass_kg: kg. wall_m: panel thickness, metres.
        name: robot name and file-name prefix. cache_dir: where to write.

    Returns:
        :class:`CabinetAsset`.

    Raises:
        ValueError: for a bad parameter, naming it.
    """
    for pname, pval in (("width_m", width_m), ("depth_m", depth_m), ("height_m", height_m), ("drawer_height_m", drawer_height_m), ("drawer_travel_m", drawer_travel_m), ("drawer_mass_kg", drawer_mass_kg), ("wall_m", wall_m)):
        if not pval > 0:
            raise ValueError(f"{pname} must be > 0, got {pval}")
    for pname, pval in (("drawer_damping", drawer_damping), ("drawer_friction", drawer_friction)):
        if pval < 0:
            raise ValueError(f"{pname} must be >= 0, got {pval}")
    if drawer_travel_m > 0.9 * depth_m:
        raise ValueError(f"drawer_travel_m must be <= 0.9 * depth_m = {0.9 * depth_m}, got {drawer_travel_m}")
    if drawer_height_m > height_m - 2 * wall_m - 0.01:
        raise ValueError(f"drawer_height_m must leave room for top and bottom panels in height_m={height_m}")
    if handle.length_m > width_m - 2 * wall_m:
        raise ValueError("handle.length_m must fit on the drawer front")
    _check_name(name)

    W, D, H, e = float(width_m), float(depth_m), float(height_m), float(wall_m)
    gap = 0.003
    body = _STATIC_INERTIAL
    for sy in (-1.0, 1.0):  # sides
        body += _shape("box", (0.0, sy * (W / 2 - e / 2), H / 2), (D, e, H), "carcass")
    body += _shape("box", (0.0, 0.0, H - e / 2), (D, W - 2 * e, e), "carcass")  # top
    body += _shape("box", (0.0, 0.0, 0.05 + e / 2), (D, W - 2 * e, e), "carcass")  # bottom on a plinth
    body += _shape("box", (0.0, 0.0, 0.025), (D - 0.05, W - 2 * e, 0.05), "carcass")  # plinth
    body += _shape("box", (-D / 2 + e / 2, 0.0, H / 2), (e, W - 2 * e, H), "carcass")  # back
    drawer_top = H - e - gap
    drawer_bottom = drawer_top - drawer_height_m
    lower_front_h = drawer_bottom - gap - 0.05
    if lower_front_h > 0.01:  # a fixed panel below the drawer (stands in for lower drawers/doors)
        body += _shape("box", (D / 2 - e / 2, 0.0, 0.05 + lower_front_h / 2), (e, W - 2 * e - 2 * gap, lower_front_h), "front")

    # Drawer link frame: on the front face plane, centre of the drawer front, when closed.
    drawer_origin = np.array([D / 2, 0.0, (drawer_top + drawer_bottom) / 2])
    dw = W - 2 * e - 2 * gap  # outer width of the drawer box
    dd = D - 2 * e - 0.01  # drawer box depth behind its front
    dh = drawer_height_m
    box_h = dh - 0.03
    zb = -dh / 2  # drawer box bottom (relative to the link frame)
    drawer = _box_inertial(drawer_mass_kg, (-dd / 2, 0.0, 0.0), (dd, dw, dh))
    drawer += _shape("box", (-e / 2, 0.0, 0.0), (e, dw, dh), "front")  # front panel
    drawer += _shape("box", (-e - (dd - e) / 2, 0.0, zb + e / 2), (dd - e, dw - 2 * e, e), "carcass")  # bottom
    for sy in (-1.0, 1.0):
        drawer += _shape("box", (-e - (dd - e) / 2, sy * (dw / 2 - e / 2), zb + box_h / 2), (dd - e, e, box_h), "carcass")
    drawer += _shape("box", (-dd + e / 2, 0.0, zb + box_h / 2), (e, dw - 2 * e, box_h), "carcass")  # back
    # Bar handle: a horizontal cylinder along y and two posts back to the front.
    s = handle.standoff_m
    drawer += _shape("cylinder", (s, 0.0, 0.0), (handle.diameter_m / 2, handle.length_m), "metal", rpy=(math.pi / 2, 0.0, 0.0))
    for sy in (-1.0, 1.0):
        drawer += _shape("cylinder", (s / 2, sy * (handle.length_m / 2 - 0.008), 0.0), (0.005, s), "metal", rpy=(0.0, math.pi / 2, 0.0))

    drawer_joint = (
        f'  <joint name="{DRAWER_JOINT}" type="prismatic">\n'
        f'    <parent link="{CABINET_BODY_LINK}"/><child link="{DRAWER_LINK}"/>\n'
        f"    {_origin(drawer_origin)}\n"
        '    <axis xyz="1 0 0"/>\n'
        f'    <limit lower="0" upper="{_f(drawer_travel_m)}" effort="500" velocity="2"/>\n'
        f'    <dynamics damping="{_f(drawer_damping)}" friction="{_f(drawer_friction)}"/>\n'
        "  </joint>\n"
    )
    urdf = (
        '<?xml version="1.0"?>\n'
        f"<!-- Generated by py_trees_manipulation.scene.assets.cabinet_asset: {W} x {D} x {H} m, "
        f"drawer travel {drawer_travel_m} m. Front faces +x. -->\n"
        f'<robot name="{name}">\n{_MATERIALS}'
        f'  <link name="{CABINET_BODY_LINK}">\n{body}  </link>\n'
        f'  <link name="{DRAWER_LINK}">\n{drawer}  </link>\n'
        f"{drawer_joint}</robot>\n"
    )
    drawer_in_model = _pose(np.eye(3), drawer_origin)
    grasp_in_drawer = _pose(_R_GRASP_FRONT, (s, 0.0, 0.0))
    return CabinetAsset(
        urdf_path=_write_cached(name, urdf, cache_dir),
        urdf=urdf,
        width_m=W,
        depth_m=D,
        height_m=H,
        drawer_height_m=float(drawer_height_m),
        drawer_travel_m=float(drawer_travel_m),
        drawer_mass_kg=float(drawer_mass_kg),
        drawer_damping=float(drawer_damping),
        drawer_friction=float(drawer_friction),
        handle=handle,
        drawer_axis_in_model=np.array([1.0, 0.0, 0.0]),
        drawer_in_model=drawer_in_model,
        drawer_grasp_in_model=drawer_in_model @ grasp_in_drawer,
        drawer_grasp_in_drawer_link=grasp_in_drawer,
    )


def cabinet_urdf(*args, **kwargs) -> str:  # type: ignore[no-untyped-def]
    """:func:`cabinet_asset` (same arguments) and return only the URDF path."""
    return cabinet_asset(*args, **kwargs).urdf_path


__all__ = [
    "BarHandle",
    "CabinetAsset",
    "DoorAsset",
    "LeverHandle",
    "cabinet_asset",
    "cabinet_urdf",
    "default_cache_dir",
    "door_asset",
    "door_urdf",
    "CABINET_BODY_LINK",
    "DOOR_FRAME_LINK",
    "DOOR_HANDLE_LINK",
    "DOOR_HINGE_JOINT",
    "DOOR_LEAF_LINK",
    "DRAWER_JOINT",
    "DRAWER_LINK",
    "HANDLE_JOINT",
]
