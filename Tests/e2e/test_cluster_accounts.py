"""Upstream accounts in a cluster and reloads: a node whose configuration no longer names an
account lets its lease go at its next heartbeat, and another node configured with it takes it."""
import signal

import postgres_server
from cluster_nodes import companion_upstream, node_config
from conftest import async_wait_for, render_toml
from test_cluster import holder_of


async def test_a_reload_that_drops_an_account_hands_it_to_another_node(relay_factory, tmp_path):
    up = companion_upstream(relay_factory, tmp_path)
    database = postgres_server.shared().create_database()

    def config(node_id: str, with_account: bool = True) -> dict:
        cfg = node_config(database, node_id)
        if with_account:
            cfg["backends"].append(dict(up))
        return cfg

    first = relay_factory(config("node1"))
    await async_wait_for(lambda: holder_of(first, "up") == "node1", timeout=20, what="node1 holding the account")
    second = relay_factory(config("node2"))
    await async_wait_for(lambda: holder_of(second, "up") == "node1", timeout=10, what="node2 seeing node1 hold it")

    first.config_path.write_text(render_toml(config("node1", with_account=False)))
    first.proc.send_signal(signal.SIGHUP)
    # Without the release, node1 (alive) would keep the lease until it restarts.
    await async_wait_for(lambda: holder_of(second, "up") == "node2", timeout=15, what="node2 taking the account node1 let go")
    assert first.proc.poll() is None, "node1 still runs"
