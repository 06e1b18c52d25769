"""A movable object that starts inside the table is reported before anything moves (it used to be
thrown out as the scene settled: a box placed by its base height fell 34 cm)."""

import re

from py_trees_manipulation.sim import SimBackend

SCENE = {
    "robots": [{"name": "panda", "model": "franka_panda", "base_pose": {"position": [0, 0, 0.626]}}],
    "fixtures": [{"name": "table", "urdf": "table/table.urdf", "pose": {"position": [0.5, 0, 0]}}],
    "objects": [
        # 5 x 5 x 8 cm box at the mug's z (0.629): its centre 4 cm too low, 3.6 cm inside the table top
        {"name": "box", "primitive": {"shape": "box", "size": [0.05, 0.05, 0.08]}, "pose": {"position": [0.5, 0.0, 0.629]}},
        # resting on the table (centre at 0.625 + 0.04 + 1 mm): no report
        {"name": "ok", "primitive": {"shape": "box", "size": [0.05, 0.05, 0.08]}, "pose": {"position": [0.5, 0.2, 0.666]}},
    ],
}


def test_an_object_inside_the_table_is_a_preflight_failure_naming_the_height_that_clears_it():
    with SimBackend(SCENE, visual_shapes=False, reusable=True) as sim:
        text = sim.preflight_failure
        assert text is not None and "'ok'" not in text
        m = re.fullmatch(r"object 'box' starts (\d+\.\d) cm inside 'table': raise it to z = (\d\.\d{3}) m \(.*\)", text)
        assert m, text
        depth_cm, z = float(m.group(1)), float(m.group(2))
        assert abs(depth_cm - 3.6) <= 0.2                    # 0.629 - 0.04 = 0.589 bottom, top about 0.625
        assert abs(z - (0.629 + depth_cm / 100 + 0.001)) < 1e-3
        assert sim.reset(1) and sim.preflight_failure == text  # a sweep's reused simulator says it again


AIR = {
    "robots": SCENE["robots"],
    "fixtures": SCENE["fixtures"],
    "objects": [
        # the same box 1.2 m above the table top (its bottom at 1.825 m, the top about 0.625 m)
        {"name": "high", "primitive": {"shape": "box", "size": [0.05, 0.05, 0.08]}, "pose": {"position": [0.5, 0.0, 1.865]}},
        # 2 cm above it: settling is for this, it lands and is not reported
        {"name": "low", "primitive": {"shape": "box", "size": [0.05, 0.05, 0.08]}, "pose": {"position": [0.5, 0.2, 0.685]}},
        # beside the table, with no floor in the scene: nothing under it
        {"name": "beside", "primitive": {"shape": "sphere", "radius": 0.03}, "pose": {"position": [0.5, 2.0, 1.0]}},
    ],
}


def test_an_object_placed_in_the_air_is_a_preflight_failure_naming_the_height_that_puts_it_down():
    with SimBackend(AIR, visual_shapes=False, reusable=True) as sim:
        text = sim.preflight_failure
        assert text is not None and "'low'" not in text, text
        parts = text.split("; ")
        m = re.fullmatch(r"object 'high' fell (\d\.\d{3}) m while the scene settled \(settle_s 0\.2\): its lowest "
                         r"point starts (\d\.\d{3}) m above 'table': lower it to z = (\d\.\d{3}) m \(.*\)", parts[0])
        assert m, parts[0]
        fell, gap, z = (float(g) for g in m.groups())
        assert abs(fell - 0.5 * 9.81 * 0.2 ** 2) < 0.01        # free fall for the 0.2 s of settling: 0.196 m
        assert abs(gap - 1.2) < 0.01
        assert abs(z - (1.865 - gap + 0.001)) < 2e-3            # about 0.666 m: the 'ok' box's height above
        assert parts[1].startswith("object 'beside' fell ") and parts[1].endswith(
            "there is nothing under it: put it on a fixture (a table) or another object"), parts[1]
        assert sim.reset(1) and sim.preflight_failure == text   # a sweep's reused simulator says it again
