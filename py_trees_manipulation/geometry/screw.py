r"""Screw motions: opening a door (rotation about a hinge), a drawer (translation), a lever (twist).

Follows Lynch & Park, *Modern Robotics* (2017), ch. 3.3: a screw axis is a unit direction
``omega`` through a point ``q`` with a pitch ``h`` (metres per radian); its normalised twist is
``S = (omega, v)`` with ``v = -omega x q + h omega`` (rotation first, as everywhere in this
package). Infinite pitch is a pure translation: ``S = (0, v)`` with ``|v| = 1``.

A rigidly held pose moved along the screw by ``theta`` is expressed in the fixed (world) frame:

.. math:: T(\theta) = e^{[S]\theta}\, T_0, \qquad
          R(\theta) = \mathrm{Rot}(\omega, \theta) R_0, \qquad
          p(\theta) = q + \mathrm{Rot}(\omega, \theta)(p_0 - q) + h \theta \omega .

``theta`` is in radians for a finite pitch and in metres for a pure translation. This is also what
MoveIt Task Constructor ``MoveRelative`` does with a twist ``(angular=theta omega, linear=h theta
omega)`` when its IK frame sits on the hinge.

Poses are ``(4, 4)`` homogeneous transforms; positions in metres.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Sequence

import numpy as np
import transforms3d as t3d
from numpy.typing import NDArray

from py_trees_manipulation.geometry.poses import Pose, check_pose

if TYPE_CHECKING:  # pragma: no cover
    from py_trees_manipulation.geometry.affordances import Subframes

_EPS = 1e-12


def _unit(v: Sequence[float], what: str) -> NDArray[np.float64]:
    a = np.asarray(v, dtype=np.float64).reshape(-1)
    if a.shape != (3,):
        raise ValueError(f"{what} must be a 3-vector, got shape {a.shape}")
    n = float(np.linalg.norm(a))
    if n < 1e-9:
        raise ValueError(f"{what} must be non-zero, got {a.tolist()}")
    return a / n


@dataclass(frozen=True)
class Screw:
    """A screw axis: unit direction, a point on it, and a pitch.

    Attributes:
        axis: (3,) unit direction ``omega`` (for a translation: the unit direction of motion).
        point: (3,) a point ``q`` on the axis, metres (ignored for a pure translation).
        pitch_m_per_rad: ``h``; 0 for a pure rotation (a door), ``math.inf`` for a pure
            translation (a drawer), otherwise a helix (metres of travel along ``axis`` per radian).

    Build with :meth:`rotation`, :meth:`translation` or :func:`screw_from_subframes`; the
    constructor normalises ``axis``.
    """

    axis: NDArray[np.float64]
    point: NDArray[np.float64]
    pitch_m_per_rad: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "axis", _unit(self.axis, "screw axis"))
        p = np.asarray(self.point, dtype=np.float64).reshape(-1)
        if p.shape != (3,):
            raise ValueError(f"screw point must be a 3-vector, got shape {p.shape}")
        object.__setattr__(self, "point", p)
        h = float(self.pitch_m_per_rad)
        if math.isnan(h) or h == -math.inf:
            raise ValueError(f"pitch_m_per_rad must be finite or +inf, got {h}")
        object.__setattr__(self, "pitch_m_per_rad", h)

    @classmethod
    def rotation(cls, axis: Sequence[float], point: Sequence[float], pitch_m_per_rad: float = 0.0) -> "Screw":
        """Screw about ``axis`` (3,) through ``point`` (3,) m, pitch in m/rad (0: a hinge)."""
        return cls(np.asarray(axis, dtype=float), np.asarray(point, dtype=float), pitch_m_per_rad)

    @classmethod
    def translation(cls, direction: Sequence[float]) -> "Screw":
        """Pure translation (infinite pitch) along ``direction`` (3,); ``theta`` is then metres."""
        return cls(np.asarray(direction, dtype=float), np.zeros(3), math.inf)

    @property
    def is_translation(self) -> bool:
        """True for infinite pitch (``theta`` in metres)."""
        return math.isinf(self.pitch_m_per_rad)

    @property
    def twist(self) -> NDArray[np.float64]:
        """Normalised screw axis ``S`` (6,) ``(omega_1..3, v_1..3)`` (Lynch & Park eq. 3.70)."""
        if self.is_translation:
            return np.concatenate([np.zeros(3), self.axis])
        v = -np.cross(self.axis, self.point) + self.pitch_m_per_rad * self.axis
        return np.concatenate([self.axis, v])

    def radius_m(self, position: Sequence[float]) -> float:
        """Distance (m) from ``position`` (3,) to the axis line; 0 for a pure translation."""
        if self.is_translation:
            return 0.0
        r = np.asarray(position, dtype=np.float64).reshape(3) - self.point
        return float(np.linalg.norm(r - np.dot(r, self.axis) * self.axis))


def screw_from_subframes(subframes: "Subframes", pitch_m_per_rad: float = 0.0) -> Screw:
    """The screw defined by affordance subframes (see :mod:`.affordances`).

    The axis runs from ``subframes.screw_origin`` to ``subframes.screw_axis`` (positions) through
    ``screw_origin``; a positive ``theta`` is right-handed about it. For
    :func:`~.affordances.calculate_move_along_arc_subframes` that pulls the door toward the
    viewer. With ``pitch_m_per_rad=math.inf`` the screw is a translation along that direction.

    Raises:
        ValueError: the two screw subframes are at the same position.
    """
    o = check_pose(subframes.screw_origin)[:3, 3]
    a = check_pose(subframes.screw_axis)[:3, 3]
    if math.isinf(pitch_m_per_rad):
        return Screw.translation(a - o)
    return Screw.rotation(_unit(a - o, "screw_axis - screw_origin"), o, pitch_m_per_rad)


def pose_on_screw(start_pose: Pose, screw: Screw, theta: float) -> Pose:
    """Pose after moving a rigidly held ``start_pose`` by ``theta`` along ``screw``.

    ``T(theta) = exp([S] theta) @ T0`` (world frame, left-multiplied): the orientation turns with
    the motion, as a grasp on a door handle does.

    Args:
        start_pose: (4, 4) pose ``T0`` at ``theta = 0``, world frame.
        screw: the screw axis.
        theta: radians (finite pitch) or metres (pure translation).

    Returns:
        (4, 4) pose, world frame.
    """
    T0 = check_pose(start_pose)
    out = T0.copy()
    if screw.is_translation:
        out[:3, 3] = T0[:3, 3] + float(theta) * screw.axis
        return out
    R = t3d.axangles.axangle2mat(screw.axis, float(theta), is_normalized=True)
    out[:3, :3] = R @ T0[:3, :3]
    out[:3, 3] = screw.point + R @ (T0[:3, 3] - screw.point) + screw.pitch_m_per_rad * float(theta) * screw.axis
    return out


def exp_twist(twist: Sequence[float], theta: float) -> Pose:
    r"""Matrix exponential ``exp([S] theta)`` of a twist ``S = (omega, v)`` (6,) (Lynch & Park 3.88).

    .. math:: e^{[S]\theta} = \begin{bmatrix} \mathrm{Rot}(\omega,\theta) &
              (I\theta + (1-\cos\theta)[\omega] + (\theta-\sin\theta)[\omega]^2) v \\ 0 & 1
              \end{bmatrix}

    ``omega`` must be unit or zero (then ``v`` is the unit translation direction).

    Returns:
        (4, 4) transform.
    """
    S = np.asarray(twist, dtype=np.float64).reshape(-1)
    if S.shape != (6,):
        raise ValueError(f"twist must be (omega, v) with shape (6,), got {S.shape}")
    w, v = S[:3], S[3:]
    th = float(theta)
    T = np.eye(4)
    if np.linalg.norm(w) < _EPS:
        T[:3, 3] = v * th
        return T
    if abs(np.linalg.norm(w) - 1.0) > 1e-6:
        raise ValueError(f"omega must be a unit vector or zero, got norm {np.linalg.norm(w)}")
    W = np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])
    T[:3, :3] = np.eye(3) + math.sin(th) * W + (1.0 - math.cos(th)) * W @ W
    T[:3, 3] = (np.eye(3) * th + (1.0 - math.cos(th)) * W + (th - math.sin(th)) * W @ W) @ v
    return T


def chord_error_m(radius_m: float, step_rad: float) -> float:
    """Largest distance (m) between an arc of radius ``radius_m`` and the chord of a step.

    The sagitta ``e = r (1 - cos(step / 2))`` (about ``r step^2 / 8`` for small steps).
    """
    return float(radius_m) * (1.0 - math.cos(abs(float(step_rad)) / 2.0))


def max_step_for_chord_error(radius_m: float, max_chord_error_m: float, max_step_rad: float = math.pi / 2) -> float:
    """Largest angular step (rad) whose chord stays within ``max_chord_error_m`` of the arc.

    Inverts :func:`chord_error_m`: ``step = 2 acos(1 - e / r)`` (about ``sqrt(8 e / r)``), capped
    at ``max_step_rad``. Example: ``r = 0.5 m, e = 1 mm`` gives 0.1265 rad (7.25 deg).

    Raises:
        ValueError: ``max_chord_error_m <= 0``, ``radius_m < 0`` or ``max_step_rad <= 0``.
    """
    r, e = float(radius_m), float(max_chord_error_m)
    if e <= 0.0 or r < 0.0 or max_step_rad <= 0.0:
        raise ValueError(
            f"need max_chord_error_m > 0, radius_m >= 0, max_step_rad > 0; got {e}, {r}, {max_step_rad}"
        )
    if r <= e:
        return float(max_step_rad)
    return min(2.0 * math.acos(1.0 - e / r), float(max_step_rad))


def screw_waypoints(
    start_pose: Pose,
    screw: Screw,
    theta: float,
    max_chord_error_m: float = 0.001,
    *,
    radius_m: Optional[float] = None,
    max_step: Optional[float] = None,
) -> list[Pose]:
    """Evenly spaced poses along a screw, consecutive ones within a chord error of the true path.

    For a rotation the step is :func:`max_step_for_chord_error` at the grasp radius ``r``
    (default: the distance of ``start_pose``'s origin from the axis), so the straight segments a
    Cartesian controller follows between waypoints deviate at most ``max_chord_error_m`` from the
    circular arc (the translation of a helix is linear in ``theta`` and adds no chord error). A pure
    translation (a drawer) is a straight line: two waypoints unless ``max_step`` (metres) asks for
    more.

    Args:
        start_pose: (4, 4) pose at ``theta = 0``, world frame (e.g. the TCP on the handle).
        screw: the screw axis (:func:`screw_from_subframes`, :meth:`Screw.translation`).
        theta: total motion, radians (rotation) or metres (translation); its sign is the
            direction.
        max_chord_error_m: largest chord-to-arc distance allowed, metres (> 0).
        radius_m: radius used for the chord error, metres; default from ``start_pose``.
        max_step: optional cap on the step, radians (rotation) or metres (translation).

    Returns:
        ``n + 1`` poses (4, 4), the first equal to ``start_pose`` and the last at ``theta``, where
        ``n = max(1, ceil(|theta| / step))``. Example: ``r = 0.5 m``, ``e = 1 mm``, 55 deg -> 8
        segments, 9 poses.

    Raises:
        ValueError: bad ``max_chord_error_m`` or ``max_step``.
    """
    T0 = check_pose(start_pose)
    if not max_chord_error_m > 0.0:
        raise ValueError(f"max_chord_error_m must be > 0, got {max_chord_error_m}")
    if max_step is not None and not max_step > 0.0:
        raise ValueError(f"max_step must be > 0, got {max_step}")
    th = float(theta)
    if screw.is_translation:
        step = math.inf if max_step is None else float(max_step)
    else:
        r = screw.radius_m(T0[:3, 3]) if radius_m is None else float(radius_m)
        step = max_step_for_chord_error(r, max_chord_error_m, math.pi / 2 if max_step is None else float(max_step))
    n = max(1, math.ceil(abs(th) / step - 1e-12)) if math.isfinite(step) else 1
    return [pose_on_screw(T0, screw, th * k / n) for k in range(n + 1)]


def screw_coordinate(screw: Screw, start_position: Sequence[float], position: Sequence[float]) -> float:
    """How far along ``screw`` a point has moved from ``start_position`` to ``position``.

    The inverse of :func:`pose_on_screw` for a rigidly carried point, measured from positions only
    (what a robot knows of its own TCP when it holds a handle):

    - pure translation: the displacement along the axis, metres, ``(p - p0) . axis``;
    - rotation (finite pitch): the signed angle, radians, from ``p0 - q`` to ``p - q`` projected on
      the plane normal to the axis, positive right-handed about it (in ``(-pi, pi]``). The pitch
      is not used: the angle is read from the rotation alone.

    Args:
        screw: the screw axis.
        start_position: (3,) position at ``theta = 0``, metres.
        position: (3,) position now, metres.

    Returns:
        radians (rotation) or metres (translation). 0 when either point lies on the axis.
    """
    p0 = np.asarray(start_position, dtype=np.float64).reshape(3)
    p = np.asarray(position, dtype=np.float64).reshape(3)
    w = screw.axis
    if screw.is_translation:
        return float(np.dot(p - p0, w))
    a = p0 - screw.point
    b = p - screw.point
    a = a - np.dot(a, w) * w
    b = b - np.dot(b, w) * w
    if np.linalg.norm(a) < 1e-9 or np.linalg.norm(b) < 1e-9:
        return 0.0
    return float(math.atan2(np.dot(np.cross(a, b), w), np.dot(a, b)))
