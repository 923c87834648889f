"""`chat.send` attachments from the OpenClaw apps reach the backend (issue 27, item 4): the composer's
`attachments: [{type: "image", mimeType, fileName, content: <base64>}]` (OpenClawKit's
`OpenClawChatAttachmentPayload`), bounded by `hello-ok.policy.attachments {maxBytes, maxImageBytes}`;
the real Claude Code CLI gets them as image content blocks of its user message (seen in the request
the fake Messages API receives), a command backend as files in `$CLAWRELAY_ATTACHMENTS`, echo as
a line per attachment; a Clawline device of the same user sees the image in the message."""
import base64
import hashlib

import pytest

import fake_anthropic as fa
from claude_cli import anthropic, claude_backend, claude_cli  # noqa: F401  (fixtures)
from conftest import auth, make_config, relay_of_one_user
from gateway_client import Identity, paired

# A 1×1 PNG.
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")


def image(name="photo.png", data=PNG, mime="image/png") -> dict:
    return {"type": "image", "mimeType": mime, "fileName": name, "content": base64.b64encode(data).decode()}


async def final_text(client, run_id: str, timeout=10) -> str:
    frame = await client.event("chat", timeout=timeout, where=lambda p: p.get("runId") == run_id and p.get("state") in ("final", "error"))
    assert frame["payload"]["state"] == "final", frame
    return "".join(b["text"] for b in frame["payload"]["message"]["content"])


async def test_images_reach_echo_and_clawline_devices_and_the_policy_says_the_limits(relay_factory):
    cfg = make_config()
    cfg["gateway"] = {"listen": "127.0.0.1:0"}
    relay, admin = await relay_of_one_user(relay_factory, cfg)
    operator, hello = await paired(relay, Identity())
    assert hello["payload"]["policy"]["attachments"] == {"maxBytes": 8 << 20, "maxImageBytes": 4 << 20}, hello["payload"]["policy"]
    phone, _ = await auth(relay, admin)

    res = await operator.request("chat.send", {"sessionKey": "main", "message": "look", "idempotencyKey": "img-1",
                                               "attachments": [image(), image("second.jpg", b"\xff\xd8\xff" + b"j" * 64, "image/jpeg")]})
    assert res["ok"] and res["payload"]["status"] == "started", res
    assert await final_text(operator, "img-1") == "echo: look\n[attached: photo.png, image/png]\n[attached: second.jpg, image/jpeg]"
    # The Clawline app shows the picture in the user's message (strict base64, as it decodes `data`).
    user, _ = await phone.recv_until(lambda f: f.get("type") == "message" and f.get("role") == "user" and f.get("content") == "look")
    shown = user["attachments"]
    assert [a["type"] for a in shown] == ["image", "image"] and base64.b64decode(shown[0]["data"]) == PNG, shown
    assert shown[0]["mimeType"] == "image/png", shown

    # A retry with the same key and attachments is the same run; other attachments under it are refused.
    again = await operator.request("chat.send", {"sessionKey": "main", "message": "look", "idempotencyKey": "img-1",
                                                 "attachments": [image(), image("second.jpg", b"\xff\xd8\xff" + b"j" * 64, "image/jpeg")]})
    assert again["ok"] and again["payload"]["status"] == "ok", again
    other = await operator.request("chat.send", {"sessionKey": "main", "message": "look", "idempotencyKey": "img-1",
                                                 "attachments": [image()]})
    assert other["ok"] is False and "idempotencyKey" in other["error"]["message"], other


@pytest.mark.parametrize("attachments, says", [
    ([{"type": "file", "mimeType": "application/pdf", "content": "AAAA"}], "only images"),
    ([image(mime="image/tiff")], "mimeType must be one of"),
    ([{"type": "image", "mimeType": "image/png", "content": "%%%"}], "non-empty base64"),
    ([image(data=b"x" * ((4 << 20) + 1))], "larger than 4 MiB"),
    ([image(data=b"x" * (3 << 20))] * 3, "larger than 8 MiB in all"),
    ([image()] * 9, "at most 8 attachments"),
    (["not an object"], "must be an object"),
])
async def test_bad_attachments_are_refused_and_nothing_runs(relay_factory, attachments, says):
    cfg = make_config()
    cfg["gateway"] = {"listen": "127.0.0.1:0"}
    relay = relay_factory(cfg)
    operator, _ = await paired(relay, Identity())
    res = await operator.request("chat.send", {"sessionKey": "main", "message": "x", "idempotencyKey": "bad",
                                               "attachments": attachments}, timeout=20)
    assert res["ok"] is False and res["error"]["code"] == "INVALID_REQUEST" and says in res["error"]["message"], res
    history = await operator.request("chat.history", {"sessionKey": "main"})
    assert history["payload"]["messages"] == [], history


async def test_a_command_backend_gets_the_files_in_a_private_directory_removed_afterwards(relay_factory, tmp_path):
    cfg = make_config()
    cfg["gateway"] = {"listen": "127.0.0.1:0", "backend": "files"}
    # Lists each file with its size, mode and digest, and where the directory was.
    script = ('cat >/dev/null; echo "dir=$CLAWRELAY_ATTACHMENTS"; stat -c "%a" "$CLAWRELAY_ATTACHMENTS"; '
              'cd "$CLAWRELAY_ATTACHMENTS" && for f in *; do echo "$f $(stat -c %a "$f") $(sha256sum < "$f" | cut -c1-16)"; done')
    cfg["backends"].append({"name": "files", "kind": "command", "command": ["/bin/sh", "-c", script], "timeout_seconds": 30})
    relay = relay_factory(cfg)
    operator, _ = await paired(relay, Identity())
    res = await operator.request("chat.send", {"sessionKey": "main", "message": "files", "idempotencyKey": "f-1",
                                               "attachments": [image("../../etc/passwd"), image(".hidden.png")]})
    assert res["ok"], res
    lines = (await final_text(operator, "f-1")).splitlines()
    digest = hashlib.sha256(PNG).hexdigest()[:16]
    assert lines[1:] == ["700", f"1-passwd 600 {digest}", f"2-hidden.png 600 {digest}"], lines
    directory = lines[0].removeprefix("dir=")
    assert directory and not __import__("os").path.exists(directory), directory


@pytest.fixture
def claude_relay(relay_factory, tmp_path, claude_cli, anthropic):
    (tmp_path / "work").mkdir()
    cfg = make_config()
    cfg["backends"].append(claude_backend(claude_cli, anthropic, tmp_path / "home", working_directory=str(tmp_path / "work")))
    cfg["gateway"] = {"listen": "127.0.0.1:0", "backend": "claude"}
    return relay_factory(cfg)


async def test_claude_code_gets_images_as_content_blocks(claude_relay, anthropic):
    operator, _ = await paired(claude_relay, Identity())
    anthropic.script(fa.text("a red pixel"))
    res = await operator.request("chat.send", {"sessionKey": "main", "message": "what is this?", "idempotencyKey": "cc-1",
                                               "attachments": [image()]})
    assert res["ok"], res
    assert await final_text(operator, "cc-1", timeout=60) == "a red pixel"
    content = fa.last_user_content(anthropic.turn_requests[-1])
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
    images = [b for b in blocks if b.get("type") == "image"]
    assert len(images) == 1, blocks
    assert images[0]["source"] == {"type": "base64", "media_type": "image/png", "data": base64.b64encode(PNG).decode()}, images
    assert any(b.get("type") == "text" and "what is this?" in b.get("text", "") for b in blocks), blocks
