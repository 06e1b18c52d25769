"""MoveToPose, MoveCartesian, MoveJoints and GripperCommand against the scripted fake backend."""

import numpy as np
import py_trees
import pytest
from py_trees.common import Status

from py_trees_manipulation.behaviors.motion import GripperCommand, MoveCartesian, MoveJoints, MoveToPose
from py_trees_manipulation.msgs.actions import GoalStatus
from py_trees_manipulation.msgs.motion import MotionResult, MoveToPoseGoal, Pr2GripperCommandResult
from py_trees_manipulation.testing import FakeBackend, Script, tick_until_done

DT = 1.0 / 30.0


def run(behaviour, backend, ticks=100):
    return tick_until_done(behaviour, backend, ticks, DT)


def test_success_after_scripted_duration():
    b = FakeBackend()
    b.arms["panda"].script("move_to_pose", Script(duration_s=0.5, result=MotionResult(np.eye(4), 0.004)))
    node = MoveToPose(target=[0.4, 0.0, 0.3])
    status, ticks = run(node, b)
    assert status == Status.SUCCESS
    assert 15 <= ticks <= 17  # 0.5 s at 30 Hz
    assert "error 4.0 mm" in node.feedback_message


def test_offset_is_applied_in_the_target_frame():
    b = FakeBackend()
    py_trees.blackboard.Blackboard.set("/mug_pose", {"position": [0.5, 0.1, 0.7], "rpy_deg": [180, 0, 0]})
    node = MoveToPose(target="{mug_pose}", offset={"position": [0, 0, 0.1]})
    run(node, b)
    goal = b.arms["panda"].goals[0][1]
    # the target's z axis points down (roll 180 deg): 0.1 m along it is 0.1 m lower in the world
    np.testing.assert_allclose(goal.pose[:3, 3], [0.5, 0.1, 0.6], atol=1e-9)


def test_orientation_override_keeps_position():
    b = FakeBackend()
    node = MoveToPose(target={"position": [0.5, 0, 0.7], "rpy_deg": [0, 0, 30]}, orientation_rpy_deg=[180, 0, 0])
    run(node, b)
    goal = b.arms["panda"].goals[0][1].pose
    np.testing.assert_allclose(goal[:3, 3], [0.5, 0, 0.7])
    np.testing.assert_allclose(goal[:3, 2], [0, 0, -1], atol=1e-9)  # tool z points down


def test_an_ik_seed_goes_with_the_goal_from_a_literal_or_the_blackboard():
    b = FakeBackend()
    node = MoveToPose(target=[0.4, 0.0, 0.3], ik_seed=[0.1, -0.5, 0, -2.0, 0, 1.6, 0.8])
    run(node, b)
    assert b.arms["panda"].goals[0][1].ik_seed == (0.1, -0.5, 0.0, -2.0, 0.0, 1.6, 0.8)
    py_trees.blackboard.Blackboard.set("/checked_q", [0.2, -0.4, 0, -2.1, 0, 1.7, 0.7])
    node = MoveToPose(target=[0.4, 0.0, 0.3], ik_seed="{checked_q}")
    run(node, b)
    assert b.arms["panda"].goals[1][1].ik_seed == (0.2, -0.4, 0.0, -2.1, 0.0, 1.7, 0.7)
    assert MoveToPose(target=[0.4, 0.0, 0.3]).params["ik_seed"] is None   # default: the configuration now first
    with pytest.raises(ValueError, match="ik_seed must be finite joint positions in radians"):
        MoveToPoseGoal(pose=np.eye(4), ik_seed=[0.0, float("nan")])


def test_aborted_goal_fails_with_the_backends_reason():
    b = FakeBackend()
    b.arms["panda"].script("move_to_pose", Script(outcome="aborted", duration_s=0.1, text="target is out of reach: 0.212 m away"))
    node = MoveToPose(target=[1.5, 0.0, 0.3])
    status, _ = run(node, b)
    assert status == Status.FAILURE
    assert node.feedback_message == "move_to_pose aborted: target is out of reach: 0.212 m away"


def test_rejected_goal_fails():
    b = FakeBackend()
    b.arms["panda"].script("move_joints", Script(outcome="rejected", text="arm is in fault"))
    node = MoveJoints(configuration="ready")
    status, ticks = run(node, b)
    assert status == Status.FAILURE and ticks == 1
    assert "rejected: arm is in fault" in node.feedback_message


def test_acknowledgement_timeout_cancels_the_pending_goal():
    b = FakeBackend()
    b.arms["panda"].script("move_to_pose", Script(pending_s=100.0))
    node = MoveToPose(target=[0.4, 0, 0.3], timeout_s=1.0)
    status, ticks = run(node, b)
    assert status == Status.FAILURE
    assert "timed out after 1 s" in node.feedback_message
    assert b.arms["panda"].cancels == [("move_to_pose", GoalStatus.PENDING)]


def test_execution_timeout_cancels_the_active_goal():
    b = FakeBackend()
    b.arms["panda"].script("move_cartesian", Script(outcome="hang"))
    node = MoveCartesian(delta=[0, 0, 0.1], timeout_s=0.5)
    status, ticks = run(node, b)
    assert status == Status.FAILURE and 16 <= ticks <= 17
    assert b.arms["panda"].cancels == [("move_cartesian", GoalStatus.ACTIVE)]


def test_a_timeout_from_the_blackboard_is_read_when_the_goal_is_sent():
    b = FakeBackend()
    b.arms["panda"].script("move_cartesian", Script(outcome="hang"))
    py_trees.blackboard.Blackboard.set("/lift_timeout", 0.5)
    node = MoveCartesian(delta=[0, 0, 0.1], timeout_s="{lift_timeout}")
    status, ticks = run(node, b)
    assert status == Status.FAILURE and 16 <= ticks <= 17  # 0.5 s at 30 Hz
    assert node.feedback_message == "move_cartesian timed out after 0.5 s"


@pytest.mark.parametrize("pending_s", [0.0, 10.0])
def test_preemption_cancels_the_goal_even_before_acknowledgement(pending_s):
    b = FakeBackend()
    b.arms["panda"].script("move_to_pose", Script(outcome="hang", pending_s=pending_s))
    node = MoveToPose(target=[0.4, 0, 0.3])
    tree = py_trees.trees.BehaviourTree(root=node)
    tree.setup(backend=b)
    tree.tick()
    b.advance(DT)
    tree.tick()
    assert node.status == Status.RUNNING
    node.stop(Status.INVALID)  # what a parent does on preemption
    expected = GoalStatus.PENDING if pending_s else GoalStatus.ACTIVE
    assert b.arms["panda"].cancels == [("move_to_pose", expected)]
    assert node.handle.done


def test_feedback_is_streamed_to_the_blackboard():
    from py_trees_manipulation.msgs.motion import MotionFeedback

    b = FakeBackend()
    b.arms["panda"].script("move_to_pose", Script(duration_s=1.0, feedback=lambda g, t: MotionFeedback(np.eye(4), 0.2 - 0.1 * t)))
    node = MoveToPose(target=[0.4, 0, 0.3], feedback_key="move_fb", result_key="move_result")
    tree = py_trees.trees.BehaviourTree(root=node)
    tree.setup(backend=b)
    tree.tick()
    b.advance(0.5)
    tree.tick()
    assert py_trees.blackboard.Blackboard.get("/move_fb") == "tcp 0.150 m from target (0.400, 0.000, 0.300)"


def test_missing_blackboard_key_fails_with_the_key_named():
    b = FakeBackend()
    node = MoveToPose(target="{mug_pose}")
    status, _ = run(node, b)
    assert status == Status.FAILURE
    assert "blackboard key 'mug_pose' (parameter 'target') has no value yet" in node.feedback_message
    assert b.arms["panda"].goals == []


def test_named_configuration_unknown_fails():
    b = FakeBackend()
    node = MoveJoints(configuration="readdy")
    status, _ = run(node, b)
    assert status == Status.FAILURE
    assert "unknown configuration 'readdy'; the arm has ['ready']" in node.feedback_message


def test_gripper_closing_on_nothing_fails_when_an_object_is_expected():
    b = FakeBackend()
    b.grippers["panda"].script("gripper_action", Script(duration_s=0.3, result=Pr2GripperCommandResult(0.0, 5.0, False, True)))
    node = GripperCommand(position=0.0, max_effort=40.0, expect_object=True)
    status, _ = run(node, b)
    assert status == Status.FAILURE
    assert node.feedback_message == "closed on nothing (gap 0.0 mm)"


def test_gripper_stalled_on_object_is_a_grasp():
    b = FakeBackend()
    result = Pr2GripperCommandResult(position=0.052, effort=40.0, stalled=True, reached_goal=False)
    b.grippers["panda"].script("gripper_action", Script(outcome="aborted", duration_s=0.3, result=result))
    node = GripperCommand(position=0.0, max_effort="40 N", expect_object=True)
    status, _ = run(node, b)
    assert status == Status.SUCCESS
    assert node.feedback_message == "holding at 52.0 mm, effort 40.0 N"
    assert b.grippers["panda"].goals[0][1].max_effort == 40.0


def test_unknown_resource_is_a_setup_error():
    from py_trees_manipulation.behaviors.base import BehaviourSetupError

    node = MoveJoints(configuration="ready", arm="kuka")
    tree = py_trees.trees.BehaviourTree(root=node)
    with pytest.raises(BehaviourSetupError, match=r"no arm named 'kuka'; the backend has \['panda'\]"):
        tree.setup(backend=FakeBackend())


def test_the_running_feedback_message_is_formatted_when_read_and_shows_the_latest_feedback(monkeypatch):
    from py_trees_manipulation.behaviors import motion
    from py_trees_manipulation.msgs.motion import MotionFeedback

    formatted = []
    real = motion._fmt_xyz
    monkeypatch.setattr(motion, "_fmt_xyz", lambda T: formatted.append(1) or real(T))
    b = FakeBackend()
    b.arms["panda"].script("move_to_pose", Script(duration_s=1.0, feedback=lambda g, t: MotionFeedback(np.eye(4), 0.2 - 0.1 * t)))
    node = MoveToPose(target=[0.4, 0, 0.3])
    tree = py_trees.trees.BehaviourTree(root=node)
    tree.setup(backend=b)
    for _ in range(5):  # five ticks nobody reads: nothing formatted
        tree.tick()
        b.advance(0.1)
    tree.tick()
    assert formatted == []
    assert node.feedback_message == "tcp 0.150 m from target (0.400, 0.000, 0.300)"  # 0.5 s in
    assert node.feedback_message == "tcp 0.150 m from target (0.400, 0.000, 0.300)"
    assert len(formatted) == 1  # once per published feedback, however often it is read
    node.feedback_message = "set by hand"  # a plain assignment replaces a pending one
    assert node.feedback_message == "set by hand"


def test_a_blackboard_read_that_fails_in_a_subclass_override_fails_the_behaviour_with_the_reason(monkeypatch):
    from py_trees_manipulation.behaviors import registry

    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))  # the class below stays out of it

    class _Reads(MoveJoints):
        """A user subclass whose update override reads a parameter, then calls super()."""

        def update(self):
            self.param("velocity_scaling")
            return super().update()

    b = FakeBackend()
    b.arms["panda"].script("move_joints", Script(duration_s=0.2))
    node = _Reads(configuration="ready", velocity_scaling="{speed}")
    status, ticks = run(node, b)
    assert status == Status.FAILURE and ticks == 1
    assert node.feedback_message == "blackboard key 'speed' (parameter 'velocity_scaling') has no value yet"
    py_trees.blackboard.Blackboard.set("/speed", 0.3)
    status, _ = run(node, b)
    assert status == Status.SUCCESS  # the reason of the last activation does not linger
