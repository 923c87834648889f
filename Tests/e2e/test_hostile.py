"""Hostile input (issue 10): one request must never take the relay down, and no client may make
it hoard memory, files or sockets. Each test reproduces one finding of the fuzzing run."""

from __future__ import annotations

import asyncio
import contextlib
import os

import pytest

from conftest import (
    PNG_1PX,
    TCP_ESTABLISHED,
    RawWebSocket,
    async_wait_for,
    auth_frame,
    make_config,
    message_frame,
    multipart,
    pair_first_admin,
    send_and_complete,
    setup_admin,
    tcp_state,
    upload,
)
from gateway_client import Identity, paired


@pytest.fixture
def gateway_relay(relay_factory):
    cfg = make_config()
    cfg["gateway"] = {"listen": "127.0.0.1:0"}
    return relay_factory(cfg)


@pytest.mark.parametrize("timeout_ms", [2**63 - 1, 10**16, 18446744073709552])
async def test_an_absurd_invoke_timeout_is_clamped_not_a_crash(gateway_relay, timeout_ms):
    operator, _ = await paired(gateway_relay, Identity())
    node_identity = Identity()
    node, _ = await paired(gateway_relay, node_identity, role="node", scopes=(), mode="node", commands=("camera.snap",))
    call = asyncio.create_task(operator.request("node.invoke", {
        "nodeId": node_identity.device_id, "command": "camera.snap", "timeoutMs": timeout_ms, "idempotencyKey": "k"}))
    request = await node.event("node.invoke.request")
    assert request["payload"]["timeoutMs"] == 600_000, request
    await node.request("node.invoke.result", {"id": request["payload"]["id"], "nodeId": node_identity.device_id, "ok": True})
    assert (await call)["ok"]
    assert gateway_relay.running
    health = await operator.request("health")
    assert health["ok"], health


def gateway_port(relay):
    return relay.listeners["gateway"][1]


@pytest.mark.parametrize("listener", ["clawline", "gateway"])
async def test_a_frame_declaring_more_than_the_pre_auth_limit_is_refused_from_its_header(gateway_relay, listener):
    port = gateway_port(gateway_relay) if listener == "gateway" else None
    raw = await RawWebSocket.connect(gateway_relay, answer_pings=True, port=port, path="/" if listener == "gateway" else "/ws")
    await raw.send_header_only(RawWebSocket.OP_TEXT, 25 << 20, b"{" * 4096)
    await raw.wait_closed(5)
    assert raw.close_code == 1009, raw.close_code


async def test_after_auth_the_listener_limit_is_enforced_from_the_header_too(relay):
    admin = await pair_first_admin(relay)
    raw = await RawWebSocket.connect(relay, answer_pings=True)
    await raw.send_json(auth_frame(admin))
    assert (await raw.recv_json())["success"] is True
    # Past the 64 KiB pre-auth limit but within the 1 MiB listener limit: taken.
    await raw.send_json(message_frame("x" * 60_000 + "y" * 20_000))
    while (frame := await raw.recv_json()).get("type") != "error":
        pass
    assert frame["code"] == "payload_too_large", frame  # content > 64 KB, refused by the message rules
    await raw.send_header_only(RawWebSocket.OP_TEXT, 2 << 20, b"{" * 4096)
    await raw.wait_closed(5)
    assert raw.close_code == 1009, raw.close_code


def open_fds(relay) -> int:
    return len(os.listdir(f"/proc/{relay.proc.pid}/fd"))


def upload_leftovers(relay) -> list[str]:
    assets = relay.data_dir / "assets"
    return [name for name in os.listdir(assets) if name.startswith(".upload-")] if assets.exists() else []


async def raw_http(relay, head: str, body: bytes = b"", read: bool = True) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", relay.port)
    writer.write(head.encode() + body)
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), 10) if read else b""
    writer.close()
    return answer


@pytest.mark.parametrize("sent", [0, 1000])
async def test_an_upload_whose_client_leaves_early_leaves_no_file_or_fd(relay, sent):
    admin = await pair_first_admin(relay)
    body, ctype = multipart("file", "a.png", PNG_1PX * 100, "image/png")
    baseline = open_fds(relay)
    for _ in range(20):
        head = (f"POST /upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {admin.token}\r\nContent-Type: {ctype}\r\n"
                f"Content-Length: {len(body) + 1_000_000}\r\n\r\n")
        await raw_http(relay, head, body[:sent], read=False)
    await async_wait_for(lambda: not upload_leftovers(relay), what="temporary upload files removed")
    await async_wait_for(lambda: open_fds(relay) <= baseline, what=f"fds back to {baseline}")


async def test_a_negative_content_length_is_a_bad_request(relay):
    admin = await pair_first_admin(relay)
    answer = await raw_http(relay, f"POST /upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {admin.token}\r\n"
                                   "Content-Type: multipart/form-data; boundary=x\r\nContent-Length: -5\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 400"), answer[:200]
    assert not upload_leftovers(relay)


async def test_a_chunked_upload_is_answered_411(relay):
    admin = await pair_first_admin(relay)
    body, ctype = multipart("file", "a.png", PNG_1PX, "image/png")
    chunked = f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n"
    answer = await raw_http(relay, f"POST /upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {admin.token}\r\n"
                                   f"Content-Type: {ctype}\r\nTransfer-Encoding: chunked\r\n\r\n", chunked)
    assert answer.startswith(b"HTTP/1.1 411"), answer[:200]
    assert b"Content-Length" in answer, answer
    assert not upload_leftovers(relay)


@pytest.mark.parametrize("payload", [b"\x03", b"\x03\xed", b"\x03\xe7bye"], ids=["one-byte", "code-1005", "code-999"])
async def test_an_invalid_close_frame_is_answered_1002(relay, payload):
    raw = await RawWebSocket.connect(relay, answer_pings=True)
    await raw.send_frame(RawWebSocket.OP_CLOSE, payload)
    await raw.wait_closed(5)
    assert raw.close_code == 1002, raw.close_code


async def test_a_valid_close_is_echoed(relay):
    raw = await RawWebSocket.connect(relay, answer_pings=True)
    await raw.send_frame(RawWebSocket.OP_CLOSE, b"\x03\xe8")
    await raw.wait_closed(5)
    assert raw.close_code == 1000, raw.close_code


async def test_uploaded_html_is_served_as_an_inert_attachment(relay):
    admin = await pair_first_admin(relay)
    asset = upload(relay, admin.token, b"<script>alert(1)</script>", "text/html").json()["assetId"]
    resp = relay.http("GET", f"/download/{asset}", headers=admin.bearer)
    assert resp.status == 200 and resp.body == b"<script>alert(1)</script>", resp.status
    headers = {k.lower(): v for k, v in resp.headers.items()}
    assert headers["content-type"] == "application/octet-stream", headers
    assert headers["x-content-type-options"] == "nosniff" and headers["content-disposition"] == "attachment", headers


@pytest.mark.parametrize("scheme", ["Bearer {}", "bearer {}", "BEARER {}", "Bearer  {}"])
async def test_the_bearer_scheme_is_case_insensitive(relay, scheme):
    admin = await pair_first_admin(relay)
    resp = upload(relay, None, PNG_1PX, auth_header=scheme.format(admin.token))
    assert resp.status == 200, resp.body


async def test_requests_lws_refuses_cannot_flood_the_log_or_hold_a_socket(relay):
    before = relay.stderr_text().count("libwebsockets")
    baseline = open_fds(relay)
    for _ in range(15):
        refused = await raw_http(relay, "CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n")
        assert refused.startswith(b"HTTP/1.1 405"), refused[:100]
        answer = await raw_http(relay, "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + "a" * 20_000 + "\r\n\r\n")
        assert not answer.startswith(b"HTTP/1.1 200"), answer[:100]
    # A connection that never finishes its headers is dropped after the header timeout.
    reader, writer = await asyncio.open_connection("127.0.0.1", relay.port)
    writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n")
    assert await asyncio.wait_for(reader.read(), 20) == b""
    await async_wait_for(lambda: open_fds(relay) <= baseline, timeout=10, what="fds released")
    await send_and_complete_as_admin(relay)  # still serving
    lines = relay.stderr_text().count("libwebsockets") - before
    assert lines <= LIBRARY_LOG_BURST + 1, relay.stderr_text()[-3000:]


LIBRARY_LOG_BURST = 10


async def send_and_complete_as_admin(relay):
    _, client = await setup_admin(relay)
    await send_and_complete(client, "still here")


async def test_a_consumer_that_stops_reading_is_closed_and_its_socket_released(relay_factory):
    cfg = make_config()
    cfg["gateway"] = {"listen": "127.0.0.1:0", "max_payload_bytes": 1_048_576, "max_buffered_bytes": 2_097_152}
    relay = relay_factory(cfg)
    talker, _ = await paired(relay, Identity())
    stalled, _ = await paired(relay, Identity())
    baseline = open_fds(relay)
    # `websockets` stops reading the socket once 16 messages wait unread: the stalled operator
    # never calls recv again, the kernel buffers fill, and the relay's unsent bytes grow.
    big = "x" * 400_000
    for index in range(40):
        res = await talker.request("chat.send", {"sessionKey": "main", "message": f"{index} {big}", "idempotencyKey": f"k{index}"}, timeout=20)
        assert res["ok"], res
        if "closing a slow consumer" in relay.stderr_text():
            break
    await async_wait_for(lambda: "closing a slow consumer" in relay.stderr_text(), timeout=20, what="the slow consumer closed")
    await async_wait_for(lambda: open_fds(relay) < baseline, timeout=15, what="its socket released while it still reads nothing")
    # Released for the peer too: reset, not a FIN queued behind the bytes it never read (its socket
    # would stay established, and the relay's kernel would keep those bytes, for minutes).
    peer = stalled.ws.transport.get_extra_info("socket")
    await async_wait_for(lambda: tcp_state(peer) != TCP_ESTABLISHED, timeout=5, what="the stalled peer's connection ended")
    assert (await talker.request("health"))["ok"]


async def test_a_stalled_upload_body_is_dropped_with_its_file(relay):
    admin = await pair_first_admin(relay)
    body, ctype = multipart("file", "a.png", PNG_1PX * 100, "image/png")
    reader, writer = await asyncio.open_connection("127.0.0.1", relay.port)
    writer.write((f"POST /upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {admin.token}\r\nContent-Type: {ctype}\r\n"
                  f"Content-Length: {len(body) + 1_000_000}\r\n\r\n").encode() + body[:1000])
    await writer.drain()
    await async_wait_for(lambda: upload_leftovers(relay), what="the upload under way")
    assert await asyncio.wait_for(reader.read(), 30) == b""  # lws gives up on the body after 5 s
    await async_wait_for(lambda: not upload_leftovers(relay), what="its temporary file removed")
    writer.close()


TLS_CLIENT_HELLO = bytes.fromhex("16030100a5010000a10303") + os.urandom(32) + b"\x00\x00\x02\x13\x01\x01\x00"
NOT_HTTP = (b"HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: 55\r\nconnection: close\r\n\r\n"
            b"400 Bad Request: this port speaks plain HTTP/WebSocket\n")


@pytest.mark.parametrize("listener", ["clawline", "gateway", "admin"])
@pytest.mark.parametrize("sent", [TLS_CLIENT_HELLO, b"garbage garbage\r\n\r\n", b"\x00\xff\x13\x37 binary"], ids=["tls-hello", "words", "binary"])
async def test_a_tls_hello_or_garbage_on_a_plain_port_gets_a_short_plain_400_and_a_close(gateway_relay, listener, sent):
    reader, writer = await asyncio.open_connection("127.0.0.1", gateway_relay.listeners[listener][1])
    writer.write(sent)
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), 10)  # to the end: the relay closes after it
    writer.close()
    assert answer == NOT_HTTP, answer[:300]
    assert gateway_relay.running
