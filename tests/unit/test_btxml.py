"""BehaviorTree.CPP v4 XML: import with file:line errors, export, round trips, BT.CPP's own parser."""

from __future__ import annotations

import glob
import os
import textwrap

import numpy as np
import pytest

from py_trees_manipulation.behaviors.params import BlackboardRef
from py_trees_manipulation.interop import btxml
from py_trees_manipulation.located.errors import TreeLoadError
from py_trees_manipulation.located import locyaml
from py_trees_manipulation.trees.loader import load_task, load_task_data

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = sorted(glob.glob(os.path.join(ROOT, "examples", "*.yaml")))
PICK_AND_LIFT = os.path.join(ROOT, "examples", "pick_and_lift.yaml")


def _xml(tmp_path, body: str, name: str = "tree.xml") -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body).lstrip())
    return str(path)


def _tree(tmp_path, body: str):
    return btxml.load_tree_from_xml(_xml(tmp_path, body)).tree


def _error(tmp_path, body: str) -> TreeLoadError:
    with pytest.raises(TreeLoadError) as e:
        btxml.load_tree_from_xml(_xml(tmp_path, body))
    return e.value


@pytest.mark.parametrize("path", EXAMPLES, ids=os.path.basename)
def test_round_trip_yaml_xml_yaml_gives_the_same_tree(path, tmp_path):
    task = load_task(path)
    xml = tmp_path / "out.xml"
    xml.write_text(btxml.export_xml(task))
    back = btxml.load_tree_from_xml(str(xml))
    assert btxml.tree_differences(task.tree, back.tree) == []
    # and once more through the YAML text that 'ptm convert FILE.xml -o FILE.yaml' writes
    y = tmp_path / "back.yaml"
    y.write_text(btxml.task_to_yaml(back))
    # a tree-only file (no --scene): its blackboard: section is not known, so data flow is not checked
    again = load_task_data(locyaml.load(str(y)), str(y), check_blackboard=False)
    assert btxml.tree_differences(task.tree, again.tree) == []
    assert sum(1 for _ in again.tree.walk()) == sum(1 for _ in task.tree.walk())


@pytest.mark.parametrize("path", EXAMPLES, ids=os.path.basename)
def test_exported_xml_loads_in_behaviortree_cpp(path):
    pytest.importorskip("behaviortreepy")
    text = btxml.export_xml(load_task(path))
    tree = btxml.btcpp_check(text)
    assert tree.root_node() is not None


def test_btcpp_check_catches_what_btcpp_rejects():
    pytest.importorskip("behaviortreepy")
    good = btxml.export_xml(load_task(PICK_AND_LIFT))
    assert "<MoveJoints " in good
    with pytest.raises(ValueError, match="port with name \\[speed\\]"):
        btxml.btcpp_check(good.replace("<MoveJoints ", '<MoveJoints speed="1" ', 1))
    bad_timeout = ('<root BTCPP_format="4" main_tree_to_execute="T"><BehaviorTree ID="T">'
                   '<Timeout msec="half"><AlwaysSuccess/></Timeout></BehaviorTree></root>')
    with pytest.raises(ValueError):
        btxml.btcpp_check(bad_timeout)
    with pytest.raises(ValueError, match="Node not recognized|not recognized"):
        btxml.btcpp_check('<root BTCPP_format="4"><BehaviorTree ID="T"><NoSuchNode/></BehaviorTree></root>')


def test_btcpp_semantics_map_to_memory_flags_and_decorators(tmp_path):
    root = _tree(tmp_path, """
        <root BTCPP_format="4" main_tree_to_execute="Main">
          <BehaviorTree ID="Main">
            <Sequence name="main">
              <ReactiveSequence name="reactive"><AlwaysSuccess/></ReactiveSequence>
              <Fallback name="fb"><AlwaysFailure/><AlwaysSuccess name="ok"/></Fallback>
              <ReactiveFallback name="rfb"><AlwaysSuccess name="ok2"/></ReactiveFallback>
              <Parallel name="all" success_count="-1" failure_count="1"><AlwaysSuccess name="a"/><AlwaysSuccess name="b"/></Parallel>
              <Parallel name="one" success_count="1"><AlwaysSuccess name="c"/><AlwaysSuccess name="d"/></Parallel>
              <RetryUntilSuccessful name="retry" num_attempts="3"><AlwaysSuccess name="e"/></RetryUntilSuccessful>
              <Repeat name="rep" num_cycles="2"><AlwaysSuccess name="f"/></Repeat>
              <Timeout name="to" msec="1500"><Sleep name="nap" msec="250"/></Timeout>
              <ForceSuccess name="fs"><Inverter name="inv"><AlwaysSuccess name="g"/></Inverter></ForceSuccess>
              <ForceFailure name="ff"><KeepRunningUntilFailure name="k"><AlwaysFailure name="h"/></KeepRunningUntilFailure></ForceFailure>
              <RunOnce name="once" then_skip="false"><AlwaysSuccess name="i"/></RunOnce>
              <SetBlackboard name="set" output_key="phase" value="lift"/>
            </Sequence>
          </BehaviorTree>
        </root>""")
    by_name = {n.name: n for n in root.walk()}
    assert (root.type, root.params["memory"]) == ("Sequence", True)
    assert (by_name["reactive"].type, by_name["reactive"].params["memory"]) == ("Sequence", False)
    assert (by_name["fb"].type, by_name["fb"].params["memory"]) == ("Selector", True)
    assert (by_name["rfb"].type, by_name["rfb"].params["memory"]) == ("Selector", False)
    assert by_name["all"].params["policy"] == "success_on_all"
    assert by_name["one"].params["policy"] == "success_on_one"
    assert (by_name["retry"].type, by_name["retry"].params["num_failures"]) == ("Retry", 3)
    assert by_name["rep"].params["num_success"] == 2
    assert (by_name["to"].type, by_name["to"].params["duration_s"]) == ("Timeout", 1.5)
    assert (by_name["nap"].type, by_name["nap"].params["duration_s"]) == ("Wait", 0.25)
    assert [by_name[n].type for n in ("fs", "inv", "ff", "k")] == ["FailureIsSuccess", "Inverter", "SuccessIsFailure",
                                                                     "SuccessIsRunning"]
    assert (by_name["once"].type, by_name["once"].params["policy"]) == ("OneShot", "on_completion")
    assert (by_name["set"].type, by_name["set"].params["variable_name"], by_name["set"].params["value"]) == \
        ("SetBlackboardVariable", "phase", "lift")


def test_ports_become_typed_parameters(tmp_path):
    root = _tree(tmp_path, """
        <root BTCPP_format="4">
          <BehaviorTree ID="Main">
            <Sequence>
              <MoveToPose name="p" target='{"position": [0.4, 0, 0.3], "rpy_deg": [180, 0, 0]}' velocity_scaling="0.25"
                          position_tolerance_m="5 mm"/>
              <MoveCartesian name="lift" delta="0;0;0.15" speed_mps="{speed}"/>
              <GripperCommand name="close" position="0" expect_object="true" result_key="{grip}"/>
              <Action ID="MoveJoints" name="home" positions="[0, -0.785, 0, -2.356, 0, 1.571, 0.785]"/>
            </Sequence>
          </BehaviorTree>
        </root>""")
    n = {c.name: c for c in root.children}
    T = n["p"].params["target"]
    assert np.allclose(T[:3, 3], [0.4, 0, 0.3]) and np.allclose(T[:3, :3], np.diag([1.0, -1.0, -1.0]), atol=1e-12)
    assert n["p"].params["velocity_scaling"] == 0.25
    assert n["p"].params["position_tolerance_m"] == pytest.approx(0.005)
    assert n["lift"].params["delta"] == [0.0, 0.0, 0.15]
    assert n["lift"].params["speed_mps"] == BlackboardRef("speed")
    assert n["close"].params["expect_object"] is True and n["close"].params["result_key"] == "grip"
    assert n["home"].params["positions"][3] == pytest.approx(-2.356)


def test_subtree_remapping_literals_scopes_and_autoremap(tmp_path):
    root = _tree(tmp_path, """
        <root BTCPP_format="4" main_tree_to_execute="Main">
          <BehaviorTree ID="Grasp">
            <Sequence name="seq">
              <GetObjectPose name="locate" object="{obj}" output_key="{pose}"/>
              <MoveToPose name="above" target="{pose}"/>
              <Wait name="w" duration_s="{settle}"/>
              <GetObjectPose name="again" object="mug" output_key="{@global_pose}"/>
            </Sequence>
          </BehaviorTree>
          <BehaviorTree ID="Main">
            <Sequence name="main">
              <SubTree ID="Grasp" name="g1" obj="mug" pose="{mug_pose}"/>
              <SubTree ID="Grasp" name="g2" obj="box" settle="{=}" _autoremap="false"/>
              <SubTree ID="Grasp" name="g3" obj="can" _autoremap="true"/>
            </Sequence>
          </BehaviorTree>
        </root>""")
    n = {c.name: c for c in root.walk()}
    assert [c.name for c in root.children] == ["g1", "g2", "g3"]          # the SubTree's name names its root
    assert n["g1/locate"].params["object"] == "mug"                       # literal remapped into a port
    assert n["g1/locate"].params["output_key"] == "mug_pose"              # {pose} -> {mug_pose}
    assert n["g1/above"].params["target"] == BlackboardRef("mug_pose")
    assert n["g1/w"].params["duration_s"] == BlackboardRef("g1/settle")   # not remapped: the subtree's own scope
    assert n["g2/w"].params["duration_s"] == BlackboardRef("settle")      # {=}: same name outside
    assert n["g2/locate"].params["output_key"] == "g2/pose"
    assert n["g3/locate"].params["output_key"] == "pose"                  # _autoremap: same name outside
    assert n["g1/again"].params["output_key"] == "global_pose"            # {@key}: root blackboard


@pytest.mark.parametrize("body,line,fragment", [
    ('<root BTCPP_format="4">\n<BehaviorTree ID="M">\n<Sequence>\n  <SequenceWithMemory>\n<AlwaysSuccess/>'
     '</SequenceWithMemory>\n</Sequence>\n</BehaviorTree>\n</root>', 4, "SequenceWithMemory"),
    ('<root BTCPP_format="4">\n<BehaviorTree ID="M">\n<Script code="x:=1"/>\n</BehaviorTree>\n</root>', 3, "<Script>"),
    ('<root BTCPP_format="4">\n<BehaviorTree ID="M">\n<Sequence>\n<AlwaysSuccess _skipIf="a==1"/>\n</Sequence>'
     '\n</BehaviorTree>\n</root>', 4, "_skipIf"),
    ('<root BTCPP_format="4">\n<BehaviorTree ID="M">\n\n<RunOnce><AlwaysSuccess/></RunOnce>\n</BehaviorTree>\n</root>',
     4, "SKIPPED"),
    ('<root BTCPP_format="4">\n<BehaviorTree ID="M">\n<Parallel success_count="2" failure_count="2">\n<AlwaysSuccess/>'
     '<AlwaysSuccess/><AlwaysSuccess/></Parallel>\n</BehaviorTree>\n</root>', 3, "no py_trees equivalent"),
    ('<root BTCPP_format="4">\n<BehaviorTree ID="M">\n<Sequence>\n<AlwaysSuccess>\n</Sequence>\n</BehaviorTree>\n</root>',
     5, "malformed XML"),
    ('<?xml version="1.0"?>\n<!DOCTYPE r [<!ENTITY a "aaaa">]>\n<root/>', 2, "DOCTYPE"),
    ('<root BTCPP_format="4">\n<BehaviorTree ID="M">\n<Sequence>\n<MoveToPos target="[0.4, 0, 0.3]"/>'
     '\n</Sequence>\n</BehaviorTree>\n</root>', 4, "did you mean 'MoveToPose'"),
    ('<root BTCPP_format="4">\n<BehaviorTree ID="M">\n<Sequence>\n\n<GripperCommand position="0.5"/>'
     '\n</Sequence>\n</BehaviorTree>\n</root>', 5, "above the maximum"),
    ('<root BTCPP_format="4">\n<BehaviorTree ID="M">\n<SubTree ID="M"/>\n</BehaviorTree>\n</root>', 3, "recursive SubTree"),
    ('<root BTCPP_format="3">\n<BehaviorTree ID="M"><AlwaysSuccess/></BehaviorTree>\n</root>', 1, "BTCPP_format"),
])
def test_problems_name_the_element_and_its_line(tmp_path, body, line, fragment):
    err = _error(tmp_path, body)
    text = str(err)
    assert fragment in text
    assert any(p.loc.line == line and p.loc.file.endswith("tree.xml") for p in err.problems), text


def test_export_refuses_what_btcpp_cannot_express(tmp_path):
    y = tmp_path / "sel.yaml"
    y.write_text("tree:\n  Parallel:\n    policy: success_on_selected\n    selected: [a]\n"
                 "    children:\n      - Success: {name: a}\n      - Running: {name: b}\n")
    with pytest.raises(TreeLoadError) as e:
        btxml.export_xml(load_task(str(y)))
    assert e.value.problems[0].loc.line == 2 and "success_on_selected" in str(e.value)
    y.write_text("tree:\n  Timeout:\n    duration_s: 0.0005\n    child: {Success: {}}\n")
    with pytest.raises(TreeLoadError, match="whole number of milliseconds"):
        btxml.export_xml(load_task(str(y)))


def test_custom_decorators_are_declared_in_the_node_model(tmp_path):
    y = tmp_path / "c.yaml"
    y.write_text("tree:\n  Condition:\n    status: SUCCESS\n    child:\n      PassThrough:\n        child:\n"
                 "          StatusToBlackboard: {variable_name: st, child: {Running: {}}}\n")
    task = load_task(str(y))
    text = btxml.export_xml(task)
    assert '<Decorator ID="Condition" status="SUCCESS">' in text
    model = btxml.custom_node_types(text)
    assert model["Condition"] == ("Decorator", ["status"])
    assert model["StatusToBlackboard"] == ("Decorator", ["variable_name"])
    assert model["PassThrough"] == ("Decorator", [])
    assert model["Running"] == ("Action", [])
    x = tmp_path / "c.xml"
    x.write_text(text)
    assert btxml.tree_differences(task.tree, btxml.load_tree_from_xml(str(x)).tree) == []
    if pytest.importorskip("behaviortreepy"):
        btxml.btcpp_check(text)


def test_values_survive_text_encoding():
    from py_trees_manipulation.behaviors.params import Param

    for value, p in [("3", Param("any", None)), ("[1, 2]", Param("any", None)), ({"a": [1, 2.5]}, Param("any", None)),
                     ("lift", Param("any", None)), (True, Param("any", None)), (0.1, Param("float", 0.0)),
                     ([0.0, 0.0, 0.15], Param("vector3", None)), ("on", Param("str", None))]:
        text = btxml.value_to_text(value, p)
        back = btxml.text_to_value(text, p)
        assert back == value, (value, text, back)


def test_load_task_from_xml_takes_scene_and_parameters_from_the_yaml(tmp_path):
    scene = tmp_path / "task.yaml"
    scene.write_text("name: demo\nparameters: {object: mug, wait_s: 0.25}\nblackboard: {phase: start}\n"
                     "tree: {Success: {}}\n")
    xml = _xml(tmp_path, """
        <root BTCPP_format="4"><BehaviorTree ID="T"><Sequence name="s">
          <GetObjectPose name="locate" object="${object}" output_key="{p}"/>
          <Wait name="w" duration_s="${wait_s}"/>
        </Sequence></BehaviorTree></root>""")
    task = btxml.load_task_from_xml(xml, str(scene), ["tree.w.duration_s=0.5"])
    n = {c.name: c for c in task.tree.walk()}
    assert task.name == "demo" and task.file == xml and task.blackboard == {"phase": "start"}
    assert n["locate"].params["object"] == "mug"
    assert n["w"].params["duration_s"] == 0.5
    with pytest.raises(TreeLoadError) as e:
        btxml.load_task_from_xml(xml, str(scene), ["tree.nope.x=1"])
    assert "no node named 'nope'" in str(e.value)


def test_cli_convert_both_ways(tmp_path, capsys):
    from py_trees_manipulation.cli import main

    out_xml = tmp_path / "pal.xml"
    assert main(["convert", PICK_AND_LIFT, "-o", str(out_xml)]) == 0
    out_yaml = tmp_path / "pal.yaml"
    assert main(["convert", str(out_xml), "-o", str(out_yaml)]) == 0
    assert btxml.tree_differences(load_task(PICK_AND_LIFT).tree, load_task(str(out_yaml)).tree) == []
    bad = tmp_path / "bad.xml"
    bad.write_text('<root BTCPP_format="4">\n<BehaviorTree ID="T">\n<IfThenElse/>\n</BehaviorTree>\n</root>\n')
    assert main(["convert", str(bad), "-o", str(tmp_path / "x.yaml")]) == 2
    assert f"{bad}:3:1: <IfThenElse>" in capsys.readouterr().err


def test_cli_convert_with_scene_writes_a_complete_task_file(tmp_path, capsys):
    """XML -> YAML with --scene: the task file's name, description, parameters, scene and
    blackboard around the XML's tree, so the result validates (and runs: tests/scenarios)."""
    from py_trees_manipulation.cli import main

    xml = tmp_path / "pal.xml"
    assert main(["convert", PICK_AND_LIFT, "-o", str(xml)]) == 0
    out = tmp_path / "sub" / "pal.yaml"  # the folder is created
    assert main(["convert", str(xml), "--scene", PICK_AND_LIFT, "-o", str(out)]) == 0
    orig, back = load_task(PICK_AND_LIFT), load_task(str(out))
    assert back.name == "pick_and_lift" and back.description == orig.description
    assert back.parameters == {"object": "mug", "lift_m": 0.15}
    assert back.scene == orig.scene and back.scene["objects"][0]["mass_kg"] == 0.2
    assert btxml.tree_differences(orig.tree, back.tree) == []
    # --set reaches the written file; a blackboard section is carried over
    scene = tmp_path / "task.yaml"
    scene.write_text("name: demo\ndescription: waits\nparameters: {wait_s: 0.25}\nblackboard: {phase: start}\n"
                     "scene:\n  fixtures: [{name: floor, urdf: plane.urdf}]\ntree: {Success: {}}\n")
    xml2 = _xml(tmp_path, '<root BTCPP_format="4"><BehaviorTree ID="T"><Wait name="w" duration_s="${wait_s}"/>'
                          '</BehaviorTree></root>', "wait.xml")
    assert main(["convert", xml2, "--scene", str(scene), "--set", "blackboard.phase=go", "-o", str(out)]) == 0
    task = load_task(str(out))
    assert (task.name, task.description, task.blackboard) == ("demo", "waits", {"phase": "go"})
    assert task.scene == {"fixtures": [{"name": "floor", "urdf": "plane.urdf"}]}
    assert task.tree.type == "Wait" and task.tree.params["duration_s"] == 0.25
    # without --scene: the tree only, and the comment says how to get a runnable file
    assert main(["convert", xml2, "-o", str(tmp_path / "tree.yaml")]) == 2  # ${wait_s} needs the parameters
    capsys.readouterr()
    assert main(["convert", str(xml)]) == 0
    text = capsys.readouterr().out
    assert "add --scene TASK.yaml" in text.splitlines()[0] and "scene:" not in text


def test_convert_rebases_urdf_paths_next_to_the_scene_file(tmp_path):
    """A URDF found next to the --scene file still resolves from the output file's folder."""
    import shutil

    import pybullet_data

    from py_trees_manipulation.cli import main

    src = tmp_path / "tasks"
    (src / "assets").mkdir(parents=True)
    shutil.copy(os.path.join(pybullet_data.getDataPath(), "cube_small.urdf"), src / "assets" / "my_cube.urdf")
    (src / "task.yaml").write_text(
        "name: cube\nscene:\n  fixtures: [{name: floor, urdf: plane.urdf}]\n"
        "  objects: [{name: cube, urdf: assets/my_cube.urdf, pose: {position: [0.5, 0, 0.1]}}]\ntree: {Success: {}}\n")
    xml = _xml(tmp_path, '<root BTCPP_format="4"><BehaviorTree ID="T"><AlwaysSuccess/></BehaviorTree></root>')
    out = tmp_path / "out" / "cube.yaml"
    assert main(["convert", xml, "--scene", str(src / "task.yaml"), "-o", str(out)]) == 0
    task = load_task(str(out))
    assert task.scene["objects"][0]["urdf"] == os.path.join("..", "tasks", "assets", "my_cube.urdf")
    assert task.scene["fixtures"][0]["urdf"] == "plane.urdf"  # pybullet_data: unchanged
    text = btxml.task_to_yaml(btxml.load_task_from_xml(xml, str(src / "task.yaml")), scene_file=str(src / "task.yaml"))
    assert f"urdf: {src / 'assets' / 'my_cube.urdf'}" in text  # stdout: absolute


def test_cli_convert_refuses_missing_files_and_scene_on_yaml(tmp_path, capsys):
    from py_trees_manipulation.cli import main

    assert main(["convert", str(tmp_path / "nope.xml")]) == 2
    assert capsys.readouterr().err == f"ptm: {tmp_path / 'nope.xml'}: no such file\n"
    assert main(["convert", PICK_AND_LIFT, "--scene", PICK_AND_LIFT]) == 2
    assert "--scene and --main-tree are for XML -> YAML" in capsys.readouterr().err


def test_named_includes_export_as_subtrees_with_port_remapping(tmp_path):
    """Includes are not inlined: one <BehaviorTree> per distinct body, whole-value parameters as ports,
    the rest written out; BT.CPP's parser takes it and the import gives the same tree back."""
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "approach.yaml").write_text(textwrap.dedent("""
        parameters: {pose_key: null, height_m: 0.1, effort: 30, out: approach_result}
        tree:
          Sequence:
            name: approach
            children:
              - MoveToPose: {name: above, target: "{${pose_key}}", world_offset: [0, 0, "${height_m}"]}
              - GripperCommand: {name: close, position: 0.0, max_effort: "${effort}", result_key: "${out}"}
              - include: inner.yaml
                name: inner
                with: {k: "${pose_key}"}
    """))
    (sub / "inner.yaml").write_text(textwrap.dedent("""
        parameters: {k: null}
        tree:
          MoveCartesian: {name: touch, target: "{${k}}", speed_mps: 0.05, feedback_key: touch_fb}
    """))
    task_path = tmp_path / "task.yaml"
    task_path.write_text(textwrap.dedent("""
        blackboard: {home: [0.3, 0, 0.5]}
        tree:
          Sequence:
            children:
              - GetObjectPose: {name: locate, object: mug, output_key: mug_pose}
              - include: sub/approach.yaml
                name: first
                with: {pose_key: mug_pose, effort: 40}
              - include: sub/approach.yaml
                name: second
                with: {pose_key: home, effort: 20, out: r2}
              - include: sub/approach.yaml
                name: third
                with: {pose_key: home, height_m: 0.2}
              - include: sub/inner.yaml
                with: {k: mug_pose}
    """))
    task = load_task(str(task_path))
    xml = btxml.export_xml(task)
    assert '<SubTree ID="approach" name="first" effort="40.0" out="{approach_result}" pose_key="{mug_pose}"/>' in xml
    assert '<SubTree ID="approach" name="second" effort="20.0" out="{r2}" pose_key="{home}"/>' in xml
    assert '<SubTree ID="approach_2" name="third" effort="30.0" out="{approach_result}" pose_key="{home}"/>' in xml
    # height_m is written out ([0, 0, "${height_m}"] is not a whole value): another body
    assert xml.count('<BehaviorTree ID="approach">') == 1 and xml.count('<BehaviorTree ID="approach_2">') == 1
    assert xml.count('<SubTree ID="inner" name="inner" k="{pose_key}"/>') == 2  # a port passed on to the nested one
    assert 'feedback_key="{@touch_fb}"' in xml  # a key the included file names itself: not scoped
    assert 'max_effort="{effort}"' in xml and 'target="{pose_key}"' in xml
    assert '<MoveCartesian name="touch"' in xml.split('<BehaviorTree ID="task">')[1].split("</BehaviorTree>")[0]
    pytest.importorskip("behaviortreepy")
    assert btxml.btcpp_check(xml).root_node() is not None
    out = tmp_path / "task.xml"
    out.write_text(xml)
    back = btxml.load_task_from_xml(str(out), str(task_path))
    assert btxml.tree_differences(task.tree, back.tree) == []
    flat = btxml.export_xml(task, subtrees=False)
    assert "<SubTree" not in flat and flat.count("<BehaviorTree ") == 1
