"""``ptm validate --plan``: a task's planning checks against its scene as written, without the simulator.

:func:`plan_check` builds the collision world of the task file's scene (robots placed by
``base_pose: auto`` as the simulator would place them), then ticks the tree once against it
(:class:`DryRun`, as MoveIt Task Constructor plans every stage of a pick and place before executing
any) and asks every behaviour that can decide its outcome from the world then (a
``plan_problems(params, world, scene, seed, blackboard, outputs)`` class method) whether it will:
``CheckReachability`` (every target followed as the task moves it: the door's whole arc and the
retreat, the drawer's whole pull, a pick and place with the object held; with a base pose that does
it all), ``ChooseGrasp`` (a grasp of the object where it then is, reaching the place pose when the
file gives it; with a base that does it), ``PlanRegrasp`` (the whole regrasp plan, every transition's
lines checked, from the grasp state the file starts in, or, after a grasp the dry run followed, the
grasp state sensed from the poses in the collision world as the run senses it on hardware).

The dry run follows the nominal path as the run would take it: the arm motions planned by the run's
planner from where the motions before them leave the arm (each goal built by the behaviour's own
``make_goal``), a closing gripper attaching the object between its fingers where it is held (the
following motions planned with it attached), a force-guarded place stopping at its expected contact,
an opening gripper leaving the object where it then is, ``TwistHandle`` / ``MoveAlongArc`` moving the
arm along the simulator's screw waypoints and the held door or drawer to its end value, and the
values the run computes from the scene (object poses, detected handles, affordance frames, the chosen
grasp, the checked posture). So the lift, carry, place and retreat of a pick and place, and the
retreat from an open door, are checked before anything moves; a motion the run would refuse is
refused here at its line. What the dry run cannot know ahead (a key a node it does not follow
writes, a step whose outcome a sensor decides: an event-triggered ``Release``, an ``EventDetector``,
a regrasp plan executed) stops following that arm, or the whole tree: those nodes are checked when
they start, as in a run (docs/reachability.md lists which are which).

Before a run (``ptm run``, whose ``--plan-first`` is on by default; :func:`plan_check_in_backend`) the motions the dry run planned
are kept, and the run's motions follow them where they still fit
(:mod:`~py_trees_manipulation.collision.kept_plans`): the check and the execution are one computation.

Each problem names the node's line in the file, as a load error does. Nothing moves; no PyBullet
GUI, no physics: the checks are the behaviours' own functions in a collision world, so the verdict
is the one a run's first check would give.
"""

from __future__ import annotations

import inspect
import os
from dataclasses import dataclass
from typing import Any, Callable, Optional

from ..behaviors import registry
from ..located.errors import Problem
from .spec import TaskSpec

__all__ = ["plan_check", "plan_check_in_backend", "PlanProblem", "DryRun", "whole_task_test", "place_accept",
           "with_place", "place_override", "task_place_as_written", "task_place_verdict_as_written", "declared_noise"]


@dataclass(frozen=True)
class PlanProblem(Problem):
    """A planning check that fails: where (``loc``), why (``message``), and the node (``node_type``,
    ``node_name``) whose check it is."""

    node_type: str = ""
    node_name: str = ""


def plan_check(task: TaskSpec, seed: Optional[int] = None,
               progress: Optional[Callable[[str], None]] = None) -> list[PlanProblem]:
    """The problems the task's planning checks find in its scene as written (empty: none).

    Args:
        task: a loaded task (:func:`~.loader.load_task`) with a scene.
        seed: the IK and base-search seed (default: the scene's).
        progress: called with a line before each check (a long base search says what it does).

    Returns:
        One :class:`PlanProblem` per failed check, at the node's (or the parameter's) place in the
        file, and one per robot ``base_pose: auto`` could not place.
    """
    from ..bullet import _quiet_import  # noqa: F401  (first: pybullet's import banner)
    from ..behaviors.reach import requests_from_tree
    from ..collision.base_placement import place_robots
    from ..collision.world import CollisionWorld
    from ..scene.spec import parse_scene

    if not task.scene:
        return []
    scene = parse_scene(task.scene, base_dir=getattr(task, "scene_dir", None)
                        or os.path.dirname(os.path.abspath(task.file)))
    seed = int(scene.seed if seed is None else seed)
    problems: list[PlanProblem] = []
    test = whole_task_test(task, seed)
    if any(getattr(r, "base_auto", None) is not None for r in scene.robots):
        if progress:
            progress("placing the robots (base_pose: auto)")
        scene, placements = place_robots(scene, requests_from_tree(task.tree), seed=seed, task_check=test)
        for name, p in placements.items():
            if not p.ok:
                problems.append(PlanProblem(task.tree.loc, f"base_pose: auto: {p.failure}"))
    world = CollisionWorld.from_scene(scene)
    try:
        problems += start_state_problems(task, world, scene)
        if progress and getattr(getattr(scene, "task", None), "place_position", None) is not None:
            progress("the task's place")
        place = task_place_problems(task, world, scene, seed)
        problems += place
        if not place:   # the run refuses a task place before its first tick: no node gets to run
            problems += check_nodes(task, world, scene, seed, progress, task_check=test)
    finally:
        world.close()
    return problems


#: how much more than the scene's padding the whole-task test keeps (:func:`whole_task_test`), metres
SUGGEST_PADDING_MARGIN_M = 0.002


def whole_task_test(task: TaskSpec, seed: Optional[int] = None) -> Callable[[Any], Optional[str]]:
    """The whole-task test every base suggestion and ``base_pose: auto`` pass before they are offered
    (issue 33 item 2): ``test(scene)``, ``scene`` a parsed scene of ``task`` with every robot's base
    explicit (a candidate base put in), returns None when ``ptm validate --plan``'s checks all pass in
    it (each robot's start, the task's place, the tree's dry run with every node's planning check:
    the grasp choice, the reach, the regrasp plan, every motion followed), else the first problem
    (``"FILE:LINE:COL: what"``). It builds its own collision world; no base is suggested inside it.
    So a suggested base, applied with ``--set``, passes ``ptm validate --plan`` by construction. The
    dry run's motions keep :data:`SUGGEST_PADDING_MARGIN_M` more than the scene's padding: a base from
    which a motion only grazes the padding (which the run, planning again from where the arm really
    is, may refuse) is not offered."""
    from ..collision.world import CollisionWorld

    def test(scene: Any) -> Optional[str]:
        world = CollisionWorld.from_scene(scene)
        world.padding_m += SUGGEST_PADDING_MARGIN_M
        try:
            return _whole_task_problem(task, world, scene, seed, "base")
        finally:
            world.close()

    return test


def _whole_task_problem(task: TaskSpec, world: Any, scene: Any, seed: Optional[int], what: str) -> Optional[str]:
    """:func:`whole_task_test`'s verdict in ``world`` (built from ``scene``): None, or the first
    problem. ``what`` is suggested: "base" (``world``'s padding raised by
    :data:`SUGGEST_PADDING_MARGIN_M`) or "spot" (strict: :attr:`DryRun.strict`)."""
    s = int(getattr(scene, "seed", 0) if seed is None else seed)
    problems = start_state_problems(task, world, scene)
    problems = problems or task_place_problems(task, world, scene, suggest=False)
    # a spot is offered only if every motion keeps the padding: a lower that grazes a box beside the
    # place, passed to the run in a check (the arm's posture there is the run's), is not suggested
    problems = problems or check_nodes(task, world, scene, s, task_check=False, strict=(what == "spot"))
    if not problems:
        return None
    text = str(problems[0])
    if "padding" in text and what == "base":
        text += (f" (a suggested base is tested with {SUGGEST_PADDING_MARGIN_M * 1000:g} mm more than "
                 "scene.motion_planning.padding_m)")
    return text


def start_state_problems(task: TaskSpec, world: Any, scene: Any) -> list[PlanProblem]:
    """Each robot at its ``initial_configuration``: in collision with itself or the scene (no
    padding: touching is allowed, overlapping by more than the scene's ``start_penetration_m`` is
    not), as MoveIt refuses a start state in collision;
    the problem names the pair, the depth and the key to change."""
    from ..collision.base_placement import surface_under
    from ..collision.reachability import base_overlap

    out = []
    written = list((task.scene or {}).get("robots") or [])

    def where(i: int, key: str) -> Any:
        """The robot entry's ``key`` in the file (its value's line), else the entry, else the tree."""
        entry = written[i] if i < len(written) else None
        if hasattr(entry, "value_loc"):
            return entry.value_loc(key) if key in entry else entry.loc
        return task.tree.loc

    for i, r in enumerate(scene.robots):
        surface = surface_under(world, scene, r.name)
        # as objects: an overlap up to start_penetration_m (3 mm) is contact, as the simulator takes it
        tolerance = float(getattr(scene, "start_penetration_m", 0.0) or 0.0)
        base = base_overlap(world, r.name, ignore=[surface.body] if surface.body else (), padding_m=-tolerance)
        if base is not None:
            out.append(PlanProblem(where(i, "base_pose"), f"robot {r.name!r} stands in collision: its base {base}",
                                   f"move scene.robots.{i}.base_pose, or the body it overlaps"))
        ck = world.checker(r.name, padding_m=-tolerance)
        hit = ck.explain(world.robots[r.name].joint_positions())
        if hit is None:
            continue
        conf = r.initial_configuration if isinstance(r.initial_configuration, str) else "the given angles"
        out.append(PlanProblem(where(i, "initial_configuration"), (
            f"robot {r.name!r} starts in collision at its initial_configuration ({conf}): {hit.describe()}"),
            f"change scene.robots.{i}.initial_configuration or scene.robots.{i}.base_pose, or move the body "
            "it overlaps"))
    return out


def task_place_problems(task: TaskSpec, world: Any, scene: Any, seed: Optional[int] = None,
                        suggest: bool = True) -> list[PlanProblem]:
    """The scene's ``task.place_position`` for its target object: a support under it and room for
    the object (:func:`~py_trees_manipulation.collision.placement.check_task_place`), the check a
    run makes before its first tick, at the key's line in the file. A place refused suggests the
    nearest free spot from which the whole task passes (:func:`place_accept`, B4 of issue 33), with
    the ``--set`` that applies it (:func:`place_override`); ``suggest=False`` (inside the whole-task
    test): the nearest free spot, not tested. The spot is searched with the scene's own seed (its
    IK seeds), whatever ``seed`` the check or the run is given: a property of the scene as written,
    so that ``ptm validate --plan`` and ``ptm run --seed N`` (whose seed varies the pose noise)
    suggest the same spot (C3 of issue 33). With pose noise declared (``pose_noise`` of the target or
    of what it is placed on: :func:`declared_noise`), the place and its spot must hold at every pose
    of the noise (the worst case): the run, whose objects carry one draw of it, makes this same
    test before its first tick, so the two cannot disagree (issue 33)."""
    return _task_place(task, world, scene, suggest)[0]


def _task_place(task: TaskSpec, world: Any, scene: Any, suggest: bool = True) -> tuple[list[PlanProblem], str]:
    """:func:`task_place_problems`, and the support the place rests on ("" when refused or none)."""
    from ..collision.placement import check_task_place

    t = getattr(scene, "task", None)
    accept = place_accept(task, scene, None) if suggest and t is not None else None
    try:
        check = check_task_place(world, t, accept=accept, noise=declared_noise(scene))
    except (KeyError, ValueError):
        return [], ""
    finally:
        if accept is not None:
            accept.close()
    if check is None or check.ok:
        return [], check.support if check is not None else ""
    if check.suggestion is not None and check.tested:
        check.fix = place_override(task, check.suggestion)
    section = (task.scene or {}).get("task")
    loc = section.value_loc("place_position") if hasattr(section, "value_loc") else task.tree.loc
    return [PlanProblem(loc, f"scene.task.place_position: {check.message(t.target_object, t.place_position)}")], ""


def declared_noise(scene: Any) -> dict:
    """The scene's objects that declare a pose noise: name -> ``pose_noise``
    (:class:`~py_trees_manipulation.scene.spec.PoseNoiseSpec`); empty when none does."""
    out = {}
    for o in getattr(scene, "objects", ()) or ():
        n = getattr(o, "pose_noise", None)
        if n is not None and (float(n.position_m) > 0 or float(n.yaw_deg) > 0):
            out[o.name] = n
    return out


def task_place_as_written(task: TaskSpec, scene: Any, seed: Optional[int] = None) -> list[PlanProblem]:
    """:func:`task_place_problems` in a collision world built from ``scene`` as written (the parsed
    scene, robots placed; no pose noise): the place's verdict and its suggested spot as ``ptm
    validate --plan`` gives them, for a run to give the same (C3 of issue 33: a run's objects carry
    the scene's pose noise, and spots searched in its world moved by a ring with it)."""
    return task_place_verdict_as_written(task, scene)[0]


def task_place_verdict_as_written(task: TaskSpec, scene: Any) -> tuple[list[PlanProblem], str]:
    """:func:`task_place_as_written`, and the support the place rests on ("" when refused)."""
    from ..collision.world import CollisionWorld

    world = CollisionWorld.from_scene(scene)
    try:
        return _task_place(task, world, scene)
    finally:
        world.close()


def _same_xyz(value: Any, xyz: Any) -> bool:
    if not isinstance(value, (list, tuple)) or len(value) != 3:
        return False
    try:
        return all(abs(float(a) - float(b)) <= 1e-9 for a, b in zip(value, xyz))
    except (TypeError, ValueError):
        return False


def _replace_xyz(value: Any, old: Any, new: list, found: list, path: tuple = ()) -> Any:
    """``value`` (plain data) with every [x, y, z] equal to ``old`` replaced by ``new``; the paths of
    the replaced values appended to ``found``."""
    if _same_xyz(value, old):
        found.append(path)
        return list(new)
    if isinstance(value, dict):
        return {k: _replace_xyz(v, old, new, found, path + (k,)) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace_xyz(v, old, new, found, path + (i,)) for i, v in enumerate(value)]
    return value


def with_place(task: TaskSpec, position: Any) -> TaskSpec:
    """``task`` with its ``scene.task.place_position`` moved to ``position`` ([x, y, z], world, m)
    everywhere the file gives it: the scene's task, the blackboard and the tree's parameters (the
    ``place_pose`` the grasp must reach and the lower sets down at, an ``ObjectNear``), as ``--set
    parameters.place_position=...`` moves it in a file that takes it from a parameter (every example).
    The scene's bodies are left where they are (a place written on top of one keeps it)."""
    import copy
    import dataclasses

    old = list(((task.scene or {}).get("task") or {}).get("place_position") or [])
    new = [float(v) for v in position]
    found: list = []
    scene = copy.deepcopy(task.scene)
    scene["task"] = dict(scene["task"], place_position=new)
    blackboard = _replace_xyz(copy.deepcopy(task.blackboard or {}), old, new, found)
    tree = copy.deepcopy(task.tree)
    for node in tree.walk():
        node.params = _replace_xyz(node.params, old, new, found)
    params = _replace_xyz(dict(task.parameters or {}), old, new, found)
    return dataclasses.replace(task, scene=scene, blackboard=blackboard, tree=tree, parameters=params)


def place_override(task: TaskSpec, position: Any) -> str:
    """The ``--set`` that moves the task's place to ``position``: the file's parameter that gives
    ``scene.task.place_position`` (``--set 'parameters.place_position=[0.45, -0.22, 0.686]'``), else
    the key itself, with the other places the tree gives the same position named."""
    old = ((task.scene or {}).get("task") or {}).get("place_position")
    xyz = "[" + ", ".join(f"{round(float(v), 3) + 0.0:g}" for v in position) + "]"
    for name, value in (task.parameters or {}).items():
        if _same_xyz(value, old):
            return f"--set 'parameters.{name}={xyz}'"
    found: list = []
    _replace_xyz(task.blackboard or {}, old, [], found)
    others = ["blackboard." + ".".join(str(k) for k in f) for f in found]
    for node in task.tree.walk():
        hits: list = []
        _replace_xyz(node.params, old, [], hits)
        others += [f"tree.{node.name or node.type}." + ".".join(str(k) for k in f) for f in hits]
    return (f"--set 'scene.task.place_position={xyz}'"
            + "".join(f" --set '{o}={xyz}'" for o in others))


class place_accept:
    """The whole-task test of a spot for the task's place (B4 of issue 33): ``accept((x, y, z))``
    -> None when ``ptm validate --plan`` passes with the place moved there (:func:`with_place`: the
    scene's task, the tree's place pose and checks), else the first problem. It is
    :func:`whole_task_test`'s verdict (each robot's start, the place's room, the dry run with every
    node's check: the grasp that can also put the object down there, the carry with it attached, the
    lower, the release, the retreat), strict: at the scene's padding (the run's choices of grasp and
    IK), every motion keeping it, none left to the run as marginal (:attr:`DryRun.strict`); so a
    spot a refusal offers, applied, passes ``ptm validate --plan``, with no motion in the padding.
    The spots are tested in one collision world built from ``scene`` (the parsed scene, robots
    placed), put back after each; :meth:`close` frees it."""

    def __init__(self, task: TaskSpec, scene: Any, seed: Optional[int] = None):
        self.task, self.scene, self.seed = task, scene, seed
        self._world: Any = None

    def __call__(self, spot: tuple) -> Optional[str]:
        import dataclasses

        from ..collision.world import CollisionWorld

        if self._world is None:
            # at the scene's padding, strict (every motion keeps it, none left to the run): a margin
            # on the padding would change the choices (the grasp, the IK) from the run's, which then
            # takes one the test never saw
            self._world = CollisionWorld.from_scene(self.scene)
        moved = with_place(self.task, spot)
        scene = dataclasses.replace(self.scene, task=dataclasses.replace(self.scene.task, place_position=tuple(spot)))
        return _whole_task_problem(moved, self._world, scene, self.seed, "spot")

    def close(self) -> None:
        if self._world is not None:
            self._world.close()
            self._world = None


def plan_check_in_backend(task: TaskSpec, backend: Any, seed: int = 0) -> list[PlanProblem]:
    """:func:`plan_check` in a backend's own collision world (its planning service's, synced to the
    robot's joint states and the perceived objects: the hardware backend), before the first goal is
    sent; empty when the backend has no collision world. The motions the dry run planned are kept in
    that world (its ``kept_plans``, :class:`~py_trees_manipulation.collision.kept_plans.KeptPlans`):
    the run's motions follow them where they still fit, so the check and the execution are one
    computation."""
    from ..backend import planning_service

    from ..collision.kept_plans import KeptPlans

    svc = planning_service(backend)
    scene = getattr(svc, "scene", None)
    if svc is None or scene is None or not callable(getattr(svc, "call_in_world", None)):
        return []
    kept = KeptPlans()
    dt = getattr(getattr(svc, "backend", None), "dt", None)   # the run's controller period (the simulator's step)

    def check(world: Any) -> list[PlanProblem]:
        world.kept_plans = None
        problems = check_nodes(task, world, scene, seed, kept=kept, dt=dt, task_check=whole_task_test(task, seed))
        world.kept_plans = kept   # the run's motions follow them (collision.kept_plans)
        return problems

    return svc.call_in_world(check)


#: behaviours after which the world is no longer the file's (an object held or moved, a door
#: swung): the dry run follows those it can (:class:`DryRun`); after the others the checks depend on
#: what happened, and run when they start
WORLD_CHANGING = frozenset({"FindContact", "Grab", "ForceServo", "SlipServo", "Release", "EventDetector",
                            "GraspFixAttach", "GraspFixRelease", "ExecuteRegraspPlan", "MoveAlongArc", "TwistHandle"})


def changes_world(node: Any, world: Any = None) -> bool:
    """Whether ``node`` (a NodeSpec) can change what the scene holds: a gripper closing (anything but
    a literal ``position: open``, or, with the collision ``world``, a literal gap of at least 90 % of
    the gripper's full opening: ``position: 0.08`` on the Panda), a tactile or GraspFix grasp, a
    regrasp plan executed, a handle turned or a door swung."""
    if node.type in WORLD_CHANGING:
        return True
    if node.type != "GripperCommand":
        return False
    position = node.params.get("position")
    if position == "open":
        return False
    if isinstance(position, (int, float)) and not isinstance(position, bool) and world is not None:
        robot = robot_of(node, "gripper", world)
        if robot is not None:
            widest = float(world.robots[robot].model.gripper.opening_m[1])
            return float(position) < 0.9 * widest
    return True


def _gap_on_nothing(node: Any, world: Any, robot: str) -> bool:
    """A ``GripperCommand`` to a literal gap (metres) within the gripper's opening, not expecting
    an object (``expect_object`` false): with nothing between the fingers it changes nothing but the
    fingers' gap."""
    if node is None or node.type != "GripperCommand" or node.params.get("expect_object"):
        return False
    position = node.params.get("position")
    if not isinstance(position, (int, float)) or isinstance(position, bool):
        return False
    lo, hi = (float(v) for v in world.robots[robot].model.gripper.opening_m)
    return lo <= float(position) <= hi


def robot_of(node: Any, key: str, world: Any) -> Optional[str]:
    """The robot a node's ``arm`` or ``gripper`` parameter (``key``) names in ``world``: the literal
    name, or the world's only robot when the node names none; None when it cannot be told ahead."""
    value, names = node.params.get(key), list(world.robots)
    if isinstance(value, str):
        return value if value in names else None
    return names[0] if value is None and len(names) == 1 else None


def check_nodes(task: TaskSpec, world: Any, scene: Any, seed: int = 0,
                progress: Optional[Callable[[str], None]] = None, kept: Any = None,
                dt: Optional[float] = None, task_check: Any = None, strict: bool = False) -> list[PlanProblem]:
    """Every node's ``plan_problems`` check in ``world`` (module docstring), in tick order, the tree
    ticked once against the collision world (:class:`DryRun`): the arm motions planned from where the
    motions before them leave the arm, as the run plans them, grasps attaching what the fingers close
    on, releases putting it down, screw motions turning the mechanism they hold; a motion that would
    be refused is a problem. The checks stop at the first node whose outcome cannot be known ahead
    (:meth:`DryRun.step` returns None: an event-triggered release, a regrasp plan executed, a grasp
    closing on nothing): the checks after it depend on what it did, and run when they start. The
    world is put back as it was at the end. ``kept``: a
    :class:`~py_trees_manipulation.collision.kept_plans.KeptPlans` that receives every motion planned
    and every grasp chosen (a check that takes ``kept``: ``(kept, node key)``), for the run to follow; ``dt``: the run's trajectory sample period, seconds (default: the
    planner's).

    ``task_check``: the whole-task test (:func:`whole_task_test`) a check's base suggestion must pass
    (given to the checks that take it); False: no base is suggested (inside that test); None: the
    checks' own searches, not verified. ``strict``: a motion refused at the padding after a world
    change is a problem even when it passes with less (:attr:`DryRun.strict`)."""
    problems: list[PlanProblem] = []
    dry = DryRun(world, scene, task.blackboard or {}, kept=kept, dt=dt, written=task.scene, strict=strict)
    try:
        for node, nominal in _tick_order(task.tree):
            if node.category != "behaviour":
                continue
            name = node.name or node.type
            dry.fixed_path_hit = ""
            found = dry.step(node, nominal, progress)
            if found is None:
                if progress:
                    progress(f"(the nodes after {node.type} '{name}' are checked when they start)")
                break
            cls = registry.lookup(node.type)
            check = getattr(cls, "plan_problems", None)
            if node.type in GRASP_CHOOSERS:
                dry.grasp_chosen = True
            if callable(check):
                if progress:
                    progress(f"{node.type} '{name}'")
                accepts = inspect.signature(check).parameters
                kw: dict[str, Any] = {"blackboard": dry.blackboard} if "blackboard" in accepts else {}
                if "task_check" in accepts:
                    kw["task_check"] = task_check
                if "kept" in accepts and kept is not None and nominal:
                    kw["kept"] = (kept, f"{name} at {node.loc}")   # the run's node takes what it computes (plan_key)
                outputs: dict[str, Any] = {}
                if "outputs" in accepts and nominal:
                    kw["outputs"] = outputs
                    dry._forget_outputs(node)   # what it writes is what its check says, or unknown
                try:
                    found += check(dict(node.params), world, scene, seed=seed, **kw)
                except Exception as e:  # a check that cannot run on this scene says so, never a traceback
                    found.append(("", f"{node.type}: cannot be checked ahead: {type(e).__name__}: {e}", ""))
                dry.write_outputs(node, outputs)
            if found and dry.fixed_path_hit and not problems:
                found = [(key, message, hint or dry.fixed_path_hit) for key, message, hint in found]
            elif found and callable(task_check) and node.type in DryRun.ACTIONS and not problems:
                fix = motion_base_fix(world, scene, node, dry, seed, task_check)
                if fix:
                    found = [(key, message, hint or fix) for key, message, hint in found]
            for key, message, hint in found:   # key: the node's parameter, or a place in the file (a Loc)
                loc = node.param_locs.get(key, node.loc) if isinstance(key, str) else key
                problems.append(PlanProblem(loc, message, hint, node.type, name))
    finally:
        dry.restore()
    return problems


def motion_base_fix(world: Any, scene: Any, node: Any, dry: "DryRun", seed: int,
                    task_check: Callable[[Any], Optional[str]]) -> str:
    """For an arm motion the dry run refuses (out of reach, a joint limit, the arm in the way of the
    scene): a base pose of its robot from which the whole task passes ``task_check``
    (:func:`whole_task_test`), as ``CheckReachability`` names one, or "" when none is found. The
    candidates come from the base search (:func:`~py_trees_manipulation.collision.base_search.find_base`)
    with the TCP targets of the robot's motions so far, the refused one last, as the targets, on the
    surface the robot stands on; each is kept only if the whole task passes from it. When none does,
    the text says why (``"and no base position ... passes the whole task: ..."``)."""
    from ..behaviors.reach import SUGGEST_BUDGET, base_suggestion
    from ..collision.base_placement import surface_under, task_accept
    from ..collision.base_search import SearchBudget, find_base_relaxing
    from ..scene.reach_targets import ReachSample, ReachTarget

    robot = dry._robot(node)
    goals = dry.goals.get(robot or "", [])
    names = [r.name for r in getattr(scene, "robots", ())]
    if robot is None or robot not in names or not goals:
        return ""
    touch = tuple(o.name for o in getattr(scene, "objects", ()))
    path = tuple(ReachSample(f"the target of motion {k + 1} of {robot}", T, touch=touch, free=True)
                 for k, T in enumerate(goals))
    target = ReachTarget(f"the targets of {robot}'s motions", (path,), kind="motion")
    saved = world.save_state()
    try:
        placement = find_base_relaxing(world, robot, lambda probe: [target], surface_under(world, scene, robot),
                                       seed=seed, budget=SearchBudget(SUGGEST_BUDGET),
                                       accept=task_accept(task_check, scene, robot))
    finally:
        world.restore_state(saved)
    return base_suggestion(placement, names.index(robot), "the whole task passes ptm validate --plan")


#: nodes that choose a grasp by what the arm reaches from its base (another base may choose another)
GRASP_CHOOSERS = frozenset({"ChooseGrasp", "PlanRegrasp"})

#: composites and decorators whose children all run on the nominal path, in order (a Selector's
#: second child runs only when the first fails; a FailureIsSuccess child may fail)
NOMINAL = frozenset({"Sequence", "Parallel", "Timeout", "Retry", "Repeat", "OneShot", "PassThrough"})


def _tick_order(node: Any, nominal: bool = True):
    """``(node, nominal)`` in tick order: ``nominal`` when every composite and decorator above the
    node runs it on the way to the task's success (:data:`NOMINAL`)."""
    yield node, nominal
    inner = nominal and (node.category == "behaviour" or node.type in NOMINAL)
    for c in node.children:
        yield from _tick_order(c, inner)


class _Unknown(Exception):
    """A value the dry run cannot know ahead (a blackboard key written by a node it does not follow)."""


#: how far from the TCP the body a closing gripper takes hold of may be, metres (the hardware
#: planning client's probe for what the hand holds)
HOLD_PROBE_M = 0.02
#: after a world change the dry run followed (a grasp, a place, a mechanism moved), a motion the
#: planner refuses is a problem only when it is refused with this fraction of the padding too: the
#: object's place in the hand, the door's angle, the touch-down are known to a few millimetres
MARGINAL_PADDING = 0.5
#: gripper-sensor steps that hold what the fingers already grasp, changing nothing in the world
HOLDS = frozenset({"ForceServo", "SlipServo"})
#: closing steps: the fingers take hold of what lies between them
CLOSES = frozenset({"GripperCommand", "FindContact", "Grab"})


class DryRun:
    """The tree ticked once against the collision world before the run (``ptm validate --plan``),
    as MoveIt Task Constructor plans every stage of a pick and place before executing any.

    Followed on the nominal path (:func:`_tick_order`), each as the run does it:

    - ``MoveJoints``, ``MoveToPose``, ``MoveCartesian``: the goal built by the behaviour's own
      ``make_goal`` (the same target composition, the TCP where the motions before it leave it, the
      blackboard values known ahead), planned by the
      :class:`~py_trees_manipulation.collision.arm_planner.ArmMotionPlanner` from the arm's
      configuration then, the held object attached; the arm is left at the plan's goal, or, for a
      force-guarded line that ends in contact (a place), where the planner's expected contact is
      (:class:`~py_trees_manipulation.collision.arm_planner.GuardedApproach`: the held object on the
      support under it): the guard's nominal stop;
    - a gripper closing (``GripperCommand`` to a gap short of open, ``FindContact``, ``Grab``,
      ``GraspFixAttach``) on a movable object within 2 cm of the TCP attaches it where it is held
      (the fingers at the chosen grasp's width when known, else where they first touch it), as the
      simulator attaches what both
      fingers touch; closed on a door's lever or a drawer's bar, the hand holds that mechanism;
      ``ForceServo`` and ``SlipServo`` hold what is held; ``GripperCommand`` opening puts the object
      down where it then is and opens the fingers;
    - ``MoveAlongArc`` and ``TwistHandle`` with the handle held: the arm along the screw by the
      simulator's own IK waypoints (:func:`~py_trees_manipulation.collision.ik.screw_joint_path`), the
      mechanism's joint set to its end value (the door's hinge by the arc's angle, the lever by the
      twist, the drawer by the pull, within their travel), the end TCP written to ``tcp_pose_key``;
      a twist the lever's limit or rest stops short of the behaviour's ``min_fraction``
      (``MoveAlongArc.short_text``) and a swing of a door its latch holds
      (``ArticulatedDoor.latch_text``: a twist short of ``latch_release_deg``, a locked door) are
      problems in the run's words, at the ``angle`` (or the scene's ``locked``) that would change;
    - values the run would compute from the scene: ``GetObjectPose`` (the object's pose now),
      ``DetectDoorAffordance`` / ``DetectDrawerAffordance`` (the poses without noise, the mechanism
      where it then is), ``GetMoveAlongArcSubframes`` / ``GetGraspAndTwistSubframes`` (the same
      affordance math), ``SetBlackboardVariable``, and the outputs of the nodes whose ``plan_problems``
      says what they write
      (``ChooseGrasp``'s chosen grasp, ``CheckReachability``'s posture).

    A motion the planner refuses is a problem with the planner's text (the link, the body, where
    along the line); after a world change the dry run followed, only when it is refused with
    :data:`MARGINAL_PADDING` of the padding too (else it is left to the run, which knows where the
    object really sits in the hand). An arm whose state is no longer known (a motion whose target is read from a key
    no followed node writes, one off the nominal path, one refused, one moved by a behaviour not
    followed) is not followed further; a world change that cannot be known ahead (an event-triggered
    ``Release``, an ``EventDetector``, ``ExecuteRegraspPlan``, ``GraspFixRelease``, a gripper closing
    on nothing, a screw path the IK leaves) ends the dry run: :meth:`step` returns None.
    """

    ACTIONS = {"MoveJoints": "move_joints", "MoveToPose": "move_to_pose", "MoveCartesian": "move_cartesian"}

    def __init__(self, world: Any, scene: Any, blackboard: dict, kept: Any = None, dt: Optional[float] = None,
                 written: Any = None, strict: bool = False):
        self.world, self.scene = world, scene
        #: a motion within the padding after a world change is a problem, not left to the run
        #: (:meth:`_passes_with_less_padding`): the test of a spot a refusal offers (issue 33, B4)
        self.strict = strict
        self.kept, self.dt = kept, dt   # the plans kept for the run; its trajectory sample period
        self.written = written          # the file's scene section (its places, for a problem at a scene key)
        self.twists: dict[str, tuple[Any, float]] = {}   # door -> (the last TwistHandle of its lever, the lever before)
        self.blackboard = {str(k).lstrip("/"): v for k, v in dict(blackboard).items()}
        self.lost: set[str] = set()
        # robot -> (object, its pose in the TCP frame): what the world holds already (a hardware
        # client's world synced to a hand that holds something), then what the dry run attaches
        self.held: dict[str, Any] = {r: (world.attached(r), world.attached_transform(r)) for r in world.robots
                                     if world.attached(r) is not None}
        self.holds_handle: dict[str, str] = {}  # robot -> the door or cabinet whose handle it holds
        self.unknown = False                    # the world is no longer known (see _lose)
        #: robot -> the TCP targets ((4, 4), world) of its motions so far, the refused one last (a
        #: base search for a motion out of reach ranks bases by them)
        self.goals: dict[str, list] = {}
        self.changed = False                    # a world change was followed (a grasp, a place, a door)
        #: the last motion refused because the hand's or the held object's own path meets a body, on a
        #: line that takes them the same way from any base: why no base pose helps, else ""
        self.fixed_path_hit = ""
        #: robot -> its TCP is where a world pose put it (a pose target, a line to one, a delta line from
        #: one), not where joint positions did: the same from any base
        self.tcp_fixed: dict[str, bool] = {}
        self.grasp_chosen = False               # a GRASP_CHOOSERS node was followed
        self._saved = world.save_state()

    def restore(self) -> None:
        """Put the world back as it was when the dry run started (arms, fingers, objects, doors)."""
        self.world.restore_state(self._saved)

    def step(self, node: Any, nominal: bool, progress: Optional[Callable[[str], None]] = None
             ) -> Optional[list[tuple[str, str, str]]]:
        """Follow one behaviour node: ``[(parameter, problem, hint)]``, or None when it changes the
        world in a way the dry run cannot know ahead (the checks after it run when they start), and for
        every node after one that left the world unknown."""
        if self.unknown:
            return None
        kind = node.type
        if not nominal:
            self._forget_outputs(node)   # the run may or may not write them
        if kind in _VALUES and nominal:
            try:
                _VALUES[kind](self, node, _Params(registry.lookup(kind), node.params, self))
            except (_Unknown, KeyError, ValueError, TypeError):
                self._forget_outputs(node)   # unknown: the motions reading them are not followed
            return []
        world_change = changes_world(node, self.world)
        if kind == "GripperCommand" and (not world_change or self._widens(node)):
            return self._open(node, nominal)
        if world_change:
            return self._change(node, nominal, progress)
        action = self.ACTIONS.get(kind)
        if action is None:
            if getattr(registry.lookup(kind), "RESOURCE", None) == "arm":
                robot = self._robot(node)   # another behaviour moves this arm: where it leaves it is unknown
                if robot is not None:
                    return self._lose(robot)
            return []
        robot = self._robot(node)
        if robot is None or robot in self.lost:
            return []
        if not nominal:
            return self._lose(robot)
        return self._motion(node, robot, action, progress)

    def _lose(self, robot: str, problems: Optional[list] = None) -> Optional[list[tuple[str, str, str]]]:
        """``robot``'s arm is no longer followed. When it holds an object or a handle, where that is
        (or how far the door is open) is unknown too: the dry run ends after this node (``problems``
        are still said)."""
        self.lost.add(robot)
        if robot in self.held or robot in self.holds_handle:
            self.unknown = True
            if problems is None:
                return None
        return problems if problems is not None else []

    def _forget_outputs(self, node: Any) -> None:
        """The blackboard keys a node writes are no longer known (a node off the nominal path, one
        whose values the dry run cannot compute)."""
        cls = registry.lookup(node.type)
        for param, decl in (cls.all_params().items() if cls is not None else ()):
            key = node.params.get(param, decl.default) if decl.kind == "key" else None
            if isinstance(key, str) and key:
                self.blackboard.pop(key.lstrip("/"), None)

    def write_outputs(self, node: Any, outputs: dict) -> None:
        """The values a node's ``plan_problems`` says it writes (``{key parameter: value}``), under the
        blackboard keys its parameters name."""
        if not outputs:
            return
        decl = registry.lookup(node.type).all_params()
        for param, value in outputs.items():
            key = node.params.get(param, decl[param].default if param in decl else None)
            if isinstance(key, str) and key:
                self.blackboard[key.lstrip("/")] = value

    # ---- arm motions ------------------------------------------------------------------------------
    def _motion(self, node: Any, robot: str, action: str, progress: Optional[Callable[[str], None]]
                ) -> list[tuple[str, str, str]]:
        from ..collision.arm_planner import ArmMotionPlanner, MotionPlanningError
        from ..collision.worker import request_from_goal

        cls = registry.lookup(node.type)
        try:
            goal = cls.make_goal(_Params(cls, node.params, self, robot, node))
            req = request_from_goal(robot, action, goal, self.world.robots[robot].joint_positions())
            if self.dt:
                req.dt = float(self.dt)
        except _Unknown:
            return self._lose(robot)
        except (ValueError, KeyError, TypeError) as e:
            return self._lose(robot, [("", f"{node.type}: cannot build its goal: {e.args[0] if e.args else e}", "")])
        if req.kind in ("pose", "cartesian") and req.target is not None:
            self.goals.setdefault(robot, []).append(req.target)
        if progress:
            held = self.held.get(robot)
            progress(f"{node.type} '{node.name or node.type}' (followed: planned from where the motions before it "
                     f"leave the arm{', ' + held[0] + ' held' if held else ''})")
        try:
            plan = ArmMotionPlanner(self.world, robot).plan(req)
        except MotionPlanningError as e:
            if self.changed and not self.strict and self._passes_with_less_padding(req, robot):
                if progress:
                    progress(f"({node.type} '{node.name or node.type}' comes within "
                             f"{self.world.padding_m * 1000 * (1 - MARGINAL_PADDING):.0f} mm of the padding after the "
                             f"world changed: checked when it starts)")
                return self._lose(robot)
            self.fixed_path_hit = self._fixed_path_text(node, req, e, robot)
            return self._lose(robot, [("", f"{node.type}: the motion would be refused before moving: {e}", "")])
        if req.kind == "joints":
            self.tcp_fixed[robot] = False
        elif req.kind == "pose" or node.params.get("target") is not None:
            self.tcp_fixed[robot] = True
        if self.kept is not None:
            self.kept.keep(req.node, req, plan, self.world)   # the run's motion of this node follows it
        if plan.guard is not None:
            self.changed = True   # where the guard stops: the touch-down is known to a few millimetres
        self._set_arm(robot, self._guard_stop(robot, plan) if plan.guard is not None else plan.goal)
        return []

    def _fixed_path_text(self, node: Any, req: Any, e: Any, robot: str) -> str:
        """Why no base pose helps a straight line refused for the hand or the held object, or "". A
        ``MoveCartesian`` keeps the TCP on a straight line in the world between its start and its
        target; when both are world poses (a target, a pose the motion before it went to, a delta from
        one), the hand and what it holds sweep the same volume of the world whatever the arm's base,
        so a body in that volume is in the way from every base: a base search (60 candidates, about
        10 s) would only end in "no base position passes". When the task chooses its grasp
        (:data:`GRASP_CHOOSERS`), only the held object on a ``delta`` line: it moves the same way
        whatever the grasp."""
        hit = getattr(e, "collision", None)
        kind = getattr(e, "kind", "")
        if req.kind != "cartesian" or hit is None or hit.self_collision or kind not in ("path_collision",
                                                                                         "goal_in_collision"):
            return ""
        hand = hit.held or (len(hit.key) > 0 and isinstance(hit.key[0], tuple) and len(hit.key[0]) > 1
                            and hit.key[0][1] in self.world.hand_links(robot))
        start = self.tcp_fixed.get(robot, False)
        end = node.params.get("target") is not None or start
        if not hand or not end or (kind == "path_collision" and not start):
            return ""
        if self.grasp_chosen and not (hit.held and node.params.get("delta") is not None):
            # the hand's poses follow the grasp, which another base may choose otherwise; a delta line
            # translates the held object by the same displacement whatever the grasp
            return ""
        what = f"the held {hit.link}" if hit.held else f"the hand ({hit.link})"
        return (f"no base pose changes this: the line takes {what} along the same path in the world from any "
                f"base (it starts and ends at world poses); move '{hit.body}' out of its way or change the line "
                f"(its target or delta)")

    def _passes_with_less_padding(self, req: Any, robot: str) -> bool:
        """Whether the motion is planned with the padding cut to :data:`MARGINAL_PADDING` of it: a
        refusal that close to the padding depends on where the object really sits in the hand, the
        door really stopped, the place really touched down (a few millimetres off the nominal), and
        is the run's to make."""
        from ..collision.arm_planner import ArmMotionPlanner, MotionPlanningError

        w = self.world
        padding = w.padding_m
        try:
            w.padding_m = padding * MARGINAL_PADDING
            ArmMotionPlanner(w, robot).plan(req)
            return True
        except MotionPlanningError:
            return False
        finally:
            w.padding_m = padding
            w.set_robot_state(robot, req.start)

    def _guard_stop(self, robot: str, plan: Any) -> Any:
        """Where a force-guarded line stops: at its expected contact (``plan.guard.contact_m`` of TCP
        travel along the line), interpolated between the plan's waypoints."""
        import numpy as np

        qs = np.asarray(plan.waypoints, dtype=float)
        start = self.world.tcp_pose(robot, qs[0])[:3, 3]
        prev_d, prev_q = 0.0, qs[0]
        for q in qs[1:]:
            d = float(np.linalg.norm(self.world.tcp_pose(robot, q)[:3, 3] - start))
            if d >= plan.guard.contact_m:
                f = 0.0 if d <= prev_d else (plan.guard.contact_m - prev_d) / (d - prev_d)
                return prev_q + min(max(f, 0.0), 1.0) * (q - prev_q)
            prev_d, prev_q = d, q
        return plan.goal

    def _set_arm(self, robot: str, q: Any) -> None:
        """The arm at ``q`` (rad), the object it holds carried along."""
        self.world.set_robot_state(robot, q)
        held = self.held.get(robot)
        if held is not None:
            self.world.set_object_pose(held[0], self.world.tcp_pose(robot) @ held[1])

    # ---- grasps, releases, mechanisms -----------------------------------------------------------------
    def _change(self, node: Any, nominal: bool, progress: Optional[Callable[[str], None]]
                ) -> Optional[list[tuple[str, str, str]]]:
        """A node that changes the world (:func:`changes_world`): followed, or None."""
        kind = node.type
        robot = robot_of(node, "arm" if kind in ("GraspFixAttach", "MoveAlongArc", "TwistHandle") else "gripper",
                         self.world)
        if not nominal or robot is None or robot in self.lost:
            return None
        if kind in HOLDS:
            return [] if robot in self.held or robot in self.holds_handle else None
        if kind == "GraspFixAttach":
            params = _Params(registry.lookup(kind), node.params, self, robot)
            try:
                skip, obj = params.param("skip"), params.param("object")
            except _Unknown:
                return None
            if skip or (robot in self.held and obj in (None, self.held[robot][0])):
                return []   # no weld asked, or the fingers already hold it: the hold is as it was
            if robot in self.held:
                return None
            return self._close(robot, None, want=obj)
        if kind in CLOSES:
            return self._close(robot, node, progress=progress)
        if kind in ("MoveAlongArc", "TwistHandle"):
            return self._screw(node, robot, progress)
        return None   # event-triggered releases, event detectors, regrasp plans, weld releases

    def _close(self, robot: str, node: Any, want: Optional[str] = None,
               progress: Optional[Callable[[str], None]] = None) -> Optional[list[tuple[str, str, str]]]:
        """The fingers close: on a movable object at the TCP it is attached where it is held, on a
        door's or drawer's handle the hand holds it; on nothing, or on something else than ``want``,
        None (the run decides)."""
        if robot in self.held or robot in self.holds_handle:
            return []   # closing again on what it holds
        w = self.world
        name = w.object_at_tcp(robot, HOLD_PROBE_M)
        if name is None and _gap_on_nothing(node, w, robot):
            # a literal gap short of the widest with nothing at the TCP and no object expected (the
            # iiwa's WSG 50 opened to 0.08 of its 0.104 m before a grasp): the fingers go to it, the
            # world is as it was (the run's fingers close on nothing too)
            r = w.robots[robot]
            w.set_robot_state(robot, r.joint_positions(), fingers=r.finger_targets(float(node.params["position"])))
            return []
        if name is None or (want is not None and name != want) or any(h[0] == name for h in self.held.values()):
            return None   # nothing, not the object asked for, or one another hand holds (a handover)
        if name in w.objects:
            from ..geometry.poses import invert

            T_rel = invert(w.tcp_pose(robot)) @ w.object_pose(name)
            w.attach(robot, name, T_rel)
            self.held[robot] = (name, T_rel)
            self.changed = True
            width = self.blackboard.get("grasp_width")
            r = w.robots[robot]
            if not (isinstance(width, (int, float)) and width == width and width > 0):
                width = _closing_gap(w, robot, name)   # no chosen grasp: where the fingers close on it
            if width is not None:
                w.set_robot_state(robot, r.joint_positions(), fingers=r.finger_targets(float(width)))
            if progress:
                progress(f"({name} held by {robot} where the fingers close on it)")
            return []
        mechanisms = {s.name for key in ("doors", "cabinets") for s in (self.scene.extra.get(key) or ())}
        if name in mechanisms:
            self.holds_handle[robot] = name
            return []
        return None

    def _widens(self, node: Any) -> bool:
        """A ``GripperCommand`` to a literal gap wider than the fingers hold an object at: it lets the
        object go, however far short of the widest opening it stops (the WSG 50's 0.08 of 0.104 m)."""
        robot = robot_of(node, "gripper", self.world)
        position = node.params.get("position")
        if robot is None or robot not in self.held or isinstance(position, bool) or not isinstance(position, (int, float)):
            return False
        r = self.world.robots[robot]
        return float(position) > float(r.gap_of(*r.finger_positions())) + 1e-3

    def _open(self, node: Any, nominal: bool) -> Optional[list[tuple[str, str, str]]]:
        """The gripper opens: what it held stays where it is now; the fingers open. None when what a
        hand holds may or may not be let go (a gripper not known ahead, a fallback's open)."""
        robot = robot_of(node, "gripper", self.world)
        if robot is None or not nominal:
            if (robot is None and (self.held or self.holds_handle)) or robot in self.held or robot in self.holds_handle:
                self.unknown = True
                return None
            return []
        w = self.world
        held = self.held.pop(robot, None)
        self.holds_handle.pop(robot, None)
        if held is not None:
            w.set_object_pose(held[0], w.tcp_pose(robot) @ held[1])
            w.detach(robot)
            self.changed = True
        if nominal and robot not in self.lost:
            r = w.robots[robot]
            gap = float(r.model.gripper.opening_m[1])
            position = node.params.get("position")
            if isinstance(position, (int, float)) and not isinstance(position, bool):
                gap = float(position)
            w.set_robot_state(robot, r.joint_positions(), fingers=r.finger_targets(gap))
        return []

    def _screw(self, node: Any, robot: str, progress: Optional[Callable[[str], None]]
               ) -> Optional[list[tuple[str, str, str]]]:
        """A screw motion of the held handle: the arm along the simulator's waypoints, the mechanism's
        joint to its end value; None when the hand holds no handle or the path cannot be followed."""
        import math

        from ..collision.ik import screw_joint_path

        mechanism = self.holds_handle.get(robot)
        if mechanism is None:
            return None
        cls = registry.lookup(node.type)
        params = _Params(cls, node.params, self, robot)
        try:
            goal = cls.make_goal(params)
        except (_Unknown, ValueError, KeyError, TypeError):
            return None
        w = self.world
        r = w.robots[robot]
        q0 = r.joint_positions()
        qs, _, _, error = screw_joint_path(r, q0, w.tcp_pose(robot), goal)
        if error is not None:
            w.set_robot_state(robot, q0)
            return None   # the run refuses it when it starts (CheckReachability says why before)
        door = _door_of(w, self.scene, mechanism)
        if door is not None and door.handle_index is not None and node.type == "TwistHandle":
            a = door.asset
            before, angle = door.handle_angle_deg, float(params.param("angle"))
            tau = min(max(before + angle, 0.0), a.handle.max_angle_deg)
            # the lever stops at its limit: the run's verdict on the turn it reaches (min_fraction)
            short = cls.short_text(math.radians(tau - before), math.radians(angle), float(params.param("min_fraction")),
                                   False)
            if short:
                w.set_robot_state(robot, q0)
                stop, room = ((f"its {a.handle.max_angle_deg:g} deg limit", f"at most {a.handle.max_angle_deg - before:.0f}")
                              if angle > 0 else ("its rest (0 deg)", f"at least {-before:.0f}"))
                return self._lose(robot, [("angle", (
                    f"{node.type}: the lever of door {mechanism!r} stops at {stop}, {before:.0f} deg now: {short}"),
                    f"angle: {room} deg (the latch withdraws at {door.latch_release_deg:g} deg)")])
            door.reset(door.door_angle_deg, tau)
            self.twists[mechanism] = (node, before)
        elif door is not None and node.type != "TwistHandle" and door.latched:
            return self._latched(node, robot, q0, door, mechanism)
        self._set_arm(robot, qs[-1])
        self.changed = True
        if door is not None and node.type != "TwistHandle":
            theta = door.door_angle_deg + abs(math.degrees(float(goal.theta)))
            door.reset(min(theta, door.asset.max_opening_deg), door.handle_angle_deg)
        elif door is None:
            drawer = _drawer_of(w, self.scene, mechanism)
            if drawer is None:
                return None
            out = drawer.drawer_opening_m + abs(float(goal.theta))
            drawer.reset(min(out, float(drawer.asset.drawer_travel_m)))
        key = params.params.get("tcp_pose_key")
        if isinstance(key, str) and key:
            self.blackboard[key.lstrip("/")] = w.tcp_pose(robot)
        if progress:
            progress(f"{node.type} '{node.name or node.type}' (followed: {mechanism} moved with the hand)")
        return []

    def _latched(self, node: Any, robot: str, q0: Any, door: Any, name: str) -> Optional[list[tuple[Any, str, str]]]:
        """A swing of a door its latch holds shut (:meth:`~py_trees_manipulation.bullet.articulated.ArticulatedDoor.latch_text`,
        the run's words): a problem at the parameter to change: the door's ``locked`` in the scene, or
        the angle of the ``TwistHandle`` before it, with the turn that withdraws the latch. The dry run
        ends (the door does not move)."""
        import math

        self.world.set_robot_state(robot, q0)
        text = f"{node.type}: {door.latch_text(name)}"
        if door.locked:
            return self._lose(robot, [(self._scene_loc("doors", name, "locked"), text,
                                       f"the tree cannot open a locked door: unlock it (locked: false) or leave it shut")])
        twist = self.twists.get(name)
        a = door.asset
        if twist is None:
            return self._lose(robot, [("", text, f"turn the lever at least {door.latch_release_deg:g} deg first "
                                                 "(TwistHandle) while holding it")])
        twist_node, before = twist
        fraction = twist_node.params.get("min_fraction", registry.lookup(twist_node.type).all_params()["min_fraction"].default)
        fraction = float(fraction) if isinstance(fraction, (int, float)) and 0 < fraction <= 1 else 1.0
        # the turn may stop short by what TwistHandle accepts (min_fraction): the latch must withdraw anyway
        need = min(math.ceil((door.latch_release_deg - before) / fraction), math.floor(a.handle.max_angle_deg - before))
        room = a.handle.max_angle_deg - before
        hint = (f"{twist_node.type} '{twist_node.name or twist_node.type}' angle: at least {need} deg (the latch "
                f"withdraws at {door.latch_release_deg:g} deg, the turn succeeds from {100 * fraction:g}% of its angle; "
                f"the lever stops at {a.handle.max_angle_deg:g} deg)"
                if door.latch_release_deg - before <= room else f"the lever turns at most {room:.0f} deg, short of the "
                                                                f"latch's {door.latch_release_deg:g} deg: no twist opens it")
        return self._lose(robot, [(twist_node.param_locs.get("angle", twist_node.loc), text, hint)])

    def _scene_loc(self, section: str, name: str, key: str) -> Any:
        """The place in the file of ``scene.<section>[name].<key>`` (its value, else the entry, else
        the section), or "" (the node's line) when the file does not say."""
        entries = (self.written or {}).get(section) if hasattr(self.written, "get") else None
        for entry in entries or ():
            if hasattr(entry, "get") and entry.get("name") == name:
                if key in entry and hasattr(entry, "value_loc"):
                    return entry.value_loc(key)
                return getattr(entry, "loc", "")
        return getattr(entries, "loc", "")

    def _robot(self, node: Any) -> Optional[str]:
        return robot_of(node, "arm", self.world)


def _closing_gap(world: Any, robot: str, obj: str) -> Optional[float]:
    """The finger gap (m) at which ``robot``'s fingers, closing from where they are, first touch
    ``obj`` in ``world`` (to 0.1 mm): where a gripper closing on it stops; None when they close shut
    without touching it. The fingers are left where they were."""
    import pybullet as pb

    r = world.robots[robot]
    q, fingers = r.joint_positions(), r.finger_positions()
    body = world.bodies[obj]

    def touches(gap: float) -> bool:
        world.set_robot_state(robot, q, fingers=r.finger_targets(gap))
        return any(pb.getClosestPoints(r.body, body, 0.0, linkIndexA=link, physicsClientId=world.client)
                   for link in r.finger_links)

    lo, hi = 0.0, float(r.gap_of(*fingers))
    try:
        if not touches(lo):
            return None
        if touches(hi):
            return hi
        while hi - lo > 1e-4:   # touching at lo, clear at hi
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if touches(mid) else (lo, mid)
        return lo
    finally:
        world.set_robot_state(robot, q, fingers=fingers)


def _door_of(world: Any, scene: Any, name: str) -> Any:
    """The scene's door ``name`` as an :class:`~py_trees_manipulation.bullet.articulated.ArticulatedDoor`
    on the collision world's body (its frames and joints where they are now), or None."""
    from ..bullet.articulated import ArticulatedDoor

    spec = next((d for d in scene.extra.get("doors") or () if d.name == name), None)
    return None if spec is None else ArticulatedDoor.from_asset(spec.asset, world.bodies[name], world.client)


def _drawer_of(world: Any, scene: Any, name: str) -> Any:
    """The scene's cabinet ``name``'s drawer (:class:`~py_trees_manipulation.bullet.articulated.ArticulatedDrawer`
    on the collision world's body), or None."""
    from ..bullet.articulated import ArticulatedDrawer

    spec = next((c for c in scene.extra.get("cabinets") or () if c.name == name), None)
    return None if spec is None else ArticulatedDrawer.from_asset(spec.asset, world.bodies[name], world.client)


def _mechanism(scene: Any, key: str, given: Any) -> Optional[str]:
    names = [s.name for s in scene.extra.get(key) or ()]
    return given if given in names else (names[0] if given is None and names else None)


def _get_object_pose(dry: DryRun, node: Any, p: "_Params") -> None:
    obj = p.param("object")
    if isinstance(obj, str) and obj in dry.world.bodies:
        p.write("output_key", dry.world.object_pose(obj))


def _detect_door(dry: DryRun, node: Any, p: "_Params") -> None:
    name = _mechanism(dry.scene, "doors", p.param("door"))
    if name is None:
        return
    door = _door_of(dry.world, dry.scene, name)
    bottom, top = door.hinge_poses_in_world()
    p.write("grasp_key", door.handle_grasp_in_world())
    p.write("hinge_first_key", bottom)
    p.write("hinge_second_key", top)
    p.write("pivot_key", door.handle_pivot_in_world())


def _detect_drawer(dry: DryRun, node: Any, p: "_Params") -> None:
    name = _mechanism(dry.scene, "cabinets", p.param("cabinet"))
    if name is not None:
        p.write("grasp_key", _drawer_of(dry.world, dry.scene, name).drawer_grasp_in_world())


def _arc_frames(dry: DryRun, node: Any, p: "_Params") -> None:
    from ..geometry.affordances import calculate_move_along_arc_subframes

    sub = calculate_move_along_arc_subframes(p.param("grasp_pose"), p.param("hinge_pose_first"),
                                             p.param("hinge_pose_second"))
    if sub is not None:
        p.write("output_key", sub)


def _twist_frames(dry: DryRun, node: Any, p: "_Params") -> None:
    from ..geometry.affordances import calculate_grasp_and_twist_subframes

    p.write("output_key", calculate_grasp_and_twist_subframes(p.param("target_grasp_pose"), p.param("grasp_rotation")))


def _set_variable(dry: DryRun, node: Any, p: "_Params") -> None:
    p.write("variable_name", p.params.get("value"))


#: nodes whose outputs the dry run computes as the run would (from the collision world, without noise)
_VALUES: dict[str, Callable[[DryRun, Any, "_Params"], None]] = {
    "GetObjectPose": _get_object_pose, "SetBlackboardVariable": _set_variable,
    "DetectDoorAffordance": _detect_door, "DetectDrawerAffordance": _detect_drawer,
    "GetMoveAlongArcSubframes": _arc_frames, "GetGraspAndTwistSubframes": _twist_frames}


class _Params:
    """What a behaviour's ``make_goal`` reads (``param``, ``params``, ``resource``, ``backend``),
    answered from the dry run: called as ``MoveCartesian.make_goal(stand_in)``, so the goal is the
    behaviour's own; ``write`` puts a value under the blackboard key a ``key`` parameter names."""

    def __init__(self, cls: Any, params: dict, dry: DryRun, robot: Optional[str] = None, spec: Any = None):
        from ..behaviors.params import REQUIRED

        self.spec = spec   # the node (its goal's plan_key, as the run's behaviour has it)
        self._param_decl = cls.all_params()
        self.params = {k: p.default for k, p in self._param_decl.items() if p.default is not REQUIRED}
        self.params.update(params)
        self._dry, self._robot = dry, robot
        world = dry.world
        self.backend = type("Backend", (), {"world": world, "scene": dry.scene})()
        if robot is not None:
            model = world.robots[robot].model
            self.resource = type("Arm", (), {
                "name": robot, "named_configurations": dict(model.named_configurations),
                "joint_names": list(model.arm_joint_names),
                "tcp_pose": staticmethod(lambda: world.tcp_pose(robot))})()

    def param(self, key: str) -> Any:
        from ..behaviors.params import BlackboardRef

        value = self.params.get(key)
        if isinstance(value, BlackboardRef):
            k = value.key.lstrip("/")
            if k not in self._dry.blackboard:
                raise _Unknown(k)
            return self._param_decl[key].coerce_value(self._dry.blackboard[k])
        return value

    def write(self, key_param: str, value: Any) -> None:
        key = self.params.get(key_param)
        if isinstance(key, str) and key:
            self._dry.blackboard[key.lstrip("/")] = value
