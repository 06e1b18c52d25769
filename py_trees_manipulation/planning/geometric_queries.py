"""What a geometric regrasp planner asks the geometry and what it returns: a transition's query
(:class:`TransitionQuery`) and the checker's answer (:class:`TransitionResult`), the steps and plans
of a search (:class:`GeometricStep`, :class:`GeometricPlan`) and the transitions it pruned
(:class:`PrunedTransition`). Overview: :mod:`~.geometric`.

Units: metres, seconds; poses are (4, 4) homogeneous transforms, world frame.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Sequence

from .geometric_model import GraspVariant, ModeState, PlacementCandidate, Pose, _pose_dict
from .regrasp import RegraspPlan, RegraspStep

__all__ = ["TransitionQuery", "TransitionResult", "Checker", "GeometricStep", "PrunedTransition", "GeometricPlan"]


@dataclass(frozen=True)
class TransitionQuery:
    """What the geometry is asked about one transition (all poses world frame, metres).

    Attributes:
        kind: ``"grasp"`` (from a surface), ``"release"`` (onto a placement), ``"handover_grasp"``
            (another gripper holds the object) or ``"handover_release"`` (another gripper keeps it).
        gripper, handle, object: HPP names.
        variant: the :class:`GraspVariant` used (its pose is the TCP in the object frame).
        object_pose: where the object is during the step: the placement it is taken from or put
            on, or where it is handed over.
        placement: the :class:`PlacementCandidate` (grasp and release), else None.
        approach_m, lift_m, retreat_m: waypoint offsets (module docstring).
        partner: for a handover, ``(gripper, variant)`` of the other gripper holding the object.
        others: object name -> (4, 4) pose of every other object lying somewhere in this state
            (held ones are left out).
        transition: the HPP transition name (for messages).
    """

    kind: str
    gripper: str
    handle: str
    object: str
    variant: GraspVariant
    object_pose: Pose
    placement: Optional[PlacementCandidate]
    approach_m: float
    lift_m: float
    retreat_m: float
    partner: Optional[tuple[str, GraspVariant]] = None
    others: Mapping[str, Pose] = field(default_factory=dict)
    transition: str = ""


@dataclass(frozen=True)
class TransitionResult:
    """The geometry's answer about one transition.

    Attributes:
        ok: every waypoint has a collision-free IK solution (and the motions between them, when
            checked, are clear).
        reason: why not, naming the waypoint (``"pregrasp: target (...) is out of reach ..."``).
        waypoint: the failing waypoint (``pregrasp``, ``intersec``, ``preplace``, ``retreat``...).
        cause: what failed: ``"reach"`` (IK), ``"collision"``, ``"support"`` (the hand or the held object
            would hit the surface the object rests on: the same at any position on it), ``"support_arm"``
            (another link of the arm would), ``"width"``, ``"motion"``.
        configurations: waypoint name -> arm joint positions, radians.
        obstacle: the body the arm (or the held object) would hit, "" when none or itself.
        ik_s, collision_s: wall time spent in IK and in collision checks, seconds.
        ik_calls, collision_checks: how many.
    """

    ok: bool
    reason: str = ""
    waypoint: str = ""
    cause: str = ""
    obstacle: str = ""
    configurations: Mapping[str, Sequence[float]] = field(default_factory=dict)
    ik_s: float = 0.0
    collision_s: float = 0.0
    ik_calls: int = 0
    collision_checks: int = 0


Checker = Callable[[TransitionQuery], TransitionResult]


@dataclass(frozen=True)
class GeometricStep(RegraspStep):
    """A :class:`~.regrasp.RegraspStep` with its geometry.

    Attributes:
        variant: the grasp variant's name; variant_index: its index among the handle's variants.
        grasp_pose: (4, 4) TCP pose in the object frame.
        placement: for a grasp from / release onto a surface, the :class:`PlacementCandidate`.
        object_pose: (4, 4) world pose of the object during the step (module docstring).
        partner: the other gripper of a handover, or "".
        check: the :class:`TransitionResult` that accepted it (None when not checked).
    """

    variant: str = ""
    variant_index: int = 0
    grasp_pose: Optional[Pose] = field(default=None, compare=False)
    placement: Optional[PlacementCandidate] = field(default=None, compare=False)
    object_pose: Optional[Pose] = field(default=None, compare=False)
    partner: str = ""
    check: Optional[TransitionResult] = field(default=None, compare=False)

    @property
    def label(self) -> str:
        """``"panda/hand > box/+x | f [box/+x/0] from box/-z at (0.50, 0.00)"``."""
        text = f"{self.transition} [{self.variant}]"
        if self.placement is not None:
            text += (" from " if self.direction == "grasp" else " onto ") + self.placement.name
        return text

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out.update({
            "variant": self.variant,
            "variant_index": self.variant_index,
            "grasp_pose": _pose_dict(self.grasp_pose) if self.grasp_pose is not None else None,
            "placement": self.placement.to_dict() if self.placement is not None else None,
            "object_pose": _pose_dict(self.object_pose) if self.object_pose is not None else None,
            "partner": self.partner,
        })
        if self.check is not None:
            out["check"] = {"ok": self.check.ok, "ik_ms": round(self.check.ik_s * 1e3, 3),
                            "collision_ms": round(self.check.collision_s * 1e3, 3),
                            "configurations": {k: [round(float(v), 6) for v in q]
                                               for k, q in self.check.configurations.items()}}
        return out


@dataclass(frozen=True)
class PrunedTransition:
    """A transition the geometry refused: its label, the failing waypoint, the cause and why."""

    label: str
    waypoint: str
    cause: str
    reason: str

    def describe(self) -> str:
        return f"{self.label}: {self.waypoint}: {self.reason}" if self.waypoint else f"{self.label}: {self.reason}"


@dataclass(frozen=True)
class GeometricPlan(RegraspPlan):
    """A :class:`~.regrasp.RegraspPlan` of :class:`GeometricStep` s whose transitions were checked.

    Attributes:
        start_state, goal_state: the :class:`ModeState` s; path: every state, start to goal.
        pruned: the transitions refused on the way (:class:`PrunedTransition`).
        checks: transitions checked (cache hits not counted); candidates: candidate plans tried.
        plan_time_s, ik_time_s, collision_time_s: wall time of the whole search and the part spent
            in IK and in collision checks, seconds.
    """

    start_state: Optional[ModeState] = None
    goal_state: Optional[ModeState] = None
    path: tuple = field(default=(), compare=False)
    pruned: tuple[PrunedTransition, ...] = ()
    checks: int = 0
    candidates: int = 0
    plan_time_s: float = 0.0
    ik_time_s: float = 0.0
    collision_time_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out.update({"checks": self.checks, "candidates": self.candidates,
                    "pruned": [p.describe() for p in self.pruned],
                    "plan_time_ms": round(self.plan_time_s * 1e3, 3),
                    "ik_time_ms": round(self.ik_time_s * 1e3, 3),
                    "collision_time_ms": round(self.collision_time_s * 1e3, 3)})
        return out
