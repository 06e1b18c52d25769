"""The viewer's web server answers malformed queries 400 and bounds its connections (threads, timeouts)."""

from __future__ import annotations

import http.client
import socket
import time

import pytest

from py_trees_manipulation.viewer.server import ViewerServer


def _get(server, path, headers=None):
    conn = http.client.HTTPConnection(server.host, server.port, timeout=10)
    try:
        conn.request("GET", path, headers=headers or {})
        r = conn.getresponse()
        return r.status, r.read().decode()
    finally:
        conn.close()


@pytest.fixture
def server():
    s = ViewerServer(port=0, mode="replay", max_connections=2, timeout_s=0.5)
    for i in range(3):
        s.publish({"tick": i})
    yield s
    s.close()


@pytest.fixture
def roomy_server():
    """A replay server whose connection limit a few requests in a row never meet: a finished request's
    thread gives its slot back a little after the client has its answer (later on a busy machine)."""
    s = ViewerServer(port=0, mode="replay", timeout_s=0.5)
    for i in range(3):
        s.publish({"tick": i})
    yield s
    s.close()


def test_malformed_queries_are_400_with_a_message(roomy_server):
    server = roomy_server
    assert _get(server, "/api/snapshots?from=abc") == (
        400, "bad request: 'from' must be an integer (a snapshot sequence number), got 'abc'\n")
    status, body = _get(server, "/events", {"Last-Event-ID": "abc"})
    assert (status, body) == (400, "bad request: the Last-Event-ID header must be an integer (a snapshot sequence "
                                   "number), got 'abc'\n")
    assert _get(server, "/events?from=1.5")[0] == 400
    status, body = _get(server, "/api/snapshots?from=1")
    assert status == 200 and [s["seq"] for s in __import__("json").loads(body)] == [1, 2]


def _closed_by_server(sock, within_s=10.0):
    """True once the server closes ``sock`` (recv gives b'' or a reset), within a generous bound."""
    sock.settimeout(within_s)
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                return True
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


def test_connections_beyond_the_cap_get_503_and_idle_ones_are_closed(server):
    idle = [socket.create_connection((server.host, server.port)) for _ in range(2)]  # hold both threads
    try:
        time.sleep(0.05)  # let the server accept both
        status, body = _get(server, "/api/meta")
        assert (status, body) == (503, "busy: 2 connections already open\n")
        # a client that sends nothing is disconnected after timeout_s, which frees its thread
        assert all(_closed_by_server(s) for s in idle)
        # the handler thread releases its slot just after it closes the socket: on a busy machine the
        # next request may come first, so allow it a few seconds
        deadline, status = time.monotonic() + 5, None
        while time.monotonic() < deadline:
            status = _get(server, "/api/meta")[0]
            if status == 200:
                break
            time.sleep(0.05)
        assert status == 200
    finally:
        for s in idle:
            s.close()


def test_a_stalled_event_stream_is_dropped_and_frees_its_thread():
    s = ViewerServer(port=0, mode="live", max_connections=1, timeout_s=0.5)
    try:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect((s.host, s.port))
        sock.sendall(b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n")  # ... and never reads
        big = b'{"pad":"' + b"x" * 200_000 + b'"}'
        for _ in range(40):  # ~8 MB: far more than the socket buffers hold
            s.publish_json(big)
        deadline = time.monotonic() + 20
        status = None
        while time.monotonic() < deadline:  # the stream's send times out, the slot is released
            status = _get(s, "/api/meta")[0]
            if status == 200:
                break
            time.sleep(0.2)
        assert status == 200
        sock.close()
    finally:
        s.close()


def test_closed_event_streams_free_their_slots_at_once():
    """Issue 36: the cap's clients leave; the next request is served at once (was 503 for up to 10 s)."""
    s = ViewerServer(port=0, mode="live", max_connections=32, timeout_s=30.0)
    try:
        streams = []
        for _ in range(32):
            sock = socket.create_connection((s.host, s.port))
            sock.sendall(b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
            streams.append(sock)
        for sock in streams:  # every stream is open: its meta event arrived
            sock.settimeout(10)
            got = b""
            while b"event: meta" not in got:
                chunk = sock.recv(65536)
                assert chunk, got
                got += chunk
        assert _get(s, "/api/meta")[0] == 503  # the cap holds while they are open
        for sock in streams:
            sock.close()
        t0 = time.monotonic()
        statuses = [_get(s, "/api/meta")[0] for _ in range(5)]
        elapsed = time.monotonic() - t0
        assert statuses == [200] * 5
        assert elapsed < 5.0  # the keep-alive period is 10 s: no request waited for it
    finally:
        s.close()
