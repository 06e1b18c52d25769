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
from .work import WORK

if TYPE_CHECKING:  # pragma: no cover
    from ..bullet.robots import LoadedRobot

__all__ = ["IKSolution", "solve_ik", "pq_of_valid_pose", "screw_joint_path"]


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
        WORK.ik_calls += 1
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
                WORK.ik_calls += 1
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


#: the screw follower's speed ramp (s), waypoint period (s of path) and largest TCP step (m)
SCREW_RAMP_S, SCREW_PERIOD_S, SCREW_STEP_M = 0.3, 0.02, 0.005


def screw_joint_path(robot: "LoadedRobot", q0: Sequence[float], T0: Pose, goal: Any
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, Optional[str]]:
    """The IK waypoints of a ``follow_screw`` motion (a door arc, a drawer pull, a lever turn) from
    arm configuration ``q0`` (radians) and TCP pose ``T0`` ((4, 4), world) along ``exp([S] s) T0``:
    one computation for the simulator's screw follower and ``ptm validate --plan``'s dry run.

    Waypoints within the goal's chord error, at least every 20 ms of path (trapezoidal speed profile
    with 0.3 s ramps at ``goal.speed``) and every 5 mm of TCP travel, each solved from the one before
    (:func:`solve_ik`, 3 iterations) on ``robot`` (a kinematics-only copy: its arm is teleported).

    Args:
        goal: a :class:`~py_trees_manipulation.msgs.screw_motion.FollowScrewGoal` (``screw``,
            ``theta`` rad or m, ``speed``, ``max_chord_error_m``).

    Returns:
        ``(q (n + 1, dof) rad, path fraction (n + 1,), time (n + 1,) s, error)``: ``error`` is the
        reason text when the path leaves the reachable space (a waypoint more than 5 mm off, or a
        joint jumping more than 0.5 rad: a singularity or a joint limit); the arrays then end there.
    """
    import math

    from ..geometry.screw import pose_on_screw, screw_waypoints

    screw, theta = goal.screw, float(goal.theta)
    total = abs(theta)
    t_nom = max(total / goal.speed, 0.05)
    ta = min(SCREW_RAMP_S, t_nom)
    T = t_nom + ta
    v = 1.0 / t_nom

    def s_of(t: np.ndarray) -> np.ndarray:  # fraction 0..1, trapezoidal speed
        t = np.clip(t, 0.0, T)
        return np.where(t < ta, 0.5 * v / ta * t ** 2,
                        np.where(t > T - ta, 1.0 - 0.5 * v / ta * (T - t) ** 2, v * (t - ta / 2)))

    chord = screw_waypoints(T0, screw, theta, goal.max_chord_error_m)
    radius = screw.radius_m(T0[:3, 3])
    travel = total if screw.is_translation else radius * total + abs(screw.pitch_m_per_rad) * total
    n_wp = max(len(chord) - 1, int(math.ceil(T / SCREW_PERIOD_S)), int(math.ceil(travel / SCREW_STEP_M)), 2)
    t_wp = np.linspace(0.0, T, n_wp + 1)
    s_wp = s_of(t_wp)
    q_prev = np.asarray(q0, dtype=float)
    qs, times = [q_prev], [0.0]
    vmax = robot.velocity_limits
    for i in range(1, n_wp + 1):
        pose_i = pose_on_screw(T0, screw, theta * float(s_wp[i]))
        sol = solve_ik(robot, pose_i, seeds=[q_prev], iterations=3)
        err = None
        if sol.position_error_m > 0.005:
            err = f"best IK solution ends {sol.position_error_m:.3f} m away"
        elif float(np.max(np.abs(sol.q - q_prev))) > 0.5:
            err = f"a joint would jump by {float(np.max(np.abs(sol.q - q_prev))):.2f} rad (singularity or joint limit)"
        if err is not None:
            at = theta * float(s_wp[i])
            where = f"{at:.3f} m" if screw.is_translation else f"{math.degrees(at):.1f} deg"
            p = pose_i[:3, 3]
            return (np.array(qs), s_wp[:len(qs)], np.array(times),
                    f"the screw path leaves the reachable space at {where} of "
                    f"{theta if screw.is_translation else math.degrees(theta):.3g}"
                    f"{' m' if screw.is_translation else ' deg'}, at ({p[0]:.3f}, {p[1]:.3f}, {p[2]:.3f}): {err}")
        seg = max(t_wp[i] - t_wp[i - 1], float(np.max(np.abs(sol.q - q_prev) / vmax)))
        times.append(times[-1] + seg)
        qs.append(sol.q)
        q_prev = sol.q
    return np.array(qs), s_wp, np.array(times), None
