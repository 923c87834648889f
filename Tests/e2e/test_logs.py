"""What the operator reads (issue 11): every client lifecycle event at info, with device, protocol
and remote address, protocol errors at debug, and never a token."""

from __future__ import annotations

import json
import os
import subprocess

from conftest import (
    Client,
    Device,
    async_wait_for,
    auth,
    auth_frame,
    make_config,
    message_frame,
    new_device_id,
    pair_first_admin,
    pair_request,
    relay_bin,
    wait_for,
)


async def test_pairing_auth_and_revocation_are_logged_without_secrets(relay_factory):
    cfg = make_config()
    cfg["server"] = {"log_level": "debug"}
    relay = relay_factory(cfg)
    admin = await pair_first_admin(relay)
    client, _ = await auth(relay, admin)
    await async_wait_for(lambda: "device connected" in relay.stderr_text(), what="connect logged")

    device_id = new_device_id()
    requester = await Client.connect(relay, "requester")
    await requester.send_json(pair_request(device_id, "Phone"))
    await async_wait_for(lambda: "pairing request waiting for approval" in relay.stderr_text(), what="pending logged")
    log = relay.stderr_text()
    line = next(l for l in log.splitlines() if "pairing request waiting" in l)
    assert device_id in line and "clawline" in line and "127.0.0.1" in line and f"devices approve {device_id}" in line, line

    relay.cli("devices", "approve", device_id)
    result = await requester.expect("pair_result")
    assert result["success"], result
    await async_wait_for(lambda: "pairing approved" in relay.stderr_text(), what="approval logged")

    bad = await Client.connect(relay, "bad")
    await bad.send_json(auth_frame(Device(device_id, "not.a.token", result["userId"])))
    await bad.expect("auth_result", success=False)
    await async_wait_for(lambda: "auth refused" in relay.stderr_text(), what="auth failure logged")

    await client.send_json({"type": "bogus"})
    await client.expect_error("invalid_message", skip=lambda f: f.get("type") == "pair_approval_request")
    await async_wait_for(lambda: "protocol error" in relay.stderr_text(), what="protocol error at debug")

    relay.cli("devices", "revoke", admin.device_id)
    await async_wait_for(lambda: "device cut off" in relay.stderr_text(), what="revocation logged")
    log = relay.stderr_text()
    for secret in (admin.token, result["token"]):
        assert secret not in log, "a token reached the log"


async def test_info_leaves_protocol_errors_out(relay):
    admin = await pair_first_admin(relay)
    client, _ = await auth(relay, admin)
    await client.send_json({"type": "bogus"})
    await client.expect_error("invalid_message")
    await client.send_json(message_frame("hello"))
    await client.expect("ack")
    assert "protocol error" not in relay.stderr_text()


def test_a_client_waiting_for_approval_is_logged_once_not_at_every_retry(relay_factory, tmp_path):
    """`clawrelay chat` asks again every 3 s while it waits: one info line, not one per try."""
    cfg = make_config()
    cfg["gateway"] = {"listen": "127.0.0.1:0"}
    relay = relay_factory(cfg)
    url = f"ws://127.0.0.1:{relay.listeners['gateway'][1]}"
    proc = subprocess.Popen([str(relay_bin()), "chat", "--url", url, "--identity", str(tmp_path / "id" / "chat.key"), "--wait", "30",
                             "--send", "hi"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        connects = lambda: [r for r in relay.audit("--protocol", "gateway") if r.get("opcode") == "open"]
        wait_for(lambda: len(connects()) >= 3, timeout=20, interval=0.5, what="three pairing attempts")
        log = relay.stderr_text()
        refusals = [line for line in log.splitlines() if "closing a gateway socket" in line and "NOT_PAIRED" in line]
        assert len(refusals) == 1, refusals
        assert len([line for line in log.splitlines() if "pairing request waiting for approval" in line]) == 1, log
        assert "reason=not-paired" in log, log
    finally:
        proc.kill()
        proc.wait()


def test_oversized_request_headers_are_logged_with_the_remote_address(relay):
    import socket

    with socket.create_connection(("127.0.0.1", relay.port)) as sock:
        sock.sendall(b"GET /version HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 20_000 + b"\r\n\r\n")
        sock.settimeout(10)
        assert sock.recv(1024) == b"", "dropped without an answer"
    line = wait_for(lambda: next((l for l in relay.stderr_text().splitlines() if "request headers too large" in l), None),
                    what="the oversized headers logged")
    assert " warning " in line and "remote=127.0.0.1" in line and "listener=clawline" in line, line
    assert "Ran out of header data space" not in relay.stderr_text(), "lws's own line, which names nobody, is replaced"


async def test_the_approve_command_in_the_log_runs_as_printed(relay_factory, tmp_path):
    """The hint names this binary (by path unless `clawrelay` on PATH is it) and the relay's data dir."""
    cfg = make_config()
    cfg["server"] = {"log_format": "json"}
    relay = relay_factory(cfg)
    await pair_first_admin(relay)
    device_id = new_device_id()
    requester = await Client.connect(relay, "requester")
    await requester.send_json(pair_request(device_id, "Phone"))
    await async_wait_for(lambda: "pairing request waiting for approval" in relay.stderr_text(), what="pending logged")
    line = next(json.loads(l) for l in relay.stderr_text().splitlines() if "pairing request waiting" in l)
    command = line["approve_with"]
    assert command == f"{os.path.realpath(relay_bin())} devices approve {device_id} --data-dir {relay.data_dir}", command
    ran = subprocess.run(command, shell=True, cwd=tmp_path, capture_output=True, text=True, timeout=30)
    assert ran.returncode == 0, ran.stderr
    result = await requester.expect("pair_result")
    assert result["success"], result
