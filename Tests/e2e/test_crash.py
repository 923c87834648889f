"""Durability: an acked message survives SIGKILL; devices and tokens survive restarts."""

import asyncio

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


async def test_companion_devices_known_before_a_restart_get_queued_events_before_they_reconnect(relay_factory, tmp_path):
    import json
    from conftest import make_config
    from websockets.asyncio.client import connect as ws_connect
    token = "restarttoken0123456789abcdefghij"
    (tmp_path / "projects" / "app").mkdir(parents=True)
    cfg = make_config()
    cfg["companion"] = {"listen": "127.0.0.1:0", "auth_token": token, "projects_root": str(tmp_path / "projects")}
    relay = relay_factory(cfg)

    def start_project():
        resp = relay.http("POST", "/api/projects/app/start", headers={"Authorization": f"Bearer {token}"}, port=relay.listeners["companion"][1])
        return resp.json()["session"]["sessionId"]

    session = start_project()
    url = lambda: f"ws://127.0.0.1:{relay.listeners['companion'][1]}/ws?token={token}"
    async with ws_connect(url(), user_agent_header="the-app") as app:
        json.loads(await app.recv())  # welcome
        await app.send(json.dumps({"type": "subscribe", "requestId": "s1", "data": {"events": [], "sessionIds": [session]}}))
        assert json.loads(await app.recv())["type"] == "subscribed"
    relay.restart()

    answer = relay.http("POST", f"/api/stream/{session}", body=json.dumps({"prompt": "while you were away"}).encode(),
                        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json", "User-Agent": "a-script"},
                        port=relay.listeners["companion"][1])
    assert answer.status == 200 and answer.json()["response"]["result"] == "echo: while you were away", answer.body
    async with ws_connect(url(), user_agent_header="the-app") as app:
        json.loads(await app.recv())  # welcome
        await app.send(json.dumps({"type": "subscribe", "requestId": "s2", "data": {"events": [], "sessionIds": [session]}}))
        frames = []
        while not frames or frames[-1]["type"] != "conversationResult":
            frames.append(json.loads(await asyncio.wait_for(app.recv(), 5)))
    queued = [f for f in frames if f.get("_queued")]
    assert [f["type"] for f in queued][-2:] == ["assistantMessage", "conversationResult"], frames
    assert queued[-1]["data"]["result"] == "echo: while you were away", queued[-1]
