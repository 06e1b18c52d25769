"""Screw-motion action messages: ``follow_screw`` (door arcs, drawer lines, lever twists).

The arm action that MoveAlongArc and TwistHandle send. The screw is a
:class:`~py_trees_manipulation.geometry.screw.Screw` (axis, point, pitch; (omega, v) order).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..geometry.screw import Screw

FOLLOW_SCREW_ACTION = "follow_screw"

@dataclass
class FollowScrewGoal:
    """Move the held TCP along a screw (door arc, drawer line, lever twist).

    The start pose is the TCP pose when the goal starts; the path is
    ``T(s) = exp([S] s) T0`` for ``s`` from 0 to ``theta``
    (:func:`~py_trees_manipulation.geometry.screw.pose_on_screw`).

    Attributes:
        screw: the screw axis (world frame).
        theta: total motion: radians (finite pitch) or metres (pure translation); the sign is the
            direction.
        speed: cruise speed of the screw coordinate, rad/s or m/s (> 0).
        max_force_n: abort when the wrist force (gravity of the hand removed, averaged over 50 ms)
            exceeds this, newtons; ``None``: no force guard.
        max_tracking_error_m: abort when the TCP is farther than this from where the screw says
            it should be, for 0.1 s, metres (the mechanism does not follow: locked or stuck door,
            slipped grasp).
        effort_scale: fraction (0, 1] of the arm's joint torque limits used while following (lower
            is more compliant).
        max_chord_error_m: chord error of the IK waypoints along an arc, metres.
        position_tolerance_m: accepted final TCP position error, metres.
    """

    screw: Screw
    theta: float
    speed: float = 0.25
    max_force_n: Optional[float] = 60.0
    max_tracking_error_m: float = 0.04
    effort_scale: float = 0.5
    max_chord_error_m: float = 0.001
    position_tolerance_m: float = 0.02

    def __post_init__(self) -> None:
        if not isinstance(self.screw, Screw):
            raise TypeError(f"screw must be a Screw, got {type(self.screw).__name__}")
        if not math.isfinite(float(self.theta)):
            raise ValueError(f"theta must be finite, got {self.theta}")
        if not self.speed > 0:
            raise ValueError(f"speed must be > 0, got {self.speed}")
        if self.max_force_n is not None and not self.max_force_n > 0:
            raise ValueError(f"max_force_n must be > 0 N, got {self.max_force_n}")
        if not self.max_tracking_error_m > 0:
            raise ValueError(f"max_tracking_error_m must be > 0 m, got {self.max_tracking_error_m}")
        if not 0 < self.effort_scale <= 1:
            raise ValueError(f"effort_scale must be in (0, 1], got {self.effort_scale}")
        if not self.max_chord_error_m > 0 or not self.position_tolerance_m > 0:
            raise ValueError("max_chord_error_m and position_tolerance_m must be > 0 m")


@dataclass
class FollowScrewFeedback:
    """Progress of ``follow_screw``.

    Attributes:
        theta_reached: screw coordinate of the TCP now (rad or m), from its position
            (:func:`~py_trees_manipulation.geometry.screw.screw_coordinate`).
        progress: fraction of the commanded path sent to the joints, 0..1.
        wrist_force_n: filtered wrist force, newtons.
        tracking_error_m: TCP distance from the commanded point on the screw, metres.
    """

    theta_reached: float
    progress: float
    wrist_force_n: float
    tracking_error_m: float


@dataclass
class FollowScrewResult:
    """Outcome of ``follow_screw``.

    Attributes:
        theta_reached: screw coordinate of the TCP at the end (rad or m).
        tcp_pose: (4, 4) TCP pose at the end, world frame.
        max_wrist_force_n: largest filtered wrist force during the motion, newtons.
        tracking_error_m: final TCP distance from the commanded end, metres.
    """

    theta_reached: float
    tcp_pose: np.ndarray
    max_wrist_force_n: float
    tracking_error_m: float = 0.0


# ================================================================================================
# Perception stand-ins (simulator)
# ================================================================================================
