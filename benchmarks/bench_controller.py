"""Cost per 1 kHz step of the PR2 gripper controller and its tactile processing, in microseconds.

Runs the controller in each mode against a 1-D gripper + object model (the plant's own time is
excluded) and times the tactile pieces alone. With ``--pybullet`` it also times one
``stepSimulation`` of the Franka Panda on a plane at 1 kHz (PyBullet DIRECT), for comparison.

Usage::

    python benchmarks/bench_controller.py [--steps 20000] [--pybullet]
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from typing import Callable

import numpy as np

from py_trees_manipulation.control.gripper_controller import ControllerParams, Pr2GripperController, SensorSample
from py_trees_manipulation.control.tactile import (
    AccelerationObserver,
    EventDetector,
    PressureObserver,
    uniform_pad_frame,
)
from py_trees_manipulation.msgs.gripper_sensor import (
    PR2GripperEventDetectorCommand,
    PR2GripperFindContactCommand,
    PR2GripperForceServoCommand,
)

DT = 0.001


class Plant:
    """1-D gripper (5 kg reflected mass, 7 N friction) on a 3000 N/m object 0.05 m wide."""

    def __init__(self, x0: float = 0.08, k: float = 3000.0, width: float = 0.05):
        self.x, self.v, self.k, self.w, self.t, self.n, self.effort = x0, 0.0, k, width, 0.0, 0, 0.0

    def force(self) -> float:
        return self.k * (self.w - self.x) if self.x < self.w else 0.0

    def sample(self) -> SensorSample:
        left = right = None
        if self.n % 41 == 0:
            left = right = uniform_pad_frame(self.force(), 0.02)
        self.n += 1
        return SensorSample(self.t, self.x, self.v, self.effort, left, right, (0.0, 0.0, -9.81))

    def apply(self, effort: float) -> None:
        self.effort = effort
        v_free = self.v + (effort + self.force()) / 5.0 * DT
        dv = 7.0 / 5.0 * DT
        self.v = 0.0 if abs(v_free) <= dv else v_free - math.copysign(dv, v_free)
        self.x = min(max(self.x + self.v * DT, 0.0), 0.08)
        self.t += DT


def time_controller(steps: int, prepare: Callable[[Pr2GripperController, Plant], None]) -> float:
    """Median-of-blocks cost of ``ctl.step`` in microseconds, plant time excluded."""
    ctl = Pr2GripperController(ControllerParams.panda())
    plant = Plant()
    for _ in range(50):
        plant.apply(ctl.step(DT, plant.sample()).effort)
    prepare(ctl, plant)
    blocks = []
    per_block = 1000
    for _ in range(max(1, steps // per_block)):
        spent = 0.0
        for _ in range(per_block):
            s = plant.sample()
            t0 = time.perf_counter()
            cmd = ctl.step(DT, s)
            spent += time.perf_counter() - t0
            plant.apply(cmd.effort if cmd.enabled else 0.0)
        blocks.append(spent / per_block * 1e6)
    return statistics.median(blocks)


def run_until(ctl: Pr2GripperController, plant: Plant, state, limit_s: float = 10.0) -> None:
    for _ in range(int(limit_s / DT)):
        plant.apply(ctl.step(DT, plant.sample()).effort)
        if state.done:
            return
    raise RuntimeError(f"{state.name} did not finish: {state.status.name} {state.reason}")


def prep_disabled(ctl, plant):
    pass


def prep_position(ctl, plant):
    from py_trees_manipulation.msgs.motion import Pr2GripperCommand
    ctl.command_position(Pr2GripperCommand(0.07))


def prep_find_contact(ctl, plant):
    ctl.find_contact(PR2GripperFindContactCommand())


def prep_force_servo(ctl, plant):
    run_until(ctl, plant, ctl.find_contact(PR2GripperFindContactCommand()))
    ctl.force_servo(PR2GripperForceServoCommand(5.0))


def prep_slip_servo_with_events(ctl, plant):
    prep_force_servo(ctl, plant)
    run_until(ctl, plant, ctl.motion_action)
    ctl.slip_servo()
    ctl.event_detector(PR2GripperEventDetectorCommand(2, 50.0, 0.01))


def time_tactile(steps: int) -> dict[str, float]:
    pressure, acc, det = PressureObserver(), AccelerationObserver(1000.0), EventDetector()
    det.configure(PR2GripperEventDetectorCommand(2, 50.0, 0.01))
    frame = uniform_pad_frame(5.0, 0.02)
    out: dict[str, float] = {}
    t0 = time.perf_counter()
    for k in range(steps):
        f = frame if k % 41 == 0 else None
        pressure.step(DT, f, f)
    out["pressure observer (frame every 41 ms)"] = (time.perf_counter() - t0) / steps * 1e6
    n_frames = 2000
    t0 = time.perf_counter()
    for _ in range(n_frames):
        pressure.step(DT, frame, frame)
    out["pressure observer, one new frame"] = (time.perf_counter() - t0) / n_frames * 1e6
    a = np.array([0.0, 0.0, -9.81])
    t0 = time.perf_counter()
    for _ in range(steps):
        acc.step(a)
    out["accelerometer band-pass (1 sample)"] = (time.perf_counter() - t0) / steps * 1e6
    pressure.step(DT, None, None)            # between frames: only the acceleration test runs
    t0 = time.perf_counter()
    for _ in range(steps):
        det.step(acc, pressure)
    out["event detector, between frames"] = (time.perf_counter() - t0) / steps * 1e6
    pressure.step(DT, frame, frame)          # a new frame: slip and side-impact tests run too
    t0 = time.perf_counter()
    for _ in range(n_frames):
        det.step(acc, pressure)
    out["event detector, on a new frame"] = (time.perf_counter() - t0) / n_frames * 1e6
    return out


def time_pybullet(steps: int) -> float:
    import pybullet as pb
    import pybullet_data

    cid = pb.connect(pb.DIRECT)
    try:
        pb.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=cid)
        pb.setGravity(0, 0, -9.81, physicsClientId=cid)
        pb.setTimeStep(DT, physicsClientId=cid)
        pb.loadURDF("plane.urdf", physicsClientId=cid)
        pb.loadURDF("franka_panda/panda.urdf", useFixedBase=True, physicsClientId=cid)
        for _ in range(100):
            pb.stepSimulation(physicsClientId=cid)
        t0 = time.perf_counter()
        for _ in range(steps):
            pb.stepSimulation(physicsClientId=cid)
        return (time.perf_counter() - t0) / steps * 1e6
    finally:
        pb.disconnect(cid)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20000, help="timed steps per case (default 20000)")
    parser.add_argument("--pybullet", action="store_true", help="also time PyBullet stepSimulation (Panda)")
    args = parser.parse_args()

    print(f"PR2 gripper controller, cost per 1 kHz step (median of 1000-step blocks, {args.steps} steps)")
    cases = [("DISABLED (observers only)", prep_disabled), ("POSITION_SERVO", prep_position),
             ("FIND_CONTACT", prep_find_contact), ("FORCE_SERVO", prep_force_servo),
             ("SLIP_SERVO + event detector", prep_slip_servo_with_events)]
    for name, prep in cases:
        us = time_controller(args.steps, prep)
        print(f"  {name:<36s} {us:8.1f} us/step   ({us / 10:5.1f} % of a 1 ms real-time step)")
    print("Tactile processing alone (mean per call)")
    for name, us in time_tactile(args.steps).items():
        print(f"  {name:<36s} {us:8.1f} us")
    if args.pybullet:
        us = time_pybullet(args.steps)
        print(f"PyBullet stepSimulation, Panda on a plane, dt = 1 ms: {us:8.1f} us/step")


if __name__ == "__main__":
    main()
