"""An event detector armed beside a line that would trip it on the line's own start (issue 33, bad
input: "a speed too high for the guard to stop in time: exit 2 at validate with the number that
would work"). Measured in the simulator (examples/place_on_contact.yaml, 0.2 kg block, trigger 2
m/s^2): set down at 100 mm/s, dropped in the air from 110-130 mm/s on the three stock robots."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

from py_trees_manipulation.located.errors import TreeLoadError
from py_trees_manipulation.motion.timing import line_peak_acceleration
from py_trees_manipulation.trees.event_checks import fastest_speed
from py_trees_manipulation.trees.loader import load_task

EXAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "examples",
                       "place_on_contact.yaml")


def _problems(*sets: str) -> list[str]:
    with pytest.raises(TreeLoadError) as e:
        load_task(EXAMPLE, list(sets))
    return [str(p) for p in e.value.problems]


def test_the_shipped_set_down_and_slow_ones_load():
    for v in ("0.005", "0.02", "0.05", "0.09"):
        load_task(EXAMPLE, [f"parameters.lower_speed_mps={v}"])


def test_a_lower_too_fast_for_the_trigger_is_refused_at_its_speed_with_the_speed_that_works():
    (p,) = _problems("parameters.lower_speed_mps=0.13")
    assert "place_on_contact.yaml:" in p and "MoveCartesian.speed_mps: 'lower' at 0.13 m/s accelerates the hand at up to 2.85 m/s^2" in p
    assert ("the acceleration_trigger_magnitude of Release 'release', 2 m/s^2 (FINGER_SIDE_IMPACT_OR_SLIP_OR_ACC), "
            "armed beside it in Parallel 'set_down'") in p
    assert "raise acceleration_trigger_magnitude over 2.85 m/s^2" in p
    v = float(re.search(r"set speed_mps to at most ([0-9.]+) m/s", p).group(1))
    assert v == pytest.approx(0.0915, abs=2e-4)
    # the number given passes, 1 mm/s more does not: the 0.2 m line peaks under 2 m/s^2 there
    assert line_peak_acceleration(0.2, v) < 2.0 <= line_peak_acceleration(0.2, v + 0.001)
    load_task(EXAMPLE, [f"parameters.lower_speed_mps={v}"])


def test_each_fix_the_refusal_names_loads_and_other_triggers_are_not_checked():
    load_task(EXAMPLE, ["parameters.lower_speed_mps=0.13", "parameters.acceleration_trigger_magnitude=2.86"])
    # SLIP_AND_ACC (both needed) is not an acceleration-alone trigger: not checked (nor offered as a
    # fix: at 130 mm/s the slip never came and Release timed out with the block pressed into the table)
    load_task(EXAMPLE, ["parameters.lower_speed_mps=0.13", "parameters.trigger_conditions=SLIP_AND_ACC"])
    # a trigger of 0 fires at once on purpose (the PR2's "release now"): not this check's business
    load_task(EXAMPLE, ["parameters.lower_speed_mps=0.13", "parameters.trigger_conditions=ACC",
                        "parameters.acceleration_trigger_magnitude=0"])


def test_the_default_speed_and_a_speed_read_at_run_time():
    # MoveCartesian's default 0.1 m/s peaks at 2.19 m/s^2: over the example's 2 m/s^2 trigger
    (p,) = _problems("tree.lower.speed_mps=0.1")
    assert "at 0.1 m/s accelerates the hand at up to 2.19 m/s^2" in p
    # a speed from the blackboard is the run's to know
    load_task(EXAMPLE, ['tree.lower.speed_mps="{lower_speed}"', "blackboard.lower_speed=0.3"])


def test_fastest_speed_is_rounded_down_to_a_passing_number():
    for dist, trigger in ((0.2, 2.0), (None, 5.0), (0.05, 2.0)):
        v = fastest_speed(dist, trigger, 1.0)
        assert all(line_peak_acceleration(dist, u) < trigger for u in np.linspace(v / 2, v, 200))
        assert line_peak_acceleration(dist, v + 1e-3) >= trigger
