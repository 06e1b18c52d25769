"""Whole-task checks before the arm moves: the straight lines of a regrasp transition followed along
their whole length (collision/regrasp.py), a pick checked through its place (collision/reachability.py
with scene/reach_targets.py), and the arc or pull compared with the mechanism's travel."""

import numpy as np
import pytest

import py_trees_manipulation.sim  # noqa: F401  (scene sections)
from py_trees_manipulation.collision.reachability import ReachChecker
from py_trees_manipulation.collision.regrasp import TransitionChecker, _Fail
from py_trees_manipulation.collision.world import AllowedContacts, CollisionWorld
from py_trees_manipulation.scene.reach_targets import (ReachRequest, targets_for, travel_bound, travel_refusal)
from py_trees_manipulation.scene.spec import parse_scene

TOP = 0.625


@pytest.fixture(scope="module")
def table_world():
    spec = parse_scene({
        "robots": [{"name": "panda", "model": "franka_panda", "base_pose": {"position": [0, 0, 0.626]}}],
        "fixtures": [{"name": "table", "urdf": "table/table.urdf", "pose": {"position": [0.5, 0, 0]}}],
        "objects": [{"name": "box", "primitive": {"shape": "box", "size": [0.05, 0.05, 0.12]}, "mass_kg": 0.1,
                     "pose": {"position": [0.5, 0.0, TOP + 0.06]}}],
        "task": {"target_object": "box"}})
    w = CollisionWorld.from_scene(spec)
    yield spec, w
    w.close()


def _down(x, y, z):
    T = np.diag([1.0, -1.0, -1.0, 1.0])   # TCP z straight down
    T[:3, 3] = [x, y, z]
    return T


def test_a_line_whose_ends_are_clear_is_refused_where_it_passes_through_the_box(table_world):
    _, w = table_world
    ck = TransitionChecker(w, {"panda/hand": "panda"})
    r = w.robots["panda"]
    # both ends 3 cm above the table, 15 cm either side of the 5 cm box: the line crosses it
    a, b = _down(0.5, -0.15, TOP + 0.10), _down(0.5, 0.15, TOP + 0.10)
    from py_trees_manipulation.collision.ik import solve_ik
    qa = solve_ik(r, a, [r.joint_positions()]).q
    qb = solve_ik(r, b, [qa]).q
    free = w.checker("panda", AllowedContacts())
    assert free.explain(qa) is None and free.explain(qb) is None   # the waypoints alone pass
    with pytest.raises(_Fail) as e:
        ck._line("carry", "panda", qa, b, AllowedContacts())
    f = e.value
    assert (f.waypoint, f.cause, f.obstacle) == ("carry", "motion", "box")
    assert "along its 0.300 m line" in f.reason and "box" in f.reason
    # where along it: the hand (fingers 4 cm either side of the TCP) meets the box's near face before
    # the TCP is over it: between 0.03 and 0.15 m along the line
    along = float(f.reason.split("collides ")[1].split(" m")[0])
    assert 0.03 < along < 0.15
    # a line beside the box is clear and ends where the motion's own line IK ends (the target)
    c = _down(0.62, -0.15, TOP + 0.10)
    qc = ck._line("carry", "panda", qa, c, AllowedContacts())
    assert np.linalg.norm(w.tcp_pose("panda", qc)[:3, 3] - c[:3, 3]) < 0.01


def test_a_pick_checked_through_its_place(table_world):
    spec, w = table_world
    near = targets_for(ReachRequest(object="box", place_position=(0.45, 0.2, TOP + 0.06)), spec,
                       object_pose=w.object_pose)[0]
    res = ReachChecker(w, "panda").check(near)
    assert res.ok, res.describe()
    labels = [s.label for s in near.paths[res.path]]
    assert len(labels) == 6 and labels[2].startswith("the lift") and labels[3].startswith("above the place") \
        and labels[5].startswith("the retreat")
    assert len(res.configurations) == 6
    # the world is put back: the box where it stands, nothing held
    np.testing.assert_allclose(w.object_pose("box")[:3, 3], [0.5, 0.0, TOP + 0.06], atol=1e-9)
    assert w.attached("panda") is None
    # 1.3 m away: no grasp can put it down there; the refusal names the place part of the task
    far = targets_for(ReachRequest(object="box", place_position=(0.3, 1.3, TOP + 0.06)), spec,
                      object_pose=w.object_pose)[0]
    res = ReachChecker(w, "panda").check(far)
    assert not res.ok
    assert "above the place (0.30, 1.30, 0.69)" in res.describe() and "out of reach" in res.describe()
    assert w.attached("panda") is None


@pytest.fixture(scope="module")
def mechanisms():
    return parse_scene({
        "robots": [{"name": "panda", "model": "franka_panda", "base_pose": {"position": [0, 0, 0]}}],
        "doors": [{"name": "door", "pose": {"position": [0.6, 0, 0], "rpy_deg": [0, 0, 180]}, "width_m": 0.5,
                   "height_m": 1.0, "max_opening_deg": 90, "handle": {"height_m": 0.75}}],
        "cabinets": [{"name": "cabinet", "pose": {"position": [0.84, 0, 0], "rpy_deg": [0, 0, 180]},
                      "width_m": 0.6, "depth_m": 0.5, "height_m": 0.8, "drawer_travel_m": 0.2}]})


def test_an_arc_or_pull_beyond_the_mechanisms_travel_is_refused_naming_the_limit(mechanisms):
    text = travel_refusal(ReachRequest(cabinet="cabinet", pull_m=-0.25), mechanisms)
    assert text.startswith("the 0.250 m pull is longer than the drawer of 'cabinet' travels: 0.200 m")
    assert "pull_m >= -0.200 (a pull is negative" in text
    assert travel_refusal(ReachRequest(cabinet="cabinet", pull_m=-0.2), mechanisms) is None
    assert travel_refusal(ReachRequest(cabinet="cabinet"), mechanisms) is None   # default: the travel
    text = travel_refusal(ReachRequest(door="door", open_angle_deg=-100), mechanisms)
    assert "the 100 deg arc is more than door 'door' opens: its hinge stops at 90 deg" in text
    assert travel_refusal(ReachRequest(door="door", open_angle_deg=62), mechanisms) is None


def test_an_arc_or_pull_the_wrong_way_is_refused_with_the_sign_that_opens_it(mechanisms):
    """A pull door asked to turn by a negative angle (MoveAlongArc would push it into its frame), a
    closed drawer asked for a positive pull (pushed in): refused before moving, with the value."""
    text = travel_refusal(ReachRequest(door="door", open_angle_deg=-62), mechanisms)
    assert text.startswith("door 'door' opens by pulling it toward its front (opening: pull), and an open_angle "
                           "of -62 deg turns it the other way") and "give open_angle 62" in text
    text = travel_refusal(ReachRequest(cabinet="cabinet", pull_m=0.2), mechanisms)
    assert text.startswith("a pull_m of +0.200 m pushes the drawer of 'cabinet' in, and it starts closed")
    assert "give pull_m -0.200" in text


def test_the_bound_of_a_pull_the_arm_does_not_finish_is_the_arm(mechanisms):
    from py_trees_manipulation.collision.reachability import TargetResult

    t = targets_for(ReachRequest(cabinet="cabinet", pull_m=0.2), mechanisms)[0]
    path = t.paths[0]
    # samples: pregrasp, grasp, pulled 0.04 .. 0.20 (5), retreat; 5 reached in order: up to 0.12 m
    held = [i for i, s in enumerate(path) if s.held]
    res = TargetResult(t, False, 0, held[3], None)
    assert travel_bound(res, mechanisms) == ("the arm follows the drawer of 'cabinet' 0.120 m of the 0.200 m pull "
                                             "(the drawer travels 0.200 m): the arm bounds the pull")
    assert travel_bound(TargetResult(t, True, 0, len(path)), mechanisms) is None
    # stopped before the pull (the pregrasp) or after it (the retreat): the pull is not what bounds it
    assert travel_bound(TargetResult(t, False, 0, 0, None), mechanisms) is None
    assert travel_bound(TargetResult(t, False, 0, len(path) - 1, None), mechanisms) is None
    # stopped by a body the arm would hit: that body bounds the pull, not the arm
    from py_trees_manipulation.collision.contacts import Proximity
    from py_trees_manipulation.collision.reach_results import SampleResult

    hit = Proximity(link="panda_link4", body="pillar", body_link="base", distance_m=0.004, threshold_m=0.01)
    res = TargetResult(t, False, 0, held[2], SampleResult("pulled", False, collision=hit))
    assert travel_bound(res, mechanisms).endswith("0.080 m of the 0.200 m pull (the drawer travels 0.200 m): "
                                                  "'pillar' bounds the pull (the arm would hit it)")
