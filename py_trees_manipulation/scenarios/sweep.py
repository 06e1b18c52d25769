"""Parameter sweeps: run a task (or scenario) over a grid and random draws, in parallel.

``ptm sweep FILE --grid KEY=V1,V2,... --random KEY=LO:HI --trials N --workers K --seed S`` runs,
for every point of the grid (the Cartesian product of the ``--grid`` values) ``N`` trials. Trial
``j`` gets a run seed and random draws derived only from ``(--seed, j)``
(:func:`trial_seed`, :func:`trial_draws`, NumPy ``SeedSequence``): every grid point sees the same
``N`` noise seeds and draws (common random numbers, so differences between grid points come from the
swept parameters, not the noise), and the results do not depend on the executor or worker count.

KEYs are ``--set`` paths (``scene.objects.0.mass_kg``, ``parameters.NAME``, ``blackboard.KEY``,
``tree.NODE.PARAM``). Values are read as YAML (``0.5``, ``true``, ``box``); ``--grid KEY=LO:HI:N``
is ``N`` evenly spaced numbers from LO to HI inclusive.

A run is a **success** when its status is SUCCESS and, when the file has ``expect:`` (see
:mod:`.expect`), every expectation holds.

Executors: ``process`` (default) -- a ``concurrent.futures.ProcessPoolExecutor`` with the
``forkserver`` start method (``spawn`` where unavailable), each worker process with its own PyBullet
client; with one worker the runs happen in this process. The fork server starts before the sweep is
validated and imports the whole run stack once (:data:`FORKSERVER_PRELOAD`), so the workers forked
from it start warm; meanwhile this process imports what it needs after the runs (table, plot). ``ray`` -- one Ray task per run on
``ray.init(address=...)`` (a cluster; the task files must be at the same paths on its nodes and the
package installed there) or a local ``ray.init()``; install the extra ``ray``.

Outputs (``-o OUT_DIR``): ``runs.csv`` (one row per run: parameters, seed, status, success, metrics),
``success_rates.csv`` and ``success_rates.txt`` (success rate with a 95 % Wilson interval per grid
point, plus the overall rate), ``success_rate.png`` (success rate against one swept parameter) and
``sweep.json`` (the sweep's definition and totals).
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Optional, Sequence

import numpy as np

from ..located import locyaml
from ..located.errors import TreeLoadError

EXECUTORS = ("process", "ray")
#: runs one sweep may have (grid points x trials): a bound on what the sweep holds in memory
MAX_RUNS = 100_000
RUN_COLUMNS = ("run", "point", "trial", "seed")
RESULT_COLUMNS = ("status", "success", "expect_ok", "sim_time_s", "wall_time_s", "cpu_time_s", "ticks", "failed_behaviour", "failure")
#: result columns that differ between identical runs (left out of comparisons): wall-clock and CPU
#: times, including the metrics that are ones (the motion planner's and the regrasp planner's)
NONDETERMINISTIC_COLUMNS = ("wall_time_s", "cpu_time_s", "real_time_factor", "planning_time_s", "plan_time_ms")


class SweepError(ValueError):
    """An invalid sweep definition (bad --grid/--random, unknown key, missing Ray)."""


@dataclass(frozen=True)
class GridParam:
    """``--grid KEY=V1,V2,...``: ``values`` in the given order."""

    key: str
    values: tuple[Any, ...]


@dataclass(frozen=True)
class RandomParam:
    """``--random KEY=LO:HI``: uniform in ``[lo, hi)``."""

    key: str
    lo: float
    hi: float


def _split_key(expr: str, flag: str) -> tuple[str, str]:
    if "=" not in expr:
        raise SweepError(f"{flag} {expr!r}: expected KEY=VALUES")
    key, values = expr.split("=", 1)
    key = key.strip()
    if not key or not all(key.split(".")):
        raise SweepError(f"{flag} {expr!r}: malformed key {key!r} (e.g. scene.objects.0.mass_kg)")
    if key.split(".")[0] == "expect":
        raise SweepError(f"{flag} {expr!r}: expectations cannot be swept")
    return key, values


def _yaml_value(text: str, flag: str, expr: str) -> Any:
    """A swept value, parsed as YAML under the limits of a file (:func:`~..located.locyaml.value`)."""
    try:
        return locyaml.value(text, f"{flag} {expr}")
    except ValueError as e:
        raise SweepError(f"{flag} {expr!r}: {text!r} is not a valid value ({e})") from None


def _is_number(x: Any) -> bool:
    """A finite int or float (not a bool)."""
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def parse_grid(expr: str) -> GridParam:
    """``"scene.objects.0.mass_kg=0.1,0.3,0.6"`` or ``"KEY=LO:HI:N"`` (N evenly spaced, inclusive).

    Raises:
        SweepError: malformed expression, no values, or a repeated value.
    """
    key, text = _split_key(expr, "--grid")
    parts = text.split(":")
    if len(parts) == 3 and "," not in text:
        lo, hi, n = (_yaml_value(p, "--grid", expr) for p in parts)
        if not (_is_number(lo) and _is_number(hi) and isinstance(n, int) and not isinstance(n, bool)
                and 2 <= n <= MAX_RUNS and math.isfinite(float(hi) - float(lo))):
            raise SweepError(f"--grid {expr!r}: LO:HI:N needs two finite numbers and a count N >= 2 (at most {MAX_RUNS})")
        values: tuple[Any, ...] = tuple(float(v) for v in np.round(np.linspace(float(lo), float(hi), n), 12))
    else:
        values = tuple(_yaml_value(v, "--grid", expr) for v in text.split(","))
    if not values or any(v == "" for v in values):
        raise SweepError(f"--grid {expr!r}: empty value (write KEY=V1,V2,...)")
    if len({json.dumps(v, sort_keys=True, default=str) for v in values}) != len(values):
        raise SweepError(f"--grid {expr!r}: a value is repeated")
    return GridParam(key, values)


def parse_random(expr: str) -> RandomParam:
    """``"scene.objects.0.lateral_friction=0.3:1.0"`` -> uniform draws in [0.3, 1.0).

    Raises:
        SweepError: malformed expression, or LO >= HI.
    """
    key, text = _split_key(expr, "--random")
    parts = text.split(":")
    if len(parts) != 2:
        raise SweepError(f"--random {expr!r}: expected KEY=LO:HI")
    lo, hi = (_yaml_value(p, "--random", expr) for p in parts)
    if not (_is_number(lo) and _is_number(hi)) or not float(lo) < float(hi) or not math.isfinite(float(hi) - float(lo)):
        raise SweepError(f"--random {expr!r}: LO and HI must be finite numbers with LO < HI")
    return RandomParam(key, float(lo), float(hi))


def trial_seed(base_seed: int, trial: int) -> int:
    """The run seed of trial ``trial`` (0-based): a 31-bit int from ``SeedSequence(base_seed, spawn_key=(trial, 0))``."""
    ss = np.random.SeedSequence(int(base_seed), spawn_key=(int(trial), 0))
    return int(ss.generate_state(1, dtype=np.uint32)[0]) & 0x7FFFFFFF


def trial_draws(base_seed: int, trial: int, params: Sequence[RandomParam]) -> list[float]:
    """The random draws of trial ``trial``: uniform in ``[lo, hi)`` per param, in order, from
    ``default_rng(SeedSequence(base_seed, spawn_key=(trial, 1)))``."""
    rng = np.random.default_rng(np.random.SeedSequence(int(base_seed), spawn_key=(int(trial), 1)))
    return [float(rng.uniform(p.lo, p.hi)) for p in params]


@dataclass(frozen=True)
class Trial:
    """One run of a sweep.

    Attributes:
        index: run number (row of runs.csv), grid-point major. point: grid point number.
        trial: trial number within the grid point (0..trials-1); seed: its run seed.
        params: ``(key, value)`` pairs, grid parameters then random ones.
    """

    index: int
    point: int
    trial: int
    seed: int
    params: tuple[tuple[str, Any], ...]


def expand(grid: Sequence[GridParam] = (), random: Sequence[RandomParam] = (), trials: int = 1, seed: int = 0) -> list[Trial]:
    """Every run of a sweep: ``prod(len(g.values)) * trials`` trials, grid-point major.

    Raises:
        SweepError: trials < 1, more than :data:`MAX_RUNS` runs, or a key swept twice.
    """
    if trials < 1:
        raise SweepError("--trials must be >= 1")
    n_runs = math.prod(len(g.values) for g in grid) * trials
    if n_runs > MAX_RUNS:
        raise SweepError(f"the sweep has {n_runs} runs ({' x '.join(str(len(g.values)) for g in grid) or '1'} grid "
                         f"point(s) x {trials} trial(s)); at most {MAX_RUNS}: sweep fewer values or trials")
    keys = [g.key for g in grid] + [r.key for r in random]
    dup = sorted({k for k in keys if keys.count(k) > 1})
    if dup:
        raise SweepError(f"swept more than once: {', '.join(dup)}")
    per_trial = [(trial_seed(seed, j), trial_draws(seed, j, random)) for j in range(trials)]
    out: list[Trial] = []
    for point, values in enumerate(itertools.product(*(g.values for g in grid))):
        for j, (s, draws) in enumerate(per_trial):
            params = tuple(zip((g.key for g in grid), values)) + tuple(zip((r.key for r in random), draws))
            out.append(Trial(len(out), point, j, s, params))
    return out


# ---------------------------------------------------------------------------------------------------
@dataclass
class SweepConfig:
    """A sweep's definition (what ``ptm sweep`` parses).

    Attributes:
        file: task or scenario file. variant: the scenario variant to sweep (``default``).
        grid, random, trials, seed: see :func:`expand`.
        overrides: ``--set`` overrides applied to every run (before the swept ones).
        workers: parallel runs (processes, or Ray's CPU count for a local Ray).
        executor: ``"process"`` or ``"ray"``. address: Ray cluster address (None: local).
        tick_hz: tree tick rate, Hz. timeout_s: sim seconds per run when the file has no time budget.
        backend: ``"sim"`` or ``"fake"`` (:func:`fake_backend_for`: no physics, every action
            succeeds at once, objects stay at their scene poses; checks a sweep's plumbing, not the
            task: a tree that checks the world, e.g. ``ObjectLifted``, fails on it).
        out_dir: where to write the outputs (None: nothing written).
        plot_param: the parameter for the plot (default: the first grid parameter, else the first
            random one).
    """

    file: str
    grid: list[GridParam] = field(default_factory=list)
    random: list[RandomParam] = field(default_factory=list)
    trials: int = 1
    seed: int = 0
    variant: str = "default"
    overrides: list[str] = field(default_factory=list)
    workers: int = 1
    executor: str = "process"
    address: Optional[str] = None
    tick_hz: float = 30.0
    timeout_s: Optional[float] = None
    backend: str = "sim"
    out_dir: Optional[str] = None
    plot_param: Optional[str] = None


@dataclass(frozen=True)
class SweepJob:
    """What a worker needs for one run (picklable)."""

    file: str
    variant: str
    overrides: tuple[str, ...]
    trial: Trial
    tick_hz: float = 30.0
    timeout_s: Optional[float] = None
    backend: str = "sim"
    cwd: Optional[str] = None


_SCENARIOS: dict[tuple[str, float], Any] = {}


def _scenario(file: str) -> Any:
    """The worker's cached scenario (reloaded when the file changes)."""
    from .scenario import load_scenario

    key = (os.path.abspath(file), os.path.getmtime(file))
    if key not in _SCENARIOS:
        _SCENARIOS.clear()
        _SCENARIOS[key] = load_scenario(file)
    return _SCENARIOS[key]


def _cell(v: Any) -> Any:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, (dict, list, tuple)):
        return json.dumps(v, default=str)
    return v


def fake_backend_for(task: Any, seed: int) -> Any:
    """The ``--backend fake`` of a sweep: :class:`~py_trees_manipulation.testing.fake_backend.FakeBackend`
    (one arm and one gripper named after the scene's first robot; every action succeeds at once,
    without moving anything) whose world holds the scene's objects at their poses, so perception
    (``GetObjectPose``) works and the tree runs to its first check of the world; geometric queries
    (``ChooseGrasp``) are answered in a collision world of the scene (:class:`~py_trees_manipulation.testing.fake_backend.FakePlanning`)."""
    from ..testing.fake_backend import FakeBackend, FakePlanning

    robot = "panda"
    poses: dict[str, Any] = {}
    spec = None
    if task.scene:
        from ..scene.spec import parse_scene

        spec = parse_scene(task.scene, base_dir=task.scene_dir or os.path.dirname(os.path.abspath(task.file)))
        if spec.robots:
            robot = spec.robots[0].name
        poses = {o.name: o.pose for o in spec.objects}
    backend = FakeBackend(name=robot, seed=seed)
    backend.world.poses.update(poses)
    if spec is not None and spec.robots:
        backend.motion_planning = FakePlanning(backend, spec)
    return backend


#: the worker's simulator, kept between runs: scene key, SimBackend, resets so far (see :func:`_sim_backend`)
_WORKER_SIM: dict[str, Any] = {}
#: resets of one simulator before the worker builds a new one: PyBullet keeps the collision meshes
#: of the objects each reset removes and loads again (about 0.1 MiB per mesh object) until the client
#: disconnects, so the worker's memory stays within about 10 MiB of its first run's
RESETS_PER_SIMULATOR = 100


def _scene_key(task: Any) -> str:
    """What must be equal for two runs to share a simulator: the scene (its ``seed`` aside: each run
    passes its own) and the folder its relative paths are read from."""
    scene = {k: v for k, v in dict(task.scene or {}).items() if k != "seed"}
    base = task.scene_dir or os.path.dirname(os.path.abspath(task.file))
    return json.dumps([scene, base], sort_keys=True, default=repr)


def _sim_backend(task: Any, seed: int) -> Any:
    """The worker's simulator for this run: the previous run's, reset for ``seed``
    (:meth:`~py_trees_manipulation.sim.backend.SimBackend.reset`: the same physics clients, the
    objects reloaded, bit for bit a new backend's state) when the scene is the same and it can be
    reset; else a new one (no visual meshes: a sweep draws nothing), kept for the next run.

    A worker so keeps one simulator (and its collision world) instead of building one per run;
    after :data:`RESETS_PER_SIMULATOR` resets it builds a new one, so its memory stays flat over
    thousands of runs."""
    from ..sim import SimBackend
    from ..trees.runner import lazy_task_check

    base = task.scene_dir or os.path.dirname(os.path.abspath(task.file))
    robots = (task.scene or {}).get("robots") or ()
    if any(isinstance(r, dict) and (r.get("base_pose") == "auto" or (isinstance(r.get("base_pose"), dict) and "auto" in r["base_pose"]))
           for r in robots):
        # base_pose: auto is searched per run, for this tree's targets and this seed (as `ptm run`
        # does): a new simulator, not kept
        from ..behaviors.reach import requests_from_tree

        close_worker_sim()
        return SimBackend(task.scene, seed=seed, base_dir=base, visual_shapes=False,
                          reach_requests=requests_from_tree(task.tree), task_check=lazy_task_check(task, seed))
    key = _scene_key(task)
    old = _WORKER_SIM.get("backend")
    if old is not None:
        if _WORKER_SIM.get("key") == key and _WORKER_SIM["resets"] < RESETS_PER_SIMULATOR and old.reset(seed):
            _WORKER_SIM["resets"] += 1
            old.task_check = lazy_task_check(task, seed)   # this run's tree (the key is the scene's)
            return old
        close_worker_sim()
    backend = SimBackend(task.scene, seed=seed, base_dir=base, visual_shapes=False, reusable=True,
                         task_check=lazy_task_check(task, seed))
    _WORKER_SIM.update(key=key, backend=backend, resets=0)
    return backend


def close_worker_sim() -> None:
    """Close the simulator :func:`_sim_backend` keeps (no-op without one)."""
    backend = _WORKER_SIM.pop("backend", None)
    _WORKER_SIM.pop("key", None)
    _WORKER_SIM.pop("resets", None)
    if backend is not None:
        backend.close()


def run_trial(job: SweepJob) -> dict[str, Any]:
    """Run one trial and return its row. Never raises: an error is a row with status ERROR.

    Row keys: ``run, point, trial, seed``, the swept keys, ``status``, ``success`` (1/0),
    ``expect_ok`` (1/0), ``sim_time_s``, ``wall_time_s``, ``cpu_time_s`` (the worker's CPU seconds), ``ticks``, ``failed_behaviour`` (node
    name), ``failure`` (the first unmet expectation or the error), then the backend's metrics.
    """
    from .scenario import override_string, run_scenario

    t = job.trial
    wall0, cpu0 = time.perf_counter(), time.process_time()
    row: dict[str, Any] = {"run": t.index, "point": t.point, "trial": t.trial, "seed": t.seed}
    row.update({k: _cell(v) for k, v in t.params})
    try:
        if job.cwd and os.getcwd() != job.cwd:  # a Ray worker starts elsewhere: relative paths as the caller's
            os.chdir(job.cwd)
        scenario = _scenario(job.file)
        swept = [override_string(k, v) for k, v in t.params]
        task, expectation = scenario.load(job.variant, list(job.overrides) + swept)
        if job.backend == "fake":
            backend = fake_backend_for(task, t.seed)
        elif task.scene:
            backend = _sim_backend(task, t.seed)
        else:
            backend = None  # run_scenario reports the missing scene
        try:
            result = run_scenario(task, expectation, seed=t.seed, tick_hz=job.tick_hz, timeout_s=job.timeout_s, backend=backend)
        finally:
            if backend is not None and job.backend != "fake" and backend is not _WORKER_SIM.get("backend"):
                backend.close()  # a simulator built for this run only (base_pose: auto)
        s = result.summary
        fb = s.get("failed_behaviour") or {}
        failure = result.failures[0].message if result.failures else ""
        if s.get("status") == "ERROR" and s.get("error"):
            failure = str(s["error"])
        row.update({
            "status": s.get("status"),
            "success": int(s.get("status") == "SUCCESS" and result.passed),
            "expect_ok": int(result.passed),
            "sim_time_s": s.get("sim_time_s"),
            "ticks": s.get("ticks"),
            "failed_behaviour": fb.get("name") or "",
            "failure": failure,
        })
        for k, v in (s.get("metrics") or {}).items():
            if k not in row and k not in RESULT_COLUMNS:
                row[str(k)] = _cell(v)
    except Exception as e:  # a worker must always answer
        close_worker_sim()  # the next run starts from a new simulator
        row.update({"status": "ERROR", "success": 0, "expect_ok": 0, "sim_time_s": None, "ticks": 0,
                    "failed_behaviour": "", "failure": f"{type(e).__name__}: {e}"})
    row["wall_time_s"] = round(time.perf_counter() - wall0, 4)
    row["cpu_time_s"] = round(time.process_time() - cpu0, 4)  # this process's CPU time for the run
    return row


# ---------------------------------------------------------------------------------------------------
#: Modules the fork server imports once, before it forks any worker, so that every worker starts with
#: the whole run stack loaded: the sweep and scenario code, the loader and runner, the simulator (with
#: PyBullet), the behaviour registry (:func:`forkserver_preload` adds the built-in behaviours) and the
#: motion planning (collision world, ruckig, OMPL). Not scipy (the tactile filters are designed in
#: closed form) nor matplotlib (only the parent plots). The fork server skips a module that fails to
#: import, silently; tests/unit/test_sweep.py checks that every name resolves.
FORKSERVER_PRELOAD = (
    __name__, "py_trees_manipulation.scenarios.scenario", "py_trees_manipulation.trees.loader",
    "py_trees_manipulation.trees.runner", "py_trees_manipulation.sim", "py_trees_manipulation.sim.backend",
    *(f"py_trees_manipulation.sim.{m}" for m in ("grasp_fix", "doors", "tactile_sensor", "planning", "payload")),
    "py_trees_manipulation.behaviors.registry",
    "py_trees_manipulation.control.tactile", "importlib.metadata", "py_trees_manipulation.scene.reach",
    # the motion planning every arm motion goes through (collision world, timing; OMPL when it plans),
    # the grasp choice of the pick subtrees, and numpy.ma (np.unique imports it on first use)
    "py_trees_manipulation.collision.arm_planner", "py_trees_manipulation.collision.worker",
    "py_trees_manipulation.collision.grasp_choice", "py_trees_manipulation.collision.placement",
    "py_trees_manipulation.scene.overlap",
    "numpy.ma",  # np.unique imports it on first use (the planner's clearance sampling)
    "py_trees_manipulation.motion.timing", "ruckig",
    "concurrent.futures.thread", "py_trees_manipulation.motion.ompl_planning", "ompl.geometric",
    # the whole-task check before the first goal (``--plan-first``, on by default) and its kept plans
    "py_trees_manipulation.trees.plan_check", "py_trees_manipulation.collision.kept_plans",
)


def forkserver_preload() -> list[str]:
    """:data:`FORKSERVER_PRELOAD` plus the built-in behaviour modules (``behaviors.BUILTIN_MODULES``)."""
    from ..behaviors import BUILTIN_MODULES

    return list(dict.fromkeys(FORKSERVER_PRELOAD + tuple(f"py_trees_manipulation.behaviors.{m}" for m in BUILTIN_MODULES)))


def _process_context() -> Any:
    """The worker start method: ``forkserver`` preloading :data:`FORKSERVER_PRELOAD` (else ``spawn``).

    Never ``fork`` from this process: it may hold threads (the progress bar's, Ray's) and PyBullet
    state from in-process runs. The fork server never connects to PyBullet (it only imports); each
    worker connects its own PyBullet client per run, after the fork.
    """
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    if ctx.get_start_method() == "forkserver":
        ctx.set_forkserver_preload(forkserver_preload())
    return ctx


def _start_forkserver() -> None:
    """Start the fork server now (non-blocking): its preload overlaps the parent's validation.

    No-op where the start method is not forkserver, or when it already runs (a later sweep in the
    same process reuses it and its preloaded modules).
    """
    ctx = _process_context()
    if ctx.get_start_method() == "forkserver":
        from multiprocessing import forkserver

        forkserver.ensure_running()


def _warm_parent(plot: bool) -> None:
    """Import what the parent needs after the runs (scipy.stats for the Wilson intervals, matplotlib
    for the plot) while the fork server is still preloading, instead of after the last run."""
    import scipy.stats  # noqa: F401

    if plot:
        import matplotlib.backends.backend_agg  # noqa: F401
        import matplotlib.figure  # noqa: F401


def _execute_process(jobs: list[SweepJob], workers: int, on_done: Callable[[dict[str, Any]], None]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    if workers <= 1:
        try:
            for job in jobs:
                row = run_trial(job)
                rows.append(row)
                on_done(row)
        finally:
            close_worker_sim()
        return rows
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=_process_context())
    try:
        futures = {pool.submit(run_trial, job): job for job in jobs}
        for fut in as_completed(futures):
            try:
                row = fut.result()
            except Exception as e:  # the worker process died (e.g. a crash inside PyBullet)
                row = _crashed_row(futures[fut], e)
            rows.append(row)
            on_done(row)
    except BaseException:  # Ctrl-C: drop the queued runs instead of finishing them
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return rows


def _crashed_row(job: SweepJob, e: BaseException) -> dict[str, Any]:
    t = job.trial
    row: dict[str, Any] = {"run": t.index, "point": t.point, "trial": t.trial, "seed": t.seed}
    row.update({k: _cell(v) for k, v in t.params})
    row.update({"status": "ERROR", "success": 0, "expect_ok": 0, "sim_time_s": None, "wall_time_s": None, "cpu_time_s": None, "ticks": 0,
                "failed_behaviour": "", "failure": f"worker failed: {type(e).__name__}: {e}"})
    return row


def import_ray() -> Any:
    """Import Ray, or raise SweepError saying how to install it."""
    try:
        import ray  # noqa: PLC0415 - optional dependency, imported only for --executor ray
    except ImportError:
        raise SweepError("--executor ray needs Ray, which is not installed: pip install 'py_trees_manipulation[ray]' "
                         "(or pip install ray)") from None
    return ray


def check_ray_address(address: str, timeout_s: float = 5.0) -> None:
    """Refuse a Ray head that does not accept a TCP connection, before ``ray.init`` (which retries
    an unreachable GCS for minutes, printing a warning every few seconds).

    ``address`` is ``HOST:PORT`` (the GCS, default port 6379), ``ray://HOST:PORT`` (Ray Client,
    default port 10001) or ``auto`` / ``local`` (not checked here).

    Raises:
        SweepError: one line naming the address and the reason.
    """
    import socket

    if address in ("auto", "local"):
        return
    rest = address[len("ray://"):] if address.startswith("ray://") else address
    host, sep, port_text = rest.rpartition(":")
    if not sep:
        host, port_text = rest, "10001" if address.startswith("ray://") else "6379"
    host = host.strip("[]")
    try:
        port = int(port_text)
    except ValueError:
        raise SweepError(f"--address {address!r}: expected HOST:PORT or ray://HOST:PORT") from None
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            pass
    except OSError as e:
        raise SweepError(f"cannot reach the Ray head at {address} ({e.strerror or type(e).__name__}): start it with "
                         "'ray start --head' there, or leave out --address for a local Ray") from None


def _execute_ray(jobs: list[SweepJob], workers: int, address: Optional[str],
                 on_done: Callable[[dict[str, Any]], None]) -> list[dict[str, Any]]:
    if address:
        check_ray_address(address)
    ray = import_ray()
    started = False
    if not ray.is_initialized():
        try:
            if address:
                ray.init(address=address, logging_level="WARNING", log_to_driver=False)
            else:
                ray.init(num_cpus=max(1, workers), include_dashboard=False, logging_level="WARNING",
                         log_to_driver=False)
        except Exception as e:  # noqa: BLE001 - Ray raises ConnectionError, ValueError, RuntimeError...
            first = (str(e).strip().splitlines() or [""])[0]
            raise SweepError(f"cannot start Ray{' at ' + address if address else ''}: {type(e).__name__}: {first}") from None
        started = True
    rows: list[dict[str, Any]] = []
    try:
        remote = ray.remote(num_cpus=1, max_retries=0)(run_trial)
        refs = {remote.remote(job): job for job in jobs}
        pending = list(refs)
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                try:
                    row = ray.get(ref)
                except Exception as e:  # the task or its worker died
                    row = _crashed_row(refs[ref], e)
                rows.append(row)
                on_done(row)
    finally:
        if started:
            ray.shutdown()
    return rows


# ---------------------------------------------------------------------------------------------------
def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a success rate (scipy ``binomtest(...).proportion_ci``); (nan, nan) for n = 0."""
    if n <= 0:
        return (math.nan, math.nan)
    from scipy.stats import binomtest

    ci = binomtest(int(successes), int(n)).proportion_ci(confidence_level=confidence, method="wilson")
    return (float(ci.low), float(ci.high))


def success_table(rows: Sequence[dict[str, Any]], group_keys: Sequence[str]) -> list[dict[str, Any]]:
    """Success rate per combination of ``group_keys`` values (first-seen order), then an ``all`` row.

    Each row: the group values, ``runs``, ``successes``, ``success_rate``, ``ci95_low``,
    ``ci95_high`` (Wilson), ``errors`` (runs with status ERROR) and ``mean_sim_time_s``.
    """
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for r in sorted(rows, key=lambda r: r["run"]):
        groups.setdefault(tuple(r.get(k) for k in group_keys), []).append(r)

    def stats(rs: list[dict[str, Any]]) -> dict[str, Any]:
        n = len(rs)
        k = sum(int(r.get("success") or 0) for r in rs)
        lo, hi = wilson_interval(k, n)
        times = [float(r["sim_time_s"]) for r in rs if _is_number(r.get("sim_time_s"))]
        return {"runs": n, "successes": k, "success_rate": round(k / n, 6) if n else math.nan,
                "ci95_low": round(lo, 6), "ci95_high": round(hi, 6),
                "errors": sum(1 for r in rs if r.get("status") == "ERROR"),
                "mean_sim_time_s": round(float(np.mean(times)), 4) if times else math.nan}

    table = [{**dict(zip(group_keys, key)), **stats(rs)} for key, rs in groups.items()]
    if group_keys or not table:
        table.append({**{k: "all" for k in group_keys}, **stats(list(rows))})
    return table


def _columns(rows: Sequence[dict[str, Any]], first: Sequence[str]) -> list[str]:
    cols = list(first)
    for r in rows:
        for k in r:
            if k not in cols:
                cols.append(k)
    return cols


def rows_csv(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> str:
    """CSV text (``\\n`` line ends) of ``rows`` with ``columns`` (missing cells empty)."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(columns), extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in columns})
    return buf.getvalue()


def table_text(table: Sequence[dict[str, Any]], group_keys: Sequence[str]) -> str:
    """The success-rate table as aligned plain text."""
    head = list(group_keys) + ["runs", "successes", "success_rate", "95% CI", "errors"]
    body = []
    for t in table:
        ci = f"[{t['ci95_low']:.2f}, {t['ci95_high']:.2f}]" if t["runs"] else "-"
        body.append([str(t.get(k)) for k in group_keys] + [str(t["runs"]), str(t["successes"]),
                                                           f"{t['success_rate'] * 100:.1f} %", ci, str(t["errors"])])
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(head)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(head, widths)), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.rjust(w) if i >= len(group_keys) else c.ljust(w) for i, (c, w) in enumerate(zip(b, widths))) for b in body]
    return "\n".join(lines)


def plot_success(rows: Sequence[dict[str, Any]], param: str, grid: Sequence[GridParam], random: Sequence[RandomParam],
                 path: str, title: str = "") -> str:
    """PNG of success rate (with 95 % Wilson intervals) against ``param``.

    A grid parameter: one point per value (numbers on a numeric axis, others as categories); when
    exactly one other grid parameter has at most 8 values, one line per value of it, else the rate
    over everything else. A random parameter: its draws in equal-width bins.

    Raises:
        SweepError: ``param`` is not swept.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    gkeys = [g.key for g in grid]
    rkeys = [r.key for r in random]
    if param not in gkeys + rkeys:
        raise SweepError(f"--plot {param!r} is not swept; swept: {', '.join(gkeys + rkeys) or 'nothing'}")
    fig = Figure(figsize=(7, 4.5), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)

    def draw(xs: list[Any], subsets: list[list[dict[str, Any]]], label: Optional[str]) -> None:
        k = [sum(int(r.get("success") or 0) for r in s) for s in subsets]
        n = [len(s) for s in subsets]
        keep = [i for i in range(len(xs)) if n[i] > 0]
        rate = np.array([k[i] / n[i] for i in keep])
        ci = np.array([wilson_interval(k[i], n[i]) for i in keep]).reshape(-1, 2)
        x = [xs[i] for i in keep]
        yerr = np.vstack([rate - ci[:, 0], ci[:, 1] - rate]).clip(min=0)
        ax.errorbar(x, rate, yerr=yerr, marker="o", capsize=3, label=label)

    if param in gkeys:
        g = grid[gkeys.index(param)]
        numeric = all(_is_number(v) for v in g.values)
        xs = list(g.values) if numeric else list(range(len(g.values)))
        others = [o for o in grid if o.key != param]
        if len(others) == 1 and len(others[0].values) <= 8:
            o = others[0]
            for ov in o.values:
                subsets = [[r for r in rows if r.get(param) == _cell(v) and r.get(o.key) == _cell(ov)] for v in g.values]
                draw(xs, subsets, f"{o.key} = {ov}")
            ax.legend(fontsize=8)
        else:
            draw(xs, [[r for r in rows if r.get(param) == _cell(v)] for v in g.values], None)
        if not numeric:
            ax.set_xticks(xs)
            ax.set_xticklabels([str(v) for v in g.values])
    else:
        rp = random[rkeys.index(param)]
        nbins = int(min(10, max(2, len(rows) // 5)))
        edges = np.linspace(rp.lo, rp.hi, nbins + 1)
        idx = np.clip(np.searchsorted(edges, [float(r[param]) for r in rows], side="right") - 1, 0, nbins - 1)
        centres = list((edges[:-1] + edges[1:]) / 2)
        draw(centres, [[r for r, b in zip(rows, idx) if b == i] for i in range(nbins)], None)
    ax.set_xlabel(param)
    ax.set_ylabel("success rate")
    ax.set_ylim(-0.05, 1.05)
    ax.grid(True, alpha=0.3)
    ax.set_title(title or f"success rate vs {param} ({len(rows)} runs)", fontsize=10)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path)
    return path


@dataclass
class SweepResult:
    """A finished sweep.

    Attributes:
        rows: one per run, in run order (the rows of runs.csv).
        table: the success-rate table (:func:`success_table` over the grid parameters).
        group_keys: the table's grouping (the grid parameters).
        files: output name -> path (``runs``, ``table``, ``table_text``, ``plot``, ``json``).
        wall_time_s: the whole sweep's wall time: validation, worker start-up, the runs and the
            success table (not writing the outputs).
    """

    rows: list[dict[str, Any]]
    table: list[dict[str, Any]]
    group_keys: list[str]
    files: dict[str, str] = field(default_factory=dict)
    wall_time_s: float = 0.0

    @property
    def success_rate(self) -> float:
        return float(self.table[-1]["success_rate"]) if self.table else math.nan

    def runs_csv(self, deterministic: bool = False) -> str:
        """runs.csv's text; ``deterministic`` leaves out wall-clock columns (to compare sweeps)."""
        cols = [c for c in _columns(self.rows, self._first_columns()) if not (deterministic and c in NONDETERMINISTIC_COLUMNS)]
        return rows_csv(self.rows, cols)

    def table_csv(self) -> str:
        first = list(self.group_keys) + ["runs", "successes", "success_rate", "ci95_low", "ci95_high", "errors", "mean_sim_time_s"]
        return rows_csv(self.table, first)

    def table_text(self) -> str:
        return table_text(self.table, self.group_keys)

    def _first_columns(self) -> list[str]:
        swept = []
        for r in self.rows:
            for k in r:
                if k not in RUN_COLUMNS and k not in swept and k not in RESULT_COLUMNS:
                    swept.append(k)
                if k == "status":
                    break
        return list(RUN_COLUMNS) + swept + list(RESULT_COLUMNS)


def validate(config: SweepConfig) -> list[Trial]:
    """Check the sweep before anything runs: the file, the variant, every grid point's overrides.

    Returns:
        the trials (:func:`expand`).

    Raises:
        SweepError: bad settings, unknown variant. TreeLoadError: the file, or a swept value, is invalid.
    """
    from .scenario import load_scenario, override_string

    if config.executor not in EXECUTORS:
        raise SweepError(f"--executor {config.executor!r}: use {' or '.join(EXECUTORS)}")
    if config.workers < 1:
        raise SweepError("--workers must be >= 1")
    if config.backend not in ("sim", "fake"):
        raise SweepError(f"unknown backend {config.backend!r}: use sim or fake")
    if config.executor == "ray":
        import_ray()
    swept = [g.key for g in config.grid] + [r.key for r in config.random]
    if config.plot_param is not None and config.plot_param not in swept:
        raise SweepError(f"--plot {config.plot_param!r} is not swept; swept: {', '.join(swept) or 'nothing'}")
    trials = expand(config.grid, config.random, config.trials, config.seed)
    scenario = load_scenario(config.file)
    if config.variant not in scenario.variants:
        from ..located.errors import did_you_mean

        raise SweepError(f"{config.file} has no variant {config.variant!r}; "
                         + (did_you_mean(config.variant, list(scenario.variants)) or f"variants: {', '.join(scenario.variants)}"))
    problems = []
    seen: set[str] = set()
    for values in itertools.product(*(g.values for g in config.grid)):
        ov = [override_string(g.key, v) for g, v in zip(config.grid, values)]
        ov += [override_string(r.key, r.lo) for r in config.random]
        try:
            scenario.load(config.variant, list(config.overrides) + ov)
        except TreeLoadError as e:
            for p in e.problems:
                if str(p) not in seen:
                    seen.add(str(p))
                    problems.append(p)
    if problems:
        raise TreeLoadError(problems)
    return trials


def run_sweep(config: SweepConfig, progress: bool = True, console: Any = None) -> SweepResult:
    """Validate, run every trial, and write the outputs to ``config.out_dir`` (if given).

    Args:
        config: the sweep.
        progress: show a progress bar (rich, on stderr).
        console: a ``rich.console.Console`` for the progress bar (default: stderr).

    Raises:
        SweepError, TreeLoadError: see :func:`validate`.
    """
    wall0 = time.perf_counter()
    n_runs = math.prod(len(g.values) for g in config.grid) * max(1, config.trials)
    pool_workers = min(config.workers, n_runs)
    if config.executor == "process" and pool_workers > 1:
        _start_forkserver()  # its preload (~1.5 s) runs while this process validates
    trials = validate(config)
    if config.executor == "process" and pool_workers > 1:
        _warm_parent(plot=bool(config.out_dir) and bool(config.grid or config.random))
    cwd = os.getcwd()
    jobs = [SweepJob(config.file, config.variant, tuple(config.overrides), t, config.tick_hz, config.timeout_s, config.backend, cwd)
            for t in trials]
    bar = None
    task_id = None
    done = {"n": 0, "ok": 0}
    if progress:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

        bar = Progress(TextColumn("[bold]sweep"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[ok]} ok"),
                       TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn(),
                       console=console or Console(stderr=True), transient=False)
        bar.start()
        task_id = bar.add_task("runs", total=len(jobs), ok=0)

    def on_done(row: dict[str, Any]) -> None:
        done["n"] += 1
        done["ok"] += int(row.get("success") or 0)
        if bar is not None:
            bar.update(task_id, advance=1, ok=done["ok"])

    try:
        if config.executor == "ray":
            rows = _execute_ray(jobs, config.workers, config.address, on_done)
        else:
            rows = _execute_process(jobs, pool_workers, on_done)
    finally:
        if bar is not None:
            bar.stop()
    rows.sort(key=lambda r: r["run"])
    group_keys = [g.key for g in config.grid]
    result = SweepResult(rows, success_table(rows, group_keys), group_keys, wall_time_s=round(time.perf_counter() - wall0, 3))
    if config.out_dir:
        write_outputs(result, config)
    return result


def write_outputs(result: SweepResult, config: SweepConfig) -> dict[str, str]:
    """Write runs.csv, success_rates.csv/.txt, success_rate.png (when something is swept) and sweep.json."""
    out = config.out_dir or "."
    os.makedirs(out, exist_ok=True)
    files = {"runs": os.path.join(out, "runs.csv"), "table": os.path.join(out, "success_rates.csv"),
             "table_text": os.path.join(out, "success_rates.txt"), "json": os.path.join(out, "sweep.json")}
    with open(files["runs"], "w", newline="") as f:
        f.write(result.runs_csv())
    with open(files["table"], "w", newline="") as f:
        f.write(result.table_csv())
    with open(files["table_text"], "w") as f:
        f.write(result.table_text() + "\n")
    param = config.plot_param or (config.grid[0].key if config.grid else (config.random[0].key if config.random else None))
    if param is not None:
        files["plot"] = plot_success(result.rows, param, config.grid, config.random, os.path.join(out, "success_rate.png"),
                                     title=f"{os.path.basename(config.file)}: success rate vs {param} ({len(result.rows)} runs, seed {config.seed})")
    meta = {k: v for k, v in asdict(config).items() if k not in ("grid", "random")}
    meta["grid"] = {g.key: list(g.values) for g in config.grid}
    meta["random"] = {r.key: [r.lo, r.hi] for r in config.random}
    meta.update({"runs": len(result.rows), "success_rate": result.success_rate, "wall_time_s": result.wall_time_s,
                 "files": {k: os.path.basename(v) for k, v in files.items()}})
    with open(files["json"], "w") as f:
        json.dump(meta, f, indent=2, default=str)
        f.write("\n")
    result.files = files
    return files
