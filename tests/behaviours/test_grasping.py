"""ChooseGrasp on the simulator's planning service: what it writes, that sim time stands still while
it runs, and how it fails (bad names, objects without grasps, nothing feasible, no collision world).
The picks it enables are run end to end in tests/scenarios/*.scenario.yaml."""

import math

import numpy as np
import py_trees
import pytest
from py_trees.common import Status

from py_trees_manipulation.behaviors.base import BehaviourSetupError
from py_trees_manipulation.behaviors.grasping import ChooseGrasp
from py_trees_manipulation.geometry.poses import pose_from_xyz_rpy
from py_trees_manipulation.testing import FakeBackend, tick_until_done

SCENE = {
    "robots": [{"name": "panda", "model": "franka_panda", "base_pose": {"position": [0, 0, 0.626]}}],
    "fixtures": [{"name": "table", "urdf": "table/table.urdf", "pose": {"position": [0.5, 0, 0]}}],
    "objects": [
        {"name": "mug", "urdf": "objects/mug.urdf", "scale": 0.8, "pose": {"position": [0.5, 0.0, 0.629], "rpy_deg": [0, 0, 90]}},
        {"name": "duck", "urdf": "duck_vhacd.urdf", "pose": {"position": [0.3, 0.35, 0.65]}},
        {"name": "block", "primitive": {"shape": "box", "size": [0.04, 0.04, 0.04]}, "pose": {"position": [0.45, -0.25, 0.646]},
         "grasps": [{"name": "pinch", "pose": {"position": [0, 0, 0.005], "rpy_deg": [180, 0, 0]},
                     "symmetry": {"axis": "z", "order": 2}, "width_m": 0.04, "approach_m": 0.08}]},
    ],
}


@pytest.fixture(scope="module")
def backend():
    from py_trees_manipulation.sim.backend import SimBackend

    b = SimBackend(SCENE)
    yield b
    b.close()


@pytest.fixture(autouse=True)
def clean_blackboard():
    py_trees.blackboard.Blackboard.clear()
    yield
    py_trees.blackboard.Blackboard.clear()


def bb(key):
    return py_trees.blackboard.Blackboard.get(key)


def test_a_grasp_of_the_turned_mug_is_chosen_in_one_tick_and_written(backend):
    T = backend.world.object_pose("mug")
    py_trees.blackboard.Blackboard.set("/mug_pose", T)
    node = ChooseGrasp(object="mug", object_pose="{mug_pose}", grasp_name_key="grasp_name", choice_key="choice")
    t0, events0 = backend.now(), len(backend.events)
    status, ticks = tick_until_done(node, backend)
    assert status == Status.SUCCESS and ticks == 2, node.feedback_message   # asked, answered the next tick
    assert backend.now() == pytest.approx(t0 + 1 / 30, abs=1e-3)   # whole 1 ms physics steps
    G, P, O = bb("/grasp_pose"), bb("/pregrasp_pose"), bb("/object_grasp")
    np.testing.assert_allclose(G, T @ O, atol=1e-12)   # the grasp is the mug's own, at the mug's pose
    np.testing.assert_allclose(P[:3, 3], G[:3, 3] - 0.10 * G[:3, 2], atol=1e-12)   # 10 cm back along the approach
    np.testing.assert_allclose(P[:3, :3], G[:3, :3], atol=1e-12)
    # from above: the mug settles level to 0.01 deg (its handle tilts it 0.006 deg on the table top's
    # compliance, scene/contact.py; 0.0001 deg on a rigid table)
    np.testing.assert_allclose(G[:3, 2], [0, 0, -1], atol=3e-4)
    assert bb("/grasp_width") == pytest.approx(0.0677, abs=1e-4)
    name = bb("/grasp_name")
    assert name.startswith("mug/top/") and bb("/metrics/chosen_grasp") == name
    # the mug is turned 90 degrees: its handle points along world -x; the fingers stay 45 degrees off it
    handle = T[:3, 1]
    assert math.degrees(math.acos(abs(float(G[:3, 1] @ handle)))) >= 45 - 1e-6
    assert node.feedback_message.startswith(f"{name}: joint distance ") and "14 candidates: 14 feasible" in \
        node.feedback_message
    assert bb("/choice").chosen.grasp.name == name
    ev = [e for e in backend.events[events0:] if e["source"] == "grasp/panda"]
    assert len(ev) == 1 and ev[0]["grasp_choice"]["chosen"] == name and len(ev[0]["grasp_choice"]["candidates"]) == 14


def test_declared_grasps_are_the_candidates(backend):
    py_trees.blackboard.Blackboard.set("/block_pose", backend.world.object_pose("block"))
    node = ChooseGrasp(object="block", object_pose="{block_pose}", grasp_name_key="grasp_name")
    status, _ = tick_until_done(node, backend)
    assert status == Status.SUCCESS, node.feedback_message
    assert bb("/grasp_name") in ("block/pinch/0", "block/pinch/180")
    assert "2 candidates: 2 feasible" in node.feedback_message
    G = bb("/grasp_pose")
    np.testing.assert_allclose(bb("/pregrasp_pose")[:3, 3] - G[:3, 3], -0.08 * G[:3, 2], atol=1e-12)


def test_with_the_viewers_short_waits_the_clock_is_held_until_the_answer(backend):
    """With clock_hold_wait_s set (the viewer's mode), ``advance`` returns without stepping while the
    query runs (the tree ticks at a frozen sim time), then steps once it is answered: the behaviour
    succeeds at the same sim time as without the viewer."""
    import time

    py_trees.blackboard.Blackboard.set("/mug_pose", backend.world.object_pose("mug"))
    node = ChooseGrasp(object="mug", object_pose="{mug_pose}")
    tree = py_trees.trees.BehaviourTree(root=node)
    tree.setup(backend=backend)
    backend.clock_hold_wait_s = 0.0
    t0, deadline, statuses = backend.now(), time.monotonic() + 60, []
    try:
        while time.monotonic() < deadline:
            tree.tick()
            statuses.append(node.status)
            if node.status != Status.RUNNING:
                break
            backend.advance(1 / 30)
            time.sleep(0.005)
    finally:
        backend.clock_hold_wait_s = None
    assert statuses[0] == Status.RUNNING and statuses[-1] == Status.SUCCESS, node.feedback_message
    assert backend.now() == pytest.approx(t0 + 1 / 30, abs=1e-3)   # whole 1 ms physics steps and not backend.clock_holders


@pytest.mark.parametrize("params, words", [
    ({"object": "mug", "object_pose": {"position": [1.3, 0.0, 0.629]}},
     ["no feasible grasp of mug: 14 candidates: 14 out of reach (best 0."]),
    ({"object": "mug", "object_pose": "{mug_pose}", "grasps": ["mug/side"]},
     ["object 'mug' has no grasp or handle 'mug/side'", "(its handles: mug/top)"]),
    ({"object": "duck", "object_pose": "{mug_pose}"},
     ["object 'duck' (URDF 'duck_vhacd.urdf') has no known grasps: declare them under scene.objects[1].grasps"]),
    ({"object": "cup", "object_pose": "{mug_pose}"}, ["no object named 'cup' in the scene; it has mug, duck, block"]),
    ({"object": "mug", "object_pose": "{nothing}"}, ["blackboard key 'nothing' (parameter 'object_pose') has no value"]),
    ({"object": "mug", "object_pose": "{mug_pose}", "place_pose": {"position": [1.15, 0, 0.629]}},
     ["no feasible grasp of mug: 14 candidates: 14 cannot put it down at the place pose: above the place pose: "
      "out of reach"]),
    # off the table's end (x 1.25): refused before any grasp is tried, with the nearest spot on the table
    ({"object": "mug", "object_pose": "{mug_pose}", "place_pose": {"position": [1.5, 0, 0.629]}},
     ["the place [1.500, 0.000, 0.629] of 'mug' has nothing under it to stand on: the object would be let go in "
      "the air; the nearest free spot on 'table' is [1.2"]),
])
def test_failures_say_why(backend, params, words):
    py_trees.blackboard.Blackboard.set("/mug_pose", backend.world.object_pose("mug"))
    node = ChooseGrasp(**params)
    status, _ = tick_until_done(node, backend)
    assert status == Status.FAILURE
    for w in words:
        assert w in node.feedback_message, node.feedback_message
    with pytest.raises(KeyError):
        bb("/grasp_pose")


def test_a_backend_without_a_collision_world_is_refused_at_setup():
    node = ChooseGrasp(object="mug", object_pose=np.eye(4).tolist())
    tree = py_trees.trees.BehaviourTree(root=node)
    with pytest.raises(BehaviourSetupError, match="needs the backend's collision world: the simulator, or the hardware "
                                                   "backend with the task file's scene"):
        tree.setup(backend=FakeBackend())


def test_load_time_checks_name_the_grasp_and_the_object(tmp_path):
    from py_trees_manipulation.located.errors import TreeLoadError
    from py_trees_manipulation.trees.loader import load_task

    import yaml

    task = tmp_path / "t.yaml"
    doc = {"scene": SCENE, "tree": {"Sequence": {"children": [
        {"GetObjectPose": {"object": "mug", "output_key": "pose"}},
        {"ChooseGrasp": {"object": "mug", "object_pose": "{pose}", "grasps": ["mug/top", "mug/handle"]}},
        {"ChooseGrasp": {"object": "duck", "object_pose": "{pose}"}},
        {"MoveToPose": {"target": "{pregrasp_pose}"}},
    ]}}}
    task.write_text(yaml.safe_dump(doc, sort_keys=False))
    with pytest.raises(TreeLoadError) as e:
        load_task(str(task))
    msgs = [p.message for p in e.value.problems]
    assert any("ChooseGrasp.grasps: object 'mug' has no grasp or handle 'mug/handle'" in m for m in msgs), msgs
    assert any("ChooseGrasp.object: object 'duck' (URDF 'duck_vhacd.urdf') has no known grasps" in m for m in msgs), msgs
    assert len(msgs) == 2   # the pregrasp key ChooseGrasp writes is known to the data-flow check


def test_the_grasp_choice_runs_at_the_backends_wait_not_inside_the_tick(backend):
    """``ChooseGrasp.initialise`` only asks: the query starts when ``advance`` first waits for it (on
    the backend's thread when the wait is unbounded), so the tick never shares the interpreter with
    the planning worker; the answer comes one tick later, as before."""
    from py_trees_manipulation.sim.planning import _Query

    from py_trees_manipulation.behaviors import grasping

    py_trees.blackboard.Blackboard.set("/mug_pose", backend.world.object_pose("mug"))
    node = ChooseGrasp(object="mug", object_pose="{mug_pose}")
    tree = py_trees.trees.BehaviourTree(root=node)
    tree.setup(backend=backend)
    built = []
    real = grasping.object_grasp_set
    grasping.object_grasp_set = lambda *a, **k: built.append(a) or real(*a, **k)
    try:
        tree.tick()
    finally:
        grasping.object_grasp_set = real
    assert node.status == Status.RUNNING
    assert built == []  # a literal object's grasp set was built at setup, not in the tick
    (query,) = [q for q in backend.clock_holders if isinstance(q, _Query)]
    assert query.future is None  # asked, not started
    backend.advance(1 / 30)
    assert query.future is not None and query.future.done() and not backend.clock_holders
    tree.tick()
    assert node.status == Status.SUCCESS, node.feedback_message
