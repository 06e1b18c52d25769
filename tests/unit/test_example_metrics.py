"""benchmarks/example_metrics.py's comparison: which values count as changed (issue 37 acceptance).

The runs themselves are the benchmark's (the real simulator, minutes); these check the tolerance
rules on hand-made records: 5 % relative, floors of 2 mm, 1 deg, 1 N; booleans and strings exactly;
wall-clock figures never compared; runs and metrics only one side has."""

import importlib.util
import os

import pytest

_PATH = os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks", "example_metrics.py")
_spec = importlib.util.spec_from_file_location("example_metrics", _PATH)
em = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(em)


@pytest.mark.parametrize("key, kind", [
    ("object_lift_m", "m"), ("place_error_m", "m"), ("door_angle_deg", "deg"), ("max_wrist_force_n", "n"),
    ("sim_time_s", "s"), ("base_poses.panda.position.0", "m"), ("base_poses.panda.rpy_deg.2", "deg"),
    ("drawers.drawer", "m"), ("doors.door", "deg"), ("grip_margin", None), ("slip_events", None),
    ("placed_on", None),
])
def test_unit_kind_from_the_innermost_suffix(key, kind):
    assert em.unit_kind(key) == kind


def test_floors_and_relative_tolerance():
    # 2 mm floor: 1.9 mm is the same, 2.1 mm is not (5 % of 0.15 m would be 7.5 mm: the larger wins)
    assert not em.differs("object_max_lift_m", 0.010, 0.0119)
    assert em.differs("object_max_lift_m", 0.010, 0.0121)
    assert not em.differs("object_lift_m", 0.150, 0.157)
    assert em.differs("object_lift_m", 0.150, 0.158)
    # 1 deg floor, 5 % of 61.7 deg = 3.1 deg
    assert not em.differs("object_tilt_deg", 0.0, 0.9)
    assert em.differs("object_tilt_deg", 0.0, 1.1)
    assert not em.differs("door_angle_deg", 61.7, 64.7)
    assert em.differs("door_angle_deg", 61.7, 65.0)
    # 1 N floor
    assert not em.differs("place_impact_n", 0.2, 1.1)
    assert em.differs("place_impact_n", 0.2, 1.3)
    # counts and ratios: 5 % only (a count of 2 must stay 2)
    assert em.differs("grasp_changes", 2, 3)
    assert not em.differs("grip_margin", 3.06, 3.2)
    assert em.differs("grip_margin", 3.06, 3.3)
    assert em.tolerance("max_wrist_force_n", 60.0, 62.0) == pytest.approx(3.1)
    # --exact: no floor, no relative part
    assert em.differs("object_lift_m", 0.150, 0.15001, rel=0.0, floors=False)


def test_booleans_strings_and_null_compare_exactly():
    assert em.differs("object_dropped", False, True)
    assert not em.differs("object_dropped", False, False)
    assert em.differs("chosen_grasp", "mug/top/315", "mug/top/0")
    assert em.differs("placed_on", None, "table")
    assert em.differs("crushed", False, 0)  # a bool is not the number 0
    assert em.differs("x", float("nan"), 1.0) and not em.differs("x", float("nan"), float("nan"))


def _rec(status="SUCCESS", **metrics):
    return {"status": status, "ticks": 100, "sim_time_s": 3.3, "failed_behaviour": None, "error": None,
            "metrics": metrics, "base_poses": {}, "timing": {"planning_time_s": 0.2}}


def test_compare_rows_runs_and_metrics_added_or_removed():
    old = {"_meta": {"commit": "a"},
           "pick/franka_panda": _rec(object_lift_m=0.15, object_dropped=False, old_only=1),
           "door/franka_panda": _rec(door_angle_deg=61.7),
           "gone/franka_panda": _rec()}
    new = {"_meta": {"commit": "b"},
           "pick/franka_panda": _rec(object_lift_m=0.151, object_dropped=True, placed_on="table"),
           "door/franka_panda": _rec("FAILURE", door_angle_deg=20.0),
           "pick/ufactory_xarm6": _rec()}
    new["door/franka_panda"]["timing"]["planning_time_s"] = 9.0  # wall clock: never a difference
    rows, only_old, only_new, added, removed = em.compare(old, new)
    assert [(r[0], r[1]) for r in rows] == [("door/franka_panda", "status"), ("door/franka_panda", "door_angle_deg"),
                                            ("pick/franka_panda", "object_dropped")]
    assert only_old == ["gone/franka_panda"] and only_new == ["pick/ufactory_xarm6"]
    assert added == {"placed_on": ["pick/franka_panda"]} and removed == {"old_only": ["pick/franka_panda"]}


def test_nested_metrics_are_flattened_and_wall_clock_kept_apart():
    flat = em._flatten({"doors": {"door": 61.7}, "crushed_objects": [], "position": [0.1, 0.2, 0.0],
                        "targets": ["a grasp of 'box'"]})
    assert flat == {"doors.door": 61.7, "crushed_objects": [], "position.0": 0.1, "position.1": 0.2,
                    "position.2": 0.0, "targets": ["a grasp of 'box'"]}
    keep, timing = em._split_timing({"plan_time_ms": 3.0, "panda.search_time_s": 1.0, "grasp_changes": 2})
    assert keep == {"grasp_changes": 2} and timing == {"plan_time_ms": 3.0, "panda.search_time_s": 1.0}


def test_overrides_put_every_robot_on_the_model():
    assert em.overrides_for("pick_and_lift", "franka_panda", 1) == []
    assert em.overrides_for("pick_and_lift", "kuka_iiwa_wsg50", 1) == ["scene.robots.0.model=kuka_iiwa_wsg50"]
    assert em.overrides_for("open_drawer", "kuka_iiwa_wsg50", 1) == [
        "scene.robots.0.model=kuka_iiwa_wsg50", "scene.robots.0.base_pose=auto"]
    assert em.overrides_for("open_drawer", "ufactory_xarm6", 1) == ["scene.robots.0.model=ufactory_xarm6"]
    assert em.overrides_for("handover", "kuka_iiwa_wsg50", 2) == [
        "scene.robots.0.model=kuka_iiwa_wsg50", "scene.robots.1.model=kuka_iiwa_wsg50"]
