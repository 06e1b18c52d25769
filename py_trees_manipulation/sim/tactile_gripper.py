"""Tactile sensing and the PR2 controller of one simulated gripper (:class:`GripperTactile`):
contact sampling into the 22-cell arrays, pressure frames with noise and slip vibration, injected
fingertip faults, and the adapter that lets the :class:`~py_trees_manipulation.control.gripper_controller.Pr2GripperController`
drive the fingers (see :mod:`.tactile_sensor` for the model).

Moved out of :mod:`.tactile_sensor` (issue 37 item 6), which re-exports :class:`GripperTactile`.
"""

from __future__ import annotations

from ..bullet import _quiet_import  # noqa: F401  (first: pybullet's import banner)

import math
from typing import Any, Optional

import numpy as np
import pybullet as pb

from ..control.gripper_controller import Pr2GripperController, SensorSample
from ..control.tactile import NUM_CELLS, PAD_CELLS
from ..msgs.gripper_sensor import PR2GripperSensorRTState
from .arm import links_below, links_mass_kg
from .gripper import SimGripper
from .tactile_pads import PadCells
from .wrist_mode import MountMode

RT = PR2GripperSensorRTState

PAD_FIRST = PAD_CELLS.start


def _pressing(force: list[float], R: list[float]) -> float:
    """How hard a finger presses an object, N: ``force``, the finger's contact forces on it summed
    (world, N; each point's normal force along its normal and both friction forces), along the
    pad's normal (``R``: the pad frame's rotation in the world, row-major 9; the pad's normal is
    its ``y`` axis), 0 when it pulls. A point that Bullet's contact manifold keeps with the normal
    of an earlier pose adds only what it pushes along the pad (see :mod:`.tactile_sensor`)."""
    f = R[1] * force[0] + R[4] * force[1] + R[7] * force[2]
    return f if f > 0.0 else 0.0


def _face_pressure(cells: list[float], total: float, parts: list[tuple[int, float]]) -> float:
    """Load one body's contacts on a finger's gripping face into its pad cells; the pad's load, N.

    ``total`` is the sum of the contacts' pushes along the pad normal (each contact's whole force,
    normal and friction, N), ``parts`` each contact's pad cell and push. The pad reads ``total``
    (0 when the body pulls), spread over the cells in proportion to the contacts that push.

    Why the whole force, summed: Bullet's contact manifold keeps a point with the normal it had when
    it was found (a friction anchor keeps it while it sticks), and the solver splits the load between
    the points' normal and friction rows as it likes: on flip_box a corner of the WSG 50's flat pad on
    the box's flat face read 14 N along a normal 64 degrees off the pad's while its whole force
    pulled the finger 13.6 N towards the box, and the pads' normal-force sums read 24 N (Panda), 15 N
    (iiwa) and 6.7 N (xArm) apart on the free 0.1 kg box whose pads' net pushes along their normals
    were within 1 N of each other. The points' push together is what a pressure pad reads."""
    if total <= 0.0:
        return 0.0
    pos = 0.0
    for _k, f in parts:
        if f > 0.0:
            pos += f
    scale = total / pos
    for k, f in parts:
        if f > 0.0:
            cells[k] += f * scale
    return total


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
        # the actuated joints: both finger joints (their linear gap map below), or a linkage's
        # driver (its gap and slope from the description's kinematics table)
        self.finger_joints = list(robot.drive_joints)
        self._linkage = robot.model.gripper.is_linkage
        self._gd = robot.model.gripper
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
        # the hand's mount mode (module docstring "Palm accelerometer"): the gripper's links (the palm
        # and every link below it) and their mass, kg
        self._hand_links = links_below(self.body, self.hand_link, self.client)
        self._hand_mass = links_mass_kg(self.body, self._hand_links, self.client)
        self._mount: Optional[MountMode] = (MountMode(self.cfg.wrist_mode_hz, self.cfg.wrist_mode_damping_ratio, ext.backend.dt)
                                            if self.cfg.wrist_mode_hz > 0 else None)
        self._slip_flag = False
        self._slip_at_limit = False
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
        target, target_pad = ext._target, [0.0, 0.0]
        per_object: dict[int, list[list[float]]] = {}
        touched: tuple[set[int], set[int]] = (set(), set())
        movable, mechanisms = ext.movable, ext.mechanisms
        per_mechanism: dict[int, list[list[float]]] = {}
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
        cell, face_cell = self.cells_of.cell, self.cells_of.face
        candidates = []  # (finger, contact) pairs whose slip speed may be needed
        # the gripping face's contacts per (finger, body): [sum of their push along the pad normal,
        # [(cell, that contact's push)]] (see _face_pressure)
        on_face: dict[tuple[int, int], list[Any]] = {}
        for c in mine:
            i = 0 if c[3] == f0 else 1
            o, R = frames[i]
            other, fn, p, n = c[2], c[9], c[5], c[7]
            d1, d2, f1, f2 = c[11], c[13], c[10], c[12]
            dx, dy, dz = p[0] - o[0], p[1] - o[1], p[2] - o[2]
            lx = R[0] * dx + R[3] * dy + R[6] * dz
            ly = R[1] * dx + R[4] * dy + R[7] * dz
            lz = R[2] * dx + R[5] * dy + R[8] * dz
            # the contact's whole force on the finger (fn along n and the two friction forces), world
            wx = fn * n[0] + f1 * d1[0] + f2 * d2[0]
            wy = fn * n[1] + f1 * d1[1] + f2 * d2[1]
            wz = fn * n[2] + f1 * d1[2] + f2 * d2[2]
            push = R[1] * wx + R[4] * wy + R[7] * wz           # along the pad normal, into the finger
            k = face_cell(lx, ly, lz)
            if k is not None:
                e = on_face.get((i, other))
                if e is None:
                    e = on_face[(i, other)] = [0.0, []]
                e[0] += push
                e[1].append((k, push))
            else:
                # contactNormalOnB points from the other body into the finger: the outward normal is -n
                mx = -(R[0] * n[0] + R[3] * n[1] + R[6] * n[2])
                my = -(R[1] * n[0] + R[4] * n[1] + R[7] * n[2])
                mz = -(R[2] * n[0] + R[5] * n[1] + R[8] * n[2])
                k = cell(lx, ly, lz, (mx, my, mz))
                cells[i][k] += fn
                if other == target and k >= PAD_FIRST:
                    target_pad[i] += fn
            # a door's or drawer's handle counts for max_fingertip_force_n only (not a gripped object)
            forces = per_object if other in movable else per_mechanism if other in mechanisms else None
            if forces is not None:
                # the contact's whole force on the finger (summed per finger and object, then read
                # along the pad's axes: _pressing)
                vec = forces.get(other)
                if vec is None:
                    vec = forces[other] = [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
                v = vec[i]
                v[0] += wx
                v[1] += wy
                v[2] += wz
                if forces is per_object:
                    touched[i].add(other)
            if fn > 0.02:
                candidates.append((i, c))
        for (i, other), (total, parts) in on_face.items():
            pressed = _face_pressure(cells[i], total, parts)
            if other == target:
                target_pad[i] += pressed
        obj_force = [0.0, 0.0]    # summed over the objects
        squeeze: dict[int, list[float]] = {}
        for other, vec in per_object.items():
            f = squeeze[other] = [_pressing(vec[0], frames[0][1]), _pressing(vec[1], frames[1][1])]
            obj_force[0] += f[0]
            obj_force[1] += f[1]
        self._cells, self._obj_force, self._cells_array = cells, obj_force, None
        gripped = touched[0] & touched[1]
        self.gripped = gripped
        m = obj_force[0] if obj_force[0] > obj_force[1] else obj_force[1]
        for vec in per_mechanism.values():
            m = max(m, _pressing(vec[0], frames[0][1]), _pressing(vec[1], frames[1][1]))
        if m > ext.max_fingertip_force:
            ext.max_fingertip_force = m
        if target_pad[0] > 0.0 and target_pad[1] > 0.0 and self._held_free():   # both pads on a free target
            self._imbalance_window(target_pad[0] - target_pad[1])
        elif self._imb:
            self._imb.clear()
        for other, forces in squeeze.items():
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

    def _held_free(self) -> bool:
        """The target has been lifted and touches nothing but this gripper's robot."""
        touching = self.ext.target_touching
        return bool(touching) and all(b == self.body for b in touching)

    def _imbalance_window(self, diff: float) -> None:
        """``pad_force_imbalance_n``: |left - right| target pad force averaged over the samples of
        one frame period (the fingertip frames' resolution: a one-step contact-solver impulse
        during an impact does not count), over runs of samples with both pads on the target and
        the target held free (:meth:`_held_free`)."""
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
                if speeds[i] >= cfg.slip_event_speed_mps:   # sliding: stick-slip, a fraction of the pad force
                    amp = max(amp, cfg.stick_slip_fraction * total)
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
        if self._mount is not None:
            if prev is None:
                self._mount.arm(self._hand_contact_force(), self._hand_mass + sum(
                    links_mass_kg(b, (-1,), self.client) for b in self.gripped))
            else:
                wx, wy, wz = self._mount.step(self._hand_contact_force())
                ax, ay, az = ax + wx, ay + wy, az + wz
        fx, fy, fz = ax - g[0], ay - g[1], az - g[2]
        R = pb.getMatrixFromQuaternion(st[5])
        return (R[0] * fx + R[3] * fy + R[6] * fz, R[1] * fx + R[4] * fy + R[7] * fz,
                R[2] * fx + R[5] * fy + R[8] * fz)

    def _hand_contact_force(self) -> tuple[float, float, float]:
        """The net contact force other bodies put on the gripper's links (palm and fingers), world
        frame, N: normal force plus both friction components of every contact point. A grip's two
        pads cancel; what is left is the held object's weight and inertia and whatever pushes on
        the hand or on what it holds (a table under the held object pushes through it)."""
        fx = fy = fz = 0.0
        links = self._hand_links
        for c in pb.getContactPoints(bodyA=self.body, physicsClientId=self.client):
            if c[2] == self.body or c[3] not in links:
                continue
            n, f1, d1, f2, d2 = c[9], c[10], c[11], c[12], c[13]
            fx += n * c[7][0] + f1 * d1[0] + f2 * d2[0]
            fy += n * c[7][1] + f1 * d1[1] + f2 * d2[1]
            fz += n * c[7][2] + f1 * d1[2] + f2 * d2[2]
        return fx, fy, fz

    def step(self, gripper: SimGripper) -> None:
        """One 1 kHz controller cycle before the physics step (called by the backend).

        Per cycle: one ``getJointStates`` (both fingers: gap, gap speed, applied effort), the
        controller step, one ``setJointMotorControlArray``; the palm accelerometer (one more
        ``getLinkState``) only while an event-detector command (EventDetector or Release) is active.
        """
        dt = self._dt
        if self._linkage:
            # one driver: the gap and its slope k = d gap / d q from the linkage's kinematics; the
            # finger speed vt is a driver speed 2 vt / k, a finger force F a torque F |kf| (kf: the
            # driver's own pad's travel, GripperDescription.drive_force_slopes)
            ((x0, v0, _f0, e0),) = pb.getJointStates(self.body, self.finger_joints, physicsClientId=self.client)
            k, kf = self._gd.drive_slopes((x0,))[0], self._gd.drive_force_slopes((x0,))[0]
            x, xdot, applied = self._gd.gap_from_drive((x0,)), k * v0, e0 / kf
        else:
            (x0, v0, _f0, e0), (x1, v1, _f1, e1) = pb.getJointStates(self.body, self.finger_joints,
                                                                      physicsClientId=self.client)
            # joint space -> the virtual gap joint (the Panda's map is the identity: x = x0 + x1)
            (s0, s1), (c0, c1) = self._travel, self._closed
            x = self._g0 + s0 * (x0 - c0) + s1 * (x1 - c1)
            xdot, applied = s0 * v0 + s1 * v1, 0.5 * (e0 / s0 + e1 / s1)
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
        cmd = ctl.step(dt, SensorSample(self.ext.backend.now(), x, xdot, self.effort, left, right, acc))
        if ctl.state == RT.POSITION_SERVO and ctl.position_setpoint > x + 1e-4:
            # opening (a Release that fired, an open command): as the position command's opening
            # does (SimGripper.shed_stale_contacts), no stale contact point drags what it let go of
            self.gripper.shed_stale_contacts()
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
            if self._linkage:   # the driver's share of the one motor (SimGripper.share_force)
                pb.setJointMotorControlArray(body, joints, pb.VELOCITY_CONTROL, targetVelocities=(2.0 * vt / k,),
                                             forces=(gripper.share_force(lim) * abs(kf),), physicsClientId=client)
            else:
                pb.setJointMotorControlArray(body, joints, pb.VELOCITY_CONTROL, targetVelocities=(vt / s0, vt / s1),
                                             forces=(lim * abs(s0), lim * abs(s1)), physicsClientId=client)
            self._motors_off = False
        else:
            if not self._motors_off:
                pb.setJointMotorControlArray(body, joints, pb.VELOCITY_CONTROL, forces=(0.0,) * len(joints),
                                             physicsClientId=client)
                self._motors_off = True
            if cmd.enabled:
                if self._linkage:
                    lim = gripper.share_force(lim)
                e = lim if cmd.effort > lim else (-lim if cmd.effort < -lim else cmd.effort)
                pb.setJointMotorControlArray(body, joints, pb.TORQUE_CONTROL,
                                             forces=(e * kf,) if self._linkage else (e * s0, e * s1),
                                             physicsClientId=client)
        gripper._torque_mode = True  # the motors are ours until command_gap
        # the applied virtual-joint effort, read back next cycle (motor force per finger, + opens)
        self.effort = applied
        if -self.effort > self.ext.max_grip_effort:
            self.ext.max_grip_effort = -self.effort
        slip = ctl.slip_detected or ctl.events.slip_event
        if slip and not self._slip_flag:
            self.ext.slip_detections += 1
        at_limit = ctl.slip_detected and ctl.fingertip_force_limit_reached
        if at_limit and not self._slip_at_limit:
            self.ext.slips_at_force_limit += 1         # felt, but the servo may not squeeze harder
        self._slip_at_limit = at_limit
        if slip:
            self._episode_detected = self._episode_open
        self._slip_flag = slip

    # ---- telemetry ------------------------------------------------------------------------------
    def setpoint_n(self) -> float:
        """Force set-point per fingertip, N: the force servo's (FORCE_SERVO; SLIP_SERVO's times the
        load the arm announced, F2; floored at ``force_lightest``), 0 in the controller's other
        modes; without the controller (plain ``gripper_action``), the position motors' force limit,
        which a finger blocked by an object squeezes with (0 before the first plain command)."""
        ctl = self.controller
        if not self.installed:
            return self.plain_force_limit
        lightest = ctl.params.force_lightest
        if ctl.state == RT.FORCE_SERVO:
            return max(ctl.force_target, lightest)
        if ctl.state == RT.SLIP_SERVO:
            return ctl.slip_target
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
