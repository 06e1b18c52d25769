"""A scenario file is fully checked when it is collected, and a file named inside another is reported
where it is named (issue 36)."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from py_trees_manipulation.cli import main
from py_trees_manipulation.located.errors import TreeLoadError
from py_trees_manipulation.scenarios.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]
TASK = ROOT / "examples/pick_and_lift.yaml"


def write(path: Path, text: str) -> str:
    path.write_text(textwrap.dedent(text).lstrip())
    return str(path)


# ---- include: a path that is not a task file, reported at the include line ------------------------------
def _task_including(tmp_path: Path, target: str) -> str:
    (tmp_path / "subtrees").symlink_to(ROOT / "examples/subtrees")
    text = TASK.read_text().replace("include: subtrees/grasp_from_above.yaml", f"include: {target}")
    p = tmp_path / "task.yaml"
    p.write_text(text)
    return str(p)


def _include_line() -> int:
    return next(i for i, line in enumerate(TASK.read_text().splitlines(), 1) if "include: subtrees/" in line)


@pytest.mark.parametrize("target, why", [
    ("subtrees", "is a directory, not a file"),
    ("/dev/zero", "is not a regular file (a device, a pipe or a socket)"),
    ("fifo", "is not a regular file (a device, a pipe or a socket)"),  # reading it would wait forever
    ("big.yaml", "is larger than 1000 kB"),
])
def test_an_include_that_is_not_a_task_file_is_reported_at_the_include_line(tmp_path, capsys, target, why):
    path = _task_including(tmp_path, target)
    if target == "fifo":
        os.mkfifo(tmp_path / "fifo")
    if target == "big.yaml":
        (tmp_path / "big.yaml").write_text("# " + "x" * 1_000_100 + "\n")
    assert main(["validate", path]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"{path}:{_include_line()}:18: included path {target!r} {why}; include a task file (.yaml) that "
                   "holds 'tree:'")


# ---- task: naming the scenario itself, a directory, another reference scenario -------------------------------
@pytest.mark.parametrize("target, why", [
    ("self.scenario.yaml", "is this scenario file itself"),
    (".", "is a directory, not a file"),
    ("other.scenario.yaml", "is a scenario that names its own task (task: TASK): name that task file here"),
])
def test_a_scenario_whose_task_is_not_a_task_file_says_so(tmp_path, target, why):
    write(tmp_path / "other.scenario.yaml", f"task: {TASK}\nexpect: {{status: SUCCESS}}\n")
    p = write(tmp_path / "self.scenario.yaml", f"task: {target}\nexpect: {{status: SUCCESS}}\n")
    with pytest.raises(TreeLoadError) as e:
        load_scenario(p)
    assert str(e.value) == (f"{p}:1:7: task file {target!r} {why.replace('TASK', str(TASK))}; 'task' names the task file "
                            "that holds 'scene:' and 'tree:', e.g. 'task: ../../examples/pick_and_lift.yaml'")
