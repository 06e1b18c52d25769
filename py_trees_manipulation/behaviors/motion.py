"""Arm and gripper motion behaviours: action clients on ``arms[...]`` and ``grippers[...]``.

Behaviours: ``MoveToPose``, ``MoveCartesian``, ``MoveJoints``, ``GripperCommand``.

Pitfalls:
  - Poses are the **TCP** (tool centre point, between the fingertips) in the world frame.
  - ``offset`` is applied in the **target's** frame (``target @ offset``): with an object frame
    whose z points up, ``offset: {position: [0, 0, 0.1]}`` is 10 cm above it.
  - ``orientation_rpy_deg`` replaces the target's rotation (world frame, static x-y-z), e.g.
    ``[180, 0, 0]`` for a top-down grasp whatever the object's yaw; ``yaw_from_target`` keeps the
    object's yaw on top of it.
  - ``world_offset`` is added last, in the world frame: ``[0, 0, 0.12]`` is a stand-off 12 cm above
    the composed target whatever its orientation.
  - Order: ``target @ offset``, then the rotation override, then ``world_offset``.

Collisions: every motion is checked against the scene before the robot moves (the backend's
collision world: fixtures, objects, doors, other robots, the held object, a padding); one that would
collide fails before moving, naming the link, the body and where ("panda_link6 would hit shelf at
40% of the path"). ``MoveJoints`` and ``MoveToPose`` take ``planner``: ``auto`` (default: the
straight joint motion when it is collision-free, else planned with OMPL's RRTConnect), ``straight``
(fail rather than plan) or an OMPL planner name; the behaviour is RUNNING with "planning (...)" as
its feedback while the plan is computed (sim time stands still meanwhile; a robot holds still). The
fingers may touch what the TCP target lies in (a grasp), contacts present at the start may stay,
and a force-guarded ``MoveCartesian`` (``max_force_n``) may end in contact; ``allowed_contacts``
names more (``[box]``: the hand or the held object may touch ``box``; ``["box:table"]``: the held
box may touch the table).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from py_trees.common import Status

from ..geometry.poses import pose_from_xyz_rpy, rpy_from_pose
from ..motion import PLANNER_CHOICES
from ..msgs.motion import (
    MotionFeedback,
    MotionResult,
    MoveCartesianGoal,
    MoveJointsGoal,
    MoveToPoseGoal,
    Pr2GripperCommand,
    Pr2GripperCommandResult,
)
from .base import BackendAction
from .params import REQUIRED, Param

_TARGET_PARAMS = {
    "target": Param("pose", None, "target pose of the TCP (or a blackboard key such as '{mug_pose}')", frame="world"),
    "offset": Param("pose", None, "offset applied in the target's frame (e.g. 0.1 m above it)", frame="target"),
    "orientation_rpy_deg": Param("vector3", None, "replace the target's rotation by this roll/pitch/yaw (world, degrees)", unit="deg"),
    "yaw_from_target": Param("bool", False, "with orientation_rpy_deg: add the target's yaw (grasp aligned with the object)", blackboard=False),
    "world_offset": Param("vector3", None, "displacement added last, in the world frame (e.g. a stand-off above)", unit="m", frame="world"),
}


def _compose_target(b: BackendAction, target: np.ndarray) -> np.ndarray:
    T = np.array(target, dtype=float)
    offset = b.param("offset")
    if offset is not None:
        T = T @ offset
    rpy = b.param("orientation_rpy_deg")
    if rpy is not None:
        r, p, y = np.radians(rpy)
        if b.params.get("yaw_from_target"):
            # fold the object's yaw into [-90, 90] deg: a parallel gripper is symmetric under a half turn
            yaw = float(rpy_from_pose(np.array(target, dtype=float))[2])
            yaw = (yaw + np.pi / 2) % np.pi - np.pi / 2
            y = y - yaw if abs(r) > np.pi / 2 else y + yaw
        T[:3, :3] = pose_from_xyz_rpy([0, 0, 0], [r, p, y])[:3, :3]
    world_offset = b.param("world_offset")
    if world_offset is not None:
        T[:3, 3] += np.asarray(world_offset, dtype=float)
    return T


def _describe_gap(feedback: Pr2GripperCommandResult) -> str:
    return f"gap {feedback.position * 1000:.1f} mm, effort {feedback.effort:.1f} N"


def _fmt_xyz(T: np.ndarray) -> str:
    # Python floats: formatting a NumPy scalar costs several times more (this runs at every tick)
    return "({:.3f}, {:.3f}, {:.3f})".format(*T[:3, 3].tolist())


_PLANNING_PARAMS = {
    "planner": Param("choice", "auto", "'auto' (straight joint motion when collision-free, else planned), 'straight', "
                     "or an OMPL planner", choices=PLANNER_CHOICES, blackboard=False),
    "planning_time_s": Param("float", 2.0, "time budget of the planner", unit="s", min=0.01, max=60.0),
    "acceleration_scaling": Param("float", 0.5, "fraction of the joint acceleration limits", min=0.01, max=1.0),
}
_ALLOWED = Param("any", None, "contacts the motion may make: ['box'] (hand or held object with box), "
                 "['box:table'] (the held box with the table)", blackboard=False)


def _allowed_contacts(b: BackendAction) -> tuple[str, ...]:
    value = b.params.get("allowed_contacts")
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) and v for v in value):
        raise ValueError(f"allowed_contacts must be a list of names ('box' or 'box:table'), got {value!r}")
    return tuple(value)


def _planning_feedback(feedback: MotionFeedback) -> str:
    """``"planning (RRTConnect) 0.35 s ..."`` while the motion is being planned, else ``""``."""
    if getattr(feedback, "phase", "executing") != "planning":
        return ""
    return f"planning ({feedback.planner or 'auto'}) {feedback.planning_time_s:.2f} s ..."


def plan_key(b: Any) -> str:
    """The key of a motion node's goal (``plan_key``): its name and place in the task file (the
    node's spec, set by the tree factory and by ``ptm validate --plan``'s dry run), "" without one.
    The check before the run keeps its plans under it, and the run's motion of the same node takes
    the plan kept for it (:mod:`py_trees_manipulation.collision.kept_plans`)."""
    spec = getattr(b, "spec", None)
    return "" if spec is None else f"{spec.name or spec.type} at {spec.loc}"


class _ArmMotion(BackendAction):
    """An arm motion: its :class:`MotionFeedback` described by :meth:`_describe` (deferred: formatted
    only when the message is read), with why the plan of the check before the run was not used
    when it was not (the feedback's ``note``)."""

    ABSTRACT = True

    def on_feedback(self, feedback: Any) -> None:
        if isinstance(feedback, MotionFeedback):
            self.defer_feedback_message(self._describe_noted if feedback.note else self._describe, feedback)

    def _describe_noted(self, feedback: MotionFeedback) -> str:
        return f"{self._describe(feedback)} ({feedback.note})"

    def _describe(self, feedback: MotionFeedback) -> str:  # pragma: no cover  (every motion defines it)
        raise NotImplementedError


class MoveToPose(_ArmMotion):
    """Move the arm's TCP to a target pose (IK, then a collision-checked joint motion, planned when needed).

    RUNNING while the motion is planned and while the arm moves; SUCCESS when the TCP is within
    ``position_tolerance_m``; FAILURE before moving when the target is out of reach (the reason names
    the IK distance), only reachable in collision (the colliding link and body), or no
    collision-free path is found within ``planning_time_s``; FAILURE when the goal is aborted.

    Args:
        target: target pose, world frame (literal or ``"{key}"``); see module notes.
        offset: pose applied in the target's frame, e.g. ``{position: [0, 0, 0.1]}``.
        orientation_rpy_deg: replace the rotation (world frame, degrees).
        velocity_scaling, acceleration_scaling: fractions of the joint limits, (0, 1].
        position_tolerance_m: accepted final TCP error, metres.
        planner: ``auto``, ``straight`` or an OMPL planner (module notes). planning_time_s: its budget.
        ik_seed: joint positions, radians, arm order, tried first for the target's IK (default: the
            arm's configuration now, then ``ready``): picks the branch the arm ends in, e.g. a
            configuration a plan checked, or an elbow-up one.

    Blackboard:
        reads the keys named in ``{...}`` parameters; writes ``result_key``
        (:class:`~py_trees_manipulation.msgs.motion.MotionResult`) and ``feedback_key``.

    Example:
        .. code-block:: yaml

            - MoveToPose:
                name: pregrasp
                target: "{mug_pose}"
                offset: {position: [0, 0, 0.10]}
                orientation_rpy_deg: [180, 0, 0]
    """

    ABSTRACT = False
    ACTION = "move_to_pose"
    PARAMS = {
        **_TARGET_PARAMS,
        "target": Param("pose", REQUIRED, "target pose of the TCP, world frame, or '{key}'", frame="world"),
        "velocity_scaling": Param("float", 0.5, "fraction of the joint velocity limits", min=0.01, max=1.0),
        "position_tolerance_m": Param("float", 0.01, "accepted final TCP position error", unit="m", min=0.0001, max=0.5),
        **_PLANNING_PARAMS,
        "allowed_contacts": _ALLOWED,
        "ik_seed": Param("float_list", None, "joint positions tried first for the target's IK: the arm takes the "
                         "solution nearest them when it is collision-free (a branch: elbow up, wrist turned)", unit="rad"),
    }

    def make_goal(self) -> MoveToPoseGoal:
        target = self.param("target")
        if target is None:
            raise ValueError("no target pose")
        self._target = _compose_target(self, target)
        return MoveToPoseGoal(pose=self._target, velocity_scaling=self.param("velocity_scaling"),
                              position_tolerance_m=self.param("position_tolerance_m"),
                              planner=self.params["planner"], planning_time_s=self.param("planning_time_s"),
                              acceleration_scaling=self.param("acceleration_scaling"),
                              allowed_contacts=_allowed_contacts(self), ik_seed=self.param("ik_seed"),
                              plan_key=plan_key(self))

    def _describe(self, feedback: MotionFeedback) -> str:
        return _planning_feedback(feedback) or f"tcp {feedback.distance_m:.3f} m from target {_fmt_xyz(self._target)}"

    def on_success(self, result: Any) -> Status:
        err = result.position_error_m if isinstance(result, MotionResult) else float("nan")
        self.defer_feedback_message(self._describe_reached, err)
        return Status.SUCCESS

    def _describe_reached(self, err: float) -> str:
        return f"reached {_fmt_xyz(self._target)} (error {err * 1000:.1f} mm)"


class MoveCartesian(_ArmMotion):
    """Move the TCP along a straight line: approach, lift or retreat.

    The target is either ``target`` (a pose, with the same ``offset``/``orientation_rpy_deg`` rules
    as MoveToPose) or ``delta``: a displacement from the current TCP position, world frame, metres,
    keeping the orientation. The whole line is checked (IK and collisions) before it starts: RUNNING
    while it is checked and while moving; SUCCESS at the end of the line (or when the force guard
    ``max_force_n`` stops it on contact); FAILURE before moving when a waypoint is out of reach or the
    line would collide ("panda_hand would hit shelf at 40% of the straight line ...").

    A force-guarded line (``max_force_n``) that ends in contact (a place: the held object on the
    table) meets that contact slowly: from 1 cm before it, where the collision world says the hand
    or the held object first touches, it moves at ``contact_speed_mps``, by default the fastest at
    which the guard stops within twice its threshold (the contact's stiffness and damping, the
    robot's wrist force latency: ``scene/contact.py``). ``ptm validate`` refuses a ``max_force_n``
    below what the robot's wrist force sensing resolves and a ``contact_speed_mps`` too fast for
    the guard, each with the number that would do; a run refuses a ``contact_speed_mps`` too fast
    for the contact it meets, before moving.

    With ``held_object`` (a lift or a carry) the object must come along: its position in the TCP
    frame is taken when the motion starts, and once it has drifted from there by more than
    ``slip_tolerance_m`` (checked every tick and at the end) the motion is cancelled and the
    behaviour is FAILURE, e.g. ``box slipped out of the gripper: it came 0.001 m of the TCP's
    0.100 m (0.099 m from where the hand would have carried it; not lifted)``; a lift that leaves the
    object on the table never succeeds.
    An object heavier than what the arm may lift (its rated payload minus the gripper: robot
    description ``payload_kg``, ``gripper.mass_kg``; a scene's ``robots[].payload_kg`` overrides the
    rating) is refused as ``held_object``: exit 2 at ``ptm validate`` for a literal name, else FAILURE
    before the arm moves, with both masses (as :class:`ChooseGrasp` refuses to grasp it).

    Example:
        .. code-block:: yaml

            - MoveCartesian: {name: lift, delta: [0, 0, 0.15], speed_mps: 0.1, held_object: box}
    """

    ABSTRACT = False
    ACTION = "move_cartesian"
    EXACTLY_ONE_OF = (("target", "delta"),)
    PARAMS = {
        **_TARGET_PARAMS,
        "delta": Param("vector3", None, "displacement from the current TCP position, world frame", unit="m", frame="world"),
        "speed_mps": Param("float", 0.1, "TCP linear speed", unit="m/s", min=0.001, max=2.0),
        "max_force_n": Param("float", None, "stop on contact when the wrist force exceeds this (FAILURE when it "
                             "trips over 2 cm before the contact the scene expects)", unit="N", min=0.0),
        "contact_speed_mps": Param("float", None, "with max_force_n: speed at the expected contact (default: the "
                                   "fastest at which the guard stops within twice max_force_n)", unit="m/s",
                                   min=0.0001, max=2.0),
        "position_tolerance_m": Param("float", 0.01, "accepted final TCP position error", unit="m", min=0.0001, max=0.5),
        "allowed_contacts": _ALLOWED,
        "held_object": Param("str", None, "object the motion carries: FAILURE when it does not come along "
                             "(slipped out, left behind)", refers_to="object"),
        "slip_tolerance_m": Param("float", 0.02, "with held_object: how far the object may drift in the TCP frame",
                                  unit="m", min=0.001, max=0.5),
    }

    def make_goal(self) -> MoveCartesianGoal:
        target = self.param("target")
        delta = self.param("delta")
        if (target is None) == (delta is None):
            raise ValueError("give exactly one of 'target' and 'delta'")
        held = self.param("held_object")
        # the TCP is read only when the goal needs it (a delta, a held object's place in the hand)
        T_start = np.asarray(self.resource.tcp_pose(), dtype=float) if delta is not None or held is not None else None
        if target is not None:
            T = _compose_target(self, target)
        else:
            T = T_start.copy()
            T[:3, 3] += np.asarray(delta, dtype=float)
        self._target = T
        self._held: Any = None
        if held is not None:
            from ..scene.spec import payload_problem

            scene = getattr(self.backend, "scene", None)
            heavy = payload_problem(scene, held, getattr(self.resource, "name", None)) if scene is not None else None
            if heavy:  # the same refusal as ptm validate's, before the arm moves
                raise ValueError(heavy)
            world = getattr(self.backend, "world", None)
            if world is None:
                raise ValueError(f"held_object {held!r}: the backend has no world model to locate it")
            T_obj = np.asarray(world.object_pose(held), dtype=float)   # KeyError: no such object
            # (name, TCP at the start, object position in the TCP frame then)
            self._held = (held, T_start, (np.linalg.inv(T_start) @ np.append(T_obj[:3, 3], 1.0))[:3])
        return MoveCartesianGoal(pose=T, speed_mps=self.param("speed_mps"), max_force_n=self.param("max_force_n"),
                                 position_tolerance_m=self.param("position_tolerance_m"),
                                 allowed_contacts=_allowed_contacts(self),
                                 contact_speed_mps=self.param("contact_speed_mps"), plan_key=plan_key(self))

    @classmethod
    def scene_problems(cls, params: dict[str, Any], scene: Any) -> list[tuple[str, str, str]]:
        """Load-time checks (``ptm validate``; literal values only): a ``held_object`` heavier than
        what the arm may lift (:func:`~py_trees_manipulation.scene.spec.payload_problem`);
        ``max_force_n`` below what the robot's wrist force sensing resolves (its description's
        ``wrist_force_resolution_n``), and a ``contact_speed_mps`` at which the guard would not stop
        within twice its threshold on the stiffest support the scene has (a fixture's material with a
        rigid object: :func:`~py_trees_manipulation.scene.contact.guard_contact_speed`). Each
        problem names the number that would do: ``[(parameter, problem, hint)]``."""
        from ..scene.contact import (DEFAULT_WRIST_FORCE_LATENCY_S, DEFAULT_WRIST_FORCE_RESOLUTION_N, GUARD_BOUND,
                                     guard_contact_speed, guard_peak_n, pair_contact)

        out = []
        held, arm = params.get("held_object"), params.get("arm")
        if isinstance(held, str):
            from ..scene.spec import payload_problem

            heavy = payload_problem(scene, held, arm if isinstance(arm, str) else None)
            if heavy:
                out.append(("held_object", f"{cls.__name__}.held_object: {heavy}", ""))
        force, contact = params.get("max_force_n"), params.get("contact_speed_mps")
        number = (int, float)
        delta = params.get("delta")
        if (isinstance(delta, (list, tuple)) and len(delta) == 3 and scene.robots
                and all(isinstance(v, number) and not isinstance(v, bool) for v in delta)):
            r0 = next((r for r in scene.robots if r.name == arm), scene.robots[0])
            reach = float(getattr(getattr(r0, "description", None), "reach_m", 0.0) or 0.0)
            length = float(np.linalg.norm(np.asarray(delta, dtype=float)))
            if reach > 0 and length > 2.0 * reach:   # further than the arm's whole workspace spans
                out.append(("delta", f"{cls.__name__}.delta: {list(delta)} moves the hand {length:g} m, more than "
                            f"the whole workspace of robot {r0.name!r} spans (twice its {reach:.3f} m reach)",
                            "distances are metres (15 cm is 0.15)"))
        if not isinstance(force, number) or isinstance(force, bool) or not scene.robots:
            return out
        robot = next((r for r in scene.robots if r.name == arm), scene.robots[0])
        desc = getattr(robot, "description", None)
        resolution = float(getattr(desc, "wrist_force_resolution_n", DEFAULT_WRIST_FORCE_RESOLUTION_N))
        latency = float(getattr(desc, "wrist_force_latency_s", DEFAULT_WRIST_FORCE_LATENCY_S))
        if force < resolution:
            out.append(("max_force_n", f"{cls.__name__}.max_force_n: {force:g} N is below what {robot.name!r}'s wrist "
                        f"force sensing resolves ({resolution:g} N, its robot description's wrist_force_resolution_n): "
                        "the guard would trip on noise or never be told from it", f"use at least {resolution:g} N"))
        elif isinstance(contact, number) and not isinstance(contact, bool) and scene.fixtures:
            worst = None
            for f in scene.fixtures:
                k, d = pair_contact(None, f.contact_material())
                v = guard_contact_speed(force, k, d, latency)
                if worst is None or v < worst[0]:
                    worst = (v, f.name, k, d)
            v, name, k, d = worst
            if contact > v * (1 + 1e-9):
                peak = guard_peak_n(force, contact, k, d, latency)
                out.append(("contact_speed_mps", f"{cls.__name__}.contact_speed_mps: {contact:g} m/s is too fast for "
                            f"max_force_n {force:g} N: meeting {name!r} ({k:.3g} N/m, {d:.3g} N s/m over a face) the "
                            f"guard would stop at up to {peak:.0f} N, more than {GUARD_BOUND:g} x {force:g} N",
                            f"use at most {v:.4f} m/s, or leave contact_speed_mps out (the line then slows to what "
                            "its guard allows)"))
        return out

    _held: Any = None

    def on_feedback(self, feedback: Any) -> None:
        if self._held is not None:  # checked at every tick until the motion ends
            why = self._slipped()
            if why:
                self.abort_goal(why)
                return
        super().on_feedback(feedback)

    def _describe(self, feedback: MotionFeedback) -> str:
        return (_planning_feedback(feedback).replace("planning (line)", "checking the line")
                or f"tcp {feedback.distance_m:.3f} m from {_fmt_xyz(self._target)}")

    def _slipped(self) -> str:
        """Why the held object did not come along (``""`` while it does, or without ``held_object``)."""
        held = self._held
        if held is None:
            return ""
        name, T_start, p_rel = held
        T_tcp = np.asarray(self.resource.tcp_pose(), dtype=float)
        p_obj = np.asarray(self.backend.world.object_pose(name), dtype=float)[:3, 3]
        expected = (T_tcp @ np.append(p_rel, 1.0))[:3]       # where it would be, carried rigidly
        drift = float(np.linalg.norm(p_obj - expected))
        if drift <= self.param("slip_tolerance_m"):
            return ""
        p_start = (T_start @ np.append(p_rel, 1.0))[:3]
        tcp_moved = float(np.linalg.norm(T_tcp[:3, 3] - T_start[:3, 3]))
        came = float(np.dot(p_obj - p_start, T_tcp[:3, 3] - T_start[:3, 3]) / tcp_moved) if tcp_moved > 1e-9 else 0.0
        if came < 0.5 * tcp_moved:
            return (f"{name} slipped out of the gripper: it came {max(came, 0.0):.3f} m of the TCP's {tcp_moved:.3f} m "
                    f"({drift:.3f} m from where the hand would have carried it; not lifted)")
        return (f"{name} slipped {drift:.3f} m in the gripper during the motion (slip_tolerance_m "
                f"{self.param('slip_tolerance_m'):g})")

    def on_success(self, result: Any) -> Status:
        why = self._slipped()
        if why:
            return self.fail(why)
        self.defer_feedback_message(self._describe_reached, result)
        return Status.SUCCESS

    def _describe_reached(self, result: Any) -> str:
        if isinstance(result, MotionResult) and result.stopped_on_contact:
            return f"stopped on contact at {_fmt_xyz(result.tcp_pose)}"
        return f"reached {_fmt_xyz(self._target)}"


class MoveJoints(_ArmMotion):
    """Move the arm to a named configuration (e.g. ``ready``) or to joint positions in radians,
    collision-checked (and planned when the straight joint motion would collide; see the module notes).

    Example:
        .. code-block:: yaml

            - MoveJoints: {configuration: ready}
    """

    ABSTRACT = False
    ACTION = "move_joints"
    EXACTLY_ONE_OF = (("configuration", "positions"),)
    PARAMS = {
        "configuration": Param("str", None, "named configuration of the arm (e.g. 'ready')", refers_to="configuration"),
        "positions": Param("float_list", None, "joint positions in the arm's joint order", unit="rad"),
        "velocity_scaling": Param("float", 0.5, "fraction of the joint velocity limits", min=0.01, max=1.0),
        **_PLANNING_PARAMS,
        "allowed_contacts": _ALLOWED,
    }

    def make_goal(self) -> MoveJointsGoal:
        name = self.param("configuration")
        positions = self.param("positions")
        if (name is None) == (positions is None):
            raise ValueError("give exactly one of 'configuration' and 'positions'")
        if name is not None:
            named = getattr(self.resource, "named_configurations", {})
            if name not in named:
                raise ValueError(f"unknown configuration {name!r}; the arm has {sorted(named)}")
            positions = list(named[name])
        n = len(getattr(self.resource, "joint_names", positions))
        if len(positions) != n:
            raise ValueError(f"the arm has {n} joints, got {len(positions)} positions")
        self._label = name or "joint target"
        return MoveJointsGoal(positions=list(positions), velocity_scaling=self.param("velocity_scaling"),
                              planner=self.params["planner"], planning_time_s=self.param("planning_time_s"),
                              acceleration_scaling=self.param("acceleration_scaling"),
                              allowed_contacts=_allowed_contacts(self), plan_key=plan_key(self))

    def _describe(self, feedback: MotionFeedback) -> str:
        return _planning_feedback(feedback) or f"moving to {self._label}: {100 * feedback.progress:.0f}%"

    def on_success(self, result: Any) -> Status:
        self.feedback_message = f"at {self._label}"
        return Status.SUCCESS


#: names a gripper ``position`` may take instead of a number (resolved by :func:`gripper_gap`)
GAP_NAMES = ("open", "closed")


def gripper_gap(resource: Any, position: Any) -> float:
    """The finger gap, metres, that ``position`` asks of a gripper resource: a number as it is;
    ``"open"`` the gripper's full opening (``resource.max_gap_m``, from the robot description);
    ``"closed"`` its closed gap (``resource.min_gap_m``, default 0).

    Raises:
        ValueError: ``"open"`` on a gripper that does not say how far it opens.
    """
    if position == "open":
        gap = getattr(resource, "max_gap_m", None)
        if gap is None:
            raise ValueError(f"gripper {getattr(resource, 'name', '?')!r} does not say how far it opens; give "
                             "position in metres (or a robot description: grippers.NAME.description in the robot file)")
        return float(gap)
    if position == "closed":
        return float(getattr(resource, "min_gap_m", 0.0) or 0.0)
    return float(position)


class GripperCommand(BackendAction):
    """Open or close the gripper to a finger gap with an effort limit (pr2_controllers_msgs/Pr2GripperCommand).

    SUCCESS when the gap is reached, or when the fingers stall on an object (a grasp) unless
    ``fail_if_stalled``; FAILURE when the goal is aborted, or when ``expect_object`` is true and
    the fingers close fully on nothing, or (in the simulator, which knows what they touch:
    ``resource.pressing_on()``) stall against fixed bodies only (a table under a grasp set too low).

    Args:
        position: commanded finger gap, metres (0 closed), or ``open`` (the gripper's full opening,
            from the robot description: 0.08 m on the Panda, 0.104 m on the WSG 50) or ``closed``.
        max_effort: effort limit, newtons; negative means the gripper's maximum.

    Example:
        .. code-block:: yaml

            - GripperCommand: {name: open, position: open}
            - GripperCommand: {name: close, position: 0.0, max_effort: 40}
    """

    ABSTRACT = False
    RESOURCE = "gripper"
    ACTION = "gripper_action"
    PARAMS = {
        "position": Param("float", REQUIRED, "finger gap ('open': the gripper's full opening)", unit="m", min=0.0,
                          max=0.2, names=GAP_NAMES),
        "max_effort": Param("float", -1.0, "effort limit; negative = the gripper's maximum", unit="N"),
        "expect_object": Param("bool", False, "fail when the fingers close on nothing"),
        "fail_if_stalled": Param("bool", False, "fail when the fingers stop short of the gap"),
    }

    def make_goal(self) -> Pr2GripperCommand:
        self._gap = gripper_gap(self.resource, self.param("position"))
        return Pr2GripperCommand(position=self._gap, max_effort=self.param("max_effort"))

    def on_feedback(self, feedback: Any) -> None:
        if isinstance(feedback, Pr2GripperCommandResult):
            self.defer_feedback_message(_describe_gap, feedback)

    def on_success(self, result: Any) -> Status:
        return self._judge(result)

    def on_aborted(self, result: Any, text: str) -> Status:
        if isinstance(result, Pr2GripperCommandResult) and result.stalled:
            return self._judge(result)
        return super().on_aborted(result, text)

    def _judge(self, result: Any) -> Status:
        if not isinstance(result, Pr2GripperCommandResult):
            self.feedback_message = "gripper command done"
            return Status.SUCCESS
        gap_mm = result.position * 1000
        if result.stalled and self.param("fail_if_stalled"):
            return self.fail(f"fingers stalled at {gap_mm:.1f} mm before reaching {self._gap * 1000:.1f} mm")
        pressing = getattr(self.resource, "pressing_on", None)   # the simulator knows what stopped them
        if self.param("expect_object") and result.stalled and callable(pressing):
            bodies = pressing()
            if bodies and all(static for _name, static in bodies):
                names = " and ".join(repr(name) for name, _static in bodies)
                return self.fail(f"closed on no object: the fingers stalled at {gap_mm:.1f} mm against {names}, "
                                 f"which is fixed: the grasp pose is too low or beside the object (raise the target "
                                 f"or check where the object is)")
        closed = float(getattr(self.resource, "min_gap_m", 0.0) or 0.0)   # the gripper's closed gap
        if self.param("expect_object") and not result.stalled and result.position < closed + 0.002:
            return self.fail(f"closed on nothing (gap {gap_mm:.1f} mm)")
        what = "holding at" if result.stalled else "reached"
        self.feedback_message = f"{what} {gap_mm:.1f} mm, effort {result.effort:.1f} N"
        return Status.SUCCESS

