"""Door, drawer and lever-handle affordance subframes (MoveIt Studio affordance templates).

Re-implements, from their public documentation, the two functions of
``moveit_studio::behaviors::affordance_transforms`` (MoveIt Studio / MoveIt Pro; the C++ source is
not public):

- ``calculateMoveAlongArcSubframes(pose_grasp, pose_axis_first, pose_axis_second)`` ->
  :func:`calculate_move_along_arc_subframes`: a door on a hinge;
- ``calculateGraspAndTwistSubframes(target_grasp_pose, grasp_rotation=15.0)`` ->
  :func:`calculate_grasp_and_twist_subframes`: a lever handle or a knob (a twist about the grasp's
  own z axis) and, with a translation along that axis, a drawer pull.

What MoveIt Studio returns, and how ours maps to it
---------------------------------------------------
MoveIt Studio returns ``std::vector<moveit_studio_vision_msgs::msg::ObjectSubframe>`` (wrapped in a
``std::optional`` for the arc), where ``ObjectSubframe`` is ``{string id, geometry_msgs/Pose pose}``.
There are three subframes: a grasp subframe and the ordered screw (hinge) origin and screw axis.
Their ids and their order in the vector are not public; older MoveIt Studio ports named the same
three poses ``grasp_pose``, ``screw_origin_pose`` and ``screw_axis_pose`` (``GetHingeAxisFromSurfaceSelection``).

Ours return a :class:`Subframes` dataclass with the three poses as named fields ``grasp``,
``screw_origin`` and ``screw_axis`` (each a ``(4, 4)`` homogeneous transform in the frame of the
inputs, usually ``world``), and ``None`` where MoveIt returns ``std::nullopt``.
:meth:`Subframes.as_object_subframes` gives the ObjectSubframe-like list
``[("grasp", T), ("screw_origin", T), ("screw_axis", T)]`` in that order (the order recommended for
a re-implementation); consumers should look subframes up by id, not by index.

The screw these subframes define: the unit axis ``u = (p_axis - p_origin) / |p_axis - p_origin|``
through ``p_origin``; a **positive** rotation is right-handed about ``u``. The screw itself (pitch,
waypoints, the pose at an angle) lives in :mod:`py_trees_manipulation.geometry.screw`
(:func:`~py_trees_manipulation.geometry.screw.screw_from_subframes`).

All poses are ``(4, 4)`` homogeneous transforms; positions in metres.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
import transforms3d as t3d
from numpy.typing import NDArray

from py_trees_manipulation.geometry.poses import Pose, check_pose

#: Subframe ids, in the order :meth:`Subframes.as_object_subframes` emits them.
SUBFRAME_IDS = ("grasp", "screw_origin", "screw_axis")

#: Length (m) between the screw origin and screw axis subframes made by
#: :func:`calculate_grasp_and_twist_subframes` (only the direction matters to the screw).
DEFAULT_TWIST_AXIS_LENGTH_M = 0.1

_EPS = 1e-9


@dataclass(frozen=True)
class Subframes:
    """The three affordance subframes of a screw motion.

    Attributes:
        grasp: (4, 4) pose of the grasp (the TCP target at the start of the motion).
        screw_origin: (4, 4) pose on the screw axis; its position is the point the axis passes
            through.
        screw_axis: (4, 4) a second pose on the screw axis; the unit axis points from
            ``screw_origin`` to ``screw_axis``.

    All three in the same frame (that of the inputs, usually ``world``), metres.
    """

    grasp: Pose
    screw_origin: Pose
    screw_axis: Pose

    @property
    def axis(self) -> NDArray[np.float64]:
        """Unit screw axis ``(3,)``, from ``screw_origin`` toward ``screw_axis``."""
        d = self.screw_axis[:3, 3] - self.screw_origin[:3, 3]
        return d / np.linalg.norm(d)

    @property
    def point(self) -> NDArray[np.float64]:
        """A point on the screw axis ``(3,)``: the position of ``screw_origin``, metres."""
        return self.screw_origin[:3, 3].copy()

    @property
    def radius_m(self) -> float:
        """Distance from the grasp position to the screw axis line, metres (the arc radius)."""
        r = self.grasp[:3, 3] - self.screw_origin[:3, 3]
        return float(np.linalg.norm(np.cross(r, self.axis)))

    def as_object_subframes(self) -> list[tuple[str, Pose]]:
        """ObjectSubframe-like ``[(id, pose), ...]``: ``grasp``, ``screw_origin``, ``screw_axis``."""
        return [(i, getattr(self, i).copy()) for i in SUBFRAME_IDS]


def calculate_move_along_arc_subframes(
    pose_grasp: Pose, pose_axis_first: Pose, pose_axis_second: Pose
) -> Optional[Subframes]:
    r"""Order a grasp and two hinge poses into door-opening subframes.

    Re-implements ``calculateMoveAlongArcSubframes`` of
    ``moveit_studio::behaviors::affordance_transforms`` from its documentation: "Reorder
    user-selected poses into the subframes in the order expected by affordance template
    behaviors", so that a positive rotation about the vector from the screw origin to the screw
    axis pose moves the grasp point **toward the user's viewpoint** (the door is pulled open).

    Assumes (as MoveIt does) that the z axes of both hinge poses point **into** the surface of the
    door, i.e. away from the viewer; e.g. poses from point-cloud surface normals.

    Ordering rule (documented): with ``o = pose_axis_first``, ``a = pose_axis_second`` and the
    grasp position ``g``,

    .. math:: c = (g - o) \times (a - o), \qquad
              c \cdot z_o > 0 \Rightarrow (o, a) \text{ kept}, \quad
              c \cdot z_o < 0 \Rightarrow \text{swapped}.

    Equivalently the grasp's initial velocity under a positive rotation, ``u x (g - o)``, points
    against ``z_o`` (out of the door, toward the viewer).

    Args:
        pose_grasp: (4, 4) grasp pose (e.g. on the door handle), metres.
        pose_axis_first: (4, 4) a pose on the hinge axis, z into the door surface.
        pose_axis_second: (4, 4) a second pose on the hinge axis, z into the door surface.

    Returns:
        ``None`` (MoveIt: ``std::nullopt``) when the z axes of the two hinge poses are not
        similarly oriented (their dot product is not positive). Otherwise :class:`Subframes`
        with ``grasp = pose_grasp`` and ``screw_origin``/``screw_axis`` the two hinge poses
        (unchanged, only reordered). The arc radius is :attr:`Subframes.radius_m`.

    Raises:
        ValueError: a pose is not a (4, 4) homogeneous transform; the two hinge positions
            coincide; or the grasp lies on the hinge line (``c = 0``: the rule cannot order the
            poses, MoveIt documents no outcome for this case).
    """
    g = check_pose(pose_grasp)
    first = check_pose(pose_axis_first)
    second = check_pose(pose_axis_second)
    if float(np.dot(first[:3, 2], second[:3, 2])) <= 0.0:
        return None
    o, a, gp = first[:3, 3], second[:3, 3], g[:3, 3]
    span = float(np.linalg.norm(a - o))
    if span < _EPS:
        raise ValueError(f"the two hinge poses are at the same position {o.tolist()}; they must span the axis")
    c = np.cross(gp - o, a - o)
    # Scale-free degeneracy test: |c| = |g - o| * |a - o| * sin(angle) = radius * span.
    if float(np.linalg.norm(c)) < 1e-6 * span:
        raise ValueError(f"the grasp position {gp.tolist()} lies on the hinge line; no arc to move along")
    if float(np.dot(c, first[:3, 2])) > 0.0:
        return Subframes(grasp=g.copy(), screw_origin=first.copy(), screw_axis=second.copy())
    return Subframes(grasp=g.copy(), screw_origin=second.copy(), screw_axis=first.copy())


def calculate_grasp_and_twist_subframes(
    target_grasp_pose: Pose,
    grasp_rotation: float = 15.0,
    *,
    axis_length_m: float = DEFAULT_TWIST_AXIS_LENGTH_M,
) -> Subframes:
    """Subframes of a screw that twists a grasp about its own z axis (lever handle, knob, drawer).

    Re-implements ``calculateGraspAndTwistSubframes`` of
    ``moveit_studio::behaviors::affordance_transforms``: "Given a grasp pose on an object,
    calculate subframes that define a screw axis which opens the object along a semicircle in the
    direction of the grasp pose Z-axis". The documented default ``grasp_rotation=15.0`` (degrees)
    is kept; the public behaviour port ``grasp_rotation_z_radians`` defaults to 1.5708 rad (90 deg)
    instead, so callers porting MoveIt objectives usually pass ``90.0``.

    The exact geometry is not public; this is the documented intent:

    - ``grasp = T @ Rz(grasp_rotation)``: the input pose turned about its own z axis by the twist
      of the end effector relative to the grasp pose (e.g. fingers straddling the lever bar);
    - ``screw_origin = T``: the input pose itself (the axis passes through its origin);
    - ``screw_axis = T @ Trans(0, 0, axis_length_m)``: the axis is the input pose's **+z**.

    So a positive screw rotation is right-handed about the input's +z through its origin, and a
    positive translation moves along +z. For a lever handle pass the handle **pivot** pose with z
    along the handle's axis of rotation (MoveIt ``GetDoorHandle`` convention; see
    :mod:`py_trees_manipulation.scene.assets`), not the point where the fingers close.

    Args:
        target_grasp_pose: (4, 4) grasp (or handle pivot) pose, metres; its z axis is the surface
            normal at the grasp point (MoveIt's assumption) or the handle's rotation axis.
        grasp_rotation: twist of the end effector relative to the grasp pose, **degrees**.
        axis_length_m: distance between the two screw subframes, metres (> 0; keyword-only,
            an extension: MoveIt does not document it).

    Returns:
        :class:`Subframes` ``(grasp, screw_origin, screw_axis)``.

    Raises:
        ValueError: the pose is not a (4, 4) homogeneous transform, or ``axis_length_m <= 0``.
    """
    T = check_pose(target_grasp_pose)
    if not axis_length_m > 0.0:
        raise ValueError(f"axis_length_m must be > 0, got {axis_length_m}")
    twist = np.eye(4)
    twist[:3, :3] = t3d.axangles.axangle2mat([0.0, 0.0, 1.0], np.radians(float(grasp_rotation)))
    along = np.eye(4)
    along[2, 3] = float(axis_length_m)
    return Subframes(grasp=T @ twist, screw_origin=T.copy(), screw_axis=T @ along)
