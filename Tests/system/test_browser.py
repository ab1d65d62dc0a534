"""The browser client in a real headless Chromium (Selenium with Debian's chromedriver), through every
demo page. Screenshots of each page go to screenshots/."""
import os
import shutil
import time

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as conditions
from selenium.webdriver.support.ui import WebDriverWait

from conftest import ROOT

SCREENSHOTS = os.path.join(ROOT, "screenshots")


@pytest.fixture(scope="module")
def demo(request):
    from conftest import Server

    server = Server({"EMPLOYEE_LATENCY_MS": 300})
    yield server
    server.stop()


@pytest.fixture
def browser():
    options = webdriver.ChromeOptions()
    options.add_argument("--headless=new")
    options.add_argument("--no-sandbox")
    options.add_argument("--disable-dev-shm-usage")
    options.add_argument("--window-size=1200,900")
    chromium = shutil.which("chromium")
    if chromium:
        options.binary_location = chromium
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
    driver.set_page_load_timeout(20)
    yield driver
    driver.quit()


def wait_for(browser, condition, timeout=10):
    return WebDriverWait(browser, timeout).until(condition)


def current_unit(browser):
    return browser.find_element(By.ID, "page").get_attribute("data-unit")


def wait_for_unit(browser, unit, timeout=10):
    wait_for(browser, lambda b: current_unit(b) == unit, timeout)


def wait_for_text(browser, text, timeout=10):
    wait_for(browser, lambda b: text in b.find_element(By.ID, "page").text, timeout)


def click_action(browser, action, index=0):
    buttons = [b for b in browser.find_elements(By.CSS_SELECTOR, f'#page [data-action="{action}"]')
               if b.tag_name in ("button", "a") or b.get_attribute("type") in ("button", "submit")]
    assert buttons, f"no button for action {action}"
    wait_for(browser, lambda b: buttons[index].is_enabled())
    buttons[index].click()


def type_into(browser, action, text):
    field = browser.find_element(By.CSS_SELECTOR, f'#page input[data-action="{action}"]')
    field.clear()
    field.send_keys(text)


def shoot(browser, name):
    os.makedirs(SCREENSHOTS, exist_ok=True)
    browser.save_screenshot(os.path.join(SCREENSHOTS, f"{name}.png"))


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
