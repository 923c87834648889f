"""Operator-grade start-up (issue 11): the relay never says "ready" when it is not, refuses a second
relay on its data dir, keeps its files private, and reads relative paths from the config's folder."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import stat
import subprocess
from pathlib import Path

import pytest

from conftest import READY_RE, make_config, pair_first_admin, relay_bin, render_toml, wait_for
from test_config import serve_expecting_failure


def test_a_host_name_is_resolved_and_bound(relay_factory):
    relay = relay_factory(make_config(clawline={"listen": "localhost:0"}))
    with socket.create_connection(("127.0.0.1", relay.port), timeout=5):
        pass


def test_a_port_in_use_fails_start_up_with_the_cause(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        cfg = make_config(clawline={"listen": f"127.0.0.1:{port}"})
        _, output = serve_expecting_failure(tmp_path, render_toml(cfg))
    assert f"127.0.0.1:{port}" in output and "[clawline]" in output and "in use" in output.lower(), output


def test_an_address_this_machine_does_not_have_fails_start_up(tmp_path):
    cfg = make_config(clawline={"listen": "192.0.2.1:0", "allow_public": True})
    _, output = serve_expecting_failure(tmp_path, render_toml(cfg))
    assert "192.0.2.1" in output and "assign" in output.lower(), output  # EADDRNOTAVAIL


def test_two_listeners_on_one_port_are_a_config_error(tmp_path):
    cfg = make_config(clawline={"listen": "127.0.0.1:18999"})
    cfg["gateway"] = {"listen": "127.0.0.1:18999"}
    config, output = serve_expecting_failure(tmp_path, render_toml(cfg))
    assert "[gateway]" in output and "listen" in output and "18999" in output, output


def test_a_config_without_listeners_is_refused(tmp_path):
    _, output = serve_expecting_failure(tmp_path, '[[backends]]\nname = "echo"\nkind = "echo"\n')
    assert "no listener" in output, output


def test_a_second_relay_on_the_same_data_dir_is_refused_with_the_first_pid(relay_factory, tmp_path):
    relay = relay_factory()
    other = dict(make_config())
    config = tmp_path / "second.toml"
    config.write_text(render_toml(other))
    result = subprocess.run([str(relay_bin()), "serve", "--config", str(config), "--data-dir", str(relay.data_dir)],
                            capture_output=True, text=True, timeout=15)
    assert result.returncode == 1 and not READY_RE.search(result.stdout), result.stdout + result.stderr
    assert f"pid {relay.proc.pid}" in result.stderr, result.stderr


def tree(root: Path) -> dict[str, tuple[int, int, int]]:
    """Every file and folder under `root`: size, mtime (ns) and mode."""
    out = {}
    for folder, folders, files in os.walk(root):
        for name in folders + files:
            info = (Path(folder) / name).lstat()
            out[str((Path(folder) / name).relative_to(root))] = (info.st_size, info.st_mtime_ns, stat.S_IMODE(info.st_mode))
    return out


def settled(root: Path) -> dict[str, tuple[int, int, int]]:
    """`tree(root)` once it read the same three times in a row (a running relay's writers are done)."""
    seen: list = []

    def steady():
        seen.append(tree(root))
        return seen[-1] if len(seen) >= 3 and seen[-1] == seen[-2] == seen[-3] else None
    return wait_for(steady, timeout=10, interval=0.2, what=f"the files under {root} to settle")


def serve(config: Path, data_dir: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(relay_bin()), "serve", "--config", str(config), "--data-dir", str(data_dir)],
                          capture_output=True, text=True, timeout=15)


async def test_a_second_serve_refused_on_a_served_data_dir_changes_nothing_on_disk(relay_factory, tmp_path):
    relay = relay_factory()
    await pair_first_admin(relay)
    before = settled(relay.data_dir)
    config = tmp_path / "second.toml"
    config.write_text(render_toml(make_config()))
    result = serve(config, relay.data_dir)
    assert result.returncode == 1 and f"pid {relay.proc.pid}" in result.stderr, result.stderr
    assert tree(relay.data_dir) == before, "the refused relay wrote nothing (no key, database, migration, lock or audit file)"


async def test_a_second_serve_refused_for_a_busy_port_changes_nothing_on_disk(relay_factory, tmp_path):
    relay = relay_factory()
    await pair_first_admin(relay)
    assert relay.terminate() == 0
    os.chmod(relay.data_dir / "relay.sqlite", 0o644)  # what a start would tighten
    before = tree(relay.data_dir)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        config = tmp_path / "busy.toml"
        config.write_text(render_toml(make_config(clawline={"listen": f"127.0.0.1:{port}"})))
        result = serve(config, relay.data_dir)
        assert result.returncode == 1 and f"127.0.0.1:{port}" in result.stderr and "in use" in result.stderr.lower(), result.stderr
        assert tree(relay.data_dir) == before, "the refused relay wrote nothing"
        fresh = serve(config, tmp_path / "fresh")
        assert fresh.returncode == 1 and not (tmp_path / "fresh").exists(), "nor created a data directory"


def test_every_file_the_relay_writes_is_private(relay_factory):
    relay = relay_factory()
    wide = relay.data_dir / "assets"
    relay.terminate()
    os.chmod(relay.data_dir, 0o755)
    os.chmod(relay.data_dir / "relay.sqlite", 0o644)
    relay.start()
    for path in [relay.data_dir, *relay.data_dir.rglob("*")]:
        mode = stat.S_IMODE(path.lstat().st_mode)
        assert mode & 0o077 == 0, f"{path} is {oct(mode)}"
    assert "made the data directory private" in relay.stderr_text()
    assert wide.exists()


def test_a_relative_data_dir_belongs_to_the_config_file(tmp_path):
    folder = tmp_path / "etc"
    folder.mkdir()
    config = folder / "relay.toml"
    config.write_text('[server]\ndata_dir = "state"\n')
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    tool = subprocess.run([str(relay_bin()), "devices", "list", "--config", str(config)], capture_output=True, text=True,
                          timeout=15, cwd=elsewhere)
    assert tool.returncode == 1 and "no data directory at " + str(folder / "state") in tool.stderr, tool.stderr
    assert "SQLite" not in tool.stderr
    cfg = make_config()
    cfg["server"] = {"data_dir": "state"}
    config.write_text(render_toml(cfg))
    serve = subprocess.Popen([str(relay_bin()), "serve", "--config", str(config)], cwd=elsewhere, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        assert READY_RE.search(serve.stdout.readline()), "serve did not start"
        tool = subprocess.run([str(relay_bin()), "devices", "list", "--config", str(config)], capture_output=True, text=True,
                              timeout=15, cwd=tmp_path)
        assert tool.returncode == 0, tool.stderr
    finally:
        serve.terminate()
        serve.wait(15)
    assert (folder / "state" / "relay.sqlite").exists() and not (elsewhere / "state").exists()


def test_a_data_dir_that_is_a_file_is_named_in_a_sentence(tmp_path):
    plain = tmp_path / "plain"
    plain.write_text("x")
    result = subprocess.run([str(relay_bin()), "serve", "--data-dir", str(plain)], capture_output=True, text=True, timeout=15)
    assert result.returncode == 1 and str(plain) in result.stderr and "is a file" in result.stderr, result.stderr
    assert "NSCocoaErrorDomain" not in result.stderr


def test_version():
    result = subprocess.run([str(relay_bin()), "--version"], capture_output=True, text=True, timeout=15)
    assert result.returncode == 0 and result.stdout.startswith("clawrelay "), result.stdout


def test_json_logs_are_one_object_per_line(relay_factory):
    cfg = make_config()
    cfg["server"] = {"log_format": "json"}
    relay = relay_factory(cfg)
    relay.terminate()
    lines = [line for line in relay.stderr_text().splitlines() if line.strip()]
    assert lines, "the relay logged nothing"
    entries = [json.loads(line) for line in lines]
    started = [e for e in entries if e["msg"] == "relay started"]
    assert started and {"ts", "level", "msg", "data_dir"} <= started[0].keys(), entries[:3]
    assert started[0]["level"] == "info"


@pytest.mark.parametrize("how", ["flag", "env"])
def test_the_log_level_can_be_overridden(tmp_path, how):
    config = tmp_path / "level.toml"
    config.write_text(render_toml(make_config()))
    env = dict(os.environ)
    cmd = [str(relay_bin()), "serve", "--config", str(config), "--data-dir", str(tmp_path / "d")]
    if how == "flag":
        cmd += ["--log-level", "warning"]
    else:
        env["CLAWRELAY_LOG_LEVEL"] = "warning"
    serve = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert READY_RE.search(serve.stdout.readline())
    finally:
        serve.terminate()
        _, err = serve.communicate(timeout=15)
    assert "relay started" not in err, err  # an info line, below warning
    bad = subprocess.run([str(relay_bin()), "serve", "--log-level", "loud", "--data-dir", str(tmp_path / "e")],
                         capture_output=True, text=True, timeout=15)
    assert bad.returncode == 64 and "--log-level loud is not one of trace, debug" in bad.stderr, bad.stderr
    assert not (tmp_path / "e").exists(), "a usage error starts nothing"


@pytest.mark.parametrize("args", [
    ["serve", "--log-level", "loud"], ["serve", "--no-such-option"],
    ["chat", "--wait", "0"], ["chat", "--url", "http://x"], ["chat", "--send", "x", "--list"],
    ["devices", "push", "d", "--apns", "abcd"], ["devices", "push", "d"], ["devices", "push", "d", "--remove", "email"],
    ["devices", "approve", "d", "--user", "bob"],
    ["conversations", "list", "--limit", "0"], ["approvals", "--limit", "0"],
    ["pair-link", "--port", "70000"], ["pair-link", "--remote", "http://x"],
    ["audit", "--since", "yesterday"], ["audit", "--protocol", "foo"], ["audit", "--limit", "0"],
    ["bench", "nosuch"], ["bench", "--rate", "0"],
], ids=lambda args: " ".join(args))
def test_a_bad_command_line_is_a_usage_error_in_every_subcommand(tmp_path, args):
    """Exit 64 (EX_USAGE) with the usage line, before anything is read or started."""
    data = [] if args[0] in ("chat", "bench") else ["--data-dir", str(tmp_path / "d")]
    result = subprocess.run([str(relay_bin()), *args, *data], capture_output=True, text=True, timeout=15)
    assert result.returncode == 64 and result.stderr.startswith("Error: ") and "Usage: clawrelay" in result.stderr, result
    assert not (tmp_path / "d").exists()


def test_the_systemd_unit_is_valid_and_its_command_line_runs(tmp_path):
    source = Path(__file__).resolve().parents[2] / "contrib" / "clawrelay.service"
    text = source.read_text()
    exec_start = next(line for line in text.splitlines() if line.startswith("ExecStart="))
    args = exec_start.split("=", 1)[1].split()
    assert args[0] == "/usr/local/bin/clawrelay" and args[1] == "serve", exec_start
    # systemd accepts the unit (with the binary where the unit expects it, here the build's).
    copy = tmp_path / "clawrelay.service"
    copy.write_text(text.replace("/usr/local/bin/clawrelay", str(relay_bin())))
    verify = subprocess.run(["systemd-analyze", "verify", str(copy)], capture_output=True, text=True, timeout=30)
    problems = [l for l in (verify.stdout + verify.stderr).splitlines() if "clawrelay.service" in l]
    assert not problems, problems
    # The relay takes exactly that command line (config and data dir swapped for temporary ones).
    config = tmp_path / "relay.toml"
    config.write_text(render_toml(make_config()))
    line = [str(relay_bin()), *args[1:]]
    line[line.index("--config") + 1] = str(config)
    line[line.index("--data-dir") + 1] = str(tmp_path / "state")
    serve = subprocess.Popen(line, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert READY_RE.search(serve.stdout.readline())
    finally:
        serve.terminate()
        assert serve.wait(15) == 0


@pytest.mark.parametrize("program", ["/no/such/program", "no-such-program-anywhere", "not-executable"])
def test_a_command_backend_whose_program_cannot_run_fails_start_up(tmp_path, program):
    if program == "not-executable":
        plain = tmp_path / "script.sh"
        plain.write_text("#!/bin/sh\ncat\n")
        plain.chmod(0o644)
        program = str(plain)
    cfg = make_config(cmd={"command": [program, "--flag"]})
    _, output = serve_expecting_failure(tmp_path, render_toml(cfg))
    assert "cmd" in output and program in output and "not executable" in output, output


async def test_a_turn_cut_by_sigterm_gets_its_error_before_the_close(relay_factory):
    from conftest import auth, message_frame, pair_first_admin
    relay = relay_factory(make_config(echo={"delay_ms": 20_000}))
    admin = await pair_first_admin(relay)
    client, _ = await auth(relay, admin)
    frame = message_frame("slow one")
    await client.send_json(frame)
    await client.expect("ack")
    relay.proc.send_signal(__import__("signal").SIGTERM)
    frames = await client.expect_close(1001, timeout=10)
    errors = [f for f in frames if f.get("type") == "error"]
    assert errors and errors[-1]["code"] == "server_error" and errors[-1]["messageId"] == frame["id"], frames
    # The stop is the test's own: it ends by itself (a second SIGTERM would cut it short).
    assert await asyncio.to_thread(relay.proc.wait, 10) == 0, relay.stderr_text()[-2000:]


def test_swapped_tls_files_are_named_not_called_an_address_problem(tmp_path):
    from test_tls import make_certificate
    cert, key = make_certificate(tmp_path)
    cfg = make_config(clawline={"tls_cert": str(key), "tls_key": str(cert)})
    _, output = serve_expecting_failure(tmp_path, render_toml(cfg))
    assert "tls_cert" in output and str(key) in output and "is it the key" in output, output


def test_an_expired_certificate_is_named_with_its_date(tmp_path):
    import datetime
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    past = datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc)
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                   .serial_number(1).not_valid_before(past).not_valid_after(past + datetime.timedelta(days=30))
                   .sign(key, hashes.SHA256()))
    cert, key_file = tmp_path / "old.pem", tmp_path / "old.key"
    cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    cfg = make_config(clawline={"tls_cert": str(cert), "tls_key": str(key_file)})
    _, output = serve_expecting_failure(tmp_path, render_toml(cfg))
    assert str(cert) in output and "expired on 2020-01-31" in output, output


@pytest.mark.parametrize("case", ["folder", "missing", "unquoted"])
def test_config_file_problems_are_sentences(tmp_path, case):
    if case == "folder":
        path = tmp_path / "conf.d"
        path.mkdir()
        expected = "is a folder"
    elif case == "missing":
        path = tmp_path / "nope.toml"
        expected = "no such file"
    else:
        path = tmp_path / "relay.toml"
        path.write_text("[clawline]\nlisten = 127.0.0.1:0\n")
        expected = 'must be quoted'
    result = subprocess.run([str(relay_bin()), "serve", "--config", str(path), "--data-dir", str(tmp_path / "d")],
                            capture_output=True, text=True, timeout=15)
    assert result.returncode == 1 and str(path) in result.stderr and expected in result.stderr, result.stderr
    assert "NSCocoaErrorDomain" not in result.stderr and "error 256" not in result.stderr


def test_pair_link_needs_a_gateway_names_the_bound_port_and_warns_about_loopback(relay_factory, tmp_path):
    plain = relay_factory()
    config = tmp_path / "no-gateway.toml"
    config.write_text(render_toml(make_config()))
    no_gateway = plain.cli("pair-link", "--no-qr", "--config", str(config), check=False)
    assert no_gateway.returncode == 1 and "[gateway]" in no_gateway.stderr, no_gateway.stderr
    cfg = make_config()
    cfg["gateway"] = {"listen": "127.0.0.1:0"}
    relay = relay_factory(cfg)
    link = relay.cli("pair-link", "--no-qr")
    assert f"port={relay.listeners['gateway'][1]}" in link.stdout, link.stdout
    assert "cannot reach" in link.stderr, link.stderr
    bad = relay.cli("pair-link", "--no-qr", "--remote", "https://x", check=False)
    assert bad.returncode == 64 and "wss://" in bad.stderr, bad.stderr
    remote = relay.cli("pair-link", "--no-qr", "--remote", "wss://relay.example.com")
    assert "remote=wss" in remote.stdout and "cannot reach" not in remote.stderr, remote.stderr


def test_the_bash_completion_script_completes_subcommands_and_options(tmp_path):
    """README's install step: the script goes where bash-completion loads it from; here it is sourced and
    asked what `bash` would offer at a Tab."""
    script = tmp_path / "clawrelay.bash"
    generated = subprocess.run([str(relay_bin()), "--generate-completion-script", "bash"], capture_output=True, text=True, timeout=15)
    assert generated.returncode == 0 and "complete -o filenames -F _clawrelay clawrelay" in generated.stdout, generated
    script.write_text(generated.stdout)
    ask = f"""
source {script}
offer() {{
    COMP_LINE="$1"; COMP_POINT=${{#COMP_LINE}}
    read -ra COMP_WORDS <<< "$COMP_LINE"
    [[ "$COMP_LINE" == *" " ]] && COMP_WORDS+=("")
    COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
    COMPREPLY=()
    _clawrelay clawrelay "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
    echo "$1|${{COMPREPLY[*]}}"
}}
offer "clawrelay che"
offer "clawrelay chat --se"
offer "clawrelay devices ap"
"""
    env = dict(os.environ, PATH=f"{relay_bin().parent}:{os.environ['PATH']}")
    offered = subprocess.run(["bash", "-c", ask], capture_output=True, text=True, timeout=30, env=env)
    assert offered.stdout.splitlines() == ["clawrelay che|check-config", "clawrelay chat --se|--send", "clawrelay devices ap|approve"], offered
