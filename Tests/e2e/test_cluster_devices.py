"""DiscoClaw devices in a cluster: a device registered through one node works on another at once
(its bearer token is read from PostgreSQL on a miss), one removed through one node is refused on the
others within a heartbeat, and `clawrelay devices list` says on which node a device is present."""
import postgres_server
from cluster_nodes import node_config
from conftest import async_wait_for
from discoclaw_client import (
    Device,
    Socket,
    add_device,
    app_decodes_everything,  # noqa: F401  (autouse: every event must parse in the app)
    discoclaw_config,
    expect,
    http,
    register,
    turn,
)


def discoclaw_node(relay_factory, database: str, node_id: str):
    cfg = node_config(database, node_id)
    cfg["discoclaw"] = discoclaw_config()["discoclaw"]
    return relay_factory(cfg)


def on(relay, dev: Device) -> Device:
    """The same app talking to another node (a load balancer sent it there)."""
    return Device(relay, dev.user_id, dev.device_id, dev.token)


async def test_a_device_registered_on_node1_streams_and_talks_on_node2_and_is_listed_there(relay_factory):
    database = postgres_server.shared().create_database()
    first, second = discoclaw_node(relay_factory, database, "node1"), discoclaw_node(relay_factory, database, "node2")
    phone = register(first)
    # Its first contact with node2 is the socket (the upgrade lets an unknown token through, then reads it).
    sock = await Socket.connect(second, phone.token, name="phone@node2")
    there = on(second, phone)
    me = there.call("GET", "/auth/me", shape="me")
    assert me["device"]["id"] == phone.device_id, me
    conv = there.create_conversation("across nodes")
    done = await turn(there, sock, conv["id"], "hello from node2")
    assert done.complete["content"] == "echo: hello from node2", done.complete

    # The listing read through node1's configuration: present in the foreground, on node2.
    await async_wait_for(lambda: (first.device(phone.device_id) or {}).get("presenceNodes") == {"node2": "foreground"},
                         what="devices list to show the phone in the foreground on node2")
    assert first.device(phone.device_id)["presence"] == "foreground"
    table = first.cli("devices", "list").stdout
    assert "foreground (node2)" in table, table
    await sock.close()
    await async_wait_for(lambda: first.device(phone.device_id).get("presenceNodes") == {}, what="the phone offline on every node")
    assert first.device(phone.device_id)["presence"] == "offline"


async def test_a_device_removed_through_node1_is_refused_on_node2_within_a_heartbeat(relay_factory):
    database = postgres_server.shared().create_database()
    first, second = discoclaw_node(relay_factory, database, "node1"), discoclaw_node(relay_factory, database, "node2")
    phone = register(first)
    mac = add_device(phone)
    on(second, phone).call("GET", "/auth/me", shape="me")
    sock = await Socket.connect(second, phone.token, name="phone@node2")
    mac.call("DELETE", f"/auth/devices/{phone.device_id}", status=204)
    await sock.expect_close(timeout=5)
    await async_wait_for(lambda: http(second, "GET", "/auth/me", token=phone.token).status == 401, timeout=5,
                         what="node2 to refuse the removed phone")
    refused = expect(http(second, "GET", "/auth/me", token=phone.token), 401, "string_error", "GET /auth/me")
    assert refused["error"], refused
    # Its sibling, registered through node1 after node2 started, still works there.
    on(second, mac).call("GET", "/auth/me", shape="me")
