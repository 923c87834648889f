"""Pushes across the nodes of a cluster (`[cluster]` on one PostgreSQL, a fake APNs on loopback):
every node stores the pushes its answers make, the first node whose push falls due sends the
device's whole burst, a target registered through one node is pushed from every node, and a push
pending on a node that is killed is sent once by a survivor."""
import time

import postgres_server
from cluster_nodes import node_config
from companion_client import app_decodes_every_frame  # noqa: F401  (autouse: every frame must decode in the app)
from companion_client import companion_config, make_projects
from fake_apns import make_device_token
from push_servers import fake_apns  # noqa: F401  (fixture)
from test_push_apns import apns_settings, app_session, ask, away_phone, no_more, wait_apns

# A push no live node holds is taken by a survivor's sweep (every 5 s) once it is 10 s past due.
STRANDED_WITHIN = 2 + 10 + 5 + 5


def companion_nodes(relay_factory, tmp_path, fake, count: int = 2, **push) -> list:
    """`count` nodes on one new database, each with `[companion]` on the same projects and `[push]`."""
    database = postgres_server.shared().create_database()
    projects = make_projects(tmp_path / "projects")
    nodes = []
    for index in range(1, count + 1):
        cfg = node_config(database, f"node{index}")
        cfg["companion"] = companion_config(projects_root=projects)["companion"]
        cfg["push"] = apns_settings(fake, **push)
        relay = relay_factory(cfg)
        relay.projects = projects
        nodes.append(relay)
    return nodes


async def test_one_burst_answered_on_two_nodes_is_one_push_to_a_phone_registered_through_one(fake_apns, relay_factory, tmp_path):
    first, second = companion_nodes(relay_factory, tmp_path, fake_apns, delay_seconds=2)
    await app_session(first)
    token = make_device_token()
    await away_phone(second, token)
    start = time.time()
    for n, node in enumerate((first, second, first)):
        await ask(node, f"part {n}")
    [req] = await wait_apns(fake_apns, 1, timeout=10)
    assert req["path"] == f"/3/device/{token}", req
    assert req["time"] - start >= 1.8, f"held back by delay_seconds: sent after {req['time'] - start:.2f}s"
    body = req["body"]
    assert body["aps"]["alert"]["body"] == "3 new messages in app" and body["totalChunks"] == 3, body
    await no_more(fake_apns, 2.5, since=1)


async def test_a_push_pending_on_a_killed_node_is_sent_once_by_the_survivor(fake_apns, relay_factory, tmp_path):
    first, second = companion_nodes(relay_factory, tmp_path, fake_apns, delay_seconds=2)
    await app_session(first)
    await away_phone(first, make_device_token())
    await ask(first, "before the crash")
    first.kill()
    [req] = await wait_apns(fake_apns, 1, timeout=STRANDED_WITHIN)
    assert req["body"]["aps"]["alert"]["body"] == "echo: before the crash", req
    assert "took over pushes no node holds" in second.stderr_text()
    await no_more(fake_apns, 2.0, since=1)
