"""Planning regrasps: ``PlanRegrasp`` (HPP constraint-graph search from the current grasp state to a
goal) and, with geometry, :func:`plan_in_world` (every transition of a candidate plan checked by IK
and collisions in the backend's collision world, placements and grasps chosen by the plan).

Units: metres, milliseconds in metrics. Poses: (4, 4) homogeneous transforms, world frame.
"""

from __future__ import annotations

import time
from typing import Any, Mapping, Optional, Sequence

import numpy as np
from py_trees.common import Status

from ..geometry.poses import invert, rotation_angle
from ..planning.geometric_model import GeometricGoal, GraspVariant
from ..planning.geometric_queries import GeometricPlan, GeometricStep
from ..planning.regrasp import NoPlanError, RegraspPlan
from .base import ManipulationBehaviour
from .grasp_state import _CONFIG_PARAMS, _RegraspBase
from .params import REQUIRED, BlackboardRef, Param
from .regrasp_config import RegraspConfig, _config_at_load, _config_of, _goal_of, _goal_text, _names, _reason, _resolve

__all__ = ["PlanRegrasp", "plan_in_world", "plan_with_geometry", "placement_goal_of", "geometry_host"]


def geometry_host(backend: Any) -> Optional[Any]:
    """The backend's planning service (:func:`~py_trees_manipulation.backend.planning_service`: the
    simulator's ``motion_planning`` extension or the hardware client's planner) when it can run a
    function in its synced collision world (``call_in_world``); None when the backend has none."""
    from ..backend import planning_service

    service = planning_service(backend)
    return service if service is not None and callable(getattr(service, "call_in_world", None)) else None


def placement_goal_of(cfg: RegraspConfig, value: Any) -> dict[str, list[str]]:
    """``{object: [faces]}`` from the ``placement_goal`` parameter (``"+x"`` means ``"<object>/+x"``).

    Raises:
        ValueError: not a mapping, or an unknown object.
    """
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValueError(f"placement_goal: expected {{object: [faces it must end resting on]}}, got {value!r}")
    out: dict[str, list[str]] = {}
    for o, faces in value.items():
        if o not in cfg.objects:
            raise ValueError(f"placement_goal: unknown object {o!r}; the regrasp objects are {sorted(cfg.objects)}")
        if isinstance(faces, str):
            faces = [faces]
        if not isinstance(faces, (list, tuple)) or not faces:
            raise ValueError(f"placement_goal.{o}: expected a list of face names (e.g. [{o}/+x, {o}/-x])")
        out[str(o)] = [str(f) if "/" in str(f) else f"{o}/{f}" for f in faces]
    return out


def plan_with_geometry(backend: Any, cfg: RegraspConfig, start: Any, goal: Any,
                       faces: Optional[Mapping[str, Sequence[str]]] = None, failed: Sequence[tuple] = (),
                       max_checks: int = 200, motions: str = "straight") -> GeometricPlan:
    """:func:`plan_in_world` in the backend's collision world, synced to the simulator now, on the
    world's worker thread (the calling thread waits: typically tens of milliseconds).

    Raises:
        RuntimeError: the backend has no collision world; and as :func:`plan_in_world`.
    """
    host = geometry_host(backend)
    if host is None:
        raise RuntimeError("planning with geometry needs a collision world (the backend's motion_planning service)")
    scene = getattr(backend, "scene", None) or getattr(host, "scene", None)
    scene_objects = {o.name: o for o in getattr(scene, "objects", ())}

    def job(world: Any) -> GeometricPlan:
        return plan_in_world(world, cfg, start, goal, faces, scene_objects=scene_objects, failed=failed,
                             max_checks=max_checks, motions=motions)

    return host.call_in_world(job)


def plan_in_world(world: Any, cfg: RegraspConfig, start: Any, goal: Any,
                  faces: Optional[Mapping[str, Sequence[str]]] = None, scene_objects: Optional[Mapping[str, Any]] = None,
                  failed: Sequence[tuple] = (), max_checks: int = 200, motions: str = "straight") -> GeometricPlan:
    """A regrasp plan whose transitions were checked by IK and collisions in a collision world
    (:class:`~py_trees_manipulation.planning.geometric.GeometricRegraspPlanner` with
    :class:`~py_trees_manipulation.collision.regrasp.TransitionChecker`), from the objects' poses and
    the arms' configurations in ``world`` now. Call it on the thread that owns the world.

    Placements: where each free object lies now, the description's ``contacts``, the spot it lies on
    with its other faces and a grid on every ``environment_contacts`` surface (``placements:``). A
    gripper that holds a handle at the start holds it by the grasp measured now (``"<handle>/as held"``).
    The grid is searched at the objects' own yaws first (``placements.yaws_deg[0]``); only when no
    plan passes the checks are the turned yaws added and the search run again: the common plan pays
    nothing for them (four yaws make the graph four times larger), and an object is turned only to
    bring round a handle the arm cannot take as it lies.

    Args:
        world: the :class:`~py_trees_manipulation.collision.world.CollisionWorld`.
        start: the start grasp state (any form of :func:`_resolve`).
        goal: a grasp goal (:func:`_goal_of`); faces: :func:`placement_goal_of`.
        scene_objects: object name -> scene object (its faces: ``placements_for_object``).
        failed: executed steps that failed (:meth:`GeometricRegraspPlanner.failed_steps`), pruned.
        max_checks: transitions checked at most; motions: ``"straight"`` or ``"none"``
            (:class:`~py_trees_manipulation.collision.regrasp.TransitionChecker`).

    Raises:
        ValueError: bad input (an environment contact that is no body, a description placement that
            does not rest on a surface, an unknown handle or face in the goal), naming it.
        NoPlanError: no plan passes the checks; the text lists the pruned transitions and why.
    """
    settings = cfg.placements
    if len(settings.yaws_deg) > 1:
        import dataclasses

        try:
            own_yaw = dataclasses.replace(settings, yaws_deg=tuple(settings.yaws_deg[:1]))
            return _plan_in_world(world, cfg, own_yaw, start, goal, faces, scene_objects, failed, max_checks, motions)
        except NoPlanError:
            pass
    return _plan_in_world(world, cfg, settings, start, goal, faces, scene_objects, failed, max_checks, motions)


def _plan_in_world(world: Any, cfg: RegraspConfig, settings: Any, start: Any, goal: Any,
                   faces: Optional[Mapping[str, Sequence[str]]], scene_objects: Optional[Mapping[str, Any]],
                   failed: Sequence[tuple], max_checks: int, motions: str) -> GeometricPlan:
    """:func:`plan_in_world` with the grid's placement settings ``settings``."""
    from ..collision.regrasp import (ObjectGeometry, TransitionChecker, build_placements, robot_reach,
                                     support_surface)
    from ..geometry.grasps import placements_for_object
    from ..planning.geometric import GeometricRegraspPlanner
    from ..planning.geometric_model import GeometricModel

    scene_objects = dict(scene_objects or {})
    start_t = _resolve(cfg, start)
    names = cfg.factory.names_from_grasps(start_t)
    held = {cfg.handles[h].object for h in names.values() if h}
    poses = {o: np.asarray(world.object_pose(o), dtype=float) for o in cfg.objects}
    tcp = {g: np.asarray(world.tcp_pose(arm), dtype=float) for g, (arm, _) in cfg.grippers.items()}
    openings = {g: float(world.robots[arm].model.gripper.opening_m[1]) for g, (arm, _) in cfg.grippers.items()}
    surfaces = []
    for n in cfg.environment_contacts:
        try:
            surfaces.append(support_surface(world, n))
        except ValueError as e:
            raise ValueError(f"regrasp.environment_contacts: {e}") from None
    reach = robot_reach(world, sorted({arm for arm, _ in cfg.grippers.values()}))
    placements, notes = {}, []
    for o, spec in cfg.objects.items():
        fcs = placements_for_object(scene_objects[o]) if o in scene_objects else []
        og = ObjectGeometry(o, poses[o], o in held, fcs, spec.placements, spec.handover_pose)
        try:
            placements[o], n = build_placements(world, og, surfaces, reach, settings)
        except ValueError as e:
            raise ValueError(f"regrasp.objects.{o}.contacts.{e}") from None
        notes += n
    variants = cfg.grasp_variants()
    start_variants = {}
    for g, h in names.items():
        if not h:
            continue
        T_rel = invert(poses[cfg.handles[h].object]) @ tcp[g]
        vs = variants[h]
        near = min(range(len(vs)), key=lambda k: rotation_angle(vs[k].pose, T_rel)
                   + 20.0 * float(np.linalg.norm(vs[k].pose[:3, 3] - T_rel[:3, 3])))
        variants[h] = vs + (GraspVariant(h, f"{h}/as held", T_rel, vs[near].width_m, vs[near].approach_m,
                                         graspable=False),)
        start_variants[g] = len(variants[h]) - 1
    model = GeometricModel(cfg.factory, variants, placements, start_poses=poses, tcp_poses=tcp,
                           gripper_opening_m=openings,
                           handover_poses={o: spec.handover_pose for o, spec in cfg.objects.items()},
                           lift_m=cfg.lift_m, retreat_m=cfg.retreat_m, notes=notes)
    checker = TransitionChecker(world, {g: arm for g, (arm, _) in cfg.grippers.items()}, motions=motions)
    planner = GeometricRegraspPlanner(model, checker, max_checks=max_checks)
    planner.add_failed_steps(failed)
    st = planner.start_state(start_t, variants=start_variants)
    return planner.plan(st, GeometricGoal(goal, dict(faces or {})))


def _one_line(text: str) -> str:
    return "; ".join(line.strip().lstrip("- ") for line in text.splitlines() if line.strip())


_GEOMETRY = Param("choice", "auto", "check every transition by IK and collisions in the collision world: 'auto' "
                  "(when the backend has one: the simulator), 'on', 'off' (grasp states only)",
                  choices=("auto", "on", "off"), blackboard=False)


def _use_geometry(b: ManipulationBehaviour) -> bool:
    mode = b.params.get("geometry", "off")
    has = geometry_host(b.backend) is not None and hasattr(getattr(b.backend, "world", None), "object_pose")
    if mode == "on" and not has:
        raise KeyError("geometry: on needs a backend with a collision world (the simulator)")
    return has and mode != "off"


# ------------------------------------------------------------------------------------------------
# PlanRegrasp
# ------------------------------------------------------------------------------------------------
class PlanRegrasp(_RegraspBase):
    """Plan the grasp changes from the current grasp state to ``goal`` (HPP constraint graph, A*).

    With geometry (``geometry: auto`` in the simulator) the plan also chooses, for every release,
    where and on which face each object is put down, and for every grasp which of the handle's
    grasps is used; every transition of a candidate plan is checked by IK and collisions (pregrasp,
    grasp, lift; pre-place, place, retreat) before the plan is returned, and a transition that fails
    is pruned and the search goes on (HPP style). Without geometry the plan is over grasp states
    only (placements are chosen when the plan runs).

    SUCCESS on the first tick with the plan written to ``output_key``; FAILURE when the description
    is missing or malformed, the current state is refused by the rules, or no plan exists (the
    reason names start, goal and, with geometry, every pruned transition and why). The plan is
    :meth:`RegraspPlan.to_dict` plus ``goal_spec`` (the goal as given), ``placement_goal``,
    ``start_names`` and ``plan_time_ms``. Never RUNNING: the tick waits for the planner.

    Args:
        goal: ``{gripper: handle}`` (``""``/null: empty; unlisted grippers don't care; ``{}``: any), an
            HPP state name, or ``"{key}"``.
        placement_goal: ``{object: [faces]}``: the object must end resting on one of these faces
            (``box/+x``, or ``+x``); needs geometry.
        current: the start state; default: sensed or ``state_key`` (see ``sense``).
        geometry: ``auto``, ``on`` or ``off`` (above). max_checks: transitions checked at most.
        check_motions: also check the straight joint motions between a transition's waypoints.
        config / config_key: the regrasp description (module docstring).
        output_key: blackboard key for the plan.

    Blackboard:
        reads ``config_key``, ``state_key``; writes ``output_key``, ``state_key`` (the start state),
        ``/metrics/plan_time_ms`` (added to), ``/metrics/planned_grasp_changes`` and, with geometry,
        ``/metrics/geometric_checks``, ``/metrics/pruned_transitions``, ``/metrics/ik_time_ms`` and
        ``/metrics/collision_time_ms`` (added to).

    Example:
        .. code-block:: yaml

            - PlanRegrasp: {goal: {panda/hand: box/side}, output_key: regrasp_plan}
            - PlanRegrasp: {goal: {panda/hand: ""}, placement_goal: {box: [+x, -x, +y, -y]}}
    """

    ABSTRACT = False
    STATE_PARAM = "goal"
    BLACKBOARD_WRITES = ("state_key",)  # besides output_key (trees/dataflow.py)
    PARAMS = {
        **_CONFIG_PARAMS,
        "goal": Param("any", REQUIRED, "goal grasp state: {gripper: handle or ''}, a state name, or '{key}'"),
        "placement_goal": Param("any", None, "{object: [faces]}: faces the object must end resting on (needs geometry)"),
        "current": Param("any", None, "start grasp state (default: sensed or state_key)"),
        "geometry": _GEOMETRY,
        "max_checks": Param("int", 200, "transitions checked by IK and collisions at most", min=1, max=100000,
                            blackboard=False),
        "check_motions": Param("bool", True, "also check the straight joint motions between a transition's waypoints "
                               "(approach, lift, descent, retreat)", blackboard=False),
        "output_key": Param("key", "regrasp_plan", "blackboard key for the plan"),
    }

    @classmethod
    def scene_problems(cls, params: dict[str, Any], scene: Any, blackboard: Optional[Mapping[str, Any]] = None
                       ) -> list[tuple[str, str, str]]:
        """The base's check of the goal's names, then a literal goal that puts an object in a hand
        whose arm may not lift it (:func:`~py_trees_manipulation.scene.spec.payload_problem`):
        refused before anything moves (the run found it only when planning, after the other arm had
        lifted it)."""
        out = super().scene_problems(params, scene, blackboard)
        goal = params.get("goal")
        if out or not isinstance(goal, Mapping):
            return out
        cfg = _config_at_load(params, blackboard, scene)
        if cfg is None:
            return out
        from ..scene.spec import payload_problem

        for gripper, handle in goal.items():
            if not handle or str(gripper) not in cfg.grippers or str(handle) not in cfg.handles:
                continue
            heavy = payload_problem(scene, cfg.handles[str(handle)].object, cfg.grippers[str(gripper)][0])
            if heavy:
                return [("goal", f"{cls.__name__}.goal: {gripper} holds {handle} at the goal: {heavy}", "")]
        return out

    @classmethod
    def plan_problems(cls, params: dict[str, Any], world: Any, scene: Any, seed: int = 0,
                      blackboard: Optional[Mapping[str, Any]] = None, task_check: Any = None) -> list[tuple[str, str, str]]:
        """``ptm validate --plan``: the regrasp plan from the grasp state the file starts in (every
        gripper empty, or a literal ``current``; after the dry run put an object in a hand, the state
        sensed from the poses in the collision world, as the run senses it without the simulator's
        contacts: :func:`~.grasp_state.sense_grasps_from_poses`) to the goal, with geometry, in the
        collision world (every transition's waypoints and straight lines checked, as the run plans
        it): ``(parameter, problem, hint)`` when no plan passes. A description, goal or start read
        from the blackboard at run time is left to the run, and so is a hand the dry run put an object
        in at none of the object's handles."""
        values = {k: params.get(k, p.default) for k, p in cls.all_params().items()}
        if any(isinstance(values[k], BlackboardRef) for k in ("config", "goal", "placement_goal", "current")) \
                or values.get("geometry") == "off":
            return []
        robots = getattr(world, "robots", {})
        cfg = _config_at_load(values, blackboard, scene)
        if cfg is None:
            return []
        cur = values.get("current")
        if cur is None and any(world.attached(r) for r in robots):
            # the dry run put an object in a hand: the grasp state sensed as the run senses it from
            # poses (the TCP at a handle of the object, the fingers closed to its width); left to the
            # run when a hand that holds something is at none of its handles
            from .grasp_state import sense_grasps_from_poses

            sensed = sense_grasps_from_poses(_WorldSeam(world), cfg)
            held = {g for g, (arm, _) in cfg.grippers.items() if arm in robots and world.attached(arm)}
            if any(sensed[g].handle is None for g in held):
                return []
            cur = {g: s.handle for g, s in sensed.items()}
        try:
            goal = _goal_of(cfg, values["goal"])
            faces = placement_goal_of(cfg, values.get("placement_goal"))
            start = _resolve(cfg, cur if cur is not None else {g: None for g in cfg.factory.grippers})
        except (KeyError, TypeError, ValueError):
            return []   # said by the load-time checks or the run
        scene_objects = {o.name: o for o in getattr(scene, "objects", ())}
        try:
            plan = plan_in_world(world, cfg, start, goal, faces, scene_objects=scene_objects,
                                 max_checks=int(values.get("max_checks") or 200),
                                 motions="straight" if values.get("check_motions", True) else "none")
        except (NoPlanError, ValueError) as e:
            text = f"PlanRegrasp: {_one_line(str(e))}"
            fix = regrasp_base_suggestion(world, scene, cfg, start, goal, faces, str(e), seed, task_check)
            return [("", text + (f"; {fix}" if fix else ""), "")]
        heavy = plan_payload_problem(scene, cfg, plan)
        return [("goal", f"PlanRegrasp: {heavy}", "")] if heavy else []

    def update(self) -> Status:
        try:
            cfg = _config_of(self)
            goal = _goal_of(cfg, self.param("goal"))
            faces = placement_goal_of(cfg, self.param("placement_goal"))
            cur = self.param("current")
            start = _resolve(cfg, cur) if cur is not None else _resolve(cfg, self.current_state(cfg))
            geometric = _use_geometry(self)
            if faces and not geometric:
                raise ValueError("placement_goal needs geometry (a backend with a collision world, geometry: auto/on)")
        except (KeyError, ValueError) as e:
            return self.fail(str(e.args[0]) if e.args else str(e))
        t0 = time.perf_counter()
        try:
            if geometric:
                plan: RegraspPlan = plan_with_geometry(
                    self.backend, cfg, start, goal, faces, max_checks=int(self.params["max_checks"]),
                    motions="straight" if self.params["check_motions"] else "none")
            else:
                plan = cfg.planner().plan(start, goal)
        except (NoPlanError, ValueError) as e:
            ms = (time.perf_counter() - t0) * 1000.0
            self._write_metric("plan_time_ms", ms, add=True)
            if geometric:
                host = geometry_host(self.backend)
                scene = getattr(self.backend, "scene", None) or getattr(host, "scene", None)
                seed = int(getattr(self.backend, "seed", 0) or 0)
                task_check = getattr(self.backend, "task_check", None)
                fix = host.call_in_world(lambda world: regrasp_base_suggestion(world, scene, cfg, start, goal, faces,
                                                                               str(e), seed, task_check))
                return self.fail(f"{_one_line(str(e))} ({ms:.0f} ms)" + (f"; {fix}" if fix else ""))
            return self.fail(f"no regrasp plan from '{_names(cfg, start)}' to {_goal_text(cfg, goal)}: "
                             f"{_reason(e)} ({ms:.2f} ms)")
        ms = (time.perf_counter() - t0) * 1000.0
        heavy = plan_payload_problem(getattr(self.backend, "scene", None), cfg, plan)
        if heavy:  # refused before any of it runs, as ptm validate --plan refuses it
            self._write_metric("plan_time_ms", ms, add=True)
            return self.fail(heavy)
        out = plan.to_dict()
        out.update({"goal_spec": dict(goal) if isinstance(goal, Mapping) else cfg.factory.names_from_grasps(goal),
                    "placement_goal": faces, "geometric": geometric,
                    "start_names": cfg.factory.names_from_grasps(start),
                    "plan_time_ms": round(ms, 4)})
        self.write_output("output_key", out)
        self.blackboard.set(self._state_key, cfg.factory.names_from_grasps(start), overwrite=True)
        self._write_metric("plan_time_ms", ms, add=True)
        self._write_metric("planned_grasp_changes", len(plan))
        if isinstance(plan, GeometricPlan):
            _geometry_metrics(self, plan)
            steps = [s.label for s in plan.steps if isinstance(s, GeometricStep)]
            self.feedback_message = (f"{len(plan)} grasp changes in {ms:.0f} ms ({plan.checks} transitions checked, "
                                     f"{len(plan.pruned)} pruned): " + (" -> ".join(steps) or "already there"))
        else:
            self.feedback_message = (f"{len(plan)} grasp changes in {ms:.2f} ms: "
                                     + (" -> ".join(plan.transition_names) or "already there"))
        return Status.SUCCESS


def plan_payload_problem(scene: Any, cfg: RegraspConfig, plan: RegraspPlan) -> Optional[str]:
    """Why a regrasp plan may not run: a grasp of the plan lifts an object heavier than the arm of its
    gripper may lift (:func:`~py_trees_manipulation.scene.spec.payload_problem`), naming the step;
    None when every grasp may (or the scene says nothing of masses and payloads)."""
    from ..scene.spec import payload_problem

    if scene is None:
        return None
    for step in plan.steps:
        if step.direction != "grasp" or step.gripper not in cfg.grippers:
            continue
        heavy = payload_problem(scene, step.object, cfg.grippers[step.gripper][0])
        if heavy:
            return f"the plan's step {step.transition!r} lifts it: {heavy}"
    return None


def regrasp_base_suggestion(world: Any, scene: Any, cfg: RegraspConfig, start: Any, goal: Any,
                            faces: Mapping[str, Sequence[str]], why: str, seed: int = 0,
                            task_check: Any = None) -> str:
    """For a regrasp plan that fails because something is out of an arm's reach (``why``, the
    planner's text): a base pose from which it plans, as ``CheckReachability`` names one (``"a
    regrasp plan passes every check from a base at ..."``), or "" (not a reach failure, or no base).
    Each robot of the plan's grippers is tried in turn (a handover's either arm), the others left
    where they stand: candidates come from :func:`~py_trees_manipulation.collision.base_search.find_base`
    with each regrasp object's grasps as the targets, on the surface the robot stands on; a base is
    kept only if the whole plan (:func:`plan_in_world`) passes from it and, with ``task_check`` (the
    whole-task test, :func:`~py_trees_manipulation.trees.plan_check.whole_task_test`), the whole task
    too (False: no suggestion). The world's bases are put back."""
    if task_check is False or ("reach" not in why and "workspace" not in why):
        return ""
    from ..collision.base_placement import surface_under, task_accept
    from .reach import SUGGEST_BUDGET
    from ..collision.base_search import SearchBudget
    from ..collision.reachability import base_frame, find_base_relaxing, set_base_frame
    from ..scene.reach_targets import grasp_target
    from .reach import base_suggestion

    objects = {o.name: o for o in getattr(scene, "objects", ())}
    targets = [grasp_target(objects[n], world.object_pose(n)) for n in cfg.objects if n in objects]
    names = [r.name for r in getattr(scene, "robots", ())]
    robots = sorted({arm for arm, _ in cfg.grippers.values()}, key=lambda r: names.index(r) if r in names else 0)
    if not targets:
        return ""
    budget = SUGGEST_BUDGET // max(len(robots), 1)
    for robot in robots:
        if robot not in names or robot not in world.robots:
            continue
        T0 = base_frame(world, robot)
        whole = task_accept(task_check, scene, robot)

        def accept(T: Any, robot: str = robot, T0: Any = T0, whole: Any = whole) -> Optional[str]:
            try:
                set_base_frame(world, robot, T)
                plan_in_world(world, cfg, start, goal, faces, scene_objects=objects)
            except (NoPlanError, ValueError) as e:
                return f"no regrasp plan: {_one_line(str(e))}"
            finally:
                set_base_frame(world, robot, T0)
            return whole(T) if whole is not None else None

        placement = find_base_relaxing(world, robot, lambda probe: targets, surface_under(world, scene, robot),
                                       seed=seed, budget=SearchBudget(budget), accept=accept)
        if placement.ok:
            return base_suggestion(placement, names.index(robot), "a regrasp plan passes every check")
    return ""


def _geometry_metrics(b: "_RegraspBase", plan: GeometricPlan) -> None:
    b._write_metric("geometric_checks", plan.checks, add=True)
    b._write_metric("pruned_transitions", len(plan.pruned), add=True)
    b._write_metric("ik_time_ms", round(plan.ik_time_s * 1e3, 3), add=True)
    b._write_metric("collision_time_ms", round(plan.collision_time_s * 1e3, 3), add=True)


class _WorldSeam:
    """What :func:`~.grasp_state.sense_grasps_from_poses` reads through the seam (``world.object_pose``,
    ``arms[name].tcp_pose()``, ``grippers[name].gap_m()``), answered from a collision world: the arm
    and the gripper of each robot under the robot's name."""

    def __init__(self, world: Any):
        self.world = world
        self.arms = {r: _WorldPart(world, r) for r in world.robots}
        self.grippers = self.arms


class _WorldPart:
    def __init__(self, world: Any, robot: str):
        self._world, self._robot = world, robot

    def tcp_pose(self) -> Any:
        return self._world.tcp_pose(self._robot)

    def gap_m(self) -> float:
        r = self._world.robots[self._robot]
        return float(r.gap_of(*r.finger_positions()))
