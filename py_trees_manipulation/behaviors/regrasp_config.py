"""The regrasp description (:class:`RegraspConfig`): HPP gripper, handle and contact names mapped onto
the scene, parsed from the blackboard's ``regrasp:`` value (the YAML form: :mod:`~.regrasp`), and
grasp states named and resolved against it (``{gripper: handle}``, an HPP state name, a tuple).

Units: metres, newtons. Poses: (4, 4) homogeneous transforms.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Union

import numpy as np

from ..geometry.poses import Pose, pose_from_spec, pose_from_xyz_rpy
from ..planning.constraint_graph import ConstraintGraphFactory, Rule
from ..planning.geometric_model import GraspVariant, PlacementSettings
from ..planning.regrasp import RegraspPlanner
from .base import ManipulationBehaviour
from .motion import GAP_NAMES

__all__ = ["RegraspConfig", "HandleSpec", "ObjectRegraspSpec"]

#: a half turn about the TCP z axis (the same grasp for a parallel gripper)
_FLIP_Z = pose_from_xyz_rpy([0, 0, 0], [0, 0, np.pi])


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
        """Handle name -> its :class:`~py_trees_manipulation.planning.geometric_model.GraspVariant` s."""
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


def _config_at_load(params: Mapping[str, Any], blackboard: Optional[Mapping[str, Any]], scene: Any
                    ) -> Optional[RegraspConfig]:
    """The regrasp description a behaviour's parameters give when the file is loaded (``config``,
    else the task blackboard's value at ``config_key``), parsed; None when there is none to read
    then (a description read at run time) or it does not parse (the run names its problem)."""
    desc = params.get("config")
    if desc is None:
        desc = dict(blackboard or {}).get(str(params.get("config_key") or "regrasp").lstrip("/"))
    if not isinstance(desc, Mapping):
        return None
    try:
        return RegraspConfig.from_mapping(desc, scene=scene)
    except (KeyError, TypeError, ValueError):
        return None


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
