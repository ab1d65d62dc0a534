"""Idle pages hibernate (HIBERNATE_AFTER_SECONDS): only their documents are kept, and their next action binds them
again first. Nothing a client sees or the log keeps may differ from a session that never hibernated."""
import time

from conftest import EventReader


def counter(metrics, name):
    """The value of an unlabelled counter in a /metrics text (0 while it has no sample line)."""
    for line in metrics.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return 0


def wait_for_hibernations(server, at_least, timeout=15):
    deadline = time.time() + timeout
    while True:
        count = counter(server.request("GET", "/metrics").body.decode(), "mvvmr_page_hibernations_total")
        if count >= at_least:
            return count
        assert time.time() < deadline, f"only {count} pages hibernated, expected {at_least}"
        time.sleep(0.2)


def test_an_idle_page_hibernates_and_its_next_action_answers_streams_and_stores_as_if_it_had_not(start_server, tmp_path):
    store = "sqlite:" + str(tmp_path / "sessions.sqlite")
    server = start_server({"HIBERNATE_AFTER_SECONDS": 1, "SESSION_STORE": store})
    session = server.new_session({"unit": "counters"})["session"]
    for row in [1, 2, 2]:
        assert server.act(session, "counters", "increment", row).status == 200
    before = server.request("GET", "/api/pages/counters", session=session).json()
    reader = EventReader(server.port, session, last_event_id=before["seq"])
    try:
        # The session holds an open stream and is still idle: its page hibernates.
        wait_for_hibernations(server, 1)
        read = server.request("GET", "/api/pages/counters", session=session).json()
        assert read == before
        # Behind by two revisions: the patches kept through the hibernation catch it up, no snapshot.
        answer = server.act(session, "counters", "increment", 3, rev=before["rev"] - 2)
        assert answer.status == 200, answer
        body = answer.json()
        assert body["rev"] == before["rev"] + 1
        assert body["patch"] == [
            {"op": "replace", "path": "/rows/1/count", "value": 1},
            {"op": "replace", "path": "/rows/1/count", "value": 2},
            {"op": "replace", "path": "/rows/2/count", "value": 1},
        ]
        event = reader.next_event()
        assert event["event"] == "patch"
        assert event["id"] == before["seq"] + 1
        assert event["data"]["rev"] == before["rev"] + 1
        assert event["data"]["patch"] == [{"op": "replace", "path": "/rows/2/count", "value": 1}]
    finally:
        reader.close()
    after = server.request("GET", "/api/pages/counters", session=session).json()
    assert [row["count"] for row in after["view"]["rows"][:3]] == [1, 2, 1]
    # It hibernates again, and the log it left restores to the same page after a restart.
    wait_for_hibernations(server, 2)
    server.stop()
    restarted = start_server({"HIBERNATE_AFTER_SECONDS": 1, "SESSION_STORE": store})
    restored = restarted.request("GET", "/api/pages/counters", session=session).json()
    assert restored["view"] == after["view"]
    assert (restored["rev"], restored["seq"]) == (after["rev"], after["seq"])
    assert counter(restarted.request("GET", "/metrics").body.decode(), "mvvmr_session_divergences_total") == 0


def test_a_page_read_in_many_sessions_hibernates_and_each_wakes_on_its_own_action(start_server):
    server = start_server({"HIBERNATE_AFTER_SECONDS": 1, "SESSION_STORE": "memory"})
    sessions = [server.request("GET", "/api/pages/greeting").json()["session"] for _ in range(20)]
    assert all(sessions)
    wait_for_hibernations(server, 20)
    for index, session in enumerate(sessions):
        if index % 2:
            continue
        answer = server.act(session, "greeting", "showGreeting")
        assert answer.status == 200, answer
        assert answer.json()["rev"] == 1
    for index, session in enumerate(sessions):
        page = server.request("GET", "/api/pages/greeting", session=session).json()
        assert page["rev"] == (1 if index % 2 == 0 else 0)


def test_hibernation_can_be_turned_off(start_server):
    server = start_server({"HIBERNATE_AFTER_SECONDS": 0, "SESSION_TTL_SECONDS": 4, "SESSION_STORE": "memory"})
    session = server.new_session({"unit": "counters"})["session"]
    assert server.act(session, "counters", "increment", 1).status == 200
    time.sleep(2.5)
    assert counter(server.request("GET", "/metrics").body.decode(), "mvvmr_page_hibernations_total") == 0
    assert server.act(session, "counters", "increment", 1).json()["rev"] == 2
