"""Acceptance: ``ptm convert FILE.xml --scene TASK.yaml -o OUT.yaml`` gives a task file that runs.

pick_and_lift goes YAML -> XML -> YAML (with its own file as --scene) and ``ptm run OUT.yaml``
lifts the mug as the original does (real simulator, headless, about 2 s wall).
"""

from __future__ import annotations

import json
import os

import pytest

from py_trees_manipulation.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PICK_AND_LIFT = os.path.join(ROOT, "examples", "pick_and_lift.yaml")


def test_converted_pick_and_lift_runs_in_the_sim(tmp_path, capsys):
    pytest.importorskip("pybullet")
    xml, out, summary = tmp_path / "pal.xml", tmp_path / "edited" / "pal.yaml", tmp_path / "s.json"
    assert main(["convert", PICK_AND_LIFT, "-o", str(xml)]) == 0
    assert main(["convert", str(xml), "--scene", PICK_AND_LIFT, "-o", str(out)]) == 0
    assert main(["run", str(out), "-q", "--no-log", "--summary", str(summary)]) == 0
    s = json.loads(summary.read_text())
    assert s["status"] == "SUCCESS"
    assert s["metrics"]["target_object"] == "mug"
    assert s["metrics"]["object_lift_m"] == pytest.approx(0.15, abs=0.01)  # lift_m of the task file
    assert capsys.readouterr().out.splitlines()[-1].startswith("SUCCESS: pick_and_lift")
