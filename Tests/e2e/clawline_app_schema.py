"""What the Clawline iOS app decodes, as strict checks on every server frame.

Written from the app's own Codable models at clickety-clacks/clawline 09beb34
(`Models/ProviderWireModels.swift`, `Models/Attachment.swift`, `Models/Message.swift`,
`Services/ProviderChatService.swift`, `Services/ProviderConnectionService.swift`). The app
decodes each frame all-or-nothing with `try?` and silently drops a frame that does not decode,
so a frame that fails here is a frame the app would lose. `Client.recv_json` runs `check` on
every frame, which puts every Clawline test in this tier.

Swift's JSONDecoder is strict where Python is not: a Bool must be a JSON boolean, a required
String must be a string (never null), an enum must hold one of its cases, and `Data` must be
standard, padded base64 without whitespace.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any, Callable

ROLES = {"user", "assistant"}
ATTACHMENT_TYPES = {"image", "asset", "document"}
CHANNELS = {"personal", "admin"}
_BASE64 = re.compile(r"^[A-Za-z0-9+/]*={0,2}$")


class AppWouldDrop(AssertionError):
    """The Clawline app would fail to decode this frame."""


def _fail(frame: dict, why: str) -> None:
    raise AppWouldDrop(f"the Clawline app would drop this frame ({why}): {str(frame)[:400]}")


def _string(frame: dict, obj: dict, key: str, required: bool = True) -> None:
    value = obj.get(key)
    if value is None:
        if required:
            _fail(frame, f"{key} must be a string")
        return
    if not isinstance(value, str):
        _fail(frame, f"{key} must be a string, got {type(value).__name__}")


def _bool(frame: dict, obj: dict, key: str) -> None:
    if not isinstance(obj.get(key), bool):
        _fail(frame, f"{key} must be a JSON boolean")


def _number(frame: dict, obj: dict, key: str) -> None:
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        _fail(frame, f"{key} must be a number")


def _enum(frame: dict, obj: dict, key: str, cases: set[str]) -> None:
    if obj.get(key) not in cases:
        _fail(frame, f"{key} must be one of {sorted(cases)}, got {obj.get(key)!r}")


def _foundation_data(frame: dict, value: Any) -> None:
    if not isinstance(value, str) or len(value) % 4 != 0 or not _BASE64.match(value):
        _fail(frame, "attachment data must be padded standard base64 without whitespace")
    try:
        base64.b64decode(value, validate=True)
    except binascii.Error:
        _fail(frame, "attachment data is not base64")


def _attachment(frame: dict, item: Any) -> None:
    if not isinstance(item, dict):
        _fail(frame, "each attachment must be an object")
    _string(frame, item, "id")
    _enum(frame, item, "type", ATTACHMENT_TYPES)
    _string(frame, item, "mimeType", required=False)
    _string(frame, item, "assetId", required=False)
    if item.get("data") is not None:
        _foundation_data(frame, item["data"])


def _message(frame: dict) -> None:
    """`ServerMessagePayload`: every field required but deviceId and attachments; channelType
    falls back to personal in the app, but the relay's contract is to always name it."""
    _string(frame, frame, "id")
    _enum(frame, frame, "role", ROLES)
    _string(frame, frame, "content")
    _number(frame, frame, "timestamp")
    _bool(frame, frame, "streaming")
    _string(frame, frame, "deviceId", required=False)
    attachments = frame.get("attachments")
    if attachments is not None:
        if not isinstance(attachments, list):
            _fail(frame, "attachments must be an array")
        for item in attachments:
            _attachment(frame, item)
    _enum(frame, frame, "channelType", CHANNELS)


def _auth_result(frame: dict) -> None:
    _bool(frame, frame, "success")
    _string(frame, frame, "reason", required=False)


def _ack(frame: dict) -> None:
    _string(frame, frame, "id")


def _error(frame: dict) -> None:
    _string(frame, frame, "code")
    _string(frame, frame, "message", required=False)
    _string(frame, frame, "messageId", required=False)


def _user_info(frame: dict) -> None:
    _string(frame, frame, "userId")
    _bool(frame, frame, "isAdmin")


def _pair_result(frame: dict) -> None:
    """`PairResultPayload` (the pairing socket decodes every frame with it)."""
    _bool(frame, frame, "success")
    for key in ("token", "userId", "reason"):
        _string(frame, frame, key, required=False)


def _typing(frame: dict) -> None:
    """Ignored by the app at 09beb34; the relay still names the role and the channel."""
    _enum(frame, frame, "role", {"assistant"})
    _bool(frame, frame, "active")
    _enum(frame, frame, "channelType", CHANNELS)


def _pair_approval_request(frame: dict) -> None:
    """Ignored by the app at 09beb34 (admins approve from the CLI)."""
    _string(frame, frame, "deviceId")


CHECKS: dict[str, Callable[[dict], None]] = {
    "message": _message,
    "auth_result": _auth_result,
    "ack": _ack,
    "error": _error,
    "user_info": _user_info,
    "pair_result": _pair_result,
    "typing": _typing,
    "pair_approval_request": _pair_approval_request,
}


def check(frame: Any) -> None:
    """Raise `AppWouldDrop` unless the app decodes `frame` (every frame type the relay sends
    has a schema here: a new one must be added before it can be sent)."""
    if not isinstance(frame, dict):
        raise AppWouldDrop(f"a server frame must be a JSON object: {str(frame)[:200]}")
    kind = frame.get("type")
    if not isinstance(kind, str):
        _fail(frame, "type must be a string")
    if kind not in CHECKS:
        _fail(frame, f"no schema for server frame type {kind!r}")
    CHECKS[kind](frame)
