"""Constraint-graph factory for grasp/placement modes, after HPP's ``GraphFactoryAbstract``.

This is a pure-Python re-implementation (no code copied) of the combinatorial part of
``hpp.corbaserver.manipulation.constraint_graph_factory`` (hpp-manipulation-corba 6.0.0): which
*states* (sets of active grasps) and *transitions* (add or remove one grasp) exist, how they are
named, which waypoint states HPP inserts inside each transition and which priority each state
gets. It builds no numerical constraint; the geometric layer maps the symbolic constraint names
(``"<g> grasps <h>"``, ``"place_<o>"``, ...) onto IK targets and placements.

Data model (HPP's):

* ``grippers``: ordered gripper names ``G``; ``handles``: ordered handle names ``H``, the
  concatenation of every object's handle list (:meth:`ConstraintGraphFactory.set_objects`).
* A **grasp tuple** (the key of a state) has one entry per gripper: the index of the handle it
  holds, or ``None`` when the gripper is empty. It is a partial injective map ``G -> H``: one
  gripper holds at most one handle and one handle is held by at most one gripper. Example with
  grippers ``("g1", "g2", "g3")`` and handles ``("h1", "h2")``: ``(1, 0, None)`` means g1 holds
  h2, g2 holds h1, g3 holds nothing.
* Transitions only join *adjacent* states (tuples differing in one gripper, empty on one side):
  there is no direct "swap" edge, a regrasp passes through the state where the gripper is empty.

Names (exactly HPP's, see ``_stateName`` / ``_transitionNames`` / ``_loopTransitionName``):

* state: ``"g1 grasps h2 : g2 grasps h1"`` in gripper order, ``"free"`` when empty;
  abbreviated ``"0-1:1-0"`` / ``"f"``;
* forward (grasp) transition: ``"<g> > <h> | <abbrev of FROM>"``, e.g. ``"pr2/l_gripper >
  box/handle2 | f"``; backward (release): ``"<g> < <h> | <abbrev of TO-with-more-grasps>"``,
  e.g. ``"pr2/l_gripper < box/handle2 | 0-0"``; loop: ``"Loop | <abbrev>"``;
* waypoint states ``"<fwd>_pregrasp"``, ``"<fwd>_intersec"``, ``"<fwd>_preplace"``; sub-edges
  ``"<fwd>_01"``, ``"<fwd>_12"``... and ``"<bwd>_10"``, ``"<bwd>_21"``...; level-set variants
  ``"<fwd>_ls"``, ``"<bwd>_ls"``, ``"<fwd>_01_ls"``, ``"<bwd>_<n><n-1>_ls"``.

Rules (:class:`Rule`, :meth:`ConstraintGraphFactory.set_rules`) follow HPP's semantics: rules are
tried in order and the **first applying rule decides** (accept if ``link`` else refuse); once
any rule is set a tuple matched by no rule is **refused**; ``""`` as a handle pattern means "this
gripper holds nothing". **Deviation**: patterns are matched against the *whole* name
(``re.fullmatch``, like HPP's C++ ``boost::regex_match`` in ``graph::helper``), whereas HPP's
Python factory uses ``re.match`` (prefix: ``"box/h"`` also matches ``"box/h2"``). Pass
``match="prefix"`` to :meth:`~ConstraintGraphFactory.set_rules` to reproduce the Python factory.

Complexity: the number of states is the number of partial injective maps (13,327 for 6 grippers
x 6 handles, :func:`expected_state_count`). :meth:`ConstraintGraphFactory.generate` follows HPP's
recursion but remembers refused tuples, so rules that refuse intermediate states do not trigger
HPP's re-enumeration (1,181,737 recursive calls for 6x6 "at most one grasp"); the resulting
states, transitions, priorities and creation order are the same as HPP's. For search without
building the graph, use :meth:`ConstraintGraphFactory.neighbours` (see
:mod:`py_trees_manipulation.planning.regrasp`).

Sources: hpp-manipulation-corba ``constraint_graph_factory.py`` (GraphFactoryAbstract, Rules,
ConstraintGraphFactory.makeTransition), ``possible_grasps.py``, ``graph.idl`` (``Rule``);
Lamiraux & Mirabel, "Prehensile Manipulation Planning: Modeling, Algorithms and Implementation",
IEEE T-RO 2021 (state count, adjacency, waypoint transitions).

The code lives in modules by concept: :mod:`~.graph_elements` (states, transitions, counts),
:mod:`~.graph_rules` (rules and validators); this module holds the factory (names, generation,
neighbours) and gathers their names.
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Mapping, Optional, Sequence

from .graph_elements import (BACKWARD, FORWARD, LOOP, WAYPOINT_KINDS, GraspTuple, State, SubEdge,  # noqa: F401
                             Transition, WaypointState, _abbrev, _ONE_WAYPOINT, _THREE_WAYPOINTS,
                             expected_ordered_sequence_count, expected_state_count, expected_transition_count,
                             expected_transition_pair_count, state_count_by_grasps)
from .graph_rules import GraspIsAllowed, PossibleGrasps, Rule, Rules

__all__ = [
    "GraspTuple",
    "Rule",
    "Rules",
    "PossibleGrasps",
    "GraspIsAllowed",
    "State",
    "WaypointState",
    "SubEdge",
    "Transition",
    "ConstraintGraphFactory",
    "expected_state_count",
    "expected_transition_pair_count",
    "expected_transition_count",
    "expected_ordered_sequence_count",
    "state_count_by_grasps",
]


class ConstraintGraphFactory:
    """Combinatorial constraint-graph factory (HPP ``GraphFactoryAbstract`` +
    ``ConstraintGraphFactory.makeTransition`` topology), Python-style names.

    Usage (same call order as HPP: rules snapshot grippers/handles, so set them after
    :meth:`set_grippers` and :meth:`set_objects`)::

        f = ConstraintGraphFactory()
        f.set_grippers(["panda/hand"])
        f.set_objects(["box"], [["box/top", "box/side"]], [["box/bottom"]])
        f.environment_contacts(["table/top"])
        f.set_rules([Rule([".*"], [".*"], True)])
        f.generate()
        f.states[(None,)].name        # 'free'
        sorted(f.transitions)         # ['Loop | 0-0', ..., 'panda/hand > box/top | f', ...]

    Subclasses may override :meth:`make_state`, :meth:`make_transition`,
    :meth:`make_loop_transition` and :meth:`transition_is_allowed` (HPP's algorithm hooks).

    Attributes:
        grasp_is_allowed: :class:`GraspIsAllowed`; append your own ``callable(grasps) -> bool``.
        states: ``{grasp tuple: State}`` in creation order (after :meth:`generate`).
        transitions: ``{name: Transition}`` for forward, backward and loop edges.
        grippers, handles, objects, env_contacts: name tuples.
        handles_per_object: per object, tuple of handle indices.
        object_from_handle: per handle, its object index.
        contacts_per_object: per object, tuple of contact-surface names.
        handle_masks: ``{handle name: 6 bools}``; a handle whose mask is not all True has a
            grasp complement (free DOF, e.g. an axial handle) and so foliates the states it
            is held in (only used for the ``level_set`` flag).
        recurse_calls: number of recursive calls made by the last :meth:`generate`.
    """

    def __init__(self) -> None:
        self.grasp_is_allowed = GraspIsAllowed()
        self.states: dict[GraspTuple, State] = {}
        self.transitions: dict[str, Transition] = {}
        self.grippers: tuple[str, ...] = ()
        self.handles: tuple[str, ...] = ()
        self.env_contacts: tuple[str, ...] = ()
        self.objects: tuple[str, ...] = ()
        self.handles_per_object: tuple[tuple[int, ...], ...] = ()
        self.object_from_handle: tuple[int, ...] = ()
        self.contacts_per_object: tuple[tuple[str, ...], ...] = ()
        self.handle_masks: dict[str, tuple[bool, ...]] = {}
        self.recurse_calls = 0
        self._pairs: set[tuple[str, str]] = set()

    # ------------------------------------------------------------------ configuration

    def set_grippers(self, grippers: Sequence[str]) -> None:
        """Set the ordered gripper names (the order defines grasp-tuple positions)."""
        if isinstance(grippers, str):
            raise TypeError("grippers must be a list of names")
        if len(set(grippers)) != len(grippers):
            raise ValueError(f"duplicate gripper names in {list(grippers)}")
        self.grippers = tuple(grippers)

    def set_objects(
        self,
        objects: Sequence[str],
        handles_per_object: Sequence[Sequence[str]],
        contacts_per_object: Sequence[Sequence[str]],
    ) -> None:
        """Register objects, their handles and their contact surfaces.

        Args:
            objects: object names.
            handles_per_object: one list of handle names per object; handle indices follow
                the concatenation order.
            contacts_per_object: one list of contact-surface names per object (may be empty:
                the object then has no placement constraint, HPP locks its joints instead).

        Raises:
            IndexError: list lengths differ (as HPP).
            ValueError: duplicate handle names.
        """
        if len(objects) != len(handles_per_object):
            raise IndexError("There should be as many handles_per_object as objects")
        if len(objects) != len(contacts_per_object):
            raise IndexError("There should be as many contacts_per_object as objects")
        handles: list[str] = []
        hpo, ofh, cpo = [], [], []
        for io, _ in enumerate(objects):
            hs = list(handles_per_object[io])
            hpo.append(tuple(range(len(handles), len(handles) + len(hs))))
            handles.extend(hs)
            ofh.extend([io] * len(hs))
            cpo.append(tuple(contacts_per_object[io]))
        if len(set(handles)) != len(handles):
            raise ValueError(f"duplicate handle names in {handles}")
        self.objects = tuple(objects)
        self.handles = tuple(handles)
        self.handles_per_object = tuple(hpo)
        self.object_from_handle = tuple(ofh)
        self.contacts_per_object = tuple(cpo)

    def environment_contacts(self, env_contacts: Sequence[str]) -> None:
        """Set the environment contact-surface names (e.g. ``["table/top"]``)."""
        self.env_contacts = tuple(env_contacts)

    def set_rules(self, rules: Iterable[Rule], match: str = "full") -> Rules:
        """Append a rule validator to :attr:`grasp_is_allowed` (call after grippers/objects).

        Args:
            rules: ordered :class:`Rule` list (or mappings with grippers/handles/link).
            match: ``"full"`` whole-name regex match (default; HPP C++ ``regex_match``) or
                ``"prefix"`` (HPP Python ``re.match``).

        Returns:
            The compiled :class:`Rules` validator.
        """
        validator = Rules(self.grippers, self.handles, rules, match=match)
        self.grasp_is_allowed.append(validator)
        return validator

    def set_possible_grasps(self, grasps: Mapping[str, Sequence[str]]) -> PossibleGrasps:
        """Append a :class:`PossibleGrasps` validator (AND-ed with rules)."""
        validator = PossibleGrasps(self.grippers, self.handles, grasps)
        self.grasp_is_allowed.append(validator)
        return validator

    def set_handle_masks(self, masks: Mapping[str, Sequence[bool]]) -> None:
        """Declare HPP handle masks (6 bools: x, y, z, rx, ry, rz constrained by the grasp)."""
        for h, m in masks.items():
            if h not in self.handles:
                raise ValueError(f"unknown handle {h!r}")
            if len(m) != 6:
                raise ValueError(f"handle mask of {h!r} needs 6 booleans, got {len(m)}")
            self.handle_masks[h] = tuple(bool(x) for x in m)

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> "ConstraintGraphFactory":
        """Build a configured (not generated) factory from a plain mapping (YAML form).

        Keys: ``grippers`` (list); ``objects`` as a list of ``{name, handles, contacts}``
        mappings; ``environment_contacts`` (list, optional); ``rules`` (list of
        ``{grippers, handles, link}``, optional); ``rule_match`` (``"full"``/``"prefix"``);
        ``possible_grasps`` (mapping, optional); ``handle_masks`` (mapping, optional).
        """
        f = cls()
        f.set_grippers(list(config["grippers"]))
        objs = config.get("objects", [])
        f.set_objects(
            [o["name"] for o in objs],
            [list(o.get("handles", [])) for o in objs],
            [list(o.get("contacts", [])) for o in objs],
        )
        f.environment_contacts(list(config.get("environment_contacts", [])))
        if config.get("handle_masks"):
            f.set_handle_masks(config["handle_masks"])
        if config.get("rules") is not None:
            f.set_rules(
                [r if isinstance(r, Rule) else Rule.from_mapping(r) for r in config["rules"]],
                match=config.get("rule_match", "full"),
            )
        if config.get("possible_grasps") is not None:
            f.set_possible_grasps(config["possible_grasps"])
        return f

    # ------------------------------------------------------------------ names and tuples

    def state_name(self, grasps: GraspTuple, abbrev: bool = False) -> str:
        """HPP state name of a grasp tuple (``"free"`` / ``"f"`` when empty)."""
        if abbrev:
            return _abbrev(grasps)
        parts = [
            f"{self.grippers[ig]} grasps {self.handles[ih]}"
            for ig, ih in enumerate(grasps)
            if ih is not None
        ]
        return " : ".join(parts) if parts else "free"

    def parse_state_name(self, name: str) -> GraspTuple:
        """Inverse of :meth:`state_name` (full or abbreviated form).

        Raises:
            ValueError: unknown gripper/handle or malformed name.
        """
        grasps: list[Optional[int]] = [None] * len(self.grippers)
        if name in ("free", "f"):
            return tuple(grasps)
        try:
            if " grasps " in name:
                for part in name.split(" : "):
                    g, h = part.split(" grasps ")
                    grasps[self.grippers.index(g)] = self.handles.index(h)
            else:
                for part in name.split(":"):
                    g, h = part.split("-")
                    ig, ih = int(g), int(h)
                    if not (0 <= ig < len(self.grippers) and 0 <= ih < len(self.handles)):
                        raise IndexError(part)
                    grasps[ig] = ih
        except (ValueError, IndexError) as exc:
            raise ValueError(f"cannot parse state name {name!r}: {exc}") from None
        out = tuple(grasps)
        self.check_grasps(out)
        return out

    def grasps_from_names(self, mapping: Mapping[str, Optional[str]]) -> GraspTuple:
        """Grasp tuple from ``{gripper name: handle name or None}``; unlisted grippers empty.

        Raises:
            ValueError: unknown names or one handle held twice.
        """
        grasps: list[Optional[int]] = [None] * len(self.grippers)
        for g, h in mapping.items():
            if g not in self.grippers:
                raise ValueError(f"unknown gripper {g!r}; grippers are {list(self.grippers)}")
            if h is not None and h != "":
                if h not in self.handles:
                    raise ValueError(f"unknown handle {h!r}; handles are {list(self.handles)}")
                grasps[self.grippers.index(g)] = self.handles.index(h)
        out = tuple(grasps)
        self.check_grasps(out)
        return out

    def names_from_grasps(self, grasps: GraspTuple) -> dict[str, Optional[str]]:
        """``{gripper name: handle name or None}`` for a grasp tuple."""
        return {
            g: (None if ih is None else self.handles[ih]) for g, ih in zip(self.grippers, grasps)
        }

    def check_grasps(self, grasps: GraspTuple) -> None:
        """Validate shape and injectivity of a grasp tuple.

        Raises:
            ValueError: wrong length, bad handle index or a handle held by two grippers.
        """
        if len(grasps) != len(self.grippers):
            raise ValueError(
                f"grasp tuple {grasps} has {len(grasps)} entries, expected one per gripper "
                f"({len(self.grippers)})"
            )
        held = [h for h in grasps if h is not None]
        for h in held:
            if not isinstance(h, int) or not 0 <= h < len(self.handles):
                raise ValueError(f"invalid handle index {h!r} in {grasps}")
        if len(set(held)) != len(held):
            raise ValueError(f"a handle is held by two grippers in {grasps}")

    def transition_names(
        self, state_from: GraspTuple, state_to: GraspTuple, ig: int
    ) -> tuple[str, str]:
        """(forward, backward) names of the transition adding ``state_to[ig]`` to gripper ig."""
        g = self.grippers[ig]
        h = self.handles[state_to[ig]]
        return (f"{g} > {h} | {_abbrev(state_from)}", f"{g} < {h} | {_abbrev(state_to)}")

    def parse_transition_name(self, name: str) -> tuple[GraspTuple, GraspTuple]:
        """(state_from, state_to) of a forward/backward/loop transition name.

        Raises:
            ValueError: malformed name, unknown gripper/handle, or inconsistent state.
        """
        head, sep, abbrev = name.rpartition(" | ")
        if not sep:
            raise ValueError(f"not a transition name: {name!r}")
        for suffix in ("_ls",):
            if abbrev.endswith(suffix):
                abbrev = abbrev[: -len(suffix)]
        state = self.parse_state_name(abbrev)
        if head == "Loop":
            return state, state
        for op in (" > ", " < "):
            for ig, g in enumerate(self.grippers):
                prefix = g + op
                if head.startswith(prefix) and head[len(prefix):] in self.handles:
                    ih = self.handles.index(head[len(prefix):])
                    if op == " > ":
                        if state[ig] is not None:
                            break
                        to = state[:ig] + (ih,) + state[ig + 1:]
                        self.check_grasps(to)
                        return state, to
                    if state[ig] != ih:
                        break
                    return state, state[:ig] + (None,) + state[ig + 1:]
        raise ValueError(f"cannot parse transition name {name!r}")

    def loop_transition_name(self, grasps: GraspTuple) -> str:
        """``"Loop | <abbrev>"``."""
        return "Loop | " + _abbrev(grasps)

    def is_object_grasped(self, grasps: GraspTuple, obj: int) -> bool:
        """Whether any handle of object index ``obj`` is held in ``grasps``."""
        return any(h in grasps for h in self.handles_per_object[obj])

    def object_has_placement(self, obj: int) -> bool:
        """HPP builds ``place_<o>``/``preplace_<o>`` iff the object and environment both have
        contact surfaces; otherwise the object's joints are locked (no placement waypoints)."""
        return bool(self.contacts_per_object[obj]) and bool(self.env_contacts)

    # ------------------------------------------------------------------ symbolic constraints

    def state_constraints(self, grasps: GraspTuple) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Symbolic (manifold, foliation) constraint names of a state (HPP StateAndManifold).

        Manifold: ``"<g> grasps <h>"`` per active grasp and ``"place_<o>"`` per free object
        with a placement. Foliation: ``"<g> grasps <h>/complement"`` for handles with a free
        DOF (mask), ``"place_<o>/complement"`` per free object with a placement, or
        ``"<o>/lock"`` (HPP: locked joints of the object) when it has none.
        """
        manifold: list[str] = []
        foliation: list[str] = []
        for ig, ih in enumerate(grasps):
            if ih is not None:
                n = f"{self.grippers[ig]} grasps {self.handles[ih]}"
                manifold.append(n)
                if not all(self.handle_masks.get(self.handles[ih], (True,) * 6)):
                    foliation.append(n + "/complement")
        for io, o in enumerate(self.objects):
            if not self.is_object_grasped(grasps, io):
                if self.object_has_placement(io):
                    manifold.append(f"place_{o}")
                    foliation.append(f"place_{o}/complement")
                else:
                    foliation.append(f"{o}/lock")
        return tuple(manifold), tuple(foliation)

    def _grasped_objects(self, grasps: GraspTuple) -> set[int]:
        ofh = self.object_from_handle
        return {ofh[h] for h in grasps if h is not None}

    def _is_foliated(self, grasps: GraspTuple) -> bool:
        masks = self.handle_masks
        if masks:
            for ih in grasps:
                if ih is not None and not all(masks.get(self.handles[ih], (True,) * 6)):
                    return True
        return len(self._grasped_objects(grasps)) < len(self.objects)

    def describe_transition(self, state_from: GraspTuple, state_to: GraspTuple) -> Transition:
        """The :class:`Transition` between two adjacent states (either direction), or a loop.

        Pure function of the configuration: used by :meth:`make_transition` and by the lazy
        search, so both name edges identically.

        Raises:
            ValueError: the states are not adjacent.
        """
        if state_from == state_to:
            return Transition(
                self.loop_transition_name(state_from), LOOP, state_from, state_to,
                None, None, False, (), 0, False, "",
            )
        diff = [i for i, (a, b) in enumerate(zip(state_from, state_to)) if a != b]
        if len(diff) != 1 or (state_from[diff[0]] is not None and state_to[diff[0]] is not None):
            raise ValueError(f"states {state_from} and {state_to} are not adjacent")
        ig = diff[0]
        forward = state_from[ig] is None
        lo, hi = (state_from, state_to) if forward else (state_to, state_from)
        tf, tb = self._describe_pair(lo, hi, ig, _abbrev(lo), _abbrev(hi))
        return tf if forward else tb

    def _describe_pair(
        self, lo: GraspTuple, hi: GraspTuple, ig: int, lo_abbrev: str, hi_abbrev: str
    ) -> tuple[Transition, Transition]:
        ih = hi[ig]
        g = self.grippers[ig]
        h = self.handles[ih]
        fwd = f"{g} > {h} | {lo_abbrev}"
        bwd = f"{g} < {h} | {hi_abbrev}"
        iobj = self.object_from_handle[ih]
        lo_objects = self._grasped_objects(lo)
        no_place = iobj in lo_objects
        # pregrasp: the pregrasp constraint always exists; intersec: grasp and placement;
        # preplace: a pre-placement exists whenever a placement does (Python factory).
        if (not no_place) and self.object_has_placement(iobj):
            kinds = _THREE_WAYPOINTS
        else:
            kinds = _ONE_WAYPOINT
        if self.handle_masks:
            level_set = self._is_foliated(lo) and self._is_foliated(hi)
        else:
            # lo has a free object iff hi has one besides iobj, so hi decides
            level_set = len(lo_objects | {iobj}) < len(self.objects)
        return (
            Transition(fwd, FORWARD, lo, hi, ig, ih, no_place, kinds, 1, level_set, fwd),
            Transition(bwd, BACKWARD, hi, lo, ig, ih, no_place, kinds, 1, level_set, fwd),
        )

    def waypoint_states(self, transition: Transition) -> tuple[WaypointState, ...]:
        """Waypoint states of a transition, in traversal order, with their constraints.

        Constraints follow HPP ``makeTransition``: pregrasp = FROM + ``"<g> pregrasps <h>"``;
        intersec = FROM + ``"<g> grasps <h>"``; preplace = FROM - ``place_<o>`` +
        ``preplace_<o>`` + grasp (FROM = the state with fewer grasps).
        """
        if transition.kind == LOOP:
            return ()
        lo = transition.state_from if transition.kind == FORWARD else transition.state_to
        g = self.grippers[transition.gripper]
        h = self.handles[transition.handle]
        o = self.objects[self.object_from_handle[transition.handle]]
        manifold = self.state_constraints(lo)[0]
        io = self.object_from_handle[transition.handle]
        pc = (f"place_{o}",) if (
            not transition.no_place and self.object_has_placement(io)
        ) else ()
        rest = tuple(c for c in manifold if c not in pc)
        cons = {
            "pregrasp": pc + (f"{g} pregrasps {h}",) + rest,
            "intersec": pc + (f"{g} grasps {h}",) + rest,
            "preplace": (f"preplace_{o}", f"{g} grasps {h}") + rest,
        }
        out = tuple(
            WaypointState(f"{transition.forward_name}_{k}", k, cons[k])
            for k in transition.waypoint_kinds
        )
        return out[::-1] if transition.kind == BACKWARD else out

    def sub_edges(self, transition: Transition) -> tuple[SubEdge, ...]:
        """Elementary sub-edges of a waypoint transition, in traversal order.

        Forward ``_01, _12, ...``; backward ``..., _21, _10``. Sub-edges with index below
        ``M = 1 + pregrasp`` lie in the state with fewer grasps, the others in the state with
        more grasps; all are short except the one leaving a real state.
        """
        if transition.kind == LOOP:
            return ()
        forward = transition.kind == FORWARD
        lo = transition.state_from if forward else transition.state_to
        hi = transition.state_to if forward else transition.state_from
        lo_name, hi_name = self.state_name(lo), self.state_name(hi)
        chain = [lo_name] + [
            f"{transition.forward_name}_{k}" for k in transition.waypoint_kinds
        ] + [hi_name]
        n_trans = len(chain) - 1
        m = 1 + ("pregrasp" in transition.waypoint_kinds)
        edges = []
        for i in range(n_trans):
            containing = lo_name if i < m else hi_name
            if forward:
                edges.append(
                    SubEdge(f"{transition.name}_{i}{i + 1}", chain[i], chain[i + 1],
                            containing, i > 0)
                )
            else:
                edges.append(
                    SubEdge(f"{transition.name}_{i + 1}{i}", chain[i + 1], chain[i],
                            containing, i < n_trans - 1)
                )
        return tuple(edges) if forward else tuple(reversed(edges))

    # ------------------------------------------------------------------ lazy neighbours

    def neighbours(self, grasps: GraspTuple) -> Iterator[tuple[GraspTuple, int, bool]]:
        """Adjacent allowed states of an (allowed) state, without building the graph.

        Yields ``(next grasps, gripper index, is_forward)`` for exactly the edges
        :meth:`generate` would create: both ends allowed by :attr:`grasp_is_allowed` and
        :meth:`transition_is_allowed` (called with the state with fewer grasps first, as
        HPP does). Releases come first, then grasps, in gripper then handle order.
        """
        allowed = self.grasp_is_allowed
        tia = self.transition_is_allowed
        held = set(h for h in grasps if h is not None)
        free_handles = [ih for ih in range(len(self.handles)) if ih not in held]
        for ig, ih in enumerate(grasps):
            if ih is not None:
                nxt = grasps[:ig] + (None,) + grasps[ig + 1:]
                if allowed(nxt) and tia(nxt, grasps):
                    yield nxt, ig, False
        for ig, ih in enumerate(grasps):
            if ih is None:
                for jh in free_handles:
                    nxt = grasps[:ig] + (jh,) + grasps[ig + 1:]
                    if allowed(nxt) and tia(grasps, nxt):
                        yield nxt, ig, True

    # ------------------------------------------------------------------ HPP algorithm hooks

    def make_state(self, grasps: GraspTuple, priority: int) -> State:
        """Create the state object for ``grasps`` (hook; called once per state)."""
        return State(grasps, self.state_name(grasps), _abbrev(grasps), priority, len(self.states))

    def make_loop_transition(self, state: State) -> Transition:
        """Create and register the loop transition ``"Loop | <abbrev>"`` (weight 0)."""
        t = self.describe_transition(state.grasps, state.grasps)
        self.transitions[t.name] = t
        return t

    def transition_is_allowed(self, state_from: GraspTuple, state_to: GraspTuple) -> bool:
        """Hook: whether the transition adding a grasp ``state_from -> state_to`` may exist.

        Default ``True``. Receives grasp tuples (HPP passes its state objects, whose
        ``.grasps`` are these tuples); ``state_from`` is always the state with fewer grasps.
        """
        return True

    def make_transition(self, state_from: State, state_to: State, ig: int) -> tuple[
        Transition, Transition
    ]:
        """Create the forward and backward transitions between adjacent states.

        Args:
            state_from: the state with fewer grasps.
            state_to: the same plus gripper ``ig`` holding ``state_to.grasps[ig]``.
            ig: index of the gripper whose entry changes.

        Returns:
            (forward, backward) transitions; already-created pairs are returned unchanged.
        """
        tf, tb = self._describe_pair(
            state_from.grasps, state_to.grasps, ig, state_from.abbrev, state_to.abbrev
        )
        key = (tf.name, tb.name)
        if key in self._pairs:
            return self.transitions[tf.name], self.transitions[tb.name]
        self.transitions[tf.name] = tf
        self.transitions[tb.name] = tb
        self._pairs.add(key)
        return tf, tb

    # ------------------------------------------------------------------ generation

    def _get_or_make_state(self, grasps: GraspTuple, priority: int) -> State:
        state = self.states.get(grasps)
        if state is None:
            state = self.make_state(grasps, priority)
            self.states[grasps] = state
            self.make_loop_transition(state)
        return state

    def generate(self) -> None:
        """Enumerate all grasp tuples and create states and transitions (HPP ``generate``).

        Same visiting order, priorities, states and transitions as HPP's ``_recurse``, but a
        refused tuple is expanded only once (HPP re-expands it each time it is reached).
        Clears anything generated before.
        """
        self.states = {}
        self.transitions = {}
        self._pairs = set()
        self.recurse_calls = 0
        refused_expanded: set[GraspTuple] = set()
        allowed = self.grasp_is_allowed
        n_h = len(self.handles)

        def recurse(grippers: tuple[int, ...], handles: tuple[int, ...], grasps, depth: int):
            self.recurse_calls += 1
            is_allowed = allowed(grasps)
            current = self._get_or_make_state(grasps, depth) if is_allowed else None
            if not is_allowed:
                refused_expanded.add(grasps)
            if not grippers or not handles:
                return
            for k, ig in enumerate(grippers):
                ngrippers = grippers[:k] + grippers[k + 1:]
                for j, ih in enumerate(handles):
                    ngrasps = grasps[:ig] + (ih,) + grasps[ig + 1:]
                    next_allowed = allowed(ngrasps)
                    is_new = ngrasps not in self.states and ngrasps not in refused_expanded
                    nnext = self._get_or_make_state(ngrasps, depth + 1) if next_allowed else None
                    if (
                        current is not None
                        and nnext is not None
                        and self.transition_is_allowed(grasps, ngrasps)
                    ):
                        self.make_transition(current, nnext, ig)
                    if is_new:
                        recurse(ngrippers, handles[:j] + handles[j + 1:], ngrasps, depth + 2)

        recurse(
            tuple(range(len(self.grippers))), tuple(range(n_h)), (None,) * len(self.grippers), 0
        )

    # ------------------------------------------------------------------ inspection / export

    @property
    def transition_pairs(self) -> set[tuple[str, str]]:
        """(forward, backward) name pairs, like HPP's ``transitions`` set."""
        return set(self._pairs)

    def component_count(self) -> int:
        """Number of HPP graph components the CORBA factory would create.

        Per state: the state and its loop edge. Per transition pair with ``w`` waypoints:
        2 waypoint edges, ``w`` waypoint states, ``2 (w + 1)`` sub-edges; with crossed
        foliations also the ``_ls`` waypoint edge(s) and level-set sub-edge(s). E.g. 94 for
        PR2 two hands x one box with two handles (no level-set extras).
        """
        n = 2 * len(self.states)
        for fwd, bwd in self._pairs:
            t = self.transitions[fwd]
            w = t.n_waypoints
            n += 2 + w + 2 * (w + 1)
            if t.level_set:
                n += 2 if t.no_place else 4
        return n

    def to_networkx(self, include_loops: bool = False):
        """Export the generated graph as a ``networkx.DiGraph`` (needs networkx, optional).

        Nodes are grasp tuples with attributes ``name``, ``abbrev``, ``priority``; edges carry
        ``name``, ``kind``, ``gripper``, ``handle``, ``weight`` and ``waypoints`` (names).

        Raises:
            ImportError: networkx is not installed.
        """
        import networkx as nx  # optional dependency, imported on use only

        graph = nx.DiGraph()
        for grasps, s in self.states.items():
            graph.add_node(grasps, name=s.name, abbrev=s.abbrev, priority=s.priority)
        for t in self.transitions.values():
            if t.kind == LOOP and not include_loops:
                continue
            graph.add_edge(
                t.state_from,
                t.state_to,
                name=t.name,
                kind=t.kind,
                gripper=None if t.gripper is None else self.grippers[t.gripper],
                handle=None if t.handle is None else self.handles[t.handle],
                weight=t.weight,
                waypoints=t.waypoint_names,
            )
        return graph
