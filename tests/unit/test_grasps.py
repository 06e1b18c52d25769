"""Grasp sets and placements in the object frame (geometry/grasps.py): numbers only."""

import math

import numpy as np
import pytest

from py_trees_manipulation.geometry.grasps import (Handle, box_grasps, box_placements, cylinder_grasps,
                                                   cylinder_placements, default_grasps, mug_grasps,
                                                   resting_face, sphere_grasps, tcp_frame, tilt_deg,
                                                   urdf_grasps)
from py_trees_manipulation.geometry.poses import pose_from_xyz_rpy


def _is_rotation(R):
    return np.allclose(R.T @ R, np.eye(3), atol=1e-9) and np.isclose(np.linalg.det(R), 1.0)


def test_box_grasps_four_yaws_per_face_approach_along_inward_normal():
    size = (0.05, 0.07, 0.12)
    gs = box_grasps(size, name="box")
    assert len(gs) == 24
    by_handle = {}
    for g in gs:
        assert _is_rotation(g.pose[:3, :3])
        by_handle.setdefault(g.handle, []).append(g)
    assert sorted(by_handle) == sorted(f"box/{s}{a}" for s in "+-" for a in "xyz")
    top = by_handle["box/+z"]
    # approach straight down, TCP 3 cm below the top face (top at +0.06)
    for g in top:
        np.testing.assert_allclose(g.pose[:3, 2], [0, 0, -1], atol=1e-12)
        np.testing.assert_allclose(g.pose[:3, 3], [0, 0, 0.03], atol=1e-12)
    # the four yaws alternate the finger axis between the x and y edges: widths 5 and 7 cm
    assert sorted(round(g.width_m, 6) for g in top) == [0.05, 0.05, 0.07, 0.07]
    # a side face of a 5 cm deep box: the TCP cannot go deeper than the centre
    for g in by_handle["box/-x"]:
        np.testing.assert_allclose(g.pose[:3, 2], [1, 0, 0], atol=1e-12)
        np.testing.assert_allclose(g.pose[:3, 3], [0, 0, 0], atol=1e-12)
        assert round(g.width_m, 6) in (0.07, 0.12)


def test_box_grasp_matches_the_regrasp_example_top_handle():
    # examples/regrasp.yaml: box/top = position [0, 0, 0.03], rpy [180, 0, 90] in a 5 x 5 x 12 cm box
    expected = pose_from_xyz_rpy([0, 0, 0.03], np.radians([180, 0, 90]))
    assert any(np.allclose(g.pose, expected, atol=1e-9) for g in box_grasps((0.05, 0.05, 0.12)))


def test_grasp_in_world_follows_the_object_yaw():
    g = box_grasps((0.05, 0.05, 0.12))[0]
    obj = pose_from_xyz_rpy([0.5, 0.1, 0.686], [0, 0, math.radians(40)])
    W = g.in_world(obj)
    np.testing.assert_allclose(W, obj @ g.pose)
    pre = g.pregrasp_in_world(obj)
    # the pregrasp is 10 cm above the grasp, straight up (approach is down)
    np.testing.assert_allclose(pre[:3, 3] - W[:3, 3], [0, 0, 0.10], atol=1e-12)


def test_cylinder_grasps_continuous_symmetry():
    gs = cylinder_grasps(0.033, 0.12, name="can", samples=12)
    assert len(gs) == 36
    side = [g for g in gs if g.handle == "can/side"]
    assert len(side) == 12
    for g in side:
        z = g.pose[:3, 2]
        assert abs(z[2]) < 1e-12  # horizontal approach
        # approach points at the axis; TCP 3 mm from it (radius 33 mm, depth 30 mm)
        p = g.pose[:3, 3]
        np.testing.assert_allclose(np.linalg.norm(p[:2]), 0.003, atol=1e-12)
        np.testing.assert_allclose(np.cross(z, -p / np.linalg.norm(p)), 0, atol=1e-9)
        assert g.width_m == pytest.approx(0.066)
    angles = sorted(int(g.name.rsplit("/", 1)[1]) for g in side)
    assert angles == list(range(0, 360, 30))


def test_handle_symmetry_orders():
    base = tcp_frame([0, 0, 0.02], [0, 0, -1], [1, 0, 0])
    assert len(Handle("o/h", base, order=1).grasps()) == 1
    four = Handle("o/h", base, order=4).grasps()
    assert [g.name for g in four] == ["o/h/0", "o/h/90", "o/h/180", "o/h/270"]
    np.testing.assert_allclose(four[1].pose[:3, 1], [0, 1, 0], atol=1e-12)
    with pytest.raises(ValueError):
        Handle("o/h", np.eye(3))
    with pytest.raises(ValueError):
        Handle("o/h", base, order=-1)


def test_tcp_frame_rejects_parallel_axes():
    with pytest.raises(ValueError, match="parallel"):
        tcp_frame([0, 0, 0], [0, 0, 1], [0, 0, 2])


def test_mug_grasps_keep_the_fingers_off_the_handle():
    gs = mug_grasps(scale=0.8)
    assert len(gs) == 14
    assert sorted(round(math.degrees(math.atan2(g.pose[1, 1], g.pose[0, 1]))) % 360 for g in gs) == [
        0, 15, 30, 45, 135, 150, 165, 180, 195, 210, 225, 315, 330, 345]
    for g in gs:
        y = g.pose[:3, 1]
        # the handle is on the mug's +y side: the finger axis stays >= 45 deg away from +-y (the open
        # Panda fingers touch the handle from 75 deg: tests/unit/test_grasp_choice.py)
        assert abs(y[1]) <= math.sin(math.radians(45)) + 1e-9
        assert g.pose[2, 3] == pytest.approx(0.045)  # the examples' grasp height at scale 0.8
        assert g.width_m == pytest.approx(0.0677, abs=1e-4)
    assert urdf_grasps("objects/mug.urdf", 0.8, name="mug")[0].name == "mug/top/0"
    assert urdf_grasps("objects/unknown.urdf") is None


def test_sphere_and_default_grasps():
    assert len(sphere_grasps(0.03, samples=8)) == 16
    assert len(default_grasps("box", "b", size=(0.1, 0.1, 0.1))) == 24
    assert len(default_grasps("sphere", "s", radius=0.02, depth_m=0.01, samples=4)) == 8
    with pytest.raises(ValueError, match="unknown shape"):
        default_grasps("torus", "t")
    with pytest.raises(ValueError):
        box_grasps((0.1, 0, 0.1))


def test_box_placements_put_each_face_down_at_its_half_extent():
    size = (0.05, 0.08, 0.12)
    ps = box_placements(size)
    assert [p.face for p in ps] == ["box/-z", "box/+z", "box/+x", "box/-x", "box/+y", "box/-y"]
    for p in ps:
        assert _is_rotation(p.pose[:3, :3])
        axis, sign = "xyz".index(p.face[-1]), 1.0 if p.face[-2] == "+" else -1.0
        normal = np.zeros(3)
        normal[axis] = sign
        # the named face's outward normal points down in the surface frame
        np.testing.assert_allclose(p.pose[:3, :3] @ normal, [0, 0, -1], atol=1e-12)
        assert p.height_m == pytest.approx(size[axis] / 2)
        # the lowest corner of the box touches the surface (z = 0)
        corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]) * np.array(size) / 2
        world = (p.pose[:3, :3] @ corners.T).T + p.pose[:3, 3]
        assert world[:, 2].min() == pytest.approx(0.0, abs=1e-12)
    side = ps[2].on_surface([0.5, 0.1, 0.626], yaw_rad=math.radians(30))
    assert tilt_deg(side) == pytest.approx(90.0)
    assert side[2, 3] == pytest.approx(0.626 + 0.025)
    assert resting_face(side, ps).face == "box/+x"
    assert tilt_deg(ps[0].on_surface([0, 0, 0])) == pytest.approx(0.0)
    assert tilt_deg(ps[1].on_surface([0, 0, 0])) == pytest.approx(180.0)


def test_cylinder_placements():
    ps = cylinder_placements(0.03, 0.1, name="can")
    assert [p.face for p in ps] == ["can/-z", "can/+z"]
    assert all(p.height_m == pytest.approx(0.05) for p in ps)


def test_grasps_and_placements_of_scene_objects():
    from types import SimpleNamespace as NS

    from py_trees_manipulation.geometry.grasps import grasps_for_object, placements_for_object

    box = NS(name="box", primitive=NS(shape="box", size=(0.05, 0.05, 0.12), radius=None, length=None),
             urdf=None, scale=1.0)
    assert len(grasps_for_object(box)) == 24 and grasps_for_object(box)[0].handle == "box/+z"
    assert len(placements_for_object(box)) == 6
    can = NS(name="can", primitive=NS(shape="cylinder", size=None, radius=0.033, length=0.12), urdf=None, scale=1.0)
    assert len(grasps_for_object(can)) == 36 and len(placements_for_object(can)) == 2
    mug = NS(name="mug", primitive=None, urdf="objects/mug.urdf", scale=0.8)
    assert [g.name for g in grasps_for_object(mug)][:2] == ["mug/top/0", "mug/top/30"]
    assert placements_for_object(mug)[0].height_m == pytest.approx(0.003)
    declared = NS(name="o", primitive=box.primitive, urdf=None, scale=1.0,
                  grasps=[Handle("o/h", tcp_frame([0, 0, 0], [0, 0, -1], [1, 0, 0]), order=2)])
    assert [g.name for g in grasps_for_object(declared)] == ["o/h/0", "o/h/180"]
    assert grasps_for_object(NS(name="duck", primitive=None, urdf="duck_vhacd.urdf", scale=1.0)) == []
    # a URDF object's declared grasps are in the URDF's units: at scale 2 the TCP is twice as far out and
    # the width between the fingers doubles (the trial's block kept width_m 0.05 at 10 cm across)
    h = Handle("b/h", tcp_frame([-0.04, 0, 0.01], [0, 0, -1], [0, 1, 0]), width_m=0.05, approach_m=0.1, order=2)
    block = NS(name="b", primitive=None, urdf="jenga/jenga.urdf", scale=2.0, grasps=[h])
    g = grasps_for_object(block)
    assert [x.width_m for x in g] == [pytest.approx(0.10)] * 2 and g[0].approach_m == pytest.approx(0.1)
    assert g[0].pose[:3, 3] == pytest.approx([-0.08, 0, 0.02])
    assert g[0].pose[:3, :3] == pytest.approx(h.grasps()[0].pose[:3, :3])


def test_select_grasps_by_grasp_or_handle_name_with_or_without_the_object():
    from py_trees_manipulation.geometry.grasps import select_grasps

    gs = box_grasps((0.05, 0.05, 0.12), name="box")
    assert [g.name for g in select_grasps(gs, ["box/+z"], "box")] == ["box/+z/0", "box/+z/90", "box/+z/180",
                                                                      "box/+z/270"]
    assert [g.name for g in select_grasps(gs, ["+z/90", "box/-x/0"], "box")] == ["box/+z/90", "box/-x/0"]
    with pytest.raises(ValueError, match=r"object 'box' has no grasp or handle 'box/top'; did you mean .*"
                                         r"\(its handles: box/\+z, box/-z, box/\+x, box/-x, box/\+y, box/-y\)"):
        select_grasps(gs, ["box/top"], "box")
    with pytest.raises(ValueError, match=r"no grasp or handle 'handle'; \(its handles: box/"):
        select_grasps(gs, ["handle"], "box")


def test_an_object_without_grasps_asks_for_them():
    from types import SimpleNamespace as NS

    from py_trees_manipulation.geometry.grasps import NoGraspsError, object_grasps

    duck = NS(name="duck", primitive=None, urdf="duck_vhacd.urdf", scale=1.0, grasps=())
    with pytest.raises(NoGraspsError) as e:
        object_grasps(duck, where="scene.objects[2]")
    text = str(e.value)
    assert "object 'duck' (URDF 'duck_vhacd.urdf') has no known grasps" in text
    assert "declare them under scene.objects[2].grasps" in text and "objects/mug.urdf" in text


def test_grasp_poses_must_be_rotations():
    from py_trees_manipulation.geometry.grasps import check_grasp_pose

    T = np.eye(4)
    T[:3, :3] *= 1.001
    with pytest.raises(ValueError, match="handle 'o/h': the pose's rotation is not a rotation"):
        Handle("o/h", T)
    with pytest.raises(ValueError, match="last row"):
        check_grasp_pose(np.zeros((4, 4)), "grasp 'g'")
    assert check_grasp_pose(tcp_frame([0, 0, 0.02], [0, 0, -1], [1, 0, 0])).shape == (4, 4)
