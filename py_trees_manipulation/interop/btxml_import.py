"""Importing BehaviorTree.CPP v4 / Groot2 XML (see :mod:`.btxml` for the mapping): the main tree in
the YAML node form with every value located in the XML (``<include>``, ``<SubTree>`` with port
remapping and ``_autoremap``, BT.CPP built-ins mapped to ours), attribute text to parameter values,
and a task from an XML tree plus a task file's scene.

Moved out of :mod:`.btxml` (issue 37 item 6), which re-exports the public names.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any, Optional

from ..behaviors import registry
from ..behaviors.params import Param
from ..located import locyaml
from ..located.errors import Loc, Problem, TreeLoadError, did_you_mean
from ..trees.loader import MAX_NODES, load_task_data
from ..located.locyaml import LocDict, LocList
from ..trees.nodes import COMPOSITES, DECORATORS
from ..trees.spec import TaskSpec
from .btxml_common import (_BTCPP_TO_DECORATOR, _EXPLICIT, _IGNORED_ATTRS, POINTER, PRE_POST_CONDITIONS, UNSUPPORTED,
                           XmlElement, _declaration, _scalar, read_xml)

try:  # py_trees >= 2.5
    from py_trees.parsers.behaviour_tree_xml import _resolve_import_path, is_key
except ImportError:  # pragma: no cover - older py_trees
    is_key = None  # type: ignore[assignment]
    _resolve_import_path = None  # type: ignore[assignment]


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
