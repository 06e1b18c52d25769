"""Snapshots in the py_trees_js field names, built from a real py_trees tree."""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass

import numpy as np
import py_trees
import pytest

from py_trees_manipulation.geometry.poses import pose_from_xyz_rpy
from py_trees_manipulation.viewer import demo
from py_trees_manipulation.viewer.snapshot import COLOURS, SnapshotBuilder, to_jsonable


@pytest.fixture(autouse=True)
def _clean_blackboard():
    py_trees.blackboard.Blackboard.clear()
    yield
    py_trees.blackboard.Blackboard.clear()


def _by_name(snap):
    return {b["name"]: b for b in snap["behaviours"].values()}


def _ticks(n, wait_ticks=3):
    """Tick the demo tree n times; return the list of snapshots (one per tick)."""
    tree = demo.demo_tree(wait_ticks=wait_ticks)
    builder = SnapshotBuilder(tree)
    snaps = []
    for i in range(1, n + 1):
        tree.tick()
        snaps.append(builder.build(tick=i, timestamp=i / 30.0))
    return tree, snaps


def test_statuses_structure_and_colours():
    tree, snaps = _ticks(5)
    snap = snaps[-1]
    names = _by_name(snap)
    assert [names[n]["status"] for n in ("Pick", "Plan Grasp", "Grasp", "Already Holding", "Close Gripper", "Hold")] == [
        "RUNNING", "SUCCESS", "SUCCESS", "FAILURE", "SUCCESS", "RUNNING"]
    assert snap["root"] == str(tree.root.id)
    # children are ids, left to right; parent links back
    assert [snap["behaviours"][c]["name"] for c in names["Pick"]["children"]] == ["Plan Grasp", "Grasp", "Hold"]
    assert names["Grasp"]["parent"] == names["Pick"]["id"]
    assert names["Pick"]["colour"] == "#FFA500" == COLOURS["Sequence"]
    assert names["Grasp"]["colour"] == "#00FFFF"
    assert names["Hold"]["colour"] == "#555555"
    assert names["Grasp"]["type"] == "Selector"
    assert names["Grasp"]["data"]["Class"] == "py_trees.composites.Selector"
    assert names["Pick"]["parameters"] == {"memory": True}
    assert names["Plan Grasp"]["parameters"] == {"key": "/grasp_width_m", "ticks": 3, "value": 0.042}
    assert names["Hold"]["details"] == "holding at 0.042" == names["Hold"]["data"]["Feedback"]
    # strict JSON (no NaN) round trip
    assert json.loads(json.dumps(snap, allow_nan=False)) == snap


def test_visited_path_follows_the_tick():
    _, snaps = _ticks(5, wait_ticks=3)
    def visited(s):
        return [s["behaviours"][i]["name"] for i in s["visited_path"]]
    assert visited(snaps[0]) == ["Plan Grasp", "Pick"]  # writer still RUNNING (1/3)
    # tick 4: writer succeeds, selector tries both children, Hold starts
    assert visited(snaps[3]) == ["Plan Grasp", "Already Holding", "Close Gripper", "Grasp", "Hold", "Pick"]
    # tick 5: memory sequence resumes at Hold
    assert visited(snaps[4]) == ["Hold", "Pick"]
    assert _by_name(snaps[4])["Grasp"]["visited"] is False
    assert _by_name(snaps[4])["Hold"]["visited"] is True
    assert [s["changed"] for s in snaps] == ["true", "false", "false", "true", "true"]


def test_blackboard_values_access_and_activity():
    _, snaps = _ticks(6)
    bb = snaps[3]["blackboard"]
    assert bb["values"]["/grasp_width_m"] == 0.042
    assert bb["data"]["/grasp_width_m"] == "0.042"
    assert bb["clients"]["/grasp_width_m"] == {"read": ["Hold"], "write": ["Plan Grasp"], "exclusive": []}
    names = _by_name(snaps[3])
    assert bb["behaviours"][names["Plan Grasp"]["id"]] == {"/grasp_width_m": "w"}
    assert bb["behaviours"][names["Hold"]["id"]] == {"/grasp_width_m": "r"}
    # before the write the key is registered but has no value
    assert snaps[0]["blackboard"]["data"]["/grasp_width_m"] == "-"
    # activity: only what happened since the previous snapshot
    kinds = [(a["activity_type"], a["client_name"]) for a in snaps[3]["activity_items"]]
    assert kinds == [("INITIALISED", "Plan Grasp"), ("READ", "Hold")]
    assert snaps[3]["activity_items"][0]["current_value"] == 0.042
    assert [a["activity_type"] for a in snaps[4]["activity_items"]] == ["READ"]
    assert len(snaps[4]["activity"]) == 1 and "Hold" in snaps[4]["activity"][0]


def test_build_is_cached_per_tick():
    tree = demo.demo_tree()
    b = SnapshotBuilder(tree)
    tree.tick()
    assert b.build(1, 0.1) is b.build(1, 0.1)
    tree.tick()
    assert b.build(2, 0.2) is not b.build(1, 0.1)


def test_parallel_parameters_and_bare_root():
    par = py_trees.composites.Parallel(
        "Both", policy=py_trees.common.ParallelPolicy.SuccessOnAll(synchronise=False),
        children=[py_trees.behaviours.Running("A"), py_trees.behaviours.Success("B")])
    par.tick_once()
    snap = SnapshotBuilder(par).build(1, 0.0)
    names = _by_name(snap)
    assert names["Both"]["parameters"] == {"policy": "SuccessOnAll", "synchronise": False}
    assert names["Both"]["colour"] == "#FFFF00"
    assert names["A"]["status"] == "RUNNING" and names["B"]["status"] == "SUCCESS"
    # without a BehaviourTree the visited path is every non-INVALID behaviour
    assert {snap["behaviours"][i]["name"] for i in snap["visited_path"]} == {"Both", "A", "B"}


class Mode(enum.Enum):
    FORCE = 2


@dataclass
class Cmd:
    position: float
    max_effort: float


def test_to_jsonable():
    pose = pose_from_xyz_rpy([0.1, -0.2, 0.3], [0.0, 0.0, np.pi / 2])
    spec = to_jsonable(pose)
    assert spec["position"] == pytest.approx([0.1, -0.2, 0.3])
    # yaw 90 deg about z: (w, x, y, z) = (cos 45, 0, 0, sin 45)
    assert spec["orientation"] == pytest.approx([np.sqrt(0.5), 0.0, 0.0, np.sqrt(0.5)], abs=1e-6)
    assert to_jsonable(pose.tolist()) == spec
    not_pose = np.arange(16.0).reshape(4, 4)
    assert to_jsonable(not_pose) == not_pose.tolist()
    assert to_jsonable(np.float32(1.5)) == 1.5 and type(to_jsonable(np.int64(3))) is int
    assert to_jsonable([1.0, float("nan"), float("inf")]) == [1.0, None, None]
    assert to_jsonable(np.array([1.0, np.nan])) == [1.0, None]
    assert to_jsonable(Mode.FORCE) == "FORCE"
    assert to_jsonable(Cmd(0.08, 10.0)) == {"position": 0.08, "max_effort": 10.0}
    assert to_jsonable({1: (2, 3)}) == {"1": [2, 3]}
    assert to_jsonable(object()).startswith("<object object")


def test_build_json_equals_the_snapshot_and_follows_value_changes():
    """build_json reuses cached JSON of unchanged behaviours and values: it must still be exact."""
    tree = demo.demo_tree(wait_ticks=2)
    builder = SnapshotBuilder(tree)
    bb = py_trees.blackboard.Client(name="test")
    bb.register_key("/arr", access=py_trees.common.Access.WRITE)
    bb.register_key("/pose", access=py_trees.common.Access.WRITE)
    arr = np.array([1.0, 2.0, 3.0])
    bb.set("/arr", arr)
    bb.set("/pose", pose_from_xyz_rpy([0.5, 0.0, 0.6]))
    seen = []
    for i in range(1, 7):
        if i == 4:
            arr[1] = 20.0  # mutated in place: same object, new content
        if i == 5:
            bb.set("/pose", pose_from_xyz_rpy([0.5, 0.0, 0.7]))
        tree.tick()
        raw = builder.build_json(tick=i, timestamp=i / 30.0)
        assert raw is builder.build_json(tick=i, timestamp=i / 30.0)  # cached per tick
        snap = builder.build(tick=i, timestamp=i / 30.0)
        assert json.loads(raw) == json.loads(json.dumps(snap, allow_nan=False))
        seen.append(json.loads(raw))
    assert [s["blackboard"]["values"]["/arr"] for s in seen] == [[1.0, 2.0, 3.0]] * 3 + [[1.0, 20.0, 3.0]] * 3
    assert [s["blackboard"]["values"]["/pose"]["position"][2] for s in seen] == [0.6] * 4 + [0.7] * 2
    assert seen[3]["blackboard"]["data"]["/arr"] == "[1.0,20.0,3.0]"
    # the writer's feedback and status follow the ticks (2 RUNNING ticks, then SUCCESS)
    plan = [next(b for b in s["behaviours"].values() if b["name"] == "Plan Grasp") for s in seen]
    assert [p["status"] for p in plan] == ["RUNNING", "RUNNING", "SUCCESS", "SUCCESS", "SUCCESS", "SUCCESS"]
    assert [p["details"] for p in plan[:3]] == ["waiting 1/2", "waiting 2/2", "wrote /grasp_width_m"]


def test_a_child_added_or_moved_between_ticks_shows_in_the_next_snapshot():
    tree = demo.demo_tree(wait_ticks=0)
    builder = SnapshotBuilder(tree)
    tree.tick()
    first = json.loads(builder.build_json(1, 0.1))
    grasp = next(b for b in tree.root.iterate() if b.name == "Grasp")
    extra = py_trees.behaviours.Running("Extra")
    tree.root.add_child(extra)
    tree.tick()
    second = json.loads(builder.build_json(2, 0.2))
    assert "Extra" not in {b["name"] for b in first["behaviours"].values()}
    names = _by_name(second)
    assert names["Extra"]["parent"] == names["Pick"]["id"] and names["Extra"]["status"] == "INVALID"
    assert names["Pick"]["children"][-1] == names["Extra"]["id"]
    # move it under the selector: its parent follows
    tree.root.remove_child(extra)
    grasp.add_child(extra)
    tree.tick()
    third = _by_name(json.loads(builder.build_json(3, 0.3)))
    assert third["Extra"]["parent"] == third["Grasp"]["id"]
    assert third["Grasp"]["children"][-1] == third["Extra"]["id"]
    assert third["Extra"]["id"] not in third["Pick"]["children"]


def test_an_output_write_is_in_the_activity_stream_only_when_the_viewer_records_one():
    # write_output skips the blackboard client's checks when no activity stream records the write
    # (issue 19); with the viewer's stream on, the write must still show as the client's
    from py_trees_manipulation.behaviors.base import ManipulationBehaviour
    from py_trees_manipulation.behaviors.params import Param

    class Writer(ManipulationBehaviour):
        ABSTRACT = True  # not registered: a test behaviour
        PARAMS = {"output_key": Param("key", None, "where to write")}

        def update(self):
            return py_trees.common.Status.SUCCESS

    Blackboard = py_trees.blackboard.Blackboard
    w = Writer(name="writer", output_key="grasp_width")
    w.write_output("output_key", 0.042)
    assert Blackboard.get("/grasp_width") == 0.042
    Blackboard.enable_activity_stream(maximum_size=100)
    try:
        w.write_output("output_key", 0.05)
        items = [(a.key, a.activity_type, a.client_name, a.current_value) for a in Blackboard.activity_stream.data]
    finally:
        Blackboard.disable_activity_stream()
    assert items == [("/grasp_width", "WRITE", "writer", 0.05)]
    assert Blackboard.get("/grasp_width") == 0.05
    assert Writer(name="nothing").write_output("output_key", 1.0) is None  # no key given: nothing written
    assert set(Blackboard.storage) == {"/grasp_width"}


def test_a_parameter_read_is_in_the_activity_stream_only_when_the_viewer_records_one():
    # param() reads the storage directly when no activity stream records the read (issue 19); with
    # the viewer's stream on, the read must still show as the client's, with the value it read
    from py_trees_manipulation.behaviors.base import ManipulationBehaviour
    from py_trees_manipulation.behaviors.params import BlackboardReadError, Param

    class Reader(ManipulationBehaviour):
        ABSTRACT = True  # not registered: a test behaviour
        PARAMS = {"width_m": Param("float", None, "a width", unit="m")}

        def update(self):
            return py_trees.common.Status.SUCCESS

    Blackboard = py_trees.blackboard.Blackboard
    Blackboard.clear()
    r = Reader(name="reader", width_m="{grasp_width}")
    with pytest.raises(BlackboardReadError, match="'grasp_width' .* has no value yet"):
        r.param("width_m")
    Blackboard.set("/grasp_width", 0.042)
    assert r.param("width_m") == 0.042
    Blackboard.enable_activity_stream(maximum_size=100)
    try:
        assert r.param("width_m") == 0.042
        items = [(a.key, a.activity_type, a.client_name, a.current_value) for a in Blackboard.activity_stream.data]
    finally:
        Blackboard.disable_activity_stream()
    assert items == [("/grasp_width", "READ", "reader", 0.042)]
