"""JSON Schema (draft 2020-12) for task files, generated from the behaviour registry.

The same declarations the loader validates with (:class:`~py_trees_manipulation.behaviors.params.Param`
tables of the registered behaviours, :data:`~py_trees_manipulation.trees.nodes.COMPOSITES`,
:data:`~py_trees_manipulation.trees.nodes.DECORATORS`, the scene key table
:data:`~py_trees_manipulation.scene.spec.SCENE_KEYS`) produce the schema, so an editor completes and
checks exactly what ``ptm validate`` accepts: node types, parameter names, types, units, ranges,
choices, defaults and docs.

Value rules (mirroring :meth:`Param.coerce`):
  - ``"{key}"`` (a blackboard reference) is allowed where the parameter has ``blackboard=True``;
  - a number with a unit (``"10 cm"``, ``"5 deg"``) is allowed for a float that has a unit, but
    only with a unit of the same dimension (``"5 N"`` for a speed is rejected);
  - any string holding a ``${name}`` substitution is allowed wherever a value is (the value is
    only known after substitution).

What the schema cannot check (the loader does, with ``FILE:LINE``): ranges of values given with a
unit or through ``${...}``; that ``${name}`` is declared; include files (existence, their
parameters, circular includes); unique node names; ``Parallel.selected`` naming real children; YAML
duplicate keys, tabs and unsafe tags (a YAML parser removes them before a schema sees the data);
cross-field rules such as "exactly one of ``target`` and ``delta``".
"""

from __future__ import annotations

import json
import re
from typing import Any, Optional

from ..behaviors import registry
from ..behaviors.params import UNITS, Param
from ..trees.loader import INCLUDE_KEYS, TOP_KEYS
from ..located.locyaml import to_plain
from ..trees.nodes import COMPOSITE_DOCS, COMPOSITES, DECORATOR_DOCS, DECORATORS

SCHEMA_ID = "https://py-trees-manipulation.invalid/schemas/task.schema.json"
DIALECT = "https://json-schema.org/draft/2020-12/schema"

_NUMBER_RE = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
#: a string holding a ``${name}`` file-parameter substitution (anywhere in it)
SUBST_PATTERN = r"\$\{[A-Za-z_][A-Za-z0-9_]*\}"
#: a ``"{key}"`` blackboard reference (the key may itself come from a ``${...}`` substitution)
BB_REF_PATTERN = r"^\{(?:[A-Za-z_/.\-]|\$\{[A-Za-z_][A-Za-z0-9_]*\})(?:[A-Za-z0-9_/.\-]|\$\{[A-Za-z_][A-Za-z0-9_]*\})*\}$"
KEY_NAME_PATTERN = r"^\{?/?[A-Za-z_][A-Za-z0-9_/.\-]*\}?$"


def quantity_pattern(unit: str) -> str:
    """Regex for ``"<number> <unit>"`` with any unit of ``unit``'s dimension (see ``params.UNITS``)."""
    dim = UNITS[unit][0]
    same = sorted((u for u, (d, _) in UNITS.items() if d == dim), key=len, reverse=True)
    return rf"^\s*{_NUMBER_RE}\s*(?:{'|'.join(re.escape(u) for u in same)})\s*$"


def _requires(*keys: str) -> dict[str, Any]:
    """A subschema "these keys are present" that ajv's strict mode accepts (strictTypes wants the
    object type beside ``required``, strictRequired the keys declared beside it)."""
    return {"type": "object", "properties": {k: True for k in keys}, "required": list(keys)}


def _subst() -> dict[str, Any]:
    return {"$ref": "#/$defs/substitution"}


def _number(p: Param, integer: bool = False) -> dict[str, Any]:
    s: dict[str, Any] = {"type": "integer" if integer else "number"}
    if p.min is not None:
        s["minimum"] = p.min
    if p.max is not None:
        s["maximum"] = p.max
    return s


def _scalar_number(p: Param) -> list[dict[str, Any]]:
    """The number (and, with a unit, the quantity-string) alternatives of a float item."""
    alts = [_number(p)]
    if p.unit:
        alts.append({"type": "string", "pattern": quantity_pattern(p.unit),
                     "description": f"a quantity such as '1 {p.unit}' (converted to {p.unit})"})
    return alts


def param_schema(p: Param) -> dict[str, Any]:
    """The JSON Schema of one parameter value (with title-less description, default and unit)."""
    k = p.kind
    alts: list[dict[str, Any]]
    if k == "float":
        alts = _scalar_number(p) + ([{"enum": list(p.names)}] if p.names else [])
    elif k == "int":
        alts = [_number(p, integer=True)]
    elif k == "bool":
        alts = [{"type": "boolean"}]
    elif k == "str":
        alts = [{"type": "string"}]
    elif k == "choice":
        alts = [{"enum": list(p.choices or ())}]
    elif k == "pose":
        alts = [{"$ref": "#/$defs/pose"}] + ([{"enum": list(p.names)}] if p.names else [])
    elif k in ("vector3", "float_list"):
        item = {"anyOf": _scalar_number(p) + [_subst()]}
        arr: dict[str, Any] = {"type": "array", "items": item}
        n = 3 if k == "vector3" else p.length
        if n is not None:
            arr["minItems"] = arr["maxItems"] = n
        alts = [arr]
    elif k == "key":
        alts = [{"type": "string", "pattern": KEY_NAME_PATTERN}]
    else:  # any
        alts = [{}]
    if p.blackboard and k not in ("key", "any"):
        alts.append({"type": "string", "pattern": BB_REF_PATTERN, "description": "a blackboard reference '{key}'"})
    if not p.required and p.default is None and k != "any":
        alts.append({"type": "null"})
    if k != "any":
        alts.append(_subst())
    out: dict[str, Any] = alts[0] if len(alts) == 1 else {"anyOf": alts}
    out = dict(out)
    out["description"] = param_description(p)
    if not p.required and p.default is not None:
        out["default"] = _jsonable(p.to_json_default())
    return out


def param_description(p: Param) -> str:
    """``doc (type; default ...; range; frame)`` for hovers and the generated docs."""
    bits = [p.describe_type()]
    bits.append("required" if p.required else f"default {json.dumps(_jsonable(p.to_json_default()))}")
    if p.min is not None or p.max is not None:
        lo = "" if p.min is None else f"{p.min:g}"
        hi = "" if p.max is None else f"{p.max:g}"
        bits.append(f"range [{lo or '-inf'}, {hi or 'inf'}]" + (f" {p.unit}" if p.unit else ""))
    if p.frame:
        bits.append(f"{p.frame} frame")
    if p.blackboard and p.kind not in ("key", "any"):
        bits.append("may be '{key}'")
    return (p.doc + " " if p.doc else "") + "(" + "; ".join(bits) + ")"


def _jsonable(v: Any) -> Any:
    try:
        json.dumps(v)
        return v
    except TypeError:
        return str(v)


def _body(decl: dict[str, Param], description: str, structural: dict[str, Any], required_structural: list[str]) -> dict[str, Any]:
    props: dict[str, Any] = {"name": {"type": "string", "description": "node name (unique in the tree; default: the type)"}}
    props.update({k: param_schema(p) for k, p in decl.items()})
    props.update(structural)
    required = [k for k, p in decl.items() if p.required] + required_structural
    body: dict[str, Any] = {"type": "object", "description": description, "properties": props,
                            "additionalProperties": False}
    if required:
        body["required"] = required
    else:
        body = {"anyOf": [body, {"type": "null"}], "description": description}
    return body


def node_type_schemas() -> dict[str, dict[str, Any]]:
    """``{type name: schema of its body}`` for every composite, decorator and registered behaviour."""
    out: dict[str, dict[str, Any]] = {}
    for name, decl in COMPOSITES.items():
        body = _body(decl, f"composite: {COMPOSITE_DOCS.get(name, '')}",
                     {"children": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/node"},
                                   "description": "child nodes, ticked in order"}}, ["children"])
        if name == "Parallel":
            body["if"] = {"type": "object", "properties": {"policy": {"const": "success_on_selected"}},
                          "required": ["policy"]}
            body["then"] = {"type": "object", "required": ["selected"],
                            "properties": {"selected": {"type": "array", "minItems": 1, "items": {"type": "string"}}}}
        out[name] = body
    for name, decl in DECORATORS.items():
        out[name] = _body(decl, f"decorator: {DECORATOR_DOCS.get(name, '')}",
                          {"child": {"$ref": "#/$defs/node", "description": "the decorated node"}}, ["child"])
    for name, cls in registry.behaviours().items():
        desc = registry.describe(cls) + ("  [simulator only]" if getattr(cls, "SIM_ONLY", False) else "")
        out[name] = _body(cls.all_params(), desc, {}, [])
    return out


# ------------------------------------------------------------------------------------------------
# scene: derived from scene.spec.SCENE_KEYS (key names, types, required keys, ranges stated in the docs)
_RANGE_DOTS = re.compile(rf"({_NUMBER_RE})\s*\.\.\.\s*({_NUMBER_RE})")
_RANGE_CMP = re.compile(rf"(?:^|[,(]\s*|each\s+)(>=|>)\s*({_NUMBER_RE})")
_SECTION_OF = {"robots": "robots[]", "fixtures": "fixtures[]", "objects": "objects[]", "task": "task",
               "primitive": "primitive", "pose_noise": "pose_noise", "grasps": "grasps[]", "symmetry": "symmetry"}


def _doc_range(doc: str) -> dict[str, Any]:
    """Numeric bounds stated in a scene key's doc (``"0 ... 1"``, ``"> 0"``, ``">= 0"``)."""
    m = _RANGE_DOTS.search(doc)
    if m:
        return {"minimum": float(m.group(1)), "maximum": float(m.group(2))}
    m = _RANGE_CMP.search(doc)
    if m:
        return {"exclusiveMinimum" if m.group(1) == ">" else "minimum": float(m.group(2))}
    return {}


def _scene_value(key: str, type_: str, doc: str) -> dict[str, Any]:
    rng = _doc_range(doc)
    num = {"type": "number", **rng}
    if key == "base_pose":  # a pose, or auto placement (sim/base_placement.py)
        s: dict[str, Any] = {"anyOf": [
            {"$ref": "#/$defs/pose"}, {"const": "auto"},
            {"type": "object", "required": ["auto"], "additionalProperties": False,
             "properties": {"auto": {"anyOf": [{"const": True}, {"type": "null"}, {
                 "type": "object", "additionalProperties": False,
                 "properties": {"surface": {"type": "string",
                                            "description": "what the base stands on: 'floor' or a fixture's name"}}}]}}}]}
    elif key == "pose" or type_ == "pose":
        s = {"$ref": "#/$defs/pose"}
    elif key in _SECTION_OF and type_ == "list":
        s = {"type": "array", "items": {"$ref": f"#/$defs/scene_{_SECTION_OF[key].strip('[]')}"}}
    elif key in _SECTION_OF and type_ == "mapping":
        s = {"$ref": f"#/$defs/scene_{_SECTION_OF[key].strip('[]')}"}
    elif type_ == "int":
        s = {"type": "integer", **rng}
    elif type_ == "number":
        s = num
    elif type_ == "bool":
        s = {"type": "boolean"}
    elif type_ == "str":
        s = {"type": "string"}
    elif type_ == "str or list":
        s = {"anyOf": [{"type": "string"}, {"type": "array", "items": {"anyOf": [{"type": "number"}, _subst()]}}]}
    elif type_.startswith("[") and type_.endswith("]"):
        n = len(type_.strip("[]").split(","))
        s = {"type": "array", "minItems": n, "maxItems": n, "items": {"anyOf": [num, _subst()]}}
    elif type_ == "mapping":
        s = {"type": "object"}
    elif type_ == "list":
        s = {"type": "array"}
    else:
        s = {}
    return {"anyOf": [s, _subst()], "description": doc} if s else {"description": doc}


def scene_defs() -> dict[str, Any]:
    """``$defs`` entries for the scene (``scene``, ``scene_robots``...) or a loose object if unavailable."""
    try:
        try:
            import py_trees_manipulation.sim  # noqa: F401  (registers extra scene sections)
        except Exception:  # the simulator's optional dependencies; the key table does not need them
            pass
        from ..scene.spec import SCENE_KEYS, accepted_keys
    except Exception:  # pragma: no cover - no simulator in this installation
        return {"scene": {"type": "object", "description": "the simulator's scene"}}
    defs: dict[str, Any] = {}
    for section, keys in SCENE_KEYS.items():
        if section == "pose":
            continue  # poses use $defs/pose, shared with pose parameters
        name = "scene" if section == "scene" else "scene_" + section.strip("[]")
        props = {k.name: _scene_value(k.name, k.type, k.doc) for k in keys}
        if section == "scene":
            for extra in accepted_keys("scene"):
                props.setdefault(extra, {"description": f"scene section '{extra}' (see the simulator docs)"})
        d: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": False}
        req = [k.name for k in keys if k.required]
        if req:
            d["required"] = req
        if section == "objects[]":
            d["oneOf"] = [_requires("urdf"), _requires("primitive")]
        defs[name] = d
    return defs


# ------------------------------------------------------------------------------------------------
def _pose_def() -> dict[str, Any]:
    num = {"anyOf": [{"type": "number"}, _subst()]}

    def vec(n: int, what: str) -> dict[str, Any]:
        return {"type": "array", "minItems": n, "maxItems": n, "items": num, "description": what}

    return {
        "description": "a pose: {position, orientation [w, x, y, z] | rpy_deg | rpy}, [x, y, z] or a 4x4 matrix",
        "anyOf": [
            {"type": "object", "additionalProperties": False,
             "properties": {"position": vec(3, "metres"), "orientation": vec(4, "quaternion, scalar first (w, x, y, z)"),
                            "rpy_deg": vec(3, "roll, pitch, yaw in degrees (static x-y-z)"),
                            "rpy": vec(3, "roll, pitch, yaw in radians")},
             "not": {"anyOf": [_requires("orientation", "rpy_deg"), _requires("orientation", "rpy"),
                               _requires("rpy_deg", "rpy")]}},
            vec(3, "position only (identity rotation)"),
            {"type": "array", "minItems": 4, "maxItems": 4, "items": vec(4, "row"), "description": "4x4 homogeneous matrix"},
        ],
    }


def task_schema() -> dict[str, Any]:
    """The whole task-file schema (a JSON-serialisable dict)."""
    types = node_type_schemas()
    defs: dict[str, Any] = {
        "substitution": {"type": "string", "pattern": SUBST_PATTERN,
                         "description": "a value from 'parameters:' (${name}), known after substitution"},
        "pose": _pose_def(),
        "include": {
            "type": "object", "required": ["include"], "additionalProperties": False,
            "description": "a subtree from another file; its node names get the prefix NAME/",
            "properties": {"include": {"type": "string", "description": "file path, relative to this file"},
                           "with": {"type": "object", "description": "values for the included file's parameters"},
                           "name": {"type": "string", "description": "names the subtree's root and prefixes names inside"}},
        },
        "typed_node": {
            "type": "object", "minProperties": 1, "maxProperties": 1, "additionalProperties": False,
            "description": "one node: {Type: {parameters...}}",
            "properties": types,
        },
        "node": {"anyOf": [{"$ref": "#/$defs/include"}, {"$ref": "#/$defs/typed_node"}]},
        **scene_defs(),
    }
    assert set(INCLUDE_KEYS) == set(defs["include"]["properties"])
    props: dict[str, Any] = {
        "name": {"type": "string", "description": "task name (default: the file name)"},
        "description": {"type": "string"},
        "parameters": {"anyOf": [{"type": "object", "propertyNames": {"pattern": r"^[A-Za-z_][A-Za-z0-9_]*$"}},
                                 {"type": "null"}],
                       "description": "file parameters: name -> default (null: required); used as ${name}"},
        "scene": {"$ref": "#/$defs/scene"},
        "blackboard": {"anyOf": [{"type": "object", "propertyNames": {"pattern": r"^[A-Za-z_][A-Za-z0-9_/.\-]*$"}},
                                 {"type": "null"}],
                       "description": "initial blackboard values"},
        "tree": {"$ref": "#/$defs/node"},
        "expect": {"type": "object", "description": "scenario expectations (see the scenario docs)"},
        "variants": {"type": "object", "description": "scenario variants (see the scenario docs)"},
    }
    assert set(props) == set(TOP_KEYS), "schema top-level keys out of step with the loader"
    return {
        "$schema": DIALECT,
        "$id": SCHEMA_ID,
        "title": "py_trees_manipulation task file",
        "description": "A behaviour-tree task for robot manipulation (generated by 'ptm schema' from the behaviour registry).",
        "type": "object",
        "required": ["tree"],
        "additionalProperties": False,
        "properties": props,
        "$defs": defs,
    }


def schema_json(indent: Optional[int] = 2) -> str:
    """:func:`task_schema` as JSON text (stable key order: diffs between versions are readable)."""
    return json.dumps(task_schema(), indent=indent, ensure_ascii=False) + "\n"


def validator() -> Any:
    """A ``jsonschema`` Draft 2020-12 validator of task files (needs the ``jsonschema`` package)."""
    import jsonschema

    schema = task_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def validate_document(doc: Any) -> list[str]:
    """Schema errors of a parsed task document, each ``path: message`` (empty when valid)."""
    errors = sorted(validator().iter_errors(to_plain(doc)), key=lambda e: list(map(str, e.absolute_path)))
    return [f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}" for e in errors]
