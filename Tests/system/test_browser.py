"""The browser client in a real headless Chromium (Selenium with Debian's chromedriver), through every
demo page. Screenshots of each page go to screenshots/."""
import pytest
from selenium.webdriver.common.by import By

from browsing import click_action, current_unit, shoot, type_into, wait_for, wait_for_text, wait_for_unit  # noqa: F401


@pytest.fixture(scope="module")
def demo(request):
    from conftest import Server

    server = Server({"EMPLOYEE_LATENCY_MS": 300})
    yield server
    server.stop()


def test_home_menu_and_greeting(demo, browser):
    browser.get(f"http://127.0.0.1:{demo.port}/")
    wait_for_unit(browser, "home")
    wait_for_text(browser, "Greeting")
    shoot(browser, "home")
    click_action(browser, "open")  # the first item: greeting
    wait_for_unit(browser, "greeting")
    assert browser.current_url.endswith("/greeting")
    wait_for_text(browser, "Say hello to who?")
    click_action(browser, "showGreeting")
    wait_for_text(browser, "Hello David Blaine")
    shoot(browser, "greeting")
    browser.back()
    wait_for_unit(browser, "home")
    assert browser.current_url.rstrip("/").endswith(str(demo.port))


def test_demo_button_refreshes(demo, browser):
    browser.get(f"http://127.0.0.1:{demo.port}/demo")
    wait_for_unit(browser, "demo")
    wait_for_text(browser, "Tap")
    click_action(browser, "refresh")
    wait_for_text(browser, "Data refreshed")
    shoot(browser, "demo")


def test_login_main_settings_back_logout(demo, browser):
    browser.get(f"http://127.0.0.1:{demo.port}/login")
    wait_for_unit(browser, "login")
    wait_for_text(browser, "Enter your username")
    type_into(browser, "username", "david")
    type_into(browser, "password", "wrong-pass")
    wait_for_text(browser, "Ready to sign in")
    click_action(browser, "submit")
    wait_for_text(browser, "Wrong username or password")
    shoot(browser, "login-refused")
    type_into(browser, "password", "blaine123")
    wait_for_text(browser, "Ready to sign in")
    click_action(browser, "submit")
    wait_for_unit(browser, "main")
    wait_for_text(browser, "Welcome, david")
    assert browser.current_url.endswith("/main")
    shoot(browser, "main")
    click_action(browser, "openSettings")
    wait_for_unit(browser, "settings")
    shoot(browser, "settings")
    click_action(browser, "theme", index=1) if len(browser.find_elements(By.CSS_SELECTOR, '#page button[data-action="theme"]')) > 1 \
        else browser.find_element(By.CSS_SELECTOR, '#page [data-action="theme"]').send_keys("dark")
    click_action(browser, "done")
    wait_for_unit(browser, "main")
    wait_for_text(browser, "Theme: dark")
    click_action(browser, "logout")
    wait_for_unit(browser, "login")
    assert browser.current_url.endswith("/login")


def test_employees_load_and_reload(demo, browser):
    browser.get(f"http://127.0.0.1:{demo.port}/employees")
    wait_for_unit(browser, "employees")
    wait_for(browser, lambda b: len(b.find_elements(By.CSS_SELECTOR, "#page [data-row-key]")) >= 20, timeout=15)
    shoot(browser, "employees")
    click_action(browser, "reload")
    wait_for(browser, lambda b: len(b.find_elements(By.CSS_SELECTOR, "#page [data-row-key]")) >= 20, timeout=15)


def test_counters_increment_and_load_more(demo, browser):
    browser.get(f"http://127.0.0.1:{demo.port}/counters")
    wait_for_unit(browser, "counters")
    wait_for_text(browser, "Row 1")
    click_action(browser, "increment", index=1)
    click_action(browser, "increment", index=1)
    second_count = lambda b: b.find_elements(By.CSS_SELECTOR, "#page [data-row-key] .row-count")[1].text
    wait_for(browser, lambda b: second_count(b) == "2")
    click_action(browser, "loadMore")
    wait_for_text(browser, "Row 20")
    wait_for_text(browser, "Loaded page 2")
    shoot(browser, "counters")


def test_dashboard_clock_visibly_ticks(demo, browser):
    browser.get(f"http://127.0.0.1:{demo.port}/dashboard")
    wait_for_unit(browser, "dashboard")
    clock = lambda b: b.find_element(By.CSS_SELECTOR, '#page [data-text="/clock/time"]').text
    wait_for(browser, lambda b: clock(b) != "")
    first = clock(browser)
    wait_for(browser, lambda b: clock(b) != first, timeout=5)
    shoot(browser, "dashboard")


def test_reload_keeps_the_sessions_state(demo, browser):
    browser.get(f"http://127.0.0.1:{demo.port}/greeting")
    wait_for_unit(browser, "greeting")
    click_action(browser, "showGreeting")
    wait_for_text(browser, "Hello David Blaine")
    browser.refresh()
    wait_for_unit(browser, "greeting")
    wait_for_text(browser, "Hello David Blaine")


def test_lost_session_after_server_restart_is_recovered(browser, start_server):
    server = start_server()
    port = server.port
    browser.get(f"http://127.0.0.1:{port}/counters")
    wait_for_unit(browser, "counters")
    click_action(browser, "increment")
    server.stop()
    start_server(port=port)
    # The client notices the lost session (its stream breaks, its next action is refused) and starts a new one
    # at the same deep link, telling the user.
    click_action(browser, "increment")
    wait_for(browser, lambda b: b.find_element(By.ID, "notice").text.strip() != "", timeout=15)
    wait_for_unit(browser, "counters")
    assert browser.current_url.endswith("/counters")
