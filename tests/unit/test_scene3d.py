"""The simulator's 3D scene model (link frames, visuals) and its Foxglove messages."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("pybullet")

from py_trees_manipulation.geometry.poses import pq_from_pose  # noqa: E402
from py_trees_manipulation.sim import SimBackend  # noqa: E402

SCENE = {
    "robots": [{"name": "arm", "model": "franka_panda", "base_pose": {"position": [0, 0, 0.6]},
                "initial_configuration": "ready"}],
    "fixtures": [{"name": "table", "urdf": "table/table.urdf", "pose": {"position": [0.5, 0, 0]}}],
    "objects": [
        {"name": "block", "primitive": {"shape": "box", "size": [0.05, 0.07, 0.03]}, "mass_kg": 0.2,
         "color": [0.9, 0.1, 0.1, 1], "pose": {"position": [0.5, 0.1, 0.64], "rpy_deg": [0, 0, 35]}},
        {"name": "can", "primitive": {"shape": "cylinder", "radius": 0.03, "length": 0.12}, "mass_kg": 0.2,
         "pose": {"position": [0.45, -0.15, 0.69]}},
        {"name": "ball", "primitive": {"shape": "sphere", "radius": 0.025}, "fixed": True,
         "pose": {"position": [0.7, 0.2, 0.65]}},
    ],
}


@pytest.fixture(scope="module")
def backend():
    b = SimBackend(SCENE)
    yield b
    b.close()


def test_frames_are_the_link_frames_in_world(backend):
    model = backend.scene_model()
    frames = {f: (p, q) for f, p, q in model.frames()}
    # the robot's base frame is its base link (panda_link0) at the base pose, not its centre of mass
    np.testing.assert_allclose(frames["arm"][0], [0, 0, 0.6], atol=1e-6)
    assert {"arm/panda_link1", "arm/panda_hand", "arm/panda_grasptarget", "table", "block", "can", "ball"} <= set(frames)
    p, q = pq_from_pose(backend.arms["arm"].tcp_pose())
    np.testing.assert_allclose(frames["arm/panda_grasptarget"][0], p, atol=1e-6)
    for name in ("block", "can"):
        p, q = pq_from_pose(backend.world.object_pose(name))
        np.testing.assert_allclose(frames[name][0], p, atol=1e-6)
        assert abs(abs(float(np.dot(frames[name][1], q))) - 1.0) < 1e-6
    # yaw 35 deg of the block: w = cos(17.5 deg)
    assert abs(frames["block"][1][0]) == pytest.approx(math.cos(math.radians(17.5)), abs=1e-3)


def test_visuals_have_the_scene_sizes(backend):
    visuals = {v.frame_id: v for v in backend.scene_model().visuals() if v.entity in ("block", "can", "ball")}
    block, can, ball = visuals["block"], visuals["can"], visuals["ball"]
    assert block.shape == "box" and block.size == pytest.approx([0.05, 0.07, 0.03])
    assert block.rgba == pytest.approx((0.9, 0.1, 0.1, 1.0))
    assert can.shape == "cylinder" and can.size == pytest.approx([0.06, 0.06, 0.12])
    assert ball.shape == "sphere" and ball.size == pytest.approx([0.05, 0.05, 0.05])
    meshes = [v for v in backend.scene_model().visuals() if v.entity == "arm"]
    assert len(meshes) >= 10 and all(v.shape == "mesh" for v in meshes)
    # the Panda's 1 MB visual meshes are replaced by its collision meshes (embedded)
    assert all(0 < len(v.mesh_data) <= 256 * 1024 for v in meshes)


def test_foxglove_scene_update_and_transforms(backend):
    pytest.importorskip("foxglove")
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    from py_trees_manipulation.viewer.foxglove import WellKnownChannels

    wk = WellKnownChannels(backend)
    classes = {}
    for topic, schema in wk.schemas().items():
        pool = descriptor_pool.DescriptorPool()
        for fd in descriptor_pb2.FileDescriptorSet.FromString(bytes(schema.data)).file:
            pool.Add(fd)
        classes[topic] = message_factory.GetMessageClass(pool.FindMessageTypeByName(schema.name))
    scene = classes["/scene"].FromString(wk.scene_update(1.5))
    ents = {e.id: e for e in scene.entities}
    cube = ents["block"].cubes[0]
    assert (cube.size.x, cube.size.y, cube.size.z) == pytest.approx((0.05, 0.07, 0.03))
    cyl = ents["can"].cylinders[0]
    assert (cyl.size.x, cyl.size.z) == pytest.approx((0.06, 0.12))
    assert ents["ball"].spheres[0].size.x == pytest.approx(0.05)
    assert ents["block"].timestamp.seconds == 1 and ents["block"].timestamp.nanos == 500_000_000
    hand = ents["arm/panda_hand"].models[0]
    # OBJ models carry the inverse of Foxglove's +90 deg turn about x: w = cos 45 deg, x = -sin 45 deg
    assert (hand.pose.orientation.w, hand.pose.orientation.x) == pytest.approx((math.sqrt(0.5), -math.sqrt(0.5)))
    tf = classes["/tf"].FromString(wk.transforms(2.0))
    names = [t.child_frame_id for t in tf.transforms]
    assert names.count("arm/tcp") == 1 and "block" in names
    log = classes["/log"].FromString(wk.event_log({"time_s": 0.25, "source": "sim", "text": "slip", "level": "warning"}, 0.3))
    assert (log.name, log.message, log.timestamp.nanos) == ("sim", "slip", 250_000_000)
    assert log.level == 3  # WARNING in foxglove.LogLevel
    changes = [classes["/log"].FromString(b) for b in wk.status_logs([("a", "RUNNING", ""), ("b", "INVALID", "")], 0.1)]
    assert [(m.name, m.message) for m in changes] == [("a", "INVALID -> RUNNING")]
    changes = [classes["/log"].FromString(b) for b in wk.status_logs([("a", "FAILURE", "no object")], 0.2)]
    assert [(m.message, m.level) for m in changes] == [("RUNNING -> FAILURE: no object", 3)]  # WARNING
