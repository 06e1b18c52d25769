"""The shipped examples' summary metrics on every stock robot, and what changed between two commits.

Runs every ``examples/*.yaml`` of a checkout in the embedded simulator, headless and without a run
log (``trees.loader.load_task`` + ``trees.runner.run_task`` with ``RunOptions(display=False)``, as
``ptm run --no-log`` runs it), once per stock robot model the checkout has among ``franka_panda``,
``kuka_iiwa_wsg50`` and ``ufactory_xarm6`` (``--set scene.robots.N.model=MODEL`` for every robot of
the scene). As the scenario tests and docs/examples.md run them: ``open_door`` and ``open_drawer``
get ``scene.robots.0.base_pose=auto`` on the iiwa (its elbow keeps the wrist too far from the
Panda's base), ``open_door`` on the xArm 6; ``handover`` runs on two Pandas only (neither the
shipped bases nor ``base_pose: auto`` on both robots let two iiwas pass the box). Each run is its own process (one at a time), so one run's state or crash cannot
leak into the next. Writes one JSON file::

    {"_meta": {"commit", "root", "models", ...},
     "pick_and_lift/franka_panda": {"status": "SUCCESS", "ticks": 158, "sim_time_s": 5.233,
                                    "failed_behaviour": null, "error": null,
                                    "metrics": {"object_lift_m": 0.15, ...},   # nested keys dotted
                                    "base_poses": {...}, "timing": {...},        # wall-clock, not compared
                                    "overrides": [...], "wall_s": 3.1}, ...}

``--compare OLD.json NEW.json`` prints every value that differs beyond its tolerance, as a Markdown
table, then the runs and metrics only one side has. Numbers differ when ``|new - old|`` exceeds the
larger of 5 % of the larger magnitude (``--rel``) and the floor of the metric's unit, read from the
name's suffix (the innermost key that has one): 2 mm for ``*_m`` (and ``position``, ``drawers``),
1 deg for ``*_deg`` (and ``doors``), 1 N for ``*_n``, 0.1 s for ``*_s``; counts and ratios have no
floor. Booleans, strings (status, ``failed_behaviour``, ``error``, ``placed_on``, ``chosen_grasp``)
and ``null`` compare exactly. Wall-clock figures (``planning_time_s``, ``plan_time_ms``,
``ik_time_ms``, ``collision_time_ms``, ``search_time_s``, ...) are kept under ``timing`` and never
compared. ``--exact`` lists every change however small (the runs are deterministic: the same
commit gives the same numbers to the last digit). Exit status 1 when anything differs (0 when nothing does), 2 on bad input.

Comparing a commit with main (the script need not exist at the older commit: run this file with
the older checkout's interpreter, whose editable install is the package it imports)::

    git worktree add /tmp/old 4618cb3
    python3 -m venv /tmp/old/.venv && /tmp/old/.venv/bin/pip install -q -e '/tmp/old[test]'
    /tmp/old/.venv/bin/python benchmarks/example_metrics.py -o old.json      # /tmp/old's examples
    .venv/bin/python benchmarks/example_metrics.py -o new.json
    python benchmarks/example_metrics.py --compare old.json new.json

Other options: ``--examples pick_and_lift,open_door`` and ``--models franka_panda`` choose the
runs; ``--set KEY=VALUE`` adds an override to every run (to take a
known change out of a comparison, e.g. an example's new mass); ``--resume`` keeps the runs already
in ``-o``'s file; ``--root DIR`` runs another checkout's
examples (default: the checkout the imported package comes from); ``--timeout`` is each run's
wall-clock limit. The whole set (37 runs on three models) takes about 4 minutes on the 2-core machine.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from typing import Any, Optional

from py_trees_manipulation.trees.metrics import WALL_CLOCK_METRICS

#: the stock models compared, in this order, where the checkout has them
MODELS = ("franka_panda", "kuka_iiwa_wsg50", "ufactory_xarm6")
#: the model the examples are written for (run as shipped)
SHIPPED_MODEL = "franka_panda"
#: examples whose shipped base pose a model does not reach from: it gets ``base_pose: auto`` there
#: (docs/examples.md; tests/scenarios/open_door_auto.scenario.yaml, open_drawer.scenario.yaml)
AUTO_BASE = {"kuka_iiwa_wsg50": ("open_door", "open_drawer"), "ufactory_xarm6": ("open_door",)}
#: examples that run on the shipped model only (handover: two Pandas; on two iiwas the left cannot
#: reach the box from its shipped base and base_pose: auto finds no base for either)
SHIPPED_ONLY = ("handover",)
#: wall-clock figures: recorded under ``timing``, never compared
WALL_CLOCK = ("wall_time_s", "real_time_factor", "search_time_s") + tuple(sorted(WALL_CLOCK_METRICS))
#: absolute tolerance floors by unit kind
FLOORS = {"m": 0.002, "deg": 1.0, "n": 1.0, "s": 0.1}
#: keys without a unit suffix whose unit is known
UNIT_OF_NAME = {"position": "m", "drawers": "m", "doors": "deg"}
DEFAULT_REL = 0.05


# --------------------------------------------------------------------------------------------------
# running

def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Nested dicts to dotted keys; lists of numbers by index; other lists kept as one value."""
    out: dict[str, Any] = {}
    if isinstance(value, dict):
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
    elif (isinstance(value, (list, tuple)) and value
          and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in value)):
        for i, v in enumerate(value):
            out[f"{prefix}.{i}"] = v
    else:
        out[prefix] = list(value) if isinstance(value, tuple) else value
    return out


def _is_wall_clock(key: str) -> bool:
    return key.rsplit(".", 1)[-1] in WALL_CLOCK


def _split_timing(flat: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    keep = {k: v for k, v in flat.items() if not _is_wall_clock(k)}
    timing = {k: v for k, v in flat.items() if _is_wall_clock(k)}
    return keep, timing


def overrides_for(example: str, model: str, n_robots: int) -> list[str]:
    """The ``--set`` strings that put every robot of ``example``'s scene on ``model``."""
    if model == SHIPPED_MODEL:
        return []
    out = []
    for i in range(n_robots):
        out.append(f"scene.robots.{i}.model={model}")
        if example in AUTO_BASE.get(model, ()):
            out.append(f"scene.robots.{i}.base_pose=auto")
    return out


def run_one(path: str, model: str, extra: Optional[list[str]] = None) -> dict[str, Any]:
    """Run one example on one model in this process (``extra``: more ``--set`` strings, applied
    after the model's); the record the JSON file keeps."""
    from py_trees_manipulation.trees.loader import load_task
    from py_trees_manipulation.trees.runner import RunOptions, run_task

    example = os.path.splitext(os.path.basename(path))[0]
    n_robots = len((load_task(path).scene or {}).get("robots") or [])
    overrides = overrides_for(example, model, n_robots) + list(extra or [])
    task = load_task(path, overrides)
    t0 = time.perf_counter()
    result = run_task(task, RunOptions(display=False))
    wall = time.perf_counter() - t0
    s = result.summary
    metrics, timing = _split_timing(_flatten(s.get("metrics") or {}))
    base_poses, base_timing = _split_timing(_flatten(s.get("base_poses") or {}))
    timing.update({f"base_poses.{k}": v for k, v in base_timing.items()})
    failed = s.get("failed_behaviour")
    return {
        "status": s.get("status"),
        "ticks": s.get("ticks"),
        "sim_time_s": s.get("sim_time_s"),
        "failed_behaviour": f"{failed.get('name')} ({failed.get('type')})" if failed else None,
        "error": s.get("error"),
        "metrics": metrics,
        "base_poses": base_poses,
        "timing": timing,
        "overrides": overrides,
        "wall_s": round(wall, 2),
    }


def _commit(root: str) -> Optional[str]:
    try:
        head = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
        return head + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return None


def _package_root() -> str:
    import py_trees_manipulation

    return os.path.dirname(os.path.dirname(os.path.abspath(py_trees_manipulation.__file__)))


def _stock_models() -> list[str]:
    from py_trees_manipulation.robots.loader import stock_models

    return list(stock_models())


def _write(path: str, data: dict[str, Any]) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1, sort_keys=False)
        f.write("\n")
    os.replace(tmp, path)


def run_all(args: argparse.Namespace) -> int:
    root = os.path.abspath(args.root or _package_root())
    examples_dir = os.path.join(root, "examples")
    if not os.path.isdir(examples_dir):
        return _die(f"no examples/ in {root}: pass --root, the checkout whose examples to run")
    if os.path.abspath(_package_root()) != root:
        print(f"warning: the package imported comes from {_package_root()}, the examples from {root}",
              file=sys.stderr)
    names = sorted(f[:-5] for f in os.listdir(examples_dir) if f.endswith(".yaml"))
    if args.examples:
        wanted = args.examples.split(",")
        unknown = [w for w in wanted if w not in names]
        if unknown:
            return _die(f"unknown example(s) {', '.join(unknown)}; the checkout has: {', '.join(names)}")
        names = [n for n in names if n in wanted]
    stock = _stock_models()
    models = args.models.split(",") if args.models else list(MODELS)
    unknown = [m for m in models if m not in stock]
    if args.models and unknown:
        return _die(f"unknown model(s) {', '.join(unknown)}; this checkout's stock models: {', '.join(stock)}")
    skipped = [m for m in models if m not in stock]
    models = [m for m in models if m in stock]
    if skipped:
        print(f"not at this commit: {', '.join(skipped)}", file=sys.stderr)

    data: dict[str, Any] = {}
    if args.resume and os.path.exists(args.output):
        with open(args.output) as f:
            data = json.load(f)
    data["_meta"] = {"commit": _commit(root), "root": root, "models": models, "skipped_models": skipped,
                     "set": args.set or [],
                     "python": platform.python_version(), "date": datetime.datetime.now().isoformat(timespec="seconds"),
                     "rel_tolerance_default": DEFAULT_REL}
    cases = [(n, m) for n in names for m in models if m == SHIPPED_MODEL or n not in SHIPPED_ONLY]
    t_all = time.perf_counter()
    for i, (name, model) in enumerate(cases, 1):
        key = f"{name}/{model}"
        if key in data and data[key].get("status") not in ("WORKER_ERROR", "WORKER_TIMEOUT"):
            print(f"[{i}/{len(cases)}] {key}: kept from {args.output}", flush=True)
            continue
        rec = _run_in_worker(os.path.join(examples_dir, name + ".yaml"), model, args.timeout, args.set or [])
        data[key] = rec
        _write(args.output, data)
        line = f"[{i}/{len(cases)}] {key}: {rec['status']}"
        if rec.get("sim_time_s") is not None:
            line += f" in {rec['sim_time_s']:.2f} s sim"
        line += f" ({rec.get('wall_s', 0):.1f} s wall)"
        if rec["status"] != "SUCCESS" and rec.get("error"):
            line += f": {str(rec['error']).splitlines()[0][:160]}"
        print(line, flush=True)
    print(f"wrote {args.output}: {len(cases)} runs in {time.perf_counter() - t_all:.0f} s wall "
          f"(commit {data['_meta']['commit']})")
    return 0


def _run_in_worker(path: str, model: str, timeout: float, extra: list[str]) -> dict[str, Any]:
    fd, out = tempfile.mkstemp(suffix=".json", prefix="example_metrics_")
    os.close(fd)
    cmd = [sys.executable, os.path.abspath(__file__), "--_worker", path, model, out, *extra]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        if proc.returncode == 0:
            with open(out) as f:
                return json.load(f)
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-15:])
        return {"status": "WORKER_ERROR", "error": f"exit {proc.returncode}: {tail}",
                "wall_s": round(time.perf_counter() - t0, 2), "command": " ".join(cmd[:-1])}
    except subprocess.TimeoutExpired:
        return {"status": "WORKER_TIMEOUT", "error": f"no result after {timeout:g} s wall",
                "wall_s": round(time.perf_counter() - t0, 2)}
    finally:
        os.unlink(out)


# --------------------------------------------------------------------------------------------------
# comparing

def unit_kind(key: str) -> Optional[str]:
    """The unit kind (``m``, ``deg``, ``n``, ``s``) of a dotted metric name: the innermost component
    with a known suffix or name; None for counts, ratios and the rest."""
    for part in reversed(key.split(".")):
        if part.isdigit():
            continue
        if part in UNIT_OF_NAME:
            return UNIT_OF_NAME[part]
        for kind in FLOORS:
            if part.endswith("_" + kind):
                return kind
    return None


def tolerance(key: str, old: float, new: float, rel: float = DEFAULT_REL, floors: bool = True) -> float:
    """How far two numbers of metric ``key`` may be apart and count as the same: ``rel`` of the larger
    magnitude, at least the floor of the key's unit kind (``floors``)."""
    floor = FLOORS.get(unit_kind(key) or "", 0.0) if floors else 0.0
    return max(rel * max(abs(old), abs(new)), floor)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def differs(key: str, old: Any, new: Any, rel: float = DEFAULT_REL, floors: bool = True) -> bool:
    """True when ``old`` and ``new`` are not the same within ``key``'s tolerance."""
    if _is_number(old) and _is_number(new):
        if math.isnan(old) or math.isnan(new):
            return not (math.isnan(old) and math.isnan(new))
        return abs(new - old) > tolerance(key, old, new, rel, floors)
    if isinstance(old, bool) != isinstance(new, bool):  # False == 0 in Python, not here
        return True
    return old != new


def _values(rec: dict[str, Any]) -> dict[str, Any]:
    """A run's compared values: the verdict, then its metrics and base poses by dotted name."""
    out = {k: rec.get(k) for k in ("status", "ticks", "sim_time_s", "failed_behaviour", "error")}
    out.update(rec.get("metrics") or {})
    out.update({f"base_poses.{k}": v for k, v in (rec.get("base_poses") or {}).items()})
    return out


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.6g}"
    text = v if isinstance(v, str) else json.dumps(v)
    text = text.replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= 120 else text[:117] + "..."


def compare(old: dict[str, Any], new: dict[str, Any], rel: float = DEFAULT_REL,
            floors: bool = True) -> tuple[list, list, list, dict, dict]:
    """Differences between two metric files (``rel`` 0 and ``floors`` False: every change).

    Returns:
        (rows: [(run, metric, old, new, tolerance or None)] beyond tolerance, runs only in old,
        runs only in new, {metric: [runs]} added, {metric: [runs]} removed).
    """
    runs_old = {k for k in old if not k.startswith("_")}
    runs_new = {k for k in new if not k.startswith("_")}
    rows, added, removed = [], {}, {}
    for run in sorted(runs_old & runs_new):
        a, b = _values(old[run]), _values(new[run])
        for key in a.keys() | b.keys():
            if key not in b:
                removed.setdefault(key, []).append(run)
            elif key not in a:
                added.setdefault(key, []).append(run)
        for key in list(a) + [k for k in b if k not in a]:
            if key in a and key in b and differs(key, a[key], b[key], rel, floors):
                tol = tolerance(key, a[key], b[key], rel, floors) if _is_number(a[key]) and _is_number(b[key]) else None
                rows.append((run, key, a[key], b[key], tol))
    return rows, sorted(runs_old - runs_new), sorted(runs_new - runs_old), added, removed


def print_comparison(old_path: str, new_path: str, rel: float, exact: bool = False) -> int:
    try:
        with open(old_path) as f:
            old = json.load(f)
        with open(new_path) as f:
            new = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        return _die(f"cannot read the metrics files: {e}")
    if exact:
        rel = 0.0
    rows, only_old, only_new, added, removed = compare(old, new, rel, floors=not exact)
    mo, mn = old.get("_meta", {}), new.get("_meta", {})
    print(f"OLD {old_path}: commit {mo.get('commit')}, models {', '.join(mo.get('models', []))}")
    print(f"NEW {new_path}: commit {mn.get('commit')}, models {', '.join(mn.get('models', []))}")
    if exact:
        print("tolerance: none (--exact: every change); wall-clock figures not compared\n")
    else:
        print(f"tolerance: {rel:.0%} relative, floors " + ", ".join(f"{v:g} {k}" for k, v in FLOORS.items())
              + "; booleans, strings and null exactly; wall-clock figures not compared\n")
    if rows:
        print(f"## {len(rows)} values differ\n")
        print("| run | metric | old | new | change | tolerance |")
        print("|---|---|---|---|---|---|")
        for run, key, a, b, tol in rows:
            change = f"{b - a:+.4g}" if tol is not None else ""
            print(f"| {run} | {key} | {_fmt(a)} | {_fmt(b)} | {change} | {'' if tol is None else f'{tol:.3g}'} |")
        print()
    else:
        print("## no value differs beyond its tolerance\n")
    for title, runs in (("runs only in OLD", only_old), ("runs only in NEW", only_new)):
        if runs:
            print(f"## {title} ({len(runs)})\n")
            for run in runs:
                rec = (old if title.endswith("OLD") else new)[run]
                print(f"- {run}: {rec.get('status')}" + (f" ({_fmt(rec.get('error'))})" if rec.get("error") else ""))
            print()
    for title, metrics in (("metrics added (only in NEW)", added), ("metrics removed (only in OLD)", removed)):
        if metrics:
            print(f"## {title}\n")
            for key in sorted(metrics):
                runs = metrics[key]
                print(f"- {key}: {len(runs)} run(s): {', '.join(runs)}")
            print()
    return 1 if (rows or only_old or only_new or added or removed) else 0


# --------------------------------------------------------------------------------------------------

def _die(msg: str) -> int:
    print(f"example_metrics: {msg}", file=sys.stderr)
    return 2


def main(argv: Optional[list[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--_worker"]:  # one run in this process: example_metrics.py --_worker PATH MODEL OUT [SET...]
        path, model, out = argv[1:4]
        rec = run_one(path, model, argv[4:])
        with open(out, "w") as f:
            json.dump(rec, f)
        return 0
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="See the module docstring (and docs/performance.md) for the workflow.")
    p.add_argument("-o", "--output", default="example_metrics.json", metavar="OUT.json",
                   help="where to write the metrics (default: example_metrics.json)")
    p.add_argument("--compare", nargs=2, metavar=("OLD.json", "NEW.json"),
                   help="print what differs between two metric files instead of running")
    p.add_argument("--rel", type=float, default=DEFAULT_REL,
                   help=f"relative tolerance of numbers (default {DEFAULT_REL:g})")
    p.add_argument("--exact", action="store_true",
                   help="with --compare: every change, however small (no tolerance)")
    p.add_argument("--examples", help="comma-separated example names (default: every examples/*.yaml)")
    p.add_argument("--models", help=f"comma-separated stock models (default: {','.join(MODELS)}, those the checkout has)")
    p.add_argument("--root", help="the checkout whose examples to run (default: the imported package's)")
    p.add_argument("--timeout", type=float, default=1800.0, help="each run's wall-clock limit, s (default 1800)")
    p.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="an override for every run, after the model's (as ptm run --set; repeatable)")
    p.add_argument("--resume", action="store_true", help="keep the runs -o's file already has")
    args = p.parse_args(argv)
    if args.compare:
        return print_comparison(args.compare[0], args.compare[1], args.rel, args.exact)
    return run_all(args)


if __name__ == "__main__":
    sys.exit(main())
