"""Guarded contact within its bound (issue 33 item 4), without the simulator: the contact materials and
the guard's speed bound (scene/contact.py), the slowed timing of a guarded line (motion/timing.py),
the fixtures' material keys, and ``ptm validate`` refusing a guard below the wrist sensor's resolution
or a contact speed too fast for the guard, with the number that would do."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from py_trees_manipulation.behaviors.motion import MoveCartesian
from py_trees_manipulation.motion.timing import slowed_line_timing
from py_trees_manipulation.scene.contact import (GUARD_BOUND, TABLE_TOP, ContactMaterial, guard_contact_speed,
                                                 guard_peak_n, pair_contact)
from py_trees_manipulation.scene.spec import SceneError, parse_scene

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# ---- the contact model -------------------------------------------------------------------------------
def test_a_pair_combines_as_bullet_does_over_a_four_point_face():
    k, d = pair_contact(None, TABLE_TOP)                     # a rigid mug on the table top
    assert (k, d) == (pytest.approx(4 * 1e5), pytest.approx(4 * 300.0))
    k, d = pair_contact(ContactMaterial(1e4, 10.0), TABLE_TOP, points=1)   # stiffnesses in series, dampings added
    assert k == pytest.approx(1.0 / (1 / 1e4 + 1 / 1e5)) and d == pytest.approx(310.0)
    assert pair_contact(None, None, points=1) == (1e6, 0.0)   # two rigid bodies: the bound's stand-in


def test_the_guard_speed_keeps_the_peak_within_twice_the_threshold():
    k, d = pair_contact(None, TABLE_TOP)
    v = guard_contact_speed(8.0, k, d, 0.005)
    # (2 - 1) 8 N / (1200 N s/m + 4e5 N/m (5 ms + 2 ms)) = 2.0 mm/s
    assert v == pytest.approx(8.0 / 4000.0)
    assert guard_peak_n(8.0, v, k, d, 0.005) == pytest.approx(GUARD_BOUND * 8.0)
    assert guard_peak_n(8.0, 0.05, k, d, 0.005) == pytest.approx(8.0 + 60.0 + 140.0)   # 5 cm/s: 208 N
    assert guard_contact_speed(16.0, k, d, 0.005) == pytest.approx(2 * v)             # linear in the threshold
    with pytest.raises(ValueError):
        guard_contact_speed(0.0, k, d, 0.005)
    with pytest.raises(ValueError):
        ContactMaterial(0.0, 1.0)


# ---- the slowed line -------------------------------------------------------------------------------------
def _line(length=0.125, n=26):
    arc = np.linspace(0.0, length, n)
    q = np.stack([arc * 2.0, -arc], axis=1)          # a joint path proportional to the TCP's arc
    return q, arc


def test_a_guarded_line_cruises_then_meets_its_contact_at_the_contact_speed():
    q, arc = _line()
    traj = slowed_line_timing(q, arc, speed_mps=0.05, slow_speed_mps=0.007, slow_from_m=0.11,
                              accel_mps2=0.5, max_velocity=[10.0, 10.0])
    s = np.interp(traj.positions[:, 0], q[:, 0], arc)        # the TCP's arc at every sample
    v = np.diff(s) / traj.dt
    assert v.max() == pytest.approx(0.05, rel=0.01)           # cruise
    assert np.all(v[s[:-1] >= 0.11] <= 0.007 + 1e-4)          # slow from slow_from_m on
    assert np.all(np.abs(np.diff(v[:-10])) / traj.dt < 0.5 * 1.1)   # no velocity step: the ramps' 0.5 m/s^2
    assert np.all(np.abs(np.diff(v)) / traj.dt < 1.5)               # (the last 10 ms brake on the end curve)
    np.testing.assert_allclose(traj.positions[-1], q[-1])
    assert np.all(np.diff(traj.waypoint_times) > 0) and traj.duration == pytest.approx(traj.times[-1], abs=1e-3)
    # 0.11 m at up to 5 cm/s, the last 15 mm at 7 mm/s: about 2.2 s + 2.1 s (plus the ramps)
    assert 4.2 < traj.duration < 5.0


def test_a_line_that_starts_in_contact_is_slow_throughout_and_joint_limits_hold():
    q, arc = _line()
    traj = slowed_line_timing(q, arc, 0.05, 0.01, slow_from_m=-0.01, accel_mps2=0.5, max_velocity=[0.01, 10.0])
    qd = np.abs(np.diff(traj.positions[:, 0])) / traj.dt
    assert qd.max() <= 0.01 * 1.05                             # joint 1 at its 0.01 rad/s limit: 5 mm/s of arc
    s = np.interp(traj.positions[:, 0], q[:, 0], arc)
    assert (np.diff(s) / traj.dt).max() <= 0.005 * 1.05


def test_a_line_through_a_nearly_singular_posture_slows_there_and_its_joint_velocities_never_step():
    # a joint whose rate along the line jumps tenfold within 5 mm (dq/ds 3 -> 31 rad/m), as a Panda's
    # elbow does on a place at the edge of its reach: linear in s, its velocity stepped by 0.3 rad/s
    # in 1 ms, the motor saturated and the 15 N jolt tripped an 8 N guard 114 mm before the table
    arc = np.linspace(0.0, 0.125, 126)
    rate = 3.0 + 28.0 * np.exp(-((arc - 0.02) / 0.002) ** 2)
    q = np.stack([np.concatenate([[0.0], np.cumsum(rate[1:] * np.diff(arc))]), arc], axis=1)
    amax = np.array([10.0, 10.0])
    traj = slowed_line_timing(q, arc, 0.05, 0.004, slow_from_m=0.11, accel_mps2=0.5,
                              max_velocity=[2.0, 2.0], max_acceleration=amax)
    qdd = np.diff(traj.velocities[:-1], axis=0) / traj.dt
    # each term of q'' = q_ss v^2 + q_s dv/dt within a quarter of the limit: the sum within half
    assert np.abs(qdd).max(axis=0)[0] <= 0.5 * amax[0] * 1.05
    assert np.abs(np.diff(traj.velocities[:, 0])).max() <= 0.5 * amax[0] * traj.dt * 1.05   # no step
    # the joint passes through the checked waypoints (the curve is a shape-preserving cubic in s)
    s_t = np.interp(traj.positions[:, 1], arc, arc)
    np.testing.assert_allclose(np.interp(arc, s_t, traj.positions[:, 0]), q[:, 0], atol=2e-4)
    # slowed where the joint turns fastest (s = 20 mm -/+ 2/sqrt(2) mm, q_ss = 28 sqrt(2) / 2 mm x
    # e^-1/2 = 12,009 rad/m^2) to sqrt(0.25 x 10 / 12,009) = 14.4 mm/s, and no slower
    v = np.diff(traj.positions[:, 1]) / traj.dt
    near = v[np.abs(s_t[:-1] - (0.02 - 0.002 / np.sqrt(2))) < 0.0002]
    assert near.max() <= 0.0144 * 1.03 and near.min() >= 0.0144 * 0.8   # (the cubic through 1 mm steps)
    assert v.max() == pytest.approx(0.05, rel=0.02)
    np.testing.assert_allclose(traj.positions[-1], q[-1])


def test_a_guard_that_trips_far_before_its_expected_contact_is_not_the_contact():
    from py_trees_manipulation.collision.arm_planner import EARLY_STOP_M, GuardedApproach
    from py_trees_manipulation.hardware.planning import HardwarePlanning
    from py_trees_manipulation.msgs.actions import GoalHandle, GoalStatus
    from py_trees_manipulation.msgs.motion import MotionResult

    g = GuardedApproach(pair="the held mug / table", contact_m=0.123, slow_from_m=0.113, contact_speed_mps=0.002,
                        max_speed_mps=0.002, stiffness_n_per_m=4e5, damping_n_s_per_m=1200, peak_n=16.0, line_m=0.125)
    assert EARLY_STOP_M == 0.02
    assert g.early_stop(remaining_m=0.002) == ""          # on the table (123 mm of 125)
    assert g.early_stop(remaining_m=0.021) == ""          # 19 mm early: within the slow zone's reach
    why = g.early_stop(remaining_m=0.116)                  # 9 mm along: 114 mm before the table
    assert "tripped 114 mm before the expected contact (the held mug / table at 123 mm" in why
    assert "nothing was let go" in why

    # the hardware client judges the robot's own guarded line the same way: SUCCEEDED with
    # stopped_on_contact 114 mm early becomes ABORTED with the reason
    class _P:
        pass

    for remaining, status in ((0.116, GoalStatus.ABORTED), (0.002, GoalStatus.SUCCEEDED)):
        p = _P()
        p.handle, p.remote, p.plan = GoalHandle("move_cartesian", None), GoalHandle("move_cartesian", None), _P()
        p.plan.guard, p.plan.planner, p.plan.mode = g, "", "cartesian"
        p.remote.set_succeeded(MotionResult(np.eye(4), remaining, stopped_on_contact=True), "stopped on contact")
        HardwarePlanning._mirror(None, p)
        assert p.handle.status == status


# ---- the scene keys --------------------------------------------------------------------------------------
def test_fixtures_take_a_contact_material_or_a_table_tops():
    table = {"name": "table", "urdf": "table/table.urdf"}
    assert parse_scene({"fixtures": [table]}).fixtures[0].contact_material() == TABLE_TOP
    soft = parse_scene({"fixtures": [{**table, "contact_stiffness": 5e3, "contact_damping": 20}]}).fixtures[0]
    assert soft.contact_material() == ContactMaterial(5e3, 20.0)
    with pytest.raises(SceneError, match="contact_stiffness and contact_damping go together"):
        parse_scene({"fixtures": [{**table, "contact_stiffness": 5e3}]})


# ---- ptm validate ----------------------------------------------------------------------------------------
def _problems(**params):
    scene = parse_scene({"robots": [{"name": "panda", "model": "franka_panda"}],
                         "fixtures": [{"name": "table", "urdf": "table/table.urdf"}]})
    return MoveCartesian.scene_problems({"delta": [0, 0, -0.1], **params}, scene)


def test_validate_refuses_a_guard_below_the_wrist_sensors_resolution():
    (key, problem, hint), = _problems(max_force_n=0.5)
    assert key == "max_force_n" and "below what 'panda''s wrist force sensing resolves (1 N" in problem
    assert hint == "use at least 1 N"
    assert _problems(max_force_n=8.0) == []


def test_validate_refuses_a_delta_longer_than_the_whole_workspace():
    """A new user's lift written delta [0, 0, 15] (15 cm meant) passed plain validate: 15 m is more
    than twice the Panda's reach, further than any two points of its workspace are apart."""
    (key, problem, hint), = _problems(delta=[0, 0, 15])
    assert key == "delta" and problem.startswith("MoveCartesian.delta: [0, 0, 15] moves the hand 15 m, more than "
                                                 "the whole workspace of robot 'panda' spans (twice its 0.")
    assert hint == "distances are metres (15 cm is 0.15)"
    assert _problems(delta=[0, 0, 0.15]) == []


def test_validate_refuses_a_contact_speed_too_fast_for_the_guard_with_the_speed_that_would_do():
    (key, problem, hint), = _problems(max_force_n=8.0, contact_speed_mps=0.05)
    assert key == "contact_speed_mps" and "would stop at up to 208 N" in problem
    assert hint.startswith("use at most 0.0020 m/s")
    assert _problems(max_force_n=8.0, contact_speed_mps=0.0019) == []


def test_ptm_validate_exits_2_naming_the_line_and_the_number(tmp_path):
    task = tmp_path / "place.yaml"
    task.write_text(textwrap.dedent("""\
        name: place
        scene:
          robots: [{name: panda, model: kuka_iiwa_wsg50}]
          fixtures: [{name: table, urdf: table/table.urdf, pose: {position: [0.5, 0, 0]}}]
        tree:
          Sequence:
            children:
              - MoveCartesian: {name: lower, delta: [0, 0, -0.1], max_force_n: 8, contact_speed_mps: 0.02}
              - MoveCartesian: {name: press, delta: [0, 0, -0.1], max_force_n: 0.2}
        """))
    out = subprocess.run([sys.executable, "-m", "py_trees_manipulation", "validate", str(task)],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 2, out.stdout + out.stderr
    text = out.stdout + out.stderr
    assert f"{task}:8:" in text and "use at most 0.0020 m/s" in text
    assert f"{task}:9:" in text and "use at least 1 N" in text


def test_a_guarded_line_that_must_crawl_says_how_long_and_why():
    # the held mug meeting a rigid platform (no contact_stiffness on either: 4e6 N/m over a face):
    # an 8 N guard stops within twice its threshold only at 0.29 mm/s, so the last 10 mm take 35 s;
    # the plan's text says so with the three ways out. On the table top (4e5 N/m, 1200 N s/m) the
    # line is at 2 mm/s and nothing more is said.
    from py_trees_manipulation.collision.arm_planner import GuardedApproach
    from py_trees_manipulation.scene.contact import TABLE_TOP, guard_contact_speed, pair_contact

    k, d = pair_contact(None, None)
    v = guard_contact_speed(8.0, k, d, 0.005)
    assert v * 1000 == pytest.approx(0.286, abs=0.001)
    rigid = GuardedApproach(pair="the held mug / platform", contact_m=0.12, slow_from_m=0.11, contact_speed_mps=v,
                            max_speed_mps=v, stiffness_n_per_m=k, damping_n_s_per_m=d, peak_n=16.0, line_m=0.125)
    text = rigid.describe()
    assert "at 0.286 mm/s" in text and "its last 10 mm take 35 s" in text and "contact_stiffness" in text
    k, d = pair_contact(None, TABLE_TOP)
    v = guard_contact_speed(8.0, k, d, 0.005)
    table = GuardedApproach(pair="the held mug / table", contact_m=0.12, slow_from_m=0.11, contact_speed_mps=v,
                            max_speed_mps=v, stiffness_n_per_m=k, damping_n_s_per_m=d, peak_n=16.0, line_m=0.125)
    assert table.describe() == f"meets the held mug / table 120 mm along at {v * 1000:.3g} mm/s (guard peak <= 16.0 N)"
