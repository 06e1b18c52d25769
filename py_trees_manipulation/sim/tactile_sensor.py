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
        stick_slip_fraction: 0.03     # while sliding faster than slip_event_speed_mps: at least this x the pad force
        slip_event_speed_mps: 0.005   # ground-truth slip speed counted in `slip_events`
        crush_time_s: 0.05            # time over crush_force_n that crushes a fragile object
        velocity_gain: 5000.0         # K_D of the PR2 servo, N s/m (see "Controller" below)
        friction_effort: 0.0          # Coulomb feed-forward, N (robot 7; the sim fingers have no friction)
        max_effort_n: 70.0            # finger actuator limit, N (default: the gripper's default_force_n)
        max_finger_speed_mps: 0.1     # speed limit of each finger under the controller, m/s
        finger_contact_stiffness: 30000   # finger pad contact stiffness, N/m (default: the URDF's 30000)
        finger_contact_damping: 100   # finger pad contact damping, N s/m (default: the URDF's 1000)
        wrist_mode_hz: 30.0           # the hand's mount mode the palm accelerometer feels (0: a rigid hand)
        wrist_mode_damping_ratio: 0.05    # its damping ratio (see "Palm accelerometer")
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
a cell. A point on the gripping face (within the pad's width and length and behind its inner surface
by at most 0.5 mm: :meth:`PadCells.face`) is placed by where it is, and the pad reads, per touching
body, the points' whole contact force (normal and friction) summed along the pad's normal, spread
over their cells in proportion to each point's push (``_face_pressure`` in :mod:`.tactile_gripper`):
Bullet's manifold keeps a point with the normal it was found with, and the solver splits a grip
between the points' normal and friction rows arbitrarily (on flip_box the pads' normal-force sums
read 24 N (Panda), 15 N (iiwa) and 6.7 N (xArm) apart on a free 0.1 kg box whose pads pushed it
within 1 N of each other). Any other point (a side, the tip, the back, the inner face beyond the
pad) goes by its surface normal in the pad frame (:func:`cell_of`: the face the normal points out
of, then the pad cell by position) and adds its normal force; contacts on the inner face beyond
the pad count on the nearest pad row. This runs whether or not the controller is
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
``clamp(0.007 F, 0.048, 0.2)`` of a hold up to ~14 N. A contact that slides (faster than
``slip_event_speed_mps``, the ground truth's slip) fluctuates by at least ``stick_slip_fraction``
of its pad force, as a sliding rubber pad's does (stick-slip: the friction builds to its static
limit, breaks away to the lower kinetic one, and the pad's compliance turns each drop of the shear
into one of the pressure, ``(mu_s - mu_k) F``: it grows with the grip, as the threshold ``0.007 F``
assumes); 3 % reads 4.3 times the threshold at 7-28 N. Without it a heavy can held hard slid at
5-10 mm/s unfelt (0.05-0.1 N under a 12-20 N grip's 0.08-0.14 N threshold; issue 33). Slower creep
keeps the per-m/s law only, so a block held still while the hand lowers it is not felt to slip. As on the robot, the slip test is blind for
a few frames after the grip force changes (band-pass content over 0.18 N).

**Palm accelerometer.** While an event-detector command is active (EventDetector, or Release
waiting for its event: the only consumers of the acceleration), the palm link's linear velocity
(``getLinkState(computeLinkVelocity=1)``) is finite-differenced at the physics rate (1 kHz, one
sample per control cycle; the PR2 samples at 3 kHz, three per cycle); the sample is the specific
force ``a - g`` in the hand frame, as an accelerometer reads it, so at rest it reads +9.81 m/s^2
upwards. To it is added the acceleration of the hand's mount mode (:mod:`.wrist_mode`): the
simulated arm is rigid, so a held object meeting the table does not move the hand, where a real
hand on its compliant wrist is jolted by ``dF / m`` (``m``: the gripper's and the held object's
mass) when the contact force builds faster than the wrist's first mode (``wrist_mode_hz``, 30 Hz;
damping ratio 0.05). The block of examples/place_on_contact.yaml set down at 5, 10 and 20 mm/s reads
a few m/s^2 to 16 m/s^2 within 1-40 ms of the touch, above the PR2's "about 2 m/s^2 for slow,
delicate motions"; without the mode it read 0.01-0.1 m/s^2, and Release fired only once the hand
pressed the block down with 150-170 N (2.4 s late at 10 mm/s; trial 4, issue 33). The controller's band-pass (first-order Chebyshev-I, 5 Hz to 450 Hz at 1 kHz; the PR2's
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

**Grip-load coupling** (F2 of :mod:`~py_trees_manipulation.control.gripper_controller`). When an
arm trajectory starts while the same robot's gripper holds an object in SlipServo (and no event
detector listens), the arm tells the controller the grip the motion needs,
``m |a - g|max / (2 mu)`` (:meth:`TactileSensing.slip_hold` gives ``m / (2 mu)``,
:func:`~.arm.peak_load_factor` the peak ``|a - g| / g`` from the TCP's acceleration by forward
kinematics every 10 ms; examples/slip_servo.yaml: 1.02 for the slow lift, 1.20 for the 0.1 m/s
lift, 1.37 for each 0.2 m/s shake stroke), and holds still until the grip has reached one x1.08
slip step over it (``grip_ready``; at most ``_JointTrajectory.GRIP_WAIT_S``, 0.5 s), then moves.
The mass and friction are the scene's, as a motion planner knows an attached object's. Without it the
0.8-1.2 kg cans of that example (grip_margin 1.53-2.29) were dropped at the lift on the iiwa and the
xArm: the slip servo held them 4-8 % over their weight, and once a can slid the pads lost more force
in a frame or two than the x1.08-per-frame reaction could catch (issue 33).

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

- ``max_fingertip_force_n``: largest normal force one finger put on movable objects (and on the
  handles of mechanisms: fixtures with moving joints, doors and drawers), sampled every
  ``sample_period_s``, N: the finger's contact forces on each object (each point's normal force
  along its normal and its two friction forces) summed, along the pad's normal (the direction the
  pad presses, as a pressure pad or a finger force sensor reads it). Bullet's contact manifold
  keeps a point with the normal it had when it was found while the bodies turn against each other
  (a box twisting a few degrees between flat pads), and the solver then balances that point's push
  along its old normal with friction on the others: the sum of the points' normal forces read
  117 N on a WSG 50 closed with 40 N (flip_box), whose fingers pressed the box with 40 N along
  their pads' normal (and 20 N along their width, the pair's friction). A push with a finger's side
  or tip reads only its share along the pad's normal.
  ``crushed`` (any fragile object crushed) and ``crushed_objects``.
- ``max_grip_effort_n``: largest squeeze force the finger actuators applied (the applied
  virtual-joint effort, closing: the PR2 controller's every cycle, the position motors' of
  ``gripper_action`` every sample while a finger touches something), N: at most the robot
  description's gripper force limit, to which ``max_effort`` is clamped. The controller bounds it
  by ``fingertip_force_limit`` in SlipServo and Grab; ``max_fingertip_force_n`` may exceed it in a
  contact transient, not a squeeze: Bullet adds a contact point along a line contact (a can on a
  flat pad) at the depth of the first, each point a spring of its own, and the pad's push doubles for
  a step or a few (measured on the slip servo's can: 13.5 -> 24.3 -> 27.2 N on the WSG 50 while the
  set-point and the applied effort stayed at 20 N); or a swinging object hitting a finger.
- ``slip_events``: ground-truth slip episodes: a gripped object slipping faster than
  ``slip_event_speed_mps`` at the pads; an episode ends after one frame period without slip (the
  detector's resolution). ``slip_events_detected``: episodes during which (or within that frame
  period after) the controller flagged slip; ``slip_events_missed``: episodes while it listened
  (SlipServo, or a slip-triggered event armed) that it did not flag. ``slip_detections``: onsets
  of the controller's slip flag; ``slips_at_force_limit``: those the slip servo felt with its
  set-point at ``fingertip_force_limit``, where it may not squeeze harder (the slip goes on unless
  the motion eases: ``SlipServo`` reports it, and fails on it with ``fail_on_slip_at_limit``).
- ``sensor_losses``: fingertip sensor losses the controllers acted on.
- With a target object: ``place_impact_n`` (peak normal force between the target and any non-robot
  body after the gripper lifted it, N, over single 1 ms physics steps; the static weight of a
  set-down object is included). The table tops are as compliant as furniture board
  (:mod:`py_trees_manipulation.scene.contact`), and a force-guarded line meets the table at the
  speed its guard allows, so a guarded place reads a little over its guard (the shipped
  pick_and_place, ``max_force_n`` 8: 9.7 N on the Panda, 7.6 N on the iiwa; 122 N when the contact
  was rigid and the line arrived at 5 cm/s), the PR2 place (Release on table contact) about 10 N;
  ``release_delay_s`` (from the target's touch-down, its first contact with a non-robot body after
  the lift, to the first Release that fires after it, s: how long the hand pressed it down before
  letting go); ``pad_force_imbalance_n`` (the largest
  |left - right| pad force on the target while it is held free: lifted, both pads on it, and
  nothing but its gripper's robot touching it; averaged over one frame period, N. Issue 33 item 5
  bounds it at 5 N: for a free object it is what its acceleration explains, a few newtons. While
  the object also rests on or is pressed into something, a finger may push it one way and the
  table the other, tens of newtons that say nothing about the grip, so those samples do not count);
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

Modules (issue 37 item 6): :mod:`.tactile_pads` (the 22 cells on a pad geometry, :func:`cell_of`),
:mod:`.tactile_gripper` (one gripper's sensing, faults and controller adapter, :class:`GripperTactile`),
:mod:`.tactile_actions` (the PR2 gripper sensor action servers); this module keeps the extension
(:class:`TactileSensing`: crush, slip and place bookkeeping, metrics) and re-exports their names.
"""

from __future__ import annotations

from ..bullet import _quiet_import  # noqa: F401  (first: pybullet's import banner)

import math
from typing import Any, Optional

import numpy as np
import pybullet as pb

from ..control.tactile import NUM_CELLS
from ..msgs.actions import GoalStatus
from ..msgs.gripper_sensor import ACTIONS
from .backend import SimBackend
from .extensions import register_extension
from .loading import DEFAULT_FINGER_DAMPING, DEFAULT_FINGER_STIFFNESS
from .tactile_actions import _serve, _serve_plain_gripper_action, _TactileExecution  # noqa: F401  (re-exports)
from .tactile_gripper import PAD_FIRST, RT, GripperTactile  # noqa: F401  (re-exports)
from .tactile_pads import PadCells, cell_of  # noqa: F401  (re-exports: tests/scenarios/test_tactile.py)
from ..scene.spec import SceneError
from ..scene.sections.tactile import (FAULT_FINGERS, FAULT_KINDS, SECTION, SensorFault, TactileConfig,  # noqa: F401
                               parse_tactile)

CRUSHED_RGBA = (0.95, 0.8, 0.15, 1.0)


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
        #: fixtures with moving joints (doors, drawers): a finger's squeeze on their handles counts in
        #: max_fingertip_force_n (and nowhere else: they are not gripped objects)
        self.mechanisms = {bid for name, bid in backend._bodies.items()
                           if bid not in self.movable and bid not in self.robot_bodies
                           and any(pb.getJointInfo(bid, j, physicsClientId=c)[2] != pb.JOINT_FIXED
                                   for j in range(pb.getNumJoints(bid, physicsClientId=c)))}
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
        self.slips_at_force_limit = 0
        self.place_impact = 0.0
        # bodies touching the target at the last step, once it has been lifted (empty before): a held
        # object touching only its gripper's robot is free (pad_force_imbalance_n counts only then)
        self.target_touching: set[int] = set()
        self._touchdown: Optional[float] = None      # sim time of the touch-down after the lift
        self._release_delay: Optional[float] = None  # s from it to the Release that let go
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
                    # the one not given keeps the link's value; PyBullet reports -1 for a link whose
                    # URDF gives none (rigid), and refuses one without the other: the stock fingers'
                    k = cfg.finger_contact_stiffness if cfg.finger_contact_stiffness is not None else info[9]
                    d = cfg.finger_contact_damping if cfg.finger_contact_damping is not None else info[8]
                    k = k if k > 0 else DEFAULT_FINGER_STIFFNESS
                    d = d if d >= 0 else DEFAULT_FINGER_DAMPING
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
        lifted = self._lifted
        if lifted:   # the target's contacts, before the grippers sample (their imbalance window reads them)
            total = 0.0
            touching = self.target_touching
            touching.clear()
            for cp in pb.getContactPoints(bodyA=self._target, physicsClientId=backend.client):
                touching.add(cp[2])
                if cp[2] not in self.robot_bodies:
                    total += cp[9]
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
        if lifted:
            if total > self.place_impact:
                self.place_impact = total
            if self._release_delay is None:
                self._watch_release(total)

    def _watch_release(self, place_force: float) -> None:
        """``release_delay_s``: the touch-down (a place contact after the lift), then the first
        Release that fires after it."""
        now = self.backend.now()
        if self._touchdown is None:
            if place_force > 0.0:
                self._touchdown = now
            return
        for g in self.grippers.values():
            ev = g.controller.event_action
            if ev is not None and ev.name == "release" and ev.done and ev.status == GoalStatus.SUCCEEDED:
                self._release_delay = now - self._touchdown
                return

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
            "slips_at_force_limit": self.slips_at_force_limit,
            "sensor_losses": sum(g.controller.sensor_loss_count for g in self.grippers.values()),
        }
        if self._target is not None:
            out["place_impact_n"] = round(self.place_impact, 4)
            if self._release_delay is not None:
                out["release_delay_s"] = round(self._release_delay, 4)
            out["pad_force_imbalance_n"] = round(self.pad_force_imbalance, 4)
            out.update(self._grip_margin())
        return out

    def _grip_margin(self) -> dict[str, float]:
        """``grip_needed_n``: the static grip per pad that holds the target against gravity by
        friction, ``m g / (2 mu)`` (``mu``: the product of the target's and the finger pads'
        lateral friction, as Bullet combines them; lifting with acceleration ``a`` needs
        ``m (g + a) / (2 mu)``); ``grip_force_limit_n``: the first gripper's force limit (the
        controller's ``fingertip_force_limit``; else the force of the last position command that
        closed the fingers, GripperCommand's ``max_effort``, above the actuator's continuous force
        too when the command asked for more (the Panda's 70 N, up to its 140 N peak: what the fingers
        applied, ``max_grip_effort_n``); else the actuator's ``max_effort_n``);
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
            if closing is not None:   # a GripperCommand's max_effort: what the fingers squeezed with
                limit = float(closing)
        if mass <= 0 or mu <= 0:
            return {}
        needed = mass * g / (2.0 * mu)
        return {"grip_needed_n": round(needed, 4), "grip_force_limit_n": round(limit, 4),
                "grip_margin": round(limit / needed, 4)}

    def telemetry(self) -> dict[str, dict[str, Any]]:
        return {f"gripper/{name}": g.telemetry() for name, g in self.grippers.items()}

    def slip_hold(self, robot: Any) -> Optional[tuple[Any, float]]:
        """``(controller, grip_per_g)`` when ``robot``'s gripper holds an object in SlipServo
        (installed, SLIP_SERVO, both fingers on a movable body), else None: the arm tells that
        controller the grip each motion needs (grip-load coupling, F2 of
        :mod:`~py_trees_manipulation.control.gripper_controller`). ``grip_per_g`` is the grip per pad
        that holds the object against 1 m/s^2, ``m / (2 mu)`` (N per m/s^2; its mass, and ``mu`` the
        product of its and the pad's lateral friction, as for ``grip_needed_n``; the largest of the
        bodies held). None too while an event detector or a Release waits for its event: the
        detector listens for the set-down's slip, and the grip is left as the robot's would be."""
        c = self.backend.client
        for g in self.grippers.values():
            ctl = g.controller
            if not (g.gripper.robot is robot and g.installed and g.gripped and ctl.state == RT.SLIP_SERVO
                    and not ctl.sensor_lost and (ctl.event_action is None or ctl.event_action.done)):
                continue
            mu_pad = float(pb.getDynamicsInfo(g.body, g.fingers[0], physicsClientId=c)[1])
            per_g = 0.0
            for body in g.gripped:
                if body not in self.movable:
                    continue
                info = pb.getDynamicsInfo(body, -1, physicsClientId=c)
                mu = float(info[1]) * mu_pad
                if info[0] > 0 and mu > 0:
                    per_g = max(per_g, float(info[0]) / (2.0 * mu))
            return (ctl, per_g) if per_g > 0 else None
        return None

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
