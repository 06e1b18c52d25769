"""A tree back in the YAML form (the other half of ``ptm convert``): a validated node or a whole task
written as YAML (defaults omitted, URDF paths rebased), and the differences between two trees (what
an XML round trip must leave unchanged).

Moved out of :mod:`.btxml` (issue 37 item 6), which re-exports the public names.
"""

from __future__ import annotations

import json
import os
from typing import Any, Optional

import numpy as np
import yaml

from ..behaviors.params import BlackboardRef
from ..trees.spec import NodeSpec, TaskSpec
from .btxml_common import _declaration
from .btxml_export import _jsonable, _same, value_to_text


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
