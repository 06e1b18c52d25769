"""The check before the run and the run are one computation (issue 33 item 1): with ``--plan-first``
the motions the dry run planned are kept, and the run's motions follow them (the same waypoints);
a motion whose start, goal or world differs from the one checked is planned again and says why."""

import os

import numpy as np
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
