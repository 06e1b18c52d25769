"""A PyBullet pose read, as our ``(4, 4)`` homogeneous transform.

PyBullet gives a position ``(3,)`` in metres and a scalar-last quaternion ``(x, y, z, w)``; the rest
of the project uses ``(4, 4)`` transforms and scalar-first quaternions (see
:mod:`py_trees_manipulation.conventions`). The rotation comes from PyBullet's own
``getMatrixFromQuaternion`` (row-major 3x3): a sim run reads poses at every tick (the TCP, the
objects), and this is about a sixth of the cost of the general
:func:`~py_trees_manipulation.geometry.poses.pose_from_pq` (transforms3d, with its checks).
"""

from __future__ import annotations

from . import _quiet_import  # noqa: F401  (first: pybullet's import banner)

from typing import Sequence

import numpy as np
import pybullet as pb

from ..geometry.poses import Pose


def pose_from_pybullet(position: Sequence[float], orientation_xyzw: Sequence[float]) -> Pose:
    """``(4, 4)`` pose, same frame as the inputs, metres, from a PyBullet position ``(3,)`` and
    unit quaternion ``(x, y, z, w)`` (as ``getBasePositionAndOrientation`` and ``getLinkState``
    return them)."""
    m = pb.getMatrixFromQuaternion(orientation_xyzw)
    return np.array((m[0], m[1], m[2], position[0],       # flat, then reshaped: a quarter faster
                     m[3], m[4], m[5], position[1],       # than numpy finding the nested shape
                     m[6], m[7], m[8], position[2],
                     0.0, 0.0, 0.0, 1.0)).reshape(4, 4)
