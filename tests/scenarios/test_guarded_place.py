"""A force-guarded line meets its expected contact within its bound (issue 33 item 4), in the real
simulator: the line slows near the table top the collision world says it will touch, the guard
stops it at no more than twice its threshold, and a contact speed too fast for the guard is refused
before the arm moves, with the speed that would do. (The shipped places: pick_and_place.scenario.yaml
and place_on_contact.scenario.yaml, their variants at several speeds, guards, masses and tables.)"""

from __future__ import annotations

import numpy as np
import pybullet as pb
import pytest

from py_trees_manipulation.geometry.poses import pose_from_spec
from py_trees_manipulation.msgs.actions import GoalStatus
from py_trees_manipulation.msgs.motion import MoveCartesianGoal, MoveToPoseGoal
from py_trees_manipulation.sim import SimBackend

TABLE_TOP = 0.626  # pybullet_data table/table.urdf top surface, m


def scene(**table):
    return {"seed": 0,
            "robots": [{"name": "panda", "base_pose": {"position": [0, 0, TABLE_TOP]}}],
            "fixtures": [{"name": "table", "urdf": "table/table.urdf", "pose": {"position": [0.5, 0, 0]}, **table}]}


def run(sim, handle, limit_s=40.0):
    t0 = sim.now()
    while not handle.done and sim.now() - t0 < limit_s:
        sim.advance(1 / 30)
    return handle


def down(z):
    return pose_from_spec({"position": [0.4, -0.2, z], "rpy_deg": [180, 0, 0]})


class ContactTrace:
    """The normal force between the robot and the table, every physics step, N."""

    def __init__(self, sim):
        self.sim, self.robot, self.table = sim, sim.world.body_id("panda"), sim.world.body_id("table")
        self.forces = []
        sim.add_step_hook(self)

    def __call__(self, sim):
        pts = pb.getContactPoints(bodyA=self.robot, bodyB=self.table, physicsClientId=sim.client)
        self.forces.append(sum(p[9] for p in pts))


@pytest.mark.parametrize("speed, guard", [(0.05, 8.0), (0.1, 15.0), (0.02, 4.0)])
def test_a_guarded_descent_slows_for_the_table_and_stops_within_twice_its_guard(speed, guard):
    sim = SimBackend(scene())
    try:
        arm = sim.arms["panda"]
        assert run(sim, arm.send_goal("move_to_pose", MoveToPoseGoal(down(TABLE_TOP + 0.06)))).status == GoalStatus.SUCCEEDED
        trace = ContactTrace(sim)
        h = run(sim, arm.send_goal("move_cartesian", MoveCartesianGoal(down(TABLE_TOP - 0.02), speed_mps=speed,
                                                                        max_force_n=guard)))
        assert h.status == GoalStatus.SUCCEEDED and h.result.stopped_on_contact, h.text
        plan = sim.motion_planning.plans[-1]["guard"]
        assert plan["pair"].endswith("/ table") and plan["contact_speed_mps"] < speed
        # the fingertips reach 1 cm below the TCP: the expected contact 5 cm along the 8 cm line; the
        # fingers' own pads (3e4 N/m, 1000 N s/m per point) in series with the table top (1e5 N/m,
        # 300 N s/m): 8 N / (5200 N s/m + 9.2e4 N/m x 7 ms) = 1.37 mm/s
        assert plan["contact_m"] == pytest.approx(0.05, abs=0.01)
        assert plan["contact_speed_mps"] == pytest.approx(guard / 8.0 * 0.00137, rel=0.05)
        assert max(trace.forces) <= 2.0 * guard, max(trace.forces)
    finally:
        sim.close()


def test_a_contact_speed_too_fast_for_the_guard_is_refused_before_moving():
    sim = SimBackend(scene())
    try:
        arm = sim.arms["panda"]
        assert run(sim, arm.send_goal("move_to_pose", MoveToPoseGoal(down(TABLE_TOP + 0.06)))).status == GoalStatus.SUCCEEDED
        q0 = arm.joint_positions()
        h = run(sim, arm.send_goal("move_cartesian", MoveCartesianGoal(down(TABLE_TOP - 0.02), speed_mps=0.05,
                                                                        max_force_n=8.0, contact_speed_mps=0.05)))
        assert h.status == GoalStatus.ABORTED
        assert "contact_speed_mps 0.05 m/s is too fast for max_force_n 8 N" in h.text and "at most 0.0" in h.text
        np.testing.assert_allclose(arm.joint_positions(), q0, atol=1e-3)
    finally:
        sim.close()
