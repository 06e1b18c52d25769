"""Building a :class:`~.backend.SimBackend`'s scene: fixtures, robots (with their kinematics shadow),
objects (pose noise, primitives and URDFs, dynamics), the extensions, and the checks of the start
(bodies starting inside each other, objects moving while the scene settles: :mod:`.start_state`).

:class:`_SceneLoading` holds the backend's construction methods (a base of
:class:`~.backend.SimBackend`; they use its clients, scene and body tables). Moved out of
:mod:`.backend` (issue 37 item 6); :mod:`.backend` re-exports the constants.
"""

from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np
import pybullet as pb
import pybullet_data

from ..backend import BackendError
from ..bullet.contact import apply_fixture_material
from ..bullet.robots import MODELS, LoadedRobot
from ..conventions import quat_xyzw_from_wxyz
from ..geometry.poses import Pose, pq_from_pose
from ..scene.spec import ObjectSpec, RobotSpec
from .arm import SimArm
from .extensions import _EXTENSIONS
from .gripper import SimGripper
from .start_state import START_FALL_M, apply_overlap_fixes, settle_report, start_overlaps, start_poses  # noqa: F401  (re-exported)

#: rolling friction of a fixture (a table, a shelf) whose URDF gives none, m (PyBullet's
#: ``rollingFriction``). Bullet combines a contact's rolling friction as r_a * mu_b + r_b * mu_a,
#: so this gives an object resting on the fixture a rolling resistance of about 0.2 mm (mu 0.8),
#: a wooden table's order, and leaves the finger-object contacts as they were. Without it a
#: cylinder lying on its side rolls off by itself (5 cm in 3 s on a level table, always the same
#: way in the cylinder's frame: Bullet's cylinder contact), away from the grasp chosen for it.
FIXTURE_ROLLING_FRICTION_M = 2.5e-4

#: a movable object allowed to sleep (``sleep_resting_bodies``; PyBullet's ``sleepThreshold``) falls
#: asleep once |v|^2 + |w|^2 of its base stays below this for Bullet's 2 s: slower than 1 cm/s and
#: 0.01 rad/s ((m/s)^2 + (rad/s)^2; Bullet's default, 0.05, lets a body sliding at 0.2 m/s sleep)
SLEEP_THRESHOLD = 1e-4
#: while the scene settles, the objects that may sleep are checked every this many steps (10 ms at
#: 1 kHz); one slow at two checks in a row and touching something is at rest and sleeps at once
SLEEP_CHECK_STEPS = 10



#: contact stiffness (N/m) and damping (N s/m) of finger pad links whose URDF gives none: those of
#: the stock models' fingers (pybullet_data's panda.urdf, kuka_iiwa_wsg50.urdf)
DEFAULT_FINGER_STIFFNESS = 30000.0
DEFAULT_FINGER_DAMPING = 1000.0
#: the gear constraints that make the URDF's <mimic> joints follow their leaders (two finger joints
#: with mimic fingertips): error reduction (at 0.1 a linkage's fingers lag 0.02 rad under a 30 N
#: squeeze and tilt the pads) and the largest torque (N m) they transmit
MIMIC_ERP = 0.8
MIMIC_MAX_TORQUE = 200.0


class _SceneLoading:
    """The construction methods of :class:`~.backend.SimBackend` (see the module docstring)."""

    # ---- construction ----------------------------------------------------------------------------
    def _build(self) -> None:
        c = self.client
        sc = self.scene
        pb.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=c)
        if self.gui:
            pb.configureDebugVisualizer(pb.COV_ENABLE_RENDERING, 0, physicsClientId=c)
            pb.configureDebugVisualizer(pb.COV_ENABLE_GUI, 0, physicsClientId=c)
        pb.setGravity(*sc.gravity, physicsClientId=c)
        pb.setPhysicsEngineParameter(fixedTimeStep=self.dt, numSolverIterations=sc.solver_iterations,
                                     numSubSteps=0, physicsClientId=c)
        for f in sc.fixtures:
            p, q = pq_from_pose(f.pose)
            body = self._load_urdf(f.urdf_path, p, q, fixed=True, scale=f.scale, what=f"fixture {f.name!r}")
            for link in range(-1, pb.getNumJoints(body, physicsClientId=c)):
                if pb.getDynamicsInfo(body, link, physicsClientId=c)[6] == 0.0:  # rolling friction unset
                    pb.changeDynamics(body, link, rollingFriction=FIXTURE_ROLLING_FRICTION_M, physicsClientId=c)
            apply_fixture_material(c, body, f)   # a table top's compliance (scene/contact.py)
            self._register(f.name, body)
        for r in sc.robots:
            self._build_robot(r)
        # what reset() returns to: fixtures and robots loaded, nothing stepped (a reusable backend only)
        self._initial_state = pb.saveState(physicsClientId=c) if self.reusable else None
        for o in sc.objects:
            self._build_object(o)
        self.extensions: dict[str, Any] = {}
        for ext_name, (section, factory) in _EXTENSIONS.items():
            if section is None or section in sc.extra:
                self.extensions[ext_name] = factory(self, sc.extra.get(section) if section else None)
        if self.gui:
            pb.configureDebugVisualizer(pb.COV_ENABLE_RENDERING, 1, physicsClientId=c)
            pb.resetDebugVisualizerCamera(1.4, 50, -30, [0.4, 0.0, 0.6], physicsClientId=c)
        self._check_start_overlaps()
        self._settle()
        self._init_metrics()

    def _check_start_overlaps(self) -> None:
        """Set :attr:`preflight_failure` when bodies start deeper than ``scene.start_penetration_m``
        inside each other (:func:`.start_state.start_overlaps`: both names, the depth, the fix)."""
        fixes: dict[str, Any] = {}
        found, self._overlapping = start_overlaps(self, fixes)
        self.preflight_failure = "; ".join(x for x in (self._placement_failure, *found) if x) or None
        # refused already; the objects go where their messages say, so that the settle can tell
        # whether that move is the whole fix (a tilted mug lifted out of the table still tips over)
        apply_overlap_fixes(self, fixes)
        self._moved_by_fix = set(fixes)

    def _settle(self) -> None:
        # Let objects come to rest before the clock starts (not counted in now()). The pre-step hooks
        # run too: articulated objects (door latch and handle spring) need them every step. With
        # sleep_resting_bodies, each object that has come to rest meanwhile is put to sleep at once.
        # An object that moves more than settle_tolerance_m meanwhile is named (:func:`.start_state.settle_report`).
        c = self.client
        start = start_poses(self)
        for body in self._static_bodies():  # awake, as loaded (a reset backend's were asleep)
            pb.changeDynamics(body, -1, activationState=pb.ACTIVATION_STATE_DISABLE_SLEEPING, physicsClientId=c)
            pb.changeDynamics(body, -1, activationState=pb.ACTIVATION_STATE_WAKE_UP, physicsClientId=c)
        sleepers = self._sleepers() if self.scene.sleep_resting_bodies else {}
        for k in range(1, int(round(self.scene.settle_s * self.physics_hz)) + 1):
            for h in self._pre_hooks:
                h(self)
            pb.stepSimulation(physicsClientId=c)
            if sleepers and k % SLEEP_CHECK_STEPS == 0:
                self._sleep_resting(sleepers)
        moved = settle_report(self, start, skip=getattr(self, "_overlapping", set()),
                              moved_by_fix=getattr(self, "_moved_by_fix", set()))
        if moved:
            self.preflight_failure = "; ".join(x for x in (self.preflight_failure, *moved) if x)
        if self.scene.sleep_resting_bodies:
            for body in self._static_bodies():
                pb.changeDynamics(body, -1, activationState=pb.ACTIVATION_STATE_ENABLE_SLEEPING, physicsClientId=c)
                pb.changeDynamics(body, -1, activationState=pb.ACTIVATION_STATE_SLEEP, physicsClientId=c)
            for body in sleepers:  # the others fall asleep once at rest (Bullet's own timer, 2 s)
                pb.changeDynamics(body, -1, activationState=pb.ACTIVATION_STATE_ENABLE_SLEEPING,
                                  sleepThreshold=SLEEP_THRESHOLD, physicsClientId=c)

    def _static_bodies(self) -> list[int]:
        """Fixtures and fixed objects without a moving joint (a table, a shelf board; not a door)."""
        c = self.client
        out = []
        for name in [f.name for f in self.scene.fixtures] + [o.name for o in self.scene.objects if o.fixed]:
            body = self._bodies.get(name)
            if body is not None and all(pb.getJointInfo(body, j, physicsClientId=c)[2] == pb.JOINT_FIXED
                                        for j in range(pb.getNumJoints(body, physicsClientId=c))):
                out.append(body)
        return out

    def _sleepers(self) -> dict[int, int]:
        """The movable objects that may sleep (all but the task's ``target_object``), each with the
        number of consecutive rest checks it has passed (0)."""
        target = self.scene.task.target_object
        return {self._objects[o.name]: 0 for o in self.scene.objects
                if not o.fixed and o.name != target and o.name in self._objects}

    def _sleep_resting(self, sleepers: dict[int, int]) -> None:
        """Put to sleep the objects of ``sleepers`` at rest (scene key ``sleep_resting_bodies``; called
        every :data:`SLEEP_CHECK_STEPS` steps of settling), removing them from it.

        PyBullet keeps every multibody awake by default: each resting object's contacts are solved
        at every step (with a fixture's rolling friction, 3 more rows per contact), so a scene's
        cost grows with its objects whether anything touches them or not. An object at rest (at
        two checks in a row slower than :data:`SLEEP_THRESHOLD`, and touching something: not at the
        top of a bounce) sleeps: it costs nothing per step. Bullet wakes a sleeping body whenever
        an awake one touches it (the fingers, the arm, an object pushed into it), a constraint
        joins it (a GraspFix weld) or a body it rests on moves, before that step's contacts are
        solved. The target object, whose motion the run's metrics measure, the robots (their
        motors) and mechanisms (doors, drawers: bodies with moving joints) stay awake throughout;
        the fixtures sleep once settled (:meth:`_settle`)."""
        c = self.client
        for body in list(sleepers):
            v, w = pb.getBaseVelocity(body, physicsClientId=c)
            slow = v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + w[0] * w[0] + w[1] * w[1] + w[2] * w[2] < SLEEP_THRESHOLD
            if not slow or not pb.getContactPoints(bodyA=body, physicsClientId=c):
                sleepers[body] = 0
                continue
            sleepers[body] += 1
            if sleepers[body] >= 2:
                pb.changeDynamics(body, -1, activationState=pb.ACTIVATION_STATE_ENABLE_SLEEPING,
                                  sleepThreshold=SLEEP_THRESHOLD, physicsClientId=c)
                pb.changeDynamics(body, -1, activationState=pb.ACTIVATION_STATE_SLEEP, physicsClientId=c)
                del sleepers[body]

    def _kinematics_client(self) -> int:
        """The kinematics client of the robots' shadows, connected on first use."""
        if self._kin_client is None:
            self._kin_client = pb.connect(pb.DIRECT)
            pb.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=self._kin_client)
        return self._kin_client

    def _load_shadow(self, spec: RobotSpec) -> LoadedRobot:
        """Robot ``spec``'s kinematics shadow (:attr:`.arm.SimArm.shadow`): the same URDF at the same
        base pose in the kinematics client, links and joints only, at the initial configuration."""
        model = spec.description if spec.description is not None else MODELS[spec.model]
        p, q = pq_from_pose(spec.base_pose)
        kin = self._kinematics_client()
        shadow = LoadedRobot(kin, self._load_urdf(model.urdf, p, q, fixed=True, what="kinematics shadow", client=kin),
                             model)
        shadow.reset_arm(model.named_configurations[spec.initial_configuration]
                         if isinstance(spec.initial_configuration, str) else spec.initial_configuration)
        return shadow

    def _load_urdf(self, path: str, p: np.ndarray, q: np.ndarray, fixed: bool, scale: float = 1.0,
                   what: str = "", client: Optional[int] = None) -> int:
        flags = pb.URDF_ENABLE_CACHED_GRAPHICS_SHAPES
        if client is not None and client == self._kin_client:  # the kinematics shadow: links and joints only
            flags |= pb.URDF_IGNORE_VISUAL_SHAPES | pb.URDF_IGNORE_COLLISION_SHAPES
        elif not self.visual_shapes:
            flags |= pb.URDF_IGNORE_VISUAL_SHAPES
        try:
            return pb.loadURDF(path, p.tolist(), quat_xyzw_from_wxyz(q), useFixedBase=fixed, globalScaling=scale,
                               flags=flags, physicsClientId=self.client if client is None else client)
        except pb.error as e:
            raise BackendError(f"cannot load {what} from {path}: {e}") from None

    def _register(self, name: str, body: int) -> None:
        self._bodies[name] = body
        self._names[body] = name

    def _build_robot(self, spec: RobotSpec) -> None:
        model = spec.description if spec.description is not None else MODELS[spec.model]
        p, q = pq_from_pose(spec.base_pose)
        body = self._load_urdf(model.urdf, p, q, fixed=True, what=f"robot {spec.name!r}")
        robot = LoadedRobot(self.client, body, model)
        q0 = (model.named_configurations[spec.initial_configuration]
              if isinstance(spec.initial_configuration, str) else spec.initial_configuration)
        robot.reset_arm(q0)
        robot.reset_fingers(spec.initial_gap_m / 2)
        for link in robot.finger_links:
            pb.changeDynamics(body, link, lateralFriction=model.finger_lateral_friction, spinningFriction=0.003,
                              frictionAnchor=True, physicsClientId=self.client)
            if pb.getDynamicsInfo(body, link, physicsClientId=self.client)[9] < 0:
                # no <contact> stiffness in the URDF (the xArm's fingers): the stock fingers' soft
                # pads, which the tactile emulation and the PR2 controller are tuned for (PyBullet
                # takes stiffness and damping together)
                pb.changeDynamics(body, link, contactStiffness=DEFAULT_FINGER_STIFFNESS,
                                  contactDamping=DEFAULT_FINGER_DAMPING, physicsClientId=self.client)
        if model.gripper.coupling == "gear":
            # PyBullet ignores <mimic>: a gear constraint couples the fingers (as PyBullet's Panda demo
            # does); gearRatio -m makes the second joint follow m times the first
            gear = pb.createConstraint(body, robot.finger_joints[0], body, robot.finger_joints[1], pb.JOINT_GEAR,
                                       [1, 0, 0], [0, 0, 0], [0, 0, 0], physicsClientId=self.client)
            pb.changeConstraint(gear, gearRatio=-model.gripper.mimic_multiplier, erp=0.1, maxForce=50,
                                physicsClientId=self.client)
        # the URDF's other <mimic> joints (a linkage's followers, mimics of mimics after their
        # leaders): coupled to their leader the same way, stiffer (the mimic offset is kept from the
        # reset pose), default motors off
        # a linkage driven on one side (robot.tracked_mimics): position motors that SimGripper sets
        # to each follower's leader every step instead (see LoadedRobot.tracked_mimics)
        for follower, leader, m, _offset in robot.mimics:
            pb.setJointMotorControl2(body, follower, pb.VELOCITY_CONTROL, force=0.0, physicsClientId=self.client)
            if robot.tracked_mimics:
                continue
            gear = pb.createConstraint(body, leader, body, follower, pb.JOINT_GEAR, [1, 0, 0], [0, 0, 0], [0, 0, 0],
                                       physicsClientId=self.client)
            pb.changeConstraint(gear, gearRatio=-m, erp=MIMIC_ERP, maxForce=MIMIC_MAX_TORQUE, physicsClientId=self.client)
        self._register(spec.name, body)
        arm = SimArm(self, spec.name, robot, lambda: self._load_shadow(spec))
        gripper = SimGripper(self, spec.name, robot)
        arm.hold(q0)
        gripper.command_gap(spec.initial_gap_m)
        gripper.closing_force_n = None   # the scene's initial gap is no grasp
        self.arms[spec.name] = arm
        self.grippers[spec.name] = gripper

    def _noisy_pose(self, o: ObjectSpec) -> Pose:
        T = o.pose.copy()
        n = o.pose_noise
        if n.position_m > 0 or n.yaw_deg > 0:
            dx, dy = self.rng.uniform(-n.position_m, n.position_m, size=2) if n.position_m > 0 else (0.0, 0.0)
            yaw = math.radians(self.rng.uniform(-n.yaw_deg, n.yaw_deg)) if n.yaw_deg > 0 else 0.0
            c, s = math.cos(yaw), math.sin(yaw)
            Rz = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])
            T[:3, :3] = Rz @ T[:3, :3]
            T[0, 3] += dx
            T[1, 3] += dy
        return T

    def _build_object(self, o: ObjectSpec) -> None:
        c = self.client
        pose = self._noisy_pose(o)
        p, q = pq_from_pose(pose)
        if o.primitive is not None:
            pr = o.primitive
            color = list(o.color) if o.color else [0.6, 0.6, 0.6, 1.0]
            if pr.shape == "box":
                half = [s / 2 for s in pr.size]  # type: ignore[union-attr]
                col = pb.createCollisionShape(pb.GEOM_BOX, halfExtents=half, physicsClientId=c)
                vis = pb.createVisualShape(pb.GEOM_BOX, halfExtents=half, rgbaColor=color, physicsClientId=c)
            elif pr.shape == "cylinder":
                col = pb.createCollisionShape(pb.GEOM_CYLINDER, radius=pr.radius, height=pr.length, physicsClientId=c)
                vis = pb.createVisualShape(pb.GEOM_CYLINDER, radius=pr.radius, length=pr.length, rgbaColor=color,
                                           physicsClientId=c)
            else:
                col = pb.createCollisionShape(pb.GEOM_SPHERE, radius=pr.radius, physicsClientId=c)
                vis = pb.createVisualShape(pb.GEOM_SPHERE, radius=pr.radius, rgbaColor=color, physicsClientId=c)
            mass = 0.0 if o.fixed else (o.mass_kg if o.mass_kg is not None else 0.1)
            body = pb.createMultiBody(baseMass=mass, baseCollisionShapeIndex=col, baseVisualShapeIndex=vis,
                                      basePosition=p.tolist(), baseOrientation=quat_xyzw_from_wxyz(q), physicsClientId=c)
            dyn: dict[str, Any] = {"lateralFriction": 0.8 if o.lateral_friction is None else o.lateral_friction}
        else:
            body = self._load_urdf(o.urdf_path, p, q, fixed=o.fixed, scale=o.scale, what=f"object {o.name!r}")
            dyn = {}
            if o.lateral_friction is not None:
                dyn["lateralFriction"] = o.lateral_friction
            if o.mass_kg is not None and not o.fixed:
                dyn["mass"] = o.mass_kg
                dyn["localInertiaDiagonal"] = self._box_inertia(body, o.mass_kg)
            if o.color is not None:
                for link in range(-1, pb.getNumJoints(body, physicsClientId=c)):
                    pb.changeVisualShape(body, link, rgbaColor=list(o.color), physicsClientId=c)
        for key, val in (("spinningFriction", o.spinning_friction), ("rollingFriction", o.rolling_friction),
                         ("restitution", o.restitution), ("contactStiffness", o.contact_stiffness),
                         ("contactDamping", o.contact_damping)):
            if val is not None:
                dyn[key] = val
        if dyn:
            pb.changeDynamics(body, -1, physicsClientId=c, **dyn)
        self._register(o.name, body)
        self._objects[o.name] = body

    def _box_inertia(self, body: int, mass: float) -> list[float]:
        """Principal inertia (kg m^2) of a solid box of ``mass`` filling the body's local AABB."""
        c = self.client
        p, q = pb.getBasePositionAndOrientation(body, physicsClientId=c)
        pb.resetBasePositionAndOrientation(body, p, [0, 0, 0, 1], physicsClientId=c)
        lo, hi = pb.getAABB(body, -1, physicsClientId=c)
        pb.resetBasePositionAndOrientation(body, p, q, physicsClientId=c)
        x, y, z = (max(h - l, 1e-3) for l, h in zip(lo, hi))
        return [mass / 12 * (y * y + z * z), mass / 12 * (x * x + z * z), mass / 12 * (x * x + y * y)]
