"""Affordance subframes (MoveIt Studio calculate*Subframes) and screw motions, on numbers alone."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings
from hypothesis import strategies as st

from py_trees_manipulation.geometry.affordances import (
    Subframes,
    calculate_grasp_and_twist_subframes,
    calculate_move_along_arc_subframes,
)
from py_trees_manipulation.geometry.poses import pose_from_pq, pose_from_xyz_rpy
from py_trees_manipulation.geometry.screw import (
    Screw,
    chord_error_m,
    exp_twist,
    max_step_for_chord_error,
    pose_on_screw,
    screw_from_subframes,
    screw_waypoints,
)

S3 = math.sqrt(3.0) / 2.0  # sin 60 = cos 30


def _frame(x_axis, y_axis, z_axis, position):
    T = np.eye(4)
    T[:3, 0], T[:3, 1], T[:3, 2] = x_axis, y_axis, z_axis
    T[:3, 3] = position
    return T


# A door in the world y-z plane, the viewer (robot) on +x. Hinge line on x = 0, y = 0 from the
# floor to 2 m; hinge poses have z into the door surface (-x), as MoveIt assumes.
HINGE_BOTTOM = _frame([0, 1, 0], [0, 0, -1], [-1, 0, 0], [0.0, 0.0, 0.0])
HINGE_TOP = _frame([0, 1, 0], [0, 0, -1], [-1, 0, 0], [0.0, 0.0, 2.0])
# Grasp 0.7 m from the hinge, at 1 m height; TCP approach (z) into the door, fingers close along z.
GRASP = _frame([0, -1, 0], [0, 0, 1], [-1, 0, 0], [0.0, 0.7, 1.0])


class TestMoveAlongArcSubframes:
    def test_ordering_keeps_or_swaps_to_the_same_answer(self):
        # first=bottom: c = (g-o) x (a-o) = (0,.7,1) x (0,0,2) = (1.4, 0, 0); c . z_o = -1.4 < 0: swap.
        swapped = calculate_move_along_arc_subframes(GRASP, HINGE_BOTTOM, HINGE_TOP)
        # first=top: c = (0,.7,-1) x (0,0,-2) = (-1.4, 0, 0); c . z_o = +1.4 > 0: kept.
        kept = calculate_move_along_arc_subframes(GRASP, HINGE_TOP, HINGE_BOTTOM)
        for sub in (swapped, kept):
            assert isinstance(sub, Subframes)
            np.testing.assert_array_equal(sub.screw_origin, HINGE_TOP)
            np.testing.assert_array_equal(sub.screw_axis, HINGE_BOTTOM)
            np.testing.assert_array_equal(sub.grasp, GRASP)
            np.testing.assert_allclose(sub.axis, [0.0, 0.0, -1.0])
            assert sub.radius_m == pytest.approx(0.7)

    def test_mirrored_door_orders_the_other_way(self):
        # Hinge on the viewer's right instead: grasp at y = -0.7. c = (0,-.7,1) x (0,0,2) = (-1.4,0,0),
        # c . z_o = +1.4 > 0: bottom stays the origin and the axis points up.
        grasp = GRASP.copy()
        grasp[1, 3] = -0.7
        sub = calculate_move_along_arc_subframes(grasp, HINGE_BOTTOM, HINGE_TOP)
        np.testing.assert_array_equal(sub.screw_origin, HINGE_BOTTOM)
        np.testing.assert_allclose(sub.axis, [0.0, 0.0, 1.0])
        sub2 = calculate_move_along_arc_subframes(grasp, HINGE_TOP, HINGE_BOTTOM)
        np.testing.assert_array_equal(sub2.screw_origin, HINGE_BOTTOM)

    def test_positive_rotation_pulls_toward_viewer_hand_computed(self):
        sub = calculate_move_along_arc_subframes(GRASP, HINGE_BOTTOM, HINGE_TOP)
        T = pose_on_screw(sub.grasp, screw_from_subframes(sub), math.radians(60.0))
        # +60 deg about -z is -60 deg about +z: (0, 0.7) -> (0.7 sin 60, 0.7 cos 60).
        np.testing.assert_allclose(T[:3, 3], [0.7 * S3, 0.35, 1.0], atol=1e-12)
        assert T[0, 3] > 0.0  # toward the viewer on +x
        # Approach axis (-1, 0, 0) turned by -60 deg about z: (-cos 60, sin 60, 0), still normal
        # to the leaf, whose direction from the hinge is now (cos 30, sin 30, 0).
        np.testing.assert_allclose(T[:3, 2], [-0.5, S3, 0.0], atol=1e-12)
        np.testing.assert_allclose(T[:3, 0], [-S3, -0.5, 0.0], atol=1e-12)
        np.testing.assert_allclose(T[:3, 1], [0.0, 0.0, 1.0], atol=1e-12)
        assert abs(np.dot(T[:3, 2], [S3, 0.5, 0.0])) < 1e-12

    def test_ordering_rule_matches_velocity_form_for_random_doors(self):
        rng = np.random.default_rng(7)
        for _ in range(200):
            R = pose_from_pq([0, 0, 0], rng.normal(size=4))[:3, :3]
            o, a, g = (rng.normal(size=3) for _ in range(3))
            zo = R[:, 2]
            first = np.eye(4)
            first[:3, :3], first[:3, 3] = R, o
            second = first.copy()
            second[:3, 3] = a
            sub = calculate_move_along_arc_subframes(pose_from_pq(g), first, second)
            # The grasp's initial velocity u x (g - o) must point against z (toward the viewer).
            velocity = np.cross(sub.axis, g - sub.point)
            assert np.dot(velocity, zo) < 0.0

    def test_none_when_hinge_z_axes_not_similarly_oriented(self):
        flipped = HINGE_TOP.copy()
        flipped[:3, 1:3] *= -1.0  # z out of the door (x kept, still a rotation)
        assert calculate_move_along_arc_subframes(GRASP, HINGE_BOTTOM, flipped) is None
        perpendicular = _frame([1, 0, 0], [0, 0, -1], [0, 1, 0], [0.0, 0.0, 2.0])  # z . z' = 0
        assert calculate_move_along_arc_subframes(GRASP, HINGE_BOTTOM, perpendicular) is None

    def test_degenerate_inputs_raise(self):
        with pytest.raises(ValueError, match="same position"):
            calculate_move_along_arc_subframes(GRASP, HINGE_BOTTOM, HINGE_BOTTOM)
        on_hinge = _frame([0, -1, 0], [0, 0, 1], [-1, 0, 0], [0.0, 0.0, 1.0])
        with pytest.raises(ValueError, match="hinge line"):
            calculate_move_along_arc_subframes(on_hinge, HINGE_BOTTOM, HINGE_TOP)
        with pytest.raises(ValueError, match="shape"):
            calculate_move_along_arc_subframes(np.eye(3), HINGE_BOTTOM, HINGE_TOP)

    def test_object_subframes_ids_in_order(self):
        sub = calculate_move_along_arc_subframes(GRASP, HINGE_BOTTOM, HINGE_TOP)
        ids = [i for i, _ in sub.as_object_subframes()]
        assert ids == ["grasp", "screw_origin", "screw_axis"]
        np.testing.assert_array_equal(sub.as_object_subframes()[1][1], HINGE_TOP)


class TestGraspAndTwistSubframes:
    PIVOT = pose_from_xyz_rpy([0.3, -0.2, 1.0], [0.4, -0.3, 1.1])

    def test_fifteen_degree_default(self):
        sub = calculate_grasp_and_twist_subframes(self.PIVOT)
        R = self.PIVOT[:3, :3]
        c, s = math.cos(math.radians(15.0)), math.sin(math.radians(15.0))
        np.testing.assert_allclose(sub.grasp[:3, 0], c * R[:, 0] + s * R[:, 1], atol=1e-12)
        np.testing.assert_allclose(sub.grasp[:3, 1], -s * R[:, 0] + c * R[:, 1], atol=1e-12)
        np.testing.assert_allclose(sub.grasp[:3, 2], R[:, 2], atol=1e-12)
        np.testing.assert_allclose(sub.grasp[:3, 3], [0.3, -0.2, 1.0], atol=1e-12)
        np.testing.assert_array_equal(sub.screw_origin, self.PIVOT)
        np.testing.assert_allclose(sub.screw_axis[:3, 3], self.PIVOT[:3, 3] + 0.1 * R[:, 2], atol=1e-12)
        np.testing.assert_allclose(sub.axis, R[:, 2], atol=1e-12)
        assert sub.radius_m == pytest.approx(0.0, abs=1e-12)

    def test_twisting_the_grasp_adds_to_its_rotation(self):
        sub = calculate_grasp_and_twist_subframes(self.PIVOT, grasp_rotation=15.0)
        twisted = pose_on_screw(sub.grasp, screw_from_subframes(sub), math.radians(45.0))
        expected = calculate_grasp_and_twist_subframes(self.PIVOT, grasp_rotation=60.0).grasp
        np.testing.assert_allclose(twisted, expected, atol=1e-12)

    def test_lever_tip_moves_along_pivot_y(self):
        # A lever tip 0.1 m along the pivot's x moves initially along the pivot's +y (right-handed about z).
        sub = calculate_grasp_and_twist_subframes(np.eye(4), grasp_rotation=0.0)
        tip = pose_from_pq([0.1, 0.0, 0.0])
        moved = pose_on_screw(tip, screw_from_subframes(sub), math.radians(30.0))
        np.testing.assert_allclose(moved[:3, 3], [0.1 * S3, 0.05, 0.0], atol=1e-12)

    def test_rejects_bad_axis_length(self):
        with pytest.raises(ValueError, match="axis_length_m"):
            calculate_grasp_and_twist_subframes(np.eye(4), axis_length_m=0.0)


class TestScrew:
    def test_twist_is_omega_then_v(self):
        s = Screw.rotation([0, 0, 2.0], [1.0, 0.0, 0.0], pitch_m_per_rad=0.1)
        # v = -w x q + h w = -(0,0,1) x (1,0,0) + 0.1 (0,0,1) = (0,-1,0.1)
        np.testing.assert_allclose(s.twist, [0, 0, 1, 0, -1, 0.1])
        np.testing.assert_allclose(Screw.translation([0, 3.0, 0]).twist, [0, 0, 0, 0, 1, 0])

    def test_helix_hand_computed(self):
        s = Screw.rotation([0, 0, 1], [1.0, 0.0, 0.0], pitch_m_per_rad=0.1)
        T = pose_on_screw(np.eye(4), s, math.pi / 2)
        # p = q + Rz(90)(p0 - q) + h theta w = (1,0,0) + (0,-1,0) + (0,0,0.05 pi)
        np.testing.assert_allclose(T[:3, 3], [1.0, -1.0, 0.05 * math.pi], atol=1e-12)
        np.testing.assert_allclose(T[:3, :3], [[0, -1, 0], [1, 0, 0], [0, 0, 1]], atol=1e-12)

    @settings(max_examples=50, deadline=None)
    @given(
        st.lists(st.floats(-1, 1), min_size=3, max_size=3).filter(lambda v: np.linalg.norm(v) > 0.1),
        st.lists(st.floats(-2, 2), min_size=3, max_size=3),
        st.floats(-0.5, 0.5),
        st.floats(-3.0, 3.0),
    )
    def test_pose_on_screw_equals_matrix_exponential(self, axis, point, pitch, theta):
        s = Screw.rotation(axis, point, pitch)
        T0 = pose_from_xyz_rpy([0.2, 0.4, -0.1], [0.3, 0.2, -0.7])
        se3 = np.zeros((4, 4))
        w, v = s.twist[:3], s.twist[3:]
        se3[:3, :3] = [[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]]
        se3[:3, 3] = v
        expected = scipy.linalg.expm(se3 * theta) @ T0
        np.testing.assert_allclose(pose_on_screw(T0, s, theta), expected, atol=1e-9)
        np.testing.assert_allclose(exp_twist(s.twist, theta) @ T0, expected, atol=1e-9)

    def test_step_for_chord_error_reference_example(self):
        # r = 0.5 m, e = 1 mm: step = 2 acos(1 - 0.002) = 0.126512 rad (7.25 deg); sqrt(8e/r) = 0.126491
        step = max_step_for_chord_error(0.5, 0.001)
        assert step == pytest.approx(2.0 * math.acos(0.998), rel=1e-12)
        assert step == pytest.approx(0.126512, abs=1e-6)
        assert chord_error_m(0.5, step) == pytest.approx(0.001, rel=1e-9)
        assert chord_error_m(0.5, step) == pytest.approx(0.5 * step**2 / 8.0, rel=1e-3)

    def test_waypoints_respect_the_chord_error_bound(self):
        s = Screw.rotation([0, 0, 1], [0, 0, 0])
        start = pose_from_pq([0.5, 0.0, 1.0])
        theta = math.radians(55.0)
        wps = screw_waypoints(start, s, theta, max_chord_error_m=0.001)
        # n = ceil(0.959931 / 0.126512) = ceil(7.59) = 8 segments
        assert len(wps) == 9
        np.testing.assert_allclose(wps[0], start)
        np.testing.assert_allclose(wps[-1], pose_on_screw(start, s, theta), atol=1e-12)
        deviations = []
        for a, b in zip(wps[:-1], wps[1:]):
            mid = 0.5 * (a[:3, 3] + b[:3, 3])  # the chord's farthest point from the arc
            deviations.append(0.5 - np.linalg.norm(mid[:2]))
        assert max(deviations) <= 0.001
        assert max(deviations) == pytest.approx(chord_error_m(0.5, theta / 8), rel=1e-9)
        # one segment fewer would break the bound: the count is minimal
        assert chord_error_m(0.5, theta / 7) > 0.001

    def test_negative_theta_and_radius_override(self):
        s = Screw.rotation([0, 0, 1], [0, 0, 0])
        start = pose_from_pq([0.25, 0.0, 0.0])
        wps = screw_waypoints(start, s, -math.pi / 2, 0.001, radius_m=1.0)
        n = math.ceil((math.pi / 2) / max_step_for_chord_error(1.0, 0.001))
        assert len(wps) == n + 1
        np.testing.assert_allclose(wps[-1][:3, 3], [0.0, -0.25, 0.0], atol=1e-12)

    def test_drawer_is_pure_translation(self):
        start = pose_from_xyz_rpy([0.6, 0.1, 0.75], [0.0, math.pi / 2, 0.0])
        s = Screw.translation([2.0, 0.0, 0.0])
        T = pose_on_screw(start, s, 0.3)
        np.testing.assert_allclose(T[:3, 3], [0.9, 0.1, 0.75], atol=1e-12)
        np.testing.assert_allclose(T[:3, :3], start[:3, :3])
        assert s.radius_m([5, 5, 5]) == 0.0
        assert len(screw_waypoints(start, s, 0.3)) == 2
        wps = screw_waypoints(start, s, 0.3, max_step=0.1)
        assert len(wps) == 4
        np.testing.assert_allclose([w[0, 3] for w in wps], [0.6, 0.7, 0.8, 0.9], atol=1e-12)

    def test_drawer_from_twist_subframes_translates_along_grasp_z(self):
        # Handle on a drawer front facing the viewer on +x; the grasp's z points into the front (-x).
        pose = _frame([0, -1, 0], [0, 0, 1], [-1, 0, 0], [0.4, 0.0, 0.7])
        sub = calculate_grasp_and_twist_subframes(pose, grasp_rotation=90.0)
        s = screw_from_subframes(sub, pitch_m_per_rad=math.inf)
        assert s.is_translation
        T = pose_on_screw(sub.grasp, s, -0.25)  # negative: out of the surface, toward the viewer
        np.testing.assert_allclose(T[:3, 3], [0.65, 0.0, 0.7], atol=1e-12)

    def test_bad_inputs(self):
        with pytest.raises(ValueError, match="non-zero"):
            Screw.rotation([0, 0, 0], [0, 0, 0])
        with pytest.raises(ValueError, match="max_chord_error_m"):
            screw_waypoints(np.eye(4), Screw.rotation([0, 0, 1], [1, 0, 0]), 1.0, 0.0)
        with pytest.raises(ValueError, match="shape"):
            exp_twist([0, 0, 1], 1.0)
