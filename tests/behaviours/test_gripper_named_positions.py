"""GripperCommand's position 'open' and 'closed': the gripper's own opening range, not a number in
the tree (the simulator's grippers take it from the robot description)."""

from py_trees.common import Status

from py_trees_manipulation.behaviors.motion import GripperCommand
from py_trees_manipulation.control.gripper_controller import ControllerParams
from py_trees_manipulation.msgs.motion import Pr2GripperCommandResult
from py_trees_manipulation.testing import FakeBackend, Script, tick_until_done


def test_open_and_closed_send_the_grippers_own_range():
    b = FakeBackend()
    g = b.grippers["panda"]
    g.max_gap_m, g.min_gap_m = 0.104, 0.0
    for position, sent in (("open", 0.104), ("closed", 0.0), (0.03, 0.03)):
        status, _ = tick_until_done(GripperCommand(position=position), b)
        assert status == Status.SUCCESS
        assert g.goals[-1][1].position == sent


def test_open_on_a_gripper_that_does_not_say_how_far_it_opens_fails_with_the_fix():
    b = FakeBackend()
    del b.grippers["panda"].max_gap_m
    node = GripperCommand(position="open")
    status, _ = tick_until_done(node, b)
    assert status == Status.FAILURE
    assert "does not say how far it opens; give position in metres" in node.feedback_message


def test_closed_on_nothing_is_measured_from_the_grippers_closed_gap():
    b = FakeBackend()
    g = b.grippers["panda"]
    g.min_gap_m = 0.01            # fingers that stop 10 mm apart
    g.script("gripper_action", Script(duration_s=0.2, result=Pr2GripperCommandResult(0.011, 5.0, False, True)))
    node = GripperCommand(position="closed", expect_object=True)
    status, _ = tick_until_done(node, b)
    assert status == Status.FAILURE and node.feedback_message == "closed on nothing (gap 11.0 mm)"


def test_controller_params_follow_the_gripper_opening():
    p = ControllerParams.for_gripper(0.104)
    assert (p.position_open, p.drop_position) == (0.104, 0.003)
    p = ControllerParams.for_gripper(0.09, 0.01)          # closed 10 mm apart: empty below 13 mm
    assert p.position_open == 0.09 and abs(p.drop_position - 0.013) < 1e-12
    assert ControllerParams.panda().position_open == 0.08
