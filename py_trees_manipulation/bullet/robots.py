"""Robots in the simulator: a robot description loaded in one PyBullet client.

What a robot *is* (URDF, arm joints, TCP, gripper, pads, named configurations, limits) is data: a
robot description file (:mod:`py_trees_manipulation.robots`; the stock models ``franka_panda`` and
``kuka_iiwa_wsg50`` are in ``robots/models/``). :class:`LoadedRobot` is one such description loaded
in a PyBullet client: joint and link indices, limits (the description's, else the URDF's), the TCP
link and offset, the wrist force-torque joint, the finger pad links, and forward kinematics.

TCP frame (every stock model): z points out of the fingers (approach direction), y is the finger
travel axis, x completes the right-handed frame. A top-down grasp is ``rpy_deg: [180, 0, yaw]``.
"""

from __future__ import annotations

from . import _quiet_import  # noqa: F401  (first: pybullet's import banner)

import math
from collections.abc import Mapping
from typing import Iterator, Optional, Sequence

import numpy as np
import pybullet as pb

from ..geometry.poses import Pose, invert
from ..robots import RobotDescription, stock_description, stock_models
from ..robots.linkage import linkage_loops, pad_actuator
from ..robots.urdf import parse_urdf
from .pb_pose import pose_from_pybullet

RobotModel = RobotDescription
"""The simulator's name for a robot description (kept for the code that reads ``robot.model``)."""


class _StockModels(Mapping):
    """Stock robot descriptions by model name, loaded on first use (``MODELS["franka_panda"]``)."""

    def __getitem__(self, name: str) -> RobotDescription:
        if name not in stock_models():
            raise KeyError(name)
        return stock_description(name)

    def __iter__(self) -> Iterator[str]:
        return iter(stock_models())

    def __len__(self) -> int:
        return len(stock_models())


MODELS: Mapping[str, RobotDescription] = _StockModels()
"""The stock robot descriptions by scene ``model`` name."""


class LoadedRobot:
    """A :class:`~py_trees_manipulation.robots.RobotDescription` loaded in one PyBullet client.

    Args:
        client: PyBullet physics client id.
        body: body unique id of the loaded URDF (``model.urdf``).
        model: the description it was loaded from.

    Attributes:
        arm_joints: joint indices of ``model.arm_joint_names``.
        finger_joints: joint indices of the two finger joints.
        movable_joints: indices of every non-fixed joint, in index order (the order of
            ``calculateInverseKinematics`` results).
        lower, upper: arm joint limits, radians, shape (n_arm,).
        velocity_limits: arm joint velocity limits, rad/s, shape (n_arm,) (the description's, else the URDF's).
        acceleration_limits: arm joint acceleration limits, rad/s^2, shape (n_arm,).
        effort_limits: arm joint torque limits, N m, shape (n_arm,) (the description's, else the URDF's).
        drive_joints: joint indices of the actuated gripper joints: the two finger joints, or the
            one driver of a linkage (``model.gripper.drive_joints``); :meth:`finger_positions`,
            :meth:`finger_targets`, :meth:`gap_of` and :meth:`drive_slopes` are in these joints.
        finger_upper: upper limit of the first finger joint (m or rad).
        finger_travel, finger_closed, closed_gap: the finger gap's linear map of two finger joints
            (see :class:`~py_trees_manipulation.robots.GripperDescription`): pad travel per joint
            unit, the joints' closed positions, the closed gap (m).
        mimics: ``(follower, leader, multiplier, offset)`` joint indices of every ``<mimic>`` joint
            the simulator must couple (PyBullet ignores ``<mimic>``), each after its own leader (a
            mimic of a mimic comes after its leader); two finger joints coupled by ``coupling: gear``
            are not among them.
        tracked_mimics: True for a linkage whose driver is on one pad's chain: the simulator holds
            every mimic joint at its leader's position with a position motor, updated each physics
            step (PyBullet's gear constraints between a hand's joints put a spurious force, growing
            with the arm's motion, on the wrist force-torque joint); False: gear constraints.
        follower_actuator: a tracked linkage: ``(joint index, multiplier)`` of the other pad's
            actuated joint (:func:`~py_trees_manipulation.robots.linkage.pad_actuator`), which
            turns ``multiplier`` times the driver; None otherwise.
        linkage_pins: a tracked linkage whose URDF leaves its four-bar loops open
            (:func:`~py_trees_manipulation.robots.linkage.linkage_loops`): ``(link, pad link, point
            in link, point in pad link, passive joints)`` per pad (link indices, points in the link
            frames, m, the joint indices the pin makes passive); the simulator pins each pair
            together as the real linkage does. Empty otherwise.
        finger_links: link indices of the two finger pads (``model.gripper.pads``).
        palm_link: link index of the gripper's palm.
        wrist_ft_joint: joint index whose reaction force is the wrist force.
        tcp_link: link index whose frame (times ``tcp_in_link``) is the TCP.
        tcp_in_link: (4, 4) TCP pose in the ``tcp_link`` frame (the description's ``tcp.pose``).

    Raises:
        ValueError: when a joint or link of the description is missing from the loaded body.
    """

    def __init__(self, client: int, body: int, model: RobotDescription):
        self.client = client
        self.body = body
        self.model = model
        n = pb.getNumJoints(body, physicsClientId=client)
        infos = [pb.getJointInfo(body, j, physicsClientId=client) for j in range(n)]
        self.joint_index = {info[1].decode(): j for j, info in enumerate(infos)}
        self.link_index = {info[12].decode(): j for j, info in enumerate(infos)}
        self.link_index.setdefault(pb.getBodyInfo(body, physicsClientId=client)[0].decode(), -1)
        g = model.gripper
        missing = [j for j in (*model.arm_joint_names, *g.joints, *g.drive_joints) if j not in self.joint_index]
        missing += [ln for ln in (model.tcp_link_name, g.palm_link, *g.pad_links) if ln not in self.link_index]
        if missing:
            raise ValueError(f"URDF {model.urdf_path} as loaded has no joint or link {missing}")
        self.arm_joints = [self.joint_index[j] for j in model.arm_joint_names]
        self.finger_joints = [self.joint_index[j] for j in g.joints]
        self.drive_joints = [self.joint_index[j] for j in g.drive_joints]
        self._gripper = g
        self.movable_joints = [j for j, info in enumerate(infos) if info[2] != pb.JOINT_FIXED]
        arm = [infos[j] for j in self.arm_joints]
        self.lower = np.array([i[8] for i in arm])
        self.upper = np.array([i[9] for i in arm])
        self.effort_limits = (np.array(model.effort_limits, dtype=float) if model.effort_limits
                              else np.array([i[10] for i in arm]))
        self.velocity_limits = (np.array(model.velocity_limits, dtype=float) if model.velocity_limits
                                else np.array([i[11] for i in arm]))
        # rad/s^2: the description's figures, or (none given) 5x the velocity limit per second
        self.acceleration_limits = (np.array(model.acceleration_limits, dtype=float) if model.acceleration_limits
                                    else 5.0 * self.velocity_limits)
        self.finger_upper = float(infos[self.finger_joints[0]][9])
        self.finger_effort_limit = float(infos[self.finger_joints[0]][10])
        # finger gap = closed_gap + sum_i finger_travel[i] * (q_i - finger_closed[i]) (see GripperDescription)
        self.finger_travel = tuple(float(v) for v in g.travel_per_unit)
        self.finger_closed = tuple(float(v) for v in g.closed_positions)
        self.closed_gap = float(g.opening_m[0])
        self.finger_links = [self.link_index[ln] for ln in g.pad_links]
        # <mimic> joints (PyBullet ignores <mimic>; the backend couples them with gear constraints),
        # leaders first: (follower, leader, multiplier, offset), joint indices; two finger joints
        # coupled by the description's gear are not repeated
        urdf = parse_urdf(model.urdf_path, model.packages)
        pair = (g.joints[1], g.joints[0]) if not g.is_linkage and g.coupling == "gear" else None
        self.mimics = []
        known = set(self.joint_index) - {j.name for j in urdf.joints.values() if j.mimic is not None}
        if pair is not None:
            known.add(pair[0])
        pending = [j for j in urdf.joints.values() if j.mimic is not None and j.name in self.joint_index
                   and (j.name, j.mimic[0]) != pair]
        while pending:
            ready = [j for j in pending if j.mimic[0] in known]  # type: ignore[index]
            if not ready:
                break                                           # a loop or a missing leader: left free
            for j in ready:
                self.mimics.append((self.joint_index[j.name], self.joint_index[j.mimic[0]], j.mimic[1], j.mimic[2]))  # type: ignore[index]
                known.add(j.name)
            pending = [j for j in pending if j.name not in known]
        self.tracked_mimics = bool(g.is_linkage and g.driver_pad is not None and self.mimics)
        # a tracked linkage: the other pad's actuated joint (linkage.pad_actuator: the joint of its
        # chain the one motor turns through the gear train) and its position per unit of the driver
        self.follower_actuator: Optional[tuple[int, float]] = None
        if self.tracked_mimics and g.driver is not None and g.driver_pad is not None:
            other = g.pads[1 - g.driver_pad].link
            name = pad_actuator(urdf, g.driver, urdf.chain(other, g.palm_link))
            if name is not None and name != g.driver and name in self.joint_index:
                self.follower_actuator = (self.joint_index[name], float(urdf.mimic_root(name)[1]))
        self.linkage_pins: list[tuple[int, int, np.ndarray, np.ndarray, tuple[int, ...]]] = []
        if self.tracked_mimics and g.driver is not None:
            for loop in linkage_loops(urdf, g.driver, g.pads, g.palm_link):
                if loop.link in self.link_index and all(n in self.joint_index for n in loop.joints):
                    self.linkage_pins.append((self.link_index[loop.link], self.link_index[loop.pad_link],
                                              loop.in_link, loop.in_pad_link,
                                              tuple(self.joint_index[n] for n in loop.joints)))
        self.palm_link = self.link_index[g.palm_link]
        ft = model.wrist_ft_joint
        self.wrist_ft_joint = self.joint_index[ft] if ft in self.joint_index else self.arm_joints[-1]
        self.tcp_link = self.link_index[model.tcp_link_name]
        self.tcp_in_link = model.tcp_offset
        self.link_in_tcp = invert(self.tcp_in_link)
        self._tcp_is_link = bool(np.allclose(self.tcp_in_link, np.eye(4), atol=1e-12))
        if self._tcp_is_link:
            self.tcp_in_link = np.eye(4)
            self.link_in_tcp = np.eye(4)
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

    def finger_positions(self) -> tuple[float, ...]:
        """Positions of the actuated gripper joints (:attr:`drive_joints`: both finger joints, or a
        linkage's driver), m for prismatic joints, rad for revolute ones."""
        s = pb.getJointStates(self.body, self.drive_joints, physicsClientId=self.client)
        return tuple(float(x[0]) for x in s)

    def gap_of(self, *q: float) -> float:
        """Finger gap, m, with the actuated joints at ``q`` (two finger joints: Panda ``q0 + q1``;
        a linkage: the driver, through its kinematics)."""
        return self._gripper.gap_from_drive(q)

    def drive_slopes(self, q: Sequence[float]) -> tuple[float, ...]:
        """d gap / d q_i of each actuated joint at ``q`` (see ``GripperDescription.drive_slopes``)."""
        return self._gripper.drive_slopes(q)

    def finger_targets(self, gap_m: float) -> tuple[float, ...]:
        """Positions of the actuated joints of gap ``gap_m`` (m), both fingers travelling alike
        (Panda: gap / 2 each; a linkage: the driver's position of that gap)."""
        return self._gripper.drive_targets(gap_m)

    def reset_arm(self, q: Sequence[float]) -> None:
        """Teleport the arm joints to ``q`` (radians). Only for set-up and the kinematics shadow."""
        for j, v in zip(self.arm_joints, q):
            pb.resetJointState(self.body, j, float(v), 0.0, physicsClientId=self.client)

    def reset_gripper(self, drive: Sequence[float]) -> None:
        """Teleport the actuated gripper joints to ``drive`` (m or rad, :attr:`drive_joints` order),
        every ``<mimic>`` joint along (leaders first; mimics of mimics included). Set-up and
        kinematic copies only."""
        c = self.client
        for j, q in zip(self.drive_joints, drive):
            pb.resetJointState(self.body, j, float(q), 0.0, physicsClientId=c)
        for follower, leader, m, offset in self.mimics:
            q = pb.getJointState(self.body, leader, physicsClientId=c)[0]
            pb.resetJointState(self.body, follower, m * q + offset, 0.0, physicsClientId=c)

    def reset_fingers(self, each_m: float) -> None:
        """Teleport both fingers to the gap ``2 * each_m`` (m), their ``<mimic>`` joints along. Set-up only."""
        self.reset_gripper(self.finger_targets(2.0 * each_m))

    def link_pose(self, link: int) -> Pose:
        """(4, 4) world pose of a link frame (URDF link frame, not the inertial frame)."""
        if link == -1:
            p, q = pb.getBasePositionAndOrientation(self.body, physicsClientId=self.client)
        else:
            st = pb.getLinkState(self.body, link, computeForwardKinematics=True, physicsClientId=self.client)
            p, q = st[4], st[5]
        return pose_from_pybullet(p, q)

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
        for j, v in zip(self.drive_joints, f):
            rest[self.movable_joints.index(j)] = v
        return rest


def model_by_name(name: str) -> Optional[RobotDescription]:
    """The stock description called ``name`` (a key of :data:`MODELS`), or None."""
    return MODELS.get(name)
