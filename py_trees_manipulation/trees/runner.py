"""Tick a task tree against a backend in backend time and summarise the run.

The runner owns the loop: tick the tree, let observers look, advance the backend by one tick
period (sim: ``physics_hz / tick_hz`` physics steps with the controllers), until the root
succeeds or fails, the timeout (backend seconds) passes, or the user interrupts. Whatever happens,
observers get ``on_end`` (logs are closed) and the summary is written.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

import py_trees
from py_trees.common import Status

from ..behaviors.base import BehaviourSetupError
from ..observers import RunObserver, RunState
from .factory import build_tree, initialise_blackboard
from .spec import TaskSpec
from ..msgs.plain import jsonable as _jsonable

DEFAULT_TIMEOUT_S = 300.0

#: exit codes of ``ptm run``
EXIT_SUCCESS, EXIT_FAILURE, EXIT_INVALID, EXIT_INTERRUPTED = 0, 1, 2, 130


@dataclass
class RunOptions:
    """How to run a task.

    Attributes:
        backend: ``"sim"`` (embedded PyBullet) or ``"hardware"``.
        gui: open the PyBullet GUI.
        realtime: pace the simulator to the wall clock.
        seed: random seed (overrides the scene's).
        tick_hz: tree tick rate, Hz (backend time).
        timeout_s: give up after this much backend time, seconds.
        display: show the live tree in the terminal (None: only when stdout is a TTY).
        robot: robot file for the hardware backend.
        plan_first: before the first tick, run the tree's planning checks in the backend's collision
            world (:func:`~.plan_check.plan_check_in_backend`: ``ptm validate --plan``'s checks,
            with the robot where it is): a task that cannot be done fails before any goal is sent.
            None (default): on, on every backend (the simulator included: a task that would fail
            half-way, a regrasp planned after the pick, fails before the pick); False: every
            motion is planned as it starts.
    """

    backend: str = "sim"
    gui: bool = False
    realtime: bool = False
    seed: Optional[int] = None
    tick_hz: float = 30.0
    timeout_s: Optional[float] = None
    display: Optional[bool] = None
    robot: Optional[str] = None
    observers: list[Any] = field(default_factory=list)
    plan_first: Optional[bool] = None


@dataclass
class RunResult:
    """The run's verdict: ``summary`` (as written to JSON) and the process ``exit_code``."""

    summary: dict[str, Any]
    exit_code: int
    tree: Any = None


def make_backend(task: TaskSpec, options: RunOptions) -> Any:
    """The backend named by ``options.backend`` for ``task``, from the backend registry
    (:mod:`.backends`: entry points of ``py_trees_manipulation.backends``; ``sim`` and ``hardware``
    built in).

    Raises:
        ValueError: unknown backend name, or what the backend's factory refuses (a sim run without a
            scene, ``base_pose: auto`` on hardware, ...).
    """
    from ..behaviors import registry
    from ..behaviors.reach import requests_from_tree
    from ..observers import needs_visual_shapes
    from .backends import BackendRequest, make

    request = BackendRequest(task=task, options=options,
                             base_dir=task.scene_dir or os.path.dirname(os.path.abspath(task.file)),
                             reach_requests=requests_from_tree(task.tree) if task.scene else [],
                             visual_shapes=needs_visual_shapes(options.observers), lookup=registry.lookup,
                             task_check=lazy_task_check(task, options.seed) if task.scene else None)
    return make(options.backend, request)


def lazy_task_check(task: TaskSpec, seed: Optional[int] = None) -> Any:
    """:func:`~.plan_check.whole_task_test` for ``task``, imported when first called (a run that
    suggests no base never loads the dry run)."""
    def test(scene: Any) -> Optional[str]:
        from .plan_check import whole_task_test

        return whole_task_test(task, seed)(scene)

    return test


#: the arm motions whose refusal before moving (out of reach) gets a base suggestion from the dry run
_MOTIONS = ("MoveToPose", "MoveCartesian", "MoveJoints")


def _motion_refusal_fix(task: TaskSpec, backend: Any, culprit: Any, status: str, options: RunOptions) -> str:
    """For an arm motion the run refused before it moved because its target is out of reach (no base
    suggested yet): the fix ``ptm validate --plan`` gives at that node (:func:`~.plan_check.plan_check`,
    the dry run's base whole-task-checked: :func:`~.plan_check.motion_base_fix`), or "". Only in the
    simulator (its collision world is the task file's)."""
    spec = getattr(culprit, "spec", None)
    text = culprit.feedback_message or ""
    if (status != "FAILURE" or spec is None or spec.type not in _MOTIONS or "out of reach" not in text
            or "base_pose=" in text or getattr(backend, "name", "") != "sim" or not task.scene):
        return ""
    from .plan_check import plan_check

    try:
        problems = plan_check(task, seed=options.seed)
    except Exception:  # the fix is a help: the run's own verdict stands without it
        return ""
    same = next((p for p in problems if p.node_name == (spec.name or spec.type) and p.node_type == spec.type), None)
    return same.hint if same is not None and same.hint and "base" in same.hint else ""


def _failing_node(root: py_trees.behaviour.Behaviour) -> Optional[py_trees.behaviour.Behaviour]:
    """The deepest FAILURE node last visited: the one whose feedback explains the failure."""
    found = None
    for node in root.iterate():
        if node.status == Status.FAILURE and not any(c.status == Status.FAILURE for c in node.children):
            found = node
    return found


def _place_preflight(backend: Any, task: Optional[TaskSpec] = None,
                     seed: Optional[int] = None) -> tuple[Optional[str], Optional[str]]:
    """Before the first tick: the scene's ``task.place_position`` for its target object checked in the
    backend's collision world (:func:`~py_trees_manipulation.collision.placement.check_place`): a
    support under it and room for the object. Returns (why the place cannot work, or None; the
    support it would rest on, or None when there is no place or no collision world).

    A refused place suggests a spot from which the whole task passes (issue 33, B4). In the
    simulator the refusal, spot included, is ``ptm validate --plan``'s, computed from the scene as
    written (:func:`~.plan_check.task_place_as_written`: C3, the run's objects carry the scene's pose
    noise, which moved the spot searched in its world by a ring), so a user who follows either
    gets the same spot; elsewhere (hardware: the perceived objects) the spot is searched in the
    backend's world, each tested by the whole task (:func:`~.plan_check.place_accept`).

    In the simulator the verdict is ``ptm validate --plan``'s, first (the scene as written, 0.07-0.16 s):
    with pose noise declared (:func:`~.plan_check.declared_noise`) the place must hold at every pose
    of the noise, the run's draw among them (issue 33: a spot validate passed or suggested was
    refused by the run's draw, with another spot; with no noise a spot at the support test's
    margin as written was refused in the run's world, the mug settled on the table). The draw's own check then adds only
    a body in the way (another object's noise); its support is validate's."""
    from ..backend import planning_service

    scene = getattr(backend, "scene", None)
    spec = getattr(scene, "task", None)
    svc = planning_service(backend)
    call = getattr(svc, "call_in_world", None)
    if spec is None or not callable(call):
        return None, None
    if (getattr(spec, "place_position", None) is None or getattr(spec, "target_object", None) is None
            or not getattr(spec, "placed", True)):
        # no place asked (check_task_place's own test): neither the world synced for it nor the
        # placement module imported (issue 35: a run imports what it uses)
        return None, None
    from ..collision.placement import check_task_place

    judged = False   # the support judged by validate's test
    if getattr(backend, "name", "") == "sim" and task is not None and task.scene:
        from .plan_check import task_place_verdict_as_written

        try:
            written, support = task_place_verdict_as_written(task, scene)
        except (KeyError, ValueError, RuntimeError):
            written, support = [], ""
        if written:
            return written[0].message, None
        judged = bool(support)
    try:
        check = call(lambda world: check_task_place(world, spec, accept=None))
    except (KeyError, ValueError, RuntimeError):
        return None, None
    if check is None:
        return None, None
    if check.ok:
        return None, check.support
    if judged and not check.blocker:
        # the draw's support: passed above as written, at every pose of the declared noise
        return None, support
    if task is None or not task.scene:
        return f"scene.task.place_position: {check.message(spec.target_object, spec.place_position)}", None
    from .plan_check import place_accept, place_override, task_place_as_written

    try:
        if getattr(backend, "name", "") == "sim":
            written = task_place_as_written(task, scene, seed)
            if written:
                return written[0].message, None
            note = (" (with the run's pose noise, seed "
                    f"{seed if seed is not None else getattr(scene, 'seed', 0)}: as written the place is free)")
        else:
            note = ""
        accept = place_accept(task, scene, None)
        try:
            check = call(lambda world: check_task_place(world, spec, accept=accept))
        finally:
            accept.close()
        if check.suggestion is not None:
            check.fix = place_override(task, check.suggestion)
    except Exception:  # the suggestion is a help: the refusal stands without it (no spot untested)
        check.suggestion, check.refused, note = None, [], ""
    return f"scene.task.place_position: {check.message(spec.target_object, spec.place_position)}{note}", None


#: how far from ``scene.task.place_position`` a placed object may rest for a run to succeed, m (the
#: examples' ObjectNear takes 0.03 m; a place misses by a few mm; 5 cm is not where the user meant)
PLACE_TOLERANCE_M = 0.05


#: how far the target may slide in the hand, from where it was gripped, for a run to succeed, m (metric
#: object_slid_in_hand_m, sim/outcome.py). The slip servo's designed slip at the lift's start moves a can
#: a few millimetres (examples/slip_servo.yaml on the three stock robots, 0.4-1.2 kg:
#: benchmarks/sweep_slip_servo.py); a can left 2-3.5 cm down the pads was a SUCCESS before (issue 33 item 5)
SLID_IN_HAND_M = 0.015


def _place_outcome_failure(backend: Any, support: Optional[str]) -> Optional[str]:
    """After the tree succeeded: no fragile object may have been crushed (``crushed_objects``), the
    task's target object must not have been dropped (``object_dropped``:
    it fell after leaving the gripper without being set down, whatever the tree checked), nor slid in the
    hand more than :data:`SLID_IN_HAND_M` from where it was gripped (``object_slid_in_hand_m``), and the
    target object of a place task must rest on the support its place position has (``placed_on``)
    and be at rest; else why not."""
    check = getattr(backend, "payload_problem", None)   # the simulator's (sim/payload.py); not on hardware
    heavy = check() if callable(check) else None
    if heavy:   # the simulator's wrist force says a hand carried more than its arm may lift
        return f"the tree succeeded but {heavy}"
    try:
        m = backend.metrics()
    except Exception:
        return None
    on, rest, obj = m.get("placed_on"), m.get("object_at_rest"), m.get("target_object")
    crushed = m.get("crushed_objects") or []
    if crushed:  # a fragile object broke, whatever the tree checked (an ObjectIntact node or none)
        fragile = {o.name: o.crush_force_n for o in getattr(getattr(backend, "scene", None), "objects", ())
                   if getattr(o, "crush_force_n", None) is not None}
        names = ", ".join(f"{n!r}" + (f" (crush_force_n {fragile[n]:g} N)" if n in fragile else "") for n in crushed)
        peak = m.get("max_fingertip_force_n")
        return (f"the tree succeeded but {names} {'was' if len(crushed) == 1 else 'were'} crushed: a finger pressed "
                f"harder than that for crush_time_s" + (f" (peak {peak:.1f} N)" if isinstance(peak, (int, float)) else "")
                + " (metric crushed_objects; the run's events say when); grip it with less force (the grasp's "
                "max_effort, a force servo's fingertip_force) or give the object the crush_force_n it has")
    if m.get("object_dropped") is True:
        return (f"the tree succeeded but {obj!r} was dropped: it fell after it left the gripper instead of being "
                "set down (metric object_dropped; the run's events say from where)")
    slid = m.get("object_slid_in_hand_m")
    if isinstance(slid, (int, float)) and slid > SLID_IN_HAND_M:
        return (f"the tree succeeded but {obj!r} slid in the hand: {m.get('object_slid_in_hand') or f'{slid:.3f} m'}, "
                f"more than {SLID_IN_HAND_M:g} m (metric object_slid_in_hand_m): the grasp did not hold it where it "
                "was gripped; grip it harder (a higher force or fingertip_force_limit), or lift it slower")
    if support is None:
        return None
    err = m.get("place_error_m")
    if isinstance(err, (int, float)) and err > PLACE_TOLERANCE_M:
        return (f"the tree succeeded but {obj!r} rests {err:.3f} m from scene.task.place_position, more than "
                f"{PLACE_TOLERANCE_M:g} m (metric place_error_m): the tree put it elsewhere; the task's place and "
                "the tree's must be the same (in the examples parameters.place_position sets both)")
    if on is not None and on != support:
        return (f"the tree succeeded but {obj!r} rests on {on!r}, not on {support!r}, the support under "
                "scene.task.place_position (metric placed_on)")
    if rest is False:
        return f"the tree succeeded but {obj!r} is not at rest on {support!r} (metric object_at_rest)"
    return None


def _node_info(node: Any) -> dict[str, Any]:
    spec = getattr(node, "spec", None)
    return {
        "name": node.name,
        "type": spec.type if spec is not None else type(node).__name__,
        "feedback": node.feedback_message,
        "location": str(spec.loc) if spec is not None else None,
    }




class _Display:
    """Live tree in the terminal (rich), refreshed at most 10 times per wall second."""

    def __init__(self, root: Any):
        from rich.console import Console
        from rich.live import Live
        from rich.text import Text

        self._Text = Text
        self._root = root
        self._live = Live(console=Console(), auto_refresh=False, transient=True)
        self._live.start()
        self._last = 0.0

    def update(self, run: RunState, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last < 0.1:
            return
        self._last = now
        text = py_trees.display.unicode_tree(self._root, show_status=True)
        header = f"t = {run.time_s:7.2f} s   tick {run.tick}\n"
        self._live.update(self._Text(header + text), refresh=True)

    def close(self) -> None:
        self._live.stop()


def run_task(task: TaskSpec, options: Optional[RunOptions] = None, backend: Any = None,
             stream: Any = None) -> RunResult:
    """Run ``task`` to its end and return the summary.

    Args:
        task: a validated task (:func:`~.loader.load_task`).
        options: run options; ``options.observers`` get the run hooks.
        backend: an existing backend (tests); by default one is made from ``options`` and closed
            at the end.
        stream: where to print the live display (default stdout; only when it is a TTY).

    Returns:
        RunResult: ``exit_code`` 0 on SUCCESS, 1 on FAILURE/timeout/error, 2 when the tree cannot
        run on this backend, 130 when interrupted.
    """
    options = options or RunOptions()
    own_backend = backend is None
    wall0 = time.perf_counter()
    py_trees.blackboard.Blackboard.clear()
    if own_backend:
        backend = make_backend(task, options)
    summary: dict[str, Any] = {"task": task.name, "file": task.file, "backend": options.backend,
                               "seed": options.seed if options.seed is not None else (task.scene or {}).get("seed", 0)}
    tree = None
    run: Optional[RunState] = None
    display: Optional[_Display] = None
    status_name = "ERROR"
    exit_code = EXIT_FAILURE
    error: Optional[BaseException] = None
    observers: list[RunObserver] = list(options.observers)
    started: list[RunObserver] = []
    try:
        initialise_blackboard(task)
        tree = build_tree(task)
        try:
            tree.setup(backend=backend, timeout=py_trees.common.Duration.INFINITE)
        except BehaviourSetupError as e:
            summary["error"] = str(e)
            status_name, exit_code = "INVALID", EXIT_INVALID
            return RunResult(summary, exit_code, tree)
        run = RunState(tree=tree, backend=backend, source=task.file,
                       extra={"tick_hz": options.tick_hz, "seed": summary["seed"]})
        events_fn = getattr(backend, "drain_events", None)
        for obs in observers:
            obs.on_start(run)
            started.append(obs)
        show = options.display if options.display is not None else (stream or sys.stdout).isatty()
        if show:
            display = _Display(tree.root)
        dt = 1.0 / options.tick_hz
        timeout = options.timeout_s if options.timeout_s is not None else DEFAULT_TIMEOUT_S
        t0 = backend.now()
        # the backend may know before anything moves that the task cannot succeed (base_pose: auto
        # found no base from which every target is reachable): FAILURE without a tick
        preflight = getattr(backend, "preflight_failure", None)
        plan_first = options.plan_first if options.plan_first is not None else True
        place_support: Optional[str] = None
        if not preflight:  # a place on an occupied spot is refused before anything is planned
            preflight, place_support = _place_preflight(backend, task, summary.get("seed"))
        if not preflight and plan_first:
            from .plan_check import plan_check_in_backend

            problems = plan_check_in_backend(task, backend, seed=int(summary["seed"] or 0))
            if problems:
                p = problems[0]
                # the check's message names its node type for `ptm validate --plan`; the feedback
                # reads as the node's own would in the run
                why = p.message
                if p.node_type and why.startswith(f"{p.node_type}: "):
                    why = why[len(p.node_type) + 2:]
                if p.hint and p.hint not in why:
                    why = f"{why}; {p.hint}"
                preflight = f"planning check before the first goal: {p.node_type + ': ' if p.node_type else ''}{why}"
                summary["failed_behaviour"] = {"name": p.node_name, "type": p.node_type, "feedback": why,
                                               "location": str(p.loc)}
        if preflight:
            status_name, exit_code = "FAILURE", EXIT_FAILURE
            summary["error"] = str(preflight)
        while not preflight:
            tree.tick()
            # a tick counted is a tick logged: a Ctrl-C (under interrupt_once) waits for the observers
            _TICK_SECTION[0] = True
            try:
                run.tick += 1
                run.time_s = float(backend.now())
                if callable(events_fn):
                    run.events.extend(events_fn())
                for obs in observers:
                    obs.on_tick(run)
            finally:
                _TICK_SECTION[0] = False
            if _INTERRUPT_PENDING[0]:
                _INTERRUPT_PENDING[0] = False
                raise KeyboardInterrupt
            if display is not None:
                display.update(run)
            status = tree.root.status
            if status in (Status.SUCCESS, Status.FAILURE):
                status_name = status.name
                exit_code = EXIT_SUCCESS if status == Status.SUCCESS else EXIT_FAILURE
                outcome = _place_outcome_failure(backend, place_support) if status == Status.SUCCESS else None
                if outcome:  # the tree says done, the world says otherwise: the world's verdict
                    status_name, exit_code = "FAILURE", EXIT_FAILURE
                    summary["error"] = outcome
                break
            if run.time_s - t0 >= timeout:
                status_name, exit_code = "TIMEOUT", EXIT_FAILURE
                summary["error"] = f"timed out after {timeout:g} s of backend time"
                break
            backend.advance(dt)
    except KeyboardInterrupt as e:
        status_name, exit_code = "INTERRUPTED", EXIT_INTERRUPTED
        summary["error"] = "interrupted by the user"
        error = e
    except Exception as e:  # a behaviour or the backend raised: keep the log, report, re-raise in CLI
        if getattr(e, "run_failure", False):  # the backend ended the run (e.g. connection lost): FAILURE
            status_name, exit_code = "FAILURE", EXIT_FAILURE
            summary["error"] = str(e)
        else:
            status_name, exit_code = "ERROR", EXIT_FAILURE
            summary["error"] = f"{type(e).__name__}: {e}"
            summary["traceback"] = traceback.format_exc()
            error = e
    finally:
        with sigint_deferred():  # a second Ctrl-C must not cut the log or the summary short
            if display is not None:
                display.update(run, force=True) if run is not None else None
                display.close()
            culprit = None
            if tree is not None and status_name in ("FAILURE", "TIMEOUT", "ERROR", "INTERRUPTED"):
                culprit = _failing_node(tree.root) if status_name != "TIMEOUT" else None
                if culprit is None and tree.root.status == Status.RUNNING:
                    culprit = tree.root.tip()  # what was still running
                if culprit is not None:
                    summary["failed_behaviour"] = _node_info(culprit)
                    fix = _motion_refusal_fix(task, backend, culprit, status_name, options)
                    if fix:
                        summary["failed_behaviour"]["feedback"] = f"{culprit.feedback_message}; {fix}"
                        culprit.feedback_message = summary["failed_behaviour"]["feedback"]
                    # stopped by the backend (FAILURE) or by the run's time limit (TIMEOUT): say so
                    reason = summary.get("error") if status_name in ("FAILURE", "TIMEOUT") else None
                    if reason and reason not in (culprit.feedback_message or ""):
                        fb = culprit.feedback_message
                        summary["failed_behaviour"]["feedback"] = reason + (f" (it reported: {fb})" if fb else "")
            if tree is not None and tree.root.status == Status.RUNNING:
                try:
                    tree.root.stop(Status.INVALID)  # cancels running goals
                except Exception:
                    pass
            wall = time.perf_counter() - wall0
            sim_t = float(backend.now()) if backend is not None else 0.0
            summary.update({
                "status": status_name,
                "ticks": run.tick if run is not None else 0,
                "sim_time_s": round(sim_t, 4),
                "wall_time_s": round(wall, 4),
                "real_time_factor": round(sim_t / wall, 3) if wall > 0 else None,
            })
            try:
                metrics = backend.metrics() if backend is not None else {}
            except Exception as e:  # metrics must not hide the run's own outcome
                metrics = {"error": f"metrics failed: {e}"}
            # behaviours report task-level metrics on the blackboard under /metrics/<name>
            for key, value in py_trees.blackboard.Blackboard.storage.items():
                if key.startswith("/metrics/") and key.count("/") == 2:
                    metrics[key[len("/metrics/"):]] = value
            summary["metrics"] = _jsonable(metrics)
            placements = getattr(backend, "base_placements", None)
            if placements:
                summary["base_poses"] = _jsonable({name: p.summary() for name, p in placements.items()})
            if run is not None:
                summary["events"] = _jsonable(run.events[-200:])
            for obs in started:
                try:
                    obs.on_end(run, summary)  # type: ignore[arg-type]
                except Exception as e:  # an observer must not turn a result into a crash
                    print(f"warning: observer {type(obs).__name__} failed at the end: {e}", file=sys.stderr)
            if own_backend and backend is not None:
                backend.close()
    result = RunResult(summary, exit_code, tree)
    if error is not None and not isinstance(error, (KeyboardInterrupt,)):
        result.summary["_exception"] = error  # the CLI decides how to show it
    return result


#: the run loop is handing a tick to its observers (the run log): interrupt_once's Ctrl-C waits for
#: the end of it (_INTERRUPT_PENDING), so a counted tick is always a logged one
_TICK_SECTION = [False]
_INTERRUPT_PENDING = [False]


@contextlib.contextmanager
def _sigint_handled(interrupt_first: bool, keep_after_interrupt: bool = False) -> Iterator[None]:
    """SIGINT handling for a block (main thread only; the previous handler restored after): with
    ``interrupt_first`` the first Ctrl-C raises KeyboardInterrupt, every other one (all of them
    without it) is noted with one line and ignored. With ``keep_after_interrupt``, once the first
    Ctrl-C has fired the block leaves the noting handler installed (the caller is about to exit: a
    restored handler would let a later Ctrl-C interrupt the exit itself)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    told: list[bool] = []

    def later(signum: int, frame: Any) -> None:
        if not told:
            told.append(True)
            print("ptm: finishing the run log and summary; Ctrl-C is ignored until they are written",
                  file=sys.stderr, flush=True)

    def first(signum: int, frame: Any) -> None:
        signal.signal(signal.SIGINT, later)
        if _TICK_SECTION[0]:
            _INTERRUPT_PENDING[0] = True  # raised by the run loop once the tick is logged
            return
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGINT, first if interrupt_first else later)
    except (ValueError, OSError):  # no signals here (an embedded interpreter)
        yield
        return
    try:
        yield
    finally:
        if not (keep_after_interrupt and signal.getsignal(signal.SIGINT) is later):
            signal.signal(signal.SIGINT, previous)


def sigint_deferred() -> Any:
    """While the run's log, summary and backend are being closed, Ctrl-C is noted and ignored (one
    line says so) instead of raising KeyboardInterrupt halfway through (a context manager)."""
    return _sigint_handled(interrupt_first=False)


def interrupt_once(keep_after_interrupt: bool = False) -> Any:
    """The first Ctrl-C raises KeyboardInterrupt (the run ends as INTERRUPTED); every later one is
    noted and ignored until the block ends, so two Ctrl-C in a row still give exit code 130 with a
    complete run log and summary (a context manager; ``ptm run`` wraps the run in it). With
    ``keep_after_interrupt``, later Ctrl-C stay ignored after the block once the first has fired."""
    return _sigint_handled(interrupt_first=True, keep_after_interrupt=keep_after_interrupt)


def write_summary(summary: dict[str, Any], path: str) -> None:
    """Write the summary as JSON (creates parent directories)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump({k: v for k, v in summary.items() if not k.startswith("_")}, f, indent=2, default=str)
        f.write("\n")


#: metrics the verdict line shows before the others (at most ten are shown; ``--summary`` has all):
#: the figures the examples table (README, docs/examples.md) names for each example
HEADLINE_METRICS = frozenset({
    "target_object", "object_lift_m", "place_error_m", "object_tilt_deg", "object_dropped", "object_slid_in_hand_m", "crushed",
    "max_fingertip_force_n", "slip_events_missed", "grip_margin", "pad_force_imbalance_n",
    "grasp_fix_attaches", "door_angle_deg", "drawer_opening_m", "grasp_changes", "goal_reached",
    "min_clearance_m", "place_impact_n", "chosen_grasp", "placed_on",
})


def verdict_line(summary: dict[str, Any]) -> str:
    """One line: status, task, times, headline metrics, and the failing behaviour's reason."""
    s = summary
    parts = [f"{s.get('status')}: {s.get('task')}"]
    if "sim_time_s" in s:
        rtf = s.get("real_time_factor")
        parts.append(f"in {s['sim_time_s']:.2f} s sim ({s.get('wall_time_s', 0):.2f} s wall"
                     + (f", {rtf:.1f}x real time" if rtf else "") + f", {s.get('ticks', 0)} ticks)")
    metrics = s.get("metrics") or {}
    scalars = [k for k, v in metrics.items() if k not in ("sim_time_s",) and not isinstance(v, (dict, list))]
    # the examples' headline figures (the examples table) first, whatever family they come from
    keys = [k for k in scalars if k in HEADLINE_METRICS] + [k for k in scalars if k not in HEADLINE_METRICS]
    shown = [f"{k}={metrics[k]:.3f}" if isinstance(metrics[k], float) else f"{k}={metrics[k]}" for k in keys]
    line = " ".join(parts)
    if shown:
        line += "; " + ", ".join(shown[:10])
    for robot, bp in (s.get("base_poses") or {}).items():
        if "position" in bp and bp.get("ok", True):
            line += (f"\n  base_pose auto: {robot} on {'the floor' if bp.get('surface') == 'floor' else repr(bp.get('surface'))}"
                     f" at position {bp['position']}, rpy_deg {bp['rpy_deg']} ({bp.get('candidates', 0)} candidates, "
                     f"{bp.get('search_time_s', 0):.1f} s" + (f"; with {bp['relaxed']}" if bp.get("relaxed") else "") + ")")
    fb = s.get("failed_behaviour")
    if fb:
        line += f"\n  failed: {fb['type']} '{fb['name']}'" + (f" ({fb['location']})" if fb.get("location") else "") + f": {fb['feedback']}"
    elif s.get("error"):
        line += f"\n  {s['error']}"
    return line
