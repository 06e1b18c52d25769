"""Reachability before motion: ``CheckReachability``.

Put it first in a tree, before anything moves: it checks that the task's targets are reachable from
where the robot stands (inverse kinematics and collision checks in the collision world, see
:mod:`py_trees_manipulation.collision.reachability`): the grasps of the object to pick (any one
suffices), a door's lever along its whole opening arc, a drawer's bar along its pull line
(:mod:`py_trees_manipulation.scene.reach_targets`). When one is not, it FAILS naming it and why, and
suggests a base pose from which every target is reachable. Its parameters are also what
``base_pose: auto`` places the robot for (:mod:`py_trees_manipulation.collision.base_placement`), so the
task's targets are written once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

from py_trees.common import Status

from .base import ManipulationBehaviour
from .params import Param

__all__ = ["CheckReachability"]


def _planning(backend: Any) -> Any:
    """The backend's collision-world owner (``call_in_world``, ``scene``): the simulator's
    ``motion_planning`` extension or the hardware client's planner; None without one."""
    from ..backend import planning_service

    ext = planning_service(backend)
    return ext if ext is not None and callable(getattr(ext, "call_in_world", None)) else None


#: the work a failure's base suggestion may spend (a refusal keeps its answer quick; ``base_pose:
#: auto`` searches as long as it needs), in IK solver calls plus arm states checked for collision
#: (:class:`~py_trees_manipulation.collision.base_search.SearchBudget`), the whole-task tests'
#: included: counted, not timed, so that the same input gives the same suggestion on any machine and
#: under any load (a 30 s wall-clock budget stopped a loaded machine's search sooner). About 30 s on
#: a quiet machine: ~1000 units/s (550-800 on the 2-core machine under the test suite's load; the
#: handover on two iiwas spends 15 k, the xArm's drawer 0.3 m back 1.5 k)
SUGGEST_BUDGET = 30000


def _where(T: Any) -> str:
    yaw = math.degrees(math.atan2(T[1, 0], T[0, 0]))
    return f"({T[0, 3]:.2f}, {T[1, 3]:.2f}, {T[2, 3]:.2f}) facing {yaw:.0f} deg"


class CheckReachability(ManipulationBehaviour):
    """Check, before the robot moves, that the task's targets are reachable from where it stands.

    The targets (any combination; none given: every door, every cabinet and the scene's target
    object): ``object``: one of its grasps (the object's grasp set, pregrasp and grasp, at its pose
    now; with ``place_position`` the whole pick and place with that one grasp: the lift, above the
    place, lowered onto it, released, the retreat, the object attached to the hand while it is held);
    ``door``: the lever grasped, turned ``twist_angle``, held along the whole opening arc of
    ``open_angle`` (the door's own opening direction), turned back, the retreat; ``cabinet``: the
    drawer's bar along its pull line of ``pull_m``. Each path is followed as the task moves: IK from
    the previous sample, no joint jump over 0.5 rad, collision-checked with the door or drawer at that
    moment's angle or opening (the hand may touch the handle it holds). The path starts from the IK
    solution the motion planner would take for the first pose (seeded by ``configuration``); with
    ``posture_key`` the tree moves the arm to the posture the check found instead, so any posture
    from which the whole path works will do (the first target's posture is written there).

    The arc and the pull are compared with the mechanism first: an ``open_angle`` beyond the door's
    hinge limit (``max_opening_deg``) or a ``pull_m`` beyond the drawer's travel (``drawer_travel_m``)
    FAILS at once naming the limit (the mechanism bounds it); an arc or pull the arm does not follow
    to its end says how far it got, against the goal and the mechanism's travel (the arm bounds it).

    SUCCESS when every target is reachable (nothing moves). FAILURE naming the first target that is
    not, the sample and why (``"the door handle at 40 deg of its 60 deg arc is out of reach: best IK
    0.060 m away"``), with a base pose from which every target is reachable (``suggest_base``: a
    search over base positions and yaws on the surface the robot stands on, a few seconds). The
    parameters are load-time values (no ``{key}``): ``base_pose: auto`` places the robot for them.

    Example:
        .. code-block:: yaml

            - CheckReachability: {door: door, open_angle: 62, twist_angle: 45, posture_key: door_approach_q}
            - MoveJoints: {positions: "{door_approach_q}"}     # where the whole opening was checked from
    """

    ABSTRACT = False
    PARAMS = {
        "object": Param("str", None, "object to pick: one of its grasps (pregrasp and grasp) must be reachable",
                        refers_to="object", blackboard=False),
        "place_position": Param("vector3", None, "where the object is put down, world [x, y, z] (its orientation "
                                "kept): each grasp is checked through the whole pick and place (lift, above the "
                                "place, lowered, released, retreat)", unit="m", blackboard=False),
        "door": Param("str", None, "door to open: its lever grasped, turned and held along the whole arc",
                      refers_to="door", blackboard=False),
        "open_angle": Param("float", 60.0, "the door's opening arc, signed as MoveAlongArc's angle (+ pulls, - "
                                           "pushes): it must turn the way the door's 'opening' opens it",
                             unit="deg", min=-179.0, max=179.0, blackboard=False),
        "twist_angle": Param("float", 45.0, "lever turn held through the arc (0: none)", unit="deg", min=0.0,
                             max=90.0, blackboard=False),
        "untwist_angle": Param("float", None, "lever turn back before the hand lets go (magnitude; default: the "
                               "whole twist_angle): the retreat starts from the lever where the tree's TwistHandle "
                               "leaves it", unit="deg", min=-90.0, max=90.0, blackboard=False),
        "cabinet": Param("str", None, "cabinet whose drawer is pulled: its bar along the pull line",
                         refers_to="cabinet", blackboard=False),
        "pull_m": Param("float", None, "drawer pull, along the handle's z into the front: negative pulls it out "
                        "(a positive value pushes a closed drawer in: refused; default: the drawer's travel)", unit="m",
                        min=-2.0, max=2.0, blackboard=False),
        "pregrasp_m": Param("float", 0.08, "approach stand-off before the door or drawer grasp", unit="m", min=0.0,
                            max=0.5, blackboard=False),
        "configuration": Param("str", None, "named arm configuration the approach starts from (the motion "
                               "planner's first IK seed; default: the arm's configuration now)",
                               refers_to="configuration", blackboard=False),
        "posture_key": Param("key", None, "blackboard key for the arm configuration (rad) at the first pose of the "
                                          "first target, from which its whole path was checked: move there with "
                                          "MoveJoints positions '{key}' (then any such posture will do)"),
        "suggest_base": Param("bool", True, "on failure, search a base pose from which every target is reachable",
                              blackboard=False),
        "arm": Param("str", None, "the robot (default: the scene's first)", refers_to="robot", blackboard=False),
    }

    def update(self) -> Status:
        planning = _planning(self.backend)
        if planning is None:
            return self.fail("no collision world to check reachability in: the backend plans no motions "
                             "(on hardware the task's scene must name the robot)")
        scene = getattr(planning, "scene", None) or getattr(self.backend, "scene", None)
        seed = int(getattr(self.backend, "seed", 0) or 0)
        task_check = getattr(self.backend, "task_check", None)
        verdict = planning.call_in_world(lambda world: check_reach(world, scene, dict(self.params), seed, task_check))
        if verdict.ok:
            if verdict.posture is not None:
                self.write_output("posture_key", verdict.posture)
            self.feedback_message = verdict.text
            return Status.SUCCESS
        return self.fail(verdict.text)

    @classmethod
    def plan_problems(cls, params: dict[str, Any], world: Any, scene: Any, seed: int = 0,
                      blackboard: Optional[dict] = None, outputs: Optional[dict] = None,
                      task_check: Any = None) -> list[tuple[str, str, str]]:
        """``ptm validate --plan``: the same check against the scene as written (the collision world
        built from the task file, nothing simulated): ``(parameter, problem, hint)`` when it fails;
        with ``outputs``, the posture it writes (``posture_key``), as :meth:`update` does.
        ``task_check``: the whole-task test a suggested base must pass (False: no suggestion)."""
        verdict = check_reach(world, scene, cls.coerce_params(dict(params)), seed, task_check)
        if verdict.ok and verdict.posture is not None and outputs is not None:
            outputs["posture_key"] = verdict.posture
        return [] if verdict.ok else [("", f"CheckReachability: {verdict.text}", "")]


@dataclass
class ReachVerdict:
    """What :func:`check_reach` found: ``ok``, the feedback or failure ``text``, and the arm posture
    (radians) at the first pose of the first target (``posture_key``), None when not checked."""

    ok: bool
    text: str
    posture: Optional[list] = None


def check_reach(world: Any, scene: Any, params: dict[str, Any], seed: int = 0, task_check: Any = None) -> ReachVerdict:
    """``CheckReachability``'s check, in ``world`` (a
    :class:`~py_trees_manipulation.collision.world.CollisionWorld` synced to the task: the backend's
    own, or one built from the task file by ``ptm validate --plan``), with its parameter values
    ``params`` (units converted): the mechanism's travel first, then every target followed as the
    task moves, and on failure a base pose that does it all (``suggest_base``), from which the whole
    task passes ``task_check`` (the whole-task test,
    :func:`~py_trees_manipulation.trees.plan_check.whole_task_test`; None: the targets decide; False:
    no suggestion)."""
    from ..collision.base_placement import surface_under
    from ..collision.base_pose import base_frame
    from ..collision.base_search import SearchBudget, find_base_relaxing
    from ..collision.reach_checker import check_for_task
    from ..scene.reach_targets import request_from_params, targets_for, travel_bound, travel_refusal

    robots = [r.name for r in getattr(scene, "robots", ())]
    robot = params.get("arm") or (robots[0] if robots else None)
    if robot not in robots:
        return ReachVerdict(False, f"no robot {robot!r} in the scene; it has {robots or 'none'}")
    request = request_from_params(params)
    refusal = travel_refusal(request, scene)
    if refusal is not None:
        return ReachVerdict(False, refusal)
    try:
        targets = targets_for(request, scene, object_pose=world.object_pose)
        # the posture a base search would find (its margins) first, so that a base placed by
        # base_pose: auto is executed from the posture it was placed for
        margin = targets_for(request.with_margin(), scene, object_pose=world.object_pose)
    except KeyError as e:
        return ReachVerdict(False, str(e.args[0]) if e.args else str(e))
    if not targets:
        return ReachVerdict(False, "nothing to check: the scene has no door, cabinet or target object (name one)")
    q_start = world.robots[robot].joint_positions()
    results = check_for_task(world, robot, targets, margin, seed=seed)
    world.set_robot_state(robot, q_start)   # the check leaves the arm where it gave up (maybe in collision)
    base = base_frame(world, robot)
    bad = [r for r in results if not r.ok]
    if not bad:
        posture = ([round(float(v), 6) for v in results[0].configurations[0]]
                   if results and results[0].configurations else None)
        return ReachVerdict(True, f"{len(results)} target{'s' if len(results) != 1 else ''} reachable from "
                                  f"{robot}'s base at {_where(base)}: "
                                  + ", ".join(f"{r.target.name} ({r.samples} poses)" for r in results), posture)
    text = f"{bad[0].describe()} (from {robot}'s base at {_where(base)})"
    bound = travel_bound(bad[0], scene)
    if bound is not None:
        text += f"; {bound}"
    if params.get("suggest_base", True) and task_check is not False and not getattr(bad[0].failure, "blocked", False):
        from ..collision.base_placement import task_accept

        placement = find_base_relaxing(
            world, robot, lambda probe: targets_for(request.with_margin() if probe else request, scene,
                                                    object_pose=world.object_pose),
            surface_under(world, scene, robot), seed=seed, budget=SearchBudget(SUGGEST_BUDGET),
            accept=task_accept(task_check, scene, robot))
        text += "; " + base_suggestion(placement, robots.index(robot), "every target is reachable")
    return ReachVerdict(False, text)


def base_suggestion(placement: Any, index: int, what: str) -> str:
    """The fix a reach failure gives: ``"{what} from a base at (x, y, z) facing N deg: --set
    'scene.robots.{index}.base_pose=...' (or base_pose: auto)"``, or why no base was found
    (``placement``: a :class:`~py_trees_manipulation.collision.reachability.BasePlacement`)."""
    if not placement.ok:
        return f"and {placement.failure}"
    spec = placement.base_pose_spec()
    pos = ", ".join(f"{v:g}" for v in spec["position"])
    return (f"{what} from a base at {_where(placement.pose)}: --set 'scene.robots.{index}.base_pose={{position: "
            f"[{pos}], rpy_deg: [0, 0, {spec['rpy_deg'][2]:g}]}}' (or base_pose: auto)")


def requests_from_tree(tree: Any) -> list:
    """The reach requests of a loaded tree (a :class:`~py_trees_manipulation.trees.spec.NodeSpec`):
    one per ``CheckReachability`` node, from its parameter values (literal once the file is loaded), as
    :class:`~py_trees_manipulation.scene.reach_targets.ReachRequest` s (``base_pose: auto`` places the
    robot by them)."""
    nodes = [n for n in tree.walk() if n.type == CheckReachability.__name__] if tree is not None else []
    if not nodes:   # (most trees: the reach targets' module is not imported)
        return []
    from . import registry
    from ..scene.reach_targets import CHECK_BEHAVIOUR, request_from_params

    cls = registry.lookup(CHECK_BEHAVIOUR)
    out = []
    for node in nodes:
        if node.type != CHECK_BEHAVIOUR or cls is None:
            continue
        try:
            params = cls.coerce_params(dict(node.params))
        except ValueError:
            continue
        out.append(request_from_params(params))
    return out
