"""The robot's resources over rosbridge: arms (FollowJointTrajectory, Cartesian actions, joint
states, TCP pose), grippers (PR2 gripper command and sensor actions) and object poses.

Each resource holds one action client per action the robot file offers (:mod:`.actions`) and runs
one goal at a time, as in the simulator.
"""

from __future__ import annotations

import time
from typing import Any, Optional

import numpy as np

from ..backend import BackendError
from ..msgs.actions import GoalHandle
from ..msgs.motion import MotionFeedback, MotionResult, Pr2GripperCommandResult
from . import convert as cv
from .actions import _ActionClient, _ServerFailure
from .robotfile import ArmConfig, GripperConfig

# ``backend`` is the HardwareBackend (.rosbridge), annotated ``Any``: this module sits below it and must
# not import it (no import circle)


class _Resource:
    kind = "resource"

    def __init__(self, backend: Any, name: str):
        self._backend = backend
        self.name = name
        self._clients: dict[str, _ActionClient] = {}

    @property
    def actions(self) -> frozenset[str]:
        return frozenset(self._clients)

    def send_goal(self, action: str, goal: Any) -> GoalHandle:
        """Send ``goal`` to the robot; never blocks. Unknown actions give a REJECTED handle.

        Raises:
            BackendError: the backend is closed (no command is sent after the run ends).
        """
        be = self._backend
        if be._conn.closed:
            raise BackendError(f"cannot send {action!r} to {self.name!r}: the hardware backend is closed")
        be.poll()
        client = self._clients.get(action)
        if client is None:
            h = GoalHandle(action, goal)
            h.set_rejected(f"{self.kind} {self.name!r} has no action {action!r}; the robot file offers {sorted(self._clients)}")
            return h
        # one goal at a time per resource, as in the simulator: preempt the running one
        for rg in list(be._goals.values()):
            if rg.client in self._clients.values() and not rg.handle.done:
                rg.handle.cancel()
        return client.send(goal)


class HardwareArm(_Resource):
    """An arm on the robot: FollowJointTrajectory for ``move_joints``, optional Cartesian actions.

    Attributes:
        joint_names, named_configurations: from the robot file (defaults: its robot description).
        description: the robot description the robot file names for this arm, or None.
    """

    kind = "arm"

    def __init__(self, backend: Any, cfg: ArmConfig):
        super().__init__(backend, cfg.name)
        self.cfg = cfg
        self.joint_names = list(cfg.joint_names)
        self.named_configurations = {k: list(v) for k, v in cfg.named_configurations.items()}
        self.description = cfg.description
        self._tcp: Optional[np.ndarray] = None
        frame = backend.cfg.world_frame
        for action, acfg in cfg.actions.items():
            if action == "move_joints":
                self._clients[action] = backend._client_cls(
                    backend, action, acfg, self._fjt_goal, self._fjt_feedback, self._fjt_result)
            else:
                self._clients[action] = backend._client_cls(
                    backend, action, acfg, lambda g, a=action: cv.cartesian_goal_to_ros(a, g, frame),
                    cv.motion_feedback_from_ros, lambda m, h: cv.motion_result_from_ros(m))
        if cfg.tcp_pose_topic:
            backend._watch(cfg.tcp_pose_topic, "geometry_msgs/PoseStamped", self._on_tcp)

    def send_goal(self, action: str, goal: Any) -> GoalHandle:
        """As :meth:`_Resource.send_goal`; arm motions are first checked and planned in the client
        against the task's scene when it has one (:mod:`.planning`), then sent as one trajectory."""
        planning = self._backend._planning
        if planning is not None and not self._backend._conn.closed and planning.handles(self, action, goal):
            self._backend.poll()
            for rg in list(self._backend._goals.values()):  # one goal at a time on this arm
                if rg.client in self._clients.values() and not rg.handle.done:
                    rg.handle.cancel()
            return planning.submit(self, action, goal)
        return super().send_goal(action, goal)

    def _on_tcp(self, msg: Any) -> None:
        self._tcp = cv.pose_stamped_from_ros(msg, self.cfg.tcp_pose_topic or "tcp pose")

    def tcp_pose(self) -> np.ndarray:
        """(4, 4) TCP pose from ``tcp_pose_topic``, world frame, metres.

        Raises:
            BackendError: no tcp_pose_topic in the robot file, or no message yet.
        """
        self._backend.poll()
        if self._tcp is None:
            raise BackendError(f"arm {self.name!r}: no TCP pose" + (
                f" received on {self.cfg.tcp_pose_topic}" if self.cfg.tcp_pose_topic else
                " (set tcp_pose_topic in the robot file)"))
        return self._tcp.copy()

    def joint_positions(self) -> list[float]:
        """Joint positions (rad, ``joint_names`` order) from ``joint_states_topic``.

        Raises:
            BackendError: a joint has not been reported yet.
        """
        self._backend.poll()
        js = self._backend._joints.get(self.cfg.joint_states_topic, {})
        missing = [j for j in self.joint_names if j not in js]
        if missing:
            raise BackendError(f"arm {self.name!r}: no position for {missing} on {self.cfg.joint_states_topic}")
        return [js[j] for j in self.joint_names]

    # ---- FollowJointTrajectory -------------------------------------------------------------------
    def _fjt_goal(self, goal: Any) -> dict:
        from ..msgs.motion import JointTrajectoryGoal, MoveJointsGoal

        if isinstance(goal, JointTrajectoryGoal):  # planned and timed by the client (.planning)
            return cv.joint_trajectory_goal_to_ros(goal)
        if not isinstance(goal, MoveJointsGoal):
            raise TypeError(f"move_joints takes a MoveJointsGoal, got {type(goal).__name__}")
        if len(goal.positions) != len(self.joint_names):
            raise ValueError(f"the arm has {len(self.joint_names)} joints, got {len(goal.positions)} positions")
        try:
            q0 = self.joint_positions()
        except BackendError as e:
            raise ValueError(str(e)) from None
        return cv.follow_joint_trajectory_goal(self.joint_names, q0, goal, self.cfg.max_joint_velocity_rps)

    def _fjt_feedback(self, msg: Any) -> MotionFeedback:
        actual, desired = cv.fjt_feedback_from_ros(msg, self.joint_names)
        tcp = self._tcp if self._tcp is not None else np.eye(4)
        return MotionFeedback(tcp_pose=tcp.copy(), distance_m=float("nan"),
                              progress=0.0 if not actual else float(1.0 - min(1.0, np.max(np.abs(np.subtract(desired, actual))))))

    def _fjt_result(self, msg: Any, handle: GoalHandle) -> MotionResult:
        code, text = cv.fjt_result_from_ros(msg)
        if code != 0:
            raise _ServerFailure(f"FollowJointTrajectory error {code} ({cv.FJT_ERRORS.get(code, '?')}): {text}")
        tcp = self._tcp if self._tcp is not None else np.eye(4)
        return MotionResult(tcp_pose=tcp.copy(), position_error_m=0.0)


class HardwareGripper(_Resource):
    """A gripper: ``gripper_action`` (pr2_controllers_msgs/Pr2GripperCommand) and the PR2 gripper
    sensor actions. Feedback and results reach behaviours as ``Pr2GripperCommandResult`` or the
    action's ``PR2Gripper<X>Feedback{data}`` / ``PR2Gripper<X>Result{data}`` (as in the simulator)."""

    kind = "gripper"

    def __init__(self, backend: Any, cfg: GripperConfig):
        super().__init__(backend, cfg.name)
        self.cfg = cfg
        self.max_gap_m = cfg.max_gap_m  # opening range, m (robot file or description; GripperCommand 'open')
        self.min_gap_m = cfg.min_gap_m
        self._last_position: Optional[float] = None
        for action, acfg in cfg.actions.items():
            self._clients[action] = backend._client_cls(
                backend, action, acfg, lambda g, a=action: cv.gripper_goal_to_ros(a, g),
                lambda m, a=action: self._track(cv.gripper_feedback_from_ros(a, m)),
                lambda m, h, a=action: self._track(cv.gripper_result_from_ros(a, m)))

    def _track(self, msg: Any) -> Any:
        if isinstance(msg, Pr2GripperCommandResult):
            self._last_position = msg.position
        return msg

    def gap_m(self) -> float:
        """Finger gap, metres: ``gap_joint`` in joint states, else the last gripper_action position.

        Raises:
            BackendError: neither is known yet.
        """
        be = self._backend
        be.poll()
        if self.cfg.gap_joint:
            js = be._joints.get(self.cfg.joint_states_topic, {})
            if self.cfg.gap_joint in js:
                return js[self.cfg.gap_joint]
        if self._last_position is not None:
            return self._last_position
        raise BackendError(f"gripper {self.name!r}: gap unknown (set gap_joint in the robot file)")


class HardwareWorld:
    """Object poses from ``geometry_msgs/PoseStamped`` topics or blackboard keys (robot file ``objects:``).

    Args:
        backend: the backend.
        names: objects the tree names; with an ``objects: {'*': {topic: ...{name}...}}`` template
            their topics are subscribed at connect (and must publish within ``timeouts.topic_s``).
    """

    def __init__(self, backend: Any, names: Any = ()):
        self._backend = backend
        self._poses: dict[str, np.ndarray] = {}
        self._topics: dict[str, str] = {}
        for name in sorted(set(backend.cfg.objects) | set(names)):
            o = backend.cfg.object_config(name)
            if o is not None and o.topic:
                self._subscribe(name, o.topic)

    def _subscribe(self, name: str, topic: str) -> None:
        self._topics[name] = topic
        self._backend._watch(topic, "geometry_msgs/PoseStamped",
                             lambda m, n=name, t=topic: self._poses.__setitem__(n, cv.pose_stamped_from_ros(m, t)))

    def object_names(self) -> list[str]:
        return sorted(set(self._backend.cfg.objects) | set(self._topics))

    def object_pose(self, name: str) -> np.ndarray:
        """(4, 4) latest pose, world frame, metres.

        An object known only through the ``'*'`` template and not named by the tree at connect is
        subscribed on first use, waiting up to ``timeouts.topic_s`` for its first message.

        Raises:
            KeyError: unknown object, or no pose received / on the blackboard yet.
        """
        be = self._backend
        cfg = be.cfg.object_config(name)
        if cfg is None:
            raise KeyError(f"no object named {name!r} in the robot file; it has {self.object_names()}")
        if cfg.blackboard:
            import py_trees

            key = cfg.blackboard if cfg.blackboard.startswith("/") else "/" + cfg.blackboard
            value = py_trees.blackboard.Blackboard.storage.get(key)
            if value is None:
                raise KeyError(f"object {name!r}: blackboard key {cfg.blackboard!r} has no pose")
            return np.array(value, dtype=float)
        be.poll()
        if name not in self._topics and cfg.topic:
            self._subscribe(name, cfg.topic)
            deadline = time.monotonic() + be.cfg.topic_timeout_s
            while name not in self._poses and time.monotonic() < deadline and be.connected:
                time.sleep(0.01)
                be.poll()
        if name not in self._poses:
            raise KeyError(f"object {name!r}: no pose received on {cfg.topic}")
        return self._poses[name].copy()
