"""Motion planning, pure: joint-space paths with OMPL, path checks, time parameterisation with ruckig.

Nothing here knows about PyBullet, py_trees or a scene: a validity test is a callable it is given
(``is_valid(q) -> bool``, ``q`` in radians), limits are arrays. The collision world
(:mod:`py_trees_manipulation.collision`) supplies the callable; the simulator and the hardware
backend run the result.

- :mod:`.paths`: piecewise-linear joint paths: length, densification, first invalid state.
- :mod:`.ompl_planning`: :func:`~.ompl_planning.plan_joint_path` (any OMPL geometric planner by
  name, RRTConnect by default; seeded, so the same seed gives the same path; simplified) and
  :data:`PLANNERS`, the planner names (no OMPL import needed to read them).
- :mod:`.timing`: :func:`~.timing.time_parameterize`: a piecewise-linear path timed segment by
  segment with ruckig under joint velocity, acceleration (and optional jerk) limits scaled by
  MoveIt's ``velocity_scaling`` / ``acceleration_scaling``, sampled at the controller rate.

OMPL and ruckig are imported inside the functions that use them, never at package import.
"""

from __future__ import annotations

#: OMPL geometric planners selectable by name (``ompl.geometric.<name>``), RRTConnect first (the
#: default). The optimising ones (RRTstar, InformedRRTstar, SORRTstar, BITstar, AORRTC) use their
#: whole time budget to improve the path. PRM and PRMstar are not offered: they grow their roadmap
#: in a second C++ thread, which cannot call a Python validity checker through the OMPL 2.x
#: bindings (``solve`` keeps the GIL: the query deadlocks).
PLANNERS: tuple[str, ...] = (
    "RRTConnect", "RRT", "RRTstar", "InformedRRTstar", "SORRTstar", "BITstar", "AORRTC",
    "KPIECE1", "BKPIECE1", "LBKPIECE1", "FMT", "BFMT",
)

#: Values of a motion's ``planner``: ``auto`` (the straight joint motion when it is collision-free,
#: else RRTConnect), ``straight`` (the straight joint motion or nothing) or an OMPL planner name.
PLANNER_CHOICES: tuple[str, ...] = ("auto", "straight", *PLANNERS)

DEFAULT_PLANNER = "RRTConnect"

__all__ = ["PLANNERS", "PLANNER_CHOICES", "DEFAULT_PLANNER"]
