"""The command backend as an operator configures it (issue 11): `env`, and its stderr in the log."""

from __future__ import annotations

from conftest import async_wait_for, is_assistant_final, make_config, message_frame, setup_admin


async def test_env_reaches_the_program_and_stderr_reaches_the_debug_log(relay_factory):
    cfg = make_config(cmd={"command": ["/bin/sh", "-c", 'echo "careful: $MOOD" >&2; printf "%s %s" "$GREETING" "$(cat)"'],
                           "env": {"GREETING": "hello from", "MOOD": "calm"}})
    cfg["clawline"]["backend"] = "cmd"
    cfg["server"] = {"log_level": "debug"}
    relay = relay_factory(cfg)
    _, client = await setup_admin(relay)
    frame = message_frame("the relay")
    await client.send_json(frame)
    final, _ = await client.recv_until(is_assistant_final("hello from the relay"), timeout=10)
    await async_wait_for(lambda: "careful: calm" in relay.stderr_text(), what="stderr in the log")
    line = next(l for l in relay.stderr_text().splitlines() if "careful: calm" in l)
    assert "cmd" in line, line
