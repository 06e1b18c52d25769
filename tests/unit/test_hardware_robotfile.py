"""Robot file validation, tree refusal before connecting, and no command after close."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from py_trees_manipulation.behaviors import registry
from py_trees_manipulation.hardware import TreeRefused, check_tree, make_hardware_backend
from py_trees_manipulation.hardware.robotfile import RobotFileError, load_robot_file
from py_trees_manipulation.trees.loader import load_task

ROOT = Path(__file__).resolve().parents[2]
STANDIN = ROOT / "examples/robots/standin.yaml"


def test_standin_robot_file_offers_the_pr2_names():
    cfg = load_robot_file(str(STANDIN))
    assert cfg.url == "ws://127.0.0.1:9090"
    g = cfg.grippers["panda"].actions["gripper_action"]
    assert (g.name, g.type) == ("/r_gripper_sensor_controller/gripper_action", "pr2_controllers_msgs/Pr2GripperCommandAction")
    mj = cfg.arms["panda"].actions["move_joints"]
    assert mj.type == "control_msgs/FollowJointTrajectoryAction"


def test_namespace_expands_to_the_seven_pr2_actions(tmp_path):
    p = tmp_path / "r.yaml"
    p.write_text("rosbridge: {host: pr2}\ngrippers:\n  right: {namespace: /r_gripper_sensor_controller}\n")
    acts = load_robot_file(str(p)).grippers["right"].actions
    assert acts["find_contact"].name == "/r_gripper_sensor_controller/find_contact"
    assert acts["find_contact"].type == "pr2_gripper_sensor_msgs/PR2GripperFindContactAction"
    assert acts["event_detector"].type == "pr2_gripper_sensor_msgs/PR2GripperEventDetectorAction"
    assert len(acts) == 7


def test_errors_name_file_line_and_column(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text("rosbridge:\n  host: x\n  prot: 9090\narms:\n  a:\n    joint_names: [j1, j2]\n"
                 "    max_joint_velocity_rps: [1.0]\n    actions: {move_joints: {action: no_slash}}\nprotocol: ros3\n")
    with pytest.raises(RobotFileError) as e:
        load_robot_file(str(p))
    text = str(e.value)
    assert f"{p}:3:3: unknown key 'prot' in rosbridge; did you mean 'port'?" in text
    assert f"{p}:7:29: arms.a.max_joint_velocity_rps must have 2 values" in text
    assert "must be an absolute ROS name" in text and f"{p}:8:" in text
    assert f"{p}:9:11: protocol 'ros3' is not supported" in text


def _task(tmp_path, tree: str):
    p = tmp_path / "task.yaml"
    p.write_text("name: t\ntree:\n" + tree)
    return load_task(str(p))


def test_sim_only_behaviour_is_refused_by_name(tmp_path):
    task = _task(tmp_path, "  Sequence:\n    children:\n      - DoorAngleAtLeast: {name: door_open, min_angle_deg: 30}\n")
    with pytest.raises(TreeRefused, match=r"DoorAngleAtLeast 'door_open' \(.*task.yaml:5:9\) is sim-only"):
        check_tree(task, load_robot_file(str(STANDIN)), lookup=registry.lookup)


def test_action_the_robot_does_not_offer_is_refused_before_connecting(tmp_path):
    text = STANDIN.read_text().replace("      move_cartesian: {action: /r_arm_controller/move_cartesian, type: ptm_msgs/MoveCartesianAction}\n", "")
    text = text.replace("port: 9090", "port: 1")  # nothing listens: a connection attempt would fail differently
    robot = tmp_path / "robot.yaml"
    robot.write_text(text)
    # without a scene the client cannot plan: the lines need the robot's move_cartesian
    task = load_task(str(ROOT / "examples/pick_and_lift.yaml"))
    task.scene = None
    with pytest.raises(TreeRefused) as e:
        make_hardware_backend(task, SimpleNamespace(robot=str(robot)), lookup=registry.lookup)
    msg = str(e.value)
    assert "MoveCartesian 'lift'" in msg and "needs action 'move_cartesian' on arm 'panda'" in msg
    assert "MoveCartesian 'grasp/descend'" in msg
    assert "ChooseGrasp 'grasp/choose'" in msg and "needs the client's collision world" in msg
    # with its scene, unguarded lines are planned in the client and sent as trajectories; a
    # force-guarded one still needs the robot's own action (its guard)
    task = load_task(str(ROOT / "examples/pick_and_place.yaml"))
    with pytest.raises(TreeRefused) as e:
        make_hardware_backend(task, SimpleNamespace(robot=str(robot)), lookup=registry.lookup)
    msg = str(e.value)
    assert "MoveCartesian 'lower'" in msg and "MoveCartesian 'lift'" not in msg


def test_no_command_is_sent_after_close():
    pytest.importorskip("roslibpy")
    from py_trees_manipulation.backend import BackendError
    from py_trees_manipulation.hardware.robot_server import RobotStandIn
    from py_trees_manipulation.commands.hardware import load_scene
    from py_trees_manipulation.hardware.rosbridge import HardwareBackend
    from py_trees_manipulation.msgs.motion import Pr2GripperCommand
    from py_trees_manipulation.sim import SimBackend

    scene, base = load_scene(str(ROOT / "examples/pick_and_lift.yaml"))
    server = RobotStandIn(SimBackend(scene, base_dir=base), port=0, rate=4.0).start()
    try:
        cfg = load_robot_file(str(STANDIN))
        cfg.port = server.port
        hw = HardwareBackend(cfg)
        h = hw.grippers["panda"].send_goal("gripper_action", Pr2GripperCommand(position=0.04))
        sent = hw._conn.sent
        assert sent == 1 and len(hw.goal_log) == 1
        hw.close()
        assert h.done and h.text == "the hardware backend was closed"
        assert hw._conn.sent == sent + 1  # the cancel of the running goal, sent while closing
        with pytest.raises(BackendError, match="closed"):
            hw.grippers["panda"].send_goal("gripper_action", Pr2GripperCommand(position=0.0))
        with pytest.raises(BackendError, match="no command is sent after the run ends"):
            hw._conn.publish("/r_gripper_sensor_controller/cancel", "actionlib_msgs/GoalID", {"id": ""})
        with pytest.raises(BackendError):
            hw.advance(0.01)
        assert hw._conn.sent == sent + 1
        served = server.servers["/r_gripper_sensor_controller/gripper_action"]
        assert len(served.goals) <= 1
    finally:
        server.stop()
