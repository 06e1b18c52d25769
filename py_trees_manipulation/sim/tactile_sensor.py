"""Simulated PR2 tactile sensing and the PR2 gripper sensor actions on any robot's parallel gripper.

The simulator side of :mod:`py_trees_manipulation.control.gripper_controller` (the PR2 realtime
controller ``pr2_gripper_sensor_controller``) and :mod:`py_trees_manipulation.control.tactile`,
described in ``shared/reference/pr2_gripper_controller.md``. Always on for every robot gripper; the
optional scene section ``tactile:`` tunes it::

    scene:
      tactile:
        enabled: true                 # false: no sensing, no PR2 actions, no tactile metrics
        frame_period_s: 0.041         # pressure frame period (24.4 Hz, the PR2's)
        sample_period_s: 0.005        # contact sampling for frames, metrics and slip speed
        noise_n: 0.002                # sensor noise per cell, N (standard deviation)
        baseline_n: 0.02              # sensor offset per cell, N (removed by zeroing)
        slip_gain_n_per_mps: 10.0     # slip vibration amplitude per pad per m/s of slip speed
        slip_vibration_max_n: 0.5     # cap of that amplitude, N
        slip_event_speed_mps: 0.005   # ground-truth slip speed counted in `slip_events`
        crush_time_s: 0.05            # time over crush_force_n that crushes a fragile object
        velocity_gain: 5000.0         # K_D of the PR2 servo, N s/m (see "Controller" below)
        friction_effort: 0.0          # Coulomb feed-forward, N (robot 7; the sim fingers have no friction)
        max_effort_n: 70.0            # finger actuator limit, N (default: the gripper's default_force_n)
        max_finger_speed_mps: 0.1     # speed limit of each finger under the controller, m/s
        finger_contact_stiffness: 30000   # finger pad contact stiffness, N/m (default: the URDF's 30000)
        finger_contact_damping: 100   # finger pad contact damping, N s/m (default: the URDF's 1000)
        controller: {}                # other ControllerParams overrides (PR2 names: close_speed, ...)
        faults:                       # injected fingertip faults (tests, scenario variants)
          - {at_s: 5.0, finger: left, kind: dropout}     # finger: left | right | both
          # kind: dropout (all cells 0) | frozen (last frame repeated) | stopped (no more frames)
          #       | noise (+ Gaussian noise of amplitude_n per cell, default 0.05 N: degraded, not lost)
          # optional: duration_s (default: to the end), gripper (default: every gripper)

**Pressure arrays.** Each finger pad of the robot description (``gripper.pads``: the pad link and
the pad frame in it, and the pad geometry; the Panda's: 17.4 mm wide, 18 mm long, 5.8 mm x 3.6 mm
cells; the WSG 50's: 19 mm x 20 mm) carries a PR2-style array of 22 cells (layout in
:mod:`~py_trees_manipulation.control.tactile`): the 3 x 5 pad covers the finger's inner pad face
(row 0 at the tip); the edge cells are the back (0), the two sides (1, 6), the tip corners (2, 5)
and the tip face (3, 4). Every ``sample_period_s`` one ``getContactPoints(bodyA=robot)`` (and, when
a finger touches something, one ``getLinkStates`` for both pad links) maps each pad-link contact to
a cell by its point (``positionOnA``) and its surface normal in the pad frame (:func:`cell_of`: the
face the normal points out of, then the pad cell by position) and adds its normal force; contacts
on the inner face beyond the pad count on the nearest pad row. This runs whether or not the controller is
installed, so the telemetry and metrics of a plain ``GripperCommand`` grasp read its fingertip forces. Every
``frame_period_s`` a frame goes to the controller: the latest cell forces plus ``baseline_n`` per
cell (a finger whose pad sums to exactly 0 counts as a broken sensor on the PR2), Gaussian noise of
``noise_n`` per cell, clipped at 0.

**Sensor faults.** ``faults`` changes the frames the controller gets from sim time ``at_s`` on
(an event ``tactile: <gripper>: fault injected: ...`` marks it). The controller treats a dropout at
once, frames that stop for ``sensor_timeout`` (five frame periods, at least 0.2 s) and a frozen
array after ``sensor_frozen_time`` (0.25 s; on because the cells carry ``noise_n``, so live frames
never repeat; off with ``noise_n: 0``) as a lost sensor: the running tactile action ends ABORTED
with the reason and the gripper holds its gap with at most the last good pad force
(:class:`~py_trees_manipulation.control.gripper_controller.Pr2GripperController`, "Sensor loss";
an event ``tactile: <gripper>: left fingertip sensor lost ...`` and the metric ``sensor_losses``).
Noise is not a loss: the controller keeps servoing on the noisy signal.

**Slip.** Rigid Coulomb contact makes no vibration, so slip is synthesised: at each sample the
tangential speed of the touched body relative to the finger at each contact point is computed
(``v_obj + w_obj x r - v_finger - w_finger x r``, normal part removed); the largest since the last
frame gives a pad vibration of ``min(slip_gain * speed, slip_vibration_max)`` newtons with
alternating sign from frame to frame (12.2 Hz, the frame Nyquist rate, where the 5 Hz high-pass has
unit gain and the 0.8-5 Hz band-pass almost none), spread over the pad cells in proportion to their
force and at most the pad's force (a contact cannot vibrate by more than it presses with; no pad
force, no vibration). The default gain gives 0.1 N per pad at 10 mm/s, above the slip threshold
``clamp(0.007 F, 0.048, 0.2)`` of a hold up to ~14 N. As on the robot, the slip test is blind for
a few frames after the grip force changes (band-pass content over 0.18 N).

**Palm accelerometer.** While an event-detector command is active (EventDetector, or Release
waiting for its event: the only consumers of the acceleration), the palm link's linear velocity
(``getLinkState(computeLinkVelocity=1)``) is finite-differenced at the physics rate (1 kHz, one
sample per control cycle; the PR2 samples at 3 kHz, three per cycle); the sample is the specific
force ``a - g`` in the hand frame, as an accelerometer reads it, so at rest it reads +9.81 m/s^2
upwards. The controller's band-pass (first-order Chebyshev-I, 5 Hz to 450 Hz at 1 kHz; the PR2's
5 Hz-1 kHz at 3 kHz) removes gravity and slow arm motions. Reading it every N steps would put the
Nyquist frequency at 500/N Hz, under the 450 Hz band edge, and spread a contact jolt (a velocity
step within one physics step) over N ms, dividing its band-passed peak by about N: so it is read
every step, and not at all otherwise (the controller gets ``palm_acceleration=None``; the next
sample re-seeds the band-pass at steady state, as at start-up, so arming is not an event).

**Controller.** One :class:`~py_trees_manipulation.control.gripper_controller.Pr2GripperController`
per gripper (``ControllerParams.for_gripper`` with the description's opening, plus the overrides
above) is installed with
:meth:`SimGripper.set_controller` when a PR2 action starts and stays installed (SlipServo keeps
holding after Grab); a plain ``gripper_action`` goal removes it and goes back to the position
motors. Each physics step it gets a :class:`SensorSample` (gap, gap speed, applied effort, a new
frame when one is due, the accelerometer sample) and its :class:`ActuatorCommand` is applied. The
PR2 law ``E = -kp (x - x_d) - kd (v - v_d)`` with kp = 20000 N/m and kd = 5000 N s/m is heavily
overdamped (``kd / kp`` = 0.25 s): with the finger's 0.1 kg it is a first-order servo
``v = v_d + kp / kd (x_d - x)``, and explicit damping of 5000 N s/m on a 0.1 kg finger at 1 kHz
would be unstable. So each finger gets a ``VELOCITY_CONTROL`` motor (solved implicitly by PyBullet)
with target ``v / 2`` and force limit ``max_effort_n`` (or the command's ``max_effort``): blocked by
an object it pushes with up to that force, and the force on the object is set by the object's
compliance, as the PR2 force servo expects. Fixed-effort commands (the SlipServo "empty" close, B12)
are applied as joint torques. ``friction_effort`` is 0: the simulated finger joints have no gear
friction to cancel. The PR2's effort is reported (``joint_effort``) as the motors' applied force.

**Hardness.** The URDF gives the finger pads contact damping 1000 N s/m, which makes every contact
viscous (Bullet adds the two bodies' dampings and puts their stiffnesses in series); scenes that
use object ``contact_stiffness`` for hardness should set ``finger_contact_damping`` to about 100, so
a soft object (3000 N/m) gives a contact force of about 1 N at FindContact and a hard one
(30000 N/m) several newtons, and Grab's hold force follows.

**Actions** (``grippers[name].send_goal``): ``find_contact``, ``force_servo``, ``slip_servo``,
``grab``, ``release``, ``event_detector``, with goals ``PR2Gripper<X>Goal`` (or the bare
``PR2Gripper<X>Command``), feedback ``PR2Gripper<X>Feedback`` once per ``advance`` and result
``PR2Gripper<X>Result``. The goal status follows the controller's action layer (see its module
docstring for the fixed robot bugs). A cancelled or pre-empted tactile goal ends PREEMPTED and the
gripper *holds* (the controller keeps its mode; FIND_CONTACT becomes a position hold at the current
gap), the backend's convention for every resource; the robot's servers instead call
``stop_motor_output`` and the gripper goes limp. So a tree can pre-empt SlipServo (or send Release
while it holds) without dropping the object.

**Fragile objects.** An object with ``crush_force_n`` is crushed when one finger presses on it with
more than that normal force for ``crush_time_s``: an event ``tactile: <name> crushed`` is emitted
and it turns yolk yellow.

Metrics:

- ``max_fingertip_force_n``: largest normal force one finger put on movable objects, sampled every
  ``sample_period_s``, N. ``crushed`` (any fragile object crushed) and ``crushed_objects``.
- ``max_grip_effort_n``: largest squeeze force the finger actuators applied (the applied
  virtual-joint effort, closing: the PR2 controller's every cycle, the position motors' of
  ``gripper_action`` every sample while a finger touches something), N: at most the robot
  description's gripper force limit, to which ``max_effort`` is clamped. The controller bounds it
  by ``fingertip_force_limit`` in SlipServo and Grab; ``max_fingertip_force_n`` may exceed it in a
  contact transient (a swinging or wedging object hitting a finger: a one-step impulse of the
  soft contact, not a squeeze).
- ``slip_events``: ground-truth slip episodes: a gripped object slipping faster than
  ``slip_event_speed_mps`` at the pads; an episode ends after one frame period without slip (the
  detector's resolution). ``slip_events_detected``: episodes during which (or within that frame
  period after) the controller flagged slip; ``slip_events_missed``: episodes while it listened
  (SlipServo, or a slip-triggered event armed) that it did not flag. ``slip_detections``: onsets
  of the controller's slip flag.
- ``sensor_losses``: fingertip sensor losses the controllers acted on.
- With a target object: ``place_impact_n`` (peak normal force between the target and any non-robot
  body after the gripper lifted it, N, over single 1 ms physics steps; the static weight of a
  set-down object is included). PyBullet's contacts are rigid, so the peak is the impulse of the
  touch-down spread over one step and grows with the speed the object arrives at, whatever force
  guard stops the arm after it: a 0.2 kg mug set down at 0.05 m/s reads about 120 N, at 0.01 m/s
  about 50 N, the PR2 place (Release on table contact) about 12 N; compare runs with it, not with
  ``m g``); ``pad_force_imbalance_n`` (the largest
  |left - right| pad force on the target, over samples where both pads touch it, averaged over one
  frame period, N: for a held object it is what its acceleration and a table contact explain, a
  few newtons; a palm pressing the object into the table while one finger pushes it shows tens);
  ``grip_needed_n`` (``m g / (2 mu)``: the static grip per pad that holds the target, ``mu`` the
  product of its and the pads' lateral friction; lifting with acceleration ``a`` needs
  ``m (g + a) / (2 mu)``), ``grip_force_limit_n`` (the first gripper's ``fingertip_force_limit``,
  else ``max_effort_n``, or the force limit of the last ``GripperCommand`` that closed it when that
  is lower) and ``grip_margin`` (their ratio: below about 1.3 the lift's acceleration is not held).

Telemetry ``gripper/<name>`` adds ``left_fingertip_force_n``, ``right_fingertip_force_n`` (the
controller's zeroed pad forces while it runs; otherwise the pad cells of the latest contact sample,
so a plain ``GripperCommand`` grasp reads its squeeze too), ``force_setpoint_n`` (the force servo's
set-point; for a plain ``gripper_action`` the motors' force limit) and ``mode`` (the realtime state
name, or ``GRIPPER_ACTION``). ``backend.extensions["tactile"].grippers[name].controller`` is the
controller (e.g. ``grab_contact_force``, ``grab_hold_force``, ``sensor_lost_reason``);
``backend.extensions["tactile"].add_fault(SensorFault(...))`` injects a fault from a script.

**Frame phase.** The fingertip frames run free of the controller on the robot, so where they fall
as FindContact closes is arbitrary, and the contact force it stops at (hence Grab's hardness-chosen
hold) depends on it: up to ``close_speed * frame_period_s`` of extra squeeze (0.8 mm, 2.6 N on the
egg of ``examples/fragile_grasp.yaml``). When FindContact starts closing the next frame comes after
a random part of a frame period (drawn from the scene seed), so a run's forces depend on its seed
but not on the tree's tick rate or when the goal was sent.
"""

from __future__ import annotations

from ..bullet import _quiet_import  # noqa: F401  (first: pybullet's import banner)

import math
from typing import Any, Optional

import numpy as np
import pybullet as pb

from ..control.gripper_controller import ActionState, Pr2GripperController, SensorSample
from ..control.tactile import NUM_CELLS, PAD_CELLS, PAD_COLS, PAD_ROWS
from ..msgs.actions import GoalHandle, GoalStatus
from ..msgs.gripper_sensor import ACTIONS, PR2GripperSensorRTState
from ..robots import PadGeometry
from .backend import SimBackend
from .extensions import register_extension
from .gripper import SimGripper
from .resources import _Execution
from ..scene.spec import SceneError
from ..scene.sections.tactile import (FAULT_FINGERS, FAULT_KINDS, SECTION, SensorFault, TactileConfig,  # noqa: F401
                               parse_tactile)
RT = PR2GripperSensorRTState

CRUSHED_RGBA = (0.95, 0.8, 0.15, 1.0)
PAD_FIRST = PAD_CELLS.start


class PadCells:
    """The 22 PR2 cells laid on one pad geometry (:class:`~py_trees_manipulation.robots.PadGeometry`),
    with the figures :meth:`cell` needs precomputed (it runs for every finger contact sample)."""

    __slots__ = ("half_w", "half_l", "cell_w", "cell_l", "tip_face", "side", "back", "corner")

    def __init__(self, pad: PadGeometry):
        self.half_w = pad.width_m / 2
        self.half_l = pad.length_m / 2
        self.cell_w = pad.width_m / PAD_COLS
        self.cell_l = pad.length_m / PAD_ROWS
        self.tip_face = pad.tip_face_m
        self.side = pad.side_m
        self.back = pad.back_m
        self.corner = self.half_w - pad.corner_m

    def cell(self, x: float, y: float, z: float, normal: Optional[tuple[float, float, float]] = None) -> int:
        """See :func:`cell_of`."""
        if normal is not None:
            nx, ny, nz = normal
            ax, ay, az = abs(nx), abs(ny), abs(nz)
            if az >= ax and az >= ay:
                if nz > 0:
                    return self._tip(x)
            elif ax >= ay:
                return 1 if nx < 0 else 6
            elif ny > 0:
                return 0
            else:
                return self._pad(x, z)
        if y > self.back:
            return 0
        if z > self.tip_face:
            return self._tip(x)
        if abs(x) > self.side:
            return 1 if x < 0 else 6
        return self._pad(x, z)

    def _tip(self, x: float) -> int:
        if abs(x) > self.corner:
            return 2 if x < 0 else 5
        return 3 if x < 0 else 4

    def _pad(self, x: float, z: float) -> int:
        col = min(PAD_COLS - 1, max(0, int((x + self.half_w) / self.cell_w)))
        row = min(PAD_ROWS - 1, max(0, int((self.half_l - z) / self.cell_l)))
        return 7 + PAD_COLS * row + col


def cell_of(x: float, y: float, z: float, normal: Optional[tuple[float, float, float]] = None, *,
            pad: PadGeometry) -> int:
    """PR2 cell index (0..21) of a contact point ``(x, y, z)`` in the **pad frame**, metres.

    Pad frame (:mod:`py_trees_manipulation.robots.description`): origin at the pad centre on the
    finger's inner surface, z towards the fingertip, y out of the back of the finger (the inner
    surface's outward normal is -y), x across. ``pad`` is the robot description's pad geometry.

    With ``normal`` (the finger surface's outward unit normal at the point, same frame), the face is
    chosen by the normal's dominant axis: ``+z`` the tip face (tip 3/4 or corner 2/5 by ``x``),
    ``+-x`` a side (1 for ``-x``, 6 for ``+x``), ``+y`` the back (0), ``-y`` the inner face: the pad
    cell ``7 + 3 row + col`` of ``(x, z)`` (row 0 at the tip), clamped to the pad, so a grasp on the
    inner face beyond the pad (e.g. a mug's side at the fingertips) still loads the pad, as the PR2
    pad's pressure cells feel any normal load on the gripping surface. A normal along ``-z`` (no
    sensor there) falls back to the position rules.

    Position rules (``normal`` None): back (``y > back_m``) -> 0; tip face (``z > tip_face_m``) ->
    tip or corner (the outer ``corner_m``) by ``x``; sides (``|x| > side_m``) -> 1/6; otherwise the
    pad cell (points beyond the pad clamp to its first or last row).
    """
    return PadCells(pad).cell(x, y, z, normal)


# ------------------------------------------------------------------------------------------------
# per-gripper sensing and the controller adapter
# ------------------------------------------------------------------------------------------------
class GripperTactile:
    """Sensors and PR2 controller of one gripper.

    Attributes:
        gripper: the :class:`SimGripper`.
        controller: its :class:`Pr2GripperController` (persistent; installed only while needed).
        cell_forces: shape (2, 22), latest sampled normal force per cell, N (no offset or noise).
        finger_object_force: shape (2,), latest normal force of each finger on movable objects, N.
        last_frames: shape (2, 22), the last frames sent to the controller, N.
        effort: the last applied virtual-joint effort, N (negative closes).
    """

    def __init__(self, ext: "TactileSensing", gripper: SimGripper):
        self.ext = ext
        self.gripper = gripper
        robot = gripper.robot
        self.body, self.client = robot.body, robot.client
        self.fingers = list(robot.finger_links)
        self.finger_joints = list(robot.finger_joints)
        self._travel, self._closed, self._g0 = robot.finger_travel, robot.finger_closed, robot.closed_gap
        self.hand_link = robot.palm_link
        gd = robot.model.gripper
        self.cells_of = PadCells(gd.pad)
        # each pad frame in its link frame: origin (3,) and rotation (row-major 9)
        self._pads = [(tuple(p.pose[:3, 3]), tuple(p.pose[:3, :3].ravel())) for p in gd.pads]
        self.cfg = ext.cfg
        self.controller = Pr2GripperController(ext.cfg.controller_params(gripper.max_gap_m, gripper.min_gap_m))
        self._cells: Any = [[0.0] * NUM_CELLS, [0.0] * NUM_CELLS]  # latest sample, lists (arrays on demand)
        self._obj_force = [0.0, 0.0]
        self._cells_array: Optional[np.ndarray] = None
        self.plain_force_limit = 0.0  # force limit of the last plain gripper_action's motors, N
        self.slip_speed = [0.0, 0.0]           # largest slip speed per finger since the last frame, m/s
        self.object_slip: dict[int, float] = {}  # gripped body -> slip speed, latest sample
        self.gripped: set[int] = set()
        self.last_frames = self._baseline_frames()
        self.effort = 0.0
        self.installed = False
        self._pending: Optional[tuple[Optional[np.ndarray], Optional[np.ndarray]]] = None
        # injected faults (scene tactile.faults) for this gripper, and their state
        self.faults = [f for f in self.cfg.faults if f.gripper in (None, gripper.name)]
        self._faults_on: dict[int, Optional[np.ndarray]] = {}   # fault index -> frozen frames (or None)
        self._fault_rng = np.random.default_rng(ext.backend.seed + 104729)
        self._losses = 0
        # the frame clock: frames at the steps n with (n - frame_offset) % frame_every == 0
        self.frame_offset = 0
        self._phase_rng = np.random.default_rng(ext.backend.seed + 7907 + len(ext.grippers_so_far))
        ext.grippers_so_far.append(self)
        self._state = RT.DISABLED
        self._frame_count = 0
        self._v_prev: Optional[tuple[float, float, float]] = None
        self._slip_flag = False
        self._gt_slipping = False
        self._episode_open = False       # a ground-truth slip episode is going on
        self._episode_detected = False   # ... and the controller has seen slip during it
        self._episode_listened = False   # ... and it was listening (SlipServo, or a slip event armed)
        self._quiet_since: Optional[float] = None
        self._imb: list[float] = []       # left - right target pad force, the last frame period's samples
        self._imb_len = max(1, int(round(self.cfg.frame_period_s / self.cfg.sample_period_s)))
        self._touching = True     # the first sample() writes the zero state
        self._lim = float(self.cfg.max_effort_n if self.cfg.max_effort_n is not None else robot.model.default_grip_force_n)
        self._vmax = float(self.cfg.max_finger_speed_mps)
        self._motors_off = False  # the finger velocity motors are switched off (torque mode)
        self._dt = ext.backend.dt
        # the sensors' start-up zeroing, with nothing touching the fingers (the PR2's first frame)
        self.controller.pressure.step(0.001, self.last_frames[0], self.last_frames[1])

    @property
    def cell_forces(self) -> np.ndarray:
        """Shape (2, 22): the latest sampled normal force per cell, N (built on first read per sample)."""
        if self._cells_array is None:
            self._cells_array = np.array(self._cells)
        return self._cells_array

    @property
    def finger_object_force(self) -> np.ndarray:
        """Shape (2,): the latest normal force of each finger on movable objects, N."""
        return np.array(self._obj_force)

    def pad_forces_n(self) -> tuple[float, float]:
        """(left, right) sums of the latest sampled pad-cell forces (cells 7-21), N: no numpy."""
        c = self._cells
        return sum(c[0][7:]), sum(c[1][7:])

    def _baseline_frames(self) -> np.ndarray:
        return np.full((2, NUM_CELLS), self.cfg.baseline_n)

    # ---- contact sampling (post-step) ---------------------------------------------------------
    def sample(self) -> None:
        """Read both fingers' contacts: cell forces, forces on objects, slip speeds, crush input.

        One ``getContactPoints`` for the robot body and, when a finger touches something, one
        ``getLinkStates`` for both fingers; each contact's cell is chosen by its point and normal
        (:func:`cell_of`). Slip speeds (two more PyBullet calls per touched body, cached per
        sample) are computed only where they are used: every contact over 0.02 N while the
        controller runs (pad vibration), else only on bodies gripped by both fingers (``slip_events``).
        """
        ext = self.ext
        body, client = self.body, self.client
        f0, f1 = self.fingers
        mine = [c for c in pb.getContactPoints(bodyA=body, physicsClientId=client)
                if (c[3] == f0 or c[3] == f1) and c[2] != body]
        if not mine:
            if self._touching:
                self._cells = [[0.0] * NUM_CELLS, [0.0] * NUM_CELLS]
                self._obj_force = [0.0, 0.0]
                self._cells_array = None
                self.gripped = set()
                self._gt_slipping = False
                self._end_episode()
                self._imb.clear()
                self._touching = False
            return
        if not self.installed:   # position motors (gripper_action): their applied squeeze, N
            grip = self.gripper.state().grip_force_n
            if grip > ext.max_grip_effort:
                ext.max_grip_effort = grip
        self._touching = True
        cells = [[0.0] * NUM_CELLS, [0.0] * NUM_CELLS]
        obj_force = [0.0, 0.0]
        target, target_pad = ext._target, [0.0, 0.0]
        per_object: dict[int, list[float]] = {}
        touched: tuple[set[int], set[int]] = (set(), set())
        movable = ext.movable
        states = pb.getLinkStates(body, self.fingers, computeLinkVelocity=1, physicsClientId=client)
        frames = []
        for st, (op, Rp) in zip(states, self._pads):
            # the pad frame in the world: link frame (URDF link origin) times the pad pose
            Rl, ol = pb.getMatrixFromQuaternion(st[5]), st[4]
            R = [Rl[r] * Rp[c] + Rl[r + 1] * Rp[c + 3] + Rl[r + 2] * Rp[c + 6] for r in (0, 3, 6) for c in (0, 1, 2)]
            o = (ol[0] + Rl[0] * op[0] + Rl[1] * op[1] + Rl[2] * op[2],
                 ol[1] + Rl[3] * op[0] + Rl[4] * op[1] + Rl[5] * op[2],
                 ol[2] + Rl[6] * op[0] + Rl[7] * op[1] + Rl[8] * op[2])
            frames.append((o, R))
        cell = self.cells_of.cell
        candidates = []  # (finger, contact) pairs whose slip speed may be needed
        for c in mine:
            i = 0 if c[3] == f0 else 1
            o, R = frames[i]
            other, fn, p, n = c[2], c[9], c[5], c[7]
            dx, dy, dz = p[0] - o[0], p[1] - o[1], p[2] - o[2]
            lx = R[0] * dx + R[3] * dy + R[6] * dz
            ly = R[1] * dx + R[4] * dy + R[7] * dz
            lz = R[2] * dx + R[5] * dy + R[8] * dz
            # contactNormalOnB points from the other body into the finger: the outward normal is -n
            mx = -(R[0] * n[0] + R[3] * n[1] + R[6] * n[2])
            my = -(R[1] * n[0] + R[4] * n[1] + R[7] * n[2])
            mz = -(R[2] * n[0] + R[5] * n[1] + R[8] * n[2])
            k = cell(lx, ly, lz, (mx, my, mz))
            cells[i][k] += fn
            if other == target and k >= PAD_FIRST:
                target_pad[i] += fn
            if other in movable:
                obj_force[i] += fn
                forces = per_object.get(other)
                if forces is None:
                    forces = per_object[other] = [0.0, 0.0]
                forces[i] += fn
                touched[i].add(other)
            if fn > 0.02:
                candidates.append((i, c))
        self._cells, self._obj_force, self._cells_array = cells, obj_force, None
        gripped = touched[0] & touched[1]
        self.gripped = gripped
        m = obj_force[0] if obj_force[0] > obj_force[1] else obj_force[1]
        if m > ext.max_fingertip_force:
            ext.max_fingertip_force = m
        if target_pad[0] > 0.0 and target_pad[1] > 0.0:   # both pads on the target object
            self._imbalance_window(target_pad[0] - target_pad[1])
        elif self._imb:
            self._imb.clear()
        for other, forces in per_object.items():
            ext.squeeze(other, forces[0] if forces[0] > forces[1] else forces[1])
        installed = self.installed
        slip_obj: dict[int, float] = {}
        best = [0.0, 0.0]
        for i, c in candidates:
            other = c[2]
            if not installed and other not in gripped:
                continue
            st = states[i]
            com, vf, wf = st[0], st[6], st[7]
            p = c[5]
            v_o, w_o, c_o = ext.body_motion(other, c[4])
            rox, roy, roz = p[0] - c_o[0], p[1] - c_o[1], p[2] - c_o[2]
            rfx, rfy, rfz = p[0] - com[0], p[1] - com[1], p[2] - com[2]
            rx = (v_o[0] + w_o[1] * roz - w_o[2] * roy) - (vf[0] + wf[1] * rfz - wf[2] * rfy)
            ry = (v_o[1] + w_o[2] * rox - w_o[0] * roz) - (vf[1] + wf[2] * rfx - wf[0] * rfz)
            rz = (v_o[2] + w_o[0] * roy - w_o[1] * rox) - (vf[2] + wf[0] * rfy - wf[1] * rfx)
            n = c[7]
            vn = rx * n[0] + ry * n[1] + rz * n[2]
            tx, ty, tz = rx - vn * n[0], ry - vn * n[1], rz - vn * n[2]
            speed = math.sqrt(tx * tx + ty * ty + tz * tz)
            if speed > best[i]:
                best[i] = speed
            if other in movable and speed > slip_obj.get(other, 0.0):
                slip_obj[other] = speed
        for i in (0, 1):
            if best[i] > self.slip_speed[i]:
                self.slip_speed[i] = best[i]
        limit = self.cfg.slip_event_speed_mps
        slipping = False
        for other in gripped:
            if slip_obj.get(other, 0.0) > limit:
                slipping = True
                break
        self._gt_slipping = slipping
        if slipping:
            if not self._episode_open:          # a new slip episode (ground truth)
                self._episode_open, self._episode_detected = True, self._slip_flag
                self._episode_listened = False
                ext.slip_events += 1
            if not self._episode_listened and installed:
                ctl = self.controller
                self._episode_listened = ctl.state == RT.SLIP_SERVO or (
                    ctl.event_action is not None and not ctl.event_action.done and ctl.events.uses_tactile)
            self._quiet_since = None
        elif self._episode_open:
            now = ext.backend.now()
            if self._quiet_since is None:
                self._quiet_since = now
            elif now - self._quiet_since >= self.cfg.frame_period_s - 1e-9:
                self._end_episode()

    def _imbalance_window(self, diff: float) -> None:
        """``pad_force_imbalance_n``: |left - right| target pad force averaged over the samples of
        one frame period (the fingertip frames' resolution: a one-step contact-solver impulse
        during an impact does not count), over runs of samples with both pads on the target."""
        w = self._imb
        w.append(diff)
        if len(w) > self._imb_len:
            del w[0]
        if len(w) == self._imb_len:
            d = abs(sum(w)) / len(w)
            if d > self.ext.pad_force_imbalance:
                self.ext.pad_force_imbalance = d

    def _end_episode(self) -> None:
        """The slip episode is over (one frame period without slip, or the object let go)."""
        if self._episode_open and self._episode_detected:
            self.ext.slip_events_detected += 1
        elif self._episode_open and self._episode_listened:
            self.ext.slip_events_missed += 1
        self._episode_open = self._episode_detected = self._episode_listened = False
        self._quiet_since = None

    def make_frame(self) -> None:
        """Build the next pair of pressure frames (N per cell) for the controller."""
        cfg = self.cfg
        frames = self.cell_forces + cfg.baseline_n
        if cfg.noise_n > 0:
            frames += self.ext.frame_noise()
        self._frame_count += 1
        sign = 1.0 if self._frame_count % 2 else -1.0
        speeds = self.slip_speed
        for i in range(2):
            amp = min(cfg.slip_gain_n_per_mps * speeds[i], cfg.slip_vibration_max_n)
            if amp > 0:
                pad = self.cell_forces[i, PAD_CELLS]
                total = float(pad.sum())
                if total > 1e-6:   # a contact vibrates by at most the force it presses with
                    frames[i, PAD_CELLS] += sign * min(amp, total) * (pad / total)
        self.slip_speed = [0.0, 0.0]
        np.maximum(frames, 0.0, out=frames)
        if self._faults_on:
            left, right = self._faulty(frames)
            if left is not None:
                self.last_frames[0] = left
            if right is not None:
                self.last_frames[1] = right
            self._pending = (left, right)
            return
        self.last_frames = frames
        self._pending = (frames[0], frames[1])

    def _rephase_frames(self) -> None:
        """A new frame-clock phase when FindContact starts closing: the next frame comes after a
        random 1..frame_every steps (seeded), as on the robot, whose fingertip frames run free of
        the controller, at a phase unrelated to when the tree sent the goal."""
        ext = self.ext
        fe = ext._frame_every
        self.frame_offset = (ext._n + 1 + int(self._phase_rng.integers(0, fe))) % fe
        n = ext._n
        ext._due = min(ext._due, n - (n - self.frame_offset) % fe + fe)

    # ---- injected faults ------------------------------------------------------------------------
    def update_faults(self) -> None:
        """Switch the injected faults on and off at their sim times (an event each)."""
        t = self.ext.backend.now()
        for k, f in enumerate(self.faults):
            on = f.active(t)
            if on and k not in self._faults_on:
                self._faults_on[k] = self.last_frames.copy() if f.kind == "frozen" else None
                self.ext.backend.emit_event(
                    "tactile", f"{self.gripper.name}: fault injected: {f.finger} fingertip {f.kind}"
                               + (f" ({f.amplitude_n:g} N per cell)" if f.kind == "noise" else ""))
            elif not on and k in self._faults_on:
                del self._faults_on[k]
                self.ext.backend.emit_event("tactile", f"{self.gripper.name}: fault over: {f.finger} fingertip {f.kind}")

    def _faulty(self, frames: np.ndarray) -> tuple[Optional[np.ndarray], Optional[np.ndarray]]:
        out: list[Optional[np.ndarray]] = [frames[0], frames[1]]
        for k, frozen in self._faults_on.items():
            f = self.faults[k]
            for i in f.fingers():
                if out[i] is None:
                    continue
                if f.kind == "dropout":
                    out[i] = np.zeros(NUM_CELLS)
                elif f.kind == "frozen":
                    out[i] = frozen[i].copy()
                elif f.kind == "noise":
                    out[i] = np.maximum(out[i] + self._fault_rng.normal(0.0, f.amplitude_n, NUM_CELLS), 0.0)
                else:  # stopped
                    out[i] = None
        return out[0], out[1]

    # ---- the controller adapter (pre-step, from SimGripper.set_controller) ----------------------
    def install(self) -> None:
        """Install the controller on the gripper (no-op when installed); re-seat its filters."""
        if self.installed:
            return
        ctl = self.controller
        pr = ctl.pressure
        self.sample()
        self.make_frame()
        frames, self._pending = self._pending, None
        pr.step(0.001, frames[0], frames[1])
        pr.hp.reset(pr.forces.ravel())
        pr.bp.reset(pr.forces.ravel())
        pr.forces_hp[:] = 0.0
        pr.forces_bp[:] = 0.0
        pr._recompute_sums()
        ctl.acceleration._started = False
        self._v_prev = None
        st = self.gripper.state()
        self.effort = st.joint_effort_n
        self._motors_off = False
        self.installed = True
        self.gripper.set_controller(self)

    def uninstall(self) -> None:
        """Remove the controller (the caller switches the fingers back to position motors)."""
        if not self.installed:
            return
        self.installed = False
        for state in (self.controller.motion_action, self.controller.event_action):
            if state is not None and not state.done:
                self.controller.cancel(state)
        self.gripper.set_controller(None)

    def _palm_acceleration(self, dt: float) -> tuple[float, float, float]:
        st = pb.getLinkState(self.body, self.hand_link, computeLinkVelocity=1, physicsClientId=self.client)
        v = st[6]
        prev = self._v_prev
        self._v_prev = v
        g = self.ext.gravity
        if prev is None:
            ax = ay = az = 0.0
        else:
            ax, ay, az = (v[0] - prev[0]) / dt, (v[1] - prev[1]) / dt, (v[2] - prev[2]) / dt
        fx, fy, fz = ax - g[0], ay - g[1], az - g[2]
        R = pb.getMatrixFromQuaternion(st[5])
        return (R[0] * fx + R[3] * fy + R[6] * fz, R[1] * fx + R[4] * fy + R[7] * fz,
                R[2] * fx + R[5] * fy + R[8] * fz)

    def step(self, gripper: SimGripper) -> None:
        """One 1 kHz controller cycle before the physics step (called by the backend).

        Per cycle: one ``getJointStates`` (both fingers: gap, gap speed, applied effort), the
        controller step, one ``setJointMotorControlArray``; the palm accelerometer (one more
        ``getLinkState``) only while an event-detector command (EventDetector or Release) is active.
        """
        dt = self._dt
        (x0, v0, _f0, e0), (x1, v1, _f1, e1) = pb.getJointStates(self.body, self.finger_joints,
                                                                  physicsClientId=self.client)
        # joint space -> the virtual gap joint (the Panda's map is the identity: x = x0 + x1)
        (s0, s1), (c0, c1) = self._travel, self._closed
        x = self._g0 + s0 * (x0 - c0) + s1 * (x1 - c1)
        frames = self._pending
        if frames is None:
            left = right = None
        else:
            self._pending = None
            left, right = frames
        ctl = self.controller
        ev = ctl.event_action
        if ev is not None and not ev.done:
            acc: Optional[tuple[float, float, float]] = self._palm_acceleration(dt)
        else:
            acc = None
            self._v_prev = None
        cmd = ctl.step(dt, SensorSample(self.ext.backend.now(), x, s0 * v0 + s1 * v1, self.effort, left, right, acc))
        if ctl.state != self._state:
            if ctl.state == RT.FIND_CONTACT:
                self._rephase_frames()
            self._state = ctl.state
        if ctl.sensor_loss_count != self._losses:
            self._losses = ctl.sensor_loss_count
            self.ext.backend.emit_event("tactile", f"{self.gripper.name}: {ctl.sensor_lost_reason}")
        lim = self._lim
        body, joints, client = self.body, self.finger_joints, self.client
        if cmd.enabled and not cmd.override:
            # the PR2 law is heavily overdamped (kd / kp = 0.25 s): apply it as the implicit
            # first-order servo v = v_d + kp / kd (x_d - x) within the effort limit
            if 0 <= cmd.max_effort < lim:
                lim = cmd.max_effort
            rate = cmd.kp / cmd.kd if cmd.kd > 0 else 1.0 / dt
            vt = 0.5 * (cmd.velocity + rate * (cmd.position - x))
            vmax = self._vmax
            vt = vmax if vt > vmax else (-vmax if vt < -vmax else vt)
            pb.setJointMotorControlArray(body, joints, pb.VELOCITY_CONTROL, targetVelocities=(vt / s0, vt / s1),
                                         forces=(lim * abs(s0), lim * abs(s1)), physicsClientId=client)
            self._motors_off = False
        else:
            if not self._motors_off:
                pb.setJointMotorControlArray(body, joints, pb.VELOCITY_CONTROL, forces=(0.0, 0.0),
                                             physicsClientId=client)
                self._motors_off = True
            if cmd.enabled:
                e = lim if cmd.effort > lim else (-lim if cmd.effort < -lim else cmd.effort)
                pb.setJointMotorControlArray(body, joints, pb.TORQUE_CONTROL, forces=(e * s0, e * s1),
                                             physicsClientId=client)
        gripper._torque_mode = True  # the motors are ours until command_gap
        # the applied virtual-joint effort, read back next cycle (motor force per finger, + opens)
        self.effort = 0.5 * (e0 / s0 + e1 / s1)
        if -self.effort > self.ext.max_grip_effort:
            self.ext.max_grip_effort = -self.effort
        slip = ctl.slip_detected or ctl.events.slip_event
        if slip and not self._slip_flag:
            self.ext.slip_detections += 1
        if slip:
            self._episode_detected = self._episode_open
        self._slip_flag = slip

    # ---- telemetry ------------------------------------------------------------------------------
    def setpoint_n(self) -> float:
        """Force set-point per fingertip, N: the force servo's (FORCE_SERVO, SLIP_SERVO; floored at
        ``force_lightest``), 0 in the controller's other modes; without the controller (plain
        ``gripper_action``), the position motors' force limit, which a finger blocked by an object
        squeezes with (0 before the first plain command)."""
        ctl = self.controller
        if not self.installed:
            return self.plain_force_limit
        lightest = ctl.params.force_lightest
        if ctl.state == RT.FORCE_SERVO:
            return max(ctl.force_target, lightest)
        if ctl.state == RT.SLIP_SERVO:
            return max(ctl.slip_force, lightest)
        return 0.0

    def telemetry(self) -> dict[str, Any]:
        st = self.gripper.state()
        if self.installed:
            f = self.controller.pressure.pad_force
            left, right = float(f[0]), float(f[1])
            mode = self.controller.rtstate.name
            effort = max(0.0, -self.effort)
        else:
            left, right = self.pad_forces_n()
            mode = "GRIPPER_ACTION"
            effort = st.grip_force_n
        return {"gap_m": round(st.gap_m, 6), "effort_n": round(effort, 4),
                "left_fingertip_force_n": round(left, 4), "right_fingertip_force_n": round(right, 4),
                "force_setpoint_n": round(self.setpoint_n(), 4), "mode": mode}


# ------------------------------------------------------------------------------------------------
# action servers
# ------------------------------------------------------------------------------------------------
class _TactileExecution(_Execution):
    """One PR2 gripper sensor goal, mirrored from the controller's :class:`ActionState`."""

    def __init__(self, gripper: SimGripper, handle: GoalHandle, tactile: GripperTactile, name: str,
                 state: ActionState):
        super().__init__(gripper, handle)
        self.tactile = tactile
        self.name = name
        self.state = state
        self.spec = ACTIONS[name]

    def step(self) -> None:
        st = self.state
        if not st.done:
            return
        result = self.spec.result(data=st.result if st.result is not None else self.tactile.controller.feedback(self.name))
        h = self.handle
        if st.status == GoalStatus.SUCCEEDED:
            h.set_succeeded(result, st.reason)
        elif st.status == GoalStatus.ABORTED:
            h.set_aborted(result, st.reason)
        elif st.status == GoalStatus.REJECTED:
            h.set_rejected(st.reason)
        else:
            h.set_preempted(result, st.reason or "preempted")
        self.finish()

    def publish_feedback(self) -> None:
        if not self.handle.done:
            self.handle.publish_feedback(self.spec.feedback(data=self.tactile.controller.feedback(self.name)))

    def stop(self) -> Any:
        """Cancelled or pre-empted: end the controller's action PREEMPTED and keep holding."""
        ctl = self.tactile.controller
        st = self.state
        if not st.done:
            if st is ctl.motion_action:
                ctl._end_motion(GoalStatus.PREEMPTED, "cancelled")
                ctl._pending_find_contact = None
                if ctl.state == RT.FIND_CONTACT:
                    ctl._rt_position(ctl.gap, ctl.max_effort)
            elif st is ctl.event_action:
                ctl.cancel(st)
        return self.spec.result(data=ctl.feedback(self.name))


def _serve(name: str):
    spec = ACTIONS[name]

    def server(gripper: SimGripper, handle: GoalHandle) -> Optional[_Execution]:
        goal = handle.goal
        if isinstance(goal, spec.goal):
            command = goal.command
        elif isinstance(goal, spec.command):
            command = goal
        else:
            raise TypeError(f"{name} takes a {spec.goal.__name__} (or {spec.command.__name__}), "
                            f"got {type(goal).__name__}")
        ext: TactileSensing = gripper.backend.extensions[SECTION]
        tactile = ext.grippers[gripper.name]
        tactile.install()
        ctl = tactile.controller
        state = getattr(ctl, name)(command)
        if state.status == GoalStatus.REJECTED:
            handle.set_rejected(state.reason)
            return None
        return _TactileExecution(gripper, handle, tactile, name, state)

    return server


def _serve_plain_gripper_action(gripper: SimGripper, handle: GoalHandle) -> Optional[_Execution]:
    """``gripper_action`` with the tactile controller removed (position motors, as without sensing)."""
    ext: TactileSensing = gripper.backend.extensions[SECTION]
    tactile = ext.grippers[gripper.name]
    tactile.uninstall()
    execution = SimGripper._serve_gripper_action(gripper, handle)
    goal = handle.goal
    model = gripper.model
    # the force each position motor is limited to (SimGripper.command_gap): what a blocked finger squeezes with
    tactile.plain_force_limit = (model.default_grip_force_n if goal.max_effort < 0
                                 else min(float(goal.max_effort), model.max_grip_force_n))
    return execution


# ------------------------------------------------------------------------------------------------
# the extension
# ------------------------------------------------------------------------------------------------
class TactileSensing:
    """The ``tactile`` simulator extension (see the module docstring).

    Attributes:
        grippers: :class:`GripperTactile` by gripper name.
        crushed: names of crushed objects, in order.
        slip_events, slip_detections: counters (see the module docstring).
        max_fingertip_force, max_grip_effort, place_impact: the metric values so far, N.
    """

    def __init__(self, backend: SimBackend, cfg: Optional[TactileConfig]):
        self.backend = backend
        self.cfg = cfg or TactileConfig()
        self.rng = np.random.default_rng(backend.seed + 7919)
        self._noise: Any = ()
        self._noise_i = 0
        self.gravity = tuple(backend.scene.gravity)
        c = backend.client
        self.movable = {bid for bid in backend._objects.values()
                        if pb.getDynamicsInfo(bid, -1, physicsClientId=c)[0] > 0}
        self.robot_bodies = {g.robot.body for g in backend.grippers.values()}
        self.fragile = {backend._objects[o.name]: (o.name, float(o.crush_force_n))
                        for o in backend.scene.objects if getattr(o, "crush_force_n", None) is not None}
        self._over_since: dict[int, float] = {}
        self.crushed: list[str] = []
        self.max_fingertip_force = 0.0
        self.max_grip_effort = 0.0
        self.pad_force_imbalance = 0.0
        self.slip_events = 0
        self.slip_detections = 0
        self.slip_events_detected = 0
        self.slip_events_missed = 0
        self.place_impact = 0.0
        self._motion_cache: dict[tuple[int, int], tuple[Any, Any, Any]] = {}
        for i, f in enumerate(self.cfg.faults):
            if f.gripper is not None and f.gripper not in backend.grippers:
                raise SceneError((SECTION, "faults", i, "gripper"),
                                 f"no gripper {f.gripper!r}; grippers: {', '.join(sorted(backend.grippers))}")
        self.grippers_so_far: list[GripperTactile] = []
        self._n = 0
        self._frame_every = max(1, int(round(self.cfg.frame_period_s * backend.physics_hz)))
        self._due = 1
        self.grippers = {name: GripperTactile(self, g) for name, g in backend.grippers.items()}
        cfg = self.cfg
        if cfg.finger_contact_stiffness is not None or cfg.finger_contact_damping is not None:
            for g in backend.grippers.values():
                for link in g.robot.finger_links:
                    info = pb.getDynamicsInfo(g.robot.body, link, physicsClientId=c)
                    k = cfg.finger_contact_stiffness if cfg.finger_contact_stiffness is not None else info[9]
                    d = cfg.finger_contact_damping if cfg.finger_contact_damping is not None else info[8]
                    pb.changeDynamics(g.robot.body, link, contactStiffness=k, contactDamping=d, physicsClientId=c)
        for g in backend.grippers.values():
            for name in ACTIONS:
                g.add_action(name, _serve(name))
            g.add_action("gripper_action", _serve_plain_gripper_action)
        hz = backend.physics_hz
        self._sample_every = max(1, int(round(self.cfg.sample_period_s * hz)))
        self._frame_every = max(1, int(round(self.cfg.frame_period_s * hz)))
        self._n = 0
        self._due = min(self._sample_every, self._frame_every)  # next step with a sample or a frame
        self._target = backend._objects.get(backend.scene.task.target_object or "", None)
        self._target_z0: Optional[float] = None
        self._lifted = False
        self._remove_hook = backend.add_step_hook(self._post_step)

    # ---- helpers ----------------------------------------------------------------------------------
    NOISE_BATCH = 64

    def frame_noise(self) -> np.ndarray:
        """The next (2, 22) block of cell noise, N(0, ``noise_n``) newtons.

        Drawn ``NOISE_BATCH`` frames at a time from :attr:`rng`: the same values, in the same order,
        as one draw per frame (numpy fills the batch sequentially), at a fraction of the cost.
        """
        i = self._noise_i
        if i >= len(self._noise):
            self._noise = self.rng.normal(0.0, self.cfg.noise_n, size=(self.NOISE_BATCH, 2, NUM_CELLS))
            i = 0
        self._noise_i = i + 1
        return self._noise[i]

    def body_motion(self, body: int, link: int) -> tuple[Any, Any, Any]:
        """(linear velocity, angular velocity, COM position) of a body's link, world frame, cached per sample."""
        key = (body, link)
        hit = self._motion_cache.get(key)
        if hit is not None:
            return hit
        c = self.backend.client
        if link < 0:
            v, w = pb.getBaseVelocity(body, physicsClientId=c)
            com = pb.getBasePositionAndOrientation(body, physicsClientId=c)[0]
            out = (v, w, com)
        else:
            st = pb.getLinkState(body, link, computeLinkVelocity=1, physicsClientId=c)
            out = (st[6], st[7], st[0])
        self._motion_cache[key] = out
        return out

    def squeeze(self, body: int, force: float) -> None:
        """One sample of the largest finger force on ``body``: crush bookkeeping."""
        frag = self.fragile.get(body)
        if frag is None:
            return
        name, limit = frag
        if name in self.crushed:
            return
        now = self.backend.now()
        if force > limit:
            since = self._over_since.setdefault(body, now)
            if now - since >= self.cfg.crush_time_s - 1e-9:
                self.crushed.append(name)
                pb.changeVisualShape(body, -1, rgbaColor=list(CRUSHED_RGBA), physicsClientId=self.backend.client)
                self.backend.emit_event("tactile", f"{name} crushed: {force:.1f} N on it for "
                                                   f"{(now - since) * 1000:.0f} ms (crush force {limit:g} N)")
        else:
            self._over_since.pop(body, None)

    # ---- the post-step hook --------------------------------------------------------------------------
    def _post_step(self, backend: SimBackend) -> None:
        # samples every sample_every-th step, frames every frame_every-th (and a sample with each);
        # the other steps only compare one counter (and, after a lift, sum the place contacts)
        n = self._n = self._n + 1
        if n >= self._due:
            se, fe = self._sample_every, self._frame_every
            due = n - n % se + se
            framing = None
            for g in self.grippers.values():   # each gripper's frame clock has its own phase
                k = (n - g.frame_offset) % fe
                if k == 0:
                    framing = [g] if framing is None else framing + [g]
                if n - k + fe < due:
                    due = n - k + fe
            self._due = due
            self._motion_cache.clear()
            for g in self.grippers.values():
                g.sample()
            if self._target is not None and not self._lifted:
                self._check_lift()
            if framing is not None:
                for g in framing:
                    if g.faults:
                        g.update_faults()
                    if g.installed:
                        g.make_frame()
        if self._lifted:
            c = backend.client
            total = 0.0
            for cp in pb.getContactPoints(bodyA=self._target, physicsClientId=c):
                if cp[2] not in self.robot_bodies:
                    total += cp[9]
            if total > self.place_impact:
                self.place_impact = total

    def _check_lift(self) -> None:
        if self._lifted:
            return
        target = self._target
        held = False
        for g in self.grippers.values():
            if target in g.gripped:
                held = True
                break
        if not held and self._target_z0 is not None:
            return  # only a held target counts as lifted: its height is not needed
        z = pb.getBasePositionAndOrientation(target, physicsClientId=self.backend.client)[0][2]
        if self._target_z0 is None:
            self._target_z0 = z  # the height at the first sample
        if held and z - self._target_z0 > 0.01:
            self._lifted = True

    # ---- extension interface ------------------------------------------------------------------------
    def metrics(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "max_fingertip_force_n": round(self.max_fingertip_force, 4),
            "max_grip_effort_n": round(self.max_grip_effort, 4),
            "crushed": bool(self.crushed),
            "crushed_objects": list(self.crushed),
            "slip_events": self.slip_events,
            "slip_detections": self.slip_detections,
            "slip_events_detected": self.slip_events_detected + sum(
                1 for g in self.grippers.values() if g._episode_open and g._episode_detected),
            "slip_events_missed": self.slip_events_missed + sum(
                1 for g in self.grippers.values() if g._episode_open and g._episode_listened
                and not g._episode_detected),
            "sensor_losses": sum(g.controller.sensor_loss_count for g in self.grippers.values()),
        }
        if self._target is not None:
            out["place_impact_n"] = round(self.place_impact, 4)
            out["pad_force_imbalance_n"] = round(self.pad_force_imbalance, 4)
            out.update(self._grip_margin())
        return out

    def _grip_margin(self) -> dict[str, float]:
        """``grip_needed_n``: the static grip per pad that holds the target against gravity by
        friction, ``m g / (2 mu)`` (``mu``: the product of the target's and the finger pads'
        lateral friction, as Bullet combines them; lifting with acceleration ``a`` needs
        ``m (g + a) / (2 mu)``); ``grip_force_limit_n``: the first gripper's force limit (the
        controller's ``fingertip_force_limit``, or the actuator's ``max_effort_n``, or the force
        limit of the last position command that closed the fingers when lower: GripperCommand's
        ``max_effort``);
        ``grip_margin``: their ratio (below about 1.2 the lift's acceleration is not held)."""
        c = self.backend.client
        g0 = next(iter(self.grippers.values()))
        info = pb.getDynamicsInfo(self._target, -1, physicsClientId=c)
        mass, mu_obj = float(info[0]), float(info[1])
        mu_pad = float(pb.getDynamicsInfo(g0.body, g0.fingers[0], physicsClientId=c)[1])
        mu = mu_obj * mu_pad
        g = math.sqrt(sum(v * v for v in self.gravity))
        limit = g0.controller.params.fingertip_force_limit
        if limit < 0:
            limit = float(g0._lim)  # the actuator limit (tactile max_effort_n, or the gripper description's)
            closing = g0.gripper.closing_force_n
            if closing is not None:   # a GripperCommand's max_effort squeezed with less
                limit = min(limit, float(closing))
        if mass <= 0 or mu <= 0:
            return {}
        needed = mass * g / (2.0 * mu)
        return {"grip_needed_n": round(needed, 4), "grip_force_limit_n": round(limit, 4),
                "grip_margin": round(limit / needed, 4)}

    def telemetry(self) -> dict[str, dict[str, Any]]:
        return {f"gripper/{name}": g.telemetry() for name, g in self.grippers.items()}

    def add_fault(self, fault: SensorFault) -> None:
        """Inject a fingertip fault from a script (as a ``tactile.faults`` entry; ``at_s`` is sim
        time and may be now or later).

        Raises:
            ValueError: ``fault.gripper`` names no gripper of the scene.
        """
        if fault.gripper is not None and fault.gripper not in self.grippers:
            raise ValueError(f"no gripper {fault.gripper!r}; grippers: {', '.join(sorted(self.grippers))}")
        for name, g in self.grippers.items():
            if fault.gripper in (None, name):
                g.faults.append(fault)

    def close(self) -> None:
        self._remove_hook()

    def reset_run(self) -> None:
        """As built for the backend's new run (:meth:`SimBackend.reset`: the same scene, the new seed)."""
        self._remove_hook()
        self.__init__(self.backend, self.cfg)  # type: ignore[misc]


def _factory(backend: SimBackend, _section: Any = None) -> Optional[TactileSensing]:
    # built for every scene (section=None), so the optional section is read here
    cfg = backend.scene.extra.get(SECTION) or TactileConfig()
    if not cfg.enabled or not backend.grippers:
        return None
    return TactileSensing(backend, cfg)


register_extension(SECTION, _factory, section=None)
