"""``ptm view LOG`` and ``ptm report LOG`` on finished and failed runs (no browser needed).

``ptm view`` runs as a real subprocess (it serves until Ctrl-C): the test reads the address it
prints, fetches the page and reads the Server-Sent Events stream as a browser would, then sends
SIGINT. ``ptm report`` runs in-process through ``py_trees_manipulation.cli.main``.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import py_trees
import pytest

from py_trees_manipulation.cli import main as ptm_main
from py_trees_manipulation.viewer import demo
from py_trees_manipulation.viewer.runlog import RunLogger, read_run_log

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
REPORT_PLOTS = ["forces.png", "gripper.png", "object_height.png", "door_angle.png", "summary.png"]


@pytest.fixture(autouse=True)
def _clean_blackboard():
    py_trees.blackboard.Blackboard.clear()
    yield
    py_trees.blackboard.Blackboard.clear()


def _demo_log(path: Path, ticks: int, **kw) -> Path:
    """A run log of the demo tree on the fake backend (gripper forces, set-point, mode, mug pose,
    door angle), ``dt`` 0.05 s."""
    demo.run_loop(demo.demo_tree(), demo.FakeBackend(dt=0.05), [RunLogger(path, **kw.pop("logger", {}))],
                  ticks, source="pick.yaml", **kw)
    return path


class ViewProcess:
    """``ptm view LOG --port 0`` in a subprocess; ``url`` is the address it printed."""

    def __init__(self, *logs: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "py_trees_manipulation.cli", "view", *map(str, logs),
                                      "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     # Ctrl-C as a shell gives it: a disposition the test worker inherited
                                     # (SIG_IGN survives exec) must not make the server deaf to it
                                     preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        self.banner = ""
        self.before: list[str] = []  # stdout lines printed before the banner
        deadline = time.monotonic() + 60.0
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.proc.stdout], [], [], 1.0)
            if ready:
                line = self.proc.stdout.readline()
                if not line:
                    break
                if line.startswith("ptm viewer: "):
                    self.banner = line.strip()
                    break
                self.before.append(line.rstrip("\n"))
        if not self.banner:
            self.proc.kill()
            raise AssertionError(f"ptm view printed no address; stderr: {self.proc.stderr.read()}")
        self.url = self.banner.split()[2]

    def get(self, path: str) -> tuple[str, bytes]:
        with urllib.request.urlopen(self.url + path.lstrip("/"), timeout=10) as r:
            return r.headers.get("Content-Type"), r.read()

    def events(self) -> list[tuple[str, str, str]]:
        """``(event, id, data)`` of the SSE stream from its start up to and including ``end``."""
        out, event, ident, data = [], "", "", []
        with urllib.request.urlopen(self.url + "events", timeout=10) as r:
            assert r.headers.get("Content-Type") == "text/event-stream"
            for raw in r:
                line = raw.decode("utf-8").rstrip("\n")
                if line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("id: "):
                    ident = line[4:]
                elif line.startswith("data: "):
                    data.append(line[6:])
                elif line == "" and event:
                    out.append((event, ident, "\n".join(data)))
                    if event == "end":
                        return out
                    event, ident, data = "", "", []
        return out

    def stop(self) -> int:
        """Ctrl-C: the server closes and the process exits 0."""
        self.proc.send_signal(signal.SIGINT)
        try:
            return self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            try:  # why it did not stop: its state and signal masks
                status = open(f"/proc/{self.proc.pid}/status").read()
                status = " ".join(ln for ln in status.splitlines() if ln.startswith(("State", "SigBlk", "SigIgn", "SigCgt")))
            except OSError:
                status = "?"
            raise AssertionError(f"ptm view did not exit 20 s after Ctrl-C ({status})")
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.stdout.close()
            self.proc.stderr.close()


def test_view_serves_the_replay_page_and_snapshot_stream(tmp_path):
    log = _demo_log(tmp_path / "run.mcap", 12)
    view = ViewProcess(log)
    try:
        assert view.banner.endswith("(replay of %s, 12 ticks; Ctrl-C to stop)" % log)
        ctype, page = view.get("/")
        assert ctype.startswith("text/html") and b"viewer.js" in page
        ctype, js = view.get("/viewer.js")
        assert ctype.startswith("text/javascript") and b"EventSource" in js
        meta = json.loads(view.get("/api/meta")[1])
        assert meta["mode"] == "replay" and meta["count"] == 12 and meta["ended"] is True
        assert meta["source"] == "pick.yaml" and meta["complete"] is True
        events = view.events()
    finally:
        code = view.stop()
    assert code == 0
    kinds = [e[0] for e in events]
    assert kinds[0] == "meta" and kinds[-1] == "end"
    snaps = [json.loads(d) for k, _, d in events if k == "snapshot"]
    assert [s["tick"] for s in snaps] == list(range(1, 13))
    assert [int(i) for k, i, _ in events if k == "snapshot"] == list(range(12))  # sequence numbers
    assert snaps[-1]["timestamp"] == pytest.approx(12 * 0.05)
    names = {b["name"]: b["status"] for b in snaps[-1]["behaviours"].values()}
    assert names["Hold"] == "RUNNING" and names["Plan Grasp"] == "SUCCESS"
    assert snaps[-1]["blackboard"]["values"]["/grasp_width_m"] == 0.042
    assert [json.loads(d)["text"] for k, _, d in events if k == "runevent"] == ["tick 10"]
    assert json.loads(events[-1][2])["ticks"] == 12


def test_report_writes_every_plot_with_data(tmp_path, capsys):
    log = _demo_log(tmp_path / "run.mcap", 40)
    out = tmp_path / "report"
    assert ptm_main(["report", str(log), "-o", str(out)]) == 0
    printed = capsys.readouterr().out.split()
    assert printed == [str(out / n) for n in REPORT_PLOTS]
    for name in REPORT_PLOTS:
        assert (out / name).stat().st_size > 5000, name


def test_report_skips_plots_without_data(tmp_path, capsys):
    """Without telemetry there is nothing to plot but the summary table."""
    log = _demo_log(tmp_path / "run.mcap", 5, logger={"telemetry": False})
    assert ptm_main(["report", str(log), "-o", str(tmp_path / "r")]) == 0
    assert sorted(os.listdir(tmp_path / "r")) == ["summary.png"]
    assert (tmp_path / "r" / "summary.png").stat().st_size > 3000


def test_report_figures_follow_the_sim_stream_names(tmp_path):
    """The sim's names: tactile gripper (``left/right_fingertip_force_n``, ``force_setpoint_n``,
    ``mode``) and doors (``door/<name>`` ``door_angle_deg``, ``drawer/<name>``
    ``drawer_opening_m``)."""
    from py_trees_manipulation.viewer.report import _plot_doors, _plot_forces, _plot_gripper

    class SimNames(demo.FakeBackend):
        def telemetry(self):
            t = self.now()
            grip = min(5.0, 10.0 * t)
            return {"gripper/panda": {"gap_m": 0.04, "effort_n": grip, "left_fingertip_force_n": grip,
                                      "right_fingertip_force_n": 0.9 * grip, "force_setpoint_n": 5.0,
                                      "mode": "FORCE_SERVO" if t > 0.5 else "FIND_CONTACT"},
                    "door/door": {"door_angle_deg": 10.0 * t, "handle_angle_deg": 0.0, "latched": t < 0.2},
                    "drawer/cabinet": {"drawer_opening_m": 0.1 * t}}

    demo.run_loop(demo.demo_tree(), SimNames(dt=0.1), [RunLogger(tmp_path / "run.mcap")], 10)
    log = read_run_log(tmp_path / "run.mcap", snapshots=False)
    out: list[Path] = []
    forces = _plot_forces(log, tmp_path, out)
    assert forces == {"peak gripper/panda left_fingertip_force_n": 5.0,
                      "peak gripper/panda right_fingertip_force_n": 4.5}
    assert _plot_gripper(log, tmp_path, out) == {"final gripper/panda gap_mm": pytest.approx(40.0)}
    doors = _plot_doors(log, tmp_path, out)
    assert doors == {"final door/door door_angle_deg": pytest.approx(10.0),
                     "final door/door handle_angle_deg": 0.0,
                     "final drawer/cabinet drawer_opening_mm": pytest.approx(100.0)}
    assert [p.name for p in out] == ["forces.png", "gripper.png", "door_angle.png"]


class RaiseAt:
    """Run observer raising ``exc`` at tick ``n``: the runner's loop fails half-way."""

    def __init__(self, n: int, exc: BaseException) -> None:
        self.n, self.exc = n, exc

    def on_start(self, run):
        pass

    def on_tick(self, run):
        if run.tick == self.n:
            raise self.exc

    def on_end(self, run, summary):
        pass


def test_sim_run_that_raises_half_way_leaves_a_log_view_and_report_accept(tmp_path, capsys):
    """Issue 7 acceptance: examples/pick_and_lift.yaml raising at tick 40 (of ~180)."""
    from py_trees_manipulation.trees.loader import load_task
    from py_trees_manipulation.trees.runner import RunOptions, run_task

    path = tmp_path / "failed.mcap"
    task = load_task(str(EXAMPLES / "pick_and_lift.yaml"))
    opts = RunOptions(display=False, observers=[RunLogger(path), RaiseAt(40, RuntimeError("arm driver died"))])
    result = run_task(task, opts)
    assert result.summary["status"] == "ERROR"
    log = read_run_log(path)
    assert log.complete and log.summary["status"] == "ERROR"
    assert log.summary["error"] == "RuntimeError: arm driver died"
    assert log.summary["closed_by"] == "on_end" and log.summary["ticks"] == 40
    assert [s["tick"] for s in log.snapshots] == list(range(1, 41))
    assert {"arm/panda", "gripper/panda", "object/mug"} <= set(log.telemetry)
    # the mug's telemetry pose (straight from PyBullet) equals the (4, 4) pose locate wrote, as
    # pose_to_spec gives it, on the tick it was written
    k = next(i for i, s in enumerate(log.snapshots) if s["blackboard"]["values"]["/object_pose"] is not None)
    written = log.snapshots[k]["blackboard"]["values"]["/object_pose"]
    sampled = log.telemetry["object/mug"][k]
    assert sampled["tick"] == k + 1
    assert sampled["pose"]["position"] == pytest.approx(written["position"], abs=2e-6)
    assert sampled["pose"]["orientation"] == pytest.approx(written["orientation"], abs=2e-6)
    # ptm report: gripper and object plots from the 40 ticks, the summary says ERROR
    assert ptm_main(["report", str(path), "-o", str(tmp_path / "rep")]) == 0
    written = capsys.readouterr().out.split()
    assert {Path(p).name for p in written} >= {"gripper.png", "object_height.png", "summary.png"}
    assert all(Path(p).stat().st_size > 5000 for p in written)
    # ptm view: the 40 ticks are served, the stream ends with the ERROR summary
    view = ViewProcess(path)
    try:
        events = view.events()
    finally:
        assert view.stop() == 0
    snaps = [json.loads(d) for k, _, d in events if k == "snapshot"]
    assert len(snaps) == 40 and snaps[-1]["tick"] == 40
    assert json.loads(events[-1][2])["status"] == "ERROR"


# ------------------------------------------------------------------------------------------------
# several logs, bad logs, the end of ptm run (issue: new-user trial)
def _bare_mcap(path: Path, started_iso: str | None, mtime: float) -> Path:
    """A minimal MCAP file with (or without) the ``run`` metadata record, its mtime set."""
    from mcap.writer import Writer

    with open(path, "wb") as f:
        w = Writer(f)
        w.start(profile="ptm", library="test")
        if started_iso is not None:
            w.add_metadata("run", {"started_wall_iso": started_iso, "source": path.name})
        w.finish()
    os.utime(path, (mtime, mtime))
    return path


def test_newest_log_is_chosen_by_run_start_then_mtime(tmp_path):
    from py_trees_manipulation.viewer.cli import newest_run_log, run_start_time

    t0 = 1_700_000_000.0  # 2023-11-14T22:13:20Z
    # the metadata says b started last although a was modified last: the start time wins
    a = _bare_mcap(tmp_path / "a.mcap", "2023-11-14T22:13:20+00:00", t0 + 3600)
    b = _bare_mcap(tmp_path / "b.mcap", "2023-11-14T22:15:20+00:00", t0)
    assert run_start_time(a) == t0 and run_start_time(b) == t0 + 120
    assert newest_run_log([str(a), str(b)]) == str(b)
    assert newest_run_log([str(b), str(a)]) == str(b)
    # no metadata record: the file's mtime stands in (here later than both starts)
    c = _bare_mcap(tmp_path / "c.mcap", None, t0 + 600)
    assert run_start_time(c) == t0 + 600
    assert newest_run_log([str(a), str(b), str(c)]) == str(c)


def test_view_of_several_logs_serves_the_newest_and_names_the_others(tmp_path, monkeypatch):
    import datetime as dt
    import types

    from py_trees_manipulation.viewer import runlog

    starts = iter([dt.datetime(2025, 1, 1, 12, 0, 5, tzinfo=dt.timezone.utc),
                   dt.datetime(2025, 1, 1, 12, 0, 0, tzinfo=dt.timezone.utc)])

    class Clock(dt.datetime):
        @classmethod
        def now(cls, tz=None):
            return next(starts)

    monkeypatch.setattr(runlog, "_dt", types.SimpleNamespace(datetime=Clock, timezone=dt.timezone))
    new = _demo_log(tmp_path / "pick_b.mcap", 5)  # started 12:00:05
    old = _demo_log(tmp_path / "pick_a.mcap", 3)  # started 12:00:00, written last
    view = ViewProcess(old, new)
    try:
        assert view.banner.endswith(f"(replay of {new}, 5 ticks; Ctrl-C to stop)")
        expected = (f"ptm view: 2 run logs given; serving the newest, {new} "
                    f"(started 2025-01-01 12:00:05 UTC); ignoring 1 other: {old}")
        assert view.before == [expected]
        assert json.loads(view.get("/api/meta")[1])["count"] == 5
    finally:
        assert view.stop() == 0


def test_report_of_several_logs_writes_one_directory_per_log(tmp_path, capsys):
    logs = [_demo_log(tmp_path / f"run{i}.mcap", 5, logger={"telemetry": False}) for i in range(2)]
    assert ptm_main(["report", *map(str, logs)]) == 0
    assert capsys.readouterr().out.split() == [str(tmp_path / f"run{i}_report" / "summary.png") for i in range(2)]
    assert ptm_main(["report", *map(str, logs), "-o", str(tmp_path / "plots")]) == 0
    assert capsys.readouterr().out.split() == [str(tmp_path / "plots" / f"run{i}" / "summary.png") for i in range(2)]
    # one bad path: the others are still reported, the exit code says something was wrong
    assert ptm_main(["report", str(tmp_path / "nope.mcap"), str(logs[0]), "-o", str(tmp_path / "p2")]) == 2
    out = capsys.readouterr()
    assert out.err == f"ptm: {tmp_path / 'nope.mcap'}: no such run log\n"
    assert out.out.split() == [str(tmp_path / "p2" / "run0" / "summary.png")]


@pytest.mark.parametrize("command", ["view", "report"])
def test_missing_and_non_mcap_files_are_one_line_errors(tmp_path, capsys, monkeypatch, command):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.mcap").write_text("# This is not a run log\n")
    (tmp_path / "empty.mcap").write_bytes(b"")
    (tmp_path / "dir.mcap").mkdir()
    cases = {"runs/nope.mcap": "ptm: runs/nope.mcap: no such run log",
             "notes.mcap": "ptm: notes.mcap: not an MCAP run log (written by ptm run?)",
             "empty.mcap": "ptm: empty.mcap: not an MCAP run log (written by ptm run?)",
             "dir.mcap": "ptm: dir.mcap: is a directory, not a run log"}
    for path, message in cases.items():
        assert ptm_main([command, path]) == 2, path
        err = capsys.readouterr().err
        assert err.startswith(message) and err.count("\n") == 1, err
    assert not (tmp_path / "runs").exists() and not (tmp_path / "notes_report").exists()


class _Args:
    """What ``ptm run`` hands to ``after_run``."""

    def __init__(self, log, server) -> None:
        self._ptm_log_path, self._ptm_server, self.report = log, server, None


def _tty(monkeypatch, stdout: bool, stdin: bool) -> None:
    import io

    monkeypatch.setattr(sys.stdout, "isatty", lambda: stdout)
    fake_in = io.StringIO()
    fake_in.isatty = lambda: stdin  # type: ignore[method-assign]
    monkeypatch.setattr(sys, "stdin", fake_in)


@pytest.mark.parametrize("stdout_tty, stdin_tty", [(True, False), (False, True)])
def test_viewer_stays_up_after_the_run_on_a_terminal(tmp_path, capsys, monkeypatch, stdout_tty, stdin_tty):
    """With stdout or stdin a terminal, the printed address still serves after the run, until Ctrl-C
    (here: until the browser side has fetched the page data and closes the server)."""
    import threading

    from py_trees_manipulation.viewer.cli import after_run
    from py_trees_manipulation.viewer.server import ViewerServer

    _tty(monkeypatch, stdout_tty, stdin_tty)
    server = ViewerServer(port=0, source="pick.yaml")
    server.end({"status": "SUCCESS"})
    fetched: list[dict] = []

    def browser():
        try:
            with urllib.request.urlopen(server.url + "api/meta", timeout=10) as r:
                fetched.append(json.loads(r.read()))
        finally:
            server.close()

    log = tmp_path / "runs" / "pick_1.mcap"
    t = threading.Thread(target=browser)
    t.start()
    after_run(_Args(log, server), {"status": "SUCCESS"})
    t.join(10)
    assert fetched and fetched[0]["ended"] is True and fetched[0]["summary"]["status"] == "SUCCESS"
    assert capsys.readouterr().out.splitlines() == [
        f"run log: {log} (replay: ptm view {log})",
        f"run SUCCESS; the viewer stays at {server.url} until Ctrl-C"]


def test_viewer_closes_without_a_terminal_and_says_how_to_replay(tmp_path, capsys, monkeypatch):
    from py_trees_manipulation.viewer.cli import after_run
    from py_trees_manipulation.viewer.server import ViewerServer

    _tty(monkeypatch, False, False)
    for log in (tmp_path / "my runs" / "pick 1.mcap", None):
        server = ViewerServer(port=0)
        after_run(_Args(log, server), {"status": "FAILURE"})
        with pytest.raises(OSError):  # closed: the address no longer answers
            urllib.request.urlopen(server.url + "api/meta", timeout=5)
        lines = capsys.readouterr().out.splitlines()
        if log is not None:
            quoted = "'" + str(log) + "'"
            assert lines == [f"run log: {log} (replay: ptm view {quoted})",
                             f"viewer closed at the end of the run (no terminal); replay the run with: ptm view {quoted}"]
        else:
            assert lines == ["viewer closed at the end of the run (no terminal); no run log to replay (--no-log)"]


def test_ptm_run_prints_the_log_with_its_replay_command(tmp_path, capsys, monkeypatch):
    """A real (robot-less, 0.3 s sim) run through ``ptm run --viewer`` without a terminal."""
    monkeypatch.chdir(tmp_path)
    _tty(monkeypatch, False, False)
    (tmp_path / "wait.yaml").write_text(
        "name: wait\nscene:\n  fixtures: [{name: floor, urdf: plane.urdf}]\ntree: {Wait: {duration_s: 0.3}}\n")
    assert ptm_main(["run", "wait.yaml", "-q", "--viewer", "--log", "runs/w.mcap"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("ptm viewer: http://127.0.0.1:")
    assert lines[1].startswith("SUCCESS: wait")  # the verdict comes first, then what the extensions add
    assert lines[2] == "run log: runs/w.mcap (replay: ptm view runs/w.mcap)"
    assert lines[3] == "viewer closed at the end of the run (no terminal); replay the run with: ptm view runs/w.mcap"
    assert read_run_log(tmp_path / "runs" / "w.mcap").summary["status"] == "SUCCESS"


def test_report_event_labels_are_whole(tmp_path):
    """Long event texts are not cut: numbered markers on the plot, the whole text in the key below."""
    from py_trees_manipulation.viewer.report import _event_lines, read_run_log, write_report

    long_text = ("slip detected on the left fingertip: tangential force 3.2 N over 0.8 of the normal force, "
                 "raising the grip set-point from 5.0 N to 7.5 N (slip_servo)")

    class Slip:
        def on_start(self, run):
            pass

        def on_tick(self, run):
            if run.tick == 15:
                run.events.append({"time_s": run.time_s, "source": "tactile", "text": long_text})

        def on_end(self, run, summary):
            pass

    from py_trees_manipulation.viewer import demo
    from py_trees_manipulation.viewer.runlog import RunLogger

    path = tmp_path / "run.mcap"
    demo.run_loop(demo.demo_tree(), demo.FakeBackend(dt=0.05), [Slip(), RunLogger(path)], 30, source="x.yaml")
    log = read_run_log(path)
    lines = _event_lines(log)
    joined = " ".join(line.strip() for line in lines)
    assert "[tactile] " + long_text in joined
    assert joined.startswith("1 ") and " 2 " in joined  # the demo's "tick 10" event is number 1
    out = write_report(path, tmp_path / "r")
    forces = tmp_path / "r" / "forces.png"
    assert forces in out
    from matplotlib import image

    assert image.imread(str(forces)).shape[0] > 4.2 * 110  # the key makes the figure taller than the plot
