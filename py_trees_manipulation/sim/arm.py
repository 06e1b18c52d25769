"""The simulated arm: :class:`SimArm` (state, kinematics on the shadow robot, 1 kHz position motors)
and :class:`_JointTrajectory`, the execution that tracks a dense joint trajectory.

Moved out of :mod:`.backend` (issue 37 item 6); its motion actions are served by :mod:`.planning`.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Optional, Sequence

import numpy as np
import pybullet as pb

from ..bullet.robots import LoadedRobot
from ..collision.ik import IKSolution, solve_ik
from ..geometry.poses import Pose, check_pose, translation_distance
from ..msgs.actions import GoalHandle
from ..msgs.motion import MotionFeedback, MotionResult
from .resources import _Execution, _SimResource


# ------------------------------------------------------------------------------------------------
# Arm
# ------------------------------------------------------------------------------------------------
class _JointTrajectory(_Execution):
    """Tracks a dense (1 kHz) joint trajectory, then checks the end condition."""

    SETTLE_S = 1.0
    #: the longest the arm waits, before it moves, for a SlipServo grip to reach the load the motion
    #: will put on the held object (F2 of the gripper controller), s
    GRIP_WAIT_S = 0.5
    CHECK_EVERY = 10
    SETTLED_AFTER = 300  # steps: within tolerance this long after the trajectory counts as arrived
    GUARD_TOUCH = 1.0    # a tripped guard backs off to where the wrist force rose over this x max_force_n

    def __init__(self, arm: "SimArm", handle: GoalHandle, q: np.ndarray, qd: np.ndarray,
                 target_pose: Pose, position_tolerance_m: float, joint_target: Optional[np.ndarray] = None,
                 max_force_n: Optional[float] = None):
        super().__init__(arm, handle)
        self.arm = arm
        self.q = q.tolist()
        self.qd = qd.tolist()
        self.n = len(self.q)
        self.k = 0
        self.q_final = list(self.q[-1]) if self.n else arm.robot.joint_positions().tolist()
        self.target_pose = target_pose
        self.tol = position_tolerance_m
        self.joint_target = joint_target
        self.settle_steps = 0
        self.max_settle = int(self.SETTLE_S * arm.backend.physics_hz)
        self.max_force_n = max_force_n
        self.force_baseline = arm.wrist_force() if max_force_n is not None else None
        self.over_force = 0
        self.guard_samples = arm.guard_samples
        #: the trajectory sample at which the wrist force last rose over GUARD_TOUCH x max_force_n
        #: (and stayed there): a tripped guard backs off to it
        self.touch_k: Optional[int] = None
        self._cmd = arm._motor_command
        self._hold: Any = None          # the SlipServo controller told this motion's grip (F2)
        self._load_told = False
        self._grip_wait = 0
        self._q_rest: list[float] = []

    def _tell_load(self) -> None:
        """Grip-load coupling (F2 of :mod:`~py_trees_manipulation.control.gripper_controller`): when
        this robot's gripper holds an object in SlipServo, tell its controller the grip this motion
        needs (``m / (2 mu)`` from the tactile extension times the peak ``|a - g|``,
        :func:`peak_load_factor`) and hold the arm still, for at most :data:`GRIP_WAIT_S`, until the
        grip has reached it (the controller keeps the largest of the hold: a motion waits only when
        it needs more)."""
        self._load_told = True
        tactile = getattr(self.arm.backend, "extensions", {}).get("tactile")
        found = tactile.slip_hold(self.arm.robot) if tactile is not None and self.n else None
        if found is None:
            return
        hold, grip_per_g = found
        hold.anticipate_grip(grip_per_g * GRAVITY * peak_load_factor(self.arm, self.q, self.arm.backend.dt))
        self._hold = hold
        if hold.load_grip > hold.slip_force:   # (0 with the controller's load_anticipation off)
            self._grip_wait = int(round(self.GRIP_WAIT_S * self.arm.backend.physics_hz))
            self._q_rest = self.arm.robot.joint_positions().tolist()

    def step(self) -> None:
        k = self.k
        if not self._load_told:
            self._tell_load()
        if k == 0 and self._grip_wait > 0:
            if not self._hold.grip_ready:
                self._grip_wait -= 1
                self._cmd(self._q_rest, [0.0] * len(self._q_rest))
                return
            self._grip_wait = 0
        if k < self.n:
            self._cmd(self.q[k], self.qd[k])
            self.k = k + 1
            if self.max_force_n is not None:
                f = float(np.linalg.norm(self.arm.wrist_force() - self.force_baseline))
                if f <= self.GUARD_TOUCH * self.max_force_n:
                    self.touch_k = None
                elif self.touch_k is None:
                    self.touch_k = k
                self.over_force = self.over_force + 1 if f > self.max_force_n else 0
                if self.over_force >= self.guard_samples:
                    # back off to where the force crossed the threshold: the guard's latency and the
                    # braking pressed further (K v (tau + brake), scene/contact.py), and held there the
                    # press would stay and grow as the contact settles on more points (a UR "until tool
                    # contact" backs off too). Backed off further, to the first touch, an object that
                    # turned in the grip on the touch-down was left off its support (flip_box)
                    back = self.touch_k if self.touch_k is not None else k
                    self.arm.hold(self.q[max(back - 1, 0)])
                    self._end(True, stopped_on_contact=True,
                              text=f"stopped on contact: wrist force {f:.1f} N > max_force_n {self.max_force_n:g} N; "
                                   f"backed off {(k - back + 1) * self.arm.backend.dt * 1000:.0f} ms of the line to "
                                   f"where it pressed with {self.GUARD_TOUCH * self.max_force_n:g} N")
            return
        if self.settle_steps == 0:
            self._cmd(self.q_final, [0.0] * len(self.q_final))
        self.settle_steps += 1
        if self.settle_steps % self.CHECK_EVERY and self.settle_steps < self.max_settle:
            return
        err = self._error()
        if err <= self.tol and (self.settle_steps >= self.SETTLED_AFTER
                                or float(np.max(np.abs(self.arm.robot.joint_velocities()))) < 0.02):
            self._end(True, text=f"reached the target ({err * 1000:.1f} mm from it)")
        elif self.settle_steps >= self.max_settle:
            wrench = float(np.linalg.norm(self.arm.wrist_force()))
            self._end(False, text=f"the TCP stopped {err:.3f} m from the target (tolerance {self.tol:g} m), "
                                  f"wrist force {wrench:.1f} N: the arm is blocked by a contact, or the load "
                                  "is more than its joints can lift")

    def _error(self) -> float:
        if self.joint_target is not None:
            # Joint goals: error is the joint-space miss mapped to a TCP distance via the target FK.
            qerr = float(np.max(np.abs(self.arm.robot.joint_positions() - self.joint_target)))
            if qerr <= 0.005:
                return 0.0
        return float(np.linalg.norm(self.arm.robot.tcp_position() - self.target_pose[:3, 3]))

    def _end(self, success: bool, text: str, stopped_on_contact: bool = False) -> None:
        tcp = self.arm.tcp_pose()
        result = MotionResult(tcp_pose=tcp, position_error_m=translation_distance(tcp, self.target_pose),
                              stopped_on_contact=stopped_on_contact)
        if success:
            self.handle.set_succeeded(result, text)
        else:
            self.handle.set_aborted(result, text)
        self.finish()

    def publish_feedback(self) -> None:
        tcp = self.arm.tcp_pose()
        self.handle.publish_feedback(MotionFeedback(
            tcp_pose=tcp, distance_m=float(np.linalg.norm(tcp[:3, 3] - self.target_pose[:3, 3])),
            progress=min(1.0, self.k / self.n) if self.n else 1.0))

    def stop(self) -> Any:
        self.arm.hold()
        tcp = self.arm.tcp_pose()
        return MotionResult(tcp_pose=tcp, position_error_m=translation_distance(tcp, self.target_pose))


GRAVITY = 9.81


def peak_load_factor(arm: "SimArm", q: Sequence[Sequence[float]], dt: float, every: int = 10) -> float:
    """The peak load a joint trajectory puts on an object the hand holds, as a factor of its weight:
    ``max |a - g| / g`` over the motion, ``a`` the TCP's acceleration (world, m/s^2) from forward
    kinematics every ``every`` samples (10 ms at 1 kHz; second differences, the arm at rest before
    the first sample and after the last), ``g`` gravity. 1 for a hand at rest or at a steady speed;
    (g + a) / g for a lift accelerating at ``a``; a turning hand's angular acceleration is left out.

    Args:
        arm: the arm (its shadow robot gives the forward kinematics).
        q: the trajectory, shape (n, dof), radians, sampled every ``dt`` s from ``dt`` on.
        dt: the sample period, s.
        every: samples per finite-difference step.
    """
    n = len(q)
    if n == 0:
        return 1.0
    start = arm.forward_kinematics(arm.robot.joint_positions())[:3, 3]
    steps = -(-n // every)
    pts = [start, start]
    for j in range(1, steps + 1):
        pts.append(arm.forward_kinematics(q[min(j * every, n) - 1])[:3, 3])
    pts += [pts[-1], pts[-1]]
    p = np.array(pts)
    h = every * dt
    a = (p[2:] - 2.0 * p[1:-1] + p[:-2]) / (h * h)
    a[:, 2] += GRAVITY
    return float(np.max(np.linalg.norm(a, axis=1)) / GRAVITY)


class SimArm(_SimResource):
    """An arm of a simulated robot: state, kinematics on the shadow robot, 1 kHz position motors.

    Between goals the arm holds still with its position motors (:meth:`hold`), or, while the hand
    holds something that is fixed to the world (a door's or drawer's handle), compliantly with a
    torque law (:meth:`hold_compliant`; :mod:`.doors`).

    Its motion actions (``move_to_pose``, ``move_joints``, ``move_cartesian``) are served by the
    ``motion_planning`` extension (:mod:`.planning`), which checks and plans them first.

    Attributes:
        name: the robot's name in the scene.
        robot: the :class:`~.robots.LoadedRobot` in the physics client.
        shadow: the same robot in the kinematics client (IK and FK), loaded on first use.
        joint_names: arm joint names, base to tip.
        named_configurations: configurations by name, radians, ``joint_names`` order.
    """

    kind = "arm"
    position_gain = 0.3
    velocity_gain = 1.0

    def __init__(self, backend: "SimBackend", name: str, robot: LoadedRobot,
                 shadow: "LoadedRobot | Callable[[], LoadedRobot]"):
        super().__init__(backend, name)
        self.robot = robot
        self._shadow: Optional[LoadedRobot] = None if callable(shadow) else shadow
        self._load_shadow = shadow if callable(shadow) else None
        self.joint_names = robot.arm_joint_names
        self.named_configurations = {k: list(v) for k, v in robot.model.named_configurations.items()}
        self._forces = robot.effort_limits.tolist()
        self._pgains = [self.position_gain] * len(robot.arm_joints)
        self._vgains = [self.velocity_gain] * len(robot.arm_joints)
        self._hand_joint = robot.wrist_ft_joint
        pb.enableJointForceTorqueSensor(robot.body, self._hand_joint, True, physicsClientId=robot.client)
        #: 1 kHz wrist force samples over ``max_force_n`` in a row that trip a guard: the robot
        #: description's ``wrist_force_latency_s`` (5 ms: 5 samples at 1 kHz)
        self.guard_samples = max(1, int(round(float(getattr(robot.model, "wrist_force_latency_s", 0.005))
                                               * backend.physics_hz)))
        self._compliant: Optional[Callable[[], None]] = None   # removes the compliant hold's step hook

    @property
    def shadow(self) -> LoadedRobot:
        """The same robot in the kinematics client (IK and FK): loaded, and the client connected,
        when first asked for."""
        if self._shadow is None:
            self._shadow = self._load_shadow()
        return self._shadow

    # ---- state ---------------------------------------------------------------------------------
    def tcp_pose(self) -> Pose:
        """(4, 4) TCP pose, world frame, metres."""
        return self.robot.tcp_pose()

    def joint_positions(self) -> list[float]:
        """Arm joint positions, radians, ``joint_names`` order."""
        return self.robot.joint_positions().tolist()

    def wrist_force(self) -> np.ndarray:
        """Reaction force at the wrist force-torque joint (the description's
        ``wrist_force_torque_joint``, e.g. ``panda_hand_joint``), N, shape (3,), joint frame.

        Includes the weight and inertia of the hand, fingers and anything held; compare against a
        baseline.
        """
        return np.array(pb.getJointState(self.robot.body, self._hand_joint,
                                         physicsClientId=self.robot.client)[2][:3])

    def touching(self) -> str:
        """What the robot touches now, and what those bodies touch in turn (``"mug; mug on nothing
        but panda"``), by name, from the simulator's contact points: a guard's message says whether
        the force came from a contact."""
        c, robot = self.robot.client, self.robot.body
        names = {b: n for n, b in self.backend._bodies.items()}
        mine = sorted({p[2] for p in pb.getContactPoints(bodyA=robot, physicsClientId=c) if p[2] != robot})
        parts = []
        for b in mine:
            theirs = sorted({names.get(p[2], str(p[2])) for p in pb.getContactPoints(bodyA=b, physicsClientId=c)
                             if p[2] not in (robot, b)})
            parts.append(f"{names.get(b, b)} (on {', '.join(theirs) if theirs else 'nothing but ' + self.name})")
        return "; ".join(parts)

    # ---- low-level ----------------------------------------------------------------------------
    def _motor_command(self, q: Sequence[float], qd: Sequence[float]) -> None:
        pb.setJointMotorControlArray(self.robot.body, self.robot.arm_joints, pb.POSITION_CONTROL,
                                     targetPositions=q, targetVelocities=qd, forces=self._forces,
                                     positionGains=self._pgains, velocityGains=self._vgains,
                                     physicsClientId=self.robot.client)

    def hold(self, q: Optional[Sequence[float]] = None) -> None:
        """Hold the arm at ``q`` (radians; default: where it is now) with zero target velocity (its
        position motors; ends a compliant hold)."""
        self._end_compliant()
        q = self.robot.joint_positions().tolist() if q is None else [float(v) for v in q]
        self._motor_command(q, [0.0] * len(q))

    def hold_compliant(self, law: Callable[[], None]) -> None:
        """Hold the arm with a torque law until its next goal starts or :meth:`hold` holds it stiffly.

        ``law()`` runs before every physics step and sets the arm joints' ``TORQUE_CONTROL``
        commands (PyBullet applies one for a single step); the joints' velocity motors are switched
        off here. A goal that the arm's server takes and runs (an execution) owns the joints from
        its first step on; one refused or aborted at once leaves the hold in place.

        Why: position motors make the arm rigid. A rigid arm whose hand grips something fixed to
        the world (a door's lever, a drawer's bar) closes a rigid loop through the fingers, whose
        soft pads are its only give: the few tenths of a millimetre that the hand sits off the
        handle, or any load the loop was under when the motors took over, then press one pad
        harder than the gripper's force limit (the WSG 50's geared fingers share one squeeze, so
        a load along their travel adds to one pad what it takes from the other: 93 and 67 N at an
        80 N limit on examples/open_drawer.yaml). An impedance-controlled arm yields to that load,
        as a real arm opening a door does (MoveIt Studio's door and drawer affordances run under
        an admittance controller)."""
        self._end_compliant()
        r = self.robot
        pb.setJointMotorControlArray(r.body, r.arm_joints, pb.VELOCITY_CONTROL, forces=[0.0] * len(r.arm_joints),
                                     physicsClientId=r.client)

        def step(_backend: Any) -> None:
            if self._active is not None:   # the next goal's execution owns the joints
                self._end_compliant()
                return
            law()

        self._compliant = self.backend.add_step_hook(step, before=True)

    @property
    def compliant(self) -> bool:
        """The arm is held by a torque law (:meth:`hold_compliant`)."""
        return self._compliant is not None

    def _end_compliant(self) -> None:
        if self._compliant is not None:
            remove, self._compliant = self._compliant, None
            remove()

    # ---- kinematics -----------------------------------------------------------------------------
    def forward_kinematics(self, q: Sequence[float]) -> Pose:
        """(4, 4) TCP pose, world frame, for arm joints ``q`` (radians), computed on the shadow robot."""
        self.shadow.reset_arm(q)
        return self.shadow.tcp_pose()

    def solve_ik(self, target: Pose, seeds: Optional[Sequence[Sequence[float]]] = None,
                 iterations: int = 6, threshold_m: float = 1e-4) -> IKSolution:
        """Inverse kinematics for the TCP, verified by forward kinematics.

        From each seed (default: the current configuration, then ``ready``) on the shadow robot:
        two null-space ``calculateInverseKinematics`` iterations (joint limits, rest pose = the seed,
        which keeps the solution near it and inside the limits), then plain damped-least-squares
        iterations, which remove the millimetre bias of PyBullet's null-space solver. Every iterate is
        clipped to the joint limits and scored by forward kinematics; the best one is returned.

        Args:
            target: (4, 4) TCP pose, world frame.
            seeds: arm configurations to start from, radians.
            iterations: refinement iterations per seed (each one ``calculateInverseKinematics`` call).
            threshold_m: stop once the FK position error is below this (m) and the orientation error
                below ``threshold_m`` (rad).
        """
        return self._solve_ik(check_pose(target), seeds, iterations, threshold_m)

    def _solve_ik(self, target: Pose, seeds: Optional[Sequence[Sequence[float]]] = None,
                  iterations: int = 6, threshold_m: float = 1e-4) -> IKSolution:
        """:meth:`solve_ik` for a ``target`` already validated by ``check_pose`` (``follow_screw``
        calls it once per waypoint): the same numbers, without re-validating the pose twice."""
        if seeds is None:
            seeds = [self.robot.joint_positions(), self.named_configurations.get("ready", self.robot.joint_positions())]
        return solve_ik(self.shadow, target, seeds, iterations, threshold_m)


def links_below(body: int, link: int, client: int) -> frozenset:
    """Link indices of ``link`` and every link below it (PyBullet numbers a child after its parent)."""
    below = {link}
    for j in range(link + 1, pb.getNumJoints(body, physicsClientId=client)):
        if pb.getJointInfo(body, j, physicsClientId=client)[16] in below:
            below.add(j)
    return frozenset(below)


def links_mass_kg(body: int, links: Iterable[int], client: int) -> float:
    """Total mass of ``links`` of ``body``, kg (their URDF inertial masses)."""
    return float(sum(pb.getDynamicsInfo(body, j, physicsClientId=client)[0] for j in links))


def hand_mass_kg(arm: "SimArm") -> float:
    """Mass (kg) carried by the arm's hand joint: the hand link and every link below it."""
    r = arm.robot
    return links_mass_kg(r.body, links_below(r.body, arm._hand_joint, r.client), r.client)


def wrist_force_world(arm: "SimArm", weight: np.ndarray) -> np.ndarray:
    """Force (N, world frame, shape (3,)) the hand exerts on what it holds or touches (minus the force
    that puts on the hand): the hand-joint reaction rotated to the world plus the hand's ``weight``
    (``m g``, N). A held load of mass m reads ``+m g`` up (the hand holds it up); a hand pressing down
    on a table reads down."""
    st = pb.getLinkState(arm.robot.body, arm._hand_joint, computeForwardKinematics=True, physicsClientId=arm.robot.client)
    R = np.array(pb.getMatrixFromQuaternion(st[5])).reshape(3, 3)
    return R @ arm.wrist_force() + weight
