"""Collision checking and OMPL planning for the Panda in the clutter scene (prints figures).

Run: ``python benchmarks/bench_motion.py [--queries 50] [--states 5000] [--time 2.0]``

Scene: ``examples/pick_from_clutter.yaml`` (table, box, cereal box, shelf board) in the collision
world (:class:`~py_trees_manipulation.collision.world.CollisionWorld`), padding 0.01 m.

* **Checks per second**: :meth:`StateChecker.is_valid` on seeded uniform random arm configurations
  (wall clock and process CPU time; goal >= 25,000 states/s CPU, issue 35), and the fraction found valid.
* **Plans**: ``--queries`` seeded start/goal pairs of collision-free configurations (the first
  start is ``ready``), each planned by ``plan_joint_path`` (seed = the query's index): the straight
  segment when it is clear, else RRTConnect and simplification: median and p95 wall time (goal:
  median <= 50 ms), checks per plan, how many needed OMPL, failures; then the queries that needed
  OMPL alone.
* **The checker's cost**: the same queries with an always-valid checker (the straight segment is
  then always clear), and the ratio of the medians; then RRTConnect + simplification on the queries
  the straight segment did not solve, with our checker and with an always-valid one.

Figures depend on the machine's load (other processes share its cores): the CPU-time rate is the
one to compare between runs. Never a timed test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SCENE = os.path.join(HERE, "..", "examples", "pick_from_clutter.yaml")
READY = [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785]


def build_world():
    import py_trees_manipulation.sim  # noqa: F401  (registers the scene sections)
    from py_trees_manipulation.collision.world import CollisionWorld
    from py_trees_manipulation.scene.spec import parse_scene

    from py_trees_manipulation.trees.loader import load_task

    task = load_task(SCENE)  # the scene with the task's ${parameters} substituted
    return CollisionWorld.from_scene(parse_scene(task.scene, base_dir=os.path.dirname(SCENE)))


def queries(checker, lower, upper, n: int, seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)

    def valid_sample() -> np.ndarray:
        while True:
            q = rng.uniform(lower, upper)
            if checker.is_valid(q):
                return q

    out = []
    for k in range(n):
        start = np.array(READY) if k == 0 else valid_sample()
        out.append((start, valid_sample()))
    return out


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", type=int, default=50, help="planning queries (default 50)")
    ap.add_argument("--states", type=int, default=5000, help="random states for the check rate (default 5000)")
    ap.add_argument("--time", type=float, default=2.0, help="planning time budget per query, s (default 2.0)")
    args = ap.parse_args()

    from py_trees_manipulation.motion.ompl_planning import NoPathError, plan_joint_path

    world = build_world()
    ck = world.checker("panda")
    r = world.robots["panda"]
    print(f"scene: {os.path.relpath(SCENE)}; bodies {sorted(world.bodies)}; padding {world.padding_m} m; "
          f"path resolution {world.max_step_rad} rad; load average {os.getloadavg()[0]:.2f} "
          f"on {os.cpu_count()} cores")

    # --- checks per second
    rng = np.random.default_rng(1)
    states = rng.uniform(r.lower, r.upper, size=(args.states, len(r.lower)))
    lists = [s.tolist() for s in states]
    for q in lists[:200]:  # warm up
        ck.is_valid(q)
    w0, c0 = time.perf_counter(), time.process_time()
    valid = sum(ck.is_valid(q) for q in lists)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    print(f"collision checks: {len(lists) / wall:,.0f} states/s wall, {len(lists) / cpu:,.0f} states/s CPU "
          f"({wall / len(lists) * 1e6:.1f} us per state; {valid / len(lists):.0%} valid; goal >= 25,000/s CPU)")

    # --- plans
    qs = queries(ck, r.lower, r.upper, args.queries)
    results = {}
    blocked: list[int] = []
    for label, fn in (("clutter checker", ck.is_valid), ("always valid", lambda q: True)):
        times, checks, fails, waypoints, ompl = [], [], 0, [], []
        for k, (a, b) in enumerate(qs):
            t0 = time.perf_counter()
            try:
                path = plan_joint_path(a, [b], r.lower, r.upper, fn, seed=k, time_s=args.time,
                                       max_step_rad=world.max_step_rad)
                checks.append(path.checks)
                waypoints.append(len(path.waypoints))
                if not path.extra.get("direct"):
                    ompl.append(k)
            except NoPathError:
                fails += 1
            times.append(time.perf_counter() - t0)
        if label == "clutter checker":
            blocked = ompl
        results[label] = times
        med, p95 = statistics.median(times) * 1e3, pct(times, 95) * 1e3
        print(f"straight segment or RRTConnect + simplification, {label:15s}: median {med:7.2f} ms, p95 "
              f"{p95:7.2f} ms over {len(qs)} queries ({len(ompl)} needed OMPL); {fails} without a path in "
              f"{args.time:g} s; median checks {statistics.median(checks) if checks else 0:,.0f}; median waypoints "
              f"{statistics.median(waypoints) if waypoints else 0:.0f}"
              + ("  (goal: median <= 50 ms)" if label == "clutter checker" else ""))
    ratio = statistics.median(results["clutter checker"]) / max(statistics.median(results["always valid"]), 1e-9)
    print(f"the checker's cost: the median plan takes {ratio:.1f}x the always-valid one")
    # the queries the straight segment did not solve, planned with RRTConnect + simplification
    if blocked:
        for label, fn in (("clutter checker", ck.is_valid), ("always valid", lambda q: True)):
            times, checks = [], []
            for k in blocked:
                a, b = qs[k]
                t0 = time.perf_counter()
                try:
                    checks.append(plan_joint_path(a, [b], r.lower, r.upper, fn, seed=k, time_s=args.time,
                                                  max_step_rad=world.max_step_rad, try_direct=False).checks)
                except NoPathError:
                    pass
                times.append(time.perf_counter() - t0)
            print(f"RRTConnect + simplification on the {len(blocked)} blocked queries, {label:15s}: median "
                  f"{statistics.median(times) * 1e3:7.2f} ms, p95 {pct(times, 95) * 1e3:7.2f} ms; median checks "
                  f"{statistics.median(checks) if checks else 0:,.0f}")
    world.close()


if __name__ == "__main__":
    main()
