"""Relay D's `clawline` backend is a client device of relay U's `[clawline]` listener (U answers with echo).

U has a first admin device already, so D's pairing waits for approval there: through the admin's
socket (`pair_decision`) or with `clawrelay devices approve` on U.
"""
import asyncio
import json
import socket
import time

from conftest import Client, accounts, auth, free_port, is_assistant_final, make_config, message_frame, pair_first_admin, setup_admin, wait_account, wait_for

DEVICE_NAME = "relay-d"





def start_u(relay_factory, delay_ms: int = 0):
    """The provider: a plain relay on a fixed port, so it can come back on the same one."""
    return relay_factory(make_config(clawline={"listen": f"127.0.0.1:{free_port()}"}, echo={"delay_ms": delay_ms}))


def start_d(relay_factory, relay_u):
    cfg = make_config(clawline={"backend": "up"})
    cfg["backends"].append({"name": "up", "kind": "clawline", "url": relay_u.ws_url, "device_name": DEVICE_NAME})
    return relay_factory(cfg)


def account_file(relay_d):
    return relay_d.data_dir / "accounts" / "up.clawline.json"


def pending_on(relay_u) -> list[str]:
    return [d["deviceId"] for d in relay_u.devices() if d["status"] == "pending"]


async def decide_through_admin(admin_client: Client, approve: bool) -> dict:
    """U's admin sees D's request and decides; returns the request."""
    request, _ = await admin_client.recv_until(lambda f: f.get("type") == "pair_approval_request", timeout=20)
    decision = {"type": "pair_decision", "deviceId": request["deviceId"], "approve": approve}
    if approve:
        decision["userId"] = request["deviceId"]  # any UUIDv4: a user of its own on U
    await admin_client.send_json(decision)
    return request


async def chat(client: Client, text: str, timeout: float = 20) -> tuple[dict, list[dict]]:
    await client.send_json(message_frame(text))
    return await client.recv_until(is_assistant_final(f"echo: {text}"), timeout=timeout)


def streamed(frames: list[dict]) -> list[str]:
    return [f["content"] for f in frames if f.get("type") == "message" and f.get("role") == "assistant" and f.get("streaming")]


def assert_no_secret(relay, secret: str) -> None:
    assert secret not in relay.stderr_text(), "the token leaked into the log"
    assert secret not in relay.cli("audit", "--json").stdout, "the token leaked into the audit"
    assert secret not in relay.cli("accounts", "--json").stdout, "the token leaked into the account detail"


async def paired_pair(relay_factory, delay_ms: int = 0):
    """U with a first admin, D paired to it (approved with the CLI on U) and connected."""
    relay_u = start_u(relay_factory, delay_ms)
    await pair_first_admin(relay_u)
    relay_d = start_d(relay_factory, relay_u)
    await asyncio.to_thread(wait_account, relay_d, "awaiting_approval")
    device_id = json.loads(account_file(relay_d).read_text())["deviceId"]
    await asyncio.to_thread(wait_for, lambda: device_id in pending_on(relay_u), 10, 0.1, "D's pending request on U")
    await asyncio.to_thread(relay_u.cli, "devices", "approve", device_id)
    await asyncio.to_thread(wait_account, relay_d, "connected")
    return relay_u, relay_d


async def test_pairing_waits_for_approval_then_chat_streams_through_and_a_restart_does_not_pair_again(relay_factory):
    relay_u = start_u(relay_factory)
    u_admin = await pair_first_admin(relay_u)
    admin_client, _ = await auth(relay_u, u_admin, name="u-admin")
    relay_d = start_d(relay_factory, relay_u)

    waiting = await asyncio.to_thread(wait_account, relay_d, "awaiting_approval")
    path = account_file(relay_d)
    before = json.loads(path.read_text())
    assert set(before) == {"deviceId"}, "only the device id before pairing"
    assert waiting["kind"] == "clawline" and before["deviceId"] in waiting["detail"], waiting
    assert f"clawrelay devices approve {before['deviceId']}" in waiting["detail"], waiting

    request = await decide_through_admin(admin_client, approve=True)
    assert request["deviceId"] == before["deviceId"] and request["claimedName"] == DEVICE_NAME, request
    assert request["deviceInfo"]["platform"] == "linux" and request["deviceInfo"]["model"] == "clawrelay", request
    connected = await asyncio.to_thread(wait_account, relay_d, "connected")
    assert before["deviceId"] in connected["detail"], connected
    metrics = relay_d.http("GET", "/metrics", admin=True).body.decode()
    assert 'clawrelay_upstream_link{account="up",state="connected"} 1' in metrics, metrics
    assert 'clawrelay_upstream_link{account="up",state="awaiting_approval"} 0' in metrics, metrics

    credentials = json.loads(path.read_text())
    assert credentials["deviceId"] == before["deviceId"] and credentials["userId"] == request["deviceId"], credentials
    token = credentials["token"]
    assert token.count(".") == 2, "the provider's JWT"
    assert path.stat().st_mode & 0o777 == 0o600 and path.parent.stat().st_mode & 0o777 == 0o700

    d_admin, client = await setup_admin(relay_d)
    _, frames = await chat(client, "through two relays")
    assert "echo: through two" in streamed(frames), frames
    await chat(client, "and again")

    # The cursor follows what D saw (written within a second); a restart reuses the token.
    cursor = await asyncio.to_thread(wait_for, lambda: json.loads(path.read_text()).get("lastMessageId"), 5, 0.1, "the cursor")
    assert cursor.startswith("s_"), cursor
    await client.close()
    await asyncio.to_thread(relay_d.restart)
    await asyncio.to_thread(wait_account, relay_d, "connected")
    assert json.loads(path.read_text())["token"] == token, "no second pairing"
    assert await asyncio.to_thread(pending_on, relay_u) == []
    await admin_client.expect_silence(0.5, ignore=lambda f: f.get("type") != "pair_approval_request")
    client, _ = await auth(relay_d, d_admin)
    await chat(client, "after a restart")

    await asyncio.to_thread(assert_no_secret, relay_d, token)
    frames = [json.loads(r["body"]) for r in relay_d.audit("--protocol", "client") if r["opcode"] == "text"]
    auths = [f for f in frames if f.get("type") == "auth"]
    assert len(auths) >= 2 and all(f["token"].startswith("sha256:") for f in auths), auths
    assert all(f["token"].startswith("sha256:") for f in frames if f.get("type") == "pair_result"), frames


async def test_u_restarting_mid_answer_heals_the_link_and_the_answer_still_arrives(relay_factory):
    relay_u, relay_d = await paired_pair(relay_factory, delay_ms=300)
    _, client = await setup_admin(relay_d)
    text = "one two three four five six seven"
    await client.send_json(message_frame(text))
    first, _ = await client.recv_until(lambda f: f.get("type") == "message" and f.get("streaming") is True, timeout=20)
    assert first["content"].startswith("echo:"), first

    relay_u.kill()
    down = await asyncio.to_thread(wait_account, relay_d, {"retrying", "connecting"})
    assert "next try" in down["detail"] or down["state"] == "connecting", down
    relay_u.start()
    await asyncio.to_thread(wait_account, relay_d, "connected", 40)
    final, frames = await client.recv_until(is_assistant_final(), timeout=40)
    assert final["content"] == f"echo: {text}", final
    assert not [f for f in frames if f.get("type") == "error"], frames
    # Nothing else arrives for it (a second answer would be attributed to the next turn).
    await chat(client, "next turn")


async def test_a_message_sent_while_u_is_down_goes_out_when_u_returns(relay_factory):
    relay_u, relay_d = await paired_pair(relay_factory)
    _, client = await setup_admin(relay_d)
    relay_u.kill()
    await asyncio.to_thread(wait_account, relay_d, {"retrying", "connecting"})
    await client.send_json(message_frame("queued while down"))
    await client.expect("ack")
    relay_u.start()
    final, _ = await client.recv_until(is_assistant_final("echo: queued while down"), timeout=40)
    assert final["streaming"] is False


async def test_images_and_uploads_go_upstream_inline_and_too_large_ones_fail_the_turn_clearly(relay_factory):
    from conftest import PNG_1PX, send_picture_and_upload, upload
    relay_u, relay_d = await paired_pair(relay_factory)
    admin, client = await setup_admin(relay_d)
    # D reads its upload and sends both as U's inline images; U's echo names them.
    await send_picture_and_upload(relay_d, admin, client, "pictures")
    # An upload larger than a Clawline message may carry inline: the turn fails and says why.
    big = upload(relay_d, admin.token, PNG_1PX + b"\0" * (300 * 1024))
    assert big.status == 200, big.body
    await client.send_json(message_frame("too big", attachments=[{"type": "asset", "assetId": big.json()["assetId"]}]))
    error, _ = await client.recv_until(lambda f: f.get("type") in ("error", "message") and f.get("role") != "user", timeout=20)
    assert error["type"] == "error", error
    # The reason is the operator's, in the log.
    await asyncio.to_thread(wait_for, lambda: "would refuse these attachments" in relay_d.stderr_text(), 10, 0.1, "the reason in D's log")
    assert "256 KB" in relay_d.stderr_text()


async def test_a_denied_pairing_shows_failed_and_is_not_asked_again(relay_factory):
    relay_u = start_u(relay_factory)
    u_admin = await pair_first_admin(relay_u)
    admin_client, _ = await auth(relay_u, u_admin, name="u-admin")
    relay_d = start_d(relay_factory, relay_u)
    await decide_through_admin(admin_client, approve=False)
    failed = await asyncio.to_thread(wait_account, relay_d, "failed")
    assert "pair_denied" in failed["detail"] and "restart the relay" in failed["detail"], failed
    assert "token" not in json.loads(account_file(relay_d).read_text())

    _, client = await setup_admin(relay_d)
    await client.send_json(message_frame("not through"))
    error, _ = await client.recv_until(lambda f: f.get("type") == "error", timeout=10)
    assert error["code"] == "server_error" and error.get("messageId"), error
    assert "the link to up is failed" in relay_d.stderr_text()
    await admin_client.expect_silence(3, ignore=lambda f: f.get("type") != "pair_approval_request")
    assert await asyncio.to_thread(pending_on, relay_u) == []
    assert accounts(relay_d)[0]["state"] == "failed"


async def test_a_revoked_device_shows_failed_with_the_reason(relay_factory):
    relay_u, relay_d = await paired_pair(relay_factory)
    device_id = json.loads(account_file(relay_d).read_text())["deviceId"]
    await asyncio.to_thread(relay_u.cli, "devices", "revoke", device_id)
    failed = await asyncio.to_thread(wait_account, relay_d, "failed")
    assert "token_revoked" in failed["detail"], failed
    await asyncio.to_thread(relay_d.restart)
    failed = await asyncio.to_thread(wait_account, relay_d, "failed")
    assert "token_revoked" in failed["detail"] or "auth_failed" in failed["detail"], failed


async def test_a_provider_that_takes_the_socket_and_never_answers_is_left_and_retried(relay_factory):
    """A server that accepts TCP and never answers the upgrade: the attempt ends and the link backs off."""
    accepted: list[asyncio.StreamWriter] = []

    async def hold(reader, writer):
        accepted.append(writer)

    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        cfg = make_config(clawline={"backend": "up"})
        cfg["backends"].append({"name": "up", "kind": "clawline", "url": f"ws://127.0.0.1:{port}/ws"})
        relay_d = relay_factory(cfg)
        retrying = await asyncio.to_thread(wait_account, relay_d, "retrying", 30)
        assert "did not complete the WebSocket handshake" in retrying["detail"], retrying
        await asyncio.to_thread(wait_for, lambda: len(accepted) >= 2, 30, 0.1, "a second attempt")
    finally:
        for writer in accepted:
            writer.close()
        server.close()
        await server.wait_closed()
