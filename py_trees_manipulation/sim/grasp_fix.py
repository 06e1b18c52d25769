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

from ..bullet import _quiet_import  # noqa: F401  (first: pybullet's import banner)

import difflib
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

import numpy as np
import pybullet as pb

from ..control.grip_criterion import ContactSample, GraspEvent, GraspFixArm, GraspFixConfigError, GripCriterion, validate_links
from ..conventions import quat_xyzw_from_wxyz
from ..geometry.poses import pq_from_pose
from .extensions import register_extension
from ..scene.spec import SceneError
from ..scene.sections.grasp_fix import (DEFAULT_MAX_FORCE_N, ArmSpec, GraspFixSpec, _arm_robot, _default_links,  # noqa: F401
                                 check_grasp_fix, model_link_names, parse_grasp_fix)

__all__ = ["GraspFixSpec", "ArmSpec", "GraspFix", "parse_grasp_fix", "check_grasp_fix", "model_link_names",
           "DEFAULT_MAX_FORCE_N"]


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

    def reset_run(self) -> None:
        """As built for the backend's new run (:meth:`SimBackend.reset`, after the objects were
        loaded again: their welds and collision filters went with the old bodies)."""
        self._remove_hook()
        self.__init__(self._backend, self.spec)  # type: ignore[misc]

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
