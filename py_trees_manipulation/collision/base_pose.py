"""The robot's base in the planning world: its URDF base frame, read and set, the pose a base search
places it at, and what its fixed links overlap (a fixture, a swinging door leaf).

Units: metres, radians. Poses: (4, 4) homogeneous transforms, world frame.
"""

from __future__ import annotations

import math
from typing import Any, Optional, Sequence

import numpy as np
import pybullet as pb

from ..geometry.poses import Pose
from .world import CollisionWorld

__all__ = ["base_frame", "set_base_frame", "placed_base_pose", "base_pose_at", "base_overlap"]


def base_frame(world: CollisionWorld, name: str) -> Pose:
    """(4, 4) world pose of body ``name``'s URDF base frame (what ``loadURDF`` and a scene's
    ``base_pose`` place; PyBullet's base position is the base link's centre of mass instead)."""
    c = world.client
    body = world.body_id(name)
    p, q = pb.getBasePositionAndOrientation(body, physicsClientId=c)
    info = pb.getDynamicsInfo(body, -1, physicsClientId=c)
    ip, iq = pb.invertTransform(info[3], info[4])
    p, q = pb.multiplyTransforms(p, q, ip, iq)
    T = np.eye(4)
    T[:3, :3] = np.array(pb.getMatrixFromQuaternion(q)).reshape(3, 3)
    T[:3, 3] = p
    return T


def set_base_frame(world: CollisionWorld, name: str, T: Pose) -> None:
    """Teleport body ``name`` so that its URDF base frame is at ``T`` ((4, 4), world)."""
    from ..geometry.poses import pq_from_pose
    from ..conventions import quat_xyzw_from_wxyz

    c = world.client
    body = world.body_id(name)
    info = pb.getDynamicsInfo(body, -1, physicsClientId=c)
    p, q = pq_from_pose(T)
    p, q = pb.multiplyTransforms(p.tolist(), quat_xyzw_from_wxyz(q), info[3], info[4])
    pb.resetBasePositionAndOrientation(body, p, q, physicsClientId=c)


def placed_base_pose(x: float, y: float, z: float, yaw: float) -> Pose:
    """The base pose :func:`find_base` places a robot at: ``(x, y, z)`` rounded to 0.1 mm, ``yaw``
    (radians) rounded to 0.01 deg, built as a task file's ``{position, rpy_deg}`` is, so that the
    pose printed and written back as ``base_pose`` is exactly this one (the same run)."""
    from ..geometry.poses import pose_from_spec

    return pose_from_spec({"position": [round(float(x), 4), round(float(y), 4), round(float(z), 4)],
                           "rpy_deg": [0.0, 0.0, round(math.degrees(yaw), 2)]})


def base_pose_at(x: float, y: float, z: float, yaw: float) -> Pose:
    """(4, 4) base pose at ``(x, y, z)`` metres turned ``yaw`` radians about world z."""
    c, s = math.cos(yaw), math.sin(yaw)
    T = np.eye(4)
    T[:3, :3] = [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]
    T[:3, 3] = [x, y, z]
    return T


def _fixed_links(world: CollisionWorld, robot: str) -> list[int]:
    moving = world.moving_links(robot)
    body = world.robots[robot].body
    c = world.client
    return [j for j in [-1, *range(pb.getNumJoints(body, physicsClientId=c))]
            if j not in moving and pb.getCollisionShapeData(body, j, physicsClientId=c)]


def base_overlap(world: CollisionWorld, robot: str, ignore: Sequence[str] = (),
                 only: Optional[Any] = None, padding_m: Optional[float] = None) -> Optional[str]:
    """What the robot's fixed links (its base) overlap within the world's padding, as a text, or None.

    Args:
        ignore: body names whose contact with the base does not count (the surface it stands on).
        only: check only these body names (default: every other body).
        padding_m: the clearance asked for, metres (default: the world's padding; 0: only an overlap;
            negative: an overlap deeper than this).
    """
    pad = world.padding_m if padding_m is None else float(padding_m)
    body = world.robots[robot].body
    c = world.client
    skip = {body, *(world.bodies[n] for n in ignore if n in world.bodies)}
    others = world.bodies.values() if only is None else [world.bodies[n] for n in only if n in world.bodies]
    for j in _fixed_links(world, robot):
        for other in others:
            if other in skip or (world._probe is not None and other == world._probe):
                continue
            pts = pb.getClosestPoints(body, other, pad, linkIndexA=j, physicsClientId=c)
            if pts and min(p[8] for p in pts) < pad - 1e-4:
                d = min(p[8] for p in pts)
                return (f"{world.link_name(body, j)} would overlap {world.names.get(other, other)} "
                        + (f"({d * 1000:.0f} mm away, padding {pad * 1000:.0f} mm: scene.motion_planning.padding_m)"
                           if pad > 0 else f"({-d * 1000:.0f} mm deep)" if pad == 0 else
                           f"({-d * 1000:.0f} mm deep, more than the {-pad * 1000:.0f} mm scene.start_penetration_m "
                           "allows)"))
    return None
