"""Every channel of a run log decodes in Foxglove.

Foxglove reads a ``jsonschema`` channel with the type walk of its ``mcap-support`` package
(``parseJsonSchema``); :func:`foxglove_schema_errors` re-states its rules, so a schema that
passes here is one that Foxglove turns into message datatypes instead of throwing:

- the schema (and every nested object schema) has ``"type": "object"`` and a ``properties`` map
  (the parser runs ``Object.entries(schema.properties)``);
- each property is ``oneOf`` numeric constants only, or has one ``type`` of: ``boolean``,
  ``number``, ``integer``, ``string`` (``contentEncoding`` absent or ``base64``), ``object``
  (recursively), ``array`` whose ``items`` has one type of boolean, number, integer, string (no
  ``contentEncoding``) or object; anything else (``null``, a list such as ``["string", "null"]``,
  no type at all, arrays of arrays) is an error.

The well-known channels (``/tf``, ``/scene``, ``/log``) are protobuf: their messages are decoded
with the FileDescriptorSet stored in the log, as Foxglove does.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import py_trees
import pytest
from mcap.reader import make_reader

from py_trees_manipulation.viewer import demo
from py_trees_manipulation.viewer.runlog import RunLogger, read_run_log, telemetry_schema

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
_SCALARS = ("boolean", "number", "integer", "string")


def foxglove_schema_errors(schema: dict, where: str = "") -> list[str]:
    """Why Foxglove's parseJsonSchema would throw on ``schema`` (empty: it parses)."""
    errors: list[str] = []
    if schema.get("type") != "object":
        return [f"{where or '<root>'}: expected type object, got {schema.get('type')!r}"]
    props = schema.get("properties")
    if not isinstance(props, dict):
        return [f"{where or '<root>'}: an object without properties"]
    for name, field in props.items():
        path = f"{where}.{name}" if where else name
        if isinstance(field.get("oneOf"), list):
            if not all(isinstance(alt, dict) and isinstance(alt.get("const"), (int, float)) for alt in field["oneOf"]):
                errors.append(f"{path}: oneOf alternatives must have number values")
            continue
        kind = field.get("type")
        if kind in _SCALARS:
            if kind == "string" and field.get("contentEncoding") not in (None, "base64"):
                errors.append(f"{path}: unsupported contentEncoding {field['contentEncoding']!r}")
        elif kind == "object":
            errors.extend(foxglove_schema_errors(field, path))
        elif kind == "array":
            items = field.get("items")
            item_kind = items.get("type") if isinstance(items, dict) else None
            if item_kind in _SCALARS:
                if item_kind == "string" and items.get("contentEncoding") is not None:
                    errors.append(f"{path}[]: no contentEncoding on array items")
            elif item_kind == "object":
                errors.extend(foxglove_schema_errors(items, path + "[]"))
            else:
                errors.append(f"{path}[]: unsupported array item type {item_kind!r}")
        else:
            errors.append(f"{path}: unsupported type {kind!r}")
    return errors


@pytest.fixture(autouse=True)
def _clean_blackboard():
    py_trees.blackboard.Blackboard.clear()
    yield
    py_trees.blackboard.Blackboard.clear()


def test_the_rules_refuse_what_foxglove_refused_in_format_1():
    """The shapes that made ptm.RunMetadata and ptm.TreeSnapshot throw in Foxglove."""
    assert foxglove_schema_errors({"type": "object", "properties": {"extra": {"type": "object"}}}) == [
        "extra: an object without properties"]
    by_id = {"type": "object", "properties": {"behaviours": {"type": "object", "additionalProperties": {
        "type": "object", "properties": {"parent": {"type": ["string", "null"]}}}}}}
    assert foxglove_schema_errors(by_id) == ["behaviours: an object without properties"]
    union = {"type": "object", "properties": {"parent": {"type": ["string", "null"]}}}
    assert foxglove_schema_errors(union) == ["parent: unsupported type ['string', 'null']"]
    nested = {"type": "object", "properties": {"path": {"type": "array", "items": {"type": "array"}}}}
    assert foxglove_schema_errors(nested) == ["path[]: unsupported array item type 'array'"]
    assert foxglove_schema_errors({"type": "object", "properties": {"x": {}}}) == ["x: unsupported type None"]
    assert foxglove_schema_errors({"type": "object", "properties": {
        "raw": {"type": "string", "contentEncoding": "base64"},
        "kind": {"oneOf": [{"title": "A", "const": 0}, {"title": "B", "const": 1}]}}}) == []


def test_telemetry_schemas_of_awkward_first_samples():
    """Values a new telemetry stream may start with (OMPL paths, a NaN force, nothing held)."""
    sample = {"time_s": 0.0, "tick": 1, "force_n": float("nan"), "held": None, "path": [[0.0, 1.0], [1.0, 2.0]],
              "empty": [], "flags": [True], "joint": np.float32(0.5), "count": np.int64(3),
              "nested": {"a": 1.0, "b": [None, 1.0], "c": {"d": "x"}}, "names": ["a", "b"],
              "pose": {"position": [0.0, 0.0, 1.0], "orientation": [1.0, 0.0, 0.0, 0.0]}}
    schema = telemetry_schema("planner/panda", sample)
    assert foxglove_schema_errors(schema) == []
    props = schema["properties"]
    assert props["force_n"] == {"type": "number"} and props["joint"] == {"type": "number"}
    assert props["count"] == {"type": "integer"} and props["held"] == {"type": "string"}
    assert "path" not in props  # an array of arrays: left undeclared, still in the messages
    assert props["empty"] == {"type": "array", "items": {"type": "number"}}
    assert props["nested"]["properties"].keys() == {"a", "c"}
    assert props["pose"]["properties"]["orientation"]["items"] == {"type": "number"}


def _schemas_and_channels(path):
    with open(path, "rb") as f:
        summary = make_reader(f).get_summary()
    return summary, {c.topic: c for c in summary.channels.values()}


def test_every_schema_of_a_demo_run_parses(tmp_path):
    path = tmp_path / "run.mcap"
    logger = RunLogger(path, metadata={"seed": 7, "args": {"file": "x.yaml", "set": ["a=1"]}})
    demo.run_loop(demo.demo_tree(), demo.FakeBackend(dt=0.05), [logger], 12, source="pick.yaml")
    summary, topics = _schemas_and_channels(path)
    json_topics = [t for t, c in topics.items() if c.message_encoding == "json"]
    assert len(json_topics) == 7
    for topic in json_topics:
        schema = summary.schemas[topics[topic].schema_id]
        assert schema.encoding == "jsonschema"
        assert foxglove_schema_errors(json.loads(schema.data)) == [], topic


def _protobuf_decoders(summary):
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    out = {}
    for schema in summary.schemas.values():
        if schema.encoding != "protobuf":
            continue
        fds = descriptor_pb2.FileDescriptorSet.FromString(schema.data)
        pool = descriptor_pool.DescriptorPool()
        for fd in fds.file:
            pool.Add(fd)
        out[schema.id] = message_factory.GetMessageClass(pool.FindMessageTypeByName(schema.name))
    return out


@pytest.fixture(scope="module")
def sim_run_log(tmp_path_factory):
    """A real PyBullet run (pick_and_lift with tactile sensing, cut at 2 s of sim time) logged
    by ``ptm run``."""
    pytest.importorskip("pybullet")
    from py_trees_manipulation.cli import main

    path = tmp_path_factory.mktemp("foxglove") / "pick.mcap"
    code = main(["run", str(EXAMPLES / "pick_and_lift.yaml"), "--log", str(path), "--timeout", "2", "-q"])
    assert code == 1  # timed out, on purpose: 60 ticks are enough
    py_trees.blackboard.Blackboard.clear()
    return path


def test_real_run_every_channel_decodes_in_foxglove(sim_run_log):
    pytest.importorskip("google.protobuf")
    summary, topics = _schemas_and_channels(sim_run_log)
    assert {"/tf", "/scene", "/log", "/tree/snapshot", "/run/metadata", "/summary",
            "/telemetry/gripper/panda", "/telemetry/arm/panda", "/telemetry/object/mug"} <= set(topics)
    for topic, chan in topics.items():
        schema = summary.schemas[chan.schema_id]
        if chan.message_encoding == "json":
            assert schema.encoding == "jsonschema"
            assert foxglove_schema_errors(json.loads(schema.data)) == [], topic
        else:
            assert (chan.message_encoding, schema.encoding) == ("protobuf", "protobuf"), topic
    # the Plot panel's tactile signals: numbers in the gripper stream
    grip = json.loads(summary.schemas[topics["/telemetry/gripper/panda"].schema_id].data)["properties"]
    for name in ("left_fingertip_force_n", "right_fingertip_force_n", "force_setpoint_n", "gap_m", "effort_n"):
        assert grip[name] == {"type": "number"}, name
    names = {t: summary.schemas[topics[t].schema_id].name for t in ("/tf", "/scene", "/log")}
    assert names == {"/tf": "foxglove.FrameTransforms", "/scene": "foxglove.SceneUpdate", "/log": "foxglove.Log"}
    decoders = _protobuf_decoders(summary)
    counts = summary.statistics.channel_message_counts
    n_ticks = counts[topics["/tree/snapshot"].id]
    assert counts[topics["/tf"].id] == n_ticks + 1  # the start, then every tick
    assert counts[topics["/scene"].id] == 1
    seen: dict[str, list] = {"/tf": [], "/scene": [], "/log": []}
    with open(sim_run_log, "rb") as f:
        for schema, channel, message in make_reader(f).iter_messages(topics=list(seen)):
            msg = decoders[schema.id].FromString(message.data)
            seen[channel.topic].append((message.log_time, msg))
    # /tf: every link of the Panda, the table, the mug and the TCP, unit quaternions, in world
    t_last, tf = seen["/tf"][-1]
    frames = {tr.child_frame_id: tr for tr in tf.transforms}
    assert {"panda", "panda/panda_link7", "panda/panda_hand", "panda/tcp", "table", "mug"} <= set(frames)
    assert all(tr.parent_frame_id == "world" for tr in tf.transforms)
    for tr in tf.transforms:
        q = tr.rotation
        assert math.isclose(q.w ** 2 + q.x ** 2 + q.y ** 2 + q.z ** 2, 1.0, abs_tol=1e-6), tr.child_frame_id
        assert tr.timestamp.seconds * 10 ** 9 + tr.timestamp.nanos == t_last
    # the TCP frame is the panda_grasptarget link (the Panda's TCP) and matches the arm telemetry
    tcp, target = frames["panda/tcp"].translation, frames["panda/panda_grasptarget"].translation
    assert math.dist((tcp.x, tcp.y, tcp.z), (target.x, target.y, target.z)) < 1e-6
    log = read_run_log(sim_run_log, snapshots=False)
    arm = log.telemetry["arm/panda"][-1]["tcp_position"]
    assert math.dist((tcp.x, tcp.y, tcp.z), arm) < 1e-5
    mug = log.telemetry["object/mug"][-1]["pose"]["position"]
    m = frames["mug"].translation
    assert math.dist((m.x, m.y, m.z), mug) < 1e-5
    # /scene: frame-locked entities; the mug a cylinder, the Panda's links embedded OBJ models
    (_, scene), = seen["/scene"]
    entities = {e.id: e for e in scene.entities}
    assert all(e.frame_locked and e.frame_id == e.id for e in scene.entities)
    for entity in ("mug", "panda/panda_link3", "panda/panda_hand"):
        model = entities[entity].models[0]
        assert model.media_type == "model/obj" and b"\nv " in model.data and not model.url, entity
    assert entities["table"].models or entities["table"].cubes
    # /log: the behaviours' status changes, in time order
    texts = [(m.name, m.message) for _, m in seen["/log"]]
    assert texts[0] == ("pick_and_lift", "INVALID -> RUNNING")
    # (the goal is sent in the tick; the server takes it, and plans, when the backend next runs)
    assert ("ready", "INVALID -> RUNNING: move_joints goal sent") in texts
    assert any(name == "ready" and text.startswith("RUNNING -> SUCCESS") for name, text in texts)
    times = [t for t, _ in seen["/log"]]
    assert times == sorted(times)


def test_real_run_still_reads_in_ptm_view_and_report_layout(sim_run_log):
    """The record layout comes back as the snapshot keyed by id, with units of parameters."""
    log = read_run_log(sim_run_log)
    assert log.complete and log.summary["status"] == "TIMEOUT"
    last = log.snapshots[-1]
    assert isinstance(last["behaviours"], dict) and last["root"] in last["behaviours"]
    pre = [b for b in last["behaviours"].values() if b["name"] == "grasp/pregrasp"][0]
    assert pre["parent"] in last["behaviours"] and last["behaviours"][last["root"]]["parent"] is None
    assert pre["units"]["position_tolerance_m"] == "m"
    assert pre["data"]["Class"].endswith("MoveToPose")
    assert last["blackboard"]["values"]["/object_pose"]["position"][2] == pytest.approx(0.626, abs=0.01)


def test_the_foxglove_layout_reads_channels_a_run_has(sim_run_log):
    """docs/foxglove_layout.json: a 3D panel on /scene, plots of numeric telemetry fields, the log
    on /log and the raw tree snapshot, all of them channels (and number fields) of a real run."""
    layout = json.loads((Path(__file__).resolve().parents[2] / "docs" / "foxglove_layout.json").read_text())
    panels = layout["configById"]
    kinds = {pid.split("!")[0] for pid in panels}
    assert {"3D", "Plot", "RosOut", "RawMessages"} <= kinds

    def leaves(node):
        return [node] if isinstance(node, str) else leaves(node["first"]) + leaves(node["second"])

    assert sorted(leaves(layout["layout"])) == sorted(panels)
    summary, topics = _schemas_and_channels(sim_run_log)
    assert set(panels["3D!ptm"]["topics"]) <= set(topics)
    assert panels["RosOut!log"]["topicToRender"] == "/log" and panels["RawMessages!tree"]["topicPath"] in topics
    plotted = [p["value"] for pid, cfg in panels.items() if pid.startswith("Plot!") for p in cfg["paths"]]
    assert len(plotted) >= 4
    for path in plotted:
        topic, field = path.rsplit(".", 1)
        schema = json.loads(summary.schemas[topics[topic].schema_id].data)
        assert schema["properties"][field] == {"type": "number"}, path
