"""The OpenAPI document (GET /api/openapi.json) against the server's real answers, for the places where the two
disagreed before scripts/check-api-schema.sh (schemathesis) held them together."""
import json
import time

from jsonschema import Draft202012Validator

from conftest import EventReader


def document_of(server):
    response = server.request("GET", "/api/openapi.json")
    assert response.status == 200
    return response.json()


def validator(document, schema):
    """A validator for `schema`, whose `#/components/...` references resolve inside the document."""
    return Draft202012Validator({"allOf": [schema], "components": document["components"]})


def request_schema(document, path):
    return document["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"]


def documented_statuses(document, path, method):
    return set(document["paths"][path][method]["responses"])


def test_a_new_session_at_an_unknown_unit_is_a_documented_404(shared_server):
    document = document_of(shared_server)
    response = shared_server.request("POST", "/api/sessions", body={"unit": "nowhere"})
    assert response.status == 404 and response.json()["error"]["code"] == "unknown_unit"
    assert "404" in documented_statuses(document, "/api/sessions", "post")
    assert not validator(document, request_schema(document, "/api/sessions")).is_valid({"unit": "nowhere"})


def test_null_parameters_and_a_null_rev_are_accepted_and_documented_as_absent(shared_server):
    document = document_of(shared_server)
    new_session = {"unit": "greeting", "parameters": None}
    assert validator(document, request_schema(document, "/api/sessions")).is_valid(new_session)
    created = shared_server.request("POST", "/api/sessions", body=new_session)
    assert created.status == 201, created
    session = created.json()["session"]

    action = {"action": "showGreeting", "value": None, "rev": None}
    assert validator(document, request_schema(document, "/api/pages/greeting/actions")).is_valid(action)
    assert validator(document, request_schema(document, "/api/pages/{unit}/actions")).is_valid(action)
    acted = shared_server.request("POST", "/api/pages/greeting/actions", body=action, session=session)
    assert acted.status == 200, acted
    assert acted.json()["rev"] == 1


def test_a_navigation_back_ignores_other_fields_and_an_open_needs_a_unit(shared_server):
    document = document_of(shared_server)
    navigation = validator(document, request_schema(document, "/api/navigation"))
    session = shared_server.new_session()["session"]

    back = {"type": "back", "unit": "", "parameters": {"ignored": {}}}
    assert navigation.is_valid(back)
    assert shared_server.request("POST", "/api/navigation", body=back, session=session).status == 200

    assert not navigation.is_valid({"type": "open"})
    refused = shared_server.request("POST", "/api/navigation", body={"type": "open"}, session=session)
    assert refused.status == 400 and refused.json()["error"]["code"] == "invalid_request"


def test_an_action_value_outside_int64_is_refused_and_documented_as_invalid(shared_server):
    document = document_of(shared_server)
    session = shared_server.new_session({"unit": "counters"})["session"]
    too_large = {"action": "increment", "value": 2 ** 63}
    assert not validator(document, request_schema(document, "/api/pages/counters/actions")).is_valid(too_large)
    response = shared_server.request("POST", "/api/pages/counters/actions", body=too_large, session=session)
    assert response.status == 422 and response.json()["error"]["code"] == "invalid_value"
    largest = {"action": "increment", "value": 2 ** 63 - 1}
    assert validator(document, request_schema(document, "/api/pages/counters/actions")).is_valid(largest)


def test_the_event_streams_events_match_the_documented_event_schema(shared_server):
    document = document_of(shared_server)
    event_schema = document["paths"]["/api/events"]["get"]["responses"]["200"]["content"]["text/event-stream"]["schema"]
    session = shared_server.new_session()["session"]
    reader = EventReader(shared_server.port, session, last_event_id=0)
    try:
        assert reader.status == 200
        event = reader.next_event()
    finally:
        reader.socket.close()
    wire = {"event": event["event"], "id": str(event["id"]), "data": json.dumps(event["data"])}
    assert validator(document, event_schema).is_valid(wire)
    # The document says what `data` holds for each event type; the first event of a new session is its navigation.
    branch = next(variant for variant in document["components"]["schemas"]["Event"]["oneOf"]
                  if variant["properties"]["event"]["const"] == event["event"])
    assert event["event"] == "navigate"
    validator(document, branch["properties"]["data"]["contentSchema"]).validate(event["data"])


def test_a_malformed_last_event_id_in_the_query_is_refused_even_beside_a_valid_header(shared_server):
    session = shared_server.new_session()["session"]
    reader = EventReader(shared_server.port, session, last_event_id=0, query="?lastEventId=-1")
    try:
        assert reader.status == 400
    finally:
        reader.socket.close()


def response_schema(document, path, method, status):
    return document["paths"][path][method]["responses"][status]["content"]["application/json"]["schema"]


def test_forward_and_entry_refusals_are_documented_as_answered(shared_server):
    document = document_of(shared_server)
    navigation = validator(document, request_schema(document, "/api/navigation"))
    assert navigation.is_valid({"type": "forward"})

    created = shared_server.request("POST", "/api/sessions", body={"unit": "main"})
    assert created.status == 201 and created.json()["navigation_error"]["code"] == "entry_refused"
    validator(document, response_schema(document, "/api/sessions", "post", "201")).validate(created.json())
    session = created.json()["session"]

    nothing = shared_server.request("POST", "/api/navigation", body={"type": "forward"}, session=session)
    assert nothing.status == 409 and "409" in documented_statuses(document, "/api/navigation", "post")
    refused = shared_server.request("GET", "/api/pages/settings", session=session)
    assert refused.status == 403 and "403" in documented_statuses(document, "/api/pages/{unit}", "get")

    shared_server.request("POST", "/api/navigation", body={"type": "open", "unit": "counters"}, session=session)
    back = shared_server.request("POST", "/api/navigation", body={"type": "back"}, session=session).json()
    assert back["navigation"]["forward"] == ["counters"]
    forward = shared_server.request("POST", "/api/navigation", body={"type": "forward"}, session=session)
    assert forward.status == 200 and forward.json()["navigation"]["type"] == "forward"
    answer = validator(document, response_schema(document, "/api/navigation", "post", "200"))
    answer.validate(back)
    answer.validate(forward.json())
    units = shared_server.request("GET", "/api/units").json()
    validator(document, response_schema(document, "/api/units", "get", "200")).validate(units)
    # The document holds the member required: an answer without it would not pass.
    assert not answer.is_valid({**back, "navigation": {k: v for k, v in back["navigation"].items() if k != "forward"}})


def test_a_session_log_with_topic_records_is_as_documented(shared_server):
    document = document_of(shared_server)
    session = shared_server.new_session({"unit": "board"})["session"]
    assert shared_server.act(session, "board", "draft", "for the log").status == 200
    assert shared_server.act(session, "board", "post").status == 200
    deadline = time.time() + 10
    while True:
        log = shared_server.request("GET", "/api/session/log", session=session).json()
        if any(record["input"]["type"] == "topic" for record in log["records"]) or time.time() > deadline:
            break
        time.sleep(0.05)
    assert log["records"][-1]["input"]["type"] == "topic", log["records"][-1]
    validator(document, response_schema(document, "/api/session/log", "get", "200")).validate(log)
