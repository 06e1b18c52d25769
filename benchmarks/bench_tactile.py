"""Cost of the simulated tactile sensing and the PR2 gripper controller per 1 kHz physics step.

Goal (issue 3): the controller and the tactile emulation together add at most 25 % to the physics
step cost at 1 kHz. The same scene (the Panda squeezing a 5 cm box on the table, contacts active)
is built once per case, each in its own PyBullet client of this process:

1. *bare*: ``stepSimulation`` with the sensing extension disabled (``tactile: {enabled: false}``)
   and the fingers on PyBullet position motors (a plain ``gripper_action`` at 10 N); the finger
   pads get the same contact stiffness and damping the extension would give them, so all cases
   solve the same contacts;
2. *sensing*: the extension on, the same plain grasp (contact sampling every 5 ms for the metrics,
   fingertip forces for the telemetry);
3. *force servo*: the extension on and the PR2 controller installed and force-servoing at 10 N
   (1 kHz adapter: joint states, controller step, motor command; frames at 24.4 Hz; no
   accelerometer, since no event detector is armed);
4. *slip servo + release armed*: the controller slip-servoing while a Release goal waits for an
   event (``ACC``, unreachable trigger): the worst case, with the palm accelerometer read every
   step.

The headline figure is the *code* time (the whole step minus ``stepSimulation``, less the same for
case 1) over the ``stepSimulation`` time of the same case: the whole step of case 3 also differs
from case 1 in physics, because after FindContact and ForceServo the box sits slightly differently
and its contacts take longer to solve (measured: the same scene switched back to position motors
costs the same ~150 us per ``stepSimulation``; case 1 ~110 us), which is not the controller's cost.

The cases are timed *interleaved* (case 1, 2, 3, 4, then again, ``--repeat`` rounds of ``--steps``
steps each), so a machine whose load changes during the run slows every case alike; the figure is
the median per case over the rounds, in thread CPU time (other processes on a busy machine do not
count).

With ``--startup`` it instead times what the tactile extension costs a fresh process: a
``python -c`` that imports the simulator and builds a scene with the Panda (the tactile extension
and its PR2 controller, whose filters are designed at construction), CPU time (user + system of
the child), median of ``--repeat`` runs, and whether scipy got imported (it no longer is: the
filters are designed in closed form; it cost about 1 s of CPU per process).

Usage::

    python benchmarks/bench_tactile.py [--steps 2000] [--repeat 9]
    python benchmarks/bench_tactile.py --startup [--repeat 9]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import pybullet as pb

from py_trees_manipulation.geometry.poses import pose_from_spec
from py_trees_manipulation.msgs import gripper_sensor as gs
from py_trees_manipulation.msgs.motion import MoveCartesianGoal, MoveToPoseGoal, Pr2GripperCommand
from py_trees_manipulation.sim import SimBackend

TABLE_TOP = 0.626
GOAL_PERCENT = 25.0


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
    if not enabled:  # the same finger pad contact as with sensing (the extension sets it): same physics
        robot = sim.grippers["panda"].robot
        for link in robot.finger_links:
            k = pb.getDynamicsInfo(robot.body, link, physicsClientId=sim.client)[9]
            pb.changeDynamics(robot.body, link, contactStiffness=k, contactDamping=100.0, physicsClientId=sim.client)
    arm = sim.arms["panda"]
    z = TABLE_TOP + 0.025
    for action, goal in (("move_to_pose", MoveToPoseGoal(pose_from_spec({"position": [0.5, 0, z + 0.1], "rpy_deg": [180, 0, 90]}))),
                         ("move_cartesian", MoveCartesianGoal(pose_from_spec({"position": [0.5, 0, z], "rpy_deg": [180, 0, 90]}), speed_mps=0.1))):
        h = arm.send_goal(action, goal)
        while not h.done:
            sim.advance(1 / 30)
    return sim


def squeeze(sim: SimBackend, mode: str) -> None:
    """Bring the gripper into the case's steady state: ``plain``, ``force_servo`` or ``slip_release``."""
    g = sim.grippers["panda"]
    if mode == "plain":
        g.send_goal("gripper_action", Pr2GripperCommand(0.0, 10.0))
    else:
        g.send_goal("find_contact", gs.PR2GripperFindContactCommand(True, 0))
        sim.advance(3.0)
        g.send_goal("force_servo", gs.PR2GripperForceServoCommand(10.0))
        if mode == "slip_release":
            sim.advance(1.0)
            g.send_goal("slip_servo", gs.PR2GripperSlipServoCommand())
            g.send_goal("release", gs.PR2GripperReleaseCommand(gs.PR2GripperEventDetectorCommand(
                trigger_conditions=gs.PR2GripperEventDetectorCommand.ACC, acceleration_trigger_magnitude=1e6)))
    sim.advance(1.5)


CASES = (  # label, sensing enabled, squeeze mode, expected telemetry mode
    ("bare stepSimulation (sensing off, position motors)", False, "plain", None),
    ("tactile sensing on, plain gripper_action", True, "plain", "GRIPPER_ACTION"),
    ("sensing + PR2 controller (force servo 10 N)", True, "force_servo", "FORCE_SERVO"),
    ("sensing + slip servo + Release armed (accelerometer)", True, "slip_release", "SLIP_SERVO"),
)


class _PhysicsClock:
    """Wraps ``pybullet.stepSimulation`` to add up the thread CPU time spent inside it."""

    def __init__(self) -> None:
        self.real = pb.stepSimulation
        self.total = 0.0

    def __call__(self, *args, **kwargs):
        t0 = time.thread_time()
        out = self.real(*args, **kwargs)
        self.total += time.thread_time() - t0
        return out


def measure(sims: list[SimBackend], steps: int, repeat: int) -> tuple[list[list[float]], list[list[float]]]:
    """Interleaved rounds; returns per case the CPU us/step of whole steps and of stepSimulation.

    Thread CPU time (not wall time), so other processes on a loaded machine do not count; every
    other round wraps ``stepSimulation`` to split physics from the rest (those rounds only give the
    split: the wrapper's own cost is not in the totals).
    """
    totals: list[list[float]] = [[] for _ in sims]
    physics: list[list[float]] = [[] for _ in sims]
    clock = _PhysicsClock()
    for r in range(2 * repeat):
        split = r % 2 == 1
        for i, sim in enumerate(sims):
            if split:
                clock.total = 0.0
                pb.stepSimulation = clock
                try:
                    sim.step(steps)
                finally:
                    pb.stepSimulation = clock.real
                physics[i].append(clock.total / steps * 1e6)
            else:
                t0 = time.thread_time()
                sim.step(steps)
                totals[i].append((time.thread_time() - t0) / steps * 1e6)
    return totals, physics


STARTUP_CODE = (
    "import sys\n"
    "from py_trees_manipulation.sim import SimBackend\n"
    "with SimBackend({'robots': [{'name': 'panda'}]}) as sim:\n"
    "    assert 'tactile' in sim.extensions\n"
    "print(int(any(m.split('.')[0] == 'scipy' for m in sys.modules)))\n"
)


def startup(repeat: int) -> None:
    """CPU time of a fresh process that imports the simulator and builds a scene (see the docstring)."""
    import subprocess
    import sys

    cpu, scipy_seen = [], set()
    for _ in range(repeat):
        before = os.times()
        out = subprocess.run([sys.executable, "-c", STARTUP_CODE], capture_output=True, text=True, check=True)
        after = os.times()
        cpu.append((after.children_user - before.children_user) + (after.children_system - before.children_system))
        scipy_seen.add(out.stdout.strip().splitlines()[-1] == "1")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"fresh process: import the simulator and build a scene with the Panda (tactile extension and PR2 "
          f"controller): {statistics.median(cpu):.2f} s CPU, median of {repeat} (min {min(cpu):.2f} s; load "
          f"average {load:.2f} on {os.cpu_count()} CPUs); scipy imported: {'yes' if True in scipy_seen else 'no'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=2000, help="physics steps per case and round")
    ap.add_argument("--repeat", type=int, default=7, help="interleaved rounds (each case: one timed, one split)")
    ap.add_argument("--startup", action="store_true", help="time a fresh process building a scene instead")
    args = ap.parse_args()
    if args.startup:
        startup(args.repeat)
        return
    sims = []
    for _label, enabled, mode, expect in CASES:
        sim = make(enabled)
        squeeze(sim, mode)
        if expect is not None:
            tel = sim.telemetry()["gripper/panda"]
            assert tel["mode"] == expect, tel
        sims.append(sim)
    totals, physics = measure(sims, args.steps, args.repeat)
    for sim in sims:
        sim.close()
    tot = [statistics.median(r) for r in totals]
    phys = [statistics.median(r) for r in physics]
    rest = [t - p for t, p in zip(tot, phys)]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"CPU time per physics step at 1 kHz, the gripper squeezing a box: median of {args.repeat} interleaved "
          f"rounds x {args.steps} steps (load average {load:.2f} on {os.cpu_count()} CPUs)")
    print(f"  {'case':54s} {'step':>8s} {'physics':>8s} {'python':>8s}   added over bare stepping")
    for i, (label, *_rest) in enumerate(CASES):
        extra = ""
        if i:
            extra = (f"   {tot[i] - tot[0]:+6.1f} us = {100 * (tot[i] - tot[0]) / tot[0]:+5.1f} % "
                     f"(sensing/controller code {rest[i] - rest[0]:+5.1f} us = "
                     f"{100 * (rest[i] - rest[0]) / phys[i]:+5.1f} % of its physics)")
        print(f"  {label:54s} {tot[i]:6.1f}us {phys[i]:6.1f}us {rest[i]:6.1f}us{extra}")
    code = 100 * (rest[2] - rest[0]) / phys[2]
    verdict = "meets" if code <= GOAL_PERCENT else "misses"
    print(f"Goal: controller + tactile emulation add <= {GOAL_PERCENT:.0f} % to the physics step (force servo case): "
          f"{verdict}: +{code:.1f} % (code time over the same step's stepSimulation); the whole step "
          f"{100 * (tot[2] - tot[0]) / tot[0]:+.1f} % over bare (mostly physics: that scene's contacts cost more to solve); "
          f"with the accelerometer read every step (Release armed): code +{100 * (rest[3] - rest[0]) / phys[3]:.1f} %")


if __name__ == "__main__":
    main()
