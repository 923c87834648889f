"""The Control UI on the gateway port: `[gateway] control_ui_dir` names a build folder (a small fake
of OpenClaw's `dist/control-ui`, written by the test) and plain HTTP on the gateway port serves it
as OpenClaw's gateway does (`src/gateway/control-ui.ts`): files with their types, `index.html` for
`/` and for the app's own routes, GET and HEAD only, nothing outside the folder. Without it, plain
HTTP keeps its 426. The WebSocket on the same port is unchanged."""
import http.client
import os
import socket

from conftest import make_config
from gateway_client import OPENCLAW_CLI, Identity, paired

INDEX = b"<!doctype html><html><body><openclaw-app></openclaw-app><script src=\"/assets/index-abc.js\"></script></body></html>"
FILES = {
    "index.html": INDEX,
    "assets/index-abc.js": b"console.log('control ui');\n" * 50,
    "assets/index-abc.css": b"body{margin:0}",
    "assets/fonts/inter.woff2": bytes(range(256)),
    "assets/index-abc.js.map": b"{\"version\":3}",
    "favicon.ico": b"\x00\x00\x01\x00",
    "favicon.svg": b"<svg xmlns=\"http://www.w3.org/2000/svg\"/>",
    "apple-touch-icon.png": b"\x89PNG\r\n\x1a\n",
    "manifest.json": b"{\"name\":\"OpenClaw\"}",
}
TYPES = {
    "index.html": "text/html", "assets/index-abc.js": "text/javascript", "assets/index-abc.css": "text/css",
    "assets/fonts/inter.woff2": "font/woff2", "assets/index-abc.js.map": "application/json", "favicon.ico": "image/x-icon",
    "favicon.svg": "image/svg+xml", "apple-touch-icon.png": "image/png", "manifest.json": "application/json",
}


def build(tmp_path):
    root = tmp_path / "control-ui"
    for name, data in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    (tmp_path / "secret.txt").write_text("not for the web")
    os.symlink(tmp_path / "secret.txt", root / "leak.txt")
    return root


def get(port: int, path: str, method: str = "GET") -> tuple[int, dict, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request(method, path)
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def raw_status(port: int, target: str) -> tuple[int, bytes]:
    """The status of a request line sent as written (no client normalizes the path)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(f"GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    return int(data.split(b" ", 2)[1]), data


async def test_the_build_is_served_with_types_spa_routes_and_nothing_outside(relay_factory, tmp_path):
    cfg = make_config()
    cfg["gateway"] = {"listen": "127.0.0.1:0", "control_ui_dir": str(build(tmp_path))}
    relay = relay_factory(cfg)
    port = relay.listeners["gateway"][1]
    for name, data in FILES.items():
        status, headers, body = get(port, "/" + name)
        assert status == 200 and body == data, (name, status)
        assert headers["content-type"].startswith(TYPES[name]), (name, headers)
        assert int(headers["content-length"]) == len(data), (name, headers)
    for route in ("/", "/chat", "/agents/main/sessions", "/settings/"):
        status, headers, body = get(port, route)
        assert status == 200 and body == INDEX and headers["content-type"].startswith("text/html"), (route, status)
    status, _, body = get(port, "/chat/assets/index-abc.js")
    assert status == 200 and body == FILES["assets/index-abc.js"], "a route's relative asset URL"
    status, headers, body = get(port, "/assets/index-abc.js", method="HEAD")
    assert status == 200 and body == b"" and int(headers["content-length"]) == len(FILES["assets/index-abc.js"]), headers
    assert get(port, "/assets/missing.js")[0] == 404
    assert get(port, "/leak.txt")[0] == 404, "a symlink out of the folder"
    assert get(port, "/", method="POST")[0] == 405
    for target in ("/../secret.txt", "/%2e%2e/secret.txt", "/assets/%2e%2e/%2e%2e/secret.txt", "/..%2fsecret.txt"):
        status, data = raw_status(port, target)
        assert status in (400, 403, 404) and b"not for the web" not in data, (target, data[:200])
    # The same port still speaks the gateway protocol.
    client, hello = await paired(relay, Identity(), **OPENCLAW_CLI)
    assert hello["ok"], hello
    await client.close()


async def test_without_a_build_plain_http_is_upgrade_required(relay_factory):
    cfg = make_config()
    cfg["gateway"] = {"listen": "127.0.0.1:0"}
    relay = relay_factory(cfg)
    status, _, body = get(relay.listeners["gateway"][1], "/")
    assert status == 426 and b"WebSocket" in body, (status, body)


def test_a_folder_without_an_index_stops_start_up_naming_the_key(tmp_path):
    from test_config import assert_names_location, line_of, serve_expecting_failure
    from conftest import render_toml
    (tmp_path / "empty").mkdir()
    cfg = make_config()
    cfg["gateway"] = {"listen": "127.0.0.1:0", "control_ui_dir": str(tmp_path / "empty")}
    text = render_toml(cfg)
    config, output = serve_expecting_failure(tmp_path, text)
    assert_names_location(output, config, line_of(text, "control_ui_dir = "), "control_ui_dir")
    assert "index.html" in output, output
