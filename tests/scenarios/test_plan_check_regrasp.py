"""``ptm validate --plan`` checks a ``PlanRegrasp`` that comes after a grasp the dry run followed
(issue 33 item 1): the plan is made from the grasp state sensed in the collision world as the run
senses it from poses (the TCP at a handle, the fingers closed to its width), not skipped."""

import os

import pytest

from py_trees_manipulation.behaviors import regrasp_plan
from py_trees_manipulation.trees.loader import load_task
from py_trees_manipulation.trees.plan_check import plan_check

EXAMPLES = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", "examples"))


@pytest.mark.parametrize("example, start", [
    ("regrasp", {"panda/hand": "box/top"}),                      # taken from above, lifted
    ("handover", {"left/hand": "box/left", "right/hand": None}),  # the left hand holds it (no grasp chosen)
])
def test_a_regrasp_after_the_followed_grasp_is_planned_from_the_grasp_held(monkeypatch, example, start):
    planned = []
    plan_in_world = regrasp_plan.plan_in_world

    def spy(world, cfg, state, goal, faces, **kw):
        planned.append(dict(cfg.factory.names_from_grasps(state)))
        return plan_in_world(world, cfg, state, goal, faces, **kw)

    monkeypatch.setattr(regrasp_plan, "plan_in_world", spy)
    assert plan_check(load_task(os.path.join(EXAMPLES, f"{example}.yaml"))) == []
    assert planned == [start]


@pytest.mark.extended   # its base search runs to its 30 s cap: pytest -m extended (.ci/run)
def test_a_regrasp_the_held_grasp_cannot_reach_is_refused_before_moving():
    """The regrasp example with its goal handle (box/side) 1.2 m off the box, out of reach from every
    placement: the plan from the held top grasp is refused at PlanRegrasp's line, where before the
    check was skipped once the box was in the hand."""
    task = load_task(os.path.join(EXAMPLES, "regrasp.yaml"),
                     ["blackboard.regrasp.objects.box.handles.box/side.pose.position=[0, 1.2, 0]"])
    problems = plan_check(task)
    assert [p.node_type for p in problems] == ["PlanRegrasp"], problems
    with open(os.path.join(EXAMPLES, "regrasp.yaml")) as f:
        line = next(i for i, text in enumerate(f, 1) if "PlanRegrasp:" in text)
    assert problems[0].loc.line == line
    assert "box/side" in problems[0].message
