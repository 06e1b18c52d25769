"""pr2_gripper_sensor_msgs dataclasses: constants, defaults, validation, JSON/rosbridge round trips."""

from __future__ import annotations

import dataclasses
import json

import pytest

from py_trees_manipulation.msgs import gripper_sensor as gs
from py_trees_manipulation.msgs.gripper_sensor import (
    ACTIONS,
    MESSAGE_TYPES,
    PR2GripperEventDetectorCommand,
    PR2GripperEventDetectorData,
    PR2GripperFindContactCommand,
    PR2GripperFindContactData,
    PR2GripperForceServoCommand,
    PR2GripperGrabCommand,
    PR2GripperPressureData,
    PR2GripperReleaseCommand,
    PR2GripperReleaseGoal,
    PR2GripperSensorRawData,
    PR2GripperSensorRTState,
    PR2GripperSlipServoData,
)


def test_constants_have_the_ros_values():
    assert (PR2GripperFindContactCommand.BOTH, PR2GripperFindContactCommand.LEFT,
            PR2GripperFindContactCommand.RIGHT, PR2GripperFindContactCommand.EITHER) == (0, 1, 2, 3)
    e = PR2GripperEventDetectorCommand
    assert (e.FINGER_SIDE_IMPACT_OR_ACC, e.SLIP_AND_ACC, e.FINGER_SIDE_IMPACT_OR_SLIP_OR_ACC,
            e.SLIP, e.ACC) == (0, 1, 2, 3, 4)
    s = PR2GripperSensorRTState
    assert (s.DISABLED, s.POSITION_SERVO, s.FORCE_SERVO, s.FIND_CONTACT, s.SLIP_SERVO) == (0, 3, 4, 5, 6)
    assert PR2GripperSensorRTState(4).name == "FORCE_SERVO"


def test_defaults_are_ros_zero_initialisation():
    assert PR2GripperFindContactCommand() == PR2GripperFindContactCommand(False, 0)
    assert PR2GripperEventDetectorCommand().acceleration_trigger_magnitude == 0.0
    assert PR2GripperGrabCommand().hardness_gain == 0.0
    assert PR2GripperReleaseCommand().event == PR2GripperEventDetectorCommand()
    assert PR2GripperSlipServoData().rtstate.realtime_controller_state == PR2GripperSensorRTState.DISABLED
    assert PR2GripperEventDetectorData().acceleration_vector == (0.0, 0.0, 0.0)
    assert len(PR2GripperSensorRawData().left_finger_pad_forces_filtered) == 22
    assert gs.RECOMMENDED_HARDNESS_GAIN == 0.03 and gs.RECOMMENDED_SLIP_TRIGGER == 0.01


def test_field_names_match_the_ros_definitions():
    assert [f.name for f in dataclasses.fields(PR2GripperSlipServoData)] == [
        "stamp", "deformation", "left_fingertip_pad_force", "right_fingertip_pad_force", "joint_effort",
        "slip_detected", "deformation_limit_reached", "fingertip_force_limit_reached", "gripper_empty",
        "rtstate"]
    assert [f.name for f in dataclasses.fields(PR2GripperFindContactData)] == [
        "stamp", "contact_conditions_met", "left_fingertip_pad_contact", "right_fingertip_pad_contact",
        "left_fingertip_pad_force", "right_fingertip_pad_force", "joint_position", "joint_effort", "rtstate"]
    assert [f.name for f in dataclasses.fields(PR2GripperEventDetectorCommand)] == [
        "trigger_conditions", "acceleration_trigger_magnitude", "slip_trigger_magnitude"]
    assert [f.name for f in dataclasses.fields(PR2GripperPressureData)] == [
        "pressure_left", "pressure_right", "rostime"]
    assert len(dataclasses.fields(PR2GripperSensorRawData)) == 17


def test_negative_fingertip_force_is_accepted_and_a_non_finite_one_refused():
    # the message documentation: negative values (opening forces) are ignored; the controller uses 0
    assert PR2GripperForceServoCommand(-1.0).fingertip_force == -1.0
    with pytest.raises(ValueError, match="fingertip_force"):
        PR2GripperForceServoCommand(float("nan"))


def test_unknown_contact_conditions_lists_the_allowed_values():
    with pytest.raises(ValueError) as err:
        PR2GripperFindContactCommand(contact_conditions=4)
    text = str(err.value)
    assert "contact_conditions" in text
    for name in ("0 (BOTH)", "1 (LEFT)", "2 (RIGHT)", "3 (EITHER)"):
        assert name in text


def test_unknown_trigger_conditions_lists_the_allowed_values():
    with pytest.raises(ValueError) as err:
        PR2GripperEventDetectorCommand(trigger_conditions=5)
    text = str(err.value)
    assert "trigger_conditions" in text and "4 (ACC)" in text and "1 (SLIP_AND_ACC)" in text


@pytest.mark.parametrize("make", [
    lambda: PR2GripperEventDetectorCommand(0, -1.0, 0.0),
    lambda: PR2GripperEventDetectorCommand(0, 1.0, -0.01),
    lambda: PR2GripperEventDetectorCommand(0, float("nan"), 0.0),
    lambda: PR2GripperGrabCommand(-0.03),
    lambda: PR2GripperSensorRTState(1),
    lambda: PR2GripperEventDetectorData(acceleration_vector=(1.0, 2.0)),
    lambda: PR2GripperPressureData(pressure_left=(0.0,) * 21),
])
def test_invalid_values_raise(make):
    with pytest.raises(ValueError):
        make()


@pytest.mark.parametrize("ros_type", sorted(MESSAGE_TYPES))
def test_every_message_round_trips_through_json(ros_type):
    cls = MESSAGE_TYPES[ros_type]
    msg = cls()
    text = json.dumps(msg.to_dict())
    assert cls.from_dict(json.loads(text)) == msg
    assert cls.ROS_TYPE == ros_type and ros_type.startswith("pr2_gripper_sensor_msgs/")


def test_there_are_15_messages_and_6_actions():
    assert len(ACTIONS) == 6
    assert len(MESSAGE_TYPES) == 15 + 6 * 3


def test_nested_goal_to_dict_uses_ros_names_and_values():
    goal = PR2GripperReleaseGoal(PR2GripperReleaseCommand(PR2GripperEventDetectorCommand(2, 5.0, 0.01)))
    assert goal.to_dict() == {"command": {"event": {"trigger_conditions": 2,
                                                    "acceleration_trigger_magnitude": 5.0,
                                                    "slip_trigger_magnitude": 0.01}}}
    assert PR2GripperReleaseGoal.from_dict(goal.to_dict()) == goal


def test_from_dict_reads_rosbridge_time_objects():
    ros1 = PR2GripperSlipServoData.from_dict({"stamp": {"secs": 12, "nsecs": 250_000_000}})
    ros2 = PR2GripperSlipServoData.from_dict({"stamp": {"sec": 3, "nanosec": 5_000_000}})
    assert ros1.stamp == pytest.approx(12.25)
    assert ros2.stamp == pytest.approx(3.005)


def test_from_dict_converts_nested_state_and_arrays():
    data = PR2GripperEventDetectorData.from_dict({"stamp": 1.5, "acceleration_vector": [1, 2, 3],
                                                  "trigger_conditions_met": 1})
    assert data.acceleration_vector == (1.0, 2.0, 3.0) and data.trigger_conditions_met is True
    d = PR2GripperFindContactData.from_dict({"rtstate": {"realtime_controller_state": 5}})
    assert d.rtstate == PR2GripperSensorRTState(PR2GripperSensorRTState.FIND_CONTACT)


def test_from_dict_rejects_unknown_fields_and_bad_nested_values():
    with pytest.raises(ValueError, match="fingertip_forc"):
        PR2GripperForceServoCommand.from_dict({"fingertip_forc": 3.0})
    with pytest.raises(ValueError, match="contact_conditions"):
        gs.PR2GripperFindContactGoal.from_dict({"command": {"contact_conditions": 9}})


@pytest.mark.parametrize("name", sorted(ACTIONS))
def test_action_wrappers_hold_command_and_data(name):
    spec = ACTIONS[name]
    goal, fb, res = spec.goal(), spec.feedback(), spec.result()
    assert isinstance(goal.command, spec.command)
    assert isinstance(fb.data, spec.data) and isinstance(res.data, spec.data)
    assert spec.ros_type.endswith(spec.goal.__name__[: -len("Goal")].split("/")[-1])
    assert spec.result.ROS_TYPE == spec.ros_type + "Result"
