"""Claude Companion downstream over the real binary: auth through the transport, the generated token, welcome, config.

The protocol logic of a connection (refusals, ping, subscribe, errors, projects, body limits) is tested in
memory by Tests/CompanionBridgeTests/CompanionConnectionTests.swift.
"""
import asyncio
import re
import stat

import pytest

from companion_client import (
    ISO_MS_Z_RE,
    TOKEN,
    CompanionClient,
    app_decodes_every_frame,  # noqa: F401  (autouse: every frame must decode in the app)
    companion_config,
    cport,
    make_projects,
    real,
    rest,
    rest_json,
    start_companion,
)

@pytest.fixture
def crelay(relay_factory, tmp_path):
    return start_companion(relay_factory, tmp_path)


async def test_query_token_gets_the_welcome_the_app_waits_for(crelay):
    assert crelay.listeners["companion"][0] == "127.0.0.1", crelay.ready_line
    client = await CompanionClient.connect(crelay)  # ws://host:port/ws?token=T, exactly as the app
    welcome = client.welcome
    assert welcome["requestId"] is None, welcome
    assert ISO_MS_Z_RE.match(welcome["timestamp"]), f"ISO 8601 UTC with milliseconds: {welcome['timestamp']!r}"
    data = welcome["data"]
    assert isinstance(data["clientId"], str) and data["clientId"], data
    assert isinstance(data["serverVersion"], str) and data["serverVersion"], data
    assert "claudeCodeVersion" in data and data["claudeCodeVersion"] is None, data
    assert isinstance(data["capabilities"], list) and all(isinstance(c, str) for c in data["capabilities"]), data
    assert data["maxSessions"] == 10, data
    second = await CompanionClient.connect(crelay)
    assert second.welcome["data"]["clientId"] != data["clientId"], "every socket gets its own clientId"


async def test_any_path_and_max_sessions_from_config(relay_factory, tmp_path):
    relay = relay_factory(companion_config(projects_root=make_projects(tmp_path / "p"), max_sessions=3))
    client = await CompanionClient.connect(relay, path="/some/other/path")
    assert client.welcome["data"]["maxSessions"] == 3, client.welcome


async def test_bearer_header_with_a_device_id_works(crelay):
    client = await CompanionClient.connect(crelay, auth="bearer", device_id="bearer-device-1")
    assert client.welcome["type"] == "welcome"
    await client.assert_open()


def test_rest_accepts_bearer_and_query_token(crelay):
    assert rest(crelay, "GET", "/api/projects", auth="bearer").status == 200
    assert rest(crelay, "GET", "/api/projects", auth="query").status == 200


async def test_generated_token_is_0600_printed_by_the_cli_and_stable(relay_factory, tmp_path):
    relay = relay_factory(companion_config(projects_root=make_projects(tmp_path / "p"), auth_token=None))
    path = relay.data_dir / "companion.token"
    assert path.exists(), "without auth_token the relay generates <data_dir>/companion.token"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600, oct(path.stat().st_mode)
    token = path.read_text().strip()
    assert re.fullmatch(r"[0-9a-f]{64}", token), f"32 random bytes as hex: {token!r}"
    printed = (await asyncio.to_thread(relay.cli, "companion", "token")).stdout.strip()
    assert printed == token, f"`clawrelay companion token` printed {printed!r}"
    client = await CompanionClient.connect(relay, token=token)
    await client.assert_open()
    assert rest(relay, "GET", "/api/projects", token=token).status == 200
    wrong = await CompanionClient.connect(relay, token=TOKEN, welcome=False)
    assert (await wrong.expect_close())[0] == 1008
    await client.close()
    await asyncio.to_thread(relay.restart)
    assert path.read_text().strip() == token, "the generated token survives a restart"
    again = await CompanionClient.connect(relay, token=token)
    await again.assert_open()


def test_projects_root_defaults_to_data_dir_projects(relay_factory):
    relay = relay_factory(companion_config(), start=False)
    make_projects(relay.data_dir / "projects", names=("alpha",))
    relay.start()
    listing = rest_json(relay, "GET", "/api/projects")
    assert real(listing["basePath"]) == real(relay.data_dir / "projects"), listing
    assert [p["name"] for p in listing["projects"]] == ["alpha"], listing


async def test_the_app_token_alphabet_round_trips_in_the_query(relay_factory, tmp_path):
    token = "A-Za_z0-9-" + "_" * 8 + "tail"
    relay = relay_factory(companion_config(projects_root=make_projects(tmp_path / "p"), auth_token=token))
    client = await CompanionClient.connect(relay, token=token)
    await client.assert_open()
    assert cport(relay) != relay.port, "the companion listener has its own port"
