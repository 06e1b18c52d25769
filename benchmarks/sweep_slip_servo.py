"""Sweep of the slip servo (issue 33 item 5): examples/slip_servo.yaml over robots, can masses and
seeds, with held / dropped / slid / missed-slip counts per robot.

Every run lifts and shakes the slippery can (friction 0.3 against the 1.5 pads, mu 0.45) held by
SlipServo under its 20 N ``fingertip_force_limit``; ``grip_margin = 20 N / (m g / (2 mu))`` says
the limit can hold every mass swept here (4.59 at 0.4 kg to 1.53 at 1.2 kg). For each run it
prints the verdict and the figures the verdict should rest on:

- *held*: the can was lifted (``object_max_lift_m`` >= 0.10 m), not dropped and did not slide in
  the hand more than the run's tolerance (``object_slid_in_hand_m``);
- *dropped*: ``object_dropped``, or not lifted;
- *false SUCCESS*: status SUCCESS while the can is not held (must be 0);
- ``slip_events`` (ground-truth slip episodes), ``slip_events_detected`` (*felt*: those the servo
  flagged) and ``slip_events_missed`` (those it did not flag while it listened; the rest, e.g. a
  slip as the fingers close before the hold, it was not listening for), summed at 0.9-1.0 kg, where
  issue 33 asks that they are detected; ``slip_detections`` (*flags*: onsets of the servo's slip
  flag; more flags than slips felt are flags on a still object, or one slip flagged twice);
- the largest ``max_fingertip_force_n`` and ``max_grip_effort_n`` (N; the limit is 20 N).

Usage::

    python benchmarks/sweep_slip_servo.py [--robots panda,kuka,xarm] [--masses 0.4,0.6,0.8,0.9,1.0,1.2]
        [--seeds 0,1] [--workers 2] [--set KEY=VALUE ...]

It prints one line per run and a table per robot; it asserts nothing (a benchmark, not a test).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "examples", "slip_servo.yaml")
ROBOTS = {"panda": "franka_panda", "kuka": "kuka_iiwa_wsg50", "xarm": "ufactory_xarm6"}
LIFTED_M = 0.10


def run_one(args: tuple[str, float, int, tuple[str, ...]]) -> dict[str, Any]:
    robot, mass, seed, extra = args
    from py_trees_manipulation.trees.loader import load_task
    from py_trees_manipulation.trees.runner import RunOptions, run_task

    overrides = [f"scene.robots.0.model={ROBOTS[robot]}", f"scene.objects.0.mass_kg={mass}", *extra]
    t0 = time.monotonic()
    task = load_task(EXAMPLE, overrides)
    res = run_task(task, RunOptions(seed=seed, display=False, timeout_s=60.0))
    s = res.summary
    m = s.get("metrics", {})
    failed = s.get("failed_behaviour") or {}
    return {"robot": robot, "mass": mass, "seed": seed, "status": s.get("status"), "metrics": m,
            "why": (failed.get("feedback") or s.get("message") or "")[:110], "wall_s": time.monotonic() - t0}


def held(r: dict[str, Any]) -> bool:
    from py_trees_manipulation.trees.runner import SLID_IN_HAND_M

    m = r["metrics"]
    return (not m.get("object_dropped") and (m.get("object_max_lift_m") or 0.0) >= LIFTED_M
            and (m.get("object_slid_in_hand_m") or 0.0) <= SLID_IN_HAND_M)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--robots", default="panda,kuka,xarm")
    ap.add_argument("--masses", default="0.4,0.6,0.8,0.9,1.0,1.2")
    ap.add_argument("--seeds", default="0,1")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override in every run")
    a = ap.parse_args()
    robots = [r.strip() for r in a.robots.split(",") if r.strip()]
    for r in robots:
        if r not in ROBOTS:
            ap.error(f"unknown robot {r!r}: choose from {', '.join(ROBOTS)}")
    masses = [float(v) for v in a.masses.split(",")]
    seeds = [int(v) for v in a.seeds.split(",")]
    jobs = [(r, m, s, tuple(a.set)) for r in robots for m in masses for s in seeds]
    t0 = time.monotonic()
    print(f"{len(jobs)} runs of {os.path.relpath(EXAMPLE)} ({a.workers} workers)", flush=True)
    print(f"{'robot':6} {'kg':>4} {'seed':>4} {'status':8} {'lift':>6} {'slid':>6} {'drop':>5} {'slips':>5} "
          f"{'felt':>4} {'missed':>6} {'flags':>5} {'Fmax':>5} {'Emax':>5}  reason", flush=True)
    results = []
    with ProcessPoolExecutor(max_workers=max(1, a.workers)) as ex:
        for r in ex.map(run_one, jobs):
            m = r["metrics"]
            results.append(r)
            print(f"{r['robot']:6} {r['mass']:4.1f} {r['seed']:4d} {r['status']:8} "
                  f"{m.get('object_max_lift_m', 0.0):6.3f} {m.get('object_slid_in_hand_m', float('nan')):6.3f} "
                  f"{str(bool(m.get('object_dropped'))):>5} {m.get('slip_events', 0):5d} "
                  f"{m.get('slip_events_detected', 0):4d} {m.get('slip_events_missed', 0):6d} "
                  f"{m.get('slip_detections', 0):5d} "
                  f"{m.get('max_fingertip_force_n', 0.0):5.1f} "
                  f"{m.get('max_grip_effort_n', 0.0):5.1f}  {r['why'] if r['status'] != 'SUCCESS' else ''}",
                  flush=True)
    print()
    print(f"{'robot':6} {'runs':>4} {'held':>4} {'dropped':>7} {'success':>7} {'false SUCCESS':>13} "
          f"{'slips 0.9-1.0 kg':>16} {'felt':>4} {'missed':>6} {'max Fpad N':>10}")
    for robot in robots:
        rs = [r for r in results if r["robot"] == robot]
        heavy = [r for r in rs if 0.85 <= r["mass"] <= 1.05]
        n_held = sum(held(r) for r in rs)
        n_succ = sum(r["status"] == "SUCCESS" for r in rs)
        false_succ = sum(r["status"] == "SUCCESS" and not held(r) for r in rs)
        print(f"{robot:6} {len(rs):4d} {n_held:4d} {len(rs) - n_held:7d} {n_succ:7d} {false_succ:13d} "
              f"{sum(r['metrics'].get('slip_events', 0) for r in heavy):16d} "
              f"{sum(r['metrics'].get('slip_events_detected', 0) for r in heavy):4d} "
              f"{sum(r['metrics'].get('slip_events_missed', 0) for r in heavy):6d} "
              f"{max((r['metrics'].get('max_fingertip_force_n', 0.0) for r in rs), default=0.0):10.1f}")
    print(f"\n{time.monotonic() - t0:.0f} s wall, {sum(r['wall_s'] for r in results):.0f} s of runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
