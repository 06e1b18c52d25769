"""Results of a reachability check and a base search, and where a base may stand.

:class:`SampleResult` (one sample of a path), :class:`TargetResult` (one target, with its failure's
message), :class:`MountingSurface` (the floor or a fixture's top) and :class:`BasePlacement` (the
outcome of :func:`~.base_search.find_base`, as the run summary and the printed pose give it).
Overview: :mod:`~.reachability`.

Units: metres, radians (degrees in texts). Poses: (4, 4) homogeneous transforms, world frame.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from ..geometry.poses import Pose
from ..scene.reach_targets import ReachTarget
from .contacts import Proximity

__all__ = ["SampleResult", "TargetResult", "MountingSurface", "BasePlacement"]


@dataclass
class SampleResult:
    """How one sample went. ``reason`` is empty when ``ok``.

    Attributes:
        label: the sample's label. ok: reached, collision-free.
        q: the arm configuration (radians) found, or the best IK attempt.
        position_error_m, orientation_error_rad: IK error of ``q``.
        collision: the collision at ``q`` when that is why it failed.
        reason: ``"is out of reach: best IK 0.060 m away"`` and the like.
        blocked: the door or drawer itself hits something there (no base pose changes that).
    """

    label: str
    ok: bool
    q: Optional[np.ndarray] = None
    position_error_m: float = float("nan")
    orientation_error_rad: float = float("nan")
    collision: Optional[Proximity] = None
    reason: str = ""
    blocked: bool = False


@dataclass
class TargetResult:
    """The check of one :class:`ReachTarget`.

    Attributes:
        target: the target. ok: one of its paths is reachable.
        path: the index of the reachable path (or of the one that got furthest).
        reached: samples of that path reached in order.
        failure: the sample that stopped the furthest path (None when ``ok``).
        configurations: the arm configurations along the reachable path, radians.
        tried: alternative paths tried.
    """

    target: ReachTarget
    ok: bool
    path: int = 0
    reached: int = 0
    failure: Optional[SampleResult] = None
    configurations: list = field(default_factory=list)
    tried: int = 0

    @property
    def samples(self) -> int:
        """Samples in the path that got furthest."""
        return len(self.target.paths[self.path]) if self.target.paths else 0

    def describe(self) -> str:
        """``"the door handle at 40 deg of its 60 deg arc is out of reach: best IK 0.060 m away"``;
        for a target with alternatives: ``"no grasp of 'mug' is reachable (24 tried); the nearest:
        ..."``; ``"reachable"`` when ``ok``."""
        if self.ok:
            return f"{self.target.name} is reachable"
        f = self.failure
        text = f"{f.label} {f.reason}" if f is not None else f"{self.target.name} has nothing to reach"
        if len(self.target.paths) > 1:
            return f"none of the {len(self.target.paths)} ways to reach {self.target.name} works; the nearest: {text}"
        return text


@dataclass(frozen=True)
class MountingSurface:
    """Where a robot base may stand: the floor or the top of a fixture.

    Attributes:
        name: ``"floor"`` or the fixture's name.
        z: height of the surface (the base frame's z), metres.
        region: ``(x_min, x_max, y_min, y_max)`` the base origin must lie in, metres; None: anywhere.
        body: the fixture's name (its contact with the robot base is not a collision), or None.
    """

    name: str
    z: float = 0.0
    region: Optional[tuple] = None
    body: Optional[str] = None

    def contains(self, x: float, y: float) -> bool:
        if self.region is None:
            return True
        x0, x1, y0, y1 = self.region
        return x0 <= x <= x1 and y0 <= y <= y1


@dataclass
class BasePlacement:
    """The outcome of :func:`find_base`.

    Attributes:
        robot: the robot's name. ok: every target is reachable from ``pose``.
        pose: (4, 4) base pose (on success; else the candidate that reached the most, or None).
        surface: the :class:`MountingSurface`.
        results: the target checks at ``pose``.
        failure: when not ``ok``: why (names the target no base reaches).
        candidates: candidate poses checked (IK and collision). time_s: wall time of the search.
        relaxed: empty when the pose passed with the search's full margins; else which margins
            :func:`find_base_relaxing` gave up to find it (:data:`RELAX_STEPS`).
        timed_out: the search's time (or its counted budget) ran out before it tried any base position
            (``failure`` says so).
    """

    robot: str
    ok: bool
    pose: Optional[Pose]
    surface: MountingSurface
    results: list = field(default_factory=list)
    failure: str = ""
    candidates: int = 0
    time_s: float = 0.0
    relaxed: str = ""
    timed_out: bool = False

    @property
    def position(self) -> list[float]:
        return [round(float(v), 4) for v in self.pose[:3, 3]] if self.pose is not None else []

    @property
    def yaw_deg(self) -> float:
        if self.pose is None:
            return float("nan")
        return round(math.degrees(math.atan2(self.pose[1, 0], self.pose[0, 0])), 2) + 0.0

    def base_pose_spec(self) -> dict[str, Any]:
        """The pose as a task file writes it: ``{position: [x, y, z], rpy_deg: [0, 0, yaw]}``."""
        return {"position": self.position, "rpy_deg": [0.0, 0.0, self.yaw_deg]}

    def summary(self) -> dict[str, Any]:
        """Plain values for the run summary."""
        out: dict[str, Any] = {"ok": self.ok, "surface": self.surface.name, "candidates": self.candidates,
                               "search_time_s": round(self.time_s, 3),
                               "targets": [r.target.name for r in self.results]}
        if self.pose is not None:
            out.update(self.base_pose_spec())
        if self.relaxed:
            out["relaxed"] = self.relaxed
        if not self.ok:
            out["failure"] = self.failure
        return out

    def describe(self) -> str:
        """``"panda on the floor at (0.12, -0.30, 0.00) facing 35.0 deg (14 candidates, 0.8 s)"``."""
        where = "nowhere" if self.pose is None else (
            f"at ({', '.join(f'{v:.3f}' for v in self.position)}) facing {self.yaw_deg:.1f} deg")
        on = "on the floor" if self.surface.name == "floor" else f"on {self.surface.name!r}"
        relaxed = f"; with {self.relaxed}" if self.relaxed else ""
        return f"{self.robot} {on} {where} ({self.candidates} candidates, {self.time_s:.1f} s{relaxed})"
