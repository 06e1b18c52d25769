"""The PR2 gripper sensor actions on a simulated gripper: each goal is mirrored from the tactile
controller's :class:`~py_trees_manipulation.control.gripper_controller.ActionState`
(:class:`_TactileExecution`), and ``gripper_action`` runs with the controller removed.

Moved out of :mod:`.tactile_sensor` (issue 37 item 6).
"""

from __future__ import annotations

from typing import Any, Optional

from ..control.gripper_controller import ActionState
from ..msgs.actions import GoalHandle, GoalStatus
from ..msgs.gripper_sensor import ACTIONS
from ..scene.sections.tactile import SECTION
from .gripper import SimGripper
from .resources import _Execution
from .tactile_gripper import RT, GripperTactile


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
        ext: "TactileSensing" = gripper.backend.extensions[SECTION]
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
    ext: "TactileSensing" = gripper.backend.extensions[SECTION]
    tactile = ext.grippers[gripper.name]
    tactile.uninstall()
    execution = SimGripper._serve_gripper_action(gripper, handle)
    goal = handle.goal
    model = gripper.model
    # the force each position motor is limited to (SimGripper.command_gap): what a blocked finger squeezes with
    tactile.plain_force_limit = (model.default_grip_force_n if goal.max_effort < 0
                                 else min(float(goal.max_effort), model.max_grip_force_n))
    return execution
