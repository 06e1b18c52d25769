"""GraspFix grip criterion: decide from contact forces when an object is held, and when it is let go.

Pure re-implementation (numpy only) of the decision logic of the Gazebo ``gazebo_grasp_fix`` model
plugin (``JenniferBuehler/gazebo-pkgs``, ``GazeboGraspFix.cpp`` at ``d217a4c``). The parameter names,
units and code defaults are the plugin's (:class:`GraspFixParams`, :class:`GraspFixArm`). The
simulator feeds contact points every physics step and applies the returned
:class:`GraspEvent` objects (a fixed constraint on attach, its removal on detach); nothing here
touches a physics engine.

Algorithm (one :class:`GripCriterion` per robot model, several arms):

1. **Accumulate** (every physics step, :meth:`GripCriterion.add_contacts`). For each
   ``(object, gripper link)`` pair in contact during the step, the step's total force on the object
   (sum over the contact points) is rotated into the object frame, and the mean contact position
   and the object origin are expressed in the gripper link frame. The sums and the number of steps
   ``n`` in contact are accumulated until the next update.
2. **Update** (every ``1 / update_rate`` seconds of *simulation* time,
   :meth:`GripCriterion.update`). For each object and each arm, the per-link averages
   ``F_sum / n`` of that arm's links are tested for an opposing pair (:func:`find_opposing_pair`):
   two forces at least ``zero_force_guard_n`` long, separated by an angle strictly greater than
   ``forces_angle_tolerance`` and with magnitude ratio ``min / max >= min_force_ratio`` (0.3).
3. **Grip counter** per ``(object, arm)``: ``+1`` (saturating at ``max_grip_count``) on an update
   where the arm grips the object, ``-1`` (down to 0) otherwise. The object is attached to the arm
   when the counter is ``> grip_count_threshold``, the arm holds nothing and no other arm holds the
   object. The attach event carries ``object2palm = inv(T_palm) @ T_object``, the pose to weld.
4. **Release** of a held object, on an update where its holder does not grip it: each finger link
   that touched the object in the attach window carries its contact point rigidly; the point's
   displacement relative to the object, projected on the outward contact normal taken at attach,
   is the finger's *opening*. The object is detached when any finger opened by more than
   ``release_tolerance``. Squeezing (negative opening) and sliding along the surface never release.

Known problems of the plugin and what this module does about them (numbers are
``JenniferBuehler/gazebo-pkgs`` issues, § are sections of ``shared/reference/grasp_fix.md``):

* **§7.1 wall-clock scheduling**: updates run on the caller's simulation clock (``now_s``), so any
  real-time factor gives the same events.
* **§7.2, #52, #10 tolerance below 90 degrees silently never grips**: rejected at configuration
  time by :class:`GraspFixConfigError`, whose message also says that *lowering* the tolerance
  towards 90 relaxes the test (the advice in #10 was inverted).
* **§7.3 unclamped acos** gives NaN for exactly opposing forces: the cosine is clamped.
* **§7.4 mean over contact points** biased the 0.3 magnitude ratio when fingers had different
  numbers of contact points: the per-step force is the *sum* over the link's contact points
  (the finger's total force).
* **§7.6 object keyed by collision element**: objects are whatever hashable key the caller passes
  (PyBullet: ``(body id, link index)`` or a scene name), so two shapes of one link are one object.
* **§7.7 an attached object blocks every involved arm**: only the arm that would grasp must be
  free; another arm holding something else does not block it.
* **§7.8, #2 forces of two arms pooled** (one finger of each arm "gripped", object attached to the
  first palm): the opposing pair must come from two links of the *same* arm, and the object is
  attached to that arm.
* **§7.11 release compared distance lengths to the object origin**: a finger opening by 1 cm on an
  off-centre grasp (object origin 15 cm away) changed that length by under 2 mm and never
  released; the opening is now measured along the contact normal.
* **#52, §3.6 release lag of (max - threshold) / rate, about 1 s**: the release test runs on every
  update the holder does not grip, without waiting for the counter to drain; detach happens
  within two updates of the fingers opening (the first update's window may still hold contacts
  from before the opening).
* **#9(b), #64, #1 attach/detach oscillation while the fingers keep squeezing with collisions
  disabled**: closing fingers move *into* the object, a negative opening, which never releases.
  A release needs the finger to be ``release_tolerance`` *outside* its attach contact surface,
  so when collisions are restored the finger is clear of the object, and re-grasping then needs
  ``grip_count_threshold + 1`` fresh gripping updates (the holder's counter is reset to 0 on
  detach). The loop cannot form.
* **#9(a), #49 detach soon after attach on brief contact loss or finger jitter**: losing contacts
  alone never releases; only an outward finger motion beyond the tolerance does.
* **#32 handover needs the first arm to let go, then the object drops while the second arm
  counts up**: counters are per ``(object, arm)``, so the receiving arm counts while the giver
  still holds; the update in which the giver opens emits its detach and the receiver's attach
  together (detach events first).
* **#17, #2 duplicated or ambiguous arms**: duplicate arm names and gripper links shared between
  arms are configuration errors.
* **#31, #66 palm link not found**: :func:`validate_links` names the model's closest link names.

Left to the simulator glue (``sim/grasp_fix.py``): #63 (disable only finger/object collision pairs,
listed in :attr:`GraspEvent.gripper_links`), #26 (keep the object's velocity on detach), §7.9
(a true fixed constraint instead of a locked revolute joint), §7.13 and #51 (ignore static bodies
and the robot's own links), and the choice of force (normal only avoids the friction tilt of
§3.3, #52, #67; the criterion accepts either).
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass, field, replace
from typing import Any, Hashable, Iterable, Mapping, Optional, Sequence

import numpy as np
from numpy.typing import NDArray

Pose = NDArray[np.float64]
Vec3 = NDArray[np.float64]

__all__ = [
    "GraspFixConfigError",
    "GraspFixParams",
    "GraspFixArm",
    "grasp_fix_config_from_mapping",
    "validate_links",
    "ContactSample",
    "GraspEvent",
    "angle_between_deg",
    "find_opposing_pair",
    "GripCriterion",
]

# Slack when comparing simulation times (float sums of 1 ms steps); far below any physics step.
_TIME_EPS_S = 1e-9


# --------------------------------------------------------------------------------------------
# Configuration
# --------------------------------------------------------------------------------------------


class GraspFixConfigError(ValueError):
    """A GraspFix parameter or arm is invalid.

    Attributes:
        key: the offending parameter, e.g. ``"forces_angle_tolerance"`` or
            ``"arm[left].palm_link"``.
        message: what is wrong and how to fix it.
    """

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key}: {message}")
        self.key = key
        self.message = message


def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def _is_real(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)


@dataclass(frozen=True)
class GraspFixParams:
    """Plugin-wide GraspFix parameters (SDF names and code defaults of ``GazeboGraspFix.cpp``).

    Args:
        forces_angle_tolerance: degrees. The *minimum* angle between two forces for them to count as
            opposing (strict ``>``). 120 means within 60 degrees of anti-parallel; 90 is the loosest
            legal value. A larger value is stricter. Must be in ``[90, 180)``.
        update_rate: Hz of simulation time at which accumulated contacts are processed (the plugin
            read an int and used the wall clock; any positive float is accepted here).
        max_grip_count: saturation value of the per (object, arm) grip counter, ``>= 1``.
        grip_count_threshold: attach when the counter is ``> grip_count_threshold``. ``None``
            (absent) resolves to ``max_grip_count // 2`` as in the plugin. Must be in
            ``[0, max_grip_count)``, otherwise no object could ever be attached.
        release_tolerance: metres a finger link must open away from the object, along the contact
            normal at attach, before the object is released. ``> 0``.
        disable_collisions_on_attach: the simulator disables finger/object collisions while held.
        min_force_ratio: ``min(|f1|, |f2|) / max(|f1|, |f2|)`` required of an opposing pair, in
            ``[0, 1]`` (hard-coded 0.3 in the plugin).
        zero_force_guard_n: newtons; shorter averaged forces are ignored (hard-coded 1e-4).

    Raises:
        GraspFixConfigError: naming the parameter, on any invalid value.
    """

    forces_angle_tolerance: float = 120.0
    update_rate: float = 5.0
    max_grip_count: int = 10
    grip_count_threshold: Optional[int] = None
    release_tolerance: float = 0.005
    disable_collisions_on_attach: bool = False
    min_force_ratio: float = 0.3
    zero_force_guard_n: float = 1e-4

    def __post_init__(self) -> None:
        tol = self.forces_angle_tolerance
        if not _is_real(tol) or not math.isfinite(tol):
            raise GraspFixConfigError("forces_angle_tolerance", f"must be a finite number of degrees, got {tol!r}")
        if tol < 90.0:
            raise GraspFixConfigError(
                "forces_angle_tolerance",
                f"{tol:g} deg is below 90 deg, so no object could ever be gripped (the plugin's CheckGrip "
                "rejects it and returns false forever). It is the MINIMUM angle between two opposing "
                "forces: 120 = within 60 deg of anti-parallel, 90 = the loosest legal value. To relax "
                "the test lower it towards 90; do not raise it.",
            )
        if tol >= 180.0:
            raise GraspFixConfigError(
                "forces_angle_tolerance",
                f"{tol:g} deg can never grip: two forces are at most 180 deg apart and the test is "
                "strict (angle > tolerance). Use a value in [90, 180), e.g. the default 120.",
            )
        rate = self.update_rate
        if not _is_real(rate) or not math.isfinite(rate) or rate <= 0.0:
            raise GraspFixConfigError("update_rate", f"must be a positive number of Hz, got {rate!r}")
        mx = self.max_grip_count
        if not _is_int(mx) or mx < 1:
            raise GraspFixConfigError("max_grip_count", f"must be an integer >= 1, got {mx!r}")
        thr = self.grip_count_threshold
        if thr is None:
            object.__setattr__(self, "grip_count_threshold", int(mx) // 2)
            thr = int(mx) // 2
        if not _is_int(thr) or thr < 0:
            raise GraspFixConfigError("grip_count_threshold", f"must be an integer >= 0, got {thr!r}")
        if mx <= thr:
            raise GraspFixConfigError(
                "max_grip_count",
                f"max_grip_count={mx} is not above grip_count_threshold={thr}: the counter saturates at "
                "max_grip_count and attaching needs count > grip_count_threshold, so no object could "
                f"ever be attached. Use max_grip_count >= {2 * thr if thr else 1} (the plugin advises "
                "at least twice the threshold).",
            )
        rel = self.release_tolerance
        if not _is_real(rel) or not math.isfinite(rel) or rel <= 0.0:
            raise GraspFixConfigError(
                "release_tolerance",
                f"must be a positive distance in metres, got {rel!r} (default 0.005; below ~0.002 finger "
                "jitter can release the object, issue #49)",
            )
        if not isinstance(self.disable_collisions_on_attach, (bool, np.bool_)):
            raise GraspFixConfigError(
                "disable_collisions_on_attach", f"must be a bool, got {self.disable_collisions_on_attach!r}"
            )
        r = self.min_force_ratio
        if not _is_real(r) or not 0.0 <= r <= 1.0:
            raise GraspFixConfigError("min_force_ratio", f"must be in [0, 1], got {r!r}")
        g = self.zero_force_guard_n
        if not _is_real(g) or not math.isfinite(g) or g < 0.0:
            raise GraspFixConfigError("zero_force_guard_n", f"must be a force >= 0 N, got {g!r}")

    @property
    def update_period_s(self) -> float:
        """Seconds of simulation time between two updates, ``1 / update_rate``."""
        return 1.0 / float(self.update_rate)

    @property
    def attach_latency_updates(self) -> int:
        """Gripping updates needed from a zero counter to attach: ``grip_count_threshold + 1``."""
        assert self.grip_count_threshold is not None
        return int(self.grip_count_threshold) + 1


@dataclass(frozen=True)
class GraspFixArm:
    """One ``<arm>`` block: an arm that can hold one object.

    Args:
        arm_name: unique name of the arm.
        palm_link: the link the object is welded to (the link the finger joints attach to).
        gripper_link: all links that actively grasp (fingers, pads); a single name is accepted.

    Raises:
        GraspFixConfigError: on an empty name, no gripper links or a duplicated gripper link.
    """

    arm_name: str
    palm_link: str
    gripper_link: tuple[str, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        links = (self.gripper_link,) if isinstance(self.gripper_link, str) else tuple(self.gripper_link)
        object.__setattr__(self, "gripper_link", links)
        if not isinstance(self.arm_name, str) or not self.arm_name.strip():
            raise GraspFixConfigError("arm.arm_name", f"must be a non-empty string, got {self.arm_name!r}")
        key = f"arm[{self.arm_name}]"
        if not isinstance(self.palm_link, str) or not self.palm_link.strip():
            raise GraspFixConfigError(f"{key}.palm_link", f"must be a non-empty link name, got {self.palm_link!r}")
        if not links:
            raise GraspFixConfigError(
                f"{key}.gripper_link",
                "needs at least one link (all finger links that actively grasp; an opposing pair needs two)",
            )
        for ln in links:
            if not isinstance(ln, str) or not ln.strip():
                raise GraspFixConfigError(f"{key}.gripper_link", f"link names must be non-empty strings, got {ln!r}")
        dupes = sorted({ln for ln in links if links.count(ln) > 1})
        if dupes:
            raise GraspFixConfigError(f"{key}.gripper_link", f"lists {dupes} more than once")


def _check_arms(arms: Sequence[GraspFixArm]) -> tuple[GraspFixArm, ...]:
    arms = tuple(arms)
    if not arms:
        raise GraspFixConfigError("arm", "at least one <arm> is required; without one GraspFix does nothing")
    seen: dict[str, str] = {}
    names: set[str] = set()
    for a in arms:
        if not isinstance(a, GraspFixArm):
            raise GraspFixConfigError("arm", f"expected GraspFixArm, got {type(a).__name__}")
        if a.arm_name in names:
            raise GraspFixConfigError(
                f"arm[{a.arm_name}].arm_name",
                "is used by two arms; arm names must be unique (the plugin silently reused the slot)",
            )
        names.add(a.arm_name)
        for ln in a.gripper_link:
            if ln in seen:
                raise GraspFixConfigError(
                    f"arm[{a.arm_name}].gripper_link",
                    f"link '{ln}' is already a gripper link of arm '{seen[ln]}'; a link belongs to one arm",
                )
            seen[ln] = a.arm_name
    return arms


_PARAM_KEYS = (
    "forces_angle_tolerance",
    "update_rate",
    "max_grip_count",
    "grip_count_threshold",
    "release_tolerance",
    "disable_collisions_on_attach",
    "min_force_ratio",
    "zero_force_guard_n",
)
_ARM_KEYS = ("arm_name", "palm_link", "gripper_link")


def _unknown_key_error(where: str, key: str, allowed: Sequence[str]) -> GraspFixConfigError:
    close = difflib.get_close_matches(key, list(allowed), n=1)
    hint = f"; did you mean '{close[0]}'?" if close else f"; known keys: {', '.join(allowed)}"
    return GraspFixConfigError(f"{where}{key}", f"unknown GraspFix key{hint}")


def _parse_bool(key: str, v: Any) -> bool:
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, str) and v.strip().lower() in ("true", "1", "false", "0"):
        return v.strip().lower() in ("true", "1")
    if _is_int(v) and v in (0, 1):
        return bool(v)
    raise GraspFixConfigError(key, f"must be true or false, got {v!r}")


def grasp_fix_config_from_mapping(spec: Mapping[str, Any]) -> tuple[GraspFixParams, tuple[GraspFixArm, ...]]:
    """Parameters and arms from the YAML / plugin-block form.

    Accepted form (the plugin's element names; ``contact_topic`` is accepted and ignored, as in the
    plugin)::

        arm:                         # one mapping or a list of them
          - arm_name: panda
            palm_link: panda_hand
            gripper_link: [panda_leftfinger, panda_rightfinger]
        forces_angle_tolerance: 120  # deg
        update_rate: 5               # Hz (sim time)
        max_grip_count: 10
        grip_count_threshold: 5      # default max_grip_count // 2
        release_tolerance: 0.005     # m
        disable_collisions_on_attach: false

    Returns:
        ``(params, arms)``.

    Raises:
        GraspFixConfigError: unknown keys (with the closest known key), missing arms, bad values.
    """
    if not isinstance(spec, Mapping):
        raise GraspFixConfigError("grasp_fix", f"must be a mapping, got {type(spec).__name__}")
    kwargs: dict[str, Any] = {}
    arm_specs: Any = None
    for key, value in spec.items():
        if key == "arm":
            arm_specs = value
        elif key == "contact_topic":
            continue
        elif key in _PARAM_KEYS:
            kwargs[key] = _parse_bool(key, value) if key == "disable_collisions_on_attach" else value
        else:
            raise _unknown_key_error("", str(key), (*_PARAM_KEYS, "arm", "contact_topic"))
    if arm_specs is None:
        raise GraspFixConfigError("arm", "at least one <arm> is required; without one GraspFix does nothing")
    if isinstance(arm_specs, Mapping):
        arm_specs = [arm_specs]
    arms = []
    for i, a in enumerate(arm_specs):
        if not isinstance(a, Mapping):
            raise GraspFixConfigError(f"arm[{i}]", f"must be a mapping with {', '.join(_ARM_KEYS)}")
        for k in a:
            if k not in _ARM_KEYS:
                raise _unknown_key_error(f"arm[{i}].", str(k), _ARM_KEYS)
        for k in _ARM_KEYS:
            if k not in a:
                raise GraspFixConfigError(f"arm[{i}].{k}", "is required")
        arms.append(GraspFixArm(a["arm_name"], a["palm_link"], a["gripper_link"]))
    return GraspFixParams(**kwargs), _check_arms(arms)


def validate_links(arm: GraspFixArm, link_names_of_model: Iterable[str]) -> None:
    """Check that the arm's palm and gripper links are links of the robot model.

    Args:
        arm: the arm configuration.
        link_names_of_model: every link name of the model (PyBullet: base link name from
            ``getBodyInfo`` plus ``getJointInfo(...)[12]`` of each joint).

    Raises:
        GraspFixConfigError: for the first unknown link, suggesting the model's closest link names
            (issues #31/#66: Gazebo merged fixed-joint links; PyBullet keeps them unless loaded
            with ``URDF_MERGE_FIXED_LINKS``).
    """
    names = [str(n) for n in link_names_of_model]
    known = set(names)
    checks = [("palm_link", arm.palm_link)] + [("gripper_link", ln) for ln in arm.gripper_link]
    for what, ln in checks:
        if ln in known:
            continue
        close = difflib.get_close_matches(ln, names, n=3, cutoff=0.5)
        hint = (
            f"did you mean {', '.join(repr(c) for c in close)}?"
            if close
            else f"the model's links are: {', '.join(names) if names else '(none)'}"
        )
        raise GraspFixConfigError(f"arm[{arm.arm_name}].{what}", f"'{ln}' is not a link of the model; {hint}")


# --------------------------------------------------------------------------------------------
# Inputs and outputs
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ContactSample:
    """One contact point between a gripper link and an object, from one physics step.

    Args:
        link: gripper link name (contacts of other links are ignored).
        object: key of the touched object: any hashable, e.g. a scene name or PyBullet's
            ``(body id, link index)``. Static bodies and the robot itself must not be passed.
        force: shape (3,), newtons, world frame: the force acting **on the object** at this point
            (PyBullet with ``bodyA`` = robot: ``-normalForce * contactNormalOnB``, optionally plus the
            friction terms).
        position: shape (3,), metres, world frame: the contact point.
    """

    link: str
    object: Hashable
    force: Any
    position: Any


@dataclass(frozen=True)
class GraspEvent:
    """An attach or a detach decision (fields of ``gazebo_grasp_plugin/msgs/grasp_event.proto``
    ``arm``, ``object``, ``attached``, plus what the simulator needs to act on it).

    Attributes:
        arm: arm name.
        object: object key as given in the contact samples.
        attached: True for attach, False for detach.
        time_s: simulation time of the update that decided it, seconds.
        object2palm: shape (4, 4): pose of the object in the palm frame, ``inv(T_palm) @ T_object``,
            in whatever frames the caller used for the palm and object poses (pass PyBullet's
            centre-of-mass frames to use it directly as a constraint's parent frame). On detach:
            the pose that was held.
        palm_link: the arm's palm link.
        gripper_links: the arm's gripper links (the finger/object pairs whose collisions the
            simulator disables on attach and restores on detach).
        reason: ``"grip"`` (attach); on detach ``"fingers_opened"``, ``"handover"`` (the fingers opened
            and another arm takes the object in the same update) or ``"manual"``
            (:meth:`GripCriterion.detach`).
        opening_m: on a release by opening, the largest finger opening measured, metres.
    """

    arm: str
    object: Hashable
    attached: bool
    time_s: float
    object2palm: Pose
    palm_link: str
    gripper_links: tuple[str, ...]
    reason: str
    opening_m: float = 0.0


# --------------------------------------------------------------------------------------------
# The opposing-force test
# --------------------------------------------------------------------------------------------


def angle_between_deg(a: Sequence[float], b: Sequence[float]) -> float:
    """Angle between two non-zero vectors, degrees in ``[0, 180]``.

    The cosine is clamped to ``[-1, 1]`` (the plugin's unclamped ``acos`` returned NaN for exactly
    opposing unit vectors that rounded past -1, §7.3).

    Raises:
        ValueError: if either vector is zero or not of shape (3,).
    """
    va = np.asarray(a, dtype=np.float64).reshape(-1)
    vb = np.asarray(b, dtype=np.float64).reshape(-1)
    if va.shape != (3,) or vb.shape != (3,):
        raise ValueError(f"vectors must have shape (3,), got {va.shape} and {vb.shape}")
    la, lb = float(np.linalg.norm(va)), float(np.linalg.norm(vb))
    if la == 0.0 or lb == 0.0:
        raise ValueError("angle between vectors is undefined for a zero vector")
    c = float(np.dot(va / la, vb / lb))
    return math.degrees(math.acos(min(1.0, max(-1.0, c))))


def find_opposing_pair(
    forces: Sequence[Sequence[float]],
    forces_angle_tolerance: float = 120.0,
    min_force_ratio: float = 0.3,
    zero_force_guard_n: float = 1e-4,
) -> Optional[tuple[int, int]]:
    """The plugin's ``CheckGrip``: the first pair of forces that oppose each other.

    A pair ``(i, j)``, ``i < j``, opposes when both lengths are ``>= zero_force_guard_n``, the angle
    between them is ``> forces_angle_tolerance`` (degrees, strict) and
    ``min(|f_i|, |f_j|) / max(|f_i|, |f_j|) >= min_force_ratio``.

    Args:
        forces: shape (N, 3), newtons, one common frame (angles do not depend on which).
        forces_angle_tolerance: degrees. Below 90 the plugin always returns false; so does this.

    Returns:
        ``(i, j)`` of the first opposing pair in ``(i, j)`` lexicographic order, or None.
    """
    if forces_angle_tolerance < 90.0:
        return None
    F = np.asarray(forces, dtype=np.float64).reshape(-1, 3)
    lengths = np.linalg.norm(F, axis=1)
    for i in range(len(F)):
        li = float(lengths[i])
        if li < zero_force_guard_n:
            continue
        for j in range(i + 1, len(F)):
            lj = float(lengths[j])
            if lj < zero_force_guard_n:
                continue
            c = min(1.0, max(-1.0, float(np.dot(F[i], F[j])) / (li * lj)))
            if not math.degrees(math.acos(c)) > forces_angle_tolerance:
                continue
            if min(li, lj) / max(li, lj) >= min_force_ratio:
                return (i, j)
    return None


# --------------------------------------------------------------------------------------------
# The criterion
# --------------------------------------------------------------------------------------------


class _Acc:
    """Accumulated samples of one (object, gripper link) pair since the last update."""

    __slots__ = ("force_obj", "pos_link", "origin_link", "n")

    def __init__(self) -> None:
        self.force_obj = np.zeros(3)  # sum of per-step total force on the object, object frame
        self.pos_link = np.zeros(3)  # sum of per-step mean contact position, gripper link frame
        self.origin_link = np.zeros(3)  # sum of object origin positions, gripper link frame
        self.n = 0  # steps in contact


@dataclass
class _Hold:
    """What an arm holds: object and, per finger link, the attach-time contact geometry."""

    obj: Hashable
    object2palm: Pose
    since_s: float
    # link -> (contact point in link frame (3,), same point in object frame (3,), outward normal in object frame (3,))
    fingers: dict[str, tuple[Vec3, Vec3, Vec3]]


def _pose(poses: Mapping[Any, Any], key: Any, what: str) -> Pose:
    try:
        T = poses[key]
    except KeyError:
        raise ValueError(f"no world pose given for {what} {key!r}") from None
    T = np.asarray(T, dtype=np.float64)
    if T.shape != (4, 4):
        raise ValueError(f"pose of {what} {key!r} must have shape (4, 4), got {T.shape}")
    return T


def _inv(T: Pose) -> Pose:
    out = np.eye(4)
    R = T[:3, :3]
    out[:3, :3] = R.T
    out[:3, 3] = -R.T @ T[:3, 3]
    return out


class GripCriterion:
    """GraspFix decision logic for several arms of one robot model (see the module docstring).

    Call :meth:`step` once per physics step with the step's contact points and the current poses;
    it returns the attach/detach events to apply (usually none). Times are simulation seconds
    from the caller's clock; the wall clock is never read.

    Args:
        arms: the arms; names unique, a gripper link belongs to one arm.
        params: the plugin parameters.

    Raises:
        GraspFixConfigError: on an invalid arm list.

    Invariants: an arm holds at most one object; an object is held by at most one arm.
    """

    def __init__(self, arms: Sequence[GraspFixArm], params: Optional[GraspFixParams] = None) -> None:
        self.params = params if params is not None else GraspFixParams()
        self.arms: tuple[GraspFixArm, ...] = _check_arms(arms)
        self._arm_by_name = {a.arm_name: a for a in self.arms}
        self._arm_of_link = {ln: a.arm_name for a in self.arms for ln in a.gripper_link}
        self.reset()

    # ---- state ------------------------------------------------------------------------------

    def reset(self) -> None:
        """Forget everything: contacts, counters, holds and the update schedule (no events)."""
        self._acc: dict[Hashable, dict[str, _Acc]] = {}
        self._counts: dict[tuple[Hashable, str], int] = {}
        self._holds: dict[str, _Hold] = {}
        self._next_update_s: Optional[float] = None
        self._last_time_s: Optional[float] = None
        self._t0_s = 0.0
        self._k = 0

    @property
    def attached(self) -> dict[Hashable, str]:
        """Held objects: ``{object: arm name}``."""
        return {h.obj: arm for arm, h in self._holds.items()}

    def held_object(self, arm: str) -> Optional[Hashable]:
        """The object the arm holds, or None. Raises KeyError for an unknown arm."""
        self._arm(arm)
        h = self._holds.get(arm)
        return None if h is None else h.obj

    def holder(self, obj: Hashable) -> Optional[str]:
        """The arm holding the object, or None."""
        return self.attached.get(obj)

    def grip_count(self, obj: Hashable, arm: str) -> int:
        """Current grip counter of ``(object, arm)``, in ``[0, max_grip_count]``."""
        self._arm(arm)
        return self._counts.get((obj, arm), 0)

    @property
    def next_update_s(self) -> Optional[float]:
        """Simulation time of the next update, or None before the first call."""
        return self._next_update_s

    def _arm(self, arm: str) -> GraspFixArm:
        try:
            return self._arm_by_name[arm]
        except KeyError:
            close = difflib.get_close_matches(str(arm), list(self._arm_by_name), n=1)
            hint = f"; did you mean '{close[0]}'?" if close else f"; arms: {', '.join(self._arm_by_name)}"
            raise KeyError(f"unknown GraspFix arm '{arm}'{hint}") from None

    # ---- per physics step ---------------------------------------------------------------------

    def add_contacts(
        self,
        contacts: Iterable[ContactSample],
        link_poses: Mapping[str, Any],
        object_poses: Mapping[Hashable, Any],
    ) -> None:
        """Accumulate one physics step's contact points (the plugin's ``OnContact``). Does not block.

        Points are grouped by (object, gripper link): the step's forces are summed (total finger
        force) and rotated into the object frame; the mean contact position and the object origin
        are stored in the gripper link frame. Contacts of links that are not gripper links are
        ignored.

        Args:
            contacts: this step's contact points.
            link_poses: ``{link name: (4, 4) world pose}`` of at least the gripper links in
                ``contacts`` (any frame fixed to the link, used consistently; PyBullet: COM frame).
            object_poses: ``{object key: (4, 4) world pose}`` of at least the objects in
                ``contacts`` (same frame convention as at :meth:`update`).

        Raises:
            ValueError: a pose is missing or a vector is not of shape (3,).
        """
        groups: dict[tuple[Hashable, str], list[ContactSample]] = {}
        for c in contacts:
            if c.link not in self._arm_of_link:
                continue
            groups.setdefault((c.object, c.link), []).append(c)
        for (obj, link), pts in groups.items():
            T_obj = _pose(object_poses, obj, "object")
            T_link = _pose(link_poses, link, "gripper link")
            F = np.zeros(3)
            P = np.zeros(3)
            for c in pts:
                f = np.asarray(c.force, dtype=np.float64).reshape(-1)
                p = np.asarray(c.position, dtype=np.float64).reshape(-1)
                if f.shape != (3,) or p.shape != (3,):
                    raise ValueError(
                        f"contact force and position must have shape (3,), got {f.shape} and {p.shape}"
                    )
                F += f
                P += p
            P /= len(pts)
            R_link_T = T_link[:3, :3].T
            acc = self._acc.setdefault(obj, {}).setdefault(link, _Acc())
            acc.force_obj += T_obj[:3, :3].T @ F
            acc.pos_link += R_link_T @ (P - T_link[:3, 3])
            acc.origin_link += R_link_T @ (T_obj[:3, 3] - T_link[:3, 3])
            acc.n += 1

    def due(self, now_s: float) -> bool:
        """Whether an update is due at simulation time ``now_s`` (False until :meth:`step` started the clock)."""
        if self._next_update_s is None:
            return False
        return now_s >= self._next_update_s - _TIME_EPS_S

    def step(
        self,
        now_s: float,
        contacts: Iterable[ContactSample],
        link_poses: Mapping[str, Any],
        object_poses: Mapping[Hashable, Any],
    ) -> list[GraspEvent]:
        """One physics step: accumulate ``contacts``, then run :meth:`update` if one is due.

        Updates fall on ``t0 + k / update_rate`` (``t0``: the first call's time) without drift; a
        step that jumps over several update times runs one update.

        Args:
            now_s: simulation time after the step, seconds, non-decreasing.
            contacts, link_poses, object_poses: as in :meth:`add_contacts`; for the update,
                ``link_poses`` must hold every palm and gripper link of every arm and
                ``object_poses`` every held object and every object touched since the last update.

        Returns:
            Events to apply, detaches before attaches (empty on most steps).

        Raises:
            ValueError: time going backwards (call :meth:`reset` after a simulation reset) or a
                missing pose.
        """
        now_s = float(now_s)
        if self._last_time_s is not None and now_s < self._last_time_s - _TIME_EPS_S:
            raise ValueError(
                f"simulation time went backwards ({now_s} s after {self._last_time_s} s); call reset() "
                "after resetting the simulation"
            )
        self._last_time_s = now_s
        period = self.params.update_period_s
        if self._next_update_s is None:
            self._t0_s, self._k = now_s, 1
            self._next_update_s = now_s + period
        self.add_contacts(contacts, link_poses, object_poses)
        if not self.due(now_s):
            return []
        # t0 + k * period, not repeated addition, so the schedule does not drift.
        self._k = max(self._k + 1, int(math.floor((now_s - self._t0_s) / period + _TIME_EPS_S)) + 1)
        self._next_update_s = self._t0_s + self._k * period
        return self.update(now_s, link_poses, object_poses)

    # ---- update -------------------------------------------------------------------------------

    def update(
        self,
        now_s: float,
        link_poses: Mapping[str, Any],
        object_poses: Mapping[Hashable, Any],
    ) -> list[GraspEvent]:
        """Process the contacts accumulated since the last update (the plugin's ``OnUpdate``).

        Normally called by :meth:`step` at ``update_rate``; calling it directly forces an update
        now and does not move the schedule.

        Returns:
            Events, detaches first (a detach whose object another arm attaches in the same update
            has reason ``"handover"``), then attaches.
        """
        now_s = float(now_s)
        p = self.params
        window, self._acc = self._acc, {}

        # 1. Which arm grips which object in this window; per-link averaged forces.
        gripped: set[tuple[Hashable, str]] = set()
        force_sum: dict[tuple[Hashable, str], float] = {}
        for obj, per_link in window.items():
            by_arm: dict[str, list[tuple[str, Vec3]]] = {}
            for link, acc in per_link.items():
                by_arm.setdefault(self._arm_of_link[link], []).append((link, acc.force_obj / acc.n))
            for arm, items in by_arm.items():
                forces = [f for _, f in items]
                pair = find_opposing_pair(forces, p.forces_angle_tolerance, p.min_force_ratio, p.zero_force_guard_n)
                if pair is not None:
                    gripped.add((obj, arm))
                    force_sum[(obj, arm)] = float(sum(np.linalg.norm(f) for f in forces))

        # 2. Counters: +1 (saturating) when gripped, -1 (to 0) otherwise.
        for key in gripped:
            self._counts[key] = min(self._counts.get(key, 0) + 1, int(p.max_grip_count))
        for key in list(self._counts):
            if key in gripped:
                continue
            c = self._counts[key] - 1
            if c > 0:
                self._counts[key] = c
            else:
                del self._counts[key]  # 0 is the default; forgetting it bounds memory

        events: list[GraspEvent] = []

        # 3. Release: a holder that does not grip its object this update, with a finger opened.
        for arm_name, hold in list(self._holds.items()):
            if (hold.obj, arm_name) in gripped:
                continue
            opening = self._max_opening(hold, link_poses, object_poses)
            if opening > p.release_tolerance:
                events.append(self._release(arm_name, now_s, "fingers_opened", opening))

        # 4. Attach: free arm, counter above threshold; a held object passes only if its holder
        #    released it above (handover), so holding arms never steal from each other.
        thr = int(p.grip_count_threshold)  # type: ignore[arg-type]
        candidates = [
            (obj, arm)
            for (obj, arm), c in self._counts.items()
            if c > thr and (obj, arm) in gripped and arm not in self._holds
        ]
        # Strongest claim first: higher count, larger total force, then configuration order.
        arm_order = {a.arm_name: i for i, a in enumerate(self.arms)}
        candidates.sort(key=lambda k: (-self._counts[k], -force_sum.get(k, 0.0), arm_order[k[1]]))
        released = {e.object: i for i, e in enumerate(events)}
        for obj, arm_name in candidates:
            if arm_name in self._holds or obj in self.attached:
                continue
            events.append(self._attach(arm_name, obj, now_s, window[obj], link_poses, object_poses))
            if obj in released:  # the giver opened in this very update: a handover
                events[released[obj]] = replace(events[released[obj]], reason="handover")
        return events

    def detach(self, arm: str, now_s: float) -> Optional[GraspEvent]:
        """Release what ``arm`` holds now (e.g. a scene reset or a commanded drop), or None.

        The arm's counter for the object is reset, so it needs a full ``grip_count_threshold + 1``
        gripping updates to take it again.
        """
        self._arm(arm)
        if arm not in self._holds:
            return None
        return self._release(arm, float(now_s), "manual", 0.0)

    # ---- internals ----------------------------------------------------------------------------

    def _attach(
        self,
        arm_name: str,
        obj: Hashable,
        now_s: float,
        per_link: Mapping[str, _Acc],
        link_poses: Mapping[str, Any],
        object_poses: Mapping[Hashable, Any],
    ) -> GraspEvent:
        arm = self._arm_by_name[arm_name]
        T_obj = _pose(object_poses, obj, "object")
        T_palm = _pose(link_poses, arm.palm_link, "palm link")
        T_obj_inv = _inv(T_obj)
        fingers: dict[str, tuple[Vec3, Vec3, Vec3]] = {}
        for link, acc in per_link.items():
            if self._arm_of_link[link] != arm_name:
                continue  # only the grasping arm's fingers can release it (plugin §3.4 step 6)
            f = acc.force_obj / acc.n
            fl = float(np.linalg.norm(f))
            if fl < self.params.zero_force_guard_n:
                continue
            T_link = _pose(link_poses, link, "gripper link")
            p_link = acc.pos_link / acc.n
            p_obj = (T_obj_inv @ T_link @ np.append(p_link, 1.0))[:3]
            # Force on the object points into it; the finger's outward direction is -f.
            fingers[link] = (p_link, p_obj, -f / fl)
        object2palm = _inv(T_palm) @ T_obj
        self._holds[arm_name] = _Hold(obj, object2palm, now_s, fingers)
        return GraspEvent(arm_name, obj, True, now_s, object2palm.copy(), arm.palm_link, arm.gripper_link, "grip")

    def _max_opening(self, hold: _Hold, link_poses: Mapping[str, Any], object_poses: Mapping[Hashable, Any]) -> float:
        """Largest outward motion (m) of a finger's attach contact point relative to the object."""
        if not hold.fingers:
            return 0.0
        T_obj_inv = _inv(_pose(object_poses, hold.obj, "held object"))
        best = -math.inf
        for link, (p_link, p_obj0, n_obj) in hold.fingers.items():
            T_link = _pose(link_poses, link, "gripper link")
            p_obj = (T_obj_inv @ T_link @ np.append(p_link, 1.0))[:3]
            best = max(best, float(np.dot(p_obj - p_obj0, n_obj)))
        return best

    def _release(self, arm_name: str, now_s: float, reason: str, opening: float) -> GraspEvent:
        arm = self._arm_by_name[arm_name]
        hold = self._holds.pop(arm_name)
        self._counts.pop((hold.obj, arm_name), None)
        return GraspEvent(
            arm_name, hold.obj, False, now_s, hold.object2palm.copy(), arm.palm_link, arm.gripper_link, reason, opening
        )
