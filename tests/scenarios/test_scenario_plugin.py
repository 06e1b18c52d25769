"""The pytest plugin on real sim runs: collection per variant, pass/fail with clear messages, JUnit XML.

Inner pytest sessions run in-process (pytester); the plugin is found through the installed
``pytest11`` entry point, exactly as in a user's project.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

import py_trees_manipulation.behaviors  # noqa: F401  (imported here so that pytester's in-process
import py_trees_manipulation.sim  # noqa: F401  runs restore one copy of each module, not a new one per run)

pytest_plugins = ["pytester"]

# A scene without a robot and a tree that only waits and reads the blackboard: a real PyBullet run
# of 0.5 s sim time that takes milliseconds, whose outcome is set by the blackboard value x.
TINY_TASK = """\
name: tiny
blackboard: {x: 0.7}
scene:
  fixtures:
    - {name: floor, urdf: plane.urdf}
  objects:
    - {name: box, primitive: {shape: box, size: [0.05, 0.05, 0.05]}, mass_kg: 0.1, pose: {position: [0.5, 0, 0.025]}}
tree:
  Sequence:
    memory: true
    children:
      - Wait: {duration_s: 0.5}
      - CheckBlackboardVariableValue: {name: check_x, variable_name: x, operator: ">", value: 0.5}
"""

TINY_SCENARIO = """\
task: tiny.yaml
expect:
  time_budget_s: 2
  metrics:
    object_dropped: false
variants:
  low_x_fails_as_expected:
    blackboard.x: 0.2
    expect.failed_behaviour: check_x
  low_x:
    blackboard.x: 0.2
  lift_expected:
    expect.metrics.object_lift_m: ">= 0.10"
"""

# A real pick: the Panda grasps a 4 cm box and lifts it by lift_m (about 1.5 s wall).
PICK_TASK = """\
name: pick
parameters: {lift_m: 0.12}
scene:
  robots:
    - {name: panda, model: franka_panda, base_pose: {position: [0, 0, 0.626]}, initial_configuration: ready}
  fixtures:
    - {name: table, urdf: table/table.urdf, pose: {position: [0.5, 0, 0]}}
  objects:
    - name: box
      primitive: {shape: box, size: [0.04, 0.04, 0.05]}
      mass_kg: 0.1
      pose: {position: [0.5, 0, 0.651]}
  task: {target_object: box}
tree:
  Sequence:
    name: pick
    memory: true
    children:
      - GetObjectPose: {object: box, output_key: box_pose}
      - GripperCommand: {name: open, position: 0.08}
      - MoveToPose: {name: pregrasp, target: "{box_pose}", offset: {position: [0, 0, 0.10]}, orientation_rpy_deg: [180, 0, 0]}
      - MoveCartesian: {name: approach, target: "{box_pose}", orientation_rpy_deg: [180, 0, 0]}
      - GripperCommand: {name: close, position: 0.0, max_effort: 40}
      - MoveCartesian: {name: lift, delta: [0, 0, "${lift_m}"]}
expect:
  time_budget_s: 15
  metrics:
    object_lift_m: ">= 0.10"
variants:
  greedy:
    expect.metrics.object_lift_m: ">= 0.20"
"""


def _outcomes(result) -> dict[str, str]:
    out = {}
    for rep in result.reprec.getreports("pytest_runtest_logreport"):
        if rep.when == "call" or rep.outcome != "passed":
            out[rep.nodeid.split("::")[-1]] = rep.outcome
    return out


def _longrepr(result, name: str) -> str:
    for rep in result.reprec.getreports("pytest_runtest_logreport"):
        if rep.nodeid.endswith("::" + name) and rep.failed:
            return str(rep.longrepr)
    raise AssertionError(f"no failure report for {name}")


@pytest.fixture
def tiny(pytester):
    pytester.makefile(".yaml", tiny=TINY_TASK)
    (pytester.path / "tiny.scenario.yaml").write_text(TINY_SCENARIO)
    return pytester


def test_collects_one_item_per_variant(tiny):
    result = tiny.runpytest_inprocess("--collect-only", "-q", "-p", "no:cacheprovider")
    ids = [line for line in result.outlines if "::" in line]
    assert ids == ["tiny.scenario.yaml::default", "tiny.scenario.yaml::low_x_fails_as_expected",
                   "tiny.scenario.yaml::low_x", "tiny.scenario.yaml::lift_expected"]


def test_runs_variants_and_reports_the_failing_assertion(tiny):
    log_dir = tiny.path / "logs"
    result = tiny.runpytest_inprocess("-p", "no:cacheprovider", f"--ptm-log-dir={log_dir}")
    assert _outcomes(result) == {"default": "passed", "low_x_fails_as_expected": "passed",
                                 "low_x": "failed", "lift_expected": "failed"}
    result.assert_outcomes(passed=2, failed=2)

    low = _longrepr(result, "low_x")
    # the status assertion with its location, the blamed behaviour with its feedback and location
    assert low.splitlines()[0] == ("tiny.scenario.yaml::low_x: expected status SUCCESS, got FAILURE "
                                   "(blamed on CheckBlackboardVariableValue 'check_x') [tiny.scenario.yaml:3:3]")
    assert re.search(r"failed behaviour: CheckBlackboardVariableValue 'check_x' \(tiny.yaml:13:9\): .*0\.2", low)
    assert "run: status FAILURE after 0.5" in low

    lift = _longrepr(result, "lift_expected")
    # the metric assertion: expected (with unit), actual (with unit), the miss, the line of the variant
    m = re.match(r"tiny.scenario.yaml::lift_expected: expected object_lift_m >= 0.1 m, got (\S+) m "
                 r"\(short by (\S+) m\) \[tiny.scenario.yaml:13:5\]$", lift.splitlines()[0])
    assert m, lift
    assert abs(float(m.group(1))) < 0.005 and float(m.group(1)) + float(m.group(2)) == pytest.approx(0.1, abs=1e-6)
    # the run log was written where asked and is named in the report
    log = log_dir / "tiny" / "lift_expected.mcap"
    assert f"run log: {log}" in lift and log.stat().st_size > 0


def test_real_pick_scenario_passes_and_a_greedy_expectation_fails(pytester):
    # In a subprocess: an in-process pytester run drops the modules it imported when it ends, and
    # the behaviour registry would then hold classes of modules that are gone.
    (pytester.path / "pick.scenario.yaml").write_text(PICK_TASK)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--ptm-no-log", "-rA")
    out = result.stdout.str()
    assert "PASSED pick.scenario.yaml::default" in out, out
    assert "FAILED pick.scenario.yaml::greedy" in out, out
    m = re.search(r"pick.scenario.yaml::greedy: expected object_lift_m >= 0.2 m, got (\S+) m \(short by (\S+) m\)", out)
    assert m, out
    assert float(m.group(1)) == pytest.approx(0.12, abs=0.01)  # lifted by lift_m = 0.12 m
    assert "run log:" not in out


def test_time_budget_is_the_timeout(tiny):
    (tiny.path / "slow.scenario.yaml").write_text(
        "task: tiny.yaml\nset: {tree.check_x.value: 0.5}\nexpect:\n  time_budget_s: 0.2\n")
    result = tiny.runpytest_inprocess("-p", "no:cacheprovider", "--ptm-no-log", "slow.scenario.yaml")
    result.assert_outcomes(failed=1)
    text = _longrepr(result, "default")
    assert "expected status SUCCESS, got TIMEOUT" in text
    assert "expected sim_time_s <= 0.2 s (time_budget_s), got 0.2" in text
    assert "still running when the budget ran out" in text


def test_invalid_scenario_is_a_collection_error_with_lines(tiny):
    (tiny.path / "bad.scenario.yaml").write_text(
        "task: tiny.yaml\n"
        "expect:\n"
        "  metrics: {object_lift_m: '=> 0.1'}\n"
        "variants:\n"
        "  typo: {blackboard.x: 0.3, scene.objects.0.mass_kgg: 1}\n"
        "  unknown_node: {tree.nosuch.value: 1}\n")
    result = tiny.runpytest_inprocess("-p", "no:cacheprovider", "bad.scenario.yaml")
    assert result.ret == pytest.ExitCode.INTERRUPTED  # collection errors stop the session
    text = result.stdout.str()
    assert "bad.scenario.yaml:3:28: expectation for 'object_lift_m': cannot read '=> 0.1'" in text
    # a variant's override is reported at the variant's own key, naming the variant
    assert ("bad.scenario.yaml:5:29: scene: unknown key 'mass_kgg' in scene.objects[0]; did you mean 'mass_kg'? "
            "(variant 'typo')") in text
    assert "bad.scenario.yaml:6:18: no node named 'nosuch' (variant 'unknown_node')" in text


def test_ptm_test_writes_junit_xml(tiny):
    out = tiny.path / "report.xml"
    proc = subprocess.run([sys.executable, "-m", "py_trees_manipulation", "test", str(tiny.path), "--junit-xml", str(out),
                           "-k", "low_x", "--no-log"], capture_output=True, text=True, cwd=tiny.path, timeout=120, check=False,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert proc.returncode == 1, proc.stdout + proc.stderr  # one selected test fails
    suite = ET.parse(out).getroot().find("testsuite")
    assert suite is not None and suite.get("name") == "ptm-scenarios"
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert sorted(cases) == ["low_x", "low_x_fails_as_expected"]
    failure = cases["low_x"].find("failure")
    assert failure is not None and "expected status SUCCESS, got FAILURE" in failure.get("message", "")
    assert cases["low_x_fails_as_expected"].find("failure") is None
    props = {p.get("name"): p.get("value") for p in cases["low_x"].iter("property")}
    assert props["status"] == "FAILURE" and float(props["sim_time_s"]) == pytest.approx(0.5, abs=0.05)


def test_ptm_test_leaves_no_junit_xml_in_the_working_directory(tiny):
    """Without --junit-xml (and without --log-dir) nothing is written to the working directory."""
    before = set(os.listdir(tiny.path))
    proc = subprocess.run([sys.executable, "-m", "py_trees_manipulation", "test", "tiny.scenario.yaml", "-k", "default",
                           "--no-log"], capture_output=True, text=True, cwd=tiny.path, timeout=120, check=False,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert set(os.listdir(tiny.path)) == before


def test_junit_xml_goes_where_asked_or_into_the_log_dir():
    from py_trees_manipulation.cli import build_parser
    from py_trees_manipulation.scenarios.cli import junit_path

    def where(*argv):
        return junit_path(build_parser().parse_args(["test", "scenarios", *argv]))

    assert where() is None
    assert where("--junit-xml", "out/r.xml") == "out/r.xml"
    assert where("--log-dir", "ci") == os.path.join("ci", "ptm-test-results.xml")
    assert where("--log-dir", "ci", "--junit-xml", "r.xml") == "r.xml"
    assert where("--log-dir", "ci", "--junit-xml", "") is None
    assert where("--log-dir", "ci", "--no-log") is None


def test_ptm_test_without_pytest_says_how_to_install_it(tmp_path, capsys, monkeypatch):
    from py_trees_manipulation.cli import main

    monkeypatch.setitem(sys.modules, "pytest", None)  # 'import pytest' now raises ModuleNotFoundError
    assert main(["test", str(tmp_path)]) == 2
    out = capsys.readouterr()
    assert out.err == "ptm test needs pytest: pip install -e '.[test]' (or pip install pytest)\n"
    assert out.out == ""


def test_ptm_test_help_states_each_default_once():
    from py_trees_manipulation.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    text = sub.choices["test"].format_help()
    assert "(default: None)" not in text and "(default: False)" not in text
    assert text.count("default: a temporary directory") == 1
    assert "Examples:\n  ptm test tests/scenarios\n" in text
