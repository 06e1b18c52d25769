"""Dataclasses for a loaded task file: what the YAML said, validated, with locations."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ..located.errors import Loc


@dataclass
class IncludeInfo:
    """One ``include:`` of a tree.

    Attributes:
        file: the included file, as displayed in messages (relative to the task file's folder).
        name: the include's ``name`` (None: its nodes' names get no prefix).
        parameters: the included file's parameters with their values (``with:`` or defaults).
        loc: where the ``include:`` stands in the including file; ``given_locs``: where each
            ``with:`` parameter is given there (messages about an included node point at them).
    """

    file: str
    name: Optional[str]
    parameters: dict[str, Any] = field(default_factory=dict)
    given_sources: dict[str, tuple[str, str]] = field(default_factory=dict)  # with: values that were "${P}" of
    # the enclosing include's parameter P (as NodeSpec.param_sources)
    loc: Optional[Loc] = None
    given_locs: dict[str, Loc] = field(default_factory=dict)


@dataclass
class ParamOrigin:
    """Where a node's parameter is set when the node takes it whole from its included file's
    parameter (``grip_force_n: "${max_effort_n}"`` in ``subtrees/grasp_from_above.yaml``): the key a
    user changes to change it.

    Attributes:
        name: the included file's parameter (``max_effort_n``).
        file: the included file, as displayed (``examples/subtrees/grasp_from_above.yaml``).
        default: its default there (None: none).
        at: where to give it: its ``with:`` entry when the include gives it, else the ``include:``.
        given: whether the include's ``with:`` gives it.
    """

    name: str
    file: str
    default: Any = None
    at: Optional[Loc] = None
    given: bool = False

    def fix(self, value: Any) -> str:
        """How to set it to ``value``: ``"set max_effort_n: 85 in the include's with: at FILE:LINE:COL"``."""
        if self.given:
            return f"set {self.name}: {value} in the include's with: at {self.at}"
        return (f"set the included {self.file}'s parameter {self.name} (default {self.default}): add "
                f"with: {{{self.name}: {value}}} to the include at {self.at}")


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
        includes: on the root node of an ``include:``, what was included (innermost first; an
            included file whose tree is itself an include gives two).
        param_sources: parameters whose whole value came from the enclosing include's parameter:
            ``{param: ("value", name)}`` for ``"${name}"``, ``{param: ("pointer", name)}`` for
            ``"{${name}}"`` (the XML export writes them as SubTree ports).
        param_origins: for those of ``param_sources`` given as ``"${name}"``, where the user sets
            them (:class:`ParamOrigin`): a message about the parameter names that key.
    """

    type: str
    category: str
    name: Optional[str]
    params: dict[str, Any]
    children: list["NodeSpec"]
    loc: Loc
    param_locs: dict[str, Loc] = field(default_factory=dict)
    includes: list["IncludeInfo"] = field(default_factory=list)
    param_sources: dict[str, tuple[str, str]] = field(default_factory=dict)
    param_origins: dict[str, ParamOrigin] = field(default_factory=dict)

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
