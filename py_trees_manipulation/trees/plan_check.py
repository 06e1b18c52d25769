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
the file starts in). On the way the tree's arm motions on the nominal path are followed
(:class:`DryRun`: each goal built by the behaviour's own ``make_goal``, planned from where the motions
before it leave the arm, as the run plans it), so a motion the run would refuse is refused here at its
line. The nodes after a world change, and steps whose outcome depends on what a sensor will see (a
force-guarded descent, a detected handle, a slip), are checked when they start, as in a run.

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

__all__ = ["plan_check", "plan_check_in_backend", "PlanProblem", "DryRun"]


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


def robot_of(node: Any, key: str, world: Any) -> Optional[str]:
    """The robot a node's ``arm`` or ``gripper`` parameter (``key``) names in ``world``: the literal
    name, or the world's only robot when the node names none; None when it cannot be told ahead."""
    value, names = node.params.get(key), list(world.robots)
    if isinstance(value, str):
        return value if value in names else None
    return names[0] if value is None and len(names) == 1 else None


def check_nodes(task: TaskSpec, world: Any, scene: Any, seed: int = 0,
                progress: Optional[Callable[[str], None]] = None) -> list[PlanProblem]:
    """Every node's ``plan_problems`` check in ``world`` (module docstring), in tick order, up to the
    first node that changes the world (:func:`changes_world`): the checks after it depend on what it
    did, and run when they start. On the way the arm motions are followed (:class:`DryRun`): each is
    planned from where the motions before it leave the arm, as the run plans it, and one that would be
    refused is a problem; the arms are put back where they were at the end."""
    problems: list[PlanProblem] = []
    dry = DryRun(world, scene, task.blackboard or {})
    try:
        for node, nominal in _tick_order(task.tree):
            if node.category == "behaviour" and changes_world(node, world):
                if progress:
                    progress(f"(the nodes after {node.type} '{node.name or node.type}' are checked when they start)")
                break
            if node.category != "behaviour":
                continue
            name = node.name or node.type
            found = dry.step(node, nominal, progress)
            cls = registry.lookup(node.type)
            check = getattr(cls, "plan_problems", None)
            if callable(check):
                if progress:
                    progress(f"{node.type} '{name}'")
                kw = {"blackboard": task.blackboard or {}} if "blackboard" in inspect.signature(check).parameters else {}
                try:
                    found += check(dict(node.params), world, scene, seed=seed, **kw)
                except Exception as e:  # a check that cannot run on this scene says so, never a traceback
                    found.append(("", f"{node.type}: cannot be checked ahead: {type(e).__name__}: {e}", ""))
            for key, message, hint in found:
                problems.append(PlanProblem(node.param_locs.get(key, node.loc), message, hint, node.type, name))
    finally:
        dry.restore()
    return problems


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


class DryRun:
    """The arm motions of a tree followed in a collision world before the run (``ptm validate --plan``).

    Each ``MoveJoints``, ``MoveToPose`` and ``MoveCartesian`` on the nominal path builds its goal with
    the behaviour's own ``make_goal`` (the same target composition, the TCP where the motions before
    it leave it, the blackboard values known ahead: the task's initial blackboard and the poses
    ``GetObjectPose`` reads from the scene) and is planned by the
    :class:`~py_trees_manipulation.collision.arm_planner.ArmMotionPlanner` from the arm's configuration
    then, as the simulator and the hardware client plan it; the arm is left at the plan's goal. A
    motion the planner refuses is a problem with the planner's text (the link, the body, where along
    the line). An arm whose state is no longer known (a motion whose target is read from a key no
    followed node writes, one off the nominal path, one refused) is not followed further.
    """

    ACTIONS = {"MoveJoints": "move_joints", "MoveToPose": "move_to_pose", "MoveCartesian": "move_cartesian"}

    def __init__(self, world: Any, scene: Any, blackboard: dict):
        self.world, self.scene = world, scene
        self.blackboard = {str(k).lstrip("/"): v for k, v in dict(blackboard).items()}
        self.lost: set[str] = set()
        self._start = {name: r.joint_positions() for name, r in world.robots.items()}

    def restore(self) -> None:
        """Put every arm back where it was when the dry run started."""
        for name, q in self._start.items():
            self.world.set_robot_state(name, q)

    def step(self, node: Any, nominal: bool, progress: Optional[Callable[[str], None]] = None
             ) -> list[tuple[str, str, str]]:
        """Follow one behaviour node: ``[(parameter, problem, hint)]``."""
        if node.type == "GetObjectPose":
            obj, key = node.params.get("object"), node.params.get("output_key")
            if isinstance(obj, str) and isinstance(key, str) and obj in self.world.bodies:
                self.blackboard[key.lstrip("/")] = self.world.object_pose(obj)
            return []
        action = self.ACTIONS.get(node.type)
        if action is None:
            if getattr(registry.lookup(node.type), "RESOURCE", None) == "arm":
                robot = self._robot(node)   # another behaviour moves this arm: where it leaves it is unknown
                if robot is not None:
                    self.lost.add(robot)
            return []
        robot = self._robot(node)
        if robot is None or robot in self.lost:
            return []
        if not nominal:
            self.lost.add(robot)
            return []
        from ..collision.arm_planner import ArmMotionPlanner, MotionPlanningError
        from ..collision.worker import request_from_goal

        cls = registry.lookup(node.type)
        try:
            goal = cls.make_goal(_GoalMaker(cls, node.params, self, robot))
            req = request_from_goal(robot, action, goal, self.world.robots[robot].joint_positions())
        except _Unknown:
            self.lost.add(robot)
            return []
        except (ValueError, KeyError, TypeError) as e:
            self.lost.add(robot)
            return [("", f"{node.type}: cannot build its goal: {e.args[0] if e.args else e}", "")]
        if progress:
            progress(f"{node.type} '{node.name or node.type}' (followed: planned from where the motions before it "
                     "leave the arm)")
        try:
            plan = ArmMotionPlanner(self.world, robot).plan(req)
        except MotionPlanningError as e:
            self.lost.add(robot)
            return [("", f"{node.type}: the motion would be refused before moving: {e}", "")]
        self.world.set_robot_state(robot, plan.goal)
        return []

    def _robot(self, node: Any) -> Optional[str]:
        return robot_of(node, "arm", self.world)


class _GoalMaker:
    """What a motion behaviour's ``make_goal`` reads (``param``, ``params``, ``resource``,
    ``backend``), answered from the dry run: called as ``MoveCartesian.make_goal(stand_in)``, so the
    goal is the behaviour's own."""

    def __init__(self, cls: Any, params: dict, dry: DryRun, robot: str):
        from ..behaviors.params import REQUIRED

        self._param_decl = cls.all_params()
        self.params = {k: p.default for k, p in self._param_decl.items() if p.default is not REQUIRED}
        self.params.update(params)
        self._dry, self._robot = dry, robot
        world = dry.world
        model = world.robots[robot].model
        self.resource = type("Arm", (), {
            "name": robot, "named_configurations": dict(model.named_configurations),
            "joint_names": list(model.arm_joint_names),
            "tcp_pose": staticmethod(lambda: world.tcp_pose(robot))})()
        self.backend = type("Backend", (), {"world": world, "scene": dry.scene})()

    def param(self, key: str) -> Any:
        from ..behaviors.params import BlackboardRef

        value = self.params.get(key)
        if isinstance(value, BlackboardRef):
            k = value.key.lstrip("/")
            if k not in self._dry.blackboard:
                raise _Unknown(k)
            return self._param_decl[key].coerce_value(self._dry.blackboard[k])
        return value
