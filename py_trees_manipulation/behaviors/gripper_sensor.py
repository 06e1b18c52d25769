"""PR2 tactile gripper behaviours: action clients for ``pr2_gripper_sensor_action``.

Behaviours: ``FindContact``, ``ForceServo``, ``SlipServo``, ``Grab``, ``EventDetector``,
``Release``; and the simulator check ``ObjectIntact`` (fragile objects). Each sends one goal (``PR2Gripper<X>Goal`` of :mod:`py_trees_manipulation.msgs.gripper_sensor`)
to the gripper's action of the same name (``find_contact``, ``force_servo``, ...). Parameters carry
the PR2 command fields with their names and units; constants are written by name
(``contact_conditions: BOTH``, ``trigger_conditions: SLIP_AND_ACC``).

Common to all: RUNNING while the goal runs; the latest ``PR2Gripper<X>Data`` (feedback while running,
the result's data at the end) goes to ``data_key``; the result message to ``result_key``; a goal
REJECTED (a fingertip sensor lost), ABORTED or pre-empted by someone else is FAILURE with the reason.
A fingertip sensor lost while FindContact, ForceServo, SlipServo, Grab or a tactile EventDetector /
Release runs (all cells 0, frames stopped or frozen) aborts the goal: FAILURE with e.g.
``slip_servo aborted: left fingertip sensor lost during the hold (all cells read 0); holding the gap
at 45.7 mm with at most 1.54 N`` (the controller holds the gap with at most the last good force);
when the tree pre-empts the behaviour the goal is cancelled (in the simulator the gripper then holds
in its current mode, see :mod:`py_trees_manipulation.sim.tactile_sensor`).

Typical PR2 grasp and place (Romano et al. 2011; reference §5, §6)::

    - Grab: {hardness_gain: 0.03}                  # open, find contact, squeeze by hardness, slip-servo
    - MoveCartesian: {delta: [0, 0, 0.15]}          # the slip servo holds the object
    - Parallel:                                     # set it down: open when the table is felt
        policy: SuccessOnOne
        children:
          - MoveCartesian: {delta: [0, 0, -0.2], speed_mps: 0.02}
          - Release: {trigger_conditions: SLIP_AND_ACC, acceleration_trigger_magnitude: 2.0,
                      slip_trigger_magnitude: 0.005}
"""

from __future__ import annotations

from typing import Any, ClassVar

from py_trees.common import Status

from ..msgs import gripper_sensor as gs
from .base import BackendAction, ManipulationBehaviour
from .params import REQUIRED, Param

CONTACT_CONDITIONS = tuple(gs.PR2GripperFindContactCommand.NAMES.values())
TRIGGER_CONDITIONS = tuple(gs.PR2GripperEventDetectorCommand.NAMES.values())


def _code(names: dict[int, str], name: str) -> int:
    return {v: k for k, v in names.items()}[name]


_DATA_KEY = Param("key", None, "blackboard key for the latest PR2Gripper<X>Data (feedback, then the result's data)")
_TRIGGER_PARAMS = {
    "trigger_conditions": Param("choice", "FINGER_SIDE_IMPACT_OR_ACC", "which events trigger",
                                choices=TRIGGER_CONDITIONS),
    "acceleration_trigger_magnitude": Param("float", gs.RECOMMENDED_ACCELERATION_TRIGGER,
                                            "band-passed palm acceleration that triggers (5 for large fast "
                                            "motions, about 2 for slow delicate ones; 0 fires at once)",
                                            unit="m/s^2", min=0.0),
    "slip_trigger_magnitude": Param("float", gs.RECOMMENDED_SLIP_TRIGGER,
                                    "slip detector gain (higher: less sensitive; 0: most sensitive)", min=0.0),
}


class _GripperSensorAction(BackendAction):
    """Common part: goal wrapping, data on the blackboard, message formatting."""

    ABSTRACT = True
    RESOURCE = "gripper"
    NAME: ClassVar[str] = ""
    PARAMS = {"data_key": _DATA_KEY}

    def make_command(self) -> Any:
        raise NotImplementedError

    def make_goal(self) -> Any:
        return gs.ACTIONS[self.ACTION].goal(command=self.make_command())

    def on_feedback(self, feedback: Any) -> None:
        data = getattr(feedback, "data", None)
        if data is not None:
            self.write_output("data_key", data)
            self.defer_feedback_message(self.describe, data)

    def describe(self, data: Any) -> str:
        rt = getattr(data, "rtstate", None)
        return f"{self.ACTION}: {rt.name if rt is not None else 'running'}"

    def _data(self, result: Any) -> Any:
        data = getattr(result, "data", None)
        if data is not None:
            self.write_output("data_key", data)
        return data

    def on_success(self, result: Any) -> Status:
        data = self._data(result)
        self.feedback_message = f"{self.ACTION} succeeded" + (f": {self.describe(data)}" if data is not None else "")
        return Status.SUCCESS

    def on_aborted(self, result: Any, text: str) -> Status:
        self._data(result)
        return super().on_aborted(result, text)

    def on_cancelled(self, result: Any, text: str) -> Status:
        self._data(result)
        return super().on_cancelled(result, text)


def _pads(data: Any) -> str:
    return f"pad forces {data.left_fingertip_pad_force:.2f} / {data.right_fingertip_pad_force:.2f} N"


class FindContact(_GripperSensorAction):
    """Close the gripper slowly until the fingertips feel contact (PR2GripperFindContact).

    The gripper closes at ``close_speed`` (0.02 m/s) until ``contact_conditions`` hold (a pad's
    static force over 0.95 N or its high-passed force over 0.1 N), brakes for 50 ms and holds the
    contact gap.

    Status: RUNNING while closing; SUCCESS when ``contact_conditions_met``; FAILURE when the gripper
    closes on nothing (the gap reaches 3 mm without contact: ABORTED), when a fingertip sensor is
    lost (ABORTED while closing, REJECTED before) or on pre-emption.

    Args:
        contact_conditions: ``BOTH`` (default), ``LEFT``, ``RIGHT`` or ``EITHER``.
        zero_fingertip_sensors: zero the fingertip sensors first (only when nothing touches them).

    Blackboard:
        ``data_key``: PR2GripperFindContactData (``joint_position`` = contact gap, m; pad forces, N).

    Example:
        .. code-block:: yaml

            - FindContact: {contact_conditions: BOTH, zero_fingertip_sensors: true, data_key: contact}
    """

    ABSTRACT = False
    ACTION = "find_contact"
    PARAMS = {
        "contact_conditions": Param("choice", "BOTH", "which fingertips must feel contact", choices=CONTACT_CONDITIONS),
        "zero_fingertip_sensors": Param("bool", False, "zero the fingertip sensors before closing"),
    }

    def make_command(self) -> gs.PR2GripperFindContactCommand:
        return gs.PR2GripperFindContactCommand(
            zero_fingertip_sensors=bool(self.param("zero_fingertip_sensors")),
            contact_conditions=_code(gs.PR2GripperFindContactCommand.NAMES, self.param("contact_conditions")))

    def describe(self, data: Any) -> str:
        return (f"contact {'met' if data.contact_conditions_met else 'not met'} at gap "
                f"{data.joint_position * 1000:.1f} mm, {_pads(data)}")


class ForceServo(_GripperSensorAction):
    """Squeeze until each fingertip pad feels ``fingertip_force`` (PR2GripperForceServo).

    Status: RUNNING while the force settles; SUCCESS when ``force_achieved`` (within 0.3 N, gap
    still, for 0.25 s); FAILURE when the gripper closes to 3 mm without reaching the force (ABORTED:
    nothing to squeeze), on a lost fingertip sensor (ABORTED while squeezing, REJECTED before),
    pre-emption or ``timeout_s``. The gripper keeps squeezing after SUCCESS (a sensor lost then stops
    the squeeze, but no goal is left to report it: hold with SlipServo to hear of it).

    Args:
        fingertip_force: force per fingertip pad, N (>= 0; the controller's minimum is 1.2 N). "10 N
            can crack an egg or crush a soda can. 15 N can firmly pick up a can of soup."

    Example:
        .. code-block:: yaml

            - ForceServo: {fingertip_force: 3.0, timeout_s: 5}
    """

    ABSTRACT = False
    ACTION = "force_servo"
    PARAMS = {
        "fingertip_force": Param("float", 0.0, "force per fingertip pad", unit="N", min=0.0),
    }

    def make_command(self) -> gs.PR2GripperForceServoCommand:
        return gs.PR2GripperForceServoCommand(fingertip_force=float(self.param("fingertip_force")))

    def describe(self, data: Any) -> str:
        return f"{'force achieved' if data.force_achieved else 'squeezing'}, {_pads(data)}"


class SlipServo(_GripperSensorAction):
    """Hold with the least force that stops slip (PR2GripperSlipServo): the force rises x1.08 per
    pressure frame that shows slip, from the last FindContact/ForceServo force.

    The PR2 action never ends. Status: RUNNING while holding (by default for as long as the tree
    ticks it); SUCCESS after ``duration_s`` only when it is given (the goal is then cancelled: the
    simulator keeps slip-servoing, a real PR2 stops the motor, so prefer the Parallel below);
    FAILURE when ``fail_when_empty`` and the controller reports ``gripper_empty`` (the object is
    gone) for ``empty_time_s``, when a fingertip sensor is lost during the hold (ABORTED, with the
    reason; the gripper keeps its gap with at most the last good force), on REJECTED or pre-emption
    by another goal.

    A slip felt with the set-point at ``fingertip_force_limit`` (``slip_detected`` and
    ``fingertip_force_limit_reached`` in PR2GripperSlipServoData) cannot be stopped by squeezing
    harder: the feedback message says so and counts them ("2 slips at the fingertip_force_limit:
    it may not squeeze harder"), and with ``fail_on_slip_at_limit`` the behaviour fails on the first.

    Example (the PR2 way, exportable to BT.CPP: the hold runs beside the carry, and the parallel
    succeeds when the carry does; see ``examples/slip_servo.yaml``):
        .. code-block:: yaml

            - Parallel:
                policy: success_on_one
                children:
                  - SlipServo: {fail_when_empty: true, data_key: slip}
                  - Sequence: {name: carry, children: [...]}
    """

    ABSTRACT = False
    ACTION = "slip_servo"
    PARAMS = {
        "duration_s": Param("float", None, "succeed (and cancel) after holding this long; unset: hold for as long "
                                           "as ticked", unit="s", min=0.0),
        "fail_when_empty": Param("bool", False, "fail when the controller reports the gripper empty"),
        "empty_time_s": Param("float", 0.2, "how long gripper_empty must last to fail", unit="s", min=0.0),
        "fail_on_slip_at_limit": Param("bool", False, "fail when the object slips with the grip at the "
                                                      "controller's fingertip_force_limit"),
    }

    def initialise(self) -> None:
        super().initialise()
        self._empty_since: Any = None
        self._slips_at_limit = 0
        self._slipping_at_limit = False

    def _limit_text(self) -> str:
        n = getattr(self, "_slips_at_limit", 0)
        return (f"; {n} slip{'s' if n != 1 else ''} at the fingertip_force_limit: it may not squeeze harder"
                if n else "")

    def make_command(self) -> gs.PR2GripperSlipServoCommand:
        return gs.PR2GripperSlipServoCommand()

    def describe(self, data: Any) -> str:
        flags = [n for n in ("slip_detected", "gripper_empty", "deformation_limit_reached",
                             "fingertip_force_limit_reached") if getattr(data, n)]
        return f"holding, {_pads(data)}" + (f" ({', '.join(flags)})" if flags else "") + self._limit_text()

    def update(self) -> Status:
        status = super().update()
        if status != Status.RUNNING:
            return status
        h = self.handle
        data = getattr(h.feedback, "data", None) if h is not None else None
        now = self.now()
        at_limit = data is not None and data.slip_detected and data.fingertip_force_limit_reached
        if at_limit and not self._slipping_at_limit:
            self._slips_at_limit += 1
            if self.param("fail_on_slip_at_limit"):
                h.cancel()
                return self.fail(f"slip_servo: the object slipped with the grip at the fingertip_force_limit "
                                 f"({_pads(data)}): squeezing harder is not allowed; ease the motion, raise "
                                 "the limit or the friction")
        self._slipping_at_limit = at_limit
        if self.param("fail_when_empty") and data is not None and data.gripper_empty:
            if self._empty_since is None:
                self._empty_since = now
            elif now - self._empty_since >= self.param("empty_time_s"):
                h.cancel()
                return self.fail(f"slip_servo: gripper empty for {now - self._empty_since:.2f} s "
                                 f"({_pads(data)}): the object was lost")
        else:
            self._empty_since = None
        duration = self.param("duration_s")
        if duration is not None and now - self._start_s >= duration:
            h.cancel()
            self.feedback_message = f"held for {duration:g} s" + (f", {_pads(data)}" if data is not None else "")
            return Status.SUCCESS
        return Status.RUNNING


class Grab(_GripperSensorAction):
    """The PR2 grasp (PR2GripperGrab): open, FindContact (BOTH, zeroing), ForceServo to the
    hardness-chosen force ``F_hold = F_contact / close_speed * hardness_gain``, then start SlipServo.

    Status: RUNNING through the steps; SUCCESS once the force is achieved and the slip servo holds
    (it keeps holding after SUCCESS); FAILURE when a step fails (the gripper could not open, closed on
    nothing, or did not reach the force in time; the robot reports success anyway, bug B6), on a lost
    fingertip sensor (ABORTED, or REJECTED before it starts) or pre-emption.

    Args:
        hardness_gain: m/s (the message says N/(m/s^2), but the formula needs m/s); "try 0.03". Soft
            objects give a small contact force, hence a small hold force.

    Example:
        .. code-block:: yaml

            - Grab: {hardness_gain: 0.03, timeout_s: 12}
    """

    ABSTRACT = False
    ACTION = "grab"
    PARAMS = {
        "hardness_gain": Param("float", gs.RECOMMENDED_HARDNESS_GAIN, "gain from contact force to hold force",
                               unit="m/s", min=0.0),
    }

    def make_command(self) -> gs.PR2GripperGrabCommand:
        return gs.PR2GripperGrabCommand(hardness_gain=float(self.param("hardness_gain")))


class EventDetector(_GripperSensorAction):
    """Wait for a tactile or acceleration event (PR2GripperEventDetector), e.g. the object touching
    the table while it is lowered. Does not move the gripper.

    Status: RUNNING until the trigger conditions are met; SUCCESS then (no sooner than 0.1 s);
    FAILURE when a fingertip sensor is lost while a tactile condition is armed (ABORTED), on
    pre-emption or ``timeout_s``.
    A line beside it in a ``Parallel`` that would trip its acceleration trigger on its own start is
    refused by ``ptm validate`` (see :class:`Release`).

    Args:
        trigger_conditions: ``FINGER_SIDE_IMPACT_OR_ACC`` (default), ``SLIP_AND_ACC``,
            ``FINGER_SIDE_IMPACT_OR_SLIP_OR_ACC``, ``SLIP`` or ``ACC``.
        acceleration_trigger_magnitude: m/s^2 (band-passed palm acceleration).
        slip_trigger_magnitude: slip gain (dimensionless).

    Blackboard:
        ``data_key``: PR2GripperEventDetectorData (``slip_event``, ``acceleration_event``,
        ``acceleration_vector`` m/s^2).

    Example:
        .. code-block:: yaml

            - EventDetector: {trigger_conditions: SLIP_AND_ACC, acceleration_trigger_magnitude: 2.0,
                              slip_trigger_magnitude: 0.005, data_key: touch}
    """

    ABSTRACT = False
    ACTION = "event_detector"
    PARAMS = dict(_TRIGGER_PARAMS)

    def make_command(self) -> gs.PR2GripperEventDetectorCommand:
        return _event_command(self)

    def describe(self, data: Any) -> str:
        a = data.acceleration_vector
        return (f"{'triggered' if data.trigger_conditions_met else 'waiting'}: slip {data.slip_event}, "
                f"acc {data.acceleration_event} ({(a[0] ** 2 + a[1] ** 2 + a[2] ** 2) ** 0.5:.2f} m/s^2)")


def _event_command(b: BackendAction) -> gs.PR2GripperEventDetectorCommand:
    return gs.PR2GripperEventDetectorCommand(
        trigger_conditions=_code(gs.PR2GripperEventDetectorCommand.NAMES, b.param("trigger_conditions")),
        acceleration_trigger_magnitude=float(b.param("acceleration_trigger_magnitude")),
        slip_trigger_magnitude=float(b.param("slip_trigger_magnitude")))


class Release(_GripperSensorAction):
    """Open the gripper when an event occurs (PR2GripperRelease): the PR2 place.

    The event detector is armed with the trigger parameters; on the event the gripper opens at full
    effort. ``trigger_conditions: ACC`` with ``acceleration_trigger_magnitude: 0`` releases at once
    (a 0 trigger fires immediately, as on the robot).

    Status: RUNNING while waiting; SUCCESS when the event fired and the gripper opens; FAILURE when no
    event came within the controller's ``release_timeout`` (30 s; ABORTED and the gripper stays
    closed; the robot waits forever, bug B7), when a fingertip sensor is lost while a tactile
    condition is armed (ABORTED, the gripper stays closed: a dead sensor never opens it), on
    pre-emption or ``timeout_s``.

    A trigger that an acceleration alone fulfils (``ACC``, ``FINGER_SIDE_IMPACT_OR_ACC``,
    ``FINGER_SIDE_IMPACT_OR_SLIP_OR_ACC``) also fires on the hand's own motion: ``ptm validate``
    refuses a ``MoveCartesian`` in another branch of the same ``Parallel`` (the lower of a place)
    whose speed ramps would accelerate the hand past ``acceleration_trigger_magnitude`` (21.9 m/s^2
    per m/s of ``speed_mps``: 91 mm/s at most for 2 m/s^2), naming the speed that works
    (``trees/event_checks.py``); the same holds for :class:`EventDetector`.

    Example:
        .. code-block:: yaml

            - Release: {trigger_conditions: SLIP_AND_ACC, acceleration_trigger_magnitude: 2.0,
                        slip_trigger_magnitude: 0.005}
    """

    ABSTRACT = False
    ACTION = "release"
    PARAMS = dict(_TRIGGER_PARAMS)

    def make_command(self) -> gs.PR2GripperReleaseCommand:
        return gs.PR2GripperReleaseCommand(event=_event_command(self))


class ObjectIntact(ManipulationBehaviour):
    """Simulator check: SUCCESS while the fragile ``object`` (scene ``crush_force_n``) is not
    crushed, FAILURE once it is (the tactile extension's ground truth; see
    :mod:`py_trees_manipulation.sim.tactile_sensor`).

    Example:
        .. code-block:: yaml

            - ObjectIntact: {object: egg}
    """

    ABSTRACT = False
    SIM_ONLY = True
    PARAMS = {"object": Param("str", REQUIRED, "scene object name", refers_to="object")}

    def update(self) -> Status:
        name = self.param("object")
        ext = getattr(self.backend, "extensions", {}).get("tactile") if self.backend is not None else None
        if ext is None:
            return self.fail("no tactile sensing in this backend (needs the simulator)")
        if name in ext.crushed:
            return self.fail(f"{name} was crushed")
        self.feedback_message = f"{name} is intact"
        return Status.SUCCESS
