"""The hand's mount mode, which the simulated palm accelerometer reads on top of the hand's motion.

A simulated arm is rigid: its joints are position motors that PyBullet solves exactly, so a force on
the hand (a held object meeting the table) does not move the hand at all, and a palm accelerometer
made by differencing the hand's velocity reads nothing at a touch-down (0.01-0.1 m/s^2 measured for
a block set down at 5-20 mm/s). A real hand sits on a compliant wrist (gear trains, torque sensors,
the links themselves): a force that builds faster than the wrist's first mode accelerates the hand's
own mass, ``a = dF / m``, before the mount's spring takes the load. That jolt is what the PR2's
place detection (Release on SLIP_AND_ACC, EventDetector) feels, and why its documentation advises a
lower ``acceleration_trigger_magnitude`` (about 2 m/s^2) for slow, delicate motions than for fast
ones (5 m/s^2): the faster the set-down, the faster the force builds (pr2_gripper_sensor_msgs,
PR2GripperEventDetectorCommand).

:class:`MountMode` is that mode: one second-order system per world axis,
``m x'' + 2 zeta w m x' + w^2 m x = F(t)``, driven by the net contact force of other bodies on the
gripper's links (the palm and every link below it), discretised exactly for a force held over each physics step
(zero-order hold). Its acceleration ``x''`` is added to the hand's own. ``m`` is the gripper's mass
(the palm and every link below it, from the URDF) plus what it holds when the detector is armed.

Parameters (scene ``tactile:`` keys ``wrist_mode_hz``, ``wrist_mode_damping_ratio``): 30 Hz and 0.05
by default. Modal tests of a stiff industrial arm's end put its first modes at 110-122 Hz with 2-3.6 %
damping (Sci. Rep. 14, 2024, s41598-024-61362-2, table 3); collaborative arms with harmonic drives and
joint torque sensors are softer. Over 15-120 Hz and damping ratios 0.05-0.2 the set-down of the
0.2 kg block of examples/place_on_contact.yaml reads 1.6-4.8 m/s^2 at 5 mm/s, 3.7-9.9 at 10 mm/s and
6.7-16 at 20 mm/s, within 0-37 ms of the touch (offline, from the touch-down forces of runs): above 2 m/s^2 from
10 mm/s whatever the value; at 5 mm/s all but the stiffest, most damped mode (120 Hz, 0.2) are.
``wrist_mode_hz: 0`` gives the rigid hand (the velocity difference alone).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["MountMode"]


class MountMode:
    """The hand on its compliant mount, three world axes (module docstring).

    Args:
        frequency_hz: undamped natural frequency, Hz (> 0).
        damping_ratio: zeta, 0 .. 1.
        dt: the step, s (the physics step: the force is held over it).
    """

    def __init__(self, frequency_hz: float, damping_ratio: float, dt: float):
        w = 2.0 * math.pi * float(frequency_hz)
        self.w2, self.c = w * w, 2.0 * float(damping_ratio) * w
        # exact zero-order-hold discretisation of [x, v]' = A [x, v] + [0, 1] F/m
        aug = np.zeros((3, 3))
        aug[0, 1], aug[1, 0], aug[1, 1], aug[1, 2] = 1.0, -self.w2, -self.c, 1.0
        e = _expm(aug * float(dt))
        self._a = [float(v) for v in e[:2, :2].ravel()]
        self._b = (float(e[0, 2]), float(e[1, 2]))
        self.mass = 1.0
        self._x = [0.0, 0.0, 0.0]
        self._v = [0.0, 0.0, 0.0]

    def arm(self, force: tuple[float, float, float], mass_kg: float) -> None:
        """Start at rest under ``force`` (N, world frame) with ``mass_kg`` on the mount: the steady
        load (a held object's weight) is no event."""
        self.mass = max(float(mass_kg), 1e-3)
        self._x = [f / self.mass / self.w2 for f in force]
        self._v = [0.0, 0.0, 0.0]

    def step(self, force: tuple[float, float, float]) -> tuple[float, float, float]:
        """Advance one step under ``force`` (N, world frame, held over the step); returns the mode's
        acceleration at the step's end, m/s^2, world frame."""
        a00, a01, a10, a11 = self._a
        b0, b1 = self._b
        w2, c, m = self.w2, self.c, self.mass
        out = []
        for i in range(3):
            u = force[i] / m
            x, v = self._x[i], self._v[i]
            x, v = a00 * x + a01 * v + b0 * u, a10 * x + a11 * v + b1 * u
            self._x[i], self._v[i] = x, v
            out.append(u - c * v - w2 * x)
        return out[0], out[1], out[2]


def _expm(m: np.ndarray) -> np.ndarray:
    """Matrix exponential of a small matrix (scaling and squaring, Taylor series)."""
    norm = float(np.abs(m).sum(axis=1).max())
    s = max(0, int(math.ceil(math.log2(norm))) + 1) if norm > 0.5 else 0
    a = m / (2.0 ** s)
    out, term = np.eye(len(m)), np.eye(len(m))
    for k in range(1, 20):
        term = term @ a / k
        out = out + term
    for _ in range(s):
        out = out @ out
    return out
