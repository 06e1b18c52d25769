"""Pose algebra (transforms3d based), quaternions scalar-first (w, x, y, z)."""

import math

import numpy as np
import pytest

from py_trees_manipulation.conventions import quat_wxyz_from_xyzw, quat_xyzw_from_wxyz
from py_trees_manipulation.geometry import poses


def test_quaternion_round_trip_and_convention():
    T = poses.pose_from_xyz_rpy([0.1, 0.2, 0.3], [0, 0, math.pi / 2])
    p, q = poses.pq_from_pose(T)
    np.testing.assert_allclose(q, [math.sqrt(0.5), 0, 0, math.sqrt(0.5)], atol=1e-12)  # w first
    np.testing.assert_allclose(poses.pose_from_pq(p, q), T, atol=1e-12)
    assert quat_xyzw_from_wxyz(q) == pytest.approx((0, 0, math.sqrt(0.5), math.sqrt(0.5)))
    np.testing.assert_allclose(quat_wxyz_from_xyzw(quat_xyzw_from_wxyz(q)), q)


def test_invert_is_exact():
    T = poses.pose_from_xyz_rpy([1.0, -2.0, 0.5], [0.3, -0.2, 1.1])
    np.testing.assert_allclose(poses.invert(T) @ T, np.eye(4), atol=1e-12)


def test_interpolate_midpoint():
    a = poses.pose_from_xyz_rpy([0, 0, 0], [0, 0, 0])
    b = poses.pose_from_xyz_rpy([1, 0, 0], [0, 0, math.pi / 2])
    m = poses.interpolate(a, b, 0.5)
    np.testing.assert_allclose(m[:3, 3], [0.5, 0, 0])
    assert math.degrees(poses.rotation_angle(a, m)) == pytest.approx(45.0)


def test_pose_spec_errors_name_the_problem():
    with pytest.raises(ValueError, match=r"unknown pose key\(s\) \['positon'\]"):
        poses.pose_from_spec({"positon": [0, 0, 0]})
    with pytest.raises(ValueError, match="shape"):
        poses.check_pose(np.eye(3))


def test_translation_distance():
    a = poses.pose_from_xyz_rpy([0, 0, 0])
    b = poses.pose_from_xyz_rpy([0.3, 0.4, 0])
    assert poses.translation_distance(a, b) == pytest.approx(0.5)


def test_a_pybullet_pose_read_is_the_same_transform_as_pose_from_pq():
    from py_trees_manipulation.bullet.pb_pose import pose_from_pybullet

    rng = np.random.default_rng(3)
    for _ in range(50):
        q = rng.normal(size=4)
        q /= np.linalg.norm(q)   # (x, y, z, w), as PyBullet gives it
        p = rng.uniform(-1, 1, 3)
        np.testing.assert_allclose(pose_from_pybullet(tuple(p), tuple(q)),
                                   poses.pose_from_pq(p, quat_wxyz_from_xyzw(q)), atol=1e-12)
    # a quarter turn about z, 1 m up: x goes to y
    T = pose_from_pybullet((0.0, 0.0, 1.0), (0.0, 0.0, math.sqrt(0.5), math.sqrt(0.5)))
    np.testing.assert_allclose(T @ [1, 0, 0, 1], [0, 1, 1, 1], atol=1e-12)


def test_an_array_pose_from_the_blackboard_is_checked():
    T = poses.pose_from_xyz_rpy([0.5, 0, 0.6], [0, 0, 0.3])
    assert poses.pose_from_spec(T) is T   # a (4, 4) float array is used as it is
    bad = T.copy()
    bad[3, 0] = 1.0
    with pytest.raises(ValueError, match="last row"):
        poses.pose_from_spec(bad)
    np.testing.assert_allclose(poses.pose_from_spec(T.tolist()), T)
