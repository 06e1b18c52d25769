"""Pose algebra on ``(4, 4)`` homogeneous transforms, built on transforms3d.

All quaternions are scalar-first ``(w, x, y, z)``; angles in radians unless a name says ``_deg``.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import transforms3d as t3d
from numpy.typing import NDArray

Pose = NDArray[np.float64]


def check_pose(pose: Any) -> Pose:
    """Coerce to a float64 ``(4, 4)`` homogeneous transform.

    Raises:
        ValueError: when the shape is not ``(4, 4)`` or the last row is not ``[0, 0, 0, 1]``.
    """
    arr = np.asarray(pose, dtype=np.float64)
    if arr.shape != (4, 4):
        raise ValueError(f"pose must have shape (4, 4), got {arr.shape}")
    r0, r1, r2, r3 = arr[3].tolist()  # Python floats: np.allclose is ~50 us, NumPy scalars several us
    if abs(r0) > 1e-8 or abs(r1) > 1e-8 or abs(r2) > 1e-8 or abs(r3 - 1.0) > 1e-8:
        raise ValueError(f"pose last row must be [0, 0, 0, 1], got {[r0, r1, r2, r3]}")
    return arr


def pose_from_pq(position: Sequence[float], quat_wxyz: Sequence[float] = (1.0, 0.0, 0.0, 0.0)) -> Pose:
    """Pose from a position ``(3,)`` in metres and a quaternion ``(w, x, y, z)`` (normalised here)."""
    q = np.asarray(quat_wxyz, dtype=np.float64)
    n = np.linalg.norm(q)
    if q.shape != (4,) or n < 1e-9:
        raise ValueError(f"quaternion must be 4 numbers (w, x, y, z) with non-zero norm, got {q.tolist()}")
    T = np.eye(4)
    T[:3, :3] = t3d.quaternions.quat2mat(q / n)
    T[:3, 3] = np.asarray(position, dtype=np.float64).reshape(3)
    return T


def pq_from_pose(pose: Pose) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(position (3,), quaternion (w, x, y, z))`` of a pose; the quaternion has ``w >= 0``."""
    T = check_pose(pose)
    q = t3d.quaternions.mat2quat(T[:3, :3])
    if q[0] < 0:
        q = -q
    return T[:3, 3].copy(), q


def pose_from_xyz_rpy(xyz: Sequence[float], rpy: Sequence[float] = (0.0, 0.0, 0.0)) -> Pose:
    """Pose from position (m) and roll, pitch, yaw (rad, static axes x-y-z, as URDF)."""
    T = np.eye(4)
    T[:3, :3] = t3d.euler.euler2mat(*rpy, axes="sxyz")
    T[:3, 3] = np.asarray(xyz, dtype=np.float64).reshape(3)
    return T


def rpy_from_pose(pose: Pose) -> NDArray[np.float64]:
    """Roll, pitch, yaw (rad, static x-y-z) of a pose's rotation."""
    return np.array(t3d.euler.mat2euler(check_pose(pose)[:3, :3], axes="sxyz"))


def invert(pose: Pose) -> Pose:
    """Inverse of a rigid transform (exact, not a general matrix inverse)."""
    T = check_pose(pose)
    R = T[:3, :3]
    out = np.eye(4)
    out[:3, :3] = R.T
    out[:3, 3] = -R.T @ T[:3, 3]
    return out


def translation_distance(a: Pose, b: Pose) -> float:
    """Euclidean distance between the origins of two poses, metres."""
    return float(np.linalg.norm(check_pose(a)[:3, 3] - check_pose(b)[:3, 3]))


def rotation_angle(a: Pose, b: Pose) -> float:
    """Angle of the relative rotation between two poses, radians in ``[0, pi]``."""
    R = check_pose(a)[:3, :3].T @ check_pose(b)[:3, :3]
    c = (np.trace(R) - 1.0) / 2.0
    return float(np.arccos(np.clip(c, -1.0, 1.0)))


def interpolate(a: Pose, b: Pose, s: float) -> Pose:
    """Pose a fraction ``s`` in ``[0, 1]`` of the way from ``a`` to ``b``.

    Position is linear, rotation is spherical-linear (slerp) on quaternions.
    """
    pa, qa = pq_from_pose(a)
    pb, qb = pq_from_pose(b)
    if float(np.dot(qa, qb)) < 0.0:
        qb = -qb
    dot = float(np.clip(np.dot(qa, qb), -1.0, 1.0))
    if dot > 0.9995:
        q = qa + s * (qb - qa)
    else:
        th = np.arccos(dot)
        q = (np.sin((1 - s) * th) * qa + np.sin(s * th) * qb) / np.sin(th)
    return pose_from_pq(pa + s * (pb - pa), q)


class PoseInterpolation:
    """:func:`interpolate` from ``a`` to ``b`` at many
    fractions: both poses are decomposed once (``interpolate`` does it on every call, with two
    ``check_pose`` and two ``mat2quat``); :meth:`at` computes exactly what ``interpolate(a, b, s)``
    returns (same operations in the same order, so the same bits; see tests/unit/test_sim_paths.py)."""

    def __init__(self, a: Pose, b: Pose):
        pa, qa = pq_from_pose(a)
        pb_, qb = pq_from_pose(b)
        if float(np.dot(qa, qb)) < 0.0:
            qb = -qb
        self.pa, self.dp = pa, pb_ - pa
        self.qa, self.qb, self.dq = qa, qb, qb - qa
        dot = float(np.clip(np.dot(qa, qb), -1.0, 1.0))
        self.linear = dot > 0.9995
        if not self.linear:
            self.th = np.arccos(dot)
            self.sin_th = np.sin(self.th)

    def at(self, s: float) -> Pose:
        """(4, 4) pose a fraction ``s`` in [0, 1] of the way (== ``interpolate(a, b, s)``)."""
        if self.linear:
            q = self.qa + s * self.dq
        else:
            th = self.th
            q = (np.sin((1 - s) * th) * self.qa + np.sin(s * th) * self.qb) / self.sin_th
        return pose_from_pq(self.pa + s * self.dp, q)


def pose_from_spec(spec: Any) -> Pose:
    """Pose from the YAML/blackboard forms.

    Accepted forms:
      - a ``(4, 4)`` nested list or array;
      - ``{"position": [x, y, z], "orientation": [w, x, y, z]}`` (quaternion scalar-first);
      - ``{"position": [x, y, z], "rpy_deg": [roll, pitch, yaw]}`` (degrees, static x-y-z);
      - ``{"position": [x, y, z], "rpy": [roll, pitch, yaw]}`` (radians);
      - ``[x, y, z]``: position only, identity rotation.

    Raises:
        ValueError: for any other shape, naming what was received.
    """
    if type(spec) is np.ndarray and spec.shape == (4, 4):  # a pose a behaviour wrote: the common case
        return check_pose(spec)
    if isinstance(spec, Mapping):
        unknown = set(spec) - {"position", "orientation", "rpy_deg", "rpy"}
        if unknown:
            raise ValueError(
                f"unknown pose key(s) {sorted(unknown)}; a pose has 'position' and one of "
                "'orientation' (w, x, y, z), 'rpy_deg' or 'rpy'"
            )
        pos = spec.get("position", [0.0, 0.0, 0.0])
        _check_vec(pos, 3, "position")
        rot_keys = [k for k in ("orientation", "rpy_deg", "rpy") if k in spec]
        if len(rot_keys) > 1:
            raise ValueError(f"a pose takes one rotation, got {rot_keys}")
        if "orientation" in spec:
            _check_vec(spec["orientation"], 4, "orientation (w, x, y, z)")
            return pose_from_pq(pos, spec["orientation"])
        if "rpy_deg" in spec:
            _check_vec(spec["rpy_deg"], 3, "rpy_deg")
            return pose_from_xyz_rpy(pos, np.radians(np.asarray(spec["rpy_deg"], dtype=float)))
        if "rpy" in spec:
            _check_vec(spec["rpy"], 3, "rpy")
            return pose_from_xyz_rpy(pos, spec["rpy"])
        return pose_from_xyz_rpy(pos)
    arr = np.asarray(spec, dtype=np.float64) if _is_numeric_seq(spec) else None
    if arr is not None and arr.shape == (4, 4):
        return check_pose(arr)
    if arr is not None and arr.shape == (3,):
        return pose_from_xyz_rpy(arr)
    raise ValueError(
        "a pose is {position: [x, y, z], orientation: [w, x, y, z] | rpy_deg: [r, p, y]}, "
        f"a 4x4 matrix or [x, y, z]; got {spec!r}"
    )


def pose_to_spec(pose: Pose) -> dict[str, list[float]]:
    """The ``{position, orientation (w, x, y, z)}`` form of a pose, for YAML, JSON and logs."""
    p, q = pq_from_pose(pose)
    return {"position": [round(float(v), 6) for v in p], "orientation": [round(float(v), 6) for v in q]}


def _is_numeric_seq(x: Any) -> bool:
    try:
        np.asarray(x, dtype=np.float64)
        return not isinstance(x, (str, bytes))
    except (TypeError, ValueError):
        return False


def _check_vec(v: Any, n: int, what: str) -> None:
    if not _is_numeric_seq(v) or np.asarray(v, dtype=float).shape != (n,):
        raise ValueError(f"{what} must be a list of {n} numbers, got {v!r}")
