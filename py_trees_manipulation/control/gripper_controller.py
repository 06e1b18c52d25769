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
  x0.92 per frame, about 0.7 s from 1.5 N to 0.18 N) no longer vetoes slip
  (``slip_bp_memory_waiver``). On the robot every increase blinds the slip test for that long, so
  a sustained slip raises the force by one x1.08 step per second or less, too slow to catch a
  heavier object before it slides out; here about one step per 0.15-0.35 s.
- B12: SlipServo's "empty" close needs the mean pad force under 0.95 N for
  ``gripper_empty_time`` (0.1 s; robot: at once, so a 1.2 N hold that dips for one frame as the
  lift starts is closed on at -100 N), and closes with at most ``fingertip_force_limit`` when set.
- FindContact and ForceServo abort ("closed on nothing") when the gap closes to ``drop_position``
  without contact; on the robot they close forever.
- The gripper_action stall threshold defaults to 1 mm/s (robot: 1e-6 m/s, which a simulated
  gripper never goes below, PR2/pr2_simulator#115).
- ``slip_detected`` is true while the latest pressure frame shows slip ("recently slipped").
- There is no extra one-cycle sensing delay: ``step`` uses the sample it is given.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Mapping, Optional

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
from .tactile import (
    AccelerationObserver,
    EventDetector,
    PressureObserver,
    StreamingFilter,
    design_velocity_lowpass,
    detect_contact,
    slip_thresholds,
)

RT = PR2GripperSensorRTState

MOTION_ACTIONS = frozenset({"gripper_action", "find_contact", "force_servo", "slip_servo", "grab"})
TACTILE_MOTION_ACTIONS = MOTION_ACTIONS - {"gripper_action"}
EVENT_ACTIONS = frozenset({"event_detector", "release"})


# ------------------------------------------------------------------------------------------------
# parameters, inputs, outputs
# ------------------------------------------------------------------------------------------------

@dataclass
class ControllerParams:
    """Controller parameters. The first block are the PR2 launch-file parameters
    (``pr2_gripper_sensor_controller*.yaml``) with their robot defaults; the rest are constants
    hard-coded on the robot, exposed here (robot values as defaults unless marked).

    Launch-file parameters:
        close_speed: FindContact closing speed, m/s (0.02); also in the Grab hardness formula.
        max_joint_effort: effort clip, N; < 0 unlimited (-1). Every position command overwrites it.
        fingertip_force_limit: cap on the SlipServo (and Grab hold) force, N; < 0 off (-1). Caps the
            set-point (as the robot) and the actuator effort (not on the robot: see ``_force_capped``).
        deformation_limit: how far ForceServo/SlipServo may close beyond the gap at their start,
            m; < 0 off (0.03).
        force_lightest: minimum force the force servo targets, N (1.2); contact and "empty"
            thresholds are ``force_lightest - 0.25`` (0.95 N).
        hp_force_trigger: high-passed pad force that counts as contact, N (0.1).
        force_servo_force_tolerance: force error counted as achieved, N (0.3).
        force_servo_velocity_tolerance: gap speed below which the force is stable, m/s (0.001).
        slip_servo_start_force: SlipServo start force, N; < 0 uses the last FindContact/ForceServo
            force (-1).
        position_servo_position_tolerance: gripper_action success tolerance, m (0.01).
        position_open: gap Grab and Release open to, m (0.09 on the PR2; the gripper's full opening,
            :meth:`for_gripper`).
        publish_skip: feedback decimation (1); kept for parity, the host decides publishing.

    Hard-coded on the robot:
        position_gain, velocity_gain: K_P (20000 N/m), K_D (5000 N s/m) of the position servo.
        friction_effort: Coulomb feed-forward in the direction of the desired velocity, N (7).
        force_servo_gain_close, force_servo_gain_open: m/(N s) (0.0016, 0.0008).
        force_servo_velocity_limit: m/s (0.5). force_servo_integrator_window: anti-windup, m (0.03).
        slip_force_increase: factor per slipping pressure frame (1.08; robot 1.002 per ms, B13).
        slip_bp_memory_waiver: once the grip has reached the raised set-point, a positive, decaying
            band-passed force does not veto slip (True; robot False, B16).
        slip_motion_limit: slip-servo slip gain ``s`` (0.007). slip_force_limit: slip-servo band-pass
            limit, N (0.18). slip_min_threshold, slip_max_threshold: clamp of ``s |F|``, N (0.048, 0.2).
        event_slip_force_limit: event-detector band-pass limit, N (0.2).
        side_impact_threshold: edge-cell high-passed force for a side impact, N (0.2).
        drop_position: gap at or below which the gripper is empty, m (0.003).
        drop_effort: effort commanded while SlipServo thinks the gripper is empty, N (-100; at
            most ``fingertip_force_limit`` when that is set, B12).
        gripper_empty_time: s the mean pad force must stay under ``force_lightest - 0.25`` before
            the gripper counts as empty (0.1; robot 0, B12).
        contact_settle_time: FindContact brake time after contact, s (0.05).
        force_stable_time: consecutive time in tolerance for force_achieved, s (0.25).
        zeroing_time: fingertip zeroing window, s (0.25).
        velocity_lowpass_hz: low-pass of the gap velocity for the stable test, Hz (5).
        pressure_frame_period: s (0.041). hp_cutoff_hz: Hz (5). hp_method: "butter" (ours) or
            "backward_euler" (robot). bp_band_hz: Hz ((0.8, 5)).
        accelerometer_rate_hz: Hz of the palm accelerometer samples (1000: one (3,) sample per
            cycle; the robot has 3000 with three samples per cycle).

    Action layer:
        find_contact_min_time (0.2 s), force_servo_min_time (0.1 s), event_detector_min_time
        (0.1 s): an action cannot succeed sooner.
        stall_velocity_threshold: m/s (1e-3; robot 1e-6). stall_time: s (0.1).
        grab_open_timeout (4 s), grab_find_contact_timeout (5 s), grab_force_servo_timeout (6 s).
        release_timeout: s (30; ``math.inf`` waits forever, as the robot).

    Sensor loss (not on the robot, whose broken-sensor test only refuses new commands):
        check_broken_sensor: refuse tactile commands while a fingertip sensor is lost, and end a
            running one (True). The robot only refuses, on a raw left pad sum of exactly 0.
        sensor_timeout: s without a pressure frame after which a finger's sensor is lost (0.2, five
            PR2 frames; 0: never; must exceed ``pressure_frame_period``).
        sensor_frozen_time: s of bit-identical frames after which it is lost (0: check off, the
            default: a noise-free source repeats frames legitimately; the simulator sets 0.25 s).
        A dropout (raw pad sum exactly 0, or all 22 cells exactly 0) is a loss at once. See
        :class:`Pr2GripperController` ("Sensor loss") for what the controller then does.
    """

    close_speed: float = 0.02
    max_joint_effort: float = -1.0
    fingertip_force_limit: float = -1.0
    deformation_limit: float = 0.03
    force_lightest: float = 1.2
    hp_force_trigger: float = 0.1
    force_servo_force_tolerance: float = 0.3
    force_servo_velocity_tolerance: float = 0.001
    slip_servo_start_force: float = -1.0
    position_servo_position_tolerance: float = 0.01
    position_open: float = 0.09
    publish_skip: int = 1

    position_gain: float = 20000.0
    velocity_gain: float = 5000.0
    friction_effort: float = 7.0
    force_servo_gain_close: float = 0.0016
    force_servo_gain_open: float = 0.0008
    force_servo_velocity_limit: float = 0.5
    force_servo_integrator_window: float = 0.03
    slip_force_increase: float = 1.08
    slip_bp_memory_waiver: bool = True
    slip_motion_limit: float = 0.007
    slip_force_limit: float = 0.18
    slip_min_threshold: float = 0.048
    slip_max_threshold: float = 0.2
    event_slip_force_limit: float = 0.2
    side_impact_threshold: float = 0.2
    drop_position: float = 0.003
    drop_effort: float = -100.0
    gripper_empty_time: float = 0.1
    contact_settle_time: float = 0.05
    force_stable_time: float = 0.25
    zeroing_time: float = 0.25
    velocity_lowpass_hz: float = 5.0
    pressure_frame_period: float = 0.041
    hp_cutoff_hz: float = 5.0
    hp_method: str = "butter"
    bp_band_hz: tuple[float, float] = (0.8, 5.0)
    accelerometer_rate_hz: float = 1000.0

    find_contact_min_time: float = 0.2
    force_servo_min_time: float = 0.1
    event_detector_min_time: float = 0.1
    stall_velocity_threshold: float = 1e-3
    stall_time: float = 0.1
    grab_open_timeout: float = 4.0
    grab_find_contact_timeout: float = 5.0
    grab_force_servo_timeout: float = 6.0
    release_timeout: float = 30.0
    check_broken_sensor: bool = True
    sensor_timeout: float = 0.2
    sensor_frozen_time: float = 0.0

    _POSITIVE = ("close_speed", "force_lightest", "hp_force_trigger", "force_servo_force_tolerance",
                 "force_servo_velocity_tolerance", "position_servo_position_tolerance", "position_open",
                 "position_gain", "force_servo_gain_close", "force_servo_gain_open",
                 "force_servo_velocity_limit", "force_servo_integrator_window", "slip_force_increase",
                 "pressure_frame_period", "hp_cutoff_hz", "accelerometer_rate_hz", "velocity_lowpass_hz",
                 "release_timeout", "grab_open_timeout", "grab_find_contact_timeout",
                 "grab_force_servo_timeout", "stall_time", "zeroing_time")

    def __post_init__(self) -> None:
        for name in self._POSITIVE:
            value = getattr(self, name)
            if not value > 0:
                raise ValueError(f"ControllerParams.{name} must be > 0, got {value}")
        for name in ("velocity_gain", "friction_effort", "slip_motion_limit", "slip_force_limit",
                     "slip_min_threshold", "slip_max_threshold", "event_slip_force_limit",
                     "side_impact_threshold", "drop_position", "contact_settle_time", "force_stable_time",
                     "find_contact_min_time", "force_servo_min_time", "event_detector_min_time",
                     "stall_velocity_threshold", "sensor_timeout", "sensor_frozen_time", "gripper_empty_time"):
            value = getattr(self, name)
            if not value >= 0:
                raise ValueError(f"ControllerParams.{name} must be >= 0, got {value}")
        if self.hp_method not in ("butter", "backward_euler"):
            raise ValueError(f"ControllerParams.hp_method must be 'butter' or 'backward_euler', got {self.hp_method!r}")
        if self.publish_skip < 1:
            raise ValueError(f"ControllerParams.publish_skip must be >= 1, got {self.publish_skip}")
        if 0 < self.sensor_timeout <= self.pressure_frame_period:
            raise ValueError(f"ControllerParams.sensor_timeout ({self.sensor_timeout} s) must exceed the pressure "
                             f"frame period ({self.pressure_frame_period} s), or be 0 (off)")

    @classmethod
    def for_gripper(cls, max_gap_m: float, min_gap_m: float = 0.0, **overrides: Any) -> "ControllerParams":
        """Robot defaults adapted to a parallel gripper whose finger gap spans ``min_gap_m`` ..
        ``max_gap_m`` metres: ``position_open = max_gap_m`` (Grab and Release open fully) and
        ``drop_position`` 3 mm above the closed gap (empty), plus ``overrides``. The simulator
        passes the robot description's ``gripper.opening_m``."""
        values: dict[str, Any] = {"position_open": float(max_gap_m)}
        if min_gap_m:
            values["drop_position"] = float(min_gap_m) + cls.drop_position
        values.update(overrides)
        return cls(**values)

    @classmethod
    def panda(cls, **overrides: Any) -> "ControllerParams":
        """:meth:`for_gripper` for the Franka Hand (0.08 m opening), as the unit tests' plant."""
        return cls.for_gripper(0.08, **overrides)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "ControllerParams":
        """From a mapping of parameter names (e.g. a YAML file). Unknown names raise ValueError."""
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - names
        if unknown:
            raise ValueError(f"unknown controller parameter(s) {sorted(unknown)}; known: {sorted(names)}")
        values = dict(data)
        if "bp_band_hz" in values:
            values["bp_band_hz"] = tuple(values["bp_band_hz"])
        return cls(**values)


@dataclass
class SensorSample:
    """What the controller reads each 1 ms cycle.

    Attributes:
        time: backend clock, s (stamps and action timing).
        gap: finger gap (virtual parallel joint position), m; 0 closed.
        gap_velocity: d(gap)/dt, m/s; negative while closing.
        joint_effort: measured (or applied) virtual joint effort, N; negative squeezes.
        left_pressure, right_pressure: a new (22,) fingertip frame in **newtons per cell**
            (layout in :mod:`.tactile`), or None when no new frame arrived this cycle. Frames come
            at ~24.4 Hz (every 41 ms) and include the sensor's offset: a finger whose 15 pad cells
            sum to exactly 0 counts as a missing/broken sensor (as on the PR2), so a simulator
            should add a small positive baseline per cell.
        palm_acceleration: palm accelerometer, shape (3,) (or (n, 3) for n samples per cycle,
            oldest first), m/s^2, hand frame; gravity may be included (the band-pass removes it).
            None: not read this cycle (a host may skip it while no event detector is armed; no
            acceleration event, and the next sample re-seeds the band-pass at steady state).
    """

    time: float
    gap: float
    gap_velocity: float
    joint_effort: float = 0.0
    left_pressure: Optional[NDArray[np.float64]] = None
    right_pressure: Optional[NDArray[np.float64]] = None
    palm_acceleration: Any = (0.0, 0.0, 0.0)


@dataclass
class ActuatorCommand:
    """What to apply to the gripper for the next cycle.

    The primary output is ``effort``: the virtual parallel joint effort in newtons (negative
    closes). **How a simulator applies it**: on a parallel gripper whose two fingers each move
    ``gap / 2`` along their own prismatic joint (the Panda: ``panda_finger_joint1/2``, positive
    opens), apply a force equal to ``effort`` on *each* finger joint (torque/effort control after
    disabling the default motor). By virtual work, ``E * d(gap) = f1 * dq1 + f2 * dq2`` with
    ``dq1 = dq2 = d(gap) / 2``, so ``f1 = f2 = E``: the squeeze force on a held object equals
    ``-effort``. Saturate at the actuator's limit, because ``max_effort = -1`` means unlimited.

    ``effort`` is the law ``E = -kp (gap - position) - kd (gap_velocity - velocity) + feedforward``
    clipped to ``max_effort`` (when >= 0), evaluated on the sample given to ``step``. A simulator
    whose finger mass is too small for kd = 5000 N s/m at its step (explicit damping is stable only
    when ``kd * dt / m < 2``) may instead apply the same law implicitly from ``position``,
    ``velocity``, ``kp``, ``kd``, ``feedforward`` and ``max_effort`` (e.g. PyBullet
    POSITION_CONTROL with the force bound), unless ``override`` is set. (``SimGripper.command_effort``
    in :mod:`py_trees_manipulation.sim.backend` already applies an effort this way.)

    The 7 N Coulomb feed-forward (``friction_effort``) cancels the PR2 transmission's friction. On a
    finger model without joint friction it flips by 14 N whenever the force error changes sign and
    can make the force servo limit-cycle around its set-point; there, set ``friction_effort`` to the
    simulated joint friction (0 for none) or give the finger joints that friction.

    Attributes:
        enabled: False in DISABLED: apply no effort (the gripper goes limp); ``effort`` is 0.
        effort: virtual joint effort, N; negative closes.
        position: gap set-point ``x_d`` after the deformation limit, m.
        velocity: desired gap velocity ``v_d``, m/s.
        feedforward: Coulomb feed-forward ``sgn(v_d) * 7 N``, N.
        max_effort: effort clip, N; < 0 means unlimited.
        kp, kd: position and velocity gains, N/m and N s/m.
        override: ``effort`` is a fixed command (the SlipServo "empty" close at ``drop_effort``),
            not the PD law; apply it as effort.
    """

    enabled: bool = False
    effort: float = 0.0
    position: float = 0.0
    velocity: float = 0.0
    feedforward: float = 0.0
    max_effort: float = -1.0
    kp: float = 0.0
    kd: float = 0.0
    override: bool = False


@dataclass
class ActionState:
    """One action's life, updated in place by :meth:`Pr2GripperController.step`.

    Attributes:
        name: ``gripper_action``, ``find_contact``, ``force_servo``, ``slip_servo``, ``grab``,
            ``release`` or ``event_detector``.
        goal: the command message.
        start_time: backend time the command was given, s.
        status: ACTIVE, then SUCCEEDED, ABORTED, PREEMPTED or REJECTED (actionlib numbers).
        reason: why it ended (empty while active or on plain success).
        result: the result data message once done (``*Data`` or Pr2GripperCommandResult).
        phase: Grab/Release sub-step (``open``, ``zeroing``, ``find_contact``, ``force_servo``,
            ``slip_servo``; ``waiting`` for Release); empty otherwise.
    """

    name: str
    goal: Any
    start_time: float
    status: GoalStatus = GoalStatus.ACTIVE
    reason: str = ""
    result: Any = None
    phase: str = ""

    @property
    def done(self) -> bool:
        return self.status.is_terminal

    @property
    def succeeded(self) -> bool:
        return self.status == GoalStatus.SUCCEEDED

    @property
    def aborted(self) -> bool:
        return self.status == GoalStatus.ABORTED


# ------------------------------------------------------------------------------------------------
# the controller
# ------------------------------------------------------------------------------------------------

class Pr2GripperController:
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
                                    p.slip_min_threshold, p.slip_max_threshold)
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
        self._stall_time = 0.0
        self._find_contact_start = 0.0
        self._phase_start = 0.0
        self.sensor_lost = False
        self.sensor_lost_reason = ""
        self.sensor_loss_count = 0
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
        self.state = RT.SLIP_SERVO

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
        self.events.step(self.acceleration, self.pressure)
        self._update_actions(dt, x, v)
        self.last_command = out
        return out

    # ---- modes -------------------------------------------------------------------------------------
    def _servo(self, x: float, v: float, x_d: float, v_d: float) -> ActuatorCommand:
        """Position/velocity servo with the deformation limit (reference §1.3, §1.4)."""
        p = self.params
        if p.deformation_limit >= 0 and x < self.marker - p.deformation_limit and x_d < x:
            x_d = self.marker - p.deformation_limit
        ff = math.copysign(p.friction_effort, v_d) if v_d != 0.0 else 0.0
        e = -p.position_gain * (x - x_d) - p.velocity_gain * (v - v_d) + ff
        if self.max_effort >= 0:
            e = min(max(e, -self.max_effort), self.max_effort)
        return ActuatorCommand(True, e, x_d, v_d, ff, self.max_effort, p.position_gain, p.velocity_gain)

    def _run_mode(self, dt: float, x: float, v: float, new_frame: bool) -> ActuatorCommand:
        s = self.state
        if s == RT.POSITION_SERVO:
            self.marker = x
            return self._servo(x, v, self.position_setpoint, 0.0)
        if s == RT.FIND_CONTACT:
            return self._find_contact_step(dt, x, v, new_frame)
        if s == RT.FORCE_SERVO:
            out = self._force_servo_step(dt, x, v, self.force_target)
            a = self.motion_action
            if a is not None and a.name == "grab" and not a.done:   # Grab's hold force: capped too
                out = self._force_capped(out)
            return out
        if s == RT.SLIP_SERVO:
            return self._slip_servo_step(dt, x, v, new_frame)
        return ActuatorCommand(enabled=False)

    def _force_capped(self, out: ActuatorCommand) -> ActuatorCommand:
        """``out`` with its effort, and its effort clip, bounded by ``fingertip_force_limit`` (when >= 0;
        floored at ``force_lightest``).

        The robot caps only the set-point ``F_s``; the position servo under it may then push with
        up to the actuator's limit, and a held object swinging or wedging between the pads (a shake
        reversal) is squeezed harder than the limit (23 N under a 20 N limit, 0.9 kg can). Bounding
        the actuator effort too makes the limit a bound on the squeeze: a finger pushed harder gives
        way instead of pushing back, and the pad force exceeds the limit only by the finger's own
        inertia in a contact transient.
        """
        p = self.params
        if p.fingertip_force_limit < 0:
            return out
        cap = max(p.fingertip_force_limit, p.force_lightest)
        if 0 <= out.max_effort < cap:
            cap = out.max_effort
        return dataclasses.replace(out, effort=min(max(out.effort, -cap), cap), max_effort=cap)

    def _find_contact_step(self, dt: float, x: float, v: float, new_frame: bool) -> ActuatorCommand:
        p = self.params
        pr = self.pressure
        if new_frame:
            flags = detect_contact(pr.pad_force, pr.pad_force_hp, p.hp_force_trigger, p.force_lightest - 0.25)
            self.left_contact, self.right_contact = bool(flags[0]), bool(flags[1])
        c = self._contact_conditions
        L, R = self.left_contact, self.right_contact
        met = ((L and R) if c == PR2GripperFindContactCommand.BOTH else
               L if c == PR2GripperFindContactCommand.LEFT else
               R if c == PR2GripperFindContactCommand.RIGHT else (L or R))
        self.marker = x
        self.force_setpoint = x
        if not met:
            if self._settling:             # contact flickered off: resume closing from here
                self._settling = False
                self.velocity_setpoint = x
            v_d = -p.close_speed
            self.velocity_setpoint += v_d * dt
            return self._servo(x, v, self.velocity_setpoint, v_d)
        self._settling = True
        self.contact_position = x
        self.contact_force = np.maximum(self.contact_force, pr.pad_force)
        self.contact_force_mean = max(self.contact_force_mean, 0.5 * (pr.pad_force_left + pr.pad_force_right))
        self.servo_force = self.contact_force_mean
        self.settle_time += dt
        out = self._servo(x, v, self.contact_position, 0.0)
        if self.settle_time >= p.contact_settle_time - 1e-9:
            self.contact_conditions_met = True
            self.position_setpoint = self.contact_position
            self.state = RT.POSITION_SERVO
        return out

    def _force_servo_step(self, dt: float, x: float, v: float, target: float) -> ActuatorCommand:
        p = self.params
        f_d = max(target, p.force_lightest)
        f_min = min(self.pressure.pad_force_left, self.pressure.pad_force_right)
        err = f_d - f_min
        gain = p.force_servo_gain_close if err > 0 else p.force_servo_gain_open
        v_d = min(max(-gain * err, -p.force_servo_velocity_limit), p.force_servo_velocity_limit)
        lead = self.force_setpoint - x
        w = p.force_servo_integrator_window
        if not ((lead > w and v_d > 0) or (lead < -w and v_d < 0)):
            self.force_setpoint += v_d * dt
        out = self._servo(x, v, self.force_setpoint, v_d)
        if abs(f_min - f_d) < p.force_servo_force_tolerance and abs(self.gap_velocity_lp) < p.force_servo_velocity_tolerance:
            self.stable_time += dt
        else:
            self.stable_time = 0.0       # B2: consecutive, not cumulative
        if self.stable_time >= p.force_stable_time - 1e-9:
            self.force_achieved = True
        if p.deformation_limit >= 0:
            self.deformation_limit_reached = x < self.marker - p.deformation_limit
        return out

    def _slip_servo_step(self, dt: float, x: float, v: float, new_frame: bool) -> ActuatorCommand:
        p = self.params
        pr = self.pressure
        if new_frame and pr.frames > 1:
            d = slip_thresholds(pr.pad_force, p.slip_motion_limit, p.slip_min_threshold, p.slip_max_threshold)
            vibration = np.abs(pr.pad_force_hp) > d
            bp = pr.pad_force_bp
            quiet = np.abs(bp) < p.slip_force_limit
            if not self._slip_settled and min(pr.pad_force_left, pr.pad_force_right) >= (
                    max(self.slip_force, p.force_lightest) - p.force_servo_force_tolerance):
                self._slip_settled = True     # the grip has reached the raised set-point
            if self._slip_settled and p.slip_bp_memory_waiver:
                # a positive band-passed force that only decays is the filter's memory of our own
                # increase, which the force has already followed: it does not veto
                quiet = quiet | ((bp > 0.0) & (bp <= self._slip_bp_prev + 1e-12))
            self._slip_bp_prev = bp.copy()
            self.slip_detected = bool((vibration & quiet).any())
            if self.slip_detected:
                self._slip_settled = False
                self.slip_force *= p.slip_force_increase
        if p.fingertip_force_limit >= 0 and self.slip_force >= p.fingertip_force_limit:
            self.slip_force = p.fingertip_force_limit
            self.fingertip_force_limit_reached = True
        out = self._force_capped(self._force_servo_step(dt, x, v, self.slip_force))
        light = 0.5 * (pr.pad_force_left + pr.pad_force_right) < p.force_lightest - 0.25
        if light:
            self._light_time += dt
        else:
            self._light_time = 0.0
        # B12: empty once the grip stayed light for gripper_empty_time (a light hold dips under
        # 0.95 N for a frame when the lift starts; the robot then closes at -100 N at once)
        if (light and self._light_time >= p.gripper_empty_time - 1e-9) or x <= p.drop_position:
            self.gripper_empty = True
            self.marker = x
            effort = p.drop_effort
            if p.fingertip_force_limit >= 0:   # B12: the "empty" close respects the force limit too
                effort = max(effort, -max(p.fingertip_force_limit, p.force_lightest))
            out = ActuatorCommand(True, effort, out.position, out.velocity, 0.0, self.max_effort,
                                  p.position_gain, p.velocity_gain, override=True)
        else:
            self.gripper_empty = False
        return out

    # ---- action layer -------------------------------------------------------------------------------
    def _stalled(self, dt: float, v: float) -> bool:
        if abs(v) <= self.params.stall_velocity_threshold:
            self._stall_time += dt
        else:
            self._stall_time = 0.0
        return self._stall_time > self.params.stall_time

    def _closed_on_nothing(self, x: float) -> bool:
        pr = self.pressure
        return x <= self.params.drop_position and min(pr.pad_force_left, pr.pad_force_right) < self.params.force_lightest - 0.25

    def _update_actions(self, dt: float, x: float, v: float) -> None:
        p = self.params
        a = self.motion_action
        if a is not None and not a.done:
            elapsed = self.time - a.start_time
            if a.name == "gripper_action":
                if abs(x - a.goal.position) < p.position_servo_position_tolerance:
                    self._end_motion(GoalStatus.SUCCEEDED, "")
                elif self._stalled(dt, v) and a.goal.max_effort != 0:
                    self._end_motion(GoalStatus.ABORTED, f"stalled at gap {x:.4f} m, goal {a.goal.position:.4f} m")
            elif a.name == "find_contact":
                if self._pending_find_contact is None:
                    self._check_find_contact(a, self.time - self._find_contact_start, x, self._end_motion)
            elif a.name == "force_servo":
                self._check_force_servo(a, elapsed, x, self._end_motion)
            elif a.name == "grab":
                self._update_grab(a, dt, x, v)
        e = self.event_action
        if e is not None and not e.done:
            elapsed = self.time - e.start_time
            if self.events.trigger_conditions_met and elapsed > p.event_detector_min_time:
                if e.name == "release":
                    self._end_motion(GoalStatus.PREEMPTED, "gripper opened by release")
                    self._rt_position(p.position_open, -1.0)
                    e.phase = "opening"
                self._end_event(GoalStatus.SUCCEEDED, "")
            elif e.name == "release" and elapsed > p.release_timeout:
                self._end_event(GoalStatus.ABORTED, f"no release event within {p.release_timeout:g} s; "
                                                    f"the gripper was left closed")

    def _check_find_contact(self, a: ActionState, elapsed: float, x: float, end: Any) -> Optional[bool]:
        """True on success, False on failure, None while running."""
        p = self.params
        if self.contact_conditions_met and self.state in (RT.POSITION_SERVO, RT.FIND_CONTACT):
            if elapsed >= p.find_contact_min_time - 1e-9:
                end(GoalStatus.SUCCEEDED, "", self.find_contact_data())
                return True
        elif self.state == RT.FIND_CONTACT and self._closed_on_nothing(x):
            end(GoalStatus.ABORTED, f"closed to {x:.4f} m without contact", self.find_contact_data())
            return False
        return None

    def _check_force_servo(self, a: ActionState, elapsed: float, x: float, end: Any) -> Optional[bool]:
        p = self.params
        if self.force_achieved and self.state == RT.FORCE_SERVO and elapsed >= p.force_servo_min_time - 1e-9:
            end(GoalStatus.SUCCEEDED, "", self.force_servo_data())
            return True
        if self._closed_on_nothing(x):
            end(GoalStatus.ABORTED, f"closed to {x:.4f} m without reaching the force", self.force_servo_data())
            return False
        return None

    def _update_grab(self, a: ActionState, dt: float, x: float, v: float) -> None:
        p = self.params
        t_phase = self.time - self._phase_start

        def fail(reason: str) -> None:
            self._end_motion(GoalStatus.ABORTED, f"grab {a.phase} failed: {reason}", self.grab_data())

        if a.phase == "open":
            if abs(x - p.position_open) < p.position_servo_position_tolerance or self._stalled(dt, v):
                self._grab_phase("find_contact")
            elif t_phase > p.grab_open_timeout:
                fail(f"gap {x:.4f} m not open after {p.grab_open_timeout:g} s")
        elif a.phase in ("zeroing", "find_contact"):
            if self._pending_find_contact is not None:
                return
            a.phase = "find_contact"
            if self.state not in (RT.FIND_CONTACT, RT.POSITION_SERVO):
                return
            elapsed = self.time - self._find_contact_start
            outcome = self._check_find_contact(a, elapsed, x, lambda *args: None)
            if outcome is True:
                data = self.find_contact_data()
                self.grab_contact_force = 0.5 * (data.left_fingertip_pad_force + data.right_fingertip_pad_force)
                hold = self.grab_contact_force / p.close_speed * a.goal.hardness_gain
                if p.fingertip_force_limit > 0:
                    hold = min(hold, p.fingertip_force_limit)
                self.grab_hold_force = hold
                self._grab_phase("force_servo")
            elif outcome is False:
                fail(f"closed to {x:.4f} m without contact")
            elif elapsed > p.grab_find_contact_timeout:
                fail(f"no contact within {p.grab_find_contact_timeout:g} s")
        elif a.phase == "force_servo":
            outcome = self._check_force_servo(a, t_phase, x, lambda *args: None)
            if outcome is True:
                self._grab_phase("slip_servo")
                self._end_motion(GoalStatus.SUCCEEDED, "", PR2GripperGrabData(PR2GripperSensorRTState(RT.SLIP_SERVO)))
            elif outcome is False:
                fail(f"closed to {x:.4f} m without reaching {self.grab_hold_force:.2f} N")
            elif t_phase > p.grab_force_servo_timeout:
                f = self.pressure.pad_force
                fail(f"{max(self.grab_hold_force, p.force_lightest):.2f} N not stable within "
                     f"{p.grab_force_servo_timeout:g} s (pad forces {f[0]:.2f}, {f[1]:.2f} N)")

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
