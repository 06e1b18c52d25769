"""The ``motion_planning:`` scene section (``padding_m``, ``max_step_rad``), parsed without a
physics client; the simulator side is :mod:`py_trees_manipulation.sim.planning`. This module imports
no PyBullet, so ``ptm validate`` checks a scene without loading the simulator.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..spec import PathT, SceneError, _mapping, _number, register_section

__all__ = ["MotionPlanningSettings", "parse_motion_planning"]


@dataclass(frozen=True)
class MotionPlanningSettings:
    """The parsed ``scene.motion_planning`` section."""

    padding_m: float = 0.01
    max_step_rad: float = 0.01


def parse_motion_planning(value: Any, path: PathT) -> MotionPlanningSettings:
    d = _mapping(value, path, "motion_planning")
    for k in d:
        if k not in ("padding_m", "max_step_rad"):
            raise SceneError(path + (k,), f"unknown key {k!r} in scene.motion_planning; accepted: padding_m, max_step_rad")
    return MotionPlanningSettings(padding_m=_number(d, "padding_m", path, 0.01, ge=0.0, le=0.2, unit="m"),
                                  max_step_rad=_number(d, "max_step_rad", path, 0.01, gt=0.0, le=0.2, unit="rad"))


register_section("motion_planning", parse_motion_planning,
                 "collision checking of arm motions: padding_m (0.01), max_step_rad (0.01) (see `sim/planning.py`)")
