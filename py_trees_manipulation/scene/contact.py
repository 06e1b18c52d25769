"""Contact materials, and how fast a force-guarded motion may meet a contact (pure: no PyBullet).

**Soft contact in PyBullet.** A body's ``contactStiffness`` k (N/m) and ``contactDamping`` d
(N s/m), set together in one ``changeDynamics`` call, turn each of its contact points into an
implicit spring-damper: normal force ``k x + d v`` for a penetration ``x`` closing at ``v``. Bullet
combines the two bodies of a contact: the stiffnesses in series (``1/k = 1/k_a + 1/k_b``), the
dampings added (``btManifoldResult::calculateCombinedContactStiffness`` and ``...Damping``); a body
without them is rigid (infinitely stiff; its velocity constraint stops an approach within one
physics step). The figures are **per contact point**: a flat face meeting another makes up to four
points (a persistent manifold holds at most :data:`MANIFOLD_POINTS`), a curved one one or two, and
Bullet may add points while a contact persists, so a face on a face is up to four times as stiff
as one point.

**Fixtures** (tables, shelves) that set no contact stiffness in their URDF get the
:data:`TABLE_TOP` material (scene keys ``fixtures[].contact_stiffness`` / ``contact_damping``
override it). What a wrist force sensor feels when a held object meets a table top is mostly the
top bending on its legs, not the local contact. The simulated table (pybullet_data's table.urdf)
has a 1.5 m x 1.0 m top 50 mm thick on legs 1.3 m apart: ``48 E I / L^3`` gives 3.5-7e5 N/m at its
centre (a beam across the span, ``I = b h^3 / 12``, Roark's Formulas for Stress and Strain, simply
supported beam under a central load; ``E`` from 1.6 GPa, the minimum bending modulus of EN 312 type
P2 particleboard for interior furniture, to the 3 GPa of a typical board), and a thinner 30 mm
top half as much again: so 4e5 N/m over a four-point face, 1e5 N/m per point. The local contact of
a ceramic, metal or hard-plastic object (Young's modulus 2-200 GPa, Hertzian contact stiffness
above 1e6 N/m at these loads) is far stiffer and is left rigid (objects without
``contact_stiffness``). The damping, 300 N s/m per point (1200 N s/m over a face), gives a 0.2-2.4
kg object set down on the top a damping ratio ``D / (2 sqrt(K m))`` of 2.1 to 0.6 (a coefficient
of restitution ``exp(-pi zeta / sqrt(1 - zeta^2))`` of 0 to 0.09: a ceramic mug or a can set down
on a wooden table does not bounce back). The damping is also what a set-down at speed ``v`` meets
first (``D v``: 24 N at 2 cm/s over a face), so it is kept no higher than that. Modelling the bending as contact compliance lets an object
whose centre of mass is off its footprint's centre tilt by a few thousandths of a degree (the mug:
0.006 deg), where a real top bends as a whole. The fingertip pads keep their robot description's
values (the Panda's: 3e4 N/m, 1000 N s/m, rubber-faced; the tactile section's ``finger_contact_damping`` tunes them).

**The force guard's bound.** A guard (MoveCartesian ``max_force_n``) trips once the wrist force
stays over its threshold for the sensor's latency ``tau`` (filter and debounce; the robot
description's ``wrist_force_latency_s``), then the arm brakes within :data:`GUARD_BRAKE_S`. Closing
on a contact of stiffness ``K`` and damping ``D`` at speed ``v``, the force when it trips is at most
``F_guard + D v + K v (tau + brake)``: the damping term appears at the first touch, the spring
term grows while the guard waits. So a guarded motion meets its expected contact at most at
:func:`guard_contact_speed`, the speed that keeps that peak within :data:`GUARD_BOUND` times the
threshold. A rigid pair is taken as :data:`RIGID_STIFFNESS_N_PER_M` per point for this bound (the
simulator's rigid contact stops the approach in one 1 ms step: ``m v / dt``, the same order for the
kilograms of an arm).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

__all__ = ["ContactMaterial", "TABLE_TOP", "MANIFOLD_POINTS", "RIGID_STIFFNESS_N_PER_M", "GUARD_BOUND",
           "GUARD_BRAKE_S", "DEFAULT_WRIST_FORCE_LATENCY_S", "DEFAULT_WRIST_FORCE_RESOLUTION_N", "pair_contact",
           "guard_peak_n", "guard_contact_speed", "CONTACT_APPROACH_M"]


@dataclass(frozen=True)
class ContactMaterial:
    """PyBullet soft-contact figures of a body, per contact point.

    Attributes:
        stiffness_n_per_m: ``contactStiffness``, N/m, > 0.
        damping_n_s_per_m: ``contactDamping``, N s/m, >= 0.
    """

    stiffness_n_per_m: float
    damping_n_s_per_m: float

    def __post_init__(self) -> None:
        if not self.stiffness_n_per_m > 0:
            raise ValueError(f"contact stiffness must be > 0 N/m, got {self.stiffness_n_per_m}")
        if not self.damping_n_s_per_m >= 0:
            raise ValueError(f"contact damping must be >= 0 N s/m, got {self.damping_n_s_per_m}")


#: a table top (furniture board on four legs), per contact point (see the module docstring)
TABLE_TOP = ContactMaterial(stiffness_n_per_m=1e5, damping_n_s_per_m=300.0)
#: contact points of a face resting on a face (Bullet's persistent manifold holds at most four)
MANIFOLD_POINTS = 4
#: stiffness per point taken for a rigid pair in the guard's bound, N/m
RIGID_STIFFNESS_N_PER_M = 1e6
#: the force guard's design bound: the peak force stays within this times ``max_force_n``
GUARD_BOUND = 2.0
#: time the arm takes to stop once the guard trips, s (the simulated arms: under 2 ms from 5 cm/s)
GUARD_BRAKE_S = 0.002
#: the wrist force guard's detection latency when the robot description gives none, s (five 1 kHz samples)
DEFAULT_WRIST_FORCE_LATENCY_S = 0.005
#: the smallest wrist force a guard can tell from noise when the robot description gives none, N
DEFAULT_WRIST_FORCE_RESOLUTION_N = 1.0
#: a guarded line is at its contact speed this far before its expected contact, m (the held object's
#: place in the hand and the support's height are known to a few millimetres)
CONTACT_APPROACH_M = 0.01


def pair_contact(a: Optional[ContactMaterial], b: Optional[ContactMaterial],
                 points: int = MANIFOLD_POINTS) -> tuple[float, float]:
    """Stiffness (N/m) and damping (N s/m) of a contact between bodies of materials ``a`` and ``b``
    (None: rigid) over ``points`` contact points, as Bullet combines them (stiffness in series,
    damping added). Two rigid bodies give :data:`RIGID_STIFFNESS_N_PER_M` per point."""
    ks = [m.stiffness_n_per_m for m in (a, b) if m is not None]
    k = 1.0 / sum(1.0 / s for s in ks) if ks else RIGID_STIFFNESS_N_PER_M
    d = sum(m.damping_n_s_per_m for m in (a, b) if m is not None)
    return points * k, points * d


def guard_peak_n(max_force_n: float, speed_mps: float, stiffness_n_per_m: float, damping_n_s_per_m: float,
                 latency_s: float, brake_s: float = GUARD_BRAKE_S) -> float:
    """Upper bound of the contact force when a guard of ``max_force_n`` (N) trips on a contact of
    ``stiffness_n_per_m`` and ``damping_n_s_per_m`` met at ``speed_mps``: ``F + D v + K v (tau +
    brake)`` (module docstring), N."""
    v = abs(float(speed_mps))
    return float(max_force_n) + damping_n_s_per_m * v + stiffness_n_per_m * v * (latency_s + brake_s)


def guard_contact_speed(max_force_n: float, stiffness_n_per_m: float, damping_n_s_per_m: float, latency_s: float,
                        bound: float = GUARD_BOUND, brake_s: float = GUARD_BRAKE_S) -> float:
    """The fastest speed (m/s) at which a guard of ``max_force_n`` (N) meets a contact of
    ``stiffness_n_per_m`` (N/m) and ``damping_n_s_per_m`` (N s/m) with its peak force within
    ``bound`` times the threshold (:func:`guard_peak_n`)::

        v = (bound - 1) F / (D + K (tau + brake))

    Raises:
        ValueError: a threshold that is not positive, or a bound not above 1.
    """
    if not max_force_n > 0:
        raise ValueError(f"max_force_n must be > 0 N, got {max_force_n}")
    if not bound > 1:
        raise ValueError(f"the guard's bound must be > 1, got {bound}")
    rate = damping_n_s_per_m + stiffness_n_per_m * (latency_s + brake_s)
    return math.inf if rate <= 0 else (bound - 1.0) * float(max_force_n) / rate
