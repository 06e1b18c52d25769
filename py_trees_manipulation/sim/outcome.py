"""Outcome metrics of the target object from physical truth (issue 32 items 2 and 3).

:class:`TargetOutcome` samples the task's target object at 100 Hz while the run goes on: what it
touches (a robot's links, or anything else: its *support*), its height and its vertical speed.

- **Dropped** (``object_dropped``): the object *fell*: it left every robot without being set down
  (touching neither a robot nor anything else, it came down more than :data:`DROP_M`), or it came
  down faster than :data:`SLIDE_MPS` relative to the robot touching it (slipping out of the fingers).
  A place on any support at any height (a second, lower table) is not a drop: the object touches
  the support before the fingers let go. An object that is still falling at the end (off the table,
  with no floor in the scene) is a drop.
- **Resting on** (``placed_on``): the body under the object that carries it now (the non-robot
  contact with the largest normal force whose contact point lies below the object's centre), or
  ``"nothing"``, or ``"held by ROBOT"`` when only a robot touches it.
- **At rest** (``object_at_rest``): linear speed below :data:`REST_MPS` and angular speed below
  :data:`REST_RADPS` now.
- **Slid in the hand** (``object_slid_in_hand_m``): while a robot grips the object (two or more of
  its links touch it), the largest distance its centre moved in that robot's TCP frame from where
  it was when the grip began (a new grip begins after the object touched no robot: a release and a
  regrasp start again). A grasp that held reads a few millimetres (the pads' compliance, a slip the
  slip servo caught at the lift's start); a can that slid down the pads reads centimetres, whatever
  the tree checked (issue 33 item 5: slip_servo runs were SUCCESS with the can 2-3.5 cm down the
  pads). The run's verdict reads it (``trees/runner.py``, ``SLID_IN_HAND_M``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pybullet as pb

#: a free object (touching nothing) that comes down more than this has fallen (m)
DROP_M = 0.02
#: an object held that comes down this much faster than the robot link touching it slips out (m/s)
SLIDE_MPS = 0.4
#: an object slower than these is at rest (m/s, rad/s)
REST_MPS, REST_RADPS = 0.01, 0.1


class TargetOutcome:
    """Samples one object (see the module docs); :meth:`sample` at 100 Hz, :meth:`metrics` at the end."""

    def __init__(self, sim: Any, name: str):
        self.sim = sim
        self.name = name
        self.body = sim._objects[name]
        self.robots = {a.robot.body: n for n, a in sim.arms.items()}
        self.dropped = False
        self.drop_text = ""
        self._free_from: float = math.nan   # height where the current free flight began (m), nan: not free
        self._touched_robot = False
        self._arm_robots = {a.robot.body: a.robot for a in sim.arms.values()}
        self._grip_ref: Any = None   # (robot body, object centre in its TCP frame) when the grip began
        #: the largest slide in the hand over the run (m) and where it was read
        self.slid_in_hand_m = 0.0
        self.slid_text = ""

    def _contacts(self) -> tuple[list[Any], list[Any]]:
        pts = pb.getContactPoints(bodyA=self.body, physicsClientId=self.sim.client)
        robot = [p for p in pts if p[2] in self.robots]
        other = [p for p in pts if p[2] not in self.robots and p[2] != self.body]
        return robot, other

    def sample(self) -> None:
        c = self.sim.client
        z = pb.getBasePositionAndOrientation(self.body, physicsClientId=c)[0][2]
        robot, other = self._contacts()
        if robot:
            self._touched_robot = True
            self._free_from = math.nan
            self._sample_grip(robot)
            v = pb.getBaseVelocity(self.body, physicsClientId=c)[0][2]
            if v < -SLIDE_MPS and not self.dropped:
                link = robot[0]
                lv = (pb.getLinkState(link[2], link[4], computeLinkVelocity=1, physicsClientId=c)[6][2]
                      if link[4] >= 0 else pb.getBaseVelocity(link[2], physicsClientId=c)[0][2])
                if lv - v > SLIDE_MPS:
                    self._drop(f"slipped out of the gripper ({v:.2f} m/s down, the fingers {lv:.2f} m/s)")
            return
        self._grip_ref = None      # touching no robot: a later grip is a new one
        if other:
            if not math.isnan(self._free_from) and self._free_from - z > DROP_M:
                self._drop(f"fell {self._free_from - z:.3f} m after it left the gripper")
            self._free_from = math.nan
            return
        if math.isnan(self._free_from):
            self._free_from = z
        elif self._free_from - z > DROP_M and self._touched_robot:
            self._drop(f"fell more than {DROP_M:g} m after it left the gripper")

    def _sample_grip(self, robot_contacts: list[Any]) -> None:
        """The object's slide in the hand of the robot gripping it (two or more of its links touch
        it): its centre in that robot's TCP frame against where it was when the grip began."""
        links: dict[int, set[int]] = {}
        for p in robot_contacts:
            links.setdefault(p[2], set()).add(p[4])
        body = next((b for b, ls in links.items() if len(ls) >= 2 and b in self._arm_robots), None)
        if body is None:
            return
        tcp = self._arm_robots[body].tcp_pose()
        p = pb.getBasePositionAndOrientation(self.body, physicsClientId=self.sim.client)[0]
        local = tcp[:3, :3].T @ (np.asarray(p) - tcp[:3, 3])
        if self._grip_ref is None or self._grip_ref[0] != body:
            self._grip_ref = (body, local)
            return
        d = float(np.linalg.norm(local - self._grip_ref[1]))
        if d > self.slid_in_hand_m:
            self.slid_in_hand_m = d
            self.slid_text = (f"{d:.3f} m in the hand of {self.robots[body]} at t = {self.sim.now():.2f} s "
                              f"({1000 * (local - self._grip_ref[1])[2]:+.0f} mm along the TCP's z)")

    def _drop(self, text: str) -> None:
        if not self.dropped:
            self.dropped = True
            self.drop_text = text
            self.sim.emit_event("sim", f"object {self.name!r} is falling: it {text}")

    def still_falling(self) -> bool:
        """True when it is in free flight now and has come down more than :data:`DROP_M` (no floor)."""
        z = pb.getBasePositionAndOrientation(self.body, physicsClientId=self.sim.client)[0][2]
        return not math.isnan(self._free_from) and self._free_from - z > DROP_M

    def resting_on(self) -> str:
        """What carries the object now (see the module docs)."""
        robot, other = self._contacts()
        z = pb.getBasePositionAndOrientation(self.body, physicsClientId=self.sim.client)[0][2]
        force: dict[int, float] = {}
        for p in other:
            if p[5][2] <= z:          # the contact point on the object lies below its centre
                force[p[2]] = force.get(p[2], 0.0) + float(p[9])
        if force:
            body = max(force, key=lambda b: force[b])
            return self.sim._names.get(body, f"body {body}")
        if robot:
            return "held by " + ", ".join(sorted({self.robots[p[2]] for p in robot}))
        return "nothing"

    def at_rest(self) -> bool:
        lin, ang = pb.getBaseVelocity(self.body, physicsClientId=self.sim.client)
        return math.hypot(*lin) < REST_MPS and math.hypot(*ang) < REST_RADPS
