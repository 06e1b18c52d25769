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

    def __init__(self, log: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "py_trees_manipulation.cli", "view", str(log), "--port", "0"],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.banner = ""
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
