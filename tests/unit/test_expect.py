"""The expect: section: parsing (with file:line errors) and checking run summaries."""

from __future__ import annotations

import math

import pytest

from py_trees_manipulation.scenarios.expect import Comparison, parse_comparison, parse_expect, unit_of
from py_trees_manipulation.located import locyaml
from py_trees_manipulation.located.errors import Loc, TreeLoadError

L = Loc("f.yaml", 3, 5)


def _expect(text: str):
    doc = locyaml.loads(text, "s.scenario.yaml")
    return parse_expect(doc["expect"], "s.scenario.yaml")


def _summary(status="SUCCESS", sim_time_s=4.5, metrics=None, failed=None, error=None):
    s = {"status": status, "sim_time_s": sim_time_s, "ticks": 136, "metrics": metrics or {}}
    if failed:
        s["failed_behaviour"] = failed
    if error:
        s["error"] = error
    return s


@pytest.mark.parametrize("text, op, value, holds, fails", [
    (">= 0.10", ">=", 0.10, [0.10, 0.2], [0.0999, -1.0]),
    ("> 0.1", ">", 0.1, [0.1001], [0.1, 0.0]),
    ("< 5", "<", 5.0, [4.999, -3.0], [5.0, 6.0]),
    ("<= 5", "<=", 5.0, [5.0], [5.0001]),
    ("== 3", "==", 3.0, [3.0, 3.0 + 1e-12], [3.001]),
    ("!= 0", "!=", 0.0, [1e-3], [0.0]),
    ("  >=1e-3 ", ">=", 1e-3, [0.001], [0.0009]),
])
def test_operator_comparisons(text, op, value, holds, fails):
    c = parse_comparison(text, L)
    assert (c.op, c.value) == (op, value)
    assert all(c.holds(x) for x in holds)
    assert not any(c.holds(x) for x in fails)


def test_plus_minus_and_approx_mapping_are_absolute_tolerances():
    for c in (parse_comparison("0.0 +- 0.02", L), parse_comparison("0.0 ± 0.02", L),
              parse_comparison({"approx": 0.0, "tol": 0.02}, L)):
        assert (c.op, c.value, c.tolerance()) == ("approx", 0.0, 0.02)
        assert c.holds(0.02) and c.holds(-0.019) and not c.holds(0.0201)
    rel = parse_comparison({"approx": 2.0, "rel": 0.05}, L)  # 5 % of 2.0 = 0.1
    assert rel.tolerance() == pytest.approx(0.1)
    assert rel.holds(2.099) and not rel.holds(2.101)
    assert rel.describe("N") == "2 N ± 5 %"


def test_ranges_and_bounds():
    r = parse_comparison("60 .. 95", L)
    assert (r.op, r.value, r.hi) == ("range", 60.0, 95.0)
    assert r.holds(60) and r.holds(95) and not r.holds(59.9) and not r.holds(95.1)
    assert parse_comparison({"min": 60, "max": 95}, L) == r
    assert parse_comparison({"min": 60}, L) == Comparison(">=", 60.0)
    assert parse_comparison({"max": 0.03}, L) == Comparison("<=", 0.03)


def test_plain_values_compare_equal_and_bools_are_not_numbers():
    f = parse_comparison(False, L)
    assert f.holds(False) and not f.holds(0) and not f.holds(True)
    three = parse_comparison(3, L)
    assert three.holds(3) and three.holds(3.0) and not three.holds(True) and not three.holds(3.01)
    box = parse_comparison({"equals": "box"}, L)
    assert box.holds("box") and not box.holds("mug")


def test_numeric_comparisons_reject_nan_and_non_numbers():
    c = parse_comparison(">= 0", L)
    assert not c.holds(math.nan) and not c.holds("0.5") and not c.holds(None) and not c.holds(True)


@pytest.mark.parametrize("bad, fragment", [
    (">= abc", "cannot read '>= abc'"),
    ("about 3", "cannot read"),
    ("5 .. 1", "empty range 5 .. 1"),
    ("0 +- -1", "the tolerance must be >= 0, got -1"),
    ({"approx": 1.0}, "'approx' takes 'tol'"),
    ({"approx": 1.0, "tol": -0.1}, "tol must be a number >= 0"),
    ({"min": 3, "max": 1}, "min 3 > max 1"),
    ({"mni": 3}, "did you mean 'min'"),
    (float("inf"), "not a finite number"),
    ([1, 2], "unexpected list"),
])
def test_bad_comparisons_are_load_errors_at_the_value(bad, fragment):
    with pytest.raises(TreeLoadError) as e:
        parse_comparison(bad, L, "object_lift_m")
    assert fragment in str(e.value)
    assert str(e.value).startswith("f.yaml:3:5:") or "f.yaml" in str(e.value)


def test_units_from_name_suffixes():
    assert [unit_of(n) for n in ("object_lift_m", "max_fingertip_force_n", "door_angle_deg", "sim_time_s",
                                 "speed_mps", "mass_kg", "torque_nm", "count")] == ["m", "N", "deg", "s", "m/s", "kg", "N·m", ""]


def test_parse_full_section_with_locations():
    exp = _expect(
        "expect:\n"                                 # line 1
        "  status: SUCCESS\n"                       # 2
        "  time_budget_s: 12\n"                     # 3
        "  metrics:\n"                              # 4
        "    object_lift_m: \">= 0.10\"\n"          # 5
        "    place_error_m: \"0.0 +- 0.02\"\n"      # 6
        "  max_fingertip_force_n: \"< 5\"\n"        # 7 (a metric at the top level)
    )
    assert exp.status == "SUCCESS" and exp.time_budget_s == 12.0
    assert [(m.name, m.comparison.op, m.comparison.value, m.unit, m.loc.line) for m in exp.metrics] == [
        ("object_lift_m", ">=", 0.10, "m", 5), ("place_error_m", "approx", 0.0, "m", 6),
        ("max_fingertip_force_n", "<", 5.0, "N", 7)]
    assert exp.locs["time_budget_s"] == Loc("s.scenario.yaml", 3, 3)


def test_defaults_status_success_or_failure_with_failed_behaviour():
    assert parse_expect(None).status == "SUCCESS"
    exp = _expect("expect: {failed_behaviour: lift}\n")
    assert exp.status == "FAILURE" and exp.failed_behaviour == {"name": "lift"}
    assert _expect("expect: {status: any}\n").status is None
    assert _expect("expect: {status: timeout}\n").status == "TIMEOUT"


def test_section_errors_are_all_reported_with_lines():
    with pytest.raises(TreeLoadError) as e:
        _expect(
            "expect:\n"
            "  status: SUCCES\n"                    # 2: typo
            "  time_budget_s: -1\n"                 # 3
            "  statsu: SUCCESS\n"                   # 4: reserved-key typo
            "  metrics:\n"
            "    object_lift_m: \"=> 0.1\"\n"       # 6
            "  failed_behaviour: {name: lift, colour: red}\n"  # 7
        )
    lines = str(e.value).splitlines()
    assert len(lines) == 5
    assert lines[0].startswith("s.scenario.yaml:2:11: unknown status 'SUCCES'; did you mean 'SUCCESS'?")
    assert lines[1].startswith("s.scenario.yaml:3:18: time_budget_s must be a number of sim seconds > 0")
    assert lines[2].startswith("s.scenario.yaml:4:3: unknown expectation 'statsu'; did you mean 'status'?")
    assert lines[3].startswith("s.scenario.yaml:6:20: expectation for 'object_lift_m': cannot read '=> 0.1'")
    assert lines[4].startswith("s.scenario.yaml:7:34: unknown key 'colour' in failed_behaviour")


def test_contradictions_and_duplicates_are_errors():
    with pytest.raises(TreeLoadError, match="can never hold"):
        _expect("expect: {status: SUCCESS, failed_behaviour: lift}\n")
    with pytest.raises(TreeLoadError, match="'object_lift_m' is expected twice"):
        _expect("expect: {object_lift_m: '>= 0.1', metrics: {object_lift_m: '< 0.3'}}\n")


def test_check_passing_summary_has_no_failures():
    exp = _expect("expect: {time_budget_s: 10, metrics: {object_lift_m: '>= 0.10', object_dropped: false}}\n")
    assert exp.check(_summary(metrics={"object_lift_m": 0.12, "object_dropped": False})) == []


def test_check_reports_expected_actual_units_and_miss():
    exp = _expect(
        "expect:\n"
        "  time_budget_s: 4\n"
        "  metrics:\n"
        "    object_lift_m: '>= 0.10'\n"
        "    max_fingertip_force_n: '< 5'\n"
        "    place_error_m: {approx: 0.0, tol: 0.02}\n"
        "    door_angle_deg: '>= 60'\n"
    )
    failures = exp.check(_summary(sim_time_s=4.5, metrics={
        "object_lift_m": 0.032, "max_fingertip_force_n": 7.25, "place_error_m": 0.05}))
    by = {f.subject: f for f in failures}
    assert list(by) == ["time_budget_s", "metrics.object_lift_m", "metrics.max_fingertip_force_n",
                        "metrics.place_error_m", "metrics.door_angle_deg"]
    assert by["time_budget_s"].message == "expected sim_time_s <= 4 s (time_budget_s), got 4.5 s [s.scenario.yaml:2:3]"
    assert by["metrics.object_lift_m"].message == "expected object_lift_m >= 0.1 m, got 0.032 m (short by 0.068 m) [s.scenario.yaml:4:5]"
    assert by["metrics.max_fingertip_force_n"].message == "expected max_fingertip_force_n < 5 N, got 7.25 N (over by 2.25 N) [s.scenario.yaml:5:5]"
    assert by["metrics.place_error_m"].expected == "place_error_m 0 ± 0.02 m"
    assert by["metrics.place_error_m"].detail == "off by 0.05 m"
    assert by["metrics.door_angle_deg"].actual == "missing"
    assert "object_lift_m" in by["metrics.door_angle_deg"].detail


def test_check_status_timeout_and_failed_behaviour():
    exp = _expect("expect: {time_budget_s: 8}\n")
    f = exp.check(_summary(status="TIMEOUT", sim_time_s=8.0, error="timed out after 8 s of backend time"))
    assert [x.subject for x in f] == ["status", "time_budget_s"]
    assert f[0].expected == "status SUCCESS" and f[0].actual == "TIMEOUT"
    assert f[1].detail == "still running when the budget ran out"

    exp = _expect("expect: {failed_behaviour: {name: lift, feedback: 'slipp(ed|ing)'}}\n")
    fb = {"name": "lift", "type": "MoveCartesian", "feedback": "object slipped out", "location": "t.yaml:9:7"}
    assert exp.check(_summary(status="FAILURE", failed=fb)) == []
    other = dict(fb, name="grasp")
    f = exp.check(_summary(status="FAILURE", failed=other))
    assert [x.subject for x in f] == ["failed_behaviour"]
    assert f[0].actual == "MoveCartesian 'grasp' (feedback: 'object slipped out')"
    f = exp.check(_summary(status="SUCCESS"))
    assert [x.subject for x in f] == ["status", "failed_behaviour"]
    assert f[1].actual == "no failed behaviour (status SUCCESS)"


# --- scenario files (loading only; the runs are in tests/scenarios/test_scenario_plugin.py) -------
TASK = """\
name: t
parameters: {min_x: 0.5}
blackboard: {x: 0.7}
tree:
  CheckBlackboardVariableValue: {name: check_x, variable_name: x, operator: ">", value: "${min_x}"}
"""


def test_whole_task_scenario_variants_and_expect_overrides(tmp_path):
    from py_trees_manipulation.scenarios.scenario import load_scenario

    p = tmp_path / "t.scenario.yaml"
    p.write_text(TASK + "expect:\n  metrics: {object_lift_m: '>= ${min_x}'}\n"
                 "variants:\n  low: {blackboard.x: 0.2, expect.status: FAILURE, expect.failed_behaviour: check_x}\n"
                 "  strict: {parameters.min_x: 0.9}\n")
    sc = load_scenario(str(p))
    assert list(sc.variants) == ["default", "low", "strict"] and sc.name == "t" and sc.task_file == str(p)
    task, exp = sc.load("default")
    assert task.blackboard == {"x": 0.7} and exp.status == "SUCCESS"
    assert exp.metrics[0].comparison == Comparison(">=", 0.5)  # ${min_x} from the task's parameters
    task, exp = sc.load("low")
    assert task.blackboard == {"x": 0.2}
    assert (exp.status, exp.failed_behaviour) == ("FAILURE", {"name": "check_x"})
    assert exp.locs["failed_behaviour"] == Loc(str(p), 9, 52)  # the variant's line, where it is written
    task, exp = sc.load("strict")
    assert task.tree.params["value"] == 0.9 and exp.metrics[0].comparison == Comparison(">=", 0.9)
    task, _ = sc.load("default", ["blackboard.x=0.1"])  # a sweep's extra overrides come last
    assert task.blackboard == {"x": 0.1}


def test_reference_scenario_with_set_and_relocated_errors(tmp_path):
    from py_trees_manipulation.scenarios.scenario import load_scenario

    (tmp_path / "task.yaml").write_text(TASK)
    ref = tmp_path / "r.scenario.yaml"
    ref.write_text("task: task.yaml\nset: {blackboard.x: 0.8}\nexpect: {place_error_m: '< ${min_x}'}\n")
    sc = load_scenario(str(ref))
    task, exp = sc.load()
    assert sc.name == "r" and task.blackboard == {"x": 0.8} and exp.metrics[0].comparison == Comparison("<", 0.5)

    bad = tmp_path / "b.scenario.yaml"
    bad.write_text("task: task.yaml\nscene: {}\nvariants:\n  v: {parameters.min_y: 1}\n  default: {}\n  w: {name.x: 1}\n")
    with pytest.raises(TreeLoadError) as e:
        load_scenario(str(bad))
    text = str(e.value)
    assert f"{bad}:2:1: unknown key 'scene' in a scenario that names its task; scene and tree belong in the task file" in text
    assert f"{bad}:5:3: 'default' is the file as written; it cannot be a variant" in text
    assert f"{bad}:6:7: variant 'w': cannot override 'name'" in text

    bad.write_text("task: task.yaml\nvariants:\n  v: {parameters.min_y: 1}\n")
    with pytest.raises(TreeLoadError) as e:
        load_scenario(str(bad))
    assert str(e.value) == f"{bad}:3:7: the file has no parameter 'min_y' (variant 'v'); did you mean 'min_x'?"

    bad.write_text("task: nosuch.yaml\n")
    with pytest.raises(TreeLoadError, match="task file 'nosuch.yaml' not found.*did you mean 'task.yaml'"):
        load_scenario(str(bad))


def test_or_refused_accepts_a_refusal_that_names_a_base_and_moved_nothing():
    """``or_refused`` (issue 33 item 2): SUCCESS must meet the section; a FAILURE must instead name a base
    pose (the printed --set) and not have moved the object; anything else fails (the base's own check,
    ptm validate --plan from it, is scenario.verify_suggested_base)."""
    exp = _expect("expect:\n  or_refused: validates\n  metrics: {place_error_m: '< 0.03'}\n")
    assert exp.or_refused == "validates"
    assert exp.check(_summary(metrics={"place_error_m": 0.01})) == []
    bad = exp.check(_summary(metrics={"place_error_m": 0.2}))
    assert [f.subject for f in bad] == ["metrics.place_error_m"]
    fix = ("no feasible grasp of mug: ...; a grasp reaches it from a base at (0.80, 0.00, 0.63) facing -130 deg: "
           "--set 'scene.robots.0.base_pose={position: [0.8042, 0.0021, 0.626], rpy_deg: [0, 0, -130]}' (or base_pose: auto)")
    refused = _summary("FAILURE", metrics={"object_max_lift_m": 0.0, "place_error_m": 0.4},
                       failed={"name": "grasp/choose", "type": "ChooseGrasp", "feedback": fix})
    assert exp.refused(refused) and exp.check(refused) == []
    silent = _summary("FAILURE", metrics={"object_max_lift_m": 0.0},
                      failed={"name": "lift", "type": "MoveCartesian", "feedback": "mug slipped"})
    (f,) = exp.check(silent)
    assert f.subject == "or_refused" and "naming a base pose" in f.expected
    moved = _summary("FAILURE", metrics={"object_max_lift_m": 0.12},
                     failed={"name": "x", "type": "ChooseGrasp", "feedback": fix})
    (f,) = exp.check(moved)
    assert "before the object moved" in f.expected and f.actual == "0.12 m"
    with pytest.raises(TreeLoadError, match="or_refused must be one of validates, runs"):
        _expect("expect:\n  or_refused: maybe\n")


def test_the_suggested_base_is_applied_as_its_set_applies_it():
    import os

    from py_trees_manipulation.scenarios.scenario import with_suggested_base
    from py_trees_manipulation.trees.loader import load_task

    examples = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "examples")
    task = load_task(os.path.join(examples, "pick_and_place.yaml"))
    text = "... --set 'scene.robots.0.base_pose={position: [0.8042, 0.0021, 0.626], rpy_deg: [0, 0, -130]}' (or ...)"
    fixed = with_suggested_base(task, text)
    assert fixed.scene["robots"][0]["base_pose"] == {"position": [0.8042, 0.0021, 0.626], "rpy_deg": [0, 0, -130]}
    assert task.scene["robots"][0]["base_pose"] == {"position": [0, 0, 0.626]}   # the task itself unchanged
    assert with_suggested_base(task, "no base named") is None
