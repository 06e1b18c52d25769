"""The stand-in holds to the rosbridge v2 protocol, and the hardware backend refuses what a real
rosbridge would only log (issue 17, points 6 and 7).

One stand-in (sim at 4x real time) serves the module; raw frames go through ``websockets``' sync
client, the backend through roslibpy as in a run.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("roslibpy")
pytest.importorskip("websockets")

from py_trees_manipulation.hardware.robotfile import load_robot_file  # noqa: E402
from py_trees_manipulation.msgs.actions import GoalStatus  # noqa: E402
from py_trees_manipulation.msgs.motion import MoveJointsGoal, Pr2GripperCommand  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
STANDIN = ROOT / "examples/robots/standin.yaml"
GRIPPER = "/r_gripper_sensor_controller/gripper_action"


@pytest.fixture(scope="module")
def standin():
    from py_trees_manipulation.hardware.robot_server import RobotStandIn
    from py_trees_manipulation.commands.hardware import load_scene
    from py_trees_manipulation.sim import SimBackend

    scene, base = load_scene(str(ROOT / "examples/pick_and_lift.yaml"))
    server = RobotStandIn(SimBackend(scene, base_dir=base), port=0, rate=4.0).start()
    yield server
    server.stop()


@pytest.fixture
def ros_version(standin):
    """Set the stand-in's ROS version (and how its bridge reports unknown ops, whether its rosapi has
    get_ros_version) for one test."""
    def set_(v, *, report_unknown_ops=None, rosapi_version_service=True):
        standin.ros_version = v
        standin.report_unknown_ops = report_unknown_ops
        standin.rosapi_version_service = rosapi_version_service
    yield set_
    standin.ros_version = None
    for attr in ("report_unknown_ops", "rosapi_version_service"):
        standin.__dict__.pop(attr, None)


class _Raw:
    """A raw websocket client: send JSON (or text), read what comes back."""

    def __init__(self, port):
        from websockets.sync.client import connect

        self._cm = connect(f"ws://127.0.0.1:{port}")
        self.ws = self._cm.__enter__()

    def send(self, msg):
        self.ws.send(msg if isinstance(msg, (str, bytes)) else json.dumps(msg))

    def until(self, pred, timeout=10.0):
        """The first message for which ``pred`` holds (others are skipped)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                m = json.loads(self.ws.recv(timeout=max(0.01, deadline - time.monotonic())))
            except TimeoutError:
                break
            if pred(m):
                return m
        return None

    def collect(self, seconds):
        out, deadline = [], time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                out.append(json.loads(self.ws.recv(timeout=max(0.01, deadline - time.monotonic()))))
            except TimeoutError:
                break
        return out

    def close(self):
        self._cm.__exit__(None, None, None)


@pytest.fixture
def raw(standin):
    c = _Raw(standin.port)
    yield c
    c.close()


def _status(m):
    return m.get("op") == "status"


# ---- point 6: the stand-in answers as rosbridge does ---------------------------------------------------------
def test_unknown_op_missing_fields_and_unadvertised_publish_get_status_errors(raw):
    raw.send({"op": "frobnicate", "id": "x1"})
    m = raw.until(_status)
    assert (m["level"], m["id"]) == ("error", "x1") and m["msg"].startswith("Unknown operation: frobnicate.")
    raw.send({"op": "send_action_goal", "id": "g1", "action": GRIPPER, "args": {}})
    m = raw.until(_status)
    assert m["id"] == "g1" and m["msg"].startswith("send_action_goal: Expected a key 'action_type' in message")
    raw.send({"op": "publish", "id": "p1", "topic": "/nobody/knows", "msg": {"data": 1}})
    m = raw.until(_status)
    assert m == {"op": "status", "level": "error", "id": "p1",
                 "msg": "publish: Cannot infer topic type for topic /nobody/knows as it is not yet advertised"}
    raw.send("this is not JSON")
    assert raw.until(_status)["msg"].startswith("malformed rosbridge message: not JSON")
    raw.send({"op": "advertise", "topic": "/nobody/knows", "type": "std_msgs/Int32"})
    raw.send({"op": "publish", "topic": "/nobody/knows", "msg": {"data": 1}})
    raw.send({"op": "frobnicate"})  # still connected; the advertised publish raised nothing
    assert raw.until(_status)["msg"].startswith("Unknown operation: frobnicate.")


def test_type_conflicts_are_errors_and_the_subscription_hears_nothing(raw):
    raw.send({"op": "subscribe", "id": "s1", "topic": GRIPPER + "/status", "type": "actionlib_msgs/GoalStatusArray"})
    assert raw.until(lambda m: m.get("topic") == GRIPPER + "/status") is not None
    raw.send({"op": "subscribe", "id": "s2", "topic": "/joint_states", "type": "std_msgs/String"})
    m = raw.until(_status)
    assert m["id"] == "s2" and m["msg"] == ("subscribe: Tried to register topic /joint_states with type std_msgs/String "
                                            "but it is already established with type sensor_msgs/JointState")
    assert not [x for x in raw.collect(0.5) if x.get("topic") == "/joint_states"]
    raw.send({"op": "advertise", "id": "a1", "topic": GRIPPER + "/goal", "type": "control_msgs/GripperCommandActionGoal"})
    assert "already established with type pr2_controllers_msgs/Pr2GripperCommandActionGoal" in raw.until(_status)["msg"]


def test_fragments_are_reassembled(raw):
    whole = json.dumps({"op": "subscribe", "topic": "/joint_states", "type": "sensor_msgs/JointState"})
    parts = [whole[i:i + 20] for i in range(0, len(whole), 20)]
    for n in reversed(range(len(parts))):  # out of order, as the spec allows
        raw.send({"op": "fragment", "id": "f1", "data": parts[n], "num": n, "total": len(parts)})
    m = raw.until(lambda m: m.get("topic") == "/joint_states")
    assert m is not None and "r_gripper_joint" in m["msg"]["name"]
    raw.send({"op": "fragment", "id": "f2", "data": "{", "num": 5, "total": 2})
    assert raw.until(_status)["msg"].startswith("fragment f2: num 5 of total 2 is out of range")


@pytest.mark.parametrize("feedback", [False, True])
def test_send_action_goal_sends_feedback_only_when_asked(raw, feedback):
    raw.send({"op": "send_action_goal", "id": f"goal{feedback}", "action": GRIPPER,
              "action_type": "pr2_controllers_msgs/action/Pr2GripperCommand", "feedback": feedback,
              "args": {"command": {"position": 0.02, "max_effort": 20.0}}})
    msgs = []
    end = raw.until(lambda m: msgs.append(m) or m.get("op") == "action_result")
    assert end is not None and end["id"] == f"goal{feedback}" and end["result"] is True
    fb = [m for m in msgs if m.get("op") == "action_feedback"]
    assert bool(fb) is feedback


def test_a_ros1_bridge_does_not_know_send_action_goal_and_only_logs_it(raw, ros_version):
    """As the real ROS 1 rosbridge_suite (reference: libraries_turn2.md): an unknown op is only logged,
    the client hears nothing (issue 36; the stand-in answered with a status error before)."""
    ros_version(1)
    goal = {"op": "send_action_goal", "id": "g", "action": GRIPPER,
            "action_type": "pr2_controllers_msgs/action/Pr2GripperCommand", "args": {}}
    raw.send(goal)
    assert [m for m in raw.collect(1.0) if m.get("id") == "g"] == []
    ros_version(1, report_unknown_ops=True)  # a bridge that reports them (the client handles both)
    raw.send(goal)
    m = raw.until(_status)
    assert m["msg"].startswith("Unknown operation: send_action_goal.") and m["id"] == "g"


# ---- point 7: the backend refuses mismatches at connect and fails goals that cannot finish -----------------
def _cfg(standin, **changes):
    cfg = load_robot_file(str(STANDIN))
    cfg.port = standin.port
    for k, v in changes.items():
        setattr(cfg, k, v)
    return cfg


def test_an_action_type_that_differs_from_the_servers_is_refused_at_connect(standin):
    from py_trees_manipulation.hardware.rosbridge import HardwareBackend, HardwareConnectionError

    cfg = _cfg(standin)
    cfg.grippers["panda"].actions["gripper_action"].type = "control_msgs/GripperCommandAction"
    with pytest.raises(HardwareConnectionError) as e:
        HardwareBackend(cfg)
    assert (f"{GRIPPER} (gripper_action): the server's {GRIPPER}/goal has type "
            "pr2_controllers_msgs/Pr2GripperCommandActionGoal, the robot file gives type control_msgs/GripperCommandAction; "
            "set type: pr2_controllers_msgs/Pr2GripperCommandAction") in str(e.value)
    cfg.protocol = "ros2"
    with pytest.raises(HardwareConnectionError, match=r"the server's .*/_action/feedback has type "
                                                      r"pr2_controllers_msgs/action/Pr2GripperCommand_FeedbackMessage"):
        HardwareBackend(cfg)


@pytest.mark.parametrize("bridge, protocol", [(1, "ros2"), (2, "ros1")])
def test_the_bridges_ros_version_must_match_the_protocol(standin, ros_version, bridge, protocol):
    from py_trees_manipulation.hardware.rosbridge import HardwareBackend, HardwareConnectionError

    ros_version(bridge)
    with pytest.raises(HardwareConnectionError, match=f"says protocol: {protocol}, but rosbridge at "
                                                      f"ws://127.0.0.1:{standin.port} runs ROS {bridge}"):
        HardwareBackend(_cfg(standin, protocol=protocol))
    HardwareBackend(_cfg(standin, protocol=f"ros{bridge}")).close()  # the right one connects


@pytest.mark.parametrize("bridge, protocol", [(1, "ros2"), (2, "ros1")])
def test_a_bridge_whose_rosapi_predates_get_ros_version_is_told_by_its_service_types(standin, ros_version, bridge,
                                                                                     protocol):
    """Issue 36: ROS 2 action types on a ROS 1 bridge whose rosapi has no get_ros_version waited silently
    (the bridge only logs send_action_goal); now refused at connect, within the connection timeout."""
    from py_trees_manipulation.hardware.rosbridge import HardwareBackend, HardwareConnectionError

    ros_version(bridge, rosapi_version_service=False)
    cfg = _cfg(standin, protocol=protocol)
    t0 = time.monotonic()
    with pytest.raises(HardwareConnectionError) as e:
        HardwareBackend(cfg)
    assert time.monotonic() - t0 < cfg.connect_timeout_s
    typ = "rosapi/Topics" if bridge == 1 else "rosapi_msgs/srv/Topics"
    assert str(e.value) == (
        f"the robot file {cfg.file} says protocol: {protocol}, but rosbridge at ws://127.0.0.1:{standin.port} runs "
        f"ROS {bridge} (its rosapi service /rosapi/topics has the ROS {bridge} type {typ}; no /rosapi/get_ros_version): "
        f"set protocol: ros{bridge}" + (" (a ROS 1 rosbridge has no send_action_goal: ROS 2 goals would stay PENDING)"
                                        if bridge == 1 else ""))
    HardwareBackend(_cfg(standin, protocol=f"ros{bridge}")).close()  # the right one connects


def test_without_rosapi_the_version_is_not_checked_and_an_event_says_so(standin, ros_version):
    from py_trees_manipulation.hardware.rosbridge import HardwareBackend

    ros_version(None)  # the default stand-in: both protocols, neither get_ros_version nor service_type
    hw = HardwareBackend(_cfg(standin, protocol="ros2"))
    try:
        events = [e["text"] for e in hw.drain_events()]
        assert (f"cannot tell which ROS rosbridge at ws://127.0.0.1:{standin.port} runs (no rosapi answers "
                "/rosapi/get_ros_version nor /rosapi/service_type): if it is ROS 1, the ROS 2 goals will never be "
                "answered (set protocol: ros1 then)") in events
    finally:
        hw.close()


def _run(hw, handle, seconds=15.0):
    deadline = time.monotonic() + seconds
    while not handle.done and time.monotonic() < deadline:
        hw.advance(0.02)


def test_a_terminal_status_without_a_result_fails_after_the_grace_period(standin, monkeypatch):
    """What a real bridge does with a mismatched type, with rosapi absent (no connect-time check):
    the goal runs to SUCCEEDED, the status says so, the result never reaches the client."""
    from py_trees_manipulation.hardware.rosbridge import HardwareBackend

    monkeypatch.setattr(HardwareBackend, "_check_bridge", lambda self, clients: None)
    cfg = _cfg(standin, result_timeout_s=0.5)
    cfg.grippers["panda"].actions["gripper_action"].type = "control_msgs/GripperCommandAction"
    hw = HardwareBackend(cfg)
    try:
        h = hw.grippers["panda"].send_goal("gripper_action", Pr2GripperCommand(position=0.06, max_effort=20.0))
        _run(hw, h)
        assert h.status == GoalStatus.ABORTED
        assert h.text.startswith(f"{GRIPPER} reports the goal SUCCEEDED but its result did not arrive within 0.5 s: "
                                 "the server's action type probably differs from the robot file's "
                                 "control_msgs/GripperCommandAction")
        events = [e["text"] for e in hw.drain_events()]
        assert any("already established with type" in t for t in events), events  # the bridge's status
    finally:
        hw.close()


def test_a_goal_never_acknowledged_fails_naming_the_likely_cause(standin, monkeypatch):
    from py_trees_manipulation.hardware import robot_server
    from py_trees_manipulation.hardware.rosbridge import HardwareBackend

    monkeypatch.setattr(robot_server._ActionServer, "on_goal", lambda self, msg: None)  # a server that drops goals
    hw = HardwareBackend(_cfg(standin, ack_timeout_s=0.3))
    try:
        h = hw.grippers["panda"].send_goal("gripper_action", Pr2GripperCommand(position=0.05))
        _run(hw, h)
        assert h.status == GoalStatus.LOST
        assert h.text.startswith(f"{GRIPPER} did not acknowledge the goal within 0.3 s: its status list never showed it")
        assert "pr2_controllers_msgs/Pr2GripperCommandAction its goal type" in h.text
    finally:
        hw.close()


def test_a_ros2_goal_refused_by_a_ros1_bridge_fails_with_the_bridges_words(standin, ros_version, monkeypatch):
    from py_trees_manipulation.hardware.rosbridge import HardwareBackend

    monkeypatch.setattr(HardwareBackend, "_check_bridge", lambda self, clients: None)  # no rosapi
    hw = HardwareBackend(_cfg(standin, protocol="ros2"))
    ros_version(1, report_unknown_ops=True)  # a bridge that answers an unknown op with a status error
    try:
        h = hw.grippers["panda"].send_goal("gripper_action", Pr2GripperCommand(position=0.05))
        _run(hw, h)
        assert h.status == GoalStatus.REJECTED
        assert "refused the goal (Unknown operation: send_action_goal." in h.text and h.text.endswith("set protocol: ros1")
    finally:
        hw.close()


def _drop_the_connection_mid_motion(standin, hw, table: str, wait_active: bool = False):
    """Send a slow arm motion, wait until the stand-in serves it (its ``table`` of goals: ``goals``
    for ROS 1, ``goals2`` for ROS 2), drop every client and advance: ``(the goal's handle, the served
    goal, the ConnectionLost text)``."""
    from py_trees_manipulation.hardware.rosbridge import ConnectionLost

    far = [1.5, 0.5, -1.0, -1.5, 1.0, 2.5, -0.5]
    h = hw.arms["panda"].send_goal("move_joints", MoveJointsGoal(positions=far, velocity_scaling=0.05))
    fjt = standin.servers["/r_arm_controller/follow_joint_trajectory"]
    deadline = time.monotonic() + 20  # generous: the stand-in's sim thread competes for 2 busy cores

    def running():
        return next((g for g in list(getattr(fjt, table).values()) if g.handle is not None and not g.handle.done),
                    None)
    while ((wait_active and h.status != GoalStatus.ACTIVE) or running() is None) and not h.done \
            and time.monotonic() < deadline:
        hw.advance(0.02)
    served = running()
    assert served is not None, (h.status, h.text)
    assert standin.drop_clients() >= 1
    with pytest.raises(ConnectionLost) as e:
        for _ in range(500):
            hw.advance(0.02)
    return h, served, str(e.value)


def _wait_done(served, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not served.handle.done and time.monotonic() < deadline:
        time.sleep(0.05)


def test_after_a_lost_connection_the_backend_reconnects_and_cancels_the_running_goal(standin):
    from py_trees_manipulation.hardware.rosbridge import HardwareBackend

    hw = HardwareBackend(_cfg(standin))
    try:
        h, served, lost = _drop_the_connection_mid_motion(standin, hw, "goals", wait_active=True)
        assert lost == (f"connection to rosbridge at ws://127.0.0.1:{standin.port} lost; reconnected and sent "
                        "the cancel of 1 goal(s) still running on /r_arm_controller/follow_joint_trajectory")
        _wait_done(served)
        assert served.handle.status == GoalStatus.PREEMPTED  # the robot stopped
    finally:
        hw.close()


def test_after_a_lost_connection_to_a_ros2_bridge_the_new_session_cancels_the_goal(standin):
    """Issue 36 (left open before): a ROS 2 goal's id belongs to the lost session, so the backend calls
    the action's own cancel_goal service from the new one; the robot stops."""
    from py_trees_manipulation.hardware.rosbridge import HardwareBackend

    hw = HardwareBackend(_cfg(standin, protocol="ros2"))
    try:
        h, served, lost = _drop_the_connection_mid_motion(standin, hw, "goals2")
        assert lost == (f"connection to rosbridge at ws://127.0.0.1:{standin.port} lost; reconnected and sent "
                        "the cancel of 1 goal(s) still running on /r_arm_controller/follow_joint_trajectory "
                        "(ROS 2 cancel_goal of every goal of the server: 1 canceling)")
        assert hw.cancel_log[-1][0] == "move_joints"
        _wait_done(served)
        assert served.handle.status == GoalStatus.PREEMPTED  # the robot stopped
        assert h.status == GoalStatus.ABORTED
    finally:
        hw.close()


# ---- roslibpy and Twisted tracebacks on bad frames become one line ------------------------------------------
def test_bad_frames_from_the_bridge_are_one_line_warnings_and_the_connection_stays(capfd, caplog):
    import asyncio

    from websockets.asyncio.server import serve

    from py_trees_manipulation.hardware.connection import _Connection

    port: dict = {}
    stop = threading.Event()

    async def handler(ws):
        await asyncio.sleep(0.3)
        for frame in ("not json", b"\x00\x01binary", '{"no_op": 1}', '{"op": "status", "level": "error", "msg": "x"}',
                      '{"op": "publish", "topic": 5}'):
            await ws.send(frame)
        while not stop.is_set():
            await asyncio.sleep(0.05)

    async def main():
        async with serve(handler, "127.0.0.1", 0) as s:
            port["p"] = s.sockets[0].getsockname()[1]
            while not stop.is_set():
                await asyncio.sleep(0.05)

    t = threading.Thread(target=lambda: asyncio.run(main()), daemon=True)
    t.start()
    while "p" not in port:
        time.sleep(0.01)
    cfg = load_robot_file(str(STANDIN))
    cfg.port = port["p"]
    conn = _Connection(cfg)
    try:
        time.sleep(1.0)
        assert conn.ros.is_connected  # a binary frame no longer drops the connection
        assert ("bridge_status", None, {"op": "status", "level": "error", "msg": "x"}) in list(conn.events)
    finally:
        conn.close()
        stop.set()
        t.join(5)
    out = capfd.readouterr()
    assert "Traceback" not in out.err + out.out and "Unhandled Error" not in out.err
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any("binary frame" in w for w in warned)
    assert any("JSONDecodeError" in w and "\n" not in w for w in warned)
    assert all(r.exc_info is None for r in caplog.records)
