"""`clawrelay chat` without a screen: --send streams an answer to stdout, --list prints the
conversations; the first run waits for pairing and says how to approve it."""
import asyncio
import os
import subprocess
import time

from conftest import make_config, relay_bin, wait_for


def chat_relay(relay_factory, delay_ms: int = 0, **gateway):
    cfg = make_config(echo={"delay_ms": delay_ms})
    cfg["gateway"] = {"listen": "127.0.0.1:0", **gateway}
    return relay_factory(cfg)


def chat(relay, tmp_path, *args, timeout: float = 30, stdin: str | None = None) -> subprocess.CompletedProcess:
    url = f"ws://127.0.0.1:{relay.listeners['gateway'][1]}"
    return subprocess.run([str(relay_bin()), "chat", "--url", url, "--identity", str(tmp_path / "id" / "chat.key"), "--wait", "20", *args],
                          capture_output=True, text=True, timeout=timeout, input=stdin)


def start_chat(relay, tmp_path, *args) -> subprocess.Popen:
    url = f"ws://127.0.0.1:{relay.listeners['gateway'][1]}"
    return subprocess.Popen([str(relay_bin()), "chat", "--url", url, "--identity", str(tmp_path / "id" / "chat.key"), "--wait", "20", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def approve_when_asked(relay, proc: subprocess.Popen) -> str:
    """Reads the client's stderr until it prints the approve command, then runs it on the relay."""
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if line.strip().startswith("clawrelay devices approve "):
            device = line.split()[-1]
            relay.cli("devices", "approve", device)
            return device
    raise AssertionError("the client never printed the approve command")


def test_first_send_waits_for_approval_then_streams_the_answer(relay_factory, tmp_path):
    relay = chat_relay(relay_factory, delay_ms=20)
    proc = start_chat(relay, tmp_path, "--send", "hello from a terminal")
    device = approve_when_asked(relay, proc)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert out == "echo: hello from a terminal\n", out
    key = tmp_path / "id" / "chat.key"
    assert (key.stat().st_mode & 0o777) == 0o600 and ((tmp_path / "id").stat().st_mode & 0o777) == 0o700
    assert any(d["deviceId"] == device and d["status"] == "approved" for d in relay.devices())
    again = chat(relay, tmp_path, "--send", "second", "--conversation", "main")
    assert again.returncode == 0 and again.stdout == "echo: second\n" and "not paired" not in again.stderr, again


def test_list_prints_one_conversation_per_line_and_new_opens_one_on_a_backend(relay_factory, tmp_path):
    relay = chat_relay(relay_factory, auto_approve_loopback=True)
    sent = chat(relay, tmp_path, "--send", "on cmd", "--new", "echo")
    assert sent.returncode == 0 and sent.stdout == "echo: on cmd\n", sent
    listed = chat(relay, tmp_path, "--list")
    assert listed.returncode == 0, listed
    keys = [line.split("\t")[0] for line in listed.stdout.splitlines()]
    assert any(k.startswith("backend:echo:") for k in keys), listed.stdout


def test_a_failed_answer_exits_non_zero_with_the_reason(relay_factory, tmp_path):
    relay = chat_relay(relay_factory, auto_approve_loopback=True)
    failed = chat(relay, tmp_path, "--send", "boom", "--new", "cmd")  # `cat; exit 3`: the text, then a failure
    assert failed.returncode == 1 and failed.stdout == "boom\n", failed
    assert failed.stderr == "the assistant failed to answer: exit status 3\n", failed


def test_new_on_a_backend_the_relay_lacks_is_refused_before_anything_is_made(relay_factory, tmp_path):
    relay = chat_relay(relay_factory, auto_approve_loopback=True)
    refused = chat(relay, tmp_path, "--send", "hello", "--new", "nosuch")
    assert refused.returncode == 1 and refused.stdout == "", refused
    assert refused.stderr == "no backend named nosuch on the relay; it has: cmd, echo\n", refused
    assert chat(relay, tmp_path, "--list").stdout == "", "no conversation was made"
    upper = chat(relay, tmp_path, "--send", "hi", "--new", "ECHO")  # the relay's spelling is used
    assert upper.returncode == 0 and upper.stdout == "echo: hi\n", upper
    assert chat(relay, tmp_path, "--list").stdout.startswith("backend:echo:"), "on the relay's echo"


def test_send_dash_reads_the_message_from_stdin(relay_factory, tmp_path):
    relay = chat_relay(relay_factory, auto_approve_loopback=True)
    piped = chat(relay, tmp_path, "--send", "-", stdin="line one\nline two\n")
    assert piped.returncode == 0 and piped.stdout == "echo: line one\nline two\n", piped
    empty = chat(relay, tmp_path, "--send", "-", stdin="\n")
    assert empty.returncode == 64 and "--send -: stdin held no message" in empty.stderr, empty


def test_list_after_send_shows_the_answer_read(relay_factory, tmp_path):
    relay = chat_relay(relay_factory, auto_approve_loopback=True)
    assert chat(relay, tmp_path, "--send", "first", "--conversation", "notes").returncode == 0
    assert chat(relay, tmp_path, "--send", "second", "--conversation", "notes").returncode == 0
    listed = chat(relay, tmp_path, "--list")
    assert listed.stdout.splitlines() == ["notes\t0\techo\tnotes"], listed


def chat_at_home(relay, home, xdg: str | None, *args) -> subprocess.CompletedProcess:
    """`clawrelay chat` without --identity, with this HOME and XDG_CONFIG_HOME (None: unset)."""
    env = {k: v for k, v in os.environ.items() if k not in ("HOME", "XDG_CONFIG_HOME")} | {"HOME": str(home)}
    if xdg is not None:
        env["XDG_CONFIG_HOME"] = xdg
    url = f"ws://127.0.0.1:{relay.listeners['gateway'][1]}"
    return subprocess.run([str(relay_bin()), "chat", "--url", url, "--wait", "20", *args], capture_output=True, text=True, timeout=30, env=env)


def test_the_identity_lives_under_xdg_config_home_or_the_homes_config(relay_factory, tmp_path):
    relay = chat_relay(relay_factory, auto_approve_loopback=True)
    home, xdg = tmp_path / "home", tmp_path / "xdg"
    home.mkdir()
    first = chat_at_home(relay, home, str(xdg), "--send", "hi")
    assert first.returncode == 0 and first.stderr == "", first
    assert ((xdg / "clawrelay" / "chat.key").stat().st_mode & 0o777) == 0o600
    assert ((xdg / "clawrelay").stat().st_mode & 0o777) == 0o700 and not (home / ".config").exists()
    for unset in (None, ""):
        other = tmp_path / f"home-{unset is None}"
        other.mkdir()
        assert chat_at_home(relay, other, unset, "--list").returncode == 0
        assert (other / ".config" / "clawrelay" / "chat.key").exists(), f"XDG_CONFIG_HOME={unset!r}: under $HOME/.config"
    devices = len(relay.devices())

    # A key at the old default ($HOME/.config) stays in use, said once, until it is moved.
    legacy_home, moved_to = tmp_path / "home-True", tmp_path / "xdg2"
    kept = chat_at_home(relay, legacy_home, str(moved_to), "--list")
    assert kept.returncode == 0 and not moved_to.exists() and len(relay.devices()) == devices, kept
    old = legacy_home / ".config" / "clawrelay"
    assert kept.stderr == (f"clawrelay chat: using this terminal's identity at {old}/chat.key, where it was kept before XDG_CONFIG_HOME "
                           f"was honoured; to keep it in {moved_to}/clawrelay instead: mkdir -p {moved_to}/clawrelay && "
                           f"mv {old}/chat.* {moved_to}/clawrelay/\n"), kept
    subprocess.run(f"mkdir -p {moved_to}/clawrelay && mv {old}/chat.* {moved_to}/clawrelay/", shell=True, check=True)
    after = chat_at_home(relay, legacy_home, str(moved_to), "--list")
    assert after.returncode == 0 and after.stderr == "" and len(relay.devices()) == devices, after


def test_bad_arguments_and_an_unreachable_relay_fail_clearly(relay_factory, tmp_path):
    from conftest import free_port
    relay = chat_relay(relay_factory)
    both = chat(relay, tmp_path, "--send", "x", "--conversation", "a", "--new", "echo")
    assert both.returncode == 64 and "exclude each other" in both.stderr, both
    bad_url = subprocess.run([str(relay_bin()), "chat", "--url", "http://x", "--list"], capture_output=True, text=True, timeout=20)
    assert bad_url.returncode == 64 and "is not a ws:// or wss:// address" in bad_url.stderr, bad_url
    port = free_port()
    nobody = subprocess.run([str(relay_bin()), "chat", "--url", f"ws://127.0.0.1:{port}", "--identity", str(tmp_path / "id" / "chat.key"),
                             "--list", "--wait", "2"], capture_output=True, text=True, timeout=20)
    refused = f"could not connect to ws://127.0.0.1:{port}: connection refused"
    assert nobody.returncode == 1 and nobody.stderr == (f"{refused}; trying again for up to 2 s (--wait)\n"
                                                        f"{refused} (gave up after 2 s, --wait)\n"), nobody
    unnamed = subprocess.run([str(relay_bin()), "chat", "--url", "ws://nosuch.invalid:1", "--identity", str(tmp_path / "id" / "chat.key"),
                              "--list", "--wait", "1"], capture_output=True, text=True, timeout=20)
    assert unnamed.returncode == 1 and "could not connect to ws://nosuch.invalid:1: no address for nosuch.invalid" in unnamed.stderr, unnamed


def device_when_asked(proc: subprocess.Popen) -> str:
    """Reads the client's stderr until it prints the approve command; returns the device id."""
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if line.strip().startswith("clawrelay devices approve "):
            return line.split()[-1]
    raise AssertionError("the client never printed the approve command")


def test_revoking_a_waiting_terminal_stops_it_and_allow_lets_it_ask_again(relay_factory, tmp_path):
    relay = chat_relay(relay_factory)
    proc = start_chat(relay, tmp_path, "--send", "hello")
    device = device_when_asked(proc)
    relay.cli("devices", "revoke", device)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 1 and out == "", (out, err)
    assert f"this device was revoked: run clawrelay devices allow {device} on the relay" in err, err
    rows = [d for d in relay.devices() if d["deviceId"] == device]
    assert [(r["status"], r["protocol"]) for r in rows] == [("revoked", "gateway")], rows

    # Still revoked: the next run is refused at once instead of asking to be approved.
    refused = chat(relay, tmp_path, "--send", "again")
    assert refused.returncode == 1 and "this device was revoked" in refused.stderr and "devices approve" not in refused.stderr, refused

    relay.cli("devices", "allow", device)
    proc = start_chat(relay, tmp_path, "--send", "after allow")
    assert device_when_asked(proc) == device
    pending = wait_for(lambda: [d for d in relay.devices() if d["deviceId"] == device and d["status"] == "pending"], what="pending row")
    assert [(r["status"], r["reason"]) for r in relay.devices() if r["deviceId"] == device] == [("pending", "not-paired")], pending
    listed = relay.cli("devices", "list").stdout
    assert [line for line in listed.splitlines() if line.startswith(device)][0].split()[2:4] == ["pending", "(not-paired)"], listed
    relay.cli("devices", "approve", device)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0 and out == "echo: after allow\n", (out, err)
    assert [d["status"] for d in relay.devices() if d["deviceId"] == device] == ["approved"]
