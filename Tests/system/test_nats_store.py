"""The NATS JetStream session store (SESSION_STORE=nats://HOST:PORT): a session outlives its node (kill -9) and
continues on another one, two nodes on one NATS never both accept an input of one session (the loser's action is
refused with 503 store_unavailable and its next request restores the session from the store),
and with NATS down actions answer 503 store_unavailable, /readyz says so, untouched live pages still read, and
everything works again by itself once NATS is back (a node started while NATS is down included).

Each test starts its own nats-server (JetStream, a temporary store directory) on a free loopback port, and stops it."""
import json
import os
import shutil
import socket
import subprocess
import tempfile
import re
import time
import uuid

import pytest

from conftest import EventReader, free_port, poll


class NATSServer:
    """A nats-server with JetStream on a free loopback port; `stop()` and `start()` again keep its port and data."""

    def __init__(self):
        self.port = free_port()
        self.directory = tempfile.mkdtemp(prefix="mvvmr-nats-")
        self.process = None
        self.start()

    @property
    def url(self):
        return f"nats://127.0.0.1:{self.port}"

    def start(self):
        log = open(os.path.join(self.directory, "nats-server.log"), "ab")
        self.process = subprocess.Popen(
            ["nats-server", "-js", "-a", "127.0.0.1", "-p", str(self.port), "-sd", os.path.join(self.directory, "jetstream")],
            stdout=subprocess.DEVNULL, stderr=log)
        log.close()
        deadline = time.time() + 10
        while time.time() < deadline:
            assert self.process.poll() is None, "nats-server exited at once"
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("nats-server did not accept connections")

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)

    def remove(self):
        self.stop()
        shutil.rmtree(self.directory, ignore_errors=True)


@pytest.fixture
def nats():
    server = NATSServer()
    yield server
    server.remove()


def counts(page):
    return {row["id"]: row["count"] for row in page["view"]["rows"]}


def increment(server, session, row, key=None):
    return server.act(session, "counters", "increment", row, headers={"Idempotency-Key": key or uuid.uuid4().hex})


def page(server, session):
    response = server.request("GET", "/api/pages/counters", session=session)
    assert response.status == 200, response
    return response.json()


def assert_store_unavailable(response):
    assert response.status == 503, response
    assert response.json()["error"]["code"] == "store_unavailable"


def test_a_session_outlives_its_node_and_continues_on_another(start_server, nats):
    first = start_server({"SESSION_STORE": nats.url})
    session = first.new_session({"unit": "counters"})["session"]
    for row in [1, 2, 2, 3, 3, 3]:
        assert increment(first, session, row).status == 200
    first.process.kill()  # kill -9: only what JetStream acknowledged is left
    first.process.wait(timeout=10)

    second = start_server({"SESSION_STORE": nats.url})
    restored = page(second, session)
    assert {row: count for row, count in counts(restored).items() if count} == {1: 1, 2: 2, 3: 3}
    assert restored["rev"] == 6
    assert increment(second, session, 4).status == 200
    assert counts(page(second, session))[4] == 1
    assert second.request("GET", "/readyz").json() == {"status": "ready"}


def takeovers(server):
    """How many copies the node dropped because another node restored their session."""
    text = server.request("GET", "/metrics").body.decode()
    found = re.search(r"^mvvmr_session_takeovers_total (\d+)", text, re.M)
    return int(found.group(1)) if found else 0


def test_two_nodes_never_both_hold_one_session_and_its_history_stays_serial(start_server, nats):
    settings = {"SESSION_STORE": nats.url}
    one, two = start_server(settings), start_server(settings)
    session = one.new_session({"unit": "counters"})["session"]
    assert increment(one, session, 1).status == 200
    assert page(one, session)["rev"] == 1
    # The second node restores the session from the store and announces it: the first drops its copy.
    assert increment(two, session, 2).status == 200
    assert increment(two, session, 2).status == 200
    assert poll(lambda: takeovers(one) == 1), "the first node kept its stale copy"
    # So the first node's next request restores the session, with the second node's inputs, rather than act on
    # (or show) its old copy; and it takes the session back in turn.
    assert {row: count for row, count in counts(page(one, session)).items() if count} == {1: 1, 2: 2}
    assert increment(one, session, 3).status == 200
    view = page(one, session)
    assert {row: count for row, count in counts(view).items() if count} == {1: 1, 2: 2, 3: 1}
    assert view["rev"] == 4
    assert poll(lambda: takeovers(two) == 1), "the second node kept its stale copy"
    assert increment(two, session, 4).status == 200
    view = page(two, session)
    assert {row: count for row, count in counts(view).items() if count} == {1: 1, 2: 2, 3: 1, 4: 1}
    assert view["rev"] == 5
    # A copy that missed its notice is still fenced: Tests/MVVMRServerTests/NATSSessionStoreTests.swift covers it.


def test_with_nats_down_actions_are_refused_readyz_says_so_and_all_recovers(start_server, nats):
    server = start_server({"SESSION_STORE": nats.url})
    acting = server.new_session({"unit": "counters"})["session"]
    reading = server.new_session({"unit": "counters"})["session"]
    assert increment(server, acting, 1).status == 200
    assert increment(server, reading, 5).status == 200
    assert server.request("GET", "/readyz").status == 200

    nats.stop()
    assert poll(lambda: server.request("GET", "/readyz").status == 503), "readyz did not turn 503"
    ready = server.request("GET", "/readyz")
    assert ready.json() == {"status": "store_unavailable"}
    key = uuid.uuid4().hex
    started = time.time()
    assert_store_unavailable(increment(server, acting, 2, key))
    assert time.time() - started < 5, "the refusal did not come quickly"
    # A live page no action touched meanwhile still reads; the refused session cannot until the store is back.
    assert counts(page(server, reading))[5] == 1
    assert_store_unavailable(server.request("GET", "/api/pages/counters", session=acting))
    assert server.request("GET", "/healthz").status == 200
    assert server.process.poll() is None

    nats.start()
    assert poll(lambda: server.request("GET", "/readyz").status == 200), "readyz did not turn 200 again"
    # The refused action, sent again with its key, applies now (it was not kept), once.
    again = increment(server, acting, 2, key)
    assert again.status == 200 and again.header("Idempotent-Replayed") is None
    view = page(server, acting)
    assert {row: count for row, count in counts(view).items() if count} == {1: 1, 2: 1}
    assert view["rev"] == 2
    assert increment(server, reading, 5).status == 200
    assert counts(page(server, reading))[5] == 2


def test_a_node_started_while_nats_is_down_is_not_ready_until_nats_is_up(start_server, nats):
    nats.stop()
    server = start_server({"SESSION_STORE": nats.url})
    assert server.request("GET", "/healthz").status == 200
    ready = server.request("GET", "/readyz")
    assert ready.status == 503 and ready.json() == {"status": "store_unavailable"}
    document = server.request("GET", "/api/openapi.json").json()
    assert "503" in document["paths"]["/readyz"]["get"]["responses"]
    assert "store_unavailable" in document["components"]["schemas"]["Status"]["properties"]["status"]["enum"]
    assert_store_unavailable(server.request("POST", "/api/sessions", body={"unit": "counters"}))

    nats.start()
    assert poll(lambda: server.request("GET", "/readyz").status == 200), "readyz did not turn 200"
    session = server.new_session({"unit": "counters"})["session"]
    assert increment(server, session, 1).status == 200
    assert counts(page(server, session))[1] == 1


def test_a_session_held_open_by_a_stream_on_one_node_is_not_expired_by_anothers_sweep(start_server, nats):
    """A session with an event stream open never goes idle on its node, however long since its last input. With a
    shared store the other nodes sweep its idle sessions too, from the activity the store holds: the node with the
    stream keeps that fresh, so they leave the session alone. A session with no stream still expires."""
    settings = {"SESSION_STORE": nats.url, "SESSION_TTL_SECONDS": 3}
    one, two = start_server(settings), start_server(settings)
    held = one.new_session({"unit": "counters"})
    idle = one.new_session({"unit": "counters"})["session"]
    stream = EventReader(one.port, held["session"], last_event_id=held["page"]["seq"])
    assert stream.status == 200
    try:
        time.sleep(8)  # well past the idle time: both nodes' sweeps (every second) have run several times
        assert two.request("GET", "/api/session", session=idle).status == 404, "an idle session expires"
        assert two.request("GET", "/api/session", session=held["session"]).status == 200, \
            "the other node's sweep deleted a session a stream holds open"
    finally:
        stream.close()


def test_a_board_post_on_one_node_reaches_the_boards_open_on_every_node_once(start_server, nats):
    """Topics between nodes: with the JetStream store each node's topic bus is core NATS (`mvvmr.topic.<name>`), so
    a post reaches every listening session on every node, the posting one included, each exactly once."""
    settings = {"SESSION_STORE": nats.url}
    one, two = start_server(settings), start_server(settings)
    boards = []
    for node in (one, one, two, two):
        session = node.new_session({"unit": "board"})
        boards.append((node, session["session"], EventReader(node.port, session["session"], last_event_id=session["page"]["seq"])))
    time.sleep(0.5)  # every node has subscribed to the topic on NATS
    node, session, _ = boards[2]
    assert node.act(session, "board", "draft", "hello from node two").status == 200
    assert node.act(session, "board", "post").status == 200
    try:
        for node, session, reader in boards:
            def shows():
                view = node.request("GET", "/api/pages/board", session=session).json()["view"]
                return [message["text"] for message in view["messages"]]
            assert poll(lambda: shows() == ["hello from node two"], timeout=5), (node.port, shows())
            # It arrived over the stream as a patch, once.
            seen = []
            deadline = time.time() + 5
            while time.time() < deadline and not any("hello from node two" in json.dumps(e["data"]) for e in seen):
                seen.append(reader.next_event(timeout=max(0.1, deadline - time.time())))
            assert sum(json.dumps(e["data"]).count("hello from node two") for e in seen if e["event"] == "patch") == 1
        time.sleep(0.5)
        for node, session, _ in boards:
            view = node.request("GET", "/api/pages/board", session=session).json()["view"]
            assert [message["text"] for message in view["messages"]] == ["hello from node two"], "delivered twice"
    finally:
        for _, _, reader in boards:
            reader.close()
