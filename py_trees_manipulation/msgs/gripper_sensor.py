"""pr2_gripper_sensor_msgs as dataclasses: commands, data and the action Goal/Feedback/Result.

Follows ``pr2_gripper_sensor_msgs`` (message and action definitions of the PR2 tactile gripper
stack, docs.ros.org/en/api/pr2_gripper_sensor_msgs). Field names, constants and units are exactly
those of ROS so that a message crosses rosbridge unchanged (:meth:`to_dict` / :meth:`from_dict`).

Differences from ROS, all at the Python boundary only:

- ``time stamp`` is a float in seconds (backend clock). :meth:`from_dict` also accepts a rosbridge
  time object ``{"secs", "nsecs"}`` (ROS 1) or ``{"sec", "nanosec"}`` (ROS 2).
- Fixed arrays (``float64[22]``, ``float64[3]``) are tuples of floats; their length is checked.
- ``__post_init__`` rejects values the robot would silently ignore or mis-handle:

  * a ``contact_conditions`` / ``trigger_conditions`` / ``realtime_controller_state`` that is not
    one of the message's constants;
  * negative or non-finite trigger magnitudes and ``hardness_gain``; a non-finite ``fingertip_force``.

A negative ``fingertip_force`` is accepted and ignored, as the message documentation says (the
controller servos to ``max(fingertip_force, 0)``, floored at ``force_lightest``).

Defaults are ROS's zero-initialisation, which the message comments give a meaning
(``contact_conditions = 0`` means BOTH, ``trigger_conditions = 0`` means
FINGER_SIDE_IMPACT_OR_ACC, a blank ``acceleration_trigger_magnitude`` is a 0 m/s^2 trigger that
fires at once). The values the documentation recommends are module constants:
:data:`RECOMMENDED_HARDNESS_GAIN`, :data:`RECOMMENDED_ACCELERATION_TRIGGER` and
:data:`RECOMMENDED_SLIP_TRIGGER`.

Actions (goal ``command``, feedback and result ``data``), keyed by the backend action name in
:data:`ACTIONS`: ``find_contact``, ``force_servo``, ``slip_servo``, ``grab``, ``release``,
``event_detector``.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping, Sequence

NUM_PRESSURE_CELLS = 22
"""Cells per PR2 fingertip pressure array (7 edge cells, 3x5 pad)."""

RECOMMENDED_HARDNESS_GAIN = 0.03
"""PR2GripperGrabCommand doc: "Try 0.03" (really m/s, see :class:`PR2GripperGrabCommand`)."""

RECOMMENDED_ACCELERATION_TRIGGER = 5.0
"""m/s^2; the doc's level for large planner motions (about 2.0 for small delicate motions)."""

RECOMMENDED_SLIP_TRIGGER = 0.01
"""PR2GripperEventDetectorCommand doc: "try 0.01" (dimensionless slip gain)."""


# ------------------------------------------------------------------------------------------------
# serialisation base
# ------------------------------------------------------------------------------------------------

def _stamp_from_json(value: Any) -> float:
    if isinstance(value, Mapping):
        if "secs" in value:
            return float(value["secs"]) + 1e-9 * float(value.get("nsecs", 0))
        if "sec" in value:
            return float(value["sec"]) + 1e-9 * float(value.get("nanosec", 0))
        raise ValueError(f"stamp: cannot read time object {dict(value)!r}")
    return float(value)


def _check_finite(name: str, value: float) -> None:
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")


def _check_choice(name: str, value: int, choices: Mapping[int, str]) -> None:
    if value not in choices:
        allowed = ", ".join(f"{v} ({n})" for v, n in choices.items())
        raise ValueError(f"{name} must be one of {allowed}; got {value!r}")


def _fixed_array(name: str, values: Sequence[float], length: int) -> tuple[float, ...]:
    out = tuple(float(v) for v in values)
    if len(out) != length:
        raise ValueError(f"{name} must have {length} elements, got {len(out)}")
    return out


class RosMessage:
    """Mixin: JSON/rosbridge conversion with ROS field names.

    ``ROS_TYPE`` is the ROS type name (``pr2_gripper_sensor_msgs/...``).
    """

    ROS_TYPE: ClassVar[str] = ""

    def to_dict(self) -> dict[str, Any]:
        """This message as plain JSON types (nested messages as dicts, arrays as lists).

        ``stamp`` is float seconds.
        """
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if isinstance(value, RosMessage):
                value = value.to_dict()
            elif isinstance(value, tuple):
                value = list(value)
            out[f.name] = value
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Any:
        """Build the message from :meth:`to_dict` output or a rosbridge message dict.

        Missing fields take their defaults (ROS zero-initialisation).

        Raises:
            ValueError: an unknown field, or a value that fails validation.
        """
        if not isinstance(data, Mapping):
            raise ValueError(f"{cls.__name__}.from_dict needs a mapping, got {type(data).__name__}")
        hints = _hints(cls)
        names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        unknown = set(data) - names
        if unknown:
            raise ValueError(f"{cls.__name__} has no field(s) {sorted(unknown)}; fields are {sorted(names)}")
        kwargs: dict[str, Any] = {}
        for name, value in data.items():
            hint = hints[name]
            if isinstance(hint, type) and issubclass(hint, RosMessage):
                kwargs[name] = value if isinstance(value, hint) else hint.from_dict(value)
            elif name == "stamp":
                kwargs[name] = _stamp_from_json(value)
            elif hint is bool:
                kwargs[name] = bool(value)
            elif hint is int:
                kwargs[name] = int(value)
            elif hint is float:
                kwargs[name] = float(value)
            else:
                kwargs[name] = value
        return cls(**kwargs)


_HINT_CACHE: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINT_CACHE:
        _HINT_CACHE[cls] = typing.get_type_hints(cls)
    return _HINT_CACHE[cls]


# ------------------------------------------------------------------------------------------------
# state
# ------------------------------------------------------------------------------------------------

@dataclass
class PR2GripperSensorRTState(RosMessage):
    """pr2_gripper_sensor_msgs/PR2GripperSensorRTState: the realtime controller's control state.

    Attributes:
        realtime_controller_state: one of DISABLED (0), POSITION_SERVO (3), FORCE_SERVO (4),
            FIND_CONTACT (5), SLIP_SERVO (6).
    """

    ROS_TYPE: ClassVar[str] = "pr2_gripper_sensor_msgs/PR2GripperSensorRTState"
    DISABLED: ClassVar[int] = 0
    POSITION_SERVO: ClassVar[int] = 3
    FORCE_SERVO: ClassVar[int] = 4
    FIND_CONTACT: ClassVar[int] = 5
    SLIP_SERVO: ClassVar[int] = 6
    NAMES: ClassVar[dict[int, str]] = {0: "DISABLED", 3: "POSITION_SERVO", 4: "FORCE_SERVO",
                                       5: "FIND_CONTACT", 6: "SLIP_SERVO"}

    realtime_controller_state: int = 0

    def __post_init__(self) -> None:
        _check_choice("realtime_controller_state", self.realtime_controller_state, self.NAMES)

    @property
    def name(self) -> str:
        """The constant's name, e.g. ``"FORCE_SERVO"``."""
        return self.NAMES[self.realtime_controller_state]


def _rtstate() -> PR2GripperSensorRTState:
    return PR2GripperSensorRTState()


# ------------------------------------------------------------------------------------------------
# commands
# ------------------------------------------------------------------------------------------------

@dataclass
class PR2GripperFindContactCommand(RosMessage):
    """pr2_gripper_sensor_msgs/PR2GripperFindContactCommand: close until the fingertips touch.

    Attributes:
        zero_fingertip_sensors: calibrate (zero) the fingertip sensors before closing. Only set it
            when both fingers touch nothing.
        contact_conditions: BOTH (0, default), LEFT (1), RIGHT (2) or EITHER (3).

    Raises:
        ValueError: ``contact_conditions`` is not one of the constants.
    """

    ROS_TYPE: ClassVar[str] = "pr2_gripper_sensor_msgs/PR2GripperFindContactCommand"
    BOTH: ClassVar[int] = 0
    LEFT: ClassVar[int] = 1
    RIGHT: ClassVar[int] = 2
    EITHER: ClassVar[int] = 3
    NAMES: ClassVar[dict[int, str]] = {0: "BOTH", 1: "LEFT", 2: "RIGHT", 3: "EITHER"}

    zero_fingertip_sensors: bool = False
    contact_conditions: int = 0

    def __post_init__(self) -> None:
        _check_choice("contact_conditions", self.contact_conditions, self.NAMES)


@dataclass
class PR2GripperForceServoCommand(RosMessage):
    """pr2_gripper_sensor_msgs/PR2GripperForceServoCommand: squeeze to a fingertip force.

    Attributes:
        fingertip_force: force per fingertip pad, newtons. The joint squeezes until *each*
            finger reaches it. A negative value (an opening force) is ignored, as the message
            documentation says: the controller uses 0, and never targets less than
            ``force_lightest`` (1.2 N). Doc: "10 N can crack an egg or crush a soda can. 15 N can
            firmly pick up a can of soup."

    Raises:
        ValueError: a non-finite ``fingertip_force``.
    """

    ROS_TYPE: ClassVar[str] = "pr2_gripper_sensor_msgs/PR2GripperForceServoCommand"

    fingertip_force: float = 0.0

    def __post_init__(self) -> None:
        _check_finite("fingertip_force", self.fingertip_force)


@dataclass
class PR2GripperSlipServoCommand(RosMessage):
    """pr2_gripper_sensor_msgs/PR2GripperSlipServoCommand: hold and raise the force on slip.

    Blank in ROS; the behaviour is set by the controller parameters (``slip_servo_start_force``,
    ``fingertip_force_limit``, ``deformation_limit``).
    """

    ROS_TYPE: ClassVar[str] = "pr2_gripper_sensor_msgs/PR2GripperSlipServoCommand"


@dataclass
class PR2GripperGrabCommand(RosMessage):
    """pr2_gripper_sensor_msgs/PR2GripperGrabCommand: open, find contact, load by hardness, hold.

    Attributes:
        hardness_gain: gain from contact stiffness to holding force, "Try 0.03"
            (:data:`RECOMMENDED_HARDNESS_GAIN`). The message says N/(m/s^2), but the formula
            ``F_hold = F_contact / close_speed * hardness_gain`` needs **m/s** (the T-RO paper's
            K_hardness = 0.027 m/s). A blank (0) gives the 1.2 N minimum hold.

    Raises:
        ValueError: negative or non-finite ``hardness_gain``.
    """

    ROS_TYPE: ClassVar[str] = "pr2_gripper_sensor_msgs/PR2GripperGrabCommand"

    hardness_gain: float = 0.0

    def __post_init__(self) -> None:
        _check_finite("hardness_gain", self.hardness_gain)
        if self.hardness_gain < 0:
            raise ValueError(f"hardness_gain must be >= 0 m/s, got {self.hardness_gain}")


@dataclass
class PR2GripperEventDetectorCommand(RosMessage):
    """pr2_gripper_sensor_msgs/PR2GripperEventDetectorCommand: what events to trigger on.

    Attributes:
        trigger_conditions: FINGER_SIDE_IMPACT_OR_ACC (0, default), SLIP_AND_ACC (1),
            FINGER_SIDE_IMPACT_OR_SLIP_OR_ACC (2), SLIP (3), ACC (4).
        acceleration_trigger_magnitude: palm acceleration magnitude (band-passed) to trigger on,
            m/s^2. 5 for large fast motions, about 2 for small delicate ones. 0 (blank) fires at once.
        slip_trigger_magnitude: slip detector gain (dimensionless), "try 0.01"; higher is less
            sensitive. 0 (blank) is the most sensitive level.

    Raises:
        ValueError: unknown ``trigger_conditions``; negative or non-finite magnitudes.
    """

    ROS_TYPE: ClassVar[str] = "pr2_gripper_sensor_msgs/PR2GripperEventDetectorCommand"
    FINGER_SIDE_IMPACT_OR_ACC: ClassVar[int] = 0
    SLIP_AND_ACC: ClassVar[int] = 1
    FINGER_SIDE_IMPACT_OR_SLIP_OR_ACC: ClassVar[int] = 2
    SLIP: ClassVar[int] = 3
    ACC: ClassVar[int] = 4
    NAMES: ClassVar[dict[int, str]] = {0: "FINGER_SIDE_IMPACT_OR_ACC", 1: "SLIP_AND_ACC",
                                       2: "FINGER_SIDE_IMPACT_OR_SLIP_OR_ACC", 3: "SLIP", 4: "ACC"}

    trigger_conditions: int = 0
    acceleration_trigger_magnitude: float = 0.0
    slip_trigger_magnitude: float = 0.0

    def __post_init__(self) -> None:
        _check_choice("trigger_conditions", self.trigger_conditions, self.NAMES)
        for name in ("acceleration_trigger_magnitude", "slip_trigger_magnitude"):
            value = getattr(self, name)
            _check_finite(name, value)
            if value < 0:
                raise ValueError(f"{name} must be >= 0, got {value}")


@dataclass
class PR2GripperReleaseCommand(RosMessage):
    """pr2_gripper_sensor_msgs/PR2GripperReleaseCommand: open when an event occurs.

    Attributes:
        event: the event conditions to release on.
    """

    ROS_TYPE: ClassVar[str] = "pr2_gripper_sensor_msgs/PR2GripperReleaseCommand"

    event: PR2GripperEventDetectorCommand = field(default_factory=PR2GripperEventDetectorCommand)


# ------------------------------------------------------------------------------------------------
# data
# ------------------------------------------------------------------------------------------------

@dataclass
class PR2GripperFindContactData(RosMessage):
    """pr2_gripper_sensor_msgs/PR2GripperFindContactData.

    Attributes:
        stamp: time the data was recorded, seconds.
        contact_conditions_met: the command's contact conditions have been met.
        left_fingertip_pad_contact, right_fingertip_pad_contact: contact event on that pad (static
            force or high-frequency force event).
        left_fingertip_pad_force, right_fingertip_pad_force: pad force, newtons (edges ignored).
        joint_position: gap at contact, metres.
        joint_effort: virtual parallel joint effort, newtons.
        rtstate: realtime controller state.
    """

    ROS_TYPE: ClassVar[str] = "pr2_gripper_sensor_msgs/PR2GripperFindContactData"

    stamp: float = 0.0
    contact_conditions_met: bool = False
    left_fingertip_pad_contact: bool = False
    right_fingertip_pad_contact: bool = False
    left_fingertip_pad_force: float = 0.0
    right_fingertip_pad_force: float = 0.0
    joint_position: float = 0.0
    joint_effort: float = 0.0
    rtstate: PR2GripperSensorRTState = field(default_factory=_rtstate)


@dataclass
class PR2GripperForceServoData(RosMessage):
    """pr2_gripper_sensor_msgs/PR2GripperForceServoData.

    Attributes:
        stamp: seconds.
        left_fingertip_pad_force, right_fingertip_pad_force: pad forces, newtons (edges ignored).
        joint_effort: virtual parallel joint effort, newtons.
        force_achieved: the gripper stopped moving at the desired force.
        rtstate: realtime controller state.
    """

    ROS_TYPE: ClassVar[str] = "pr2_gripper_sensor_msgs/PR2GripperForceServoData"

    stamp: float = 0.0
    left_fingertip_pad_force: float = 0.0
    right_fingertip_pad_force: float = 0.0
    joint_effort: float = 0.0
    force_achieved: bool = False
    rtstate: PR2GripperSensorRTState = field(default_factory=_rtstate)


@dataclass
class PR2GripperSlipServoData(RosMessage):
    """pr2_gripper_sensor_msgs/PR2GripperSlipServoData.

    Attributes:
        stamp: seconds.
        deformation: gap change since the action started, metres (negative while closing).
        left_fingertip_pad_force, right_fingertip_pad_force: pad forces, newtons (edges ignored).
        joint_effort: virtual parallel joint effort, newtons.
        slip_detected: the object recently slipped.
        deformation_limit_reached: at or beyond the deformation limit.
        fingertip_force_limit_reached: at or beyond ``fingertip_force_limit``.
        gripper_empty: the controller thinks the gripper is empty.
        rtstate: realtime controller state.
    """

    ROS_TYPE: ClassVar[str] = "pr2_gripper_sensor_msgs/PR2GripperSlipServoData"

    stamp: float = 0.0
    deformation: float = 0.0
    left_fingertip_pad_force: float = 0.0
    right_fingertip_pad_force: float = 0.0
    joint_effort: float = 0.0
    slip_detected: bool = False
    deformation_limit_reached: bool = False
    fingertip_force_limit_reached: bool = False
    gripper_empty: bool = False
    rtstate: PR2GripperSensorRTState = field(default_factory=_rtstate)


@dataclass
class PR2GripperGrabData(RosMessage):
    """pr2_gripper_sensor_msgs/PR2GripperGrabData: the realtime controller state."""

    ROS_TYPE: ClassVar[str] = "pr2_gripper_sensor_msgs/PR2GripperGrabData"

    rtstate: PR2GripperSensorRTState = field(default_factory=_rtstate)


@dataclass
class PR2GripperReleaseData(RosMessage):
    """pr2_gripper_sensor_msgs/PR2GripperReleaseData: the realtime controller state."""

    ROS_TYPE: ClassVar[str] = "pr2_gripper_sensor_msgs/PR2GripperReleaseData"

    rtstate: PR2GripperSensorRTState = field(default_factory=_rtstate)


@dataclass
class PR2GripperEventDetectorData(RosMessage):
    """pr2_gripper_sensor_msgs/PR2GripperEventDetectorData.

    Attributes:
        stamp: seconds.
        trigger_conditions_met: the command's trigger conditions have been met (latched).
        slip_event: the pressure sensors' high-frequency content exceeded the slip trigger.
        acceleration_event: the palm accelerometer's high-frequency content exceeded the trigger.
        acceleration_vector: last band-passed palm acceleration ``(x, y, z)``, m/s^2.
    """

    ROS_TYPE: ClassVar[str] = "pr2_gripper_sensor_msgs/PR2GripperEventDetectorData"

    stamp: float = 0.0
    trigger_conditions_met: bool = False
    slip_event: bool = False
    acceleration_event: bool = False
    acceleration_vector: tuple[float, ...] = (0.0, 0.0, 0.0)

    def __post_init__(self) -> None:
        self.acceleration_vector = _fixed_array("acceleration_vector", self.acceleration_vector, 3)


_ZEROS22 = (0.0,) * NUM_PRESSURE_CELLS


@dataclass
class PR2GripperSensorRawData(RosMessage):
    """pr2_gripper_sensor_msgs/PR2GripperSensorRawData (debugging only on the robot).

    Pad forces (``*_finger_pad_force*``) are newtons, corrected for zero contact; ``*_filtered`` are
    after the 5 Hz high-pass. The ``*_forces*`` arrays have 22 cells each (see
    :mod:`py_trees_manipulation.control.tactile` for the layout). Accelerations are m/s^2.
    """

    ROS_TYPE: ClassVar[str] = "pr2_gripper_sensor_msgs/PR2GripperSensorRawData"

    stamp: float = 0.0
    left_finger_pad_force: float = 0.0
    right_finger_pad_force: float = 0.0
    left_finger_pad_force_filtered: float = 0.0
    right_finger_pad_force_filtered: float = 0.0
    left_finger_pad_forces: tuple[float, ...] = _ZEROS22
    right_finger_pad_forces: tuple[float, ...] = _ZEROS22
    left_finger_pad_forces_filtered: tuple[float, ...] = _ZEROS22
    right_finger_pad_forces_filtered: tuple[float, ...] = _ZEROS22
    acc_x_raw: float = 0.0
    acc_y_raw: float = 0.0
    acc_z_raw: float = 0.0
    acc_x_filtered: float = 0.0
    acc_y_filtered: float = 0.0
    acc_z_filtered: float = 0.0
    left_contact: bool = False
    right_contact: bool = False

    def __post_init__(self) -> None:
        for name in ("left_finger_pad_forces", "right_finger_pad_forces",
                     "left_finger_pad_forces_filtered", "right_finger_pad_forces_filtered"):
            setattr(self, name, _fixed_array(name, getattr(self, name), NUM_PRESSURE_CELLS))


@dataclass
class PR2GripperPressureData(RosMessage):
    """pr2_gripper_sensor_msgs/PR2GripperPressureData (internal on the robot): one pressure frame.

    Attributes:
        pressure_left, pressure_right: 22 cells per finger (raw values).
        rostime: time of the frame, seconds.
    """

    ROS_TYPE: ClassVar[str] = "pr2_gripper_sensor_msgs/PR2GripperPressureData"

    pressure_left: tuple[float, ...] = _ZEROS22
    pressure_right: tuple[float, ...] = _ZEROS22
    rostime: float = 0.0

    def __post_init__(self) -> None:
        self.pressure_left = _fixed_array("pressure_left", self.pressure_left, NUM_PRESSURE_CELLS)
        self.pressure_right = _fixed_array("pressure_right", self.pressure_right, NUM_PRESSURE_CELLS)


# ------------------------------------------------------------------------------------------------
# actions: Goal{command}, Feedback{data}, Result{data}
# ------------------------------------------------------------------------------------------------

@dataclass
class PR2GripperFindContactGoal(RosMessage):
    """pr2_gripper_sensor_msgs/PR2GripperFindContactGoal."""

    ROS_TYPE: ClassVar[str] = "pr2_gripper_sensor_msgs/PR2GripperFindContactGoal"
    command: PR2GripperFindContactCommand = field(default_factory=PR2GripperFindContactCommand)


@dataclass
class PR2GripperFindContactFeedback(RosMessage):
    """pr2_gripper_sensor_msgs/PR2GripperFindContactFeedback."""

    ROS_TYPE: ClassVar[str] = "pr2_gripper_sensor_msgs/PR2GripperFindContactFeedback"
    data: PR2GripperFindContactData = field(default_factory=PR2GripperFindContactData)


@dataclass
class PR2GripperFindContactResult(RosMessage):
    """pr2_gripper_sensor_msgs/PR2GripperFindContactResult."""

    ROS_TYPE: ClassVar[str] = "pr2_gripper_sensor_msgs/PR2GripperFindContactResult"
    data: PR2GripperFindContactData = field(default_factory=PR2GripperFindContactData)


@dataclass
class PR2GripperForceServoGoal(RosMessage):
    """pr2_gripper_sensor_msgs/PR2GripperForceServoGoal."""

    ROS_TYPE: ClassVar[str] = "pr2_gripper_sensor_msgs/PR2GripperForceServoGoal"
    command: PR2GripperForceServoCommand = field(default_factory=PR2GripperForceServoCommand)


@dataclass
class PR2GripperForceServoFeedback(RosMessage):
    """pr2_gripper_sensor_msgs/PR2GripperForceServoFeedback."""

    ROS_TYPE: ClassVar[str] = "pr2_gripper_sensor_msgs/PR2GripperForceServoFeedback"
    data: PR2GripperForceServoData = field(default_factory=PR2GripperForceServoData)


@dataclass
class PR2GripperForceServoResult(RosMessage):
    """pr2_gripper_sensor_msgs/PR2GripperForceServoResult."""

    ROS_TYPE: ClassVar[str] = "pr2_gripper_sensor_msgs/PR2GripperForceServoResult"
    data: PR2GripperForceServoData = field(default_factory=PR2GripperForceServoData)


@dataclass
class PR2GripperSlipServoGoal(RosMessage):
    """pr2_gripper_sensor_msgs/PR2GripperSlipServoGoal."""

    ROS_TYPE: ClassVar[str] = "pr2_gripper_sensor_msgs/PR2GripperSlipServoGoal"
    command: PR2GripperSlipServoCommand = field(default_factory=PR2GripperSlipServoCommand)


@dataclass
class PR2GripperSlipServoFeedback(RosMessage):
    """pr2_gripper_sensor_msgs/PR2GripperSlipServoFeedback."""

    ROS_TYPE: ClassVar[str] = "pr2_gripper_sensor_msgs/PR2GripperSlipServoFeedback"
    data: PR2GripperSlipServoData = field(default_factory=PR2GripperSlipServoData)


@dataclass
class PR2GripperSlipServoResult(RosMessage):
    """pr2_gripper_sensor_msgs/PR2GripperSlipServoResult."""

    ROS_TYPE: ClassVar[str] = "pr2_gripper_sensor_msgs/PR2GripperSlipServoResult"
    data: PR2GripperSlipServoData = field(default_factory=PR2GripperSlipServoData)


@dataclass
class PR2GripperGrabGoal(RosMessage):
    """pr2_gripper_sensor_msgs/PR2GripperGrabGoal."""

    ROS_TYPE: ClassVar[str] = "pr2_gripper_sensor_msgs/PR2GripperGrabGoal"
    command: PR2GripperGrabCommand = field(default_factory=PR2GripperGrabCommand)


@dataclass
class PR2GripperGrabFeedback(RosMessage):
    """pr2_gripper_sensor_msgs/PR2GripperGrabFeedback."""

    ROS_TYPE: ClassVar[str] = "pr2_gripper_sensor_msgs/PR2GripperGrabFeedback"
    data: PR2GripperGrabData = field(default_factory=PR2GripperGrabData)


@dataclass
class PR2GripperGrabResult(RosMessage):
    """pr2_gripper_sensor_msgs/PR2GripperGrabResult."""

    ROS_TYPE: ClassVar[str] = "pr2_gripper_sensor_msgs/PR2GripperGrabResult"
    data: PR2GripperGrabData = field(default_factory=PR2GripperGrabData)


@dataclass
class PR2GripperReleaseGoal(RosMessage):
    """pr2_gripper_sensor_msgs/PR2GripperReleaseGoal."""

    ROS_TYPE: ClassVar[str] = "pr2_gripper_sensor_msgs/PR2GripperReleaseGoal"
    command: PR2GripperReleaseCommand = field(default_factory=PR2GripperReleaseCommand)


@dataclass
class PR2GripperReleaseFeedback(RosMessage):
    """pr2_gripper_sensor_msgs/PR2GripperReleaseFeedback."""

    ROS_TYPE: ClassVar[str] = "pr2_gripper_sensor_msgs/PR2GripperReleaseFeedback"
    data: PR2GripperReleaseData = field(default_factory=PR2GripperReleaseData)


@dataclass
class PR2GripperReleaseResult(RosMessage):
    """pr2_gripper_sensor_msgs/PR2GripperReleaseResult."""

    ROS_TYPE: ClassVar[str] = "pr2_gripper_sensor_msgs/PR2GripperReleaseResult"
    data: PR2GripperReleaseData = field(default_factory=PR2GripperReleaseData)


@dataclass
class PR2GripperEventDetectorGoal(RosMessage):
    """pr2_gripper_sensor_msgs/PR2GripperEventDetectorGoal."""

    ROS_TYPE: ClassVar[str] = "pr2_gripper_sensor_msgs/PR2GripperEventDetectorGoal"
    command: PR2GripperEventDetectorCommand = field(default_factory=PR2GripperEventDetectorCommand)


@dataclass
class PR2GripperEventDetectorFeedback(RosMessage):
    """pr2_gripper_sensor_msgs/PR2GripperEventDetectorFeedback."""

    ROS_TYPE: ClassVar[str] = "pr2_gripper_sensor_msgs/PR2GripperEventDetectorFeedback"
    data: PR2GripperEventDetectorData = field(default_factory=PR2GripperEventDetectorData)


@dataclass
class PR2GripperEventDetectorResult(RosMessage):
    """pr2_gripper_sensor_msgs/PR2GripperEventDetectorResult."""

    ROS_TYPE: ClassVar[str] = "pr2_gripper_sensor_msgs/PR2GripperEventDetectorResult"
    data: PR2GripperEventDetectorData = field(default_factory=PR2GripperEventDetectorData)


@dataclass(frozen=True)
class ActionSpec:
    """The three message types of one action, and the command type its goal wraps."""

    name: str
    ros_type: str
    goal: type
    feedback: type
    result: type
    command: type
    data: type


ACTIONS: dict[str, ActionSpec] = {
    spec.name: spec for spec in (
        ActionSpec("find_contact", "pr2_gripper_sensor_msgs/PR2GripperFindContact",
                   PR2GripperFindContactGoal, PR2GripperFindContactFeedback, PR2GripperFindContactResult,
                   PR2GripperFindContactCommand, PR2GripperFindContactData),
        ActionSpec("force_servo", "pr2_gripper_sensor_msgs/PR2GripperForceServo",
                   PR2GripperForceServoGoal, PR2GripperForceServoFeedback, PR2GripperForceServoResult,
                   PR2GripperForceServoCommand, PR2GripperForceServoData),
        ActionSpec("slip_servo", "pr2_gripper_sensor_msgs/PR2GripperSlipServo",
                   PR2GripperSlipServoGoal, PR2GripperSlipServoFeedback, PR2GripperSlipServoResult,
                   PR2GripperSlipServoCommand, PR2GripperSlipServoData),
        ActionSpec("grab", "pr2_gripper_sensor_msgs/PR2GripperGrab",
                   PR2GripperGrabGoal, PR2GripperGrabFeedback, PR2GripperGrabResult,
                   PR2GripperGrabCommand, PR2GripperGrabData),
        ActionSpec("release", "pr2_gripper_sensor_msgs/PR2GripperRelease",
                   PR2GripperReleaseGoal, PR2GripperReleaseFeedback, PR2GripperReleaseResult,
                   PR2GripperReleaseCommand, PR2GripperReleaseData),
        ActionSpec("event_detector", "pr2_gripper_sensor_msgs/PR2GripperEventDetector",
                   PR2GripperEventDetectorGoal, PR2GripperEventDetectorFeedback,
                   PR2GripperEventDetectorResult, PR2GripperEventDetectorCommand,
                   PR2GripperEventDetectorData),
    )
}
"""Backend action name -> its message types (the backend's gripper actions, see backend.py)."""

MESSAGE_TYPES: dict[str, type] = {
    cls.ROS_TYPE: cls
    for cls in list(globals().values())
    if isinstance(cls, type) and issubclass(cls, RosMessage) and cls is not RosMessage
}
"""ROS type name (``pr2_gripper_sensor_msgs/...``) -> dataclass, for every message here."""

__all__ = [name for name, obj in globals().items()
           if (isinstance(obj, type) and issubclass(obj, RosMessage))] + [
    "ACTIONS", "ActionSpec", "MESSAGE_TYPES", "NUM_PRESSURE_CELLS", "RECOMMENDED_HARDNESS_GAIN",
    "RECOMMENDED_ACCELERATION_TRIGGER", "RECOMMENDED_SLIP_TRIGGER"]
