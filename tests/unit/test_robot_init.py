"""``ptm robots init URDF``: a robot description drafted from a URDF (issue 34 item 3).

On the three stock URDFs the draft finds what the hand-written stock files say (arm chain, gripper
driver or finger joints, pads from the fingers' collision geometry, TCP between the pads) and a
``ready`` that puts the hand down in front of the base; the drafts pick in the simulator in
tests/scenarios/test_robots_sim.py. Bad input ends in one line saying what to do, never a
traceback.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from py_trees_manipulation.collision.robot_setup import RobotSetupError, draft_description
from py_trees_manipulation.robots import load_description, stock_description
from py_trees_manipulation.robots.loader import MODELS_DIR
from py_trees_manipulation.robots.urdf import parse_urdf, pybullet_data_path

DATA = pybullet_data_path()
URDFS = {"ufactory_xarm6": os.path.join(DATA, "xarm", "xarm6_with_gripper.urdf"),
         "franka_panda": os.path.join(DATA, "franka_panda", "panda.urdf"),
         "kuka_iiwa_wsg50": os.path.join(MODELS_DIR, "kuka_iiwa_wsg50.urdf")}


_DRAFTS: dict = {}


def _draft(tmp_path, model):
    """The draft of a stock URDF (once per test session: 1-2 s each) and its description."""
    if model not in _DRAFTS:
        _DRAFTS[model] = draft_description(URDFS[model], out_dir=str(tmp_path))
    d = _DRAFTS[model]
    path = tmp_path / f"{model}_draft.yaml"
    path.write_text(d.text.replace(f"urdf: {d.urdf_value}", f"urdf: {URDFS[model]}"))
    return d, load_description(str(path))


def _tcp(desc, conf="ready"):
    urdf = parse_urdf(desc.urdf_path, desc.packages)
    q = dict(zip(desc.arm_joint_names, desc.named_configurations[conf]))
    return urdf.link_pose(desc.tcp_link_name, q) @ desc.tcp_offset


@pytest.mark.parametrize("model", sorted(URDFS))
def test_the_draft_of_each_stock_urdf_finds_its_arm_gripper_pads_and_tcp(tmp_path, model):
    draft, d = _draft(tmp_path, model)
    stock = stock_description(model)
    assert d.arm_joint_names == stock.arm_joint_names
    assert d.gripper.palm_link == stock.gripper.palm_link
    assert d.gripper.driver == stock.gripper.driver and d.gripper.drive_joints == stock.gripper.drive_joints
    assert d.gripper.pad_links == stock.gripper.pad_links
    # each pad frame where the stock file puts it: on the finger's inner face, within a millimetre,
    # and turned the same way (pad y out of the back of the finger)
    for p, q in zip(d.gripper.pads, stock.gripper.pads):
        assert np.linalg.norm(p.pose[:3, 3] - q.pose[:3, 3]) < 0.0012, (p, q)
        assert np.allclose(p.pose[:3, :3], q.pose[:3, :3], atol=1e-6), (p, q)
    assert d.gripper.pad.width_m == pytest.approx(stock.gripper.pad.width_m, abs=0.0012)
    assert d.gripper.pad.length_m == pytest.approx(stock.gripper.pad.length_m, abs=0.0012)
    assert d.gripper.opening_m == pytest.approx(
        (0.0, 0.089) if model == "ufactory_xarm6" else stock.gripper.opening_m, abs=0.002)
    # the TCP within 2 mm of the stock one (the Panda's grasptarget is 1.8 mm beyond the pad centres)
    urdf = parse_urdf(d.urdf_path, d.packages)
    closed = {j: 0.0 for j in stock.gripper.drive_joints}
    t_draft = urdf.link_pose(d.tcp_link_name, closed) @ d.tcp_offset
    t_stock = urdf.link_pose(stock.tcp_link_name, closed) @ stock.tcp_offset
    assert np.linalg.norm(t_draft[:3, 3] - t_stock[:3, 3]) < 0.002
    assert np.allclose(t_draft[:3, :3], t_stock[:3, :3], atol=1e-6)
    # ready: the hand down in front of the base, the finger travel along the base's y axis
    T = _tcp(d)
    assert T[:3, 2] == pytest.approx([0, 0, -1], abs=1e-3) and abs(T[1, 1]) == pytest.approx(1.0, abs=1e-3)
    assert 0.2 < T[0, 3] < 0.5 and abs(T[1, 3]) < 1e-3 and 0.3 < T[2, 3] < 0.65
    # every guess is said: the force is marked as one
    assert "GUESS" in draft.text and "default_force_n" in draft.text
    assert draft.text.count("# ") >= 8


def test_the_xarm_draft_names_the_driver_and_the_linkage_pairs(tmp_path):
    draft, d = _draft(tmp_path, "ufactory_xarm6")
    assert "driver: drive_joint" in draft.text and "follows 'drive_joint' through <mimic> tags" in draft.text
    assert "urdf: package://pybullet_data/xarm/xarm6_with_gripper.urdf" in draft.text
    for pair in (("left_outer_knuckle", "left_inner_knuckle"), ("left_finger", "left_inner_knuckle"),
                 ("right_outer_knuckle", "right_inner_knuckle"), ("right_finger", "right_inner_knuckle")):
        assert pair in d.allowed_collision_pairs
    assert d.default_grip_force_n == 40.0            # the guess, marked in the file
    assert "forward" in d.named_configurations
    T = _tcp(d, "forward")
    assert T[:3, 2] @ [1, 0, 0] > 0.99 and abs(T[:3, 1] @ [0, 0, 1]) > 0.99


def _ptm(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "py_trees_manipulation", *args], capture_output=True, text=True,
                          cwd=cwd)


def test_a_urdf_without_a_gripper_is_refused_in_one_line(tmp_path):
    out = _ptm("robots", "init", os.path.join(DATA, "kuka_iiwa", "model.urdf"), "-o", str(tmp_path / "k.yaml"))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "no gripper in model.urdf: no link has two moving fingers below it" in out.stderr
    assert not (tmp_path / "k.yaml").exists()


def test_init_writes_the_file_and_says_what_to_do_next(tmp_path):
    out = _ptm("robots", "init", URDFS["ufactory_xarm6"], "-o", "xarm.yaml", cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert "gripper: one driver, drive_joint (a linkage)" in out.stdout
    assert "wrote xarm.yaml" in out.stdout
    assert load_description(str(tmp_path / "xarm.yaml")).gripper.driver == "drive_joint"
    again = _ptm("robots", "init", URDFS["ufactory_xarm6"], "-o", "xarm.yaml", cwd=str(tmp_path))
    assert again.returncode == 2 and "xarm.yaml exists" in again.stderr and "--force" in again.stderr


def _ros_workspace(tmp_path):
    """The xArm URDF in a ROS-style workspace: src/xarm_description and src/xarm_gripper (each with
    a package.xml) hold the meshes; the URDF is in src/xarm_description/urdf/."""
    src = tmp_path / "ws" / "src"
    for pkg in ("xarm_description", "xarm_gripper"):
        shutil.copytree(os.path.join(DATA, "xarm", pkg), src / f"{pkg}_pkg")
        (src / f"{pkg}_pkg" / "package.xml").write_text(f"<package><name>{pkg}</name></package>")
    (src / "xarm_description_pkg" / "urdf").mkdir()
    urdf = src / "xarm_description_pkg" / "urdf" / "xarm6.urdf"
    shutil.copy(URDFS["ufactory_xarm6"], urdf)
    return urdf


def test_package_meshes_in_two_ros_packages_are_found_by_their_package_xml(tmp_path):
    urdf = _ros_workspace(tmp_path)
    out_dir = tmp_path / "robots"
    out_dir.mkdir()
    draft = draft_description(str(urdf), out_dir=str(out_dir))
    assert set(draft.packages) == {"xarm_description", "xarm_gripper"}
    assert draft.packages["xarm_gripper"] == os.path.join("..", "ws", "src", "xarm_gripper_pkg")
    (out_dir / "xarm.yaml").write_text(draft.text)
    d = load_description(str(out_dir / "xarm.yaml"))
    assert d.gripper.driver == "drive_joint" and os.path.isfile(d.urdf)


def test_a_package_that_cannot_be_found_asks_for_it(tmp_path):
    urdf = tmp_path / "xarm6.urdf"
    shutil.copy(URDFS["ufactory_xarm6"], urdf)     # no meshes next to it
    with pytest.raises(RobotSetupError) as e:
        draft_description(str(urdf), out_dir=str(tmp_path))
    assert "package(s) xarm_description, xarm_gripper" in e.value.message and "--package NAME=FOLDER" in e.value.hint
    out = _ptm("robots", "init", str(urdf), "-o", str(tmp_path / "x.yaml"),
               "--package", f"xarm_description={os.path.join(DATA, 'xarm', 'xarm_description')}",
               "--package", f"xarm_gripper={os.path.join(DATA, 'xarm', 'xarm_gripper')}")
    assert out.returncode == 0, out.stderr
    assert load_description(str(tmp_path / "x.yaml")).gripper.driver == "drive_joint"
