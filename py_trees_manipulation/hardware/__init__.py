"""Hardware backend: run task trees on a ROS robot over rosbridge, and a robot stand-in to test it.

- :mod:`.robotfile`: the YAML robot file (host, port, timeouts, ROS names per arm and gripper).
- :mod:`.rosbridge`: :class:`~.rosbridge.HardwareBackend` (roslibpy client), with its connection
  (:mod:`.connection`), ROS 1 and ROS 2 action clients (:mod:`.actions`), goal bookkeeping
  (:mod:`.goals`) and arms, grippers, object poses (:mod:`.resources`).
- :mod:`.robot_server`: :class:`~.robot_server.RobotStandIn` (``ptm serve``): the simulator behind
  a rosbridge v2 websocket with PR2 gripper sensor action names.
- :mod:`.convert`: message translation both ends share.

``ptm run TASK --backend hardware --robot ROBOT.yaml`` calls :func:`make_hardware_backend`, which
refuses (ValueError, exit code 2) a tree that needs a sim-only behaviour or an action the robot file
does not offer, before connecting. See docs/hardware.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from .robotfile import RobotConfig

_ROBOTFILE_NAMES = ("RobotConfig", "RobotFileError", "load_robot_file")


def __getattr__(name: str) -> Any:
    # the robot file's names on first use (PEP 562): ``ptm --help`` loads this package for its
    # subcommands and must not load the robot file's stack
    if name in _ROBOTFILE_NAMES:
        from . import robotfile

        value = getattr(robotfile, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class TreeRefused(ValueError):
    """The tree cannot run on this robot (sim-only behaviour, or an action the robot does not offer)."""


def check_tree(task: Any, cfg: RobotConfig, planned_arms: Any = (), scene_robots: Any = (),
               lookup: Any = None) -> None:
    """Refuse ``task`` before it starts if it cannot run on the robot described by ``cfg``.

    Args:
        lookup: behaviour type name -> class (the registry's ``lookup``, passed by the runner in its
            :class:`~py_trees_manipulation.trees.backends.BackendRequest`); a type it does not know
            is not checked.
        planned_arms: arms whose motions the client plans (see :func:`make_hardware_backend`): on
            them ``move_to_pose`` and an unguarded ``move_cartesian`` need only ``move_joints``.
        scene_robots: the robots of the task's scene (the client's collision world has them): a
            behaviour that checks geometry (``NEEDS_COLLISION_WORLD``, e.g. ``ChooseGrasp``) needs
            its arm there.

    Raises:
        TreeRefused: naming every offending node (type, name, file:line) and why.
    """
    lookup = lookup or (lambda name: None)
    offered = cfg.offered()
    problems: list[str] = []
    for node in task.tree.walk():
        if node.category != "behaviour":
            continue
        cls = lookup(node.type)
        if cls is None:
            continue
        label = f"{node.type} '{node.name or node.type}' ({node.loc})"
        if getattr(cls, "SIM_ONLY", False):
            problems.append(f"{label} is sim-only (it needs simulator ground truth)")
            continue
        if getattr(cls, "NEEDS_COLLISION_WORLD", False):
            wanted = node.params.get("arm")
            arm = wanted if isinstance(wanted, str) else next(iter(cfg.arms), None)
            if arm not in cfg.arms or arm not in set(scene_robots):
                problems.append(f"{label} needs the client's collision world: the task file's scene with a robot "
                                f"named like the robot file's arm {arm!r}")
            continue
        action = getattr(cls, "ACTION", "")
        res_kind = getattr(cls, "RESOURCE", None)
        if not action or res_kind not in ("arm", "gripper"):
            continue
        resources = offered[res_kind]
        wanted = node.params.get(res_kind)
        if isinstance(wanted, str) and wanted in resources:
            names = [wanted]
        elif isinstance(wanted, str) and not wanted.startswith("{"):
            problems.append(f"{label} uses {res_kind} {wanted!r}, which the robot file does not name "
                            f"(it has {sorted(resources)})")
            continue
        else:
            names = list(resources)[:1]
        planned = (res_kind == "arm" and names and names[0] in planned_arms
                   and (action == "move_to_pose" or (action == "move_cartesian"
                                                     and node.params.get("max_force_n") is None)))
        if not names:
            problems.append(f"{label} needs a {res_kind}; the robot file has none")
        elif action not in resources[names[0]] and not planned:
            problems.append(f"{label} needs action {action!r} on {res_kind} {names[0]!r}, which the robot file "
                            f"{cfg.file} does not offer (it offers {sorted(resources[names[0]])})")
    if problems:
        raise TreeRefused(f"{task.file}: cannot run on the hardware backend:\n  " + "\n  ".join(problems))


def tree_objects(task: Any) -> list[str]:
    """Object names the tree's behaviours give literally (``object: egg``), sorted."""
    names = set()
    for node in task.tree.walk():
        if node.category != "behaviour":
            continue
        v = (node.params or {}).get("object")
        if isinstance(v, str) and v and not v.startswith("{"):
            names.add(v)
    return sorted(names)


def backend_from_request(request: Any) -> Any:
    """The ``hardware`` entry of the backend registry: :func:`make_hardware_backend` for a
    :class:`~py_trees_manipulation.trees.backends.BackendRequest`.

    Raises:
        ValueError: a robot with ``base_pose: auto`` (a simulated placement) or no ``--robot``; and
            what :func:`make_hardware_backend` raises.
    """
    task = request.task
    for r in (task.scene or {}).get("robots") or ():
        bp = r.get("base_pose") if isinstance(r, dict) else None
        if bp == "auto" or (isinstance(bp, dict) and "auto" in bp):
            raise ValueError(f"robot {r.get('name')!r}: base_pose: auto places a simulated robot; on hardware give "
                             "the robot's real base pose (a sim run prints the pose it chose)")
    return make_hardware_backend(task, request.options, lookup=request.lookup)


def make_hardware_backend(task: Any, options: Any, lookup: Any = None) -> Any:
    """The hardware backend for ``ptm run --backend hardware --robot ROBOT.yaml``.

    Raises:
        ValueError: no ``--robot``; :class:`RobotFileError` (invalid robot file);
            :class:`TreeRefused` (checked before connecting);
            :class:`~.rosbridge.HardwareConnectionError` (rosbridge unreachable, servers silent).
    """
    path = getattr(options, "robot", None)
    if not path:
        raise ValueError("--backend hardware needs --robot ROBOT.yaml (see examples/robots/standin.yaml)")
    from .robotfile import load_robot_file

    cfg = load_robot_file(path)
    scene = planning_scene(task)
    check_tree(task, cfg, planned_arms=_planned_arms(scene, cfg),
               scene_robots=[r.name for r in scene.robots] if scene is not None else [], lookup=lookup)
    from .rosbridge import HardwareBackend

    return HardwareBackend(cfg, tree_objects(task), scene=scene)


def planning_scene(task: Any) -> Any:
    """The task's ``scene:`` parsed (for the client's collision world), or None without one.

    Raises:
        ValueError: an invalid scene (already reported by the loader for a validated task).
    """
    if not getattr(task, "scene", None):
        return None
    import os

    from ..scene.spec import parse_scene

    return parse_scene(task.scene, base_dir=getattr(task, "scene_dir", None)
                       or os.path.dirname(os.path.abspath(task.file)))


def _planned_arms(scene: Any, cfg: RobotConfig) -> set:
    """Arms whose motions the client plans (a robot of the scene with this name and the model's
    joints) and that offer FollowJointTrajectory: ``move_to_pose`` and ``move_cartesian`` run as
    planned trajectories on them."""
    if scene is None:
        return set()
    from ..bullet.robots import model_by_name

    out = set()
    for r in scene.robots:
        arm = cfg.arms.get(r.name)
        model = getattr(r, "description", None) or model_by_name(r.model)
        if arm is not None and model is not None and sorted(arm.joint_names) == sorted(model.arm_joint_names) \
                and "move_joints" in arm.actions:
            out.add(r.name)
    return out


__all__ = ["backend_from_request", "check_tree", "tree_objects", "make_hardware_backend", "RobotConfig", "RobotFileError", "TreeRefused", "load_robot_file"]
