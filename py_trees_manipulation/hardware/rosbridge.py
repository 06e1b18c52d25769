"""The hardware backend: a ROS robot driven over rosbridge (v2 protocol) with ``roslibpy``.

Actions are ROS 1 actionlib servers spoken over topics (``<ns>/goal``, ``<ns>/cancel``,
``<ns>/status``, ``<ns>/feedback``, ``<ns>/result``), exactly what ``roslibpy.ros1.actionlib``
does; we speak the same wire protocol on ``roslibpy.Topic`` ourselves because its
``ActionClient`` waits a hard-coded 3 s per server, one after the other, and finishes a goal only
once both a result and a status arrived. Names and types come from the robot file
(:mod:`.robotfile`); defaults follow the PR2 (``/r_gripper_sensor_controller/find_contact``,
``pr2_gripper_sensor_msgs/PR2GripperFindContactAction``...).

Threading: roslibpy calls us on its reactor thread. Those callbacks only append to a
thread-safe queue; the tree's thread applies them to the :class:`GoalHandle` objects in
:meth:`HardwareBackend.advance` (once per tick), so a behaviour never sees a half-updated goal.

Safety:
  - connection timeout (``rosbridge.connect_timeout_s``), action servers must answer within
    ``timeouts.server_s``, goals must be acknowledged within ``timeouts.ack_s`` (else LOST and
    cancelled), an active goal's server must publish status every ``timeouts.status_s``;
  - ``GoalHandle.cancel()`` publishes ``<ns>/cancel`` for that goal id;
  - a lost connection ABORTs every running goal with "connection to rosbridge at ... lost" and
    stops roslibpy's automatic reconnection (never reconnect mid-action); the tree is ticked once
    more (the behaviour whose goal was aborted fails with that reason), then the next
    :meth:`~HardwareBackend.advance` raises :class:`ConnectionLost`, which the runner reports as a
    FAILURE (exit 1, no traceback) naming the lost connection;
  - :meth:`~HardwareBackend.close` cancels running goals, then sets a flag that every publish
    checks: nothing is sent after it. Reconnecting means a new backend (between runs).
"""

from __future__ import annotations

import collections
import json
import logging
import random
import threading
import time
from typing import Any, Callable, Optional

import numpy as np

from ..backend import BackendError
from ..msgs.actions import GoalHandle, GoalStatus
from ..msgs.motion import MotionFeedback, MotionResult, Pr2GripperCommandResult
from . import convert as cv
from .robotfile import ActionConfig, ArmConfig, GripperConfig, RobotConfig

LOG = logging.getLogger("py_trees_manipulation.hardware")


class HardwareConnectionError(BackendError, ValueError):
    """rosbridge cannot be reached, or a configured server/topic does not answer at connect.

    (A ValueError too, so ``ptm run`` reports it without a traceback, exit code 2.)
    """


class ConnectionLost(BackendError):
    """The rosbridge connection was lost mid-run: the run ends as a FAILURE (not an error).

    ``run_failure = True`` tells the runner to stop the tree and report FAILURE with this text,
    without a traceback.
    """

    run_failure = True


_TERMINAL_FINISH = {
    GoalStatus.SUCCEEDED: "set_succeeded", GoalStatus.ABORTED: "set_aborted", GoalStatus.PREEMPTED: "set_preempted",
}


class OneLineLogFilter(logging.Filter):
    """Turns a log record that carries a traceback into one line (``message: ExcType: text``).

    roslibpy logs a message it cannot handle with ``LOGGER.exception``, websockets a client that
    breaks the protocol likewise: a bad frame from the other end is worth one line, not a traceback.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and record.exc_info[1] is not None:
            e = record.exc_info[1]
            record.msg = f"{record.getMessage().split('.It could', 1)[0]}: {type(e).__name__}: {e}"
            record.args = None
            record.exc_info = None
            record.exc_text = None
        return True


def add_one_line_filter(logger_name: str) -> None:
    """Add :class:`OneLineLogFilter` to a logger (once)."""
    logger = logging.getLogger(logger_name)
    if not any(isinstance(f, OneLineLogFilter) for f in logger.filters):
        logger.addFilter(OneLineLogFilter())


def _protocol_class() -> Any:
    """roslibpy's Twisted protocol, made to (a) hand rosbridge ``status`` messages to the connection's
    event queue (roslibpy has no handler and logs a traceback for each) and (b) skip binary or
    unreadable frames with one warning line (roslibpy raises into Twisted, which prints "Unhandled
    Error" and drops the connection). None with another transport."""
    try:
        from roslibpy.comm.comm_autobahn import AutobahnRosBridgeProtocol
    except ImportError:  # pragma: no cover - IronPython/asyncio transports
        return None

    class _Protocol(AutobahnRosBridgeProtocol):
        def __init__(self, *args: Any, **kwargs: Any):
            super().__init__(*args, **kwargs)
            self._message_handlers["status"] = self._on_status_op

        def _on_status_op(self, message: Any) -> None:
            conn = getattr(self.factory, "ptm_connection", None)
            if conn is not None:
                conn.events.append(("bridge_status", None, dict(message)))

        def onMessage(self, payload: bytes, isBinary: bool) -> None:  # noqa: N802 - autobahn API
            if isBinary:
                LOG.warning("rosbridge sent a binary frame (%d bytes): ignored", len(payload))
                return
            try:
                self.on_message(payload)
            except Exception as e:  # noqa: BLE001 - a bad frame must not stop the connection
                LOG.warning("rosbridge sent a message that cannot be handled (%s: %s): ignored", type(e).__name__, e)

    return _Protocol


class _Connection:
    """One rosbridge websocket (roslibpy.Ros) with a guarded publish and an event queue."""

    def __init__(self, cfg: RobotConfig, connect_timeout_s: Optional[float] = None):
        import roslibpy

        self._roslibpy = roslibpy
        self.cfg = cfg
        self.url = cfg.url
        self.events: collections.deque = collections.deque()
        self.closed = False
        self.lost = False
        self.sent = 0  # ops published through :meth:`publish` (tests)
        self._topics: dict[str, Any] = {}
        self._lock = threading.Lock()
        add_one_line_filter("roslibpy")
        timeout = cfg.connect_timeout_s if connect_timeout_s is None else connect_timeout_s
        try:
            self.ros = roslibpy.Ros(cfg.host, cfg.port, is_secure=cfg.secure)  # starts connecting at once
            proto_cls = _protocol_class()
            factory = getattr(self.ros, "factory", None)
            if proto_cls is not None and factory is not None:
                factory.protocol = proto_cls
                factory.ptm_connection = self
            self.ros.run(timeout=timeout)
            live = getattr(factory, "_proto", None)
            if proto_cls is not None and live is not None and not isinstance(live, proto_cls) \
                    and isinstance(live, proto_cls.__mro__[1]):
                # built before factory.protocol was set (Ros() connects from its constructor): adopt it
                live.__class__ = proto_cls
                live._message_handlers["status"] = live._on_status_op
        except Exception as e:
            self._stop_reconnecting()
            raise HardwareConnectionError(
                f"cannot connect to rosbridge at {self.url} within {timeout:g} s "
                f"({type(e).__name__}: {e}); is rosbridge_server (or 'ptm serve') running there?") from None
        self.ros.on("close", self._on_close)

    # ---- reactor-thread callbacks -------------------------------------------------------------
    def _on_close(self, *_: Any) -> None:
        self._mark_lost()

    def _mark_lost(self) -> None:
        """Queue the loss once (any thread). The event is queued before ``lost`` is set, so whoever
        sees ``lost`` finds the event in the queue."""
        with self._lock:
            if self.closed or self.lost:
                return
            self.events.append(("lost", None, None))
            self.lost = True
        self._stop_reconnecting()

    def _stop_reconnecting(self) -> None:
        factory = getattr(getattr(self, "ros", None), "factory", None)
        stop = getattr(factory, "stopTrying", None)
        if callable(stop):
            try:
                from twisted.internet import reactor

                reactor.callFromThread(stop)
            except Exception:  # pragma: no cover - other transports
                pass

    # ---- main-thread API ----------------------------------------------------------------------
    def topic(self, name: str, msg_type: str) -> Any:
        with self._lock:
            t = self._topics.get(name)
            if t is None:
                t = self._roslibpy.Topic(self.ros, name, msg_type, reconnect_on_close=False)
                self._topics[name] = t
            return t

    def subscribe(self, name: str, msg_type: str, callback: Callable[[Any], None]) -> None:
        """Subscribe; ``callback(msg)`` runs on the reactor thread and must only queue work."""
        self.topic(name, msg_type).subscribe(callback)

    def check_can_send(self) -> None:
        if self.closed:
            raise BackendError("the hardware backend is closed: no command is sent after the run ends")
        if self.lost or not self.ros.is_connected:
            self._mark_lost()
            raise BackendError(f"connection to rosbridge at {self.url} lost")

    def publish(self, name: str, msg_type: str, msg: dict) -> None:
        """Publish ``msg``. Raises BackendError when closed or disconnected (nothing is sent)."""
        self.check_can_send()
        self.topic(name, msg_type).publish(self._roslibpy.Message(msg))
        self.sent += 1

    def call_service(self, name: str, srv_type: str, timeout_s: float, args: Optional[dict] = None) -> Any:
        self.check_can_send()
        svc = self._roslibpy.Service(self.ros, name, srv_type)
        return svc.call(self._roslibpy.ServiceRequest(args or {}), timeout=timeout_s)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self._stop_reconnecting()
        try:
            if self.ros.is_connected:  # after a loss we stopped the factory: do not wait long
                self.ros.close(timeout=0.2 if self.lost else 2)
        except Exception:
            pass


class _RemoteGoal:
    __slots__ = ("handle", "goal_id", "client", "sent_at", "last_status_at", "acked", "terminal_seen", "terminal_at")

    def __init__(self, handle: GoalHandle, goal_id: str, client: "_ActionClient", t: float):
        self.handle = handle
        self.goal_id = goal_id
        self.client = client
        self.sent_at = t
        self.last_status_at = t
        self.acked = False
        self.terminal_seen: Optional[tuple[int, str]] = None
        self.terminal_at: Optional[float] = None  # when the status list first said SUCCEEDED/ABORTED/PREEMPTED


class _ActionClient:
    """A ROS 1 actionlib client over rosbridge topics, feeding :class:`GoalHandle` objects.

    Args:
        conn: the connection.
        backend_action: our action name (``find_contact``...), for messages.
        cfg: the ROS namespace and ``...Action`` type.
        goal_to_ros: our goal -> ROS goal dict (raises TypeError/ValueError: REJECTED locally).
        feedback_from_ros, result_from_ros: ROS dict -> our message (raise ValueError when malformed).
    """

    def __init__(self, backend: "HardwareBackend", backend_action: str, cfg: ActionConfig,
                 goal_to_ros: Callable[[Any], dict], feedback_from_ros: Callable[[Any], Any],
                 result_from_ros: Callable[[Any, GoalHandle], Any]):
        self.backend = backend
        self.conn = backend._conn
        self.action = backend_action
        self.ns = cfg.name
        self.type = cfg.type
        self.goal_to_ros = goal_to_ros
        self.feedback_from_ros = feedback_from_ros
        self.result_from_ros = result_from_ros
        self.status_seen = threading.Event()
        self.last_status_wall = 0.0
        q = self.conn.events
        base = self.type[: -len("Action")]
        self.conn.topic(self.ns + "/goal", base + "ActionGoal").advertise()
        self.conn.topic(self.ns + "/cancel", "actionlib_msgs/GoalID").advertise()

        def on_status(msg: Any) -> None:
            self.last_status_wall = time.monotonic()
            self.status_seen.set()
            q.append(("status", self, msg))
        self.conn.subscribe(self.ns + "/status", "actionlib_msgs/GoalStatusArray", on_status)
        self.conn.subscribe(self.ns + "/feedback", base + "ActionFeedback", lambda m: q.append(("feedback", self, m)))
        self.conn.subscribe(self.ns + "/result", base + "ActionResult", lambda m: q.append(("result", self, m)))

    def send(self, goal: Any) -> GoalHandle:
        be = self.backend
        handle = GoalHandle(self.action, goal, on_cancel=self._cancel)
        try:
            ros_goal = self.goal_to_ros(goal)
        except (TypeError, ValueError) as e:
            handle.set_rejected(f"invalid {self.action} goal: {e}")
            return handle
        goal_id = f"ptm_{self.action}_{int(time.time() * 1000)}_{random.randrange(1 << 30):08x}"
        stamp = cv.time_to_ros(time.time())
        try:
            self.conn.publish(self.ns + "/goal", self.type[: -len("Action")] + "ActionGoal",
                              {"header": {"seq": 0, "stamp": stamp, "frame_id": ""},
                               "goal_id": {"stamp": stamp, "id": goal_id}, "goal": ros_goal})
        except BackendError as e:
            handle.set_aborted(None, str(e))
            return handle
        be._goals[goal_id] = _RemoteGoal(handle, goal_id, self, time.monotonic())
        be.goal_log.append((self.action, goal_id))
        return handle

    def _cancel(self, handle: GoalHandle) -> None:
        rg = next((g for g in self.backend._goals.values() if g.handle is handle), None)
        if rg is None:
            handle.set_preempted(None, "cancelled")
            return
        try:
            self.publish_cancel(rg.goal_id)
            self.backend.cancel_log.append((self.action, rg.goal_id))
        except BackendError as e:
            # cannot reach the robot: the goal is over as far as we can know
            self.backend._goals.pop(rg.goal_id, None)
            handle.set_preempted(None, f"cancelled locally, the cancel was not sent: {e}")


    ros2 = False

    def publish_cancel(self, goal_id: str) -> None:
        """Send the cancel of ``goal_id``. Raises BackendError when closed or disconnected."""
        self.conn.publish(self.ns + "/cancel", "actionlib_msgs/GoalID",
                          {"stamp": {"secs": 0, "nsecs": 0}, "id": goal_id})


def ros2_action_type(ros1_type: str) -> str:
    """``pkg/NameAction`` (ROS 1) -> ``pkg/action/Name`` (ROS 2); ROS 2 names are returned as they are."""
    if "/action/" in ros1_type:
        return ros1_type
    pkg, _, name = ros1_type.partition("/")
    return f"{pkg}/action/{name[: -len('Action')] if name.endswith('Action') else name}"


def _to_ros2(msg: Any) -> Any:
    """A ROS 1 style message dict for ROS 2: times ``{secs, nsecs}`` -> ``{sec, nanosec}``, no ``header.seq``."""
    if isinstance(msg, dict):
        if set(msg) == {"secs", "nsecs"}:
            return {"sec": msg["secs"], "nanosec": msg["nsecs"]}
        return {k: _to_ros2(v) for k, v in msg.items() if not (k == "seq" and "frame_id" in msg)}
    if isinstance(msg, list):
        return [_to_ros2(v) for v in msg]
    return msg


#: action_msgs/GoalStatus (ROS 2) -> our (actionlib) status
_ROS2_STATUS = {4: GoalStatus.SUCCEEDED, 5: GoalStatus.PREEMPTED, 6: GoalStatus.ABORTED}


class _Ros2ActionClient(_ActionClient):
    """A ROS 2 action client over rosbridge v2 (``send_action_goal``, ``cancel_action_goal``,
    ``action_feedback``, ``action_result``; rosbridge_suite >= 2.0), through ``roslibpy.ActionClient``.

    The protocol has no status stream: a goal is PENDING until its first feedback, then ACTIVE; its
    end comes with ``action_result`` (4 SUCCEEDED, 5 CANCELED -> PREEMPTED, 6 ABORTED; ``result:
    false`` with status 0 -> REJECTED with the server's text). So ``timeouts.ack_s``/``status_s``
    do not apply; a lost connection still aborts the goal. Goal messages are sent with ROS 2 times
    (``{sec, nanosec}``) and without ``header.seq``.
    """

    ros2 = True

    def __init__(self, backend: "HardwareBackend", backend_action: str, cfg: ActionConfig,
                 goal_to_ros: Callable[[Any], dict], feedback_from_ros: Callable[[Any], Any],
                 result_from_ros: Callable[[Any, GoalHandle], Any]):
        self.backend = backend
        self.conn = backend._conn
        self.action = backend_action
        self.ns = cfg.name
        self.type = ros2_action_type(cfg.type)
        self.goal_to_ros = goal_to_ros
        self.feedback_from_ros = feedback_from_ros
        self.result_from_ros = result_from_ros
        self.status_seen = threading.Event()
        self.status_seen.set()  # discovery goes through /rosapi/action_servers instead
        self._client = self.conn._roslibpy.ActionClient(self.conn.ros, self.ns, self.type, reconnect_on_close=False)

    def send(self, goal: Any) -> GoalHandle:
        be = self.backend
        handle = GoalHandle(self.action, goal, on_cancel=self._cancel)
        try:
            ros_goal = _to_ros2(self.goal_to_ros(goal))
        except (TypeError, ValueError) as e:
            handle.set_rejected(f"invalid {self.action} goal: {e}")
            return handle
        q = self.conn.events
        box: dict[str, str] = {}
        try:
            self.conn.check_can_send()
            gid = self._client.send_goal(
                ros_goal, lambda r: q.append(("r2_result", self, (box, r, True))),
                lambda f: q.append(("r2_feedback", self, (box, f))),
                lambda r: q.append(("r2_result", self, (box, r, False))))
            self.conn.sent += 1
        except BackendError as e:
            handle.set_aborted(None, str(e))
            return handle
        box["id"] = gid
        be._goals[gid] = _RemoteGoal(handle, gid, self, time.monotonic())
        be.goal_log.append((self.action, gid))
        return handle

    def publish_cancel(self, goal_id: str) -> None:
        self.conn.check_can_send()
        self._client.cancel_goal(goal_id)
        self.conn.sent += 1


class _Resource:
    kind = "resource"

    def __init__(self, backend: "HardwareBackend", name: str):
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

    def __init__(self, backend: "HardwareBackend", cfg: ArmConfig):
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


class _ServerFailure(Exception):
    """A result that says the goal failed although its status is SUCCEEDED (e.g. an FJT error code)."""


class HardwareGripper(_Resource):
    """A gripper: ``gripper_action`` (pr2_controllers_msgs/Pr2GripperCommand) and the PR2 gripper
    sensor actions. Feedback and results reach behaviours as ``Pr2GripperCommandResult`` or the
    action's ``PR2Gripper<X>Feedback{data}`` / ``PR2Gripper<X>Result{data}`` (as in the simulator)."""

    kind = "gripper"

    def __init__(self, backend: "HardwareBackend", cfg: GripperConfig):
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

    def __init__(self, backend: "HardwareBackend", names: Any = ()):
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


class HardwareBackend:
    """:class:`~py_trees_manipulation.backend.Backend` on a ROS robot over rosbridge.

    Args:
        cfg: the robot file (:func:`~.robotfile.load_robot_file`).
        objects: object names the tree uses (:func:`~py_trees_manipulation.hardware.tree_objects`),
            subscribed at connect through the robot file's ``'*'`` object topic template.
        scene: the task's parsed scene (:class:`~py_trees_manipulation.scene.spec.SceneSpec`): when
            it has robots named like the robot file's arms, arm motions are checked and planned in
            the client against it and sent as one FollowJointTrajectory goal (:mod:`.planning`).

    Raises:
        HardwareConnectionError: rosbridge unreachable within ``connect_timeout_s``; an action
            server that publishes no status within ``timeouts.server_s``; a state topic (joint
            states, TCP pose, object poses, /clock) silent for ``timeouts.topic_s``.

    Attributes:
        name: ``"hardware"``. arms, grippers, world: as every backend.
        goal_log, cancel_log: ``(action, goal_id)`` sent (for tests and the log).
    """

    name = "hardware"

    def __init__(self, cfg: RobotConfig, objects: Any = (), scene: Any = None):
        self.cfg = cfg
        self.seed = 0
        #: the task's parsed scene (what the tree was told the world is), or None: the seam's ``scene``
        self.scene = scene
        self._planning: Any = None
        self.goal_log: list[tuple[str, str]] = []
        self.cancel_log: list[tuple[str, str]] = []
        self._goals: dict[str, _RemoteGoal] = {}
        self._joints: dict[str, dict[str, float]] = {}
        self._handlers: dict[str, list[Callable[[Any], None]]] = {}
        self._events: list[dict[str, Any]] = []
        self._lost_applied = False  # poll() applied the loss (goals aborted)
        self._lost_goals: list[tuple[Any, str]] = []  # (client, goal id) running when the connection was lost
        self._lost_ticked = False   # ... and the tree has been ticked once since
        self._clock: Optional[float] = None
        self._clock0: Optional[float] = None
        self._client_cls = _Ros2ActionClient if cfg.protocol == "ros2" else _ActionClient
        self._conn = _Connection(cfg)
        self._wall0 = time.monotonic()
        self._next_tick = self._wall0
        try:
            self.arms = {n: HardwareArm(self, a) for n, a in cfg.arms.items()}
            self.grippers = {n: HardwareGripper(self, g) for n, g in cfg.grippers.items()}
            for topic in {a.joint_states_topic for a in cfg.arms.values()} | {
                    g.joint_states_topic for g in cfg.grippers.values() if g.gap_joint}:
                self._watch(topic, "sensor_msgs/JointState",
                            lambda m, t=topic: self._joints.setdefault(t, {}).update(cv.joint_state_from_ros(m, t)))
            if cfg.clock != "wall":
                self._watch(cfg.clock, "rosgraph_msgs/Clock", self._on_clock)
            self.world = HardwareWorld(self, objects)
            if scene is not None and any(r.name in self.arms for r in scene.robots):
                from .planning import HardwarePlanning

                self._planning = HardwarePlanning(self, scene)
            self._wait_ready()
        except BaseException:
            self._conn.close()
            raise
        self._wall0 = time.monotonic()
        self._next_tick = self._wall0
        self._clock0 = self._clock

    @property
    def motion_planning(self) -> Any:
        """The client's planning service (:class:`~.planning.HardwarePlanning`) when the task has a
        scene naming the robot file's arms, else None: its collision world and arm planner, for
        behaviours that check geometry before moving (``query``; see
        :class:`~py_trees_manipulation.backend.PlanningService`)."""
        return self._planning

    # ---- connection set-up ------------------------------------------------------------------------
    def _watch(self, topic: str, msg_type: str, handler: Callable[[Any], None]) -> None:
        """Route ``topic`` messages to ``handler`` on the tree thread (in :meth:`poll`)."""
        if topic not in self._handlers:
            self._handlers[topic] = []
            q = self._conn.events
            self._conn.subscribe(topic, msg_type, lambda m, t=topic: q.append(("topic", t, m)))
        self._handlers[topic].append(handler)

    def _on_clock(self, msg: Any) -> None:
        self._clock = cv.time_from_ros(msg.get("clock") if isinstance(msg, dict) else None, "clock")

    def _wait_ready(self) -> None:
        cfg = self.cfg
        clients = [c for r in (*self.arms.values(), *self.grippers.values()) for c in r._clients.values()]
        if clients:
            self._check_bridge(clients)
        if cfg.protocol == "ros2" and clients:
            self._check_ros2_servers(clients)
        deadline = time.monotonic() + cfg.server_timeout_s
        for c in clients:
            if not c.status_seen.wait(max(0.0, deadline - time.monotonic())):
                silent = [f"{x.ns} ({x.action})" for x in clients if not x.status_seen.is_set()]
                raise HardwareConnectionError(
                    f"no status from action server(s) {', '.join(silent)} at {cfg.url} within {cfg.server_timeout_s:g} s: "
                    "is the controller running, or remove the action from the robot file")
        deadline = time.monotonic() + cfg.topic_timeout_s
        while True:
            self.poll()
            seen = self._seen_topics
            missing = [t for t in self._handlers if t not in seen]
            if not missing:
                return
            if time.monotonic() > deadline:
                raise HardwareConnectionError(f"no message on {', '.join(missing)} at {cfg.url} within "
                                              f"{cfg.topic_timeout_s:g} s")
            time.sleep(0.01)

    def _rosapi(self, service: str, srv_type: str, args: Optional[dict] = None) -> Optional[dict]:
        """A rosapi service's answer, or None when rosapi does not answer (logged: not an error, the
        bridge may run without rosapi or with an older one)."""
        try:
            resp = self._conn.call_service(service, srv_type, self.cfg.service_timeout_s, args)
            return dict(resp)
        except Exception as e:  # noqa: BLE001 - no rosapi, an old rosapi, a refused call
            LOG.info("%s did not answer (%s: %s); not checked at connect", service, type(e).__name__, e)
            return None

    def _check_bridge(self, clients: list) -> None:
        """Refuse, at connect, a bridge of the other ROS version and action types that differ from the
        servers': with them a real rosbridge only logs the problem and the goals hang.

        - ``/rosapi/get_ros_version`` (rosapi >= 0.11 / ROS 2): ``protocol: ros2`` needs version 2
          (ROS 1 rosbridge has no ``send_action_goal``), ``protocol: ros1`` version 1 (ROS 2 has
          no actionlib topics);
        - ``/rosapi/topic_type`` of each action's ROS 1 ``<ns>/goal`` and ``<ns>/result`` (or ROS 2
          ``<ns>/_action/feedback``) must be the type the robot file gives; an empty answer (no
          such topic yet) is left to the server check.

        Raises:
            HardwareConnectionError: naming each mismatch and the fix.
        """
        cfg = self.cfg
        ver = self._rosapi("/rosapi/get_ros_version", "rosapi/GetROSVersion")
        if ver is not None:
            try:
                version = int(ver.get("version"))
            except (TypeError, ValueError):
                version = None
            want = 2 if cfg.protocol == "ros2" else 1
            if version in (1, 2) and version != want:
                raise HardwareConnectionError(
                    f"the robot file {cfg.file} says protocol: {cfg.protocol}, but rosbridge at {cfg.url} runs ROS "
                    f"{version} ({ver.get('distro', '?')}): set protocol: ros{version}"
                    + (" (a ROS 1 rosbridge has no send_action_goal: ROS 2 goals would stay PENDING)" if version == 1 else ""))
        problems: list[str] = []
        for c in clients:
            if c.ros2:
                expect = {c.ns + "/_action/feedback": c.type + "_FeedbackMessage"}
            else:
                stem = c.type[: -len("Action")]
                expect = {c.ns + "/goal": stem + "ActionGoal", c.ns + "/result": stem + "ActionResult"}
            for topic, wanted in expect.items():
                resp = self._rosapi("/rosapi/topic_type", "rosapi/TopicType", {"topic": topic})
                if resp is None:
                    return  # no rosapi: nothing more to ask
                actual = str(resp.get("type") or "")
                if actual and actual != wanted:
                    server_type = (actual[: -len("_FeedbackMessage")] if c.ros2 else
                                   actual[: -len("ActionGoal")] + "Action" if actual.endswith("ActionGoal") else
                                   actual[: -len("ActionResult")] + "Action" if actual.endswith("ActionResult") else actual)
                    problems.append(f"{c.ns} ({c.action}): the server's {topic} has type {actual}, the robot file "
                                    f"gives type {c.type}; set type: {server_type}")
                    break
        if problems:
            raise HardwareConnectionError(
                f"action types at {cfg.url} differ from the robot file {cfg.file} (rosbridge would only log it and the "
                "goals would never finish):\n  " + "\n  ".join(problems))

    def _check_ros2_servers(self, clients: list) -> None:
        """ROS 2: the action servers rosapi lists (``/rosapi/action_servers``) must include ours."""
        cfg = self.cfg
        try:
            resp = self._conn.call_service("/rosapi/action_servers", "rosapi_msgs/srv/GetActionServers",
                                           cfg.server_timeout_s)
            listed = set(resp["action_servers"])
        except Exception as e:  # no rosapi (or an old one): the goals themselves will tell
            self._event(f"cannot list the ROS 2 action servers through /rosapi/action_servers "
                        f"({type(e).__name__}: {e}); not checked at connect")
            return
        missing = [f"{c.ns} ({c.action})" for c in clients if c.ns not in listed]
        if missing:
            raise HardwareConnectionError(
                f"no ROS 2 action server {', '.join(missing)} at {cfg.url} (rosapi lists {sorted(listed)}): "
                "is the controller running, or remove the action from the robot file")

    # ---- event pump (tree thread) -----------------------------------------------------------------
    _seen_topics: set

    def poll(self) -> None:
        """Apply what arrived from the robot to goal handles and state. Called by :meth:`advance`."""
        if not hasattr(self, "_seen_topics"):
            self._seen_topics = set()
        q = self._conn.events
        while q:
            kind, a, msg = q.popleft()
            if kind == "topic":
                for h in self._handlers.get(a, ()):
                    try:
                        h(msg)
                        self._seen_topics.add(a)
                    except (ValueError, TypeError, AttributeError) as e:
                        self._event(f"malformed message on {a}: {e}")
            elif kind == "status":
                self._on_status(a, msg)
            elif kind == "feedback":
                self._on_feedback(a, msg)
            elif kind == "result":
                self._on_result(a, msg)
            elif kind == "r2_feedback":
                self._on_ros2_feedback(a, msg)
            elif kind == "r2_result":
                self._on_ros2_result(a, msg)
            elif kind == "lost":
                self._on_lost()
            elif kind == "bridge_status":
                self._on_bridge_status(msg)
        if self._planning is not None:
            self._planning.poll()
        now = time.monotonic()
        for rg in list(self._goals.values()):
            h = rg.handle
            if h.done:
                self._goals.pop(rg.goal_id, None)
            elif rg.client.ros2:
                continue  # no status stream in ROS 2 rosbridge actions: the result or a lost connection ends it
            elif rg.terminal_at is not None and now - rg.terminal_at > self.cfg.result_timeout_s:
                self._goals.pop(rg.goal_id, None)
                code = rg.terminal_seen[0] if rg.terminal_seen else GoalStatus.SUCCEEDED
                h.set_aborted(None, f"{rg.client.ns} reports the goal {GoalStatus(code).name} but its result did not "
                                    f"arrive within {self.cfg.result_timeout_s:g} s: the server's action type probably "
                                    f"differs from the robot file's {rg.client.type} (rosbridge then cannot deliver "
                                    f"results or feedback); check 'rostopic type {rg.client.ns}/result'")
            elif not rg.acked and h.status == GoalStatus.PENDING and now - rg.sent_at > self.cfg.ack_timeout_s:
                self._goals.pop(rg.goal_id, None)
                self._send_cancel(rg)
                h.set_lost(f"{rg.client.ns} did not acknowledge the goal within {self.cfg.ack_timeout_s:g} s: its "
                           f"status list never showed it (is the server busy or restarting, is {rg.client.type} its "
                           "goal type, does the bridge run ROS 1?)")
            elif now - rg.last_status_at > self.cfg.status_timeout_s:
                self._goals.pop(rg.goal_id, None)
                self._send_cancel(rg)
                h.set_aborted(None, f"{rg.client.ns} published no status for {self.cfg.status_timeout_s:g} s "
                                    "(server gone?)")

    def _send_cancel(self, rg: _RemoteGoal) -> None:
        try:
            rg.client.publish_cancel(rg.goal_id)
        except BackendError:
            pass

    def _on_ros2_feedback(self, client: _ActionClient, payload: Any) -> None:
        box, fb = payload
        self._deliver_feedback(client, self._goals.get(box.get("id", "")), dict(fb))

    def _on_ros2_result(self, client: _ActionClient, payload: Any) -> None:
        box, res, ok = payload
        rg = self._goals.get(box.get("id", ""))
        if rg is None:
            return
        try:
            status = res["status"]
            code = int(getattr(status, "value", status))
            values = res.get("values")
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            self._fail_malformed(rg, "result", e)
            return
        if not ok:
            text = values if isinstance(values, str) else json.dumps(values, default=str)
            self._finish(rg, GoalStatus.REJECTED if code == 0 else _ROS2_STATUS.get(code, GoalStatus.ABORTED),
                         None, text or f"{client.ns} refused the goal")
            return
        ours = _ROS2_STATUS.get(code)
        if ours is None:
            self._fail_malformed(rg, "result", ValueError(f"non-terminal action_msgs/GoalStatus {code}"))
            return
        try:
            result = client.result_from_ros(dict(values or {}), rg.handle) \
                if values or ours == GoalStatus.SUCCEEDED else None
        except _ServerFailure as e:
            self._goals.pop(rg.goal_id, None)
            rg.handle.set_aborted(None, str(e))
            return
        except (ValueError, TypeError, KeyError) as e:
            self._fail_malformed(rg, "result", e)
            return
        self._finish(rg, int(ours), result, "")

    def _on_status(self, client: _ActionClient, msg: Any) -> None:
        now = time.monotonic()
        lst = msg.get("status_list") if isinstance(msg, dict) else None
        if not isinstance(lst, list):
            self._event(f"malformed status on {client.ns}/status: no status_list")
            return
        for rg in self._goals.values():
            if rg.client is client:
                rg.last_status_at = now
        for st in lst:
            try:
                gid = st["goal_id"]["id"]
                code = int(st["status"])
            except (KeyError, TypeError, ValueError):
                self._event(f"malformed status entry on {client.ns}/status: {st!r}")
                continue
            rg = self._goals.get(gid)
            if rg is None:
                continue
            if code == GoalStatus.ACTIVE or code == GoalStatus.PREEMPTING:
                rg.acked = True
                rg.handle.set_active()
            elif code == GoalStatus.PENDING:
                rg.acked = True  # queued on the server: acknowledged, the ack timer stops
            elif code in (GoalStatus.REJECTED, GoalStatus.RECALLED, GoalStatus.LOST) and rg.terminal_seen is None:
                rg.terminal_seen = (code, str(st.get("text", "")))
                # these finish without doing anything; a result may follow, the status is enough
                self._finish(rg, code, None, str(st.get("text", "")))
            elif code in (GoalStatus.SUCCEEDED, GoalStatus.ABORTED, GoalStatus.PREEMPTED) and rg.terminal_at is None:
                rg.acked = True
                rg.terminal_seen = (code, str(st.get("text", "")))
                rg.terminal_at = now  # the result must follow within timeouts.result_s (see poll)

    def _on_feedback(self, client: _ActionClient, msg: Any) -> None:
        try:
            gid = msg["status"]["goal_id"]["id"]
        except (KeyError, TypeError):
            self._event(f"malformed feedback on {client.ns}/feedback (no status.goal_id.id)")
            return
        self._deliver_feedback(client, self._goals.get(gid), msg.get("feedback"))

    def _deliver_feedback(self, client: _ActionClient, rg: Any, raw: Any) -> None:
        """Feedback (ROS 1 or ROS 2) for a goal of ours: the goal is acknowledged and active."""
        if rg is None:
            return
        try:
            fb = client.feedback_from_ros(raw)
        except (ValueError, TypeError, KeyError) as e:
            self._fail_malformed(rg, "feedback", e)
            return
        rg.acked = True
        rg.handle.set_active()
        rg.handle.publish_feedback(fb)

    def _on_result(self, client: _ActionClient, msg: Any) -> None:
        try:
            status = msg["status"]
            gid = status["goal_id"]["id"]
        except (KeyError, TypeError):
            self._event(f"malformed result on {client.ns}/result (no status.goal_id.id)")
            return
        rg = self._goals.get(gid)
        if rg is None:
            return
        try:
            code = int(status["status"])
            text = str(status.get("text", "") or "")
            raw = msg.get("result")
            result = client.result_from_ros(raw, rg.handle) if raw not in (None, {}) or code == GoalStatus.SUCCEEDED else None
        except _ServerFailure as e:
            self._goals.pop(gid, None)
            rg.handle.set_aborted(None, str(e))
            return
        except (ValueError, TypeError, KeyError) as e:
            self._fail_malformed(rg, "result", e)
            return
        self._finish(rg, code, result, text)

    def _finish(self, rg: _RemoteGoal, code: int, result: Any, text: str) -> None:
        self._goals.pop(rg.goal_id, None)
        h = rg.handle
        if code == GoalStatus.SUCCEEDED:
            h.set_succeeded(result, text)
        elif code == GoalStatus.ABORTED:
            h.set_aborted(result, text or f"{rg.client.ns} aborted the goal")
        elif code == GoalStatus.PREEMPTED:
            h.set_preempted(result, text or "preempted")
        elif code == GoalStatus.REJECTED:
            h.set_rejected(text or f"{rg.client.ns} rejected the goal")
        elif code == GoalStatus.RECALLED:
            h.set_recalled(text or "recalled")
        elif code == GoalStatus.LOST:
            h.set_lost(text or "lost by the server")
        else:
            h.set_aborted(result, f"{rg.client.ns} sent a result with non-terminal status {code}")

    def _fail_malformed(self, rg: _RemoteGoal, what: str, e: Exception) -> None:
        self._goals.pop(rg.goal_id, None)
        self._send_cancel(rg)
        text = f"malformed {what} message from {rg.client.ns}: {e}"
        self._event(text)
        rg.handle.set_aborted(None, text)

    def _on_bridge_status(self, msg: Any) -> None:
        """A rosbridge ``status`` message (an error in what we sent): an event, and a ROS 2 goal that
        the bridge cannot take (``Unknown operation: send_action_goal`` on ROS 1) fails with it."""
        level = str(msg.get("level", "")) if isinstance(msg, dict) else ""
        text = str(msg.get("msg", "")) if isinstance(msg, dict) else str(msg)
        self._event(f"rosbridge {level or 'status'}: {text}")
        if level == "error" and ("send_action_goal" in text or "cancel_action_goal" in text):
            for rg in list(self._goals.values()):
                if rg.client.ros2 and not rg.handle.done:
                    self._goals.pop(rg.goal_id, None)
                    rg.handle.set_rejected(f"rosbridge at {self.cfg.url} refused the goal ({text}): "
                                           "a ROS 1 bridge has no ROS 2 actions; set protocol: ros1")

    def _on_lost(self) -> None:
        self._lost_applied = True
        text = f"connection to rosbridge at {self.cfg.url} lost"
        self._event(text)
        for rg in list(self._goals.values()):
            if not rg.handle.done:
                self._lost_goals.append((rg.client, rg.goal_id))
            rg.handle.set_aborted(None, text)
        self._goals.clear()

    def _cancel_after_loss(self) -> str:
        """After a lost connection: reconnect once (``connect_timeout_s``, at most 2 s) and send the
        cancel of every goal that was still running, since rosbridge does not cancel a disconnected
        client's goals (ROS 1 actionlib goals are cancelled by id on ``<ns>/cancel``; a ROS 2 goal
        belongs to the lost session and cannot be). Returns the sentence for the run's verdict."""
        lost, self._lost_goals = self._lost_goals, []
        if not lost:
            return ""
        names = ", ".join(sorted({c.ns for c, _ in lost}))
        ros1 = [(c, gid) for c, gid in lost if not c.ros2]
        if not ros1:
            return f"; the goal(s) on {names} may still run on the robot (a ROS 2 goal cannot be cancelled from a new session)"
        try:
            conn = _Connection(self.cfg, connect_timeout_s=min(self.cfg.connect_timeout_s, 2.0))
        except HardwareConnectionError:
            return f"; could not reconnect to cancel them: the goal(s) on {names} may still run on the robot"
        try:
            for c, gid in ros1:
                conn.publish(c.ns + "/cancel", "actionlib_msgs/GoalID", {"stamp": {"secs": 0, "nsecs": 0}, "id": gid})
                self.cancel_log.append((c.action, gid))
            time.sleep(0.2)  # let the cancels leave before the close frame
        except BackendError as e:
            return f"; reconnected but could not send the cancels ({e}): the goal(s) on {names} may still run"
        finally:
            conn.close()
        return f"; reconnected and sent the cancel of {len(ros1)} goal(s) still running on {names}"

    def _event(self, text: str) -> None:
        LOG.warning(text)
        self._events.append({"time_s": round(self.now(), 6), "source": "hardware", "text": text})

    def drain_events(self) -> list[dict[str, Any]]:
        """Events since the last call (connection loss, malformed messages) for the run log."""
        out, self._events = self._events, []
        return out

    # ---- Backend protocol ---------------------------------------------------------------------------
    @property
    def connected(self) -> bool:
        return not self._conn.lost and not self._conn.closed

    def now(self) -> float:
        """Seconds since the backend connected: wall clock, or the ``clock`` topic when configured."""
        if self.cfg.clock != "wall" and self._clock is not None:
            return self._clock - (self._clock0 if self._clock0 is not None else self._clock)
        return time.monotonic() - self._wall0

    def advance(self, dt: float) -> None:
        """Wait until ``dt`` seconds after the previous tick (keeps the tick rate), then :meth:`poll`.

        Raises:
            ConnectionLost: the connection was lost, the running goals were aborted with that
                reason and the tree has been ticked once since (the runner ends the run as FAILURE).
            BackendError: the backend is closed.
            ValueError: negative ``dt``.
        """
        if dt < 0:
            raise ValueError(f"dt must be >= 0 s, got {dt}")
        if self._conn.closed:
            raise BackendError("the hardware backend is closed")
        if self._lost_ticked:
            raise ConnectionLost(f"connection to rosbridge at {self.cfg.url} lost" + self._cancel_after_loss())
        self._next_tick = max(self._next_tick + dt, time.monotonic() - dt)
        if self.cfg.clock != "wall" and self._clock is not None:
            target = self.now() + dt
            wall_deadline = time.monotonic() + 10 * dt + 1.0
            while self.now() < target and time.monotonic() < wall_deadline and not self._conn.lost:
                time.sleep(0.001)
                self.poll()
        else:
            delay = self._next_tick - time.monotonic()
            if delay > 0:
                time.sleep(delay)
        self.poll()
        if self._lost_applied:
            self._lost_ticked = True

    def metrics(self) -> dict[str, Any]:
        """Run metrics: ``rosbridge_url``, the robot's own metrics from ``metrics_service`` (a
        std_srvs/Trigger whose ``message`` is a JSON object) when configured and reachable, and the
        client's motion planning (``planning_time_s``, ``planned_motions``) when it plans."""
        out: dict[str, Any] = {"rosbridge_url": self.cfg.url, "wall_time_s": round(self.now(), 3)}
        if self.cfg.metrics_service and not self._conn.closed:
            try:
                resp = self._conn.call_service(self.cfg.metrics_service, "std_srvs/Trigger", self.cfg.service_timeout_s)
                data = json.loads(resp["message"])
                if isinstance(data, dict):
                    out.update(data)
            except Exception as e:  # metrics must not hide the run's outcome
                out["metrics_error"] = f"{self.cfg.metrics_service}: {type(e).__name__}: {e}"
        if self._planning is not None:  # the client's planning (a stand-in's own would be the server's)
            out.update(self._planning.metrics())
        return out

    def telemetry(self) -> dict[str, dict[str, Any]]:
        """``arm/<name>`` (tcp_position, joint_positions), ``gripper/<name>`` (gap_m), ``object/<name>`` (pose)."""
        out: dict[str, dict[str, Any]] = {}
        for name, a in self.arms.items():
            entry: dict[str, Any] = {}
            if a._tcp is not None:
                entry["tcp_position"] = [round(float(v), 6) for v in a._tcp[:3, 3]]
            try:
                entry["joint_positions"] = [round(v, 6) for v in a.joint_positions()]
            except BackendError:
                pass
            out[f"arm/{name}"] = entry
        for name, g in self.grippers.items():
            try:
                out[f"gripper/{name}"] = {"gap_m": round(g.gap_m(), 6)}
            except BackendError:
                pass
        from ..geometry.poses import pose_to_spec

        for name, T in self.world._poses.items():
            out[f"object/{name}"] = {"pose": pose_to_spec(T)}
        return out

    def close(self) -> None:
        """Cancel running goals, then stop sending for good and disconnect. Idempotent."""
        if self._conn.closed:
            return
        for rg in list(self._goals.values()):
            if not rg.handle.done:
                self._send_cancel(rg)
                rg.handle.set_preempted(None, "the hardware backend was closed")
        self._goals.clear()
        if self._planning is not None:
            self._planning.close()
        self._conn.close()

    def __enter__(self) -> "HardwareBackend":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"HardwareBackend({self.cfg.url}, arms={list(self.arms)}, grippers={list(self.grippers)}"
                f"{', closed' if self._conn.closed else ', lost' if self._conn.lost else ''})")
