"""Graph-planned regrasps: plan a sequence of grasp changes, carry it out, check the grasp state.

Behaviours: ``PlanRegrasp`` (HPP constraint-graph search from the current grasp state to a goal; in
the simulator every transition of a candidate plan is checked by IK and collisions and the plan
chooses placements and grasps: :func:`plan_in_world`), ``ExecuteRegraspPlan`` (expands each step, at
run time, into a Sequence of the motion behaviours: approach, grasp, lift, place on a contact surface,
release, retreat; re-plans from the sensed state when a step fails) and the condition ``GraspStateIs``.

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
          mug: {}                      # no handles: every handle of its grasp set (geometry/grasps.py)
          can: {handles: [can/side]}   # a list: these handles of its grasp set
        environment_contacts: [table/top]   # the top of body "table"
        placements: {grid_spacing_m: 0.10, yaws_deg: [0, 90, 180, 270], max_points: 20, spot: true}   # or false
        rules:                         # optional, HPP semantics (first match wins, full regex)
          - {grippers: [".*"], handles: [".*"], link: true}

Per-handle keys: ``pose`` (required), ``approach_m`` (stand-off along the TCP z axis before the
straight approach, default 0.10 m), ``open_m`` (finger gap for the approach, metres, or ``open``:
the gripper's full opening, the default), ``max_effort_n`` (grip force, default 40 N), ``width_m``
(the object's extent between the fingers; default from a primitive's size). A declared handle has
two grasps (its pose and the pose turned half a turn about the approach axis), a handle of the grasp
set its symmetric grasps (a box face: four yaws). Top-level optional keys: ``lift_m`` (0.10 m, lift
after a grasp from a surface and the height of the pre-place pose), ``retreat_m`` (0.10 m, back-off
along the TCP z axis after a release), ``place_force_n`` (8 N, force guard when lowering onto the
surface), ``placements`` (:class:`~py_trees_manipulation.planning.geometric.PlacementSettings`:
placement poses generated besides the description's: a grid on every environment contact surface
within the robots' reach, and the spot where a free object stands, on its other faces).

Grasp state: a mapping ``{gripper: handle or None}``. ``sense: auto`` derives it from the
simulator's contacts (:func:`sense_grasps`: opposing finger contacts, the object lifted off its
support, the TCP on a handle's region) and otherwise reads the blackboard key ``state_key``
(``grasp_state``), which ``ExecuteRegraspPlan`` updates after every completed step. Summary metrics
go to the blackboard namespace ``/metrics`` (merged into the run summary by the runner):
``plan_time_ms`` (sum over plans and re-plans), ``grasp_changes`` (executed steps), ``goal_reached``
and, with geometry, ``geometric_checks``, ``pruned_transitions``, ``ik_time_ms``,
``collision_time_ms``.

Sources: HPP ``ConstraintGraphFactory`` (names, waypoint transitions: pregrasp / intersec /
preplace), Lamiraux & Mirabel, IEEE T-RO 2021; MoveIt Task Constructor's pick/place stage order
(approach, close, lift / lower, open, retreat).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping, Optional, Sequence, Union

import numpy as np
import py_trees
from py_trees.common import Access, Status

from ..geometry.poses import Pose, invert, pose_from_spec, pose_from_xyz_rpy, rotation_angle
from ..planning.constraint_graph import ConstraintGraphFactory, Rule
from ..planning.geometric import GeometricGoal, GeometricPlan, GeometricStep, GraspVariant, PlacementSettings
from ..planning.regrasp import NoPlanError, RegraspPlan, RegraspPlanner, RegraspStep
from .base import ManipulationBehaviour
from .grasp_fix import GraspFixAttach
from .motion import GAP_NAMES, GripperCommand, MoveCartesian, MoveToPose
from .params import REQUIRED, BlackboardRef, Param

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
        variants: ``(name, (4, 4) pose, width_m)`` of every grasp of the handle: a declared handle has
            two (the pose and the pose turned half a turn about the TCP z axis: the same grasp for a
            parallel gripper), a handle from the object's grasp set its symmetric grasps (a box face:
            four yaws). ``width_m``: the object's extent between the fingers (``nan``: unknown).
        width_m: extent between the fingers at ``grasp_pose``, metres (``nan``: unknown).
    """

    name: str
    object: str
    grasp_pose: Pose
    approach_m: float = 0.10
    open_m: Union[float, str] = "open"
    max_effort_n: float = 40.0
    variants: tuple = ()
    width_m: float = float("nan")


@dataclass(frozen=True)
class ObjectRegraspSpec:
    """An object's handles, contact surfaces with their placement poses, and handover pose.

    Attributes:
        placements: contact surface name -> object poses (world, (4, 4)) resting on it.
        handover_pose: object pose (world) where its holder presents it for a handover, or None.
        default_handles: the handles came from the object's grasp set (``geometry/grasps.py``).
    """

    name: str
    handles: tuple[str, ...]
    placements: dict[str, tuple[Pose, ...]]
    handover_pose: Optional[Pose] = None
    default_handles: bool = False


_PLACEMENT_KEYS = {"grid_spacing_m", "yaws_deg", "max_points", "spot", "margin_m"}
_HANDLE_KEYS = {"pose", "approach_m", "open_m", "max_effort_n", "width_m"}
_TOP_KEYS = {"grippers", "objects", "environment_contacts", "rules", "lift_m", "retreat_m", "place_force_n",
             "placements"}


def _finite_pose(spec: Any) -> Pose:
    """``pose_from_spec`` that also refuses NaN or infinite numbers (ValueError)."""
    pose = pose_from_spec(spec)
    if not np.all(np.isfinite(pose)):
        raise ValueError(f"the pose has a number that is not finite: {spec!r}")
    return pose


def _half_turn(pose: Pose) -> Pose:
    return np.asarray(pose, dtype=float) @ _FLIP_Z


def _extent_between_fingers(obj: Any, pose: Pose) -> float:
    """The object's extent along the TCP y axis of ``pose`` (object frame), metres, for primitives."""
    pr = getattr(obj, "primitive", None)
    if pr is None:
        return float("nan")
    if pr.shape == "box":
        return float(np.abs(pose[:3, 1]) @ np.asarray(pr.size, dtype=float))
    if pr.shape in ("cylinder", "sphere"):
        return 2.0 * float(pr.radius)
    return float("nan")


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
        placements: :class:`PlacementSettings` (generated placements).
    """

    grippers: dict[str, tuple[str, str]]
    objects: dict[str, ObjectRegraspSpec]
    handles: dict[str, HandleSpec]
    environment_contacts: tuple[str, ...] = ()
    rules: Optional[tuple[Mapping[str, Any], ...]] = None
    lift_m: float = 0.10
    retreat_m: float = 0.10
    place_force_n: float = 8.0
    placements: PlacementSettings = PlacementSettings()
    _factory: Any = field(default=None, compare=False, repr=False)

    @classmethod
    def from_mapping(cls, data: Any, scene: Any = None) -> "RegraspConfig":
        """Parse the YAML/blackboard form.

        Args:
            data: the description (or a RegraspConfig, returned as is).
            scene: the task's scene (:class:`~py_trees_manipulation.scene.spec.SceneSpec`), for
                objects whose handles come from their grasp set and for grasp widths.

        Raises:
            ValueError: a malformed entry; the message names it as ``regrasp.objects.box...``.
        """
        if isinstance(data, RegraspConfig):
            return data
        if not isinstance(data, Mapping):
            raise ValueError(f"regrasp: expected a mapping with grippers and objects, got {type(data).__name__}")
        unknown = set(data) - _TOP_KEYS
        if unknown:
            raise ValueError(f"regrasp: unknown key(s) {sorted(unknown)}")
        scene_objects = {o.name: o for o in getattr(scene, "objects", ())}
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
            if not isinstance(od, Mapping):
                raise ValueError(f"{where}: expected a mapping {{handles, contacts, handover_pose}}")
            extra = set(od) - {"handles", "contacts", "handover_pose"}
            if extra:
                raise ValueError(f"{where}: unknown key(s) {sorted(extra)}")
            hdata = od.get("handles")
            default = hdata is None or isinstance(hdata, (list, tuple))
            if default:
                names = _default_handles(str(o), hdata, scene_objects.get(str(o)), where, handles)
                handles.update(names)
                hnames = tuple(names)
            else:
                if not isinstance(hdata, Mapping) or not hdata:
                    raise ValueError(f"{where}: needs 'handles: {{name: {{pose: ...}}}}', a list of handle names "
                                     "of its grasp set, or nothing (every handle of its grasp set)")
                for h, hd in hdata.items():
                    handles[str(h)] = _declared_handle(str(o), str(h), hd, f"{where}.handles.{h}", handles,
                                                       scene_objects.get(str(o)))
                hnames = tuple(str(h) for h in hdata)
            placements: dict[str, tuple[Pose, ...]] = {}
            cdata = od.get("contacts") or {}
            if not isinstance(cdata, Mapping):
                raise ValueError(f"{where}.contacts: expected {{surface name: [object poses]}}")
            for c, poses in cdata.items():
                if poses is not None and not isinstance(poses, (list, tuple)):
                    raise ValueError(f"{where}.contacts.{c}: expected a list of object poses")
                out = []
                for i, p in enumerate(poses or []):
                    try:
                        out.append(_finite_pose(p))
                    except (ValueError, TypeError) as e:
                        raise ValueError(f"{where}.contacts.{c}[{i}]: not a valid pose: {e}") from None
                placements[str(c)] = tuple(out)
            hp = od.get("handover_pose")
            try:
                hp_pose = _finite_pose(hp) if hp is not None else None
            except (ValueError, TypeError) as e:
                raise ValueError(f"{where}.handover_pose: {e}") from None
            objects[str(o)] = ObjectRegraspSpec(str(o), hnames, placements, hp_pose, default)
        rules = data.get("rules")
        pset = _placement_settings(data.get("placements"))
        cfg = cls(grippers=grippers, objects=objects, handles=handles,
                  environment_contacts=tuple(data.get("environment_contacts") or ()),
                  rules=tuple(rules) if rules is not None else None,
                  lift_m=float(data.get("lift_m", 0.10)), retreat_m=float(data.get("retreat_m", 0.10)),
                  place_force_n=float(data.get("place_force_n", 8.0)), placements=pset)
        try:
            object.__setattr__(cfg, "_factory", ConstraintGraphFactory.from_config(cfg.factory_config()))
        except (ValueError, TypeError, KeyError) as e:
            raise ValueError(f"regrasp: {e}") from None
        return cfg

    def factory_config(self) -> dict[str, Any]:
        """The :meth:`ConstraintGraphFactory.from_config` mapping (names only)."""
        out: dict[str, Any] = {
            "grippers": list(self.grippers),
            # an object's contact surfaces: the description's, else its faces when placements are generated
            "objects": [{"name": o.name, "handles": list(o.handles),
                         "contacts": list(o.placements) or ([f"{o.name}/faces"] if self.generates_placements else [])}
                        for o in self.objects.values()],
            "environment_contacts": list(self.environment_contacts),
        }
        if self.rules is not None:
            out["rules"] = [r if isinstance(r, Rule) else dict(r) for r in self.rules]
        return out

    @property
    def generates_placements(self) -> bool:
        """Placements are generated besides the description's (grid or spot)."""
        return self.placements.grid_spacing_m > 0 or self.placements.spot

    @property
    def factory(self) -> ConstraintGraphFactory:
        """The configured constraint-graph factory (built once)."""
        return self._factory

    def planner(self) -> RegraspPlanner:
        """A fresh :class:`RegraspPlanner` (its own infeasibility marks)."""
        return RegraspPlanner(self.factory)

    def grasp_variants(self) -> dict[str, tuple[GraspVariant, ...]]:
        """Handle name -> its :class:`~py_trees_manipulation.planning.geometric.GraspVariant` s."""
        return {h: tuple(GraspVariant(h, n, np.asarray(p, dtype=float), float(w), spec.approach_m)
                         for n, p, w in spec.variants)
                for h, spec in self.handles.items()}


def _placement_settings(data: Any) -> PlacementSettings:
    if data is None:
        return PlacementSettings()
    if data is False:
        return PlacementSettings(grid_spacing_m=0.0, spot=False)
    if not isinstance(data, Mapping):
        raise ValueError("regrasp.placements: expected {grid_spacing_m, yaws_deg, max_points, spot} or false")
    extra = set(data) - _PLACEMENT_KEYS
    if extra:
        raise ValueError(f"regrasp.placements: unknown key(s) {sorted(extra)}; known: {sorted(_PLACEMENT_KEYS)}")
    d = PlacementSettings()
    try:
        out = PlacementSettings(grid_spacing_m=float(data.get("grid_spacing_m", d.grid_spacing_m) or 0.0),
                                yaws_deg=tuple(float(v) for v in data.get("yaws_deg", d.yaws_deg)),
                                max_points=int(data.get("max_points", d.max_points)),
                                spot=bool(data.get("spot", d.spot)), margin_m=float(data.get("margin_m", d.margin_m)))
    except (TypeError, ValueError) as e:
        raise ValueError(f"regrasp.placements: {e}") from None
    if out.grid_spacing_m < 0 or (0 < out.grid_spacing_m < 0.02):
        raise ValueError(f"regrasp.placements.grid_spacing_m: expected 0 (no grid) or >= 0.02 m, got {out.grid_spacing_m}")
    if out.max_points < 1:
        raise ValueError("regrasp.placements.max_points: expected >= 1")
    return out


def _declared_handle(o: str, h: str, hd: Any, hw: str, handles: Mapping[str, HandleSpec], obj: Any) -> HandleSpec:
    if h in handles:
        raise ValueError(f"{hw}: handle name already used by object {handles[h].object!r}")
    if not isinstance(hd, Mapping) or "pose" not in hd:
        raise ValueError(f"{hw}: needs 'pose' (the TCP pose in the object frame)")
    extra = set(hd) - _HANDLE_KEYS
    if extra:
        raise ValueError(f"{hw}: unknown key(s) {sorted(extra)}")
    try:
        pose = _finite_pose(hd["pose"])
    except (ValueError, TypeError) as e:
        raise ValueError(f"{hw}.pose: not a valid pose: {e}") from None
    open_m = hd.get("open_m", "open")
    if open_m not in GAP_NAMES:
        open_m = float(open_m)
    width = float(hd["width_m"]) if hd.get("width_m") is not None else _extent_between_fingers(obj, pose)
    approach = float(hd.get("approach_m", 0.10))
    if not approach > 0:
        raise ValueError(f"{hw}.approach_m: expected > 0 m, got {approach}")
    variants = [(f"{h}/0", pose, width), (f"{h}/180", _half_turn(pose), width)]
    variants += [(f"{n}@{1000 * off:+.0f}mm", T @ _shift_x(off), wd) for n, T, wd in list(variants)
                 for off in _face_offsets(obj, T)]
    return HandleSpec(h, o, pose, approach, open_m, float(hd.get("max_effort_n", 40.0)), tuple(variants), width)


def _default_handles(o: str, names: Any, obj: Any, where: str, taken: Mapping[str, HandleSpec]) -> dict[str, HandleSpec]:
    """Handles from the object's grasp set (``geometry/grasps.py``), all or the named ones."""
    from ..geometry.grasps import grasps_for_object

    if obj is None:
        raise ValueError(f"{where}: needs 'handles' (the scene has no object {o!r} to take its grasp set from)")
    grasps = grasps_for_object(obj)
    if not grasps:
        raise ValueError(f"{where}: needs 'handles': {o!r} has no default grasps (declare its handles)")
    by_handle: dict[str, list] = {}
    for g in grasps:
        by_handle.setdefault(g.handle, []).append(g)
    if names is not None:
        unknown = [n for n in names if n not in by_handle]
        if unknown:
            raise ValueError(f"{where}.handles: {o!r} has no handle {unknown[0]!r} in its grasp set; it has "
                             f"{sorted(by_handle)}")
        by_handle = {n: by_handle[n] for n in names}
    out = {}
    for h, gs in by_handle.items():
        if h in taken:
            raise ValueError(f"{where}.handles: handle name {h!r} already used by object {taken[h].object!r}")
        g0 = gs[0]
        variants = [(g.name, g.pose, g.width_m) for g in gs]
        for g in gs:
            variants += [(f"{g.name}@{1000 * off:+.0f}mm", g.pose @ _shift_x(off), g.width_m)
                         for off in _face_offsets(obj, g.pose)]
        out[h] = HandleSpec(h, o, g0.pose, g0.approach_m, "open", 40.0, tuple(variants), g0.width_m)
    return out


#: a grasp moved along its face keeps the finger pads this far inside the face's edge (pad centre to
#: edge), metres
FACE_EDGE_MARGIN_M = 0.025
#: ... and is only added when it moves the TCP at least this far, metres
MIN_FACE_OFFSET_M = 0.01


def _shift_x(d: float) -> Pose:
    T = np.eye(4)
    T[0, 3] = d
    return T


def _face_offsets(obj: Any, pose: Pose) -> list[float]:
    """Offsets (m) along the TCP x axis (along the face, across the finger travel) of the extra grasps
    of a box face (a grasp-set face or a declared handle): both ways from where the grasp is, as far
    as the pads stay :data:`FACE_EDGE_MARGIN_M` inside the face's
    edge (HPP: a handle's free translation along its face, sampled). A box standing on the table is
    then also taken high on a side face, the hand level and clear of the table, where a grasp at the
    face's centre brings the wrist too close to it (a 10 cm box: the TCP 5 cm above the table);
    [] for other shapes and faces too small."""
    pr = getattr(obj, "primitive", None)
    if pr is None or pr.shape != "box":
        return []
    T = np.asarray(pose, dtype=float)
    ext = float(np.abs(T[:3, 0]) @ np.asarray(pr.size, dtype=float))
    c = float(T[:3, 0] @ T[:3, 3])                       # where the grasp is along that axis now
    lim = ext / 2.0 - FACE_EDGE_MARGIN_M
    out = []
    for d in (lim - c, -lim - c):
        d = math.copysign(math.floor(abs(d) * 1000.0) / 1000.0, d)
        if abs(d) >= MIN_FACE_OFFSET_M:
            out.append(d)
    return out


def _config_of(b: ManipulationBehaviour) -> RegraspConfig:
    cfg = b.param("config")
    scene = getattr(b.backend, "scene", None)
    if cfg is None:
        key = "/" + b.params["config_key"].lstrip("/")
        try:
            cfg = b.blackboard.get(key)
        except KeyError:
            raise KeyError(f"no regrasp description: blackboard key {key!r} is empty "
                           "(add 'regrasp:' under 'blackboard:' or give 'config')") from None
    return RegraspConfig.from_mapping(cfg, scene=scene)


# ------------------------------------------------------------------------------------------------
# Grasp state
# ------------------------------------------------------------------------------------------------
#: a finger contact's normal within this angle of the finger travel axis, and the two fingers' normals
#: within this angle of opposite: an opposing (pinch) grasp
OPPOSING_DEG = 45.0
#: the TCP within this of a grasp pose of the handle (metres) and its approach axis within this angle
HANDLE_REGION_M = 0.03
HANDLE_REGION_DEG = 30.0
#: contact points closer than this count (PyBullet keeps points up to its contact breaking threshold)
TOUCH_M = 0.002


@dataclass(frozen=True)
class SensedGrasp:
    """What a gripper holds, from the simulator's contacts (:func:`sense_grasps`).

    Attributes:
        gripper: HPP gripper name.
        handle, object: what it holds, or None.
        variant: index of the handle's grasp nearest to the measured one (None when not held).
        grasp_pose: measured (4, 4) TCP pose in the object frame (None when not held).
        reason: why it holds nothing, when something touches its fingers ("" otherwise).
    """

    gripper: str
    handle: Optional[str] = None
    object: Optional[str] = None
    variant: Optional[int] = None
    grasp_pose: Optional[Pose] = None
    reason: str = ""


def _mean_normals(contacts: list[Any], pads: set[str]) -> dict[str, np.ndarray]:
    """Per finger pad link, the unit mean contact normal (from the object to the finger)."""
    sums: dict[str, np.ndarray] = {}
    for c in contacts:
        if c.link_a in pads and c.distance_m < TOUCH_M:
            sums[c.link_a] = sums.get(c.link_a, np.zeros(3)) + np.asarray(c.normal_on_b, dtype=float)
    return {k: v / n for k, v in sums.items() if (n := float(np.linalg.norm(v))) > 1e-9}


def sense_grasps(backend: Any, cfg: RegraspConfig) -> dict[str, SensedGrasp]:
    """The grasp state from the simulator's contacts, not fooled by an object merely touching the fingers.

    A gripper holds handle ``h`` of object ``o`` when all of these hold:

    1. **opposing finger contacts**: two finger pad links (the robot model's ``pad_links``) touch
       ``o`` with mean contact normals within :data:`OPPOSING_DEG` of the finger travel axis (TCP y)
       and of each other's opposite: the fingers pinch it from both sides;
    2. **lifted off its support**: ``o`` touches nothing but robots (a box knocked over against a
       finger, or pinched while still on the table, does not count);
    3. **on the expected handle region**: the TCP, in ``o``'s frame, is within
       :data:`HANDLE_REGION_M` of one of ``h``'s grasps with its approach axis within
       :data:`HANDLE_REGION_DEG` (the nearest handle wins: metres plus 0.05 m per radian).

    Returns:
        ``{gripper: SensedGrasp}`` for every gripper of ``cfg``; ``reason`` says why a gripper that
        touches an object does not hold it.

    Raises:
        AttributeError: the backend's world has no ``contacts`` (not a simulator).
    """
    world = backend.world
    robots = set(getattr(backend, "arms", {}))
    variants = cfg.grasp_variants()
    out: dict[str, SensedGrasp] = {}
    for g, (arm, _gr) in cfg.grippers.items():
        sim_arm = backend.arms[arm]
        robot = getattr(sim_arm, "robot", None)
        pads = set(robot.model.gripper.pad_links) if robot is not None else set()
        tcp = np.asarray(sim_arm.tcp_pose(), dtype=float)
        y = tcp[:3, 1]
        cos_axis = math.cos(math.radians(OPPOSING_DEG))
        found = SensedGrasp(g)
        for o, spec in cfg.objects.items():
            normals = _mean_normals(world.contacts(arm, o), pads or {c.link_a for c in world.contacts(arm, o)
                                                                     if "finger" in c.link_a})
            if not normals:
                continue
            pinched = any(float(na @ nb) < -cos_axis and abs(float(na @ y)) > cos_axis and abs(float(nb @ y)) > cos_axis
                          for i, na in enumerate(normals.values()) for nb in list(normals.values())[i + 1:])
            if not pinched:
                found = SensedGrasp(g, reason=f"{o} touches {', '.join(sorted(normals))} but is not pinched between "
                                              "them (no opposing contacts along the finger axis)")
                continue
            support = sorted({c.body_b for c in world.contacts(o) if c.body_b not in robots and c.distance_m < TOUCH_M})
            if support:
                found = SensedGrasp(g, reason=f"{o} is pinched but rests on {', '.join(support)} (not lifted off its "
                                              "support)")
                continue
            T_rel = invert(np.asarray(world.object_pose(o), dtype=float)) @ tcp
            best = None
            for h in spec.handles:
                for v, var in enumerate(variants[h]):
                    G = var.pose
                    d = float(np.linalg.norm(G[:3, 3] - T_rel[:3, 3]))
                    ang = float(np.arccos(np.clip(G[:3, 2] @ T_rel[:3, 2], -1.0, 1.0)))
                    score = d + 0.05 * ang + 1e-3 * rotation_angle(G, T_rel)
                    if best is None or score < best[0]:
                        best = (score, h, v, d, ang)
            assert best is not None
            _, h, v, d, ang = best
            if d > HANDLE_REGION_M or math.degrees(ang) > HANDLE_REGION_DEG:
                found = SensedGrasp(g, reason=f"{o} is held {d:.3f} m and {math.degrees(ang):.0f} deg from its nearest "
                                              f"handle {h}: on none of its handles")
                continue
            found = SensedGrasp(g, h, o, v, T_rel)
            break
        out[g] = found
    return out


#: a gripper whose gap is within this of a grasp's width is closed on the object there (metres: the
#: pads compress and the object may sit off the fingers' centre)
GAP_TOLERANCE_M = 0.01


def sense_grasps_from_poses(backend: Any, cfg: RegraspConfig) -> dict[str, SensedGrasp]:
    """The grasp state from what a real robot measures through the seam (no simulator contacts):
    each object's pose (``world.object_pose``: a perception topic or a blackboard key on hardware),
    each arm's TCP pose and each gripper's gap (``gap_m``).

    A gripper holds handle ``h`` of object ``o`` when the TCP, in ``o``'s frame, is within
    :data:`HANDLE_REGION_M` and :data:`HANDLE_REGION_DEG` of one of ``h``'s grasps and the gap is
    within :data:`GAP_TOLERANCE_M` of that grasp's width (closed on the object: neither open around
    it nor closed on nothing). Objects whose pose is unknown are held by no gripper.

    Returns:
        ``{gripper: SensedGrasp}`` for every gripper of ``cfg``; ``reason`` says why a gripper at a
        handle does not hold it (its gap against the grasp's width).
    """
    world = backend.world
    variants = cfg.grasp_variants()
    out: dict[str, SensedGrasp] = {}
    for g, (arm, gripper) in cfg.grippers.items():
        found = SensedGrasp(g)
        try:
            tcp = np.asarray(backend.arms[arm].tcp_pose(), dtype=float)
            gap = float(backend.grippers[gripper].gap_m())
        except Exception:  # noqa: BLE001  (a robot that does not report them: nothing known to be held)
            out[g] = found
            continue
        best = None
        for o, spec in cfg.objects.items():
            try:
                T_o = np.asarray(world.object_pose(o), dtype=float)
            except KeyError:
                continue
            T_rel = invert(T_o) @ tcp
            for h in spec.handles:
                for v, var in enumerate(variants[h]):
                    d = float(np.linalg.norm(var.pose[:3, 3] - T_rel[:3, 3]))
                    ang = float(np.arccos(np.clip(var.pose[:3, 2] @ T_rel[:3, 2], -1.0, 1.0)))
                    score = d + 0.05 * ang
                    if best is None or score < best[0]:
                        best = (score, o, h, v, d, ang, float(var.width_m), T_rel)
        if best is not None:
            _, o, h, v, d, ang, width, T_rel = best
            if d <= HANDLE_REGION_M and math.degrees(ang) <= HANDLE_REGION_DEG:
                if (math.isnan(width) and gap > GAP_TOLERANCE_M / 5) or abs(gap - width) <= GAP_TOLERANCE_M:
                    found = SensedGrasp(g, h, o, v, T_rel)
                else:
                    found = SensedGrasp(g, reason=f"the hand is at handle {h} of {o} but its gap is {gap * 1000:.1f} mm "
                                                  f"for a grasp {width * 1000:.1f} mm wide (not closed on it)")
        out[g] = found
    return out


def sense_grasp_state(backend: Any, cfg: RegraspConfig) -> dict[str, Optional[str]]:
    """``{gripper: handle name or None}`` from :func:`sense_grasps` (the simulator's contacts)."""
    return {g: s.handle for g, s in sense_grasps(backend, cfg).items()}


_SENSE = Param("choice", "auto", "where the current grasp state comes from: 'contacts' (simulator), "
               "'blackboard' (state_key), 'poses' (object poses, TCP poses and gripper gaps: what a real "
               "robot measures), 'auto' (contacts when the backend has them, else state_key when written, "
               "else poses)", choices=("auto", "contacts", "blackboard", "poses"), blackboard=False)
_CONFIG_PARAMS = {
    "config": Param("any", None, "the regrasp description (default: the blackboard key config_key)"),
    "config_key": Param("str", "regrasp", "blackboard key holding the regrasp description", blackboard=False),
    "state_key": Param("str", "grasp_state", "blackboard key of the grasp state {gripper: handle or null}",
                       blackboard=False),
    "sense": _SENSE,
}


class _RegraspBase(ManipulationBehaviour):
    ABSTRACT = True
    #: the parameter holding a grasp state the behaviour is given (PlanRegrasp: goal, GraspStateIs:
    #: expected), checked against the regrasp description when the file is loaded
    STATE_PARAM: ClassVar[str] = ""

    @classmethod
    def scene_problems(cls, params: dict[str, Any], scene: Any, blackboard: Optional[Mapping[str, Any]] = None
                       ) -> list[tuple[str, str, str]]:
        """Load-time check (``ptm validate``): a literal grasp state's gripper and handle names must be
        in the regrasp description (``config``, or the task blackboard's ``config_key``), so a
        misspelt goal handle is refused before anything moves. A description given at run time
        (``"{key}"``), or one that does not parse, is left to the run (which names its problem).

        Returns:
            ``[(parameter, problem, hint)]``.
        """
        key = cls.STATE_PARAM
        value = params.get(key)
        if not key or value is None or isinstance(value, BlackboardRef):
            return []
        desc = params.get("config")
        if desc is None:
            desc = dict(blackboard or {}).get(str(params.get("config_key") or "regrasp").lstrip("/"))
        if not isinstance(desc, Mapping):
            return []
        try:
            cfg = RegraspConfig.from_mapping(desc, scene=scene)
        except (KeyError, TypeError, ValueError):
            return []
        try:
            if isinstance(value, Mapping):
                cfg.factory.grasps_from_names({str(g): (h or None) for g, h in value.items()})
            else:
                _resolve(cfg, value)
        except (KeyError, TypeError, ValueError) as e:
            from ..located.errors import did_you_mean

            names = [*value.values(), *value] if isinstance(value, Mapping) else [value]
            known = [*cfg.factory.handles, *cfg.factory.grippers]
            unknown = [str(n) for n in names if isinstance(n, str) and n and n not in known]
            hint = next(filter(None, (did_you_mean(n, known) for n in unknown)), "")
            return [(key, f"{cls.__name__}.{key}: {e.args[0] if e.args else e}", hint)]
        return []

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
        mode = self.params["sense"]
        raw = None
        if mode != "poses":
            try:
                raw = self.blackboard.get(self._state_key)
            except KeyError:
                raw = None
        if raw is None:
            if mode == "blackboard" or self.backend is None:
                return {g: None for g in cfg.grippers}
            return {g: s.handle for g, s in sense_grasps_from_poses(self.backend, cfg).items()}
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
# Planning with geometry (the simulator's collision world)
# ------------------------------------------------------------------------------------------------
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
    from ..planning.geometric import GeometricModel, GeometricRegraspPlanner

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
                return self.fail(f"{_one_line(str(e))} ({ms:.0f} ms)")
            return self.fail(f"no regrasp plan from '{_names(cfg, start)}' to {_goal_text(cfg, goal)}: "
                             f"{_reason(e)} ({ms:.2f} ms)")
        ms = (time.perf_counter() - t0) * 1000.0
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


def _geometry_metrics(b: "_RegraspBase", plan: GeometricPlan) -> None:
    b._write_metric("geometric_checks", plan.checks, add=True)
    b._write_metric("pruned_transitions", len(plan.pruned), add=True)
    b._write_metric("ik_time_ms", round(plan.ik_time_s * 1e3, 3), add=True)
    b._write_metric("collision_time_ms", round(plan.collision_time_s * 1e3, 3), add=True)


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
    STATE_PARAM = "expected"
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
        expected = self.param("expected")
        why = self._why_not_held(cfg, expected) if isinstance(expected, Mapping) else ""
        return self.fail(f"{text} does not satisfy {_goal_text(cfg, goal)}" + (f": {why}" if why else ""))

    def _why_not_held(self, cfg: RegraspConfig, goal: Mapping[str, Optional[str]]) -> str:
        """For each gripper expected to hold a handle it does not hold (simulator contacts), why:
        what its fingers touch, or where the object is (``box is 0.100 m from left/hand's TCP: it
        slipped out or was never lifted``)."""
        try:
            if not self._senses():
                return ""
            sensed = sense_grasps(self.backend, cfg)
        except (AttributeError, KeyError):
            return ""
        out = []
        for g, h in goal.items():
            s = sensed.get(g)
            if not h or s is None or s.handle == h or h not in cfg.handles:
                continue
            if s.reason:
                out.append(f"{g}: {s.reason}")
                continue
            obj = cfg.handles[h].object
            arm = cfg.grippers[g][0]
            d = float(np.linalg.norm(np.asarray(self.backend.world.object_pose(obj), dtype=float)[:3, 3]
                                     - np.asarray(self.backend.arms[arm].tcp_pose(), dtype=float)[:3, 3]))
            out.append(f"{obj} is not in {g}'s fingers ({d:.3f} m from its TCP: it slipped out or was never lifted)")
        return "; ".join(out)


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
                return self._step_failed(step, reason)
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
