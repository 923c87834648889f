"""DiscoClaw conversations: create, get, list, PATCH (and its event), backends, DELETE, /sync of metadata, isolation."""
import pytest

from discoclaw_client import (
    MISSING,
    Socket,
    add_device,
    app_decodes_everything,  # noqa: F401  (autouse: every event must parse in the app)
    discoclaw_config,
    expect,
    http,
    of,
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


def test_create_get_and_list(drelay):
    dev = register(drelay)
    titled = dev.create_conversation("Groceries")
    assert titled["title"] == "Groceries" and titled["isProtected"] is False, titled
    assert titled["createdAt"] <= titled["updatedAt"] and titled.get("archivedAt") is None, titled
    untitled = dev.call("POST", "/conversations", {}, 201, "conversation")
    assert untitled.get("title") is None and untitled["id"] != titled["id"], untitled
    detail = dev.call("GET", f"/conversations/{titled['id']}", shape="conversation")
    assert "claudeSessionId" in detail and detail["claudeSessionId"] is None, detail
    assert {k: detail[k] for k in ("id", "title", "createdAt", "isProtected")} == \
        {k: titled[k] for k in ("id", "title", "createdAt", "isProtected")}, (titled, detail)
    items = listing(dev)
    assert set(items) == {titled["id"], untitled["id"]}, items
    item = items[titled["id"]]
    assert item["isProtected"] is False and item["title"] == "Groceries" and item.get("lastMessage") is None, item
    assert item["createdAt"] == titled["createdAt"], item
    got = expect(http(drelay, "GET", "/conversations/cv_nope", token=dev.token), 404, "http_error", "unknown id")
    assert got == NOT_FOUND, got


async def test_list_items_carry_the_last_message(drelay):
    dev = register(drelay)
    sock = await Socket.connect(drelay, dev.token)
    conv = dev.create_conversation("chat")
    done = await turn(dev, sock, conv["id"], "what is new")
    item = listing(dev)[conv["id"]]
    last = item.get("lastMessage")
    assert last is not None and last["role"] == "assistant" and last["content"] == "echo: what is new", item
    assert last["createdAt"] >= conv["createdAt"] and item["updatedAt"] >= conv["updatedAt"], (conv, item, done.sent)


async def test_patch_renames_archives_and_tells_every_socket_of_the_user(drelay):
    phone = register(drelay)
    mac = add_device(phone)
    conv = phone.create_conversation("Old")  # before the sockets: each event below is a PATCH's
    sockets = [await Socket.connect(drelay, phone.token, name="phone-1"), await Socket.connect(drelay, phone.token, name="phone-2"),
               await Socket.connect(drelay, mac.token, name="mac")]

    renamed = phone.call("PATCH", f"/conversations/{conv['id']}", {"title": "New"}, shape="conversation")
    assert renamed["id"] == conv["id"] and renamed["title"] == "New" and renamed.get("archivedAt") is None, renamed
    assert renamed["createdAt"] == conv["createdAt"] and renamed["updatedAt"] >= conv["updatedAt"], (conv, renamed)
    for sock in sockets:
        event = await sock.recv(5)
        assert of("conversation.updated", conversation_id=conv["id"])(event), (sock.name, event)
    assert mac.call("GET", f"/conversations/{conv['id']}", shape="conversation")["title"] == "New"

    archived = mac.call("PATCH", f"/conversations/{conv['id']}", {"archived": True}, shape="conversation")
    assert isinstance(archived.get("archivedAt"), int) and archived["title"] == "New", archived
    for sock in sockets:
        event = await sock.recv(5)
        assert of("conversation.updated", conversation_id=conv["id"])(event), (sock.name, event)
    assert conv["id"] not in listing(phone) and conv["id"] not in listing(phone, "false"), "archived: hidden by default"
    assert listing(phone, "true")[conv["id"]]["archivedAt"] == archived["archivedAt"], "archived=true includes it"

    restored = phone.call("PATCH", f"/conversations/{conv['id']}", {"archived": False}, shape="conversation")
    assert restored.get("archivedAt") is None, restored
    assert listing(phone)[conv["id"]].get("archivedAt") is None
    for sock in sockets:
        event = await sock.recv(5)
        assert of("conversation.updated", conversation_id=conv["id"])(event), (sock.name, event)
    got = expect(http(drelay, "PATCH", "/conversations/cv_nope", {"title": "x"}, token=phone.token), 404, "http_error", "x")
    assert got == NOT_FOUND, got


async def test_backend_is_chosen_per_conversation(drelay):
    dev = register(drelay)
    sock = await Socket.connect(drelay, dev.token)
    bad = expect(http(drelay, "POST", "/conversations", {"title": "x", "backend": "nope"}, token=dev.token),
                 400, "http_error", "POST unknown backend")
    assert bad["error"] == "Bad Request" and bad["message"], bad
    conv = dev.create_conversation("failing", backend="cmd")
    assert conv.get("backend") == "cmd", conv
    sent = await dev.post_message(conv["id"], "boom")
    error, _ = await sock.recv_until(of("message.error", sent["assistantMessageId"]), 10)
    assert error["conversationId"] == conv["id"] and error["error"], error
    bad = expect(http(drelay, "PATCH", f"/conversations/{conv['id']}", {"backend": "nope"}, token=dev.token),
                 400, "http_error", "PATCH unknown backend")
    assert bad["statusCode"] == 400, bad
    switched = dev.call("PATCH", f"/conversations/{conv['id']}", {"backend": "echo"}, shape="conversation")
    assert switched.get("backend") == "echo", switched
    done = await turn(dev, sock, conv["id"], "works now")
    assert done.complete["content"] == "echo: works now", done.complete


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


async def test_another_users_conversations_are_404_and_silent(drelay):
    alice, bob = register(drelay), register(drelay)
    bob_socket = await Socket.connect(drelay, bob.token, name="bob")
    alice_socket = await Socket.connect(drelay, alice.token, name="alice")
    conv = alice.create_conversation("private")
    await turn(alice, alice_socket, conv["id"], "secret")
    cid = conv["id"]
    for method, path, body in (("GET", f"/conversations/{cid}", None), ("PATCH", f"/conversations/{cid}", {"title": "mine"}),
                               ("GET", f"/conversations/{cid}/messages", None),
                               ("POST", f"/conversations/{cid}/messages", {"content": "hi"}),
                               ("DELETE", f"/conversations/{cid}", None)):
        resp = http(drelay, method, path, body if body is not None else MISSING, token=bob.token)
        assert expect(resp, 404, "http_error", f"bob {method} {path}") == NOT_FOUND
    assert listing(bob) == {} and listing(bob, "true") == {}
    synced = bob.sync(0)
    assert synced["conversations"] == [] and synced["messages"] == [], synced
    assert alice.call("GET", f"/conversations/{cid}", shape="conversation")["title"] == "private"
    assert len(alice.call("GET", f"/conversations/{cid}/messages", shape="messages")["messages"]) == 2
    alice.call("PATCH", f"/conversations/{cid}", {"title": "renamed"}, shape="conversation")
    await turn(alice, alice_socket, cid, "more secrets")
    await bob_socket.expect_silence(0.5)  # bounded absence check: Alice's events never reach Bob


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
