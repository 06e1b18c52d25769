"""Exporting a tree to BehaviorTree.CPP v4 / Groot2 XML (see :mod:`.btxml` for the mapping): nodes
and subtrees with their ports, parameter values as attribute text, the ``<TreeNodesModel>`` of our
node types, and reading that model back from a file.

Moved out of :mod:`.btxml` (issue 37 item 6), which re-exports the public names.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, field
from typing import Any, Optional
from xml.sax.saxutils import quoteattr

import numpy as np

from ..behaviors import registry
from ..behaviors.params import BlackboardRef, Param
from ..located.errors import TreeLoadError
from ..trees.nodes import COMPOSITES, DECORATORS
from ..trees.spec import NodeSpec, TaskSpec
from .btxml_common import _DECORATOR_TO_BTCPP, POINTER, UNSUPPORTED, _scalar, parse_xml


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
