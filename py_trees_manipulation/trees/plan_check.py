"""``ptm validate --plan``: a task's planning checks against its scene as written, without the simulator.

:func:`plan_check` builds the collision world of the task file's scene (robots placed by
``base_pose: auto`` as the simulator would place them), then asks every behaviour of the tree that
can decide its outcome from the scene alone (a ``plan_problems(params, world, scene, seed,
blackboard)`` class method) whether it will, in tick order up to the first node that changes the
world (a gripper closing, a door swung: :func:`changes_world`): ``CheckReachability`` (every target
followed as the task moves it: the door's whole arc and the retreat, the drawer's whole pull, a pick
and place with the object held; with a base pose that does it all), ``ChooseGrasp`` (a grasp of the
object where the file puts it, reaching the place pose when the file gives it; with a base that does
it), ``PlanRegrasp`` (the whole regrasp plan, every transition's lines checked, from the grasp state
the file starts in). The nodes after a world change, and steps whose outcome depends on what a sensor
will see (a force-guarded descent, a detected handle, a slip), are checked when they start, as in a
run.

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

__all__ = ["plan_check", "plan_check_in_backend", "PlanProblem"]


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
    if any(getattr(r, "base_auto", None) is not None for r in scene.robots):
        if progress:
            progress("placing the robots (base_pose: auto)")
        scene, placements = place_robots(scene, requests_from_tree(task.tree), seed=seed)
        for name, p in placements.items():
            if not p.ok:
                problems.append(PlanProblem(task.tree.loc, f"base_pose: auto: {p.failure}"))
    world = CollisionWorld.from_scene(scene)
    try:
        problems += start_state_problems(task, world, scene)
        problems += check_nodes(task, world, scene, seed, progress)
    finally:
        world.close()
    return problems


def start_state_problems(task: TaskSpec, world: Any, scene: Any) -> list[PlanProblem]:
    """Each robot at its ``initial_configuration``: in collision with itself or the scene (no
    padding: touching is allowed, overlapping is not), as MoveIt refuses a start state in collision;
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
        base = base_overlap(world, r.name, ignore=[surface.body] if surface.body else (), padding_m=0.0)
        if base is not None:
            out.append(PlanProblem(where(i, "base_pose"), f"robot {r.name!r} stands in collision: its base {base}",
                                   f"move scene.robots.{i}.base_pose, or the body it overlaps"))
        ck = world.checker(r.name, padding_m=0.0)
        hit = ck.explain(world.robots[r.name].joint_positions())
        if hit is None:
            continue
        conf = r.initial_configuration if isinstance(r.initial_configuration, str) else "the given angles"
        out.append(PlanProblem(where(i, "initial_configuration"), (
            f"robot {r.name!r} starts in collision at its initial_configuration ({conf}): {hit.describe()}"),
            f"change scene.robots.{i}.initial_configuration or scene.robots.{i}.base_pose, or move the body "
            "it overlaps"))
    return out


def plan_check_in_backend(task: TaskSpec, backend: Any, seed: int = 0) -> list[PlanProblem]:
    """:func:`plan_check` in a backend's own collision world (its planning service's, synced to the
    robot's joint states and the perceived objects: the hardware backend), before the first goal is
    sent; empty when the backend has no collision world."""
    from ..backend import planning_service

    svc = planning_service(backend)
    scene = getattr(svc, "scene", None)
    if svc is None or scene is None or not callable(getattr(svc, "call_in_world", None)):
        return []
    return svc.call_in_world(lambda world: check_nodes(task, world, scene, seed))


#: behaviours after which the world is no longer the file's (an object held or moved, a door
#: swung): the checks of the nodes after them depend on what happened, and run when they start
WORLD_CHANGING = frozenset({"FindContact", "Grab", "ForceServo", "SlipServo", "Release", "EventDetector",
                            "GraspFixAttach", "GraspFixRelease", "ExecuteRegraspPlan", "MoveAlongArc", "TwistHandle"})


def changes_world(node: Any) -> bool:
    """Whether ``node`` (a NodeSpec) can change what the scene holds: a gripper closing (anything but
    a literal ``position: open``), a tactile or GraspFix grasp, a regrasp plan executed, a handle
    turned or a door swung."""
    if node.type in WORLD_CHANGING:
        return True
    return node.type == "GripperCommand" and node.params.get("position") != "open"


def check_nodes(task: TaskSpec, world: Any, scene: Any, seed: int = 0,
                progress: Optional[Callable[[str], None]] = None) -> list[PlanProblem]:
    """Every node's ``plan_problems`` check in ``world`` (module docstring), in tick order, up to the
    first node that changes the world (:func:`changes_world`): the checks after it depend on what it
    did, and run when they start."""
    problems: list[PlanProblem] = []
    for node in task.tree.walk():
        if node.category == "behaviour" and changes_world(node):
            if progress:
                progress(f"(the nodes after {node.type} '{node.name or node.type}' are checked when they start)")
            break
        cls = registry.lookup(node.type) if node.category == "behaviour" else None
        check = getattr(cls, "plan_problems", None)
        if not callable(check):
            continue
        name = node.name or node.type
        if progress:
            progress(f"{node.type} '{name}'")
        kw = {"blackboard": task.blackboard or {}} if "blackboard" in inspect.signature(check).parameters else {}
        try:
            found = check(dict(node.params), world, scene, seed=seed, **kw)
        except Exception as e:  # a check that cannot run on this scene says so, never a traceback
            found = [("", f"{node.type}: cannot be checked ahead: {type(e).__name__}: {e}", "")]
        for key, message, hint in found:
            problems.append(PlanProblem(node.param_locs.get(key, node.loc), message, hint, node.type, name))
    return problems
