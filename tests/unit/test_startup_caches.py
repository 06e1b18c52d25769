"""What a fresh process skips: the self-collision pairs read from the disk cache instead of sampled
again, the kinematics shadow loaded without shapes, visual meshes left out when nothing draws them."""

from __future__ import annotations

import json
import os
import tempfile

import numpy as np
import pybullet as pb
import pytest

import py_trees_manipulation.sim  # noqa: F401  (scene sections)
from py_trees_manipulation.collision import world as cw
from py_trees_manipulation.collision.ik import solve_ik
from py_trees_manipulation.robots import stock_description
from py_trees_manipulation.bullet.robots import LoadedRobot


@pytest.fixture
def own_cache(tmp_path, monkeypatch):
    """An empty temporary folder for the caches, and no in-process cache."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(cw, "_SELF_PAIRS_CACHE", {})
    return tmp_path


def _world_pairs() -> frozenset:
    w = cw.CollisionWorld()
    try:
        w.add_robot("panda", stock_description("franka_panda"), np.eye(4))
        return w._robots["panda"].self_pairs
    finally:
        w.close()


def test_self_pairs_come_from_the_disk_cache_and_equal_the_sampled_ones(own_cache, monkeypatch):
    sampled = _world_pairs()
    files = list((own_cache / f"py_trees_manipulation-{os.getuid()}" / "self_pairs").glob("*.json"))
    assert len(files) == 1
    stored = {tuple(p) for p in json.loads(files[0].read_text())["pairs"]}
    assert stored == set(sampled) and len(stored) > 0
    # a new process (no in-process cache) reads the file instead of sampling: no scratch client
    monkeypatch.setattr(cw, "_SELF_PAIRS_CACHE", {})
    connects = []
    real_connect = cw.pb.connect
    monkeypatch.setattr(cw.pb, "connect", lambda *a, **k: connects.append(a) or real_connect(*a, **k))
    again = _world_pairs()
    assert again == sampled
    assert len(connects) == 1  # the world's own client, not the sampling's


def test_a_damaged_or_foreign_cache_file_is_sampled_again(own_cache, monkeypatch):
    sampled = _world_pairs()
    (path,) = (own_cache / f"py_trees_manipulation-{os.getuid()}" / "self_pairs").glob("*.json")
    for text in ("{not json", json.dumps({"pairs": [[98, 99]]})):  # damaged; pairs that are no candidates
        path.write_text(text)
        monkeypatch.setattr(cw, "_SELF_PAIRS_CACHE", {})
        assert _world_pairs() == sampled
        assert {tuple(p) for p in json.loads(path.read_text())["pairs"]} == set(sampled)  # rewritten


def test_the_kinematics_shadow_without_shapes_solves_the_same_ik():
    """The simulator's shadow robot is loaded without visual and collision shapes: IK and FK are
    bit for bit those of a fully loaded robot."""
    d = stock_description("franka_panda")
    out = []
    for flags in (0, pb.URDF_IGNORE_VISUAL_SHAPES | pb.URDF_IGNORE_COLLISION_SHAPES):
        c = pb.connect(pb.DIRECT)
        try:
            r = LoadedRobot(c, pb.loadURDF(d.urdf, [0, 0, 0.626], useFixedBase=True, flags=flags, physicsClientId=c), d)
            rng = np.random.default_rng(0)
            vals = []
            for _ in range(10):
                T = np.eye(4)
                T[:3, :3] = np.diag([1.0, -1.0, -1.0])
                T[:3, 3] = [0.4 + 0.2 * rng.random(), -0.2 + 0.4 * rng.random(), 0.7 + 0.3 * rng.random()]
                s = solve_ik(r, T, [d.named_configurations["ready"]])
                vals += [s.q, [s.position_error_m, s.orientation_error_rad], r.tcp_pose().ravel()]
            out.append(np.concatenate(vals))
        finally:
            pb.disconnect(physicsClientId=c)
    assert np.array_equal(out[0], out[1])
