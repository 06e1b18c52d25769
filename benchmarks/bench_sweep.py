"""Sweep throughput: the same sweep with 1 worker (in this process) and with 2 worker processes.

Sweeps the fragile-grasp object's ``crush_force_n`` and ``lateral_friction``
(``examples/fragile_grasp.yaml``); without that example, the pick-and-lift mug's ``mass_kg`` and
``lateral_friction`` (``examples/pick_and_lift.yaml``). Prints both success-rate tables (they must be
identical: same seeds), the wall times and the speed-up (goal: >= 1.6x on 2 cores). Wall time
includes starting the worker processes. The CPU seconds spent inside the runs and the load average
show whether other processes competed for the cores (the speed-up is only meaningful on an idle
machine).

    python benchmarks/bench_sweep.py [--trials 2] [--workers 2] [--file FILE]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "examples")


def _target_index(task) -> int:
    objs = (task.scene or {}).get("objects") or []
    for i, o in enumerate(objs):
        if "crush_force_n" in o:
            return i
    target = ((task.scene or {}).get("task") or {}).get("target_object")
    return next((i for i, o in enumerate(objs) if o.get("name") == target), 0)


def main() -> int:
    from py_trees_manipulation.scenarios.sweep import SweepConfig, parse_grid, run_sweep
    from py_trees_manipulation.trees.loader import load_task

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--file", help="task file (default: examples/fragile_grasp.yaml, else pick_and_lift.yaml)")
    ap.add_argument("--trials", type=int, default=2, help="trials per grid point (default 2)")
    ap.add_argument("--workers", type=int, default=2, help="workers of the parallel run (default 2)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    fragile = os.path.normpath(os.path.join(EXAMPLES, "fragile_grasp.yaml"))
    file = args.file or (fragile if os.path.exists(fragile) else os.path.normpath(os.path.join(EXAMPLES, "pick_and_lift.yaml")))
    task = load_task(file)
    i = _target_index(task)
    obj = task.scene["objects"][i]
    if "crush_force_n" in obj:
        c = float(obj["crush_force_n"])
        # the tactile Grab squeezes with about 1.2 N per finger: 0.2 x crush_force_n (1 N for the egg) crushes
        grid = [f"scene.objects.{i}.crush_force_n={c * 0.2:g},{c * 0.5:g},{c:g}", f"scene.objects.{i}.lateral_friction=0.3,1.0"]
    else:
        grid = [f"scene.objects.{i}.mass_kg=0.2,0.8", f"scene.objects.{i}.lateral_friction=0.4,1.0"]
    base = dict(grid=[parse_grid(g) for g in grid], trials=args.trials, seed=args.seed)
    n = args.trials
    for g in grid:
        n *= len(g.split("=", 1)[1].split(","))
    print(f"sweep of {os.path.relpath(file)} (object {obj.get('name')!r}): {' x '.join(grid)}, "
          f"{args.trials} trial(s) per point = {n} runs; {os.cpu_count()} CPU(s)\n")

    timings = {}
    results = {}
    for workers in (1, args.workers):
        t0 = time.perf_counter()
        results[workers] = run_sweep(SweepConfig(file, workers=workers, **base), progress=False)
        timings[workers] = time.perf_counter() - t0
        r = results[workers]
        cpu = sum(float(row["cpu_time_s"] or 0) for row in r.rows)
        print(f"--- {workers} worker(s): {timings[workers]:.1f} s wall, {timings[workers] / n:.2f} s per run; "
              f"{cpu:.1f} CPU s in the runs ({cpu / n:.2f} per run); load average now {os.getloadavg()[0]:.2f}")
        print(r.table_text() + "\n")

    same = results[1].table_csv() == results[args.workers].table_csv()
    speedup = timings[1] / timings[args.workers]
    print(f"tables identical: {same}")
    print(f"speed-up with {args.workers} workers: {speedup:.2f}x (goal >= 1.6x on 2 cores) -> "
          f"{'met' if speedup >= 1.6 else 'NOT met'}")
    return 0 if same else 1


if __name__ == "__main__":  # the guard is required: worker processes re-import this file
    sys.exit(main())
