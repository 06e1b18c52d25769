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
