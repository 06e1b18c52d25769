"""A drawer's or a door's goals across a tree, against what the mechanism can do (issue 33 item 2, 5).

A tree asks a drawer to move in several nodes: ``CheckReachability`` checks the pull (``pull_m``),
``MoveAlongArc`` pulls it (``translation_m``), ``DrawerOpeningAtLeast`` accepts it open at least
``min_opening_m``; a door alike with ``open_angle``, ``angle`` and ``DoorAngleAtLeast``'s
``min_angle_deg``. Each node's own check sees one of them: shortening the pull to the drawer's
travel, as the pull's refusal asks, leaves a condition the drawer can then never meet. This check
looks at them together when the file is loaded (``ptm validate``, before ``ptm run`` starts) and
names every change one fix needs:

- a condition beyond the mechanism's travel (``min_opening_m`` > ``drawer_travel_m``, ``min_angle_deg``
  > ``max_opening_deg``): the drawer (door) cannot open that far, whatever the pull: a mechanism that
  travels further, or the condition lowered to the travel and every pull to at most it;
- a pull (arc) beyond the travel: every node that asks it, the largest value that works, and the
  conditions that value still meets or not;
- a condition more than the tree's pull (arc) moves it: the pull it would take;
- an arc that turns the door the way it does not open (``opening: push`` with a positive angle,
  ``pull`` with a negative one: ``MoveAlongArc``'s sign, + pulls, - pushes), a positive pull that
  pushes a closed drawer in: every node that moves it, set the other way.

A node names its mechanism (``cabinet``, ``door``), or the scene's only one; ``MoveAlongArc`` names
none and is counted when the scene has one mechanism of its kind. Values read from the blackboard
at run time are left to the run.
"""

from __future__ import annotations

import math
from typing import Any, Callable

__all__ = ["mechanism_goal_problems"]

#: (scene key, the spec's travel attribute, the unit's format, the goal nodes):
#: node type -> (its parameter, the mechanism parameter, its role: "check", "move" or "condition")
_KINDS = {
    "cabinets": ("drawer_travel_m", "m", {
        "CheckReachability": ("pull_m", "cabinet", "check"),
        "MoveAlongArc": ("translation_m", None, "move"),
        "DrawerOpeningAtLeast": ("min_opening_m", "cabinet", "condition")}),
    "doors": ("max_opening_deg", "deg", {
        "CheckReachability": ("open_angle", "door", "check"),
        "MoveAlongArc": ("angle", None, "move"),
        "DoorAngleAtLeast": ("min_angle_deg", "door", "condition")}),
}


def _num(v: Any) -> Any:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def mechanism_goal_problems(tree: Any, scene: Any, add: Callable[[Any, str, str], None]) -> None:
    """Check the tree's goals for each drawer and door of ``scene`` together (module docstring);
    ``add(loc, problem, hint)`` for each problem, at the line of the node to change first."""
    extra = getattr(scene, "extra", {}) or {}
    nodes = [n for n in tree.walk() if getattr(n, "category", "") == "behaviour"]
    for key, (travel_attr, unit, roles) in _KINDS.items():
        specs = list(extra.get(key) or ())
        only = specs[0].name if len(specs) == 1 else None
        for spec in specs:
            travel = float(getattr(spec.asset, travel_attr))
            found: dict[str, list] = {"check": [], "move": [], "condition": []}
            for n in nodes:
                role = roles.get(n.type)
                if role is None:
                    continue
                param, names, kind = role
                if n.type == "CheckReachability" and n.params.get(names) is None:
                    continue   # a reach check of something else
                target = n.params.get(names) if names else None
                if (target if target is not None else only) != spec.name:
                    continue
                value = _num(n.params.get(param))
                if value is None and n.type == "CheckReachability" and key == "cabinets":
                    continue   # the default pull: the drawer's travel
                if value is None:
                    continue
                found[kind].append((n, param, value))
            if not _direction(spec, key, found, add):
                _one(spec, key, travel, unit, found, add)
            if key == "cabinets":
                _resistance(spec, nodes, only, add)


def _resistance(spec: Any, nodes: list, only: Any, add: Callable[[Any, str, str], None]) -> None:
    """A pull whose wrist force bound the drawer's own resistance reaches: damping x the pull's cruise
    speed + friction (N), as the run's diagnosis counts it (``resistance_n``), at or over the
    ``MoveAlongArc``'s ``max_force_n``: the guard stops every such pull once the hand holds the bar.
    The fix is the bound the run's diagnosis names (1.25 x the resistance, in 5 N steps)."""
    from ..behaviors import registry

    cls = registry.lookup("MoveAlongArc")
    declared = cls.all_params() if cls is not None else {}
    asset = spec.asset
    for n in nodes:
        if n.type != "MoveAlongArc" or only != spec.name:
            continue   # MoveAlongArc names no mechanism: counted when the scene has one drawer
        move = _num(n.params.get("translation_m"))
        if move is None or move == 0:
            continue
        values = {k: _num(n.params[k]) if k in n.params else (declared[k].default if k in declared else None)
                  for k in ("speed_mps", "max_force_n")}
        speed, bound = values["speed_mps"], values["max_force_n"]
        if speed is None or bound is None:
            continue   # read from the blackboard: the run's
        resist = float(asset.drawer_damping) * speed + float(asset.drawer_friction)
        if resist < bound:
            continue
        works = 5.0 * math.ceil(1.25 * resist / 5.0)
        add(n.param_locs.get("max_force_n", n.loc),
            f"{n.type}.max_force_n: the drawer of {spec.name!r} resists {resist:.0f} N at {speed:g} m/s (its damping "
            f"{float(asset.drawer_damping):g} N*s/m and friction {float(asset.drawer_friction):g} N), at or over the "
            f"{bound:g} N wrist force bound: the pull would stop as soon as it starts",
            f"max_force_n: {works:g} (1.25 x the resistance), or a drawer with less friction")


def _direction(spec: Any, key: str, found: dict, add: Callable[[Any, str, str], None]) -> bool:
    """A move or check that turns the door (pushes the drawer) the way it does not open: refused
    at the first such node, with every node set the other way (the run's ``CheckReachability``
    says the same, after a base search when ``base_pose: auto``). True when one was reported."""
    moves = found["check"] + found["move"]
    if key == "doors":
        sign = int(spec.asset.arc_opening_sign)
        what = f"door {spec.name!r} opens by " + ("pulling it toward its front" if sign > 0 else
                                                  "pushing it away from its front")
        what += f" (opening: {spec.asset.opening})"
        unit, rule = "deg", "MoveAlongArc's sign: + pulls, - pushes"
    else:
        sign = -1
        what = f"the drawer of {spec.name!r} starts closed: it opens by pulling it out"
        unit, rule = "m", "negative pulls it out, along the handle's z into the front"
    wrong = [(n, p, v) for n, p, v in moves if v * sign < 0]
    if not wrong:
        return False
    n, p, v = wrong[0]
    fix = ", ".join(f"{m.type} '{m.name or m.type}' {q} {sign * abs(u):g}" for m, q, u in moves)
    add(n.param_locs.get(p, n.loc),
        f"{n.type}.{p}: {what}, and {v:g} {unit} moves it the other way, into its "
        f"{'frame' if key == 'doors' else 'cabinet'} ({rule})",
        f"set every {'arc' if key == 'doors' else 'pull'} the way it opens: {fix}")
    return True


def _fmt(v: float, unit: str) -> str:
    return f"{v:.3f} m" if unit == "m" else f"{v:g} deg"


def _who(entries: list) -> str:
    return ", ".join(f"{n.type} '{n.name or n.type}' {p} {v:g}" for n, p, v in entries)


def _one(spec: Any, key: str, travel: float, unit: str, found: dict, add: Callable[[Any, str, str], None]) -> None:
    what = f"the drawer of {spec.name!r}" if key == "cabinets" else f"door {spec.name!r}"
    limit_key = "drawer_travel_m" if key == "cabinets" else "max_opening_deg"
    moves = found["check"] + found["move"]
    pull = max((abs(v) for _, _, v in moves), default=None)
    word = "pull" if key == "cabinets" else "arc"
    verb = "travels" if key == "cabinets" else "opens at most"

    def pulls_to(value: float) -> str:
        """Every node that moves it, set to ``value`` (magnitude, sign kept)."""
        return ", ".join(f"{n.type} '{n.name or n.type}' {p} {(-value if v < 0 else value):g}" for n, p, v in moves)

    for n, p, need in found["condition"]:
        if need > travel + 1e-9:
            fix = (f"either a {key[:-1]} whose {limit_key} is at least {_fmt(need, unit)}, or {p} lowered to at most "
                   f"{_fmt(travel, unit)}" + (f" with the {word} at most that too ({pulls_to(travel)})" if pull is not None
                                               and pull > travel + 1e-9 else ""))
            add(n.param_locs.get(p, n.loc),
                f"{n.type}.{p}: {what} can never open {_fmt(need, unit)}: it {verb} {_fmt(travel, unit)} "
                f"({limit_key}), so this condition fails whatever the {word}", fix)
            return
    if pull is not None and pull > travel + 1e-9:
        first = max(moves, key=lambda e: abs(e[2]))
        n, p, v = first
        met = [c for c in found["condition"] if c[2] <= travel + 1e-9]
        add(n.param_locs.get(p, n.loc),
            f"{n.type}.{p}: the tree moves {what} {_fmt(pull, unit)}, more than it {verb}: {_fmt(travel, unit)} "
            f"({limit_key}; the mechanism bounds the {word}, not the arm)",
            f"set every {word} to at most {_fmt(travel, unit)}: {pulls_to(travel)}"
            + (f" ({_who(met)} is still met at that)" if met else "")
            + f"; or a {key[:-1]} whose {limit_key} is at least {_fmt(pull, unit)}")
        return
    if pull is not None:
        for n, p, need in found["condition"]:
            if need > pull + 1e-9:
                add(n.param_locs.get(p, n.loc),
                    f"{n.type}.{p}: the tree moves {what} {_fmt(pull, unit)} ({_who(moves)}), so it can never be "
                    f"open {_fmt(need, unit)}",
                    f"move it at least {_fmt(need, unit)} ({pulls_to(need)}; it {verb} {_fmt(travel, unit)}), or "
                    f"lower {p} to at most {_fmt(pull, unit)}")
                return
