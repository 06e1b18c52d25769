"""The collision world and the arm motion planner (PyBullet DIRECT, no physics): checks against
exact distances, padding, self-collision, attached objects, allowed contacts, reasons, determinism."""

import numpy as np
import pybullet as pb
import pytest

import py_trees_manipulation.sim  # noqa: F401  (scene sections)
from py_trees_manipulation.collision.arm_planner import ArmMotionPlanner, MotionPlanningError, MotionRequest
from py_trees_manipulation.collision.world import AllowedContacts, CollisionWorld
from py_trees_manipulation.geometry.poses import pose_from_xyz_rpy
from py_trees_manipulation.motion.paths import first_invalid
from py_trees_manipulation.scene.spec import parse_scene

READY = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
TOP = 0.626


def scene(**extra_objects):
    objects = [
        {"name": "wall", "primitive": {"shape": "box", "size": [0.04, 0.40, 0.40]}, "fixed": True,
         "pose": {"position": [0.45, -0.30, TOP + 0.20]}},
        {"name": "cube", "primitive": {"shape": "box", "size": [0.05, 0.05, 0.05]}, "mass_kg": 0.1,
         "pose": {"position": [0.5, 0.2, TOP + 0.025]}},
    ]
    return parse_scene({"robots": [{"name": "panda", "model": "franka_panda", "base_pose": {"position": [0, 0, TOP]}}],
                        "fixtures": [{"name": "table", "urdf": "table/table.urdf", "pose": {"position": [0.5, 0, 0]}}],
                        "objects": objects, **extra_objects})


@pytest.fixture(scope="module")
def world():
    w = CollisionWorld.from_scene(scene())
    yield w
    w.close()


def exact_violation(ck, world, q):
    """Ground truth: getClosestPoints of every moving link against every other body."""
    return [p for p in ck.proximities(q, 0.05) if p.distance_m < p.threshold_m]


def test_fast_check_agrees_with_exact_distances(world):
    ck = world.checker("panda")
    r = world.robots["panda"]
    rng = np.random.default_rng(3)
    n_env = n_self = 0
    for q in rng.uniform(r.lower, r.upper, size=(600, 7)):
        valid = ck.is_valid(q)
        env = exact_violation(ck, world, q)
        hit = ck.explain(q)
        if env:
            n_env += 1
            assert not valid, (q, env[0])
        if not valid:
            assert hit is not None and hit.distance_m < hit.threshold_m
            if not env:
                assert hit.self_collision
                n_self += 1
        else:
            assert hit is None
    assert n_env > 50 and n_self > 5  # the sample exercised both kinds


def test_padding_is_a_distance_not_a_contact(world):
    w0 = world.object_pose("wall")
    try:
        T = w0.copy()
        T[:3, 3] = [0.75, 0.0, 1.0]       # in front of the hand at the ready pose
        world.set_object_pose("wall", T)
        for gap in (0.03, 0.012, 0.008, 0.001, -0.003):
            for _ in range(20):            # slide it along x until the closest distance is `gap`
                d = min(p.distance_m for p in world.checker("panda").proximities(READY, 0.6) if p.body == "wall")
                if abs(d - gap) < 1e-4:
                    break
                T[0, 3] -= d - gap
                world.set_object_pose("wall", T)
            ck = world.checker("panda")   # (a checker caches the obstacles' boxes: a new one per pose)
            d = min(p.distance_m for p in ck.proximities(READY, 0.1) if p.body == "wall")
            assert d == pytest.approx(gap, abs=1e-4)
            assert ck.is_valid(READY) == (gap >= world.padding_m), gap
            if gap < world.padding_m:
                hit = ck.explain(READY)
                assert hit.body == "wall" and hit.threshold_m == world.padding_m
    finally:
        world.set_object_pose("wall", w0)


def test_self_collision_is_found_and_named(world):
    ck = world.checker("panda")
    q = [2.209, -1.765, 1.231, -3.138, 0.02, 1.62, -1.761]   # the forearm folded onto the upper arm
    assert not [p for p in ck.proximities(q, 0.05) if p.distance_m < p.threshold_m]  # clear of the scene
    hit = ck.explain(q)
    assert hit is not None and hit.self_collision and hit.distance_m < 0
    assert hit.describe(numbers=False) == "panda_link2 would hit panda_link5 (self-collision)"
    assert hit.describe() == f"panda_link2 would hit panda_link5 (self-collision) (penetrating by {-hit.distance_m * 1000:.0f} mm)"
    assert hit.fix() == ""   # nothing to change for a self-collision


def test_a_motion_may_leave_a_self_collision_it_starts_in_but_not_deepen_it(world):
    """A compliant held motion (a door's arc) can end with two links' conservative hulls overlapping:
    the motion that backs away must not be refused for it, one that goes deeper must."""
    planner = ArmMotionPlanner(world, "panda")
    q = np.array([2.209, -1.765, 1.231, -3.138, 0.02, 1.62, -1.761])   # link2 and link5 overlap
    hit = world.checker("panda").explain(q)
    assert hit.self_collision
    depth = -hit.distance_m
    relax = planner._start_contacts(q, AllowedContacts())
    ck = world.checker("panda", relax)
    assert ck.is_valid(q) and ck.explain(q) is None            # where it starts: allowed
    assert any("may not get 2 mm deeper" in r for r in relax.reasons)
    plain = world.checker("panda")

    def moved(j, dq):
        p = q.copy()
        p[j] += dq
        pairs = plain.self_collisions(p)
        return p, (-pairs[0].distance_m if pairs else 0.0)

    unfold, d = moved(3, 0.05)                                 # the elbow opens: clear
    assert d == 0.0 and ck.is_valid(unfold)
    shallower, d = moved(2, -0.2)                              # joint 3 back: 5 mm, less than the start
    assert 0 < d < depth and ck.is_valid(shallower)
    deeper, d = moved(2, 0.2)                                  # joint 3 on: 14 mm, 3 mm deeper than the start
    assert d > depth + 0.002
    assert not ck.is_valid(deeper) and ck.explain(deeper).self_collision
    folded, d = moved(3, -0.05)                                # the elbow folds further: 27 mm
    assert d > 0.02 and not ck.is_valid(folded)


def test_attached_object_moves_with_the_hand_and_is_checked_against_the_scene_only():
    w = CollisionWorld.from_scene(scene())
    try:
        planner = ArmMotionPlanner(w, "panda")
        grasp = pose_from_xyz_rpy([0.5, 0.2, TOP + 0.025], [np.pi, 0, 0])
        q = planner.check_pose(grasp, [READY]).q
        w.set_robot_state("panda", q, fingers=(0.025, 0.025))
        w.attach("panda", "cube")
        ck = w.checker("panda")
        # held between the fingers: never a collision with them; resting on the table: within the padding
        assert not any(p.held and p.body == "panda" and p.body_link.endswith("finger") for p in ck.proximities(q, 0.05))
        hit = ck.explain(q)
        assert hit is not None and hit.held and hit.body == "table" and "the held cube would hit table" in hit.describe()
        # lift it 10 cm: clear; the cube came along (2.5 cm centre offset under the TCP is kept)
        up = grasp.copy()
        up[2, 3] += 0.10
        q_up = planner.check_pose(up, [q]).q
        assert ck.is_valid(q_up)
        np.testing.assert_allclose(w.object_pose("cube")[:3, 3], [0.5, 0.2, TOP + 0.125], atol=2e-3)
        # a board 5 mm under the lifted cube: the cube (not the arm) is what is too close to it
        board = w.object_pose("wall")
        board[:3, 3] = [0.5, 0.2, TOP + 0.095 - 0.20]
        w.set_object_pose("wall", board)
        hit = w.checker("panda").explain(q_up)
        assert hit is not None and hit.held and hit.body == "wall"
        assert hit.distance_m == pytest.approx(0.005, abs=2e-3)
        assert w.detach("panda") == "cube" and w.attached("panda") is None
    finally:
        w.close()


def test_allowed_contacts_by_name():
    w = CollisionWorld.from_scene(scene())
    try:
        planner = ArmMotionPlanner(w, "panda")
        grasp = pose_from_xyz_rpy([0.5, 0.2, TOP + 0.025], [np.pi, 0, 0])
        q = planner.check_pose(grasp, [READY], allowed=planner._explicit(["cube"])).q
        w.set_robot_state("panda", q, fingers=(0.026, 0.026))        # the fingers on the cube's faces
        plain = w.checker("panda").explain(q)
        assert plain is not None and plain.body == "cube" and plain.link.endswith("finger")
        assert w.checker("panda", planner._explicit(["cube"])).explain(q) is None
        with pytest.raises(ValueError, match="no body named 'cupe'"):
            planner._explicit(["cupe"])
    finally:
        w.close()


# ---- the arm motion planner ---------------------------------------------------------------------------
def plan(world, **kw):
    return ArmMotionPlanner(world, "panda").plan(MotionRequest(robot="panda", start=READY, **kw))


BEHIND_WALL = pose_from_xyz_rpy([0.35, -0.45, TOP + 0.10], [np.pi, 0, 0])


def test_straight_motion_into_the_wall_fails_with_link_body_and_where(world):
    with pytest.raises(MotionPlanningError) as e:
        plan(world, kind="pose", target=BEHIND_WALL, planner="straight")
    assert e.value.kind == "path_collision"
    text = str(e.value)
    assert " would hit wall" in text and "% of the path (straight joint motion)" in text
    assert 0.0 < e.value.fraction < 1.0


def test_auto_plans_round_the_wall_and_the_path_is_clear(world):
    p = plan(world, kind="pose", target=BEHIND_WALL, planning_time_s=5.0, seed=4)
    assert p.mode == "planned" and p.planner == "RRTConnect"
    ck = world.checker("panda", p.allowed)
    assert first_invalid(p.waypoints, ck.is_valid, world.max_step_rad / 2) is None
    assert p.min_clearance_m is not None and p.min_clearance_m >= world.padding_m
    # the trajectory follows the waypoints and ends at the IK solution for the target
    np.testing.assert_allclose(p.trajectory.positions[-1], p.goal)
    assert np.linalg.norm(world.tcp_pose("panda", p.goal)[:3, 3] - BEHIND_WALL[:3, 3]) < 0.01
    # same seed, same path
    again = plan(world, kind="pose", target=BEHIND_WALL, planning_time_s=5.0, seed=4)
    np.testing.assert_array_equal(p.waypoints, again.waypoints)


def test_unreachable_and_in_collision_goals_say_why(world):
    with pytest.raises(MotionPlanningError, match=r"out of reach: best IK solution ends 0\.\d+ m away") as e:
        plan(world, kind="pose", target=pose_from_xyz_rpy([1.4, 0, TOP + 0.3], [np.pi, 0, 0]))
    assert e.value.kind == "unreachable"
    # the TCP 2.5 cm from the wall's face: the hand (8 cm wide along x) would be in it
    with pytest.raises(MotionPlanningError, match="only reachable in collision: panda_") as e:
        plan(world, kind="pose", target=pose_from_xyz_rpy([0.495, -0.30, TOP + 0.15], [np.pi, 0, 0]))
    assert e.value.kind == "goal_in_collision"
    assert e.value.collision is not None and e.value.collision.body == "wall"
    with pytest.raises(MotionPlanningError, match="outside its limits"):
        plan(world, kind="joints", goal=[0, 0, 0, 1.0, 0, 1.5, 0])


def test_an_ik_seed_picks_the_branch_the_pose_goal_ends_in(world):
    # the Panda has 7 joints: one TCP pose, a family of configurations. From the configuration now
    # the IK lands near it; with ik_seed (a configuration a plan checked) the goal is the one nearest
    # the seed, whichever the arm starts in
    target = pose_from_xyz_rpy([0.45, 0.15, TOP + 0.25], [np.pi, 0, 0])
    elbow_left = ArmMotionPlanner(world, "panda").check_pose(target, [READY + [0.6, 0, -0.6, 0, 0, 0, 0]]).q
    assert np.linalg.norm(world.tcp_pose("panda", elbow_left)[:3, 3] - target[:3, 3]) < 1e-3
    plain = plan(world, kind="pose", target=target)
    seeded = plan(world, kind="pose", target=target, ik_seeds=[elbow_left.tolist()])
    assert float(np.max(np.abs(seeded.goal - elbow_left))) < 0.01
    assert float(np.max(np.abs(plain.goal - elbow_left))) > 0.2       # the seed made the difference
    for p in (plain, seeded):
        assert np.linalg.norm(world.tcp_pose("panda", p.goal)[:3, 3] - target[:3, 3]) < 0.01
    with pytest.raises(ValueError, match=r"ik_seed has 6 positions; 'panda' has 7 arm joints \(panda_joint1, "):
        plan(world, kind="pose", target=target, ik_seeds=[[0.0] * 6])


def test_cartesian_line_through_the_wall_is_refused_before_moving(world):
    start_pose = pose_from_xyz_rpy([0.45, 0.0, TOP + 0.25], [np.pi, 0, 0])
    q0 = ArmMotionPlanner(world, "panda").check_pose(start_pose, [READY]).q
    end = pose_from_xyz_rpy([0.45, -0.45, TOP + 0.25], [np.pi, 0, 0])
    with pytest.raises(MotionPlanningError) as e:
        ArmMotionPlanner(world, "panda").plan(MotionRequest(robot="panda", start=q0, kind="cartesian", target=end))
    assert e.value.kind == "path_collision" and "would hit wall" in str(e.value)
    assert "% of the straight line to (0.45, -0.45, 0.88)" in str(e.value)
    # the wall's near face is at y = -0.10: the hand reaches it in the first third of the 0.45 m line
    assert 0.0 < e.value.fraction < 0.3


def test_a_grasp_approach_may_touch_what_it_grasps(world):
    above = pose_from_xyz_rpy([0.5, 0.2, TOP + 0.15], [np.pi, 0, 0])
    grasp = pose_from_xyz_rpy([0.5, 0.2, TOP + 0.03], [np.pi, 0, 0])
    q0 = ArmMotionPlanner(world, "panda").check_pose(above, [READY]).q
    p = ArmMotionPlanner(world, "panda").plan(MotionRequest(robot="panda", start=q0, kind="cartesian", target=grasp))
    assert any("cube" in r and "grasp" in r for r in p.allowed.reasons)
    assert pb.isConnected(world.client)
