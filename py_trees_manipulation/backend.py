"""The backend seam: what a behaviour may ask of a robot, simulated or real.

A backend owns *resources* (arms and grippers) that run *actions* with actionlib semantics, a
*world* that answers object queries, and a *clock*. Behaviours get the backend through
``tree.setup(backend=...)`` and never read the wall clock: they use :meth:`Backend.now`.

Action names (the same on every backend):

========================  =========================================  ==========================
resource                  action                                     goal message
========================  =========================================  ==========================
``arms[name]``            ``move_to_pose``                           :class:`~.msgs.motion.MoveToPoseGoal`
``arms[name]``            ``move_cartesian``                         :class:`~.msgs.motion.MoveCartesianGoal`
``arms[name]``            ``move_joints``                            :class:`~.msgs.motion.MoveJointsGoal`
``grippers[name]``        ``gripper_action``                         :class:`~.msgs.motion.Pr2GripperCommand`
``grippers[name]``        ``find_contact``, ``force_servo``,         PR2 gripper sensor commands
                          ``slip_servo``, ``grab``, ``release``,     (:mod:`.msgs.gripper_sensor`)
                          ``event_detector``
========================  =========================================  ==========================
"""

from __future__ import annotations

from typing import Any, Mapping, Optional, Protocol, runtime_checkable

import numpy as np

from .msgs.actions import GoalHandle


class BackendError(RuntimeError):
    """A backend cannot do what was asked (unknown resource, lost connection, closed backend)."""


@runtime_checkable
class ActionResource(Protocol):
    """An arm or a gripper: something that runs actions.

    Attributes:
        name: the resource's name in the scene (e.g. ``"panda"``).
        actions: the action names it serves.
    """

    name: str
    actions: frozenset[str]

    def send_goal(self, action: str, goal: Any) -> GoalHandle:
        """Start ``action`` with ``goal``; never blocks. An unknown action returns a REJECTED handle."""
        ...


class ArmResource(ActionResource, Protocol):
    """An arm: actions plus its state."""

    joint_names: list[str]
    named_configurations: dict[str, list[float]]

    def tcp_pose(self) -> np.ndarray:
        """(4, 4) TCP pose, world frame, metres."""
        ...

    def joint_positions(self) -> list[float]:
        """Arm joint positions, radians, ``joint_names`` order."""
        ...


class GripperResource(ActionResource, Protocol):
    """A gripper: actions plus its state."""

    def gap_m(self) -> float:
        """Finger gap, metres."""
        ...


class World(Protocol):
    """Object queries. In the simulator these are ground truth; on hardware, a perception topic."""

    def object_names(self) -> list[str]: ...

    def object_pose(self, name: str) -> np.ndarray:
        """(4, 4) pose of the object's base frame, world frame, metres. Raises KeyError if unknown."""
        ...


@runtime_checkable
class Backend(Protocol):
    """What every backend provides: resources, world, clock, metrics.

    Attributes:
        name: ``"sim"``, ``"hardware"`` or ``"fake"``.
        arms, grippers: resources by name.
        world: object queries.
        scene: (optional) the task's parsed scene
            (:class:`~py_trees_manipulation.scene.spec.SceneSpec`) the backend was built with, or
            None: what the tree was told the world is (objects, their grasp sets and faces). The
            simulator and the hardware backend both have it, so planning services that read the
            scene (grasp choice, reachability, regrasp planning) are the same on both.
    """

    name: str
    arms: Mapping[str, Any]
    grippers: Mapping[str, Any]
    world: Any

    def now(self) -> float:
        """Backend clock, seconds since the backend started (sim time in the simulator)."""
        ...

    def advance(self, dt: float) -> None:
        """Let ``dt`` seconds of backend time pass (sim: step physics and controllers; hardware: wait)."""
        ...

    def metrics(self) -> dict[str, Any]:
        """Run metrics for the summary (``object_lift_m``, ``object_dropped``, ...)."""
        ...

    def close(self) -> None:
        """Release the backend. Idempotent. No command is sent after this."""
        ...


class PlanningService(Protocol):
    """What a backend that plans arm motions offers behaviours that check geometry before moving
    (grasp choice, regrasp checks): ``backend.motion_planning`` (see :func:`planning_service`).

    The simulator's is its ``motion_planning`` extension
    (:class:`~py_trees_manipulation.sim.planning.SimMotionPlanning`); the hardware client's is
    :class:`~py_trees_manipulation.hardware.planning.HardwarePlanning` (a task with a scene). Both
    answer queries on the one thread that owns their
    :class:`~py_trees_manipulation.collision.world.CollisionWorld`, synced first to the current state.

    Attributes:
        scene: the task's parsed scene (:class:`~py_trees_manipulation.scene.spec.SceneSpec`):
            objects with their grasp sets, robots with their descriptions.
    """

    scene: Any

    def query(self, fn: Any, label: str = "query") -> GoalHandle:
        """Run ``fn(world, cancelled) -> value`` in the synced collision world; the handle SUCCEEDS
        with the value as its ``result`` (ABORTED with the text when ``fn`` raised ValueError or
        KeyError). Never blocks the tick: the simulator answers in its next ``advance``, before any sim
        time passes; the hardware client in a later ``poll``."""
        ...

    def call_in_world(self, fn: Any) -> Any:
        """``fn(world) -> value`` in the collision world synced to the backend's state now, on its
        worker thread; blocks until it returns (the simulator's clock stands still) and returns the
        value or raises its exception. For checks a behaviour needs before it acts (reachability,
        regrasp planning with geometry)."""
        ...


def planning_service(backend: Any) -> Optional[PlanningService]:
    """The backend's :class:`PlanningService` (``backend.motion_planning``), or None when it has none
    (the fake backend; a hardware run without a scene)."""
    return getattr(backend, "motion_planning", None) if backend is not None else None


def resolve_resource(resources: Mapping[str, Any], name: Optional[str], kind: str) -> Any:
    """The resource called ``name``, or the only/first one when ``name`` is None.

    Raises:
        BackendError: no such resource; the message lists the ones that exist.
    """
    if not resources:
        raise BackendError(f"the backend has no {kind}s")
    if name is None:
        return next(iter(resources.values()))
    if name not in resources:
        raise BackendError(f"no {kind} named {name!r}; the backend has {sorted(resources)}")
    return resources[name]
