"""Motion planning in the hardware client: the same checks and plans as the simulator, sent as one
FollowJointTrajectory goal.

When the task file has a ``scene:`` naming the robot file's arms (same names), the hardware backend
builds a :class:`~py_trees_manipulation.collision.world.CollisionWorld` from it (fixtures, objects,
doors, the robots' URDFs) and :class:`HardwarePlanning` answers the arm actions:

- ``move_joints`` and ``move_to_pose``: checked and planned by
  :class:`~py_trees_manipulation.collision.arm_planner.ArmMotionPlanner` on a worker thread (the
  goal is ACTIVE with feedback ``phase="planning"`` meanwhile; the robot holds still, nothing is
  sent), then sent as one ``control_msgs/FollowJointTrajectory`` goal with the timed trajectory's
  points every 20 ms (positions, velocities, time_from_start); its status, feedback and result
  become the goal's. A motion that would collide, or is out of reach, is ABORTED before anything is
  sent, with the reason.
- ``move_cartesian``: the line is checked the same way; then the robot's own ``move_cartesian``
  runs it (its force guard included) when the robot file offers it, else the checked line is sent as
  a FollowJointTrajectory (only without ``max_force_n``: a guard needs the robot's action).

The scene is synced before each plan: the arms' joints from ``joint_states``, the grippers' gaps,
the objects' poses from their topics (or blackboard keys) when the robot file has them, else where
the task file puts them, moved with the hand while held. An object counts as held while the gripper
is neither open nor shut and the object is within 2 cm of the TCP; it stays where it was released.
"""

from __future__ import annotations

import concurrent.futures
import threading
import time
from typing import Any, Optional

import numpy as np

from ..backend import BackendError
from ..msgs.actions import GoalHandle, GoalStatus
from ..collision.worker import PlanFailure
from ..msgs.motion import JointTrajectoryGoal, MotionFeedback, MotionResult, MoveJointsGoal

__all__ = ["HardwarePlanning", "FJT_POINT_PERIOD_S"]

FJT_POINT_PERIOD_S = 0.02
HOLD_PROBE_M = 0.02


class _Planned:
    """A goal planned locally: the handle the behaviour holds, the plan job, then the robot's goal."""

    def __init__(self, arm: Any, action: str, handle: GoalHandle, future: concurrent.futures.Future,
                 cancel: threading.Event, label: str):
        self.arm = arm
        self.action = action
        self.handle = handle
        self.future = future
        self.cancel = cancel
        self.label = label
        self.remote: Optional[GoalHandle] = None
        self.plan: Any = None
        self.t0 = time.perf_counter()


class HardwarePlanning:
    """Client-side planning of a :class:`~.rosbridge.HardwareBackend` (see the module docstring).

    Args:
        backend: the hardware backend.
        scene: the task's parsed :class:`~py_trees_manipulation.scene.spec.SceneSpec`.

    Attributes:
        robots: the arm names planned for (arms of the robot file that the scene has).
        plans: summaries of the motions planned (:meth:`MotionPlan.summary`), in order.
    """

    def __init__(self, backend: Any, scene: Any):
        self._backend = backend
        self.scene = scene
        self.robots = [r.name for r in scene.robots if r.name in backend.arms]
        self.plans: list[dict[str, Any]] = []
        from ..collision.worker import PlanningWorker
        from ..collision.world import CollisionWorld

        self._worker = PlanningWorker(lambda: CollisionWorld.from_scene(scene))
        self._pending: list[_Planned] = []
        self._queries: list[tuple[GoalHandle, concurrent.futures.Future]] = []
        self._held: dict[str, tuple[str, np.ndarray]] = {}   # robot -> (object, T_tcp_obj)
        self._count = 0
        self.planning_time_s = 0.0

    @property
    def world(self) -> Any:
        """The collision world (built from the task's scene when first needed)."""
        return self._worker.world

    def query(self, fn: Any, label: str = "query") -> GoalHandle:
        """Run ``fn(world, cancelled)`` on the planning worker, in the collision world synced to the
        robot's state now (joint states, gripper gaps, object poses, what the hand holds); the
        returned handle is ACTIVE until :meth:`poll` answers it with ``fn``'s value (SUCCEEDED), or
        ABORTED with the reason when ``fn`` raised ``ValueError``/``KeyError``. Nothing is sent to the
        robot. Cancelling the handle sets ``cancelled()``. (The same as
        :meth:`py_trees_manipulation.sim.planning.SimMotionPlanning.query`.)"""
        cancels: list[threading.Event] = []

        def on_cancel(h: GoalHandle) -> None:
            for c in cancels:
                c.set()
            h.set_preempted(None, "cancelled")

        handle = GoalHandle("planning_query", label, on_cancel=on_cancel)
        try:
            snap = self._snapshot()
        except (BackendError, ValueError) as e:
            handle.set_rejected(f"cannot read the robot's state: {e}")
            return handle
        future, cancel = self._worker.run(fn, lambda world: self._apply(snap, ""))
        cancels.append(cancel)
        self._queries.append((handle, future))
        handle.set_active()
        return handle

    def call_in_world(self, fn: Any) -> Any:
        """``fn(world)`` on the planning worker, the world synced to the robot's state now (joints,
        gaps, object poses); blocks until it returns and returns its result (or raises its exception)."""
        snap = self._snapshot()
        return self._worker.call(fn, lambda world: self._apply(snap, "")).result()

    def _model_names(self, robot: str) -> list[str]:
        spec = next(r for r in self.scene.robots if r.name == robot)
        from ..bullet.robots import model_by_name

        model = getattr(spec, "description", None) or model_by_name(spec.model)
        return list(model.arm_joint_names) if model is not None else []

    def _to_model(self, arm: Any, q_file: Any) -> list[float]:
        """Joint positions in the robot file's order -> the model's order."""
        names = list(arm.joint_names)
        return [float(q_file[names.index(j)]) for j in self._model_names(arm.name)]

    def handles(self, arm: Any, action: str, goal: Any) -> bool:
        """True when this goal is planned here rather than sent to the robot as is: the arm is a
        robot of the scene with the same joint names, and the robot offers what the plan needs."""
        if arm.name not in self.robots or action not in ("move_joints", "move_to_pose", "move_cartesian"):
            return False
        if sorted(self._model_names(arm.name)) != sorted(arm.joint_names):
            return False
        offered = arm.actions
        if action == "move_cartesian":
            return "move_cartesian" in offered or ("move_joints" in offered
                                                   and getattr(goal, "max_force_n", None) is None)
        return "move_joints" in offered

    # ---- submit (tree thread) ----------------------------------------------------------------------
    def submit(self, arm: Any, action: str, goal: Any) -> GoalHandle:
        """Start planning ``goal``; returns the goal's handle at once (ACTIVE, "planning")."""
        from ..collision.worker import planner_label, request_from_goal

        for p in list(self._pending):  # one goal at a time per arm, as on the robot
            if p.arm is arm and not p.handle.done:
                p.handle.cancel()
        handle = GoalHandle(action, goal, on_cancel=lambda h: self._on_cancel(h))
        try:
            start = self._to_model(arm, arm.joint_positions())
            goal_q = self._to_model(arm, goal.positions) if action == "move_joints" and isinstance(
                goal, MoveJointsGoal) else None
            req = request_from_goal(arm.name, action, goal, start, goal_positions=goal_q)
            snap = self._snapshot()
        except (TypeError, ValueError, BackendError) as e:
            handle.set_rejected(f"invalid {action} goal: {e}")
            return handle
        self._count += 1
        req.seed = self._count
        req.named_configurations = {k: self._to_model(arm, v) for k, v in arm.named_configurations.items()}
        future, cancel = self._worker.submit(req, lambda world: self._apply(snap, arm.name))
        p = _Planned(arm, action, handle, future, cancel, planner_label(req))
        self._pending.append(p)
        handle.set_active()
        self._feedback(p)
        return handle

    def _on_cancel(self, handle: GoalHandle) -> None:
        for p in self._pending:
            if p.handle is handle:
                p.cancel.set()
                if p.remote is not None and not p.remote.done:
                    p.remote.cancel()
                    return  # the robot's answer (PREEMPTED) finishes the goal
        handle.set_preempted(None, "cancelled")

    def _feedback(self, p: _Planned) -> None:
        tcp = p.arm._tcp.copy() if getattr(p.arm, "_tcp", None) is not None else np.eye(4)  # no poll: we are in it
        p.handle.publish_feedback(MotionFeedback(tcp_pose=tcp, distance_m=float("nan"), progress=0.0,
                                                 phase="planning", planner=p.label,
                                                 planning_time_s=time.perf_counter() - p.t0))

    # ---- the scene (tree thread reads, worker applies) ------------------------------------------------
    def _snapshot(self) -> dict[str, Any]:
        be = self._backend
        joints, gaps, poses = {}, {}, {}
        for name in self.robots:
            try:
                joints[name] = self._to_model(be.arms[name], be.arms[name].joint_positions())
            except (BackendError, ValueError):
                pass
            g = be.grippers.get(name)
            if g is not None:
                try:
                    gaps[name] = float(g.gap_m())
                except BackendError:
                    pass
        for obj in sorted(o.name for o in self.scene.objects):
            try:
                poses[obj] = np.asarray(be.world.object_pose(obj), dtype=float)
            except (KeyError, BackendError, ValueError):
                pass
        return {"joints": joints, "gaps": gaps, "poses": poses}

    def _apply(self, snap: dict[str, Any], planning_for: str) -> None:
        w = self.world
        for name, q in snap["joints"].items():
            gap = snap["gaps"].get(name)
            w.set_robot_state(name, q, fingers=None if gap is None else (gap / 2, gap / 2))
        for obj, T in snap["poses"].items():
            if obj in w.bodies and not any(h[0] == obj for h in self._held.values()):
                w.set_object_pose(obj, T)
        for name in list(snap["joints"]):
            self._update_held(name, snap["gaps"].get(name))

    def _update_held(self, robot: str, gap: Optional[float]) -> None:
        """Attach what the hand holds (gripper neither open nor shut, an object at the TCP); release
        it (where it is now) when the gripper opened or shut."""
        w = self.world
        r = w.robots[robot]
        open_gap = float(r.model.max_gap_m)
        holding = gap is not None and 0.002 < gap < open_gap - 0.005
        T_tcp = w.tcp_pose(robot)
        if robot in self._held:
            obj, T_rel = self._held[robot]
            w.set_object_pose(obj, T_tcp @ T_rel)
            if not holding:
                del self._held[robot]
                w.detach(robot)
            elif w.attached(robot) != obj:
                w.attach(robot, obj, T_rel)
            return
        w.detach(robot)
        if not holding:
            return
        for body, _ in w.probe_bodies(T_tcp[:3, 3], HOLD_PROBE_M):
            name = w.names.get(body)
            if name in w.objects:
                from ..geometry.poses import invert

                T_rel = invert(T_tcp) @ w.object_pose(name)
                self._held[robot] = (name, T_rel)
                w.attach(robot, name, T_rel)
                return

    # ---- progress (tree thread, from HardwareBackend.poll) --------------------------------------------
    def poll(self) -> None:
        """Send the plans that are ready, mirror the robot's goals onto the behaviours' handles,
        answer the queries that are done."""
        for handle, future in list(self._queries):
            if handle.done:
                self._queries.remove((handle, future))
            elif future.done():
                self._queries.remove((handle, future))
                outcome = future.result()
                if isinstance(outcome, PlanFailure):
                    handle.set_aborted(None, outcome.text)
                else:
                    handle.set_succeeded(outcome, "answered")
        for p in list(self._pending):
            if p.handle.done and (p.remote is None or p.remote.done):
                self._pending.remove(p)
                continue
            if p.remote is None:
                if not p.future.done():
                    self._feedback(p)
                    continue
                outcome = p.future.result()
                if p.handle.done:  # cancelled while planning
                    continue
                if isinstance(outcome, PlanFailure):
                    self.planning_time_s += outcome.planning_time_s
                    p.handle.set_aborted(None, outcome.text)
                    self._log(p.arm.name, f"{p.action} ({p.label}) refused: {outcome.text}",
                              {"robot": p.arm.name, "action": p.action, "ok": False, "planner": p.label,
                               "planning_time_s": round(outcome.planning_time_s, 6), "reason": outcome.text})
                    continue
                self._send(p, outcome)
            self._mirror(p)

    def _log(self, robot: str, text: str, fields: dict[str, Any]) -> None:
        """An event for the run log (``source: arm/<robot>``, with ``motion_plan``)."""
        be = self._backend
        be._events.append({"time_s": round(be.now(), 6), "source": f"arm/{robot}", "text": text,
                           "motion_plan": fields})

    def _send(self, p: _Planned, plan: Any) -> None:
        p.plan = plan
        self.planning_time_s += plan.planning_time_s
        s = plan.summary()
        r = self.world.robots[p.arm.name]
        s.update(action=p.action, ok=True, joint_names=list(r.arm_joint_names),
                 lower=[round(float(v), 6) for v in r.lower], upper=[round(float(v), 6) for v in r.upper],
                 velocity_limits=[round(float(v), 6) for v in r.velocity_limits])
        self.plans.append(s)
        self._log(p.arm.name, plan.describe(p.action), s)
        arm = p.arm
        if p.action == "move_cartesian" and "move_cartesian" in arm.actions:
            p.remote = arm._clients["move_cartesian"].send(p.handle.goal)
            return
        traj = plan.trajectory
        step = max(1, int(round(FJT_POINT_PERIOD_S / traj.dt)))
        idx = sorted(set(range(step - 1, len(traj.times), step)) | {len(traj.times) - 1})
        if not idx:
            p.handle.set_succeeded(MotionResult(np.eye(4), 0.0), "already there")
            return
        # in the model's joint order, named: the controller matches the names
        goal = JointTrajectoryGoal(self._model_names(arm.name), traj.times[idx], traj.positions[idx],
                                   traj.velocities[idx])
        p.remote = arm._clients["move_joints"].send(goal)
        # the collision world follows the plan: the robot (and what it holds) at its end
        w = self.world
        w.set_robot_state(arm.name, plan.goal)
        held = self._held.get(arm.name)
        if held is not None:
            w.set_object_pose(held[0], w.tcp_pose(arm.name) @ held[1])

    def _mirror(self, p: _Planned) -> None:
        r = p.remote
        if r is None:
            return
        if r.status == GoalStatus.ACTIVE:
            p.handle.set_active()
        fb = r.feedback
        if isinstance(fb, MotionFeedback):
            fb.phase, fb.planner = "executing", (p.plan.planner or p.plan.mode) if p.plan is not None else ""
            if p.plan is not None:
                fb.plan, fb.note = p.plan.source, p.plan.note
            p.handle.publish_feedback(fb)
        if not r.done:
            return
        result = r.result
        guard = getattr(p.plan, "guard", None)
        if (r.status == GoalStatus.SUCCEEDED and guard is not None and isinstance(result, MotionResult)
                and result.stopped_on_contact):
            early = guard.early_stop(float(result.position_error_m))
            if early:   # the same judgement as the simulator's (GuardedApproach.early_stop)
                p.handle.set_aborted(result, f"{r.text}; {early}")
                return
        if r.status == GoalStatus.SUCCEEDED:
            p.handle.set_succeeded(result, r.text)
        elif r.status == GoalStatus.ABORTED:
            p.handle.set_aborted(result, r.text)
        elif r.status in (GoalStatus.PREEMPTED, GoalStatus.RECALLED):
            p.handle.set_preempted(result, r.text or "cancelled")
        elif r.status == GoalStatus.REJECTED:
            p.handle.set_rejected(r.text)
        else:
            p.handle.set_lost(r.text)

    def metrics(self) -> dict[str, Any]:
        """``planning_time_s`` (wall time spent planning) and ``planned_motions`` once a motion was planned."""
        if not self._count:
            return {}
        return {"planning_time_s": round(self.planning_time_s, 4), "planned_motions": self._count,
                **self._worker.kept_metrics()}

    def close(self) -> None:
        """Cancel the plans still running, stop the worker, free the world."""
        for p in self._pending:
            p.cancel.set()
        for handle, _ in self._queries:
            if not handle.done:
                handle.cancel()
        self._worker.close()
