"""Grasps chosen from the object, measured in the simulator: the mug turned on the table is put down
at a place pose as it was grasped (its final yaw is the place pose's, whatever its yaw when picked)."""

import math
import os

import numpy as np
import pytest

from py_trees_manipulation.trees.loader import load_task
from py_trees_manipulation.trees.runner import RunOptions, run_task

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
PLACE = os.path.join(ROOT, "examples", "pick_and_place.yaml")


class FinalPose:
    """Observer: the target object's pose when the run ends (simulator ground truth)."""

    def __init__(self, name):
        self.name, self.pose = name, None

    def on_start(self, run):
        pass

    def on_tick(self, run):
        pass

    def on_end(self, run, summary):
        self.pose = np.array(run.backend.world.object_pose(self.name))


@pytest.mark.parametrize("picked_deg, placed_deg", [(135, 90)])
def test_the_turned_mug_is_put_down_as_it_was_grasped(picked_deg, placed_deg):
    place = [0.45, 0.2, 0.629]
    task = load_task(PLACE, [f"scene.objects.0.pose.rpy_deg=[0, 0, {picked_deg}]", "scene.objects.0.pose_noise.yaw_deg=0",
                             f"blackboard.place_pose={{position: {place}, rpy_deg: [0, 0, {placed_deg}]}}"])
    final = FinalPose("mug")
    r = run_task(task, RunOptions(display=False, timeout_s=40, observers=[final]))
    s = r.summary
    assert s["status"] == "SUCCESS", s.get("failed_behaviour")
    T = final.pose
    yaw = math.degrees(math.atan2(T[1, 0], T[0, 0]))
    assert abs((yaw - placed_deg + 180) % 360 - 180) < 5, yaw     # turned by the grasp, not left at 135
    assert np.linalg.norm(T[:2, 3] - place[:2]) < 0.03
    assert s["metrics"]["object_tilt_deg"] < 5 and s["metrics"]["object_dropped"] is False
