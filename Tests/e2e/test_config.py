"""Config validation: unknown keys and bad values name file:line:key; public binds need allow_public."""

import re
import subprocess

import pytest

from conftest import READY_RE, make_config, relay_bin, render_toml


def serve_expecting_failure(tmp_path, text: str):
    config = tmp_path / "bad.toml"
    config.write_text(text)
    cmd = [str(relay_bin()), "serve", "--config", str(config), "--data-dir", str(tmp_path / "data")]
    try:
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=15)
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"serve kept running with an invalid config; output: {exc.stdout!r}") from None
    output = result.stdout + result.stderr
    assert result.returncode != 0, f"serve exited 0 with an invalid config: {output}"
    assert not READY_RE.search(result.stdout), f"serve reported ready: {result.stdout}"
    return config, output


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def assert_names_location(output: str, config, line: int, key: str):
    assert str(config) in output or config.name in output, f"message should name the file: {output!r}"
    assert re.search(rf"(:|line\s*){line}\b", output), f"message should name line {line}: {output!r}"
    assert key in output, f"message should name the key {key!r}: {output!r}"


@pytest.mark.parametrize("section,key", [("clawline", "bogus_limit"), ("admin", "colour"), ("audit", "retention")])
def test_unknown_key_names_file_line_and_key(tmp_path, section, key):
    cfg = make_config()
    cfg[section][key] = 1
    text = render_toml(cfg)
    config, output = serve_expecting_failure(tmp_path, text)
    assert_names_location(output, config, line_of(text, f"{key} = "), key)


def test_unknown_backend_key_names_file_line_and_key(tmp_path):
    cfg = make_config(echo={"speed": 3})
    text = render_toml(cfg)
    config, output = serve_expecting_failure(tmp_path, text)
    assert_names_location(output, config, line_of(text, "speed = "), "speed")


def test_unknown_section_is_rejected(tmp_path):
    text = render_toml(make_config()) + "\n[mystery]\nenabled = true\n"
    config, output = serve_expecting_failure(tmp_path, text)
    assert "mystery" in output and (str(config) in output or config.name in output), output


@pytest.mark.parametrize("key,value", [("messages_per_second", "fast"), ("pending_ttl_seconds", -5),
                                       ("max_replay_messages", True)])
def test_bad_value_names_file_line_and_key(tmp_path, key, value):
    cfg = make_config(clawline={key: value})
    text = render_toml(cfg)
    config, output = serve_expecting_failure(tmp_path, text)
    assert_names_location(output, config, line_of(text, f"{key} = "), key)


def test_unknown_backend_reference_is_rejected(tmp_path):
    text = render_toml(make_config(clawline={"backend": "nowhere"}))
    _, output = serve_expecting_failure(tmp_path, text)
    assert "nowhere" in output, output


def test_toml_syntax_error_names_the_file(tmp_path):
    text = render_toml(make_config()) + "\n[clawline\nlisten = \n"
    config, output = serve_expecting_failure(tmp_path, text)
    assert str(config) in output or config.name in output, output


@pytest.mark.parametrize("section", ["clawline", "admin"])
def test_public_bind_requires_allow_public(tmp_path, section):
    cfg = make_config(**{section: {"listen": "0.0.0.0:0"}})
    _, output = serve_expecting_failure(tmp_path, render_toml(cfg))
    assert "allow_public" in output, output


def test_public_bind_with_allow_public_starts(relay_factory):
    relay = relay_factory(clawline={"listen": "0.0.0.0:0", "allow_public": True})
    assert relay.host == "0.0.0.0", relay.stdout_lines
    resp = relay.http("GET", "/version")
    assert resp.status == 200 and resp.json() == {"protocolVersion": 1}


@pytest.mark.parametrize("kind,url", [("clawline", "ws://127.0.0.1:9/ws"), ("openclaw", "ws://127.0.0.1:9")])
def test_a_backend_name_that_is_a_path_stops_start_up_before_anything_is_written(tmp_path, kind, url):
    # The name is the file name of the account's state in <data_dir>/accounts: "../../escaped"
    # would put it beside the config file, outside the data directory.
    cfg = make_config()
    cfg["backends"].append({"name": "../../escaped", "kind": kind, "url": url})
    text = render_toml(cfg)
    config = tmp_path / "bad.toml"
    config.write_text(text)
    cmd = [str(relay_bin()), "serve", "--config", str(config), "--data-dir", str(tmp_path / "data")]
    try:
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=15)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"serve kept running; it wrote: {sorted(p.name for p in tmp_path.rglob('*'))}") from None
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert_names_location(output, config, line_of(text, 'name = "../../escaped"'), "name")
    written = sorted(str(path.relative_to(tmp_path)) for path in tmp_path.rglob("*"))
    assert all(path in ("bad.toml", "data") or path.startswith("data/") for path in written), written


def test_a_key_under_its_old_name_works_and_serve_warns_with_file_line_and_the_new_name(relay_factory):
    relay = relay_factory(cmd={"environment": {"GREETING": "hi"}}, clawline={"max_queued_messages": 3})
    text = relay.config_path.read_text()
    err = relay.stderr_text()
    for old, new in (("environment", "env"), ("max_queued_messages", "max_queued_turns")):
        expected = f"{relay.config_path}:{line_of(text, f'{old} = ')}: "
        assert any(expected in line and f"{old}: an old name; write {new}" in line and "warning" in line for line in err.splitlines()), err
