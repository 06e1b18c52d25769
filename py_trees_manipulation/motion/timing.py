"""Time parameterisation of joint paths with ruckig: limits respected, the checked path executed.

:func:`time_parameterize` times a piecewise-linear joint path (the waypoints a planner or a straight
motion gives) segment by segment. Each segment is a rest-to-rest motion along the straight line
between its waypoints: the path coordinate ``s`` in [0, 1] gets a time-optimal one-DoF ruckig
profile under the tightest of the joints' limits projected on the segment
(``v_s = min_i v_i / |dq_i|``, likewise acceleration and jerk), so every joint stays within its
velocity, acceleration (and jerk) limits times ``velocity_scaling`` / ``acceleration_scaling``
(MoveIt's names) and the arm moves exactly along the segment that was collision-checked.

Why ruckig (``ruckig``, Berscheid & Kroeger, RSS 2021) and not TOPP-RA: TOPP-RA times a smooth
geometric path, so the polyline a planner returns must first be turned into a spline, which leaves
the segments that were checked for collisions; ruckig's rest-to-rest profiles keep the robot on
them, are jerk-limited when the robot gives jerk limits, and take microseconds. The price is a stop
at every waypoint, which a simplified plan has few of.

Without jerk limits the profiles are acceleration-limited (trapezoidal velocity).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from .paths import as_path

__all__ = ["Trajectory", "time_parameterize", "slowed_line_timing", "rest_to_rest_hermite", "line_waypoint_times",
           "line_peak_acceleration", "LINE_RAMP_S", "CARTESIAN_PERIOD_S", "CARTESIAN_STEP_M", "CARTESIAN_STEP_RAD",
           "MAX_ANGULAR_SPEED_RPS"]

#: a straight TCP line (MoveCartesian): its trapezoidal speed profile's ramps take this long, s
LINE_RAMP_S = 0.1
#: ... an IK waypoint at least every this long of the profile, s,
CARTESIAN_PERIOD_S = 0.02
#: ... and every this much of its length, m,
CARTESIAN_STEP_M = 0.005
#: ... and of its rotation, rad
CARTESIAN_STEP_RAD = 0.05
#: a line's rotation is done at most this fast, rad/s
MAX_ANGULAR_SPEED_RPS = 0.5


@dataclass
class Trajectory:
    """A timed joint trajectory sampled at a fixed period.

    Attributes:
        times: sample times from the start, seconds, shape (m,): ``dt, 2 dt, ...``; the last one is
            the duration (the state at time 0 is the first waypoint, not included).
        positions: joint positions, radians, shape (m, dof); the last row is the last waypoint.
        velocities: joint velocities, rad/s, shape (m, dof); zero at the end.
        waypoint_times: time at which each waypoint is reached, seconds, shape (n,).
        dt: sample period, seconds.
    """

    times: np.ndarray
    positions: np.ndarray
    velocities: np.ndarray
    waypoint_times: np.ndarray
    dt: float

    @property
    def duration(self) -> float:
        """Duration, seconds (0 for a path that does not move)."""
        return float(self.waypoint_times[-1]) if len(self.waypoint_times) else 0.0


def _segment_limits(dq: np.ndarray, limits: np.ndarray) -> float:
    moving = np.abs(dq) > 1e-12
    return float(np.min(limits[moving] / np.abs(dq[moving])))


def time_parameterize(waypoints: Sequence[Sequence[float]], max_velocity: Sequence[float],
                      max_acceleration: Sequence[float], *, velocity_scaling: float = 1.0,
                      acceleration_scaling: float = 1.0, max_jerk: Optional[Sequence[float]] = None,
                      dt: float = 0.001, min_duration_s: float = 0.0) -> Trajectory:
    """Time a piecewise-linear joint path (see the module docstring) and sample it every ``dt``.

    Args:
        waypoints: shape (n, dof), radians; consecutive duplicates are skipped.
        max_velocity: joint velocity limits, rad/s, shape (dof,).
        max_acceleration: joint acceleration limits, rad/s^2, shape (dof,).
        velocity_scaling, acceleration_scaling: fractions of the limits, in (0, 1].
        max_jerk: joint jerk limits, rad/s^3, shape (dof,); None: unlimited.
        dt: sample period, seconds (0.001 for the 1 kHz controllers).
        min_duration_s: lower bound on the whole duration (a short motion is stretched evenly).

    Returns:
        Trajectory: samples at ``dt, 2 dt, ...`` up to the duration, ending exactly on the last
        waypoint at rest.

    Raises:
        ValueError: scalings outside (0, 1], limits not positive or of the wrong length.
    """
    import ruckig

    path = as_path(waypoints)
    dof = path.shape[1]
    for name, v in (("velocity_scaling", velocity_scaling), ("acceleration_scaling", acceleration_scaling)):
        if not 0.0 < v <= 1.0:
            raise ValueError(f"{name} must be in (0, 1], got {v}")
    vmax = np.asarray(max_velocity, dtype=float) * velocity_scaling
    amax = np.asarray(max_acceleration, dtype=float) * acceleration_scaling
    jmax = np.asarray(max_jerk, dtype=float) if max_jerk is not None else np.full(dof, np.inf)
    for name, arr in (("max_velocity", vmax), ("max_acceleration", amax), ("max_jerk", jmax)):
        if arr.shape != (dof,) or not np.all(arr > 0):
            raise ValueError(f"{name} must hold {dof} positive values")
    if not dt > 0:
        raise ValueError(f"dt must be > 0 s, got {dt}")
    keep = [0] + [k for k in range(1, len(path)) if np.max(np.abs(path[k] - path[k - 1])) > 1e-12]
    path = path[keep]
    otg = ruckig.Ruckig(1)
    segments = []  # (start, delta, ruckig trajectory, duration)
    for a, b in zip(path[:-1], path[1:]):
        d = b - a
        inp = ruckig.InputParameter(1)
        inp.current_position, inp.current_velocity, inp.current_acceleration = [0.0], [0.0], [0.0]
        inp.target_position, inp.target_velocity, inp.target_acceleration = [1.0], [0.0], [0.0]
        inp.max_velocity = [_segment_limits(d, vmax)]
        inp.max_acceleration = [_segment_limits(d, amax)]
        js = _segment_limits(d, jmax)
        inp.max_jerk = [js if math.isfinite(js) else float("inf")]
        traj = ruckig.Trajectory(1)
        result = otg.calculate(inp, traj)
        if result not in (ruckig.Result.Working, ruckig.Result.Finished):
            raise ValueError(f"ruckig could not time a segment: {result}")
        segments.append((a, d, traj, float(traj.duration)))
    durations = np.array([s[3] for s in segments])
    total = float(durations.sum())
    stretch = max(1.0, min_duration_s / total) if total > 0 else 1.0
    waypoint_times = np.concatenate([[0.0], np.cumsum(durations)]) * stretch
    if total <= 0:  # nothing to move: hold still for min_duration_s
        m = int(math.ceil(min_duration_s / dt - 1e-9))
        times = np.arange(1, m + 1) * dt
        return Trajectory(times, np.repeat(path[:1], m, axis=0), np.zeros((m, dof)),
                          np.array([0.0, float(m * dt)]) if m else np.zeros(1), dt)
    m = max(1, int(math.ceil(waypoint_times[-1] / dt - 1e-9)))
    times = np.arange(1, m + 1) * dt
    times[-1] = waypoint_times[-1]
    q = np.empty((m, dof))
    qd = np.empty((m, dof))
    seg = 0
    for k, t in enumerate(times):
        while seg < len(segments) - 1 and t > waypoint_times[seg + 1]:
            seg += 1
        a, d, traj, dur = segments[seg]
        tau = min(max((t - waypoint_times[seg]) / stretch, 0.0), dur)
        pos, vel, _ = traj.at_time(tau)
        q[k] = a + pos[0] * d
        qd[k] = vel[0] / stretch * d
    q[-1] = path[-1]
    qd[-1] = 0.0
    return Trajectory(times=times, positions=q, velocities=qd, waypoint_times=waypoint_times, dt=dt)


#: the share of a joint's acceleration limit a guarded line may use for each of the two terms of
#: the joint acceleration ``q'' = q_ss v^2 + q_s dv/dt`` (path curvature, speed change). A guarded
#: line is there to meet a contact gently: the wrist force sensor reads the hand's inertia, and a
#: joint at its limit near a singularity (a line at the edge of the reach: q_s of 30 rad/m) saturates
#: its motor and jolts the hand by 15 N, which trips an 8 N guard 10 cm before the contact.
GUARDED_ACCEL_SHARE = 0.25


def slowed_line_timing(waypoints: Sequence[Sequence[float]], arc_m: Sequence[float], speed_mps: float,
                       slow_speed_mps: float, slow_from_m: float, accel_mps2: float,
                       max_velocity: Sequence[float], dt: float = 0.001,
                       max_acceleration: Optional[Sequence[float]] = None) -> Trajectory:
    """Time a straight TCP line that must be slow near its end: a guarded line meeting its
    expected contact (:mod:`py_trees_manipulation.scene.contact`).

    The joints follow the waypoints along a C1 curve in the line's arc length ``s`` (shape-preserving
    cubic, ``scipy.interpolate.PchipInterpolator``: between two waypoints each joint stays between
    its two values, so the path is the checked one to within a waypoint's step), so the joint
    velocities never step: a step would jolt the wrist force sensor (the held mass times the
    step's acceleration) and trip the guard. The TCP speed along ``s`` is the largest that starts
    and ends at rest, changes by at most ``accel_mps2``, cruises at ``speed_mps``, is down to
    ``slow_speed_mps`` at ``slow_from_m`` and stays there, and asks no joint for more than its
    velocity limit, nor (with ``max_acceleration``) for more than :data:`GUARDED_ACCEL_SHARE` of its
    acceleration limit in either term of ``q'' = q_ss v^2 + q_s dv/dt`` (a line through a nearly
    singular posture slows down there): two passes over a fine grid of ``s`` (backward: braking in
    time; forward: accelerating), the classic numerical time-optimal parameterisation.

    Args:
        waypoints: the line's IK waypoints, shape (n, dof), radians.
        arc_m: the TCP's arc length at each waypoint, metres, increasing from 0, shape (n,).
        speed_mps, slow_speed_mps: cruise speed and speed from ``slow_from_m`` on, m/s, > 0.
        slow_from_m: arc length at which the line is slow, metres (<= 0: slow throughout).
        accel_mps2: TCP acceleration of the ramps, m/s^2, > 0.
        max_velocity: joint velocity limits, rad/s, shape (dof,).
        dt: sample period, seconds.
        max_acceleration: joint acceleration limits, rad/s^2, shape (dof,); None: not bounded.

    Returns:
        A :class:`Trajectory` (``waypoint_times`` at each waypoint).

    Raises:
        ValueError: non-positive speeds or acceleration, or arc lengths that decrease.
    """
    from scipy.interpolate import PchipInterpolator

    q = np.asarray(waypoints, dtype=float)
    arc = np.asarray(arc_m, dtype=float)
    if not (speed_mps > 0 and slow_speed_mps > 0 and accel_mps2 > 0):
        raise ValueError("speeds and acceleration must be > 0")
    if len(arc) != len(q) or np.any(np.diff(arc) < -1e-12):
        raise ValueError("arc_m must give one increasing arc length per waypoint")
    length = float(arc[-1])
    if length <= 0.0:
        return Trajectory(times=np.zeros(0), positions=np.zeros((0, q.shape[1])), velocities=np.zeros((0, q.shape[1])),
                          waypoint_times=np.zeros(len(q)), dt=dt)
    keep = np.concatenate([[True], np.diff(arc) > 1e-12])
    keep[-1] = True
    qk, ak = q[keep], arc[keep]
    if len(ak) > 1 and ak[-1] - ak[-2] <= 1e-12:   # the last waypoint replaces one at the same arc
        qk, ak = np.delete(qk, -2, axis=0), np.delete(ak, -2)
    if len(ak) < 2:
        qk, ak = np.stack([q[0], q[-1]]), np.array([0.0, length])
    curve = PchipInterpolator(ak, qk, axis=0)
    d1, d2 = curve.derivative(1), curve.derivative(2)
    vlim = np.asarray(max_velocity, dtype=float)
    a, cruise, slow = float(accel_mps2), float(speed_mps), float(slow_speed_mps)

    # the speed limit at every point of a fine grid (a step of at most a tenth of a millimetre)
    m = max(2, int(math.ceil(length / 1e-4)) + 1)
    s = np.linspace(0.0, length, m)
    qs = np.abs(d1(s))                                    # |dq/ds|, rad/m, shape (m, dof)
    with np.errstate(divide="ignore"):
        v_max = np.min(np.where(qs > 1e-12, vlim / np.maximum(qs, 1e-12), math.inf), axis=1)
    v_max = np.minimum(v_max, np.where(s >= slow_from_m, slow, cruise))
    a_at = np.full(m, a)
    if max_acceleration is not None:
        amax = GUARDED_ACCEL_SHARE * np.asarray(max_acceleration, dtype=float)
        qss = np.abs(d2(s))
        with np.errstate(divide="ignore"):
            v_max = np.minimum(v_max, np.min(np.sqrt(amax / np.maximum(qss, 1e-12)), axis=1))
            a_at = np.minimum(a_at, np.min(amax / np.maximum(qs, 1e-12), axis=1))
    ds = length / (m - 1)
    v = v_max.copy()
    v[0] = v[-1] = 0.0
    for i in range(m - 2, -1, -1):                       # brake in time for every limit ahead
        v[i] = min(v[i], math.sqrt(v[i + 1] ** 2 + 2.0 * a_at[i] * ds))
    for i in range(1, m):                                # and speed up no faster than allowed
        v[i] = min(v[i], math.sqrt(v[i - 1] ** 2 + 2.0 * a_at[i - 1] * ds))
    t_grid = np.concatenate([[0.0], np.cumsum(2.0 * ds / np.maximum(v[:-1] + v[1:], 1e-12))])
    n = max(1, int(math.ceil(t_grid[-1] / dt - 1e-9)))
    times = np.arange(1, n + 1) * dt
    times[-1] = t_grid[-1]
    # within a grid step the speed changes linearly in time (constant acceleration): the step's
    # length is its mean speed times its duration
    i = np.clip(np.searchsorted(t_grid, times, side="right") - 1, 0, m - 2)
    tau = times - t_grid[i]
    acc = (v[i + 1] - v[i]) / np.maximum(t_grid[i + 1] - t_grid[i], 1e-12)
    s_t = np.minimum(s[i] + v[i] * tau + 0.5 * acc * tau ** 2, length)
    sdot = np.maximum(v[i] + acc * tau, 0.0)
    pos = curve(s_t)
    vel = d1(s_t) * sdot[:, None]
    pos[-1] = q[-1]
    vel[-1] = 0.0
    return Trajectory(times=times, positions=pos, velocities=vel, waypoint_times=np.interp(arc, s, t_grid), dt=dt)


def rest_to_rest_hermite(waypoint_times: Sequence[float], waypoints: Sequence[Sequence[float]],
                         dt: float = 0.001) -> Trajectory:
    """Sample a joint path through timed waypoints along a C1 curve that starts and ends at rest.

    Each joint follows a piecewise cubic Hermite curve through the waypoints with the
    Fritsch-Carlson slopes (the shape-preserving "PCHIP" of Fritsch & Carlson, SIAM J. Numer. Anal.
    17(2), 1980, as ``scipy.interpolate.PchipInterpolator`` computes them: a harmonic mean of the
    two neighbouring secants, 0 where the joint turns), with a zero slope at the first and last
    waypoint. Between two waypoints a joint stays between its two values (the path is the checked
    one to within a waypoint's step), and its velocity never steps. A straight line's IK waypoints
    were sampled linearly in time before: the velocity stepped at every waypoint (20 ms apart), and
    a line starting at 20 mm/s jolted the hand by 2.6 m/s^2 in its first millisecond, enough for a
    palm accelerometer armed at 2 m/s^2 (the PR2's "slow, delicate motions") to let go of the
    object in the air. (NumPy here: ``scipy.interpolate`` alone takes 0.3-1.5 s to import, more
    than a whole pick on this project's machine.)

    Args:
        waypoint_times: time of each waypoint, seconds, increasing from 0, shape (n,).
        waypoints: joint positions, radians, shape (n, dof).
        dt: sample period, seconds.

    Returns:
        A :class:`Trajectory` sampled at ``dt, 2 dt, ...`` up to the last waypoint's time.

    Raises:
        ValueError: fewer than two waypoints, or times that do not increase.
    """
    t = np.asarray(waypoint_times, dtype=float)
    q = np.asarray(waypoints, dtype=float)
    if len(t) < 2 or len(q) != len(t):
        raise ValueError("need at least two waypoints, one time each")
    h = np.diff(t)
    if np.any(h <= 0):
        raise ValueError("waypoint times must increase")
    secant = np.diff(q, axis=0) / h[:, None]                          # (n - 1, dof)
    slope = np.zeros_like(q)
    if len(t) > 2:
        m0, m1 = secant[:-1], secant[1:]
        h0, h1 = h[:-1, None], h[1:, None]
        w1, w2 = 2.0 * h1 + h0, h1 + 2.0 * h0
        same = (m0 * m1) > 0.0
        with np.errstate(divide="ignore", invalid="ignore"):
            harmonic = (w1 + w2) / (w1 / np.where(same, m0, 1.0) + w2 / np.where(same, m1, 1.0))
        slope[1:-1] = np.where(same, harmonic, 0.0)
    n = max(1, int(math.ceil(t[-1] / dt - 1e-9)))
    times = np.arange(1, n + 1) * dt
    times[-1] = t[-1]
    i = np.clip(np.searchsorted(t, times, side="right") - 1, 0, len(t) - 2)
    hh = h[i][:, None]
    u = ((times - t[i]) / h[i])[:, None]
    u2, u3 = u * u, u * u * u
    p0, p1, d0, d1 = q[i], q[i + 1], slope[i] * hh, slope[i + 1] * hh
    pos = (2 * u3 - 3 * u2 + 1) * p0 + (u3 - 2 * u2 + u) * d0 + (-2 * u3 + 3 * u2) * p1 + (u3 - u2) * d1
    vel = ((6 * u2 - 6 * u) * p0 + (3 * u2 - 4 * u + 1) * d0 + (-6 * u2 + 6 * u) * p1 + (3 * u2 - 2 * u) * d1) / hh
    pos[-1], vel[-1] = q[-1], 0.0
    return Trajectory(times=times, positions=pos, velocities=vel, waypoint_times=t.copy(), dt=dt)


def line_waypoint_times(dist_m: float, angle_rad: float, speed_mps: float) -> tuple[np.ndarray, np.ndarray]:
    """The waypoints of a straight TCP line (MoveCartesian), before any joint's velocity limit slows
    a segment: a trapezoidal speed profile along the path, cruising at ``speed_mps`` (or slower, so
    that the rotation takes at least ``angle_rad / MAX_ANGULAR_SPEED_RPS``), with ramps of
    :data:`LINE_RAMP_S` (shorter for a line shorter than that at its speed); a waypoint every
    :data:`CARTESIAN_PERIOD_S` of time, :data:`CARTESIAN_STEP_M` of length and
    :data:`CARTESIAN_STEP_RAD` of rotation at most.

    Args:
        dist_m: the line's length, metres, >= 0.
        angle_rad: its rotation, radians, >= 0.
        speed_mps: cruise speed, m/s, > 0.

    Returns:
        ``(t_wp, s_wp)``: the waypoint times from 0, seconds, and the path fraction at each (0 to 1),
        shape (n + 1,) each.
    """
    t_nom = max(dist_m / speed_mps, angle_rad / MAX_ANGULAR_SPEED_RPS, 0.02)
    ta = min(LINE_RAMP_S, t_nom)  # ramp time; the cruise speed is exactly speed_mps
    T = t_nom + ta
    v = 1.0 / t_nom

    def s_of(t: np.ndarray) -> np.ndarray:
        t = np.clip(t, 0.0, T)
        return np.where(t < ta, 0.5 * v / ta * t ** 2,
                        np.where(t > T - ta, 1.0 - 0.5 * v / ta * (T - t) ** 2, v * (t - ta / 2)))

    n_wp = max(2, int(math.ceil(T / CARTESIAN_PERIOD_S)), int(math.ceil(dist_m / CARTESIAN_STEP_M)),
               int(math.ceil(angle_rad / CARTESIAN_STEP_RAD)))
    t_wp = np.linspace(0.0, T, n_wp + 1)
    return t_wp, s_of(t_wp)


#: :func:`line_peak_acceleration` takes a line of unknown length to cruise this long between its
#: ramps, s
_PEAK_CRUISE_S = 0.2


def line_peak_acceleration(dist_m: Optional[float], speed_mps: float, dt: float = 0.001) -> float:
    """The largest TCP acceleration of a straight line (MoveCartesian without a force guard) as it is
    executed: its waypoints (:func:`line_waypoint_times`) through the C1 curve the joints follow
    (:func:`rest_to_rest_hermite`), differenced every ``dt`` as a simulated hand's velocity is. The
    curve from rest peaks at about 2.2 times the trapezoid's ``speed / LINE_RAMP_S`` (21.9 m/s^2 per
    m/s on a long line). A palm accelerometer reads the hand's acceleration: on the three stock
    robots the start of a line read 18-19.6 m/s^2 per m/s (a 0.2 kg block held, 20-110 mm/s), under
    this figure. Joint-space curvature (about ``q_ss v^2``) is left out: negligible at the speeds of
    a set-down.

    Args:
        dist_m: the line's length, metres; None: unknown, taken as long (a short line's ramps are
            shorter and steeper). The peak moves by a few per cent with where the ramps' ends fall
            between two waypoints, so it is computed for the line's own length.
        speed_mps: cruise speed, m/s, > 0.
        dt: the sample period, seconds (the simulator's physics step).

    Returns:
        The peak acceleration, m/s^2.

    Raises:
        ValueError: a speed that is not positive.
    """
    if not speed_mps > 0:
        raise ValueError(f"speed must be > 0 m/s, got {speed_mps}")
    dist = speed_mps * (LINE_RAMP_S + _PEAK_CRUISE_S) if dist_m is None else float(dist_m)
    if not dist > 0:
        return 0.0
    t_wp, s_wp = line_waypoint_times(dist, 0.0, speed_mps)
    traj = rest_to_rest_hermite(t_wp, (s_wp * dist)[:, None], dt)
    vel = np.concatenate([[0.0], traj.velocities[:, 0]])
    return float(np.max(np.abs(np.diff(vel)))) / dt
