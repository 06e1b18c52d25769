"""A robot description's ``reach_m`` (robots/loader.py ``_reach``): the TCP point carried down the
chain sample by sample gives the figure that chaining the URDF's (4, 4) joint transforms gives
(:meth:`UrdfModel.link_pose`), on the same seeded configurations (issue 35: the faster form)."""

from __future__ import annotations

import numpy as np
import pytest

from py_trees_manipulation.geometry.poses import pose_from_pq
from py_trees_manipulation.robots import loader
from py_trees_manipulation.robots.urdf import parse_urdf


@pytest.mark.parametrize("model", sorted(loader.stock_models()))
def test_reach_is_the_chained_transforms_figure(model):
    d = loader.stock_description(model)
    urdf = parse_urdf(d.urdf_path, d.packages)
    arm = list(d.arm_joint_names)
    limits = [(urdf.joints[n].lower, urdf.joints[n].upper) for n in arm]
    tcp = pose_from_pq(d.tcp_position, d.tcp_orientation)
    samples = 200
    fast = loader._reach(urdf, arm, d.tcp_link_name, tcp, limits, samples=samples)

    rng = np.random.default_rng(0)   # the same draws, joint by joint
    draws = {n: rng.uniform(*(lim if np.all(np.isfinite(lim)) else (-np.pi, np.pi)), size=samples)
             for n, lim in zip(arm, limits)}
    first = urdf.joints[arm[0]]
    axis = first.origin[:3, :3] @ np.array(first.axis, dtype=float)
    axis /= np.linalg.norm(axis)
    best = 0.0
    for k in range(samples):
        T = urdf.link_pose(d.tcp_link_name, {n: float(v[k]) for n, v in draws.items()}, base=first.parent) @ tcp
        p = T[:3, 3] - first.origin[:3, 3]
        best = max(best, float(np.linalg.norm(p - (p @ axis) * axis)))
    assert fast == pytest.approx(best, abs=1e-12)
    assert d.reach_m == round(loader._reach(urdf, arm, d.tcp_link_name, tcp, limits), 4)
