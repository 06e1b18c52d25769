"""The minimal baseline of ``bench_process.py`` and ``bench_scaling.py``: the bodies of
``examples/pick_and_lift.yaml`` in a bare PyBullet script, stepped, nothing else.

What the shortest script with the same scene does: connect, load PyBullet's table, the Panda of
``pybullet_data/franka_panda/panda.urdf`` at its ready configuration, the mug at scale 0.8 and
0.2 kg, and ``--boxes`` extra 4 cm boxes resting at the far end of the table (bench_scaling.py's
grid); every setting PyBullet's default but the time step (1 kHz, as the example's); step
0.2 s of settling plus ``--sim-time`` seconds with the arm holding still (PyBullet's default
velocity motors); disconnect. No motor commands, no contact reads, no grasp: a floor, not the same
work as the framework's run (``bare_pybullet_pick.py`` is the grasping baseline).

Prints one JSON line: steps, wall and CPU time of the whole script and of the stepping.

Usage: ``python benchmarks/bare_pybullet_minimal.py [--sim-time 5.23] [--boxes 0]``
"""

from __future__ import annotations

import argparse
import json
import time

import pybullet as p
import pybullet_data

HZ = 1000
READY = [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785]
BOX = 0.04           # extra boxes: 4 cm cubes of 50 g
BOX_MASS = 0.05
TABLE_TOP = 0.625    # table/table.urdf's top, m


def box_positions(n: int) -> list[list[float]]:
    """``n`` box centres on a 4.5 cm grid at the far end of the table (x 0.78 ... 1.23 m, y -0.45 ...
    0.45 m: beyond the mug at x 0.5 m, 0.5 mm above the top so that they settle), row by row."""
    if n > 11 * 21:
        raise ValueError(f"at most {11 * 21} boxes fit, got {n}")
    out = []
    for k in range(n):
        i, j = divmod(k, 21)
        out.append([round(0.78 + 0.045 * i, 4), round(-0.45 + 0.045 * j, 4), TABLE_TOP + BOX / 2 + 0.0005])
    return out


def run(sim_time: float, boxes: int = 0, settle_s: float = 0.2) -> dict:
    """The whole script; returns what :func:`main` prints."""
    t_wall, t_cpu = time.perf_counter(), time.process_time()
    c = p.connect(p.DIRECT)
    p.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=c)
    p.setGravity(0, 0, -9.81, physicsClientId=c)
    p.setPhysicsEngineParameter(fixedTimeStep=1.0 / HZ, physicsClientId=c)
    p.loadURDF("table/table.urdf", [0.5, 0, 0], useFixedBase=True, physicsClientId=c)
    panda = p.loadURDF("franka_panda/panda.urdf", [0, 0, 0.626], useFixedBase=True, physicsClientId=c)
    for j, q in enumerate(READY):
        p.resetJointState(panda, j, q, physicsClientId=c)
    mug = p.loadURDF("objects/mug.urdf", [0.5, 0, 0.629], globalScaling=0.8, physicsClientId=c)
    p.changeDynamics(mug, -1, mass=0.2, physicsClientId=c)
    col = p.createCollisionShape(p.GEOM_BOX, halfExtents=[BOX / 2] * 3, physicsClientId=c)
    for pos in box_positions(boxes):
        p.createMultiBody(BOX_MASS, col, -1, pos, physicsClientId=c)
    steps = int(round(settle_s * HZ)) + int(round(sim_time * HZ))
    w0, c0 = time.perf_counter(), time.process_time()
    for _ in range(steps):
        p.stepSimulation(physicsClientId=c)
    stepping = (time.perf_counter() - w0, time.process_time() - c0)
    p.disconnect(physicsClientId=c)
    return {"steps": steps, "boxes": boxes, "sim_time_s": sim_time, "stepping_wall_s": round(stepping[0], 4),
            "stepping_cpu_s": round(stepping[1], 4), "wall_s": round(time.perf_counter() - t_wall, 4),
            "cpu_s": round(time.process_time() - t_cpu, 4)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sim-time", type=float, default=5.23, help="sim time to step after settling, s")
    ap.add_argument("--boxes", type=int, default=0, help="extra resting 4 cm boxes (default 0)")
    args = ap.parse_args()
    print(json.dumps(run(args.sim_time, args.boxes)))


if __name__ == "__main__":
    main()
