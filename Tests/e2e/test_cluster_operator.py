"""Operator commands in a cluster: `clawrelay devices approve|revoke` run against the shared
PostgreSQL reach the node that holds what they act on (a pending pairing request lives on the
node the device reached; a revoked device's socket is cut on whichever node holds it)."""
import asyncio

import postgres_server
from cluster_nodes import node_config
from conftest import Client, assert_pair_success, async_wait_for, auth, new_device_id, pair_and_approve, pair_request, setup_admin


async def cli(relay, *args):
    return await asyncio.to_thread(relay.cli, *args)


async def two_nodes(relay_factory):
    database = postgres_server.shared().create_database()
    return relay_factory(node_config(database, "node1")), relay_factory(node_config(database, "node2"))


async def test_a_request_waiting_on_node2_is_listed_and_approved_from_node1s_config(relay_factory):
    first, second = await two_nodes(relay_factory)
    admin, admin_client = await setup_admin(first)
    device_id = new_device_id()
    requester = await Client.connect(second, "waiting")
    await requester.send_json(pair_request(device_id, "Waiting"))
    await async_wait_for(lambda: (first.device(device_id) or {}).get("status") == "pending", what="listed as pending from node1")
    result = await cli(first, "devices", "approve", device_id, "--user", admin.user_id)
    assert f"{device_id}: approved" in result.stdout, result.stdout
    frame = await requester.expect("pair_result", timeout=5)
    assert_pair_success(frame, device_id)
    assert frame["userId"] == admin.user_id, frame
    await async_wait_for(lambda: first.device(device_id)["status"] == "approved", what="approved")
    await requester.close()
    await admin_client.close()


async def test_revoke_cuts_the_socket_on_the_node_that_holds_it(relay_factory):
    first, second = await two_nodes(relay_factory)
    admin, admin_client = await setup_admin(first)
    member = await pair_and_approve(first, admin_client, user_id=admin.user_id, name="Member")
    member_client, _ = await auth(second, member)
    result = await cli(first, "devices", "revoke", member.device_id)
    assert "revoked" in result.stdout, result.stdout
    frames = await member_client.expect_close(1008, timeout=3)
    assert frames and frames[-1].get("code") == "token_revoked", frames
    await admin_client.close()


async def test_audit_node_reads_that_nodes_audit_and_an_unknown_node_lists_the_known(relay_factory):
    first, second = await two_nodes(relay_factory)
    device_id = new_device_id()
    requester = await Client.connect(second, "audited")
    await requester.send_json(pair_request(device_id, "Audited"))

    def audited(node: str) -> bool:
        rows = first.audit("--node", node, "--device", device_id)
        return any(row.get("deviceId") == device_id for row in rows)

    await async_wait_for(lambda: audited("node2"), what="node2's audit read through node1's configuration")
    assert not audited("node1"), "node1 never saw the device"
    unknown = await asyncio.to_thread(first.cli, "audit", "--node", "ghost", check=False)
    assert unknown.returncode != 0 and "known: node1, node2" in unknown.stderr, unknown.stderr
    await requester.close()
