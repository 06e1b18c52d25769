"""A grip that cannot hold the object by friction is known from the file (ptm validate): each pad must
press m g / (2 mu), mu the object's lateral friction times the finger pads' (as Bullet combines them)."""

import math
import re

import pytest

from py_trees_manipulation.scene.spec import crush_problem, grip_problem, parse_scene


def scene(mass=2.0, mu=0.1, model="franka_panda", grasp_fix=False, urdf=False):
    obj = {"name": "box", "mass_kg": mass, "pose": {"position": [0.5, 0, 0.651]}}
    if urdf:
        obj.update(urdf="objects/mug.urdf")
    else:
        obj.update(primitive={"shape": "box", "size": [0.05, 0.05, 0.05]})
    if mu is not None:
        obj["lateral_friction"] = mu
    d = {"robots": [{"name": "arm", "model": model, "base_pose": {"position": [0, 0, 0.626]}}],
         "fixtures": [{"name": "table", "urdf": "table/table.urdf", "pose": {"position": [0.5, 0, 0]}}],
         "objects": [obj]}
    if grasp_fix:
        d["grasp_fix"] = {"arm": [{"arm_name": "arm"}]}
    return parse_scene(d)


def test_the_needed_pad_force_is_m_g_over_two_mu():
    # Panda fingers: friction 1.5, limit 140 N; 2 kg at mu 0.1: 2 * 9.81 / (2 * 0.15) = 65.4 N per pad
    text = grip_problem(scene(), "box", None, 40.0)
    assert text.startswith("a 40 N grip cannot hold 'box' (2.00 kg) by friction: each pad must press 65.4 N")
    assert f"grip with at least {math.ceil(65.4 * 1.3 - 0.5):.0f} N" in text     # 85 N, under the 140 N limit
    assert grip_problem(scene(), "box", None, 66.0) is None                     # 66 N holds it at rest
    assert grip_problem(scene(mu=1.0), "box", None, 40.0) is None               # 6.5 N per pad


def test_over_the_grippers_limit_no_grip_holds_it():
    text = grip_problem(scene(mass=3.0, model="kuka_iiwa_wsg50"), "box", None, 40.0)
    assert "no grip of this gripper holds it (its limit is 80 N)" in text


def test_a_grip_over_the_grippers_limit_is_judged_at_the_limit():
    """A new user's trial: the xArm (30 N limit) asked for 40 N passed validate on a 3.5 kg box that
    needs 38.2 N a pad and failed the lift (grip_margin 0.79): the actuator clamps the request, so the
    check uses the limit. 3.5 kg x 9.81 / (2 x 0.3 x 1.5) = 38.2 N per pad."""
    text = grip_problem(scene(mass=3.5, mu=0.3, model="ufactory_xarm6"), "box", None, 40.0)
    assert text is not None and text.startswith(
        "a 40 N grip (clamped to the gripper's 30 N limit) cannot hold 'box' (3.50 kg) by friction: "
        "each pad must press 38.2 N"), text
    assert "no grip of this gripper holds it (its limit is 30 N)" in text
    # the WSG 50 at 140 N asked: 80 N, under the 81.75 N that 2 kg at mu 0.08 x 1.5 needs
    text = grip_problem(scene(mass=2.0, mu=0.08, model="kuka_iiwa_wsg50"), "box", None, 140.0)
    assert text is not None and "clamped to the gripper's 80 N limit" in text and "must press 81.8 N" in text
    assert grip_problem(scene(mass=1.0, mu=0.3, model="ufactory_xarm6"), "box", None, 40.0) is None   # 10.9 N


def test_a_frictionless_object_is_refused_not_a_crash():
    """lateral_friction 0 (allowed: >= 0) ended validate and run in an OverflowError (m g / 0)."""
    text = grip_problem(scene(mu=0.0), "box", None, 40.0)
    assert text is not None and text.startswith("'box' is frictionless (lateral_friction 0 x the fingers' 1.5): "
                                                "no friction grip holds it"), text
    assert grip_problem(scene(mu=0.0, grasp_fix=True), "box", None, 40.0) is None   # a weld holds it


def test_a_weld_is_not_refused():
    """GraspFix welds what the fingers grip."""
    assert grip_problem(scene(grasp_fix=True), "box", None, 40.0) is None


def test_a_urdf_objects_friction_is_its_urdfs():
    """A URDF object without lateral_friction has the friction its URDF gives PyBullet (the mug's
    <contact><lateral_friction value="1.0"/>): a new user's 2 N grip of the 2 kg mug moved the arm and
    failed at the lift (grip_margin 0.61) where the check said nothing. 2 kg x 9.81 / (2 x 1.0 x 1.5)
    = 6.5 N per pad."""
    text = grip_problem(scene(mu=None, urdf=True), "box", None, 2.0)
    assert text is not None and "a 2 N grip cannot hold 'box' (2.00 kg)" in text, text
    assert "each pad must press 6.5 N" in text and "its lateral_friction 1 x the fingers' 1.5" in text
    assert grip_problem(scene(mu=None, urdf=True), "box", None, 40.0) is None



def tactile_scene(mass, limit=20.0, crush=None):
    """The slip_servo can's friction (0.3 x the Panda's 1.5 pads: mu 0.45), a tactile force limit."""
    can = {"name": "can", "mass_kg": mass, "lateral_friction": 0.3, "pose": {"position": [0.5, 0, 0.686]},
           "primitive": {"shape": "cylinder", "radius": 0.03, "length": 0.12}}
    if crush is not None:
        can["crush_force_n"] = crush
    return parse_scene({
        "robots": [{"name": "arm", "model": "franka_panda", "base_pose": {"position": [0, 0, 0.626]}}],
        "objects": [can], "tactile": {"controller": {"fingertip_force_limit": limit}}})


def test_a_tactile_limit_not_under_the_crush_force_is_refused():
    """A new user's trial: the fragile egg with crush_force_n 3 under the example's 4 N
    fingertip_force_limit passed validate --plan and was crushed in the run; 0.8 x 3 N = 2.4 N works."""
    text = crush_problem(tactile_scene(0.06, limit=4.0, crush=3.0), "can")
    assert text == ("the tactile fingertip_force_limit of 4 N is not under the crush_force_n of 'can' (3 N): "
                    "Grab's hold and the slip servo may press it with up to 4 N and crush it; set "
                    "scene.tactile.controller.fingertip_force_limit: 2.4 (0.8 x its crush force)")
    assert crush_problem(tactile_scene(0.06, limit=3.0, crush=3.0), "can") is not None   # at it: not under
    assert crush_problem(tactile_scene(0.06, limit=4.0, crush=5.0), "can") is None        # the example
    assert crush_problem(tactile_scene(0.06, limit=4.0), "can") is None                   # not fragile


def test_a_tactile_fingertip_force_limit_bounds_the_grip():
    """issue 33: the PR2 holds (SlipServo, Grab) never squeeze past the tactile controller's
    fingertip_force_limit, so the check takes it when no grip force is given: 1.9 kg at mu 0.45
    needs 1.9 * 9.81 / 0.9 = 20.7 N per pad, over a 20 N limit (the Panda's 70 N default would hold it)."""
    text = grip_problem(tactile_scene(1.9), "can")
    assert text.startswith("the tactile fingertip_force_limit of 20 N cannot hold 'can' (1.90 kg) by friction: "
                           "each pad must press 20.7 N")
    assert "raise it to at least 27 N" in text                                  # 1.3 x 20.7 N
    assert grip_problem(tactile_scene(1.9, limit=25.0), "can") is None           # a higher limit holds it at rest
    assert grip_problem(tactile_scene(1.8), "can") is None                       # 19.6 N per pad: held at rest
    assert grip_problem(tactile_scene(1.9), "can", None, 30.0) is None           # a given grip force is what it is


EXAMPLES = __import__("os").path.join(__import__("os").path.dirname(__file__), "..", "..", "examples")


def _load_error(overrides, text=None):
    import os

    from py_trees_manipulation.located import locyaml
    from py_trees_manipulation.located.errors import TreeLoadError
    from py_trees_manipulation.trees.loader import load_task, load_task_data

    path = os.path.join(EXAMPLES, "pick_and_lift.yaml")
    with pytest.raises(TreeLoadError) as e:
        if text is None:
            load_task(path, overrides)
        else:
            load_task_data(locyaml.loads(text, path), path, overrides)
    return str(e.value)


def test_the_refusal_names_the_included_files_parameter_that_sets_the_grip():
    """issue 33, D: in examples/pick_and_lift.yaml the grip is grasp_from_above.yaml's max_effort_n
    (ChooseGrasp's grip_force_n and the close's max_effort both take it): the fix names that key, where
    to give it (the include's line) and the value, not ChooseGrasp's own parameter."""
    text = _load_error(["scene.objects.0.mass_kg=2.0", "scene.objects.0.lateral_friction=0.1"])
    assert "grasp_from_above.yaml:31:11: ChooseGrasp: a 40 N grip cannot hold 'mug' (2.00 kg)" in text
    assert re.search(r"grip with at least 85 N \(1\.3 x, for the lift's acceleration; the gripper's limit is 140 N\): "
                     r"set the included \S*examples/subtrees/grasp_from_above\.yaml's parameter max_effort_n \(default "
                     r"40\): add with: \{max_effort_n: 85\} to the include at \S*examples/pick_and_lift\.yaml:34:18, "
                     r"raise the friction", text), text


def test_a_with_value_that_is_too_weak_is_named_where_it_is_given():
    import os

    with open(os.path.join(EXAMPLES, "pick_and_lift.yaml")) as f:
        source = f.read()
    given = source.replace('lift_m: "${lift_m}"}', 'lift_m: "${lift_m}", max_effort_n: 50}')
    assert given != source
    text = _load_error(["scene.objects.0.mass_kg=2.0", "scene.objects.0.lateral_friction=0.1"], given)
    assert "a 50 N grip cannot hold 'mug'" in text
    assert "grip with at least 85 N" in text and "set max_effort_n: 85 in the include's with: at " in text
    assert "pick_and_lift.yaml:36:" in text   # the with: line


def test_a_literal_grip_force_names_the_nodes_own_key():
    text = grip_problem(scene(), "box", None, 40.0,
                        set_force=__import__("py_trees_manipulation.behaviors.grasping",
                                             fromlist=["grip_force_key"]).grip_force_key({}, True))
    assert text.endswith("grip with at least 85 N (1.3 x, for the lift's acceleration; the gripper's limit is 140 N): "
                         "set grip_force_n: 85, raise the friction, or weld it with GraspFix")


def test_the_tactile_limit_names_its_scene_key():
    text = grip_problem(tactile_scene(1.9), "can")
    assert "raise it to at least 27 N (1.3 x, for the lift's acceleration; the gripper's limit is 140 N): set " \
           "scene.tactile.controller.fingertip_force_limit: 27" in text
