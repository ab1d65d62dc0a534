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

from conftest import EventReader, rss_bytes

MIB = 1024 * 1024




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


# Item 1: an action's value and its Idempotency-Key are bounded.

def test_long_keys_and_long_values_are_refused_and_memory_stays_flat(start_server):
    server = start_server()
    session = login_session(server)
    client = KeepAliveClient(server.port, session)
    assert client.act("login", "username", "warm")[0] == 200
    before = rss_bytes(server.process.pid)
    long_value = "v" * 20_000
    statuses = {}
    for index in range(2048):
        if index % 2 == 0:
            # A unique key of 1,000 bytes: refused before anything is looked at.
            status, _, body = client.act("login", "username", long_value, key=f"{index:06d}" + "k" * 994)
            assert (status, error_code(body)) == (400, "invalid_idempotency_key"), body
            assert body["error"]["details"]["limit"] == 255
        else:
            # A key of an allowed length, a value of 20,000 bytes: refused, nothing cached.
            status, _, body = client.act("login", "username", long_value + str(index), key=f"key-{index}")
            assert (status, error_code(body)) == (413, "value_too_large"), body
            assert body["error"]["details"]["limit"] == 16384
        statuses[status] = statuses.get(status, 0) + 1
    grown = rss_bytes(server.process.pid) - before
    client.close()
    assert statuses == {400: 1024, 413: 1024}
    # Nothing was kept: the growth is the allocator's noise (the unbounded server grew by about 92 MiB here).
    assert grown < 4 * MIB, f"RSS grew by {grown / MIB:.1f} MiB"
    page = server.request("GET", "/api/pages/login", session=session).json()
    assert page["view"]["username"] == "warm"


def test_keys_and_values_just_under_the_limits_fill_the_cache_to_its_bound_and_no_further(start_server):
    server = start_server()
    session = login_session(server)
    client = KeepAliveClient(server.port, session)
    assert client.act("login", "username", "warm")[0] == 200
    before = rss_bytes(server.process.pid)
    accepted = []
    refused = 0
    for index in range(2048):
        key = f"{index:06d}".ljust(255, "k")
        value = f"{index:06d}".ljust(16_000, "u")
        status, headers, body = client.act("login", "username", value, key=key)
        if status == 200:
            accepted.append((key, value, body["rev"]))
            assert refused == 0, "a key was accepted after the cache was full"
        else:
            assert (status, error_code(body)) == (429, "idempotency_cache_full"), body
            assert int(headers["retry-after"]) >= 1
            assert body["error"]["details"]["limit"] == 262144
            refused += 1
    grown = rss_bytes(server.process.pid) - before
    # Each entry holds about 16 KB (a 255-byte key, the 16 KB response with its patch, and only a digest of the
    # request): 16 fit in 256 KiB.
    assert 12 <= len(accepted) <= 17, len(accepted)
    assert refused == 2048 - len(accepted)
    # Every kept response still replays: nothing live was evicted to make room.
    for key, value, rev in accepted:
        status, headers, body = client.act("login", "username", value, key=key)
        assert status == 200 and headers.get("idempotent-replayed") == "true" and body["rev"] == rev
    client.close()
    # The unbounded server kept all 2,048 (about 185 MiB with the sizes; about 72 MiB with these).
    assert grown < 8 * MIB, f"RSS grew by {grown / MIB:.1f} MiB"


def test_sixty_kilobyte_usernames_are_refused(start_server):
    server = start_server()
    session = login_session(server)
    client = KeepAliveClient(server.port, session)
    before = rss_bytes(server.process.pid)
    for index in range(300):
        status, _, body = client.act("login", "username", f"{index:05d}" + "n" * 60_000)
        assert (status, error_code(body)) == (413, "value_too_large"), body
    grown = rss_bytes(server.process.pid) - before
    client.close()
    # (The unbounded server took all 300 and grew by about 15 MiB.)
    assert grown < 4 * MIB, f"RSS grew by {grown / MIB:.1f} MiB"
    assert server.request("GET", "/api/session", session=session).json()["seq"] == 1


def test_the_event_log_keeps_its_bytes_and_replay_falls_back_to_snapshots(start_server):
    # Values this large are allowed here, and the log's count is high, so only its byte bound holds it. jemalloc keeps
    # freed pages of large blocks resident for up to 10 s before returning them (its dirty decay): 300 freed 60 KB
    # values left 3.4-3.7 MiB that the server no longer held. The server here returns them at once, so that what is
    # measured is what the server keeps.
    server = start_server({"MAX_ACTION_VALUE_BYTES": 65536, "EVENT_LOG_SIZE": 1000},
                          env={"MALLOC_CONF": "dirty_decay_ms:0"})
    session = login_session(server)
    first_seq = server.request("GET", "/api/session", session=session).json()["seq"]
    client = KeepAliveClient(server.port, session)
    before = rss_bytes(server.process.pid)
    for index in range(300):
        status, _, body = client.act("login", "username", f"{index:05d}" + "n" * 60_000)
        assert status == 200, body
    grown = rss_bytes(server.process.pid) - before
    client.close()
    # 300 events of 60 KB would be 18 MB; the log keeps at most 256 KiB of them, and the page's patch
    # history at most 64 KiB (the unbounded server grew by about 18 MiB here). The rest is the allocator's and the
    # engine's: 2.90-3.05 MiB measured with a loop per connection, 3.04-3.20 MiB since every loop serves every
    # connection (each loop's 64 KiB read buffer and its output touched by this one client; 2026-12-06).
    assert grown < 4 * MIB, f"RSS grew by {grown / MIB:.1f} MiB"
    reader = EventReader(server.port, session, last_event_id=first_seq)
    try:
        event = reader.next_event()
        assert event["event"] == "snapshot", event
        assert event["data"]["view"]["username"].startswith("00299")
    finally:
        reader.close()


def test_a_session_holding_its_limit_refuses_actions_and_changes_nothing(start_server):
    server = start_server({"MAX_SESSION_BYTES": 65536})
    session = login_session(server)
    client = KeepAliveClient(server.port, session)
    results = []
    for index in range(6):
        results.append(client.act("login", "username", f"{index}".ljust(16_000, "s"), key=f"key-{index}"))
    statuses = [status for status, _, _ in results]
    assert 200 in statuses and statuses[-1] == 413, statuses
    status, _, body = results[-1]
    assert error_code(body) == "session_too_large" and body["error"]["details"]["limit"] == 65536
    last_ok = max(index for index, (status, _, _) in enumerate(results) if status == 200)
    # An unkeyed action is refused too, and nothing moved.
    status, _, body = client.act("login", "username", "small")
    assert (status, error_code(body)) == (413, "session_too_large")
    client.close()
    page = server.request("GET", "/api/pages/login", session=session).json()
    assert page["view"]["username"].startswith(str(last_ok))


def open_stream_refusal(port, session):
    """Asks for an event stream; returns the refusal (status, headers, JSON body), or fails when it opened
    (without reading the stream, which would never end)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("GET", "/api/events", headers={"X-Session-ID": session})
        response = connection.getresponse()
        assert response.status != 200, "the stream opened"
        return response.status, dict((name.lower(), value) for name, value in response.getheaders()), json.loads(response.read())
    finally:
        connection.close()


def test_open_event_streams_are_bounded_per_session_and_per_address(start_server):
    server = start_server({"MAX_STREAMS_PER_SESSION": 2, "MAX_STREAMS_PER_IP": 3, "HEARTBEAT_SECONDS": 1})
    first = server.new_session()["session"]
    second = server.new_session()["session"]
    readers = [EventReader(server.port, first), EventReader(server.port, first)]
    try:
        assert [reader.status for reader in readers] == [200, 200]
        status, headers, body = open_stream_refusal(server.port, first)
        assert (status, error_code(body)) == (429, "too_many_streams"), body
        assert body["error"]["details"] == {"scope": "session", "limit": 2}
        assert "retry-after" in headers
        readers.append(EventReader(server.port, second))
        assert readers[-1].status == 200
        status, _, body = open_stream_refusal(server.port, second)
        assert status == 429 and body["error"]["details"] == {"scope": "address", "limit": 3}, body
        # A stream that ends gives its place back.
        readers.pop(0).close()
        # (The server notices the close on its next write, a heartbeat at the latest: retry for a while.)
        reopened = None
        for _ in range(40):
            candidate = EventReader(server.port, second)
            if candidate.status == 200:
                reopened = candidate
                break
            candidate.close()
            time.sleep(0.25)
        assert reopened is not None
        readers.append(reopened)
    finally:
        for reader in readers:
            reader.close()


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
    # Made-up paths count under their route ("static") and status, never under the path.
    for index in range(200):
        connection.request("GET", f"/madeuppath{index}")
        response = connection.getresponse()
        response.read()
        assert response.status == 404
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
    assert re.search(r'^mvvmr_http_requests_total\{route="static",status="404"\} 200$', text, re.M), text


# Item 6: with PUBLIC_ORIGIN set, the request's Host is not the server's own origin (DNS rebinding).

def test_with_public_origin_an_origin_matching_only_the_host_is_refused(start_server):
    rebound = "rebound.example"
    public = start_server({"PUBLIC_ORIGIN": "https://app.example.com"})
    headers = {"Host": f"{rebound}:{public.port}", "Origin": f"http://{rebound}:{public.port}"}
    refused = public.request("POST", "/api/sessions", body={}, headers=headers)
    assert refused.status == 403 and refused.json()["error"]["code"] == "forbidden_origin", refused
    allowed = public.request("POST", "/api/sessions", body={}, headers={"Origin": "https://app.example.com"})
    assert allowed.status == 201, allowed
    session = allowed.json()["session"]
    refused = public.request("POST", "/api/pages/home/actions", body={"action": "x"}, headers=headers, session=session)
    assert refused.status == 403 and refused.json()["error"]["code"] == "forbidden_origin", refused
    # Without a public origin, the Host is all the server knows of its name, and stands for it.
    plain = start_server()
    headers = {"Host": f"{rebound}:{plain.port}", "Origin": f"http://{rebound}:{plain.port}"}
    assert plain.request("POST", "/api/sessions", body={}, headers=headers).status == 201
