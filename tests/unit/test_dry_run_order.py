"""``ptm validate --plan`` follows the arm motions of the nominal path only: a Selector's fallbacks and
a child whose failure is accepted are not followed (the run may never take them)."""

from py_trees_manipulation.located.errors import Loc
from py_trees_manipulation.trees.plan_check import _tick_order
from py_trees_manipulation.trees.spec import NodeSpec


def node(kind: str, category: str, *children: NodeSpec, name: str = "") -> NodeSpec:
    return NodeSpec(kind, category, name or kind, {}, list(children), Loc("t.yaml", 1, 1))


def test_only_the_nominal_path_is_followed():
    tree = node("Sequence", "composite",
                node("MoveJoints", "behaviour", name="ready"),
                node("Selector", "composite",
                     node("MoveCartesian", "behaviour", name="first_try"),
                     node("MoveCartesian", "behaviour", name="fallback")),
                node("FailureIsSuccess", "decorator", node("MoveCartesian", "behaviour", name="optional")),
                node("Retry", "decorator", node("Parallel", "composite", node("MoveToPose", "behaviour", name="both"))),
                node("MoveCartesian", "behaviour", name="last"))
    nominal = {n.name: ok for n, ok in _tick_order(tree) if n.category == "behaviour"}
    assert nominal == {"ready": True, "first_try": False, "fallback": False, "optional": False, "both": True,
                       "last": True}
