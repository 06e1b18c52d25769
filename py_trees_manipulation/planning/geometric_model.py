"""The geometric description of a regrasp problem: the grasps of each handle (:class:`GraspVariant`),
where an object may rest (:class:`PlacementCandidate`, :class:`PlacementSettings`), the model the
planner searches (:class:`GeometricModel`), its states (:class:`ModeState`: grasps, variants,
locations) and goals (:class:`GeometricGoal`). Overview: :mod:`~.geometric`.

Units: metres, radians; poses are (4, 4) homogeneous transforms, world frame unless named.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from .constraint_graph import ConstraintGraphFactory, GraspTuple

__all__ = ["GraspVariant", "PlacementCandidate", "PlacementSettings", "GeometricModel", "ModeState", "GeometricGoal",
           "HELD"]

#: Location code of an object held by a gripper whose pose is not tracked in the state (it has a
#: handover pose, or it was held at the start); ``<= -2`` means held, lifted ``lift_m`` above
#: placement ``-code - 2`` (tracked when another gripper may take it over without a handover pose).
HELD = -1

Pose = np.ndarray


def _fmt_xy(p: Pose) -> str:
    return f"({p[0, 3]:.2f}, {p[1, 3]:.2f})"


def _rotation_angle(a: Pose, b: Pose) -> float:
    c = (np.trace(a[:3, :3].T @ b[:3, :3]) - 1.0) / 2.0
    return math.acos(max(-1.0, min(1.0, c)))


@dataclass(frozen=True)
class GraspVariant:
    """One grasp of a handle: the TCP pose in the object frame (HPP: the handle's frame with one
    value of its free or symmetric DOF).

    Attributes:
        handle: HPP handle name.
        name: ``"<handle>/<angle>"`` (e.g. ``"box/+x/90"``), or ``"<handle>/as held"`` for the pose
            measured at the start.
        pose: (4, 4) TCP pose in the object frame (z: approach, y: finger travel axis), metres.
        width_m: the object's extent between the fingers, metres (``nan``: unknown).
        approach_m: pregrasp stand-off along the TCP z axis, metres.
        graspable: False for a pose measured while held (only releases use it).
    """

    handle: str
    name: str
    pose: Pose
    width_m: float = float("nan")
    approach_m: float = 0.10
    graspable: bool = True


@dataclass(frozen=True)
class PlacementCandidate:
    """A pose an object may rest in: one of its contact surfaces on an environment surface.

    Attributes:
        object: object name.
        name: readable name, e.g. ``"box/-z at (0.50, 0.10)"`` or ``"box/bottom #1 at (0.45, -0.10)"``.
        face: the object's face it rests on (``"box/-z"``; the description's contact name when the
            object has no known faces).
        contact: the description's contact-surface name (the face when generated).
        surface: the environment contact surface (``"table/top"``).
        pose: (4, 4) object pose, world frame.
        source: ``"current"`` (where it lies now), ``"spot"`` (where it lies now, on another face),
            ``"description"`` or ``"grid"``.
        height_m: height of the object's frame over the surface, metres.
    """

    object: str
    name: str
    face: str
    contact: str
    surface: str
    pose: Pose
    source: str = "grid"
    height_m: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """Plain form: names, source and the pose as ``{position, orientation (w, x, y, z)}``."""
        return {"name": self.name, "face": self.face, "contact": self.contact, "surface": self.surface,
                "source": self.source, "pose": _pose_dict(self.pose)}


@dataclass(frozen=True)
class PlacementSettings:
    """How placement poses are generated besides the description's (its ``placements:`` section).

    Attributes:
        grid_spacing_m: grid on the environment surfaces, metres (0: no grid).
        yaws_deg: yaws tried at each grid point, added to the object's yaw now (HPP's placement
            leaves the rotation about the surface normal free; these sample it): every point at the
            first yaw, then at the next, so the object is turned only when no placement at its own
            yaw serves (a handle facing away from the robot comes round).
        max_points: grid points per surface, nearest to the object first.
        spot: the spot where a free object lies now, on each of its other faces.
        margin_m: kept from the surfaces' edges besides the object's footprint.
    """

    grid_spacing_m: float = 0.10
    yaws_deg: tuple = (0.0, 90.0, 180.0, 270.0)
    max_points: int = 20
    spot: bool = True
    margin_m: float = 0.02


@dataclass
class GeometricModel:
    """Everything geometric the planner needs, as plain numbers (built by the caller from a scene).

    Attributes:
        factory: the configured :class:`~.constraint_graph.ConstraintGraphFactory`.
        variants: handle name -> its :class:`GraspVariant` s (at least one each).
        placements: object name -> its :class:`PlacementCandidate` s.
        start_poses: object name -> (4, 4) world pose at the start.
        tcp_poses: gripper name -> (4, 4) TCP pose now (orders the grasp variants; optional).
        gripper_opening_m: gripper name -> widest finger gap, metres (wider grasps are skipped).
        handover_poses: object name -> (4, 4) pose its holder presents it at, or None.
        lift_m, retreat_m: metres (see the module docstring).
        notes: what the model left out and why (too wide grasps...), for error messages.
    """

    factory: ConstraintGraphFactory
    variants: dict[str, tuple[GraspVariant, ...]]
    placements: dict[str, tuple[PlacementCandidate, ...]]
    start_poses: dict[str, Pose] = field(default_factory=dict)
    tcp_poses: dict[str, Pose] = field(default_factory=dict)
    gripper_opening_m: dict[str, float] = field(default_factory=dict)
    handover_poses: dict[str, Optional[Pose]] = field(default_factory=dict)
    lift_m: float = 0.10
    retreat_m: float = 0.10
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        f = self.factory
        for h in f.handles:
            if not self.variants.get(h):
                raise ValueError(f"handle {h!r} has no grasp pose")
        for o in f.objects:
            self.placements.setdefault(o, ())
            self.handover_poses.setdefault(o, None)
        self.placements = {o: tuple(ps) for o, ps in self.placements.items()}
        self.variants = {h: tuple(vs) for h, vs in self.variants.items()}


class ModeState(tuple):
    """A search state: ``(grasps, variants, locations)`` (a plain tuple, hashable).

    ``grasps``: the HPP grasp tuple; ``variants``: per gripper the :class:`GraspVariant` index of
    its held handle, or None; ``locations``: per object the :class:`PlacementCandidate` index it
    rests on (``>= 0``), :data:`HELD`, or ``-k - 2`` (held, lifted above placement k).
    """

    __slots__ = ()

    def __new__(cls, grasps: GraspTuple, variants: tuple, locations: tuple) -> "ModeState":
        return tuple.__new__(cls, (tuple(grasps), tuple(variants), tuple(locations)))

    @property
    def grasps(self) -> GraspTuple:
        return self[0]

    @property
    def variants(self) -> tuple:
        return self[1]

    @property
    def locations(self) -> tuple:
        return self[2]


@dataclass(frozen=True)
class GeometricGoal:
    """A goal on grasps and placements.

    Attributes:
        grasps: any :data:`~.regrasp.Goal` form (``{gripper: handle or None}``, partial; a state
            name; a grasp tuple), or None (any grasp state).
        faces: object name -> faces it must end resting on (``["box/+x", "box/-x"]``); the object
            must then be free (on a surface).
    """

    grasps: Any = None
    faces: Mapping[str, Sequence[str]] = field(default_factory=dict)

    def describe(self, factory: ConstraintGraphFactory) -> str:
        parts = []
        if self.grasps is not None:
            g = self.grasps
            parts.append(repr(dict(g)) if isinstance(g, Mapping) else
                         (factory.state_name(tuple(g)) if isinstance(g, (tuple, list)) else str(g)))
        for o, fs in self.faces.items():
            parts.append(f"{o} resting on {' or '.join(fs)}")
        return " and ".join(parts) or "anything"


def _pose_dict(pose: Pose) -> dict[str, list[float]]:
    """``{position, orientation (w, x, y, z)}`` of a (4, 4) pose (no transforms3d needed)."""
    R = np.asarray(pose, dtype=float)[:3, :3]
    # Shepperd's method, w >= 0
    tr = float(np.trace(R))
    if tr > 0:
        s = math.sqrt(tr + 1.0) * 2
        q = [0.25 * s, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s]
    elif R[0, 0] > R[1, 1] and R[0, 0] > R[2, 2]:
        s = math.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2]) * 2
        q = [(R[2, 1] - R[1, 2]) / s, 0.25 * s, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s]
    elif R[1, 1] > R[2, 2]:
        s = math.sqrt(1.0 + R[1, 1] - R[0, 0] - R[2, 2]) * 2
        q = [(R[0, 2] - R[2, 0]) / s, (R[0, 1] + R[1, 0]) / s, 0.25 * s, (R[1, 2] + R[2, 1]) / s]
    else:
        s = math.sqrt(1.0 + R[2, 2] - R[0, 0] - R[1, 1]) * 2
        q = [(R[1, 0] - R[0, 1]) / s, (R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, 0.25 * s]
    if q[0] < 0:
        q = [-v for v in q]
    n = math.sqrt(sum(v * v for v in q))
    return {"position": [round(float(v), 6) for v in np.asarray(pose)[:3, 3]],
            "orientation": [round(float(v) / n, 6) for v in q]}
