"""Foundation figures in one run (issue 2): prints, does not assert.

1. Real-time factor of ``examples/pick_and_lift.yaml`` through ``run_task`` (no log, no display),
   median of N runs.
2. Physics throughput of that run's loop (physics steps per wall second of ``run_task`` with the
   backend already built: ticks, behaviours, IK, controllers, physics) against bare
   ``stepSimulation`` of the very same physics states (the time spent inside ``stepSimulation``
   during that run, measured by wrapping it); the framework overhead is ``1 - ratio`` (goal: at
   most 30 %), the ratio being the median over the runs of each run's own ratio; the 1-minute load
   average is printed with it (the machine may be shared). Bare stepping of the scene at rest is
   printed too, for scale.
3. Per-node tick cost of a 50-node tree through our runner (our behaviours, the backend clock,
   observers off) against plain ``py_trees`` (``py_trees.behaviours.Success`` and composites ticked
   by ``BehaviourTree.tick``); goal: at most 1.2x.
4. The same on the **real** ``pick_and_lift`` tree during real runs (our behaviours sending goals
   to the simulator and reading their feedback) against the same tree in plain py_trees whose
   leaves replay the statuses ours returned, so both visit the same nodes in the same ticks (goal:
   at most 1.2x); and the tree tick's share of the run loop (goal: at most 5 %). Replaying leaves do
   no work: this is our behaviours' whole cost, the goals they build included, over an empty tree.
5. The real ``pick_and_lift`` tree against the same tree written by hand in plain py_trees
   (``handwritten_pick.py``: leaves making the same backend calls, without our behaviour layer),
   each driving its own real run, interleaved ABBA; the runs are checked to be the same run (every
   node's statuses in every tick, the lift). This is the framework's own cost per node on the same
   work (goal: at most 1.2x).

Usage: ``python benchmarks/bench_runner.py [--runs 3] [--ticks 3000]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import py_trees
import pybullet as pb

from py_trees_manipulation.testing import FakeBackend
from py_trees_manipulation.trees.loader import load_task, load_task_data
from py_trees_manipulation.located.locyaml import loads
from py_trees_manipulation.trees.runner import RunOptions, run_task

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "examples", "pick_and_lift.yaml")


def real_time_factor(runs: int) -> tuple[float, float, float, float, int, float, float]:
    """Median real-time factor of whole runs, loop and in-stepSimulation throughputs, and the median
    of each run's own loop / in-stepSimulation ratio (both rates of one run share the machine's
    load at that moment, so the per-run ratio is steadier than the ratio of the two medians); the
    median share of the loop spent planning the motions (before each moves, sim time standing
    still) and the in-stepSimulation ratio of the loop without it. The loop's backend is built
    without visual meshes, as ``ptm run --no-log`` builds it."""
    from py_trees_manipulation.sim import SimBackend
    from py_trees_manipulation.sim import backend as sim_backend

    from py_trees_manipulation.collision.arm_planner import ArmMotionPlanner

    rtfs, loop_rates, physics_rates, ratios, planned, no_plan = [], [], [], [], [], []
    steps = 0
    for _ in range(runs):
        task = load_task(EXAMPLE)
        r = run_task(task, RunOptions(display=False))  # the whole run, as `ptm run` does it
        assert r.summary["status"] == "SUCCESS", r.summary
        rtfs.append(r.summary["sim_time_s"] / r.summary["wall_time_s"])
        # the loop alone, with the time inside stepSimulation measured
        inside = [0.0]
        real_step = sim_backend.pb.stepSimulation

        def timed_step(*a, **k):
            t = time.perf_counter()
            out = real_step(*a, **k)
            inside[0] += time.perf_counter() - t
            return out

        planning = [0.0]
        real_plan = ArmMotionPlanner.plan

        def timed_plan(*a, **k):
            t = time.perf_counter()
            try:
                return real_plan(*a, **k)
            finally:
                planning[0] += time.perf_counter() - t

        sim = SimBackend(task.scene, base_dir=os.path.dirname(EXAMPLE), visual_shapes=False)
        sim_backend.pb.stepSimulation = timed_step
        ArmMotionPlanner.plan = timed_plan
        try:
            t0 = time.perf_counter()
            r = run_task(task, RunOptions(display=False), backend=sim)
            loop = time.perf_counter() - t0
        finally:
            sim_backend.pb.stepSimulation = real_step
            ArmMotionPlanner.plan = real_plan
            sim.close()
        steps = int(round(r.summary["sim_time_s"] * 1000))
        loop_rates.append(steps / loop)
        physics_rates.append(steps / inside[0])
        ratios.append(inside[0] / loop)
        planned.append(planning[0] / loop)
        no_plan.append(inside[0] / (loop - planning[0]))
    return (statistics.median(rtfs), statistics.median(loop_rates), statistics.median(physics_rates),
            statistics.median(ratios), steps, statistics.median(planned), statistics.median(no_plan))


def bare_steps_per_s(n_steps: int) -> float:
    from py_trees_manipulation.sim import SimBackend

    task = load_task(EXAMPLE)
    with SimBackend(task.scene, base_dir=os.path.dirname(EXAMPLE)) as sim:
        c = sim.client
        t0 = time.perf_counter()
        for _ in range(n_steps):
            pb.stepSimulation(physicsClientId=c)
        return n_steps / (time.perf_counter() - t0)


def _wide_tree_yaml(n_leaves: int, kind: str) -> str:
    # 1 root + 7 sequences + leaves = 50 nodes for n_leaves=42
    groups = 7
    per = n_leaves // groups
    lines = ["tree:", "  Parallel:", "    policy: success_on_all", "    synchronise: false", "    children:"]
    for g in range(groups):
        lines += ["      - Sequence:", "          memory: false", "          children:"]
        lines += [f"            - {kind}: {{}}" for _ in range(per)]
    return "\n".join(lines) + "\n"


def per_node_cost_ours(ticks: int) -> tuple[float, int]:
    task = load_task_data(loads(_wide_tree_yaml(42, "Success"), "<bench>"), "<bench>")
    n_nodes = sum(1 for _ in task.tree.walk())
    from py_trees_manipulation.trees.factory import build_tree

    py_trees.blackboard.Blackboard.clear()
    tree = build_tree(task)
    backend = FakeBackend()
    tree.setup(backend=backend)
    # the runner's loop body: tick, advance the clock
    t0 = time.perf_counter()
    for _ in range(ticks):
        tree.tick()
        backend.advance(1 / 30)
    return (time.perf_counter() - t0) / ticks / n_nodes, n_nodes


def per_node_cost_plain(ticks: int) -> tuple[float, int]:
    seqs = []
    for g in range(7):
        seqs.append(py_trees.composites.Sequence(name=f"s{g}", memory=False,
                                                 children=[py_trees.behaviours.Success(name=f"l{g}_{i}") for i in range(6)]))
    root = py_trees.composites.Parallel(name="root", policy=py_trees.common.ParallelPolicy.SuccessOnAll(synchronise=False),
                                        children=seqs)
    tree = py_trees.trees.BehaviourTree(root=root)
    tree.setup()
    n_nodes = sum(1 for _ in root.iterate())
    t0 = time.perf_counter()
    for _ in range(ticks):
        tree.tick()
    return (time.perf_counter() - t0) / ticks / n_nodes, n_nodes


class _Recorder(py_trees.visitors.VisitorBase):
    """Notes every node a tick visits, in order, with the status it ended that visit with."""

    def __init__(self) -> None:
        super().__init__(full=False)  # the nodes this tick visited, not the whole tree
        self.visits: list[tuple[int, py_trees.common.Status]] = []

    def run(self, behaviour: py_trees.behaviour.Behaviour) -> None:
        self.visits.append((id(behaviour), behaviour.status))


class _Replay(py_trees.behaviour.Behaviour):
    """A plain py_trees leaf that returns, visit after visit, the statuses a real leaf returned."""

    def __init__(self, name: str, statuses: list) -> None:
        super().__init__(name)
        self.statuses = statuses
        self.i = 0

    def update(self) -> py_trees.common.Status:
        s = self.statuses[self.i]
        self.i += 1
        return s


def _plain_copy(node: py_trees.behaviour.Behaviour, statuses: dict) -> py_trees.behaviour.Behaviour:
    """The same tree in plain py_trees: the same composites (type, memory, policy), every other
    node a :class:`_Replay` of the statuses it returned (a decorator with its subtree: one leaf)."""
    c = py_trees.composites
    kids = [_plain_copy(ch, statuses) for ch in node.children]
    if isinstance(node, c.Sequence):
        return c.Sequence(node.name, memory=node.memory, children=kids)
    if isinstance(node, c.Selector):
        return c.Selector(node.name, memory=node.memory, children=kids)
    if isinstance(node, c.Parallel):
        return c.Parallel(node.name, policy=node.policy, children=kids)
    return _Replay(node.name, statuses.get(id(node), []))


def per_node_cost_real(runs: int) -> dict:
    """Per-node tick cost of the real pick_and_lift tree during real runs (our behaviours on the
    simulator: goals sent, feedback read, messages written) against the same tree in plain py_trees
    whose leaves replay the statuses ours returned, so both visit exactly the same nodes in the same
    ticks. The plain tree is ticked inside the same runs, next to ours, in alternating order (plain
    first on even ticks, ours first on odd ones): both meet the same cold caches after the physics
    steps between ticks (a plain tree ticked in a tight loop is several times faster per node). Also
    the tree tick's share of the run loop (``run_task`` with the backend already built). Medians over
    ``runs`` runs (one recording run first)."""
    from py_trees_manipulation.sim import SimBackend

    task = load_task(EXAMPLE)
    base = os.path.dirname(EXAMPLE)
    # the recording run: which node each tick visits, and the status it leaves it with
    rec = _Recorder()
    real_tick = py_trees.trees.BehaviourTree.tick
    trees = []

    def recording_tick(self, *a, **k):
        if not trees or trees[-1] is not self:
            trees.append(self)
            self.visitors.append(rec)
        return real_tick(self, *a, **k)

    py_trees.trees.BehaviourTree.tick = recording_tick
    try:
        with SimBackend(task.scene, base_dir=base, visual_shapes=False) as sim:
            r = run_task(task, RunOptions(display=False), backend=sim)
    finally:
        py_trees.trees.BehaviourTree.tick = real_tick
    n_ticks = r.summary["ticks"]
    statuses: dict = {}
    for node_id, st in rec.visits:
        statuses.setdefault(node_id, []).append(st)
    visits = len(rec.visits)
    root = trees[0].root
    ours, plain, shares, loops = [], [], [], []
    clock = time.perf_counter
    for _ in range(runs):
        spent = {"ours": 0.0, "plain": 0.0, "k": 0}
        replay = py_trees.trees.BehaviourTree(root=_plain_copy(root, statuses))
        replay.setup()

        def both_ticks(self, *a, **k):
            odd = spent["k"] % 2
            spent["k"] += 1
            if not odd:
                t = clock()
                real_tick(replay)
                spent["plain"] += clock() - t
            t = clock()
            out = real_tick(self, *a, **k)
            spent["ours"] += clock() - t
            if odd:
                t = clock()
                real_tick(replay)
                spent["plain"] += clock() - t
            return out

        sim = SimBackend(task.scene, base_dir=base, visual_shapes=False)
        py_trees.trees.BehaviourTree.tick = both_ticks
        try:
            t0 = clock()
            r = run_task(task, RunOptions(display=False), backend=sim)
            loop = clock() - t0 - spent["plain"]
        finally:
            py_trees.trees.BehaviourTree.tick = real_tick
            sim.close()
        assert r.summary["ticks"] == n_ticks, "the runs differ"
        ours.append(spent["ours"])
        plain.append(spent["plain"])
        shares.append(spent["ours"] / loop)
        loops.append(loop)
    med = statistics.median
    return {"ticks": n_ticks, "visits": visits, "nodes": sum(1 for _ in root.iterate()),
            "ours_us": med(ours) / visits * 1e6, "plain_us": med(plain) / visits * 1e6,
            "ratio": med(o / p for o, p in zip(ours, plain)),
            "share": med(shares), "loop_s": med(loops), "tick_s": med(ours)}


def per_node_cost_handwritten(runs: int) -> dict:
    """Per-node tick cost of the real pick_and_lift tree against the same tree written by hand in
    plain py_trees (``handwritten_pick.py``: leaves that make the same backend calls, with none of
    our behaviour layer), each driving its own real run through ``run_task``. The runs are
    interleaved ABBA (ours, hand, hand, ours, ...); the figure is the median over the pairs of each
    pair's ratio of tick time (time inside ``BehaviourTree.tick``). The first run of each is
    recorded and must visit the same nodes with the same statuses in the same ticks, and lift the
    mug the same: the same run, so the difference is what our behaviours add to the same work."""
    import handwritten_pick
    from py_trees_manipulation.sim import SimBackend
    from py_trees_manipulation.trees import runner as runner_mod

    task = load_task(EXAMPLE)
    base = os.path.dirname(EXAMPLE)
    real_tick = py_trees.trees.BehaviourTree.tick
    real_build = runner_mod.build_tree
    clock = time.perf_counter

    def one(kind: str, record: bool) -> tuple[float, list, dict]:
        spent = [0.0]
        rec = _Recorder()
        names: dict = {}

        def timed_tick(self, *a, **k):
            if record and rec not in self.visitors:
                self.visitors.append(rec)
                names.update({id(n): n.name for n in self.root.iterate()})
            t = clock()
            out = real_tick(self, *a, **k)
            spent[0] += clock() - t
            return out

        sim = SimBackend(task.scene, base_dir=base, visual_shapes=False)
        py_trees.trees.BehaviourTree.tick = timed_tick
        if kind == "hand":
            runner_mod.build_tree = handwritten_pick.build
        try:
            r = run_task(task, RunOptions(display=False), backend=sim)
        finally:
            py_trees.trees.BehaviourTree.tick = real_tick
            runner_mod.build_tree = real_build
            sim.close()
        assert r.summary["status"] == "SUCCESS", (kind, r.summary)
        visits = [(names[i], st) for i, st in rec.visits]
        return spent[0], visits, r.summary

    t_ours, v_ours, s_ours = one("ours", True)
    t_hand, v_hand, s_hand = one("hand", True)
    assert v_ours == v_hand, "the hand-written tree does not make the same run"
    assert s_ours["ticks"] == s_hand["ticks"]
    lift = (s_ours["metrics"]["object_lift_m"], s_hand["metrics"]["object_lift_m"])
    assert abs(lift[0] - lift[1]) < 1e-6, lift
    ours, hand = [], []
    for i in range(runs):
        order = ("ours", "hand") if i % 2 == 0 else ("hand", "ours")
        for kind in order:
            (ours if kind == "ours" else hand).append(one(kind, False)[0])
    med = statistics.median
    n = len(v_ours)
    return {"ticks": s_ours["ticks"], "visits": n, "ours_us": med(ours) / n * 1e6, "hand_us": med(hand) / n * 1e6,
            "ratio": med(o / h for o, h in zip(ours, hand)), "ratios": sorted(o / h for o, h in zip(ours, hand))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--ticks", type=int, default=3000)
    args = ap.parse_args()

    rtf, steps_run, steps_same, ratio, n_steps, planned, no_plan = real_time_factor(args.runs)
    bare = bare_steps_per_s(n_steps)
    ours, n1 = per_node_cost_ours(args.ticks)
    plain, n2 = per_node_cost_plain(args.ticks)
    print(f"pick_and_lift real-time factor (median of {args.runs}): {rtf:.2f}x")
    print(f"physics throughput (medians of {args.runs}): run loop {steps_run:,.0f} steps/s, bare stepSimulation of "
          f"the same states {steps_same:,.0f} steps/s -> ratio {ratio:.2f} per run "
          f"(framework overhead {100 * (1 - ratio):.1f} %, of which planning the motions {100 * planned:.1f} % of the "
          f"loop; without planning: ratio {no_plan:.2f}, overhead {100 * (1 - no_plan):.1f} %); scene at rest: "
          f"{bare:,.0f} steps/s; load average {os.getloadavg()[0]:.2f}")
    print(f"per-node tick cost, {n1}-node tree: ours {ours * 1e6:.2f} us, plain py_trees ({n2} nodes) "
          f"{plain * 1e6:.2f} us -> {ours / plain:.2f}x")
    real = per_node_cost_real(args.runs)
    print(f"real pick_and_lift tree ({real['nodes']} nodes, {real['ticks']} ticks, {real['visits']} node visits), "
          f"medians of {args.runs} runs: per-node tick ours {real['ours_us']:.2f} us, the same visits in plain py_trees "
          f"{real['plain_us']:.2f} us -> {real['ratio']:.2f}x (goal <= 1.2x); tree tick "
          f"{real['tick_s'] * 1000:.1f} ms of a {real['loop_s']:.2f} s run loop: {100 * real['share']:.1f} % "
          f"(goal <= 5 %); load average {os.getloadavg()[0]:.2f}")
    hand = per_node_cost_handwritten(max(args.runs, 2))
    print(f"real pick_and_lift tree against the same tree written by hand in plain py_trees (same backend calls, "
          f"same run: {hand['ticks']} ticks, {hand['visits']} node visits), {len(hand['ratios'])} runs each, ABBA: "
          f"per-node tick ours {hand['ours_us']:.2f} us, hand-written {hand['hand_us']:.2f} us -> {hand['ratio']:.2f}x "
          f"(median of the pairs; pairs {hand['ratios'][0]:.2f}-{hand['ratios'][-1]:.2f}; goal <= 1.2x); "
          f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
