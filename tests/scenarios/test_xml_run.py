"""Acceptance: ``ptm run`` on the BT.CPP XML export of pick_and_lift gives the YAML run's outcome.

Runs the real simulator headless (a few seconds per run).
"""

from __future__ import annotations

import json
import os

import pytest

from py_trees_manipulation.trees.metrics import WALL_CLOCK_METRICS
from py_trees_manipulation.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PICK_AND_LIFT = os.path.join(ROOT, "examples", "pick_and_lift.yaml")


def _run(args: list[str], summary: str) -> tuple[int, dict]:
    code = main(["run", *args, "-q", "--summary", summary])
    with open(summary) as f:
        return code, json.load(f)


@pytest.mark.skipif(not os.path.exists(PICK_AND_LIFT), reason="examples/pick_and_lift.yaml not written yet")
def test_xml_export_of_pick_and_lift_runs_to_the_same_outcome(tmp_path, pick_and_lift_run):
    pytest.importorskip("pybullet")
    xml = tmp_path / "pick_and_lift.xml"
    assert main(["convert", PICK_AND_LIFT, "-o", str(xml)]) == 0
    s_yaml = pick_and_lift_run.summary  # the YAML file's default run (the runner ptm run uses)
    code_xml, s_xml = _run([str(xml), "--scene", PICK_AND_LIFT, "--no-log"], str(tmp_path / "xml.json"))
    assert s_yaml["status"] == "SUCCESS", s_yaml
    assert code_xml == 0
    for key in ("status", "outcome", "result", "ticks", "sim_time_s"):
        if key in s_yaml:
            assert s_xml.get(key) == s_yaml[key], key
    metrics_y, metrics_x = s_yaml.get("metrics", {}), s_xml.get("metrics", {})
    for key, value in metrics_y.items():
        if key in WALL_CLOCK_METRICS:  # wall-clock times: the same run, not the same figure
            assert key in metrics_x
        elif isinstance(value, float):
            assert metrics_x[key] == pytest.approx(value, abs=1e-9), key
        else:
            assert metrics_x[key] == value, key


def test_xml_run_needs_a_scene(tmp_path, capsys):
    xml = tmp_path / "t.xml"
    xml.write_text('<root BTCPP_format="4"><BehaviorTree ID="T"><AlwaysSuccess/></BehaviorTree></root>')
    assert main(["run", str(xml), "-q"]) == 2
    assert "--scene" in capsys.readouterr().err
