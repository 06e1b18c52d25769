"""The PyBullet backend: simulated robots (any robot description) with 1 kHz physics and action servers.

:class:`SimBackend` implements :class:`py_trees_manipulation.backend.Backend`. Each backend owns its
own PyBullet physics client (DIRECT by default, GUI with ``gui=True``) plus a private DIRECT client
holding a kinematic "shadow" copy of each robot for inverse and forward kinematics, so several
backends live side by side in one process and IK never disturbs the simulated robot.

Time: :meth:`SimBackend.now` is simulation time, ``steps / physics_hz``. :meth:`SimBackend.advance`
runs whole physics steps; on every step it runs, in order: the *pre-step* hooks (gripper controllers
and the active action executions, which set motor targets), ``stepSimulation``, then the *post-step*
hooks registered with :meth:`SimBackend.add_step_hook` (grasp fix, tactile sensors). Feedback is
published once per :meth:`advance` call (i.e. once per tree tick).

Resources (named after the robot, e.g. ``arms["panda"]`` and ``grippers["panda"]``):

- :class:`SimArm` serves ``move_to_pose``, ``move_joints`` and ``move_cartesian`` through the
  ``motion_planning`` extension (:mod:`.planning`): every motion is checked for collisions in a
  planning copy of the scene (and planned with OMPL when the straight joint motion collides) before
  the robot moves, on a worker thread while sim time stands still (an execution with
  ``holds_clock``). Targets are solved by ``calculateInverseKinematics`` (null space towards the
  current configuration) and *verified by forward kinematics*: a TCP that would end farther than
  ``position_tolerance_m`` from the target ends the goal ABORTED with the distance in the text.
  Joint motions are timed by ruckig under ``velocity_scaling`` / ``acceleration_scaling`` of the
  joint limits; ``move_cartesian`` follows a straight TCP line (IK every 5 mm / 20 ms of path,
  trapezoidal speed profile at ``speed_mps``). The joints track the precomputed 1 kHz trajectory
  with POSITION_CONTROL motors limited to the joint
  torques (the description's ``effort_limits``, else the URDF's; the Panda's 87 N m, 12 N m).
- :class:`SimGripper` serves ``gripper_action`` (pr2_controllers_msgs/Pr2GripperCommand):
  ``position`` is the finger gap (m, sum of both finger joints), ``max_effort`` the force of each
  finger (N; negative means the description's ``default_force_n``, e.g. the Franka Hand's continuous
  70 N), clipped to its ``max_force_n``. As in
  PR2's gripper action (see ``reference/pr2_gripper_controller.md`` §1.6), the goal SUCCEEDS with
  ``reached_goal`` when the gap is within ``position_tolerance_m`` of the command, and is ABORTED with
  ``stalled=True`` when the fingers stop short of it (gap speed below 5 mm/s for 0.1 s), which is what
  closing on an object does; the fingers keep squeezing afterwards. (PR2 uses a 1e-6 m/s stall
  speed, which never triggers in simulation, pr2_simulator#115.)

A new goal on a resource preempts the one running there. A cancelled goal ends PREEMPTED and the
arm holds its current configuration (the gripper holds its current gap).

Extension points: :meth:`SimBackend.add_step_hook`, :meth:`SimGripper.set_controller` (a 1 kHz
gripper controller that owns the finger joints through :meth:`SimGripper.state`,
:meth:`SimGripper.command_effort` and :meth:`SimGripper.command_gap`), and ``add_action`` on arms and
grippers (e.g. the PR2 gripper sensor actions).
"""

from __future__ import annotations

from ..bullet import _quiet_import  # noqa: F401  (first: pybullet's import banner)

import math
import time
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional, Sequence, Union

import numpy as np
import pybullet as pb
import pybullet_data

from ..backend import BackendError
from ..collision.ik import IKSolution, solve_ik
from ..collision.ik import pq_of_valid_pose as _pq_of_valid_pose  # noqa: F401  (tests/unit/test_sim_paths.py)
from ..conventions import quat_xyzw_from_wxyz
from ..geometry.poses import Pose, check_pose, pose_from_pq, pq_from_pose, translation_distance
from ..msgs.actions import GoalHandle, GoalStatus
from ..msgs.motion import MotionFeedback, MotionResult, Pr2GripperCommand, Pr2GripperCommandResult
from ..bullet.pb_pose import pose_from_pybullet
from ..bullet.robots import MODELS, LoadedRobot
from ..scene.spec import ObjectSpec, RobotSpec, SceneSpec, parse_scene

StepHook = Callable[["SimBackend"], None]


#: name -> (scene section or None, factory(backend, parsed_section) -> extension)
_EXTENSIONS: dict[str, tuple[Optional[str], Callable[..., Any]]] = {}


def register_extension(name: str, factory: Callable[..., Any], section: Optional[str] = None) -> None:
    """Add a simulator extension, built by every :class:`SimBackend` after the scene's objects.

    Args:
        name: the extension's name (``backend.extensions[name]``).
        factory: ``factory(backend, parsed_section) -> extension``. The extension may offer
            ``metrics() -> dict`` and ``telemetry() -> dict`` (merged into the backend's) and
            ``close()``; it adds physics-step hooks with ``backend.add_step_hook`` and actions with
            ``resource.add_action``.
        section: build only when the scene has this extra section (see
            :func:`~.scene.register_section`); ``None`` builds it for every scene.
    """
    _EXTENSIONS[name] = (section, factory)


#: the simulator modules whose extensions every :class:`SimBackend` builds, in this order (grasp fix,
#: doors and cabinets, tactile sensing, motion planning): plugins of this module, imported by name
#: (they import it to register themselves)
BUILTIN_EXTENSIONS = ("grasp_fix", "doors", "tactile_sensor", "planning")


def load_builtin_extensions() -> None:
    """Import the modules of :data:`BUILTIN_EXTENSIONS` (each registers with
    :func:`register_extension`). Idempotent."""
    import importlib

    package = __name__.rpartition(".")[0]
    for name in BUILTIN_EXTENSIONS:
        importlib.import_module(f"{package}.{name}")


def _fmt(v: Iterable[float]) -> str:
    return "(" + ", ".join(f"{x:.2f}" for x in v) + ")"


# ================================================================================================
# Action executions
# ================================================================================================
class _Execution:
    """One running goal on a resource. ``step()`` runs before every physics step."""

    def __init__(self, resource: "_SimResource", handle: GoalHandle):
        self.resource = resource
        self.handle = handle

    def step(self) -> None:  # pragma: no cover - overridden
        pass

    def publish_feedback(self) -> None:
        pass

    def stop(self) -> Any:
        """Cancelled or preempted: hold still, return the result to attach."""
        return None

    def finish(self) -> None:
        self.resource._execution_done(self)


class _SimResource:
    """Common part of :class:`SimArm` and :class:`SimGripper`: goals, preemption, extra actions."""

    kind = "resource"

    def __init__(self, backend: "SimBackend", name: str):
        self._backend_ref = weakref.ref(backend)
        self.name = name
        self._servers: dict[str, Callable[[Any, GoalHandle], Optional[_Execution]]] = {}
        self._active: Optional[_Execution] = None
        self._incoming: list[tuple[Callable[[Any, GoalHandle], Optional[_Execution]], GoalHandle]] = []

    @property
    def backend(self) -> "SimBackend":
        b = self._backend_ref()
        if b is None:
            raise BackendError("the backend is gone")
        return b

    @property
    def actions(self) -> frozenset[str]:
        return frozenset(self._servers)

    def add_action(self, action: str, server: Callable[[Any, GoalHandle], Optional[_Execution]]) -> None:
        """Serve ``action`` with ``server(resource, handle)``.

        The server validates ``handle.goal``; it either finishes the handle at once (rejected,
        aborted, succeeded) and returns None, or returns an execution object with ``step()`` (called
        before every physics step), ``publish_feedback()`` (once per ``advance``), ``stop()`` (on cancel
        or preemption; returns the result to attach) and that calls ``resource._execution_done(self)``
        when it finishes the handle itself. Replaces an existing server of the same name.
        """
        self._servers[action] = server

    def send_goal(self, action: str, goal: Any) -> GoalHandle:
        """Send ``goal`` to ``action``'s server; never blocks, and does no work in the caller's tick.

        Returns a :class:`GoalHandle`, PENDING until the backend next runs (``advance``, ``step``,
        :meth:`SimBackend.accept_goals`), as a goal sent to a real action server is: the server then
        takes it (validates it, prepares the motion, preempts the goal running on this resource) and
        it is ACTIVE while it runs, REJECTED for an invalid goal, or already ABORTED (e.g. a target
        out of reach). No physics step passes in between: the goal starts on the same step as if
        it had been taken at once. An unknown action is REJECTED at once.

        Raises:
            BackendError: the backend is closed.
        """
        backend = self.backend
        if backend.closed:
            raise BackendError(f"cannot send {action!r} to {self.name!r}: the backend is closed")
        handle = GoalHandle(action, goal, on_cancel=self._on_cancel)
        server = self._servers.get(action)
        if server is None:
            import difflib

            close = difflib.get_close_matches(action, sorted(self._servers), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; it serves {sorted(self._servers)}"
            handle.set_rejected(f"{self.kind} {self.name!r} has no action {action!r}{hint}")
            return handle
        self._incoming.append((server, handle))
        backend._incoming.append(self)
        return handle

    def _accept(self) -> None:
        """The server takes the goals sent since the backend last ran, in order (a later one preempts)."""
        incoming, self._incoming = self._incoming, []
        for server, handle in incoming:
            if handle.done:  # cancelled while PENDING
                continue
            self.preempt(f"preempted by a new {handle.action!r} goal")
            try:
                execution = server(self, handle)
            except (TypeError, ValueError) as e:
                handle.set_rejected(f"invalid {handle.action} goal: {e}")
                continue
            if execution is not None and not handle.done:
                handle.set_active()
                self._active = execution
                self.backend._dirty = True
                execution.publish_feedback()

    def preempt(self, text: str = "preempted") -> None:
        """Stop the running goal (PREEMPTED with ``text``) and hold still. No-op when idle."""
        ex = self._active
        if ex is None:
            return
        self._active = None
        self.backend._dirty = True
        result = ex.stop()
        ex.handle.set_preempted(result, text)

    def _on_cancel(self, handle: GoalHandle) -> None:
        if self._active is not None and self._active.handle is handle:
            self.preempt("cancelled")
        elif handle.status == GoalStatus.PENDING:
            handle.set_recalled()  # never taken by the server
        else:
            handle.set_preempted(None, "cancelled")

    def _execution_done(self, ex: _Execution) -> None:
        if self._active is ex:
            self._active = None
            self.backend._dirty = True


# ------------------------------------------------------------------------------------------------
# Arm
# ------------------------------------------------------------------------------------------------
class _JointTrajectory(_Execution):
    """Tracks a dense (1 kHz) joint trajectory, then checks the end condition."""

    SETTLE_S = 1.0
    CHECK_EVERY = 10
    SETTLED_AFTER = 300  # steps: within tolerance this long after the trajectory counts as arrived

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
        self._cmd = arm._motor_command

    def step(self) -> None:
        k = self.k
        if k < self.n:
            self._cmd(self.q[k], self.qd[k])
            self.k = k + 1
            if self.max_force_n is not None:
                f = float(np.linalg.norm(self.arm.wrist_force() - self.force_baseline))
                self.over_force = self.over_force + 1 if f > self.max_force_n else 0
                if self.over_force >= 5:
                    self.arm.hold()
                    self._end(True, stopped_on_contact=True,
                              text=f"stopped on contact: wrist force {f:.1f} N > max_force_n {self.max_force_n:g} N")
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


class SimArm(_SimResource):
    """An arm of a simulated robot: state, kinematics on the shadow robot, 1 kHz position motors.

    Its motion actions (``move_to_pose``, ``move_joints``, ``move_cartesian``) are served by the
    ``motion_planning`` extension (:mod:`.planning`), which checks and plans them first.

    Attributes:
        name: the robot's name in the scene.
        robot: the :class:`~.robots.LoadedRobot` in the physics client.
        shadow: the same robot in the kinematics client (IK and FK).
        joint_names: arm joint names, base to tip.
        named_configurations: configurations by name, radians, ``joint_names`` order.
    """

    kind = "arm"
    position_gain = 0.3
    velocity_gain = 1.0

    def __init__(self, backend: "SimBackend", name: str, robot: LoadedRobot, shadow: LoadedRobot):
        super().__init__(backend, name)
        self.robot = robot
        self.shadow = shadow
        self.joint_names = robot.arm_joint_names
        self.named_configurations = {k: list(v) for k, v in robot.model.named_configurations.items()}
        self._forces = robot.effort_limits.tolist()
        self._pgains = [self.position_gain] * len(robot.arm_joints)
        self._vgains = [self.velocity_gain] * len(robot.arm_joints)
        self._hand_joint = robot.wrist_ft_joint
        pb.enableJointForceTorqueSensor(robot.body, self._hand_joint, True, physicsClientId=robot.client)

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

    # ---- low-level ----------------------------------------------------------------------------
    def _motor_command(self, q: Sequence[float], qd: Sequence[float]) -> None:
        pb.setJointMotorControlArray(self.robot.body, self.robot.arm_joints, pb.POSITION_CONTROL,
                                     targetPositions=q, targetVelocities=qd, forces=self._forces,
                                     positionGains=self._pgains, velocityGains=self._vgains,
                                     physicsClientId=self.robot.client)

    def hold(self, q: Optional[Sequence[float]] = None) -> None:
        """Hold the arm at ``q`` (radians; default: where it is now) with zero target velocity."""
        q = self.robot.joint_positions().tolist() if q is None else [float(v) for v in q]
        self._motor_command(q, [0.0] * len(q))

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


# ------------------------------------------------------------------------------------------------
# Gripper
# ------------------------------------------------------------------------------------------------
@dataclass
class FingerState:
    """Finger state of a parallel gripper.

    Attributes:
        gap_m: finger gap (on the Panda the sum of both finger joints), metres.
        gap_velocity_mps: rate of change of the gap, m/s (negative while closing).
        joint_effort_n: effort on the virtual gap joint, newtons, PR2 sign: negative closes.
        grip_force_n: squeezing force of the fingers, newtons, >= 0 while squeezing.
        finger_m: both finger joint positions (m; rad for revolute fingers).
    """

    gap_m: float
    gap_velocity_mps: float
    joint_effort_n: float
    grip_force_n: float
    finger_m: tuple[float, float]


class _GripperMove(_Execution):
    """pr2_controllers_msgs/Pr2GripperCommand execution (see the module docstring)."""

    CHECK_EVERY = 10

    def __init__(self, gripper: "SimGripper", handle: GoalHandle, target: float, force: float):
        super().__init__(gripper, handle)
        self.gripper = gripper
        self.target = target
        self.force = force
        self.count = 0
        self.still_since: Optional[float] = None
        gripper.command_gap(target, force)

    def step(self) -> None:
        self.count += 1
        if self.count % self.CHECK_EVERY:
            return
        g = self.gripper
        st = g.state()
        now = g.backend.now()
        if abs(st.gap_m - self.target) <= g.position_tolerance_m:
            self.handle.set_succeeded(self._result(st, reached=True),
                                      f"reached gap {st.gap_m * 1000:.1f} mm (goal {self.target * 1000:.1f} mm)")
            self.finish()
            return
        if abs(st.gap_velocity_mps) < g.stall_speed_mps:
            if self.still_since is None:
                self.still_since = now
            elif now - self.still_since >= g.stall_time_s:
                self.handle.set_aborted(
                    self._result(st, stalled=True),
                    f"stalled at gap {st.gap_m * 1000:.1f} mm (goal {self.target * 1000:.1f} mm), "
                    f"squeezing with {st.grip_force_n:.1f} N: the fingers are blocked, typically by a grasped object")
                self.finish()
        else:
            self.still_since = None

    @staticmethod
    def _result(st: FingerState, stalled: bool = False, reached: bool = False) -> Pr2GripperCommandResult:
        return Pr2GripperCommandResult(position=st.gap_m, effort=st.grip_force_n, stalled=stalled, reached_goal=reached)

    def publish_feedback(self) -> None:
        self.handle.publish_feedback(self._result(self.gripper.state()))

    def stop(self) -> Any:
        st = self.gripper.state()
        self.gripper.command_gap(st.gap_m, self.force)
        return self._result(st)


class SimGripper(_SimResource):
    """The parallel gripper of a simulated robot.

    Attributes:
        name: the robot's name in the scene.
        robot: the :class:`~.robots.LoadedRobot`.
        max_gap_m: fully open gap, metres.
        position_tolerance_m: ``gripper_action`` succeeds within this of the commanded gap, metres.
        stall_speed_mps, stall_time_s: the fingers count as stalled when the gap speed stays below
            ``stall_speed_mps`` for ``stall_time_s``.
        controller: the installed 1 kHz controller, or None (position motors driven by the actions).
    """

    kind = "gripper"
    position_tolerance_m = 0.002
    stall_speed_mps = 0.005
    stall_time_s = 0.1

    def __init__(self, backend: "SimBackend", name: str, robot: LoadedRobot):
        super().__init__(backend, name)
        self.robot = robot
        self.model = robot.model
        self.max_gap_m = float(robot.model.max_gap_m)
        self.min_gap_m = float(robot.model.min_gap_m)
        self.controller: Any = None
        #: the force limit of the last position command that closed the fingers, N (None: none yet)
        self.closing_force_n: Optional[float] = None
        self._torque_mode = False
        self._body, self._client, self._fj = robot.body, robot.client, robot.finger_joints
        # the finger gap's linear map (LoadedRobot.gap_of): pad travel per joint unit (m/m or m/rad),
        # closed joint positions, closed gap; the Panda's is (1, 1), (0, 0), 0
        self._s, self._c, self._g0 = robot.finger_travel, robot.finger_closed, robot.closed_gap
        self.add_action("gripper_action", SimGripper._serve_gripper_action)

    def gap_m(self) -> float:
        """Finger gap, metres."""
        return self.robot.gap_of(*self.robot.finger_positions())

    def state(self) -> FingerState:
        """Finger positions, gap speed and effort (one ``getJointStates`` call)."""
        s = pb.getJointStates(self._body, self._fj, physicsClientId=self._client)
        (s0, s1), (c0, c1) = self._s, self._c
        effort = 0.5 * (s[0][3] / s0 + s[1][3] / s1)  # per finger along its pad travel, N, +opening
        return FingerState(gap_m=self._g0 + s0 * (s[0][0] - c0) + s1 * (s[1][0] - c1),
                           gap_velocity_mps=s0 * s[0][1] + s1 * s[1][1],
                           joint_effort_n=effort, grip_force_n=max(0.0, -effort), finger_m=(s[0][0], s[1][0]))

    def command_gap(self, gap_m: float, max_force_n: float = -1.0, speed_mps: Optional[float] = None) -> None:
        """Drive both fingers to the gap ``gap_m`` (each pad travels half of it) with position motors.

        Args:
            gap_m: finger gap, metres, clipped to ``[min_gap_m, max_gap_m]``.
            max_force_n: force limit of each finger motor, newtons; negative: the model's default.
            speed_mps: speed of each finger, m/s; default: the model's.
        """
        force = self.model.default_grip_force_n if max_force_n < 0 else min(max_force_n, self.model.max_grip_force_n)
        gap_m = float(np.clip(gap_m, self.min_gap_m, self.max_gap_m))
        targets = self.robot.finger_targets(gap_m)
        speed = self.model.finger_speed_mps if speed_mps is None else speed_mps
        if gap_m < self.gap_m() - 1e-4:
            self.closing_force_n = force   # what a grasp made by this command squeezes with, at most
        self._torque_mode = False
        for j, q, s in zip(self._fj, targets, self._s):
            pb.setJointMotorControl2(self._body, j, pb.POSITION_CONTROL, targetPosition=q, force=force * abs(s),
                                     maxVelocity=speed / abs(s), physicsClientId=self._client)

    def command_effort(self, effort_n: float) -> None:
        """Apply ``effort_n`` newtons on the virtual gap joint (PR2 sign: negative closes).

        Each finger gets ``effort_n`` along its pad travel (virtual work on the gap; on a prismatic
        finger joint that is ``effort_n`` along its axis, on a revolute one ``effort_n`` times its
        lever). The position motors are switched off; :meth:`command_gap` switches them back on.
        """
        if not self._torque_mode:
            for j in self._fj:
                pb.setJointMotorControl2(self._body, j, pb.VELOCITY_CONTROL, force=0.0, physicsClientId=self._client)
            self._torque_mode = True
        s0, s1 = self._s
        pb.setJointMotorControlArray(self._body, self._fj, pb.TORQUE_CONTROL, forces=[effort_n * s0, effort_n * s1],
                                     physicsClientId=self._client)

    def set_controller(self, controller: Any) -> None:
        """Install a gripper controller whose ``step(gripper)`` runs before every physics step.

        The controller owns the finger joints (through :meth:`state`, :meth:`command_effort`,
        :meth:`command_gap`). ``None`` removes it. Actions that should go through the controller
        are registered with :meth:`add_action`.
        """
        self.controller = controller
        self.backend._dirty = True

    @staticmethod
    def _serve_gripper_action(gripper: "SimGripper", handle: GoalHandle) -> Optional[_Execution]:
        goal = handle.goal
        if not isinstance(goal, Pr2GripperCommand):
            raise TypeError(f"gripper_action takes a Pr2GripperCommand, got {type(goal).__name__}")
        if goal.position > gripper.max_gap_m + 1e-9:
            raise ValueError(f"position {goal.position:g} m is wider than the gripper opens ({gripper.max_gap_m:g} m)")
        return _GripperMove(gripper, handle, float(goal.position), float(goal.max_effort))


# ================================================================================================
# World
# ================================================================================================
@dataclass
class Contact:
    """One contact point (PyBullet ``getContactPoints``), names resolved.

    Attributes:
        body_a, body_b: body names; link_a, link_b: link names (``"base"`` for the base).
        position_on_a, position_on_b: contact points, world frame, metres, shape (3,).
        normal_on_b: contact normal from B towards A, world frame, shape (3,).
        distance_m: signed distance (negative: penetration), metres.
        normal_force_n: normal force, newtons.
        friction_force_n: lateral friction force magnitude, newtons.
    """

    body_a: str
    link_a: str
    body_b: str
    link_b: str
    position_on_a: np.ndarray
    position_on_b: np.ndarray
    normal_on_b: np.ndarray
    distance_m: float
    normal_force_n: float
    friction_force_n: float


class SimWorld:
    """Ground-truth world queries of a :class:`SimBackend` (robots, fixtures and objects by name)."""

    def __init__(self, backend: "SimBackend"):
        self._b = weakref.ref(backend)

    @property
    def _backend(self) -> "SimBackend":
        b = self._b()
        if b is None:
            raise BackendError("the backend is gone")
        return b

    def object_names(self) -> list[str]:
        """Names of the movable objects, scene order."""
        return list(self._backend._objects)

    def body_names(self) -> list[str]:
        """Names of every body: robots, fixtures, objects."""
        return list(self._backend._bodies)

    def body_id(self, name: str) -> int:
        """PyBullet body id of a robot, fixture or object.

        Raises:
            KeyError: unknown name; the message lists the known names.
        """
        bodies = self._backend._bodies
        if name not in bodies:
            raise KeyError(f"no body named {name!r}; the scene has {sorted(bodies)}")
        return bodies[name]

    def _object_id(self, name: str) -> int:
        objs = self._backend._objects
        if name not in objs:
            raise KeyError(f"no object named {name!r}; the scene has objects {sorted(objs)}")
        return objs[name]

    def object_pose(self, name: str) -> Pose:
        """(4, 4) pose of the object's base frame, world frame, metres (ground truth).

        Raises:
            KeyError: unknown object.
        """
        b = self._backend
        p, q = pb.getBasePositionAndOrientation(self._object_id(name), physicsClientId=b.client)
        return pose_from_pybullet(p, q)

    def object_velocity(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(linear m/s (3,), angular rad/s (3,)) of the object's base, world frame."""
        lin, ang = pb.getBaseVelocity(self._object_id(name), physicsClientId=self._backend.client)
        return np.array(lin), np.array(ang)

    def link_name(self, body: int, link: int) -> str:
        """URDF name of link index ``link`` of PyBullet body ``body`` (``"base"`` for -1)."""
        if link == -1:
            return "base"
        return pb.getJointInfo(body, link, physicsClientId=self._backend.client)[12].decode()

    def contacts(self, a: str, b: Optional[str] = None) -> list[Contact]:
        """Contact points of body ``a`` (with ``b`` only, when given), after the last physics step."""
        bk = self._backend
        ida = self.body_id(a)
        kw: dict[str, Any] = {"bodyA": ida, "physicsClientId": bk.client}
        if b is not None:
            kw["bodyB"] = self.body_id(b)
        out = []
        names = bk._names
        for c in pb.getContactPoints(**kw):
            f1 = np.array(c[11]) * c[10]
            f2 = np.array(c[13]) * c[12]
            out.append(Contact(
                body_a=names.get(c[1], str(c[1])), link_a=self.link_name(c[1], c[3]),
                body_b=names.get(c[2], str(c[2])), link_b=self.link_name(c[2], c[4]),
                position_on_a=np.array(c[5]), position_on_b=np.array(c[6]), normal_on_b=np.array(c[7]),
                distance_m=float(c[8]), normal_force_n=float(c[9]), friction_force_n=float(np.linalg.norm(f1 + f2))))
        return out

    def in_contact(self, a: str, b: str) -> bool:
        """True when bodies ``a`` and ``b`` touch (after the last physics step)."""
        bk = self._backend
        return bool(pb.getContactPoints(bodyA=self.body_id(a), bodyB=self.body_id(b), physicsClientId=bk.client))


# ================================================================================================
# Backend
# ================================================================================================
#: rolling friction of a fixture (a table, a shelf) whose URDF gives none, m (PyBullet's
#: ``rollingFriction``). Bullet combines a contact's rolling friction as r_a * mu_b + r_b * mu_a,
#: so this gives an object resting on the fixture a rolling resistance of about 0.2 mm (mu 0.8),
#: a wooden table's order, and leaves the finger-object contacts as they were. Without it a
#: cylinder lying on its side rolls off by itself (5 cm in 3 s on a level table, always the same
#: way in the cylinder's frame: Bullet's cylinder contact), away from the grasp chosen for it.
FIXTURE_ROLLING_FRICTION_M = 2.5e-4

#: a movable object that starts deeper than this inside a fixture or another object is a scene
#: mistake the run reports before it starts (m); resting contact and pose noise stay well below it
START_PENETRATION_M = 0.01
#: a movable object that falls further than this while the scene settles was placed in the air, a
#: scene mistake reported before the run starts (m); an object placed a little above its support
#: (what settling is for; a test drops a box from 7.5 cm) is not reported
START_FALL_M = 0.10
#: how a scene places an object, said with the height that fixes a start overlap or a fall
_POSE_IS = "(a primitive's pose is its centre, a URDF object's pose its frame)"

class SimBackend:
    """PyBullet backend (see the module docstring).

    Args:
        scene: the ``scene:`` mapping of a task file, or a parsed :class:`~.scene.SceneSpec`.
        gui: open the PyBullet GUI (only one GUI per process) instead of running headless.
        seed: random seed for pose noise; overrides ``scene.seed``.
        realtime: make :meth:`advance` sleep so simulated time keeps pace with wall time.
        base_dir: folder relative URDF paths are tried against (normally the task file's folder).
        visual_shapes: load the URDFs' visual shapes (meshes, colours) in the physics client; they
            change no physics and cost a quarter of a second per Panda. ``False`` when nothing
            looks at the scene: no GUI, no run log, no 3D viewer (:meth:`scene_model` then draws
            each link's collision shapes). The kinematics shadow never loads them.
        reusable: keep the state after loading so that :meth:`reset` can start another run in the
            same physics clients (a sweep's worker; not with ``gui``).
        reach_requests: what the task must reach (:class:`~.reach_targets.ReachRequest`, from the
            tree's ``CheckReachability`` nodes), for robots with ``base_pose: auto``
            (:mod:`.base_placement`); None: everything the scene has.

    Raises:
        SceneError: invalid scene.
        BackendError: PyBullet cannot connect or a URDF fails to load.

    Attributes:
        name: ``"sim"``.
        arms, grippers: resources by robot name.
        world: :class:`SimWorld`.
        scene: the parsed :class:`~.scene.SceneSpec`.
        client: the PyBullet physics client id.
        physics_hz: physics rate, Hz.
        events: ``{"time_s", "source", "text"}`` dicts appended by the backend and its plug-ins.
        base_placements: robot name -> :class:`~py_trees_manipulation.collision.reachability.BasePlacement`
            of each ``base_pose: auto`` robot (``scene`` holds the pose chosen).
        preflight_failure: why the task cannot succeed, known before anything moves (no base
            position reaches a target), or None; the runner ends the run FAILURE with it before the
            first tick.
    """

    name = "sim"
    #: how long :meth:`advance` waits (wall clock, s) for a motion being planned before it returns
    #: without stepping (so the tree ticks again at the same sim time); None: until the plan is done,
    #: so ``advance(dt)`` always lets ``dt`` of sim time pass (the goal's first feedback already says
    #: "planning")
    clock_hold_wait_s: Optional[float] = None

    def __init__(self, scene: Union[dict, SceneSpec, None], gui: bool = False, seed: Optional[int] = None,
                 realtime: bool = False, base_dir: Optional[str] = None, visual_shapes: bool = True,
                 reusable: bool = False, reach_requests: Optional[Sequence[Any]] = None):
        load_builtin_extensions()  # when this module was imported on its own
        self.scene: SceneSpec = parse_scene(scene if scene is not None else {}, base_dir=base_dir)
        self.seed = self.scene.seed if seed is None else int(seed)
        self.base_placements: dict[str, Any] = {}
        self.preflight_failure: Optional[str] = None
        if any(r.base_auto is not None for r in self.scene.robots):
            from ..collision.base_placement import place_robots

            self.scene, self.base_placements = place_robots(self.scene, reach_requests, seed=self.seed)
            failed = [p for p in self.base_placements.values() if not p.ok]
            if failed:
                self.preflight_failure = "; ".join(f"base_pose auto of {p.robot!r}: {p.failure}" for p in failed)
        self._placement_failure = self.preflight_failure
        self.rng = np.random.default_rng(self.seed)
        self.realtime = realtime
        self.gui = gui
        self.visual_shapes = bool(visual_shapes or gui)
        self.reusable = bool(reusable and not gui)
        self._initial_state: Optional[int] = None
        self.physics_hz = float(self.scene.physics_hz)
        self.dt = 1.0 / self.physics_hz
        self.closed = True
        self.events: list[dict[str, Any]] = []
        self._steps = 0
        self._target_time = 0.0
        self._wall0: Optional[float] = None
        self._pre_hooks: list[StepHook] = []
        self._post_hooks: list[StepHook] = []
        self._step_fns: list[Callable[[], None]] = []
        self._dirty = True
        self._monitor_every = 0
        #: other work that holds the clock until it is answered (a geometric query of the
        #: ``motion_planning`` extension): objects with ``wait(timeout) -> bool`` and ``resolve()``,
        #: which removes itself from this list
        self.clock_holders: list[Any] = []
        #: resources with goals sent since the backend last ran (see ``_SimResource.send_goal``)
        self._incoming: list[Any] = []
        self._target: Optional[str] = None
        self._bodies: dict[str, int] = {}
        self._objects: dict[str, int] = {}
        self._names: dict[int, str] = {}
        self.arms: dict[str, SimArm] = {}
        self.grippers: dict[str, SimGripper] = {}
        self.world = SimWorld(self)
        self.client = pb.connect(pb.GUI if gui else pb.DIRECT)
        if self.client < 0:
            raise BackendError("PyBullet could not connect" + (" a GUI (is a display available?)" if gui else ""))
        self.closed = False
        self._kin_client = pb.connect(pb.DIRECT)
        try:
            self._build()
        except Exception:
            self.close()
            raise

    # ---- construction ----------------------------------------------------------------------------
    def _build(self) -> None:
        c = self.client
        sc = self.scene
        for cid in (c, self._kin_client):
            pb.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=cid)
        if self.gui:
            pb.configureDebugVisualizer(pb.COV_ENABLE_RENDERING, 0, physicsClientId=c)
            pb.configureDebugVisualizer(pb.COV_ENABLE_GUI, 0, physicsClientId=c)
        pb.setGravity(*sc.gravity, physicsClientId=c)
        pb.setPhysicsEngineParameter(fixedTimeStep=self.dt, numSolverIterations=sc.solver_iterations,
                                     numSubSteps=0, physicsClientId=c)
        for f in sc.fixtures:
            p, q = pq_from_pose(f.pose)
            body = self._load_urdf(f.urdf_path, p, q, fixed=True, scale=f.scale, what=f"fixture {f.name!r}")
            for link in range(-1, pb.getNumJoints(body, physicsClientId=c)):
                if pb.getDynamicsInfo(body, link, physicsClientId=c)[6] == 0.0:  # rolling friction unset
                    pb.changeDynamics(body, link, rollingFriction=FIXTURE_ROLLING_FRICTION_M, physicsClientId=c)
            self._register(f.name, body)
        for r in sc.robots:
            self._build_robot(r)
        # what reset() returns to: fixtures and robots loaded, nothing stepped (a reusable backend only)
        self._initial_state = pb.saveState(physicsClientId=c) if self.reusable else None
        for o in sc.objects:
            self._build_object(o)
        self.extensions: dict[str, Any] = {}
        for ext_name, (section, factory) in _EXTENSIONS.items():
            if section is None or section in sc.extra:
                self.extensions[ext_name] = factory(self, sc.extra.get(section) if section else None)
        if self.gui:
            pb.configureDebugVisualizer(pb.COV_ENABLE_RENDERING, 1, physicsClientId=c)
            pb.resetDebugVisualizerCamera(1.4, 50, -30, [0.4, 0.0, 0.6], physicsClientId=c)
        self._check_start_overlaps()
        self._settle()
        self._init_metrics()

    def _check_start_overlaps(self) -> None:
        """Set :attr:`preflight_failure` when a movable object starts more than
        :data:`START_PENETRATION_M` inside a fixture or another object: physics would throw it out
        when the scene settles (a box placed by its base height, where a primitive's pose is its
        centre, falls through the table). The message names both bodies, the depth and the height
        that clears it."""
        c = self.client
        placed = [(f.name, self._bodies[f.name]) for f in self.scene.fixtures if f.name in self._bodies]
        movable = {o.name for o in self.scene.objects if not o.fixed}
        found = []
        for o in self.scene.objects:
            body = self._objects.get(o.name)
            if body is not None and o.name in movable:
                for other, ob in placed:
                    pts = pb.getClosestPoints(body, ob, 0.0, physicsClientId=c)
                    depth = -min((pt[8] for pt in pts), default=0.0)
                    if depth > START_PENETRATION_M:
                        z = pb.getBasePositionAndOrientation(body, physicsClientId=c)[0][2]
                        found.append(f"object {o.name!r} starts {depth * 100:.1f} cm inside {other!r}: raise it to "
                                     f"z = {z + depth + 0.001:.3f} m {_POSE_IS}")
            if body is not None:
                placed.append((o.name, body))
        self.preflight_failure = "; ".join(x for x in (self._placement_failure, *found) if x) or None

    def _settle(self) -> None:
        # Let objects come to rest before the clock starts (not counted in now()). The pre-step hooks
        # run too: articulated objects (door latch and handle spring) need them every step.
        c = self.client
        start = self._start_heights()
        for _ in range(int(round(self.scene.settle_s * self.physics_hz))):
            for h in self._pre_hooks:
                h(self)
            pb.stepSimulation(physicsClientId=c)
        falls = self._start_falls(start)
        if falls:
            self.preflight_failure = "; ".join(x for x in (self.preflight_failure, *falls) if x)

    def _start_heights(self) -> dict[str, tuple[float, float, str]]:
        """For each movable object before settling: (base z, m; the gap under its lowest point to
        the first body below, m, ``inf`` for none; that body's name). The gap is the least of five
        vertical rays from under its bounding box (the centre and the corners)."""
        c = self.client
        out: dict[str, tuple[float, float, str]] = {}
        for o in self.scene.objects:
            body = self._objects.get(o.name)
            if body is None or o.fixed:
                continue
            lo, hi = pb.getAABB(body, -1, physicsClientId=c)
            for link in range(pb.getNumJoints(body, physicsClientId=c)):
                a, b = pb.getAABB(body, link, physicsClientId=c)
                lo, hi = np.minimum(lo, a), np.maximum(hi, b)
            x0, y0, z_lo = float(lo[0]), float(lo[1]), float(lo[2]) - 1e-4
            x1, y1 = float(hi[0]), float(hi[1])
            xy = [((x0 + x1) / 2, (y0 + y1) / 2), (x0, y0), (x0, y1), (x1, y0), (x1, y1)]
            hits = pb.rayTestBatch([(x, y, z_lo) for x, y in xy], [(x, y, z_lo - 10.0) for x, y in xy],
                                   physicsClientId=c)
            gap, under = math.inf, ""
            for h in hits:
                if h[0] >= 0 and h[0] != body and 10.0 * h[2] < gap:
                    gap, under = 10.0 * h[2], self._names.get(h[0], f"body {h[0]}")
            z = pb.getBasePositionAndOrientation(body, physicsClientId=c)[0][2]
            out[o.name] = (float(z), gap, under)
        return out

    def _start_falls(self, start: dict[str, tuple[float, float, str]]) -> list[str]:
        """The objects that fell more than :data:`START_FALL_M` while the scene settled: placed in
        the air (hanging on something, they do not fall and are not reported). Each message says
        how far it fell, what is under it and the height that puts it there."""
        c = self.client
        found = []
        for name, (z0, gap, under) in start.items():
            z1 = pb.getBasePositionAndOrientation(self._objects[name], physicsClientId=c)[0][2]
            if z0 - z1 <= START_FALL_M:
                continue
            where = (f"its lowest point starts {gap:.3f} m above {under!r}: lower it to z = {z0 - gap + 0.001:.3f} m "
                     f"{_POSE_IS}" if math.isfinite(gap)
                     else "there is nothing under it: put it on a fixture (a table) or another object")
            found.append(f"object {name!r} fell {z0 - z1:.3f} m while the scene settled "
                         f"(settle_s {self.scene.settle_s:g}): {where}")
        return found

    def _load_urdf(self, path: str, p: np.ndarray, q: np.ndarray, fixed: bool, scale: float = 1.0,
                   what: str = "", client: Optional[int] = None) -> int:
        flags = pb.URDF_ENABLE_CACHED_GRAPHICS_SHAPES
        if client is not None and client == self._kin_client:  # the kinematics shadow: links and joints only
            flags |= pb.URDF_IGNORE_VISUAL_SHAPES | pb.URDF_IGNORE_COLLISION_SHAPES
        elif not self.visual_shapes:
            flags |= pb.URDF_IGNORE_VISUAL_SHAPES
        try:
            return pb.loadURDF(path, p.tolist(), quat_xyzw_from_wxyz(q), useFixedBase=fixed, globalScaling=scale,
                               flags=flags, physicsClientId=self.client if client is None else client)
        except pb.error as e:
            raise BackendError(f"cannot load {what} from {path}: {e}") from None

    def _register(self, name: str, body: int) -> None:
        self._bodies[name] = body
        self._names[body] = name

    def _build_robot(self, spec: RobotSpec) -> None:
        model = spec.description if spec.description is not None else MODELS[spec.model]
        p, q = pq_from_pose(spec.base_pose)
        body = self._load_urdf(model.urdf, p, q, fixed=True, what=f"robot {spec.name!r}")
        shadow_body = self._load_urdf(model.urdf, p, q, fixed=True, what="kinematics shadow", client=self._kin_client)
        robot = LoadedRobot(self.client, body, model)
        shadow = LoadedRobot(self._kin_client, shadow_body, model)
        q0 = (model.named_configurations[spec.initial_configuration]
              if isinstance(spec.initial_configuration, str) else spec.initial_configuration)
        robot.reset_arm(q0)
        robot.reset_fingers(spec.initial_gap_m / 2)
        shadow.reset_arm(q0)
        for link in robot.finger_links:
            pb.changeDynamics(body, link, lateralFriction=model.finger_lateral_friction, spinningFriction=0.003,
                              frictionAnchor=True, physicsClientId=self.client)
        if model.gripper.coupling == "gear":
            # PyBullet ignores <mimic>: a gear constraint couples the fingers (as PyBullet's Panda demo
            # does); gearRatio -m makes the second joint follow m times the first
            gear = pb.createConstraint(body, robot.finger_joints[0], body, robot.finger_joints[1], pb.JOINT_GEAR,
                                       [1, 0, 0], [0, 0, 0], [0, 0, 0], physicsClientId=self.client)
            pb.changeConstraint(gear, gearRatio=-model.gripper.mimic_multiplier, erp=0.1, maxForce=50,
                                physicsClientId=self.client)
        # the URDF's other <mimic> joints (a linkage keeping the pads parallel): coupled to their
        # leader the same way (the mimic offset is kept from the reset pose), default motors off
        for follower, leader, m, _offset in robot.mimics:
            pb.setJointMotorControl2(body, follower, pb.VELOCITY_CONTROL, force=0.0, physicsClientId=self.client)
            gear = pb.createConstraint(body, leader, body, follower, pb.JOINT_GEAR, [1, 0, 0], [0, 0, 0], [0, 0, 0],
                                       physicsClientId=self.client)
            pb.changeConstraint(gear, gearRatio=-m, erp=0.1, maxForce=50, physicsClientId=self.client)
        self._register(spec.name, body)
        arm = SimArm(self, spec.name, robot, shadow)
        gripper = SimGripper(self, spec.name, robot)
        arm.hold(q0)
        gripper.command_gap(spec.initial_gap_m)
        gripper.closing_force_n = None   # the scene's initial gap is no grasp
        self.arms[spec.name] = arm
        self.grippers[spec.name] = gripper

    def _noisy_pose(self, o: ObjectSpec) -> Pose:
        T = o.pose.copy()
        n = o.pose_noise
        if n.position_m > 0 or n.yaw_deg > 0:
            dx, dy = self.rng.uniform(-n.position_m, n.position_m, size=2) if n.position_m > 0 else (0.0, 0.0)
            yaw = math.radians(self.rng.uniform(-n.yaw_deg, n.yaw_deg)) if n.yaw_deg > 0 else 0.0
            c, s = math.cos(yaw), math.sin(yaw)
            Rz = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])
            T[:3, :3] = Rz @ T[:3, :3]
            T[0, 3] += dx
            T[1, 3] += dy
        return T

    def _build_object(self, o: ObjectSpec) -> None:
        c = self.client
        pose = self._noisy_pose(o)
        p, q = pq_from_pose(pose)
        if o.primitive is not None:
            pr = o.primitive
            color = list(o.color) if o.color else [0.6, 0.6, 0.6, 1.0]
            if pr.shape == "box":
                half = [s / 2 for s in pr.size]  # type: ignore[union-attr]
                col = pb.createCollisionShape(pb.GEOM_BOX, halfExtents=half, physicsClientId=c)
                vis = pb.createVisualShape(pb.GEOM_BOX, halfExtents=half, rgbaColor=color, physicsClientId=c)
            elif pr.shape == "cylinder":
                col = pb.createCollisionShape(pb.GEOM_CYLINDER, radius=pr.radius, height=pr.length, physicsClientId=c)
                vis = pb.createVisualShape(pb.GEOM_CYLINDER, radius=pr.radius, length=pr.length, rgbaColor=color,
                                           physicsClientId=c)
            else:
                col = pb.createCollisionShape(pb.GEOM_SPHERE, radius=pr.radius, physicsClientId=c)
                vis = pb.createVisualShape(pb.GEOM_SPHERE, radius=pr.radius, rgbaColor=color, physicsClientId=c)
            mass = 0.0 if o.fixed else (o.mass_kg if o.mass_kg is not None else 0.1)
            body = pb.createMultiBody(baseMass=mass, baseCollisionShapeIndex=col, baseVisualShapeIndex=vis,
                                      basePosition=p.tolist(), baseOrientation=quat_xyzw_from_wxyz(q), physicsClientId=c)
            dyn: dict[str, Any] = {"lateralFriction": 0.8 if o.lateral_friction is None else o.lateral_friction}
        else:
            body = self._load_urdf(o.urdf_path, p, q, fixed=o.fixed, scale=o.scale, what=f"object {o.name!r}")
            dyn = {}
            if o.lateral_friction is not None:
                dyn["lateralFriction"] = o.lateral_friction
            if o.mass_kg is not None and not o.fixed:
                dyn["mass"] = o.mass_kg
                dyn["localInertiaDiagonal"] = self._box_inertia(body, o.mass_kg)
            if o.color is not None:
                for link in range(-1, pb.getNumJoints(body, physicsClientId=c)):
                    pb.changeVisualShape(body, link, rgbaColor=list(o.color), physicsClientId=c)
        for key, val in (("spinningFriction", o.spinning_friction), ("rollingFriction", o.rolling_friction),
                         ("restitution", o.restitution), ("contactStiffness", o.contact_stiffness),
                         ("contactDamping", o.contact_damping)):
            if val is not None:
                dyn[key] = val
        if dyn:
            pb.changeDynamics(body, -1, physicsClientId=c, **dyn)
        self._register(o.name, body)
        self._objects[o.name] = body

    def _box_inertia(self, body: int, mass: float) -> list[float]:
        """Principal inertia (kg m^2) of a solid box of ``mass`` filling the body's local AABB."""
        c = self.client
        p, q = pb.getBasePositionAndOrientation(body, physicsClientId=c)
        pb.resetBasePositionAndOrientation(body, p, [0, 0, 0, 1], physicsClientId=c)
        lo, hi = pb.getAABB(body, -1, physicsClientId=c)
        pb.resetBasePositionAndOrientation(body, p, q, physicsClientId=c)
        x, y, z = (max(h - l, 1e-3) for l, h in zip(lo, hi))
        return [mass / 12 * (y * y + z * z), mass / 12 * (x * x + z * z), mass / 12 * (x * x + y * y)]

    # ---- clock and stepping ----------------------------------------------------------------------
    def now(self) -> float:
        """Simulation time, seconds since the backend started (``steps / physics_hz``)."""
        return self._steps * self.dt

    @property
    def steps(self) -> int:
        """Physics steps done so far."""
        return self._steps

    def add_step_hook(self, fn: StepHook, before: bool = False) -> Callable[[], None]:
        """Call ``fn(backend)`` on every physics step: after ``stepSimulation`` (default) or, with
        ``before=True``, before it (with the controllers). Returns a function that removes the hook.
        Hooks run in registration order and must be cheap (1000 calls per simulated second)."""
        lst = self._pre_hooks if before else self._post_hooks
        lst.append(fn)
        self._dirty = True

        def remove() -> None:
            if fn in lst:
                lst.remove(fn)
                self._dirty = True
        return remove

    def _rebuild_step_fns(self) -> list[Callable[[], None]]:
        fns: list[Callable[[], None]] = []
        for g in self.grippers.values():
            if g.controller is not None:
                fns.append(lambda g=g: g.controller.step(g))
        for h in self._pre_hooks:
            fns.append(lambda h=h: h(self))
        for r in (*self.arms.values(), *self.grippers.values()):
            if r._active is not None:
                fns.append(r._active.step)
        self._step_fns = fns
        self._dirty = False
        return fns

    def _release_clock(self, timeout: Optional[float]) -> bool:
        """Wait (wall clock, at most ``timeout`` s; None: as long as it takes) for the running
        executions that hold the clock (``holds_clock``: a motion being planned) and let each one
        resolve (start moving, or end its goal). True when none holds the clock any more."""
        holders = [r._active for r in (*self.arms.values(), *self.grippers.values())
                   if r._active is not None and getattr(r._active, "holds_clock", False)]
        holders += list(self.clock_holders)
        if not holders:
            return True
        if timeout is not None:  # a bounded wait: every holder works meanwhile (sim/planning.py _Planning)
            for ex in holders:
                start = getattr(ex, "start", None)
                if start is not None:
                    start()
        t0 = time.monotonic()
        for ex in holders:
            left = None if timeout is None else max(0.0, timeout - (time.monotonic() - t0))
            if ex.wait(left):
                ex.resolve()
        if self.realtime and self._wall0 is not None:
            self._wall0 += time.monotonic() - t0  # sim time stood still: so does the real-time pacing
        return not self.clock_holders and not any(
            r._active is not None and getattr(r._active, "holds_clock", False)
            for r in (*self.arms.values(), *self.grippers.values()))

    def accept_goals(self) -> None:
        """Let the servers take the goals sent since the backend last ran (they are PENDING until
        then; ``advance`` and ``step`` do this first). No physics step passes. Idempotent."""
        incoming = self._incoming
        while incoming:
            incoming.pop(0)._accept()

    def step(self, n: int = 1) -> None:
        """Run ``n`` physics steps (controllers, ``stepSimulation``, post-step hooks). Takes the goals
        sent since the last call, then waits for any motion still being planned (sim time does not
        pass while planning)."""
        if self.closed:
            raise BackendError("the backend is closed")
        if self._incoming:
            self.accept_goals()
        self._release_clock(timeout=None)
        c = self.client
        step_sim = pb.stepSimulation
        post = self._post_hooks
        fns = self._rebuild_step_fns() if self._dirty else self._step_fns
        for _ in range(n):
            for f in fns:
                f()
            step_sim(physicsClientId=c)
            self._steps += 1
            if post:
                for h in post:
                    h(self)
            if self._dirty:
                fns = self._rebuild_step_fns()
            if self._monitor_every and self._steps % self._monitor_every == 0:
                self._monitor()
        self._target_time = max(self._target_time, self.now() - 0.5 * self.dt)

    def advance(self, dt: float) -> None:
        """Let ``dt`` seconds of simulated time pass: whole physics steps up to ``now() + dt`` (the
        remainder carries over to the next call), then one feedback message per active goal. With
        ``realtime=True``, sleeps so simulated time does not run ahead of wall time. A motion still
        being planned is waited for first (wall time; no sim time passes while it plans; see
        :attr:`clock_hold_wait_s`).

        Raises:
            BackendError: the backend is closed.
            ValueError: ``dt`` is negative.
        """
        if dt < 0:
            raise ValueError(f"dt must be >= 0 s, got {dt}")
        if self.closed:
            raise BackendError("the backend is closed")
        if self._incoming:
            self.accept_goals()
        if not self._release_clock(timeout=self.clock_hold_wait_s):
            # an action still prepares (a motion being planned): no sim time passes meanwhile
            for r in (*self.arms.values(), *self.grippers.values()):
                if r._active is not None:
                    r._active.publish_feedback()
            return
        self._target_time += dt
        n = int(math.floor(self._target_time * self.physics_hz + 1e-6)) - self._steps
        if self.realtime and self._wall0 is None:
            self._wall0 = time.monotonic() - self.now()
        if n > 0:
            self.step(n)
        for r in (*self.arms.values(), *self.grippers.values()):
            if r._active is not None:
                r._active.publish_feedback()
        if self.realtime and self._wall0 is not None:
            lag = self._wall0 + self.now() - time.monotonic()
            if lag > 0:
                time.sleep(lag)

    def emit_event(self, source: str, text: str, **fields: Any) -> None:
        """Append an event (``{"time_s", "source", "text", **fields}``) to :attr:`events`; extra
        ``fields`` (plain JSON values, e.g. ``motion_plan``) go into the run log's ``/events``."""
        self.events.append({"time_s": round(self.now(), 6), "source": source, "text": text, **fields})

    def drain_events(self) -> list[dict[str, Any]]:
        """The events emitted since the last call (the runner collects them once per tick)."""
        start = getattr(self, "_drained", 0)
        self._drained = len(self.events)
        return self.events[start:]

    # ---- reuse (sweeps) -------------------------------------------------------------------------------
    def reset(self, seed: Optional[int] = None) -> bool:
        """Start a new run in the same physics clients: the state a new backend of the same scene
        would have, with ``seed``'s pose noise (default: the scene's seed), without loading the
        fixtures and robots again.

        The objects are removed and loaded again exactly as at construction (same body ids, same
        noisy poses for the seed, same dynamics; removing them removes the constraints and collision
        filters that held them), the robots' physics state saved after loading them
        (``saveState``) is restored and their initial motor commands sent again, every extension's
        ``reset_run()`` is called (after the objects are back: it makes the extension what its
        factory would build now), the clock, events and goals are cleared, and the scene settles
        again. A sweep's worker reuses one backend this way; the results are bit for bit those of
        a new backend (tests/scenarios/test_sim_reuse.py compares summaries and exact final
        states). (Teleporting the objects instead of loading them again is not exact: loading
        composes the base frame with other last bits than ``resetBasePositionAndOrientation``,
        and the runs diverge. PyBullet keeps a removed mesh object's collision shapes, about
        0.1 MiB per reload, until the client disconnects: a long-lived user builds a new backend
        now and then, as the sweep's worker does.)

        Returns:
            False, changing nothing, when this backend cannot be reset (not built ``reusable``,
            closed, or an extension without ``reset_run()`` or whose ``resettable`` is false, e.g.
            doors and drawers, bodies loaded after the objects): build a new one then.
        """
        if self.closed or self._initial_state is None:
            return False
        if not all(callable(getattr(ext, "reset_run", None)) and getattr(ext, "resettable", True)
                   for ext in self.extensions.values() if ext is not None):
            return False
        c = self.client
        for r in (*self.arms.values(), *self.grippers.values()):
            ex, r._active = r._active, None
            if ex is not None:
                ex.handle.set_preempted(None, "the backend was reset")
            for _, h in r._incoming:
                h.set_recalled("the backend was reset before taking the goal")
            r._incoming = []
        self._incoming = []
        for g in self.grippers.values():
            g.controller = None
        # the objects go (last loaded first, so that loading them again in scene order hands out
        # the same body ids), the rest of the world goes back to its state after loading
        for name, body in reversed(list(self._objects.items())):
            pb.removeBody(body, physicsClientId=c)
            del self._bodies[name], self._names[body]
        self._objects.clear()
        pb.restoreState(self._initial_state, physicsClientId=c)
        self.seed = self.scene.seed if seed is None else int(seed)
        self.rng = np.random.default_rng(self.seed)
        self.events = []
        self._drained = 0
        self._steps = 0
        self._target_time = 0.0
        self._wall0 = None
        self._pre_hooks.clear()
        self._post_hooks.clear()
        self._dirty = True
        for spec in self.scene.robots:  # the commands _build_robot sends (the joint states are restored)
            arm, gripper = self.arms[spec.name], self.grippers[spec.name]
            model = arm.robot.model
            q0 = (model.named_configurations[spec.initial_configuration]
                  if isinstance(spec.initial_configuration, str) else spec.initial_configuration)
            arm.shadow.reset_arm(q0)
            for follower, _leader, _m, _offset in arm.robot.mimics:
                pb.setJointMotorControl2(arm.robot.body, follower, pb.VELOCITY_CONTROL, force=0.0, physicsClientId=c)
            arm.hold(q0)
            gripper.command_gap(spec.initial_gap_m)
            gripper.closing_force_n = None
        for o in self.scene.objects:
            self._build_object(o)
        for ext in self.extensions.values():
            if ext is not None:
                ext.reset_run()
        self._check_start_overlaps()
        self._settle()
        self._init_metrics()
        return True

    # ---- metrics and telemetry -------------------------------------------------------------------
    def _init_metrics(self) -> None:
        self._target = self.scene.task.target_object
        self._monitor_every = 0
        if self._target is None:
            return
        body = self._objects[self._target]
        p, q = pb.getBasePositionAndOrientation(body, physicsClientId=self.client)
        self._target_body = body
        self._z0 = p[2]
        self._up0 = np.array(pb.getMatrixFromQuaternion(q)).reshape(3, 3)[:, 2]
        self._max_lift = 0.0
        self._fell_after_lift = False
        self._monitor_every = max(1, int(round(self.physics_hz / 100)))  # 100 Hz

    def _monitor(self) -> None:
        c = self.client
        p, _ = pb.getBasePositionAndOrientation(self._target_body, physicsClientId=c)
        lift = p[2] - self._z0
        if lift > self._max_lift:
            self._max_lift = lift
        if self._max_lift > self.scene.task.lift_threshold_m and not self._fell_after_lift:
            v, _ = pb.getBaseVelocity(self._target_body, physicsClientId=c)
            # free fall: fast downwards and touching no robot (a held object is carried down as fast)
            if v[2] < -0.4 and not any(pb.getContactPoints(bodyA=self._target_body, bodyB=a.robot.body,
                                                              physicsClientId=c) for a in self.arms.values()):
                self._fell_after_lift = True
                self.emit_event("sim", f"object {self._target!r} is falling ({v[2]:.2f} m/s)")

    def metrics(self) -> dict[str, Any]:
        """Run metrics.

        Returns:
            ``sim_time_s``; when the scene has a target object (``task.target_object``, or its only
            object): ``target_object``; ``object_lift_m`` (final base z minus initial z, m);
            ``object_max_lift_m`` (sampled at 100 Hz, m); ``object_dropped`` (it was lifted more than
            ``task.lift_threshold_m``, then fell -- downward speed above 0.4 m/s, touching no robot -- and
            is now below that lift; or it ends more than 0.05 m below its start, i.e. off the table);
            ``object_tilt_deg`` (angle between its initial and final z axes, degrees: a box knocked
            over reads about 90); with
            ``task.place_position``: ``place_error_m`` (distance of the final base position to it, m).
        """
        out: dict[str, Any] = {"sim_time_s": round(self.now(), 6)}
        if self.closed:
            return out
        if self._target is not None:
            out.update(self._object_metrics())
        for ext in getattr(self, "extensions", {}).values():
            fn = getattr(ext, "metrics", None)
            if callable(fn):
                out.update(fn())
        return out

    def _object_metrics(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        self._monitor()
        pose = self.world.object_pose(self._target)
        lift = float(pose[2, 3] - self._z0)
        thr = self.scene.task.lift_threshold_m
        tilt = math.degrees(math.acos(float(np.clip(pose[:3, 2] @ self._up0, -1.0, 1.0))))
        out.update({
            "target_object": self._target,
            "object_lift_m": round(lift, 6),
            "object_tilt_deg": round(tilt, 3),
            "object_max_lift_m": round(float(max(self._max_lift, lift)), 6),
            "object_dropped": bool((self._fell_after_lift and lift < thr) or lift < -0.05),
        })
        if self.scene.task.place_position is not None:
            err = np.linalg.norm(pose[:3, 3] - np.array(self.scene.task.place_position))
            out["place_error_m"] = round(float(err), 6)
        return out

    def telemetry(self) -> dict[str, dict[str, Any]]:
        """Named streams of plain values for observers (see :mod:`py_trees_manipulation.observers`).

        ``"gripper/<robot>"``: ``gap_m``, ``effort_n`` (grip force, N); ``"arm/<robot>"``:
        ``tcp_position`` (m, world), ``joint_positions`` (rad); ``"object/<name>"``: ``pose``
        (``{"position": [x, y, z], "orientation": [w, x, y, z]}``, world).
        """
        if self.closed:
            return {}
        out: dict[str, dict[str, Any]] = {}
        for name, g in self.grippers.items():
            st = g.state()
            out[f"gripper/{name}"] = {"gap_m": round(st.gap_m, 6), "effort_n": round(st.grip_force_n, 4)}
        for name, a in self.arms.items():
            out[f"arm/{name}"] = {"tcp_position": [round(float(v), 6) for v in a.robot.tcp_position()],
                                  "joint_positions": [round(v, 6) for v in a.joint_positions()]}
        for name, body in self._objects.items():
            # straight from PyBullet's (x, y, z, w): pose_to_spec(object_pose()) round-trips through
            # a matrix and an eigen-decomposition (~0.2 ms, the run log calls this every tick)
            p, q = pb.getBasePositionAndOrientation(body, physicsClientId=self.client)
            sign = -1.0 if q[3] < 0 else 1.0  # w >= 0, as pq_from_pose
            out[f"object/{name}"] = {"pose": {"position": [round(float(v), 6) for v in p],
                                              "orientation": [round(sign * float(q[i]), 6) for i in (3, 0, 1, 2)]}}
        for ext in getattr(self, "extensions", {}).values():
            fn = getattr(ext, "telemetry", None)
            if callable(fn):
                out.update(fn())
        return out

    @property
    def motion_planning(self) -> Any:
        """The backend's planning service (the ``motion_planning`` extension,
        :class:`~.planning.SimMotionPlanning`): its collision world and arm planner, for behaviours
        that check geometry before moving (``query``; see :class:`~py_trees_manipulation.backend.PlanningService`)."""
        return getattr(self, "extensions", {}).get("motion_planning")

    def scene_model(self) -> Any:
        """Link frames and visual shapes of every body, for 3D viewers (Foxglove):
        a :class:`~.scene3d.SceneModel` (read-only)."""
        from .scene3d import SceneModel

        return SceneModel(self)

    # ---- lifetime --------------------------------------------------------------------------------
    def close(self) -> None:
        """Disconnect both PyBullet clients. Idempotent; running goals end PREEMPTED."""
        if self.closed:
            return
        for r in (*self.arms.values(), *self.grippers.values()):
            ex = r._active
            if ex is not None:
                r._active = None
                ex.handle.set_preempted(None, "the backend was closed")
            for _, h in r._incoming:
                h.set_recalled("the backend was closed before taking the goal")
            r._incoming = []
        self._incoming = []
        for ext in getattr(self, "extensions", {}).values():
            fn = getattr(ext, "close", None)
            if callable(fn):
                fn()
        self.closed = True
        for cid in (self.client, getattr(self, "_kin_client", -1)):
            if cid is not None and cid >= 0:
                try:
                    pb.disconnect(physicsClientId=cid)
                except pb.error:
                    pass

    def __enter__(self) -> "SimBackend":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self) -> str:
        return (f"SimBackend(robots={list(self.arms)}, objects={list(self._objects)}, t={self.now():.3f} s"
                f"{', closed' if self.closed else ''})")
