"""motion/timing.py rest_to_rest_hermite: the C1 sampling of a straight line's IK waypoints."""

import numpy as np
import pytest


def test_rest_to_rest_hermite_passes_the_waypoints_with_pchip_slopes_and_starts_and_ends_at_rest():
    # a straight line's IK waypoints (timed by the 0.1 s ramps of the line) sampled at 1 kHz: through
    # every waypoint, the interior slopes Fritsch-Carlson's (scipy's PchipInterpolator gives the same
    # curve between the second and the second-last waypoint), zero velocity at both ends, and no
    # velocity step (the linear sampling stepped by the segment's whole speed at each waypoint)
    from scipy.interpolate import PchipInterpolator

    from py_trees_manipulation.motion.timing import rest_to_rest_hermite

    rng = np.random.default_rng(3)
    t = np.concatenate([[0.0], np.cumsum(rng.uniform(0.01, 0.02, 30))])
    # a joint path from rest to rest, as a line's trapezoidal timing gives
    q = rng.uniform(-0.3, 0.3, 7) * 0.5 * (1.0 - np.cos(np.pi * t[:, None] / t[-1]))
    tr = rest_to_rest_hermite(t, q, 0.001)
    assert tr.times[-1] == pytest.approx(t[-1]) and tr.positions[-1] == pytest.approx(q[-1])
    at_wp = [int(round(x / 0.001)) - 1 for x in t[1:-1] if abs(x / 0.001 - round(x / 0.001)) < 1e-9]
    for k in at_wp:
        assert tr.positions[k] == pytest.approx(q[np.argmin(abs(t - tr.times[k]))], abs=1e-12)
    inner = (tr.times > t[1]) & (tr.times < t[-2])
    ref = PchipInterpolator(t, q, axis=0)
    assert np.abs(tr.positions[inner] - ref(tr.times[inner])).max() < 1e-12
    assert np.abs(tr.velocities[inner] - ref(tr.times[inner], 1)).max() < 1e-9
    assert np.abs(tr.velocities[-1]).max() == 0.0
    first = tr.velocities[0]                       # 1 ms in: a fraction of the first segment's speed
    assert np.all(np.abs(first) <= np.abs((q[1] - q[0]) / (t[1] - t[0])) * 0.001 / (t[1] - t[0]) * 6 + 1e-12)
    steps = np.abs(np.diff(tr.velocities, axis=0)).max(axis=0)
    linear_steps = np.abs(np.diff(np.diff(q, axis=0) / np.diff(t)[:, None], axis=0)).max(axis=0)
    assert np.all(steps < 0.25 * linear_steps)


def test_line_waypoint_times_is_the_trapezoid_the_planner_follows():
    # a 0.2 m line at 0.05 m/s: 4 s cruise + 0.1 s of ramps; waypoints 20 ms apart at most, the path
    # fraction 0 -> 1, the cruise at exactly 0.05 m/s (a fraction of 1/4 per second of 0.2 m)
    from py_trees_manipulation.motion.timing import line_waypoint_times

    t, s = line_waypoint_times(0.2, 0.0, 0.05)
    assert t[0] == 0.0 and t[-1] == pytest.approx(4.1) and s[0] == 0.0 and s[-1] == pytest.approx(1.0)
    assert np.diff(t).max() <= 0.02 + 1e-12 and np.all(np.diff(s) >= 0)
    mid = (t > 0.2) & (t < 3.9)
    assert np.diff(s[mid]) / np.diff(t[mid]) * 0.2 == pytest.approx(0.05)
    assert np.interp(0.1, t, s) * 0.2 == pytest.approx(0.5 * 0.05 * 0.1)   # the ramp: v t / 2


def test_line_peak_acceleration_grows_with_the_speed_and_is_the_curves_not_the_trapezoids():
    # the trapezoid's ramps accelerate at v / 0.1 s; the C1 curve through 20 ms waypoints from rest
    # peaks at about 2.2 times that (21.9 m/s^2 per m/s on a long line); a short line's ramps are
    # shorter and steeper
    from py_trees_manipulation.motion.timing import line_peak_acceleration

    for v in (0.02, 0.05, 0.1):
        assert line_peak_acceleration(None, v) == pytest.approx(21.94 * v, rel=0.01)
    assert line_peak_acceleration(0.2, 0.13) > line_peak_acceleration(0.2, 0.11) > line_peak_acceleration(0.2, 0.1)
    assert line_peak_acceleration(0.005, 0.2) > 2 * line_peak_acceleration(None, 0.2)
    assert line_peak_acceleration(0.0, 0.1) == 0.0
    with pytest.raises(ValueError, match="speed must be > 0"):
        line_peak_acceleration(0.2, 0.0)
