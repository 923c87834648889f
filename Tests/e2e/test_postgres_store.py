"""`[store] kind = "postgres"`: the relay keeps its store in a PostgreSQL database it owns (a server
this suite starts, `postgres_server.py`), and nothing of it in the data directory."""
import asyncio
import json
import subprocess

import postgres_server
from conftest import auth, make_config, pair_first_admin, relay_bin, render_toml, send_and_complete


def postgres_config(url: str | None = None) -> dict:
    cfg = make_config()
    server = postgres_server.shared()
    cfg["store"] = {"kind": "postgres", "url": url or server.url(server.create_database())}
    return cfg


async def test_history_devices_and_answers_survive_a_restart_in_postgres(relay_factory):
    relay = relay_factory(postgres_config())
    admin = await pair_first_admin(relay)
    client, _ = await auth(relay, admin)
    await send_and_complete(client, "kept in postgres")
    await client.close()
    relay.terminate()
    assert not (relay.data_dir / "relay.sqlite").exists(), "the store is not in the data directory"
    relay.start()
    client, _ = await auth(relay, admin, last_message_id=None)
    frames = []
    while not any(f.get("type") == "message" and f.get("content") == "echo: kept in postgres" for f in frames):
        frames.append(await client.recv_json())
    await client.close()


async def test_devices_list_and_revoke_run_on_a_relay_in_postgres(relay_factory):
    """`clawrelay devices list` reads the devices from PostgreSQL, and `devices revoke` stores the
    revocation there and has the running relay close the device's socket (the operator command
    goes through PostgreSQL's `operator_commands`)."""
    relay = relay_factory(postgres_config())
    admin = await pair_first_admin(relay)
    client, _ = await auth(relay, admin)
    listing = (await asyncio.to_thread(relay.cli, "devices", "list")).stdout
    row = next(line for line in listing.splitlines() if line.startswith(admin.device_id))
    assert "clawline" in row and "approved admin" in row and admin.user_id in row and "Admin" in row, listing
    assert (await asyncio.to_thread(relay.device, admin.device_id))["status"] == "approved"

    revoked = await asyncio.to_thread(relay.cli, "devices", "revoke", admin.device_id[:8])
    assert revoked.stdout.strip() == f"{admin.device_id}: revoked (undo with: clawrelay devices allow {admin.device_id})", revoked
    frames = await client.expect_close(1008, timeout=5)
    assert frames and frames[-1].get("code") == "token_revoked", frames
    assert (await asyncio.to_thread(relay.device, admin.device_id))["status"] == "revoked"
    assert not (relay.data_dir / "relay.sqlite").exists(), "the commands opened no SQLite store beside PostgreSQL"


def test_an_operator_command_on_an_unreachable_database_says_why_without_the_password(relay_factory):
    relay = relay_factory(postgres_config("postgres://relay:hunter2@127.0.0.1:1/clawrelay"), start=False)
    relay.data_dir.mkdir(parents=True, exist_ok=True)
    result = relay.cli("devices", "list", "--config", str(relay.config_path), check=False)
    assert result.returncode == 1, result
    assert "cannot connect on PostgreSQL" in result.stderr and "127.0.0.1:1/clawrelay" in result.stderr, result.stderr
    assert "Connection refused" in result.stderr, "why the connection failed, not only that it did"
    assert "hunter2" not in result.stderr + result.stdout, "the password never reaches the output"


def test_an_unreachable_database_stops_the_start_with_the_cause_and_no_password(relay_factory, tmp_path):
    relay = relay_factory(postgres_config("postgres://relay:hunter2@127.0.0.1:1/clawrelay"), start=False)
    result = subprocess.run([str(relay_bin()), "serve", "--config", str(relay.config_path), "--data-dir", str(relay.data_dir)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1, result.stderr
    assert "cannot migrate on PostgreSQL" in result.stderr and "127.0.0.1:1/clawrelay" in result.stderr, result.stderr
    assert "Connection refused" in result.stderr, "why the connection failed, not only that it did"
    assert "hunter2" not in result.stderr + result.stdout, "the password never reaches a log"


def test_the_bench_runs_its_relays_on_a_postgresql_of_its_own(tmp_path):
    result = subprocess.run(
        [str(relay_bin()), "bench", "roundtrip", "--smoke", "--store", "postgres", "--json"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path, env={"TMPDIR": str(tmp_path), "PATH": "/usr/sbin:/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr[-3000:]
    figures = {(f["scenario"], f["metric"]): f["value"] for f in json.loads(result.stdout)["figures"]}
    assert figures[("roundtrip", "messages")] > 0
    assert figures[("roundtrip", "postgres_cpu_per_message")] > 0
    assert figures[("roundtrip", "relay_and_postgres_cpu_per_message")] > figures[("roundtrip", "relay_cpu_per_message")]
    assert "starting a PostgreSQL 15 of the bench's own" in result.stderr
