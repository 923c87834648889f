"""What OpenClawKit's chat models require of the session payloads, written from their decoders
(`apps/shared/OpenClawKit/Sources/OpenClawChatUI/`, read from openclaw/openclaw): a function per
payload returns the problems a real client would hit decoding it (empty = it decodes).

- `OpenClawChatSessionEntry` (ChatSessions.swift): `key` is a required String, every other field
  optional but typed (Swift's synthesized Codable fails the whole row on a wrong type, and a
  `sessions.changed` with an undecodable `session` is dropped). `fastMode` is
  `OpenClawChatFastMode`: a Bool or the string "auto".
- `OpenClawChatSessionsChangedEvent` (ChatTransport.swift): `reason` a required String in the
  builds before the presence flags (the newest defaults it to ""), `sessionKey` a String, `session`
  a row as above.
- `OpenClawChatCreateSessionResponse` (ChatModels.swift): `key` a required String, `ok` and
  `sessionId` optional.
- `OpenClawChatModelPatchResult` (ChatSessions.swift), what `sessions.patch` answers decode to:
  `entry` a required object (its `modelProvider`/`model` Strings), `resolved` optional with
  `modelProvider`, `model`, `thinkingLevel`, `verboseLevel` Strings and `fastMode` as above.
"""

from __future__ import annotations

from typing import Any

ENTRY_STRINGS = ("kind", "displayName", "derivedTitle", "label", "category", "surface", "subject", "room", "space", "sessionId",
                 "thinkingLevel", "verboseLevel", "modelProvider", "model", "status", "lastRunError", "agentId", "parentSessionKey")
ENTRY_BOOLS = ("pinned", "archived", "unread", "systemSent", "abortedLastRun", "hasActiveRun", "isMain", "totalTokensFresh")
ENTRY_NUMBERS = ("updatedAt", "pinnedAt", "archivedAt", "lastReadAt", "inputTokens", "outputTokens", "totalTokens", "contextTokens")


def _typed(value: Any, kind: type | tuple) -> bool:
    if value is None:
        return True
    if kind is bool:
        return isinstance(value, bool)
    return isinstance(value, kind) and not isinstance(value, bool)


def fast_mode_problems(value: Any, where: str) -> list[str]:
    if value is None or isinstance(value, bool) or (isinstance(value, str) and value.lower() == "auto"):
        return []
    return [f"{where}: fastMode {value!r} is neither a Bool nor \"auto\""]


def entry_problems(row: Any, where: str = "session") -> list[str]:
    if not isinstance(row, dict):
        return [f"{where} is not an object: {row!r}"]
    problems = [] if isinstance(row.get("key"), str) else [f"{where}.key must be a String: {row.get('key')!r}"]
    for name in ENTRY_STRINGS:
        if not _typed(row.get(name), str):
            problems.append(f"{where}.{name} must be a String: {row[name]!r}")
    for name in ENTRY_BOOLS:
        if not _typed(row.get(name), bool):
            problems.append(f"{where}.{name} must be a Bool: {row[name]!r}")
    for name in ENTRY_NUMBERS:
        if not _typed(row.get(name), (int, float)):
            problems.append(f"{where}.{name} must be a number: {row[name]!r}")
    return problems + fast_mode_problems(row.get("fastMode"), where)


def sessions_changed_problems(payload: Any) -> list[str]:
    if not isinstance(payload, dict):
        return [f"sessions.changed payload is not an object: {payload!r}"]
    problems = []
    if not isinstance(payload.get("reason"), str):
        problems.append(f"reason must be a String (OpenClawChatSessionsChangedEvent requires it): {payload.get('reason')!r}")
    if not isinstance(payload.get("sessionKey"), str):
        problems.append(f"sessionKey must be a String: {payload.get('sessionKey')!r}")
    if payload.get("session") is not None:
        problems += entry_problems(payload["session"])
        if payload["session"].get("key") != payload.get("sessionKey"):
            problems.append(f"session.key {payload['session'].get('key')!r} is not sessionKey {payload.get('sessionKey')!r}")
    return problems


def patch_result_problems(payload: Any) -> list[str]:
    if not isinstance(payload, dict):
        return [f"sessions.patch payload is not an object: {payload!r}"]
    problems = [] if payload.get("ok") is True else [f"ok must be true: {payload.get('ok')!r}"]
    problems += entry_problems(payload.get("entry"), "entry")
    resolved = payload.get("resolved")
    if resolved is not None:
        if not isinstance(resolved, dict):
            return problems + [f"resolved is not an object: {resolved!r}"]
        for name in ("modelProvider", "model", "thinkingLevel", "verboseLevel"):
            if not _typed(resolved.get(name), str):
                problems.append(f"resolved.{name} must be a String: {resolved[name]!r}")
        problems += fast_mode_problems(resolved.get("fastMode"), "resolved")
    return problems


def create_result_problems(payload: Any) -> list[str]:
    """`OpenClawChatCreateSessionResponse`: `key` a required String, `ok` a Bool, `sessionId` a String."""
    if not isinstance(payload, dict):
        return [f"sessions.create payload is not an object: {payload!r}"]
    problems = [] if isinstance(payload.get("key"), str) else [f"key must be a String: {payload.get('key')!r}"]
    if not _typed(payload.get("ok"), bool):
        problems.append(f"ok must be a Bool: {payload['ok']!r}")
    if not _typed(payload.get("sessionId"), str):
        problems.append(f"sessionId must be a String: {payload['sessionId']!r}")
    return problems


def changed(key: str, reason: str | None = None, **fields):
    """A `sessions.changed` payload predicate: this session key (and reason, and these row field
    values); a payload it matches must decode as OpenClawKit decodes it."""
    def match(payload: dict) -> bool:
        row = payload.get("session") or {}
        hit = payload.get("sessionKey") == key and (reason is None or payload.get("reason") == reason) and all(
            row.get(k) == v for k, v in fields.items())
        if hit:
            assert not sessions_changed_problems(payload), (sessions_changed_problems(payload), payload)
        return hit
    return match
