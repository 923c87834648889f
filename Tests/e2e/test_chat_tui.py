"""`clawrelay chat` full screen, driven through tmux like a person at a terminal (send-keys,
capture-pane): a first conversation opens on the default backend, an answer streams into it,
a resize redraws, Ctrl-D on an empty line quits."""
import subprocess
import time
import uuid

import pytest

from conftest import make_config, relay_bin


class Tmux:
    def __init__(self, command: list[str], columns: int = 120, rows: int = 40):
        self.socket = f"clawrelay-{uuid.uuid4().hex[:8]}"
        # pytest exports COLUMNS=80 and LINES=24; ncurses would take them over the window's size.
        self.run("new-session", "-d", "-s", "chat", "-x", str(columns), "-y", str(rows),
                 "env", "-u", "COLUMNS", "-u", "LINES", "TERM=xterm-256color", *command)

    def run(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=10).stdout

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", "chat")

    def keys(self, *keys: str) -> None:
        self.run("send-keys", "-t", "chat", *keys)

    def wait_for(self, text: str, timeout: float = 15) -> str:
        """Polls the pane (a terminal has no event to await) until `text` is on it."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if text in screen:
                return screen
            assert time.monotonic() < deadline, f"{text!r} never appeared on the screen:\n{screen}"
            time.sleep(0.1)

    def bell(self) -> str:
        """tmux's bell flag for the window: "1" once the client rang the terminal bell."""
        return self.run("display-message", "-p", "-t", "chat", "#{window_bell_flag}").strip()

    def alive(self) -> bool:
        return subprocess.run(["tmux", "-L", self.socket, "has-session", "-t", "chat"], capture_output=True, timeout=10).returncode == 0

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=10)


def chat_screen(relay, tmp_path) -> Tmux:
    """`clawrelay chat` full screen on the relay's gateway, its identity in the test's folder."""
    url = f"ws://127.0.0.1:{relay.listeners['gateway'][1]}"
    return Tmux([str(relay_bin()), "chat", "--url", url, "--identity", str(tmp_path / "id" / "chat.key")])


@pytest.fixture
def tui(relay_factory, tmp_path):
    cfg = make_config(echo={"delay_ms": 30})
    cfg["gateway"] = {"listen": "127.0.0.1:0", "auto_approve_loopback": True}
    relay = relay_factory(cfg)
    session = chat_screen(relay, tmp_path)
    yield relay, session
    session.close()


def test_a_message_streams_its_answer_and_a_resize_redraws(tui):
    relay, tmux = tui
    # No conversation yet: the client opens one on the default backend, named after it.
    tmux.wait_for("[1:echo]")
    tmux.keys("hello from tmux", "Enter")
    screen = tmux.wait_for("echo: hello from tmux")
    assert screen.count("echo: hello from tmux") == 1, f"the streamed answer is one line, not one per delta:\n{screen}"
    lines = screen.splitlines()
    mine = next(i for i, line in enumerate(lines) if line.rstrip().endswith("│ hello from tmux"))
    answer = next(i for i, line in enumerate(lines) if "echo: hello from tmux" in line)
    assert mine < answer, f"the message comes before its answer:\n{screen}"
    tmux.run("resize-window", "-t", "chat", "-x", "70", "-y", "20")
    small = tmux.wait_for("echo: hello from tmux")
    assert all(len(line) <= 70 for line in small.splitlines()), small


def test_rename_retitles_the_buffer_through_the_gateway(tui):
    relay, tmux = tui
    tmux.wait_for("[1:echo]")
    tmux.keys("first message", "Enter")  # the conversation exists on the relay from its first message
    tmux.wait_for("echo: first message")
    tmux.keys("/rename Trip plans", "Enter")
    screen = tmux.wait_for("[1:Trip plans]")
    listed = relay.cli("conversations", "list").stdout
    assert "Trip plans" in listed, f"the relay stored the title:\n{listed}\n---\n{screen}"


def test_the_approval_keys_are_in_the_help_and_say_when_nothing_waits(tui):
    """A waiting approval shows in its buffer and Alt-O/S/N answer it (Tests/ChatModelTests/ChatStateApprovalTests.swift);
    here the real client on the real relay with none waiting."""
    relay, tmux = tui
    tmux.wait_for("[1:echo]")
    tmux.keys("/help", "Enter")
    tmux.wait_for("Alt-O allow once")
    tmux.keys("M-o")
    tmux.wait_for("no approval waiting")
    tmux.keys("/deny 4f2a", "Enter")
    tmux.wait_for("no approval 4f2a is waiting")


def test_a_failed_answer_says_why_once(tui):
    relay, tmux = tui
    tmux.wait_for("[1:echo]")
    tmux.keys("/new cmd failing", "Enter")  # `cat; exit 3`
    tmux.wait_for("failing — cmd")
    tmux.keys("boom", "Enter")
    screen = tmux.wait_for("the assistant failed to answer: exit status 3")
    assert screen.count("the assistant failed to answer") == 1, f"one line for one failure:\n{screen}"
    assert "error │ the assistant failed to answer: exit status 3" in screen, screen


def test_a_second_start_sends_to_the_same_conversation(relay_factory, tmp_path):
    """Each start has its own run ids: an earlier start's would be answered as the run it was."""
    cfg = make_config()
    cfg["gateway"] = {"listen": "127.0.0.1:0", "auto_approve_loopback": True}
    relay = relay_factory(cfg)
    for attempt in ("first start", "second start"):
        tmux = chat_screen(relay, tmp_path)
        try:
            tmux.wait_for("[1:echo]")
            tmux.keys(attempt, "Enter")
            tmux.wait_for(f"echo: {attempt}")
        finally:
            tmux.close()


def test_a_refused_connection_says_so(relay_factory, tmp_path):
    from conftest import free_port
    port = free_port()
    tmux = Tmux([str(relay_bin()), "chat", "--url", f"ws://127.0.0.1:{port}", "--identity", str(tmp_path / "id" / "chat.key")])
    try:
        screen = tmux.wait_for(f"[disconnected: could not connect to ws://127.0.0.1:{port}: connection refused")
        assert screen.rstrip().splitlines()[-1].rstrip() == ">", f"the status line is cut at the width, not wrapped onto the input:\n{screen}"
        tmux.run("resize-window", "-t", "chat", "-x", "140", "-y", "20")
        wide = tmux.wait_for("connection refused; next try in")
        assert "retry in" not in wide, f"the link's own next try is the only one shown:\n{wide}"
    finally:
        tmux.close()


def test_ctrl_d_on_an_empty_line_quits(tui):
    relay, tmux = tui
    tmux.wait_for("connected")
    tmux.keys("C-d")
    deadline = time.monotonic() + 10
    while tmux.alive():
        assert time.monotonic() < deadline, "Ctrl-D on an empty line did not quit"
        time.sleep(0.1)


def test_new_opens_a_second_buffer_and_the_list_shows_both(tui):
    relay, tmux = tui
    tmux.wait_for("[1:echo]")
    tmux.keys("/new echo notes", "Enter")
    tmux.wait_for("[2:notes]")
    tmux.keys("in the notes", "Enter")
    screen = tmux.wait_for("echo: in the notes")
    assert "1 echo" in screen and "2 notes" in screen, screen
    listed = relay.cli("conversations", "list", "--json").stdout
    assert "backend:echo:notes" in listed, listed


def test_the_screen_waits_for_pairing_and_shows_the_approve_command(relay_factory, tmp_path):
    cfg = make_config()
    cfg["gateway"] = {"listen": "127.0.0.1:0"}
    relay = relay_factory(cfg)
    tmux = chat_screen(relay, tmp_path)
    try:
        tmux.wait_for("clawrelay devices approve")
        pending = [d for d in relay.devices() if d["status"] == "pending" and d["protocol"] == "gateway"]
        assert len(pending) == 1, pending
        device = pending[0]["deviceId"]
        screen = tmux.wait_for(f"clawrelay devices approve {device[:16]}")
        relay.cli("devices", "approve", device)
        tmux.wait_for("[1:echo]")
        tmux.keys("paired now", "Enter")
        tmux.wait_for("echo: paired now")
    finally:
        tmux.close()


def test_after_a_relay_restart_the_screen_reconnects_without_duplicating_lines(relay_factory, tmp_path):
    from conftest import free_port
    cfg = make_config()
    cfg["gateway"] = {"listen": f"127.0.0.1:{free_port()}", "auto_approve_loopback": True}
    relay = relay_factory(cfg)
    tmux = chat_screen(relay, tmp_path)
    try:
        tmux.wait_for("[1:echo]")
        tmux.keys("before the restart", "Enter")
        tmux.wait_for("echo: before the restart")
        relay.terminate()
        tmux.wait_for("disconnected")
        relay.start()
        tmux.wait_for("[connected]")
        tmux.keys("after the restart", "Enter")
        screen = tmux.wait_for("echo: after the restart")
        assert screen.count("echo: before the restart") == 1 and screen.count("│ before the restart") == 1, screen
    finally:
        tmux.close()


async def test_alt_a_goes_to_the_buffer_a_clawline_device_made_active(relay_factory, tmp_path):
    import asyncio
    from conftest import auth, relay_of_one_user, send_and_complete
    cfg = make_config()
    cfg["gateway"] = {"listen": "127.0.0.1:0", "auto_approve_loopback": True}
    relay, admin = await relay_of_one_user(relay_factory, cfg)  # the terminal and the phone are one user
    phone, _ = await auth(relay, admin)
    await send_and_complete(phone, "first from the phone")
    url = f"ws://127.0.0.1:{relay.listeners['gateway'][1]}"
    tmux = Tmux([str(relay_bin()), "chat", "--bell", "--url", url, "--identity", str(tmp_path / "id" / "chat.key")])
    try:
        await asyncio.to_thread(tmux.wait_for, "1 Clawline")
        tmux.keys("/new echo side", "Enter")
        await asyncio.to_thread(tmux.wait_for, "[2:side]")
        assert tmux.bell() == "0", "nothing rang yet"
        await send_and_complete(phone, "news from the phone")
        await asyncio.to_thread(tmux.wait_for, "1 Clawline")
        hot = await asyncio.to_thread(tmux.wait_for, "[2:side] [")  # the hotlist lists buffer 1's activity
        assert tmux.bell() == "1", "--bell rings on activity in another buffer (written before the redraw that shows it)"
        tmux.keys("M-a")
        screen = await asyncio.to_thread(tmux.wait_for, "echo: news from the phone")
        assert screen.splitlines()[0].startswith("Clawline"), f"Alt-A made the phone's buffer active:\n{hot}\n---\n{screen}"
    finally:
        tmux.close()


async def test_reading_on_a_discoclaw_app_clears_the_terminals_unread_count(relay_factory, tmp_path):
    import asyncio
    import discoclaw_client as dc
    cfg = dc.discoclaw_config(user_id="alice")
    cfg["gateway"] = {"listen": "127.0.0.1:0", "user_id": "alice", "auto_approve_loopback": True}
    relay = relay_factory(cfg)
    phone = dc.register(relay)
    tmux = chat_screen(relay, tmp_path)
    try:
        await asyncio.to_thread(tmux.wait_for, "[1:echo]")
        conversation = phone.create_conversation("shared")
        sock = await dc.Socket.connect(relay, phone.token)
        await dc.turn(phone, sock, conversation["id"], "from the phone", dc.new_client_id())
        await asyncio.to_thread(tmux.wait_for, "shared (1)")  # one unread answer, in another buffer
        phone.sync(0)  # the phone's app fetches it: read
        deadline = asyncio.get_running_loop().time() + 10
        while "shared (1)" in tmux.screen():
            assert asyncio.get_running_loop().time() < deadline, f"the unread count stayed:\n{tmux.screen()}"
            await asyncio.sleep(0.1)  # polling the pane: a terminal has no event to await
        assert "shared" in tmux.screen()
    finally:
        tmux.close()


async def test_unread_conversations_at_start_are_in_the_activity_list(relay_factory, tmp_path):
    import asyncio
    from gateway_client import Identity, paired
    cfg = make_config()
    cfg["gateway"] = {"listen": "127.0.0.1:0", "auto_approve_loopback": True}
    relay = relay_factory(cfg)
    other, _ = await paired(relay, Identity())  # another operator device: its answers are unread here
    for key in ("older", "newer"):
        sent = await other.request("chat.send", {"sessionKey": key, "message": f"to {key}", "idempotencyKey": key})
        await other.event("chat", where=lambda p: p.get("state") == "final" and p.get("runId") == sent["payload"]["runId"])
    tmux = chat_screen(relay, tmp_path)
    try:
        screen = await asyncio.to_thread(tmux.wait_for, "older(1)]")
        status = next(line for line in screen.splitlines() if line.startswith("[connected]"))
        assert "[Act:" in status and "newer" not in status.split("[Act:")[1], f"the active buffer is not listed:\n{screen}"
        assert screen.splitlines()[0].startswith("newer"), f"the most recent conversation is open:\n{screen}"
        assert tmux.bell() == "0", "what was there before is not news"
    finally:
        tmux.close()


def test_a_revoked_terminal_says_so_and_stops_retrying(relay_factory, tmp_path):
    cfg = make_config()
    cfg["gateway"] = {"listen": "127.0.0.1:0", "auto_approve_loopback": True}
    relay = relay_factory(cfg)
    tmux = chat_screen(relay, tmp_path)
    try:
        tmux.wait_for("[1:echo]")
        device = next(d["deviceId"] for d in relay.devices() if d["protocol"] == "gateway")
        relay.cli("devices", "revoke", device)
        screen = tmux.wait_for("[refused]")
        # The reason is a line of the conversation, wrapped at the pane's width (the id is long).
        said = "".join(line.split("│", 1)[1] for line in screen.splitlines() if "│" in line).replace(" ", "")
        assert f"thisdevicewasrevoked:runclawrelaydevicesallow{device}ontherelay" in said, screen
        assert "retry in" not in screen, screen
        # It asks no more: the refused connect stays its last one over more than the longest retry step (3 s).
        connects = lambda: len([r for r in relay.audit("--protocol", "gateway") if r.get("opcode") == "open"])
        seen = connects()
        assert seen >= 2, relay.audit("--protocol", "gateway")  # the first connect and the refused one
        deadline = time.monotonic() + 4
        while time.monotonic() < deadline:
            assert connects() == seen, "the terminal connected again after it was refused"
            time.sleep(0.5)
        assert [d["status"] for d in relay.devices() if d["deviceId"] == device] == ["revoked"]
        assert tmux.alive(), "the client stays open to be read and quit"
    finally:
        tmux.close()
