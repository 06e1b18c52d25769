"""The constraint graph's elements, after HPP: grasp tuples, states (:class:`State`), waypoint states
(:class:`WaypointState`), sub-edges (:class:`SubEdge`) and transitions (:class:`Transition`), and the
closed-form counts of states and transitions (Lamiraux & Mirabel, T-RO 2021). Names and the data
model: :mod:`~.constraint_graph`.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import comb, perm
from typing import Optional

__all__ = ["GraspTuple", "State", "WaypointState", "SubEdge", "Transition", "FORWARD", "BACKWARD", "LOOP",
           "WAYPOINT_KINDS", "expected_state_count", "expected_transition_pair_count", "expected_transition_count",
           "expected_ordered_sequence_count", "state_count_by_grasps"]

#: One entry per gripper: index of the held handle, or ``None`` when the gripper is empty.
GraspTuple = tuple  # tuple[Optional[int], ...]

#: Transition kinds: a forward edge adds a grasp, a backward edge removes one.
FORWARD = "forward"
BACKWARD = "backward"
LOOP = "loop"

#: Waypoint kinds in the order HPP chains them inside a forward transition.
WAYPOINT_KINDS = ("pregrasp", "intersec", "preplace")
_THREE_WAYPOINTS = WAYPOINT_KINDS
_ONE_WAYPOINT = ("pregrasp",)


# ---------------------------------------------------------------------------------------------
# Closed-form counts (Lamiraux & Mirabel T-RO 2021 and the reference notes, section 4.1)
# ---------------------------------------------------------------------------------------------


def state_count_by_grasps(n_grippers: int, n_handles: int, n_grasps: int) -> int:
    """Number of states with exactly ``n_grasps`` active grasps, ``C(n_h, k) * P(n_g, k)``."""
    if n_grasps < 0 or n_grasps > min(n_grippers, n_handles):
        return 0
    return comb(n_handles, n_grasps) * perm(n_grippers, n_grasps)


def expected_state_count(n_grippers: int, n_handles: int) -> int:
    """Number of non-waypoint states of the unrestricted graph (partial injective maps G -> H).

    ``S = sum_{m=0}^{min(n_g, n_h)} C(n_h, m) * n_g! / (n_g - m)!``; e.g. 7 for 2x2, 13,327 for
    6x6, 1,441,729 for 8x8.
    """
    return sum(
        state_count_by_grasps(n_grippers, n_handles, m)
        for m in range(min(n_grippers, n_handles) + 1)
    )


def expected_transition_pair_count(n_grippers: int, n_handles: int) -> int:
    """Number of unordered adjacent state pairs (each gives one forward + one backward edge).

    ``T = sum_m C(n_h, m) P(n_g, m) (n_g - m)(n_h - m)``, equivalently ``sum_k k * S_k``;
    e.g. 8 for 2x2, 55,656 for 6x6.
    """
    return sum(
        state_count_by_grasps(n_grippers, n_handles, m) * (n_grippers - m) * (n_handles - m)
        for m in range(min(n_grippers, n_handles) + 1)
    )


def expected_transition_count(n_grippers: int, n_handles: int, loops: bool = True) -> int:
    """Number of directed non-waypoint edges: ``2 T`` (+ ``S`` loop edges if ``loops``)."""
    n = 2 * expected_transition_pair_count(n_grippers, n_handles)
    if loops:
        n += expected_state_count(n_grippers, n_handles)
    return n


def expected_ordered_sequence_count(n_grippers: int, n_handles: int) -> int:
    """Ordered grasp sequences ``sum_k P(n_g, k) P(n_h, k)``.

    This is the number of recursive calls HPP's C++ builder makes (it never prunes) and the
    number of Python ``_recurse`` calls when rules refuse every tuple with two or more grasps
    (1,181,737 for 6x6).
    """
    return sum(
        perm(n_grippers, k) * perm(n_handles, k) for k in range(min(n_grippers, n_handles) + 1)
    )


# ---------------------------------------------------------------------------------------------
# Graph elements
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class State:
    """A non-waypoint state (HPP ``createNode(name, waypoint=False, priority)``).

    Attributes:
        grasps: the grasp tuple (key).
        name: full HPP name, e.g. ``"g1 grasps h2 : g2 grasps h1"`` or ``"free"``.
        abbrev: abbreviated name, e.g. ``"0-1:1-0"`` or ``"f"``.
        priority: ``0`` for the root, ``2k - 1`` for a state with ``k >= 1`` grasps (as HPP's
            recursion assigns it); HPP's state selector tries higher priority first.
        id: creation index (0-based).
    """

    grasps: GraspTuple
    name: str
    abbrev: str
    priority: int
    id: int

    @property
    def n_grasps(self) -> int:
        """Number of active grasps."""
        return sum(h is not None for h in self.grasps)


@dataclass(frozen=True, slots=True)
class WaypointState:
    """A waypoint state HPP inserts inside a transition (``createNode(name, waypoint=True)``).

    Attributes:
        name: ``"<forward transition name>_<kind>"``.
        kind: ``"pregrasp"`` (gripper at the approach offset, object still placed),
            ``"intersec"`` (object grasped and still on its surface) or ``"preplace"``
            (object grasped and lifted by the pre-place distance, 0.05 m by default in HPP).
        constraints: symbolic constraint names defining the state (e.g. ``"place_box"``,
            ``"panda/hand pregrasps box/top"``).
    """

    name: str
    kind: str
    constraints: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SubEdge:
    """An elementary (hidden, weight -1) edge of a waypoint transition chain.

    Attributes:
        name: ``"<fwd>_<i><i+1>"`` (forward) or ``"<bwd>_<i+1><i>"`` (backward).
        source, target: state or waypoint-state names.
        containing_state: name of the state the sub-edge lies in (its foliation applies).
        short: HPP ``setShort``: every sub-edge except the one leaving a real state.
    """

    name: str
    source: str
    target: str
    containing_state: str
    short: bool


@dataclass(frozen=True, slots=True)
class Transition:
    """A non-waypoint edge: forward (add grasp), backward (remove grasp) or loop.

    Attributes:
        name: HPP name (see module docstring).
        kind: ``"forward"``, ``"backward"`` or ``"loop"``.
        state_from, state_to: grasp tuples of the source and target states.
        gripper, handle: indices of the gripper/handle whose grasp changes (``None`` for loops).
        no_place: the object is held by another gripper in the state with fewer grasps, i.e.
            a handover / second grasp: no placement waypoints.
        waypoint_kinds: kinds of the waypoint states in *forward* order, e.g.
            ``("pregrasp", "intersec", "preplace")``; empty for loops.
        weight: HPP edge weight: 1 for a waypoint edge, 0 for a loop.
        level_set: HPP "crossed foliation": both end states are foliated, so HPP also builds a
            ``"<name>_ls"`` waypoint edge (weight 10) with a level-set first/last sub-edge (for
            the backward direction only when the object was placed).
    """

    name: str
    kind: str
    state_from: GraspTuple
    state_to: GraspTuple
    gripper: Optional[int]
    handle: Optional[int]
    no_place: bool
    waypoint_kinds: tuple[str, ...]
    weight: int
    level_set: bool
    forward_name: str

    @property
    def n_waypoints(self) -> int:
        """Number of waypoint states (``pregrasp + intersec + preplace``)."""
        return len(self.waypoint_kinds)

    @property
    def waypoint_names(self) -> tuple[str, ...]:
        """Waypoint state names in traversal order (reversed for a backward transition)."""
        names = tuple(f"{self.forward_name}_{k}" for k in self.waypoint_kinds)
        return names[::-1] if self.kind == BACKWARD else names

    @property
    def level_set_name(self) -> Optional[str]:
        """Name of the ``_ls`` waypoint edge HPP adds for crossed foliations, if any."""
        if not self.level_set or self.kind == LOOP:
            return None
        if self.kind == BACKWARD and self.no_place:
            return None
        return self.name + "_ls"


def _abbrev(grasps: GraspTuple) -> str:
    parts = [f"{ig}-{ih}" for ig, ih in enumerate(grasps) if ih is not None]
    return ":".join(parts) if parts else "f"
