"""Doors and drawer cabinets in the simulator, and the arm action ``follow_screw``.

Scene sections (``scene.doors`` and ``scene.cabinets``, lists) place the generated articulated
assets of :mod:`.assets`; the extension ``doors`` (``backend.extensions["doors"]``) loads them,
runs their per-step models (:mod:`.articulated`: latch, handle spring, Coulomb friction) before
every physics step, gives behaviours their world frames and adds the ``follow_screw`` action to
every arm.

``scene.doors[]`` keys (model front faces +x: give ``pose`` a yaw of 180 deg to face a robot on
-x; distances in metres, angles in degrees):

====================  =========  ==============================================================
key                   default    meaning
====================  =========  ==============================================================
name                  required   body name (unique in the scene)
pose                  required   model frame in the world (floor level of the door frame)
width_m / height_m    0.8 / 2.0  leaf size
thickness_m           0.04       leaf thickness
hinge_side            left       ``left`` or ``right`` as seen from the front
opening               pull       ``pull`` (toward the front) or ``push``
hinge_damping         2.0        viscous, N*m*s/rad
hinge_friction        0.5        Coulomb, N*m
leaf_mass_kg          20         kg
max_opening_deg       100        hinge limit
latch                 true       held shut until the handle turns ``latch_release_deg``
latch_release_deg     30         handle angle that withdraws the latch
latch_holding_torque  300        N*m the latch resists (key ``latch_holding_torque_nm``)
locked                false      the latch never releases
handle                {}         lever: ``length_m, height_m, backset_m, standoff_m,
                                 bar_height_m, bar_depth_m, mass_kg, max_angle_deg,
                                 grasp_fraction, spring_preload_nm,
                                 spring_stiffness_nm_per_rad, friction_nm,
                                 damping_nms_per_rad`` (:class:`~.assets.LeverHandle`)
====================  =========  ==============================================================

``scene.cabinets[]``: ``name``, ``pose`` (required); ``width_m`` 0.6, ``depth_m`` 0.5,
``height_m`` 0.8, ``drawer_height_m`` 0.2, ``drawer_travel_m`` 0.35, ``damping`` 5 (N*s/m),
``friction`` 1 (N), ``drawer_mass_kg`` 2, ``handle`` ``{length_m, diameter_m, standoff_m}``.

Metrics (``SimBackend.metrics()``): ``door_angle_deg`` and ``handle_angle_deg`` (first door),
``drawer_opening_m`` (first cabinet), ``doors``/``drawers`` (by name, when there are several),
``max_wrist_force_n`` (largest filtered wrist force of any ``follow_screw`` motion, N).
Telemetry: ``door/<name>`` ``{door_angle_deg, handle_angle_deg, latched}``, ``drawer/<name>``
``{drawer_opening_m}``.

``follow_screw`` (:class:`~py_trees_manipulation.behaviors.affordances.FollowScrewGoal`): IK
waypoints along ``exp([S] s) T0`` (chord error and 20 ms of path apart, checked by forward
kinematics), a dense joint trajectory with a trapezoidal profile, tracked with POSITION_CONTROL
motors limited to ``effort_scale`` times the joint torque limits. Every 10 ms it compares the TCP
with the screw point due now and the wrist force with the bound: the wrist force is the hand-joint
reaction in the world frame plus the weight of the hand and fingers (what the environment pushes
on the hand with), averaged over 50 ms. ABORTED with the numbers when the force bound or the tracking error is exceeded, or when
the path leaves the reachable space. At the end of the path the arm settles on the last point with an
integral term added (a joint trajectory controller's PID: a lever's return spring or a door's
friction would otherwise leave the TCP a stiffness error short); SUCCEEDED when the TCP is within
1 mm of the screw's end, or has stopped closing in within ``position_tolerance_m``; ABORTED when it
is still farther after ``SETTLE_S``.

An arm holds compliantly while its hand is on a door or a drawer (:meth:`DoorsExtension.hold_arms`,
:meth:`~.arm.SimArm.hold_compliant`): a ``follow_screw`` that ends with the hand on the handle hands
the arm over to the joint impedance it ended with (the same torques: the handle feels no change;
after an abort, where the arm is), and an idle arm whose hand closes on a handle holds where it is
with :data:`GRASP_STIFFNESS_SCALE` of that stiffness, until its next goal starts or the hand lets
go. Position motors there made the arm rigid, and the rigid loop through the handle pressed one of
the WSG 50's geared fingers 93 N at its 80 N limit (issue 33 item 4).
"""

from __future__ import annotations

from ..bullet import _quiet_import  # noqa: F401  (first: pybullet's import banner)

import math
from collections import deque
from typing import Any, Callable, Optional, Sequence

import numpy as np
import pybullet as pb

from ..msgs.screw_motion import FOLLOW_SCREW_ACTION, FollowScrewFeedback, FollowScrewGoal, FollowScrewResult
from ..geometry.poses import Pose, pq_from_pose
from ..geometry.screw import pose_on_screw, screw_coordinate
from ..msgs.actions import GoalHandle
from ..bullet.articulated import ArticulatedDoor, ArticulatedDrawer
from .arm import SimArm, hand_mass_kg, wrist_force_world
from .backend import SimBackend
from .extensions import register_extension
from .resources import _Execution
from ..scene.spec import SceneError
from ..scene.sections.doors import CabinetSpec, DoorSpec, parse_cabinets, parse_doors  # noqa: F401  (the scene sections)


# ================================================================================================
# follow_screw
# ================================================================================================
#: the stiffness of an idle arm whose hand closes on or holds a door's or drawer's handle
#: (DoorsExtension.hold_arms), as a fraction of _ScrewFollow's: about 300-600 N/m at the TCP, the
#: order of the 500 N/m admittance PickNik's door affordances grasp and pull with, so the hand
#: centres itself on the handle as the fingers close. With the whole screw stiffness (1-2 kN/m)
#: the Panda's hand, pushed aside by the squeeze on the right-hinged door's lever, sprang back
#: onto one pad: 116 N at a 100 N limit
GRASP_STIFFNESS_SCALE = 0.3

class _ScrewFollow(_Execution):
    """Tracks a screw path with bounded joint torques; force and tracking-error guards."""

    CHECK_EVERY = 10  # steps (10 ms at 1 kHz)
    FORCE_WINDOW = 5  # checks averaged (50 ms)
    LAG_CHECKS = 10  # consecutive checks over the tracking bound (0.1 s)
    SETTLE_S = 1.0
    #: the end is reached when the TCP is this close to the screw's end (m), or has stopped closing in
    #: on it (``STALL_CHECKS`` checks without 0.1 mm of progress) within ``position_tolerance_m``
    SETTLED_M = 0.001
    #: a motion that ends with the TCP this far off the handle it held at the start (m) lost its grasp
    LEFT_HANDLE_M = 0.02
    STALL_CHECKS = 10
    #: integral time of the settle phase (s): at the end of the path the joint loop adds an integral
    #: term (a joint trajectory controller's PID), so a lever's return spring or a door's friction
    #: does not leave the TCP a constant stiffness error short of the end (the Panda's lever stopped
    #: 3.2 deg short of 45, the iiwa's 4.7 deg: 90 % of the turn, its min_fraction)
    INTEGRAL_S = 0.05
    #: joint stiffness, N*m/rad, and damping, N*m*s/rad (Panda joints 1..7): about 1-2 kN/m at the
    #: TCP of an arm stretched 0.5 m, the order of PickNik's 500 N/m admittance for doors
    STIFFNESS = (400.0, 400.0, 400.0, 400.0, 150.0, 100.0, 50.0)
    DAMPING = (40.0, 40.0, 40.0, 30.0, 8.0, 6.0, 3.0)

    def __init__(self, arm: SimArm, handle: GoalHandle, ext: "DoorsExtension", q: np.ndarray, qd: np.ndarray,
                 s_dense: np.ndarray, T0: Pose, goal: FollowScrewGoal):
        super().__init__(arm, handle)
        self.arm, self.ext, self.goal = arm, ext, goal
        self.q, self.qd, self.s = q.tolist(), qd.tolist(), s_dense
        self.n, self.k = len(self.q), 0
        self.T0, self.p0 = T0, T0[:3, 3].copy()
        r = arm.robot
        self.tau_max = np.asarray(r.effort_limits, dtype=float) * goal.effort_scale
        self._arm_idx = [r.movable_joints.index(j) for j in r.arm_joints]
        self.K, self.D = impedance_gains(arm, self._arm_idx)
        # Torque control needs the joints' velocity motors off.
        pb.setJointMotorControlArray(r.body, r.arm_joints, pb.VELOCITY_CONTROL, forces=[0.0] * len(r.arm_joints),
                                     physicsClientId=r.client)
        # The hand's own weight (world frame, N): the reaction at the hand joint of a hand at rest
        # is -R^T m g, so R F + m g is the force the environment puts on the hand.
        self.weight = hand_mass_kg(arm) * np.asarray(arm.backend.scene.gravity, dtype=float)
        self.window: deque = deque(maxlen=self.FORCE_WINDOW)
        self.vectors: deque = deque(maxlen=self.FORCE_WINDOW)   # the force vectors, world, N
        self.mech0 = ext.mechanism_state()
        self.grip0 = ext.grip_offsets(arm.robot.tcp_position())
        self.force_n = 0.0
        self.max_force_n = 0.0
        self.err_m = 0.0
        self.lag = 0
        self.settle = 0
        self.theta_reached = 0.0
        self.integral = np.zeros(len(self._arm_idx))
        self._best_err, self._stall = math.inf, 0

    def _command(self, q: list, qd: list, integrate: bool = False) -> None:
        """Joint impedance (:func:`impedance_command`) toward ``q``, ``qd``. ``integrate`` (the
        settle phase) adds ``K / INTEGRAL_S`` times the integral of ``q* - q``, itself bounded by
        half the torque limits. PyBullet applies a TORQUE_CONTROL command for one step: this is
        called every step."""
        def integral(err: np.ndarray) -> np.ndarray:
            dt = 1.0 / self.arm.backend.physics_hz
            self.integral = np.clip(self.integral + self.K * err * (dt / self.INTEGRAL_S),
                                    -0.5 * self.tau_max, 0.5 * self.tau_max)
            return self.integral
        impedance_command(self.arm, self._arm_idx, self.K, self.D, self.tau_max, q, qd,
                          integral if integrate else None)

    def _hold_on(self, ok: bool) -> None:
        """The motion is over: the arm holds compliantly while the hand is on a mechanism
        (:meth:`SimArm.hold_compliant`, :meth:`DoorsExtension.hold_arms`): after a finished motion
        with the law it ended with (the last point, the settle phase's integral kept: the same
        torques, so the handle feels no change), after an aborted or stopped one where the arm is
        (the push it aborted on let go); else stiffly where it is, as before."""
        if not self.ext.touches_mechanism(self.arm):
            self.arm.hold()
            return
        if ok:
            q, extra = list(self.q[-1]), self.integral.copy()
        else:
            q, extra = self.arm.robot.joint_positions().tolist(), np.zeros(len(self._arm_idx))
        K, D, tau_max, arm, idx = self.K, self.D, self.tau_max, self.arm, self._arm_idx
        zero = [0.0] * len(q)
        self.arm.hold_compliant(lambda: impedance_command(arm, idx, K, D, tau_max, q, zero, lambda _e: extra))

    def _measure(self, s_due: float) -> None:
        f = wrist_force_world(self.arm, self.weight)
        self.vectors.append(f)
        self.window.append(float(np.linalg.norm(f)))
        self.force_n = float(np.mean(self.window))
        self.max_force_n = max(self.max_force_n, self.force_n)
        self.ext._record_force(self.force_n)
        p = self.arm.robot.tcp_position()
        due = pose_on_screw(self.T0, self.goal.screw, s_due)[:3, 3]
        self.err_m = float(np.linalg.norm(p - due))
        self.theta_reached = screw_coordinate(self.goal.screw, self.p0, p)

    def _diagnosis(self, s_due: float, lagged: bool = False) -> str:
        """Why a mechanism that is at no limit and not latched does not follow (issue 32 item 4): the
        force the arm applied, its direction against the motion's, how far the joint moved, and the
        likely cause with the number that would fix it."""
        g = self.goal
        f = np.mean(np.asarray(self.vectors), axis=0) if self.vectors else np.zeros(3)
        a = pose_on_screw(self.T0, g.screw, s_due)[:3, 3]
        b = pose_on_screw(self.T0, g.screw, s_due + (1e-3 if g.theta >= 0 else -1e-3))[:3, 3]
        d = b - a
        d = d / max(float(np.linalg.norm(d)), 1e-12)
        along = float(f @ d)                      # the hand's force on the handle along the motion (pulling it on)
        across = float(np.linalg.norm(f - along * d))
        moved = self.ext.motion_text(self.mech0)
        slip = self.ext.grip_slip(self.grip0, self.arm.robot.tcp_position())
        head = (f"{moved[0] or 'the mechanism'} is free (at no limit, not latched) and {moved[1] or 'did not move'} "
                f"since the motion began; the arm pressed "
                f"{float(np.linalg.norm(f)):.1f} N on the handle ({along:.1f} N along the motion, {across:.1f} N "
                f"across it; the motion's direction ({d[0]:.2f}, {d[1]:.2f}, {d[2]:.2f}))")
        bound = 5.0 * math.ceil(1.25 * max(self.force_n, self.max_force_n) / 5.0)
        if slip is not None and slip > 0.01:
            why = f"the grasp slipped: the hand moved {slip:.3f} m off the handle; " + self.ext.grip_advice(self.arm)
        elif across > abs(along):
            why = ("the hand is pushed off the path rather than held back: the path does not follow the "
                   "mechanism's own axis, or the arm is near its joint limits; check the handle frames and the "
                   f"base pose (base_pose: auto); a bound of max_force_n {bound:g} N would let the arm push on")
        elif along < 0:
            why = ("the handle pushes the hand ahead of the motion (the arm holds back): the wrong direction "
                   "(the sign of the arc or the pull, the door's opening)")
        elif lagged and g.max_force_n is not None and self.max_force_n < g.max_force_n:
            # the force bound was never reached: raising it changes nothing (trial 4: 80, 105, 150 N
            # each failed the same); the compliant arm pulls harder the further it lags
            why = (f"the mechanism resists more than the compliant arm pulls within max_tracking_error_m "
                   f"{g.max_tracking_error_m:g} m ({self.max_force_n:.0f} N at most, under the max_force_n "
                   f"{g.max_force_n:g} N bound): let it lag further (max_tracking_error_m "
                   f"{2 * g.max_tracking_error_m:g}), or make the mechanism lighter")
        else:
            need = self.ext.resistance_n(g, self.arm.robot.tcp_position())
            if need is not None:
                n, what = need
                bound = max(bound, 5.0 * math.ceil(1.25 * n / 5.0))
                why = (f"the mechanism resists more than the bound allows: {what} make {n:.0f} N at this speed; "
                       f"max_force_n {bound:g} N would let it through")
            else:
                why = (f"the mechanism resists more than the bound allows: max_force_n {bound:g} N would let it "
                       "through, or a slower speed")
        return f"{head}: likely cause: {why}"

    def _fmt(self, s: float) -> str:
        # (+ 0.0 turns a rounded -0.0 into 0.0)
        return f"{round(s, 3) + 0.0:.3f} m" if self.goal.screw.is_translation else f"{round(math.degrees(s), 1) + 0.0:.1f} deg"

    def step(self) -> None:
        k = self.k
        if k < self.n:
            self._command(self.q[k], self.qd[k])
            self.k = k + 1
            if self.k % self.CHECK_EVERY:
                return
            self._measure(float(self.s[k]))
            # the gains follow the configuration: near a singularity (the Panda's joints 1 and 3 in line
            # when joint 2 is near 0) a joint's effective inertia falls, and gains set at the start make
            # the loop ring (joints 1 and 3 swinging against each other at 1.4 rad/s: 60 N at the wrist)
            self.K, self.D = impedance_gains(self.arm, self._arm_idx)
            g = self.goal
            if g.max_force_n is not None and self.force_n > g.max_force_n and len(self.window) == self.FORCE_WINDOW:
                self._abort(f"wrist force {self.force_n:.1f} N > max_force_n {g.max_force_n:g} N at "
                            f"{self._fmt(self.theta_reached)} of {self._fmt(g.theta)}: "
                            + (self.ext.end_stop_text() or self._diagnosis(float(self.s[k]))))
                return
            self.lag = self.lag + 1 if self.err_m > g.max_tracking_error_m else 0
            if self.lag >= self.LAG_CHECKS:
                self._abort(f"tracking error {self.err_m:.3f} m > {g.max_tracking_error_m:g} m at "
                            f"{self._fmt(self.theta_reached)} of {self._fmt(g.theta)}: "
                            + (self.ext.end_stop_text() or self._diagnosis(float(self.s[k]), lagged=True)))
            return
        self._command(self.q[-1], [0.0] * len(self.q[-1]), integrate=True)
        self.settle += 1
        if self.settle % self.CHECK_EVERY:
            return
        self._measure(float(self.s[-1]))
        g = self.goal
        if g.max_force_n is not None and self.force_n > g.max_force_n and len(self.window) == self.FORCE_WINDOW:
            # the guard holds while the arm settles at the end too (it pressed 110 N against a 60 N bound
            # there, and the abort named only the tracking error)
            self._abort(f"wrist force {self.force_n:.1f} N > max_force_n {g.max_force_n:g} N at "
                        f"{self._fmt(self.theta_reached)} of {self._fmt(g.theta)}, at the end of the screw: "
                        + (self.ext.end_stop_text() or self._diagnosis(float(self.s[-1]))))
            return
        if self.err_m < self._best_err - 1e-4:
            self._best_err, self._stall = self.err_m, 0
        else:
            self._stall += 1
        if self.err_m <= self.SETTLED_M or (self._stall >= self.STALL_CHECKS and self.err_m <= self.goal.position_tolerance_m):
            slip = self.ext.grip_slip(self.grip0, self.arm.robot.tcp_position())
            if slip is not None and slip > self.LEFT_HANDLE_M:
                # the hand followed the screw without the mechanism (trial 4: the xArm's hand came off
                # a stiff door's lever, the door stayed shut, the motion said 'followed the screw to
                # 62.1 deg' and a later node took the blame)
                moved = self.ext.motion_text(self.mech0)
                self._abort(f"the hand followed the screw to {self._fmt(self.theta_reached)} but left the handle it "
                            f"held: it ends {slip:.3f} m off it, and {moved[0] or 'the mechanism'} "
                            f"{moved[1] or 'did not move'}; the grasp slipped: "
                            + self.ext.grip_advice(self.arm))
                return
            self._end(True, f"followed the screw to {self._fmt(self.theta_reached)} "
                            f"(goal {self._fmt(self.goal.theta)}), max wrist force {self.max_force_n:.1f} N")
        elif self.settle >= self.SETTLE_S * self.arm.backend.physics_hz:
            why = self.ext.end_stop_text()
            self._abort(f"the TCP stopped {self.err_m:.3f} m from the end of the screw (tolerance "
                        f"{self.goal.position_tolerance_m:g} m) at {self._fmt(self.theta_reached)}"
                        + (f": {why}" if why else ""))

    def _result(self) -> FollowScrewResult:
        return FollowScrewResult(theta_reached=self.theta_reached, tcp_pose=self.arm.tcp_pose(),
                                 max_wrist_force_n=self.max_force_n, tracking_error_m=self.err_m)

    def _abort(self, text: str) -> None:
        self._end(False, text)

    def _end(self, ok: bool, text: str) -> None:
        self._hold_on(ok)  # torque commands last one step: a hold takes over
        res = self._result()
        if ok:
            self.handle.set_succeeded(res, text)
        else:
            self.handle.set_aborted(res, text)
        self.arm.backend.emit_event(f"arm/{self.arm.name}", f"follow_screw: {text}")
        self.finish()

    def publish_feedback(self) -> None:
        self.handle.publish_feedback(FollowScrewFeedback(
            theta_reached=self.theta_reached, progress=min(1.0, self.k / self.n) if self.n else 1.0,
            wrist_force_n=self.force_n, tracking_error_m=self.err_m))

    def stop(self) -> Any:
        self._hold_on(False)
        return self._result()


def impedance_command(arm: SimArm, arm_idx: Sequence[int], K: np.ndarray, D: np.ndarray, tau_max: np.ndarray,
                      q: Sequence[float], qd: Sequence[float],
                      extra: Optional[Callable[[np.ndarray], np.ndarray]] = None) -> None:
    """One step of joint impedance for ``arm``: ``tau = K (q* - q) + D (qd* - qd) + c(q, qd)``
    (gravity and Coriolis from ``calculateInverseDynamics``), plus ``extra(q* - q)`` when given
    (an integral term, N m), clipped to ``tau_max`` (N m) and sent as TORQUE_CONTROL commands (the
    velocity motors must be off). ``arm_idx``: the arm joints' indices among the robot's movable
    joints; ``K`` (N m/rad), ``D`` (N m s/rad) from :func:`impedance_gains`."""
    r = arm.robot
    c = r.client
    states = pb.getJointStates(r.body, r.movable_joints, physicsClientId=c)
    pos = [st[0] for st in states]
    vel = [st[1] for st in states]
    bias = pb.calculateInverseDynamics(r.body, pos, vel, [0.0] * len(pos), physicsClientId=c)
    qa = np.array([pos[i] for i in arm_idx])
    va = np.array([vel[i] for i in arm_idx])
    err = np.asarray(q) - qa
    tau = K * err + D * (np.asarray(qd) - va) + np.array([bias[i] for i in arm_idx])
    if extra is not None:
        tau = tau + extra(err)
    tau = np.clip(tau, -tau_max, tau_max)
    pb.setJointMotorControlArray(r.body, r.arm_joints, pb.TORQUE_CONTROL, forces=tau.tolist(), physicsClientId=c)


def impedance_gains(arm: SimArm, arm_idx: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Joint stiffness (N m/rad) and damping (N m s/rad) of :class:`_ScrewFollow` for ``arm``:
    the Panda-tuned :attr:`_ScrewFollow.STIFFNESS` and ``DAMPING`` (the first one per arm joint;
    an arm with more joints repeats the last), each lowered where the joint's effective inertia
    (``1 / (M^-1)_ii`` of the arm's joint-space mass matrix ``M``, ``calculateMassMatrix``, at the
    present configuration, recomputed every 10 ms of the motion: what the joint feels with the others
    free) is too small for an explicit 1 kHz loop to stay stable: ``K dt^2 / I <= 0.5`` and
    ``D dt / I <= 1`` (a light wrist, as the xArm's with its 0.8 kg gripper, would otherwise ring
    and diverge within 50 ms)."""
    r = arm.robot
    c = r.client
    n = len(r.arm_joints)
    K = np.array([_ScrewFollow.STIFFNESS[min(i, 6)] for i in range(n)])
    D = np.array([_ScrewFollow.DAMPING[min(i, 6)] for i in range(n)])
    pos = [st[0] for st in pb.getJointStates(r.body, r.movable_joints, physicsClientId=c)]
    M = np.asarray(pb.calculateMassMatrix(r.body, pos, physicsClientId=c))
    # the inertia each joint feels with the others free (coupled wrist joints feel less than M_ii)
    inertia = 1.0 / np.diag(np.linalg.inv(M[np.ix_(list(arm_idx), list(arm_idx))]))
    dt = 1.0 / arm.backend.physics_hz
    return np.minimum(K, 0.5 * inertia / dt ** 2), np.minimum(D, 1.0 * inertia / dt)


def plan_screw_trajectory(arm: SimArm, T0: Pose, goal: FollowScrewGoal) -> tuple[np.ndarray, np.ndarray, np.ndarray, Optional[str]]:
    """Dense (1 kHz) joint trajectory along the screw from ``T0``.

    Returns:
        ``(q (n, 7) rad, qd (n, 7) rad/s, s (n,) screw coordinate due at each step, error)``;
        ``error`` is a reason text when the path leaves the reachable space (then the arrays are
        empty).
    """
    from ..collision.ik import screw_joint_path

    dt = 1.0 / arm.backend.physics_hz
    theta = float(goal.theta)
    # the shadow robot at the arm's configuration now: the same waypoints ptm validate --plan follows
    qs_arr, s_wp, times_arr, error = screw_joint_path(arm.shadow, arm.robot.joint_positions(), T0, goal)
    if error is not None:
        return np.zeros((0, 7)), np.zeros((0, 7)), np.zeros(0), error
    t_dense = np.arange(1, int(math.ceil(times_arr[-1] / dt)) + 1) * dt
    q = np.stack([np.interp(t_dense, times_arr, qs_arr[:, j]) for j in range(qs_arr.shape[1])], axis=1)
    qd = np.gradient(q, dt, axis=0) if len(q) > 1 else np.zeros_like(q)
    s_dense = theta * np.interp(t_dense, times_arr, s_wp)
    return q, qd, s_dense, None


def _serve_follow_screw(ext: "DoorsExtension"):  # type: ignore[no-untyped-def]
    def serve(arm: SimArm, handle: GoalHandle) -> Optional[_Execution]:
        goal = handle.goal
        if not isinstance(goal, FollowScrewGoal):
            raise TypeError(f"{FOLLOW_SCREW_ACTION} takes a FollowScrewGoal, got {type(goal).__name__}")
        T0 = arm.tcp_pose()
        q, qd, s, err = plan_screw_trajectory(arm, T0, goal)
        if err is not None:
            handle.set_aborted(FollowScrewResult(0.0, T0, 0.0), err)
            return None
        return _ScrewFollow(arm, handle, ext, q, qd, s, T0, goal)

    return serve


# ================================================================================================
# The extension
# ================================================================================================
class DoorsExtension:
    """Doors and drawer cabinets of a :class:`~.backend.SimBackend` (``backend.extensions["doors"]``).

    Attributes:
        doors: name -> :class:`~.articulated.ArticulatedDoor` (scene order).
        drawers: name -> :class:`~.articulated.ArticulatedDrawer` (scene order).
        max_wrist_force_n: largest filtered wrist force of any ``follow_screw`` motion so far, N.
    """

    def __init__(self, backend: SimBackend, doors: list[DoorSpec], cabinets: list[CabinetSpec]):
        self.doors: dict[str, ArticulatedDoor] = {}
        self.drawers: dict[str, ArticulatedDrawer] = {}
        self.max_wrist_force_n = 0.0
        self._followed = False
        self.backend = backend
        c = backend.client
        for spec in [*doors, *cabinets]:
            if spec.name in backend._bodies:
                section = "doors" if isinstance(spec, DoorSpec) else "cabinets"
                raise SceneError((section,), f"name {spec.name!r} is already used by another body in the scene")
            p, q = pq_from_pose(spec.pose)
            body = backend._load_urdf(spec.asset.urdf_path, p, q, fixed=True, what=f"{spec.name!r}")
            backend._register(spec.name, body)
            if isinstance(spec, DoorSpec):
                self.doors[spec.name] = ArticulatedDoor.from_asset(spec.asset, body, c)
            else:
                self.drawers[spec.name] = ArticulatedDrawer.from_asset(spec.asset, body, c)
        self._objects = [*self.doors.values(), *self.drawers.values()]
        #: the doors' and cabinets' bodies (SimGripper.share_pad_load: the pads on a handle)
        self.handle_bodies = {o.body_id for o in self._objects}
        if self._objects:
            backend.add_step_hook(self._step, before=True)
        for arm in backend.arms.values():
            arm.add_action(FOLLOW_SCREW_ACTION, _serve_follow_screw(self))

    @property
    def resettable(self) -> bool:
        """Only without doors and drawers may the backend be reset (:meth:`SimBackend.reset`)."""
        return not self._objects

    def reset_run(self) -> None:
        """A scene without doors and drawers: as built (the follow_screw server, no force yet)."""
        self.max_wrist_force_n = 0.0
        self._followed = False

    def _step(self, backend: SimBackend) -> None:
        for o in self._objects:
            o.step()
        self.hold_arms()

    def touches_mechanism(self, arm: SimArm) -> bool:
        """Any link of ``arm``'s robot touches a door or a drawer cabinet (a contact point now)."""
        body, c = arm.robot.body, arm.robot.client
        return any(pb.getContactPoints(bodyA=body, bodyB=o.body_id, physicsClientId=c) for o in self._objects)

    def hold_arms(self) -> None:
        """Before every physics step: an idle arm (no goal running) whose robot touches a door or a
        drawer (a hand closing on or holding its handle) holds compliantly where it is, with the
        joint impedance of ``follow_screw`` at :data:`GRASP_STIFFNESS_SCALE` of its stiffness
        (:meth:`SimArm.hold_compliant` says why); one that holds compliantly and touches none any
        more (the hand let go) holds stiffly where it is."""
        for arm in self.backend.arms.values():
            if arm._active is not None:
                continue
            touching = self.touches_mechanism(arm)
            if arm.compliant and not touching:
                arm.hold()
            elif touching and not arm.compliant:
                r = arm.robot
                idx = [r.movable_joints.index(j) for j in r.arm_joints]
                K, D = impedance_gains(arm, idx)
                K = K * GRASP_STIFFNESS_SCALE
                tau_max = np.asarray(r.effort_limits, dtype=float)
                q = r.joint_positions().tolist()
                zero = [0.0] * len(q)

                def law(arm: SimArm = arm, idx: list = idx, K: np.ndarray = K, D: np.ndarray = D,
                        tau_max: np.ndarray = tau_max, q: list = q, zero: list = zero) -> None:
                    impedance_command(arm, idx, K, D, tau_max, q, zero)

                arm.hold_compliant(law)
                law()   # this step too (the hold's own hook runs from the next one)

    def end_stop_text(self) -> str:
        """Why a door or drawer resists, when the simulator knows it is held: ``"drawer 'cabinet' is
        at the end of its travel (0.350 m): ..."`` (a pull longer than the slide), ``"door 'door' is
        at its hinge limit (95 deg) ..."``, a latched door (:meth:`latch_text`); else "" (the caller
        diagnoses a free mechanism that does not follow)."""
        for name, o in [*self.drawers.items(), *self.doors.items()]:
            for joint, limit in o.joints_at_open_limit():
                if isinstance(o, ArticulatedDrawer):
                    return (f"drawer {name!r} is at the end of its travel ({limit:.3f} m): the motion asks for "
                            "more than the drawer moves")
                if joint == getattr(o.asset, "hinge_joint", None):
                    return (f"door {name!r} is at its hinge limit ({limit:.0f} deg): the motion asks for more "
                            "than the door opens")
                if joint == getattr(o.asset, "handle_joint", None):
                    return (f"the handle of door {name!r} is at its limit ({limit:.0f} deg): the motion turns it "
                            "further than it turns")
        return self.latch_text()

    def resistance_n(self, goal: FollowScrewGoal, tcp: np.ndarray) -> Optional[tuple[float, str]]:
        """The force (N) the held mechanism's damping and friction put against a motion at the goal's
        cruise speed, and what makes it (the drawer nearest the TCP), or None for a door or no drawer."""
        if not self.drawers or not goal.screw.is_translation:
            return None
        name = min(self.drawers, key=lambda n: float(np.linalg.norm(
            self.drawers[n].drawer_grasp_in_world()[:3, 3] - tcp)) if self.drawers[n].asset is not None else math.inf)
        asset = self.drawers[name].asset
        if asset is None:
            return None
        speed = float(goal.speed)
        n = asset.drawer_damping * speed + asset.drawer_friction
        return n, (f"the drawer of {name!r}'s damping ({asset.drawer_damping:g} N*s/m at {speed:g} m/s) and "
                   f"friction ({asset.drawer_friction:g} N)")

    def mechanism_state(self) -> dict[str, float]:
        """Every door's hinge angle (deg) and every drawer's opening (m) now, by name."""
        out = {f"door {n!r}": d.door_angle_deg for n, d in self.doors.items()}
        out.update({f"drawer {n!r}": d.drawer_opening_m for n, d in self.drawers.items()})
        return out

    def motion_text(self, before: dict[str, float]) -> tuple[str, str]:
        """``("drawer 'cabinet'", "moved 0.069 m")``: the mechanism that moved most since ``before``
        (``("", "")`` without doors and drawers)."""
        now = self.mechanism_state()
        best, delta = "", 0.0
        for k, v in now.items():
            dv = v - before.get(k, v)
            scale = 1.0 if k.startswith("drawer") else 0.01   # 1 deg counts as 1 cm
            if abs(dv) * scale >= abs(delta) * (1.0 if best.startswith("drawer") or not best else 0.01):
                best, delta = k, dv
        if not best:
            return "", ""
        return best, (f"moved {delta:.3f} m" if best.startswith("drawer") else f"turned {delta:.1f} deg")

    def grip_offsets(self, tcp: np.ndarray) -> dict[str, float]:
        """Distance (m) from ``tcp`` to every handle's grasp point, by name."""
        out = {}
        for n, d in self.doors.items():
            try:
                out[n] = float(np.linalg.norm(d.handle_grasp_in_world()[:3, 3] - tcp))
            except ValueError:
                pass
        for n, d in self.drawers.items():
            try:
                out[n] = float(np.linalg.norm(d.drawer_grasp_in_world()[:3, 3] - tcp))
            except ValueError:
                pass
        return out

    def grip_advice(self, arm: SimArm) -> str:
        """The fix for a grasp that slid off a handle: grip harder while the gripper can, else (it
        squeezes its force limit already) a stronger gripper or a lighter mechanism."""
        g = self.backend.grippers.get(arm.name)
        if g is None:
            return "grip it harder (GripperCommand max_effort) or grasp it where it does not slide"
        limit = float(g.model.max_grip_force_n)
        if limit > 0 and g.commanded_force_n >= 0.95 * limit:
            return (f"the gripper already squeezes its {limit:g} N limit (GripperCommand max_effort is clamped to "
                    "it): it cannot hold this handle against the mechanism's resistance; a gripper with more force, "
                    "or a lighter mechanism")
        return "grip it harder (GripperCommand max_effort) or grasp it where it does not slide"

    def grip_slip(self, before: dict[str, float], tcp: np.ndarray) -> Optional[float]:
        """How far (m) the TCP moved off the handle it held at the start (the nearest one then), or None."""
        if not before:
            return None
        name = min(before, key=lambda k: before[k])
        now = self.grip_offsets(tcp).get(name)
        return None if now is None else now - before[name]

    def latch_text(self) -> str:
        """``"door 'door' is latched (...)"`` when a door's latch holds it
        (:meth:`~.articulated.ArticulatedDoor.latch_text`), else ""."""
        for name, d in self.doors.items():
            text = d.latch_text(name)
            if text:
                return text
        return ""

    def _record_force(self, f: float) -> None:
        self._followed = True
        if f > self.max_wrist_force_n:
            self.max_wrist_force_n = f

    def door(self, name: Optional[str] = None) -> ArticulatedDoor:
        """The door called ``name`` (default: the first). Raises KeyError listing the doors."""
        return self._get(self.doors, name, "door")

    def drawer(self, name: Optional[str] = None) -> ArticulatedDrawer:
        """The drawer of cabinet ``name`` (default: the first). Raises KeyError listing them."""
        return self._get(self.drawers, name, "cabinet")

    @staticmethod
    def _get(d: dict, name: Optional[str], what: str) -> Any:
        if name is None:
            if not d:
                raise KeyError(f"the scene has no {what}s (scene.{what}s)")
            return next(iter(d.values()))
        if name not in d:
            raise KeyError(f"no {what} named {name!r}; the scene has {sorted(d) or 'none'}")
        return d[name]

    def metrics(self) -> dict[str, Any]:
        """``door_angle_deg``, ``handle_angle_deg``, ``drawer_opening_m``, ``max_wrist_force_n``
        (see the module docs); empty for a scene without doors, cabinets and screw motions."""
        out: dict[str, Any] = {}
        if self.doors:
            first = next(iter(self.doors.values()))
            out["door_angle_deg"] = round(first.door_angle_deg, 3)
            out["handle_angle_deg"] = round(first.handle_angle_deg, 3)
            if len(self.doors) > 1:
                out["doors"] = {n: round(d.door_angle_deg, 3) for n, d in self.doors.items()}
        if self.drawers:
            out["drawer_opening_m"] = round(next(iter(self.drawers.values())).drawer_opening_m, 5)
            if len(self.drawers) > 1:
                out["drawers"] = {n: round(d.drawer_opening_m, 5) for n, d in self.drawers.items()}
        if self._objects or self._followed:
            out["max_wrist_force_n"] = round(self.max_wrist_force_n, 2)
        return out

    def telemetry(self) -> dict[str, dict[str, Any]]:
        """``door/<name>`` and ``drawer/<name>`` streams (see the module docs)."""
        out: dict[str, dict[str, Any]] = {}
        for n, d in self.doors.items():
            out[f"door/{n}"] = {"door_angle_deg": round(d.door_angle_deg, 3),
                                "handle_angle_deg": round(d.handle_angle_deg, 3), "latched": d.latched}
        for n, d in self.drawers.items():
            out[f"drawer/{n}"] = {"drawer_opening_m": round(d.drawer_opening_m, 5)}
        return out


def _factory(backend: SimBackend, _unused: Any) -> DoorsExtension:
    extra = backend.scene.extra
    return DoorsExtension(backend, extra.get("doors") or [], extra.get("cabinets") or [])


register_extension("doors", _factory)

__all__ = ["CabinetSpec", "DoorSpec", "DoorsExtension", "parse_cabinets", "parse_doors", "plan_screw_trajectory"]
