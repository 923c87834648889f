"""Durability: an acked message survives SIGKILL; devices and tokens survive restarts."""

from conftest import (
    auth,
    is_user_echo,
    message_frame,
    setup_admin,
)


async def test_acked_message_is_replayed_after_sigkill(relay_factory):
    relay = relay_factory(echo={"delay_ms": 5000})  # the stream is still running at the kill
    admin, client = await setup_admin(relay)
    frame = message_frame("survive the crash")
    await client.send_json(frame)
    await client.recv_until(lambda f: f.get("type") == "ack" and f.get("id") == frame["id"])
    relay.kill()
    await client.close()

    relay.start()
    client, result = await auth(relay, admin, last_message_id=None)
    assert result["replayCount"] >= 1, result
    replayed = [await client.recv_json() for _ in range(result["replayCount"])]
    echoes = [f for f in replayed if is_user_echo("survive the crash")(f)]
    assert len(echoes) == 1, replayed
    assert echoes[0]["deviceId"] == admin.device_id and echoes[0]["id"].startswith("s_"), echoes
    assert not any(f.get("role") == "assistant" for f in replayed), f"no partial is ever replayed: {replayed}"


async def test_devices_survive_sigkill(relay):
    admin, client = await setup_admin(relay)
    await client.close()
    relay.kill()
    relay.start()
    client, result = await auth(relay, admin)
    assert result["userId"] == admin.user_id
    entry = relay.device(admin.device_id)
    assert entry["isAdmin"] is True and entry["status"] == "approved", entry


async def test_a_started_gateway_chat_survives_sigkill(relay_factory):
    from conftest import make_config
    from gateway_client import Identity, paired
    cfg = make_config(echo={"delay_ms": 5000})  # the run is still going at the kill
    cfg["gateway"] = {"listen": "127.0.0.1:0"}
    relay = relay_factory(cfg)
    identity = Identity()
    operator, _ = await paired(relay, identity)
    started = await operator.request("chat.send", {"sessionKey": "s", "message": "keep me", "idempotencyKey": "k1"})
    assert started["payload"]["status"] == "started", started
    relay.kill()
    await operator.close()

    relay.start()
    operator, _ = await paired(relay, identity)
    history = await operator.request("chat.history", {"sessionKey": "s"})
    assert [(m["role"], m["content"][0]["text"]) for m in history["payload"]["messages"]] == [("user", "keep me")], history
    again = await operator.request("chat.send", {"sessionKey": "s", "message": "keep me", "idempotencyKey": "k1"})
    assert again["payload"]["status"] == "error", f"the run cut by the kill is failed, not rerun: {again}"
