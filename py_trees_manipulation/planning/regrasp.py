"""Regrasp search over the constraint graph: shortest grasp-change sequences, lazily.

Given a :class:`~py_trees_manipulation.planning.constraint_graph.ConstraintGraphFactory`
(grippers, objects/handles/contacts, rules, possible grasps), :class:`RegraspPlanner` finds the
cheapest sequence of grasp changes from the current grasp tuple to a goal, expanding neighbours
on demand (:meth:`ConstraintGraphFactory.neighbours`) instead of generating the whole graph:
13,327 states for 6 grippers x 6 handles, of which a search typically touches a few hundred.

* Search: A* with an admissible, consistent heuristic (per gripper: 0 if it already holds the
  goal handle, 1 if exactly one of current/goal is empty, 2 if it must swap handles, since a
  swap passes through the empty state; times the cheapest step cost).
* Alternatives: :meth:`RegraspPlanner.iter_plans` yields loopless plans in non-decreasing cost
  (Yen's k-shortest paths over the lazy graph), like HPP's StatesPathFinder enumerates
  transition sequences, so when a step proves geometrically infeasible (IK out of reach, a
  placement off the table) the caller marks it with :meth:`RegraspPlanner.mark_infeasible` and
  simply takes the next plan: the generator notices the change and re-plans on the reduced
  graph, never yielding the same plan twice.
* Same edges as the eager graph: both ends allowed by the factory's rules/validators and
  ``transition_is_allowed``; no swap edges; loop edges are not steps.

Step kinds: ``"grasp"`` (a gripper takes an object that lies on a surface / is free),
``"release"`` (the last gripper holding an object lets go: place), ``"handover"`` (a grasp or a
release while another gripper holds the same object; HPP's ``noPlace`` case, one pregrasp
waypoint). ``direction`` says whether the step adds (``"grasp"``) or removes (``"release"``) a
grasp.

Sources: Lamiraux & Mirabel, IEEE T-RO 2021 (adjacency, waypoint transitions); HPP
``StatesPathFinder`` (enumerate transition sequences by increasing length, backtrack when the
geometry fails); J. Y. Yen, "Finding the K Shortest Loopless Paths in a Network", Management
Science 17(11), 1971.
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping, Optional, Union

from .constraint_graph import (
    FORWARD,
    ConstraintGraphFactory,
    GraspTuple,
    Transition,
)

__all__ = [
    "NoPlanError",
    "RegraspStep",
    "RegraspPlan",
    "SearchStats",
    "RegraspPlanner",
    "STEP_KINDS",
]

#: Kinds of regrasp steps, the keys of ``step_costs``.
STEP_KINDS = ("grasp", "release", "handover")

#: A goal: exact grasp tuple, state name (full or abbreviated), partial
#: ``{gripper: handle or None}`` mapping (unlisted grippers don't care), or a predicate.
Goal = Union[GraspTuple, str, Mapping[str, Optional[str]], Callable[[GraspTuple], bool]]


class NoPlanError(RuntimeError):
    """No sequence of allowed, feasible grasp changes reaches the goal."""


@dataclass(frozen=True)
class RegraspStep:
    """One grasp change (one HPP waypoint transition).

    Attributes:
        transition: HPP transition name, e.g. ``"panda/hand > box/top | f"``.
        kind: ``"grasp"``, ``"release"`` or ``"handover"`` (see module docstring).
        direction: ``"grasp"`` (adds a grasp, HPP forward edge) or ``"release"`` (backward).
        gripper, handle, object: names involved.
        gripper_index, handle_index: their indices in the factory.
        state_from, state_to: grasp tuples before/after the step.
        state_from_name, state_to_name: HPP state names.
        waypoints: HPP waypoint state names in traversal order (``..._pregrasp``,
            ``..._intersec``, ``..._preplace``; reversed for a release).
        cost: step cost (dimensionless, from ``step_costs`` or ``cost_fn``).
    """

    transition: str
    kind: str
    direction: str
    gripper: str
    handle: str
    object: str
    gripper_index: int
    handle_index: int
    state_from: GraspTuple
    state_to: GraspTuple
    state_from_name: str
    state_to_name: str
    waypoints: tuple[str, ...]
    cost: float

    def to_dict(self) -> dict[str, Any]:
        """Plain-data form (JSON/YAML/blackboard logging); tuples become lists."""
        return {
            "transition": self.transition,
            "kind": self.kind,
            "direction": self.direction,
            "gripper": self.gripper,
            "handle": self.handle,
            "object": self.object,
            "state_from": list(self.state_from),
            "state_to": list(self.state_to),
            "state_from_name": self.state_from_name,
            "state_to_name": self.state_to_name,
            "waypoints": list(self.waypoints),
            "cost": self.cost,
        }


@dataclass(frozen=True)
class SearchStats:
    """Work done to produce a plan (cumulative over the enumeration so far).

    Attributes:
        expanded: states popped and expanded by A* (summed over all searches).
        generated: successor states produced (allowed and not blocked), summed.
        distinct_states: distinct grasp tuples ever generated (the part of the graph touched).
        searches: A* runs (1 for the first plan; Yen's spur searches afterwards).
    """

    expanded: int = 0
    generated: int = 0
    distinct_states: int = 0
    searches: int = 0


@dataclass(frozen=True)
class RegraspPlan:
    """A sequence of grasp changes from ``start``.

    Attributes:
        start: the start grasp tuple.
        steps: the :class:`RegraspStep` sequence (empty when the start satisfies the goal).
        cost: sum of step costs.
        stats: :class:`SearchStats` at the time the plan was produced.
    """

    start: GraspTuple
    steps: tuple[RegraspStep, ...]
    cost: float
    stats: SearchStats = field(default_factory=SearchStats, compare=False)

    @property
    def goal(self) -> GraspTuple:
        """The final grasp tuple."""
        return self.steps[-1].state_to if self.steps else self.start

    @property
    def states(self) -> tuple[GraspTuple, ...]:
        """Visited grasp tuples, start and goal included (``len(steps) + 1``)."""
        return (self.start,) + tuple(s.state_to for s in self.steps)

    @property
    def transition_names(self) -> tuple[str, ...]:
        """HPP transition names of the steps."""
        return tuple(s.transition for s in self.steps)

    def __len__(self) -> int:
        return len(self.steps)

    def __iter__(self) -> Iterator[RegraspStep]:
        return iter(self.steps)

    def to_dict(self) -> dict[str, Any]:
        """Plain-data form for logging and the blackboard."""
        return {
            "start": list(self.start),
            "goal": list(self.goal),
            "cost": self.cost,
            "steps": [s.to_dict() for s in self.steps],
        }


class _Counters:
    __slots__ = ("expanded", "generated", "searches", "seen")

    def __init__(self) -> None:
        self.expanded = 0
        self.generated = 0
        self.searches = 0
        self.seen: set[GraspTuple] = set()

    def snapshot(self) -> SearchStats:
        return SearchStats(self.expanded, self.generated, len(self.seen), self.searches)


class RegraspPlanner:
    """Shortest and alternative regrasp plans over a lazily expanded constraint graph.

    Args:
        factory: a configured :class:`ConstraintGraphFactory` (``generate()`` not needed), or a
            config mapping accepted by :meth:`ConstraintGraphFactory.from_config`.
        step_costs: cost per step kind, default 1 each (so the shortest plan has the fewest
            grasp changes). Must be > 0.
        cost_fn: optional ``cost_fn(transition: Transition) -> float`` (> 0) overriding
            ``step_costs``, e.g. from arm reach; then ``min_step_cost`` scales the heuristic.
        min_step_cost: lower bound on any ``cost_fn`` value; ``0`` disables the heuristic
            (plain Dijkstra). Ignored when ``cost_fn`` is None.
        max_expansions: bound on A* expansions per search (``None``: unbounded); exceeding it
            raises :class:`NoPlanError`.

    Raises:
        ValueError: non-positive step costs or unknown step kinds.

    Example::

        planner = RegraspPlanner(factory)
        for plan in planner.iter_plans(start, {"panda/hand": "box/side"}, max_plans=5):
            for step in plan:
                if not execute(step):             # IK failed, placement off the table...
                    planner.mark_infeasible(step)  # next plan avoids this transition
                    break
            else:
                break                              # success
    """

    def __init__(
        self,
        factory: Union[ConstraintGraphFactory, Mapping[str, Any]],
        step_costs: Optional[Mapping[str, float]] = None,
        cost_fn: Optional[Callable[[Transition], float]] = None,
        min_step_cost: float = 0.0,
        max_expansions: Optional[int] = None,
    ):
        if not isinstance(factory, ConstraintGraphFactory):
            factory = ConstraintGraphFactory.from_config(factory)
        self.factory = factory
        costs = {k: 1.0 for k in STEP_KINDS}
        if step_costs:
            for k, v in step_costs.items():
                if k not in costs:
                    raise ValueError(f"unknown step kind {k!r}; kinds are {STEP_KINDS}")
                costs[k] = float(v)
        if any(v <= 0 for v in costs.values()):
            raise ValueError(f"step costs must be > 0, got {costs}")
        self.step_costs = costs
        self.cost_fn = cost_fn
        self.heuristic_scale = float(min_step_cost) if cost_fn is not None else min(costs.values())
        self.max_expansions = max_expansions
        self._blocked_edges: set[tuple[GraspTuple, GraspTuple]] = set()
        self._blocked_grasps: set[tuple[int, int]] = set()
        self._blocked_version = 0

    # ------------------------------------------------------------------ states and goals

    def resolve_state(
        self, state: Union[GraspTuple, str, Mapping[str, Optional[str]]]
    ) -> GraspTuple:
        """Grasp tuple from a tuple/list, an HPP state name, or ``{gripper: handle}``.

        Raises:
            ValueError: malformed or inconsistent state.
        """
        f = self.factory
        if isinstance(state, str):
            return f.parse_state_name(state)
        if isinstance(state, Mapping):
            return f.grasps_from_names(state)
        out = tuple(None if h is None else int(h) for h in state)
        f.check_grasps(out)
        return out

    def _goal(self, goal: Goal) -> tuple[
        Callable[[GraspTuple], bool], Callable[[GraspTuple], float], Optional[GraspTuple]
    ]:
        """(predicate, heuristic, exact target or None)."""
        scale = self.heuristic_scale
        if callable(goal) and not isinstance(goal, (tuple, list, str, Mapping)):
            return goal, (lambda g: 0.0), None
        if isinstance(goal, Mapping):
            f = self.factory
            conds = []
            for g, h in goal.items():
                if g not in f.grippers:
                    raise ValueError(f"unknown gripper {g!r} in goal")
                if h not in (None, "") and h not in f.handles:
                    raise ValueError(f"unknown handle {h!r} in goal")
                conds.append((f.grippers.index(g), None if h in (None, "") else f.handles.index(h)))
            conds_t = tuple(conds)

            def pred(grasps: GraspTuple) -> bool:
                return all(grasps[ig] == ih for ig, ih in conds_t)

            def heur(grasps: GraspTuple) -> float:
                return scale * sum(_gripper_distance(grasps[ig], ih) for ig, ih in conds_t)

            return pred, heur, None
        target = self.resolve_state(goal)

        def heur_exact(grasps: GraspTuple) -> float:
            return scale * sum(_gripper_distance(a, b) for a, b in zip(grasps, target))

        return (lambda g: g == target), heur_exact, target

    def goal_satisfied(self, grasps: GraspTuple, goal: Goal) -> bool:
        """Whether a grasp tuple satisfies a goal (any :data:`Goal` form)."""
        return self._goal(goal)[0](self.resolve_state(grasps))

    # ------------------------------------------------------------------ infeasibility

    def mark_infeasible(
        self, transition: Union[RegraspStep, Transition, str], both_directions: bool = False
    ) -> None:
        """Remove one directed transition from future plans (e.g. its IK failed).

        Args:
            transition: a step, a :class:`Transition` or an HPP transition name.
            both_directions: also block the reverse transition.

        Raises:
            ValueError: unparsable transition name.
        """
        if isinstance(transition, (RegraspStep, Transition)):
            a, b = transition.state_from, transition.state_to
        else:
            a, b = self.factory.parse_transition_name(transition)
        self._blocked_edges.add((a, b))
        if both_directions:
            self._blocked_edges.add((b, a))
        self._blocked_version += 1

    def mark_grasp_infeasible(self, gripper: str, handle: str) -> None:
        """Forbid gripper ``gripper`` from taking ``handle`` in any state (e.g. the handle
        faces away from that arm). Releasing it stays allowed, so a start state that already
        holds it can still let go.

        Raises:
            ValueError: unknown gripper or handle name.
        """
        f = self.factory
        self._blocked_grasps.add((f.grippers.index(gripper), f.handles.index(handle)))
        self._blocked_version += 1

    def clear_infeasible(self) -> None:
        """Forget every infeasibility mark."""
        self._blocked_edges.clear()
        self._blocked_grasps.clear()
        self._blocked_version += 1

    @property
    def blocked_transitions(self) -> set[tuple[GraspTuple, GraspTuple]]:
        """Directed (state_from, state_to) pairs marked infeasible."""
        return set(self._blocked_edges)

    # ------------------------------------------------------------------ graph access

    def _kind(self, lo: GraspTuple, ig: int, ih: int, forward: bool) -> str:
        ofh = self.factory.object_from_handle
        iobj = ofh[ih]
        for jg, jh in enumerate(lo):
            if jg != ig and jh is not None and ofh[jh] == iobj:
                return "handover"
        return "grasp" if forward else "release"

    def _successors(
        self, grasps: GraspTuple, counters: _Counters
    ) -> Iterator[tuple[GraspTuple, float]]:
        blocked_e = self._blocked_edges
        blocked_g = self._blocked_grasps
        for nxt, ig, forward in self.factory.neighbours(grasps):
            ih = nxt[ig] if forward else grasps[ig]
            if (forward and (ig, ih) in blocked_g) or (grasps, nxt) in blocked_e:
                continue
            counters.generated += 1
            counters.seen.add(nxt)
            yield nxt, self._edge_cost(grasps, nxt, ig, ih, forward)

    def _edge_cost(
        self, a: GraspTuple, b: GraspTuple, ig: int, ih: int, forward: bool
    ) -> float:
        if self.cost_fn is not None:
            c = float(self.cost_fn(self.factory.describe_transition(a, b)))
            if not c > 0:
                raise ValueError(f"cost_fn returned {c} for {a} -> {b}; costs must be > 0")
            return c
        return self.step_costs[self._kind(a if forward else b, ig, ih, forward)]

    def step(self, state_from: GraspTuple, state_to: GraspTuple) -> RegraspStep:
        """The :class:`RegraspStep` for an adjacent pair (names, waypoints, kind, cost)."""
        f = self.factory
        t = f.describe_transition(state_from, state_to)
        forward = t.kind == FORWARD
        lo = state_from if forward else state_to
        ig, ih = t.gripper, t.handle
        return RegraspStep(
            transition=t.name,
            kind=self._kind(lo, ig, ih, forward),
            direction="grasp" if forward else "release",
            gripper=f.grippers[ig],
            handle=f.handles[ih],
            object=f.objects[f.object_from_handle[ih]],
            gripper_index=ig,
            handle_index=ih,
            state_from=state_from,
            state_to=state_to,
            state_from_name=f.state_name(state_from),
            state_to_name=f.state_name(state_to),
            waypoints=t.waypoint_names,
            cost=self._edge_cost(state_from, state_to, ig, ih, forward),
        )

    def _make_plan(self, path: list[GraspTuple], counters: _Counters) -> RegraspPlan:
        steps = tuple(self.step(a, b) for a, b in zip(path, path[1:]))
        return RegraspPlan(path[0], steps, sum(s.cost for s in steps), counters.snapshot())

    # ------------------------------------------------------------------ search

    def _astar(
        self,
        start: GraspTuple,
        is_goal: Callable[[GraspTuple], bool],
        heuristic: Callable[[GraspTuple], float],
        counters: _Counters,
        banned_nodes: frozenset | set = frozenset(),
        banned_edges: frozenset | set = frozenset(),
    ) -> Optional[tuple[list[GraspTuple], float]]:
        counters.searches += 1
        counters.seen.add(start)
        tie = itertools.count()
        g_score: dict[GraspTuple, float] = {start: 0.0}
        parent: dict[GraspTuple, Optional[GraspTuple]] = {start: None}
        heap = [(heuristic(start), 0.0, next(tie), start)]
        closed: set[GraspTuple] = set()
        expansions = 0
        while heap:
            _, neg_g, _, node = heapq.heappop(heap)
            if node in closed:
                continue
            if is_goal(node):
                path = [node]
                while parent[path[-1]] is not None:
                    path.append(parent[path[-1]])
                path.reverse()
                return path, g_score[node]
            closed.add(node)
            counters.expanded += 1
            expansions += 1
            if self.max_expansions is not None and expansions > self.max_expansions:
                raise NoPlanError(
                    f"search budget of {self.max_expansions} expansions exhausted"
                )
            g = g_score[node]
            for nxt, cost in self._successors(node, counters):
                if nxt in closed or nxt in banned_nodes or (node, nxt) in banned_edges:
                    continue
                ng = g + cost
                if ng < g_score.get(nxt, float("inf")):
                    g_score[nxt] = ng
                    parent[nxt] = node
                    # ties on f: prefer deeper nodes (larger g) -> fewer expansions
                    heapq.heappush(heap, (ng + heuristic(nxt), -ng, next(tie), nxt))
        return None

    def _check_start(self, start: GraspTuple) -> None:
        if not self.factory.grasp_is_allowed(start):
            raise ValueError(
                f"start state {self.factory.state_name(start)!r} is refused by the rules "
                "(HPP: 'A configuration has no node')"
            )

    def plan(
        self, start: Union[GraspTuple, str, Mapping[str, Optional[str]]], goal: Goal
    ) -> RegraspPlan:
        """Cheapest plan from ``start`` to ``goal`` (blocking: a few ms for 6x6).

        Raises:
            ValueError: malformed start/goal or start refused by the rules.
            NoPlanError: the goal is unreachable with the current rules and marks.
        """
        start_t = self.resolve_state(start)
        self._check_start(start_t)
        is_goal, heur, target = self._goal(goal)
        counters = _Counters()
        if target is not None and not self.factory.grasp_is_allowed(target):
            raise NoPlanError(
                f"goal state {self.factory.state_name(target)!r} is refused by the rules"
            )
        found = self._astar(start_t, is_goal, heur, counters)
        if found is None:
            raise NoPlanError(
                f"no regrasp plan from {self.factory.state_name(start_t)!r} to {goal!r}"
            )
        return self._make_plan(found[0], counters)

    def iter_plans(
        self,
        start: Union[GraspTuple, str, Mapping[str, Optional[str]]],
        goal: Goal,
        max_plans: Optional[int] = None,
        max_cost: Optional[float] = None,
    ) -> Iterator[RegraspPlan]:
        """Loopless plans in non-decreasing cost (Yen's algorithm on the lazy graph).

        Infeasibility marks made while iterating (between two ``next()`` calls) are honoured:
        the enumeration restarts on the reduced graph and skips plans already yielded.

        Args:
            start, goal: see :meth:`plan`.
            max_plans: stop after this many plans (``None``: until exhausted).
            max_cost: stop before the first plan costing more than this.

        Yields:
            :class:`RegraspPlan`; none if the goal is unreachable.

        Raises:
            ValueError: malformed start/goal or start refused by the rules.
        """
        start_t = self.resolve_state(start)
        self._check_start(start_t)
        is_goal, heur, target = self._goal(goal)
        if target is not None and not self.factory.grasp_is_allowed(target):
            return
        counters = _Counters()
        yielded: set[tuple[GraspTuple, ...]] = set()
        n_yielded = 0
        while True:
            version = self._blocked_version
            restarted = False
            for path, cost in self._yen(start_t, is_goal, heur, counters):
                if max_cost is not None and cost > max_cost + 1e-12:
                    return
                key = tuple(path)
                if key in yielded:
                    continue
                yielded.add(key)
                yield self._make_plan(path, counters)
                n_yielded += 1
                if max_plans is not None and n_yielded >= max_plans:
                    return
                if self._blocked_version != version:
                    restarted = True
                    break
            if not restarted:
                return

    def _path_cost(self, path: list[GraspTuple]) -> float:
        total = 0.0
        for a, b in zip(path, path[1:]):
            t = self.factory.describe_transition(a, b)
            total += self._edge_cost(a, b, t.gripper, t.handle, t.kind == FORWARD)
        return total

    def _yen(
        self,
        start: GraspTuple,
        is_goal: Callable[[GraspTuple], bool],
        heur: Callable[[GraspTuple], float],
        counters: _Counters,
    ) -> Iterator[tuple[list[GraspTuple], float]]:
        first = self._astar(start, is_goal, heur, counters)
        if first is None:
            return
        accepted: list[list[GraspTuple]] = [first[0]]
        yield first
        candidates: list[tuple[float, int, list[GraspTuple]]] = []
        in_candidates: set[tuple[GraspTuple, ...]] = {tuple(first[0])}
        tie = itertools.count()
        while True:
            prev = accepted[-1]
            root_cost = 0.0
            for i in range(len(prev) - 1):
                spur = prev[i]
                root = prev[: i + 1]
                banned_edges = {
                    (p[i], p[i + 1]) for p in accepted if len(p) > i + 1 and p[: i + 1] == root
                }
                banned_nodes = set(root[:-1])
                found = self._astar(spur, is_goal, heur, counters, banned_nodes, banned_edges)
                if found is not None:
                    total = root[:-1] + found[0]
                    key = tuple(total)
                    if key not in in_candidates:
                        in_candidates.add(key)
                        heapq.heappush(
                            candidates, (root_cost + found[1], next(tie), total)
                        )
                root_cost += self._path_cost(prev[i: i + 2])
            if not candidates:
                return
            cost, _, best = heapq.heappop(candidates)
            accepted.append(best)
            yield best, cost


def _gripper_distance(a: Optional[int], b: Optional[int]) -> int:
    """Minimum number of grasp changes for one gripper to go from holding ``a`` to ``b``."""
    if a == b:
        return 0
    if a is None or b is None:
        return 1
    return 2
