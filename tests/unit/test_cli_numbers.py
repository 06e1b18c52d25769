"""Numbers on the command line (issue 36): every numeric option of every ``ptm`` command parses through
the one rule of :mod:`py_trees_manipulation.commands.options`, which refuses NaN, infinities and values
out of range with exit code 2 and the range, without a traceback."""

from __future__ import annotations

import argparse
import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from py_trees_manipulation.cli import build_parser, main
from py_trees_manipulation.commands.options import NumberOption, integer, real

ROOT = Path(__file__).resolve().parents[2]


def _subparsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(command path, parser) for the parser and every subcommand below it."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            seen = set()
            for name, sub in action.choices.items():
                if id(sub) in seen:  # an alias (behaviors) is the same parser
                    continue
                seen.add(id(sub))
                yield from _subparsers(sub, path + (name,))


def _numeric_options():
    """(command path, parser, action) of every option that takes a number."""
    out = []
    for path, parser in _subparsers(build_parser()):
        for a in parser._actions:
            if a.option_strings and (isinstance(a.type, NumberOption) or a.type in (int, float)):
                out.append((path, parser, a))
    return out


NUMERIC = _numeric_options()


def test_every_numeric_option_uses_the_one_rule():
    assert len(NUMERIC) >= 14  # run (3 + 2 viewer), view, serve (3), test, sweep (6)
    bare = [f"ptm {' '.join(p)} {a.option_strings[-1]}" for p, _, a in NUMERIC if not isinstance(a.type, NumberOption)]
    assert not bare, f"options that take type=int/float directly (use commands.options): {bare}"
    # the pytest plugin's options too (pytest builds that parser, so read the source)
    src = (ROOT / "py_trees_manipulation/scenarios/pytest_plugin.py").read_text()
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "addoption":
            for kw in node.keywords:
                assert not (kw.arg == "type" and isinstance(kw.value, ast.Name) and kw.value.id in ("int", "float")), \
                    ast.unparse(node)


def _argv(path, parser, action, value):
    """A command line that reaches ``action`` with ``value``: dummies for positionals and required options."""
    argv = list(path)
    for a in parser._actions:
        if a.option_strings and a.required and a is not action:
            argv += [a.option_strings[-1], "x"]
    argv += [f"{action.option_strings[-1]}={value}"]  # "=": a value may start with "-"
    for a in parser._actions:
        if not a.option_strings and not isinstance(a, argparse._SubParsersAction):
            argv += ["x"]
    return argv


def _bad_values(t: NumberOption):
    vals = ["abc", ""]
    if t.kind is float:
        vals += ["nan", "NaN", "inf", "-inf", "1e999"]
    else:
        vals += ["1.5", "nan"]
    if t.above is not None:
        vals.append(repr(t.above) if t.kind is float else str(int(t.above)))
    if t.minimum is not None:
        vals.append(str(t.minimum - (1 if t.kind is int else abs(t.minimum) * 0.5 + 1e-3)))
    if t.maximum is not None:
        vals.append(str(t.maximum + (1 if t.kind is int else abs(t.maximum) + 1.0)))
    return vals


CASES = [(p, parser, a, v) for p, parser, a in NUMERIC for v in _bad_values(a.type)]


@pytest.mark.parametrize("path, parser, action, value", CASES,
                         ids=[f"{' '.join(p)} {a.option_strings[-1]} {v!r}" for p, _, a, v in CASES])
def test_nan_infinities_and_out_of_range_exit_2_naming_the_range(path, parser, action, value, capsys):
    with pytest.raises(SystemExit) as e:
        main(_argv(path, parser, action, value))
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {'/'.join(action.option_strings)}: expected {action.type.describe()}, got {value!r}" in err, err
    assert "Traceback" not in err


@pytest.mark.parametrize("path, parser, action", NUMERIC, ids=[f"{' '.join(p)} {a.option_strings[-1]}" for p, _, a in NUMERIC])
def test_values_in_range_are_taken(path, parser, action):
    t = action.type
    low = t.minimum if t.minimum is not None else (t.above + 1 if t.above is not None else 0)
    assert t(str(low)) == low
    if t.maximum is not None:
        assert t(str(t.maximum)) == t.maximum


def test_the_rule_itself():
    hz = real(0.01, 10000.0, unit="Hz")
    assert hz("30") == 30.0 and hz("1e3") == 1000.0 and hz(" 0.01 ") == 0.01
    assert hz.describe() == "a finite number >= 0.01 and <= 10000 Hz"
    assert real(above=0.0, unit="s").describe() == "a finite number > 0 s"
    seed = integer(0, 2**32 - 1)
    assert seed("4294967295") == 4294967295 and seed("0") == 0
    for bad in ("4294967296", "-1", "1e3", "0x10"):
        with pytest.raises(argparse.ArgumentTypeError, match=r"expected an integer >= 0 and <= 4294967295"):
            seed(bad)
    with pytest.raises(argparse.ArgumentTypeError, match=r"got 'nan' \(not finite\)"):
        hz("nan")


def test_ptm_run_tick_hz_nan_is_exit_2_not_a_traceback():
    """The issue's own command line, in a process of its own."""
    proc = subprocess.run([sys.executable, "-m", "py_trees_manipulation", "run", "examples/pick_and_lift.yaml",
                           "--tick-hz", "nan", "--no-log"], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 2
    assert proc.stderr.strip().endswith(
        "ptm run: error: argument --tick-hz: expected a finite number >= 0.01 and <= 10000 Hz, got 'nan' (not finite)")
