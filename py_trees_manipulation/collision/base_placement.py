"""``base_pose: auto``: place a robot's base where every target of the task is reachable.

When a scene's robot says ``base_pose: auto`` (or ``{auto: {surface: NAME}}``), :func:`place_robots`
runs before the simulator loads the robot, in a collision world of the scene
(:class:`~py_trees_manipulation.collision.world.CollisionWorld`): it collects the task's targets
(:mod:`.reach_targets`: the ``CheckReachability`` nodes of the tree, else everything the scene has:
every door, every cabinet, the target object's grasps) and searches a base pose with
:func:`~py_trees_manipulation.collision.base_search.find_base` (its margins relaxed in steps when no
base passes with them: :func:`~py_trees_manipulation.collision.base_search.find_base_relaxing`).

**The mounting surface** is given by ``surface`` (``floor``, or a fixture's name: the base stands on
the top of that fixture's bounding box, its origin kept inside the top inset by the base's own
radius). Without it, it is chosen: the fixture the task's target object rests on (the highest fixture
whose bounding box is under the object, its top within 5 cm below the object's bottom), else the
floor (z = 0). The base faces the targets (its x axis toward their centre).

The result is deterministic (the scene's seed, fixed candidate order): a run with the chosen pose
written as an explicit ``base_pose`` is the same run. Robots are placed in scene order, each seeing
those placed before it; robots still waiting are out of the way.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Optional, Sequence

import numpy as np
import pybullet as pb

from .base_pose import base_frame, set_base_frame
from .base_search import find_base_relaxing
from .reach_results import BasePlacement, MountingSurface
from ..scene.reach_targets import ReachRequest, requests_for_robot, targets_for

__all__ = ["place_robots", "mounting_surface", "surface_under", "scene_with_base", "task_accept"]

#: where robots waiting for their placement are parked in the search world (out of everything's way)
_PARKED = (0.0, 0.0, -50.0)


def _aabb(world: Any, name: str) -> tuple[np.ndarray, np.ndarray]:
    body = world.bodies[name]
    c = world.client
    lo, hi = np.full(3, np.inf), np.full(3, -np.inf)
    for link in [-1, *range(pb.getNumJoints(body, physicsClientId=c))]:
        a, b = pb.getAABB(body, link, physicsClientId=c)
        lo, hi = np.minimum(lo, a), np.maximum(hi, b)
    return lo, hi


def _base_radius(world: Any, robot: str) -> float:
    """Horizontal radius of the robot's fixed links around its base origin, metres."""
    from .base_pose import _fixed_links

    body = world.robots[robot].body
    c = world.client
    p = base_frame(world, robot)[:3, 3]
    r = 0.05
    for j in _fixed_links(world, robot):
        lo, hi = pb.getAABB(body, j, physicsClientId=c)
        for x in (lo[0], hi[0]):
            for y in (lo[1], hi[1]):
                r = max(r, float(np.hypot(x - p[0], y - p[1])))
    return r


def mounting_surface(world: Any, scene: Any, robot: str, surface: Optional[str],
                     requests: Sequence[ReachRequest]) -> MountingSurface:
    """The :class:`MountingSurface` for ``robot`` (see the module docstring).

    Args:
        surface: ``"floor"``, a fixture's name, or None (chosen from the target object).
    """
    if surface is None:
        objs = {r.object for r in requests if r.object}
        if any(r.everything for r in requests) and scene.task.target_object:
            objs.add(scene.task.target_object)
        best: Optional[tuple[float, str]] = None
        for name in sorted(objs):
            if name not in world.bodies:
                continue
            olo, ohi = _aabb(world, name)
            centre = (olo + ohi) / 2
            for f in scene.fixtures:
                flo, fhi = _aabb(world, f.name)
                if (flo[0] <= centre[0] <= fhi[0] and flo[1] <= centre[1] <= fhi[1]
                        and olo[2] - 0.05 <= fhi[2] <= olo[2] + 0.01):
                    if best is None or fhi[2] > best[0]:
                        best = (float(fhi[2]), f.name)
        surface = best[1] if best is not None else "floor"
    if surface == "floor":
        return MountingSurface("floor", 0.0)
    lo, hi = _aabb(world, surface)
    inset = _base_radius(world, robot)
    region = (lo[0] + inset, hi[0] - inset, lo[1] + inset, hi[1] - inset)
    if region[0] > region[1] or region[2] > region[3]:
        region = ((lo[0] + hi[0]) / 2,) * 2 + ((lo[1] + hi[1]) / 2,) * 2
    return MountingSurface(surface, float(hi[2]), tuple(float(v) for v in region), surface)


def scene_with_base(scene: Any, robot: str, T: Any) -> Any:
    """``scene`` (a parsed :class:`~py_trees_manipulation.scene.spec.SceneSpec`) with ``robot``'s base at
    ``T`` ((4, 4), world), as ``--set 'scene.robots.N.base_pose=...'`` puts it."""
    robots = tuple(dataclasses.replace(r, base_pose=np.array(T, dtype=float), base_auto=None) if r.name == robot else r
                   for r in scene.robots)
    return dataclasses.replace(scene, robots=robots)


def task_accept(task_check: Any, scene: Any, robot: str) -> Optional[Callable[[Any], Optional[str]]]:
    """The base search's ``accept`` (:func:`~.base_search.find_base`) for ``robot`` from a whole-task
    test ``task_check(scene) -> None or why`` (:func:`py_trees_manipulation.trees.plan_check.whole_task_test`):
    the test run with the robot's base at the candidate pose (every other robot where ``scene`` has
    it); None without a test (``task_check`` None or False)."""
    if not callable(task_check) or scene is None:
        return None
    return lambda T: task_check(scene_with_base(scene, robot, T))


def place_robots(scene: Any, requests: Optional[Sequence[ReachRequest]] = None, seed: int = 0,
                 models: Optional[dict] = None, task_check: Any = None) -> tuple[Any, dict[str, BasePlacement]]:
    """Resolve every ``base_pose: auto`` of a parsed scene.

    Args:
        scene: the :class:`~.scene.SceneSpec`.
        requests: the task's reach requests (``CheckReachability`` nodes,
            :func:`~py_trees_manipulation.behaviors.reach.requests_from_tree`); None or empty: everything the scene has.
        seed: seeds the search's IK.
        models: robot name -> model (default: each robot's description).
        task_check: the whole-task test (``task_check(scene) -> None or why``,
            :func:`py_trees_manipulation.trees.plan_check.whole_task_test`): a base that reaches the
            targets but from which the task's dry run fails (a grasp ``ChooseGrasp`` refuses, a motion
            the planner refuses) is passed over, so the run from the pose chosen passes the same
            checks as ``ptm validate --plan`` (applied to the last robot placed, once every other
            robot's base is known).

    Returns:
        ``(scene with explicit base poses, {robot: BasePlacement})``. A robot no base suits gets the
        candidate that reached the most (or stays at the origin) and a placement that is not ``ok``,
        whose ``failure`` names the target no base reaches.
    """
    from .world import CollisionWorld

    auto = [r for r in scene.robots if r.base_auto is not None]
    if not auto:
        return scene, {}
    world = CollisionWorld.from_scene(scene, models=models)
    placements: dict[str, BasePlacement] = {}
    try:
        for r in auto:
            world.set_base_pq(r.name, _PARKED, (0.0, 0.0, 0.0, 1.0))
        first = scene.robots[0].name
        robots = list(scene.robots)
        for i, spec in enumerate(robots):
            if spec.base_auto is None:
                continue
            mine = requests_for_robot(list(requests or ()), spec.name, first) or [ReachRequest()]

            def targets(probe: bool, mine: list = mine) -> list:
                out = []
                for req in mine:
                    out.extend(targets_for(req.with_margin() if probe else req, scene, object_pose=world.object_pose))
                return out

            # the surface is chosen with the robot at a neutral place (its footprint measured there)
            world.set_base_pq(spec.name, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0))
            surface = mounting_surface(world, scene, spec.name, spec.base_auto.surface, mine)
            world.set_base_pq(spec.name, _PARKED, (0.0, 0.0, 0.0, 1.0))
            placed = dataclasses.replace(scene, robots=tuple(robots))
            pending = any(r.base_auto is not None for r in robots[i + 1:])   # placed after this one
            placement = find_base_relaxing(world, spec.name, targets, surface, seed=seed, restore=False,
                                           accept=None if pending else task_accept(task_check, placed, spec.name))
            placements[spec.name] = placement
            if placement.pose is not None:
                set_base_frame(world, spec.name, placement.pose)
                robots[i] = dataclasses.replace(spec, base_pose=placement.pose)
    finally:
        world.close()
    return dataclasses.replace(scene, robots=tuple(robots)), placements


def surface_under(world: Any, scene: Any, robot: str) -> MountingSurface:
    """The surface ``robot`` stands on now: the floor (base within 2 cm of z = 0), the fixture whose
    top is within 2 cm of the base height under it, else a level plane at the base's height (with no
    bounds). For suggesting another base pose of the same kind."""
    p = base_frame(world, robot)[:3, 3]
    if abs(p[2]) < 0.02:
        return MountingSurface("floor", 0.0)
    for f in scene.fixtures:
        lo, hi = _aabb(world, f.name)
        if lo[0] <= p[0] <= hi[0] and lo[1] <= p[1] <= hi[1] and abs(hi[2] - p[2]) < 0.02:
            return mounting_surface(world, scene, robot, f.name, ())
    return MountingSurface(f"the plane z = {p[2]:.3f} m", float(p[2]))
