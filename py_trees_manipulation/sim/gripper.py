"""The simulated parallel gripper: :class:`SimGripper` (finger state, position and effort commands,
an installable 1 kHz controller), :class:`FingerState` and the ``gripper_action`` execution
(:class:`_GripperMove`, pr2_controllers_msgs/Pr2GripperCommand; see :mod:`.backend`'s docstring).

Moved out of :mod:`.backend` (issue 37 item 6).
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from typing import Any, Optional

import numpy as np
import pybullet as pb

from ..bullet.robots import LoadedRobot
from ..msgs.actions import GoalHandle
from ..msgs.motion import Pr2GripperCommand, Pr2GripperCommandResult
from .resources import _Execution, _SimResource

#: the position motors that hold a one-sided linkage's <mimic> joints at their leaders
#: (LoadedRobot.tracked_mimics, SimGripper.track_mimics): largest torque, N m, and position gain
#: (PyBullet's, 0..1)
TRACKED_MIMIC_TORQUE = 50.0
TRACKED_MIMIC_GAIN = 0.5
#: the largest force a tracked linkage's pin (SimGripper._pin_linkage) holds with, N
LINKAGE_PIN_FORCE_N = 1000.0
#: a tracked linkage's other pad (SimGripper.share_force): the lag behind its place, in pad travel,
#: m, at which the driver's force is all taken off (a stiff gear train: a fraction of a millimetre
#: of backlash and tooth bending per side), and the least force its motor holds the pad with, N
#: (its chain's own weight, about 0.8 N of pad force on the xArm, must not open it)
FOLLOWER_LAG_M = 0.001
FOLLOWER_MIN_FORCE_N = 2.0
#: PyBullet constraint-solver iterations per step while a tracked linkage squeezes something (its
#: other pad presses harder than :data:`LOADED_ON_N`; back to the scene's ``solver_iterations``
#: under :data:`LOADED_OFF_N`; 3 / 1.5 N before the linkage's loops were pinned: the pins are two
#: more constraints in the chain, and a 0.6 kg block held with 2.7 N a pad, under the 3 N, opened
#: the driver 0.1 mm at the lift and slid out, examples/place_on_contact.yaml's sweep). The gear train is one stiff chain: the driver's motor, the pad, the
#: object, the other pad and its actuated joint, and each finger's <mimic> joints, all solved
#: together by projected Gauss-Seidel, whose iterations converge along such a chain only slowly. At
#: the scene default (50) the chain does not converge when a load comes on (the arm's acceleration
#: under a hanging can): the driver opened 0.1 mm with its motor under its limit, the pads lost
#: 12.5 -> 9.7 N in 40 ms and the 0.6-1.2 kg slip_servo cans slid out at the lift (xArm 6, issue 33
#: item 5); at 200 the chain holds as a real gear train does (a lead screw, as in the Robotiq 2F-85's
#: transmission, does not back-drive). Bullet stops iterating once the residual is small, so an
#: idle or free-moving gripper costs nothing more; a squeezing one does not converge and runs all
#: 200 (issue 35, benchmarks/bench_scaling.py --only grip, the block of pick_declared_grasp held:
#: 0.87 ms a step against 0.27 ms at 50 iterations and the Panda's 0.11 ms; collision detection
#: 0.013 ms of it, so boxes for the xArm's mesh fingers do not help). Fewer do not hold: at 100,
#: four slip_servo xArm scenarios fail, the can slipping out at the lift or the shake
#: (xarm_0_9_kg_seed_1/_seed_2, xarm_1_0_kg_seed_2, xarm_1_0_kg_held); at 150, three.
LOADED_SOLVER_ITERATIONS = 200
LOADED_ON_N, LOADED_OFF_N = 1.0, 0.5
#: a closing position command's contact approach (SimGripper.approach_speed): within
#: CONTACT_ZONE_M of the first contact the fingers slow to the speed at which their momentum, taken
#: by the contact within one physics step, adds at most IMPACT_FRACTION of the force limit to the
#: fingertip force; never slower than CONTACT_MIN_SPEED_MPS per finger (twice the stall speed on
#: the gap: the action must not read the slow approach as a stall)
CONTACT_ZONE_M = 0.002
IMPACT_FRACTION = 0.04
CONTACT_MIN_SPEED_MPS = 0.005
#: a pad this close (m) to what it closes on touches it
CONTACT_TOUCH_M = 0.0
#: the squeeze of a closing position command once both pads touch (SimGripper._squeeze_ramp): the
#: motors' force limit rises to the command's over SQUEEZE_TIME_S (s). At full
#: speed the fingers sank 0.05 m/s into the contact until the motors saturated and were stopped
#: within one step: the contact threw them back and kicked the hand, one pad reading 112.7 N (a
#: right-hinged door's lever) and 113.6 N (a 5 kg drawer's bar) at a 100 N limit (issue 33 item 4)
SQUEEZE_TIME_S = 0.02
#: a ``gripper_action`` goal that has neither reached its gap nor stalled after this long (s of sim
#: time) is aborted, not stalled (a backstop of the progress test, _GripperMove.stalled: a move
#: across the widest gripper takes under 2 s)
MOVE_TIMEOUT_S = 10.0
#: the load across the grip (SimGripper.share_pad_load) the motors do not give way to, as a
#: fraction of the command's force (the pads' solver noise, a pad a newton above the other)
SHARE_DEADBAND = 0.01


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
        finger_m: the actuated joints' positions: both finger joints (m; rad for revolute fingers),
            or a linkage's driver (one value).
    """

    gap_m: float
    gap_velocity_mps: float
    joint_effort_n: float
    grip_force_n: float
    finger_m: tuple[float, ...]


class _GripperMove(_Execution):
    """pr2_controllers_msgs/Pr2GripperCommand execution (see the module docstring)."""

    CHECK_EVERY = 10

    def __init__(self, gripper: "SimGripper", handle: GoalHandle, target: float, force: float):
        super().__init__(gripper, handle)
        self.gripper = gripper
        self.target = target
        self.force = force
        self.count = 0
        #: the progress test (see :meth:`stalled`): the closest approach to the goal so far (m), the
        #: last check's time (s), and since when the fingers have made no progress (s, None: moving)
        self.closest = math.inf
        self.started = self.checked = gripper.backend.now()
        self.still_since: Optional[float] = None
        gripper.command_gap(target, force)
        #: the fingers close: their speed follows the distance to contact (SimGripper.approach_speed;
        #: two finger joints only, see there)
        self.closing = (not gripper.robot.model.gripper.is_linkage or bool(gripper.robot.linkage_pins)) and target < gripper.gap_m() - gripper.position_tolerance_m
        #: the fingers open: what they touch is refreshed each step (SimGripper.shed_stale_contacts)
        self.opening = target > gripper.gap_m() + 1e-4

    def step(self) -> None:
        self.count += 1
        if self.opening:
            self.gripper.shed_stale_contacts()
        if self.closing:
            self.closing = self.gripper.approach_speed()
        if self.count % self.CHECK_EVERY:
            return
        g = self.gripper
        g.refresh_force_limit()
        st = g.state()
        now = g.backend.now()
        if abs(st.gap_m - self.target) <= g.position_tolerance_m:
            self.handle.set_succeeded(self._result(st, reached=True),
                                      f"reached gap {st.gap_m * 1000:.1f} mm (goal {self.target * 1000:.1f} mm)")
            self.finish()
            return
        if self.stalled(now, st.gap_m):
            self.handle.set_aborted(
                self._result(st, stalled=True),
                f"stalled at gap {st.gap_m * 1000:.1f} mm (goal {self.target * 1000:.1f} mm), "
                f"squeezing with {st.grip_force_n:.1f} N: the fingers are blocked, typically by a grasped object")
            self.finish()
        elif now - self.started >= MOVE_TIMEOUT_S:
            # (a backstop: the progress test ends every move that is not going anywhere)
            self.handle.set_aborted(
                self._result(st),
                f"the fingers neither reached the gap {self.target * 1000:.1f} mm nor stalled within "
                f"{MOVE_TIMEOUT_S:g} s: at {st.gap_m * 1000:.1f} mm, squeezing with {st.grip_force_n:.1f} N")
            self.finish()

    def stalled(self, now: float, gap_m: float) -> bool:
        """The progress test, at each check: the fingers are stalled when, at every check over the
        last ``stall_time_s``, their closest approach to the goal (on the gap, read from the joints'
        positions) came nearer by less than ``stall_speed_mps`` times the time since the check
        before (a speed toward the goal under the stall speed, as PR2's gripper action tests it).

        The test counts only new progress toward the goal, so a gap that jitters, oscillates or is
        pushed back (a squeeze the contact throws back and forth, however far) is no progress, and
        it does not read the joints' velocity: a pinned linkage (the xArm's, ``_pin_linkage``)
        squeezing a drawer's bar at 30 N stood still at 16.18 mm for 300 s while its driver read
        +23 mm/s of opening speed every step (the pins' correction undoes the motion the motor
        makes each step), and the test on that speed never fired."""
        g = self.gripper
        d = abs(gap_m - self.target)
        progress = self.closest - d if math.isfinite(self.closest) else math.inf
        self.closest = min(self.closest, d)
        slow = progress < g.stall_speed_mps * (now - self.checked)
        self.checked = now
        if not slow:
            self.still_since = None
            return False
        if self.still_since is None:
            self.still_since = now
        return now - self.still_since >= g.stall_time_s

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
    """The parallel gripper of a simulated robot: a motor per finger joint, or one driver moving a
    linkage whose ``<mimic>`` joints the backend couples to their leaders.

    The commands act on the actuated joints (``robot.drive_joints``) through the gap's slope
    ``k_i = d gap / d q_i`` (``GripperDescription.drive_slopes``; constant for two finger joints,
    read from the linkage's kinematics at the driver's position for a linkage) and the force slope
    ``s_i`` (``drive_force_slopes``: the same for two finger joints; a linkage's driver carries its
    own pad's load, ``s`` that pad's travel per unit): a finger force ``F`` is a motor force
    (torque) ``F |s_i|``, a motor effort ``e_i`` a finger force ``e_i / s_i``, a finger speed ``v``
    a joint speed ``(2 v / n) / |k_i|`` with ``n`` actuated joints.

    A linkage is one motor: the other pad's actuated joint (``robot.follower_actuator``) is held at
    its place with the same force limit, and the driver's force falls as that pad is pushed back
    (:meth:`share_force`), so neither pad squeezes past the limit (a stiff position motor there
    closed the xArm's second pad onto the object at 58 N under its 30 N limit).

    Attributes:
        name: the robot's name in the scene.
        robot: the :class:`~.robots.LoadedRobot`.
        max_gap_m: fully open gap, metres.
        position_tolerance_m: ``gripper_action`` succeeds within this of the commanded gap, metres.
        stall_speed_mps, stall_time_s: the fingers count as stalled when their speed toward the
            goal (new progress of their closest approach, read from the positions, not the joints'
            velocity; ``_GripperMove.stalled``) stays below ``stall_speed_mps`` for ``stall_time_s``.
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
        # the actuated joints: both finger joints, or a linkage's driver
        self._body, self._client, self._fj = robot.body, robot.client, robot.drive_joints
        self._linkage = robot.model.gripper.is_linkage
        # two finger joints: the finger gap's linear map (LoadedRobot.gap_of): pad travel per joint
        # unit (m/m or m/rad), closed joint positions, closed gap; the Panda's is (1, 1), (0, 0), 0
        self._s, self._c, self._g0 = robot.finger_travel, robot.finger_closed, robot.closed_gap
        # the last position command (targets, finger force N, finger speed m/s): a linkage's motor
        # force follows the slope as the driver turns (refresh_force_limit)
        self._command: Optional[tuple[tuple[float, ...], float, float]] = None
        self._mimic_args: Any = None
        self._mimic_leaders: list[int] = []
        #: a tracked linkage: how far the other pad trails its place, m (see :meth:`share_force`)
        self.follower_lag_m = 0.0
        #: a tracked linkage squeezes something (its other pad pushes harder than LOADED_ON_N): the
        #: backend solves the physics with LOADED_SOLVER_ITERATIONS (:meth:`SimBackend.gripper_loaded`)
        self.loaded = False
        self._force_limit_n = float(robot.model.default_grip_force_n)   # the gripper's force limit now, N
        self._applied_force = 0.0   # the driver's finger force limit last applied (position motors), N
        self._follower_slot = -1
        self._follower_closing = 1.0   # +1 / -1: the way the other pad's actuated joint closes
        self._opening = False          # the last position command opens the fingers
        self._moving_mass: Optional[float] = None   # kg, see contact_speed_mps
        self._moving_links: Optional[list[int]] = None   # see moving_links
        self._full_speed = float(robot.model.finger_speed_mps)   # the last position command's finger speed, m/s
        self._pad_normals = [tuple(p.pose[:3, 1]) for p in robot.model.gripper.pads]  # pad normals (y), link frame
        #: two finger motors: the finger force each presses with now, N (None: the command's; see
        #: :meth:`share_pad_load`)
        self.pad_share_n: Optional[float] = None
        # the squeeze (_squeeze_ramp): when both pads touched (s) and the force then (N); the
        # motors' force limit on the ramp now, N (None: off it)
        self._squeeze: Optional[tuple[float, float]] = None
        self._ramp_n: Optional[float] = None
        self.add_action("gripper_action", SimGripper._serve_gripper_action)

    def track_mimics(self) -> None:
        """Before each physics step (``robot.tracked_mimics``): every ``<mimic>`` joint's position
        motor to ``multiplier x leader + offset``, leaders read first (a mimic of a mimic follows
        its leader's target), with :data:`TRACKED_MIMIC_TORQUE`; the other pad's actuated joint
        (``robot.follower_actuator``) with the torque of the gripper's force limit instead, and
        how far it trails its place (:attr:`follower_lag_m`), which takes force off the driver
        (:meth:`share_force`)."""
        r, c = self.robot, self._client
        mimics = r.mimics
        if self._mimic_args is None:
            passive = self._pin_linkage()
            driven = [f for f, _l, _m, _o in mimics if f not in passive]
            self._mimic_args = (driven, [TRACKED_MIMIC_TORQUE] * len(driven), [TRACKED_MIMIC_GAIN] * len(driven))
            self._mimic_leaders = sorted({lead for _f, lead, _m, _o in mimics} - {f for f, _l, _m, _o in mimics})
            if r.follower_actuator is not None:
                fa = r.follower_actuator[0]
                self._follower_slot = driven.index(fa)
                self._mimic_leaders.append(fa)
                # the sign of the other pad's actuated joint's closing motion (the driver closes the
                # way its gap slope falls; the joint turns its multiplier times the driver)
                slope = self.model.gripper.drive_slopes(self.robot.finger_positions())[0]
                self._follower_closing = -math.copysign(1.0, slope) * math.copysign(1.0, r.follower_actuator[1])
        joints, forces, gains = self._mimic_args
        states = pb.getJointStates(self._body, self._mimic_leaders, physicsClientId=c)
        q = {j: st[0] for j, st in zip(self._mimic_leaders, states)}
        for f, lead, m, off in mimics:
            q[f] = m * q[lead] + off
        targets = [q[f] for f in joints]
        if r.follower_actuator is not None:
            slot = self._follower_slot
            actual = states[-1][0]
            forces[slot] = self._follower_torque(actual, targets[slot], abs(states[-1][3]) / forces[slot])
            if self._opening and not self._torque_mode and self._follower_closing * (targets[slot] - actual) > 0.0:
                # opening: the one motor turns back, and the pad that trails its place (it met the
                # object first) opens from where it is, as the driver's pad does; held to its place
                # it closed after the object as the driver's pad let go, and pushed a mug it was setting
                # down into the table (17.7 N against 8.9, examples/pick_and_place.yaml on the xArm)
                targets[slot] = actual
        pb.setJointMotorControlArray(self._body, joints, pb.POSITION_CONTROL, targetPositions=targets, forces=forces,
                                     positionGains=gains, physicsClientId=c)

    def _pin_linkage(self) -> set[int]:
        """Close a tracked linkage's four-bar loops (``robot.linkage_pins``), once: a point-to-point
        constraint pins each inner knuckle to its fingertip where the real linkage's pin is, and the
        two joints it makes passive are let go (no motor). Returns those joints' indices.

        The URDF leaves the loop open, and a position motor holding the fingertip joint at its
        ``<mimic>`` place made the knuckle and the fingertip one rigid lever about the driver's
        axis: the driver's torque then reached the pad through the lever of the point where the
        object pressed, and a pad pressing by its base end (nearer the axis) pressed harder than the
        force limit (examples/heavy_pick_graspfix.yaml on the xArm: 34.9 N at 30 N). Pinned, the pad
        translates as the real four-bar's does, the inner knuckle carries the moment, and the
        motor's torque limit bounds the pad's force through the linkage's ratio (``own_travel``,
        the pad's travel per unit of the driver) wherever on the pad the object presses."""
        r, c, body = self.robot, self._client, self._body
        passive: set[int] = set()
        for link, pad_link, in_link, in_pad, joints in r.linkage_pins:
            frames = []
            for lk, p in ((link, in_link), (pad_link, in_pad)):
                info = pb.getDynamicsInfo(body, lk, physicsClientId=c)   # the inertial frame in the link frame
                inv_p, inv_q = pb.invertTransform(info[3], info[4])
                frames.append(pb.multiplyTransforms(inv_p, inv_q, [float(v) for v in p], [0, 0, 0, 1])[0])
            cid = pb.createConstraint(body, link, body, pad_link, pb.JOINT_POINT2POINT, [0, 0, 0],
                                      frames[0], frames[1], physicsClientId=c)
            pb.changeConstraint(cid, maxForce=LINKAGE_PIN_FORCE_N, physicsClientId=c)
            passive.update(joints)
        for j in passive:
            pb.setJointMotorControl2(body, j, pb.VELOCITY_CONTROL, force=0.0, physicsClientId=c)
        return passive

    def _follower_torque(self, actual: float, target: float, load: float) -> float:
        """The other pad's actuated joint (a tracked linkage): how far it is pushed back behind
        ``target`` (rad) in pad travel (:attr:`follower_lag_m`; counted as its motor's torque
        ``load``, a fraction of its limit, rises from 0.9 to 1: a pad that only trails its moving
        place is not pushed back), and its motor's torque limit, N m: the gripper's force limit
        through that pad's lever (``GripperDescription.drive_force_slopes(q, pad)`` per unit of the
        driver, over the joint's multiplier). Under a position command, the driver's force limit
        follows the lag at once."""
        _j, mult = self.robot.follower_actuator  # type: ignore[misc]
        gd = self.model.gripper
        lever = gd.drive_force_slopes(self.robot.finger_positions(), pad=1 - int(gd.driver_pad or 0))[0] / mult
        pushed = min(1.0, max(0.0, (load - 0.9) / 0.1))
        limit = max(self._force_limit_n, FOLLOWER_MIN_FORCE_N)
        pad_force = load * limit          # the other pad's push, N (its motor's torque over its lever)
        if pad_force > LOADED_ON_N and not self.loaded:
            self.loaded = True
            self.backend.gripper_loaded(self, True)
        elif pad_force < LOADED_OFF_N and self.loaded:
            self.loaded = False
            self.backend.gripper_loaded(self, False)
        self.follower_lag_m = pushed * max(0.0, lever * (actual - target))   # + : the pad more open than its place
        if self._command is not None and not self._torque_mode:
            force = self._command[1]
            if abs(self.share_force(force) - self._applied_force) > 0.01 * max(force, 1.0):
                self._apply_position_command()
        return limit * abs(lever)

    def share_force(self, force_n: float) -> float:
        """The finger force the actuated joints may push with when the gripper's force limit is
        ``force_n`` (N), and (a tracked linkage) that limit for the other pad's actuated joint.

        A linkage gripper has one motor: its gear train turns both pads' chains, so a pad that
        meets the object first cannot close further while the other still moves, and neither pad
        is squeezed past the motor's force limit. The simulator drives the driver's pad with the
        force limit and holds the other pad's actuated joint at its place (``<mimic>`` of the
        driver) with a motor limited to the same force; when that pad is pushed back (it met the
        object first, or the object is pushed against it) the driver's force falls with its lag,
        to 0 at :data:`FOLLOWER_LAG_M` (a stiff gear train), so the driver stalls as the one motor
        does. Two finger motors: ``force_n``."""
        self._force_limit_n = force_n
        if self.robot.follower_actuator is None:
            return force_n
        return max(0.0, force_n * (1.0 - self.follower_lag_m / FOLLOWER_LAG_M))

    @property
    def commanded_force_n(self) -> float:
        """The finger force of the last position command (``command_gap``), N (0 before any)."""
        return float(self._command[1]) if self._command is not None else 0.0

    def gap_m(self) -> float:
        """Finger gap, metres."""
        return self.robot.gap_of(*self.robot.finger_positions())

    def state(self) -> FingerState:
        """Finger positions, gap speed and effort (one ``getJointStates`` call)."""
        s = pb.getJointStates(self._body, self._fj, physicsClientId=self._client)
        if self._linkage:
            q, v, e = s[0][0], s[0][1], s[0][3]
            gd = self.model.gripper
            effort = e / gd.drive_force_slopes((q,))[0]   # per finger along its pad travel, N, +opening
            return FingerState(gap_m=self.robot.gap_of(q), gap_velocity_mps=gd.drive_slopes((q,))[0] * v,
                               joint_effort_n=effort, grip_force_n=max(0.0, -effort), finger_m=(q,))
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
        self._opening = gap_m > self.gap_m() + 1e-4
        self.pad_share_n = None
        self._squeeze, self._ramp_n = None, None
        self._torque_mode = False
        self._command = (tuple(targets), float(force), float(speed))
        self._full_speed = float(speed)
        self._apply_position_command()

    def _apply_position_command(self) -> None:
        assert self._command is not None
        targets, force, speed = self._command
        if self._linkage:
            q = self.robot.finger_positions()
            gd = self.model.gripper
            slopes, force_slopes = gd.drive_slopes(q), gd.drive_force_slopes(q)
        else:
            slopes = force_slopes = self._s
        share = 2.0 / len(self._fj)                # gap speed per finger speed, per actuated joint
        force = self._applied_force = self.share_force(force)
        if self.pad_share_n is not None and not self._linkage:
            force = min(force, self.pad_share_n)
        if self._ramp_n is not None and not self._linkage:
            force = min(force, self._ramp_n)
        for j, q, s, fs in zip(self._fj, targets, slopes, force_slopes):
            pb.setJointMotorControl2(self._body, j, pb.POSITION_CONTROL, targetPosition=q, force=force * abs(fs),
                                     maxVelocity=share * speed / abs(s), physicsClientId=self._client)

    def moving_links(self) -> list[int]:
        """The links the finger motors move (those an actuated or ``<mimic>`` joint carries), cached."""
        if self._moving_links is None:
            r, c = self.robot, self._client
            roots = set(self._fj) | {f for f, _l, _m, _o in r.mimics}
            n = pb.getNumJoints(self._body, physicsClientId=c)
            parent = [pb.getJointInfo(self._body, j, physicsClientId=c)[16] for j in range(n)]
            out = []
            for link in range(n):
                k = link
                while k >= 0 and k not in roots:
                    k = parent[k]
                if k >= 0:
                    out.append(link)
            self._moving_links = out
        return self._moving_links

    def shed_stale_contacts(self) -> int:
        """While the fingers open: drop the contact points Bullet keeps between the fingers and
        whatever they touch, so that the next step finds only the contacts the geometry has now.
        Returns how many finger/body pairs were refreshed.

        Bullet keeps each contact point of a pair with the normal it was found with, as long as the
        point stays within reach. A soft pad pressed 0.3-0.8 mm into a box near its edge gets points
        whose normals point across the edge (robot -> box [0.74, 0.06, 0.67] beside [-0.97, -0.23,
        -0.07] on the same pad: the WSG 50 setting a box down, yawed 3.9 deg to the pad, issue 33
        item 4). Those points push the box both ways, a clamp, and as the box follows the finger
        they stay as deep as they were: the opening finger dragged the released box 2.9 cm along
        the table, the retreat lifted it 1 cm on them and dropped it (36.8 N against the 8 N place
        guard). A real pad only pushes; refreshed each step, the opening finger leaves the box
        where it was set down (0.8 mm: it settles on the table as the pads let go). Disabling a pair's collision drops its
        manifold at once; re-enabled in the same call, the next step collides it afresh."""
        body, c = self._body, self._client
        pairs: set[tuple[int, int, int]] = set()
        for link in self.moving_links():
            for p in pb.getContactPoints(bodyA=body, linkIndexA=link, physicsClientId=c):
                if p[2] != body:
                    pairs.add((link, p[2], p[4]))
        for link, other, other_link in pairs:
            pb.setCollisionFilterPair(body, other, link, other_link, 0, physicsClientId=c)
            pb.setCollisionFilterPair(body, other, link, other_link, 1, physicsClientId=c)
        return len(pairs)

    def moving_mass_kg(self) -> float:
        """The mass the finger motors move, kg: every link that an actuated or ``<mimic>`` joint
        carries (both fingers of a geared pair, whose coupling stops them together; a linkage's
        whole chain), from the URDF's inertial masses."""
        if self._moving_mass is None:
            c = self._client
            self._moving_mass = sum(float(pb.getDynamicsInfo(self._body, link, physicsClientId=c)[0])
                                    for link in self.moving_links())
        return self._moving_mass

    def contact_speed_mps(self, force_n: float) -> float:
        """The finger speed at which a closing command meets the object, m/s per finger.

        The fingers' contact (stiffness 3e4 N/m, damping 1000 N s/m: a 0.1 kg finger stops within
        0.1 ms) takes their momentum ``m v`` within one physics step ``dt``, adding ``m v / dt`` to
        the force the motor presses with in that step: the WSG 50 at 0.05 m/s read 47 N on a box
        it closed on with 40 N. So the fingers meet it at ``v = IMPACT_FRACTION F dt / m`` (``F``:
        the command's force limit, N; ``m``: :meth:`moving_mass_kg`), at least
        :data:`CONTACT_MIN_SPEED_MPS` and at most the command's speed: a gentle grip is approached
        more slowly, as Weiss sets its grippers' finger speed from the gripping force "to minimize
        the gripping impulse", and as the WSG 50 manual advises a lower grasping speed "to limit the
        impact due to the mass of the gripper fingers" (Weiss Robotics, WSG command set reference,
        GRASP; IEG 55/76 manual, 5.1.2)."""
        m = self.moving_mass_kg()
        v = IMPACT_FRACTION * force_n * self.backend.dt / m if m > 0 else math.inf
        return min(self._full_speed, max(CONTACT_MIN_SPEED_MPS, v))

    def contact_distances_m(self, zone_m: float = CONTACT_ZONE_M) -> list[Optional[float]]:
        """How far each pad is from what it will close on, m (pad order): the least distance
        between the finger link and any body other than the robot in front of its pad (the closest
        points' normal within 45 degrees of the pad's normal), None when nothing is within
        ``zone_m``, 0 or less when touching (a contact point with a normal force, or Bullet's signed
        distance, negative in contact). A pad held off its contact by the position motor's
        ``maxVelocity`` presses only as hard as that speed lets it (PyBullet's motor is a velocity
        constraint), so a pad counts as touching as soon as it presses. As the WSG 50's GRASP command is given the part's nominal
        width, the simulated gripper reads where the part is from the geometry between its pads."""
        body, c = self._body, self._client
        out: list[Optional[float]] = []
        for link, y in zip(self.robot.finger_links, self._pad_normals):
            best: Optional[float] = None
            lo, hi = pb.getAABB(body, link, physicsClientId=c)
            near = pb.getOverlappingObjects([a - zone_m for a in lo], [b + zone_m for b in hi], physicsClientId=c)
            if near and any(p[9] > 0.0 and p[2] != body
                            for p in pb.getContactPoints(bodyA=body, linkIndexA=link, physicsClientId=c)):
                out.append(0.0)   # pressing on something (Bullet keeps a contact a little apart: its margin)
                continue
            if near:
                R = pb.getMatrixFromQuaternion(pb.getLinkState(body, link, physicsClientId=c)[5])
                # the pad's normal in the world (y of the pad frame: from the pad face into the finger)
                ny = (R[0] * y[0] + R[1] * y[1] + R[2] * y[2], R[3] * y[0] + R[4] * y[1] + R[5] * y[2],
                      R[6] * y[0] + R[7] * y[1] + R[8] * y[2])
                for other, other_link in near:
                    if other == body:
                        continue
                    for p in pb.getClosestPoints(body, other, zone_m, linkIndexA=link, linkIndexB=other_link,
                                                 physicsClientId=c):
                        n = p[7]   # from the other body into the finger
                        if n[0] * ny[0] + n[1] * ny[1] + n[2] * ny[2] < 0.7:
                            continue
                        d = float(p[8])
                        if best is None or d < best:
                            best = d
            out.append(best)
        return out

    def approach_speed(self) -> bool:
        """One step of a closing position command's approach: while a pad that does not touch yet
        is within :data:`CONTACT_ZONE_M` of what it closes on (:meth:`contact_distances_m`), the
        finger speed falls linearly with that distance from the command's to
        :meth:`contact_speed_mps` at contact; once both pads touch (or nothing is near) the motors
        get the command's speed back, and press with its force limit (the contact's damping,
        not the fingers' momentum, then bounds how fast the squeeze rises to it). Returns False
        when there is no position command to govern (the controller owns the motors).

        Two finger joints (the Panda's, the WSG 50's) and a pinned linkage (the xArm's,
        :meth:`_pin_linkage`: one stiff chain, whose closing at full speed met a box standing on the
        table with 35.2 N at 30 N on examples/regrasp.yaml). A tracked linkage left open meets the
        object through its chain's position-tracked ``<mimic>`` joints, which spread the contact
        over several steps, and slowing its driver let the held pad (:meth:`share_force`) meet the
        mug first and press it 35.8 N: it is not slowed."""
        cmd = self._command
        if cmd is None or self._torque_mode:
            return False
        targets, force, speed = cmd
        full = self._full_speed
        distances = self.contact_distances_m()
        pending = [d for d in distances if d is not None and d > CONTACT_TOUCH_M]
        v = full
        if pending:
            slow = self.contact_speed_mps(force)
            v = slow + (full - slow) * min(1.0, min(pending) / CONTACT_ZONE_M)
        elif (not self._linkage and force > 0 and all(d is not None and d <= CONTACT_TOUCH_M for d in distances)
              and self._on_handle()):
            self._squeeze_ramp(force)
        if abs(v - speed) > 1e-4:
            self._command = (targets, force, v)
            self._apply_position_command()
        return True

    def _on_handle(self) -> bool:
        """A finger presses on a door's or a drawer's handle (the ``doors`` extension's bodies): the
        squeeze ramp (:meth:`_squeeze_ramp`) is for handles only, as :meth:`share_pad_load` is. On
        every grasp it moved the held objects' figures both ways (the iiwa's 1 kg mug 43.1 -> 44.8 N
        against the 44 N of its 40 N grip + 10 %; its heavy box 44.3 -> 41.0 N)."""
        handles = getattr(self.backend.extensions.get("doors"), "handle_bodies", None)
        if not handles:
            return False
        body, c = self._body, self._client
        return any(p[2] in handles for link in self.robot.finger_links
                   for p in pb.getContactPoints(bodyA=body, linkIndexA=link, physicsClientId=c))

    def pressing_on(self) -> list[tuple[str, bool]]:
        """What the gripper's finger-carried links press on now (a contact with a normal force, after
        the last physics step): ``[(body name, static)]``, other bodies than the robot, each once;
        ``static`` for fixtures and fixed objects without a moving joint (a table, a shelf board; not
        a door's lever or a drawer's bar). ``GripperCommand`` with ``expect_object`` reads it when the
        fingers stall: stalled on the table, they hold nothing."""
        body, c = self._body, self._client
        links = set(self.robot.finger_links) | set(self.moving_links())
        static = set(self.backend._static_bodies())
        names = self.backend._names
        seen: dict[int, bool] = {}
        for p in pb.getContactPoints(bodyA=body, physicsClientId=c):
            if p[3] in links and p[2] != body and p[9] > 0.0 and p[2] not in seen:
                seen[p[2]] = p[2] in static
        return [(names.get(b, str(b)), st) for b, st in seen.items()]

    def pad_loads_n(self, bodies: set[int]) -> tuple[float, ...]:
        """How hard each pad is pressed by ``bodies`` now, N (pad order): every contact's whole force
        on the finger (normal and friction), summed and read along the pad's normal, 0 when it pulls
        (as the tactile pads read it: ``tactile_gripper._pressing``)."""
        body, c = self._body, self._client
        out = []
        links = self.robot.finger_links
        for st, link, y in zip(pb.getLinkStates(body, links, physicsClientId=c), links, self._pad_normals):
            fx = fy = fz = 0.0
            for p in pb.getContactPoints(bodyA=body, linkIndexA=link, physicsClientId=c):
                if p[2] not in bodies:
                    continue
                fn, n, f1, d1, f2, d2 = p[9], p[7], p[10], p[11], p[12], p[13]
                fx += fn * n[0] + f1 * d1[0] + f2 * d2[0]
                fy += fn * n[1] + f1 * d1[1] + f2 * d2[1]
                fz += fn * n[2] + f1 * d1[2] + f2 * d2[2]
            if fx == fy == fz == 0.0:
                out.append(0.0)
                continue
            R = pb.getMatrixFromQuaternion(st[5])
            ny = (R[0] * y[0] + R[1] * y[1] + R[2] * y[2], R[3] * y[0] + R[4] * y[1] + R[5] * y[2],
                  R[6] * y[0] + R[7] * y[1] + R[8] * y[2])
            out.append(max(0.0, fx * ny[0] + fy * ny[1] + fz * ny[2]))
        return tuple(out)

    def share_pad_load(self) -> None:
        """Before every physics step, two finger motors under a position command that squeezes a
        door's or a drawer's handle: each motor presses with the command's force less the load the
        coupling carries from one pad to the other, so that neither pad is pressed harder than the
        command's force (its ``max_effort``, at most the gripper's force limit).

        The fingers are coupled (a gear, as the Franka Hand's and the WSG 50's one drive moves both):
        a load across the grip (the arm's pull on a door's lever or a drawer's bar that is not along
        the fingers' faces, a lever's return spring, a hanging weight) is carried by the coupling and
        adds half of itself to one pad and takes it off the other, whatever the motors press with.
        On the Panda squeezing a stiff door's lever with 100 N, the arc's pull pressed one pad 121.7 N
        and the other 78.3 N (issue 33 item 4). The excess ``e = (heavier - lighter) / 2``, read on
        the pads every step, is taken off the motors: ``f = (f + F - e) / 2`` per step (the average
        converges within a few milliseconds, and to ``F / 2`` when the lighter pad has lost contact
        and both motors press on one pad through the coupling).

        Handles only (the bodies of the ``doors`` extension): a handle is held to the world by its
        joint, so the arm's whole pull across the grip goes through the pads; a free object held
        loads them with its weight and inertia only (the flip_box examples' regrasps, tuned on the
        motors' full force, are left as they were)."""
        cmd = self._command
        if self._ramp_n is not None and self._squeeze is not None and \
                self.backend.now() - self._squeeze[0] >= SQUEEZE_TIME_S:
            self._ramp_n = None    # (a squeeze ramp the closing action did not finish)
            if cmd is not None and not self._torque_mode:
                self._apply_position_command()
        if cmd is None or self._torque_mode or self._opening or self._linkage or len(self._fj) != 2:
            self.pad_share_n = None
            return
        doors = self.backend.extensions.get("doors")
        handles = getattr(doors, "handle_bodies", None)
        if not handles:
            self.pad_share_n = None
            return
        force = cmd[1]
        p = self.pad_loads_n(handles)
        if p[0] <= 0.0 and p[1] <= 0.0:
            share = None
        else:
            excess = max(0.0, 0.5 * abs(p[0] - p[1]) - SHARE_DEADBAND * force)
            now = force if self.pad_share_n is None else self.pad_share_n
            share = min(force, max(0.0, 0.5 * (now + force - excess)))
            if share >= force - 1e-6:
                share = None
        if share != self.pad_share_n:
            self.pad_share_n = share
            self._apply_position_command()

    def _squeeze_ramp(self, force: float) -> None:
        """Both pads touch under a closing position command (:meth:`approach_speed`): the motors'
        force limit rises from what they press with when both pads touch to the command's ``force``
        over :data:`SQUEEZE_TIME_S`, the fingers at the command's speed (a gripper's force loop ramps
        its set-point; PyBullet's position motor is a velocity constraint, whose slower speed
        would hold the pads off the contact short of the force: a squeeze slowed to 5 mm/s held a
        lever with 38 N of 100)."""
        now = self.backend.now()
        if self._squeeze is None:
            states = pb.getJointStates(self._body, self._fj, physicsClientId=self._client)
            pressed = max(abs(st[3]) / abs(s) for st, s in zip(states, self._s))
            self._squeeze = (now, min(pressed, force))
        t0, f0 = self._squeeze
        ramp = f0 + (force - f0) * min(1.0, (now - t0) / SQUEEZE_TIME_S)
        ramp = None if ramp >= force else ramp
        if ramp != self._ramp_n:
            self._ramp_n = ramp
            self._apply_position_command()

    def refresh_force_limit(self) -> None:
        """A linkage under a position command: set the driver's torque limit for the commanded finger
        force at the driver's present slope (the lever changes as the fingers swing; the squeeze
        is then the command's at any width). Two finger joints: nothing to do."""
        if self._linkage and self._command is not None and not self._torque_mode:
            self._apply_position_command()

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
            self._opening = False
        if self._linkage:
            k = self.model.gripper.drive_force_slopes(self.robot.finger_positions())[0]
            cap = self.share_force(abs(effort_n))
            effort_n = max(-cap, min(cap, effort_n))
            pb.setJointMotorControlArray(self._body, self._fj, pb.TORQUE_CONTROL, forces=[effort_n * k],
                                         physicsClientId=self._client)
            return
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
