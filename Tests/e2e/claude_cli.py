"""The real Claude Code CLI in the e2e suite: where it is, the relay config that runs it against the
scripted fake Messages API (fake_anthropic.py), and helpers for what Claude Code does.

`pip install claude-agent-sdk` (Tests/e2e/requirements.txt) ships the CLI as
`claude_agent_sdk/_bundled/claude`. A suite that cannot find it fails; it never skips.

    from claude_cli import anthropic, claude_cli  # noqa: F401  (fixtures)
"""

from __future__ import annotations

import os
import re
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

import fake_anthropic
from conftest import Client, is_assistant_final, message_frame
from fake_anthropic import FakeAnthropic

NOTE_RE = re.compile(r"Claude Code wants to (?:run|use) (\w+)(?:: `(.*)`)?\. Reply /approve (\w+)", re.S)


def bundled_cli() -> str:
    try:
        import claude_agent_sdk
    except ImportError as exc:  # the suite must not pass without the real CLI
        pytest.fail(f"claude-agent-sdk is not installed ({exc}); pip install -r Tests/e2e/requirements.txt")
    path = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
    if not (path.is_file() and os.access(path, os.X_OK)):
        pytest.fail(f"claude-agent-sdk has no bundled Claude Code CLI at {path}")
    return str(path)


@pytest.fixture(scope="session")
def claude_cli() -> str:
    return bundled_cli()


@pytest.fixture
def anthropic():
    api = FakeAnthropic()
    yield api
    api.close()


def claude_backend(cli: str, api: FakeAnthropic, home: Path, name: str = "claude", **keys: Any) -> dict:
    """A `[[backends]] kind = "claude-code"` entry running the real CLI against `api`, with `home`
    as its HOME (its sessions live there). Retries are few, so API errors end quickly."""
    home.mkdir(parents=True, exist_ok=True)
    env = {**api.env(str(home)), "CLAUDE_CODE_MAX_RETRIES": "2"}
    env.update(keys.pop("env", {}))
    return {"name": name, "kind": "claude-code", "command": [cli], "timeout_seconds": 60, "env": env, **keys}


def sessions_in(home: Path) -> list[Path]:
    """The session transcripts Claude Code wrote under `home`."""
    return sorted((home / ".claude" / "projects").glob("*/*.jsonl"))


def is_note(f: dict) -> bool:
    """An approval note as Clawline shows it (an assistant message, not the run's answer)."""
    return f.get("type") == "message" and f.get("role") == "assistant" and f.get("streaming") is False \
        and NOTE_RE.search(f.get("content", "")) is not None


def note_of(f: dict) -> tuple[str, str | None, str]:
    """(tool, summary, short id) of an approval note."""
    match = NOTE_RE.search(f["content"])
    assert match, f
    return match.group(1), match.group(2), match.group(3)


async def approval_note(client: Client, timeout: float = 30.0) -> tuple[str, str | None, str]:
    frame, _ = await client.recv_until(is_note, timeout)
    return note_of(frame)


async def ask(client: Client, text: str, answer: str, timeout: float = 30.0) -> dict:
    """Sends `text`; returns the final answer frame (which must read `answer`)."""
    await client.send_json(message_frame(text))
    final, _ = await client.recv_until(is_assistant_final(answer), timeout)
    return final


def hold_command(tmp: Path) -> tuple[str, str]:
    """A Bash command that prints a line and then runs until killed, and what finds its process."""
    target = tmp / f"hold-{uuid.uuid4().hex}"
    target.write_text("")
    return f"echo holding && tail -f {target}", str(target)


def processes_with(text: str) -> list[int]:
    """Live processes whose command line contains `text` (zombies excluded)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        if text in cmdline and stat[stat.rindex(")") + 2] != "Z":
            found.append(int(entry))
    return found


def wait_gone(text: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while pids := processes_with(text):
        assert time.monotonic() < deadline, f"still running after {timeout}s: {pids} ({text})"
        time.sleep(0.05)


def wait_running(text: str, timeout: float = 30.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while not (pids := processes_with(text)):
        assert time.monotonic() < deadline, f"nothing runs {text} after {timeout}s"
        time.sleep(0.05)
    return pids


__all__ = ["anthropic", "claude_cli", "fake_anthropic"]
