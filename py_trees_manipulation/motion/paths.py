"""Piecewise-linear joint-space paths: length, dense states along them, the first invalid state.

A path is an array of waypoints, shape ``(n, dof)``, radians, executed as straight segments in
joint space (this is what :func:`~.timing.time_parameterize` produces, so what is checked here is
what runs). Distances are Euclidean in joint space (radians), as OMPL's ``RealVectorStateSpace``
measures them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

import numpy as np

__all__ = ["as_path", "path_length", "densify", "InvalidState", "first_invalid"]


def as_path(waypoints: Sequence[Sequence[float]]) -> np.ndarray:
    """Waypoints as a float array of shape ``(n, dof)``.

    Raises:
        ValueError: fewer than one waypoint, ragged rows or non-finite values.
    """
    try:
        path = np.array(waypoints, dtype=float)
    except ValueError as e:
        raise ValueError(f"waypoints must be a (n, dof) array of numbers: {e}") from None
    if path.ndim != 2 or path.shape[0] < 1:
        raise ValueError(f"waypoints must be a (n, dof) array with n >= 1, got shape {path.shape}")
    if not np.all(np.isfinite(path)):
        raise ValueError("waypoints contain a non-finite value")
    return path


def path_length(waypoints: Sequence[Sequence[float]]) -> float:
    """Sum of the Euclidean joint-space lengths of the segments, radians."""
    path = as_path(waypoints)
    if len(path) < 2:
        return 0.0
    return float(np.sum(np.linalg.norm(np.diff(path, axis=0), axis=1)))


def densify(waypoints: Sequence[Sequence[float]], max_step: float) -> tuple[np.ndarray, np.ndarray]:
    """States along the path no more than ``max_step`` (rad, Euclidean) apart, ends included.

    Returns:
        ``(states (m, dof), fraction (m,))``: ``fraction`` is the arc length from the start over the
        path length, 0 at the first state and 1 at the last (all zeros for a path of length zero).

    Raises:
        ValueError: ``max_step`` is not positive.
    """
    if not max_step > 0:
        raise ValueError(f"max_step must be > 0 rad, got {max_step}")
    path = as_path(waypoints)
    states = [path[0]]
    arc = [0.0]
    for a, b in zip(path[:-1], path[1:]):
        seg = float(np.linalg.norm(b - a))
        n = max(1, int(math.ceil(seg / max_step)))
        for k in range(1, n + 1):
            states.append(a + (b - a) * (k / n))
            arc.append(arc[-1] + seg / n)
    total = arc[-1]
    frac = np.array(arc) / total if total > 0 else np.zeros(len(arc))
    return np.array(states), frac


@dataclass(frozen=True)
class InvalidState:
    """The first invalid state found along a path.

    Attributes:
        index: index of the state in the densified path (:func:`densify`).
        fraction: arc-length fraction of the path where it lies, 0..1.
        q: the joint positions, radians, shape (dof,).
    """

    index: int
    fraction: float
    q: np.ndarray


def first_invalid(waypoints: Sequence[Sequence[float]], is_valid: Callable[[np.ndarray], bool],
                  max_step: float) -> Optional[InvalidState]:
    """Check the densified path state by state (start first); return the first invalid one, or None.

    Args:
        waypoints: the path, shape (n, dof), radians.
        is_valid: ``is_valid(q) -> bool`` for one configuration.
        max_step: largest joint-space distance between two checked states, radians.
    """
    states, frac = densify(waypoints, max_step)
    for i, q in enumerate(states):
        if not is_valid(q):
            return InvalidState(i, float(frac[i]), q)
    return None
