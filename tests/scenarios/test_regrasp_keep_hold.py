"""Recovery that keeps hold (issue 32 item 5): a regrasp step opens the gripper only where what it
holds rests on a support, and a failure says where the object is now and which face is up (a
regrasp recovery used to open the hand with the box in mid-air: it fell and ended upside down, and
the reason given was only "closed on nothing")."""

import numpy as np
import py_trees
from py_trees.common import Status

from py_trees_manipulation.behaviors.regrasp_execute import _OpenOnlyOnSupport, object_state_text
from py_trees_manipulation.geometry.poses import pose_to_spec
from py_trees_manipulation.sim import SimBackend

PANDA = {"name": "panda", "model": "franka_panda", "base_pose": {"position": [0, 0, 0.626]}}
TABLE = {"name": "table", "urdf": "table/table.urdf", "pose": {"position": [0.5, 0, 0]}}


def _tick(node):
    node.tick_once()
    return node.status


def test_the_gripper_does_not_open_on_a_box_held_in_the_air_and_says_where_it_is():
    with SimBackend({"robots": [PANDA], "fixtures": [TABLE]}, visual_shapes=False) as probe:
        tcp = np.asarray(probe.arms["panda"].tcp_pose(), dtype=float)
    # a box held between the open fingers, 8.2 cm along the finger axis (the gap is 8 cm), in the air
    # (fixed, so that it stays there: nothing under it but the hand)
    held = {"name": "box", "primitive": {"shape": "box", "size": [0.03, 0.082, 0.03]}, "fixed": True,
            "pose": pose_to_spec(tcp)}
    on_table = {"name": "cube", "primitive": {"shape": "box", "size": [0.05, 0.05, 0.05]},
                "pose": {"position": [0.6, 0.3, 0.651]}}
    with SimBackend({"robots": [PANDA], "fixtures": [TABLE], "objects": [held, on_table]}, visual_shapes=False) as sim:
        sim.step(5)
        guard = _OpenOnlyOnSupport("open?", sim, "panda")
        assert _tick(guard) == Status.FAILURE
        assert guard.feedback_message.startswith(
            "would let go of box away from a support: box is now at (%.3f, %.3f, %.3f), touching nothing but a "
            "robot, its " % tuple(round(float(v), 3) + 0.0 for v in tcp[:3, 3])), guard.feedback_message
        assert guard.feedback_message.endswith("; the gripper stays closed")
        # the cube on the table: where it is, on what, which face down
        assert object_state_text(sim, "cube") == "cube is now at (0.600, 0.300, 0.650) on 'table', its -z face down"


def test_the_gripper_opens_when_it_holds_nothing_or_what_it_holds_rests_on_a_support():
    with SimBackend({"robots": [PANDA], "fixtures": [TABLE],
                     "objects": [{"name": "cube", "primitive": {"shape": "box", "size": [0.05, 0.05, 0.05]},
                                  "pose": {"position": [0.6, 0.3, 0.651]}}]}, visual_shapes=False) as sim:
        sim.step(5)
        assert _tick(_OpenOnlyOnSupport("open?", sim, "panda")) == Status.SUCCESS
