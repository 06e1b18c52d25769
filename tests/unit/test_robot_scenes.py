"""A scene's ``model:``: stock names, description files relative to the task file, and the errors a
task file gets for them (FILE:LINE:COL in the task and in the description)."""

from __future__ import annotations

import os

import pytest

from py_trees_manipulation.robots.loader import MODELS_DIR
from py_trees_manipulation.robots.urdf import pybullet_data_path
from py_trees_manipulation.scene.spec import SceneError, parse_scene
from py_trees_manipulation.located.errors import TreeLoadError
from py_trees_manipulation.trees.loader import load_task

TASK = """\
name: t
scene:
  robots:
    - name: arm
      model: {model}
      initial_configuration: {conf}
  objects:
    - {{name: box, primitive: {{shape: box, size: [0.05, 0.05, 0.05]}}, pose: {{position: [0.5, 0, 0.03]}}, may_move: true}}
tree:
  MoveJoints: {{configuration: ready}}
"""


def _panda_copy(folder, **replace):
    text = open(os.path.join(MODELS_DIR, "franka_panda.yaml")).read()
    text = text.replace("package://pybullet_data/franka_panda/panda.urdf",
                        os.path.join(pybullet_data_path(), "franka_panda", "panda.urdf"))
    for old, new in replace.items():
        text = text.replace(old, new)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "my_robot.yaml")
    with open(path, "w") as f:
        f.write(text.replace("name: franka_panda\n", ""))
    return path


def test_model_is_a_stock_name_or_a_file_relative_to_the_task(tmp_path):
    spec = parse_scene({"robots": [{"name": "k", "model": "kuka_iiwa_wsg50"}]})
    r = spec.robots[0]
    assert r.description.name == "kuka_iiwa_wsg50" and r.initial_gap_m == pytest.approx(0.104)  # fully open
    _panda_copy(str(tmp_path / "robots"))
    task = tmp_path / "task.yaml"
    task.write_text(TASK.format(model="robots/my_robot.yaml", conf="home"))
    t = load_task(str(task))
    spec = parse_scene(t.scene, base_dir=str(tmp_path))
    assert spec.robots[0].description.name == "my_robot" and spec.robots[0].model == "robots/my_robot.yaml"


def test_unknown_model_in_a_task_names_the_line_the_list_and_a_did_you_mean(tmp_path):
    task = tmp_path / "task.yaml"
    task.write_text(TASK.format(model="kuka_iwa_wsg50", conf="ready"))
    with pytest.raises(TreeLoadError) as e:
        load_task(str(task))
    (p,) = e.value.problems
    assert (p.loc.line, p.loc.col) == (5, 7)          # the key, as every scene error
    assert p.message == ("scene: unknown robot model 'kuka_iwa_wsg50'; did you mean 'kuka_iiwa_wsg50'? stock models: "
                         "franka_panda, kuka_iiwa_wsg50, ufactory_xarm6; or give the path of a robot description file "
                         "(.yaml)")


def test_an_invalid_description_reports_its_own_lines_through_the_task(tmp_path):
    desc = _panda_copy(str(tmp_path), **{"link: panda_grasptarget": "link: panda_grasptargt"})
    task = tmp_path / "task.yaml"
    task.write_text(TASK.format(model="my_robot.yaml", conf="ready"))
    with pytest.raises(TreeLoadError) as e:
        load_task(str(task))
    first, second = e.value.problems
    assert (first.loc.file, first.loc.line) == (str(task), 5)
    assert first.message == "scene: the robot description 'my_robot.yaml' is invalid (1 problem, below)"
    line = next(i for i, t in enumerate(open(desc).read().splitlines(), 1) if "panda_grasptargt" in t)
    assert (second.loc.file, second.loc.line) == (desc, line)
    assert "no link 'panda_grasptargt'" in second.message and "panda_grasptarget" in second.hint


def test_configurations_and_opening_come_from_the_model():
    e = None
    with pytest.raises(SceneError) as e:
        parse_scene({"robots": [{"name": "k", "model": "kuka_iiwa_wsg50", "initial_configuration": "redy"}]})
    assert e.value.path == ("robots", 0, "initial_configuration") and "did you mean 'ready'?" in e.value.message
    with pytest.raises(SceneError) as e:
        parse_scene({"robots": [{"name": "p", "model": "franka_panda", "initial_gap_m": 0.1}]})
    assert e.value.message == "initial_gap_m must be <= 0.08 m, got 0.1"
    spec = parse_scene({"robots": [{"name": "k", "model": "kuka_iiwa_wsg50", "initial_gap_m": 0.1}]})
    assert spec.robots[0].initial_gap_m == 0.1


def test_a_tree_naming_a_configuration_the_model_lacks_is_refused_at_its_line(tmp_path):
    desc = _panda_copy(str(tmp_path))
    with open(desc) as f:
        text = f.read()
    with open(desc, "w") as f:
        f.write("\n".join(t for t in text.splitlines() if not t.startswith("  forward:")) + "\n")
    task = tmp_path / "task.yaml"
    task.write_text(TASK.format(model="my_robot.yaml", conf="ready").replace("configuration: ready}",
                                                                               "configuration: forward}"))
    with pytest.raises(TreeLoadError) as e:
        load_task(str(task))
    (p,) = e.value.problems
    assert p.loc.line == 10 and "the scene has no named configuration 'forward'" in p.message


def test_grasp_fix_links_are_checked_against_the_scene_robot(tmp_path):
    scene = {"robots": [{"name": "k", "model": "kuka_iiwa_wsg50"}],
             "grasp_fix": {"arm": [{"arm_name": "k", "palm_link": "panda_hand"}]}}
    with pytest.raises(SceneError) as e:
        parse_scene(scene)
    assert e.value.path == ("grasp_fix", "arm", 0, "palm_link")
    assert "'panda_hand' is not a link of the model" in e.value.message and "(kuka_iiwa_wsg50)" in e.value.message
    scene["grasp_fix"] = {"arm": [{"arm_name": "k"}]}         # the description's links
    assert parse_scene(scene).extra["grasp_fix"].arms[0].palm_link is None
