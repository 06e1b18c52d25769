"""Wall time of a run with and without the MCAP run log (goal: the log costs at most 15 %).

Runs the same short PyBullet pick task (tests/integration's scene) three times each way,
alternating, and prints the median wall times and the overhead. Falls back to the viewer's
fake backend (pure tree ticking: a worst case, nothing else costs time) with --fake.

    python benchmarks/bench_logging.py [--fake] [--repeats N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import textwrap
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "integration"))


def sim_run(log_path):
    from test_viewer_browser import TASK

    from py_trees_manipulation.trees.loader import load_task
    from py_trees_manipulation.trees.runner import RunOptions, run_task
    from py_trees_manipulation.viewer import RunLogger

    with tempfile.TemporaryDirectory() as d:
        f = os.path.join(d, "task.yaml")
        with open(f, "w") as fh:
            fh.write(TASK)
        task = load_task(f)
        obs = [RunLogger(log_path)] if log_path else []
        t = time.perf_counter()
        r = run_task(task, RunOptions(display=False, timeout_s=30, observers=obs))
        return time.perf_counter() - t, r.summary["ticks"]


def fake_run(log_path, ticks=600):
    from py_trees_manipulation.viewer import RunLogger, demo

    obs = [RunLogger(log_path)] if log_path else []
    t = time.perf_counter()
    demo.run_loop(demo.demo_tree(), demo.FakeBackend(), obs, ticks)
    return time.perf_counter() - t, ticks


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fake", action="store_true", help="fake backend instead of PyBullet")
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    fn = fake_run if a.fake else sim_run
    with tempfile.TemporaryDirectory() as d:
        fn(None)  # warm up imports and caches
        without, with_log, size = [], [], 0
        for i in range(a.repeats):
            w, ticks = fn(None)
            without.append(w)
            path = os.path.join(d, f"run{i}.mcap")
            w, _ = fn(path)
            with_log.append(w)
            size = os.path.getsize(path)
    m0, m1 = statistics.median(without), statistics.median(with_log)
    print(f"backend: {'fake' if a.fake else 'PyBullet sim'}, {ticks} ticks, {a.repeats} repeats")
    print(f"without log: median {m0 * 1000:.1f} ms ({m0 / ticks * 1e6:.0f} us/tick)")
    print(f"with log:    median {m1 * 1000:.1f} ms ({m1 / ticks * 1e6:.0f} us/tick), file {size / 1024:.0f} KiB")
    print(f"log overhead: {(m1 - m0) * 1000:.1f} ms = {100 * (m1 - m0) / m0:.1f} % of the run "
          f"({(m1 - m0) / ticks * 1e6:.0f} us/tick); goal <= 15 %")


if __name__ == "__main__":
    main()
