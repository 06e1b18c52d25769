"""Link boxes for the collision world's own broadphase: each link's axis-aligned box in its
centre-of-mass frame, fitted once per robot (and per held object) from Bullet's world AABBs at a few
poses (Bullet's AABB of a convex shape is its local box rotated, ``btTransformAabb``), so a link's
world AABB at any configuration is computed in numpy (see :mod:`~.world`).

Units: metres. Quaternions here are PyBullet's (x, y, z, w).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np
import pybullet as pb

if TYPE_CHECKING:  # pragma: no cover
    from ..bullet.robots import LoadedRobot


def _rotations(quats_xyzw: np.ndarray) -> np.ndarray:
    """Rotation matrices, shape (n, 3, 3), of PyBullet quaternions ``(x, y, z, w)``, shape (n, 4)."""
    x, y, z, w = quats_xyzw.T
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], axis=1),
        np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], axis=1),
        np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], axis=1),
    ], axis=1)


def _frame(client: int, body: int, link: int) -> tuple:
    """World position and (x, y, z, w) orientation of a link's centre-of-mass frame (the frame its
    collision shape is attached to in a PyBullet multibody; the base's for -1)."""
    if link == -1:
        return pb.getBasePositionAndOrientation(body, physicsClientId=client)
    st = pb.getLinkState(body, link, computeForwardKinematics=True, physicsClientId=client)
    return st[0], st[1]


def _world_box(client: int, body: int, link: int) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = pb.getAABB(body, link, physicsClientId=client)
    lo, hi = np.array(lo), np.array(hi)
    return (lo + hi) / 2, (hi - lo) / 2


def _fit_box(samples: list[tuple]) -> tuple[np.ndarray, np.ndarray]:
    """The box (centre, half extents) in a frame whose world AABBs at the sampled frame poses were
    ``samples`` = ``[(position, quaternion xyzw, aabb centre, aabb half extents), ...]``: Bullet's
    AABB of a convex shape is its local box rotated (``btTransformAabb``), so
    ``half_world = |R| half_local`` and ``centre_world = p + R centre_local``; solved by least squares."""
    A, b, cs = [], [], []
    for p, o, wc, wh in samples:
        R = _rotations(np.array([o]))[0]
        cs.append(R.T @ (np.asarray(wc) - np.asarray(p)))
        A.extend(np.abs(R))
        b.extend(wh)
    half = np.linalg.lstsq(np.array(A), np.array(b), rcond=None)[0]
    resid = np.abs(np.array(A) @ half - np.array(b)).max()
    return np.mean(cs, axis=0), np.maximum(half, 0.0) + resid + 1e-5


def _local_boxes(robot: "LoadedRobot", links: Sequence[int], samples: int = 6) -> dict[int, tuple]:
    """Per link: its AABB in its centre-of-mass frame, from world AABBs at a few random arm
    configurations (:func:`_fit_box`). The arm is left at its configuration on entry."""
    c, body = robot.client, robot.body
    q0 = robot.joint_positions()
    rng = np.random.default_rng(0)
    data: dict[int, list] = {j: [] for j in links}
    for k in range(samples):
        robot.reset_arm(q0 if k == 0 else rng.uniform(robot.lower, robot.upper))
        for j in links:
            p, o = _frame(c, body, j)
            data[j].append((p, o, *_world_box(c, body, j)))
    robot.reset_arm(q0)
    return {j: _fit_box(v) for j, v in data.items()}


def _base_box(client: int, body: int) -> tuple:
    """A single-link body's AABB in its base (centre-of-mass) frame (:func:`_fit_box`)."""
    p, q = pb.getBasePositionAndOrientation(body, physicsClientId=client)
    data = []
    for orn in (q, (0.3826834, 0, 0, 0.9238795), (0, 0.3826834, 0, 0.9238795), (0, 0, 0.3826834, 0.9238795)):
        pb.resetBasePositionAndOrientation(body, p, orn, physicsClientId=client)
        data.append((p, orn, *_world_box(client, body, -1)))
    pb.resetBasePositionAndOrientation(body, p, q, physicsClientId=client)
    return _fit_box(data)
