"""Hostile input (issue 10): one request must never take the relay down, and no client may make
it hoard memory, files or sockets. Each test reproduces one finding of the fuzzing run."""

from __future__ import annotations

import asyncio

import pytest

from conftest import make_config
from gateway_client import Identity, paired


@pytest.fixture
def gateway_relay(relay_factory):
    cfg = make_config()
    cfg["gateway"] = {"listen": "127.0.0.1:0"}
    return relay_factory(cfg)


@pytest.mark.parametrize("timeout_ms", [2**63 - 1, 10**16, 18446744073709552])
async def test_an_absurd_invoke_timeout_is_clamped_not_a_crash(gateway_relay, timeout_ms):
    operator, _ = await paired(gateway_relay, Identity())
    node_identity = Identity()
    node, _ = await paired(gateway_relay, node_identity, role="node", scopes=(), mode="node", commands=("camera.snap",))
    call = asyncio.create_task(operator.request("node.invoke", {
        "nodeId": node_identity.device_id, "command": "camera.snap", "timeoutMs": timeout_ms, "idempotencyKey": "k"}))
    request = await node.event("node.invoke.request")
    assert request["payload"]["timeoutMs"] == 600_000, request
    await node.request("node.invoke.result", {"id": request["payload"]["id"], "nodeId": node_identity.device_id, "ok": True})
    assert (await call)["ok"]
    assert gateway_relay.running
    health = await operator.request("health")
    assert health["ok"], health
