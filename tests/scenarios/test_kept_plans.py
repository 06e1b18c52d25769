"""The check before the run and the run are one computation (issue 33 item 1): with ``--plan-first``
the motions the dry run planned are kept, and the run's motions follow them (the same waypoints);
a motion whose start, goal or world differs from the one checked is planned again and says why.
The grasp choice too: the run's ChooseGrasp takes the check's choice (issue 35) while the world is
the one it was made in."""

import os

import numpy as np
import py_trees
import pybullet as pb
import pytest

from py_trees_manipulation.trees.loader import load_task
from py_trees_manipulation.trees.plan_check import plan_check_in_backend
from py_trees_manipulation.trees.runner import RunOptions, make_backend, run_task

EXAMPLES = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", "examples"))


class _Feedback:
    """Records every feedback message of the nodes named ``names``, tick by tick."""

    needs_visual_shapes = False

    def __init__(self, *names: str):
        self.names, self.seen = names, {n: [] for n in names}

    def on_start(self, run):
        pass

    def on_tick(self, run):
        for node in run.tree.root.iterate():
            if node.name in self.names and node.feedback_message:
                self.seen[node.name].append(node.feedback_message)

    def on_end(self, run, summary):
        pass


@pytest.fixture
def pick_and_lift():
    """The shipped pick_and_lift on a simulator backend, and its task."""
    task = load_task(os.path.join(EXAMPLES, "pick_and_lift.yaml"))
    options = RunOptions(display=False, plan_first=False)
    backend = make_backend(task, options)
    yield task, options, backend
    backend.close()


def _waypoints(summary: dict) -> np.ndarray:
    return np.array([w["positions"] for w in summary["waypoints"]])


def test_the_run_follows_the_waypoints_the_check_planned(pick_and_lift):
    """Every motion the dry run planned (ready, pregrasp, descend, lift) is executed along the
    checked path: the same waypoints, joint for joint, and the run says so in its log."""
    task, options, backend = pick_and_lift
    assert plan_check_in_backend(task, backend) == []
    kept = backend.motion_planning.worker.kept_plans
    checked = [(k.node, np.asarray(k.plan.waypoints)) for k in kept.checked]
    assert [n.split(" at ")[0] for n, _ in checked] == ["ready", "grasp/pregrasp", "grasp/descend", "lift"]
    result = run_task(task, options, backend=backend)
    assert result.summary["status"] == "SUCCESS"
    executed = backend.motion_planning.plans
    assert len(executed) == len(checked) == 4
    for (node, q_checked), summary in zip(checked, executed):
        assert summary.get("from_check") is True, node
        assert _waypoints(summary).shape == q_checked.shape
        np.testing.assert_allclose(_waypoints(summary), q_checked, atol=1e-6, err_msg=node)
    metrics = result.summary["metrics"]
    assert (metrics["motions_from_check"], metrics["motions_replanned"]) == (4, 0)
    # the kept-plan figures have their rows on the task file page's metric table, as every metric a run
    # reports (tests/conftest.py checks that for the scenario runs, which plan each motion as it starts)
    with open(os.path.join(os.path.dirname(EXAMPLES), "docs", "task_file.md"), encoding="utf-8") as f:
        table = f.read().split("### Metrics", 1)[1].split("\n## ", 1)[0]
    for key in metrics:
        assert f"| `{key}`" in table or f", `{key}`" in table, key


def test_a_start_that_moved_after_the_check_is_planned_again_and_says_why(pick_and_lift):
    """The arm moved 0.05 rad at its fourth joint between the check and the run: the first motion's
    kept plan starts elsewhere, so it is planned again, its feedback and the run log saying why with the
    joint and the angle; the motions after it start where the check left the arm and follow its plans."""
    task, options, backend = pick_and_lift
    assert plan_check_in_backend(task, backend) == []
    robot = backend.arms["panda"].robot
    q = robot.joint_positions()
    q[3] += 0.05
    robot.reset_arm(q)
    feedback = _Feedback("ready")
    options.observers.append(feedback)
    result = run_task(task, options, backend=backend)
    assert result.summary["status"] == "SUCCESS"
    why = "plan from the check not used: start differs by 0.050 rad at panda_joint4"
    first, *rest = backend.motion_planning.plans
    assert first.get("note") == why and not first.get("from_check")
    assert any(why in text for text in feedback.seen["ready"]), feedback.seen["ready"]
    assert [p.get("from_check") for p in rest] == [True, True, True]
    metrics = result.summary["metrics"]
    assert (metrics["motions_from_check"], metrics["motions_replanned"]) == (3, 1)


def test_without_a_check_every_motion_is_planned_as_it_starts(pick_and_lift):
    """No check before the run (the simulator's default): nothing is kept, every motion is planned
    when it starts, and the run's metrics have no kept-plan figures."""
    task, options, backend = pick_and_lift
    result = run_task(task, options, backend=backend)
    assert result.summary["status"] == "SUCCESS"
    assert backend.motion_planning.worker.kept_plans is None
    assert not any(p.get("from_check") or p.get("note") for p in backend.motion_planning.plans)
    assert "motions_from_check" not in result.summary["metrics"]


def _grasp_events(summary: dict) -> list:
    return [e for e in summary["events"] if "grasp_choice" in e]


def test_the_run_takes_the_grasp_choice_the_check_made(pick_and_lift):
    """The check chose the mug's grasp; the run's ChooseGrasp takes that choice instead of evaluating
    the 14 grasps again: the same grasp, written at the mug's pose the run read (the kept grasp's
    object-frame pose put there), and its event says whose choice it is."""
    task, options, backend = pick_and_lift
    assert plan_check_in_backend(task, backend) == []
    kept = backend.motion_planning.worker.kept_plans
    [k] = kept.choices
    assert k.node.split(" at ")[0] == "grasp/choose" and k.obj == "mug"
    name = k.choice.chosen.grasp.name
    result = run_task(task, options, backend=backend)
    assert result.summary["status"] == "SUCCESS"
    assert kept.choices_used == 1
    [event] = _grasp_events(result.summary)
    assert event["grasp_choice"]["from_check"] is True and event["grasp_choice"]["chosen"] == name
    assert event["text"].endswith("; the choice of the check before the run")
    bb = py_trees.blackboard.Blackboard
    grasp = np.asarray(k.choice.chosen.grasp.pose)
    np.testing.assert_array_equal(bb.get("/grasp_pose"), np.asarray(bb.get("/object_pose")) @ grasp)
    np.testing.assert_array_equal(bb.get("/object_grasp"), grasp)
    assert result.summary["metrics"]["chosen_grasp"] == name


def test_an_object_moved_after_the_check_is_chosen_again_and_says_why(pick_and_lift):
    """The mug moved 3 cm between the check and the run: the kept choice is not taken, the run
    evaluates the grasp set where the mug is now, and its event says why, with the distance."""
    task, options, backend = pick_and_lift
    assert plan_check_in_backend(task, backend) == []
    kept = backend.motion_planning.worker.kept_plans
    body = backend._bodies["mug"]
    p, q = pb.getBasePositionAndOrientation(body, physicsClientId=backend.client)
    pb.resetBasePositionAndOrientation(body, [p[0], p[1] + 0.03, p[2]], q, physicsClientId=backend.client)
    result = run_task(task, options, backend=backend)
    assert result.summary["status"] == "SUCCESS"
    assert kept.choices_used == 0 and kept.choices
    [event] = _grasp_events(result.summary)
    assert "from_check" not in event["grasp_choice"]
    assert event["grasp_choice"]["note"].startswith("plan from the check not used: mug lies 30.0 mm")
    # the grasp chosen again is at the mug's new pose, so the motions to it are planned again too
    np.testing.assert_allclose(py_trees.blackboard.Blackboard.get("/object_pose")[1, 3], p[1] + 0.03, atol=2e-3)
    assert result.summary["metrics"]["motions_replanned"] >= 2
