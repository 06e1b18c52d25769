"""Hardware backend: gripper sensor messages both ends, lost connection verdicts, INVALID summaries.

The connection tests run the robot stand-in in-process on a free loopback port (sim at 4x).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from py_trees_manipulation.hardware import convert as cv
from py_trees_manipulation.hardware.robotfile import load_robot_file
from py_trees_manipulation.msgs import gripper_sensor as gs

ROOT = Path(__file__).resolve().parents[2]
STANDIN = ROOT / "examples/robots/standin.yaml"


# ---- messages ------------------------------------------------------------------------------------
def test_sensor_feedback_and_result_reach_behaviours_as_the_sim_publishes_them():
    data = gs.PR2GripperFindContactData(stamp=12.25, contact_conditions_met=True, left_fingertip_pad_force=1.5,
                                        right_fingertip_pad_force=1.25, joint_position=0.041)
    wire = cv.gripper_data_to_ros("find_contact", gs.PR2GripperFindContactResult(data=data))
    assert wire["data"]["stamp"] == {"secs": 12, "nsecs": 250_000_000}  # ROS 1 time on the wire
    json.dumps(wire)
    fb = cv.gripper_feedback_from_ros("find_contact", wire)
    res = cv.gripper_result_from_ros("find_contact", wire)
    assert type(fb) is gs.PR2GripperFindContactFeedback and type(res) is gs.PR2GripperFindContactResult
    assert res.data == data and fb.data.joint_position == 0.041 and fb.data.left_fingertip_pad_force == 1.5


def test_grab_goal_round_trip_keeps_the_hardness_gain():
    goal = gs.PR2GripperGrabGoal(command=gs.PR2GripperGrabCommand(hardness_gain=0.025))
    wire = cv.gripper_goal_to_ros("grab", goal)
    assert wire == {"command": {"hardness_gain": 0.025}}
    assert cv.gripper_goal_from_ros("grab", wire) == goal.command


def test_malformed_sensor_result_names_the_field():
    with pytest.raises(ValueError, match="missing or non-object field 'data'"):
        cv.gripper_result_from_ros("grab", {"malformed": True})


# ---- robot file: object topic template -----------------------------------------------------------
def test_object_topic_template_serves_any_object(tmp_path):
    cfg = load_robot_file(str(STANDIN))
    assert cfg.object_config("egg").topic == "/objects/egg/pose"
    p = tmp_path / "r.yaml"
    p.write_text("rosbridge: {host: h}\ngrippers: {g: {namespace: /g}}\nobjects:\n  '*': {topic: /objects/pose}\n")
    with pytest.raises(ValueError, match=r"r.yaml:4:8: objects.'\*' must be \{topic: /objects/\{name\}/pose\}"):
        load_robot_file(str(p))


# ---- lost connection -------------------------------------------------------------------------------
@pytest.fixture
def standin():
    pytest.importorskip("roslibpy")
    from py_trees_manipulation.hardware.robot_server import RobotStandIn
    from py_trees_manipulation.commands.hardware import load_scene
    from py_trees_manipulation.sim import SimBackend

    scene, base = load_scene(str(ROOT / "examples/pick_and_lift.yaml"))
    server = RobotStandIn(SimBackend(scene, base_dir=base), port=0, rate=4.0).start()
    yield server
    server.stop()


def _backend(server):
    from py_trees_manipulation.hardware.rosbridge import HardwareBackend

    cfg = load_robot_file(str(STANDIN))
    cfg.port = server.port
    return HardwareBackend(cfg, ["mug"])


def test_loss_seen_by_poll_gives_the_tree_one_tick_then_ends_the_run(standin):
    from py_trees_manipulation.hardware.rosbridge import ConnectionLost
    from py_trees_manipulation.msgs.actions import GoalStatus
    from py_trees_manipulation.msgs.motion import Pr2GripperCommand

    hw = _backend(standin)
    try:
        h = hw.grippers["panda"].send_goal("gripper_action", Pr2GripperCommand(position=0.04))
        hw._conn._mark_lost()  # as the reactor thread does on close, racing the tree thread
        assert not hw.connected
        hw.advance(0.01)  # applies the loss: the goal is aborted, no exception yet
        lost = f"connection to rosbridge at ws://127.0.0.1:{standin.port} lost"
        assert h.status == GoalStatus.ABORTED and h.text == lost
        with pytest.raises(ConnectionLost, match=lost) as e:
            hw.advance(0.01)
        assert e.value.run_failure is True
        h2 = hw.grippers["panda"].send_goal("gripper_action", Pr2GripperCommand(position=0.0))
        assert h2.status == GoalStatus.ABORTED and h2.text == lost  # nothing sent once lost
    finally:
        hw.close()


def test_loss_while_no_goal_runs_is_a_failure_naming_the_connection(standin, tmp_path):
    from py_trees_manipulation.trees.loader import load_task
    from py_trees_manipulation.trees.runner import RunOptions, run_task

    p = tmp_path / "wait.yaml"
    p.write_text("name: wait\ntree:\n  Sequence:\n    children:\n      - Wait: {name: hold, duration_s: 30}\n")
    hw = _backend(standin)
    threading.Timer(0.3, standin.stop).start()  # the robot goes away while the tree only waits
    try:
        result = run_task(load_task(str(p)), RunOptions(display=False, backend="hardware"), backend=hw)
    finally:
        hw.close()
    s = result.summary
    lost = f"connection to rosbridge at ws://127.0.0.1:{standin.port} lost"
    assert (s["status"], result.exit_code) == ("FAILURE", 1)
    assert "_exception" not in s and "traceback" not in s
    assert s["error"] == lost
    assert s["failed_behaviour"]["name"] == "hold" and s["failed_behaviour"]["feedback"].startswith(lost)
    assert [e["text"] for e in s["events"]] == [lost]


# ---- fingertip sensor lost during a goal ------------------------------------------------------------
def test_sensor_lost_during_a_goal_aborts_it_and_refuses_the_next_over_rosbridge(standin):
    """The stand-in runs the PR2 controller: a fingertip that drops out while FindContact closes ends
    the goal ABORTED with the reason, which reaches the client; the next tactile goal is REJECTED."""
    from py_trees_manipulation.msgs.actions import GoalStatus
    from py_trees_manipulation.msgs.motion import Pr2GripperCommand
    from py_trees_manipulation.sim.tactile_sensor import SensorFault

    hw = _backend(standin)
    try:
        g = hw.grippers["panda"]

        def wait(h, what=lambda h: h.done):
            for _ in range(4000):
                if what(h):
                    return h
                hw.advance(0.005)
            raise AssertionError(f"{h} did not finish")

        assert wait(g.send_goal("gripper_action", Pr2GripperCommand(position=0.08))).status == GoalStatus.SUCCEEDED
        h = wait(g.send_goal("find_contact", gs.PR2GripperFindContactCommand()),
                 lambda h: h.status == GoalStatus.ACTIVE or h.done)
        assert h.status == GoalStatus.ACTIVE                  # closing on nothing takes 4 s
        sim = standin.sim                                      # list.append: safe beside the sim thread
        sim.extensions["tactile"].add_fault(SensorFault(at_s=sim.now() + 0.2, finger="right", kind="dropout"))
        wait(h)
        assert h.status == GoalStatus.ABORTED
        assert h.text.startswith("right fingertip sensor lost while closing to find contact (all cells read 0)")
        h2 = wait(g.send_goal("force_servo", gs.PR2GripperForceServoCommand(fingertip_force=3.0)))
        assert h2.status == GoalStatus.REJECTED
        assert "right fingertip pressure sensor lost (all cells read 0)" in h2.text
    finally:
        hw.close()


# ---- INVALID summaries ----------------------------------------------------------------------------
def test_refused_tree_still_writes_the_summary(tmp_path):
    from py_trees_manipulation.cli import main

    robot = tmp_path / "robot.yaml"
    robot.write_text(STANDIN.read_text().replace("port: 9090", "port: 1"))
    out = tmp_path / "s.json"
    code = main(["run", str(ROOT / "examples/fragile_grasp.yaml"), "--backend", "hardware", "--robot", str(robot),
                 "-q", "--summary", str(out), "--log", str(tmp_path / "r.mcap")])
    assert code == 2
    s = json.loads(out.read_text())
    assert s["status"] == "INVALID" and s["task"] == "fragile_grasp" and s["backend"] == "hardware"
    assert "ObjectIntact 'intact'" in s["error"] and "is sim-only" in s["error"]


# ---- ROS 2 rosbridge actions ----------------------------------------------------------------------
def test_ros2_action_types_and_wire_times():
    from py_trees_manipulation.hardware.actions import _to_ros2, ros2_action_type

    assert ros2_action_type("pr2_gripper_sensor_msgs/PR2GripperGrabAction") == "pr2_gripper_sensor_msgs/action/PR2GripperGrab"
    assert ros2_action_type("control_msgs/action/FollowJointTrajectory") == "control_msgs/action/FollowJointTrajectory"
    msg = {"trajectory": {"header": {"seq": 0, "stamp": {"secs": 1, "nsecs": 5}, "frame_id": ""},
                          "points": [{"time_from_start": {"secs": 2, "nsecs": 500}}]}}
    assert _to_ros2(msg) == {"trajectory": {"header": {"stamp": {"sec": 1, "nanosec": 5}, "frame_id": ""},
                                            "points": [{"time_from_start": {"sec": 2, "nanosec": 500}}]}}


@pytest.mark.parametrize("fault, status, text", [
    ("reject", "REJECTED", "/r_gripper_sensor_controller/grab rejects every goal (fault injected by ptm serve)"),
    ("malformed", "ABORTED", ("malformed result message from /r_gripper_sensor_controller/grab: grab message: "
                              "missing or non-object field 'data'")),
])
def test_ros2_rejected_and_malformed_goals(fault, status, text):
    pytest.importorskip("roslibpy")
    from py_trees_manipulation.hardware.robot_server import RobotStandIn
    from py_trees_manipulation.commands.hardware import load_scene
    from py_trees_manipulation.hardware.rosbridge import HardwareBackend
    from py_trees_manipulation.msgs.actions import GoalStatus
    from py_trees_manipulation.sim import SimBackend

    scene, base = load_scene(str(ROOT / "examples/pick_and_lift.yaml"))
    server = RobotStandIn(SimBackend(scene, base_dir=base), port=0, rate=4.0, faults={fault: {"grab"}}).start()
    try:
        cfg = load_robot_file(str(STANDIN))
        cfg.port, cfg.protocol = server.port, "ros2"
        hw = HardwareBackend(cfg)
        try:
            h = hw.grippers["panda"].send_goal("grab", gs.PR2GripperGrabCommand(hardness_gain=0.03))
            assert hw.goal_log[-1][1].startswith("send_action_goal:/r_gripper_sensor_controller/grab:")
            for _ in range(2000):
                if h.done:
                    break
                hw.advance(0.005)
            assert h.status == GoalStatus[status] and h.text == text
        finally:
            hw.close()
    finally:
        server.stop()
