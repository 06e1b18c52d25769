"""Tests of the GraspFix grip criterion (control/grip_criterion.py) on synthetic contact streams.

Geometry used throughout: a palm 0.1 m above a 4 cm cube; two finger pads touch the cube's faces at
y = +-0.02 m (arm "hand") or x = +-0.02 m (arm "right" in two-arm tests). Forces are the forces
acting on the object, in newtons. Physics steps are 1 ms unless a test says otherwise; with the
plugin defaults (5 Hz, threshold 5, max 10) an update falls every 0.2 s of simulation time.
Bug numbers are JenniferBuehler/gazebo-pkgs issues, § sections of shared/reference/grasp_fix.md.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from py_trees_manipulation.control.grip_criterion import (
    ContactSample,
    GraspFixArm,
    GraspFixConfigError,
    GraspFixParams,
    GripCriterion,
    angle_between_deg,
    find_opposing_pair,
    grasp_fix_config_from_mapping,
    validate_links,
)
from py_trees_manipulation.geometry.poses import invert, pose_from_xyz_rpy

HAND = GraspFixArm("hand", "palm", ("finger_l", "finger_r"))
LEFT = GraspFixArm("left", "l_palm", ("l_finger_a", "l_finger_b"))
RIGHT = GraspFixArm("right", "r_palm", ("r_finger_a", "r_finger_b"))
HALF = 0.02  # cube half size, m
CUBE = np.array([0.0, 0.0, 0.4])
N = 10.0  # squeeze force per finger, N


def T(xyz, rpy=(0.0, 0.0, 0.0)):
    return pose_from_xyz_rpy(xyz, rpy)


def pinch(obj, links, force_n=N, center=CUBE, axis=(0.0, 1.0, 0.0), half=HALF):
    """Two opposing contacts: links[0] on the +axis face pushes -axis, links[1] the other way."""
    u = np.asarray(axis, dtype=float)
    c = np.asarray(center, dtype=float)
    return [
        ContactSample(links[0], obj, -force_n * u, c + half * u),
        ContactSample(links[1], obj, force_n * u, c - half * u),
    ]


class Rig:
    """A clock, poses and a criterion; `run` steps physics and collects events."""

    def __init__(self, arms=(HAND,), params=None, dt=0.001):
        self.crit = GripCriterion(list(arms), params)
        self.dt = dt
        self.k = 0
        self.links = {
            "palm": T([0, 0, 0.5]),
            "finger_l": T([0, HALF, 0.4]),
            "finger_r": T([0, -HALF, 0.4]),
            "l_palm": T([0, 0, 0.5]),
            "l_finger_a": T([0, HALF, 0.4]),
            "l_finger_b": T([0, -HALF, 0.4]),
            "r_palm": T([0.3, 0, 0.4], (0, -math.pi / 2, 0)),
            "r_finger_a": T([HALF, 0, 0.4]),
            "r_finger_b": T([-HALF, 0, 0.4]),
        }
        self.objects = {"cube": T(CUBE), "other": T([0.0, 0.0, 0.4])}
        self.events = []
        self.crit.step(0.0, [], self.links, self.objects)  # t0 = 0: updates at 0.2, 0.4, ...

    @property
    def t(self):
        return round(self.k * self.dt, 9)

    def run(self, duration_s, contacts=lambda t: [], each_step=None):
        out = []
        for _ in range(int(round(duration_s / self.dt))):
            self.k += 1
            if each_step is not None:
                each_step(self.t)
            out += self.crit.step(self.t, contacts(self.t), self.links, self.objects)
        self.events += out
        return out

    def open_hand(self, delta_m, prefix="finger_", axis=1):
        """Move the two pads of arm `prefix` apart by delta_m each (relative to touching)."""
        a, b = (("finger_l", "finger_r") if prefix == "finger_" else (prefix + "a", prefix + "b"))
        for name, sign in ((a, 1.0), (b, -1.0)):
            p = CUBE.copy()
            p[axis] += sign * (HALF + delta_m)
            self.links[name] = T(p)


def squeeze(t):
    return pinch("cube", ("finger_l", "finger_r"))


# --------------------------------------------------------------------------------------------
# The opposing-force test
# --------------------------------------------------------------------------------------------


def test_opposing_forces_attach_after_threshold_plus_one_updates():
    rig = Rig()
    assert rig.run(1.19, squeeze) == []  # 5 gripping updates: count 5, not > threshold 5
    assert rig.crit.grip_count("cube", "hand") == 5
    ev = rig.run(0.01, squeeze)  # the 6th update at t = 1.2 s
    assert len(ev) == 1
    e = ev[0]
    assert (e.arm, e.object, e.attached, e.reason) == ("hand", "cube", True, "grip")
    assert e.time_s == pytest.approx(6 * 0.2)
    assert e.palm_link == "palm" and e.gripper_links == ("finger_l", "finger_r")
    np.testing.assert_allclose(e.object2palm, invert(rig.links["palm"]) @ rig.objects["cube"], atol=1e-12)
    np.testing.assert_allclose(e.object2palm[:3, 3], [0.0, 0.0, -0.1], atol=1e-12)
    assert rig.crit.held_object("hand") == "cube" and rig.crit.holder("cube") == "hand"


def test_wiki_example_parameters_attach_after_five_updates_of_quarter_second():
    params = GraspFixParams(forces_angle_tolerance=100, update_rate=4, grip_count_threshold=4, max_grip_count=8)
    rig = Rig(params=params)
    ev = rig.run(2.0, squeeze)
    assert [e.time_s for e in ev] == [pytest.approx(5 * 0.25)]


def test_same_side_forces_never_attach():
    rig = Rig()
    same_side = lambda t: [  # noqa: E731  both pads push the cube towards -y (e.g. against a wall)
        ContactSample("finger_l", "cube", [0, -N, 0], CUBE + [0, HALF, 0]),
        ContactSample("finger_r", "cube", [0, -N, 0], CUBE + [0, HALF, 0.01]),
    ]
    assert rig.run(3.0, same_side) == []
    assert rig.crit.grip_count("cube", "hand") == 0


def test_single_finger_and_non_gripper_links_never_attach():
    rig = Rig()
    contacts = lambda t: [  # noqa: E731  the table is not a gripper link: its force is ignored
        ContactSample("finger_l", "cube", [0, -N, 0], CUBE + [0, HALF, 0]),
        ContactSample("table", "cube", [0, N, 0], CUBE - [0, HALF, 0]),
    ]
    assert rig.run(3.0, contacts) == []


def test_angle_tolerance_boundary_is_a_strict_minimum_separation():
    f1 = np.array([0.0, -N, 0.0])

    def at(deg):  # f1 rotated by `deg` about x
        a = math.radians(deg)
        return np.array([0.0, -N * math.cos(a), -N * math.sin(a)])

    for tol, sep, expected in [(120, 119.5, False), (120, 120.5, True), (100, 110, True), (120, 110, False),
                               (90, 89.5, False), (90, 90.5, True), (120, 180, True)]:
        assert angle_between_deg(f1, at(sep)) == pytest.approx(sep)
        assert (find_opposing_pair([f1, at(sep)], tol) is not None) is expected, (tol, sep)
    # Through the whole pipeline: 110 deg apart grips at tolerance 100 but never at 120.
    for tol, n_attach in [(100, 1), (120, 0)]:
        rig = Rig(params=GraspFixParams(forces_angle_tolerance=tol))
        contacts = lambda t: [  # noqa: E731
            ContactSample("finger_l", "cube", f1, CUBE + [0, HALF, 0]),
            ContactSample("finger_r", "cube", at(110), CUBE - [0, HALF, 0]),
        ]
        assert len(rig.run(2.0, contacts)) == n_attach


def test_force_magnitude_ratio_needs_three_tenths():
    assert find_opposing_pair([[0, -10, 0], [0, 3.0, 0]]) == (0, 1)  # ratio 0.30
    assert find_opposing_pair([[0, -10, 0], [0, 2.9, 0]]) is None  # ratio 0.29
    assert find_opposing_pair([[0, -10, 0], [0, 0.5e-4, 0]], min_force_ratio=0.0) is None  # zero guard 1e-4 N
    assert find_opposing_pair([[0, 0, 1], [0, -10, 0], [0, 4, 0]]) == (1, 2)


def test_friction_tilted_forces_grip_only_when_friction_over_normal_is_below_formula():
    """§3.3, #52, #67: friction-inclusive forces of a pinch holding weight W are 180 - 2 atan(W/2N) apart."""
    for weight_n in (5.0, 10.0, 14.0, 19.0, 21.0):
        for tol in (90.0, 100.0, 120.0):
            forces = [[0.0, -N, weight_n / 2], [0.0, N, weight_n / 2]]
            expected = (weight_n / 2) / N < math.tan(math.radians((180.0 - tol) / 2))
            assert (find_opposing_pair(forces, tol) is not None) is expected, (weight_n, tol)
    # Spot values: W = 14 N gives 110.0 deg, which fails the default 120 but passes 100.
    assert angle_between_deg([0, -N, 7], [0, N, 7]) == pytest.approx(180 - 2 * math.degrees(math.atan(0.7)))
    assert find_opposing_pair([[0, -N, 7], [0, N, 7]], 120) is None
    assert find_opposing_pair([[0, -N, 7], [0, N, 7]], 100) == (0, 1)


def test_exactly_opposing_forces_do_not_produce_nan():
    """§7.3: the plugin's unclamped acos gives NaN for these two exactly opposing forces."""
    v = np.array([-0.535669373161111, 0.36159505490948474, 1.3040000451301372])
    w = np.array([0.8539881348987823, -0.5764710509926761, -2.0788953452331893])
    assert np.dot(v / np.linalg.norm(v), w / np.linalg.norm(w)) < -1.0  # acos would be NaN
    assert angle_between_deg(v, w) == 180.0
    assert find_opposing_pair([v, w]) == (0, 1)


def test_unequal_contact_point_counts_do_not_fail_the_ratio_test():
    """§7.4: 4 points of 2.5 N vs 1 point of 10 N. The plugin's per-point mean gives 2.5/10 = 0.25 < 0.3."""
    rig = Rig()

    def contacts(t):
        left = [ContactSample("finger_l", "cube", [0, -2.5, 0], CUBE + [dx, HALF, dz])
                for dx in (-0.01, 0.01) for dz in (-0.01, 0.01)]
        return left + [ContactSample("finger_r", "cube", [0, 10.0, 0], CUBE - [0, HALF, 0])]

    ev = rig.run(1.2, contacts)
    assert [(e.arm, e.attached, e.time_s) for e in ev] == [("hand", True, pytest.approx(1.2))]


# --------------------------------------------------------------------------------------------
# Counter, schedule
# --------------------------------------------------------------------------------------------


def test_grip_counter_saturates_at_max_grip_count_and_drains_one_per_update():
    rig = Rig()
    rig.run(5.0, squeeze)  # 25 gripping updates
    assert rig.crit.grip_count("cube", "hand") == 10
    rig.run(0.6)  # 3 updates without contact, fingers still closed
    assert rig.crit.grip_count("cube", "hand") == 7
    assert rig.crit.held_object("hand") == "cube"


def test_counter_drains_before_attach_so_interrupted_grips_need_net_six_updates():
    rig = Rig()
    # In each 0.8 s, the windows ending at 0.2, 0.4 and 0.6 s have contacts, the one ending at 0.8 s
    # none (a single contact step in a window would already count as gripping, §2).
    pattern = lambda t: squeeze(t) if (t - 1e-9) % 0.8 < 0.6 else []  # noqa: E731
    ev = rig.run(4.0, pattern)
    # counts after updates: 1 2 3 2 | 3 4 5 4 | 5 6 -> attach at the 10th update, t = 2.0 s
    assert [e.time_s for e in ev] == [pytest.approx(2.0)]


def test_update_rate_counts_sim_time_not_wall_clock(monkeypatch):
    """§7.1: the plugin scheduled updates on the wall clock; here only `now_s` matters."""

    def no_wall_clock(*a, **k):
        raise AssertionError("the grip criterion read the wall clock")

    for fn in ("time", "monotonic", "perf_counter", "process_time"):
        monkeypatch.setattr(time, fn, no_wall_clock)
    for dt in (0.001, 0.0025, 0.01):
        rig = Rig(dt=dt)
        ev = rig.run(1.5, squeeze)
        assert [e.time_s for e in ev] == [pytest.approx(1.2)], dt
    rig = Rig(dt=0.003)  # 3 ms does not divide 200 ms: the schedule must not drift
    ev = rig.run(1.5, squeeze)
    assert 1.2 - 1e-9 <= ev[0].time_s < 1.2 + 0.003


def test_time_going_backwards_is_an_error():
    rig = Rig()
    rig.run(0.1)
    with pytest.raises(ValueError, match="went backwards"):
        rig.crit.step(0.05, [], rig.links, rig.objects)
    rig.crit.reset()
    assert rig.crit.step(0.05, [], rig.links, rig.objects) == []


def test_missing_pose_is_reported_by_name():
    crit = GripCriterion([HAND])
    with pytest.raises(ValueError, match="no world pose given for object 'cube'"):
        crit.step(0.0, squeeze(0.0), {"finger_l": np.eye(4), "finger_r": np.eye(4)}, {})


# --------------------------------------------------------------------------------------------
# Release
# --------------------------------------------------------------------------------------------


def _held(params=None, arms=(HAND,)):
    rig = Rig(arms=arms, params=params)
    rig.run(2.05, squeeze)  # attached at 1.2 s, counter saturated (10) by 2.0 s
    assert rig.crit.held_object("hand") == "cube"
    assert rig.crit.grip_count("cube", "hand") == 10
    return rig


def test_release_does_not_lag_one_second():
    """#52, §3.6: the plugin waited (max - threshold) / rate = 1.0 s before even testing release."""
    rig = _held()
    t_open = rig.t  # 2.05 s, mid-window: the 2.2 s update still sees contacts from before
    rig.open_hand(0.01)
    ev = rig.run(1.5)
    assert len(ev) == 1
    e = ev[0]
    assert (e.attached, e.reason) == (False, "fingers_opened")
    assert e.time_s == pytest.approx(2.4)  # the second update after opening
    assert e.time_s - t_open <= 2 * rig.crit.params.update_period_s
    assert e.opening_m == pytest.approx(0.01)
    assert rig.crit.held_object("hand") is None and rig.crit.attached == {}


def test_release_within_one_update_when_no_contacts_were_left():
    rig = _held(GraspFixParams(disable_collisions_on_attach=True))
    rig.run(0.15)  # collisions disabled: no contacts at all; update at 2.2 s finds nothing opened
    assert rig.crit.held_object("hand") == "cube"
    rig.open_hand(0.006)
    ev = rig.run(0.2)
    assert [(e.attached, e.time_s) for e in ev] == [(False, pytest.approx(2.4))]


def test_opening_below_release_tolerance_keeps_the_object():
    rig = _held()
    rig.open_hand(0.004)  # 4 mm < 5 mm
    assert rig.run(3.0) == []
    assert rig.crit.held_object("hand") == "cube"
    rig.open_hand(0.0051)
    assert [e.attached for e in rig.run(0.2)] == [False]


def test_squeezing_with_collisions_disabled_does_not_oscillate():
    """#9(b), #64: no contacts while the fingers keep closing into the object must not release.

    The plugin compared |d_new - d_old| with the tolerance, so 15 mm of penetration released the
    object, collisions came back with the finger inside it, it re-attached, and so on.
    """
    rig = _held(GraspFixParams(disable_collisions_on_attach=True))

    def close_further(t):  # pads sink into the cube at 5 mm/s, up to 15 mm
        depth = min(0.015, 0.005 * (t - 2.05))
        rig.open_hand(-depth)

    assert rig.run(4.0, each_step=close_further) == []
    assert rig.crit.held_object("hand") == "cube"
    assert rig.crit.grip_count("cube", "hand") == 0  # drained: the plugin would test release now
    d_old, d_new = HALF, HALF - 0.015
    assert abs(d_new - d_old) > rig.crit.params.release_tolerance  # ... and would have released
    # Opening back to the original surface is still no release; 5.5 mm beyond it is.
    rig.open_hand(0.0)
    assert rig.run(1.0) == []
    rig.open_hand(0.0055)
    ev = rig.run(0.2)
    assert [(e.attached, e.opening_m) for e in ev] == [(False, pytest.approx(0.0055))]
    assert [e.attached for e in rig.events] == [True, False]


def test_brief_contact_loss_while_holding_does_not_detach():
    """#9(a), #49: contacts lost while the arm moves and the pads jitter by +-3 mm (< 5 mm)."""
    rig = _held()

    def jitter(t):
        rig.open_hand(0.003 * math.sin(2 * math.pi * 7.0 * t))

    def arm_moves(t):  # palm, pads and the welded cube translate together at 0.5 m/s in x
        shift = np.eye(4)
        shift[0, 3] = 0.5 * (t - 2.05)
        rig.objects["cube"] = shift @ T(CUBE)
        rig.links["palm"] = shift @ T([0, 0, 0.5])
        jitter(t)
        for name in ("finger_l", "finger_r"):
            rig.links[name] = shift @ rig.links[name]

    assert rig.run(3.0, each_step=arm_moves) == []
    assert rig.crit.held_object("hand") == "cube"


def test_off_centre_grasp_releases_when_fingers_open():
    """§7.11: grasping a rod 15 cm from its origin. Opening 8 mm per pad changes the plugin's
    contact-to-origin distance by only 1.3 mm (< 5 mm), so the plugin never released it."""
    rig = Rig()
    rig.objects["cube"] = T(CUBE - [0.15, 0.0, 0.0])  # object origin 15 cm along -x
    rig.run(1.5, squeeze)
    assert rig.crit.held_object("hand") == "cube"
    d_old = math.hypot(0.15, HALF)
    d_new = math.hypot(0.15, HALF + 0.008)
    assert d_new - d_old < 0.005  # the plugin's length test would keep holding
    rig.open_hand(0.008)
    ev = rig.run(0.4)
    assert [(e.attached, e.opening_m) for e in ev] == [(False, pytest.approx(0.008))]


def test_detached_arm_needs_full_threshold_to_grip_again():
    rig = _held()
    rig.open_hand(0.01)
    rig.run(0.35)  # detached at 2.4 s
    assert rig.crit.held_object("hand") is None
    rig.open_hand(0.0)
    ev = rig.run(2.0, squeeze)  # squeezing again from 2.4 s: 6 more updates
    assert [(e.attached, e.time_s) for e in ev] == [(True, pytest.approx(2.4 + 1.2))]


def test_manual_detach_resets_the_counter():
    rig = _held()
    e = rig.crit.detach("hand", rig.t)
    assert (e.arm, e.object, e.attached, e.reason) == ("hand", "cube", False, "manual")
    np.testing.assert_allclose(e.object2palm[:3, 3], [0, 0, -0.1], atol=1e-12)
    assert rig.crit.detach("hand", rig.t) is None
    assert rig.crit.grip_count("cube", "hand") == 0
    with pytest.raises(KeyError, match="did you mean 'hand'"):
        rig.crit.detach("hnad", rig.t)


# --------------------------------------------------------------------------------------------
# Several arms, one object per arm
# --------------------------------------------------------------------------------------------


def left_squeeze(t, obj="cube"):
    return pinch(obj, ("l_finger_a", "l_finger_b"))


def right_squeeze(t, obj="cube"):
    return pinch(obj, ("r_finger_a", "r_finger_b"), axis=(1.0, 0.0, 0.0))


def test_object_attaches_to_the_arm_that_grips_it_not_the_first_arm():
    """#2: with two arms the object was attached to the first palm."""
    rig = Rig(arms=(LEFT, RIGHT))
    ev = rig.run(1.3, right_squeeze)
    assert [(e.arm, e.palm_link, e.attached) for e in ev] == [("right", "r_palm", True)]
    np.testing.assert_allclose(ev[0].object2palm, invert(rig.links["r_palm"]) @ rig.objects["cube"], atol=1e-12)


def test_one_finger_from_each_of_two_arms_does_not_grip():
    """§7.8: the plugin pooled the forces of all arms, so one pad of each arm 'gripped'."""
    rig = Rig(arms=(LEFT, RIGHT))
    contacts = lambda t: [  # noqa: E731
        ContactSample("l_finger_a", "cube", [0, -N, 0], CUBE + [0, HALF, 0]),
        ContactSample("r_finger_a", "cube", [0, N, 0], CUBE - [0, HALF, 0]),
    ]
    assert rig.run(3.0, contacts) == []


def test_arm_already_holding_an_object_does_not_grab_a_second():
    rig = Rig(arms=(LEFT, RIGHT))
    rig.run(1.3, left_squeeze)
    assert rig.crit.held_object("left") == "cube"
    both = lambda t: left_squeeze(t) + left_squeeze(t, "other")  # noqa: E731
    assert rig.run(3.0, both) == []
    assert rig.crit.grip_count("other", "left") == 10  # it grips it, it just may not hold two
    assert rig.crit.attached == {"cube": "left"}


def test_arm_holding_x_does_not_block_another_arm_grasping_y():
    """§7.7: the plugin skipped an object if ANY arm touching it held something."""
    rig = Rig(arms=(LEFT, RIGHT))
    rig.run(1.3, left_squeeze)
    touch = lambda t: (left_squeeze(t) + right_squeeze(t, "other")  # noqa: E731
                       + [ContactSample("l_finger_a", "other", [0, -1.0, 0], CUBE + [0, HALF, 0])])
    ev = rig.run(1.2, touch)
    assert [(e.arm, e.object, e.attached) for e in ev] == [("right", "other", True)]
    assert rig.crit.attached == {"cube": "left", "other": "right"}


def test_handover_switches_arm_in_the_same_update():
    """#32: the second arm could only start counting after the first detached, dropping the object."""
    rig = Rig(arms=(LEFT, RIGHT))
    rig.run(1.5, left_squeeze)  # left holds since 1.2 s
    both = lambda t: left_squeeze(t) + right_squeeze(t)  # noqa: E731
    assert rig.run(2.0, both) == []  # right's counter fills, but left still grips: no stealing
    assert rig.crit.grip_count("cube", "right") == 10
    assert rig.crit.holder("cube") == "left"
    rig.open_hand(0.01, prefix="l_finger_")  # left opens at 3.5 s, right keeps squeezing
    ev = rig.run(0.5, right_squeeze)
    assert [(e.arm, e.attached, e.reason) for e in ev] == [("left", False, "handover"), ("right", True, "grip")]
    assert ev[0].time_s == ev[1].time_s == pytest.approx(3.8)
    np.testing.assert_allclose(ev[1].object2palm, invert(rig.links["r_palm"]) @ rig.objects["cube"], atol=1e-12)
    assert rig.crit.attached == {"cube": "right"}
    # Left touching again does not take it back while right holds it.
    rig.open_hand(0.0, prefix="l_finger_")
    assert rig.run(3.0, both) == []
    assert rig.crit.holder("cube") == "right"


def test_two_arms_reaching_threshold_together_give_the_object_to_one():
    rig = Rig(arms=(LEFT, RIGHT))
    both = lambda t: left_squeeze(t) + right_squeeze(t)  # noqa: E731
    ev = rig.run(1.3, both)
    assert [(e.arm, e.attached) for e in ev] == [("left", True)]  # tie: configuration order
    assert rig.run(2.0, both) == []


# --------------------------------------------------------------------------------------------
# Configuration
# --------------------------------------------------------------------------------------------


def test_code_defaults_match_the_plugin():
    p = GraspFixParams()
    assert (p.forces_angle_tolerance, p.update_rate, p.max_grip_count, p.grip_count_threshold) == (120.0, 5.0, 10, 5)
    assert (p.release_tolerance, p.disable_collisions_on_attach, p.min_force_ratio) == (0.005, False, 0.3)
    assert p.update_period_s == pytest.approx(0.2) and p.attach_latency_updates == 6
    assert GraspFixParams(max_grip_count=7).grip_count_threshold == 3  # floor(max / 2)


def test_angle_tolerance_below_90_is_a_config_error_not_a_silent_failure():
    """§7.2, #52, #10: the plugin logged once and never gripped anything."""
    with pytest.raises(GraspFixConfigError, match="below 90 deg, so no object could ever be gripped") as ei:
        GraspFixParams(forces_angle_tolerance=80)
    assert ei.value.key == "forces_angle_tolerance"
    assert "lower it towards 90" in ei.value.message
    with pytest.raises(GraspFixConfigError, match="can never grip"):
        GraspFixParams(forces_angle_tolerance=180)
    assert GraspFixParams(forces_angle_tolerance=90).forces_angle_tolerance == 90


@pytest.mark.parametrize(
    "kwargs, key, text",
    [
        (dict(max_grip_count=4, grip_count_threshold=5), "max_grip_count", "no object could\never be attached"),
        (dict(max_grip_count=5, grip_count_threshold=5), "max_grip_count", "is not above"),
        (dict(update_rate=0), "update_rate", "positive"),
        (dict(update_rate=float("nan")), "update_rate", "positive"),
        (dict(release_tolerance=0.0), "release_tolerance", "positive distance"),
        (dict(max_grip_count=2.5), "max_grip_count", "integer"),
        (dict(grip_count_threshold=-1), "grip_count_threshold", ">= 0"),
        (dict(disable_collisions_on_attach="yes"), "disable_collisions_on_attach", "bool"),
        (dict(min_force_ratio=1.5), "min_force_ratio", r"\[0, 1\]"),
    ],
)
def test_invalid_parameters_name_the_key(kwargs, key, text):
    with pytest.raises(GraspFixConfigError, match=text.replace("\n", " ")) as ei:
        GraspFixParams(**kwargs)
    assert ei.value.key == key


def test_arm_errors_duplicates_and_shared_links():
    """#17, #2: one plugin block with several uniquely named arms, each link in one arm."""
    with pytest.raises(GraspFixConfigError, match="needs at least one link"):
        GraspFixArm("a", "palm", ())
    with pytest.raises(GraspFixConfigError, match=r"lists \['f1'\] more than once"):
        GraspFixArm("a", "palm", ("f1", "f1"))
    with pytest.raises(GraspFixConfigError, match="used by two arms") as ei:
        GripCriterion([GraspFixArm("a", "p1", "f1"), GraspFixArm("a", "p2", "f2")])
    assert ei.value.key == "arm[a].arm_name"
    with pytest.raises(GraspFixConfigError, match="already a gripper link of arm 'a'"):
        GripCriterion([GraspFixArm("a", "p1", ("f1", "f2")), GraspFixArm("b", "p2", ("f2", "f3"))])
    with pytest.raises(GraspFixConfigError, match="at least one <arm>"):
        GripCriterion([])
    assert GraspFixArm("a", "palm", "finger").gripper_link == ("finger",)


def test_unknown_palm_link_suggests_the_model_link_names():
    """#31, #66: 'Palm link ... not found. The gazebo grasp plugin will not work'."""
    panda_links = ["panda_link0", "panda_link7", "panda_link8", "panda_hand", "panda_leftfinger", "panda_rightfinger"]
    validate_links(GraspFixArm("panda", "panda_hand", ("panda_leftfinger", "panda_rightfinger")), panda_links)
    msg = "'panda_palm' is not a link of the model; did you mean 'panda_hand'"
    with pytest.raises(GraspFixConfigError, match=msg) as ei:
        validate_links(GraspFixArm("panda", "panda_palm", ("panda_leftfinger",)), panda_links)
    assert ei.value.key == "arm[panda].palm_link"
    with pytest.raises(GraspFixConfigError, match="'panda_left_finger'.*did you mean 'panda_leftfinger'") as ei:
        validate_links(GraspFixArm("panda", "panda_hand", ("panda_left_finger",)), panda_links)
    assert ei.value.key == "arm[panda].gripper_link"
    with pytest.raises(GraspFixConfigError, match="the model's links are: base, arm"):
        validate_links(GraspFixArm("x", "zzzz", ("qqqq",)), ["base", "arm"])


def test_config_from_mapping_parses_the_plugin_block():
    params, arms = grasp_fix_config_from_mapping({
        "arm": {"arm_name": "panda", "palm_link": "panda_hand",
                "gripper_link": ["panda_leftfinger", "panda_rightfinger"]},
        "forces_angle_tolerance": 100, "update_rate": 4, "grip_count_threshold": 4, "max_grip_count": 8,
        "release_tolerance": 0.005, "disable_collisions_on_attach": "1", "contact_topic": "__default_topic__",
    })
    assert arms == (GraspFixArm("panda", "panda_hand", ("panda_leftfinger", "panda_rightfinger")),)
    assert (params.forces_angle_tolerance, params.update_rate, params.grip_count_threshold) == (100, 4, 4)
    assert params.disable_collisions_on_attach is True
    with pytest.raises(GraspFixConfigError, match="did you mean 'forces_angle_tolerance'"):
        grasp_fix_config_from_mapping({"arm": [], "forces_angle_tolerence": 100})
    with pytest.raises(GraspFixConfigError, match="did you mean 'gripper_link'") as ei:
        grasp_fix_config_from_mapping({"arm": [{"arm_name": "a", "palm_link": "p", "gripper_links": ["f"]}]})
    assert ei.value.key == "arm[0].gripper_links"
    with pytest.raises(GraspFixConfigError, match="at least one <arm>"):
        grasp_fix_config_from_mapping({"update_rate": 5})
