"""Robot stand-in: the simulated robot served over the rosbridge v2 protocol (``ptm serve``).

A websocket server (the ``websockets`` package, asyncio, in its own thread) speaks the server side
of the rosbridge v2 ops a ROS 1 client needs: ``advertise``/``unadvertise`` (accepted),
``subscribe``/``unsubscribe``, ``publish`` (client -> server, and server -> client for
subscriptions) and ``call_service``/``service_response``. On top of those it runs ROS 1 actionlib
servers over topics, as ``roslibpy.ros1.actionlib`` (and our :mod:`.rosbridge` client) expect:
``<ns>/goal`` and ``<ns>/cancel`` in, ``<ns>/status`` (5 Hz and on every change, and at once to a
new subscriber), ``<ns>/feedback`` and ``<ns>/result`` out. The same actions are served as ROS 2
rosbridge actions too (``send_action_goal`` / ``cancel_action_goal`` in, ``action_feedback`` /
``action_result`` out, as ``roslibpy.ActionClient`` speaks them; reference §4.3), with
``/rosapi/action_servers`` listing them.

Names (robot ``i`` of the scene gets side ``r``, then ``l``, then ``robot<i>``):

==============================================  ==============================================  =====================
ROS name                                        type                                            sim action
==============================================  ==============================================  =====================
``/<s>_gripper_sensor_controller/gripper_action``  ``pr2_controllers_msgs/Pr2GripperCommandAction``   ``gripper_action``
``/<s>_gripper_sensor_controller/find_contact``    ``pr2_gripper_sensor_msgs/PR2GripperFindContactAction``  ``find_contact`` (and
                                                                                                force_servo, slip_servo,
                                                                                                grab, release,
                                                                                                event_detector alike)
``/<s>_arm_controller/follow_joint_trajectory``  ``control_msgs/FollowJointTrajectoryAction``    ``move_joints``
``/<s>_arm_controller/move_to_pose``             ``ptm_msgs/MoveToPoseAction``                   ``move_to_pose``
``/<s>_arm_controller/move_cartesian``           ``ptm_msgs/MoveCartesianAction``                ``move_cartesian``
``/joint_states``                                ``sensor_msgs/JointState``                      arm joints and
                                                                                                ``<s>_gripper_joint`` (gap, m)
``/<s>_arm_controller/tcp_pose``                 ``geometry_msgs/PoseStamped``                   TCP pose
``/objects/<name>/pose``                         ``geometry_msgs/PoseStamped``                   object poses
``/ptm/metrics`` (service)                       ``std_srvs/Trigger``                            ``SimBackend.metrics()`` as JSON
==============================================  ==============================================  =====================

It holds to the protocol as rosbridge_suite does, so it cannot hide client bugs: an unknown ``op``,
a missing required field, a ``publish`` to a topic nobody advertised, an ``advertise``/``subscribe``
whose type differs from the topic's (the client then hears nothing on it) get a ``status`` message
of level ``error`` (with the request's ``id``), except that with ``ros_version=1`` an unknown op
(``send_action_goal``...) is only logged, as the real ROS 1 rosbridge_suite does (the client hears
nothing; :attr:`RobotStandIn.report_unknown_ops` changes that); ``fragment`` messages are
reassembled; ``send_action_goal`` sends ``action_feedback`` only with ``feedback: true``; a ROS 2
goal whose ``action_type`` differs from the server's is never answered; ``/rosapi/topic_type``,
``/rosapi/service_type`` (with ``ros_version``: the ROS 1 or ROS 2 type of rosapi's own services)
and (with ``ros_version`` and :attr:`RobotStandIn.rosapi_version_service`)
``/rosapi/get_ros_version`` answer as rosapi does; a ROS 2 action's ``<ns>/_action/cancel_goal``
service (``action_msgs/srv/CancelGoal``) cancels its goals as ``rclcpp_action`` servers do.

Only the actions the sim resources offer are served (the gripper sensor actions appear when the
sim gripper has them). FollowJointTrajectory goals are followed point by point (positions,
velocities, times: the sim arm's ``follow_joint_trajectory``, cubic Hermite between the points), as
a robot's joint trajectory controller does; the client plans and times them (collision-checked).

The simulator runs in the server's own thread, at ``rate`` times real time (every sim call
happens on that thread: PyBullet is not thread-safe). Fault injection for tests: ``faults`` maps
``"reject"`` / ``"malformed"`` to action names whose goals are rejected / whose results are sent
malformed, and ``"sensor_loss"`` to gripper actions during whose goals the left fingertip array
goes to all zeros (0.5 s after the goal starts; the simulated controller aborts the goal, as the
robot's must).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import queue
import sys
import threading
import time
from typing import Any, Callable, Optional

import numpy as np

from ..msgs.actions import GoalHandle, GoalStatus
from ..msgs.motion import JointTrajectoryGoal, MotionFeedback, MoveJointsGoal
from . import convert as cv
from ..msgs.plain import jsonable as _jsonable
from .actions import ros2_action_type
from .connection import add_one_line_filter

STATUS_PERIOD_S = 0.2
KEEP_FINISHED_S = 2.0




#: every op of the rosbridge v2 protocol (ROSBRIDGE_PROTOCOL.md); the ROS 2 action ops only on ROS 2
_OPS_ROS1 = ("advertise", "unadvertise", "publish", "subscribe", "unsubscribe", "call_service", "advertise_service",
             "unadvertise_service", "service_response", "set_level", "set_status_level", "status", "fragment", "png",
             "auth")
_OPS_ROS2 = _OPS_ROS1 + ("advertise_action", "unadvertise_action", "send_action_goal", "cancel_action_goal",
                         "action_feedback", "action_result")
_LEVELS = ("none", "error", "warning", "info")
#: fragments of one message at most (and bytes once reassembled)
MAX_FRAGMENTS = 10_000
MAX_MESSAGE_BYTES = 64_000_000


class _Conn:
    def __init__(self, ws: Any, loop: asyncio.AbstractEventLoop):
        self.ws = ws
        self.loop = loop
        self.out: asyncio.Queue = asyncio.Queue()
        self.advertised: dict[str, str] = {}  # topic -> type this client advertised
        self.fragments: dict[str, dict[int, str]] = {}  # fragment id -> {num: data}
        self.fragment_totals: dict[str, int] = {}
        self.status_level = "error"


class _ServedGoal:
    def __init__(self, goal_id: dict, handle: Optional[GoalHandle]):
        self.goal_id = goal_id
        self.handle = handle
        self.status = GoalStatus.PENDING
        self.text = ""
        self.feedback: Any = None
        self.finished_at: Optional[float] = None


class _ActionServer:
    """One ROS 1 actionlib server over rosbridge topics, backed by a sim resource action."""

    def __init__(self, server: "RobotStandIn", ns: str, ros_type: str, resource: Any, action: str,
                 goal_from_ros: Callable[[Any], Any], feedback_to_ros: Callable[[Any], Any],
                 result_to_ros: Callable[[Any, str, int], Any]):
        self.server, self.ns, self.type, self.resource, self.action = server, ns, ros_type, resource, action
        self.goal_from_ros, self.feedback_to_ros, self.result_to_ros = goal_from_ros, feedback_to_ros, result_to_ros
        self.goals: dict[str, _ServedGoal] = {}
        self.goals2: dict[str, _ServedGoal] = {}  # ROS 2 (send_action_goal) goals by rosbridge id
        self.last_status_wall = 0.0

    def status_msg(self) -> dict:
        return {"header": {"seq": 0, "stamp": cv.time_to_ros(time.time()), "frame_id": ""},
                "status_list": [{"goal_id": g.goal_id, "status": int(g.status), "text": g.text}
                                for g in self.goals.values()]}

    def publish_status(self) -> None:
        self.last_status_wall = time.monotonic()
        self.server.publish(self.ns + "/status", self.status_msg())

    def _start(self, sg: "_ServedGoal", ros_goal: Any, finish: Any) -> None:
        """Start a served goal (ROS 1 or ROS 2): the injected faults (``reject``: refused;
        ``sensor_loss``: a fingertip array lost once it runs), the goal translated from ROS (refused
        when it does not translate), sent to the resource; ``finish``: how a refusal is reported."""
        if self.action in self.server.faults.get("reject", ()):
            finish(sg, GoalStatus.REJECTED, None, f"{self.ns} rejects every goal (fault injected by ptm serve)")
            return
        try:
            goal = self.goal_from_ros(ros_goal)
        except (ValueError, TypeError, KeyError) as e:
            finish(sg, GoalStatus.REJECTED, None, f"invalid goal: {e}")
            return
        sg.handle = self.resource.send_goal(self.action, goal)
        if self.action in self.server.faults.get("sensor_loss", ()):
            self.server.inject_sensor_loss(self.resource)
        self.update()

    def on_goal(self, msg: Any) -> None:
        try:
            goal_id = msg["goal_id"]
            gid = str(goal_id["id"])
            ros_goal = msg["goal"]
        except (KeyError, TypeError):
            self.server.log(f"malformed goal on {self.ns}/goal ignored")
            return
        self.server.log(f"goal {self.ns} {gid}")
        sg = _ServedGoal(goal_id, None)
        self.goals[gid] = sg
        self._start(sg, ros_goal, self._finish)

    # ---- ROS 2 actions over rosbridge v2 (send_action_goal / action_feedback / action_result) ----
    def on_goal2(self, conn: "_Conn", rid: str, args: Any, feedback: bool = False) -> None:
        self.server.log(f"goal {self.ns} {rid}")
        sg = _ServedGoal({"id": rid}, None)
        sg.conn = conn  # type: ignore[attr-defined]
        sg.accepted_wall = time.time()  # type: ignore[attr-defined]  # action_msgs/GoalInfo stamp
        sg.uuid = list(hashlib.md5(f"{self.ns}{rid}".encode()).digest())  # type: ignore[attr-defined]
        sg.send_feedback = feedback  # type: ignore[attr-defined]  # send_action_goal "feedback": false: none
        self.goals2[rid] = sg
        self._start(sg, args, self._finish2)

    def cancel_goal_service(self, args: Any) -> dict:
        """``<ns>/_action/cancel_goal`` (action_msgs/srv/CancelGoal) over the ROS 2 goals, with its
        policy: a zero goal id and a zero stamp cancel every goal, a zero id and a stamp every goal
        accepted at or before it (wall clock), an id that goal. Returns the response fields:
        ``return_code`` (0 none, 2 unknown goal id) and ``goals_canceling`` (``{goal_id: {uuid}, stamp}``)."""
        info = args.get("goal_info", {}) if isinstance(args, dict) else {}
        uuid = list((info.get("goal_id") or {}).get("uuid") or [0] * 16)
        stamp = info.get("stamp") or {}
        t = float(stamp.get("sec", 0)) + 1e-9 * float(stamp.get("nanosec", 0))
        canceling = []
        for sg in list(self.goals2.values()):
            if sg.handle is None or sg.handle.done:
                continue
            if any(uuid) and uuid != sg.uuid:  # type: ignore[attr-defined]
                continue
            if not any(uuid) and t > 0 and sg.accepted_wall > t:  # type: ignore[attr-defined]
                continue
            sg.handle.cancel()
            canceling.append({"goal_id": {"uuid": sg.uuid},  # type: ignore[attr-defined]
                              "stamp": {"sec": int(sg.accepted_wall), "nanosec": int(sg.accepted_wall % 1 * 1e9)}})  # type: ignore[attr-defined]
        self.server.log(f"cancel_goal {self.ns}: {len(canceling)} goal(s)")
        self.update()
        return {"return_code": 0 if canceling else 2, "goals_canceling": canceling}

    def on_cancel2(self, rid: str) -> None:
        sg = self.goals2.get(rid)
        if sg is not None and sg.handle is not None and not sg.handle.done:
            sg.handle.cancel()
        self.update()

    def _finish2(self, sg: _ServedGoal, status: GoalStatus, result: Any, text: str) -> None:
        """``action_result``: action_msgs/GoalStatus 4 SUCCEEDED, 5 CANCELED, 6 ABORTED with the result
        fields; a rejected goal is ``result: false`` with status 0 and the reason as ``values``."""
        self.goals2.pop(str(sg.goal_id["id"]), None)
        msg: dict[str, Any] = {"op": "action_result", "id": sg.goal_id["id"], "action": self.ns}
        if status == GoalStatus.REJECTED:
            msg.update(values=text, status=0, result=False)
        elif self.action in self.server.faults.get("malformed", ()):
            msg.update(values={"malformed": True}, status=4, result=True)
        else:
            code = {GoalStatus.SUCCEEDED: 4, GoalStatus.PREEMPTED: 5, GoalStatus.RECALLED: 5}.get(status, 6)
            msg.update(values=self.result_to_ros(result, text, int(status)), status=code, result=True)
        self.server._send(sg.conn, _jsonable(msg))  # type: ignore[attr-defined]

    def _update2(self) -> None:
        for sg in list(self.goals2.values()):
            h = sg.handle
            if h is None:
                continue
            if h.done:
                self._finish2(sg, h.status, h.result, h.text)
            elif h.feedback is not None and h.feedback is not sg.feedback and sg.send_feedback:  # type: ignore[attr-defined]
                sg.feedback = h.feedback
                self.server._send(sg.conn, _jsonable({  # type: ignore[attr-defined]
                    "op": "action_feedback", "id": sg.goal_id["id"], "action": self.ns,
                    "values": self.feedback_to_ros(h.feedback)}))

    def on_cancel(self, msg: Any) -> None:
        gid = msg.get("id", "") if isinstance(msg, dict) else ""
        for key, sg in self.goals.items():
            if (not gid or key == gid) and sg.handle is not None and not sg.handle.done:
                sg.handle.cancel()
        self.update()

    def _finish(self, sg: _ServedGoal, status: GoalStatus, result: Any, text: str) -> None:
        sg.status, sg.text = status, text
        sg.finished_at = time.monotonic()
        if self.action in self.server.faults.get("malformed", ()):
            res: Any = {"malformed": True}
        else:
            res = self.result_to_ros(result, text, int(status))
        self.publish_status()
        self.server.publish(self.ns + "/result", {
            "header": {"seq": 0, "stamp": cv.time_to_ros(time.time()), "frame_id": ""},
            "status": {"goal_id": sg.goal_id, "status": int(status), "text": text}, "result": res})

    def update(self) -> None:
        if self.goals2:
            self._update2()
        changed = False
        now = time.monotonic()
        for gid, sg in list(self.goals.items()):
            h = sg.handle
            if sg.finished_at is not None:
                if now - sg.finished_at > KEEP_FINISHED_S:
                    del self.goals[gid]
                    changed = True
                continue
            if h is None:
                continue
            if h.done:
                self._finish(sg, h.status, h.result, h.text)
                continue
            if h.status != sg.status:
                sg.status = h.status
                changed = True
            if h.feedback is not None and h.feedback is not sg.feedback:
                sg.feedback = h.feedback
                self.server.publish(self.ns + "/feedback", {
                    "header": {"seq": 0, "stamp": cv.time_to_ros(time.time()), "frame_id": ""},
                    "status": {"goal_id": sg.goal_id, "status": int(sg.status), "text": ""},
                    "feedback": self.feedback_to_ros(h.feedback)})
        if changed or now - self.last_status_wall > STATUS_PERIOD_S:
            self.publish_status()


class RobotStandIn:
    """The simulated robot behind a rosbridge v2 websocket.

    Args:
        backend: a :class:`~py_trees_manipulation.sim.SimBackend` (built on any thread; from
            :meth:`start` on it is used only by the server's sim thread).
        host, port: where to listen; port 0 picks a free one (see :attr:`port` after start).
        rate: sim seconds per wall second (1.0: real time).
        publish_hz: joint states, TCP and object poses per wall second.
        faults: ``{"reject": {action, ...}, "malformed": {action, ...}, "sensor_loss": {action, ...}}``
            (tests; see the module docstring).
        verbose: print served goals to stdout (``goal <ns> <id>``), flushed.
        ros_version: the ROS a real bridge would run: ``1`` (``send_action_goal`` is an unknown
            operation, as on rosbridge_suite for ROS 1), ``2``, or None (both protocols, and no
            ``/rosapi/get_ros_version``, like an older rosapi). ``/rosapi/get_ros_version`` answers
            ``{version, distro}`` when set.

    Attributes:
        report_unknown_ops: answer an unknown op with a ``status`` error (None: as the real bridge of
            ``ros_version`` does: ROS 1 only logs it).
        rosapi_version_service: offer ``/rosapi/get_ros_version`` when ``ros_version`` is set (False:
            an older rosapi without it, e.g. a ROS 1 rosbridge_suite before 0.11.14).
    """

    report_unknown_ops: Optional[bool] = None
    rosapi_version_service: bool = True

    def __init__(self, backend: Any, host: str = "127.0.0.1", port: int = 9090, rate: float = 1.0,
                 publish_hz: float = 30.0, faults: Optional[dict[str, set[str]]] = None, verbose: bool = False,
                 ros_version: Optional[int] = None):
        if rate <= 0:
            raise ValueError(f"rate must be > 0, got {rate}")
        if ros_version not in (None, 1, 2):
            raise ValueError(f"ros_version must be 1, 2 or None, got {ros_version!r}")
        self.ros_version = ros_version
        self.sim = backend
        if hasattr(backend, "clock_hold_wait_s"):
            # a line being checked by the sim's motion planning must not stall the server loop: keep
            # publishing status and state while sim time stands still
            backend.clock_hold_wait_s = 0.05
        self.host, self.port, self.rate, self.publish_hz = host, port, float(rate), float(publish_hz)
        self.faults = {k: set(v) for k, v in (faults or {}).items()}
        self.verbose = verbose
        self._subs: dict[str, set[_Conn]] = {}
        self._conns: set[_Conn] = set()
        self._lock = threading.Lock()
        self._inbox: "queue.Queue[tuple]" = queue.Queue()
        self._running = threading.Event()
        self._ready = threading.Event()
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._threads: list[threading.Thread] = []
        self._error: Optional[BaseException] = None
        self.servers: dict[str, _ActionServer] = {}
        self.topics: dict[str, str] = {}
        self._gap_joints: dict[str, str] = {}
        self._tcp_topics: dict[str, str] = {}
        self._build()

    # ---- names -------------------------------------------------------------------------------------
    def _build(self) -> None:
        sim = self.sim
        for i, name in enumerate(sim.arms):
            side = ("r", "l")[i] if i < 2 else f"robot{i}"
            arm = sim.arms[name]
            arm_ns = f"/{side}_arm_controller"
            vlim = np.asarray(arm.robot.velocity_limits, float)
            names = list(arm.joint_names)

            follows = "follow_joint_trajectory" in arm.actions

            def fjt_goal(msg: Any, arm: Any = arm, names: list = names, vlim: np.ndarray = vlim,
                         follows: bool = follows) -> Any:
                if follows:  # the whole trajectory, point by point, as a robot's controller does
                    return cv.joint_trajectory_goal_from_ros(msg, names)
                q1, T = cv.follow_joint_trajectory_from_ros(msg, names)
                q0 = arm.joint_positions()
                return MoveJointsGoal(positions=q1, velocity_scaling=cv.scaling_for_duration(q0, q1, vlim, T))

            def fjt_feedback(fb: Any, arm: Any = arm, names: list = names) -> dict:
                q = arm.joint_positions()
                goal = None
                for s in self.servers.values():
                    if s.resource is arm and s.action in ("move_joints", "follow_joint_trajectory"):
                        goal = next((g.handle.goal for g in s.goals.values() if g.handle is not None and not g.handle.done), None)
                desired = q
                if isinstance(goal, JointTrajectoryGoal):
                    desired = [float(v) for v in goal.positions[-1]]
                elif goal is not None:
                    desired = list(goal.positions)
                return cv.fjt_feedback_to_ros(names, q, desired)

            def fjt_result(result: Any, text: str, status: int) -> dict:
                return {"error_code": 0 if status == GoalStatus.SUCCEEDED else -5, "error_string": text}

            for action in arm.actions:
                if action == "move_joints":
                    self._add(f"{arm_ns}/follow_joint_trajectory", cv.DEFAULT_ACTION_TYPES[action], arm,
                              "follow_joint_trajectory" if follows else action, fjt_goal, fjt_feedback, fjt_result)
                elif action in ("move_to_pose", "move_cartesian"):
                    self._add(f"{arm_ns}/{action}", cv.DEFAULT_ACTION_TYPES[action], arm, action,
                              lambda m, a=action: cv.cartesian_goal_from_ros(a, m),
                              lambda fb: cv.motion_feedback_to_ros(fb) if isinstance(fb, MotionFeedback) else
                              {"pose": cv.pose_stamped_to_ros(np.eye(4)), "distance": 0.0, "progress": 0.0},
                              lambda r, text, st: cv.motion_result_to_ros(r, text))
            self._tcp_topics[name] = f"{arm_ns}/tcp_pose"
            self.topics[f"{arm_ns}/tcp_pose"] = "geometry_msgs/PoseStamped"
        for i, name in enumerate(sim.grippers):
            side = ("r", "l")[i] if i < 2 else f"robot{i}"
            g = sim.grippers[name]
            ns = f"/{side}_gripper_sensor_controller"
            for action in g.actions:
                if action in cv.GRIPPER_ACTIONS:
                    self._add(f"{ns}/{action}", cv.DEFAULT_ACTION_TYPES[action], g, action,
                              lambda m, a=action: cv.gripper_goal_from_ros(a, m),
                              lambda fb, a=action: cv.gripper_data_to_ros(a, fb),
                              lambda r, text, st, a=action: cv.gripper_data_to_ros(a, r))
            self._gap_joints[name] = f"{side}_gripper_joint"
        self.topics["/joint_states"] = "sensor_msgs/JointState"
        for obj in sim.world.object_names():
            self.topics[f"/objects/{obj}/pose"] = "geometry_msgs/PoseStamped"

    def _add(self, ns: str, ros_type: str, resource: Any, action: str, *fns: Callable) -> None:
        self.servers[ns] = _ActionServer(self, ns, ros_type, resource, action, *fns)

    def topic_type(self, topic: str) -> Optional[str]:
        """The type of a topic the stand-in's robot has (as ``rosapi/TopicType`` answers), or None:
        the action servers' ROS 1 topics (``<ns>/goal``... ``pkg/NameActionGoal``), their ROS 2
        feedback topic (``<ns>/_action/feedback``, ``pkg/action/Name_FeedbackMessage``) and the
        state topics."""
        if topic in self.topics:
            return self.topics[topic]
        base, _, leaf = topic.rpartition("/")
        srv = self.servers.get(base)
        if srv is not None:
            stem = srv.type[: -len("Action")] if srv.type.endswith("Action") else srv.type
            return {"goal": stem + "ActionGoal", "cancel": "actionlib_msgs/GoalID", "status": "actionlib_msgs/GoalStatusArray",
                    "feedback": stem + "ActionFeedback", "result": stem + "ActionResult"}.get(leaf)
        if topic.endswith("/_action/feedback") and topic[: -len("/_action/feedback")] in self.servers:
            return ros2_action_type(self.servers[topic[: -len("/_action/feedback")]].type) + "_FeedbackMessage"
        if topic.endswith("/_action/status") and topic[: -len("/_action/status")] in self.servers:
            return "action_msgs/msg/GoalStatusArray"
        return None

    # ---- outgoing ----------------------------------------------------------------------------------
    def inject_sensor_loss(self, gripper: Any, after_s: float = 0.5) -> None:
        """Make ``gripper``'s left fingertip array read all zeros from ``after_s`` sim seconds on
        (a ``tactile.faults`` dropout, jsk_robot#977), for the ``sensor_loss`` fault."""
        from ..scene.sections.tactile import SensorFault

        ext = self.sim.extensions.get("tactile")
        g = ext.grippers.get(getattr(gripper, "name", "")) if ext is not None else None
        if g is None:
            self.log(f"sensor_loss: {getattr(gripper, 'name', gripper)!r} has no simulated fingertip arrays")
            return
        g.faults.append(SensorFault(at_s=self.sim.now() + after_s, finger="left", kind="dropout"))
        self.log(f"sensor_loss: left fingertip of {gripper.name!r} reads 0 from {self.sim.now() + after_s:.3f} s")

    def log(self, text: str) -> None:
        if self.verbose:
            print(text, flush=True)

    def _send(self, conn: _Conn, msg: dict) -> None:
        text = json.dumps(msg)
        try:
            conn.loop.call_soon_threadsafe(conn.out.put_nowait, text)
        except RuntimeError:  # loop closed
            pass

    def publish(self, topic: str, msg: dict, only: Optional[_Conn] = None) -> None:
        with self._lock:
            conns = [only] if only is not None else list(self._subs.get(topic, ()))
        for c in conns:
            self._send(c, {"op": "publish", "topic": topic, "msg": msg})

    # ---- websocket side (asyncio thread) -----------------------------------------------------------
    def status(self, conn: _Conn, level: str, text: str, mid: Any = None) -> None:
        """Send a rosbridge ``status`` message (``{op: status, level, msg, id?}``) if the client's
        ``set_status_level`` lets it through (default: errors only), as rosbridge does."""
        if _LEVELS.index(level) > _LEVELS.index(conn.status_level) or conn.status_level == "none":
            return
        msg: dict[str, Any] = {"op": "status", "level": level, "msg": text}
        if mid is not None:
            msg["id"] = mid
        self.log(f"status {level}: {text}")
        self._send(conn, msg)

    def _decode(self, conn: _Conn, raw: Any, depth: int = 0) -> list[dict]:
        """The complete messages in one websocket frame (a ``fragment`` completes one, or none)."""
        try:
            msg = json.loads(raw)
        except (ValueError, TypeError) as e:
            self.status(conn, "error", f"malformed rosbridge message: not JSON ({e})")
            return []
        if not isinstance(msg, dict) or not isinstance(msg.get("op"), str):
            self.status(conn, "error", "malformed rosbridge message: expected a JSON object with a string 'op'")
            return []
        if msg["op"] != "fragment":
            return [msg]
        mid, data, num, total = msg.get("id"), msg.get("data"), msg.get("num"), msg.get("total")
        if depth > 0 or not isinstance(data, str) or isinstance(num, bool) or isinstance(total, bool) \
                or not isinstance(num, int) or not isinstance(total, int) or mid is None:
            self.status(conn, "error", "fragment: expected id, data (text), num and total (integers)", mid)
            return []
        key = str(mid)
        if not 0 < total <= MAX_FRAGMENTS or not 0 <= num < total or conn.fragment_totals.get(key, total) != total:
            conn.fragments.pop(key, None)
            conn.fragment_totals.pop(key, None)
            self.status(conn, "error", f"fragment {key}: num {num} of total {total} is out of range "
                                       f"(at most {MAX_FRAGMENTS} fragments, the same total in each)", mid)
            return []
        parts = conn.fragments.setdefault(key, {})
        conn.fragment_totals[key] = total
        parts[num] = data
        if sum(len(p) for p in parts.values()) > MAX_MESSAGE_BYTES:
            conn.fragments.pop(key, None)
            conn.fragment_totals.pop(key, None)
            self.status(conn, "error", f"fragment {key}: the message is larger than {MAX_MESSAGE_BYTES} bytes", mid)
            return []
        if len(parts) < total:
            return []
        whole = "".join(parts[i] for i in range(total))
        del conn.fragments[key], conn.fragment_totals[key]
        return self._decode(conn, whole, depth + 1)

    def _need(self, conn: _Conn, msg: dict, *keys: str) -> bool:
        for k in keys:
            if k not in msg:
                self.status(conn, "error", f"{msg['op']}: Expected a key '{k}' in message {json.dumps(msg)[:200]}",
                            msg.get("id"))
                return False
        return True

    def _dispatch(self, conn: _Conn, msg: dict) -> None:
        op = msg["op"]
        mid = msg.get("id")
        ops = _OPS_ROS1 if self.ros_version == 1 else _OPS_ROS2
        if op not in ops:
            text = f"Unknown operation: {op}.  Allowed operations: {list(ops)}"
            report = self.report_unknown_ops if self.report_unknown_ops is not None else self.ros_version != 1
            if report:
                self.status(conn, "error", text, mid)
            else:  # the real ROS 1 bridge: rosbridge_library's protocol.log, the client hears nothing
                self.log(f"[id: {mid}] {text}" if mid is not None else text)
            return
        if op == "advertise":
            if not self._need(conn, msg, "topic", "type"):
                return
            topic, typ = str(msg["topic"]), str(msg["type"])
            known = self.topic_type(topic)
            if known is not None and known != typ:
                self.status(conn, "error", f"advertise: Tried to register topic {topic} with type {typ} but it is "
                                           f"already established with type {known}", mid)
                return
            conn.advertised[topic] = typ
        elif op == "unadvertise":
            conn.advertised.pop(str(msg.get("topic")), None)
        elif op == "subscribe":
            if not self._need(conn, msg, "topic"):
                return
            topic = str(msg["topic"])
            known = self.topic_type(topic)
            typ = msg.get("type")
            if typ and known is not None and known != typ:
                self.status(conn, "error", f"subscribe: Tried to register topic {topic} with type {typ} but it is "
                                           f"already established with type {known}", mid)
                return
            with self._lock:
                self._subs.setdefault(topic, set()).add(conn)
            self._inbox.put(("subscribed", conn, topic, None))
        elif op == "unsubscribe":
            with self._lock:
                self._subs.get(str(msg.get("topic")), set()).discard(conn)
        elif op == "publish":
            if not self._need(conn, msg, "topic", "msg"):
                return
            topic = str(msg["topic"])
            if topic not in conn.advertised and self.topic_type(topic) is None:
                self.status(conn, "error", f"publish: Cannot infer topic type for topic {topic} as it is not yet "
                                           "advertised", mid)
                return
            self._inbox.put((op, conn, topic, msg))
        elif op == "call_service":
            if self._need(conn, msg, "service"):
                self._inbox.put((op, conn, msg["service"], msg))
        elif op == "send_action_goal":
            if self._need(conn, msg, "action", "action_type"):
                self._inbox.put((op, conn, msg["action"], msg))
        elif op == "cancel_action_goal":
            if self._need(conn, msg, "action", "id"):
                self._inbox.put((op, conn, msg["action"], msg))
        elif op == "set_status_level":
            level = msg.get("level")
            if level not in _LEVELS:
                self.status(conn, "error", f"set_status_level: level must be one of {list(_LEVELS)}, got {level!r}", mid)
                return
            conn.status_level = level
        else:  # a valid op the stand-in has no use for (it serves no client services or actions)
            self.log(f"ignored op {op}")

    def drop_clients(self) -> int:
        """Close every client's websocket from the server side, as a network failure would (the
        served goals keep running: rosbridge does not cancel a disconnected client's goals).
        Returns how many were closed."""
        with self._lock:
            conns = list(self._conns)
        for c in conns:
            asyncio.run_coroutine_threadsafe(c.ws.close(), c.loop)
        return len(conns)

    async def _handler(self, ws: Any) -> None:
        conn = _Conn(ws, asyncio.get_running_loop())
        with self._lock:
            self._conns.add(conn)

        async def writer() -> None:
            while True:
                text = await conn.out.get()
                await ws.send(text)
        wtask = asyncio.create_task(writer())
        try:
            async for raw in ws:
                for msg in self._decode(conn, raw):
                    self._dispatch(conn, msg)
        except Exception as e:  # the client broke the connection: one line, not a traceback
            self.log(f"connection closed: {type(e).__name__}: {e}")
        finally:
            with self._lock:
                for s in self._subs.values():
                    s.discard(conn)
                self._conns.discard(conn)
            wtask.cancel()

    def _serve_ws(self) -> None:
        from websockets.asyncio.server import serve

        async def main() -> None:
            self._loop = asyncio.get_running_loop()
            add_one_line_filter("py_trees_manipulation.hardware.serve")  # a client's bad frame: one line
            logger = logging.getLogger("py_trees_manipulation.hardware.serve")
            async with serve(self._handler, self.host, self.port, max_size=MAX_MESSAGE_BYTES, logger=logger) as server:
                self.port = server.sockets[0].getsockname()[1] if self.port == 0 else self.port
                self._ready.set()
                while self._running.is_set():
                    await asyncio.sleep(0.05)
        try:
            asyncio.run(main())
        except BaseException as e:  # e.g. the port is taken
            self._error = e
            self._ready.set()

    # ---- sim side (sim thread) ---------------------------------------------------------------------
    def _handle_inbox(self) -> None:
        while True:
            try:
                kind, conn, name, msg = self._inbox.get_nowait()
            except queue.Empty:
                return
            if kind == "subscribed":
                if name in self.servers or (isinstance(name, str) and name.endswith("/status") and name[:-7] in self.servers):
                    srv = self.servers.get(name[:-7])
                    if srv is not None:
                        self.publish(name, srv.status_msg(), only=conn)
            elif kind == "publish":
                topic = str(name)
                base, _, leaf = topic.rpartition("/")
                srv = self.servers.get(base)
                if srv is not None and leaf == "goal":
                    srv.on_goal(msg.get("msg"))
                elif srv is not None and leaf == "cancel":
                    srv.on_cancel(msg.get("msg"))
            elif kind == "call_service":
                self._call_service(conn, str(name), msg)
            elif kind in ("send_action_goal", "cancel_action_goal"):
                srv = self.servers.get(str(name))
                if srv is None:
                    if kind == "send_action_goal":
                        self._send(conn, {"op": "action_result", "id": msg.get("id"), "action": name,
                                          "values": f"no action server {name}", "status": 0, "result": False})
                elif kind == "send_action_goal":
                    if str(msg.get("action_type")) != ros2_action_type(srv.type):
                        # rosbridge creates a client of the given type, which never matches the server: the goal
                        # is never answered (the connect-time check of the hardware backend prevents this)
                        self.log(f"goal {name} of type {msg.get('action_type')} ignored: the server's type is "
                                 f"{ros2_action_type(srv.type)}")
                        continue
                    srv.on_goal2(conn, str(msg.get("id")), msg.get("args"), bool(msg.get("feedback", False)))
                else:
                    srv.on_cancel2(str(msg.get("id")))

    def _call_service(self, conn: _Conn, service: str, msg: dict) -> None:
        reply = {"op": "service_response", "service": service, "id": msg.get("id")}
        if service == "/ptm/metrics":
            metrics = _jsonable(self.sim.metrics())
            reply.update(values={"success": True, "message": json.dumps(metrics)}, result=True)
        elif service == "/rosapi/action_servers":  # rosapi_msgs/srv/GetActionServers (ROS 2 rosapi)
            reply.update(values={"action_servers": sorted(self.servers)}, result=True)
        elif service == "/rosapi/topic_type":  # rosapi/TopicType: "" for a topic nobody has
            args = msg.get("args") if isinstance(msg.get("args"), dict) else {}
            reply.update(values={"type": self.topic_type(str(args.get("topic", ""))) or ""}, result=True)
        elif service == "/rosapi/get_ros_version" and self.ros_version is not None and self.rosapi_version_service:
            reply.update(values={"version": self.ros_version, "distro": "noetic" if self.ros_version == 1 else "jazzy"},
                         result=True)  # rosapi/GetROSVersion
        elif service == "/rosapi/service_type" and self.ros_version is not None:  # rosapi/ServiceType
            args = msg.get("args") if isinstance(msg.get("args"), dict) else {}
            name = str(args.get("service", ""))
            if name.startswith("/rosapi/") and name != "/rosapi/":
                stem = "".join(w.capitalize() for w in name[len("/rosapi/"):].split("_"))
                typ = f"rosapi/{stem}" if self.ros_version == 1 else f"rosapi_msgs/srv/{stem}"
            else:
                typ = ""
            reply.update(values={"type": typ}, result=True)
        elif (service.endswith("/_action/cancel_goal") and self.ros_version != 1
              and service[: -len("/_action/cancel_goal")] in self.servers):  # action_msgs/srv/CancelGoal
            srv = self.servers[service[: -len("/_action/cancel_goal")]]
            reply.update(values=srv.cancel_goal_service(msg.get("args")), result=True)
        else:
            reply.update(values=f"no service {service}", result=False)
        self._send(conn, reply)

    def _publish_state(self) -> None:
        sim = self.sim
        t = sim.now()
        names: list[str] = []
        pos: list[float] = []
        for name, arm in sim.arms.items():
            names += list(arm.joint_names)
            pos += list(arm.joint_positions())
            self.publish(self._tcp_topics[name], cv.pose_stamped_to_ros(arm.tcp_pose(), "world", t))
        for name, g in sim.grippers.items():
            names.append(self._gap_joints[name])
            pos.append(g.gap_m())
        self.publish("/joint_states", cv.joint_state_to_ros(names, pos, t))
        for obj in sim.world.object_names():
            self.publish(f"/objects/{obj}/pose", cv.pose_stamped_to_ros(sim.world.object_pose(obj), "world", t))

    def _sim_loop(self) -> None:
        step = 0.005
        wall0 = time.monotonic()
        sim_t0 = self.sim.now()
        last_pub = 0.0
        try:
            while self._running.is_set():
                self._handle_inbox()
                self.sim.advance(step)
                for srv in self.servers.values():
                    srv.update()
                now = time.monotonic()
                if now - last_pub >= 1.0 / self.publish_hz:
                    last_pub = now
                    self._publish_state()
                lag = wall0 + (self.sim.now() - sim_t0) / self.rate - time.monotonic()
                if lag > 0:
                    time.sleep(lag)
        except BaseException as e:
            self._error = e
            print(f"ptm serve: the simulator stopped: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
            self._running.clear()

    # ---- lifetime ----------------------------------------------------------------------------------
    def start(self, timeout_s: float = 10.0) -> "RobotStandIn":
        """Listen and start the sim thread. Raises OSError when the port cannot be bound."""
        self._running.set()
        t = threading.Thread(target=self._serve_ws, name="ptm-serve-ws", daemon=True)
        t.start()
        self._threads.append(t)
        if not self._ready.wait(timeout_s) or self._error is not None:
            self._running.clear()
            err = self._error
            raise OSError(f"cannot listen on {self.host}:{self.port}: {err}") from None
        s = threading.Thread(target=self._sim_loop, name="ptm-serve-sim", daemon=True)
        s.start()
        self._threads.append(s)
        return self

    @property
    def url(self) -> str:
        return f"ws://{self.host}:{self.port}"

    def wait(self) -> None:
        """Block until stopped (Ctrl-C) or the sim fails."""
        while self._running.is_set():
            time.sleep(0.2)

    def stop(self) -> None:
        self._running.clear()
        for t in self._threads:
            t.join(timeout=5)
        self.sim.close()

