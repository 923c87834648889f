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
