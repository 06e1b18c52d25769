"""Reachability before motion and ``base_pose: auto`` in the simulator (headless): a door wider than
the shipped one fails at ``check_reach`` before the arm moves (joints unchanged), naming the arc angle
and suggesting a base pose; ``base_pose: auto`` places the robot, prints and summarises the pose, and
opens the door (the angle measured in the simulator); the pose written as an explicit ``base_pose``
gives the same run; no base at all fails before the first tick naming the target. Door widths, hinge
sides, push doors, drawers and picks: open_door_auto.scenario.yaml, open_drawer.scenario.yaml and
reach_pick.scenario.yaml next to this file."""

import os
import re

import numpy as np
import pytest

from py_trees_manipulation.sim import SimBackend
from py_trees_manipulation.behaviors.reach import requests_from_tree
from py_trees_manipulation.trees.loader import load_task
from py_trees_manipulation.trees.runner import RunOptions, make_backend, run_task, verdict_line

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "examples")
DOOR = os.path.join(EXAMPLES, "open_door.yaml")
WIDE = ["scene.doors.0.width_m=0.8"]


def _run(overrides, backend=None):
    task = load_task(DOOR, overrides=overrides)
    return task, run_task(task, RunOptions(display=False, timeout_s=30), backend=backend).summary


@pytest.fixture(scope="module")
def auto_run():
    return _run(WIDE + ["scene.robots.0.base_pose=auto"])[1]


def test_base_pose_auto_places_the_robot_reports_the_pose_and_the_door_opens(auto_run):
    s = auto_run
    assert s["status"] == "SUCCESS", s.get("failed_behaviour") or s.get("error")
    assert s["metrics"]["door_angle_deg"] > 55.0            # measured: the hinge joint in the simulator
    bp = s["base_poses"]["panda"]
    assert bp["ok"] and bp["surface"] == "floor" and bp["position"][2] == 0.0 and bp["rpy_deg"][:2] == [0.0, 0.0]
    assert bp["candidates"] >= 1 and bp["search_time_s"] > 0
    assert np.hypot(*bp["position"][:2]) > 0.05              # not the shipped place, from which it cannot
    line = verdict_line(s)
    assert f"base_pose auto: panda on the floor at position {bp['position']}, rpy_deg {bp['rpy_deg']}" in line


def test_the_chosen_pose_written_as_base_pose_gives_the_same_run(auto_run):
    bp = auto_run["base_poses"]["panda"]
    pose = "{position: %s, rpy_deg: %s}" % (bp["position"], bp["rpy_deg"])
    _, s = _run(WIDE + [f"scene.robots.0.base_pose={pose}"])
    assert "base_poses" not in s
    assert s["status"] == auto_run["status"] and s["ticks"] == auto_run["ticks"]
    assert s["sim_time_s"] == auto_run["sim_time_s"]
    assert s["metrics"]["door_angle_deg"] == pytest.approx(auto_run["metrics"]["door_angle_deg"], abs=1e-6)


def test_the_check_fails_before_the_arm_moves_naming_the_arc_angle_and_suggesting_the_base(auto_run):
    task = load_task(DOOR, overrides=WIDE)
    backend = SimBackend(task.scene, base_dir=EXAMPLES, reach_requests=requests_from_tree(task.tree))
    try:
        arm = backend.arms["panda"]
        q0 = arm.joint_positions().copy()
        s = run_task(task, RunOptions(display=False, timeout_s=30), backend=backend).summary
        q1 = arm.joint_positions().copy()
    finally:
        backend.close()
    assert s["status"] == "FAILURE" and s["ticks"] == 0 and s["sim_time_s"] == 0.0   # --plan-first: no tick
    fb = s["failed_behaviour"]
    assert fb["name"] == "check_reach" and fb["type"] == "CheckReachability"
    m = re.search(r"the door handle at (\d+) deg of its 62 deg arc is out of reach", fb["feedback"])
    assert m and 25 <= int(m.group(1)) <= 50, fb["feedback"]      # the sim's own arc stops at 36.6 deg
    assert np.array_equal(q0, q1)                                   # nothing moved
    assert s["metrics"]["door_angle_deg"] == pytest.approx(0.0, abs=0.01)
    # the suggestion is the base base_pose: auto chooses (the same search), from which the door opens
    sug = re.search(r"base_pose=\{position: \[([-\d.e, ]+)\], rpy_deg: \[0, 0, ([-\d.e]+)\]\}", fb["feedback"])
    assert sug, fb["feedback"]
    bp = auto_run["base_poses"]["panda"]
    assert [float(v) for v in sug.group(1).split(",")] == pytest.approx(bp["position"], abs=1e-3)
    assert float(sug.group(2)) == pytest.approx(bp["rpy_deg"][2], abs=0.01)


def test_no_base_reaching_the_lever_fails_before_the_first_tick_naming_it():
    _, s = _run(["scene.doors.0.height_m=2.1", "scene.doors.0.handle.height_m=1.9", "scene.robots.0.base_pose=auto"])
    assert s["status"] == "FAILURE" and s["ticks"] == 0 and "failed_behaviour" not in s
    assert s["error"].startswith("base_pose auto of 'panda': no base position on the floor reaches the door handle")
    assert s["base_poses"]["panda"]["ok"] is False
    assert s["metrics"]["door_angle_deg"] == pytest.approx(0.0, abs=0.01)
    assert "base_pose auto of 'panda'" in verdict_line(s)


def test_hardware_refuses_base_pose_auto():
    task = load_task(DOOR, overrides=["scene.robots.0.base_pose=auto"])
    with pytest.raises(ValueError, match="base_pose: auto places a simulated robot"):
        make_backend(task, RunOptions(backend="hardware"))
