"""The live viewer in headless Chromium during a real PyBullet run.

Drives Debian's /usr/bin/chromium with the ``playwright`` package (never ``playwright install``).
The run is ``examples/pick_and_lift.yaml`` (seeded: the same ticks every time), held at a gate
while the page is checked, so nothing depends on timing: a ``Gate`` observer pauses the runner's
thread on the first tick where "grasp/pregrasp" is RUNNING (tick 4: ready, open and locate have
succeeded, locate wrote /object_pose).
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import py_trees
import pytest

CHROMIUM = "/usr/bin/chromium"
pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is missing (apt-get install chromium)")
playwright_sync = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")

CHROME_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync"]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "pick_and_lift.yaml"


class Gate:
    """Run observer: holds the run on the first tick where behaviour ``name`` is RUNNING."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.reached = threading.Event()
        self.release = threading.Event()

    def on_start(self, run):
        pass

    def on_tick(self, run):
        if self.reached.is_set():
            return
        for b in run.tree.root.iterate():
            if b.name == self.name and b.status == py_trees.common.Status.RUNNING:
                self.reached.set()
                self.release.wait(timeout=120)
                return

    def on_end(self, run, summary):
        self.reached.set()


def test_live_page_during_a_sim_run(tmp_path):
    from py_trees_manipulation.trees.loader import load_task
    from py_trees_manipulation.trees.runner import RunOptions, run_task
    from py_trees_manipulation.viewer import RunLogger, open_live, read_run_log

    task = load_task(str(EXAMPLE))
    observer, server = open_live(quiet=True)
    gate = Gate("grasp/pregrasp")
    log_path = tmp_path / "run.mcap"
    result: dict = {}

    def run() -> None:
        opts = RunOptions(display=False, observers=[RunLogger(log_path), observer, gate])
        result["r"] = run_task(task, opts)

    runner = threading.Thread(target=run, daemon=True)
    shot = tmp_path / "viewer.png"
    try:
        with playwright_sync.sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROME_ARGS, headless=True)
            page = browser.new_page(viewport={"width": 1400, "height": 850})
            page.goto(server.url)
            runner.start()
            assert gate.reached.wait(timeout=90), "the run never reached 'grasp/pregrasp'"
            # live: the held tick shows pregrasp RUNNING, what ran before SUCCESS, the pose locate wrote
            page.wait_for_selector('.node[data-node-name="grasp/pregrasp"][data-status="RUNNING"]', timeout=20000)
            for name in ("ready", "open", "locate"):
                page.wait_for_selector(f'.node[data-node-name="{name}"][data-status="SUCCESS"]', timeout=5000)
            for name, status in (("pick_and_lift", "RUNNING"), ("grasp", "RUNNING"), ("grasp/descend", "INVALID"),
                                 ("lift", "INVALID")):
                assert page.get_attribute(f'.node[data-node-name="{name}"]', "data-status") == status, name
            assert page.get_attribute('.node[data-node-name="grasp/pregrasp"]', "data-visited") == "true"
            assert page.text_content("#tick-label").startswith("tick 4 ")
            assert page.text_content("#mode") == "live"
            pose = json.loads(page.text_content('#blackboard tr[data-key="/object_pose"] td.value'))
            # the mug at (0.5, 0, 0.629) m with seeded placement noise (<= 5 mm), resting on the table
            assert abs(pose["position"][0] - 0.5) <= 0.005 and abs(pose["position"][1]) <= 0.005
            assert abs(pose["position"][2] - 0.626) < 0.005 and len(pose["orientation"]) == 4
            assert page.text_content('#blackboard tr[data-key="/object_pose"] td.writers') == "locate"
            # click a node: its type, parameters and feedback
            page.click('.node[data-node-name="grasp/pregrasp"]')
            page.wait_for_selector('#details [data-field="type"]')
            assert page.text_content('#details [data-field="class"]').endswith("MoveToPose")
            assert "object_pose" in page.text_content('#details [data-param="target"]')
            page.screenshot(path=str(shot))
            gate.release.set()
            runner.join(timeout=120)
            assert not runner.is_alive()
            assert result["r"].summary["status"] == "SUCCESS", result["r"].summary
            # the page follows to the end: every node done
            page.wait_for_selector('.node[data-node-name="pick_and_lift"][data-status="SUCCESS"]', timeout=20000)
            page.wait_for_function("document.querySelector('#mode').dataset.mode === 'ended'", timeout=10000)
            n = page.evaluate("window.ptmViewer.count()")
            assert n == result["r"].summary["ticks"]
            # scrub back to the first tick: only "ready" has run, the pose is not yet on the blackboard
            page.eval_on_selector("#timeline", "(el) => { el.value = 0; el.dispatchEvent(new Event('input')); }")
            page.wait_for_selector('.node[data-node-name="grasp/pregrasp"][data-status="INVALID"]', timeout=5000)
            assert page.text_content("#tick-label").startswith("tick 1 ")
            assert page.text_content("#mode") == "paused"
            assert page.get_attribute('.node[data-node-name="ready"]', "data-status") == "RUNNING"
            assert page.get_attribute('.node[data-node-name="locate"]', "data-status") == "INVALID"
            assert page.text_content('#blackboard tr[data-key="/object_pose"] td.value') == "-"
            # and resume live
            page.click("#live")
            page.wait_for_selector('.node[data-node-name="pick_and_lift"][data-status="SUCCESS"]', timeout=5000)
            page.screenshot(path=str(tmp_path / "viewer_end.png"))
            browser.close()
    finally:
        gate.release.set()
        server.close()
        runner.join(timeout=60)
        py_trees.blackboard.Blackboard.clear()
    assert shot.stat().st_size > 10000
    out = os.environ.get("PTM_VIEWER_SCREENSHOT")
    if out:  # keep the screenshot for a human to look at
        import shutil

        shutil.copy(shot, out)
    log = read_run_log(log_path)
    assert log.complete and len(log.snapshots) == result["r"].summary["ticks"]
