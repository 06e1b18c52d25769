"""``ptm run --foxglove``: a Foxglove client connects while the run goes on.

The client speaks as Foxglove does: a WebSocket offering the subprotocol ``foxglove.sdk.v1``;
the server sends ``serverInfo`` and ``advertise`` (JSON text frames); the client sends
``subscribe``; data arrives in binary ``messageData`` frames (opcode 1, subscription id
uint32, log time uint64 ns, then the message). The run is ``--realtime`` so it lasts a few wall
seconds.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("foxglove")
pytest.importorskip("pybullet")
websockets = pytest.importorskip("websockets")

ROOT = Path(__file__).resolve().parents[2]


def _decoder(channel):
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    pool = descriptor_pool.DescriptorPool()
    for fd in descriptor_pb2.FileDescriptorSet.FromString(base64.b64decode(channel["schema"])).file:
        pool.Add(fd)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(channel["schemaName"]))


async def _client(url: str, proc: subprocess.Popen) -> dict:
    got: dict = {"advertised": {}, "tf": [], "snapshots": 0, "server_info": None}
    async with websockets.connect(url, subprotocols=["foxglove.sdk.v1"], max_size=None) as ws:
        assert ws.subprotocol == "foxglove.sdk.v1"
        subscribed: dict[int, str] = {}
        pending: list = []
        decoder = None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(got["tf"]) < 20:
            try:
                frame = await asyncio.wait_for(ws.recv(), timeout=30)
            except websockets.exceptions.ConnectionClosed as e:  # the run ended: check what came
                got["closed"] = str(e)
                break
            if isinstance(frame, str):
                msg = json.loads(frame)
                if msg["op"] == "serverInfo":
                    got["server_info"] = msg
                elif msg["op"] == "advertise":
                    subs = []
                    for ch in msg["channels"]:
                        got["advertised"][ch["topic"]] = ch
                        if ch["topic"] in ("/tf", "/tree/snapshot"):
                            sid = len(subscribed) + 1
                            subscribed[sid] = ch["topic"]
                            subs.append({"id": sid, "channelId": ch["id"]})
                            if ch["topic"] == "/tf":
                                decoder = _decoder(ch)
                    if subs:
                        await ws.send(json.dumps({"op": "subscribe", "subscriptions": subs}))
                        pending.extend(subs)
                elif msg["op"] == "status" and (m := re.search(r"Unknown channel ID: (\d+)", msg.get("message", ""))):
                    # foxglove-sdk sends an advertise before it adds the channel to the client's map
                    # (rust/foxglove/src/websocket/connected_client.rs, advertise_channels), so a
                    # subscription sent at once can come first and be refused (2 of 3 full-suite runs
                    # here): ask for that channel again, as any client may
                    again = [sub for sub in pending if sub["channelId"] == int(m.group(1))]
                    got.setdefault("resubscribed", []).extend(again)
                    if again:
                        await asyncio.sleep(0.05)
                        await ws.send(json.dumps({"op": "subscribe", "subscriptions": again}))
                else:  # other status, unadvertise...: kept for the failure message
                    got.setdefault("other", []).append(msg)
                continue
            opcode = frame[0]
            if opcode != 1:
                continue
            sid, log_time = struct.unpack_from("<IQ", frame, 1)
            payload = frame[13:]
            if subscribed.get(sid) == "/tf":
                tf = decoder.FromString(payload)
                got["tf"].append((log_time, tf, proc.poll() is None))
            elif subscribed.get(sid) == "/tree/snapshot":
                got["snapshots"] += 1
                snap = json.loads(payload)
                assert isinstance(snap["behaviours"], list)
    return got


def test_a_foxglove_client_gets_transforms_while_the_run_goes_on(tmp_path):
    log = tmp_path / "live.mcap"
    cmd = [sys.executable, "-m", "py_trees_manipulation.cli", "run", str(ROOT / "examples" / "pick_and_lift.yaml"),
           "--foxglove", "--foxglove-port", "0", "--realtime", "--timeout", "5", "-q", "--log", str(log)]
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
    try:
        line = proc.stdout.readline()
        m = re.match(r"ptm foxglove: (ws://127\.0\.0\.1:\d+)", line)
        assert m, f"no address printed: {line!r} {proc.stderr.read() if proc.poll() is not None else ''}"
        got = asyncio.run(_client(m.group(1), proc))
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    why = f"client saw {got}; run printed:\n{out}\n{err[-3000:]}"
    assert got["server_info"] is not None, why
    adv = got["advertised"]
    assert {"/tf", "/scene", "/log", "/tree/snapshot", "/run/metadata", "/telemetry/gripper/panda"} <= set(adv)
    assert (adv["/tf"]["schemaName"], adv["/tf"]["encoding"]) == ("foxglove.FrameTransforms", "protobuf")
    assert (adv["/tree/snapshot"]["schemaName"], adv["/tree/snapshot"]["encoding"]) == ("ptm.TreeSnapshot", "json")
    assert len(got["tf"]) >= 5, why  # 30 Hz for 5 s when idle; a loaded CI machine delivers fewer
    assert all(running for _, _, running in got["tf"]), "transforms arrived only after the run"
    times = [t for t, _, _ in got["tf"]]
    assert times == sorted(times) and times[-1] > times[0]
    frames = {tr.child_frame_id for tr in got["tf"][-1][1].transforms}
    assert {"panda", "panda/panda_hand", "panda/tcp", "mug", "table"} <= frames
    assert got["snapshots"] > 0
    assert proc.returncode == 1 and "TIMEOUT" in out  # the 5 s cut, on purpose
    assert "Foxglove server closed" in out
