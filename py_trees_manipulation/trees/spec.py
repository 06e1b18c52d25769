"""Dataclasses for a loaded task file: what the YAML said, validated, with locations."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from .errors import Loc


@dataclass
class NodeSpec:
    """One node of the tree.

    Attributes:
        type: ``Sequence``, ``Retry``, ``MoveToPose``... (registered name).
        category: ``"composite"``, ``"decorator"`` or ``"behaviour"``.
        name: the node's name (None: the type's default).
        params: raw parameter values from the file (after ``${...}`` substitution).
        children: child specs (composites: any number, decorators: one).
        loc: where the node starts; ``param_locs``: where each parameter is.
        source: the file the node came from (differs from the task file inside includes).
    """

    type: str
    category: str
    name: Optional[str]
    params: dict[str, Any]
    children: list["NodeSpec"]
    loc: Loc
    param_locs: dict[str, Loc] = field(default_factory=dict)

    def walk(self):
        yield self
        for c in self.children:
            yield from c.walk()


@dataclass
class TaskSpec:
    """A validated task file.

    Attributes:
        file: path of the task file.
        name, description: from the file (name defaults to the file's stem).
        scene: the ``scene`` section (plain dicts/lists), or None.
        blackboard: initial blackboard values.
        tree: the root node.
        parameters: the file's parameters after defaults and ``--set parameters.X=...``.
        expect, variants: scenario sections (see the scenario module), kept as given.
        raw: the whole document after overrides and substitution.
        scene_dir: the folder relative URDF paths of the scene are resolved against (default: the
            task file's folder; an XML tree run with ``--scene`` uses the scene file's).
        warnings: problems that do not stop the task (e.g. a literal target out of every robot's
            reach), each a ``Problem`` whose message starts with ``warning:``; printed by
            ``ptm validate`` and ``ptm run``, exit code unchanged.
    """

    file: str
    name: str
    description: str
    scene: Optional[dict[str, Any]]
    blackboard: dict[str, Any]
    tree: NodeSpec
    parameters: dict[str, Any] = field(default_factory=dict)
    expect: Optional[dict[str, Any]] = None
    variants: Optional[dict[str, Any]] = None
    raw: Any = None
    scene_dir: Optional[str] = None
    warnings: list[Any] = field(default_factory=list)
