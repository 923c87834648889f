"""A conversation chooses its backend: the `/backend` relay command (any protocol, shown over
Clawline), `[[companion.routes]]` by working directory, and `clawrelay conversations` for the
operator. The second backend prefixes its answers with `two:` so every answer names its backend."""
import asyncio
import json

from companion_client import CompanionClient, claude_command, companion_config, make_projects
from conftest import auth, make_config, pair_first_admin, send_and_complete

TWO = {"name": "two", "kind": "command", "command": ["/bin/sh", "-c", "printf 'two: '; cat"], "timeout_seconds": 30}


def with_two(cfg: dict) -> dict:
    cfg["backends"].append(dict(TWO))
    return cfg


def conversations(relay) -> list[dict]:
    return json.loads(relay.cli("conversations", "list", "--json").stdout)


async def test_the_backend_command_rebinds_a_clawline_conversation_and_no_backend_sees_it(relay_factory):
    relay = relay_factory(with_two(make_config()))
    admin = await pair_first_admin(relay)
    client, _ = await auth(relay, admin)
    assert (await send_and_complete(client, "hi")).final["content"] == "echo: hi"
    await send_and_complete(client, "/backend two", answer="This conversation is now answered by two (it was echo).")
    await send_and_complete(client, "hi", answer="two: hi")
    await send_and_complete(
        client, "/backend", answer="This conversation is answered by two. Backends: cmd, echo, two. Switch with /backend NAME.")
    await send_and_complete(client, "/backend nope", answer="There is no backend named nope. Backends: cmd, echo, two.")
    [timeline] = [c for c in conversations(relay) if "session:main" in c["keys"]]
    assert timeline["backend"] == "two", timeline
    show = json.loads(relay.cli("conversations", "show", timeline["id"], "--json", "--limit", "100").stdout)
    contents = [m["content"] for m in show["messages"]]
    assert "/backend two" in contents and "two: hi" in contents, "the command and its reply are history like any message"


async def test_conversations_bind_moves_a_running_relays_conversation(relay_factory):
    relay = relay_factory(with_two(make_config()))
    admin = await pair_first_admin(relay)
    client, _ = await auth(relay, admin)
    await send_and_complete(client, "start")
    [timeline] = [c for c in conversations(relay) if "session:main" in c["keys"]]
    assert timeline["backend"] is None, "unbound: the protocol's default answers"
    out = relay.cli("conversations", "bind", timeline["id"], "two").stdout
    assert f"{timeline['id']} is bound to two" in out and "not running" not in out, out
    await send_and_complete(client, "after bind", answer="two: after bind")
    refused = relay.cli("conversations", "bind", timeline["id"], "nope", check=False)
    assert refused.returncode != 0 and "no backend named nope" in refused.stderr, refused
    missing = relay.cli("conversations", "bind", "cv_missing", "two", check=False)
    assert missing.returncode != 0 and "no conversation cv_missing" in missing.stderr, missing


async def test_companion_routes_bind_new_sessions_by_working_directory(relay_factory, tmp_path):
    root = make_projects(tmp_path / "projects")
    cfg = with_two(companion_config(projects_root=root))
    cfg["companion"]["routes"] = [{"directory_prefix": str(root / "lib"), "backend": "two"}]
    relay = relay_factory(cfg)
    client = await CompanionClient.connect(relay, device_id="phone")
    routed = await claude_command(client, "hello", None, str(root / "lib"))
    assert routed.reply["data"]["content"] == "two: hello", routed.reply
    default = await claude_command(client, "hello", None, str(root / "app"))
    assert default.reply["data"]["content"] == "echo: hello", default.reply
    by_dir = {c["title"]: c["backend"] for c in conversations(relay)}
    assert by_dir.get("lib") == "two" and by_dir.get("app") is None, by_dir


def test_a_route_to_an_unknown_backend_stops_start_up_naming_the_line(relay_factory, tmp_path):
    cfg = companion_config(projects_root=make_projects(tmp_path / "projects"))
    cfg["companion"]["routes"] = [{"directory_prefix": "/srv", "backend": "nope"}]
    relay = relay_factory(cfg, start=False)
    result = relay.cli("serve", "--config", str(relay.config_path), check=False, timeout=20)
    assert result.returncode != 0 and "companion.routes" in result.stderr and "no backend named" in result.stderr, result.stderr
