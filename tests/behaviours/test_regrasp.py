"""PlanRegrasp, GraspStateIs and ExecuteRegraspPlan on the scripted fake backend (no simulator)."""

import numpy as np
import py_trees
import pytest
from py_trees.common import Status

from py_trees_manipulation.behaviors.regrasp import (ExecuteRegraspPlan, GraspStateIs, PlanRegrasp,
                                                      RegraspConfig)
from py_trees_manipulation.geometry.poses import pose_from_xyz_rpy
from py_trees_manipulation.msgs.motion import Pr2GripperCommandResult
from py_trees_manipulation.testing import FakeBackend, Script
from py_trees_manipulation.testing.fake_backend import ARM_ACTIONS, GRIPPER_ACTIONS, FakeResource

DT = 1.0 / 30.0
BB = py_trees.blackboard.Blackboard

ONE_PANDA = {
    "grippers": {"panda/hand": "panda"},
    "objects": {"box": {
        "handles": {
            "box/top": {"pose": {"position": [0, 0, 0.03], "rpy_deg": [180, 0, 90]}},
            "box/side": {"pose": {"position": [0, 0, 0.0], "rpy_deg": [90, 90, 0]}},
            "box/front": {"pose": {"position": [0, 0, 0.0], "rpy_deg": [0, 90, 0]}},
        },
        "contacts": {"box/bottom": [{"position": [0.5, 0.1, 0.686]}]},
    }},
    "environment_contacts": ["table/top"],
}


def two_pandas(rule: bool = True, handover_pose=None) -> dict:
    cfg = {
        "grippers": {"left/hand": "left", "right/hand": "right"},
        "objects": {"box": {
            "handles": {"box/left": {"pose": {"position": [-0.07, 0, 0], "rpy_deg": [180, 0, 0]}},
                        "box/right": {"pose": {"position": [0.07, 0, 0], "rpy_deg": [180, 0, 0]}}},
            "contacts": {"box/bottom": [{"position": [0.38, 0, 0.646]}]},
        }},
        "environment_contacts": ["table/top"],
    }
    if handover_pose is not None:
        cfg["objects"]["box"]["handover_pose"] = handover_pose
    if rule:
        cfg["rules"] = [{"grippers": ["left/hand", "right/hand"], "handles": ["", ""], "link": False},
                        {"grippers": [".*"], "handles": [".*"], "link": True}]
    return cfg


@pytest.fixture(autouse=True)
def clean_blackboard():
    BB.clear()
    yield
    BB.clear()


def run(behaviour, backend, ticks=2000, on_tick=None):
    tree = py_trees.trees.BehaviourTree(root=behaviour)
    tree.setup(backend=backend)
    for i in range(ticks):
        tree.tick()
        if on_tick is not None:
            on_tick()
        if behaviour.status != Status.RUNNING:
            return behaviour.status, i + 1
        backend.advance(DT)
    return behaviour.status, ticks


# ---------------------------------------------------------------------------------------- config
def test_config_parses_poses_and_builds_the_hpp_factory():
    cfg = RegraspConfig.from_mapping(ONE_PANDA)
    assert cfg.grippers == {"panda/hand": ("panda", "panda")}
    assert cfg.factory.handles == ("box/top", "box/side", "box/front")
    side = cfg.handles["box/side"].grasp_pose
    # rpy (90, 90, 0) deg: approach (TCP z) along -y of the box, fingers close along its x
    np.testing.assert_allclose(side[:3, 2], [0, -1, 0], atol=1e-12)
    np.testing.assert_allclose(np.abs(side[:3, 1]), [1, 0, 0], atol=1e-12)
    np.testing.assert_allclose(cfg.objects["box"].placements["box/bottom"][0][:3, 3], [0.5, 0.1, 0.686])
    assert cfg.handles["box/top"].approach_m == 0.10 and cfg.handles["box/top"].max_effort_n == 40.0


def test_config_errors_name_the_entry():
    bad = {**ONE_PANDA, "objects": {"box": {"handles": {"box/top": {"position": [0, 0, 0]}}}}}
    with pytest.raises(ValueError, match=r"regrasp\.objects\.box\.handles\.box/top: needs 'pose'"):
        RegraspConfig.from_mapping(bad)
    with pytest.raises(ValueError, match=r"regrasp: unknown key\(s\) \['handles'\]"):
        RegraspConfig.from_mapping({**ONE_PANDA, "handles": {}})


# ---------------------------------------------------------------------------------------- PlanRegrasp
def test_plan_top_to_side_passes_through_the_free_state():
    BB.set("/regrasp", ONE_PANDA)
    BB.set("/grasp_state", {"panda/hand": "box/top"})
    node = PlanRegrasp(goal={"panda/hand": "box/side"})
    status, ticks = run(node, FakeBackend())
    assert status == Status.SUCCESS and ticks == 1
    plan = BB.get("/regrasp_plan")
    # no swap edge in the constraint graph: release (place) then grasp = 2 grasp changes
    assert [s["transition"] for s in plan["steps"]] == ["panda/hand < box/top | 0-0", "panda/hand > box/side | f"]
    assert [s["kind"] for s in plan["steps"]] == ["release", "grasp"]
    assert plan["start"] == [0] and plan["goal"] == [1] and plan["cost"] == 2.0
    assert plan["goal_spec"] == {"panda/hand": "box/side"}
    assert BB.get("/metrics/planned_grasp_changes") == 2
    assert 0.0 < BB.get("/metrics/plan_time_ms") < 1000.0
    assert node.feedback_message.startswith("2 grasp changes in ")


def test_plan_time_adds_up_over_plans_and_already_there_is_zero_changes():
    BB.set("/regrasp", ONE_PANDA)
    BB.set("/grasp_state", {"panda/hand": "box/side"})
    run(PlanRegrasp(goal={"panda/hand": "box/side"}), FakeBackend())
    first = BB.get("/metrics/plan_time_ms")
    assert BB.get("/regrasp_plan")["steps"] == []
    assert BB.get("/metrics/planned_grasp_changes") == 0
    run(PlanRegrasp(goal="panda/hand grasps box/front"), FakeBackend())
    assert BB.get("/metrics/plan_time_ms") > first
    assert BB.get("/metrics/planned_grasp_changes") == 2


def test_handover_plan_with_the_never_both_empty_rule():
    BB.set("/regrasp", two_pandas())
    node = PlanRegrasp(goal={"left/hand": "", "right/hand": "box/right"}, current={"left/hand": "box/left"})
    assert run(node, FakeBackend())[0] == Status.SUCCESS
    steps = BB.get("/regrasp_plan")["steps"]
    assert [s["transition"] for s in steps] == ["right/hand > box/right | 0-0", "left/hand < box/left | 0-0:1-1"]
    assert [s["kind"] for s in steps] == ["handover", "handover"]
    assert BB.get("/grasp_state") == {"left/hand": "box/left", "right/hand": None}


def test_no_plan_fails_with_the_reason():
    BB.set("/regrasp", two_pandas())
    node = PlanRegrasp(goal={"left/hand": "", "right/hand": ""}, current={"left/hand": "box/left"})
    assert run(node, FakeBackend())[0] == Status.FAILURE
    assert "no regrasp plan from 'left/hand grasps box/left'" in node.feedback_message
    assert "goal state 'free' is refused by the rules" in node.feedback_message
    assert "/regrasp_plan" not in BB.storage


def test_refused_start_and_missing_description_fail():
    BB.set("/regrasp", two_pandas())
    node = PlanRegrasp(goal={"right/hand": "box/right"})   # start: nothing held, refused by the rule
    assert run(node, FakeBackend())[0] == Status.FAILURE
    assert "start state 'free' is refused by the rules" in node.feedback_message
    BB.clear()
    node = PlanRegrasp(goal={"right/hand": "box/right"})
    assert run(node, FakeBackend())[0] == Status.FAILURE
    assert "blackboard key '/regrasp' is empty" in node.feedback_message


def test_unknown_handle_in_goal_fails():
    BB.set("/regrasp", ONE_PANDA)
    node = PlanRegrasp(goal={"panda/hand": "box/back"})
    assert run(node, FakeBackend())[0] == Status.FAILURE
    assert "unknown handle 'box/back'" in node.feedback_message


# ---------------------------------------------------------------------------------------- GraspStateIs
@pytest.mark.parametrize("expected, ok", [
    ({"panda/hand": "box/top"}, True),
    ({"panda/hand": "box/side"}, False),
    ({"panda/hand": ""}, False),
    ("panda/hand grasps box/top", True),
    ("free", False),
])
def test_grasp_state_is(expected, ok):
    BB.set("/regrasp", ONE_PANDA)
    BB.set("/grasp_state", {"panda/hand": "box/top"})
    node = GraspStateIs(expected=expected)
    status, ticks = run(node, FakeBackend())
    assert ticks == 1
    assert status == (Status.SUCCESS if ok else Status.FAILURE)
    assert "grasp state 'panda/hand grasps box/top'" in node.feedback_message


def test_grasp_state_is_partial_and_empty_state():
    BB.set("/regrasp", two_pandas(rule=False))
    # no grasp_state on the blackboard and no simulator: nothing is held
    assert run(GraspStateIs(expected={"right/hand": None}), FakeBackend())[0] == Status.SUCCESS
    BB.set("/grasp_state", {"left/hand": "box/left", "right/hand": None})
    assert run(GraspStateIs(expected={"left/hand": "box/left"}), FakeBackend())[0] == Status.SUCCESS
    assert run(GraspStateIs(expected={"left/hand": "box/left", "right/hand": "box/right"}),
               FakeBackend())[0] == Status.FAILURE


# ---------------------------------------------------------------------------------------- ExecuteRegraspPlan
def fake_with(*robots):
    b = FakeBackend(name=robots[0])
    for r in robots[1:]:
        b.arms[r] = FakeResource(b, r, ARM_ACTIONS)
        b.grippers[r] = FakeResource(b, r, GRIPPER_ACTIONS)
    b.world.poses["box"] = pose_from_xyz_rpy([0.5, 0.0, 0.686])
    return b


def test_execute_expands_place_then_side_grasp_with_poses_from_the_description():
    BB.set("/regrasp", ONE_PANDA)
    BB.set("/grasp_state", {"panda/hand": "box/top"})
    b = fake_with("panda")
    run(PlanRegrasp(goal={"panda/hand": "box/side"}), b)
    node = ExecuteRegraspPlan(plan="{regrasp_plan}")
    status, _ = run(node, b)
    assert status == Status.SUCCESS, node.feedback_message
    arm = [(a, g.pose[:3, 3].round(4).tolist()) for a, g in b.arms["panda"].goals]
    grip = [g.position for _, g in b.grippers["panda"].goals]
    # fake TCP at (0.3, 0, 0.5), box at (0.5, 0, 0.686): the TCP stays 0.2 m behind and 0.186 m
    # below the box; placement (0.5, 0.1, 0.686) -> TCP (0.3, 0.1, 0.5), preplace 0.1 m above
    assert arm[0] == ("move_to_pose", [0.3, 0.1, 0.6])
    assert arm[1][0] == "move_cartesian"                          # lower (delta from the fake TCP)
    assert arm[2] == ("move_cartesian", [0.3, 0.1, 0.4])          # retreat 0.1 m back along TCP z (up)
    # side grasp: TCP at the box centre, approach along -y, pregrasp 0.1 m before it
    assert arm[3] == ("move_to_pose", [0.5, 0.1, 0.686])
    assert arm[4] == ("move_cartesian", [0.5, 0.0, 0.686])
    assert arm[5][0] == "move_cartesian"                          # lift
    np.testing.assert_allclose(b.arms["panda"].goals[4][1].pose[:3, 2], [0, -1, 0], atol=1e-9)
    assert grip == [0.08, 0.08, 0.0]                              # release, open for the grasp, close
    assert BB.get("/grasp_state") == {"panda/hand": "box/side"}
    assert BB.get("/metrics/grasp_changes") == 2
    assert BB.get("/metrics/goal_reached") is True
    assert "/metrics/replans" not in BB.storage
    assert node.feedback_message == "goal reached: 'panda/hand grasps box/side' after 2 steps"


def test_execute_handover_presents_the_box_then_receiver_grasps_and_giver_retreats():
    BB.set("/regrasp", two_pandas(handover_pose={"position": [0.65, 0, 0.85]}))
    BB.set("/grasp_state", {"left/hand": "box/left"})
    b = fake_with("left", "right")
    run(PlanRegrasp(goal={"left/hand": "", "right/hand": "box/right"}), b)
    node = ExecuteRegraspPlan(plan="{regrasp_plan}")
    assert run(node, b)[0] == Status.SUCCESS, node.feedback_message
    left = [(a, g.pose[:3, 3].round(4).tolist()) for a, g in b.arms["left"].goals]
    right = [(a, g.pose[:3, 3].round(4).tolist()) for a, g in b.arms["right"].goals]
    # present: box to (0.65, 0, 0.85) keeping the (fake) TCP-box offset (-0.2, 0, -0.186)
    assert left[0] == ("move_to_pose", [0.45, 0.0, 0.664])
    # the receiver's handle is 0.07 m along the box's x from the presented pose; pregrasp 0.1 m above
    assert right == [("move_to_pose", [0.72, 0.0, 0.95]), ("move_cartesian", [0.72, 0.0, 0.85])]
    # the giver opens and backs off 0.1 m along its TCP z (the fake TCP z is world +z)
    assert left[1] == ("move_cartesian", [0.3, 0.0, 0.4])
    assert [g.position for _, g in b.grippers["left"].goals] == [0.08]
    assert BB.get("/grasp_state") == {"left/hand": None, "right/hand": "box/right"}
    assert BB.get("/metrics/grasp_changes") == 2 and BB.get("/metrics/goal_reached") is True


def test_failed_step_is_marked_infeasible_and_replanned_once():
    BB.set("/regrasp", two_pandas(rule=False))
    BB.set("/grasp_state", {"left/hand": "box/left"})
    b = fake_with("left", "right")
    closes = []

    def close_result(goal):
        if goal.position == 0.0:
            closes.append(goal)
            if len(closes) == 1:  # the first close of the right hand meets nothing
                return Pr2GripperCommandResult(position=0.0, effort=0.0, stalled=False, reached_goal=True)
            return Pr2GripperCommandResult(position=0.02, effort=40.0, stalled=True, reached_goal=False)
        return Pr2GripperCommandResult(position=goal.position, effort=0.0, stalled=False, reached_goal=True)

    b.grippers["right"].script("gripper_action", Script(duration_s=0.1, result=close_result))
    run(PlanRegrasp(goal={"left/hand": None, "right/hand": "box/right"}), b)
    first = [s["transition"] for s in BB.get("/regrasp_plan")["steps"]]
    # without the rule, place-then-pick and the handover both cost 2; A* returns place-then-pick
    assert first == ["left/hand < box/left | 0-0", "right/hand > box/right | f"]
    node = ExecuteRegraspPlan(plan="{regrasp_plan}")
    status, _ = run(node, b)
    assert status == Status.SUCCESS, node.feedback_message
    # the right hand's grasp from the table fails (closes on nothing): 'f -> 1-1' is marked
    # infeasible and the re-plan from 'free' is: left grasps again, hands over, lets go (3 steps)
    assert BB.get("/metrics/replans") == 1
    assert BB.get("/metrics/grasp_changes") == 1 + 3
    assert len(closes) == 2
    assert [a for a, _ in b.arms["left"].goals] == [
        "move_to_pose", "move_cartesian", "move_cartesian",      # place: preplace, lower, retreat
        "move_to_pose", "move_cartesian", "move_cartesian",      # grasp again: pregrasp, approach, lift
        "move_cartesian"]                                        # handover release: retreat
    # preplace: placement (0.38, 0, 0.646) keeping the fake TCP-box offset (-0.2, 0, -0.186), 0.1 m up
    np.testing.assert_allclose(b.arms["left"].goals[0][1].pose[:3, 3], [0.18, 0.0, 0.56], atol=1e-9)
    assert BB.get("/grasp_state") == {"left/hand": None, "right/hand": "box/right"}
    assert BB.get("/metrics/goal_reached") is True


def test_replan_budget_exhausted_fails_with_the_step_and_reason():
    BB.set("/regrasp", ONE_PANDA)
    BB.set("/grasp_state", {"panda/hand": None})
    b = fake_with("panda")
    b.arms["panda"].script("move_to_pose", Script(outcome="aborted", duration_s=0.1, text="out of reach: 0.05 m"))
    run(PlanRegrasp(goal={"panda/hand": "box/side"}), b)
    node = ExecuteRegraspPlan(plan="{regrasp_plan}", replans=0)
    assert run(node, b)[0] == Status.FAILURE
    assert node.feedback_message == ("step 1/1 'panda/hand > box/side | f' (grasp) failed: panda/hand > box/side: "
                                     "pregrasp: move_to_pose aborted: out of reach: 0.05 m (box is now at "
                                     "(0.500, 0.000, 0.686), tilted 0 deg from upright)")   # where the object is now
    assert BB.get("/metrics/goal_reached") is False


# ---------------------------------------------------------------------------------------- geometry inputs
class _Scene:
    """A scene's objects, as RegraspConfig reads them (duck-typed like scene.spec.SceneSpec)."""

    def __init__(self):
        from py_trees_manipulation.scene.spec import parse_scene

        self.spec = parse_scene({"objects": [{"name": "box", "primitive": {"shape": "box", "size": [0.05, 0.05, 0.12]},
                                              "pose": {"position": [0.5, 0, 0.686]}}]})
        self.objects = self.spec.objects


def test_handles_default_from_the_objects_grasp_set():
    scene = _Scene()
    cfg = RegraspConfig.from_mapping({"grippers": {"panda/hand": "panda"}, "objects": {"box": {}},
                                      "environment_contacts": ["table/top"]}, scene=scene)
    # every face of the box, four yaws each; widths across the fingers from the box's size
    assert cfg.factory.handles == ("box/+z", "box/-z", "box/+x", "box/-x", "box/+y", "box/-y")
    variants = cfg.grasp_variants()
    # plus, along the 12 cm side of the face, the grasps shifted until the TCP is 25 mm from its
    # edges (0.12 / 2 - 0.025 = 35 mm, floored to the millimetre below the float's 34.99..; none along
    # the 5 cm side: 0.05 / 2 - 0.025 = 0)
    assert [v.name for v in variants["box/+x"]] == ["box/+x/0", "box/+x/90", "box/+x/180", "box/+x/270",
                                                    "box/+x/0@+34mm", "box/+x/0@-34mm",
                                                    "box/+x/180@+34mm", "box/+x/180@-34mm"]
    assert [round(v.width_m, 3) for v in variants["box/+x"]] == [0.05, 0.12, 0.05, 0.12, 0.05, 0.05, 0.05, 0.05]
    shifted = {v.name: v.pose for v in variants["box/+x"]}
    np.testing.assert_allclose(abs(shifted["box/+x/0@+34mm"][2, 3] - shifted["box/+x/0"][2, 3]), 0.035, atol=1.001e-3)
    # a list picks handles of the grasp set (the PR2 flip-box class: four side handles)
    cfg = RegraspConfig.from_mapping({"grippers": {"panda/hand": "panda"},
                                      "objects": {"box": {"handles": ["box/+x", "box/-x", "box/+y", "box/-y"]}}},
                                     scene=scene)
    assert cfg.factory.handles == ("box/+x", "box/-x", "box/+y", "box/-y")
    # a declared handle has its pose and the half turn about the approach axis
    cfg = RegraspConfig.from_mapping(ONE_PANDA, scene=scene)
    top = cfg.grasp_variants()["box/top"]
    assert [v.name for v in top] == ["box/top/0", "box/top/180"]
    np.testing.assert_allclose(top[1].pose[:3, 2], top[0].pose[:3, 2])
    np.testing.assert_allclose(top[1].pose[:3, 1], -top[0].pose[:3, 1], atol=1e-12)
    assert top[0].width_m == pytest.approx(0.05)


def test_bad_geometry_inputs_name_the_entry():
    scene = _Scene()
    base = {"grippers": {"panda/hand": "panda"}, "environment_contacts": ["table/top"]}
    with pytest.raises(ValueError, match=r"regrasp\.objects\.box\.handles: 'box' has no handle 'box/top' in its grasp "
                                         r"set; it has \['box/\+x'"):
        RegraspConfig.from_mapping({**base, "objects": {"box": {"handles": ["box/top"]}}}, scene=scene)
    with pytest.raises(ValueError, match=r"regrasp\.objects\.cup: needs 'handles' \(the scene has no object 'cup'"):
        RegraspConfig.from_mapping({**base, "objects": {"cup": {}}}, scene=scene)
    bad_pose = {"box": {"handles": {"box/top": {"pose": {"position": [0, 0, 0.03], "orientation": [0, 0, 0, 0]}}}}}
    with pytest.raises(ValueError, match=r"regrasp\.objects\.box\.handles\.box/top\.pose: not a valid pose"):
        RegraspConfig.from_mapping({**base, "objects": bad_pose})
    bad_place = {"box": {"handles": {"box/top": {"pose": {"position": [0, 0, 0.03]}}},
                         "contacts": {"box/bottom": [{"position": [0.5, 0.1]}]}}}
    with pytest.raises(ValueError, match=r"regrasp\.objects\.box\.contacts\.box/bottom\[0\]: not a valid pose"):
        RegraspConfig.from_mapping({**base, "objects": bad_place})
    bad_place["box"]["contacts"]["box/bottom"] = [{"position": [0.5, 0.1, 0.686], "rpy_deg": [0, float("nan"), 0]}]
    with pytest.raises(ValueError, match=r"contacts\.box/bottom\[0\]: not a valid pose: .*not finite"):
        RegraspConfig.from_mapping({**base, "objects": bad_place})
    with pytest.raises(ValueError, match=r"regrasp\.placements: unknown key\(s\) \['grid'\]"):
        RegraspConfig.from_mapping({**ONE_PANDA, "placements": {"grid": 0.1}})


def test_placement_goal_needs_geometry_and_names_unknown_objects():
    BB.set("/regrasp", ONE_PANDA)
    node = PlanRegrasp(goal={"panda/hand": ""}, placement_goal={"box": ["+x"]})
    assert run(node, FakeBackend())[0] == Status.FAILURE
    assert "placement_goal needs geometry" in node.feedback_message
    node = PlanRegrasp(goal={"panda/hand": ""}, placement_goal={"cup": ["+x"]})
    assert run(node, FakeBackend())[0] == Status.FAILURE
    assert "placement_goal: unknown object 'cup'; the regrasp objects are ['box']" in node.feedback_message
    node = PlanRegrasp(goal={"panda/hand": "box/top"}, geometry="on")
    assert run(node, FakeBackend())[0] == Status.FAILURE
    assert "geometry: on needs a backend with a collision world" in node.feedback_message
