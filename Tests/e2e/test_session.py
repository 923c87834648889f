"""Session takeover end to end: a second socket of a device replaces the first (session_replaced,
close 1000 on the wire).

The stream and queue moving to the new socket, a stream dying with its device's last socket and
`cancel_on_disconnect = false` are tested in memory: `Tests/ClawlineBridgeTests/ClawlineTakeoverTests.swift`.
"""

from conftest import (
    auth,
    send_and_complete,
    setup_admin,
)


async def test_new_socket_replaces_old_with_session_replaced_1000(relay):
    admin, old = await setup_admin(relay)
    new, result = await auth(relay, admin, name="new")
    frames = await old.expect_close(1000)
    errors = [f for f in frames if f.get("type") == "error"]
    assert errors and errors[-1]["code"] == "session_replaced" and frames[-1] is errors[-1], frames
    assert isinstance(errors[-1].get("message"), str)
    await send_and_complete(new, "still works")
