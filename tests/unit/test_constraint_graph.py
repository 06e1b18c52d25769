"""Constraint-graph factory: counts from the closed forms, HPP names, rules, waypoints."""

from __future__ import annotations

import itertools

import pytest

from py_trees_manipulation.planning.constraint_graph import (
    ConstraintGraphFactory,
    Rule,
    expected_ordered_sequence_count,
    expected_state_count,
    expected_transition_count,
    expected_transition_pair_count,
    state_count_by_grasps,
)


def grid(n_g: int, n_h: int, contacts: bool = True) -> ConstraintGraphFactory:
    """n_g grippers, n_h single-handle objects lying on a table."""
    f = ConstraintGraphFactory()
    f.set_grippers([f"g{i}" for i in range(n_g)])
    f.set_objects(
        [f"o{i}" for i in range(n_h)],
        [[f"o{i}/h"] for i in range(n_h)],
        [[f"o{i}/bottom"] if contacts else [] for i in range(n_h)],
    )
    f.environment_contacts(["table/top"])
    return f


def pr2_two_hands(rules=None) -> ConstraintGraphFactory:
    """PR2 flips a box with two hands (HPP benchmark pr2-manipulation-two-hand)."""
    f = ConstraintGraphFactory()
    f.set_grippers(["pr2/l_gripper", "pr2/r_gripper"])
    f.set_objects(["box"], [["box/handle", "box/handle2"]], [["box/box_surface"]])
    f.environment_contacts(["kitchen_area/pancake_table_table_top"])
    f.set_rules(rules if rules is not None else [Rule([""], [""], True)])
    return f


def hpp_recurse_emulation(f: ConstraintGraphFactory):
    """Literal re-statement of HPP's _recurse (no memo of refused tuples), for comparison.

    Returns (states in creation order with priorities, transition pairs, recursive calls).
    """
    states: dict = {}
    pairs: list = []
    calls = [0]

    def make(grasps, prio):
        if grasps not in states:
            states[grasps] = prio

    def rec(grippers, handles, grasps, depth):
        calls[0] += 1
        ok = f.grasp_is_allowed(grasps)
        if ok:
            make(grasps, depth)
        if not grippers or not handles:
            return
        for k, ig in enumerate(grippers):
            for j, ih in enumerate(handles):
                n = grasps[:ig] + (ih,) + grasps[ig + 1:]
                nok = f.grasp_is_allowed(n)
                new = n not in states
                if nok:
                    make(n, depth + 1)
                if ok and nok:
                    pair = f.transition_names(grasps, n, ig)
                    if pair not in pairs:
                        pairs.append(pair)
                if new:
                    rec(grippers[:k] + grippers[k + 1:], handles[:j] + handles[j + 1:], n,
                        depth + 2)

    rec(tuple(range(len(f.grippers))), tuple(range(len(f.handles))), (None,) * len(f.grippers), 0)
    return states, pairs, calls[0]


# ------------------------------------------------------------------ closed forms


@pytest.mark.parametrize(
    "n_g,n_h,states,pairs,sequences",
    [
        (1, 1, 2, 1, 2),
        (1, 4, 5, 4, 5),
        (2, 1, 3, 2, 3),
        (2, 2, 7, 8, 9),
        (2, 4, 21, 32, 33),
        (3, 3, 34, 63, 82),
        (2, 6, 43, 72, 73),
        (4, 4, 209, 544, 1313),
        (3, 6, 229, 558, 919),
        (4, 8, 3393, 11456, 49089),
        (6, 6, 13327, 55656, 1181737),
        (8, 8, 1441729, 8379008, 3705927297),
    ],
)
def test_closed_forms_match_reference_table(n_g, n_h, states, pairs, sequences):
    assert expected_state_count(n_g, n_h) == states
    assert expected_transition_pair_count(n_g, n_h) == pairs
    assert expected_ordered_sequence_count(n_g, n_h) == sequences
    assert expected_transition_count(n_g, n_h) == 2 * pairs + states
    assert expected_transition_count(n_g, n_h, loops=False) == 2 * pairs
    # T = sum_k k S_k
    assert pairs == sum(
        k * state_count_by_grasps(n_g, n_h, k) for k in range(min(n_g, n_h) + 1)
    )


@pytest.mark.parametrize("n_g,n_h", [(g, h) for g in range(1, 7) for h in range(1, 7)])
def test_generated_counts_equal_formulas_up_to_6x6(n_g, n_h):
    f = grid(n_g, n_h)
    f.generate()
    n_states = expected_state_count(n_g, n_h)
    assert len(f.states) == n_states
    assert len(f.transition_pairs) == expected_transition_pair_count(n_g, n_h)
    assert len(f.transitions) == expected_transition_count(n_g, n_h)
    # every tuple expanded exactly once (HPP would need the same here: nothing refused)
    assert f.recurse_calls == n_states
    # priorities: 0 for free, 2k - 1 for k grasps; per-k counts from the formula
    by_k: dict[int, int] = {}
    for s in f.states.values():
        k = s.n_grasps
        by_k[k] = by_k.get(k, 0) + 1
        assert s.priority == (0 if k == 0 else 2 * k - 1)
    assert by_k == {
        k: state_count_by_grasps(n_g, n_h, k) for k in range(min(n_g, n_h) + 1)
    }


def test_states_are_exactly_the_partial_injective_maps():
    f = grid(3, 4)
    f.generate()
    expected = set()
    for held in itertools.product([None, 0, 1, 2, 3], repeat=3):
        hs = [h for h in held if h is not None]
        if len(hs) == len(set(hs)):
            expected.add(held)
    assert set(f.states) == expected
    for t in f.transitions.values():
        assert t.state_from in f.states and t.state_to in f.states


# ------------------------------------------------------------------ names


def test_tutorial_3_names():
    f = ConstraintGraphFactory()
    f.set_grippers(["pr2/l_gripper"])
    f.set_objects(["box"], [["box/handle2"]], [["box/box_surface"]])
    f.environment_contacts(["kitchen_area/pancake_table_table_top"])
    f.set_rules([Rule([".*"], [".*"], True)])
    f.generate()
    assert [s.name for s in f.states.values()] == ["free", "pr2/l_gripper grasps box/handle2"]
    assert [s.abbrev for s in f.states.values()] == ["f", "0-0"]
    assert set(f.transitions) == {
        "Loop | f",
        "Loop | 0-0",
        "pr2/l_gripper > box/handle2 | f",
        "pr2/l_gripper < box/handle2 | 0-0",
    }
    assert f.transition_pairs == {
        ("pr2/l_gripper > box/handle2 | f", "pr2/l_gripper < box/handle2 | 0-0")
    }
    loop = f.transitions["Loop | f"]
    assert loop.weight == 0 and loop.kind == "loop"
    assert f.transitions["pr2/l_gripper > box/handle2 | f"].weight == 1


def test_docstring_example_state_names():
    f = ConstraintGraphFactory()
    f.set_grippers(["g1", "g2", "g3"])
    f.set_objects(["o"], [["h1", "h2"]], [[]])
    assert f.state_name((1, 0, None)) == "g1 grasps h2 : g2 grasps h1"
    assert f.state_name((1, 0, None), abbrev=True) == "0-1:1-0"
    assert f.state_name((None, None, None)) == "free"
    assert f.loop_transition_name((1, 0, None)) == "Loop | 0-1:1-0"
    assert f.transition_names((None, 0, None), (1, 0, None), 0) == (
        "g1 > h2 | 1-0",
        "g1 < h2 | 0-1:1-0",
    )
    # state names list grippers in gripper order, whatever the grasp order
    assert f.state_name((None, 1, 0)) == "g2 grasps h2 : g3 grasps h1"
    for grasps in [(1, 0, None), (None, None, None), (None, 1, 0)]:
        assert f.parse_state_name(f.state_name(grasps)) == grasps
        assert f.parse_state_name(f.state_name(grasps, abbrev=True)) == grasps
    assert f.parse_transition_name("g1 > h2 | 1-0") == ((None, 0, None), (1, 0, None))
    assert f.parse_transition_name("g1 < h2 | 0-1:1-0") == ((1, 0, None), (None, 0, None))
    assert f.parse_transition_name("Loop | f") == ((None,) * 3, (None,) * 3)
    with pytest.raises(ValueError):
        f.parse_transition_name("g1 < h1 | 0-1")  # g1 does not hold h1 there
    with pytest.raises(ValueError):
        f.parse_state_name("0-0:1-0")  # h1 held twice


def test_ur3_benchmark_sub_edge_names_and_chain():
    f = ConstraintGraphFactory()
    f.set_grippers(["ur3/gripper"])
    f.set_objects(["sphere0"], [["sphere0/handle"]], [["sphere0/floor"]])
    f.environment_contacts(["kitchen_area/table"])
    f.generate()
    fwd = f.transitions["ur3/gripper > sphere0/handle | f"]
    bwd = f.transitions["ur3/gripper < sphere0/handle | 0-0"]
    assert fwd.waypoint_names == (
        "ur3/gripper > sphere0/handle | f_pregrasp",
        "ur3/gripper > sphere0/handle | f_intersec",
        "ur3/gripper > sphere0/handle | f_preplace",
    )
    assert bwd.waypoint_names == fwd.waypoint_names[::-1]
    fe = f.sub_edges(fwd)
    be = f.sub_edges(bwd)
    assert [e.name for e in fe] == [f"{fwd.name}_{s}" for s in ("01", "12", "23", "34")]
    assert [e.name for e in be] == [f"{bwd.name}_{s}" for s in ("43", "32", "21", "10")]
    assert "ur3/gripper > sphere0/handle | f_23" in [e.name for e in fe]
    assert "ur3/gripper < sphere0/handle | 0-0_32" in [e.name for e in be]
    # chain continuity, containing states (M = 2: first two in free), short flags
    held = "ur3/gripper grasps sphere0/handle"
    assert fe[0].source == "free" and fe[-1].target == held
    assert all(a.target == b.source for a, b in zip(fe, fe[1:]))
    assert all(a.target == b.source for a, b in zip(be, be[1:]))
    assert [e.containing_state for e in fe] == ["free", "free", held, held]
    assert [e.containing_state for e in be] == [held, held, "free", "free"]
    assert [e.short for e in fe] == [False, True, True, True]
    assert [e.short for e in be] == [False, True, True, True]
    ws = {w.kind: w for w in f.waypoint_states(fwd)}
    assert ws["pregrasp"].constraints == ("place_sphere0", "ur3/gripper pregrasps sphere0/handle")
    assert ws["intersec"].constraints == ("place_sphere0", "ur3/gripper grasps sphere0/handle")
    assert ws["preplace"].constraints == ("preplace_sphere0", "ur3/gripper grasps sphere0/handle")


# ------------------------------------------------------------------ waypoints and HPP components


def test_pr2_two_hands_graph_and_waypoints():
    f = pr2_two_hands()
    f.generate()
    assert len(f.states) == 7  # as the paper reports for PR2 2 grippers x 2 handles
    assert len(f.transition_pairs) == 8
    n_w = sorted(f.transitions[fw].n_waypoints for fw, _ in f.transition_pairs)
    assert n_w == [1, 1, 1, 1, 3, 3, 3, 3]  # from free: placed (3); second hand: handover (1)
    t = f.transitions["pr2/r_gripper > box/handle2 | 0-0"]
    assert t.no_place and t.waypoint_names == ("pr2/r_gripper > box/handle2 | 0-0_pregrasp",)
    assert [e.containing_state for e in f.sub_edges(t)] == ["pr2/l_gripper grasps box/handle"] * 2
    # HPP components: 7 states + 7 loops + 4 * 13 + 4 * 7
    assert f.component_count() == 94
    # one object only: the two-grasp states are not foliated -> no level-set edges
    assert not any(tr.level_set for tr in f.transitions.values())
    assert f.states[(0, 1)].priority == 3 and f.states[(0, None)].priority == 1


def test_waypoints_without_contacts_and_level_set_with_two_objects():
    f = grid(1, 1, contacts=False)
    f.generate()
    assert f.transitions["g0 > o0/h | f"].waypoint_kinds == ("pregrasp",)
    assert f.state_constraints((None,)) == ((), ("o0/lock",))
    f = grid(1, 2)
    f.environment_contacts([])  # no environment contact -> locked joints, 1 waypoint
    f.generate()
    assert f.transitions["g0 > o0/h | f"].n_waypoints == 1
    f = grid(1, 2)
    f.generate()
    t = f.transitions["g0 > o0/h | f"]
    assert t.n_waypoints == 3
    assert t.level_set and t.level_set_name == "g0 > o0/h | f_ls"  # o1 stays placed
    assert f.transitions["g0 < o0/h | 0-0"].level_set_name == "g0 < o0/h | 0-0_ls"
    assert f.state_constraints((0,)) == (("g0 grasps o0/h", "place_o1"), ("place_o1/complement",))
    # an axial handle (free rotation) foliates the grasp state
    f = grid(1, 1)
    f.set_handle_masks({"o0/h": (True, True, True, True, True, False)})
    f.generate()
    assert f.transitions["g0 > o0/h | f"].level_set


def test_to_networkx_export():
    nx = pytest.importorskip("networkx")
    f = pr2_two_hands()
    f.generate()
    g = f.to_networkx()
    assert g.number_of_nodes() == 7 and g.number_of_edges() == 16
    assert g.nodes[(None, None)]["name"] == "free"
    assert g.edges[(None, None), (0, None)]["name"] == "pr2/l_gripper > box/handle | f"
    assert nx.shortest_path_length(g, (0, None), (None, 1)) == 2  # handover or via free
    assert not g.has_edge((0, None), (1, None))  # no swap edge: a regrasp passes through free
    assert nx.shortest_path_length(g, (0, None), (1, None)) == 2
    assert f.to_networkx(include_loops=True).number_of_edges() == 16 + 7


# ------------------------------------------------------------------ rules


def rule_factory(rules, match="full"):
    f = ConstraintGraphFactory()
    f.set_grippers(["left", "right"])
    f.set_objects(["box"], [["box/h", "box/h2"]], [["box/bottom"]])
    f.environment_contacts(["table"])
    f.set_rules(rules, match=match)
    return f


def test_first_matching_rule_wins():
    accept_then_refuse = rule_factory(
        [Rule(["left"], ["box/h"], True), Rule(["left"], ["box/.*"], False),
         Rule([".*"], [".*"], True)]
    )
    g = accept_then_refuse.grasp_is_allowed
    assert g((0, None)) and not g((1, None)) and g((None, 1))
    # ".*" also matches the empty name "": rule 2 with ".*" would refuse an empty left too
    dot_star = rule_factory([Rule(["left"], [".*"], False), Rule([".*"], [".*"], True)])
    assert not dot_star.grasp_is_allowed((None, 1))
    refuse_first = rule_factory(
        [Rule(["left"], [".*"], False), Rule(["left"], ["box/h"], True)]
    )
    # left holds box/h: the first rule applies (".*" matches) and refuses
    assert not refuse_first.grasp_is_allowed((0, None))
    assert refuse_first.set_rules([]).first_applying((0, None)) is None


def test_refuse_by_default_once_rules_exist():
    f = rule_factory([Rule(["left"], ["box/h"], True)])
    # only tuples where left holds box/h match; everything else (even free) is refused
    assert f.grasp_is_allowed((0, None)) and f.grasp_is_allowed((0, 1))
    assert not f.grasp_is_allowed((None, None)) and not f.grasp_is_allowed((1, None))
    f.generate()
    assert set(f.states) == {(0, None), (0, 1)}
    # no rules at all: everything allowed
    g = ConstraintGraphFactory()
    g.set_grippers(["left"])
    g.set_objects(["box"], [["box/h"]], [[]])
    assert g.grasp_is_allowed((None,)) and g.grasp_is_allowed((0,))


def test_empty_string_means_holds_nothing():
    f = rule_factory([Rule(["left", "right"], ["", ".*"], True)])
    assert f.grasp_is_allowed((None, None)) and f.grasp_is_allowed((None, 0))
    assert not f.grasp_is_allowed((0, None))
    f.generate()
    assert set(f.states) == {(None, None), (None, 0), (None, 1)}
    # gripper pattern "" matches no gripper: the rule has no condition -> accepts everything
    quirk = rule_factory([Rule([""], [""], True)])
    assert all(quirk.grasp_is_allowed(s) for s in [(None, None), (0, 1), (1, None)])


def test_whole_name_match_vs_hpp_python_prefix_match():
    rules = [Rule(["left"], ["box/h"], True), Rule(["left"], [""], True)]
    full = rule_factory(rules)
    prefix = rule_factory(rules, match="prefix")
    # "box/h" is a prefix of "box/h2": HPP's Python factory accepts left holding box/h2
    assert not full.grasp_is_allowed((1, None))
    assert prefix.grasp_is_allowed((1, None))
    # gripper patterns too: "lef" matches "left" only as a prefix. With whole-name matching a
    # gripper pattern matching no gripper leaves the rule without condition: it applies always.
    typo = [Rule(["lef"], ["box/h"], True), Rule([".*"], [".*"], False)]
    assert rule_factory(typo).grasp_is_allowed((None, None))
    assert not rule_factory(typo, "prefix").grasp_is_allowed((None, None))
    full.generate()
    prefix.generate()
    assert len(full.states) == 5 and len(prefix.states) == 7  # + left holding box/h2


def test_rule_errors_and_possible_grasps():
    with pytest.raises(ValueError):
        rule_factory([Rule(["left", "l.*"], ["box/h", "box/h2"], True)])  # left matched twice
    with pytest.raises(ValueError):
        Rule(["left"], ["a", "b"], True)
    with pytest.raises(TypeError):
        Rule("left", "box/h", True)
    f = rule_factory([Rule([".*"], [".*"], True)])
    f.set_possible_grasps({"left": ["box/h"]})  # right may hold nothing; AND with the rules
    f.generate()
    assert set(f.states) == {(None, None), (0, None)}
    with pytest.raises(ValueError):
        f.set_possible_grasps({"left": ["box/h3"]})
    with pytest.raises(ValueError):
        f.set_possible_grasps({"middle": ["box/h"]})


def test_same_graph_as_hpp_recursion_with_refused_intermediates():
    # "at most one grasp": HPP re-expands every refused tuple
    f = grid(4, 4)
    grippers = [f"g{i}" for i in range(4)]
    f.set_rules(
        [Rule(grippers, [""] * 4, True)]
        + [Rule(grippers, ["" if j != i else ".*" for j in range(4)], True) for i in range(4)]
    )
    states, pairs, calls = hpp_recurse_emulation(f)
    assert calls == expected_ordered_sequence_count(4, 4) == 1313
    f.generate()
    assert f.recurse_calls == expected_state_count(4, 4) == 209  # each tuple once
    assert list(f.states) == list(states)
    assert [s.priority for s in f.states.values()] == list(states.values())
    assert f.transition_pairs == set(pairs)
    assert len(f.states) == 1 + 16 and len(pairs) == 16


def test_states_reachable_only_through_refused_states_are_isolated():
    # free and two-grasp states accepted, one-grasp states refused (HPP pitfall 3)
    f = grid(2, 2)
    f.grasp_is_allowed.append(lambda gr: sum(h is not None for h in gr) != 1)
    states, pairs, _ = hpp_recurse_emulation(f)
    f.generate()
    assert set(f.states) == {(None, None), (0, 1), (1, 0)} == set(states)
    assert f.transition_pairs == set() == set(pairs)
    assert len(f.transitions) == 3  # loops only


def test_rules_with_hpp_emulation_on_3x3():
    f = ConstraintGraphFactory()
    f.set_grippers(["arm/a", "arm/b", "magnet"])
    f.set_objects(["c0", "c1"], [["c0/top", "c0/side"], ["c1/top"]], [["c0/b"], ["c1/b"]])
    f.environment_contacts(["table"])
    f.set_rules([
        Rule(["magnet"], ["c0/.*"], False),
        Rule(["arm/.*"], ["c1/top"], False),
        Rule(["arm/a", "arm/b"], ["c0/top|", ".*"], True),
    ])
    states, pairs, _ = hpp_recurse_emulation(f)
    f.generate()
    assert list(f.states) == list(states)
    assert f.transition_pairs == set(pairs)
    # eager adjacency equals the lazy neighbour function on every allowed state
    for s in f.states:
        lazy = {n for n, _, _ in f.neighbours(s)}
        eager = {
            t.state_to for t in f.transitions.values() if t.state_from == s and t.kind != "loop"
        }
        assert lazy == eager


def test_transition_is_allowed_hook():
    class NoHandover(ConstraintGraphFactory):
        def transition_is_allowed(self, state_from, state_to):
            return all(h is None for h in state_from)  # only grasps from free

    f = NoHandover()
    f.set_grippers(["l", "r"])
    f.set_objects(["box"], [["box/a", "box/b"]], [["box/bottom"]])
    f.environment_contacts(["table"])
    f.generate()
    assert len(f.states) == 7
    assert len(f.transition_pairs) == 4  # the 4 handover pairs are dropped
    assert {n for n, _, _ in f.neighbours((0, None))} == {(None, None)}


def test_from_config_and_validation():
    f = ConstraintGraphFactory.from_config({
        "grippers": ["panda/hand"],
        "objects": [{"name": "box", "handles": ["box/top", "box/side"],
                     "contacts": ["box/bottom"]}],
        "environment_contacts": ["table/top"],
        "rules": [{"grippers": [".*"], "handles": [".*"], "link": True}],
    })
    f.generate()
    assert len(f.states) == 3
    assert f.grasps_from_names({"panda/hand": "box/side"}) == (1,)
    assert f.names_from_grasps((0,)) == {"panda/hand": "box/top"}
    with pytest.raises(ValueError):
        f.grasps_from_names({"panda/hand": "box/bottom"})
    with pytest.raises(ValueError):
        f.check_grasps((0, 1))
    with pytest.raises(IndexError):
        f.set_objects(["a", "b"], [["a/h"]], [[], []])
    with pytest.raises(ValueError):
        f.set_objects(["a", "b"], [["h"], ["h"]], [[], []])
