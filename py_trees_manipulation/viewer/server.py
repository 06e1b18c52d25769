"""The viewer's web server: our own page plus a Server-Sent Events stream of tree snapshots.

Standard library only (``http.server.ThreadingHTTPServer``); binds 127.0.0.1 by default.

Routes:
    ``GET /``                 the page (``static/index.html``), ``/viewer.js``, ``/viewer.css``.
    ``GET /api/meta``         ``{"mode": "live" | "replay", "source", "count", "first", "ended",
                              "summary"}`` as JSON.
    ``GET /api/snapshots?from=N``  JSON list of ``{"seq", "snapshot"}`` still held, ``seq >= N``.
    ``GET /events``           ``text/event-stream``. Events:
                              ``meta`` (data: as ``/api/meta``), sent first;
                              ``snapshot`` (``id:`` its sequence number, data: the snapshot JSON of
                              :mod:`py_trees_manipulation.viewer.snapshot`), every one held from
                              ``?from=N`` or the ``Last-Event-ID`` header on, then each new one;
                              ``runevent`` (data: ``{"time_s", "source", "text", ...}``);
                              ``end`` (data: the run summary) when the run is over.
                              A ``: keep-alive`` comment every 10 s.

Malformed requests (``?from=abc``, ``Last-Event-ID: abc``) are answered ``400 Bad Request`` with a
one-line message. Connections are bounded: at most ``max_connections`` at once (each has a thread;
one more is answered ``503`` at once, without a thread), and a client that sends nothing, or reads
nothing, for ``timeout_s`` is disconnected (an idle keep-alive connection, a stalled event stream).
An event stream whose client closed the connection frees its slot at once: a waiting stream looks
at its socket every :data:`_GONE_CHECK_S`, and when every slot is taken a new connection first looks
at the streams' sockets: if a client is gone, it wakes that stream and waits up to
:data:`_FULL_WAIT_S` for the slot, else it is refused at once.

Modes: **live** (:class:`LiveViewer`, a run observer, pushes a snapshot per tick) and **replay**
(:func:`serve_log` loads every snapshot of a run log). The server keeps the last ``history``
snapshots (sequence numbers keep counting), so a long live run does not grow without bound.
"""

from __future__ import annotations

import json
import select
import socket
import sys
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Optional, Union
from urllib.parse import parse_qs, urlparse

from py_trees_manipulation import Closing
from py_trees_manipulation.viewer.serving import wait_until_closed
from py_trees_manipulation.viewer.snapshot import SnapshotBuilder, shared_builder, to_jsonable

_STATIC = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/index.html": ("index.html", "text/html; charset=utf-8"),
    "/viewer.js": ("viewer.js", "text/javascript; charset=utf-8"),
    "/viewer.css": ("viewer.css", "text/css; charset=utf-8"),
}

_KEEPALIVE_S = 10.0
#: how often a waiting event stream checks that its client is still connected, s
_GONE_CHECK_S = 0.25
#: how long a connection that finds every slot taken waits for a closed stream to free one, s
_FULL_WAIT_S = 0.5


def _client_gone(sock: Any) -> bool:
    """True when the peer closed ``sock`` (readable with nothing to read, or an error): an event
    stream's client sends nothing after its request, so a readable socket means it went away."""
    try:
        readable, _, errored = select.select([sock], [], [sock], 0)
        if errored:
            return True
        if not readable:
            return False
        return sock.recv(1, socket.MSG_PEEK) == b""
    except (OSError, ValueError):
        return True


class _BadRequest(ValueError):
    """A malformed query or header: answered 400 with this text."""


def _int_arg(text: str, what: str) -> int:
    try:
        return int(text.strip())
    except (ValueError, AttributeError):
        raise _BadRequest(f"{what} must be an integer (a snapshot sequence number), got {text!r}") from None


class _BoundedHTTPServer(ThreadingHTTPServer):
    """ThreadingHTTPServer with at most ``max_connections`` connection threads; one more connection
    gets a 503 written on the socket by the serving thread and is closed."""

    daemon_threads = True

    def __init__(self, address: Any, handler: Any, max_connections: int, on_full: Any = None):
        self._slots = threading.BoundedSemaphore(max(1, int(max_connections)))
        self.max_connections = max(1, int(max_connections))
        self._on_full = on_full  # wakes the event streams to look whether their client is gone
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        got = self._slots.acquire(blocking=False)
        if not got and self._on_full is not None and self._on_full():
            got = self._slots.acquire(timeout=_FULL_WAIT_S)
        if not got:
            body = f"busy: {self.max_connections} connections already open\n".encode()
            try:
                request.settimeout(1.0)
                request.sendall(b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
                                b"Retry-After: 1\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
            except OSError:
                pass
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, TimeoutError, OSError)):
            return  # a client went away or stalled
        print(f"ptm viewer: error serving {client_address[0]}: {type(exc).__name__}: {exc}", file=sys.stderr)


def _static_bytes(name: str) -> bytes:
    return resources.files("py_trees_manipulation.viewer").joinpath("static", name).read_bytes()


class ViewerServer(Closing):
    """Serves the viewer page and streams snapshots to every connected browser.

    Args:
        host: interface to bind; keep ``127.0.0.1`` unless you mean to expose the run.
        port: TCP port; ``0`` picks a free one (see :attr:`port` / :attr:`url`).
        history: snapshots kept for late browsers and the timeline (oldest dropped first).
        mode: ``"live"`` or ``"replay"`` (shown by the page).
        max_connections: connections served at once (threads); more are answered 503.
        timeout_s: a connection that sends nothing or reads nothing for this long is closed.

    The socket is bound and the serving thread started in the constructor. Thread-safe:
    :meth:`publish` may be called from the run's thread while browsers are connected.

    Raises:
        OSError: the port is taken.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *, history: int = 20000,
                 mode: str = "live", source: str = "", max_connections: int = 32, timeout_s: float = 30.0) -> None:
        self.history = int(history)
        self._cond = threading.Condition()
        self._snaps: list[bytes] = []  # JSON of snapshots seq first .. first+len-1
        self._first = 0
        self._events: list[bytes] = []
        self._ended = False
        self._summary: Optional[dict[str, Any]] = None
        self._closed = False
        self._streams: set[Any] = set()  # sockets of the open event streams
        self.meta: dict[str, Any] = {"mode": mode, "source": source}
        self.timeout_s = float(timeout_s)
        self._httpd = _BoundedHTTPServer((host, port), self._handler_class(), max_connections, on_full=self._wake)
        self.host, self.port = self._httpd.server_address[:2]
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="ptm-viewer", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        """``http://host:port/`` of the page."""
        return f"http://{self.host}:{self.port}/"

    # -- feeding ---------------------------------------------------------------------------
    def publish(self, snapshot: dict[str, Any]) -> int:
        """Add a snapshot (a JSON-able dict); returns its sequence number."""
        return self.publish_json(json.dumps(snapshot, separators=(",", ":"), allow_nan=False).encode("utf-8"))

    def publish_json(self, data: bytes) -> int:
        """Add a snapshot already encoded as compact JSON (``SnapshotBuilder.build_json``);
        returns its sequence number."""
        with self._cond:
            self._snaps.append(data)
            if len(self._snaps) > self.history:
                drop = len(self._snaps) - self.history
                del self._snaps[:drop]
                self._first += drop
            self._cond.notify_all()
            return self._first + len(self._snaps) - 1

    def publish_event(self, event: dict[str, Any]) -> None:
        """Add a run event (``{"time_s", "source", "text"}``)."""
        data = json.dumps(to_jsonable(event), separators=(",", ":")).encode("utf-8")
        with self._cond:
            self._events.append(data)
            self._cond.notify_all()

    def set_meta(self, **fields: Any) -> None:
        """Update the ``meta`` fields (``mode``, ``source``...) sent to browsers that connect next."""
        with self._cond:
            self.meta.update(to_jsonable(fields))

    def end(self, summary: Optional[dict[str, Any]] = None) -> None:
        """Mark the run over (browsers get an ``end`` event with ``summary``)."""
        with self._cond:
            self._ended = True
            self._summary = to_jsonable(dict(summary or {}))
            self._cond.notify_all()

    @property
    def count(self) -> int:
        """Snapshots published so far (including any dropped from history)."""
        with self._cond:
            return self._first + len(self._snaps)

    # -- lifetime ----------------------------------------------------------------------------
    def wait(self) -> None:
        """Block until Ctrl-C (KeyboardInterrupt is swallowed) or :meth:`close`, then close."""
        wait_until_closed(lambda: self._closed, self.close)

    def close(self) -> None:
        """Stop serving (idempotent); open event streams end."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
            self._cond.notify_all()
        self._httpd.shutdown()
        self._httpd.server_close()

    # -- HTTP --------------------------------------------------------------------------------
    def _wake(self) -> bool:
        """Every slot is taken: wake the event streams if one's client is gone (that stream then ends
        and frees its slot). Returns whether one is."""
        with self._cond:
            gone = any(_client_gone(s) for s in self._streams)
            if gone:
                self._cond.notify_all()
            return gone

    def _meta_json(self) -> dict[str, Any]:
        with self._cond:
            return dict(self.meta, count=self._first + len(self._snaps), first=self._first,
                        ended=self._ended, summary=self._summary)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = server.timeout_s  # socket timeout: idle and stalled clients are disconnected

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
                pass

            def _send(self, body: bytes, ctype: str, status: int = 200) -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:  # noqa: N802 - http.server API
                url = urlparse(self.path)
                query = parse_qs(url.query)
                try:
                    if url.path in _STATIC:
                        name, ctype = _STATIC[url.path]
                        self._send(_static_bytes(name), ctype)
                    elif url.path == "/api/meta":
                        self._send(json.dumps(server._meta_json()).encode(), "application/json")
                    elif url.path == "/api/snapshots":
                        start = _int_arg(query.get("from", ["0"])[0], "'from'")
                        with server._cond:
                            first = server._first
                            items = [(first + i, d) for i, d in enumerate(server._snaps) if first + i >= start]
                        body = b"[" + b",".join(
                            b'{"seq":%d,"snapshot":%s}' % (seq, d) for seq, d in items) + b"]"
                        self._send(body, "application/json")
                    elif url.path == "/events":
                        if "from" in query:
                            start = _int_arg(query["from"][0], "'from'")
                        else:
                            start = _int_arg(self.headers.get("Last-Event-ID", "-1"), "the Last-Event-ID header") + 1
                        self._stream(max(0, start))
                    else:
                        self._send(b"not found", "text/plain", HTTPStatus.NOT_FOUND)
                except _BadRequest as e:
                    self._send(f"bad request: {e}\n".encode(), "text/plain; charset=utf-8", HTTPStatus.BAD_REQUEST)
                except (BrokenPipeError, ConnectionResetError, TimeoutError):
                    self.close_connection = True

            def _stream(self, start: int) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-store")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                out = self.wfile
                out.write(b"retry: 1000\nevent: meta\ndata: " + json.dumps(server._meta_json()).encode() + b"\n\n")
                out.flush()
                sock = self.connection
                with server._cond:
                    server._streams.add(sock)
                try:
                    self._stream_loop(sock, start)
                finally:
                    with server._cond:
                        server._streams.discard(sock)

            def _stream_loop(self, sock: Any, start: int) -> None:
                out = self.wfile
                nxt, nev, end_sent = start, 0, False
                last_write = time.monotonic()
                while True:
                    with server._cond:
                        while (not server._closed and nxt >= server._first + len(server._snaps)
                               and nev >= len(server._events) and (end_sent or not server._ended)):
                            if _client_gone(sock):
                                return  # the client closed the stream: free the slot now
                            server._cond.wait(timeout=_GONE_CHECK_S)
                            if time.monotonic() - last_write >= _KEEPALIVE_S:
                                break
                        if server._closed:
                            return
                        nxt = max(nxt, server._first)
                        snaps = server._snaps[nxt - server._first:]
                        events = server._events[nev:]
                        ended, summary = server._ended, server._summary
                    chunks = []
                    for i, d in enumerate(snaps):
                        chunks.append(b"event: snapshot\nid: %d\ndata: %s\n\n" % (nxt + i, d))
                    nxt += len(snaps)
                    for d in events:
                        chunks.append(b"event: runevent\ndata: " + d + b"\n\n")
                    nev += len(events)
                    if ended and not end_sent and not snaps:
                        chunks.append(b"event: end\ndata: " + json.dumps(summary).encode() + b"\n\n")
                        end_sent = True
                    if not chunks and time.monotonic() - last_write >= _KEEPALIVE_S:
                        chunks.append(b": keep-alive\n\n")
                    if chunks:
                        out.write(b"".join(chunks))
                        out.flush()
                        last_write = time.monotonic()

        return Handler


class LiveViewer:
    """Run observer pushing one snapshot per tick, and the run's events, to a :class:`ViewerServer`.

    Args:
        server: where to publish.
        min_period_s: wall-clock seconds between published snapshots (``0``: every tick).
            Skipped ticks are simply not shown; the run log still has them all.
    """

    #: the tree page draws no 3D scene (see observers.needs_visual_shapes)
    needs_visual_shapes = False

    def __init__(self, server: ViewerServer, min_period_s: float = 0.0) -> None:
        self.server = server
        self.min_period_s = min_period_s
        self.errors: list[str] = []
        self._builder: Optional[SnapshotBuilder] = None
        self._events_seen = 0
        self._last_pub = -1e9

    def on_start(self, run: Any) -> None:
        try:
            self._builder = shared_builder(run.tree)
            self._events_seen = 0
            self.server.set_meta(mode="live", source=str(run.source))
        except Exception as exc:  # noqa: BLE001 - observers must not raise
            self.errors.append(f"{type(exc).__name__}: {exc}")

    def on_tick(self, run: Any) -> None:
        try:
            for ev in run.events[self._events_seen:]:
                self.server.publish_event(dict(ev))
            self._events_seen = len(run.events)
            now = time.monotonic()
            if now - self._last_pub < self.min_period_s:
                return
            self._last_pub = now
            if self._builder is None:
                self._builder = shared_builder(run.tree)
            self.server.publish_json(self._builder.build_json(tick=run.tick, timestamp=run.time_s))
        except Exception as exc:  # noqa: BLE001
            self.errors.append(f"{type(exc).__name__}: {exc}")

    def on_end(self, run: Any, summary: dict[str, Any]) -> None:
        try:
            for ev in run.events[self._events_seen:]:
                self.server.publish_event(dict(ev))
            self._events_seen = len(run.events)
            if self._builder is not None and self.min_period_s > 0 and run.tick > 0:
                # the final state is shown even when throttling skipped the last tick
                self.server.publish_json(self._builder.build_json(tick=run.tick, timestamp=run.time_s))
            self.server.end(summary)
        except Exception as exc:  # noqa: BLE001
            self.errors.append(f"{type(exc).__name__}: {exc}")


def open_live(port: Optional[int] = None, host: str = "127.0.0.1", *, quiet: bool = False,
              min_period_s: float = 0.0) -> tuple[LiveViewer, ViewerServer]:
    """Start a live viewer: returns ``(observer, server)``; pass the observer to the runner.

    Prints ``ptm viewer: http://127.0.0.1:PORT/`` unless ``quiet``. Call ``server.wait()`` after
    the run to keep the page up until Ctrl-C, or ``server.close()``.
    """
    server = ViewerServer(host=host, port=port or 0, mode="live")
    if not quiet:
        print(f"ptm viewer: {server.url}", flush=True)
    return LiveViewer(server, min_period_s=min_period_s), server


def serve_log(path: Union[str, Path], port: Optional[int] = None, block: bool = True,
              host: str = "127.0.0.1", *, quiet: bool = False) -> ViewerServer:
    """Replay a run log in the viewer.

    Args:
        path: a run log (:mod:`py_trees_manipulation.viewer.runlog`); unfinished logs work too.
        port: TCP port (``None``/``0``: a free one).
        block: serve until Ctrl-C, then close; otherwise return the running server.

    Returns:
        The server (already closed if ``block``).

    Raises:
        FileNotFoundError, ValueError: as :func:`~py_trees_manipulation.viewer.runlog.read_run_log`.
    """
    from py_trees_manipulation.viewer.runlog import read_run_log

    log = read_run_log(path)
    server = ViewerServer(host=host, port=port or 0, mode="replay", history=max(1, len(log.snapshots)),
                          source=str(log.metadata.get("source", path)))
    server.set_meta(log=str(path), complete=log.complete)
    for snap in log.snapshots:
        server.publish(snap)
    for ev in log.events:
        server.publish_event(ev)
    server.end(log.summary or {"status": "UNKNOWN", "error": log.error or "no summary"})
    if not quiet and not log.complete:
        from py_trees_manipulation.viewer.runlog import unfinished_note

        print(f"ptm: warning: {unfinished_note(log)}", file=sys.stderr, flush=True)
    if not quiet:
        print(f"ptm viewer: {server.url}  (replay of {path}, {len(log.snapshots)} ticks"
              f"{'' if log.complete else ', log not finished'}; Ctrl-C to stop)", file=sys.stdout, flush=True)
    if block:
        server.wait()
    return server
