"""The PR2 tactile gripper controller as a 1 kHz step function, with its action layer.

Follows ``pr2_gripper_sensor_controller`` (the realtime controller, J. Romano 2010) and
``pr2_gripper_sensor_action`` (the action servers) as described in
``shared/reference/pr2_gripper_controller.md``; the states are those of Romano et al., "Human-
Inspired Robotic Grasp Control With Tactile Sensing", IEEE T-RO 27(6), 2011.

The controller is generic in the *virtual parallel gripper joint*: the finger gap ``x`` in metres
(0 closed) and its effort in newtons, **negative effort or velocity closes**. It runs on the PR2
gripper (0..0.09 m) and on any parallel gripper (:meth:`ControllerParams.for_gripper` with its opening).

Use::

    ctl = Pr2GripperController(ControllerParams.for_gripper(0.08))   # a gripper opening 80 mm
    state = ctl.grab(PR2GripperGrabCommand(hardness_gain=0.03))   # an ActionState, updated in place
    while not state.done:
        cmd = ctl.step(0.001, SensorSample(time=t, gap=x, gap_velocity=v, joint_effort=e,
                                           left_pressure=frame_l, right_pressure=frame_r,
                                           palm_acceleration=acc))
        apply(cmd)                       # see ActuatorCommand
        feedback = ctl.feedback(state.name)

Realtime modes (``PR2GripperSensorRTState``): DISABLED, POSITION_SERVO, FORCE_SERVO,
FIND_CONTACT, SLIP_SERVO. Actions run in two slots, as the robot's separate action servers do:

- *motion* slot: ``gripper_action`` (Pr2GripperCommand), ``find_contact``, ``force_servo``,
  ``slip_servo``, ``grab``. A new motion command pre-empts the running one.
- *event* slot: ``event_detector`` and ``release``. They do not change the mode (until Release
  opens), so Release can wait for a set-down while SlipServo holds the object.

Where we differ from the robot (each a documented defect of the original, reference §9):

- B1: ``force_servo_velocity_tolerance`` is used as given (0.001 m/s); the robot overwrites it with
  ``position_servo_position_tolerance`` (0.01).
- B2: the 250 ms force-stable time must be *consecutive*; the robot never resets its counter.
- B3: the broken-sensor test checks both fingers (the robot tests the left one twice).
- B4: every command resets the force-servo integrator to the current gap; the robot keeps a
  stale set-point, so a ForceServo after a position move can snap toward an old position.
- B6: Grab aborts when a step fails (open timed out, FindContact or ForceServo failed or timed
  out); the robot reports success anyway and holds at 1.2 N.
- B7: Release aborts after ``release_timeout`` (and then does not open); the robot waits forever.
- B8: an action whose mode is overridden ends PREEMPTED with a reason (the robot drops it silently);
  commands refused for a broken sensor are REJECTED (the robot logs and the client hangs).
- A fingertip sensor lost *during* an action (all cells 0, frames stopped or frozen) ends it
  ABORTED and holds the gap with at most the last good force (the robot keeps servoing on the
  dead reading); see :class:`Pr2GripperController`, "Sensor loss".
- B10/B11/B14/B15: see :mod:`.tactile` (every accelerometer sample tested, detector inactive until
  commanded, zeroing averages the window, high-pass exactly -3 dB at 5 Hz by default).
- B13: slip raises the force by ``slip_force_increase`` (1.08) once per slipping pressure frame,
  not by 1.002 per millisecond (same ~x1.085 per 41 ms frame, but independent of the frame rate).
- B16: after the slip servo raised its force and the grip has followed it, a band-passed force that
  is positive and only decaying (the 0.8-5 Hz filter's memory of that increase, which decays
  x0.92 per frame, about 0.7 s from 1.5 N to 0.18 N) no longer vetoes a slip seen as a drop of
  the force, or as a rise past the set-point (``slip_bp_memory_waiver``; a rise below the set-point
  may be the grip still following the increase, and counting it made a stiff grasp ratchet its
  force up on its own approach). On the robot every increase blinds the slip test for that long,
  so a sustained slip raises the force by one x1.08 step per second or less, too slow to catch a
  heavier object before it slides out; here about one step per 0.15-0.35 s.
- B16 also: a pad pressed past the SlipServo set-point by more than the servo could overshoot it
  (``force_servo_force_tolerance``, or the set-point's last step) and still rising slips whatever
  its band-pass (``slip_bp_pressed_waiver``): the can wedging between the WSG's pads at a shake
  reversal (13.4 -> 20 N in a frame over 14.5 N) slipped unfelt behind the veto (issue 33 item 5).
  And while the grip is short of the set-point (the weaker pad more than the force tolerance under
  it: an announced grip not yet reached, or a slip just felt), the servo is closing and its own
  doing raises the pad forces, so the squeeze (the pads' mean) falling by more than the slip
  threshold slips whatever its band-pass (``slip_bp_short_waiver``): the xArm's 0.9 kg can slid
  4 mm down its pads as the slow lift started 1 N short of the announced grip, felt in its first
  frame only, its squeeze then falling from 9.6 to 2.4 N behind the veto for 0.4 s.
- B12: SlipServo's "empty" close needs the mean pad force under 0.95 N for
  ``gripper_empty_time`` (0.1 s; robot: at once, so a 1.2 N hold that dips for one frame as the
  lift starts is closed on at -100 N), and closes with at most ``fingertip_force_limit`` when set.
- FindContact and ForceServo abort ("closed on nothing") when the gap closes to ``drop_position``
  without contact; on the robot they close forever.
- The gripper_action stall threshold defaults to 1 mm/s (robot: 1e-6 m/s, which a simulated
  gripper never goes below, PR2/pr2_simulator#115).
- F1: the force servo's gain is capped by the grasp's measured stiffness (``force_servo_loop_gain``):
  one pressure frame's correction is at most that fraction of the force error. The robot's gains
  (0.0016 m/(N s) closing) suit its compliant fingertips; on a stiff grasp (a flat pad on a box face,
  a hard object: 15 kN/m over the gap and more) the frame-sampled loop overshoots and rings at the
  frame rate, SlipServo reads its own ringing as slip and ratchets the force to the limit (the WSG
  50 on a 10 kN/m block: from 14.7 N to its 80 N while the block sat still in the hand).
- F2: grip-load coupling (``load_anticipation``). The robot's SlipServo only reacts: it holds at
  the force where the object stopped slipping under its weight (at most one x1.08 step over it) and
  raises it x1.08 per slipping frame. A lift's acceleration ``a`` needs ``(g + a) / g`` of that (1.21x
  at 2.1 m/s^2), and once the object slides the grasp loses more than that in a frame or two (the
  pads' force fell from 11 to 4 N as the 0.9 kg can slid out of the WSG 50), faster than a
  frame-by-frame reaction can catch (issue 33: 0.8-1.2 kg cans dropped at the lift on the iiwa and
  the xArm with the grip_margin to hold them). People raise their grip with the load the arm is
  about to apply, before the object could slip (grip-load coupling: Johansson & Westling, Exp.
  Brain Res. 56, 1984; Flanagan & Wing, 1993). So the host that commands the arm, which knows the
  held object's mass and friction (as a motion planner knows an attached object's), tells the
  controller the grip the coming motion needs, ``m |a - g|max / (2 mu)``
  (:meth:`Pr2GripperController.anticipate_grip`), and SlipServo servoes to the larger of
  ``slip_force`` and one x1.08 step over it (at most ``fingertip_force_limit``), the largest
  announced during the hold (the grip is not relaxed between motions: its own drop would read as
  slip; an armed event detector drops it, so that a set-down slips as on the robot).
  :attr:`Pr2GripperController.grip_ready` says when the grip has reached it, so that the host may
  hold the arm until it has. While the grip moves to an announced set-point, a pad force moving
  toward it is not slip for the slip servo, and the event detector takes no slip at all until the
  grip has settled on it (:data:`Pr2GripperController.GRIP_SETTLE_FRAMES`). The simulator does both for
  every arm motion while its gripper holds an object in SlipServo (:mod:`py_trees_manipulation.sim.arm`).
- F3: a force servo set-point at ``fingertip_force_limit`` (Grab's hold is capped there) is achieved
  when the stronger pad holds the limit, the weaker one at least ``force_lightest`` and the gap is
  still. The robot servoes the weaker pad to the set-point; with the actuator's effort capped at the
  limit too (:meth:`_force_capped`), a load on one pad keeps the weaker one under it for ever: the
  xArm's pads, which advance along the approach as they close, press a 5 cm egg on the table (4.24
  and 2.70 N under a 4 N limit) and Grab failed "not stable within 6 s" on 1 seed in 5.
- ``slip_detected`` is true while the latest pressure frame shows slip ("recently slipped").
- There is no extra one-cycle sensing delay: ``step`` uses the sample it is given.

Modules (issue 37 item 6): :mod:`.gripper_params` (:class:`ControllerParams`, :class:`SensorSample`,
:class:`ActuatorCommand`, :class:`ActionState`), :mod:`.gripper_modes` (the realtime modes' control
laws) and :mod:`.gripper_actions` (the action layer's end conditions); this module keeps the
controller (commands, the 1 kHz step, sensor loss, feedback) and re-exports their names.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Optional

import numpy as np
from numpy.typing import NDArray

from ..msgs.actions import GoalStatus
from ..msgs.gripper_sensor import (
    PR2GripperEventDetectorCommand,
    PR2GripperEventDetectorData,
    PR2GripperFindContactCommand,
    PR2GripperFindContactData,
    PR2GripperForceServoCommand,
    PR2GripperForceServoData,
    PR2GripperGrabCommand,
    PR2GripperGrabData,
    PR2GripperReleaseCommand,
    PR2GripperReleaseData,
    PR2GripperSensorRawData,
    PR2GripperSensorRTState,
    PR2GripperSlipServoCommand,
    PR2GripperSlipServoData,
)
from ..msgs.motion import Pr2GripperCommand, Pr2GripperCommandResult
from .gripper_actions import _ActionLayer
from .gripper_modes import _RealtimeModes
from .gripper_params import RT, ActionState, ActuatorCommand, ControllerParams, SensorSample  # noqa: F401  (re-exports)
from .tactile import (AccelerationObserver, EventDetector, PressureObserver, StreamingFilter, design_velocity_lowpass,
                      detect_contact)

MOTION_ACTIONS = frozenset({"gripper_action", "find_contact", "force_servo", "slip_servo", "grab"})
TACTILE_MOTION_ACTIONS = MOTION_ACTIONS - {"gripper_action"}
EVENT_ACTIONS = frozenset({"event_detector", "release"})


# ------------------------------------------------------------------------------------------------
# the controller
# ------------------------------------------------------------------------------------------------

class Pr2GripperController(_RealtimeModes, _ActionLayer):
    """PR2 tactile gripper controller: realtime modes plus the action layer, stepped at 1 kHz.

    Commands (each returns the :class:`ActionState` it starts, never blocks):
    :meth:`command_position` (``gripper_action``), :meth:`find_contact`, :meth:`force_servo`,
    :meth:`slip_servo`, :meth:`grab`, :meth:`release`, :meth:`event_detector`; services
    :meth:`stop_motor_output`, :meth:`zero_fingertip_sensors`; :meth:`cancel` an action.

    Per cycle: :meth:`step` returns the :class:`ActuatorCommand`. Feedback: :meth:`feedback` (the
    PR2 ``*Data`` message of an action), :attr:`rtstate`, and the ``*_data()`` methods.

    **Sensor loss** (not on the robot: its broken-sensor test only refuses new commands, so a
    fingertip that drops out during a hold, jsk_robot#977, leaves ForceServo squeezing at full
    effort on a 0 N reading and SlipServo closing at -100 N on an "empty" gripper). When a
    fingertip sensor is lost (:class:`~.tactile.PressureObserver`: all cells 0, frames that stop
    arriving for ``sensor_timeout``, or frozen for ``sensor_frozen_time``), in the cycle it is seen
    and before the control law runs:

    - FIND_CONTACT, FORCE_SERVO and SLIP_SERVO stop at once: POSITION_SERVO holding the current gap
      with the effort clipped to the last good pad force (the larger finger's, from the last sound
      frame, at least ``force_lightest``): the grip never rises, and the object is not let go;
    - a running FindContact, ForceServo, SlipServo or Grab ends ABORTED with the reason, e.g.
      ``"left fingertip sensor lost during the hold (all cells read 0); holding the gap at 52.1 mm
      with at most 5.42 N"``;
    - an EventDetector or Release armed on a tactile condition (all but ``ACC``) ends ABORTED
      (Release: "the gripper was left closed"), and no slip or side-impact event is taken from a
      lost sensor;
    - new tactile commands are REJECTED with the reason until the sensor is sound again.

    :attr:`sensor_lost`, :attr:`sensor_lost_reason` and :attr:`sensor_loss_count` tell a host.
    ``check_broken_sensor=False`` turns all of this off.

    Args:
        params: :class:`ControllerParams` (robot defaults; :meth:`ControllerParams.for_gripper`).

    Attributes:
        sensor_lost: a fingertip sensor is lost now (and the loss was acted on).
        sensor_lost_reason: the reason given for the current loss ("" when none).
        sensor_loss_count: losses seen so far.
    """

    def __init__(self, params: Optional[ControllerParams] = None):
        self.params = params if params is not None else ControllerParams()
        p = self.params
        self.pressure = PressureObserver(p.pressure_frame_period, p.hp_cutoff_hz, p.hp_method, p.bp_band_hz,
                                         timeout=p.sensor_timeout, frozen_time=p.sensor_frozen_time)
        self.acceleration = AccelerationObserver(p.accelerometer_rate_hz)
        self.events = EventDetector(p.side_impact_threshold, p.event_slip_force_limit,
                                    p.slip_min_threshold, p.slip_max_threshold, p.force_lightest - 0.25)
        self._vlp = StreamingFilter(*design_velocity_lowpass(p.velocity_lowpass_hz, 1000.0))
        self.state: int = RT.DISABLED
        self.max_effort = p.max_joint_effort
        self.time = 0.0
        self.gap = 0.0
        self.gap_velocity = 0.0
        self.gap_velocity_lp = 0.0
        self.joint_effort = 0.0
        self.position_setpoint = 0.0
        self.motion_action: Optional[ActionState] = None
        self.event_action: Optional[ActionState] = None
        self.last_command = ActuatorCommand()
        # Grab's hardness step, kept for feedback and tests
        self.grab_contact_force = 0.0
        self.grab_hold_force = 0.0
        self._started = False
        self._pending_reinit = False
        self._pending_find_contact: Optional[PR2GripperFindContactCommand] = None
        self._contact_conditions = PR2GripperFindContactCommand.BOTH
        self.servo_force = 0.0
        self.force_target = 0.0
        self.slip_force = 0.0
        self.load_grip = 0.0                # F2: the grip per pad the arm's motions need, N (0: none announced)
        self._load_following = False        # F2: the grip follows a set-point an announced grip moved
        self._settle_target = 0.0           # the SlipServo set-point the settle count refers to, N
        self._settle_frames = self.GRIP_SETTLE_FRAMES   # frames the grip has been settled on it
        self.setpoint_step = 0.0            # N, the SlipServo set-point's last change (its servo may overshoot by it)
        self._stall_time = 0.0
        self._find_contact_start = 0.0
        self._phase_start = 0.0
        self.sensor_lost = False
        self.sensor_lost_reason = ""
        self.sensor_loss_count = 0
        # (gap m, smaller pad force N) of the last pressure frames in contact while the controller
        # moves the fingers onto the object: the force servo's stiffness estimate (F1)
        self._touch_frames: list[tuple[float, float]] = []
        self.grasp_stiffness = 0.0          # N/m over the gap, 0 while unknown
        self._reinit_values()

    # ---- state ---------------------------------------------------------------------------------
    def _reinit_values(self) -> None:
        x = self.gap
        self.stable_time = 0.0
        self.force_achieved = False
        self.velocity_setpoint = x          # velocity-servo integrator
        self.force_setpoint = x             # force-servo integrator x_F (B4: reset on every command)
        self.marker = x                     # deformation marker x_m
        self.contact_position = x
        self.settle_time = 0.0
        self._settling = False
        self.contact_force = np.zeros(2)    # peak per-finger force while settling, N
        self.contact_force_mean = 0.0       # peak mean force while settling, N
        self.left_contact = False
        self.right_contact = False
        self.contact_conditions_met = False
        self.slip_detected = False
        self._slip_settled = False          # the grip has reached the slip servo's set-point
        self._slip_bp_prev = np.zeros(2)
        self.fingertip_force_limit_reached = False
        self.deformation_limit_reached = False
        self.gripper_empty = False
        self._light_time = 0.0              # s the mean pad force has been under force_lightest - 0.25

    def _reinit(self) -> None:
        """The robot's reinit on every command except event_detector (applied at the next step,
        with the gap of that step)."""
        self._pending_reinit = True
        self._reinit_values()

    @property
    def rtstate(self) -> PR2GripperSensorRTState:
        """The realtime controller state message."""
        return PR2GripperSensorRTState(self.state)

    @property
    def pad_forces(self) -> NDArray[np.float64]:
        """Shape (2,): zeroed static pad forces (left, right), N, edges ignored."""
        return self.pressure.pad_force

    # ---- realtime commands (controller topics), shared by the actions ---------------------------
    def _rt_position(self, position: float, max_effort: float) -> None:
        self._reinit()
        self.max_effort = max_effort
        self.position_setpoint = position
        self.state = RT.POSITION_SERVO

    def _rt_find_contact(self, cmd: PR2GripperFindContactCommand) -> None:
        self._reinit()
        self._contact_conditions = cmd.contact_conditions
        self.state = RT.FIND_CONTACT

    def _rt_force_servo(self, force: float) -> None:
        self._reinit()
        self.force_target = max(0.0, force)
        self.servo_force = self.force_target
        self.state = RT.FORCE_SERVO

    def _rt_slip_servo(self) -> None:
        self._reinit()
        p = self.params
        start = p.slip_servo_start_force if p.slip_servo_start_force >= 0 else self.servo_force
        self.slip_force = max(start, p.force_lightest)
        self.load_grip = 0.0                # F2: a new hold, no load announced yet
        self.state = RT.SLIP_SERVO

    # ---- grip-load coupling (F2, not on the robot) ------------------------------------------------
    def anticipate_grip(self, force_n: float) -> None:
        """The grip per pad the arm's coming motion needs to carry the held object, N: the host's
        ``m |a - g|max / (2 mu)`` (its mass ``m``, the motion's peak hand acceleration ``a``, the
        pads' friction ``mu``; a lift accelerating at 2.1 m/s^2 needs 1.21 times the static grip).
        SlipServo servoes to at least one slip step over it (``force_n * slip_force_increase``,
        where its own reaction to a slip would stop) and at most ``fingertip_force_limit``;
        ``slip_force``, the slip-driven set-point, is unchanged. The largest announced since the
        hold started counts: the grip is not relaxed between motions, because a grip the servo
        lowers is a drop of the pad force that the slip test and the event detector read as slip.
        Ignored with ``load_anticipation`` off (the robot's behaviour)."""
        if not self.params.load_anticipation:
            return
        grip = max(self.load_grip, float(force_n) * self.params.slip_force_increase)
        if grip > self.load_grip and grip > self.slip_force:
            self._load_following = True
        self.load_grip = grip

    def _unload_for_events(self) -> None:
        """F2: an event detector armed (EventDetector, Release) listens for the set-down's slip; the
        announced grip is dropped (the arm announces none while it listens) and the grip goes back
        to the slip servo's own set-point, as on the robot, so that the set-down slips as it would
        there. The detector does not read that relaxing as slip (``own_grip_change``)."""
        if self.load_grip > 0.0:
            self._load_following = self.load_grip > self.slip_force
            self.load_grip = 0.0

    #: pressure frames the weaker pad must stay within ``force_servo_force_tolerance`` of a changed
    #: SlipServo set-point before the event detector takes slip again (the high-pass's memory of the
    #: change: a 5 Hz first-order high-pass at 24.4 Hz keeps 0.14 of a step after one frame)
    GRIP_SETTLE_FRAMES = 3

    def _track_grip_settle(self) -> None:
        """At each pressure frame: a change of the SlipServo set-point (:attr:`slip_target`: an
        announced grip raised or dropped, F2, or the servo's own x1.08 step on slip) restarts the
        count of frames the weaker pad has stayed within the tolerance of it."""
        if self.state != RT.SLIP_SERVO:
            self._settle_target, self._settle_frames = 0.0, self.GRIP_SETTLE_FRAMES
            self.setpoint_step = 0.0
            return
        target = self.slip_target
        if abs(target - self._settle_target) > 1e-9:
            # (entering SlipServo: the step from the force it starts from)
            self.setpoint_step = abs(target - (self._settle_target or self.servo_force))
            self._settle_target, self._settle_frames = target, 0
        if self._settle_frames < self.GRIP_SETTLE_FRAMES:
            error = target - float(min(self.pressure.pad_force_left, self.pressure.pad_force_right))
            self._settle_frames = self._settle_frames + 1 if abs(error) <= self.params.force_servo_force_tolerance else 0

    def _own_grip_change(self) -> float:
        """While SlipServo moves the grip to a changed set-point (until the weaker pad has stayed
        within ``force_servo_force_tolerance`` of it for :data:`GRIP_SETTLE_FRAMES` frames): the
        sign of the change still to make (+1 raising, -1 relaxing; +1 once within the tolerance);
        0 otherwise. The event detector takes no slip while it is not 0: the pads' transients are
        the servo's own (it overshoots and rings either way), as the robot's band-pass veto keeps
        its own slow changes from reading as slip. (A drop of the load grip as Release armed, with
        the grip 0.2 N under it and still rising, read as slip on the Panda and the block was let
        go in the air.)"""
        if self.state != RT.SLIP_SERVO or self._settle_frames >= self.GRIP_SETTLE_FRAMES:
            return 0.0
        error = self.slip_target - float(min(self.pressure.pad_force_left, self.pressure.pad_force_right))
        return float(np.sign(error)) if abs(error) > self.params.force_servo_force_tolerance else 1.0

    @property
    def slip_target(self) -> float:
        """The force SlipServo servoes to, N per pad: the larger of ``slip_force`` and the grip the
        arm announced (:meth:`anticipate_grip`), at least ``force_lightest`` and at most
        ``fingertip_force_limit`` (when set)."""
        p = self.params
        f = max(self.slip_force, self.load_grip, p.force_lightest)
        return min(f, p.force_cap)

    @property
    def grip_ready(self) -> bool:
        """True unless SlipServo holds and the weaker pad is still more than
        ``force_servo_force_tolerance`` under :attr:`slip_target` (the grip has not yet reached the
        grip the host announced with :meth:`anticipate_grip`)."""
        if self.state != RT.SLIP_SERVO or self.sensor_lost:
            return True
        return float(min(self.pressure.pad_force_left, self.pressure.pad_force_right)) >= (
            self.slip_target - self.params.force_servo_force_tolerance)

    def _broken_reason(self) -> str:
        if not self.params.check_broken_sensor or not self.pressure.any_lost:
            return ""
        return f"{self._lost_fingers()} fingertip pressure sensor lost ({self._loss_details()})"

    def _lost_fingers(self) -> str:
        return " and ".join(n for n, b in zip(("left", "right"), self.pressure.lost) if b)

    def _loss_details(self) -> str:
        pr = self.pressure
        return "; ".join(f"{n}: {pr.loss_reason(i)}" if pr.lost.all() else pr.loss_reason(i)
                         for i, n in enumerate(("left", "right")) if pr.lost[i])

    def _check_sensor_loss(self) -> None:
        """Sensor loss (:attr:`PressureObserver.lost`), once per loss: stop raising force at once
        and end the tactile actions that depend on the sensor (class docstring, "Sensor loss")."""
        pr = self.pressure
        if not pr.any_lost:
            if self.sensor_lost:
                self.sensor_lost, self.sensor_lost_reason = False, ""
            return
        if self.sensor_lost or not self.params.check_broken_sensor:
            return
        p = self.params
        self.sensor_lost = True
        self.sensor_loss_count += 1
        s = self.state
        squeezing = s in (RT.FIND_CONTACT, RT.FORCE_SERVO, RT.SLIP_SERVO) or self._pending_find_contact is not None
        during = ("during the hold" if s in (RT.FORCE_SERVO, RT.SLIP_SERVO) else
                  "while closing to find contact" if s == RT.FIND_CONTACT else "")
        a = self.motion_action
        if not during:
            during = f"during {a.name}" + (f" ({a.phase})" if a.phase else "") if a is not None and not a.done else ""
        reason = f"{self._lost_fingers()} fingertip sensor lost{' ' + during if during else ''} ({self._loss_details()})"
        if squeezing:
            limit = max(float(pr.good_pad_force.max()), p.force_lightest)
            self._pending_find_contact = None
            self._rt_position(self.gap, limit)
            reason += f"; holding the gap at {self.gap * 1000:.1f} mm with at most {limit:.2f} N"
        self.sensor_lost_reason = reason
        if a is not None and not a.done and a.name in TACTILE_MOTION_ACTIONS:
            self._end_motion(GoalStatus.ABORTED, reason)
        e = self.event_action
        if e is not None and not e.done and self.events.uses_tactile:
            text = reason if e.name != "release" else reason + "; the gripper was left closed"
            self._end_event(GoalStatus.ABORTED, text)

    # ---- action-level commands ------------------------------------------------------------------
    def _start_motion(self, name: str, goal: Any, tactile: bool) -> ActionState:
        state = ActionState(name, goal, self.time)
        if tactile:
            reason = self._broken_reason()
            if reason:
                state.status = GoalStatus.REJECTED
                state.reason = reason
                return state
        self._end_motion(GoalStatus.PREEMPTED, f"superseded by {name}")
        self._pending_find_contact = None
        self.motion_action = state
        self._stall_time = 0.0
        return state

    def _end_motion(self, status: GoalStatus, reason: str, result: Any = None) -> None:
        a = self.motion_action
        if a is not None and not a.done:
            a.status, a.reason = status, reason
            a.result = result if result is not None else self._result_for(a.name)

    def _end_event(self, status: GoalStatus, reason: str, result: Any = None) -> None:
        a = self.event_action
        if a is not None and not a.done:
            a.status, a.reason = status, reason
            a.result = result if result is not None else self._result_for(a.name)

    def command_position(self, cmd: Pr2GripperCommand) -> ActionState:
        """``gripper_action``: servo the gap to ``cmd.position`` (m) with effort clip ``cmd.max_effort``.

        Succeeds when ``|gap - position| < position_servo_position_tolerance``; aborts (stalled)
        when the gap speed stays below ``stall_velocity_threshold`` for ``stall_time`` with
        ``max_effort != 0``. Result: Pr2GripperCommandResult.
        """
        state = self._start_motion("gripper_action", cmd, tactile=False)
        self._rt_position(cmd.position, cmd.max_effort)
        return state

    def find_contact(self, cmd: PR2GripperFindContactCommand) -> ActionState:
        """``find_contact``: close at ``close_speed`` until the contact conditions hold, brake 50 ms.

        With ``zero_fingertip_sensors`` the sensors are zeroed for ``zeroing_time`` first, in the
        previous mode. Succeeds no sooner than ``find_contact_min_time`` after closing starts,
        once ``contact_conditions_met``; then the mode is POSITION_SERVO at the contact gap.
        REJECTED on a broken sensor; ABORTED if the gap reaches ``drop_position`` without contact.
        Result: PR2GripperFindContactData.
        """
        state = self._start_motion("find_contact", cmd, tactile=True)
        if state.done:
            return state
        self._begin_find_contact(cmd)
        return state

    def _begin_find_contact(self, cmd: PR2GripperFindContactCommand) -> None:
        if cmd.zero_fingertip_sensors:
            self.pressure.start_zeroing(self.params.zeroing_time)
            self._pending_find_contact = cmd
            if self.motion_action is not None:
                self.motion_action.phase = "zeroing"
        else:
            self._rt_find_contact(cmd)
            self._find_contact_start = self.time
            if self.motion_action is not None and self.motion_action.name == "find_contact":
                self.motion_action.phase = ""

    def force_servo(self, cmd: PR2GripperForceServoCommand) -> ActionState:
        """``force_servo``: squeeze until each fingertip pad reaches ``cmd.fingertip_force`` (N).

        Succeeds no sooner than ``force_servo_min_time`` once the force stayed within
        ``force_servo_force_tolerance`` with the gap speed under ``force_servo_velocity_tolerance``
        for ``force_stable_time`` consecutively. REJECTED on a broken sensor; ABORTED when the gap
        closes to ``drop_position`` with no force. Result: PR2GripperForceServoData.
        """
        state = self._start_motion("force_servo", cmd, tactile=True)
        if not state.done:
            self._rt_force_servo(cmd.fingertip_force)
        return state

    def slip_servo(self, cmd: Optional[PR2GripperSlipServoCommand] = None) -> ActionState:
        """``slip_servo``: hold with the force servo, raising the force on slip. Never succeeds.

        Starts at ``slip_servo_start_force`` or the last FindContact/ForceServo force (floored at
        ``force_lightest``); ends only when pre-empted or cancelled. Feedback:
        PR2GripperSlipServoData (``gripper_empty``, ``slip_detected``, limits).
        """
        state = self._start_motion("slip_servo", cmd or PR2GripperSlipServoCommand(), tactile=True)
        if not state.done:
            self._rt_slip_servo()
        return state

    def grab(self, cmd: PR2GripperGrabCommand) -> ActionState:
        """``grab``: open, find contact (BOTH, zeroing), force-servo to the hardness-based force,
        then start SlipServo and succeed.

        .. math:: F_{hold} = \\frac{F_{contact}}{v_{close}} \\, k_{hardness}

        with ``F_contact`` the mean pad force in the FindContact result (N), ``v_close`` =
        ``close_speed`` (m/s) and ``k_hardness`` = ``cmd.hardness_gain`` (m/s), capped by
        ``fingertip_force_limit`` when > 0 (the force servo floors it at ``force_lightest``).
        Stored in :attr:`grab_contact_force` and :attr:`grab_hold_force`. ABORTED if opening
        times out, or FindContact or ForceServo fails or times out (robot: success anyway, B6).
        Result: PR2GripperGrabData.
        """
        state = self._start_motion("grab", cmd, tactile=True)
        if state.done:
            return state
        self.grab_contact_force = self.grab_hold_force = 0.0
        self._grab_phase("open")
        return state

    def _grab_phase(self, phase: str) -> None:
        a = self.motion_action
        assert a is not None
        a.phase = phase
        self._phase_start = self.time
        self._stall_time = 0.0
        if phase == "open":
            self._rt_position(self.params.position_open, -1.0)
        elif phase == "find_contact":
            self._begin_find_contact(PR2GripperFindContactCommand(True, PR2GripperFindContactCommand.BOTH))
        elif phase == "force_servo":
            self._rt_force_servo(self.grab_hold_force)
        elif phase == "slip_servo":
            self._rt_slip_servo()

    def release(self, cmd: PR2GripperReleaseCommand) -> ActionState:
        """``release``: arm the event detector with ``cmd.event``; on the event, open to
        ``position_open`` at full effort and succeed. The mode is unchanged until then.

        ABORTED (the gripper stays closed) after ``release_timeout`` without the event (robot:
        waits forever, B7). Result: PR2GripperReleaseData.
        """
        state = ActionState("release", cmd, self.time, phase="waiting")
        self._end_event(GoalStatus.PREEMPTED, "superseded by release")
        self.event_action = state
        self.events.configure(cmd.event)
        self._unload_for_events()
        return state

    def event_detector(self, cmd: PR2GripperEventDetectorCommand) -> ActionState:
        """``event_detector``: arm the detector and clear its latches; succeeds once the trigger
        conditions are met, no sooner than ``event_detector_min_time``. Never changes the mode.
        Result: PR2GripperEventDetectorData.
        """
        state = ActionState("event_detector", cmd, self.time)
        self._end_event(GoalStatus.PREEMPTED, "superseded by event_detector")
        self.event_action = state
        self.events.configure(cmd)
        self._unload_for_events()
        return state

    def stop_motor_output(self) -> None:
        """Service ``stop_motor_output``: go DISABLED (effort 0). Pre-empts the motion action."""
        self._end_motion(GoalStatus.PREEMPTED, "motor output stopped")
        self._pending_find_contact = None
        self.state = RT.DISABLED

    def zero_fingertip_sensors(self) -> None:
        """Service ``zero_fingertip_sensors``: zero both fingertips over ``zeroing_time``.

        Only when neither finger touches anything.
        """
        self.pressure.start_zeroing(self.params.zeroing_time)

    def cancel(self, state: ActionState) -> None:
        """Cancel an action: it ends PREEMPTED. Motion actions also stop the motor output (as the
        robot's servers do); Release and the event detector leave the mode unchanged."""
        if state.done:
            return
        if state is self.motion_action:
            self.stop_motor_output()
            state.reason = "cancelled"
        elif state is self.event_action:
            self._end_event(GoalStatus.PREEMPTED, "cancelled")

    # ---- the 1 kHz step --------------------------------------------------------------------------
    def step(self, dt: float, sensor: SensorSample) -> ActuatorCommand:
        """Run one control cycle on ``sensor``; returns the command to apply for the next ``dt``.

        Order: observers (pressure, accelerometer, velocity low-pass), the sensor-loss check,
        pending zeroing/commands, the current mode's control law, the event detector, then the
        action layer.

        Args:
            dt: cycle length, s (0.001 on the robot).
            sensor: this cycle's :class:`SensorSample`.

        Raises:
            ValueError: ``dt <= 0`` or a malformed pressure frame.
        """
        if not dt > 0:
            raise ValueError(f"dt must be > 0 s, got {dt}")
        x, v = float(sensor.gap), float(sensor.gap_velocity)
        self.time, self.gap, self.gap_velocity = float(sensor.time), x, v
        self.joint_effort = float(sensor.joint_effort)
        if not self._started:
            self._started = True
            self._vlp.reset(v)
            self._reinit_values()
        new_frame = self.pressure.step(dt, sensor.left_pressure, sensor.right_pressure)
        if new_frame:
            self._track_stiffness(x)
            self._track_grip_settle()
        acc = sensor.palm_acceleration
        if acc is None:
            self.acceleration.pause()
        else:
            self.acceleration.step(acc)
        self.gap_velocity_lp = self._vlp.step_scalar(v)
        if self.pressure.any_lost or self.sensor_lost:
            self._check_sensor_loss()

        if self._pending_find_contact is not None and not self.pressure.zeroing:
            cmd, self._pending_find_contact = self._pending_find_contact, None
            self._begin_find_contact(dataclasses.replace(cmd, zero_fingertip_sensors=False))
        if self._pending_reinit:
            self._pending_reinit = False
            self._reinit_values()

        out = self._run_mode(dt, x, v, new_frame)
        self.events.step(self.acceleration, self.pressure, own_grip_change=self._own_grip_change())
        self._update_actions(dt, x, v)
        self.last_command = out
        return out

    # ---- feedback / data messages ------------------------------------------------------------------
    def _result_for(self, name: str) -> Any:
        return self.feedback(name)

    def feedback(self, name: str) -> Any:
        """The current feedback message of action ``name`` (same type as its result)."""
        makers = {"gripper_action": self.gripper_command_result, "find_contact": self.find_contact_data,
                  "force_servo": self.force_servo_data, "slip_servo": self.slip_servo_data,
                  "grab": self.grab_data, "release": self.release_data,
                  "event_detector": self.event_detector_data}
        if name not in makers:
            raise ValueError(f"unknown action {name!r}; actions are {sorted(makers)}")
        return makers[name]()

    def gripper_command_result(self) -> Pr2GripperCommandResult:
        """pr2_controllers_msgs/Pr2GripperCommandResult: gap (m), effort (N), stalled, reached_goal."""
        a = self.motion_action
        goal = a.goal.position if a is not None and a.name == "gripper_action" else self.position_setpoint
        reached = abs(self.gap - goal) < self.params.position_servo_position_tolerance
        return Pr2GripperCommandResult(position=max(self.gap, 0.0), effort=self.joint_effort,
                                       stalled=self._stall_time > self.params.stall_time, reached_goal=reached)

    def find_contact_data(self) -> PR2GripperFindContactData:
        f = self.pressure.pad_force
        return PR2GripperFindContactData(
            stamp=self.time, contact_conditions_met=self.contact_conditions_met,
            left_fingertip_pad_contact=self.left_contact, right_fingertip_pad_contact=self.right_contact,
            left_fingertip_pad_force=float(f[0]), right_fingertip_pad_force=float(f[1]),
            joint_position=self.contact_position, joint_effort=self.joint_effort, rtstate=self.rtstate)

    def force_servo_data(self) -> PR2GripperForceServoData:
        f = self.pressure.pad_force
        return PR2GripperForceServoData(
            stamp=self.time, left_fingertip_pad_force=float(f[0]), right_fingertip_pad_force=float(f[1]),
            joint_effort=self.joint_effort, force_achieved=self.force_achieved, rtstate=self.rtstate)

    def slip_servo_data(self) -> PR2GripperSlipServoData:
        f = self.pressure.pad_force
        return PR2GripperSlipServoData(
            stamp=self.time, deformation=self.gap - self.marker, left_fingertip_pad_force=float(f[0]),
            right_fingertip_pad_force=float(f[1]), joint_effort=self.joint_effort,
            slip_detected=self.slip_detected, deformation_limit_reached=self.deformation_limit_reached,
            fingertip_force_limit_reached=self.fingertip_force_limit_reached,
            gripper_empty=self.gripper_empty, rtstate=self.rtstate)

    def event_detector_data(self) -> PR2GripperEventDetectorData:
        return self.events.data(self.time)

    def grab_data(self) -> PR2GripperGrabData:
        return PR2GripperGrabData(self.rtstate)

    def release_data(self) -> PR2GripperReleaseData:
        return PR2GripperReleaseData(self.rtstate)

    def raw_data(self) -> PR2GripperSensorRawData:
        """pr2_gripper_sensor_msgs/PR2GripperSensorRawData (debugging): forces, filters, accelerations."""
        pr, acc = self.pressure, self.acceleration
        flags = detect_contact(pr.pad_force, pr.pad_force_hp, self.params.hp_force_trigger,
                               self.params.force_lightest - 0.25)
        return PR2GripperSensorRawData(
            stamp=self.time, left_finger_pad_force=float(pr.pad_force[0]),
            right_finger_pad_force=float(pr.pad_force[1]),
            left_finger_pad_force_filtered=float(pr.pad_force_hp[0]),
            right_finger_pad_force_filtered=float(pr.pad_force_hp[1]),
            left_finger_pad_forces=tuple(pr.forces[0]), right_finger_pad_forces=tuple(pr.forces[1]),
            left_finger_pad_forces_filtered=tuple(pr.forces_hp[0]),
            right_finger_pad_forces_filtered=tuple(pr.forces_hp[1]),
            acc_x_raw=float(acc.raw[0]), acc_y_raw=float(acc.raw[1]), acc_z_raw=float(acc.raw[2]),
            acc_x_filtered=float(acc.filtered[0]), acc_y_filtered=float(acc.filtered[1]),
            acc_z_filtered=float(acc.filtered[2]), left_contact=bool(flags[0]), right_contact=bool(flags[1]))
