"""Ctrl-C twice still leaves a complete log (the process ends by SIGINT: exit status 130 in a shell); sweep executor and backend errors are one line."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_two_sigints_in_a_row_end_by_sigint_with_the_log_and_summary_complete(tmp_path):
    from py_trees_manipulation.viewer.runlog import read_run_log

    log, summary = tmp_path / "run.mcap", tmp_path / "summary.json"
    # open_door: 20 s of sim at --realtime, so the run cannot end before the Ctrl-C lands (pick_and_lift's 5 s
    # did once on a loaded machine: its log reached 20 kB only as it finished, exit 0)
    proc = subprocess.Popen([sys.executable, "-m", "py_trees_manipulation", "run", str(ROOT / "examples/open_door.yaml"),
                             "--realtime", "-q", "--log", str(log), "--summary", str(summary)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and (not log.exists() or log.stat().st_size < 20_000):
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.1)  # wait until ticks are being logged (the run loop is going)
        end = time.monotonic() + 20
        while proc.poll() is None and time.monotonic() < end:  # Ctrl-C held down: the first interrupts
            proc.send_signal(signal.SIGINT)                     # the run, the others land while it finishes
            time.sleep(0.002)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    # killed by SIGINT after writing everything (a shell's $? is 130 and its loop stops), every time: it
    # was 130 or -2 depending on where the first Ctrl-C landed (CPython's own exit by SIGINT)
    assert proc.returncode == -signal.SIGINT, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    s = json.loads(summary.read_text())
    assert s["status"] == "INTERRUPTED" and s["error"] == "interrupted by the user"
    rl = read_run_log(log)
    assert rl.complete and rl.error is None and rl.summary["status"] == "INTERRUPTED"
    assert len(rl.snapshots) == s["ticks"]


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_sweep_with_an_unreachable_ray_head_is_a_one_line_error(tmp_path, capsys):
    from py_trees_manipulation.cli import main

    port = _closed_port()
    code = main(["sweep", str(ROOT / "examples/pick_and_lift.yaml"), "--executor", "ray", "--address",
                 f"127.0.0.1:{port}", "--trials", "1", "--no-progress", "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2
    assert err == (f"ptm sweep: cannot reach the Ray head at 127.0.0.1:{port} (Connection refused): start it with "
                   "'ray start --head' there, or leave out --address for a local Ray\n")
    assert main(["sweep", str(ROOT / "examples/pick_and_lift.yaml"), "--executor", "ray", "--address", "head:port",
                 "--no-progress", "-o", str(tmp_path / "out")]) == 2
    assert "--address 'head:port': expected HOST:PORT or ray://HOST:PORT" in capsys.readouterr().err


def test_sweep_fake_backend_runs_the_tree_to_its_first_check_of_the_world(tmp_path, capsys):
    """--backend fake: actions succeed at once, objects stay where the scene puts them: perception
    works (GetObjectPose), the grasp 'succeeds', and ObjectLifted fails, as --help says."""
    from py_trees_manipulation.cli import main

    out = tmp_path / "out"
    assert main(["sweep", str(ROOT / "examples/pick_and_lift.yaml"), "--backend", "fake", "--trials", "2",
                 "--workers", "1", "--no-progress", "-o", str(out)]) == 0
    rows = (out / "runs.csv").read_text().splitlines()
    assert len(rows) == 3
    assert all(",FAILURE,0,0," in r and ",lifted," in r for r in rows[1:])
    from py_trees_manipulation.cli import build_parser

    sweep = next(a for a in build_parser()._subparsers._group_actions[0].choices["sweep"]._actions
                 if "--backend" in a.option_strings)
    assert "objects stay at their scene poses" in sweep.help and "(ObjectLifted...) fails" in sweep.help


@pytest.mark.skipif(os.name != "posix", reason="signals")
def test_sigint_deferred_restores_the_handler_and_ignores_a_ctrl_c_meanwhile(capsys):
    from py_trees_manipulation.trees.runner import sigint_deferred

    before = signal.getsignal(signal.SIGINT)
    with sigint_deferred():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)  # the handler runs here: no KeyboardInterrupt
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)
    assert signal.getsignal(signal.SIGINT) is before
    assert capsys.readouterr().err.count("Ctrl-C is ignored until they are written") == 1
