"""Approvals through the real binary, with today's backends (echo asks nothing): the paths that answer
without a pending question in each protocol's own form. A permission prompt asked, answered, resolved
elsewhere and re-sent is tested in memory (Tests/CompanionBridgeTests/CompanionPermissionTests.swift,
Tests/ClawlineBridgeTests/ClawlineApprovalTests.swift, Tests/DiscoClawBridgeTests/DiscoClawApprovalTests.swift);
the real Claude Code CLI's prompts end to end come with its long-lived backend."""
import pytest

from companion_client import (
    CompanionClient,
    app_decodes_every_frame,  # noqa: F401  (autouse: every Companion frame must decode in the app)
    assert_error,
    claude_command,
    companion_config,
    make_projects,
    projects,
    rest,
    start_project,
)
from conftest import send_and_complete, setup_admin
from discoclaw_client import (
    SETUP_TOKEN,
    Socket,
    app_decodes_everything,  # noqa: F401  (autouse: every DiscoClaw event must parse in the app)
    register,
    turn,
)

NOTHING_WAITS = "There is no approval waiting."


@pytest.fixture
def arelay(relay_factory, tmp_path):
    """Clawline, Companion and DiscoClaw on one relay answered by echo."""
    cfg = companion_config(projects_root=make_projects(tmp_path / "projects", ("app",)))
    cfg["discoclaw"] = {"listen": "127.0.0.1:0", "setup_token": SETUP_TOKEN, "backend": "echo"}
    return relay_factory(cfg)


async def test_companion_permission_with_nothing_pending_is_refused_over_the_socket_and_http(arelay):
    sid = start_project(arelay, "app")["session"]["sessionId"]
    client = await CompanionClient.connect(arelay)
    await client.subscribe(sid)
    refused = await client.expect_error("permission", {"sessionId": sid, "response": "Allow once", "remember": False},
                                        "NO_PENDING_PERMISSION")
    assert refused["data"]["sessionId"] == sid, refused
    unknown = await client.expect_error("permission", {"sessionId": sid, "response": "sounds good", "remember": False},
                                        "INVALID_MESSAGE")
    assert "Allow once, Always allow, Deny" in unknown["data"]["message"], unknown
    await client.expect_error("permission", {"sessionId": sid}, "INVALID_MESSAGE")
    await client.assert_open()

    none = rest(arelay, "POST", f"/api/permission/{sid}", body={"response": "y"})
    assert none.status == 409 and none.json()["code"] == "NO_PENDING_PERMISSION", (none.status, none.body)
    missing = rest(arelay, "POST", f"/api/permission/{sid}", body={})
    assert missing.status == 400 and missing.json()["code"] == "INVALID_MESSAGE", (missing.status, missing.body)
    assert rest(arelay, "POST", f"/api/permission/{sid}", body={"response": "y"}, token="wrong").status == 401


async def test_companion_approve_command_is_answered_by_the_relay(arelay):
    sid = start_project(arelay, "app")["session"]["sessionId"]
    client = await CompanionClient.connect(arelay)
    await client.subscribe(sid)
    done = await claude_command(client, "/approve", sid, projects(arelay)["app"]["path"])
    assert done.reply["type"] == "claudeResponse" and done.reply["data"]["content"] == NOTHING_WAITS, done.reply
    notes = [f for f in done.frames if f["type"] == "assistantMessage" and f["data"]["type"] == "relay_note"]
    assert notes == [], "a reply to a relay command is an answer, not a note"


async def test_clawline_approve_with_an_unknown_id_is_answered_by_the_relay(arelay):
    _, client = await setup_admin(arelay)
    exchange = await send_and_complete(client, "/approve zzzz", answer="Could not approve: no pending approval zzzz.")
    assert exchange.final["role"] == "assistant" and exchange.final["streaming"] is False, exchange.final
    await send_and_complete(client, "/deny", answer=NOTHING_WAITS)


async def test_discoclaw_deny_with_nothing_pending_is_answered_by_the_relay(arelay):
    phone = register(arelay)
    sock = await Socket.connect(arelay, phone.token)
    conv = phone.create_conversation("approvals")
    done = await turn(phone, sock, conv["id"], "/deny")
    assert done.complete["content"] == NOTHING_WAITS, done.complete
    rows = phone.sync(0)["messages"]
    assert [(r["role"], r["content"]) for r in rows] == [("user", "/deny"), ("assistant", NOTHING_WAITS)], rows
    await sock.close()
