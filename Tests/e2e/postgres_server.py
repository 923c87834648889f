"""A PostgreSQL 15 server of the suite's own, for relays on `[store] kind = "postgres"`.

`initdb` in a fresh temporary directory and `postgres` on a free loopback port (its socket in
that directory), run as `nobody` when the suite runs as root (PostgreSQL refuses root); one
database per relay. Started on first use, stopped and removed when the process exits.
"""

from __future__ import annotations

import atexit
import os
import pwd
import random
import shutil
import subprocess
import tempfile
import threading
import time
import uuid
from pathlib import Path

BINARIES = Path("/usr/lib/postgresql/15/bin")
USER = "clawrelay"


class PostgresServer:
    def __init__(self) -> None:
        self.directory = Path(tempfile.mkdtemp(prefix="clawrelay-e2e-pg-"))
        self.as_root = os.getuid() == 0
        if self.as_root:
            nobody = pwd.getpwnam("nobody")
            os.chown(self.directory, nobody.pw_uid, nobody.pw_gid)
        self._run([str(BINARIES / "initdb"), "--no-sync", "-A", "trust", "-U", USER, "-E", "UTF8", "--locale=C",
                   "-D", str(self.directory / "data")])
        self.proc: subprocess.Popen | None = None
        self.port = 0
        for _ in range(5):
            port = random.randint(20000, 59999)
            if self._launch(port):
                self.port = port
                return
        raise RuntimeError(f"postgres did not start: {self._log()}")

    def _command(self, args: list[str]) -> list[str]:
        return ["/usr/sbin/runuser", "-u", "nobody", "--", *args] if self.as_root else args

    def _run(self, args: list[str]) -> str:
        result = subprocess.run(self._command(args), cwd=self.directory, capture_output=True, text=True, timeout=120)
        if result.returncode != 0:
            raise RuntimeError(f"{args[0]} failed ({result.returncode}): {result.stdout[-2000:]} {result.stderr[-2000:]}")
        return result.stdout

    def _launch(self, port: int) -> bool:
        log = open(self.directory / "postgres.log", "ab")
        self.proc = subprocess.Popen(
            self._command([str(BINARIES / "postgres"), "-D", str(self.directory / "data"), "-p", str(port),
                           "-k", str(self.directory), "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off",
                           "-c", "max_connections=300"]),
            cwd=self.directory, stdout=log, stderr=log, stdin=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False  # a port in use: postgres exits at once
            ready = subprocess.run([str(BINARIES / "pg_isready"), "-h", "127.0.0.1", "-p", str(port), "-U", USER],
                                   capture_output=True, timeout=10)
            if ready.returncode == 0:
                return True
            time.sleep(0.05)  # polling a server's start-up: there is nothing to wait on
        self.proc.kill()
        return False

    def _log(self) -> str:
        try:
            return (self.directory / "postgres.log").read_text(errors="replace")[-2000:]
        except OSError:
            return ""

    def psql(self, sql: str, database: str = "postgres") -> str:
        result = subprocess.run(
            [str(BINARIES / "psql"), "-h", "127.0.0.1", "-p", str(self.port), "-U", USER, "-d", database,
             "-v", "ON_ERROR_STOP=1", "-Atc", sql],
            capture_output=True, text=True, timeout=60,
        )
        if result.returncode != 0:
            raise RuntimeError(f"psql failed: {result.stderr}")
        return result.stdout

    def create_database(self) -> str:
        name = "e2e_" + uuid.uuid4().hex
        self.psql(f"CREATE DATABASE {name}")
        return name

    def url(self, database: str) -> str:
        return f"postgres://{USER}@127.0.0.1:{self.port}/{database}"

    def restart(self) -> None:
        """Stops the server (every session ends, as when a database host restarts) and starts it
        again on the same port with the same data."""
        assert self.proc is not None
        # A fast shutdown ends every session at once (SIGTERM to the postmaster would wait for them).
        self._run([str(BINARIES / "pg_ctl"), "stop", "-m", "fast", "-w", "-D", str(self.directory / "data")])
        self.proc.wait(timeout=15)
        if not self._launch(self.port):
            raise RuntimeError(f"postgres did not start again: {self._log()}")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        shutil.rmtree(self.directory, ignore_errors=True)


_server: PostgresServer | None = None
_lock = threading.Lock()


def shared() -> PostgresServer:
    """The process's one server, started on first use."""
    global _server
    with _lock:
        if _server is None:
            _server = PostgresServer()
            atexit.register(_server.stop)
        return _server
