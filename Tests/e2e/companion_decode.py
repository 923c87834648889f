"""What the real Claude Companion iOS app decodes: `decode_problems(frame)` says why it would drop a frame.

Source: dock108/aicli-companion `ios/Sources/AICLICompanion/Message.swift` (the `WebSocketMessage` models)
and `Services/MessageValidator.swift`, as summarised in /tmp/companion-contract.md. `DECODE_PROBLEMS`
collects what every `CompanionClient` socket received; the autouse fixture `app_decodes_every_frame`
(import it into each test module) fails the test when it is not empty.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

import pytest

ISO_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?(Z|[+-]\d{2}:\d{2})$")
ISO_MS_Z_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")  # what docs/companion.md promises


def _str(v): return isinstance(v, str)
def _bool(v): return isinstance(v, bool)
def _int(v): return isinstance(v, int) and not isinstance(v, bool)
def _num(v): return isinstance(v, (int, float)) and not isinstance(v, bool)
def _obj(v): return isinstance(v, dict)
def _strs(v): return isinstance(v, list) and all(isinstance(x, str) for x in v)


def is_iso(v: Any) -> bool:
    if not isinstance(v, str) or not ISO_RE.match(v):
        return False
    try:
        datetime.fromisoformat(v.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


# field name -> (check, required); nested models are checked by name
USAGE = {"input_tokens": (_int, True), "output_tokens": (_int, True), "cache_creation_input_tokens": (_int, False),
         "cache_read_input_tokens": (_int, False), "server_tool_use": (_obj, False), "service_tier": (_str, False)}
AICLI_RESPONSE = {"type": (_str, True), "subtype": (_str, True), "is_error": (_bool, True), "duration_ms": (_num, True),
                  "duration_api_ms": (_num, False), "num_turns": (_int, True), "result": (_str, True),
                  "session_id": (_str, True), "total_cost_usd": (_num, False), "usage": ("usage", False)}
CHUNK = {"id": (_str, True), "type": (_str, True), "content": (_str, True), "isFinal": (_bool, True), "metadata": (_obj, False)}
BLOCK = {"type": (_str, True), "text": (_str, False), "name": (_str, False), "input": (_obj, False), "id": (_str, False)}
SCHEMAS: dict[str, dict] = {
    "welcome": {"clientId": (_str, True), "serverVersion": (_str, True), "claudeCodeVersion": (_str, False),
                "capabilities": (_strs, True), "maxSessions": (_int, True)},
    "askResponse": {"success": (_bool, True), "response": ("aicli", False), "error": (_str, False)},
    "streamStarted": {"sessionId": (_str, True), "sessionName": (_str, False), "workingDirectory": (_str, True)},
    "streamData": {"sessionId": (_str, True), "streamType": (_str, True), "content": (_obj, True), "isComplete": (_bool, True)},
    "streamToolUse": {"sessionId": (_str, True), "toolName": (_str, True), "toolInput": (_obj, True), "status": (_str, True)},
    "permissionRequest": {"sessionId": (_str, True), "prompt": (_str, True), "options": (_strs, True),
                          "defaultOption": (_str, True), "timeout": (_num, True)},
    "streamComplete": {"sessionId": (_str, True), "finalResult": (_str, True), "duration": (_num, True),
                       "cost": (_num, False), "usage": ("usage", False)},
    "error": {"code": (_str, True), "message": (_str, True), "details": (_obj, False)},
    "sessionStatus": {"sessionId": (_str, True), "status": (_str, True), "lastActivity": (is_iso, True),
                      "messageCount": (_int, True), "totalCost": (_num, False)},
    "pong": {"serverTime": (is_iso, True)},
    "claudeResponse": {"content": (_str, True), "success": (_bool, True), "sessionId": (_str, False), "error": (_str, False)},
    "subscribed": {"events": (_strs, True), "sessionIds": (_strs, True), "success": (_bool, True)},
    "systemInit": {"type": (_str, True), "sessionId": (_str, False), "workingDirectory": (_str, False),
                   "availableTools": (_strs, True), "mcpServers": (_strs, True), "model": (_str, False), "timestamp": (is_iso, True)},
    "assistantMessage": {"type": (_str, True), "messageId": (_str, False), "content": ("blocks", True), "model": (_str, False),
                         "usage": ("usage", False), "timestamp": (is_iso, True)},
    "toolUse": {"type": (_str, True), "toolName": (_str, True), "toolInput": (_obj, True), "toolId": (_str, True),
                "timestamp": (is_iso, True)},
    "toolResult": {"type": (_str, True), "toolName": (_str, True), "toolId": (_str, True), "result": (_str, False),
                   "success": (_bool, True), "error": (_str, False), "timestamp": (is_iso, True)},
    "conversationResult": {"type": (_str, True), "success": (_bool, True), "result": (_str, False), "sessionId": (_str, False),
                           "duration": (_num, False), "cost": (_num, False), "usage": ("usage", False), "timestamp": (is_iso, True)},
    "workingDirectorySet": {"workingDirectory": (_str, True), "success": (_bool, True)},
    "progress": {"sessionId": (_str, True), "stage": (_str, True), "progress": (_num, False), "message": (_str, True),
                 "timestamp": (is_iso, True)},
    "streamChunk": {"sessionId": (_str, True), "chunk": ("chunk", True)},
    "deviceRegistered": {"success": (_bool, True), "message": (_str, False)},
    # the real server's reply to `permission`: the app has no decoder for it and ignores it
    "permission": {"success": (_bool, True), "sessionId": (_str, True), "accepted": (_bool, True), "message": (_str, True)},
    # relay extension (docs/companion.md); unknown to the app, which ignores it
    "userMessage": {"sessionId": (_str, True), "messageId": (_str, True), "content": (_str, True), "deviceId": (_str, True),
                    "timestamp": (is_iso, True)},
}
CLIENT_TYPES = {"ask", "streamStart", "streamSend", "streamClose", "ping", "subscribe",
                "setWorkingDirectory", "claudeCommand", "registerDevice"}  # known to the app's enum, no decoder
BROADCASTS = {"welcome", "streamChunk", "assistantMessage", "conversationResult", "userMessage", "systemInit", "toolUse",
              "toolResult", "progress", "streamData", "streamComplete", "streamToolUse", "permissionRequest"}


def _check_fields(obj: Any, schema: dict, where: str, out: list[str]) -> None:
    if not isinstance(obj, dict):
        out.append(f"{where} must be an object, got {obj!r}")
        return
    for key, (check, required) in schema.items():
        value = obj.get(key)
        if value is None:
            if required:
                out.append(f"{where}.{key} is required")
            continue
        if check == "usage":
            _check_fields(value, USAGE, f"{where}.{key}", out)
        elif check == "aicli":
            _check_fields(value, AICLI_RESPONSE, f"{where}.{key}", out)
        elif check == "chunk":
            _check_fields(value, CHUNK, f"{where}.{key}", out)
            if isinstance(value, dict):
                _check_chunk(value, f"{where}.{key}", out)
        elif check == "blocks":
            if not isinstance(value, list) or not value:
                out.append(f"{where}.{key} must be a non-empty array of blocks (the validator drops [])")
            else:
                for i, block in enumerate(value):
                    _check_fields(block, BLOCK, f"{where}.{key}[{i}]", out)
        elif not check(value):
            out.append(f"{where}.{key} has the wrong type: {value!r}")


def _check_chunk(chunk: dict, where: str, out: list[str]) -> None:
    meta = chunk.get("metadata")
    if isinstance(meta, dict):
        for key, check in (("language", _str), ("level", _int), ("toolName", _str)):
            if meta.get(key) is not None and not check(meta[key]):
                out.append(f"{where}.metadata.{key} has the wrong type: {meta[key]!r}")
    for key in ("language", "level", "toolName"):
        if key in chunk:
            out.append(f"{where}.{key} is top-level; the app reads it only under chunk.metadata")
    kind, content = chunk.get("type"), chunk.get("content")
    if kind in ("text", "content") and isinstance(content, str) and not content.strip():
        out.append(f"{where}: a whitespace-only {kind} chunk is dropped by the app's validator")
    if kind in ("code", "header", "section", "list", "tool_result") and content == "":
        out.append(f"{where}: an empty {kind} chunk is dropped by the app's validator")
    if kind == "tool_use" and not (isinstance(meta, dict) and meta.get("toolName")):
        out.append(f"{where}: a tool_use chunk without metadata.toolName is dropped by the app's validator")


def decode_problems(frame: Any) -> list[str]:
    """Why the real app would drop this server frame (empty list: it decodes and validates)."""
    out: list[str] = []
    if not isinstance(frame, dict):
        return [f"frame is not a JSON object: {frame!r}"]
    kind = frame.get("type")
    if not isinstance(kind, str):
        return [f"type must be a string: {frame!r}"]
    if not is_iso(frame.get("timestamp")):
        out.append(f"timestamp must be an ISO 8601 string (Z or +hh:mm, <= 3 fractional digits): {frame.get('timestamp')!r}")
    if "requestId" not in frame:
        out.append("requestId must be present (a string on replies, null otherwise)")
    elif frame["requestId"] is not None and not isinstance(frame["requestId"], str):
        out.append(f"requestId must be a string or null: {frame['requestId']!r}")
    elif kind in BROADCASTS and frame["requestId"] is not None:
        out.append(f"a {kind} is a broadcast and must carry requestId null")
    if not isinstance(frame.get("data"), dict):
        out.append("data must be an object (a missing data key makes every payload fail)")
    elif kind in CLIENT_TYPES:
        out.append(f"{kind} is a client type: the app has no decoder for it (use the reply type names)")
    elif kind not in SCHEMAS:
        out.append(f"{kind} is unknown to the app (dropped silently)")
    else:
        _check_fields(frame["data"], SCHEMAS[kind], "data", out)
        if kind == "error" and frame["data"].get("message") == "":
            out.append("data.message must not be empty (the validator drops the frame)")
        if kind == "claudeResponse" and frame["data"].get("success") is False and not frame["data"].get("error"):
            out.append("a failed claudeResponse carries a non-empty error (the app shows it)")
        if kind == "toolResult" and frame["data"].get("result") is None and frame["data"].get("error") is None:
            out.append("a toolResult carries result or error (MessageValidator drops it otherwise)")
        if kind == "permission" and not isinstance(frame.get("requestId"), str):
            out.append("permission is only the reply to the app's permission")
    if any(k in frame for k in ("_queued", "_queuedAt", "_originalTimestamp")):
        if frame.get("_queued") is not True or not is_iso(frame.get("_queuedAt")) or not is_iso(frame.get("_originalTimestamp")):
            out.append("a queued frame carries _queued:true, _queuedAt and _originalTimestamp as ISO 8601 strings")
    return [f"{kind}: {p}" for p in out]


DECODE_PROBLEMS: list[str] = []


@pytest.fixture(autouse=True)
def app_decodes_every_frame():
    """Fails the test if any frame any CompanionClient received would not decode in the app."""
    DECODE_PROBLEMS.clear()
    yield
    problems, DECODE_PROBLEMS[:] = list(DECODE_PROBLEMS), []
    if problems:
        pytest.fail("frames the real app would drop:\n" + "\n".join(problems[:40]), pytrace=False)
