"""Translation between our messages and rosbridge JSON (ROS 1 field names), both directions.

Used by the hardware client (:mod:`.rosbridge`) and the robot stand-in (:mod:`.robot_server`), so
both ends agree by construction. Only numpy, transforms3d (through geometry.poses) and our msgs.

Conventions at this boundary:

- poses: our (4, 4) world-frame transforms <-> ``geometry_msgs/Pose`` ``{position: {x, y, z},
  orientation: {x, y, z, w}}`` (ROS quaternions are x, y, z, w; ours are w, x, y, z);
- time: seconds <-> ROS 1 ``{secs, nsecs}`` (ROS 2 ``{sec, nanosec}`` is also read);
- ``Pr2GripperCommand`` <-> ``pr2_controllers_msgs/Pr2GripperCommandGoal {command: {position,
  max_effort}}``; feedback and result ``{position, effort, stalled, reached_goal}``;
- the PR2 gripper sensor actions: goal ``{command: ...}``, feedback and result ``{data: ...}``
  (:mod:`py_trees_manipulation.msgs.gripper_sensor`, ``stamp`` as ROS ``{secs, nsecs}`` on the
  wire); our client hands behaviours ``PR2Gripper<X>Feedback{data}`` / ``PR2Gripper<X>Result{data}``,
  exactly what the simulator's servers publish;
- ``MoveJointsGoal`` -> ``control_msgs/FollowJointTrajectoryGoal`` with one point;
  ``JointTrajectoryGoal`` (a motion planned and timed by the client) <-> the same message with
  every point (positions, velocities, time_from_start);
- ``MoveToPoseGoal`` / ``MoveCartesianGoal`` <-> ``ptm_msgs/MoveToPose`` / ``ptm_msgs/MoveCartesian``
  (our Cartesian action types, defined in docs/hardware.md and :data:`CARTESIAN_ACTION_DOC`).

Every ``*_from_ros`` function raises ``ValueError`` naming the bad field on a malformed message.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from ..geometry.poses import check_pose, pose_from_pq, pq_from_pose
from ..msgs import gripper_sensor as gs
from ..msgs.motion import (JointTrajectoryGoal, MotionFeedback, MotionResult, MoveCartesianGoal, MoveJointsGoal,
                           MoveToPoseGoal, Pr2GripperCommand, Pr2GripperCommandResult)

#: ROS 1 action types (the ``...Action`` name; topics use ``...ActionGoal`` etc.) per backend action
DEFAULT_ACTION_TYPES: dict[str, str] = {
    "gripper_action": "pr2_controllers_msgs/Pr2GripperCommandAction",
    **{name: spec.ros_type + "Action" for name, spec in gs.ACTIONS.items()},
    "move_joints": "control_msgs/FollowJointTrajectoryAction",
    "move_to_pose": "ptm_msgs/MoveToPoseAction",
    "move_cartesian": "ptm_msgs/MoveCartesianAction",
}

GRIPPER_ACTIONS = ("gripper_action", "find_contact", "force_servo", "slip_servo", "grab", "release", "event_detector")
ARM_ACTIONS = ("move_joints", "move_to_pose", "move_cartesian")

#: control_msgs/FollowJointTrajectoryResult error codes
FJT_ERRORS = {0: "SUCCESSFUL", -1: "INVALID_GOAL", -2: "INVALID_JOINTS", -3: "OLD_HEADER_TIMESTAMP",
              -4: "PATH_TOLERANCE_VIOLATED", -5: "GOAL_TOLERANCE_VIOLATED"}

CARTESIAN_ACTION_DOC = """\
ptm_msgs/MoveToPose.action        (TCP to a pose, any path: IK + joint interpolation)
  geometry_msgs/PoseStamped target  # TCP pose; frame_id 'world' (or the robot file's world_frame)
  float64 velocity_scaling          # fraction of the joint velocity limits, (0, 1]
  float64 position_tolerance        # m
  float64 orientation_tolerance     # rad
  ---
  geometry_msgs/PoseStamped pose    # TCP pose at the end
  float64 position_error            # m
  bool stopped_on_contact
  string error_string
  ---
  geometry_msgs/PoseStamped pose    # TCP pose now
  float64 distance                  # m to the target
  float64 progress                  # 0..1

ptm_msgs/MoveCartesian.action     (TCP along a straight line)
  geometry_msgs/PoseStamped target
  float64 linear_speed              # m/s
  float64 max_force                 # N; <= 0: no force guard
  float64 position_tolerance        # m
  ---  (result and feedback as MoveToPose)
"""


# ------------------------------------------------------------------------------------------------
# primitives
# ------------------------------------------------------------------------------------------------
def _num(msg: Mapping[str, Any], key: str, where: str) -> float:
    if not isinstance(msg, Mapping) or key not in msg:
        raise ValueError(f"{where}: missing field {key!r}")
    v = msg[key]
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError(f"{where}.{key}: expected a number, got {v!r}")
    if not math.isfinite(float(v)):
        raise ValueError(f"{where}.{key}: not finite ({v!r})")
    return float(v)


def _map(msg: Any, key: str, where: str) -> Mapping[str, Any]:
    if not isinstance(msg, Mapping) or not isinstance(msg.get(key), Mapping):
        raise ValueError(f"{where}: missing or non-object field {key!r}")
    return msg[key]


def time_to_ros(t: float) -> dict[str, int]:
    """Seconds -> ROS 1 ``{secs, nsecs}``."""
    secs = int(math.floor(t))
    nsecs = int(round((t - secs) * 1e9))
    if nsecs >= 1_000_000_000:
        secs, nsecs = secs + 1, nsecs - 1_000_000_000
    return {"secs": secs, "nsecs": nsecs}


def time_from_ros(msg: Any, where: str = "time") -> float:
    """ROS 1 ``{secs, nsecs}`` or ROS 2 ``{sec, nanosec}`` -> seconds."""
    if isinstance(msg, Mapping) and "secs" in msg:
        return _num(msg, "secs", where) + 1e-9 * float(msg.get("nsecs", 0))
    if isinstance(msg, Mapping) and "sec" in msg:
        return _num(msg, "sec", where) + 1e-9 * float(msg.get("nanosec", 0))
    raise ValueError(f"{where}: not a ROS time object: {msg!r}")


def pose_to_ros(pose: np.ndarray) -> dict[str, Any]:
    """(4, 4) pose -> ``geometry_msgs/Pose`` (quaternion x, y, z, w)."""
    p, q = pq_from_pose(check_pose(pose))
    return {"position": {"x": float(p[0]), "y": float(p[1]), "z": float(p[2])},
            "orientation": {"x": float(q[1]), "y": float(q[2]), "z": float(q[3]), "w": float(q[0])}}


def pose_from_ros(msg: Any, where: str = "pose") -> np.ndarray:
    """``geometry_msgs/Pose`` -> (4, 4) pose. Raises ValueError on missing fields or a zero quaternion."""
    pos, ori = _map(msg, "position", where), _map(msg, "orientation", where)
    xyz = [_num(pos, k, where + ".position") for k in "xyz"]
    wxyz = [_num(ori, k, where + ".orientation") for k in "wxyz"]
    try:
        return pose_from_pq(xyz, wxyz)
    except ValueError as e:
        raise ValueError(f"{where}.orientation: {e}") from None


def pose_stamped_to_ros(pose: np.ndarray, frame_id: str = "world", stamp: float = 0.0) -> dict[str, Any]:
    """(4, 4) pose -> ``geometry_msgs/PoseStamped``."""
    return {"header": {"seq": 0, "stamp": time_to_ros(stamp), "frame_id": frame_id}, "pose": pose_to_ros(pose)}


def pose_stamped_from_ros(msg: Any, where: str = "pose") -> np.ndarray:
    """``geometry_msgs/PoseStamped`` -> (4, 4) pose (the frame is not transformed)."""
    return pose_from_ros(_map(msg, "pose", where), where + ".pose")


def joint_state_to_ros(names: Sequence[str], positions: Sequence[float], stamp: float = 0.0) -> dict[str, Any]:
    """``sensor_msgs/JointState`` with positions only (radians, or metres for prismatic joints)."""
    return {"header": {"seq": 0, "stamp": time_to_ros(stamp), "frame_id": ""}, "name": list(names),
            "position": [float(v) for v in positions], "velocity": [], "effort": []}


def joint_state_from_ros(msg: Any, where: str = "joint_states") -> dict[str, float]:
    """``sensor_msgs/JointState`` -> ``{name: position}``."""
    if not isinstance(msg, Mapping):
        raise ValueError(f"{where}: not an object")
    names, pos = msg.get("name"), msg.get("position")
    if not isinstance(names, list) or not isinstance(pos, list) or len(names) != len(pos):
        raise ValueError(f"{where}: 'name' and 'position' must be lists of the same length")
    out = {}
    for n, v in zip(names, pos):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ValueError(f"{where}: position of {n!r} is not a number: {v!r}")
        out[str(n)] = float(v)
    return out


# ------------------------------------------------------------------------------------------------
# gripper
# ------------------------------------------------------------------------------------------------
def gripper_goal_to_ros(action: str, goal: Any) -> dict[str, Any]:
    """Our gripper goal -> the ROS goal dict (``{command: {...}}``).

    ``gripper_action`` takes a :class:`Pr2GripperCommand`; a sensor action takes its command
    (``PR2GripperFindContactCommand``...) or its goal wrapper (``PR2GripperFindContactGoal``...).

    Raises:
        TypeError: a goal of the wrong type.
    """
    if action == "gripper_action":
        if not isinstance(goal, Pr2GripperCommand):
            raise TypeError(f"gripper_action takes a Pr2GripperCommand, got {type(goal).__name__}")
        return {"command": {"position": float(goal.position), "max_effort": float(goal.max_effort)}}
    spec = gs.ACTIONS.get(action)
    if spec is None:
        raise TypeError(f"unknown gripper action {action!r}")
    if isinstance(goal, spec.goal):
        return goal.to_dict()
    if isinstance(goal, spec.command):
        return {"command": goal.to_dict()}
    raise TypeError(f"{action} takes a {spec.command.__name__} (or {spec.goal.__name__}), got {type(goal).__name__}")


def gripper_goal_from_ros(action: str, msg: Any) -> Any:
    """ROS goal dict -> our goal (``Pr2GripperCommand`` or the sensor action's command)."""
    cmd = _map(msg, "command", f"{action} goal")
    if action == "gripper_action":
        return Pr2GripperCommand(position=_num(cmd, "position", "goal.command"),
                                 max_effort=_num(cmd, "max_effort", "goal.command"))
    return gs.ACTIONS[action].command.from_dict(cmd)


def gripper_data_to_ros(action: str, msg: Any) -> dict[str, Any]:
    """Our feedback/result -> ROS feedback/result dict (``{position...}`` or ``{data: {...}}``)."""
    if action == "gripper_action":
        m = msg if isinstance(msg, Pr2GripperCommandResult) else Pr2GripperCommandResult()
        return {"position": float(m.position), "effort": float(m.effort), "stalled": bool(m.stalled),
                "reached_goal": bool(m.reached_goal)}
    spec = gs.ACTIONS[action]
    if isinstance(msg, spec.data):
        data = msg
    elif isinstance(getattr(msg, "data", None), spec.data):
        data = msg.data
    else:
        data = spec.data()
    return {"data": _ros_stamps(data.to_dict())}


def _ros_stamps(d: Any) -> Any:
    """``to_dict`` output with every float ``stamp`` (seconds) as a ROS 1 ``{secs, nsecs}`` time."""
    if isinstance(d, dict):
        return {k: time_to_ros(float(v)) if k == "stamp" and isinstance(v, (int, float)) else _ros_stamps(v)
                for k, v in d.items()}
    if isinstance(d, list):
        return [_ros_stamps(v) for v in d]
    return d


def gripper_data_from_ros(action: str, msg: Any) -> Any:
    """ROS feedback/result -> ``Pr2GripperCommandResult`` or the action's ``PR2Gripper*Data``."""
    where = f"{action} message"
    if action == "gripper_action":
        if not isinstance(msg, Mapping):
            raise ValueError(f"{where}: not an object")
        return Pr2GripperCommandResult(position=_num(msg, "position", where), effort=_num(msg, "effort", where),
                                       stalled=bool(msg.get("stalled", False)),
                                       reached_goal=bool(msg.get("reached_goal", False)))
    return gs.ACTIONS[action].data.from_dict(_map(msg, "data", where))


def gripper_feedback_from_ros(action: str, msg: Any) -> Any:
    """ROS feedback -> what the behaviours get as feedback: ``Pr2GripperCommandResult``
    (``gripper_action``, the fields of pr2_controllers_msgs/Pr2GripperCommandFeedback) or the
    action's ``PR2Gripper<X>Feedback{data}``, as the simulator publishes them.

    Raises:
        ValueError: a missing or malformed field (named).
    """
    data = gripper_data_from_ros(action, msg)
    return data if action == "gripper_action" else gs.ACTIONS[action].feedback(data=data)


def gripper_result_from_ros(action: str, msg: Any) -> Any:
    """ROS result -> ``Pr2GripperCommandResult`` or the action's ``PR2Gripper<X>Result{data}``.

    Raises:
        ValueError: a missing or malformed field (named).
    """
    data = gripper_data_from_ros(action, msg)
    return data if action == "gripper_action" else gs.ACTIONS[action].result(data=data)


# ------------------------------------------------------------------------------------------------
# arm
# ------------------------------------------------------------------------------------------------
def joint_move_duration(q0: Sequence[float], q1: Sequence[float], max_velocity: Sequence[float],
                        velocity_scaling: float) -> float:
    """Duration (s) of a cubic joint move whose peak speed is ``velocity_scaling * max_velocity``.

    A cubic ``s(t) = 3 tau^2 - 2 tau^3`` peaks at 1.5x the mean speed, so
    ``T = 1.5 * max_i |dq_i| / (scaling * vmax_i)``, at least 0.05 s (the simulator's rule).
    """
    dq = np.abs(np.asarray(q1, float) - np.asarray(q0, float))
    vmax = np.asarray(max_velocity, float) * float(velocity_scaling)
    return max(1.5 * float(np.max(dq / vmax)) if len(dq) else 0.0, 0.05)


def scaling_for_duration(q0: Sequence[float], q1: Sequence[float], max_velocity: Sequence[float],
                         duration_s: float) -> float:
    """Inverse of :func:`joint_move_duration`: the velocity scaling in [0.01, 1] that takes ``duration_s``."""
    dq = np.abs(np.asarray(q1, float) - np.asarray(q0, float))
    need = 1.5 * float(np.max(dq / np.asarray(max_velocity, float))) if len(dq) else 0.0
    if duration_s <= 0 or need <= 0:
        return 1.0
    return float(np.clip(need / duration_s, 0.01, 1.0))


def follow_joint_trajectory_goal(joint_names: Sequence[str], q0: Sequence[float], goal: MoveJointsGoal,
                                 max_velocity: Sequence[float]) -> dict[str, Any]:
    """``MoveJointsGoal`` -> ``control_msgs/FollowJointTrajectoryGoal``: one point, at rest, timed by
    :func:`joint_move_duration` from the current positions ``q0`` (rad)."""
    T = joint_move_duration(q0, goal.positions, max_velocity, goal.velocity_scaling)
    n = len(joint_names)
    return {
        "trajectory": {"header": {"seq": 0, "stamp": {"secs": 0, "nsecs": 0}, "frame_id": ""},
                       "joint_names": list(joint_names),
                       "points": [{"positions": [float(v) for v in goal.positions], "velocities": [0.0] * n,
                                   "accelerations": [], "effort": [], "time_from_start": time_to_ros(T)}]},
        "path_tolerance": [], "goal_tolerance": [], "goal_time_tolerance": {"secs": 0, "nsecs": 0},
    }


def joint_trajectory_goal_to_ros(goal: JointTrajectoryGoal) -> dict[str, Any]:
    """``JointTrajectoryGoal`` -> ``control_msgs/FollowJointTrajectoryGoal`` with every point."""
    points = [{"positions": [float(v) for v in q], "velocities": [float(v) for v in qd], "accelerations": [],
               "effort": [], "time_from_start": time_to_ros(float(t))}
              for t, q, qd in zip(goal.times, goal.positions, goal.velocities)]
    return {
        "trajectory": {"header": {"seq": 0, "stamp": {"secs": 0, "nsecs": 0}, "frame_id": ""},
                       "joint_names": list(goal.joint_names), "points": points},
        "path_tolerance": [], "goal_tolerance": [], "goal_time_tolerance": {"secs": 0, "nsecs": 0},
    }


def joint_trajectory_goal_from_ros(msg: Any, joint_names: Sequence[str]) -> JointTrajectoryGoal:
    """``FollowJointTrajectoryGoal`` -> ``JointTrajectoryGoal`` in ``joint_names`` order (missing
    velocities are zero).

    Raises:
        ValueError: no points, joints missing, lengths that do not match, times not increasing.
    """
    traj = _map(msg, "trajectory", "goal")
    names = traj.get("joint_names")
    points = traj.get("points")
    if not isinstance(names, list) or not isinstance(points, list) or not points:
        raise ValueError("goal.trajectory needs joint_names and at least one point")
    missing = [j for j in joint_names if j not in names]
    if missing:
        raise ValueError(f"goal.trajectory.joint_names lacks {missing}")
    cols = [names.index(j) for j in joint_names]
    times, qs, qds = [], [], []
    for k, pt in enumerate(points):
        pos = pt.get("positions") if isinstance(pt, Mapping) else None
        if not isinstance(pos, list) or len(pos) != len(names):
            raise ValueError(f"goal.trajectory.points[{k}].positions must have {len(names)} values")
        vel = pt.get("velocities") or [0.0] * len(names)
        if len(vel) != len(names):
            raise ValueError(f"goal.trajectory.points[{k}].velocities must have {len(names)} values or none")
        times.append(time_from_ros(pt.get("time_from_start"), f"goal.trajectory.points[{k}].time_from_start"))
        qs.append([float(pos[c]) for c in cols])
        qds.append([float(vel[c]) for c in cols])
    return JointTrajectoryGoal(list(joint_names), np.array(times), np.array(qs), np.array(qds))


def follow_joint_trajectory_from_ros(msg: Any, joint_names: Sequence[str]) -> tuple[list[float], float]:
    """``FollowJointTrajectoryGoal`` -> (final positions in ``joint_names`` order, duration s).

    Raises:
        ValueError: no points, joints missing, or lengths that do not match.
    """
    traj = _map(msg, "trajectory", "goal")
    names = traj.get("joint_names")
    points = traj.get("points")
    if not isinstance(names, list) or not isinstance(points, list) or not points:
        raise ValueError("goal.trajectory needs joint_names and at least one point")
    last = points[-1]
    pos = last.get("positions") if isinstance(last, Mapping) else None
    if not isinstance(pos, list) or len(pos) != len(names):
        raise ValueError(f"goal.trajectory.points[-1].positions must have {len(names)} values")
    missing = [j for j in joint_names if j not in names]
    if missing:
        raise ValueError(f"goal.trajectory.joint_names lacks {missing}")
    by_name = dict(zip(names, pos))
    T = time_from_ros(last.get("time_from_start"), "goal.trajectory.points[-1].time_from_start")
    return [float(by_name[j]) for j in joint_names], T


def fjt_feedback_to_ros(joint_names: Sequence[str], actual: Sequence[float], desired: Sequence[float]) -> dict[str, Any]:
    """control_msgs/FollowJointTrajectoryFeedback (ROS 1 field names): ``actual`` and ``desired``
    joint positions (radians, one per name) and ``error = desired - actual``; zero stamps."""
    def pt(v: Sequence[float]) -> dict[str, Any]:
        return {"positions": [float(x) for x in v], "velocities": [], "accelerations": [], "effort": [],
                "time_from_start": {"secs": 0, "nsecs": 0}}
    err = [d - a for a, d in zip(actual, desired)]
    return {"header": {"seq": 0, "stamp": {"secs": 0, "nsecs": 0}, "frame_id": ""}, "joint_names": list(joint_names),
            "desired": pt(desired), "actual": pt(actual), "error": pt(err)}


def fjt_feedback_from_ros(msg: Any, joint_names: Sequence[str]) -> tuple[list[float], list[float]]:
    """FollowJointTrajectoryFeedback -> (actual, desired) positions in ``joint_names`` order."""
    names = msg.get("joint_names") if isinstance(msg, Mapping) else None
    if not isinstance(names, list):
        raise ValueError("FollowJointTrajectory feedback: missing joint_names")
    act = _map(msg, "actual", "feedback").get("positions")
    des = _map(msg, "desired", "feedback").get("positions")
    if not isinstance(act, list) or not isinstance(des, list) or len(act) != len(names) or len(des) != len(names):
        raise ValueError("FollowJointTrajectory feedback: positions do not match joint_names")
    a, d = dict(zip(names, act)), dict(zip(names, des))
    try:
        return [float(a[j]) for j in joint_names], [float(d[j]) for j in joint_names]
    except KeyError as e:
        raise ValueError(f"FollowJointTrajectory feedback lacks joint {e.args[0]!r}") from None


def fjt_result_from_ros(msg: Any) -> tuple[int, str]:
    """FollowJointTrajectoryResult -> (error_code, error_string)."""
    code = int(_num(msg, "error_code", "FollowJointTrajectory result"))
    text = msg.get("error_string", "") if isinstance(msg, Mapping) else ""
    return code, str(text or "")


def cartesian_goal_to_ros(action: str, goal: Any, frame_id: str = "world") -> dict[str, Any]:
    """``MoveToPoseGoal`` / ``MoveCartesianGoal`` -> ``ptm_msgs/MoveToPoseGoal`` / ``MoveCartesianGoal``."""
    if action == "move_to_pose":
        if not isinstance(goal, MoveToPoseGoal):
            raise TypeError(f"move_to_pose takes a MoveToPoseGoal, got {type(goal).__name__}")
        return {"target": pose_stamped_to_ros(goal.pose, frame_id), "velocity_scaling": float(goal.velocity_scaling),
                "position_tolerance": float(goal.position_tolerance_m),
                "orientation_tolerance": float(goal.orientation_tolerance_rad)}
    if not isinstance(goal, MoveCartesianGoal):
        raise TypeError(f"move_cartesian takes a MoveCartesianGoal, got {type(goal).__name__}")
    return {"target": pose_stamped_to_ros(goal.pose, frame_id), "linear_speed": float(goal.speed_mps),
            "max_force": float(goal.max_force_n) if goal.max_force_n is not None else 0.0,
            "contact_speed": float(goal.contact_speed_mps) if goal.contact_speed_mps is not None else 0.0,
            "position_tolerance": float(goal.position_tolerance_m)}


def cartesian_goal_from_ros(action: str, msg: Any) -> Any:
    """The inverse of :func:`cartesian_goal_to_ros` (raises ValueError on a malformed goal)."""
    pose = pose_stamped_from_ros(_map(msg, "target", "goal"), "goal.target")
    if action == "move_to_pose":
        return MoveToPoseGoal(pose=pose, velocity_scaling=_num(msg, "velocity_scaling", "goal"),
                              position_tolerance_m=_num(msg, "position_tolerance", "goal"),
                              orientation_tolerance_rad=_num(msg, "orientation_tolerance", "goal"))
    force = _num(msg, "max_force", "goal")
    contact = _num(msg, "contact_speed", "goal") if isinstance(msg, Mapping) and "contact_speed" in msg else 0.0
    return MoveCartesianGoal(pose=pose, speed_mps=_num(msg, "linear_speed", "goal"),
                             max_force_n=force if force > 0 else None,
                             position_tolerance_m=_num(msg, "position_tolerance", "goal"),
                             contact_speed_mps=contact if contact > 0 else None)


def motion_result_to_ros(result: Any, text: str = "", frame_id: str = "world") -> dict[str, Any]:
    """``MotionResult`` -> ptm_msgs result (pose stamped in ``frame_id``, metres); anything else
    (no result) -> an identity pose with ``position_error = -1``, which :func:`motion_result_from_ros`
    reads back as None. ``text`` goes into ``error_string``."""
    if not isinstance(result, MotionResult):
        return {"pose": pose_stamped_to_ros(np.eye(4), frame_id), "position_error": -1.0,
                "stopped_on_contact": False, "error_string": text}
    return {"pose": pose_stamped_to_ros(result.tcp_pose, frame_id), "position_error": float(result.position_error_m),
            "stopped_on_contact": bool(result.stopped_on_contact), "error_string": text}


def motion_result_from_ros(msg: Any) -> Optional[MotionResult]:
    """ptm_msgs result -> ``MotionResult`` (None when the server sent no pose: position_error < 0)."""
    err = _num(msg, "position_error", "result")
    if err < 0:
        return None
    return MotionResult(tcp_pose=pose_stamped_from_ros(_map(msg, "pose", "result"), "result.pose"),
                        position_error_m=err, stopped_on_contact=bool(msg.get("stopped_on_contact", False)))


def motion_feedback_to_ros(fb: MotionFeedback, frame_id: str = "world") -> dict[str, Any]:
    """``MotionFeedback`` -> ptm_msgs feedback: TCP pose stamped in ``frame_id``, ``distance`` (m), ``progress`` (0..1)."""
    return {"pose": pose_stamped_to_ros(fb.tcp_pose, frame_id), "distance": float(fb.distance_m),
            "progress": float(fb.progress)}


def motion_feedback_from_ros(msg: Any) -> MotionFeedback:
    """ptm_msgs feedback -> ``MotionFeedback``. Raises ValueError naming a missing or non-numeric field."""
    return MotionFeedback(tcp_pose=pose_stamped_from_ros(_map(msg, "pose", "feedback"), "feedback.pose"),
                          distance_m=_num(msg, "distance", "feedback"), progress=_num(msg, "progress", "feedback"))
