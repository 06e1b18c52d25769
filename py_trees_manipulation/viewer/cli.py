"""``ptm`` command-line hooks of the viewer (loaded by :mod:`py_trees_manipulation.cli`).

Subcommands: ``ptm view LOG... [--port N]`` (replay a run log in the browser; given several, the
newest) and ``ptm report LOG... [-o DIR]`` (PNG plots, one directory per log). ``ptm run`` flags:
``--viewer`` (live page; after the run the page stays up until Ctrl-C when stdout or stdin is a
terminal, otherwise it closes and the replay command is printed), ``--port N``, ``--foxglove``
(the run's channels live to Foxglove over WebSocket, ``--foxglove-port N``, default 8765; the
same rule for after the run), ``--log PATH``
(default ``runs/<task file stem>_<UTC time>.mcap``), ``--no-log``, ``--report [DIR]`` (plots at
the end; default ``<log stem>_report/``).

Errors on the command line (exit 2, no traceback): ``ptm: FILE: no such run log`` and
``ptm: FILE: not an MCAP run log (written by ptm run?)``.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import logging
import os
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..commands import options
from ..commands.subcommands import HelpFormatter, add_command

logger = logging.getLogger(__name__)

DEFAULT_LOG_DIR = "runs"

#: the 8 bytes every MCAP file starts with (https://mcap.dev/spec#magic)
MCAP_MAGIC = b"\x89MCAP0\r\n"


def default_log_path(task_file: str) -> Path:
    """``runs/<stem>_<YYYYmmdd-HHMMSS>.mcap`` (UTC), relative to the working directory."""
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
    return Path(DEFAULT_LOG_DIR) / f"{Path(task_file).stem}_{stamp}.mcap"


def replay_command(path: Any) -> str:
    """``ptm view PATH`` with PATH quoted for a POSIX shell."""
    return f"ptm view {shlex.quote(str(path))}"


def check_run_log(path: Any) -> str | None:
    """Why ``path`` cannot be a run log (the message ``ptm`` prints after ``ptm: ``), or ``None``.

    Only the file's first 8 bytes are read: a missing file, a directory, an unreadable file or one
    without the MCAP magic is refused; an unfinished (truncated) MCAP log passes, since the
    reader recovers what precedes the damage.
    """
    p = Path(path)
    if not p.exists():
        return f"{path}: no such run log"
    if p.is_dir():
        return f"{path}: is a directory, not a run log (give the .mcap file; e.g. {os.path.join(str(path), '*.mcap')})"
    try:
        with open(p, "rb") as f:
            head = f.read(len(MCAP_MAGIC))
    except OSError as e:
        return f"{path}: cannot read the run log: {e.strerror or e}"
    if head != MCAP_MAGIC:
        return f"{path}: not an MCAP run log (written by ptm run?)"
    return None


def run_start_time(path: Any) -> float:
    """When the run of a log started, as POSIX seconds: the ``started_wall_iso`` of the log's
    ``run`` metadata record (written at the run's first tick), else the file's mtime.

    Reads records only up to that metadata record (near the start of the file), not the whole log.
    """
    from mcap.records import Metadata
    from mcap.stream_reader import StreamReader

    iso = None
    try:
        with open(path, "rb") as f:
            for record in StreamReader(f, skip_magic=False).records:
                if isinstance(record, Metadata) and record.name == "run":
                    iso = record.metadata.get("started_wall_iso")
                    break
        if iso:
            started = _dt.datetime.fromisoformat(iso)
            if started.tzinfo is None:
                started = started.replace(tzinfo=_dt.timezone.utc)
            return started.timestamp()
    except Exception as exc:  # noqa: BLE001 - any damage: fall back on the file's time
        logger.debug("run log %s: no start time (%s); using its mtime", path, exc)
    return os.path.getmtime(path)


def newest_run_log(paths: Sequence[Any]) -> Any:
    """The path in ``paths`` whose run started last (:func:`run_start_time`; ties: the later
    modification time, then the later path in the list)."""
    keyed = [(run_start_time(p), os.path.getmtime(p), i) for i, p in enumerate(paths)]
    return paths[max(range(len(paths)), key=lambda i: keyed[i])]


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("viewer, run log and report")
    g.add_argument("--viewer", action="store_true",
                   help="serve the live tree page on 127.0.0.1 and print its address; add --realtime to watch "
                        "the run live at wall-clock pace (a headless sim run is over in seconds). On a terminal "
                        "the page stays up after the run until Ctrl-C; otherwise it closes and the replay "
                        "command (ptm view LOG) is printed")
    g.add_argument("--port", type=options.PORT, default=None, help="viewer port, 0 ... 65535 (default: a free one)")
    g.add_argument("--log", metavar="PATH.mcap", default=None,
                   help="run log file (default: runs/<task>_<time>.mcap); replay with ptm view PATH.mcap")
    g.add_argument("--no-log", action="store_true", help="do not write a run log")
    g.add_argument("--report", nargs="?", const="", default=None, metavar="DIR",
                   help="write PNG plots of the run at the end (default DIR: <log stem>_report)")
    g.add_argument("--foxglove", action="store_true",
                   help="serve the run's channels (3D scene, transforms, log, plots, tree) live to Foxglove on "
                        "127.0.0.1 (WebSocket, Open connection > Foxglove WebSocket > the printed ws:// address); "
                        "add --realtime to watch at the robot's pace. Layout: docs/foxglove_layout.json")
    g.add_argument("--foxglove-port", type=options.PORT, default=8765, metavar="N",
                   help="Foxglove WebSocket port (default 8765; 0: a free one)")


def run_observers(args: argparse.Namespace, task: Any = None) -> list[Any]:
    """Observers for ``ptm run``: the run logger (unless ``--no-log``; with ``--foxglove`` it also
    feeds the live Foxglove server, which it starts and announces here) and the live viewer.

    Raises:
        ValueError: ``--report`` with ``--no-log``, or ``--log`` with ``--no-log``; ``--foxglove``
            without foxglove-sdk, or its port taken.
    """
    observers: list[Any] = []
    args._ptm_log_path = None
    args._ptm_server = None
    args._ptm_foxglove = None
    live = None
    if args.no_log and args.report is not None:
        raise ValueError("--report plots the run log; drop --no-log")
    if args.no_log and args.log:
        raise ValueError("--log and --no-log contradict each other")
    if getattr(args, "foxglove", False):
        port = getattr(args, "foxglove_port", 8765)
        if not 0 <= port <= 65535:
            raise ValueError(f"--foxglove-port must be 0 to 65535, got {port}")
        try:
            from py_trees_manipulation.viewer.foxglove import FoxgloveLive

            live = FoxgloveLive(port=port)
        except ImportError as e:
            raise ValueError(f"--foxglove needs the foxglove-sdk package (pip install foxglove-sdk): {e}") from None
        except Exception as e:  # noqa: BLE001 - e.g. the port is taken
            raise ValueError(f"cannot serve Foxglove on port {port}: {e}") from None
        args._ptm_foxglove = live
        print(f"ptm foxglove: {live.url}  (Foxglove: Open connection > Foxglove WebSocket)", flush=True)
    if args.no_log:
        if live is not None:
            from py_trees_manipulation.viewer.runlog import RunLogger

            observers.append(RunLogger(None, live=live))
    else:
        from py_trees_manipulation.viewer.runlog import RunLogger

        path = Path(args.log) if args.log else default_log_path(args.file)
        meta = {"args": {k: v for k, v in vars(args).items() if not k.startswith("_") and k != "func"}}
        observers.append(RunLogger(path, metadata=meta, live=live))
        args._ptm_log_path = path
    if args.viewer:
        from py_trees_manipulation.viewer.server import open_live

        obs, server = open_live(port=args.port)
        observers.append(obs)
        args._ptm_server = server
    return observers


def _is_terminal(stream: Any) -> bool:
    try:
        return stream is not None and bool(stream.isatty())
    except (AttributeError, ValueError, OSError):  # replaced or closed stream
        return False


def after_run(args: argparse.Namespace, summary: dict[str, Any]) -> None:
    """End of ``ptm run``: name the log and its replay command, write ``--report``, and keep the
    ``--viewer`` page up until Ctrl-C when someone is at a terminal (stdout or stdin is one).

    Without a terminal (CI, pipes) the viewer closes at once and a line says so, with the replay
    command when there is a log.
    """
    path = getattr(args, "_ptm_log_path", None)
    if path is not None:
        print(f"run log: {path} (replay: {replay_command(path)})")
        if args.report is not None:
            from py_trees_manipulation.viewer.report import write_report

            out = write_report(path, args.report or None)
            print(f"report: {len(out)} plots in {out[0].parent}" if out else "report: nothing to plot")
    server = getattr(args, "_ptm_server", None)
    live = getattr(args, "_ptm_foxglove", None)
    status = (summary or {}).get("status", "over")
    terminal = _is_terminal(sys.stdout) or _is_terminal(sys.stdin)
    if server is not None:
        if terminal:
            also = f" and Foxglove at {live.url}" if live is not None else ""
            print(f"run {status}; the viewer stays at {server.url}{also} until Ctrl-C", flush=True)
            server.wait()
        else:
            server.close()
            how = (f"replay the run with: {replay_command(path)}" if path is not None
                   else "no run log to replay (--no-log)")
            print(f"viewer closed at the end of the run (no terminal); {how}", flush=True)
    if live is not None:
        if terminal and server is None:
            print(f"run {status}; Foxglove stays connected at {live.url} until Ctrl-C", flush=True)
            live.wait()
        else:
            live.close()
            if not terminal:
                print(f"Foxglove server closed at the end of the run (no terminal)"
                      + (f"; open the log in Foxglove: {path}" if path is not None else ""), flush=True)


def _bad_logs(paths: Sequence[str]) -> int:
    """Print ``ptm: ...`` for every path that is not a run log; return how many."""
    bad = 0
    for path in paths:
        why = check_run_log(path)
        if why is not None:
            print(f"ptm: {why}", file=sys.stderr)
            bad += 1
    return bad


def cmd_view(args: argparse.Namespace) -> int:
    """Serve a run log (MCAP, written by ptm run) on 127.0.0.1: the tree tick by tick, blackboard, activity and a
    timeline. Ctrl-C to stop. Given several logs (a glob), serves the newest (by the run's start time) and
    says which.

    Examples:
      ptm view runs/pick_and_lift_20250101-120000.mcap
      ptm view runs/pick_and_lift_*.mcap          # the newest of them
    Exit codes: 0 stopped with Ctrl-C, 2 not a run log or the port is taken.
    """
    from py_trees_manipulation.viewer.server import serve_log

    logs = list(dict.fromkeys(args.logs))  # a path given twice is one log
    if _bad_logs(logs):
        return 2
    log = logs[0]
    if len(logs) > 1:
        log = newest_run_log(logs)
        started = _dt.datetime.fromtimestamp(run_start_time(log), _dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
        others = [p for p in logs if p != log]
        print(f"ptm view: {len(logs)} run logs given; serving the newest, {log} (started {started}); "
              f"ignoring {len(others)} other{'s' if len(others) > 1 else ''}: {', '.join(others)}", flush=True)
    try:
        serve_log(log, port=args.port, block=True)
    except KeyboardInterrupt:  # Ctrl-C right after the banner, before the server waits: a normal stop
        return 0
    except (FileNotFoundError, ValueError) as e:
        print(f"ptm: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # e.g. the port is taken
        print(f"ptm: cannot serve on port {args.port}: {e.strerror or e}", file=sys.stderr)
        return 2
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    """Write PNG plots of run logs (MCAP, written by ptm run): fingertip forces, gripper opening, object height,
    door angle and a summary table; plots without data are skipped. Prints the files written.

    Examples:
      ptm report runs/pick_and_lift_20250101-120000.mcap   # -> ..._report/*.png
      ptm report runs/*.mcap -o plots              # -> plots/<log stem>/*.png
    Exit codes: 0 done, 2 a file is missing or not a run log (the others are still reported).
    """
    from py_trees_manipulation.viewer.report import write_report
    from py_trees_manipulation.viewer.runlog import read_run_log, unfinished_note

    logs = list(dict.fromkeys(args.logs))
    worst = 2 if _bad_logs(logs) else 0
    good = [p for p in logs if check_run_log(p) is None]
    for log in good:
        if args.output is None:
            out = None  # <log stem>_report next to the log
        elif len(logs) == 1:
            out = args.output
        else:
            out = os.path.join(args.output, Path(log).stem)
        try:
            run = read_run_log(log, snapshots=False)
            if not run.complete:
                print(f"ptm: warning: {unfinished_note(run)}", file=sys.stderr)
            paths = write_report(run, out)
        except (FileNotFoundError, ValueError) as e:
            print(f"ptm: {e}", file=sys.stderr)
            worst = 2
            continue
        for p in paths:
            print(p)
    return worst


def cmd_log_recover(args: argparse.Namespace) -> int:
    """A run killed with SIGKILL (or a machine that lost power) leaves a run log without MCAP's summary section:
    ptm view and ptm report read it, but indexed readers (Foxglove, the mcap package's make_reader) refuse it.
    This copies every record that can be read (schemas, channels, messages, metadata, attachments; a chunk
    that cannot be decoded is skipped; reading stops where the file was cut) into a new, finished file, as
    'mcap recover' does.

    Example:
      ptm log recover runs/pick_and_lift_20250101-120000.mcap
          # -> runs/pick_and_lift_20250101-120000.recovered.mcap
    Exit codes: 0 written, 2 not an MCAP file or nothing to recover.
    """
    from py_trees_manipulation.viewer.runlog import recover_run_log

    why = check_run_log(args.log)
    if why is not None:
        print(f"ptm: {why}", file=sys.stderr)
        return 2
    try:
        rec = recover_run_log(args.log, args.output)
    except (FileNotFoundError, ValueError) as e:
        print(f"ptm: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"ptm: cannot write {args.output or 'the recovered copy'}: {e.strerror or e}", file=sys.stderr)
        return 2
    state = ("the log was finished already" if rec.complete else
             f"read {rec.bytes_read} of {os.path.getsize(rec.source)} bytes; stopped at: {rec.error}" if rec.error else
             "the log ends without its summary section")
    lost = f", {rec.chunks_lost} damaged chunk(s) skipped" if rec.chunks_lost else ""
    print(f"{rec.output}: {rec.messages} messages on {rec.channels} channels, {rec.metadata} metadata record(s){lost} "
          f"({state})")
    print(f"open it with: {replay_command(rec.output)}, ptm report {shlex.quote(str(rec.output))}, or in Foxglove")
    return 0


def register(sub: Any) -> None:
    """Add ``view`` and ``report`` to the ``ptm`` subcommands."""
    p = add_command(sub, "view", cmd_view, "replay a run log in the browser viewer")
    p.add_argument("logs", nargs="+", metavar="LOG", help="run log(s) (.mcap); with several, the newest is served")
    p.add_argument("--port", type=options.PORT, default=None, help="port, 0 ... 65535 (default: a free one)")

    p = add_command(sub, "report", cmd_report,
                    "PNG plots of a run log (forces, gripper, object height, door angle, summary)")
    p.add_argument("logs", nargs="+", metavar="LOG", help="run log(s) (.mcap); each gets its own output directory")
    p.add_argument("-o", "--output", default=None, metavar="DIR",
                   help="output directory (default: <log stem>_report next to each log); with several logs, "
                        "DIR/<log stem>")

    p = sub.add_parser("log", help="run log tools: recover a log cut short by a kill",
                       description="Tools for run logs (MCAP, written by ptm run).",
                       formatter_class=HelpFormatter)
    logs = p.add_subparsers(dest="log_command", metavar="TOOL", required=True)
    r = add_command(logs, "recover", cmd_log_recover,
                    "write a finished copy of a run log that a killed run left unfinished")
    r.add_argument("log", metavar="LOG", help="the run log (.mcap)")
    r.add_argument("-o", "--output", default=None, metavar="OUT.mcap",
                   help="the finished copy (default: <log stem>.recovered.mcap next to the log)")
