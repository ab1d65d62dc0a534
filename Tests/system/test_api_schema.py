"""The OpenAPI document (GET /api/openapi.json) against the server's real answers, for the places where the two
disagreed before scripts/check-api-schema.sh (schemathesis) held them together."""
import json
import time

from jsonschema import Draft202012Validator

from conftest import EventReader, poll


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


# Each unit's components: `<Unit>View`, the schema of its page's `view` derived from its View's state type (`{}` when
# the View binds path by path), and `<Unit>Actions`, what its own actions operation takes. Pages are converted to
# whole states one by one: these tests hold every page's live view to its schema, whichever pages are described.


def stem_of(unit):
    """The document's component-name stem of a demo unit: its name with the first letter upper-cased (the demo's
    names are letters, unique however their first letter is written)."""
    return unit[:1].upper() + unit[1:]


def view_schema(document, unit):
    return document["components"]["schemas"][stem_of(unit) + "View"]


def view_validator(document, unit):
    return validator(document, {"$ref": f"#/components/schemas/{stem_of(unit)}View"})


def units_of(server):
    return server.request("GET", "/api/units").json()["units"]


def live_view(server, session, unit):
    """The view of `unit`'s page in `session`, binding it first if needed, and its rev."""
    response = server.request("GET", f"/api/pages/{unit}", session=session)
    assert response.status == 200, response
    return response.json()["view"], response.json()["rev"]


def test_the_document_is_valid_openapi_with_each_units_view_and_actions_components(shared_server):
    from openapi_spec_validator import validate

    document = document_of(shared_server)
    validate(document)
    schemas = document["components"]["schemas"]
    units = units_of(shared_server)
    assert {"greeting", "counters", "dashboard"} <= {unit["name"] for unit in units}
    for unit in units:
        name, stem = unit["name"], stem_of(unit["name"])
        Draft202012Validator.check_schema(schemas[stem + "View"])
        assert f"`{name}`" in schemas[stem + "View"]["description"]
        actions = schemas[stem + "Actions"]
        if not unit["actions"]:
            assert actions["not"] == {}
            continue
        # Each unit's operation takes its component, whose branches are the actions GET /api/units lists.
        assert request_schema(document, f"/api/pages/{name}/actions") == {"$ref": f"#/components/schemas/{stem}Actions"}
        assert [branch["properties"]["action"]["const"] for branch in actions["oneOf"]] == [
            action["name"] for action in unit["actions"]]
    # The generic operation still takes any action name (an unknown one is 422 `unknown_action`).
    assert request_schema(document, "/api/pages/{unit}/actions") == {"$ref": "#/components/schemas/ActionRequest"}
    unknown = {"action": "nowhere"}
    assert validator(document, request_schema(document, "/api/pages/{unit}/actions")).is_valid(unknown)
    assert not validator(document, request_schema(document, "/api/pages/counters/actions")).is_valid(unknown)


def test_every_deep_link_units_live_view_matches_its_view_schema(shared_server):
    document = document_of(shared_server)
    opened = []
    for unit in units_of(shared_server):
        if unit["entry"] != "deep_link":
            continue
        session = shared_server.new_session()["session"]
        view, _ = live_view(shared_server, session, unit["name"])
        view_validator(document, unit["name"]).validate(view)
        opened.append(unit["name"])
    assert {"home", "greeting", "counters", "dashboard"} <= set(opened), opened


def test_the_views_still_match_after_actions_ticks_and_loads(shared_server):
    document = document_of(shared_server)

    session = shared_server.new_session({"unit": "greeting"})["session"]
    assert shared_server.act(session, "greeting", "showGreeting").status == 200
    view, _ = live_view(shared_server, session, "greeting")
    assert view["greeting"] != "Say hello to who?"
    view_validator(document, "greeting").validate(view)

    session = shared_server.new_session({"unit": "counters"})["session"]
    assert shared_server.act(session, "counters", "increment", 1).status == 200
    assert shared_server.act(session, "counters", "loadMore").status == 200

    def second_page():
        view, _ = live_view(shared_server, session, "counters")
        return view if view["page"] == 2 and not view["loading"] else None

    loaded = poll(second_page)
    assert loaded, "the second page of counters did not load"
    assert loaded["rows"][0]["count"] == 1
    view_validator(document, "counters").validate(loaded)

    # The dashboard's clock ticks every second; `quote.shuffle` replaces the quote.
    session = shared_server.new_session({"unit": "dashboard"})["session"]
    first, rev = live_view(shared_server, session, "dashboard")
    dashboard = view_validator(document, "dashboard")
    dashboard.validate(first)

    def after_a_tick():
        view, now = live_view(shared_server, session, "dashboard")
        return view if now > rev else None

    ticked = poll(after_a_tick)
    assert ticked, "the dashboard did not tick"
    dashboard.validate(ticked)
    assert shared_server.act(session, "dashboard", "quote.shuffle").status == 200
    shuffled, _ = live_view(shared_server, session, "dashboard")
    dashboard.validate(shuffled)


def test_greeting_and_counters_are_described_with_their_views_members_required(shared_server):
    document = document_of(shared_server)
    for unit in ["greeting", "counters"]:
        schema = view_schema(document, unit)
        session = shared_server.new_session()["session"]
        view, _ = live_view(shared_server, session, unit)
        assert schema["type"] == "object"
        assert set(schema["required"]) == set(view), unit
        assert set(schema["properties"]) == set(view), unit
        # The schema can fail: a view without a member, or with one of another type, is not one of these.
        checker = view_validator(document, unit)
        member = schema["required"][0]
        assert not checker.is_valid({key: value for key, value in view.items() if key != member})
        assert not checker.is_valid({**view, member: 12 if not isinstance(view[member], int) else "twelve"})
    counters = view_schema(document, "counters")
    assert counters["properties"]["rows"]["type"] == "array"
    assert set(counters["properties"]["rows"]["items"]["required"]) == {"id", "title", "count"}


def test_each_view_is_described_or_says_it_is_not(shared_server):
    document = document_of(shared_server)
    for unit in units_of(shared_server):
        schema = view_schema(document, unit["name"])
        described = {key: value for key, value in schema.items() if key != "description"}
        if described:
            assert "Derived from the declared state types" in schema["description"], unit["name"]
            assert "Not described" not in schema["description"], unit["name"]
        else:
            # `{}`: anything is a valid view of a page bound path by path.
            assert "Not described: the View binds path by path" in schema["description"], unit["name"]
            for anything in [42, "text", [], {"any": {"thing": None}}]:
                assert view_validator(document, unit["name"]).is_valid(anything)


def test_the_counters_increment_takes_an_integer(shared_server):
    document = document_of(shared_server)
    branches = document["components"]["schemas"]["CountersActions"]["oneOf"]
    increment = next(branch for branch in branches if branch["properties"]["action"]["const"] == "increment")
    # {"type": "integer"}, within Swift's Int (a whole number beyond it is 422 `invalid_value`).
    assert increment["properties"]["value"] == {"type": "integer", "minimum": -2 ** 63, "maximum": 2 ** 63 - 1}
    assert increment["required"] == ["action", "value"]
    load_more = next(branch for branch in branches if branch["properties"]["action"]["const"] == "loadMore")
    assert load_more["properties"]["value"] == {"type": "null"} and load_more["required"] == ["action"]

    actions = validator(document, request_schema(document, "/api/pages/counters/actions"))
    session = shared_server.new_session({"unit": "counters"})["session"]
    assert actions.is_valid({"action": "increment", "value": 3})
    assert shared_server.act(session, "counters", "increment", 3).status == 200
    assert not actions.is_valid({"action": "increment", "value": "3"})
    refused = shared_server.act(session, "counters", "increment", "3")
    assert refused.status == 422 and refused.json()["error"]["code"] == "invalid_value"


def test_every_demo_page_is_described_and_the_flow_only_pages_views_match_too(shared_server):
    """Every demo page's view is derived from its state type (none is `{}` any more), and the pages only a flow
    reaches (main after a sign-in, settings presented from main) match their schemas along the way."""
    document = document_of(shared_server)
    for unit in units_of(shared_server):
        schema = view_schema(document, unit["name"])
        assert schema.get("type") == "object", unit["name"]
        assert "Derived from the declared state types" in schema["description"], unit["name"]

    session = shared_server.new_session({"unit": "login"})["session"]
    login, _ = live_view(shared_server, session, "login")
    view_validator(document, "login").validate(login)
    assert login["error"] is None and "password" not in login
    for action, value in [("username", "david"), ("password", "blaine123"), ("submit", None)]:
        assert shared_server.act(session, "login", action, value).status == 200

    def main_page():
        response = shared_server.request("GET", "/api/pages/main", session=session)
        return response.json()["view"] if response.status == 200 else None

    main = poll(main_page)
    assert main and main["user"] == "david", main
    view_validator(document, "main").validate(main)
    assert shared_server.act(session, "main", "openSettings").status == 200
    settings, _ = live_view(shared_server, session, "settings")
    view_validator(document, "settings").validate(settings)
    assert shared_server.act(session, "settings", "theme", "dark").status == 200
    settings, _ = live_view(shared_server, session, "settings")
    assert settings["theme"] == "dark"
    view_validator(document, "settings").validate(settings)
    # A view that breaks its schema is caught: the theme must be one of the themes.
    assert not view_validator(document, "settings").is_valid({**settings, "theme": "blue"})
