"""Single-actuator linkage grippers (issue 34): the xArm gripper's kinematics from its URDF.

Every finger joint of the xArm gripper ``<mimic>``s ``drive_joint``. The description names the
driver and the two pad links; the gap, each pad's travel per radian of the driver, the opening at
the driver's limits and the closing limit come from the URDF's forward kinematics with every mimic
joint following its own leader. Checked here against PyBullet's own link states (the mimic joints
set by hand: PyBullet ignores ``<mimic>``), on the URDF as shipped and on copies whose mimic tags
chain through other mimic joints or flip an axis with multiplier -1.
"""

from __future__ import annotations

import os
import re

import numpy as np
import pybullet as pb
import pytest

from py_trees_manipulation.geometry.poses import pose_from_pq
from py_trees_manipulation.robots import RobotDescriptionError, load_description, stock_description
from py_trees_manipulation.robots.loader import MODELS_DIR
from py_trees_manipulation.robots.urdf import parse_urdf, pybullet_data_path

XARM_DIR = os.path.join(pybullet_data_path(), "xarm")
XARM_URDF = os.path.join(XARM_DIR, "xarm6_with_gripper.urdf")
XARM_YAML = os.path.join(MODELS_DIR, "ufactory_xarm6.yaml")


def _pybullet_pads(urdf_path: str, d, qs):
    """Pad frames (palm frame) and gap by PyBullet's forward kinematics, every <mimic> joint set
    from its leader by hand (leaders first), at each driver position of ``qs``."""
    urdf = parse_urdf(urdf_path, d.packages)
    c = pb.connect(pb.DIRECT)
    try:
        body = pb.loadURDF(d.urdf, useFixedBase=True, physicsClientId=c)
        idx = {pb.getJointInfo(body, j, physicsClientId=c)[1].decode(): j for j in range(pb.getNumJoints(body, physicsClientId=c))}
        link = {pb.getJointInfo(body, j, physicsClientId=c)[12].decode(): j for j in idx.values()}
        g = d.gripper
        followers = urdf.mimic_followers(g.driver)

        def frame(name):
            st = pb.getLinkState(body, link[name], computeForwardKinematics=True, physicsClientId=c)
            return pose_from_pq(st[4], (st[5][3], *st[5][:3]))

        out = []
        for q in qs:
            pos = {g.driver: q}
            pb.resetJointState(body, idx[g.driver], q, physicsClientId=c)
            for j in followers:
                leader, m, off = j.mimic
                pos[j.name] = m * pos[leader] + off
                pb.resetJointState(body, idx[j.name], pos[j.name], physicsClientId=c)
            palm_inv = np.linalg.inv(frame(g.palm_link))
            pads = [palm_inv @ frame(p.link) @ p.pose for p in g.pads]
            gap = 0.5 * ((pads[0][:3, 3] - pads[1][:3, 3]) @ pads[0][:3, 1]
                         - (pads[0][:3, 3] - pads[1][:3, 3]) @ pads[1][:3, 1])
            out.append((pads, gap))
        return out
    finally:
        pb.disconnect(c)


def test_the_xarm_gripper_is_described_by_its_driver_and_pads():
    d = stock_description("ufactory_xarm6")
    g = d.gripper
    assert g.is_linkage and g.driver == "drive_joint" and g.drive_joints == ("drive_joint",)
    assert g.joints == ("drive_joint", "right_outer_knuckle_joint")       # the first joint to each pad
    assert g.pad_links == ("left_finger", "right_finger") and g.coupling == "linkage"
    # data sheet: 85 mm stroke, 30 N; the linkage closes to 1.65 mm at the driver's 0.85 rad
    assert g.opening_m == pytest.approx((0.0017, 0.085))
    assert (g.default_force_n, g.max_force_n) == (30.0, 30.0)
    assert g.closed_positions == (0.85, 0.85)


def test_pad_travel_per_radian_is_the_same_on_both_sides_and_matches_pybullet():
    """The issue's figures: with the right finger's joint following the driver (not the right
    knuckle), both pads travel 54.4 mm per radian at the closing limit; 42.0 mm per radian fully
    open (the knuckle's lever turns away from the travel). PyBullet's link states, differentiated
    numerically, give the same."""
    d = stock_description("ufactory_xarm6")
    g = d.gripper
    q, gap, slope = (np.array(v) for v in g.drive_table[:3])
    assert q[0] == 0.0 and q[-1] == pytest.approx(0.85)
    h = 1e-3                     # PyBullet's link states are single precision: a millirad step
    for qi in (0.0 + h, 0.2, 0.45, 0.7, 0.85 - h):
        (pa, ga), (pb_, gb) = _pybullet_pads(d.urdf_path, d, [qi - h, qi + h])
        travel_pb = [((pb_[k][:3, 3] - pa[k][:3, 3]) @ pa[k][:3, 1]) / (2 * h) for k in (0, 1)]
        assert travel_pb[0] == pytest.approx(travel_pb[1], abs=2e-5)               # both sides alike
        assert g.drive_slopes((qi,))[0] == pytest.approx(sum(travel_pb), rel=1e-3)
        assert (gb - ga) / (2 * h) == pytest.approx(sum(travel_pb), rel=1e-3)
    assert g.travel_per_unit == pytest.approx((-0.0544, -0.0544), abs=5e-5)      # closing limit, m/rad
    assert slope[0] / 2 == pytest.approx(-0.0420, abs=5e-5)                       # fully open


def test_opening_at_the_drivers_limits_matches_pybullet():
    d = stock_description("ufactory_xarm6")
    g = d.gripper
    (open_pads, open_gap), (closed_pads, closed_gap) = _pybullet_pads(d.urdf_path, d, [0.0, 0.85])
    assert open_gap == pytest.approx(0.0889, abs=5e-5) and closed_gap == pytest.approx(0.00165, abs=5e-5)
    assert g.gap_from_drive((0.0,)) == pytest.approx(open_gap, abs=1e-7)
    assert g.gap_from_drive((0.85,)) == pytest.approx(closed_gap, abs=1e-7)
    # the pads stay parallel and face each other; they advance 12.4 mm along the approach closing
    for pads in (open_pads, closed_pads):
        assert pads[0][:3, 1] @ pads[1][:3, 1] == pytest.approx(-1.0, abs=1e-9)
    advance = (closed_pads[0][2, 3] - open_pads[0][2, 3])
    assert advance == pytest.approx(0.0124, abs=1e-4)
    # the gap of every driver position and back, at the table's resolution
    for gap_m in (0.0017, 0.01, 0.045, 0.07, 0.085):
        (qd,) = g.drive_targets(gap_m)
        assert _pybullet_pads(d.urdf_path, d, [qd])[0][1] == pytest.approx(gap_m, abs=2e-6)
    # the TCP sits between the pads at a 45 mm gap (the grasp widths of the examples)
    urdf = parse_urdf(d.urdf_path, d.packages)
    (q45,) = g.drive_targets(0.045)
    tcp = urdf.link_pose(d.tcp_link_name, {g.driver: q45}, base=g.palm_link) @ d.tcp_offset
    pads = [urdf.link_pose(p.link, {g.driver: q45}, base=g.palm_link) @ p.pose for p in g.pads]
    assert np.linalg.norm(tcp[:3, 3] - (pads[0][:3, 3] + pads[1][:3, 3]) / 2) < 0.0005
    assert abs(tcp[:3, 1] @ pads[0][:3, 1]) == pytest.approx(1.0)


def _xarm_copy(tmp_path, urdf_text: str, yaml_extra: str = "") -> str:
    """A copy of the xArm URDF (its meshes from pybullet_data's two packages, named under
    ``packages:``) and of the stock description pointing at it; returns the description's path."""
    (tmp_path / "xarm.urdf").write_text(urdf_text)
    text = open(XARM_YAML).read().replace("urdf: package://pybullet_data/xarm/xarm6_with_gripper.urdf",
                                          "urdf: xarm.urdf\npackages:\n"
                                          f"  xarm_description: {os.path.join(XARM_DIR, 'xarm_description')}\n"
                                          f"  xarm_gripper: {os.path.join(XARM_DIR, 'xarm_gripper')}")
    (tmp_path / "xarm.yaml").write_text(text + yaml_extra)
    return str(tmp_path / "xarm.yaml")


def _set_mimic(text: str, joint: str, leader: str, multiplier: float) -> str:
    block = re.search(rf'<joint name="{joint}".*?</joint>', text, re.S).group(0)
    new = re.sub(r'<mimic joint="[^"]*" multiplier="[^"]*"', f'<mimic joint="{leader}" multiplier="{multiplier:g}"', block)
    return text.replace(block, new)


def _flip_axis(text: str, joint: str) -> str:
    block = re.search(rf'<joint name="{joint}".*?</joint>', text, re.S).group(0)
    axis = re.search(r'<axis xyz="([^"]*)"/>', block).group(1)
    flipped = " ".join(str(-float(v) + 0.0) for v in axis.split())
    lim = re.search(r'lower="([^"]*)" upper="([^"]*)"', block)
    new = block.replace(f'<axis xyz="{axis}"/>', f'<axis xyz="{flipped}"/>').replace(
        lim.group(0), f'lower="{-float(lim.group(2)):g}" upper="{-float(lim.group(1)):g}"')
    return text.replace(block, new)


def test_mimics_of_mimics_and_reversed_axes_give_the_same_linkage(tmp_path):
    """The right fingertip following the right knuckle (itself a mimic of the driver), and the
    right knuckle's axis reversed with multiplier -1: the same mechanism, the same table; PyBullet
    agrees with the mimics resolved through the chain. The meshes come from two packages."""
    stock = stock_description("ufactory_xarm6").gripper
    text = open(XARM_URDF).read()
    text = _set_mimic(text, "right_finger_joint", "right_outer_knuckle_joint", 1.0)
    text = _flip_axis(text, "right_outer_knuckle_joint")
    text = _set_mimic(text, "right_outer_knuckle_joint", "drive_joint", -1.0)
    # the fingertip now follows -drive through the knuckle: flip its multiplier back through the chain
    text = _set_mimic(text, "right_finger_joint", "right_outer_knuckle_joint", -1.0)
    d = load_description(_xarm_copy(tmp_path, text))
    urdf = parse_urdf(d.urdf_path, d.packages)
    assert urdf.mimic_root("right_finger_joint") == ("drive_joint", 1.0, 0.0)
    assert [j.name for j in urdf.mimic_followers("drive_joint")][-1] == "right_finger_joint"   # after its leader
    assert set(d.packages) == {"xarm_description", "xarm_gripper"}
    for got, want in zip(d.gripper.drive_table, stock.drive_table):
        assert got == pytest.approx(want, abs=1e-9)
    for q, (_, gap) in zip((0.1, 0.6), _pybullet_pads(d.urdf_path, d, [0.1, 0.6])):
        assert d.gripper.gap_from_drive((q,)) == pytest.approx(gap, abs=1e-6)


def _edit(path: str, old: str, new: str) -> str:
    with open(path) as f:
        text = f.read()
    assert old in text
    text = text.replace(old, new)
    with open(path, "w") as f:
        f.write(text)
    return text


def _problem(path: str, needle: str):
    with pytest.raises(RobotDescriptionError) as e:
        load_description(path)
    hits = [p for p in e.value.problems if needle in str(p)]
    assert hits, [str(p) for p in e.value.problems]
    return hits[0]


def test_the_issue_description_two_knuckles_as_finger_joints_is_refused_with_the_driver(tmp_path):
    """Naming the left driver and the right knuckle as two finger joints (the right fingertip
    follows the driver, not that knuckle: 0.087 m/rad on one side, 0.054 on the other) is refused,
    naming the driver to write instead."""
    path = _xarm_copy(tmp_path, open(XARM_URDF).read())
    text = _edit(path, "  driver: drive_joint", "  joints: [drive_joint, right_outer_knuckle_joint]")
    p = _problem(path, "linkage driven by one joint")
    assert "'right_finger_joint'" in p.message and "driver: drive_joint" in p.hint
    assert p.loc.line == next(i for i, line in enumerate(text.splitlines(), 1)
                              if line.startswith("  joints: [drive_joint, right_outer_knuckle_joint]"))


def test_a_driver_that_is_itself_a_mimic_names_its_leader(tmp_path):
    path = _xarm_copy(tmp_path, open(XARM_URDF).read())
    _edit(path, "  driver: drive_joint", "  driver: right_outer_knuckle_joint")
    p = _problem(path, "gripper.driver")
    assert "<mimic> of 'drive_joint'" in p.message and "driver: drive_joint" in p.hint


def test_a_driver_that_does_not_move_the_pads_is_refused(tmp_path):
    """A URDF whose right finger joints lost their <mimic>: the right pad does not follow the driver."""
    text = re.sub(r'(<joint name="right_(outer_knuckle|finger)_joint".*?)<mimic [^>]*/>', r"\1", open(XARM_URDF).read(),
                  flags=re.S)
    p = _problem(_xarm_copy(tmp_path, text), "gripper.pads.fingers[1].link")
    assert "'right_outer_knuckle_joint', 'right_finger_joint'" in p.message and "does not move" in p.message


def test_pads_turned_the_wrong_way_are_refused_at_the_pads(tmp_path):
    path = _xarm_copy(tmp_path, open(XARM_URDF).read())
    _edit(path, "position: [0, 0.026, 0.041], rpy_deg: [0, 0, 180]", "position: [0, 0.026, 0.041]")
    p = _problem(path, "do not face each other")
    assert "180 deg from opposite" in p.message and "rpy_deg: [0, 0, 180]" in p.hint


def test_an_opening_beyond_the_linkage_names_its_range(tmp_path):
    path = _xarm_copy(tmp_path, open(XARM_URDF).read())
    _edit(path, "opening_m: [0.0017, 0.085]", "opening_m: [0.0, 0.1]")
    p = _problem(path, "gripper.opening_m")
    assert "close to 1.6 mm and open to 88.9 mm" in p.message and "[0.0016, 0.0889]" in p.hint


def test_the_xarm_linkage_loops_are_found_where_the_inner_knuckles_pin_the_fingertips():
    """Issue 33 item 4: the URDF leaves each four-bar loop open; the pin that closes it is the point
    fixed in both the inner knuckle and the fingertip over the driver's whole range: the inner
    knuckle's far end (the outer knuckle's 35.465 / 42.039 mm lever), 15 mm back and 15 mm down the
    fingertip from its joint (the two knuckles' axes are 15 mm apart along y and z: a parallelogram)."""
    from py_trees_manipulation.robots.linkage import linkage_loops

    d = stock_description("ufactory_xarm6")
    g = d.gripper
    urdf = parse_urdf(d.urdf_path, d.packages)
    loops = linkage_loops(urdf, g.driver, g.pads, g.palm_link)
    assert [(lp.link, lp.pad_link) for lp in loops] == [("left_inner_knuckle", "left_finger"),
                                                         ("right_inner_knuckle", "right_finger")]
    left, right = loops
    assert left.in_link == pytest.approx([0.0, 0.035465, 0.042039], abs=1e-9)
    assert left.in_pad_link == pytest.approx([0.0, -0.015, 0.015], abs=1e-9)
    assert right.in_link == pytest.approx([0.0, -0.035465, 0.042039], abs=1e-9)
    assert right.in_pad_link == pytest.approx([0.0, 0.015, 0.015], abs=1e-9)
    assert left.joints == ("left_inner_knuckle_joint", "left_finger_joint") and left.error_m < 1e-9
    # pinned, the pads translate: the driver's lever on each pad is the pad's whole travel per radian
    # (54.4 mm/rad closed, 42.0 open), not the open chain's lever about the driver's axis
    q, _gap, slope, own0, own1 = (np.array(v) for v in g.drive_table)
    assert own0 + own1 == pytest.approx(slope, abs=1e-9)
    assert g.drive_force_slopes((0.85,))[0] == pytest.approx(-0.0544, abs=5e-5)
    assert g.drive_force_slopes((0.0,), pad=1)[0] == pytest.approx(-0.0420, abs=5e-5)


def test_a_knuckle_that_meets_no_fingertip_point_is_left_unpinned(tmp_path):
    """An inner knuckle whose far end does not stay on one fingertip point (it turns 0.8 times the
    driver: no longer a parallelogram) is no loop: nothing is pinned, and that pad's lever stays the open
    chain's (the driver alone turning the knuckle and the fingertip as one); the other side's loop is
    still found. The same URDF with its right side's mimics chained and an axis reversed finds both."""
    from py_trees_manipulation.robots.linkage import linkage_loops

    text = _set_mimic(open(XARM_URDF).read(), "left_inner_knuckle_joint", "drive_joint", 0.8)
    d = load_description(_xarm_copy(tmp_path, text))
    g = d.gripper
    urdf = parse_urdf(d.urdf_path, d.packages)
    assert [lp.pad_link for lp in linkage_loops(urdf, g.driver, g.pads, g.palm_link)] == ["right_finger"]
    _q, _gap, slope, own0, own1 = (np.array(v) for v in g.drive_table)
    assert own1 == pytest.approx(slope / 2, abs=1e-6)            # pinned: the right pad's travel
    assert not np.allclose(own0, slope / 2, atol=1e-3)           # open: the lever about the driver's axis
    text = _set_mimic(open(XARM_URDF).read(), "right_finger_joint", "right_outer_knuckle_joint", 1.0)
    text = _flip_axis(text, "right_outer_knuckle_joint")
    text = _set_mimic(text, "right_outer_knuckle_joint", "drive_joint", -1.0)
    text = _set_mimic(text, "right_finger_joint", "right_outer_knuckle_joint", -1.0)
    (tmp_path / "b").mkdir()
    d = load_description(_xarm_copy(tmp_path / "b", text))
    urdf = parse_urdf(d.urdf_path, d.packages)
    assert len(linkage_loops(urdf, d.gripper.driver, d.gripper.pads, d.gripper.palm_link)) == 2
