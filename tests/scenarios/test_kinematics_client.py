"""The simulator's kinematics client (the robots' shadows, for IK and FK) is connected on first use,
and a joint goal's TCP pose, taken in the collision world, is the shadow's to the last bit (issue 35)."""

from __future__ import annotations

import numpy as np
import pybullet as pb
import pytest

from py_trees_manipulation.msgs.actions import GoalStatus
from py_trees_manipulation.msgs.motion import MoveJointsGoal
from py_trees_manipulation.sim import SimBackend

TABLE_TOP = 0.626


def _scene(model: str) -> dict:
    return {
        "seed": 0,
        "robots": [{"name": "arm", "model": model, "base_pose": {"position": [0, 0, TABLE_TOP], "rpy_deg": [0, 0, 30]}}],
        "fixtures": [{"name": "table", "urdf": "table/table.urdf", "pose": {"position": [0.5, 0, 0]}}],
    }


@pytest.mark.parametrize("model", ["franka_panda", "kuka_iiwa_wsg50", "ufactory_xarm6"])
def test_joint_goal_pose_in_the_world_is_the_shadows(model):
    sim = SimBackend(_scene(model))
    try:
        assert sim._kin_client is None   # nothing asked for the shadow yet
        arm = sim.arms["arm"]
        planning = sim.extensions["motion_planning"]
        r = arm.robot
        rng = np.random.default_rng(1)
        qs = [rng.uniform(r.lower, r.upper) for _ in range(100)]
        in_world = [planning._pose_at(arm, q) for q in qs]
        assert sim._kin_client is None
        world = planning.worker.world
        before = world.robots["arm"].joint_positions()
        planning._pose_at(arm, qs[0])
        assert np.array_equal(world.robots["arm"].joint_positions(), before)   # the world's robot put back
        on_shadow = [arm.forward_kinematics(q) for q in qs]   # connects the kinematics client
        assert sim._kin_client is not None
        assert all(np.array_equal(a, b) for a, b in zip(in_world, on_shadow))
    finally:
        sim.close()


def test_a_joint_goal_runs_without_the_kinematics_client():
    """Two PyBullet clients (the simulation, the collision world) for a joint goal, where there were
    three; the goal reaches its configuration."""
    connects = []
    real = pb.connect

    def counting(*a, **k):
        cid = real(*a, **k)
        connects.append(cid)
        return cid

    pb.connect = counting
    try:
        sim = SimBackend(_scene("franka_panda"))
        try:
            arm = sim.arms["arm"]
            q = np.array(arm.named_configurations["ready"]) + 0.2
            h = arm.send_goal("move_joints", MoveJointsGoal(positions=q.tolist()))
            for _ in range(400):
                sim.advance(0.01)
                if h.status.is_terminal:
                    break
            assert h.status == GoalStatus.SUCCEEDED, h.text
            assert np.max(np.abs(np.array(arm.joint_positions()) - q)) < 0.01
            assert sim._kin_client is None
            assert len(connects) == 2
        finally:
            sim.close()
    finally:
        pb.connect = real
