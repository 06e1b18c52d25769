"""Inverse kinematics of a robot's TCP on a kinematic copy of the robot, verified by forward kinematics.

:func:`solve_ik` works on any :class:`~py_trees_manipulation.bullet.robots.LoadedRobot` in any PyBullet
client that is only used for kinematics (the simulator's shadow robot, the collision world's
planning robot): it teleports that robot's arm joints while it searches. The simulator's
``SimArm.solve_ik`` and the motion planner (IK with several seeds for pose goals) both use it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional, Sequence

import numpy as np
import pybullet as pb
from transforms3d import quaternions as t3d_quaternions

from ..conventions import quat_xyzw_from_wxyz
from ..geometry.poses import Pose

if TYPE_CHECKING:  # pragma: no cover
    from ..bullet.robots import LoadedRobot

__all__ = ["IKSolution", "solve_ik", "pq_of_valid_pose"]


@dataclass
class IKSolution:
    """Result of :func:`solve_ik`.

    Attributes:
        q: arm joint positions, radians, shape (n_arm,), within the joint limits.
        position_error_m: distance of the FK TCP position from the target, metres.
        orientation_error_rad: angle between the FK TCP orientation and the target's, radians.
    """

    q: np.ndarray
    position_error_m: float
    orientation_error_rad: float


def pq_of_valid_pose(T: Pose) -> tuple[np.ndarray, np.ndarray]:
    """``(position (3,), quaternion (w, x, y, z), w >= 0)`` of a pose known to be valid (a product
    of checked poses), without ``check_pose``'s ``allclose`` (the same numbers as ``pq_from_pose``)."""
    q = t3d_quaternions.mat2quat(T[:3, :3])
    if q[0] < 0:
        q = -q
    return T[:3, 3].copy(), q


#: damping of the plain damped-least-squares ``calculateInverseKinematics`` calls (PyBullet's
#: ``jointDamping``, one per movable joint): PyBullet's default damps them so strongly that a 5 mm
#: step is still 30 um off after 50 inner iterations (240 us); at 0.01 it converges to 1e-8 m in
#: 2-5 (30-50 us). Near a singularity the larger steps are caught by the FK check, the joint limits
#: and the callers' joint-jump checks.
DLS_JOINT_DAMPING = 0.01
#: ``solve_ik(local=True)`` takes its continuation step only when no joint moves further than this
#: (rad): beyond it the step left the seed's branch and the null-space search decides
LOCAL_MAX_STEP_RAD = 0.1


def solve_ik(robot: "LoadedRobot", target: Pose, seeds: Sequence[Sequence[float]], iterations: int = 6,
             threshold_m: float = 1e-4, local: bool = False, rest: Optional[Sequence[float]] = None) -> IKSolution:
    """Inverse kinematics for the TCP of ``robot`` (a kinematics-only copy: its arm is teleported).

    From each seed: two null-space ``calculateInverseKinematics`` iterations (joint limits, rest
    pose = the seed, which keeps the solution near it and inside the limits), then plain
    damped-least-squares iterations, which remove the millimetre bias of PyBullet's null-space
    solver. Every iterate is clipped to the joint limits and scored by forward kinematics
    (position error + 0.05 m per radian of orientation error); the best one is returned. Stops at
    the first seed that reaches the thresholds.

    ``local=True`` is for continuation along a path (each seed a solution a few millimetres away):
    one plain damped-least-squares call from the first seed comes first, and its solution is
    returned when it is within the joint limits, the thresholds, and ``LOCAL_MAX_STEP_RAD`` of the seed (the
    nearest solution, as the null-space steps would give); otherwise the search above runs.

    Args:
        robot: the robot to solve on (its arm joints are left at the last iterate).
        target: (4, 4) TCP pose, world frame, already validated (``check_pose``).
        seeds: arm configurations to start from, radians (at least one).
        iterations: refinement iterations per seed (each one ``calculateInverseKinematics`` call).
        threshold_m: stop once the FK position error is below this (m) and the orientation error
            below ``threshold_m`` (rad).
        local: try the continuation step first (see above).
        rest: the arm configuration (radians) the null-space iterations pull toward (default: each
            seed): a line followed with ``rest`` = its start configuration keeps the arm's posture
            (the elbow) where it started instead of letting it drift along the line.

    Raises:
        ValueError: no seed.
    """
    if len(seeds) == 0:
        raise ValueError("solve_ik needs at least one seed")
    link_target = target @ robot.link_in_tcp
    pos, quat = pq_of_valid_pose(link_target)
    pos_l = pos.tolist()
    orn = quat_xyzw_from_wxyz(quat)
    sh = robot
    best: Any = None
    # teleport the arm in one call (LoadedRobot.reset_arm makes one per joint): the same joint
    # positions, zero velocities, as reset_arm sets
    arm_joints, zero_velocities = list(sh.arm_joints), [[0.0]] * len(sh.arm_joints)

    def reset_arm(q: np.ndarray) -> None:
        pb.resetJointStatesMultiDof(sh.body, arm_joints, [[v] for v in q.tolist()], zero_velocities,
                                    physicsClientId=sh.client)

    def score(s: IKSolution) -> float:
        return s.position_error_m + 0.05 * s.orientation_error_rad

    damping = [DLS_JOINT_DAMPING] * len(sh.movable_joints)

    def dls() -> Sequence[float]:
        """One plain damped-least-squares call from the arm's current joints."""
        return pb.calculateInverseKinematics(sh.body, sh.tcp_link, pos_l, orn, jointDamping=damping,
                                             maxNumIterations=50, residualThreshold=1e-7, physicsClientId=sh.client)

    if local:
        q0 = sh.clip_to_limits(seeds[0])
        reset_arm(q0)
        raw = sh.arm_from_ik(dls())
        q = sh.clip_to_limits(raw)
        if np.array_equal(q, raw) and float(np.max(np.abs(q - q0))) < LOCAL_MAX_STEP_RAD:
            reset_arm(q)
            cand = IKSolution(q, *sh.tcp_errors(target))
            if cand.position_error_m < threshold_m and cand.orientation_error_rad < threshold_m:
                return cand

    for seed in seeds:
        q = sh.clip_to_limits(seed)
        reset_arm(q)
        rest_q = sh.ik_rest(q if rest is None else sh.clip_to_limits(rest))
        for it in range(2 + iterations):
            if it < 2:
                sol = pb.calculateInverseKinematics(
                    sh.body, sh.tcp_link, pos_l, orn, lowerLimits=sh.ik_lower, upperLimits=sh.ik_upper,
                    jointRanges=sh.ik_ranges, restPoses=rest_q, maxNumIterations=50, residualThreshold=1e-6,
                    physicsClientId=sh.client)
            else:
                sol = dls()
            q = sh.clip_to_limits(sh.arm_from_ik(sol))
            reset_arm(q)
            cand = IKSolution(q, *sh.tcp_errors(target))
            if best is None or score(cand) < score(best):
                best = cand
            if cand.position_error_m < threshold_m and cand.orientation_error_rad < threshold_m:
                break
        if best.position_error_m < threshold_m and best.orientation_error_rad < threshold_m:
            break
    return best
