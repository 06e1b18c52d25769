"""Rules and validators of the constraint graph, with HPP's semantics: :class:`Rule` (gripper and
handle patterns, link or not), :class:`Rules` (the first applying rule decides; a tuple no rule
matches is refused), :class:`PossibleGrasps` and :class:`GraspIsAllowed` (all validators must
accept). See :mod:`~.constraint_graph` for the deviation in pattern matching.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

from .graph_elements import GraspTuple

__all__ = ["Rule", "Rules", "PossibleGrasps", "GraspIsAllowed"]


@dataclass(frozen=True)
class Rule:
    """One accept/refuse rule, HPP's IDL struct ``Rule { grippers; handles; link; }``.

    ``grippers[j]`` pairs with ``handles[j]``; both are regular expressions. The rule *applies*
    to a grasp tuple when, for every gripper matched by some ``grippers[j]``, the name of the
    handle it holds (``""`` when empty) matches ``handles[j]``. Grippers matched by no pattern
    are unconstrained by this rule.

    Args:
        grippers: gripper-name patterns. ``""`` matches no gripper (HPP replaces it by ``"^$"``),
            so ``Rule([""], [""], True)`` has no condition and accepts everything (a quirk
            HPP's PR2 benchmark relies on).
        handles: handle-name patterns, same length as ``grippers``; ``""`` means "this gripper
            holds nothing".
        link: ``True`` accepts, ``False`` refuses.

    Example:
        ``Rule(["panda/hand"], ["box/.*"], True)`` accepts tuples where the hand holds a box
        handle; ``Rule(["panda/hand"], [""], True)`` accepts tuples where it is empty.
    """

    grippers: tuple[str, ...]
    handles: tuple[str, ...]
    link: bool = True

    def __init__(self, grippers: Sequence[str], handles: Sequence[str], link: bool = True):
        if isinstance(grippers, str) or isinstance(handles, str):
            raise TypeError("Rule grippers and handles must be lists of patterns, not strings")
        object.__setattr__(self, "grippers", tuple(grippers))
        object.__setattr__(self, "handles", tuple(handles))
        object.__setattr__(self, "link", bool(link))
        if len(self.grippers) != len(self.handles):
            raise ValueError(
                f"Rule needs one handle pattern per gripper pattern, got {len(self.grippers)} "
                f"gripper patterns and {len(self.handles)} handle patterns"
            )

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> "Rule":
        """Build from ``{"grippers": [...], "handles": [...], "link": bool}`` (YAML form)."""
        return cls(data["grippers"], data["handles"], data.get("link", True))


def _compile(pattern: str, match: str) -> Callable[[str], Any]:
    if pattern == "":
        pattern = "^$"  # HPP: empty string means "empty name", not "matches everything"
    rx = re.compile(pattern)
    if match == "full":
        return rx.fullmatch
    if match == "prefix":
        return rx.match
    raise ValueError(f"match must be 'full' or 'prefix', got {match!r}")


class Rules:
    """Validator compiled from an ordered rule list (HPP ``Rules``).

    Each rule is compiled into, per constrained gripper index, the set of allowed values
    (handle indices and/or ``None``), so evaluating a tuple costs no regex at all.

    Args:
        grippers: the factory's gripper names (snapshot, as in HPP).
        handles: the factory's handle names.
        rules: ordered :class:`Rule` list.
        match: ``"full"`` (whole-name, default, like HPP's C++ builder) or ``"prefix"``
            (``re.match``, like HPP's Python factory).

    Raises:
        ValueError: a gripper is matched by two patterns of the same rule (HPP asserts).
    """

    default_acceptation = False

    def __init__(
        self,
        grippers: Sequence[str],
        handles: Sequence[str],
        rules: Iterable[Rule],
        match: str = "full",
    ):
        self.grippers = tuple(grippers)
        self.handles = tuple(handles)
        self.rules = tuple(r if isinstance(r, Rule) else Rule.from_mapping(r) for r in rules)
        self.match = match
        compiled = []
        for rule in self.rules:
            conditions: dict[int, frozenset] = {}
            for gpat, hpat in zip(rule.grippers, rule.handles):
                gmatch = _compile(gpat, match)
                hmatch = _compile(hpat, match)
                allowed = frozenset(
                    [ih for ih, h in enumerate(self.handles) if hmatch(h)]
                    + ([None] if hmatch("") else [])
                )
                for ig, g in enumerate(self.grippers):
                    if gmatch(g):
                        if ig in conditions:
                            raise ValueError(
                                f"gripper {g!r} is matched twice by rule {rule}"
                            )
                        conditions[ig] = allowed
            compiled.append((tuple(conditions.items()), rule.link))
        self._compiled = tuple(compiled)

    def first_applying(self, grasps: GraspTuple) -> Optional[int]:
        """Index of the first rule that applies to ``grasps``, or ``None``."""
        for i, (conditions, _) in enumerate(self._compiled):
            if all(grasps[ig] in allowed for ig, allowed in conditions):
                return i
        return None

    def __call__(self, grasps: GraspTuple) -> bool:
        for conditions, link in self._compiled:
            for ig, allowed in conditions:
                if grasps[ig] not in allowed:
                    break
            else:
                return link
        return self.default_acceptation


class PossibleGrasps:
    """Validator from a ``{gripper: [handles it may hold]}`` dict (HPP ``possible_grasps.py``).

    A tuple is allowed iff every non-empty entry is in its gripper's list; grippers missing
    from the dict can hold nothing.

    Raises:
        ValueError: unknown gripper or handle name.
    """

    def __init__(
        self, grippers: Sequence[str], handles: Sequence[str], grasps: Mapping[str, Sequence[str]]
    ):
        self.grippers = tuple(grippers)
        self.handles = tuple(handles)
        allowed: list[frozenset] = [frozenset([None]) for _ in self.grippers]
        for g, hs in grasps.items():
            if g not in self.grippers:
                raise ValueError(f"unknown gripper {g!r} in possible grasps")
            idx = []
            for h in hs:
                if h not in self.handles:
                    raise ValueError(f"unknown handle {h!r} in possible grasps of {g!r}")
                idx.append(self.handles.index(h))
            allowed[self.grippers.index(g)] = frozenset([None, *idx])
        self._allowed = tuple(allowed)

    def __call__(self, grasps: GraspTuple) -> bool:
        return all(h in a for h, a in zip(grasps, self._allowed))


class GraspIsAllowed:
    """Logical AND of validators (HPP ``GraspIsAllowed``); with none, every tuple is allowed.

    A validator is any callable taking a grasp tuple and returning a bool.
    """

    def __init__(self) -> None:
        self.validators: list[Callable[[GraspTuple], bool]] = []

    def append(self, validator: Callable[[GraspTuple], bool]) -> None:
        """Add a validator; it is AND-ed with the existing ones."""
        self.validators.append(validator)

    def __call__(self, grasps: GraspTuple) -> bool:
        for v in self.validators:
            if not v(grasps):
                return False
        return True

    def __len__(self) -> int:
        return len(self.validators)
