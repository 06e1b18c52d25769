"""The one-line verdict ``ptm run`` prints: the examples' headline metrics come first."""

from py_trees_manipulation.trees.runner import verdict_line


def test_headline_metrics_come_before_the_others_and_ten_are_shown():
    metrics = {f"extra_{i}": float(i) for i in range(12)}
    metrics.update({"grasp_changes": 2, "door_angle_deg": 61.7254})
    line = verdict_line({"status": "SUCCESS", "task": "t", "sim_time_s": 1.0, "wall_time_s": 0.5,
                         "ticks": 30, "metrics": metrics})
    shown = line.split("; ", 1)[1].split(", ")
    assert shown[:2] == ["grasp_changes=2", "door_angle_deg=61.725"]
    assert len(shown) == 10 and shown[2] == "extra_0=0.000"


def test_failure_line_names_the_behaviour_and_where():
    line = verdict_line({"status": "FAILURE", "task": "t", "metrics": {},
                         "failed_behaviour": {"type": "MoveCartesian", "name": "lift", "location": "a.yaml:3:5",
                                              "feedback": "blocked"}})
    assert line.splitlines()[1] == "  failed: MoveCartesian 'lift' (a.yaml:3:5): blocked"
