"""The realtime modes of the PR2 tactile gripper controller: the position/velocity servo with the
deformation limit, FIND_CONTACT, FORCE_SERVO and SLIP_SERVO control laws, and the fingertip force cap
(reference ``pr2_gripper_controller.md`` §1; the differences from the robot are listed in
:mod:`.gripper_controller`).

:class:`_RealtimeModes` holds these methods of :class:`~.gripper_controller.Pr2GripperController`
(a base of it; they use its state). Moved out of :mod:`.gripper_controller` (issue 37 item 6).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..msgs.gripper_sensor import PR2GripperFindContactCommand
from .gripper_params import RT, ActuatorCommand
from .tactile import detect_contact, slip_thresholds


class _RealtimeModes:
    """The realtime mode methods of :class:`~.gripper_controller.Pr2GripperController`."""

    # ---- modes -------------------------------------------------------------------------------------
    def _servo(self, x: float, v: float, x_d: float, v_d: float) -> ActuatorCommand:
        """Position/velocity servo with the deformation limit (reference §1.3, §1.4)."""
        p = self.params
        if p.deformation_limit >= 0 and x < self.marker - p.deformation_limit and x_d < x:
            x_d = self.marker - p.deformation_limit
        ff = math.copysign(p.friction_effort, v_d) if v_d != 0.0 else 0.0
        e = -p.position_gain * (x - x_d) - p.velocity_gain * (v - v_d) + ff
        if self.max_effort >= 0:
            e = min(max(e, -self.max_effort), self.max_effort)
        return ActuatorCommand(True, e, x_d, v_d, ff, self.max_effort, p.position_gain, p.velocity_gain)

    def _run_mode(self, dt: float, x: float, v: float, new_frame: bool) -> ActuatorCommand:
        s = self.state
        if s == RT.POSITION_SERVO:
            self.marker = x
            return self._servo(x, v, self.position_setpoint, 0.0)
        if s == RT.FIND_CONTACT:
            return self._find_contact_step(dt, x, v, new_frame)
        if s == RT.FORCE_SERVO:
            out = self._force_servo_step(dt, x, v, self.force_target)
            a = self.motion_action
            if a is not None and a.name == "grab" and not a.done:   # Grab's hold force: capped too
                out = self._force_capped(out)
            return out
        if s == RT.SLIP_SERVO:
            return self._slip_servo_step(dt, x, v, new_frame)
        return ActuatorCommand(enabled=False)

    def _force_capped(self, out: ActuatorCommand) -> ActuatorCommand:
        """``out`` with its effort, and its effort clip, bounded by ``fingertip_force_limit`` (when >= 0;
        floored at ``force_lightest``).

        The robot caps only the set-point ``F_s``; the position servo under it may then push with
        up to the actuator's limit, and a held object swinging or wedging between the pads (a shake
        reversal) is squeezed harder than the limit (23 N under a 20 N limit, 0.9 kg can). Bounding
        the actuator effort too makes the limit a bound on the squeeze: a finger pushed harder gives
        way instead of pushing back, and the pad force exceeds the limit only by the finger's own
        inertia in a contact transient.
        """
        p = self.params
        if p.fingertip_force_limit < 0:
            return out
        cap = p.force_cap
        if 0 <= out.max_effort < cap:
            cap = out.max_effort
        return dataclasses.replace(out, effort=min(max(out.effort, -cap), cap), max_effort=cap)

    def _find_contact_step(self, dt: float, x: float, v: float, new_frame: bool) -> ActuatorCommand:
        p = self.params
        pr = self.pressure
        if new_frame:
            flags = detect_contact(pr.pad_force, pr.pad_force_hp, p.hp_force_trigger, p.force_lightest - 0.25)
            self.left_contact, self.right_contact = bool(flags[0]), bool(flags[1])
        c = self._contact_conditions
        L, R = self.left_contact, self.right_contact
        met = ((L and R) if c == PR2GripperFindContactCommand.BOTH else
               L if c == PR2GripperFindContactCommand.LEFT else
               R if c == PR2GripperFindContactCommand.RIGHT else (L or R))
        self.marker = x
        self.force_setpoint = x
        if not met:
            if self._settling:             # contact flickered off: resume closing from here
                self._settling = False
                self.velocity_setpoint = x
            v_d = -p.close_speed
            self.velocity_setpoint += v_d * dt
            return self._servo(x, v, self.velocity_setpoint, v_d)
        self._settling = True
        self.contact_position = x
        self.contact_force = np.maximum(self.contact_force, pr.pad_force)
        self.contact_force_mean = max(self.contact_force_mean, 0.5 * (pr.pad_force_left + pr.pad_force_right))
        self.servo_force = self.contact_force_mean
        self.settle_time += dt
        out = self._servo(x, v, self.contact_position, 0.0)
        if self.settle_time >= p.contact_settle_time - 1e-9:
            self.contact_conditions_met = True
            self.position_setpoint = self.contact_position
            self.state = RT.POSITION_SERVO
        return out

    #: pressure frames the grasp stiffness is fitted over, and the gap range they must span, m
    STIFFNESS_FRAMES = 6
    STIFFNESS_MIN_RANGE_M = 2e-5

    def _track_stiffness(self, x: float) -> None:
        """At each pressure frame: the grasp's stiffness over the gap (F1), the least-squares slope of
        the smaller pad force against the gap over the last :data:`STIFFNESS_FRAMES` frames in contact
        (the contact damping's share of each frame's force cancels out over several) while the
        controller itself moves the fingers onto the object (FindContact, ForceServo: nothing else
        changes the pad force then); kept through a SlipServo hold (where the object's weight, its
        slip and the arm's motion change the pad force at a standing gap, and one pad may lose the
        object for a moment), forgotten when both pads let go (0: unknown)."""
        pr = self.pressure
        f = min(pr.pad_force_left, pr.pad_force_right)
        hist = self._touch_frames
        touching = self.params.force_lightest - 0.25
        if max(pr.pad_force_left, pr.pad_force_right) < touching:
            hist.clear()                      # both pads let go: the next grasp is another
            self.grasp_stiffness = 0.0
            return
        if f < touching or self.state not in (RT.FIND_CONTACT, RT.FORCE_SERVO):
            hist.clear()
            return
        hist.append((x, f))
        if len(hist) > self.STIFFNESS_FRAMES:
            del hist[0]
        if len(hist) < 2:
            return
        xs = np.array([h[0] for h in hist])
        if float(xs.max() - xs.min()) < self.STIFFNESS_MIN_RANGE_M:
            return
        fs = np.array([h[1] for h in hist])
        dx = xs - xs.mean()
        slope = -float(dx @ (fs - fs.mean())) / float(dx @ dx)
        if slope > 0.0:
            self.grasp_stiffness = slope

    def _force_servo_step(self, dt: float, x: float, v: float, target: float) -> ActuatorCommand:
        p = self.params
        f_d = max(target, p.force_lightest)
        f_min = min(self.pressure.pad_force_left, self.pressure.pad_force_right)
        err = f_d - f_min
        gain = p.force_servo_gain_close if err > 0 else p.force_servo_gain_open
        if p.force_servo_loop_gain > 0 and self.grasp_stiffness > 0 and f_min >= p.force_lightest - 0.25:   # F1
            gain = min(gain, p.force_servo_loop_gain / (self.grasp_stiffness * p.pressure_frame_period))
        v_d = min(max(-gain * err, -p.force_servo_velocity_limit), p.force_servo_velocity_limit)
        lead = self.force_setpoint - x
        w = p.force_servo_integrator_window
        if not ((lead > w and v_d > 0) or (lead < -w and v_d < 0)):
            self.force_setpoint += v_d * dt
        out = self._servo(x, v, self.force_setpoint, v_d)
        # a set-point at the fingertip force limit, whose actuator effort is capped there too
        # (_force_capped): a load on one pad (the object pressed on the table as the pads close)
        # keeps the weaker pad under it however long the servo waits. The grip is then as firm as
        # the limit lets it be: the stronger pad at the limit, the weaker one holding, the gap still
        tol = p.force_servo_force_tolerance
        cap = p.force_cap
        at_limit = (f_d >= cap - tol and f_min >= p.force_lightest
                    and max(self.pressure.pad_force_left, self.pressure.pad_force_right) >= cap - tol)
        if (abs(f_min - f_d) < tol or at_limit) and abs(self.gap_velocity_lp) < p.force_servo_velocity_tolerance:
            self.stable_time += dt
        else:
            self.stable_time = 0.0       # B2: consecutive, not cumulative
        if self.stable_time >= p.force_stable_time - 1e-9:
            self.force_achieved = True
        if p.deformation_limit >= 0:
            self.deformation_limit_reached = x < self.marker - p.deformation_limit
        return out

    def _slip_servo_step(self, dt: float, x: float, v: float, new_frame: bool) -> ActuatorCommand:
        p = self.params
        pr = self.pressure
        if new_frame and pr.frames > 1:
            d = slip_thresholds(pr.pad_force, p.slip_motion_limit, p.slip_min_threshold, p.slip_max_threshold)
            vibration = np.abs(pr.pad_force_hp) > d
            bp = pr.pad_force_bp
            quiet = np.abs(bp) < p.slip_force_limit
            target = self.slip_target
            if not self._slip_settled and min(pr.pad_force_left, pr.pad_force_right) >= (
                    target - p.force_servo_force_tolerance):
                self._slip_settled = True     # the grip has reached the raised set-point
            slipping = vibration & quiet
            if self._slip_settled and p.slip_bp_memory_waiver:
                # a positive band-passed force that only decays is the filter's memory of our own
                # increase, which the force has already followed: it does not veto a drop of the
                # force, nor a rise past the set-point (a rise below it may be the grip still
                # following that increase, not slip)
                waived = (bp > 0.0) & (bp <= self._slip_bp_prev + 1e-12) & ~quiet
                hp = pr.pad_force_hp
                beyond = pr.pad_force >= target
                slipping = slipping | (waived & ((hp < -d) | ((hp > d) & beyond)))
            if p.slip_bp_pressed_waiver:
                # a pad pressed past the set-point, by more than the servo could overshoot it (the
                # tolerance, or the set-point's last step), and still rising: the band-pass veto is
                # there for the servo's own changes (issue 33 item 5: the iiwa's 1.0 kg can wedged
                # and slipped at a shake reversal, its pads from 13.4 to 19.8 / 20.6 N in a frame over
                # a 14.5 N set-point, |Fbp| 4.4 N: missed by the veto, 2 of 2 such slips in the run;
                # the xArm's grip overshoots a raised set-point by 0.4 N on one pad: not slip)
                margin = max(p.force_servo_force_tolerance, self.setpoint_step)
                pressed = (pr.pad_force > target + margin) & (pr.pad_force_hp > d)
                slipping = slipping | pressed
            if p.slip_bp_short_waiver and min(pr.pad_force_left, pr.pad_force_right) < (
                    target - p.force_servo_force_tolerance):
                # the grip short of its set-point: the servo is closing and raises the pad forces
                # (the band-pass veto is there for that rise), so the squeeze falling is the object
                # giving way in the hand (issue 33 item 5: the xArm's 0.9 kg can slid 4 mm down the
                # pads at 10 mm/s as the slow lift started with the grip 1 N short of an announced
                # 10.7 N; felt in one frame, then its squeeze fell 9.6 -> 2.4 N, |Fbp| 1-6 N, and
                # nothing was felt for 0.4 s). The squeeze, not each pad: load moved from one pad
                # to the other by the object's inertia along the grip axis is not slip
                squeeze_falls = float(pr.pad_force_hp.mean()) < -float(d.mean())
                slipping = slipping | squeeze_falls
            if self._load_following:
                # F2: the grip following a set-point an announced grip raised or lowered: until it is
                # within the tolerance, a pad force moving toward the set-point is the servo's own
                # doing, not slip (counted, each such approach raised slip_force x1.08 and the grip
                # ratcheted to its limit on a can held still); a slip's stick-slip alternates, and
                # its other half is felt
                error = target - min(pr.pad_force_left, pr.pad_force_right)
                if abs(error) > p.force_servo_force_tolerance:
                    slipping = slipping & ~(np.sign(pr.pad_force_hp) == np.sign(error))
                else:
                    self._load_following = False
            self._slip_bp_prev = bp.copy()
            self.slip_detected = bool(slipping.any())
            if self.slip_detected:
                self._slip_settled = False
                self.slip_force *= p.slip_force_increase
        if p.fingertip_force_limit >= 0 and self.slip_force >= p.fingertip_force_limit:
            self.slip_force = p.fingertip_force_limit
            self.fingertip_force_limit_reached = True
        elif p.fingertip_force_limit >= 0 and self.load_grip >= p.fingertip_force_limit:
            self.fingertip_force_limit_reached = True   # F2: the announced grip took it to the limit
        out = self._force_capped(self._force_servo_step(dt, x, v, self.slip_target))
        light = 0.5 * (pr.pad_force_left + pr.pad_force_right) < p.force_lightest - 0.25
        if light:
            self._light_time += dt
        else:
            self._light_time = 0.0
        # B12: empty once the grip stayed light for gripper_empty_time (a light hold dips under
        # 0.95 N for a frame when the lift starts; the robot then closes at -100 N at once)
        if (light and self._light_time >= p.gripper_empty_time - 1e-9) or x <= p.drop_position:
            self.gripper_empty = True
            self.marker = x
            effort = p.drop_effort
            if p.fingertip_force_limit >= 0:   # B12: the "empty" close respects the force limit too
                effort = max(effort, -p.force_cap)
            out = ActuatorCommand(True, effort, out.position, out.velocity, 0.0, self.max_effort,
                                  p.position_gain, p.velocity_gain, override=True)
        else:
            self.gripper_empty = False
        return out
