"""Generated door and cabinet URDFs in a PyBullet DIRECT client: structure, latch, spring, friction.

Each physics test runs at 1 kHz for at most ~1.5 s of simulated time.
"""

from __future__ import annotations

import math
import os

import numpy as np
import pybullet as pb
import pytest

from py_trees_manipulation.conventions import quat_xyzw_from_wxyz
from py_trees_manipulation.geometry.affordances import (
    calculate_grasp_and_twist_subframes,
    calculate_move_along_arc_subframes,
)
from py_trees_manipulation.geometry.poses import interpolate, invert, pose_from_xyz_rpy, pq_from_pose
from py_trees_manipulation.geometry.screw import Screw, pose_on_screw, screw_from_subframes, screw_waypoints
from py_trees_manipulation.bullet.articulated import ArticulatedDoor, ArticulatedDrawer, joint_index
from py_trees_manipulation.scene.assets import LeverHandle, cabinet_asset, door_asset, door_urdf

DT = 1e-3
G = 9.81


@pytest.fixture
def client(tmp_path):
    cid = pb.connect(pb.DIRECT)
    pb.setTimeStep(DT, physicsClientId=cid)
    pb.setGravity(0, 0, -G, physicsClientId=cid)
    yield cid
    pb.disconnect(cid)


def _load(asset, cid, base_pose=None):
    kw = {}
    if base_pose is not None:
        p, q = pq_from_pose(base_pose)
        kw = dict(basePosition=list(p), baseOrientation=quat_xyzw_from_wxyz(q))
    return pb.loadURDF(asset.urdf_path, useFixedBase=True, physicsClientId=cid, **kw)


def _run(door, cid, seconds, *forces):
    for _ in range(int(round(seconds / DT))):
        door.step()
        for f in forces:
            f()
        pb.stepSimulation(physicsClientId=cid)


def _pull_on_handle(door, cid, newtons):
    """Force on the leaf at the handle, along the leaf's opening normal (+x of the leaf, pull)."""

    def apply():
        leaf = pb.getLinkState(door.body_id, door.hinge_index, computeForwardKinematics=True, physicsClientId=cid)
        R = np.array(pb.getMatrixFromQuaternion(leaf[5])).reshape(3, 3)
        at = np.asarray(leaf[4]) + R @ np.array([0.02, 0.73, 1.0])  # leaf front face, near the handle
        pb.applyExternalForce(door.body_id, door.hinge_index, list(newtons * R[:, 0]), list(at), pb.WORLD_FRAME, physicsClientId=cid)

    return apply


def _press_lever(door, cid, newtons, at_m=0.12):
    """Force at ``at_m`` along the lever, perpendicular to it, turning it toward unlatching."""

    def apply():
        piv = door.handle_pivot_in_world()
        at = piv[:3, 3] + at_m * piv[:3, 0]
        pb.applyExternalForce(door.body_id, door.handle_index, list(newtons * piv[:3, 1]), list(at), pb.WORLD_FRAME, physicsClientId=cid)

    return apply


class TestDoorStructure:
    def test_joint_names_types_limits(self, client):
        a = door_asset()
        body = _load(a, client)
        assert pb.getBodyInfo(body, physicsClientId=client) == (b"door_frame", b"door")
        infos = [pb.getJointInfo(body, j, physicsClientId=client) for j in range(pb.getNumJoints(body, physicsClientId=client))]
        by_name = {i[1].decode(): i for i in infos}
        assert set(by_name) == {"door_hinge", "handle_joint"}
        hinge, handle = by_name["door_hinge"], by_name["handle_joint"]
        assert hinge[2] == pb.JOINT_REVOLUTE and handle[2] == pb.JOINT_REVOLUTE
        assert hinge[12] == b"door_leaf" and handle[12] == b"door_handle"
        assert hinge[8] == pytest.approx(0.0) and hinge[9] == pytest.approx(math.radians(100.0))
        assert handle[8] == pytest.approx(0.0) and handle[9] == pytest.approx(math.radians(70.0))
        assert hinge[6] == pytest.approx(2.0)  # URDF damping reaches PyBullet
        # left hinge, pull: axis -z so that a positive angle swings the latch edge toward +x
        np.testing.assert_allclose(hinge[13], [0, 0, -1])
        assert pb.getDynamicsInfo(body, -1, physicsClientId=client)[0] == 0.0  # static frame
        assert pb.getDynamicsInfo(body, 0, physicsClientId=client)[0] == pytest.approx(20.0)

    def test_cached_by_content(self, tmp_path):
        p1 = door_urdf(cache_dir=str(tmp_path))
        p2 = door_urdf(cache_dir=str(tmp_path))
        p3 = door_urdf(width_m=0.9, cache_dir=str(tmp_path))
        assert p1 == p2 != p3
        assert os.path.isfile(p1) and os.path.isfile(p3)
        assert open(p1).read() == door_asset(cache_dir=str(tmp_path)).urdf

    @pytest.mark.parametrize(
        "kwargs, match",
        [
            ({"hinge_side": "middle"}, "hinge_side"),
            ({"opening": "slide"}, "opening"),
            ({"width_m": 0.0}, "width_m"),
            ({"handle": None}, "latch"),
            ({"latch_release_deg": 80.0}, "latch_release_deg"),
            ({"handle": LeverHandle(length_m=0.9)}, "fit"),
        ],
    )
    def test_bad_parameters(self, kwargs, match, tmp_path):
        with pytest.raises(ValueError, match=match):
            door_asset(cache_dir=str(tmp_path), **kwargs)

    @pytest.mark.parametrize("hinge_side", ["left", "right"])
    @pytest.mark.parametrize("opening", ["pull", "push"])
    def test_arc_subframes_reproduce_the_hinge(self, client, hinge_side, opening):
        # Door placed at (1.5, -0.3) facing the robot at the origin (+x of the model -> -x world).
        base = pose_from_xyz_rpy([1.5, -0.3, 0.0], [0.0, 0.0, math.pi])
        a = door_asset(hinge_side=hinge_side, opening=opening)
        door = ArticulatedDoor.from_asset(a, _load(a, client, base), client)
        grasp0 = door.handle_grasp_in_world()
        np.testing.assert_allclose(grasp0, base @ a.handle_grasp_in_model, atol=1e-6)
        assert grasp0[0, 3] == pytest.approx(1.5 - 0.02 - 0.06, abs=1e-6)  # face + standoff, toward robot
        bottom, top = door.hinge_poses_in_world()
        sub = calculate_move_along_arc_subframes(grasp0, bottom, top)
        # along the leaf: 0.8 - 0.07 backset - 0.75 * 0.13 lever = 0.6325 m; normal to it: from the
        # hinge line (front face for pull, back face for push) to the bar, 0.06 m or 0.10 m.
        normal = 0.06 if opening == "pull" else 0.06 + 0.04
        assert sub.radius_m == pytest.approx(math.hypot(0.8 - 0.07 - 0.75 * 0.13, normal), abs=1e-6)
        theta = math.radians(35.0)
        expected = pose_on_screw(grasp0, screw_from_subframes(sub), a.arc_opening_sign * theta)
        door.reset(door_angle_deg=35.0)
        np.testing.assert_allclose(door.handle_grasp_in_world(), expected, atol=1e-6)
        # pull doors come toward the robot (world -x here), push doors go away from it
        moved = expected[0, 3] - grasp0[0, 3]
        assert (moved < 0) if opening == "pull" else (moved > 0)

    @pytest.mark.parametrize("hinge_side", ["left", "right"])
    def test_twist_subframes_reproduce_the_lever(self, client, hinge_side):
        a = door_asset(hinge_side=hinge_side)
        door = ArticulatedDoor.from_asset(a, _load(a, client), client)
        pivot, grasp0 = door.handle_pivot_in_world(), door.handle_grasp_in_world()
        np.testing.assert_allclose(pivot, a.handle_pivot_in_model, atol=1e-6)
        np.testing.assert_allclose(pivot[:3, 1], [0, 0, -1], atol=1e-9)  # tip moves down first
        sub = calculate_grasp_and_twist_subframes(pivot, grasp_rotation=0.0)
        expected = pose_on_screw(grasp0, screw_from_subframes(sub), math.radians(40.0))
        door.reset(handle_angle_deg=40.0)
        np.testing.assert_allclose(door.handle_grasp_in_world(), expected, atol=1e-6)
        # grasp 0.0975 m from the pivot drops by 0.0975 sin 40 deg
        assert expected[2, 3] - grasp0[2, 3] == pytest.approx(-0.0975 * math.sin(math.radians(40.0)), abs=1e-9)


class TestDoorDynamics:
    def test_latch_holds_until_handle_turned_then_swings(self, client):
        a = door_asset()
        door = ArticulatedDoor.from_asset(a, _load(a, client), client)
        assert door.latched
        _run(door, client, 0.5, _pull_on_handle(door, client, 40.0))  # 40 N * 0.73 m = 29 N*m
        assert abs(door.door_angle_deg) < 0.05
        assert door.latched
        # 15 N at 0.12 m = 1.8 N*m > spring 0.3 + 1.0 * 70 deg (1.52 N*m): the lever goes to its stop
        _run(door, client, 0.3, _pull_on_handle(door, client, 40.0), _press_lever(door, client, 15.0))
        assert door.handle_angle_deg >= a.latch_release_deg
        assert not door.latched
        _run(door, client, 0.5, _pull_on_handle(door, client, 40.0))
        assert door.door_angle_deg > 20.0
        assert door.handle_angle_deg < 1.0  # released lever sprang back
        assert not door.latched  # the door is open: the bolt cannot re-engage
        assert set(door.observables()) == {"door_angle_deg", "handle_angle_deg", "latched", "locked"}

    def test_locked_door_never_opens(self, client):
        a = door_asset(locked=True)
        door = ArticulatedDoor.from_asset(a, _load(a, client), client)
        _run(door, client, 1.0, _pull_on_handle(door, client, 40.0), _press_lever(door, client, 15.0))
        assert door.handle_angle_deg == pytest.approx(70.0, abs=0.5)  # the lever turns...
        assert abs(door.door_angle_deg) < 0.05  # ...but the bolt stays
        assert door.latched and door.observables()["locked"]

    def test_unlatched_door_relatches_when_closed_with_handle_released(self, client):
        a = door_asset()
        door = ArticulatedDoor.from_asset(a, _load(a, client), client)
        door.reset(door_angle_deg=0.5, handle_angle_deg=0.0)
        assert door.latched  # within latch_engage_deg (1 deg) with the bolt out: snaps in
        _run(door, client, 0.2)
        assert abs(door.door_angle_deg) < 0.05

    def test_hinge_friction_holds_below_breakaway(self, client):
        a = door_asset(latch=False, handle=None, hinge_friction=0.5)
        door = ArticulatedDoor.from_asset(a, _load(a, client), client)
        door.reset(door_angle_deg=30.0)
        # 0.6 N at 0.73 m = 0.44 N*m < 0.5 N*m friction: stays; 2 N (1.46 N*m): moves.
        _run(door, client, 0.3, _pull_on_handle(door, client, 0.6))
        assert door.door_angle_deg == pytest.approx(30.0, abs=0.01)
        _run(door, client, 0.3, _pull_on_handle(door, client, 2.0))
        assert door.door_angle_deg > 30.5

    def test_spring_returns_and_balances_the_handle(self, client):
        a = door_asset()
        door = ArticulatedDoor.from_asset(a, _load(a, client), client)
        _run(door, client, 0.3)
        assert door.handle_angle_deg == pytest.approx(0.0, abs=0.05)  # preload beats the lever's weight
        door.reset(handle_angle_deg=50.0)
        _run(door, client, 0.5)
        assert door.handle_angle_deg < 0.5
        # Constant 10 N at 0.12 m (1.2 N*m) against preload + stiffness, helped by gravity on the
        # bar (0.2 kg, COM 0.0575 m from the pivot): 1.2 + m g r cos(q) = 0.3 + 1.0 q.
        m, r, k, pre = 0.2, 0.0575, 1.0, 0.3
        q = 1.0
        for _ in range(50):
            q = (1.2 + m * G * r * math.cos(q) - pre) / k
        _run(door, client, 1.2, _press_lever(door, client, 10.0))
        tol = math.degrees(0.02 / k) + 0.5  # Coulomb friction band 0.02 N*m, plus residual ringing
        assert door.handle_angle_deg == pytest.approx(math.degrees(q), abs=tol)
        assert not door.latched  # 55 deg is past the 30 deg release: the bolt is withdrawn


class TestScriptedOpening:
    """TwistHandle then MoveAlongArc, with the grasp as a fixed constraint dragged along waypoints."""

    @pytest.mark.parametrize("hinge_side, opening", [("left", "pull"), ("right", "push")])
    def test_twist_then_arc_opens_the_latched_door(self, client, hinge_side, opening):
        a = door_asset(hinge_side=hinge_side, opening=opening)
        body = _load(a, client)
        door = ArticulatedDoor.from_asset(a, body, client)
        # Grasp proxy: the handle's grasp frame fixed to a world target (parent frame is the COM frame).
        com = np.eye(4)
        com[:3, 3] = pb.getDynamicsInfo(body, door.handle_index, physicsClientId=client)[3]
        p_in_com, q_in_com = pq_from_pose(invert(com) @ a.handle_grasp_in_handle_link)
        grasp0 = door.handle_grasp_in_world()
        p0, q0 = pq_from_pose(grasp0)
        con = pb.createConstraint(
            body, door.handle_index, -1, -1, pb.JOINT_FIXED, [0, 0, 0], list(p_in_com), list(p0),
            quat_xyzw_from_wxyz(q_in_com), quat_xyzw_from_wxyz(q0), physicsClientId=client,
        )

        def follow(waypoints, seconds):
            n, segments = int(round(seconds / DT)), len(waypoints) - 1
            for i in range(n):
                s = (i + 1) / n * segments
                k = min(int(s), segments - 1)
                tp, tq = pq_from_pose(interpolate(waypoints[k], waypoints[k + 1], s - k))
                pb.changeConstraint(con, list(tp), jointChildFrameOrientation=quat_xyzw_from_wxyz(tq), maxForce=200, physicsClientId=client)
                door.step()
                pb.stepSimulation(physicsClientId=client)

        twist = calculate_grasp_and_twist_subframes(door.handle_pivot_in_world(), grasp_rotation=0.0)
        follow(screw_waypoints(grasp0, screw_from_subframes(twist), math.radians(45.0), 0.001), 0.3)
        assert door.handle_angle_deg == pytest.approx(45.0, abs=1.5)  # the spring makes the grasp lag a little
        assert not door.latched and abs(door.door_angle_deg) < 0.05

        grasp1 = door.handle_grasp_in_world()
        arc = calculate_move_along_arc_subframes(grasp1, *door.hinge_poses_in_world())
        waypoints = screw_waypoints(grasp1, screw_from_subframes(arc), a.arc_opening_sign * math.radians(60.0), 0.001)
        # radius ~0.63 m: step 2 acos(1 - 0.001 / r) = 0.1127 rad, 1.047 rad -> 10 segments
        assert len(waypoints) == 11
        follow(waypoints, 1.0)
        assert door.door_angle_deg == pytest.approx(60.0, abs=1.0)
        assert np.linalg.norm(door.handle_grasp_in_world()[:3, 3] - waypoints[-1][:3, 3]) < 0.005
        pb.removeConstraint(con, physicsClientId=client)
        _run(door, client, 0.2)
        assert door.handle_angle_deg < 1.0 and not door.latched


class TestCabinet:
    def test_structure(self, client):
        a = cabinet_asset()
        body = _load(a, client)
        assert pb.getBodyInfo(body, physicsClientId=client) == (b"cabinet_body", b"cabinet")
        j = joint_index(body, "drawer_joint", client)
        info = pb.getJointInfo(body, j, physicsClientId=client)
        assert info[2] == pb.JOINT_PRISMATIC and info[12] == b"drawer"
        assert (info[8], info[9]) == (pytest.approx(0.0), pytest.approx(0.35))
        np.testing.assert_allclose(info[13], [1, 0, 0])
        with pytest.raises(KeyError, match="drawer_joint"):
            joint_index(body, "door_hinge", client)
        with pytest.raises(ValueError, match="drawer_travel_m"):
            cabinet_asset(drawer_travel_m=0.5)

    def test_pull_matches_damped_coulomb_motion_and_translation_screw(self, client):
        base = pose_from_xyz_rpy([0.9, 0.2, 0.0], [0.0, 0.0, math.pi])
        a = cabinet_asset(drawer_damping=5.0, drawer_friction=1.0, drawer_mass_kg=2.0)
        body = _load(a, client, base)
        drawer = ArticulatedDrawer.from_asset(a, body, client)
        grasp0 = drawer.drawer_grasp_in_world()
        np.testing.assert_allclose(grasp0[:3, 3], (base @ a.drawer_grasp_in_model)[:3, 3], atol=1e-6)
        axis = drawer.drawer_axis_in_world()
        np.testing.assert_allclose(axis, [-1, 0, 0], atol=1e-9)

        def pull(newtons):
            def apply():
                com = pb.getLinkState(body, drawer.drawer_index, physicsClientId=client)[0]
                pb.applyExternalForce(body, drawer.drawer_index, list(newtons * axis), list(com), pb.WORLD_FRAME, physicsClientId=client)

            return apply

        _run(drawer, client, 0.3, pull(0.8))  # below the 1 N friction
        assert drawer.drawer_opening_m == pytest.approx(0.0, abs=1e-4)
        _run(drawer, client, 0.5, pull(5.0))
        # m x'' = F - f - b x': x(t) = v (t - tau (1 - exp(-t / tau))), v = (F - f) / b, tau = m / b
        v, tau, t = (5.0 - 1.0) / 5.0, 2.0 / 5.0, 0.5
        expected = v * (t - tau * (1.0 - math.exp(-t / tau)))  # 0.1717 m
        assert drawer.drawer_opening_m == pytest.approx(expected, rel=0.02)  # sim: 0.1709 m
        moved = pose_on_screw(grasp0, Screw.translation(axis), drawer.drawer_opening_m)
        np.testing.assert_allclose(drawer.drawer_grasp_in_world(), moved, atol=1e-6)
        assert drawer.observables() == {"drawer_opening_m": drawer.drawer_opening_m}
