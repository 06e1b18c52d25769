"""Ground-truth world queries of a :class:`~.backend.SimBackend`: :class:`SimWorld` (bodies and
objects by name, poses, velocities, contacts) and :class:`Contact`.

Moved out of :mod:`.backend` (issue 37 item 6).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
import pybullet as pb

from ..bullet.pb_pose import pose_from_pybullet
from ..geometry.poses import Pose
from .resources import live_backend


# ================================================================================================
# World
# ================================================================================================
@dataclass
class Contact:
    """One contact point (PyBullet ``getContactPoints``), names resolved.

    Attributes:
        body_a, body_b: body names; link_a, link_b: link names (``"base"`` for the base).
        position_on_a, position_on_b: contact points, world frame, metres, shape (3,).
        normal_on_b: contact normal from B towards A, world frame, shape (3,).
        distance_m: signed distance (negative: penetration), metres.
        normal_force_n: normal force, newtons.
        friction_force_n: lateral friction force magnitude, newtons.
    """

    body_a: str
    link_a: str
    body_b: str
    link_b: str
    position_on_a: np.ndarray
    position_on_b: np.ndarray
    normal_on_b: np.ndarray
    distance_m: float
    normal_force_n: float
    friction_force_n: float


class SimWorld:
    """Ground-truth world queries of a :class:`SimBackend` (robots, fixtures and objects by name)."""

    def __init__(self, backend: "SimBackend"):
        self._b = weakref.ref(backend)

    @property
    def _backend(self) -> "SimBackend":
        return live_backend(self._b)

    def object_names(self) -> list[str]:
        """Names of the movable objects, scene order."""
        return list(self._backend._objects)

    def body_names(self) -> list[str]:
        """Names of every body: robots, fixtures, objects."""
        return list(self._backend._bodies)

    def body_id(self, name: str) -> int:
        """PyBullet body id of a robot, fixture or object.

        Raises:
            KeyError: unknown name; the message lists the known names.
        """
        bodies = self._backend._bodies
        if name not in bodies:
            raise KeyError(f"no body named {name!r}; the scene has {sorted(bodies)}")
        return bodies[name]

    def _object_id(self, name: str) -> int:
        objs = self._backend._objects
        if name not in objs:
            raise KeyError(f"no object named {name!r}; the scene has objects {sorted(objs)}")
        return objs[name]

    def object_pose(self, name: str) -> Pose:
        """(4, 4) pose of the object's base frame, world frame, metres (ground truth).

        Raises:
            KeyError: unknown object.
        """
        b = self._backend
        p, q = pb.getBasePositionAndOrientation(self._object_id(name), physicsClientId=b.client)
        return pose_from_pybullet(p, q)

    def object_velocity(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(linear m/s (3,), angular rad/s (3,)) of the object's base, world frame."""
        lin, ang = pb.getBaseVelocity(self._object_id(name), physicsClientId=self._backend.client)
        return np.array(lin), np.array(ang)

    def link_name(self, body: int, link: int) -> str:
        """URDF name of link index ``link`` of PyBullet body ``body`` (``"base"`` for -1)."""
        if link == -1:
            return "base"
        return pb.getJointInfo(body, link, physicsClientId=self._backend.client)[12].decode()

    def contacts(self, a: str, b: Optional[str] = None) -> list[Contact]:
        """Contact points of body ``a`` (with ``b`` only, when given), after the last physics step."""
        bk = self._backend
        ida = self.body_id(a)
        kw: dict[str, Any] = {"bodyA": ida, "physicsClientId": bk.client}
        if b is not None:
            kw["bodyB"] = self.body_id(b)
        out = []
        names = bk._names
        for c in pb.getContactPoints(**kw):
            f1 = np.array(c[11]) * c[10]
            f2 = np.array(c[13]) * c[12]
            out.append(Contact(
                body_a=names.get(c[1], str(c[1])), link_a=self.link_name(c[1], c[3]),
                body_b=names.get(c[2], str(c[2])), link_b=self.link_name(c[2], c[4]),
                position_on_a=np.array(c[5]), position_on_b=np.array(c[6]), normal_on_b=np.array(c[7]),
                distance_m=float(c[8]), normal_force_n=float(c[9]), friction_force_n=float(np.linalg.norm(f1 + f2))))
        return out

    def in_contact(self, a: str, b: str) -> bool:
        """True when bodies ``a`` and ``b`` touch (after the last physics step)."""
        bk = self._backend
        return bool(pb.getContactPoints(bodyA=self.body_id(a), bodyB=self.body_id(b), physicsClientId=bk.client))
