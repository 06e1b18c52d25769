"""Blackboard data flow, checked when a task file is loaded (as BehaviorTree.CPP checks port remaps).

A behaviour parameter written ``"{key}"`` reads the blackboard key ``key`` when the behaviour runs;
if nothing has written it by then, the behaviour fails at run time (``blackboard key 'key' has no
value yet``). :func:`check_data_flow` walks the tree in tick order and reports every such read that
no earlier node is sure to have written and that the task's ``blackboard:`` section (with
``--set blackboard.KEY=...``) does not set, naming the key, the reader's ``FILE:LINE:COL`` and the
keys that are written there ("did you mean 'place_pose'?").

Writers: every ``key`` parameter of a node with a value, its default included (``output_key``,
``result_key``, ``data_key``, ``tcp_pose_key``, ``variable_name`` of ``SetBlackboardVariable`` and
of the ``StatusToBlackboard`` decorator...), and the parameters a behaviour class lists in
``BLACKBOARD_WRITES`` (keys named by ``str`` parameters, e.g. the regrasp behaviours' ``state_key``).

"Sure to have written" follows the composites' semantics, for the path on which the reader runs:

- ``Sequence``: a child runs after every earlier child succeeded, so it sees their writes;
- ``Selector``: a child runs after the earlier ones *failed* (what they wrote before failing is not
  known), and after the Selector succeeds only one child did: the keys every child writes;
- ``Parallel``: children start on the same tick, so a child does not see its siblings' writes;
  after it succeeds, all children (``success_on_all``), every selected one
  (``success_on_selected``) or one (``success_on_one``: the keys every child writes) succeeded;
- decorators whose SUCCESS means the child succeeded (``PassThrough``, ``Timeout``, ``Retry``,
  ``Repeat``, ``OneShot``, ``StatusToBlackboard``, ``RunningIsFailure``, ``FailureIsRunning``,
  ``Condition`` on SUCCESS) pass the child's writes on; the others (``Inverter``,
  ``FailureIsSuccess``...) do not.

Values the file itself writes (the ``blackboard:`` section, ``SetBlackboardVariable``'s ``value``)
are checked against the parameter that reads them, so ``blackboard: {place_pose: 5}`` read as a
pose is a load error at the reader, naming where the value was set.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

from ..behaviors import registry
from ..behaviors.params import BlackboardRef, ParamError
from ..located.errors import Loc, did_you_mean
from ..located.locyaml import to_plain
from .spec import IncludeInfo, NodeSpec

#: decorators whose SUCCESS implies their child's SUCCESS (Condition: only with status SUCCESS)
_PASSES_SUCCESS = {"PassThrough", "Timeout", "Retry", "Repeat", "OneShot", "StatusToBlackboard",
                   "RunningIsFailure", "FailureIsRunning"}


@dataclass(frozen=True, eq=False)
class _Source:
    """Who wrote a key: a literal value from the file (``value`` set) or a node's output."""

    where: str            # "the blackboard: section at FILE:LINE:COL" or "GetObjectPose 'locate' (FILE:LINE:COL)"
    literal: bool = False
    value: Any = None


def _key(k: str) -> str:
    return k.lstrip("/")


def _label(node: NodeSpec) -> str:
    return f"{node.type} '{node.name or node.type}' ({node.loc})"


def node_writes(node: NodeSpec) -> list[str]:
    """Blackboard keys ``node`` itself writes (not its children's)."""
    if node.category == "composite":
        return []
    if node.category == "decorator":
        from .nodes import DECORATORS

        decl = DECORATORS.get(node.type, {})
        cls = None
    else:
        cls = registry.lookup(node.type)
        decl = cls.all_params() if cls is not None else {}
    out = []
    for name, p in decl.items():
        v = node.params.get(name)
        if p.kind == "key" and isinstance(v, str) and v:
            out.append(_key(v))
    for name in getattr(cls, "BLACKBOARD_WRITES", ()) if cls is not None else ():
        v = node.params.get(name)
        if isinstance(v, str) and v:
            out.append(_key(v))
    return out


def node_reads(node: NodeSpec) -> list[tuple[str, str]]:
    """``(parameter, key)`` for every ``"{key}"`` parameter of ``node``."""
    return [(name, _key(v.key)) for name, v in node.params.items() if isinstance(v, BlackboardRef)]


class _Flow:
    def __init__(self, report: Callable[[Loc, str, str], None]):
        self.report = report
        self.writers: dict[str, list[NodeSpec]] = {}
        self.includes: list[IncludeInfo] = []  # the includes around the node being checked, outermost first

    def index(self, root: NodeSpec) -> None:
        for n in root.walk():
            for k in node_writes(n):
                self.writers.setdefault(k, []).append(n)

    # state: key -> _Source of the value sure to be there
    def run(self, node: NodeSpec, state: dict[str, _Source]) -> tuple[dict[str, _Source], dict[str, _Source]]:
        """(keys sure to be written after ``node`` SUCCEEDED, after it ran at all (any status))."""
        if not node.includes:
            return self._run(node, state)
        depth = len(self.includes)
        self.includes.extend(reversed(node.includes))  # node.includes is innermost first
        try:
            return self._run(node, state)
        finally:
            del self.includes[depth:]

    def _run(self, node: NodeSpec, state: dict[str, _Source]) -> tuple[dict[str, _Source], dict[str, _Source]]:
        if node.category == "behaviour":
            self._check_reads(node, state)
            after = dict(state)
            for k in node_writes(node):
                after[k] = self._source(node, k)
            return after, state
        if node.category == "decorator":
            child = node.children[0] if node.children else None
            own = {k: self._source(node, k) for k in node_writes(node)}  # StatusToBlackboard: on every tick
            if child is None:
                return {**state, **own}, {**state, **own}
            ok, ran = self.run(child, state)
            passes = node.type in _PASSES_SUCCESS or (node.type == "Condition" and node.params.get("status") == "SUCCESS")
            if node.type == "Repeat" and node.params.get("num_success") == 0:
                passes = False
            return {**(ok if passes else ran), **own}, {**ran, **own}
        # composites
        kids = node.children
        if node.type == "Sequence":
            cur = state
            for c in kids:
                cur, _ = self.run(c, cur)
            return cur, state
        if node.type == "Selector":
            outs = [self.run(c, state)[0] for c in kids]
            return _meet(outs, state), state
        # Parallel
        outs = [self.run(c, state)[0] for c in kids]
        policy = node.params.get("policy")
        if policy == "success_on_all":
            return _join(outs, state), state
        if policy == "success_on_selected":
            sel = set(node.params.get("selected") or [])
            return _join([o for c, o in zip(kids, outs) if c.name in sel], state), state
        return _meet(outs, state), state

    def _source(self, node: NodeSpec, key: str) -> _Source:
        if node.type == "SetBlackboardVariable" and "value" in node.params:
            return _Source(f"SetBlackboardVariable '{node.name or node.type}' at {node.param_locs.get('value', node.loc)}",
                           True, node.params["value"])
        return _Source(_label(node))

    def _check_reads(self, node: NodeSpec, state: dict[str, _Source]) -> None:
        cls = registry.lookup(node.type)
        decl = cls.all_params() if cls is not None else {}
        for param, key in node_reads(node):
            loc = node.param_locs.get(param, node.loc)
            src = state.get(key)
            if src is not None:
                p = decl.get(param)
                if src.literal and p is not None:
                    try:
                        p.coerce_value(to_plain(src.value))
                    except ParamError as e:
                        self.report(loc, f"{node.type}.{param}: blackboard key {key!r} holds the value set by "
                                         f"{src.where}, which does not fit: {e}",
                                    e.hint or f"give {key!r} a {p.describe_type()}")
                continue
            written = sorted(state)
            close = did_you_mean(key, written)
            elsewhere = [w for w in self.writers.get(key, []) if w is not node]
            if elsewhere:
                why = (f"it is written by {', '.join(_label(w) for w in elsewhere[:3])}, which does not always run "
                       "before this node (later in tick order, or in another Selector/Parallel branch)")
            else:
                why = "no node writes it and the 'blackboard:' section does not set it"
            hint = close or ""
            listing = (f"keys written before this node: {', '.join(written)}" if written
                       else "no key is written before this node")
            hint = f"{hint} ({listing})" if hint else listing
            self.report(loc, f"{node.type}.{param} reads blackboard key {key!r}, but {why}",
                        hint + f"; or set it under 'blackboard:' (--set blackboard.{key}=...)"
                        + self._named_by_include(node, param, key, written))

    def _named_by_include(self, node: NodeSpec, param: str, key: str, written: list[str]) -> str:
        """Where an included node's key was named, when a ``"{${P}}"`` parameter took it from the
        include's parameter ``P``: the fix belongs there, in the including file."""
        source = node.param_sources.get(param)
        if source is None or source[0] != "pointer":
            return ""
        name = source[1]
        for inc in reversed(self.includes):
            if name in inc.parameters:
                given = inc.given_locs.get(name)
                where = (f"given at {given}" if given is not None
                         else f"its default in {inc.file}")
                import difflib

                close = difflib.get_close_matches(key, written, n=1, cutoff=0.6)
                return (f"; {key!r} is the include's parameter {name!r} ({where}, the include at {inc.loc}): "
                        f"name there a key the tree writes, e.g. 'with: {{{name}: {close[0] if close else '...'}}}'")
        return ""


def _meet(outs: list[dict[str, _Source]], base: dict[str, _Source]) -> dict[str, _Source]:
    """Keys written on every path (a source kept only where all paths agree)."""
    if not outs:
        return dict(base)
    keys = set(outs[0]).intersection(*outs[1:])
    out: dict[str, _Source] = {}
    for k in keys:
        srcs = [o[k] for o in outs]
        out[k] = srcs[0] if all(s is srcs[0] for s in srcs) else _Source("several branches")
    return out


def _join(outs: list[dict[str, _Source]], base: dict[str, _Source]) -> dict[str, _Source]:
    """Keys written by all of the (concurrent) children; a key written by several has no single value."""
    out = dict(base)
    for o in outs:
        for k, s in o.items():
            if k in base and base[k] is s:
                continue
            out[k] = s if k not in out or out[k] is base.get(k) else _Source("several branches")
    return out


def check_data_flow(tree: NodeSpec, blackboard: dict[str, Any], blackboard_loc: Callable[[str], Loc],
                    report: Callable[[Loc, str, str], None]) -> None:
    """Report every ``"{key}"`` read that no earlier node is sure to have written (module docstring).

    Args:
        tree: the validated tree.
        blackboard: the task's initial blackboard (``blackboard:`` after ``--set`` overrides).
        blackboard_loc: where the value of a ``blackboard:`` key was set (for messages).
        report: ``report(loc, message, hint)`` for each problem.
    """
    flow = _Flow(report)
    flow.index(tree)
    def where(k: str) -> str:
        loc = blackboard_loc(k)
        return str(loc) if loc.line <= 0 else f"the 'blackboard:' section at {loc}"

    state = {_key(k): _Source(where(k), True, v) for k, v in blackboard.items() if isinstance(k, str)}
    flow.run(tree, state)
