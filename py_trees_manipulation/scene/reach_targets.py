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
  own approach stand-off, or ``pregrasp_m``) and the grasp; any one reachable suffices. With a place
  (``place_position``) each alternative is the whole pick and place with that grasp: the lift with
  the object attached to the hand, above the place, lowered onto it, released, the retreat.

A request naming nothing asks for everything the scene has: every door, every cabinet and the task's
target object (``scene.task.target_object``), put down at the task's ``place_position`` when the
scene gives one (so ``base_pose: auto`` places the robot for the whole pick and place).

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
           "request_from_params", "travel_refusal", "travel_bound", "DEFAULT_OPEN_ANGLE_DEG", "DEFAULT_TWIST_ANGLE_DEG", "DEFAULT_PREGRASP_M"]


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
            but not get :data:`~py_trees_manipulation.collision.reach_checker.START_RELAX_M` closer; every step of the line is checked.
        probe: a margin beyond the task's own motion (a base search checks the arc a little further):
            probes are followed from the sample before them, and the path goes on from there, as
            the task does, after the last probe.
        objects: ``((name, (4, 4) world pose), ...)``: movable objects put there before the check
            (an object where it is picked, then where it was put down).
        carried: ``(name, (4, 4) object pose in the TCP frame)``: the object the hand holds here,
            attached to it and checked with the arm (it may touch ``touch`` bodies: the support it
            is lifted off or put down on); None: the hand holds nothing.
        free: reached by a free motion the motion planner plans when it starts (MoveToPose): only
            this sample's own configuration is checked (IK from the one before first), not a line.
        speed_mps: reached by a MoveCartesian line at this TCP speed (m/s): followed by the motion's
            own computation (:meth:`~py_trees_manipulation.collision.arm_planner.ArmMotionPlanner._line_ik`:
            the same IK waypoints from the same configuration), each waypoint collision-checked; None:
            followed in the checker's own steps.
    """

    label: str
    pose: Pose
    joints: tuple = ()
    touch: tuple = ()
    held: bool = False
    from_contact: bool = False
    probe: bool = False
    objects: tuple = ()
    carried: Optional[tuple] = None
    free: bool = False
    speed_mps: Optional[float] = None


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
DEFAULT_LIFT_M = 0.12        # examples/pick_and_place.yaml's lift and retreat
LIFT_SPEED_MPS = 0.1         # its lift and retreat speed
LOWER_SPEED_MPS = 0.05       # its guarded descent's speed
RETREAT_SPEED_MPS = 0.05     # examples/open_door.yaml's and open_drawer.yaml's retreat from the handle
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
        untwist_angle_deg: the lever turned back before letting go, degrees (None: all of it).
        pull_m: the drawer pull, metres (None: the drawer's travel).
        pregrasp_m: stand-off of the approach before a door or drawer grasp, metres.
        configuration: the named arm configuration the approach starts from (what the motion planner
            seeds its IK with); None: where the arm is when checked (a base search: the initial one).
        any_posture: the task moves the arm to the posture the check found (``posture_key``), so any
            arm posture from which the whole path works will do.
        place_position: where the object's frame is put down, world (x, y, z) metres (its orientation
            kept): the object's grasps are checked through the whole pick and place; None: the pick.
        margin_deg, margin_m: how far beyond the opening and the pull the path is probed (a base
            search's margin).
    """

    robot: Optional[str] = None
    door: Optional[str] = None
    cabinet: Optional[str] = None
    object: Optional[str] = None
    open_angle_deg: float = DEFAULT_OPEN_ANGLE_DEG
    twist_angle_deg: float = DEFAULT_TWIST_ANGLE_DEG
    untwist_angle_deg: Optional[float] = None
    pull_m: Optional[float] = None
    pregrasp_m: float = DEFAULT_PREGRASP_M
    configuration: Optional[str] = None
    any_posture: bool = False
    place_position: Optional[tuple] = None
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
                pose: Optional[Pose] = None, margin_deg: float = 0.0,
                untwist_angle_deg: Optional[float] = None) -> ReachTarget:
    """The lever of a door (a :class:`~.doors.DoorSpec`) along its whole opening (module docstring).

    Args:
        pose: the door's model pose (default: the scene's ``spec.pose``).
        margin_deg: probe the arc this much beyond the opening (then go on from the opening's end).
        untwist_angle_deg: how far the lever is turned back before the hand lets go, degrees
            (default: the whole ``twist_angle_deg``); the retreat starts from that lever angle, as
            the task's own ``TwistHandle`` leaves it.

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
    back = tau_end if untwist_angle_deg is None else min(tau_end, math.radians(max(0.0, float(untwist_angle_deg))))
    tau_rest = tau_end - back
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
    if back > 1e-9:
        for t in _steps(back, math.radians(ARC_STEP_DEG)):
            path.append(ReachSample(f"{what} turned back at the end of its {open_txt} arc",
                                    tcp(theta_end, tau_end - t), joints(theta_end, tau_end - t), (name,), held=True))
    path.append(ReachSample(f"the retreat {pregrasp_m * 100:.0f} cm back from {what} at the end of its arc",
                            _back(tcp(theta_end, tau_rest), pregrasp_m), joints(theta_end, tau_rest), from_contact=True,
                            speed_mps=RETREAT_SPEED_MPS))
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
                            _back(at(d_end), pregrasp_m), ((name, j, d_end),), from_contact=True,
                            speed_mps=RETREAT_SPEED_MPS))
    return ReachTarget(what, (tuple(path),), name, "drawer")


def grasp_target(obj: Any, pose: Pose, pregrasp_m: Optional[float] = None, place: Optional[Pose] = None,
                 supports: Sequence[str] = (), lift_m: float = DEFAULT_LIFT_M,
                 grasps: Optional[Sequence[Any]] = None) -> ReachTarget:
    """The grasps of a scene object (an :class:`~.scene.ObjectSpec`) at ``pose`` ((4, 4), world):
    one alternative per grasp, pregrasp then grasp; none when its grasp set is empty.

    With ``place`` ((4, 4), world: the object's pose where it is put down) each alternative is the
    whole pick and place with that one grasp, as ``examples/pick_and_place.yaml`` moves: pregrasp,
    grasp, the lift ``lift_m`` straight up with the object held (attached to the hand, the
    ``supports`` bodies it may touch leaving them), above the place (a free motion: its configuration
    only), lowered straight onto it, released (the object left there) and the retreat ``lift_m``
    straight up. ``grasps``: only these (:class:`~py_trees_manipulation.geometry.grasps.Grasp` s: the
    ones a ``ChooseGrasp`` would consider); default: the object's whole grasp set."""
    from ..geometry.grasps import grasps_for_object

    paths = []
    name = obj.name
    for g in (grasps_for_object(obj) if grasps is None else grasps):
        T = g.in_world(pose)
        pre = g.pregrasp_in_world(pose, pregrasp_m)
        path = [ReachSample(f"the pregrasp of {g.name}", pre, objects=((name, pose),)),
                ReachSample(f"the grasp {g.name}", T, (), (name,), objects=((name, pose),))]
        if place is not None:
            held = (name, np.linalg.solve(T, pose))
            up = np.eye(4)
            up[2, 3] = lift_m
            T_place = place @ np.linalg.solve(pose, T)
            touch = tuple(supports)
            path += [ReachSample(f"the lift {lift_m:.2f} m with {g.name}", up @ T, (), touch, carried=held,
                                 from_contact=True, speed_mps=LIFT_SPEED_MPS),
                     ReachSample(f"above the place {_xyz(place)} with {g.name}", up @ T_place, carried=held,
                                 free=True),
                     ReachSample(f"the place {_xyz(place)} with {g.name}", T_place, (), touch, carried=held,
                                 speed_mps=LOWER_SPEED_MPS),
                     ReachSample(f"the retreat {lift_m:.2f} m up from the place {_xyz(place)}", up @ T_place,
                                 objects=((name, place),), from_contact=True, speed_mps=LIFT_SPEED_MPS)]
        paths.append(tuple(path))
    what = f"a grasp of {name!r}" + (f" that also puts it down at {_xyz(place)}" if place is not None else "")
    return ReachTarget(what, tuple(paths), name, "grasp")


def _xyz(T: Pose) -> str:
    return "(" + ", ".join(f"{v:.2f}" for v in T[:3, 3]) + ")"


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
                               body_pose(n) if body_pose else None, margin_deg=request.margin_deg,
                               untwist_angle_deg=request.untwist_angle_deg))
    for n in cab_names:
        c = pick(cabinets, n, "cabinet")
        out.append(drawer_target(c, request.pull_m, request.pregrasp_m, body_pose(n) if body_pose else None,
                                 margin_m=request.margin_m))
    if obj_name:
        o = pick(objects, obj_name, "object")
        now = np.asarray(object_pose(obj_name) if object_pose else o.pose, dtype=float)
        place = None
        where = request.place_position
        if where is None and request.everything:
            where = getattr(getattr(scene, "task", None), "place_position", None)   # the task's own place
        if where is not None:
            place = now.copy()
            place[:3, 3] = np.asarray(where, dtype=float)
        supports = [f.name for f in getattr(scene, "fixtures", ())]
        out.append(grasp_target(o, now, place=place, supports=supports))
    return [dataclasses.replace(t, approach_from=request.configuration, any_posture=request.any_posture) for t in out]


def _mechanisms(request: ReachRequest, scene: Any) -> tuple[list, list]:
    extra = getattr(scene, "extra", {}) or {}
    doors = {d.name: d for d in extra.get("doors") or ()}
    cabinets = {c.name: c for c in extra.get("cabinets") or ()}
    door_names = list(doors) if request.everything else ([request.door] if request.door in doors else [])
    cab_names = list(cabinets) if request.everything else ([request.cabinet] if request.cabinet in cabinets else [])
    return [doors[n] for n in door_names], [cabinets[n] for n in cab_names]


def travel_refusal(request: ReachRequest, scene: Any) -> Optional[str]:
    """Why the task asks of a door or drawer what it cannot do, or None: an opening arc
    (``open_angle_deg``) beyond the hinge's upper limit (``max_opening_deg``) or turning the other way
    than the door opens (the sign: + pulls, - pushes, as ``MoveAlongArc``'s angle; ``opening``), a
    pull (``pull_m``) beyond the drawer's travel (``drawer_travel_m``) or pushing a closed drawer in
    (positive). The mechanism decides it, not the arm: the text names the limit or the direction and
    the value that would work."""
    doors, cabinets = _mechanisms(request, scene)
    for d in doors:
        limit = float(d.asset.max_opening_deg)
        if abs(float(request.open_angle_deg)) > limit + 1e-9:
            return (f"the {abs(float(request.open_angle_deg)):g} deg arc is more than door {d.name!r} opens: its hinge "
                    f"stops at {limit:g} deg (max_opening_deg; the mechanism bounds the arc, not the arm): ask "
                    f"|open_angle| <= {limit:g} or a door that opens further")
        angle = float(request.open_angle_deg)
        sign = d.asset.arc_opening_sign
        if angle * sign < 0:
            way = "pulling it toward its front" if sign > 0 else "pushing it away from its front"
            return (f"door {d.name!r} opens by {way} (opening: {d.asset.opening}), and an open_angle of {angle:g} deg "
                    f"turns it the other way, into its frame (MoveAlongArc's sign: + pulls, - pushes): give "
                    f"open_angle {sign * abs(angle):g} (and the same angle to MoveAlongArc)")
    for c in cabinets:
        travel = float(c.asset.drawer_travel_m)
        if request.pull_m is not None and abs(float(request.pull_m)) > travel + 1e-9:
            return (f"the {abs(float(request.pull_m)):.3f} m pull is longer than the drawer of {c.name!r} travels: "
                    f"{travel:.3f} m (drawer_travel_m; the mechanism bounds the pull, not the arm): ask "
                    f"pull_m >= {-travel:.3f} (a pull is negative: out of the cabinet) or a cabinet with a longer "
                    "travel")
        if request.pull_m is not None and float(request.pull_m) > 0:
            return (f"a pull_m of +{float(request.pull_m):.3f} m pushes the drawer of {c.name!r} in, and it starts "
                    f"closed (negative pulls it out, along the handle's z into the front): give pull_m "
                    f"{-float(request.pull_m):.3f} (and the same translation to the pull motion)")
    return None


def travel_bound(result: Any, scene: Any) -> Optional[str]:
    """For a door or drawer target (a :class:`~..collision.reach_results.TargetResult`) whose arc or
    pull stops part-way: how far along it the hand got, against the task's goal and the mechanism's
    own travel, and what bounds it: the arm (out of reach, a joint limit: ``"the arm follows the
    drawer of 'cabinet' 0.120 m of the 0.250 m pull (the drawer travels 0.350 m): the arm bounds the
    pull"``) or the body the arm would hit (``"... : 'pillar' bounds the arc (the arm would hit it)"``).
    None for other targets, a target reached, or a failure before the arc or pull starts (the
    approach, the grasp, the lever's turn) or after it ends (the turn back, the retreat)."""
    t = result.target
    if result.ok or t.kind not in ("door", "drawer") or not t.paths:
        return None
    extra = getattr(scene, "extra", {}) or {}
    table = {x.name: x for x in extra.get("doors" if t.kind == "door" else "cabinets") or ()}
    spec = table.get(t.subject)
    if spec is None:
        return None
    a = spec.asset
    joint = a.hinge_joint if t.kind == "door" else a.drawer_joint
    path = t.paths[result.path]

    def travel(smp: ReachSample) -> float:
        return next((abs(val) for b, j, val in smp.joints if b == spec.name and j == joint), 0.0)

    arc = [i for i, smp in enumerate(path) if smp.held and not smp.probe and travel(smp) > 0.0]
    if not arc or not arc[0] <= result.reached <= arc[-1]:
        return None      # it stopped before the arc or pull, or after it (turning back, the retreat)
    if travel(path[result.reached]) <= travel(path[arc[0] - 1]) + 1e-12 and result.reached != arc[0]:
        return None      # the lever turning back at the end of the arc
    goal = max(travel(path[i]) for i in arc)
    got = max([travel(path[i]) for i in arc if i < result.reached] or [0.0])
    hit = getattr(result.failure, "collision", None)
    if hit is not None and not getattr(hit, "self_collision", False):
        what = hit.link if getattr(result.failure, "blocked", False) else "the arm"
        bound = f"{hit.body!r} bounds the {'arc' if t.kind == 'door' else 'pull'} ({what} would hit it)"
    else:
        bound = f"the arm bounds the {'arc' if t.kind == 'door' else 'pull'}"
    if t.kind == "door":
        limit = float(a.max_opening_deg)
        return (f"the arm follows the lever of door {spec.name!r} to {math.degrees(got):.0f} deg of the "
                f"{math.degrees(goal):.0f} deg arc (the door opens to {limit:g} deg): {bound}")
    return (f"the arm follows the drawer of {spec.name!r} {got:.3f} m of the {goal:.3f} m pull (the drawer "
            f"travels {float(a.drawer_travel_m):.3f} m): {bound}")


#: the behaviour whose parameters are reach requests
CHECK_BEHAVIOUR = "CheckReachability"


def request_from_params(params: dict[str, Any]) -> ReachRequest:
    """A :class:`ReachRequest` from ``CheckReachability`` parameter values (units converted)."""
    def num(key: str, default: Any) -> Any:
        v = params.get(key)
        return default if v is None else float(v)

    return ReachRequest(robot=params.get("arm"), door=params.get("door"), cabinet=params.get("cabinet"),
                        object=params.get("object"), open_angle_deg=num("open_angle", DEFAULT_OPEN_ANGLE_DEG),
                        twist_angle_deg=num("twist_angle", DEFAULT_TWIST_ANGLE_DEG),
                        untwist_angle_deg=(abs(num("untwist_angle", 0.0)) if params.get("untwist_angle") is not None
                                           else None), pull_m=num("pull_m", None),
                        pregrasp_m=num("pregrasp_m", DEFAULT_PREGRASP_M), configuration=params.get("configuration"),
                        any_posture=bool(params.get("posture_key")),
                        place_position=(tuple(float(v) for v in params["place_position"])
                                        if params.get("place_position") is not None else None))


def requests_for_robot(requests: Sequence[ReachRequest], robot: str, first_robot: str) -> list[ReachRequest]:
    """The requests addressed to ``robot`` (a request without a robot is the first robot's)."""
    return [r for r in requests if (r.robot or first_robot) == robot]
