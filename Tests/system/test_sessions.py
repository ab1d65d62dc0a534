"""Session limits: eviction, expiry, concurrency, and graceful shutdown."""
import concurrent.futures
import http.client
import json
import signal
import threading
import time

from conftest import EventReader


def counter(metrics, name):
    """The value of an unlabelled counter in a /metrics text (0 while it has no sample line)."""
    for line in metrics.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return 0


def test_least_recently_used_drive_by_sessions_are_evicted_first(start_server):
    server = start_server({"MAX_SESSIONS": 3})
    returning = server.new_session()["session"]
    assert server.request("GET", "/api/session", session=returning).status == 200  # a second request
    drive_by_old = server.new_session()["session"]
    drive_by_new = server.new_session()["session"]
    newest = server.new_session()["session"]
    for session in [returning, drive_by_new, newest]:
        assert server.request("GET", "/api/session", session=session).status == 200
    metrics = server.request("GET", "/metrics").body.decode()
    assert "mvvmr_session_evictions_total 1" in metrics
    assert counter(metrics, "mvvmr_session_restores_total") == 0  # the three were still in memory
    # Evicted means out of memory, not lost: the session comes back from the store, by replay.
    assert server.request("GET", "/api/session", session=drive_by_old).status == 200
    assert counter(server.request("GET", "/metrics").body.decode(), "mvvmr_session_restores_total") == 1


def test_sessions_with_open_streams_are_not_evicted(start_server):
    server = start_server({"MAX_SESSIONS": 2})
    first = server.new_session()["session"]
    second = server.new_session()["session"]
    server.request("GET", "/api/session", session=second)
    reader = EventReader(server.port, first)  # an open stream: not idle, so not evictable
    third = server.new_session()["session"]
    metrics = server.request("GET", "/metrics").body.decode()
    assert "mvvmr_session_evictions_total 1" in metrics
    assert server.request("GET", "/api/session", session=first).status == 200
    assert counter(server.request("GET", "/metrics").body.decode(), "mvvmr_session_restores_total") == 0
    fourth = server.request("POST", "/api/sessions")
    assert fourth.status == 201
    reader.close()


def test_when_no_session_is_idle_new_ones_are_refused(start_server):
    server = start_server({"MAX_SESSIONS": 1})
    session = server.new_session()["session"]
    reader = EventReader(server.port, session)
    refused = server.request("POST", "/api/sessions")
    assert refused.status == 503 and refused.json()["error"]["code"] == "overloaded"
    assert refused.header("Retry-After")
    reader.close()


def test_idle_sessions_expire_and_streams_keep_them_alive(start_server):
    # A closed stream is noticed at the next write: the heartbeat, here every second.
    server = start_server({"SESSION_TTL_SECONDS": 1, "HEARTBEAT_SECONDS": 1})
    idle = server.new_session()["session"]
    watched = server.new_session()["session"]
    reader = EventReader(server.port, watched)
    time.sleep(3.2)
    assert server.request("GET", "/api/session", session=idle).status == 404
    assert server.request("GET", "/api/session", session=watched).status == 200
    reader.close()
    time.sleep(4.5)
    assert server.request("GET", "/api/session", session=watched).status == 404


def test_stream_of_an_expiring_session_gets_expired(start_server):
    server = start_server({"SESSION_TTL_SECONDS": 1, "MAX_SESSIONS": 1})
    session = server.new_session()["session"]
    reader = EventReader(server.port, session)
    server.request("DELETE", "/api/session", session=session)
    assert reader.next_event()["event"] == "expired"
    reader.close()


class KeepAliveClient:
    def __init__(self, port):
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def post(self, path, body, session):
        self.connection.request("POST", path, body=json.dumps(body), headers={"X-Session-ID": session,
                                                                            "Content-Type": "application/json"})
        response = self.connection.getresponse()
        return response.status, json.loads(response.read())


def test_many_sessions_with_concurrent_actions_end_in_their_serial_state(start_server):
    server = start_server()
    sessions = [server.new_session({"unit": "counters"})["session"] for _ in range(100)]
    jobs = []
    for index, session in enumerate(sessions):
        for action in range(100):
            jobs.append((session, 1 + (index + action) % 10))
    local = threading.local()

    def run(job):
        session, row = job
        if not hasattr(local, "client"):
            local.client = KeepAliveClient(server.port)
        status, body = local.client.post("/api/pages/counters/actions", {"action": "increment", "value": row}, session)
        return status, body["rev"]

    with concurrent.futures.ThreadPoolExecutor(max_workers=32) as pool:
        results = list(pool.map(run, jobs))
    assert all(status == 200 for status, _ in results)
    for index, session in enumerate(sessions):
        page = server.request("GET", "/api/pages/counters", session=session).json()
        assert page["rev"] == 100
        expected = {}
        for action in range(100):
            row = 1 + (index + action) % 10
            expected[row] = expected.get(row, 0) + 1
        assert {row["id"]: row["count"] for row in page["view"]["rows"]} == expected


def test_a_passivated_session_can_be_deleted(start_server):
    server = start_server({"PASSIVATE_AFTER_SECONDS": 1})
    session = server.new_session({"unit": "counters"})["session"]
    deadline = time.time() + 10
    while counter(server.request("GET", "/metrics").body.decode(), "mvvmr_session_passivations_total") < 1:
        assert time.time() < deadline, "the session was not passivated"
        time.sleep(0.2)
    # Out of memory, in the store only: deleting it deletes it there.
    assert server.request("DELETE", "/api/session", session=session).status == 204
    assert server.request("GET", "/api/pages/counters", session=session).status == 404
    assert server.request("DELETE", "/api/session", session=session).status == 404


def test_requests_racing_a_delete_do_not_bring_the_session_back(start_server):
    # Readers keep asking for each session while it is deleted: one that finds it gone from memory before the delete
    # reached the store restores it, and that copy must end with it, not live on serving a deleted session.
    server = start_server()
    stop = threading.Event()

    def read(session, answers):
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        while not stop.is_set():
            connection.request("GET", "/api/pages/counters", headers={"X-Session-ID": session})
            response = connection.getresponse()
            response.read()
            answers.append(response.status)
        connection.close()

    for _ in range(30):
        session = server.new_session({"unit": "counters"})["session"]
        stop.clear()
        answers = []
        readers = [threading.Thread(target=read, args=(session, answers)) for _ in range(4)]
        for reader in readers:
            reader.start()
        time.sleep(0.02)
        assert server.request("DELETE", "/api/session", session=session).status == 204
        time.sleep(0.02)
        stop.set()
        for reader in readers:
            reader.join()
        assert set(answers) <= {200, 404}
        assert server.request("GET", "/api/pages/counters", session=session).status == 404
    metrics = server.request("GET", "/metrics").body.decode()
    assert counter(metrics, "mvvmr_sessions_live") == 0


def test_sigterm_drains_ends_streams_and_exits_zero(start_server):
    server = start_server({"SHUTDOWN_GRACE_SECONDS": 5})
    session = server.new_session()["session"]
    reader = EventReader(server.port, session)
    server.process.send_signal(signal.SIGTERM)
    ended = False
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            reader.next_event(timeout=deadline - time.time())
        except (EOFError, ConnectionError):
            ended = True
            break
        except TimeoutError:
            break
    assert ended, "the event stream did not end on SIGTERM"
    assert server.process.wait(timeout=10) == 0
