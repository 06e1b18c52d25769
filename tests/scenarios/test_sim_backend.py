"""The PyBullet backend, headless: arm motions, gripper, pick and lift, preemption, isolation, metrics."""

import math

import numpy as np
import pytest

from py_trees_manipulation.backend import Backend, BackendError
from py_trees_manipulation.geometry.poses import pose_from_spec, rotation_angle, translation_distance
from py_trees_manipulation.msgs.actions import GoalStatus
from py_trees_manipulation.msgs.motion import (MoveCartesianGoal, MoveJointsGoal, MoveToPoseGoal,
                                               Pr2GripperCommand)
from py_trees_manipulation.sim import SimBackend

TABLE_TOP = 0.626  # pybullet_data table/table.urdf top surface, m
DOWN = [180, 0, 0]  # rpy_deg of a top-down TCP (fingers close along world y)


def pick_scene(box_size=0.05, mass=0.1, **task):
    return {
        "seed": 0,
        "robots": [{"name": "panda", "base_pose": {"position": [0, 0, TABLE_TOP]}}],
        "fixtures": [{"name": "table", "urdf": "table/table.urdf", "pose": {"position": [0.5, 0, 0]}}],
        "objects": [{"name": "box", "primitive": {"shape": "box", "size": [box_size] * 3}, "mass_kg": mass,
                     "lateral_friction": 1.0, "pose": {"position": [0.5, 0.0, TABLE_TOP + box_size / 2]}}],
        "task": {"target_object": "box", **task},
    }


def mug_scene():
    return {
        "robots": [{"name": "panda", "base_pose": {"position": [0, 0, TABLE_TOP]}}],
        "fixtures": [{"name": "table", "urdf": "table/table.urdf", "pose": {"position": [0.5, 0, 0]}}],
        # scale 0.8: the mug's 88 mm body would not fit the Panda's 80 mm stroke otherwise.
        "objects": [{"name": "mug", "urdf": "objects/mug.urdf", "scale": 0.8, "mass_kg": 0.2,
                     "pose": {"position": [0.5, 0.0, TABLE_TOP + 0.003]},
                     "pose_noise": {"position_m": 0.005, "yaw_deg": 5}}],
        "task": {"target_object": "mug"},
    }


def run(sim, handle, limit_s=10.0, dt=1 / 30):
    t0 = sim.now()
    while not handle.done and sim.now() - t0 < limit_s:
        sim.advance(dt)
    return handle


def pose(xyz, rpy_deg=DOWN):
    return pose_from_spec({"position": list(xyz), "rpy_deg": list(rpy_deg)})


@pytest.fixture
def sim():
    b = SimBackend(pick_scene())
    yield b
    b.close()


def test_is_a_backend_with_named_resources(sim):
    assert isinstance(sim, Backend)
    assert list(sim.arms) == ["panda"] and list(sim.grippers) == ["panda"]
    assert sim.world.object_names() == ["box"]
    arm = sim.arms["panda"]
    # the core actions; extensions (doors, tactile sensing) add more
    assert {"move_to_pose", "move_joints", "move_cartesian"} <= arm.actions
    assert "gripper_action" in sim.grippers["panda"].actions
    np.testing.assert_allclose(arm.joint_positions(), arm.named_configurations["ready"], atol=1e-4)
    assert sim.grippers["panda"].gap_m() == pytest.approx(0.08, abs=1e-4)


def test_advance_runs_whole_physics_steps_and_hooks(sim):
    calls = []
    remove = sim.add_step_hook(lambda b: calls.append(b.steps))
    sim.advance(0.1)
    assert sim.now() == pytest.approx(0.1) and len(calls) == 100 and calls[-1] == 100
    for _ in range(3):  # 3 x 1/30 s = 0.1 s: fractions carry over, no drift
        sim.advance(1 / 30)
    assert sim.steps == 200
    remove()
    sim.advance(0.01)
    assert len(calls) == 200


def test_move_to_pose_reaches_reachable_pose(sim):
    target = pose([0.45, 0.15, TABLE_TOP + 0.2], [180, 0, 30])
    h = run(sim, sim.arms["panda"].send_goal("move_to_pose", MoveToPoseGoal(target, velocity_scaling=0.5)))
    assert h.status == GoalStatus.SUCCEEDED, h.text
    tcp = sim.arms["panda"].tcp_pose()
    assert translation_distance(tcp, target) < 0.01
    assert rotation_angle(tcp, target) < math.radians(1)
    assert h.result.position_error_m == pytest.approx(translation_distance(tcp, target), abs=1e-3)
    assert isinstance(h.feedback.distance_m, float)


def test_unreachable_target_is_aborted_with_reason(sim):
    arm = sim.arms["panda"]
    q0 = arm.joint_positions()
    h = arm.send_goal("move_to_pose", MoveToPoseGoal(pose([1.3, 0.0, TABLE_TOP + 0.3])))
    assert h.status == GoalStatus.PENDING  # sent: the server takes it when the backend next runs
    sim.accept_goals()
    assert h.status == GoalStatus.ACTIVE  # checked and planned on the worker while sim time stands still
    t0 = sim.now()
    sim.advance(1 / 30)
    assert h.status == GoalStatus.ABORTED
    assert sim.now() - t0 <= 1 / 30 + 1e-9
    assert "out of reach" in h.text and "(1.30, 0.00, 0.93)" in h.text
    # The Panda reaches about 0.855 m from its shoulder (0.333 m above the base): (1.3, 0, 0.3) is
    # at least 1.3 - 0.855 = 0.44 m beyond it horizontally, so the best solution ends far away.
    miss = float(h.text.split("ends ")[1].split(" m")[0])
    assert miss > 0.3
    sim.advance(0.5)
    np.testing.assert_allclose(arm.joint_positions(), q0, atol=1e-3)


def test_move_cartesian_follows_a_straight_line(sim):
    arm = sim.arms["panda"]
    start = pose([0.4, -0.15, TABLE_TOP + 0.25])
    assert run(sim, arm.send_goal("move_to_pose", MoveToPoseGoal(start))).status == GoalStatus.SUCCEEDED
    a = arm.tcp_pose()[:3, 3]
    end = pose([0.55, 0.1, TABLE_TOP + 0.1])
    b = end[:3, 3]
    h = arm.send_goal("move_cartesian", MoveCartesianGoal(end, speed_mps=0.1))
    t0 = sim.now()
    u = (b - a) / np.linalg.norm(b - a)
    max_dev = 0.0
    while not h.done and sim.now() - t0 < 10:
        sim.advance(0.01)
        p = arm.tcp_pose()[:3, 3] - a
        max_dev = max(max_dev, float(np.linalg.norm(p - np.dot(p, u) * u)))
    assert h.status == GoalStatus.SUCCEEDED, h.text
    assert max_dev < 0.005
    assert translation_distance(arm.tcp_pose(), end) < 0.01
    # Trapezoidal profile: length / speed plus one 0.1 s ramp, plus the settle check.
    length = float(np.linalg.norm(b - a))
    assert sim.now() - t0 == pytest.approx(length / 0.1 + 0.1, abs=0.15)


def test_gripper_closes_on_box_and_stalls_at_its_width(sim):
    arm, grip = sim.arms["panda"], sim.grippers["panda"]
    grasp = pose([0.5, 0.0, TABLE_TOP + 0.025])
    above = pose([0.5, 0.0, TABLE_TOP + 0.125])
    assert run(sim, arm.send_goal("move_to_pose", MoveToPoseGoal(above))).status == GoalStatus.SUCCEEDED
    assert run(sim, arm.send_goal("move_cartesian", MoveCartesianGoal(grasp))).status == GoalStatus.SUCCEEDED
    h = run(sim, grip.send_goal("gripper_action", Pr2GripperCommand(position=0.0, max_effort=40.0)))
    # PR2 gripper_action semantics: stopped short of the goal -> ABORTED with stalled=True.
    assert h.status == GoalStatus.ABORTED and "stalled" in h.text
    assert h.result.stalled and not h.result.reached_goal
    assert h.result.position == pytest.approx(0.05, abs=0.005)
    assert h.result.effort == pytest.approx(40.0, rel=0.1)  # the motor force limit, newtons
    h = run(sim, grip.send_goal("gripper_action", Pr2GripperCommand(position=0.08)))
    assert h.status == GoalStatus.SUCCEEDED and h.result.reached_goal
    assert h.result.position == pytest.approx(0.08, abs=0.002)


def test_pick_and_lift_box_then_drop_is_detected():
    with SimBackend(pick_scene(place_position=[0.5, 0.0, TABLE_TOP + 0.175])) as sim:
        arm, grip = sim.arms["panda"], sim.grippers["panda"]
        p = sim.world.object_pose("box")[:3, 3]
        assert run(sim, arm.send_goal("move_to_pose", MoveToPoseGoal(pose(p + [0, 0, 0.1])))).status == GoalStatus.SUCCEEDED
        assert run(sim, arm.send_goal("move_cartesian", MoveCartesianGoal(pose(p)))).status == GoalStatus.SUCCEEDED
        run(sim, grip.send_goal("gripper_action", Pr2GripperCommand(0.0, 40.0)))
        assert run(sim, arm.send_goal("move_cartesian", MoveCartesianGoal(pose(p + [0, 0, 0.15])))).status == GoalStatus.SUCCEEDED
        sim.advance(0.5)
        m = sim.metrics()
        assert m["object_lift_m"] >= 0.14 and not m["object_dropped"]
        assert m["place_error_m"] < 0.01
        run(sim, grip.send_goal("gripper_action", Pr2GripperCommand(0.08)))
        sim.advance(1.0)
        m = sim.metrics()
        assert m["object_max_lift_m"] >= 0.14
        assert m["object_lift_m"] == pytest.approx(0.0, abs=0.01) and m["object_dropped"]
        assert any("falling" in e["text"] for e in sim.events)


def test_pick_and_lift_mug():
    with SimBackend(mug_scene(), seed=1) as sim:
        arm, grip = sim.arms["panda"], sim.grippers["panda"]
        m0 = sim.world.object_pose("mug")[:3, 3]
        grasp = pose(m0 + [0, 0, 0.045], [180, 0, 90])  # fingers close across the body, clear of the handle
        pre = grasp.copy()
        pre[2, 3] += 0.12
        assert run(sim, arm.send_goal("move_to_pose", MoveToPoseGoal(pre))).status == GoalStatus.SUCCEEDED
        assert run(sim, arm.send_goal("move_cartesian", MoveCartesianGoal(grasp))).status == GoalStatus.SUCCEEDED
        h = run(sim, grip.send_goal("gripper_action", Pr2GripperCommand(0.0, 40.0)))
        assert h.result.stalled and 0.05 < h.result.position < 0.075
        lift = grasp.copy()
        lift[2, 3] += 0.15
        assert run(sim, arm.send_goal("move_cartesian", MoveCartesianGoal(lift, speed_mps=0.1))).status == GoalStatus.SUCCEEDED
        sim.advance(1.0)
        m = sim.metrics()
        assert m["target_object"] == "mug" and m["object_lift_m"] >= 0.10 and not m["object_dropped"]
        tel = sim.telemetry()
        assert tel["object/mug"]["pose"]["position"][2] == pytest.approx(m0[2] + m["object_lift_m"], abs=1e-4)
        assert tel["gripper/panda"]["gap_m"] == pytest.approx(h.result.position, abs=0.003)


def test_cancel_mid_motion_preempts_and_holds_still(sim):
    arm = sim.arms["panda"]
    h = arm.send_goal("move_to_pose", MoveToPoseGoal(pose([0.3, 0.35, TABLE_TOP + 0.2]), velocity_scaling=0.3))
    sim.advance(0.4)
    assert h.status == GoalStatus.ACTIVE and 0.0 < h.feedback.progress < 1.0
    h.cancel()
    assert h.status == GoalStatus.PREEMPTED and h.text == "cancelled"
    sim.advance(0.2)  # the arm brakes
    q = np.array(arm.joint_positions())
    sim.advance(1.0)
    np.testing.assert_allclose(arm.joint_positions(), q, atol=2e-3)


def test_new_goal_preempts_the_running_one(sim):
    arm = sim.arms["panda"]
    first = arm.send_goal("move_to_pose", MoveToPoseGoal(pose([0.3, 0.35, TABLE_TOP + 0.2])))
    sim.advance(0.2)
    second = arm.send_goal("move_joints", MoveJointsGoal(arm.named_configurations["ready"]))
    assert first.status == GoalStatus.ACTIVE and second.status == GoalStatus.PENDING
    sim.accept_goals()  # no physics step: the first stopped on the step the second starts
    assert first.status == GoalStatus.PREEMPTED and "move_joints" in first.text
    assert run(sim, second).status == GoalStatus.SUCCEEDED
    np.testing.assert_allclose(arm.joint_positions(), arm.named_configurations["ready"], atol=5e-3)


def test_invalid_goals_are_rejected(sim):
    arm = sim.arms["panda"]
    h = arm.send_goal("move_joint", MoveJointsGoal([0.0] * 7))
    assert h.status == GoalStatus.REJECTED and "did you mean 'move_joints'" in h.text  # at once: no such server
    h = arm.send_goal("move_joints", MoveJointsGoal([0.0, 0.0, 0.0, 0.5, 0.0, 1.0, 0.0]))  # joint 4 <= 0
    sim.accept_goals()
    assert h.status == GoalStatus.REJECTED and "panda_joint4 target 0.5000 rad is outside" in h.text
    h = arm.send_goal("move_joints", MoveJointsGoal([0.0] * 6))
    sim.accept_goals()
    assert h.status == GoalStatus.REJECTED and "7 joint angles" in h.text
    h = sim.grippers["panda"].send_goal("gripper_action", Pr2GripperCommand(position=0.1))
    sim.accept_goals()
    assert h.status == GoalStatus.REJECTED and "0.08" in h.text
    q0 = arm.joint_positions()
    h = arm.send_goal("move_joints", MoveJointsGoal([q0[0] + 0.5, *q0[1:]]))
    h.cancel()  # before the server took it: RECALLED, never run
    sim.advance(0.2)
    assert h.status == GoalStatus.RECALLED
    np.testing.assert_allclose(arm.joint_positions(), q0, atol=1e-6)  # held still, not 0.5 rad away


def test_force_guard_stops_on_contact(sim):
    arm = sim.arms["panda"]
    start = pose([0.35, -0.25, TABLE_TOP + 0.1])  # clear of the box
    assert run(sim, arm.send_goal("move_to_pose", MoveToPoseGoal(start))).status == GoalStatus.SUCCEEDED
    into_table = pose([0.35, -0.25, TABLE_TOP - 0.05])
    h = run(sim, arm.send_goal("move_cartesian", MoveCartesianGoal(into_table, speed_mps=0.05, max_force_n=15.0)))
    assert h.status == GoalStatus.SUCCEEDED and h.result.stopped_on_contact, h.text
    # The fingertips are at the TCP; they touch the table top about 1 cm below the TCP.
    assert TABLE_TOP - 0.005 < arm.tcp_pose()[2, 3] < TABLE_TOP + 0.03


def test_two_backends_do_not_interfere():
    a, b = SimBackend(pick_scene()), SimBackend(pick_scene())
    try:
        tcp_b = b.arms["panda"].tcp_pose()
        h = a.arms["panda"].send_goal("move_to_pose", MoveToPoseGoal(pose([0.4, 0.2, TABLE_TOP + 0.2])))
        b.advance(0.5)
        run(a, h)
        assert h.status == GoalStatus.SUCCEEDED
        assert b.now() == pytest.approx(0.5) and a.now() > 0.5
        np.testing.assert_allclose(b.arms["panda"].tcp_pose(), tcp_b, atol=1e-4)
        a.close()
        b.advance(0.1)  # still alive after the other one disconnected
        # Resting on the table (the table's AABB top includes PyBullet's 1 mm collision margin).
        assert b.world.object_pose("box")[2, 3] == pytest.approx(TABLE_TOP + 0.025, abs=2e-3)
    finally:
        a.close()
        b.close()


def test_pose_noise_is_seeded_and_bounded():
    poses = {}
    for seed in (0, 0, 7):
        with SimBackend(mug_scene(), seed=seed) as s:
            poses.setdefault(seed, []).append(s.world.object_pose("mug"))
    np.testing.assert_array_equal(poses[0][0], poses[0][1])
    assert not np.allclose(poses[0][0], poses[7][0])
    for T in (poses[0][0], poses[7][0]):
        assert abs(T[0, 3] - 0.5) <= 0.005 and abs(T[1, 3]) <= 0.005
        assert abs(math.degrees(math.atan2(T[1, 0], T[0, 0]))) <= 5.0


def test_world_queries_and_close(sim):
    box = sim.world.object_pose("box")
    # Settled on the table (PyBullet's 1 mm collision margin lets it sit up to 1 mm lower).
    np.testing.assert_allclose(box[:3, 3], [0.5, 0.0, TABLE_TOP + 0.025], atol=2e-3)
    sim.advance(0.2)
    contacts = sim.world.contacts("box", "table")
    assert contacts and all(c.body_b == "table" for c in contacts)
    # Resting box: the normal forces carry its weight, m g = 0.1 kg * 9.81 m/s^2.
    assert sum(c.normal_force_n for c in contacts) == pytest.approx(0.981, rel=0.05)
    lin, ang = sim.world.object_velocity("box")
    assert np.linalg.norm(lin) < 1e-3
    with pytest.raises(KeyError, match="box"):
        sim.world.object_pose("bx")
    sim.close()
    sim.close()
    with pytest.raises(BackendError):
        sim.arms["panda"].send_goal("move_joints", MoveJointsGoal([0.0] * 7))
    with pytest.raises(BackendError):
        sim.advance(0.1)


def test_objects_settle_before_the_clock_starts():
    scene = pick_scene()
    scene["objects"][0]["pose"]["position"][2] += 0.02  # 2 cm above the table
    with SimBackend(scene) as s:
        assert s.now() == 0.0
        assert s.world.object_pose("box")[2, 3] == pytest.approx(TABLE_TOP + 0.025, abs=2e-3)
        s.advance(0.5)
        assert s.metrics()["object_lift_m"] == pytest.approx(0.0, abs=1e-3)


def test_fingers_stay_symmetric_on_an_off_centre_box(sim):
    arm, grip = sim.arms["panda"], sim.grippers["panda"]
    grasp = pose([0.5, 0.01, TABLE_TOP + 0.025])  # box 1 cm off the finger midline (fingers along world y)
    assert run(sim, arm.send_goal("move_to_pose", MoveToPoseGoal(pose([0.5, 0.01, TABLE_TOP + 0.125])))).done
    assert run(sim, arm.send_goal("move_cartesian", MoveCartesianGoal(grasp))).status == GoalStatus.SUCCEEDED
    h = run(sim, grip.send_goal("gripper_action", Pr2GripperCommand(0.0, 40.0)))
    a, b = grip.state().finger_m
    assert abs(a - b) < 1e-3 and h.result.position == pytest.approx(0.05, abs=0.005)
    # The symmetric fingers centred the box on the TCP.
    assert sim.world.object_pose("box")[1, 3] == pytest.approx(0.01, abs=2e-3)


def test_gripper_controller_slot_runs_every_physics_step(sim):
    grip = sim.grippers["panda"]

    class Squeeze:
        """Closes with a constant 20 N effort (PR2 sign: negative closes)."""

        def __init__(self):
            self.calls = 0

        def step(self, gripper):
            self.calls += 1
            gripper.command_effort(-20.0)

    ctrl = Squeeze()
    grip.set_controller(ctrl)
    sim.advance(1.0)
    assert ctrl.calls == 1000
    assert grip.gap_m() < 0.002  # nothing between the fingers: fully closed
    grip.set_controller(None)
    h = run(sim, grip.send_goal("gripper_action", Pr2GripperCommand(0.08)))
    assert ctrl.calls == 1000 and h.status == GoalStatus.SUCCEEDED
