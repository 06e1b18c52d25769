"""The action layer of the PR2 tactile gripper controller: each cycle, the end conditions of the
running motion action (gripper_action, FindContact, ForceServo, Grab's phases) and event action
(EventDetector, Release), as ``pr2_gripper_sensor_action`` checks them.

:class:`_ActionLayer` holds these methods of :class:`~.gripper_controller.Pr2GripperController`
(a base of it). Moved out of :mod:`.gripper_controller` (issue 37 item 6).
"""

from __future__ import annotations

from typing import Any, Optional

from ..msgs.actions import GoalStatus
from ..msgs.gripper_sensor import PR2GripperGrabData, PR2GripperSensorRTState
from .gripper_params import RT, ActionState


class _ActionLayer:
    """The action-layer methods of :class:`~.gripper_controller.Pr2GripperController`."""

    # ---- action layer -------------------------------------------------------------------------------
    def _stalled(self, dt: float, v: float) -> bool:
        if abs(v) <= self.params.stall_velocity_threshold:
            self._stall_time += dt
        else:
            self._stall_time = 0.0
        return self._stall_time > self.params.stall_time

    def _closed_on_nothing(self, x: float) -> bool:
        pr = self.pressure
        return x <= self.params.drop_position and min(pr.pad_force_left, pr.pad_force_right) < self.params.force_lightest - 0.25

    def _update_actions(self, dt: float, x: float, v: float) -> None:
        p = self.params
        a = self.motion_action
        if a is not None and not a.done:
            elapsed = self.time - a.start_time
            if a.name == "gripper_action":
                if abs(x - a.goal.position) < p.position_servo_position_tolerance:
                    self._end_motion(GoalStatus.SUCCEEDED, "")
                elif self._stalled(dt, v) and a.goal.max_effort != 0:
                    self._end_motion(GoalStatus.ABORTED, f"stalled at gap {x:.4f} m, goal {a.goal.position:.4f} m")
            elif a.name == "find_contact":
                if self._pending_find_contact is None:
                    self._check_find_contact(a, self.time - self._find_contact_start, x, self._end_motion)
            elif a.name == "force_servo":
                self._check_force_servo(a, elapsed, x, self._end_motion)
            elif a.name == "grab":
                self._update_grab(a, dt, x, v)
        e = self.event_action
        if e is not None and not e.done:
            elapsed = self.time - e.start_time
            if self.events.trigger_conditions_met and elapsed > p.event_detector_min_time:
                if e.name == "release":
                    self._end_motion(GoalStatus.PREEMPTED, "gripper opened by release")
                    self._rt_position(p.position_open, -1.0)
                    e.phase = "opening"
                self._end_event(GoalStatus.SUCCEEDED, "")
            elif e.name == "release" and elapsed > p.release_timeout:
                self._end_event(GoalStatus.ABORTED, f"no release event within {p.release_timeout:g} s; "
                                                    f"the gripper was left closed")

    def _check_find_contact(self, a: ActionState, elapsed: float, x: float, end: Any) -> Optional[bool]:
        """True on success, False on failure, None while running."""
        p = self.params
        if self.contact_conditions_met and self.state in (RT.POSITION_SERVO, RT.FIND_CONTACT):
            if elapsed >= p.find_contact_min_time - 1e-9:
                end(GoalStatus.SUCCEEDED, "", self.find_contact_data())
                return True
        elif self.state == RT.FIND_CONTACT and self._closed_on_nothing(x):
            end(GoalStatus.ABORTED, f"closed to {x:.4f} m without contact", self.find_contact_data())
            return False
        return None

    def _check_force_servo(self, a: ActionState, elapsed: float, x: float, end: Any) -> Optional[bool]:
        p = self.params
        if self.force_achieved and self.state == RT.FORCE_SERVO and elapsed >= p.force_servo_min_time - 1e-9:
            end(GoalStatus.SUCCEEDED, "", self.force_servo_data())
            return True
        if self._closed_on_nothing(x):
            end(GoalStatus.ABORTED, f"closed to {x:.4f} m without reaching the force", self.force_servo_data())
            return False
        return None

    def _update_grab(self, a: ActionState, dt: float, x: float, v: float) -> None:
        p = self.params
        t_phase = self.time - self._phase_start

        def fail(reason: str) -> None:
            self._end_motion(GoalStatus.ABORTED, f"grab {a.phase} failed: {reason}", self.grab_data())

        if a.phase == "open":
            if abs(x - p.position_open) < p.position_servo_position_tolerance or self._stalled(dt, v):
                self._grab_phase("find_contact")
            elif t_phase > p.grab_open_timeout:
                fail(f"gap {x:.4f} m not open after {p.grab_open_timeout:g} s")
        elif a.phase in ("zeroing", "find_contact"):
            if self._pending_find_contact is not None:
                return
            a.phase = "find_contact"
            if self.state not in (RT.FIND_CONTACT, RT.POSITION_SERVO):
                return
            elapsed = self.time - self._find_contact_start
            outcome = self._check_find_contact(a, elapsed, x, lambda *args: None)
            if outcome is True:
                data = self.find_contact_data()
                self.grab_contact_force = 0.5 * (data.left_fingertip_pad_force + data.right_fingertip_pad_force)
                hold = self.grab_contact_force / p.close_speed * a.goal.hardness_gain
                if p.fingertip_force_limit > 0:
                    hold = min(hold, p.fingertip_force_limit)
                self.grab_hold_force = hold
                self._grab_phase("force_servo")
            elif outcome is False:
                fail(f"closed to {x:.4f} m without contact")
            elif elapsed > p.grab_find_contact_timeout:
                fail(f"no contact within {p.grab_find_contact_timeout:g} s")
        elif a.phase == "force_servo":
            outcome = self._check_force_servo(a, t_phase, x, lambda *args: None)
            if outcome is True:
                self._grab_phase("slip_servo")
                self._end_motion(GoalStatus.SUCCEEDED, "", PR2GripperGrabData(PR2GripperSensorRTState(RT.SLIP_SERVO)))
            elif outcome is False:
                fail(f"closed to {x:.4f} m without reaching {self.grab_hold_force:.2f} N")
            elif t_phase > p.grab_force_servo_timeout:
                f = self.pressure.pad_force
                fail(f"{max(self.grab_hold_force, p.force_lightest):.2f} N not stable within "
                     f"{p.grab_force_servo_timeout:g} s (pad forces {f[0]:.2f}, {f[1]:.2f} N)")
