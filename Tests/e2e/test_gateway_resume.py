"""Resuming an OpenClaw session on another device or after a reconnect (issue 27, item 5):
`chat.history` pages back with `offset`/`hasMore`/`nextOffset` and carries `sessionInfo` and the
running turn's answer so far (`inFlightRun`), and `sessions.messages.subscribe` makes every message
of a session (any device, any protocol) arrive at once as `session.message`.

What the apps decode (openclaw/openclaw `apps/shared/OpenClawKit/Sources/OpenClawChatUI/ChatModels.swift`):
`OpenClawChatHistoryPayload` needs `sessionKey`; `OpenClawChatSessionInfo {hasActiveRun?, activeRunIds?}`;
`OpenClawChatInFlightRun` needs `runId` and `text` (strings); `OpenClawSessionMessageEventPayload`
needs a `message` that decodes as `OpenClawChatMessage` (`role` required, `content` blocks or a
string). `sessions.messages.subscribe` answers `{subscribed, key}` as OpenClaw's handler does."""
import asyncio
import os
import threading

from conftest import auth, make_config, relay_of_one_user, send_and_complete
from gateway_client import Identity, paired


def app_message(message: dict) -> dict:
    """Checks `message` the way OpenClawChatMessage decodes it and returns it."""
    assert isinstance(message["role"], str), message
    assert isinstance(message["content"], list) and all(isinstance(b.get("text"), str) for b in message["content"]), message
    assert isinstance(message.get("timestamp"), (int, float)), message
    return message


def text(message: dict) -> str:
    return "".join(block["text"] for block in message["content"])


async def test_history_pages_back_with_offset_until_has_more_is_false(relay_factory):
    cfg = make_config()
    cfg["gateway"] = {"listen": "127.0.0.1:0"}
    relay = relay_factory(cfg)
    operator, _ = await paired(relay, Identity())
    for n in range(5):
        res = await operator.request("chat.send", {"sessionKey": "paged", "message": f"m{n}", "idempotencyKey": f"r{n}"})
        assert res["ok"], res
        await operator.event("chat", where=lambda p, n=n: p.get("runId") == f"r{n}" and p.get("state") == "final")

    first = (await operator.request("chat.history", {"sessionKey": "paged", "limit": 4}))["payload"]
    assert [text(app_message(m)) for m in first["messages"]] == ["m3", "echo: m3", "m4", "echo: m4"], first
    assert first["hasMore"] is True and first["nextOffset"] == 4, first
    assert first["sessionInfo"] == {"key": "paged", "hasActiveRun": False, "activeRunIds": []}, first
    assert "inFlightRun" not in first, first

    second = (await operator.request("chat.history", {"sessionKey": "paged", "limit": 4, "offset": first["nextOffset"]}))["payload"]
    assert [text(m) for m in second["messages"]] == ["m1", "echo: m1", "m2", "echo: m2"], second
    assert second["hasMore"] is True and second["nextOffset"] == 8, second
    last = (await operator.request("chat.history", {"sessionKey": "paged", "limit": 4, "offset": second["nextOffset"]}))["payload"]
    assert [text(m) for m in last["messages"]] == ["m0", "echo: m0"], last
    assert last["hasMore"] is False and "nextOffset" not in last, last

    # maxChars bounds a page by size (always the newest message of it).
    small = (await operator.request("chat.history", {"sessionKey": "paged", "maxChars": 3}))["payload"]
    assert [text(m) for m in small["messages"]] == ["echo: m4"] and small["hasMore"] is True and small["nextOffset"] == 1, small

    refused = await operator.request("chat.history", {"sessionKey": "paged", "offset": 100_001})
    assert refused["ok"] is False and refused["error"]["code"] == "INVALID_REQUEST", refused
    assert "offset" in refused["error"]["message"], refused


async def test_history_mid_run_shows_the_answer_so_far_and_the_active_run(relay_factory, tmp_path):
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    cfg = make_config()
    cfg["gateway"] = {"listen": "127.0.0.1:0", "backend": "slow"}
    # Prints half an answer, then waits until the test writes to the fifo.
    cfg["backends"].append({"name": "slow", "kind": "command", "timeout_seconds": 30,
                            "command": ["/bin/sh", "-c", f"cat >/dev/null; printf 'half an answer'; read line < {gate}; printf ', and the rest'"]})
    relay = relay_factory(cfg)
    sender, _ = await paired(relay, Identity())
    res = await sender.request("chat.send", {"sessionKey": "main", "message": "think hard", "idempotencyKey": "run-1"})
    assert res["ok"] and res["payload"]["status"] == "started", res
    await sender.event("chat", where=lambda p: p.get("state") == "delta" and "half an answer" in text(p["message"]), timeout=10)

    # Another device opens the session mid-run.
    other, _ = await paired(relay, Identity())
    history = (await other.request("chat.history", {"sessionKey": "main"}))["payload"]
    assert [text(app_message(m)) for m in history["messages"]] == ["think hard"], history
    assert history["sessionInfo"] == {"key": "main", "hasActiveRun": True, "activeRunIds": ["run-1"]}, history
    assert history["inFlightRun"] == {"runId": "run-1", "text": "half an answer"}, history

    writer = threading.Thread(target=lambda: gate.write_text("go\n"))
    writer.start()
    final = await other.event("chat", where=lambda p: p.get("runId") == "run-1" and p.get("state") == "final", timeout=10)
    writer.join()
    assert text(final["payload"]["message"]) == "half an answer, and the rest", final
    after = (await other.request("chat.history", {"sessionKey": "main"}))["payload"]
    assert after["sessionInfo"]["hasActiveRun"] is False and after["sessionInfo"]["activeRunIds"] == [], after
    assert "inFlightRun" not in after, after


async def test_subscribed_sessions_get_every_message_at_once_from_any_protocol(relay_factory):
    cfg = make_config()
    cfg["gateway"] = {"listen": "127.0.0.1:0"}
    relay, admin = await relay_of_one_user(relay_factory, cfg)
    watcher, hello = await paired(relay, Identity())
    features = hello["payload"]["features"]
    assert {"sessions.messages.subscribe", "sessions.messages.unsubscribe"} <= set(features["methods"]), features
    assert "session.message" in features["events"], features
    res = await watcher.request("sessions.messages.subscribe", {"key": "main"})
    assert res["ok"] and res["payload"] == {"subscribed": True, "key": "main"}, res

    # A Clawline phone of the same user types in the same conversation.
    phone, _ = await auth(relay, admin)
    await send_and_complete(phone, "from the phone")
    user = await watcher.event("session.message", where=lambda p: p["message"]["role"] == "user")
    payload = user["payload"]
    assert payload["sessionKey"] == "main" and text(app_message(payload["message"])) == "from the phone", payload
    assert isinstance(payload["messageId"], str) and payload["messageId"] == payload["message"]["id"], payload
    answer = await watcher.event("session.message", where=lambda p: p["message"]["role"] == "assistant")
    assert text(app_message(answer["payload"]["message"])) == "echo: from the phone", answer
    assert answer["payload"]["hasActiveRun"] is False and answer["payload"]["activeRunIds"] == [], answer

    # Another OpenClaw device's send carries its run, as the apps' outbox confirms a queued send by it.
    laptop, _ = await paired(relay, Identity())
    res = await laptop.request("chat.send", {"sessionKey": "main", "message": "from the laptop", "idempotencyKey": "lap-1"})
    assert res["ok"], res
    sent = await watcher.event("session.message", where=lambda p: text(p["message"]) == "from the laptop")
    assert sent["payload"]["message"]["idempotencyKey"] == "lap-1", sent
    assert sent["payload"]["hasActiveRun"] is True and sent["payload"]["activeRunIds"] == ["lap-1"], sent
    await watcher.event("session.message", where=lambda p: text(p["message"]) == "echo: from the laptop")

    # A session it did not subscribe to sends it nothing of the kind; after unsubscribing, neither does main.
    res = await watcher.request("sessions.messages.unsubscribe", {"key": "main"})
    assert res["ok"] and res["payload"] == {"subscribed": False, "key": "main"}, res
    res = await watcher.request("chat.send", {"sessionKey": "main", "message": "quiet now", "idempotencyKey": "q1"})
    assert res["ok"], res
    await watcher.event("chat", where=lambda p: p.get("runId") == "q1" and p.get("state") == "final")
    assert not [f for f in watcher.events + watcher.seen[-5:] if f.get("event") == "session.message"
                and text(f["payload"]["message"]).endswith("quiet now")], watcher.events

    # Bad input: no key; too many sessions at once.
    res = await watcher.request("sessions.messages.subscribe", {})
    assert res["ok"] is False and res["error"]["code"] == "INVALID_REQUEST", res
    for n in range(64):
        res = await watcher.request("sessions.messages.subscribe", {"key": f"s{n}"})
        assert res["ok"], (n, res)
    res = await watcher.request("sessions.messages.subscribe", {"key": "one-too-many"})
    assert res["ok"] is False and "at most 64" in res["error"]["message"], res
    res = await watcher.request("sessions.messages.subscribe", {"key": "s3"})
    assert res["ok"], res  # already subscribed: no new room needed
