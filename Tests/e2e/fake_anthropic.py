"""A scripted fake of Anthropic's Messages API for the real Claude Code CLI, on 127.0.0.1 port 0.

Claude Code (with CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1) calls only `POST /v1/messages?beta=true`
with `stream: true`; this server answers with the SSE events the real API sends. Each request is
answered by the first script entry that accepts it (entries are used once, in order), else by the
default: "claude: <the last user text>", or, after a tool ran, "tool said: <its result>".

    api = FakeAnthropic()            # or the `fake_anthropic` pytest fixture
    api.script(tool_use("Bash", {"command": "touch x"}), text("done"))
    api.script(error(529), error(529), text("after the retries"))
    api.requests                     # every request body it got, in order
    api.env(home)                    # the environment Claude Code needs to call it

A response can stream slowly (`delay` between events) or wait for a `threading.Event` before it
starts (`gate`), so a test can hold Claude Code inside a turn.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

MODEL = "claude-fake-1"


@dataclass
class Response:
    """One answer: SSE `events`, or an HTTP error `status` with the API's error JSON."""

    events: list[tuple[str, dict]] = field(default_factory=list)
    status: int = 200
    error_body: dict | None = None
    delay: float = 0.0
    gate: threading.Event | None = None
    # Which requests it may answer (default: a turn's request, i.e. one that has tools).
    accepts: Callable[[dict], bool] | None = None


def _message_start(message_id: str, model: str) -> tuple[str, dict]:
    return ("message_start", {"type": "message_start", "message": {
        "id": message_id, "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 12, "output_tokens": 1, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}}})


def _message_end(stop_reason: str) -> list[tuple[str, dict]]:
    return [("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                               "usage": {"output_tokens": 7}}),
            ("message_stop", {"type": "message_stop"})]


def _text_block(index: int, body: str, pieces: int) -> list[tuple[str, dict]]:
    size = max(1, -(-len(body) // max(1, pieces)))
    parts = [body[i:i + size] for i in range(0, len(body), size)] or [""]
    events = [("content_block_start", {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})]
    events += [("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": p}})
               for p in parts]
    events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    return events


def _tool_block(index: int, name: str, tool_input: dict, tool_id: str) -> list[tuple[str, dict]]:
    return [("content_block_start", {"type": "content_block_start", "index": index,
                                     "content_block": {"type": "tool_use", "id": tool_id, "name": name, "input": {}}}),
            ("content_block_delta", {"type": "content_block_delta", "index": index,
                                     "delta": {"type": "input_json_delta", "partial_json": json.dumps(tool_input)}}),
            ("content_block_stop", {"type": "content_block_stop", "index": index})]


_ids = iter(range(1, 1 << 30))


def text(body: str, pieces: int = 3, delay: float = 0.0, gate: threading.Event | None = None, **kw) -> Response:
    """An answer in text, streamed in `pieces` deltas, `delay` seconds apart."""
    events = [_message_start(f"msg_{next(_ids)}", MODEL)] + _text_block(0, body, pieces) + _message_end("end_turn")
    return Response(events=events, delay=delay, gate=gate, **kw)


def tool_use(name: str, tool_input: dict, tool_id: str | None = None, preface: str | None = None, **kw) -> Response:
    """The model calls a tool (after `preface` text, if given)."""
    tool_id = tool_id or f"toolu_{next(_ids):04d}"
    blocks = _text_block(0, preface, 1) if preface else []
    events = [_message_start(f"msg_{next(_ids)}", MODEL)] + blocks + _tool_block(len(blocks) and 1, name, tool_input, tool_id)
    return Response(events=events + _message_end("tool_use"), **kw)


ERRORS = {
    400: ("invalid_request_error", "Invalid request"),
    401: ("authentication_error", "invalid x-api-key"),
    429: ("rate_limit_error", "Number of requests has exceeded your rate limit"),
    500: ("api_error", "Internal server error"),
    529: ("overloaded_error", "Overloaded"),
}


def error(status: int, message: str | None = None, **kw) -> Response:
    """An HTTP error with the body the real API sends: {"type":"error","error":{"type","message"}}."""
    kind, default = ERRORS.get(status, ("api_error", "Error"))
    return Response(status=status, error_body={"type": "error", "error": {"type": kind, "message": message or default},
                                               "request_id": f"req_fake{next(_ids)}"}, **kw)


def is_turn(body: dict) -> bool:
    """A request of the conversation itself (it offers tools); side requests (titles, …) offer none."""
    return bool(body.get("tools"))


def last_user_content(body: dict) -> Any:
    """The content of the last message with role "user" (a trailing "system" message may follow it)."""
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    return users[-1].get("content") if users else None


def user_text(body: dict) -> str:
    """The text the user typed last (tool results and system reminders left out)."""
    content = last_user_content(body)
    if isinstance(content, str):
        return content
    texts = [c.get("text", "") for c in content or [] if isinstance(c, dict) and c.get("type") == "text"]
    texts = [t for t in texts if not t.lstrip().startswith("<system-reminder>")]
    return texts[-1] if texts else ""


def tool_results(body: dict) -> list[dict]:
    """The tool_result blocks of the last user message."""
    content = last_user_content(body)
    return [c for c in content if isinstance(c, dict) and c.get("type") == "tool_result"] if isinstance(content, list) else []


def result_text(block: dict) -> str:
    content = block.get("content")
    if isinstance(content, list):
        return "".join(c.get("text", "") for c in content if isinstance(c, dict))
    return str(content or "")


def default_answer(body: dict) -> Response:
    """What the user typed, else (the message only carries tool results) what the tools said. After
    an interrupt, the next message carries the stopped tool's result and the user's new text."""
    results = tool_results(body)
    if results and not user_text(body):
        return text("tool said: " + " | ".join(result_text(r) for r in results))
    return text(f"claude: {user_text(body)}")


class FakeAnthropic:
    """The server; `script` queues answers, `requests` lists what it got."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._script: list[Response] = []
        self._requests: list[dict] = []
        self._changed = threading.Condition(self._lock)
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                fake._answer(self, body)

            def do_GET(self) -> None:
                self.send_response(404)
                self.send_header("content-length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self.server.serve_forever, name="fake-anthropic", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def env(self, home: str) -> dict[str, str]:
        """What Claude Code needs to call this server and nothing else."""
        return {"HOME": home, "ANTHROPIC_BASE_URL": self.url, "ANTHROPIC_API_KEY": "sk-ant-fake-for-tests",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1",
                "DISABLE_ERROR_REPORTING": "1"}

    def script(self, *responses: Response) -> None:
        """Answers for the next requests (each used once, in order, by a request it accepts)."""
        with self._lock:
            self._script.extend(responses)

    def clear(self) -> None:
        with self._lock:
            self._script.clear()

    @property
    def requests(self) -> list[dict]:
        with self._lock:
            return list(self._requests)

    @property
    def turn_requests(self) -> list[dict]:
        return [r for r in self.requests if is_turn(r)]

    def wait_requests(self, count: int, timeout: float = 20.0, turns_only: bool = True) -> list[dict]:
        """Waits until at least `count` (turn) requests came in; returns them."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                got = [r for r in self._requests if is_turn(r) or not turns_only]
                if len(got) >= count:
                    return got
                left = deadline - time.monotonic()
                assert left > 0, f"the fake API got {len(got)} requests, expected {count}"
                self._changed.wait(left)

    def _take(self, body: dict) -> Response:
        with self._lock:
            self._requests.append(body)
            self._changed.notify_all()
            for index, response in enumerate(self._script):
                if (response.accepts or is_turn)(body):
                    return self._script.pop(index)
        return default_answer(body) if is_turn(body) else text("Untitled")

    def _answer(self, handler: BaseHTTPRequestHandler, body: dict) -> None:
        response = self._take(body)
        if response.gate is not None:
            response.gate.wait(60)
        try:
            if response.status != 200:
                payload = json.dumps(response.error_body).encode()
                handler.send_response(response.status)
                handler.send_header("content-type", "application/json")
                handler.send_header("content-length", str(len(payload)))
                handler.send_header("request-id", response.error_body.get("request_id", "req_fake"))
                if response.status in (429, 529):
                    handler.send_header("retry-after", "0")
                handler.end_headers()
                handler.wfile.write(payload)
                return
            handler.send_response(200)
            handler.send_header("content-type", "text/event-stream")
            handler.send_header("cache-control", "no-cache")
            handler.send_header("connection", "close")
            handler.end_headers()
            handler.close_connection = True
            for name, data in response.events:
                if response.delay:
                    time.sleep(response.delay)
                handler.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
                handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass
