"""Several MVVMR nodes behind a real nginx, configured by the project's own deploy/nginx template (the file
docker-compose.yml uses). Each session's requests must reach one node whichever way they name it — the
X-Session-ID header, the event stream's ?session= (a browser tab's EventSource cannot send headers), or the
mvvmr_session cookie — with the header first, since a browser tab's cookie may belong to another tab; sessions
spread over the nodes; and event streams pass through unbuffered.

Which node served a request is read from each node's own /metrics (requests by route and status), so nothing
is added to the nodes for the test."""
import json
import re
import secrets
import socket
import time

import pytest

from conftest import EventReader, Server
from proxying import Nginx, fill_template


@pytest.fixture(scope="module")
def cluster():
    nodes = [Server({"TRUST_FORWARDED_HEADERS": "true", "MAX_CONNECTIONS_PER_IP": 512}) for _ in range(3)]
    proxy = Nginx([node.port for node in nodes])
    yield nodes, proxy
    proxy.stop()
    for node in nodes:
        node.stop()


def via_proxy(proxy, method, path, headers=None, body=None):
    return Server.request(proxy, method, path, headers=headers, body=body)


def counts(node):
    """Requests the node answered, by (route, status)."""
    text = node.request("GET", "/metrics").body.decode()
    found = {}
    for route, status, value in re.findall(r'mvvmr_http_requests_total\{route="([^"]+)",status="(\d+)"\} (\d+)', text):
        found[(route, status)] = int(value)
    return found


def served(nodes, before, route, status):
    """Per node, how many requests of (route, status) it answered since `before` (a list of `counts`)."""
    return [counts(node).get((route, status), 0) - earlier.get((route, status), 0) for node, earlier in zip(nodes, before)]


def unknown_id():
    """A well-formed session id no node has: every request naming it is a 404 unknown_session, counted."""
    return secrets.token_urlsafe(18)


def test_the_template_is_filled_whole_or_not_at_all():
    with pytest.raises(KeyError):
        fill_template("server ${MVVMR_NODE_1}; server ${MVVMR_NODE_2};", {"MVVMR_NODE_1": "a:1"})
    assert fill_template("server ${MVVMR_NODE_1};", {"MVVMR_NODE_1": "a:1"}) == "server a:1;"


def test_a_session_id_reaches_one_node_by_header_query_or_cookie(cluster):
    nodes, proxy = cluster
    for _ in range(5):
        session = unknown_id()
        before = [counts(node) for node in nodes]
        for _ in range(4):
            assert via_proxy(proxy, "GET", "/api/session", headers={"X-Session-ID": session}).status == 404
            assert via_proxy(proxy, "GET", "/api/session", headers={"Cookie": f"mvvmr_session={session}"}).status == 404
            assert via_proxy(proxy, "GET", f"/api/events?session={session}").status == 404
        by_route = served(nodes, before, "/api/session", "404")
        streams = served(nodes, before, "/api/events", "404")
        assert sorted(by_route) == [0, 0, 8], by_route
        assert streams == [4 if count else 0 for count in by_route], (by_route, streams)


def test_the_header_wins_over_another_tabs_cookie(cluster):
    nodes, proxy = cluster
    # Two ids that the proxy sends to different nodes (found by trying: the hash spreads them).
    home = {}
    while len(set(home.values())) < 2 and len(home) < 40:
        session = unknown_id()
        before = [counts(node) for node in nodes]
        via_proxy(proxy, "GET", "/api/session", headers={"X-Session-ID": session})
        home[session] = served(nodes, before, "/api/session", "404").index(1)
    first = next(iter(home))
    second = next(session for session, node in home.items() if node != home[first])
    before = [counts(node) for node in nodes]
    for _ in range(3):
        via_proxy(proxy, "GET", "/api/session", headers={"X-Session-ID": first, "Cookie": f"mvvmr_session={second}"})
        via_proxy(proxy, "GET", f"/api/events?session={first}", headers={"Cookie": f"mvvmr_session={second}"})
    assert served(nodes, before, "/api/session", "404")[home[first]] == 3
    assert served(nodes, before, "/api/events", "404")[home[first]] == 3


def test_sessions_spread_over_the_nodes(cluster):
    nodes, proxy = cluster
    before = [counts(node) for node in nodes]
    for _ in range(90):
        via_proxy(proxy, "GET", "/api/session", headers={"X-Session-ID": unknown_id()})
    spread = served(nodes, before, "/api/session", "404")
    assert sum(spread) == 90
    assert all(count >= 10 for count in spread), spread


def test_an_event_stream_passes_through_unbuffered_and_actions_reach_the_sessions_node(cluster):
    nodes, proxy = cluster
    # A session made on the node the proxy sends its id to (with a store of its own per node, only that node has
    # it; a store the nodes share lifts that, and then any node restores it).
    for _ in range(30):
        for index, node in enumerate(nodes):
            created = node.new_session({"unit": "counters"})
            before = [counts(each) for each in nodes]
            via_proxy(proxy, "GET", "/api/session", headers={"X-Session-ID": created["session"]})
            if served(nodes, before, "/api/session", "200")[index] == 1:
                break
        else:
            continue
        break
    else:
        pytest.fail("no session id was routed to the node that made it in 90 tries")
    session, seq = created["session"], created["page"]["seq"]
    reader = EventReader(proxy.port, None, last_event_id=seq, query=f"?session={session}")
    assert reader.status == 200
    answer = via_proxy(proxy, "POST", "/api/pages/counters/actions", headers={"X-Session-ID": session},
                       body={"action": "increment", "value": 1})
    assert answer.status == 200, answer
    started = time.monotonic()
    event = reader.next_event(timeout=3)
    assert event["event"] == "patch" and event["data"]["rev"] == 1
    assert time.monotonic() - started < 1, "the event waited in a buffer"
    reader.close()
