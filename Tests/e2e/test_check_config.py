"""`clawrelay check-config` (issue 25): every start-up check that needs no socket, without starting,
like `nginx -t`; and the warning about a config file that others can read while it holds secrets."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import conftest
from conftest import relay_bin, render_toml, wait_for
from fake_apns import make_apns_key
from test_tls import make_certificate


def make_config(**overrides) -> dict:
    """The suite's config, written with today's key names (an old name is a warning of its own)."""
    cfg = conftest.make_config(**overrides)
    cfg["clawline"]["max_queued_turns"] = cfg["clawline"].pop("max_queued_messages")
    return cfg


def check(config: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(relay_bin()), "check-config", "--config", str(config), *extra],
                          capture_output=True, text=True, timeout=20)


def line_of(text: str, needle: str) -> int:
    return text.splitlines().index(needle) + 1


def write(tmp_path: Path, text: str, mode: int = 0o600) -> Path:
    path = tmp_path / "relay.toml"
    path.write_text(text)
    path.chmod(mode)
    return path


def test_a_good_file_is_ok_and_nothing_starts_or_is_written(tmp_path):
    cfg = make_config()
    cfg["server"] = {"data_dir": str(tmp_path / "state")}
    path = write(tmp_path, render_toml(cfg))
    result = check(path)
    assert result.returncode == 0 and result.stdout == f"config OK: {path}\n" and result.stderr == "", result
    assert not (tmp_path / "state").exists(), "check-config creates no data directory"


def test_a_bad_value_is_named_by_file_and_line(tmp_path):
    text = render_toml(make_config()).replace("[clawline]\n", '[clawline]\nmax_frame_bytes = "lots"\n')
    path = write(tmp_path, text)
    result = check(path)
    assert result.returncode == 1 and result.stdout == "", result
    line = line_of(text, 'max_frame_bytes = "lots"')
    assert result.stderr.startswith(f"{path}:{line}: [clawline] max_frame_bytes: "), result.stderr


def test_every_problem_of_a_file_is_listed_each_with_its_line(tmp_path):
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a certificate\n")
    cfg = make_config(clawline={"tls_cert": str(garbage), "tls_key": str(garbage)})
    cfg["backends"].append({"name": "gone", "kind": "command", "command": ["/no/such/program"]})
    text = render_toml(cfg)
    path = write(tmp_path, text)
    result = check(path)
    assert result.returncode == 1 and result.stdout == "", result
    command, cert, key = (line_of(text, line) for line in
                          ('command = ["/no/such/program"]', f'tls_cert = "{garbage}"', f'tls_key = "{garbage}"'))
    assert result.stderr.splitlines() == [
        f"{path}:{cert}: [clawline] tls_cert: {garbage} holds no PEM certificate (is it the key?)",
        f"{path}:{key}: [clawline] tls_key: {garbage} holds no PEM private key (is it the certificate?)",
        f'{path}:{command}: [[backends]] command: backend "gone": the program /no/such/program '
        "is missing or not executable (a bare name is looked up in PATH)",
    ], result.stderr


def test_good_tls_files_and_an_apns_key_pass_and_a_bad_apns_key_is_named(tmp_path):
    cert, key = make_certificate(tmp_path)
    apns = make_apns_key(tmp_path / "AuthKey_ABC123DEFG.p8")
    cfg = make_config(clawline={"tls_cert": str(cert), "tls_key": str(key)})
    cfg["push"] = {"apns_key_file": str(apns.key_file), "apns_key_id": "ABC123DEFG", "apns_team_id": "TEAM123456",
                   "apns_topic": "com.example.app"}
    path = write(tmp_path, render_toml(cfg))
    assert check(path).returncode == 0, check(path).stderr
    cfg["push"]["apns_key_file"] = str(cert)  # a certificate is no .p8 key
    text = render_toml(cfg)
    path = write(tmp_path, text)
    result = check(path)
    assert result.returncode == 1, result
    line = line_of(text, f'apns_key_file = "{cert}"')
    assert result.stderr.startswith(f"{path}:{line}: [push] apns_key_file: {cert} is not a .p8"), result.stderr


def test_a_missing_file_is_one_line_and_exit_1(tmp_path):
    result = check(tmp_path / "nope.toml")
    assert result.returncode == 1 and result.stderr == f"{tmp_path / 'nope.toml'}: no such file; --config takes a TOML file\n", result


def secret_config() -> dict:
    cfg = make_config()
    cfg["discoclaw"] = {"listen": "127.0.0.1:0", "setup_token": "a-setup-token-long-enough"}
    cfg["backends"][1]["env"] = {"API_KEY": "sk-not-for-others"}
    return cfg


def test_a_file_others_can_read_that_holds_secrets_is_warned_about(tmp_path):
    path = write(tmp_path, render_toml(secret_config()), mode=0o644)
    result = check(path)
    warning = (f"warning: {path} is readable by other users (mode 0644) and holds secrets "
               f"([discoclaw] setup_token, [[backends]] cmd env); chmod 600 {path}")
    assert result.returncode == 0 and result.stderr.splitlines() == [warning], result
    assert "a-setup-token" not in result.stderr and "sk-not" not in result.stderr
    path.chmod(0o600)
    assert check(path).stderr == ""
    path.chmod(0o640)
    no_secrets = write(tmp_path, render_toml(make_config()), mode=0o644)
    assert check(no_secrets).stderr == "", "a file without secrets may be readable"


def test_serve_warns_about_a_readable_file_with_secrets_at_start_up(relay_factory):
    relay = relay_factory(secret_config(), start=False)
    relay.config_path.chmod(0o644)
    relay.start()
    wait_for(lambda: "is readable by other users (mode 0644)" in relay.stderr_text(), what="the warning")
    [line] = [l for l in relay.stderr_text().splitlines() if "readable by other users" in l]
    assert " warning " in line and str(relay.config_path) in line and "chmod 600" in line and "[discoclaw] setup_token" in line, line
    assert os.stat(relay.config_path).st_mode & 0o777 == 0o644, "the relay warns; it does not change the operator's file"
