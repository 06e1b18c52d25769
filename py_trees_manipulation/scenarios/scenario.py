"""Scenario files: a task plus what its run must show, in named variants.

A scenario file is named ``*.scenario.yaml`` and takes one of two forms.

A whole task file with ``expect:`` (and optionally ``variants:``)::

    name: pick_and_lift
    scene: {...}
    tree: {...}
    expect:
      status: SUCCESS
      time_budget_s: 15
      metrics: {object_lift_m: ">= 0.10"}
    variants:
      heavy: {scene.objects.0.mass_kg: 0.6}
      too_heavy:
        scene.objects.0.mass_kg: 5.0
        expect.status: FAILURE            # a variant may change expectations too
        expect.failed_behaviour: lifted

Or a reference to a task file (path relative to the scenario file)::

    task: ../../examples/pick_and_lift.yaml
    name: pick_and_lift                   # optional (default: the file's stem)
    set: {parameters.lift_m: 0.12}        # optional overrides for every variant
    expect: {...}
    variants: {...}

Variants are named overrides in the ``--set`` syntax (``parameters.NAME``,
``scene.objects.0.mass_kg``, ``blackboard.KEY``, ``tree.NODE.PARAM``, and ``expect.KEY...``).
A variant's ``marks: [NAME, ...]`` adds pytest marks to its test item: ``marks: [extended]`` puts a
variant in the extended set, which the README's test command leaves out (``-m "not extended"`` in
``pyproject.toml``) and ``.ci/run`` runs after it (``pytest -m extended``).
The file as written runs as the variant ``default``; each entry of ``variants`` runs as well.
``${name}`` in the expectations of a reference scenario takes the task's parameters.

:func:`load_scenario` validates the file and every variant (loading each variant's task), and reports
every problem as ``FILE:LINE:COL`` in one :class:`~py_trees_manipulation.located.errors.TreeLoadError`.
:func:`run_scenario` runs one variant headless and checks its expectations.
"""

from __future__ import annotations

import copy
import json
import os
import re
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from ..located import locyaml
from ..located.errors import Loc, Problem, TreeLoadError, did_you_mean
from ..behaviors import registry
from ..trees.loader import TOP_KEYS, load_task
from ..trees.metrics import metric_names
from ..located.locyaml import LocDict
from ..trees.spec import TaskSpec
from .expect import Expectation, Failure, parse_expect, unit_of

SCENARIO_SUFFIX = ".scenario.yaml"
DEFAULT_VARIANT = "default"
#: top-level keys of a scenario that names its task with ``task:``
REFERENCE_KEYS = ("task", "name", "description", "set", "expect", "variants")
_VARIANT_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*$")
_SUBST = re.compile(r"\$\{([^}]*)\}")


def is_scenario_file(path: str) -> bool:
    """True for ``*.scenario.yaml`` (and ``*.scenario.yml``)."""
    name = os.path.basename(str(path))
    return name.endswith(SCENARIO_SUFFIX) or name.endswith(".scenario.yml")


def override_string(key: str, value: Any) -> str:
    """``("scene.objects.0.mass_kg", 0.6)`` -> ``"scene.objects.0.mass_kg=0.6"`` (the value as JSON,
    which the loader reads back as YAML, so strings, lists and mappings survive)."""
    return f"{key}={json.dumps(value, default=str)}"


@dataclass
class Variant:
    """One named variant.

    Attributes:
        name: ``"default"`` or the key under ``variants:``.
        overrides: ``"dotted.path=value"`` strings for the task loader.
        expect_overrides: ``(path under expect, value, loc)`` for ``expect.*`` keys.
        loc: where the variant is written.
        override_locs: where each override is written (to point errors at the file, not ``--set``).
    """

    name: str
    overrides: list[str] = field(default_factory=list)
    expect_overrides: list[tuple[list[str], Any, Loc]] = field(default_factory=list)
    loc: Optional[Loc] = None
    override_locs: dict[str, Loc] = field(default_factory=dict)
    marks: tuple[str, ...] = ()

    @property
    def expects_invalid(self) -> bool:
        """The variant says ``expect.status: INVALID``: the file it makes is meant to be refused by
        ``ptm validate`` (its problems are the test's subject, not a collection error)."""
        for parts, value, _ in self.expect_overrides:
            if parts == ["status"] and isinstance(value, str) and value.strip().upper() == "INVALID":
                return True
            if parts == [] and isinstance(value, dict) and str(value.get("status", "")).strip().upper() == "INVALID":
                return True
        return False


@dataclass
class Scenario:
    """A validated scenario file.

    Attributes:
        file: the scenario file. task_file: the file holding the tree (the same file, or ``task:``).
        name: the scenario's name. description: its description.
        base_overrides: the ``set:`` overrides (reference form), applied before a variant's.
        expect_data: the raw ``expect:`` section (located mapping) or None.
        variants: by name, ``"default"`` first, then in file order.
    """

    file: str
    task_file: str
    name: str
    description: str = ""
    base_overrides: list[str] = field(default_factory=list)
    base_override_locs: dict[str, Loc] = field(default_factory=dict)
    expect_data: Any = None
    variants: dict[str, Variant] = field(default_factory=dict)

    @property
    def has_expect(self) -> bool:
        return self.expect_data is not None

    def load(self, variant: str = DEFAULT_VARIANT, extra_overrides: Sequence[str] = ()) -> tuple[TaskSpec, Expectation]:
        """The task and expectation of one variant, with further ``--set`` overrides (a sweep's).

        Raises:
            KeyError: no such variant.
            TreeLoadError: the variant's task or expectations are invalid.
        """
        v = self.variants[variant]
        locs = dict(self.base_override_locs)
        locs.update(v.override_locs)
        overrides = list(self.base_overrides) + list(v.overrides) + list(extra_overrides)
        try:
            task = load_task(self.task_file, overrides)
        except TreeLoadError as e:
            problems = [_relocate(p, locs, variant) for p in e.problems]
            if variant != DEFAULT_VARIANT and v.loc is not None:  # say which variant broke the task
                problems = [p if p.loc.file == self.file else
                            Problem(p.loc, f"{p.message} (with variant {variant!r} of {v.loc})", p.hint)
                            for p in problems]
            raise TreeLoadError(problems) from None
        if self.task_file != self.file and self.expect_data is not None:
            data = _substitute_params(copy.deepcopy(self.expect_data), task.parameters)
        else:  # the task file's own section, ${...} already substituted by the loader
            data = copy.deepcopy(task.expect)
        for parts, value, loc in v.expect_overrides:
            data = _set_path(data, parts, value, loc, self.file)
        return task, parse_expect(data, self.file, known_metrics=known_metrics(task))


def known_metrics(task: TaskSpec) -> frozenset[str]:
    """The metric names a run of ``task`` may report: every built-in one
    (:data:`~py_trees_manipulation.trees.metrics.RUN_METRICS`) and the ``METRICS`` its tree's
    behaviours declare (plugins)."""
    classes = {registry.lookup(n.type) for n in task.tree.walk() if n.category == "behaviour"}
    return metric_names(c for c in classes if c is not None)


def invalid_result(scenario: Scenario, variant: str) -> Optional["ScenarioResult"]:
    """For a variant that expects ``INVALID``: the :class:`ScenarioResult` of loading it (status
    INVALID with the problems ``ptm validate`` would print as the error, checked against the
    variant's expectations), or None when the file loads (then it runs as any other variant)."""
    v = scenario.variants[variant]
    if not v.expects_invalid:
        return None
    try:
        scenario.load(variant)
        return None
    except TreeLoadError as e:
        error = str(e)
    data = None  # nothing ran: only what the variant itself expects applies (status, error)
    for parts, value, loc in v.expect_overrides:
        data = _set_path(data, parts, value, loc, scenario.file)
    expectation = parse_expect(data, scenario.file)
    expectation.time_budget_s = None  # nothing ran
    summary = {"task": scenario.name, "file": scenario.task_file, "status": "INVALID", "error": error,
               "sim_time_s": 0.0, "metrics": {}}
    return ScenarioResult(summary, expectation.check(summary))


def _relocate(p: Problem, locs: dict[str, Loc], variant: str) -> Problem:
    """Point a ``--set KEY=VALUE`` problem at the line of the scenario that wrote it."""
    if p.loc.line > 0 or not p.loc.file.startswith("--set "):
        return p
    expr = p.loc.file[len("--set "):]
    loc = locs.get(expr)
    if loc is None and expr.endswith("..."):  # a long override, shortened in the message (override_label)
        loc = next((l for k, l in locs.items() if k.startswith(expr[:-3])), None)
    if loc is None:  # "tree.NODE" (an unknown node name): match the first override on it
        loc = next((l for k, l in locs.items() if k.startswith(expr + ".")), None)
    if loc is None:
        return p
    where = f" (variant {variant!r})" if variant != DEFAULT_VARIANT else ""
    return Problem(loc, p.message + where, p.hint)


def _substitute_params(data: Any, params: dict[str, Any]) -> Any:
    if isinstance(data, str):
        whole = _SUBST.fullmatch(data.strip())
        if whole and whole.group(1) in params:
            return params[whole.group(1)]
        return _SUBST.sub(lambda m: str(params[m.group(1)]) if m.group(1) in params else m.group(0), data)
    if isinstance(data, dict):
        for k in list(data):
            data[k] = _substitute_params(data[k], params)
    elif isinstance(data, list):
        for i in range(len(data)):
            data[i] = _substitute_params(data[i], params)
    return data


def _new_locdict(loc: Loc) -> LocDict:
    d = LocDict()
    d.loc, d.key_locs, d.value_locs = loc, {}, {}
    return d


def _set_path(data: Any, parts: list[str], value: Any, loc: Loc, file: str) -> Any:
    """``expect`` with ``parts`` (below ``expect``) set to ``value``, written at ``loc``."""
    if not parts:
        return value
    root = data if isinstance(data, dict) else _new_locdict(loc)
    node = root
    for part in parts[:-1]:
        nxt = node.get(part)
        if not isinstance(nxt, dict):
            nxt = _new_locdict(loc)
            node[part] = nxt
            if isinstance(node, LocDict):
                node.key_locs[part] = node.value_locs[part] = loc
        node = nxt
    node[parts[-1]] = value
    if isinstance(node, LocDict):
        node.key_locs[parts[-1]] = node.value_locs[parts[-1]] = loc
    return root


_MARK_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _without(d: Any, key: str) -> Any:
    """A copy of the located mapping ``d`` without ``key`` (its other keys keep their locations)."""
    out = copy.copy(d)
    dict.pop(out, key, None)
    return out


def _parse_overrides(data: Any, where: Loc, what: str, problems: list[Problem]) -> tuple[list[str], dict[str, Loc], list[tuple[list[str], Any, Loc]]]:
    """A mapping ``{dotted.key: value}`` -> (loader overrides, their locations, expect overrides)."""
    overrides: list[str] = []
    locs: dict[str, Loc] = {}
    expect_ov: list[tuple[list[str], Any, Loc]] = []
    if data is None:
        return overrides, locs, expect_ov
    if not isinstance(data, dict):
        problems.append(Problem(where, f"{what} is a mapping of dotted.key: value",
                                "e.g. {scene.objects.0.mass_kg: 0.6, parameters.lift_m: 0.2}"))
        return overrides, locs, expect_ov
    for key, value in data.items():
        kloc = data.key_loc(key) if isinstance(data, LocDict) else where
        if not isinstance(key, str) or "=" in key or not all(key.split(".")):
            problems.append(Problem(kloc, f"{what}: {key!r} is not a dotted key", "e.g. scene.objects.0.mass_kg"))
            continue
        parts = key.split(".")
        if parts[0] == "expect":
            expect_ov.append((parts[1:], value, kloc))
            continue
        if parts[0] not in TOP_KEYS or parts[0] in ("variants", "name", "description"):
            allowed = ("parameters", "scene", "blackboard", "tree", "expect")
            problems.append(Problem(kloc, f"{what}: cannot override {parts[0]!r}",
                                    did_you_mean(parts[0], allowed) or f"override one of {', '.join(allowed)}"))
            continue
        expr = override_string(key, value)
        overrides.append(expr)
        locs[expr] = kloc
    return overrides, locs, expect_ov


def _names_its_task(task_file: str) -> str:
    """``"is a scenario that names its own task (task: X): name X here"`` when ``task_file`` is a
    reference scenario itself, else ``""`` (its own problems are reported when it loads)."""
    try:
        doc = locyaml.load(task_file)
    except TreeLoadError:
        return ""
    if isinstance(doc, dict) and "task" in doc and "tree" not in doc:
        return f"is a scenario that names its own task (task: {doc['task']}): name that task file here"
    return ""


def load_scenario(path: str) -> Scenario:
    """Read and validate a scenario file, loading every variant's task and expectations.

    Args:
        path: a ``*.scenario.yaml``; a plain task file works too (its ``expect`` and ``variants``
            sections apply, if any; the suffix is only what the pytest plugin collects).

    Raises:
        TreeLoadError: every problem found in the file, its task and its variants, as
            ``FILE:LINE:COL: what; hint`` lines.
    """
    doc = locyaml.load(path)
    top = getattr(doc, "loc", Loc(path, 1, 1))
    if not isinstance(doc, dict):
        raise TreeLoadError.single(top, "a scenario file is a mapping: a task with 'expect:', or 'task: FILE' with 'expect:'")
    problems: list[Problem] = []
    stem = os.path.basename(path)
    for suffix in (SCENARIO_SUFFIX, ".scenario.yml", ".yaml", ".yml"):
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    if "task" in doc:
        for key in doc:
            if key not in REFERENCE_KEYS:
                problems.append(Problem(doc.key_loc(key), f"unknown key {key!r} in a scenario that names its task",
                                        did_you_mean(str(key), REFERENCE_KEYS)
                                        or ("scene and tree belong in the task file" if key in TOP_KEYS else f"allowed: {', '.join(REFERENCE_KEYS)}")))
        target = doc["task"]
        if not isinstance(target, str) or not target:
            raise TreeLoadError(problems + [Problem(doc.value_loc("task"), "'task' takes the path of a task file",
                                                    "relative to this file, e.g. 'task: ../../examples/pick_and_lift.yaml'")])
        task_file = os.path.normpath(os.path.join(os.path.dirname(path), target))
        if not os.path.exists(task_file):
            here = os.path.dirname(task_file)
            options = [f for f in os.listdir(here) if f.endswith((".yaml", ".yml"))] if os.path.isdir(here) else []
            raise TreeLoadError(problems + [Problem(doc.value_loc("task"), f"task file {target!r} not found (looked for {task_file})",
                                                    did_you_mean(os.path.basename(target), options))])
        unfit = locyaml.unreadable_file(task_file)
        if not unfit and os.path.samefile(task_file, path):
            unfit = "is this scenario file itself"
        if not unfit:
            unfit = _names_its_task(task_file)
        if unfit:
            raise TreeLoadError(problems + [Problem(doc.value_loc("task"), f"task file {target!r} {unfit}",
                                                    "'task' names the task file that holds 'scene:' and 'tree:', "
                                                    "e.g. 'task: ../../examples/pick_and_lift.yaml'")])
        base, base_locs, base_expect = _parse_overrides(doc.get("set"), doc.value_loc("set"), "'set'", problems)
        for _, _, loc in base_expect:
            problems.append(Problem(loc, "'set' cannot change expectations", "edit 'expect:' itself"))
        expect_data = doc.get("expect")
        name = doc.get("name")
        desc = doc.get("description")
    else:
        task_file, base, base_locs = path, [], {}
        expect_data = doc.get("expect")
        name, desc = doc.get("name"), doc.get("description")
        if "tree" not in doc:
            problems.append(Problem(top, "a scenario file needs 'tree:' (a whole task) or 'task: FILE'",
                                    "e.g. 'task: ../../examples/pick_and_lift.yaml' plus 'expect:'"))
    for key, val in (("name", name), ("description", desc)):
        if val is not None and not isinstance(val, str):
            problems.append(Problem(doc.value_loc(key), f"'{key}' must be text"))
    scenario = Scenario(file=path, task_file=task_file, name=name if isinstance(name, str) and name else stem,
                        description=desc if isinstance(desc, str) else "", base_overrides=base,
                        base_override_locs=base_locs, expect_data=expect_data)
    scenario.variants[DEFAULT_VARIANT] = Variant(DEFAULT_VARIANT, loc=top)
    raw_variants = doc.get("variants")
    if raw_variants is not None:
        if not isinstance(raw_variants, dict):
            problems.append(Problem(doc.value_loc("variants"), "'variants' is a mapping of name: {dotted.key: value}",
                                    "e.g. 'variants: {heavy: {scene.objects.0.mass_kg: 0.6}}'"))
        else:
            for vname, body in raw_variants.items():
                vloc = raw_variants.key_loc(vname)
                if not isinstance(vname, str) or not _VARIANT_RE.match(vname):
                    problems.append(Problem(vloc, f"invalid variant name {vname!r}", "use letters, digits, _ . and -"))
                    continue
                if vname == DEFAULT_VARIANT:
                    problems.append(Problem(vloc, f"'{DEFAULT_VARIANT}' is the file as written; it cannot be a variant",
                                            "pick another name"))
                    continue
                marks: tuple[str, ...] = ()
                if isinstance(body, dict) and "marks" in body:
                    raw = body["marks"]
                    mloc = body.key_loc("marks") if isinstance(body, LocDict) else vloc
                    body = {k: v for k, v in body.items() if k != "marks"} if not isinstance(body, LocDict) \
                        else _without(body, "marks")
                    if isinstance(raw, str):
                        raw = [raw]
                    if not isinstance(raw, list) or not all(isinstance(m, str) and _MARK_RE.match(m) for m in raw):
                        problems.append(Problem(mloc, f"variant {vname!r}: marks is a list of pytest mark names",
                                                "e.g. marks: [extended]"))
                    else:
                        marks = tuple(raw)
                ov, locs, exp_ov = _parse_overrides(body, raw_variants.value_loc(vname), f"variant {vname!r}", problems)
                scenario.variants[vname] = Variant(vname, ov, exp_ov, vloc, locs, marks)
    if problems:
        raise TreeLoadError(problems)
    default_msgs: set[tuple[Loc, str]] = set()
    for vname in scenario.variants:
        try:
            scenario.load(vname)
        except TreeLoadError as e:
            if scenario.variants[vname].expects_invalid:
                continue  # run_invalid checks its problems
            for p in e.problems:
                if vname == DEFAULT_VARIANT:
                    default_msgs.add((p.loc, p.message))
                elif (p.loc, p.message.split(" (with variant ")[0]) in default_msgs:
                    continue  # the file's own problem, already reported once
                if p not in problems:
                    problems.append(p)
    if problems:
        raise TreeLoadError(problems)
    return scenario


# ---------------------------------------------------------------------------------------------------
@dataclass
class ScenarioResult:
    """One scenario run.

    Attributes:
        summary: the runner's summary (``status``, ``sim_time_s``, ``metrics``, ``failed_behaviour``...).
        failures: the expectations that did not hold (empty: passed).
        log_path: the MCAP run log, when one was written.
    """

    summary: dict[str, Any]
    failures: list[Failure]
    log_path: Optional[str] = None

    @property
    def passed(self) -> bool:
        return not self.failures


def run_scenario(task: TaskSpec, expectation: Expectation, *, seed: Optional[int] = None, tick_hz: float = 30.0,
                 timeout_s: Optional[float] = None, log_path: Optional[str] = None, backend: Any = None,
                 metadata: Optional[dict[str, Any]] = None) -> ScenarioResult:
    """Run ``task`` headless (sim backend unless ``backend`` is given) and check ``expectation``.

    Args:
        task, expectation: from :meth:`Scenario.load`.
        seed: random seed (overrides the scene's).
        tick_hz: tree tick rate, Hz (backend time).
        timeout_s: sim seconds before giving up when the expectation has no ``time_budget_s``
            (default: the runner's, 300 s). A time budget is the timeout.
        log_path: write the MCAP run log here (when :mod:`py_trees_manipulation.viewer.runlog` is
            available).
        backend: an existing backend (tests); by default a SimBackend, closed at the end.
        metadata: extra fields for the run log's metadata.

    Returns:
        ScenarioResult. Never raises for a failing run: an exception inside the run becomes status
        ERROR with the error in the summary.
    """
    from ..trees.runner import RunOptions, run_task

    observers: list[Any] = []
    written = None
    if log_path:
        try:
            from ..viewer.runlog import RunLogger
        except ImportError:  # the viewer is optional
            RunLogger = None  # type: ignore[assignment,misc]
        if RunLogger is not None:
            observers.append(RunLogger(log_path, metadata=dict(metadata or {})))
            written = str(log_path)
    timeout = expectation.time_budget_s if expectation.time_budget_s is not None else timeout_s
    opts = RunOptions(backend="sim", seed=seed, tick_hz=tick_hz, timeout_s=timeout, display=False, observers=observers)
    try:
        result = run_task(task, opts, backend=backend)
        summary = result.summary
    except ValueError as e:  # e.g. a sim run without a scene
        summary = {"task": task.name, "file": task.file, "status": "INVALID", "error": str(e), "metrics": {}}
    summary.pop("_exception", None)
    if written and not os.path.exists(written):
        written = None
    failures = expectation.check(summary)
    if expectation.refused(summary) and not failures:
        failures = verify_suggested_base(task, expectation, summary, seed=seed, tick_hz=tick_hz)
    return ScenarioResult(summary, failures, written)


def with_suggested_base(task: TaskSpec, text: str) -> Optional[TaskSpec]:
    """``task`` with the base pose a refusal's ``text`` suggests applied, as its printed ``--set
    'scene.robots.N.base_pose={...}'`` applies it; None when the text names none."""
    import dataclasses

    from .expect import SUGGESTED_BASE

    m = SUGGESTED_BASE.search(text or "")
    if m is None or not task.scene:
        return None
    scene = copy.deepcopy(task.scene)
    scene["robots"][int(m.group(2))]["base_pose"] = json.loads(json.dumps(locyaml.loads(m.group(3), "--set")))
    return dataclasses.replace(task, scene=scene)


def with_suggested_place(task: TaskSpec, text: str) -> Optional[TaskSpec]:
    """``task`` with the place spot a refusal's ``text`` suggests applied (its printed ``place it there
    with --set 'parameters.place_position=[x, y, z]'``: the place moved wherever the file gives it,
    :func:`~py_trees_manipulation.trees.plan_check.with_place`); None when the text names none."""
    from ..trees.plan_check import with_place
    from .expect import SUGGESTED_PLACE

    m = SUGGESTED_PLACE.search(text or "")
    if m is None or not task.scene or not (task.scene.get("task") or {}).get("place_position"):
        return None
    return with_place(task, json.loads(m.group(2)))


def verify_suggested_base(task: TaskSpec, expectation: Expectation, summary: dict[str, Any], *,
                          seed: Optional[int] = None, tick_hz: float = 30.0) -> list[Failure]:
    """``or_refused`` (issue 33 item 2, B4): the base pose, or the place spot, the refused run names,
    applied to the task, must pass ``ptm validate --plan``
    (:func:`~py_trees_manipulation.trees.plan_check.plan_check`) and, with ``or_refused: runs``, the
    run from it must meet the rest of the expectation. Records ``summary["suggested_base"]`` or
    ``summary["suggested_place"]`` (the ``--set``, and what it passed); returns the failures."""
    import dataclasses

    from ..trees.plan_check import plan_check
    from .expect import SUGGESTED_BASE, SUGGESTED_PLACE

    fb = summary.get("failed_behaviour") or {}
    text = f"{fb.get('feedback') or ''} {summary.get('error') or ''}"
    fixed, what, found = with_suggested_base(task, text), "base", SUGGESTED_BASE.search(text)
    if fixed is None:
        fixed, what, found = with_suggested_place(task, text), "place", SUGGESTED_PLACE.search(text)
    loc = expectation.locs.get("or_refused", expectation.loc or Loc(expectation.file, 1, 1))
    if fixed is None or found is None:
        return [Failure("or_refused", "a refusal naming a base pose or a place", repr(text.strip()), loc)]
    override = found.group(1)
    record: dict[str, Any] = {"set": override}
    summary[f"suggested_{what}"] = record
    problems = plan_check(fixed, seed=seed)
    record["validates"] = not problems
    if problems:
        return [Failure("or_refused", f"the suggested {what} ({override}), applied, passes ptm validate --plan",
                        str(problems[0]), loc)]
    if expectation.or_refused != "runs":
        return []
    again = run_scenario(fixed, dataclasses.replace(expectation, or_refused=None), seed=seed, tick_hz=tick_hz)
    record["status"] = again.summary.get("status")
    record["metrics"] = again.summary.get("metrics")
    return [dataclasses.replace(f, subject=f"or_refused: with the suggested {what}, {f.subject}",
                                detail=(f"{f.detail}; " if f.detail else "") + f"({override})")
            for f in again.failures]


def format_report(result: ScenarioResult, title: str) -> str:
    """A failure report: the failing assertions (expected vs actual with units), the behaviour that
    failed with its feedback, the error, the metrics and the run log's path."""
    s = result.summary
    n = len(result.failures)
    first = result.failures[0].message if n else "all expectations held"
    lines = [f"{title}: {first}" + (f" (+{n - 1} more)" if n > 1 else ""),
             f"  run: status {s.get('status')} after {s.get('sim_time_s', 0):g} s sim, {s.get('ticks', 0)} ticks"]
    if n > 1:
        lines.append(f"  {n} expectations failed:")
        for f in result.failures:
            lines.append(f"    {f.message}")
    fb = s.get("failed_behaviour")
    if fb:
        where = f" ({fb['location']})" if fb.get("location") else ""
        lines.append(f"  failed behaviour: {fb.get('type')} '{fb.get('name')}'{where}: {fb.get('feedback')}")
    if s.get("error"):
        lines.append(f"  error: {s['error']}")
    if s.get("traceback"):
        lines.append("  " + str(s["traceback"]).rstrip().replace("\n", "\n  "))
    metrics = s.get("metrics") or {}
    shown = []
    for k, v in metrics.items():
        if isinstance(v, (dict, list)):
            continue
        unit = unit_of(str(k)) if isinstance(v, (int, float)) and not isinstance(v, bool) else ""
        shown.append(f"{k}={v:.6g}" if isinstance(v, float) else f"{k}={v}")
        if unit:
            shown[-1] += f" {unit}"
    if shown:
        lines.append("  metrics: " + ", ".join(shown))
    if result.log_path:
        lines.append(f"  run log: {result.log_path}  (replay: ptm view {result.log_path})")
    return "\n".join(lines)
