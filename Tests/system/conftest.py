"""Black-box tests of the page protocol (docs/PROTOCOL.md) against the real demo server binary.

Each test module gets servers started through the `server` fixture factory with the settings it needs;
every server listens on a free loopback port and is stopped (SIGTERM) afterwards.
"""
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BINARY = os.environ.get("MVVMR_DEMO_BINARY", os.path.join(ROOT, ".build/debug/mvvmr-demo"))


def rss_bytes(pid):
    """The resident memory of process `pid`, from /proc (VmRSS)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def poll(check, timeout=10, interval=0.05):
    """The first truthy value of `check()` within `timeout` seconds, else its last value."""
    deadline = time.time() + timeout
    while True:
        value = check()
        if value or time.time() > deadline:
            return value
        time.sleep(interval)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body

    def header(self, name):
        for key, value in self.headers:
            if key.lower() == name.lower():
                return value
        return None

    def headers_named(self, name):
        return [value for key, value in self.headers if key.lower() == name.lower()]

    def json(self):
        return json.loads(self.body)

    def __repr__(self):
        return f"<{self.status} {self.body[:300]!r}>"


class Server:
    """A running mvvmr-demo process."""

    def __init__(self, settings=None, env=None, port=None):
        self.port = port or free_port()
        # Each server gets its own session store unless the test names one (a restart on the same store).
        self.scratch = None
        if "SESSION_STORE" not in (settings or {}) and "SESSION_STORE" not in (env or {}):
            self.scratch = tempfile.mkdtemp(prefix="mvvmr-store-")
        environment = dict(os.environ)
        if self.scratch:
            environment["SESSION_STORE"] = "sqlite:" + os.path.join(self.scratch, "sessions.sqlite")
        environment.update({"PORT": str(self.port), "HOST": "127.0.0.1", "PUBLIC_DIR": os.path.join(ROOT, "Public"),
                            "DATA_DIR": os.path.join(ROOT, "Data"), "LOG_LEVEL": "error", "EMPLOYEE_LATENCY_MS": "50"})
        environment.update(env or {})
        for key, value in (settings or {}).items():
            environment[key] = str(value)
        self.process = subprocess.Popen([BINARY], cwd=ROOT, env=environment, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT)
        self.output = []
        threading.Thread(target=self._collect, daemon=True).start()
        deadline = time.time() + 20
        while time.time() < deadline:
            try:
                if self.request("GET", "/healthz").status == 200:
                    return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError("mvvmr-demo did not start:\n" + "".join(self.output))

    def _collect(self):
        for line in self.process.stdout:
            self.output.append(line.decode(errors="replace"))

    def request(self, method, path, body=None, headers=None, session=None, timeout=10):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            all_headers = dict(headers or {})
            if session:
                all_headers["X-Session-ID"] = session
            payload = None
            if body is not None:
                payload = body if isinstance(body, (bytes, str)) else json.dumps(body)
                all_headers.setdefault("Content-Type", "application/json")
            connection.request(method, path, body=payload, headers=all_headers)
            response = connection.getresponse()
            return Response(response.status, response.getheaders(), response.read())
        finally:
            connection.close()

    def new_session(self, body=None):
        response = self.request("POST", "/api/sessions", body=body)
        assert response.status == 201, response
        return response.json()

    def act(self, session, unit, action, value=None, rev=None, headers=None):
        body = {"action": action}
        if value is not None:
            body["value"] = value
        if rev is not None:
            body["rev"] = rev
        return self.request("POST", f"/api/pages/{unit}/actions", body=body, session=session, headers=headers)

    def stop(self, sig=signal.SIGTERM, timeout=15):
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.scratch:
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.scratch = None
        return self.process.returncode


@pytest.fixture
def start_server():
    servers = []

    def start(settings=None, env=None, port=None):
        server = Server(settings, env, port)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def browser():
    """A headless Chromium at desktop size (browsing.py), closed after the test."""
    from browsing import open_chromium

    driver = open_chromium()
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def shared_server():
    server = Server()
    yield server
    server.stop()


def parse_event(block):
    """One event of a text/event-stream (the lines between two blank lines) as a dict: id (an int, or None), event,
    data parsed as JSON; None for a block with no data (comments, `retry:`)."""
    event = {"id": None, "event": "message", "data": []}
    for line in block.split("\n"):
        if line.startswith(":") or line.startswith("retry:") or not line:
            continue
        field, _, value = line.partition(": ")
        if field == "data":
            event["data"].append(value)
        else:
            event[field] = value
    if not event["data"]:
        return None
    event["data"] = json.loads("\n".join(event["data"]))
    if event["id"] is not None:
        event["id"] = int(event["id"])
    return event


class EventReader:
    """Reads a text/event-stream over a raw socket, event by event."""

    def __init__(self, port, session, last_event_id=None, query="", headers=None):
        """`session` goes in `X-Session-ID` unless it is None; `headers` are added as they are."""
        self.socket = socket.create_connection(("127.0.0.1", port), timeout=10)
        lines = [f"GET /api/events{query} HTTP/1.1", "Host: 127.0.0.1", "Accept: text/event-stream"]
        if session is not None:
            lines.append(f"X-Session-ID: {session}")
        lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
        if last_event_id is not None:
            lines.append(f"Last-Event-ID: {last_event_id}")
        self.socket.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        self.buffer = b""
        self.status = None
        self._read_headers()

    def _fill(self, timeout):
        self.socket.settimeout(timeout)
        chunk = self.socket.recv(65536)
        if not chunk:
            raise EOFError("stream closed")
        self.buffer += chunk

    def _read_headers(self):
        while b"\r\n\r\n" not in self.buffer:
            self._fill(10)
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        self.status = int(head.split(b" ")[1])
        self.chunked = b"transfer-encoding: chunked" in head.lower()
        self.raw = b""

    def _decode(self):
        # De-chunk what has arrived.
        if not self.chunked:
            self.raw += self.buffer
            self.buffer = b""
            return
        while True:
            if b"\r\n" not in self.buffer:
                return
            size_line, rest = self.buffer.split(b"\r\n", 1)
            size = int(size_line.split(b";")[0], 16)
            if size == 0:
                self.ended = True
                self.buffer = b""
                return
            if len(rest) < size + 2:
                return
            self.raw += rest[:size]
            self.buffer = rest[size + 2:]

    def next_event(self, timeout=5):
        """The next event as a dict (id, event, data parsed as JSON); comments and retry lines are skipped."""
        deadline = time.time() + timeout
        while True:
            self._decode()
            while b"\n\n" in self.raw:
                block, self.raw = self.raw.split(b"\n\n", 1)
                event = parse_event(block.decode())
                if event:
                    return event
            remaining = deadline - time.time()
            if remaining <= 0:
                raise TimeoutError("no event")
            self._fill(remaining)

    def close(self):
        self.socket.close()
