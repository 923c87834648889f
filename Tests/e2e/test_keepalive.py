"""Server-initiated keepalive: pings at the configured interval, close on missing pongs (however choked the
socket is), client pings ignored, and an upstream link dropped by its watchdog."""

import asyncio
import base64
import fcntl
import json
import os
import signal
import socket
import struct
import termios
import time
from pathlib import Path

from companion_client import TOKEN, cport, projects, start_companion, start_project
from conftest import (
    TCP_ESTABLISHED,
    RawWebSocket,
    auth_frame,
    free_port,
    make_config,
    message_frame,
    pair_first_admin,
    setup_admin,
    tcp_state,
    wait_account,
)
from gateway_client import Identity, paired

KEEPALIVE = {"ping_interval_seconds": 1, "pong_timeout_seconds": 3}


async def raw_session(relay, answer_pings):
    admin = await pair_first_admin(relay)
    raw = await RawWebSocket.connect(relay, answer_pings=answer_pings)
    await raw.send_json(auth_frame(admin))
    result = await raw.recv_json()
    assert result.get("type") == "auth_result" and result.get("success") is True, result
    return raw


async def wait_for_ack(raw, msg_id, timeout=5.0):
    deadline = time.monotonic() + timeout
    while True:
        frame = await raw.recv_json(max(0.01, deadline - time.monotonic()))
        if frame.get("type") == "ack" and frame.get("id") == msg_id:
            return frame


async def test_server_pings_and_a_responsive_client_stays_connected(relay_factory):
    relay = relay_factory(clawline=KEEPALIVE)
    raw = await raw_session(relay, answer_pings=True)
    started = time.monotonic()
    await raw.wait_pings(5, timeout=10)
    assert time.monotonic() - started > KEEPALIVE["pong_timeout_seconds"], "alive past the pong timeout"
    gaps = [b - a for a, b in zip(raw.pings, raw.pings[1:])]
    assert all(0.4 < g < 2.5 for g in gaps), f"ping gaps should be about 1 s: {gaps}"
    frame = message_frame("still here")
    await raw.send_json(frame)
    await wait_for_ack(raw, frame["id"])
    assert raw.closed_at is None
    await raw.close()


async def test_client_without_pongs_is_closed_after_the_pong_timeout(relay_factory):
    relay = relay_factory(clawline=KEEPALIVE)
    raw = await raw_session(relay, answer_pings=False)
    started = time.monotonic()
    closed_at = await raw.wait_closed(timeout=10)
    elapsed = closed_at - started
    assert raw.pings, "the server pinged before closing"
    assert 2.0 <= elapsed <= 7.0, f"closed {elapsed:.1f}s after auth (ping 1 s, pong timeout 3 s)"
    await raw.close()


async def test_client_pings_are_ignored(relay_factory):
    relay = relay_factory(clawline=KEEPALIVE)
    raw = await raw_session(relay, answer_pings=True)
    for _ in range(3):
        await raw.send_frame(RawWebSocket.OP_PING, b"client-ping")
    frame = message_frame("after client pings")
    await raw.send_json(frame)
    await wait_for_ack(raw, frame["id"])
    assert raw.closed_at is None, f"server closed after client pings (code {raw.close_code})"
    await raw.close()


# --------------------------------------------------------------------------------------------
# A peer that stops reading: its socket chokes, and the pong timeout must still drop it.

BIG = 60_000


class StalledReader:
    """A raw WebSocket client on a blocking socket that reads only until told to stop.

    After `stop_reading` nothing is read again: what the relay sends fills the kernel buffers on
    both sides and its socket chokes. `state` is this socket's TCP state as the kernel keeps it, so
    the test sees what the peer of a relay that gave up on it sees.
    """

    def __init__(self, port: int, path: str):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            (f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode()
        )
        head = b""
        while not head.endswith(b"\r\n\r\n"):
            byte = self.sock.recv(1)
            assert byte, f"closed during the upgrade: {head!r}"
            head += byte
        assert b" 101" in head.split(b"\r\n", 1)[0], f"upgrade refused: {head!r}"

    def send_json(self, obj) -> None:
        payload = json.dumps(obj).encode()
        header = bytearray([0x81])
        if len(payload) < 126:
            header.append(0x80 | len(payload))
        elif len(payload) < 65536:
            header += bytes([0x80 | 126]) + struct.pack("!H", len(payload))
        else:
            header += bytes([0x80 | 127]) + struct.pack("!Q", len(payload))
        mask = os.urandom(4)
        self.sock.sendall(bytes(header) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def _exactly(self, count: int) -> bytes:
        data = b""
        while len(data) < count:
            chunk = self.sock.recv(count - len(data))
            assert chunk, "the relay closed the socket"
            data += chunk
        return data

    def recv_json(self) -> dict:
        """The next text message (pings and other control frames are read past, never answered)."""
        while True:
            first, second = self._exactly(2)
            length = second & 0x7F
            if length == 126:
                (length,) = struct.unpack("!H", self._exactly(2))
            elif length == 127:
                (length,) = struct.unpack("!Q", self._exactly(8))
            payload = self._exactly(length)
            if first & 0x0F == 0x1:
                return json.loads(payload)

    @property
    def state(self) -> int:
        return tcp_state(self.sock)

    @property
    def unread_bytes(self) -> int:
        return struct.unpack("i", fcntl.ioctl(self.sock.fileno(), termios.FIONREAD, b"\0\0\0\0"))[0]

    async def wait_dropped(self, within: float) -> float:
        """Polls this socket's TCP state until it is no longer established; returns the seconds it took."""
        started = time.monotonic()
        while self.state == TCP_ESTABLISHED:
            waited = time.monotonic() - started
            assert waited < within, (
                f"still established {waited:.1f} s after the peer stopped reading "
                f"({self.unread_bytes} bytes unread here; the relay's unsent bytes wait behind them)"
            )
            await asyncio.sleep(0.05)
        return time.monotonic() - started

    def close(self) -> None:
        self.sock.close()


async def test_a_client_that_stops_reading_is_dropped_after_the_pong_timeout_however_choked(relay_factory):
    relay = relay_factory(clawline={**KEEPALIVE, "messages_per_second": 100})
    admin = await pair_first_admin(relay)
    stalled = StalledReader(relay.port, "/ws")
    try:
        stalled.send_json(auth_frame(admin))
        while (frame := stalled.recv_json()).get("type") != "auth_result":
            pass
        assert frame.get("success") is True, frame
        for index in range(10):
            stalled.send_json(message_frame(f"{index} " + "x" * BIG))
        # From here on nothing is read and no ping is answered: 3 s of pong timeout, then at most
        # the 5 s close grace, and the relay must be rid of the socket, however full its buffers.
        waited = await stalled.wait_dropped(within=15)
        assert waited >= 2.0, f"dropped after {waited:.1f} s, before the pong timeout"
    finally:
        stalled.close()
    assert "closing socket without pong" in relay.stderr_text()
    assert relay.running


async def test_a_companion_client_that_stops_reading_is_dropped_after_the_pong_timeout(relay_factory, tmp_path):
    relay = start_companion(relay_factory, tmp_path, ping_interval_seconds=1)  # pongs due within 2 s
    session = start_project(relay, "app")["session"]["sessionId"]
    path = projects(relay)["app"]["path"]
    stalled = StalledReader(cport(relay), "/ws?token=" + TOKEN)
    try:
        assert stalled.recv_json()["type"] == "welcome"
        for index in range(10):
            command = {"command": f"{index} " + "x" * BIG, "projectPath": path, "sessionId": session}
            stalled.send_json({"type": "claudeCommand", "requestId": f"R{index}", "data": command})
        waited = await stalled.wait_dropped(within=15)
        assert waited >= 1.0, f"dropped after {waited:.1f} s, before the pong timeout"
    finally:
        stalled.close()
    assert relay.running


def loopback_connections(port: int) -> list[tuple[int, int, int]]:
    """(local port, remote port, TCP state) of every IPv4 socket in the kernel's table with `port` at either end."""
    rows = []
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, remote, state = int(fields[1].split(":")[1], 16), int(fields[2].split(":")[1], 16), int(fields[3], 16)
        if port in (local, remote):
            rows.append((local, remote, state))
    return rows


async def test_an_upstream_gateway_that_stops_reading_is_dropped_after_the_tick_watchdog(relay_factory):
    # Relay A's openclaw account is an operator on relay B's gateway (ticks every second). B stops
    # (SIGSTOP): it reads nothing and sends no tick, a big turn from A's own gateway chokes the link,
    # A's watchdog closes it, and within the close grace the connection must be gone at both ends.
    b_port = free_port()
    b_cfg = make_config()
    b_cfg["gateway"] = {"listen": f"127.0.0.1:{b_port}", "tick_interval_ms": 1000, "auto_approve_loopback": True}
    relay_b = relay_factory(b_cfg)
    a_cfg = make_config()
    a_cfg["backends"].append({"name": "up", "kind": "openclaw", "url": f"ws://127.0.0.1:{b_port}"})
    a_cfg["gateway"] = {"listen": "127.0.0.1:0", "backend": "up"}
    relay_a = relay_factory(a_cfg)
    await asyncio.to_thread(wait_account, relay_a, "connected")
    links = [(local, remote) for local, remote, state in loopback_connections(b_port) if remote == b_port and state == TCP_ESTABLISHED]
    assert len(links) == 1, loopback_connections(b_port)
    link_port = links[0][0]
    operator, _ = await paired(relay_a, Identity())
    os.kill(relay_b.proc.pid, signal.SIGSTOP)
    try:
        sent = await operator.request("chat.send", {"sessionKey": "main", "message": "x" * 4_000_000, "idempotencyKey": "big"}, timeout=20)
        assert sent["ok"], sent
        started = time.monotonic()
        while ends := [row for row in loopback_connections(link_port) if b_port in row[:2]]:
            assert time.monotonic() - started < 15, f"the link is still there: {ends} (states: 1 established, 4 fin-wait-1)"
            await asyncio.sleep(0.05)
    finally:
        os.kill(relay_b.proc.pid, signal.SIGCONT)
