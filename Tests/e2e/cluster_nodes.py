"""What the cluster e2e files share: a node's configuration on one PostgreSQL database (a server
this suite starts, `postgres_server.py`)."""
import postgres_server
from conftest import make_config

LEASE_SECONDS = 3


def node_config(database: str, node_id: str, echo_delay_ms: int = 0) -> dict:
    server = postgres_server.shared()
    cfg = make_config(echo={"delay_ms": echo_delay_ms})
    cfg["store"] = {"kind": "postgres", "url": server.url(database)}
    cfg["cluster"] = {"node_id": node_id, "heartbeat_seconds": 1, "lease_seconds": LEASE_SECONDS}
    return cfg


def companion_upstream(relay_factory, tmp_path) -> dict:
    """An upstream Companion server for a cluster's account `up`: a relay whose Companion listener's
    backend answers "upstream: <text>" (a node's own echo would say "echo: <text>"), so an answer
    shows it came over the account's link. Returns the `[[backends]]` entry that names it."""
    from test_companion_upstream import TOKEN, companion_port
    projects = tmp_path / "projects"
    (projects / "app").mkdir(parents=True)
    cfg = make_config(cmd={"command": ["/bin/sh", "-c", "printf 'upstream: '; cat"]})
    cfg["companion"] = {"listen": "127.0.0.1:0", "auth_token": TOKEN, "projects_root": str(projects), "backend": "cmd"}
    upstream = relay_factory(cfg)
    return {"name": "up", "kind": "companion", "url": f"ws://127.0.0.1:{companion_port(upstream)}/ws", "token": TOKEN,
            "working_directory": str(projects / "app")}
