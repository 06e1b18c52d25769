"""An armed event detector against the motions that run beside it (issue 33, "bad input").

The PR2 place (``examples/place_on_contact.yaml``) lowers the hand with a ``MoveCartesian`` while a
``Release`` (or an ``EventDetector``) waits in the same ``Parallel`` for the touch-down. With a
trigger that an acceleration alone fulfils (``ACC``, ``FINGER_SIDE_IMPACT_OR_ACC``,
``FINGER_SIDE_IMPACT_OR_SLIP_OR_ACC``; not ``SLIP_AND_ACC``, which also needs a slip), the palm
accelerometer fires as soon as the hand's own motion accelerates it past
``acceleration_trigger_magnitude``: the gripper opens in the air and the object falls (measured on
the three stock robots with the 0.2 kg block and the 2 m/s^2 trigger: dropped from 110-130 mm/s, set
down at 100 mm/s). The PR2's documentation gives the rule ("about 2 for slow delicate motions, 5 for
large fast ones"); this check gives the number.

A line's own acceleration is known before it runs: its speed profile (trapezoidal, 0.1 s ramps)
through the C1 curve the joints follow peaks at about 21.9 m/s^2 per m/s of speed
(:func:`~py_trees_manipulation.motion.timing.line_peak_acceleration`; the stock robots' palm
accelerometers read 18-19.6 m/s^2 per m/s at the start of a lower). When the file is loaded
(``ptm validate``, before ``ptm run`` starts), every ``MoveCartesian`` in another branch of a
``Parallel`` that holds such a detector, with a literal ``speed_mps`` (or its default), is checked:
a peak at or over the trigger is refused at the line's ``speed_mps``, with the fastest speed that
stays under it, or the trigger that the line stays under (``SLIP_AND_ACC`` is not offered: at 130
mm/s its acceleration half latched at the start and the slip never came, the block pressed into the
table at 135 N a pad until Release's 30 s timeout). Values read from the
blackboard at run time are left to the run; joint motions (``MoveJoints``, ``MoveToPose``) beside an
armed detector are not checked.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Optional

__all__ = ["armed_event_problems", "ACC_ALONE_TRIGGERS", "DETECTORS"]

#: trigger conditions that an acceleration event alone fulfils
ACC_ALONE_TRIGGERS = ("ACC", "FINGER_SIDE_IMPACT_OR_ACC", "FINGER_SIDE_IMPACT_OR_SLIP_OR_ACC")
#: behaviours that arm the PR2 event detector
DETECTORS = ("Release", "EventDetector")


def _num(v: Any) -> Optional[float]:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _param(node: Any, name: str) -> Any:
    """The node's literal value of ``name``, or its behaviour's default."""
    if name in node.params:
        return node.params[name]
    from ..behaviors import registry

    cls = registry.lookup(node.type)
    spec = getattr(cls, "PARAMS", {}).get(name) if cls is not None else None
    return getattr(spec, "default", None)


def _line_length(node: Any) -> Optional[float]:
    delta = node.params.get("delta")
    if isinstance(delta, (list, tuple)) and len(delta) == 3 and all(_num(v) is not None for v in delta):
        return float(sum(float(v) ** 2 for v in delta) ** 0.5)
    return None


def fastest_speed(dist_m: Optional[float], trigger_mps2: float, top_mps: float) -> float:
    """The fastest speed (m/s, rounded down to 0.1 mm/s, at most ``top_mps``) at which a line of
    ``dist_m`` (None: a long one) peaks under ``trigger_mps2``, and every speed below it too.

    The peak grows with the speed but dips by a few per cent at isolated speeds, where the ramps'
    ends fall on a waypoint (:func:`~py_trees_manipulation.motion.timing.line_peak_acceleration`):
    the bisection runs on the largest peak within 0.2 mm/s of each speed, so it never lands in a dip
    above speeds that fail."""
    from ..motion.timing import line_peak_acceleration

    step = 1e-4

    def envelope(v: float) -> float:
        return max(line_peak_acceleration(dist_m, u) for u in (v + k * step for k in range(-2, 3)) if u > 0)

    lo, hi = 0.0, float(top_mps)
    while hi - lo > step:
        mid = 0.5 * (lo + hi)
        if envelope(mid) < trigger_mps2:
            lo = mid
        else:
            hi = mid
    return math.floor(lo / step) * step


def armed_event_problems(tree: Any, scene: Any, add: Callable[[Any, str, str], None]) -> None:
    """Check every ``Parallel`` of ``tree`` (module docstring); ``add(loc, problem, hint)`` for each
    line too fast for a detector beside it, at the line's ``speed_mps`` (or the node, for the
    default)."""
    from ..motion.timing import LINE_RAMP_S, line_peak_acceleration

    for par in tree.walk():
        if par.type != "Parallel":
            continue
        for i, branch in enumerate(par.children):
            for det in branch.walk():
                if det.type not in DETECTORS:
                    continue
                cond = _param(det, "trigger_conditions")
                trigger = _num(_param(det, "acceleration_trigger_magnitude"))
                if cond not in ACC_ALONE_TRIGGERS or trigger is None or trigger <= 0:
                    continue   # a 0 trigger fires at once, on purpose; SLIP_AND_ACC also needs a slip
                for j, other in enumerate(par.children):
                    if j == i:
                        continue
                    for line in other.walk():
                        if line.type != "MoveCartesian":
                            continue
                        if "speed_mps" not in line.params and "speed_mps" in line.param_locs:
                            continue   # given, and already refused as no speed
                        speed = _num(_param(line, "speed_mps"))
                        if speed is None or speed <= 0:
                            continue
                        dist = _line_length(line)
                        peak = line_peak_acceleration(dist, speed)
                        if peak < trigger:
                            continue
                        v = fastest_speed(dist, trigger, speed)
                        given = "speed_mps" if "speed_mps" in line.params else "speed_mps (its default)"
                        add(line.param_locs.get("speed_mps", line.loc),
                            f"MoveCartesian.{given}: '{line.name or line.type}' at {speed:g} m/s accelerates the hand "
                            f"at up to {peak:.2f} m/s^2 as it starts ({LINE_RAMP_S:g} s speed ramps), at or over "
                            f"the acceleration_trigger_magnitude of {det.type} '{det.name or det.type}', {trigger:g} m/s^2 "
                            f"({cond}), armed beside it in Parallel '{par.name or par.type}': the palm accelerometer "
                            "would fire on the line's own start and the gripper would open in the air",
                            f"set speed_mps to at most {v:.4g} m/s; or raise acceleration_trigger_magnitude over "
                            f"{peak:.2f} m/s^2 (the PR2's advice: about 5 for large fast motions)")
