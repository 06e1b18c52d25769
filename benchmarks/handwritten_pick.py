"""The baseline of ``bench_runner.py``'s per-node figure: ``examples/pick_and_lift.yaml``'s tree
written by hand in plain py_trees.

What a py_trees user would write against this project's backend without its behaviour layer (no
declared parameters, no ``"{key}"`` references, no read guards, no feedback messages, no run-log
events or metrics): the same composites, and leaves that make the same backend calls in the same
ticks as ours: build the same goal messages (the same poses, speeds and limits, read from the
scene's resources and the blackboard) and send them to the same action servers, poll the goal
handles, ask the planning service for the same grasp choice, read the same object poses, write the
same blackboard keys. Its run is the same run as ours (``bench_runner.py`` checks the tick count,
every node's statuses and the lift), so the tick time of the two trees differs only by what our
behaviours add to that work: the framework's cost per node.

``build(task)`` returns the tree (not set up: ``tree.setup(backend=...)`` as for ours).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import py_trees
from py_trees.common import Status

from py_trees_manipulation.backend import planning_service
from py_trees_manipulation.msgs.actions import GoalStatus
from py_trees_manipulation.msgs.motion import (
    MoveCartesianGoal,
    MoveJointsGoal,
    MoveToPoseGoal,
    Pr2GripperCommand,
    Pr2GripperCommandResult,
)

_RUNNING = (GoalStatus.PENDING, GoalStatus.ACTIVE, GoalStatus.PREEMPTING, GoalStatus.RECALLING)
bb = py_trees.blackboard.Blackboard


class _Action(py_trees.behaviour.Behaviour):
    """Send ``goal()`` on the first tick, then poll the handle: RUNNING, SUCCESS or FAILURE."""

    resource_kind = "arms"
    action = ""

    def setup(self, **kwargs: Any) -> None:
        self.backend = kwargs["backend"]
        self.resource = next(iter(getattr(self.backend, self.resource_kind).values()))

    def initialise(self) -> None:
        self.handle = self.resource.send_goal(self.action, self.goal())

    def update(self) -> Status:
        st = self.handle.status
        if st in _RUNNING:
            return Status.RUNNING
        return Status.SUCCESS if st == GoalStatus.SUCCEEDED else Status.FAILURE

    def terminate(self, new_status: Status) -> None:
        if new_status == Status.INVALID and getattr(self, "handle", None) is not None and not self.handle.done:
            self.handle.cancel()


class MoveJoints(_Action):
    action = "move_joints"

    def goal(self) -> MoveJointsGoal:
        return MoveJointsGoal(positions=list(self.resource.named_configurations["ready"]))


class MoveToPose(_Action):
    action = "move_to_pose"

    def __init__(self, name: str, key: str):
        super().__init__(name)
        self.key = key

    def goal(self) -> MoveToPoseGoal:
        return MoveToPoseGoal(pose=np.array(bb.storage[self.key], dtype=float))


class MoveCartesian(_Action):
    action = "move_cartesian"

    def __init__(self, name: str, speed_mps: float, key: str = "", delta: Any = None):
        super().__init__(name)
        self.key, self.delta, self.speed_mps = key, delta, speed_mps

    def goal(self) -> MoveCartesianGoal:
        if self.key:
            T = np.array(bb.storage[self.key], dtype=float)
        else:
            T = np.array(self.resource.tcp_pose(), dtype=float)
            T[:3, 3] += self.delta
        return MoveCartesianGoal(pose=T, speed_mps=self.speed_mps)


class Gripper(_Action):
    resource_kind = "grippers"
    action = "gripper_action"

    def __init__(self, name: str, position: Any, max_effort: float = -1.0, expect_object: bool = False):
        super().__init__(name)
        self.position, self.max_effort, self.expect_object = position, max_effort, expect_object

    def goal(self) -> Pr2GripperCommand:
        gap = self.resource.max_gap_m if self.position == "open" else self.position
        return Pr2GripperCommand(position=gap, max_effort=self.max_effort)

    def update(self) -> Status:
        h = self.handle
        st = h.status
        if st in _RUNNING:
            return Status.RUNNING
        result = h.result
        stalled = isinstance(result, Pr2GripperCommandResult) and result.stalled
        if st != GoalStatus.SUCCEEDED and not stalled:
            return Status.FAILURE
        if self.expect_object and not stalled and result.position < self.resource.min_gap_m + 0.002:
            return Status.FAILURE  # closed on nothing
        return Status.SUCCESS


class GetObjectPose(py_trees.behaviour.Behaviour):
    def __init__(self, name: str, obj: str, key: str):
        super().__init__(name)
        self.obj, self.key = obj, key

    def setup(self, **kwargs: Any) -> None:
        self.backend = kwargs["backend"]

    def update(self) -> Status:
        bb.storage[self.key] = np.array(self.backend.world.object_pose(self.obj), dtype=float)
        return Status.SUCCESS


class ChooseGrasp(py_trees.behaviour.Behaviour):
    """The grasp choice of ``grasp_from_above.yaml`` (max_approach_angle_deg 45), asked of the
    planning service as ours asks it; writes the same four keys."""

    def __init__(self, name: str, obj: str, pose_key: str):
        super().__init__(name)
        self.obj, self.pose_key = obj, pose_key

    def setup(self, **kwargs: Any) -> None:
        from py_trees_manipulation.behaviors.grasping import object_grasp_set

        self.backend = kwargs["backend"]
        self.svc = planning_service(self.backend)
        self.robot = next(iter(self.backend.arms.values())).name
        self.grasps = object_grasp_set(self.svc.scene, self.obj)

    def initialise(self) -> None:
        from py_trees_manipulation.collision.grasp_choice import choose_grasp

        obj, robot, grasps = self.obj, self.robot, self.grasps
        pose = np.array(bb.storage[self.pose_key], dtype=float)

        def query(world: Any, cancelled: Any) -> Any:
            return choose_grasp(world, robot, obj, pose, grasps, cancelled=cancelled, width_margin_m=0.005,
                                max_approach_angle_deg=45.0, approach_m=None, place_poses=[], place_approach_m=0.10)

        self.handle = self.svc.query(query, label=f"grasp choice for {obj}")

    def update(self) -> Status:
        h = self.handle
        if not h.done:
            return Status.RUNNING
        if h.status != GoalStatus.SUCCEEDED or h.result.chosen is None:
            return Status.FAILURE
        c = h.result.chosen
        s = bb.storage
        s["/grasp_pose"] = c.grasp_pose
        s["/pregrasp_pose"] = c.pregrasp_pose
        s["/object_grasp"] = np.array(c.grasp.pose)
        s["/grasp_width"] = float(c.grasp.width_m)
        return Status.SUCCESS


class Wait(py_trees.behaviour.Behaviour):
    def __init__(self, name: str, duration_s: float):
        super().__init__(name)
        self.duration_s = duration_s

    def setup(self, **kwargs: Any) -> None:
        self.backend = kwargs["backend"]

    def initialise(self) -> None:
        self.t0 = self.backend.now()

    def update(self) -> Status:
        return Status.SUCCESS if self.duration_s - (self.backend.now() - self.t0) <= 1e-9 else Status.RUNNING


class ObjectLifted(py_trees.behaviour.Behaviour):
    def __init__(self, name: str, obj: str, min_height_m: float):
        super().__init__(name)
        self.obj, self.min_height_m = obj, min_height_m

    def setup(self, **kwargs: Any) -> None:
        self.backend = kwargs["backend"]
        self.z0 = float(self.backend.world.object_pose(self.obj)[2, 3])  # where it starts

    def update(self) -> Status:
        z = float(self.backend.world.object_pose(self.obj)[2, 3])
        return Status.SUCCESS if z - self.z0 >= self.min_height_m else Status.FAILURE


def build(task: Any) -> py_trees.trees.BehaviourTree:
    """``examples/pick_and_lift.yaml``'s tree, by hand, with the task's parameters (object, lift_m)."""
    obj, lift_m = task.parameters["object"], float(task.parameters["lift_m"])
    grasp = py_trees.composites.Sequence("grasp", memory=True, children=[
        ChooseGrasp("grasp/choose", obj, "/object_pose"),
        MoveToPose("grasp/pregrasp", "/pregrasp_pose"),
        MoveCartesian("grasp/descend", 0.08, key="/grasp_pose"),
        Gripper("grasp/close", 0.0, max_effort=40.0, expect_object=True),
    ])
    root = py_trees.composites.Sequence("pick_and_lift", memory=True, children=[
        MoveJoints("ready"),
        Gripper("open", "open"),
        GetObjectPose("locate", obj, "/object_pose"),
        grasp,
        MoveCartesian("lift", 0.1, delta=np.array([0.0, 0.0, lift_m])),
        Wait("settle", 0.5),
        ObjectLifted("lifted", obj, 0.10),
    ])
    return py_trees.trees.BehaviourTree(root=root)
