"""World behaviours: object poses and conditions on the scene.

Behaviours: ``GetObjectPose`` (ground truth in sim, with optional noise; a perception topic on
hardware), ``ObjectLifted`` and ``ObjectNear`` (conditions: SUCCESS or FAILURE on the first tick,
never RUNNING).
"""

from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np
from py_trees.common import Status

from ..geometry.poses import pose_from_xyz_rpy
from .base import ManipulationBehaviour
from .params import REQUIRED, Param


def _object_pose(b: ManipulationBehaviour, name: str) -> np.ndarray:
    if b.backend is None:
        raise KeyError("no backend")
    world = b.backend.world
    try:
        return np.array(world.object_pose(name), dtype=float)
    except KeyError:
        raise KeyError(f"no object named {name!r}; the scene has {sorted(world.object_names())}") from None


def _describe_at(arg: tuple[str, list[float]]) -> str:
    name, (x, y, z) = arg
    return f"{name} at ({x:.3f}, {y:.3f}, {z:.3f})"


def _describe_lifted(arg: tuple[str, float, float]) -> str:
    name, lift, need = arg
    return f"{name} lifted {lift:.3f} m (>= {need:.3f} m)"


class GetObjectPose(ManipulationBehaviour):
    """Read an object's pose and write it to the blackboard.

    SUCCESS after writing; FAILURE when the object is unknown. In the simulator the pose is ground
    truth plus optional Gaussian noise (seeded: the same run gives the same noise).

    Args:
        object: the object's name in the scene.
        output_key: blackboard key to write the (4, 4) pose to (world frame, metres).
        noise_position_m: standard deviation of the position noise, metres.
        noise_yaw_deg: standard deviation of the yaw noise, degrees.

    Example:
        .. code-block:: yaml

            - GetObjectPose: {object: mug, output_key: mug_pose}
    """

    ABSTRACT = False
    PARAMS = {
        "object": Param("str", REQUIRED, "object name in the scene", refers_to="object"),
        "output_key": Param("key", REQUIRED, "blackboard key for the pose (4x4, world frame)"),
        "noise_position_m": Param("float", 0.0, "position noise (standard deviation)", unit="m", min=0.0, max=0.5),
        "noise_yaw_deg": Param("float", 0.0, "yaw noise (standard deviation)", unit="deg", min=0.0, max=180.0),
    }

    def setup(self, **kwargs: Any) -> None:
        super().setup(**kwargs)
        self._rng = self.seeded_rng()

    def update(self) -> Status:
        name = self.param("object")
        try:
            T = _object_pose(self, name)
        except KeyError as e:
            return self.fail(str(e.args[0]))
        sp, sy = self.param("noise_position_m"), self.param("noise_yaw_deg")
        if sp > 0 or sy > 0:
            noise = pose_from_xyz_rpy(self._rng.normal(0.0, sp, 3) if sp > 0 else np.zeros(3),
                                      [0.0, 0.0, np.radians(self._rng.normal(0.0, sy)) if sy > 0 else 0.0])
            T = noise @ T if sp > 0 else T @ noise
        self.write_output("output_key", T)
        self.defer_feedback_message(_describe_at, (name, T[:3, 3].tolist()))
        return Status.SUCCESS


class ObjectLifted(ManipulationBehaviour):
    """Condition: the object is at least ``min_height_m`` above where it was at setup.

    Example:
        .. code-block:: yaml

            - ObjectLifted: {object: mug, min_height_m: 0.1}
    """

    ABSTRACT = False
    PARAMS = {
        "object": Param("str", REQUIRED, "object name in the scene", refers_to="object"),
        "min_height_m": Param("float", 0.05, "required rise above the start height", unit="m", min=0.0),
    }

    def setup(self, **kwargs: Any) -> None:
        super().setup(**kwargs)
        self._z0 = None
        if self.backend is not None:
            try:
                initial = getattr(self.backend.world, "initial_object_pose", None)
                T0 = initial(self.param("object")) if callable(initial) else _object_pose(self, self.param("object"))
                self._z0 = float(T0[2, 3])
            except KeyError:
                self._z0 = None

    def update(self) -> Status:
        name = self.param("object")
        try:
            z = float(_object_pose(self, name)[2, 3])
        except KeyError as e:
            return self.fail(str(e.args[0]))
        if self._z0 is None:
            self._z0 = z
        lift = z - self._z0
        need = self.param("min_height_m")
        if lift >= need:
            self.defer_feedback_message(_describe_lifted, (name, lift, need))
            return Status.SUCCESS
        return self.fail(f"{name} lifted only {lift:.3f} m (needs {need:.3f} m)" + _how_it_lies(self, name))


class ObjectNear(ManipulationBehaviour):
    """Condition: the object's position is within ``tolerance_m`` of ``position`` (world frame).

    Example:
        .. code-block:: yaml

            - ObjectNear: {object: mug, position: [0.5, 0.2, 0.66], tolerance_m: 0.03}
    """

    ABSTRACT = False
    PARAMS = {
        "object": Param("str", REQUIRED, "object name in the scene", refers_to="object"),
        "position": Param("vector3", REQUIRED, "where the object should be, world frame", unit="m"),
        "tolerance_m": Param("float", 0.03, "accepted distance", unit="m", min=0.0),
        "ignore_z": Param("bool", False, "compare in the horizontal plane only"),
    }

    def update(self) -> Status:
        name = self.param("object")
        try:
            p = _object_pose(self, name)[:3, 3]
        except KeyError as e:
            return self.fail(str(e.args[0]))
        d = p - np.asarray(self.param("position"))
        if self.param("ignore_z"):
            d[2] = 0.0
        dist = float(np.linalg.norm(d))
        tol = self.param("tolerance_m")
        if dist <= tol:
            self.feedback_message = f"{name} {dist:.3f} m from the goal"
            return Status.SUCCESS
        return self.fail(f"{name} is {dist:.3f} m from the goal (tolerance {tol:.3f} m)"
                         + _how_it_lies(self, name, np.asarray(self.param("position"), dtype=float)))


def _how_it_lies(b: ManipulationBehaviour, name: str, goal: Optional[np.ndarray] = None) -> str:
    """Where object ``name`` is and how it lies, for a failed check: its position (world, metres),
    how far below the goal it is when it fell, and its tilt from how it started (degrees), e.g.
    ``": it is at (0.30, 0.60, -8.50), 9.13 m below the goal (it fell), tilted 71 deg from how it
    started"``; "" when the backend cannot say."""
    try:
        T = _object_pose(b, name)
    except KeyError:
        return ""
    p = T[:3, 3]
    parts = [f"it is at ({p[0]:.2f}, {p[1]:.2f}, {p[2]:.2f})"]
    if goal is not None and goal[2] - p[2] > 0.05:
        parts.append(f"{goal[2] - p[2]:.2f} m below the goal (it fell)")
    initial = getattr(getattr(b.backend, "world", None), "initial_object_pose", None)
    if callable(initial):
        try:
            T0 = initial(name)
            cos = float(np.clip(np.dot(T0[:3, 2], T[:3, 2]), -1.0, 1.0))
            tilt = math.degrees(math.acos(cos))
            if tilt > 5.0:
                parts.append(f"tilted {tilt:.0f} deg from how it started")
        except KeyError:
            pass
    return ": " + ", ".join(parts)
