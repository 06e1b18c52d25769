"""Validation of the ``scene:`` section: values parsed right, and every error names its path and a fix."""


import numpy as np
import pytest

from py_trees_manipulation.scene.spec import (SCENE_KEYS, SceneError, accepted_keys, format_path, parse_scene,
                                             register_section, scene_keys_doc)


def base_scene(**over):
    scene = {
        "seed": 3,
        "robots": [{"name": "panda", "model": "franka_panda", "base_pose": {"position": [0, 0, 0.626]}}],
        "fixtures": [{"name": "table", "urdf": "table/table.urdf", "pose": {"position": [0.5, 0, 0]}}],
        "objects": [
            {"name": "mug", "urdf": "objects/mug.urdf", "scale": 0.8, "mass_kg": 0.2,
             "pose": {"position": [0.5, 0, 0.63], "rpy_deg": [0, 0, 90]},
             "pose_noise": {"position_m": 0.005, "yaw_deg": 5}},
            {"name": "box", "primitive": {"shape": "box", "size": [0.05, 0.04, 0.03]},
             "contact_stiffness": 1.0e5, "contact_damping": 100, "color": [0.8, 0.2, 0.2, 1.0],
             "pose": {"position": [0.4, 0.2, 0.65]}},
        ],
        "task": {"target_object": "mug", "place_position": [0.5, 0.2, 0.63]},
    }
    scene.update(over)
    return scene


def error_of(scene, **kw):
    with pytest.raises(SceneError) as e:
        parse_scene(scene, **kw)
    return e.value


def test_valid_scene_parses_values_and_units():
    spec = parse_scene(base_scene())
    assert spec.seed == 3 and spec.physics_hz == 1000.0 and spec.gravity == (0.0, 0.0, -9.81)
    r = spec.robots[0]
    assert r.initial_configuration == "ready" and r.initial_gap_m == pytest.approx(0.08)
    np.testing.assert_allclose(r.base_pose[:3, 3], [0, 0, 0.626])
    mug, box = spec.objects
    assert mug.mass_kg == 0.2 and mug.scale == 0.8 and mug.urdf_path.endswith("objects/mug.urdf")
    # rpy_deg [0, 0, 90]: the object's x axis points along world y.
    np.testing.assert_allclose(mug.pose[:3, 0], [0, 1, 0], atol=1e-12)
    assert mug.pose_noise.position_m == 0.005 and mug.pose_noise.yaw_deg == 5
    assert box.primitive.shape == "box" and box.primitive.size == (0.05, 0.04, 0.03)
    assert box.primitive.half_height() == pytest.approx(0.015)
    assert box.contact_stiffness == 1.0e5 and box.color == (0.8, 0.2, 0.2, 1.0)
    assert spec.task.target_object == "mug" and spec.task.place_position == (0.5, 0.2, 0.63)


def test_empty_scene_and_single_object_default_target():
    assert parse_scene({}).robots == ()
    spec = parse_scene({"objects": [{"name": "ball", "primitive": {"shape": "sphere", "radius": 0.03},
                                     "pose": [0.5, 0, 0.7]}]})
    assert spec.task.target_object == "ball"


def test_joint_angle_configuration():
    q = [0.0, -0.5, 0.0, -2.0, 0.0, 1.5, 0.7]
    spec = parse_scene({"robots": [{"name": "p", "initial_configuration": q}]})
    assert spec.robots[0].initial_configuration == tuple(q)


@pytest.mark.parametrize("mutate, path, words", [
    (lambda s: s["objects"][0].update(mass_kg=-0.2), ("objects", 0, "mass_kg"), ["mass_kg must be > 0", "-0.2"]),
    (lambda s: s["objects"][0].update(mass_kg="heavy"), ("objects", 0, "mass_kg"), ["must be a number"]),
    (lambda s: s["objects"][1].update(colour=[1, 0, 0, 1]), ("objects", 1, "colour"), ["unknown key", "'color'"]),
    (lambda s: s["robots"][0].update(modle="franka_panda"), ("robots", 0, "modle"), ["did you mean 'model'"]),
    (lambda s: s["robots"][0].update(model="franka_pandas"), ("robots", 0, "model"), ["'franka_panda'"]),
    (lambda s: s["robots"][0].update(initial_configuration="redy"), ("robots", 0, "initial_configuration"),
     ["unknown configuration 'redy'", "'ready'"]),
    (lambda s: s["robots"][0].update(initial_configuration=[0, 1, 2]), ("robots", 0, "initial_configuration"),
     ["list of 7 numbers"]),
    (lambda s: s["fixtures"][0].update(urdf="table/tabel.urdf"), ("fixtures", 0, "urdf"),
     ["not found", "'table/table.urdf'"]),
    (lambda s: s["objects"][0].pop("pose"), ("objects", 0), ["missing required key 'pose'"]),
    (lambda s: s["objects"][1].update(name="mug"), ("objects", 1, "name"),
     ["duplicate name 'mug'", "scene.objects[0].name"]),
    (lambda s: s["objects"][1]["primitive"].update(shape="cube"), ("objects", 1, "primitive", "shape"),
     ["unknown shape 'cube'"]),
    (lambda s: s["objects"][1]["primitive"].update(radius=0.02), ("objects", 1, "primitive", "radius"),
     ["a box takes size"]),
    (lambda s: s["objects"][1]["primitive"].update(size=[0.05, 0, 0.03]), ("objects", 1, "primitive", "size", 1),
     ["must be > 0"]),
    # a size in millimetres (a new user's [50, 50, 80]: "starts 25400 mm inside fixture 'table'")
    (lambda s: s["objects"][1]["primitive"].update(size=[50, 40, 30]), ("objects", 1, "primitive", "size"),
     ["size [50, 40, 30] m is over 2 m across", "sizes are metres ([50, 40, 30] mm is size: [0.05, 0.04, 0.03])",
      "fixed: true"]),
    (lambda s: s["objects"][1].update(primitive={"shape": "cylinder", "radius": 30, "length": 0.1}),
     ("objects", 1, "primitive", "radius"), ["radius 30 m", "30 mm is radius: 0.03"]),
    (lambda s: s["objects"][1].pop("contact_damping"), ("objects", 1), ["add 'contact_damping'"]),
    (lambda s: s["objects"][1].update(color=[1, 0, 0, 2]), ("objects", 1, "color", 3), ["0 ... 1"]),
    (lambda s: s["objects"][0].update(primitive={"shape": "sphere", "radius": 0.1}), ("objects", 0),
     ["exactly one of 'urdf'"]),
    (lambda s: s["objects"][0]["pose"].update(rpy_degs=[0, 0, 0]), ("objects", 0, "pose", "rpy_degs"),
     ["did you mean 'rpy_deg'"]),
    (lambda s: s["objects"][0]["pose"].update(position=[0.5, 0]), ("objects", 0, "pose", "position"),
     ["list of 3 numbers"]),
    (lambda s: s["objects"][0]["pose_noise"].update(yaw_deg=-5), ("objects", 0, "pose_noise", "yaw_deg"),
     [">= 0"]),
    (lambda s: s["task"].update(target_object="mugg"), ("task", "target_object"),
     ["no object named 'mugg'", "did you mean 'mug'"]),
    (lambda s: s.update(physics_hz=5), ("physics_hz",), [">= 10"]),
    (lambda s: s.update(seed=-1), ("seed",), ["non-negative integer"]),
    (lambda s: s.update(gravty=[0, 0, -9.81]), ("gravty",), ["did you mean 'gravity'"]),
    (lambda s: s.update(objects={"name": "mug"}), ("objects",), ["must be a list"]),
    (lambda s: s["robots"].__setitem__(0, "panda"), ("robots", 0), ["must be a mapping"]),
])
def test_errors_carry_path_and_fix(mutate, path, words):
    scene = base_scene()
    mutate(scene)
    err = error_of(scene)
    assert err.path == path, str(err)
    for w in words:
        assert w in err.message, err.message
    assert str(err).startswith(format_path(path) + ": ")


def test_format_path():
    assert format_path(("objects", 0, "mass_kg")) == "scene.objects[0].mass_kg"
    assert format_path(()) == "scene"


def test_relative_urdf_resolved_against_base_dir(tmp_path):
    (tmp_path / "thing.urdf").write_text("<robot name='t'><link name='base'/></robot>")
    spec = parse_scene({"objects": [{"name": "t", "urdf": "thing.urdf", "pose": [0, 0, 0]}]}, base_dir=str(tmp_path))
    assert spec.objects[0].urdf_path == str(tmp_path / "thing.urdf")
    assert error_of({"objects": [{"name": "t", "urdf": "thing.urdf", "pose": [0, 0, 0]}]}).path == ("objects", 0, "urdf")


def test_keys_doc_lists_every_key():
    doc = scene_keys_doc()
    from py_trees_manipulation.scene.spec import _EXTRA_SECTIONS

    # every built-in key, plus one row per extra section registered by the families (doors, grasp_fix...)
    n_keys = sum(len(v) for v in SCENE_KEYS.values()) + len(_EXTRA_SECTIONS)
    assert doc.count("\n| `") == n_keys
    for key in ("mass_kg", "contact_stiffness", "pose_noise", "initial_configuration", "place_position"):
        assert f"`{key}`" in doc
    assert "**required**" in doc


def test_registered_section_is_accepted_and_parsed():
    def parse_doors(value, path):
        if not isinstance(value, list):
            raise SceneError(path, "doors must be a list")
        return len(value)

    register_section("test_doors", parse_doors, "doors for the test")
    try:
        assert "test_doors" in accepted_keys("scene")
        assert parse_scene({"test_doors": [1, 2]}).extra["test_doors"] == 2
        assert error_of({"test_doors": 3}).path == ("test_doors",)
        assert "doors for the test" in scene_keys_doc()
    finally:
        from py_trees_manipulation.scene import spec as scene_mod
        scene_mod._EXTRA_SECTIONS.pop("test_doors")


# ---- declared grasps (scene.objects[].grasps: HPP handles in the object frame) ----------------------
def _with_grasps(*grasps, obj=1):
    scene = base_scene()
    scene["objects"][obj]["grasps"] = list(grasps)
    return scene


def test_declared_grasps_become_handles_with_their_symmetry():
    from py_trees_manipulation.geometry.grasps import grasps_for_object

    spec = parse_scene(_with_grasps(
        {"name": "top", "pose": {"position": [0, 0, 0.01], "rpy_deg": [180, 0, 0]},
         "symmetry": {"axis": "z", "order": 4}, "approach_m": 0.08, "width_m": 0.04},
        {"name": "rim", "pose": {"position": [0.02, 0, 0], "rpy_deg": [0, -90, 0]},
         "symmetry": {"axis": [0, 0, 1], "order": "continuous", "samples": 6}}))
    box = spec.objects[1]
    assert [h.name for h in box.grasps] == ["box/top", "box/rim"]
    gs = grasps_for_object(box)   # declared handles replace the defaults
    assert [g.name for g in gs[:4]] == ["box/top/0", "box/top/90", "box/top/180", "box/top/270"]
    assert len(gs) == 4 + 6 and gs[-1].name == "box/rim/300"
    assert gs[0].approach_m == 0.08 and gs[0].width_m == 0.04 and np.isnan(gs[4].width_m)
    # the 90-degree grasp is the first one turned a quarter about the object's z: fingers along y -> -x
    np.testing.assert_allclose(gs[1].pose[:3, 1], [1, 0, 0], atol=1e-9)
    np.testing.assert_allclose(gs[0].pose[:3, 1], [0, -1, 0], atol=1e-9)
    np.testing.assert_allclose(gs[1].pose[:3, 3], [0, 0, 0.01], atol=1e-12)
    # the rim's TCP goes round the axis with the symmetry: 2 cm from it at 60-degree steps
    np.testing.assert_allclose(gs[5].pose[:3, 3], [0.02 * np.cos(np.pi / 3), 0.02 * np.sin(np.pi / 3), 0], atol=1e-12)


@pytest.mark.parametrize("grasp, path, words", [
    ({"name": "top", "pose": {"position": [0, 0, 0.01], "orientation": [0, 0, 0, 0]}},
     ("objects", 1, "grasps", 0, "pose"), ["grasp 'top' of object 'box'", "quaternion", "non-zero norm"]),
    ({"name": "top", "pose": [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 2, 0.01], [0, 0, 0, 1]]},
     ("objects", 1, "grasps", 0, "pose"), ["grasp 'top' of object 'box'", "not a rotation", "determinant 2"]),
    ({"name": "top", "pose": [[1, 0, 0, 0], [0, -1, 0, 0], [0, 0, 1, 0.01], [0, 0, 0, 1]]},
     ("objects", 1, "grasps", 0, "pose"), ["grasp 'top' of object 'box'", "not a rotation", "determinant -1"]),
    ({"name": "top", "pose": {"position": [0, 0, 30], "rpy_deg": [180, 0, 0]}},
     ("objects", 1, "grasps", 0, "pose"), ["grasp 'top' of object 'box'", "30.000 m from the object's origin",
                                           "the box reaches 0.035 m", "object's own frame, in metres"]),
    ({"name": "top", "pose": {"position": [0, 0, 0.01], "rpy_degs": [180, 0, 0]}},
     ("objects", 1, "grasps", 0, "pose", "rpy_degs"), ["grasp 'top' of object 'box'", "did you mean 'rpy_deg'"]),
    ({"name": "top"}, ("objects", 1, "grasps", 0), ["grasp 'top' of object 'box'", "missing required key 'pose'"]),
    ({"name": "top", "pose": [0, 0, 0], "symetry": {"order": 2}}, ("objects", 1, "grasps", 0, "symetry"),
     ["grasp 'top'", "did you mean 'symmetry'"]),
    ({"name": "top", "pose": [0, 0, 0], "symmetry": {"order": "continous"}},
     ("objects", 1, "grasps", 0, "symmetry", "order"), ["grasp 'top'", "did you mean 'continuous'"]),
    ({"name": "top", "pose": [0, 0, 0], "symmetry": {"order": 0}},
     ("objects", 1, "grasps", 0, "symmetry", "order"), ["integer 1 ... 360 or 'continuous'"]),
    ({"name": "top", "pose": [0, 0, 0], "symmetry": {"axis": "w"}},
     ("objects", 1, "grasps", 0, "symmetry", "axis"), ["unknown symmetry axis 'w'"]),
    ({"name": "top", "pose": [0, 0, 0], "symmetry": {"axis": [0, 0, 0]}},
     ("objects", 1, "grasps", 0, "symmetry", "axis"), ["axis is zero"]),
    ({"name": "top", "pose": [0, 0, 0], "symmetry": {"order": 4, "samples": 8}},
     ("objects", 1, "grasps", 0, "symmetry", "samples"), ["samples applies to order: continuous"]),
    ({"name": "top", "pose": [0, 0, 0], "width_m": 0}, ("objects", 1, "grasps", 0, "width_m"), ["> 0"]),
    ({"name": "top", "pose": [0, 0, 0], "approach_m": 2}, ("objects", 1, "grasps", 0, "approach_m"), ["<= 0.5"]),
    ({"name": "a/b", "pose": [0, 0, 0]}, ("objects", 1, "grasps", 0, "name"), ["no '/'"]),
])
def test_a_bad_declared_grasp_is_an_error_naming_it(grasp, path, words):
    err = error_of(_with_grasps(grasp))
    assert err.path == path, str(err)
    for w in words:
        assert w in err.message, err.message


def test_grasp_list_errors():
    err = error_of(_with_grasps({"name": "top", "pose": [0, 0, 0]}, {"name": "top", "pose": [0, 0, 0.01]}))
    assert err.path == ("objects", 1, "grasps", 1, "name") and "duplicate grasp name 'top'" in err.message
    err = error_of(_with_grasps())
    assert err.path == ("objects", 1, "grasps") and "grasps is empty" in err.message
    # a URDF object's grasp may not be 1 m (times its scale) from its origin: a world pose or millimetres
    err = error_of(_with_grasps({"name": "rim", "pose": {"position": [0.5, 0, 0.9]}}, obj=0))
    assert err.path == ("objects", 0, "grasps", 0, "pose") and "grasp 'rim' of object 'mug'" in err.message


def test_a_bad_grasp_in_a_task_file_is_reported_at_its_line(tmp_path):
    from py_trees_manipulation.located.errors import TreeLoadError
    from py_trees_manipulation.trees.loader import load_task

    task = tmp_path / "t.yaml"
    task.write_text(
        "scene:\n"
        "  objects:\n"
        "    - name: widget\n"
        "      primitive: {shape: box, size: [0.05, 0.05, 0.05]}\n"
        "      pose: {position: [0.5, 0, 0.65]}\n"
        "      grasps:\n"
        "        - name: top\n"
        "          pose: {position: [0, 0, 0.01], orientation: [0, 0, 0, 0]}\n"
        "tree: {Success: {}}\n")
    with pytest.raises(TreeLoadError) as e:
        load_task(str(task))
    p = e.value.problems[0]
    assert (p.loc.line, p.loc.col) == (8, 11), str(p)   # the pose key
    assert "grasp 'top' of object 'widget'" in p.message and "quaternion" in p.message
