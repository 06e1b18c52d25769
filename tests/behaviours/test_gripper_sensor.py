"""FindContact, ForceServo, SlipServo, Grab, EventDetector and Release against the scripted fake backend."""

import py_trees
import pytest
from py_trees.common import Status

from py_trees_manipulation.behaviors.gripper_sensor import (
    EventDetector,
    FindContact,
    ForceServo,
    Grab,
    Release,
    SlipServo,
)
from py_trees_manipulation.behaviors.params import ParamError
from py_trees_manipulation.behaviors.registry import behaviours, load_builtin_and_plugins
from py_trees_manipulation.msgs import gripper_sensor as gs
from py_trees_manipulation.msgs.actions import GoalStatus
from py_trees_manipulation.testing import FakeBackend, Script, tick_until_done

DT = 1.0 / 30.0


def run(behaviour, backend, ticks=100):
    return tick_until_done(behaviour, backend, ticks, DT)


def contact_data(met=True, left=1.3, right=1.1, gap=0.045):
    return gs.PR2GripperFindContactData(stamp=1.0, contact_conditions_met=met, left_fingertip_pad_contact=met,
                                        right_fingertip_pad_contact=met, left_fingertip_pad_force=left,
                                        right_fingertip_pad_force=right, joint_position=gap)


def test_find_contact_goal_carries_the_pr2_fields_and_the_data_reaches_the_blackboard():
    b = FakeBackend()
    b.grippers["panda"].script("find_contact", Script(
        duration_s=0.3, result=gs.PR2GripperFindContactResult(contact_data()),
        feedback=gs.PR2GripperFindContactFeedback(contact_data(met=False, left=0.0, right=0.0, gap=0.06))))
    node = FindContact(contact_conditions="EITHER", zero_fingertip_sensors=True, data_key="contact",
                       result_key="contact_result")
    status, ticks = run(node, b)
    assert status == Status.SUCCESS
    assert 9 <= ticks <= 11  # 0.3 s at 30 Hz
    action, goal = b.grippers["panda"].goals[0]
    assert action == "find_contact"
    assert isinstance(goal, gs.PR2GripperFindContactGoal)
    assert goal.command.contact_conditions == gs.PR2GripperFindContactCommand.EITHER == 3
    assert goal.command.zero_fingertip_sensors is True
    data = py_trees.blackboard.Blackboard.get("/contact")
    assert data.joint_position == pytest.approx(0.045)
    assert isinstance(py_trees.blackboard.Blackboard.get("/contact_result"), gs.PR2GripperFindContactResult)
    assert "gap 45.0 mm" in node.feedback_message and "1.30 / 1.10 N" in node.feedback_message


def test_find_contact_fails_when_the_gripper_closes_on_nothing():
    b = FakeBackend()
    b.grippers["panda"].script("find_contact", Script(
        outcome="aborted", duration_s=0.2, text="closed to 0.0021 m without contact",
        result=gs.PR2GripperFindContactResult(contact_data(met=False, left=0.0, right=0.0, gap=0.0021))))
    node = FindContact(data_key="contact")
    status, _ = run(node, b)
    assert status == Status.FAILURE
    assert "closed to 0.0021 m without contact" in node.feedback_message
    assert py_trees.blackboard.Blackboard.get("/contact").contact_conditions_met is False


def test_a_rejected_goal_fails_at_once_with_the_servers_reason():
    """Plumbing only: the fake backend replays a rejection. The controller's own refusal of a lost
    fingertip sensor is tested in tests/unit/test_gripper_controller.py and, through the simulator
    and over rosbridge, in tests/unit/test_hardware_faults.py."""
    b = FakeBackend()
    b.grippers["panda"].script("force_servo", Script(outcome="rejected",
                                                     text="right fingertip pressure sensor lost (all cells read 0)"))
    node = ForceServo(fingertip_force=4.0)
    status, ticks = run(node, b)
    assert (status, ticks) == (Status.FAILURE, 1)
    assert node.feedback_message == "force_servo goal rejected: right fingertip pressure sensor lost (all cells read 0)"


def test_force_servo_sends_newtons_and_rejects_negative_forces():
    b = FakeBackend()
    b.grippers["panda"].script("force_servo", Script(duration_s=0.1))
    assert run(ForceServo(fingertip_force=2.5), b)[0] == Status.SUCCESS
    assert b.grippers["panda"].goals[0][1].command.fingertip_force == 2.5
    with pytest.raises(ParamError):
        ForceServo(fingertip_force=-1.0)


def test_unknown_condition_name_is_refused_with_the_choices():
    with pytest.raises(ParamError) as e:
        FindContact(contact_conditions="BOTHH")
    assert "BOTH" in str(e.value)
    with pytest.raises(ParamError):
        EventDetector(trigger_conditions="SLIP_OR_ACC")


def test_event_detector_and_release_send_the_trigger_codes():
    b = FakeBackend()
    g = b.grippers["panda"]
    g.script("event_detector", Script(duration_s=0.2))
    g.script("release", Script(duration_s=0.2))
    ev = EventDetector(trigger_conditions="SLIP_AND_ACC", acceleration_trigger_magnitude=2.0,
                       slip_trigger_magnitude=0.005)
    assert run(ev, b)[0] == Status.SUCCESS
    cmd = g.goals[0][1].command
    assert (cmd.trigger_conditions, cmd.acceleration_trigger_magnitude, cmd.slip_trigger_magnitude) == (1, 2.0, 0.005)
    assert run(Release(trigger_conditions="ACC", acceleration_trigger_magnitude=0.0), b)[0] == Status.SUCCESS
    goal = g.goals[1][1]
    assert isinstance(goal, gs.PR2GripperReleaseGoal)
    assert goal.command.event.trigger_conditions == gs.PR2GripperEventDetectorCommand.ACC == 4


def test_an_aborted_goal_fails_with_the_servers_reason():
    """Plumbing only: the fake backend replays an abort. The controller's Release timeout and its
    abort on a lost fingertip sensor are tested in tests/unit/test_gripper_controller.py; a
    SlipServo hold failing on a dropout in the simulator in tests/scenarios/*.scenario.yaml."""
    b = FakeBackend()
    b.grippers["panda"].script("release", Script(outcome="aborted", duration_s=0.5,
                                                 text="no release event within 30 s; the gripper was left closed"))
    node = Release()
    status, ticks = run(node, b)
    assert status == Status.FAILURE and 15 <= ticks <= 17   # 0.5 s at 30 Hz
    assert node.feedback_message == "release aborted: no release event within 30 s; the gripper was left closed"


def test_grab_sends_the_hardness_gain_in_m_per_s():
    b = FakeBackend()
    b.grippers["panda"].script("grab", Script(duration_s=1.0))
    status, ticks = run(Grab(hardness_gain=0.027), b)
    assert status == Status.SUCCESS and 30 <= ticks <= 32
    assert b.grippers["panda"].goals[0][1].command.hardness_gain == 0.027


def slip_feedback(empty):
    return lambda goal, t: gs.PR2GripperSlipServoFeedback(gs.PR2GripperSlipServoData(
        stamp=t, left_fingertip_pad_force=0.1, right_fingertip_pad_force=0.1, gripper_empty=empty(t)))


def test_slip_servo_runs_until_its_duration_then_cancels_its_goal():
    b = FakeBackend()
    b.grippers["panda"].script("slip_servo", Script(outcome="hang", feedback=slip_feedback(lambda t: False)))
    node = SlipServo(duration_s=1.0)
    status, ticks = run(node, b)
    assert status == Status.SUCCESS and 30 <= ticks <= 32
    assert b.grippers["panda"].cancels == [("slip_servo", GoalStatus.ACTIVE)]


def test_slip_servo_fails_when_the_gripper_stays_empty():
    b = FakeBackend()
    b.grippers["panda"].script("slip_servo", Script(outcome="hang", feedback=slip_feedback(lambda t: t > 0.5)))
    node = SlipServo(fail_when_empty=True, empty_time_s=0.2)
    status, ticks = run(node, b)
    assert status == Status.FAILURE
    assert 0.5 + 0.2 <= (ticks - 1) * DT <= 0.5 + 0.2 + 2 * DT  # empty from t > 0.5 s, failed 0.2 s later
    assert "gripper empty" in node.feedback_message
    assert b.grippers["panda"].cancels  # the goal was cancelled


def test_preemption_cancels_the_goal():
    b = FakeBackend()
    b.grippers["panda"].script("event_detector", Script(outcome="hang"))
    node = EventDetector()
    tree = py_trees.trees.BehaviourTree(root=node)
    tree.setup(backend=b)
    tree.tick()
    assert node.status == Status.RUNNING
    node.stop(Status.INVALID)
    assert b.grippers["panda"].cancels == [("event_detector", GoalStatus.ACTIVE)]


def test_behaviours_are_registered_builtins():
    load_builtin_and_plugins()
    registry = behaviours()
    for name in ("FindContact", "ForceServo", "SlipServo", "Grab", "EventDetector", "Release"):
        assert name in registry
