"""The grasp state: what each gripper holds, sensed from the simulator's contacts
(:func:`sense_grasps`) or from what a real robot measures (:func:`sense_grasps_from_poses`), or read
from the blackboard; the base of the regrasp behaviours (:class:`_RegraspBase`: the description, the
current grasp state, the metrics) and the condition ``GraspStateIs``.

Units: metres, degrees in parameters and texts. Poses: (4, 4) homogeneous transforms, world frame.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar, Mapping, Optional

import numpy as np
import py_trees
from py_trees.common import Access, Status

from ..geometry.poses import Pose, invert, rotation_angle
from ..planning.regrasp import RegraspPlanner
from .base import ManipulationBehaviour
from .params import REQUIRED, BlackboardRef, Param
from .regrasp_config import RegraspConfig, _config_at_load, _config_of, _goal_of, _goal_text, _names, _resolve

__all__ = ["SensedGrasp", "sense_grasps", "sense_grasps_from_poses", "sense_grasp_state", "GraspStateIs",
           "METRICS_NS"]

#: blackboard namespace whose keys the runner merges into ``summary["metrics"]``
METRICS_NS = "/metrics"


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
        cfg = _config_at_load(params, blackboard, scene)
        if cfg is None:
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
