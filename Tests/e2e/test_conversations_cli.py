"""`clawrelay conversations list` names the backend that answers each conversation's next turn (issue
25 item 4: a DiscoClaw conversation showed `echo` where `[discoclaw] backend` answered it): its
binding, else the default of the listener it belongs to, else the first backend, read from the
configuration the running relay started from (no `--config` needed), in aligned columns. Which
listener owns which conversation is unit-tested in Tests/RelayServerTests/ConversationOwnerConfigTests.swift."""

import json

from conftest import send_and_complete, setup_admin
from discoclaw_client import Socket, app_decodes_everything, discoclaw_config, register, turn  # noqa: F401

TWO = {"name": "two", "kind": "command", "command": ["/bin/sh", "-c", "printf 'two: '; cat"], "timeout_seconds": 30}


def listing(relay) -> list[dict]:
    return json.loads(relay.cli("conversations", "list", "--json").stdout)


def column_starts(line: str, header: list[str]) -> list[int]:
    return [line.index(name) for name in header]


async def test_the_listed_backend_is_the_one_that_answers(relay_factory):
    cfg = discoclaw_config()
    cfg["backends"].append(dict(TWO))
    cfg["discoclaw"]["backend"] = "two"
    relay = relay_factory(cfg)
    admin, client = await setup_admin(relay)
    await send_and_complete(client, "on the timeline")  # [clawline] backend = "echo"
    dev = register(relay)
    sock = await Socket.connect(relay, dev.token)
    conversation = dev.create_conversation("disco")
    answered = await turn(dev, sock, conversation["id"], "hi")
    assert answered.complete["content"] == "two: hi", answered.complete

    rows = {c["id"]: c for c in listing(relay)}
    disco = rows[conversation["id"]]
    assert disco["backend"] is None and disco["answeredBy"] == "two", disco
    [timeline] = [c for c in rows.values() if "session:main" in c["keys"]]
    assert timeline["answeredBy"] == "echo", timeline

    lines = relay.cli("conversations", "list").stdout.splitlines()
    header = ["ID", "USER", "BACKEND", "EVENTS", "UPDATED", "TITLE", "KEYS"]
    assert lines[0].split() == header, lines
    starts = column_starts(lines[0], header)
    [disco_line] = [line for line in lines if line.startswith(conversation["id"])]
    assert disco_line[starts[2]:].startswith("two ([discoclaw] backend)"), lines
    assert disco_line[starts[1]:].startswith(dev.user_id), "columns start under their headers"
    [timeline_line] = [line for line in lines if line.startswith(timeline["id"])]
    assert timeline_line[starts[2]:].startswith("echo ([clawline] backend)"), lines

    # Bound elsewhere (PATCH from the app): the binding answers, and the listing says so.
    dev.call("PATCH", f"/conversations/{conversation['id']}", {"backend": "echo"}, 200, "conversation")
    again = await turn(dev, sock, conversation["id"], "bound")
    assert again.complete["content"] == "echo: bound", again.complete
    rebound = {c["id"]: c for c in listing(relay)}[conversation["id"]]
    assert rebound["backend"] == "echo" and rebound["answeredBy"] == "echo", rebound
    shown = relay.cli("conversations", "show", conversation["id"]).stdout
    assert "backend echo " in shown.splitlines()[0], shown
    await sock.close()


async def test_a_stopped_relay_is_described_by_the_configuration_it_ran(relay_factory):
    cfg = discoclaw_config()
    cfg["backends"].append(dict(TWO))
    cfg["discoclaw"]["backend"] = "two"
    relay = relay_factory(cfg)
    dev = register(relay)
    conversation = dev.create_conversation("disco")
    assert relay.terminate() == 0
    rows = {c["id"]: c for c in listing(relay)}
    assert rows[conversation["id"]]["answeredBy"] == "two", rows
    # An offline bind checks the name against the same configuration.
    refused = relay.cli("conversations", "bind", conversation["id"], "nope", check=False)
    assert refused.returncode == 1 and "no backend named nope" in refused.stderr, refused.stderr
    bound = relay.cli("conversations", "bind", conversation["id"], "echo")
    assert "applies at the next start" in bound.stdout, bound.stdout
