"""``ptm test`` (scenario files through pytest, JUnit XML) and ``ptm sweep`` (parameter sweeps).

Registered by :data:`py_trees_manipulation.cli.COMMAND_MODULES` through :func:`register`.
``ptm test`` needs pytest (the ``test`` extra); without it, it says so and exits 2. It writes
JUnit XML only where asked: ``--junit-xml FILE``, or ``DIR/ptm-test-results.xml`` with
``--log-dir DIR``; nothing lands in the working directory by default.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from typing import Any

from ..commands import options
from ..commands.subcommands import add_command

#: JUnit XML file name inside ``--log-dir`` (when ``--junit-xml`` is not given)
DEFAULT_JUNIT = "ptm-test-results.xml"
PYTEST_MISSING = "ptm test needs pytest: pip install -e '.[test]' (or pip install pytest)"


def _find_scenarios(paths: list[str]) -> list[str]:
    from .scenario import is_scenario_file

    found: list[str] = []
    for path in paths:
        if os.path.isfile(path):
            found.append(path)
            continue
        for root, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in ("__pycache__", "node_modules"))
            found.extend(os.path.join(root, f) for f in sorted(files) if is_scenario_file(f))
    return found


def _plugin_registered() -> bool:
    from importlib.metadata import entry_points

    return any(ep.value == "py_trees_manipulation.scenarios.pytest_plugin" for ep in entry_points(group="pytest11"))


def junit_path(args: argparse.Namespace) -> str | None:
    """Where ``ptm test`` writes JUnit XML: ``--junit-xml`` if given (``''``: nowhere), else
    ``<--log-dir>/ptm-test-results.xml`` with a log dir, else nowhere."""
    if args.junit_xml is not None:
        return args.junit_xml or None
    if args.log_dir and not args.no_log:
        return os.path.join(args.log_dir, DEFAULT_JUNIT)
    return None


def cmd_test(args: argparse.Namespace) -> int:
    """Run every *.scenario.yaml under the paths through pytest, one test per variant, headless in the simulator;
    optionally write JUnit XML. Needs pytest (pip install -e '.[test]').

    Examples:
      ptm test tests/scenarios
      ptm test tests/scenarios -k 'heavy and not slow' --junit-xml results.xml
      ptm test tests/scenarios --log-dir ci-runs   # run logs and ci-runs/ptm-test-results.xml
    Exit codes (pytest's): 0 all passed, 1 some failed, 2 interrupted, invalid input or no pytest, 5 nothing collected.
    """
    try:
        import pytest
    except ModuleNotFoundError as e:
        if e.name != "pytest":
            raise
        print(PYTEST_MISSING, file=sys.stderr)
        return 2

    missing = [p for p in args.paths if not os.path.exists(p)]
    if missing:
        print(f"ptm test: no such file or directory: {', '.join(missing)}", file=sys.stderr)
        return 2
    files = _find_scenarios(args.paths)
    if not files:
        print(f"ptm test: no *.scenario.yaml under {', '.join(args.paths)}", file=sys.stderr)
        return 5  # pytest's "no tests collected"
    argv = list(files) + ["-p", "no:cacheprovider", "-o", "addopts=", "-rfE"]
    junit = junit_path(args)
    if junit:
        argv += ["--junit-xml", junit, "-o", "junit_suite_name=ptm-scenarios", "-o", "junit_family=xunit2"]
    if args.k:
        argv += ["-k", args.k]
    if args.log_dir:
        argv += ["--ptm-log-dir", args.log_dir]
    if args.no_log:
        argv += ["--ptm-no-log"]
    if args.seed is not None:
        argv += ["--ptm-seed", str(args.seed)]
    if args.exitfirst:
        argv += ["-x"]
    argv += ["-v"] if args.verbose else ["-q"]
    argv += shlex.split(args.pytest_args or "")
    plugins: list[Any] = []
    if not _plugin_registered():  # running from a source tree without the entry point
        from . import pytest_plugin

        plugins.append(pytest_plugin)
    return int(pytest.main(argv, plugins=plugins))


def cmd_sweep(args: argparse.Namespace) -> int:
    r"""Run FILE (task or scenario) for every combination of --grid values and --trials seeded trials (with
    --random draws), in parallel, and write runs.csv, success_rates.csv/.txt, success_rate.png and sweep.json.
    Success = status SUCCESS and the file's expectations hold.

    Example:
      ptm sweep examples/pick_and_lift.yaml --grid scene.objects.0.mass_kg=0.1,0.5,1.0 \
          --random scene.objects.0.lateral_friction=0.3:1.0 --trials 10 --workers 2 --seed 1
    """
    from ..located.errors import TreeLoadError
    from .sweep import SweepConfig, SweepError, parse_grid, parse_random, run_sweep

    try:
        config = SweepConfig(
            file=args.file, grid=[parse_grid(g) for g in args.grid], random=[parse_random(r) for r in args.random],
            trials=args.trials, seed=args.seed, variant=args.variant, overrides=list(args.set),
            workers=args.workers if args.workers is not None else (os.cpu_count() or 1),
            executor=args.executor, address=args.address, tick_hz=args.tick_hz, timeout_s=args.timeout,
            backend=args.backend, out_dir=args.output or _default_out(args.file), plot_param=args.plot,
        )
        if args.address and args.executor != "ray":
            raise SweepError("--address is for --executor ray")
        if args.tick_hz <= 0:
            raise SweepError("--tick-hz must be > 0")
        result = run_sweep(config, progress=not args.no_progress)
    except TreeLoadError as e:
        print(str(e), file=sys.stderr)
        return 2
    except SweepError as e:
        print(f"ptm sweep: {e}", file=sys.stderr)
        return 2
    print(result.table_text())
    n = len(result.rows)
    errors = sum(1 for r in result.rows if r.get("status") == "ERROR")
    print(f"\n{n} runs in {result.wall_time_s:.1f} s wall ({config.executor}, {config.workers} worker(s)); "
          f"success rate {result.success_rate * 100:.1f} %" + (f"; {errors} run(s) failed with an error" if errors else ""))
    if errors:
        first = next(r for r in result.rows if r.get("status") == "ERROR")
        print(f"  first error (run {first['run']}): {first.get('failure')}", file=sys.stderr)
    for name, path in result.files.items():
        print(f"  {name}: {path}")
    if args.min_success_rate is not None and result.success_rate < args.min_success_rate:
        print(f"ptm sweep: success rate {result.success_rate:.3f} is below --min-success-rate {args.min_success_rate:g}", file=sys.stderr)
        return 1
    return 0


def _default_out(file: str) -> str:
    stem = os.path.basename(file)
    for suffix in (".scenario.yaml", ".scenario.yml", ".yaml", ".yml"):
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    return os.path.join("sweeps", stem)


def register(sub: Any) -> None:
    """Add ``test`` and ``sweep`` to the ``ptm`` subcommands."""
    p = add_command(sub, "test", cmd_test, "run *.scenario.yaml scenario tests (pytest, JUnit XML)")
    p.add_argument("paths", nargs="+", metavar="DIR", help="directories (searched recursively) or scenario files")
    p.add_argument("--junit-xml", default=None, metavar="OUT.xml",
                   help=f"write a JUnit XML report here (default: none, or DIR/{DEFAULT_JUNIT} with --log-dir DIR; "
                        "'' for none)")
    p.add_argument("-k", metavar="EXPR", help="only tests matching this pytest -k expression (e.g. 'heavy and not slow')")
    p.add_argument("--log-dir", metavar="DIR", help="write run logs under DIR/<scenario>/<variant>.mcap (default: a temporary directory)")
    p.add_argument("--no-log", action="store_true", help="do not write run logs")
    p.add_argument("--seed", type=options.SEED, default=None, metavar="N",
                   help="random seed for every scenario (default: each scene's own seed)")
    p.add_argument("-x", "--exitfirst", action="store_true", help="stop at the first failure")
    p.add_argument("-v", "--verbose", action="store_true", help="one line per test")
    p.add_argument("--pytest-args", default="", metavar="ARGS",
                   help="more pytest arguments, one string (e.g. '--maxfail 2 -ra')")

    p = add_command(sub, "sweep", cmd_sweep, "run a task over a parameter grid and random draws, in parallel")
    p.add_argument("file", help="task or scenario file (YAML)")
    p.add_argument("--grid", action="append", default=[], metavar="KEY=V1,V2,...",
                   help="sweep KEY over these values (or KEY=LO:HI:N, N evenly spaced); repeat for a full factorial grid")
    p.add_argument("--random", action="append", default=[], metavar="KEY=LO:HI", help="draw KEY uniformly in [LO, HI) per trial (seeded)")
    p.add_argument("--trials", type=options.integer(1), default=1, metavar="N",
                   help="trials per grid point, each with its own seed and draws (default 1; a sweep runs at most "
                        "100000 runs)")
    p.add_argument("--workers", type=options.integer(1, 256), default=None, metavar="K",
                   help="parallel runs, 1 ... 256 (default: the number of CPUs)")
    p.add_argument("--seed", type=options.SEED, default=0, metavar="S",
                   help="base seed, 0 ... 4294967295: trial j's seed and draws derive from (S, j) (default 0)")
    p.add_argument("-o", "--output", metavar="OUT_DIR", help="output directory (default: sweeps/<file stem>)")
    p.add_argument("--executor", default="process", choices=["process", "ray"], help="local processes (default) or Ray")
    p.add_argument("--address", metavar="ADDR", help="Ray cluster address (e.g. ray://head:10001; default: a local Ray)")
    p.add_argument("--variant", default="default", help="the scenario variant to sweep (default: the file as written)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a value in every run (repeatable)")
    p.add_argument("--plot", metavar="KEY", help="plot success rate against this swept key (default: the first grid key)")
    p.add_argument("--tick-hz", type=options.TICK_HZ, default=30.0, metavar="HZ",
                   help="tree tick rate in sim time, 0.01 ... 10000 Hz (default 30)")
    p.add_argument("--timeout", type=options.TIMEOUT_S, default=None, metavar="SIM_SECONDS",
                   help="per-run timeout without a time budget, > 0 s (default 300)")
    p.add_argument("--backend", default="sim", choices=["sim", "fake"], help="sim, or fake: no physics; every action succeeds at once and objects stay at their scene poses, "
                        "so a tree that checks the world (ObjectLifted...) fails: checks the sweep's plumbing "
                        "(grid, seeds, outputs), not the task")
    p.add_argument("--min-success-rate", type=options.real(0.0, 1.0), default=None, metavar="R",
                   help="exit 1 when the overall success rate is below R (0 ... 1)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
