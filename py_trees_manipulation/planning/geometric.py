"""Regrasp plans checked by geometry: placements in the state, every transition verified, HPP style.

:class:`GeometricRegraspPlanner` searches the same constraint graph as
:class:`~.regrasp.RegraspPlanner` (grasp tuples, rules, no swap edges), but its state also says
**where each free object lies** and **which grasp of a handle each gripper uses**:

* a :class:`ModeState` is ``(grasps, variants, locations)``: the grasp tuple (HPP's state key), per
  gripper the index of the grasp *variant* it holds its handle with (a handle's symmetric grasps:
  a box face has four yaws, a declared handle two, the parallel gripper's half turn), and per object
  its location: the index of a :class:`PlacementCandidate` it rests on, or a held code;
* a release (place) edge goes to one placement: an object **contact surface** (every face of a
  box: :func:`~py_trees_manipulation.geometry.grasps.placements_for_object`) times a **placement
  pose** (the description's, the spot where it stands now, and a grid on the environment's contact
  surfaces), so a plan chooses where and on which face an object is put down; the object's pose is
  carried through the plan, and a grasp from a placement is the handle's grasp in the world at that
  pose (``object pose @ grasp``).

The search stays **lazy** (HPP's StatesPathFinder enumerates transition sequences and solves the
waypoints of each; here the graph is searched first and only the transitions of a candidate plan
are solved): :meth:`GeometricRegraspPlanner.plan` takes the candidates of
:meth:`~.regrasp.RegraspPlanner.iter_plans` in cost order and asks ``check`` (a callable: the
geometry lives outside this pure package, e.g.
:class:`py_trees_manipulation.collision.regrasp.TransitionChecker`) about each transition of the
candidate before the plan is returned, in order (a last transition that takes the goal handle
first: it is the most constrained). A transition that fails is pruned with
:meth:`~GeometricRegraspPlanner.mark_infeasible` (its reason kept) and the enumeration goes on, on
the reduced graph. Checks are cached, and a failure the checker attributes to the **support**
(the hand would hit the surface the object rests on, which depends only on the grasp and the face,
not on where on a flat surface) prunes that grasp-and-face class at every position at once.

Edge costs: ``step_costs`` per grasp change (1 each by default, so plans have the fewest grasp
changes), plus small geometric preferences: metres an object is moved (``move_cost_per_m``), a
generated (grid) placement over one of the description's or the spot it stands on
(``generated_placement_cost``: the description's placements within 0.6 m are preferred), another face than the one it stands on (``face_change_cost``), and
the wrist rotation from the gripper's TCP now to the grasp (``rotation_cost``). The heuristic counts grasp changes only, so it stays admissible.

Waypoints (HPP ``makeTransition``): a grasp from a surface goes through ``pregrasp``
(``approach_m`` back along the TCP z axis), ``intersec`` (the grasp, object still on the surface)
and ``preplace`` (lifted ``lift_m``); a release through the same states reversed (``preplace``
above the placement, ``intersec`` placed, then the retreat ``retreat_m`` back along the TCP z axis);
a handover grasp through ``pregrasp`` at the handover pose.

Units: metres, radians; poses are (4, 4) homogeneous transforms, world frame unless named.

Sources: Lamiraux & Mirabel, "Prehensile Manipulation Planning: Modeling, Algorithms and
Implementation", IEEE T-RO 2021 (states, foliations, waypoint transitions); HPP
``StatesPathFinder`` (solve a candidate transition sequence, next sequence on failure); Bohlin &
Kavraki, "Path planning using Lazy PRM", ICRA 2000 (check only the edges of the best candidate).

The code lives in modules by concept: :mod:`~.geometric_model` (grasp variants, placements, the
model, states and goals), :mod:`~.geometric_queries` (queries to the geometry, their answers, steps
and plans); this module holds the planner (edge generation, pruning, the lazy search) and gathers
their names.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Union

import numpy as np

from .constraint_graph import GraspTuple, Transition
from .geometric_model import (HELD, GeometricGoal, GeometricModel, GraspVariant, ModeState, PlacementCandidate,
                              PlacementSettings, Pose, _rotation_angle)
from .geometric_queries import (Checker, GeometricPlan, GeometricStep, PrunedTransition, TransitionQuery,
                                TransitionResult)
from .regrasp import (
    Goal,
    NoPlanError,
    RegraspPlan,
    RegraspPlanner,
    RegraspStep,
    SearchStats,
    _Counters,
    _gripper_distance,
)

__all__ = [
    "GraspVariant",
    "PlacementCandidate",
    "PlacementSettings",
    "GeometricModel",
    "ModeState",
    "GeometricGoal",
    "GeometricStep",
    "GeometricPlan",
    "TransitionQuery",
    "TransitionResult",
    "PrunedTransition",
    "GeometricRegraspPlanner",
    "HELD",
]


@dataclass(slots=True)
class _Edge:
    """What the search knows about one generated edge (costs, geometry, cache key)."""

    kind: str                 # grasp | release | handover_grasp | handover_release
    gripper: int
    handle: int
    obj: int
    variant: int
    placement: Optional[int]  # grasp: where from; release: where to
    partner: Optional[int]
    cost: float
    key: tuple                # check cache / blocking key; its last item: the other objects' locations
    cls: Optional[tuple]      # support-failure class key (grasp or release from/onto a face)
    dead: bool = False        # pruned (blocked key, context-free key or class, or a failed executed step)


class GeometricRegraspPlanner(RegraspPlanner):
    """Regrasp plans whose transitions are checked geometrically (see the module docstring).

    Args:
        model: the :class:`GeometricModel`.
        check: ``check(TransitionQuery) -> TransitionResult``; None plans without geometry (the
            placements and variants are still chosen, nothing is verified).
        step_costs: cost per step kind, as :class:`~.regrasp.RegraspPlanner` (default 1 each).
        move_cost_per_m, generated_placement_cost, rotation_cost: the geometric preferences.
        max_checks: transitions checked at most per :meth:`plan` (then :class:`NoPlanError`).
        max_candidates: candidate plans tried at most per :meth:`plan`.
        class_budget: a grasp (release) with one grasp variant from (onto) one face whose arm hit the
            surface at this many placements is not tried at others (a heuristic: the arm meets a flat
            surface alike there; the hand itself hitting it prunes the class at once).
        face_change_cost: putting an object down on another face than it stands on now.
        max_expansions: states one graph search may expand (a goal cut off by the pruned transitions
            is otherwise proven unreachable by expanding every state that can be reached).
        prefilter: ``prefilter(TransitionQuery) -> TransitionResult or None``: a cheap necessary
            test asked about every grasp and release edge when it is generated (default: the
            ``check``'s ``prefilter`` method, e.g. the arm's workspace test of
            :meth:`~py_trees_manipulation.collision.regrasp.TransitionChecker.prefilter`); an edge it
            fails is dead from the start (never a candidate, none of ``max_checks``) and counted in
            :attr:`prefiltered`.

    Example::

        planner = GeometricRegraspPlanner(model, check=TransitionChecker(world, {"panda/hand": "panda"}))
        start = planner.start_state({"panda/hand": None})
        plan = planner.plan(start, GeometricGoal(faces={"box": ["box/+x", "box/-x"]}))
        for step in plan:             # GeometricStep: variant, placement, object pose, IK solutions
            print(step.label)
    """

    def __init__(
        self,
        model: GeometricModel,
        check: Optional[Checker] = None,
        step_costs: Optional[Mapping[str, float]] = None,
        move_cost_per_m: float = 0.5,
        generated_placement_cost: float = 0.3,
        rotation_cost: float = 0.02,
        max_checks: int = 200,
        max_candidates: int = 2000,
        class_budget: int = 3,
        face_change_cost: float = 0.2,
        max_expansions: Optional[int] = 5000,
        prefilter: Optional[Callable[[TransitionQuery], Optional[TransitionResult]]] = None,
    ):
        super().__init__(model.factory, step_costs=step_costs, max_expansions=max_expansions)
        self.model = model
        self.check = check
        self.move_cost_per_m = float(move_cost_per_m)
        self.generated_placement_cost = float(generated_placement_cost)
        self.rotation_cost = float(rotation_cost)
        self.max_checks = int(max_checks)
        self.prefilter = prefilter if prefilter is not None else getattr(check, "prefilter", None)
        #: edges the prefilter failed: (state_from, state_to, TransitionResult), in generation order
        self.prefiltered: list[tuple[ModeState, ModeState, TransitionResult]] = []
        self._prefilter_memo: dict[tuple, Optional[TransitionResult]] = {}
        self.max_candidates = int(max_candidates)
        self.class_budget = int(class_budget)
        self.face_change_cost = float(face_change_cost)
        f = self.factory
        self._objects = f.objects
        self._placements = [model.placements.get(o, ()) for o in f.objects]
        self._variants = [model.variants[h] for h in f.handles]
        # which handles' objects may be passed between grippers without a handover pose: their held
        # pose is tracked as "lifted above placement k"
        self._track_lift = [model.handover_poses.get(o) is None and len(f.grippers) > 1 for o in f.objects]
        self._edges: dict[tuple, _Edge] = {}
        self._blocked_keys: set[tuple] = set()
        self._blocked_classes: set[tuple] = set()
        self._failed: list[tuple[str, str, str, Pose, float]] = []  # executed steps that failed
        self._results: dict[tuple, TransitionResult] = {}
        self._succ: dict[ModeState, list] = {}
        self._rot_memo: dict[tuple, float] = {}
        self._failed_memo: dict[tuple, bool] = {}
        self._by_key: dict[tuple, list[_Edge]] = {}     # edges by key, by context-free key, by class
        self._class_failures: dict[tuple, set] = {}
        self.pruned: list[PrunedTransition] = []
        self._opening = [float(model.gripper_opening_m.get(g, np.inf)) for g in f.grippers]
        self._variant_ok = [[[v.graspable and not v.width_m > op + 1e-9 for v in vs] for vs in self._variants]
                            for op in self._opening]
        wide: dict[str, list[str]] = {}
        for ig, g in enumerate(f.grippers):
            for ih, vs in enumerate(self._variants):
                for v, var in enumerate(vs):
                    if var.graspable and not self._variant_ok[ig][ih][v]:
                        wide.setdefault(f"{g} opens {self._opening[ig]:.3f} m", []).append(
                            f"{var.name} ({var.width_m:.3f} m)")
        self.notes = [f"grasps wider than the gripper left out ({k}): {', '.join(v)}" for k, v in wide.items()]
        self._start_xy = {o: np.asarray(p)[:2, 3] for o, p in model.start_poses.items()}
        # costs of releasing onto each placement (distance moved, generated or not)
        self._place_cost = []
        for io, o in enumerate(f.objects):
            xy = self._start_xy.get(o)
            face0 = _face_now(self._placements[io], model.start_poses.get(o))
            row = []
            for pc in self._placements[io]:
                c = self.generated_placement_cost if pc.source == "grid" else 0.0
                if xy is not None:
                    c += self.move_cost_per_m * float(np.linalg.norm(pc.pose[:2, 3] - xy))
                if face0 is not None and pc.face != face0:
                    c += self.face_change_cost
                row.append(c)
            self._place_cost.append(row)

    # ------------------------------------------------------------------ states

    def start_state(
        self,
        grasps: Union[GraspTuple, Mapping[str, Optional[str]]],
        variants: Optional[Mapping[str, int]] = None,
        locations: Optional[Mapping[str, int]] = None,
    ) -> ModeState:
        """The :class:`ModeState` to plan from.

        Args:
            grasps: grasp tuple or ``{gripper: handle or None}``.
            variants: gripper -> variant index of its held handle (default 0; pass the measured
                ``"as held"`` variant's index when the model has one).
            locations: object -> placement index for free objects (default: the first candidate
                whose source is ``"current"``, else 0).

        Raises:
            ValueError: unknown names, a held handle without a variant, a free object without
                placements.
        """
        g = self.resolve_state(grasps if not isinstance(grasps, ModeState) else grasps.grasps)
        f = self.factory
        var = []
        for ig, ih in enumerate(g):
            if ih is None:
                var.append(None)
                continue
            v = (variants or {}).get(f.grippers[ig], 0)
            if not 0 <= v < len(self._variants[ih]):
                raise ValueError(f"variant {v} of handle {f.handles[ih]!r} does not exist")
            var.append(v)
        loc = []
        for io, o in enumerate(f.objects):
            held = any(h is not None and f.object_from_handle[h] == io for h in g)
            if held:
                loc.append(HELD)
                continue
            if locations and o in locations:
                k = int(locations[o])
            else:
                k = next((i for i, pc in enumerate(self._placements[io]) if pc.source == "current"), 0)
            if not self._placements[io]:
                raise ValueError(f"object {o!r} is free but has no placement (where does it lie?)")
            if not 0 <= k < len(self._placements[io]):
                raise ValueError(f"placement {k} of object {o!r} does not exist")
            loc.append(k)
        return ModeState(g, tuple(var), tuple(loc))

    def resolve_state(self, state: Any) -> Any:  # ModeState passes through
        if isinstance(state, ModeState):
            return state
        return super().resolve_state(state)

    def _check_start(self, start: Any) -> None:
        super()._check_start(start.grasps if isinstance(start, ModeState) else start)

    def object_pose(self, state: ModeState, obj: Union[int, str]) -> Optional[Pose]:
        """World pose of an object in a state: its placement, its handover pose, or (held, lifted
        above placement k) that placement raised by ``lift_m``; None when not tracked."""
        io = obj if isinstance(obj, int) else self._objects.index(obj)
        loc = state.locations[io]
        if loc >= 0:
            return self._placements[io][loc].pose
        hp = self.model.handover_poses.get(self._objects[io])
        if hp is not None:
            return hp
        if loc <= -2:
            P = self._placements[io][-loc - 2].pose.copy()
            P[2, 3] += self.model.lift_m
            return P
        return self.model.start_poses.get(self._objects[io])

    def state_label(self, state: ModeState) -> str:
        """``"panda/hand grasps box/+x [box/+x/0]; box held"`` / ``"free; box on box/-z at (0.50, 0.00)"``."""
        f = self.factory
        parts = []
        for ig, ih in enumerate(state.grasps):
            if ih is not None:
                parts.append(f"{f.grippers[ig]} grasps {f.handles[ih]} [{self._variants[ih][state.variants[ig]].name}]")
        text = " : ".join(parts) or "free"
        where = []
        for io, o in enumerate(self._objects):
            loc = state.locations[io]
            if loc >= 0:
                where.append(f"{o} on {self._placements[io][loc].name}")
        return text + ("; " + ", ".join(where) if where else "")

    # ------------------------------------------------------------------ goals

    def _goal(self, goal: Any) -> tuple:
        if not isinstance(goal, GeometricGoal):
            goal = GeometricGoal(grasps=goal)
        if goal.grasps is not None:
            gpred, gheur, _ = super()._goal(goal.grasps)
        else:
            gpred, gheur = (lambda g: True), (lambda g: 0.0)
        f = self.factory
        conds = []
        for o, faces in goal.faces.items():
            if o not in f.objects:
                raise ValueError(f"unknown object {o!r} in the placement goal; objects are {list(f.objects)}")
            io = f.objects.index(o)
            wanted = {_face_name(o, x) for x in faces}
            known = {pc.face for pc in self._placements[io]}
            missing = sorted(wanted - known)
            if missing and not (wanted & known):
                raise ValueError(f"object {o!r} has no placement on {missing}; its faces are {sorted(known)}")
            ks = frozenset(k for k, pc in enumerate(self._placements[io]) if pc.face in wanted)
            conds.append((io, ks))
        scale = self.heuristic_scale
        # a gripper the goal wants rid of its handle must release it, and take its goal handle; when the
        # object has that one handle only (no handover: a second gripper needs a second handle) the
        # release is a placement and the grasp is from one, so their cheapest extra costs are lower
        # bounds too (without them A* searches breadth-first over the order of the releases, which
        # their extra costs make look cheaper the later they come)
        must_place = []
        for ig, target in self._goal_conditions(goal.grasps):
            must_place.append((ig, target))
        ofh = f.object_from_handle
        single = [len(hs) == 1 for hs in f.handles_per_object]

        def pred(s: Any) -> bool:
            if not isinstance(s, ModeState):
                return gpred(s)
            if not gpred(s.grasps):
                return False
            return all(s.locations[io] in ks for io, ks in conds)

        def heur(s: Any) -> float:
            if not isinstance(s, ModeState):
                return gheur(s)
            h = gheur(s.grasps)
            for ig, target in must_place:
                ih = s.grasps[ig]
                if ih == target:
                    continue
                if ih is not None and single[ofh[ih]]:
                    h += self._min_release_extra(ig, ih, s.variants[ig])
                if target is not None and single[ofh[target]]:
                    h += self._min_grasp_extra(ig, target)
            hp = 0.0
            for io, ks in conds:
                loc = s.locations[io]
                # held: at least one release; resting elsewhere: a grasp and a release
                hp = max(hp, scale * (1.0 if loc < 0 else (0.0 if loc in ks else 2.0)))
            return max(h, hp)

        return pred, heur, None

    def _min_release_extra(self, ig: int, ih: int, v: int) -> float:
        """Cheapest extra cost (placement and wrist rotation) of putting handle ih's object down with variant v."""
        key = ("min release", ig, ih, v)
        c = self._rot_memo.get(key)
        if c is None:
            io = self.factory.object_from_handle[ih]
            row = self._place_cost[io]
            c = min((row[k] + self._rot_cost(ig, ih, v, io, k, None) for k in range(len(row))), default=0.0)
            self._rot_memo[key] = c
        return c

    def _min_grasp_extra(self, ig: int, ih: int) -> float:
        """Cheapest wrist rotation of taking handle ih from any of its object's placements."""
        key = ("min grasp", ig, ih)
        c = self._rot_memo.get(key)
        if c is None:
            io = self.factory.object_from_handle[ih]
            ok = self._variant_ok[ig][ih]
            c = min((self._rot_cost(ig, ih, v, io, k, None) for v in range(len(ok)) if ok[v]
                     for k in range(len(self._placements[io]))), default=0.0)
            self._rot_memo[key] = c
        return c

    def _goal_conditions(self, grasps: Any) -> list[tuple[int, Optional[int]]]:
        """``(gripper index, handle index or None)`` the grasp goal fixes (none for a predicate)."""
        f = self.factory
        if grasps is None or (callable(grasps) and not isinstance(grasps, (tuple, list, str, Mapping))):
            return []
        if isinstance(grasps, Mapping):
            return [(f.grippers.index(g), None if h in (None, "") else f.handles.index(h)) for g, h in grasps.items()
                    if g in f.grippers and (h in (None, "") or h in f.handles)]
        target = self.resolve_state(grasps)
        return list(enumerate(target.grasps if isinstance(target, ModeState) else target))

    # ------------------------------------------------------------------ edges

    def _others(self, s: ModeState, io: int) -> dict[str, Pose]:
        out = {}
        for jo, o in enumerate(self._objects):
            if jo != io and s.locations[jo] >= 0:
                out[o] = self._placements[jo][s.locations[jo]].pose
        return out

    def _rot_cost(self, ig: int, ih: int, v: int, io: int, k: Optional[int], P: Optional[Pose]) -> float:
        """Wrist rotation from the gripper's TCP now to the grasp (cached per placement)."""
        tcp = self.model.tcp_poses.get(self.factory.grippers[ig])
        if tcp is None or self.rotation_cost == 0:
            return 0.0
        key = (ig, ih, v, io, k)
        c = self._rot_memo.get(key) if k is not None else None
        if c is None:
            if P is None:
                if k is None:
                    return 0.0
                P = self._placements[io][k].pose
            c = self.rotation_cost * _rotation_angle(tcp, P @ self._variants[ih][v].pose) / math.pi
            if k is not None:
                self._rot_memo[key] = c
        return c

    def _handover_rot_cost(self, ig: int, ih: int, v: int, io: int, s: ModeState) -> float:
        key = (ig, ih, v, io, "held", s.locations[io])
        c = self._rot_memo.get(key)
        if c is None:
            P = self.object_pose(s, io)
            c = self._rot_cost(ig, ih, v, io, None, P) if P is not None else 0.0
            self._rot_memo[key] = c
        return c

    def _successors(self, node: Any, counters: _Counters):
        s: ModeState = node
        out = self._succ.get(s)
        if out is None:
            out = self._succ[s] = self._expand_edges(s)
        blocked_e = self._blocked_edges
        blocked_g = self._blocked_grasps
        symbolic = bool(blocked_e or blocked_g)
        seen = counters.seen
        n = 0
        for nxt, e, forward in out:
            if e.dead:
                continue
            if symbolic and ((forward and (e.gripper, e.handle) in blocked_g) or (s.grasps, nxt.grasps) in blocked_e):
                continue
            n += 1
            seen.add(nxt)
            yield nxt, e.cost
        counters.generated += n

    def _register(self, e: _Edge) -> None:
        """Index a new edge for pruning, and prune it now if its key, context or class is pruned."""
        for k in (e.key, e.key[:-1], e.cls):
            if k is not None:
                self._by_key.setdefault(k, []).append(e)
        if (e.key in self._blocked_keys or e.key[:-1] in self._blocked_keys
                or (e.cls is not None and e.cls in self._blocked_classes)
                or (self._failed and self._matches_failed(e))):
            e.dead = True

    def _add_edge(self, a: ModeState, b: ModeState, e: _Edge, forward: bool, out: list) -> None:
        """A generated edge ``a -> b``: kept, indexed for pruning (:meth:`_register`), asked of the
        prefilter (grasps and releases: :meth:`_prefilter_edge`), appended to ``out`` as
        ``(b, e, forward)``."""
        self._edges[(a, b)] = e
        self._register(e)
        self._prefilter_edge(a, b, e)
        out.append((b, e, forward))

    def _prefilter_edge(self, a: ModeState, b: ModeState, e: _Edge) -> None:
        """Ask :attr:`prefilter` about a new grasp or release edge (once per grasp, placement and
        variant, whatever the other objects' places); kill it when it fails."""
        if self.prefilter is None or e.dead or e.kind not in ("grasp", "release"):
            return
        memo = e.key[:-1]
        if memo in self._prefilter_memo:
            res = self._prefilter_memo[memo]
        else:
            res = self.prefilter(self._query(a, b, e, ""))
            self._prefilter_memo[memo] = res
            if res is not None and not res.ok:
                self.prefiltered.append((a, b, res))
        if res is not None and not res.ok:
            e.dead = True
            self._results[e.key] = res

    def _prune(self, key: tuple, into: set) -> None:
        into.add(key)
        for e in self._by_key.get(key, ()):
            e.dead = True
        self._blocked_version += 1

    def _expand_edges(self, s: ModeState) -> list[tuple[ModeState, _Edge, bool]]:
        """Every geometric edge out of ``s`` (blocking aside), computed once per state."""
        f = self.factory
        ofh = f.object_from_handle
        out = []
        locs = s.locations
        others = [locs[:io] + locs[io + 1:] for io in range(len(locs))]
        for nxt_g, ig, forward in f.neighbours(s.grasps):
            ih = nxt_g[ig] if forward else s.grasps[ig]
            io = ofh[ih]
            others_loc = others[io]
            partner = next((jg for jg, jh in enumerate(s.grasps if forward else nxt_g)
                            if jg != ig and jh is not None and ofh[jh] == io), None)
            base = self.step_costs["handover" if partner is not None else ("grasp" if forward else "release")]
            if forward:
                loc = s.locations[io]
                ok_v = self._variant_ok[ig][ih]
                for v in range(len(self._variants[ih])):
                    if not ok_v[v]:
                        continue
                    variants = s.variants[:ig] + (v,) + s.variants[ig + 1:]
                    if partner is None:
                        kind = "grasp"
                        new_loc = (-loc - 2) if self._track_lift[io] else HELD
                        key = ("grasp", ig, ih, v, loc, others_loc)
                        cls = ("grasp", ig, ih, v, self._placements[io][loc].face)
                        cost = base + self._rot_cost(ig, ih, v, io, loc, None)
                        place = loc
                    else:
                        kind = "handover_grasp"
                        new_loc = loc
                        key = ("handover_grasp", ig, ih, v, partner, s.grasps[partner], s.variants[partner], loc,
                               others_loc)
                        cls = None
                        cost = base + self._handover_rot_cost(ig, ih, v, io, s)
                        place = None
                    locations = s.locations[:io] + (new_loc,) + s.locations[io + 1:]
                    nxt = ModeState(nxt_g, variants, locations)
                    e = _Edge(kind, ig, ih, io, v, place, partner, cost, key, cls)
                    self._add_edge(s, nxt, e, True, out)
            else:
                v = s.variants[ig]
                variants = s.variants[:ig] + (None,) + s.variants[ig + 1:]
                if partner is None:
                    costs = self._place_cost[io]
                    for k, pc in enumerate(self._placements[io]):
                        key = ("release", ig, ih, v, k, others_loc)
                        cls = ("release", ig, ih, v, pc.face)
                        locations = s.locations[:io] + (k,) + s.locations[io + 1:]
                        nxt = ModeState(nxt_g, variants, locations)
                        cost = base + costs[k] + self._rot_cost(ig, ih, v, io, k, None)
                        e = _Edge("release", ig, ih, io, v, k, None, cost, key, cls)
                        self._add_edge(s, nxt, e, False, out)
                else:
                    loc = s.locations[io]
                    key = ("handover_release", ig, ih, v, partner, nxt_g[partner], s.variants[partner], loc, others_loc)
                    nxt = ModeState(nxt_g, variants, s.locations)
                    e = _Edge("handover_release", ig, ih, io, v, None, partner, base, key, None)
                    self._add_edge(s, nxt, e, False, out)
        return out

    def _edge_pose(self, e: _Edge) -> Optional[Pose]:
        """Where the object is during an edge's step (its placement), None when not tracked."""
        if e.placement is not None:
            return self._placements[e.obj][e.placement].pose
        return None

    def _matches_failed(self, e: _Edge) -> bool:
        hit = self._failed_memo.get(e.key)
        if hit is None:
            hit = False
            P = self._edge_pose(e)
            if P is not None:
                f = self.factory
                g, name = f.grippers[e.gripper], self._variants[e.handle][e.variant].name
                for fk, fg, fname, fP, tol in self._failed:
                    if (fk == e.kind and fg == g and fname == name
                            and float(np.linalg.norm(fP[:3, 3] - P[:3, 3])) < tol
                            and _rotation_angle(fP, P) < 0.2):
                        hit = True
                        break
            self._failed_memo[e.key] = hit
        return hit

    def _edge(self, a: ModeState, b: ModeState) -> _Edge:
        e = self._edges.get((a, b))
        if e is None:  # regenerate (never needed in a normal search)
            for _ in self._successors(a, _Counters()):
                pass
            e = self._edges[(a, b)]
        return e

    def _path_cost(self, path: list) -> float:
        return sum(self._edge(a, b).cost for a, b in zip(path, path[1:]))

    def _query(self, a: ModeState, b: ModeState, e: _Edge, transition: str) -> TransitionQuery:
        f = self.factory
        m = self.model
        var = self._variants[e.handle][e.variant]
        placement = None
        if e.kind == "grasp":
            placement = self._placements[e.obj][e.placement]
            P = placement.pose
        elif e.kind == "release":
            placement = self._placements[e.obj][e.placement]
            P = placement.pose
        else:
            P = self.object_pose(a, e.obj)
            if P is None:
                raise ValueError(f"where is {self._objects[e.obj]!r} handed over? give it a handover_pose")
        partner = None
        if e.partner is not None:
            st = a if e.kind == "handover_grasp" else b
            ph = st.grasps[e.partner]
            partner = (f.grippers[e.partner], self._variants[ph][st.variants[e.partner]])
        return TransitionQuery(
            kind=e.kind, gripper=f.grippers[e.gripper], handle=f.handles[e.handle], object=self._objects[e.obj],
            variant=var, object_pose=P, placement=placement, approach_m=var.approach_m, lift_m=m.lift_m,
            retreat_m=m.retreat_m, partner=partner, others=self._others(a, e.obj), transition=transition)

    def step(self, state_from: Any, state_to: Any) -> RegraspStep:
        if not isinstance(state_from, ModeState):
            return super().step(state_from, state_to)
        base = super().step(state_from.grasps, state_to.grasps)
        e = self._edge(state_from, state_to)
        q = self._query(state_from, state_to, e, base.transition)
        return GeometricStep(
            **{k: getattr(base, k) for k in RegraspStep.__dataclass_fields__ if k != "cost"},
            cost=e.cost, variant=q.variant.name, variant_index=e.variant, grasp_pose=q.variant.pose,
            placement=q.placement, object_pose=q.object_pose,
            partner=q.partner[0] if q.partner is not None else "",
            check=self._results.get(e.key))

    def _make_plan(self, path: list, counters: _Counters) -> RegraspPlan:
        steps = tuple(self.step(a, b) for a, b in zip(path, path[1:]))
        return GeometricPlan(path[0].grasps, steps, sum(s.cost for s in steps), counters.snapshot(),
                             start_state=path[0], goal_state=path[-1], path=tuple(path))

    # ------------------------------------------------------------------ infeasibility

    def mark_infeasible(self, transition: Any, both_directions: bool = False) -> None:
        """Prune a transition. A :class:`GeometricStep` (or a ``(state_from, state_to)`` pair of
        :class:`ModeState` s) prunes exactly that geometric edge, wherever it appears; other forms
        prune the symbolic transition (every variant and placement), as
        :meth:`~.regrasp.RegraspPlanner.mark_infeasible`."""
        pair = None
        if isinstance(transition, GeometricStep):
            pair = None
            for (a, b), e in self._edges.items():
                if a.grasps == transition.state_from and b.grasps == transition.state_to \
                        and e.variant == transition.variant_index and self._same_place(e, transition):
                    pair = (a, b)
                    break
        elif isinstance(transition, tuple) and len(transition) == 2 and isinstance(transition[0], ModeState):
            pair = transition
        if pair is None:
            super().mark_infeasible(transition, both_directions)
            return
        self._prune(self._edge(*pair).key, self._blocked_keys)

    def _same_place(self, e: _Edge, step: GeometricStep) -> bool:
        if step.placement is None or e.placement is None:
            return step.placement is None and e.placement is None
        return self._placements[e.obj][e.placement].name == step.placement.name

    def mark_step_failed(self, step: GeometricStep, tolerance_m: float = 0.02) -> None:
        """An executed step failed: prune the same grasp change with the same grasp variant at the
        same object pose (within ``tolerance_m`` and 0.2 rad) in this and later plans, whatever
        the states' indices (a new planner built for a re-plan from the sensed state keeps it if
        given :meth:`failed_steps`)."""
        kind = {"grasp": "grasp", "release": "release"}[step.direction]
        if step.kind == "handover":
            kind = "handover_" + kind
        if step.object_pose is not None:
            self._failed.append((kind, step.gripper, step.variant, np.asarray(step.object_pose, dtype=float),
                                 float(tolerance_m)))
        self._refresh_failed()

    def _refresh_failed(self) -> None:
        self._failed_memo.clear()
        for e in self._edges.values():
            if not e.dead and self._matches_failed(e):
                e.dead = True
        self._blocked_version += 1

    def failed_steps(self) -> list:
        """The executed failures recorded by :meth:`mark_step_failed` (pass to :meth:`add_failed_steps`)."""
        return list(self._failed)

    def add_failed_steps(self, failed: Iterable) -> None:
        """Carry :meth:`failed_steps` of another planner over (re-plans build a new planner)."""
        self._failed.extend(failed)
        self._refresh_failed()

    # ------------------------------------------------------------------ the lazy search

    def plan(self, start: Any, goal: Union[Goal, GeometricGoal]) -> GeometricPlan:
        """The cheapest plan whose every transition passed ``check`` (module docstring).

        Args:
            start: a :class:`ModeState` (:meth:`start_state`), or any form
                :meth:`start_state` takes (objects then lie on their ``"current"`` placement).
            goal: a :class:`GeometricGoal`, or a grasp goal (:data:`~.regrasp.Goal`).

        Raises:
            ValueError: a malformed start or goal (unknown handle, gripper, object or face).
            NoPlanError: no plan passes; the message names the start, the goal and every pruned
                transition with its reason (grouped when many).
        """
        t0 = time.perf_counter()
        if not isinstance(start, ModeState):
            start = self.start_state(start)
        self._goal(goal)  # validate now (ValueError)
        ik_s = col_s = 0.0
        checks = candidates = 0
        pruned_before = len(self.pruned)
        candidates_iter = self.iter_plans(start, goal)
        while True:
            try:
                cand = next(candidates_iter)
            except StopIteration:
                break
            except NoPlanError as e:   # the search budget
                raise NoPlanError(self._no_plan_text(start, goal, pruned_before, str(e))) from None
            candidates += 1
            bad = None
            path = cand.path
            # in order (the first transitions are shared by many candidates: one check prunes them all),
            # but a last transition that takes the goal handle first: it is the most constrained
            order = list(range(len(cand.steps)))
            if len(order) > 1 and cand.steps[-1].direction == "grasp":
                order = order[-1:] + order[:-1]
            for i in order:
                st = cand.steps[i]
                node, nxt = path[i], path[i + 1]
                e = self._edge(node, nxt)
                res = self._results.get(e.key)
                if res is None and self.check is not None:
                    if checks >= self.max_checks:
                        raise NoPlanError(self._no_plan_text(start, goal, pruned_before,
                                                             f"gave up after {checks} transition checks"))
                    res = self.check(self._query(node, nxt, e, st.transition))
                    checks += 1
                    ik_s += res.ik_s
                    col_s += res.collision_s
                    self._results[e.key] = res
                if res is not None and not res.ok:
                    bad = (node, nxt, e, st, res)
                    break
            if bad is None:
                plan = self._make_plan(list(path), _Counters())
                return replace(plan, stats=cand.stats, pruned=tuple(self.pruned[pruned_before:]), checks=checks,
                               candidates=candidates, plan_time_s=time.perf_counter() - t0, ik_time_s=ik_s,
                               collision_time_s=col_s)
            a, b, e, st, res = bad
            label = self.step(a, b).label
            self.pruned.append(PrunedTransition(label, res.waypoint, res.cause, res.reason))
            if e.cls is not None and res.cause in ("support", "support_arm"):
                # a grasp (release) with this grasp from (onto) this face hit the surface the object rests on:
                # on a flat surface the hand meets it the same way everywhere ("support": pruned at every
                # position now); the arm's other links depend on the position too ("support_arm": pruned
                # after class_budget positions). Out of reach and other collisions prune one edge only.
                seen = self._class_failures.setdefault(e.cls, set())
                seen.add(e.placement)
                if res.cause == "support" or len(seen) >= self.class_budget:
                    self._prune(e.cls, self._blocked_classes)
            self._prune(e.key, self._blocked_keys)
            if res.obstacle not in self._objects:
                # nothing the plan moves is in the way: it fails wherever the other objects are
                self._prune(e.key[:-1], self._blocked_keys)
            if candidates >= self.max_candidates:
                raise NoPlanError(self._no_plan_text(start, goal, pruned_before,
                                                     f"gave up after {candidates} candidate plans"))
        raise NoPlanError(self._no_plan_text(start, goal, pruned_before, None))

    def _no_plan_text(self, start: ModeState, goal: Any, since: int, gave_up: Optional[str]) -> str:
        f = self.factory
        g = goal if isinstance(goal, GeometricGoal) else GeometricGoal(grasps=goal)
        head = (f"no regrasp plan from '{self.state_label(start)}' to {g.describe(f)}"
                + (f" ({gave_up})" if gave_up else ""))
        pruned = self.pruned[since:]
        notes = list(self.model.notes) + list(self.notes)
        if self.prefiltered:
            a, b, res = self.prefiltered[0]
            notes.append(f"{len(self.prefiltered)} grasps and placements out of the arm's workspace were left out "
                         f"without IK, e.g. {self.step(a, b).label}: {res.waypoint}: {res.reason}")
        if not pruned and not notes:
            return head + ": the goal is unreachable with these rules and placements"
        lines = [head + f": {len(pruned)} transition{'s' if len(pruned) != 1 else ''} pruned"]
        if len(pruned) <= MAX_LISTED:
            lines += [f"  - {p.describe()}" for p in pruned]
        else:
            groups: dict[tuple[str, str], list[PrunedTransition]] = {}
            for p in pruned:
                groups.setdefault((p.waypoint, p.cause), []).append(p)
            for (wp, cause), ps in sorted(groups.items(), key=lambda kv: -len(kv[1])):
                lines.append(f"  - {len(ps)} at {wp or 'the step'} ({_CAUSES.get(cause, cause)}), e.g. {ps[0].describe()}")
        for n in notes:
            lines.append(f"  - {n}")
        return "\n".join(lines)


#: pruned transitions listed one by one in a NoPlanError; more are grouped by waypoint and cause
MAX_LISTED = 8
_CAUSES = {"reach": "out of reach", "collision": "in collision", "support": "the hand would hit the support",
           "support_arm": "the arm would hit the support",
           "width": "too wide", "motion": "no motion between the waypoints"}


def _face_now(placements: Sequence[PlacementCandidate], pose: Optional[Pose]) -> Optional[str]:
    """The face of the placement whose orientation is nearest to ``pose`` (up to a turn about the
    vertical): the face the object stands on, or would stand on if put down as it is held."""
    if pose is None or not placements:
        return None
    z = np.asarray(pose)[:3, :3].T @ np.array([0.0, 0.0, 1.0])   # world up in the object frame
    best = max(placements, key=lambda pc: float((pc.pose[:3, :3].T @ np.array([0.0, 0.0, 1.0])) @ z))
    return best.face


def _face_name(obj: str, face: str) -> str:
    """``"+x"`` -> ``"box/+x"``; a full name passes."""
    return face if "/" in face else f"{obj}/{face}"
