"""Navigation (push, present, back with callbacks, root, client navigation) and Server-Sent Events
(order, resume, resync, async pushes)."""
import time

import jsonpatch

from conftest import EventReader, poll


def test_login_main_settings_flow_with_router(shared_server):
    server = shared_server
    session = server.new_session({"unit": "login"})["session"]
    assert server.act(session, "login", "username", "david").json()["patch"]
    short = server.act(session, "login", "password", "blain").json()
    view = server.request("GET", "/api/pages/login", session=session).json()["view"]
    assert view["canSubmit"] is False and view["message"] == "The password needs at least 6 characters"
    server.act(session, "login", "password", "wrong-password")
    refused = server.act(session, "login", "submit").json()
    assert refused["navigation"] is None
    # The AuthService answers asynchronously: its verdict arrives later (over SSE), not in the response.
    login_error = lambda: server.request("GET", "/api/pages/login", session=session).json()["view"]["error"]
    assert poll(lambda: login_error() == "Wrong username or password")
    server.act(session, "login", "password", "blaine123")
    reader = EventReader(server.port, session, last_event_id=server.request("GET", "/api/session", session=session).json()["seq"])
    server.act(session, "login", "submit")
    navigation = None
    while navigation is None:
        event = reader.next_event()
        if event["event"] == "navigate":
            navigation = event["data"]
    reader.close()
    assert navigation["type"] == "push" and navigation["unit"] == "main"
    assert navigation["stack"] == ["login", "main"] and navigation["presented"] is None
    assert navigation["page"]["view"]["welcome"] == "Welcome, david"

    presented = server.act(session, "main", "openSettings").json()["navigation"]
    assert presented["type"] == "present" and presented["stack"] == ["login", "main", "settings"]
    assert presented["presented"] == "settings"
    server.act(session, "settings", "theme", "dark")
    back = server.act(session, "settings", "done").json()["navigation"]
    assert back["type"] == "back" and back["stack"] == ["login", "main"] and back["presented"] is None
    assert back["page"]["unit"] == "main" and back["page"]["view"]["themeLabel"] == "Theme: dark"
    assert back["forward"] == ["settings"]
    state = server.request("GET", "/api/session", session=session).json()
    # Settings was dismissed, not released: it waits, bound, in the forward list.
    assert state["navigation"] == {"stack": ["login", "main"], "presented": None, "forward": ["settings"]}
    assert sorted(page["unit"] for page in state["pages"]) == ["login", "main", "settings"]

    root = server.act(session, "main", "logout").json()["navigation"]
    assert root["type"] == "root" and root["stack"] == ["login"] and root["forward"] == []
    assert root["page"]["view"]["username"] == ""
    assert server.act(session, "main", "logout").status == 409


def test_client_navigation_back_and_open(shared_server):
    server = shared_server
    session = server.new_session()["session"]
    opened = server.request("POST", "/api/navigation", body={"type": "open", "unit": "counters"}, session=session).json()
    assert opened["navigation"]["type"] == "push" and opened["navigation"]["stack"] == ["home", "counters"]
    assert opened["unit"] == "counters"
    server.request("POST", "/api/navigation", body={"type": "open", "unit": "greeting"}, session=session)
    back_to_home = server.request("POST", "/api/navigation", body={"type": "open", "unit": "home"}, session=session).json()
    assert back_to_home["navigation"]["stack"] == ["home"]
    nothing = server.request("POST", "/api/navigation", body={"type": "back"}, session=session).json()
    assert nothing["navigation"] is None
    for body, code in [({"type": "sideways"}, "invalid_request"), ({"type": "open"}, "invalid_request"),
                       ({"type": "open", "unit": "nope"}, "unknown_unit"),
                       ({"type": "open", "unit": "greeting", "parameters": 3}, "invalid_request")]:
        response = server.request("POST", "/api/navigation", body=body, session=session)
        assert response.json()["error"]["code"] == code


def test_home_open_action_pushes(shared_server):
    session = shared_server.new_session()["session"]
    body = shared_server.act(session, "home", "open", "dashboard").json()
    assert body["navigation"]["type"] == "push" and body["navigation"]["unit"] == "dashboard"


def test_events_stream_every_change_in_order_and_resume_misses_nothing(shared_server):
    server = shared_server
    created = server.new_session({"unit": "counters"})
    session, seq = created["session"], created["page"]["seq"]
    reader = EventReader(server.port, session, last_event_id=seq)
    for row in [1, 2, 3]:
        server.act(session, "counters", "increment", value=row)
    ids = []
    for expected_rev in [1, 2, 3]:
        event = reader.next_event()
        assert event["event"] == "patch" and event["data"]["rev"] == expected_rev
        ids.append(event["id"])
    assert ids == [seq + 1, seq + 2, seq + 3]
    reader.close()
    # While no stream is open, more happens; resuming from the last id seen replays it in order.
    for row in [4, 5]:
        server.act(session, "counters", "increment", value=row)
    resumed = EventReader(server.port, session, last_event_id=ids[-1])
    assert [resumed.next_event()["data"]["rev"] for _ in range(2)] == [4, 5]
    resumed.close()
    by_query = EventReader(server.port, session, query=f"?lastEventId={ids[-1]}")
    assert by_query.next_event()["data"]["rev"] == 4
    by_query.close()


def test_a_stream_names_its_session_in_the_query_for_clients_without_headers(shared_server):
    """A browser tab keeps its own session and its EventSource cannot set headers: `?session=` names it, over the
    cookie (which another tab's session may have set); `X-Session-ID` still wins over both."""
    server = shared_server
    mine = server.new_session({"unit": "counters"})
    other = server.new_session({"unit": "counters"})
    cookie = {"Cookie": f"mvvmr_session={other['session']}"}
    by_query = EventReader(server.port, None, last_event_id=mine["page"]["seq"], query=f"?session={mine['session']}",
                           headers=cookie)
    assert by_query.status == 200
    server.act(other["session"], "counters", "increment", value=2)
    server.act(mine["session"], "counters", "increment", value=1)
    event = by_query.next_event()
    assert event["event"] == "patch" and event["data"]["patch"][0]["path"].startswith("/rows/0"), event
    by_query.close()
    header_wins = EventReader(server.port, other["session"], last_event_id=other["page"]["seq"],
                              query=f"?session={mine['session']}")
    assert header_wins.next_event()["data"]["patch"][0]["path"].startswith("/rows/1")
    header_wins.close()
    unknown = EventReader(server.port, None, query="?session=nosuchsession")
    assert unknown.status == 404
    unknown.close()


def test_resume_past_the_log_or_ahead_sends_snapshots(start_server):
    server = start_server()
    session = server.new_session({"unit": "counters"})["session"]
    for _ in range(300):
        server.act(session, "counters", "increment", value=1)
    current = server.request("GET", "/api/session", session=session).json()["seq"]
    for last in [1, current + 50]:
        reader = EventReader(server.port, session, last_event_id=last)
        event = reader.next_event()
        assert event["event"] == "snapshot" and event["data"]["unit"] == "counters"
        assert event["data"]["rev"] == 300 and event["id"] == current
        reader.close()
    bad = server.request("GET", "/api/events", session=session, headers={"Last-Event-ID": "-3"})
    assert bad.status == 400


def test_several_streams_per_session_each_get_every_event(shared_server):
    session = shared_server.new_session({"unit": "greeting"})["session"]
    readers = [EventReader(shared_server.port, session) for _ in range(3)]
    shared_server.act(session, "greeting", "showGreeting")
    for reader in readers:
        assert reader.next_event()["data"]["patch"][0]["value"] == "Hello David Blaine"
        reader.close()


def test_async_employee_list_arrives_as_a_pushed_patch(shared_server):
    created = shared_server.new_session({"unit": "employees"})
    session = created["session"]
    assert created["page"]["view"]["status"] == "loading"
    reader = EventReader(shared_server.port, session, last_event_id=created["page"]["seq"])
    event = reader.next_event(timeout=10)
    assert event["event"] == "patch" and event["data"]["unit"] == "employees"
    view = jsonpatch.apply_patch(created["page"]["view"], event["data"]["patch"])
    assert view["status"] == "loaded" and len(view["employees"]) >= 20
    reader.close()


def test_dashboard_clock_ticks_over_sse(shared_server):
    created = shared_server.new_session({"unit": "dashboard"})
    reader = EventReader(shared_server.port, created["session"], last_event_id=created["page"]["seq"])
    view = created["page"]["view"]
    first = reader.next_event(timeout=3)
    second = reader.next_event(timeout=3)
    for event in [first, second]:
        assert event["event"] == "patch" and event["data"]["unit"] == "dashboard"
        view = jsonpatch.apply_patch(view, event["data"]["patch"])
    assert view["clock"]["ticks"] >= 2
    reader.close()


def replay_everything(server, unit, actions, wait_for_events=0):
    """Applies the initial snapshot plus every patch (responses and SSE) with Python's jsonpatch, and
    compares both results with the final snapshot."""
    created = server.new_session({"unit": unit})
    session = created["session"]
    page = created["page"]
    reader = EventReader(server.port, session, last_event_id=page["seq"])
    from_responses = {"rev": page["rev"], "view": page["view"]}
    for action, value in actions:
        body = server.act(session, unit, action, value, rev=from_responses["rev"]).json()
        assert "error" not in body, body
        if body["navigation"] is not None:
            break
        from_responses["view"] = jsonpatch.apply_patch(from_responses["view"], body["patch"])
        from_responses["rev"] = body["rev"]
    time.sleep(wait_for_events)
    final = server.request("GET", f"/api/pages/{unit}", session=session).json()
    from_events = {"rev": page["rev"], "view": page["view"]}
    while from_events["rev"] < final["rev"]:
        event = reader.next_event()
        if event["event"] == "patch" and event["data"]["unit"] == unit:
            assert event["data"]["rev"] == from_events["rev"] + 1
            from_events["view"] = jsonpatch.apply_patch(from_events["view"], event["data"]["patch"])
            from_events["rev"] = event["data"]["rev"]
    reader.close()
    assert from_events["view"] == final["view"]
    return from_responses, final


def test_patches_replayed_with_python_jsonpatch_give_the_final_view(shared_server):
    cases = {
        "greeting": [("showGreeting", None)],
        "demo": [("refresh", None)],
        "login": [("username", "dav"), ("username", "david"), ("password", "abc"), ("password", "abcdefg"),
                  ("submit", None), ("username", "")],
        "counters": [("increment", 1), ("increment", 3), ("loadMore", None), ("increment", 12), ("loadMore", None),
                     ("increment", 25)],
        "dashboard": [("quote.shuffle", None), ("quote.shuffle", None), ("stats.reset", None)],
    }
    for unit, actions in cases.items():
        from_responses, final = replay_everything(shared_server, unit, actions, wait_for_events=0.3)
        if unit not in ("dashboard", "counters"):
            assert from_responses["view"] == final["view"], unit


def test_each_stream_asks_for_its_own_reconnect_delay_so_clients_do_not_return_at_once(shared_server):
    """`retry:` is drawn per stream from 1–3 s: a dead node's clients spread their reconnects to the next one."""
    import re
    import socket

    session = shared_server.new_session({})["session"]
    delays = []
    for _ in range(8):
        with socket.create_connection(("127.0.0.1", shared_server.port), timeout=5) as connection:
            connection.sendall(f"GET /api/events HTTP/1.1\r\nHost: x\r\nX-Session-ID: {session}\r\n\r\n".encode())
            received = b""
            while not re.search(rb"retry: (\d+)\n\n", received):
                chunk = connection.recv(4096)
                assert chunk, received
                received += chunk
            delays.append(int(re.search(rb"retry: (\d+)\n\n", received).group(1)))
    assert all(1000 <= delay <= 2999 for delay in delays), delays
    assert len(set(delays)) >= 4, delays
