"""Graph-planned regrasps: plan a sequence of grasp changes, carry it out, check the grasp state.

Behaviours: ``PlanRegrasp`` (HPP constraint-graph search from the current grasp state to a goal),
``ExecuteRegraspPlan`` (expands each step, at run time, into a Sequence of the motion behaviours:
approach, grasp, lift, place on a contact surface, release, retreat; re-plans once when a step
fails) and the condition ``GraspStateIs``.

The regrasp description (:class:`RegraspConfig`) maps HPP names onto the scene. It is a **task
value on the blackboard** (key ``regrasp`` by default), not a ``scene:`` section: handles, placements
and rules are task knowledge that holds the same on the simulator, the fake backend and hardware,
and the planner behaviours are not sim-only. Format (poses: ``{position, orientation (w, x, y, z)
| rpy_deg}``, metres)::

    blackboard:
      regrasp:
        grippers:                      # HPP gripper name -> robot (arm and gripper resources)
          panda/hand: panda            #   or {arm: panda, gripper: panda}
        objects:
          box:
            handles:                   # HPP handle name -> TCP pose in the object frame
              box/top:  {pose: {position: [0, 0, 0.04], rpy_deg: [180, 0, 0]}, approach_m: 0.10}
              box/side: {pose: {position: [0, 0, 0.02], rpy_deg: [0, 90, 0]}}
            contacts:                  # object contact surface -> object poses (world) resting on it
              box/bottom: [{position: [0.5, 0.0, 0.686]}]
            handover_pose: {position: [0.6, 0, 0.9]}   # optional: where the holder presents it
        environment_contacts: [table/top]
        rules:                         # optional, HPP semantics (first match wins, full regex)
          - {grippers: [".*"], handles: [".*"], link: true}

Per-handle keys: ``pose`` (required), ``approach_m`` (stand-off along the TCP z axis before the
straight approach, default 0.10 m), ``open_m`` (finger gap for the approach, metres, or ``open``:
the gripper's full opening, the default),
``max_effort_n`` (grip force, default 40 N). Top-level optional keys: ``lift_m`` (0.10 m, lift after
a grasp from a surface and the height of the pre-place pose), ``retreat_m`` (0.10 m, back-off along
the TCP z axis after a release), ``place_force_n`` (8 N, force guard when lowering onto the surface).

Grasp state: a mapping ``{gripper: handle or None}``. ``sense: auto`` derives it from the
simulator's contacts (a gripper holds an object when two finger links touch it; the handle is the
one whose grasp pose is nearest to the measured TCP pose in the object frame) and otherwise reads
the blackboard key ``state_key`` (``grasp_state``), which ``ExecuteRegraspPlan`` updates after
every completed step. Summary metrics go to the blackboard namespace ``/metrics`` (merged into the
run summary by the runner): ``plan_time_ms`` (sum over plans and re-plans), ``grasp_changes``
(executed steps) and ``goal_reached``.

Sources: HPP ``ConstraintGraphFactory`` (names, waypoint transitions: pregrasp / intersec /
preplace), Lamiraux & Mirabel, IEEE T-RO 2021; MoveIt Task Constructor's pick/place stage order
(approach, close, lift / lower, open, retreat).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Union

import numpy as np
import py_trees
from py_trees.common import Access, Status

from ..geometry.poses import Pose, invert, pose_from_spec, pose_from_xyz_rpy, rotation_angle
from ..planning.constraint_graph import ConstraintGraphFactory, Rule
from ..planning.regrasp import NoPlanError, RegraspPlan, RegraspPlanner, RegraspStep
from .base import ManipulationBehaviour
from .grasp_fix import GraspFixAttach
from .motion import GAP_NAMES, GripperCommand, MoveCartesian, MoveToPose
from .params import REQUIRED, Param

__all__ = ["RegraspConfig", "HandleSpec", "ObjectRegraspSpec", "PlanRegrasp", "ExecuteRegraspPlan",
           "GraspStateIs", "sense_grasp_state", "METRICS_NS"]

#: blackboard namespace whose keys the runner merges into ``summary["metrics"]``
METRICS_NS = "/metrics"


# ------------------------------------------------------------------------------------------------
# The regrasp description
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class HandleSpec:
    """One handle: where the TCP goes, in the object frame.

    Attributes:
        name, object: HPP handle name and its object.
        grasp_pose: (4, 4) TCP pose in the object frame at the grasp (TCP z = approach direction).
        approach_m: stand-off along the TCP z axis before the straight approach, metres.
        open_m: finger gap for the approach, metres, or ``"open"`` (the gripper's full opening).
        max_effort_n: grip force limit, newtons.
    """

    name: str
    object: str
    grasp_pose: Pose
    approach_m: float = 0.10
    open_m: Union[float, str] = "open"
    max_effort_n: float = 40.0


@dataclass(frozen=True)
class ObjectRegraspSpec:
    """An object's handles, contact surfaces with their placement poses, and handover pose.

    Attributes:
        placements: contact surface name -> object poses (world, (4, 4)) resting on it.
        handover_pose: object pose (world) where its holder presents it for a handover, or None.
    """

    name: str
    handles: tuple[str, ...]
    placements: dict[str, tuple[Pose, ...]]
    handover_pose: Optional[Pose] = None


@dataclass(frozen=True)
class RegraspConfig:
    """The parsed regrasp description (see the module docstring for the YAML form).

    Attributes:
        grippers: HPP gripper name -> (arm resource, gripper resource), in order.
        objects: object name -> :class:`ObjectRegraspSpec`, in order.
        handles: handle name -> :class:`HandleSpec`.
        environment_contacts: environment surface names.
        rules: the raw rule mappings (HPP ``Rule``), or None.
        lift_m, retreat_m: metres; place_force_n: newtons.
    """

    grippers: dict[str, tuple[str, str]]
    objects: dict[str, ObjectRegraspSpec]
    handles: dict[str, HandleSpec]
    environment_contacts: tuple[str, ...] = ()
    rules: Optional[tuple[Mapping[str, Any], ...]] = None
    lift_m: float = 0.10
    retreat_m: float = 0.10
    place_force_n: float = 8.0
    _factory: Any = field(default=None, compare=False, repr=False)

    @classmethod
    def from_mapping(cls, data: Any) -> "RegraspConfig":
        """Parse the YAML/blackboard form.

        Raises:
            ValueError: a malformed entry; the message names it as ``regrasp.objects.box...``.
        """
        if isinstance(data, RegraspConfig):
            return data
        if not isinstance(data, Mapping):
            raise ValueError(f"regrasp: expected a mapping with grippers and objects, got {type(data).__name__}")
        unknown = set(data) - {"grippers", "objects", "environment_contacts", "rules", "lift_m", "retreat_m",
                               "place_force_n"}
        if unknown:
            raise ValueError(f"regrasp: unknown key(s) {sorted(unknown)}")
        grippers: dict[str, tuple[str, str]] = {}
        gdata = data.get("grippers")
        if not isinstance(gdata, Mapping) or not gdata:
            raise ValueError("regrasp.grippers: expected a mapping {hpp gripper name: robot or {arm, gripper}}")
        for g, v in gdata.items():
            if isinstance(v, str):
                grippers[str(g)] = (v, v)
            elif isinstance(v, Mapping) and "arm" in v:
                grippers[str(g)] = (str(v["arm"]), str(v.get("gripper", v["arm"])))
            else:
                raise ValueError(f"regrasp.grippers.{g}: expected a robot name or {{arm, gripper}}, got {v!r}")
        objects: dict[str, ObjectRegraspSpec] = {}
        handles: dict[str, HandleSpec] = {}
        odata = data.get("objects")
        if not isinstance(odata, Mapping) or not odata:
            raise ValueError("regrasp.objects: expected a mapping {object: {handles, contacts}}")
        for o, od in odata.items():
            where = f"regrasp.objects.{o}"
            if not isinstance(od, Mapping) or not isinstance(od.get("handles"), Mapping) or not od["handles"]:
                raise ValueError(f"{where}: needs 'handles: {{name: {{pose: ...}}}}'")
            for h, hd in od["handles"].items():
                hw = f"{where}.handles.{h}"
                if h in handles:
                    raise ValueError(f"{hw}: handle name already used by object {handles[h].object!r}")
                if not isinstance(hd, Mapping) or "pose" not in hd:
                    raise ValueError(f"{hw}: needs 'pose' (the TCP pose in the object frame)")
                extra = set(hd) - {"pose", "approach_m", "open_m", "max_effort_n"}
                if extra:
                    raise ValueError(f"{hw}: unknown key(s) {sorted(extra)}")
                try:
                    pose = pose_from_spec(hd["pose"])
                except ValueError as e:
                    raise ValueError(f"{hw}.pose: {e}") from None
                open_m = hd.get("open_m", "open")
                if open_m not in GAP_NAMES:
                    open_m = float(open_m)
                handles[h] = HandleSpec(str(h), str(o), pose, float(hd.get("approach_m", 0.10)),
                                        open_m, float(hd.get("max_effort_n", 40.0)))
            placements: dict[str, tuple[Pose, ...]] = {}
            cdata = od.get("contacts") or {}
            if not isinstance(cdata, Mapping):
                raise ValueError(f"{where}.contacts: expected {{surface name: [object poses]}}")
            for c, poses in cdata.items():
                try:
                    placements[str(c)] = tuple(pose_from_spec(p) for p in (poses or []))
                except (ValueError, TypeError) as e:
                    raise ValueError(f"{where}.contacts.{c}: {e}") from None
            hp = od.get("handover_pose")
            try:
                hp_pose = pose_from_spec(hp) if hp is not None else None
            except ValueError as e:
                raise ValueError(f"{where}.handover_pose: {e}") from None
            objects[str(o)] = ObjectRegraspSpec(str(o), tuple(str(h) for h in od["handles"]), placements, hp_pose)
        rules = data.get("rules")
        cfg = cls(grippers=grippers, objects=objects, handles=handles,
                  environment_contacts=tuple(data.get("environment_contacts") or ()),
                  rules=tuple(rules) if rules is not None else None,
                  lift_m=float(data.get("lift_m", 0.10)), retreat_m=float(data.get("retreat_m", 0.10)),
                  place_force_n=float(data.get("place_force_n", 8.0)))
        try:
            object.__setattr__(cfg, "_factory", ConstraintGraphFactory.from_config(cfg.factory_config()))
        except (ValueError, TypeError, KeyError) as e:
            raise ValueError(f"regrasp: {e}") from None
        return cfg

    def factory_config(self) -> dict[str, Any]:
        """The :meth:`ConstraintGraphFactory.from_config` mapping (names only)."""
        out: dict[str, Any] = {
            "grippers": list(self.grippers),
            "objects": [{"name": o.name, "handles": list(o.handles), "contacts": list(o.placements)}
                        for o in self.objects.values()],
            "environment_contacts": list(self.environment_contacts),
        }
        if self.rules is not None:
            out["rules"] = [r if isinstance(r, Rule) else dict(r) for r in self.rules]
        return out

    @property
    def factory(self) -> ConstraintGraphFactory:
        """The configured constraint-graph factory (built once)."""
        return self._factory

    def planner(self) -> RegraspPlanner:
        """A fresh :class:`RegraspPlanner` (its own infeasibility marks)."""
        return RegraspPlanner(self.factory)


def _config_of(b: ManipulationBehaviour) -> RegraspConfig:
    cfg = b.param("config")
    if cfg is None:
        key = "/" + b.params["config_key"].lstrip("/")
        try:
            cfg = b.blackboard.get(key)
        except KeyError:
            raise KeyError(f"no regrasp description: blackboard key {key!r} is empty "
                           "(add 'regrasp:' under 'blackboard:' or give 'config')") from None
    return RegraspConfig.from_mapping(cfg)


# ------------------------------------------------------------------------------------------------
# Grasp state
# ------------------------------------------------------------------------------------------------
def _finger_links(contacts: list[Any]) -> set[str]:
    return {c.link_a for c in contacts if "finger" in c.link_a}


def sense_grasp_state(backend: Any, cfg: RegraspConfig) -> dict[str, Optional[str]]:
    """Grasp state from the simulator's contacts (ground truth).

    A gripper holds an object when at least two distinct finger links of its robot touch it. The
    handle is the object's handle whose grasp pose is nearest to the measured TCP pose in the
    object frame (distance in metres plus 0.05 m per radian between the approach axes).

    Returns:
        ``{gripper: handle name or None}`` for every gripper of ``cfg``.

    Raises:
        AttributeError: the backend's world has no ``contacts`` (not a simulator).
    """
    world = backend.world
    out: dict[str, Optional[str]] = {}
    for g, (arm, _gr) in cfg.grippers.items():
        out[g] = None
        for o, spec in cfg.objects.items():
            if len(_finger_links(world.contacts(arm, o))) < 2:
                continue
            T_obj_tcp = invert(world.object_pose(o)) @ backend.arms[arm].tcp_pose()
            best, best_d = None, float("inf")
            for h in spec.handles:
                G = cfg.handles[h].grasp_pose
                zc = float(np.clip(G[:3, 2] @ T_obj_tcp[:3, 2], -1.0, 1.0))
                d = float(np.linalg.norm(G[:3, 3] - T_obj_tcp[:3, 3])) + 0.05 * float(np.arccos(zc))
                if d < best_d:
                    best, best_d = h, d
            out[g] = best
            break
    return out


_SENSE = Param("choice", "auto", "where the current grasp state comes from: 'contacts' (simulator), "
               "'blackboard' (state_key), 'auto' (contacts when the backend has them)",
               choices=("auto", "contacts", "blackboard"), blackboard=False)
_CONFIG_PARAMS = {
    "config": Param("any", None, "the regrasp description (default: the blackboard key config_key)"),
    "config_key": Param("str", "regrasp", "blackboard key holding the regrasp description", blackboard=False),
    "state_key": Param("str", "grasp_state", "blackboard key of the grasp state {gripper: handle or null}",
                       blackboard=False),
    "sense": _SENSE,
}


class _RegraspBase(ManipulationBehaviour):
    ABSTRACT = True

    def __init__(self, name: Optional[str] = None, **params: Any):
        super().__init__(name=name, **params)
        self.blackboard.register_key(key="/" + self.params["config_key"].lstrip("/"), access=Access.READ)
        self.blackboard.register_key(key=self._state_key, access=Access.WRITE)

    @property
    def _state_key(self) -> str:
        return "/" + self.params["state_key"].lstrip("/")

    def _senses(self) -> bool:
        mode = self.params["sense"]
        has = self.backend is not None and hasattr(getattr(self.backend, "world", None), "contacts")
        if mode == "contacts" and not has:
            raise KeyError("sense: contacts needs a simulator backend (world.contacts)")
        return has and mode != "blackboard"

    def current_state(self, cfg: RegraspConfig) -> dict[str, Optional[str]]:
        """The current grasp state ``{gripper: handle or None}`` (see the module docstring)."""
        if self._senses():
            return sense_grasp_state(self.backend, cfg)
        try:
            raw = self.blackboard.get(self._state_key)
        except KeyError:
            raw = None
        if raw is None:
            return {g: None for g in cfg.grippers}
        return dict(cfg.factory.names_from_grasps(_resolve(cfg, raw)))

    def _write_metric(self, key: str, value: Any, add: bool = False) -> None:
        k = f"{METRICS_NS}/{key}"
        storage = py_trees.blackboard.Blackboard.storage
        if add and isinstance(storage.get(k), (int, float)):
            value = storage[k] + value
        py_trees.blackboard.Blackboard.set(k, value)


def _resolve(cfg: RegraspConfig, state: Any) -> tuple[Optional[int], ...]:
    """Grasp tuple from a mapping (``""``/None = empty), an HPP state name or a tuple."""
    f = cfg.factory
    if isinstance(state, Mapping):
        return f.grasps_from_names({g: (h or None) for g, h in state.items()})
    if isinstance(state, str):
        return f.parse_state_name(state)
    out = tuple(None if h is None else int(h) for h in state)
    f.check_grasps(out)
    return out


def _goal_of(cfg: RegraspConfig, goal: Any) -> Any:
    """Planner goal from the parameter value: a mapping is partial (unlisted grippers: any)."""
    if isinstance(goal, Mapping):
        mapping = {str(g): (h or None) for g, h in goal.items()}
        if set(mapping) == set(cfg.grippers):
            return _resolve(cfg, mapping)  # every gripper given: an exact state
        return mapping
    return _resolve(cfg, goal)


def _goal_text(cfg: RegraspConfig, goal: Any) -> str:
    return repr(goal) if isinstance(goal, Mapping) else f"'{_names(cfg, goal)}'"


def _reason(e: Exception) -> str:
    """The planner's reason without the repeated 'no regrasp plan from ... to ...' prefix."""
    text = str(e)
    return "the goal is unreachable with these rules and infeasibility marks" if text.startswith("no regrasp plan") else text


def _names(cfg: RegraspConfig, grasps: tuple[Optional[int], ...]) -> str:
    return cfg.factory.state_name(tuple(grasps))


# ------------------------------------------------------------------------------------------------
# PlanRegrasp
# ------------------------------------------------------------------------------------------------
class PlanRegrasp(_RegraspBase):
    """Plan the grasp changes from the current grasp state to ``goal`` (HPP constraint graph, A*).

    SUCCESS on the first tick with the plan written to ``output_key``; FAILURE when the description
    is missing or malformed, the current state is refused by the rules, or no plan exists (the
    reason names start, goal and rules). The plan is :meth:`RegraspPlan.to_dict` plus ``goal_spec``
    (the goal as given), ``start_names`` and ``plan_time_ms``. Never RUNNING (a 6x6 plan takes ~1 ms).

    Args:
        goal: ``{gripper: handle}`` (``""``/null: empty; unlisted grippers don't care), an HPP state
            name, or ``"{key}"``.
        current: the start state; default: sensed or ``state_key`` (see ``sense``).
        config / config_key: the regrasp description (module docstring).
        output_key: blackboard key for the plan.

    Blackboard:
        reads ``config_key``, ``state_key``; writes ``output_key``, ``state_key`` (the start state),
        ``/metrics/plan_time_ms`` (added to) and ``/metrics/planned_grasp_changes``.

    Example:
        .. code-block:: yaml

            - PlanRegrasp: {goal: {panda/hand: box/side}, output_key: regrasp_plan}
    """

    ABSTRACT = False
    BLACKBOARD_WRITES = ("state_key",)  # besides output_key (trees/dataflow.py)
    PARAMS = {
        **_CONFIG_PARAMS,
        "goal": Param("any", REQUIRED, "goal grasp state: {gripper: handle or ''}, a state name, or '{key}'"),
        "current": Param("any", None, "start grasp state (default: sensed or state_key)"),
        "output_key": Param("key", "regrasp_plan", "blackboard key for the plan"),
    }

    def update(self) -> Status:
        try:
            cfg = _config_of(self)
            goal = _goal_of(cfg, self.param("goal"))
            cur = self.param("current")
            start = _resolve(cfg, cur) if cur is not None else _resolve(cfg, self.current_state(cfg))
        except (KeyError, ValueError) as e:
            return self.fail(str(e.args[0]) if e.args else str(e))
        planner = cfg.planner()
        t0 = time.perf_counter()
        try:
            plan = planner.plan(start, goal)
        except (NoPlanError, ValueError) as e:
            ms = (time.perf_counter() - t0) * 1000.0
            self._write_metric("plan_time_ms", ms, add=True)
            return self.fail(f"no regrasp plan from '{_names(cfg, start)}' to {_goal_text(cfg, goal)}: "
                             f"{_reason(e)} ({ms:.2f} ms)")
        ms = (time.perf_counter() - t0) * 1000.0
        out = plan.to_dict()
        out.update({"goal_spec": dict(goal) if isinstance(goal, Mapping) else cfg.factory.names_from_grasps(goal),
                    "start_names": cfg.factory.names_from_grasps(start),
                    "plan_time_ms": round(ms, 4)})
        self.write_output("output_key", out)
        self.blackboard.set(self._state_key, cfg.factory.names_from_grasps(start), overwrite=True)
        self._write_metric("plan_time_ms", ms, add=True)
        self._write_metric("planned_grasp_changes", len(plan))
        self.feedback_message = (f"{len(plan)} grasp changes in {ms:.2f} ms: "
                                 + (" -> ".join(plan.transition_names) or "already there"))
        return Status.SUCCESS


# ------------------------------------------------------------------------------------------------
# GraspStateIs
# ------------------------------------------------------------------------------------------------
class GraspStateIs(_RegraspBase):
    """Condition: the current grasp state satisfies ``expected`` (SUCCESS/FAILURE, never RUNNING).

    Args:
        expected: ``{gripper: handle}``; ``""``/null means the gripper must be empty; unlisted
            grippers don't matter. Or an HPP state name (exact match).

    Example:
        .. code-block:: yaml

            - GraspStateIs: {expected: {panda/hand: box/side}}
    """

    ABSTRACT = False
    PARAMS = {
        **_CONFIG_PARAMS,
        "expected": Param("any", REQUIRED, "{gripper: handle or ''} (partial) or an HPP state name"),
    }

    def update(self) -> Status:
        try:
            cfg = _config_of(self)
            goal = _goal_of(cfg, self.param("expected"))
            state = _resolve(cfg, self.current_state(cfg))
        except (KeyError, ValueError) as e:
            return self.fail(str(e.args[0]) if e.args else str(e))
        ok = RegraspPlanner(cfg.factory).goal_satisfied(state, goal)
        text = f"grasp state '{_names(cfg, state)}'"
        if ok:
            self.feedback_message = f"{text} satisfies {_goal_text(cfg, goal)}"
            return Status.SUCCESS
        return self.fail(f"{text} does not satisfy {_goal_text(cfg, goal)}")


# ------------------------------------------------------------------------------------------------
# ExecuteRegraspPlan
# ------------------------------------------------------------------------------------------------
def _along_z(T: Pose, d: float) -> Pose:
    """``T`` moved by ``d`` metres along its own z axis."""
    out = np.array(T, dtype=float)
    out[:3, 3] += d * out[:3, 2]
    return out


_FLIP_Z = pose_from_xyz_rpy([0, 0, 0], [0, 0, np.pi])


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
      back along the TCP z axis);
    - ``handover`` release: open -> retreat.

    With GraspFix in the scene (``grasp_fix:``), a grasp also waits for the weld (GraspFixAttach);
    in a handover the receiver waits until it is ready to take the object (``handover``), and the
    giver's release waits, after opening, until the weld has passed to the receiver.

    The placement is the object's first contact-surface pose, the next one after a failure.
    In the simulator the grasp state is checked after each step (sensed from contacts); a step
    whose subtree fails or whose check fails is marked infeasible
    (:meth:`RegraspPlanner.mark_infeasible`) and the rest is re-planned from the current state,
    at most ``replans`` times.

    RUNNING while steps run; SUCCESS when every step is done and the goal holds; FAILURE with the
    failing step, its HPP transition name and the reason.

    Args:
        plan: the plan from PlanRegrasp (usually ``"{regrasp_plan}"``).
        goal: goal for re-planning (default: the plan's ``goal_spec``).
        replans: re-plans allowed after failed steps.
        velocity_scaling, approach_speed_mps: motion speeds.

    Blackboard:
        writes ``state_key`` after each step, ``/metrics/grasp_changes`` (executed steps, added to),
        ``/metrics/goal_reached``, ``/metrics/replans`` and ``/metrics/plan_time_ms`` (re-plans).

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
        try:
            self._cfg = _config_of(self)
            self._planner = self._cfg.planner()
            plan = self.param("plan")
            self._load_plan(plan)
            goal = self.param("goal")
            if goal is None:
                goal = plan.get("goal_spec", plan.get("goal")) if isinstance(plan, Mapping) else list(plan.goal)
            self._goal = _goal_of(self._cfg, goal)
        except (KeyError, ValueError, TypeError) as e:
            self._error = str(e.args[0]) if e.args else str(e)

    def _load_plan(self, plan: Any) -> None:
        if isinstance(plan, RegraspPlan):
            pairs = [(s.state_from, s.state_to) for s in plan.steps]
        elif isinstance(plan, Mapping) and "steps" in plan:
            pairs = [(tuple(s["state_from"]), tuple(s["state_to"])) for s in plan["steps"]]
        else:
            raise ValueError(f"plan: expected a RegraspPlan or its dict, got {type(plan).__name__}")
        self._steps = [self._planner.step(a, b) for a, b in pairs]

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
                return self._step_failed(step, reason)
            # SUCCESS: check the grasp state in the simulator
            if self._senses():
                sensed = _resolve(cfg, sense_grasp_state(self.backend, cfg))
                want = step.state_to
                ig = step.gripper_index
                if sensed[ig] != want[ig]:
                    got = cfg.factory.state_name(sensed)
                    return self._step_failed(step, f"after the step the grasp state is '{got}', "
                                                   f"expected '{step.state_to_name}'")
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
        self._write_metric("goal_reached", bool(reached))
        if reached:
            self.feedback_message = f"goal reached: '{_names(cfg, state)}' after {len(self._steps)} steps"
            return Status.SUCCESS
        return self.fail(f"plan done but the grasp state '{_names(cfg, state)}' does not satisfy "
                         f"{_goal_text(cfg, self._goal)}")

    def _step_failed(self, step: RegraspStep, reason: str) -> Status:
        self._stop_subtree()
        self._detach_subtree()
        cfg = self._cfg
        where = f"step {self._index + 1}/{len(self._steps)} '{step.transition}' ({step.kind}) failed: {reason}"
        if step.direction == "release" and step.kind == "release":
            self._placement_attempt[step.object] = self._placement_attempt.get(step.object, 0) + 1
        if self._replans_left <= 0:
            self._write_metric("goal_reached", False)
            return self.fail(where)
        self._replans_left -= 1
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
            T_g = _nearest_symmetric(T_obj @ h.grasp_pose, T_tcp)
            nodes += [
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
                nodes.append(MoveCartesian(name=f"{tag}: lift", arm=arm, delta=[0.0, 0.0, cfg.lift_m], speed_mps=v))
        else:
            if step.kind == "release":
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
            nodes.append(GripperCommand(name=f"{tag}: open", gripper=gripper, position=h.open_m))
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


def _failed_leaf(root: py_trees.behaviour.Behaviour) -> Optional[py_trees.behaviour.Behaviour]:
    found = None
    for node in root.iterate():
        if node.status == Status.FAILURE and not node.children:
            found = node
    return found
