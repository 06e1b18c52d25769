"""The hardware backend: a ROS robot driven over rosbridge (v2 protocol) with ``roslibpy``.

Actions are ROS 1 actionlib servers spoken over topics or ROS 2 actions over rosbridge's action
ops (:mod:`.actions`); names and types come from the robot file (:mod:`.robotfile`); defaults
follow the PR2 (``/r_gripper_sensor_controller/find_contact``,
``pr2_gripper_sensor_msgs/PR2GripperFindContactAction``...). The connection is :mod:`.connection`,
the arms, grippers and object poses :mod:`.resources`, what arrives for the goals :mod:`.goals`.

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

import json
import time
from typing import Any, Callable, Optional

from .. import Closing
from ..backend import BackendError
from . import convert as cv
from .actions import _ActionClient, _RemoteGoal, _Ros2ActionClient
from .connection import LOG, ConnectionLost, HardwareConnectionError, _Connection
from .goals import GoalEvents
from .resources import HardwareArm, HardwareGripper, HardwareWorld
from .robotfile import RobotConfig

__all__ = ["HardwareBackend", "HardwareConnectionError", "ConnectionLost"]


class HardwareBackend(GoalEvents, Closing):
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

        - the bridge's ROS version: ``protocol: ros2`` needs version 2 (a ROS 1 rosbridge has no
          ``send_action_goal`` and only logs it: the goals would wait for ever), ``protocol: ros1``
          version 1 (ROS 2 has no actionlib topics). Asked of ``/rosapi/get_ros_version`` (rosapi
          >= 0.11.14 on ROS 1, every ROS 2 rosapi), else told by the type of rosapi's own
          ``/rosapi/topics`` service (``/rosapi/service_type``, which every rosapi has):
          ``rosapi/Topics`` on ROS 1, ``rosapi_msgs/srv/Topics`` on ROS 2; without rosapi it
          cannot be told (an event says so);
        - ``/rosapi/topic_type`` of each action's ROS 1 ``<ns>/goal`` and ``<ns>/result`` (or ROS 2
          ``<ns>/_action/feedback``) must be the type the robot file gives; an empty answer (no
          such topic yet) is left to the server check.

        Raises:
            HardwareConnectionError: naming each mismatch and the fix.
        """
        cfg = self.cfg
        version, how = self._bridge_ros_version()
        want = 2 if cfg.protocol == "ros2" else 1
        if version is None:
            if want == 2:  # a ROS 1 bridge would leave the goals unanswered (a ROS 2 one refuses actionlib topics)
                self._event(f"cannot tell which ROS rosbridge at {cfg.url} runs ({how}): if it is ROS 1, the ROS 2 "
                            "goals will never be answered (set protocol: ros1 then)")
        elif version != want:
            raise HardwareConnectionError(
                f"the robot file {cfg.file} says protocol: {cfg.protocol}, but rosbridge at {cfg.url} runs ROS "
                f"{version} ({how}): set protocol: ros{version}"
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

    def _bridge_ros_version(self) -> tuple[Optional[int], str]:
        """(1 or 2, how it was told) of the bridge, or (None, why not): see :meth:`_check_bridge`."""
        ver = self._rosapi("/rosapi/get_ros_version", "rosapi/GetROSVersion")
        if ver is not None:
            try:
                version = int(ver.get("version"))
            except (TypeError, ValueError):
                version = None
            if version in (1, 2):
                return version, str(ver.get("distro", "?"))
        resp = self._rosapi("/rosapi/service_type", "rosapi/ServiceType", {"service": "/rosapi/topics"})
        typ = str((resp or {}).get("type") or "")
        if typ.startswith("rosapi"):
            ros2 = "/srv/" in typ
            return (2 if ros2 else 1), (f"its rosapi service /rosapi/topics has the ROS {2 if ros2 else 1} type {typ}; "
                                        "no /rosapi/get_ros_version")
        return None, "no rosapi answers /rosapi/get_ros_version nor /rosapi/service_type"

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
        self._check_goal_timers()

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

    def __repr__(self) -> str:
        return (f"HardwareBackend({self.cfg.url}, arms={list(self.arms)}, grippers={list(self.grippers)}"
                f"{', closed' if self._conn.closed else ', lost' if self._conn.lost else ''})")
