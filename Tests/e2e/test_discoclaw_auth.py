"""DiscoClaw listener: /health, registration, tokens, devices, HTTP errors, the socket's upgrade auth."""
import re
import threading
import time
from http.client import HTTPConnection, RemoteDisconnected

import pytest
from websockets.exceptions import InvalidStatus

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
    write_config,
)

HEX64 = re.compile(r"^[0-9a-f]{64}$")
NOT_FOUND = {"statusCode": 404, "error": "Not Found", "message": "Not Found"}


@pytest.fixture
def drelay(relay_factory):
    return relay_factory(discoclaw_config())


def reg_body(**kw):
    body = {"name": "iPhone", "platform": "ios", "setupToken": SETUP_TOKEN}
    body.update(kw)
    return {k: v for k, v in body.items() if v is not None}


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


def test_register_returns_ids_and_a_hex_token_that_authenticates(drelay):
    resp = http(drelay, "POST", "/auth/register", reg_body(name="Tim's iPhone"))
    reg = expect(resp, 201, "register", "register")
    assert HEX64.match(reg["token"]), f"32 random bytes as hex: {reg['token']!r}"
    me = expect(http(drelay, "GET", "/auth/me", token=reg["token"]), 200, "me", "me")
    assert me["user"]["id"] == reg["userId"], me
    assert me["device"] == {**me["device"], "id": reg["deviceId"], "name": "Tim's iPhone", "platform": "ios"}, me
    second = expect(http(drelay, "POST", "/auth/register", reg_body()), 201, "register", "register")
    assert second["userId"] != reg["userId"], "without [discoclaw] user_id every registration is its own user"
    assert second["token"] != reg["token"] and second["deviceId"] != reg["deviceId"], (reg, second)


def test_register_without_a_name_as_the_app_sends_it(drelay):
    reg = expect(http(drelay, "POST", "/auth/register", reg_body(name=None, platform="macos")), 201, "register", "r")
    me = expect(http(drelay, "GET", "/auth/me", token=reg["token"]), 200, "me", "me")
    assert me["device"]["id"] == reg["deviceId"] and me["device"].get("platform") == "macos", me
    assert me["device"].get("name") in (None, ""), me


def test_registration_disabled_without_a_setup_token(relay_factory):
    relay = relay_factory(discoclaw_config(setup_token=None))
    body = expect(http(relay, "POST", "/auth/register", reg_body()), 403, "string_error", "register")
    assert body["error"].startswith("Registration is disabled."), body


@pytest.mark.parametrize("case", ["wrong_token", "no_token", "no_platform"])
def test_register_refusals_are_string_only_bodies(drelay, case):
    body, status, error = {
        "wrong_token": (reg_body(setupToken="x" * 30), 401, "Invalid setup token"),
        "no_token": (reg_body(setupToken=None), 401, "Invalid setup token"),
        "no_platform": (reg_body(platform=None), 400, "platform is required (ios or macos)"),
    }[case]
    got = expect(http(drelay, "POST", "/auth/register", body), status, "string_error", case)
    assert got["error"] == error, got


def test_registrations_are_rate_limited_across_register_and_add_device(relay_factory):
    relay = relay_factory(discoclaw_config(registrations_per_minute=3))
    dev = register(relay)
    add_device(dev)
    register(relay)
    refused = expect(http(relay, "POST", "/auth/register", reg_body()), 429, "string_error", "4th registration")
    assert refused["error"], refused
    resp = http(relay, "POST", "/auth/devices", {"name": "iPad", "platform": "ios"}, token=dev.token)
    expect(resp, 429, "string_error", "POST /auth/devices past the rate")
    dev.call("GET", "/auth/me", shape="me")  # an existing token still works


@pytest.mark.parametrize("path", ["/auth/me", "/auth/devices", "/conversations", "/sync"])
def test_missing_or_wrong_token_is_401_with_the_servers_bodies(drelay, path):
    missing = expect(http(drelay, "GET", path), 401, "string_error", f"{path} without a token")
    assert missing == {"error": "Missing authorization token"}, missing
    for auth in ("bearer", "query"):
        wrong = expect(http(drelay, "GET", path, token="ab" * 32, auth=auth), 401, "string_error", f"{path} {auth}")
        assert wrong == {"error": "Invalid token"}, wrong
    dev = register(drelay)
    for auth in ("bearer", "query"):
        assert http(drelay, "GET", path, token=dev.token, auth=auth).status == 200, (path, auth)


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
    stranger = register(drelay)
    assert stranger.device_id not in {d["id"] for d in phone.call("GET", "/auth/devices", shape="devices")["devices"]}


def test_add_device_refused_past_max_devices_per_user(relay_factory):
    relay = relay_factory(discoclaw_config(max_devices_per_user=2))
    phone = register(relay)
    add_device(phone)
    resp = http(relay, "POST", "/auth/devices", {"name": "third", "platform": "ios"}, token=phone.token)
    assert 400 <= resp.status < 500 and resp.status != 404, f"a third device must be refused: {resp.status} {resp.body!r}"
    assert len(phone.call("GET", "/auth/devices", shape="devices")["devices"]) == 2


async def test_revoking_a_device_kills_its_token_and_closes_its_sockets(drelay):
    phone = register(drelay)
    mac = add_device(phone)
    mac_socket = await Socket.connect(drelay, mac.token, name="mac")
    phone_socket = await Socket.connect(drelay, phone.token, name="phone")
    await async_wait_for(lambda: expect(http(drelay, "GET", "/health"), 200, "health", "h")["connections"] == 2,
                         what="both sockets open")
    assert phone.call("DELETE", f"/auth/devices/{mac.device_id}", status=204) is None
    await mac_socket.expect_close(5)
    body = expect(http(drelay, "GET", "/auth/me", token=mac.token), 401, "string_error", "revoked token")
    assert body == {"error": "Invalid token"}, body
    assert not phone_socket.closed.is_set(), "the revoking device's own socket stays open"
    listing = phone.call("GET", "/auth/devices", shape="devices")["devices"]
    assert [d["id"] for d in listing] == [phone.device_id], listing
    with pytest.raises(InvalidStatus) as refused:
        await Socket.connect(drelay, mac.token)
    assert refused.value.response.status_code == 401


def test_another_users_device_cannot_be_revoked(drelay):
    alice, bob = register(drelay), register(drelay)
    resp = http(drelay, "DELETE", f"/auth/devices/{bob.device_id}", token=alice.token)
    assert resp.status == 404, (resp.status, resp.body)
    assert http(drelay, "DELETE", "/auth/devices/no-such-device", token=alice.token).status == 404
    bob.call("GET", "/auth/me", shape="me")


def test_configured_user_id_makes_every_registration_one_user(relay_factory):
    relay = relay_factory(discoclaw_config(user_id="tim"))
    a, b = register(relay), register(relay, name="Mac", platform="macos")
    assert a.user_id == b.user_id == "tim", (a, b)
    listing = a.call("GET", "/auth/devices", shape="devices")["devices"]
    assert {d["id"] for d in listing} == {a.device_id, b.device_id}, listing
    conv = a.create_conversation("shared")
    b.call("GET", f"/conversations/{conv['id']}", shape="conversation")


def test_unknown_paths_and_bad_bodies(relay_factory):
    relay = relay_factory(discoclaw_config(max_body_bytes=4096))
    dev = register(relay)
    for path in ("/nope", "/conversations/x/y/z", "/auth"):
        got = expect(http(relay, "GET", path, token=dev.token), 404, "http_error", path)
        assert got == NOT_FOUND, got
    for raw in (b"[1, 2]", b"\"text\"", b"{not json", b"null"):
        resp = http(relay, "POST", "/conversations", raw=raw, token=dev.token, headers={"Content-Type": "application/json"})
        got = expect(resp, 400, "http_error", f"body {raw!r}")
        assert got["statusCode"] == 400 and got["error"] == "Bad Request" and got["message"], got
    big = {"title": "x" * 8000}
    resp = http(relay, "POST", "/conversations", big, token=dev.token)
    assert resp.status == 413, (resp.status, resp.body[:200])
    assert dev.call("GET", "/conversations", shape="conversation_list") == [], "nothing was created by refused bodies"


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
