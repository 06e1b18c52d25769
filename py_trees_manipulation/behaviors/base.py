"""Base classes for every behaviour of py_trees_manipulation.

:class:`ManipulationBehaviour` gives declared, typed parameters (see :mod:`.params`), blackboard
references (``"{key}"``) and outputs, and the backend from ``tree.setup(backend=...)``.

:class:`BackendAction` is the one action-client base (after Nav2's ``BtActionNode``, laid out on
the py_trees lifecycle): ``initialise`` builds a goal with :meth:`make_goal` and sends it,
``update`` polls the non-blocking :class:`~py_trees_manipulation.msgs.actions.GoalHandle` (never
spins or sleeps), ``terminate(INVALID)`` cancels (also a goal still PENDING). Subclasses override
only the ``make_goal`` / ``on_*`` hooks. Every action behaviour has the outputs ``result_key`` and
``feedback_key``: when set, the result message and the feedback message go to those blackboard
keys; ``error_msg`` is always the feedback message on failure.
"""

from __future__ import annotations

from typing import Any, Callable, ClassVar, Iterator, Optional

import py_trees
from py_trees import logging as _pt_logging
from py_trees.common import Access, Status

from ..backend import BackendError, resolve_resource
from ..msgs.actions import GoalHandle, GoalStatus
from .params import BlackboardReadError, BlackboardRef, Param, ParamError
from .registry import register


_RUNNING = Status.RUNNING
_STATUSES = frozenset(Status)
_DEBUG_OFF = _pt_logging.Level.INFO  # py_trees logs a tick's debug line below this level


class BehaviourSetupError(RuntimeError):
    """A behaviour cannot run on this backend (missing resource or action, no backend)."""


class ManipulationBehaviour(py_trees.behaviour.Behaviour):
    """Base of every registered behaviour: typed parameters, blackboard I/O, backend access.

    Class attributes:
        PARAMS: parameter declarations, name -> :class:`~.params.Param`.
        SIM_ONLY: the behaviour needs the simulator (ground truth, scene objects); the hardware
            backend refuses a tree that holds one, before it starts.
        NEEDS_COLLISION_WORLD: the behaviour checks geometry in the backend's collision world
            (``backend.motion_planning``): on hardware the task needs a scene naming its arm,
            checked before the run starts.
        ABSTRACT: set on intermediate base classes so they are not registered.
        BLACKBOARD_WRITES: names of ``str`` parameters whose value is a blackboard key the
            behaviour writes (``key`` parameters are writes already), for the load-time data-flow
            check (:mod:`py_trees_manipulation.trees.dataflow`).
        EXACTLY_ONE_OF: groups of parameters of which exactly one must be given (not null),
            checked when the file is loaded (``MoveCartesian``: ``target`` or ``delta``).

    Args:
        name: the node's name in the tree (default: the class name).
        **params: parameter values, validated against ``PARAMS``.

    Raises:
        ParamError: unknown, missing or ill-typed parameter (the loader reports it with file:line
            before this is ever reached).
    """

    PARAMS: ClassVar[dict[str, Param]] = {}
    SIM_ONLY: ClassVar[bool] = False
    NEEDS_COLLISION_WORLD: ClassVar[bool] = False
    ABSTRACT: ClassVar[bool] = True
    BLACKBOARD_WRITES: ClassVar[tuple[str, ...]] = ()
    EXACTLY_ONE_OF: ClassVar[tuple[tuple[str, ...], ...]] = ()

    # the feedback message as py_trees' attribute, formatted when it is read (see
    # defer_feedback_message); class defaults so py_trees' __init__ can assign it
    _feedback_text: str = ""
    _feedback_describe: Optional[Callable[[Any], str]] = None
    _feedback_arg: Any = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not cls.__dict__.get("ABSTRACT", False):
            register(cls)

    def tick(self) -> Iterator[py_trees.behaviour.Behaviour]:
        """py_trees' :meth:`~py_trees.behaviour.Behaviour.tick` (initialise when not RUNNING, update,
        stop on a final status, yield self), with one difference: a ``"{key}"`` parameter that cannot
        be read (:class:`~.params.BlackboardReadError` escaping ``initialise`` or ``update``) makes
        the behaviour FAIL with the reason as its feedback message instead of raising through the
        tree. It also formats py_trees' per-tick debug line only when debug logging is on (py_trees
        builds it at every tick). Written once here rather than as wrappers around every class's
        hooks: a leaf's visit is one generator and its hooks (issue 19)."""
        if _pt_logging.level < _DEBUG_OFF:
            self.logger.debug(f"{self.__class__.__name__}.tick()")
        read_error = None
        if self.status is not _RUNNING:
            try:
                self.initialise()
            except BlackboardReadError as e:
                read_error = str(e)
        if read_error is None:
            try:
                new_status = self.update()
            except BlackboardReadError as e:
                read_error = str(e)
        if read_error is not None:
            self.feedback_message = read_error
            new_status = Status.FAILURE
        elif new_status not in _STATUSES:
            self.logger.error(f"A behaviour returned an invalid status, setting to INVALID [{new_status}][{self.name}]")
            new_status = Status.INVALID
        if new_status is not _RUNNING:
            self.stop(new_status)
        self.status = new_status
        yield self

    @property
    def feedback_message(self) -> str:  # type: ignore[override]
        """py_trees' feedback message (str). A message set with :meth:`defer_feedback_message` is
        formatted here, when the viewer, the run log or a test first reads it, not in the tick."""
        describe = self._feedback_describe
        if describe is not None:
            self._feedback_describe = None
            self._feedback_text = describe(self._feedback_arg)
            self._feedback_arg = None
        return self._feedback_text

    @feedback_message.setter
    def feedback_message(self, text: str) -> None:
        self._feedback_describe = None
        self._feedback_arg = None
        self._feedback_text = text

    def defer_feedback_message(self, describe: Callable[[Any], str], arg: Any) -> None:
        """Set the feedback message to ``describe(arg)``, formatted only when it is read.

        For messages refreshed at every tick (a motion's distance to go, a gripper's gap): reading
        feedback and formatting numbers would otherwise be most of a tick's cost (issue 19). ``arg``
        must not change afterwards (a feedback message a backend published does not).
        """
        self._feedback_describe = describe
        self._feedback_arg = arg

    @classmethod
    def all_params(cls) -> dict[str, Param]:
        """Parameters of this class and its bases: the class's own first, a subclass's declaration wins."""
        out: dict[str, Param] = {}
        for klass in cls.__mro__:
            for key, p in getattr(klass, "__dict__", {}).get("PARAMS", {}).items():
                out.setdefault(key, p)
        return out

    @classmethod
    def coerce_params(cls, given: dict[str, Any]) -> dict[str, Any]:
        """Validated parameter values with defaults filled in. Raises ParamError naming the key."""
        decl = cls.all_params()
        out: dict[str, Any] = {}
        for key, value in given.items():
            if key not in decl:
                import difflib

                close = difflib.get_close_matches(key, list(decl), n=1)
                err = ParamError(f"unknown parameter {key!r} for {cls.__name__}",
                                 f"did you mean {close[0]!r}?" if close else f"parameters: {', '.join(decl) or 'none'}")
                err.key = key  # type: ignore[attr-defined]
                raise err
            try:
                out[key] = decl[key].coerce(value)
            except ParamError as e:
                err = ParamError(f"parameter {key!r} of {cls.__name__}: {e}", e.hint)
                err.key = key  # type: ignore[attr-defined]
                raise err from None
        for key, p in decl.items():
            if key not in out:
                if p.required:
                    err = ParamError(f"{cls.__name__} needs parameter {key!r} ({p.describe_type()})",
                                     f"add '{key}: ...' ({p.doc})" if p.doc else "")
                    err.key = None  # type: ignore[attr-defined]
                    raise err
                out[key] = p.default
        return out

    def __init__(self, name: Optional[str] = None, **params: Any):
        super().__init__(name=name or type(self).__name__)
        self.params: dict[str, Any] = type(self).coerce_params(params)
        self.backend: Any = None
        self.blackboard = self.attach_blackboard_client(name=self.name)
        decl = self._param_decl = type(self).all_params()  # param() coerces "{key}" values with it
        for key, value in self.params.items():
            if isinstance(value, BlackboardRef):
                self.blackboard.register_key(key=_bb_key(value.key), access=Access.READ)
            elif decl[key].kind == "key" and value:
                self.blackboard.register_key(key=_bb_key(value), access=Access.WRITE)

    # ---- lifecycle ------------------------------------------------------------------------------
    def setup(self, **kwargs: Any) -> None:
        """Take the backend from ``tree.setup(backend=...)``. Does not block."""
        self.backend = kwargs.get("backend")

    def now(self) -> float:
        """Backend clock, seconds (never the wall clock)."""
        if self.backend is None:
            raise BehaviourSetupError(f"{self.name}: no backend; call tree.setup(backend=...)")
        return float(self.backend.now())

    def seeded_rng(self) -> Any:
        """A ``numpy.random.Generator`` for this node's noise, seeded by the run's seed
        (``backend.seed``, 0 when the backend has none) and the node's name: a run repeats with its
        seed, and two nodes do not draw the same numbers. Call it in :meth:`setup`."""
        import zlib

        import numpy as np

        seed = int(getattr(self.backend, "seed", 0) or 0)
        return np.random.default_rng([seed, zlib.crc32(self.name.encode())])

    # ---- parameters and blackboard --------------------------------------------------------------
    def param(self, key: str) -> Any:
        """The parameter's value, reading the blackboard for a ``"{key}"`` reference.

        Raises:
            BlackboardReadError: (a KeyError and a ParamError) the referenced blackboard key has no
                value yet, or its value does not fit the declaration.
        """
        value = self.params[key]
        if isinstance(value, BlackboardRef):
            bb_key = _bb_key(value.key)
            try:
                if py_trees.blackboard.Blackboard.activity_stream is None and "." not in bb_key:
                    # read access was registered at construction, no remapping, and no activity
                    # stream (the viewer's) records the read: the client's get() would add only its
                    # checks (issue 19; the mirror of write_output)
                    raw = py_trees.blackboard.Blackboard.storage[bb_key]
                else:
                    raw = self.blackboard.get(bb_key)
            except KeyError:
                raise BlackboardReadError(f"blackboard key {value.key!r} (parameter {key!r}) has no value yet") from None
            try:
                return self._param_decl[key].coerce_value(raw)
            except ParamError as e:
                raise BlackboardReadError(f"blackboard key {value.key!r} for parameter {key!r}: {e}", e.hint) from None
        return value

    def write_output(self, param_key: str, value: Any) -> None:
        """Write ``value`` to the blackboard key named by the ``key`` parameter ``param_key`` (if set)."""
        target = self.params.get(param_key)
        if target:
            key = _bb_key(target)
            if py_trees.blackboard.Blackboard.activity_stream is None and "." not in key:
                # write access was registered at construction, and no activity stream (the viewer's)
                # records the write: the client's set() would add only its checks (issue 19)
                py_trees.blackboard.Blackboard.storage[key] = value
            else:
                self.blackboard.set(key, value, overwrite=True)

    def fail(self, message: str) -> Status:
        """Set the feedback message to ``message`` and return FAILURE."""
        self.feedback_message = message
        return Status.FAILURE


def _bb_key(key: str) -> str:
    return key if key.startswith("/") else "/" + key


class BackendAction(ManipulationBehaviour):
    """Action client base: one goal per activation on an arm or gripper resource.

    Status mapping (subclasses may refine it in the ``on_*`` hooks):
      - PENDING/ACTIVE: RUNNING (FAILURE after ``timeout_s`` of backend time, goal cancelled);
      - SUCCEEDED: ``on_success`` (SUCCESS by default);
      - ABORTED: ``on_aborted`` (FAILURE with the backend's reason);
      - PREEMPTED/RECALLED: ``on_cancelled``: FAILURE, because a goal cancelled by someone
        other than this behaviour means the work was not done;
      - REJECTED/LOST: ``on_rejected``: FAILURE with the reason.

    Class attributes:
        RESOURCE: ``"arm"`` or ``"gripper"``.
        ACTION: the action name on the resource (see :mod:`py_trees_manipulation.backend`).
    """

    ABSTRACT = True
    RESOURCE: ClassVar[str] = "arm"
    ACTION: ClassVar[str] = ""
    PARAMS = {
        "timeout_s": Param("float", None, "fail (and cancel the goal) after this much backend time", unit="s", min=0.0),
        "result_key": Param("key", None, "blackboard key to write the result message to"),
        "feedback_key": Param("key", None, "blackboard key to write the feedback message to"),
    }

    def __init__(self, name: Optional[str] = None, **params: Any):
        super().__init__(name=name, **params)
        self.resource: Any = None
        self.handle: Optional[GoalHandle] = None
        self._start_s = 0.0
        self._timeout_s: Optional[float] = None
        self._goal_error: Optional[str] = None
        self._abort_reason: Optional[str] = None
        self._feedback_key = self.params.get("feedback_key")

    @classmethod
    def all_params(cls) -> dict[str, Param]:
        decl = super().all_params()
        res = cls.RESOURCE
        decl.setdefault(res, Param("str", None, f"name of the {res} (default: the scene's first {res})", blackboard=False,
                                   refers_to="robot"))
        return decl

    def setup(self, **kwargs: Any) -> None:
        """Resolve the resource and check that it serves ``ACTION``. Does not block.

        Raises:
            BehaviourSetupError: no backend, no such resource, or the action is not served.
        """
        super().setup(**kwargs)
        if self.backend is None:
            return  # built for rendering or validation only
        resources = getattr(self.backend, f"{self.RESOURCE}s", {})
        try:
            self.resource = resolve_resource(resources, self.params.get(self.RESOURCE), self.RESOURCE)
        except BackendError as e:
            raise BehaviourSetupError(f"{self.name}: {e}") from None
        actions = getattr(self.resource, "actions", frozenset())
        if self.ACTION not in actions:
            raise BehaviourSetupError(
                f"{self.name}: {self.RESOURCE} {self.resource.name!r} does not offer action {self.ACTION!r} "
                f"(it offers {sorted(actions)})"
            )

    # ---- hooks --------------------------------------------------------------------------------
    def make_goal(self) -> Any:
        """Build the goal message from parameters and the blackboard. Raise ValueError/KeyError to fail."""
        raise NotImplementedError

    def on_feedback(self, feedback: Any) -> None:
        """Called each tick while the goal runs, with the latest feedback (may be None)."""

    def on_success(self, result: Any) -> Status:
        return Status.SUCCESS

    def on_aborted(self, result: Any, text: str) -> Status:
        return self.fail(f"{self.ACTION} aborted: {text or 'no reason given'}")

    def on_cancelled(self, result: Any, text: str) -> Status:
        """A goal preempted by the backend (not by this behaviour) did not do its work: FAILURE."""
        return self.fail(f"{self.ACTION} was cancelled by the backend: {text}")

    def on_rejected(self, text: str) -> Status:
        return self.fail(f"{self.ACTION} goal rejected: {text}")

    def on_timeout(self) -> Status:
        return self.fail(f"{self.ACTION} timed out after {self._timeout_s:g} s")

    def abort_goal(self, reason: str) -> None:
        """From :meth:`on_feedback`: cancel the running goal; this tick ends FAILURE with ``reason``
        as the feedback message (a check of the behaviour's own failed, e.g. the held object slipped)."""
        self._abort_reason = reason
        if self.handle is not None:
            self.handle.cancel()

    # ---- lifecycle ----------------------------------------------------------------------------
    def initialise(self) -> None:
        self.handle = None
        self._goal_error = None
        self._abort_reason = None
        if self.resource is None:
            self._goal_error = "not set up with a backend (call tree.setup(backend=...))"
            return
        self._start_s = self.now()
        try:
            self._timeout_s = self.param("timeout_s")
            goal = self.make_goal()
        except (ValueError, KeyError) as e:
            self._goal_error = str(e.args[0]) if isinstance(e, KeyError) and e.args else str(e)
            return
        self.handle = self.resource.send_goal(self.ACTION, goal)
        self.feedback_message = f"{self.ACTION} goal sent"

    def update(self) -> Status:
        if self._goal_error is not None:
            status = self.fail(f"cannot build the {self.ACTION} goal: {self._goal_error}")
            self._write_outputs(None)
            return status
        h = self.handle
        assert h is not None
        st = h.status
        if st in (GoalStatus.PENDING, GoalStatus.ACTIVE, GoalStatus.PREEMPTING, GoalStatus.RECALLING):
            timeout = self._timeout_s
            if timeout is not None and self.now() - self._start_s > timeout:
                h.cancel()
                status = self.on_timeout()
                self._write_outputs(h.result)
                return status
            self.on_feedback(h.feedback)
            if self._abort_reason is not None:  # on_feedback gave the goal up
                status = self.fail(self._abort_reason)
                self._write_outputs(None)
                return status
            if self._feedback_key:
                self.write_output("feedback_key", self.feedback_message)
            return Status.RUNNING
        if st == GoalStatus.SUCCEEDED:
            status = self.on_success(h.result)
        elif st == GoalStatus.ABORTED:
            status = self.on_aborted(h.result, h.text)
        elif st in (GoalStatus.PREEMPTED, GoalStatus.RECALLED):
            status = self.on_cancelled(h.result, h.text)
        else:
            status = self.on_rejected(h.text)
        self._write_outputs(h.result)
        return status

    def terminate(self, new_status: Status) -> None:
        if new_status == Status.INVALID and self.handle is not None and not self.handle.done:
            self.handle.cancel()
            self.feedback_message = f"{self.ACTION} cancelled"

    def _write_outputs(self, result: Any) -> None:
        params = self.params
        if result is not None and params.get("result_key"):
            self.write_output("result_key", result)
        if params.get("feedback_key"):  # the message is formatted only when it goes somewhere
            self.write_output("feedback_key", self.feedback_message)
