"""``ptm robots check FILE`` (issue 34 item 4): a description tried in the real simulator, headless.

The stock xArm 6 passes every check with the figures its description gives (85 mm opening, the
30 N squeeze on both pads of a test box, the 22-cell arrays seeing it); descriptions with a pad
frame off the finger's face, pads beyond the fingertips and a ready pose in self-collision each
fail the check that finds them, naming the key and the fix. A description the loader refuses is
reported as FILE:LINE:COL with exit code 2, never a traceback.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from py_trees_manipulation.commands.robot_check import check_robot
from py_trees_manipulation.robots import load_description, stock_description
from py_trees_manipulation.robots.loader import MODELS_DIR

XARM_YAML = os.path.join(MODELS_DIR, "ufactory_xarm6.yaml")


def _variant(tmp_path, *edits, base=XARM_YAML):
    text = open(base).read().replace("urdf: kuka_iiwa_wsg50.urdf", f"urdf: {os.path.join(MODELS_DIR, 'kuka_iiwa_wsg50.urdf')}")
    for old, new in edits:
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / "xarm_variant.yaml"
    path.write_text(text)
    return str(path)


def _finding(report, name):
    return next(f for f in report.findings if f.name == name)


def test_the_stock_xarm_passes_with_its_own_figures():
    rep = check_robot(stock_description("ufactory_xarm6"))
    assert rep.ok, rep.text()
    assert [f.name for f in rep.findings] == ["loads", "ready", "gripper", "pads face each other",
                                              "TCP between the pads", "test box", "reach"]
    assert "opens to 85.0 mm (opening_m 85.0), closes to 1.7 mm (opening_m 1.7)" in _finding(rep, "gripper").text
    assert "one driver, drive_joint, 5 <mimic> joints" in _finding(rep, "loads").text
    box = _finding(rep, "test box").text
    assert "closing on a 43 mm box with 30 N: both pads touch it" in box and "22-cell arrays see it" in box
    assert "reaches 18 of 18 points" in _finding(rep, "reach").text


def test_pad_frames_off_the_fingers_face_are_found_with_their_key(tmp_path):
    """The KUKA's WSG 50 with both pad frames 3 mm inside their fingers (a linkage's gap comes from
    its pad frames, so there the loader finds such an error against opening_m): the pads' distance
    is 6 mm less than the gap at every opening, the TCP still between them."""
    path = _variant(tmp_path, ("position: [0.003, 0, 0.0835]", "position: [0.006, 0, 0.0835]"),
                    base=os.path.join(MODELS_DIR, "kuka_iiwa_wsg50.yaml"))
    rep = check_robot(load_description(path))
    f = _finding(rep, "gripper")
    assert not f.ok and "the pad frames are -6.0 mm off the gap at every opening" in f.text
    assert f.key == "gripper.pads.fingers[].pose" and "3.0 mm each" in f.fix


def test_pads_beyond_the_fingertips_do_not_reach_the_test_box(tmp_path):
    """Pad frames (and the TCP between them) 40 mm beyond the fingertips: the description is
    consistent, but the fingers close on nothing there."""
    path = _variant(tmp_path, ("position: [0, -0.026, 0.041]", "position: [0, -0.026, 0.081]"),
                    ("position: [0, 0.026, 0.041], rpy_deg", "position: [0, 0.026, 0.081], rpy_deg"),
                    ("pose: {position: [0, 0, 0.1534]}", "pose: {position: [0, 0, 0.1934]}"))
    rep = check_robot(load_description(path))
    f = _finding(rep, "test box")
    assert not f.ok and "do not touch it" in f.text and "left_finger" in f.text
    assert f.key == "gripper.pads.fingers[].link"


def test_a_ready_pose_in_self_collision_names_the_links_and_the_key(tmp_path):
    path = _variant(tmp_path, ("ready: [0.0, -0.4175, -1.4912, 0.0, 1.9086, 0.0]",
                               "ready: [0.0, -0.418, 0.064, 0.0, 1.81, 0.0]"))
    rep = check_robot(load_description(path))
    f = _finding(rep, "ready")
    assert not f.ok and "link1 is in collision with xarm_gripper_base_link" in f.text
    assert f.key == "named_configurations.ready" and "allowed_collision_pairs" in f.fix


def test_a_description_the_loader_refuses_is_one_line_per_problem(tmp_path):
    """The TCP 40 mm beyond the pads: ptm validate and ptm robots check name tcp.pose and the move
    that fixes it, exit code 2, no traceback."""
    path = _variant(tmp_path, ("pose: {position: [0, 0, 0.1534]}", "pose: {position: [0, 0, 0.1934]}"))
    out = subprocess.run([sys.executable, "-m", "py_trees_manipulation", "robots", "check", path],
                         capture_output=True, text=True)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    line = next(i for i, ln in enumerate(open(path).read().splitlines(), 1) if "0.1934" in ln)
    assert out.stderr.startswith(f"{path}:{line}:")
    assert "the TCP is not between the pads" in out.stderr and "move tcp.pose by" in out.stderr
    assert "-40.0 mm along the fingers" not in out.stderr or "+40.0" in out.stderr
