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
        self._most: dict[str, float] = {}

    def sample(self) -> None:
        from .arm import wrist_force_world

        for arm, weight, limit, rating, window in self.arms:
            f = wrist_force_world(arm, weight)
            window.append(max(0.0, float(f[2])) / self.g)   # the hand holding a load up
            if len(window) < window.maxlen:
                continue
            load = sum(window) / len(window)
            if load > self._most.get(arm.name, 0.0):
                self._most[arm.name] = load
            if load > self.max_carried_kg:
                self.max_carried_kg = load
            if self._over is None and load > limit + max(MARGIN * limit, MARGIN_KG):
                self._over = (arm, limit, rating, self.sim.now())
                self.sim.emit_event(f"arm/{arm.name}", f"carries {load:.2f} kg, more than it may lift: "
                                    f"{limit:.2f} kg ({rating})")

    @property
    def problem(self) -> Optional[str]:
        """Why the run asked too much of an arm (its largest load, the limit, the fix), or None."""
        if self._over is None:
            return None
        arm, limit, rating, since = self._over
        return (f"robot {arm.name!r} carried up to {self._most.get(arm.name, 0.0):.2f} kg (the vertical wrist force "
                f"averaged over {WINDOW_S:g} s; over the limit from {since:.2f} s), more than it may lift: "
                f"{limit:.2f} kg ({rating}); a real arm would refuse or fault: lighten what it lifts, or override "
                "the rating with scene.robots[].payload_kg")

    def metrics(self) -> dict[str, Any]:
        return {"max_carried_kg": round(self.max_carried_kg, 3)} if self.arms else {}
