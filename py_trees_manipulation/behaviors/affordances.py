"""Door, drawer and lever-handle affordance behaviours (MoveIt Studio affordance templates).

Behaviours:

- ``DetectDoorAffordance`` / ``DetectDrawerAffordance`` (sim only): the perception stand-in. They
  produce the input poses the way a surface-normal estimator on a point cloud would (MoveIt Studio
  ``GetPoseFromPixelCoords``): z **into** the door surface, optional Gaussian noise, and the two
  hinge poses in either order (``hinge_order``), so the ordering rule of
  ``GetMoveAlongArcSubframes`` is exercised. On hardware the poses come from the blackboard.
- ``GetMoveAlongArcSubframes`` (``calculateMoveAlongArcSubframes``) and
  ``GetGraspAndTwistSubframes`` (``calculateGraspAndTwistSubframes``): the affordance math of
  :mod:`py_trees_manipulation.geometry.affordances` as behaviours; they write a
  :class:`~py_trees_manipulation.geometry.affordances.Subframes` to the blackboard.
- ``MoveAlongArc``: follows the screw of such subframes with the held TCP (a door swing, a drawer
  pull, a helix), with a bounded wrist force and a tracking-error guard, through the arm action
  ``follow_screw`` (:class:`FollowScrewGoal`). ``TwistHandle``: the same about a handle pivot.
- ``DoorAngleAtLeast`` / ``DrawerOpeningAtLeast`` (sim only): ground-truth conditions.

The ``follow_screw`` action (goal, feedback and result messages below) is served by the simulator
(:mod:`py_trees_manipulation.sim.doors`); a hardware backend serves it with its own compliant
controller (e.g. MoveIt Pro's ``ExecuteTrajectoryWithAdmittance``, PickNik's door parameters:
500 N/m, 100 N*m/rad, abort above 30 N).

Sign conventions (see :mod:`py_trees_manipulation.geometry.affordances`): with hinge poses whose z
points into the door, a **positive** arc angle pulls the door toward the viewer; a push door opens
with a negative ``angle``. ``TwistHandle`` turns right-handed about the pivot pose's +z.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Optional

import numpy as np
import transforms3d as t3d
from py_trees.common import Status

from ..geometry.affordances import Subframes, calculate_grasp_and_twist_subframes, calculate_move_along_arc_subframes
from ..geometry.poses import Pose, check_pose
from ..geometry.screw import Screw, screw_from_subframes
from ..msgs.screw_motion import FOLLOW_SCREW_ACTION, FollowScrewFeedback, FollowScrewGoal, FollowScrewResult
from .base import BackendAction, ManipulationBehaviour
from .params import REQUIRED, Param

#: arm action name of the screw follower
def _extension(b: ManipulationBehaviour) -> Any:
    ext = getattr(b.backend, "extensions", {}).get("doors") if b.backend is not None else None
    if ext is None:
        raise KeyError("the backend has no doors/cabinets (scene sections 'doors:' and 'cabinets:')")
    return ext


def perturb_pose(T: Pose, rng: np.random.Generator, position_sigma_m: float, angle_sigma_deg: float) -> Pose:
    """``T`` with Gaussian position noise (per axis, metres) and a rotation about a random axis
    whose angle is Gaussian (degrees), applied in the world frame about the pose's origin."""
    out = np.array(T, dtype=float)
    if position_sigma_m > 0:
        out[:3, 3] += rng.normal(0.0, position_sigma_m, 3)
    if angle_sigma_deg > 0:
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        R = t3d.axangles.axangle2mat(axis, math.radians(rng.normal(0.0, angle_sigma_deg)))
        out[:3, :3] = R @ out[:3, :3]
    return out


def order_hinge_poses(bottom: Pose, top: Pose, order: str, rng: Optional[np.random.Generator] = None) -> tuple[Pose, Pose]:
    """The two hinge poses in the requested order: ``as_is`` (bottom, top), ``reversed`` (top,
    bottom) or ``random`` (either, from ``rng``).

    Raises:
        ValueError: unknown ``order``, or ``random`` without ``rng``.
    """
    if order == "as_is":
        return bottom, top
    if order == "reversed":
        return top, bottom
    if order == "random":
        if rng is None:
            raise ValueError("hinge_order 'random' needs a random generator")
        return (top, bottom) if rng.random() < 0.5 else (bottom, top)
    raise ValueError(f"hinge_order must be 'as_is', 'reversed' or 'random', got {order!r}")


_NOISE_PARAMS = {
    "noise_position_m": Param("float", 0.0, "position noise per axis (standard deviation)", unit="m", min=0.0, max=0.05),
    "noise_angle_deg": Param("float", 0.0, "orientation noise: rotation about a random axis (standard deviation)",
                             unit="deg", min=0.0, max=20.0),
}


class DetectDoorAffordance(ManipulationBehaviour):
    """Perception stand-in for a door: the grasp pose on the lever, the handle pivot and two hinge poses.

    Produces what a surface-normal estimator on a point cloud gives (MoveIt Studio
    ``GetPoseFromPixelCoords``): the two hinge poses on the hinge line at the bottom and top of the
    leaf, with z **into** the door surface, and the handle grasp pose (z into the door, y up, the
    fingers close across the lever bar). The hinge poses come out in the order ``hinge_order``
    (``random`` draws it from the run's seed), so ``GetMoveAlongArcSubframes`` must reorder them.
    Ground truth plus optional Gaussian noise.

    SUCCESS after writing the poses; FAILURE when the backend has no such door.

    Args:
        door: door name in the scene's ``doors:`` (default: the first).
        hinge_order: ``as_is`` (bottom then top), ``reversed`` or ``random``.
        noise_position_m, noise_angle_deg: Gaussian noise on every pose.

    Blackboard (writes, (4, 4) world poses): ``grasp_key`` (default ``door_grasp_pose``),
    ``hinge_first_key`` (``hinge_pose_first``), ``hinge_second_key`` (``hinge_pose_second``),
    ``pivot_key`` (``handle_pivot_pose``: on the lever's axis, z = the axis that turns it toward
    unlatching, x toward the lever tip).

    Example:
        .. code-block:: yaml

            - DetectDoorAffordance: {door: door, hinge_order: random, noise_position_m: 0.002}
    """

    ABSTRACT = False
    SIM_ONLY = True
    PARAMS = {
        "door": Param("str", None, "door name in the scene (default: the first door)", refers_to="door"),
        "hinge_order": Param("choice", "as_is", "order of the two hinge poses written",
                             choices=("as_is", "reversed", "random")),
        **_NOISE_PARAMS,
        "grasp_key": Param("key", "door_grasp_pose", "blackboard key for the handle grasp pose"),
        "hinge_first_key": Param("key", "hinge_pose_first", "blackboard key for the first hinge pose"),
        "hinge_second_key": Param("key", "hinge_pose_second", "blackboard key for the second hinge pose"),
        "pivot_key": Param("key", "handle_pivot_pose", "blackboard key for the handle pivot pose"),
    }

    def setup(self, **kwargs: Any) -> None:
        super().setup(**kwargs)
        self._rng = self.seeded_rng()

    def update(self) -> Status:
        try:
            door = _extension(self).door(self.param("door"))
        except KeyError as e:
            return self.fail(str(e.args[0]))
        sp, sa = self.param("noise_position_m"), self.param("noise_angle_deg")
        bottom, top = (perturb_pose(T, self._rng, sp, sa) for T in door.hinge_poses_in_world())
        first, second = order_hinge_poses(bottom, top, self.param("hinge_order"), self._rng)
        grasp = perturb_pose(door.handle_grasp_in_world(), self._rng, sp, sa)
        pivot = perturb_pose(door.handle_pivot_in_world(), self._rng, sp, sa)
        self.write_output("grasp_key", grasp)
        self.write_output("hinge_first_key", first)
        self.write_output("hinge_second_key", second)
        self.write_output("pivot_key", pivot)
        which = "top first" if first[2, 3] > second[2, 3] else "bottom first"
        self.feedback_message = (f"handle at ({grasp[0, 3]:.3f}, {grasp[1, 3]:.3f}, {grasp[2, 3]:.3f}), "
                                 f"hinge poses {which}")
        return Status.SUCCESS


class DetectDrawerAffordance(ManipulationBehaviour):
    """Perception stand-in for a drawer: the grasp pose on its bar handle, z into the drawer front.

    SUCCESS after writing; FAILURE when the backend has no such cabinet. Feed the pose to
    ``GetGraspAndTwistSubframes`` (``grasp_rotation: 0``): its screw axis is the pose's +z (into
    the front), so ``MoveAlongArc`` with a **negative** ``translation_m`` pulls the drawer out.

    Args:
        cabinet: cabinet name in the scene's ``cabinets:`` (default: the first).
        noise_position_m, noise_angle_deg: Gaussian noise.

    Blackboard: writes ``grasp_key`` (default ``drawer_grasp_pose``), a (4, 4) world pose.

    Example:
        .. code-block:: yaml

            - DetectDrawerAffordance: {cabinet: cabinet}
    """

    ABSTRACT = False
    SIM_ONLY = True
    PARAMS = {
        "cabinet": Param("str", None, "cabinet name in the scene (default: the first cabinet)", refers_to="cabinet"),
        **_NOISE_PARAMS,
        "grasp_key": Param("key", "drawer_grasp_pose", "blackboard key for the drawer grasp pose"),
    }

    def setup(self, **kwargs: Any) -> None:
        super().setup(**kwargs)
        self._rng = self.seeded_rng()

    def update(self) -> Status:
        try:
            drawer = _extension(self).drawer(self.param("cabinet"))
        except KeyError as e:
            return self.fail(str(e.args[0]))
        grasp = perturb_pose(drawer.drawer_grasp_in_world(), self._rng, self.param("noise_position_m"),
                             self.param("noise_angle_deg"))
        self.write_output("grasp_key", grasp)
        self.feedback_message = f"drawer handle at ({grasp[0, 3]:.3f}, {grasp[1, 3]:.3f}, {grasp[2, 3]:.3f})"
        return Status.SUCCESS


# ================================================================================================
# Affordance math
# ================================================================================================
def move_along_arc_failure(hinge_first: Pose, hinge_second: Pose) -> str:
    """The reason ``calculate_move_along_arc_subframes`` returned ``None`` for these hinge poses."""
    z1, z2 = check_pose(hinge_first)[:3, 2], check_pose(hinge_second)[:3, 2]
    dot = float(np.dot(z1, z2))
    return (f"hinge z axes point apart (dot {dot:.2f}): the two hinge poses must both have z into the door "
            "(surface normals from the same side)")


class GetMoveAlongArcSubframes(ManipulationBehaviour):
    """Order a grasp pose and two hinge poses into door-opening subframes (``calculateMoveAlongArcSubframes``).

    MoveIt Studio's ``GetMoveAlongArcSubframes``: whichever order the two hinge poses come in, the
    subframes are ordered (cross/dot rule) so that a positive rotation about
    ``screw_origin -> screw_axis`` pulls the door toward the viewer
    (:func:`~py_trees_manipulation.geometry.affordances.calculate_move_along_arc_subframes`).

    SUCCESS after writing the :class:`~py_trees_manipulation.geometry.affordances.Subframes`;
    FAILURE when the math returns ``None`` (the hinge poses' z axes are not similarly oriented),
    when the grasp lies on the hinge line, or a pose is missing.

    Args:
        grasp_pose: (4, 4) grasp pose, world frame (e.g. ``"{door_grasp_pose}"``).
        hinge_pose_first, hinge_pose_second: (4, 4) poses on the hinge line, z into the door.

    Blackboard: writes ``output_key`` (default ``move_along_arc_subframes``).

    Example:
        .. code-block:: yaml

            - GetMoveAlongArcSubframes:
                grasp_pose: "{door_grasp_pose}"
                hinge_pose_first: "{hinge_pose_first}"
                hinge_pose_second: "{hinge_pose_second}"
    """

    ABSTRACT = False
    PARAMS = {
        "grasp_pose": Param("pose", REQUIRED, "grasp pose on the handle", frame="world"),
        "hinge_pose_first": Param("pose", REQUIRED, "a pose on the hinge line, z into the door", frame="world"),
        "hinge_pose_second": Param("pose", REQUIRED, "another pose on the hinge line, z into the door", frame="world"),
        "output_key": Param("key", "move_along_arc_subframes", "blackboard key for the subframes"),
    }

    def update(self) -> Status:
        try:
            g, a, b = (self.param(k) for k in ("grasp_pose", "hinge_pose_first", "hinge_pose_second"))
            sub = calculate_move_along_arc_subframes(g, a, b)
        except (KeyError, ValueError) as e:
            return self.fail(str(e.args[0]) if isinstance(e, KeyError) else str(e))
        if sub is None:
            return self.fail(move_along_arc_failure(a, b))
        self.write_output("output_key", sub)
        swapped = np.allclose(sub.screw_origin, b)
        self.feedback_message = (f"arc radius {sub.radius_m:.3f} m, hinge poses "
                                 f"{'swapped' if swapped else 'kept in order'}")
        return Status.SUCCESS


class GetGraspAndTwistSubframes(ManipulationBehaviour):
    """Subframes of a twist about a pose's own z axis (``calculateGraspAndTwistSubframes``).

    For a lever handle give the handle **pivot** pose (z = the lever's axis of rotation); for a
    drawer the grasp pose (z into the front: the screw's translation axis).
    :func:`~py_trees_manipulation.geometry.affordances.calculate_grasp_and_twist_subframes`.

    SUCCESS after writing the subframes; FAILURE when the pose is missing or invalid.

    Args:
        target_grasp_pose: (4, 4) pose, world frame.
        grasp_rotation: twist of the end effector relative to the grasp pose, **degrees**
            (documented default 15; MoveIt's port ``grasp_rotation_z_radians`` defaults to 90 deg).

    Blackboard: writes ``output_key`` (default ``grasp_and_twist_subframes``).

    Example:
        .. code-block:: yaml

            - GetGraspAndTwistSubframes: {target_grasp_pose: "{handle_pivot_pose}", grasp_rotation: 0}
    """

    ABSTRACT = False
    PARAMS = {
        "target_grasp_pose": Param("pose", REQUIRED, "grasp (or handle pivot) pose", frame="world"),
        "grasp_rotation": Param("float", 15.0, "twist of the end effector about the pose's z", unit="deg",
                                min=-360.0, max=360.0),
        "output_key": Param("key", "grasp_and_twist_subframes", "blackboard key for the subframes"),
    }

    def update(self) -> Status:
        try:
            sub = calculate_grasp_and_twist_subframes(self.param("target_grasp_pose"), self.param("grasp_rotation"))
        except (KeyError, ValueError) as e:
            return self.fail(str(e.args[0]) if isinstance(e, KeyError) else str(e))
        self.write_output("output_key", sub)
        p = sub.screw_origin[:3, 3]
        self.feedback_message = f"twist axis {np.round(sub.axis, 3).tolist()} through ({p[0]:.3f}, {p[1]:.3f}, {p[2]:.3f})"
        return Status.SUCCESS


# ================================================================================================
# Motion along the screw
# ================================================================================================
def screw_motion(subframes: Subframes, angle_deg: Optional[float], translation_m: float) -> tuple[Screw, float]:
    """The screw and the total motion for ``angle_deg`` of rotation and ``translation_m`` along the axis.

    - rotation only (``translation_m == 0``): pitch 0, ``theta`` = the angle in radians;
    - translation only (``angle_deg`` None or 0): infinite pitch, ``theta`` = ``translation_m``;
    - both: a helix with pitch ``translation_m / angle`` (m/rad), ``theta`` = the angle in radians.

    Raises:
        ValueError: neither an angle nor a translation.
    """
    angle = 0.0 if angle_deg is None else math.radians(float(angle_deg))
    if angle == 0.0 and translation_m == 0.0:
        raise ValueError("give a non-zero angle (deg) or translation_m (m)")
    if angle == 0.0:
        return screw_from_subframes(subframes, math.inf), float(translation_m)
    return screw_from_subframes(subframes, float(translation_m) / angle), angle


def _amount(theta: float, translation: bool) -> str:
    """A screw motion's amount: ``"0.250 m"`` (a translation, m) or ``"62.0 deg"`` (``theta`` rad)."""
    # (+ 0.0 turns a rounded -0.0 into 0.0)
    return f"{round(theta, 3) + 0.0:.3f} m" if translation else f"{round(math.degrees(theta), 1) + 0.0:.1f} deg"


class MoveAlongArc(BackendAction):
    """Move the held TCP along the screw of affordance subframes: swing a door, pull a drawer.

    MoveIt Studio's "move along a screw-parameterised trajectory" stage, executed the way door
    opening is done in practice: the TCP at the start is taken as rigidly held, its path is
    ``exp([S] theta) T0`` about the subframes' axis (the hinge), sent to the arm's ``follow_screw``
    action, which tracks it with bounded joint torques and aborts when the wrist force exceeds
    ``max_force_n`` or the TCP falls behind by ``max_tracking_error_m`` (the door is locked or
    stuck, or the grasp slipped). It never hangs: the action ends, or ``timeout_s`` cancels it.

    RUNNING while moving (feedback: the angle reached, degrees, or the distance, metres); SUCCESS
    at the end of the screw; FAILURE with the reason (force, tracking error with the angle reached,
    unreachable arc).

    Args:
        subframes: :class:`~py_trees_manipulation.geometry.affordances.Subframes`
            (``"{move_along_arc_subframes}"``).
        angle: rotation about the axis, **degrees**; positive pulls toward the viewer (for arc
            subframes), negative pushes.
        translation_m: translation along the axis, metres (a drawer: angle 0; both: a helix).
        angular_speed_dps / speed_mps: cruise speed of the angle (deg/s) or of the translation (m/s).
        max_force_n: wrist force bound, newtons. max_tracking_error_m: metres.
        effort_scale: fraction of the joint torque limits while following (compliance).
        min_fraction: SUCCESS needs at least this fraction of the motion reached.

    Blackboard: reads ``subframes``; writes ``result_key`` (:class:`FollowScrewResult`) and, on
    SUCCESS, ``tcp_pose_key`` (the (4, 4) TCP pose at the end, world frame).

    Example:
        .. code-block:: yaml

            - MoveAlongArc: {subframes: "{move_along_arc_subframes}", angle: 60, max_force_n: 60}
    """

    ABSTRACT = False
    ACTION = FOLLOW_SCREW_ACTION
    PARAMS = {
        "subframes": Param("any", REQUIRED, "affordance subframes, e.g. '{move_along_arc_subframes}'"),
        "angle": Param("float", None, "rotation about the screw axis (sign: direction)", unit="deg", min=-360.0, max=360.0),
        "translation_m": Param("float", 0.0, "translation along the screw axis (sign: direction)", unit="m", min=-2.0, max=2.0),
        "angular_speed_dps": Param("float", 15.0, "cruise speed of the rotation", unit="deg/s", min=0.1, max=180.0),
        "speed_mps": Param("float", 0.05, "cruise speed of a pure translation", unit="m/s", min=0.001, max=0.5),
        "max_force_n": Param("float", 60.0, "abort when the wrist force exceeds this", unit="N", min=1.0),
        "max_tracking_error_m": Param("float", 0.04, "abort when the TCP falls this far behind the screw", unit="m",
                                      min=0.001, max=0.5),
        "effort_scale": Param("float", 0.5, "fraction of the joint torque limits while following", min=0.05, max=1.0),
        "min_fraction": Param("float", 0.9, "fraction of the motion that must be reached for SUCCESS", min=0.0, max=1.0),
        "tcp_pose_key": Param("key", None, "blackboard key for the TCP pose at the end (4x4, world), e.g. to back "
                                           "off along the tool axis with MoveCartesian offset"),
    }

    @classmethod
    def scene_problems(cls, params: dict[str, Any], scene: Any) -> list[tuple[str, str, str]]:
        """Load-time check (``ptm validate``, literal values only): a motion of no angle and no
        translation, which the run would refuse only once the arm holds the handle."""
        angle, move = params.get("angle"), params.get("translation_m", 0.0)
        number = (int, float)
        if isinstance(angle, number) and isinstance(move, number) and angle == 0 and move == 0:
            return [("angle", f"{cls.__name__}.angle: 0 deg and translation_m 0: the motion would not move "
                     "(refused only after the grasp, in the run)", "give a non-zero angle (deg) or translation_m (m), or leave the node out")]
        return []

    def make_goal(self) -> FollowScrewGoal:
        sub = self.param("subframes")
        if not isinstance(sub, Subframes):
            raise ValueError(f"subframes must be Subframes (from GetMoveAlongArcSubframes/GetGraspAndTwistSubframes), "
                             f"got {type(sub).__name__}")
        screw, theta = screw_motion(sub, self.param("angle"), self.param("translation_m"))
        self._translation = screw.is_translation
        self._theta = theta
        speed = self.param("speed_mps") if screw.is_translation else math.radians(self.param("angular_speed_dps"))
        return FollowScrewGoal(screw=screw, theta=theta, speed=speed, max_force_n=self.param("max_force_n"),
                               max_tracking_error_m=self.param("max_tracking_error_m"),
                               effort_scale=self.param("effort_scale"))

    def _fmt(self, theta: float) -> str:
        return _amount(theta, self._translation)

    def on_feedback(self, feedback: Any) -> None:
        if isinstance(feedback, FollowScrewFeedback):
            self.defer_feedback_message(self._describe, feedback)

    def _describe(self, feedback: FollowScrewFeedback) -> str:
        return f"{self._fmt(feedback.theta_reached)} of {self._fmt(self._theta)}, wrist {feedback.wrist_force_n:.1f} N"

    @staticmethod
    def short_text(reached: float, theta: float, min_fraction: float, translation: bool) -> str:
        """Why a screw motion that reached ``reached`` of ``theta`` (rad, or m for a ``translation``)
        fails, "" when it reached at least ``min_fraction`` of it: ``"reached only 70.6 deg of 80.0 deg
        (88.2% < 90%)"``. The run's verdict, and ``ptm validate --plan``'s for a lever turned past its
        stop."""
        frac = reached / theta if theta else 1.0
        if frac >= min_fraction:
            return ""
        return (f"reached only {_amount(reached, translation)} of {_amount(theta, translation)} "
                f"({math.floor(1000 * frac) / 10:g}% < {100 * min_fraction:g}%)")

    def on_success(self, result: Any) -> Status:
        if not isinstance(result, FollowScrewResult):
            return Status.SUCCESS
        self.write_output("tcp_pose_key", np.array(result.tcp_pose, dtype=float))
        short = self.short_text(result.theta_reached, self._theta, self.param("min_fraction"), self._translation)
        if short:
            return self.fail(short)
        self.feedback_message = (f"reached {self._fmt(result.theta_reached)} of {self._fmt(self._theta)}, "
                                 f"max wrist force {result.max_wrist_force_n:.1f} N")
        return Status.SUCCESS

    def on_aborted(self, result: Any, text: str) -> Status:
        return self.fail(f"{type(self).__name__} aborted: {text or 'no reason given'}")


class TwistHandle(MoveAlongArc):
    """Turn a lever handle (or a knob) about its pivot while holding it.

    ``MoveAlongArc`` about the subframes of ``GetGraspAndTwistSubframes`` on the handle pivot
    pose: a positive ``angle`` turns right-handed about the pivot's +z (for the simulator's doors:
    the lever goes down, toward unlatching). Same force and tracking guards; a lever that will not
    turn ends in FAILURE with the reason.

    Example:
        .. code-block:: yaml

            - TwistHandle: {subframes: "{grasp_and_twist_subframes}", angle: 45}
    """

    ABSTRACT = False
    PARAMS = {
        "subframes": Param("any", REQUIRED, "twist subframes about the handle pivot, e.g. '{grasp_and_twist_subframes}'"),
        "angle": Param("float", REQUIRED, "lever turn about the pivot's z", unit="deg", min=-180.0, max=180.0),
        "angular_speed_dps": Param("float", 30.0, "cruise speed of the turn", unit="deg/s", min=0.1, max=180.0),
        "max_tracking_error_m": Param("float", 0.03, "abort when the TCP falls this far behind", unit="m",
                                      min=0.001, max=0.5),
    }


# ================================================================================================
# Ground-truth conditions (simulator)
# ================================================================================================
class _OpeningAtLeast(ManipulationBehaviour):
    """Base of the ground-truth opening conditions (simulator): SUCCESS when a mechanism's opening,
    read by :meth:`opening` and rounded to ``FORMAT`` (as the feedback shows it), is at least the
    parameter ``MIN_PARAM``, else FAILURE naming both.

    SUCCESS or FAILURE on the first tick (never RUNNING); an unknown mechanism name fails with the
    scene's message. Subclasses set ``MECHANISM`` (the word in the feedback), ``MIN_PARAM``,
    ``UNIT`` and ``FORMAT`` (the opening's format spec).
    """

    ABSTRACT = True
    MECHANISM: ClassVar[str]
    MIN_PARAM: ClassVar[str]
    UNIT: ClassVar[str]
    FORMAT: ClassVar[str]

    def opening(self) -> float:
        """The mechanism's opening in ``UNIT``. Raises KeyError (its message first) for an unknown name."""
        raise NotImplementedError

    def update(self) -> Status:
        try:
            value = self.opening()
        except KeyError as e:
            return self.fail(str(e.args[0]))
        number = f"{value:{self.FORMAT}}"
        shown = f"{number} {self.UNIT}"
        minimum = self.param(self.MIN_PARAM)
        # compared at the resolution it is read out in: a drawer at its end stop rests a micrometre
        # short of its travel in the solver (0.199999 m of 0.2), which read "open only 0.200 m (< 0.2 m)"
        if float(number) >= minimum:
            self.feedback_message = f"{self.MECHANISM} open {shown}"
            return Status.SUCCESS
        return self.fail(f"{self.MECHANISM} open only {shown} (< {minimum:g} {self.UNIT})")


class DoorAngleAtLeast(_OpeningAtLeast):
    """Condition: the door's hinge angle is at least ``min_angle_deg`` (ground truth, simulator).

    SUCCESS or FAILURE on the first tick (never RUNNING); the feedback gives the angle in degrees.

    Example:
        .. code-block:: yaml

            - DoorAngleAtLeast: {door: door, min_angle_deg: 55}
    """

    ABSTRACT = False
    SIM_ONLY = True
    PARAMS = {
        "door": Param("str", None, "door name (default: the first door)", refers_to="door"),
        "min_angle_deg": Param("float", REQUIRED, "smallest accepted opening angle", unit="deg", min=0.0, max=180.0),
    }
    MECHANISM, MIN_PARAM, UNIT, FORMAT = "door", "min_angle_deg", "deg", ".1f"

    def opening(self) -> float:
        return _extension(self).door(self.param("door")).door_angle_deg


class DrawerOpeningAtLeast(_OpeningAtLeast):
    """Condition: the drawer is out at least ``min_opening_m`` (ground truth, simulator).

    Example:
        .. code-block:: yaml

            - DrawerOpeningAtLeast: {cabinet: cabinet, min_opening_m: 0.2}
    """

    ABSTRACT = False
    SIM_ONLY = True
    PARAMS = {
        "cabinet": Param("str", None, "cabinet name (default: the first cabinet)", refers_to="cabinet"),
        "min_opening_m": Param("float", REQUIRED, "smallest accepted opening", unit="m", min=0.0, max=2.0),
    }
    MECHANISM, MIN_PARAM, UNIT, FORMAT = "drawer", "min_opening_m", "m", ".3f"

    def opening(self) -> float:
        return _extension(self).drawer(self.param("cabinet")).drawer_opening_m


__all__ = [
    "FOLLOW_SCREW_ACTION", "FollowScrewGoal", "FollowScrewFeedback", "FollowScrewResult",
    "DetectDoorAffordance", "DetectDrawerAffordance", "GetMoveAlongArcSubframes", "GetGraspAndTwistSubframes",
    "MoveAlongArc", "TwistHandle", "DoorAngleAtLeast", "DrawerOpeningAtLeast",
    "order_hinge_poses", "perturb_pose", "screw_motion", "move_along_arc_failure",
]
