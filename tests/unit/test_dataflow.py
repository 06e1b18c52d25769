"""Blackboard data flow is checked at load time, like BT.CPP's port remaps (trees/dataflow.py)."""

from __future__ import annotations

import os
import textwrap

import py_trees
import pytest

from py_trees_manipulation.located.errors import TreeLoadError
from py_trees_manipulation.trees.loader import load_task

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text).lstrip())
    return str(p)


def problems(path, overrides=None):
    with pytest.raises(TreeLoadError) as e:
        load_task(path, overrides)
    return [str(p) for p in e.value.problems]


def test_misspelt_key_names_the_key_the_readers_line_and_the_written_keys(tmp_path):
    path = write(tmp_path, "t.yaml", """
        blackboard:
          place_pose: {position: [0.45, 0.2, 0.63]}
        tree:
          Sequence:
            children:
              - GetObjectPose: {name: locate, object: mug, output_key: object_pose}
              - MoveToPose: {name: above, target: "{place_pos}"}
    """)
    (p,) = problems(path)
    assert p.startswith(f"{path}:7:35: MoveToPose.target reads blackboard key 'place_pos', but no node writes it")
    assert "did you mean 'place_pose'?" in p and "keys written before this node: object_pose, place_pose" in p


def test_keys_written_earlier_in_a_sequence_through_includes_and_nested_substitutions_are_fine(tmp_path):
    write(tmp_path, "sub.yaml", """
        parameters: {pose_key: null, out: grasped}
        tree:
          Sequence:
            children:
              - MoveToPose: {target: "{${pose_key}}"}
              - GripperCommand: {position: 0.0, result_key: "${out}"}
    """)
    path = write(tmp_path, "t.yaml", """
        tree:
          Sequence:
            children:
              - GetObjectPose: {object: mug, output_key: mug_pose}
              - include: sub.yaml
                with: {pose_key: mug_pose, out: grip_result}
              - SetBlackboardVariable: {variable_name: phase, value: lift}
              - StatusToBlackboard:
                  variable_name: lift_status
                  child: {GripperCommand: {position: 0.08, feedback_key: lifted_at}}
              - CheckBlackboardVariableValue: {variable_name: phase, value: lift}
              - CheckBlackboardVariableExists: {variable_name: lifted_at}
              - Wait: {duration_s: "{pause}"}
    """)
    with pytest.raises(TreeLoadError) as e:
        load_task(path)
    (p,) = [str(x) for x in e.value.problems]
    assert "reads blackboard key 'pause'" in p
    assert "keys written before this node: grip_result, lift_status, lifted_at, mug_pose, phase" in p
    load_task(path, ["blackboard.pause=0.5"])  # --set blackboard.KEY sets it


def test_a_key_named_by_an_include_points_at_the_include_that_names_it(tmp_path):
    # the reader is in the included file, but the wrong key was given in the including one: the
    # message names that line (the `with:` key) and the key to give instead
    write(tmp_path, "sub.yaml", """
        parameters: {pose_key: null}
        tree:
          MoveToPose: {name: reach, target: "{${pose_key}}"}
    """)
    path = write(tmp_path, "t.yaml", """
        tree:
          Sequence:
            children:
              - GetObjectPose: {object: mug, output_key: mug_pose}
              - include: sub.yaml
                with: {pose_key: mugpose}
    """)
    (p,) = problems(path)
    assert p.startswith(f"{tmp_path}/sub.yaml:3:29: MoveToPose.target reads blackboard key 'mugpose'"), p
    assert p.endswith(f"'mugpose' is the include's parameter 'pose_key' (given at {path}:6:16, the include at "
                      f"{path}:5:18): name there a key the tree writes, e.g. 'with: {{pose_key: mug_pose}}'"), p


def test_a_key_from_an_includes_default_says_so(tmp_path):
    write(tmp_path, "sub.yaml", """
        parameters: {pose_key: target_pose}
        tree:
          MoveToPose: {name: reach, target: "{${pose_key}}"}
    """)
    path = write(tmp_path, "t.yaml", """
        tree:
          include: sub.yaml
    """)
    (p,) = problems(path)
    assert f"'target_pose' is the include's parameter 'pose_key' (its default in {tmp_path}/sub.yaml" in p, p


def test_selector_and_parallel_siblings_may_not_have_run(tmp_path):
    path = write(tmp_path, "t.yaml", """
        tree:
          Sequence:
            children:
              - Selector:
                  children:
                    - GetObjectPose: {name: a, object: mug, output_key: first}
                    - Sequence:
                        children:
                          - GetObjectPose: {name: b, object: mug, output_key: second}
                          - GetObjectPose: {name: b2, object: mug, output_key: first}
              - MoveToPose: {name: use_first, target: "{first}"}
              - MoveToPose: {name: use_second, target: "{second}"}
              - Parallel:
                  policy: success_on_all
                  children:
                    - GetObjectPose: {name: d, object: mug, output_key: third}
                    - MoveToPose: {name: use_third_too_early, target: "{third}"}
              - MoveToPose: {name: use_third, target: "{third}"}
    """)
    ps = [p.replace(path, "P") for p in problems(path)]
    assert len(ps) == 2, ps  # 'first' is written by every branch of the Selector
    assert ps[0].startswith("P:12:40: MoveToPose.target reads blackboard key 'second', but it is written by "
                            "GetObjectPose 'b' (P:9:21), which does not always run before this node")
    assert ps[1].startswith("P:17:55: MoveToPose.target reads blackboard key 'third', but it is written by "
                            "GetObjectPose 'd' (P:16:15)")
    assert "keys written before this node: first;" in ps[1]


def test_later_writer_and_inverted_child_do_not_count(tmp_path):
    path = write(tmp_path, "t.yaml", """
        tree:
          Sequence:
            children:
              - Inverter: {child: {GetObjectPose: {object: mug, output_key: p}}}
              - MoveToPose: {name: early, target: "{q}"}
              - GetObjectPose: {object: mug, output_key: q}
              - MoveToPose: {name: from_inverted, target: "{p}"}
    """)
    ps = [p.replace(path, "P") for p in problems(path)]
    assert [p.split(" (later in tick order")[0] for p in ps] == [
        "P:5:35: MoveToPose.target reads blackboard key 'q', but it is written by GetObjectPose 'GetObjectPose' (P:6:9), "
        "which does not always run before this node",
        "P:7:43: MoveToPose.target reads blackboard key 'p', but it is written by GetObjectPose 'GetObjectPose' (P:4:28), "
        "which does not always run before this node"]


def test_a_literal_value_that_does_not_fit_the_reader_is_reported_with_both_places(tmp_path):
    path = write(tmp_path, "t.yaml", """
        blackboard:
          place_pose: 5
        tree:
          Sequence:
            children:
              - SetBlackboardVariable: {variable_name: pause, value: "3 kg"}
              - Wait: {duration_s: "{pause}"}
              - MoveToPose: {target: "{place_pose}"}
    """)
    ps = [p.replace(path, "P") for p in problems(path)]
    assert ps[0] == ("P:7:16: Wait.duration_s: blackboard key 'pause' holds the value set by SetBlackboardVariable "
                     "'SetBlackboardVariable' at P:6:55, which does not fit: unit 'kg' (mass) does not fit this parameter "
                     "(time, in s); give a time such as '1 s'")
    assert ps[1].startswith("P:8:22: MoveToPose.target: blackboard key 'place_pose' holds the value set by the "
                            "'blackboard:' section at P:2:15, which does not fit: a pose is")
    assert len(problems(path, ["blackboard.place_pose=[0.4, 0, 0.3]"])) == 1  # a position is a pose
    assert "--set blackboard.place_pose=7, which does not fit" in problems(path, ["blackboard.place_pose=7"])[1]


def test_regrasp_state_key_is_a_write():
    task = load_task(os.path.join(ROOT, "examples", "regrasp.yaml"))
    assert task.tree is not None


def test_every_example_passes(tmp_path):
    import glob

    for path in sorted(glob.glob(os.path.join(ROOT, "examples", "*.yaml"))):
        load_task(path)


def test_a_read_that_fails_at_run_time_fails_the_behaviour_with_the_reason():
    """Defence behind the load-time check: a value written at run time that does not fit."""
    from py_trees_manipulation.behaviors.basic import SetBlackboardVariable, Wait
    from py_trees_manipulation.testing.fake_backend import FakeBackend

    py_trees.blackboard.Blackboard.clear()
    wait = Wait(name="w", duration_s="{d}")
    seq = py_trees.composites.Sequence("s", memory=True, children=[wait])
    tree = py_trees.trees.BehaviourTree(seq)
    tree.setup(backend=FakeBackend())
    tree.tick()
    assert (seq.status, wait.feedback_message) == (py_trees.common.Status.FAILURE,
                                                   "blackboard key 'd' (parameter 'duration_s') has no value yet")
    SetBlackboardVariable(variable_name="d", value="abc")  # registers nothing at run; write directly
    py_trees.blackboard.Blackboard.set("/d", "abc")
    tree.tick()
    assert wait.status == py_trees.common.Status.FAILURE
    assert wait.feedback_message == "blackboard key 'd' for parameter 'duration_s': expected a number in s, got 'abc'"


def test_our_tick_keeps_py_trees_contract_for_an_invalid_status_and_its_debug_line(capsys):
    """ManipulationBehaviour.tick replaces py_trees' (read guards, no per-tick debug formatting):
    a status that is not a Status still becomes INVALID, and with py_trees' debug logging on the
    tick's debug line is still printed."""
    from py_trees_manipulation.behaviors.basic import Wait
    from py_trees_manipulation.testing.fake_backend import FakeBackend

    class Odd(Wait):
        ABSTRACT = True  # a test class: not registered

        def update(self):
            return "done"

    py_trees.blackboard.Blackboard.clear()
    node = Odd(name="odd", duration_s=1.0)
    node.setup(backend=FakeBackend())
    level = py_trees.logging.level
    py_trees.logging.level = py_trees.logging.Level.DEBUG
    try:
        node.tick_once()
    finally:
        py_trees.logging.level = level
    assert node.status == py_trees.common.Status.INVALID
    out = capsys.readouterr().out
    assert "Odd.tick()" in out
    node.tick_once()
    assert "Odd.tick()" not in capsys.readouterr().out  # at the default level nothing is formatted
