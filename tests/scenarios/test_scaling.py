"""Cost that grows with the scene (issue 35), kept to what answers the same: the executed-clearance
monitor queries only the bodies Bullet's broadphase puts near the arm and finds the same minimum as
querying every body."""

from __future__ import annotations

import numpy as np
import pybullet as pb

from py_trees_manipulation.geometry.poses import pose_from_xyz_rpy
from py_trees_manipulation.msgs.actions import GoalStatus
from py_trees_manipulation.msgs.motion import MoveToPoseGoal
from py_trees_manipulation.sim import SimBackend
from py_trees_manipulation.sim import planning as sim_planning

TOP = 0.626


def boxes(n: int, x0: float = 0.78) -> list[dict]:
    """``n`` 4 cm boxes resting on a 4.5 cm grid from ``x0`` to the table's far end."""
    out = []
    for k in range(n):
        i, j = divmod(k, 21)
        out.append({"name": f"extra{k}", "primitive": {"shape": "box", "size": [0.04, 0.04, 0.04]}, "mass_kg": 0.05,
                    "pose": {"position": [x0 + 0.045 * i, -0.45 + 0.045 * j, TOP + 0.0205]}})
    return out


def clutter_scene(n_boxes: int) -> dict:
    """A cube to pick and two rows of resting boxes across the table in front of the arm."""
    return {
        "robots": [{"name": "panda", "model": "franka_panda", "base_pose": {"position": [0, 0, TOP]}}],
        "fixtures": [{"name": "table", "urdf": "table/table.urdf", "pose": {"position": [0.5, 0, 0]}}],
        "objects": [
            {"name": "cube", "primitive": {"shape": "box", "size": [0.05, 0.05, 0.05]}, "mass_kg": 0.1,
             "pose": {"position": [0.50, 0.35, TOP + 0.025]}},
            *boxes(n_boxes, x0=0.56),
        ],
        "motion_planning": {"padding_m": 0.01},
        "task": {"target_object": "cube"},
    }


def _executed_clearances(monkeypatch, every_body: bool) -> tuple[list, int]:
    """(the executed clearance and pair, getClosestPoints calls of the monitor) of a
    motion down to just above the boxes; with ``every_body`` the monitor queries every body."""
    if every_body:
        monkeypatch.setattr(sim_planning, "BROADPHASE_MIN_BODIES", 10**9)
    calls = [0]
    real = sim_planning._ClearanceMonitor.sample

    def counted(self):
        gcp = pb.getClosestPoints

        def count(*a, **k):
            calls[0] += 1
            return gcp(*a, **k)
        monkeypatch.setattr(pb, "getClosestPoints", count)
        try:
            real(self)
        finally:
            monkeypatch.setattr(pb, "getClosestPoints", gcp)
    monkeypatch.setattr(sim_planning._ClearanceMonitor, "sample", counted)
    with SimBackend(clutter_scene(42), visual_shapes=False) as sim:
        arm = sim.arms["panda"]
        for target in (pose_from_xyz_rpy([0.62, 0.0, TOP + 0.075], [np.pi, 0, 0]),):
            h = arm.send_goal("move_to_pose", MoveToPoseGoal(target, planning_time_s=5.0))
            while not h.done:
                sim.advance(1 / 30)
            assert h.status == GoalStatus.SUCCEEDED, h.text
        plans = sim.extensions["motion_planning"].plans
        return [(p["executed_min_clearance_m"], p["executed_clearance_pair"]) for p in plans], calls[0]


def test_the_clearance_monitor_finds_the_minimum_querying_only_the_bodies_near_the_arm(monkeypatch):
    near, near_calls = _executed_clearances(monkeypatch, every_body=False)
    monkeypatch.undo()
    every, every_calls = _executed_clearances(monkeypatch, every_body=True)
    assert near == every                                 # the same minima, the same pairs, bit for bit
    assert min(d for d, _ in near) < 0.05                # the motions do pass near the boxes and the wall
    assert near_calls * 3 < every_calls, (near_calls, every_calls)  # 44 bodies: most are never measured

