"""``ptm`` command-line hooks of the viewer (loaded by :mod:`py_trees_manipulation.cli`).

Subcommands: ``ptm view LOG [--port N]`` (replay a run log in the browser) and
``ptm report LOG [-o DIR]`` (PNG plots). ``ptm run`` flags: ``--viewer`` (live page; after the run
the page stays up until Ctrl-C when stdin is a terminal), ``--port N``, ``--log PATH`` (default
``runs/<task file stem>_<UTC time>.mcap``), ``--no-log``, ``--report [DIR]`` (plots at the end;
default ``<log stem>_report/``).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import sys
from pathlib import Path
from typing import Any

DEFAULT_LOG_DIR = "runs"


def default_log_path(task_file: str) -> Path:
    """``runs/<stem>_<YYYYmmdd-HHMMSS>.mcap`` (UTC), relative to the working directory."""
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
    return Path(DEFAULT_LOG_DIR) / f"{Path(task_file).stem}_{stamp}.mcap"


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("viewer, run log and report")
    g.add_argument("--viewer", action="store_true",
                   help="serve the live tree page on 127.0.0.1 and print its address")
    g.add_argument("--port", type=int, default=None, help="viewer port (default: a free one)")
    g.add_argument("--log", metavar="PATH.mcap", default=None,
                   help="run log file (default: runs/<task>_<time>.mcap)")
    g.add_argument("--no-log", action="store_true", help="do not write a run log")
    g.add_argument("--report", nargs="?", const="", default=None, metavar="DIR",
                   help="write PNG plots of the run at the end (default DIR: <log stem>_report)")


def run_observers(args: argparse.Namespace, task: Any = None) -> list[Any]:
    """Observers for ``ptm run``: the run logger (unless ``--no-log``) and the live viewer.

    Raises:
        ValueError: ``--report`` with ``--no-log``, or ``--log`` with ``--no-log``.
    """
    observers: list[Any] = []
    args._ptm_log_path = None
    args._ptm_server = None
    if args.no_log:
        if args.report is not None:
            raise ValueError("--report plots the run log; drop --no-log")
        if args.log:
            raise ValueError("--log and --no-log contradict each other")
    else:
        from py_trees_manipulation.viewer.runlog import RunLogger

        path = Path(args.log) if args.log else default_log_path(args.file)
        meta = {"args": {k: v for k, v in vars(args).items() if not k.startswith("_") and k != "func"}}
        observers.append(RunLogger(path, metadata=meta))
        args._ptm_log_path = path
    if args.viewer:
        from py_trees_manipulation.viewer.server import open_live

        obs, server = open_live(port=args.port)
        observers.append(obs)
        args._ptm_server = server
    return observers


def after_run(args: argparse.Namespace, summary: dict[str, Any]) -> None:
    path = getattr(args, "_ptm_log_path", None)
    if path is not None:
        print(f"run log: {path}")
        if args.report is not None:
            from py_trees_manipulation.viewer.report import write_report

            out = write_report(path, args.report or None)
            print(f"report: {len(out)} plots in {out[0].parent}" if out else "report: nothing to plot")
    server = getattr(args, "_ptm_server", None)
    if server is not None:
        if sys.stdin is not None and sys.stdin.isatty():
            print(f"run over; the viewer stays at {server.url} (Ctrl-C to quit)", flush=True)
            server.wait()
        else:
            server.close()


def cmd_view(args: argparse.Namespace) -> int:
    from py_trees_manipulation.viewer.server import serve_log

    try:
        serve_log(args.log, port=args.port, block=True)
    except (FileNotFoundError, ValueError) as e:
        print(f"ptm: {e}", file=sys.stderr)
        return 2
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from py_trees_manipulation.viewer.report import write_report

    try:
        paths = write_report(args.log, args.output)
    except (FileNotFoundError, ValueError) as e:
        print(f"ptm: {e}", file=sys.stderr)
        return 2
    for p in paths:
        print(p)
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("view", help="replay a run log in the browser viewer",
                       description="Serve a run log (MCAP) on 127.0.0.1: the tree tick by tick, "
                                   "blackboard, activity and a timeline. Ctrl-C to stop.")
    p.add_argument("log", help="run log (.mcap)")
    p.add_argument("--port", type=int, default=None, help="port (default: a free one)")
    p.set_defaults(func=cmd_view)

    p = sub.add_parser("report", help="PNG plots of a run log (forces, gripper, object height, door angle, summary)")
    p.add_argument("log", help="run log (.mcap)")
    p.add_argument("-o", "--output", default=None, metavar="DIR", help="output directory (default <log stem>_report)")
    p.set_defaults(func=cmd_report)
