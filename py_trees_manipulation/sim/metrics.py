"""Run metrics and telemetry of a :class:`~.backend.SimBackend`: the target object's lift, tilt,
drop (:mod:`.outcome`), place error and what it rests on, and the named streams observers read (grippers, arms, objects, extensions).

:class:`_RunMetrics` holds the backend's metrics methods (a base of :class:`~.backend.SimBackend`).
Moved out of :mod:`.backend` (issue 37 item 6).
"""

from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np
import pybullet as pb

from .outcome import TargetOutcome


class _RunMetrics:
    """The metrics and telemetry methods of :class:`~.backend.SimBackend` (see the module docstring)."""

    # ---- metrics and telemetry -------------------------------------------------------------------
    def _init_metrics(self) -> None:
        from .payload import PayloadMonitor

        self._target = self.scene.task.target_object
        self._payload = PayloadMonitor(self)
        self._monitor_every = max(1, int(round(self.physics_hz / 100))) if self._payload.arms else 0  # 100 Hz
        if self._target is None:
            return
        body = self._objects[self._target]
        p, q = pb.getBasePositionAndOrientation(body, physicsClientId=self.client)
        self._target_body = body
        self._z0 = p[2]
        self._up0 = np.array(pb.getMatrixFromQuaternion(q)).reshape(3, 3)[:, 2]
        self._max_lift = 0.0
        self._outcome = TargetOutcome(self, self._target)
        self._monitor_every = max(1, int(round(self.physics_hz / 100)))  # 100 Hz

    def payload_problem(self) -> Optional[str]:
        """Why the run asked a hand to carry more than its arm may lift (:mod:`.payload`), or None."""
        return self._payload.problem

    def _monitor(self) -> None:
        self._payload.sample()
        if self._target is None:
            return
        p, _ = pb.getBasePositionAndOrientation(self._target_body, physicsClientId=self.client)
        lift = p[2] - self._z0
        if lift > self._max_lift:
            self._max_lift = lift
        self._outcome.sample()

    def metrics(self) -> dict[str, Any]:
        """Run metrics (each documented in ``docs/task_file.md``, "Metrics": what it measures, its
        unit and frame).

        Returns:
            ``sim_time_s``; when the scene has a target object (``task.target_object``, or its only
            object): ``target_object``; ``object_lift_m`` (final base z minus its z after settling,
            world frame, m); ``object_max_lift_m`` (sampled at 100 Hz, m); ``object_dropped`` (it fell
            after leaving the gripper without being set down, or slipped out of it: :mod:`.outcome`;
            a place on any support at any height is not a drop); ``object_slid_in_hand_m`` (the largest
            distance its centre moved in the gripping robot's TCP frame since its grip began, m;
            ``object_slid_in_hand`` says how much, where and when); ``object_tilt_deg`` (angle between
            its initial and final z axes, degrees: a box knocked over reads about 90); with
            ``task.place_position``: ``place_error_m`` (distance of the final base position to it,
            world frame, m), ``placed_on`` (what carries it at the end) and ``object_at_rest``.
        """
        out: dict[str, Any] = {"sim_time_s": round(self.now(), 6)}
        if self.closed:
            return out
        if self._target is not None:
            out.update(self._object_metrics())
        out.update(self._payload.metrics())
        for ext in getattr(self, "extensions", {}).values():
            fn = getattr(ext, "metrics", None)
            if callable(fn):
                out.update(fn())
        return out

    def _object_metrics(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        self._monitor()
        pose = self.world.object_pose(self._target)
        lift = float(pose[2, 3] - self._z0)
        tilt = math.degrees(math.acos(float(np.clip(pose[:3, 2] @ self._up0, -1.0, 1.0))))
        outcome = self._outcome
        out.update({
            "target_object": self._target,
            "object_lift_m": round(lift, 6),
            "object_tilt_deg": round(tilt, 3),
            "object_max_lift_m": round(float(max(self._max_lift, lift)), 6),
            "object_dropped": bool(outcome.dropped or outcome.still_falling()),
            "object_slid_in_hand_m": round(outcome.slid_in_hand_m, 6),
        })
        if outcome.slid_text:
            out["object_slid_in_hand"] = outcome.slid_text
        if self.scene.task.place_position is not None:
            err = np.linalg.norm(pose[:3, 3] - np.array(self.scene.task.place_position))
            out["place_error_m"] = round(float(err), 6)
            out["placed_on"] = outcome.resting_on()
            out["object_at_rest"] = outcome.at_rest()
        return out

    def telemetry(self) -> dict[str, dict[str, Any]]:
        """Named streams of plain values for observers (see :mod:`py_trees_manipulation.observers`).

        ``"gripper/<robot>"``: ``gap_m``, ``effort_n`` (grip force, N); ``"arm/<robot>"``:
        ``tcp_position`` (m, world), ``joint_positions`` (rad); ``"object/<name>"``: ``pose``
        (``{"position": [x, y, z], "orientation": [w, x, y, z]}``, world).
        """
        if self.closed:
            return {}
        out: dict[str, dict[str, Any]] = {}
        for name, g in self.grippers.items():
            st = g.state()
            out[f"gripper/{name}"] = {"gap_m": round(st.gap_m, 6), "effort_n": round(st.grip_force_n, 4)}
        for name, a in self.arms.items():
            out[f"arm/{name}"] = {"tcp_position": [round(float(v), 6) for v in a.robot.tcp_position()],
                                  "joint_positions": [round(v, 6) for v in a.joint_positions()]}
        for name, body in self._objects.items():
            # straight from PyBullet's (x, y, z, w): pose_to_spec(object_pose()) round-trips through
            # a matrix and an eigen-decomposition (~0.2 ms, the run log calls this every tick)
            p, q = pb.getBasePositionAndOrientation(body, physicsClientId=self.client)
            sign = -1.0 if q[3] < 0 else 1.0  # w >= 0, as pq_from_pose
            out[f"object/{name}"] = {"pose": {"position": [round(float(v), 6) for v in p],
                                              "orientation": [round(sign * float(q[i]), 6) for i in (3, 0, 1, 2)]}}
        for ext in getattr(self, "extensions", {}).values():
            fn = getattr(ext, "telemetry", None)
            if callable(fn):
                out.update(fn())
        return out
