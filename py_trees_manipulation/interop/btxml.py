"""BehaviorTree.CPP v4 (Groot2) XML import and export.

Import (:func:`load_task_from_xml`, :func:`xml_tree_document`) turns a ``<root BTCPP_format="4">``
file into the YAML form of a tree, with every node located at its XML ``FILE:LINE:COL``, and
hands it to the YAML loader (:func:`~py_trees_manipulation.trees.loader.load_task_data`), so an
XML tree is validated by exactly the same rules and reports problems the same way. Export
(:func:`export_xml`) writes a validated :class:`~py_trees_manipulation.trees.spec.TaskSpec` as one
``<BehaviorTree>`` plus a ``<TreeNodesModel>`` that declares our node types and their ports for
Groot2.

Mapping (BT.CPP <-> task file; semantics from the BT.CPP 4 sources, see the notes):

==============================================  =====================================================
BT.CPP                                          task file
==============================================  =====================================================
``Sequence``                                    ``Sequence`` memory=true (resumes the RUNNING child,
                                                restarts after FAILURE: py_trees' memory sequence)
``ReactiveSequence``                            ``Sequence`` memory=false
``Fallback``                                    ``Selector`` memory=true
``ReactiveFallback``                            ``Selector`` memory=false
``Parallel`` success_count=-1, failure_count=1  ``Parallel`` policy=success_on_all (synchronise=true:
                                                BT.CPP skips finished children too)
``Parallel`` success_count=1, failure_count=1   ``Parallel`` policy=success_on_one
``Inverter``                                    ``Inverter``
``ForceSuccess`` / ``ForceFailure``             ``FailureIsSuccess`` / ``SuccessIsFailure``
``KeepRunningUntilFailure``                     ``SuccessIsRunning``
``RetryUntilSuccessful`` num_attempts=N         ``Retry`` num_failures=N (py_trees re-ticks the child
                                                on the next tick, BT.CPP in the same tick)
``Repeat`` num_cycles=N                         ``Repeat`` num_success=N (-1: forever)
``Timeout`` msec=M                              ``Timeout`` duration_s=M/1000 (ours counts backend time)
``RunOnce`` then_skip=false                     ``OneShot`` policy=on_completion
``AlwaysSuccess`` / ``AlwaysFailure``           ``Success`` / ``Failure``
``Sleep`` msec=M (import only)                  ``Wait`` duration_s=M/1000
``SetBlackboard`` (import only)                 ``SetBlackboardVariable``
``SubTree ID= name= port="{outer}"``            the template inlined: names get ``NAME/``, ports remap
                                                ``{inner}`` keys, literals become values, other keys
                                                get the subtree's scope ``{NAME/key}``; ``_autoremap``,
                                                ``{=}`` and ``{@key}`` (root blackboard) as in BT.CPP;
                                                export: a named ``include:`` (see :func:`export_xml`)
our other behaviours and decorators             custom nodes of the same name, declared in
                                                ``<TreeNodesModel>`` (our ``Condition`` decorator is
                                                written ``<Decorator ID="Condition">``, since
                                                ``<Condition>`` is BT.CPP's explicit-form tag)
==============================================  =====================================================

Refused with a :class:`~py_trees_manipulation.located.errors.TreeLoadError` naming the element and
its line, because py_trees has no equivalent: ``SequenceWithMemory`` (does not restart after a
FAILURE), ``AsyncSequence``/``AsyncFallback`` (yield between children), ``ParallelAll`` and other
Parallel thresholds, ``IfThenElse``, ``WhileDoElse``, ``TryCatch``, ``Switch2..6``, ``Delay``,
``Precondition``, ``Loop*``, ``SkipUnlessUpdated``, ``WaitValueUpdate``, ``Script``,
``ScriptCondition``, ``UnsetBlackboard``, ``WasEntryUpdated``, ``TestNode``, ``RunOnce
then_skip=true`` (SKIPPED), ``RetryUntilSuccessful num_attempts=-1`` and the pre/post-condition
attributes ``_skipIf`` ``_failureIf`` ``_successIf`` ``_while`` ``_onSuccess`` ``_onFailure``
``_onHalted`` ``_post``. Export refuses ``Parallel`` success_on_selected and success_on_all with
synchronise=false, and a Timeout that is not a whole number of milliseconds.

Port values: XML attributes are text. ``{key}`` is a blackboard pointer (output keys, the ``key``
parameters, are written ``{key}`` too, as BT.CPP output ports are). Numbers and booleans are
written as BT.CPP writes them (``0.15``, ``true``). Poses and lists are **inline JSON** (which is
also YAML): ``target='{"position": [0.5, 0, 0.7], "orientation": [1, 0, 0, 0]}'`` (quaternion
w, x, y, z), ``delta="[0, 0, 0.15]"``; on import BT.CPP's ``0;0;0.15`` list syntax and YAML
flow style (``{position: [0.5, 0, 0.7]}``) are accepted as well. Values are written in the
parameter's unit (metres, seconds, newtons...), defaults are omitted, and a ``"${name}"``
substitution is kept for the ``--scene`` task file's parameters to fill.

py_trees' own parser (:mod:`py_trees.parsers.behaviour_tree_xml`, py_trees 2.5+): we reuse its
``{key}`` syntax check (``is_key``) and its ``<Import src>``/``<Include file>`` path resolution
(``_resolve_import_path``), and accept its dialect (``memory=`` on Sequence/Fallback/Selector,
``<Selector>``, ``<Parallel policy=...>``). We go beyond it because it builds py_trees objects
from ``PortsMixin`` leaves, has no locations in its errors and is "not semantically BT.CPP": here
every problem names ``FILE:LINE:COL``; leaves are our registered behaviours with typed, unit-aware
parameters; the BT.CPP v4 names and semantics above are mapped (ReactiveSequence,
RetryUntilSuccessful, ForceSuccess...); ``_autoremap``, ``{=}`` and ``{@key}`` are handled; and
trees are also exported. DTDs and entities are refused (no entity expansion), and files are
limited to ``locyaml.MAX_FILE_BYTES``, ``MAX_DEPTH`` levels and ``loader.MAX_NODES`` nodes.
"""

from __future__ import annotations

import json
import math
import os
import re
import xml.parsers.expat as expat
from dataclasses import dataclass, field
from typing import Any, Optional
from xml.sax.saxutils import quoteattr

import numpy as np
import yaml

from ..behaviors import registry
from ..behaviors.params import REQUIRED, BlackboardRef, Param
from ..located import locyaml
from ..located.errors import Loc, Problem, TreeLoadError, did_you_mean
from ..trees.loader import MAX_NODES, load_task_data
from ..located.locyaml import LocDict, LocList
from ..trees.nodes import COMPOSITES, DECORATORS
from ..trees.spec import NodeSpec, TaskSpec

try:  # py_trees >= 2.5
    from py_trees.parsers.behaviour_tree_xml import _resolve_import_path, is_key
except ImportError:  # pragma: no cover - older py_trees
    is_key = None  # type: ignore[assignment]
    _resolve_import_path = None  # type: ignore[assignment]

#: BT.CPP 4 built-ins (src/bt_factory.cpp) with no py_trees equivalent, with a hint
UNSUPPORTED: dict[str, str] = {
    "SequenceWithMemory": "py_trees has no sequence that resumes at the failed child; use Sequence (restarts after a FAILURE)",
    "AsyncSequence": "py_trees sequences do not yield RUNNING between children; use Sequence",
    "AsyncFallback": "py_trees selectors do not yield RUNNING between children; use Fallback",
    "ParallelAll": "use Parallel (success_count=-1: all must succeed, failure_count=1)",
    "IfThenElse": "write it as a Fallback of Sequence(condition, then) and the else branch, if that fits",
    "WhileDoElse": "no py_trees equivalent",
    "TryCatch": "no py_trees equivalent",
    "ManualSelector": "no py_trees equivalent",
    "Delay": "put a Wait before the child in a Sequence",
    "Precondition": "use a Fallback/Sequence with a condition behaviour",
    "LoopInt": "no py_trees equivalent (queues on the blackboard)", "LoopBool": "no py_trees equivalent",
    "LoopDouble": "no py_trees equivalent", "LoopString": "no py_trees equivalent",
    "SkipUnlessUpdated": "no py_trees equivalent (entry sequence numbers)",
    "WaitValueUpdate": "no py_trees equivalent (entry sequence numbers)",
    "Script": "scripting is not supported; use SetBlackboardVariable",
    "ScriptCondition": "scripting is not supported; use CheckBlackboardVariableValue",
    "UnsetBlackboard": "no equivalent behaviour", "WasEntryUpdated": "no py_trees equivalent",
    "TestNode": "use Success, Failure or Running (mock nodes are not supported)",
    **{f"Switch{i}": "no py_trees equivalent" for i in range(2, 7)},
}
PRE_POST_CONDITIONS = ("_skipIf", "_failureIf", "_successIf", "_while", "_onSuccess", "_onFailure", "_onHalted", "_post")
_IGNORED_ATTRS = ("_uid", "_fullpath", "_description")
_EXPLICIT = ("Action", "Condition", "Decorator", "Control")
#: our decorators that are BT.CPP built-ins under another name (export and import)
_DECORATOR_TO_BTCPP = {"Inverter": "Inverter", "FailureIsSuccess": "ForceSuccess",
                       "SuccessIsFailure": "ForceFailure", "SuccessIsRunning": "KeepRunningUntilFailure"}
_BTCPP_TO_DECORATOR = {v: k for k, v in _DECORATOR_TO_BTCPP.items()}
#: a BT.CPP blackboard pointer ``{key}`` / ``{@key}`` (root blackboard)
POINTER = re.compile(r"^\s*\{\s*(@?[A-Za-z_][A-Za-z0-9_/.\-]*)\s*\}\s*$")


# ------------------------------------------------------------------------------------------------
# XML with locations
@dataclass
class XmlElement:
    """An XML element with its 1-based line and column (attributes in document order)."""

    tag: str
    attrib: dict[str, str]
    line: int
    col: int
    children: list["XmlElement"] = field(default_factory=list)

    def loc(self, file: str) -> Loc:
        return Loc(file, self.line, self.col)


def parse_xml(text: str, file: str = "<string>") -> XmlElement:
    """Parse XML text into :class:`XmlElement` s with locations (expat; no DTD, no entities).

    Raises:
        TreeLoadError: malformed XML, a DOCTYPE/entity declaration, too large or too deep.
    """
    if len(text.encode("utf-8", "replace")) > locyaml.MAX_FILE_BYTES:
        raise TreeLoadError.single(Loc(file, 1, 1), f"file is larger than {locyaml.MAX_FILE_BYTES // 1000} kB")
    text, shifts = _escape_bare_ampersands(text)
    parser = expat.ParserCreate()
    parser.ordered_attributes = True
    stack: list[XmlElement] = []
    roots: list[XmlElement] = []

    def column(line: int, col0: int) -> int:
        """1-based column in the file as written (before bare '&' became '&amp;')."""
        return col0 + 1 - 4 * sum(1 for c in shifts.get(line, ()) if c < col0)

    class _Refused(Exception):
        pass

    def start(tag: str, attrs: list[str]) -> None:
        line = parser.CurrentLineNumber
        el = XmlElement(tag, dict(zip(attrs[::2], attrs[1::2])), line, column(line, parser.CurrentColumnNumber))
        if len(stack) >= locyaml.MAX_DEPTH:
            raise _Refused(f"elements nested deeper than {locyaml.MAX_DEPTH} levels")
        (stack[-1].children if stack else roots).append(el)
        stack.append(el)

    def end(tag: str) -> None:
        stack.pop()

    def refuse_dtd(*args: Any) -> None:
        raise _Refused("DOCTYPE and entity declarations are not allowed in tree files")

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.StartDoctypeDeclHandler = refuse_dtd
    parser.EntityDeclHandler = refuse_dtd
    try:
        parser.Parse(text, True)
    except expat.ExpatError as e:
        raise TreeLoadError.single(Loc(file, e.lineno, column(e.lineno, e.offset)),
                                   f"malformed XML: {expat.errors.messages[e.code]}") from None
    except _Refused as e:
        line = parser.CurrentLineNumber
        raise TreeLoadError.single(Loc(file, line, column(line, parser.CurrentColumnNumber)), str(e)) from None
    except RecursionError:  # pragma: no cover - depth is limited above
        raise TreeLoadError.single(Loc(file, 1, 1), "the XML is nested too deeply") from None
    if not roots:  # pragma: no cover - expat reports "no element found"
        raise TreeLoadError.single(Loc(file, 1, 1), "empty XML document")
    return roots[0]


#: an '&' that does not start one of XML's own references (the five entities, &#N;, &#xN;)
_BARE_AMP = re.compile(r"&(?!(?:amp|lt|gt|quot|apos|#[0-9]+|#x[0-9A-Fa-f]+);)")


def _escape_bare_ampersands(text: str) -> tuple[str, dict[int, list[int]]]:
    """``text`` with every bare ``&`` written ``&amp;``, as BT.CPP's tinyxml2 reads them
    (``if="A && B"``, ``name="pick & place"``), and, per 1-based line, the 0-based columns (in the
    new text) where 4 characters were inserted, to report the file's own columns."""
    shifts: dict[int, list[int]] = {}
    out: list[str] = []
    for n, line in enumerate(text.split("\n"), start=1):
        cols: list[int] = []

        def rep(m: re.Match[str]) -> str:
            cols.append(m.start() + 4 * len(cols))
            return "&amp;"

        out.append(_BARE_AMP.sub(rep, line))
        if cols:
            shifts[n] = cols
    return "\n".join(out), shifts


def read_xml(path: str) -> XmlElement:
    """Read and parse an XML file (TreeLoadError for I/O and encoding problems too)."""
    try:
        with open(path, "rb") as f:
            raw = f.read(locyaml.MAX_FILE_BYTES + 1)
    except OSError as e:
        raise TreeLoadError.single(Loc(path, 1, 1), f"cannot read: {e.strerror or e}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise TreeLoadError.single(Loc(path, 1, 1), f"not UTF-8 text (byte {e.start})") from None
    return parse_xml(text, path)


# ------------------------------------------------------------------------------------------------
# import
def _loc_dict(loc: Loc, items: list[tuple[Any, Any, Loc]]) -> LocDict:
    d = LocDict()
    d.loc, d.key_locs, d.value_locs = loc, {}, {}
    for k, v, kl in items:
        d[k] = v
        d.key_locs[k] = kl
        d.value_locs[k] = kl
    return d


def _loc_list(loc: Loc, items: list[tuple[Any, Loc]]) -> LocList:
    out = LocList(v for v, _ in items)
    out.loc, out.item_locs = loc, [l for _, l in items]
    return out


def _locify(value: Any, loc: Loc) -> Any:
    """Plain YAML data -> LocDict/LocList located at ``loc`` (so ``${...}`` substitution reaches inside)."""
    if isinstance(value, dict):
        return _loc_dict(loc, [(k, _locify(v, loc), loc) for k, v in value.items()])
    if isinstance(value, list):
        return _loc_list(loc, [(_locify(v, loc), loc) for v in value])
    return value


@dataclass
class _Scope:
    """Blackboard scope of a (sub)tree instance: BT.CPP SubTree remapping rules."""

    ns: str = ""  # prefix of keys local to this subtree instance ("" at the root)
    remap: dict[str, tuple[str, str]] = field(default_factory=dict)  # inner -> ("ref", key) | ("lit", text)
    autoremap: bool = False
    parent: Optional["_Scope"] = None

    def resolve(self, key: str) -> tuple[str, str]:
        if key.startswith("@"):
            return "ref", key[1:]
        if key in self.remap:
            return self.remap[key]
        if self.autoremap and self.parent is not None:
            return self.parent.resolve(key)
        return "ref", self.ns + key


class _Importer:
    def __init__(self, file: str, root: XmlElement, main_tree_id: Optional[str]):
        self.file = file
        self.problems: list[Problem] = []
        self.count = 0
        self.trees: dict[str, tuple[XmlElement, str]] = {}
        self._index(root, file, set())
        self.main_id = self._main_id(root, main_tree_id)
        self.reported: set[int] = set()  # id() of elements whose type was reported by _check_node_types
        self._check_node_types()

    def add(self, el: XmlElement, file: str, message: str, hint: str = "") -> None:
        self.problems.append(Problem(el.loc(file), message, hint))

    def error(self) -> TreeLoadError:
        """Every problem found, in file order."""
        found = sorted(self.problems, key=lambda p: (p.loc.file != self.file, p.loc.file, p.loc.line, p.loc.col))
        return TreeLoadError(found or [Problem(Loc(self.file, 1, 1), "no tree found")])

    # -- file structure --------------------------------------------------------------------
    def _index(self, root: XmlElement, file: str, seen: set[str]) -> None:
        if root.tag != "root":
            raise TreeLoadError.single(root.loc(file), f"the XML must have a <root> element, got <{root.tag}>",
                                       'start with <root BTCPP_format="4">')
        fmt = root.attrib.get("BTCPP_format")
        if fmt is not None and fmt != "4":
            raise TreeLoadError.single(root.loc(file), f"BTCPP_format {fmt!r} is not supported (only 4)",
                                       "convert the file with BehaviorTree.CPP's convert_v3_to_v4.py")
        seen.add(os.path.abspath(file))
        for el in root.children:
            if el.tag == "BehaviorTree":
                tid = el.attrib.get("ID", "" if len([c for c in root.children if c.tag == "BehaviorTree"]) == 1 else None)
                if tid is None:
                    self.add(el, file, "<BehaviorTree> needs an ID when the file holds several trees")
                    continue
                if tid in self.trees:
                    self.add(el, file, f"duplicate BehaviorTree ID {tid!r}")
                    continue
                self.trees[tid] = (el, file)
            elif el.tag in ("include", "Include", "Import"):
                self._include(el, file, seen)
            elif el.tag == "TreeNodesModel":
                continue  # editor metadata; our registry is the node model
            else:
                self.add(el, file, f"unexpected <{el.tag}> under <root>", "expected <BehaviorTree>, <TreeNodesModel> or <include>")

    def _include(self, el: XmlElement, file: str, seen: set[str]) -> None:
        if "ros_pkg" in el.attrib:
            self.add(el, file, "<include ros_pkg=...> needs ROS; give a path relative to this file")
            return
        src = el.attrib.get("path") or el.attrib.get("src") or el.attrib.get("file")
        if not src:
            self.add(el, file, f"<{el.tag}> needs a path attribute", '<include path="other.xml"/>')
            return
        base = os.path.dirname(os.path.abspath(file))
        try:
            path = _resolve_import_path(src, base, None) if _resolve_import_path else os.path.join(base, src)
            if not os.path.exists(path):
                raise FileNotFoundError(path)
        except FileNotFoundError:
            self.add(el, file, f"included file {src!r} not found (looked in {base})")
            return
        if os.path.abspath(path) in seen:
            return  # already included (BT.CPP and py_trees both skip repeats)
        if len(seen) > 64:
            self.add(el, file, "more than 64 included files")
            return
        try:
            sub = read_xml(path)
            self._index(sub, os.path.relpath(path), seen)
        except TreeLoadError as e:
            self.problems.extend(e.problems)

    def _main_id(self, root: XmlElement, given: Optional[str]) -> Optional[str]:
        main = given or root.attrib.get("main_tree_to_execute")
        if main is None:
            local = [tid for tid, (_, f) in self.trees.items() if f == self.file]
            if len(local) == 1:
                return local[0]
            self.add(root, self.file, "several <BehaviorTree>s and no main_tree_to_execute",
                     f"add main_tree_to_execute=\"...\" or pass --main-tree ID (one of {', '.join(sorted(local))})")
            return None
        if main not in self.trees:
            self.add(root, self.file, f"main tree {main!r} not found", did_you_mean(main, list(self.trees)))
            return None
        return main

    def _check_node_types(self) -> None:
        """Report every unknown or unsupported node type of every tree at once (as BT.CPP checks a
        whole file), before the main tree is imported; :meth:`_node` then skips those elements."""
        for tid, (bt, file) in self.trees.items():
            stack = list(bt.children)
            while stack:
                el = stack.pop(0)
                stack[:0] = el.children
                tag = el.tag
                if tag in _EXPLICIT:
                    tag = el.attrib.get("ID", "Condition" if tag == "Condition" and "status" in el.attrib else "")
                    if not tag:
                        continue  # reported as a missing ID where the tree is imported
                elif tag == "SubTree":
                    continue
                if tag in UNSUPPORTED:
                    self.add(el, file, f"<{tag}> (BehaviorTree.CPP) has no py_trees_manipulation equivalent", UNSUPPORTED[tag])
                    self.reported.add(id(el))
                elif tag not in KNOWN_TAGS and tag not in COMPOSITES and tag not in DECORATORS \
                        and registry.lookup(tag) is None:
                    options = sorted(set(KNOWN_TAGS) | set(COMPOSITES) | set(DECORATORS) | set(registry.behaviours()))
                    self.add(el, file, f"unknown node <{tag}> in BehaviorTree {tid!r}",
                             did_you_mean(tag, options) or "run 'ptm behaviours' for ours; BT.CPP's built-ins are listed in "
                             "the module docstring of py_trees_manipulation/interop/btxml.py")
                    self.reported.add(id(el))

    # -- nodes -----------------------------------------------------------------------------
    def tree(self) -> Optional[LocDict]:
        if self.main_id is None:
            return None
        el, file = self.trees[self.main_id]
        return self._tree_body(el, file, _Scope(), "", [self.main_id])

    def _tree_body(self, bt: XmlElement, file: str, scope: _Scope, prefix: str, stack: list[str]) -> Optional[LocDict]:
        if len(bt.children) != 1:
            self.add(bt, file, f"<BehaviorTree ID={bt.attrib.get('ID', '')!r}> must have exactly 1 child, got {len(bt.children)}")
            return None
        return self._node(bt.children[0], file, scope, prefix, stack)

    def _node(self, el: XmlElement, file: str, scope: _Scope, prefix: str, stack: list[str]) -> Optional[LocDict]:
        self.count += 1
        if self.count > MAX_NODES:
            if self.count == MAX_NODES + 1:
                self.add(el, file, f"the tree has more than {MAX_NODES} nodes (after inlining SubTrees)")
            return None
        loc = el.loc(file)
        tag = el.tag
        attrs = dict(el.attrib)
        if tag in _EXPLICIT or (tag == "SubTree"):
            if "ID" not in attrs:
                if tag == "Condition" and "status" in attrs:
                    attrs["ID"] = "Condition"  # our Condition decorator written in compact form
                else:
                    self.add(el, file, f"<{tag}> needs an ID attribute", f'e.g. <{tag} ID="NodeType"/>')
                    return None
            if tag == "SubTree":
                return self._subtree(el, file, scope, prefix, stack)
            tag = attrs.pop("ID")
        for a in list(attrs):
            if a in PRE_POST_CONDITIONS:
                self.add(el, file, f"<{el.tag}>: attribute {a} (a BT.CPP script pre/post-condition) has no equivalent",
                         "express the condition as a behaviour in a Sequence or Fallback")
                del attrs[a]
            elif a in _IGNORED_ATTRS or a == "_autoremap":
                del attrs[a]
        if id(el) in self.reported:
            return None  # unknown or unsupported type, reported by _check_node_types
        name = attrs.pop("name", None)
        full = (prefix + name) if name is not None else None
        kind, params, mapped_ok = self._map_type(el, file, tag, attrs, len(el.children))
        if not mapped_ok:
            return None
        decl = _declaration(kind)
        items: list[tuple[Any, Any, Loc]] = []
        if full is not None:
            items.append(("name", full, loc))
        for key, raw in params.items():
            value = self._value(el, file, raw, decl.get(key) if decl else None, key, scope) if isinstance(raw, str) else raw
            items.append((key, value, loc))
        if kind in COMPOSITES:
            kids = [(c, self._node(c, file, scope, prefix, stack), c) for c in el.children]
            items.append(("children", _loc_list(loc, [(k, c.loc(file)) for _, k, c in kids if k is not None]), loc))
        elif kind in DECORATORS:
            if len(el.children) != 1:
                self.add(el, file, f"<{el.tag}> is a decorator: it needs exactly 1 child, got {len(el.children)}")
                return None
            child = self._node(el.children[0], file, scope, prefix, stack)
            if child is None:
                return None
            items.append(("child", child, el.children[0].loc(file)))
        elif el.children:
            if kind in registry.behaviours() or registry.lookup(kind) is not None:
                self.add(el.children[0], file, f"<{tag}> is a behaviour (a leaf): it cannot have children")
                return None
        body = _loc_dict(loc, items)
        return _loc_dict(loc, [(kind, body, loc)])

    def _map_type(self, el: XmlElement, file: str, tag: str, attrs: dict[str, str], n_children: int) -> tuple[str, dict[str, Any], bool]:
        """BT.CPP tag + attributes -> (our type, our parameters as text or values, ok)."""
        a = attrs

        def take_int(key: str, default: int) -> Optional[int]:
            raw = a.pop(key, None)
            if raw is None:
                return default
            try:
                return int(raw.strip())
            except ValueError:
                self.add(el, file, f"<{tag}> {key}={raw!r}: expected an integer")
                return None

        def bool_attr(key: str) -> Optional[str]:
            return a.pop(key, None)

        if tag in ("Sequence", "ReactiveSequence", "Fallback", "ReactiveFallback", "Selector"):
            kind = "Sequence" if "Sequence" in tag else "Selector"
            mem_raw = bool_attr("memory")
            memory: Any = not tag.startswith("Reactive")
            if mem_raw is not None:
                if tag.startswith("Reactive"):
                    self.add(el, file, f"<{tag}> is memory=false by definition; drop the memory attribute")
                memory = mem_raw
            return kind, {"memory": memory, **a}, True
        if tag == "Parallel":
            if "policy" in a:  # py_trees parser dialect
                return "Parallel", a, True
            s = take_int("success_count", -1)
            f_ = take_int("failure_count", 1)
            if s is None or f_ is None:
                return "", {}, False
            n = n_children
            if s in (-1, n) and f_ in (1, -1 if n == 1 else 1):
                return "Parallel", {"policy": "success_on_all", **a}, True
            if s == 1 and f_ == 1:
                return "Parallel", {"policy": "success_on_one", **a}, True
            self.add(el, file, f"<Parallel success_count={s} failure_count={f_}> has no py_trees equivalent",
                     "py_trees offers success_count=-1 (all) or 1, each with failure_count=1")
            return "", {}, False
        if tag in _BTCPP_TO_DECORATOR:
            return _BTCPP_TO_DECORATOR[tag], a, True
        if tag == "RetryUntilSuccessful":
            n = take_int("num_attempts", REQUIRED_INT)
            if n is None:
                return "", {}, False
            if n == REQUIRED_INT:
                self.add(el, file, "<RetryUntilSuccessful> needs num_attempts")
                return "", {}, False
            if n < 1:
                self.add(el, file, f"<RetryUntilSuccessful num_attempts={n}>: endless retries have no py_trees equivalent",
                         "give a number of attempts >= 1")
                return "", {}, False
            return "Retry", {"num_failures": n, **a}, True
        if tag == "Repeat" and "num_cycles" in a:
            n = take_int("num_cycles", -1)
            return ("Repeat", {"num_success": n, **a}, True) if n is not None else ("", {}, False)
        if tag == "Timeout" and "msec" in a:
            ms = _msec(a.pop("msec"))
            if ms is None:
                self.add(el, file, "<Timeout> msec: expected a number of milliseconds")
                return "", {}, False
            return "Timeout", {"duration_s": ms / 1000.0, **a}, True
        if tag == "Sleep":
            ms = _msec(a.pop("msec", ""))
            if ms is None:
                self.add(el, file, "<Sleep> msec: expected a number of milliseconds")
                return "", {}, False
            return "Wait", {"duration_s": ms / 1000.0, **a}, True
        if tag == "RunOnce":
            skip = a.pop("then_skip", "true").strip().lower()
            if skip not in ("false", "0"):
                self.add(el, file, "<RunOnce then_skip=true> returns SKIPPED afterwards, which py_trees does not have",
                         'use then_skip="false" (returns the first result again: OneShot on_completion)')
                return "", {}, False
            return "OneShot", {"policy": "on_completion", **a}, True
        if tag == "AlwaysSuccess":
            return "Success", a, True
        if tag == "AlwaysFailure":
            return "Failure", a, True
        if tag == "SetBlackboard":
            key = a.pop("output_key", None)
            value = a.pop("value", None)
            out: dict[str, Any] = dict(a)
            if key is not None:
                out["variable_name"] = key
            if value is not None:
                out["value"] = value
            return "SetBlackboardVariable", out, True
        return tag, a, True

    def _value(self, el: XmlElement, file: str, raw: str, p: Optional[Param], port: str, scope: _Scope) -> Any:
        """An attribute's text -> the value for the loader (blackboard pointers resolved through the scope)."""
        try:
            return self._attr_value(el, file, raw, p, port, scope)
        except _AttributeTooComplex as e:
            short = raw if len(raw) <= 40 else raw[:37] + "..."
            self.add(el, file, f"{port}={short!r}: {e}", "write the value out flat (a pose, a list of numbers)")
            return raw

    def _attr_value(self, el: XmlElement, file: str, raw: str, p: Optional[Param], port: str, scope: _Scope) -> Any:
        loc = el.loc(file)
        text = raw
        if text.strip() == "{=}":
            text = "{" + port + "}"
        m = POINTER.match(text)
        if m:
            kind_, resolved = scope.resolve(m.group(1))
            if kind_ == "lit":
                return self._attr_value(el, file, resolved, p, port, scope.parent or _Scope())
            return "{" + resolved + "}"
        structured = p is None or p.kind in ("pose", "any", "vector3", "float_list")
        if not structured and text.strip().startswith("{") and "${" not in text:
            try:
                ok = bool(is_key(text.strip())) if is_key else False  # py_trees' own pointer syntax check
            except ValueError:
                ok = False
            hint = "a blackboard key is letters, digits, _ / . - (e.g. {mug_pose}); {@key} is the root blackboard"
            self.add(el, file, f"{port}={raw!r}: {'invalid key name in' if ok else 'malformed'} blackboard pointer", hint)
            return raw
        if "${" in text:
            if p is not None and p.kind in ("vector3", "float_list", "pose", "any"):
                return _locify(_yaml_or_raw(text), loc)
            return text
        return _locify(text_to_value(text, p), loc)

    def _subtree(self, el: XmlElement, file: str, scope: _Scope, prefix: str, stack: list[str]) -> Optional[LocDict]:
        attrs = dict(el.attrib)
        sid = attrs.pop("ID")
        if el.children:
            self.add(el, file, f"<SubTree ID={sid!r}> must not have children")
        if sid not in self.trees:
            self.add(el, file, f"SubTree {sid!r}: no <BehaviorTree ID={sid!r}>", did_you_mean(sid, list(self.trees)))
            return None
        if sid in stack:
            self.add(el, file, f"recursive SubTree: {' -> '.join(stack + [sid])}")
            return None
        name = attrs.pop("name", None)
        auto = attrs.pop("_autoremap", "false").strip().lower() in ("true", "1")
        for a in list(attrs):
            if a.startswith("_"):
                if a in PRE_POST_CONDITIONS:
                    self.add(el, file, f"<SubTree>: attribute {a} (a BT.CPP script pre/post-condition) has no equivalent")
                del attrs[a]
        remap: dict[str, tuple[str, str]] = {}
        for inner, value in attrs.items():
            v = value.strip()
            if v == "{=}":
                v = "{" + inner + "}"
            m = POINTER.match(v)
            remap[inner] = scope.resolve(m.group(1)) if m else ("lit", value)
        label = name if name is not None else sid
        inner_scope = _Scope(ns=scope.ns + label + "/", remap=remap, autoremap=auto, parent=scope)
        bt, bt_file = self.trees[sid]
        node = self._tree_body(bt, bt_file, inner_scope, prefix + label + "/", stack + [sid])
        if node is not None and name is not None:
            kind = next(iter(node))
            body = node[kind]
            body["name"] = prefix + name  # the SubTree's name names its root, as an include's does
            body.key_locs["name"] = body.value_locs["name"] = el.loc(file)
        return node


REQUIRED_INT = -(2**62)
#: BT.CPP tags the importer maps (besides our own composites, decorators and behaviours)
KNOWN_TAGS = ("Sequence", "ReactiveSequence", "Fallback", "ReactiveFallback", "Selector", "Parallel", "Inverter",
              "ForceSuccess", "ForceFailure", "KeepRunningUntilFailure", "RetryUntilSuccessful", "Repeat", "Timeout",
              "Sleep", "RunOnce", "AlwaysSuccess", "AlwaysFailure", "SetBlackboard")


def _msec(raw: str) -> Optional[float]:
    try:
        v = float(raw.strip())
    except ValueError:
        return None
    return v if math.isfinite(v) and v >= 0 else None


class _AttributeTooComplex(ValueError):
    """An attribute's inline YAML/JSON is nested too deeply or expands too far (locyaml's limits)."""


def _yaml_or_raw(text: str) -> Any:
    """Inline YAML/JSON of an attribute, with the task files' limits (depth, size, aliases), or
    the text itself when it is not YAML (the loader then reports the value).

    Raises:
        _AttributeTooComplex: nested deeper than ``locyaml.MAX_DEPTH`` or expanding to more than
            ``locyaml.MAX_EXPANDED_VALUES`` values.
    """
    try:
        return locyaml.to_plain(locyaml.loads(text, "<attribute>"))
    except TreeLoadError as e:
        message = e.problems[0].message if e.problems else str(e)
        if "nested" in message or "expands to" in message:
            raise _AttributeTooComplex(message) from None
        return text


def text_to_value(text: str, p: Optional[Param]) -> Any:
    """Convert an attribute's text to a parameter value (the loader then validates it).

    By kind: ``str``/``key`` verbatim; ``bool`` ``true``/``false`` (any case, or 1/0); ``int``
    and ``float`` numbers, or the text (``"10 cm"`` quantities); lists and poses inline JSON/YAML
    or BT.CPP's ``a;b;c``; ``choice`` verbatim when it is a choice; otherwise YAML.
    """
    if p is None:
        return _yaml_or_raw(text) if text.strip()[:1] in "[{" else _scalar(text)
    k = p.kind
    if k in ("str", "key"):
        return text
    if k == "choice":
        return text if text in (p.choices or ()) else _scalar(text)
    if k == "bool":
        low = text.strip().lower()
        return {"true": True, "false": False, "1": True, "0": False}.get(low, text)
    if k in ("int", "float"):
        return _scalar(text)
    if k in ("vector3", "float_list", "pose"):
        s = text.strip()
        if ";" in s and not s.startswith(("[", "{")):
            try:
                return [float(x) for x in s.split(";")]
            except ValueError:
                return text
        return _yaml_or_raw(s)
    return _scalar(text) if text.strip()[:1] not in "[{" else _yaml_or_raw(text)  # any


def _scalar(text: str) -> Any:
    s = text.strip()
    if re.fullmatch(r"[-+]?\d+", s):
        return int(s)
    try:
        v = float(s)
        return v
    except ValueError:
        pass
    low = s.lower()
    if low in ("true", "false"):
        return low == "true"
    if s.startswith('"') and s.endswith('"') and len(s) >= 2:
        try:
            return json.loads(s)
        except ValueError:
            pass
    return text


def _declaration(kind: str) -> dict[str, Param]:
    if kind in COMPOSITES:
        return COMPOSITES[kind]
    if kind in DECORATORS:
        return DECORATORS[kind]
    cls = registry.behaviours().get(kind)
    return cls.all_params() if cls is not None else {}


def xml_tree_document(xml_path: str, main_tree_id: Optional[str] = None) -> LocDict:
    """The main tree of a BT.CPP XML file in the YAML node form, every value located in the XML.

    Raises:
        TreeLoadError: malformed XML or BT.CPP constructs without an equivalent (every one found,
            each with ``FILE:LINE:COL``). Parameter problems are left to the loader.
    """
    importer = _Importer(xml_path, read_xml(xml_path), main_tree_id)
    node = importer.tree()
    if importer.problems or node is None:
        raise importer.error()
    return node


def load_tree_from_xml(xml_path: str, overrides: Optional[list[str]] = None, main_tree_id: Optional[str] = None) -> TaskSpec:
    """A task holding only the XML's tree (no scene): for conversion and validation."""
    importer = _Importer(xml_path, read_xml(xml_path), main_tree_id)
    node = importer.tree()
    if importer.problems or node is None:
        raise importer.error()
    top = Loc(xml_path, 1, 1)
    items: list[tuple[Any, Any, Loc]] = [("tree", node, node.loc)]
    bt = importer.trees[importer.main_id][0] if importer.main_id else None
    if importer.main_id:
        items.append(("name", importer.main_id, top))
    if bt is not None and bt.attrib.get("_description"):
        items.append(("description", bt.attrib["_description"], bt.loc(xml_path)))
    return load_task_data(_loc_dict(top, items), xml_path, overrides, check_blackboard=False)


def load_task_from_xml(xml_path: str, scene_task_yaml_path: str, overrides: Optional[list[str]] = None,
                       main_tree_id: Optional[str] = None) -> TaskSpec:
    """A task whose tree comes from BT.CPP XML and everything else from a YAML task file.

    The YAML file (``ptm run FILE.xml --scene TASK.yaml``) gives ``name``, ``description``,
    ``parameters`` (``${name}`` in XML attributes are substituted), ``scene``, ``blackboard``,
    ``expect`` and ``variants``; its own ``tree`` (if any) is ignored. ``overrides`` work as for
    YAML (``tree.NODE.PARAM=...`` addresses the XML's nodes by name).

    Returns:
        the validated task; ``task.file`` is ``xml_path``.

    Raises:
        TreeLoadError: XML problems with the XML's ``FILE:LINE:COL``, parameter problems located
            in the XML, scene problems located in the YAML.
    """
    node = xml_tree_document(xml_path, main_tree_id)
    scene_doc = locyaml.load(scene_task_yaml_path)
    if not isinstance(scene_doc, dict):
        raise TreeLoadError.single(getattr(scene_doc, "loc", Loc(scene_task_yaml_path, 1, 1)),
                                   "the --scene file must be a task file (a mapping with scene:, blackboard:...)")
    doc = _loc_dict(scene_doc.loc, [(k, v, scene_doc.key_loc(k)) for k, v in scene_doc.items() if k != "tree"])
    doc.value_locs.update({k: scene_doc.value_loc(k) for k in doc})
    doc["tree"] = node
    doc.key_locs["tree"] = doc.value_locs["tree"] = node.loc
    task = load_task_data(doc, scene_task_yaml_path, overrides)
    task.file = xml_path
    task.scene_dir = os.path.dirname(os.path.abspath(scene_task_yaml_path))  # where its URDF paths were checked
    return task


# ------------------------------------------------------------------------------------------------
# export
def _export_error(spec: NodeSpec, message: str, hint: str = "") -> TreeLoadError:
    return TreeLoadError.single(spec.loc, f"cannot export {spec.type} to BehaviorTree.CPP: {message}", hint)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        try:
            return bool(np.shape(a) == np.shape(b) and np.allclose(np.asarray(a, float), np.asarray(b, float), atol=1e-9))
        except (TypeError, ValueError):
            return False
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, float) or isinstance(b, float):
        try:
            return bool(math.isclose(float(a), float(b), rel_tol=1e-12, abs_tol=1e-12))
        except (TypeError, ValueError):
            return False
    return type(a) is type(b) and a == b


def _num(v: float) -> str:
    if float(v).is_integer() and abs(v) < 1e15:
        return str(int(v)) if isinstance(v, (int, np.integer)) else repr(float(v))
    return repr(float(v))


def _clean(x: float) -> float:
    v = round(float(x), 12)
    return 0.0 if v == 0 else v


def _jsonable(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, (np.floating, np.integer)):
        return v.item()
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, BlackboardRef):
        return str(v)
    return v


def value_to_text(value: Any, p: Param) -> str:
    """A parameter value (as the loader coerced it) -> attribute text that imports back to it."""
    if isinstance(value, BlackboardRef):
        return str(value)
    k = p.kind
    if k == "key":
        return "{" + str(value) + "}"
    if k == "bool":
        return "true" if value else "false"
    if k == "int":
        return str(int(value))
    if k == "float":
        return value if isinstance(value, str) and value in p.names else _num(value)
    if k in ("str", "choice") and isinstance(value, str):
        return value
    if k == "pose":
        if isinstance(value, str) and value in p.names:
            return value
        from ..geometry.poses import pq_from_pose

        pos, q = pq_from_pose(np.asarray(value, dtype=float))
        return _json({"position": [_clean(v) for v in pos], "orientation": [_clean(v) for v in q]})
    if k in ("vector3", "float_list"):
        return _json([float(v) for v in value])
    if isinstance(value, str):
        return _json(value) if _scalar(value) != value or value.strip()[:1] in "[{" else value
    return _json(_jsonable(value))


#: characters YAML reads as printable (PyYAML's reader); any other is written as a JSON \uXXXX escape
_NOT_YAML_PRINTABLE = re.compile("[^\x09\x0A\x0D\x20-\x7E\x85\xA0-\uD7FF\uE000-\uFFFD\U00010000-\U0010FFFF]")
#: characters an XML 1.0 document cannot hold, even escaped
_NOT_XML = re.compile("[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD\U00010000-\U0010FFFF]")


def _json(value: Any) -> str:
    """Inline JSON that both the XML parser and the YAML reader take back unchanged: non-ASCII text
    as it is (``json.dumps``' default would split characters beyond the BMP into surrogate escapes,
    which YAML reads as two lone surrogates), characters YAML does not read as ``\\uXXXX``."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    return _NOT_YAML_PRINTABLE.sub(lambda m: "\\u%04x" % ord(m.group()), text)


def _attrs_for(spec: NodeSpec, decl: dict[str, Param], skip: tuple[str, ...] = (),
               ex: Optional["_Export"] = None) -> list[tuple[str, str]]:
    """The attributes of ``spec``: its name and every parameter that is not at its default.

    Inside a SubTree definition (``ex.scope``), the name is relative to the include, a parameter
    whose whole value came from the include's parameter ``P`` is written as the port ``{P}`` (the
    value goes to the ``<SubTree>`` element), and every other blackboard key as ``{@key}``: an
    include does not scope keys, a BT.CPP SubTree does unless they name the root blackboard.
    """
    scope = ex.scope if ex is not None else None
    out: list[tuple[str, str]] = []
    if spec.name is not None and not (scope is not None and spec is scope.root):
        bad = _NOT_XML.search(spec.name)
        if bad:
            raise _export_error(spec, f"the name holds the character U+{ord(bad.group()):04X}, which XML cannot hold")
        out.append(("name", scope.relative(spec.name) if scope is not None else spec.name))
    for key, p in decl.items():
        if key in skip or key not in spec.params:
            continue
        v = spec.params[key]
        if v is None or (not p.required and _same(v, p.default)):
            continue
        try:
            text = value_to_text(v, p)
            if scope is not None:
                port = _port(spec, key, v, p, scope)
                if port is not None:
                    out.append((key, port))
                    continue
                if isinstance(v, BlackboardRef) or p.kind == "key":
                    text = "{@" + (v.key if isinstance(v, BlackboardRef) else str(v)) + "}"
        except ValueError as e:  # e.g. NaN in an 'any' value: JSON has no NaN
            raise _export_error(spec, f"{key}: {e}") from None
        bad = _NOT_XML.search(text)
        if bad:
            raise _export_error(spec, f"{key} holds the character U+{ord(bad.group()):04X}, which XML cannot hold",
                                "remove control characters from the value")
        out.append((key, text))
    return out


def _port(spec: NodeSpec, key: str, v: Any, p: Param, scope: "_DefScope") -> Optional[str]:
    """``"{P}"`` when parameter ``key`` of a behaviour came whole from the include's parameter P (the
    remapping ``P="value"`` is recorded in ``scope.ports``), else None (the value is written as is)."""
    src = spec.param_sources.get(key) if spec.category == "behaviour" else None
    if src is None or src[1] in ("ID", "name") or src[1].startswith("_"):
        return None
    pname = src[1]
    at = "@" if scope.nested else ""
    if isinstance(v, BlackboardRef):
        remap = "{" + at + v.key + "}"
    elif p.kind == "key":
        remap = "{" + at + str(v) + "}"
    else:
        remap = value_to_text(v, p)
        if POINTER.match(remap) or remap.strip() == "{=}":
            return None  # a literal that reads like a pointer would be taken for one
    if scope.ports.setdefault(pname, remap) != remap:
        return None  # the same parameter used with two encodings: write this one as a value
    return "{" + pname + "}"


@dataclass
class _DefScope:
    """A SubTree definition being written: the include's root, its name prefix, the ports used."""

    root: NodeSpec
    prefix: str
    nested: bool
    ports: dict[str, str] = field(default_factory=dict)

    def relative(self, name: str) -> str:
        return name[len(self.prefix):] if name.startswith(self.prefix) else name


@dataclass
class _Export:
    custom: dict[str, tuple[str, dict[str, Param], str]] = field(default_factory=dict)  # ID -> (category, ports, doc)
    subtrees: bool = True  # named includes as <SubTree> (False: inlined)
    scope: Optional[_DefScope] = None
    main_id: str = ""
    defs: dict[str, str] = field(default_factory=dict)  # definition body text -> BehaviorTree ID
    def_list: list[tuple[str, str, list[str]]] = field(default_factory=list)  # (ID, included file, body lines)


def _subtree_xml(spec: NodeSpec, ex: _Export, depth: int) -> list[str]:
    """``<SubTree ID=... name=... port="value"/>`` for a named include, its ``<BehaviorTree>``
    definition added to ``ex`` (one per distinct body: two includes of a file with the same
    structure share it, ports carrying what differs)."""
    import dataclasses

    info = spec.includes[-1]
    parent = ex.scope
    root = dataclasses.replace(spec, includes=[])
    scope = _DefScope(root=root, prefix=(spec.name or "") + "/", nested=parent is not None)
    ex.scope = scope
    try:
        body = _node_xml(root, ex, 2)
    finally:
        ex.scope = parent
    key = "\n".join(body)
    tid = ex.defs.get(key)
    if tid is None:
        base = tree_id(os.path.splitext(os.path.basename(info.file))[0])
        tid, n = base, 2
        taken = {t for t, _, _ in ex.def_list} | {ex.main_id}
        while tid in taken:
            tid, n = f"{base}_{n}", n + 1
        ex.defs[key] = tid
        ex.def_list.append((tid, info.file, body))
    name = parent.relative(spec.name or "") if parent is not None else spec.name or ""
    remaps = dict(scope.ports)
    if parent is not None:  # with: {k: "${P}"} inside a definition: k="{P}", a port of the enclosing one
        for pname, text in scope.ports.items():
            src = info.given_sources.get(pname)
            if src is None or src[0] != "value" or src[1] in ("ID", "name") or src[1].startswith("_"):
                continue
            m = POINTER.match(text)
            outer = ("{" + ("@" if parent.nested else "") + m.group(1).lstrip("@") + "}") if m else text
            if parent.ports.setdefault(src[1], outer) == outer:
                remaps[pname] = "{" + src[1] + "}"
    attrs = [("ID", tid), ("name", name)] + sorted(remaps.items())
    return ["  " * depth + "<SubTree" + "".join(f" {k}={quoteattr(v)}" for k, v in attrs) + "/>"]


def _node_xml(spec: NodeSpec, ex: _Export, depth: int) -> list[str]:
    if ex.subtrees and len(spec.includes) == 1 and spec.includes[0].name and spec.name:
        return _subtree_xml(spec, ex, depth)
    pad = "  " * depth
    t = spec.type
    children: list[NodeSpec] = spec.children
    if spec.category == "composite":
        params = spec.params
        if t == "Sequence":
            tag = "Sequence" if params["memory"] else "ReactiveSequence"
            attrs = _attrs_for(spec, COMPOSITES[t], skip=("memory",), ex=ex)
        elif t == "Selector":
            tag = "Fallback" if params["memory"] else "ReactiveFallback"
            attrs = _attrs_for(spec, COMPOSITES[t], skip=("memory",), ex=ex)
        else:
            policy = params["policy"]
            if policy == "success_on_selected":
                raise _export_error(spec, "policy success_on_selected has no BT.CPP equivalent",
                                    "use success_on_all or success_on_one")
            if policy == "success_on_all" and not params.get("synchronise", True):
                raise _export_error(spec, "synchronise: false (re-tick finished children) has no BT.CPP equivalent")
            tag = "Parallel"
            attrs = _attrs_for(spec, {}, ex=ex) + [("success_count", "-1" if policy == "success_on_all" else "1"),
                                             ("failure_count", "1")]
    elif spec.category == "decorator":
        params = spec.params
        if t in _DECORATOR_TO_BTCPP:
            tag, attrs = _DECORATOR_TO_BTCPP[t], _attrs_for(spec, {}, ex=ex)
        elif t == "Retry":
            tag, attrs = "RetryUntilSuccessful", _attrs_for(spec, {}, ex=ex) + [("num_attempts", str(params["num_failures"]))]
        elif t == "Repeat":
            tag, attrs = "Repeat", _attrs_for(spec, {}, ex=ex) + [("num_cycles", str(params["num_success"]))]
        elif t == "Timeout":
            ms = float(params["duration_s"]) * 1000.0
            if abs(ms - round(ms)) > 1e-6:
                raise _export_error(spec, f"duration_s {params['duration_s']:g} s is not a whole number of milliseconds",
                                    "BT.CPP's Timeout takes msec (an integer)")
            tag, attrs = "Timeout", _attrs_for(spec, {}, ex=ex) + [("msec", str(int(round(ms))))]
        elif t == "OneShot" and params["policy"] == "on_completion":
            tag, attrs = "RunOnce", _attrs_for(spec, {}, ex=ex) + [("then_skip", "false")]
        else:
            ex.custom[t] = ("Decorator", DECORATORS[t], _decorator_doc(t))
            tag, attrs = t, _attrs_for(spec, DECORATORS[t], ex=ex)
            if t == "Condition":
                tag, attrs = "Decorator", [("ID", "Condition")] + attrs
    else:
        cls = registry.lookup(t)
        decl = cls.all_params() if cls is not None else {}
        if t == "Success":
            tag, attrs = "AlwaysSuccess", _attrs_for(spec, {}, ex=ex)
        elif t == "Failure" and _same(spec.params.get("message"), decl["message"].default):
            tag, attrs = "AlwaysFailure", _attrs_for(spec, {}, ex=ex)
        else:
            ex.custom[t] = (_leaf_category(cls), decl, registry.describe(cls) if cls else "")
            tag, attrs = t, _attrs_for(spec, decl, ex=ex)
    head = pad + "<" + tag + "".join(f" {k}={quoteattr(v)}" for k, v in attrs)
    if not children:
        return [head + "/>"]
    lines = [head + ">"]
    for c in children:
        lines += _node_xml(c, ex, depth + 1)
    lines.append(f"{pad}</{tag}>")
    return lines


def _decorator_doc(t: str) -> str:
    from ..trees.nodes import DECORATOR_DOCS

    return DECORATOR_DOCS.get(t, "")


def _leaf_category(cls: Any) -> str:
    """``Condition`` for condition behaviours (``BTCPP_NODE_TYPE``, docstring "Condition: ...", or a
    ``Check*`` name), else ``Action``."""
    if cls is None:
        return "Action"
    explicit = getattr(cls, "BTCPP_NODE_TYPE", None)
    if explicit in ("Action", "Condition"):
        return explicit
    doc = (cls.__doc__ or "").strip()
    return "Condition" if doc.startswith("Condition") or cls.__name__.startswith("Check") else "Action"


_PORT_TYPES = {"float": "double", "int": "int", "bool": "bool", "str": "std::string", "choice": "std::string",
               "key": "std::string", "pose": "std::string", "vector3": "std::string", "float_list": "std::string",
               "any": "std::string"}


def tree_nodes_model(custom: dict[str, tuple[str, dict[str, Param], str]], indent: int = 1) -> list[str]:
    """``<TreeNodesModel>`` lines declaring our node types and their ports (for Groot2).

    ``key`` parameters (blackboard keys the node writes) are ``output_port``; the rest
    ``input_port``, with ``type``, ``default`` and a description holding doc, unit and encoding.
    """
    pad = "  " * indent
    lines = [pad + "<TreeNodesModel>"]
    for node_id in sorted(custom):
        category, ports, doc = custom[node_id]
        if not ports:
            lines.append(f"{pad}  <{category} ID={quoteattr(node_id)}/>")
            continue
        lines.append(f"{pad}  <{category} ID={quoteattr(node_id)}>")
        for key, p in ports.items():
            direction = "output_port" if p.kind == "key" else "input_port"
            attrs = [("name", key), ("type", _PORT_TYPES[p.kind])]
            if not p.required and p.default is not None:
                attrs.append(("default", value_to_text(p.default, p)))
            desc = p.doc or key
            extra = []
            if p.unit:
                extra.append(f"unit {p.unit}")
            if p.frame:
                extra.append(f"{p.frame} frame")
            if p.kind == "pose":
                extra.append('JSON {"position": [x, y, z], "orientation": [w, x, y, z]}')
            elif p.kind in ("vector3", "float_list"):
                extra.append("JSON list")
            elif p.kind == "choice":
                extra.append("one of " + ", ".join(map(str, p.choices or ())))
            if extra:
                desc += " (" + "; ".join(extra) + ")"
            lines.append(f"{pad}    <{direction}" + "".join(f" {k}={quoteattr(v)}" for k, v in attrs) +
                         f">{_escape_text(desc)}</{direction}>")
        lines.append(f"{pad}  </{category}>")
    lines.append(pad + "</TreeNodesModel>")
    return lines


def _escape_text(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def tree_id(name: str) -> str:
    """A BehaviorTree ID from a task name (letters, digits and _; not a built-in node name)."""
    tid = re.sub(r"[^A-Za-z0-9_]", "_", name or "MainTree") or "MainTree"
    if not tid[0].isalpha():
        tid = "T_" + tid
    return tid + "_tree" if tid in UNSUPPORTED or tid in ("Sequence", "Fallback", "Parallel", "SubTree") else tid


def _escape_comment(text: str) -> str:
    return text.replace("--", "- -")


def export_xml(task: TaskSpec | NodeSpec, tree_name: Optional[str] = None, subtrees: bool = True) -> str:
    """BehaviorTree.CPP v4 XML of a validated task's tree (see the module table).

    A named ``include:`` becomes ``<SubTree ID=FILE_STEM name=NAME PARAM="value"/>`` and a
    ``<BehaviorTree ID=FILE_STEM>`` definition: the included file's parameters used as a whole
    value become ports (``{PARAM}`` inside, remapped on the SubTree element: ``pose_key="{mug_pose}"``,
    ``max_effort_n="40"``), values built from a parameter (``[0, 0, "${h}"]``) are written out, and
    the definition's other blackboard keys are written ``{@key}`` (an include shares the task's
    blackboard). Includes of one file that differ in such written-out values get one definition
    each (``FILE_STEM_2``...). An include without a name is inlined (a BT.CPP SubTree always
    prefixes its nodes' names), as are all with ``subtrees=False``.

    Raises:
        TreeLoadError: a node with no BT.CPP equivalent, located at its YAML ``FILE:LINE:COL``.
    """
    root = task.tree if isinstance(task, TaskSpec) else task
    name = tree_name or (task.name if isinstance(task, TaskSpec) else "MainTree")
    tid = tree_id(name)
    ex = _Export(subtrees=subtrees, main_id=tid)
    body = _node_xml(root, ex, 2)
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             f'<root BTCPP_format="4" main_tree_to_execute={quoteattr(tid)}>']
    desc = task.description if isinstance(task, TaskSpec) else ""
    bt_attrs = f" ID={quoteattr(tid)}" + (f" _description={quoteattr(desc.strip())}" if desc.strip() else "")
    lines.append(f"  <BehaviorTree{bt_attrs}>")
    lines += body
    lines.append("  </BehaviorTree>")
    for sub_id, file, sub_body in ex.def_list:
        lines.append(f"  <!-- from {_escape_comment(file)} -->")
        lines.append(f"  <BehaviorTree ID={quoteattr(sub_id)}>")
        lines += sub_body
        lines.append("  </BehaviorTree>")
    lines.append("  <!-- Node types of py_trees_manipulation used above (ports: see 'ptm behaviours') -->")
    lines += tree_nodes_model(ex.custom)
    lines.append("</root>")
    return "\n".join(lines) + "\n"


def custom_node_types(xml_text: str) -> dict[str, tuple[str, list[str]]]:
    """``{ID: (category, [port names])}`` from a file's ``<TreeNodesModel>`` (for checks and tests)."""
    root = parse_xml(xml_text)
    out: dict[str, tuple[str, list[str]]] = {}
    for model in (c for c in root.children if c.tag == "TreeNodesModel"):
        for n in model.children:
            out[n.attrib["ID"]] = (n.tag, [p.attrib["name"] for p in n.children])
    return out


# ------------------------------------------------------------------------------------------------
# YAML output and comparison
def node_to_yaml(spec: NodeSpec) -> dict[str, Any]:
    """A validated node back in the YAML form (defaults omitted; poses as position + quaternion)."""
    decl = _declaration(spec.type)
    body: dict[str, Any] = {}
    if spec.name is not None:
        body["name"] = spec.name
    for key, v in spec.params.items():
        p = decl.get(key)
        if p is None or v is None or (not p.required and _same(v, p.default)):
            continue
        if isinstance(v, BlackboardRef):
            body[key] = str(v)
        elif p.kind == "pose" and not isinstance(v, str):
            body[key] = json.loads(value_to_text(v, p))
        else:
            body[key] = _jsonable(v)
    if spec.category == "composite":
        body["children"] = [node_to_yaml(c) for c in spec.children]
    elif spec.category == "decorator":
        body["child"] = node_to_yaml(spec.children[0])
    return {spec.type: body or None}


class _Dumper(yaml.SafeDumper):
    pass


def _repr_dict(dumper: yaml.SafeDumper, data: dict[str, Any]) -> Any:
    nested = any(isinstance(v, (dict, list)) and k in ("children", "child") for k, v in data.items())
    return dumper.represent_mapping("tag:yaml.org,2002:map", data.items(), flow_style=False if nested else None)


_Dumper.add_representer(dict, _repr_dict)


#: sections of a task file that ``task_to_yaml`` copies from the task (besides the tree), in file order
TASK_SECTIONS = ("name", "description", "parameters", "scene", "blackboard", "expect", "variants")


def rebase_urdf_paths(scene: Any, from_dir: str, to_dir: Optional[str]) -> Any:
    """``scene`` with every relative ``urdf:`` path that resolves under ``from_dir`` (the task
    file's folder, searched first by the scene loader) rewritten relative to ``to_dir``, or
    absolute when ``to_dir`` is ``None``; paths found only under ``pybullet_data`` are kept."""
    if isinstance(scene, dict):
        out = {}
        for k, v in scene.items():
            if k == "urdf" and isinstance(v, str) and not os.path.isabs(v) and os.path.isfile(os.path.join(from_dir, v)):
                full = os.path.abspath(os.path.join(from_dir, v))
                v = os.path.relpath(full, to_dir) if to_dir is not None else full
            else:
                v = rebase_urdf_paths(v, from_dir, to_dir)
            out[k] = v
        return out
    if isinstance(scene, list):
        return [rebase_urdf_paths(v, from_dir, to_dir) for v in scene]
    return scene


def task_to_yaml(task: TaskSpec, source_note: str = "", *, scene_file: Optional[str] = None,
                 output_dir: Optional[str] = None) -> str:
    """YAML text of a whole task file: ``name``, ``description``, ``parameters``, ``scene``,
    ``blackboard``, ``expect`` and ``variants`` as the task holds them (after ``--set`` overrides
    and ``${...}`` substitution; absent sections are left out), then the tree.

    For an XML import with a scene (:func:`load_task_from_xml`) this is a complete task file that
    ``ptm run`` accepts; for a tree alone (:func:`load_tree_from_xml`) it is the name, description
    and tree.

    Args:
        task: a validated task.
        source_note: written as a comment on the first line.
        scene_file: the task file the scene came from: relative ``urdf:`` paths found next to it
            are rewritten to resolve from ``output_dir`` (absolute if ``output_dir`` is ``None``,
            e.g. for stdout).
        output_dir: folder of the file the text is written to.
    """
    raw = task.raw if isinstance(task.raw, dict) else {}
    doc: dict[str, Any] = {"name": task.name}
    if task.description:
        doc["description"] = task.description
    for key in TASK_SECTIONS[2:]:
        value = raw.get(key)
        if value is None or (isinstance(value, (dict, list)) and not value):
            continue
        value = _jsonable(value)  # LocDict/LocList/numpy -> builtins for YAML output
        if key == "scene" and scene_file is not None:
            value = rebase_urdf_paths(value, os.path.dirname(os.path.abspath(scene_file)),
                                      None if output_dir is None else os.path.abspath(output_dir))
        doc[key] = value
    doc["tree"] = node_to_yaml(task.tree)
    head = f"# {source_note}\n" if source_note else ""
    return head + yaml.dump(doc, Dumper=_Dumper, sort_keys=False, default_flow_style=None, width=120, allow_unicode=True)


def tree_differences(a: NodeSpec, b: NodeSpec, path: str = "") -> list[str]:
    """Differences between two validated trees (type, category, name, parameters, children); [] if equal.

    Parameters are compared as coerced values (poses with ``np.allclose(atol=1e-9)``).
    """
    here = path + "/" + (a.name or a.type)
    out: list[str] = []
    if (a.type, a.category) != (b.type, b.category):
        return [f"{here}: {a.category} {a.type} vs {b.category} {b.type}"]
    if a.name != b.name:
        out.append(f"{here}: name {a.name!r} vs {b.name!r}")
    for k in sorted(set(a.params) | set(b.params)):
        va, vb = a.params.get(k), b.params.get(k)
        if isinstance(va, BlackboardRef) or isinstance(vb, BlackboardRef):
            same = va == vb
        elif isinstance(va, np.ndarray) or isinstance(vb, np.ndarray):
            same = va is not None and vb is not None and np.allclose(np.asarray(va, float), np.asarray(vb, float), atol=1e-9)
        else:
            same = _same(va, vb)
        if not same:
            out.append(f"{here}: {k} {va!r} vs {vb!r}")
    if len(a.children) != len(b.children):
        out.append(f"{here}: {len(a.children)} vs {len(b.children)} children")
    for ca, cb in zip(a.children, b.children):
        out += tree_differences(ca, cb, here)
    return out


# ------------------------------------------------------------------------------------------------
# checking exported files with BehaviorTree.CPP itself
def btcpp_check(xml_text: str) -> Any:
    """Load ``xml_text`` with BehaviorTree.CPP's own XML parser (the ``behaviortreepy`` package).

    Every node type declared in the file's ``<TreeNodesModel>`` is registered in a
    ``BehaviorTreeFactory`` (Action/Condition/Decorator by its model category) and the tree is
    created with ``create_tree_from_text``: BT.CPP then checks the file structure, node types,
    child counts, BehaviorTree/SubTree IDs and the built-in nodes' ports (names and literal values,
    e.g. ``Timeout msec``, ``Parallel success_count``, ``RunOnce then_skip``).

    behaviortreepy 0.1.x registers Python nodes without ports, so BT.CPP would reject every port
    attribute of our custom nodes; those attributes are first checked here against the model's
    declared ports, with BT.CPP's own rule (a port attribute that is not a declared port is an
    error; names starting with ``_`` and ``name`` are not ports), then removed before BT.CPP sees
    the file.

    Returns:
        the created ``behaviortreepy.Tree``.

    Raises:
        ValueError: an attribute that is not a declared port, or BT.CPP's error text.
        ImportError: behaviortreepy is not installed.
    """
    import xml.etree.ElementTree as ET

    import behaviortreepy as bt

    root = ET.fromstring(xml_text)
    models: dict[str, tuple[str, set[str]]] = {}
    for model in root.findall("TreeNodesModel"):
        for n in model:
            ports = {p.attrib["name"] for p in n if p.tag in ("input_port", "output_port", "inout_port")}
            models[n.attrib["ID"]] = (n.tag, ports)
    for tree in root.findall("BehaviorTree"):
        for el in tree.iter():
            node_id = el.attrib.get("ID") if el.tag in _EXPLICIT else el.tag
            if node_id not in models:
                continue
            for a in list(el.attrib):
                if a in ("name", "ID") or a.startswith("_"):
                    continue
                if a not in models[node_id][1]:
                    raise ValueError(f"a port with name [{a}] is found in the XML (<{el.tag}>) but not in the "
                                     f"<TreeNodesModel> ports of {node_id}")
                del el.attrib[a]
    factory = bt.BehaviorTreeFactory()
    for node_id, (category, _) in models.items():
        register = {"Action": factory.register_simple_action, "Condition": factory.register_simple_condition,
                    "Decorator": factory.register_simple_decorator}.get(category)
        if register is None:
            raise ValueError(f"<TreeNodesModel> category {category!r} of {node_id} cannot be registered")
        register(node_id, lambda *a: bt.NodeStatus.SUCCESS)
    try:
        return factory.create_tree_from_text(ET.tostring(root, encoding="unicode"))
    except RuntimeError as e:
        raise ValueError(str(e)) from None
