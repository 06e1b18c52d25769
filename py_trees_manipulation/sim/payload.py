"""The load each hand carries, from the wrist force: a payload no real arm lifts fails the run.

A task file can hide what a hand lifts from the payload checks made before moving (a lift without
``held_object``, a tree without ``ChooseGrasp``, a weight resting on the object lifted), and the
simulated arm lifts whatever its motors can. :class:`PayloadMonitor` reads each arm's wrist
force-torque joint at 100 Hz: the upward force the hand must exert to hold what hangs from it (its
own weight taken off, :func:`~.arm.wrist_force_world`), averaged over :data:`WINDOW_S`, divided by
g, is the load it carries. Where that exceeds what the arm may lift (:func:`~py_trees_manipulation.scene.spec.lift_limit`:
the rated payload minus the gripper) by more than :data:`MARGIN` of it (at least :data:`MARGIN_KG`), the run has asked of the arm
what a real one would refuse or fault on (a Franka arm stops with a reflex error past its payload):
the monitor keeps the text, and a run whose tree succeeds fails with it
(:func:`~py_trees_manipulation.trees.runner.run_task`, through ``SimBackend.payload_problem``). A hand pressing down on a surface (a guarded
place) pushes down on it, which does not count, and a short peak (a jolt, a touch-down) does not last the window.

Metric ``max_carried_kg``: the largest such load of any hand, kg.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any, Optional

import numpy as np

#: the load is averaged over this long, s (dynamics of a lift and a carry average out)
WINDOW_S = 0.5
#: a load this far over the limit fails the run: this fraction of the limit, and at least MARGIN_KG kg
#: (what the wrist reads beyond the object's own weight: the lift's dynamics, the pads' squeeze on a
#: grasp off the object's centre: 0.13 kg on a 0.2 kg mug, 2.49 kg on a 2.2 kg one held by friction;
#: an object the checks before moving let through at its limit must not fail here)
MARGIN, MARGIN_KG = 0.2, 0.1
#: while two hands hold the same object (a handover), what one wrist reads beyond the object's own
#: weight is the hands pulling against each other, not a payload: up to this force (N) it is not an
#: overload (libfranka's default nominal Cartesian collision threshold, 10 N: examples_common.cpp
#: setDefaultBehavior, setCollisionBehavior's upper_force_thresholds_nominal {10, ...}; 20 N while the
#: arm accelerates; a real arm's reflex stops it beyond), so a 2.0 kg box handed from the Panda
#: (2.27 kg) to an xArm whose closing linkage pulls it down 7 N is not refused for its weight
SHARED_PULL_N = 10.0


class PayloadMonitor:
    """Samples every arm's carried load (see the module docs); :meth:`sample` at 100 Hz."""

    def __init__(self, sim: Any, hz: float = 100.0):
        from ..scene.spec import lift_limit
        from .arm import hand_mass_kg

        self.sim = sim
        self.arms: list[tuple[Any, np.ndarray, float, str, deque]] = []
        g = np.asarray(sim.scene.gravity, dtype=float)
        self.g = float(np.linalg.norm(g)) or 9.81
        n = max(1, int(round(WINDOW_S * hz)))
        for name, arm in sim.arms.items():
            rated = lift_limit(sim.scene, name)
            if rated is None:
                continue
            limit, rating, _ = rated
            self.arms.append((arm, hand_mass_kg(arm) * g, limit, rating, deque(maxlen=n)))
        self.max_carried_kg = 0.0
        self._over: Optional[tuple[Any, float, str, float]] = None   # (arm, limit kg, rating, since s)
        #: when the limit was passed while another hand held the same object: (object, its mass kg,
        #: the other arms holding it)
        self._shared: Optional[tuple[str, float, list[str]]] = None
        self._pulled: set[str] = set()   # arms whose shared hold read over the limit (said once)
        self._most: dict[str, float] = {}
        #: per arm, the last sample whose reading passed its limit while another hand held the same
        #: object: (time s, the :meth:`_shared_hold` tuple). The window's average lags the hold by up
        #: to WINDOW_S: after the other hand let go it still holds the samples of the shared hold
        self._seen_shared: dict[str, tuple[float, tuple[str, float, list[str]]]] = {}

    def sample(self) -> None:
        from .arm import wrist_force_world

        for arm, weight, limit, rating, window in self.arms:
            f = wrist_force_world(arm, weight)
            window.append(max(0.0, float(f[2])) / self.g)   # the hand holding a load up
            if self._over is None and window[-1] > limit:   # over it now: is another hand on the object?
                seen = self._shared_hold(arm)
                if seen is not None:
                    self._seen_shared[arm.name] = (self.sim.now(), seen)
            if len(window) < window.maxlen:
                continue
            load = sum(window) / len(window)
            if load > self._most.get(arm.name, 0.0):
                self._most[arm.name] = load
            if load > self.max_carried_kg:
                self.max_carried_kg = load
            if self._over is None and load > limit + max(MARGIN * limit, MARGIN_KG):
                shared = self._shared_hold(arm)
                seen = self._seen_shared.get(arm.name)
                if shared is None and seen is not None and self.sim.now() - seen[0] <= WINDOW_S + 1e-9:
                    shared = seen[1]   # the average still holds samples of the shared hold
                if shared is not None and shared[1] <= limit + 1e-9 and (load - shared[1]) * self.g <= SHARED_PULL_N:
                    if arm.name not in self._pulled:   # said once per arm: the hands pull, the load is not carried
                        self._pulled.add(arm.name)
                        self.sim.emit_event(f"arm/{arm.name}", (
                            f"reads {load:.2f} kg while {' and '.join(repr(o) for o in shared[2])} also holds "
                            f"{shared[0]!r} ({shared[1]:.2f} kg, within its {limit:.2f} kg): the other "
                            f"{(load - shared[1]) * self.g:.1f} N is the hands pulling against each other (under "
                            f"{SHARED_PULL_N:g} N: not an overload)"))
                    continue
                self._over = (arm, limit, rating, self.sim.now())
                self._shared = shared
                self.sim.emit_event(f"arm/{arm.name}", f"carries {load:.2f} kg, more than it may lift: "
                                    f"{limit:.2f} kg ({rating})")

    def _touching(self, arm: Any) -> set[str]:
        """The scene objects in contact with ``arm``'s robot now."""
        import pybullet as pb

        names = {body: name for name, body in getattr(self.sim, "_objects", {}).items()}
        pts = pb.getContactPoints(bodyA=arm.robot.body, physicsClientId=self.sim.client)
        return {names[p[2]] for p in pts if p[2] in names}

    def _shared_hold(self, arm: Any) -> Optional[tuple[str, float, list[str]]]:
        """The object ``arm`` holds together with another arm (a handover's both hands on it):
        ``(object, its mass kg, the other arms)``, or None."""
        from ..scene.spec import object_mass_kg

        mine = self._touching(arm)
        if not mine:
            return None
        specs = {o.name: o for o in self.sim.scene.objects}
        for other in self.sim.arms.values():
            if other is arm:
                continue
            both = sorted(mine & self._touching(other))
            for name in both:
                mass = object_mass_kg(specs[name]) if name in specs else None
                if mass is not None:
                    return name, float(mass), [o.name for o in self.sim.arms.values()
                                               if o is not arm and name in self._touching(o)]
        return None

    @property
    def problem(self) -> Optional[str]:
        """Why the run asked too much of an arm (its largest load, the limit, the fix), or None. When
        the limit was passed while another hand held the same object (a handover) and the object itself
        is within the limit, the load beyond its weight is the hands pulling against each other: the
        text says so and gives the mass at which that pull would stay within the limit, instead of
        asking to lighten an object the arm may lift."""
        if self._over is None:
            return None
        arm, limit, rating, since = self._over
        most = self._most.get(arm.name, 0.0)
        head = (f"robot {arm.name!r} carried up to {most:.2f} kg (the vertical wrist force averaged over {WINDOW_S:g} "
                f"s; over the limit from {since:.2f} s), more than it may lift: {limit:.2f} kg ({rating})")
        shared = self._shared
        if shared is not None and shared[1] <= limit + 1e-9:
            obj, mass, others = shared
            pull = max(most - mass, 0.0) * self.g
            who = " and ".join(repr(o) for o in others)
            return (f"{head}, while {who} also held {obj!r}: {obj!r} weighs {mass:.2f} kg, within what {arm.name!r} may "
                    f"lift, and the other {pull:.1f} N is {who} pulling on it while both hands held it, more than "
                    f"the {SHARED_PULL_N:g} N a real arm's collision reflex allows (a lighter {obj!r} does not help): "
                    f"make the receiving hand close where the object is held without dragging it (a grasp pose "
                    f"at the object as held, a linkage gripper's closing travel along its approach taken into "
                    f"account), or let the holding hand go as the other closes (GraspFixAttach handover)")
        return (f"{head}; a real arm would refuse or fault: lighten what it lifts, or override "
                "the rating with scene.robots[].payload_kg")

    def metrics(self) -> dict[str, Any]:
        return {"max_carried_kg": round(self.max_carried_kg, 3)} if self.arms else {}
