"""DiscoClaw listener end to end: /health, tokens in the query next to other arguments, the device list as
the app decodes it, the app's second device joining the listener's one user (and another person's setup token
its own user), the socket's upgrade auth, tokens across a restart. The protocol logic of registration,
tokens, devices and HTTP errors is tested in memory (Tests/DiscoClawBridgeTests/DiscoClawAuthTests.swift)."""
import threading
import time
from http.client import HTTPConnection, RemoteDisconnected

import pytest
from websockets.exceptions import InvalidStatus

import conftest
from conftest import async_wait_for
from discoclaw_client import (
    SETUP_TOKEN,
    Socket,
    add_device,
    app_decodes_everything,  # noqa: F401  (autouse: every event must parse in the app)
    discoclaw_config,
    dport,
    expect,
    http,
    register,
    register_stranger,
    write_config,
)


@pytest.fixture
def drelay(relay_factory):
    return relay_factory(discoclaw_config())


async def test_health_needs_no_token_and_counts_open_sockets(drelay):
    health = expect(http(drelay, "GET", "/health"), 200, "health", "GET /health")
    assert health["ok"] is True and health["connections"] == 0 and health["uptime"] >= 0, health
    dev = register(drelay)
    sockets = [await Socket.connect(drelay, dev.token), await Socket.connect(drelay, dev.token)]
    await async_wait_for(lambda: expect(http(drelay, "GET", "/health"), 200, "health", "health")["connections"] == 2,
                         what="/health to count 2 open sockets")
    await sockets[0].close()
    await async_wait_for(lambda: expect(http(drelay, "GET", "/health"), 200, "health", "health")["connections"] == 1,
                         what="/health to count the closed socket out")


def test_query_token_next_to_other_query_parameters(drelay):
    dev = register(drelay)
    conv = dev.create_conversation("q")
    for path in ("/sync?since=0", f"/conversations/{conv['id']}/messages?limit=50", "/conversations?archived=true"):
        assert http(drelay, "GET", path, token=dev.token, auth="query").status == 200, f"{path}&token=T"
        wrong = expect(http(drelay, "GET", path, token="ab" * 32, auth="query"), 401, "string_error", path)
        assert wrong == {"error": "Invalid token"}, (path, wrong)
    first = expect(http(drelay, "GET", f"/sync?token={dev.token}&since=0"), 200, "sync", "token first")
    assert [c["id"] for c in first["conversations"]] == [conv["id"]], first


def test_a_second_device_joins_the_same_user_and_lists_with_one_current(drelay):
    phone = register(drelay, name="iPhone")
    mac = add_device(phone, name="MacBook", platform="macos")
    assert mac.device_id != phone.device_id and mac.token != phone.token, (phone, mac)
    me = mac.call("GET", "/auth/me", shape="me")
    assert me["user"]["id"] == phone.user_id and me["device"]["id"] == mac.device_id, me
    for dev in (phone, mac):
        listing = dev.call("GET", "/auth/devices", shape="devices")["devices"]
        by_id = {d["id"]: d for d in listing}
        assert set(by_id) == {phone.device_id, mac.device_id}, listing
        assert [d["id"] for d in listing if d["isCurrent"]] == [dev.device_id], listing
        assert by_id[mac.device_id]["name"] == "MacBook" and by_id[mac.device_id]["platform"] == "macos", listing
        assert by_id[phone.device_id]["name"] == "iPhone" and by_id[phone.device_id]["platform"] == "ios", listing
    stranger = register_stranger(drelay)
    assert stranger.user_id == "stranger" and stranger.device_id not in {d["id"] for d in phone.call("GET", "/auth/devices", shape="devices")["devices"]}


def test_the_apps_second_device_registers_into_the_same_user_and_sees_its_history(relay_factory):
    """As README shows it: the Mac registers with the setup token after the iPhone and sees the iPhone's
    conversation; Bob, with his own [[discoclaw.users]] token, gets his own user; a restart keeps both."""
    cfg = discoclaw_config(users=None)
    bob = '\n[[discoclaw.users]]\nsetup_token = "bobs-own-long-random-secret"\nuser_id = "bob"\n'
    relay = relay_factory(conftest.render_toml(cfg) + bob)
    phone = register(relay, name="iPhone")
    conv = phone.create_conversation("from the phone")
    phone.call("POST", f"/conversations/{conv['id']}/messages", {"content": "hello", "clientId": "C-1"}, 201, "sent")
    mac = register(relay, name="Mac", platform="macos")
    assert mac.user_id == phone.user_id, "the app's second device is not a new, empty account"
    assert [c["id"] for c in mac.call("GET", "/conversations", shape="conversation_list")] == [conv["id"]]
    assert "hello" in [m["content"] for m in mac.sync(0)["messages"]]
    listed = mac.call("GET", "/auth/devices", shape="devices")["devices"]
    assert {d["id"] for d in listed} == {phone.device_id, mac.device_id}, listed
    stranger = register(relay, name="Bob's phone", setup="bobs-own-long-random-secret")
    assert stranger.user_id == "bob" and stranger.call("GET", "/conversations", shape="conversation_list") == []
    assert [d["id"] for d in stranger.call("GET", "/auth/devices", shape="devices")["devices"]] == [stranger.device_id]
    relay.restart()
    assert register(relay, name="iPad").user_id == phone.user_id, "the listener's user survives a restart"


@pytest.mark.parametrize("case", ["missing", "wrong_query", "wrong_bearer"])
async def test_socket_with_a_bad_or_missing_token_is_refused_with_401(drelay, case):
    token, auth = {"missing": (None, "query"), "wrong_query": ("cd" * 32, "query"),
                   "wrong_bearer": ("cd" * 32, "bearer")}[case]
    with pytest.raises(InvalidStatus) as refused:
        await Socket.connect(drelay, token, auth=auth)
    assert refused.value.response.status_code == 401, refused.value


async def test_socket_accepts_the_query_token_and_the_bearer_header(drelay):
    dev = register(drelay)
    query = await Socket.connect(drelay, dev.token, auth="query", name="query")
    bearer = await Socket.connect(drelay, dev.token, auth="bearer", name="bearer")
    conv = dev.create_conversation("x")
    dev.call("PATCH", f"/conversations/{conv['id']}", {"title": "y"}, shape="conversation")
    for sock in (query, bearer):
        event = await sock.recv(5)
        assert event.get("type") == "conversation.updated" and event.get("conversationId") == conv["id"], event


def first_answer(port: int, token: str, timeout: float = 20.0) -> tuple[int, bytes]:
    """Poll until the listener answers `GET /auth/me`; connection refusals (not bound yet) are retried."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        conn = HTTPConnection("127.0.0.1", port, timeout=5)
        try:
            conn.request("GET", "/auth/me", headers={"Authorization": f"Bearer {token}"})
            resp = conn.getresponse()
            return resp.status, resp.read()
        except (ConnectionRefusedError, ConnectionResetError, RemoteDisconnected):
            time.sleep(0.002)  # the port is not bound yet: poll again
        finally:
            conn.close()
    raise AssertionError(f"the listener did not answer within {timeout}s")


def test_a_registered_token_works_from_the_first_answer_after_a_restart(drelay):
    dev = register(drelay)
    port = dport(drelay)
    write_config(drelay, discoclaw_config(listen=f"127.0.0.1:{port}"))  # same port, so it can be polled at start-up
    answers = []
    for _ in range(3):
        assert drelay.terminate() == 0
        starter = threading.Thread(target=drelay.start)
        starter.start()
        answers.append(first_answer(port, dev.token))
        starter.join()
        assert drelay.running, drelay.stderr_text()[-2000:]
    assert all(status == 200 for status, _ in answers), f"a valid token refused right after start-up: {answers}"
