"""The PyBullet backend: simulated robots (any robot description) with 1 kHz physics and action servers.

:class:`SimBackend` implements :class:`py_trees_manipulation.backend.Backend`. Each backend owns its
own PyBullet physics client (DIRECT by default, GUI with ``gui=True``) plus a private DIRECT client
holding a kinematic "shadow" copy of each robot for inverse and forward kinematics, so several
backends live side by side in one process and IK never disturbs the simulated robot.

Time: :meth:`SimBackend.now` is simulation time, ``steps / physics_hz``. :meth:`SimBackend.advance`
runs whole physics steps; on every step it runs, in order: the *pre-step* hooks (gripper controllers
and the active action executions, which set motor targets), ``stepSimulation``, then the *post-step*
hooks registered with :meth:`SimBackend.add_step_hook` (grasp fix, tactile sensors). Feedback is
published once per :meth:`advance` call (i.e. once per tree tick).

Resources (named after the robot, e.g. ``arms["panda"]`` and ``grippers["panda"]``):

- :class:`SimArm` serves ``move_to_pose``, ``move_joints`` and ``move_cartesian`` through the
  ``motion_planning`` extension (:mod:`.planning`): every motion is checked for collisions in a
  planning copy of the scene (and planned with OMPL when the straight joint motion collides) before
  the robot moves, on a worker thread while sim time stands still (an execution with
  ``holds_clock``). Targets are solved by ``calculateInverseKinematics`` (null space towards the
  current configuration) and *verified by forward kinematics*: a TCP that would end farther than
  ``position_tolerance_m`` from the target ends the goal ABORTED with the distance in the text.
  Joint motions are timed by ruckig under ``velocity_scaling`` / ``acceleration_scaling`` of the
  joint limits; ``move_cartesian`` follows a straight TCP line (IK every 5 mm / 20 ms of path,
  trapezoidal speed profile at ``speed_mps``). The joints track the precomputed 1 kHz trajectory
  with POSITION_CONTROL motors limited to the joint
  torques (the description's ``effort_limits``, else the URDF's; the Panda's 87 N m, 12 N m).
- :class:`SimGripper` serves ``gripper_action`` (pr2_controllers_msgs/Pr2GripperCommand):
  ``position`` is the finger gap (m, sum of both finger joints), ``max_effort`` the force of each
  finger (N; negative means the description's ``default_force_n``, e.g. the Franka Hand's continuous
  70 N), clipped to its ``max_force_n``. As in
  PR2's gripper action (see ``reference/pr2_gripper_controller.md`` §1.6), the goal SUCCEEDS with
  ``reached_goal`` when the gap is within ``position_tolerance_m`` of the command, and is ABORTED with
  ``stalled=True`` when the fingers stop short of it (their speed toward it under 5 mm/s for 0.1 s,
  read as the new progress of the gap's closest approach to the goal, from the positions, so that a
  jittering squeeze stalls too), which is what closing on an object does; the fingers keep squeezing afterwards. A goal
  neither reached nor stalled within 10 s is aborted with the gap and squeeze in the text. (PR2 uses a 1e-6 m/s stall
  speed, which never triggers in simulation, pr2_simulator#115.)

A new goal on a resource preempts the one running there. A cancelled goal ends PREEMPTED and the
arm holds its current configuration (the gripper holds its current gap).

Extension points: :meth:`SimBackend.add_step_hook`, :meth:`SimGripper.set_controller` (a 1 kHz
gripper controller that owns the finger joints through :meth:`SimGripper.state`,
:meth:`SimGripper.command_effort` and :meth:`SimGripper.command_gap`), and ``add_action`` on arms and
grippers (e.g. the PR2 gripper sensor actions).

The backend's parts live in modules of this package (issue 37 item 6): :mod:`.extensions` (the
extension registry), :mod:`.resources` (goals on resources), :mod:`.arm`, :mod:`.gripper`,
:mod:`.world` (ground-truth queries), :mod:`.loading` (building the scene, start checks),
:mod:`.metrics` (metrics and telemetry); this module keeps the clock and stepping, events, reuse
and lifetime, and re-exports the names it used to define.
"""

from __future__ import annotations

from ..bullet import _quiet_import  # noqa: F401  (first: pybullet's import banner)

import math
import time
from typing import Any, Callable, Iterable, Optional, Sequence, Union

import numpy as np
import pybullet as pb

from ..backend import BackendError
from ..bullet.clients import ClosedOnDelete, disconnect
from ..collision.ik import IKSolution  # noqa: F401  (re-export: py_trees_manipulation.sim.IKSolution)
from ..collision.ik import pq_of_valid_pose as _pq_of_valid_pose  # noqa: F401  (tests/unit/test_sim_paths.py)
from ..scene.spec import SceneSpec, parse_scene
from .arm import SimArm, _JointTrajectory  # noqa: F401  (re-exports)
from .extensions import (_EXTENSIONS, BUILTIN_EXTENSIONS, load_builtin_extensions,  # noqa: F401  (re-exports)
                         register_extension)
from .gripper import FingerState, SimGripper, _GripperMove  # noqa: F401  (re-exports)
from .loading import (FIXTURE_ROLLING_FRICTION_M, START_FALL_M,  # noqa: F401  (re-exports)
                      _SceneLoading)
from .metrics import _RunMetrics
from .resources import _Execution, _SimResource  # noqa: F401  (re-exports)
from .world import Contact, SimWorld  # noqa: F401  (re-exports)

StepHook = Callable[["SimBackend"], None]


def _fmt(v: Iterable[float]) -> str:
    return "(" + ", ".join(f"{x:.2f}" for x in v) + ")"


class SimBackend(_SceneLoading, _RunMetrics, ClosedOnDelete):
    """PyBullet backend (see the module docstring).

    Args:
        scene: the ``scene:`` mapping of a task file, or a parsed :class:`~.scene.SceneSpec`.
        gui: open the PyBullet GUI (only one GUI per process) instead of running headless.
        seed: random seed for pose noise; overrides ``scene.seed``.
        realtime: make :meth:`advance` sleep so simulated time keeps pace with wall time.
        base_dir: folder relative URDF paths are tried against (normally the task file's folder).
        visual_shapes: load the URDFs' visual shapes (meshes, colours) in the physics client; they
            change no physics and cost a quarter of a second per Panda. ``False`` when nothing
            looks at the scene: no GUI, no run log, no 3D viewer (:meth:`scene_model` then draws
            each link's collision shapes). The kinematics shadow never loads them.
        reusable: keep the state after loading so that :meth:`reset` can start another run in the
            same physics clients (a sweep's worker; not with ``gui``).
        reach_requests: what the task must reach (:class:`~.reach_targets.ReachRequest`, from the
            tree's ``CheckReachability`` nodes), for robots with ``base_pose: auto``
            (:mod:`.base_placement`); None: everything the scene has.
        task_check: the task's whole-task test (``task_check(scene) -> None or why``: ``ptm validate
            --plan``'s checks, :func:`py_trees_manipulation.trees.plan_check.whole_task_test`): a base
            ``base_pose: auto`` chooses, and a base a behaviour's reach failure suggests, must pass it
            (kept as :attr:`task_check`); None: the reach targets decide.

    Raises:
        SceneError: invalid scene.
        BackendError: PyBullet cannot connect or a URDF fails to load.

    Attributes:
        name: ``"sim"``.
        arms, grippers: resources by robot name.
        world: :class:`SimWorld`.
        scene: the parsed :class:`~.scene.SceneSpec`.
        client: the PyBullet physics client id.
        physics_hz: physics rate, Hz.
        events: ``{"time_s", "source", "text"}`` dicts appended by the backend and its plug-ins.
        base_placements: robot name -> :class:`~py_trees_manipulation.collision.reachability.BasePlacement`
            of each ``base_pose: auto`` robot (``scene`` holds the pose chosen).
        preflight_failure: why the task cannot succeed, known before anything moves (no base
            position reaches a target), or None; the runner ends the run FAILURE with it before the
            first tick.
    """

    name = "sim"
    #: how long :meth:`advance` waits (wall clock, s) for a motion being planned before it returns
    #: without stepping (so the tree ticks again at the same sim time); None: until the plan is done,
    #: so ``advance(dt)`` always lets ``dt`` of sim time pass (the goal's first feedback already says
    #: "planning")
    clock_hold_wait_s: Optional[float] = None

    def __init__(self, scene: Union[dict, SceneSpec, None], gui: bool = False, seed: Optional[int] = None,
                 realtime: bool = False, base_dir: Optional[str] = None, visual_shapes: bool = True,
                 reusable: bool = False, reach_requests: Optional[Sequence[Any]] = None,
                 task_check: Optional[Callable[[Any], Optional[str]]] = None):
        load_builtin_extensions()  # when this module was imported on its own
        self.scene: SceneSpec = parse_scene(scene if scene is not None else {}, base_dir=base_dir)
        self.seed = self.scene.seed if seed is None else int(seed)
        self.base_placements: dict[str, Any] = {}
        #: the whole-task test a suggested base must pass (see the ``task_check`` argument)
        self.task_check = task_check
        self.preflight_failure: Optional[str] = None
        if any(r.base_auto is not None for r in self.scene.robots):
            from ..collision.base_placement import place_robots

            self.scene, self.base_placements = place_robots(self.scene, reach_requests, seed=self.seed,
                                                            task_check=task_check)
            failed = [p for p in self.base_placements.values() if not p.ok]
            if failed:
                self.preflight_failure = "; ".join(f"base_pose auto of {p.robot!r}: {p.failure}" for p in failed)
        self._placement_failure = self.preflight_failure
        self.rng = np.random.default_rng(self.seed)
        self.realtime = realtime
        self.gui = gui
        self.visual_shapes = bool(visual_shapes or gui)
        self.reusable = bool(reusable and not gui)
        self._initial_state: Optional[int] = None
        self.physics_hz = float(self.scene.physics_hz)
        self.dt = 1.0 / self.physics_hz
        self.closed = True
        self.events: list[dict[str, Any]] = []
        self._steps = 0
        self._target_time = 0.0
        self._wall0: Optional[float] = None
        self._pre_hooks: list[StepHook] = []
        self._post_hooks: list[StepHook] = []
        self._step_fns: list[Callable[[], None]] = []
        self._dirty = True
        self._monitor_every = 0
        self._loaded_grippers: set[str] = set()
        #: other work that holds the clock until it is answered (a geometric query of the
        #: ``motion_planning`` extension): objects with ``wait(timeout) -> bool`` and ``resolve()``,
        #: which removes itself from this list
        self.clock_holders: list[Any] = []
        #: resources with goals sent since the backend last ran (see ``_SimResource.send_goal``)
        self._incoming: list[Any] = []
        self._target: Optional[str] = None
        self._bodies: dict[str, int] = {}
        self._objects: dict[str, int] = {}
        self._names: dict[int, str] = {}
        self.arms: dict[str, SimArm] = {}
        self.grippers: dict[str, SimGripper] = {}
        self.world = SimWorld(self)
        self.client = pb.connect(pb.GUI if gui else pb.DIRECT)
        if self.client < 0:
            raise BackendError("PyBullet could not connect" + (" a GUI (is a display available?)" if gui else ""))
        self.closed = False
        #: the kinematics client (the robots' shadows: IK, FK), connected on the first use of a
        #: shadow (:meth:`_kinematics_client`): a run whose joint goals are posed in the collision
        #: world never connects it (issue 35)
        self._kin_client: Optional[int] = None
        try:
            self._build()
        except Exception:
            self.close()
            raise

    # ---- clock and stepping ----------------------------------------------------------------------
    def now(self) -> float:
        """Simulation time, seconds since the backend started (``steps / physics_hz``)."""
        return self._steps * self.dt

    @property
    def steps(self) -> int:
        """Physics steps done so far."""
        return self._steps

    def add_step_hook(self, fn: StepHook, before: bool = False) -> Callable[[], None]:
        """Call ``fn(backend)`` on every physics step: after ``stepSimulation`` (default) or, with
        ``before=True``, before it (with the controllers). Returns a function that removes the hook.
        Hooks run in registration order and must be cheap (1000 calls per simulated second)."""
        lst = self._pre_hooks if before else self._post_hooks
        lst.append(fn)
        self._dirty = True

        def remove() -> None:
            if fn in lst:
                lst.remove(fn)
                self._dirty = True
        return remove

    def gripper_loaded(self, gripper: Any, loaded: bool) -> None:
        """A tracked linkage gripper began (``loaded``) or stopped squeezing something: while any
        does, the constraint solver runs :data:`~.gripper.LOADED_SOLVER_ITERATIONS` iterations per
        step (at least; the scene's ``solver_iterations`` when higher), else the scene's (see
        that constant for why)."""
        from .gripper import LOADED_SOLVER_ITERATIONS

        before = bool(self._loaded_grippers)
        (self._loaded_grippers.add if loaded else self._loaded_grippers.discard)(gripper.name)
        if bool(self._loaded_grippers) != before:
            n = self.scene.solver_iterations
            if self._loaded_grippers:
                n = max(n, LOADED_SOLVER_ITERATIONS)
            pb.setPhysicsEngineParameter(numSolverIterations=n, physicsClientId=self.client)

    def _rebuild_step_fns(self) -> list[Callable[[], None]]:
        fns: list[Callable[[], None]] = []
        for g in self.grippers.values():
            if g.robot.tracked_mimics:
                fns.append(g.track_mimics)
            elif not g.model.gripper.is_linkage and len(g.robot.drive_joints) == 2:
                fns.append(g.share_pad_load)   # the coupled fingers' pads under the force limit
        for g in self.grippers.values():
            if g.controller is not None:
                fns.append(lambda g=g: g.controller.step(g))
        for h in self._pre_hooks:
            fns.append(lambda h=h: h(self))
        for r in (*self.arms.values(), *self.grippers.values()):
            if r._active is not None:
                fns.append(r._active.step)
        self._step_fns = fns
        self._dirty = False
        return fns

    def _release_clock(self, timeout: Optional[float]) -> bool:
        """Wait (wall clock, at most ``timeout`` s; None: as long as it takes) for the running
        executions that hold the clock (``holds_clock``: a motion being planned) and let each one
        resolve (start moving, or end its goal). True when none holds the clock any more."""
        holders = [r._active for r in (*self.arms.values(), *self.grippers.values())
                   if r._active is not None and getattr(r._active, "holds_clock", False)]
        holders += list(self.clock_holders)
        if not holders:
            return True
        if timeout is not None:  # a bounded wait: every holder works meanwhile (sim/planning.py _Planning)
            for ex in holders:
                start = getattr(ex, "start", None)
                if start is not None:
                    start()
        t0 = time.monotonic()
        for ex in holders:
            left = None if timeout is None else max(0.0, timeout - (time.monotonic() - t0))
            if ex.wait(left):
                ex.resolve()
        if self.realtime and self._wall0 is not None:
            self._wall0 += time.monotonic() - t0  # sim time stood still: so does the real-time pacing
        return not self.clock_holders and not any(
            r._active is not None and getattr(r._active, "holds_clock", False)
            for r in (*self.arms.values(), *self.grippers.values()))

    def accept_goals(self) -> None:
        """Let the servers take the goals sent since the backend last ran (they are PENDING until
        then; ``advance`` and ``step`` do this first). No physics step passes. Idempotent."""
        incoming = self._incoming
        while incoming:
            incoming.pop(0)._accept()

    def step(self, n: int = 1) -> None:
        """Run ``n`` physics steps (controllers, ``stepSimulation``, post-step hooks). Takes the goals
        sent since the last call, then waits for any motion still being planned (sim time does not
        pass while planning)."""
        if self.closed:
            raise BackendError("the backend is closed")
        if self._incoming:
            self.accept_goals()
        self._release_clock(timeout=None)
        c = self.client
        step_sim = pb.stepSimulation
        post = self._post_hooks
        fns = self._rebuild_step_fns() if self._dirty else self._step_fns
        for _ in range(n):
            for f in fns:
                f()
            step_sim(physicsClientId=c)
            self._steps += 1
            if post:
                for h in post:
                    h(self)
            if self._dirty:
                fns = self._rebuild_step_fns()
            if self._monitor_every and self._steps % self._monitor_every == 0:
                self._monitor()
        self._target_time = max(self._target_time, self.now() - 0.5 * self.dt)

    def advance(self, dt: float) -> None:
        """Let ``dt`` seconds of simulated time pass: whole physics steps up to ``now() + dt`` (the
        remainder carries over to the next call), then one feedback message per active goal. With
        ``realtime=True``, sleeps so simulated time does not run ahead of wall time. A motion still
        being planned is waited for first (wall time; no sim time passes while it plans; see
        :attr:`clock_hold_wait_s`).

        Raises:
            BackendError: the backend is closed.
            ValueError: ``dt`` is negative.
        """
        if dt < 0:
            raise ValueError(f"dt must be >= 0 s, got {dt}")
        if self.closed:
            raise BackendError("the backend is closed")
        if self._incoming:
            self.accept_goals()
        if not self._release_clock(timeout=self.clock_hold_wait_s):
            # an action still prepares (a motion being planned): no sim time passes meanwhile
            for r in (*self.arms.values(), *self.grippers.values()):
                if r._active is not None:
                    r._active.publish_feedback()
            return
        self._target_time += dt
        n = int(math.floor(self._target_time * self.physics_hz + 1e-6)) - self._steps
        if self.realtime and self._wall0 is None:
            self._wall0 = time.monotonic() - self.now()
        if n > 0:
            self.step(n)
        for r in (*self.arms.values(), *self.grippers.values()):
            if r._active is not None:
                r._active.publish_feedback()
        if self.realtime and self._wall0 is not None:
            lag = self._wall0 + self.now() - time.monotonic()
            if lag > 0:
                time.sleep(lag)

    def emit_event(self, source: str, text: str, **fields: Any) -> None:
        """Append an event (``{"time_s", "source", "text", **fields}``) to :attr:`events`; extra
        ``fields`` (plain JSON values, e.g. ``motion_plan``) go into the run log's ``/events``."""
        self.events.append({"time_s": round(self.now(), 6), "source": source, "text": text, **fields})

    def drain_events(self) -> list[dict[str, Any]]:
        """The events emitted since the last call (the runner collects them once per tick)."""
        start = getattr(self, "_drained", 0)
        self._drained = len(self.events)
        return self.events[start:]

    # ---- reuse (sweeps) -------------------------------------------------------------------------------
    def reset(self, seed: Optional[int] = None) -> bool:
        """Start a new run in the same physics clients: the state a new backend of the same scene
        would have, with ``seed``'s pose noise (default: the scene's seed), without loading the
        fixtures and robots again.

        The objects are removed and loaded again exactly as at construction (same body ids, same
        noisy poses for the seed, same dynamics; removing them removes the constraints and collision
        filters that held them), the robots' physics state saved after loading them
        (``saveState``) is restored and their initial motor commands sent again, every extension's
        ``reset_run()`` is called (after the objects are back: it makes the extension what its
        factory would build now), the clock, events and goals are cleared, and the scene settles
        again. A sweep's worker reuses one backend this way; the results are bit for bit those of
        a new backend (tests/scenarios/test_sim_reuse.py compares summaries and exact final
        states). (Teleporting the objects instead of loading them again is not exact: loading
        composes the base frame with other last bits than ``resetBasePositionAndOrientation``,
        and the runs diverge. PyBullet keeps a removed mesh object's collision shapes, about
        0.1 MiB per reload, until the client disconnects: a long-lived user builds a new backend
        now and then, as the sweep's worker does.)

        Returns:
            False, changing nothing, when this backend cannot be reset (not built ``reusable``,
            closed, or an extension without ``reset_run()`` or whose ``resettable`` is false, e.g.
            doors and drawers, bodies loaded after the objects): build a new one then.
        """
        if self.closed or self._initial_state is None:
            return False
        if not all(callable(getattr(ext, "reset_run", None)) and getattr(ext, "resettable", True)
                   for ext in self.extensions.values() if ext is not None):
            return False
        c = self.client
        for r in (*self.arms.values(), *self.grippers.values()):
            ex, r._active = r._active, None
            if ex is not None:
                ex.handle.set_preempted(None, "the backend was reset")
            for _, h in r._incoming:
                h.set_recalled("the backend was reset before taking the goal")
            r._incoming = []
        self._incoming = []
        for g in self.grippers.values():
            g.controller = None
            g.loaded = False
        if self._loaded_grippers:
            self._loaded_grippers.clear()
            pb.setPhysicsEngineParameter(numSolverIterations=self.scene.solver_iterations, physicsClientId=c)
        # the objects go (last loaded first, so that loading them again in scene order hands out
        # the same body ids), the rest of the world goes back to its state after loading
        for name, body in reversed(list(self._objects.items())):
            pb.removeBody(body, physicsClientId=c)
            del self._bodies[name], self._names[body]
        self._objects.clear()
        pb.restoreState(self._initial_state, physicsClientId=c)
        self.seed = self.scene.seed if seed is None else int(seed)
        self.rng = np.random.default_rng(self.seed)
        self.events = []
        self._drained = 0
        self._steps = 0
        self._target_time = 0.0
        self._wall0 = None
        self._pre_hooks.clear()
        self._post_hooks.clear()
        self._dirty = True
        for spec in self.scene.robots:  # the commands _build_robot sends (the joint states are restored)
            arm, gripper = self.arms[spec.name], self.grippers[spec.name]
            model = arm.robot.model
            q0 = (model.named_configurations[spec.initial_configuration]
                  if isinstance(spec.initial_configuration, str) else spec.initial_configuration)
            if arm._shadow is not None:   # (a shadow not loaded yet is loaded at q0)
                arm._shadow.reset_arm(q0)
            for follower, _leader, _m, _offset in arm.robot.mimics:
                pb.setJointMotorControl2(arm.robot.body, follower, pb.VELOCITY_CONTROL, force=0.0, physicsClientId=c)
            arm.hold(q0)
            gripper.command_gap(spec.initial_gap_m)
            gripper.closing_force_n = None
        for o in self.scene.objects:
            self._build_object(o)
        for ext in self.extensions.values():
            if ext is not None:
                ext.reset_run()
        self._check_start_overlaps()
        self._settle()
        self._init_metrics()
        return True


    @property
    def motion_planning(self) -> Any:
        """The backend's planning service (the ``motion_planning`` extension,
        :class:`~.planning.SimMotionPlanning`): its collision world and arm planner, for behaviours
        that check geometry before moving (``query``; see :class:`~py_trees_manipulation.backend.PlanningService`)."""
        return getattr(self, "extensions", {}).get("motion_planning")

    def scene_model(self) -> Any:
        """Link frames and visual shapes of every body, for 3D viewers (Foxglove):
        a :class:`~.scene3d.SceneModel` (read-only)."""
        from .scene3d import SceneModel

        return SceneModel(self)

    # ---- lifetime --------------------------------------------------------------------------------
    def close(self) -> None:
        """Disconnect both PyBullet clients. Idempotent; running goals end PREEMPTED."""
        if self.closed:
            return
        for r in (*self.arms.values(), *self.grippers.values()):
            ex = r._active
            if ex is not None:
                r._active = None
                ex.handle.set_preempted(None, "the backend was closed")
            for _, h in r._incoming:
                h.set_recalled("the backend was closed before taking the goal")
            r._incoming = []
        self._incoming = []
        for ext in getattr(self, "extensions", {}).values():
            fn = getattr(ext, "close", None)
            if callable(fn):
                fn()
        self.closed = True
        for cid in (self.client, getattr(self, "_kin_client", -1)):
            if cid is not None and cid >= 0:
                disconnect(cid)

    def __repr__(self) -> str:
        return (f"SimBackend(robots={list(self.arms)}, objects={list(self._objects)}, t={self.now():.3f} s"
                f"{', closed' if self.closed else ''})")
