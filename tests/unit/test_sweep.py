"""Sweeps: grid/random expansion, seeds, success tables, outputs, and the process pool."""

from __future__ import annotations

import csv
import io
import json
import math
import sys

import numpy as np
import pytest

from py_trees_manipulation.cli import main as ptm_main
from py_trees_manipulation.scenarios.sweep import (
    GridParam, RandomParam, SweepConfig, SweepError, expand, import_ray, parse_grid, parse_random, run_sweep,
    success_table, trial_draws, trial_seed, wilson_interval,
)
from py_trees_manipulation.located.errors import TreeLoadError

# A real sim scene (floor and a box, no robot) whose tree succeeds iff the blackboard value x > 0.5:
# each run is 0.3 s of sim time and takes milliseconds, and its outcome is known from x.
TASK = """\
name: threshold
blackboard: {x: 0.7}
scene:
  fixtures:
    - {name: floor, urdf: plane.urdf}
  objects:
    - {name: box, primitive: {shape: box, size: [0.05, 0.05, 0.05]}, mass_kg: 0.1, pose: {position: [0.5, 0, 0.025]}}
tree:
  Sequence:
    memory: true
    children:
      - Wait: {duration_s: 0.3}
      - CheckBlackboardVariableValue: {name: check_x, variable_name: x, operator: ">", value: 0.5}
"""


@pytest.fixture
def task_file(tmp_path):
    p = tmp_path / "threshold.yaml"
    p.write_text(TASK)
    return str(p)


def test_parse_grid_values_and_linspace():
    assert parse_grid("scene.objects.0.mass_kg=0.1,0.3,0.6") == GridParam("scene.objects.0.mass_kg", (0.1, 0.3, 0.6))
    assert parse_grid("blackboard.name=box,mug").values == ("box", "mug")
    assert parse_grid("blackboard.flag=true,false").values == (True, False)
    g = parse_grid("parameters.lift_m=0.05:0.25:5")
    assert g.values == (0.05, 0.1, 0.15, 0.2, 0.25)
    for bad, msg in (("mass=", "empty value"), ("novalue", "expected KEY=VALUES"), ("a..b=1", "malformed key"),
                     ("x=1,2,1", "repeated"), ("x=0:1:1", "N >= 2"), ("expect.status=SUCCESS", "cannot be swept")):
        with pytest.raises(SweepError, match=msg):
            parse_grid(bad)


def test_parse_random():
    assert parse_random("scene.objects.0.lateral_friction=0.3:1.0") == RandomParam("scene.objects.0.lateral_friction", 0.3, 1.0)
    for bad in ("x=1:0", "x=1:1", "x=a:b", "x=0.1", "x=0:1:2"):
        with pytest.raises(SweepError):
            parse_random(bad)


def test_seeds_are_deterministic_distinct_and_from_seedsequence():
    seeds = [trial_seed(7, j) for j in range(100)]
    assert seeds == [trial_seed(7, j) for j in range(100)]
    assert len(set(seeds)) == 100 and all(0 <= s < 2**31 for s in seeds)
    assert trial_seed(8, 0) != trial_seed(7, 0)
    expected = int(np.random.SeedSequence(7, spawn_key=(3, 0)).generate_state(1, dtype=np.uint32)[0]) & 0x7FFFFFFF
    assert seeds[3] == expected


def test_draws_are_uniform_in_bounds():
    p = [RandomParam("a", 0.3, 1.0), RandomParam("b", -2.0, -1.0)]
    draws = np.array([trial_draws(1, j, p) for j in range(2000)])
    assert draws.shape == (2000, 2)
    assert draws[:, 0].min() >= 0.3 and draws[:, 0].max() < 1.0 and draws[:, 1].min() >= -2.0 and draws[:, 1].max() < -1.0
    assert draws[:, 0].mean() == pytest.approx(0.65, abs=0.02)  # mean of U(0.3, 1.0); sd/sqrt(n) = 0.0045
    assert trial_draws(1, 5, p) == list(draws[5])


def test_expand_is_grid_major_with_common_random_numbers():
    grid = [GridParam("g1", (1, 2, 3)), GridParam("g2", ("a", "b"))]
    rnd = [RandomParam("r", 0.0, 1.0)]
    trials = expand(grid, rnd, trials=4, seed=11)
    assert len(trials) == 3 * 2 * 4
    assert [t.index for t in trials] == list(range(24))
    assert [t.params[:2] for t in trials[:5]] == [(("g1", 1), ("g2", "a"))] * 4 + [(("g1", 1), ("g2", "b"))]
    assert [t.point for t in trials[::4]] == list(range(6))
    for t in trials:  # trial j has the same seed and draw at every grid point
        assert t.seed == trial_seed(11, t.trial)
        assert t.params[2] == ("r", trial_draws(11, t.trial, rnd)[0])
    assert len(expand([], rnd, trials=5, seed=0)) == 5
    assert len(expand([], [], trials=1)) == 1
    with pytest.raises(SweepError, match="swept more than once: g1"):
        expand([GridParam("g1", (1,))], [RandomParam("g1", 0, 1)])
    with pytest.raises(SweepError):
        expand(trials=0)


def test_wilson_interval_numbers():
    lo, hi = wilson_interval(3, 6)  # p = 0.5, n = 6, z = 1.96: 0.5 -+ 0.3124
    assert (lo, hi) == pytest.approx((0.1876, 0.8124), abs=1e-4)
    assert wilson_interval(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    assert all(math.isnan(x) for x in wilson_interval(0, 0))


def test_success_table_groups_by_grid_values():
    rows = [{"run": i, "m": m, "success": s, "status": st, "sim_time_s": 1.0 + i}
            for i, (m, s, st) in enumerate([(0.1, 1, "SUCCESS"), (0.1, 1, "SUCCESS"), (0.1, 0, "FAILURE"),
                                            (0.5, 0, "ERROR"), (0.5, 1, "SUCCESS"), (0.5, 0, "TIMEOUT")])]
    table = success_table(rows, ["m"])
    assert [(t["m"], t["runs"], t["successes"], t["errors"]) for t in table] == [(0.1, 3, 2, 0), (0.5, 3, 1, 1), ("all", 6, 3, 1)]
    assert [t["success_rate"] for t in table] == pytest.approx([2 / 3, 1 / 3, 0.5], abs=1e-6)
    assert table[0]["mean_sim_time_s"] == pytest.approx(2.0)
    assert table[2]["ci95_low"] == pytest.approx(0.1876, abs=1e-4)
    assert [t["runs"] for t in success_table(rows, [])] == [6]


def test_sweep_on_the_fake_backend_counts_successes_from_the_draws(task_file, tmp_path):
    cfg = SweepConfig(task_file, grid=[parse_grid("tree.check_x.value=0.25,0.5")], random=[parse_random("blackboard.x=0:1")],
                      trials=12, seed=5, backend="fake", out_dir=str(tmp_path / "out"))
    result = run_sweep(cfg, progress=False)
    draws = [trial_draws(5, j, cfg.random)[0] for j in range(12)]
    expected = {0.25: sum(x > 0.25 for x in draws), 0.5: sum(x > 0.5 for x in draws)}
    table = {t["tree.check_x.value"]: t for t in result.table}
    assert table[0.25]["successes"] == expected[0.25] and table[0.5]["successes"] == expected[0.5]
    assert table["all"]["runs"] == 24 and table["all"]["successes"] == expected[0.25] + expected[0.5]
    rows = list(csv.DictReader(open(result.files["runs"])))
    assert len(rows) == 24
    assert list(rows[0])[:6] == ["run", "point", "trial", "seed", "tree.check_x.value", "blackboard.x"]
    for r in rows:
        x, thr = float(r["blackboard.x"]), float(r["tree.check_x.value"])
        assert r["status"] == ("SUCCESS" if x > thr else "FAILURE") and r["success"] == str(int(x > thr))
        assert r["failed_behaviour"] == ("" if x > thr else "check_x")
        assert int(r["seed"]) == trial_seed(5, int(r["trial"]))
    assert open(result.files["plot"], "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    meta = json.load(open(result.files["json"]))
    assert meta["runs"] == 24 and meta["grid"] == {"tree.check_x.value": [0.25, 0.5]} and meta["random"] == {"blackboard.x": [0.0, 1.0]}
    assert "success_rate" in open(result.files["table_text"]).read()


def test_expectations_decide_success(tmp_path):
    p = tmp_path / "t.scenario.yaml"
    p.write_text(TASK + "expect:\n  metrics: {sim_time_s: '< 0.2'}\n")  # always false: the tree waits 0.3 s
    result = run_sweep(SweepConfig(str(p), grid=[parse_grid("blackboard.x=0.2,0.9")], backend="fake"), progress=False)
    assert [(r["status"], r["success"], r["expect_ok"]) for r in result.rows] == [("FAILURE", 0, 0), ("SUCCESS", 0, 0)]
    assert "expected sim_time_s < 0.2 s, got 0.3" in result.rows[1]["failure"]


def test_process_pool_gives_the_same_rows_as_one_worker(task_file):
    """Two spawned/forkserver workers running the real simulator: same rows, same table."""
    base = dict(grid=[parse_grid("tree.check_x.value=0.3,0.6")], random=[parse_random("blackboard.x=0:1")], trials=3, seed=9)
    one = run_sweep(SweepConfig(task_file, workers=1, **base), progress=False)
    two = run_sweep(SweepConfig(task_file, workers=2, **base), progress=False)
    assert two.runs_csv(deterministic=True) == one.runs_csv(deterministic=True)
    assert two.table_csv() == one.table_csv()
    assert all(r["status"] in ("SUCCESS", "FAILURE") for r in two.rows)
    assert [r["sim_time_s"] for r in two.rows] == pytest.approx([0.3] * 6, abs=0.04)  # 0.3 s wait, 30 Hz ticks


def test_invalid_sweeps_are_refused_before_running(task_file):
    with pytest.raises(TreeLoadError, match="did you mean 'mass_kg'"):
        run_sweep(SweepConfig(task_file, grid=[parse_grid("scene.objects.0.mass_kgg=1,2")], backend="fake"), progress=False)
    with pytest.raises(TreeLoadError, match="no node named 'check'"):
        run_sweep(SweepConfig(task_file, random=[parse_random("tree.check.value=0:1")], backend="fake"), progress=False)
    with pytest.raises(SweepError, match="no variant 'heavy'"):
        run_sweep(SweepConfig(task_file, variant="heavy", backend="fake"), progress=False)
    with pytest.raises(SweepError, match="--plot 'blackboard.y' is not swept; swept: blackboard.x"):
        run_sweep(SweepConfig(task_file, grid=[parse_grid("blackboard.x=1,2")], plot_param="blackboard.y", backend="fake"), progress=False)
    with pytest.raises(SweepError, match="workers"):
        run_sweep(SweepConfig(task_file, workers=0), progress=False)


def test_missing_ray_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    with pytest.raises(SweepError, match=r"pip install 'py_trees_manipulation\[ray\]'"):
        import_ray()


def test_ptm_sweep_cli(task_file, tmp_path, capsys):
    out = tmp_path / "cli"
    code = ptm_main(["sweep", task_file, "--grid", "blackboard.x=0.2,0.9", "--trials", "2", "--workers", "1",
                     "--backend", "fake", "--no-progress", "-o", str(out), "--min-success-rate", "0.4"])
    text = capsys.readouterr().out
    assert code == 0
    assert text.splitlines()[0].split() == ["blackboard.x", "runs", "successes", "success_rate", "95%", "CI", "errors"]
    assert "4 runs in" in text and "success rate 50.0 %" in text
    table = list(csv.DictReader(io.StringIO((out / "success_rates.csv").read_text())))
    assert [(t["blackboard.x"], t["successes"], t["runs"]) for t in table] == [("0.2", "0", "2"), ("0.9", "2", "2"), ("all", "2", "4")]
    code = ptm_main(["sweep", task_file, "--grid", "blackboard.x=0.2", "--backend", "fake", "--no-progress", "-o", str(out),
                     "--min-success-rate", "0.5"])
    assert code == 1
    assert ptm_main(["sweep", task_file, "--grid", "blackboard.x", "--no-progress"]) == 2
    assert "expected KEY=VALUES" in capsys.readouterr().err


def test_forkserver_preload_names_resolve():
    """The fork server skips a preload module that fails to import, silently: a renamed module would
    only make every worker slower. Every name must resolve; matplotlib (parent only) is not one."""
    import importlib.util

    from py_trees_manipulation.behaviors import BUILTIN_MODULES
    from py_trees_manipulation.scenarios.sweep import forkserver_preload

    names = forkserver_preload()
    assert [n for n in names if importlib.util.find_spec(n) is None] == []
    assert "py_trees_manipulation.sim" in set(names)
    assert not [n for n in names if n.split(".")[0] == "scipy"]  # the tactile filters need no scipy
    assert {f"py_trees_manipulation.behaviors.{m}" for m in BUILTIN_MODULES} <= set(names)
    assert not [n for n in names if n.split(".")[0] == "matplotlib"]


def test_a_run_imports_nothing_beyond_the_forkserver_preload():
    """A worker forked from the fork server starts with everything a run needs (here the tactile
    tactile fragile grasp), so its first run imports nothing new (scipy neither)."""
    import os
    import subprocess

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    script = (
        "import importlib, json, sys\n"
        "from py_trees_manipulation.scenarios.sweep import SweepJob, expand, forkserver_preload, run_trial\n"
        "for m in forkserver_preload(): importlib.import_module(m)\n"
        "before = set(sys.modules)\n"
        "row = run_trial(SweepJob('examples/fragile_grasp.yaml', 'default', (), expand(trials=1)[0]))\n"
        "print(json.dumps({'status': row['status'], 'new': sorted(set(sys.modules) - before),"
        " 'mpl': 'matplotlib' in sys.modules}))\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out == {"status": "SUCCESS", "new": [], "mpl": False}
