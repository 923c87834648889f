"""`scripts/install` (README "Install as a service"): the binary, the example config (kept when it exists)
and the systemd unit, below DESTDIR; the installed binary runs; bad arguments are refused."""
import os
import stat
import subprocess
from pathlib import Path

from conftest import relay_bin

ROOT = Path(__file__).resolve().parents[2]


def install(dest: Path, *args: str, prefix: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "DESTDIR": str(dest)}
    if prefix:
        env["PREFIX"] = prefix
    return subprocess.run([str(ROOT / "scripts" / "install"), *args], env=env, capture_output=True, text=True, timeout=60)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_install_puts_the_binary_config_and_unit_in_place_and_keeps_an_edited_config(tmp_path):
    dest = tmp_path / "root"
    done = install(dest, "--binary", str(relay_bin()))
    assert done.returncode == 0, done.stderr
    binary = dest / "usr/local/bin/clawrelay"
    config = dest / "etc/clawrelay/relay.toml"
    unit = dest / "etc/systemd/system/clawrelay.service"
    assert (mode(binary), mode(config), mode(unit)) == (0o755, 0o644, 0o644)
    assert config.read_text() == (ROOT / "config.example.toml").read_text()
    assert unit.read_text() == (ROOT / "contrib/clawrelay.service").read_text()
    assert "sudo systemctl enable --now clawrelay" in done.stdout, done.stdout
    version = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=30)
    assert version.returncode == 0 and version.stdout.strip(), version

    config.write_text("# mine\n")
    again = install(dest, "--binary", str(relay_bin()))
    assert again.returncode == 0 and f"kept {config}" in again.stdout, again.stdout
    assert config.read_text() == "# mine\n"


def test_another_prefix_is_written_into_the_unit(tmp_path):
    done = install(tmp_path, "--binary", str(relay_bin()), prefix="/opt/clawrelay")
    assert done.returncode == 0, done.stderr
    unit = (tmp_path / "etc/systemd/system/clawrelay.service").read_text()
    assert "ExecStart=/opt/clawrelay/bin/clawrelay serve" in unit and "/usr/local/bin" not in unit.split("[Unit]")[1], unit
    assert (tmp_path / "opt/clawrelay/bin/clawrelay").is_file()


def test_bad_arguments_are_refused(tmp_path):
    unknown = install(tmp_path, "--nope")
    assert unknown.returncode == 64 and "unknown argument --nope" in unknown.stderr, unknown
    missing = install(tmp_path, "--binary", str(tmp_path / "absent"))
    assert missing.returncode == 1 and "is not an executable file" in missing.stderr, missing
    assert not (tmp_path / "usr").exists()
