"""The ``ptm`` command line.

Subcommands: ``run``, ``validate``, ``render``, ``behaviours``; more are contributed by the
modules in :data:`COMMAND_MODULES` (each with ``register(subparsers)``), and ``ptm run`` flags by
the modules in :data:`RUN_EXTENSIONS` (each with ``add_run_arguments(parser)``,
``run_observers(args) -> list`` and optionally ``after_run(args, summary)``). A subcommand's
``--help`` text is the docstring of the function that runs it
(:func:`~py_trees_manipulation.commands.subcommands.add_command`).

Exit codes: 0 success, 1 the task failed or timed out, 2 invalid input (no traceback), 130
interrupted.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import Any, Optional, Sequence

from . import __version__

#: modules adding subcommands (``register(subparsers)``); missing ones are skipped
COMMAND_MODULES: list[str] = [
    "py_trees_manipulation.viewer.cli",
    "py_trees_manipulation.commands.hardware",
    "py_trees_manipulation.scenarios.cli",
    "py_trees_manipulation.interop.cli",
    "py_trees_manipulation.commands.robots",
]
#: modules adding ``ptm run`` flags and observers
RUN_EXTENSIONS: list[str] = ["py_trees_manipulation.viewer.cli", "py_trees_manipulation.commands.hardware"]
#: the subcommands this module defines (and aliases): running one of them, the parser is built
#: without the :data:`COMMAND_MODULES`' subcommands (neither imported nor registered)
BUILTIN_COMMANDS = frozenset({"run", "validate", "render", "behaviours", "behaviors", "backends"})


def _optional_modules(names: list[str]) -> list[Any]:
    mods = []
    for name in names:
        try:
            mods.append(importlib.import_module(name))
        except ModuleNotFoundError as e:
            if e.name and (name == e.name or name.startswith(e.name + ".")):
                continue
            raise
    return mods


def _die(message: str, code: int = 2) -> int:
    print(f"ptm: {message}", file=sys.stderr)
    return code


def _load(path: str, overrides: Optional[list[str]] = None):
    from .trees.loader import load_task

    return load_task(path, overrides)


# ------------------------------------------------------------------------------------------------
def cmd_run(args: argparse.Namespace) -> int:
    """Run a task tree until it succeeds, fails or times out, and print a one-line verdict.

    Exit codes: 0 SUCCESS, 1 FAILURE or timeout, 2 invalid input, 130 interrupted.
    """
    from .located.errors import TreeLoadError
    from .trees.runner import RunOptions, interrupt_once

    try:
        if args.file.lower().endswith(".xml"):
            # BehaviorTree.CPP XML holds the tree; scene and blackboard come from --scene TASK.yaml
            try:
                from .interop.btxml_import import load_task_from_xml
            except ImportError:
                return _die("BehaviorTree.CPP XML is not supported by this installation")
            if not args.scene:
                return _die(f"{args.file}: an XML tree needs --scene TASK.yaml for its scene and blackboard")
            task = load_task_from_xml(args.file, args.scene, args.set, main_tree_id=args.main_tree)
        else:
            if args.scene or args.main_tree:
                return _die("--scene and --main-tree are for XML trees; a YAML task file holds its own scene and tree")
            if args.backend == "hardware":  # the scene is kept: the client plans the motions against it
                from .commands.hardware import load_task_for_robot

                task = load_task_for_robot(args.file, args.set)
            else:
                task = _load(args.file, args.set)
    except TreeLoadError as e:
        print(str(e), file=sys.stderr)
        return 2
    for w in getattr(task, "warnings", ()):
        print(str(w), file=sys.stderr)
    if args.gui and sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        # PyBullet's GUI would print X11 noise and exit the process from C code
        return _die("--gui needs a display (DISPLAY is not set): run without --gui (headless), "
                    "under xvfb-run, or watch the run in the browser with --viewer")
    observers: list[Any] = []
    if args.summary:  # find out now, not after a long run, that the summary cannot be written
        folder = os.path.dirname(os.path.abspath(args.summary))
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as e:
            return _die(f"cannot write the summary to {args.summary}: {e.strerror}")
        if not os.access(folder, os.W_OK) or os.path.isdir(args.summary):
            return _die(f"cannot write the summary to {args.summary}: not a writable file path")
    exts = _optional_modules(RUN_EXTENSIONS)
    try:
        for ext in exts:
            observers.extend(ext.run_observers(args, task))
    except (OSError, ValueError) as e:
        return _die(str(e))
    opts = RunOptions(backend=args.backend, gui=args.gui, realtime=args.realtime, seed=args.seed,
                      tick_hz=args.tick_hz, timeout_s=args.timeout, robot=getattr(args, "robot", None),
                      observers=observers, display=False if args.quiet else None, plan_first=args.plan_first)

    # Ctrl-C ends the run; more Ctrl-C cannot cut its log and summary short, nor (once the run was
    # interrupted) the exit with 130 that follows
    with interrupt_once(keep_after_interrupt=True):
        code = _run_and_report(args, task, opts, exts)
    summary = getattr(args, "_ptm_summary", None)
    if summary is not None and summary.get("status") != "INTERRUPTED":
        for ext in exts:  # after the verdict: a viewer may keep serving until Ctrl-C
            after = getattr(ext, "after_run", None)
            if callable(after):
                after(args, summary)
    return code


def _run_and_report(args: argparse.Namespace, task: Any, opts: Any, exts: list[Any]) -> int:
    from .backend import BackendError
    from .trees.runner import run_task, verdict_line, write_summary

    try:
        result = run_task(task, opts)
    except (ValueError, BackendError) as e:  # the backend refused the tree or could not start (rosbridge
        # unreachable, a URDF PyBullet cannot load)
        if args.summary:
            try:
                write_summary({"task": task.name, "file": task.file, "backend": args.backend, "status": "INVALID",
                               "error": str(e)}, args.summary)
            except OSError as w:
                print(f"ptm: cannot write the summary to {args.summary}: {w}", file=sys.stderr)
        return _die(str(e))
    summary = result.summary
    exc = summary.pop("_exception", None)
    summary_error = None
    if args.summary:
        try:
            write_summary(summary, args.summary)
        except OSError as e:  # the run is over: report it as usual, then fail (exit 2) for the lost summary
            summary_error = f"cannot write the summary to {args.summary}: {e}"
    if exc is not None:
        print(summary.get("traceback", ""), file=sys.stderr)
    print(verdict_line(summary), flush=True)
    args._ptm_summary = summary  # for the after-run hooks (outside interrupt_once: a viewer waits for Ctrl-C)
    if summary_error is not None:
        return _die(summary_error)
    return result.exit_code


def _load_xml(path: str, scene: Optional[str], overrides: list[str], main_tree: Optional[str]) -> Any:
    """A BehaviorTree.CPP XML tree, with the scene and blackboard of ``scene`` (a task file) if given."""
    from .interop.btxml_import import load_task_from_xml, load_tree_from_xml

    if scene:
        return load_task_from_xml(path, scene, overrides, main_tree_id=main_tree)
    return load_tree_from_xml(path, overrides, main_tree_id=main_tree)


def cmd_validate(args: argparse.Namespace) -> int:
    """Check task files (YAML) or BehaviorTree.CPP XML trees without running them: every problem a run would meet
    in the file is reported as FILE:LINE:COL with the fix.

    Examples:
      ptm validate examples/*.yaml
      ptm validate --plan examples/open_door.yaml --set scene.doors.0.width_m=0.9
    Exit codes: 0 valid (warnings may be printed), 2 invalid (with --plan: or a planning check fails).
    """
    from .located.errors import TreeLoadError

    if (args.scene or args.main_tree) and not all(p.lower().endswith(".xml") for p in args.files):
        return _die("--scene and --main-tree are for XML trees; a YAML task file holds its own scene and tree")
    worst = 0
    for path in args.files:
        xml = path.lower().endswith(".xml")
        if not xml and _is_scenario(path):
            worst = max(worst, _validate_scenario(path, args.set))
            continue
        try:
            task = _load_xml(path, args.scene, args.set, args.main_tree) if xml else _load(path, args.set)
        except TreeLoadError as e:
            print(str(e), file=sys.stderr)
            worst = 2
            continue
        if xml and not args.scene:
            n = sum(1 for _ in task.tree.walk())
            print(f"{path}: OK ({n} node{'' if n == 1 else 's'}; tree only: blackboard reads and scene names are "
                  "checked with --scene TASK.yaml)")
            continue
        for w in task.warnings:
            print(str(w), file=sys.stderr)
        n = sum(1 for _ in task.tree.walk())
        if task.scene:
            k = len(task.scene.get("objects", []) or [])
            where = f", scene with {k} object{'' if k == 1 else 's'}"
        else:
            where = "; no scene: runs only on --backend hardware (the simulator needs 'scene:')"
        if args.plan and task.scene:
            from .trees.plan_check import plan_check

            problems = plan_check(task, progress=(lambda line: print(f"{path}: checking {line} ...",
                                                                     file=sys.stderr)) if args.verbose else None)
            if problems:
                for p in problems:
                    print(str(p), file=sys.stderr)
                worst = 2
                continue
            where += "; planning checks pass"
        print(f"{path}: OK ({n} node{'' if n == 1 else 's'}{where})")
    return worst


def _is_scenario(path: str) -> bool:
    name = os.path.basename(path)
    return name.endswith((".scenario.yaml", ".scenario.yml"))


def _validate_scenario(path: str, overrides: list[str]) -> int:
    """``ptm validate`` of a ``*.scenario.yaml``: the file, its task, every variant and expectation, as
    when pytest collects it (with ``--set`` on every variant). Returns the exit code."""
    from .located.errors import TreeLoadError
    from .scenarios.scenario import load_scenario

    try:
        sc = load_scenario(path)
        for name in sc.variants:
            if overrides:
                sc.load(name, overrides)
    except TreeLoadError as e:
        print(str(e), file=sys.stderr)
        return 2
    names = list(sc.variants)
    print(f"{path}: OK (scenario {sc.name!r} of {sc.task_file}, {len(names)} variant{'' if len(names) == 1 else 's'}: "
          f"{', '.join(names)})")
    return 0


def cmd_render(args: argparse.Namespace) -> int:
    """Draw a task file's tree from the YAML alone (includes expanded, parameters substituted); nothing is
    simulated.

    Examples:
      ptm render examples/pick_and_lift.yaml                 (unicode, printed)
      ptm render examples/regrasp.yaml --format svg -o regrasp.svg
      ptm render examples/pick_and_lift.yaml --format dot --blackboard -o tree.dot
    svg and png need Graphviz (apt-get install graphviz); dot, ascii and unicode do not.
    Exit codes: 0 drawn, 2 invalid input (the file's problems, as ptm validate reports them).
    """
    import py_trees

    from .located.errors import TreeLoadError
    from .trees.factory import build_tree

    try:
        task = _load(args.file, args.set)
    except TreeLoadError as e:
        print(str(e), file=sys.stderr)
        return 2
    py_trees.blackboard.Blackboard.clear()
    root = build_tree(task).root
    fmt = args.format
    if fmt in ("ascii", "unicode"):
        text = (py_trees.display.ascii_tree if fmt == "ascii" else py_trees.display.unicode_tree)(root)
        if args.output:
            try:
                with open(args.output, "w") as f:
                    f.write(text + "\n")
            except OSError as e:
                return _die(f"cannot write {args.output}: {e.strerror or e}")
        else:
            print(text)
        return 0
    graph = py_trees.display.dot_tree(root, with_blackboard_variables=args.blackboard)
    out = args.output or os.path.splitext(os.path.basename(args.file))[0] + "." + fmt
    if fmt != "dot":
        import shutil

        if shutil.which("dot") is None:
            return _die("rendering svg/png needs Graphviz's 'dot' (apt-get install graphviz); --format dot works without it")
    try:
        graph.write(out, format="raw" if fmt == "dot" else fmt)
    except OSError as e:
        return _die(f"cannot write {out}: {e.strerror or e}")
    print(out)
    return 0


def cmd_behaviours(args: argparse.Namespace) -> int:
    """The behaviours, composites and decorators this installation has (plugins included), each with its
    parameters: type, unit, default and what it does.

    Examples:
      ptm behaviours                      every one, with its parameters
      ptm behaviours MoveCartesian        one
      ptm behaviours --format markdown    the table of docs/behaviours.md
    Exit codes: 0, 2 no such behaviour (with the closest name).
    """
    from .behaviors import registry
    from .trees.nodes import COMPOSITE_DOCS, COMPOSITES, DECORATOR_DOCS, DECORATORS

    if getattr(args, "format", "text") == "markdown":
        from .interop.docs import behaviours_markdown

        print(behaviours_markdown())
        return 0
    items = registry.behaviours()
    if args.name:
        if args.name not in items and args.name not in COMPOSITES and args.name not in DECORATORS:
            from .located.errors import did_you_mean

            return _die(f"no behaviour {args.name!r}; {did_you_mean(args.name, list(items)) or 'run ptm behaviours'}")
    for name, cls in items.items():
        if args.name and name != args.name:
            continue
        print(f"{name}{'  [sim only]' if cls.SIM_ONLY else ''}: {registry.describe(cls)}")
        for key, p in cls.all_params().items():
            req = "required" if p.required else f"default {p.to_json_default()!r}"
            print(f"    {key}: {p.describe_type()}, {req}" + (f" - {p.doc}" if p.doc else ""))
    if not args.name or args.name in COMPOSITES or args.name in DECORATORS:
        for title, table, docs in (("composite", COMPOSITES, COMPOSITE_DOCS), ("decorator", DECORATORS, DECORATOR_DOCS)):
            for name, decl in table.items():
                if args.name and name != args.name:
                    continue
                print(f"{name}  [{title}]: {docs[name]}")
                for key, p in decl.items():
                    req = "required" if p.required else f"default {p.to_json_default()!r}"
                    print(f"    {key}: {p.describe_type()}, {req}" + (f" - {p.doc}" if p.doc else ""))
    return 0


def _backend_name(value: str) -> str:
    """``--backend``: the name of an installed backend (the registry, :mod:`.trees.backends`)."""
    from .trees.backends import BUILTIN, available
    from .located.errors import did_you_mean

    if value in BUILTIN:  # no scan of the installed packages for a built-in name (issue 35)
        return value
    known = available()
    if value not in known:
        hint = did_you_mean(value, known)
        raise argparse.ArgumentTypeError(f"unknown backend {value!r}{'; ' + hint if hint else ''} "
                                         f"(installed: {', '.join(known)})")
    return value


def cmd_backends(args: argparse.Namespace) -> int:
    """The backends this installation has: the built-in 'sim' (embedded PyBullet) and 'hardware' (a robot over
    rosbridge), and any a package installs under the entry-point group py_trees_manipulation.backends, each
    with its factory.

    Example:
      ptm backends
      ptm run examples/pick_and_lift.yaml --backend sim
    Exit codes: 0.
    """
    from .trees.backends import available

    for name, target in available().items():
        print(f"{name}: {target}")
    return 0


# ------------------------------------------------------------------------------------------------
def build_parser(command: Optional[str] = None) -> argparse.ArgumentParser:
    """The ``ptm`` parser. ``command``: the subcommand about to run, when known; one of
    :data:`BUILTIN_COMMANDS` needs no other module's subcommand, so those are left out (a
    ``ptm run`` starts 6 ms of CPU sooner, issue 35). Default: every subcommand."""
    from .commands import options
    from .commands.subcommands import add_command

    parser = argparse.ArgumentParser(
        prog="ptm",
        description="Run, check and draw behaviour trees for robot manipulation (PyBullet sim or a real robot).",
        epilog="Examples:\n  ptm run examples/pick_and_lift.yaml\n  ptm run examples/pick_and_lift.yaml --gui --realtime\n"
               "  ptm validate examples/*.yaml\n  ptm render examples/pick_and_lift.yaml --format unicode\n"
               "Exit codes: 0 success, 1 task failed or timed out, 2 invalid input, 130 interrupted.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    set_help = "override a value: parameters.NAME=V, scene.objects.0.mass_kg=V, blackboard.KEY=V, tree.NODE.PARAM=V (repeatable)"
    p = add_command(sub, "run", cmd_run, "run a task tree")
    p.add_argument("file", help="task file (YAML), or a BehaviorTree.CPP XML tree with --scene")
    p.add_argument("--scene", metavar="TASK.yaml", help="for an XML tree: the task file whose scene and blackboard to use")
    p.add_argument("--main-tree", metavar="ID", help="for an XML file with several trees and no main_tree_to_execute: "
                                                    "the BehaviorTree ID to run")
    p.add_argument("--backend", default="sim", type=_backend_name, metavar="NAME",
                   help="where to run: an installed backend (`ptm backends`; default: sim, the embedded PyBullet "
                        "simulator; hardware: a real robot over rosbridge)")
    p.add_argument("--gui", action="store_true", help="open the PyBullet GUI (sim)")
    p.add_argument("--realtime", action="store_true", help="pace the simulation to the wall clock")
    p.add_argument("--seed", type=options.SEED, default=None, metavar="N",
                   help="random seed, 0 ... 4294967295 (overrides scene.seed)")
    p.add_argument("--tick-hz", type=options.TICK_HZ, default=30.0, metavar="HZ",
                   help="tree tick rate in backend time, 0.01 ... 10000 Hz (default: 30)")
    p.add_argument("--timeout", type=options.TIMEOUT_S, default=None, metavar="SIM_SECONDS",
                   help="give up after this much backend time, > 0 s (default 300)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help=set_help)
    p.add_argument("--summary", metavar="OUT.json", help="write the run summary as JSON")
    p.add_argument("-q", "--quiet", action="store_true", help="no live tree display even on a terminal")
    p.add_argument("--plan-first", action=argparse.BooleanOptionalAction, default=None,
                   help="before the first goal, run the tree's planning checks (ptm validate --plan) in the backend's "
                        "collision world, the robot where it is: a task that cannot be done fails before anything "
                        "moves, and the motions follow the plans it checked (default: on; --no-plan-first plans "
                        "each motion as it starts)")
    for ext in _optional_modules(RUN_EXTENSIONS):
        ext.add_run_arguments(p)

    p = add_command(sub, "validate", cmd_validate,
                    "check task files without running them", formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="+", help="task files (YAML) or BehaviorTree.CPP XML trees")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help=set_help)
    p.add_argument("--scene", metavar="TASK.yaml", help="for XML trees: the task file whose scene and blackboard they "
                                                       "run with (checks blackboard reads and scene names too)")
    p.add_argument("--main-tree", metavar="ID", help="for XML files with several trees and no main_tree_to_execute")
    p.add_argument("--plan", action="store_true",
                   help="also run the tree's planning checks against the scene as written, without the simulator: "
                        "CheckReachability (the whole door arc, drawer pull, pick and place) and ChooseGrasp (a grasp "
                        "of the object where the file puts it, and the place); a failure names the node's line and a "
                        "base pose that works (a few seconds)")
    p.add_argument("-v", "--verbose", action="store_true", help="with --plan: say which check runs")

    p = add_command(sub, "render", cmd_render,
                    "draw a task tree (no simulator needed)", formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", help="task file (YAML)")
    p.add_argument("--format", default="unicode", choices=["ascii", "unicode", "dot", "svg", "png"],
                   help="text to the terminal (ascii, unicode: the default), Graphviz source (dot) or an image "
                        "(svg, png)")
    p.add_argument("-o", "--output", help="output file (default: FILE stem + format; text formats print)")
    p.add_argument("--blackboard", action="store_true", help="also draw blackboard keys (dot/svg/png)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help=set_help)

    p = add_command(sub, "behaviours", cmd_behaviours,
                    "list behaviours, composites and decorators with their parameters", aliases=['behaviors'], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("name", nargs="?", help="show only this one (e.g. MoveCartesian, Sequence, Retry)")
    p.add_argument("--format", choices=["text", "markdown"], default="text",
                   help="markdown: the behaviour table of docs/behaviours.md (generated from the registry)")

    p = add_command(sub, "backends", cmd_backends,
                    "list the installed backends (ptm run --backend NAME)", formatter_class=argparse.RawDescriptionHelpFormatter)

    if command not in BUILTIN_COMMANDS:
        for mod in _optional_modules(COMMAND_MODULES):
            reg = getattr(mod, "register", None)
            if callable(reg):
                reg(sub)
    return parser


def _end_by_sigint() -> None:
    """End the process by SIGINT (once the command has written everything: log, summary, verdict),
    the Unix convention for a program stopped by Ctrl-C (https://www.cons.org/cracauer/sigint.html,
    followed by CPython itself since 3.8): the shell reports exit status 130 and stops a script's
    loop, where a plain ``exit(130)`` lets the loop go on; Python's ``subprocess`` reports -2.

    Deterministic on purpose: CPython ends the process by SIGINT on its own whenever a
    KeyboardInterrupt once escaped code run by ``exec`` of a string (a dataclass being created when the
    Ctrl-C lands), even when ``ptm`` then caught it and returned 130; so some interrupted runs ended
    as 130, others by SIGINT. The interpreter's shutdown is skipped: nothing is left to write, and it
    would wait for a motion planner's worker thread still searching. Outside POSIX: exit code 130."""
    import signal

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed or broken pipe: nothing more to say there
            pass
    if os.name == "posix":
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    os._exit(130)


def main(argv: Optional[Sequence[str]] = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(words[0] if words else None)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    import signal

    try:
        sigint_before = signal.getsignal(signal.SIGINT)
    except (ValueError, OSError):  # pragma: no cover - no signals here
        sigint_before = None
    code = 0
    try:
        code = int(args.func(args))
        return code
    except KeyboardInterrupt:
        code = 130
        return code
    except BrokenPipeError:
        return 0
    finally:
        # the program itself exits now: a late Ctrl-C must not turn 130 into a kill; called from
        # Python (argv given), the caller's handler comes back
        try:
            if argv is None:
                signal.signal(signal.SIGINT, signal.SIG_IGN)
            elif sigint_before is not None:
                signal.signal(signal.SIGINT, sigint_before)
        except (ValueError, OSError, TypeError):  # pragma: no cover - not the main thread
            pass
        if argv is None and "ompl" not in sys.modules:
            # the interpreter's shutdown collects garbage over every object a run left (NumPy's,
            # PyBullet's, the tree's...) several times: 40-50 ms of a `ptm run`'s CPU (issue 35).
            # Frozen, they are left to the exit (0-10 ms); atexit handlers and weakref finalizers
            # still run. Not once OMPL is loaded: its bindings keep objects that only the shutdown's
            # last collections free, and nanobind reports those still alive as leaks
            import gc

            gc.freeze()
        if argv is None and code == 130:
            _end_by_sigint()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
