"""The app-schema tier itself: frames the Clawline app would drop must fail it."""

from __future__ import annotations

import pytest

from clawline_app_schema import AppWouldDrop, check

GOOD = {"type": "message", "id": "s_1", "role": "user", "content": "hi", "timestamp": 1, "streaming": False,
        "deviceId": "d", "attachments": [{"id": "s_1-0", "type": "image", "mimeType": "image/png", "data": "AAECAw=="}],
        "channelType": "personal"}


def with_(base: dict, **changes) -> dict:
    frame = dict(base)
    for key, value in changes.items():
        if value is KeyError:
            frame.pop(key, None)
        else:
            frame[key] = value
    return frame


def test_a_frame_the_app_decodes_passes():
    check(GOOD)
    check({"type": "user_info", "userId": "u", "isAdmin": False})
    check({"type": "auth_result", "success": True, "reason": None, "extra": 1})


@pytest.mark.parametrize("frame", [
    with_(GOOD, channelType=KeyError),
    with_(GOOD, channelType="team"),
    with_(GOOD, role="system"),
    with_(GOOD, streaming=0),
    with_(GOOD, timestamp="1"),
    with_(GOOD, content=None),
    with_(GOOD, attachments=[{"type": "image", "data": "AAECAw=="}]),
    with_(GOOD, attachments=[{"id": "x", "type": "url"}]),
    with_(GOOD, attachments=[{"id": "x", "type": "image", "data": "AAECAw"}]),
    with_(GOOD, attachments=[{"id": "x", "type": "image", "data": "AAEC Aw=="}]),
    {"type": "user_info", "userId": "u", "isAdmin": 1},
    {"type": "ack"},
    {"type": "error", "message": "no code"},
    {"type": "session_info"},
    {"kind": "message"},
])
def test_a_frame_the_app_would_drop_fails(frame):
    with pytest.raises(AppWouldDrop):
        check(frame)
