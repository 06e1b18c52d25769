"""The robot description: an arm with a parallel two-finger gripper, as data.

A :class:`RobotDescription` is what the simulator, the tactile emulation, GraspFix, the PR2 gripper
controller, the motion planner and the hardware backend need to know about a robot beyond its URDF:
which joints are the arm (base to wrist), where the TCP is, which joint carries the wrist
force-torque sensor, the gripper (finger joints, their coupling, opening range, force limits, finger
speed and friction, palm link), the finger pads (links and pad geometry for the 22-cell PR2 pressure
arrays), named configurations (``ready`` at least), joint velocity and acceleration limits and the
link pairs never checked for self-collision. It is read from a YAML file (:mod:`.loader`; keys in
:data:`DESCRIPTION_KEYS`) and checked against its URDF.

The attribute names the rest of the code reads are kept from the simulator's former ``RobotModel``
(``arm_joint_names``, ``finger_joint_names``, ``tcp_link_name``, ``named_configurations``,
``max_gap_m``, ``default_grip_force_n``, ``max_grip_force_n``, ``finger_speed_mps``,
``finger_lateral_friction``, ``acceleration_limits``, ``allowed_collision_pairs``, ``urdf``).

Frames: the TCP offset is a pose in the TCP link's frame; each pad pose is the pad frame in its
finger link's frame. **Pad frame**: origin at the centre of the pad on the finger's inner (gripping)
surface; ``z`` along the finger towards its tip; ``y`` out of the back of the finger (the inner
surface's outward normal is ``-y``, towards the other finger); ``x = y cross z``, across the finger.
Quaternions are (w, x, y, z).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

from ..geometry.poses import Pose, pose_from_pq
from ..keydocs import KeyDoc, keys_markdown

__all__ = ["PadGeometry", "FingerPad", "GripperDescription", "RobotDescription", "KeyDoc", "DESCRIPTION_KEYS",
           "description_keys_doc"]


@dataclass(frozen=True)
class PadGeometry:
    """Where the 22 PR2 cells lie on a finger, pad frame (see the module docstring), metres.

    Attributes:
        width_m: pad width across the finger (pad x); 3 columns of cells.
        length_m: pad length along the finger (pad z); 5 rows, row 0 at the tip end.
        tip_face_m: a contact beyond this z (towards the tip) is on the tip face (cells 2-5).
        side_m: a contact beyond this ``|x|`` is on a side (cells 1, 6).
        back_m: a contact beyond this y (behind the inner surface) is on the back (cell 0).
        corner_m: the tip corner cells (2, 5) are the outer ``corner_m`` of the tip face's width.
    """

    width_m: float
    length_m: float
    tip_face_m: float
    side_m: float
    back_m: float
    corner_m: float


@dataclass(frozen=True)
class FingerPad:
    """One finger's pad: its link and the pad frame in that link's frame.

    Attributes:
        link: URDF link carrying the pad (the finger joint's child or a link below it).
        position: pad frame origin in the link frame, metres, shape (3,).
        orientation: pad frame rotation in the link frame, quaternion (w, x, y, z).
    """

    link: str
    position: tuple[float, float, float] = (0.0, 0.0, 0.0)
    orientation: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)

    @property
    def pose(self) -> Pose:
        """(4, 4) pad frame in the finger link frame."""
        return pose_from_pq(self.position, self.orientation)


@dataclass(frozen=True)
class GripperDescription:
    """A parallel two-finger gripper: a motor per finger joint, or one driver moving a linkage.

    Attributes:
        joints: the two finger joints, prismatic or revolute (a linkage: the first joint between the
            palm and each pad, e.g. the outer knuckles).
        palm_link: the hand link the fingers hang from (GraspFix welds held objects to it; the palm
            accelerometer sits in it).
        pads: the two finger pads, ``joints`` order.
        pad: the pad geometry both fingers share.
        opening_m: (closed, fully open) finger gap, metres.
        default_force_n: force of each finger when a command asks for "the maximum" (negative
            ``max_effort``): the continuous grasping force, newtons.
        max_force_n: upper clip of a commanded finger force (the peak force), newtons.
        finger_speed_mps: speed of each finger under position control, m/s.
        finger_friction: Coulomb friction coefficient of the finger links.
        coupling: ``"gear"``: a PyBullet gear constraint keeps the second finger at ``mimic_multiplier``
            times the first (URDF ``<mimic>`` is not simulated by PyBullet); ``"none"``: both fingers
            are driven to the same target independently.
        mimic_multiplier: second joint = multiplier x first joint (1: both open alike).
        travel_per_unit: how far each finger's pad moves towards its back (opening) per unit of its
            joint, m/m (prismatic: the joint axis along the pad normal, +-1) or m/rad (revolute: the
            lever from the joint axis to the pad centre, signed), computed from the URDF.
        closed_positions: each finger joint's position at the closed gap (its lower limit when
            ``travel_per_unit`` is positive, else its upper limit).
        driver: the one driven joint of a single-actuator linkage (Robotiq 2F-85, xArm gripper), whose
            finger joints all ``<mimic>`` it, directly or through other mimic joints; None: a motor
            per finger joint. ``coupling`` is then ``"linkage"``.
        drive_table: a linkage's kinematics sampled over the driver's range
            (:func:`~.linkage.linkage_table`): ``(driver positions ascending, gap at each (m), d gap /
            d driver at each (m/rad), first pad's travel per unit of the driver alone, every other
            joint held (the lever of the driver's torque on that pad; for a pad whose chain does
            not hold the driver, through its chain's joint that follows the driver, per unit of the
            driver: :func:`~.linkage.pad_actuator`; 0 when none does), second pad's)``; ``()``
            without a driver.
        driver_pad: a linkage: the pad (0 or 1) whose chain from the palm holds the driver itself
            (the other pad moves through <mimic> joints only), or None when neither does.
        pad_centre_z: a linkage's pad centres' midpoint along the palm's z axis at each sample of
            ``drive_table``, metres (the pads move on an arc: they advance as they close).

    Two finger joints: the gap is linear in the joints, ``opening_m[0] + sum_i travel_per_unit[i] *
    (q_i - closed_positions[i])`` (exact for prismatic fingers; for revolute ones the pads move on an
    arc and the gap is its first-order approximation about the closed position). A linkage: the gap
    is the URDF's forward kinematics of the driver, interpolated in ``drive_table`` (``travel_per_unit``
    and ``closed_positions`` then give each pad's travel per unit of the driver at the closing limit
    and that limit, for display).

    The actuated joints are :attr:`drive_joints`; :meth:`gap_from_drive`, :meth:`drive_slopes` and
    :meth:`drive_targets` map them to the gap and back for both kinds.
    """

    joints: tuple[str, str]
    palm_link: str
    pads: tuple[FingerPad, FingerPad]
    pad: PadGeometry
    opening_m: tuple[float, float]
    default_force_n: float
    max_force_n: float
    finger_speed_mps: float = 0.05
    finger_friction: float = 1.0
    coupling: str = "gear"
    mimic_multiplier: float = 1.0
    travel_per_unit: tuple[float, float] = (1.0, 1.0)
    closed_positions: tuple[float, float] = (0.0, 0.0)
    driver: Optional[str] = None
    drive_table: tuple[tuple[float, ...], ...] = ()
    pad_centre_z: tuple[float, ...] = ()
    driver_pad: Optional[int] = None
    mass_kg: float = 0.0
    """The gripper's mass (data sheet), kg: taken off the arm's payload (0: unknown)."""

    @property
    def pad_links(self) -> tuple[str, str]:
        return (self.pads[0].link, self.pads[1].link)

    @property
    def is_linkage(self) -> bool:
        """One driver moves both fingers through a linkage (``driver`` is set)."""
        return self.driver is not None

    @property
    def drive_joints(self) -> tuple[str, ...]:
        """The actuated joints: ``(driver,)`` for a linkage, else the two finger joints."""
        return (self.driver,) if self.driver is not None else self.joints

    @functools.cached_property
    def _table(self) -> tuple[np.ndarray, ...]:
        """(q, gap, slope) ascending in q, (gap, q) ascending in gap, and the force slope (the
        driver's own pad's travel, else the slope), as arrays."""
        q, gap, slope = (np.asarray(v, dtype=float) for v in self.drive_table[:3])
        order = np.argsort(gap)
        own = (np.asarray(self.drive_table[3 + self.driver_pad], dtype=float)
               if self.driver_pad is not None and len(self.drive_table) >= 5 else slope)
        return q, gap, slope, gap[order], q[order], own

    def gap_from_drive(self, q: "Sequence[float]") -> float:
        """Finger gap, m, with the actuated joints (:attr:`drive_joints`) at ``q`` (m or rad)."""
        if self.driver is not None:
            tq, tg = self._table[0], self._table[1]
            return float(np.interp(q[0], tq, tg))
        return self.gap_of(q[0], q[1])

    def drive_slopes(self, q: "Sequence[float]") -> tuple[float, ...]:
        """d gap / d q_i of each actuated joint at ``q`` (m/m or m/rad; the sign says which way opens).

        A finger force ``F`` (N, each pad) balances ``F x |slope_i|`` of actuator ``i`` (virtual work);
        a gap speed ``v`` needs ``v / slope_i`` of one driver, or ``(v / 2) / slope_i`` of each of two."""
        if self.driver is not None:
            tq, ts = self._table[0], self._table[2]
            return (float(np.interp(q[0], tq, ts)),)
        return self.travel_per_unit

    def drive_force_slopes(self, q: "Sequence[float]", pad: Optional[int] = None) -> tuple[float, ...]:
        """How a finger force maps to each actuated joint's effort at ``q``: a finger force ``F`` (N,
        each pad) is an effort ``F |s_i|`` and an effort ``e_i`` a force ``e_i / s_i``.

        Two finger joints: :meth:`drive_slopes`. A linkage whose driver is on one pad's chain: that
        pad's travel per unit of the driver alone, every other joint held (the simulator holds each
        mimic joint at its leader's position with a motor, so the driver's torque acts on its own pad
        through that lever and the object carries the same force to the other pad); otherwise the
        gap's slope (both pads' load). ``pad`` (a linkage): that pad's lever instead, through its
        own actuated joint per unit of the driver (``drive_table``'s row of that pad)."""
        if self.driver is not None:
            tq, own = self._table[0], self._table[5]
            if pad is not None and len(self.drive_table) >= 5:
                own = np.asarray(self.drive_table[3 + pad], dtype=float)
            return (float(np.interp(q[0], tq, own)),)
        return self.travel_per_unit

    def drive_targets(self, gap_m: float) -> tuple[float, ...]:
        """Positions of the actuated joints (m or rad) of gap ``gap_m`` (both fingers travelling alike)."""
        if self.driver is not None:
            tg, tq = self._table[3], self._table[4]
            return (float(np.interp(gap_m, tg, tq)),)
        return self.joint_targets(gap_m)

    def pad_advance_m(self, gap_m: float) -> float:
        """How far the pad centres are along the palm's z axis (the approach) at gap ``gap_m`` beyond
        where they are at the fully open gap, metres (0 for fingers that move straight)."""
        if self.driver is None or not self.pad_centre_z:
            return 0.0
        tq = self._table[0]
        z = np.asarray(self.pad_centre_z)
        q_gap = self.drive_targets(gap_m)[0]
        q_open = self.drive_targets(self.opening_m[1])[0]
        return float(np.interp(q_gap, tq, z) - np.interp(q_open, tq, z))

    def gap_of(self, q0: float, q1: float) -> float:
        """Finger gap, m, with the finger joints at ``q0``, ``q1`` (m or rad); a linkage: ``q0`` is
        the driver (see :meth:`gap_from_drive`)."""
        if self.driver is not None:
            return self.gap_from_drive((q0,))
        (s0, s1), (c0, c1) = self.travel_per_unit, self.closed_positions
        return self.opening_m[0] + s0 * (q0 - c0) + s1 * (q1 - c1)

    def joint_targets(self, gap_m: float) -> tuple[float, float]:
        """The finger joint positions (m or rad) of gap ``gap_m``, both fingers travelling alike
        (two finger joints; a linkage's actuated joint: :meth:`drive_targets`)."""
        t = (gap_m - self.opening_m[0]) / 2.0
        (s0, s1), (c0, c1) = self.travel_per_unit, self.closed_positions
        return c0 + t / s0, c1 + t / s1


@dataclass(frozen=True, eq=False)
class RobotDescription:
    """A robot: URDF plus what the URDF does not say (see the module docstring).

    Attributes:
        name: model name (``model: NAME`` in a scene).
        file: the description file, absolute path.
        urdf_path: the URDF as found (absolute; may name ``package://`` meshes).
        packages: ``{package: folder}`` for ``package://`` URIs.
        summary: one line about the robot.
        arm_joint_names: the arm's joints, base to wrist.
        tcp_link_name: link whose frame, times ``tcp_offset``, is the TCP.
        tcp_position, tcp_orientation: TCP offset in that link's frame (m; quaternion w, x, y, z).
        wrist_ft_joint: joint whose reaction force is the wrist force (``max_force_n`` guards).
        wrist_force_resolution_n: the smallest wrist force a guard can tell from the sensor's noise
            and model error, N: a ``max_force_n`` below it is refused (``ptm validate``).
        wrist_force_latency_s: how long the wrist force must stay over a guard's threshold before
            it trips (filter and debounce), s; the simulator's guard waits this long, and a guarded
            line meets its expected contact slowly enough for it (:mod:`~py_trees_manipulation.scene.contact`).
        gripper: the :class:`GripperDescription`.
        named_configurations: arm joint positions by name, radians, arm joint order (``ready`` always).
        velocity_limits: arm joint velocity limits, rad/s (or m/s), arm joint order; () = the URDF's.
        acceleration_limits: arm joint acceleration limits, rad/s^2; () = 5 x the velocity limits.
        effort_limits: arm joint effort limits, N m; () = the URDF's.
        allowed_collision_pairs: link pairs never checked for self-collision (beyond parent-child).
        reach_m: largest distance of the TCP from the first arm joint's axis (horizontal reach when
            that axis is vertical) over the joint limits, sampled (4096 seeded configurations),
            metres; 0 when not computed.
        arm_urdf_limits: ``(lower, upper, effort, velocity)`` per arm joint from the URDF.
    """

    name: str
    file: str
    urdf_path: str
    arm_joint_names: tuple[str, ...]
    tcp_link_name: str
    gripper: GripperDescription
    named_configurations: dict[str, tuple[float, ...]]
    packages: dict[str, str] = field(default_factory=dict)
    summary: str = ""
    tcp_position: tuple[float, float, float] = (0.0, 0.0, 0.0)
    tcp_orientation: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)
    wrist_ft_joint: Optional[str] = None
    wrist_force_resolution_n: float = 1.0
    wrist_force_latency_s: float = 0.005
    velocity_limits: tuple[float, ...] = ()
    acceleration_limits: tuple[float, ...] = ()
    effort_limits: tuple[float, ...] = ()
    allowed_collision_pairs: tuple[tuple[str, str], ...] = ()
    reach_m: float = 0.0
    arm_urdf_limits: tuple[tuple[float, float, float, float], ...] = ()
    payload_kg: Optional[float] = None
    """The arm's rated payload, gripper included (data sheet), kg; None: not known (nothing checked)."""

    @property
    def max_object_kg(self) -> Optional[float]:
        """What the hand may lift: the rated payload minus the gripper's mass, kg (None: unknown)."""
        return None if self.payload_kg is None else self.payload_kg - self.gripper.mass_kg

    # ---- derived ------------------------------------------------------------------------------
    @property
    def tcp_offset(self) -> Pose:
        """(4, 4) TCP pose in the ``tcp_link_name`` frame."""
        return pose_from_pq(self.tcp_position, self.tcp_orientation)

    @functools.cached_property
    def urdf(self) -> str:
        """A URDF path PyBullet loads from any folder (``package://`` meshes resolved; see
        :func:`~.urdf.loadable_urdf`). Computed, and the copy written, on first use."""
        from .urdf import loadable_urdf

        return loadable_urdf(self.urdf_path, self.packages)

    @property
    def dof(self) -> int:
        return len(self.arm_joint_names)

    @property
    def lower(self) -> np.ndarray:
        """Arm joint lower limits from the URDF, shape (n_arm,)."""
        return np.array([lim[0] for lim in self.arm_urdf_limits])

    @property
    def upper(self) -> np.ndarray:
        """Arm joint upper limits from the URDF, shape (n_arm,)."""
        return np.array([lim[1] for lim in self.arm_urdf_limits])

    # ---- names kept from the simulator's RobotModel --------------------------------------------
    @property
    def finger_joint_names(self) -> tuple[str, str]:
        return self.gripper.joints

    @property
    def flange_link_name(self) -> str:
        """The palm link (where the hand is)."""
        return self.gripper.palm_link

    @property
    def max_gap_m(self) -> float:
        """Fully open finger gap, metres."""
        return self.gripper.opening_m[1]

    @property
    def min_gap_m(self) -> float:
        """Closed finger gap, metres."""
        return self.gripper.opening_m[0]

    @property
    def default_grip_force_n(self) -> float:
        return self.gripper.default_force_n

    @property
    def max_grip_force_n(self) -> float:
        return self.gripper.max_force_n

    @property
    def finger_speed_mps(self) -> float:
        return self.gripper.finger_speed_mps

    @property
    def finger_lateral_friction(self) -> float:
        return self.gripper.finger_friction

    def __repr__(self) -> str:
        return f"RobotDescription({self.name!r}, {self.dof} arm joints, file={self.file!r})"


# ------------------------------------------------------------------------------------------------
# Key table: the single source of validation of unknown keys, of the JSON Schema and of the docs
# ------------------------------------------------------------------------------------------------
DESCRIPTION_KEYS: dict[str, list[KeyDoc]] = {
    "robot": [
        KeyDoc("name", "str", "the file name", "model name, as a scene's `model:` gives it"),
        KeyDoc("description", "str", "", "one line about the robot (shown by `ptm robots`)"),
        KeyDoc("urdf", "str", "", "the URDF: absolute, relative to this file, `package://PKG/...`, or under "
               "pybullet_data", True),
        KeyDoc("packages", "mapping", "{}", "`{package: folder}` for `package://` URIs in the URDF (folders relative "
               "to this file); `pybullet_data` is always known"),
        KeyDoc("arm", "mapping", "", "the arm (see `arm`)", True),
        KeyDoc("tcp", "mapping", "", "the tool centre point (see `tcp`)", True),
        KeyDoc("wrist_force_torque_joint", "str", "the joint above `gripper.palm_link`",
               "joint whose reaction force is the wrist force (MoveCartesian `max_force_n`)"),
        KeyDoc("wrist_force_resolution_n", "number", "1.0", "smallest wrist force a guard tells from noise and model "
               "error, N, > 0: a smaller `max_force_n` is refused"),
        KeyDoc("wrist_force_latency_s", "number", "0.005", "time the wrist force must stay over a guard's threshold "
               "before it trips (filter, debounce), s, > 0; guarded lines meet contact slowly enough for it"),
        KeyDoc("gripper", "mapping", "", "the parallel gripper (see `gripper`)", True),
        KeyDoc("named_configurations", "mapping", "", "`{name: [one angle per arm joint, rad]}`; `ready` is "
               "required (trees start there); the stock models also define `home`, `extended` and "
               "`forward` (hand forward, horizontal, fingers vertical)", True),
        KeyDoc("payload_kg", "number", "unknown", "the arm's rated payload, gripper included (its data sheet), kg, "
               "> 0: a lift of an object heavier than this minus `gripper.mass_kg` is refused before the arm moves "
               "(a scene's `robots[].payload_kg` overrides it)"),
        KeyDoc("allowed_collision_pairs", "list", "[]", "`[[link_a, link_b], ...]` never checked for "
               "self-collision (parent-child pairs never are)"),
    ],
    "arm": [
        KeyDoc("joints", "list", "", "the arm's joints, base to wrist (revolute or prismatic)", True),
        KeyDoc("velocity_limits", "list", "the URDF's", "one per joint, rad/s (m/s), > 0"),
        KeyDoc("acceleration_limits", "list", "5 x velocity", "one per joint, rad/s^2 (m/s^2), > 0"),
        KeyDoc("effort_limits", "list", "the URDF's", "one per joint, N m (N), > 0"),
    ],
    "tcp": [
        KeyDoc("link", "str", "", "link the TCP is fixed to (at or below the last arm joint)", True),
        KeyDoc("pose", "pose", "identity", "TCP in that link's frame: z out of the fingers (approach), y along "
               "the finger travel"),
    ],
    "gripper": [
        KeyDoc("joints", "list", "", "the two finger joints (prismatic or revolute, a motor each), below "
               "`palm_link`; how far each moves its pad per unit is read from the URDF (give `joints` or `driver`)"),
        KeyDoc("driver", "str", "", "a single-actuator linkage (Robotiq 2F-85, xArm gripper): the one driven joint, "
               "which every finger joint `<mimic>`s (directly or through another mimic joint); gap, pad travel, "
               "closing limit and force come from the URDF's forward kinematics (give `joints` or `driver`)"),
        KeyDoc("palm_link", "str", "", "the hand link the fingers hang from (GraspFix welds to it)", True),
        KeyDoc("opening_m", "[closed, open]", "[0, the joints' full travel]", "finger gap range, m, >= 0: "
               "closed at the joints' closing limit (a linkage: within what its kinematics give, the default)"),
        KeyDoc("default_force_n", "number", "", "finger force for 'the maximum' (negative max_effort): the "
               "continuous grasping force, N, > 0", True),
        KeyDoc("max_force_n", "number", "default_force_n", "upper clip of a commanded finger force, N, > 0"),
        KeyDoc("mass_kg", "number", "0", "the gripper's mass (data sheet), kg, >= 0: taken off the arm's payload"),
        KeyDoc("finger_speed_mps", "number", "0.05", "speed of each finger under position control, m/s, > 0"),
        KeyDoc("finger_friction", "number", "1.0", "Coulomb friction coefficient set on the finger links, >= 0"),
        KeyDoc("coupling", "str", "gear", "`gear` (a gear constraint couples the fingers) or `none` (two finger "
               "joints only)"),
        KeyDoc("mimic_multiplier", "number", "the URDF `<mimic>`'s, else equal pad travel", "second joint = "
               "multiplier x first, > 0"),
        KeyDoc("pads", "mapping", "", "finger pads for the 22-cell pressure arrays (see `gripper.pads`)", True),
    ],
    "pads": [
        KeyDoc("fingers", "list", "", "two `{link, pose}`: each finger's pad link (at or below its finger joint) "
               "and the pad frame in it (see 'pad frame')", True),
        KeyDoc("width_m", "number", "", "pad width across the finger, m, > 0", True),
        KeyDoc("length_m", "number", "", "pad length along the finger, m, > 0", True),
        KeyDoc("tip_face_m", "number", "length_m / 2", "pad z beyond which a contact is on the tip face, m"),
        KeyDoc("side_m", "number", "width_m / 2", "distance across the pad (either way) beyond which a contact is on "
               "a side, m, > 0"),
        KeyDoc("back_m", "number", "0.01", "pad y beyond which a contact is on the back, m, > 0"),
        KeyDoc("corner_m", "number", "width_m / 10", "width of the tip corner cells, m, >= 0"),
    ],
    "finger": [
        KeyDoc("link", "str", "", "the pad's link", True),
        KeyDoc("pose", "pose", "identity", "the pad frame in the link frame"),
    ],
}


def description_keys_doc() -> str:
    """Markdown reference of every key of a robot description file (one table per section)."""
    titles = {"robot": "top level", "arm": "`arm`", "tcp": "`tcp`", "gripper": "`gripper`",
              "pads": "`gripper.pads`", "finger": "`gripper.pads.fingers[]`"}
    return keys_markdown(DESCRIPTION_KEYS, titles)
