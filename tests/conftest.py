"""Shared fixtures: the py_trees blackboard is global, so it is cleared around every test; one
default run of examples/pick_and_lift.yaml serves every test that checks what that run does."""

import os
from types import SimpleNamespace

import py_trees
import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(REPO, "examples")


@pytest.fixture(autouse=True)
def _clear_blackboard():
    py_trees.blackboard.Blackboard.clear()
    yield
    py_trees.blackboard.Blackboard.clear()


@pytest.fixture
def examples_dir():
    return EXAMPLES


class _TickRecorder:
    """Run observer: the gripper telemetry and the names of the RUNNING behaviours, every tick."""

    needs_visual_shapes = False

    def __init__(self):
        self.rows = []

    def on_start(self, run):
        pass

    def on_tick(self, run):
        tel = run.telemetry().get("gripper/panda")
        running = {b.name for b in run.tree.root.iterate() if b.status.name == "RUNNING"}
        self.rows.append((run.backend.now(), tel, running))

    def on_end(self, run, summary):
        pass


@pytest.fixture(scope="session")
def pick_and_lift_run():
    """The default run of examples/pick_and_lift.yaml (headless, no log), made once per session (per
    pytest-xdist worker): ``.summary`` (read it, do not change it) and ``.ticks``, a list of
    ``(sim time s, gripper telemetry, names of the RUNNING behaviours)`` per tick."""
    from py_trees_manipulation.trees.loader import load_task
    from py_trees_manipulation.trees.runner import RunOptions, run_task

    rec = _TickRecorder()
    summary = run_task(load_task(os.path.join(EXAMPLES, "pick_and_lift.yaml")),
                       RunOptions(display=False, observers=[rec])).summary
    py_trees.blackboard.Blackboard.clear()
    return SimpleNamespace(summary=summary, ticks=rec.rows)


# ---- every metric a scenario run reports is documented (docs/task_file.md "Metrics"; issue 32 item 3)
_METRICS_DOC = os.path.join(os.path.dirname(__file__), "..", "docs", "task_file.md")


def _documented_metrics() -> set:
    import re

    with open(_METRICS_DOC, encoding="utf-8") as f:
        text = f.read()
    table = text.split("### Metrics", 1)[1].split("\n## ", 1)[0]
    names = set()
    for line in table.splitlines():
        if line.startswith("| `"):
            names.update(re.findall(r"`([a-z_]+)`", line.split("|")[1]))
    return names


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    outcome = yield
    result = getattr(item, "result", None)
    summary = getattr(result, "summary", None)
    if outcome.excinfo is None and isinstance(summary, dict) and isinstance(summary.get("metrics"), dict):
        missing = sorted(set(summary["metrics"]) - _documented_metrics() - {"error"})
        if missing:
            outcome.force_exception(AssertionError(
                f"the run reported metrics docs/task_file.md (Metrics) does not document: {', '.join(missing)}"))
