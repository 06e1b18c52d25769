"""Carrying out a regrasp plan: ``ExecuteRegraspPlan`` expands each step, at run time, into a Sequence
of the motion behaviours (approach, grasp, lift, place on a contact surface, release, retreat), and
recovers from a failed step by re-planning from the sensed grasp state.

Units: metres, newtons. Poses: (4, 4) homogeneous transforms, world frame.
"""

from __future__ import annotations

import math
import time
from typing import Any, Mapping, Optional

import numpy as np
import py_trees
from py_trees.common import Status

from ..geometry.poses import Pose, invert, pose_from_spec, rotation_angle
from ..planning.geometric_queries import GeometricStep
from ..planning.regrasp import NoPlanError, RegraspPlan, RegraspStep
from .grasp_fix import GraspFixAttach
from .grasp_state import _CONFIG_PARAMS, _RegraspBase, sense_grasps, sense_grasps_from_poses
from .motion import GripperCommand, MoveCartesian, MoveToPose
from .params import REQUIRED, Param
from .regrasp_config import _FLIP_Z, _config_of, _goal_of, _goal_text, _names, _reason, _resolve
from .regrasp_plan import _geometry_metrics, _one_line, geometry_host, placement_goal_of, plan_with_geometry

__all__ = ["ExecuteRegraspPlan"]


def _along_z(T: Pose, d: float) -> Pose:
    """``T`` moved by ``d`` metres along its own z axis."""
    out = np.array(T, dtype=float)
    out[:3, 3] += d * out[:3, 2]
    return out


def _nearest_symmetric(T: Pose, tcp: Pose) -> Pose:
    """``T`` or ``T`` turned half a turn about its z axis (same grasp for a parallel gripper),
    whichever needs the smaller wrist rotation from ``tcp``."""
    alt = T @ _FLIP_Z
    return alt if rotation_angle(alt, tcp) < rotation_angle(T, tcp) else T


class ExecuteRegraspPlan(_RegraspBase):
    """Carry out a regrasp plan, one step at a time, each expanded into a Sequence at run time.

    Each step becomes, when it starts (with the object's and TCPs' poses at that moment):

    - ``grasp`` (object on a surface): open -> pregrasp (``approach_m`` back along the handle's
      TCP z axis, MoveToPose) -> approach (MoveCartesian) -> close (GripperCommand,
      ``expect_object``) -> lift (``lift_m`` up);
    - ``handover`` grasp: the holder presents the object at the object's ``handover_pose`` (when
      given), then the receiver opens, goes to pregrasp, approaches and closes;
    - ``release`` (place): pre-place (``lift_m`` above the placement, MoveToPose) -> lower
      (MoveCartesian with the ``place_force_n`` force guard) -> open -> retreat (``retreat_m``
      back along the TCP z axis); the let-go is checked on the world after the open and after the
      retreat: the object within 1 cm of where it was set down and, after the retreat, touching
      no finger; a place that fails that check fails the behaviour (it is not re-planned);
    - ``handover`` release: open -> retreat.

    With GraspFix in the scene (``grasp_fix:``), a grasp also waits for the weld (GraspFixAttach);
    in a handover the receiver waits until it is ready to take the object (``handover``), and the
    giver's release waits, after opening, until the weld has passed to the receiver.

    A plan made with geometry says, for every step, which grasp of the handle and which placement
    (face and pose) to use: the grasp is taken at the object's pose *now* (``object pose @ grasp``),
    the object is put down at the planned placement with the grasp it is actually held by. Without
    geometry the grasp is the handle's pose (or its half turn, whichever is nearer the TCP) and the
    placement the object's first contact-surface pose, the next one after a failure.

    In the simulator the grasp state is checked after each step (sensed from contacts:
    :func:`sense_grasps`); a step whose subtree fails or whose check fails is excluded and the rest
    is re-planned from the sensed state, at most ``replans`` times: with geometry the failed step
    (that grasp change, grasp and object pose) is pruned and every other placement stays open
    (:meth:`GeometricRegraspPlanner.mark_step_failed`); without, the transition is marked infeasible
    (:meth:`RegraspPlanner.mark_infeasible`).

    RUNNING while steps run; SUCCESS when every step is done and the goal holds; FAILURE with the
    failing step, its HPP transition name and the reason.

    Args:
        plan: the plan from PlanRegrasp (usually ``"{regrasp_plan}"``).
        goal: goal for re-planning (default: the plan's ``goal_spec``).
        replans: re-plans allowed after failed steps.
        velocity_scaling, approach_speed_mps: motion speeds.

    Blackboard:
        writes ``state_key`` after each step, ``/metrics/grasp_changes`` (executed steps, added to),
        ``/metrics/goal_reached``, ``/metrics/replans`` and ``/metrics/plan_time_ms`` (re-plans;
        with geometry also the check metrics of :class:`PlanRegrasp`).

    Example:
        .. code-block:: yaml

            - ExecuteRegraspPlan: {plan: "{regrasp_plan}"}
    """

    ABSTRACT = False
    BLACKBOARD_WRITES = ("state_key",)  # trees/dataflow.py
    PARAMS = {
        **_CONFIG_PARAMS,
        "plan": Param("any", REQUIRED, "the plan (RegraspPlan or its dict), usually '{regrasp_plan}'"),
        "goal": Param("any", None, "goal used when re-planning (default: the plan's goal_spec)"),
        "replans": Param("int", 1, "re-plans allowed after a failed step", min=0, max=10, blackboard=False),
        "velocity_scaling": Param("float", 0.5, "joint velocity scaling of the free motions", min=0.01, max=1.0),
        "approach_speed_mps": Param("float", 0.08, "TCP speed of approaches, lifts and retreats", unit="m/s",
                                    min=0.005, max=1.0),
    }

    def __init__(self, name: Optional[str] = None, **params: Any):
        super().__init__(name=name, **params)
        self._subtree: Optional[py_trees.behaviour.Behaviour] = None

    # ---- lifecycle ----------------------------------------------------------------------------
    def initialise(self) -> None:
        self._error: Optional[str] = None
        self._stop_subtree()
        self._steps: list[RegraspStep] = []
        self._index = 0
        self._replans_left = int(self.params["replans"])
        self._placement_attempt: dict[str, int] = {}
        self._geo: list[Optional[Mapping[str, Any]]] = []
        self._failed: list[tuple] = []
        try:
            self._cfg = _config_of(self)
            self._planner = self._cfg.planner()
            plan = self.param("plan")
            if isinstance(plan, RegraspPlan):
                plan = plan.to_dict()
            self._load_plan(plan)
            goal = self.param("goal")
            if goal is None:
                goal = plan.get("goal_spec", plan.get("goal")) if isinstance(plan, Mapping) else None
            self._goal = _goal_of(self._cfg, goal)
            self._faces = placement_goal_of(self._cfg, plan.get("placement_goal") if isinstance(plan, Mapping) else None)
            self._geometric = bool(isinstance(plan, Mapping) and plan.get("geometric"))
            if self._geometric and geometry_host(self.backend) is None:
                raise ValueError("the plan was made with geometry; this backend has no collision world to re-plan in")
        except (KeyError, ValueError, TypeError) as e:
            self._error = str(e.args[0]) if e.args else str(e)

    def _load_plan(self, plan: Any) -> None:
        if isinstance(plan, Mapping) and "steps" in plan:
            steps = list(plan["steps"])
        else:
            raise ValueError(f"plan: expected a RegraspPlan or its dict, got {type(plan).__name__}")
        self._steps = [self._planner.step(tuple(s["state_from"]), tuple(s["state_to"])) for s in steps]
        self._geo = [s if s.get("grasp_pose") is not None else None for s in steps]

    def update(self) -> Status:
        if self._error is not None:
            return self.fail(self._error)
        cfg = self._cfg
        while True:
            if self._index >= len(self._steps):
                return self._finish()
            step = self._steps[self._index]
            if self._subtree is None:
                try:
                    self._subtree = self._expand(step)
                except (KeyError, ValueError) as e:
                    return self._step_failed(step, str(e.args[0]) if e.args else str(e))
            status = self._tick_subtree()
            where = f"step {self._index + 1}/{len(self._steps)} '{step.transition}' ({step.kind})"
            if status == Status.RUNNING:
                tip = self._subtree.tip() if self._subtree is not None else None
                self.feedback_message = f"{where}: {tip.name if tip is not None else ''}"
                return Status.RUNNING
            if status == Status.FAILURE:
                leaf = _failed_leaf(self._subtree)
                reason = f"{leaf.name}: {leaf.feedback_message}" if leaf is not None else "failed"
                # a place whose object did not stay where it was let go of is not re-planned: the
                # world is no longer the one the step was planned in
                return self._step_failed(step, reason, replan=not isinstance(leaf, (_LetGo, _LetGoPhase)))
            # SUCCESS: check the grasp state in the simulator
            if self._senses():
                details = sense_grasps(self.backend, cfg)
                sensed = _resolve(cfg, {g: d.handle for g, d in details.items()})
                want = step.state_to
                ig = step.gripper_index
                if sensed[ig] != want[ig]:
                    got = cfg.factory.state_name(sensed)
                    why = details[step.gripper].reason
                    return self._step_failed(step, f"after the step the grasp state is '{got}', "
                                                   f"expected '{step.state_to_name}'" + (f" ({why})" if why else ""))
            self.blackboard.set(self._state_key, cfg.factory.names_from_grasps(step.state_to), overwrite=True)
            self._write_metric("grasp_changes", 1, add=True)
            self._detach_subtree()
            self._index += 1

    def terminate(self, new_status: Status) -> None:
        if new_status == Status.INVALID:
            self._stop_subtree()

    # ---- internals ----------------------------------------------------------------------------
    def _finish(self) -> Status:
        cfg = self._cfg
        state = _resolve(cfg, self.current_state(cfg))
        reached = self._planner.goal_satisfied(state, self._goal)
        lying = self._resting_faces() if self._faces else {}
        wrong = {o: f for o, f in lying.items() if f not in self._faces[o]}
        reached = reached and not wrong
        self._write_metric("goal_reached", bool(reached))
        where = "".join(f", {o} on {f}" for o, f in lying.items())
        if reached:
            self.feedback_message = f"goal reached: '{_names(cfg, state)}'{where} after {len(self._steps)} steps"
            return Status.SUCCESS
        if wrong:
            o, f = next(iter(wrong.items()))
            return self.fail(f"plan done but {o} rests on {f}, not on {' or '.join(self._faces[o])}")
        return self.fail(f"plan done but the grasp state '{_names(cfg, state)}' does not satisfy "
                         f"{_goal_text(cfg, self._goal)}")

    def _resting_faces(self) -> dict[str, str]:
        """The face each object of the placement goal rests on now (measured), or 'nothing' when it
        touches no surface or is tilted more than 20 degrees off any face ('nothing (it hangs on
        panda/wsg50_right_finger)' when it touches only a robot: stuck to an open finger).

        On a backend without contacts (hardware: object poses from perception), the face is read from
        the measured orientation alone, the object counting as resting when no gripper holds it
        (:func:`sense_grasps_from_poses`)."""
        from ..geometry.grasps import placements_for_object, tilt_deg

        scene = {o.name: o for o in getattr(getattr(self.backend, "scene", None), "objects", ())}
        out = {}
        robots = set(getattr(self.backend, "arms", {}))
        for o in self._faces:
            faces = placements_for_object(scene[o]) if o in scene else []
            T = np.asarray(self.backend.world.object_pose(o), dtype=float)
            if hasattr(self.backend.world, "contacts"):
                every = self.backend.world.contacts(o)
                touching: list = [c for c in every if c.body_b not in robots]
            else:
                every = []
                touching = [] if any(g.object == o for g in sense_grasps_from_poses(self.backend, self._cfg).values()) \
                    else ["(measured pose)"]
            best, best_tilt = "nothing", 180.0
            for p in faces:
                t = tilt_deg(T @ invert(p.pose))  # 0 when T is p.pose turned about the vertical
                if t < best_tilt:
                    best, best_tilt = p.face, t
            out[o] = best if (touching and best_tilt < 20.0) else "nothing"
            held_by = sorted({f"{c.body_b}/{c.link_b}" for c in every if c.body_b in robots})
            if out[o] == "nothing" and held_by and not touching:
                out[o] = f"nothing (it hangs on {', '.join(held_by)})"
        return out

    def _step_failed(self, step: RegraspStep, reason: str, replan: bool = True) -> Status:
        self._stop_subtree()
        self._detach_subtree()
        cfg = self._cfg
        where = f"step {self._index + 1}/{len(self._steps)} '{step.transition}' ({step.kind}) failed: {reason}"
        state = object_state_text(self.backend, step.object)
        if state and state not in where:
            where += f" ({state})"
        if step.direction == "release" and step.kind == "release":
            self._placement_attempt[step.object] = self._placement_attempt.get(step.object, 0) + 1
        if self._replans_left <= 0 or not replan:
            self._write_metric("goal_reached", False)
            return self.fail(where)
        self._replans_left -= 1
        if self._geometric:
            return self._replan_geometric(step, where)
        n_places = sum(len(ps) for ps in cfg.objects[step.object].placements.values())
        if not (step.kind == "release" and self._placement_attempt.get(step.object, 0) < n_places):
            # a failed placement is retried on the next placement pose before the release is given up
            self._planner.mark_infeasible(step)
        state = _resolve(cfg, self.current_state(cfg))
        t0 = time.perf_counter()
        try:
            plan = self._planner.plan(state, self._goal)
        except (NoPlanError, ValueError) as e:
            self._write_metric("plan_time_ms", (time.perf_counter() - t0) * 1000.0, add=True)
            self._write_metric("goal_reached", False)
            return self.fail(f"{where}; re-planning from '{_names(cfg, state)}' failed: {_reason(e)}")
        self._write_metric("plan_time_ms", (time.perf_counter() - t0) * 1000.0, add=True)
        self._write_metric("replans", 1, add=True)
        if self.backend is not None and hasattr(self.backend, "emit_event"):
            self.backend.emit_event(self.name, f"{where}; re-planned: {' -> '.join(plan.transition_names)}")
        self.blackboard.set(self._state_key, cfg.factory.names_from_grasps(state), overwrite=True)
        self._steps = list(plan.steps)
        self._index = 0
        self.feedback_message = f"{where}; re-planned {len(plan)} steps"
        return Status.RUNNING

    def _replan_geometric(self, step: RegraspStep, where: str) -> Status:
        """Prune the failed step (its grasp change, grasp and object pose), re-plan from the sensed state."""
        cfg = self._cfg
        geo = self._geo[self._index] if self._index < len(self._geo) else None
        if geo is not None and geo.get("object_pose") is not None:
            kind = ("handover_" if step.kind == "handover" else "") + step.direction
            self._failed.append((kind, step.gripper, geo.get("variant", ""), pose_from_spec(geo["object_pose"]), 0.02))
        state = _resolve(cfg, self.current_state(cfg))
        t0 = time.perf_counter()
        try:
            plan = plan_with_geometry(self.backend, cfg, state, self._goal, self._faces, failed=self._failed)
        except (NoPlanError, ValueError, RuntimeError) as e:
            self._write_metric("plan_time_ms", (time.perf_counter() - t0) * 1000.0, add=True)
            self._write_metric("goal_reached", False)
            return self.fail(f"{where}; re-planning from '{_names(cfg, state)}' failed: {_one_line(str(e))}")
        self._write_metric("plan_time_ms", (time.perf_counter() - t0) * 1000.0, add=True)
        self._write_metric("replans", 1, add=True)
        _geometry_metrics(self, plan)
        labels = [s.label for s in plan.steps if isinstance(s, GeometricStep)]
        if self.backend is not None and hasattr(self.backend, "emit_event"):
            self.backend.emit_event(self.name, f"{where}; re-planned: {' -> '.join(labels) or 'already there'}")
        self.blackboard.set(self._state_key, cfg.factory.names_from_grasps(state), overwrite=True)
        d = plan.to_dict()
        self._load_plan(d)
        self._index = 0
        self.feedback_message = f"{where}; re-planned {len(plan)} steps"
        return Status.RUNNING

    def _tick_subtree(self) -> Status:
        assert self._subtree is not None
        for _ in self._subtree.tick():
            pass
        return self._subtree.status

    def _stop_subtree(self) -> None:
        st = self._subtree
        if st is not None and st.status == Status.RUNNING:
            st.stop(Status.INVALID)

    def _detach_subtree(self) -> None:
        if self._subtree is not None:
            self._subtree.parent = None
        self._subtree = None
        self.children = []

    # ---- step expansion -----------------------------------------------------------------------
    def _expand(self, step: RegraspStep) -> py_trees.composites.Sequence:
        cfg = self._cfg
        arm, gripper = cfg.grippers[step.gripper]
        h = cfg.handles[step.handle]
        world = self.backend.world
        T_obj = np.array(world.object_pose(step.object), dtype=float)
        T_tcp = np.array(self.backend.arms[arm].tcp_pose(), dtype=float)
        vs = self.params["velocity_scaling"]
        v = self.params["approach_speed_mps"]
        tag = f"{step.gripper} {'>' if step.direction == 'grasp' else '<'} {step.handle}"
        nodes: list[py_trees.behaviour.Behaviour] = []
        if step.direction == "grasp":
            if step.kind == "handover":
                holder = next(g for g, hh in zip(cfg.factory.grippers, step.state_from)
                              if hh is not None and cfg.factory.object_from_handle[hh]
                              == cfg.factory.object_from_handle[step.handle_index])
                spec = cfg.objects[step.object]
                if spec.handover_pose is not None:
                    harm = cfg.grippers[holder][0]
                    T_hold = np.array(self.backend.arms[harm].tcp_pose(), dtype=float)
                    T_present = spec.handover_pose @ invert(T_obj) @ T_hold
                    nodes.append(MoveToPose(name=f"{tag}: present", arm=harm, target=T_present,
                                            velocity_scaling=vs))
                    T_obj = np.array(spec.handover_pose, dtype=float)
            geo = self._geo[self._index] if self._index < len(self._geo) else None
            if geo is not None:     # the planned grasp, at the object's pose now
                T_g = T_obj @ pose_from_spec(geo["grasp_pose"])
            else:
                T_g = _nearest_symmetric(T_obj @ h.grasp_pose, T_tcp)
            nodes += [
                _OpenOnlyOnSupport(f"{tag}: nothing held in the air", self.backend, gripper),
                GripperCommand(name=f"{tag}: open", gripper=gripper, position=h.open_m),
                MoveToPose(name=f"{tag}: pregrasp", arm=arm, target=_along_z(T_g, -h.approach_m),
                           velocity_scaling=vs),
                MoveCartesian(name=f"{tag}: approach", arm=arm, target=T_g, speed_mps=v),
                GripperCommand(name=f"{tag}: close", gripper=gripper, position=0.0, max_effort=h.max_effort_n,
                               expect_object=True),
            ]
            gf_arm = self._grasp_fix_arm(arm)
            if gf_arm is not None:   # GraspFix welds it (a handover: once the holder opens)
                nodes.append(GraspFixAttach(name=f"{tag}: weld", arm=gf_arm, object=step.object, timeout_s=3.0,
                                            handover=step.kind == "handover"))
            if step.kind == "grasp":
                nodes.append(MoveCartesian(name=f"{tag}: lift", arm=arm, delta=[0.0, 0.0, cfg.lift_m], speed_mps=v,
                                           held_object=step.object))
        else:
            if step.kind == "release":
                geo = self._geo[self._index] if self._index < len(self._geo) else None
                if geo is not None and geo.get("placement") is not None:   # the planned placement
                    P = pose_from_spec(geo["placement"]["pose"])
                else:
                    spec = cfg.objects[step.object]
                    poses = [p for ps in spec.placements.values() for p in ps]
                    if not poses:
                        raise ValueError(f"object {step.object!r} has no placement pose (regrasp.objects."
                                         f"{step.object}.contacts) to be put down on")
                    P = poses[self._placement_attempt.get(step.object, 0) % len(poses)]
                T_place = P @ invert(T_obj) @ T_tcp
                above = T_place.copy()
                above[2, 3] += cfg.lift_m
                nodes += [
                    MoveToPose(name=f"{tag}: preplace", arm=arm, target=above, velocity_scaling=vs),
                    MoveCartesian(name=f"{tag}: lower", arm=arm, delta=[0.0, 0.0, -(cfg.lift_m + 0.005)],
                                  speed_mps=min(v, 0.05), max_force_n=cfg.place_force_n),
                ]
                T_tcp = T_place
                nodes.append(_OpenOnlyOnSupport(f"{tag}: set down", self.backend, gripper))
            let_go = None
            if step.kind == "release":
                let_go = _LetGo(f"{tag}: let go", self.backend, gripper, step.object, self._write_metric)
                nodes.append(let_go.mark)
            nodes.append(GripperCommand(name=f"{tag}: open", gripper=gripper, position=h.open_m))
            if let_go is not None:
                nodes.append(let_go.opened)
            if step.kind == "handover":
                receiver = next((g for g, hh in zip(cfg.factory.grippers, step.state_to)
                                 if hh is not None and cfg.factory.object_from_handle[hh]
                                 == cfg.factory.object_from_handle[step.handle_index]), None)
                gf_arm = self._grasp_fix_arm(cfg.grippers[receiver][0]) if receiver is not None else None
                if gf_arm is not None:   # the weld passed to the receiver as the fingers opened
                    nodes.append(GraspFixAttach(name=f"{tag}: handed over", arm=gf_arm, object=step.object,
                                                timeout_s=2.0))
            nodes.append(MoveCartesian(name=f"{tag}: retreat", arm=arm, target=_along_z(T_tcp, -cfg.retreat_m),
                                       speed_mps=v))
            if let_go is not None:
                nodes.append(let_go)
        seq = py_trees.composites.Sequence(name=step.transition, memory=True, children=nodes)
        for node in seq.iterate():
            node.setup(backend=self.backend)
        seq.parent = self
        self.children = [seq]
        return seq


    def _grasp_fix_arm(self, robot: str) -> Optional[str]:
        """The GraspFix arm of ``robot`` when the scene has GraspFix (``grasp_fix:``), else None."""
        ext = getattr(self.backend, "extensions", {}).get("grasp_fix")
        if ext is None:
            return None
        return next((a for a in ext.arm_names if ext.robot_of(a) == robot), None)


def object_state_text(backend: Any, obj: str) -> str:
    """Where ``obj`` is now and which face is up, for a failure message: ``"box is now at (0.512,
    0.104, 0.651) on 'table', its -x face down (upside down: its +z face down)"``; "" when the backend
    cannot say."""
    from ..geometry.grasps import placements_for_object, resting_face

    world = getattr(backend, "world", None)
    try:
        T = np.asarray(world.object_pose(obj), dtype=float)  # type: ignore[union-attr]
    except Exception:
        return ""
    p = T[:3, 3]
    x, y, z = (round(float(v), 3) + 0.0 for v in p)
    text = f"{obj} is now at ({x:.3f}, {y:.3f}, {z:.3f})"
    on = _support_of(backend, obj)
    if on is not None:
        text += f" on {on!r}" if on else ", touching nothing but a robot" if _held_now(backend, obj) else ", touching nothing"
    scene = {o.name: o for o in getattr(getattr(backend, "scene", None), "objects", ())}
    faces = placements_for_object(scene[obj]) if obj in scene else []
    if faces:
        face = str(resting_face(T, faces).face).split("/")[-1]
        text += f", its {face} face down" + (" (upside down)" if face == "+z" else "")
    else:
        text += f", tilted {math.degrees(math.acos(float(np.clip(T[2, 2], -1.0, 1.0)))):.0f} deg from upright"
    return text


def _support_of(backend: Any, obj: str) -> Optional[str]:
    """The non-robot body ``obj`` touches below its centre ("" for none); None when the backend has
    no contacts (hardware)."""
    world = getattr(backend, "world", None)
    if not hasattr(world, "contacts"):
        return None
    robots = set(getattr(backend, "arms", {}))
    z = float(np.asarray(world.object_pose(obj), dtype=float)[2, 3])
    for c in world.contacts(obj):
        if c.body_b not in robots and float(c.position_on_a[2]) <= z:
            return c.body_b
    return ""


def _held_now(backend: Any, obj: str) -> bool:
    world = getattr(backend, "world", None)
    robots = set(getattr(backend, "arms", {}))
    return hasattr(world, "contacts") and any(c.body_b in robots for c in world.contacts(obj))


class _OpenOnlyOnSupport(py_trees.behaviour.Behaviour):
    """SUCCESS when the gripper of ``robot`` may open: no object it touches hangs in the air (every
    object in contact with its fingers also rests on a body that is not a robot); FAILURE naming the
    object and where it is otherwise. A regrasp step never lets go away from a support (issue 32
    item 5). Backends without contacts (hardware) are not checked here."""

    def __init__(self, name: str, backend: Any, robot: str):
        super().__init__(name=name)
        self._backend, self._robot = backend, robot

    def update(self) -> Status:
        world = getattr(self._backend, "world", None)
        if not hasattr(world, "contacts"):
            return Status.SUCCESS
        for obj in getattr(world, "object_names", lambda: [])():
            if not any(c.body_b == self._robot for c in world.contacts(obj)):
                continue
            if not _support_of(self._backend, obj):
                self.feedback_message = (f"would let go of {obj} away from a support: "
                                         f"{object_state_text(self._backend, obj)}; the gripper stays closed")
                return Status.FAILURE
        return Status.SUCCESS


#: how far a released object may move from where it was set down while the fingers open and the
#: hand retreats, m (the squeeze let off: 0.8 mm for the WSG 50's 26 N on a 0.1 kg box)
RELEASE_SHIFT_M = 0.01


class _LetGo(py_trees.behaviour.Behaviour):
    """The release of a placed object, checked on the world: after the open (:attr:`opened`) and
    after the retreat (this leaf), the object lies within :data:`RELEASE_SHIFT_M` of where it was
    when the fingers began to open (:attr:`mark`, a leaf put before the open, records it), and
    after the retreat it touches no link of ``robot``; FAILURE naming how far it moved and where it
    is, or the link it still touches (a step that fails is re-planned). A SUCCESS with the placed
    object dragged off its place by the opening fingers, or riding away on one, is not a place
    (issue 33 item 4: the WSG 50 dragged a box 2.9 cm as it opened, the retreat lifted it 1 cm and
    dropped it 7.6 mm from its place). Writes the metric ``release_shift_m`` (the largest such move
    of the run). Backends without contacts (hardware) are not checked here."""

    def __init__(self, name: str, backend: Any, robot: str, obj: str, write_metric: Any):
        super().__init__(name=name)
        self._backend, self._robot, self._obj, self._write = backend, robot, obj, write_metric
        self._set_down: Optional[np.ndarray] = None
        self.mark = _LetGoPhase(f"{name}: set-down pose", self, "mark")
        self.opened = _LetGoPhase(f"{name}: opened", self, "opened")

    def _world(self) -> Any:
        world = getattr(self._backend, "world", None)
        return world if hasattr(world, "contacts") else None

    def _shift(self, when: str) -> Optional[str]:
        """Measure the move since the set-down, write the metric; the failure text when too far."""
        world = self._world()
        if world is None or self._set_down is None:
            return None
        p = np.asarray(world.object_pose(self._obj), dtype=float)[:3, 3]
        shift = float(np.linalg.norm(p - self._set_down))
        before = py_trees.blackboard.Blackboard.storage.get("/metrics/release_shift_m")
        if not isinstance(before, (int, float)) or shift > before:
            self._write("release_shift_m", round(shift, 4))
        self.feedback_message = f"{self._obj} {shift * 1000:.1f} mm from where it was set down {when}"
        if shift <= RELEASE_SHIFT_M:
            return None
        a = ", ".join(f"{v:.3f}" for v in self._set_down)
        return (f"{self._obj} moved {shift * 100:.1f} cm from where it was set down ({a}) {when} (at most "
                f"{RELEASE_SHIFT_M * 100:g} cm): {object_state_text(self._backend, self._obj)}")

    def update(self) -> Status:
        world = self._world()
        if world is None:
            return Status.SUCCESS
        on = sorted({c.link_b for c in world.contacts(self._obj) if c.body_b == self._robot})
        if on:
            self.feedback_message = (f"{self._obj} still touches {', '.join(f'{self._robot}/{ln}' for ln in on)} after "
                                     f"the fingers opened and the hand retreated: "
                                     f"{object_state_text(self._backend, self._obj)}")
            return Status.FAILURE
        why = self._shift("after the retreat")
        if why is not None:
            self.feedback_message = why
            return Status.FAILURE
        return Status.SUCCESS


class _LetGoPhase(py_trees.behaviour.Behaviour):
    """A step of :class:`_LetGo`: ``mark`` records the object's position (SUCCESS); ``opened``
    checks how far it moved as the fingers opened."""

    def __init__(self, name: str, check: _LetGo, phase: str):
        super().__init__(name=name)
        self._check, self._phase = check, phase

    def update(self) -> Status:
        c = self._check
        world = c._world()
        if self._phase == "mark":
            c._set_down = (np.asarray(world.object_pose(c._obj), dtype=float)[:3, 3].copy()
                           if world is not None else None)
            return Status.SUCCESS
        why = c._shift("as the fingers opened")
        self.feedback_message = c.feedback_message
        if why is not None:
            self.feedback_message = why
            return Status.FAILURE
        return Status.SUCCESS


def _failed_leaf(root: py_trees.behaviour.Behaviour) -> Optional[py_trees.behaviour.Behaviour]:
    found = None
    for node in root.iterate():
        if node.status == Status.FAILURE and not node.children:
            found = node
    return found
