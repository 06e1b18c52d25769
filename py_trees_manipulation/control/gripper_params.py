"""Parameters, inputs and outputs of the PR2 tactile gripper controller
(:class:`~.gripper_controller.Pr2GripperController`): :class:`ControllerParams` (the robot's
defaults, :meth:`ControllerParams.for_gripper` for any parallel gripper), the per-cycle
:class:`SensorSample` and :class:`ActuatorCommand`, and the :class:`ActionState` each command returns.

Moved out of :mod:`.gripper_controller` (issue 37 item 6), which re-exports these names.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Mapping, Optional

import numpy as np
from numpy.typing import NDArray

from ..msgs.actions import GoalStatus
from ..msgs.gripper_sensor import PR2GripperSensorRTState

RT = PR2GripperSensorRTState


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
        force_servo_loop_gain: the largest fraction of the force error one pressure frame's
            correction may remove on the grasp's measured stiffness ``K`` (the pad force's slope
            against the gap over the last frames): the gain is at most
            ``force_servo_loop_gain / (K frame)`` (0.5; not on the robot, F1). 0: off.
        slip_force_increase: factor per slipping pressure frame (1.08; robot 1.002 per ms, B13).
        slip_bp_memory_waiver: once the grip has reached the raised set-point, a positive, decaying
            band-passed force does not veto slip (True; robot False, B16).
        slip_bp_pressed_waiver: a pad pressed past the SlipServo set-point by more than the
            servo could overshoot it (``force_servo_force_tolerance``, or the set-point's last
            change), and still rising, slips whatever its band-passed force: the band-pass veto is
            there for the servo's own changes (True; robot False, B16).
        slip_bp_short_waiver: while the grip is short of the SlipServo set-point (the weaker pad
            more than ``force_servo_force_tolerance`` under it) the servo is closing: its own doing
            raises the pad forces, so the squeeze (the pads' mean) falling by more than the slip
            threshold in a frame slips whatever its band-passed force (True; robot False, B16).
        load_anticipation: the slip servo's set-point rises to the grip the arm's coming motion
            needs (:meth:`~.gripper_controller.Pr2GripperController.anticipate_grip`) (True; not on
            the robot, F2).
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
    force_servo_loop_gain: float = 0.5
    slip_force_increase: float = 1.08
    slip_bp_memory_waiver: bool = True
    slip_bp_pressed_waiver: bool = True
    slip_bp_short_waiver: bool = True
    load_anticipation: bool = True
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
                     "find_contact_min_time", "force_servo_min_time", "event_detector_min_time", "force_servo_loop_gain",
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

    @property
    def force_cap(self) -> float:
        """The most any pad may be pressed with, N: ``fingertip_force_limit`` floored at
        ``force_lightest`` (the force servo's least target), ``inf`` when the limit is off (< 0)."""
        if self.fingertip_force_limit < 0:
            return math.inf
        return max(self.fingertip_force_limit, self.force_lightest)

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
    in :mod:`py_trees_manipulation.sim.gripper` already applies an effort this way.)

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
