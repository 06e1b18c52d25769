"""The hardware robot file names the same robot descriptions as the simulator (``description:``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from py_trees_manipulation.hardware.robotfile import RobotFileError, load_robot_file
from py_trees_manipulation.robots import stock_description
from py_trees_manipulation.robots.loader import MODELS_DIR
from py_trees_manipulation.robots.urdf import pybullet_data_path

ROOT = Path(__file__).resolve().parents[2]
STANDIN = ROOT / "examples/robots/standin.yaml"
BASE = "rosbridge: {host: robot}\n"


def _load(tmp_path, text):
    p = tmp_path / "robot.yaml"
    p.write_text(BASE + text)
    return load_robot_file(str(p)), str(p)


def _error(tmp_path, text):
    p = tmp_path / "robot.yaml"
    p.write_text(BASE + text)
    with pytest.raises(RobotFileError) as e:
        load_robot_file(str(p))
    return e.value, str(p)


def test_standin_takes_joints_limits_and_configurations_from_the_panda_description():
    cfg = load_robot_file(str(STANDIN))
    arm, gripper = cfg.arms["panda"], cfg.grippers["panda"]
    panda = stock_description("franka_panda")
    assert arm.description is panda and arm.joint_names == list(panda.arm_joint_names)
    # the URDF's velocity limits (the robot file used to repeat them by hand)
    assert arm.max_joint_velocity_rps == [2.175, 2.175, 2.175, 2.175, 2.61, 2.61, 2.61]
    assert arm.max_joint_acceleration_rps2 == [15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0]
    assert arm.named_configurations["ready"] == [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785]
    assert set(arm.named_configurations) == {"ready", "home", "extended", "forward"}
    assert (gripper.max_gap_m, gripper.min_gap_m) == (0.08, 0.0)


def test_robot_file_values_override_the_description(tmp_path):
    cfg, _ = _load(tmp_path, (
        "arms:\n  iiwa:\n    description: kuka_iiwa_wsg50\n"
        "    joint_names: [a1, a2, a3, a4, a5, a6, a7]          # the driver's names\n"
        "    max_joint_velocity_rps: [1, 1, 1, 1, 1, 1, 1]\n"
        "    named_configurations: {ready: [0, 0.5, 0, -1.5, 0, 1, 0], stow: [0, 0, 0, 0, 0, 0, 0]}\n"
        "    actions: {move_joints: {action: /iiwa/follow_joint_trajectory}}\n"
        "grippers:\n  wsg:\n    description: kuka_iiwa_wsg50\n    max_gap_m: 0.1\n"
        "    actions: {gripper_action: {action: /wsg/gripper_action}}\n"))
    arm = cfg.arms["iiwa"]
    assert arm.joint_names == ["a1", "a2", "a3", "a4", "a5", "a6", "a7"]
    assert arm.max_joint_velocity_rps == [1.0] * 7
    # the description's acceleration limits default to 5 x its velocity limits; the file's own here
    assert arm.max_joint_acceleration_rps2 == pytest.approx([5.0] * 7)
    assert arm.named_configurations["ready"] == [0, 0.5, 0, -1.5, 0, 1, 0]            # overridden
    assert arm.named_configurations["forward"] == list(stock_description("kuka_iiwa_wsg50").named_configurations["forward"])
    assert arm.named_configurations["stow"] == [0.0] * 7                             # added
    assert cfg.grippers["wsg"].max_gap_m == 0.1


def test_description_errors_name_their_line(tmp_path):
    e, path = _error(tmp_path, "arms:\n  a:\n    description: franka_pnda\n"
                               "    actions: {move_joints: {action: /a/fjt}}\n")
    assert f"{path}:4:18: arms.a.description: unknown robot model 'franka_pnda'; did you mean 'franka_panda'?" in str(e)
    e, path = _error(tmp_path, "arms:\n  a:\n    description: franka_panda\n    joint_names: [j1, j2]\n"
                               "    actions: {move_joints: {action: /a/fjt}}\n")
    assert f"{path}:5:18: arms.a.joint_names has 2 names but the description 'franka_panda' has 7 arm joints" in str(e)
    # without a description the limits are required, and the hint says where else they can come from
    e, path = _error(tmp_path, "arms:\n  a:\n    joint_names: [j1]\n    actions: {move_joints: {action: /a/fjt}}\n")
    assert "needs max_joint_velocity_rps" in str(e) and "or description: a robot model" in str(e)


def test_a_description_file_next_to_the_robot_file_reports_its_own_problems(tmp_path):
    text = open(os.path.join(MODELS_DIR, "franka_panda.yaml")).read()
    text = text.replace("package://pybullet_data/franka_panda/panda.urdf",
                        os.path.join(pybullet_data_path(), "franka_panda", "panda.urdf"))
    (tmp_path / "my_panda.yaml").write_text(text.replace("palm_link: panda_hand", "palm_link: panda_palm"))
    e, path = _error(tmp_path, "arms:\n  a:\n    description: my_panda.yaml\n"
                               "    actions: {move_joints: {action: /a/fjt}}\n")
    lines = str(e).splitlines()
    assert lines[0].startswith(f"{path}:4:18: arms.a.description: the robot description 'my_panda.yaml' is invalid")
    assert any(line.startswith(f"{tmp_path / 'my_panda.yaml'}:") and "no link 'panda_palm'" in line for line in lines)
