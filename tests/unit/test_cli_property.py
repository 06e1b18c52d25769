"""Property (issue 36): random options and ``--set`` values from a grammar of the task format
(tests/cli_grammar.py) never end ``ptm validate``, ``render`` or ``run`` in a traceback, a hang over
10 s (of CPU: a case is killed when it has used them; one that waits is killed after 60 s, as the
suite's load may keep it from a core), more than 500 MB resident or an exit code other than 0, 1, 2. Each case runs in a process of
its own under limits; the suite tries a handful of derandomized examples (about 15 s), and
``benchmarks/bench_cli_property.py`` tries as many random ones as asked and prints figures.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings

_spec = importlib.util.spec_from_file_location("cli_grammar", Path(__file__).resolve().parents[1] / "cli_grammar.py")
grammar = importlib.util.module_from_spec(_spec)
sys.modules["cli_grammar"] = grammar  # dataclasses look their module up
_spec.loader.exec_module(grammar)


BOMB = "[&a [x, x, x, x, x, x, x, x, x], &b [*a, *a, *a, *a, *a, *a, *a, *a, *a], &c [*b, *b, *b, *b, *b, *b, *b, *b, *b], " \
       "&d [*c, *c, *c, *c, *c, *c, *c, *c, *c], &e [*d, *d, *d, *d, *d, *d, *d, *d, *d], &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]]"


@settings(max_examples=5, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(argv=grammar.command_lines())
# the two cases of the issue, always among them: a traceback, and 25 s and 2.5 GB
@example(argv=["run", "examples/pick_and_lift.yaml", "--no-log", "-q", "--tick-hz", "nan"])
@example(argv=["run", "examples/pick_and_lift.yaml", "--no-log", "-q", "--timeout", "0.1", "--set",
               f"blackboard.junk={BOMB}"])
def test_random_command_lines_end_cleanly(argv):
    outcome = grammar.run_case(argv)
    assert not outcome.problems(), (f"ptm {' '.join(argv)!r}: {'; '.join(outcome.problems())} "
                                    f"(exit {outcome.code}, {outcome.wall_s:.1f} s wall, {outcome.cpu_s:.1f} s CPU, "
                                    f"{outcome.max_rss_mb:.0f} MB)\n"
                                    f"{outcome.stderr[-3000:]}")


def test_the_limits_are_measured():
    """The harness can fail: a case that waits is killed as a hang, and CPU time and memory are measured."""
    hang = grammar.run_case(["run", "examples/pick_and_lift.yaml", "--no-log", "-q", "--timeout", "100000",
                             "--realtime", "--set", "tree.settle.duration_s=1000"],  # a 1000 s wait, at wall pace
                            wall_limit=3.0)
    assert hang.code is None and hang.problems() == ["still running after 3 s (killed)"]
    assert hang.wall_s < 3.0 + 30  # the kill may wait for a core
    ok = grammar.run_case(["validate", "examples/pick_and_lift.yaml"])
    assert ok.code == 0 and ok.problems() == [] and 20 < ok.max_rss_mb < grammar.MEMORY_LIMIT_MB, ok
    assert 0.1 < ok.cpu_s < grammar.TIME_LIMIT_S
