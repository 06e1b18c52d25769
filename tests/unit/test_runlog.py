"""The MCAP run log: content, schemas, and survival of failed, interrupted and abandoned runs."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import textwrap

import numpy as np
import py_trees
import pytest
from mcap.reader import make_reader

from py_trees_manipulation.viewer import demo
from py_trees_manipulation.viewer.runlog import RunLogger, read_run_log


@pytest.fixture(autouse=True)
def _clean_blackboard():
    py_trees.blackboard.Blackboard.clear()
    yield
    py_trees.blackboard.Blackboard.clear()


def _run(path, ticks, **kw):
    logger = RunLogger(path, metadata={"seed": 7, "args": ["--tick-hz", "30"]})
    demo.run_loop(demo.demo_tree(), demo.FakeBackend(dt=0.05), [logger], ticks, source="pick.yaml", **kw)
    return logger


def test_complete_run_contents(tmp_path):
    path = tmp_path / "run.mcap"
    logger = _run(path, 40)
    assert logger.closed and logger.errors == []
    log = read_run_log(path)
    assert log.complete and log.error is None
    assert [s["tick"] for s in log.snapshots] == list(range(1, 41))
    assert log.snapshots[-1]["timestamp"] == pytest.approx(40 * 0.05)
    hold = [b for b in log.snapshots[-1]["behaviours"].values() if b["name"] == "Hold"][0]
    assert hold["status"] == "RUNNING"
    assert log.snapshots[-1]["blackboard"]["values"]["/grasp_width_m"] == 0.042
    assert sorted(log.telemetry) == ["door/door", "gripper/panda", "object/mug"]
    assert all(len(v) == 40 for v in log.telemetry.values())
    # door opens at 0.1 rad/s: angle at tick k is 0.1 * 0.05 k
    t, angle = log.series("door/door", "angle_rad")
    np.testing.assert_allclose(angle, 0.1 * t)
    np.testing.assert_allclose(t, 0.05 * np.arange(1, 41))
    # the mug's (4, 4) pose is logged as position + (w, x, y, z): z = 0.05 + 0.01 (t - 1.5)+
    t, p, q = log.pose_series("object/mug")
    np.testing.assert_allclose(p[:, 2], 0.05 + 0.01 * np.clip(t - 1.5, 0, None), atol=1e-6)
    np.testing.assert_allclose(q[0], [np.cos(0.15), 0, 0, np.sin(0.15)], atol=1e-6)
    assert log.series("gripper/panda", "mode")[1][0] == "position"
    # demo loop adds an event every 10 ticks
    assert [e["text"] for e in log.events] == ["tick 10", "tick 20", "tick 30", "tick 40"]
    assert log.events[0]["tick"] == 10 and log.events[0]["source"] == "demo"
    assert log.metadata["source"] == "pick.yaml"
    assert log.metadata["extra"] == {"seed": 7, "args": ["--tick-hz", "30"]}
    assert log.summary["status"] == "RUNNING" and log.summary["ticks"] == 40
    assert log.summary["closed_by"] == "on_end"


def test_channels_are_json_with_json_schemas(tmp_path):
    """Our channels: json messages, each with a jsonschema schema; Foxglove's well-known ones
    beside them in protobuf."""
    path = tmp_path / "run.mcap"
    _run(path, 5)
    with open(path, "rb") as f:
        reader = make_reader(f)
        summary = reader.get_summary()
        topics = {c.topic: c for c in summary.channels.values()}
        ours = {"/run/metadata", "/events", "/tree/snapshot", "/summary",
                "/telemetry/gripper/panda", "/telemetry/object/mug", "/telemetry/door/door"}
        wellknown = {"/tf": "foxglove.FrameTransforms", "/scene": "foxglove.SceneUpdate", "/log": "foxglove.Log"}
        assert set(topics) == ours | set(wellknown)
        for topic, name in wellknown.items():
            assert topics[topic].message_encoding == "protobuf"
            schema = summary.schemas[topics[topic].schema_id]
            assert (schema.name, schema.encoding) == (name, "protobuf")
        for chan in (topics[t] for t in ours):
            assert chan.message_encoding == "json"
            schema = summary.schemas[chan.schema_id]
            assert schema.encoding == "jsonschema"
            assert json.loads(schema.data)["type"] == "object"
        grip = json.loads(summary.schemas[topics["/telemetry/gripper/panda"].schema_id].data)
        assert grip["properties"]["gap_m"] == {"type": "number"}
        assert grip["properties"]["mode"] == {"type": "string"}
        counts = summary.statistics.channel_message_counts
        assert counts[topics["/tree/snapshot"].id] == 5
        assert {r.name for r in reader.iter_metadata()} == {"run"}


@pytest.mark.parametrize("exc", [RuntimeError, KeyboardInterrupt])
def test_run_that_raises_half_way_leaves_a_readable_log(tmp_path, exc):
    path = tmp_path / "run.mcap"
    with pytest.raises(exc):
        _run(path, 40, fail_at=21, exception=exc)
    log = read_run_log(path)
    assert log.complete
    assert len(log.snapshots) == 20 and log.snapshots[-1]["tick"] == 20
    assert log.summary["status"] == "ERROR"
    assert log.summary["error"].startswith(exc.__name__)
    assert log.summary["ticks"] == 20


def test_logger_dropped_without_on_end_is_finished_by_finaliser(tmp_path):
    path = tmp_path / "run.mcap"
    tree, backend = demo.demo_tree(), demo.FakeBackend()
    logger = RunLogger(path)
    from py_trees_manipulation.observers import RunState
    run = RunState(tree=tree, backend=backend)
    logger.on_start(run)
    for i in range(1, 4):
        tree.tick()
        backend.advance()
        run.tick, run.time_s = i, backend.now()
        logger.on_tick(run)
    del logger
    gc.collect()
    log = read_run_log(path)
    assert log.complete and len(log.snapshots) == 3
    assert log.summary["closed_by"] == "finaliser" and log.summary["ticks"] == 3


def test_process_exiting_on_an_exception_without_on_end(tmp_path):
    path = tmp_path / "run.mcap"
    script = textwrap.dedent(f"""
        from py_trees_manipulation.observers import RunState
        from py_trees_manipulation.viewer import demo
        from py_trees_manipulation.viewer.runlog import RunLogger
        tree, backend = demo.demo_tree(), demo.FakeBackend()
        logger = RunLogger({str(path)!r})
        run = RunState(tree=tree, backend=backend)
        logger.on_start(run)
        for i in range(1, 8):
            tree.tick(); backend.advance(); run.tick, run.time_s = i, backend.now()
            logger.on_tick(run)
        raise SystemExit("crash without on_end")
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, proc.stderr
    log = read_run_log(path)
    assert log.complete and len(log.snapshots) == 7
    assert log.summary["closed_by"] == "finaliser"


def test_truncated_file_reads_up_to_the_damage(tmp_path):
    path = tmp_path / "run.mcap"
    logger = RunLogger(path, flush_interval_s=0.0)  # one chunk per tick
    demo.run_loop(demo.demo_tree(), demo.FakeBackend(), [logger], 30)
    data = path.read_bytes()
    cut = tmp_path / "cut.mcap"
    cut.write_bytes(data[: len(data) // 2])
    log = read_run_log(cut)
    assert not log.complete and log.error
    assert log.summary is None
    n = len(log.snapshots)
    assert 5 < n < 30
    assert [s["tick"] for s in log.snapshots] == list(range(1, n + 1))


def test_not_an_mcap_file(tmp_path):
    bad = tmp_path / "x.mcap"
    bad.write_text("hello, this is not MCAP")
    with pytest.raises(ValueError, match="not an MCAP file"):
        read_run_log(bad)


def test_observer_errors_do_not_raise(tmp_path):
    class Broken(demo.FakeBackend):
        def telemetry(self):
            raise OSError("sensor gone")
    logger = RunLogger(tmp_path / "run.mcap")
    demo.run_loop(demo.demo_tree(), Broken(), [logger], 3)
    assert logger.errors == ["OSError: sensor gone"]
    log = read_run_log(tmp_path / "run.mcap")
    assert log.complete and log.summary["ticks"] == 3 and log.snapshots == []


def test_telemetry_values_that_json_cannot_take_are_converted(tmp_path):
    """Plain values are written as they are; numpy scalars and arrays, NaN and poses go through
    to_jsonable (NaN -> null, (4, 4) -> position + (w, x, y, z))."""
    class Odd(demo.FakeBackend):
        def telemetry(self):
            k = round(self.now() / self.dt)
            return {"odd/x": {"n": np.int64(k), "f": np.float32(0.5) if k != 2 else float("nan"),
                              "v": np.arange(3.0) * k, "ok": [0.25, k]}}
    demo.run_loop(demo.demo_tree(), Odd(), [RunLogger(tmp_path / "run.mcap")], 3)
    log = read_run_log(tmp_path / "run.mcap")
    got = [{k: s[k] for k in ("n", "f", "v", "ok")} for s in log.telemetry["odd/x"]]
    assert got == [{"n": 1, "f": 0.5, "v": [0.0, 1.0, 2.0], "ok": [0.25, 1]},
                   {"n": 2, "f": None, "v": [0.0, 2.0, 4.0], "ok": [0.25, 2]},
                   {"n": 3, "f": 0.5, "v": [0.0, 3.0, 6.0], "ok": [0.25, 3]}]
