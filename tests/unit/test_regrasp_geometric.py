"""GeometricRegraspPlanner on numbers alone: placements and grasp variants in the state, lazy checks,
pruning, the object's pose carried through the plan, failed steps excluded on re-plans."""

import math

import numpy as np
import pytest

from py_trees_manipulation.geometry.grasps import box_placements
from py_trees_manipulation.planning import ConstraintGraphFactory, NoPlanError
from py_trees_manipulation.planning.geometric import (
    GeometricGoal,
    GeometricModel,
    GeometricRegraspPlanner,
    GeometricStep,
    GraspVariant,
    PlacementCandidate,
    TransitionResult,
)

SIZE = (0.05, 0.05, 0.12)
TABLE_Z = 0.625


def tcp(position, approach, finger):
    z = np.asarray(approach, float)
    y = np.asarray(finger, float)
    T = np.eye(4)
    T[:3, 0], T[:3, 1], T[:3, 2], T[:3, 3] = np.cross(y, z), y, z, position
    return T


def variants(handle, T):
    half = T @ np.diag([-1.0, -1.0, 1.0, 1.0])          # the half turn about the TCP z axis
    return (GraspVariant(handle, handle + "/0", T, 0.05), GraspVariant(handle, handle + "/180", half, 0.05))


def placements(obj="box", xs=(0.5, 0.6, 0.7), faces=("box/-z", "box/+x", "box/-x")):
    out = []
    by_face = {p.face: p for p in box_placements(SIZE, name=obj)}
    for k, x in enumerate(xs):
        for f in faces:
            p = by_face[f]
            src = "current" if (k == 0 and f == "box/-z") else "grid"
            out.append(PlacementCandidate(obj, f"{f} at ({x:.2f}, 0.00)", f, f, "table/top",
                                          p.on_surface([x, 0.0, TABLE_Z]), src, p.height_m))
    return out


def one_arm_model(**kw):
    f = ConstraintGraphFactory()
    f.set_grippers(["g"])
    f.set_objects(["box"], [["box/top", "box/side"]], [["box/faces"]])
    f.environment_contacts(["table/top"])
    top = tcp([0, 0, 0.03], [0, 0, -1], [0, 1, 0])      # from above, fingers along y
    side = tcp([0, 0, 0.0], [0, -1, 0], [1, 0, 0])      # from +y, fingers along x
    pl = placements()
    return GeometricModel(f, {"box/top": variants("box/top", top), "box/side": variants("box/side", side)},
                          {"box": pl}, start_poses={"box": pl[0].pose}, **kw)


class Recorder:
    """A checker: refuses what ``refuse(query)`` returns a reason for, records every query."""

    def __init__(self, refuse=lambda q: None, cause="reach"):
        self.refuse = refuse
        self.cause = cause
        self.queries = []

    def __call__(self, q):
        self.queries.append(q)
        why = self.refuse(q)
        if why:
            return TransitionResult(False, why, "pregrasp", self.cause, ik_s=0.001, collision_s=0.002)
        return TransitionResult(True, configurations={"pregrasp": (0.0,) * 7}, ik_s=0.001, collision_s=0.002)


def test_flip_goal_is_a_placement_on_a_side_face_and_the_state_carries_it():
    check = Recorder()
    planner = GeometricRegraspPlanner(one_arm_model(), check)
    start = planner.start_state({"g": None})
    assert start.locations == (0,)      # the "current" placement
    plan = planner.plan(start, GeometricGoal({"g": None}, {"box": ["+x", "-x"]}))
    # a grasp and a release: the box leaves the start state ("free" again) on another face
    assert [s.direction for s in plan.steps] == ["grasp", "release"]
    assert plan.start == plan.goal == (None,)
    grasp, release = plan.steps
    assert isinstance(grasp, GeometricStep) and grasp.placement.source == "current"
    assert release.placement.face in ("box/+x", "box/-x")
    # the cheapest such placement is where it stands: no move
    np.testing.assert_allclose(release.placement.pose[:2, 3], [0.5, 0.0])
    # the object rests on the +x or -x face: its z axis is horizontal
    assert abs(release.object_pose[2, 2]) < 1e-9
    assert release.object_pose[2, 3] == pytest.approx(TABLE_Z + 0.025)
    # the release uses the variant the grasp took
    assert release.variant == grasp.variant
    assert plan.checks == 2 == len(check.queries)
    assert [q.kind for q in check.queries] == ["grasp", "release"]
    assert plan.ik_time_s == pytest.approx(0.002) and plan.collision_time_s == pytest.approx(0.004)
    assert plan.goal_state.locations[0] >= 0


def test_pruned_edges_are_skipped_and_the_search_goes_on_to_another_placement():
    # every release at x = 0.5 is out of reach: the plan puts the box down at the next grid point
    check = Recorder(lambda q: "out of reach" if q.kind == "release" and q.object_pose[0, 3] < 0.55 else None)
    planner = GeometricRegraspPlanner(one_arm_model(), check)
    plan = planner.plan(planner.start_state({"g": None}), GeometricGoal(None, {"box": ["box/+x"]}))
    rel = plan.steps[-1]
    assert rel.placement.name == "box/+x at (0.60, 0.00)"
    assert len(plan.pruned) >= 1 and all("out of reach" in p.reason for p in plan.pruned)
    assert all("(0.50, 0.00)" in p.label for p in plan.pruned)
    # a checked edge is checked once, whatever the candidate plans
    keys = [(q.kind, q.handle, q.variant.name, q.object_pose[0, 3], q.placement.face) for q in check.queries]
    assert len(keys) == len(set(keys))


def test_grasp_goal_on_another_handle_puts_the_object_down_and_takes_it_again_from_there():
    model = one_arm_model()
    check = Recorder(lambda q: "hits the table" if q.kind == "grasp" and q.handle == "box/side"
                     and q.object_pose[0, 3] < 0.55 else None)
    planner = GeometricRegraspPlanner(model, check)
    start = planner.start_state({"g": "box/top"})
    plan = planner.plan(start, {"g": "box/side"})
    assert [s.transition for s in plan.steps] == ["g < box/top | 0-0", "g > box/side | f"]
    release, grasp = plan.steps
    # the grasp is taken where the release put the box: its pose is carried through the plan
    assert grasp.placement.name == release.placement.name
    np.testing.assert_allclose(grasp.object_pose, release.object_pose)
    assert release.placement.pose[0, 3] >= 0.6
    # upright (its face now) is preferred over lying on a side
    assert release.placement.face == "box/-z"


def test_support_failures_prune_the_grasp_and_face_everywhere():
    # the hand would hit the table whenever the box is put on +x with the side grasp (any position)
    check = Recorder(lambda q: "panda_hand would hit table" if q.kind == "release" and q.handle == "box/side"
                     and q.placement.face == "box/+x" else None, cause="support")
    planner = GeometricRegraspPlanner(one_arm_model(), check)
    start = planner.start_state({"g": "box/side"}, variants={"g": 0})
    plan = planner.plan(start, GeometricGoal(None, {"box": ["box/+x"]}))
    # one refusal per variant, not one per position: 3 positions x 2 variants would be 6
    refused = [q for q in check.queries if q.kind == "release" and q.handle == "box/side"
               and q.placement.face == "box/+x"]
    assert len(refused) == 1
    assert plan.steps[-1].placement.face == "box/+x"
    assert plan.steps[-1].handle == "box/top"          # put down, taken from above, put on +x


def test_no_plan_names_the_start_the_goal_and_every_pruned_transition_with_its_reason():
    check = Recorder(lambda q: f"target {q.object_pose[0, 3]:.2f} is out of reach" if q.kind == "release" else None)
    planner = GeometricRegraspPlanner(one_arm_model(gripper_opening_m={"g": 0.08}), check)
    with pytest.raises(NoPlanError) as e:
        planner.plan(planner.start_state({"g": "box/top"}), {"g": "box/side"})
    text = str(e.value)
    assert text.startswith("no regrasp plan from 'g grasps box/top [box/top/0]' to {'g': 'box/side'}")
    assert "transitions pruned" in text
    assert "g < box/top | 0-0 [box/top/0] onto box/-z at (0.50, 0.00): pregrasp: target 0.50 is out of reach" in text


def test_failed_step_is_excluded_and_the_other_placements_stay_open():
    planner = GeometricRegraspPlanner(one_arm_model(), Recorder())
    start = planner.start_state({"g": "box/top"})
    first = planner.plan(start, GeometricGoal(None, {"box": ["box/-z"]}))
    put = first.steps[0]
    assert put.placement.name == "box/-z at (0.50, 0.00)"
    # executing it failed: a new planner (re-plan from the sensed state) excludes it, nothing else
    failed = GeometricRegraspPlanner(one_arm_model(), Recorder())
    failed.mark_step_failed(put)
    again = GeometricRegraspPlanner(one_arm_model(), Recorder())
    again.add_failed_steps(failed.failed_steps())
    second = again.plan(again.start_state({"g": "box/top"}), GeometricGoal(None, {"box": ["box/-z"]}))
    assert second.steps[0].placement.name == "box/-z at (0.60, 0.00)"
    assert second.steps[0].variant == put.variant


def test_unknown_object_or_face_in_the_goal_is_a_clear_error():
    planner = GeometricRegraspPlanner(one_arm_model(), Recorder())
    start = planner.start_state({"g": None})
    with pytest.raises(ValueError, match="unknown object 'cup'"):
        planner.plan(start, GeometricGoal(None, {"cup": ["+x"]}))
    with pytest.raises(ValueError, match=r"has no placement on \['box/\+q'\]; its faces are"):
        planner.plan(start, GeometricGoal(None, {"box": ["+q"]}))
    with pytest.raises(ValueError, match="unknown handle 'box/back'"):
        planner.plan(start, {"g": "box/back"})


def test_too_wide_grasps_are_left_out_and_said_so():
    model = one_arm_model(gripper_opening_m={"g": 0.04})   # narrower than the 5 cm box
    planner = GeometricRegraspPlanner(model, Recorder())
    with pytest.raises(NoPlanError, match=r"grasps wider than the gripper left out \(g opens 0.040 m\): box/top/0"):
        planner.plan(planner.start_state({"g": None}), {"g": "box/top"})


def two_arm_model(handover_pose=True):
    f = ConstraintGraphFactory()
    f.set_grippers(["left", "right"])
    f.set_objects(["bar"], [["bar/l", "bar/r"]], [["bar/faces"]])
    f.environment_contacts(["table/top"])
    f.set_rules([{"grippers": ["left", "right"], "handles": ["", ""], "link": False},
                 {"grippers": [".*"], "handles": [".*"], "link": True}])
    l = tcp([-0.07, 0, 0], [0, 0, -1], [0, 1, 0])
    r = tcp([0.07, 0, 0], [0, 0, -1], [0, 1, 0])
    P = np.eye(4)
    P[:3, 3] = [0.4, 0, 0.645]
    pl = [PlacementCandidate("bar", "bar/-z at (0.40, 0.00)", "bar/-z", "bar/-z", "table/top", P, "description", 0.02)]
    H = np.eye(4)
    H[:3, 3] = [0.65, 0, 0.85]
    return GeometricModel(f, {"bar/l": variants("bar/l", l), "bar/r": variants("bar/r", r)}, {"bar": pl},
                          start_poses={"bar": P}, handover_poses={"bar": H if handover_pose else None})


def test_handover_is_checked_at_the_handover_pose_with_the_holder():
    check = Recorder()
    planner = GeometricRegraspPlanner(two_arm_model(), check)
    plan = planner.plan(planner.start_state({"left": "bar/l"}), {"left": None, "right": "bar/r"})
    assert [s.kind for s in plan.steps] == ["handover", "handover"]
    q_grasp, q_release = check.queries
    assert q_grasp.kind == "handover_grasp" and q_release.kind == "handover_release"
    np.testing.assert_allclose(q_grasp.object_pose[:3, 3], [0.65, 0, 0.85])
    assert q_grasp.partner[0] == "left" and q_release.partner[0] == "right"
    # a refused handover: the rule forbids putting it down, so nothing is left
    refuse = Recorder(lambda q: "the hands collide" if q.kind == "handover_grasp" else None, cause="collision")
    planner = GeometricRegraspPlanner(two_arm_model(), refuse)
    with pytest.raises(NoPlanError, match="handover_grasp|the hands collide"):
        planner.plan(planner.start_state({"left": "bar/l"}), {"left": None, "right": "bar/r"})


def test_without_a_handover_pose_the_held_object_is_where_it_was_lifted():
    check = Recorder()
    planner = GeometricRegraspPlanner(two_arm_model(handover_pose=False), check)
    # the rule forbids both hands empty: start held by the left hand
    start = planner.start_state({"left": "bar/l"})
    plan = planner.plan(start, {"right": "bar/r", "left": None})
    hq = [q for q in check.queries if q.kind == "handover_grasp"][0]
    np.testing.assert_allclose(hq.object_pose[:3, 3], [0.4, 0, 0.645])   # held at the start: its pose now
    assert plan.steps[0].kind == "handover"


def test_plans_are_the_symbolic_plans_when_every_check_passes():
    # with everything feasible the grasp changes are those of the symbolic planner
    from py_trees_manipulation.planning import RegraspPlanner

    model = one_arm_model()
    sym = RegraspPlanner(model.factory).plan((0,), (1,))
    geo = GeometricRegraspPlanner(model, Recorder())
    plan = geo.plan(geo.start_state({"g": "box/top"}), (1,))
    assert plan.transition_names == sym.transition_names
    assert math.isclose(plan.cost, sym.cost, abs_tol=0.5)
