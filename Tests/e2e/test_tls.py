"""TLS per listener: tls_cert/tls_key turn on wss:// and https:// with a certificate the test makes."""
import http.client
import json
import ssl
import subprocess

import websockets

from conftest import new_device_id, pair_request


def make_certificate(directory):
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True)
    return cert, key


def client_context(cert):
    context = ssl.create_default_context(cafile=str(cert))
    context.check_hostname = True
    return context


async def test_tls_listener_serves_https_and_wss(relay_factory, tmp_path):
    cert, key = make_certificate(tmp_path)
    relay = relay_factory(clawline={"tls_cert": str(cert), "tls_key": str(key)})
    context = client_context(cert)

    conn = http.client.HTTPSConnection("127.0.0.1", relay.port, context=context, timeout=10)
    conn.request("GET", "/version")
    response = conn.getresponse()
    assert response.status == 200
    assert json.loads(response.read()) == {"protocolVersion": 1}
    conn.close()

    device = new_device_id()
    async with websockets.connect(f"wss://127.0.0.1:{relay.port}/ws", ssl=context) as ws:
        await ws.send(json.dumps(pair_request(device)))
        result = json.loads(await ws.recv())
    assert result["type"] == "pair_result" and result["success"] is True, result


async def test_plain_client_cannot_talk_to_a_tls_listener(relay_factory, tmp_path):
    cert, key = make_certificate(tmp_path)
    relay = relay_factory(clawline={"tls_cert": str(cert), "tls_key": str(key)})
    conn = http.client.HTTPConnection("127.0.0.1", relay.port, timeout=5)
    try:
        conn.request("GET", "/version")
        response = conn.getresponse()
        status = response.status
    except (http.client.HTTPException, ConnectionError, OSError):
        status = None
    finally:
        conn.close()
    assert status != 200, "a plain-text request must not be served by the TLS listener"
