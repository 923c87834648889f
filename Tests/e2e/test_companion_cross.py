"""Claude Companion and Clawline as one user: `[companion] user_id` = a Clawline user's id."""
import asyncio

from companion_client import (
    CompanionClient,
    app_decodes_every_frame,  # noqa: F401  (autouse: every frame must decode in the app)
    chunks_of,
    claude_command,
    companion_config,
    make_projects,
    rest_json,
    result_of,
    same_device,
    write_config,
)
from conftest import auth, is_assistant_final, is_user_echo, pair_first_admin, send_and_complete


async def shared_user(relay_factory, tmp_path):
    """Pair a Clawline admin, then restart the relay with the Companion user set to the admin's user."""
    root = make_projects(tmp_path / "projects")
    relay = relay_factory(companion_config(projects_root=root))
    admin = await pair_first_admin(relay)
    write_config(relay, companion_config(projects_root=root, user_id=admin.user_id))
    await asyncio.to_thread(relay.restart)
    claw, _ = await auth(relay, admin, name="clawline")
    await send_and_complete(claw, "start the timeline")
    sessions = rest_json(relay, "GET", "/api/sessions")["sessions"]
    timelines = [s for s in sessions if s.startswith("cv_")]
    assert len(timelines) == 1, f"the Clawline timeline is a Companion session named by its conversation id: {sessions}"
    return relay, admin, claw, timelines[0]


async def test_a_clawline_message_reaches_a_companion_socket_holding_the_timeline(relay_factory, tmp_path):
    relay, admin, claw, timeline = await shared_user(relay_factory, tmp_path)
    companion = await CompanionClient.connect(relay, device_id="companion-phone")
    subscribed, _ = await companion.subscribe(timeline)
    assert subscribed["data"]["sessionIds"] == [timeline], subscribed
    await send_and_complete(claw, "hello from clawline")
    result, before = await companion.recv_until(result_of(timeline, "echo: hello from clawline"), 10)
    assert "_queued" not in result and result["data"]["success"] is True, result
    users = [f for f in before if f["type"] == "userMessage" and f["data"]["content"] == "hello from clawline"]
    assert len(users) == 1, f"the Clawline user message reaches the Companion socket: {before}"
    user = users[0]["data"]
    assert user["sessionId"] == timeline and user["deviceId"] == admin.device_id, user
    text = [c["content"] for c in chunks_of(before, timeline) if c["type"] == "text"]
    assert "\n\n".join(text) == "echo: hello from clawline", before
    complete = [c for c in chunks_of(before, timeline) if c["type"] == "complete"]
    assert len(complete) == 1 and complete[0]["isFinal"] is True, before
    assert not any(f["type"] == "claudeResponse" for f in companion.frames), "no claudeResponse for someone else's message"


async def test_a_companion_command_reaches_the_clawline_device(relay_factory, tmp_path):
    relay, admin, claw, timeline = await shared_user(relay_factory, tmp_path)
    companion = await CompanionClient.connect(relay, device_id="companion-phone")
    turn = await claude_command(companion, "hello from the app", timeline, None)
    assert turn.reply["type"] == "claudeResponse", turn.reply
    assert turn.reply["data"] == {**turn.reply["data"], "content": "echo: hello from the app", "success": True,
                                  "sessionId": timeline}, turn.reply
    echo, _ = await claw.recv_until(is_user_echo("hello from the app"), 10)
    assert same_device(echo.get("deviceId"), "companion-phone"), f"the Clawline user echo names the Companion device: {echo}"
    final, _ = await claw.recv_until(is_assistant_final("echo: hello from the app"), 10)
    assert final["streaming"] is False, final


async def test_both_apps_share_the_history_of_the_timeline(relay_factory, tmp_path):
    relay, admin, claw, timeline = await shared_user(relay_factory, tmp_path)
    before = rest_json(relay, "GET", "/api/sessions")
    detail = next(d for d in before["details"] if d["sessionId"] == timeline)
    assert detail["messageCount"] >= 1, f"the Clawline exchange is in the session's history: {detail}"
    companion = await CompanionClient.connect(relay, device_id="companion-phone")
    await claude_command(companion, "one more", timeline, None)
    after = next(d for d in rest_json(relay, "GET", "/api/sessions")["details"] if d["sessionId"] == timeline)
    assert after["messageCount"] > detail["messageCount"], (detail, after)
