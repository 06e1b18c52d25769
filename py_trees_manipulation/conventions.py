"""Conventions used across the whole public API, stated once.

- Units: SI. Metres, radians inside the code, seconds, newtons, newton-metres. Parameters that
  users write in degrees say so in their name (``angle_deg``) or documentation.
- Frames: right-handed. A pose is a ``(4, 4)`` homogeneous transform ``T_a2b`` that maps
  coordinates in frame ``a`` to frame ``b`` (pytransform3d's ``A2B`` naming: ``tcp2world``).
- Quaternions: **scalar-first ``(w, x, y, z)``** (transforms3d, Lynch & Park) at every public
  boundary: YAML files, the blackboard, messages and docstrings. PyBullet and ROS are scalar-last
  ``(x, y, z, w)``; the converters below are used only at those two boundaries.
- Wrenches are ``(force, torque)``; twists and screws are ``(omega, v)`` (Lynch & Park).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

QUATERNION_ORDER = "wxyz"


def quat_wxyz_from_xyzw(q: Sequence[float]) -> np.ndarray:
    """Scalar-last ``(x, y, z, w)`` (PyBullet, ROS) to our scalar-first ``(w, x, y, z)``."""
    x, y, z, w = (float(v) for v in q)
    return np.array([w, x, y, z])


def quat_xyzw_from_wxyz(q: Sequence[float]) -> tuple[float, float, float, float]:
    """Our scalar-first ``(w, x, y, z)`` to scalar-last ``(x, y, z, w)`` (PyBullet, ROS)."""
    w, x, y, z = (float(v) for v in q)
    return (x, y, z, w)
