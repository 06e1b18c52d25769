"""The hand's mount mode the simulated palm accelerometer reads (sim/wrist_mode.py): a force step
on the hand's mass jolts it by dF / m, the steady load it was armed under is no event, it rings at
its natural frequency and decays at its damping ratio."""

from __future__ import annotations

import math

import numpy as np
import pytest

from py_trees_manipulation.sim.wrist_mode import MountMode


def test_a_steady_load_is_no_event():
    m = MountMode(30.0, 0.05, 0.001)
    m.arm((0.0, 0.0, -1.96), 0.96)          # a 0.2 kg block's weight on a 0.96 kg hand and block
    for _ in range(100):
        assert max(abs(a) for a in m.step((0.0, 0.0, -1.96))) < 1e-9


def test_a_force_step_jolts_the_hand_by_df_over_m_and_rings_at_its_frequency():
    dt, fn, zeta, mass, df = 0.001, 30.0, 0.05, 0.96, 11.0   # the table's 11 N through the block
    m = MountMode(fn, zeta, dt)
    m.arm((0.0, 0.0, -1.96), mass)
    a = np.array([m.step((0.0, 0.0, -1.96 + df))[2] for _ in range(2000)])
    w = 2 * math.pi * fn
    wd = w * math.sqrt(1 - zeta ** 2)
    t = dt * np.arange(1, 2001)
    # the exact response of m x'' + c x' + k x = dF (a step held from t = 0): x'' = dF/m e^(-zeta w t)
    # (cos wd t - zeta w / wd sin wd t)
    exact = df / mass * np.exp(-zeta * w * t) * (np.cos(wd * t) - zeta * w / wd * np.sin(wd * t))
    assert a == pytest.approx(exact, abs=1e-6)
    assert a[0] == pytest.approx(df / mass, rel=0.05)      # 11.5 m/s^2 at once (11.0 one step later)
    assert abs(a[-1]) < 0.01                                # rung down: the new load is steady
    zero_crossings = np.count_nonzero(np.diff(np.sign(a[:1000])) != 0)
    assert zero_crossings == pytest.approx(2 * fn * 1.0, abs=2)   # 30 Hz: 60 crossings a second
