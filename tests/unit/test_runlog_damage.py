"""Run logs that are not run logs, and run logs a kill left unfinished (issue 36): ``ptm report`` and
``ptm view`` refuse the first with exit 2 and why; ``ptm log recover`` gives the second a summary
section that indexed MCAP readers (``mcap.reader.make_reader``, Foxglove) need."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from mcap.reader import make_reader
from mcap.stream_reader import StreamReader
from mcap.records import Message
from mcap.writer import Writer

from py_trees_manipulation.cli import main
from py_trees_manipulation.viewer.runlog import read_run_log, recover_run_log

ROOT = Path(__file__).resolve().parents[2]
MAGIC = b"\x89MCAP0\r\n"


@pytest.fixture(scope="module")
def killed(tmp_path_factory) -> Path:
    """A run log whose process was killed with SIGKILL after 25 ticks (one chunk flushed per tick)."""
    path = tmp_path_factory.mktemp("killed") / "killed.mcap"
    script = textwrap.dedent(f"""
        import os, signal
        from py_trees_manipulation.viewer import demo
        from py_trees_manipulation.viewer.runlog import RunLogger
        logger = RunLogger({str(path)!r}, flush_interval_s=0.0)
        tree, backend = demo.demo_tree(), demo.FakeBackend(dt=0.05)
        class Kill:
            def on_start(self, run): pass
            def on_tick(self, run):
                if run.tick == 25:
                    os.kill(os.getpid(), signal.SIGKILL)
            def on_end(self, run, summary): pass
        demo.run_loop(tree, backend, [logger, Kill()], 100, source="pick.yaml")
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == -9, proc.stderr
    return path


def _messages(path: Path) -> int:
    n = 0
    with open(path, "rb") as f:
        try:
            for r in StreamReader(f, record_size_limit=path.stat().st_size).records:
                n += isinstance(r, Message)
        except Exception:  # noqa: BLE001 - the cut end
            pass
    return n


def test_a_killed_runs_log_is_refused_by_indexed_readers_and_recovered(killed, tmp_path, capsys):
    with open(killed, "rb") as f:  # the problem: no summary section, no index
        with pytest.raises(Exception):
            list(make_reader(f).iter_messages())
    log = read_run_log(killed)
    assert not log.complete and [s["tick"] for s in log.snapshots] == list(range(1, 26))  # flushed at every tick, the 25th too
    # ptm report reads it, and says what to do for the other readers
    assert main(["report", str(killed), "-o", str(tmp_path / "rep")]) == 0
    err = capsys.readouterr().err
    assert f"ptm: warning: {killed} is not finished (the run was killed or is still running: the file ends in the " \
           f"middle of a record); shown up to where it ends. Foxglove and other indexed MCAP readers refuse such a " \
           f"file: 'ptm log recover {killed}' writes a finished copy" in err
    # ptm log recover writes a finished copy next to it
    assert main(["log", "recover", str(killed)]) == 0
    out = killed.with_name("killed.recovered.mcap")
    printed = capsys.readouterr().out
    n = _messages(killed)
    assert printed.startswith(f"{out}: {n} messages on ")
    with open(out, "rb") as f:
        reader = make_reader(f)
        summary = reader.get_summary()
        assert summary is not None and summary.statistics.message_count == n
        assert sum(1 for _ in reader.iter_messages()) == n
        assert {c.topic for c in summary.channels.values()} >= {"/run/metadata", "/tree/snapshot", "/events"}
        assert [m.name for m in reader.iter_metadata()] == ["run"]
    again = read_run_log(out)
    assert again.complete and again.snapshots == log.snapshots and again.metadata == log.metadata
    assert again.summary is None  # a killed run never wrote one: recovery copies, it invents nothing


def test_recover_skips_a_damaged_chunk_and_never_overwrites_its_source(killed, tmp_path):
    data = bytearray(killed.read_bytes())
    i = data.find(b"zstd", len(data) // 2)  # a chunk in the middle: spoil its compressed bytes
    data[i + 40:i + 60] = b"\x00" * 20
    bad = tmp_path / "bad.mcap"
    bad.write_bytes(bytes(data))
    rec = recover_run_log(bad, tmp_path / "fixed.mcap")
    assert rec.chunks_lost == 1 and 0 < rec.messages < _messages(killed)
    with open(tmp_path / "fixed.mcap", "rb") as f:
        assert make_reader(f).get_summary().statistics.message_count == rec.messages
    with pytest.raises(ValueError, match="must not overwrite"):
        recover_run_log(bad, bad)


def _other_mcap(path: Path) -> None:
    with open(path, "wb") as f:
        w = Writer(f)
        w.start(profile="ros2", library="rosbag2")
        sid = w.register_schema("std_msgs/msg/String", "ros2msg", b"string data")
        cid = w.register_channel("/chatter", "cdr", sid)
        w.add_message(cid, 0, b"\x00\x01\x00\x00\x03\x00\x00\x00hi\x00", 0)
        w.finish()


@pytest.mark.parametrize("content, why", [
    (MAGIC + os.urandom(4000), "is not a run log: the MCAP magic is not followed by an MCAP header record"),
    ("header+random", "is not a readable run log: no /run/metadata message could be read"),
    ("rosbag", "is an MCAP file but not a run log of ptm run (its profile is 'ros2', library 'rosbag2'): open it in "
               "Foxglove"),
])
@pytest.mark.parametrize("command", ["report", "view"])
def test_a_file_that_is_not_a_run_log_is_exit_2_with_why(killed, tmp_path, capsys, content, why, command):
    path = tmp_path / "x.mcap"
    if content == "rosbag":
        _other_mcap(path)
    elif content == "header+random":
        path.write_bytes(killed.read_bytes()[:200] + os.urandom(4000))  # magic + ptm header + garbage
    else:
        path.write_bytes(content)
    assert main([command, str(path), "--port", "0"] if command == "view" else [command, str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ptm: {path} {why}"), err
    assert "UNKNOWN" not in err and "Traceback" not in err
    assert not (tmp_path / "x_report").exists()
