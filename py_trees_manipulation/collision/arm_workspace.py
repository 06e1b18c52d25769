"""The arm's workspace, from its kinematics: its mirror symmetry (:class:`ArmMirror`: mirror-image
IK seeds, so a door hinged on the right is searched like one hinged on the left) and the range of
its wrist point's distance from the shoulder (:class:`WristBounds`: a necessary condition for
reaching a TCP pose, the base search's ranking). Both cached per robot model.

Units: metres, radians. Poses: (4, 4) homogeneous transforms, world frame.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np
import pybullet as pb

from .base_pose import base_frame
from .world import CollisionWorld

__all__ = ["ArmMirror", "arm_mirror", "WristBounds", "wrist_bounds"]


@dataclass(frozen=True)
class ArmMirror:
    """The arm's mirror symmetry about its base's x-z plane: ``q' = signs * q + offsets`` puts every
    arm link where the mirror image (base-frame y negated) of ``q`` puts it, and the TCP in the
    mirror image of its pose (approach z and finger line y mirrored, x = y cross z). A door hinged
    on the right is the mirror image of one hinged on the left, so an IK seed and its mirror image
    make the search treat both alike (:meth:`ReachChecker.seeds_for`). For the Panda: joints 1, 3,
    5 and 7 negated and joint 7 turned a further -90 deg (its hand sits 45 deg about the flange).

    Attributes:
        signs: (n,) +1 or -1 per arm joint. offsets: (n,) radians added after the signs.
    """

    signs: np.ndarray
    offsets: np.ndarray

    def __call__(self, q: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
        """The mirror image of configuration ``q`` (radians), wrapped by 2 pi into the limits where
        that fits, then clipped."""
        m = self.signs * np.asarray(q, dtype=float) + self.offsets
        for k in range(len(m)):
            for turn in (-2 * math.pi, 2 * math.pi):
                if not lower[k] <= m[k] <= upper[k] and lower[k] <= m[k] + turn <= upper[k]:
                    m[k] += turn
        return np.clip(m, lower, upper)


_MIRROR_CACHE: dict[tuple, Optional[ArmMirror]] = {}


def _model_key(r: Any) -> tuple:
    """What a per-model cache (:func:`arm_mirror`, :func:`wrist_bounds`) is keyed by: the model, its
    URDF and its TCP."""
    return (r.model.name, r.model.urdf_path, tuple(r.model.tcp_position), tuple(r.model.tcp_orientation))


def _per_model(cache: dict) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Cache ``f(world, robot, ...)`` in ``cache`` per robot model (:func:`_model_key`): computed
    once per model, whatever the world and the robot's name."""
    def wrap(f: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(f)
        def cached(world: CollisionWorld, robot: str, *args: Any, **kwargs: Any) -> Any:
            key = _model_key(world.robots[robot])
            if key not in cache:
                cache[key] = f(world, robot, *args, **kwargs)
            return cache[key]
        return cached
    return wrap


@_per_model(_MIRROR_CACHE)
def arm_mirror(world: CollisionWorld, robot: str) -> Optional[ArmMirror]:
    """The :class:`ArmMirror` of ``robot``'s model (cached per model), found numerically: the joint
    sign pattern that mirrors every arm link origin and the TCP position over three random
    configurations (1 mm), then the last joint's offset that mirrors the TCP orientation (the same
    within 0.01 rad for all three). None when the arm has no such symmetry."""
    import itertools

    r = world.robots[robot]
    c, body = world.client, r.body
    q0 = r.joint_positions()
    B = base_frame(world, robot)
    Binv = np.linalg.inv(B)
    M = np.diag([1.0, -1.0, 1.0])
    n = len(r.arm_joints)
    lo, hi = r.lower, r.upper
    rng = np.random.default_rng(1)
    # configurations whose mirror image (odd joints negated) stays inside symmetric limits
    mid = np.minimum(np.abs(lo), np.abs(hi)) * 0.8
    qs = [rng.uniform(np.where(mid > 0.05, -mid, lo), np.where(mid > 0.05, mid, hi)) for _ in range(3)]

    def frames(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        r.reset_arm(q)
        pts = []
        for j in r.arm_joints:
            st = pb.getLinkState(body, j, computeForwardKinematics=True, physicsClientId=c)
            pts.append(Binv[:3, :3] @ np.array(st[4]) + Binv[:3, 3])
        T = Binv @ r.tcp_pose()
        pts.append(T[:3, 3])
        return np.array(pts), T[:3, :3]

    out: Optional[ArmMirror] = None
    try:
        ref = [frames(q) for q in qs]
        for signs in itertools.product((1.0, -1.0), repeat=n):
            s = np.array(signs)
            if not all(np.max(np.abs(frames(s * q)[0] - (M @ P.T).T)) < 1e-3 for q, (P, _) in zip(qs, ref)):
                continue
            # the last joint's offset: the TCP turns about that joint's axis (fixed in the TCP frame)
            R1 = frames(s * qs[0])[1]
            dq = np.zeros(n)
            dq[-1] = 0.1
            w = _rotvec(R1.T @ frames(s * qs[0] + dq)[1])
            axis = w / max(np.linalg.norm(w), 1e-12)
            offs = []
            for q, (_, R) in zip(qs, ref):
                e = _rotvec(frames(s * q)[1].T @ (M @ R @ np.diag([-1.0, 1.0, 1.0])))
                offs.append(float(np.dot(e, axis)) if np.linalg.norm(np.cross(e, axis)) < 1e-2 else math.nan)
            if all(math.isfinite(o) and abs(math.remainder(o - offs[0], 2 * math.pi)) < 1e-2 for o in offs):
                offsets = np.zeros(n)
                offsets[-1] = offs[0]
                out = ArmMirror(s, offsets)
                break
        return out
    finally:
        r.reset_arm(q0)


def _rotvec(R: np.ndarray) -> np.ndarray:
    """The rotation vector (axis times angle, radians) of a rotation matrix."""
    from transforms3d.axangles import mat2axangle

    ax, ang = mat2axangle(R, unit_thresh=1e-4)
    return np.asarray(ax, dtype=float) * ang


@dataclass(frozen=True)
class WristBounds:
    """A necessary condition for reaching a TCP pose, from the arm's kinematics: the **wrist point**
    (on the last arm joint's axis where it passes closest to the axis before it: a spherical wrist's
    centre; rigidly placed by the TCP pose) lies between ``lo`` and
    ``hi`` metres from the **shoulder** (the origin of the second arm joint's link, fixed in the base
    frame when it lies on the first joint's axis), over the joint limits (4,096 seeded
    configurations, 2 cm margin). The iiwa's 120 deg elbow, for example, keeps its wrist 0.41 m or
    more from its shoulder.

    Attributes:
        wrist_in_tcp: (3,) the wrist point in the TCP frame, metres.
        shoulder_in_base: (3,) the shoulder in the URDF base frame, metres.
        lo, hi: the distance range, metres.
    """

    wrist_in_tcp: np.ndarray
    shoulder_in_base: np.ndarray
    lo: float
    hi: float

    def wrists(self, poses: np.ndarray) -> np.ndarray:
        """Wrist points (n, 3) of TCP poses (n, 4, 4), world frame."""
        return poses[:, :3, :3] @ self.wrist_in_tcp + poses[:, :3, 3]


_WRIST_CACHE: dict[tuple, Optional[WristBounds]] = {}


@_per_model(_WRIST_CACHE)
def wrist_bounds(world: CollisionWorld, robot: str, samples: int = 4096) -> Optional[WristBounds]:
    """The :class:`WristBounds` of ``robot``'s model (cached per model), or None when its shoulder
    is not on the first joint's axis (then no such filter applies)."""
    r = world.robots[robot]
    c, body = world.client, r.body
    q0 = r.joint_positions()
    B = base_frame(world, robot)
    Binv = np.linalg.inv(B)
    last, before, shoulder_link = r.arm_joints[-1], r.arm_joints[-2], r.arm_joints[1]

    def axis(j: int) -> tuple[np.ndarray, np.ndarray]:
        st = pb.getLinkState(body, j, computeForwardKinematics=True, physicsClientId=c)
        R = np.array(pb.getMatrixFromQuaternion(st[5])).reshape(3, 3)
        a = np.array(pb.getJointInfo(body, j, physicsClientId=c)[13], dtype=float)
        return np.array(st[4]), R @ (a / np.linalg.norm(a))

    rng = np.random.default_rng(0)
    qs = rng.uniform(r.lower, r.upper, size=(samples, len(r.lower)))
    d, w_tcp, s_base = [], [], []
    try:
        # the wrist point: on the last joint's axis (rigid with the TCP), where it passes closest to
        # the axis before it (a spherical wrist's centre)
        r.reset_arm(q0)
        p7, a7 = axis(last)
        p6, a6 = axis(before)
        n = np.cross(a7, a6)
        if np.linalg.norm(n) > 1e-6:
            t7 = float(np.dot(np.cross(p6 - p7, a6), n) / np.dot(n, n))
        else:
            t7 = 0.0
        T = r.tcp_pose()
        w_in_tcp = T[:3, :3].T @ (p7 + t7 * a7 - T[:3, 3])
        for q in qs:
            pb.resetJointStatesMultiDof(body, list(r.arm_joints), [[float(v)] for v in q], physicsClientId=c)
            s = np.array(pb.getLinkState(body, shoulder_link, computeForwardKinematics=True, physicsClientId=c)[4])
            T = r.tcp_pose()
            w = T[:3, :3] @ w_in_tcp + T[:3, 3]
            p7, a7 = axis(last)
            w_tcp.append(np.linalg.norm(np.cross(w - p7, a7)))   # stays on the last axis
            s_base.append(Binv[:3, :3] @ s + Binv[:3, 3])
            d.append(float(np.linalg.norm(w - s)))
    finally:
        r.reset_arm(q0)
    s_base_a = np.array(s_base)
    out: Optional[WristBounds] = None
    if max(w_tcp) < 1e-4 and np.ptp(s_base_a, axis=0).max() < 1e-4:
        out = WristBounds(w_in_tcp, s_base_a.mean(axis=0), max(0.0, min(d) - 0.02), max(d) + 0.02)
    return out
