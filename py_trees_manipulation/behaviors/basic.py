"""Basic behaviours: status constants, waiting in backend time, blackboard helpers.

Behaviours: ``Success``, ``Failure``, ``Running``, ``Wait``, ``SetBlackboardVariable``,
``CheckBlackboardVariableExists``, ``CheckBlackboardVariableValue``, ``WaitForBlackboardVariable``.

Pitfall: ``Wait`` counts **backend** time (sim seconds), never the wall clock, so a run is the same
at any real-time factor.
"""

from __future__ import annotations

import operator
from typing import Any

from py_trees.common import Access, Status

from .base import ManipulationBehaviour, _bb_key
from .params import REQUIRED, Param

_OPS = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


class Success(ManipulationBehaviour):
    """Always SUCCESS."""

    ABSTRACT = False

    def update(self) -> Status:
        return Status.SUCCESS


class Failure(ManipulationBehaviour):
    """Always FAILURE (the feedback message says so)."""

    ABSTRACT = False
    PARAMS = {"message": Param("str", "failure by design", "feedback message")}

    def update(self) -> Status:
        return self.fail(self.params["message"])


class Running(ManipulationBehaviour):
    """Always RUNNING."""

    ABSTRACT = False

    def update(self) -> Status:
        return Status.RUNNING


_SECONDS_LEFT = "{:.2f} s left"


class Wait(ManipulationBehaviour):
    """RUNNING for ``duration_s`` of backend time, then SUCCESS.

    Example:
        .. code-block:: yaml

            - Wait: {duration_s: 0.5}
    """

    ABSTRACT = False
    PARAMS = {"duration_s": Param("float", REQUIRED, "how long to wait (backend time)", unit="s", min=0.0)}

    def initialise(self) -> None:
        self._t0 = self.now()

    def update(self) -> Status:
        left = self.param("duration_s") - (self.now() - self._t0)
        if left <= 1e-9:
            self.feedback_message = "done waiting"
            return Status.SUCCESS
        self.defer_feedback_message(_SECONDS_LEFT.format, left)
        return Status.RUNNING


class SetBlackboardVariable(ManipulationBehaviour):
    """Write ``value`` to the blackboard key ``variable_name``; SUCCESS.

    Example:
        .. code-block:: yaml

            - SetBlackboardVariable: {variable_name: phase, value: lift}
    """

    ABSTRACT = False
    PARAMS = {
        "variable_name": Param("key", REQUIRED, "blackboard key to write"),
        "value": Param("any", REQUIRED, "value to write", blackboard=False),
    }

    def update(self) -> Status:
        self.write_output("variable_name", self.params["value"])
        self.feedback_message = f"{self.params['variable_name']} = {self.params['value']!r}"
        return Status.SUCCESS


class _ReadsVariable(ManipulationBehaviour):
    ABSTRACT = True
    PARAMS = {"variable_name": Param("str", REQUIRED, "blackboard key to read", blackboard=False)}

    def __init__(self, name: Any = None, **params: Any):
        super().__init__(name=name, **params)
        self._key = _bb_key(self.params["variable_name"])
        self.blackboard.register_key(key=self._key, access=Access.READ)

    def _get(self) -> tuple[bool, Any]:
        try:
            return True, self.blackboard.get(self._key)
        except KeyError:
            return False, None


class CheckBlackboardVariableExists(_ReadsVariable):
    """SUCCESS if the key has a value, else FAILURE."""

    ABSTRACT = False

    def update(self) -> Status:
        ok, _ = self._get()
        if ok:
            return Status.SUCCESS
        return self.fail(f"{self.params['variable_name']} has no value")


class WaitForBlackboardVariable(_ReadsVariable):
    """RUNNING until the key has a value, then SUCCESS."""

    ABSTRACT = False

    def update(self) -> Status:
        ok, _ = self._get()
        self.feedback_message = "" if ok else f"waiting for {self.params['variable_name']}"
        return Status.SUCCESS if ok else Status.RUNNING


class CheckBlackboardVariableValue(_ReadsVariable):
    """SUCCESS if ``variable <operator> value`` holds, else FAILURE (also when the key is unset).

    Example:
        .. code-block:: yaml

            - CheckBlackboardVariableValue: {variable_name: attempts, operator: "<", value: 3}
    """

    ABSTRACT = False
    PARAMS = {
        "operator": Param("choice", "==", "comparison", choices=tuple(_OPS), blackboard=False),
        "value": Param("any", REQUIRED, "value to compare with", blackboard=False),
    }

    def update(self) -> Status:
        ok, v = self._get()
        name, op, ref = self.params["variable_name"], self.params["operator"], self.params["value"]
        if not ok:
            return self.fail(f"{name} has no value")
        try:
            holds = bool(_OPS[op](v, ref))
        except TypeError:
            return self.fail(f"cannot compare {name}={v!r} {op} {ref!r}")
        if holds:
            self.feedback_message = f"{name}={v!r} {op} {ref!r}"
            return Status.SUCCESS
        return self.fail(f"{name}={v!r} is not {op} {ref!r}")
