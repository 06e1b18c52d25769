"""Physics throughput of the PyBullet backend against bare ``stepSimulation`` on the same scene.

Prints steps per second (1 step = 1 ms of simulated time at 1 kHz) for:

1. bare ``pybullet.stepSimulation`` of the pick scene (Panda, table, box; the arm holds still);
2. a bare replay of the joint trajectories the framework plans (raw ``setJointMotorControlArray`` +
   ``stepSimulation`` per step: the same physics work as 3, none of the framework);
3. ``SimBackend.advance(1/30)`` with the arm cycling through ``move_to_pose`` goals (IK, planning,
   feedback, the 100 Hz metrics monitor: what ``ptm run`` pays);

and the framework overhead, 3 against 2, in percent (goal in issue 2: at most 30 %), plus 3 against 1
(which also counts the extra physics work of a moving arm).

Usage: ``python benchmarks/bench_sim.py [--seconds SIM_SECONDS] [--chunk SIM_SECONDS]``
"""

from __future__ import annotations

import argparse
import time

import pybullet as pb

from py_trees_manipulation.geometry.poses import pose_from_spec
from py_trees_manipulation.msgs.motion import MoveToPoseGoal
from py_trees_manipulation.sim import SimBackend

TOP = 0.626
SCENE = {
    "robots": [{"name": "panda", "base_pose": {"position": [0, 0, TOP]}}],
    "fixtures": [{"name": "table", "urdf": "table/table.urdf", "pose": {"position": [0.5, 0, 0]}}],
    "objects": [{"name": "box", "primitive": {"shape": "box", "size": [0.05, 0.05, 0.05]}, "mass_kg": 0.1,
                 "pose": {"position": [0.5, 0, TOP + 0.025]}}],
}
TARGETS = [pose_from_spec({"position": p, "rpy_deg": [180, 0, 0]})
           for p in ([0.45, 0.2, TOP + 0.2], [0.55, -0.2, TOP + 0.15], [0.35, 0.0, TOP + 0.35])]


class _Bare:
    """Bare ``stepSimulation`` of the pick scene; with ``replay=True`` the arm replays, with one raw
    ``setJointMotorControlArray`` per step, the very joint trajectories the framework plans for the
    same goals (the same physics work, none of the framework's bookkeeping)."""

    def __init__(self, replay: bool):
        self.sim = SimBackend(SCENE)
        self.arm = self.sim.arms["panda"]
        self.replay = replay
        self.traj: list[tuple[list[float], list[float]]] = []
        if replay:
            planner = SimBackend(SCENE)
            arm = planner.arms["panda"]
            for target in TARGETS:
                h = arm.send_goal("move_to_pose", MoveToPoseGoal(target, velocity_scaling=0.8))
                ex = arm._active
                self.traj += list(zip(ex.q, ex.qd))
                arm.preempt()
                arm.robot.reset_arm(ex.q[-1])
                arm.hold(ex.q[-1])
            planner.close()
            self.arm.robot.reset_arm(self.traj[-1][0])
        self.k = 0

    def chunk(self, steps: int) -> float:
        c, step = self.sim.client, pb.stepSimulation
        cmd = self.arm._motor_command
        traj, n = self.traj, len(self.traj)
        t0 = time.perf_counter()
        if self.replay:
            k = self.k
            for _ in range(steps):
                q, qd = traj[k]
                cmd(q, qd)
                step(physicsClientId=c)
                k = k + 1 if k + 1 < n else 0
            self.k = k
        else:
            for _ in range(steps):
                step(physicsClientId=c)
        return (time.perf_counter() - t0) / steps


class _Framework:
    """``SimBackend.advance(1/30)`` with the arm cycling through ``move_to_pose`` goals."""

    def __init__(self) -> None:
        self.sim = SimBackend(SCENE)
        self.arm = self.sim.arms["panda"]
        self.goals = 0
        self.handle = None
        self.send_s = 0.0

    def chunk(self, steps: int) -> float:
        sim = self.sim
        end = sim.steps + steps
        s0 = sim.steps
        t0 = time.perf_counter()
        while sim.steps < end:
            if self.handle is None or self.handle.done:
                ts = time.perf_counter()
                target = TARGETS[self.goals % len(TARGETS)]
                self.handle = self.arm.send_goal("move_to_pose", MoveToPoseGoal(target, velocity_scaling=0.8))
                self.send_s += time.perf_counter() - ts
                self.goals += 1
            sim.advance(1 / 30)
        sim.metrics()
        return (time.perf_counter() - t0) / (sim.steps - s0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=30.0, help="simulated seconds per variant")
    ap.add_argument("--chunk", type=float, default=3.0, help="simulated seconds per interleaved chunk")
    args = ap.parse_args()
    # The variants run in interleaved chunks and each keeps its fastest chunk, so load from other
    # processes on the machine biases none of them.
    variants = {"bare": _Bare(False), "replay": _Bare(True), "framework": _Framework()}
    best = {k: float("inf") for k in variants}
    steps = int(args.chunk * 1000)
    for _ in range(max(1, int(round(args.seconds / args.chunk)))):
        for k, v in variants.items():
            best[k] = min(best[k], v.chunk(steps))
    fw = variants["framework"]
    for v in variants.values():
        v.sim.close()
    b, bm, f = (1.0 / best[k] for k in ("bare", "replay", "framework"))
    print(f"pick scene (Panda + table + box), physics 1 kHz; best of interleaved {args.chunk:g} s chunks, "
          f"{args.seconds:g} simulated s per variant")
    print(f"  bare stepSimulation, arm still  {b:8.0f} steps/s  (real-time factor {b / 1000:5.1f})")
    print(f"  bare replay of the same motion  {bm:8.0f} steps/s  (real-time factor {bm / 1000:5.1f})")
    print(f"  SimBackend.advance, arm moving  {f:8.0f} steps/s  (real-time factor {f / 1000:5.1f}; "
          f"{fw.goals} move_to_pose goals, {fw.send_s / max(fw.goals, 1) * 1000:.1f} ms IK + planning each)")
    print(f"  framework overhead vs bare replay of the same motion: {100 * (bm / f - 1):.1f} %")
    print(f"  slow-down vs a still arm (moving-arm physics included): {100 * (b / f - 1):.1f} %")


if __name__ == "__main__":
    main()
