"""A minimal OpenClaw gateway client for the tests: Ed25519 identity, signed connect (v3 or v2 payload),
req/res, text or binary frames (today's OpenClawKit sends binary frames and signs v2)."""
import asyncio
import base64
import hashlib
import itertools
import json
import time
import uuid

import websockets
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class Identity:
    def __init__(self):
        self.key = Ed25519PrivateKey.generate()
        self.raw = self.key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        self.device_id = hashlib.sha256(self.raw).hexdigest()
        self.token = ""

    def sign(self, text: str) -> str:
        return b64url(self.key.sign(text.encode()))


def v3_payload(device_id, client_id, mode, role, scopes, signed_at, token, nonce, platform, family):
    return "|".join(["v3", device_id, client_id, mode, role, ",".join(scopes), str(signed_at), token, nonce,
                     platform.strip().lower(), family.strip().lower()])


def v2_payload(device_id, client_id, mode, role, scopes, signed_at, token, nonce):
    return "|".join(["v2", device_id, client_id, mode, role, ",".join(scopes), str(signed_at), token, nonce])


# How today's clients identify themselves (OpenClawKit's GatewayChannel, the CLI): protocol range,
# client id and mode, signature payload version, frame kind.
OPENCLAWKIT_IOS = {"protocol": (4, 4), "client_id": "openclaw-ios", "mode": "ui", "sign": "v2", "binary": True,
                   "platform": "iOS 18.4.0", "family": "iPhone"}
OPENCLAW_CLI = {"protocol": (4, 4), "client_id": "cli", "mode": "cli", "sign": "v3", "binary": False}


class GatewayClient:
    def __init__(self, ws, binary=False):
        self.ws = ws
        self.binary = binary
        self.ids = itertools.count(1)
        self.events: list[dict] = []
        self.seen: list[dict] = []  # every frame received, in order (events are taken out of `events`)
        self.challenge: dict | None = None

    @classmethod
    async def open(cls, port: int, binary=False) -> "GatewayClient":
        ws = await websockets.connect(f"ws://127.0.0.1:{port}/", max_size=None)
        client = cls(ws, binary)
        client.challenge = await client.recv(5)
        assert client.challenge["type"] == "event" and client.challenge["event"] == "connect.challenge", client.challenge
        return client

    async def recv(self, timeout=5.0) -> dict:
        frame = json.loads(await asyncio.wait_for(self.ws.recv(), timeout))
        self.seen.append(frame)
        return frame

    async def send(self, frame: dict):
        text = json.dumps(frame)
        await self.ws.send(text.encode() if self.binary else text)

    async def request(self, method: str, params: dict | None = None, timeout=5.0) -> dict:
        rid = str(next(self.ids))
        await self.send({"type": "req", "id": rid, "method": method, "params": params or {}})
        deadline = time.monotonic() + timeout
        while True:
            frame = await self.recv(max(0.05, deadline - time.monotonic()))
            if frame.get("type") == "res" and frame.get("id") == rid:
                return frame
            self.events.append(frame)

    async def event(self, name: str, timeout=5.0, where=lambda p: True) -> dict:
        for i, frame in enumerate(self.events):
            if frame.get("event") == name and where(frame.get("payload", {})):
                return self.events.pop(i)
        deadline = time.monotonic() + timeout
        while True:
            frame = await self.recv(max(0.05, deadline - time.monotonic()))
            if frame.get("type") == "event" and frame.get("event") == name and where(frame.get("payload", {})):
                return frame
            self.events.append(frame)

    def connect_params(self, identity: Identity, role="operator", scopes=("operator.admin",), mode="cli", nonce=None,
                       signed_at=None, token=None, commands=(), platform="linux", family="", tamper=None, protocol=(3, 3),
                       client_id="test-client", sign="v3", auth=None, binary=None, caps=None):
        nonce = nonce if nonce is not None else self.challenge["payload"]["nonce"]
        signed_at = signed_at if signed_at is not None else int(time.time() * 1000)
        token = identity.token if token is None else token
        if auth is None:
            auth = {"token": token} if token else {}
        signed_token = auth.get("token") or auth.get("deviceToken") or auth.get("bootstrapToken") or ""
        if sign == "v2":
            payload = v2_payload(identity.device_id, client_id, mode, role, list(scopes), signed_at, signed_token, nonce)
        else:
            payload = v3_payload(identity.device_id, client_id, mode, role, list(scopes), signed_at, signed_token, nonce, platform, family)
        params = {
            "minProtocol": protocol[0], "maxProtocol": protocol[1],
            "client": {"id": client_id, "version": "1.0", "platform": platform, "mode": mode, "deviceFamily": family},
            "role": role, "scopes": list(scopes), "commands": list(commands), "caps": list(caps) if caps is not None else ["camera"] if role == "node" else [],
            "auth": auth,
            "device": {"id": identity.device_id, "publicKey": b64url(identity.raw), "signature": identity.sign(payload),
                       "signedAt": signed_at, "nonce": nonce},
        }
        if tamper:
            tamper(params)
        return params

    async def connect(self, identity: Identity, **kwargs) -> dict:
        if kwargs.get("binary") is not None:
            self.binary = kwargs["binary"]
        return await self.request("connect", self.connect_params(identity, **kwargs))

    async def expect_close(self, timeout=5.0) -> int:
        try:
            while True:
                self.events.append(await self.recv(timeout))
        except websockets.ConnectionClosed as closed:
            return closed.rcvd.code if closed.rcvd else None

    async def close(self):
        await self.ws.close()


async def paired(relay, identity: Identity, **kwargs) -> tuple[GatewayClient, dict]:
    """Connect; if pairing is required, approve through the CLI and connect again."""
    port = relay.listeners["gateway"][1]
    client = await GatewayClient.open(port)
    res = await client.connect(identity, **kwargs)
    if res["ok"]:
        return client, res
    assert res["error"]["code"] == "NOT_PAIRED", res
    await client.close()
    await asyncio.to_thread(relay.cli, "devices", "approve", identity.device_id)
    client = await GatewayClient.open(port)
    res = await client.connect(identity, **kwargs)
    assert res["ok"], res
    identity.token = res["payload"]["auth"].get("deviceToken", identity.token)
    return client, res
