"""Authentication the real binary keeps: last seen in the device list, a token across a restart.

What `auth` answers (the result's fields, every refused token, protocolVersion, limits, frames
before auth) is tested in memory: `Tests/ClawlineBridgeTests/ClawlineAuthTests.swift`.
"""

import time

from conftest import (
    async_wait_for,
    auth,
    pair_first_admin,
)


async def test_auth_sets_last_seen_at(relay):
    admin = await pair_first_admin(relay)
    assert relay.device(admin.device_id)["lastSeenAt"] is None
    before = int(time.time() * 1000) - 2000
    client, _ = await auth(relay, admin)
    entry = await async_wait_for(lambda: relay.device(admin.device_id)["lastSeenAt"] and relay.device(admin.device_id),
                                 what="lastSeenAt after auth")
    assert isinstance(entry["lastSeenAt"], int) and entry["lastSeenAt"] >= before, entry
    assert entry["lastSeenAt"] >= entry["createdAt"], entry


async def test_token_still_valid_after_restart(relay):
    admin = await pair_first_admin(relay)
    relay.restart()
    client, result = await auth(relay, admin)
    assert result["userId"] == admin.user_id
