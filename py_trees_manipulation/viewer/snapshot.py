"""Tree snapshots: one JSON-serialisable dict per tick, in the py_trees_js field names.

The py_trees_js viewer (splintered-reality/py_trees_js, ``render_tree({tree})``) consumes a JSON
tree with no published schema. We produce a documented **superset** of it, so a snapshot can be fed
to py_trees_js unchanged, to our own page (:mod:`py_trees_manipulation.viewer.server`), and into the
run log (:mod:`py_trees_manipulation.viewer.runlog`, channel ``/tree/snapshot``).

Snapshot (top level)::

    {
      "timestamp": 1.2,            # number: backend clock at the end of the tick, seconds
      "tick": 36,                  # ours: ticks done so far (1 after the first tick)
      "changed": "true",           # py_trees_js: "true"/"false" (string!) - statuses, visited path
                                   #   or blackboard writes differ from the previous snapshot
      "root": "<id>",              # ours: id of the root behaviour
      "behaviours": {"<id>": behaviour, ...},
      "visited_path": ["<id>", ...],   # ids ticked this tick, in the order their ticks ended
                                       #   (children before parents, as py_trees yields them)
      "blackboard": {
        "behaviours": {"<id>": {"<key>": "r" | "w" | "x"}},   # py_trees_js: access per behaviour
        "data": {"<key>": "<value as short text>"},           # py_trees_js: value strings
        "values": {"<key>": <JSON value>},                    # ours: the value itself (see below)
        "clients": {"<key>": {"read": [names], "write": [names], "exclusive": [names]}}  # ours
      },
      "activity": ["<html string>", ...],   # py_trees_js: blackboard activity since the last snapshot
      "activity_items": [                   # ours: the same, structured
        {"key", "client_name", "client_id", "activity_type", "previous_value", "current_value"}
      ]
    }

Behaviour::

    {
      "id": "<uuid string>", "name": "Grasp",
      "status": "SUCCESS" | "FAILURE" | "RUNNING" | "INVALID",
      "colour": "#FFA500",          # by kind: Sequence #FFA500, Selector #00FFFF, Parallel #FFFF00,
                                    #   Decorator #DDDDDD, Behaviour #555555 (the py_trees_ros colours)
      "children": ["<id>", ...],
      "details": "tcp 0.034 m from target",   # the feedback message
      "data": {"Class": "py_trees.composites.Sequence", "Type": "Sequence",
               "Feedback": "...", "Parameters": {...}, "Blackboard": ["r: /grasp_pose", ...]},
      # ours (also readable by py_trees_js, which ignores unknown fields):
      "type": "Sequence" | "Selector" | "Parallel" | "Decorator" | "Behaviour",
      "class_name": "py_trees.composites.Sequence",
      "parent": "<id>" | null, "visited": true, "is_active": true,
      "parameters": {...},            # constructor-level parameters, JSON values
      "units": {"speed_mps": "m/s"}   # the declared unit of each parameter that has one
    }

Record layout (:meth:`SnapshotBuilder.build_record_json`, the run log's ``/tree/snapshot``): the same
content in a shape Foxglove's JSON-schema parser reads (every object has declared ``properties``,
no maps keyed by id, no ``null`` unions; :data:`RECORD_SCHEMA`)::

    {"timestamp", "tick", "changed", "root", "visited_path",
     "behaviours": [{"id", "name", "status", "colour", "children", "details", "type", "class_name",
                     "parent" ("" for the root), "visited", "is_active",
                     "parameters": [{"name", "value" (JSON text), "unit", "frame"}],
                     "blackboard": [{"key", "access" ("r" | "w" | "x")}]}, ...],   # tree order
     "blackboard": {"entries": [{"key", "value" (JSON text), "text", "read", "write",
                                 "exclusive"}, ...]},                                # key order
     "activity": [...],
     "activity_items": [{"key", "client_name", "client_id", "activity_type",
                         "previous_value" (JSON text), "current_value" (JSON text)}]}

:func:`snapshot_from_record` turns a record back into the snapshot above (``data`` rebuilt).

Parameters: a behaviour that has a ``parameters`` or ``params`` mapping attribute (the validated
parameters of :class:`py_trees_manipulation.behaviors.base.ManipulationBehaviour`) reports it; otherwise its public instance attributes with simple values (numbers, strings, bools,
short numeric lists, poses), minus py_trees' own bookkeeping. Composites report ``memory``;
Parallel reports ``policy`` and ``synchronise``. Units and frames come from the parameter
declarations (:class:`~py_trees_manipulation.behaviors.params.Param`): the behaviour class's
``all_params()``, or the composite/decorator table of the node's ``spec.type``.

JSON values (:func:`to_jsonable`): numpy arrays become lists, numpy scalars numbers, a ``(4, 4)``
homogeneous transform becomes ``{"position": [x, y, z], "orientation": [w, x, y, z]}``
(:func:`py_trees_manipulation.geometry.poses.pose_to_spec`), enums their name, dataclasses dicts,
NaN and infinities ``null`` (JSON has neither), anything else its ``repr`` (cut at 200 characters).

The activity stream: :class:`SnapshotBuilder` enables the py_trees blackboard activity stream and,
as py_trees_ros does, clears it after reading each tick's items, so the stream never reaches its
size limit (py_trees' ``ActivityStream.push`` then drops the newest item instead of the oldest).
Several observers of one tree share one builder (:func:`shared_builder`), which builds each tick's
snapshot once. :meth:`SnapshotBuilder.build_json` gives the same snapshot as compact JSON bytes,
assembled from the cached JSON of every behaviour (same status, feedback and visit) and blackboard
value (same immutable object, or an ndarray with the same bytes) that did not change since the
previous tick: the run log and the live viewer use it, so a quiet tick costs little.
"""

from __future__ import annotations

import dataclasses
import enum
import html
import json
import math
import uuid
import weakref
from typing import Any, Callable, Mapping, Optional

import numpy as np
import py_trees
from py_trees.blackboard import Blackboard

from py_trees_manipulation.geometry.poses import pose_to_spec

#: Node fill colours by kind, as the py_trees_ros viewer backend uses them.
COLOURS = {
    "Sequence": "#FFA500",
    "Selector": "#00FFFF",
    "Parallel": "#FFFF00",
    "Decorator": "#DDDDDD",
    "Behaviour": "#555555",
}

_MAX_REPR = 200
_MAX_ARRAY = 4096
_MAX_TEXT = 120
_EYE3 = np.eye(3)

# py_trees bookkeeping attributes never reported as parameters.
_INTERNAL_ATTRS = frozenset(
    {
        "name", "status", "id", "parent", "children", "feedback_message", "blackboards", "logger",
        "iterator", "qualified_name", "blackbox_level", "current_child", "decorated", "blackboard",
        "policy", "memory", "parameters", "params",
    }
)


def to_jsonable(value: Any, _depth: int = 0) -> Any:
    """A JSON-serialisable copy of ``value`` (see the module docstring for the rules).

    Never raises: anything unknown becomes its (shortened) ``repr``.
    """
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, np.generic):
        return to_jsonable(value.item(), _depth)
    if isinstance(value, enum.Enum):
        return value.name
    if _depth > 8:
        return _short_repr(value)
    if isinstance(value, np.ndarray):
        if value.shape == (4, 4) and np.issubdtype(value.dtype, np.number) and _is_transform(value):
            return pose_to_spec(value)
        if value.size > _MAX_ARRAY:
            return f"<array shape {value.shape} dtype {value.dtype}>"
        if np.issubdtype(value.dtype, np.floating):
            arr = value.astype(np.float64)
            if not np.all(np.isfinite(arr)):
                return [to_jsonable(v, _depth + 1) for v in arr.tolist()] if arr.ndim == 1 else \
                    to_jsonable(arr.tolist(), _depth + 1)
            return arr.tolist()
        return to_jsonable(value.tolist(), _depth + 1)
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v, _depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        seq = list(value)
        if len(seq) > _MAX_ARRAY:
            return f"<{type(value).__name__} of {len(seq)} items>"
        if len(seq) == 4 and all(isinstance(r, (list, tuple)) and len(r) == 4 for r in seq):
            try:
                arr = np.asarray(seq, dtype=np.float64)
                if _is_transform(arr):
                    return pose_to_spec(arr)
            except (TypeError, ValueError):
                pass
        return [to_jsonable(v, _depth + 1) for v in seq]
    if isinstance(value, uuid.UUID):
        return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        try:
            return {f.name: to_jsonable(getattr(value, f.name), _depth + 1) for f in dataclasses.fields(value)}
        except Exception:  # noqa: BLE001 - a broken dataclass must not break a snapshot
            return _short_repr(value)
    return _short_repr(value)


def _is_transform(a: np.ndarray) -> bool:
    """True for a finite (4, 4) with last row (0, 0, 0, 1) and an orthonormal rotation block."""
    last = a[3]
    if last[0] != 0.0 or last[1] != 0.0 or last[2] != 0.0 or last[3] != 1.0:
        return False
    r = a[:3, :3]
    err = r @ r.T - _EYE3
    return bool(np.isfinite(a).all() and float(np.abs(err).max()) < 1e-6)


def _short_repr(value: Any, limit: int = _MAX_REPR) -> str:
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def value_text(value: Any, limit: int = _MAX_TEXT) -> str:
    """Short one-line text of a value, as shown in the py_trees_js ``blackboard.data`` map."""
    return _text_of_jsonable(to_jsonable(value), limit)


def _text_of_jsonable(jv: Any, limit: int = _MAX_TEXT) -> str:
    text = jv if isinstance(jv, str) else json.dumps(jv, separators=(",", ":"))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def behaviour_type(behaviour: py_trees.behaviour.Behaviour) -> str:
    """``"Sequence"``, ``"Selector"``, ``"Parallel"``, ``"Decorator"`` or ``"Behaviour"``."""
    if isinstance(behaviour, py_trees.composites.Sequence):
        return "Sequence"
    if isinstance(behaviour, py_trees.composites.Selector):
        return "Selector"
    if isinstance(behaviour, py_trees.composites.Parallel):
        return "Parallel"
    if isinstance(behaviour, py_trees.decorators.Decorator):
        return "Decorator"
    return "Behaviour"


def behaviour_parameters(behaviour: py_trees.behaviour.Behaviour) -> dict[str, Any]:
    """JSON-able parameters of one behaviour (rules in the module docstring)."""
    params: dict[str, Any] = {}
    explicit = getattr(behaviour, "parameters", None)
    if not isinstance(explicit, Mapping):
        explicit = getattr(behaviour, "params", None)  # ManipulationBehaviour's validated parameters
    if isinstance(explicit, Mapping):
        params.update({str(k): to_jsonable(v) for k, v in explicit.items()})
    else:
        for key, val in vars(behaviour).items():
            if key.startswith("_") or key in _INTERNAL_ATTRS:
                continue
            if val is None or isinstance(val, (bool, int, float, str, enum.Enum, np.generic)):
                params[key] = to_jsonable(val)
            elif isinstance(val, np.ndarray) and val.size <= 16:
                params[key] = to_jsonable(val)
            elif isinstance(val, (list, tuple)) and len(val) <= 16 and all(
                isinstance(v, (int, float, str, bool)) for v in val
            ):
                params[key] = to_jsonable(val)
    if isinstance(behaviour, py_trees.composites.Composite) and hasattr(behaviour, "memory"):
        params["memory"] = bool(behaviour.memory)
    if isinstance(behaviour, py_trees.composites.Parallel):
        policy = behaviour.policy
        params["policy"] = type(policy).__name__
        params["synchronise"] = bool(getattr(policy, "synchronise", False))
        if getattr(policy, "children", None):
            params["policy_children"] = [c.name for c in policy.children]
    return params


def behaviour_units(behaviour: py_trees.behaviour.Behaviour) -> dict[str, tuple[str, str]]:
    """``{parameter: (unit, frame)}`` of the parameters whose declaration has a unit or a frame
    (``""`` where it has none): from the class's ``all_params()`` (registered behaviours) or the
    composite/decorator table of the node's ``spec.type``; ``{}`` for anything else."""
    decl: Any = None
    all_params = getattr(type(behaviour), "all_params", None)
    if callable(all_params):
        try:
            decl = all_params()
        except Exception:  # noqa: BLE001 - a snapshot never fails on a broken declaration
            decl = None
    if not isinstance(decl, Mapping):
        spec_type = getattr(getattr(behaviour, "spec", None), "type", None)
        if spec_type is not None:
            from py_trees_manipulation.trees.nodes import COMPOSITES, DECORATORS

            decl = COMPOSITES.get(spec_type) or DECORATORS.get(spec_type)
    out: dict[str, tuple[str, str]] = {}
    for key, p in (decl or {}).items():
        unit, frame = getattr(p, "unit", None) or "", getattr(p, "frame", None) or ""
        if unit or frame:
            out[str(key)] = (str(unit), str(frame))
    return out


def _preorder(root: py_trees.behaviour.Behaviour) -> list[py_trees.behaviour.Behaviour]:
    """Behaviours top-down, parents before children, children left to right."""
    out, stack = [], [root]
    while stack:
        b = stack.pop()
        out.append(b)
        stack.extend(reversed(b.children))
    return out


def _access_of(client: py_trees.blackboard.Client) -> dict[str, str]:
    """{storage key: "r"/"w"/"x"} for one client (write wins over read, exclusive over write)."""
    remap = client.remappings
    acc: dict[str, str] = {}
    for key in client.read:
        acc[remap.get(key, key)] = "r"
    for key in client.write:
        acc[remap.get(key, key)] = "w"
    for key in client.exclusive:
        acc[remap.get(key, key)] = "x"
    return acc


def _activity_html(item: Any) -> str:
    kind = str(item.activity_type)
    parts = [
        f'<span class="activity-type {html.escape(kind.lower())}">{html.escape(kind)}</span>',
        f'<span class="activity-key">{html.escape(str(item.key))}</span>',
        f'<span class="activity-client">{html.escape(str(item.client_name))}</span>',
    ]
    if kind in ("WRITE", "INITIALISED"):
        parts.append(f'<span class="activity-value">{html.escape(value_text(item.current_value))}</span>')
    return " ".join(parts)


class SnapshotBuilder:
    """Builds py_trees_js-style snapshots of one tree, tick after tick.

    Args:
        tree: a ``py_trees.trees.BehaviourTree`` (preferred: a ``SnapshotVisitor`` is added to its
            visitors, or an existing one reused, to record the visited path) or a bare root
            behaviour (then ``visited_path`` lists every non-INVALID behaviour: an approximation).
        activity: enable and consume the blackboard activity stream (see the module docstring).

    ``build()`` is cheap to call several times per tick: the result for a given tick is cached.
    """

    def __init__(self, tree: Any, activity: bool = True) -> None:
        if isinstance(tree, py_trees.trees.BehaviourTree):
            self.tree: Optional[py_trees.trees.BehaviourTree] = tree
            self.root = tree.root
            found = [v for v in tree.visitors if type(v) is py_trees.visitors.SnapshotVisitor]
            if found:
                self.visitor: Optional[py_trees.visitors.SnapshotVisitor] = found[0]
            else:
                self.visitor = py_trees.visitors.SnapshotVisitor()
                tree.visitors.append(self.visitor)
        else:
            self.tree = None
            self.root = tree
            self.visitor = None
        self.activity = activity
        if activity:
            Blackboard.enable_activity_stream(maximum_size=10000)
        self._static: dict[uuid.UUID, tuple[tuple, dict[str, Any]]] = {}
        self._last_key: Optional[tuple] = None
        self._last: Optional[dict[str, Any]] = None
        self._last_statuses: dict[str, str] = {}
        self._last_visited: list[str] = []
        # caches behind build_json(): per behaviour (static part, status, feedback, visited, entry,
        # JSON fragment); per blackboard key (value, fingerprint, (JSON value, text, their JSON))
        self._dynamic: dict[str, tuple] = {}
        self._values: dict[str, tuple] = {}
        self._key_json: dict[str, bytes] = {}
        self._shape: Optional[tuple] = None
        self._statics: list[dict[str, Any]] = []
        self._id_text: dict[uuid.UUID, str] = {}
        self._owners_key: Optional[tuple] = None
        self._owners_map: dict[uuid.UUID, py_trees.behaviour.Behaviour] = {}
        self._last_json: Optional[bytes] = None
        self._last_fragments: list[bytes] = []
        self._last_values_json: list[tuple[bytes, bytes, bytes]] = []
        # caches behind build_record_json(): per behaviour (entry, fragment); per key (value JSON, fragment)
        self._record_behaviours: dict[str, tuple[dict[str, Any], bytes]] = {}
        self._record_values: dict[bytes, tuple[bytes, bytes]] = {}
        self._last_record: Optional[bytes] = None

    def _static_part(self, b: py_trees.behaviour.Behaviour) -> dict[str, Any]:
        child_ids = tuple(c.id for c in b.children)
        shape_key = (child_ids, b.parent.id if b.parent is not None else None)
        cached = self._static.get(b.id)
        if cached is not None and cached[0] == shape_key:
            return cached[1]
        kind = behaviour_type(b)
        cls = type(b)
        class_name = f"{cls.__module__}.{cls.__qualname__}"
        access: dict[str, str] = {}
        for client in b.blackboards:
            access.update(_access_of(client))
        params = behaviour_parameters(b)
        units = behaviour_units(b)
        static = {
            "id": str(b.id),
            "name": b.name,
            "type": kind,
            "class_name": class_name,
            "colour": COLOURS[kind],
            "children": [str(c) for c in child_ids],
            "parent": str(b.parent.id) if b.parent is not None else None,
            "parameters": params,
            "units": {k: u for k, (u, _) in units.items() if u and k in params},
            "access": access,
            # derived once: what every snapshot of this behaviour repeats
            "access_copy": dict(access),
            "access_lines": [f"{a}: {k}" for k, a in sorted(access.items())],
            "key_json": _json_bytes(str(b.id)),
            # the record layout's static fields (build_record_json)
            "record_static": _json_bytes({
                "id": str(b.id), "name": b.name, "colour": COLOURS[kind],
                "children": [str(c) for c in child_ids],
                "type": kind, "class_name": class_name,
                "parent": str(b.parent.id) if b.parent is not None else "",
                "parameters": [{"name": k, "value": _json_text(v), "unit": units.get(k, ("", ""))[0],
                                "frame": units.get(k, ("", ""))[1]} for k, v in params.items()],
                "blackboard": [{"key": k, "access": a} for k, a in sorted(access.items())],
            })[:-1],
        }
        self._static[b.id] = (shape_key, static)
        return static

    def build(self, tick: int = 0, timestamp: float = 0.0) -> dict[str, Any]:
        """The snapshot of the tree as it is now (after tick number ``tick``).

        Args:
            tick: ticks done so far; also the cache key with ``timestamp``.
            timestamp: backend clock at the end of the tick, seconds.

        Returns:
            A JSON-serialisable dict (module docstring). Repeated calls with the same
            ``(tick, timestamp)`` return the same object. Treat it as read-only: parts that did not
            change (a behaviour with the same status, feedback and visit, an unchanged blackboard
            value) are the same objects in consecutive snapshots.
        """
        key = (tick, timestamp)
        if self._last is not None and key == self._last_key:
            return self._last
        root = self.root if self.tree is None else self.tree.root
        nodes = _preorder(root)
        # the static parts, recomputed only when the tree's shape changed (node, parent pairs)
        shape = tuple([(id(b), id(b.parent)) for b in nodes])
        if shape != self._shape:
            self._shape = shape
            self._statics = [self._static_part(b) for b in nodes]
            self._id_text = {b.id: st["id"] for b, st in zip(nodes, self._statics, strict=True)}
        id_text = self._id_text
        if self.visitor is not None:
            visited_ids = [id_text.get(i) or str(i) for i in self.visitor.visited]
        else:
            visited_ids = [st["id"] for b, st in zip(nodes, self._statics, strict=True) if b.status != py_trees.common.Status.INVALID]
        visited = set(visited_ids)
        behaviours: dict[str, Any] = {}
        fragments: list[bytes] = []
        bb_behaviours: dict[str, dict[str, str]] = {}
        statuses: dict[str, str] = {}
        dyn_cache = self._dynamic
        for b, st in zip(nodes, self._statics, strict=True):
            bid = st["id"]
            status = b.status.value
            statuses[bid] = status
            feedback = b.feedback_message or ""
            is_visited = bid in visited
            if st["access"]:
                bb_behaviours[bid] = st["access_copy"]
            cached = dyn_cache.get(bid)
            if (cached is not None and cached[0] is st and cached[1] == status and cached[2] == feedback
                    and cached[3] == is_visited):
                behaviours[bid] = cached[4]
                fragments.append(cached[5])
                continue
            data: dict[str, Any] = {"Class": st["class_name"], "Type": st["type"], "Feedback": feedback}
            if st["parameters"]:
                data["Parameters"] = st["parameters"]
            if st["access"]:
                data["Blackboard"] = st["access_lines"]
            entry = {
                "id": bid,
                "name": st["name"],
                "status": status,
                "colour": st["colour"],
                "children": st["children"],
                "details": feedback,
                "data": data,
                "type": st["type"],
                "class_name": st["class_name"],
                "parent": st["parent"],
                "visited": is_visited,
                "is_active": status != "INVALID",
                "parameters": st["parameters"],
                "units": st["units"],
            }
            frag = st["key_json"] + b":" + _json_bytes(entry)
            dyn_cache[bid] = (st, status, feedback, is_visited, entry, frag)
            behaviours[bid] = entry
            fragments.append(frag)
        blackboard, activity_items = self._blackboard(nodes, bb_behaviours)
        changed = (
            statuses != self._last_statuses
            or visited_ids != self._last_visited
            or (self.visitor is not None and self.visitor.changed)
            or any(i["activity_type"] in ("WRITE", "INITIALISED", "UNSET") for i in activity_items)
        )
        snap = {
            "timestamp": float(timestamp),
            "tick": int(tick),
            "changed": "true" if changed else "false",
            "root": id_text.get(root.id) or str(root.id),
            "behaviours": behaviours,
            "visited_path": visited_ids,
            "blackboard": blackboard,
            "activity": [i.pop("_html") for i in activity_items],
            "activity_items": activity_items,
        }
        self._last_statuses = statuses
        self._last_visited = visited_ids
        self._last_key, self._last = key, snap
        self._last_json = None
        self._last_record = None
        self._last_fragments = fragments
        return snap

    def build_json(self, tick: int = 0, timestamp: float = 0.0) -> bytes:
        """``build(tick, timestamp)`` as compact UTF-8 JSON (``separators=(",", ":")``, no NaN).

        Equal to ``json.dumps(build(...), separators=(",", ":"))`` once parsed, but made from the
        cached JSON of every behaviour and blackboard value that did not change since the last
        tick, so a quiet tick costs a fraction of a full encoding. Cached per tick like
        :meth:`build`.

        Raises:
            ValueError: ``timestamp`` is not finite.
        """
        return self._encoded("_last_json", self._encode_json, tick, timestamp)

    def _encoded(self, attr: str, encode: Callable[[dict[str, Any]], bytes], tick: int, timestamp: float) -> bytes:
        """``encode(build(tick, timestamp))``, kept in ``attr`` until :meth:`build` makes a new snapshot."""
        snap = self.build(tick=tick, timestamp=timestamp)
        out = getattr(self, attr)
        if out is None:
            out = encode(snap)
            setattr(self, attr, out)
        return out

    def _encode_json(self, snap: dict[str, Any]) -> bytes:
        bb = snap["blackboard"]
        values_json = self._last_values_json
        parts = [
            *_json_head(snap),
            b',"behaviours":{', b",".join(self._last_fragments),
            b'},"visited_path":', _json_bytes(snap["visited_path"]),
            b',"blackboard":{"behaviours":', _json_bytes(bb["behaviours"]),
            b',"data":{', b",".join(kj + b":" + tj for kj, _, tj in values_json),
            b'},"values":{', b",".join(kj + b":" + vj for kj, vj, _ in values_json),
            b'},"clients":', _json_bytes(bb["clients"]),
            b'},"activity":', _json_bytes(snap["activity"]),
            b',"activity_items":', _json_bytes(snap["activity_items"]), b"}",
        ]
        return b"".join(parts)

    def build_record_json(self, tick: int = 0, timestamp: float = 0.0) -> bytes:
        """``build(tick, timestamp)`` in the record layout (module docstring), as compact UTF-8 JSON.

        The layout Foxglove's JSON-schema parser reads (the run log's ``/tree/snapshot``);
        :func:`snapshot_from_record` gives the snapshot back. Assembled, like :meth:`build_json`,
        from cached fragments of what did not change since the last tick; cached per tick.

        Raises:
            ValueError: ``timestamp`` is not finite.
        """
        return self._encoded("_last_record", self._encode_record, tick, timestamp)

    def _encode_record(self, snap: dict[str, Any]) -> bytes:
        behaviours = snap["behaviours"]
        cache = self._record_behaviours
        frags = []
        for st in self._statics:
            bid = st["id"]
            entry = behaviours[bid]
            hit = cache.get(bid)
            if hit is not None and hit[0] is entry:
                frags.append(hit[1])
                continue
            frag = b"".join((st["record_static"], b',"status":"', entry["status"].encode(), b'","details":',
                             _json_bytes(entry["details"]), b',"visited":',
                             b"true" if entry["visited"] else b"false", b',"is_active":',
                             b"true" if entry["is_active"] else b"false", b"}"))
            cache[bid] = (entry, frag)
            frags.append(frag)
        if len(cache) > 2 * len(self._statics) + 16:  # behaviours removed from the tree
            keep = {st["id"] for st in self._statics}
            for gone in [k for k in cache if k not in keep]:
                del cache[gone]
        clients = snap["blackboard"]["clients"]
        values = self._record_values
        entries = []
        for (kj, vj, tj), c in zip(self._last_values_json, clients.values()):  # both in key order
            hit = values.get(kj)
            if hit is None or hit[0] is not vj:
                hit = (vj, b'{"key":' + kj + b',"value":' + _json_bytes(vj.decode("utf-8")) + b',"text":' + tj)
                values[kj] = hit
            entries.append(hit[1] + b',"read":' + _json_bytes(c.get("read", [])) + b',"write":'
                           + _json_bytes(c.get("write", [])) + b',"exclusive":' + _json_bytes(c.get("exclusive", []))
                           + b"}")
        if len(values) > 2 * len(entries) + 16:
            keep_keys = {kj for kj, _, _ in self._last_values_json}
            for gone in [k for k in values if k not in keep_keys]:
                del values[gone]
        items = [dict(i, previous_value=_json_text(i["previous_value"]), current_value=_json_text(i["current_value"]))
                 for i in snap["activity_items"]]
        return b"".join([
            *_json_head(snap),
            b',"visited_path":', _json_bytes(snap["visited_path"]),
            b',"behaviours":[', b",".join(frags),
            b'],"blackboard":{"entries":[', b",".join(entries),
            b']},"activity":', _json_bytes(snap["activity"]),
            b',"activity_items":', _json_bytes(items), b"}",
        ])

    def _value_entry(self, key: str, value: Any) -> tuple[Any, str, bytes, bytes]:
        """``(JSON value, short text, JSON bytes of both)`` of one blackboard value, cached while the
        value is the same immutable object or an ndarray with the same bytes."""
        fp: Any
        if value is None or isinstance(value, (bool, int, float, str, enum.Enum)):
            fp = value
        elif isinstance(value, np.ndarray) and value.size <= _MAX_ARRAY:
            fp = (value.shape, value.dtype.str, value.tobytes())
        else:
            fp = _NO_CACHE
        cached = self._values.get(key)
        if fp is not _NO_CACHE and cached is not None and cached[0] is value and cached[1] == fp:
            return cached[2]
        if (fp is not _NO_CACHE and cached is not None and type(cached[0]) is np.ndarray
                and type(value) is np.ndarray and cached[1] == fp):
            self._values[key] = (value, fp, cached[2])  # a new array with the same content
            return cached[2]
        jv = to_jsonable(value)
        text = _text_of_jsonable(jv)
        entry = (jv, text, _json_bytes(jv), _json_bytes(text))
        if fp is not _NO_CACHE:
            self._values[key] = (value, fp, entry)
        return entry

    def _blackboard(
        self, nodes: list[py_trees.behaviour.Behaviour], bb_behaviours: dict[str, dict[str, str]]
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        owners = self._owners(nodes)

        def who(ids: set[uuid.UUID]) -> list[str]:
            names = {owners[i].name if i in owners else Blackboard.clients.get(i, str(i)) for i in ids}
            return sorted(names)

        storage, metadata = Blackboard.storage, Blackboard.metadata
        keys = sorted(set(storage) | set(metadata))
        data: dict[str, str] = {}
        values: dict[str, Any] = {}
        clients: dict[str, dict[str, list[str]]] = {}
        values_json: list[tuple[bytes, bytes, bytes]] = []
        key_json = self._key_json
        for key in keys:
            kj = key_json.get(key)
            if kj is None:
                kj = key_json[key] = _json_bytes(key)
            if key in storage:
                jv, text, vj, tj = self._value_entry(key, storage[key])
            else:
                jv, text, vj, tj = None, "-", b"null", b'"-"'
            values[key] = jv
            data[key] = text
            values_json.append((kj, vj, tj))
            meta = metadata.get(key)
            if meta is not None:
                clients[key] = {"read": who(meta.read), "write": who(meta.write), "exclusive": who(meta.exclusive)}
            else:
                clients[key] = {"read": [], "write": [], "exclusive": []}
        for gone in set(self._values) - set(storage):
            del self._values[gone]
        self._last_values_json = values_json
        items: list[dict[str, Any]] = []
        stream = Blackboard.activity_stream
        if self.activity and stream is not None:
            for it in stream.data:
                items.append(
                    {
                        "key": str(it.key),
                        "client_name": str(it.client_name),
                        "client_id": str(it.client_id),
                        "activity_type": str(it.activity_type),
                        "previous_value": to_jsonable(it.previous_value),
                        "current_value": to_jsonable(it.current_value),
                        "_html": _activity_html(it),
                    }
                )
            stream.clear()
        return {"behaviours": bb_behaviours, "data": data, "values": values, "clients": clients}, items

    def _owners(self, nodes: list[py_trees.behaviour.Behaviour]) -> dict[uuid.UUID, py_trees.behaviour.Behaviour]:
        """Blackboard client id -> behaviour, cached while the tree and its clients stay the same."""
        key = tuple((id(b), len(b.blackboards)) for b in nodes)
        if key != self._owners_key:
            self._owners_key = key
            self._owners_map = {client.id(): b for b in nodes for client in b.blackboards}
        return self._owners_map


_NO_CACHE = object()


_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=False)


def _json_bytes(obj: Any) -> bytes:
    """Compact strict JSON (``allow_nan=False``), UTF-8 (one shared encoder: ``json.dumps`` with
    options builds a new one per call)."""
    return _ENCODER.encode(obj).encode("utf-8")


def _json_head(snap: Mapping[str, Any]) -> list[bytes]:
    """The start of a snapshot's compact JSON in both layouts: ``{"timestamp":...,"tick":...,
    "changed":"...","root":...`` (the caller goes on from there)."""
    return [b'{"timestamp":', _json_bytes(snap["timestamp"]), b',"tick":', b"%d" % snap["tick"],
            b',"changed":"', snap["changed"].encode(), b'","root":', _json_bytes(snap["root"])]


def _json_text(value: Any) -> str:
    """A JSON value as compact JSON text (the record layout's ``value`` strings)."""
    return _ENCODER.encode(value)


def is_record(snapshot: Mapping[str, Any]) -> bool:
    """True for a snapshot in the record layout (``behaviours`` is a list)."""
    return isinstance(snapshot.get("behaviours"), list)


def _loads_or_text(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def snapshot_from_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """The snapshot (module docstring, keyed by id, with the py_trees_js ``data``) of a record
    (:meth:`SnapshotBuilder.build_record_json`, parsed). A snapshot already keyed by id (run logs
    of format 1) is returned unchanged."""
    if not is_record(record):
        return dict(record)
    behaviours: dict[str, Any] = {}
    access_of: dict[str, dict[str, str]] = {}
    for b in record.get("behaviours", []):
        params = {p["name"]: _loads_or_text(p.get("value")) for p in b.get("parameters", [])}
        units = {p["name"]: p["unit"] for p in b.get("parameters", []) if p.get("unit")}
        access = {a["key"]: a["access"] for a in b.get("blackboard", [])}
        data: dict[str, Any] = {"Class": b.get("class_name", ""), "Type": b.get("type", "Behaviour"),
                                "Feedback": b.get("details", "")}
        if params:
            data["Parameters"] = params
        if access:
            data["Blackboard"] = [f"{a}: {k}" for k, a in sorted(access.items())]
            access_of[b["id"]] = access
        behaviours[b["id"]] = {
            "id": b["id"], "name": b.get("name", ""), "status": b.get("status", "INVALID"),
            "colour": b.get("colour", COLOURS["Behaviour"]), "children": list(b.get("children", [])),
            "details": b.get("details", ""), "data": data, "type": b.get("type", "Behaviour"),
            "class_name": b.get("class_name", ""), "parent": b.get("parent") or None,
            "visited": bool(b.get("visited", False)), "is_active": bool(b.get("is_active", False)),
            "parameters": params, "units": units,
        }
    bb = record.get("blackboard") or {}
    entries = bb.get("entries", [])
    blackboard = {
        "behaviours": access_of,
        "data": {e["key"]: e.get("text", "") for e in entries},
        "values": {e["key"]: _loads_or_text(e.get("value")) for e in entries},
        "clients": {e["key"]: {"read": list(e.get("read", [])), "write": list(e.get("write", [])),
                               "exclusive": list(e.get("exclusive", []))} for e in entries},
    }
    items = [dict(i, previous_value=_loads_or_text(i.get("previous_value")),
                  current_value=_loads_or_text(i.get("current_value"))) for i in record.get("activity_items", [])]
    return {
        "timestamp": record.get("timestamp", 0.0), "tick": record.get("tick", 0),
        "changed": record.get("changed", "true"), "root": record.get("root", ""),
        "behaviours": behaviours, "visited_path": list(record.get("visited_path", [])),
        "blackboard": blackboard, "activity": list(record.get("activity", [])), "activity_items": items,
    }


_BUILDERS: "weakref.WeakKeyDictionary[Any, SnapshotBuilder]" = weakref.WeakKeyDictionary()


def shared_builder(tree: Any) -> SnapshotBuilder:
    """The one :class:`SnapshotBuilder` of ``tree`` (created on first use), shared by observers."""
    builder = _BUILDERS.get(tree)
    if builder is None:
        builder = SnapshotBuilder(tree)
        _BUILDERS[tree] = builder
    return builder


def snapshot(tree: Any, tick: int = 0, timestamp: float = 0.0) -> dict[str, Any]:
    """Snapshot of ``tree`` now, through its shared builder (see :class:`SnapshotBuilder`)."""
    return shared_builder(tree).build(tick=tick, timestamp=timestamp)
