"""GraspFixAttach, GraspFixRelease and IsAttached against the fake backend and a scripted GraspFix.

The scripted extension has the query/command surface of ``sim.grasp_fix.GraspFix``; the test moves
its state by hand (``attach_at``: backend time at which a requested arm attaches). The real
extension is exercised in tests/scenarios/test_grasp_fix.py.
"""

from __future__ import annotations

from typing import Optional

import py_trees
import pytest
from py_trees.common import Status

from py_trees_manipulation.behaviors.base import BehaviourSetupError
from py_trees_manipulation.behaviors.grasp_fix import GraspFixAttach, GraspFixRelease, IsAttached
from py_trees_manipulation.control.grip_criterion import GraspFixParams
from py_trees_manipulation.msgs.motion import Pr2GripperCommand, Pr2GripperCommandResult
from py_trees_manipulation.testing import FakeBackend, Script, tick_until_done

DT = 1.0 / 30.0


class ScriptedGraspFix:
    def __init__(self, backend, arms=("panda",)):
        self.backend = backend
        self.arm_names = list(arms)
        self.criterion = type("C", (), {"params": GraspFixParams()})()
        self.held: dict[str, str] = {}
        self.requests: dict[str, Optional[str]] = {}
        self.history: list[dict] = []
        self.forces: dict[tuple[str, str], dict[str, float]] = {}
        self.counts: dict[tuple[str, str], int] = {}
        self.attach_at: Optional[float] = None
        self.detach_when_open = True
        self.detached_by_command = []

    # queries
    def robot_of(self, arm):
        return "panda"

    def held_object(self, arm):
        self._tick()
        return self.held.get(arm)

    def holder(self, obj):
        return next((a for a, o in self.held.items() if o == obj), None)

    def finger_forces(self, arm, obj):
        return self.forces.get((arm, obj), {"panda_leftfinger": 0.0, "panda_rightfinger": 0.0})

    def grip_count(self, arm, obj):
        return self.counts.get((arm, obj), 0)

    # commands
    def request_attach(self, arm, obj=None):
        if obj is not None and obj not in ("box", "mug"):
            raise KeyError(f"no movable object named {obj!r}")
        self.requests[arm] = obj

    def cancel_attach(self, arm):
        self.requests.pop(arm, None)

    def detach(self, arm):
        obj = self.held.pop(arm, None)
        if obj:
            self.detached_by_command.append(obj)
            self.history.append({"time_s": self.backend.now(), "arm": arm, "object": obj, "attached": False,
                                 "reason": "manual"})

    def _tick(self):
        t = self.backend.now()
        for arm, obj in list(self.requests.items()):
            if self.attach_at is not None and t >= self.attach_at and arm not in self.held:
                self.held[arm] = obj or "box"
                self.history.append({"time_s": round(t, 6), "arm": arm, "object": self.held[arm], "attached": True,
                                     "reason": "grip"})


def setup_backend(**kw):
    py_trees.blackboard.Blackboard.clear()
    b = FakeBackend()
    b.extensions = {"grasp_fix": ScriptedGraspFix(b, **kw)}
    return b, b.extensions["grasp_fix"]


def run(behaviour, backend, ticks=200):
    return tick_until_done(behaviour, backend, ticks, DT)


# ---- GraspFixAttach ---------------------------------------------------------------------------------
def test_attach_runs_until_the_criterion_attaches_and_writes_the_event():
    b, gf = setup_backend()
    gf.attach_at = 1.2  # (threshold 5 + 1) updates at 5 Hz
    node = GraspFixAttach(arm="panda", object="box", event_key="grasp_event")
    status, ticks = run(node, b)
    assert status == Status.SUCCESS
    assert ticks == 37  # first tick at t >= 1.2 s: ceil(1.2 * 30) + 1
    ev = py_trees.blackboard.Blackboard.get("/grasp_event")
    assert ev["arm"] == "panda" and ev["object"] == "box" and ev["attached"] is True
    assert ev["time_s"] == pytest.approx(1.2, abs=DT)
    assert "attached box to panda" in node.feedback_message
    assert gf.requests == {}  # the request ends with the behaviour


def test_attach_timeout_names_the_finger_forces():
    b, gf = setup_backend()
    gf.forces[("panda", "box")] = {"panda_leftfinger": 0.0, "panda_rightfinger": 3.1}
    node = GraspFixAttach(arm="panda", object="box", timeout_s=2.0)
    status, ticks = run(node, b)
    assert status == Status.FAILURE
    assert node.feedback_message == "no opposing contacts on box after 2.0 s (panda_leftfinger 0.0 N, panda_rightfinger 3.1 N)"
    assert gf.requests == {}


def test_attach_timeout_with_two_fingers_pressing_reports_the_grip_count():
    b, gf = setup_backend()
    gf.forces[("panda", "box")] = {"panda_leftfinger": 20.0, "panda_rightfinger": 19.0}
    gf.counts[("panda", "box")] = 3
    node = GraspFixAttach(arm="panda", object="box", timeout_s=1.0)
    status, _ = run(node, b)
    assert status == Status.FAILURE
    assert "grip count 3, attach needs more than 5" in node.feedback_message
    assert "more than 120 deg apart" in node.feedback_message


def test_attach_fails_at_once_when_the_arm_holds_another_object():
    b, gf = setup_backend()
    gf.held["panda"] = "mug"
    node = GraspFixAttach(arm="panda", object="box")
    status, ticks = run(node, b)
    assert (status, ticks) == (Status.FAILURE, 1)
    assert "panda already holds mug" in node.feedback_message
    assert gf.requests == {}


def test_attach_skip_succeeds_without_requesting():
    b, gf = setup_backend()
    node = GraspFixAttach(arm="panda", object="box", skip=True)
    assert run(node, b) == (Status.SUCCESS, 1)
    assert gf.requests == {} and gf.held == {}


def test_attach_halted_withdraws_the_request():
    b, gf = setup_backend()
    node = GraspFixAttach(arm="panda", object="box", timeout_s=10.0)
    tree = py_trees.trees.BehaviourTree(root=node)
    tree.setup(backend=b)
    tree.tick()
    assert gf.requests == {"panda": "box"}
    node.stop(Status.INVALID)
    assert gf.requests == {}


def test_setup_without_grasp_fix_section_is_a_setup_error():
    b = FakeBackend()
    node = GraspFixAttach(arm="panda")
    with pytest.raises(BehaviourSetupError, match="grasp_fix"):
        py_trees.trees.BehaviourTree(root=node).setup(backend=b)


def test_unknown_arm_is_a_setup_error():
    b, _ = setup_backend()
    with pytest.raises(BehaviourSetupError, match="no GraspFix arm 'pnda'"):
        py_trees.trees.BehaviourTree(root=GraspFixAttach(arm="pnda")).setup(backend=b)


# ---- GraspFixRelease --------------------------------------------------------------------------------
def test_release_opens_the_gripper_and_succeeds_when_detached():
    b, gf = setup_backend()
    gf.held["panda"] = "box"
    b.grippers["panda"].script("gripper_action", Script(duration_s=0.5, result=Pr2GripperCommandResult(0.08, 0.0, False, True)))
    node = GraspFixRelease(arm="panda", position=0.07, event_key="release_event")
    tree = py_trees.trees.BehaviourTree(root=node)
    tree.setup(backend=b)
    for _ in range(5):
        tree.tick()
        b.advance(DT)
    assert node.status == Status.RUNNING
    goal = b.grippers["panda"].goals[0][1]
    assert isinstance(goal, Pr2GripperCommand) and goal.position == pytest.approx(0.07)
    gf.held.pop("panda")
    gf.history.append({"time_s": b.now(), "arm": "panda", "object": "box", "attached": False, "reason": "fingers_opened"})
    tree.tick()
    assert node.status == Status.SUCCESS
    ev = py_trees.blackboard.Blackboard.get("/release_event")
    assert ev["attached"] is False and ev["reason"] == "fingers_opened"


def test_release_times_out_naming_the_release_tolerance():
    b, gf = setup_backend()
    gf.held["panda"] = "box"
    b.grippers["panda"].script("gripper_action", Script(outcome="hang"))
    node = GraspFixRelease(arm="panda", timeout_s=1.0)
    status, ticks = run(node, b)
    assert status == Status.FAILURE
    assert node.feedback_message == ("box is still attached to panda after 1.0 s: the fingers did not open by "
                                     "release_tolerance 5.0 mm")


def test_release_force_detaches_by_command_without_opening():
    b, gf = setup_backend()
    gf.held["panda"] = "box"
    node = GraspFixRelease(arm="panda", force=True, open_gripper=False)
    assert run(node, b) == (Status.SUCCESS, 1)
    assert gf.detached_by_command == ["box"] and b.grippers["panda"].goals == []


def test_release_with_nothing_held_succeeds_at_once():
    b, _ = setup_backend()
    node = GraspFixRelease(arm="panda", open_gripper=False)
    assert run(node, b) == (Status.SUCCESS, 1)
    assert node.feedback_message == "panda holds nothing"


# ---- IsAttached -------------------------------------------------------------------------------------
@pytest.mark.parametrize("params, held, expected, text", [
    ({"arm": "panda", "object": "box"}, {"panda": "box"}, Status.SUCCESS, "box is attached to panda"),
    ({"arm": "panda", "object": "box"}, {"panda": "mug"}, Status.FAILURE, "panda holds mug, not box"),
    ({"arm": "panda"}, {}, Status.FAILURE, "panda holds nothing"),
    ({"object": "box"}, {"panda": "box"}, Status.SUCCESS, "box is attached to panda"),
    ({"object": "box"}, {}, Status.FAILURE, "box is not attached to any arm"),
])
def test_is_attached(params, held, expected, text):
    b, gf = setup_backend()
    gf.held.update(held)
    node = IsAttached(**params)
    assert run(node, b) == (expected, 1)
    assert node.feedback_message == text
