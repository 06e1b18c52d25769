"""Arm and gripper command messages of ours (and pr2_controllers_msgs/Pr2GripperCommand).

Poses are ``(4, 4)`` homogeneous transforms in the **world** frame, metres. The pose an arm moves
is its tool centre point (TCP), set by the robot description: between the fingertips, z out of the
fingers, y along the finger travel (the Panda's ``panda_grasptarget``, 0.105 m beyond its hand
frame; the WSG 50's ``wsg50_tcp``, between its pad centres).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np


def _check_positive(name: str, value: float, allow_zero: bool = False) -> None:
    if value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'}, got {value}")


@dataclass
class MoveToPoseGoal:
    """Move the TCP to ``pose`` by inverse kinematics and joint-space interpolation.

    Attributes:
        pose: (4, 4) target TCP pose, world frame, metres.
        velocity_scaling: fraction of the joint velocity limits, in (0, 1].
        position_tolerance_m: accepted TCP position error at the end, metres.
        orientation_tolerance_rad: accepted TCP orientation error at the end, radians.
    """

    pose: np.ndarray
    velocity_scaling: float = 0.5
    position_tolerance_m: float = 0.01
    orientation_tolerance_rad: float = 0.1

    def __post_init__(self) -> None:
        if not 0.0 < self.velocity_scaling <= 1.0:
            raise ValueError(f"velocity_scaling must be in (0, 1], got {self.velocity_scaling}")


@dataclass
class MoveCartesianGoal:
    """Move the TCP along a straight line to ``pose`` at ``speed_mps`` (orientation slerped).

    Attributes:
        pose: (4, 4) target TCP pose, world frame, metres.
        speed_mps: TCP linear speed, m/s.
        max_force_n: stop early (SUCCEEDED with ``stopped_on_contact``) when the wrist force
            exceeds this, newtons; ``None`` disables the guard.
    """

    pose: np.ndarray
    speed_mps: float = 0.1
    max_force_n: Optional[float] = None
    position_tolerance_m: float = 0.01

    def __post_init__(self) -> None:
        _check_positive("speed_mps", self.speed_mps)


@dataclass
class MoveJointsGoal:
    """Move the arm joints to ``positions`` (radians, arm joint order) in joint space."""

    positions: list[float]
    velocity_scaling: float = 0.5

    def __post_init__(self) -> None:
        if not 0.0 < self.velocity_scaling <= 1.0:
            raise ValueError(f"velocity_scaling must be in (0, 1], got {self.velocity_scaling}")


@dataclass
class MotionFeedback:
    """Progress of an arm motion: the TCP pose now and its distance to the target (m)."""

    tcp_pose: np.ndarray
    distance_m: float
    progress: float = 0.0


@dataclass
class MotionResult:
    """End of an arm motion.

    Attributes:
        tcp_pose: (4, 4) TCP pose at the end, world frame.
        position_error_m: distance from the target, metres.
        stopped_on_contact: a Cartesian move stopped by its force guard.
    """

    tcp_pose: np.ndarray
    position_error_m: float
    stopped_on_contact: bool = False


@dataclass
class Pr2GripperCommand:
    """pr2_controllers_msgs/Pr2GripperCommand.

    Attributes:
        position: commanded finger gap, metres (0 closed; the Panda opens to 0.08 m, the WSG 50 to 0.104 m).
        max_effort: maximum gripping effort, newtons; negative means unlimited (as on the PR2).
    """

    position: float = 0.08
    max_effort: float = -1.0

    def __post_init__(self) -> None:
        _check_positive("position", self.position, allow_zero=True)


@dataclass
class Pr2GripperCommandResult:
    """pr2_controllers_msgs/Pr2GripperCommandResult (also the feedback type).

    Attributes:
        position: finger gap now, metres.
        effort: gripping effort now, newtons.
        stalled: the fingers stopped short of the goal (typically on an object).
        reached_goal: the gap reached the commanded position.
    """

    position: float = 0.0
    effort: float = 0.0
    stalled: bool = False
    reached_goal: bool = False
