"""The live viewer in headless Chromium during a real PyBullet run.

Drives Debian's /usr/bin/chromium with the ``playwright`` package (never ``playwright install``).
The run is ``examples/pick_and_lift.yaml`` (seeded: the same ticks every time), held at a gate
while the page is checked, so nothing depends on timing: a ``Gate`` observer pauses the runner's
thread on the first tick where "grasp/pregrasp" is RUNNING (tick 5: ready, open and locate have
succeeded, locate wrote /object_pose, and the grasp choice, asked on tick 4, was answered).
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
            assert page.text_content("#tick-label").startswith("tick 5 ")
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
            assert "pregrasp_pose" in page.text_content('#details [data-param="target"]')
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


def _largest_example():
    from py_trees_manipulation.trees.loader import load_task

    sizes = {}
    for path in sorted(EXAMPLE.parent.glob("*.yaml")):
        sizes[path] = sum(1 for _ in load_task(str(path)).tree.walk())
    return max(sizes, key=lambda p: (sizes[p], p.name)), max(sizes.values())


def test_largest_example_tree_opens_whole_and_readable(tmp_path):
    """At 1400x900 every top-level node (the root and its children) is inside the tree pane, with
    node names of at least 10 px; deeper subtrees may be collapsed to get there."""
    from py_trees_manipulation.trees.factory import build_tree
    from py_trees_manipulation.trees.loader import load_task
    from py_trees_manipulation.viewer import ViewerServer
    from py_trees_manipulation.viewer.snapshot import SnapshotBuilder

    path, n_nodes = _largest_example()
    assert n_nodes >= 20
    py_trees.blackboard.Blackboard.clear()
    task = load_task(str(path))
    tree = build_tree(task)
    snap = SnapshotBuilder(tree).build(tick=0, timestamp=0.0)
    root = snap["behaviours"][snap["root"]]
    top = [root["name"]] + [snap["behaviours"][c]["name"] for c in root["children"]]
    server = ViewerServer(mode="replay", source=str(path))
    server.publish(snap)
    server.end({"status": "SUCCESS"})
    try:
        with playwright_sync.sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROME_ARGS, headless=True)
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(server.url)
            page.wait_for_selector(f'.node[data-node-name="{root["name"]}"]', timeout=20000)
            page.wait_for_function("window.ptmViewer.zoom() > 0 && document.querySelectorAll('.node').length > 1")
            pane = page.eval_on_selector("#tree-scroll", "(e) => { const r = e.getBoundingClientRect();"
                                         " return [r.left, r.top, r.right, r.bottom]; }")
            assert pane[2] <= 1400 and pane[3] <= 900
            for name in top:
                box = page.eval_on_selector(f'.node[data-node-name="{name}"]',
                                            "(e) => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; }")
                assert pane[0] - 0.5 <= box[0] and box[2] <= pane[2] + 0.5, (name, box, pane)
                assert pane[1] - 0.5 <= box[1] and box[3] <= pane[3] + 0.5, (name, box, pane)
                px = page.eval_on_selector(f'.node[data-node-name="{name}"] .name',
                                           "(e) => parseFloat(getComputedStyle(e).fontSize) * window.ptmViewer.zoom()")
                assert px >= 10.0, (name, px)
            # the names are drawn, not cut to nothing: the root's name is fully visible
            width = page.eval_on_selector(f'.node[data-node-name="{root["name"]}"] .name', "(e) => e.scrollWidth - e.clientWidth")
            assert width <= 1
            # a parameter with its unit in the details
            page.click(f'.node[data-node-name="{top[1]}"]')
            page.wait_for_selector("#details [data-field='type']")
            page.screenshot(path=str(tmp_path / "largest.png"))
            # zoom and pan move the tree; fit brings it back
            z0 = page.evaluate("window.ptmViewer.zoom()")
            page.click("#zoom-in")
            assert page.evaluate("window.ptmViewer.zoom()") > z0
            page.click("#fit")
            assert page.evaluate("window.ptmViewer.zoom()") == pytest.approx(z0)
            browser.close()
    finally:
        server.close()
        py_trees.blackboard.Blackboard.clear()
    out = os.environ.get("PTM_VIEWER_SCREENSHOT_LARGEST")
    if out:
        import shutil

        shutil.copy(tmp_path / "largest.png", out)
