"""Navigation that tells the truth (issue 13, item 4): `back` keeps the popped page for `forward`, state intact,
across a restart too; pages only their flow reaches (the demo's main and settings) refuse deep links."""
import os
import shutil
import signal
import tempfile
import time

import pytest

from conftest import EventReader, poll


def navigate(server, session, body):
    return server.request("POST", "/api/navigation", body=body, session=session)


def session_state(server, session):
    return server.request("GET", "/api/session", session=session).json()


def row_count(page, row_id):
    return next(row["count"] for row in page["view"]["rows"] if row["id"] == row_id)


def counted_twice_then_back(server):
    """home → counters (opened by the client), row 3 incremented twice, then back: the session id and the counters
    page as the last increment left it."""
    session = server.new_session()["session"]
    opened = navigate(server, session, {"type": "open", "unit": "counters"}).json()
    assert opened["navigation"]["type"] == "push" and opened["navigation"]["forward"] == []
    for _ in range(2):
        assert server.act(session, "counters", "increment", value=3).status == 200
    before = server.request("GET", "/api/pages/counters", session=session).json()
    assert row_count(before, 3) == 2
    back = navigate(server, session, {"type": "back"}).json()
    assert back["navigation"]["type"] == "back" and back["navigation"]["stack"] == ["home"]
    assert back["navigation"]["forward"] == ["counters"]
    return session, before


def sign_in(server, username="david", password="blaine123"):
    """A session at login that signed in: the login page pushed main with the user."""
    session = server.new_session({"unit": "login"})["session"]
    server.act(session, "login", "username", username)
    server.act(session, "login", "password", password)
    assert server.act(session, "login", "submit").status == 200
    # The sign-in check is asynchronous: main arrives a moment later.
    assert poll(lambda: session_state(server, session)["navigation"]["stack"] == ["login", "main"]), \
        session_state(server, session)
    return session


@pytest.fixture
def store_directory():
    directory = tempfile.mkdtemp(prefix="mvvmr-history-")
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


def test_back_then_forward_brings_the_counters_back_with_their_counts(shared_server):
    server = shared_server
    session, before = counted_twice_then_back(server)
    seq = session_state(server, session)["seq"]
    reader = EventReader(server.port, session, last_event_id=seq)
    try:
        forward = navigate(server, session, {"type": "forward"})
        assert forward.status == 200, forward
        body = forward.json()
        navigation = body["navigation"]
        assert navigation["type"] == "forward" and navigation["unit"] == "counters"
        assert navigation["stack"] == ["home", "counters"] and navigation["presented"] is None
        assert navigation["forward"] == []
        # The very page it was: the same rev and view, counts included.
        assert navigation["page"]["rev"] == before["rev"] and navigation["page"]["view"] == before["view"]
        assert row_count(navigation["page"], 3) == 2
        assert body["unit"] == "counters" and body["rev"] == before["rev"] and body["seq"] == seq + 1
        event = reader.next_event()
        assert event["event"] == "navigate" and event["id"] == seq + 1
        assert event["data"]["type"] == "forward" and event["data"]["forward"] == []
        assert row_count(event["data"]["page"], 3) == 2
    finally:
        reader.close()
    # It goes on from there.
    assert server.act(session, "counters", "increment", value=3).json()["rev"] == before["rev"] + 1
    assert row_count(server.request("GET", "/api/pages/counters", session=session).json(), 3) == 3


def test_open_of_the_page_ahead_goes_forward_and_any_new_page_clears_the_list(shared_server):
    server = shared_server
    session, before = counted_twice_then_back(server)
    opened = navigate(server, session, {"type": "open", "unit": "counters"}).json()["navigation"]
    assert opened["type"] == "forward" and row_count(opened["page"], 3) == 2

    navigate(server, session, {"type": "back"})
    pushed = navigate(server, session, {"type": "open", "unit": "greeting"}).json()["navigation"]
    assert pushed["type"] == "push" and pushed["forward"] == []
    state = session_state(server, session)
    assert state["navigation"] == {"stack": ["home", "greeting"], "presented": None, "forward": []}
    assert "counters" not in [page["unit"] for page in state["pages"]]
    # Released: an action on it is refused, and opening it again binds a fresh page.
    assert server.act(session, "counters", "increment", value=3).status == 409
    navigate(server, session, {"type": "back"})
    fresh = navigate(server, session, {"type": "open", "unit": "counters"}).json()["navigation"]
    assert fresh["type"] == "push" and row_count(fresh["page"], 3) == 0


def test_forward_with_nothing_ahead_is_409_and_changes_nothing(shared_server):
    server = shared_server
    session = server.new_session()["session"]
    before = session_state(server, session)
    refused = navigate(server, session, {"type": "forward", "unit": "ignored"})
    assert refused.status == 409, refused
    assert refused.json()["error"]["code"] == "nothing_forward"
    assert session_state(server, session) == before


def test_a_page_waiting_ahead_takes_no_action(shared_server):
    server = shared_server
    session, before = counted_twice_then_back(server)
    refused = server.act(session, "counters", "increment", value=3)
    assert refused.status == 409 and refused.json()["error"]["code"] == "page_not_bound"
    # It is still bound, as it was: a read shows it, and forward brings it back.
    assert server.request("GET", "/api/pages/counters", session=session).json()["view"] == before["view"]
    assert row_count(navigate(server, session, {"type": "forward"}).json()["navigation"]["page"], 3) == 2


def test_signed_in_back_then_forward_still_welcomes_the_user(shared_server):
    server = shared_server
    session = sign_in(server)
    back = navigate(server, session, {"type": "back"}).json()["navigation"]
    assert back["stack"] == ["login"] and back["forward"] == ["main"]
    forward = navigate(server, session, {"type": "forward"}).json()["navigation"]
    assert forward["type"] == "forward" and forward["stack"] == ["login", "main"]
    assert forward["page"]["view"]["welcome"] == "Welcome, david"


def test_dismissed_settings_come_forward_presented_with_the_theme_chosen(shared_server):
    server = shared_server
    session = sign_in(server)
    server.act(session, "main", "openSettings")
    server.act(session, "settings", "theme", "dark")
    done = server.act(session, "settings", "done").json()["navigation"]
    assert done["type"] == "back" and done["forward"] == ["settings"]
    again = navigate(server, session, {"type": "forward"}).json()["navigation"]
    assert again["stack"] == ["login", "main", "settings"] and again["presented"] == "settings"
    assert again["page"]["view"]["theme"] == "dark"


def test_a_session_asked_to_start_at_a_flow_only_unit_starts_at_the_root_and_says_why(shared_server):
    response = shared_server.request("POST", "/api/sessions", body={"unit": "main"})
    assert response.status == 201, response
    body = response.json()
    assert body["navigation"] == {"stack": ["home"], "presented": None, "forward": []}
    assert body["page"]["unit"] == "home"
    error = body["navigation_error"]
    assert error["code"] == "entry_refused" and error["details"] == {"unit": "main"} and error["message"]
    pages = [page["unit"] for page in session_state(shared_server, body["session"])["pages"]]
    assert pages == ["home"]


def test_a_deep_link_read_of_a_flow_only_page_is_403_and_creates_no_session(shared_server):
    server = shared_server
    for unit in ["settings", "main"]:
        response = server.request("GET", f"/api/pages/{unit}")
        assert response.status == 403, response
        assert response.json()["error"]["code"] == "entry_refused"
        assert response.json()["error"]["details"] == {"unit": unit}
        assert response.header("Set-Cookie") is None
    session = server.new_session()["session"]
    before = session_state(server, session)
    refused = server.request("GET", "/api/pages/main", session=session)
    assert refused.status == 403 and refused.json()["error"]["code"] == "entry_refused"
    assert session_state(server, session) == before
    # A deep-linkable unit is still bound by a read.
    assert server.request("GET", "/api/pages/greeting", session=session).status == 200


def test_a_flow_only_page_bound_by_its_flow_is_served_by_a_read(shared_server):
    server = shared_server
    session = sign_in(server)
    page = server.request("GET", "/api/pages/main", session=session)
    assert page.status == 200 and page.json()["view"]["welcome"] == "Welcome, david"


def test_an_open_that_would_push_a_flow_only_unit_is_403_and_not_logged(shared_server):
    server = shared_server
    session = server.new_session()["session"]
    before = session_state(server, session)
    log_before = server.request("GET", "/api/session/log", session=session).json()["records"]
    refused = navigate(server, session, {"type": "open", "unit": "settings"})
    assert refused.status == 403, refused
    assert refused.json()["error"] == {
        "code": "entry_refused", "message": refused.json()["error"]["message"], "details": {"unit": "settings"}}
    assert session_state(server, session) == before
    assert server.request("GET", "/api/session/log", session=session).json()["records"] == log_before


def test_open_back_to_a_flow_only_page_on_the_stack_is_no_deep_link(shared_server):
    server = shared_server
    session = sign_in(server)
    server.act(session, "main", "openSettings")
    back = navigate(server, session, {"type": "open", "unit": "main"})
    assert back.status == 200, back
    assert back.json()["navigation"]["type"] == "back" and back.json()["navigation"]["forward"] == ["settings"]
    # And settings, the page ahead, is reached by open too.
    ahead = navigate(server, session, {"type": "open", "unit": "settings"}).json()["navigation"]
    assert ahead["type"] == "forward" and ahead["presented"] == "settings"


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL])
def test_a_restart_between_back_and_forward_keeps_the_page_ahead_with_its_state(start_server, store_directory, how):
    settings = {"SESSION_STORE": "sqlite:" + os.path.join(store_directory, "sessions.sqlite")}
    server = start_server(settings)
    session, before = counted_twice_then_back(server)
    state = session_state(server, session)
    server.stop(sig=how)

    server = start_server(settings, port=server.port)
    restored = session_state(server, session)
    assert restored == state
    assert restored["navigation"]["forward"] == ["counters"]
    forward = navigate(server, session, {"type": "forward"}).json()
    assert forward["navigation"]["type"] == "forward"
    assert forward["navigation"]["page"]["view"] == before["view"] and forward["rev"] == before["rev"]
    assert row_count(forward["navigation"]["page"], 3) == 2
    assert forward["seq"] == state["seq"] + 1


def test_a_compacted_session_keeps_its_forward_list_across_a_restart(start_server, store_directory):
    settings = {"SESSION_STORE": "sqlite:" + os.path.join(store_directory, "sessions.sqlite"),
                "SNAPSHOT_AFTER_RECORDS": 2}
    server = start_server(settings)
    session, before = counted_twice_then_back(server)
    # Two more inputs after the back (pages bound by a read), so the store reaches its records for a snapshot.
    for unit in ["greeting", "demo"]:
        assert server.request("GET", f"/api/pages/{unit}", session=session).status == 200
    log = lambda: server.request("GET", "/api/session/log", session=session).json()
    # Compaction runs off the request path: wait for the snapshot that stands for the back.
    compacted = poll(lambda: (lambda body: body if body.get("snapshot", {}).get("forward") else None)(log()))
    assert compacted, log()
    assert compacted["snapshot"]["forward"] == [{"unit": "counters", "presented": False}]
    state = session_state(server, session)
    server.stop()

    server = start_server(settings, port=server.port)
    assert session_state(server, session) == state
    forward = navigate(server, session, {"type": "forward"}).json()["navigation"]
    assert forward["page"]["view"] == before["view"] and row_count(forward["page"], 3) == 2
