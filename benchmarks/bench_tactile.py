"""Cost of the simulated tactile sensing and the PR2 gripper controller per 1 kHz physics step.

Goal (issue 3): the controller and the tactile emulation together add at most 25 % to the physics
step cost at 1 kHz. Three runs of the same scene (the Panda squeezing a 5 cm box on the table with
the fingers at 10 N, contacts active), each ``--steps`` physics steps:

1. *bare*: ``stepSimulation`` with the sensing extension disabled (``tactile: {enabled: false}``)
   and the fingers on PyBullet position motors;
2. *sensing*: the extension on, no controller (contact sampling every 5 ms for the metrics);
3. *controller*: the extension on and the PR2 controller installed and force-servoing at 10 N
   (1 kHz adapter: joint states, accelerometer, controller step, motor command; frames at 24.4 Hz).

Prints microseconds per step and the overhead of 2 and 3 over 1.

Usage::

    python benchmarks/bench_tactile.py [--steps 5000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import time

from py_trees_manipulation.geometry.poses import pose_from_spec
from py_trees_manipulation.msgs import gripper_sensor as gs
from py_trees_manipulation.msgs.motion import MoveCartesianGoal, MoveToPoseGoal, Pr2GripperCommand
from py_trees_manipulation.sim import SimBackend

TABLE_TOP = 0.626


def make(enabled: bool) -> SimBackend:
    scene = {
        "robots": [{"name": "panda", "base_pose": {"position": [0, 0, TABLE_TOP]}}],
        "fixtures": [{"name": "table", "urdf": "table/table.urdf", "pose": {"position": [0.5, 0, 0]}}],
        "objects": [{"name": "box", "primitive": {"shape": "box", "size": [0.05, 0.05, 0.05]}, "mass_kg": 0.2,
                     "contact_stiffness": 10000, "contact_damping": 10,
                     "pose": {"position": [0.5, 0.0, TABLE_TOP + 0.025]}}],
        "tactile": {"enabled": enabled, "finger_contact_damping": 100},
    }
    sim = SimBackend(scene)
    arm = sim.arms["panda"]
    z = TABLE_TOP + 0.025
    for action, goal in (("move_to_pose", MoveToPoseGoal(pose_from_spec({"position": [0.5, 0, z + 0.1], "rpy_deg": [180, 0, 90]}))),
                         ("move_cartesian", MoveCartesianGoal(pose_from_spec({"position": [0.5, 0, z], "rpy_deg": [180, 0, 90]}), speed_mps=0.1))):
        h = arm.send_goal(action, goal)
        while not h.done:
            sim.advance(1 / 30)
    return sim


def squeeze(sim: SimBackend, controller: bool) -> None:
    g = sim.grippers["panda"]
    if controller:
        g.send_goal("find_contact", gs.PR2GripperFindContactCommand(True, 0))
        sim.advance(3.0)
        g.send_goal("force_servo", gs.PR2GripperForceServoCommand(10.0))
    else:
        g.send_goal("gripper_action", Pr2GripperCommand(0.0, 10.0))
    sim.advance(1.5)


def time_steps(sim: SimBackend, steps: int, repeat: int) -> float:
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        sim.step(steps)
        out.append((time.perf_counter() - t0) / steps * 1e6)
    return statistics.median(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=5000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    cases = {}
    for label, enabled, controller in (("bare stepSimulation (sensing off, position motors)", False, False),
                                       ("tactile sensing on, no controller", True, False),
                                       ("sensing + PR2 controller (force servo 10 N)", True, True)):
        sim = make(enabled)
        squeeze(sim, controller)
        if controller:
            assert sim.telemetry()["gripper/panda"]["mode"] == "FORCE_SERVO"
        cases[label] = time_steps(sim, args.steps, args.repeat)
        sim.close()
    bare = next(iter(cases.values()))
    print(f"Per physics step at 1 kHz (median of {args.repeat} x {args.steps} steps, gripper squeezing a box)")
    for label, us in cases.items():
        extra = "" if us is bare else f"   (+{us - bare:5.1f} us, +{100 * (us - bare) / bare:5.1f} % over bare)"
        print(f"  {label:52s} {us:7.1f} us{extra}")
    ctl = list(cases.values())[-1]
    verdict = "meets" if ctl - bare <= 0.25 * bare else "misses"
    print(f"Goal: controller + tactile emulation add <= 25 % -> {verdict} ({100 * (ctl - bare) / bare:.1f} %)")


if __name__ == "__main__":
    main()
