"""GraspFix in the PyBullet backend: weld a grasped object to the palm, let go when the fingers open.

The simulator side of :mod:`py_trees_manipulation.control.grip_criterion` (the decision logic of
the Gazebo ``gazebo_grasp_fix`` plugin, ``JenniferBuehler/gazebo-pkgs``). The scene section
``grasp_fix:`` takes the plugin's keys (names, units and code defaults from
``shared/seeds/000_a2b7a01acb136afa.txt`` and ``GazeboGraspFix.cpp``)::

    scene:
      grasp_fix:
        auto: true                      # behave like the plugin for the whole run (default false)
        arm:                            # default: one arm per robot, named after it
          - arm_name: panda             # unique; also the robot it belongs to, unless `robot:` is given
            robot: panda                # optional: the scene robot carrying this arm
            palm_link: panda_hand       # default: the robot description's gripper.palm_link
            gripper_link: [panda_leftfinger, panda_rightfinger]   # default: its finger (pad) links
        forces_angle_tolerance: 120     # deg, minimum angle between two opposing forces, [90, 180)
        update_rate: 5                  # Hz of *simulation* time
        max_grip_count: 10
        grip_count_threshold: 5         # default max_grip_count // 2; attach when count > threshold
        release_tolerance: 0.005        # m a finger must open before the object is released
        disable_collisions_on_attach: false
        max_force_n: 500                # N, force limit of the weld (a finite fixed constraint)

What the extension does on every physics step (after ``stepSimulation``): one
``getContactPoints(bodyA=robot, linkIndexA=finger)`` per gripper link; contacts with the robot
itself, other robots, fixtures and fixed (mass 0) objects are ignored; the force on the object is
the *normal* force only, ``-normalForce * contactNormalOnB`` (friction would tilt the forces of a
heavy object past the angle test, reference §3.3, issues #52 and #67). The points of one finger on
one object are summed into one sample per step; an arm's contacts with the object it already holds
are not sampled (it cannot take it twice, and its release depends on the finger opening alone),
which keeps the hook at about 15-35 us per step (``benchmarks/bench_grasp_fix.py``). The criterion updates at
``update_rate`` in simulation time and returns attach/detach events, which are applied at once:

- **attach**: a ``JOINT_FIXED`` constraint from the palm link to the object's base, at the current
  relative pose computed from *centre-of-mass* frames (PyBullet constraint frames are COM frames,
  bullet3 #3205), so the object does not jump; its force is limited to ``max_force_n``. With
  ``disable_collisions_on_attach`` only the finger/object pairs stop colliding (never the table:
  issue #63).
- **detach**: the object's velocity is read before the constraint goes and written back after it
  (issue #26: a tossed object keeps flying); finger/object collisions come back. In a handover the
  giver's detach is applied before the receiver's attach.

Modes: with ``auto: true`` every arm grasps whatever it grips, as the plugin does. Otherwise an arm
only *attaches* while something asked for it (:meth:`GraspFix.request_attach`, used by the
``GraspFixAttach`` behaviour); releases happen in both modes when the fingers open.

State: ``backend.extensions["grasp_fix"]`` (:class:`GraspFix`) answers :meth:`~GraspFix.held_object`
and :meth:`~GraspFix.holder`; events go to ``backend.emit_event("grasp_fix", "attached box to
panda")`` and to :attr:`GraspFix.history`.

Limits: one object per arm; an object is welded by its base link (a multi-link object is keyed by
its scene name and attached by its base).
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Sequence

import numpy as np
import pybullet as pb

from ..control.grip_criterion import (ContactSample, GraspEvent, GraspFixArm, GraspFixConfigError, GraspFixParams,
                                      GripCriterion, grasp_fix_config_from_mapping, validate_links)
from ..conventions import quat_xyzw_from_wxyz
from ..geometry.poses import pq_from_pose
from ..robots import RobotDescription, stock_description
from ..robots.urdf import parse_urdf
from .backend import register_extension
from .scene import PathT, SceneError, SceneSpec, register_section

__all__ = ["GraspFixSpec", "ArmSpec", "GraspFix", "parse_grasp_fix", "check_grasp_fix", "model_link_names",
           "DEFAULT_MAX_FORCE_N"]

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


# ================================================================================================
# Extension
# ================================================================================================
@dataclass
class _ArmRuntime:
    name: str
    robot_name: str
    body: int
    palm: int
    palm_name: str
    fingers: list[tuple[int, str]]  # (link index, link name)
    constraint: Optional[int] = None
    disabled_pairs: list[tuple[int, int]] = field(default_factory=list)  # (finger link, object body)
    # diagnostics: normal force sums per (object, finger link) in the current window, and the last window's means
    win_force: dict[tuple[str, str], float] = field(default_factory=dict)
    win_steps: dict[tuple[str, str], int] = field(default_factory=dict)
    last_forces: dict[str, dict[str, float]] = field(default_factory=dict)


class GraspFix:
    """The GraspFix extension of one :class:`~.backend.SimBackend` (``backend.extensions["grasp_fix"]``).

    Args:
        backend: the simulator.
        spec: the parsed ``grasp_fix:`` section.

    Raises:
        SceneError: an arm names no robot of the scene, or the robot lacks a link.

    Attributes:
        criterion: the :class:`~py_trees_manipulation.control.grip_criterion.GripCriterion`.
        auto: whether every arm attaches whatever it grips.
        history: every applied event, ``{"time_s", "arm", "object", "attached", "reason"}``.
    """

    def __init__(self, backend: Any, spec: GraspFixSpec):
        self._backend = backend
        self.spec = spec
        self.auto = spec.auto
        self.client = backend.client
        self.history: list[dict[str, Any]] = []
        self._requests: dict[str, Optional[str]] = {}  # arm -> object name or None (any)
        self._listeners: list[Callable[[GraspEvent], None]] = []
        robot_names = list(backend.arms)
        self._arms: dict[str, _ArmRuntime] = {}
        arm_cfgs: list[GraspFixArm] = []
        arm_specs = spec.arms or tuple(ArmSpec(r, r, None, None, ("grasp_fix",)) for r in robot_names)
        for a in arm_specs:
            robot = _arm_robot(a, robot_names)
            loaded = backend.arms[robot].robot
            palm_default, fingers_default = _default_links(loaded.model)
            cfg = GraspFixArm(a.arm_name or robot, a.palm_link or palm_default, a.gripper_link or fingers_default)
            names = list(loaded.link_index)
            try:
                validate_links(cfg, names)
            except GraspFixConfigError as e:
                raise SceneError(a.path + (e.key.rsplit(".", 1)[-1],), e.message) from None
            # The criterion keys links by name; two robots of one model share link names, so with
            # several robots its names are "<robot>/<link>".
            q = (lambda ln, r=robot: f"{r}/{ln}") if len(robot_names) > 1 else (lambda ln: ln)
            arm_cfgs.append(GraspFixArm(cfg.arm_name, q(cfg.palm_link), tuple(q(ln) for ln in cfg.gripper_link)))
            self._arms[cfg.arm_name] = _ArmRuntime(
                cfg.arm_name, robot, loaded.body, loaded.link_index[cfg.palm_link], q(cfg.palm_link),
                [(loaded.link_index[ln], q(ln)) for ln in cfg.gripper_link])
        try:
            self.criterion = GripCriterion(arm_cfgs, spec.params)
        except GraspFixConfigError as e:
            raise SceneError(("grasp_fix", "arm"), e.message) from None
        self._objects: dict[int, str] = {}
        for name, body in backend._objects.items():
            if pb.getDynamicsInfo(body, -1, physicsClientId=self.client)[0] > 0.0:
                self._objects[body] = name
        self._object_ids = {n: b for b, n in self._objects.items()}
        self._finger_list = [(arm, idx, ln) for arm in self._arms.values() for idx, ln in arm.fingers]
        self._robot_bodies = {a.body for a in self._arms.values()}
        self._empty: dict[str, Any] = {}
        self._holding: dict[str, str] = {}  # arm -> held object (mirror of the criterion, for the step hook)
        self._remove_hook = backend.add_step_hook(self._on_step)

    # ---- queries --------------------------------------------------------------------------------
    @property
    def arm_names(self) -> list[str]:
        """The arms, configuration order."""
        return list(self._arms)

    def robot_of(self, arm: str) -> str:
        """Name of the robot (and of its ``arms``/``grippers`` resources) carrying ``arm``."""
        return self._arm(arm).robot_name

    def held_object(self, arm: str) -> Optional[str]:
        """Name of the object welded to ``arm``, or None. Raises KeyError for an unknown arm."""
        return self.criterion.held_object(arm)  # type: ignore[return-value]

    def holder(self, obj: str) -> Optional[str]:
        """The arm holding object ``obj``, or None."""
        return self.criterion.holder(obj)

    @property
    def attached(self) -> dict[str, str]:
        """``{object: arm}`` of every held object."""
        return dict(self.criterion.attached)  # type: ignore[arg-type]

    def finger_forces(self, arm: str, obj: str) -> dict[str, float]:
        """Mean normal force (N) of each finger link of ``arm`` on ``obj`` over the last update window
        (0.0 for a finger without contact): the diagnostics of a grasp that does not attach."""
        rt = self._arm(arm)
        last = rt.last_forces.get(obj, {})
        return {ln.rsplit("/", 1)[-1]: float(last.get(ln, 0.0)) for _, ln in rt.fingers}

    def grip_count(self, arm: str, obj: str) -> int:
        """The criterion's grip counter of ``(obj, arm)``."""
        return self.criterion.grip_count(obj, arm)

    def constraint_id(self, arm: str) -> Optional[int]:
        """PyBullet id of the weld of ``arm``, or None."""
        return self._arm(arm).constraint

    def _arm(self, arm: str) -> _ArmRuntime:
        try:
            return self._arms[arm]
        except KeyError:
            close = difflib.get_close_matches(str(arm), list(self._arms), n=1)
            raise KeyError(f"unknown GraspFix arm {arm!r}" + (f"; did you mean {close[0]!r}?" if close else f"; arms: {list(self._arms)}")) from None

    # ---- commands -------------------------------------------------------------------------------
    def request_attach(self, arm: str, obj: Optional[str] = None) -> None:
        """Let ``arm`` attach (``obj``, or any object) when the criterion says it grips it.

        Without ``auto`` this is the only way an arm attaches; with ``auto`` it only restricts
        nothing (every arm may attach anything). Raises KeyError for an unknown arm or object.
        """
        self._arm(arm)
        if obj is not None and obj not in self._object_ids:
            close = difflib.get_close_matches(obj, list(self._object_ids), n=1)
            raise KeyError(f"no movable object named {obj!r}" + (f"; did you mean {close[0]!r}?" if close else f"; objects: {list(self._object_ids)}"))
        self._requests[arm] = obj

    def cancel_attach(self, arm: str) -> None:
        """Withdraw :meth:`request_attach` (a held object stays held)."""
        self._requests.pop(arm, None)

    def attach_requested(self, arm: str) -> bool:
        """Whether :meth:`request_attach` is pending for ``arm`` (not withdrawn by :meth:`cancel_attach`)."""
        return arm in self._requests

    def detach(self, arm: str) -> Optional[GraspEvent]:
        """Drop what ``arm`` holds now (keeping the object's velocity); None if it holds nothing."""
        ev = self.criterion.detach(arm, self._backend.now())
        if ev is not None:
            self._apply(ev)
        return ev

    def reset(self) -> None:
        """Drop every weld and forget all counters (after a world reset)."""
        for arm in list(self._arms):
            self.detach(arm)
        self.criterion.reset()
        for rt in self._arms.values():
            rt.win_force.clear()
            rt.win_steps.clear()
            rt.last_forces.clear()

    def add_listener(self, fn: Callable[[GraspEvent], None]) -> Callable[[], None]:
        """Call ``fn(event)`` after each applied attach/detach; returns a function removing it."""
        self._listeners.append(fn)
        return lambda: self._listeners.remove(fn) if fn in self._listeners else None

    # ---- per physics step -------------------------------------------------------------------------
    def _on_step(self, backend: Any) -> None:
        c = self.client
        samples: list[ContactSample] = []
        touched_links: dict[str, tuple[int, int]] = {}
        touched_objs: dict[str, int] = {}
        objects = self._objects
        robots = self._robot_bodies
        auto = self.auto
        requests = self._requests
        get_contacts = pb.getContactPoints
        holding = self._holding
        for rt, idx, ln in self._finger_list:
            if not auto:
                if rt.name not in requests and rt.name not in holding:
                    continue
                want = requests.get(rt.name)
            else:
                want = None
            pts = get_contacts(bodyA=rt.body, linkIndexA=idx, physicsClientId=c)
            if not pts:
                continue
            held = holding.get(rt.name)
            # One sample per (object, finger) and step: the summed force and the mean point, which
            # is what the criterion makes of the points anyway, at a fraction of the cost.
            agg: dict[str, list[float]] = {}
            for pt in pts:
                b = pt[2]
                if b in robots:
                    continue
                name = objects.get(b)
                # The held object's own contacts are not needed (the arm cannot take it twice and
                # its release depends on the finger opening only); other objects' still count.
                if name is None or name == held or (want is not None and name != want):
                    continue
                fn = pt[9]
                n = pt[7]
                q = pt[6]
                acc = agg.get(name)
                if acc is None:
                    agg[name] = [-fn * n[0], -fn * n[1], -fn * n[2], q[0], q[1], q[2], 1.0, fn, b]
                else:
                    acc[0] -= fn * n[0]
                    acc[1] -= fn * n[1]
                    acc[2] -= fn * n[2]
                    acc[3] += q[0]
                    acc[4] += q[1]
                    acc[5] += q[2]
                    acc[6] += 1.0
                    acc[7] += fn
            if not agg:
                continue
            touched_links[ln] = (rt.body, idx)
            for name, acc in agg.items():
                k = acc[6]
                samples.append(ContactSample(ln, name, (acc[0], acc[1], acc[2]), (acc[3] / k, acc[4] / k, acc[5] / k)))
                touched_objs[name] = int(acc[8])
                key = (name, ln)
                rt.win_force[key] = rt.win_force.get(key, 0.0) + acc[7]
                rt.win_steps[key] = rt.win_steps.get(key, 0) + 1
        crit = self.criterion
        now = backend.now()
        due = crit.due(now)
        if not samples and not due:
            crit.step(now, (), self._empty, self._empty)
            return
        if due:
            link_poses = self._all_link_poses()
            object_poses = {name: self._object_pose(b) for b, name in objects.items()}
            self._close_windows()
        else:
            link_poses = {ln: self._link_pose(body, idx) for ln, (body, idx) in touched_links.items()}
            object_poses = {name: self._object_pose(b) for name, b in touched_objs.items()}
        for ev in crit.step(now, samples, link_poses, object_poses):
            self._apply(ev)

    def _close_windows(self) -> None:
        for rt in self._arms.values():
            last: dict[str, dict[str, float]] = {}
            for (obj, ln), f in rt.win_force.items():
                last.setdefault(obj, {})[ln] = f / max(1, rt.win_steps.get((obj, ln), 1))
            # keep the previous figures for objects not touched in this window at 0 N
            for obj in rt.last_forces:
                last.setdefault(obj, {})
            rt.last_forces = last
            rt.win_force = {}
            rt.win_steps = {}

    def _link_pose(self, body: int, idx: int) -> np.ndarray:
        st = pb.getLinkState(body, idx, physicsClientId=self.client)
        return _pose(st[0], st[1], self.client)

    def _object_pose(self, body: int) -> np.ndarray:
        p, q = pb.getBasePositionAndOrientation(body, physicsClientId=self.client)
        return _pose(p, q, self.client)

    def _all_link_poses(self) -> dict[str, np.ndarray]:
        out = {}
        for rt in self._arms.values():
            out[rt.palm_name] = self._link_pose(rt.body, rt.palm)
            for idx, ln in rt.fingers:
                out[ln] = self._link_pose(rt.body, idx)
        return out

    # ---- applying events ------------------------------------------------------------------------
    def _apply(self, ev: GraspEvent) -> None:
        rt = self._arms[ev.arm]
        c = self.client
        body = self._object_ids[str(ev.object)]
        if ev.attached:
            t, q = pq_from_pose(ev.object2palm)
            cid = pb.createConstraint(rt.body, rt.palm, body, -1, pb.JOINT_FIXED, [0, 0, 0],
                                      parentFramePosition=[float(v) for v in t],
                                      childFramePosition=[0, 0, 0],
                                      parentFrameOrientation=quat_xyzw_from_wxyz(q),
                                      childFrameOrientation=[0, 0, 0, 1], physicsClientId=c)
            pb.changeConstraint(cid, maxForce=self.spec.max_force_n, physicsClientId=c)
            rt.constraint = cid
            self._holding[ev.arm] = str(ev.object)
            if self.spec.params.disable_collisions_on_attach:
                for idx, _ in rt.fingers:
                    pb.setCollisionFilterPair(rt.body, body, idx, -1, 0, physicsClientId=c)
                    rt.disabled_pairs.append((idx, body))
            text = f"attached {ev.object} to {ev.arm}"
        else:
            lin, ang = pb.getBaseVelocity(body, physicsClientId=c)
            if rt.constraint is not None:
                pb.removeConstraint(rt.constraint, physicsClientId=c)
                rt.constraint = None
            for idx, b in rt.disabled_pairs:
                pb.setCollisionFilterPair(rt.body, b, idx, -1, 1, physicsClientId=c)
            rt.disabled_pairs.clear()
            self._holding.pop(ev.arm, None)
            pb.resetBaseVelocity(body, lin, ang, physicsClientId=c)
            why = {"fingers_opened": f"fingers opened {ev.opening_m * 1000:.1f} mm", "handover": "handover",
                   "manual": "commanded"}.get(ev.reason, ev.reason)
            text = f"detached {ev.object} from {ev.arm} ({why})"
        self._backend.emit_event("grasp_fix", text)
        self.history.append({"time_s": round(float(ev.time_s), 6), "arm": ev.arm, "object": str(ev.object),
                             "attached": bool(ev.attached), "reason": ev.reason})
        for fn in list(self._listeners):
            fn(ev)

    # ---- extension protocol ---------------------------------------------------------------------
    def metrics(self) -> dict[str, Any]:
        """``grasp_fix_attaches``, ``grasp_fix_detaches`` (counts over the run)."""
        n_att = sum(1 for h in self.history if h["attached"])
        return {"grasp_fix_attaches": n_att, "grasp_fix_detaches": len(self.history) - n_att}

    def telemetry(self) -> dict[str, dict[str, Any]]:
        """``"grasp_fix/<arm>"``: ``held`` (object name or None)."""
        out = {}
        for arm in self._arms:
            held = self.held_object(arm)
            out[f"grasp_fix/{arm}"] = {"held": held}
        return out

    def close(self) -> None:
        self._remove_hook()


def _pose(p: Sequence[float], q_xyzw: Sequence[float], client: int) -> np.ndarray:
    """(4, 4) pose from a PyBullet position and (x, y, z, w) quaternion (``getMatrixFromQuaternion``
    and one array construction: this runs at 1 kHz while fingers touch an object)."""
    m = pb.getMatrixFromQuaternion(q_xyzw, physicsClientId=client)
    return np.array(((m[0], m[1], m[2], p[0]), (m[3], m[4], m[5], p[1]), (m[6], m[7], m[8], p[2]),
                     (0.0, 0.0, 0.0, 1.0)))


def _factory(backend: Any, spec: GraspFixSpec) -> GraspFix:
    return GraspFix(backend, spec)


register_extension("grasp_fix", _factory, section="grasp_fix")
