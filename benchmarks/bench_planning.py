"""Constraint-graph generation and regrasp planning across grid sizes (prints figures).

Run: ``python benchmarks/bench_planning.py [--max 6] [--repeat 5]``

For n grippers x n single-handle objects lying on a table (1x1 .. 6x6):

* eager: :meth:`ConstraintGraphFactory.generate` (every state and transition, HPP-style), then
  a breadth-first search over the generated transitions;
* lazy: :meth:`RegraspPlanner.plan` (A*, neighbours generated on demand), and the time to the
  5th alternative plan with :meth:`RegraspPlanner.iter_plans`.

The task is the hardest grasp change on the grid: every gripper i holds handle i and must end
holding handle i+1 (mod n), which costs 2n steps (each gripper releases, then re-grasps).
HPP publishes no graph-generation figure (reference notes section 4.4); its Python factory
also re-enumerates refused tuples (1,181,737 recursive calls for 6x6 with an "at most one
grasp" rule), which the closed form column shows.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import deque

from py_trees_manipulation.planning import (
    ConstraintGraphFactory,
    RegraspPlanner,
    expected_ordered_sequence_count,
    expected_state_count,
    expected_transition_pair_count,
)

GOAL_MS = 50.0


def grid(n_g: int, n_h: int) -> ConstraintGraphFactory:
    f = ConstraintGraphFactory()
    f.set_grippers([f"g{i}" for i in range(n_g)])
    f.set_objects(
        [f"o{i}" for i in range(n_h)], [[f"o{i}/h"] for i in range(n_h)], [["c"]] * n_h
    )
    f.environment_contacts(["table"])
    return f


def timed(fn, repeat: int):
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3, out


def eager_plan(n: int, start, goal):
    f = grid(n, n)
    f.generate()
    adj: dict = {}
    for t in f.transitions.values():
        if t.kind != "loop":
            adj.setdefault(t.state_from, []).append(t.state_to)
    parent = {start: None}
    queue = deque([start])
    while queue:
        s = queue.popleft()
        if s == goal:
            break
        for nx_ in adj.get(s, ()):
            if nx_ not in parent:
                parent[nx_] = s
                queue.append(nx_)
    length = 0
    s = goal
    while parent[s] is not None:
        s = parent[s]
        length += 1
    return f, length


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max", type=int, default=6, help="largest grid side (default 6)")
    ap.add_argument("--repeat", type=int, default=5, help="repetitions, median reported")
    args = ap.parse_args()

    print("Constraint graph: n grippers x n handles (one handle per object, objects on a table)")
    print(
        f"{'grid':>5} {'states':>7} {'pairs':>7} {'HPP calls*':>11} | "
        f"{'eager gen':>10} {'eager+BFS':>10} | {'lazy plan':>10} {'expanded':>8} "
        f"{'touched':>8} {'5 plans':>9} | {'cost':>4}"
    )
    print(f"{'':>5} {'':>7} {'':>7} {'':>11} | {'ms':>10} {'ms':>10} | {'ms':>10} "
          f"{'states':>8} {'states':>8} {'ms':>9} |")
    six_ms = None
    for n in range(1, args.max + 1):
        start = tuple(range(n))
        goal = tuple((i + 1) % n for i in range(n)) if n > 1 else (None,)
        rep = max(1, args.repeat if n < 6 else min(args.repeat, 3))

        def gen():
            f = grid(n, n)
            f.generate()
            return f

        gen_ms, f = timed(gen, rep)
        assert len(f.states) == expected_state_count(n, n)
        eager_ms, (_, bfs_len) = timed(lambda: eager_plan(n, start, goal), rep)

        planner = RegraspPlanner(grid(n, n))
        lazy_ms, plan = timed(lambda: planner.plan(start, goal), max(rep, 20))
        assert plan.cost == bfs_len, (plan.cost, bfs_len)
        alt_ms, plans = timed(lambda: list(planner.iter_plans(start, goal, max_plans=5)), rep)
        print(
            f"{n}x{n:<3} {len(f.states):>7} {expected_transition_pair_count(n, n):>7} "
            f"{expected_ordered_sequence_count(n, n):>11,} | {gen_ms:>10.1f} {eager_ms:>10.1f} | "
            f"{lazy_ms:>10.2f} {plan.stats.expanded:>8} {plan.stats.distinct_states:>8} "
            f"{alt_ms:>9.1f} | {plan.cost:>4.0f}"
        )
        if n == 6:
            six_ms = lazy_ms
    print("* recursive calls of HPP's Python factory when a rule refuses every tuple with two or"
          " more grasps (closed form); ours: one call per tuple.")

    # a second 6x6 task: from free to all grippers holding (goal predicate and partial goals)
    if args.max >= 6:
        planner = RegraspPlanner(grid(6, 6))
        free = (None,) * 6
        ms_full, p_full = timed(lambda: planner.plan(free, tuple(range(6))), 20)
        ms_part, p_part = timed(lambda: planner.plan(tuple(range(6)), {"g0": "o5/h"}), 20)
        ms_pred, p_pred = timed(
            lambda: planner.plan(tuple(range(6)), lambda g: all(h is None for h in g)), 5
        )
        print()
        print("6x6 other goals (lazy):")
        print(f"  free -> all six held         {ms_full:7.2f} ms  cost {p_full.cost:.0f}, "
              f"{p_full.stats.expanded} expanded")
        print(f"  g0 must take o5/h (partial)  {ms_part:7.2f} ms  cost {p_part.cost:.0f}, "
              f"{p_part.stats.expanded} expanded")
        print(f"  release everything (predicate, no heuristic) {ms_pred:7.2f} ms  "
              f"cost {p_pred.cost:.0f}, {p_pred.stats.expanded} expanded")
    if six_ms is not None:
        verdict = "met" if six_ms < GOAL_MS else "NOT met"
        print()
        print(f"6x6 regrasp plan (12 grasp changes): {six_ms:.2f} ms, goal < {GOAL_MS:.0f} ms: "
              f"{verdict}")


if __name__ == "__main__":
    main()
