"""The browser client across a server restart, in a real headless Chromium: the server is killed (SIGKILL) and
started again on the same session store and port, and the tab carries on in the same session — same page, same
state, no "new session" notice — and a click made while the server was down, or while its store could not keep
it, waits visibly and is applied exactly once."""
import os
import signal
import sqlite3
import time

import pytest
from selenium.webdriver.common.by import By

from browsing import tab_session, connection_banner, click_action, current_unit, shoot, type_into, wait_for, wait_for_text, wait_for_unit  # noqa: F401


@pytest.fixture
def store(tmp_path):
    return {"SESSION_STORE": "sqlite:" + os.path.join(tmp_path, "sessions.sqlite")}


def restart(start_server, server, store):
    """Kills `server` with SIGKILL and starts a new one on the same store and port; returns it and the seconds taken."""
    started = time.monotonic()
    server.stop(signal.SIGKILL)
    return start_server(store, port=server.port), time.monotonic() - started


def notice(browser):
    element = browser.find_element(By.ID, "notice")
    return "" if not element.is_displayed() else element.text.strip()


def count(browser, row):
    return browser.find_elements(By.CSS_SELECTOR, "#page [data-row-key] .row-count")[row].text


def increment_button(browser, row):
    return browser.find_elements(By.CSS_SELECTOR, '#page [data-row-key] button[data-action="increment"]')[row]


def wait_until_settled(browser):
    """Waits until every action the tab sent is answered (the app counts them in the status line's data-outbox)."""
    status = browser.find_element(By.ID, "connection")
    wait_for(browser, lambda b: status.get_attribute("data-outbox") == "0" and status.get_attribute("data-state") == "open")


def counters_at_one(browser, server):
    """Opens the counters page of `server` in the tab, increments row 1 once and returns the tab's session."""
    browser.get(f"http://127.0.0.1:{server.port}/counters")
    wait_for_unit(browser, "counters")
    wait_for_text(browser, "Row 1")
    click_action(browser, "increment", index=0)
    wait_for(browser, lambda b: count(b, 0) == "1")
    return tab_session(browser)


def assert_no_new_session_notice(browser, session):
    text = notice(browser).lower()
    assert "new one" not in text and "expired" not in text and "session" not in text, text
    assert tab_session(browser) == session


def test_counters_survive_a_restart(browser, start_server, store):
    server = start_server(store)
    browser.get(f"http://127.0.0.1:{server.port}/counters")
    wait_for_unit(browser, "counters")
    wait_for_text(browser, "Row 1")
    click_action(browser, "increment", index=1)
    wait_for(browser, lambda b: count(b, 1) == "1")
    click_action(browser, "increment", index=1)
    wait_for(browser, lambda b: count(b, 1) == "2")
    session = tab_session(browser)

    server, took = restart(start_server, server, store)
    # A change made in the restored session by another client, most likely before the tab's stream is back,
    # reaches the tab over that stream (resumed from its Last-Event-ID): the same session, nothing missed.
    assert server.act(session, "counters", "increment", value=1).status == 200
    wait_for(browser, lambda b: count(b, 0) == "1", timeout=15)
    assert count(browser, 1) == "2"
    assert_no_new_session_notice(browser, session)
    click_action(browser, "increment", index=1)
    wait_for(browser, lambda b: count(b, 1) == "3")
    assert_no_new_session_notice(browser, session)
    # The server agrees: the session is the same one, with the row at 3.
    page = server.request("GET", "/api/pages/counters", session=session).json()
    assert page["view"]["rows"][1]["count"] == 3
    print(f"restart took {took:.2f}s")


def test_login_main_settings_survive_a_restart(browser, start_server, store):
    server = start_server(store)
    browser.get(f"http://127.0.0.1:{server.port}/login")
    wait_for_unit(browser, "login")
    type_into(browser, "username", "david")
    type_into(browser, "password", "blaine123")
    wait_for_text(browser, "Ready to sign in")
    click_action(browser, "submit")
    wait_for_unit(browser, "main")
    wait_for_text(browser, "Welcome, david")
    click_action(browser, "openSettings")
    wait_for_unit(browser, "settings")
    browser.find_element(By.CSS_SELECTOR, '#page [data-action="theme"]').send_keys("dark")
    wait_until_settled(browser)
    session = tab_session(browser)
    settings = lambda state: [p for p in state["pages"] if p["unit"] == "settings"][0]["view"]["theme"]
    wait_for(browser, lambda b: settings(server.request("GET", "/api/session", session=session).json()) == "dark")
    before = server.request("GET", "/api/session", session=session).json()
    assert before["navigation"]["stack"][-3:] == ["login", "main", "settings"]

    server, _ = restart(start_server, server, store)
    after = server.request("GET", "/api/session", session=session).json()
    assert after["navigation"] == before["navigation"]
    assert {p["unit"]: (p["rev"], p["view"]) for p in after["pages"]} == {p["unit"]: (p["rev"], p["view"]) for p in before["pages"]}

    def shows_settings_as_before():
        assert current_unit(browser) == "settings"
        assert browser.current_url.endswith("/settings")
        assert browser.find_element(By.CSS_SELECTOR, '#page [data-action="theme"]').get_attribute("value") == "dark"
        assert browser.find_element(By.ID, "back").is_displayed()
        assert_no_new_session_notice(browser, session)

    shows_settings_as_before()
    # Reloaded, the tab is built from the restored session alone: the same page, state and stack.
    browser.refresh()
    wait_for_unit(browser, "settings")
    wait_for(browser, lambda b: b.find_element(By.CSS_SELECTOR, '#page [data-action="theme"]').get_attribute("value") == "dark")
    shows_settings_as_before()
    # The next click works in the restored session: done goes back to main with the theme.
    click_action(browser, "done")
    wait_for_unit(browser, "main")
    wait_for_text(browser, "Theme: dark")
    assert browser.current_url.endswith("/main")
    assert server.request("GET", "/api/session", session=session).json()["navigation"]["stack"] == before["navigation"]["stack"][:-1]
    assert_no_new_session_notice(browser, session)


def test_a_click_while_the_server_is_down_is_applied_once_after_the_restart(browser, start_server, store):
    server = start_server(store)
    session = counters_at_one(browser, server)

    port = server.port
    server.stop(signal.SIGKILL)
    # The banner says so before anything is clicked: the event stream broke.
    wait_for(browser, lambda b: connection_banner(b)[:2] == ("reconnecting", True), timeout=10)
    assert "cannot be reached" in connection_banner(browser)[2]
    shoot(browser, "restart-banner")
    for _ in range(3):
        increment_button(browser, 0).click()
    # The actions are kept, not dropped: the button and the banner say they wait for the server; the button
    # stays enabled and keeps the focus.
    wait_for(browser, lambda b: increment_button(b, 0).get_attribute("data-pending") == "true", timeout=5)
    status = browser.find_element(By.ID, "connection")
    wait_for(browser, lambda b: status.get_attribute("data-state") == "pending" and status.is_displayed(), timeout=5)
    assert "Waiting for the server" in status.text and "3 changes to send" in status.text, status.text
    assert status.get_attribute("aria-live") == "polite" and status.get_attribute("role") == "status"
    assert increment_button(browser, 0).is_enabled()
    assert browser.execute_script("return document.activeElement") == increment_button(browser, 0)
    assert count(browser, 0) == "1"
    shoot(browser, "restart-pending")
    time.sleep(1.5)  # a few retries against the dead port
    assert increment_button(browser, 0).get_attribute("data-pending") == "true"

    started = time.monotonic()
    server = start_server(store, port=port)
    wait_for(browser, lambda b: count(b, 0) == "4", timeout=15)
    applied = time.monotonic() - started
    wait_for(browser, lambda b: increment_button(b, 0).get_attribute("data-pending") is None)
    wait_for(browser, lambda b: status.get_attribute("data-state") == "open")
    assert_no_new_session_notice(browser, session)
    # Each exactly once: the server holds 4 as well, and a little later still 4 (no late duplicate).
    time.sleep(1)
    assert count(browser, 0) == "4"
    assert server.request("GET", "/api/pages/counters", session=session).json()["view"]["rows"][0]["count"] == 4
    print(f"the pending click was applied {applied:.2f}s after the restart began")


def test_a_click_the_store_cannot_keep_waits_and_is_applied_once(browser, start_server, store):
    server = start_server(store)
    session = counters_at_one(browser, server)
    status = browser.find_element(By.ID, "connection")

    # Another process holds the store's write lock: the server waits its busy timeout (5 s), then answers
    # 503 store_unavailable (Retry-After: 1) and applies nothing.
    lock = sqlite3.connect(store["SESSION_STORE"].removeprefix("sqlite:"), isolation_level=None, timeout=1)
    try:
        lock.execute("BEGIN EXCLUSIVE")
        started = time.monotonic()
        increment_button(browser, 0).click()
        wait_for(browser, lambda b: status.get_attribute("data-state") == "pending", timeout=10)
        waited = time.monotonic() - started
        assert "Waiting for the server" in status.text and "cannot save changes" in status.text, status.text
        assert increment_button(browser, 0).get_attribute("data-pending") == "true"
        assert count(browser, 0) == "1"
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    wait_for(browser, lambda b: count(b, 0) == "2", timeout=10)
    wait_for(browser, lambda b: increment_button(b, 0).get_attribute("data-pending") is None)
    wait_for(browser, lambda b: status.get_attribute("data-state") == "open")
    assert_no_new_session_notice(browser, session)
    time.sleep(1)
    assert count(browser, 0) == "2"
    assert server.request("GET", "/api/pages/counters", session=session).json()["view"]["rows"][0]["count"] == 2
    print(f"store_unavailable after {waited:.2f}s")


def test_clicks_waiting_for_a_dead_server_survive_a_reload_of_the_tab(browser, start_server, store):
    """The server dies, the user clicks twice, gives up and reloads (the browser shows its own error page); once
    the server is back and the tab is reloaded, both clicks are applied, each exactly once."""
    server = start_server(store)
    session = counters_at_one(browser, server)
    port = server.port
    server.stop(signal.SIGKILL)
    increment_button(browser, 0).click()
    increment_button(browser, 0).click()
    status = browser.find_element(By.ID, "connection")
    wait_for(browser, lambda b: "2 changes to send" in status.text, timeout=5)
    browser.refresh()  # the server is down: the browser's own error page
    assert "Row 1" not in browser.find_element(By.TAG_NAME, "body").text
    server = start_server(store, port=port)
    browser.refresh()
    wait_for_unit(browser, "counters")
    wait_for(browser, lambda b: count(b, 0) == "3", timeout=15)
    wait_until_settled(browser)
    assert tab_session(browser) == session
    time.sleep(1)
    assert count(browser, 0) == "3"
    assert server.request("GET", "/api/pages/counters", session=session).json()["view"]["rows"][0]["count"] == 3
