"""The CLI property of issue 36 over many random command lines (tests/cli_grammar.py): each case is a
``ptm validate``/``render``/``run`` process with random numeric options and ``--set`` values of the
task format; none may end in a traceback, a hang over 10 s, more than 500 MB resident or an exit code
other than 0, 1, 2.

Prints, per command: cases, exit codes, the slowest case's wall time and the largest peak RSS; then
every case that broke the property, with its command line and the end of its stderr. Exit code 1
when one did.

    python benchmarks/bench_cli_property.py [--examples 60] [--seed 0] [--commands validate,render,run] [--wall-limit 10]
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import shlex
import sys
import time
from pathlib import Path

from hypothesis import HealthCheck, given, seed, settings

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("cli_grammar", ROOT / "tests" / "cli_grammar.py")
grammar = importlib.util.module_from_spec(_spec)
sys.modules["cli_grammar"] = grammar  # dataclasses look their module up
_spec.loader.exec_module(grammar)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=int, default=60)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--commands", default="validate,render,run")
    ap.add_argument("--wall-limit", type=float, default=grammar.TIME_LIMIT_S,
                    help="kill a case after this many wall-clock seconds (default 10: a quiet machine)")
    a = ap.parse_args()
    outcomes = []

    @seed(a.seed)
    @settings(max_examples=a.examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(argv=grammar.command_lines(tuple(a.commands.split(","))))
    def explore(argv):
        outcomes.append(grammar.run_case(argv, wall_limit=a.wall_limit))

    t0 = time.monotonic()
    explore()
    by_cmd = collections.defaultdict(list)
    for o in outcomes:
        by_cmd[o.argv[0]].append(o)
    print(f"{len(outcomes)} cases in {time.monotonic() - t0:.0f} s")
    for cmd, os_ in sorted(by_cmd.items()):
        codes = collections.Counter(o.code for o in os_)
        print(f"  ptm {cmd:8s} {len(os_):4d} cases, exit codes {dict(sorted(codes.items(), key=str))}, "
              f"slowest {max(o.wall_s for o in os_):.1f} s wall / {max(o.cpu_s for o in os_):.1f} s CPU, "
              f"largest peak RSS {max(o.max_rss_mb for o in os_):.0f} MB")
    bad = [o for o in outcomes if o.problems()]
    for o in bad:
        print(f"\nBROKEN: ptm {shlex.join(o.argv)}\n  {'; '.join(o.problems())} (exit {o.code}, {o.wall_s:.1f} s wall, {o.cpu_s:.1f} s CPU, "
              f"{o.max_rss_mb:.0f} MB)\n  " + o.stderr[-1500:].replace("\n", "\n  "))
    print(f"\n{len(bad)} of {len(outcomes)} cases broke the property")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
