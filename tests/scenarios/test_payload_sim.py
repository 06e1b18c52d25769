"""A payload no real arm lifts fails the run even where no check before moving could see it
(issue 32 item 7; the trial's two false SUCCESSes): a light bar lifted with a 3 kg weight resting on
it, and a 10 kg box lifted by a tree without ChooseGrasp and without held_object. The simulator
reads the load from the wrist force (sim/payload.py): max_carried_kg is the bar and the weight."""

import textwrap

import pytest

from py_trees_manipulation.trees.loader import load_task
from py_trees_manipulation.trees.runner import RunOptions, run_task

BAR = textwrap.dedent("""
    name: bar_with_load
    description: lift a light bar that carries a heavy weight resting on it
    scene:
      seed: 0
      robots:
        - {name: panda, model: franka_panda, base_pose: {position: [0, 0, 0.626]}, initial_configuration: ready}
      fixtures:
        - {name: table, urdf: table/table.urdf, pose: {position: [0.5, 0, 0]}}
      objects:
        - {name: bar, primitive: {shape: box, size: [0.24, 0.04, 0.04]}, mass_kg: 0.3, lateral_friction: 1.0,
           pose: {position: [0.45, 0.0, 0.646]}}
        - {name: weight, primitive: {shape: box, size: [0.06, 0.04, 0.02]}, mass_kg: 3.0, lateral_friction: 1.0,
           pose: {position: [0.53, 0.0, 0.676]}}
      task: {target_object: bar}
      grasp_fix: {auto: true}
    tree:
      Sequence:
        name: lift_bar
        children:
          - GripperCommand: {name: open, position: open}
          - GetObjectPose: {name: locate, object: bar, output_key: bar_pose}
          - MoveToPose: {name: pregrasp, target: "{bar_pose}", offset: {position: [-0.07, 0, 0]},
                         orientation_rpy_deg: [180, 0, 0], world_offset: [0, 0, 0.10]}
          - MoveCartesian: {name: descend, target: "{bar_pose}", offset: {position: [-0.07, 0, 0]},
                            orientation_rpy_deg: [180, 0, 0], speed_mps: 0.08}
          - GripperCommand: {name: close, position: 0.0, max_effort: 40, expect_object: true}
          - GraspFixAttach: {name: weld, object: bar, timeout_s: 3.0}
          - MoveCartesian: {name: lift, delta: [0, 0, 0.10], speed_mps: 0.1, allowed_contacts: ["bar:weight"]}
          - Wait: {name: hold, duration_s: 1.0}
          - ObjectLifted: {name: lifted, object: weight, min_height_m: 0.09}
""")


@pytest.fixture(scope="module")
def bar_file(tmp_path_factory):
    p = tmp_path_factory.mktemp("payload") / "bar.yaml"
    p.write_text(BAR)
    return str(p)


def test_a_weight_riding_on_the_object_counts_against_the_payload(bar_file):
    s = run_task(load_task(bar_file), RunOptions(display=False, timeout_s=20)).summary
    assert s["status"] == "FAILURE"
    assert s["error"].startswith("the tree succeeded but robot 'panda' carried up to 3.")
    assert "more than it may lift: 2.27 kg (franka_panda's rated payload 3.00 kg minus its gripper's 0.73 kg)" in s["error"]
    assert s["metrics"]["max_carried_kg"] == pytest.approx(3.3, abs=0.15)      # the bar and the weight


def test_the_same_lift_with_the_rating_overridden_succeeds_and_light_loads_are_measured(bar_file):
    s = run_task(load_task(bar_file, ["scene.robots.0.payload_kg=4.5"]), RunOptions(display=False, timeout_s=20)).summary
    assert s["status"] == "SUCCESS", s.get("error")
    assert s["metrics"]["max_carried_kg"] == pytest.approx(3.3, abs=0.15)
    # without the weight: the bar alone, 0.3 kg
    s = run_task(load_task(bar_file, ["scene.objects.1.pose.position=[0.7, 0.3, 0.636]",
                                      "tree.lifted.object=bar"]), RunOptions(display=False, timeout_s=20)).summary
    assert s["status"] == "SUCCESS", s.get("error")
    # (0.30-0.37 kg: the wrist also reads the pads' squeeze on a grasp off the bar's centre, sim/payload.py)
    assert s["metrics"]["max_carried_kg"] == pytest.approx(0.3, abs=0.1)
