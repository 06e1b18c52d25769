"""The place's support over the declared pose noise (issue 33: whole tasks checked before moving):
:func:`~py_trees_manipulation.collision.placement.check_place` with ``noise`` requires the held
object to stand on its support at every pose of its noise and of its support's (the worst case), as
the run's draw must; the overhang it reports is the footprint's, from the formula. PyBullet DIRECT,
no robot, no physics: milliseconds."""

import math

import numpy as np
import pytest

import py_trees_manipulation.sim  # noqa: F401  (scene sections)
from py_trees_manipulation.collision.placement import NOISE_YAW_STEP_DEG, _Probe, check_place
from py_trees_manipulation.collision.world import CollisionWorld
from py_trees_manipulation.scene.spec import PoseNoiseSpec, parse_scene

#: a 40 x 40 cm board, 2 cm thick, centred at (0.5, 0): its top at z 0.02, its +x edge at x 0.7
EDGE_X, TOP = 0.7, 0.02
#: the can: a cylinder of radius 4 cm, 10 cm tall
R, H = 0.04, 0.10
NOISE = PoseNoiseSpec(position_m=0.005, yaw_deg=5.0)


def world_with(board_noise=None):
    board = {"name": "board", "primitive": {"shape": "box", "size": [0.4, 0.4, 0.02]}, "fixed": True,
             "pose": {"position": [0.5, 0.0, 0.01]}}
    if board_noise:
        board["pose_noise"] = board_noise
    can = {"name": "can", "primitive": {"shape": "cylinder", "radius": R, "length": H}, "mass_kg": 0.2,
           "pose": {"position": [0.3, 0.0, TOP + H / 2]}}
    return CollisionWorld.from_scene(parse_scene({"objects": [board, can]}))


def at(d_m: float) -> np.ndarray:
    """The can's pose with its axis ``d_m`` inside the board's +x edge, standing on the board."""
    T = np.eye(4)
    T[:3, 3] = [EDGE_X - d_m, 0.0, TOP + H / 2]
    return T


@pytest.fixture(scope="module")
def world():
    w = world_with()
    yield w
    w.close()


def test_the_draws_span_the_declared_noise():
    """Yaw every 1 deg over [-5, 5] (11), times the pose as written and the four corners of the
    position square (5), times the support's yaw at 0 and both ends when it has one."""
    w = world_with()
    try:
        probe = _Probe(w, "can")
        board = w.bodies["board"]
        probe.noise[probe.body] = (0.005, 5.0)
        draws = probe.draws(board)
        assert draws[0] == (0.0, 0.0, 0.0, 0.0)   # the pose as given first
        assert sorted({d[0] for d in draws}) == pytest.approx([float(y) for y in range(-5, 6)])
        assert {(d[1], d[2]) for d in draws} == {(0.0, 0.0), (0.005, 0.005), (0.005, -0.005), (-0.005, 0.005),
                                                 (-0.005, -0.005)}
        assert len(draws) == 11 * 5 and NOISE_YAW_STEP_DEG == 1.0
        probe.noise[board] = (0.003, 2.0)   # the support's shift adds to the square; its yaw's ends
        draws = probe.draws(board)
        assert max(d[1] for d in draws) == pytest.approx(0.008)
        assert sorted({d[3] for d in draws}) == [-2.0, 0.0, 2.0] and len(draws) == 3 * 11 * 5
    finally:
        w.close()


def test_a_can_22_mm_inside_the_edge_is_refused_with_5_mm_of_position_noise(world):
    """The can's axis 22 mm inside the edge: as written the middle of its outer half (20 mm out) is
    2 mm inside, and it stands (no noise: as before). With 5 mm of position noise it stands 3 mm
    past: refused, at the worst pose its footprint reaches r + p - d = 40 + 5 - 22 = 23 mm past the
    edge (r - d = 18 mm as written), whatever the yaw (a cylinder's footprint turns into itself)."""
    assert check_place(world, "can", at(0.022), search=False).ok
    c = check_place(world, "can", at(0.022), search=False, noise={"can": NOISE})
    assert not c.ok and c.support == "board" and c.worst is not None and c.worst.blocker is None
    assert c.worst.shift_m[0] == pytest.approx(0.005)   # toward the edge
    assert c.worst.overhang_m == pytest.approx(R + 0.005 - 0.022, abs=0.0005)
    assert ("stands on 'board' as written but only partly on it within the pose_noise of 'can' (position_m "
            "0.005, yaw_deg 5):") in c.reason
    assert "its footprint reaches 23 mm past the edge of 'board' (18 mm as written;" in c.reason


def test_a_can_35_mm_inside_the_edge_stands_at_every_pose_of_the_noise(world):
    """35 mm inside: its outer half's middle 15 mm inside as written, 10 mm at the worst shift."""
    c = check_place(world, "can", at(0.035), search=False, noise={"can": NOISE})
    assert c.ok and c.support == "board" and c.worst is None


def test_the_spot_suggested_stands_at_every_pose_of_the_noise(world):
    """The refused can's suggestion is a spot that passes the same worst case, nearer the middle of
    the board than the refused place by at least the noise's missing 3 mm (rings 2 cm apart)."""
    c = check_place(world, "can", at(0.022), noise={"can": NOISE})
    assert c.suggestion is not None and c.support == "board"
    spot = np.eye(4)
    spot[:3, 3] = c.suggestion
    assert check_place(world, "can", spot, search=False, noise={"can": NOISE}).ok
    assert c.suggestion[0] <= EDGE_X - 0.022 - 0.003 + 1e-9
    # no noise: the place as written stands, nothing to suggest (as before)
    assert check_place(world, "can", at(0.022), noise={}).ok


def test_the_supports_noise_counts_as_the_objects():
    """The board declares the 5 mm position noise, the can none: the same worst case (23 mm), named
    as the board's."""
    w = world_with({"position_m": 0.005})
    try:
        c = check_place(w, "can", at(0.022), search=False, noise={"board": PoseNoiseSpec(position_m=0.005)})
        assert not c.ok and c.worst.overhang_m == pytest.approx(0.023, abs=0.0005)
        assert "within the pose_noise of 'board' (position_m 0.005, yaw_deg 0)" in c.reason
        assert np.allclose(w.object_pose("board")[:3, 3], [0.5, 0.0, 0.01])   # put back
    finally:
        w.close()


def test_the_supports_yaw_turns_it_about_its_own_origin():
    """A board with 10 deg of yaw noise, turned about its centre c = (0.5, 0): the can at p = (0.64,
    0.17) stands as written (30 mm inside the +y edge: the middle of its outer half 10 mm inside);
    with the board at -10 deg its +y edge, normal n = (sin 10, cos 10), is 0.2 - n.(p - c) = 8.3 mm
    from the can's axis: refused there, the footprint r - 8.3 = 31.7 mm past the edge."""
    w = world_with({"yaw_deg": 10})
    try:
        before = np.array(w.object_pose("board"))
        T = np.eye(4)
        T[:3, 3] = [0.64, 0.17, TOP + H / 2]
        assert check_place(w, "can", T, search=False).ok
        c = check_place(w, "can", T, search=False, noise={"board": PoseNoiseSpec(yaw_deg=10.0)})
        assert not c.ok and c.worst is not None and c.worst.support_yaw_deg == -10.0
        inside = 0.2 - (0.14 * math.sin(math.radians(10)) + 0.17 * math.cos(math.radians(10)))
        assert c.worst.overhang_m == pytest.approx(R - inside, abs=0.0005)
        assert "its support yawed -10.0 deg, its footprint reaches 32 mm past the edge of 'board'" in c.reason
        assert np.allclose(w.object_pose("board"), before)   # put back
    finally:
        w.close()
