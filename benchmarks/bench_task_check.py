"""The cost of checking a whole task before the arm moves (prints figures; never a timed test).

For the shipped examples, the check ``CheckReachability`` runs (the same function, on the same
collision world the simulator builds, :func:`~py_trees_manipulation.collision.reachability.check_for_task`):

* ``open_door``: the lever grasped, turned 45 deg, held along the whole 62 deg arc (the leaf
  swinging in the collision world), turned back, the retreat; the base as shipped;
* ``open_drawer``: the bar along the whole 0.25 m pull and the retreat;
* ``pick_and_place``: every grasp of the mug through the whole pick and place (``place_position``:
  the lift with the mug attached, above the place, lowered onto it, released, the retreat, each
  straight line followed by the motion's own line IK), until one works;
* ``pick_and_place`` with a place nothing reaches (``[0.2, 0.85, 0.629]``): every grasp tried and
  refused (the worst case of a refusal before moving);

and the regrasp plan of ``flip_box`` (every transition's straight lines followed by the executor's
line IK; ``PlanRegrasp``'s geometric planning, :func:`~py_trees_manipulation.behaviors.regrasp.plan_in_world`
is not repeated here: see ``bench_planning.py``).

Then ``ptm validate --plan`` on each shipped task (:func:`~py_trees_manipulation.trees.plan_check.plan_check`:
the collision world built from the file, robots placed, the tree ticked once against it: every
planning check in tick order and the dry run past the grasp: the lift, carry, place and retreat with
the object held, the door's twist, arc and retreat from the open leaf), wall and CPU time (CPU time
is the figure to read on a loaded machine), and how many motions the dry run followed; then
``pick_and_place`` and ``open_door`` on every stock robot (the overrides of ``example_metrics.py``).

Goal (issue 33): under 1 s for pick_and_place and the door on the 2-core machine.

Last, what keeping the check's plans saves the run (``ptm run --plan-first``, the hardware default):
the run's own planning time and CPU time with the check's plans followed and with them dropped.

Run: ``python benchmarks/bench_task_check.py [--repeat 5] [--only kept]``
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import py_trees_manipulation.sim  # noqa: F401  (scene sections)
from py_trees_manipulation.collision.reachability import check_for_task
from py_trees_manipulation.collision.world import CollisionWorld
from py_trees_manipulation.scene.reach_targets import ReachRequest, request_from_params, targets_for
from py_trees_manipulation.scene.spec import parse_scene
from py_trees_manipulation.trees.loader import load_task
from py_trees_manipulation.trees.plan_check import plan_check

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
GOAL_S = 1.0


def _check_node_params(task) -> dict:
    for node in task.tree.walk():
        if node.type == "CheckReachability":
            return dict(node.params)
    return {}


def cases() -> list[tuple[str, str, list[str], ReachRequest | None]]:
    place = ReachRequest(object="mug", place_position=(0.45, 0.2, 0.629))
    far = ReachRequest(object="mug", place_position=(0.2, 0.85, 0.629))
    return [("open_door", "open_door.yaml", [], None),
            ("open_drawer", "open_drawer.yaml", [], None),
            ("pick_and_place", "pick_and_place.yaml", [], place),
            ("pick_and_place, refused", "pick_and_place.yaml", [], far)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--only", choices=["kept"], help="only the kept plans' figures (ptm run --plan-first)")
    args = ap.parse_args()
    if args.only == "kept":
        kept_plans(args.repeat)
        return
    print(f"whole-task check before the arm moves, {args.repeat} runs each (goal < {GOAL_S:g} s)")
    print(f"{'task':<26} {'ok':>5} {'samples':>8} {'median s':>9} {'max s':>7}")
    for label, file, sets, request in cases():
        task = load_task(str(EXAMPLES / file), sets)
        scene = parse_scene(task.scene, base_dir=task.scene_dir or str(EXAMPLES))
        if request is None:
            request = request_from_params(_check_node_params(task))
        world = CollisionWorld.from_scene(scene)
        robot = scene.robots[0].name
        times = []
        results = []
        try:
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                targets = targets_for(request, scene, object_pose=world.object_pose)
                margin = targets_for(request.with_margin(), scene, object_pose=world.object_pose)
                results = check_for_task(world, robot, targets, margin, seed=0)
                times.append(time.perf_counter() - t0)
        finally:
            world.close()
        ok = all(r.ok for r in results)
        samples = sum(r.reached for r in results)
        med = statistics.median(times)
        flag = "" if med < GOAL_S or "refused" in label else "  (over the goal)"
        print(f"{label:<26} {str(ok):>5} {samples:>8} {med:9.3f} {max(times):7.3f}{flag}")
        if not ok:
            print(f"    refusal: {results[[r.ok for r in results].index(False)].describe()[:160]}")


    print()
    print("ptm validate --plan: every planning check of the tree against the scene as written (the collision "
          "world built, robots placed), wall and CPU seconds")
    print(f"{'task':<40} {'problems':>8} {'followed':>8} {'median s':>9} {'cpu s':>7}")
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import example_metrics as em

    runs = [(name, em.SHIPPED_MODEL) for name in ("pick_and_lift", "pick_and_place", "open_door", "open_drawer",
                                                  "flip_box", "regrasp")]
    runs += [(name, model) for name in ("pick_and_place", "open_door") for model in em.MODELS
             if model != em.SHIPPED_MODEL]
    for name, model in runs:
        path = str(EXAMPLES / f"{name}.yaml")
        robots = len((load_task(path).scene or {}).get("robots") or [])
        task = load_task(path, em.overrides_for(name, model, robots))
        walls, cpus, found, lines = [], [], [], []
        for _ in range(args.repeat):
            lines = []
            t0, c0 = time.perf_counter(), time.process_time()
            found = plan_check(task, progress=lines.append)
            walls.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
        followed = sum("(followed" in t for t in lines)
        goal = name in ("pick_and_place", "open_door")
        flag = "  (over the goal)" if goal and statistics.median(cpus) >= GOAL_S else ""
        print(f"{name + ' / ' + model:<40} {len(found):>8} {followed:>8} {statistics.median(walls):9.3f} "
              f"{statistics.median(cpus):7.3f}{flag}")

    kept_plans(args.repeat)


def kept_plans(repeat: int) -> None:
    """``ptm run --plan-first`` (the hardware default) on the simulator: the check before the first
    goal, then the run, once with the check's plans kept for the run's motions to follow
    (:mod:`py_trees_manipulation.collision.kept_plans`) and once with them dropped (every motion planned
    again as it starts: what the run did before); the run's own planning time (wall: the metric
    ``planning_time_s``, the taken plans' key and path re-check included), the run's CPU time, and how
    many motions followed the check's plan / were planned again."""
    from py_trees_manipulation.trees.plan_check import plan_check_in_backend
    from py_trees_manipulation.trees.runner import RunOptions, make_backend, run_task

    print()
    print("ptm run --plan-first: the run after the check, its motions following the check's plans (kept) or "
          "planned again (dropped); the run's planning wall s and its CPU s, medians")
    print(f"{'task':<20} {'motions':>7} {'followed':>8} {'replanned':>9} {'plan s kept':>11} {'dropped':>8} "
          f"{'cpu s kept':>10} {'dropped':>8}")
    for name in ("pick_and_lift", "pick_and_place", "pick_from_clutter", "place_on_contact", "open_door",
                 "open_drawer", "slip_servo"):
        task = load_task(str(EXAMPLES / f"{name}.yaml"))
        figures: dict[bool, list] = {True: [], False: []}
        for _ in range(repeat):
            for keep in (True, False):
                options = RunOptions(display=False, plan_first=False)
                backend = make_backend(task, options)
                try:
                    plan_check_in_backend(task, backend, seed=int((task.scene or {}).get("seed", 0) or 0))
                    if not keep:
                        backend.motion_planning.worker.world.kept_plans = None
                    c0 = time.process_time()
                    m = run_task(task, options, backend=backend).summary["metrics"]
                    figures[keep].append((m.get("planning_time_s", 0.0), time.process_time() - c0,
                                          m.get("planned_motions", 0), m.get("motions_from_check", 0),
                                          m.get("motions_replanned", 0)))
                finally:
                    backend.close()

        def med(keep: bool, i: int) -> float:
            return statistics.median(f[i] for f in figures[keep])

        k = figures[True][-1]
        print(f"{name:<20} {k[2]:>7} {k[3]:>8} {k[4]:>9} {med(True, 0):11.3f} {med(False, 0):8.3f} "
              f"{med(True, 1):10.2f} {med(False, 1):8.2f}")


if __name__ == "__main__":
    main()
