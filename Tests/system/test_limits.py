"""Per-session and per-client bounds (docs/PROTOCOL.md, "Limits"), black-box against the real server.

The amplification runs of issue 11 are reproduced here: a client sending many actions with long keys and
long values, then with keys and values just under the limits, and the server's resident memory
(/proc/PID/status VmRSS) is read before and after. Every run stays on loopback, with a bounded number of
requests on one keep-alive connection.
"""
import http.client
import json
import re
import time

from conftest import EventReader

MIB = 1024 * 1024


def rss_bytes(server):
    with open(f"/proc/{server.process.pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


class KeepAliveClient:
    """Many requests on one connection (a new connection per request would measure the handshake)."""

    def __init__(self, port, session):
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        self.session = session

    def act(self, unit, action, value=None, key=None):
        body = {"action": action}
        if value is not None:
            body["value"] = value
        headers = {"Content-Type": "application/json", "X-Session-ID": self.session}
        if key is not None:
            headers["Idempotency-Key"] = key
        self.connection.request("POST", f"/api/pages/{unit}/actions", body=json.dumps(body), headers=headers)
        response = self.connection.getresponse()
        payload = response.read()
        return response.status, dict((name.lower(), value) for name, value in response.getheaders()), json.loads(payload)

    def close(self):
        self.connection.close()


def login_session(server):
    return server.new_session({"unit": "login"})["session"]


def error_code(body):
    return body.get("error", {}).get("code")


# Item 2: metrics label values come only from the app's own names.

def test_made_up_unit_and_action_names_do_not_become_metric_series(start_server):
    server = start_server()
    session = login_session(server)
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    headers = {"Content-Type": "application/json", "X-Session-ID": session}

    def post(path, body):
        connection.request("POST", path, body=json.dumps(body), headers=headers)
        response = connection.getresponse()
        response.read()
        return response.status

    for index in range(1000):
        assert post(f"/api/pages/madeupunit{index}/actions", {"action": f"madeupaction{index}"}) == 404
        assert post("/api/pages/login/actions", {"action": f"inventedaction{index}"}) == 422
    for index in range(3):
        assert post(f"/api/pages/{'u' * 2000}{index}/actions", {"action": "a" * 60_000 + str(index)}) == 404
        assert post("/api/pages/login/actions", {"action": "b" * 60_000 + str(index)}) == 422
    connection.close()
    metrics = server.request("GET", "/metrics")
    text = metrics.body.decode()
    assert "madeup" not in text and "invented" not in text and "aaaaaaaa" not in text and "bbbbbbbb" not in text
    # Every series is one of the app's units, actions, routes and codes: the body stays small.
    assert len(metrics.body) < 32 * 1024, len(metrics.body)
    counts = {}
    for match in re.finditer(r'^mvvmr_actions_total\{unit="([^"]*)",action="([^"]*)",status="([^"]*)"\} (\S+)$', text, re.M):
        counts[match.groups()[:3]] = float(match.group(4))
    assert counts[("unknown", "unknown", "unknown_unit")] == 1003
    assert counts[("login", "unknown", "unknown_action")] == 1003
