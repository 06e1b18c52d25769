"""The ``expect:`` section of a scenario: what a run's summary must show.

Format (every key optional)::

    expect:
      status: SUCCESS                 # SUCCESS | FAILURE | TIMEOUT | ERROR | INVALID | any
                                      #   default: SUCCESS, or FAILURE with failed_behaviour
      time_budget_s: 12               # sim seconds: the run's timeout, and sim_time_s <= 12
      failed_behaviour: lift          # the behaviour the failure is blamed on (by node name), or
                                      #   {name: lift, type: MoveCartesian, feedback: "regex"}
      error: "starts 18 mm inside"    # regex searched in the run's error: a refusal before the first
                                      #   tick, or (status INVALID) what `ptm validate` says of the file
      metrics:                        # assertions on summary["metrics"]
        object_lift_m: ">= 0.10"
        max_fingertip_force_n: "< 5"
        place_error_m: "0.0 +- 0.02"  # |actual - 0.0| <= 0.02 (also "±")
        door_angle_deg: {min: 60, max: 95}
        grasp_offset_m: {approx: 0.0, tol: 0.005}     # or {approx: x, rel: 0.05} (5 %)
        object_dropped: false         # plain values compare equal (numbers within 1e-9)
        target_object: {equals: box}
      object_max_lift_m: ">= 0.1"     # a key that is not one of the above is a metric too
      or_refused: validates           # or a FAILURE before the object moved that names a base pose
                                      #   (--set 'scene.robots.N.base_pose=...') from which the task
                                      #   passes `ptm validate --plan` (runs: and the run meets the
                                      #   rest of this section); the other keys then apply to SUCCESS

Comparisons as text: ``OP NUMBER`` with OP one of ``>= > <= < == !=``, ``X +- TOL`` (or
``X ± TOL``) and ``LO .. HI`` (inclusive). Units come from the metric's name suffix
(``_m`` m, ``_n`` N, ``_deg`` deg, ``_s`` s, ...; :func:`unit_of`) and appear in messages.

:func:`parse_expect` validates the section and reports every problem as ``FILE:LINE:COL`` in one
:class:`~py_trees_manipulation.located.errors.TreeLoadError`; :meth:`Expectation.check` compares a
run summary (:func:`~py_trees_manipulation.trees.runner.run_task`) and returns the
:class:`Failure` list, each naming the assertion, the expected and the actual value.
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass, field
from typing import Any, Collection, Optional

from ..located.errors import Loc, Problem, TreeLoadError, did_you_mean

#: run statuses the runner reports (``summary["status"]``)
STATUSES = ("SUCCESS", "FAILURE", "TIMEOUT", "ERROR", "INVALID", "INTERRUPTED")
RESERVED_KEYS = ("status", "time_budget_s", "failed_behaviour", "error", "metrics", "or_refused")
#: what ``or_refused`` asks of the suggested base: it passes ``ptm validate --plan`` (validates), and the
#: run from it meets the expectation (runs)
OR_REFUSED = ("validates", "runs")
#: a base pose a refusal suggests, as it prints it
SUGGESTED_BASE = re.compile(r"--set '(scene\.robots\.(\d+)\.base_pose=(\{[^']*\}))'")
#: a place spot a refusal suggests (issue 33, B4), as it prints it: the first ``--set`` of the fix
SUGGESTED_PLACE = re.compile(r"place it there with --set '((?:parameters\.\w+|scene\.task\.place_position)="
                             r"(\[[^\]']*\]))'")
FAILED_BEHAVIOUR_KEYS = ("name", "type", "feedback")
OPS = (">=", "<=", "==", "!=", ">", "<")
#: default tolerance of a plain-number equality (``metric: 3``), absolute and relative
EQ_ABS_TOL, EQ_REL_TOL = 1e-9, 1e-9

#: unit by name suffix (the project's naming convention: STYLE.md section 5.11)
UNIT_SUFFIXES = (
    ("_mps", "m/s"), ("_radps", "rad/s"), ("_nm", "N·m"), ("_hz", "Hz"), ("_kg", "kg"),
    ("_deg", "deg"), ("_rad", "rad"), ("_mm", "mm"), ("_m", "m"), ("_n", "N"), ("_s", "s"),
)

_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_OP_RE = re.compile(rf"^\s*(>=|<=|==|!=|>|<)\s*({_NUM})\s*$")
_PM_RE = re.compile(rf"^\s*({_NUM})\s*(?:\+-|\+/-|±)\s*({_NUM})\s*$")
_RANGE_RE = re.compile(rf"^\s*({_NUM})\s*\.\.\s*({_NUM})\s*$")


def unit_of(name: str) -> str:
    """Unit of a metric from its name suffix: ``"object_lift_m"`` -> ``"m"``, ``"x"`` -> ``""``."""
    low = name.lower()
    for suffix, unit in UNIT_SUFFIXES:
        if low.endswith(suffix):
            return unit
    return ""


def _fmt(x: Any, unit: str = "") -> str:
    if isinstance(x, bool) or x is None:
        text = str(x).lower() if isinstance(x, bool) else "null"
    elif isinstance(x, float):
        text = f"{x + 0.0:.6g}" if x != 0 else "0"  # no "-0"
    else:
        text = str(x)
    return f"{text} {unit}" if unit and isinstance(x, (int, float)) and not isinstance(x, bool) else text


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


@dataclass(frozen=True)
class Comparison:
    """One test of a value.

    Attributes:
        op: ``">=" ">" "<=" "<" "==" "!="`` (numbers), ``"approx"`` (``|actual - value| <= tol``,
            ``tol`` absolute or ``rel * |value|``), ``"range"`` (``value <= actual <= hi``),
            ``"equals"`` (any value; numbers within :data:`EQ_ABS_TOL` / :data:`EQ_REL_TOL`).
        value: the reference value (the lower bound for ``range``).
        tol: absolute tolerance (``approx``). rel: relative tolerance (``approx``).
        hi: upper bound (``range``).
    """

    op: str
    value: Any
    tol: Optional[float] = None
    rel: Optional[float] = None
    hi: Optional[float] = None

    def holds(self, actual: Any) -> bool:
        """True when ``actual`` passes. A non-number never passes a numeric test; NaN never passes."""
        if self.op == "equals":
            if isinstance(self.value, bool) or isinstance(actual, bool):  # True is not 1 here
                return isinstance(actual, bool) and isinstance(self.value, bool) and actual == self.value
            if _is_number(self.value) and _is_number(actual):
                return math.isclose(float(actual), float(self.value), rel_tol=EQ_REL_TOL, abs_tol=EQ_ABS_TOL)
            return bool(actual == self.value)
        if not _is_number(actual) or math.isnan(float(actual)):
            return False
        a, v = float(actual), float(self.value)
        if self.op == ">=":
            return a >= v
        if self.op == ">":
            return a > v
        if self.op == "<=":
            return a <= v
        if self.op == "<":
            return a < v
        if self.op == "==":
            return math.isclose(a, v, rel_tol=EQ_REL_TOL, abs_tol=EQ_ABS_TOL)
        if self.op == "!=":
            return not math.isclose(a, v, rel_tol=EQ_REL_TOL, abs_tol=EQ_ABS_TOL)
        if self.op == "approx":
            return abs(a - v) <= self.tolerance()
        if self.op == "range":
            assert self.hi is not None
            return v <= a <= float(self.hi)
        raise ValueError(f"unknown comparison {self.op!r}")  # pragma: no cover - parse_comparison guards

    def tolerance(self) -> float:
        """The absolute tolerance of an ``approx`` comparison."""
        tol = self.tol if self.tol is not None else 0.0
        if self.rel is not None:
            tol = max(tol, self.rel * abs(float(self.value)))
        return tol

    def describe(self, unit: str = "") -> str:
        """``">= 0.1 m"``, ``"0 ± 0.02 m"``, ``"in [60, 95] deg"``, ``"== box"``."""
        if self.op == "approx":
            if self.rel is not None and self.tol is None:
                return f"{_fmt(self.value, unit)} ± {self.rel * 100:g} %"
            return f"{_fmt(self.value)} ± {_fmt(self.tolerance(), unit)}"
        if self.op == "range":
            return f"in [{_fmt(self.value)}, {_fmt(self.hi)}]" + (f" {unit}" if unit else "")
        if self.op == "equals":
            return f"== {_fmt(self.value, unit)}"
        return f"{self.op} {_fmt(self.value, unit)}"

    def miss(self, actual: Any, unit: str = "") -> str:
        """By how much a numeric ``actual`` misses (``"short by 0.07 m"``), or ``""``."""
        if not _is_number(actual) or math.isnan(float(actual)):
            return ""
        a, v = float(actual), float(self.value)
        if self.op in (">=", ">") and a < v or self.op == "range" and a < v:
            return f"short by {_fmt(v - a, unit)}"
        if self.op in ("<=", "<") and a > v:
            return f"over by {_fmt(a - v, unit)}"
        if self.op == "range" and self.hi is not None and a > float(self.hi):
            return f"over by {_fmt(a - float(self.hi), unit)}"
        if self.op == "approx":
            return f"off by {_fmt(abs(a - v), unit)}"
        if self.op in ("==", "equals") and _is_number(self.value):
            return f"off by {_fmt(abs(a - v), unit)}"
        return ""


@dataclass(frozen=True)
class Failure:
    """One expectation a run did not meet.

    Attributes:
        subject: what was tested: ``"status"``, ``"time_budget_s"``, ``"failed_behaviour"`` or
            ``"metrics.NAME"``.
        expected: the expectation as text (``"object_lift_m >= 0.1 m"``).
        actual: the run's value as text (``"0.032 m"``, ``"missing"``).
        loc: where the expectation is written.
        detail: the miss (``"short by 0.068 m"``) or an explanation.
    """

    subject: str
    expected: str
    actual: str
    loc: Loc
    detail: str = ""

    @property
    def message(self) -> str:
        """``expected object_lift_m >= 0.1 m, got 0.032 m (short by 0.068 m) [file:12:5]``."""
        text = f"expected {self.expected}, got {self.actual}"
        if self.detail:
            text += f" ({self.detail})"
        return f"{text} [{self.loc}]"

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class MetricExpectation:
    """``name`` must pass ``comparison``; ``loc`` is where it is written; ``unit`` from the name."""

    name: str
    comparison: Comparison
    loc: Loc
    unit: str = ""


@dataclass
class Expectation:
    """A parsed ``expect:`` section.

    Attributes:
        status: the required ``summary["status"]``, or None for any.
        time_budget_s: sim seconds the run may take (None: no budget).
        failed_behaviour: ``{"name"?, "type"?, "feedback"?}`` the failure must be blamed on, or None.
        error: a regular expression ``summary["error"]`` must contain (a refusal before the first
            tick; with status ``INVALID`` the file's problems as ``ptm validate`` prints them), or None.
        metrics: metric assertions in file order.
        locs: where ``status``, ``time_budget_s`` and ``failed_behaviour`` are written.
        file: the file the section came from.
        or_refused: ``"validates"`` / ``"runs"``: a FAILURE that is a refusal before the object moved
            naming a base pose or a place spot is accepted too (:meth:`refusal_failures`; the base or
            the spot itself is checked by
            :func:`~py_trees_manipulation.scenarios.scenario.verify_suggested_base`); None: not.
    """

    status: Optional[str] = "SUCCESS"
    time_budget_s: Optional[float] = None
    failed_behaviour: Optional[dict[str, str]] = None
    error: Optional[str] = None
    metrics: list[MetricExpectation] = field(default_factory=list)
    locs: dict[str, Loc] = field(default_factory=dict)
    file: str = "<expect>"
    loc: Optional[Loc] = None
    or_refused: Optional[str] = None

    def refused(self, summary: dict[str, Any]) -> bool:
        """The run is the refusal ``or_refused`` accepts instead of the rest of the section: a FAILURE."""
        return self.or_refused is not None and summary.get("status") == "FAILURE"

    def refusal_failures(self, summary: dict[str, Any]) -> list[Failure]:
        """For a refused run (:meth:`refused`): it must name a base pose (its failed behaviour's
        feedback or its error) and not have moved the task's object (``object_max_lift_m`` under 1 cm,
        not dropped)."""
        out: list[Failure] = []
        loc = self._loc("or_refused")
        fb = summary.get("failed_behaviour") or {}
        text = f"{fb.get('feedback') or ''} {summary.get('error') or ''}"
        if not SUGGESTED_BASE.search(text) and not SUGGESTED_PLACE.search(text):
            who = f"{fb.get('type')} '{fb.get('name')}'" if fb else "the run"
            out.append(Failure("or_refused", "a refusal naming a base pose (--set 'scene.robots.N.base_pose=...') "
                               "or a place (place it there with --set 'parameters.NAME=[x, y, z]')",
                               f"{who}: {text.strip()!r}", loc))
        m = summary.get("metrics") or {}
        lift = m.get("object_max_lift_m", m.get("object_lift_m"))
        if _is_number(lift) and float(lift) > 0.01:
            out.append(Failure("or_refused", "a refusal before the object moved (object_max_lift_m <= 0.01 m)",
                               _fmt(lift, "m"), loc))
        if m.get("object_dropped") is True:
            out.append(Failure("or_refused", "a refusal before the object moved (object_dropped false)", "true", loc))
        return out

    @property
    def given(self) -> bool:
        """True when the section asserted anything beyond the default status."""
        return bool(self.locs or self.metrics)

    def _loc(self, key: str) -> Loc:
        return self.locs.get(key, self.loc or Loc(self.file, 1, 1))

    def check(self, summary: dict[str, Any]) -> list[Failure]:
        """Compare a run summary; returns the failures (empty: every expectation holds).

        Args:
            summary: the runner's summary (``status``, ``sim_time_s``, ``metrics``,
                ``failed_behaviour``, ``error``).
        """
        if self.refused(summary):
            return self.refusal_failures(summary)
        out: list[Failure] = []
        status = summary.get("status")
        if self.status is not None and status != self.status:
            detail = ""
            fb = summary.get("failed_behaviour")
            if fb:
                detail = f"blamed on {fb.get('type')} '{fb.get('name')}'"
            elif summary.get("error"):
                detail = str(summary["error"])
            out.append(Failure("status", f"status {self.status}", str(status), self._loc("status"), detail))
        if self.time_budget_s is not None:
            t = summary.get("sim_time_s")
            if status == "TIMEOUT" or not _is_number(t) or float(t) > self.time_budget_s:
                detail = "still running when the budget ran out" if status == "TIMEOUT" else ""
                actual = _fmt(t, "s") if _is_number(t) else "no sim time"
                out.append(Failure("time_budget_s", f"sim_time_s <= {_fmt(self.time_budget_s, 's')} (time_budget_s)",
                                   actual, self._loc("time_budget_s"), detail))
        if self.failed_behaviour is not None:
            fb = summary.get("failed_behaviour") or {}
            want = self.failed_behaviour
            bad = []
            if "name" in want and fb.get("name") != want["name"]:
                bad.append("name")
            if "type" in want and fb.get("type") != want["type"]:
                bad.append("type")
            if "feedback" in want and not re.search(want["feedback"], str(fb.get("feedback") or "")):
                bad.append("feedback")
            if bad:
                exp = ", ".join(f"{k} {'~ ' if k == 'feedback' else ''}{want[k]!r}" for k in FAILED_BEHAVIOUR_KEYS if k in want)
                act = (f"{fb.get('type')} '{fb.get('name')}' (feedback: {fb.get('feedback')!r})" if fb
                       else f"no failed behaviour (status {status})")
                out.append(Failure("failed_behaviour", f"failed_behaviour {exp}", act, self._loc("failed_behaviour")))
        if self.error is not None and not re.search(self.error, str(summary.get("error") or "")):
            out.append(Failure("error", f"error ~ {self.error!r}", repr(summary.get("error")), self._loc("error")))
        metrics = summary.get("metrics") or {}
        for m in self.metrics:
            expected = f"{m.name} {m.comparison.describe(m.unit)}"
            if m.name not in metrics:
                have = ", ".join(sorted(str(k) for k in metrics)) or "none"
                out.append(Failure(f"metrics.{m.name}", expected, "missing", m.loc, f"the run reported metrics: {have}"))
                continue
            actual = metrics[m.name]
            if not m.comparison.holds(actual):
                out.append(Failure(f"metrics.{m.name}", expected, _fmt(actual, m.unit), m.loc,
                                   m.comparison.miss(actual, m.unit)))
        return out


# ---------------------------------------------------------------------------------------------------
def _key_loc(data: Any, key: Any, fallback: Loc) -> Loc:
    f = getattr(data, "key_loc", None)
    return f(key) if callable(f) and getattr(data, "key_locs", None) is not None else fallback


def _value_loc(data: Any, key: Any, fallback: Loc) -> Loc:
    f = getattr(data, "value_loc", None)
    return f(key) if callable(f) and getattr(data, "value_locs", None) is not None else fallback


def _number(x: Any) -> Optional[float]:
    return float(x) if _is_number(x) and math.isfinite(float(x)) else None


def parse_comparison(value: Any, loc: Loc, name: str = "") -> Comparison:
    """One metric's expectation -> :class:`Comparison`.

    Args:
        value: ``">= 0.1"``, ``"0 +- 0.02"``, ``"60 .. 95"``, ``{approx: x, tol: t}``,
            ``{approx: x, rel: r}``, ``{min: a, max: b}`` (either may be left out), ``{equals: v}``,
            or a plain number, bool or null (equality).
        loc: where ``value`` is written (for the error).
        name: the metric (for the error).

    Raises:
        TreeLoadError: the value is not one of the forms above.
    """
    hint = "write e.g. '>= 0.10', '< 5', '0.0 +- 0.02', '60 .. 95', {approx: 0.0, tol: 0.02} or {min: 60}"
    what = f"expectation for {name!r}" if name else "expectation"
    if isinstance(value, str):
        m = _OP_RE.match(value)
        if m:
            return Comparison(m.group(1), float(m.group(2)))
        m = _PM_RE.match(value)
        if m:
            tol = float(m.group(2))
            if tol < 0:
                raise TreeLoadError.single(loc, f"{what}: the tolerance must be >= 0, got {tol:g}")
            return Comparison("approx", float(m.group(1)), tol=tol)
        m = _RANGE_RE.match(value)
        if m:
            lo, hi = float(m.group(1)), float(m.group(2))
            if lo > hi:
                raise TreeLoadError.single(loc, f"{what}: empty range {lo:g} .. {hi:g}", "write LOW .. HIGH")
            return Comparison("range", lo, hi=hi)
        op = next((o for o in OPS if value.strip().startswith(o)), None)
        extra = f"after {op!r} comes a number" if op else hint
        raise TreeLoadError.single(loc, f"{what}: cannot read {value!r} as a comparison", extra)
    if isinstance(value, bool) or value is None or _is_number(value):
        if _is_number(value) and not math.isfinite(float(value)):
            raise TreeLoadError.single(loc, f"{what}: {value!r} is not a finite number")
        return Comparison("equals", value)
    if isinstance(value, dict):
        keys = set(value)
        problems: list[Problem] = []
        allowed = {"approx", "tol", "rel", "min", "max", "equals"}
        for k in value:
            if k not in allowed:
                close = difflib.get_close_matches(str(k), sorted(allowed), n=1, cutoff=0.6)
                problems.append(Problem(_key_loc(value, k, loc), f"{what}: unknown key {k!r}",
                                        f"did you mean {close[0]!r}?" if close else "use approx/tol/rel, min/max or equals"))
        if problems:
            raise TreeLoadError(problems)
        if "equals" in keys:
            if keys != {"equals"}:
                raise TreeLoadError.single(loc, f"{what}: 'equals' stands alone")
            return Comparison("equals", value["equals"])
        if "approx" in keys:
            if keys - {"approx", "tol", "rel"} or not keys & {"tol", "rel"}:
                raise TreeLoadError.single(loc, f"{what}: 'approx' takes 'tol' (absolute) and/or 'rel' (relative)",
                                           "e.g. {approx: 0.0, tol: 0.02}")
            x = _number(value["approx"])
            if x is None:
                raise TreeLoadError.single(_value_loc(value, "approx", loc), f"{what}: approx must be a number, got {value['approx']!r}")
            tol = rel = None
            for k in ("tol", "rel"):
                if k in value:
                    t = _number(value[k])
                    if t is None or t < 0:
                        raise TreeLoadError.single(_value_loc(value, k, loc), f"{what}: {k} must be a number >= 0, got {value[k]!r}")
                    tol, rel = (t, rel) if k == "tol" else (tol, t)
            return Comparison("approx", x, tol=tol, rel=rel)
        if keys & {"min", "max"}:
            if keys - {"min", "max"}:
                raise TreeLoadError.single(loc, f"{what}: min/max do not mix with {', '.join(sorted(keys - {'min', 'max'}))}")
            bounds = {}
            for k in ("min", "max"):
                if k in value:
                    b = _number(value[k])
                    if b is None:
                        raise TreeLoadError.single(_value_loc(value, k, loc), f"{what}: {k} must be a number, got {value[k]!r}")
                    bounds[k] = b
            if "min" in bounds and "max" in bounds:
                if bounds["min"] > bounds["max"]:
                    raise TreeLoadError.single(loc, f"{what}: min {bounds['min']:g} > max {bounds['max']:g}")
                return Comparison("range", bounds["min"], hi=bounds["max"])
            return Comparison(">=", bounds["min"]) if "min" in bounds else Comparison("<=", bounds["max"])
        raise TreeLoadError.single(loc, f"{what}: an empty mapping", hint)
    raise TreeLoadError.single(loc, f"{what}: unexpected {type(value).__name__} {value!r}", hint)


def parse_expect(data: Any, file: str = "<expect>", loc: Optional[Loc] = None,
                 known_metrics: Optional[Collection[str]] = None) -> Expectation:
    """Validate an ``expect:`` section (a mapping, ideally a located one from the loader).

    Args:
        data: the section (None: the default expectation, status SUCCESS).
        file: the file it came from (for locations when ``data`` carries none).
        loc: where the section starts.
        known_metrics: the metric names a run may report
            (:func:`~py_trees_manipulation.trees.metrics.metric_names`); a metric not among them is
            a problem at its line, with the closest name. None: not checked.

    Raises:
        TreeLoadError: every problem found, each with file, line and column.
    """
    top = loc or getattr(data, "loc", None) or Loc(file, 1, 1)
    exp = Expectation(file=top.file, loc=top)
    if data is None:
        return exp
    if not isinstance(data, dict):
        raise TreeLoadError.single(top, "'expect' must be a mapping", "e.g. 'expect: {status: SUCCESS, metrics: {object_lift_m: \">= 0.1\"}}'")
    problems: list[Problem] = []

    def keyloc(d: Any, k: Any) -> Loc:
        return _key_loc(d, k, top)

    def add_metric(name: Any, value: Any, container: Any) -> None:
        if not isinstance(name, str) or not name:
            problems.append(Problem(keyloc(container, name), f"a metric name must be text, got {name!r}"))
            return
        if known_metrics is not None and name not in known_metrics:
            problems.append(Problem(keyloc(container, name), f"unknown metric {name!r}",
                                    did_you_mean(name, known_metrics)
                                    or "a run reports the metrics listed on docs/task_file.md (Metrics); a plugin "
                                       "behaviour names its own in METRICS"))
            return
        vloc = _value_loc(container, name, keyloc(container, name))
        try:
            comp = parse_comparison(value, vloc, name)
        except TreeLoadError as e:
            problems.extend(e.problems)
            return
        exp.metrics.append(MetricExpectation(name, comp, keyloc(container, name), unit_of(name)))

    status_given = "status" in data
    status_valid = False
    for key, value in data.items():
        if key == "status":
            exp.locs["status"] = keyloc(data, key)
            if isinstance(value, str) and value.strip().lower() == "any":
                exp.status = None
            elif isinstance(value, str) and value.strip().upper() in STATUSES:
                exp.status = value.strip().upper()
                status_valid = True
            else:
                close = difflib.get_close_matches(str(value).upper(), STATUSES, n=1, cutoff=0.6)
                problems.append(Problem(_value_loc(data, key, top), f"unknown status {value!r}",
                                        f"did you mean {close[0]!r}?" if close else f"one of {', '.join(STATUSES)} or any"))
        elif key == "time_budget_s":
            exp.locs["time_budget_s"] = keyloc(data, key)
            t = _number(value)
            if t is None or t <= 0:
                problems.append(Problem(_value_loc(data, key, top), f"time_budget_s must be a number of sim seconds > 0, got {value!r}"))
            else:
                exp.time_budget_s = t
        elif key == "failed_behaviour":
            exp.locs["failed_behaviour"] = keyloc(data, key)
            if isinstance(value, str) and value:
                exp.failed_behaviour = {"name": value}
            elif isinstance(value, dict) and value:
                fb: dict[str, str] = {}
                for k, v in value.items():
                    if k not in FAILED_BEHAVIOUR_KEYS:
                        problems.append(Problem(keyloc(value, k), f"unknown key {k!r} in failed_behaviour",
                                                f"use {', '.join(FAILED_BEHAVIOUR_KEYS)}"))
                    elif not isinstance(v, str):
                        problems.append(Problem(_value_loc(value, k, top), f"failed_behaviour.{k} must be text, got {v!r}"))
                    else:
                        if k == "feedback":
                            try:
                                re.compile(v)
                            except re.error as e:
                                problems.append(Problem(_value_loc(value, k, top), f"failed_behaviour.feedback is not a valid regex: {e}"))
                                continue
                        fb[k] = v
                exp.failed_behaviour = fb
            else:
                problems.append(Problem(_value_loc(data, key, top), "failed_behaviour is a node name or {name, type, feedback}",
                                        "e.g. 'failed_behaviour: lift'"))
        elif key == "error":
            exp.locs["error"] = keyloc(data, key)
            try:
                re.compile(str(value))
                exp.error = str(value)
            except re.error as e:
                problems.append(Problem(_value_loc(data, key, top), f"error is not a valid regex: {e}"))
        elif key == "or_refused":
            exp.locs["or_refused"] = keyloc(data, key)
            if value in OR_REFUSED:
                exp.or_refused = str(value)
            elif value not in (None, False):
                problems.append(Problem(_value_loc(data, key, top), f"or_refused must be one of {', '.join(OR_REFUSED)}, "
                                        f"got {value!r}", "e.g. 'or_refused: validates'"))
        elif key == "metrics":
            if value is None:
                continue
            if not isinstance(value, dict):
                problems.append(Problem(_value_loc(data, key, top), "'metrics' must be a mapping of metric: expectation",
                                        "e.g. 'metrics: {object_lift_m: \">= 0.10\"}'"))
                continue
            for name, v in value.items():
                add_metric(name, v, value)
        else:
            close = difflib.get_close_matches(str(key), RESERVED_KEYS, n=1, cutoff=0.8)
            if close:
                problems.append(Problem(keyloc(data, key), f"unknown expectation {key!r}", f"did you mean {close[0]!r}?"))
                continue
            add_metric(key, data[key], data)
    if not status_given and exp.failed_behaviour is not None:
        exp.status = "FAILURE"
    names = [m.name for m in exp.metrics]
    for i, m in enumerate(exp.metrics):
        if m.name in names[:i]:
            problems.append(Problem(m.loc, f"metric {m.name!r} is expected twice", "merge the two, e.g. '0.1 .. 0.3'"))
    if status_valid and exp.status == "SUCCESS" and exp.failed_behaviour is not None:
        problems.append(Problem(exp.locs.get("failed_behaviour", top), "failed_behaviour with status SUCCESS can never hold",
                                "drop 'status: SUCCESS' (the default with failed_behaviour is FAILURE)"))
    if problems:
        raise TreeLoadError(problems)
    return exp
