"""A grip that cannot hold the object by friction is known from the file (ptm validate): each pad must
press m g / (2 mu), mu the object's lateral friction times the finger pads' (as Bullet combines them)."""

import math

import pytest

from py_trees_manipulation.scene.spec import grip_problem, parse_scene


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


@pytest.mark.parametrize("kw", [{"grasp_fix": True}, {"mu": None, "urdf": True}])
def test_a_weld_or_an_unknown_friction_is_not_refused(kw):
    """GraspFix welds what the fingers grip; a URDF object's own friction is not read from the file."""
    assert grip_problem(scene(**kw), "box", None, 40.0) is None



def tactile_scene(mass, limit=20.0):
    """The slip_servo can's friction (0.3 x the Panda's 1.5 pads: mu 0.45), a tactile force limit."""
    return parse_scene({
        "robots": [{"name": "arm", "model": "franka_panda", "base_pose": {"position": [0, 0, 0.626]}}],
        "objects": [{"name": "can", "mass_kg": mass, "lateral_friction": 0.3, "pose": {"position": [0.5, 0, 0.686]},
                     "primitive": {"shape": "cylinder", "radius": 0.03, "length": 0.12}}],
        "tactile": {"controller": {"fingertip_force_limit": limit}}})


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
