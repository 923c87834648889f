"""One id grammar for the operator CLI (issue 25 item 7): every command that takes a device or a
conversation id takes the whole id or a unique prefix of 8 or more characters (what `clawrelay
audit` prints); an ambiguous prefix is refused naming the matches, a shorter one saying so. The
rules themselves are unit-tested in Tests/RelayStoreTests/OperatorLookupTests.swift."""

import asyncio
import json

from companion_client import CompanionClient, companion_config, make_projects
from conftest import Client, async_wait_for, auth, new_device_id, pair_and_approve, pair_request, setup_admin


async def cli(relay, *args, check=True):
    return await asyncio.to_thread(relay.cli, *args, check=check)


async def test_device_commands_take_the_prefix_the_audit_prints(relay):
    admin, admin_client = await setup_admin(relay)
    pending_id = new_device_id()
    requester = await Client.connect(relay, "requester")
    await requester.send_json(pair_request(pending_id, "Tablet"))
    await async_wait_for(lambda: (relay.device(pending_id) or {}).get("status") == "pending", what="pending request")

    approved = await cli(relay, "devices", "approve", pending_id[:8], "--user", admin.user_id)
    assert approved.stdout.startswith(f"{pending_id}: approved"), approved.stdout
    await requester.expect("pair_result", timeout=5)

    member = await pair_and_approve(relay, admin_client, name="Member")
    prefix = member.device_id[:9]
    assert (await cli(relay, "devices", "admin", prefix)).stdout.strip() == f"{member.device_id}: admin"
    assert (await asyncio.to_thread(relay.device, member.device_id))["isAdmin"] is True
    await cli(relay, "devices", "admin", prefix, "--remove")
    pushed = await cli(relay, "devices", "push", prefix, "--ntfy", "https://ntfy.example/topic-1")
    assert pushed.stdout.startswith(member.device_id), pushed.stdout
    await cli(relay, "devices", "deny", prefix)
    assert (await asyncio.to_thread(relay.device, member.device_id))["status"] == "denied"
    await cli(relay, "devices", "allow", prefix)
    member_client, result = await auth(relay, member)
    assert result["success"] is True
    revoked = await cli(relay, "devices", "revoke", prefix)
    assert revoked.stdout.startswith(f"{member.device_id}: revoked (undo with: "), revoked.stdout
    await member_client.expect_close(1008, timeout=3)


async def test_an_ambiguous_or_short_device_prefix_is_refused(relay_factory, tmp_path):
    relay = relay_factory(companion_config(projects_root=make_projects(tmp_path / "projects")))
    twins = [await CompanionClient.connect(relay, device_id=f"twin-000{n}") for n in (1, 2)]
    await async_wait_for(lambda: len([d for d in relay.devices() if "twin-" in d["deviceId"]]) == 2, what="both twins listed")
    [first, second] = sorted(d["deviceId"] for d in relay.devices() if "twin-" in d["deviceId"])

    ambiguous = await cli(relay, "devices", "revoke", first[:-1], check=False)
    assert ambiguous.returncode == 1, ambiguous
    assert "more than one device" in ambiguous.stderr and first in ambiguous.stderr and second in ambiguous.stderr, ambiguous.stderr
    short = await cli(relay, "devices", "revoke", "twin", check=False)
    assert short.returncode == 1 and "at least 8 characters" in short.stderr, short.stderr
    assert {d["status"] for d in relay.devices() if "twin-" in d["deviceId"]} == {"approved"}, "nothing was revoked"
    whole = await cli(relay, "devices", "revoke", second)
    assert whole.stdout.startswith(f"{second}: revoked (undo with: "), whole.stdout
    for twin in twins:
        await twin.close()


async def test_conversation_commands_take_a_prefix(relay_factory):
    from conftest import make_config, send_and_complete

    cfg = make_config()
    cfg["backends"].append({"name": "two", "kind": "command", "command": ["/bin/sh", "-c", "printf 'two: '; cat"],
                            "timeout_seconds": 30})
    relay = relay_factory(cfg)
    admin, client = await setup_admin(relay)
    await send_and_complete(client, "hello")
    [timeline] = [c for c in json.loads(relay.cli("conversations", "list", "--json").stdout) if "session:main" in c["keys"]]
    prefix = timeline["id"][:11]
    shown = json.loads((await cli(relay, "conversations", "show", prefix, "--json")).stdout)
    assert shown["id"] == timeline["id"], shown
    bound = await cli(relay, "conversations", "bind", prefix, "two")
    assert f"{timeline['id']} is bound to two" in bound.stdout, bound.stdout
    await send_and_complete(client, "after", answer="two: after")
    short = await cli(relay, "conversations", "show", "cv_", check=False)
    assert short.returncode == 1 and "at least 8 characters" in short.stderr, short.stderr
