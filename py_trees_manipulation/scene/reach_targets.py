"""The reach targets of a task, from its scene: door levers along their arcs, drawer bars along their
pull lines, the target object's grasps.

A :class:`ReachRequest` says what a task must reach (the ``CheckReachability`` behaviour's
parameters; ``base_pose: auto`` collects them from the tree): a door, a cabinet, an object, with the
door's arc and lever turn, the drawer's pull and the approach stand-off. :func:`targets_for` turns
it into :class:`~py_trees_manipulation.collision.reachability.ReachTarget` s from the parsed scene:

- **a door** (``scene.doors``): one path, the way ``examples/open_door.yaml`` moves the hand: the
  pregrasp (``pregrasp_m`` in front of the lever, along the approach), the grasp, the lever turned
  ``twist_angle_deg`` (every 5 deg), the lever held turned along the whole opening arc to
  ``open_angle_deg`` (every 5 deg, and at least every 4 cm of arc), the lever turned back at the end
  of the arc, the retreat ``pregrasp_m`` back along the tool axis. At each sample the door's hinge
  and lever joints are where the task has put them (the leaf swings in the collision world), the
  hand may touch the door at the grasp and while it holds the lever (``held``: a compliant motion),
  and the retreat backs off from that contact; the arc runs in the door's own opening direction
  (``opening: pull`` toward its front, ``push`` away).
- **a drawer** (``scene.cabinets``): the pregrasp, the grasp on the bar, the bar pulled out along
  the drawer's axis to ``pull_m`` (every 4 cm; default the drawer's whole travel), the retreat.
- **an object**: one alternative per grasp of its grasp set
  (:func:`~py_trees_manipulation.geometry.grasps.grasps_for_object`), each the pregrasp (the grasp's
  own approach stand-off, or ``pregrasp_m``) and the grasp; any one reachable suffices.

A request naming nothing asks for everything the scene has: every door, every cabinet and the task's
target object (``scene.task.target_object``).

Units: metres and degrees as the parameter names say; poses (4, 4), world frame.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

import numpy as np

from ..geometry.poses import Pose

__all__ = ["ReachSample", "ReachTarget", "ReachRequest", "targets_for", "door_target", "drawer_target", "grasp_target",
           "request_from_params", "DEFAULT_OPEN_ANGLE_DEG", "DEFAULT_TWIST_ANGLE_DEG", "DEFAULT_PREGRASP_M"]


@dataclass(frozen=True)
class ReachSample:
    """One TCP pose a target needs.

    Attributes:
        label: what it is, for messages (``"the door handle at 40 deg of its 60 deg arc"``).
        pose: (4, 4) TCP pose, world frame.
        joints: ``((body, joint name, position rad or m), ...)``: articulated bodies set before the
            check (a door's hinge and lever at this moment of the task).
        touch: bodies the hand may touch here (the handle or object it holds).
        held: the hand holds the handle here (the motion to it is compliant: the follow_screw
            impedance), so the arm keeps the held clearance (``held_padding_m``) instead of the
            planning padding.
        from_contact: a straight line away from a contact (backing off a handle just let go): as
            the motion planner does, pairs closer than the padding at the sample before may stay
            but not get :data:`~py_trees_manipulation.collision.reachability.START_RELAX_M` closer; every step of the line is checked.
        probe: a margin beyond the task's own motion (a base search checks the arc a little further):
            probes are followed from the sample before them, and the path goes on from there, as
            the task does, after the last probe.
    """

    label: str
    pose: Pose
    joints: tuple = ()
    touch: tuple = ()
    held: bool = False
    from_contact: bool = False
    probe: bool = False


@dataclass(frozen=True)
class ReachTarget:
    """Something the task must reach: alternative paths, any one of which suffices.

    Attributes:
        name: for messages (``"the door handle of 'door'"``, ``"a grasp of 'mug'"``).
        paths: alternatives; each a tuple of :class:`ReachSample` reached in order, continuously.
        subject: the scene body the target belongs to (the door, the cabinet, the object).
        kind: ``"door"``, ``"drawer"`` or ``"grasp"``.
        approach_from: the named arm configuration the task approaches the first sample from (the
            motion planner's first IK seed); None: where the arm is.
        any_posture: the task moves the arm to the configuration the check found for the first
            sample (``CheckReachability.posture_key``), so any posture the whole path works from
            will do; else the path must work from the one the motion planner would take.
    """

    name: str
    paths: tuple
    subject: str = ""
    kind: str = ""
    approach_from: Optional[str] = None
    any_posture: bool = False

    def positions(self) -> np.ndarray:
        """Every sample's TCP position, shape (n, 3), metres."""
        return np.array([s.pose[:3, 3] for p in self.paths for s in p]).reshape(-1, 3)


DEFAULT_OPEN_ANGLE_DEG = 60.0
DEFAULT_TWIST_ANGLE_DEG = 45.0
DEFAULT_PREGRASP_M = 0.08
ARC_STEP_DEG = 5.0
ARC_STEP_M = 0.04
PULL_STEP_M = 0.04
#: how much further than asked a base search checks a door arc (degrees) and a drawer pull (metres)
MARGIN_DEG = 5.0
MARGIN_M = 0.03


@dataclass(frozen=True)
class ReachRequest:
    """What a task must reach (see the module docstring).

    Attributes:
        robot: the robot (default: the scene's first).
        door, cabinet, object: scene names (None: not asked; all three None: everything).
        open_angle_deg: the door's opening arc, degrees (its magnitude; the door's ``opening`` gives
            the direction).
        twist_angle_deg: the lever turn held through the arc, degrees (0: no lever turn).
        pull_m: the drawer pull, metres (None: the drawer's travel).
        pregrasp_m: stand-off of the approach before a door or drawer grasp, metres.
        configuration: the named arm configuration the approach starts from (what the motion planner
            seeds its IK with); None: where the arm is when checked (a base search: the initial one).
        any_posture: the task moves the arm to the posture the check found (``posture_key``), so any
            arm posture from which the whole path works will do.
        margin_deg, margin_m: how far beyond the opening and the pull the path is probed (a base
            search's margin).
    """

    robot: Optional[str] = None
    door: Optional[str] = None
    cabinet: Optional[str] = None
    object: Optional[str] = None
    open_angle_deg: float = DEFAULT_OPEN_ANGLE_DEG
    twist_angle_deg: float = DEFAULT_TWIST_ANGLE_DEG
    pull_m: Optional[float] = None
    pregrasp_m: float = DEFAULT_PREGRASP_M
    configuration: Optional[str] = None
    any_posture: bool = False
    margin_deg: float = 0.0
    margin_m: float = 0.0

    @property
    def everything(self) -> bool:
        return self.door is None and self.cabinet is None and self.object is None

    def with_margin(self) -> "ReachRequest":
        """The request a base search places the robot for: the same paths, the arc probed
        :data:`MARGIN_DEG` further and the pull :data:`MARGIN_M` further (within the door's and
        drawer's limits), so that the pose found leaves the executed motion some room."""
        return dataclasses.replace(self, margin_deg=MARGIN_DEG, margin_m=MARGIN_M)


def _rot(axis: np.ndarray, angle: float) -> np.ndarray:
    a = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    K = np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
    return np.eye(3) + math.sin(angle) * K + (1.0 - math.cos(angle)) * (K @ K)


def _about(point: np.ndarray, axis: np.ndarray, angle: float) -> Pose:
    """(4, 4) rotation by ``angle`` rad about the line through ``point`` along ``axis``."""
    T = np.eye(4)
    R = _rot(axis, angle)
    T[:3, :3] = R
    T[:3, 3] = np.asarray(point) - R @ np.asarray(point)
    return T


def _back(T: Pose, d: float) -> Pose:
    out = np.array(T, dtype=float)
    out[:3, 3] -= d * out[:3, 2]
    return out


def _steps(total: float, step: float) -> list[float]:
    """``step, 2 step, ...`` up to ``total`` (included): a fixed grid, so that a longer motion's
    samples include a shorter one's (a base search checks the arc a little further than the task)."""
    n = int(math.floor(abs(total) / step + 1e-9))
    out = [math.copysign(step * k, total) for k in range(1, n + 1)]
    if not out or abs(abs(total) - abs(out[-1])) > 1e-9:
        out.append(total)
    return out


def door_target(spec: Any, open_angle_deg: float = DEFAULT_OPEN_ANGLE_DEG,
                twist_angle_deg: float = DEFAULT_TWIST_ANGLE_DEG, pregrasp_m: float = DEFAULT_PREGRASP_M,
                pose: Optional[Pose] = None, margin_deg: float = 0.0) -> ReachTarget:
    """The lever of a door (a :class:`~.doors.DoorSpec`) along its whole opening (module docstring).

    Args:
        pose: the door's model pose (default: the scene's ``spec.pose``).
        margin_deg: probe the arc this much beyond the opening (then go on from the opening's end).

    Raises:
        ValueError: the door has no handle.
    """
    a = spec.asset
    if a.handle_pivot_in_model is None:
        raise ValueError(f"door {spec.name!r} has no handle to reach")
    M = np.asarray(spec.pose if pose is None else pose, dtype=float)
    P, G = a.handle_pivot_in_model, a.handle_grasp_in_handle_link
    hinge_pt, hinge_ax = a.hinge_point_in_model, a.hinge_axis_in_model
    theta_end = math.radians(min(abs(float(open_angle_deg)), a.max_opening_deg))
    tau_end = math.radians(max(0.0, min(float(twist_angle_deg), a.handle.max_angle_deg)))
    hinge_j, handle_j = a.hinge_joint, a.handle_joint
    name = spec.name
    open_txt = f"{abs(float(open_angle_deg)):g} deg"

    def tcp(theta: float, tau: float) -> Pose:
        Rz = np.eye(4)
        Rz[:3, :3] = _rot(np.array([0.0, 0.0, 1.0]), tau)
        return M @ _about(hinge_pt, hinge_ax, theta) @ P @ Rz @ G

    def joints(theta: float, tau: float) -> tuple:
        return ((name, hinge_j, theta), (name, handle_j, tau))

    what = "the door handle" + (f" of {name!r}" if name != "door" else "")
    grasp = tcp(0.0, 0.0)
    path = [ReachSample(f"the pregrasp {pregrasp_m * 100:.0f} cm in front of {what}", _back(grasp, pregrasp_m),
                        joints(0.0, 0.0)),
            ReachSample(what, grasp, joints(0.0, 0.0), (name,))]
    tw = math.degrees(tau_end)
    for t in _steps(tau_end, math.radians(ARC_STEP_DEG)) if tau_end > 0 else []:
        path.append(ReachSample(f"{what} turned {math.degrees(t):.0f} deg of its {tw:.0f} deg",
                                tcp(0.0, t), joints(0.0, t), (name,), held=True))
    radius = float(np.linalg.norm(np.cross(grasp[:3, 3] - (M @ np.append(hinge_pt, 1.0))[:3],
                                           M[:3, :3] @ hinge_ax)))
    step = min(math.radians(ARC_STEP_DEG), ARC_STEP_M / max(radius, 1e-3))
    for th in _steps(theta_end, step):
        path.append(ReachSample(f"{what} at {math.degrees(th):.0f} deg of its {open_txt} arc",
                                tcp(th, tau_end), joints(th, tau_end), (name,), held=True))
    extra = min(math.radians(abs(margin_deg)), math.radians(a.max_opening_deg) - theta_end)
    for th in _steps(extra, step) if extra > 1e-9 else []:
        path.append(ReachSample(f"{what} {math.degrees(th):.0f} deg beyond its {open_txt} arc (a margin)",
                                tcp(theta_end + th, tau_end), joints(theta_end + th, tau_end), (name,), held=True,
                                probe=True))
    if tau_end > 0:
        for t in _steps(tau_end, math.radians(ARC_STEP_DEG)):
            path.append(ReachSample(f"{what} turned back at the end of its {open_txt} arc",
                                    tcp(theta_end, tau_end - t), joints(theta_end, tau_end - t), (name,), held=True))
    path.append(ReachSample(f"the retreat {pregrasp_m * 100:.0f} cm back from {what} at the end of its arc",
                            _back(tcp(theta_end, 0.0), pregrasp_m), joints(theta_end, 0.0), from_contact=True))
    return ReachTarget(what, (tuple(path),), name, "door")


def drawer_target(spec: Any, pull_m: Optional[float] = None, pregrasp_m: float = DEFAULT_PREGRASP_M,
                  pose: Optional[Pose] = None, margin_m: float = 0.0) -> ReachTarget:
    """The bar of a cabinet's drawer (a :class:`~.doors.CabinetSpec`) along its pull line
    (``margin_m``: probed this much further, within the drawer's travel)."""
    a = spec.asset
    M = np.asarray(spec.pose if pose is None else pose, dtype=float)
    grasp = M @ a.drawer_grasp_in_model
    axis = M[:3, :3] @ a.drawer_axis_in_model
    travel = float(a.drawer_travel_m)
    d_end = min(abs(float(pull_m)), travel) if pull_m is not None else travel
    name, j = spec.name, a.drawer_joint
    what = "the drawer handle" + (f" of {name!r}" if name != "cabinet" else "")
    total = f"{d_end:.2f} m"

    def at(d: float) -> Pose:
        T = grasp.copy()
        T[:3, 3] += d * axis
        return T

    path = [ReachSample(f"the pregrasp {pregrasp_m * 100:.0f} cm in front of {what}", _back(grasp, pregrasp_m),
                        ((name, j, 0.0),)),
            ReachSample(what, grasp, ((name, j, 0.0),), (name,))]
    for d in _steps(d_end, PULL_STEP_M):
        path.append(ReachSample(f"{what} pulled {d:.3f} m of its {total} pull line", at(d), ((name, j, d),), (name,),
                                held=True))
    extra = min(abs(margin_m), travel - d_end)
    for d in _steps(extra, PULL_STEP_M) if extra > 1e-9 else []:
        path.append(ReachSample(f"{what} pulled {d:.3f} m beyond its {total} pull line (a margin)", at(d_end + d),
                                ((name, j, d_end + d),), (name,), held=True, probe=True))
    path.append(ReachSample(f"the retreat {pregrasp_m * 100:.0f} cm back from {what} pulled out",
                            _back(at(d_end), pregrasp_m), ((name, j, d_end),), from_contact=True))
    return ReachTarget(what, (tuple(path),), name, "drawer")


def grasp_target(obj: Any, pose: Pose, pregrasp_m: Optional[float] = None) -> ReachTarget:
    """The grasps of a scene object (an :class:`~.scene.ObjectSpec`) at ``pose`` ((4, 4), world):
    one alternative per grasp, pregrasp then grasp; none when its grasp set is empty."""
    from ..geometry.grasps import grasps_for_object

    paths = []
    for g in grasps_for_object(obj):
        T = g.in_world(pose)
        pre = g.pregrasp_in_world(pose, pregrasp_m)
        paths.append((ReachSample(f"the pregrasp of {g.name}", pre),
                      ReachSample(f"the grasp {g.name}", T, (), (obj.name,))))
    return ReachTarget(f"a grasp of {obj.name!r}", tuple(paths), obj.name, "grasp")


def targets_for(request: ReachRequest, scene: Any, object_pose: Optional[Callable[[str], Pose]] = None,
                body_pose: Optional[Callable[[str], Pose]] = None) -> list[ReachTarget]:
    """The :class:`ReachTarget` s of ``request`` in the parsed ``scene``.

    Args:
        object_pose: ``name -> (4, 4)`` the object's pose now (default: the scene's).
        body_pose: ``name -> (4, 4)`` a door's or cabinet's model pose (default: the scene's).

    Raises:
        KeyError: a name the scene does not have (the message lists what it has).
    """
    extra = getattr(scene, "extra", {}) or {}
    doors = {d.name: d for d in extra.get("doors") or ()}
    cabinets = {c.name: c for c in extra.get("cabinets") or ()}
    objects = {o.name: o for o in scene.objects}
    out: list[ReachTarget] = []

    def pick(table: dict, name: str, what: str) -> Any:
        if name not in table:
            raise KeyError(f"the scene has no {what} {name!r}; it has {sorted(table) or 'none'}")
        return table[name]

    door_names = list(doors) if request.everything else ([request.door] if request.door else [])
    cab_names = list(cabinets) if request.everything else ([request.cabinet] if request.cabinet else [])
    obj_name = request.object
    if request.everything:
        obj_name = getattr(getattr(scene, "task", None), "target_object", None)
    for n in door_names:
        d = pick(doors, n, "door")
        if d.asset.handle_pivot_in_model is None:
            continue
        out.append(door_target(d, request.open_angle_deg, request.twist_angle_deg, request.pregrasp_m,
                               body_pose(n) if body_pose else None, margin_deg=request.margin_deg))
    for n in cab_names:
        c = pick(cabinets, n, "cabinet")
        out.append(drawer_target(c, request.pull_m, request.pregrasp_m, body_pose(n) if body_pose else None,
                                 margin_m=request.margin_m))
    if obj_name:
        o = pick(objects, obj_name, "object")
        out.append(grasp_target(o, object_pose(obj_name) if object_pose else o.pose))
    return [dataclasses.replace(t, approach_from=request.configuration, any_posture=request.any_posture) for t in out]


#: the behaviour whose parameters are reach requests
CHECK_BEHAVIOUR = "CheckReachability"


def request_from_params(params: dict[str, Any]) -> ReachRequest:
    """A :class:`ReachRequest` from ``CheckReachability`` parameter values (units converted)."""
    def num(key: str, default: Any) -> Any:
        v = params.get(key)
        return default if v is None else float(v)

    return ReachRequest(robot=params.get("arm"), door=params.get("door"), cabinet=params.get("cabinet"),
                        object=params.get("object"), open_angle_deg=num("open_angle", DEFAULT_OPEN_ANGLE_DEG),
                        twist_angle_deg=num("twist_angle", DEFAULT_TWIST_ANGLE_DEG), pull_m=num("pull_m", None),
                        pregrasp_m=num("pregrasp_m", DEFAULT_PREGRASP_M), configuration=params.get("configuration"),
                        any_posture=bool(params.get("posture_key")))


def requests_for_robot(requests: Sequence[ReachRequest], robot: str, first_robot: str) -> list[ReachRequest]:
    """The requests addressed to ``robot`` (a request without a robot is the first robot's)."""
    return [r for r in requests if (r.robot or first_robot) == robot]
