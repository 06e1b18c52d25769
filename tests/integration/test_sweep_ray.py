"""A sweep on a local Ray instance (ray.init() in this process) gives the same table as the process pool."""

from __future__ import annotations

import pytest

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'py_trees_manipulation[ray]')")

from py_trees_manipulation.scenarios.sweep import SweepConfig, parse_grid, parse_random, run_sweep  # noqa: E402

# A real PyBullet scene (floor, a box dropped with seeded pose noise, no robot, so each run takes
# milliseconds: Ray's own start-up dominates). The tree succeeds iff the blackboard value x > the
# threshold; the box's metrics depend on the run's seed, so equal rows mean equal seeds and draws.
TASK = """\
name: threshold
blackboard: {x: 0.7}
scene:
  fixtures:
    - {name: floor, urdf: plane.urdf}
  objects:
    - name: box
      primitive: {shape: box, size: [0.05, 0.05, 0.05]}
      mass_kg: 0.1
      pose: {position: [0.5, 0, 0.1]}
      pose_noise: {position_m: 0.01, yaw_deg: 20}
  task: {target_object: box, place_position: [0.5, 0, 0.025]}
tree:
  Sequence:
    memory: true
    children:
      - Wait: {duration_s: 0.5}
      - CheckBlackboardVariableValue: {name: check_x, variable_name: x, operator: ">", value: 0.5}
"""


def test_ray_local_matches_process_pool(tmp_path):
    task = tmp_path / "threshold.yaml"
    task.write_text(TASK)
    base = dict(grid=[parse_grid("tree.check_x.value=0.3,0.6")], random=[parse_random("blackboard.x=0:1")],
                trials=3, seed=21, workers=2)
    pool = run_sweep(SweepConfig(str(task), executor="process", **base), progress=False)
    on_ray = run_sweep(SweepConfig(str(task), executor="ray", **base), progress=False)
    assert not ray.is_initialized()  # the sweep shut down the Ray instance it started
    assert on_ray.table_csv() == pool.table_csv()
    assert on_ray.runs_csv(deterministic=True) == pool.runs_csv(deterministic=True)
    assert len(pool.rows) == 6 and all(r["status"] in ("SUCCESS", "FAILURE") for r in pool.rows)
    # the seeds reach the simulator: the pose noise puts the box somewhere else in each trial
    errors = [r["place_error_m"] for r in pool.rows if r["point"] == 0]
    assert len(set(errors)) == 3 and all(0 < e < 0.05 for e in errors)
