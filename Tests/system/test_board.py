"""The shared board (docs/DEMO.md): a message posted in one session reaches, live over SSE, every other session that
has the board open; a board opened later shows only what arrives after; after a crash (kill -9) and a restart on the
same store, every board comes back with its messages, replayed from its session's log; bad input changes nothing."""
import os
import shutil
import signal
import tempfile
import time

import jsonpatch
import pytest

from conftest import EventReader, poll


def metric(server, name):
    for line in server.request("GET", "/metrics").body.decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return 0


def board(server, session):
    response = server.request("GET", "/api/pages/board", session=session)
    assert response.status == 200, response
    return response.json()


def texts(view):
    return [message["text"] for message in view["messages"]]


def post(server, session, text):
    assert server.act(session, "board", "draft", text).status == 200
    response = server.act(session, "board", "post")
    assert response.status == 200, response
    return response.json()


def events_until(reader, check, timeout=10):
    """Events read from `reader` until one satisfies `check` (returned with the ones before it)."""
    seen = []
    deadline = time.time() + timeout
    while time.time() < deadline:
        event = reader.next_event(timeout=max(0.1, deadline - time.time()))
        seen.append(event)
        if check(event):
            return seen
    raise TimeoutError(f"no matching event among {seen}")


@pytest.fixture
def store_settings():
    directory = tempfile.mkdtemp(prefix="mvvmr-board-")
    yield {"SESSION_STORE": "sqlite:" + os.path.join(directory, "sessions.sqlite"), "SESSION_DURABILITY": "process"}
    shutil.rmtree(directory, ignore_errors=True)


def test_the_board_is_on_the_menu_and_starts_empty(start_server):
    server = start_server()
    session = server.new_session()["session"]
    home = server.request("GET", "/api/pages/home", session=session).json()
    assert [item["id"] for item in home["view"]["items"]][-1] == "board"
    opened = server.act(session, "home", "open", "board").json()
    assert opened["navigation"]["unit"] == "board"
    view = opened["navigation"]["page"]["view"]
    assert set(view) == {"author", "draft", "messages", "count"}
    assert view["author"].startswith("guest-") and view["draft"] == "" and view["messages"] == [] and view["count"] == 0
    assert {action["name"]: action["value"] for action in opened["navigation"]["page"]["actions"]} == {
        "draft": "string", "post": "none"}


def test_a_post_reaches_the_other_session_live_and_a_later_board_sees_only_later_posts(start_server):
    server = start_server()
    first = server.new_session({"unit": "board"})["session"]
    second = server.new_session({"unit": "board"})["session"]
    first_author = board(server, first)["view"]["author"]
    second_view = board(server, second)
    reader = EventReader(server.port, second, last_event_id=server.request("GET", "/api/session", session=second).json()["seq"])
    assert reader.status == 200
    answer = post(server, first, "Hello from the first session")
    # The post clears the poster's draft at once; the message comes back to it through the topic, like to everyone.
    assert answer["patch"] == [{"op": "replace", "path": "/draft", "value": ""}]
    events = events_until(reader, lambda event: event["event"] == "patch" and event["data"]["unit"] == "board")
    patch = events[-1]["data"]
    assert patch["rev"] == second_view["rev"] + 1
    shown = jsonpatch.apply_patch(second_view["view"], patch["patch"])
    expected = [{"id": 1, "author": first_author, "text": "Hello from the first session"}]
    assert shown["messages"] == expected and shown["count"] == 1
    assert board(server, second)["view"] == shown
    assert poll(lambda: board(server, first)["view"]["messages"] == expected)
    reader.close()

    # A board opened now shows nothing of what came before, and everything after.
    third = server.new_session({"unit": "board"})["session"]
    assert board(server, third)["view"]["messages"] == []
    post(server, second, "  Second  ")
    for session in (first, second, third):
        assert poll(lambda: texts(board(server, session)["view"])[-1:] == ["Second"])
    assert texts(board(server, third)["view"]) == ["Second"]
    assert texts(board(server, first)["view"]) == ["Hello from the first session", "Second"]
    # A session on another page gets nothing.
    elsewhere = server.new_session()["session"]
    post(server, first, "Third")
    assert poll(lambda: texts(board(server, third)["view"]) == ["Second", "Third"])
    log = server.request("GET", "/api/session/log", session=elsewhere).json()
    assert all(record["input"]["type"] != "topic" for record in log["records"])
    assert any(record["input"] == {"type": "topic", "topic": "board", "value": {"author": first_author, "text": "Third"}}
               for record in server.request("GET", "/api/session/log", session=third).json()["records"])


def test_bad_input_changes_nothing(start_server):
    server = start_server()
    session = server.new_session({"unit": "board"})["session"]
    listener = server.new_session({"unit": "board"})["session"]
    assert server.act(session, "board", "draft", "x" * 500).status == 200
    before = board(server, session)
    for action, value in [("post", "now"), ("post", 1), ("draft", "y" * 501), ("draft", 42), ("draft", None)]:
        # No value at all (None) is `null`, which a string action refuses too.
        response = server.act(session, "board", action, value)
        assert response.status == 422, (action, value, response)
        assert response.json()["error"]["code"] == "invalid_value"
    assert board(server, session) == before
    # An empty draft posts nothing.
    assert server.act(session, "board", "draft", "").status == 200
    assert server.act(session, "board", "post").json()["patch"] == []
    time.sleep(0.3)
    assert board(server, listener)["view"]["messages"] == []


@pytest.mark.parametrize("compaction", [{}, {"SNAPSHOT_AFTER_RECORDS": 4}], ids=["replayed", "from-snapshot"])
def test_boards_come_back_with_their_messages_after_kill_9(start_server, store_settings, compaction):
    """Replayed from the whole log, or (a snapshot every 4 records: the board saves its state) from a snapshot and
    the records after it."""
    store_settings = {**store_settings, **compaction}
    server = start_server(store_settings)
    first = server.new_session({"unit": "board"})["session"]
    second = server.new_session({"unit": "board"})["session"]
    post(server, first, "one")
    post(server, second, "two")
    post(server, first, "three")
    for session in (first, second):
        assert poll(lambda: texts(board(server, session)["view"]) == ["one", "two", "three"])
    views = {session: board(server, session) for session in (first, second)}
    if compaction:
        assert poll(lambda: metric(server, "mvvmr_session_compactions_total") >= 2)
    server.process.send_signal(signal.SIGKILL)
    server.process.wait()

    restarted = start_server(store_settings, port=server.port)
    for session in (first, second):
        assert board(restarted, session) == views[session]
    # Both are live again: a new post reaches both (each was restored by its request above).
    post(restarted, second, "four")
    for session in (first, second):
        assert poll(lambda: texts(board(restarted, session)["view"]) == ["one", "two", "three", "four"])


def test_a_passivated_board_comes_back_with_what_was_posted_while_it_was_away_once_each(start_server, store_settings):
    # Room for two sessions in memory: a third one passivates the least recently used (kept in the store).
    server = start_server({**store_settings, "MAX_SESSIONS": 2})
    away = server.new_session({"unit": "board"})["session"]
    post(server, away, "before")
    assert poll(lambda: texts(board(server, away)["view"]) == ["before"])
    stays = server.new_session({"unit": "board"})["session"]
    board(server, stays)
    server.new_session()  # the third: `away` is passivated
    assert poll(lambda: metric(server, "mvvmr_session_passivations_total") >= 1)
    post(server, stays, "while away")
    assert poll(lambda: texts(board(server, stays)["view"]) == ["while away"])
    # Restored from its log, then caught up on what the server kept of the topic since its last message.
    assert texts(board(server, away)["view"]) == ["before", "while away"]
    post(server, stays, "after")
    assert poll(lambda: texts(board(server, away)["view"]) == ["before", "while away", "after"])
    # Each once, in its log too: restored again (passivated by two new sessions), it shows the same.
    server.new_session()
    server.new_session()
    assert poll(lambda: metric(server, "mvvmr_session_passivations_total") >= 2)
    assert texts(board(server, away)["view"]) == ["before", "while away", "after"]
