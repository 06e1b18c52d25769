"""How a ``ptm`` subcommand is declared, once for every module that contributes one.

A subcommand's ``--help`` text is the docstring of the function that runs it: the first paragraph is
the description (its lines joined into one paragraph, which :class:`HelpFormatter` wraps to the
terminal), what follows the first blank line is the epilog (examples and exit codes), printed as
written. :func:`add_command` adds the subparser and points it at the function::

    def cmd_view(args: argparse.Namespace) -> int:
        \"\"\"Serve a run log (MCAP, written by ptm run) on 127.0.0.1 ...

        Examples:
          ptm view runs/pick_and_lift_20250101-120000.mcap
        Exit codes: 0 stopped with Ctrl-C, 2 not a run log or the port is taken.
        \"\"\"

    p = add_command(sub, "view", cmd_view, "replay a run log in the browser viewer")
    p.add_argument("logs", nargs="+", metavar="LOG", help="run log(s) (.mcap)")
"""

from __future__ import annotations

import argparse
import inspect
from typing import Any, Callable


class HelpFormatter(argparse.HelpFormatter):
    """Wraps one-paragraph descriptions to the terminal; keeps text with line breaks (examples) as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if "\n" in text:
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


def command_help(func: Callable[..., Any]) -> tuple[str, str]:
    """``(description, epilog)`` of the subcommand run by ``func``, from its docstring: the first
    paragraph with its lines joined by spaces, and the rest as written ("" when there is none)."""
    doc = inspect.getdoc(func) or ""
    description, _, epilog = doc.partition("\n\n")
    return " ".join(description.split("\n")), epilog


def add_command(subparsers: Any, name: str, func: Callable[[argparse.Namespace], int], help: str,
                **kwargs: Any) -> argparse.ArgumentParser:
    """Add subcommand ``name`` to ``subparsers`` (an ``add_subparsers()`` result), run by ``func``
    (``args -> exit code``), with the one-line ``help`` of the command list and the description and
    epilog of ``func``'s docstring (:func:`command_help`).

    Args:
        kwargs: more ``add_parser`` arguments (``aliases``; ``formatter_class``, default
            :class:`HelpFormatter`).

    Returns:
        The subcommand's parser, for its arguments.
    """
    description, epilog = command_help(func)
    kwargs.setdefault("formatter_class", HelpFormatter)
    p = subparsers.add_parser(name, help=help, description=description, epilog=epilog or None, **kwargs)
    p.set_defaults(func=func)
    return p
