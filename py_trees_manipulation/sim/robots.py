"""Robot models of the simulator: the Franka Emika Panda from ``pybullet_data``.

A :class:`RobotModel` is static data (URDF path, joint names, named configurations, gripper
figures). A :class:`LoadedRobot` is that model loaded in one PyBullet client: joint indices, limits
and velocity limits read from the URDF, the TCP link, and forward kinematics.

The Panda's TCP is the ``panda_grasptarget`` link of ``franka_panda/panda.urdf`` (0.105 m beyond the
``panda_hand`` frame along its z axis, between the fingertips). A URDF without that link falls back
to the flange (``panda_hand``) plus 0.1034 m along the hand's z axis (Franka's documented TCP).
TCP frame: z points out of the fingers (approach direction), y is the finger travel axis
(``panda_finger_joint1`` moves along +y), x completes the right-handed frame. A top-down grasp is
``rpy_deg: [180, 0, yaw]``.

Sources: ``pybullet_data/franka_panda/panda.urdf`` (limits, efforts, velocities); Franka Hand data
sheet (70 N continuous grasping force, 140 N peak, 0.08 m stroke, about 0.05 m/s per finger).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np
import pybullet as pb

from ..conventions import quat_wxyz_from_xyzw
from ..geometry.poses import Pose, invert, pose_from_pq


@dataclass(frozen=True)
class RobotModel:
    """Static description of a robot arm with a parallel gripper.

    Attributes:
        name: model name used in the scene (``model: franka_panda``).
        urdf: URDF path relative to ``pybullet_data``.
        arm_joint_names: the arm's revolute joints, base to tip.
        finger_joint_names: the two prismatic finger joints; the finger gap is their sum, metres.
        tcp_link_name: link whose frame is the TCP, if the URDF has it.
        flange_link_name: link used with ``tcp_offset_m`` when ``tcp_link_name`` is absent.
        tcp_offset_m: TCP offset along the flange link's z axis, metres (fallback only).
        named_configurations: arm joint positions, radians, ``arm_joint_names`` order.
        max_gap_m: fully open finger gap, metres.
        default_grip_force_n: finger force used when a command's ``max_effort`` is negative
            ("unlimited" on the PR2), newtons per finger.
        max_grip_force_n: upper clip of the commanded finger force, newtons per finger.
        finger_speed_mps: speed of each finger, m/s (the gap changes twice as fast).
        finger_lateral_friction: Coulomb friction coefficient set on the finger links.
        acceleration_limits: arm joint acceleration limits, rad/s^2, ``arm_joint_names`` order (the
            URDF has none; the motion planner's time parameterisation reads them).
        allowed_collision_pairs: link-name pairs never checked against each other for self-collision
            (beyond parent-child pairs, which are never checked).
    """

    name: str
    urdf: str
    arm_joint_names: tuple[str, ...]
    finger_joint_names: tuple[str, str]
    tcp_link_name: str
    flange_link_name: str
    tcp_offset_m: float
    named_configurations: dict[str, tuple[float, ...]] = field(default_factory=dict)
    max_gap_m: float = 0.08
    default_grip_force_n: float = 70.0
    max_grip_force_n: float = 140.0
    finger_speed_mps: float = 0.05
    finger_lateral_friction: float = 1.5
    acceleration_limits: tuple[float, ...] = ()
    allowed_collision_pairs: tuple[tuple[str, str], ...] = ()


PANDA = RobotModel(
    name="franka_panda",
    urdf="franka_panda/panda.urdf",
    arm_joint_names=tuple(f"panda_joint{i}" for i in range(1, 8)),
    finger_joint_names=("panda_finger_joint1", "panda_finger_joint2"),
    tcp_link_name="panda_grasptarget",
    flange_link_name="panda_hand",
    tcp_offset_m=0.1034,
    named_configurations={
        # Franka's "ready" pose: hand above the front of the base, fingers pointing down.
        "ready": (0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785),
        # All joints at zero except those whose limits exclude it (joint 4 <= 0, joint 6 >= -0.087).
        "home": (0.0, 0.0, 0.0, -0.0698, 0.0, 0.0698, 0.785),
        # Arm stretched forwards at shoulder height, hand pointing down.
        "extended": (0.0, 0.6, 0.0, -1.2, 0.0, 1.8, 0.785),
    },
    # Franka Emika Panda data sheet ("Robot and interface specifications"): max joint accelerations.
    acceleration_limits=(15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0),
)

MODELS: dict[str, RobotModel] = {PANDA.name: PANDA}
"""Robot models by scene ``model`` name."""


class LoadedRobot:
    """A :class:`RobotModel` loaded in one PyBullet client.

    Args:
        client: PyBullet physics client id.
        body: body unique id of the loaded URDF.
        model: the model it was loaded from.

    Attributes:
        arm_joints: joint indices of ``model.arm_joint_names``.
        finger_joints: joint indices of the two finger joints.
        movable_joints: indices of every non-fixed joint, in index order (the order of
            ``calculateInverseKinematics`` results).
        lower, upper: arm joint limits, radians, shape (n_arm,).
        velocity_limits: arm joint velocity limits, rad/s, shape (n_arm,).
        acceleration_limits: arm joint acceleration limits, rad/s^2, shape (n_arm,).
        effort_limits: arm joint torque limits, N m, shape (n_arm,).
        finger_upper: upper limit of each finger joint, metres.
        tcp_link: link index whose frame (times ``tcp_in_link``) is the TCP.
        tcp_in_link: (4, 4) TCP pose in the ``tcp_link`` frame (identity with ``panda_grasptarget``).

    Raises:
        ValueError: when a joint of the model is missing from the URDF.
    """

    def __init__(self, client: int, body: int, model: RobotModel):
        self.client = client
        self.body = body
        self.model = model
        n = pb.getNumJoints(body, physicsClientId=client)
        infos = [pb.getJointInfo(body, j, physicsClientId=client) for j in range(n)]
        self.joint_index = {info[1].decode(): j for j, info in enumerate(infos)}
        self.link_index = {info[12].decode(): j for j, info in enumerate(infos)}
        self.link_index.setdefault(pb.getBodyInfo(body, physicsClientId=client)[0].decode(), -1)
        missing = [j for j in (*model.arm_joint_names, *model.finger_joint_names) if j not in self.joint_index]
        if missing:
            raise ValueError(f"URDF {model.urdf} has no joint(s) {missing}")
        self.arm_joints = [self.joint_index[j] for j in model.arm_joint_names]
        self.finger_joints = [self.joint_index[j] for j in model.finger_joint_names]
        self.movable_joints = [j for j, info in enumerate(infos) if info[2] != pb.JOINT_FIXED]
        arm = [infos[j] for j in self.arm_joints]
        self.lower = np.array([i[8] for i in arm])
        self.upper = np.array([i[9] for i in arm])
        self.effort_limits = np.array([i[10] for i in arm])
        self.velocity_limits = np.array([i[11] for i in arm])
        # rad/s^2: the model's figures, or (none given) 5x the velocity limit per second
        self.acceleration_limits = (np.array(model.acceleration_limits, dtype=float) if model.acceleration_limits
                                    else 5.0 * self.velocity_limits)
        self.finger_upper = float(infos[self.finger_joints[0]][9])
        self.finger_effort_limit = float(infos[self.finger_joints[0]][10])
        self.finger_links = list(self.finger_joints)  # a joint's child link has the joint's index
        if model.tcp_link_name in self.link_index:
            self.tcp_link = self.link_index[model.tcp_link_name]
            self.tcp_in_link = np.eye(4)
        else:
            self.tcp_link = self.link_index[model.flange_link_name]
            self.tcp_in_link = np.eye(4)
            self.tcp_in_link[2, 3] = model.tcp_offset_m
        self.link_in_tcp = invert(self.tcp_in_link)
        self._tcp_is_link = bool(np.array_equal(self.tcp_in_link, np.eye(4)))
        # Per-DoF arrays for calculateInverseKinematics (its lists cover every movable joint).
        all_lower = np.array([infos[j][8] for j in self.movable_joints])
        all_upper = np.array([infos[j][9] for j in self.movable_joints])
        self.ik_lower = all_lower.tolist()
        self.ik_upper = all_upper.tolist()
        self.ik_ranges = np.maximum(all_upper - all_lower, 1e-3).tolist()
        self._arm_in_movable = [self.movable_joints.index(j) for j in self.arm_joints]

    @property
    def arm_joint_names(self) -> list[str]:
        """Names of the arm joints, base to wrist (the model's order; fingers excluded)."""
        return list(self.model.arm_joint_names)

    def joint_positions(self) -> np.ndarray:
        """Arm joint positions, radians, shape (n_arm,)."""
        states = pb.getJointStates(self.body, self.arm_joints, physicsClientId=self.client)
        return np.array([s[0] for s in states])

    def joint_velocities(self) -> np.ndarray:
        """Arm joint velocities, rad/s, shape (n_arm,)."""
        states = pb.getJointStates(self.body, self.arm_joints, physicsClientId=self.client)
        return np.array([s[1] for s in states])

    def finger_positions(self) -> tuple[float, float]:
        """Both finger joint positions, metres (each 0 closed .. ``finger_upper`` open)."""
        s = pb.getJointStates(self.body, self.finger_joints, physicsClientId=self.client)
        return float(s[0][0]), float(s[1][0])

    def reset_arm(self, q: Sequence[float]) -> None:
        """Teleport the arm joints to ``q`` (radians). Only for set-up and the kinematics shadow."""
        for j, v in zip(self.arm_joints, q):
            pb.resetJointState(self.body, j, float(v), 0.0, physicsClientId=self.client)

    def reset_fingers(self, each_m: float) -> None:
        """Teleport both finger joints to ``each_m`` metres each (gap ``2 * each_m``). Set-up only."""
        for j in self.finger_joints:
            pb.resetJointState(self.body, j, float(each_m), 0.0, physicsClientId=self.client)

    def link_pose(self, link: int) -> Pose:
        """(4, 4) world pose of a link frame (URDF link frame, not the inertial frame)."""
        if link == -1:
            p, q = pb.getBasePositionAndOrientation(self.body, physicsClientId=self.client)
        else:
            st = pb.getLinkState(self.body, link, computeForwardKinematics=True, physicsClientId=self.client)
            p, q = st[4], st[5]
        return pose_from_pq(p, quat_wxyz_from_xyzw(q))

    def tcp_pose(self) -> Pose:
        """(4, 4) TCP pose, world frame, metres."""
        return self.link_pose(self.tcp_link) @ self.tcp_in_link

    def tcp_position(self) -> np.ndarray:
        """TCP position, world frame, metres, shape (3,). Cheaper than :meth:`tcp_pose`."""
        st = pb.getLinkState(self.body, self.tcp_link, computeForwardKinematics=True, physicsClientId=self.client)
        if self._tcp_is_link:
            return np.array(st[4])
        return self.tcp_pose()[:3, 3]

    def tcp_errors(self, target: Pose) -> tuple[float, float]:
        """(position error m, orientation error rad) of the TCP from ``target`` ((4, 4), world).

        The fast path used inside IK loops: no (4, 4) pose is built when the TCP is a URDF link.
        """
        if not self._tcp_is_link:
            fk = self.tcp_pose()
            d = float(np.linalg.norm(fk[:3, 3] - target[:3, 3]))
            c = (np.trace(fk[:3, :3].T @ target[:3, :3]) - 1.0) / 2.0
            return d, float(np.arccos(np.clip(c, -1.0, 1.0)))
        st = pb.getLinkState(self.body, self.tcp_link, computeForwardKinematics=True, physicsClientId=self.client)
        p = st[4]
        dx, dy, dz = p[0] - target[0, 3], p[1] - target[1, 3], p[2] - target[2, 3]
        R = np.array(pb.getMatrixFromQuaternion(st[5], physicsClientId=self.client)).reshape(3, 3)
        c = (float(np.trace(R.T @ target[:3, :3])) - 1.0) / 2.0
        return math.sqrt(dx * dx + dy * dy + dz * dz), math.acos(max(-1.0, min(1.0, c)))

    def clip_to_limits(self, q: Sequence[float]) -> np.ndarray:
        """Arm joint positions ``q`` (radians, shape (n_arm,)) clipped to the URDF joint limits."""
        return np.clip(np.asarray(q, dtype=float), self.lower, self.upper)

    def arm_from_ik(self, ik_solution: Sequence[float]) -> np.ndarray:
        """The arm joints of a ``calculateInverseKinematics`` result (which covers all movable joints)."""
        return np.array([ik_solution[i] for i in self._arm_in_movable])

    def ik_rest(self, q_arm: Sequence[float]) -> list[float]:
        """A full-DoF rest-pose list for ``calculateInverseKinematics``: arm ``q_arm``, fingers as now."""
        rest = [0.0] * len(self.movable_joints)
        for k, v in zip(self._arm_in_movable, q_arm):
            rest[k] = float(v)
        f = self.finger_positions()
        for j, v in zip(self.finger_joints, f):
            rest[self.movable_joints.index(j)] = v
        return rest


def model_by_name(name: str) -> Optional[RobotModel]:
    """The built-in :class:`RobotModel` called ``name`` (a key of :data:`MODELS`), or None."""
    return MODELS.get(name)
