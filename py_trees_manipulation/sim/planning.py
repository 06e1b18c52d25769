"""Collision-aware arm motions in the simulator: ``move_joints``, ``move_to_pose``, ``move_cartesian``
(and ``follow_joint_trajectory``, a timed trajectory followed as given, what a planned motion sent
to a robot is).

The extension ``motion_planning`` (``backend.extensions["motion_planning"]``, built for every scene)
serves the three arm actions of every :class:`~.backend.SimArm`. A goal is answered in two phases:

1. **Planning.** The goal is checked (and a joint or pose goal planned when needed) by
   :class:`~py_trees_manipulation.collision.arm_planner.ArmMotionPlanner` in the extension's own
   :class:`~py_trees_manipulation.collision.world.CollisionWorld`, on a worker thread: the behaviour
   stays RUNNING with feedback ``phase="planning"``. The world is synced to the true poses of every
   body, every robot's joints and the doors' joints when the goal arrives, and the object a robot
   holds (two finger links touching it, or GraspFix's attachment) is attached to its hand. **Sim time
   does not advance while a motion is planned**: :meth:`SimBackend.advance` first waits (wall clock)
   for the plan, stepping no physics meanwhile, so a run gives the same result however long planning
   takes (``SimBackend.clock_hold_wait_s`` bounds that wait to let the tree tick at a frozen time).
2. **Execution.** The timed trajectory (ruckig, or the Cartesian line) is tracked at 1 kHz by the
   simulator's joint-trajectory execution; a force-guarded line still stops on contact. A goal that
   cannot be done without a collision is ABORTED before anything moves, with the reason.

Scene section ``motion_planning`` (optional): ``padding_m`` (0.01: clearance kept from the
environment, m), ``max_step_rad`` (0.01: resolution of path checks, rad of joint-space distance).

Metrics (``SimBackend.metrics()``, once a motion was checked): ``planning_time_s`` (wall time spent
planning, summed over the run), ``planned_motions`` (motions checked), ``min_clearance_m`` (the
smallest distance, measured in the simulator every 10 ms of every executed motion, between the moving
robot's links or its held object and any other body, the contacts each motion allows excluded;
capped at 0.25 m). Events: one per motion, ``source="arm/<robot>"``, with a ``motion_plan`` field
(:meth:`~py_trees_manipulation.collision.arm_planner.MotionPlan.summary` plus the executed
clearance when the motion ends).
"""

from __future__ import annotations

from ..bullet import _quiet_import  # noqa: F401  (first: pybullet's import banner)

import concurrent.futures
import math
import threading
import time
import weakref
from typing import Any, Callable, Optional

import numpy as np
import pybullet as pb

from ..geometry.poses import Pose
from ..msgs.actions import GoalHandle
from ..msgs.motion import JointTrajectoryGoal, MotionFeedback, MotionResult, MoveJointsGoal
from .arm import SimArm, _JointTrajectory
from .backend import SimBackend
from .extensions import register_extension
from .resources import _Execution
from ..scene.sections.motion_planning import MotionPlanningSettings, parse_motion_planning  # noqa: F401  (the scene section)

__all__ = ["MotionPlanningSettings", "SimMotionPlanning", "CLEARANCE_RANGE_M"]

CLEARANCE_RANGE_M = 0.25
CLEARANCE_EVERY_STEPS = 10
#: the clearance monitor asks Bullet's broadphase which bodies are near the arm first when the scene
#: has more other bodies than this (fewer: one distance query per body is cheaper)
BROADPHASE_MIN_BODIES = 8


def _fmt(v: Any) -> str:
    return "(" + ", ".join(f"{x:.2f}" for x in v) + ")"


# ================================================================================================
# Executions
# ================================================================================================
def _done_within(future: concurrent.futures.Future, timeout: Optional[float]) -> bool:
    """Wait up to ``timeout`` seconds (wall; None: as long as it takes) for ``future``; True when it
    is done (with a result or an exception: the caller reads which)."""
    try:
        future.result(timeout=timeout)
    except concurrent.futures.TimeoutError:
        return False
    except Exception:
        return True
    return True


class _WorkerJob:
    """Work for the planning worker that runs when the backend first waits for it (see
    :class:`_Planning`): handed over once, never after it was halted; ``submit(now)`` hands it over
    and returns its future and cancel flag."""

    def _init_job(self, submit: Callable[..., tuple[concurrent.futures.Future, threading.Event]]) -> None:
        self._submit = submit
        self.future: Optional[concurrent.futures.Future] = None
        self.cancel_flag: Optional[threading.Event] = None
        self._stopped = False

    def start(self, now: bool = False) -> None:
        """Hand it to the worker (once; not after it was halted); ``now``: run it on this thread
        when the worker is idle (:meth:`~py_trees_manipulation.collision.worker.PlanningWorker.submit`)."""
        if self.future is None and not self._stopped:
            self.future, self.cancel_flag = self._submit(now=now)

    def wait(self, timeout: Optional[float]) -> bool:
        """Start it if it is not yet (``timeout`` None: on this thread), and wait up to ``timeout``
        seconds (wall; None: until it is done) for it; True when it is done (or halted before it
        started)."""
        self.start(now=timeout is None)
        return self.future is None or _done_within(self.future, timeout)

    def _halt(self) -> None:
        """Never start it, or set the cancel flag the running job checks."""
        self._stopped = True
        if self.cancel_flag is not None:
            self.cancel_flag.set()


class _Planning(_WorkerJob, _Execution):
    """A goal being planned on the worker thread. ``holds_clock``: the backend steps no physics
    while it runs; :meth:`resolve` swaps in the trajectory execution (or aborts the goal).

    The request is planned when the backend first waits for it (:meth:`wait`, from
    ``SimBackend.advance``), not when the goal arrives in the middle of a tick: the tree's thread
    and the worker never run Python at the same time (each GIL hand-over costs up to the 5 ms switch
    interval on a busy machine), and the tick stays free of the worker's start-up. A backend that
    waits as long as it takes (``clock_hold_wait_s`` None, the default) has it planned on its own
    thread (no hand-over to the worker and back); one that waits a bounded time (the robot
    stand-in, a live viewer) lets the worker plan while the tree ticks at a frozen time. The plan's
    inputs (the scene snapshot, the seed) are taken when the goal arrives, so the plan is the same."""

    holds_clock = True

    def __init__(self, arm: SimArm, handle: GoalHandle, submit: Callable[..., tuple[concurrent.futures.Future, threading.Event]],
                 label: str, target: Pose, start_execution: Callable[[Any], Optional[_Execution]],
                 on_failure: Optional[Callable[[Any], None]] = None):
        super().__init__(arm, handle)
        self.on_failure = on_failure
        self.arm = arm
        self._init_job(submit)
        self.label = label
        self.target = target
        self.start_execution = start_execution
        self.t0 = time.perf_counter()
        # no physics step runs while planning: the TCP stays where it is
        self._tcp = arm.tcp_pose()
        self._distance = float(np.linalg.norm(self._tcp[:3, 3] - target[:3, 3]))

    def step(self) -> None:  # physics does not run while planning (see SimBackend.advance)
        pass

    def resolve(self) -> None:
        """The plan is done: start executing it, or abort the goal with the reason."""
        arm = self.arm
        from ..collision.worker import PlanFailure

        if self.future is None:  # stopped before it started
            return
        outcome = self.future.result()  # the worker's job never raises
        if arm._active is not self:
            return
        if isinstance(outcome, PlanFailure):
            if self.on_failure is not None:
                self.on_failure(outcome)
            tcp = arm.tcp_pose()
            arm._active = None
            arm.backend._dirty = True
            self.handle.set_aborted(MotionResult(tcp, float(np.linalg.norm(tcp[:3, 3] - self.target[:3, 3]))),
                                    outcome.text)
            return
        ex = self.start_execution(outcome)
        arm._active = ex
        arm.backend._dirty = True
        if ex is not None:
            ex.publish_feedback()

    def publish_feedback(self) -> None:
        self.handle.publish_feedback(MotionFeedback(
            tcp_pose=self._tcp.copy(), distance_m=self._distance, progress=0.0,
            phase="planning", planner=self.label, planning_time_s=time.perf_counter() - self.t0))

    def cancel(self) -> None:
        """Stop the plan: never started, or cancelled at the planner's next check."""
        self._halt()

    def stop(self) -> Any:
        self.cancel()
        self.arm.hold()
        tcp = self.arm.tcp_pose()
        return MotionResult(tcp, float(np.linalg.norm(tcp[:3, 3] - self.target[:3, 3])))


class _CheckedTrajectory(_JointTrajectory):
    """The joint-trajectory execution plus the executed clearance, measured every 10 ms."""

    def __init__(self, arm: SimArm, handle: GoalHandle, plan: Any, monitor: "_ClearanceMonitor",
                 ext: "SimMotionPlanning", **kwargs: Any):
        traj = plan.trajectory
        super().__init__(arm, handle, traj.positions, traj.velocities, **kwargs)
        self.plan = plan
        self.monitor = monitor
        self.ext = ext
        self.count = 0

    def step(self) -> None:
        super().step()
        self.count += 1
        if self.count % CLEARANCE_EVERY_STEPS == 0 and not self.handle.done:
            self.monitor.sample()

    def _end(self, success: bool, text: str, stopped_on_contact: bool = False) -> None:
        guard = getattr(self.plan, "guard", None)
        if success and stopped_on_contact and guard is not None:
            early = guard.early_stop(float(np.linalg.norm(self.arm.tcp_pose()[:3, 3] - self.target_pose[:3, 3])))
            if early:
                success, text = False, f"{text}; {early} (touching: {self.arm.touching() or 'nothing'})"
        self.monitor.sample()
        self.ext._executed(self.arm, self.plan, self.monitor, text)
        super()._end(success, text, stopped_on_contact)

    def publish_feedback(self) -> None:
        super().publish_feedback()
        fb = self.handle.feedback
        if isinstance(fb, MotionFeedback):
            fb.phase = "executing"
            fb.planner = self.plan.planner or self.plan.mode
            fb.planning_time_s = self.plan.planning_time_s
            fb.plan, fb.note = self.plan.source, self.plan.note

    def stop(self) -> Any:
        self.ext._executed(self.arm, self.plan, self.monitor, "stopped")
        return super().stop()


class _ClearanceMonitor:
    """Smallest distance between the moving robot (and its held object) and every other body, in the
    simulator's own client, the plan's allowed and relaxed pairs excluded."""

    def __init__(self, backend: SimBackend, arm: SimArm, plan: Any, world: Any):
        c = backend.client
        self.client = c
        self.robot = arm.robot.body
        rb = world._robots[arm.name]
        self.moving = {j for j in rb.moving}
        self.moving_shapes = sorted(j for j in rb.moving if j in rb.collidable)
        self.hand = set(rb.hand)
        names = backend._bodies
        self.others = [b for n, b in names.items() if b != self.robot]
        self.held = names.get(plan.attached) if plan.attached else None
        if self.held is not None:
            self.others = [b for b in self.others if b != self.held]
        # excluded pairs by sim ids: (side, body) or (side, body, link); side: link index or "held"
        self.skip: set = set()
        wb = world.bodies
        inv = {v: k for k, v in wb.items()}
        for side, ob, ol in [*plan.allowed.pairs, *plan.allowed.relaxed]:
            name = inv.get(ob)
            if name not in names:
                continue
            s = "held" if side[0] == "held" else side[1]
            self.skip.add((s, names[name]) if ol is None else (s, names[name], ol))
        self.min_m = CLEARANCE_RANGE_M
        self.pair = ""
        self.names = {b: n for n, b in names.items()}
        self.world_link_name = lambda body, link: backend.world.link_name(body, link)

    def _allowed(self, side: Any, body: int, link: int) -> bool:
        return (side, body) in self.skip or (side, body, link) in self.skip

    def _near(self, margin: float) -> tuple[set, set]:
        """The bodies whose broadphase boxes (Bullet's own, grown by the contact threshold) overlap
        the box of a moving link grown by ``margin`` (m), and those overlapping the held object's
        box grown by it: no other body can be within ``margin`` of them (one ``getAABB`` and one
        ``getOverlappingObjects`` per moving link: a scene's resting bodies away from the arm are
        never measured)."""
        c = self.client
        aabb, overlapping = pb.getAABB, pb.getOverlappingObjects
        near_links, near_held = set(), set()
        for out, body, link in [*((near_links, self.robot, j) for j in self.moving_shapes),
                                *([(near_held, self.held, -1)] if self.held is not None else [])]:
            lo, hi = aabb(body, link, physicsClientId=c)
            found = overlapping([v - margin for v in lo], [v + margin for v in hi], physicsClientId=c)
            for b, _ in found or ():
                out.add(b)
        return near_links, near_held

    def sample(self) -> None:
        c = self.client
        gcp = pb.getClosestPoints
        best, where = self.min_m, None
        robot, held = self.robot, self.held
        # few bodies: every one measured; many: only those the broadphase puts near (the same
        # queries in the same order for those, so the same minimum and the same pair)
        near_links, near_held = (self._near(best) if len(self.others) > BROADPHASE_MIN_BODIES else (None, None))
        for b in self.others:
            if b == held or (near_links is not None and b not in near_links):
                continue
            for p in gcp(robot, b, best, physicsClientId=c):
                if p[3] in self.moving and p[8] < best and not self._allowed(p[3], b, p[4]):
                    best, where = p[8], (self.world_link_name(robot, p[3]), b, p[4])
        if held is not None:
            for b in self.others:
                if near_held is not None and b not in near_held:
                    continue
                for p in gcp(held, b, best, physicsClientId=c):
                    if p[8] < best and not self._allowed("held", b, p[4]):
                        best, where = p[8], (self.names.get(held, "held"), b, p[4])
            for p in gcp(held, robot, best, physicsClientId=c):
                if p[4] in self.moving and p[4] not in self.hand and p[8] < best and not self._allowed("held", robot, p[4]):
                    best, where = p[8], (self.names.get(held, "held"), robot, p[4])
        if where is not None:
            self.min_m = float(best)
            self.pair = f"{where[0]} / {self.names.get(where[1], where[1])}"


class _Query(_WorkerJob):
    """A geometric query (:meth:`SimMotionPlanning.query`) on the planning worker: it holds the sim
    clock (``SimBackend.clock_holders``) until it is answered, as a motion being planned does.

    Like :class:`_Planning`, it runs when the backend first waits for it (:meth:`wait`), not when
    it is asked in the middle of a tick: with a wait as long as it takes (the default) on the
    backend's own thread, so the tick never shares the interpreter with the worker (a grasp choice
    started inside ``ChooseGrasp.initialise`` made that tick 20 ms long); with a bounded wait on the
    worker. Its input, the scene snapshot, is read when it starts: before any physics step since it
    was asked, so the state is the one it was asked in, and the tick does not pay for reading it."""

    def __init__(self, ext: "SimMotionPlanning", handle: GoalHandle,
                 submit: Callable[..., tuple[concurrent.futures.Future, threading.Event]]):
        self.ext = ext
        self.handle = handle
        self._init_job(submit)

    def stop(self) -> None:
        """Never start it, or make ``cancelled()`` true for the running query."""
        self._halt()

    def resolve(self) -> None:
        """Answer the handle: SUCCEEDED with what the query returned, or ABORTED with why not."""
        from ..collision.worker import PlanFailure

        holders = self.ext.backend.clock_holders
        if self in holders:
            holders.remove(self)
        if self.handle.done or self.future is None:
            return
        outcome = self.future.result()
        if isinstance(outcome, PlanFailure):
            self.handle.set_aborted(None, outcome.text)
        else:
            self.handle.set_succeeded(outcome, "answered")

    def cancel(self, handle: GoalHandle) -> None:
        self.stop()
        holders = self.ext.backend.clock_holders
        if self in holders:
            holders.remove(self)
        handle.set_preempted(None, "cancelled")


# ================================================================================================
# The extension
# ================================================================================================
class SimMotionPlanning:
    """Collision-aware motions of a :class:`~.backend.SimBackend` (see the module docstring).

    Attributes:
        settings: the scene's :class:`MotionPlanningSettings`.
        plans: summaries of every motion checked (planner, times, path, clearances), in order.
        world: the :class:`~py_trees_manipulation.collision.world.CollisionWorld` (built on first use).
    """

    def __init__(self, backend: SimBackend, settings: Optional[MotionPlanningSettings]):
        self._backend = weakref.ref(backend)
        self.settings = settings or MotionPlanningSettings()
        self.plans: list[dict[str, Any]] = []
        self._worker: Any = None
        self._count = 0
        self._planning_time_s = 0.0
        self._min_clearance: Optional[float] = None
        self._min_pair = ""
        self._closed = False
        for arm in backend.arms.values():
            arm.add_action("move_to_pose", self._serve_move_to_pose)
            arm.add_action("move_joints", self._serve_move_joints)
            arm.add_action("move_cartesian", self._serve_move_cartesian)
            arm.add_action("follow_joint_trajectory", _serve_follow_joint_trajectory)

    @property
    def backend(self) -> SimBackend:
        b = self._backend()
        assert b is not None
        return b

    @property
    def worker(self) -> Any:
        """The :class:`~py_trees_manipulation.collision.worker.PlanningWorker` (its world is built
        from the scene the first time a motion is planned)."""
        if self._worker is None:
            from ..collision.worker import PlanningWorker
            from ..collision.world import CollisionWorld

            b = self.backend
            scene, models = b.scene, {n: a.robot.model for n, a in b.arms.items()}
            self._worker = PlanningWorker(lambda: CollisionWorld.from_scene(
                scene, models=models, padding_m=self.settings.padding_m, max_step_rad=self.settings.max_step_rad))
        return self._worker

    @property
    def world(self) -> Any:
        """The collision world (built from the scene the first time it is needed)."""
        return self.worker.world

    @property
    def scene(self) -> Any:
        """The task's parsed scene (:class:`~.scene.SceneSpec`): objects and their grasp sets."""
        return self.backend.scene

    def query(self, fn: Callable[[Any, Callable[[], bool]], Any], label: str = "query") -> GoalHandle:
        """Run ``fn(world, cancelled)`` on the planning worker, in the collision world synced to the
        true state (bodies, joints, held objects; read when the backend next runs, before any physics
        step: the state it was asked in), and answer the returned handle with its value.

        Sim time does not pass while the query runs: it holds the clock (``SimBackend.clock_holders``)
        as a motion being planned does, and the next :meth:`SimBackend.advance` waits for it (up to
        ``clock_hold_wait_s``) and answers the handle before stepping, so the caller sees the answer
        one tick after asking, whatever the wall time it took (the same with the viewer's short
        waits: runs stay deterministic). ``fn`` raising ``ValueError``/``KeyError`` ends the handle
        ABORTED with the message. Cancelling the handle sets ``cancelled()``.

        Args:
            fn: the query: IK, collision checks, plans in the :class:`~py_trees_manipulation.collision.world.CollisionWorld`
                (its robots by name); it must leave the world as it found it apart from what the next
                sync resets (joints, poses, attachments).
            label: what the handle's ``goal`` says (for logs).
        """
        queries: list[_Query] = []
        handle = GoalHandle("planning_query", label, on_cancel=lambda h: queries[0].cancel(h))
        worker = self.worker

        def submit(now: bool = False) -> tuple[concurrent.futures.Future, threading.Event]:
            snap = self.snapshot()  # at the backend's first wait: no physics step since it was asked
            return worker.run(fn, lambda world: self.apply(snap), now=now)

        q = _Query(self, handle, submit)
        queries.append(q)
        handle.set_active()
        self.backend.clock_holders.append(q)
        return handle

    # ---- snapshot (main thread) and sync (worker thread) ------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """The true state of every body the collision world has: base poses, joint positions, what
        each robot holds. Read on the tree's thread; applied by :meth:`apply` on the worker."""
        b = self.backend
        c = b.client
        poses, joints = {}, {}
        for name, body in b._bodies.items():  # (the world itself is built on the worker, when first needed)
            poses[name] = pb.getBasePositionAndOrientation(body, physicsClientId=c)
            n = pb.getNumJoints(body, physicsClientId=c)
            if n:
                states = pb.getJointStates(body, list(range(n)), physicsClientId=c)
                joints[name] = {j: s[0] for j, s in enumerate(states)}
        held = {name: self._held_by(arm) for name, arm in b.arms.items()}
        return {"poses": poses, "joints": joints, "held": held}

    def _held_by(self, arm: SimArm) -> Optional[str]:
        b = self.backend
        gf = getattr(b, "extensions", {}).get("grasp_fix")
        if gf is not None:
            try:
                obj = gf.held_object(arm.name)
            except (KeyError, AttributeError):
                obj = None
            if obj:
                return obj
        fingers = set(arm.robot.finger_links)
        touching: dict[int, set] = {}  # body -> finger links touching it (one query for the robot)
        for p in pb.getContactPoints(bodyA=arm.robot.body, physicsClientId=b.client):
            if p[3] in fingers:
                touching.setdefault(p[2], set()).add(p[3])
        for name, body in b._objects.items():
            if len(touching.get(body, ())) >= 2:
                return name
        return None

    def apply(self, snap: dict[str, Any]) -> None:
        """Teleport the collision world to a :meth:`snapshot` and attach the held objects."""
        w = self.world
        for name, (p, q) in snap["poses"].items():
            if name in w.bodies:
                w.set_base_pq(name, p, q)
        for name, js in snap["joints"].items():
            if name in w.bodies:
                w.set_joint_positions(name, js)
        for robot in w.robots:
            w.detach(robot)
        for robot, obj in snap["held"].items():
            if obj and obj in w.objects and robot in w.robots:
                w.attach(robot, obj)

    def call_in_world(self, fn: Callable[[Any], Any]) -> Any:
        """``fn(world)`` on the planning worker, the world synced to the true state now (a
        :meth:`snapshot`); blocks until it returns (sim time stands still) and returns its result
        (or raises its exception). For checks that need the collision world (reachability)."""
        snap = self.snapshot()
        return self.worker.call(fn, lambda world: self.apply(snap)).result()

    # ---- planning -------------------------------------------------------------------------------------
    def _submit(self, arm: SimArm, handle: GoalHandle, action: str, request: Any, target: Pose,
                start_execution: Callable[[Any], Optional[_Execution]]) -> _Planning:
        from ..collision.worker import planner_label

        label = planner_label(request)
        snap = self.snapshot()
        self._count += 1
        request.seed = int(self.backend.seed) * 1000 + self._count
        request.named_configurations = dict(arm.named_configurations)
        request.dt = self.backend.dt
        worker = self.worker
        return _Planning(arm, handle, lambda now=False: worker.submit(request, lambda world: self.apply(snap), now=now),
                         label, target, start_execution, on_failure=lambda f: self._refused(arm, action, request, f))

    def _refused(self, arm: SimArm, action: str, request: Any, failure: Any) -> None:
        """A motion refused before it moved: the planning time counts, an event says why."""
        from ..collision.worker import planner_label

        self._planning_time_s += failure.planning_time_s
        label = planner_label(request)
        self._event(arm, f"{action} ({label}) refused: {failure.text}",
                    {"robot": arm.name, "action": action, "kind": request.kind, "ok": False, "planner": label,
                     "planning_time_s": round(failure.planning_time_s, 6), "reason": failure.text})

    def _event(self, arm: SimArm, text: str, fields: dict[str, Any]) -> None:
        self.backend.emit_event(f"arm/{arm.name}", text, motion_plan=fields)

    def _planned(self, arm: SimArm, plan: Any, action: str) -> None:
        """Bookkeeping of a plan that is about to run (main thread)."""
        self._planning_time_s += plan.planning_time_s
        s = plan.summary()
        s["action"] = action
        s["ok"] = True
        s["allowed_pairs"] = [list(p) for p in plan.allowed_names(self.world)]
        s["joint_names"] = list(arm.joint_names)
        s["lower"] = [round(float(v), 6) for v in arm.robot.lower]
        s["upper"] = [round(float(v), 6) for v in arm.robot.upper]
        s["velocity_limits"] = [round(float(v), 6) for v in arm.robot.velocity_limits]
        self.plans.append(s)
        self.backend.emit_event(f"arm/{arm.name}", plan.describe(action), motion_plan=s)

    def _executed(self, arm: SimArm, plan: Any, monitor: _ClearanceMonitor, how: str) -> None:
        """A checked motion ended (``how``: its result text): its clearance measured in the simulator
        goes to the metrics, its plan summary and an event."""
        if getattr(monitor, "reported", False):
            return
        monitor.reported = True  # type: ignore[attr-defined]
        if self._min_clearance is None or monitor.min_m < self._min_clearance:
            self._min_clearance = monitor.min_m
            self._min_pair = monitor.pair
        summary = getattr(monitor, "summary", None)
        if summary is not None:
            summary["executed_min_clearance_m"] = round(monitor.min_m, 5)
            summary["executed_clearance_pair"] = monitor.pair
        self.backend.emit_event(
            f"arm/{arm.name}", f"{getattr(monitor, 'action', 'motion')} {how}: executed min clearance "
            f"{monitor.min_m * 1000:.0f} mm" + (f" ({monitor.pair})" if monitor.pair else ""),
            motion_plan={"robot": arm.name, "action": getattr(monitor, "action", ""), "ok": True,
                         "executed_min_clearance_m": round(monitor.min_m, 5), "clearance_pair": monitor.pair})

    def _execution(self, arm: SimArm, handle: GoalHandle, action: str, **kwargs: Any) -> Callable[[Any], _Execution]:
        def start(plan: Any) -> _Execution:
            self._planned(arm, plan, action)
            monitor = _ClearanceMonitor(self.backend, arm, plan, self.world)
            monitor.summary, monitor.action = self.plans[-1], action  # type: ignore[attr-defined]
            return _CheckedTrajectory(arm, handle, plan, monitor, self, **kwargs)
        return start

    def _pose_at(self, arm: SimArm, q: np.ndarray) -> Pose:
        """(4, 4) TCP pose, world frame, at arm joints ``q`` (radians): in the collision world when
        the planning worker is idle (the goal's plan builds and uses that world next; the same URDF
        at the same base pose gives the shadow's pose to the last bit: tests/unit/test_startup_caches.py),
        its robot put back where it was; else on the kinematics shadow. A run whose only
        kinematics are its joint goals' poses never connects the shadow's client (issue 35)."""
        worker = self.worker
        if not worker.idle():
            return arm.forward_kinematics(q)
        world = worker.world
        saved = world.robots[arm.name].joint_positions()
        try:
            return world.tcp_pose(arm.name, q)
        finally:
            world.set_robot_state(arm.name, saved)

    # ---- servers ------------------------------------------------------------------------------------------
    def _serve_move_joints(self, arm: SimArm, handle: GoalHandle) -> Optional[_Execution]:
        from ..collision.worker import request_from_goal

        goal = handle.goal
        if not isinstance(goal, MoveJointsGoal):
            raise TypeError(f"move_joints takes a MoveJointsGoal, got {type(goal).__name__}")
        positions: Any = goal.positions
        if isinstance(positions, str):
            if positions not in arm.named_configurations:
                raise ValueError(f"unknown configuration {positions!r}; known: {sorted(arm.named_configurations)}")
            positions = arm.named_configurations[positions]
        q1 = np.asarray(positions, dtype=float)
        n = len(arm.joint_names)
        if q1.shape != (n,):
            raise ValueError(f"positions must hold {n} joint angles (radians), got {len(q1)}")
        r = arm.robot
        bad = [i for i in range(n) if not r.lower[i] - 1e-6 <= q1[i] <= r.upper[i] + 1e-6]
        if bad:
            i = bad[0]
            raise ValueError(f"{arm.joint_names[i]} target {q1[i]:.4f} rad is outside its limits "
                             f"[{r.lower[i]:.4f}, {r.upper[i]:.4f}]")
        q1 = r.clip_to_limits(q1)
        target = self._pose_at(arm, q1)
        req = request_from_goal(arm.name, "move_joints", goal, r.joint_positions(), goal_positions=q1)
        return self._submit(arm, handle, "move_joints", req, target,
                            self._execution(arm, handle, "move_joints", target_pose=target, position_tolerance_m=0.01,
                                            joint_target=q1))

    def _serve_pose_goal(self, arm: SimArm, handle: GoalHandle, action: str, *fields: str) -> Optional[_Execution]:
        """A goal to a TCP pose (``move_to_pose``, ``move_cartesian``): planned from where the arm is,
        executed to the goal's tolerance (``fields``: more of the goal's fields for the execution)."""
        from ..collision.worker import request_from_goal

        goal = handle.goal
        req = request_from_goal(arm.name, action, goal, arm.robot.joint_positions())
        target = req.target
        return self._submit(arm, handle, action, req, target,
                            self._execution(arm, handle, action, target_pose=target,
                                            position_tolerance_m=goal.position_tolerance_m,
                                            **{f: getattr(goal, f) for f in fields}))

    def _serve_move_to_pose(self, arm: SimArm, handle: GoalHandle) -> Optional[_Execution]:
        return self._serve_pose_goal(arm, handle, "move_to_pose")

    def _serve_move_cartesian(self, arm: SimArm, handle: GoalHandle) -> Optional[_Execution]:
        return self._serve_pose_goal(arm, handle, "move_cartesian", "max_force_n")

    # ---- metrics and lifetime -------------------------------------------------------------------------------
    def metrics(self) -> dict[str, Any]:
        """``planning_time_s``, ``planned_motions``, ``min_clearance_m`` (see the module docstring);
        empty before the first motion."""
        if not self.plans and self._count == 0:
            return {}
        out: dict[str, Any] = {"planning_time_s": round(self._planning_time_s, 4), "planned_motions": self._count}
        if self._min_clearance is not None:
            out["min_clearance_m"] = round(self._min_clearance, 5)
        if self._worker is not None:
            out.update(self._worker.kept_metrics())   # after a check before the run (ptm run --plan-first)
        return out

    def reset_run(self) -> None:
        """As built for the backend's new run (:meth:`SimBackend.reset`: the same scene): no plans, no
        counts, the same worker and collision world (it is synced to the scene before every plan)."""
        worker = self._worker
        self.__init__(self.backend, self.settings)  # type: ignore[misc]
        self._worker = worker
        if worker is not None and worker.kept_plans is not None:
            worker.world.kept_plans = None   # a check's plans are for the run after it

    def close(self) -> None:
        """Stop the worker (a plan running ends at its next termination check) and free the world."""
        if self._closed:
            return
        self._closed = True
        b = self._backend()
        if b is not None:
            for arm in b.arms.values():
                ex = arm._active
                if isinstance(ex, _Planning):
                    ex.cancel()
            for q in list(b.clock_holders):
                if isinstance(q, _Query):
                    q.stop()
                    b.clock_holders.remove(q)
                    if not q.handle.done:
                        q.handle.set_preempted(None, "the backend was closed")
        if self._worker is not None:
            self._worker.close()


def _serve_follow_joint_trajectory(arm: SimArm, handle: GoalHandle) -> Optional[_Execution]:
    """``follow_joint_trajectory``: track a :class:`~py_trees_manipulation.msgs.motion.JointTrajectoryGoal`
    as a robot's joint trajectory controller does (what the stand-in robot of ``ptm serve`` runs for a
    FollowJointTrajectory goal): cubic Hermite interpolation between the points (positions and
    velocities), from where the arm is at rest, sampled at the physics rate. Not collision-checked:
    the client planned it."""
    from scipy.interpolate import CubicHermiteSpline

    goal = handle.goal
    if not isinstance(goal, JointTrajectoryGoal):
        raise TypeError(f"follow_joint_trajectory takes a JointTrajectoryGoal, got {type(goal).__name__}")
    names = list(arm.joint_names)
    if list(goal.joint_names) != names:
        missing = [j for j in names if j not in goal.joint_names]
        if missing:
            raise ValueError(f"the trajectory lacks joints {missing}")
        cols = [list(goal.joint_names).index(j) for j in names]
        goal = JointTrajectoryGoal(names, goal.times, goal.positions[:, cols], goal.velocities[:, cols])
    r = arm.robot
    bad = np.nonzero((goal.positions < r.lower - 1e-6) | (goal.positions > r.upper + 1e-6))
    if len(bad[0]):
        k, j = int(bad[0][0]), int(bad[1][0])
        raise ValueError(f"point {k}: {names[j]} {goal.positions[k, j]:.4f} rad is outside its limits "
                         f"[{r.lower[j]:.4f}, {r.upper[j]:.4f}]")
    dt = arm.backend.dt
    t = np.concatenate([[0.0], goal.times])
    q = np.vstack([r.joint_positions(), goal.positions])
    qd = np.vstack([np.zeros(len(names)), goal.velocities])
    spline = CubicHermiteSpline(t, q, qd, axis=0)
    t_dense = np.arange(1, int(np.ceil(t[-1] / dt - 1e-9)) + 1) * dt
    t_dense[-1] = t[-1]
    q_final = r.clip_to_limits(goal.positions[-1])
    return _JointTrajectory(arm, handle, r.clip_to_limits(spline(t_dense)), spline(t_dense, 1),
                            arm.forward_kinematics(q_final), 0.01, joint_target=q_final)


def _factory(backend: SimBackend, settings: Optional[MotionPlanningSettings]) -> SimMotionPlanning:
    return SimMotionPlanning(backend, backend.scene.extra.get("motion_planning"))


register_extension("motion_planning", _factory)
