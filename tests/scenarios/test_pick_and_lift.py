"""The main job in the real simulator (headless): pick and lift, pick and place, failure with reason."""

import json
import os
import subprocess
import sys

import pytest

from py_trees_manipulation.trees.loader import load_task
from py_trees_manipulation.trees.runner import RunOptions, run_task

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")
PICK = os.path.normpath(os.path.join(EXAMPLES, "pick_and_lift.yaml"))
PLACE = os.path.normpath(os.path.join(EXAMPLES, "pick_and_place.yaml"))


def test_cli_pick_and_lift_succeeds_and_writes_the_summary(tmp_path):
    out = tmp_path / "summary.json"
    proc = subprocess.run([sys.executable, "-m", "py_trees_manipulation", "run", PICK, "--no-log", "--summary", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[0].startswith("SUCCESS: pick_and_lift in ")
    s = json.loads(out.read_text())
    for key in ("status", "ticks", "sim_time_s", "wall_time_s", "real_time_factor", "metrics"):
        assert key in s
    assert s["status"] == "SUCCESS"
    assert s["metrics"]["object_lift_m"] >= 0.10
    assert s["metrics"]["object_dropped"] is False
    assert s["ticks"] == pytest.approx(s["sim_time_s"] * 30, abs=1.5)


def test_unreachable_object_fails_with_the_reason():
    task = load_task(PICK, ["scene.objects.0.pose.position=[1.2, 0.0, 0.629]", "scene.objects.0.pose_noise.position_m=0"])
    r = run_task(task, RunOptions(display=False, timeout_s=30))
    s = r.summary
    assert r.exit_code == 1 and s["status"] == "FAILURE"
    fb = s["failed_behaviour"]
    assert fb["name"] == "grasp/choose" and fb["type"] == "ChooseGrasp"
    assert fb["feedback"].startswith("no feasible grasp of mug: 14 candidates: 14 out of reach (best 0.")
    assert fb["location"].endswith("grasp_from_above.yaml:24:9")


@pytest.mark.parametrize("model, where", [("franka_panda", "[1.2, 0.0, 0.629]"),
                                          ("kuka_iiwa_wsg50", "[1.2, -0.4, 0.629]")])
def test_an_unreachable_pick_names_a_base_that_does_it(model, where):
    """Issue 33 item 2: a pick out of reach names a base pose (on the surface the robot stands on)
    from which a grasp reaches the object; run from that base, the same pick succeeds."""
    import re

    sets = [f"scene.objects.0.pose.position={where}", "scene.objects.0.pose_noise.position_m=0",
            f"scene.robots.0.model={model}"]
    r = run_task(load_task(PICK, sets), RunOptions(display=False, timeout_s=30))
    fb = r.summary["failed_behaviour"]
    assert r.summary["status"] == "FAILURE" and fb["type"] == "ChooseGrasp"
    m = re.search(r"a grasp reaches it from a base at .*?: --set '(scene\.robots\.0\.base_pose=\{.*?\})'", fb["feedback"])
    assert m, fb["feedback"]
    r2 = run_task(load_task(PICK, sets + [m.group(1)]), RunOptions(display=False, timeout_s=30))
    assert r2.summary["status"] == "SUCCESS", r2.summary.get("failed_behaviour")
    assert r2.summary["metrics"]["object_lift_m"] >= 0.10


def test_pick_and_place_puts_the_mug_within_3_cm():
    r = run_task(load_task(PLACE), RunOptions(display=False, timeout_s=60))
    m = r.summary["metrics"]
    assert r.summary["status"] == "SUCCESS", r.summary.get("failed_behaviour")
    assert m["place_error_m"] <= 0.03
    assert m["object_dropped"] is False


def test_timeout_is_exit_1_with_the_running_behaviour_named():
    r = run_task(load_task(PICK), RunOptions(display=False, timeout_s=1.0))
    assert r.exit_code == 1 and r.summary["status"] == "TIMEOUT"
    assert r.summary["sim_time_s"] == pytest.approx(1.0, abs=0.05)
    fb = r.summary["failed_behaviour"]
    assert fb["name"] == "grasp/pregrasp"  # still moving to the pregrasp pose after 1 s
    assert fb["feedback"].startswith("timed out after 1 s of backend time (it reported: tcp ")


@pytest.mark.parametrize("fmt", ["ascii", "unicode", "dot"])
def test_render_from_yaml_alone(tmp_path, fmt):
    from py_trees_manipulation import cli

    out = tmp_path / f"tree.{fmt}"
    assert cli.main(["render", PICK, "--format", fmt, "-o", str(out)]) == 0
    text = out.read_text()
    assert "grasp/pregrasp" in text and "lifted" in text


def test_render_svg_needs_graphviz(tmp_path):
    import shutil

    from py_trees_manipulation import cli

    if shutil.which("dot") is None:
        pytest.skip("Graphviz 'dot' is not installed (apt-get install graphviz)")
    out = tmp_path / "tree.svg"
    assert cli.main(["render", PICK, "--format", "svg", "-o", str(out)]) == 0
    assert out.read_text().lstrip().startswith(("<?xml", "<svg"))


def test_unwritable_summary_path_is_refused_before_the_run(tmp_path, capsys):
    from py_trees_manipulation import cli

    blocker = tmp_path / "file"
    blocker.write_text("")
    assert cli.main(["run", PICK, "--no-log", "--summary", str(blocker / "out.json")]) == 2
    err = capsys.readouterr()
    assert f"cannot write the summary to {blocker / 'out.json'}" in err.err
    assert "SUCCESS" not in err.out  # nothing ran
