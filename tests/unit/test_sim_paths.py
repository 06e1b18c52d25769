"""The simulator's fast paths compute exactly what the general functions they replace compute."""

from __future__ import annotations

import numpy as np
import pytest
import transforms3d as t3d

from py_trees_manipulation.geometry.poses import interpolate, pose_from_xyz_rpy, pq_from_pose
from py_trees_manipulation.geometry.poses import PoseInterpolation as _Interpolation
from py_trees_manipulation.sim.backend import _pq_of_valid_pose


def _random_pose(rng: np.random.Generator) -> np.ndarray:
    return pose_from_xyz_rpy(rng.uniform(-1.0, 1.0, 3), rng.uniform(-np.pi, np.pi, 3))


@pytest.mark.parametrize("seed", range(20))
def test_interpolation_is_bit_identical_to_interpolate(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = _random_pose(rng)
    # half the cases: a small rotation (interpolate's linear quaternion branch, dot > 0.9995)
    b = a @ pose_from_xyz_rpy(rng.uniform(-0.2, 0.2, 3), rng.uniform(-0.01, 0.01, 3)) if seed % 2 else _random_pose(rng)
    line = _Interpolation(a, b)
    for s in [0.0, 1.0, *rng.uniform(0.0, 1.0, 25)]:
        assert np.array_equal(line.at(float(s)), interpolate(a, b, float(s)))


def test_interpolation_takes_the_short_way_round() -> None:
    # 350 deg about z from a is -10 deg the short way: the midpoint is -5 deg, as interpolate gives
    a = np.eye(4)
    b = pose_from_xyz_rpy([0.2, 0.0, 0.0], [0.0, 0.0, np.radians(350.0)])
    mid = _Interpolation(a, b).at(0.5)
    assert np.degrees(t3d.euler.mat2euler(mid[:3, :3])[2]) == pytest.approx(-5.0, abs=1e-9)
    assert mid[:3, 3] == pytest.approx([0.1, 0.0, 0.0])


@pytest.mark.parametrize("seed", range(20))
def test_pq_of_valid_pose_matches_pq_from_pose(seed: int) -> None:
    T = _random_pose(np.random.default_rng(100 + seed))
    p1, q1 = _pq_of_valid_pose(T)
    p2, q2 = pq_from_pose(T)
    assert np.array_equal(p1, p2) and np.array_equal(q1, q2)
    assert q1[0] >= 0.0
    p1[0] += 1.0  # a copy, not a view of T
    assert T[0, 3] == p2[0]
