"""Foxglove: the well-known channels of a run, and the live WebSocket server.

Beside the run log's own JSON channels (:mod:`.runlog`), a run gets channels that Foxglove's
panels understand without configuration, built with the ``foxglove-sdk`` package's message
classes (``foxglove.messages``) and encoded as protobuf (``message_encoding = "protobuf"``, the
schema is the SDK's ``FileDescriptorSet``, schema encoding ``"protobuf"``):

``/tf`` (``foxglove.FrameTransforms``), every tick:
    the world pose of every link of every body (robots, fixtures, objects, doors), as children of
    ``world``, from the backend's ``scene_model()`` (the simulator:
    :class:`~py_trees_manipulation.sim.scene3d.SceneModel`; frame names there), and each arm's
    TCP as ``<arm>/tcp``. A backend without ``scene_model()`` (the hardware backend) gets the
    TCPs (``arm.tcp_pose()``) and, when its world answers, each object as a frame named after it.
``/scene`` (``foxglove.SceneUpdate``), once at the start:
    one entity per link frame with visuals (``frame_locked``: it moves with its frame): boxes as
    cubes, spheres, cylinders (capsules drawn as cylinders), meshes as model primitives with the
    mesh embedded (``data`` with its media type) or, when too large, a ``file://`` URL.
``/log`` (``foxglove.Log``):
    every run event (``name``: its ``source``; ``level``: the event's ``level`` when it has one,
    else INFO) and every behaviour status change (``name``: the behaviour; ``message``:
    ``"RUNNING -> SUCCESS: <feedback>"``; FAILURE at WARNING level).

Times: message log times and the messages' ``timestamp`` fields are the backend clock (as in the
run log). The Plot panel reads the run log's numeric telemetry channels directly (e.g.
``/telemetry/gripper/panda.left_fingertip_force_n``, ``.force_setpoint_n``, ``.gap_m``).

:class:`FoxgloveLive` serves channels live through ``foxglove.start_server`` (WebSocket,
subprotocol ``foxglove.sdk.v1``) on its own ``foxglove.Context``; the run logger hands it every
message it writes (``ptm run --foxglove``).

Model files: Foxglove's 3D panel loads OBJ and STL models as Y-up and turns them +90 deg about x;
the model primitives here carry the inverse turn (and the mesh scale permuted to match), so a
mesh sits as PyBullet (z-up, as URDF) draws it.
"""

from __future__ import annotations

import math
import os
from typing import Any, Iterable, Optional

import numpy as np

TOPIC_TF = "/tf"
TOPIC_SCENE = "/scene"
TOPIC_LOG = "/log"

WORLD_FRAME = "world"

_MEDIA_TYPES = {".obj": "model/obj", ".stl": "model/stl", ".dae": "model/vnd.collada+xml",
                ".glb": "model/gltf-binary", ".gltf": "model/gltf+json"}
#: Foxglove turns these +90 deg about x when loading (three.js is y-up)
_Y_UP_LOADED = (".obj", ".stl", ".glb", ".gltf")
_SQRT_HALF = math.sqrt(0.5)
_RX_MINUS_90 = np.array([_SQRT_HALF, -_SQRT_HALF, 0.0, 0.0])  # w, x, y, z


def _qmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return np.array([aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw])


def _level(fm: Any, value: Any) -> Any:
    names = {"debug": fm.LogLevel.Debug, "info": fm.LogLevel.Info, "warn": fm.LogLevel.Warning,
             "warning": fm.LogLevel.Warning, "error": fm.LogLevel.Error, "fatal": fm.LogLevel.Fatal}
    return names.get(str(value).lower(), fm.LogLevel.Info) if value is not None else fm.LogLevel.Info


class WellKnownChannels:
    """Builds the ``/tf``, ``/scene`` and ``/log`` messages of one run (encoded protobuf bytes).

    Args:
        backend: the run's backend (read only).

    Raises:
        ImportError: the ``foxglove-sdk`` package is missing.
    """

    def __init__(self, backend: Any) -> None:
        import foxglove.messages as fm  # noqa: PLC0415 - only when a log is written or served

        self._fm = fm
        self.backend = backend
        model_fn = getattr(backend, "scene_model", None)
        self.model: Any = model_fn() if callable(model_fn) else None
        self._statuses: dict[str, str] = {}

    # -- schemas -------------------------------------------------------------------------------
    def schemas(self) -> dict[str, Any]:
        """``{topic: foxglove.Schema}`` (name ``foxglove.FrameTransforms`` etc., encoding
        ``protobuf``, data: the FileDescriptorSet)."""
        fm = self._fm
        return {TOPIC_TF: fm.FrameTransforms.get_schema(), TOPIC_SCENE: fm.SceneUpdate.get_schema(),
                TOPIC_LOG: fm.Log.get_schema()}

    # -- helpers -------------------------------------------------------------------------------
    def _stamp(self, time_s: float) -> Any:
        ns = max(0, int(round(float(time_s) * 1e9)))
        return self._fm.Timestamp(sec=ns // 1_000_000_000, nsec=ns % 1_000_000_000)

    def _pose(self, p: Any, q: Any) -> Any:
        fm = self._fm
        return fm.Pose(position=fm.Vector3(x=float(p[0]), y=float(p[1]), z=float(p[2])),
                       orientation=fm.Quaternion(w=float(q[0]), x=float(q[1]), y=float(q[2]), z=float(q[3])))

    # -- /tf -----------------------------------------------------------------------------------
    def frames(self) -> list[tuple[str, np.ndarray, np.ndarray]]:
        """``[(child frame, position (3,) m, quaternion (4,) w, x, y, z)]`` in ``world``, now."""
        from py_trees_manipulation.geometry.poses import pq_from_pose

        if self.model is not None:
            return self.model.frames()  # with the TCPs
        out: list[tuple[str, np.ndarray, np.ndarray]] = []
        world = getattr(self.backend, "world", None)
        try:
            for name in world.object_names() if world is not None else []:
                p, q = pq_from_pose(world.object_pose(name))
                out.append((name, p, q))
        except Exception:  # noqa: BLE001 - a world without answers has no object frames
            pass
        for name, arm in (getattr(self.backend, "arms", None) or {}).items():
            try:
                p, q = pq_from_pose(arm.tcp_pose())
            except Exception:  # noqa: BLE001 - an arm that cannot say where its TCP is
                continue
            out.append((f"{name}/tcp", p, q))
        return out

    def transforms(self, time_s: float) -> bytes:
        """The ``/tf`` message now (``foxglove.FrameTransforms``, encoded)."""
        fm = self._fm
        ts = self._stamp(time_s)
        ft, v3, quat = fm.FrameTransform, fm.Vector3, fm.Quaternion
        if self.model is not None and hasattr(self.model, "frames_xyzw"):
            frames = self.model.frames_xyzw()  # (x, y, z), (qx, qy, qz, qw) tuples: the cheap path
            msgs = [ft(timestamp=ts, parent_frame_id=WORLD_FRAME, child_frame_id=frame,
                       translation=v3(x=p[0], y=p[1], z=p[2]), rotation=quat(x=q[0], y=q[1], z=q[2], w=q[3]))
                    for frame, p, q in frames]
        else:
            msgs = [ft(timestamp=ts, parent_frame_id=WORLD_FRAME, child_frame_id=frame,
                       translation=v3(x=float(p[0]), y=float(p[1]), z=float(p[2])),
                       rotation=quat(w=float(q[0]), x=float(q[1]), y=float(q[2]), z=float(q[3])))
                    for frame, p, q in self.frames()]
        return fm.FrameTransforms(transforms=msgs).encode()

    # -- /scene --------------------------------------------------------------------------------
    def scene_update(self, time_s: float) -> bytes:
        """The ``/scene`` message (``foxglove.SceneUpdate``, encoded): one entity per link frame."""
        fm = self._fm
        ts = self._stamp(time_s)
        by_frame: dict[str, dict[str, list[Any]]] = {}
        for v in (self.model.visuals() if self.model is not None else []):
            prims = by_frame.setdefault(v.frame_id, {"cubes": [], "spheres": [], "cylinders": [], "models": []})
            color = fm.Color(r=v.rgba[0], g=v.rgba[1], b=v.rgba[2], a=v.rgba[3])
            size = fm.Vector3(x=float(v.size[0]), y=float(v.size[1]), z=float(v.size[2]))
            pose = self._pose(v.position, v.orientation)
            if v.shape in ("box", "plane"):
                if v.shape == "plane":
                    size = fm.Vector3(x=float(v.size[0]) or 10.0, y=float(v.size[1]) or 10.0, z=0.001)
                prims["cubes"].append(fm.CubePrimitive(pose=pose, size=size, color=color))
            elif v.shape == "sphere":
                prims["spheres"].append(fm.SpherePrimitive(pose=pose, size=size, color=color))
            elif v.shape in ("cylinder", "capsule"):
                prims["cylinders"].append(fm.CylinderPrimitive(pose=pose, size=size, bottom_scale=1.0, top_scale=1.0,
                                                               color=color))
            elif v.shape == "mesh" and v.mesh_path:
                prims["models"].append(self._model(v, color))
        entities = [fm.SceneEntity(timestamp=ts, frame_id=frame, id=frame, frame_locked=True, **prims)
                    for frame, prims in by_frame.items()]
        return fm.SceneUpdate(entities=entities).encode()

    def _model(self, v: Any, color: Any) -> Any:
        fm = self._fm
        ext = os.path.splitext(v.mesh_path)[1].lower()
        q = np.asarray(v.orientation, dtype=float)
        sx, sy, sz = (float(x) for x in v.size)
        if ext in _Y_UP_LOADED:
            q = _qmul(q, _RX_MINUS_90)
            sy, sz = sz, sy
        kw: dict[str, Any] = {"media_type": _MEDIA_TYPES.get(ext, "")}
        if v.mesh_data:
            kw["data"] = v.mesh_data
        else:
            kw["url"] = "file://" + v.mesh_path
        return fm.ModelPrimitive(pose=self._pose(v.position, q), scale=fm.Vector3(x=sx, y=sy, z=sz), color=color,
                                 override_color=True, **kw)

    # -- /log ----------------------------------------------------------------------------------
    def event_log(self, event: dict[str, Any], time_s: float) -> bytes:
        """A run event (``{"time_s", "source", "text", ...}``) as a ``foxglove.Log`` (encoded)."""
        fm = self._fm
        t = event.get("time_s", time_s)
        t = float(t) if isinstance(t, (int, float)) and math.isfinite(t) else float(time_s)
        return fm.Log(timestamp=self._stamp(t), level=_level(fm, event.get("level")), message=str(event.get("text", "")),
                      name=str(event.get("source", "") or "run"), file="", line=0).encode()

    def status_logs(self, behaviours: Iterable[tuple[str, str, str]], time_s: float) -> list[bytes]:
        """``foxglove.Log`` messages (encoded) for each behaviour whose status changed since the
        last call: ``behaviours`` gives ``(name, status, feedback)`` in tree order."""
        fm = self._fm
        out: list[bytes] = []
        ts: Optional[Any] = None
        seen = self._statuses
        for name, status, feedback in behaviours:
            old = seen.get(name, "INVALID")
            if status == old:
                continue
            seen[name] = status
            ts = ts or self._stamp(time_s)
            text = f"{old} -> {status}" + (f": {feedback}" if feedback else "")
            level = fm.LogLevel.Warning if status == "FAILURE" else fm.LogLevel.Info
            out.append(fm.Log(timestamp=ts, level=level, message=text, name=name, file="", line=0).encode())
        return out


class FoxgloveLive:
    """A Foxglove WebSocket server (``foxglove.start_server``, subprotocol ``foxglove.sdk.v1``)
    on its own context, fed with already encoded messages.

    Args:
        host: interface to bind (keep ``127.0.0.1`` unless you mean to expose the run).
        port: TCP port (``0``: a free one; see :attr:`port`).
        name: server name shown by Foxglove.

    Raises:
        ImportError: the ``foxglove-sdk`` package is missing.
        RuntimeError: the server cannot start (e.g. the port is taken).
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 8765, name: str = "ptm") -> None:
        import foxglove  # noqa: PLC0415

        self._foxglove = foxglove
        self.host = host
        self.context = foxglove.Context()
        self.server = foxglove.start_server(name=name, host=host, port=int(port), context=self.context)
        self.port = int(self.server.port)
        self._channels: dict[str, Any] = {}
        self._closed = False

    @property
    def url(self) -> str:
        """``ws://host:port``: Foxglove's "Open connection" > Foxglove WebSocket."""
        return f"ws://{self.host}:{self.port}"

    def add_channel(self, topic: str, schema_name: str, schema_encoding: str, schema_data: bytes,
                    message_encoding: str) -> Any:
        """Advertise a channel (once per topic); returns the handle :meth:`log` takes."""
        ch = self._channels.get(topic)
        if ch is None:
            schema = self._foxglove.Schema(name=schema_name, encoding=schema_encoding, data=schema_data)
            ch = self._foxglove.Channel(topic, schema=schema, message_encoding=message_encoding, context=self.context)
            self._channels[topic] = ch
        return ch

    def log(self, channel: Any, data: bytes, log_time_ns: int) -> None:
        """Send one encoded message to every subscribed client."""
        channel.log(data, log_time=int(log_time_ns))

    def wait(self) -> None:
        """Block until Ctrl-C (swallowed) or :meth:`close`, then close."""
        from .serving import wait_until_closed

        wait_until_closed(lambda: self._closed, self.close)

    def close(self) -> None:
        """Unadvertise the channels and stop the server (idempotent)."""
        if self._closed:
            return
        self._closed = True
        for ch in self._channels.values():
            try:
                ch.close()
            except Exception:  # noqa: BLE001
                pass
        self.server.stop()
