"""The robot file: where the robot's rosbridge is and which ROS names serve which backend action.

Schema (every key optional unless marked; units in the names)::

    rosbridge:
      host: 127.0.0.1              # required
      port: 9090                   # default 9090
      secure: false                # wss://
      connect_timeout_s: 5.0       # websocket connection
    protocol: ros1                 # ROS 1 actionlib over topics (the PR2 gripper sensor servers), or
                                   # ros2: rosbridge v2 actions (send_action_goal; types pkg/action/Name,
                                   # derived from the ROS 1 names when given as pkg/NameAction)
    clock: wall                    # 'wall' (seconds since connect) or a rosgraph_msgs/Clock topic, e.g. /clock
    world_frame: world             # frame_id of every pose we send and expect
    timeouts:
      server_s: 3.0                # each action server's first status message at connect
      topic_s: 3.0                 # first message of each state topic at connect
      ack_s: 2.0                   # a goal must show up in the server's status list within this
      status_s: 2.0                # an active goal's server must publish status at least this often
      result_s: 2.0                # a goal whose status is terminal must have its result within this
      service_s: 2.0               # the metrics service (and rosapi's services at connect)
    metrics_service: /ptm/metrics  # std_srvs/Trigger whose message is a JSON object of run metrics
    arms:
      NAME:                        # the resource name behaviours use (arm: NAME)
        description: franka_panda  # the robot description (a stock model or a .yaml path relative to
                                   # this file): the defaults of the next four keys
        joint_names: [...]         # required without a description (default: its arm joints)
        max_joint_velocity_rps: [...]   # required without a description, same length: times
                                        # FollowJointTrajectory goals (default: its velocity limits)
        max_joint_acceleration_rps2: [...]   # for the motion planner (default: the description's)
        named_configurations: {ready: [...]}  # added to (and overriding) the description's
        joint_states_topic: /joint_states          # sensor_msgs/JointState
        tcp_pose_topic: /r_arm_controller/tcp_pose  # geometry_msgs/PoseStamped (needed by MoveCartesian delta)
        actions:
          move_joints: {action: /r_arm_controller/follow_joint_trajectory}   # control_msgs/FollowJointTrajectoryAction
          move_to_pose: {action: ..., type: ptm_msgs/MoveToPoseAction}       # optional
          move_cartesian: {action: ..., type: ptm_msgs/MoveCartesianAction}  # optional
    grippers:
      NAME:
        description: franka_panda                 # its opening range (GripperCommand position: open)
        max_gap_m: 0.08                           # fully open finger gap (default: the description's)
        namespace: /r_gripper_sensor_controller   # all seven PR2 actions under it, or list them:
        actions: {gripper_action: {action: ...}, find_contact: {action: ..., type: ...}, ...}
        joint_states_topic: /joint_states
        gap_joint: r_gripper_joint                # its position in joint_states is the gap, metres
    objects:
      NAME: {topic: /objects/NAME/pose}           # geometry_msgs/PoseStamped, world frame
      OTHER: {blackboard: other_pose}             # a (4, 4) pose under this blackboard key
      '*': {topic: '/objects/{name}/pose'}        # any other object: this topic template

``description`` names the same robot description files the simulator uses
(:mod:`py_trees_manipulation.robots`), so joint names, limits and named configurations are written
once; the robot file's own values override them (a driver may name the joints differently). An
action not listed is not offered: a tree that uses it is refused before it starts. Errors are
:class:`RobotFileError` (a :class:`~py_trees_manipulation.located.errors.TreeLoadError` whose lines
read ``FILE:LINE:COL: what; how to fix``).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

from ..robots import RobotDescription, RobotDescriptionError, UnknownModelError, resolve_model
from ..located import locyaml
from ..located.errors import Loc, Problem, ProblemCollector, TreeLoadError, did_you_mean
from .convert import ARM_ACTIONS, DEFAULT_ACTION_TYPES, GRIPPER_ACTIONS

PR2_GRIPPER_NAMESPACES = ("/r_gripper_sensor_controller", "/l_gripper_sensor_controller")


class RobotFileError(TreeLoadError, ValueError):
    """An invalid robot file (``str()``: one ``FILE:LINE:COL: problem`` line each)."""


@dataclass
class ActionConfig:
    """One ROS action: its namespace (``/r_gripper_sensor_controller/find_contact``) and ROS 1 type."""

    name: str
    type: str


@dataclass
class ArmConfig:
    """An ``arms:`` entry. ``description`` is the robot description it names (or None): the motion
    planner and the checks read the robot's limits and collision pairs from it."""

    name: str
    joint_names: list[str]
    max_joint_velocity_rps: list[float]
    named_configurations: dict[str, list[float]] = field(default_factory=dict)
    joint_states_topic: str = "/joint_states"
    tcp_pose_topic: Optional[str] = None
    actions: dict[str, ActionConfig] = field(default_factory=dict)
    max_joint_acceleration_rps2: Optional[list[float]] = None
    description: Optional[RobotDescription] = None


@dataclass
class GripperConfig:
    """A ``grippers:`` entry; ``max_gap_m`` / ``min_gap_m``: its opening range, m (None: unknown)."""

    name: str
    actions: dict[str, ActionConfig] = field(default_factory=dict)
    joint_states_topic: str = "/joint_states"
    gap_joint: Optional[str] = None
    max_gap_m: Optional[float] = None
    min_gap_m: float = 0.0
    description: Optional[RobotDescription] = None


@dataclass
class ObjectConfig:
    name: str
    topic: Optional[str] = None
    blackboard: Optional[str] = None


@dataclass
class RobotConfig:
    """A validated robot file (see the module docstring for the keys)."""

    file: str
    host: str
    port: int = 9090
    secure: bool = False
    connect_timeout_s: float = 5.0
    protocol: str = "ros1"
    clock: str = "wall"
    world_frame: str = "world"
    server_timeout_s: float = 3.0
    topic_timeout_s: float = 3.0
    ack_timeout_s: float = 2.0
    status_timeout_s: float = 2.0
    result_timeout_s: float = 2.0
    service_timeout_s: float = 2.0
    metrics_service: Optional[str] = None
    arms: dict[str, ArmConfig] = field(default_factory=dict)
    grippers: dict[str, GripperConfig] = field(default_factory=dict)
    objects: dict[str, ObjectConfig] = field(default_factory=dict)
    object_topic_template: Optional[str] = None

    def object_config(self, name: str) -> Optional[ObjectConfig]:
        """Where object ``name``'s pose comes from: its own entry, else the ``'*'`` template, else None."""
        if name in self.objects:
            return self.objects[name]
        if self.object_topic_template:
            return ObjectConfig(name, topic=self.object_topic_template.replace("{name}", name))
        return None

    @property
    def url(self) -> str:
        return f"{'wss' if self.secure else 'ws'}://{self.host}:{self.port}"

    def offered(self) -> dict[str, dict[str, frozenset[str]]]:
        """``{"arm": {name: actions}, "gripper": {name: actions}}``: what the robot file offers."""
        return {"arm": {n: frozenset(a.actions) for n, a in self.arms.items()},
                "gripper": {n: frozenset(g.actions) for n, g in self.grippers.items()}}


class _Checker(ProblemCollector):
    def mapping(self, parent: Any, key: str, allowed: tuple[str, ...], required: bool = False) -> Optional[dict]:
        if key not in parent:
            if required:
                self.err(parent.loc, f"missing '{key}:' section")
            return None
        value = parent[key]
        if not isinstance(value, dict):
            self.err(parent.value_loc(key), f"'{key}' must be a mapping")
            return None
        self.keys(value, allowed, key)
        return value

    def entries(self, parent: Any, key: str, allowed: tuple[str, ...]) -> Iterator[tuple[Any, Any, str]]:
        """Each entry of the section ``key`` (a mapping of any names to mappings): ``(name, its
        mapping, where)``, its keys checked against ``allowed``; an entry that is no mapping is
        reported and left out."""
        value = parent.get(key)
        section = self.mapping(parent, key, tuple(value or ()) if isinstance(value, dict) else ())
        for name, m in (section or {}).items():
            where = f"{key}.{name}"
            if not isinstance(m, dict):
                self.err(section.value_loc(name), f"{where} must be a mapping")
                continue
            self.keys(m, allowed, where)
            yield name, m, where

    def keys(self, m: Any, allowed: tuple[str, ...], where: str) -> None:
        for k in m:
            if k not in allowed:
                hint = did_you_mean(k, allowed) or f"allowed: {', '.join(allowed)}"
                self.err(m.key_loc(k), f"unknown key {k!r} in {where}", hint)

    def value(self, m: Any, key: str, kind: str, default: Any, where: str, positive: bool = False) -> Any:
        if m is None or key not in m:
            return default
        v = m[key]
        loc = m.value_loc(key)
        ok = {"str": isinstance(v, str) and v != "", "bool": isinstance(v, bool),
              "int": isinstance(v, int) and not isinstance(v, bool),
              "float": isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(float(v))}[kind]
        if not ok:
            self.err(loc, f"{where}.{key} must be a {'non-empty string' if kind == 'str' else kind}, got {v!r}")
            return default
        if positive and v <= 0:
            self.err(loc, f"{where}.{key} must be > 0, got {v!r}")
            return default
        return float(v) if kind == "float" else v

    def description(self, m: Any, where: str) -> Optional[RobotDescription]:
        """The robot description ``m['description']`` names (a stock model or a path relative to the
        robot file), or None; its own problems are reported at their lines in its file."""
        name = self.value(m, "description", "str", None, where)
        if name is None:
            return None
        try:
            return resolve_model(name, os.path.dirname(os.path.abspath(self.file)))
        except UnknownModelError as e:
            self.err(m.value_loc("description"), f"{where}.description: {e.message}", e.hint)
        except RobotDescriptionError as e:
            self.err(m.value_loc("description"), f"{where}.description: the robot description {name!r} is invalid "
                     f"({len(e.problems)} problem{'s' if len(e.problems) != 1 else ''}, below)")
            self.problems.extend(e.problems)
        return None

    def topic(self, m: Any, key: str, default: Optional[str], where: str) -> Optional[str]:
        t = self.value(m, key, "str", default, where)
        if t is not None and not t.startswith("/"):
            self.err(m.value_loc(key), f"{where}.{key} must be an absolute ROS name (start with '/'), got {t!r}")
        return t

    def float_list(self, m: Any, key: str, where: str, n: Optional[int] = None) -> Optional[list[float]]:
        if key not in m:
            return None
        v = m[key]
        if not isinstance(v, list) or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
            self.err(m.value_loc(key), f"{where}.{key} must be a list of numbers")
            return None
        if n is not None and len(v) != n:
            self.err(m.value_loc(key), f"{where}.{key} must have {n} values (one per joint), got {len(v)}")
            return None
        return [float(x) for x in v]

    def actions(self, m: Any, where: str, allowed: tuple[str, ...]) -> dict[str, ActionConfig]:
        out: dict[str, ActionConfig] = {}
        acts = self.mapping(m, "actions", allowed)
        for name, spec in (acts or {}).items():
            if name not in allowed:
                continue
            loc = acts.value_loc(name)
            if not isinstance(spec, dict):
                self.err(loc, f"{where}.actions.{name} must be a mapping like {{action: /ns/{name}}}")
                continue
            self.keys(spec, ("action", "type"), f"{where}.actions.{name}")
            if "action" not in spec:
                self.err(spec.loc, f"{where}.actions.{name} needs 'action:' (the ROS action namespace)")
                continue
            ns = self.topic(spec, "action", None, f"{where}.actions.{name}")
            typ = self.value(spec, "type", "str", DEFAULT_ACTION_TYPES[name], f"{where}.actions.{name}")
            if typ is not None and not typ.endswith("Action") and "/action/" not in typ:
                self.err(spec.value_loc("type"), f"{where}.actions.{name}.type must be a ROS 1 action type "
                         f"ending in 'Action' (e.g. {DEFAULT_ACTION_TYPES[name]}) or a ROS 2 one "
                         f"(pkg/action/Name), got {typ!r}")
            if ns:
                out[name] = ActionConfig(ns.rstrip("/"), typ)
        return out


def parse_robot_file(data: Any, file: str) -> RobotConfig:
    """Validate a loaded robot file (locyaml mapping). Raises :class:`RobotFileError` listing every problem."""
    c = _Checker(file)
    if not isinstance(data, dict) or not hasattr(data, "loc"):
        raise RobotFileError([Problem(Loc(file, 1, 1), "a robot file is a YAML mapping (rosbridge:, arms:, grippers:...)")])
    c.keys(data, ("rosbridge", "protocol", "clock", "world_frame", "timeouts", "metrics_service", "arms",
                  "grippers", "objects"), "the robot file")
    rb = c.mapping(data, "rosbridge", ("host", "port", "secure", "connect_timeout_s"), required=True)
    host = c.value(rb, "host", "str", None, "rosbridge") if rb is not None else None
    if rb is not None and "host" not in rb:
        c.err(rb.loc, "rosbridge needs 'host:' (the robot's rosbridge_server address)")
    cfg = RobotConfig(file=file, host=host or "")
    if rb is not None:
        cfg.port = c.value(rb, "port", "int", 9090, "rosbridge")
        if not 0 < cfg.port < 65536:
            c.err(rb.value_loc("port"), f"rosbridge.port must be in 1..65535, got {cfg.port}")
        cfg.secure = c.value(rb, "secure", "bool", False, "rosbridge")
        cfg.connect_timeout_s = c.value(rb, "connect_timeout_s", "float", 5.0, "rosbridge", positive=True)
    cfg.protocol = c.value(data, "protocol", "str", "ros1", "robot file")
    if cfg.protocol not in ("ros1", "ros2"):
        c.err(data.value_loc("protocol"), f"protocol {cfg.protocol!r} is not supported",
              "use 'ros1' (actionlib over topics, as the PR2 gripper sensor servers use) or 'ros2' "
              "(rosbridge_suite >= 2.0 actions: send_action_goal)")
    cfg.clock = c.value(data, "clock", "str", "wall", "robot file")
    if cfg.clock != "wall" and not cfg.clock.startswith("/"):
        c.err(data.value_loc("clock"), f"clock must be 'wall' or a rosgraph_msgs/Clock topic like /clock, got {cfg.clock!r}")
    cfg.world_frame = c.value(data, "world_frame", "str", "world", "robot file")
    cfg.metrics_service = c.topic(data, "metrics_service", None, "robot file")
    to = c.mapping(data, "timeouts", ("server_s", "topic_s", "ack_s", "status_s", "result_s", "service_s"))
    for key, attr in (("server_s", "server_timeout_s"), ("topic_s", "topic_timeout_s"), ("ack_s", "ack_timeout_s"),
                      ("status_s", "status_timeout_s"), ("result_s", "result_timeout_s"),
                      ("service_s", "service_timeout_s")):
        setattr(cfg, attr, c.value(to, key, "float", getattr(cfg, attr), "timeouts", positive=True))

    for name, a, where in c.entries(data, "arms", (
            "description", "joint_names", "max_joint_velocity_rps", "max_joint_acceleration_rps2",
            "named_configurations", "joint_states_topic", "tcp_pose_topic", "actions")):
        desc = c.description(a, where)
        jn = a.get("joint_names")
        if jn is None and desc is not None:
            jn = list(desc.arm_joint_names)
        elif not isinstance(jn, list) or not jn or not all(isinstance(j, str) for j in jn):
            c.err(a.value_loc("joint_names") if "joint_names" in a else a.loc,
                  f"{where} needs joint_names: a list of joint names",
                  "" if "description" in a else "or description: a robot model whose arm joints these are")
            jn = []
        elif desc is not None and len(jn) != desc.dof:
            c.err(a.value_loc("joint_names"), f"{where}.joint_names has {len(jn)} names but the description "
                  f"{desc.name!r} has {desc.dof} arm joints ({', '.join(desc.arm_joint_names)})")
        vmax = c.float_list(a, "max_joint_velocity_rps", where, len(jn) or None)
        if vmax is None and "max_joint_velocity_rps" not in a and desc is not None:
            vmax = list(desc.velocity_limits) or [lim[3] for lim in desc.arm_urdf_limits]
        if vmax is None and "max_joint_velocity_rps" not in a:
            c.err(a.loc, f"{where} needs max_joint_velocity_rps (rad/s per joint) to time FollowJointTrajectory goals",
                  "or description: a robot model with velocity limits")
        elif vmax is not None and any(v <= 0 for v in vmax):
            c.err(a.value_loc("max_joint_velocity_rps"), f"{where}.max_joint_velocity_rps must all be > 0")
        amax = c.float_list(a, "max_joint_acceleration_rps2", where, len(jn) or None)
        if amax is not None and any(v <= 0 for v in amax):
            c.err(a.value_loc("max_joint_acceleration_rps2"), f"{where}.max_joint_acceleration_rps2 must all be > 0")
        if amax is None and desc is not None:
            amax = list(desc.acceleration_limits) or [5.0 * v for v in (vmax or [])] or None
        named: dict[str, list[float]] = {k: list(v) for k, v in (desc.named_configurations.items() if desc else ())}
        nc = c.mapping(a, "named_configurations", tuple(a.get("named_configurations") or ()) if isinstance(a.get("named_configurations"), dict) else ())
        for cname in (nc or {}):
            q = c.float_list(nc, cname, f"{where}.named_configurations", len(jn) or None)
            if q is not None:
                named[str(cname)] = q
        arm = ArmConfig(name=str(name), joint_names=list(jn), max_joint_velocity_rps=vmax or [1.0] * len(jn),
                        named_configurations=named,
                        joint_states_topic=c.topic(a, "joint_states_topic", "/joint_states", where),
                        tcp_pose_topic=c.topic(a, "tcp_pose_topic", None, where),
                        actions=c.actions(a, where, ARM_ACTIONS), max_joint_acceleration_rps2=amax, description=desc)
        if "move_joints" not in arm.actions and "move_to_pose" not in arm.actions and "move_cartesian" not in arm.actions:
            c.err(a.loc, f"{where} offers no action", "add actions: {move_joints: {action: /NS/follow_joint_trajectory}}")
        cfg.arms[arm.name] = arm

    for name, g, where in c.entries(data, "grippers", (
            "description", "max_gap_m", "namespace", "actions", "joint_states_topic", "gap_joint")):
        gdesc = c.description(g, where)
        max_gap = c.value(g, "max_gap_m", "float", gdesc.max_gap_m if gdesc else None, where, positive=True)
        acts: dict[str, ActionConfig] = {}
        ns = c.topic(g, "namespace", None, where)
        if ns:
            acts = {a: ActionConfig(ns.rstrip("/") + "/" + a, DEFAULT_ACTION_TYPES[a]) for a in GRIPPER_ACTIONS}
        acts.update(c.actions(g, where, GRIPPER_ACTIONS))
        if not acts:
            c.err(g.loc, f"{where} offers no action", "add namespace: /r_gripper_sensor_controller, or actions: {...}")
        cfg.grippers[str(name)] = GripperConfig(name=str(name), actions=acts,
                                                joint_states_topic=c.topic(g, "joint_states_topic", "/joint_states", where),
                                                gap_joint=c.value(g, "gap_joint", "str", None, where),
                                                max_gap_m=max_gap, min_gap_m=gdesc.min_gap_m if gdesc else 0.0,
                                                description=gdesc)

    objs = c.mapping(data, "objects", tuple(data.get("objects") or ()) if isinstance(data.get("objects"), dict) else ())
    for name, o in (objs or {}).items():
        where = f"objects.{name}"
        if name == "*":
            if not isinstance(o, dict) or set(o) != {"topic"} or not isinstance(o["topic"], str) \
                    or "{name}" not in o["topic"] or not o["topic"].startswith("/"):
                c.err(objs.value_loc(name), "objects.'*' must be {topic: /objects/{name}/pose}: a topic "
                      "template with {name}, for every object the tree names")
                continue
            cfg.object_topic_template = o["topic"]
            continue
        if not isinstance(o, dict) or len(o) != 1 or next(iter(o)) not in ("topic", "blackboard"):
            c.err(objs.value_loc(name), f"{where} must be {{topic: /objects/{name}/pose}} or {{blackboard: KEY}}")
            continue
        cfg.objects[str(name)] = ObjectConfig(str(name), topic=c.topic(o, "topic", None, where),
                                              blackboard=c.value(o, "blackboard", "str", None, where))
    if not cfg.arms and not cfg.grippers:
        c.err(data.loc, "the robot file names no arm and no gripper")
    if c.problems:
        raise RobotFileError(c.problems)
    return cfg


def load_robot_file(path: str) -> RobotConfig:
    """Load and validate a robot file.

    Raises:
        RobotFileError: unreadable, not YAML, or invalid (every problem with FILE:LINE:COL).
    """
    try:
        data = locyaml.load(path)
    except TreeLoadError as e:
        raise RobotFileError(e.problems) from None
    except OSError as e:
        raise RobotFileError([Problem(Loc(path, 0, 0), f"cannot read the robot file: {e.strerror or e}")]) from None
    return parse_robot_file(data, path)
