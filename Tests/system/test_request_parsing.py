"""Request fields at the edges of their number ranges (issue 11): a whole `rev` written as a double, a
`Last-Event-ID` beyond any sequence, and `int` action values just outside Int's range at both ends."""
from conftest import EventReader


def test_a_whole_double_rev_up_to_2_to_53_is_read_as_that_revision(shared_server):
    session = shared_server.new_session({"unit": "counters"})["session"]
    assert shared_server.act(session, "counters", "increment", value=1, rev=0.0).status == 200
    # 2^51 as a double is a revision (ahead of the page, so refused as one), not "not a whole number".
    ahead = shared_server.request("POST", "/api/pages/counters/actions", session=session,
                                  body='{"action":"increment","value":1,"rev":2251799813685248.0}')
    assert ahead.status == 400 and ahead.json()["error"]["code"] == "invalid_request"
    assert "2251799813685248" in ahead.json()["error"]["message"], ahead
    for rev in ["0.5", "9007199254740994.0"]:
        refused = shared_server.request("POST", "/api/pages/counters/actions", session=session,
                                        body='{"action":"increment","value":1,"rev":%s}' % rev)
        assert refused.status == 400 and refused.json()["error"]["message"] == "'rev' must be a whole number.", refused


def test_a_last_event_id_beyond_int64_is_ahead_and_gets_snapshots(shared_server):
    session = shared_server.new_session({"unit": "counters"})["session"]
    shared_server.act(session, "counters", "increment", value=2)
    reader = EventReader(shared_server.port, session, last_event_id="99999999999999999999")
    assert reader.status == 200
    event = reader.next_event()
    assert event["event"] == "snapshot" and event["data"]["unit"] == "counters" and event["data"]["rev"] == 1
    reader.close()
    for text in ["+5", "1.5", "abc"]:
        bad = shared_server.request("GET", "/api/events", session=session, headers={"Last-Event-ID": text})
        assert bad.status == 400 and bad.json()["error"]["code"] == "invalid_request", (text, bad)


def test_int_values_just_outside_int64_are_refused_at_both_ends(shared_server):
    session = shared_server.new_session({"unit": "counters"})["session"]
    for text in ["9223372036854775808", "-9223372036854775809"]:
        refused = shared_server.request("POST", "/api/pages/counters/actions", session=session,
                                        body='{"action":"increment","value":%s}' % text)
        assert refused.status == 422 and refused.json()["error"]["code"] == "invalid_value", (text, refused)
    assert shared_server.act(session, "counters", "increment", value=-9223372036854775808).status == 200
