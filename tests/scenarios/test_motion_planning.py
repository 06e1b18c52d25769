"""Collision-aware motion in the simulator (issue 16's acceptance): around an obstacle with the executed
clearance measured, a colliding straight motion refused before the arm moves, a held object carried
clear of the scene, the same seed giving the same path, and the behaviours' planning feedback."""

import numpy as np
import pytest

from py_trees_manipulation.geometry.poses import pose_from_xyz_rpy
from py_trees_manipulation.msgs.actions import GoalStatus
from py_trees_manipulation.msgs.motion import MoveCartesianGoal, MoveToPoseGoal, Pr2GripperCommand
from py_trees_manipulation.sim import SimBackend

TOP = 0.626
PADDING = 0.01
#: a wall on the robot's right; the target is behind it, low: the straight joint motion sweeps the
#: hand through the wall
BEHIND_WALL = pose_from_xyz_rpy([0.35, -0.45, TOP + 0.10], [np.pi, 0, 0])


def scene(seed=0):
    return {
        "seed": seed,
        "robots": [{"name": "panda", "model": "franka_panda", "base_pose": {"position": [0, 0, TOP]}}],
        "fixtures": [{"name": "table", "urdf": "table/table.urdf", "pose": {"position": [0.5, 0, 0]}}],
        "objects": [
            {"name": "wall", "primitive": {"shape": "box", "size": [0.04, 0.40, 0.40]}, "fixed": True,
             "pose": {"position": [0.45, -0.30, TOP + 0.20]}},
            {"name": "cube", "primitive": {"shape": "box", "size": [0.05, 0.05, 0.05]}, "mass_kg": 0.1,
             "lateral_friction": 1.0, "pose": {"position": [0.50, 0.35, TOP + 0.025]}},
            {"name": "hurdle", "primitive": {"shape": "box", "size": [0.30, 0.02, 0.15]}, "fixed": True,
             "pose": {"position": [0.50, 0.20, TOP + 0.075]}},
        ],
        "motion_planning": {"padding_m": PADDING},
        "task": {"target_object": "cube"},
    }


def run(sim, handle, limit_s=20.0):
    t0 = sim.now()
    while not handle.done and sim.now() - t0 < limit_s:
        sim.advance(1 / 30)
    return handle


@pytest.fixture(scope="module")
def around():
    """One run: a refused straight motion, then the planned one round the wall."""
    with SimBackend(scene()) as sim:
        arm = sim.arms["panda"]
        q0 = arm.joint_positions()
        h = arm.send_goal("move_to_pose", MoveToPoseGoal(BEHIND_WALL, planner="straight"))
        sim.accept_goals()  # the server takes it (it is PENDING until the backend runs)
        first = (h.status, h.feedback.phase if h.feedback else None)
        run(sim, h)
        sim.advance(0.5)
        refused = (h.status, h.text, arm.joint_positions(), sim.metrics())
        h2 = run(sim, arm.send_goal("move_to_pose", MoveToPoseGoal(BEHIND_WALL, planning_time_s=5.0)))
        plans = list(sim.extensions["motion_planning"].plans)
        yield {"q0": q0, "first": first, "refused": refused, "planned": (h2.status, h2.text), "plans": plans,
               "metrics": sim.metrics(), "tcp": arm.tcp_pose(), "events": list(sim.events)}


def test_a_straight_motion_that_would_collide_fails_before_the_arm_moves(around):
    assert around["first"] == (GoalStatus.ACTIVE, "planning")     # answered after planning, not in send_goal
    status, text, q, _ = around["refused"]
    assert status == GoalStatus.ABORTED
    assert "would hit wall" in text and "% of the path (straight joint motion)" in text
    np.testing.assert_allclose(q, around["q0"], atol=1e-6)          # not moved at all


def test_the_arm_reaches_around_the_obstacle_keeping_the_padding(around):
    status, text = around["planned"]
    assert status == GoalStatus.SUCCEEDED, text
    assert np.linalg.norm(around["tcp"][:3, 3] - BEHIND_WALL[:3, 3]) < 0.01
    plan = around["plans"][-1]
    assert plan["mode"] == "planned" and plan["planner"] == "RRTConnect" and len(plan["waypoints"]) >= 3
    assert plan["min_clearance_m"] >= PADDING                       # planned path (sampled)
    # measured in the simulator every 10 ms of the executed motion, the wall and the table included
    assert plan["executed_min_clearance_m"] >= PADDING
    assert around["metrics"]["min_clearance_m"] >= PADDING
    assert around["metrics"]["planned_motions"] == 2 and around["metrics"]["planning_time_s"] > 0
    logged = [e["motion_plan"] for e in around["events"] if "motion_plan" in e]
    assert logged[0]["ok"] is False and "would hit wall" in logged[0]["reason"]       # refused, then
    planned = [m for m in logged if m.get("waypoints")]
    assert planned[-1]["planner"] == "RRTConnect" and len(planned[-1]["waypoints"]) >= 3
    assert logged[-1]["executed_min_clearance_m"] == plan["executed_min_clearance_m"]  # when it ended


def carry_over_the_hurdle(seed):
    """Grasp the cube, lift it 5 cm, carry it over the hurdle to the other side (planned with the cube
    attached), lower it: (summaries of the plans, metrics, cube position, final joints)."""
    with SimBackend(scene(seed)) as sim:
        arm, gripper = sim.arms["panda"], sim.grippers["panda"]

        def ok(h):
            run(sim, h)
            assert h.status == GoalStatus.SUCCEEDED, h.text

        def down(xyz):
            return pose_from_xyz_rpy(xyz, [np.pi, 0, np.pi / 2])

        ok(gripper.send_goal("gripper_action", Pr2GripperCommand(0.08)))
        ok(arm.send_goal("move_to_pose", MoveToPoseGoal(down([0.50, 0.35, TOP + 0.13]))))
        ok(arm.send_goal("move_cartesian", MoveCartesianGoal(down([0.50, 0.35, TOP + 0.025]), speed_mps=0.08)))
        h = gripper.send_goal("gripper_action", Pr2GripperCommand(0.0, 40.0))
        run(sim, h)
        assert h.result.stalled
        ok(arm.send_goal("move_cartesian", MoveCartesianGoal(down([0.50, 0.35, TOP + 0.075]), speed_mps=0.1)))
        ok(arm.send_goal("move_to_pose", MoveToPoseGoal(down([0.50, 0.05, TOP + 0.075]), planning_time_s=5.0)))
        ok(arm.send_goal("move_cartesian", MoveCartesianGoal(down([0.50, 0.05, TOP + 0.02]), speed_mps=0.05,
                                                             max_force_n=8.0)))
        return (list(sim.extensions["motion_planning"].plans), sim.metrics(),
                sim.world.object_pose("cube")[:3, 3], arm.joint_positions())


def test_a_held_object_is_carried_clear_of_the_scene_and_the_same_seed_gives_the_same_path():
    plans, metrics, cube, q = carry_over_the_hurdle(seed=3)
    carry = plans[-2]
    assert carry["attached"] == "cube" and carry["mode"] == "planned"   # straight would drag it through
    # the held cube's clearance counts (the table it was lifted from is a start contact, excluded)
    assert carry["executed_min_clearance_m"] >= PADDING, carry
    assert metrics["min_clearance_m"] >= PADDING
    assert cube[1] == pytest.approx(0.05, abs=0.01) and cube[2] == pytest.approx(TOP + 0.025, abs=0.005)
    # same seed: the same plans, the same robot at the end
    plans2, _, cube2, q2 = carry_over_the_hurdle(seed=3)
    assert [p["waypoints"] for p in plans2] == [p["waypoints"] for p in plans]
    np.testing.assert_allclose(q2, q, atol=1e-9)
    np.testing.assert_allclose(cube2, cube, atol=1e-9)


def test_behaviours_show_planning_and_refuse_unknown_planners(tmp_path):
    from py_trees_manipulation.located.errors import TreeLoadError
    from py_trees_manipulation.trees.loader import load_task
    from py_trees_manipulation.trees.runner import RunOptions, run_task

    task = tmp_path / "t.yaml"
    task.write_text(
        "name: around\n"
        "scene:\n"
        "  robots: [{name: panda, model: franka_panda, base_pose: {position: [0, 0, 0.626]}}]\n"
        "  fixtures: [{name: table, urdf: table/table.urdf, pose: {position: [0.5, 0, 0]}}]\n"
        "  objects:\n"
        "    - {name: wall, primitive: {shape: box, size: [0.04, 0.4, 0.4]}, fixed: true, "
        "pose: {position: [0.45, -0.3, 0.826]}}\n"
        "tree:\n"
        "  MoveToPose: {name: reach, target: {position: [0.35, -0.45, 0.726], rpy_deg: [180, 0, 0]}, "
        "planner: RRTConnect, planning_time_s: 5}\n")
    seen = []

    class Spy:
        def on_start(self, run): pass

        def on_tick(self, run):
            seen.append(run.tree.root.feedback_message)

        def on_end(self, run, summary): pass

    loaded = load_task(str(task))
    with SimBackend(loaded.scene, base_dir=str(tmp_path)) as sim:
        sim.clock_hold_wait_s = 0.0  # the tree ticks on while the motion is planned (as in the viewer)
        result = run_task(loaded, RunOptions(display=False, observers=[Spy()]), backend=sim)
    assert result.summary["status"] == "SUCCESS", result.summary.get("failed_behaviour")
    assert seen[0] == "move_to_pose goal sent"  # the server takes it when the backend next runs
    assert seen[1].startswith("planning (RRTConnect)")
    assert result.summary["metrics"]["min_clearance_m"] >= PADDING
    bad = tmp_path / "bad.yaml"
    bad.write_text(task.read_text().replace("planner: RRTConnect", "planner: RRTConect"))
    with pytest.raises(TreeLoadError) as e:
        load_task(str(bad))
    assert "did you mean 'RRTConnect'" in str(e.value) and "'BITstar'" in str(e.value)
