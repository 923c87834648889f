"""A data directory of the previous store schema (v13) upgrades in place and every protocol keeps
its data (issue 26's migrations: queues by cursor, the lean write path). The directory was made by
that release (`upgrade_fixture.py` says how) with every protocol's data in it; this starts today's
relay on a copy of it and reads everything back as each app would."""
import base64
import hashlib
import hmac
import json
import shutil
import sqlite3
import time

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

import discoclaw_client
from companion_client import CompanionClient
from conftest import Device, auth, is_user_echo, send_and_complete
from gateway_client import Identity, paired
from test_companion_queue import check_queued, read_queue
from upgrade_fixture import FIXTURE, config


def fresh_token(key: bytes, device: dict, is_admin: bool) -> str:
    """A Clawline token as the relay signs them (HS256 with the data directory's key), minted now:
    the fixture's own run out a year after it was made. The device's stored token hash is set to it
    before the relay starts, as a re-issue would."""
    def part(value) -> str:
        return base64.urlsafe_b64encode(json.dumps(value, separators=(",", ":")).encode()).rstrip(b"=").decode()
    now = int(time.time())
    body = {"deviceId": device["device_id"], "exp": now + 3600, "iat": now, "isAdmin": is_admin, "sub": device["user_id"]}
    signing = part({"alg": "HS256", "typ": "JWT"}) + "." + part(body)
    signature = base64.urlsafe_b64encode(hmac.new(key, signing.encode(), hashlib.sha256).digest()).rstrip(b"=").decode()
    return signing + "." + signature


async def test_a_v13_data_directory_upgrades_and_every_protocol_keeps_its_data(relay_factory):
    clients = json.loads((FIXTURE / "clients.json").read_text())
    relay = relay_factory(config(), start=False)
    shutil.copytree(FIXTURE / "data", relay.data_dir)
    key = (relay.data_dir / "jwt.key").read_bytes()
    admin_entry = clients["clawline"]["admin"]
    token = fresh_token(key, admin_entry, True)
    with sqlite3.connect(relay.data_dir / "relay.sqlite") as db:
        db.execute("UPDATE devices SET token_hash = ? WHERE id = ?", (hashlib.sha256(token.encode()).hexdigest(), admin_entry["device_id"]))
    relay.start()
    with sqlite3.connect(relay.data_dir / "relay.sqlite") as db:
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "notification_queue" not in tables and "queue_delivered" in tables, tables

    # Clawline: the history, and a new message on the same clock.
    admin = Device(admin_entry["device_id"], token, admin_entry["user_id"], "Admin")
    client, result = await auth(relay, admin, last_message_id=None)
    replayed = [await client.recv_json() for _ in range(result["replayCount"])]
    for text in ("before the upgrade 1", "before the upgrade 2"):
        assert any(is_user_echo(text)(f) for f in replayed), (text, replayed)
        assert any(f.get("role") == "assistant" and f.get("content") == f"echo: {text}" for f in replayed), replayed
    after = await send_and_complete(client, "after the upgrade")
    assert after.final["content"] == "echo: after the upgrade"
    await client.close()

    # Companion: the answer queued for the away phone comes once, marked _queued.
    companion = clients["companion"]
    phone = await CompanionClient.connect(relay, device_id=companion["device"], name="phone")
    await phone.subscribe(companion["session"])
    check_queued(await read_queue(phone, companion["request"]), companion["request"], companion["session"],
                 answer="echo: queued over the upgrade")
    await phone.close()
    again = await CompanionClient.connect(relay, device_id=companion["device"], name="phone")
    await again.subscribe(companion["session"])
    # Handed out once: nothing queued or answering the request comes again.
    await again.expect_silence(1.0, ignore=lambda f: f.get("requestId") != companion["request"] and not f.get("_queued"))
    await again.close()

    # DiscoClaw: the device's sync has its conversation and both messages.
    disco = clients["discoclaw"]
    device = discoclaw_client.Device(relay, disco["user"], disco["device"], disco["token"])
    synced = device.sync(0)
    contents = [m["content"] for m in synced["messages"] if m["conversationId"] == disco["conversation"]]
    assert contents == ["disco before the upgrade", "echo: disco before the upgrade"], synced

    # Gateway: the operator reconnects with its key and token and reads its chat.
    identity = Identity()
    identity.key = Ed25519PrivateKey.from_private_bytes(base64.b64decode(clients["gateway"]["key"]))
    identity.raw = identity.key.public_key().public_bytes_raw()
    identity.device_id = hashlib.sha256(identity.raw).hexdigest()
    identity.token = clients["gateway"]["token"]
    operator, _ = await paired(relay, identity)
    history = await operator.request("chat.history", {"sessionKey": "s"})
    texts = [(m["role"], m["content"][0]["text"]) for m in history["payload"]["messages"]]
    assert texts == [("user", "gateway before the upgrade"), ("assistant", "echo: gateway before the upgrade")], history
    await operator.close()
