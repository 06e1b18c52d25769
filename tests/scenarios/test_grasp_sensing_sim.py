"""Grasp sensing in the simulator: opposing finger contacts on a handle with the object lifted, not
"two finger links touch it". Every case is set up physically and asserted on measured contacts."""

import math

import numpy as np
import pytest

from py_trees_manipulation.behaviors.regrasp import RegraspConfig, sense_grasp_state, sense_grasps
from py_trees_manipulation.sim import SimBackend

TABLE_TOP = 0.625


def scene(q="ready", box_size=(0.05, 0.05, 0.12), box_pose=None):
    return {"seed": 0,
            "robots": [{"name": "panda", "model": "franka_panda", "base_pose": {"position": [0, 0, 0.626]},
                        "initial_configuration": q, "initial_gap_m": 0.08}],
            "fixtures": [{"name": "table", "urdf": "table/table.urdf", "pose": {"position": [0.5, 0, 0]}}],
            "objects": [{"name": "box", "primitive": {"shape": "box", "size": list(box_size)}, "mass_kg": 0.1,
                         "pose": box_pose or {"position": [0.5, 0.6, TABLE_TOP + box_size[2] / 2]}}]}


def hand_down_at(z):
    """Arm joints putting the TCP at (0.5, 0, z), pointing down, fingers along y (IK on a spare sim)."""
    T = np.eye(4)
    T[:3, :3] = np.diag([1.0, -1.0, -1.0])
    T[:3, 3] = [0.5, 0.0, z]
    with SimBackend(scene()) as s:
        sol = s.arms["panda"].solve_ik(T)
    assert sol.position_error_m < 1e-3
    return sol.q.tolist()


def config(sim):
    # the box's handles from its grasp set: every face, four yaws each
    return RegraspConfig.from_mapping({"grippers": {"panda/hand": "panda"}, "objects": {"box": {}},
                                       "environment_contacts": ["table/top"]}, scene=sim.scene)


def finger_links_touching(sim):
    pads = set(sim.arms["panda"].robot.model.gripper.pad_links)
    return sorted({c.link_a for c in sim.world.contacts("panda", "box") if c.link_a in pads and c.distance_m < 0.002})


def test_a_box_knocked_over_against_both_fingers_does_not_read_as_grasped():
    # the open hand points down 7.5 cm above the table; a wide box (14 cm along y) standing beside it,
    # tilted 30 deg towards it, topples over onto both fingers
    q = hand_down_at(0.70)
    box = {"position": [0.60, 0.0, 0.69], "rpy_deg": [0, -30, 0]}
    with SimBackend(scene(q, box_size=(0.05, 0.14, 0.12), box_pose=box)) as sim:
        sim.step(1500)
        T = sim.world.object_pose("box")
        tilt = math.degrees(math.acos(T[2, 2]))
        assert tilt > 45.0                                     # knocked over
        assert finger_links_touching(sim) == ["panda_leftfinger", "panda_rightfinger"]   # "two finger links touch"
        assert "table" in {c.body_b for c in sim.world.contacts("box")}
        sensed = sense_grasps(sim, config(sim))["panda/hand"]
        assert sensed.handle is None
        assert "not pinched between them" in sensed.reason


def test_pinched_on_the_table_is_not_grasped_until_lifted_then_the_handle_is_read():
    # the hand straddles a standing box from above (TCP 3 cm below its top) and closes on it
    q = hand_down_at(TABLE_TOP + 0.12 - 0.03)
    with SimBackend(scene(q, box_pose={"position": [0.5, 0.0, TABLE_TOP + 0.06]})) as sim:
        cfg = config(sim)
        sim.step(300)
        assert finger_links_touching(sim) == []
        sim.grippers["panda"].command_gap(0.0, max_force_n=40.0)
        sim.step(1000)
        assert finger_links_touching(sim) == ["panda_leftfinger", "panda_rightfinger"]
        on_table = sense_grasps(sim, cfg)["panda/hand"]
        assert on_table.handle is None and "rests on table" in on_table.reason
        # lift 5 cm: the arm tracks the higher configuration, the box comes along
        sim.arms["panda"].hold(hand_down_at(TABLE_TOP + 0.12 - 0.03 + 0.05))
        sim.step(1500)
        lifted = sim.world.object_pose("box")[2, 3] - (TABLE_TOP + 0.06)
        assert lifted == pytest.approx(0.05, abs=0.01)
        assert "table" not in {c.body_b for c in sim.world.contacts("box")}
        held = sense_grasps(sim, cfg)["panda/hand"]
        assert held.handle == "box/+z" and held.object == "box"
        # the measured grasp: 3 cm below the top face, approach straight down the box's z axis
        assert held.grasp_pose[2, 3] == pytest.approx(0.03, abs=0.01)
        assert held.grasp_pose[2, 2] == pytest.approx(-1.0, abs=0.02)
        assert sense_grasp_state(sim, cfg) == {"panda/hand": "box/+z"}
