"""mDNS through Avahi: the test runs its own dbus-daemon and an avahi-daemon limited to `lo`
(IPv4 only), so nothing is multicast beyond loopback, then browses both service types."""
import re
import signal
import subprocess
import time

import pytest

from conftest import make_config

DBUS_CONF = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={sock}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/><allow own="*"/>
    <allow send_type="method_call"/><allow send_type="signal"/><allow send_type="method_return"/><allow send_type="error"/>
    <allow receive_type="method_call"/><allow receive_type="signal"/><allow receive_type="method_return"/><allow receive_type="error"/>
  </policy>
</busconfig>
"""

AVAHI_CONF = """[server]
use-ipv4=yes
use-ipv6=no
allow-interfaces=lo
enable-dbus=yes
[wide-area]
enable-wide-area=no
[publish]
publish-hinfo=no
publish-workstation=no
"""


@pytest.fixture
def avahi(tmp_path, monkeypatch):
    subprocess.run(["ip", "link", "set", "lo", "multicast", "on"], check=True)
    sock = tmp_path / "bus.sock"
    (tmp_path / "dbus.conf").write_text(DBUS_CONF.format(sock=sock))
    (tmp_path / "avahi.conf").write_text(AVAHI_CONF)
    dbus = subprocess.Popen(["dbus-daemon", "--nofork", f"--config-file={tmp_path / 'dbus.conf'}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while not sock.exists():
        assert time.monotonic() < deadline, "dbus-daemon did not create its socket"
        time.sleep(0.05)
    monkeypatch.setenv("DBUS_SYSTEM_BUS_ADDRESS", f"unix:path={sock}")
    log = open(tmp_path / "avahi.log", "w")
    daemon = subprocess.Popen(["avahi-daemon", "-f", str(tmp_path / "avahi.conf"), "--no-drop-root", "--no-chroot", "--no-rlimits"],
                              stdout=log, stderr=subprocess.STDOUT)
    while "Server startup complete" not in (tmp_path / "avahi.log").read_text():
        assert daemon.poll() is None, (tmp_path / "avahi.log").read_text()
        assert time.monotonic() < deadline, "avahi-daemon did not start"
        time.sleep(0.05)
    yield
    for process in (daemon, dbus):
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=10)
    log.close()


def browse(service_type: str, timeout=10.0) -> dict:
    """Resolved entries of `service_type` on lo, as {name: {txt key: value}}."""
    deadline = time.monotonic() + timeout
    while True:
        out = subprocess.run(["avahi-browse", "-rtp", service_type], capture_output=True, text=True, timeout=15).stdout
        found = {}
        for line in out.splitlines():
            fields = line.split(";")
            if fields[0] == "=" and len(fields) >= 10:
                txt = dict(item.strip('"').split("=", 1) for item in fields[9].split('" "') if "=" in item)
                name = re.sub(r"\\(\d{3})", lambda m: chr(int(m.group(1))), fields[3])  # avahi-browse -p writes \032 for a space
                found[name] = {"port": int(fields[8]), "address": fields[7], **txt}
        if found:
            return found
        assert time.monotonic() < deadline, f"no {service_type} service found: {out!r}"
        time.sleep(0.2)


def test_gateway_advertises_both_service_types_on_lo(avahi, relay_factory):
    cfg = make_config()
    cfg["gateway"] = {"listen": "127.0.0.1:0", "mdns": True, "name": "Test Relay"}
    relay = relay_factory(cfg)
    gateway_port = relay.listeners["gateway"][1]
    gw = browse("_openclaw-gw._tcp")["Test Relay"]
    assert gw["port"] == gateway_port and gw["address"] == "127.0.0.1", gw
    assert gw["role"] == "gateway" and gw["transport"] == "gateway" and gw["gatewayPort"] == str(gateway_port), gw
    assert gw["displayName"] == "Test Relay" and gw["lanHost"] == "127.0.0.1", gw
    seed = browse("_openclaw._tcp")["Test Relay"]
    assert seed["ver"] == "3" and seed["bots"] == "2" and seed["name"] == "Test Relay" and len(seed["fp"]) == 16, seed
