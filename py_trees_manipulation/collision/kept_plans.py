"""Motions planned by the check before a run, kept for the run to follow (issue 33 item 1).

``ptm run`` (``--plan-first``, the default on every backend) ticks the tree once against the collision world
before the first goal (:class:`~py_trees_manipulation.trees.plan_check.DryRun`): every motion it
follows is planned there by :class:`~.arm_planner.ArmMotionPlanner`, from where the motions before it
leave the arm. :class:`KeptPlans` keeps those plans, so that the check and the execution are one
computation (the same IK seeds, the same path, the same posture, the same timing): when the run's
motion starts, the planning worker (:class:`~.worker.PlanningWorker`) takes the plan kept for it
instead of planning again, as MoveIt Task Constructor executes the solution it planned.

A kept plan is used only for the motion it was planned for, in the world it was planned in; each
is keyed by

- the behaviour's node (its name and place in the task file: the goal's ``plan_key``),
- its goal (every field of the :class:`~.arm_planner.MotionRequest`: the target within
  :data:`GOAL_TOLERANCE_M` and :data:`GOAL_TOLERANCE_RAD`, a joint goal within
  :data:`START_TOLERANCE_RAD`, the rest equal),
- the arm's start configuration, within :data:`START_TOLERANCE_RAD` at every joint,
- the object the hand holds and where it sits in the hand (within :data:`HELD_TOLERANCE_M`,
  :data:`HELD_TOLERANCE_RAD`),
- the mechanisms' joint values (doors' hinges and levers, drawers' slides), within
  :data:`MECHANISM_TOLERANCE`;

and the kept path is checked again, state by state at the world's resolution, in the world as it is
when the motion starts (an object the check did not know moved, a door that lagged): a kept path is
never followed through a collision. When any of these differs (the world moved, a sensor-driven step
went otherwise), the motion is planned again from where it is, and says why
(:attr:`~.arm_planner.MotionPlan.note`: ``"plan from the check not used: start differs by 0.031 rad
at panda_joint4"``), in its feedback and in the run log.

The check's grasp choices are kept the same way (:meth:`KeptPlans.keep_choice`): ``ChooseGrasp``'s
run takes the choice the check made for its node (:meth:`KeptPlans.take_choice`, the candidates'
poses put at the object's pose the run reads) instead of evaluating the grasp set again, when the
settings are the same, the arm starts within :data:`START_TOLERANCE_RAD`, the hand holds what it held,
the object and every other body is within :data:`OBJECT_TOLERANCE_M` and :data:`OBJECT_TOLERANCE_RAD`
of where the check saw it and the mechanisms within :data:`MECHANISM_TOLERANCE`; otherwise the
grasp set is evaluated again. The motions to the grasp and the lift with it are the kept plans
above, each checked again in the world as it is when it starts.

Without a check before the run nothing is kept, and every motion is planned as it starts, as before.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

__all__ = ["KeptPlans", "KeptPlan", "KeptChoice", "START_TOLERANCE_RAD", "GOAL_TOLERANCE_M", "GOAL_TOLERANCE_RAD",
           "HELD_TOLERANCE_M", "HELD_TOLERANCE_RAD", "MECHANISM_TOLERANCE", "OBJECT_TOLERANCE_M",
           "OBJECT_TOLERANCE_RAD", "NOT_USED"]

#: the arm's start may differ from the kept plan's by this much at any joint, radians: a motion ends
#: within its tolerance of its goal, not on it; the kept path starts where the check left the arm
START_TOLERANCE_RAD = 0.005
#: the goal's TCP target may differ by this much (a ``delta`` line from where the arm stopped), m, rad
GOAL_TOLERANCE_M = 0.001
GOAL_TOLERANCE_RAD = 0.005
#: the held object's pose in the hand may differ by this much from where the check held it, m, rad
HELD_TOLERANCE_M = 0.003
HELD_TOLERANCE_RAD = 0.03
#: a door's or drawer's joint may differ by this much (rad for a hinge or lever, m for a slide)
MECHANISM_TOLERANCE = 0.005
#: a grasp choice is the check's while the object and every other body (not a robot) lies within this
#: of where the check saw it, m, rad (as a motion's target: :data:`GOAL_TOLERANCE_M`)
OBJECT_TOLERANCE_M = GOAL_TOLERANCE_M
OBJECT_TOLERANCE_RAD = GOAL_TOLERANCE_RAD
#: how the reason a kept plan was not used starts (feedback, run log)
NOT_USED = "plan from the check not used"

#: the request fields that must be equal for a kept plan to be used (the goal's settings)
_SAME = ("kind", "planner", "planning_time_s", "velocity_scaling", "acceleration_scaling", "position_tolerance_m",
         "orientation_tolerance_rad", "speed_mps", "guarded", "max_force_n", "contact_speed_mps", "dt")


@dataclass
class KeptPlan:
    """One motion the check planned: the node it is for, the request, the plan, and the world it
    was planned in (what the hand held, where; the mechanisms' joint values)."""

    node: str
    request: Any
    plan: Any
    held: Optional[tuple[str, np.ndarray]]
    mechanisms: dict[str, dict[int, float]] = field(default_factory=dict)


@dataclass
class KeptChoice:
    """One grasp choice the check made (:func:`~.grasp_choice.choose_grasp`): the node it is for, its
    robot, object and settings (the grasps' names, the other arguments), the arm's configuration
    (rad), every body's pose ((4, 4), world; the robots left out) and what the hand held then, the
    mechanisms' joint values, and the choice."""

    node: str
    robot: str
    obj: str
    settings: dict[str, Any]
    start: np.ndarray
    poses: dict[str, np.ndarray]
    held: Optional[tuple[str, np.ndarray]]
    mechanisms: dict[str, dict[int, float]]
    choice: Any


def choice_settings(grasps: Any, kw: dict[str, Any]) -> dict[str, Any]:
    """What a grasp choice depends on besides the world: the grasps' names and
    :func:`~.grasp_choice.choose_grasp`'s keyword arguments ``kw`` (``place_poses`` as (4, 4) arrays,
    the others as given, None where not given)."""
    keys = ("width_margin_m", "max_approach_angle_deg", "approach_m", "place_approach_m", "lift_m",
            "contact_tolerance_m")
    out: dict[str, Any] = {k: kw.get(k) for k in keys}
    out["grasps"] = tuple(g.name for g in grasps)
    out["place_poses"] = [np.asarray(P, dtype=float) for P in kw.get("place_poses") or ()]
    return out


def _body_poses(world: Any) -> dict[str, np.ndarray]:
    """The pose ((4, 4), world) of every body of ``world`` that is not a robot."""
    return {name: np.asarray(world.object_pose(name), dtype=float) for name in world.bodies if name not in world.robots}


def mechanism_values(world: Any) -> dict[str, dict[int, float]]:
    """The joint values of every articulated body of ``world`` that is not a robot (doors, drawers),
    ``{name: {joint index: value}}`` (rad or m)."""
    import pybullet as pb

    out: dict[str, dict[int, float]] = {}
    c = world.client
    for name, body in world.bodies.items():
        if name in world.robots:
            continue
        n = pb.getNumJoints(body, physicsClientId=c)
        if n:
            out[name] = {j: float(s[0]) for j, s in enumerate(pb.getJointStates(body, list(range(n)),
                                                                                 physicsClientId=c))}
    return out


def _held(world: Any, robot: str) -> Optional[tuple[str, np.ndarray]]:
    name = world.attached(robot)
    return None if name is None else (name, np.asarray(world.attached_transform(robot), dtype=float))


class KeptPlans:
    """The plans a check before the run made, in the order it made them (module docstring).

    Attributes:
        checked: every plan kept, in the order the check made them (:class:`KeptPlan`; those not yet
            taken are still offered).
        used: how many kept plans the run followed. replanned: how many motions a kept plan was
            for but that were planned again (the reasons in ``notes``).
        saved_s: the check's planning time of the plans followed (wall seconds the run did not plan
            again), and ``lookup_s``: what taking them cost (the key compared, the path re-checked).
    """

    def __init__(self) -> None:
        self._plans: list[KeptPlan] = []
        self.checked: list[KeptPlan] = []
        self.used = 0
        self.replanned = 0
        self.notes: list[str] = []
        self.saved_s = 0.0
        self.lookup_s = 0.0
        self._choices: list[KeptChoice] = []
        #: the grasp choices the check made (:class:`KeptChoice`), and how many the run took
        self.choices: list[KeptChoice] = []
        self.choices_used = 0

    def keep(self, node: str, request: Any, plan: Any, world: Any) -> None:
        """Keep ``plan`` (a :class:`~.arm_planner.MotionPlan`) of ``request`` for the run's motion of
        ``node``, with the state of ``world`` it was planned in (call before the world moves on)."""
        if not node:
            return
        self._plans.append(KeptPlan(node, copy.copy(request), plan, _held(world, request.robot),
                                    mechanism_values(world)))
        self.checked.append(self._plans[-1])

    def take(self, request: Any, world: Any) -> tuple[Optional[Any], str]:
        """The kept plan for ``request`` (its ``node``, from the goal's ``plan_key``), in ``world`` synced
        to the state the motion starts from: ``(plan, "")``, a copy the run follows; or ``(None,
        why)`` when one was kept for the node but differs (module docstring), ``(None, "")`` when
        none was. A kept plan is taken once."""
        t0 = time.perf_counter()
        try:
            node = getattr(request, "node", "")
            k = next((k for k in self._plans if node and k.node == node and k.request.robot == request.robot), None)
            if k is None:
                return None, ""
            self._plans.remove(k)
            why = self.difference(k, request, world) or self._path_hit(k, request, world)
            if why:
                self.replanned += 1
                self.notes.append(f"{node}: {why}")
                return None, f"{NOT_USED}: {why}"
            plan = copy.copy(k.plan)
            plan.source = "check"
            plan.planning_time_s = time.perf_counter() - t0   # what the run spent on it: the key and the re-check
            self.used += 1
            self.saved_s += float(k.plan.planning_time_s)
            return plan, ""
        finally:
            self.lookup_s += time.perf_counter() - t0

    def keep_choice(self, node: str, robot: str, obj: str, grasps: Any, kw: dict[str, Any], choice: Any,
                    world: Any) -> None:
        """Keep grasp choice ``choice`` (a :class:`~.grasp_choice.GraspChoice` with a grasp chosen) of
        ``robot`` for ``obj`` among ``grasps``, made with :func:`~.grasp_choice.choose_grasp`'s keyword
        arguments ``kw`` in ``world`` as it is now (the arm where the choice started), for the run's
        ``ChooseGrasp`` of ``node``."""
        if not node or choice is None or choice.chosen is None:
            return
        k = KeptChoice(node, robot, obj, choice_settings(grasps, kw), np.asarray(world.robots[robot].joint_positions(),
                                                                                  dtype=float),
                       _body_poses(world), _held(world, robot), mechanism_values(world), choice)
        self._choices.append(k)
        self.choices.append(k)

    def take_choice(self, node: str, robot: str, obj: str, object_pose: Any, grasps: Any, kw: dict[str, Any],
                    world: Any) -> tuple[Optional[Any], str]:
        """The grasp choice kept for ``node``'s ``ChooseGrasp`` (of ``robot``, ``obj`` among ``grasps``,
        ``kw`` as :meth:`keep_choice`'s), the object at ``object_pose`` ((4, 4), world) in ``world``
        synced to the state the choice starts from: ``(choice, "")``, the kept choice with its poses put
        at ``object_pose`` (:meth:`~.grasp_choice.GraspChoice.at`); ``(None, why)`` when one was kept
        for the node but the world or the settings differ (module docstring), ``(None, "")`` when none
        was. A kept choice is taken once."""
        k = next((k for k in self._choices if node and k.node == node and k.robot == robot and k.obj == obj), None)
        if k is None:
            return None, ""
        self._choices.remove(k)
        why = self.choice_difference(k, object_pose, grasps, kw, world)
        if why:
            self.notes.append(f"{node}: {why}")
            return None, f"{NOT_USED}: {why}"
        self.choices_used += 1
        return k.choice.at(object_pose, kw.get("approach_m")), ""

    def choice_difference(self, k: KeptChoice, object_pose: Any, grasps: Any, kw: dict[str, Any], world: Any) -> str:
        """Why kept choice ``k`` is not the choice for ``object_pose``, ``grasps`` and ``kw`` in ``world``
        ("" when it is)."""
        from ..geometry.poses import rotation_angle, translation_distance

        now = choice_settings(grasps, kw)
        for name, value in now.items():
            kept = k.settings.get(name)
            if name == "place_poses":
                same = len(value) == len(kept) and all(np.array_equal(a, b) for a, b in zip(value, kept))
            else:
                same = value == kept
            if not same:
                return f"its settings differ ({name})"
        r = world.robots[k.robot]
        held = _held(world, k.robot)
        why = (_start_difference(np.asarray(r.joint_positions(), dtype=float), k.start, list(r.arm_joint_names))
               or _holding_difference(held, k.held, "chose"))
        if why:
            return why
        if held is not None and k.held is not None and (translation_distance(held[1], k.held[1]) > HELD_TOLERANCE_M
                                                        or rotation_angle(held[1], k.held[1]) > HELD_TOLERANCE_RAD):
            return f"{held[0]} sits elsewhere in the hand than when the check chose it"
        # the object where the run reads it, then every body where the world has it now
        for name, T in [(k.obj, np.asarray(object_pose, dtype=float)), *_body_poses(world).items()]:
            T0 = k.poses.get(name)
            if T0 is None:
                return f"{name} was not in the world the check chose it in"
            dp, da = translation_distance(T0, T), rotation_angle(T0, T)
            if dp > OBJECT_TOLERANCE_M or da > OBJECT_TOLERANCE_RAD:
                return f"{name} lies {dp * 1000:.1f} mm, {np.degrees(da):.1f} deg from where the check saw it"
        return _mechanism_difference(k.mechanisms, world, "chose")

    # ---- the key ------------------------------------------------------------------------------------
    def difference(self, k: KeptPlan, request: Any, world: Any) -> str:
        """Why kept plan ``k`` is not the plan of ``request`` in ``world`` ("" when it is)."""
        from ..geometry.poses import rotation_angle, translation_distance

        kept, r = k.request, world.robots[request.robot]
        for name in _SAME:
            if getattr(kept, name, None) != getattr(request, name, None):
                return f"its goal differs ({name} {getattr(request, name, None)!r}, checked {getattr(kept, name, None)!r})"
        if tuple(kept.allowed_contacts) != tuple(request.allowed_contacts):
            return "its goal differs (allowed_contacts)"
        if [list(map(float, s)) for s in kept.ik_seeds] != [list(map(float, s)) for s in request.ik_seeds]:
            return "its goal differs (ik_seed)"
        names = list(r.arm_joint_names)
        if request.kind == "joints":
            d = np.abs(np.asarray(request.goal, dtype=float) - np.asarray(kept.goal, dtype=float))
            if float(d.max()) > START_TOLERANCE_RAD:
                j = int(d.argmax())
                return f"its goal differs by {d[j]:.3f} rad at {names[j]}"
        elif request.target is not None and kept.target is not None:
            dp = translation_distance(kept.target, request.target)
            da = rotation_angle(kept.target, request.target)
            if dp > GOAL_TOLERANCE_M or da > GOAL_TOLERANCE_RAD:
                return f"its target differs by {dp * 1000:.1f} mm, {np.degrees(da):.1f} deg"
        start = np.clip(np.asarray(request.start, dtype=float), r.lower, r.upper)
        held = _held(world, request.robot)
        why = (_start_difference(start, np.asarray(k.plan.waypoints[0], dtype=float), names)
               or _holding_difference(held, k.held, "planned"))
        if why:
            return why
        if held is not None and k.held is not None:
            dp, da = translation_distance(held[1], k.held[1]), rotation_angle(held[1], k.held[1])
            if dp > HELD_TOLERANCE_M or da > HELD_TOLERANCE_RAD:
                return (f"{held[0]} sits {dp * 1000:.1f} mm, {np.degrees(da):.1f} deg from where the check "
                        "held it in the hand")
        return _mechanism_difference(k.mechanisms, world, "planned")

    def _path_hit(self, k: KeptPlan, request: Any, world: Any) -> str:
        """The kept path checked in ``world`` as it is now (its states at the world's resolution,
        from where the arm is), with the contacts the plan allowed: what it would hit, or ""."""
        from ..motion.paths import first_invalid

        start = np.clip(np.asarray(request.start, dtype=float), world.robots[request.robot].lower,
                        world.robots[request.robot].upper)
        ck = world.checker(request.robot, k.plan.allowed)
        path = np.vstack([start, np.asarray(k.plan.waypoints, dtype=float)])
        bad = first_invalid(path, ck.is_valid, world.max_step_rad)
        if bad is None:
            return ""
        hit = ck.explain(bad.q)
        return f"its path now hits at {100 * bad.fraction:.0f}% of it: {hit.describe() if hit else 'a collision'}"

    def summary(self) -> dict[str, Any]:
        """Plain values for the run's metrics: ``motions_from_check`` (followed), ``motions_replanned``,
        ``planning_saved_s``."""
        return {"motions_from_check": self.used, "motions_replanned": self.replanned,
                "planning_saved_s": round(self.saved_s - self.lookup_s, 4)}


def _start_difference(now: np.ndarray, kept: np.ndarray, names: list) -> str:
    """Why an arm at ``now`` (rad) is not where a kept choice or plan started (``kept``), or ""."""
    d = np.abs(np.asarray(now, dtype=float) - np.asarray(kept, dtype=float))
    if float(d.max()) > START_TOLERANCE_RAD:
        j = int(d.argmax())
        return f"start differs by {d[j]:.3f} rad at {names[j]}"
    return ""


def _holding_difference(held: Any, kept: Any, verb: str) -> str:
    """Why the hand's load ``held`` ((name, pose) or None) is not what the check ``verb`` ("chose",
    "planned") it with, or ""."""
    if (held is None) != (kept is None) or (held is not None and held[0] != kept[0]):
        was = f"{kept[0]} held" if kept else "nothing held"
        return f"the hand holds {held[0] if held else 'nothing'}, the check {verb} it with {was}"
    return ""


def _mechanism_difference(kept: dict, world: Any, verb: str) -> str:
    """Why the mechanisms' joints moved since the check (``kept``: mechanism -> joint -> value then),
    or "": the first joint off by more than :data:`MECHANISM_TOLERANCE` (``verb``: what the check
    did there, "chose" or "planned")."""
    now = mechanism_values(world)
    for name, joints in kept.items():
        for j, v0 in joints.items():
            v = now.get(name, {}).get(j, v0)
            if abs(v - v0) > MECHANISM_TOLERANCE:
                return f"{name}'s joint {j} is at {v:.3f}, the check {verb} it at {v0:.3f}"
    return ""

