"""The baseline of ``bench_process.py``: ``examples/pick_and_lift.yaml`` written as a bare PyBullet script.

What a user would write without this project: the same scene (PyBullet's table, the Panda of
``pybullet_data/franka_panda/panda.urdf`` on it, the mug at scale 0.8 and 0.2 kg), the same physics
settings (1 kHz, 50 solver iterations, 0.2 s of settling), and a scripted pick: hold, move above the
mug, descend, close the fingers on it (40 N), lift it 0.15 m, wait. The joint path is solved with
``calculateInverseKinematics`` before the motion (one solution per 20 ms waypoint of the lines),
and every physics step sends the arm's and the fingers' motor commands and reads the hand's contacts
with the mug, as the framework's controllers and sensors do.

It steps exactly ``--sim-time`` seconds of sim time after the settling (bench_process.py passes the
``sim_time_s`` of a ``ptm run`` of the example) and prints one JSON line: steps, the mug's lift (m),
the contact points read, wall and CPU time of the stepping. Its process is what is timed.

Usage: ``python benchmarks/bare_pybullet_pick.py [--sim-time 5.73]``
"""

from __future__ import annotations

import argparse
import json
import math
import time

import pybullet as p
import pybullet_data

HZ = 1000
READY = [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785]
DOWN = p.getQuaternionFromEuler([math.pi, 0.0, math.pi / 2])  # fingers down, closing along world x
MUG = [0.5, 0.0, 0.629]
GRASP_Z = MUG[2] + 0.045


def run(sim_time: float) -> dict:
    """The whole script (connect, load, plan, step ``sim_time`` s after the settling, disconnect);
    returns what :func:`main` prints (bench_scaling.py calls it in its own process)."""
    t_wall, t_cpu = time.perf_counter(), time.process_time()

    c = p.connect(p.DIRECT)
    p.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=c)
    p.setGravity(0, 0, -9.81, physicsClientId=c)
    p.setPhysicsEngineParameter(fixedTimeStep=1.0 / HZ, numSolverIterations=50, numSubSteps=0, physicsClientId=c)
    p.loadURDF("table/table.urdf", [0.5, 0, 0], useFixedBase=True, physicsClientId=c)
    panda = p.loadURDF("franka_panda/panda.urdf", [0, 0, 0.626], useFixedBase=True, physicsClientId=c)
    mug = p.loadURDF("objects/mug.urdf", MUG, globalScaling=0.8, physicsClientId=c)
    p.changeDynamics(mug, -1, mass=0.2, physicsClientId=c)
    names = {p.getJointInfo(panda, j, physicsClientId=c)[1].decode(): j for j in range(p.getNumJoints(panda, physicsClientId=c))}
    arm = [names[f"panda_joint{i}"] for i in range(1, 8)]
    fingers = [names["panda_finger_joint1"], names["panda_finger_joint2"]]
    tcp = names["panda_grasptarget_hand"]
    for j, q in zip(arm, READY):
        p.resetJointState(panda, j, q, physicsClientId=c)
    for j in fingers:
        p.resetJointState(panda, j, 0.04, physicsClientId=c)
        p.changeDynamics(panda, j, lateralFriction=1.5, spinningFriction=0.003, frictionAnchor=True, physicsClientId=c)
    gear = p.createConstraint(panda, fingers[0], panda, fingers[1], p.JOINT_GEAR, [1, 0, 0], [0, 0, 0], [0, 0, 0],
                              physicsClientId=c)
    p.changeConstraint(gear, gearRatio=-1, erp=0.1, maxForce=50, physicsClientId=c)
    forces = [87.0] * 4 + [12.0] * 3

    def ik(pos: list[float], seed: list[float]) -> list[float]:
        for j, q in zip(arm, seed):
            p.resetJointState(panda, j, q, physicsClientId=c)
        sol = p.calculateInverseKinematics(panda, tcp, pos, DOWN, maxNumIterations=100, residualThreshold=1e-6,
                                           physicsClientId=c)
        return list(sol[:7])

    def line(q0: list[float], z0: float, z1: float, seconds: float) -> list[list[float]]:
        """Joint targets every step along a vertical TCP line: IK every 20 ms, linear in between."""
        n_wp = max(1, int(seconds / 0.02))
        wps = [q0]
        for k in range(1, n_wp + 1):
            wps.append(ik([MUG[0], MUG[1], z0 + (z1 - z0) * k / n_wp], wps[-1]))
        out = []
        for s in range(int(seconds * HZ)):
            f = s / (seconds * HZ) * n_wp
            k = min(int(f), n_wp - 1)
            a = f - k
            out.append([x + a * (y - x) for x, y in zip(wps[k], wps[k + 1])])
        return out

    def joint_move(q0: list[float], q1: list[float], seconds: float) -> list[list[float]]:
        n = int(seconds * HZ)
        out = []
        for s in range(1, n + 1):
            u = s / n
            w = u * u * u * (10 - 15 * u + 6 * u * u)  # minimum jerk
            out.append([x + w * (y - x) for x, y in zip(q0, q1)])
        return out

    # the whole joint path, before the motion starts (then the arm is back at ready for the run)
    above = ik([MUG[0], MUG[1], GRASP_Z + 0.12], READY)
    at = line(above, GRASP_Z + 0.12, GRASP_Z, 1.5)
    lifted = line(at[-1], GRASP_Z, GRASP_Z + 0.15, 1.5)
    for j, q in zip(arm, READY):
        p.resetJointState(panda, j, q, physicsClientId=c)
    plan: list[tuple[list[float], float]] = []  # (arm targets, finger target per joint) per step
    plan += [(READY, 0.04)] * 300
    plan += [(q, 0.04) for q in joint_move(READY, above, 1.2)]
    plan += [(q, 0.04) for q in at]
    plan += [(at[-1], 0.0)] * 800
    plan += [(q, 0.0) for q in lifted]

    settle = int(0.2 * HZ)
    steps = int(round(sim_time * HZ))
    contacts = 0
    z0 = p.getBasePositionAndOrientation(mug, physicsClientId=c)[0][2]
    t_step = time.perf_counter()
    for k in range(settle + steps):
        q, gap = plan[min(max(0, k - settle), len(plan) - 1)]
        p.setJointMotorControlArray(panda, arm, p.POSITION_CONTROL, targetPositions=q, forces=forces,
                                    physicsClientId=c)
        p.setJointMotorControlArray(panda, fingers, p.POSITION_CONTROL, targetPositions=[gap, gap], forces=[40.0, 40.0],
                                    physicsClientId=c)
        p.stepSimulation(physicsClientId=c)
        for j in fingers:
            contacts += len(p.getContactPoints(bodyA=panda, bodyB=mug, linkIndexA=j, physicsClientId=c))
    stepping = time.perf_counter() - t_step
    lift = p.getBasePositionAndOrientation(mug, physicsClientId=c)[0][2] - z0
    p.disconnect(physicsClientId=c)
    return {"steps": settle + steps, "sim_time_s": sim_time, "lift_m": round(lift, 4),
            "contact_points_read": contacts, "stepping_wall_s": round(stepping, 4),
            "wall_s": round(time.perf_counter() - t_wall, 4), "cpu_s": round(time.process_time() - t_cpu, 4)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sim-time", type=float, default=5.73, help="sim time to step after settling, s")
    args = ap.parse_args()
    print(json.dumps(run(args.sim_time)))


if __name__ == "__main__":
    main()
