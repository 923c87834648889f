"""DiscoClaw answers stay bounded: a history of large messages comes in parts (by the cursor, or
by "load earlier") that together hold every message once."""
import json

import discoclaw_client as dc
from discoclaw_client import app_decodes_everything  # noqa: F401  (autouse)

BIG = 900_000  # under max_body_bytes (1 MiB); the echo answer is as large
BUDGET = 4 << 20  # the relay's per-answer budget of message text


async def test_a_large_history_syncs_in_bounded_parts_and_nothing_is_lost(relay_factory):
    relay = relay_factory(dc.discoclaw_config())
    device = dc.register(relay)
    conversation = device.create_conversation("big")
    sock = await dc.Socket.connect(relay, device.token)
    sent = []
    for index in range(8):
        done = await dc.turn(device, sock, conversation["id"], f"{index}:" + "x" * BIG, dc.new_client_id(), timeout=30)
        sent += [done.sent["id"], done.sent["assistantMessageId"]]
    seen, parts, since = [], 0, 0
    while True:
        resp = dc.http(relay, "GET", f"/sync?since={since}", token=device.token)
        assert resp.status == 200, resp
        assert len(resp.body) < BUDGET + 1_100_000, f"one /sync carries about the budget at most: {len(resp.body)} bytes"
        body = dc.expect(resp, 200, "sync", "GET /sync")
        if not body["messages"]:
            break
        parts += 1
        seen += [m["id"] for m in body["messages"]]
        assert body["cursor"] == body["messages"][-1]["seq"], body["cursor"]
        since = body["cursor"]
    assert parts >= 4, f"16 messages of ~0.9 MB need several parts: {parts}"
    assert seen == sent, "every message once, in order"

    pages, before, older = 0, None, []
    while True:
        path = f"/conversations/{conversation['id']}/messages?limit=200" + (f"&before={before}" if before else "")
        resp = dc.http(relay, "GET", path, token=device.token)
        assert len(resp.body) < BUDGET + 1_100_000, len(resp.body)
        page = dc.expect(resp, 200, "messages", f"GET {path}")
        pages += 1
        older = [m["id"] for m in page["messages"]] + older
        if not page["hasMore"]:
            break
        before = page["messages"][0]["seq"]
    assert pages >= 4 and older == sent, (pages, len(older))
