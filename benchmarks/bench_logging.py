"""What the run log costs: wall time of ``examples/pick_and_lift.yaml`` with and without it.

Every ``ptm run`` writes a run log by default, so its cost is part of every run. Goal (issue 7):
the log costs at most 15 % of a run's wall time.

Runs the task headless in this process (``load_task`` + ``run_task``, as ``ptm run`` does),
alternating without and with a :class:`~py_trees_manipulation.viewer.RunLogger`, ``--repeats``
times each after one warm-up run of each, and prints the medians and the overhead of the log, in
wall time and in CPU time of this process (``time.process_time``: steadier than wall time on a
shared machine, where other processes stretch the wall clock), and the overhead between the
fastest run of each kind, and the time spent inside the logger's hooks (``on_start``,
``on_tick``, ``on_end``: the log's own cost, measured directly, the steadiest figure on a busy
machine). With ``--profile`` it also prints
the ten most expensive functions of one logged run under cProfile (run-log code only).

``--fake`` measures the viewer's fake backend instead (pure tree ticking, no physics: the worst
case for the log's relative cost, nothing else takes time).

    python benchmarks/bench_logging.py [--task FILE] [--repeats N] [--fake] [--profile]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TASK = ROOT / "examples" / "pick_and_lift.yaml"


HOOK_TIME: list[tuple[float, float]] = []  # (wall, cpu) seconds inside the logger, per logged run


def timed_logger(path):
    """A RunLogger that adds the wall and CPU time spent in its hooks to ``HOOK_TIME``."""
    from py_trees_manipulation.viewer import RunLogger

    class TimedLogger(RunLogger):
        def _timed(self, fn, *args):
            w, c = time.perf_counter(), time.thread_time()
            try:
                return fn(*args)
            finally:
                self.spent[0] += time.perf_counter() - w
                self.spent[1] += time.thread_time() - c

        def on_start(self, run):
            self.spent = [0.0, 0.0]
            self._timed(super().on_start, run)

        def on_tick(self, run):
            self._timed(super().on_tick, run)

        def on_end(self, run, summary):
            self._timed(super().on_end, run, summary)
            HOOK_TIME.append((self.spent[0], self.spent[1]))

    return TimedLogger(path)


def make_sim_run(task_file: Path):
    from py_trees_manipulation.trees.loader import load_task
    from py_trees_manipulation.trees.runner import RunOptions, run_task

    task = load_task(str(task_file))

    def run(log_path):
        obs = [timed_logger(log_path)] if log_path else []
        w, c = time.perf_counter(), time.process_time()
        r = run_task(task, RunOptions(display=False, observers=obs))
        w, c = time.perf_counter() - w, time.process_time() - c
        if r.summary["status"] != "SUCCESS":
            raise SystemExit(f"{task_file}: run ended {r.summary['status']}: {r.summary.get('error')}")
        return w, c, r.summary["ticks"]

    return run


def fake_run(log_path, ticks=600):
    from py_trees_manipulation.viewer import demo

    obs = [timed_logger(log_path)] if log_path else []
    w, c = time.perf_counter(), time.process_time()
    demo.run_loop(demo.demo_tree(), demo.FakeBackend(), obs, ticks)
    return time.perf_counter() - w, time.process_time() - c, ticks


def profile(fn, path: str) -> None:
    import cProfile
    import pstats

    pr = cProfile.Profile()
    pr.enable()
    fn(path)
    pr.disable()
    print("\ncProfile of one logged run (cumulative, run-log code):")
    pstats.Stats(pr, stream=sys.stdout).sort_stats("cumulative").print_stats(
        r"viewer/|observers\.py|telemetry|mcap/writer", 10)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--task", type=Path, default=DEFAULT_TASK, help="task file (default examples/pick_and_lift.yaml)")
    ap.add_argument("--repeats", type=int, default=7, help="runs each way (default 7)")
    ap.add_argument("--fake", action="store_true", help="the viewer's fake backend instead of PyBullet")
    ap.add_argument("--profile", action="store_true", help="also profile one logged run")
    a = ap.parse_args()
    fn = fake_run if a.fake else make_sim_run(a.task)
    with tempfile.TemporaryDirectory() as d:
        fn(None)  # warm up imports and caches, both ways
        fn(os.path.join(d, "warm.mcap"))
        without, with_log, size = [], [], 0
        HOOK_TIME.clear()
        for i in range(a.repeats):
            w, c, ticks = fn(None)
            without.append((w, c))
            path = os.path.join(d, f"run{i}.mcap")
            w, c, _ = fn(path)
            with_log.append((w, c))
            size = os.path.getsize(path)
        hooks = list(HOOK_TIME)
        if a.profile:
            profile(fn, os.path.join(d, "profiled.mcap"))
    w0, w1 = (statistics.median(x[0] for x in runs) for runs in (without, with_log))
    c0, c1 = (statistics.median(x[1] for x in runs) for runs in (without, with_log))
    where = "fake backend" if a.fake else f"{a.task.name} (PyBullet, headless)"
    print(f"\n{where}: {ticks} ticks, median of {a.repeats} runs each way, interleaved")
    print(f"without log: wall {w0 * 1000:7.1f} ms  cpu {c0 * 1000:7.1f} ms")
    print(f"with log:    wall {w1 * 1000:7.1f} ms  cpu {c1 * 1000:7.1f} ms  (file {size / 1024:.0f} KiB)")
    b0, b1 = (min(x[0] for x in runs) for runs in (without, with_log))
    print(f"fastest runs: wall {b0 * 1000:7.1f} ms without, {b1 * 1000:7.1f} ms with log: "
          f"{100 * (b1 - b0) / b0:+.1f} % (other processes only ever add time: the least disturbed pair)")
    print(f"log overhead: wall {(w1 - w0) * 1000:+.1f} ms = {100 * (w1 - w0) / w0:+.1f} % "
          f"({(w1 - w0) / ticks * 1e6:+.0f} us/tick); cpu {(c1 - c0) * 1000:+.1f} ms = "
          f"{100 * (c1 - c0) / c0:+.1f} % ({(c1 - c0) / ticks * 1e6:+.0f} us/tick)")
    hw, hc = statistics.median(h[0] for h in hooks), statistics.median(h[1] for h in hooks)
    print(f"inside the logger's hooks: wall {hw * 1000:.1f} ms = {100 * hw / w0:.1f} % of the run without log "
          f"({hw / ticks * 1e6:.0f} us/tick); cpu {hc * 1000:.1f} ms = {100 * hc / c0:.1f} % of its cpu "
          f"({hc / ticks * 1e6:.0f} us/tick); goal <= 15 %")


if __name__ == "__main__":
    main()
