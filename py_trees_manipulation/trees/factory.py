"""Build a py_trees tree from a validated :class:`~.spec.TaskSpec`.

Behaviours never import this module (the loader stays separate from the behaviours).
"""

from __future__ import annotations

from typing import Any

import py_trees

from ..behaviors import registry
from ..located.locyaml import to_plain
from .nodes import make_composite, make_decorator
from .spec import NodeSpec, TaskSpec


def build_node(spec: NodeSpec) -> py_trees.behaviour.Behaviour:
    """The py_trees behaviour for a node spec (recursively). The spec must have passed the loader."""
    name = spec.name or spec.type
    if spec.category == "composite":
        node = make_composite(spec.type, name, spec.params, [build_node(c) for c in spec.children])
    elif spec.category == "decorator":
        node = make_decorator(spec.type, name, spec.params, build_node(spec.children[0]))
    else:
        cls = registry.lookup(spec.type)
        assert cls is not None, spec.type
        node = cls(name=name, **_raw(spec.params))
    node.spec = spec  # for the viewer, the logs and error reports (type, parameters, file:line)
    return node


def _raw(params: dict[str, Any]) -> dict[str, Any]:
    from ..behaviors.params import BlackboardRef

    return {k: (str(v) if isinstance(v, BlackboardRef) else v) for k, v in params.items()}


def build_tree(task: TaskSpec) -> py_trees.trees.BehaviourTree:
    """A BehaviourTree for the task (not set up: call ``tree.setup(backend=...)``)."""
    return py_trees.trees.BehaviourTree(root=build_node(task.tree))


def initialise_blackboard(task: TaskSpec) -> None:
    """Write the task's initial blackboard values (keys in the root namespace)."""
    for key, value in task.blackboard.items():
        k = key if key.startswith("/") else "/" + key
        py_trees.blackboard.Blackboard.set(k, to_plain(value))
