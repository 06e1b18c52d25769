"""ObjectLifted and ObjectNear fail saying where the object is and how it lies (it fell, it tipped),
not only how far it is from the goal."""

import numpy as np
from py_trees.common import Status

from py_trees_manipulation.behaviors.world import ObjectLifted, ObjectNear
from py_trees_manipulation.geometry.poses import pose_from_xyz_rpy
from py_trees_manipulation.testing import FakeBackend, tick_until_done


def backend_with():
    b = FakeBackend()
    start = pose_from_xyz_rpy([0.5, 0.0, 0.629], [0, 0, 0])
    b.world.poses["mug"] = start
    b.world.initial_object_pose = lambda name: start.copy()
    return b


def test_a_place_that_fell_says_it_fell_and_how_it_lies():
    b = backend_with()
    b.world.poses["mug"] = pose_from_xyz_rpy([0.30, 0.60, -8.50], [np.radians(71), 0, 0])     # off the table, on its side
    node = ObjectNear(object="mug", position=[0.45, 0.2, 0.629], tolerance_m=0.03)
    status, _ = tick_until_done(node, b, 5, 1 / 30)
    assert status == Status.FAILURE
    assert node.feedback_message == ("mug is 9.139 m from the goal (tolerance 0.030 m): it is at (0.30, 0.60, -8.50), "
                                     "9.13 m below the goal (it fell), tilted 71 deg from how it started")


def test_a_lift_that_left_the_object_behind_says_where_it_is():
    b = backend_with()
    node = ObjectLifted(object="mug", min_height_m=0.10)
    status, _ = tick_until_done(node, b, 5, 1 / 30)
    assert status == Status.FAILURE
    assert node.feedback_message == "mug lifted only 0.000 m (needs 0.100 m): it is at (0.50, 0.00, 0.63)"


def test_a_lift_of_an_object_over_the_payload_fails_before_the_goal_is_sent():
    """MoveCartesian with a held_object read at run time (a "{key}" name: ptm validate cannot see it)
    refuses an object heavier than the arm may lift (issue 32 item 7), as ptm validate refuses a literal."""
    from py_trees_manipulation.behaviors.motion import MoveCartesian
    from py_trees_manipulation.scene.spec import parse_scene

    b = backend_with()
    b.scene = parse_scene({"robots": [{"name": "panda", "model": "franka_panda"}],
                           "objects": [{"name": "mug", "primitive": {"shape": "box", "size": [0.05, 0.05, 0.05]}, "pose": {"position": [0.5, 0, 0.65]},
                                        "mass_kg": 2.5}]})
    node = MoveCartesian(delta=[0, 0, 0.1], held_object="mug")
    status, _ = tick_until_done(node, b, 5, 1 / 30)
    assert status == Status.FAILURE
    assert "object 'mug' weighs 2.50 kg, more than robot 'panda' may lift: 2.27 kg" in node.feedback_message
    assert b.arms["panda"].goals == []                  # nothing sent: the arm never moved
    b.scene = parse_scene({"robots": [{"name": "panda", "model": "franka_panda", "payload_kg": 4.0}],
                           "objects": [{"name": "mug", "primitive": {"shape": "box", "size": [0.05, 0.05, 0.05]}, "pose": {"position": [0.5, 0, 0.65]},
                                        "mass_kg": 2.5}]})
    assert MoveCartesian.scene_problems({"held_object": "mug"}, b.scene) == []
