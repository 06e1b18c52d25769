"""The pure motion package: paths, ruckig timing on the polyline, OMPL planning (names, seeds, goals, failures)."""

import numpy as np
import pytest

from py_trees_manipulation.motion import PLANNER_CHOICES, PLANNERS
from py_trees_manipulation.motion.ompl_planning import NoPathError, plan_joint_path
from py_trees_manipulation.motion.paths import densify, first_invalid, path_length
from py_trees_manipulation.motion.timing import time_parameterize

LO, HI = -2.0 * np.ones(2), 2.0 * np.ones(2)


def wall(q):
    """A 2-D wall at |x| < 0.2 from y = -1.5 to 1.5: the way round is above or below it."""
    return not (abs(q[0]) < 0.2 and abs(q[1]) < 1.5)


# ---- paths ---------------------------------------------------------------------------------------------
def test_densify_keeps_every_waypoint_and_bounds_the_step():
    path = [[0.0, 0.0], [1.0, 0.0], [1.0, 0.5]]
    states, frac = densify(path, 0.3)
    steps = np.linalg.norm(np.diff(states, axis=0), axis=1)
    assert steps.max() <= 0.3 + 1e-12
    for w in path:
        assert np.min(np.linalg.norm(states - w, axis=1)) < 1e-12
    assert frac[0] == 0.0 and frac[-1] == pytest.approx(1.0)
    assert path_length(path) == pytest.approx(1.5)
    # fraction is arc length over length: the corner at 1.0 of 1.5
    corner = int(np.argmin(np.linalg.norm(states - [1.0, 0.0], axis=1)))
    assert frac[corner] == pytest.approx(1.0 / 1.5)


def test_first_invalid_reports_where_along_the_path():
    bad = first_invalid([[-1.0, 0.0], [1.0, 0.0]], wall, 0.01)
    assert bad is not None
    # the wall starts at x = -0.2: 0.8 of the 2.0 path
    assert bad.fraction == pytest.approx(0.4, abs=0.006)
    assert abs(bad.q[0]) < 0.2
    assert first_invalid([[-1.0, 1.6], [1.0, 1.6]], wall, 0.01) is None


# ---- timing --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("vs,acs", [(1.0, 1.0), (0.5, 0.25), (0.1, 0.1)])
def test_timing_respects_scaled_limits_and_stays_on_the_polyline(vs, acs):
    path = np.array([[0.0, 0.0, 0.0], [1.0, -0.5, 0.2], [1.2, 0.3, 0.2]])
    vmax, amax = np.array([2.0, 1.0, 3.0]), np.array([10.0, 4.0, 10.0])
    tr = time_parameterize(path, vmax, amax, velocity_scaling=vs, acceleration_scaling=acs, dt=0.001)
    dt = tr.dt
    # limits (finite differences of the sampled positions; 1 % slack for the discretisation)
    q = np.vstack([path[:1], tr.positions])
    v = np.diff(q, axis=0) / dt
    a = np.diff(v, axis=0) / dt
    assert np.all(np.abs(v) <= vs * vmax * 1.01 + 1e-9)
    assert np.all(np.abs(a) <= acs * amax * 1.01 + 1e-6)
    # ends exactly at the last waypoint, at rest; passes through the middle one at its time
    np.testing.assert_allclose(tr.positions[-1], path[-1], atol=1e-12)
    assert np.all(tr.velocities[-1] == 0)
    k = int(round(tr.waypoint_times[1] / dt)) - 1
    np.testing.assert_allclose(tr.positions[k], path[1], atol=1e-6)
    # every sample lies on one of the two segments (what was collision-checked is what runs)
    for p in tr.positions[::25]:
        d = []
        for a0, b0 in zip(path[:-1], path[1:]):
            u = np.clip(np.dot(p - a0, b0 - a0) / np.dot(b0 - a0, b0 - a0), 0, 1)
            d.append(np.linalg.norm(a0 + u * (b0 - a0) - p))
        assert min(d) < 1e-9


def test_timing_is_time_optimal_for_one_joint():
    # 1 rad at 1 rad/s, 2 rad/s^2, no jerk limit: trapezoid, T = d / v + v / a = 1.5 s
    tr = time_parameterize([[0.0], [1.0]], [1.0], [2.0])
    assert tr.duration == pytest.approx(1.5, abs=1e-3)
    # with a jerk limit it takes longer: each ramp of 0.5 s gets jerk ramps of a / j = 0.2 s
    tj = time_parameterize([[0.0], [1.0]], [1.0], [2.0], max_jerk=[10.0])
    assert tj.duration == pytest.approx(1.7, abs=1e-3)


def test_timing_of_nothing_holds_for_the_minimum_duration():
    tr = time_parameterize([[0.3, 0.1], [0.3, 0.1]], [1, 1], [1, 1], min_duration_s=0.05)
    assert len(tr.times) == 50 and np.all(tr.positions == [0.3, 0.1]) and tr.duration == pytest.approx(0.05)
    with pytest.raises(ValueError, match="velocity_scaling"):
        time_parameterize([[0.0], [1.0]], [1.0], [1.0], velocity_scaling=0.0)


# ---- OMPL ----------------------------------------------------------------------------------------------
def test_every_listed_planner_exists_and_plans():
    og = pytest.importorskip("ompl.geometric")
    assert PLANNER_CHOICES[:2] == ("auto", "straight") and PLANNERS[0] == "RRTConnect"
    for name in PLANNERS:
        assert hasattr(og, name), name
        path = plan_joint_path([-1.0, 0.0], [[1.0, 0.0]], LO, HI, wall, planner=name, time_s=0.3, seed=1)
        assert path.planner == name
        assert first_invalid(path.waypoints, wall, 0.02) is None   # checked at the planner's resolution
        np.testing.assert_allclose(path.waypoints[0], [-1, 0])
        np.testing.assert_allclose(path.waypoints[-1], [1, 0])


def test_same_seed_same_path_and_the_path_is_clear():
    a = plan_joint_path([-1.0, 0.0], [[1.0, 0.0]], LO, HI, wall, seed=7)
    b = plan_joint_path([-1.0, 0.0], [[1.0, 0.0]], LO, HI, wall, seed=7)
    np.testing.assert_array_equal(a.waypoints, b.waypoints)
    assert a.checks == b.checks
    assert len(a.waypoints) >= 3            # it had to go round the wall
    assert first_invalid(a.waypoints, wall, 0.02) is None
    assert a.length_rad == pytest.approx(path_length(a.waypoints))
    others = {tuple(np.round(plan_joint_path([-1.0, 0.0], [[1.0, 0.0]], LO, HI, wall, seed=s).waypoints[1], 6))
              for s in range(5)}
    assert len(others) > 1                  # the seed matters


def test_several_goals_first_reachable_wins():
    # the goal at (1, 0) lies inside a closed box: only (1, 1.8) can be reached
    def boxed(q):
        return wall(q) and not (0.8 < q[0] < 1.2 and -0.2 < q[1] < 0.2 and not (0.9 < q[0] < 1.1 and abs(q[1]) < 0.1))
    path = plan_joint_path([-1.0, 0.0], [[1.0, 0.0], [1.0, 1.8]], LO, HI, boxed, seed=3, time_s=1.0)
    assert path.goal_index == 1
    np.testing.assert_allclose(path.waypoints[-1], [1.0, 1.8])


def test_failures_say_why():
    with pytest.raises(ValueError, match="unknown planner 'RRTConect'"):
        plan_joint_path([0, 0], [[1, 1]], LO, HI, wall, planner="RRTConect")
    with pytest.raises(NoPathError) as e:  # a wall from bound to bound: no way round
        plan_joint_path([-1.0, 0.0], [[1.0, 0.0]], LO, HI, lambda q: abs(q[0]) > 0.2, time_s=0.2)
    assert e.value.reason == "timeout"
    assert str(e.value).startswith("no collision-free path within 0.2 s (RRTConnect")
    with pytest.raises(NoPathError) as e:
        plan_joint_path([0.0, 0.0], [[1.0, 1.8]], LO, HI, wall)
    assert e.value.reason == "invalid_start"
    with pytest.raises(ValueError, match="outside the joint limits"):
        plan_joint_path([0.0, 0.0], [[3.0, 0.0]], LO, HI, wall)


def test_a_checker_that_raises_is_reported_not_swallowed():
    def broken(q):
        if 0.0 < q[0] < 1.0:
            raise RuntimeError("checker bug")
        return True
    with pytest.raises(RuntimeError, match="checker bug"):
        plan_joint_path([-1.0, 0.0], [[1.5, 0.0]], LO, HI, broken, time_s=0.5, seed=1)


def test_no_nanobind_leak_report_at_exit(tmp_path):
    import subprocess
    import sys

    code = ("from py_trees_manipulation.motion.ompl_planning import plan_joint_path\n"
            "p = plan_joint_path([-1, 0], [[1, 0]], [-2, -2], [2, 2], "
            "lambda q: not (abs(q[0]) < 0.2 and abs(q[1]) < 1.5), seed=1)\n"
            "print(len(p.waypoints))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "leak" not in out.stderr + out.stdout
    assert int(out.stdout.strip()) >= 3

