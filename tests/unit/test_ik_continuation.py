"""``solve_ik(..., local=True)``: the continuation step the Cartesian lines use (one damped-least-
squares call from the previous waypoint's solution) lands on the target within the thresholds,
next to its seed, for every stock arm; a seed it cannot continue from falls back to the full search."""

from __future__ import annotations

import numpy as np
import pybullet as pb
import pytest

from py_trees_manipulation.collision.ik import solve_ik
from py_trees_manipulation.robots import stock_description
from py_trees_manipulation.bullet.robots import LoadedRobot

ARMS = ["franka_panda", "kuka_iiwa_wsg50"]


@pytest.fixture(params=ARMS)
def robot(request):
    d = stock_description(request.param)
    c = pb.connect(pb.DIRECT)
    flags = pb.URDF_IGNORE_VISUAL_SHAPES | pb.URDF_IGNORE_COLLISION_SHAPES
    r = LoadedRobot(c, pb.loadURDF(d.urdf, [0, 0, 0.626], useFixedBase=True, flags=flags, physicsClientId=c), d)
    yield r, np.asarray(d.named_configurations["ready"], dtype=float)
    pb.disconnect(physicsClientId=c)


def _fk(r: LoadedRobot, q: np.ndarray) -> np.ndarray:
    r.reset_arm(q)
    return r.tcp_pose()


def test_a_line_of_5_mm_steps_is_followed_within_0_1_mm_and_next_to_each_seed(robot, monkeypatch):
    from py_trees_manipulation.collision import ik

    r, ready = robot
    T = _fk(r, ready)
    T[:3, 3] += [0.05, 0.0, -0.05]  # off the ready pose (the iiwa's ready elbow sits on its limit)
    start = solve_ik(r, T, [ready])
    assert start.position_error_m < 1e-4
    q = start.q
    calls = []
    real = pb.calculateInverseKinematics
    monkeypatch.setattr(ik.pb, "calculateInverseKinematics", lambda *a, **k: calls.append(1) or real(*a, **k))
    for k in range(30):  # 15 cm straight up (a lift), 5 mm per waypoint, orientation kept
        target = T.copy()
        target[2, 3] += 0.005 * (k + 1)
        sol = solve_ik(r, target, [q], iterations=3, local=True)
        assert sol.position_error_m < 1e-4
        assert sol.orientation_error_rad < 1e-4
        fk = _fk(r, sol.q)
        assert np.linalg.norm(fk[:3, 3] - target[:3, 3]) == pytest.approx(sol.position_error_m, abs=1e-9)
        assert float(np.max(np.abs(sol.q - q))) < 0.1  # a 5 mm step moves no joint by more than 0.1 rad
        assert np.all(sol.q >= r.lower) and np.all(sol.q <= r.upper)
        q = sol.q
    assert len(calls) == 30  # one damped-least-squares call per waypoint: the continuation, no fallback


def test_local_with_a_far_seed_falls_back_to_the_null_space_search(robot):
    r, ready = robot
    T = _fk(r, ready)
    target = T.copy()
    target[:3, 3] += [0.1, 0.15, -0.1]  # 21 cm away: no joint stays within 0.1 rad
    local = solve_ik(r, target, [ready], local=True)
    full = solve_ik(r, target, [ready])
    assert local.position_error_m < 1e-4 and local.orientation_error_rad < 1e-4
    np.testing.assert_array_equal(local.q, full.q)  # the same search, the same answer
