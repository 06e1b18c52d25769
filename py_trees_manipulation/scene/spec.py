"""The ``scene:`` section of a task file: parsing and validation into dataclasses.

:func:`parse_scene` takes the plain dict that YAML gives and returns a :class:`SceneSpec`, or raises
:class:`SceneError` with the *path* of the offending value inside the scene dict (a tuple of keys and
list indices, e.g. ``("objects", 0, "mass_kg")``) so a loader can map it back to ``FILE:LINE``. The
message says what is wrong and how to fix it (close matches for misspelt keys and names).

Format (every key, its type, default and meaning: :data:`SCENE_KEYS`, rendered by
:func:`scene_keys_doc`)::

    scene:
      seed: 0                      # random seed for pose noise (CLI --seed overrides)
      gravity: [0, 0, -9.81]
      physics_hz: 1000
      robots:
        - name: panda
          model: franka_panda               # a stock model or a robot description file (.yaml)
          base_pose: {position: [0, 0, 0.626], rpy_deg: [0, 0, 0]}
          initial_configuration: ready      # a named configuration or one angle per arm joint (rad)
      fixtures:
        - {name: table, urdf: table/table.urdf, pose: {position: [0.5, 0, 0]}}
      objects:
        - name: box
          primitive: {shape: box, size: [0.05, 0.05, 0.05]}
          mass_kg: 0.1
          pose: {position: [0.5, 0, 0.651]}
          pose_noise: {position_m: 0.005, yaw_deg: 5}
      task:
        target_object: box
        place_position: [0.5, 0.2, 0.651]

Poses use :func:`~py_trees_manipulation.geometry.poses.pose_from_spec` (quaternions w, x, y, z).
A URDF path is absolute, relative to ``base_dir`` (the task file's folder) or relative to
``pybullet_data``. A primitive's base frame is its centre; a URDF's is the URDF base link frame
(``objects/mug.urdf``: the bottom of the mug).
"""

from __future__ import annotations

import difflib
import functools
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Sequence, Union

import numpy as np

from ..geometry.grasps import APPROACH_M, Handle, check_grasp_pose
from ..geometry.poses import Pose, pose_from_spec
from ..keydocs import KeyDoc, keys_markdown
from ..robots import RobotDescription, RobotDescriptionError, UnknownModelError, resolve_model, stock_models
from .urdf_check import urdf_problem

if TYPE_CHECKING:
    from .contact import ContactMaterial

PathT = tuple[Union[str, int], ...]


class SceneError(ValueError):
    """An invalid ``scene:`` section.

    Attributes:
        path: keys and list indices from the scene dict to the offending value,
            e.g. ``("objects", 0, "mass_kg")``; ``()`` for the scene itself.
        message: what is wrong, and the fix where one can be suggested.
        problems: problems in another file the scene names (a robot description's
            ``FILE:LINE:COL`` :class:`~py_trees_manipulation.located.errors.Problem` lines), else empty.
    """

    def __init__(self, path: Sequence[Union[str, int]], message: str, problems: Sequence[Any] = ()):
        self.path: PathT = tuple(path)
        self.message = message
        self.problems = list(problems)
        text = f"{format_path(self.path)}: {message}"
        super().__init__("\n".join([text] + [str(p) for p in self.problems]))


def format_path(path: Sequence[Union[str, int]], root: str = "scene") -> str:
    """``("objects", 0, "mass_kg")`` -> ``"scene.objects[0].mass_kg"``."""
    out = root
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


# ------------------------------------------------------------------------------------------------
# Dataclasses
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PoseNoiseSpec:
    """Random perturbation of an initial pose, drawn once when the scene is built.

    Attributes:
        position_m: x and y offsets each drawn uniformly from ``[-position_m, position_m]``, metres.
        yaw_deg: rotation about world z drawn uniformly from ``[-yaw_deg, yaw_deg]``, degrees.
    """

    position_m: float = 0.0
    yaw_deg: float = 0.0


@dataclass(frozen=True)
class AutoBaseSpec:
    """``base_pose: auto``: the simulator places the base where every target of the task is reachable
    (:mod:`.base_placement`).

    Attributes:
        surface: what the base stands on: ``"floor"``, a fixture's name (its top), or None (chosen:
            the fixture the task's target object rests on, else the floor).
    """

    surface: Optional[str] = None


@dataclass(frozen=True)
class RobotSpec:
    """One ``robots[]`` entry.

    Attributes:
        name: the robot's (and its arm and gripper resources') name.
        model: as written: a stock model name or a description file path.
        base_pose: (4, 4) base pose, world frame (the identity while ``base_auto`` is unresolved).
        initial_configuration: a named configuration or one angle per arm joint, rad.
        initial_gap_m: initial finger gap, m.
        description: the robot description ``model`` names.
        base_auto: ``base_pose: auto`` (the base pose is searched when the simulator is built), or None.
    """

    name: str
    model: str
    base_pose: Pose
    initial_configuration: Union[str, tuple[float, ...]] = "ready"
    initial_gap_m: float = 0.08
    description: Optional[RobotDescription] = field(default=None, compare=False)
    base_auto: Optional[AutoBaseSpec] = None
    payload_kg: Optional[float] = None
    """The scene's override of the description's rated payload, kg (None: the description's)."""


@dataclass(frozen=True)
class FixtureSpec:
    """A static URDF body (a table). ``contact_stiffness`` / ``contact_damping``: its contact material
    per contact point (N/m, N s/m); None: the URDF's, else :data:`~.contact.TABLE_TOP` (see
    :meth:`contact_material`)."""

    name: str
    urdf: str
    urdf_path: str
    pose: Pose
    scale: float = 1.0
    contact_stiffness: Optional[float] = None
    contact_damping: Optional[float] = None

    def contact_material(self) -> "ContactMaterial":
        """The material its links get when the scene or their URDF sets none: the scene's
        ``contact_stiffness`` and ``contact_damping``, else a table top's
        (:data:`~.contact.TABLE_TOP`, documented with its sources in :mod:`.contact`)."""
        from .contact import TABLE_TOP, ContactMaterial

        if self.contact_stiffness is None:
            return TABLE_TOP
        return ContactMaterial(float(self.contact_stiffness), float(self.contact_damping or 0.0))


@dataclass(frozen=True)
class PrimitiveSpec:
    """A primitive shape. ``size`` (box, full extents x, y, z, m), ``radius`` (m), ``length`` (m)."""

    shape: str
    size: Optional[tuple[float, float, float]] = None
    radius: Optional[float] = None
    length: Optional[float] = None

    def half_height(self) -> float:
        """Half the primitive's extent along its local z axis, metres (box: ``size[2] / 2``,
        cylinder: ``length / 2``, sphere: ``radius``)."""
        if self.shape == "box":
            return self.size[2] / 2.0  # type: ignore[index]
        if self.shape == "cylinder":
            return self.length / 2.0  # type: ignore[operator]
        return float(self.radius)  # type: ignore[arg-type]


@dataclass(frozen=True)
class ObjectSpec:
    name: str
    pose: Pose
    urdf: Optional[str] = None
    urdf_path: Optional[str] = None
    primitive: Optional[PrimitiveSpec] = None
    scale: float = 1.0
    mass_kg: Optional[float] = None
    lateral_friction: Optional[float] = None
    spinning_friction: Optional[float] = None
    rolling_friction: Optional[float] = None
    restitution: Optional[float] = None
    contact_stiffness: Optional[float] = None
    contact_damping: Optional[float] = None
    crush_force_n: Optional[float] = None
    color: Optional[tuple[float, float, float, float]] = None
    pose_noise: PoseNoiseSpec = PoseNoiseSpec()
    fixed: bool = False
    may_move: bool = False
    """The object may move while the scene settles (a ball meant to roll): no settle check."""
    grasps: tuple[Handle, ...] = field(default=(), compare=False)
    """Declared grasps (HPP handles, object frame); empty: the shape's defaults
    (:func:`~py_trees_manipulation.geometry.grasps.grasps_for_object`)."""


@dataclass(frozen=True)
class TaskSpec:
    target_object: Optional[str] = None
    place_position: Optional[tuple[float, float, float]] = None
    lift_threshold_m: float = 0.05
    placed: bool = True
    """The object is set down at ``place_position`` (a free support is checked before the first tick,
    and what it rests on at the end); False: an end position it may be held at."""


@dataclass(frozen=True)
class SceneSpec:
    """A validated scene. Build it with :func:`parse_scene`."""

    seed: int = 0
    gravity: tuple[float, float, float] = (0.0, 0.0, -9.81)
    physics_hz: float = 1000.0
    solver_iterations: int = 50
    settle_s: float = 0.2
    sleep_resting_bodies: bool = True
    start_penetration_m: float = 0.003
    """Bodies may start this far inside each other, m; deeper is a scene mistake refused before anything moves."""
    settle_tolerance_m: float = 0.01
    """A movable object that moves further than this while the scene settles is refused, m."""
    robots: tuple[RobotSpec, ...] = ()
    fixtures: tuple[FixtureSpec, ...] = ()
    objects: tuple[ObjectSpec, ...] = ()
    task: TaskSpec = TaskSpec()
    extra: dict[str, Any] = field(default_factory=dict)
    """Parsed values of sections added with :func:`register_section`, by key."""


# ------------------------------------------------------------------------------------------------
# Key tables: the single source for validation of unknown keys and for the documentation
# ------------------------------------------------------------------------------------------------
_POSE_T = "pose"
SCENE_KEYS: dict[str, list[KeyDoc]] = {
    "scene": [
        KeyDoc("seed", "int", "0", "random seed for pose noise; `--seed` on the command line overrides it"),
        KeyDoc("gravity", "[x, y, z]", "[0, 0, -9.81]", "gravity, m/s^2, world frame"),
        KeyDoc("physics_hz", "number", "1000", "physics rate, Hz (10 ... 10000); controllers run at this rate"),
        KeyDoc("solver_iterations", "int", "50", "PyBullet constraint solver iterations per step (1 ... 1000)"),
        KeyDoc("settle_s", "number", "0.2", "physics run before the clock starts, s (0 ... 5), so objects placed a "
               "little above a surface come to rest; metrics measure from the settled poses"),
        KeyDoc("sleep_resting_bodies", "bool", "true", "after settling, the fixtures and the movable objects at rest "
               "(all but the task's `target_object`) sleep (PyBullet deactivation) until something touches them: a "
               "resting body then costs nothing per physics step; `false`: every body stays awake (PyBullet's default)"),
        KeyDoc("start_penetration_m", "number", "0.003", "how far two bodies (objects, fixtures, robot links, "
               "doors, cabinets) may start inside each other, m (0 ... 0.05); deeper is refused before anything moves "
               "(`ptm validate` for shapes the file gives, else when the simulator loads the scene), naming both "
               "bodies, the depth and where to move one"),
        KeyDoc("settle_tolerance_m", "number", "0.01", "how far a movable object may move while the scene settles, "
               "m (0.001 ... 1); further is refused before the first tick, naming it and how far it moved "
               "(an object's `may_move: true` exempts it)"),
        KeyDoc("robots", "list", "[]", "robots (see `robots[]`)"),
        KeyDoc("fixtures", "list", "[]", "static URDF bodies such as tables (see `fixtures[]`)"),
        KeyDoc("objects", "list", "[]", "movable objects (see `objects[]`)"),
        KeyDoc("task", "mapping", "{}", "what the run's metrics are about (see `task`)"),
    ],
    "robots[]": [
        KeyDoc("name", "str", "", "unique name; the arm and gripper resources are called this", True),
        KeyDoc("model", "str", "franka_panda", f"robot model: a stock model ({', '.join(stock_models())}) or a "
               "robot description file (.yaml, relative to the task file; see docs/robots.md)"),
        KeyDoc("base_pose", "pose or auto", "identity", "base pose, world frame; `auto` (or `{auto: {surface: "
               "floor}}`, `surface`: `floor` or a fixture's name): placed where every target of the task is "
               "reachable (docs/reachability.md)"),
        KeyDoc("initial_configuration", "str or list", "ready",
               "a named configuration of the model (`ready`; the stock models also have `home`, `extended`, "
               "`forward`) or one angle per arm joint, rad"),
        KeyDoc("initial_gap_m", "number", "fully open", "initial finger gap, m, >= 0 (at most the gripper's opening)"),
        KeyDoc("payload_kg", "number", "the model's", "override of the arm's rated payload (gripper included), kg, > 0: "
               "a lift of an object heavier than it minus the gripper's mass is refused before the arm moves"),
    ],
    "fixtures[]": [
        KeyDoc("name", "str", "", "unique name", True),
        KeyDoc("urdf", "str", "", "URDF path: absolute, relative to the task file, or to pybullet_data", True),
        KeyDoc("pose", _POSE_T, "identity", "base pose, world frame"),
        KeyDoc("scale", "number", "1.0", "uniform scale (URDF globalScaling), > 0"),
        KeyDoc("contact_stiffness", "number", "URDF / table top 1e5", "contact stiffness per contact point, N/m, > 0 "
               "(set with `contact_damping`); links whose URDF sets none get a table top's (4e5 N/m over a "
               "four-point face: the top bending on its legs; sources in scene/contact.py)"),
        KeyDoc("contact_damping", "number", "URDF / table top 300", "contact damping per contact point, N s/m, "
               ">= 0 (set with `contact_stiffness`)"),
    ],
    "objects[]": [
        KeyDoc("name", "str", "", "unique name", True),
        KeyDoc("urdf", "str", "", "URDF path (as for fixtures); exactly one of `urdf` and `primitive`"),
        KeyDoc("primitive", "mapping", "", "`{shape: box, size: [x, y, z]}`, `{shape: cylinder, radius, length}` "
               "or `{shape: sphere, radius}`, metres; the base frame is the shape's centre"),
        KeyDoc("pose", _POSE_T, "", "initial base pose, world frame", True),
        KeyDoc("pose_noise", "mapping", "none", "`{position_m, yaw_deg}`: uniform noise on x, y and yaw"),
        KeyDoc("scale", "number", "1.0", "uniform scale of a URDF object, > 0"),
        KeyDoc("mass_kg", "number", "URDF / 0.1", "mass, kg, > 0 (inertia recomputed as a solid box of "
               "the object's bounding box)"),
        KeyDoc("lateral_friction", "number", "URDF / 0.8", "Coulomb friction coefficient, >= 0"),
        KeyDoc("spinning_friction", "number", "URDF", "torsional friction, m, >= 0"),
        KeyDoc("rolling_friction", "number", "URDF", "rolling friction, m, >= 0"),
        KeyDoc("restitution", "number", "URDF", "coefficient of restitution, 0 ... 1"),
        KeyDoc("contact_stiffness", "number", "rigid", "contact stiffness per contact point, N/m, > 0 (set with "
               "`contact_damping`); rigid: ceramic, metal, hard plastic, far stiffer than the table top under it"),
        KeyDoc("contact_damping", "number", "rigid", "contact damping per contact point, N s/m, >= 0 (set with "
               "`contact_stiffness`)"),
        KeyDoc("crush_force_n", "number", "none", "fragile object: a finger pressing on it with more than this "
               "for 50 ms crushes it (metric `crushed`, see sim/tactile_sensor.py), N, > 0"),
        KeyDoc("color", "[r, g, b, a]", "URDF / grey", "RGBA colour, each 0 ... 1"),
        KeyDoc("fixed", "bool", "false", "fix the object's base in the world"),
        KeyDoc("may_move", "bool", "false", "the object may move while the scene settles (a ball meant to roll): "
               "exempt from the `settle_tolerance_m` check and from `ptm validate`'s \"nothing under it\""),
        KeyDoc("grasps", "list", "the shape's defaults", "grasps in the object's frame (HPP handles, see `grasps[]`); "
               "without it: box faces, cylinder, sphere, the shipped mug (its handle avoided)"),
    ],
    "grasps[]": [
        KeyDoc("name", "str", "", "handle name, unique per object; its grasps are `OBJECT/NAME/ANGLE`", True),
        KeyDoc("pose", _POSE_T, "", "TCP pose in the object's frame, metres: z the approach (into the object), "
               "y the finger travel axis (a top-down grasp of an upright object: `rpy_deg: [180, 0, 0]`)", True),
        KeyDoc("symmetry", "mapping", "none", "`{axis, order}` (see `grasps[].symmetry`): the pose turned about an "
               "object axis through its origin"),
        KeyDoc("approach_m", "number", "0.1", "pregrasp stand-off back along the approach, m, 0 ... 0.5"),
        KeyDoc("width_m", "number", "unknown", "the object's width between the fingers, m, > 0 (checked against "
               "the gripper's opening)"),
    ],
    "symmetry": [
        KeyDoc("axis", "str or list", "z", "`x`, `y`, `z` or `[x, y, z]`: the symmetry axis in the object frame"),
        KeyDoc("order", "int or str", "1", "n >= 1: n grasps 360/n degrees apart (a box face: 4, a parallel grasp: 2); "
               "`continuous`: any angle, sampled at `samples`"),
        KeyDoc("samples", "int", "12", "grasps of a continuous symmetry (1 ... 360)"),
    ],
    "primitive": [
        KeyDoc("shape", "str", "", "`box`, `cylinder` or `sphere`", True),
        KeyDoc("size", "[x, y, z]", "", "box full extents, m, each > 0"),
        KeyDoc("radius", "number", "", "cylinder or sphere radius, m, > 0"),
        KeyDoc("length", "number", "", "cylinder length along its z axis, m, > 0"),
    ],
    "pose_noise": [
        KeyDoc("position_m", "number", "0", "x and y offsets uniform in [-position_m, position_m], m, >= 0"),
        KeyDoc("yaw_deg", "number", "0", "yaw about world z uniform in [-yaw_deg, yaw_deg], degrees, >= 0"),
    ],
    "task": [
        KeyDoc("target_object", "str", "the only object", "object the metrics (`object_lift_m`...) are about"),
        KeyDoc("place_position", "[x, y, z]", "none", "where the object should end, m; gives metric `place_error_m`"),
        KeyDoc("lift_threshold_m", "number", "0.05", "lift above which a later fall counts as `object_dropped`, m"),
        KeyDoc("placed", "bool", "true", "the object is set down at `place_position`: before the first tick the place "
               "is checked for a support and room (else FAILURE naming what is in the way and the nearest free "
               "spot), and a run whose tree succeeds fails unless the object rests on that support (`placed_on`); "
               "false: `place_position` is an end position the object may be held at"),
    ],
    "pose": [
        KeyDoc("position", "[x, y, z]", "[0, 0, 0]", "metres"),
        KeyDoc("orientation", "[w, x, y, z]", "", "quaternion, scalar first"),
        KeyDoc("rpy_deg", "[r, p, y]", "", "roll, pitch, yaw in degrees (static x-y-z)"),
        KeyDoc("rpy", "[r, p, y]", "", "roll, pitch, yaw in radians"),
    ],
}


@dataclass(frozen=True)
class _Section:
    parse: Callable[[Any, PathT], Any]
    doc: str
    check: Optional[Callable[[Any, "SceneSpec"], None]] = None


_EXTRA_SECTIONS: dict[str, _Section] = {}


def register_section(key: str, parse: Callable[[Any, PathT], Any], doc: str = "",
                     check: Optional[Callable[[Any, "SceneSpec"], None]] = None) -> None:
    """Accept an extra top-level scene key (e.g. ``doors`` from :mod:`.articulated`).

    Args:
        key: the key under ``scene:``.
        parse: ``parse(value, path) -> parsed``; raises :class:`SceneError` with paths under ``path``.
        doc: one line for :func:`scene_keys_doc`.
        check: ``check(parsed, scene)``, run once the whole scene is parsed, for what the section
            refers to elsewhere in the scene (e.g. the links of its robots); raises :class:`SceneError`.

    The parsed value lands in ``SceneSpec.extra[key]``; the backend's builders read it from there.
    """
    _EXTRA_SECTIONS[key] = _Section(parse, doc, check)


def accepted_keys(section: str) -> list[str]:
    """Key names accepted in ``section`` (a key of :data:`SCENE_KEYS`)."""
    keys = [k.name for k in SCENE_KEYS[section]]
    if section == "scene":
        keys += sorted(_EXTRA_SECTIONS)
    return keys


def scene_keys_doc() -> str:
    """Markdown reference of every accepted scene key (one table per section), for docs/task_file.md."""
    titles = {"scene": "`scene`", "robots[]": "`scene.robots[]`", "fixtures[]": "`scene.fixtures[]`",
              "objects[]": "`scene.objects[]`", "primitive": "`scene.objects[].primitive`",
              "pose_noise": "`scene.objects[].pose_noise`", "grasps[]": "`scene.objects[].grasps[]`",
              "symmetry": "`scene.objects[].grasps[].symmetry`", "task": "`scene.task`",
              "pose": "poses (`base_pose`, `pose`)"}
    extra = {"scene": [f"| `{key}` | | | {sec.doc} |" for key, sec in sorted(_EXTRA_SECTIONS.items())]}
    return keys_markdown(SCENE_KEYS, titles, extra)


# ------------------------------------------------------------------------------------------------
# Helpers
# ------------------------------------------------------------------------------------------------
def _suggest(word: str, choices: Sequence[str]) -> str:
    close = difflib.get_close_matches(str(word), list(choices), n=3, cutoff=0.6)
    if close:
        return "did you mean " + " or ".join(repr(c) for c in close) + "?"
    return "accepted: " + ", ".join(repr(c) for c in choices)


def _check_keys(d: Mapping[str, Any], section: str, path: PathT) -> None:
    allowed = accepted_keys(section)
    for k in d:
        if not isinstance(k, str):
            raise SceneError(path, f"keys must be strings, got {k!r}")
        if k not in allowed:
            raise SceneError(path + (k,), f"unknown key {k!r} in {format_path(path)}; {_suggest(k, allowed)}")
    for kd in SCENE_KEYS[section]:
        if kd.required and kd.name not in d:
            raise SceneError(path, f"missing required key {kd.name!r} ({kd.doc})")


def _mapping(v: Any, path: PathT, what: str) -> Mapping[str, Any]:
    if not isinstance(v, Mapping):
        raise SceneError(path, f"{what} must be a mapping (key: value), got {type(v).__name__} {v!r}")
    return v


def _list(v: Any, path: PathT, what: str) -> list[Any]:
    if not isinstance(v, list):
        raise SceneError(path, f"{what} must be a list (- item), got {type(v).__name__} {v!r}")
    return v


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(float(v))


def _number(d: Mapping[str, Any], key: str, path: PathT, default: Any = None, *, gt: Optional[float] = None,
            ge: Optional[float] = None, le: Optional[float] = None, unit: str = "") -> Any:
    if key not in d:
        return default
    v = d[key]
    p = path + (key,)
    if not _is_number(v):
        raise SceneError(p, f"{key} must be a number{' in ' + unit if unit else ''}, got {v!r}")
    v = float(v)
    if gt is not None and not v > gt:
        raise SceneError(p, f"{key} must be > {gt:g}{' ' + unit if unit else ''}, got {v:g}")
    if ge is not None and not v >= ge:
        raise SceneError(p, f"{key} must be >= {ge:g}{' ' + unit if unit else ''}, got {v:g}")
    if le is not None and not v <= le:
        raise SceneError(p, f"{key} must be <= {le:g}{' ' + unit if unit else ''}, got {v:g}")
    return v


def _vector(d: Mapping[str, Any], key: str, path: PathT, n: int, default: Any = None, what: str = "") -> Any:
    if key not in d:
        return default
    v = d[key]
    p = path + (key,)
    if not isinstance(v, (list, tuple)) or len(v) != n:
        raise SceneError(p, f"{key} must be a list of {n} numbers{' ' + what if what else ''}, got {v!r}")
    for i, x in enumerate(v):
        if not _is_number(x):
            raise SceneError(p + (i,), f"{key}[{i}] must be a number, got {x!r}")
    return tuple(float(x) for x in v)


def _string(d: Mapping[str, Any], key: str, path: PathT, default: Any = None) -> Any:
    if key not in d:
        return default
    v = d[key]
    if not isinstance(v, str) or not v:
        raise SceneError(path + (key,), f"{key} must be a non-empty string, got {v!r}")
    return v


def _pose(d: Mapping[str, Any], key: str, path: PathT, required: bool = False) -> Pose:
    p = path + (key,)
    if key not in d:
        if required:
            raise SceneError(path, f"missing required key {key!r} (a pose: {{position: [x, y, z], rpy_deg: [r, p, y]}})")
        return np.eye(4)
    v = d[key]
    if isinstance(v, Mapping):
        _check_keys(v, "pose", p)
        for k in ("position", "rpy_deg", "rpy"):
            _vector(v, k, p, 3)
        _vector(v, "orientation", p, 4, what="(w, x, y, z)")
    try:
        return pose_from_spec(v)
    except ValueError as e:
        raise SceneError(p, str(e)) from None


@functools.lru_cache(maxsize=1)
def _pybullet_data_urdfs() -> tuple[str, ...]:
    import pybullet_data

    root = Path(pybullet_data.getDataPath())
    return tuple(sorted(str(p.relative_to(root)) for p in root.rglob("*.urdf")))


def resolve_urdf(urdf: str, base_dir: Optional[str] = None) -> Optional[str]:
    """Absolute path of ``urdf``: as given if absolute, else under ``base_dir``, else under
    ``pybullet_data``; ``None`` if no such file exists."""
    import pybullet_data

    if os.path.isabs(urdf):
        return urdf if os.path.isfile(urdf) else None
    candidates = ([os.path.join(base_dir, urdf)] if base_dir else []) + [os.path.join(pybullet_data.getDataPath(), urdf)]
    for c in candidates:
        if os.path.isfile(c):
            return os.path.abspath(c)
    return None


def _urdf(d: Mapping[str, Any], path: PathT, base_dir: Optional[str]) -> tuple[str, str]:
    urdf = _string(d, "urdf", path)
    resolved = resolve_urdf(urdf, base_dir)
    if resolved is None:
        close = difflib.get_close_matches(urdf, _pybullet_data_urdfs(), n=3, cutoff=0.6)
        hint = ("did you mean " + " or ".join(repr(c) for c in close) + "?") if close else \
            "give an absolute path, a path relative to the task file, or one under pybullet_data (e.g. 'objects/mug.urdf')"
        raise SceneError(path + ("urdf",), f"URDF file {urdf!r} not found; {hint}")
    problem = urdf_problem(resolved)
    if problem is not None:
        raise SceneError(path + ("urdf",), f"{urdf!r} is not a URDF PyBullet can load: {problem}")
    return urdf, resolved


def _name(d: Mapping[str, Any], path: PathT, seen: dict[str, PathT]) -> str:
    name = _string(d, "name", path)
    if name in seen:
        raise SceneError(path + ("name",), f"duplicate name {name!r} (already used at {format_path(seen[name])}); "
                         "robots, fixtures and objects need unique names")
    seen[name] = path + ("name",)
    return name


# ------------------------------------------------------------------------------------------------
# Sections
# ------------------------------------------------------------------------------------------------
def _parse_robot(d: Any, path: PathT, seen: dict[str, PathT], base_dir: Optional[str] = None) -> RobotSpec:
    d = _mapping(d, path, "a robot")
    _check_keys(d, "robots[]", path)
    name = _name(d, path, seen)
    model_name = _string(d, "model", path, "franka_panda")
    try:
        model = resolve_model(model_name, base_dir)
    except UnknownModelError as e:
        raise SceneError(path + ("model",), f"{e.message}; {e.hint}" if e.hint else e.message) from None
    except RobotDescriptionError as e:
        raise SceneError(path + ("model",), f"the robot description {model_name!r} is invalid "
                         f"({len(e.problems)} problem{'s' if len(e.problems) != 1 else ''}, below)",
                         problems=e.problems) from None
    conf: Any = d.get("initial_configuration", "ready")
    p = path + ("initial_configuration",)
    if isinstance(conf, str):
        if conf not in model.named_configurations:
            raise SceneError(p, f"unknown configuration {conf!r} for {model_name}; "
                             f"{_suggest(conf, sorted(model.named_configurations))}")
    elif isinstance(conf, list):
        n = len(model.arm_joint_names)
        conf = _vector(d, "initial_configuration", path, n, what="(one angle per arm joint, rad)")
    else:
        raise SceneError(p, f"initial_configuration must be a configuration name or a list of "
                         f"{len(model.arm_joint_names)} joint angles in radians, got {conf!r}")
    gap = _number(d, "initial_gap_m", path, model.max_gap_m, ge=model.min_gap_m, le=model.max_gap_m, unit="m")
    auto = _auto_base(d.get("base_pose"), path + ("base_pose",))
    return RobotSpec(name=name, model=model_name, base_pose=np.eye(4) if auto else _pose(d, "base_pose", path),
                     initial_configuration=conf, initial_gap_m=gap, description=model, base_auto=auto,
                     payload_kg=_number(d, "payload_kg", path, gt=0.0, unit="kg"))


def _auto_base(v: Any, path: PathT) -> Optional[AutoBaseSpec]:
    """``base_pose: auto`` or ``{auto: {surface: NAME}}`` -> :class:`AutoBaseSpec`; None for a pose."""
    if isinstance(v, str):
        if v != "auto":
            raise SceneError(path, f"base_pose must be a pose ({{position: [x, y, z], rpy_deg: [r, p, y]}}) or 'auto', "
                             f"got {v!r}")
        return AutoBaseSpec()
    if not isinstance(v, Mapping) or "auto" not in v:
        return None
    if len(v) != 1:
        other = next(k for k in v if k != "auto")
        raise SceneError(path + (other,), f"base_pose 'auto' takes no {other!r}: give either a pose or "
                         "{auto: {surface: floor}}")
    a = v["auto"]
    if a is True or a is None:
        return AutoBaseSpec()
    a = _mapping(a, path + ("auto",), "base_pose.auto")
    for k in a:
        if k != "surface":
            raise SceneError(path + ("auto", k), f"unknown key {k!r} in base_pose.auto; accepted: 'surface' "
                             "('floor' or a fixture's name)")
    return AutoBaseSpec(surface=_string(a, "surface", path + ("auto",)))


def _parse_fixture(d: Any, path: PathT, seen: dict[str, PathT], base_dir: Optional[str]) -> FixtureSpec:
    d = _mapping(d, path, "a fixture")
    _check_keys(d, "fixtures[]", path)
    name = _name(d, path, seen)
    urdf, resolved = _urdf(d, path, base_dir)
    _contact_pair(d, path)
    return FixtureSpec(name=name, urdf=urdf, urdf_path=resolved, pose=_pose(d, "pose", path),
                       scale=_number(d, "scale", path, 1.0, gt=0.0),
                       contact_stiffness=_number(d, "contact_stiffness", path, gt=0.0, unit="N/m"),
                       contact_damping=_number(d, "contact_damping", path, ge=0.0, unit="N s/m"))


def _contact_pair(d: Any, path: PathT) -> None:
    if ("contact_stiffness" in d) != ("contact_damping" in d):
        missing = "contact_damping" if "contact_stiffness" in d else "contact_stiffness"
        raise SceneError(path, f"contact_stiffness and contact_damping go together (PyBullet sets both); add {missing!r}")


def _parse_primitive(v: Any, path: PathT) -> PrimitiveSpec:
    d = _mapping(v, path, "primitive")
    _check_keys(d, "primitive", path)
    shape = _string(d, "shape", path)
    shapes = ("box", "cylinder", "sphere")
    if shape not in shapes:
        raise SceneError(path + ("shape",), f"unknown shape {shape!r}; {_suggest(shape, shapes)}")
    needs = {"box": ("size",), "cylinder": ("radius", "length"), "sphere": ("radius",)}[shape]
    for k in ("size", "radius", "length"):
        if k in d and k not in needs:
            raise SceneError(path + (k,), f"a {shape} takes {' and '.join(needs)}, not {k!r}")
        if k not in d and k in needs:
            raise SceneError(path, f"a {shape} needs {k!r} ({' and '.join(needs)}, metres)")
    size = _vector(d, "size", path, 3, what="(full extents x, y, z in metres)")
    if size is not None:
        for i, s in enumerate(size):
            if s <= 0:
                raise SceneError(path + ("size", i), f"box size must be > 0 m, got {s:g}")
    return PrimitiveSpec(shape=shape, size=size, radius=_number(d, "radius", path, gt=0.0, unit="m"),
                         length=_number(d, "length", path, gt=0.0, unit="m"))


#: the largest extent of a movable (graspable) primitive, m: beyond it a size is taken for a unit
#: mistake (a box written [50, 50, 80] in millimetres started 25,400 mm inside the table)
MOVABLE_SIZE_MAX_M = 2.0


def _movable_size(pr: PrimitiveSpec, name: str, path: PathT) -> None:
    """A movable primitive larger than :data:`MOVABLE_SIZE_MAX_M`: a SceneError at the key, with the
    value in metres as if it had been written in millimetres."""
    for key in ("size", "radius", "length"):
        v = getattr(pr, key)
        if v is None:
            continue
        vals = list(v) if isinstance(v, (tuple, list)) else [v]
        if max(vals) * (2.0 if key == "radius" else 1.0) <= MOVABLE_SIZE_MAX_M:
            continue
        mm = [round(x / 1000.0, 6) for x in vals]
        written = ", ".join(f"{x:g}" for x in vals)
        meant = ", ".join(f"{x:g}" for x in mm)
        if key == "size":
            written, meant = f"[{written}]", f"[{meant}]"
        raise SceneError(path + (key,), f"object {name!r}: {key} {written} m is over {MOVABLE_SIZE_MAX_M:g} m across, "
                         f"more than a gripper holds: sizes are metres ({written} mm is {key}: {meant}); a large "
                         "body that stays put is fixed: true")


_HANDLE_NAME = re.compile(r"^[A-Za-z0-9_.+\-]+$")
_AXIS_NAMES = {"x": (1.0, 0.0, 0.0), "y": (0.0, 1.0, 0.0), "z": (0.0, 0.0, 1.0),
               "-x": (-1.0, 0.0, 0.0), "-y": (0.0, -1.0, 0.0), "-z": (0.0, 0.0, -1.0)}
#: a declared grasp's TCP may lie this far outside the primitive's bounding sphere, metres
_GRASP_REACH_M = 0.05


def _bounding_radius(primitive: Optional[PrimitiveSpec]) -> Optional[float]:
    if primitive is None:
        return None
    if primitive.shape == "box":
        return float(np.linalg.norm(primitive.size)) / 2.0
    if primitive.shape == "cylinder":
        return math.hypot(primitive.radius, primitive.length / 2.0)  # type: ignore[arg-type, operator]
    return float(primitive.radius)  # type: ignore[arg-type]


def _parse_symmetry(v: Any, path: PathT, what: str) -> tuple[tuple[float, float, float], int, int]:
    d = _mapping(v, path, "symmetry")
    _check_keys(d, "symmetry", path)
    axis_v = d.get("axis", "z")
    if isinstance(axis_v, str):
        if axis_v not in _AXIS_NAMES:
            raise SceneError(path + ("axis",), f"{what}: unknown symmetry axis {axis_v!r}; {_suggest(axis_v, list(_AXIS_NAMES))} "
                             "or a vector [x, y, z] in the object frame")
        axis = _AXIS_NAMES[axis_v]
    else:
        axis = _vector(d, "axis", path, 3, what="(the axis in the object frame)")
        if float(np.linalg.norm(axis)) < 1e-9:
            raise SceneError(path + ("axis",), f"{what}: the symmetry axis is zero; give a direction such as [0, 0, 1]")
    order_v = d.get("order", 1)
    if isinstance(order_v, str) and order_v != "continuous":
        raise SceneError(path + ("order",), f"{what}: unknown symmetry order {order_v!r}; "
                         f"{_suggest(order_v, ['continuous'])} (or an integer 1 ... 360)")
    if order_v == "continuous":
        order = 0
    elif isinstance(order_v, int) and not isinstance(order_v, bool) and 1 <= order_v <= 360:
        order = order_v
    else:
        raise SceneError(path + ("order",), f"{what}: symmetry order must be an integer 1 ... 360 or 'continuous', "
                         f"got {order_v!r}")
    samples_v = d.get("samples", 12)
    if "samples" in d and order != 0:
        raise SceneError(path + ("samples",), f"{what}: samples applies to order: continuous (an order n gives n grasps)")
    if isinstance(samples_v, bool) or not isinstance(samples_v, int) or not 1 <= samples_v <= 360:
        raise SceneError(path + ("samples",), f"{what}: samples must be an integer 1 ... 360, got {samples_v!r}")
    return tuple(float(a) for a in axis), order, samples_v  # type: ignore[return-value]


def _parse_grasps(v: Any, path: PathT, obj: str, primitive: Optional[PrimitiveSpec], scale: float) -> tuple[Handle, ...]:
    """The ``grasps:`` list of object ``obj``: one :class:`~py_trees_manipulation.geometry.grasps.Handle` each."""
    items = _list(v, path, "grasps")
    if not items:
        raise SceneError(path, f"object {obj!r}: grasps is empty; declare at least one grasp, or leave grasps out "
                         "for the shape's defaults")
    out: list[Handle] = []
    names: dict[str, PathT] = {}
    reach = _bounding_radius(primitive)
    for i, item in enumerate(items):
        p = path + (i,)
        d = _mapping(item, p, "a grasp")
        try:
            _check_keys(d, "grasps[]", p)
        except SceneError as e:
            if isinstance(d.get("name"), str):
                raise SceneError(e.path, f"grasp {d['name']!r} of object {obj!r}: {e.message}") from None
            raise
        name = _string(d, "name", p)
        if not _HANDLE_NAME.match(name):
            raise SceneError(p + ("name",), f"grasp name {name!r} of object {obj!r}: use letters, digits and _ . + - "
                             "(no '/': grasps are named OBJECT/NAME/ANGLE)")
        if name in names:
            raise SceneError(p + ("name",), f"duplicate grasp name {name!r} in object {obj!r} (already at "
                             f"{format_path(names[name])})")
        names[name] = p + ("name",)
        what = f"grasp {name!r} of object {obj!r}"
        try:
            pose = check_grasp_pose(_pose(d, "pose", p, required=True), what)
        except SceneError as e:
            raise SceneError(e.path, f"{what}: {e.message}") from None
        except ValueError as e:
            raise SceneError(p + ("pose",), str(e)) from None
        dist = float(np.linalg.norm(pose[:3, 3]))
        limit = (reach + _GRASP_REACH_M) if reach is not None else 1.0 * scale
        if dist > limit:
            shape = (f"the {primitive.shape} reaches {reach:.3f} m from its centre" if reach is not None and primitive
                     else "more than an object's size")
            raise SceneError(p + ("pose",), f"{what}: the TCP is {dist:.3f} m from the object's origin ({shape}); "
                             "a grasp pose is in the object's own frame, in metres (not a world pose, not millimetres)")
        axis, order, samples = ((0.0, 0.0, 1.0), 1, 12)
        if "symmetry" in d:
            axis, order, samples = _parse_symmetry(d["symmetry"], p + ("symmetry",), what)
        approach = _number(d, "approach_m", p, APPROACH_M, ge=0.0, le=0.5, unit="m")
        width = _number(d, "width_m", p, float("nan"), gt=0.0, unit="m")
        out.append(Handle(f"{obj}/{name}", pose, width_m=width, approach_m=approach, axis=axis, order=order,
                          samples=samples))
    return tuple(out)


def _parse_object(d: Any, path: PathT, seen: dict[str, PathT], base_dir: Optional[str]) -> ObjectSpec:
    d = _mapping(d, path, "an object")
    _check_keys(d, "objects[]", path)
    name = _name(d, path, seen)
    if ("urdf" in d) == ("primitive" in d):
        raise SceneError(path, f"object {name!r} needs exactly one of 'urdf' (a URDF file) or "
                         "'primitive' ({shape: box|cylinder|sphere, ...})")
    urdf = resolved = None
    primitive = None
    if "urdf" in d:
        urdf, resolved = _urdf(d, path, base_dir)
    else:
        primitive = _parse_primitive(d["primitive"], path + ("primitive",))
        if "scale" in d:
            raise SceneError(path + ("scale",), "scale applies to URDF objects; give a primitive its size directly")
    noise = PoseNoiseSpec()
    if "pose_noise" in d:
        pn = _mapping(d["pose_noise"], path + ("pose_noise",), "pose_noise")
        _check_keys(pn, "pose_noise", path + ("pose_noise",))
        noise = PoseNoiseSpec(position_m=_number(pn, "position_m", path + ("pose_noise",), 0.0, ge=0.0, unit="m"),
                              yaw_deg=_number(pn, "yaw_deg", path + ("pose_noise",), 0.0, ge=0.0, le=180.0, unit="deg"))
    _contact_pair(d, path)
    color = _vector(d, "color", path, 4, what="(r, g, b, a, each 0 ... 1)")
    if color is not None:
        for i, c in enumerate(color):
            if not 0.0 <= c <= 1.0:
                raise SceneError(path + ("color", i), f"colour components must be in 0 ... 1, got {c:g}")
    fixed = d.get("fixed", False)
    if not isinstance(fixed, bool):
        raise SceneError(path + ("fixed",), f"fixed must be true or false, got {fixed!r}")
    may_move = d.get("may_move", False)
    if not isinstance(may_move, bool):
        raise SceneError(path + ("may_move",), f"may_move must be true or false, got {may_move!r}")
    if primitive is not None and not fixed:
        _movable_size(primitive, name, path + ("primitive",))
    scale = _number(d, "scale", path, 1.0, gt=0.0)
    grasps = _parse_grasps(d["grasps"], path + ("grasps",), name, primitive, scale) if "grasps" in d else ()
    return ObjectSpec(
        name=name, pose=_pose(d, "pose", path, required=True), urdf=urdf, urdf_path=resolved,
        primitive=primitive, scale=scale,
        mass_kg=_number(d, "mass_kg", path, gt=0.0, unit="kg"),
        lateral_friction=_number(d, "lateral_friction", path, ge=0.0),
        spinning_friction=_number(d, "spinning_friction", path, ge=0.0),
        rolling_friction=_number(d, "rolling_friction", path, ge=0.0),
        restitution=_number(d, "restitution", path, ge=0.0, le=1.0),
        contact_stiffness=_number(d, "contact_stiffness", path, gt=0.0, unit="N/m"),
        contact_damping=_number(d, "contact_damping", path, ge=0.0, unit="N s/m"),
        crush_force_n=_number(d, "crush_force_n", path, gt=0.0, unit="N"),
        color=color, pose_noise=noise, fixed=fixed, may_move=may_move, grasps=grasps,
    )


def _parse_task(v: Any, path: PathT, objects: Sequence[ObjectSpec]) -> TaskSpec:
    d = _mapping(v, path, "task")
    _check_keys(d, "task", path)
    names = [o.name for o in objects]
    target = _string(d, "target_object", path)
    if target is not None and target not in names:
        hint = _suggest(target, names) if names else "the scene has no objects"
        raise SceneError(path + ("target_object",), f"no object named {target!r}; {hint}")
    placed = d.get("placed", True)
    if not isinstance(placed, bool):
        raise SceneError(path + ("placed",), f"placed must be true or false, got {placed!r}")
    return TaskSpec(target_object=target, place_position=_vector(d, "place_position", path, 3, what="(metres)"),
                    lift_threshold_m=_number(d, "lift_threshold_m", path, 0.05, gt=0.0, unit="m"), placed=placed)


def parse_scene(scene: Any, base_dir: Optional[str] = None) -> SceneSpec:
    """Validate the ``scene:`` mapping of a task file and return a :class:`SceneSpec`.

    Args:
        scene: the plain dict under ``scene:`` (from ``yaml.safe_load``).
        base_dir: folder relative URDF paths are tried against before ``pybullet_data``, and
            robot description files (``model: my_robot.yaml``) are relative to (normally the task
            file's folder).

    Raises:
        SceneError: the first problem found, with its path inside ``scene`` and a suggested fix.
    """
    if isinstance(scene, SceneSpec):
        return scene
    root: PathT = ()
    d = _mapping(scene if scene is not None else {}, root, "scene")
    _check_keys(d, "scene", root)
    seed = d.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise SceneError(("seed",), f"seed must be a non-negative integer, got {seed!r}")
    gravity = _vector(d, "gravity", root, 3, (0.0, 0.0, -9.81), what="(m/s^2)")
    hz = _number(d, "physics_hz", root, 1000.0, ge=10.0, le=10000.0, unit="Hz")
    iters = d.get("solver_iterations", 50)
    if isinstance(iters, bool) or not isinstance(iters, int) or not 1 <= iters <= 1000:
        raise SceneError(("solver_iterations",), f"solver_iterations must be an integer in 1 ... 1000, got {iters!r}")
    settle = _number(d, "settle_s", root, 0.2, ge=0.0, le=5.0, unit="s")
    sleep = d.get("sleep_resting_bodies", True)
    if not isinstance(sleep, bool):
        raise SceneError(("sleep_resting_bodies",), f"sleep_resting_bodies must be true or false, got {sleep!r}")
    penetration = _number(d, "start_penetration_m", root, 0.003, ge=0.0, le=0.05, unit="m")
    settle_tol = _number(d, "settle_tolerance_m", root, 0.01, ge=0.001, le=1.0, unit="m")
    seen: dict[str, PathT] = {}
    robots = tuple(_parse_robot(r, ("robots", i), seen, base_dir)
                   for i, r in enumerate(_list(d.get("robots", []), ("robots",), "robots")))
    fixtures = tuple(_parse_fixture(f, ("fixtures", i), seen, base_dir)
                     for i, f in enumerate(_list(d.get("fixtures", []), ("fixtures",), "fixtures")))
    objects = tuple(_parse_object(o, ("objects", i), seen, base_dir)
                    for i, o in enumerate(_list(d.get("objects", []), ("objects",), "objects")))
    fixture_names = [f.name for f in fixtures]
    for i, r in enumerate(robots):
        surface = r.base_auto.surface if r.base_auto is not None else None
        if surface is not None and surface != "floor" and surface not in fixture_names:
            raise SceneError(("robots", i, "base_pose", "auto", "surface"),
                             f"no fixture named {surface!r} to stand on; {_suggest(surface, ['floor', *fixture_names])}")
    task = _parse_task(d.get("task", {}), ("task",), objects)
    if task.target_object is None and len(objects) == 1:
        task = TaskSpec(objects[0].name, task.place_position, task.lift_threshold_m, task.placed)
    if task.place_position is not None and task.target_object is None:
        raise SceneError(("task",), "place_position needs a target_object (the scene has several objects)")
    extra = {k: sec.parse(d[k], (k,)) for k, sec in _EXTRA_SECTIONS.items() if k in d}
    spec = SceneSpec(seed=seed, gravity=gravity, physics_hz=hz, solver_iterations=iters, settle_s=settle,
                     sleep_resting_bodies=sleep, start_penetration_m=penetration, settle_tolerance_m=settle_tol,
                     robots=robots, fixtures=fixtures, objects=objects, task=task, extra=extra)
    for k, sec in _EXTRA_SECTIONS.items():
        if k in extra and sec.check is not None:
            sec.check(extra[k], spec)
    return spec



# ------------------------------------------------------------------------------------------------
# Payload (issue 32 item 7)
# ------------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=64)
def _urdf_mass_kg(path: str) -> Optional[float]:
    """Sum of the ``<inertial><mass>`` of a URDF's links, kg (None: unreadable)."""
    import xml.etree.ElementTree as ET

    try:
        root = ET.parse(path).getroot()
        return sum(float(m.get("value", 0.0)) for m in root.iter("mass"))
    except (OSError, ET.ParseError, ValueError):
        return None


def object_mass_kg(obj: ObjectSpec) -> Optional[float]:
    """The object's mass as the simulator gives it, kg: ``mass_kg``, else 0.1 for a primitive, else
    the URDF's (None: unknown)."""
    if obj.mass_kg is not None:
        return float(obj.mass_kg)
    if obj.primitive is not None:
        return 0.1
    return _urdf_mass_kg(obj.urdf_path) if obj.urdf_path else None


#: Bullet's lateral friction of a primitive object the scene gives none for
DEFAULT_LATERAL_FRICTION = 0.8
#: gravity, m/s^2 (the simulator's)
GRAVITY_MPS2 = 9.81


def _robot_and_object(scene: SceneSpec, obj: str,
                      robot: Optional[str]) -> Optional[tuple[int, RobotSpec, ObjectSpec]]:
    """``(index, robot, object)`` of ``robot`` (default: the scene's first) and object ``obj`` in the
    scene, or None when either is not there."""
    robots = list(scene.robots)
    idx = next((i for i, r in enumerate(robots) if r.name == robot), 0 if robot is None and robots else None)
    o = next((x for x in scene.objects if x.name == obj), None)
    if idx is None or o is None:
        return None
    return idx, robots[idx], o


def _description_of(r: RobotSpec) -> Optional[RobotDescription]:
    """The robot's description: the parsed one, else its model resolved (None when that fails)."""
    if r.description is not None:
        return r.description
    try:
        return resolve_model(r.model)
    except (UnknownModelError, RobotDescriptionError, ValueError):
        return None


#: Bullet's friction of a body whose URDF gives none (``btCollisionObject``'s default)
BULLET_DEFAULT_FRICTION = 0.5


@functools.lru_cache(maxsize=64)
def urdf_lateral_friction(path: Optional[str]) -> Optional[float]:
    """The lateral friction PyBullet gives a URDF object's base link: its ``<contact><lateral_friction
    value=.../>``, else :data:`BULLET_DEFAULT_FRICTION`; None when the file cannot be read."""
    import xml.etree.ElementTree as ET

    if not path:
        return None
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return None
    link = root.find("link")
    el = link.find("contact/lateral_friction") if link is not None else None
    try:
        return float(el.get("value")) if el is not None else BULLET_DEFAULT_FRICTION
    except (TypeError, ValueError):
        return None


def grip_problem(scene: SceneSpec, obj: str, robot: Optional[str] = None,
                 grip_force_n: Optional[float] = None,
                 set_force: Optional[Callable[[int], str]] = None) -> Optional[str]:
    """Why a two-finger friction grip of ``grip_force_n`` per pad (default: the gripper's
    ``default_force_n``) cannot hold object ``obj`` even at rest: each pad must press
    ``m g / (2 mu)`` (``mu`` the object's lateral friction times the finger pads', as Bullet combines
    them: the run's ``grip_needed_n``), with the numbers and the fix; None when it can, when a
    GraspFix section welds what ``robot``'s fingers hold, or when the mass or the friction is not
    known (a URDF object without ``lateral_friction`` has its URDF's, :func:`urdf_lateral_friction`).

    Without ``grip_force_n``, a ``tactile:`` section whose controller sets ``fingertip_force_limit``
    bounds the grip too: the PR2 holds (SlipServo, Grab) never squeeze harder (the run's
    ``grip_force_limit_n``), so an object that needs more is refused before the arm moves (issue 33).

    ``set_force(newtons)``: how the user sets the grip to that value (the key, where it is written:
    ``"set grip_force_n: 85"``, or the included file's parameter that gives it), appended to the
    fix with the value that works (issue 33, D)."""
    found = _robot_and_object(scene, obj, robot)
    if found is None:
        return None
    _, r, o = found
    fix = (scene.extra or {}).get("grasp_fix")
    if fix is not None and (not fix.arms or any(getattr(a, "arm_name", None) == r.name for a in fix.arms)):
        return None   # a GraspFix weld holds what the fingers grip
    desc = _description_of(r)
    if desc is None:
        return None
    mass = object_mass_kg(o)
    mu_obj = o.lateral_friction if o.lateral_friction is not None else (
        DEFAULT_LATERAL_FRICTION if o.primitive is not None else urdf_lateral_friction(o.urdf_path))
    if mass is None or mu_obj is None or mass <= 0:
        return None
    mu_pad = float(desc.gripper.finger_friction)
    mu = float(mu_obj) * mu_pad
    limit = float(desc.gripper.max_force_n)
    grip = float(desc.gripper.default_force_n if grip_force_n is None or grip_force_n < 0 else grip_force_n)
    what = f"a {grip:.0f} N grip"
    if grip > limit:  # the gripper's actuator clamps a larger request (the run's grip_force_limit_n)
        what = f"a {grip:.0f} N grip (clamped to the gripper's {limit:.0f} N limit)"
        grip = limit
    tactile = (scene.extra or {}).get("tactile")
    tactile_limit = (tactile.controller.get("fingertip_force_limit") if tactile is not None and tactile.enabled
                     else None)
    if (grip_force_n is None or grip_force_n < 0) and tactile_limit is not None and 0 <= tactile_limit < grip:
        grip = float(tactile_limit)
        what = f"the tactile fingertip_force_limit of {grip:g} N"
    if mu <= 0:
        return (f"{obj!r} is frictionless (lateral_friction {float(mu_obj):g} x the fingers' {mu_pad:g}): no "
                f"friction grip holds it; give it a lateral_friction above 0, "
                f"or weld it with GraspFix")
    needed = mass * GRAVITY_MPS2 / (2.0 * mu)
    if grip >= needed:
        return None
    tactile_grip = what.startswith("the tactile")
    verb = "raise it to" if tactile_grip else "grip with"
    works = int(round(needed * 1.3))   # 1.3 x what holds it at rest: the value that works
    if tactile_grip:
        how = f": set scene.tactile.controller.fingertip_force_limit: {works}"
    else:
        how = f": {set_force(works)}" if set_force is not None else ""
    fix_text = (f"{verb} at least "
                f"{works} N (1.3 x, for the lift's acceleration; the gripper's "
                f"limit is {limit:.0f} N){how}" if needed * 1.3 <= limit else
                f"no grip of this gripper holds it (its limit is {limit:.0f} N)")
    return (f"{what} cannot hold {obj!r} ({mass:.2f} kg) by friction: each pad must press "
            f"{needed:.1f} N (m g / (2 mu), mu {mu:.2f} = its lateral_friction {float(mu_obj):g} x the fingers' "
            f"{mu_pad:g}); {fix_text}, raise the friction, or weld it with GraspFix")


def crush_problem(scene: SceneSpec, obj: str, robot: Optional[str] = None) -> Optional[str]:
    """Why the tactile holds would crush object ``obj``: a ``tactile:`` section whose controller's
    ``fingertip_force_limit`` (N, the most Grab's hold and the slip servo press with) is not under
    the object's ``crush_force_n`` (N), with the value that works (0.8 x the crush force, as the
    fragile example's 4 N under 5 N); None when there is no such limit, no crush force, or the
    fingers of ``robot`` are welded by GraspFix. A GripperCommand's effort is not judged here (its
    crush is the run's FAILURE, ``crushed``)."""
    found = _robot_and_object(scene, obj, robot)
    if found is None:
        return None
    _, _r, o = found
    crush = getattr(o, "crush_force_n", None)
    tactile = (scene.extra or {}).get("tactile")
    if crush is None or tactile is None or not tactile.enabled:
        return None
    limit = tactile.controller.get("fingertip_force_limit")
    if limit is None or limit < 0 or limit < crush:
        return None
    works = math.floor(0.8 * crush * 10) / 10
    return (f"the tactile fingertip_force_limit of {limit:g} N is not under the crush_force_n of {obj!r} "
            f"({crush:g} N): Grab's hold and the slip servo may press it with up to {limit:g} N and crush it; "
            f"set scene.tactile.controller.fingertip_force_limit: {works:g} (0.8 x its crush force)")


def lift_limit(scene: SceneSpec, robot: Optional[str] = None) -> Optional[tuple[float, str, int]]:
    """What ``robot`` (default: the scene's first) may lift: ``(limit kg, how it is rated, its index
    in scene.robots)``, the limit being the arm's rated payload (the scene's ``payload_kg``, else the
    description's) minus its gripper's mass; None when the rating is not known."""
    robots = list(scene.robots)
    idx = next((i for i, r in enumerate(robots) if r.name == robot), 0 if robot is None and robots else None)
    if idx is None:
        return None
    r = robots[idx]
    desc = _description_of(r)
    if desc is None:
        return None
    payload = r.payload_kg if r.payload_kg is not None else getattr(desc, "payload_kg", None)
    if payload is None:
        return None
    gripper = float(getattr(desc.gripper, "mass_kg", 0.0) or 0.0)
    rating = (f"the scene's payload_kg {payload:.2f} kg" if r.payload_kg is not None
              else f"{desc.name}'s rated payload {payload:.2f} kg")
    return payload - gripper, f"{rating} minus its gripper's {gripper:.2f} kg", idx


def payload_problem(scene: SceneSpec, obj: str, robot: Optional[str] = None) -> Optional[str]:
    """Why ``robot`` (default: the scene's first) may not lift object ``obj``: heavier than the arm's
    rated payload (the scene's ``payload_kg``, else the description's) minus its gripper's mass
    (:func:`lift_limit`), with both numbers and the override; None when it may (or nothing is known)."""
    found = _robot_and_object(scene, obj, robot)
    if found is None:
        return None
    _, r, o = found
    rated = lift_limit(scene, r.name)
    mass = object_mass_kg(o)
    if rated is None or mass is None:
        return None
    limit, rating, idx = rated
    if mass <= limit + 1e-9:
        return None
    return (f"object {obj!r} weighs {mass:.2f} kg, more than robot {r.name!r} may lift: {limit:.2f} kg ({rating}); "
            "lighten the object, use a robot with a larger payload, or "
            f"override the rating with scene.robots[{idx}].payload_kg")
