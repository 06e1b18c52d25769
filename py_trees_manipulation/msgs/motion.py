"""Arm and gripper command messages of ours (and pr2_controllers_msgs/Pr2GripperCommand).

Poses are ``(4, 4)`` homogeneous transforms in the **world** frame, metres. The pose an arm moves
is its tool centre point (TCP), set by the robot description: between the fingertips, z out of the
fingers, y along the finger travel (the Panda's ``panda_grasptarget``, 0.105 m beyond its hand
frame; the WSG 50's ``wsg50_tcp``, between its pad centres).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np


def _check_positive(name: str, value: float, allow_zero: bool = False) -> None:
    if value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'}, got {value}")


def _check_scaling(name: str, value: float) -> None:
    if not 0.0 < value <= 1.0:
        raise ValueError(f"{name} must be in (0, 1], got {value}")


def _check_planning(planner: str, planning_time_s: float, allowed_contacts: tuple) -> tuple:
    # the planner's name is checked by whoever plans (py_trees_manipulation.motion.PLANNER_CHOICES)
    if not isinstance(planner, str) or not planner:
        raise ValueError(f"planner must be a name, got {planner!r}")
    _check_positive("planning_time_s", planning_time_s)
    if isinstance(allowed_contacts, str) or not all(isinstance(a, str) for a in allowed_contacts):
        raise ValueError(f"allowed_contacts must be a list of names ('box' or 'box:table'), got {allowed_contacts!r}")
    return tuple(allowed_contacts)


@dataclass
class MoveToPoseGoal:
    """Move the TCP to ``pose``: inverse kinematics, then a collision-checked joint motion.

    Attributes:
        pose: (4, 4) target TCP pose, world frame, metres.
        velocity_scaling: fraction of the joint velocity limits, in (0, 1] (MoveIt's name).
        position_tolerance_m: accepted TCP position error at the end, metres.
        orientation_tolerance_rad: accepted TCP orientation error at the end, radians.
        planner: ``"auto"`` (the straight joint motion when it is collision-free, else planned),
            ``"straight"`` or an OMPL planner name (:data:`~py_trees_manipulation.motion.PLANNERS`).
        planning_time_s: the planner's time budget, seconds.
        acceleration_scaling: fraction of the joint acceleration limits, in (0, 1] (MoveIt's name).
        allowed_contacts: contacts the motion may make: ``"box"`` (the hand and the held object may
            touch body ``box``) or ``"box:table"`` (the held ``box``, or a robot link, may touch ``table``).
        ik_seed: arm joint positions, radians, the arm's joint order, tried first for the target's
            IK: the goal is then the solution nearest it when that one is collision-free (a
            configuration a plan checked, an elbow-up branch), else the usual search. None:
            the arm's configuration now first. Used where this project plans the motion (the
            simulator; the hardware backend with a scene); a bridge node that plans itself ignores it.
        plan_key: the behaviour node that sends the goal (its name and place in the task file;
            "" when unknown): a motion the check before the run planned for that node is followed
            as planned when it still fits (:mod:`py_trees_manipulation.collision.kept_plans`). Not
            sent to a robot.
    """

    pose: np.ndarray
    velocity_scaling: float = 0.5
    position_tolerance_m: float = 0.01
    orientation_tolerance_rad: float = 0.1
    planner: str = "auto"
    planning_time_s: float = 2.0
    acceleration_scaling: float = 0.5
    allowed_contacts: tuple[str, ...] = field(default_factory=tuple)
    ik_seed: Optional[tuple[float, ...]] = None
    plan_key: str = ""

    def __post_init__(self) -> None:
        _check_scaling("velocity_scaling", self.velocity_scaling)
        _check_scaling("acceleration_scaling", self.acceleration_scaling)
        self.allowed_contacts = _check_planning(self.planner, self.planning_time_s, self.allowed_contacts)
        if self.ik_seed is not None:
            seed = tuple(float(v) for v in self.ik_seed)
            if not seed or not all(np.isfinite(seed)):
                raise ValueError(f"ik_seed must be finite joint positions in radians, got {self.ik_seed!r}")
            self.ik_seed = seed


@dataclass
class MoveCartesianGoal:
    """Move the TCP along a straight line to ``pose`` at ``speed_mps`` (orientation slerped); the
    line is checked for collisions before it starts.

    Attributes:
        pose: (4, 4) target TCP pose, world frame, metres.
        speed_mps: TCP linear speed, m/s.
        max_force_n: stop early (SUCCEEDED with ``stopped_on_contact``) when the wrist force
            exceeds this, newtons; ``None`` disables the guard. A guarded line may end in contact.
        contact_speed_mps: a guarded line's speed at its expected contact, m/s; ``None``: the
            fastest at which the guard stops within twice its threshold
            (:mod:`py_trees_manipulation.scene.contact`).
        position_tolerance_m: accepted TCP position error, metres.
        allowed_contacts: as :class:`MoveToPoseGoal`.
        plan_key: as :class:`MoveToPoseGoal`.
    """

    pose: np.ndarray
    speed_mps: float = 0.1
    max_force_n: Optional[float] = None
    position_tolerance_m: float = 0.01
    allowed_contacts: tuple[str, ...] = field(default_factory=tuple)
    contact_speed_mps: Optional[float] = None
    plan_key: str = ""

    def __post_init__(self) -> None:
        _check_positive("speed_mps", self.speed_mps)
        if self.contact_speed_mps is not None:
            _check_positive("contact_speed_mps", self.contact_speed_mps)
        self.allowed_contacts = _check_planning("auto", 1.0, self.allowed_contacts)


@dataclass
class MoveJointsGoal:
    """Move the arm joints to ``positions`` (radians, arm joint order), collision-checked; the
    other fields are those of :class:`MoveToPoseGoal`."""

    positions: list[float]
    velocity_scaling: float = 0.5
    planner: str = "auto"
    planning_time_s: float = 2.0
    acceleration_scaling: float = 0.5
    allowed_contacts: tuple[str, ...] = field(default_factory=tuple)
    plan_key: str = ""

    def __post_init__(self) -> None:
        _check_scaling("velocity_scaling", self.velocity_scaling)
        _check_scaling("acceleration_scaling", self.acceleration_scaling)
        self.allowed_contacts = _check_planning(self.planner, self.planning_time_s, self.allowed_contacts)


@dataclass
class JointTrajectoryGoal:
    """Follow a timed joint trajectory (control_msgs/FollowJointTrajectory's points): what the
    hardware client sends once it has planned a motion, and what the stand-in robot executes.

    Attributes:
        joint_names: the joints of ``positions``' columns.
        times: time from start of each point, seconds, shape (n,), increasing, > 0.
        positions: joint positions, radians, shape (n, dof).
        velocities: joint velocities, rad/s, shape (n, dof) (zero at the last point).
    """

    joint_names: list[str]
    times: np.ndarray
    positions: np.ndarray
    velocities: np.ndarray

    def __post_init__(self) -> None:
        self.times = np.asarray(self.times, dtype=float)
        self.positions = np.asarray(self.positions, dtype=float)
        self.velocities = np.asarray(self.velocities, dtype=float)
        n, dof = len(self.times), len(self.joint_names)
        if n == 0:
            raise ValueError("a joint trajectory needs at least one point")
        if self.positions.shape != (n, dof) or self.velocities.shape != (n, dof):
            raise ValueError(f"positions and velocities must be ({n}, {dof}) arrays, got {self.positions.shape} "
                             f"and {self.velocities.shape}")
        if not np.all(np.isfinite(self.positions)) or not np.all(np.isfinite(self.velocities)):
            raise ValueError("a joint trajectory holds a non-finite value")
        if self.times[0] <= 0 or np.any(np.diff(self.times) <= 0):
            raise ValueError("time_from_start must be positive and increasing")


@dataclass
class MotionFeedback:
    """Progress of an arm motion: the TCP pose now and its distance to the target (m).

    Attributes:
        phase: ``"planning"`` (the motion is being checked and planned; the robot holds still) or
            ``"executing"``.
        planner: the planner asked for (``auto``, ``straight``, an OMPL name; ``line`` for a
            Cartesian motion) while planning, the one used while executing.
        planning_time_s: wall time spent planning so far (planning) or in total (executing), seconds.
        plan: while executing: ``"check"`` when the motion follows the plan the check before the
            run made (:mod:`py_trees_manipulation.collision.kept_plans`), else "".
        note: while executing: why the check's plan was not used (``"plan from the check not used:
            start differs by 0.031 rad at panda_joint4"``), else "".
    """

    tcp_pose: np.ndarray
    distance_m: float
    progress: float = 0.0
    phase: str = "executing"
    planner: str = ""
    planning_time_s: float = 0.0
    plan: str = ""
    note: str = ""


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
