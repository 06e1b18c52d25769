"""The composites and decorators a task file may use, with their parameters.

Composites (py_trees semantics, memory flag explicit):
  - ``Sequence`` (``memory`` default true: a RUNNING child is resumed, finished ones are not re-run)
  - ``Selector`` (``memory`` default false: higher-priority children are re-checked every tick)
  - ``Parallel`` (``policy``: ``success_on_all`` | ``success_on_one`` | ``success_on_selected``,
    ``synchronise``, ``selected``: names of children for ``success_on_selected``)

Decorators: every py_trees decorator that makes sense in a file. ``Timeout`` counts **backend** time.
``EternalGuard`` is not offered: its condition is a Python callable, which a file cannot hold; use a
``Selector`` with a condition behaviour first instead.
"""

from __future__ import annotations

from typing import Any, Callable

import py_trees
from py_trees.common import OneShotPolicy, ParallelPolicy, Status

from ..behaviors.params import REQUIRED, Param
from .decorators import BackendTimeout

COMPOSITES: dict[str, dict[str, Param]] = {
    "Sequence": {"memory": Param("bool", True, "resume the running child instead of restarting from the first", blackboard=False)},
    "Selector": {"memory": Param("bool", False, "resume the running child instead of re-checking earlier ones", blackboard=False)},
    "Parallel": {
        "policy": Param("choice", "success_on_all", "when the parallel succeeds",
                        choices=("success_on_all", "success_on_one", "success_on_selected"), blackboard=False),
        "synchronise": Param("bool", True, "do not re-tick children that already succeeded", blackboard=False),
        "selected": Param("any", None, "names of the children that must succeed (success_on_selected)", blackboard=False),
    },
}

_STATUS = ("SUCCESS", "FAILURE", "RUNNING")

DECORATORS: dict[str, dict[str, Param]] = {
    "Inverter": {},
    "PassThrough": {},
    "FailureIsSuccess": {},
    "FailureIsRunning": {},
    "SuccessIsFailure": {},
    "SuccessIsRunning": {},
    "RunningIsFailure": {},
    "RunningIsSuccess": {},
    "Timeout": {"duration_s": Param("float", REQUIRED, "fail if the child still runs after this backend time", unit="s", min=0.0, blackboard=False)},
    "Retry": {"num_failures": Param("int", REQUIRED, "failures allowed before giving up", min=1, blackboard=False)},
    "Repeat": {"num_success": Param("int", REQUIRED, "successes needed; -1 repeats forever", min=-1, blackboard=False)},
    "OneShot": {"policy": Param("choice", "on_successful_completion", "when to stop re-running the child",
                                choices=("on_completion", "on_successful_completion"), blackboard=False)},
    "Condition": {"status": Param("choice", REQUIRED, "RUNNING until the child returns this status",
                                  choices=_STATUS, blackboard=False)},
    "StatusToBlackboard": {"variable_name": Param("key", REQUIRED, "blackboard key to write the child's status to")},
}

DECORATOR_DOCS = {
    "Inverter": "swap SUCCESS and FAILURE",
    "PassThrough": "return the child's status unchanged",
    "FailureIsSuccess": "FAILURE becomes SUCCESS",
    "FailureIsRunning": "FAILURE becomes RUNNING",
    "SuccessIsFailure": "SUCCESS becomes FAILURE",
    "SuccessIsRunning": "SUCCESS becomes RUNNING",
    "RunningIsFailure": "RUNNING becomes FAILURE",
    "RunningIsSuccess": "RUNNING becomes SUCCESS",
    "Timeout": "FAILURE when the child runs longer than duration_s (backend time)",
    "Retry": "re-run the child after a failure, up to num_failures times",
    "Repeat": "re-run the child after each success until num_success successes",
    "OneShot": "run the child to completion once, then return that status",
    "Condition": "RUNNING until the child returns the given status, then SUCCESS",
    "StatusToBlackboard": "write the child's status to a blackboard key",
}

COMPOSITE_DOCS = {
    "Sequence": "tick children in order until one fails or runs",
    "Selector": "tick children in order until one succeeds or runs (a fallback)",
    "Parallel": "tick all children every tick; succeed by policy",
}


def make_composite(kind: str, name: str, params: dict[str, Any], children: list[py_trees.behaviour.Behaviour]) -> Any:
    if kind == "Sequence":
        return py_trees.composites.Sequence(name=name, memory=params["memory"], children=children)
    if kind == "Selector":
        return py_trees.composites.Selector(name=name, memory=params["memory"], children=children)
    policy_name = params["policy"]
    if policy_name == "success_on_all":
        policy: Any = ParallelPolicy.SuccessOnAll(synchronise=params["synchronise"])
    elif policy_name == "success_on_one":
        policy = ParallelPolicy.SuccessOnOne()
    else:
        wanted = list(params.get("selected") or [])
        policy = ParallelPolicy.SuccessOnSelected(children=[c for c in children if c.name in wanted],
                                                  synchronise=params["synchronise"])
    return py_trees.composites.Parallel(name=name, policy=policy, children=children)


_SIMPLE: dict[str, Callable[..., Any]] = {
    "Inverter": py_trees.decorators.Inverter,
    "PassThrough": py_trees.decorators.PassThrough,
    "FailureIsSuccess": py_trees.decorators.FailureIsSuccess,
    "FailureIsRunning": py_trees.decorators.FailureIsRunning,
    "SuccessIsFailure": py_trees.decorators.SuccessIsFailure,
    "SuccessIsRunning": py_trees.decorators.SuccessIsRunning,
    "RunningIsFailure": py_trees.decorators.RunningIsFailure,
    "RunningIsSuccess": py_trees.decorators.RunningIsSuccess,
}


def make_decorator(kind: str, name: str, params: dict[str, Any], child: py_trees.behaviour.Behaviour) -> Any:
    if kind in _SIMPLE:
        return _SIMPLE[kind](name=name, child=child)
    if kind == "Timeout":
        return BackendTimeout(name=name, child=child, duration_s=params["duration_s"])
    if kind == "Retry":
        return py_trees.decorators.Retry(name=name, child=child, num_failures=params["num_failures"])
    if kind == "Repeat":
        return py_trees.decorators.Repeat(name=name, child=child, num_success=params["num_success"])
    if kind == "OneShot":
        policy = OneShotPolicy.ON_COMPLETION if params["policy"] == "on_completion" else OneShotPolicy.ON_SUCCESSFUL_COMPLETION
        return py_trees.decorators.OneShot(name=name, child=child, policy=policy)
    if kind == "Condition":
        return py_trees.decorators.Condition(name=name, child=child, status=Status[params["status"]])
    if kind == "StatusToBlackboard":
        key = params["variable_name"]
        return py_trees.decorators.StatusToBlackboard(name=name, child=child,
                                                      variable_name=key if key.startswith("/") else "/" + key)
    raise KeyError(kind)  # pragma: no cover
