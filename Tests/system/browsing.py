"""Shared driving of a real headless Chromium (Selenium with Debian's chromedriver) for the browser tests.

Every browser test module uses these, so a window size, a colour scheme, console capture and screenshots
work the same everywhere."""
import os
import shutil

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from conftest import ROOT

SCREENSHOTS = os.path.join(ROOT, "screenshots")

DESKTOP = (1280, 800)
PHONE = (390, 844)


def open_chromium(size=DESKTOP, dark=False, mobile=False):
    """A headless Chromium window of `size` (CSS pixels), in the dark colour scheme when `dark`, emulating a
    phone's touch screen when `mobile`, with its console captured (`console_errors`)."""
    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", f"--window-size={size[0]},{size[1]}"):
        options.add_argument(argument)
    if dark:
        options.add_argument("--force-dark-mode")
        options.add_argument("--blink-settings=preferredColorScheme=0")
    if mobile:
        options.add_experimental_option("mobileEmulation", {
            "deviceMetrics": {"width": size[0], "height": size[1], "pixelRatio": 3.0, "touch": True}})
    if shutil.which("chromium"):
        options.binary_location = shutil.which("chromium")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
    driver.set_page_load_timeout(20)
    if dark:
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
    return driver


def console_errors(browser):
    """The console's error lines since the last call (SEVERE: failed requests, uncaught errors)."""
    return [entry["message"] for entry in browser.get_log("browser") if entry.get("level") == "SEVERE"]


def wait_for(browser, condition, timeout=10):
    return WebDriverWait(browser, timeout).until(condition)


def current_unit(browser):
    return browser.find_element(By.ID, "page").get_attribute("data-unit")


def wait_for_unit(browser, unit, timeout=10):
    wait_for(browser, lambda b: current_unit(b) == unit, timeout)


def wait_for_text(browser, text, timeout=10):
    wait_for(browser, lambda b: text in b.find_element(By.ID, "page").text, timeout)


def wait_until_settled(browser, timeout=15):
    """Waits until no action or navigation of the tab waits for an answer."""
    wait_for(browser, lambda b: b.find_element(By.ID, "connection").get_attribute("data-outbox") == "0", timeout)


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


def tab_session(browser):
    """The session id the current tab keeps (its sessionStorage), or None."""
    return browser.execute_script("return sessionStorage.getItem('mvvmr.session')")


def connection_banner(browser):
    """The connection banner's state (`open`, `reconnecting`, `pending`), whether it shows, and its text."""
    element = browser.find_element(By.ID, "connection")
    return element.get_attribute("data-state"), element.is_displayed(), element.text.strip()
