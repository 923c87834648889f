"""DiscoClaw conversations on the real store: DELETE cascades, /sync of metadata. The protocol logic of
creating, listing, PATCH (and its event), backends and isolation is tested in memory
(Tests/DiscoClawBridgeTests/DiscoClawConversationTests.swift)."""
import pytest

from discoclaw_client import (
    MISSING,
    Socket,
    app_decodes_everything,  # noqa: F401  (autouse: every event must parse in the app)
    discoclaw_config,
    expect,
    http,
    register,
    turn,
)

NOT_FOUND = {"statusCode": 404, "error": "Not Found", "message": "Not Found"}


@pytest.fixture
def drelay(relay_factory):
    return relay_factory(discoclaw_config())


def listing(dev, archived: str | None = None) -> dict[str, dict]:
    path = "/conversations" + (f"?archived={archived}" if archived is not None else "")
    return {c["id"]: c for c in dev.call("GET", path, shape="conversation_list")}


async def test_delete_cascades_to_messages_and_sync(drelay):
    dev = register(drelay)
    sock = await Socket.connect(drelay, dev.token)
    gone, kept = dev.create_conversation("gone"), dev.create_conversation("kept")
    await turn(dev, sock, gone["id"], "to be deleted")
    await turn(dev, sock, kept["id"], "to be kept")
    before = dev.sync(0)
    assert {m["conversationId"] for m in before["messages"]} == {gone["id"], kept["id"]}, before
    assert dev.call("DELETE", f"/conversations/{gone['id']}", status=204) is None
    for method, path, body in (("GET", f"/conversations/{gone['id']}", None),
                               ("GET", f"/conversations/{gone['id']}/messages", None),
                               ("POST", f"/conversations/{gone['id']}/messages", {"content": "hi"}),
                               ("PATCH", f"/conversations/{gone['id']}", {"title": "x"}),
                               ("DELETE", f"/conversations/{gone['id']}", None)):
        resp = http(drelay, method, path, body if body is not None else MISSING, token=dev.token)
        assert expect(resp, 404, "http_error", f"{method} {path} after DELETE") == NOT_FOUND
    after = dev.sync(0)
    assert [c["id"] for c in after["conversations"]] == [kept["id"]], after["conversations"]
    assert {m["conversationId"] for m in after["messages"]} == {kept["id"]}, after["messages"]
    assert len(after["messages"]) == 2 and set(listing(dev)) == {kept["id"]}, after


def test_sync_returns_metadata_changes_and_moves_the_cursor(drelay):
    dev = register(drelay)
    first, archived = dev.create_conversation("first"), dev.create_conversation("old")
    dev.call("PATCH", f"/conversations/{archived['id']}", {"archived": True}, shape="conversation")
    everything = dev.sync(0)
    by_id = {c["id"]: c for c in everything["conversations"]}
    assert set(by_id) == {first["id"], archived["id"]}, "since=0 includes archived conversations"
    assert isinstance(by_id[archived["id"]].get("archivedAt"), int), by_id
    cursor = dev.cursor
    quiet = dev.sync()
    assert quiet == {"conversations": [], "messages": [], "cursor": cursor}, quiet
    dev.call("PATCH", f"/conversations/{first['id']}", {"title": "renamed"}, shape="conversation")
    rename = dev.sync()
    assert rename["cursor"] > cursor, f"a rename alone moves the cursor: {cursor} -> {rename['cursor']}"
    assert [c["id"] for c in rename["conversations"]] == [first["id"]] and rename["messages"] == [], rename
    assert rename["conversations"][0]["title"] == "renamed", rename
    assert dev.sync() == {"conversations": [], "messages": [], "cursor": rename["cursor"]}
    created = dev.create_conversation("later")
    assert [c["id"] for c in dev.sync()["conversations"]] == [created["id"]], "a new conversation is a change too"
