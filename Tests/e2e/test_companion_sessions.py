"""Claude Companion downstream: what the real binary logs about push targets.

The integration guide's frames, sessions, limits and the REST API are tested in memory by
Tests/CompanionBridgeTests/CompanionSessionTests.swift.
"""

import pytest

from companion_client import (
    CompanionClient,
    app_decodes_every_frame,  # noqa: F401  (autouse: every frame must decode in the app)
    start_companion,
)
from conftest import async_wait_for

@pytest.fixture
def crelay(relay_factory, tmp_path):
    return start_companion(relay_factory, tmp_path, names=("app", "lib", "tool"))


async def test_push_targets_are_logged_registered_or_rejected_without_the_token(crelay):
    client = await CompanionClient.connect(crelay, device_id="push-log-device")
    token = "ef" * 32
    reply, _ = await client.request("registerDevice", {"token": token, "platform": "ios"})
    assert reply["type"] == "deviceRegistered", reply
    await client.expect_error("registerDevice", {"token": "not-hex!", "platform": "ios"}, "INVALID_MESSAGE")
    await async_wait_for(lambda: "push target rejected" in crelay.stderr_text(), what="the rejection logged")
    log = crelay.stderr_text()
    assert "push target registered" in log and "push-log-device" in log, log[-2000:]
    assert token not in log and "not-hex!" not in log
