"""GraspFix behaviours: weld a gripped object to the hand, let it go, ask whether it is held.

Behaviours: ``GraspFixAttach``, ``GraspFixRelease`` and the condition ``IsAttached``. They drive
the simulator's GraspFix extension (:mod:`py_trees_manipulation.sim.grasp_fix`, the Gazebo
``gazebo_grasp_fix`` plugin's criterion), so the scene needs a ``grasp_fix:`` section.

Pitfalls:
  - ``GraspFixAttach`` does not close the gripper: close it first (``GripperCommand``, which
    succeeds when the fingers stall on the object); attaching then takes
    ``(grip_count_threshold + 1) / update_rate`` seconds of gripping (1.2 s with the defaults).
  - Without ``auto: true`` in the scene an arm attaches *only* while a ``GraspFixAttach`` of that
    arm is running; releases happen whenever the fingers open, in both modes.
  - ``arm`` is a GraspFix arm name (by default the robot's name); the gripper opened by
    ``GraspFixRelease`` is the one of the robot carrying that arm.
  - One object per arm: an arm that holds something fails ``GraspFixAttach`` for another object.

Blackboard: ``event_key`` receives ``{"arm", "object", "attached", "time_s", "reason"}`` (the
fields of ``gazebo_grasp_plugin/msgs/grasp_event.proto`` plus time and reason); attach and detach
events also go to the run's event list (``backend.emit_event``).
"""

from __future__ import annotations

from typing import Any, Optional

from py_trees.common import Status

from ..msgs.actions import GoalHandle
from ..msgs.motion import Pr2GripperCommand
from .base import BehaviourSetupError, ManipulationBehaviour
from .motion import GAP_NAMES, gripper_gap
from .params import Param

_ARM = Param("str", None, "GraspFix arm name (default: the first arm, i.e. the first robot)", blackboard=False)


def _extension(b: ManipulationBehaviour) -> Any:
    ext = getattr(b.backend, "extensions", {}).get("grasp_fix")
    if ext is None:
        raise BehaviourSetupError(
            f"{b.name}: the backend has no GraspFix; add a 'grasp_fix:' section to the scene "
            "(e.g. 'grasp_fix: {}' for the plugin defaults on every robot)")
    return ext


class _GraspFixBehaviour(ManipulationBehaviour):
    ABSTRACT = True
    SIM_ONLY = True

    def setup(self, **kwargs: Any) -> None:
        """Find the GraspFix extension and check the arm. Raises BehaviourSetupError."""
        super().setup(**kwargs)
        self.ext: Any = None
        if self.backend is None:
            return
        self.ext = _extension(self)
        arm = self.params.get("arm")
        if arm is not None and arm not in self.ext.arm_names:
            raise BehaviourSetupError(f"{self.name}: no GraspFix arm {arm!r}; arms: {self.ext.arm_names}")

    def _arm_name(self) -> str:
        return self.params.get("arm") or self.ext.arm_names[0]

    def _event(self, arm: str, obj: Optional[str], attached: bool) -> dict[str, Any]:
        reason = ""
        for h in reversed(self.ext.history):
            if h["arm"] == arm and h["attached"] == attached and (obj is None or h["object"] == obj):
                return dict(h)
        return {"arm": arm, "object": obj, "attached": attached, "time_s": round(self.now(), 6), "reason": reason}


class GraspFixAttach(_GraspFixBehaviour):
    """Wait until GraspFix welds the object to the arm (the plugin's attach, on demand).

    RUNNING while the criterion counts gripping updates; SUCCESS once the object (or, without
    ``object``, anything) is attached to ``arm`` (with ``handover`` also once another arm holds
    ``object`` and this arm's grip count is over ``grip_count_threshold``: GraspFix moves the weld
    in the update in which the holder's fingers open, so the object never hangs on friction
    alone); FAILURE on ``timeout_s`` with the reason and the
    fingers' mean normal forces in the last update window, e.g. ``no opposing contacts on box after
    2.0 s (panda_leftfinger 0.0 N, panda_rightfinger 3.1 N)``, or at once when the arm already
    holds another object (one object per arm). While it runs the arm may attach (without scene
    ``auto`` nothing attaches otherwise); halting it withdraws the request.

    Args:
        arm: GraspFix arm name.
        object: the object to attach; default: whatever the arm grips.
        timeout_s: give up after this much backend time, seconds.
        skip: do nothing and succeed at once (compare a run without GraspFix).
        handover: the receiving arm of a hand-to-hand transfer (needs ``object``; see above).

    Blackboard:
        writes ``event_key``: ``{"arm", "object", "attached": True, "time_s", "reason"}``.

    Example:
        .. code-block:: yaml

            - GripperCommand: {name: close, position: 0.0, max_effort: 40}
            - GraspFixAttach: {name: weld, arm: panda, object: box, timeout_s: 2.0}
    """

    ABSTRACT = False
    PARAMS = {
        "arm": _ARM,
        "object": Param("str", None, "object to attach (default: any object the arm grips)", refers_to="object"),
        "timeout_s": Param("float", 3.0, "fail after this much backend time", unit="s", min=0.0),
        "skip": Param("bool", False, "succeed at once without attaching (to compare a run without GraspFix)"),
        "handover": Param("bool", False, "receiving a handover: succeed once ready to take the object "
                                         "when its holder opens"),
        "event_key": Param("key", None, "blackboard key for the attach event"),
    }

    def initialise(self) -> None:
        self._start = self.now() if self.backend is not None else 0.0
        self._error: Optional[str] = None
        self._requested = False
        if self.ext is None or self.param("skip"):
            return
        arm, obj = self._arm_name(), self.param("object")
        held = self.ext.held_object(arm)
        if held is not None and obj is not None and held != obj:
            self._error = (f"{arm} already holds {held}; GraspFix holds one object per arm: release {held} "
                           f"before attaching {obj}")
            return
        try:
            self.ext.request_attach(arm, obj)
        except KeyError as e:
            self._error = str(e.args[0])
            return
        self._requested = True
        self.feedback_message = f"waiting for {arm} to grip {obj or 'an object'}"

    def update(self) -> Status:
        if self.ext is None:
            return self.fail("not set up with a backend (call tree.setup(backend=...))")
        if self.param("skip"):
            self.feedback_message = "skipped (GraspFix not used)"
            return Status.SUCCESS
        if self._error is not None:
            return self.fail(self._error)
        arm, obj = self._arm_name(), self.param("object")
        held = self.ext.held_object(arm)
        if held is not None and (obj is None or held == obj):
            ev = self._event(arm, held, True)
            self.write_output("event_key", ev)
            self.feedback_message = f"attached {held} to {arm} at {ev['time_s']:.3f} s"
            return Status.SUCCESS
        thr = self.ext.criterion.params.grip_count_threshold
        if self.param("handover") and obj is not None:
            holder = self.ext.holder(obj)
            if holder is not None and holder != arm and self.ext.grip_count(arm, obj) > thr:
                self.feedback_message = (f"{arm} grips {obj} held by {holder} (count {self.ext.grip_count(arm, obj)}): "
                                         f"it takes {obj} when {holder} opens")
                return Status.SUCCESS
        elapsed = self.now() - self._start
        timeout = self.param("timeout_s")
        if elapsed > timeout:
            return self.fail(self._diagnosis(arm, obj, elapsed))
        target = obj or self._best_object(arm)
        if target is not None:
            self.feedback_message = (f"{arm} grips {target}: count {self.ext.grip_count(arm, target)} "
                                     f"(attach above {thr})")
        return Status.RUNNING

    def _best_object(self, arm: str) -> Optional[str]:
        best, best_f = None, 0.0
        for name in self.backend.world.object_names():
            f = sum(self.ext.finger_forces(arm, name).values())
            if f > best_f:
                best, best_f = name, f
        return best

    def _diagnosis(self, arm: str, obj: Optional[str], elapsed: float) -> str:
        target = obj or self._best_object(arm)
        if target is None:
            return f"{arm} touched no object in {elapsed:.1f} s (close the gripper on it first)"
        holder = self.ext.holder(target)
        forces = self.ext.finger_forces(arm, target)
        figures = ", ".join(f"{ln} {f:.1f} N" for ln, f in forces.items())
        p = self.ext.criterion.params
        if holder is not None and holder != arm:
            return f"{target} is still held by {holder} after {elapsed:.1f} s ({figures}); open {holder} to hand it over"
        fs = sorted(forces.values())
        if len(fs) < 2 or fs[-2] <= p.zero_force_guard_n or fs[-2] < p.min_force_ratio * fs[-1]:
            return f"no opposing contacts on {target} after {elapsed:.1f} s ({figures})"
        return (f"{target} not gripped long enough after {elapsed:.1f} s: grip count "
                f"{self.ext.grip_count(arm, target)}, attach needs more than {p.grip_count_threshold} ({figures}; "
                f"forces must be more than {p.forces_angle_tolerance:g} deg apart)")

    def terminate(self, new_status: Status) -> None:
        if self._requested and self.ext is not None:
            if new_status == Status.SUCCESS and self.param("handover") \
                    and self.ext.held_object(self._arm_name()) is None:
                return   # ready for a handover: the request stands until the holder opens
            self.ext.cancel_attach(self._arm_name())
            self._requested = False


class GraspFixRelease(_GraspFixBehaviour):
    """Open the gripper (or wait for it to open) until GraspFix lets the object go.

    RUNNING until the arm holds nothing; SUCCESS once detached (at once when nothing is attached);
    FAILURE on ``timeout_s`` (the object is still welded: the fingers did not open by
    ``release_tolerance``) or when the opening goal fails. The object keeps its velocity, so a
    release during a fast motion throws it.

    Args:
        arm: GraspFix arm name.
        open_gripper: send the opening goal (false: wait for something else to open the fingers).
        position: finger gap to open to, metres, or ``open`` (the gripper's full opening).
        max_effort: effort limit of the opening, newtons (negative: the gripper's default).
        force: detach at once by command, without waiting for the fingers (the plugin cannot).
        timeout_s: give up after this much backend time, seconds.

    Blackboard:
        writes ``event_key``: ``{"arm", "object", "attached": False, "time_s", "reason"}``.

    Example:
        .. code-block:: yaml

            - GraspFixRelease: {name: let_go, arm: panda, position: open}
    """

    ABSTRACT = False
    PARAMS = {
        "arm": _ARM,
        "open_gripper": Param("bool", True, "send a gripper opening goal"),
        "position": Param("float", "open", "finger gap to open to ('open': the gripper's full opening)", unit="m",
                          min=0.0, max=0.2, names=GAP_NAMES),
        "max_effort": Param("float", -1.0, "effort limit of the opening; negative = the gripper's default", unit="N"),
        "force": Param("bool", False, "detach by command at once instead of waiting for the fingers to open"),
        "timeout_s": Param("float", 2.0, "fail after this much backend time", unit="s", min=0.0),
        "event_key": Param("key", None, "blackboard key for the detach event"),
    }

    def initialise(self) -> None:
        self._start = self.now() if self.backend is not None else 0.0
        self._handle: Optional[GoalHandle] = None
        self._held: Optional[str] = None
        self._error: Optional[str] = None
        if self.ext is None:
            return
        arm = self._arm_name()
        self._held = self.ext.held_object(arm)
        if self._held is not None and self.param("force"):
            self.ext.detach(arm)
        if self.param("open_gripper"):
            gripper = self.backend.grippers[self.ext.robot_of(arm)]
            try:
                gap = gripper_gap(gripper, self.param("position"))
            except ValueError as e:
                self._error = str(e)
                return
            self._handle = gripper.send_goal("gripper_action",
                                             Pr2GripperCommand(position=gap, max_effort=self.param("max_effort")))
        self.feedback_message = f"releasing {self._held or 'nothing'} from {arm}"

    def update(self) -> Status:
        if self.ext is None:
            return self.fail("not set up with a backend (call tree.setup(backend=...))")
        if self._error is not None:
            return self.fail(self._error)
        arm = self._arm_name()
        held = self.ext.held_object(arm)
        if held is None:
            if self._held is None:
                self.feedback_message = f"{arm} holds nothing"
            else:
                ev = self._event(arm, self._held, False)
                self.write_output("event_key", ev)
                self.feedback_message = f"detached {self._held} from {arm} at {ev['time_s']:.3f} s"
            return Status.SUCCESS
        h = self._handle
        if h is not None and h.done and h.status.name in ("ABORTED", "REJECTED", "LOST"):
            res = h.result
            if not getattr(res, "stalled", False):
                return self.fail(f"cannot open the gripper to release {held}: {h.text}")
        elapsed = self.now() - self._start
        if elapsed > self.param("timeout_s"):
            tol = self.ext.criterion.params.release_tolerance
            return self.fail(f"{held} is still attached to {arm} after {elapsed:.1f} s: the fingers did not open "
                             f"by release_tolerance {tol * 1000:.1f} mm")
        return Status.RUNNING

    def terminate(self, new_status: Status) -> None:
        if new_status == Status.INVALID and self._handle is not None and not self._handle.done:
            self._handle.cancel()


class IsAttached(_GraspFixBehaviour):
    """Condition: GraspFix holds ``object`` on ``arm`` (SUCCESS or FAILURE on the first tick).

    With only ``arm``: the arm holds anything; with only ``object``: some arm holds it.

    Example:
        .. code-block:: yaml

            - IsAttached: {arm: panda, object: box}
    """

    ABSTRACT = False
    PARAMS = {
        "arm": _ARM,
        "object": Param("str", None, "the object (default: any)", refers_to="object"),
    }

    def update(self) -> Status:
        if self.ext is None:
            return self.fail("not set up with a backend (call tree.setup(backend=...))")
        arm, obj = self.params.get("arm"), self.param("object")
        if arm is None and obj is not None:
            holder = self.ext.holder(obj)
            if holder is None:
                return self.fail(f"{obj} is not attached to any arm")
            self.feedback_message = f"{obj} is attached to {holder}"
            return Status.SUCCESS
        arm = arm or self._arm_name()
        held = self.ext.held_object(arm)
        if held is not None and (obj is None or held == obj):
            self.feedback_message = f"{held} is attached to {arm}"
            return Status.SUCCESS
        if held is None:
            return self.fail(f"{arm} holds nothing" + (f" ({obj} is not attached)" if obj else ""))
        return self.fail(f"{arm} holds {held}, not {obj}")
