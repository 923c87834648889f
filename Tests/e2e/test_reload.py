"""SIGHUP reloads the configuration file instead of ending the relay (issue 25): what can change
live is applied and logged, what needs a restart is a warning naming the key, and a file that does
not load or check keeps the relay running on the one it had, with the error's FILE:LINE."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess

from companion_client import CompanionClient, claude_command, companion_config, make_projects
from push_servers import fake_http  # noqa: F401  (fixture)
from test_push_apns import app_session, ask, away_phone
from test_push_http import http_silent, wait_http
from test_tls import make_certificate
from conftest import (
    READY_RE, Relay, auth, free_port, make_config, message_frame, pair_first_admin, relay_bin, render_toml, send_and_complete,
    wait_for,
)

TWO = {"name": "two", "kind": "command", "command": ["/bin/sh", "-c", "printf 'two: '; cat"], "timeout_seconds": 30}


def reload(relay: Relay, cfg: dict | str, expect: str, timeout: float = 10.0) -> str:
    """Writes `cfg` as the relay's file, sends SIGHUP, and waits until the log after it says `expect`;
    returns the log written since the signal."""
    before = len(relay.stderr_text())
    relay.config_path.write_text(cfg if isinstance(cfg, str) else render_toml(cfg))
    relay.proc.send_signal(signal.SIGHUP)
    return wait_for(lambda: (lambda text: text if expect in text else None)(relay.stderr_text()[before:]), timeout,
                    what=f"{expect!r} in the log after SIGHUP")


async def test_a_changed_log_level_shows_debug_lines_from_the_next_one(relay_factory):
    cfg = make_config()
    relay = relay_factory(cfg)
    admin = await pair_first_admin(relay)
    assert " debug " not in relay.stderr_text(), "info is the level the file started with"
    cfg["server"] = {"log_level": "debug"}
    reload(relay, cfg, "reloaded: log_level of [server] changed (info → debug)")
    mark = len(relay.stderr_text())
    client, _ = await auth(relay, admin)
    await send_and_complete(client, "hi")
    wait_for(lambda: " debug " in relay.stderr_text()[mark:], what="a debug line after the reload")
    assert relay.running


async def test_a_backend_added_by_sighup_answers_the_next_turn_without_reconnecting(relay_factory):
    cfg = make_config()
    relay = relay_factory(cfg)
    client, _ = await auth(relay, await pair_first_admin(relay))
    await send_and_complete(client, "/backend two", answer="There is no backend named two. Backends: cmd, echo.")
    cfg["backends"].append(dict(TWO))
    reload(relay, cfg, "reloaded: [[backends]] two added (command)")
    await send_and_complete(client, "/backend two", answer="This conversation is now answered by two (it was echo).")
    await send_and_complete(client, "hi", answer="two: hi")


async def test_a_removed_backend_finishes_the_turn_it_runs_and_takes_no_more(relay_factory, tmp_path):
    started, go = tmp_path / "started", tmp_path / "go"
    slow = {"name": "slow", "kind": "command", "timeout_seconds": 60,
            "command": ["/bin/sh", "-c", f"touch {started}; while [ ! -e {go} ]; do sleep 0.05; done; printf 'slow: '; cat"]}
    cfg = make_config(clawline={"backend": "slow"})
    cfg["backends"].append(slow)
    relay = relay_factory(cfg)
    client, _ = await auth(relay, await pair_first_admin(relay))
    await client.send_json(message_frame("running"))
    wait_for(started.exists, what="the turn to start on the slow backend")
    cfg["backends"] = [b for b in cfg["backends"] if b["name"] != "slow"]
    cfg["clawline"]["backend"] = "echo"
    log = reload(relay, cfg, "reloaded: [[backends]] slow removed")
    assert "reloaded: backend of [clawline] changed (slow → echo)" in log, log
    assert "let go" not in log, "the backend is kept while its turn runs"
    go.touch()
    await client.recv_until(lambda f: f.get("type") == "message" and f.get("content") == "slow: running", timeout=15)
    wait_for(lambda: re.search(r"backend=slow .*is let go", relay.stderr_text()), what="the removed backend let go once its turn ended")
    await send_and_complete(client, "next")  # the listener's new default answers
    await send_and_complete(client, "/backend", answer="This conversation is answered by echo. Backends: cmd, echo. Switch with /backend NAME.")


async def test_a_broken_file_keeps_the_relay_running_on_the_old_one_and_names_file_and_line(relay_factory):
    cfg = make_config()
    relay = relay_factory(cfg)
    client, _ = await auth(relay, await pair_first_admin(relay))
    good = render_toml(cfg)
    path = relay.config_path
    broken = good.replace("[clawline]\n", "[clawline]\nmax_frame_bytes = \"many\"\n")
    line = broken.splitlines().index('max_frame_bytes = "many"') + 1
    log = reload(relay, broken, "reload failed")
    assert f"still running on the previous configuration: {path}:{line}: [clawline] max_frame_bytes" in log, log
    await send_and_complete(client, "still here")
    log = reload(relay, good + "[oops\n", "reload failed")
    assert f"{path}:{good.count(chr(10)) + 1}:" in log, log
    typo = good.replace("[admin]\n", "[admin]\nlisten_here = 1\n")
    log = reload(relay, typo, "reload failed")
    line = typo.splitlines().index("listen_here = 1") + 1
    assert f"{path}:{line}: [admin] listen_here: unknown key" in log, log
    missing = dict(cfg, backends=cfg["backends"] + [{"name": "gone", "kind": "command", "command": ["/no/such/program"]}])
    text = render_toml(missing)
    log = reload(relay, text, "reload failed")
    line = text.splitlines().index('command = ["/no/such/program"]') + 1
    assert f'{path}:{line}: [[backends]] command: backend "gone": the program /no/such/program is missing' in log, log
    await send_and_complete(client, "old backends answer")
    await send_and_complete(client, "/backend", answer="This conversation is answered by echo. Backends: cmd, echo. Switch with /backend NAME.")


async def test_a_changed_listen_address_is_a_warning_and_the_listener_stays(relay_factory):
    cfg = make_config()
    relay = relay_factory(cfg)
    admin = await pair_first_admin(relay)
    port = free_port()
    cfg["clawline"]["listen"] = f"127.0.0.1:{port}"
    cfg["clawline"]["max_queued_messages"] = 7
    log = reload(relay, cfg, "needs a restart")
    [warning] = [l for l in log.splitlines() if "needs a restart" in l]
    assert " warning " in warning and f"listen of [clawline] changed (127.0.0.1:0 → 127.0.0.1:{port}): needs a restart" in warning, log
    assert "reloaded: max_queued_turns of [clawline] changed (20 → 7)" in log, "what can apply does, beside it"
    await auth(relay, admin)  # on the port it had


async def test_sighup_twice_fast_reloads_and_keeps_serving(relay_factory):
    cfg = make_config()
    relay = relay_factory(cfg)
    client, _ = await auth(relay, await pair_first_admin(relay))
    cfg["backends"].append(dict(TWO))
    relay.config_path.write_text(render_toml(cfg))
    relay.proc.send_signal(signal.SIGHUP)
    relay.proc.send_signal(signal.SIGHUP)
    wait_for(lambda: "reloaded: [[backends]] two added (command)" in relay.stderr_text(), what="the reload")
    wait_for(lambda: relay.stderr_text().count("reloading the configuration")
             == relay.stderr_text().count("reloaded: [[backends]] two added") + relay.stderr_text().count("reloaded: nothing changed"),
             what="every SIGHUP's reload to finish")
    await send_and_complete(client, "/backend two", answer="This conversation is now answered by two (it was echo).")
    await send_and_complete(client, "hi", answer="two: hi")
    assert relay.running


def signal_blocked(pid: int, number: int) -> bool:
    """A thread of the process blocks `number` (SigBlk in /proc/PID/task/*/status): the relay blocks
    its signals first thing, and every thread it starts inherits that (the main thread's own mask
    reads empty while it waits in sigwait)."""
    for task in os.listdir(f"/proc/{pid}/task") if os.path.exists(f"/proc/{pid}/task") else []:
        try:
            status = open(f"/proc/{pid}/task/{task}/status").read()
        except OSError:
            continue
        if int(re.search(r"^SigBlk:\s*([0-9a-f]+)$", status, re.M).group(1), 16) & (1 << (number - 1)):
            return True
    return False


def test_sighup_during_start_up_and_during_the_stop_is_harmless(tmp_path):
    config = tmp_path / "relay.toml"
    config.write_text(render_toml(make_config()))
    serve = subprocess.Popen([str(relay_bin()), "serve", "--config", str(config), "--data-dir", str(tmp_path / "data")],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: signal_blocked(serve.pid, signal.SIGHUP) or serve.poll() is not None, what="SIGHUP blocked")
        serve.send_signal(signal.SIGHUP)  # before "ready": kept, and taken as a reload once it is
        assert READY_RE.search(serve.stdout.readline()), "the relay came up"
        serve.send_signal(signal.SIGTERM)
        serve.send_signal(signal.SIGHUP)  # during the stop: ignored
        assert serve.wait(15) == 0
    finally:
        if serve.poll() is None:
            serve.kill()
    err = serve.stderr.read()
    assert "reloaded: nothing changed" in err and err.rstrip().endswith("stopped"), err


async def test_companion_routes_added_by_sighup_bind_the_next_new_session(relay_factory, tmp_path):
    root = make_projects(tmp_path / "projects")
    cfg = companion_config(projects_root=root)
    cfg["backends"].append(dict(TWO))
    relay = relay_factory(cfg)
    client = await CompanionClient.connect(relay, device_id="phone")
    before = await claude_command(client, "hello", None, str(root / "app"))
    assert before.reply["data"]["content"] == "echo: hello", before.reply
    cfg["companion"]["routes"] = [{"directory_prefix": str(root / "lib"), "backend": "two"}]
    reload(relay, cfg, f"reloaded: routes of [companion] changed (none → {root / 'lib'}: two)")
    routed = await claude_command(client, "hello", None, str(root / "lib"))
    assert routed.reply["data"]["content"] == "two: hello", routed.reply


async def test_push_added_by_sighup_wakes_the_next_answer_and_removed_stops(fake_http, relay_factory, tmp_path):
    home = fake_http()
    cfg = companion_config(projects_root=make_projects(tmp_path / "projects"))
    relay = relay_factory(cfg)
    await app_session(relay)
    away = await away_phone(relay, None, device_id="away")
    await asyncio.to_thread(relay.cli, "devices", "push", away, "--ntfy", "my-topic")
    cfg["push"] = {"ntfy_url": home.url + "/", "retry_base_ms": 100}
    reload(relay, cfg, "reloaded: [push] added")
    await ask(relay, "after the reload")
    [request] = await wait_http(home, 1)
    assert request["path"] == "/my-topic" and request["body"].decode() == "echo: after the reload", request
    del cfg["push"]
    reload(relay, cfg, "reloaded: [push] removed")
    await ask(relay, "without push")
    await http_silent(home, 1.0, since=1)


def test_a_tls_certificate_renewed_in_place_is_reported_as_needing_a_restart(relay_factory, tmp_path):
    cert, key = make_certificate(tmp_path)
    cfg = make_config()
    cfg["gateway"] = {"listen": "127.0.0.1:0", "tls_cert": str(cert), "tls_key": str(key)}
    relay = relay_factory(cfg)
    reload(relay, cfg, "reloaded: nothing changed")
    renewed = tmp_path / "renewed"
    renewed.mkdir()
    new_cert, new_key = make_certificate(renewed)
    os.replace(new_cert, cert)
    os.replace(new_key, key)
    log = reload(relay, cfg, "needs a restart")
    assert f"tls_cert of [gateway] changed on disk ({cert}): needs a restart" in log, log
    assert f"tls_key of [gateway] changed on disk ({key}): needs a restart" in log, log


async def test_a_changed_log_format_writes_json_from_the_next_line(relay_factory):
    cfg = make_config()
    relay = relay_factory(cfg)
    cfg["server"] = {"log_format": "json"}
    reload(relay, cfg, "log_format of [server] changed (text → json)")
    mark = len(relay.stderr_text())
    await pair_first_admin(relay)
    lines = wait_for(lambda: relay.stderr_text()[mark:].splitlines(), timeout=20, what="log lines after the reload")
    entries = [json.loads(line) for line in lines]
    assert all({"ts", "level", "msg"} <= entry.keys() for entry in entries), entries
