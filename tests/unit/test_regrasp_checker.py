"""The geometry of regrasp transitions (collision/regrasp.py) in a PyBullet DIRECT collision world: IK
solutions that reach their waypoints, refusals with the waypoint and the cause, surfaces and generated
placements that rest on them, and bad description placements named."""

import math

import numpy as np
import pytest

import py_trees_manipulation.sim  # noqa: F401  (scene sections)
from py_trees_manipulation.collision.regrasp import (ObjectGeometry, TransitionChecker, build_placements,
                                                     resting_gap, robot_reach, support_surface, surface_placements)
from py_trees_manipulation.collision.world import CollisionWorld
from py_trees_manipulation.geometry.grasps import box_grasps, box_placements, translate_z
from py_trees_manipulation.planning.geometric import GraspVariant, PlacementCandidate, PlacementSettings, TransitionQuery
from py_trees_manipulation.scene.spec import parse_scene

TOP = 0.625
SIZE = (0.05, 0.05, 0.12)


@pytest.fixture(scope="module")
def world():
    spec = parse_scene({
        "robots": [{"name": "panda", "model": "franka_panda", "base_pose": {"position": [0, 0, 0.626]}}],
        "fixtures": [{"name": "table", "urdf": "table/table.urdf", "pose": {"position": [0.5, 0, 0]}}],
        "objects": [{"name": "box", "primitive": {"shape": "box", "size": list(SIZE)}, "mass_kg": 0.1,
                     "pose": {"position": [0.5, 0.0, TOP + 0.06]}}]})
    w = CollisionWorld.from_scene(spec)
    yield w
    w.close()


def grasp(name):
    g = next(g for g in box_grasps(SIZE) if g.name == name)
    return GraspVariant(g.handle, g.name, g.pose, g.width_m, g.approach_m)


def placement(face, x=0.5, y=0.0, name=None):
    p = next(p for p in box_placements(SIZE) if p.face == face)
    return PlacementCandidate("box", name or f"{face} at ({x}, {y})", face, face, "table/top",
                              p.on_surface([x, y, TOP]), "grid", p.height_m)


def query(kind, variant, pc, **kw):
    return TransitionQuery(kind, "panda/hand", variant.handle, "box", variant, pc.pose, pc, 0.10, 0.10, 0.10, **kw)


def test_a_top_grasp_of_the_standing_box_has_ik_solutions_at_its_three_waypoints(world):
    ck = TransitionChecker(world, {"panda/hand": "panda"})
    pc = placement("box/-z")
    v = grasp("box/+z/0")
    before = world.object_pose("box")
    res = ck(query("grasp", v, pc))
    assert res.ok, res.reason
    assert set(res.configurations) == {"pregrasp", "intersec", "preplace"}
    T_g = pc.pose @ v.pose
    lifted = T_g.copy()
    lifted[2, 3] += 0.10
    targets = {"pregrasp": translate_z(T_g, -0.10), "intersec": T_g, "preplace": lifted}
    for wp, T in targets.items():   # forward kinematics of each solution is its waypoint, within 1 cm
        tcp = world.tcp_pose("panda", res.configurations[wp])
        assert np.linalg.norm(tcp[:3, 3] - T[:3, 3]) < 0.01
        assert np.degrees(np.arccos(np.clip((np.trace(tcp[:3, :3].T @ T[:3, :3]) - 1) / 2, -1, 1))) < 6
    assert res.ik_calls >= 3 and res.collision_checks >= 3
    assert res.ik_s > 0 and res.collision_s > 0
    # the world is put back: the box where it was, nothing attached
    np.testing.assert_allclose(world.object_pose("box"), before, atol=1e-9)
    assert world.attached("panda") is None


def test_refusals_name_the_waypoint_and_the_cause(world):
    ck = TransitionChecker(world, {"panda/hand": "panda"})
    # from below: the pregrasp is under the table, no IK is even tried
    res = ck(query("grasp", grasp("box/-z/0"), placement("box/-z")))
    assert not res.ok and (res.waypoint, res.cause) == ("pregrasp", "support")
    assert "below table/top" in res.reason and res.ik_calls == 0
    # across the 12 cm height: the fingers open 8 cm
    res = ck(query("grasp", grasp("box/+x/90"), placement("box/-z")))
    assert not res.ok and res.cause == "width" and "0.120 m wide" in res.reason
    # a placement 1.3 m away: out of reach, said with the IK error
    res = ck(query("release", grasp("box/+z/0"), placement("box/-z", x=1.15, y=0.45)))
    assert not res.ok and res.cause == "reach" and "out of reach" in res.reason
    assert res.waypoint == "preplace"
    # put down on its side with a top grasp: the hand comes in level 2.5 cm over the table
    res = ck(query("release", grasp("box/+z/0"), placement("box/+y")))
    assert not res.ok and res.cause in ("support", "support_arm") and "table" in res.reason


def test_a_flip_release_from_a_side_grasp_reaches_down_onto_the_opposite_face(world):
    ck = TransitionChecker(world, {"panda/hand": "panda"})
    v = grasp("box/+y/90")              # from +y, fingers along x: level
    assert ck(query("grasp", v, placement("box/-z"))).ok
    res = ck(query("release", v, placement("box/-y")))
    assert res.ok, res.reason
    tcp = world.tcp_pose("panda", res.configurations["intersec"])
    assert tcp[2, 2] == pytest.approx(-1.0, abs=0.02)          # pointing down onto the lying box
    assert tcp[2, 3] == pytest.approx(TOP + 0.025, abs=0.01)


def test_support_surface_and_placements_on_it(world):
    s = support_surface(world, "table/top")
    assert s.z == pytest.approx(TOP, abs=0.002)
    assert s.lo[0] == pytest.approx(-0.25, abs=0.01) and s.hi[1] == pytest.approx(0.5, abs=0.01)
    with pytest.raises(ValueError, match=r"no body named 'desk'; bodies are \['box', 'table'\]"):
        support_surface(world, "desk/top")
    with pytest.raises(ValueError, match="only the top of a body"):
        support_surface(world, "table/side")
    faces = box_placements(SIZE)
    reach = robot_reach(world, ["panda"])
    pcs = surface_placements(world, "box", faces, s, world.object_pose("box"), reach, spacing_m=0.1, max_points=12)
    assert len(pcs) == 12 * 4 * 6          # points x the default yaws (0, 90, 180, 270) x faces
    # every point at the box's own yaw first, then turned by 90, 180, 270 degrees
    for k, dy in enumerate((0, 90, 180, 270)):
        block = pcs[k * 72:(k + 1) * 72]
        assert all(pc.name.endswith(f" yaw {dy}") == bool(dy) for pc in block), dy
        up = [pc for pc in block if pc.face == "box/-z"]   # resting on its bottom: x axis turned by dy
        assert len(up) == 12
        for pc in up:
            assert math.degrees(math.atan2(pc.pose[1, 0], pc.pose[0, 0])) % 360 == pytest.approx(dy, abs=1e-6)
    assert len(surface_placements(world, "box", faces, s, world.object_pose("box"), reach, spacing_m=0.1,
                                  max_points=12, yaws_deg=(0.0,))) == 12 * 6
    base = reach[0][0]
    for pc in pcs:
        d = math.hypot(pc.pose[0, 3] - base[0], pc.pose[1, 3] - base[1])
        assert 0.25 <= d <= reach[0][1] - 0.1
        assert abs(resting_gap(world, "box", pc.pose, s)) < 0.003    # on the table, not in it
    # nearest first: the first point is where the box stands
    np.testing.assert_allclose(pcs[0].pose[:2, 3], [0.5, 0.0], atol=1e-9)


def test_description_placements_that_do_not_rest_on_a_surface_are_named(world):
    s = support_surface(world, "table/top")
    reach = robot_reach(world, ["panda"])
    ok = np.eye(4)
    ok[:3, 3] = [0.45, -0.1, TOP + 0.06]
    floating = ok.copy()
    floating[2, 3] += 0.1
    tilted = ok.copy()
    tilted[:3, :3] = np.array([[1, 0, 0], [0, math.cos(0.4), -math.sin(0.4)], [0, math.sin(0.4), math.cos(0.4)]])
    og = ObjectGeometry("box", world.object_pose("box"), False, box_placements(SIZE), {"box/bottom": [ok]})
    pcs, notes = build_placements(world, og, [s], reach, PlacementSettings(grid_spacing_m=0.0, spot=False))
    assert [pc.source for pc in pcs] == ["current", "description"] and pcs[1].face == "box/-z"
    og.contacts = {"box/bottom": [ok, floating]}
    with pytest.raises(ValueError, match=r"box/bottom #1: at \(0.45, -0.10, 0.79\) it does not rest on table/top: "
                                         r"it floats 0.100 m above it; it rests there at position "
                                         r"\[0.450, -0.100, 0.6[89]\d\]"):   # ok's height, TOP + 0.06 (collision margins)
        build_placements(world, og, [s], reach, PlacementSettings())
    og.contacts = {"box/bottom": [tilted]}
    with pytest.raises(ValueError, match=r"box/bottom #0: the object is tilted 23 deg from resting on any face"):
        build_placements(world, og, [s], reach, PlacementSettings())
