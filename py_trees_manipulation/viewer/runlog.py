"""The run log: an MCAP file with one tree snapshot per tick and the backend's streams.

Written by :class:`RunLogger` (a :class:`~py_trees_manipulation.observers.RunObserver`) and read
back by :func:`read_run_log`. MCAP (https://mcap.dev) is the container; every message is
JSON-encoded (``message_encoding = "json"``) and every channel carries a JSON Schema
(``schema encoding = "jsonschema"``), so the file opens in Foxglove and in any MCAP reader.
See ``docs/run_log.md`` for the same description with examples.

Time: a message's ``log_time`` and ``publish_time`` are the **backend clock** (sim time, seconds
since the backend started) in integer nanoseconds; the wall-clock start is in ``/run/metadata``.
Messages are written in tick order; within a tick: events, telemetry, then the snapshot.

Channels:

``/run/metadata`` (schema ``ptm.RunMetadata``), once, at ``on_start``:
    ``{"source": task file or "<memory>", "extra": {seed, args, overrides...},
    "backend": class name, "started_wall_iso": ISO 8601 UTC, "format_version": 1,
    "py_trees_manipulation_version": "0.1.0"}``. The same fields (as strings) are also stored
    as the MCAP metadata record ``run``.
``/tree/snapshot`` (schema ``ptm.TreeSnapshot``), once per tick:
    the py_trees_js-style snapshot of :mod:`py_trees_manipulation.viewer.snapshot`.
``/events`` (schema ``ptm.Event``), one message per entry appended to ``RunState.events``:
    ``{"time_s", "source", "text", "tick", ...any extra keys of the event}``; an arm motion's event
    carries ``motion_plan`` (:data:`MOTION_PLAN_SCHEMA`: planner, planning time, waypoints, path
    length, clearance, joint limits).
``/telemetry/<name>`` (schema ``ptm.Telemetry.<name>``), once per tick per stream that
    ``backend.telemetry()`` returns, e.g. ``/telemetry/gripper/panda``:
    ``{"time_s", "tick", ...the stream's fields}``; poses appear as
    ``{"position": [x, y, z] (m), "orientation": [w, x, y, z]}``. The schema is inferred from the
    stream's first sample (a field's JSON type) and allows further fields.
``/summary`` (schema ``ptm.RunSummary``), once, at ``on_end`` (or when the log is closed without
    ``on_end``): the runner's summary plus ``"ticks"``, ``"time_s"``, ``"wall_time_s"`` and
    ``"closed_by"`` (``"on_end"``, ``"close"``, or ``"finaliser"`` when the process exited or the
    logger was dropped without ``on_end``).

Robustness: ``on_end`` always finishes the file (summary, index, footer). If it is never called,
a ``weakref.finalize`` hook (run at interpreter exit and when the logger is garbage collected)
finishes it. The writer is flushed every ``flush_interval_s`` of wall time, so even a killed
process leaves every chunk but the last readable: :func:`read_run_log` reads an unfinished file
up to the damage and reports ``complete=False``. Such a file has no summary section (MCAP's index,
written at the end), which indexed readers (Foxglove, the ``mcap`` package's ``make_reader``)
need: :func:`recover_run_log` (``ptm log recover LOG``) copies every record that can be read into
a new, finished file, as ``mcap recover`` does.
"""

from __future__ import annotations

import datetime as _dt
import json
import logging
import struct
import threading
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Mapping
from typing import IO, Any, Optional, Union

import numpy as np
from mcap.exceptions import InvalidMagic, McapError
from mcap.records import Attachment, Channel, Chunk, Footer, Header, Message, Metadata, Schema
from mcap.stream_reader import StreamReader, breakup_chunk
from mcap.writer import CompressionType, Writer

from py_trees_manipulation import __version__
from py_trees_manipulation.viewer.snapshot import (SnapshotBuilder, is_record, shared_builder, snapshot_from_record,
                                                   to_jsonable)

#: Foxglove's well-known channels (:mod:`py_trees_manipulation.viewer.foxglove`)
TOPIC_TF, TOPIC_SCENE, TOPIC_LOG = "/tf", "/scene", "/log"

logger = logging.getLogger(__name__)

FORMAT_VERSION = 2
"""2: ``/tree/snapshot`` in the record layout and Foxglove's well-known channels (1: the snapshot
keyed by id; still read)."""
PROFILE = "ptm"

TOPIC_METADATA = "/run/metadata"
TOPIC_SNAPSHOT = "/tree/snapshot"
TOPIC_EVENTS = "/events"
TOPIC_SUMMARY = "/summary"
TELEMETRY_PREFIX = "/telemetry/"

_SCHEMA_URI = "https://json-schema.org/draft/2020-12/schema"

# Every schema below keeps to what Foxglove's JSON-schema parser reads (its mcap-support
# parseJsonSchema): each object declares "properties"; a field's type is one of boolean, number,
# integer, string, object, or an array of one of those (no arrays of arrays); no type unions;
# a map keyed by ids is an array of records. Fields a message has beyond the declared ones are
# still in the message (Raw Messages shows them), Foxglove only does not type them.
# tests/unit/test_foxglove_schemas.py re-states the parser's rules and checks every schema.

_STRINGS = {"type": "array", "items": {"type": "string"}}


def _channel_schema(title: str, properties: dict[str, Any], *, description: Optional[str] = None,
                    required: Optional[list[str]] = None, **more: Any) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a channel's messages: an object titled ``title`` (``ptm.*``,
    the MCAP schema name) with these ``properties``, the fields in ``required``, and ``more`` keys
    (``additionalProperties``), in the key order the log has always written."""
    schema: dict[str, Any] = {"$schema": _SCHEMA_URI, "title": title}
    if description is not None:
        schema["description"] = description
    schema["type"] = "object"
    if required is not None:
        schema["required"] = required
    schema["properties"] = properties
    schema.update(more)
    return schema


SNAPSHOT_SCHEMA: dict[str, Any] = _channel_schema(
    "ptm.TreeSnapshot",
    description="behaviour tree snapshot, record layout (py_trees_manipulation.viewer.snapshot)",
    required=["timestamp", "tick", "behaviours", "root"],
    properties={
        "timestamp": {"type": "number", "description": "backend clock, s"},
        "tick": {"type": "integer"},
        "changed": {"type": "string", "enum": ["true", "false"]},
        "root": {"type": "string", "description": "id of the root behaviour"},
        "visited_path": {**_STRINGS, "description": "ids ticked this tick, in the order their ticks ended"},
        "behaviours": {
            "type": "array",
            "description": "every behaviour, parents before children",
            "items": {
                "type": "object",
                "required": ["id", "name", "status"],
                "properties": {
                    "id": {"type": "string"},
                    "name": {"type": "string"},
                    "status": {"type": "string", "enum": ["INVALID", "FAILURE", "RUNNING", "SUCCESS"]},
                    "colour": {"type": "string"},
                    "children": {**_STRINGS, "description": "ids, left to right"},
                    "details": {"type": "string", "description": "feedback message"},
                    "type": {"type": "string"},
                    "class_name": {"type": "string"},
                    "parent": {"type": "string", "description": "id of the parent; empty for the root"},
                    "visited": {"type": "boolean"},
                    "is_active": {"type": "boolean"},
                    "parameters": {"type": "array", "items": {
                        "type": "object",
                        "properties": {"name": {"type": "string"},
                                       "value": {"type": "string", "description": "the value as JSON text"},
                                       "unit": {"type": "string"}, "frame": {"type": "string"}}}},
                    "blackboard": {"type": "array", "items": {
                        "type": "object",
                        "properties": {"key": {"type": "string"},
                                       "access": {"type": "string", "enum": ["r", "w", "x"]}}}},
                },
            },
        },
        "blackboard": {
            "type": "object",
            "properties": {
                "entries": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"key": {"type": "string"},
                                   "value": {"type": "string", "description": "the value as JSON text"},
                                   "text": {"type": "string", "description": "short text of the value"},
                                   "read": {**_STRINGS, "description": "behaviours reading the key"},
                                   "write": {**_STRINGS, "description": "behaviours writing the key"},
                                   "exclusive": {**_STRINGS, "description": "exclusive writers"}}}},
            },
        },
        "activity": {**_STRINGS, "description": "blackboard activity since the last tick, HTML"},
        "activity_items": {"type": "array", "items": {
            "type": "object",
            "properties": {"key": {"type": "string"}, "client_name": {"type": "string"},
                           "client_id": {"type": "string"}, "activity_type": {"type": "string"},
                           "previous_value": {"type": "string", "description": "JSON text"},
                           "current_value": {"type": "string", "description": "JSON text"}}}},
    },
)

#: the ``motion_plan`` field of an arm motion's event (``source: arm/<robot>``): what was planned,
#: how, and how clear it stays (``py_trees_manipulation.collision.arm_planner.MotionPlan.summary``)
MOTION_PLAN_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "robot": {"type": "string"},
        "action": {"type": "string", "description": "move_joints, move_to_pose or move_cartesian"},
        "ok": {"type": "boolean", "description": "false: refused before the robot moved (see reason)"},
        "reason": {"type": "string"},
        "kind": {"type": "string", "description": "joints, pose or cartesian"},
        "mode": {"type": "string", "description": "straight, planned or cartesian"},
        "planner": {"type": "string", "description": "the OMPL planner, empty for a straight motion"},
        "planning_time_s": {"type": "number", "description": "wall time, s"},
        "path_length_rad": {"type": "number"},
        "duration_s": {"type": "number"},
        "min_clearance_m": {"type": "number", "description": "planned path, sampled; 0.25 = nothing nearer"},
        "clearance_pair": {"type": "string"},
        "executed_min_clearance_m": {"type": "number", "description": "measured in the simulator"},
        "checks": {"type": "integer"},
        "attached": {"type": "string", "description": "the held object, empty when none"},
        "waypoints": {"type": "array", "items": {"type": "object", "properties": {
            "positions": {"type": "array", "items": {"type": "number"}, "description": "rad"}}}},
        "joint_names": {"type": "array", "items": {"type": "string"}},
        "lower": {"type": "array", "items": {"type": "number"}, "description": "rad"},
        "upper": {"type": "array", "items": {"type": "number"}, "description": "rad"},
        "velocity_limits": {"type": "array", "items": {"type": "number"}, "description": "rad/s"},
        "allowed_contacts": {"type": "array", "items": {"type": "string"}},
    },
}

EVENT_SCHEMA: dict[str, Any] = _channel_schema(
    "ptm.Event",
    required=["time_s", "text"],
    properties={
        "time_s": {"type": "number", "description": "backend clock, s"},
        "tick": {"type": "integer"},
        "source": {"type": "string"},
        "text": {"type": "string"},
        "motion_plan": MOTION_PLAN_SCHEMA,
        "grasp_choice": {
            "type": "object",
            "description": "ChooseGrasp's verdict (source grasp/<robot>)",
            "properties": {
                "object": {"type": "string"},
                "robot": {"type": "string"},
                "chosen": {"type": "string", "description": "the chosen grasp, empty when none is feasible"},
                "joint_distance_rad": {"type": "number", "description": "the chosen grasp's ranking cost"},
                "summary": {"type": "string", "description": "the candidates grouped by verdict"},
                "candidates": {"type": "array", "items": {"type": "object", "properties": {
                    "grasp": {"type": "string"}, "feasible": {"type": "boolean"},
                    "rejection": {"type": "string", "description": "approach, width, unreachable, pregrasp_collision, "
                                  "grasp_collision, place, approach_line; empty when feasible"},
                    "reason": {"type": "string"},
                    "joint_distance_rad": {"type": "number", "description": "ranking cost, where computed"}}}},
                "from_check": {"type": "boolean", "description": "the choice the check before the run made, "
                               "taken by the run (py_trees_manipulation.collision.kept_plans)"},
                "note": {"type": "string", "description": "why the check's choice was not taken (evaluated again)"},
            },
        },
    },
)

METADATA_SCHEMA: dict[str, Any] = _channel_schema(
    "ptm.RunMetadata",
    properties={
        "source": {"type": "string", "description": "task file"},
        "extra": {"type": "object", "description": "seed, tick rate, the CLI arguments (args) and other run facts",
                  "properties": {"seed": {"type": "integer"}, "tick_hz": {"type": "number", "description": "Hz"}}},
        "backend": {"type": "string"},
        "started_wall_iso": {"type": "string"},
        "format_version": {"type": "integer"},
        "py_trees_manipulation_version": {"type": "string"},
    },
)

SUMMARY_SCHEMA: dict[str, Any] = _channel_schema(
    "ptm.RunSummary",
    properties={
        "status": {"type": "string", "description": "SUCCESS, FAILURE, TIMEOUT, ERROR, INTERRUPTED..."},
        "ticks": {"type": "integer"},
        "time_s": {"type": "number"},
        "sim_time_s": {"type": "number"},
        "wall_time_s": {"type": "number"},
        "error": {"type": "string"},
        "metrics": {"type": "object", "properties": {}, "description": "run metrics (backend and /metrics/*)"},
        "closed_by": {"type": "string", "enum": ["on_end", "close", "finaliser"]},
    },
)

_POSE_SCHEMA = {
    "type": "object",
    "properties": {
        "position": {"type": "array", "items": {"type": "number"}, "description": "m"},
        "orientation": {"type": "array", "items": {"type": "number"}, "description": "w, x, y, z"},
    },
}


def _json_type_schema(value: Any) -> Optional[dict[str, Any]]:
    """The Foxglove-readable JSON Schema of a telemetry value, or ``None`` when its type cannot be
    said there (an array of arrays, an array whose first item is null): the field is then left
    undeclared (still in the messages). ``None`` values are declared strings (a held object's
    name, e.g.); an empty array, an array of numbers."""
    if isinstance(value, (bool, np.bool_)):
        return {"type": "boolean"}
    if isinstance(value, (int, np.integer)):
        return {"type": "integer"}
    if isinstance(value, (float, np.floating)):
        return {"type": "number"}
    if isinstance(value, str) or value is None:
        return {"type": "string"}
    if isinstance(value, (list, tuple, np.ndarray)):
        seq = list(value)
        if not seq:
            return {"type": "array", "items": {"type": "number"}}
        first = seq[0]
        if first is None or isinstance(first, (list, tuple, np.ndarray)):
            return None
        items = _json_type_schema(first)
        return {"type": "array", "items": items} if items is not None else None
    if isinstance(value, Mapping):
        if set(value) == {"position", "orientation"}:
            return json.loads(json.dumps(_POSE_SCHEMA))
        props = {}
        for k, v in value.items():
            sub = _json_type_schema(v)
            if sub is not None:
                props[str(k)] = sub
        return {"type": "object", "properties": props}
    return None


def telemetry_schema(name: str, sample: dict[str, Any]) -> dict[str, Any]:
    """JSON Schema of the ``/telemetry/<name>`` channel, inferred from the first sample (the
    values as the backend gives them, before :func:`to_jsonable`: a NaN force is still a number).
    Readable by Foxglove (see :func:`_json_type_schema`); further fields are allowed."""
    props: dict[str, Any] = {"time_s": {"type": "number", "description": "backend clock, s"},
                             "tick": {"type": "integer"}}
    for k, v in sample.items():
        sub = _json_type_schema(v) if k not in props else None
        if sub is not None:
            props[str(k)] = sub
    return _channel_schema(f"ptm.Telemetry.{name}", props, additionalProperties=True)


def _ns(time_s: float) -> int:
    return max(0, int(round(float(time_s) * 1e9)))


_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=False)


def _dumps(obj: Any) -> bytes:
    return _ENCODER.encode(obj).encode("utf-8")


def _telemetry_json(head: dict[str, Any], values: Any) -> bytes:
    """JSON of ``{**head, **values}``: plain values (floats, lists, dicts: what backends give) are
    encoded as they are, anything else (numpy arrays and scalars, (4, 4) poses, enums, NaN)
    through :func:`to_jsonable`."""
    body = dict(head)
    try:
        body.update(values)
        return _dumps_plain(body)
    except (TypeError, ValueError):
        body = dict(head)
        body.update(to_jsonable(values))
        return _dumps(body)


def _refuse(obj: Any) -> Any:
    raise TypeError(type(obj).__name__)


_PLAIN_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=False, default=_refuse)


def _dumps_plain(obj: Any) -> bytes:
    # numpy float64 subclasses float, so json writes it as a float; any other non-JSON type
    # raises and the caller falls back to to_jsonable. (Only an Enum that subclasses str or int
    # differs: json writes its value where to_jsonable writes its name.)
    return _PLAIN_ENCODER.encode(obj).encode("utf-8")


def _summary_body(summary: Optional[dict[str, Any]], tick: int, time_s: float, wall_s: float,
                  closed_by: str) -> dict[str, Any]:
    body = {k: v for k, v in (summary or {"status": "UNKNOWN", "error": "run log closed without on_end"}).items()
            if not str(k).startswith("_")}
    body.setdefault("ticks", tick)
    body.setdefault("time_s", time_s)
    body["wall_time_s"] = wall_s
    body["closed_by"] = closed_by
    return to_jsonable(body)


class _Sink:
    """The open writer and what is needed to finish it; shared with the finaliser."""

    def __init__(self, path: Path, compression: CompressionType, chunk_size: int) -> None:
        self.path = path
        self.file: IO[bytes] = open(path, "wb")
        self.writer = Writer(self.file, compression=compression, chunk_size=chunk_size)
        self.writer.start(profile=PROFILE, library=f"py_trees_manipulation {__version__}")
        self.lock = threading.Lock()
        self.closed = False
        self.tick = 0
        self.time_s = 0.0
        self.t0_wall = time.monotonic()
        self.summary_channel: Optional[int] = None

    def close(self, summary: Optional[dict[str, Any]], closed_by: str) -> None:
        with self.lock:
            if self.closed:
                return
            self.closed = True
            try:
                if self.summary_channel is not None:
                    body = _summary_body(summary, self.tick, self.time_s, time.monotonic() - self.t0_wall, closed_by)
                    t = _ns(self.time_s)
                    self.writer.add_message(self.summary_channel, t, _dumps(body), t)
                self.writer.finish()
            finally:
                self.file.close()


class RunLogger:
    """Run observer writing the run's channels to an MCAP file and/or a live Foxglove server.

    Args:
        path: output file (``.mcap``); parent directories are created. Overwritten if present.
            ``None``: no file (only ``live``).
        snapshots: write ``/tree/snapshot`` every tick (the viewer's replay needs it).
        telemetry: write ``/telemetry/<name>`` from ``RunState.telemetry()``.
        flush_interval_s: wall-clock seconds between flushes of the writer (each flush closes a
            compressed chunk; smaller means less lost if the process is killed, larger files).
        compression: ``"zstd"`` (default), ``"lz4"`` or ``"none"``.
        metadata: extra fields merged into ``/run/metadata`` ``extra`` (e.g. the CLI arguments).
        foxglove: also write Foxglove's well-known channels ``/tf``, ``/scene`` and ``/log``
            (:mod:`.foxglove`; needs the ``foxglove-sdk`` package, imported at ``on_start``;
            without it they are skipped with a warning).
        live: a :class:`~.foxglove.FoxgloveLive` server that gets every message too.

    The observer never raises out of its hooks: an error is logged once, kept in ``errors`` and
    logging stops; ``on_end`` still tries to finish the file.
    """

    def __init__(
        self,
        path: Union[str, Path, None],
        *,
        snapshots: bool = True,
        telemetry: bool = True,
        flush_interval_s: float = 1.0,
        compression: str = "zstd",
        metadata: Optional[dict[str, Any]] = None,
        foxglove: bool = True,
        live: Any = None,
    ) -> None:
        self.path = Path(path) if path is not None else None
        self.snapshots = snapshots
        self.telemetry = telemetry
        self.flush_interval_s = flush_interval_s
        self.compression = {"zstd": CompressionType.ZSTD, "lz4": CompressionType.LZ4,
                            "none": CompressionType.NONE}[compression]
        self.metadata = dict(metadata or {})
        self.foxglove = foxglove
        self.live = live
        self.errors: list[str] = []
        self._sink: Optional[_Sink] = None
        self._finalizer: Optional[weakref.finalize] = None
        self._channels: dict[str, tuple[Optional[int], Any]] = {}
        self._events_seen = 0
        self._builder: Optional[SnapshotBuilder] = None
        self._wellknown: Any = None
        self._last_flush = 0.0
        self._failed = False
        self._open_ = False
        self._t0_wall = time.monotonic()
        self._tick = 0
        self._time_s = 0.0

    # -- observer hooks ----------------------------------------------------------------------
    def on_start(self, run: Any) -> None:
        try:
            self._open(run)
            if self.snapshots:
                self._builder = shared_builder(run.tree)
            extra = dict(run.extra)
            extra.update(self.metadata)
            meta = {
                "source": str(run.source),
                "extra": to_jsonable(extra),
                "backend": type(run.backend).__name__,
                "started_wall_iso": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                "format_version": FORMAT_VERSION,
                "py_trees_manipulation_version": __version__,
            }
            if self._sink is not None:
                self._sink.writer.add_metadata(
                    "run", {k: v if isinstance(v, str) else json.dumps(v) for k, v in meta.items()})
                self._sink.time_s = float(run.time_s)
            t = _ns(run.time_s)
            self._emit(TOPIC_METADATA, t, _dumps(meta))
            self._time_s = float(run.time_s)
            if self._wellknown is not None:
                self._emit(TOPIC_SCENE, t, self._wellknown.scene_update(run.time_s))
                self._emit(TOPIC_TF, t, self._wellknown.transforms(run.time_s))
            self._events_seen = 0
            self._write_events(run)
        except Exception as exc:  # noqa: BLE001 - observers must not raise
            self._fail(exc)

    def on_tick(self, run: Any) -> None:
        if self._failed or not self._open_ or self.closed:
            return
        try:
            self._tick, self._time_s = int(run.tick), float(run.time_s)
            sink = self._sink
            if sink is not None:
                sink.tick, sink.time_s = self._tick, self._time_s
            t = _ns(run.time_s)
            emit = self._emit
            self._write_events(run)
            if self.telemetry:
                head = {"time_s": float(run.time_s), "tick": int(run.tick)}
                for name, values in run.telemetry().items():
                    topic = TELEMETRY_PREFIX + name
                    if topic not in self._channels:
                        raw = dict(head)
                        raw.update(values)
                        self._register(topic, telemetry_schema(name, raw))
                        body = dict(head)
                        body.update(to_jsonable(values))
                        data = _dumps(body)
                    else:
                        data = _telemetry_json(head, values)
                    emit(topic, t, data)
            wk = self._wellknown
            snap = None
            if self.snapshots:
                if self._builder is None:
                    self._builder = shared_builder(run.tree)
                snap = self._builder.build(tick=run.tick, timestamp=run.time_s)
            if wk is not None:
                emit(TOPIC_TF, t, wk.transforms(run.time_s))
                if snap is not None:
                    statuses = ((b["name"], b["status"], b["details"]) for b in snap["behaviours"].values())
                else:
                    statuses = ((b.name, b.status.value, b.feedback_message or "") for b in run.tree.root.iterate())
                for data in wk.status_logs(statuses, run.time_s):
                    emit(TOPIC_LOG, t, data)
            if snap is not None:
                assert self._builder is not None
                emit(TOPIC_SNAPSHOT, t, self._builder.build_record_json(tick=run.tick, timestamp=run.time_s),
                     sequence=int(run.tick))
            now = time.monotonic()
            if sink is not None and now - self._last_flush >= self.flush_interval_s:
                sink.writer.flush()
                self._last_flush = now
        except Exception as exc:  # noqa: BLE001
            self._fail(exc)

    def on_end(self, run: Any, summary: dict[str, Any]) -> None:
        if not self._open_:
            return
        try:
            if not self._failed and not self.closed:
                self._tick, self._time_s = int(run.tick), float(run.time_s)
                if self._sink is not None:
                    self._sink.tick, self._sink.time_s = self._tick, self._time_s
                self._write_events(run)
        except Exception as exc:  # noqa: BLE001
            self._fail(exc)
        self._close(summary, "on_end")

    # -- other API ---------------------------------------------------------------------------
    def close(self, summary: Optional[dict[str, Any]] = None) -> None:
        """Finish the file now (idempotent); ``on_end`` does this for a normal run."""
        self._close(summary, "close")

    @property
    def closed(self) -> bool:
        if self._sink is not None:
            return self._sink.closed
        return not self._open_

    # -- internals ---------------------------------------------------------------------------
    def _open(self, run: Any) -> None:
        if self._open_ and not self.closed:
            return
        self._channels = {}
        self._sink = None
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._sink = _Sink(self.path, self.compression, chunk_size=512 * 1024)
            self._finalizer = weakref.finalize(self, _Sink.close, self._sink, None, "finaliser")
        self._open_ = True
        self._t0_wall = time.monotonic()
        self._register(TOPIC_METADATA, METADATA_SCHEMA)
        self._register(TOPIC_EVENTS, EVENT_SCHEMA)
        if self.snapshots:
            self._register(TOPIC_SNAPSHOT, SNAPSHOT_SCHEMA)
        self._register(TOPIC_SUMMARY, SUMMARY_SCHEMA)
        if self._sink is not None:
            self._sink.summary_channel = self._channels[TOPIC_SUMMARY][0]
        self._wellknown = None
        if self.foxglove:
            try:
                from py_trees_manipulation.viewer.foxglove import WellKnownChannels

                self._wellknown = WellKnownChannels(run.backend)
            except ImportError as exc:
                logger.warning("run log: no Foxglove well-known channels (/tf, /scene, /log): %s "
                               "(pip install foxglove-sdk)", exc)
            else:
                for topic, schema in self._wellknown.schemas().items():
                    self._register_raw(topic, schema.name, schema.encoding, bytes(schema.data), "protobuf")
        self._last_flush = time.monotonic()

    def _register(self, topic: str, schema: dict[str, Any]) -> None:
        self._register_raw(topic, schema["title"], "jsonschema", _dumps(schema), "json")

    def _register_raw(self, topic: str, name: str, encoding: str, data: bytes, message_encoding: str) -> None:
        cid = None
        if self._sink is not None:
            w = self._sink.writer
            sid = w.register_schema(name=name, encoding=encoding, data=data)
            cid = w.register_channel(topic=topic, message_encoding=message_encoding, schema_id=sid)
        live = None
        if self.live is not None:
            live = self.live.add_channel(topic, name, encoding, data, message_encoding)
        self._channels[topic] = (cid, live)

    def _emit(self, topic: str, t: int, data: bytes, sequence: int = 0) -> None:
        cid, live = self._channels[topic]
        if cid is not None:
            self._sink.writer.add_message(cid, t, data, t, sequence=sequence)  # type: ignore[union-attr]
        if live is not None:
            self.live.log(live, data, t)

    def _write_events(self, run: Any) -> None:
        events = run.events
        if self._events_seen > len(events):  # the list was replaced or cleared
            self._events_seen = 0
        wk = self._wellknown
        for ev in events[self._events_seen:]:
            body = {"time_s": float(run.time_s), "source": "", "text": "", "tick": int(run.tick)}
            body.update(to_jsonable(dict(ev)))
            t = _ns(body["time_s"] if isinstance(body["time_s"], (int, float)) else run.time_s)
            self._emit(TOPIC_EVENTS, t, _dumps(body))
            if wk is not None:
                self._emit(TOPIC_LOG, t, wk.event_log(body, run.time_s))
        self._events_seen = len(events)

    def _fail(self, exc: BaseException) -> None:
        msg = _why(exc)
        self.errors.append(msg)
        if not self._failed:
            logger.warning("run log %s: logging stopped after error: %s", self.path or "(live)", msg)
        self._failed = True

    def _close(self, summary: Optional[dict[str, Any]], closed_by: str) -> None:
        if not self._open_:
            return
        if self.live is not None and TOPIC_SUMMARY in self._channels and not self.closed:
            try:
                body = _summary_body(summary, self._tick, self._time_s, time.monotonic() - self._t0_wall, closed_by)
                self.live.log(self._channels[TOPIC_SUMMARY][1], _dumps(body), _ns(self._time_s))
            except Exception as exc:  # noqa: BLE001
                self._fail(exc)
        if self._sink is None:
            self._open_ = False
            return
        try:
            self._sink.close(summary, closed_by)
        except Exception as exc:  # noqa: BLE001
            self._fail(exc)
        if self._finalizer is not None:
            self._finalizer.detach()


# ------------------------------------------------------------------------------------------
# Reading
# ------------------------------------------------------------------------------------------


@dataclass
class RunLog:
    """A run log read back (see :func:`read_run_log`).

    Attributes:
        path: the file.
        metadata: the ``/run/metadata`` message (``{}`` if missing).
        snapshots: ``/tree/snapshot`` messages in tick order (empty if not requested).
        telemetry: stream name (without ``/telemetry/``) -> list of samples in tick order.
        events: ``/events`` messages in order.
        summary: the ``/summary`` message, or ``None`` if the file was never finished.
        complete: True if the file ends with a valid MCAP footer.
        error: why reading stopped early (``complete=False``), else ``None``.
    """

    path: Path
    metadata: dict[str, Any] = field(default_factory=dict)
    snapshots: list[dict[str, Any]] = field(default_factory=list)
    telemetry: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)
    summary: Optional[dict[str, Any]] = None
    complete: bool = False
    error: Optional[str] = None

    def series(self, stream: str, field_name: str) -> tuple[np.ndarray, np.ndarray]:
        """``(time_s (n,), values (n, ...))`` of one telemetry field; samples missing it are skipped.

        Raises:
            KeyError: unknown stream, or no sample has the field.
        """
        samples = [s for s in self.telemetry[stream] if field_name in s and s[field_name] is not None]
        if not samples:
            raise KeyError(f"telemetry stream {stream!r} has no field {field_name!r}")
        t = np.array([s["time_s"] for s in samples], dtype=np.float64)
        return t, np.array([s[field_name] for s in samples])

    def pose_series(self, stream: str, field_name: str = "pose") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(time_s (n,), positions (n, 3) m, quaternions (n, 4) w, x, y, z)`` of a pose field."""
        samples = [s for s in self.telemetry[stream] if isinstance(s.get(field_name), dict)]
        if not samples:
            raise KeyError(f"telemetry stream {stream!r} has no pose field {field_name!r}")
        t = np.array([s["time_s"] for s in samples], dtype=np.float64)
        p = np.array([s[field_name]["position"] for s in samples], dtype=np.float64)
        q = np.array([s[field_name]["orientation"] for s in samples], dtype=np.float64)
        return t, p, q


def _why(exc: BaseException) -> str:
    """Why reading stopped, as a phrase (the mcap reader's EndOfFile has no text)."""
    if type(exc).__name__ == "EndOfFile" or isinstance(exc, EOFError):
        return "the file ends in the middle of a record"
    return f"{type(exc).__name__}: {exc}"


def read_run_log(path: Union[str, Path], *, snapshots: bool = True) -> RunLog:
    """Read a run log written by :class:`RunLogger`, finished or not.

    Args:
        path: the ``.mcap`` file.
        snapshots: decode ``/tree/snapshot`` messages (skip them for plots: much faster).

    Returns:
        A :class:`RunLog`. An unfinished or truncated file yields what precedes the damage, with
        ``complete=False`` and ``error`` set.

    Raises:
        FileNotFoundError: no such file.
        ValueError: the file is not a run log: not an MCAP file, an MCAP file another program wrote
            (its header's profile is not ``ptm``), or one in which no ``/run/metadata`` message can
            be read (random bytes after the MCAP header, a run killed before its first tick).
    """
    path = Path(path)
    log = RunLog(path=path)
    schemas: dict[int, Schema] = {}
    channels: dict[int, Channel] = {}
    header: Optional[Header] = None
    with open(path, "rb") as f:
        try:
            # a record cannot be longer than the file: a damaged length must not make the reader
            # allocate gigabytes
            reader = StreamReader(f, skip_magic=False, record_size_limit=max(1, path.stat().st_size))
            for record in reader.records:
                if isinstance(record, Header):
                    header = record
                    if record.profile != PROFILE:
                        raise ValueError(f"{path} is an MCAP file but not a run log of ptm run (its profile is "
                                         f"{record.profile!r}, library {record.library!r}): open it in Foxglove")
                elif isinstance(record, Schema):
                    schemas[record.id] = record
                elif isinstance(record, Channel):
                    channels[record.id] = record
                elif isinstance(record, Message):
                    chan = channels.get(record.channel_id)
                    if chan is None:
                        continue
                    topic = chan.topic
                    if topic == TOPIC_SNAPSHOT and not snapshots:
                        continue
                    if chan.message_encoding != "json":
                        continue  # Foxglove's well-known channels (protobuf)
                    body = json.loads(record.data)
                    if topic == TOPIC_SNAPSHOT:
                        log.snapshots.append(snapshot_from_record(body) if is_record(body) else body)
                    elif topic.startswith(TELEMETRY_PREFIX):
                        log.telemetry.setdefault(topic[len(TELEMETRY_PREFIX):], []).append(body)
                    elif topic == TOPIC_EVENTS:
                        log.events.append(body)
                    elif topic == TOPIC_SUMMARY:
                        log.summary = body
                    elif topic == TOPIC_METADATA:
                        log.metadata = body
                elif isinstance(record, Metadata):
                    pass
                elif isinstance(record, Footer):
                    log.complete = True
        except InvalidMagic as exc:
            raise ValueError(f"{path} is not an MCAP file: {exc}") from exc
        except McapError as exc:
            log.error = _why(exc)
        except ValueError as exc:
            if header is not None and header.profile != PROFILE:
                raise
            log.error = _why(exc)
        except (struct.error, EOFError, OSError) as exc:
            log.error = _why(exc)
        except Exception as exc:  # noqa: BLE001 - e.g. a zstd error in a truncated chunk
            log.error = _why(exc)
    if header is None:
        raise ValueError(f"{path} is not a run log: the MCAP magic is not followed by an MCAP header record "
                         f"({log.error or 'nothing after it'})")
    if not log.metadata:
        raise ValueError(f"{path} is not a readable run log: no /run/metadata message could be read "
                         f"({log.error or 'the file has none'}); a run killed before its first tick leaves no run")
    if not log.complete and log.error is None:
        log.error = "file ends without an MCAP footer (run log not finished)"
    return log


def unfinished_note(log: RunLog) -> str:
    """The warning for an unfinished log (``""`` for a finished one): what it holds and how to give
    indexed readers a copy they open."""
    if log.complete:
        return ""
    return (f"{log.path} is not finished (the run was killed or is still running: {log.error}); shown up to where "
            f"it ends. Foxglove and other indexed MCAP readers refuse such a file: "
            f"'ptm log recover {log.path}' writes a finished copy")


@dataclass
class Recovery:
    """What :func:`recover_run_log` copied.

    Attributes:
        source, output: the files. messages, channels, schemas, metadata, attachments: records
        copied. chunks_lost: chunks that could not be decoded (a bad CRC, a cut end). complete: the
        source was a finished file already. error: why reading the source stopped, or None.
        bytes_read: how far into the source the readable records reach.
    """

    source: Path
    output: Path
    messages: int = 0
    channels: int = 0
    schemas: int = 0
    metadata: int = 0
    attachments: int = 0
    chunks_lost: int = 0
    complete: bool = False
    error: Optional[str] = None
    bytes_read: int = 0


def recover_run_log(path: Union[str, Path], output: Union[str, Path, None] = None) -> Recovery:
    """Copy every record of an MCAP file that can still be read into a new, finished MCAP file (with
    its summary section and indexes), as ``mcap recover`` does: schemas, channels, messages,
    metadata and attachments in file order; a chunk that cannot be decoded is skipped; reading stops
    at the first record that cannot be read (the end cut by a kill).

    Args:
        path: the MCAP file (a run log killed mid-run, or any MCAP file).
        output: the new file; default ``<stem>.recovered.mcap`` next to it. Never the source.

    Returns:
        A :class:`Recovery`.

    Raises:
        FileNotFoundError: no such file.
        ValueError: not an MCAP file, output equal to the source, or nothing readable after the magic.
    """
    src = Path(path)
    out = Path(output) if output is not None else src.with_name(src.stem + ".recovered.mcap")
    if out.exists() and out.resolve() == src.resolve():
        raise ValueError(f"the recovered copy must not overwrite {src}: give another output file")
    rec = Recovery(source=src, output=out)
    size = src.stat().st_size
    schema_ids: dict[int, int] = {}
    channel_ids: dict[int, int] = {}
    writer: Optional[Writer] = None
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".part")
    with open(src, "rb") as f, open(tmp, "wb") as sink:
        reader = StreamReader(f, skip_magic=False, emit_chunks=True, record_size_limit=max(1, size))
        records = reader.records

        def copy(record: Any) -> None:
            nonlocal writer
            if isinstance(record, Header):
                writer = Writer(sink, compression=CompressionType.ZSTD, chunk_size=512 * 1024)
                writer.start(profile=record.profile, library=record.library)
                return
            if writer is None:
                raise ValueError("no MCAP header record after the magic")
            if isinstance(record, Schema):
                if record.id not in schema_ids:
                    schema_ids[record.id] = writer.register_schema(record.name, record.encoding, record.data)
                    rec.schemas += 1
            elif isinstance(record, Channel):
                if record.id not in channel_ids:
                    channel_ids[record.id] = writer.register_channel(
                        record.topic, record.message_encoding, schema_ids.get(record.schema_id, 0), dict(record.metadata))
                    rec.channels += 1
            elif isinstance(record, Message):
                cid = channel_ids.get(record.channel_id)
                if cid is not None:
                    writer.add_message(cid, record.log_time, record.data, record.publish_time, record.sequence)
                    rec.messages += 1
            elif isinstance(record, Metadata):
                writer.add_metadata(record.name, dict(record.metadata))
                rec.metadata += 1
            elif isinstance(record, Attachment):
                writer.add_attachment(record.create_time, record.log_time, record.name, record.media_type, record.data)
                rec.attachments += 1
            elif isinstance(record, Footer):
                rec.complete = True

        try:
            for record in records:
                if isinstance(record, Chunk):
                    try:
                        inner = breakup_chunk(record, validate_crc=True)
                    except Exception:  # noqa: BLE001 - a bad CRC or compressed data: skip the chunk
                        rec.chunks_lost += 1
                        continue
                    for r in inner:
                        copy(r)
                else:
                    copy(record)
                rec.bytes_read = f.tell()
        except InvalidMagic as exc:
            tmp.unlink(missing_ok=True)
            raise ValueError(f"{src} is not an MCAP file: {exc}") from None
        except ValueError as exc:
            if writer is None:
                tmp.unlink(missing_ok=True)
                raise ValueError(f"{src}: nothing to recover ({exc})") from None
            rec.error = _why(exc)
        except Exception as exc:  # noqa: BLE001 - the cut end: a short read, a record cut in two
            rec.error = _why(exc)
        if writer is None:
            tmp.unlink(missing_ok=True)
            raise ValueError(f"{src}: nothing to recover (no MCAP header record after the magic: {rec.error})")
        writer.finish()
    tmp.replace(out)
    return rec
