"""Per-step behaviour of articulated objects in PyBullet: door latch, handle spring, friction.

URDF cannot express a latch, a return spring or Coulomb friction (PyBullet applies URDF
``<dynamics damping>`` as viscous joint damping but ignores ``friction``). The classes here add
them. The simulator creates one object per loaded articulated body and calls :meth:`step` once
**before every** ``stepSimulation`` (torques set with ``TORQUE_CONTROL`` last one step only).

Every PyBullet call passes ``physicsClientId``, so any client (DIRECT, GUI, several at once)
works. Joints are found by name, so the classes also work with other URDFs that use the same
names (``door_hinge``, ``handle_joint``, ``drawer_joint``; see :mod:`.assets`).

Models
------
- **Hinge friction** (door, drawer): a ``VELOCITY_CONTROL`` motor with target velocity 0 and
  ``force`` = the Coulomb friction (N*m or N): it holds the joint until the applied load exceeds
  the friction, then resists with that much. Viscous damping comes from the URDF.
- **Latch** (door): while engaged, a ``POSITION_CONTROL`` motor holds the hinge at 0 with up to
  ``latch_holding_torque_nm``. It disengages when the handle angle reaches
  ``latch_release_deg`` (never if ``locked``), and engages again when the handle is below the
  release angle (or the door is locked) and the door is within ``latch_engage_deg`` of closed (the
  bolt snaps into the strike).
- **Handle return spring**: ``tau = -(spring_preload_nm + spring_stiffness_nm_per_rad * angle)``
  applied with ``TORQUE_CONTROL`` each step (at rest the preload holds the lever against its
  lower limit), plus a friction motor of ``handle.friction_nm``.
"""

from __future__ import annotations

from . import _quiet_import  # noqa: F401  (first: pybullet's import banner)

import math
from typing import Any, Optional

import numpy as np
import pybullet as pb

from py_trees_manipulation.geometry.poses import Pose
from py_trees_manipulation.bullet.pb_pose import pose_from_pybullet
from py_trees_manipulation.scene.assets import (
    DOOR_HINGE_JOINT,
    DRAWER_JOINT,
    HANDLE_JOINT,
    CabinetAsset,
    DoorAsset,
)


def joint_index(body_id: int, joint_name: str, physics_client_id: int = 0) -> int:
    """Index of the joint called ``joint_name`` in ``body_id``.

    Raises:
        KeyError: no such joint (the message lists the body's joints).
    """
    names = []
    for j in range(pb.getNumJoints(body_id, physicsClientId=physics_client_id)):
        name = pb.getJointInfo(body_id, j, physicsClientId=physics_client_id)[1].decode()
        if name == joint_name:
            return j
        names.append(name)
    raise KeyError(f"body {body_id} has no joint {joint_name!r}; joints: {names}")


def link_pose(body_id: int, link_index: int, physics_client_id: int = 0) -> Pose:
    """World pose (4, 4) of a link's **URDF frame** (``getLinkState(...)[4:6]``; -1: base frame).

    For the base, PyBullet reports the inertial (COM) pose; this composes it with the inverse of
    the local inertial frame so the result is the URDF base frame.
    """
    c = physics_client_id
    if link_index < 0:
        pos, orn = pb.getBasePositionAndOrientation(body_id, physicsClientId=c)
        info = pb.getDynamicsInfo(body_id, -1, physicsClientId=c)
        inv_pos, inv_orn = pb.invertTransform(info[3], info[4])
        pos, orn = pb.multiplyTransforms(pos, orn, inv_pos, inv_orn)
    else:
        state = pb.getLinkState(body_id, link_index, computeForwardKinematics=True, physicsClientId=c)
        pos, orn = state[4], state[5]
    return pose_from_pybullet(pos, orn)


class ArticulatedObject:
    """Base of the per-step models: a body in a PyBullet client.

    Attributes:
        body_id: PyBullet body unique id.
        physics_client_id: PyBullet client id.
    """

    def __init__(self, body_id: int, physics_client_id: int = 0) -> None:
        self.body_id = int(body_id)
        self.physics_client_id = int(physics_client_id)

    def step(self) -> None:
        """Apply this step's joint motors and torques. Call before every ``stepSimulation``."""

    def observables(self) -> dict[str, Any]:
        """Joint state in user units (degrees, metres) for logs, conditions and plots."""
        return {}

    def _joint(self, name: str) -> int:
        return joint_index(self.body_id, name, self.physics_client_id)

    def _position(self, j: int) -> float:
        return float(pb.getJointState(self.body_id, j, physicsClientId=self.physics_client_id)[0])

    def joints_at_open_limit(self, tolerance: float = 0.002) -> list[tuple[str, float]]:
        """The movable joints at (or past) their upper URDF limit now, the fully open end of a hinge or
        a drawer slide: ``(joint name, the limit: metres, or degrees for a revolute joint)``.
        ``tolerance`` in metres or radians. Says *why* a mechanism resists an opening motion."""
        out = []
        c = self.physics_client_id
        for j in range(pb.getNumJoints(self.body_id, physicsClientId=c)):
            info = pb.getJointInfo(self.body_id, j, physicsClientId=c)
            kind, lo, hi = info[2], float(info[8]), float(info[9])
            if kind not in (pb.JOINT_REVOLUTE, pb.JOINT_PRISMATIC) or hi <= lo:
                continue
            if self._position(j) >= hi - tolerance:
                out.append((info[1].decode(), hi if kind == pb.JOINT_PRISMATIC else math.degrees(hi)))
        return out

    def _friction_motor(self, j: int, force: float) -> None:
        pb.setJointMotorControl2(
            self.body_id, j, pb.VELOCITY_CONTROL, targetVelocity=0.0, force=float(force),
            physicsClientId=self.physics_client_id,
        )


class ArticulatedDoor(ArticulatedObject):
    """A hinged door with an optional latch and a lever handle with a return spring.

    Args:
        body_id: the door body (e.g. from ``loadURDF(door_asset(...).urdf_path)``).
        physics_client_id: PyBullet client id.
        hinge_friction_nm: Coulomb friction of the hinge, N*m.
        latch: the door has a latch.
        latch_release_deg: handle angle that withdraws the latch, degrees.
        latch_engage_deg: the latch re-engages when the door is within this angle of closed
            and the handle is released, degrees.
        latch_holding_torque_nm: most torque the engaged latch resists, N*m.
        locked: the latch never releases (settable at run time: :attr:`locked`).
        handle_spring_preload_nm: return torque at rest, N*m.
        handle_spring_stiffness_nm_per_rad: N*m/rad.
        handle_friction_nm: Coulomb friction of the handle joint, N*m.
        hinge_joint: hinge joint name. handle_joint: handle joint name, or ``None`` (no handle).
        asset: the :class:`~.assets.DoorAsset` it was generated from, if any (for the frames).

    Raises:
        KeyError: a named joint is missing. ValueError: a latch without a handle.

    Use :meth:`from_asset` to take every parameter from the generated asset.
    """

    def __init__(
        self,
        body_id: int,
        physics_client_id: int = 0,
        *,
        hinge_friction_nm: float = 0.5,
        latch: bool = True,
        latch_release_deg: float = 30.0,
        latch_engage_deg: float = 1.0,
        latch_holding_torque_nm: float = 300.0,
        locked: bool = False,
        handle_spring_preload_nm: float = 0.3,
        handle_spring_stiffness_nm_per_rad: float = 1.0,
        handle_friction_nm: float = 0.02,
        hinge_joint: str = DOOR_HINGE_JOINT,
        handle_joint: Optional[str] = HANDLE_JOINT,
        asset: Optional[DoorAsset] = None,
    ) -> None:
        super().__init__(body_id, physics_client_id)
        if latch and handle_joint is None:
            raise ValueError("a latched door needs a handle joint to release it")
        self.asset = asset
        self.hinge_friction_nm = float(hinge_friction_nm)
        self.latch = bool(latch)
        self.latch_release_deg = float(latch_release_deg)
        self.latch_engage_deg = float(latch_engage_deg)
        self.latch_holding_torque_nm = float(latch_holding_torque_nm)
        self.locked = bool(locked)
        self.handle_spring_preload_nm = float(handle_spring_preload_nm)
        self.handle_spring_stiffness_nm_per_rad = float(handle_spring_stiffness_nm_per_rad)
        self.hinge_index = self._joint(hinge_joint)
        self.handle_index: Optional[int] = self._joint(handle_joint) if handle_joint is not None else None
        self.leaf_link_index = self.hinge_index  # a joint's child link has the joint's index
        if self.handle_index is not None:
            self._friction_motor(self.handle_index, handle_friction_nm)
        self._latched: Optional[bool] = None
        self._update_latch()

    @classmethod
    def from_asset(cls, asset: DoorAsset, body_id: int, physics_client_id: int = 0, **overrides: Any) -> "ArticulatedDoor":
        """Build from a generated :class:`~.assets.DoorAsset`; keyword ``overrides`` win."""
        kw: dict[str, Any] = dict(
            hinge_friction_nm=asset.hinge_friction,
            latch=asset.latch,
            latch_release_deg=asset.latch_release_deg,
            latch_holding_torque_nm=asset.latch_holding_torque_nm,
            locked=asset.locked,
            hinge_joint=asset.hinge_joint,
            handle_joint=asset.handle_joint if asset.handle is not None else None,
            asset=asset,
        )
        if asset.handle is not None:
            kw.update(
                handle_spring_preload_nm=asset.handle.spring_preload_nm,
                handle_spring_stiffness_nm_per_rad=asset.handle.spring_stiffness_nm_per_rad,
                handle_friction_nm=asset.handle.friction_nm,
            )
        kw.update(overrides)
        return cls(body_id, physics_client_id, **kw)

    # ---- observables ---------------------------------------------------------------------

    @property
    def door_angle_deg(self) -> float:
        """Hinge angle, degrees; 0 closed, positive open (in the asset's opening direction)."""
        return math.degrees(self._position(self.hinge_index))

    @property
    def handle_angle_deg(self) -> float:
        """Handle angle, degrees; 0 at rest, positive toward unlatching (0 without a handle)."""
        return 0.0 if self.handle_index is None else math.degrees(self._position(self.handle_index))

    @property
    def latched(self) -> bool:
        """The latch is engaged (the door is held shut)."""
        return bool(self._latched)

    def latch_text(self, name: str) -> str:
        """Why the latch holds door ``name`` shut now, "" when it does not: ``"door 'door' is locked:
        ..."``, or ``"door 'door' is latched: its lever is at 22 deg, short of the 30 deg that
        withdraws the latch: turn it further (TwistHandle angle)"``. The simulator's words when a
        door does not follow the hand, and ``ptm validate --plan``'s before it moves."""
        if self.latched and self.locked:
            return f"door {name!r} is locked: its latch holds it shut whatever the lever's angle"
        if self.latched:
            return (f"door {name!r} is latched: its lever is at {self.handle_angle_deg:.0f} deg, short of the "
                    f"{self.latch_release_deg:g} deg that withdraws the latch: turn it further (TwistHandle angle)")
        return ""

    def observables(self) -> dict[str, Any]:
        """``{door_angle_deg, handle_angle_deg, latched, locked}``."""
        return {
            "door_angle_deg": self.door_angle_deg,
            "handle_angle_deg": self.handle_angle_deg,
            "latched": self.latched,
            "locked": self.locked,
        }

    # ---- per step ------------------------------------------------------------------------

    def step(self) -> None:
        """Update the latch and apply the handle's return-spring torque for the next step.

        Reads the handle joint once (one ``getJointState``) for both the latch and the spring:
        this runs before every physics step (1 kHz).
        """
        if self.handle_index is None:
            self._update_latch()
            return
        q_handle = self._position(self.handle_index)
        self._update_latch(math.degrees(q_handle))
        tau = -(self.handle_spring_preload_nm + self.handle_spring_stiffness_nm_per_rad * max(0.0, q_handle))
        pb.setJointMotorControl2(
            self.body_id, self.handle_index, pb.TORQUE_CONTROL, force=tau, physicsClientId=self.physics_client_id
        )

    def reset(self, door_angle_deg: float = 0.0, handle_angle_deg: float = 0.0) -> None:
        """Teleport the joints (zero velocity) and re-evaluate the latch."""
        c = self.physics_client_id
        pb.resetJointState(self.body_id, self.hinge_index, math.radians(door_angle_deg), 0.0, physicsClientId=c)
        if self.handle_index is not None:
            pb.resetJointState(self.body_id, self.handle_index, math.radians(handle_angle_deg), 0.0, physicsClientId=c)
        self._latched = None
        self._update_latch()

    def _update_latch(self, handle_angle_deg: Optional[float] = None) -> None:
        """Engage or release the latch; ``handle_angle_deg``: the handle angle if already read."""
        want = self._latched
        if not self.latch:
            want = False
        else:
            if handle_angle_deg is None:
                handle_angle_deg = self.handle_angle_deg
            bolt_extended = self.locked or handle_angle_deg < self.latch_release_deg
            if self._latched:
                want = bolt_extended
            else:
                want = bolt_extended and self.door_angle_deg <= self.latch_engage_deg
        if want == self._latched:
            return
        self._latched = want
        if want:
            pb.setJointMotorControl2(
                self.body_id, self.hinge_index, pb.POSITION_CONTROL, targetPosition=0.0, targetVelocity=0.0,
                force=self.latch_holding_torque_nm, physicsClientId=self.physics_client_id,
            )
        else:
            self._friction_motor(self.hinge_index, self.hinge_friction_nm)

    # ---- frames in the world (need the asset) --------------------------------------------

    def _need_asset(self) -> DoorAsset:
        if self.asset is None:
            raise ValueError("frames need the DoorAsset: build with ArticulatedDoor.from_asset")
        return self.asset

    def model_pose(self) -> Pose:
        """(4, 4) world pose of the model frame (the URDF base frame)."""
        return link_pose(self.body_id, -1, self.physics_client_id)

    def hinge_poses_in_world(self) -> tuple[Pose, Pose]:
        """``(bottom, top)`` (4, 4) world poses on the hinge line, z into the door front.

        Feed them, with a grasp pose, to
        :func:`~py_trees_manipulation.geometry.affordances.calculate_move_along_arc_subframes`.
        """
        a = self._need_asset()
        M = self.model_pose()
        return M @ a.hinge_bottom_in_model, M @ a.hinge_top_in_model

    def handle_pivot_in_world(self) -> Pose:
        """(4, 4) world pose of the handle pivot now (z = handle axis, x toward the lever tip)."""
        if self.handle_index is None:
            raise ValueError("this door has no handle")
        return link_pose(self.body_id, self.handle_index, self.physics_client_id)

    def handle_grasp_in_world(self) -> Pose:
        """(4, 4) world TCP pose for grasping the lever now (moves with leaf and lever)."""
        a = self._need_asset()
        if a.handle_grasp_in_handle_link is None:
            raise ValueError("this door has no handle")
        return self.handle_pivot_in_world() @ a.handle_grasp_in_handle_link


class ArticulatedDrawer(ArticulatedObject):
    """A drawer on a prismatic joint with Coulomb friction (viscous damping from the URDF).

    Args:
        body_id: the cabinet body. physics_client_id: PyBullet client id.
        drawer_friction_n: Coulomb friction, newtons.
        drawer_joint: prismatic joint name.
        asset: the :class:`~.assets.CabinetAsset`, if any (for the frames).
    """

    def __init__(
        self,
        body_id: int,
        physics_client_id: int = 0,
        *,
        drawer_friction_n: float = 1.0,
        drawer_joint: str = DRAWER_JOINT,
        asset: Optional[CabinetAsset] = None,
    ) -> None:
        super().__init__(body_id, physics_client_id)
        self.asset = asset
        self.drawer_index = self._joint(drawer_joint)
        self.drawer_friction_n = float(drawer_friction_n)
        self._friction_motor(self.drawer_index, self.drawer_friction_n)

    @classmethod
    def from_asset(cls, asset: CabinetAsset, body_id: int, physics_client_id: int = 0, **overrides: Any) -> "ArticulatedDrawer":
        """Build from a generated :class:`~.assets.CabinetAsset`; keyword ``overrides`` win."""
        kw: dict[str, Any] = dict(drawer_friction_n=asset.drawer_friction, drawer_joint=asset.drawer_joint, asset=asset)
        kw.update(overrides)
        return cls(body_id, physics_client_id, **kw)

    @property
    def drawer_opening_m(self) -> float:
        """How far the drawer is out, metres (0 closed)."""
        return self._position(self.drawer_index)

    def observables(self) -> dict[str, Any]:
        """``{drawer_opening_m}``."""
        return {"drawer_opening_m": self.drawer_opening_m}

    def reset(self, drawer_opening_m: float = 0.0) -> None:
        """Teleport the drawer (zero velocity)."""
        pb.resetJointState(self.body_id, self.drawer_index, float(drawer_opening_m), 0.0, physicsClientId=self.physics_client_id)

    def drawer_grasp_in_world(self) -> Pose:
        """(4, 4) world TCP pose at the handle bar centre now."""
        if self.asset is None:
            raise ValueError("frames need the CabinetAsset: build with ArticulatedDrawer.from_asset")
        return link_pose(self.body_id, self.drawer_index, self.physics_client_id) @ self.asset.drawer_grasp_in_drawer_link

    def drawer_axis_in_world(self) -> np.ndarray:
        """(3,) unit pull direction in the world frame."""
        if self.asset is None:
            raise ValueError("frames need the CabinetAsset: build with ArticulatedDrawer.from_asset")
        return link_pose(self.body_id, -1, self.physics_client_id)[:3, :3] @ self.asset.drawer_axis_in_model


__all__ = ["ArticulatedDoor", "ArticulatedDrawer", "ArticulatedObject", "joint_index", "link_pose"]
