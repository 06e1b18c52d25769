"""Tick one behaviour (or subtree) against a backend until it finishes, as the runner would."""

from __future__ import annotations

from typing import Any

import py_trees
from py_trees.common import Status


def tick_until_done(behaviour: py_trees.behaviour.Behaviour, backend: Any, ticks: int = 200,
                    dt: float = 1.0 / 30.0) -> tuple[Status, int]:
    """Set up ``behaviour`` as a tree on ``backend`` and tick it at ``1/dt`` Hz of backend time.

    Returns:
        (status, ticks used): the first non-RUNNING status, or RUNNING after ``ticks`` ticks.
    """
    tree = py_trees.trees.BehaviourTree(root=behaviour)
    tree.setup(backend=backend)
    for i in range(ticks):
        tree.tick()
        if behaviour.status != Status.RUNNING:
            return behaviour.status, i + 1
        backend.advance(dt)
    return behaviour.status, ticks
