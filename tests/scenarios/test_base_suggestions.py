"""Base suggestions checked by the whole-task test (issue 33 item 2): a refusal for reach names a base
pose only when the whole task passes ``ptm validate --plan`` from it, and ``base_pose: auto`` chooses
by the same test. Each test applies the suggested base, as a user would with the printed ``--set``,
and validates (and where said, runs) again."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

from py_trees_manipulation.trees.loader import load_task
from py_trees_manipulation.trees.plan_check import plan_check, whole_task_test
from py_trees_manipulation.trees.runner import RunOptions, run_task

EXAMPLES = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
SUGGESTION = re.compile(r"--set '(scene\.robots\.\d+\.base_pose=\{[^']*\})'")


def suggested(text: str) -> str:
    """The ``--set`` override a refusal suggests (fails the test when it names none)."""
    m = SUGGESTION.search(text)
    assert m, f"no base suggested: {text}"
    return m.group(1)


def test_whole_task_test_sees_a_grasp_the_reach_targets_do_not():
    """The test is the dry run itself: pick_from_clutter with its place moved out of reach fails it
    (ChooseGrasp refuses every grasp), and with the robot moved where the place is in reach it passes."""
    from py_trees_manipulation.collision.base_placement import scene_with_base
    from py_trees_manipulation.geometry.poses import pose_from_spec
    from py_trees_manipulation.scene.spec import parse_scene

    task = load_task(os.path.join(EXAMPLES, "pick_from_clutter.yaml"), ["parameters.place_position=[0.85,-0.3,0.686]"])
    scene = parse_scene(task.scene, base_dir=EXAMPLES)
    test = whole_task_test(task)
    why = test(scene)
    assert why is not None and "ChooseGrasp: no feasible grasp of box" in why and "grasp_from_above.yaml:24:9" in why
    moved = scene_with_base(scene, "panda", pose_from_spec({"position": [0.8629, 0.0684, 0.626],
                                                            "rpy_deg": [0, 0, -160]}))
    assert test(moved) is None


@pytest.mark.extended   # a few runs and searches: pytest -m extended
def test_a_pick_and_place_out_of_reach_suggests_a_base_from_which_validate_and_the_run_pass():
    """The place 0.85 m out and 0.3 m to the right: ChooseGrasp's refusal names a base; applied, the
    file passes ptm validate --plan and the run places the box there (SUCCESS, on the table, within
    its 3 cm ObjectNear)."""
    sets = ["parameters.place_position=[0.85,-0.3,0.686]"]
    path = os.path.join(EXAMPLES, "pick_from_clutter.yaml")
    (problem,) = plan_check(load_task(path, sets))
    assert problem.node_type == "ChooseGrasp" and "cannot put it down at the place pose" in problem.message
    fix = suggested(problem.message)
    fixed = load_task(path, sets + [fix])
    assert plan_check(fixed) == []
    s = run_task(fixed, RunOptions(display=False, timeout_s=40)).summary
    assert s["status"] == "SUCCESS", s.get("error")
    assert s["metrics"]["placed_on"] == "table" and s["metrics"]["place_error_m"] < 0.03


def test_the_runs_refusal_suggests_the_base_validate_suggests():
    """The run's ChooseGrasp refuses before the arm moves with the same verified base as ptm validate
    --plan (the run's backend carries the task's whole-task test)."""
    sets = ["parameters.place_position=[0.85,0.3,0.686]"]
    path = os.path.join(EXAMPLES, "pick_from_clutter.yaml")
    (problem,) = plan_check(load_task(path, sets))
    s = run_task(load_task(path, sets), RunOptions(display=False, timeout_s=40)).summary
    assert s["status"] == "FAILURE"
    assert s["failed_behaviour"]["type"] == "ChooseGrasp" and s["metrics"]["object_lift_m"] < 0.01
    failed = s["failed_behaviour"]["feedback"]
    assert suggested(failed) == suggested(problem.message)
    assert plan_check(load_task(path, sets + [suggested(failed)])) == []


@pytest.mark.extended   # a few runs and searches: pytest -m extended
def test_base_pose_auto_chooses_a_base_the_grasp_choice_accepts():
    """base_pose: auto for pick_from_clutter with the place moved: the base chosen passes the whole
    task (ChooseGrasp with its 45 deg approach limit included), and so does the file with the pose
    written back as printed."""
    from py_trees_manipulation.collision.base_placement import place_robots
    from py_trees_manipulation.behaviors.reach import requests_from_tree
    from py_trees_manipulation.scene.spec import parse_scene

    sets = ["parameters.place_position=[0.6,0.25,0.686]", "scene.robots.0.base_pose=auto"]
    task = load_task(os.path.join(EXAMPLES, "pick_from_clutter.yaml"), sets)
    assert plan_check(task) == []
    scene = parse_scene(task.scene, base_dir=EXAMPLES)
    test = whole_task_test(task)
    placed, placements = place_robots(scene, requests_from_tree(task.tree), seed=0, task_check=test)
    p = placements["panda"]
    assert p.ok and test(placed) is None
    spec = p.base_pose_spec()
    written = load_task(os.path.join(EXAMPLES, "pick_from_clutter.yaml"), [
        sets[0], f"scene.robots.0.base_pose={{position: {spec['position']}, rpy_deg: {spec['rpy_deg']}}}"])
    assert plan_check(written) == []
    assert np.allclose(placed.robots[0].base_pose, p.pose)


@pytest.mark.extended   # a few runs and searches: pytest -m extended
def test_a_motion_out_of_reach_names_a_base_or_says_none_passes():
    """A handover between two iiwas (the left iiwa cannot reach the box from the Panda's place): the
    pregrasp MoveToPose is refused before moving, and the refusal either names a base from which the
    whole task passes ptm validate --plan, or says that none does and why (no base pose is offered
    that would fail)."""
    sets = ["scene.robots.0.model=kuka_iiwa_wsg50", "scene.robots.1.model=kuka_iiwa_wsg50"]
    path = os.path.join(EXAMPLES, "handover.yaml")
    problems = plan_check(load_task(path, sets))
    assert problems and problems[0].node_name == "left_pregrasp"
    text = str(problems[0])
    assert "out of reach" in text
    m = SUGGESTION.search(text)
    if m:
        assert plan_check(load_task(path, sets + [m.group(1)])) == []
    else:
        assert "no base position on 'table' passes the whole task" in text


def test_the_suggestion_does_not_depend_on_the_clock(monkeypatch):
    """The suggestion search's budget counts work (IK solves and collision checks), not wall seconds:
    base_sweep_mechanisms' xarm_base_moved_back (the xArm 0.3 m back from examples/open_drawer.yaml's
    cabinet) suggests the same base with a clock on which every reading is 1000 s after the last (a
    machine loaded past any wall-clock budget: a 30 s one stopped the search before its first base).
    The search's own record of its wall time is all the clock changes."""
    from types import SimpleNamespace

    from py_trees_manipulation.collision import base_search

    path = os.path.join(EXAMPLES, "open_drawer.yaml")
    sets = ["scene.robots.0.model=ufactory_xarm6", "scene.robots.0.base_pose.position=[-0.3, 0, 0]"]
    now = [0.0]

    def slow_clock() -> float:
        now[0] += 1000.0
        return now[0]

    monkeypatch.setattr(base_search, "time", SimpleNamespace(perf_counter=slow_clock))
    (problem,) = plan_check(load_task(path, sets))
    assert problem.node_type == "CheckReachability" and "the drawer handle is out of reach" in problem.message
    assert suggested(problem.message) == "scene.robots.0.base_pose={position: [-0.1977, 0.1042, 0], rpy_deg: [0, 0, -10]}"
    assert now[0] > 0.0   # (the clock was read: the search ran under it)
