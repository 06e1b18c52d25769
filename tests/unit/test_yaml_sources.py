"""One guard for every source of YAML (issue 36): files, ``--set`` values, sweep grids and scenario
variants pass the same limits (size, depth, values once aliases are expanded) and read numbers as
YAML 1.2 does."""

from __future__ import annotations

import os
import re
import textwrap
from pathlib import Path

import pytest

from py_trees_manipulation.cli import main
from py_trees_manipulation.located import locyaml
from py_trees_manipulation.located.errors import TreeLoadError
from py_trees_manipulation.trees.loader import load_task

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "py_trees_manipulation"
TASK = str(ROOT / "examples/pick_and_lift.yaml")


def bomb(levels: int = 6, width: int = 9) -> str:
    """A flow-style alias bomb: ``width ** levels`` values once expanded (531441 by default)."""
    parts = [f"&l0 [{', '.join(['x'] * width)}]"]
    for i in range(1, levels):
        parts.append(f"&l{i} [{', '.join([f'*l{i - 1}'] * width)}]")
    return "[" + ", ".join(parts) + "]"


def test_no_module_parses_yaml_but_the_guard():
    """The cause, held: ``yaml.safe_load``/``yaml.load`` appear only in located/locyaml.py."""
    offenders = []
    for p in PKG.rglob("*.py"):
        if p.name == "locyaml.py":
            continue
        for i, line in enumerate(p.read_text().splitlines(), 1):
            if re.search(r"\byaml\.(safe_load|load|full_load|unsafe_load|load_all|safe_load_all)\(", line):
                offenders.append(f"{p.relative_to(ROOT)}:{i}: {line.strip()}")
    assert not offenders, offenders


@pytest.mark.parametrize("command", ["validate", "run", "render"])
def test_an_alias_bomb_in_a_set_value_is_refused_at_once(command, capsys):
    code = main([command, TASK, "--set", f"blackboard.junk={bomb()}"] + (["--no-log"] if command == "run" else []))
    err = capsys.readouterr().err
    assert code == 2
    # the value is shortened in the message (100 characters and "...")
    assert err.startswith("--set blackboard.junk=[&l0 [x, x, x, x, x, x, x, x, x], &l1 [*l0, ")
    assert "*l0],...: the value expands to more than 200000 values; anchors and aliases" in err
    assert len(err) < 400


def test_set_values_together_are_held_to_the_limit_of_one_file():
    one = bomb(levels=5, width=9)  # 66430 values: within the limit alone
    overrides = [f"blackboard.k{i}={one}" for i in range(4)]
    with pytest.raises(TreeLoadError, match=r"--set: the task with its --set values expands to more than 200000 values"):
        load_task(TASK, overrides)
    load_task(TASK, overrides[:1])  # one of them is fine


@pytest.mark.parametrize("text, message", [
    ("[1, 2", r"malformed YAML: expected ',' or '\]', but got '<stream end>' \(column 6\)"),
    ("!!python/object/apply:os.system [ls]", r"unsupported YAML tag"),
    ("[" * 70 + "]" * 70, r"the value is nested deeper than 64 levels"),
])
def test_a_set_value_is_read_with_the_rules_of_a_file(text, message):
    with pytest.raises(TreeLoadError, match=re.escape("--set blackboard.v=") + ".*: " + message):
        load_task(TASK, [f"blackboard.v={text}"])


def test_numbers_in_set_values_and_files_are_yaml_1_2():
    assert locyaml.value("1e5", "--set x") == 1e5  # YAML 1.1 (PyYAML) reads these as text
    assert locyaml.value("1.0e300", "--set x") == 1e300
    assert locyaml.loads("a: 1.0e300\nb: .5E-3\nc: -2.e5\nd: 1_000e2\ne: e5\nf: '1.0e3'\n") == {
        "a": 1e300, "b": 0.0005, "c": -200000.0, "d": 100000.0, "e": "e5", "f": "1.0e3"}
    task = load_task(TASK, ["blackboard.far=1.0e300", "scene.objects.0.mass_kg=2.5e-1"])
    assert task.blackboard["far"] == 1e300 and task.scene["objects"][0]["mass_kg"] == 0.25


def test_a_large_number_in_a_task_file_is_a_number(tmp_path, capsys):
    """``1.0e300`` was refused "must be a number" (the README says numbers are YAML 1.2)."""
    # (a blackboard value: a parameter of 1e300 m would now be refused by its range, e.g. ChooseGrasp.lift_m)
    text = Path(TASK).read_text().replace("mass_kg: 0.2", "mass_kg: 2.0e-1") + "blackboard:\n  far: 1.0e300\n"
    p = tmp_path / "big.yaml"
    p.write_text(text)
    (tmp_path / "subtrees").symlink_to(ROOT / "examples/subtrees")
    task = load_task(str(p))
    assert task.blackboard["far"] == 1e300 and task.scene["objects"][0]["mass_kg"] == 0.2
    # beyond what a float holds is still refused, naming the key
    p.write_text(text.replace("mass_kg: 2.0e-1", "mass_kg: 1.0e400"))
    assert main(["validate", str(p)]) == 2
    assert "mass_kg must be a number in kg, got inf" in capsys.readouterr().err


def test_sweep_values_pass_the_same_guard(tmp_path):
    from py_trees_manipulation.scenarios.sweep import SweepError, expand, parse_grid, parse_random

    # block style: a grid value cannot hold a comma
    block_bomb = "\n".join(f"- &l{i}\n" + "\n".join([f"  - *l{i - 1}" if i else "  - x"] * 9) for i in range(7))
    with pytest.raises(SweepError, match="is not a valid value .*expands to more than 200000 values"):
        parse_grid(f"blackboard.x={block_bomb}")
    assert parse_grid("scene.objects.0.mass_kg=1e-1,2.5e-1").values == (0.1, 0.25)
    for expr in ("k=0:.inf:3", "k=.nan:1:3", "k=-1e308:1e308:3", "k=0:1:100001", "k=0:1:1"):
        with pytest.raises(SweepError, match=r"LO:HI:N needs two finite numbers and a count N >= 2 \(at most 100000\)"):
            parse_grid(expr)
    for expr in ("k=0:.inf", "k=.nan:1", "k=-1e308:1e308", "k=1:1"):
        with pytest.raises(SweepError, match="LO and HI must be finite numbers with LO < HI"):
            parse_random(expr)
    with pytest.raises(SweepError, match=r"the sweep has 1000000000 runs \(1 grid point\(s\) x 1000000000 trial\(s\)\); at most 100000"):
        expand(trials=10**9)
    g = parse_grid("k=0:1:1000")
    with pytest.raises(SweepError, match=r"the sweep has 101000 runs \(1000 grid point\(s\) x 101 trial\(s\)\)"):
        expand([g], trials=101)


def test_a_variant_of_a_scenario_passes_the_guard_of_its_file(tmp_path):
    from py_trees_manipulation.scenarios.scenario import load_scenario

    p = tmp_path / "bomb.scenario.yaml"
    p.write_text(textwrap.dedent(f"""\
        task: {os.path.relpath(TASK, tmp_path)}
        expect: {{status: SUCCESS}}
        variants:
          heavy: {{blackboard.junk: {bomb()}}}
        """))
    with pytest.raises(TreeLoadError, match=r"bomb.scenario.yaml:1:1: the YAML expands to more than 200000 values"):
        load_scenario(str(p))
