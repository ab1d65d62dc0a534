"""Every endpoint of the page protocol, and every error code, over real sockets."""
import json
import re

import pytest

from conftest import EventReader

DEMO_UNITS = ["home", "greeting", "demo", "login", "main", "settings", "employees", "counters", "dashboard", "board"]


def error_code(response):
    return response.json()["error"]["code"]


def test_units_lists_every_demo_unit_with_actions(shared_server):
    response = shared_server.request("GET", "/api/units")
    assert response.status == 200
    body = response.json()
    assert body["root"] == "home"
    names = [unit["name"] for unit in body["units"]]
    assert sorted(names) == sorted(DEMO_UNITS)
    greeting = next(unit for unit in body["units"] if unit["name"] == "greeting")
    assert greeting["route"] == "/greeting"
    assert greeting["actions"] == [{"name": "showGreeting", "value": "none"}]
    login = next(unit for unit in body["units"] if unit["name"] == "login")
    assert {"name": "username", "value": "string"} in login["actions"]
    entries = {unit["name"]: unit["entry"] for unit in body["units"]}
    assert entries == {name: "flow_only" if name in ("main", "settings") else "deep_link" for name in DEMO_UNITS}


def test_new_session_binds_the_root_and_sets_a_safe_cookie(shared_server):
    response = shared_server.request("POST", "/api/sessions")
    assert response.status == 201
    body = response.json()
    assert re.fullmatch(r"[A-Za-z0-9_-]{24}", body["session"])
    assert body["navigation"] == {"stack": ["home"], "presented": None, "forward": []}
    page = body["page"]
    assert page["unit"] == "home" and page["rev"] == 0 and page["session"] == body["session"]
    assert page["seq"] >= 1
    cookie = response.header("Set-Cookie")
    assert cookie.startswith(f"mvvmr_session={body['session']}")
    for attribute in ["HttpOnly", "SameSite=Lax", "Path=/"]:
        assert attribute in cookie
    assert "Secure" not in cookie


def test_new_session_ids_are_unique(shared_server):
    ids = {shared_server.new_session()["session"] for _ in range(50)}
    assert len(ids) == 50


def test_new_session_can_start_at_a_unit(shared_server):
    body = shared_server.new_session({"unit": "greeting"})
    assert body["navigation"]["stack"] == ["greeting"]
    assert body["page"]["view"]["greeting"] == "Say hello to who?"


def test_new_session_at_unknown_unit_is_refused(shared_server):
    response = shared_server.request("POST", "/api/sessions", body={"unit": "nope"})
    assert response.status == 404 and error_code(response) == "unknown_unit"
    assert response.header("Set-Cookie") is None


def test_session_state_lists_navigation_and_pages(shared_server):
    session = shared_server.new_session()["session"]
    shared_server.request("GET", "/api/pages/greeting", session=session)
    response = shared_server.request("GET", "/api/session", session=session)
    assert response.status == 200
    body = response.json()
    assert body["session"] == session
    assert body["navigation"] == {"stack": ["home"], "presented": None, "forward": []}
    assert sorted(page["unit"] for page in body["pages"]) == ["greeting", "home"]
    assert body["seq"] == 2


def test_unknown_or_malformed_session_is_refused_never_adopted(shared_server):
    for identifier in ["A" * 24, "not-a-session", "../../etc/passwd", ""]:
        response = shared_server.request("GET", "/api/session", headers={"X-Session-ID": identifier} if identifier else {})
        assert response.status == 404 and error_code(response) == "unknown_session", identifier


def test_cookie_works_and_the_header_wins_over_it(shared_server):
    first = shared_server.new_session()["session"]
    second = shared_server.new_session()["session"]
    by_cookie = shared_server.request("GET", "/api/session", headers={"Cookie": f"mvvmr_session={first}"})
    assert by_cookie.json()["session"] == first
    both = shared_server.request("GET", "/api/session", headers={"Cookie": f"mvvmr_session={first}", "X-Session-ID": second})
    assert both.json()["session"] == second


def test_delete_ends_the_session_and_its_streams(shared_server):
    session = shared_server.new_session()["session"]
    reader = EventReader(shared_server.port, session)
    response = shared_server.request("DELETE", "/api/session", session=session)
    assert response.status == 204
    assert "Max-Age=0" in response.header("Set-Cookie")
    event = reader.next_event()
    assert event["event"] == "expired" and event["data"] == {"reason": "deleted"}
    reader.close()
    assert shared_server.request("GET", "/api/session", session=session).status == 404
    assert shared_server.request("DELETE", "/api/session", session=session).status == 404


def test_get_page_without_credentials_creates_a_session_at_that_unit(shared_server):
    response = shared_server.request("GET", "/api/pages/counters")
    assert response.status == 200
    body = response.json()
    assert body["unit"] == "counters" and body["navigation"]["stack"] == ["counters"]
    assert response.header("Set-Cookie").startswith("mvvmr_session=" + body["session"])
    assert body["view"]["rows"][0] == {"id": 1, "title": "Row 1", "count": 0}


def test_get_page_of_unknown_unit_creates_nothing(shared_server):
    response = shared_server.request("GET", "/api/pages/nope")
    assert response.status == 404 and error_code(response) == "unknown_unit"
    assert response.header("Set-Cookie") is None


def test_get_page_binds_without_changing_the_stack_and_emits_a_snapshot(shared_server):
    session = shared_server.new_session()["session"]
    before = shared_server.request("GET", "/api/session", session=session).json()["seq"]
    reader = EventReader(shared_server.port, session, last_event_id=before)
    page = shared_server.request("GET", "/api/pages/demo", session=session).json()
    assert page["navigation"]["stack"] == ["home"]
    assert page["view"] == {"button": {"title": "Tap", "color": "blue"}}
    event = reader.next_event()
    assert event["event"] == "snapshot" and event["data"]["unit"] == "demo" and event["id"] == before + 1
    reader.close()


def test_query_parameters_reach_the_page_as_route_parameters(shared_server):
    # The counters page reads an optional `page` parameter? Not every page does; the server must at least
    # accept parameters without error.
    response = shared_server.request("GET", "/api/pages/greeting?id=7&x=a%20b")
    assert response.status == 200


def test_action_answers_with_a_patch_and_a_new_rev(shared_server):
    session = shared_server.new_session({"unit": "greeting"})["session"]
    response = shared_server.act(session, "greeting", "showGreeting", rev=0)
    assert response.status == 200
    body = response.json()
    assert body["unit"] == "greeting" and body["rev"] == 1 and body["navigation"] is None
    assert body["patch"] == [{"op": "replace", "path": "/greeting", "value": "Hello David Blaine"}]
    again = shared_server.act(session, "greeting", "showGreeting").json()
    assert again["rev"] == 1 and again["patch"] == [] and again["seq"] == body["seq"]


def test_a_client_behind_gets_the_changes_it_missed(shared_server):
    session = shared_server.new_session({"unit": "counters"})["session"]
    for _ in range(3):
        shared_server.act(session, "counters", "increment", value=1)
    body = shared_server.act(session, "counters", "increment", value=2, rev=1).json()
    assert body["rev"] == 4
    ops = body["patch"]
    assert {"op": "replace", "path": "/rows/0/count", "value": 3} in ops
    assert {"op": "replace", "path": "/rows/1/count", "value": 1} in ops


def test_counter_increment_is_one_operation_on_that_row(shared_server):
    session = shared_server.new_session({"unit": "counters"})["session"]
    body = shared_server.act(session, "counters", "increment", value=5, rev=0).json()
    assert body["patch"] == [{"op": "replace", "path": "/rows/4/count", "value": 1}]


def test_errors_change_nothing(shared_server):
    session = shared_server.new_session({"unit": "login"})["session"]
    state = shared_server.request("GET", "/api/session", session=session).json()
    bad = [
        (b"{not json", 400, "invalid_json"),
        ({"value": 1}, 400, "invalid_request"),
        ({"action": 3}, 400, "invalid_request"),
        ({"action": "username", "value": "x", "rev": -1}, 400, "invalid_request"),
        ({"action": "username", "value": "x", "rev": 99}, 400, "invalid_request"),
        ({"action": "username", "value": "x", "rev": "0"}, 400, "invalid_request"),
        ({"action": "fly"}, 422, "unknown_action"),
        ({"action": "username", "value": 42}, 422, "invalid_value"),
        ([1, 2], 400, "invalid_request"),
    ]
    for body, status, code in bad:
        response = shared_server.request("POST", "/api/pages/login/actions", body=body, session=session)
        assert (response.status, error_code(response)) == (status, code), (body, response)
        assert "message" in response.json()["error"]
    unknown = shared_server.request("POST", "/api/pages/login/actions", body={"action": "fly"}, session=session).json()
    assert unknown["error"]["details"]["allowed"] == ["username", "password", "submit"]
    assert shared_server.request("GET", "/api/session", session=session).json() == state


def test_action_for_a_page_not_bound_or_unknown_unit(shared_server):
    session = shared_server.new_session()["session"]
    response = shared_server.act(session, "counters", "loadMore")
    assert response.status == 409 and error_code(response) == "page_not_bound"
    response = shared_server.act(session, "nope", "x")
    assert response.status == 404 and error_code(response) == "unknown_unit"
    response = shared_server.act("B" * 24, "greeting", "showGreeting")
    assert response.status == 404 and error_code(response) == "unknown_session"


def test_unknown_path_and_wrong_method(shared_server):
    response = shared_server.request("GET", "/api/nope")
    assert response.status == 404 and error_code(response) == "not_found"
    response = shared_server.request("PUT", "/api/session")
    assert response.status == 405 and error_code(response) == "method_not_allowed"
    assert set(response.header("Allow").split(", ")) == {"GET", "HEAD", "DELETE"}


def test_body_over_the_limit_is_refused(start_server):
    server = start_server({"MAX_BODY_BYTES": 1024})
    session = server.new_session()["session"]
    response = server.request("POST", "/api/pages/home/actions", body=json.dumps({"action": "open", "value": "x" * 4000}), session=session)
    assert response.status == 413 and error_code(response) == "payload_too_large"


def test_origin_is_checked_on_state_changing_requests(start_server):
    server = start_server({"ALLOWED_ORIGINS": "https://app.example.com"})
    evil = server.request("POST", "/api/sessions", headers={"Origin": "https://evil.example"})
    assert evil.status == 403 and error_code(evil) == "forbidden_origin"
    assert server.request("POST", "/api/sessions", headers={"Origin": "https://app.example.com"}).status == 201
    same = server.request("POST", "/api/sessions", headers={"Origin": f"http://127.0.0.1:{server.port}"})
    assert same.status == 201
    session = same.json()["session"]
    blocked = server.request("POST", "/api/pages/home/actions", body={"action": "open", "value": "greeting"},
                             session=session, headers={"Origin": "null"})
    assert blocked.status == 403
    assert server.request("DELETE", "/api/session", session=session, headers={"Origin": "https://evil.example"}).status == 403
    # Reads are not state-changing: no origin check.
    assert server.request("GET", "/api/session", session=session, headers={"Origin": "https://evil.example"}).status == 200


def test_public_origin_makes_the_cookie_secure(start_server):
    server = start_server({"PUBLIC_ORIGIN": "https://app.example.com"})
    response = server.request("POST", "/api/sessions", headers={"Origin": "https://app.example.com"})
    assert response.status == 201 and "Secure" in response.header("Set-Cookie")


def test_forwarded_headers_only_when_trusted(start_server):
    untrusted = start_server()
    response = untrusted.request("POST", "/api/sessions", headers={"X-Forwarded-Proto": "https"})
    assert "Secure" not in response.header("Set-Cookie")
    trusted = start_server({"TRUST_FORWARDED_HEADERS": "true"})
    response = trusted.request("POST", "/api/sessions", headers={"X-Forwarded-Proto": "https"})
    assert "Secure" in response.header("Set-Cookie")


def test_behind_a_trusted_proxy_a_client_is_limited_as_the_address_the_proxy_appended(start_server):
    # The leftmost X-Forwarded-For entries are whatever the client sent; only the rightmost is the proxy's word.
    server = start_server({"TRUST_FORWARDED_HEADERS": "true", "NEW_SESSIONS_PER_IP_PER_MINUTE": 2})
    statuses = [server.request("POST", "/api/sessions", headers={"X-Forwarded-For": f"10.9.9.{i}, 203.0.113.7"}).status
                for i in range(3)]
    assert statuses == [201, 201, 429]
    other = server.request("POST", "/api/sessions", headers={"X-Forwarded-For": "10.9.9.1, 203.0.113.8"})
    assert other.status == 201


def test_new_sessions_per_address_are_rate_limited(start_server):
    server = start_server({"NEW_SESSIONS_PER_IP_PER_MINUTE": 3})
    for _ in range(3):
        assert server.request("POST", "/api/sessions").status == 201
    limited = server.request("POST", "/api/sessions")
    assert limited.status == 429 and error_code(limited) == "rate_limited"
    assert 1 <= int(limited.header("Retry-After")) <= 60
    assert server.request("GET", "/api/pages/greeting").status == 429


def test_idempotent_action_runs_once_and_replays_its_response(shared_server):
    session = shared_server.new_session({"unit": "counters"})["session"]
    headers = {"Idempotency-Key": "key-1"}
    first = shared_server.act(session, "counters", "increment", value=1, headers=headers)
    second = shared_server.request("POST", "/api/pages/counters/actions", body='{ "value": 1, "action": "increment" }',
                                   session=session, headers=headers)
    assert first.status == second.status == 200
    assert first.json() == second.json()
    assert second.header("Idempotent-Replayed") == "true"
    view = shared_server.request("GET", "/api/pages/counters", session=session).json()
    assert view["view"]["rows"][0]["count"] == 1 and view["rev"] == 1
    reused = shared_server.act(session, "counters", "increment", value=2, headers=headers)
    assert reused.status == 422 and error_code(reused) == "idempotency_key_reused"
    other_unit = shared_server.request("POST", "/api/pages/home/actions", body={"action": "increment", "value": 1},
                                       session=session, headers=headers)
    assert other_unit.status == 422 and error_code(other_unit) == "idempotency_key_reused"


def test_failed_idempotent_request_may_be_retried(shared_server):
    session = shared_server.new_session({"unit": "counters"})["session"]
    headers = {"Idempotency-Key": "retry-me"}
    failed = shared_server.act(session, "counters", "increment", value="one", headers=headers)
    assert failed.status == 422
    retried = shared_server.act(session, "counters", "increment", value=1, headers=headers)
    assert retried.status == 200 and retried.json()["rev"] == 1


def test_health_readiness_and_metrics(shared_server):
    assert shared_server.request("GET", "/healthz").json() == {"status": "ok"}
    assert shared_server.request("GET", "/readyz").json() == {"status": "ready"}
    session = shared_server.new_session({"unit": "greeting"})["session"]
    shared_server.act(session, "greeting", "showGreeting")
    metrics = shared_server.request("GET", "/metrics")
    assert metrics.status == 200 and metrics.header("Content-Type").startswith("text/plain")
    text = metrics.body.decode()
    for name in ["mvvmr_sessions_live", "mvvmr_pages_live", "mvvmr_actions_total", "mvvmr_action_duration_seconds_bucket",
                 "mvvmr_patch_bytes_total", "mvvmr_sse_clients", "mvvmr_session_evictions_total"]:
        assert name in text, name
    assert 'mvvmr_actions_total{unit="greeting",action="showGreeting",status="ok"}' in text


def test_openapi_document_is_valid_and_lists_each_units_actions(shared_server):
    from openapi_spec_validator import validate

    response = shared_server.request("GET", "/api/openapi.json")
    assert response.status == 200
    document = response.json()
    validate(document)
    assert document["openapi"].startswith("3.1")
    login = document["paths"]["/api/pages/login/actions"]["post"]
    # Each unit's operation takes its `<Unit>Actions` component: one variant per action.
    body = login["requestBody"]["content"]["application/json"]["schema"]
    assert body == {"$ref": "#/components/schemas/LoginActions"}
    variants = document["components"]["schemas"]["LoginActions"]["oneOf"]
    assert {variant["properties"]["action"]["const"] for variant in variants} == {"username", "password", "submit"}
    for path in ["/api/units", "/api/sessions", "/api/session", "/api/pages/{unit}", "/api/pages/{unit}/actions",
                 "/api/navigation", "/api/events", "/healthz", "/readyz", "/metrics"]:
        assert path in document["paths"], path


def test_browser_deep_links_serve_the_client(shared_server):
    page = shared_server.request("GET", "/counters", headers={"Accept": "text/html"})
    assert page.status == 200 and page.header("Content-Type").startswith("text/html")
    assert shared_server.request("GET", "/").status == 200
    assert shared_server.request("GET", "/counters").status == 404
