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


# ---- expect: every metric name checked at collection ---------------------------------------------------------
def test_a_misspelt_metric_is_an_error_at_collection_with_the_closest_name(tmp_path):
    p = write(tmp_path / "lift.scenario.yaml", f"""
        task: {TASK}
        expect:
          metrics: {{objet_lift_m: ">= 0.1"}}
          object_max_lift_m: ">= 0.1"
        variants:
          heavy:
            expect.metrics.place_eror_m: "< 0.02"
        """)
    with pytest.raises(TreeLoadError) as e:
        load_scenario(p)  # no simulator runs: the file is only read
    assert str(e.value).splitlines() == [
        f"{p}:3:13: unknown metric 'objet_lift_m'; did you mean 'object_lift_m'?",
        f"{p}:7:5: unknown metric 'place_eror_m'; did you mean 'place_error_m'?",
    ]


def test_the_pytest_plugin_reports_it_when_collecting(tmp_path):
    import subprocess
    import sys

    write(tmp_path / "lift.scenario.yaml", f"task: {TASK}\nexpect: {{metrics: {{objet_lift_m: '>= 0.1'}}}}\n")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--collect-only", "-q",
                           str(tmp_path)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "lift.scenario.yaml:2:20: unknown metric 'objet_lift_m'; did you mean 'object_lift_m'?" in proc.stdout


def test_a_plugin_behaviour_declares_its_own_metrics(tmp_path, monkeypatch):
    from py_trees_manipulation.behaviors import registry

    cls = registry.lookup("CheckBlackboardVariableValue")
    task = write(tmp_path / "task.yaml", """
        blackboard: {x: 0.7}
        tree:
          CheckBlackboardVariableValue: {variable_name: x, operator: ">", value: 0.5}
        """)
    p = write(tmp_path / "t.scenario.yaml", f"task: {task}\nexpect: {{my_score: '>= 1'}}\n")
    with pytest.raises(TreeLoadError, match="unknown metric 'my_score'"):
        load_scenario(p)
    monkeypatch.setattr(cls, "METRICS", ("my_score",), raising=False)
    _, exp = load_scenario(p).load()
    assert [m.name for m in exp.metrics] == ["my_score"]


def test_ptm_validate_checks_a_scenario_file_as_a_scenario(tmp_path, capsys):
    good = ROOT / "tests/scenarios/pick_and_lift.scenario.yaml"
    typo = write(tmp_path / "typo.scenario.yaml", f"task: {TASK}\nexpect:\n  metrics: {{objet_lift_m: '>= 0.1'}}\n")
    assert main(["validate", str(good)]) == 0
    assert capsys.readouterr().out.startswith(f"{good}: OK (scenario 'pick_and_lift' of ")
    assert main(["validate", typo]) == 2
    assert capsys.readouterr().err.strip() == f"{typo}:3:13: unknown metric 'objet_lift_m'; did you mean 'object_lift_m'?"
    # named like a task file, a reference scenario is read as one: the hint says what it is
    plain = write(tmp_path / "ref.yaml", f"task: {TASK}\n")
    assert main(["validate", plain]) == 2
    assert (f"{plain}:1:1: unknown top-level key 'task'; a scenario file names its task with 'task:': call it "
            "NAME.scenario.yaml (ptm validate and ptm test check it as a scenario)") in capsys.readouterr().err


def test_a_variant_s_marks_reach_its_test_item_and_bad_marks_are_named(tmp_path):
    p = write(tmp_path / "lift.scenario.yaml", f"""
        task: {TASK}
        expect: {{status: SUCCESS}}
        variants:
          heavy:
            marks: [extended]
            scene.objects.0.mass_kg: 0.4
          light: {{scene.objects.0.mass_kg: 0.1}}
        """)
    s = load_scenario(p)
    assert s.variants["heavy"].marks == ("extended",) and s.variants["light"].marks == ()
    assert s.variants["heavy"].overrides == ["scene.objects.0.mass_kg=0.4"]
    bad = write(tmp_path / "bad.scenario.yaml", f"""
        task: {TASK}
        expect: {{status: SUCCESS}}
        variants:
          heavy:
            marks: [not a mark]
        """)
    with pytest.raises(TreeLoadError) as e:
        load_scenario(bad)
    assert f"{bad}:5:5: variant 'heavy': marks is a list of pytest mark names; e.g. marks: [extended]" in str(e.value)
