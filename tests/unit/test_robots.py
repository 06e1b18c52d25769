"""Robot description files: the stock models, the URDF reader, and every check with FILE:LINE:COL.

Pure: nothing here loads PyBullet (the package is read with xml.etree); the simulator side is
tests/scenarios/test_robots_sim.py.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import jsonschema
import numpy as np
import pytest
import yaml

from py_trees_manipulation.robots import (RobotDescriptionError, UnknownModelError, load_description, resolve_model,
                                          stock_description, stock_models)
from py_trees_manipulation.robots.loader import MODELS_DIR
from py_trees_manipulation.robots.urdf import loadable_urdf, parse_urdf, pybullet_data_path

PANDA_YAML = os.path.join(MODELS_DIR, "franka_panda.yaml")
PANDA_URDF = os.path.join(pybullet_data_path(), "franka_panda", "panda.urdf")


# ---- the stock models ------------------------------------------------------------------------------
def test_stock_models_are_listed_and_load():
    assert list(stock_models()) == ["franka_panda", "kuka_iiwa_wsg50", "ufactory_xarm6"]
    for name in stock_models():
        d = stock_description(name)
        assert d.name == name and d.dof == (6 if name == "ufactory_xarm6" else 7) and "ready" in d.named_configurations
        assert os.path.isfile(d.urdf)


def test_panda_description_keeps_the_former_robot_model_figures():
    """The values sim/robots.py held in code (Franka data sheet and pybullet_data's panda.urdf)."""
    d = stock_description("franka_panda")
    assert d.arm_joint_names == tuple(f"panda_joint{i}" for i in range(1, 8))
    assert d.finger_joint_names == ("panda_finger_joint1", "panda_finger_joint2")
    assert d.tcp_link_name == "panda_grasptarget" and np.array_equal(d.tcp_offset, np.eye(4))
    assert d.flange_link_name == "panda_hand" and d.wrist_ft_joint == "panda_hand_joint"
    assert (d.max_gap_m, d.default_grip_force_n, d.max_grip_force_n) == (0.08, 70.0, 140.0)
    assert (d.finger_speed_mps, d.finger_lateral_friction) == (0.05, 1.5)
    assert d.acceleration_limits == (15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0)
    assert d.named_configurations["ready"] == (0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785)
    assert set(d.named_configurations) == {"ready", "home", "extended", "forward"}
    assert d.gripper.pad_links == ("panda_leftfinger", "panda_rightfinger")
    assert d.gripper.coupling == "gear" and d.gripper.mimic_multiplier == 1.0   # panda.urdf's <mimic>
    assert d.velocity_limits == () and d.lower[3] == pytest.approx(-3.1416)   # the URDF's
    assert d.allowed_collision_pairs == (("panda_link7", "panda_hand"), ("panda_leftfinger", "panda_rightfinger"))


def test_kuka_description_has_the_iiwa7_data_sheet_limits_and_a_wsg50():
    d = stock_description("kuka_iiwa_wsg50")
    urdf = parse_urdf(d.urdf_path)
    speeds_deg = [np.degrees(urdf.joints[j].velocity) for j in d.arm_joint_names]
    assert speeds_deg == pytest.approx([98, 98, 100, 130, 140, 180, 180], abs=0.01)
    assert [urdf.joints[j].effort for j in d.arm_joint_names] == [176, 176, 110, 110, 110, 40, 40]
    assert d.gripper.opening_m == (0.0, 0.104) and d.default_grip_force_n == 80.0
    assert [urdf.joints[j].type for j in d.finger_joint_names] == ["prismatic", "prismatic"]
    assert d.wrist_ft_joint == "wsg50_mount_joint" and d.gripper.palm_link == "wsg50_base_link"
    # every mesh of the joined URDF comes from pybullet_data and exists
    assert urdf.meshes and all(p is not None and p.startswith(pybullet_data_path()) for _, p in urdf.meshes)


def test_tcp_sits_between_the_pad_centres():
    """The TCP is where the two pad frames' origins meet when the fingers close, for the models with
    a motor per finger (the xArm's linkage: tests/unit/test_linkage_gripper.py)."""
    for name in ("franka_panda", "kuka_iiwa_wsg50"):
        d = stock_description(name)
        urdf = parse_urdf(d.urdf_path, d.packages)
        closed = {j: 0.0 for j in d.finger_joint_names}
        tcp = urdf.link_pose(d.tcp_link_name, closed) @ d.tcp_offset
        pads = [urdf.link_pose(p.link, closed) @ p.pose for p in d.gripper.pads]
        mid = (pads[0][:3, 3] + pads[1][:3, 3]) / 2
        assert np.linalg.norm(pads[0][:3, 3] - pads[1][:3, 3]) < 1e-6, name      # closed: pads touch
        assert np.linalg.norm(tcp[:3, 3] - mid) < 0.002, name                     # Panda: 1.8 mm beyond
        # the pad frames face each other: each inner-surface normal (-y) points at the other pad
        assert pads[0][:3, 1] @ pads[1][:3, 1] == pytest.approx(-1.0), name
        # and the TCP's y axis is the finger travel
        assert abs(tcp[:3, 1] @ pads[0][:3, 1]) == pytest.approx(1.0), name


def test_named_configurations_put_the_tcp_where_the_pandas_do():
    """ready and extended: the same TCP pose (relative to the base) on both stock models; forward:
    the TCP points forwards (+x) with the finger travel vertical. Forward kinematics of the URDF."""
    def tcp(d, name):
        urdf = parse_urdf(d.urdf_path, d.packages)
        q = dict(zip(d.arm_joint_names, d.named_configurations[name]))
        return urdf.link_pose(d.tcp_link_name, q) @ d.tcp_offset

    panda, kuka = stock_description("franka_panda"), stock_description("kuka_iiwa_wsg50")
    xarm = stock_description("ufactory_xarm6")
    # Panda ready: PyBullet's forward kinematics puts the TCP 0.307 m ahead, 0.485 m up, pointing down
    assert tcp(panda, "ready")[:3, 3] == pytest.approx([0.307, 0.0, 0.485], abs=0.001)
    for name in ("ready", "extended"):
        assert np.allclose(tcp(kuka, name), tcp(panda, name), atol=1e-3), name
    assert np.allclose(tcp(xarm, "ready"), tcp(panda, "ready"), atol=1e-3)
    # the xArm's extended pose is within its 0.7 m: 0.55 m ahead, 0.25 m up, fingers down
    assert tcp(xarm, "extended")[:3, 3] == pytest.approx([0.55, 0.0, 0.25], abs=1e-3)
    assert tcp(xarm, "extended")[:3, 2] == pytest.approx([0, 0, -1], abs=1e-3)
    for d in (panda, kuka, xarm):
        T = tcp(d, "forward")
        assert T[:3, 2] @ [1, 0, 0] > 0.99 and abs(T[:3, 1] @ [0, 0, 1]) > 0.99, d.name


def test_reach_is_the_largest_tcp_distance_from_the_first_axis():
    panda, kuka = stock_description("franka_panda"), stock_description("kuka_iiwa_wsg50")
    # stretched out, an upper bound: Panda 0.316 + 0.384 + 0.088 (link offsets) + 0.107 + 0.105 (flange, TCP)
    # plus the 0.0825 elbow offsets; iiwa 0.42 + 0.40 + 0.081 + 0.045 + 0.1435
    assert 0.90 < panda.reach_m <= 1.0
    assert 1.0 < kuka.reach_m <= 0.42 + 0.40 + 0.081 + 0.045 + 0.1435 + 1e-6


# ---- the URDF reader --------------------------------------------------------------------------------
def test_urdf_tree_queries():
    u = parse_urdf(PANDA_URDF)
    assert u.root == "panda_link0" and "panda_hand_joint" in u.joints
    assert u.is_descendant("panda_leftfinger", "panda_hand") and not u.is_descendant("panda_hand", "panda_leftfinger")
    assert [j.name for j in u.chain("panda_hand", "panda_link6")] == ["panda_joint7", "panda_joint8", "panda_hand_joint"]
    assert u.joints["panda_finger_joint2"].mimic == ("panda_finger_joint1", 1.0, 0.0)
    # a <mimic> joint follows its leader: at 0.03 m both fingers are 0.06 m apart
    left = u.link_pose("panda_leftfinger", {"panda_finger_joint1": 0.03})
    right = u.link_pose("panda_rightfinger", {"panda_finger_joint1": 0.03})
    assert np.linalg.norm(left[:3, 3] - right[:3, 3]) == pytest.approx(0.06)


def test_loadable_urdf_makes_every_mesh_path_absolute(tmp_path):
    (tmp_path / "meshes").mkdir()
    (tmp_path / "meshes" / "a.stl").write_text("solid a\nendsolid a\n")
    src = tmp_path / "r.urdf"
    src.write_text('<robot name="r"><link name="base"><visual><geometry><mesh filename="package://pybullet_data/'
                   'kuka_iiwa/meshes/link_0.obj"/></geometry></visual><collision><geometry>'
                   '<mesh filename="meshes/a.stl"/></geometry></collision></link></robot>')
    out = loadable_urdf(str(src), cache_dir=str(tmp_path / "cache"))
    text = open(out).read()
    assert os.path.join(pybullet_data_path(), "kuka_iiwa", "meshes", "link_0.obj") in text
    assert str(tmp_path / "meshes" / "a.stl") in text and "package://" not in text
    assert loadable_urdf(str(src), cache_dir=str(tmp_path / "cache")) == out          # reused
    plain = tmp_path / "plain.urdf"
    plain.write_text('<robot name="p"><link name="base"/></robot>')
    assert loadable_urdf(str(plain)) == str(plain)                                    # nothing to resolve


# ---- checks with FILE:LINE:COL ----------------------------------------------------------------------------
def _write(tmp_path, text, name="my_robot.yaml"):
    text = text.replace("package://pybullet_data/franka_panda/panda.urdf", PANDA_URDF)
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def _panda_text():
    return open(PANDA_YAML).read()


def _problems(path):
    with pytest.raises(RobotDescriptionError) as e:
        load_description(path)
    return e.value.problems


def _line_of(text, needle, nth=0):
    lines = [i for i, t in enumerate(text.splitlines(), 1) if needle in t]
    return lines[nth]


def test_a_copy_of_the_panda_file_loads_under_its_own_name(tmp_path):
    path = _write(tmp_path, _panda_text().replace("name: franka_panda\n", ""))
    d = load_description(path)
    assert d.name == "my_robot" and d.file == path and d.max_gap_m == 0.08


def test_a_link_the_urdf_lacks_lists_the_real_names_of_that_kind(tmp_path):
    text = _panda_text().replace("link: panda_grasptarget", "link: panda_grasp_target")
    path = _write(tmp_path, text)
    (p,) = _problems(path)
    assert (p.loc.file, p.loc.line) == (path, _line_of(text, "link: panda_grasp_target"))
    assert "tcp.link: the URDF panda.urdf has no link 'panda_grasp_target'" in p.message
    # links below the wrist, closest first
    assert p.hint.startswith("the URDF's links below the wrist, closest first: panda_grasptarget")
    assert "panda_link0" not in p.hint
    # a pad link: the gripper's links
    text = _panda_text().replace("{link: panda_leftfinger,", "{link: panda_left_finger,")
    (p,) = _problems(_write(tmp_path, text))
    assert p.hint.startswith("the URDF's gripper links, closest first: panda_leftfinger")
    assert "panda_link7" not in p.hint
    # a gripper joint: the gripper's joints
    text = _panda_text().replace("joints: [panda_finger_joint1,", "joints: [panda_finger_joint_1,")
    (p,) = _problems(_write(tmp_path, text))
    assert "no joint 'panda_finger_joint_1'" in p.message
    assert p.hint == "the URDF's gripper joints, closest first: panda_finger_joint1, panda_finger_joint2"


def test_a_gripper_joint_neither_prismatic_nor_revolute_is_an_error_at_its_line(tmp_path):
    text = _panda_text().replace("joints: [panda_finger_joint1, panda_finger_joint2]",
                                 "joints: [panda_finger_joint1, panda_grasptarget_hand]")
    path = _write(tmp_path, text)
    problems = _problems(path)
    p = problems[0]
    assert p.loc.line == _line_of(text, "panda_grasptarget_hand]")
    assert "'panda_grasptarget_hand' is a fixed joint; a finger joint must be prismatic or revolute" in p.message


def test_a_pad_link_that_is_not_on_the_gripper_is_an_error_at_its_line(tmp_path):
    text = _panda_text().replace("{link: panda_rightfinger,", "{link: panda_link5,")
    path = _write(tmp_path, text)
    (p,) = _problems(path)
    assert (p.loc.line, p.loc.col) == (_line_of(text, "panda_link5"), text.splitlines()[_line_of(text, "panda_link5") - 1].index("panda_link5") + 1)
    assert "gripper.pads.fingers[1].link 'panda_link5' is not part of the gripper (not a child of gripper.palm_link" \
           " 'panda_hand')" in p.message
    # on the gripper, but on the other finger
    text = _panda_text().replace("{link: panda_rightfinger,", "{link: panda_leftfinger,")
    (p,) = _problems(_write(tmp_path, text))
    assert "is not a child of finger joint 'panda_finger_joint2'" in p.message
    assert p.hint == "the URDF's links of that finger, closest first: panda_rightfinger"


def test_missing_ready_configuration_is_an_error_at_named_configurations(tmp_path):
    text = re.sub(r"\n  ready: [^\n]*", "", _panda_text())
    path = _write(tmp_path, text)
    (p,) = _problems(path)
    assert p.loc.line == _line_of(text, "named_configurations:")
    assert p.message == "named_configurations has no 'ready' configuration"
    assert "MoveJoints configuration: ready" in p.hint


def test_every_problem_is_reported_with_its_place(tmp_path):
    text = (_panda_text()
            .replace("arm:\n", "arm:\n  velocity_limit: [1]\n")                            # unknown key
            .replace("opening_m: [0.0, 0.08]", "opening_m: [0.0, 0.09]")                    # too wide
            .replace("home: [0.0, 0.0,", "home: [0.0, 2.0,")                                # outside a limit
            .replace("max_force_n: 140", "max_force_n: 40"))                                # below the default
    path = _write(tmp_path, text)
    got = {(p.loc.line, p.message.split(":")[0]) for p in _problems(path)}
    msgs = " | ".join(p.message + " ; " + p.hint for p in _problems(path))
    assert "unknown key 'velocity_limit' in arm ; did you mean 'velocity_limits'?" in msgs
    assert "a 0.09 m gap needs each finger joint to travel 0.045 m, but 'panda_finger_joint1'/'panda_finger_joint2' " \
           "stop at 0.04 m" in msgs
    assert "named_configurations.home[1]: panda_joint2 at 2 is outside its URDF limits [-1.8326, 1.8326]" in msgs
    assert "gripper.max_force_n (40 N) is below default_force_n (70 N)" in msgs
    lines = {line for line, _ in got}
    for needle in ("velocity_limit:", "home:", "opening_m:", "max_force_n: 40"):
        assert _line_of(text, needle) in lines, needle


def test_arm_joints_must_run_base_to_wrist(tmp_path):
    text = _panda_text().replace("panda_joint3, panda_joint4", "panda_joint4, panda_joint3")
    (p,) = _problems(_write(tmp_path, text))
    assert p.message == ("arm.joints must run from the base to the wrist along one chain: 'panda_joint3' does not "
                         "come after 'panda_joint4' in the URDF")
    assert p.hint == "the chain to 'panda_link3' is panda_joint1 -> panda_joint2 -> panda_joint3"
    text = _panda_text().replace("panda_joint1, panda_joint2,", "panda_joint1, panda_hand_joint,")
    (p,) = _problems(_write(tmp_path, text))
    assert "'panda_hand_joint' is a fixed joint; arm joints are revolute, continuous or prismatic" in p.message


def test_urdf_and_mesh_problems(tmp_path):
    (p,) = _problems(_write(tmp_path, _panda_text().replace("package://pybullet_data/franka_panda/panda.urdf",
                                                            "no_such_robot.urdf")))
    assert p.message == "URDF file 'no_such_robot.urdf' not found"
    bad = tmp_path / "r.urdf"
    (tmp_path / "meshes").symlink_to(os.path.join(os.path.dirname(PANDA_URDF), "meshes"))
    bad.write_text(open(PANDA_URDF).read().replace("package://meshes/collision/hand.obj", "meshes/nothing.obj"))
    text = _panda_text().replace("package://pybullet_data/franka_panda/panda.urdf", str(bad))
    (p,) = _problems(_write(tmp_path, text))
    assert p.message.startswith("the URDF names mesh 'meshes/nothing.obj': no such file")
    bad.write_text("<robot name='x'><link name='a'>")
    (p,) = _problems(_write(tmp_path, text))
    assert p.message.startswith("cannot use the URDF: ") and "malformed XML" in p.message


def test_unknown_model_lists_the_stock_models_with_a_did_you_mean():
    with pytest.raises(UnknownModelError) as e:
        resolve_model("kuka_iiwa")
    assert e.value.message == "unknown robot model 'kuka_iiwa'"
    assert e.value.hint.startswith("did you mean 'kuka_iiwa_wsg50'? stock models: franka_panda, kuka_iiwa_wsg50")
    with pytest.raises(UnknownModelError, match="robot description file 'robots/mine.yaml' not found"):
        resolve_model("robots/mine.yaml", base_dir="/nonexistent")


# ---- schema and CLI ----------------------------------------------------------------------------------------
def test_robot_schema_accepts_the_stock_files_and_rejects_unknown_keys():
    from py_trees_manipulation.interop.robot_schema import robot_schema

    s = robot_schema()
    jsonschema.Draft202012Validator.check_schema(s)
    v = jsonschema.Draft202012Validator(s)
    for path in stock_models().values():
        assert list(v.iter_errors(yaml.safe_load(open(path)))) == []
    doc = yaml.safe_load(open(PANDA_YAML))
    doc["gripper"]["finger_frictoin"] = 1.0
    del doc["named_configurations"]["ready"]
    errors = sorted(e.message for e in v.iter_errors(doc))
    assert any("'ready' is a required property" in m for m in errors)
    assert any("finger_frictoin" in m for m in errors)


def _ptm(*args):
    return subprocess.run([sys.executable, "-m", "py_trees_manipulation.cli", *args], capture_output=True, text=True)


def test_ptm_robots_lists_and_shows_models_without_importing_pybullet():
    out = _ptm("robots")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].split()[:6] == ["model", "joints", "reach", "payload", "opening", "grip"]
    assert re.match(r"franka_panda +7 +0\.95 m +3 kg \(lifts 2\.27 kg\) +0-80 mm +70 N \(max 140 N\)", lines[1])
    assert re.match(r"kuka_iiwa_wsg50 +7 +1\.09 m +7 kg \(lifts 5\.80 kg\) +0-104 mm +80 N \(max 80 N\)", lines[2])
    out = _ptm("robots", "kuka_iiwa_wsg50", "--json")
    info = json.loads(out.stdout)
    assert info["arm"][0]["joint"] == "lbr_iiwa_joint_1" and info["named_configurations"]["ready"][1] == -0.2226
    out = _ptm("robots", "kuka_iiwa")
    assert out.returncode == 2 and "did you mean 'kuka_iiwa_wsg50'?" in out.stderr
    code = ("import sys, py_trees_manipulation.commands.robots as c, argparse\n"
            "c.cmd_robots(argparse.Namespace(model='franka_panda', json=True))\n"
            "print('pybullet' in sys.modules, 'py_trees' in sys.modules, file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stderr.strip().splitlines()[-1] == "False False"


def test_ptm_robots_checks_a_description_file(tmp_path):
    text = _panda_text().replace("link: panda_grasptarget", "link: panda_grasp_target")
    path = _write(tmp_path, text)
    out = _ptm("robots", path)
    assert out.returncode == 2
    assert out.stderr.startswith(f"{path}:{_line_of(text, 'panda_grasp_target')}:")


def test_readme_documents_every_description_key_and_the_stock_models():
    """docs/robots.md's key reference is description_keys_doc() (`ptm docs --update docs/robots.md`
    when the key table changes) and its `ptm robots` listing is the command's output."""
    from py_trees_manipulation.robots.description import description_keys_doc

    readme = open(os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                               "docs", "robots.md")).read()
    block = readme.split("<!-- robot-keys:start -->\n", 1)[1].split("<!-- robot-keys:end -->", 1)[0]
    assert block == description_keys_doc()
    listing = _ptm("robots").stdout
    assert listing in readme.replace("$ ptm robots\n", "")
    # the worked example in the README is the stock file's own values
    kuka = stock_description("kuka_iiwa_wsg50")
    assert f"ready: {list(kuka.named_configurations['ready'])}" in readme
    assert "rpy_deg: [0, 0, 90]" in open(kuka.file).read()


def test_an_sdf_model_is_refused_with_the_way_out(tmp_path):
    text = _panda_text().replace("package://pybullet_data/franka_panda/panda.urdf", "gripper/wsg50_one_motor_gripper_new.sdf")
    (p,) = _problems(_write(tmp_path, text))
    assert p.message == "'gripper/wsg50_one_motor_gripper_new.sdf' is an SDF file; robot descriptions take a URDF"
    assert "sdformat_urdf" in p.hint


def test_ptm_robots_lists_each_models_payload_as_the_payload_check_uses_it():
    """Issue 33 item 6: `ptm robots` shows each robot's rated payload and what its hand may lift, the
    limit the payload checks use (scene.spec.lift_limit: the payload less the gripper's mass)."""
    from py_trees_manipulation.scene.spec import lift_limit, parse_scene

    listing = _ptm("robots").stdout
    expected = {"franka_panda": (3.0, 2.27), "kuka_iiwa_wsg50": (7.0, 5.80), "ufactory_xarm6": (5.0, 4.18)}
    for model, (rated, lifts) in expected.items():
        d = stock_description(model)
        assert d.payload_kg == rated
        limit, _, _ = lift_limit(parse_scene({"robots": [{"name": "r", "model": model}]}), "r")
        assert abs(limit - lifts) < 0.005
        line = next(x for x in listing.splitlines() if x.startswith(model + " "))
        assert f"{rated:g} kg (lifts {lifts:.2f} kg)" in line
    detail = _ptm("robots", "ufactory_xarm6").stdout
    assert "payload: 5 kg rated, gripper included; the hand may lift 4.18 kg (less the gripper's 0.82 kg)" in detail
