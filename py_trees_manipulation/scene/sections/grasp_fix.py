"""The ``grasp_fix:`` scene section: its keys, parsed and checked without a physics client.

The simulator side (the weld, the per-step contact sampling) is :mod:`py_trees_manipulation.sim.grasp_fix`;
the keys and their meaning are documented there. This module imports no PyBullet, so ``ptm validate``
checks a scene without loading the simulator.
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence

from ...robots import RobotDescription, stock_description
from ...robots.urdf import parse_urdf
from ..spec import PathT, SceneError, SceneSpec, register_section

if TYPE_CHECKING:
    from ...control.grip_criterion import GraspFixParams

__all__ = ["GraspFixSpec", "ArmSpec", "parse_grasp_fix", "check_grasp_fix", "model_link_names", "DEFAULT_MAX_FORCE_N"]

#: force limit of the weld when ``max_force_n`` is not given, N (iGibson's assisted grasp uses 500 N)
DEFAULT_MAX_FORCE_N = 500.0

_OWN_KEYS = ("auto", "max_force_n")


# ================================================================================================
# Scene section
# ================================================================================================
@dataclass(frozen=True)
class ArmSpec:
    """One ``arm`` entry. ``arm_name`` None: the robot's name; ``robot`` None: the robot called
    ``arm_name``, else the scene's only robot. ``palm_link``/``gripper_link`` None: the model's."""

    arm_name: Optional[str]
    robot: Optional[str]
    palm_link: Optional[str]
    gripper_link: Optional[tuple[str, ...]]
    path: PathT


@dataclass(frozen=True)
class GraspFixSpec:
    """The parsed ``grasp_fix:`` section.

    Attributes:
        params: the plugin parameters.
        arms: the ``arm`` entries; empty: one default arm per robot.
        auto: attach whatever the fingers grip, for the whole run (the plugin's behaviour).
        max_force_n: force limit of the fixed constraint, N.
    """

    params: GraspFixParams
    arms: tuple[ArmSpec, ...] = ()
    auto: bool = False
    max_force_n: float = DEFAULT_MAX_FORCE_N
    raw: Mapping[str, Any] = field(default_factory=dict)


def _description(model: "str | RobotDescription") -> RobotDescription:
    return model if isinstance(model, RobotDescription) else stock_description(model)


def model_link_names(model: "str | RobotDescription") -> tuple[str, ...]:
    """Link names of a robot's URDF (a stock model name or a description; read with ElementTree,
    no physics client needed)."""
    d = _description(model)
    return parse_urdf(d.urdf_path, d.packages).links


def _default_links(model: "str | RobotDescription") -> tuple[str, tuple[str, ...]]:
    """(palm link, gripper links) of a robot: the description's ``gripper.palm_link``, and the
    finger joints' child links followed by the pad links (each once)."""
    d = _description(model)
    urdf = parse_urdf(d.urdf_path, d.packages)
    fingers = [urdf.joints[j].child for j in d.gripper.joints] + list(d.gripper.pad_links)
    return d.gripper.palm_link, tuple(dict.fromkeys(fingers))


def _arm_robot(a: "ArmSpec", robot_names: Sequence[str]) -> str:
    """The scene robot carrying arm ``a`` (see :class:`ArmSpec`). Raises SceneError at the arm's path."""
    robot = a.robot or (a.arm_name if a.arm_name in robot_names else None)
    if robot is None:
        if len(robot_names) == 1:
            return robot_names[0]
        what = f"arm {a.arm_name!r}" if a.arm_name else "an arm without arm_name"
        raise SceneError(a.path, f"{what} does not name a robot and the scene has {len(robot_names)} robots "
                         f"{list(robot_names)}; add 'robot: <name>' or name the arm after its robot")
    if robot not in robot_names:
        close = difflib.get_close_matches(robot, list(robot_names), n=1)
        raise SceneError(a.path + (("robot",) if a.robot else ("arm_name",)),
                         f"no robot named {robot!r}" + (f"; did you mean {close[0]!r}?" if close
                                                         else f"; robots: {list(robot_names)}"))
    return robot


_KEY_RE = re.compile(r"^arm(?:\[([^\]]*)\])?(?:\.(\w+))?$")


def _error_path(key: str, base: PathT, arm_names: Sequence[str]) -> PathT:
    """Scene path of a :class:`GraspFixConfigError` key (``"arm[left].palm_link"``, ``"update_rate"``)."""
    if key == "grasp_fix":
        return base
    m = _KEY_RE.match(key)
    if not m:
        return base + (key,)
    sel, sub = m.group(1), m.group(2)
    path: PathT = base + ("arm",)
    if sel is not None:
        if sel.isdigit() and int(sel) < len(arm_names):
            path += (int(sel),)
        elif sel in arm_names:
            path += (arm_names.index(sel),)
    if sub:
        path += (sub,)
    return path


def parse_grasp_fix(value: Any, path: PathT) -> GraspFixSpec:
    """Validate the ``grasp_fix:`` scene section (see the module docstring).

    ``true`` stands for ``{auto: true}`` with every default. Which robot an arm belongs to and its
    link names (against that robot's URDF) are checked once the scene's robots are known
    (:func:`check_grasp_fix`).

    Raises:
        SceneError: with the path of the bad value: unknown keys (closest key suggested), a
            ``forces_angle_tolerance`` under 90 deg (can never grip), ``max_grip_count`` not above
            ``grip_count_threshold``, unknown link names (the model's closest links suggested).
    """
    # the criterion's module is imported by a scene with this section only (issue 35)
    from ...control.grip_criterion import GraspFixConfigError, grasp_fix_config_from_mapping

    if value is True:
        value = {"auto": True}
    if value is None or value is False:
        value = {}
    if not isinstance(value, Mapping):
        raise SceneError(path, f"grasp_fix must be a mapping of GraspFix parameters (or true), got {value!r}")
    spec = dict(value)
    auto = spec.pop("auto", False)
    if not isinstance(auto, bool):
        raise SceneError(path + ("auto",), f"auto must be true or false, got {auto!r}")
    max_force = spec.pop("max_force_n", DEFAULT_MAX_FORCE_N)
    if isinstance(max_force, bool) or not isinstance(max_force, (int, float)) or not (max_force > 0 and math.isfinite(max_force)):
        raise SceneError(path + ("max_force_n",), f"max_force_n must be a force > 0 N, got {max_force!r}")
    arm_items = spec.get("arm")
    if isinstance(arm_items, Mapping):
        arm_items = [arm_items]
    if arm_items is not None and not isinstance(arm_items, list):
        raise SceneError(path + ("arm",), f"arm must be a list of {{arm_name, palm_link, gripper_link}}, got {arm_items!r}")
    arm_items = list(arm_items or [])
    # The criterion's parser validates the plugin keys; arms get placeholders for defaulted fields
    # (the robot's own links, known once the scene's robots are: check_grasp_fix).
    palm0, fingers0 = "\0palm", ("\0finger0", "\0finger1")
    filled = []
    robots: list[Optional[str]] = []
    for i, a in enumerate(arm_items):
        if not isinstance(a, Mapping):
            raise SceneError(path + ("arm", i), f"arm[{i}] must be a mapping with arm_name, palm_link, gripper_link")
        a = dict(a)
        robot = a.pop("robot", None)
        if robot is not None and (not isinstance(robot, str) or not robot):
            raise SceneError(path + ("arm", i, "robot"), f"robot must be a robot name, got {robot!r}")
        robots.append(robot)
        a.setdefault("arm_name", robot or f"\0arm{i}")
        a.setdefault("palm_link", palm0)
        a.setdefault("gripper_link", list(fingers0))
        filled.append(a)
    spec_for_check = dict(spec, arm=filled or [{"arm_name": "\0default", "palm_link": palm0, "gripper_link": list(fingers0)}])
    try:
        params, arms = grasp_fix_config_from_mapping(spec_for_check)
    except GraspFixConfigError as e:
        names = [str(f["arm_name"]) for f in filled]
        raise SceneError(_error_path(e.key, path, names), e.message.replace("\0", "")) from None
    out_arms = []
    for i, a in enumerate(arm_items):
        gl = a.get("gripper_link")
        out_arms.append(ArmSpec(
            arm_name=a.get("arm_name"), robot=robots[i], palm_link=a.get("palm_link"),
            gripper_link=None if gl is None else ((gl,) if isinstance(gl, str) else tuple(gl)), path=path + ("arm", i)))
    return GraspFixSpec(params=params, arms=tuple(out_arms), auto=auto, max_force_n=float(max_force), raw=dict(value))


def check_grasp_fix(spec: GraspFixSpec, scene: SceneSpec) -> None:
    """Each arm belongs to a robot of the scene and names links of that robot's URDF.

    Raises:
        SceneError: at the arm's path: no such robot (closest name suggested), or an unknown
            ``palm_link`` / ``gripper_link`` (the robot's closest link names suggested).
    """
    from ...control.grip_criterion import GraspFixArm, GraspFixConfigError, validate_links

    robots = {r.name: r for r in scene.robots}
    for a in spec.arms:
        robot = _arm_robot(a, list(robots))
        d = robots[robot].description
        if d is None or (a.palm_link is None and a.gripper_link is None):
            continue
        palm, fingers = _default_links(d)
        cfg = GraspFixArm(a.arm_name or robot, a.palm_link or palm, a.gripper_link or fingers)
        try:
            validate_links(cfg, model_link_names(d))
        except GraspFixConfigError as e:
            raise SceneError(a.path + (e.key.rsplit(".", 1)[-1],), f"{e.message} ({d.name})") from None


register_section(
    "grasp_fix", parse_grasp_fix,
    "GraspFix (gazebo_grasp_fix plugin keys: `arm`, `forces_angle_tolerance`, `update_rate`, `grip_count_threshold`, "
    "`max_grip_count`, `release_tolerance`, `disable_collisions_on_attach`; plus `auto`, `max_force_n`): weld "
    "gripped objects to the palm (see `py_trees_manipulation.sim.grasp_fix`)", check=check_grasp_fix)
