"""Every subcommand contributed by viewer/cli.py, scenarios/cli.py and interop/cli.py, and cli.py's
render and behaviours, has a description and an example in its help, and states each default once."""

from __future__ import annotations

import argparse

import pytest

from py_trees_manipulation.cli import build_parser

COMMANDS = ["view", "report", "test", "sweep", "schema", "convert", "docs", "robots", "render", "behaviours"]


def _subparser(name: str) -> argparse.ArgumentParser:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[name]


@pytest.mark.parametrize("name", COMMANDS)
def test_help_has_description_and_example(name):
    p = _subparser(name)
    assert p.description and len(p.description) > 40, name
    assert p.epilog and "Example" in p.epilog and f"\n  ptm {name} " in p.epilog, name
    text = p.format_help()
    assert "(default: None)" not in text and "(default: False)" not in text
    # the examples keep their lines (not re-wrapped into one paragraph)
    first_example = p.epilog.split("\n")[1]
    assert first_example in text.splitlines()


def test_run_viewer_help_mentions_realtime_and_replay():
    run = _subparser("run")
    helps = {a.dest: a.help for a in run._actions}
    assert "--realtime" in helps["viewer"] and "ptm view LOG" in helps["viewer"]


def _sample_command(args: argparse.Namespace) -> int:
    """Do the sample thing to FILE, one paragraph
    over two lines.

    Examples:
      ptm sample a.yaml        # the first
      ptm sample b.yaml
    Exit codes: 0 done, 2 invalid input.
    """
    return 0


def test_add_command_takes_the_help_from_the_docstring():
    from py_trees_manipulation.commands.subcommands import add_command

    parser = argparse.ArgumentParser(prog="ptm")
    sub = parser.add_subparsers(dest="command")
    p = add_command(sub, "sample", _sample_command, "one line for the command list")
    assert p.description == "Do the sample thing to FILE, one paragraph over two lines."
    assert p.epilog == ("Examples:\n  ptm sample a.yaml        # the first\n  ptm sample b.yaml\n"
                        "Exit codes: 0 done, 2 invalid input.")
    assert parser.parse_args(["sample"]).func is _sample_command
    text = p.format_help()
    assert "  ptm sample a.yaml        # the first" in text.splitlines()
    assert "one line for the command list" in parser.format_help()
