"""Physics steps per second with and without the GraspFix extension (headless PyBullet, 1 kHz).

Three situations on the Panda + 0.3 kg box scene:
  idle      the hand is in the air: GraspFix does one getContactPoints per finger link per step;
  squeeze   the fingers squeeze the box (contacts every step, attached after 1.2 s);
  held      the box is welded and lifted 10 cm, fingers still squeezing.
Each is run without a ``grasp_fix:`` section and with ``grasp_fix: {auto: true}``; the GraspFix
step hook is also timed on its own (its share of the physics step's wall time).

    python benchmarks/bench_grasp_fix.py [--steps 3000]
"""

from __future__ import annotations

import argparse
import time

from py_trees_manipulation.geometry.poses import pose_from_spec
from py_trees_manipulation.msgs.motion import MoveCartesianGoal, MoveToPoseGoal, Pr2GripperCommand
from py_trees_manipulation.sim import SimBackend

TABLE_TOP = 0.626


def scene(grasp_fix: bool) -> dict:
    s = {
        "robots": [{"name": "panda", "base_pose": {"position": [0, 0, TABLE_TOP]}}],
        "fixtures": [{"name": "table", "urdf": "table/table.urdf", "pose": {"position": [0.5, 0, 0]}}],
        "objects": [{"name": "box", "primitive": {"shape": "box", "size": [0.05, 0.05, 0.05]}, "mass_kg": 0.3,
                     "pose": {"position": [0.5, 0.0, TABLE_TOP + 0.025]}}],
    }
    if grasp_fix:
        s["grasp_fix"] = {"auto": True}
    return s


def _run(sim: SimBackend, h, limit_s: float = 10.0) -> None:
    t0 = sim.now()
    while not h.done and sim.now() - t0 < limit_s:
        sim.advance(1 / 30)


def prepare(sim: SimBackend, situation: str) -> None:
    down = lambda z: pose_from_spec({"position": [0.5, 0.0, z], "rpy_deg": [180, 0, 90]})  # noqa: E731
    arm, grip = sim.arms["panda"], sim.grippers["panda"]
    if situation == "idle":
        _run(sim, arm.send_goal("move_to_pose", MoveToPoseGoal(down(TABLE_TOP + 0.2))))
        return
    _run(sim, arm.send_goal("move_to_pose", MoveToPoseGoal(down(TABLE_TOP + 0.145))))
    _run(sim, arm.send_goal("move_cartesian", MoveCartesianGoal(down(TABLE_TOP + 0.025), speed_mps=0.1)))
    _run(sim, grip.send_goal("gripper_action", Pr2GripperCommand(0.0, 40.0)))
    if situation == "held":
        sim.advance(1.5)
        _run(sim, arm.send_goal("move_cartesian", MoveCartesianGoal(down(TABLE_TOP + 0.125), speed_mps=0.1)))


def measure(grasp_fix: bool, situation: str, steps: int, repeats: int = 3) -> tuple[float, float]:
    """(best physics steps/s, GraspFix hook time per step in microseconds) over ``repeats`` runs."""
    best, hook_us = 0.0, float("inf")
    with SimBackend(scene(grasp_fix)) as sim:
        prepare(sim, situation)
        sim.arms["panda"].hold()
        spent = [0.0]
        if grasp_fix:
            ext = sim.extensions["grasp_fix"]
            i = sim._post_hooks.index(ext._on_step)
            inner = sim._post_hooks[i]

            def timed(b, inner=inner):
                t = time.perf_counter()
                inner(b)
                spent[0] += time.perf_counter() - t
            sim._post_hooks[i] = timed
        for _ in range(repeats):
            spent[0] = 0.0
            t0 = time.perf_counter()
            sim.step(steps)
            best = max(best, steps / (time.perf_counter() - t0))
            hook_us = min(hook_us, spent[0] / steps * 1e6)
    return best, (hook_us if grasp_fix else 0.0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=3000)
    args = ap.parse_args()
    print(f"{'situation':<10} {'without (steps/s)':>18} {'with (steps/s)':>15} {'hook (us/step)':>15} "
          f"{'hook share':>11}")
    for situation in ("idle", "squeeze", "held"):
        a, _ = measure(False, situation, args.steps)
        b, hook_us = measure(True, situation, args.steps)
        print(f"{situation:<10} {a:>18.0f} {b:>15.0f} {hook_us:>15.1f} {100 * hook_us * 1e-6 * b:>10.1f}%")
    print("hook: wall time inside the GraspFix step hook per physics step; the steps/s columns also differ by the")
    print("physics itself (a weld constraint, a box on the table or in the air) and by this machine's load.")

if __name__ == "__main__":
    main()
