"""`clawrelay migrate --to-postgres`: a relay's SQLite store copied into an empty PostgreSQL
database (the suite's server, `postgres_server.py`); the relay started on it with the same data
directory keeps its paired devices, history, ids and seqs."""
import sqlite3
import subprocess

import postgres_server
from conftest import auth, make_config, pair_first_admin, relay_bin, render_toml, send_and_complete


def sqlite_config() -> dict:
    cfg = make_config()
    cfg["store"] = {"kind": "sqlite"}
    return cfg


def migrate(relay, url: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(relay_bin()), "migrate", "--to-postgres", url, "--data-dir", str(relay.data_dir)],
                          capture_output=True, text=True, timeout=120)


def sqlite_events(relay) -> list[tuple[str, int]]:
    with sqlite3.connect(f"file:{relay.data_dir / 'relay.sqlite'}?mode=ro", uri=True) as db:
        return [tuple(row) for row in db.execute("SELECT id, seq FROM events ORDER BY seq")]


def postgres_events(database: str) -> list[tuple[str, int]]:
    out = postgres_server.shared().psql("SELECT id, seq FROM events WHERE kind = 0 ORDER BY seq", database)
    return [(line.split("|")[0], int(line.split("|")[1])) for line in out.splitlines() if line]


async def replayed_messages(relay, device, count: int) -> list[tuple[str, str, str]]:
    """The first `count` message frames a fresh session replays: (id, role, content)."""
    client, _ = await auth(relay, device, last_message_id=None)
    messages = []
    while len(messages) < count:
        frame, _ = await client.recv_until(lambda f: f.get("type") == "message" and f.get("streaming") is not True, timeout=15)
        messages.append((frame["id"], frame["role"], frame["content"]))
    await client.close()
    return messages


async def test_a_relay_moved_to_postgres_keeps_its_devices_history_ids_and_seqs(relay_factory):
    cfg = sqlite_config()
    relay = relay_factory(cfg)
    device = await pair_first_admin(relay)
    client, _ = await auth(relay, device)
    await send_and_complete(client, "first")
    await send_and_complete(client, "second")
    await client.close()
    before = await replayed_messages(relay, device, 4)
    assert [content for _, _, content in before] == ["first", "echo: first", "second", "echo: second"], before
    relay.terminate()
    copied = sqlite_events(relay)

    server = postgres_server.shared()
    database = server.create_database()
    result = migrate(relay, server.url(database))
    assert result.returncode == 0, result.stderr
    assert "devices: 1 row" in result.stdout and "events: 4 rows" in result.stdout, result.stdout
    assert 'kind = "postgres"' in result.stdout and "JWT signing key" in result.stdout, result.stdout
    assert postgres_events(database) == copied, "every event keeps its id and seq"

    cfg["store"] = {"kind": "postgres", "url": server.url(database)}
    relay.config_path.write_text(render_toml(cfg))
    relay.start()
    assert await replayed_messages(relay, device, 4) == before, "the same device connects with its token and replays the same history"
    client, _ = await auth(relay, device)
    exchange = await send_and_complete(client, "third")
    await client.close()
    assert exchange.final.get("content") == "echo: third"
    after = dict(postgres_events(database))
    assert after[exchange.echo["id"]] == max(seq for _, seq in copied) + 1, "a new message takes the next seq"


async def test_migrate_refuses_a_running_relay_a_database_holding_relay_data_and_keeps_the_password_out(relay_factory):
    relay = relay_factory(sqlite_config())
    device = await pair_first_admin(relay)
    server = postgres_server.shared()
    database = server.create_database()
    url = f"postgres://{postgres_server.USER}:hunter2@127.0.0.1:{server.port}/{database}"

    running = migrate(relay, url)
    assert running.returncode == 1 and "another relay (pid" in running.stderr, running.stderr
    assert server.psql("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'", database).strip() == "0", "nothing was touched"

    relay.terminate()
    first = migrate(relay, url)
    assert first.returncode == 0, first.stderr
    second = migrate(relay, url)
    assert second.returncode == 1, second.stdout
    assert "already holds relay data (" in second.stderr and "devices: 1 row" in second.stderr, second.stderr
    assert len(second.stderr.strip().splitlines()) == 1, "one line"
    for result in (running, first, second):
        assert "hunter2" not in result.stdout + result.stderr, "the password is never printed"
    assert f'url = "postgres://{postgres_server.USER}@127.0.0.1:{server.port}/{database}"' in first.stdout, first.stdout
    assert "# password_file" in first.stdout, "where the password goes instead"
    assert device.device_id in server.psql("SELECT id FROM devices", database)
