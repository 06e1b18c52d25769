"""Load a YAML task file into a validated :class:`~.spec.TaskSpec` (nothing runs before this passes).

File format (see docs/task_file.md)::

    name: pick_and_lift             # optional
    description: ...
    parameters: {lift_m: 0.15}      # ${lift_m} anywhere below; --set parameters.lift_m=0.2
    scene: {...}                    # the simulator's scene (sim/scene.py)
    blackboard: {key: value}        # initial blackboard values
    tree:                           # one node:
      Sequence:                     #   {Type: {params..., children: [...]}}  composite
        name: pick                  #   {Decorator: {params..., child: {...}}} decorator
        children:                   #   {Behaviour: {name, params...}}        behaviour
          - MoveJoints: {configuration: ready}
          - include: grasp.yaml     #   subtree from another file, with parameters
            with: {object: mug}
            name: grasp             #   names inside get the prefix "grasp/"

Every problem found is reported as ``FILE:LINE:COL: what is wrong; did you mean ...`` in one
:class:`~.errors.TreeLoadError`.
"""

from __future__ import annotations

import os
import re
from typing import Any, Optional


from ..behaviors import registry
from ..behaviors.params import Param, ParamError
from ..located import locyaml
from .dataflow import check_data_flow
from .event_checks import armed_event_problems
from .mechanism_goals import mechanism_goal_problems
from ..located.errors import Loc, Problem, TreeLoadError, did_you_mean
from ..located.locyaml import LocDict, LocList, loc_of
from .nodes import COMPOSITES, DECORATORS
from .spec import IncludeInfo, NodeSpec, ParamOrigin, TaskSpec

class _Missing:
    """Value of a required parameter that was not given (already reported)."""

    def __repr__(self) -> str:
        return "<missing>"


_MISSING: Any = _Missing()


class _Unresolved(str):
    """Text holding a ``${...}`` that could not be substituted (an unknown or missing parameter,
    already reported): the parameter checks do not report it again. Any other ``${`` in a value (a
    literal ``"${"``, a parameter default that is itself ``"${x}"``) is checked like any text."""

TOP_KEYS = ("name", "description", "parameters", "scene", "blackboard", "tree", "expect", "variants")
INCLUDE_KEYS = ("include", "with", "name")
MAX_INCLUDE_DEPTH = 16
MAX_NODES = 5000
_SUBST = re.compile(r"\$\{([^}]*)\}")
_KEY_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_/.\-]*$")


def all_node_types() -> list[str]:
    return sorted(set(COMPOSITES) | set(DECORATORS) | set(registry.behaviours()))


class _Ctx:
    def __init__(self, task_file: str):
        self.task_file = task_file
        self.problems: list[Problem] = []
        self.warnings: list[Problem] = []  # printed, not fatal (exit code 0)
        self.include_stack: list[str] = []
        self.display_stack: list[str] = []
        self.names: dict[str, Loc] = {}
        self.node_overrides: dict[str, dict[str, Any]] = {}
        self.used_overrides: set[str] = set()
        self.node_count = 0
        self.overridden: dict[tuple[Any, ...], str] = {}  # document path -> the --set expression
        self.param_sources: dict[tuple[int, Any], tuple[str, str]] = {}  # see _substitute(record=...)
        self.documents: list[Any] = []  # included documents, kept alive while param_sources refers to them

    def override_loc(self, path: tuple[Any, ...]) -> Optional[Loc]:
        """``--set EXPR`` when ``path`` (or a part of it) was set on the command line, else None."""
        for n in range(len(path), 0, -1):
            expr = self.overridden.get(tuple(str(p) for p in path[:n]))
            if expr is not None:
                return Loc(f"--set {override_label(expr)}", 0, 0)
        return None

    def add(self, loc: Loc, message: str, hint: str = "") -> None:
        self.problems.append(Problem(loc, message, hint))

    def warn(self, loc: Loc, message: str, hint: str = "") -> None:
        self.warnings.append(Problem(loc, "warning: " + message, hint))


# ---------------------------------------------------------------------------------------------------
def load_task(path: str, overrides: Optional[list[str]] = None, *, require_tree: bool = True) -> TaskSpec:
    """Load and validate a task file.

    Args:
        path: the YAML task file.
        overrides: ``"dotted.path=value"`` strings (the CLI's ``--set``), value parsed as YAML:
            ``parameters.NAME=...``, ``scene.objects.0.mass_kg=...``, ``blackboard.KEY=...``,
            ``tree.NODE_NAME.PARAM=...``.
        require_tree: a file without ``tree`` is an error (False for scene-only files).

    Returns:
        the validated task.

    Raises:
        TreeLoadError: every problem found, each with file, line, column and a hint.
    """
    doc = locyaml.load(path)
    return load_task_data(doc, path, overrides, require_tree=require_tree)


def load_task_data(doc: Any, path: str, overrides: Optional[list[str]] = None, *, require_tree: bool = True,
                   check_blackboard: bool = True) -> TaskSpec:
    """Like :func:`load_task` for an already parsed document (from :func:`locyaml.loads`).

    ``check_blackboard=False`` skips the data-flow check (:mod:`.dataflow`), for a tree whose
    ``blackboard:`` section is not known (an XML tree converted without ``--scene``).
    """
    ctx = _Ctx(path)
    top = Loc(path, 1, 1)
    if not isinstance(doc, dict):
        raise TreeLoadError.single(getattr(doc, "loc", top), "a task file is a mapping with at least 'tree:'",
                                   "start with 'tree:' (see examples/pick_and_lift.yaml)")
    for key in doc:
        if key not in TOP_KEYS:
            hint = did_you_mean(key, TOP_KEYS) or f"allowed: {', '.join(TOP_KEYS)}"
            if key == "task" and "tree" not in doc:  # a scenario that names its task, read as a task
                hint = ("a scenario file names its task with 'task:': call it NAME.scenario.yaml (ptm validate and "
                        "ptm test check it as a scenario)")
            ctx.add(doc.key_loc(key), f"unknown top-level key {key!r}", hint)
    _apply_overrides(doc, overrides or [], ctx)
    if overrides:  # each value is within the limits; together they must be too
        try:
            locyaml.check_limits(doc, Loc("--set", 0, 0))
        except TreeLoadError as e:
            raise TreeLoadError(ctx.problems + [Problem(p.loc, "the task with its --set values" + p.message[len("the YAML"):],
                                                        p.hint) for p in e.problems]) from None

    # parameters and ${...} substitution over the whole document
    params = _file_parameters(doc, ctx, given={})
    for key in ("scene", "blackboard", "tree", "expect", "variants", "description", "name"):
        if key in doc:
            doc[key] = _substitute(doc[key], params, ctx, doc.value_loc(key))

    scene = doc.get("scene")
    if scene is not None and not isinstance(scene, dict):
        ctx.add(doc.value_loc("scene"), "'scene' must be a mapping", "see docs/task_file.md, 'Scene'")
        scene = None
    scene_spec = _validate_scene(scene, ctx) if isinstance(scene, dict) else None

    blackboard = doc.get("blackboard") or {}
    if not isinstance(blackboard, dict):
        ctx.add(doc.value_loc("blackboard"), "'blackboard' must be a mapping of key: value")
        blackboard = {}
    for key in blackboard:
        if not isinstance(key, str) or not _KEY_RE.match(key):
            ctx.add(blackboard.key_loc(key), f"invalid blackboard key {key!r}", "use letters, digits and _ (e.g. mug_pose)")

    tree: Optional[NodeSpec] = None
    if "tree" not in doc:
        if require_tree:
            ctx.add(top, "missing 'tree:'", "a task file needs a tree, e.g. 'tree: {Sequence: {children: [...]}}'")
    else:
        ctx.include_stack.append(os.path.abspath(path))
        ctx.display_stack.append(path)
        tree = _parse_node(doc["tree"], doc.value_loc("tree"), ctx, prefix="")
    if tree is not None and scene_spec is not None:
        _check_scene_references(tree, scene_spec, ctx, blackboard)
        _check_reach(tree, scene_spec, ctx)
        mechanism_goal_problems(tree, scene_spec, ctx.add)
        armed_event_problems(tree, scene_spec, ctx.add)
    if tree is not None and check_blackboard and not ctx.problems:
        def bb_loc(key: str) -> Loc:
            return ctx.override_loc(("blackboard", key)) or (
                blackboard.value_loc(key) if isinstance(blackboard, LocDict) else top)

        check_data_flow(tree, blackboard, bb_loc, ctx.add)
    for name in set(ctx.node_overrides) - ctx.used_overrides:
        inside = sorted(n for n in ctx.names if n.startswith(name + "/"))
        if name in ctx.names and inside:  # an include's name: its nodes take the parameters
            keys = sorted(ctx.node_overrides[name])
            ctx.add(Loc(f"--set tree.{name}", 0, 0),
                    f"{name!r} names an include, whose parameters (its with:) are not set from the command line",
                    f"set a parameter of one of its nodes instead, e.g. --set tree.{inside[0]}.KEY=VALUE "
                    f"(its nodes: {', '.join(inside[:8])}{', ...' if len(inside) > 8 else ''}; `ptm render FILE` "
                    "shows what each takes)" + (f"; you set {', '.join(keys)}" if keys else ""))
            continue
        ctx.add(Loc(f"--set tree.{name}", 0, 0), f"no node named {name!r}", did_you_mean(name, ctx.names))

    for key in ("name", "description"):
        if key in doc and not isinstance(doc[key], str):
            ctx.add(doc.value_loc(key), f"'{key}' must be text")
    if ctx.problems:
        raise TreeLoadError(ctx.problems)
    stem = os.path.splitext(os.path.basename(path))[0]
    return TaskSpec(
        file=path, name=str(doc.get("name") or stem), description=str(doc.get("description") or ""),
        scene=scene, blackboard=dict(blackboard),
        tree=tree if tree is not None else NodeSpec("Success", "behaviour", None, {}, [], top),
        parameters=params, expect=doc.get("expect"), variants=doc.get("variants"), raw=doc,
        warnings=list(ctx.warnings),
    )


# ---------------------------------------------------------------------------------------------------
def override_label(expr: str) -> str:
    """``expr`` as errors name it: whole up to 120 characters, else its first 100 and ``...``."""
    return expr if len(expr) <= 120 else expr[:100] + "..."


def parse_override(expr: str) -> tuple[list[str], Any]:
    """``"a.b.0=1.5"`` -> (["a", "b", "0"], 1.5). Raises ValueError on a malformed expression."""
    if "=" not in expr:
        raise ValueError("expected KEY=VALUE")
    key, value = expr.split("=", 1)
    parts = key.strip().split(".")
    if not all(parts):
        raise ValueError(f"malformed key {key!r}")
    # the limits and number rules of a file (locyaml.value): an alias bomb in a value is refused here
    return parts, locyaml.value(value, f"--set {expr}")


def _apply_overrides(doc: LocDict, overrides: list[str], ctx: _Ctx) -> None:
    for expr in overrides:
        where = Loc(f"--set {override_label(expr)}", 0, 0)
        try:
            parts, value = parse_override(expr)
        except ValueError as e:
            key_problem = str(e).startswith(("expected KEY=VALUE", "malformed key"))
            ctx.add(where, str(e), "write --set dotted.path=value, e.g. --set parameters.lift_m=0.2" if key_problem else "")
            continue
        head = parts[0]
        if head == "tree":
            if len(parts) != 3:
                ctx.add(where, "tree overrides are tree.NODE_NAME.PARAMETER", "e.g. --set tree.lift.speed_mps=0.05")
                continue
            ctx.node_overrides.setdefault(parts[1], {})[parts[2]] = value
            continue
        if head not in TOP_KEYS:
            ctx.add(where, f"unknown section {head!r}", did_you_mean(head, TOP_KEYS) or f"one of {', '.join(TOP_KEYS)}")
            continue
        if head == "parameters":
            declared = doc.get("parameters")
            if len(parts) != 2 or not isinstance(declared, dict) or parts[1] not in declared:
                names = list(declared) if isinstance(declared, dict) else []
                ctx.add(where, f"the file has no parameter {'.'.join(parts[1:])!r}",
                        did_you_mean(parts[-1], names) or (f"parameters: {', '.join(names)}" if names else "the file declares no parameters"))
                continue
        node: Any = doc
        ok = True
        for i, part in enumerate(parts[:-1]):
            nxt: Any
            if isinstance(node, list):
                if not part.isdigit() or int(part) >= len(node):
                    ctx.add(where, f"{'.'.join(parts[:i + 1])}: no item {part} (the list has {len(node)})")
                    ok = False
                    break
                nxt = node[int(part)]
            elif isinstance(node, dict):
                if part not in node:
                    if i == 0:
                        node[part] = LocDict()
                        node[part].loc, node[part].key_locs, node[part].value_locs = doc.loc, {}, {}
                    else:
                        rest = ".".join(parts[i + 1:])
                        if parts[i + 1].isdigit():  # an item of a list the file does not write: no block to give
                            fix = (f"{'.'.join(parts[:i])} writes {', '.join(map(str, node))}" if node
                                   else f"{'.'.join(parts[:i])} writes nothing")
                        else:
                            nested = "{" + rest.replace(".", ": {") + ": " + str(expr).partition("=")[2].strip() + "}" * (rest.count(".") + 1)
                            fix = (f"the file does not write it: give the whole block, e.g. --set "
                                   f"'{'.'.join(parts[:i + 1])}={nested}'")
                        ctx.add(where, f"{'.'.join(parts[:i + 1])} does not exist", did_you_mean(part, list(node)) or fix)
                        ok = False
                        break
                nxt = node[part]
            else:
                ctx.add(where, f"{'.'.join(parts[:i])} is a value, not a section")
                ok = False
                break
            node = nxt
        if not ok:
            continue
        last = parts[-1]
        if isinstance(node, list):
            if not last.isdigit() or int(last) > len(node):
                ctx.add(where, f"no item {last} (the list has {len(node)}; index {len(node)} appends one)")
                continue
            if int(last) == len(node):  # one past the end appends: a variant adds an object or a fixture
                node.append(value)
            else:
                node[int(last)] = value
        elif isinstance(node, dict):
            node[last] = value
            if isinstance(node, LocDict):  # a problem with this value points at the --set that gave it, not at the file
                node.value_locs[last] = where
        else:
            ctx.add(where, f"{'.'.join(parts[:-1])} is a value, not a section")
            continue
        ctx.overridden[tuple(parts)] = expr


def _file_parameters(doc: LocDict, ctx: _Ctx, given: dict[str, Any], given_locs: Optional[dict[str, Loc]] = None,
                     include_loc: Optional[Loc] = None) -> dict[str, Any]:
    declared = doc.get("parameters") or {}
    if not isinstance(declared, dict):
        ctx.add(doc.value_loc("parameters"), "'parameters' must be a mapping of name: default (null = required)")
        return {}
    out: dict[str, Any] = {}
    for key, default in declared.items():
        if not isinstance(key, str) or not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", key):
            ctx.add(declared.key_loc(key), f"invalid parameter name {key!r}", "use letters, digits and _")
            continue
        value = given[key] if key in given else default
        nested = _plain_substitution(value)
        if nested is not None:
            where = ctx.override_loc(("parameters", key)) or (
                (given_locs or {}).get(key, include_loc or doc.loc) if key in given else declared.value_loc(key))
            ctx.add(where, f"the value of parameter {key!r} holds {nested}: a parameter's value is not substituted",
                    "give the value itself (substitution is one level: ${name} in the tree takes the value as written)")
            out[key] = _MISSING
            continue
        if key in given:
            out[key] = given[key]
        elif default is None:
            if include_loc is not None:
                ctx.add(include_loc, f"the included file needs parameter {key!r}", f"add it under 'with:' ({key}: ...)")
            else:
                ctx.add(declared.key_loc(key), f"parameter {key!r} has no value (null means required)",
                        f"give it a default here or run with --set parameters.{key}=VALUE; "
                        "a file meant to be included is checked through the file that includes it")
            out[key] = _MISSING  # reported once here, not again at every ${key}
        else:
            out[key] = default
    for key in given:
        if key not in declared:
            loc = (given_locs or {}).get(key, include_loc or doc.loc)
            ctx.add(loc, f"the included file has no parameter {key!r}",
                    did_you_mean(key, list(declared)) or (f"it declares: {', '.join(declared)}" if declared else "it declares no parameters"))
    return out


def _plain_substitution(value: Any) -> Optional[str]:
    """The first ``${name}`` in ``value`` (text, or inside lists and mappings) that is not an
    already reported :class:`_Unresolved` one, else None."""
    if isinstance(value, str):
        m = _SUBST.search(value)
        return m.group(0) if m and not isinstance(value, _Unresolved) else None
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    for v in items:
        found = _plain_substitution(v)
        if found is not None:
            return found
    return None


_POINTER_SUBST = re.compile(r"^\{\$\{([^}]*)\}\}$")


def _substitute(value: Any, params: dict[str, Any], ctx: _Ctx, loc: Loc,
                record: Optional[dict[tuple[int, Any], tuple[str, str]]] = None) -> Any:
    """``value`` with ``${name}`` replaced from ``params`` (problems reported). With ``record``,
    mapping entries whose whole value is ``"${name}"`` or ``"{${name}}"`` are noted there as
    ``(id(mapping), key) -> ("value" | "pointer", name)`` (for the XML export's SubTree ports)."""
    if record is not None and isinstance(value, LocDict):
        for k in list(value):
            v = value[k]
            if isinstance(v, str):
                m = _SUBST.fullmatch(v.strip())
                p = _POINTER_SUBST.match(v.strip())
                if m and m.group(1) in params:
                    record[(id(value), k)] = ("value", m.group(1))
                elif p and p.group(1) in params:
                    record[(id(value), k)] = ("pointer", p.group(1))
    if isinstance(value, str):
        whole = _SUBST.fullmatch(value.strip())
        if whole:
            name = whole.group(1)
            if name in params:
                return _Unresolved(value) if params[name] is _MISSING else params[name]
            ctx.add(loc, f"unknown parameter ${{{name}}}",
                    did_you_mean(name, list(params)) or "declare it under 'parameters:'")
            return _Unresolved(value)
        unresolved = False

        def rep(m: re.Match[str]) -> str:
            nonlocal unresolved
            name = m.group(1)
            if name in params:
                if params[name] is _MISSING:
                    unresolved = True
                    return m.group(0)
                unresolved = unresolved or isinstance(params[name], _Unresolved)
                return str(params[name])
            ctx.add(loc, f"unknown parameter ${{{name}}}", did_you_mean(name, list(params)) or "declare it under 'parameters:'")
            unresolved = True
            return m.group(0)

        out = _SUBST.sub(rep, value)
        return _Unresolved(out) if unresolved or isinstance(value, _Unresolved) else out
    if isinstance(value, LocDict):
        for k in list(value):
            value[k] = _substitute(value[k], params, ctx, value.value_loc(k), record)
        return value
    if isinstance(value, LocList):
        for i in range(len(value)):
            value[i] = _substitute(value[i], params, ctx, value.item_loc(i), record)
        return value
    return value


def _validate_scene(scene: dict[str, Any], ctx: _Ctx) -> Any:
    """The parsed scene (sim/scene.py SceneSpec), or None after reporting its problem."""
    try:
        from ..scene.spec import SceneError, parse_scene
    except ImportError:  # pragma: no cover - the simulator is part of the package
        return None
    try:
        spec = parse_scene(scene, base_dir=os.path.dirname(os.path.abspath(ctx.task_file)))
        _check_scene_geometry(scene, spec, ctx)
        return spec
    except SceneError as e:
        path = ("scene",) + tuple(getattr(e, "path", ()) or ())
        msg = getattr(e, "message", None) or str(e)
        hint = getattr(e, "hint", "") or ""
        loc = ctx.override_loc(path) or loc_of(scene, path[1:], getattr(scene, "loc", Loc(ctx.task_file, 1, 1)))
        ctx.add(loc, f"scene: {msg}", hint)
        for problem in getattr(e, "problems", None) or ():  # in a file the scene names (a robot description)
            ctx.add(problem.loc, problem.message, problem.hint)
        return None


def _check_scene_geometry(scene: dict[str, Any], spec: Any, ctx: _Ctx) -> None:
    """What the file alone says about where its bodies are (scene/overlap.py): objects in a pose
    they cannot rest in, inside another body, with nothing under them; each at the object's pose."""
    from ..scene.overlap import mount_warnings, overlap_problems, scene_bodies, support_problems, tipping_problems

    bodies = scene_bodies(spec)
    tipping = tipping_problems(spec, bodies)
    tips = {path for path, _ in tipping}  # moved out of the table, it would still tip: that is the fix to give
    overlap = [(path, message) for path, message in overlap_problems(spec, bodies) if path not in tips]
    for path, message in tipping + overlap + support_problems(spec, bodies):
        full = ("scene",) + tuple(path)
        loc = ctx.override_loc(full) or loc_of(
            scene, path, getattr(scene, "loc", Loc(ctx.task_file, 1, 1)))
        ctx.add(loc, f"scene: {message}", "")
    for path, message in mount_warnings(spec, bodies):
        full = ("scene",) + tuple(path)
        loc = ctx.override_loc(full) or loc_of(scene, path, getattr(scene, "loc", Loc(ctx.task_file, 1, 1)))
        ctx.warn(loc, f"scene: {message}", "put it on a fixture, or model its stand as a fixture")


def _scene_names(scene: Any) -> dict[str, list[str]]:
    """What literal parameter values may name, by ``Param.refers_to``."""
    configurations: set[str] = set()
    for r in scene.robots:
        configurations |= set(getattr(r.description, "named_configurations", {}) or {})
    extra = scene.extra or {}
    return {
        "object": [o.name for o in scene.objects],
        "robot": [r.name for r in scene.robots],
        "configuration": sorted(configurations),
        "door": [d.name for d in extra.get("doors", []) or []],
        "cabinet": [c.name for c in extra.get("cabinets", []) or []],
    }


def _check_scene_references(tree: NodeSpec, scene: Any, ctx: _Ctx, blackboard: Any = None) -> None:
    """Literal object, robot, configuration, door and cabinet names must exist in the scene; then each
    behaviour's own ``scene_problems(params, scene)`` check (with ``blackboard=``, the task's initial
    blackboard, when the hook takes it: PlanRegrasp reads its regrasp description there)."""
    import inspect

    names = _scene_names(scene)
    handled: list[tuple[str, Loc, str]] = []  # (object named literally by a node, where, "Type.key")
    for node in tree.walk():
        if node.category != "behaviour":
            continue
        cls = registry.lookup(node.type)
        decl = cls.all_params() if cls is not None else {}
        for key, value in node.params.items():
            ref = getattr(decl.get(key), "refers_to", None)
            if ref is None or not isinstance(value, str) or ref not in names:
                continue
            if ref == "object":
                handled.append((value, node.param_locs.get(key, node.loc), f"{node.type}.{key}"))
            known = names[ref]
            if value not in known:
                what = "named configuration" if ref == "configuration" else ref
                ctx.add(node.param_locs.get(key, node.loc), f"{node.type}.{key}: the scene has no {what} {value!r}",
                        did_you_mean(value, known) or (f"it has {', '.join(known)}" if known else f"the scene has no {what}s"))
        # a behaviour's own checks against the scene (ChooseGrasp: the object's grasp set)
        check = getattr(cls, "scene_problems", None)
        if callable(check):
            accepts = inspect.signature(check).parameters
            kw: dict[str, Any] = {"blackboard": blackboard or {}} if "blackboard" in accepts else {}
            if "origins" in accepts:
                kw["origins"] = node.param_origins
            for key, message, hint in check(node.params, scene, **kw):
                ctx.add(node.param_locs.get(key, node.loc), message, hint)
    # the task's target object is what the run's metrics and verdict are about (lifted, placed,
    # dropped): a tree that names objects but never it would succeed about an object it never touched
    target = getattr(getattr(scene, "task", None), "target_object", None)
    named = {n for n, _, _ in handled}
    if target and named and target not in named and target in names.get("object", []):
        obj, loc, where = handled[0]
        ctx.add(loc, f"{where}: the tree handles {', '.join(repr(n) for n in sorted(named))}, never "
                     f"scene.task.target_object {target!r}, the object the run's metrics and verdict are about "
                     "(lifted, placed, dropped)",
                f"make them the same: scene.task.target_object: {obj}, or the tree's object {target!r} (in the "
                "examples parameters.object sets the tree's)")


def _check_reach(tree: NodeSpec, scene: Any, ctx: _Ctx) -> None:
    """Warn about literal arm targets beyond every (named) robot's reach bound (sim/reach.py)."""
    import numpy as np

    from ..robots import stock_description, stock_models
    from ..scene.reach import reach_bound_m  # light: xml.etree and the scene module the loader already uses

    robots = []
    for r in scene.robots:
        if getattr(r, "base_auto", None) is not None:
            return  # placed when the simulator is built: its targets are checked then (base_pose: auto)
        model = getattr(r, "description", None)
        if model is None and r.model in stock_models():
            model = stock_description(r.model)
        bound = reach_bound_m(model)
        if bound is None:
            return  # a robot of unknown reach: no warning at all
        robots.append((r.name, np.asarray(r.base_pose, dtype=float)[:3, 3], bound))
    if not robots:
        return
    for node in tree.walk():
        cls = registry.lookup(node.type) if node.category == "behaviour" else None
        target = node.params.get("target")
        if getattr(cls, "RESOURCE", None) != "arm" or not isinstance(target, np.ndarray) or target.shape != (4, 4):
            continue
        T = np.array(target, dtype=float)
        offset = node.params.get("offset")
        if isinstance(offset, np.ndarray) and offset.shape == (4, 4):
            T = T @ offset
        world_offset = node.params.get("world_offset")
        if isinstance(world_offset, list) and len(world_offset) == 3:
            T[:3, 3] += np.asarray(world_offset, dtype=float)
        arm = node.params.get("arm")
        candidates = [r for r in robots if r[0] == arm] or robots
        p = T[:3, 3]
        name, base, bound = min(candidates, key=lambda r: float(np.linalg.norm(p - r[1])) - r[2])
        dist = float(np.linalg.norm(p - base))
        if dist > bound:
            ctx.warn(node.param_locs.get("target", node.loc),
                     f"{node.type}.target: the TCP target ({p[0]:.3f}, {p[1]:.3f}, {p[2]:.3f}) m is {dist:.2f} m from "
                     f"{name}'s base, beyond what its arm can reach (at most {bound:.2f} m)",
                     "check the units (metres) and the frame (world)")


# ---------------------------------------------------------------------------------------------------
def _parse_node(data: Any, loc: Loc, ctx: _Ctx, prefix: str) -> Optional[NodeSpec]:
    ctx.node_count += 1
    if ctx.node_count > MAX_NODES:
        if ctx.node_count == MAX_NODES + 1:
            ctx.add(loc, f"the tree has more than {MAX_NODES} nodes")
        return None
    if not isinstance(data, dict) or not data:
        ctx.add(getattr(data, "loc", loc), "a node is a mapping '{Type: {parameters}}'",
                "e.g. '- MoveJoints: {configuration: ready}' or '- include: file.yaml'")
        return None
    if "include" in data:
        return _parse_include(data, ctx, prefix)
    if len(data) != 1:
        keys = list(data)
        ctx.add(data.loc, f"a node has exactly one type, got {len(keys)} keys: {', '.join(map(str, keys))}",
                "put parameters under the type: '- MoveToPose: {target: ...}' (mind the indentation)")
        return None
    kind = next(iter(data))
    kloc = data.key_loc(kind)
    body = data[kind]
    if body is None:
        body = LocDict()
        body.loc, body.key_locs, body.value_locs = kloc, {}, {}
    if not isinstance(body, dict):
        ctx.add(data.value_loc(kind), f"the body of {kind!r} must be a mapping of parameters, got {type(body).__name__}",
                f"write '{kind}: {{...}}'")
        return None
    if not isinstance(kind, str):
        ctx.add(kloc, f"node type must be a name, got {kind!r}")
        return None
    name = body.get("name")
    if name is not None and not isinstance(name, str):
        ctx.add(body.value_loc("name"), "'name' must be text")
        name = None
    full_name = (prefix + name) if name else None
    if full_name:
        if full_name in ctx.names:
            first = ctx.names[full_name]
            ctx.add(body.value_loc("name"), f"duplicate node name {full_name!r} (first at {first})",
                    "node names must be unique; rename one (or give the include a name)")
        else:
            ctx.names[full_name] = body.value_loc("name")
    params = {k: v for k, v in body.items() if k not in ("name", "children", "child")}
    param_locs = {k: body.key_loc(k) for k in params}
    sources = {k: ctx.param_sources[(id(body), k)] for k in params if (id(body), k) in ctx.param_sources}
    if full_name and full_name in ctx.node_overrides:
        ctx.used_overrides.add(full_name)
        for k, v in ctx.node_overrides[full_name].items():
            params[k] = v
            param_locs[k] = Loc(f"--set {override_label(f'tree.{full_name}.{k}={v}')}", 0, 0)
            sources.pop(k, None)

    if kind in COMPOSITES:
        if "child" in body:
            ctx.add(body.key_loc("child"), f"{kind} takes 'children:' (a list), not 'child:'")
        _check_params(kind, COMPOSITES[kind], params, param_locs, kloc, ctx)
        children_raw = body.get("children")
        if not isinstance(children_raw, list) or not children_raw:
            ctx.add(body.key_loc("children") if "children" in body else kloc, f"{kind} needs a non-empty 'children:' list")
            children_raw = LocList()
            children_raw.loc, children_raw.item_locs = kloc, []
        children = [c for i, item in enumerate(children_raw)
                    if (c := _parse_node(item, children_raw.item_loc(i), ctx, prefix)) is not None]
        if kind == "Parallel" and params.get("selected") is not None and params.get("policy") != "success_on_selected":
            ctx.add(param_locs.get("selected", kloc), "'selected' is only used with policy success_on_selected",
                    "remove it, or set policy: success_on_selected")
        if kind == "Parallel" and params.get("policy") == "success_on_selected":
            sel = params.get("selected")
            names = [c.name for c in children]
            if not isinstance(sel, list) or not sel:
                ctx.add(kloc, "policy success_on_selected needs 'selected:' (a list of child names)")
            elif not all(isinstance(s, str) for s in sel):
                ctx.add(param_locs.get("selected", kloc), "'selected' lists child names (text)")
            else:
                for s in sel:
                    if prefix + str(s) not in names:
                        ctx.add(param_locs.get("selected", kloc), f"selected child {s!r} is not a child of this Parallel",
                                did_you_mean(str(s), [n for n in names if n]) or "name the children and list their names")
                params["selected"] = [prefix + str(s) for s in sel]
        return NodeSpec(kind, "composite", full_name, params, children, kloc, param_locs, param_sources=sources)

    if kind in DECORATORS:
        if "children" in body:
            ctx.add(body.key_loc("children"), f"{kind} is a decorator: it takes one 'child:', not 'children:'",
                    "wrap several children in a Sequence")
        _check_params(kind, DECORATORS[kind], params, param_locs, kloc, ctx)
        child_raw = body.get("child")
        if child_raw is None:
            ctx.add(kloc, f"decorator {kind} needs a 'child:' node")
            return None
        child = _parse_node(child_raw, body.value_loc("child"), ctx, prefix)
        return NodeSpec(kind, "decorator", full_name, params, [child] if child else [], kloc, param_locs,
                        param_sources=sources)

    cls = registry.lookup(kind)
    if cls is None:
        ctx.add(kloc, f"unknown behaviour {kind!r}", did_you_mean(kind, all_node_types()) or "run 'ptm behaviours' for the list")
        return None
    for bad in ("children", "child"):
        if bad in body:
            ctx.add(body.key_loc(bad), f"{kind} is a behaviour: it has no '{bad}'")
    _check_params(kind, cls.all_params(), params, param_locs, kloc, ctx, cls=cls)
    misspelt = any(k not in cls.all_params() for k in body if k not in ("name", "children", "child"))
    for group in getattr(cls, "EXACTLY_ONE_OF", ()) if not misspelt else ():
        if not all(k in params for k in group):
            continue  # one of them was invalid (reported)
        given = [k for k in group if params[k] is not None]
        if len(given) != 1:
            names = " and ".join(repr(k) for k in group)
            ctx.add(param_locs.get(given[-1], kloc) if given else kloc,
                    f"{kind} needs exactly one of {names}, got {'both' if len(given) == 2 else 'none' if not given else ', '.join(given)}",
                    f"keep one of {names}")
    return NodeSpec(kind, "behaviour", full_name, params, [], kloc, param_locs, param_sources=sources)


def _holds_substitution(value: Any) -> bool:
    """``value`` holds a ``${...}`` left unresolved because its parameter is unknown or missing
    (reported where the substitution failed)."""
    if isinstance(value, str):
        return isinstance(value, _Unresolved)
    if isinstance(value, dict):
        return any(_holds_substitution(v) for v in value.values())
    if isinstance(value, list):
        return any(_holds_substitution(v) for v in value)
    return False


def _check_params(kind: str, decl: dict[str, Param], params: dict[str, Any], locs: dict[str, Loc],
                  node_loc: Loc, ctx: _Ctx, cls: Any = None) -> None:
    """Coerce ``params`` in place (defaults filled), reporting every problem."""
    invalid: set[str] = set()
    for key in list(params):
        if key not in decl:
            ctx.add(locs.get(key, node_loc), f"unknown parameter {key!r} for {kind}",
                    did_you_mean(key, list(decl)) or (f"parameters: {', '.join(decl)}" if decl else f"{kind} takes no parameters"))
            del params[key]
            continue
        try:
            params[key] = decl[key].coerce(params[key])
        except ParamError as e:
            if not _holds_substitution(params[key]):  # an unresolved ${...} was reported already
                hint = e.hint
                if isinstance(params[key], str) and "${" in params[key] and not hint:
                    hint = ("a ${name} is substituted once, from the file's parameters: a parameter's default "
                            "cannot hold another ${...}, and a lone '${' is plain text")
                ctx.add(locs.get(key, node_loc), f"{kind}.{key}: {e}", hint)
            del params[key]
            invalid.add(key)
    for key, p in decl.items():
        if key not in params and key not in invalid:
            if p.required:
                ctx.add(node_loc, f"{kind} needs parameter {key!r} ({p.describe_type()})",
                        f"add '{key}: ...'" + (f" ({p.doc})" if p.doc else ""))
            else:
                params[key] = p.default


def _parse_include(data: LocDict, ctx: _Ctx, prefix: str) -> Optional[NodeSpec]:
    for key in data:
        if key not in INCLUDE_KEYS:
            ctx.add(data.key_loc(key), f"unknown key {key!r} in an include", did_you_mean(key, INCLUDE_KEYS) or "an include has include, with and name")
    target = data.get("include")
    iloc = data.value_loc("include")
    if not isinstance(target, str) or not target:
        ctx.add(iloc, "'include' takes a file path", "e.g. 'include: grasp.yaml' (relative to this file)")
        return None
    current_dir = os.path.dirname(ctx.include_stack[-1]) if ctx.include_stack else os.getcwd()
    path = os.path.normpath(os.path.join(current_dir, target))
    if not os.path.exists(path):
        here = os.path.dirname(path)
        options = [f for f in os.listdir(here) if f.endswith((".yaml", ".yml"))] if os.path.isdir(here) else []
        ctx.add(iloc, f"included file {target!r} not found (looked in {current_dir})", did_you_mean(os.path.basename(target), options))
        return None
    unfit = locyaml.unreadable_file(path)
    if unfit:
        ctx.add(iloc, f"included path {target!r} {unfit}", "include a task file (.yaml) that holds 'tree:'")
        return None
    apath = os.path.abspath(path)
    if apath in ctx.include_stack:
        chain = " -> ".join(os.path.basename(p) for p in ctx.include_stack[ctx.include_stack.index(apath):] + [apath])
        ctx.add(iloc, f"circular include: {chain}", "an included file must not include itself, directly or not")
        return None
    if len(ctx.include_stack) >= MAX_INCLUDE_DEPTH:
        ctx.add(iloc, f"includes nested deeper than {MAX_INCLUDE_DEPTH} levels")
        return None
    with_ = data.get("with") or {}
    if not isinstance(with_, dict):
        ctx.add(data.value_loc("with"), "'with' must be a mapping of parameter: value")
        with_ = {}
    name = data.get("name")
    if name is not None and not isinstance(name, str):
        ctx.add(data.value_loc("name"), "'name' must be text")
        name = None
    parent_display = ctx.display_stack[-1] if ctx.display_stack else ctx.task_file
    display = target if os.path.isabs(target) else os.path.normpath(os.path.join(os.path.dirname(parent_display), target))
    try:
        sub = locyaml.load(path, display)
    except TreeLoadError as e:
        ctx.problems.extend(e.problems)
        return None
    if not isinstance(sub, dict) or "tree" not in sub:
        ctx.add(iloc, f"included file {target!r} has no 'tree:'", "an included file holds 'parameters:' (optional) and 'tree:'")
        return None
    for key in sub:
        if key not in ("name", "description", "parameters", "tree"):
            ctx.add(sub.key_loc(key), f"{key!r} is not allowed in an included file",
                    "an included file holds only description, parameters and tree; scene and blackboard belong to the task file")
    given_locs = {k: with_.key_loc(k) for k in with_} if isinstance(with_, LocDict) else {}
    params = _file_parameters(sub, ctx, dict(with_), given_locs, include_loc=data.loc)
    ctx.documents.append(sub)  # alive until the load ends: param_sources is keyed by id()
    sub["tree"] = _substitute(sub["tree"], params, ctx, sub.value_loc("tree"), ctx.param_sources)
    ctx.include_stack.append(apath)
    ctx.display_stack.append(display)
    try:
        new_prefix = prefix + name + "/" if name else prefix
        node = _parse_node(sub["tree"], sub.value_loc("tree"), ctx, new_prefix)
    finally:
        ctx.include_stack.pop()
        ctx.display_stack.pop()
    if node is not None and name:
        full = prefix + name
        if full in ctx.names:
            ctx.add(data.value_loc("name"), f"duplicate node name {full!r} (first at {ctx.names[full]})", "rename one")
        else:
            ctx.names[full] = data.value_loc("name")
        node.name = full  # the include's name names its root
    if node is not None:
        declared = sub.get("parameters") if isinstance(sub.get("parameters"), dict) else {}
        for n in node.walk():   # where each parameter taken whole from this file's parameters is set
            for k, (kind, p) in n.param_sources.items():
                if kind == "value" and k not in n.param_origins and p in params:
                    n.param_origins[k] = ParamOrigin(p, display, declared.get(p), given_locs.get(p, iloc), p in with_)
        given_sources = {k: ctx.param_sources[(id(with_), k)] for k in with_ if (id(with_), k) in ctx.param_sources}
        node.includes.append(IncludeInfo(display, name, {k: v for k, v in params.items() if v is not _MISSING},
                                         given_sources, loc=iloc, given_locs=given_locs))
    return node
