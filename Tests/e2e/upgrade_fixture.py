"""The data directory a relay of the previous store schema (v13, main at 503907d) left behind, with
every protocol's data in it, for `test_store_upgrade.py`: a Clawline admin and a sibling device with
two answered messages, a Companion session whose answer waits in an away device's queue (rows of the
old `notification_queue`), a DiscoClaw device with an answered message, and a gateway operator
with a chat. `make` built `fixtures/upgrade-v13` once, with the old binary:

    CLAWRELAY_BIN=/path/to/503907d/clawrelay python3 -m pytest -q -p no:cacheprovider Tests/e2e/upgrade_fixture.py

(the file is named so that the suite never collects it). Tokens and keys in it are test-only."""
import asyncio
import base64
import json
import shutil
import sqlite3
from pathlib import Path

from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat

import discoclaw_client
from companion_client import TOKEN as COMPANION_TOKEN, CompanionClient, make_projects, projects, result_of, start_project
from conftest import make_config, send_and_complete, setup_admin, pair_and_approve, auth
from gateway_client import Identity, paired

FIXTURE = Path(__file__).parent / "fixtures" / "upgrade-v13"
# Companion sessions remember their project's absolute path, so the projects live at a fixed one.
PROJECTS = Path("/tmp/clawrelay-upgrade-fixture-projects")


def config() -> dict:
    make_projects(PROJECTS, ("app",))
    cfg = make_config()
    cfg["companion"] = {"listen": "127.0.0.1:0", "auth_token": COMPANION_TOKEN, "projects_root": str(PROJECTS)}
    cfg["discoclaw"] = {"listen": "127.0.0.1:0", "setup_token": discoclaw_client.SETUP_TOKEN, "backend": "echo"}
    cfg["gateway"] = {"listen": "127.0.0.1:0"}
    return cfg


async def make(relay_factory) -> None:
    relay = relay_factory(config())
    admin, client = await setup_admin(relay)
    sibling = await pair_and_approve(relay, client, user_id=admin.user_id, name="Sibling")
    for text in ("before the upgrade 1", "before the upgrade 2"):
        await send_and_complete(client, text)

    sid = start_project(relay, "app")["session"]["sessionId"]
    path = projects(relay)["app"]["path"]
    observer = await CompanionClient.connect(relay, device_id="observer", name="observer")
    await observer.subscribe(sid)
    phone = await CompanionClient.connect(relay, device_id="phone", name="phone")
    await phone.subscribe(sid)
    rid = await phone.send("claudeCommand", {"command": "queued over the upgrade", "projectPath": path, "sessionId": sid})
    await phone.close()
    await observer.recv_until(result_of(sid, "echo: queued over the upgrade"), 15)
    await observer.close()

    disco = discoclaw_client.register(relay)
    conversation = disco.create_conversation("kept")
    sock = await discoclaw_client.Socket.connect(relay, disco.token)
    await discoclaw_client.turn(disco, sock, conversation["id"], "disco before the upgrade")
    await sock.close()

    identity = Identity()
    operator, _ = await paired(relay, identity)
    await operator.request("chat.send", {"sessionKey": "s", "message": "gateway before the upgrade", "idempotencyKey": "k1"})
    await operator.event("chat", 10, lambda p: p.get("state") == "final")
    await operator.close()
    await client.close()
    assert relay.terminate() == 0

    with sqlite3.connect(relay.data_dir / "relay.sqlite") as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        queued = db.execute("SELECT device_id, COUNT(*) FROM notification_queue GROUP BY device_id").fetchall()
        assert queued, db.execute("SELECT id, protocol, claimed_name FROM devices").fetchall()
        assert db.execute("SELECT COUNT(*) FROM grdb_migrations").fetchone()[0] == 13
    shutil.rmtree(FIXTURE, ignore_errors=True)
    (FIXTURE / "data").mkdir(parents=True)
    for name in ("relay.sqlite", "jwt.key", "relay.json"):
        if (relay.data_dir / name).exists():
            shutil.copy(relay.data_dir / name, FIXTURE / "data" / name)
    for name in ("gateway", "accounts"):
        if (relay.data_dir / name).is_dir():
            shutil.copytree(relay.data_dir / name, FIXTURE / "data" / name)
    key = identity.key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
    (FIXTURE / "clients.json").write_text(json.dumps({
        "clawline": {"admin": vars(admin), "sibling": vars(sibling)},
        "companion": {"session": sid, "request": rid, "device": "phone"},
        "discoclaw": {"user": disco.user_id, "device": disco.device_id, "token": disco.token, "conversation": conversation["id"]},
        "gateway": {"key": base64.b64encode(key).decode(), "token": identity.token},
    }, indent=1) + "\n")


async def test_make_the_upgrade_fixture(relay_factory):
    await make(relay_factory)
