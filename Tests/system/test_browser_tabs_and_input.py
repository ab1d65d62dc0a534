"""The browser client as people use it, in a real headless Chromium: the keyboard, several tabs, reloads, deep
links, browser back and forward, and a clean console. Each test is one problem a user met (issue 13) and fails on
the client before it was fixed. Screenshots go to screenshots/."""
import time

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from browsing import (click_action, console_errors, current_unit, shoot, tab_session, type_into, wait_for,
                      wait_for_text, wait_for_unit, wait_until_settled)


@pytest.fixture(scope="module")
def demo():
    from conftest import Server

    server = Server()
    yield server
    server.stop()


def counts(browser):
    return [cell.text for cell in browser.find_elements(By.CSS_SELECTOR, "#page [data-row-key] .row-count")]


def increment_buttons(browser):
    return browser.find_elements(By.CSS_SELECTOR, '#page [data-row-key] button[data-action="increment"]')


def active_element(browser):
    return browser.execute_script("return document.activeElement")


def announced(browser):
    return browser.find_element(By.ID, "announcer").get_attribute("textContent")


def tab_to(browser, element, limit=40):
    """Presses Tab until `element` has the focus, as a keyboard user would."""
    for _ in range(limit):
        if active_element(browser) == element:
            return
        ActionChains(browser).send_keys(Keys.TAB).perform()
    raise AssertionError("Tab never reached the element")


def test_every_enter_and_space_on_a_button_counts_and_the_focus_stays(demo, browser):
    browser.get(f"http://127.0.0.1:{demo.port}/counters")
    wait_for_unit(browser, "counters")
    wait_for_text(browser, "Row 3")
    button = increment_buttons(browser)[2]
    tab_to(browser, button)
    # Five quick Enters, then a Space: none waits for the one before, none is lost.
    ActionChains(browser).send_keys(Keys.ENTER * 5).perform()
    assert button.is_enabled(), "a busy button stays enabled"
    ActionChains(browser).send_keys(Keys.SPACE).perform()
    wait_for(browser, lambda b: counts(b)[2] == "6")
    wait_until_settled(browser)
    assert active_element(browser) == button, "the focus stays on the button"
    assert button.get_attribute("aria-busy") is None
    time.sleep(0.5)
    assert counts(browser)[:3] == ["0", "0", "6"], "exactly six, on row 3 only"
    # The new count is read out politely, with its row.
    wait_for(browser, lambda b: announced(b) == "Row 3: 6")
    assert browser.find_element(By.ID, "announcer").get_attribute("aria-live") == "polite"
    shoot(browser, "keyboard-counters")


def test_two_tabs_never_move_each_other(demo, browser):
    base = f"http://127.0.0.1:{demo.port}"
    browser.get(base + "/counters")
    wait_for_unit(browser, "counters")
    wait_for_text(browser, "Row 1")
    click_action(browser, "increment")
    wait_for(browser, lambda b: counts(b)[0] == "1")
    first, first_session = browser.current_window_handle, tab_session(browser)

    browser.switch_to.new_window("tab")
    browser.get(base + "/employees")
    wait_for_unit(browser, "employees")
    second_session = tab_session(browser)
    assert second_session and second_session != first_session
    # Back in this tab, then a page of its own: the first tab sees none of it.
    browser.find_element(By.ID, "back").click()
    wait_for_unit(browser, "home")
    wait_for_text(browser, "Greeting")
    click_action(browser, "open")  # the first card: greeting
    wait_for_unit(browser, "greeting")
    click_action(browser, "showGreeting")
    wait_for_text(browser, "Hello David Blaine")
    shoot(browser, "tabs-second")

    browser.switch_to.window(first)
    time.sleep(0.5)
    assert current_unit(browser) == "counters" and browser.current_url.endswith("/counters")
    assert counts(browser)[0] == "1"
    # A reload keeps this tab's own session and state.
    browser.refresh()
    wait_for_unit(browser, "counters")
    wait_for(browser, lambda b: counts(b) and counts(b)[0] == "1")
    assert tab_session(browser) == first_session
    shoot(browser, "tabs-first")


def test_a_duplicated_tab_starts_its_own_session(demo, browser):
    browser.get(f"http://127.0.0.1:{demo.port}/counters")
    wait_for_unit(browser, "counters")
    wait_for_text(browser, "Row 1")
    click_action(browser, "increment")
    wait_for(browser, lambda b: counts(b)[0] == "1")
    first, session = browser.current_window_handle, tab_session(browser)
    # window.open copies this tab's sessionStorage, session id included, as a duplicated tab does.
    browser.execute_script("window.open(location.href)")
    wait_for(browser, lambda b: len(b.window_handles) == 2)
    browser.switch_to.window([handle for handle in browser.window_handles if handle != first][0])
    wait_for_unit(browser, "counters")
    wait_for(browser, lambda b: tab_session(b) != session)
    wait_for(browser, lambda b: counts(b) and counts(b)[0] == "0")  # its own, new session
    click_action(browser, "increment", index=1)
    wait_for(browser, lambda b: counts(b)[1] == "1")
    browser.switch_to.window(first)
    time.sleep(0.5)
    assert counts(browser)[:2] == ["1", "0"]


def test_back_and_forward_return_to_the_page_as_it_was(demo, browser):
    browser.get(f"http://127.0.0.1:{demo.port}/")
    wait_for_unit(browser, "home")
    wait_for_text(browser, "Counters")
    card = [b for b in browser.find_elements(By.CSS_SELECTOR, '#page [data-action="open"]') if "Counters" in b.text][0]
    card.click()
    wait_for_unit(browser, "counters")
    wait_for_text(browser, "Row 1")
    click_action(browser, "increment")
    click_action(browser, "increment")
    wait_for(browser, lambda b: counts(b)[0] == "2")
    browser.back()
    wait_for_unit(browser, "home")
    browser.forward()
    wait_for_unit(browser, "counters")
    assert browser.current_url.endswith("/counters")
    wait_for(browser, lambda b: counts(b) and counts(b)[0] == "2")
    time.sleep(0.3)
    assert counts(browser)[0] == "2"
    shoot(browser, "forward-counters")


def test_back_then_forward_after_signing_in_keeps_the_user(demo, browser):
    browser.get(f"http://127.0.0.1:{demo.port}/login")
    wait_for_unit(browser, "login")
    type_into(browser, "username", "david")
    type_into(browser, "password", "blaine123")
    wait_for_text(browser, "Ready to sign in")
    click_action(browser, "submit")
    wait_for_unit(browser, "main")
    wait_for_text(browser, "Welcome, david")
    browser.back()
    wait_for_unit(browser, "login")
    browser.forward()
    wait_for_unit(browser, "main")
    wait_for_text(browser, "Welcome, david")
    assert "guest" not in browser.find_element(By.ID, "page").text
    assert browser.current_url.endswith("/main")


@pytest.mark.parametrize("path", ["/main", "/settings"])
def test_a_page_that_opens_only_in_its_flow_lands_a_deep_link_on_the_root(demo, browser, path):
    browser.get(f"http://127.0.0.1:{demo.port}{path}")
    wait_for_unit(browser, "home")
    wait_for(browser, lambda b: b.current_url.rstrip("/").endswith(str(demo.port)), timeout=5)
    notice = browser.find_element(By.ID, "notice-text").text
    assert "only from within the app" in notice, notice
    assert "guest" not in browser.find_element(By.ID, "page").text
    shoot(browser, f"deep-link-{path.strip('/')}")


def test_a_reload_mid_form_shows_what_the_server_holds_and_forgets_the_unseen_password(demo, browser):
    browser.get(f"http://127.0.0.1:{demo.port}/login")
    wait_for_unit(browser, "login")
    type_into(browser, "username", "david")
    type_into(browser, "password", "blaine123")
    wait_for_text(browser, "Ready to sign in")
    wait_until_settled(browser)
    browser.refresh()
    wait_for_unit(browser, "login")
    username = browser.find_element(By.CSS_SELECTOR, '#page input[data-action="username"]')
    password = browser.find_element(By.CSS_SELECTOR, '#page input[data-action="password"]')
    wait_for(browser, lambda b: username.get_attribute("value") == "david")
    assert password.get_attribute("value") == ""
    submit = browser.find_element(By.CSS_SELECTOR, '#page button[data-action="submit"]')
    wait_for(browser, lambda b: not submit.is_enabled(), timeout=5)
    wait_until_settled(browser)
    assert "Ready to sign in" not in browser.find_element(By.ID, "page").text
    shoot(browser, "reload-mid-form")
    # The form works again from what the user sees.
    type_into(browser, "password", "blaine123")
    wait_for_text(browser, "Ready to sign in")
    click_action(browser, "submit")
    wait_for_unit(browser, "main")


def test_a_fresh_load_logs_nothing_red(demo, browser):
    base = f"http://127.0.0.1:{demo.port}"
    for path, unit in (("/", "home"), ("/counters", "counters"), ("/login", "login"), ("/dashboard", "dashboard")):
        browser.delete_all_cookies()
        browser.get("about:blank")
        browser.get(base + path)
        wait_for_unit(browser, unit)
        wait_until_settled(browser)
        time.sleep(0.3)
        assert console_errors(browser) == [], (path, console_errors(browser))
        browser.execute_script("sessionStorage.clear()")
