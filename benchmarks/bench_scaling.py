"""Cost that grows with the scene (issue 35): the framework against bare PyBullet, interleaved in one run.

Prints figures, asserts nothing. Sections (``--only`` picks one):

``settings``
    What each physics setting costs: the pick_and_lift world with ``--settings-n`` (0 and 80) extra
    resting boxes, after a real run (the mug held in the closed gripper, the arm holding still), stepped
    with ``stepSimulation`` alone while one setting at a time is switched to PyBullet's default:
    resting bodies kept awake (PyBullet's default: a multibody never sleeps), the fixtures'
    rolling friction, the fingers' friction anchor and spinning friction, their soft-contact
    stiffness and damping (scaled: per-body contact parameters change no row of the solver), the
    solver iterations (the framework's are PyBullet's default, 50); and the same bodies in a
    default PyBullet world. Then what the framework does per step on top of ``stepSimulation``
    (controllers, tactile sampling, the 100 Hz monitor: ``SimBackend.step`` against
    ``stepSimulation`` in the same world). Chunks of steps interleaved, the median per variant.

``objects``
    The issue's table: ``ptm run examples/pick_and_lift.yaml --no-log`` (in process: the task
    parsed from text, the backend built, the tree run, the backend closed; the interpreter and its
    imports are warm, as they are for the bare script) with N = 0, 20, 80, 200 extra 4 cm boxes
    resting at the far end of the table (beyond the mug, away from the arm), against a minimal
    bare PyBullet script with the same bodies and the same number of steps at default settings
    (connect, load, step, disconnect); for N = 0 also the project's grasping bare script
    (``bare_pybullet_pick.py``: motor commands and contact reads every step). Pairs run ABBA;
    the ratios (bare time / framework time: 1.0x is parity, higher is faster than bare) are the
    medians of the per-pair ratios, CPU time (steadier on a shared machine) and wall time. One
    more framework run per N counts the PyBullet queries the framework makes (calls and time).

``tree``
    The same task with the tree grown by 50 and 200 extra nodes (a parallel branch of condition
    checks ticked every tick: ``ObjectNear`` of the mug under ``FailureIsSuccess``) against the
    minimal bare script, as in ``objects``.

``clutter``
    Planning in ``examples/pick_from_clutter.yaml``'s collision world with 0, 5, 10, 20 extra
    obstacles (boxes standing on the table round the arm): the checker's rate (states/s CPU) on
    seeded random configurations against the exact method (``getClosestPoints`` of every moving
    link against every other body, and of every checked self-collision pair), and the median
    plan time of seeded queries with the checker against an always-valid one.

``breakdown``
    Where the framework's N = 0 run spends what the grasping bare script does not, CPU per phase,
    medians of ``--reps`` interleaved pairs: for each process, its imports (a fresh interpreter
    importing what a ``ptm run`` of pick_and_lift imports, against ``pybullet``, what the bare
    script imports; bytecode compiled, as pip leaves an install); in process, the framework's
    parse, scene build, ``stepSimulation`` (calls and time), planning and grasp choice (the
    planning worker's jobs) and the rest (per-step Python: motor commands, the tactile sensors,
    the executed-clearance and payload monitors; the tree's ticks), against the bare script's
    ``loadURDF``, ``stepSimulation``, ``calculateInverseKinematics`` and the rest. Then one step's
    physics with the mug held (after each script's run, the arm still), at PyBullet's solver
    residual threshold (shipped by both: the solver stops once converged) and with every one of
    the 50 iterations forced, which shows whether a dearer step is settings or convergence; and
    the framework's world given the bare world's state (joint positions and speeds, the mug's pose
    and speed, the bare script's motor commands): the same bodies, dynamics and settings (both
    worlds report the same ``getDynamicsInfo``, constraints and engine parameters), so what is left
    between the two is the grasp itself (where the fingers hold the mug, the arm's posture).

``grip``
    What a held grasp costs per physics step on each robot model (issue 35: the xArm's mesh fingers
    made it 6x dearer): ``--grip-examples`` (pick_declared_grasp, pick_and_lift) run in process on
    each of ``--grip-models`` (the stock models; a robot description file too, e.g. a copy of a
    stock file on another URDF, to compare collision shapes), every ``stepSimulation`` timed (CPU)
    and, after it, put in a class by the contacts of the robot's two pad links with other bodies
    (both pads, one, none; with the robot's other links touching something, named): the whole run's
    physics CPU, the steps and CPU per step of each class.
    Each class also names the solver iterations in force (a tracked linkage gripper, the xArm's,
    solves with ``sim.gripper.LOADED_SOLVER_ITERATIONS`` while it squeezes). Then, each run's world
    kept as it ended (the object held), chunks of 300 steps interleaved across the runs, the median
    CPU per step of ``max(5, 4 x --reps)`` chunks: the step, the collision detection alone
    (``performCollisionDetection``: what the collision shapes cost), and the step at the scene's 50
    iterations when more are in force (what the iterations cost).

The 1-minute load average (``os.getloadavg``; the machine is shared) is printed with each
section, before and after.

Usage: ``python benchmarks/bench_scaling.py [--reps 3] [--only objects|breakdown|grip|...] [--n 0,20,80,200]``
"""

from __future__ import annotations

import argparse
import copy
import datetime
import json
import os
import platform
import statistics
import sys
import time
from typing import Any, Callable, Optional

import numpy as np
import pybullet as pb
import pybullet_data
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
EXAMPLE = os.path.join(ROOT, "examples", "pick_and_lift.yaml")
CLUTTER = os.path.join(ROOT, "examples", "pick_from_clutter.yaml")
sys.path.insert(0, HERE)

from bare_pybullet_minimal import BOX, BOX_MASS, TABLE_TOP, box_positions  # noqa: E402


def load() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def task_doc(n_boxes: int = 0, extra_nodes: int = 0) -> dict:
    """examples/pick_and_lift.yaml as a plain mapping, with ``n_boxes`` extra boxes and the tree
    grown by ``extra_nodes`` nodes (a parallel of the original tree and a branch of mug checks)."""
    with open(EXAMPLE, encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    doc["scene"]["objects"] += [
        {"name": f"extra{k}", "primitive": {"shape": "box", "size": [BOX] * 3}, "mass_kg": BOX_MASS,
         "pose": {"position": p}} for k, p in enumerate(box_positions(n_boxes))]
    if extra_nodes:
        if extra_nodes < 4 or extra_nodes % 2:
            raise ValueError("extra_nodes: an even number >= 4 (a parallel, a sequence, pairs of nodes)")
        checks = [{"FailureIsSuccess": {"name": f"check{k}", "child": {"ObjectNear": {
            "name": f"mug_near{k}", "object": "mug", "position": [0.5, 0.0, 0.66], "tolerance_m": 0.05}}}}
            for k in range((extra_nodes - 2) // 2)]
        doc["tree"] = {"Parallel": {"name": "grown", "policy": "success_on_selected", "selected": ["pick_and_lift"],
                                    "synchronise": False, "children": [
                                        doc["tree"], {"Sequence": {"name": "checks", "memory": False,
                                                                   "children": checks}}]}}
    return doc


def parse(doc: Any) -> Any:
    """The task of :func:`task_doc`'s mapping, or of its YAML text (what ``ptm run`` reads)."""
    from py_trees_manipulation.located.locyaml import loads
    from py_trees_manipulation.trees.loader import load_task_data

    text = doc if isinstance(doc, str) else yaml.safe_dump(doc, sort_keys=False)
    return load_task_data(loads(text, EXAMPLE), EXAMPLE)


# ---- the runs -----------------------------------------------------------------------------------------
def framework_run(doc: dict) -> dict:
    """``ptm run --no-log`` in this process: parse the task's text, build, run, close. Wall and CPU
    seconds (the YAML text is written before the clock starts: a user's file is already text)."""
    from py_trees_manipulation.trees.runner import RunOptions, run_task

    text = yaml.safe_dump(doc, sort_keys=False)
    w0, c0 = time.perf_counter(), time.process_time()
    task = parse(text)
    r = run_task(task, RunOptions(display=False))
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    if r.summary["status"] != "SUCCESS":
        raise SystemExit(f"the framework run did not succeed: {r.summary}")
    return {"wall": wall, "cpu": cpu, "sim_time_s": r.summary["sim_time_s"], "summary": r.summary}


def bare_run(n_boxes: int, sim_time_s: float) -> dict:
    """``bare_pybullet_minimal.py`` (the same bodies at default settings, stepped) in this process."""
    import bare_pybullet_minimal

    w0, c0 = time.perf_counter(), time.process_time()
    out = bare_pybullet_minimal.run(sim_time_s, n_boxes)
    return {"wall": time.perf_counter() - w0, "cpu": time.process_time() - c0, "steps": out["steps"]}


def grasping_bare_run(sim_time_s: float) -> dict:
    """``bare_pybullet_pick.py`` (the project's grasping bare script) in this process."""
    import bare_pybullet_pick

    w0, c0 = time.perf_counter(), time.process_time()
    out = bare_pybullet_pick.run(sim_time_s)
    return {"wall": time.perf_counter() - w0, "cpu": time.process_time() - c0, "lift_m": out["lift_m"]}


def abba(fns: list[Callable[[], dict]], reps: int) -> list[list[dict]]:
    """``reps`` results of each function, in the order A B B A A B ... (for two; rotated for more)."""
    out: list[list[dict]] = [[] for _ in fns]
    for i in range(reps):
        order = list(range(len(fns)))
        if i % 2:
            order.reverse()
        for k in order:
            out[k].append(fns[k]())
    return out


def ratio_line(label: str, fw: list[dict], bare: list[dict], goal: Optional[float] = None) -> str:
    med = statistics.median
    rc = [b["cpu"] / f["cpu"] for f, b in zip(fw, bare)]
    rw = [b["wall"] / f["wall"] for f, b in zip(fw, bare)]
    return (f"  {label:34s} framework CPU {med(f['cpu'] for f in fw):6.2f} s (wall {med(f['wall'] for f in fw):6.2f}), "
            f"bare CPU {med(b['cpu'] for b in bare):6.2f} s (wall {med(b['wall'] for b in bare):6.2f}): "
            f"ratio CPU {med(rc):.2f}x ({min(rc):.2f}-{max(rc):.2f}), wall {med(rw):.2f}x"
            + (f"  goal >= {goal:.2f}x" if goal is not None else ""))


# ---- PyBullet queries made by a framework run ------------------------------------------------------------
_COUNTED = ("stepSimulation", "getClosestPoints", "getContactPoints", "getOverlappingObjects")


def counted_run(doc: dict) -> dict[str, tuple[int, float]]:
    """One framework run with the PyBullet calls of :data:`_COUNTED` counted and timed (CPU)."""
    real = {name: getattr(pb, name) for name in _COUNTED if hasattr(pb, name)}
    stats = {name: [0, 0.0] for name in real}

    def wrap(name: str, fn: Callable) -> Callable:
        def wrapped(*a: Any, **k: Any) -> Any:
            t = time.process_time()
            try:
                return fn(*a, **k)
            finally:
                s = stats[name]
                s[0] += 1
                s[1] += time.process_time() - t
        return wrapped

    for name, fn in real.items():
        setattr(pb, name, wrap(name, fn))
    try:
        framework_run(doc)
    finally:
        for name, fn in real.items():
            setattr(pb, name, fn)
    return {k: (v[0], v[1]) for k, v in stats.items()}


# ---- sections ---------------------------------------------------------------------------------------------
def section_objects(ns: list[int], reps: int) -> None:
    print(f"\n== objects: pick_and_lift with N extra resting boxes; {reps} ABBA pairs per N; load {load()}")
    for n in ns:
        doc = task_doc(n)
        first = framework_run(doc)  # warm-up; the sim time the bare script steps
        sim_time = first["sim_time_s"]
        fns = [lambda: framework_run(doc), lambda: bare_run(n, sim_time)]
        if n == 0:
            fns.append(lambda: grasping_bare_run(sim_time))
        res = abba(fns, reps)
        print(ratio_line(f"N = {n:3d} vs minimal bare", res[0], res[1], 0.9 if n else 0.75))
        if n == 0:
            print(ratio_line("N =   0 vs grasping bare", res[0], res[2], 0.95))
        calls = counted_run(doc)
        print("    PyBullet calls of one framework run (CPU s): " + ", ".join(
            f"{k} {c:,} ({t:.2f} s)" for k, (c, t) in calls.items() if c))
    print(f"  load after: {load()}")


def section_tree(sizes: list[int], reps: int) -> None:
    print(f"\n== tree: pick_and_lift grown by extra nodes (checks ticked every tick); {reps} ABBA pairs; load {load()}")
    base = framework_run(task_doc(0))
    sim_time = base["sim_time_s"]
    fns = [lambda s=s: framework_run(task_doc(0, s)) for s in [0, *sizes]] + [lambda: bare_run(0, sim_time)]
    res = abba(fns, reps)
    bare = res[-1]
    for s, fw in zip([0, *sizes], res):
        ticks = fw[0]["summary"].get("ticks")
        print(ratio_line(f"+{s:3d} nodes vs minimal bare", fw, bare) + (f"  ({ticks} ticks)" if ticks else ""))
    print(f"  load after: {load()}")


def exact_valid(ck: Any, q: list[float]) -> bool:
    """The exact method: ``getClosestPoints`` of every moving link against every other body at the
    pair's threshold, and of every checked self-collision pair (no broadphase; the checker's
    ``is_valid`` must give the same answer: tests/unit/test_checker_exact.py)."""
    w, c, body = ck.world, ck._client, ck._body
    ck.set_state(q)
    for j in sorted(w.moving_links(ck.robot)):
        for ob in w._links:
            if ob in (body, w._probe):
                continue
            for p in pb.getClosestPoints(body, ob, ck.padding_m, linkIndexA=j, physicsClientId=c):
                thr = ck._threshold(("link", j), ob, p[4], False)
                if thr is not None and p[8] < thr - 1e-6:
                    return False
    for a, b in ck._rb.self_pairs:
        for p in pb.getClosestPoints(body, body, 0.0, linkIndexA=a, linkIndexB=b, physicsClientId=c):
            if p[8] < -1e-6:
                return False
    return True


def clutter_world(n_obstacles: int) -> Any:
    import py_trees_manipulation.sim  # noqa: F401  (scene sections)
    from py_trees_manipulation.collision.world import CollisionWorld
    from py_trees_manipulation.scene.spec import parse_scene
    from py_trees_manipulation.trees.loader import load_task

    task = load_task(CLUTTER)
    scene = copy.deepcopy(task.scene)
    rng = np.random.default_rng(7)
    placed = 0
    while placed < n_obstacles:  # boxes standing on the table in the arm's reach, clear of its base
        r, a = rng.uniform(0.3, 0.75), rng.uniform(-1.3, 1.3)
        x, y = r * np.cos(a), r * np.sin(a)
        sx, sy, sz = rng.uniform(0.04, 0.10), rng.uniform(0.04, 0.10), rng.uniform(0.06, 0.25)
        scene["objects"].append({"name": f"obstacle{placed}", "primitive": {"shape": "box", "size": [sx, sy, sz]},
                                 "fixed": True, "pose": {"position": [float(x), float(y), TABLE_TOP + sz / 2]}})
        placed += 1
    return CollisionWorld.from_scene(parse_scene(scene, base_dir=os.path.dirname(CLUTTER)))


def section_clutter(counts: list[int], states: int, queries: int) -> None:
    from bench_motion import queries as make_queries
    from py_trees_manipulation.motion.ompl_planning import NoPathError, plan_joint_path

    print(f"\n== clutter: pick_from_clutter's collision world with extra obstacles; {states} random states, "
          f"{queries} plan queries each; load {load()}")
    for n in counts:
        world = clutter_world(n)
        ck = world.checker("panda")
        r = world.robots["panda"]
        rng = np.random.default_rng(1)
        qs = [q.tolist() for q in rng.uniform(r.lower, r.upper, size=(states, 7))]
        for q in qs[:200]:
            ck.is_valid(q)
        rates: dict[str, list[float]] = {"checker": [], "exact": []}
        exact_n = max(200, states // 10)
        for _ in range(3):  # interleaved
            c0 = time.process_time()
            valid = sum(ck.is_valid(q) for q in qs)
            rates["checker"].append(len(qs) / (time.process_time() - c0))
            c0 = time.process_time()
            for q in qs[:exact_n]:
                exact_valid(ck, q)
            rates["exact"].append(exact_n / (time.process_time() - c0))
        plan_t: dict[str, list[float]] = {"checker": [], "always valid": []}
        qq = make_queries(ck, r.lower, r.upper, queries)
        fails = 0
        for k, (a, b) in enumerate(qq):
            for label, fn in (("checker", ck.is_valid), ("always valid", lambda q: True)):
                c0 = time.process_time()
                try:
                    plan_joint_path(a, [b], r.lower, r.upper, fn, seed=k, time_s=2.0, max_step_rad=world.max_step_rad)
                except NoPathError:
                    fails += label == "checker"
                plan_t[label].append(time.process_time() - c0)
        med = statistics.median
        print(f"  {n:2d} obstacles ({len(ck._obs)} obstacle links): checker {med(rates['checker']):8,.0f} states/s CPU, "
              f"exact {med(rates['exact']):7,.0f} states/s: {med(rates['checker']) / med(rates['exact']):5.1f}x; "
              f"{valid / len(qs):.0%} valid; median plan {med(plan_t['checker']) * 1e3:6.1f} ms CPU vs "
              f"{med(plan_t['always valid']) * 1e3:5.1f} ms always-valid; {fails} without a path")
        world.close()
    print(f"  load after: {load()}")


# ---- where the N = 0 run's CPU goes, against the grasping bare script ------------------------------------
_IMPORTS_OF_A_RUN = """
import json, sys
mods = set(sys.modules)
from py_trees_manipulation.cli import main
from py_trees_manipulation.trees.loader import load_task
from py_trees_manipulation.trees.runner import RunOptions, run_task
task = load_task(sys.argv[1])
run_task(task, RunOptions(display=False))
print(json.dumps(sorted(set(sys.modules) - mods)))
"""


def _import_cpu(modules: list[str]) -> float:
    """CPU seconds (user + sys) of a fresh interpreter importing ``modules``, less an empty one's."""
    import resource
    import subprocess

    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

    def cpu(code: str) -> float:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, check=True, capture_output=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)

    # (a few names in sys.modules are aliases that do not import by name: typing.io, ...)
    code = ("import importlib\nfor m in %r:\n    try:\n        importlib.import_module(m)\n"
            "    except ImportError:\n        pass\n" % (modules,))
    return cpu(code) - cpu("pass")


def _timed_calls(obj: Any, names: dict[str, str], stats: dict[str, list]) -> Callable[[], None]:
    """Wrap ``obj``'s functions ``names`` (attribute -> label) to add calls and CPU time to ``stats``;
    returns the function that unwraps them."""
    real = {a: getattr(obj, a) for a in names}

    def wrap(attr: str, fn: Callable) -> Callable:
        label = names[attr]

        def wrapped(*a: Any, **k: Any) -> Any:
            t = time.process_time()
            try:
                return fn(*a, **k)
            finally:
                s = stats.setdefault(label, [0, 0.0])
                s[0] += 1
                s[1] += time.process_time() - t
        return wrapped

    for attr, fn in real.items():
        setattr(obj, attr, wrap(attr, fn))
    return lambda: [setattr(obj, a, fn) for a, fn in real.items()]


def _framework_phases(text: str) -> dict[str, float]:
    from py_trees_manipulation.collision import worker
    from py_trees_manipulation.sim import backend
    from py_trees_manipulation.trees.runner import RunOptions, run_task

    stats: dict[str, list] = {"physics": [0, 0.0]}
    undo = [_timed_calls(pb, {"stepSimulation": "physics"}, stats),
            _timed_calls(worker.PlanningWorker, {"_submit": "planning"}, stats)]
    real_init = backend.SimBackend.__init__
    settle = [0.0, 0.0]  # CPU of the build, and of its settling steps (counted as physics)

    def init(self: Any, *a: Any, **k: Any) -> None:
        t, p0 = time.process_time(), stats["physics"][1]
        real_init(self, *a, **k)
        settle[0] += time.process_time() - t
        settle[1] += stats["physics"][1] - p0

    backend.SimBackend.__init__ = init
    undo.append(lambda: setattr(backend.SimBackend, "__init__", real_init))
    try:
        c0 = time.process_time()
        task = parse(text)
        c1 = time.process_time()
        r = run_task(task, RunOptions(display=False))
        c2 = time.process_time()
    finally:
        for u in undo:
            u()
    assert r.summary["status"] == "SUCCESS", r.summary
    return {"parse": c1 - c0, "total": c2 - c0, "physics": stats["physics"][1], "steps": stats["physics"][0],
            "planning": stats.get("planning", [0, 0.0])[1], "build": settle[0] - settle[1], "run": c2 - c1}


def _bare_phases(sim_time: float) -> dict[str, float]:
    import bare_pybullet_pick

    stats: dict[str, list] = {}
    undo = _timed_calls(pb, {"stepSimulation": "physics", "loadURDF": "load", "calculateInverseKinematics": "ik"},
                        stats)
    try:
        c0 = time.process_time()
        out = bare_pybullet_pick.run(sim_time)
        total = time.process_time() - c0
    finally:
        undo()
    return {"total": total, "physics": stats["physics"][1], "steps": stats["physics"][0],
            "load": stats["load"][1], "ik": stats["ik"][1], "lift_m": out["lift_m"]}


def _held_step_cost(rounds: int) -> dict[str, list[float]]:
    """us per ``stepSimulation`` with the mug held after each script's run, at PyBullet's residual
    threshold and with all iterations forced (``solverResidualThreshold=0``)."""
    import bare_pybullet_pick
    from py_trees_manipulation.trees.runner import RunOptions, make_backend, run_task

    kept: dict[str, int] = {}
    real_disconnect = pb.disconnect
    pb.disconnect = lambda physicsClientId=0: kept.setdefault("bare", physicsClientId)  # keep its world
    try:
        bare_pybullet_pick.run(5.233)
    finally:
        pb.disconnect = real_disconnect
    task = parse(task_doc(0))
    opts = RunOptions(display=False)
    sim = make_backend(task, opts)
    assert run_task(task, opts, backend=sim).summary["status"] == "SUCCESS"
    clients = {"bare": kept["bare"], "framework": sim.client}

    def chunk(cid: int, steps: int = 300) -> float:
        t0 = time.process_time()
        for _ in range(steps):
            pb.stepSimulation(physicsClientId=cid)
        return (time.process_time() - t0) / steps * 1e6

    out: dict[str, list[float]] = {}
    default = pb.getPhysicsEngineParameters(physicsClientId=sim.client).get("solverResidualThreshold", 1e-7)
    for _ in range(rounds):
        for name, cid in clients.items():
            out.setdefault(f"{name}, shipped (residual threshold)", []).append(chunk(cid))
        for name, cid in clients.items():
            pb.setPhysicsEngineParameter(solverResidualThreshold=0.0, physicsClientId=cid)
            out.setdefault(f"{name}, all 50 iterations forced", []).append(chunk(cid))
            pb.setPhysicsEngineParameter(solverResidualThreshold=default, physicsClientId=cid)
    # the same bodies and settings, the state differs: the grasp (the hand's yaw on the mug, the
    # contact points), the arm's posture. The framework's world given the bare world's state (joint
    # positions and speeds, the mug's pose and speed, the arm's and fingers' motor commands):
    panda, mug = sim._bodies["panda"], sim._objects["mug"]
    bare_c, fw_c = clients["bare"], clients["framework"]
    for j in range(pb.getNumJoints(panda, physicsClientId=fw_c)):
        st = pb.getJointState(panda, j, physicsClientId=bare_c)
        pb.resetJointState(panda, j, st[0], st[1], physicsClientId=fw_c)
    pb.resetBasePositionAndOrientation(mug, *pb.getBasePositionAndOrientation(mug, physicsClientId=bare_c),
                                       physicsClientId=fw_c)
    pb.resetBaseVelocity(mug, *pb.getBaseVelocity(mug, physicsClientId=bare_c), physicsClientId=fw_c)
    robot = sim.arms["panda"].robot
    q = [pb.getJointState(panda, j, physicsClientId=bare_c)[0] for j in robot.arm_joints]
    pb.setJointMotorControlArray(panda, robot.arm_joints, pb.POSITION_CONTROL, targetPositions=q,
                                 forces=[87.0] * 4 + [12.0] * 3, physicsClientId=fw_c)
    pb.setJointMotorControlArray(panda, robot.finger_joints, pb.POSITION_CONTROL, targetPositions=[0.0, 0.0],
                                 forces=[40.0, 40.0], physicsClientId=fw_c)
    chunk(fw_c)
    for _ in range(rounds):
        out.setdefault("framework, given the bare world's state", []).append(chunk(fw_c))
        out.setdefault("bare, again", []).append(chunk(bare_c))
    sim.close()
    pb.disconnect(physicsClientId=kept["bare"])
    return out


def section_breakdown(reps: int) -> None:
    import subprocess

    print(f"\n== breakdown: the N = 0 run against the grasping bare script, CPU per phase, {reps} pairs; load {load()}")
    mods = json.loads(subprocess.run([sys.executable, "-c", _IMPORTS_OF_A_RUN, EXAMPLE], cwd=ROOT, check=True,
                                     capture_output=True, text=True).stdout.strip().splitlines()[-1])
    mods = [m for m in mods if not m.startswith("_")]
    fw_imp, bare_imp = [], []
    for i in range(reps):
        for which in ((0, 1) if i % 2 == 0 else (1, 0)):
            (fw_imp if which == 0 else bare_imp).append(_import_cpu(["py_trees_manipulation.cli", *mods] if which == 0
                                                                    else ["pybullet", "pybullet_data"]))
    text = yaml.safe_dump(task_doc(0), sort_keys=False)
    first = framework_run(task_doc(0))
    fw, bare = [], []
    for i in range(reps):
        for which in ((0, 1) if i % 2 == 0 else (1, 0)):
            (fw if which == 0 else bare).append(_framework_phases(text) if which == 0
                                                else _bare_phases(first["sim_time_s"]))
    med = statistics.median
    f = {k: med(x[k] for x in fw) for k in fw[0]}
    b = {k: med(x[k] for x in bare) for k in bare[0]}
    fi, bi = med(fw_imp), med(bare_imp)
    f_rest = f["run"] - f["physics"] - f["planning"] - f["build"]
    b_rest = b["total"] - b["physics"] - b["load"] - b["ik"]
    rows = [("imports (fresh interpreter, less an empty one)", fi, bi),
            ("parse the task file", f["parse"], 0.0),
            ("scene: build, settling's physics aside (framework) / loadURDF (bare)", f["build"], b["load"]),
            (f"physics: stepSimulation ({int(f['steps'])} / {int(b['steps'])} calls, settling included)",
             f["physics"], b["physics"]),
            ("planning, grasp choice (framework) / calculateInverseKinematics (bare)", f["planning"], b["ik"]),
            ("the rest: per-step Python, ticks, metrics, close", f_rest, b_rest)]
    print(f"  {len(mods)} modules imported by a run ({sum(m.startswith('py_trees_manipulation') for m in mods)} of them "
          "the framework's)")
    print(f"  {'phase':72s} {'framework':>10s} {'bare':>8s} {'extra':>8s}")
    for label, a, c in rows:
        print(f"  {label:72s} {a * 1e3:8.0f} ms {c * 1e3:6.0f} ms {(a - c) * 1e3:+6.0f} ms")
    tf, tb = fi + f["total"], bi + b["total"]
    print(f"  {'total (without the interpreter start, the same for both)':72s} {tf * 1e3:8.0f} ms {tb * 1e3:6.0f} ms "
          f"{(tf - tb) * 1e3:+6.0f} ms: ratio {tb / tf:.2f}x")
    print(f"  physics per step: framework {f['physics'] / f['steps'] * 1e6:.1f} us, bare {b['physics'] / b['steps'] * 1e6:.1f} us")
    held = _held_step_cost(max(5, 2 * reps))
    print("  one step with the mug held, the arm still, after each script's run:")
    for label, v in held.items():
        print(f"    {label:58s} {med(v):6.1f} us")
    print(f"  load after: {load()}")


class _Variant:
    """One setting switched for a while in a built world: ``apply()`` then ``revert()``."""

    def __init__(self, label: str, apply: Callable[[], None], revert: Callable[[], None]):
        self.label, self.apply, self.revert = label, apply, revert


def section_settings(n_boxes: int, rounds: int) -> None:
    from py_trees_manipulation.sim import loading as sim_backend
    from py_trees_manipulation.trees.runner import RunOptions, make_backend, run_task

    print(f"\n== settings: per-step cost in the pick_and_lift world with {n_boxes} extra boxes after a run "
          f"(mug held, arm still); load {load()}")
    task = parse(task_doc(n_boxes))
    opts = RunOptions(display=False)
    sim = make_backend(task, opts)
    r = run_task(task, opts, backend=sim)
    assert r.summary["status"] == "SUCCESS", r.summary
    c = sim.client
    robot = sim.arms["panda"].robot
    fixtures = [sim._bodies[f.name] for f in sim.scene.fixtures]
    target = sim._objects.get(sim.scene.task.target_object or "")
    resting = [b for name, b in sim._objects.items() if b != target]
    roll = getattr(sim_backend, "FIXTURE_ROLLING_FRICTION_M", 0.0)
    finger = [(link, pb.getDynamicsInfo(robot.body, link, physicsClientId=c)[7]) for link in robot.finger_links]

    def awake() -> None:
        for b in [*fixtures, *resting]:
            pb.changeDynamics(b, -1, activationState=pb.ACTIVATION_STATE_DISABLE_SLEEPING, physicsClientId=c)
            pb.changeDynamics(b, -1, activationState=pb.ACTIVATION_STATE_WAKE_UP, physicsClientId=c)

    def asleep() -> None:
        for b in [*fixtures, *resting]:
            pb.changeDynamics(b, -1, activationState=pb.ACTIVATION_STATE_ENABLE_SLEEPING, physicsClientId=c)
        for b in resting:
            pb.changeDynamics(b, -1, activationState=pb.ACTIVATION_STATE_SLEEP, physicsClientId=c)

    sleeping_shipped = getattr(sim_backend, "SLEEP_THRESHOLD", None) is not None
    restore_sleep = asleep if sleeping_shipped else awake

    def set_roll(value: float) -> None:
        for b in fixtures:
            pb.changeDynamics(b, -1, rollingFriction=value, physicsClientId=c)

    soft = [(link, pb.getDynamicsInfo(robot.body, link, physicsClientId=c)[8:10]) for link in robot.finger_links]
    iters = pb.getPhysicsEngineParameters(physicsClientId=c)["numSolverIterations"]

    def scale_soft(factor: float) -> None:
        for link, (damping, stiffness) in soft:
            if stiffness > 0:
                pb.changeDynamics(robot.body, link, contactStiffness=stiffness * factor, contactDamping=damping * factor,
                                  physicsClientId=c)

    def set_iters(n: int) -> None:
        pb.setPhysicsEngineParameter(numSolverIterations=n, physicsClientId=c)

    def set_fingers(on: bool) -> None:
        for link, spin in finger:
            pb.changeDynamics(robot.body, link, spinningFriction=spin if on else 0.0, frictionAnchor=on,
                              physicsClientId=c)

    variants = [
        _Variant("framework as shipped", lambda: None, lambda: None),
        _Variant("resting bodies kept awake (PyBullet default)" if sleeping_shipped
                 else "resting bodies asleep (not shipped)", awake if sleeping_shipped else asleep, restore_sleep),
        _Variant(f"fixtures' rolling friction 0 (shipped {roll:g} m)", lambda: set_roll(0.0), lambda: set_roll(roll)),
        _Variant("kept awake and fixtures' rolling friction 0", lambda: (awake(), set_roll(0.0)),
                 lambda: (set_roll(roll), restore_sleep())),
        _Variant("fingers without friction anchor / spinning friction", lambda: set_fingers(False),
                 lambda: set_fingers(True)),
        _Variant("fingers' contact stiffness and damping x10 (soft contacts)", lambda: scale_soft(10.0),
                 lambda: scale_soft(1.0)),
        _Variant(f"solver iterations x2 ({2 * iters}; shipped {iters}, PyBullet's default 50)",
                 lambda: set_iters(2 * iters), lambda: set_iters(iters)),
    ]
    # the same bodies in a default world, in the same poses (the mug resting on the table)
    bare = pb.connect(pb.DIRECT)
    pb.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=bare)
    pb.setGravity(0, 0, -9.81, physicsClientId=bare)
    pb.setPhysicsEngineParameter(fixedTimeStep=sim.dt, physicsClientId=bare)
    pb.loadURDF("table/table.urdf", [0.5, 0, 0], useFixedBase=True, physicsClientId=bare)
    pbody = pb.loadURDF("franka_panda/panda.urdf", [0, 0, 0.626], useFixedBase=True, physicsClientId=bare)
    for j in range(pb.getNumJoints(robot.body, physicsClientId=c)):
        pb.resetJointState(pbody, j, pb.getJointState(robot.body, j, physicsClientId=c)[0], physicsClientId=bare)
    mug = pb.loadURDF("objects/mug.urdf", [0.5, 0, 0.629], globalScaling=0.8, physicsClientId=bare)
    pb.changeDynamics(mug, -1, mass=0.2, physicsClientId=bare)
    col = pb.createCollisionShape(pb.GEOM_BOX, halfExtents=[BOX / 2] * 3, physicsClientId=bare)
    for p in box_positions(n_boxes):
        pb.createMultiBody(BOX_MASS, col, -1, p, physicsClientId=bare)
    for _ in range(300):
        pb.stepSimulation(physicsClientId=bare)

    def chunk(cid: int, steps: int = 200) -> float:
        t0 = time.process_time()
        for _ in range(steps):
            pb.stepSimulation(physicsClientId=cid)
        return (time.process_time() - t0) / steps * 1e6

    def framework_chunk(steps: int = 200) -> float:
        t0 = time.process_time()
        sim.step(steps)
        return (time.process_time() - t0) / steps * 1e6

    per: dict[str, list[float]] = {v.label: [] for v in variants}
    per["default PyBullet world, same bodies at rest (no grasp)"] = []
    per["SimBackend.step (framework per-step work)"] = []
    for _ in range(rounds):
        for v in variants:
            v.apply()
            chunk(c, 50)
            per[v.label].append(chunk(c))
            v.revert()
        per["default PyBullet world, same bodies at rest (no grasp)"].append(chunk(bare))
        per["SimBackend.step (framework per-step work)"].append(framework_chunk())
    pb.disconnect(physicsClientId=bare)
    sim.close()
    shipped = statistics.median(per["framework as shipped"])
    for label, v in per.items():
        m = statistics.median(v)
        print(f"  {label:62s} {m:7.1f} us/step  ({m - shipped:+7.1f} us vs shipped)")
    print(f"  load after: {load()}")


GRIP_EXAMPLES = "pick_declared_grasp,pick_and_lift"
GRIP_MODELS = "franka_panda,kuka_iiwa_wsg50,ufactory_xarm6"


def _grip_run(example: str, model: str) -> tuple[dict, Any]:
    """One example on one model in this process, every ``stepSimulation`` timed and classed by the
    pads' contacts after it; returns the figures and the backend, kept open (the object held)."""
    from py_trees_manipulation.trees.loader import load_task
    from py_trees_manipulation.trees.runner import RunOptions, make_backend, run_task

    path = os.path.join(ROOT, "examples", f"{example}.yaml")
    task = load_task(path, [f"scene.robots.0.model={model}"])
    opts = RunOptions(display=False)
    sim = make_backend(task, opts)
    robot = next(iter(sim.arms.values())).robot
    body, pads, cid = robot.body, set(robot.finger_links), sim.client
    names = {j: pb.getJointInfo(body, j, physicsClientId=cid)[12].decode() for j in range(pb.getNumJoints(body, physicsClientId=cid))}
    classes: dict[str, list] = {}
    real = pb.stepSimulation

    def step(*a: Any, **k: Any) -> Any:
        t = time.process_time()
        out = real(*a, **k)
        dt = time.process_time() - t
        touching = {p[3] for p in pb.getContactPoints(bodyA=body, physicsClientId=cid) if p[2] != body}
        n = len(touching & pads)
        key = "both pads" if n == 2 else "one pad" if n == 1 else "no pad" if touching else "no contact"
        others = sorted(names.get(li, "base") for li in touching - pads)
        key += f" (+{','.join(others)})" if others and n else f" ({','.join(others)})" if others else ""
        key += f" @{pb.getPhysicsEngineParameters(physicsClientId=cid)['numSolverIterations']} it"
        c = classes.setdefault(key, [0, 0.0])
        c[0] += 1
        c[1] += dt
        return out

    pb.stepSimulation = step
    try:
        summary = run_task(task, opts, backend=sim).summary
    finally:
        pb.stepSimulation = real
    return {"status": summary["status"], "sim_time_s": summary["sim_time_s"], "classes": classes,
            "physics": sum(c[1] for c in classes.values()), "steps": sum(c[0] for c in classes.values())}, sim


def section_grip(examples: list[str], models: list[str], rounds: int) -> None:
    print(f"\n== grip: physics CPU per step by the pads' contacts (ms/step), load {load()}")
    runs = []
    for ex in examples:
        for m in models:
            fig, sim = _grip_run(ex, m)
            runs.append((f"{ex} / {os.path.basename(m)}", fig, sim))
            cl = fig["classes"]
            per = "  ".join(f"{k} {v[0]} x {v[1] / v[0] * 1e3:.3f}" for k, v in sorted(cl.items(), key=lambda kv: -kv[1][0]))
            print(f"  {runs[-1][0]:48s} {fig['status']:8s} physics {fig['physics']:6.2f} s CPU for {fig['steps']} steps "
                  f"({fig['sim_time_s']:.2f} s sim); {per}")

    def chunk(cid: int, steps: int = 300) -> float:
        t0 = time.process_time()
        for _ in range(steps):
            pb.stepSimulation(physicsClientId=cid)
        return (time.process_time() - t0) / steps * 1e3

    def collide(cid: int, steps: int = 300) -> float:
        t0 = time.process_time()
        for _ in range(steps):
            pb.performCollisionDetection(physicsClientId=cid)
        return (time.process_time() - t0) / steps * 1e3

    held: dict[tuple[str, str], list[float]] = {}
    iters = {label: pb.getPhysicsEngineParameters(physicsClientId=sim.client)["numSolverIterations"]
             for label, _fig, sim in runs}
    for _ in range(rounds):
        for label, _fig, sim in runs:
            held.setdefault((label, "step"), []).append(chunk(sim.client))
            held.setdefault((label, "collide"), []).append(collide(sim.client))
            if iters[label] != 50:
                pb.setPhysicsEngineParameter(numSolverIterations=50, physicsClientId=sim.client)
                held.setdefault((label, "step50"), []).append(chunk(sim.client))
                pb.setPhysicsEngineParameter(numSolverIterations=iters[label], physicsClientId=sim.client)
    print(f"  held at the end of the run, median of {rounds} interleaved chunks of 300 steps: the step, the collision "
          "detection alone (performCollisionDetection), the step at 50 solver iterations when more are in force:")
    for label, _fig, sim in runs:
        robot = next(iter(sim.arms.values())).robot
        pads = {p[3] for p in pb.getContactPoints(bodyA=robot.body, physicsClientId=sim.client)
                if p[2] != robot.body} & set(robot.finger_links)
        m = {k: statistics.median(v) for (lb, k), v in held.items() if lb == label}
        at50 = f"; {m['step50']:.3f} at 50 it" if "step50" in m else ""
        print(f"  {label:48s} {m['step']:7.3f} ms/step @{iters[label]} it (collision detection {m['collide']:.3f}{at50}); "
              f"pads touching: {len(pads)}")
        sim.close()
    print(f"  load after: {load()}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=3, help="ABBA pairs per comparison (default 3)")
    ap.add_argument("--only", choices=["settings", "objects", "tree", "clutter", "breakdown", "grip"], default=None)
    ap.add_argument("--n", default="0,20,80,200", help="extra boxes for 'objects' (default 0,20,80,200)")
    ap.add_argument("--nodes", default="50,200", help="extra tree nodes for 'tree' (default 50,200)")
    ap.add_argument("--obstacles", default="0,5,10,20", help="extra obstacles for 'clutter' (default 0,5,10,20)")
    ap.add_argument("--settings-n", default="0,80", help="extra boxes for 'settings' (default 0,80)")
    ap.add_argument("--states", type=int, default=5000, help="random states per clutter scene (default 5000)")
    ap.add_argument("--queries", type=int, default=20, help="plan queries per clutter scene (default 20)")
    ap.add_argument("--grip-examples", default=GRIP_EXAMPLES, help=f"examples for 'grip' (default {GRIP_EXAMPLES})")
    ap.add_argument("--grip-models", default=GRIP_MODELS,
                    help=f"robot models or description files for 'grip' (default {GRIP_MODELS})")
    args = ap.parse_args()
    print(f"bench_scaling {datetime.datetime.now().isoformat(timespec='minutes')} on {platform.node()} "
          f"({os.cpu_count()} cores), Python {platform.python_version()}, PyBullet API {pb.getAPIVersion()}; "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.only in (None, "settings"):
        for n in (int(x) for x in args.settings_n.split(",")):
            section_settings(n, rounds=max(5, 4 * args.reps))
    if args.only in (None, "objects"):
        section_objects([int(x) for x in args.n.split(",")], args.reps)
    if args.only in (None, "tree"):
        section_tree([int(x) for x in args.nodes.split(",")], args.reps)
    if args.only in (None, "clutter"):
        section_clutter([int(x) for x in args.obstacles.split(",")], args.states, args.queries)
    if args.only in (None, "breakdown"):
        section_breakdown(args.reps)
    if args.only in (None, "grip"):
        section_grip(args.grip_examples.split(","), args.grip_models.split(","), rounds=max(5, 4 * args.reps))


if __name__ == "__main__":
    main()
