# Manual browser smoke test of the client in Public/, against the stand-in server:
#   node Tests/BrowserClient/dev-server.mjs 8099 &
#   python3 Tests/BrowserClient/browser-smoke.py
# Needs Chromium, chromedriver and the selenium package (Debian: chromium chromium-driver;
# PyPI: selenium). Not part of `node --test`. The expiry steps use the stand-in's test hooks
# (/__expire, /__drop) and the generic-renderer step its template-less `profile` unit, so
# against the real server those steps need replacing (e.g. DELETE /api/session).
import os, sys, time, json, traceback, urllib.request
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait, Select
from selenium.webdriver.chrome.service import Service

BASE = os.environ.get("BASE_URL", "http://127.0.0.1:8099")
opts = webdriver.ChromeOptions()
opts.binary_location = "/usr/bin/chromium"
for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1000,900"]:
    opts.add_argument(a)
opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
d = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
W = WebDriverWait(d, 6)
failures = []

def check(name, fn):
    try:
        fn()
        print("ok  ", name)
    except Exception as e:
        failures.append(name)
        print("FAIL", name, type(e).__name__, str(e)[:300], [f.lineno for f in traceback.extract_tb(e.__traceback__) if f.filename.endswith("smoke.py")])
        print("     unit=", d.find_element(By.ID, "page").get_attribute("data-unit"), "url=", d.current_url)

def unit_is(u):
    W.until(lambda _: d.find_element(By.ID, "page").get_attribute("data-unit") == u)

def css(s):
    return d.find_element(By.CSS_SELECTOR, s)

def text_is(sel, t):
    W.until(lambda _: css(sel).text.strip() == t)

def no_hscroll():
    d.set_window_size(360, 800)
    time.sleep(0.3)
    sw = d.execute_script("return document.documentElement.scrollWidth")
    d.set_window_size(1000, 900)
    assert sw <= 360, f"scrollWidth {sw}"

def home():
    d.get(BASE + "/")
    unit_is("home")
    assert len(d.find_elements(By.CSS_SELECTOR, "#page .card")) == 6
    assert css("#back").is_displayed() is False
    no_hscroll()
check("home renders", home)

def open_counters():
    css('li[data-row-key="counters"] button[data-action="open"]').click()
    unit_is("counters")
    assert d.current_url.endswith("/counters"), d.current_url
    assert css("#back").is_displayed()
    assert len(d.find_elements(By.CSS_SELECTOR, ".counter-row")) == 10
check("open counters pushes", open_counters)

def increment():
    rev = int(css("#page").get_attribute("data-rev"))
    b = css('li[data-row-key="1"] button[data-action="increment"]')
    b.click()
    text_is('li[data-row-key="1"] .row-count', "1")
    W.until(lambda _: int(css("#page").get_attribute("data-rev")) == rev + 1)
    assert css('li[data-row-key="2"] .row-count').text == "0"
    no_hscroll()
check("increment row 1", increment)

def load_more():
    first = css('li[data-row-key="1"]')
    css('button[data-action="loadMore"]').click()
    W.until(lambda _: len(d.find_elements(By.CSS_SELECTOR, ".counter-row")) == 20)
    assert css('li[data-row-key="1"]') == first, "row element reused"
    text_is("#page .status", "Loaded page 2")
    W.until(lambda _: css('button[data-action="loadMore"]').is_enabled())
check("load more keeps rows", load_more)

def browser_back():
    d.back()
    unit_is("home")
    assert d.current_url.rstrip("/") == BASE, d.current_url
    assert not css("#back").is_displayed()
check("browser back → server back", browser_back)

def browser_forward():
    d.forward()
    unit_is("counters")
    assert d.current_url.endswith("/counters")
check("browser forward → open", browser_forward)

def header_back():
    css("#back").click()
    unit_is("home")
    W.until(lambda _: d.current_url.rstrip("/") == BASE)
check("header back button", header_back)

def deep_link_greeting():
    d.get(BASE + "/greeting")
    unit_is("greeting")
    assert d.current_url.endswith("/greeting")
    css('button[data-action="showGreeting"]').click()
    text_is('[data-text="/greeting"]', "Hello David Blaine")
    W.until(lambda _: css("#announcer").get_attribute("textContent") == "Hello David Blaine")
check("deep link greeting + announce", deep_link_greeting)

def demo():
    d.get(BASE + "/demo")
    unit_is("demo")
    b = css('button[data-action="refresh"]')
    # The view's colour name is bound to data-color; app.css maps it to a theme token (no inline colour).
    assert b.get_attribute("data-color") == "blue"
    blue = b.value_of_css_property("color")
    b.click()
    W.until(lambda _: b.text == "Data refreshed")
    assert b.get_attribute("data-color") == "orange"
    assert b.value_of_css_property("color") != blue
    assert "color" not in (b.get_attribute("style") or "")
check("demo colour name binding", demo)

def login():
    d.get(BASE + "/login")
    unit_is("login")
    submit = css('button[data-action="submit"]')
    assert not submit.is_enabled()
    u = css("#login-username"); u.click(); u.send_keys("david")
    text_is('[data-text="/message"]', "The password needs at least 6 characters")
    assert u.get_attribute("value") == "david"
    p = css("#login-password"); p.click(); p.send_keys("wrongpw")
    W.until(lambda _: submit.is_enabled())
    p.send_keys(Keys.ENTER)
    text_is('p.error', "Wrong username or password")
    p.clear(); p.send_keys("blaine123")
    W.until(lambda _: css('p.error').is_displayed() is False)
    W.until(lambda _: submit.is_enabled())
    submit.click()
    unit_is("main")
    assert d.current_url.endswith("/main")
    text_is('h1', "Welcome, david")
check("login flow", login)

def settings():
    css('button[data-action="openSettings"]').click()
    unit_is("settings")
    assert css("#page").get_attribute("data-presented") == "true"
    sel = Select(css("#settings-theme"))
    assert [o.text for o in sel.options] == ["light", "dark"], [o.text for o in sel.options]
    assert sel.first_selected_option.text == "light"
    sel.select_by_visible_text("dark")
    W.until(lambda _: int(css("#page").get_attribute("data-rev")) == 1)
    css('button[data-action="done"]').click()
    unit_is("main")
    text_is('[data-text="/themeLabel"]', "Theme: dark")
    assert d.current_url.endswith("/main"), d.current_url
    d.back()  # history should now go to login (server: back from main)
    unit_is("login")
check("settings present/back with theme", settings)

def logout():
    d.get(BASE + "/main")  # open main... it's not on stack any more so server pushes
    unit_is("main")
    css('button[data-action="logout"]').click()
    unit_is("login")
    assert d.current_url.endswith("/login")
    assert not css("#back").is_displayed()
check("logout → root", logout)

def employees():
    d.get(BASE + "/employees")
    unit_is("employees")
    text_is("#page .status", "Loading employees…")
    W.until(lambda _: len(d.find_elements(By.CSS_SELECTOR, ".employee")) == 24)
    assert not css("#page .status").is_displayed()
    W.until(lambda _: "24 employees loaded" in css("#announcer").get_attribute("textContent"))
    reload = css('button[data-action="reload"]')
    reload.click()
    W.until(lambda _: len(d.find_elements(By.CSS_SELECTOR, ".employee")) == 24 and reload.is_enabled())
    no_hscroll()
check("employees loading → loaded", employees)

def dashboard():
    d.get(BASE + "/dashboard")
    unit_is("dashboard")
    t = css('[data-text="/clock/ticks"]').text
    W.until(lambda _: css('[data-text="/clock/ticks"]').text != t)
    css('button[data-action="quote.shuffle"]').click()
    W.until(lambda _: css('[data-text="/stats/shuffles"]').text == "1")
    css('button[data-action="stats.reset"]').click()
    W.until(lambda _: css('[data-text="/stats/shuffles"]').text == "0")
    no_hscroll()
check("dashboard ticks + sub-view actions", dashboard)

def generic():
    d.get(BASE + "/profile")
    unit_is("profile")
    assert css("#page").get_attribute("class").find("generic") >= 0
    text_is('[data-text="/name"]', "Ada")
    text_is('[data-text="/address/city"]', "London")
    inp = css('form.generic-action input[name="rename"]')
    inp.send_keys("Grace"); inp.send_keys(Keys.ENTER)
    text_is('[data-text="/name"]', "Grace")
    age = css('form.generic-action input[name="setAge"]')
    assert age.get_attribute("type") == "number"
    age.send_keys("41"); css('button[data-action="setAge"]').click()
    text_is('[data-text="/age"]', "41")
    assert css('input[name="setActive"]').get_attribute("type") == "checkbox"
    css('button[data-action="clear"]').click()
    W.until(lambda _: len(d.find_elements(By.CSS_SELECTOR, '[data-text="/tags/0"]')) == 0)
    no_hscroll()
check("generic renderer", generic)

def expiry():
    d.get(BASE + "/counters")
    unit_is("counters")
    urllib.request.urlopen(urllib.request.Request(BASE + "/__expire", method="POST"))
    W.until(lambda _: "session expired" in css("#notice").text)
    unit_is("counters")
    css('li[data-row-key="1"] button[data-action="increment"]').click()
    text_is('li[data-row-key="1"] .row-count', "1")
check("session expiry recovery", expiry)



from selenium.webdriver.common.action_chains import ActionChains
def keyboard():
    d.get(BASE + "/")
    unit_is("home")
    d.execute_script("document.activeElement && document.activeElement.blur()")
    for _ in range(12):
        ActionChains(d).send_keys(Keys.TAB).perform()
        el = d.switch_to.active_element
        if el.get_attribute("data-action") == "open":
            break
    assert el.get_attribute("data-action") == "open", el.tag_name
    outline = d.execute_script("return getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none", outline
    ActionChains(d).send_keys(Keys.ENTER).perform()
    unit_is("greeting")
    assert d.switch_to.active_element.tag_name == "h1"
check("keyboard navigation + visible focus + heading focus", keyboard)

def slow_typing():
    d.get(BASE + "/login")
    unit_is("login")
    u = css("#login-username"); u.click(); u.clear()
    W.until(lambda _: css('[data-text="/message"]').text == "Enter your username")
    for ch in "davidblaine":
        u.send_keys(ch); time.sleep(0.09)
    time.sleep(0.6)
    assert u.get_attribute("value") == "davidblaine", u.get_attribute("value")
    assert d.switch_to.active_element == u
check("typing is never overwritten", slow_typing)

def drop_then_action():
    d.get(BASE + "/demo")
    unit_is("demo")
    css("#notice-close").click() if css("#notice").is_displayed() else None
    urllib.request.urlopen(urllib.request.Request(BASE + "/__drop", method="POST"))
    css('button[data-action="refresh"]').click()
    W.until(lambda _: "session expired" in css("#notice").text)
    unit_is("demo")
    b = css('button[data-action="refresh"]')
    W.until(lambda _: b.is_enabled())
    assert b.text == "Tap", b.text
    b.click()
    W.until(lambda _: b.text == "Data refreshed")
check("lost session on action → recovery at same page", drop_then_action)

def reload_keeps_page():
    d.get(BASE + "/counters")
    unit_is("counters")
    css('li[data-row-key="2"] button[data-action="increment"]').click()
    text_is('li[data-row-key="2"] .row-count', "1")
    d.refresh()
    unit_is("counters")
    text_is('li[data-row-key="2"] .row-count', "1")
check("reload keeps the session's page", reload_keeps_page)

def unknown_unit():
    d.get(BASE + "/nosuchpage")
    W.until(lambda _: css("#notice").is_displayed())
    assert "nosuchpage" in css("#notice").text


for entry in d.get_log("browser"):
    if entry["level"] in ("SEVERE", "WARNING"):
        print("console:", entry["level"], entry["message"][:300])
d.quit()
print("FAILURES:", failures)
sys.exit(1 if failures else 0)
