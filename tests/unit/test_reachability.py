"""Reachability before motion and base placement, in the collision world (PyBullet DIRECT, no physics):
the targets' geometry from the door and drawer assets, the check's verdicts and reasons, the base
search (finds a base the check accepts, deterministic, fails naming the target), the mounting surface,
and the scene's ``base_pose: auto`` forms. The simulated runs are in tests/scenarios/test_reach_sim.py."""

import math

import numpy as np
import pytest

import py_trees_manipulation.sim  # noqa: F401  (scene sections)
from py_trees_manipulation.collision.reachability import (
    AXIS_SEPARATION_MIN, RELAX_STEPS, MountingSurface, ReachChecker, _axis_separation, arm_mirror, base_frame, base_pose_at,
    check_for_task, find_base, find_base_relaxing, set_base_frame, wrist_bounds)
from py_trees_manipulation.collision.world import CollisionWorld
from py_trees_manipulation.collision.base_placement import mounting_surface, place_robots, surface_under
from py_trees_manipulation.scene.reach_targets import ReachRequest, door_target, drawer_target, targets_for
from py_trees_manipulation.scene.spec import SceneError, parse_scene


def door_scene(width=0.5, hinge="left", opening="pull", base=None, model="franka_panda", handle_height=0.75):
    return parse_scene({
        "robots": [{"name": "arm", "model": model,
                    "base_pose": base if base is not None else {"position": [0, 0, 0]}}],
        "doors": [{"name": "door", "pose": {"position": [0.6, 0, 0], "rpy_deg": [0, 0, 180]}, "width_m": width,
                   "height_m": 1.0 if handle_height < 1.0 else handle_height + 0.2, "hinge_side": hinge,
                   "opening": opening, "handle": {"height_m": handle_height}}]})


DOOR_62 = ReachRequest(door="door", open_angle_deg=62, twist_angle_deg=45, configuration="forward", any_posture=True)


@pytest.fixture(scope="module")
def wide_door():
    """A 0.8 m door: its arc leaves the Panda's reach from the shipped place (0, 0)."""
    sc = door_scene(0.8)
    w = CollisionWorld.from_scene(sc)
    yield sc, w
    w.close()


# ---- target geometry --------------------------------------------------------------------------------
@pytest.mark.parametrize("hinge,opening", [("left", "pull"), ("right", "pull"), ("left", "push"), ("right", "push")])
def test_door_samples_turn_about_the_hinge_by_the_arc_angle_in_the_doors_opening_direction(hinge, opening):
    sc = door_scene(0.7, hinge, opening)
    spec = sc.extra["doors"][0]
    t = door_target(spec, open_angle_deg=60, twist_angle_deg=45)
    a = spec.asset
    M = spec.pose
    hinge_pt = (M @ np.append(a.hinge_point_in_model, 1.0))[:3]
    axis = M[:3, :3] @ a.hinge_axis_in_model
    arc = [s for s in t.paths[0] if " deg arc" in s.label and "turned back" not in s.label]
    assert arc[-1].label.endswith("at 60 deg of its 60 deg arc")

    def radial(p):
        v = p - hinge_pt
        return v - np.dot(v, axis) * axis

    r0 = radial(arc[0].pose[:3, 3])
    start = [s for s in t.paths[0] if s.label.endswith("turned 45 deg of its 45 deg")][0]
    rs = radial(start.pose[:3, 3])
    for s in arc:
        theta = dict(((j, v) for _, j, v in s.joints))["door_hinge"]
        r = radial(s.pose[:3, 3])
        assert np.linalg.norm(r) == pytest.approx(np.linalg.norm(rs), abs=1e-9)   # on the circle
        signed = math.atan2(np.dot(np.cross(rs, r), axis), np.dot(rs, r))         # about the hinge axis
        assert signed == pytest.approx(theta, abs=1e-9)
        assert s.touch == ("door",)
    # the arc runs in the door's opening direction: pull comes toward the robot (-x), push goes away
    moved = arc[-1].pose[0, 3] - start.pose[0, 3]
    assert (moved < -0.1) if opening == "pull" else (moved > 0.1)
    assert np.linalg.norm(r0) > 0.4


def test_the_lever_turn_rotates_the_grasp_about_the_pivot():
    spec = door_scene(0.6).extra["doors"][0]
    t = door_target(spec, open_angle_deg=30, twist_angle_deg=40)
    pivot = spec.pose @ spec.asset.handle_pivot_in_model
    grasp = t.paths[0][1]
    turned = [s for s in t.paths[0] if "turned 40 deg of its 40" in s.label][0]
    v0 = grasp.pose[:3, 3] - pivot[:3, 3]
    v1 = turned.pose[:3, 3] - pivot[:3, 3]
    assert math.degrees(math.acos(np.dot(v0, v1) / np.linalg.norm(v0) / np.linalg.norm(v1))) == pytest.approx(40, abs=1e-6)
    # the pregrasp stands off 8 cm along the approach, the retreat 8 cm back from the lever at 30 deg
    assert t.paths[0][0].pose[:3, 3] == pytest.approx(grasp.pose[:3, 3] - 0.08 * grasp.pose[:3, 2])
    assert t.paths[0][-1].from_contact and not t.paths[0][-1].touch and not t.paths[0][1].held and t.paths[0][2].held


def test_drawer_samples_run_along_the_pull_line_to_the_pull():
    sc = parse_scene({"cabinets": [{"name": "cab", "pose": {"position": [0.8, 0.1, 0], "rpy_deg": [0, 0, 150]},
                                    "drawer_travel_m": 0.3}]})
    spec = sc.extra["cabinets"][0]
    t = drawer_target(spec, pull_m=-0.25)
    grasp = t.paths[0][1].pose
    pulls = [s for s in t.paths[0] if "pulled" in s.label and "retreat" not in s.label]
    axis = spec.pose[:3, :3] @ spec.asset.drawer_axis_in_model
    for s in pulls:
        d = dict(((j, v) for _, j, v in s.joints))["drawer_joint"]
        assert s.pose[:3, 3] == pytest.approx(grasp[:3, 3] + d * axis)
    assert dict(((j, v) for _, j, v in pulls[-1].joints))["drawer_joint"] == pytest.approx(0.25)
    # the default pull is the drawer's whole travel
    full = drawer_target(spec)
    assert dict(((j, v) for _, j, v in full.paths[0][-2].joints))["drawer_joint"] == pytest.approx(0.3)


def test_a_request_naming_nothing_asks_for_every_door_cabinet_and_the_target_object():
    sc = parse_scene({"doors": [{"name": "d1", "pose": {"position": [1, 0, 0]}}],
                      "cabinets": [{"name": "c1", "pose": {"position": [0, 1, 0]}}],
                      "objects": [{"name": "box", "primitive": {"shape": "box", "size": [0.05, 0.05, 0.05]},
                                   "pose": {"position": [0.5, 0, 0.1]}}]})
    kinds = [t.kind for t in targets_for(ReachRequest(), sc)]
    assert kinds == ["door", "drawer", "grasp"]
    grasp = targets_for(ReachRequest(object="box"), sc)[0]
    assert len(grasp.paths) == 24   # a box: 6 faces x 4 yaws, any one will do
    with pytest.raises(KeyError, match="no door 'd2'; it has"):
        targets_for(ReachRequest(door="d2"), sc)


# ---- the check -----------------------------------------------------------------------------------------
def test_the_check_names_the_arc_angle_the_arm_cannot_reach(wide_door):
    sc, w = wide_door
    [t] = targets_for(DOOR_62, sc)
    res = ReachChecker(w, "arm").check(t)
    assert not res.ok
    text = res.describe()
    assert "the door handle at " in text and "of its 62 deg arc" in text and "out of reach" in text, text
    angle = float(text.split("the door handle at ")[1].split(" deg")[0])
    assert 25 <= angle <= 50, text      # the sim's own follow_screw stops at 36.6 deg from this place
    assert res.reached == [s.label for s in t.paths[0]].index(res.failure.label)


def test_the_shipped_door_is_reachable_from_the_shipped_place():
    sc = door_scene(0.5)
    w = CollisionWorld.from_scene(sc)
    try:
        [t] = targets_for(DOOR_62, sc)
        res = ReachChecker(w, "arm").check(t)
        assert res.ok and res.reached == len(t.paths[0]) and res.failure is None
        # the configurations found put the TCP on every sample (FK), within the 5 mm tolerance
        for s, q in zip(t.paths[0], res.configurations):
            assert np.linalg.norm(w.tcp_pose("arm", q)[:3, 3] - s.pose[:3, 3]) < 0.005
        # the door is put back as it was (closed, lever at rest)
        door = w.bodies["door"]
        import pybullet as pb
        assert all(abs(pb.getJointState(door, j, physicsClientId=w.client)[0]) < 1e-12
                   for j in range(pb.getNumJoints(door, physicsClientId=w.client)))
    finally:
        w.close()


def test_wrist_bounds_keep_the_iiwa_wrist_away_from_its_shoulder():
    sc = door_scene(0.5, model="kuka_iiwa_wsg50")
    w = CollisionWorld.from_scene(sc)
    try:
        b = wrist_bounds(w, "arm")
        # the README's figure: the iiwa's wrist centre stays at least 0.41 m from its shoulder
        assert b is not None and 0.37 <= b.lo <= 0.41 and b.hi > 0.75
        assert b.wrist_in_tcp[:2] == pytest.approx([0, 0], abs=1e-6) and b.wrist_in_tcp[2] < -0.2
    finally:
        w.close()


# ---- the base search --------------------------------------------------------------------------------------
def test_a_search_out_of_time_before_its_first_base_says_so_and_a_relaxed_step_keeps_the_last_answer(monkeypatch):
    """A search whose budget ran out before it tried one position (a relaxed step started with
    milliseconds left, on a loaded machine) raised IndexError ('every base position ... is taken:
    overlap[0]'); it says so, and find_base_relaxing keeps the answer of the step before."""
    from py_trees_manipulation.collision import base_search

    sc = door_scene(0.6)
    w = CollisionWorld.from_scene(sc)
    try:
        targets = targets_for(DOOR_62.with_margin(), sc)
        p = find_base(w, "arm", targets, MountingSurface("floor"), time_budget_s=0.0)
        assert not p.ok and p.timed_out and p.candidates == 0
        assert p.failure == "the search's time ran out before it tried a base position on the floor"
    finally:
        w.close()
    # the first step answers why no base reaches; the second had no time to try one
    answers = iter([base_search.BasePlacement("arm", False, None, MountingSurface("floor"), [],
                                              "no base position on the floor reaches the door handle", 12, 1.0),
                    p])
    monkeypatch.setattr(base_search, "find_base", lambda *a, **k: next(answers))
    r = base_search.find_base_relaxing(None, "arm", lambda probe: targets, MountingSurface("floor"),
                                        budget=base_search.SearchBudget(30000))
    assert r.failure.startswith("no base position on the floor reaches the door handle"), r.failure
    assert "time ran out" not in r.failure and r.candidates == 12


def test_find_base_finds_a_base_the_check_accepts_and_is_deterministic():
    sc = door_scene(0.6)
    w = CollisionWorld.from_scene(sc)
    targets = targets_for(DOOR_62.with_margin(), sc)
    before = base_frame(w, "arm")
    a = find_base(w, "arm", targets, MountingSurface("floor"))
    assert np.allclose(base_frame(w, "arm"), before)          # put back
    b = find_base(w, "arm", targets, MountingSurface("floor"))
    assert a.ok and b.ok, a.failure
    assert np.array_equal(a.pose, b.pose)                     # deterministic
    assert a.pose[2, 3] == 0.0 and a.pose[:3, 2] == pytest.approx([0, 0, 1])   # on the floor, upright
    # facing the task: the base x axis within 60 deg of the direction to the targets' centre
    centre = np.mean(targets[0].positions(), axis=0)
    to = (centre - a.pose[:3, 3])[:2]
    assert np.dot(a.pose[:2, 0], to / np.linalg.norm(to)) >= math.cos(math.radians(61))
    # the plain check (5 mm, the task's own arc) accepts it
    set_base_frame(w, "arm", a.pose)
    try:
        assert all(r.ok for r in ReachChecker(w, "arm").check_all(targets_for(DOOR_62, sc)))
    finally:
        w.close()


@pytest.mark.parametrize("model", ["franka_panda", "kuka_iiwa_wsg50"])
def test_the_arm_mirror_puts_every_link_and_the_tcp_at_the_mirror_image(model):
    sc = door_scene(model=model)
    w = CollisionWorld.from_scene(sc)
    try:
        m = arm_mirror(w, "arm")
        assert m is not None
        assert list(m.signs) == [-1, 1, -1, 1, -1, 1, -1]          # joints 1, 3, 5, 7 turn the other way
        if model == "franka_panda":                                  # its hand sits 45 deg about the flange:
            assert math.remainder(m.offsets[-1] + math.pi / 2, 2 * math.pi) == pytest.approx(0, abs=1e-3)
        r = w.robots["arm"]
        M = np.diag([1.0, -1.0, 1.0])
        for q in ([0.3, -0.5, 0.2, -1.8, 0.4, 1.9, 0.1], [-0.8, 0.4, -0.3, -1.2, -0.6, 1.5, -0.9]):
            r.reset_arm(q)
            T = r.tcp_pose()
            r.reset_arm(m(np.array(q), r.lower, r.upper))
            Tm = r.tcp_pose()
            assert Tm[:3, 3] == pytest.approx(M @ T[:3, 3], abs=1e-6)
            # the mirror image of a gripper pose: approach z and finger line y mirrored, x = y cross z
            assert Tm[:3, :3] == pytest.approx(M @ T[:3, :3] @ np.diag([-1.0, 1.0, 1.0]), abs=1e-6)
    finally:
        w.close()


def test_a_right_hinged_door_gets_the_mirror_image_of_the_left_hinged_doors_base():
    """The 0.6 m right-hinged door once found no base (the search followed one posture, from seeds
    that were not mirror-symmetric); now left and right give mirror-image bases, and the check
    passes from either."""
    found = {}
    for hinge in ("left", "right"):
        sc = door_scene(0.6, hinge)
        w = CollisionWorld.from_scene(sc)
        try:
            p = find_base(w, "arm", targets_for(DOOR_62.with_margin(), sc), MountingSurface("floor"))
            assert p.ok, p.failure
            found[hinge] = (p.position, p.yaw_deg)
            set_base_frame(w, "arm", p.pose)
            assert all(r.ok for r in check_for_task(w, "arm", targets_for(DOOR_62, sc),
                                                    targets_for(DOOR_62.with_margin(), sc)))
        finally:
            w.close()
    (pl, yl), (pr, yr) = found["left"], found["right"]
    assert pr == pytest.approx([pl[0], -pl[1], 0.0], abs=1e-4) and yr == pytest.approx(-yl)


def test_axis_separation_is_small_where_two_joint_axes_are_one_line():
    """The Panda's joints 1 and 3 are one line when joint 2 is 0: a held path through it ranks low."""
    from py_trees_manipulation.collision.reachability import ReachSample, ReachTarget, TargetResult

    sc = door_scene()
    w = CollisionWorld.from_scene(sc)
    try:
        sample = ReachSample("held", np.eye(4), held=True)
        t = ReachTarget("t", ((sample,),))

        def sep(q):
            return _axis_separation(w, "arm", [TargetResult(t, True, 0, 1, None, [np.array(q)])])

        assert sep([0, 0.0, 0, -1.8, 0, 2.0, 0.8]) < 0.01
        assert sep([0, -0.1, 0, -1.9, 0, 2.0, 0.8]) < AXIS_SEPARATION_MIN    # ranks below
        assert sep([0, -0.6, 0, -2.4, 0, 2.0, 0.8]) >= AXIS_SEPARATION_MIN   # well apart
        free = ReachTarget("t", ((ReachSample("free", np.eye(4)),),))
        assert _axis_separation(w, "arm", [TargetResult(free, True, 0, 1, None, [np.zeros(7)])]) == math.inf
    finally:
        w.close()


def test_the_search_relaxes_its_margins_in_steps_and_says_so():
    """A 1.9 m lever (no position reaches it) is not searched again with fewer margins; the relaxed
    steps are tried when a search checked candidates and none passed (no probe then)."""
    sc = door_scene(0.8, handle_height=1.9)
    w = CollisionWorld.from_scene(sc)
    probes = []
    try:
        def targets(probe):
            probes.append(probe)
            return targets_for(DOOR_62.with_margin() if probe else DOOR_62, sc)

        p = find_base_relaxing(w, "arm", targets, MountingSurface("floor"))
        assert not p.ok and probes == [True] and "relaxed" not in p.failure
    finally:
        w.close()
    # a door the full margins cannot place from a few candidates, the check's own tolerances can
    sc = door_scene(0.6)
    w = CollisionWorld.from_scene(sc)
    try:
        strict = find_base(w, "arm", targets_for(DOOR_62.with_margin(), sc), MountingSurface("floor"),
                           joint_margin_rad=1.0, max_candidates=3)
        assert not strict.ok
        assert RELAX_STEPS[0][0] == "" and len(RELAX_STEPS) == 3 and not RELAX_STEPS[-1][4]
        p = find_base_relaxing(w, "arm", lambda probe: targets_for(DOOR_62.with_margin() if probe else DOOR_62, sc),
                               MountingSurface("floor"))
        assert p.ok and p.relaxed == "" and "relaxed" not in p.summary()
    finally:
        w.close()


def test_no_base_reaches_a_lever_two_metres_up_and_the_failure_names_it():
    sc = door_scene(0.8, handle_height=1.9)
    w = CollisionWorld.from_scene(sc)
    try:
        p = find_base(w, "arm", targets_for(DOOR_62, sc), MountingSurface("floor"))
        assert not p.ok and "the door handle" in p.failure and "floor" in p.failure
    finally:
        w.close()


def test_mounting_surface_is_the_table_under_the_target_object_else_the_floor():
    sc = parse_scene({"robots": [{"name": "arm", "base_pose": "auto"}],
                      "fixtures": [{"name": "table", "urdf": "table/table.urdf", "pose": {"position": [0.5, 0, 0]}}],
                      "objects": [{"name": "mug", "urdf": "objects/mug.urdf", "pose": {"position": [0.5, 0, 0.629]}}]})
    w = CollisionWorld.from_scene(sc)
    try:
        s = mounting_surface(w, sc, "arm", None, [ReachRequest()])
        assert s.name == "table" and s.body == "table" and s.z == pytest.approx(0.625, abs=0.005)
        x0, x1, y0, y1 = s.region
        assert x0 > -0.25 and x1 < 1.25 and y0 > -0.5 and y1 < 0.5 and x1 - x0 > 1.0
        assert mounting_surface(w, sc, "arm", "floor", [ReachRequest()]).z == 0.0
        assert mounting_surface(w, sc, "arm", None, [ReachRequest(door=None, cabinet=None, object=None,
                                                                  open_angle_deg=1)]).name == "table"
        set_base_frame(w, "arm", base_pose_at(0.0, 0.0, 0.625, 0.0))
        assert surface_under(w, sc, "arm").name == "table"
        set_base_frame(w, "arm", base_pose_at(-1.0, 0.0, 0.0, 0.0))
        assert surface_under(w, sc, "arm").name == "floor"
    finally:
        w.close()


def test_place_robots_resolves_auto_and_keeps_explicit_poses():
    sc = door_scene(0.6, base="auto")
    placed, placements = place_robots(sc, [DOOR_62])
    p = placements["arm"]
    assert p.ok and np.array_equal(placed.robots[0].base_pose, p.pose)
    assert placed.robots[0].base_auto is not None and sc.robots[0].base_pose == pytest.approx(np.eye(4))
    summary = p.summary()
    assert summary["surface"] == "floor" and summary["position"][2] == 0.0 and summary["ok"]
    assert summary["rpy_deg"][:2] == [0.0, 0.0]
    # nothing to place
    explicit = door_scene(0.6)
    assert place_robots(explicit, [DOOR_62]) == (explicit, {})


# ---- the scene's base_pose: auto -------------------------------------------------------------------------------
@pytest.mark.parametrize("value,surface", [("auto", None), ({"auto": None}, None), ({"auto": True}, None),
                                           ({"auto": {"surface": "floor"}}, "floor"),
                                           ({"auto": {"surface": "table"}}, "table")])
def test_base_pose_auto_forms(value, surface):
    sc = parse_scene({"robots": [{"name": "arm", "base_pose": value}],
                      "fixtures": [{"name": "table", "urdf": "table/table.urdf"}]})
    assert sc.robots[0].base_auto is not None and sc.robots[0].base_auto.surface == surface


@pytest.mark.parametrize("value,path,message", [
    ("autp", ("robots", 0, "base_pose"), "a pose .* or 'auto', got 'autp'"),
    ({"auto": {"surface": "tabel"}}, ("robots", 0, "base_pose", "auto", "surface"), "no fixture named 'tabel'.*'table'"),
    ({"auto": {"surfac": "floor"}}, ("robots", 0, "base_pose", "auto", "surfac"), "unknown key 'surfac'"),
    ({"auto": True, "position": [0, 0, 0]}, ("robots", 0, "base_pose", "position"), "takes no 'position'"),
])
def test_base_pose_auto_mistakes_name_the_key(value, path, message):
    with pytest.raises(SceneError, match=message) as e:
        parse_scene({"robots": [{"name": "arm", "base_pose": value}],
                     "fixtures": [{"name": "table", "urdf": "table/table.urdf"}]})
    assert e.value.path == path
