"""The state checker's answers against the exact method (issue 35 item 3): in the pick_from_clutter
scene, a few thousand seeded random arm configurations, free and holding the box, each checked by
``StateChecker.is_valid`` (its own broadphase, exact distances only where a pair is near) and by
``getClosestPoints`` of every moving link against every other body at the pair's threshold and of
every checked self-collision pair: the same verdict for every state."""

from __future__ import annotations

import os

import numpy as np
import pybullet as pb
import pytest

import py_trees_manipulation.sim  # noqa: F401  (scene sections)
from py_trees_manipulation.collision.world import CollisionWorld
from py_trees_manipulation.scene.spec import parse_scene
from py_trees_manipulation.trees.loader import load_task

EXAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                       "examples", "pick_from_clutter.yaml")
TOL = 1e-6


@pytest.fixture(scope="module")
def world():
    w = CollisionWorld.from_scene(parse_scene(load_task(EXAMPLE).scene, base_dir=os.path.dirname(EXAMPLE)))
    yield w
    w.close()


def exact_valid(world, ck, q) -> bool:
    """Every pair the checker covers, measured: moving links (and the held object) against every
    other body within the pair's threshold, self pairs and the held object against the arm."""
    c, body = world.client, ck._body
    ck.set_state(q)
    held = ck._held_body
    others = [b for b in world._links if b not in (body, held, world._probe)]
    moving = sorted(world.moving_links(ck.robot))
    for j in moving:
        for ob in others:
            for p in pb.getClosestPoints(body, ob, 0.05, linkIndexA=j, physicsClientId=c):
                thr = ck._threshold(("link", j), ob, p[4], False)
                if thr is not None and p[8] < thr - TOL:
                    return False
    for a, b in world._robots[ck.robot].self_pairs:
        if any(p[8] < -TOL for p in pb.getClosestPoints(body, body, 0.0, linkIndexA=a, linkIndexB=b, physicsClientId=c)):
            return False
    if held is not None:
        for ob in others:
            for p in pb.getClosestPoints(held, ob, 0.05, physicsClientId=c):
                thr = ck._threshold(("held", -1), ob, p[4], False)
                if thr is not None and p[8] < thr - TOL:
                    return False
        for j in moving:
            if j in world.hand_links(ck.robot):
                continue
            for p in pb.getClosestPoints(held, body, 0.05, linkIndexB=j, physicsClientId=c):
                thr = ck._threshold(("held", -1), body, j, False)
                if thr is not None and p[8] < thr - TOL:
                    return False
    return True


def _compare(world, ck, n: int, seed: int) -> tuple[int, int]:
    r = world.robots[ck.robot]
    rng = np.random.default_rng(seed)
    valid = 0
    for q in rng.uniform(r.lower, r.upper, size=(n, len(r.lower))):
        fast = ck.is_valid(q)
        assert fast == exact_valid(world, ck, q), (q.tolist(), fast, ck.explain(q))
        valid += fast
    return valid, n


def test_the_checker_answers_as_the_exact_method_in_the_clutter_scene(world):
    valid, n = _compare(world, world.checker("panda"), 3000, seed=35)
    assert 0.5 * n < valid < 0.95 * n          # both kinds of answer, many times each


def test_the_checker_answers_as_the_exact_method_holding_the_box(world):
    world.set_robot_state("panda", [0.3, 0.2, 0.0, -2.2, 0.0, 2.4, 0.785])
    grasp = np.array([[1.0, 0, 0, 0], [0, -1.0, 0, 0], [0, 0, -1.0, 0.0], [0, 0, 0, 1.0]])  # the box in the hand
    world.attach("panda", "box", grasp)
    try:
        valid, n = _compare(world, world.checker("panda"), 600, seed=36)
    finally:
        world.detach("panda")
    assert 0.2 * n < valid < 0.95 * n
