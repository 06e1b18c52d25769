"""Regrasp search: optimal plans, alternatives in cost order, infeasibility and lazy expansion."""

from __future__ import annotations

import itertools

import pytest

from py_trees_manipulation.planning import (
    ConstraintGraphFactory,
    NoPlanError,
    RegraspPlanner,
    Rule,
    expected_state_count,
)


def panda_box() -> ConstraintGraphFactory:
    """One Panda hand, a box with a handle on three faces, lying on a table."""
    f = ConstraintGraphFactory()
    f.set_grippers(["panda/hand"])
    f.set_objects(["box"], [["box/top", "box/side", "box/front"]], [["box/bottom"]])
    f.environment_contacts(["table/top"])
    return f


def two_pandas() -> ConstraintGraphFactory:
    """Two Panda hands, one box with a handle on its left and right faces."""
    f = ConstraintGraphFactory()
    f.set_grippers(["left/hand", "right/hand"])
    f.set_objects(["box"], [["box/left", "box/right"]], [["box/bottom"]])
    f.environment_contacts(["table/top"])
    return f


def grid(n_g: int, n_h: int) -> ConstraintGraphFactory:
    f = ConstraintGraphFactory()
    f.set_grippers([f"g{i}" for i in range(n_g)])
    f.set_objects(
        [f"o{i}" for i in range(n_h)], [[f"o{i}/h"] for i in range(n_h)], [["c"]] * n_h
    )
    f.environment_contacts(["table"])
    return f


def test_single_panda_switch_face():
    planner = RegraspPlanner(panda_box())
    plan = planner.plan({"panda/hand": "box/top"}, {"panda/hand": "box/side"})
    assert plan.cost == 2.0 and len(plan) == 2
    assert plan.transition_names == (
        "panda/hand < box/top | 0-0",
        "panda/hand > box/side | f",
    )
    assert plan.states == ((0,), (None,), (1,))
    release, grasp = plan.steps
    assert (release.kind, release.direction, release.object) == ("release", "release", "box")
    assert release.state_to_name == "free"
    assert release.waypoints == (
        "panda/hand > box/top | f_preplace",
        "panda/hand > box/top | f_intersec",
        "panda/hand > box/top | f_pregrasp",
    )
    assert (grasp.kind, grasp.gripper, grasp.handle) == ("grasp", "panda/hand", "box/side")
    assert grasp.state_to_name == "panda/hand grasps box/side"
    assert plan.to_dict()["steps"][1]["transition"] == "panda/hand > box/side | f"
    # already there: empty plan
    assert len(planner.plan((1,), (1,))) == 0
    assert planner.plan("panda/hand grasps box/side", "f").transition_names == (
        "panda/hand < box/side | 0-1",
    )


def test_two_pandas_handover_and_costs():
    f = two_pandas()
    planner = RegraspPlanner(f, step_costs={"grasp": 3.0, "release": 3.0, "handover": 1.0})
    start = {"left/hand": "box/left"}
    goal = {"left/hand": None, "right/hand": "box/right"}
    plan = planner.plan(start, goal)
    assert plan.transition_names == (
        "right/hand > box/right | 0-0",
        "left/hand < box/left | 0-0:1-1",
    )
    assert [s.kind for s in plan] == ["handover", "handover"]
    assert [s.direction for s in plan] == ["grasp", "release"]
    assert plan.cost == 2.0
    assert plan.steps[0].waypoints == ("right/hand > box/right | 0-0_pregrasp",)
    # with uniform costs both routes (handover, or place then pick) cost 2; list both
    uniform = RegraspPlanner(f)
    plans = list(uniform.iter_plans(start, goal))
    assert [p.cost for p in plans] == [2.0, 2.0]
    kinds = sorted(tuple(s.kind for s in p) for p in plans)
    assert kinds == [("handover", "handover"), ("release", "grasp")]


def test_partial_and_predicate_goals():
    f = grid(3, 3)
    planner = RegraspPlanner(f)
    start = (0, 1, 2)
    # partial: only g0 matters; o1 is held by g1: release g0, release g1, g0 takes o1
    plan = planner.plan(start, {"g0": "o1/h"})
    assert plan.cost == 3.0
    assert plan.goal[0] == 1
    # predicate: "nothing held" -> 3 releases, heuristic-free Dijkstra
    plan = planner.plan(start, lambda g: all(h is None for h in g))
    assert plan.cost == 3.0 and plan.goal == (None, None, None)
    assert planner.goal_satisfied((1, None, None), {"g0": "o1/h"})
    assert not planner.goal_satisfied((None, 1, None), {"g0": "o1/h"})


@pytest.mark.parametrize("with_rules", [False, True])
def test_optimal_costs_equal_bfs_on_the_eager_graph(with_rules):
    nx = pytest.importorskip("networkx")
    f = grid(3, 3)
    if with_rules:
        f.set_rules([
            Rule(["g2"], ["o0/h"], False),          # g2 never takes o0
            Rule(["g0", "g1"], ["o1/h", ".*"], False),  # not g0 on o1 with g1 busy or empty
            Rule([".*"], [".*"], True),
        ])
    f.generate()
    g = f.to_networkx()
    dist = dict(nx.all_pairs_shortest_path_length(g))
    planner = RegraspPlanner(f)
    for a, b in itertools.product(list(f.states), repeat=2):
        if b in dist[a]:
            plan = planner.plan(a, b)
            assert plan.cost == dist[a][b]
            # every step is an edge of the eager graph with its HPP name
            for s in plan:
                assert g.edges[s.state_from, s.state_to]["name"] == s.transition
        else:
            with pytest.raises(NoPlanError):
                planner.plan(a, b)


def test_alternatives_match_networkx_shortest_simple_paths():
    nx = pytest.importorskip("networkx")
    f = grid(2, 3)
    f.generate()
    g = f.to_networkx()
    start, goal = (0, 1), (1, 2)
    ref = list(itertools.islice(nx.shortest_simple_paths(g, start, goal), 25))
    planner = RegraspPlanner(f)
    plans = list(planner.iter_plans(start, goal, max_plans=25))
    assert [p.cost for p in plans] == [len(p) - 1 for p in ref]
    assert len({p.states for p in plans}) == len(plans)  # no duplicates
    assert all(len(set(p.states)) == len(p.states) for p in plans)  # loopless
    # the set of optimal plans is the same
    best = min(len(p) for p in ref)
    assert {p.states for p in plans if p.cost == best - 1} == {
        tuple(p) for p in ref if len(p) == best
    }


def test_infeasible_step_replanning():
    planner = RegraspPlanner(panda_box())
    seen = []
    for plan in planner.iter_plans((0,), (1,), max_plans=10):
        seen.append(plan.transition_names)
        # pretend placing the box back (release onto the table) is always out of reach
        bad = next(s for s in plan if s.kind == "release")
        planner.mark_infeasible(bad)
    # only one route exists (release top, grasp side): after blocking, nothing else
    assert seen == [("panda/hand < box/top | 0-0", "panda/hand > box/side | f")]
    assert planner.blocked_transitions == {((0,), (None,))}
    with pytest.raises(NoPlanError):
        planner.plan((0,), (1,))
    planner.clear_infeasible()
    assert planner.plan((0,), (1,)).cost == 2.0


def test_infeasible_handover_falls_back_to_place_and_pick():
    f = two_pandas()
    planner = RegraspPlanner(f, step_costs={"grasp": 2.0, "release": 2.0, "handover": 1.0})
    start, goal = (0, None), (None, 1)
    executed = []
    for plan in planner.iter_plans(start, goal):
        ok = True
        for step in plan:
            if step.kind == "handover":  # e.g. the arms cannot reach a common pose
                planner.mark_infeasible(step.transition)
                ok = False
                break
            executed.append(step.transition)
        if ok:
            break
    assert executed == ["left/hand < box/left | 0-0", "right/hand > box/right | f"]
    assert ((0, None), (0, 1)) in planner.blocked_transitions


def test_iter_plans_never_repeats_after_marks_and_respects_limits():
    planner = RegraspPlanner(grid(3, 3))
    start, goal = (0, 1, 2), (1, 2, 0)
    plans = []
    blocked_before: set = set()
    for plan in planner.iter_plans(start, goal, max_plans=12):
        edges = {(s.state_from, s.state_to) for s in plan}
        assert not edges & blocked_before  # a plan never uses a transition marked earlier
        plans.append(plan)
        if len(plans) % 3 == 0:
            mid = plan.steps[len(plan) // 2]
            planner.mark_infeasible(mid)
            blocked_before.add((mid.state_from, mid.state_to))
    costs = [p.cost for p in plans]
    assert len(plans) == 12
    assert costs == sorted(costs) and costs[0] == 6.0
    assert len({p.states for p in plans}) == 12
    assert planner.blocked_transitions == blocked_before and len(blocked_before) == 4
    assert all(p.cost <= 6.0 for p in planner.iter_plans(start, goal, max_cost=6.0))
    # the goal has 3 incoming transitions: blocking all of them leaves no plan
    for pred in [(None, 2, 0), (1, None, 0), (1, 2, None)]:
        planner.mark_infeasible(planner.step(pred, goal))
    assert list(planner.iter_plans(start, goal)) == []


def test_mark_grasp_infeasible():
    planner = RegraspPlanner(two_pandas())
    planner.mark_grasp_infeasible("right/hand", "box/right")
    plan = planner.plan((0, None), {"right/hand": "box/left"})
    assert all(not (s.gripper == "right/hand" and s.handle == "box/right") for s in plan)
    with pytest.raises(NoPlanError):
        planner.plan((0, None), {"right/hand": "box/right"})
    # releasing it stays possible when the start already holds it
    assert planner.plan((None, 1), (None, None)).transition_names == (
        "right/hand < box/right | 1-1",
    )


def test_rules_apply_to_the_search():
    f = two_pandas()
    # handovers only: the box must never be put down once held
    f.set_rules([Rule(["left/hand", "right/hand"], ["", ""], False), Rule([".*"], [".*"], True)])
    planner = RegraspPlanner(f)
    plan = planner.plan((0, None), (None, 1))
    assert [s.kind for s in plan] == ["handover", "handover"]
    with pytest.raises(ValueError):
        planner.plan((None, None), (0, None))  # start refused: "a configuration has no node"
    with pytest.raises(NoPlanError):
        planner.plan((0, None), (None, None))  # goal refused
    assert list(planner.iter_plans((0, None), (None, None))) == []


def test_unreachable_and_budget():
    f = grid(2, 2)
    f.set_possible_grasps({"g0": ["o0/h"], "g1": ["o1/h"]})
    planner = RegraspPlanner(f)
    with pytest.raises(NoPlanError):
        planner.plan((None, None), (1, None))  # refused goal
    with pytest.raises(NoPlanError):
        planner.plan((0, None), lambda g: g[0] == 1)  # predicate never satisfiable
    with pytest.raises(NoPlanError, match="budget"):
        RegraspPlanner(grid(4, 4), max_expansions=3).plan((None,) * 4, lambda g: False)
    with pytest.raises(ValueError):
        RegraspPlanner(grid(2, 2), step_costs={"grasp": 0.0})
    with pytest.raises(ValueError):
        RegraspPlanner(grid(2, 2), step_costs={"swap": 1.0})


def test_cost_fn_prefers_cheaper_gripper():
    f = two_pandas()
    # the right arm is far from the box: its grasps cost 5 (e.g. longer approach)
    planner = RegraspPlanner(
        f, cost_fn=lambda t: 5.0 if t.gripper == 1 else 1.0, min_step_cost=1.0
    )
    plan = planner.plan((None, None), lambda g: any(h is not None for h in g))
    assert plan.cost == 1.0 and plan.steps[0].gripper == "left/hand"


def test_lazy_search_touches_a_small_part_of_6x6():
    f = grid(6, 6)
    planner = RegraspPlanner(f)
    start, goal = (0, 1, 2, 3, 4, 5), (1, 2, 3, 4, 5, 0)
    plan = planner.plan(start, goal)
    # each gripper must release and re-grasp (12 steps), the heuristic is exact here
    assert plan.cost == 12.0
    total = expected_state_count(6, 6)
    assert total == 13327
    assert plan.stats.expanded <= 12 * 2
    assert plan.stats.distinct_states < total // 20
    assert len(f.states) == 0  # the full graph was never built
    plans = list(planner.iter_plans(start, goal, max_plans=3))
    assert [p.cost for p in plans] == [12.0, 12.0, 12.0]
    assert plans[-1].stats.distinct_states < total // 4
    # from free to a full grasp tuple: one grasp per gripper, nothing else expanded
    plan = planner.plan((None,) * 6, (0, 1, 2, 3, 4, 5))
    assert plan.cost == 6.0 and plan.stats.expanded == 6
