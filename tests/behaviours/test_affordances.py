"""Affordance behaviours on numbers: ordering rule both ways, the None case, screw goals and the
MoveAlongArc status mapping against the scripted fake backend."""

import math
from types import SimpleNamespace

import numpy as np
import py_trees
import pytest
from py_trees.common import Status

from py_trees_manipulation.behaviors.affordances import (
    DetectDoorAffordance,
    DoorAngleAtLeast,
    DrawerOpeningAtLeast,
    FollowScrewFeedback,
    FollowScrewGoal,
    FollowScrewResult,
    GetGraspAndTwistSubframes,
    GetMoveAlongArcSubframes,
    MoveAlongArc,
    TwistHandle,
    order_hinge_poses,
    perturb_pose,
    screw_motion,
)
from py_trees_manipulation.geometry.affordances import Subframes, calculate_move_along_arc_subframes
from py_trees_manipulation.geometry.screw import Screw, pose_on_screw, screw_coordinate
from py_trees_manipulation.testing import FakeBackend, Script, tick_until_done

DT = 1.0 / 30.0

# A door whose front faces the robot at the origin (-x): hinge line at x = 0.6, y = 0.3; the grasp
# at (0.55, -0.2, 1.0). Hinge poses: z into the door = +x (surface normals seen from the robot).
_R_IN = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])  # x = +y, y = +z, z = +x


def _pose(p, R=_R_IN):
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = p
    return T


BOTTOM = _pose([0.6, 0.3, 0.0])
TOP = _pose([0.6, 0.3, 2.0])
GRASP = _pose([0.55, -0.2, 1.0])


def run(behaviour, backend, ticks=200):
    return tick_until_done(behaviour, backend, ticks, DT)


def _bb(**values):
    for k, v in values.items():
        py_trees.blackboard.Blackboard.set("/" + k, v)


class TestGetMoveAlongArcSubframes:
    # c = (g - o) x (a - o) with o = bottom, a = top: (-0.05, -0.5, 1) x (0, 0, 2) = (-1, 0.1, 0);
    # c . z_o = -1 < 0: (bottom, top) must be swapped, (top, bottom) kept.
    @pytest.mark.parametrize("first, second, swapped", [(BOTTOM, TOP, True), (TOP, BOTTOM, False)])
    def test_ordering_rule_both_ways(self, first, second, swapped):
        _bb(g=GRASP, h1=first, h2=second)
        node = GetMoveAlongArcSubframes(grasp_pose="{g}", hinge_pose_first="{h1}", hinge_pose_second="{h2}",
                                        output_key="arc")
        assert run(node, FakeBackend())[0] == Status.SUCCESS
        sub = py_trees.blackboard.Blackboard.get("/arc")
        np.testing.assert_allclose(sub.screw_origin, TOP)  # whatever the input order
        np.testing.assert_allclose(sub.screw_axis, BOTTOM)
        np.testing.assert_allclose(sub.axis, [0, 0, -1])
        assert ("swapped" in node.feedback_message) == swapped
        # radius: distance of the grasp from the hinge line, hypot(0.05, 0.5) = 0.50249 m
        assert sub.radius_m == pytest.approx(math.hypot(0.05, 0.5), abs=1e-12)
        assert "arc radius 0.502 m" in node.feedback_message

    def test_positive_angle_pulls_toward_the_viewer_hand_computed(self):
        sub = calculate_move_along_arc_subframes(GRASP, BOTTOM, TOP)
        screw, theta = screw_motion(sub, 90.0, 0.0)
        assert screw.pitch_m_per_rad == 0.0 and theta == pytest.approx(math.pi / 2)
        # grasp relative to the hinge (-0.05, -0.5) turned +90 deg about -z -> (-0.5, 0.05)
        T = pose_on_screw(GRASP, screw, theta)
        np.testing.assert_allclose(T[:3, 3], [0.6 - 0.5, 0.3 + 0.05, 1.0], atol=1e-12)
        np.testing.assert_allclose(T[:3, 2], [0, -1, 0], atol=1e-12)  # the approach axis (+x) turned with the door
        assert screw_coordinate(screw, GRASP[:3, 3], T[:3, 3]) == pytest.approx(math.pi / 2)

    def test_hinge_normals_pointing_apart_fail_with_the_dot_product(self):
        flipped = _pose([0.6, 0.3, 2.0], _R_IN @ np.diag([-1.0, 1.0, -1.0]))  # z = -x: out of the door
        _bb(g=GRASP, h1=BOTTOM, h2=flipped)
        node = GetMoveAlongArcSubframes(grasp_pose="{g}", hinge_pose_first="{h1}", hinge_pose_second="{h2}")
        assert run(node, FakeBackend())[0] == Status.FAILURE
        assert node.feedback_message.startswith("hinge z axes point apart (dot -1.00)")
        assert "z into the door" in node.feedback_message

    def test_grasp_on_the_hinge_line_fails(self):
        _bb(g=_pose([0.6, 0.3, 1.0]), h1=BOTTOM, h2=TOP)
        node = GetMoveAlongArcSubframes(grasp_pose="{g}", hinge_pose_first="{h1}", hinge_pose_second="{h2}")
        assert run(node, FakeBackend())[0] == Status.FAILURE
        assert "lies on the hinge line" in node.feedback_message

    def test_missing_blackboard_pose_fails(self):
        node = GetMoveAlongArcSubframes(grasp_pose="{nothing}", hinge_pose_first=BOTTOM, hinge_pose_second=TOP)
        assert run(node, FakeBackend())[0] == Status.FAILURE
        assert "'nothing'" in node.feedback_message


class TestGetGraspAndTwistSubframes:
    def test_twist_in_degrees_about_the_pose_z(self):
        pivot = _pose([0.5, 0.0, 1.0])
        _bb(pivot=pivot)
        node = GetGraspAndTwistSubframes(target_grasp_pose="{pivot}", grasp_rotation=90)
        assert run(node, FakeBackend())[0] == Status.SUCCESS
        sub = py_trees.blackboard.Blackboard.get("/grasp_and_twist_subframes")
        np.testing.assert_allclose(sub.axis, [1, 0, 0])  # the pivot's z
        np.testing.assert_allclose(sub.point, [0.5, 0.0, 1.0])
        # grasp = pivot @ Rz(90 deg): its x axis is the pivot's y axis (world +z)
        np.testing.assert_allclose(sub.grasp[:3, 0], [0, 0, 1], atol=1e-12)

    def test_default_grasp_rotation_is_15_degrees(self):
        node = GetGraspAndTwistSubframes(target_grasp_pose=np.eye(4))
        run(node, FakeBackend())
        sub = py_trees.blackboard.Blackboard.get("/grasp_and_twist_subframes")
        assert sub.grasp[0, 0] == pytest.approx(math.cos(math.radians(15.0)))


class TestScrewMotion:
    SUB = Subframes(grasp=np.eye(4), screw_origin=_pose([0, 0, 0]), screw_axis=_pose([0.1, 0, 0]))

    def test_translation_only_is_a_drawer(self):
        screw, theta = screw_motion(self.SUB, None, -0.25)
        assert screw.is_translation and theta == -0.25
        np.testing.assert_allclose(screw.axis, [1, 0, 0])

    def test_rotation_and_translation_make_a_helix(self):
        screw, theta = screw_motion(self.SUB, 90.0, 0.1)
        assert theta == pytest.approx(math.pi / 2)
        assert screw.pitch_m_per_rad == pytest.approx(0.1 / (math.pi / 2))

    def test_nothing_to_do_is_an_error(self):
        with pytest.raises(ValueError, match="non-zero"):
            screw_motion(self.SUB, 0.0, 0.0)

    def test_screw_coordinate(self):
        s = Screw.rotation([0, 0, 1], [1.0, 0.0, 0.0])
        p0 = [2.0, 0.0, 0.3]
        p = [1.0 + math.cos(math.radians(-30)), math.sin(math.radians(-30)), 0.9]  # 30 deg clockwise, higher
        assert screw_coordinate(s, p0, p) == pytest.approx(math.radians(-30))
        assert screw_coordinate(Screw.translation([0, 2, 0]), [0, 0, 0], [5, 0.3, 1]) == pytest.approx(0.3)

    @pytest.mark.parametrize("kw, match", [({"speed": 0}, "speed"), ({"effort_scale": 1.5}, "effort_scale"),
                                           ({"max_force_n": -1}, "max_force_n"), ({"theta": math.inf}, "theta")])
    def test_goal_validation(self, kw, match):
        args = dict(screw=Screw.rotation([0, 0, 1], [0, 0, 0]), theta=1.0)
        args.update(kw)
        with pytest.raises(ValueError, match=match):
            FollowScrewGoal(**args)


def _fake_with_follow_screw():
    b = FakeBackend()
    arm = b.arms["panda"]
    arm.actions = frozenset(arm.actions | {"follow_screw"})
    return b, arm


class TestMoveAlongArc:
    def _sub(self):
        return calculate_move_along_arc_subframes(GRASP, BOTTOM, TOP)

    def test_goal_and_success(self):
        b, arm = _fake_with_follow_screw()
        res = FollowScrewResult(theta_reached=math.radians(58.0), tcp_pose=np.eye(4), max_wrist_force_n=21.5)
        fb = FollowScrewFeedback(theta_reached=math.radians(35.0), progress=0.5, wrist_force_n=12.0, tracking_error_m=0.004)
        arm.script("follow_screw", Script(duration_s=0.5, result=res, feedback=fb))
        _bb(arc=self._sub())
        node = MoveAlongArc(subframes="{arc}", angle=60, max_force_n=45, effort_scale=0.4)
        tree = py_trees.trees.BehaviourTree(root=node)
        tree.setup(backend=b)
        tree.tick()
        b.advance(DT)
        tree.tick()
        assert node.status == Status.RUNNING
        assert node.feedback_message == "35.0 deg of 60.0 deg, wrist 12.0 N"
        status, _ = run(node, b)
        assert status == Status.SUCCESS
        goal = arm.goals[0][1]
        assert isinstance(goal, FollowScrewGoal)
        assert goal.theta == pytest.approx(math.radians(60.0))
        assert goal.speed == pytest.approx(math.radians(15.0))  # default 15 deg/s
        assert goal.max_force_n == 45 and goal.effort_scale == 0.4
        np.testing.assert_allclose(goal.screw.axis, [0, 0, -1])
        np.testing.assert_allclose(goal.screw.point, [0.6, 0.3, 2.0])
        assert node.feedback_message == "reached 58.0 deg of 60.0 deg, max wrist force 21.5 N"

    def test_short_of_min_fraction_fails(self):
        b, arm = _fake_with_follow_screw()
        res = FollowScrewResult(theta_reached=math.radians(-30.0), tcp_pose=np.eye(4), max_wrist_force_n=5.0)
        arm.script("follow_screw", Script(duration_s=0.1, result=res))
        node = MoveAlongArc(subframes=self._sub(), angle=-60)
        assert run(node, b)[0] == Status.FAILURE
        assert node.feedback_message == "reached only -30.0 deg of -60.0 deg (50% < 90%)"

    def test_abort_reason_reaches_the_tree(self):
        b, arm = _fake_with_follow_screw()
        text = "tracking error 0.041 m > 0.04 m at 0.3 deg of 60.0 deg: the mechanism does not follow"
        arm.script("follow_screw", Script(outcome="aborted", duration_s=0.2, text=text))
        node = MoveAlongArc(subframes=self._sub(), angle=60)
        assert run(node, b)[0] == Status.FAILURE
        assert node.feedback_message == f"MoveAlongArc aborted: {text}"

    def test_drawer_translation_goal(self):
        b, arm = _fake_with_follow_screw()
        arm.script("follow_screw", Script(duration_s=0.1, result=FollowScrewResult(-0.2, np.eye(4), 3.0)))
        sub = Subframes(grasp=GRASP, screw_origin=GRASP, screw_axis=GRASP @ _pose([0, 0, 0.1], np.eye(3)))
        node = MoveAlongArc(subframes=sub, translation_m=-0.21, speed_mps=0.08)
        assert run(node, b)[0] == Status.SUCCESS  # 0.2 of 0.21 m = 95 %
        goal = arm.goals[0][1]
        assert goal.screw.is_translation and goal.theta == -0.21 and goal.speed == 0.08
        np.testing.assert_allclose(goal.screw.axis, [1, 0, 0])  # the grasp's z (into the front)
        assert node.feedback_message.startswith("reached -0.200 m of -0.210 m")

    def test_wrong_subframes_type_fails_without_a_goal(self):
        b, arm = _fake_with_follow_screw()
        node = MoveAlongArc(subframes=[1, 2, 3], angle=30)
        assert run(node, b)[0] == Status.FAILURE
        assert "subframes must be Subframes" in node.feedback_message and not arm.goals

    def test_twist_handle_defaults(self):
        b, arm = _fake_with_follow_screw()
        arm.script("follow_screw", Script(duration_s=0.1, result=FollowScrewResult(math.radians(44), np.eye(4), 8.0)))
        sub = Subframes(grasp=GRASP, screw_origin=GRASP, screw_axis=GRASP @ _pose([0, 0, 0.1], np.eye(3)))
        node = TwistHandle(subframes=sub, angle=45)
        assert run(node, b)[0] == Status.SUCCESS
        goal = arm.goals[0][1]
        assert goal.speed == pytest.approx(math.radians(30.0)) and goal.max_tracking_error_m == 0.03
        assert goal.screw.pitch_m_per_rad == 0.0


class TestPerceptionStandIn:
    def test_order_hinge_poses(self):
        a, b = np.eye(4), 2 * np.eye(4)
        assert order_hinge_poses(a, b, "as_is")[0] is a
        assert order_hinge_poses(a, b, "reversed")[0] is b
        rng = np.random.default_rng(3)
        firsts = {id(order_hinge_poses(a, b, "random", rng)[0]) for _ in range(20)}
        assert firsts == {id(a), id(b)}
        with pytest.raises(ValueError, match="hinge_order"):
            order_hinge_poses(a, b, "sideways")

    def test_perturb_pose_statistics(self):
        rng = np.random.default_rng(0)
        outs = np.array([perturb_pose(GRASP, rng, 0.01, 2.0) for _ in range(2000)])
        std = outs[:, :3, 3].std(axis=0)
        np.testing.assert_allclose(std, [0.01] * 3, rtol=0.08)
        tilt = np.degrees(np.arccos(np.clip(outs[:, :3, 2] @ GRASP[:3, 2], -1, 1)))
        assert 1.0 < np.median(tilt) < 2.5  # z tilts by a few degrees; it still points into the door
        assert np.all(outs[:, :3, 2] @ GRASP[:3, 2] > 0.9)

    def _backend_with_door(self, angle=0.0):
        door = SimpleNamespace(
            hinge_poses_in_world=lambda: (BOTTOM, TOP), handle_grasp_in_world=lambda: GRASP,
            handle_pivot_in_world=lambda: _pose([0.55, -0.25, 1.0]), door_angle_deg=angle)
        drawer = SimpleNamespace(drawer_opening_m=0.123)
        ext = SimpleNamespace(door=lambda name=None: door, drawer=lambda name=None: drawer)
        b = FakeBackend()
        b.extensions = {"doors": ext}
        return b

    @pytest.mark.parametrize("order", ["as_is", "reversed"])
    def test_detect_door_writes_the_poses_in_the_asked_order(self, order):
        node = DetectDoorAffordance(hinge_order=order)
        assert DetectDoorAffordance.SIM_ONLY
        assert run(node, self._backend_with_door())[0] == Status.SUCCESS
        bb = py_trees.blackboard.Blackboard
        first, second = bb.get("/hinge_pose_first"), bb.get("/hinge_pose_second")
        np.testing.assert_allclose(first, BOTTOM if order == "as_is" else TOP)
        np.testing.assert_allclose(second, TOP if order == "as_is" else BOTTOM)
        np.testing.assert_allclose(bb.get("/door_grasp_pose"), GRASP)
        # either order gives the same subframes
        sub = calculate_move_along_arc_subframes(bb.get("/door_grasp_pose"), first, second)
        np.testing.assert_allclose(sub.screw_origin, TOP)

    def test_detect_without_doors_fails(self):
        node = DetectDoorAffordance()
        assert run(node, FakeBackend())[0] == Status.FAILURE
        assert "no doors" in node.feedback_message

    def test_conditions(self):
        b = self._backend_with_door(angle=61.2)
        ok = DoorAngleAtLeast(min_angle_deg=60)
        assert run(ok, b)[0] == Status.SUCCESS and ok.feedback_message == "door open 61.2 deg"
        short = DoorAngleAtLeast(min_angle_deg=70)
        assert run(short, b)[0] == Status.FAILURE
        assert short.feedback_message == "door open only 61.2 deg (< 70 deg)"
        d = DrawerOpeningAtLeast(min_opening_m=0.2)
        assert run(d, b)[0] == Status.FAILURE and d.feedback_message == "drawer open only 0.123 m (< 0.2 m)"
