"""Action clients over rosbridge: ROS 1 actionlib on topics, ROS 2 actions on rosbridge's action ops.

ROS 1 actions are actionlib servers spoken over topics (``<ns>/goal``, ``<ns>/cancel``,
``<ns>/status``, ``<ns>/feedback``, ``<ns>/result``), exactly what ``roslibpy.ros1.actionlib``
does; we speak the same wire protocol on ``roslibpy.Topic`` ourselves because its
``ActionClient`` waits a hard-coded 3 s per server, one after the other, and finishes a goal only
once both a result and a status arrived. ROS 2 actions go through ``roslibpy.ActionClient``
(rosbridge v2 ``send_action_goal``...). Both only queue what arrives; the backend applies it to
the :class:`GoalHandle` objects on the tree's thread (:mod:`.goals`).
"""

from __future__ import annotations

import random
import threading
import time
from typing import Any, Callable, Optional

from ..backend import BackendError
from ..msgs.actions import GoalHandle, GoalStatus
from . import convert as cv
from .robotfile import ActionConfig

# the backend these clients serve is a HardwareBackend (.rosbridge), annotated ``Any``: this module sits
# below it and must not import it (no import circle)


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

    def __init__(self, backend: Any, backend_action: str, cfg: ActionConfig,
                 goal_to_ros: Callable[[Any], dict], feedback_from_ros: Callable[[Any], Any],
                 result_from_ros: Callable[[Any, GoalHandle], Any]):
        self.backend = backend
        self.conn = backend._conn
        self.action = backend_action
        self.ns = cfg.name
        self.type = self._ros_type(cfg.type)
        self.goal_to_ros = goal_to_ros
        self.feedback_from_ros = feedback_from_ros
        self.result_from_ros = result_from_ros
        self.status_seen = threading.Event()
        self.last_status_wall = 0.0
        self._open()

    @staticmethod
    def _ros_type(robot_file_type: str) -> str:
        """The action type on the wire (ROS 1: the robot file's ``pkg/NameAction``)."""
        return robot_file_type

    def _open(self) -> None:
        """Advertise ``<ns>/goal`` and ``<ns>/cancel``; subscribe to status, feedback and result."""
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

    _ros_type = staticmethod(ros2_action_type)

    def _open(self) -> None:
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


class _ServerFailure(Exception):
    """A result that says the goal failed although its status is SUCCEEDED (e.g. an FJT error code)."""
