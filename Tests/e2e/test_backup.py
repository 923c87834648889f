"""`clawrelay backup DEST` (issue 25 item 14): a consistent copy of the data directory made while the
relay runs, turns in flight; a second relay started on the copy has the history, the paired device
and its assets. Refusals and failures leave nothing behind; large copies report progress."""

import asyncio
import os
import stat

from conftest import PNG_1PX, auth, make_config, message_frame, send_and_complete, setup_admin, upload


def backup(relay, dest, check=True):
    return relay.cli("backup", str(dest), check=check, timeout=120)


def modes(root) -> dict[str, int]:
    """Every entry under `root` with its permission bits."""
    found = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(folder, name)
            found[os.path.relpath(path, root)] = stat.S_IMODE(os.lstat(path).st_mode)
    return found


async def test_a_backup_made_mid_turn_starts_a_relay_with_the_history_and_the_device(relay_factory, tmp_path):
    cfg = make_config(echo={"delay_ms": 250})  # a pause before each step of an answer: four queued turns take seconds
    relay = relay_factory(cfg)
    admin, client = await setup_admin(relay)
    for index in range(3):
        await send_and_complete(client, f"before {index}")
    asset = upload(relay, admin.token, PNG_1PX).json()["assetId"]
    in_flight = [message_frame(f"in flight {index}") for index in range(4)]
    for frame in in_flight:
        await client.send_json(frame)

    second = relay_factory(cfg, start=False)  # its data directory is the backup
    made = await asyncio.to_thread(backup, relay, second.data_dir)
    assert f"to {second.data_dir}" in made.stdout, made.stdout
    for index in range(4):  # the relay that was copied goes on answering
        await client.recv_until(lambda f: f.get("role") == "assistant" and f.get("content") == f"echo: in flight {index}"
                                and f.get("streaming") is False, timeout=20)

    copied = modes(second.data_dir)
    assert {"relay.sqlite", "audit.sqlite", "jwt.key", "assets"} <= set(copied), sorted(copied)
    assert not [name for name in copied if name.endswith(("-wal", "-shm")) or name in ("relay.lock", "listeners.json")], copied
    assert not os.path.exists(f"{second.data_dir}.partial")
    assert stat.S_IMODE(os.stat(second.data_dir).st_mode) == 0o700
    wrong = {name: oct(mode) for name, mode in copied.items()
             if mode != (0o700 if os.path.isdir(second.data_dir / name) else 0o600)}
    assert not wrong, f"folders are 0700 and files 0600: {wrong}"

    second.start()
    restored, result = await auth(second, admin)  # the paired device and its token
    replayed = [await restored.recv_json() for _ in range(result["replayCount"])]
    contents = [f.get("content") for f in replayed]
    assert all(f"echo: before {index}" in contents for index in range(3)), contents
    assert "in flight 3" in contents and "echo: in flight 3" not in contents, f"copied with turns in flight: {contents}"
    download = second.http("GET", f"/download/{asset}", headers=admin.bearer)
    assert download.status == 200 and download.body == PNG_1PX, download.status
    await send_and_complete(restored, "on the restored relay", timeout=15)
    audited = second.audit("--device", admin.device_id[:8])
    assert any("before 0" in r["body"] for r in audited), "the audit came along"


async def test_refusals_and_a_failed_copy_leave_nothing_behind(relay, tmp_path):
    await setup_admin(relay)
    taken = tmp_path / "taken"
    taken.mkdir()
    refused = backup(relay, taken, check=False)
    assert refused.returncode == 1 and "already exists" in refused.stderr, refused.stderr
    inside = backup(relay, relay.data_dir / "copy", check=False)
    assert inside.returncode == 1 and "inside the data directory" in inside.stderr, inside.stderr
    orphan = backup(relay, tmp_path / "no" / "such" / "dest", check=False)
    assert orphan.returncode == 1 and "create it first" in orphan.stderr, orphan.stderr
    (tmp_path / "left.partial").mkdir()
    interrupted = backup(relay, tmp_path / "left", check=False)
    assert interrupted.returncode == 1 and "left.partial already exists" in interrupted.stderr, interrupted.stderr

    (relay.data_dir / "broken.sqlite").write_bytes(b"not a database, " * 512)
    failed = backup(relay, tmp_path / "failed", check=False)
    assert failed.returncode == 1 and "broken.sqlite" in failed.stderr and "nothing was left" in failed.stderr, failed.stderr
    assert not (tmp_path / "failed").exists() and not (tmp_path / "failed.partial").exists()


async def test_a_large_copy_reports_progress_on_stderr(relay, tmp_path):
    await setup_admin(relay)
    big = relay.data_dir / "projects" / "big.bin"
    big.parent.mkdir(exist_ok=True)
    big.write_bytes(os.urandom(12 << 20))
    big.chmod(0o644)
    made = backup(relay, tmp_path / "copy")
    lines = [line for line in made.stderr.splitlines() if line.startswith("clawrelay: backup ")]
    assert len(lines) >= 3 and lines[-1].startswith("clawrelay: backup 100% ("), made.stderr
    copy = tmp_path / "copy" / "projects" / "big.bin"
    assert copy.read_bytes() == big.read_bytes() and stat.S_IMODE(copy.stat().st_mode) == 0o600
