"""Accessibility of the browser client to WCAG 2.2 AA, checked in a real headless Chromium (issue 13, item 6).

One tour per configuration (light and dark colour scheme, desktop and phone size) walks every page state of the
demo through the app's own flow, and records at each state: axe-core's violations for the WCAG 2.0/2.1/2.2 A and AA
rules, a screenshot, the size of every visible control, the focus ring of every focusable control against what is
behind it, and the demo button's and the form fields' colours. The settings page, presented by main, is checked as
a modal dialog (focus kept inside, Escape goes back). The tests then assert on what the tour recorded, so one
browser serves every test of a configuration.

axe runs from its bundled `axe.min.js`, injected with `execute_script` (the page's CSP governs the page's own
scripts, not WebDriver's). selenium-axe-python bundles axe-core 4.x, which knows the WCAG 2.2 rules; the older
axe-selenium-python (axe-core 3.1) is used only when it is the one installed, and then the test says so.
"""
import importlib.util
import json
import os
import re
import signal
import time

import pytest
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from browsing import (DESKTOP, PHONE, click_action, console_errors, current_unit, open_chromium, shoot, type_into,
                      wait_for, wait_for_text, wait_for_unit, wait_until_settled)

AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
MIN_TARGET = 44  # CSS px, on a phone (WCAG 2.5.5's size; 2.5.8 AA asks 24)
MIN_TEXT_CONTRAST = 4.5
MIN_UI_CONTRAST = 3.0

# name, window size, dark colour scheme, phone emulation, screenshot prefix
CONFIGS = [
    ("light-desktop", DESKTOP, False, False, "a11y-light-"),
    ("dark-desktop", DESKTOP, True, False, "a11y-dark-"),
    ("light-phone", PHONE, False, True, "a11y-phone-"),
    ("dark-phone", PHONE, True, True, "a11y-phone-dark-"),
]


def axe_source():
    """The newest axe.min.js bundled by an installed package: (path, version)."""
    candidates = []
    for module, folder in (("selenium_axe_python", "axe-core"), ("axe_selenium_python", "node_modules/axe-core")):
        spec = importlib.util.find_spec(module)
        if spec is None or not spec.origin:
            continue
        path = os.path.join(os.path.dirname(spec.origin), folder, "axe.min.js")
        if os.path.exists(path):
            with open(path, encoding="utf8") as handle:
                source = handle.read()
            match = re.search(r"axe v(\d+)\.(\d+)\.(\d+)", source[:4096]) or re.search(r'\.version="(\d+)\.(\d+)\.(\d+)"', source)
            version = tuple(int(part) for part in match.groups()) if match else (0, 0, 0)
            candidates.append((version, path))
    if not candidates:
        pytest.fail("no axe-core found: scripts/install-deps.sh test installs selenium-axe-python and axe-selenium-python")
    version, path = max(candidates)
    return path, version


AXE_PATH, AXE_VERSION = axe_source()
with open(AXE_PATH, encoding="utf8") as _handle:
    AXE_SCRIPT = _handle.read()


# MARK: measuring in the page

# Colours: parsed from computed styles, composited over the backgrounds of the ancestors.
COLOUR_JS = r"""
window.__a11y = window.__a11y || (() => {
  const parse = (text) => {
    const m = /rgba?\(([^)]+)\)/.exec(text || "");
    if (!m) return null;
    const p = m[1].split(/[\s,\/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const over = (top, bottom) => [0, 1, 2].map((i) => top[i] * top[3] + bottom[i] * (1 - top[3])).concat([1]);
  /** The opaque colour behind `element`'s content: its own background over its ancestors'. */
  const backdrop = (element) => {
    const layers = [];
    for (let e = element; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
    }
    let colour = [255, 255, 255, 1];
    for (const layer of layers.reverse()) colour = over(layer, colour);
    return colour;
  };
  const visible = (e) => {
    if (e.closest("[hidden], [inert]") || e.closest(".visually-hidden")) return false;
    const r = e.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) return false;
    const s = getComputedStyle(e);
    return s.visibility !== "hidden" && s.display !== "none";
  };
  const describe = (e) => {
    let text = (e.getAttribute("aria-label") || e.textContent || e.value || "").trim().replace(/\s+/g, " ").slice(0, 30);
    const id = e.id ? "#" + e.id : "";
    const action = e.getAttribute("data-action") ? `[data-action=${e.getAttribute("data-action")}]` : "";
    return `${e.tagName.toLowerCase()}${id}${action} "${text}"`;
  };
  const CONTROLS = "a[href], button, input:not([type=hidden]), select, textarea, summary, [role=button], [tabindex]";
  return { parse, over, backdrop, visible, describe, CONTROLS };
})();
"""

TARGETS_JS = COLOUR_JS + r"""
const { visible, describe, CONTROLS } = window.__a11y;
const out = [];
for (const e of document.querySelectorAll(CONTROLS)) {
  if (e.matches("[tabindex^='-']:not(a, button, input, select, textarea)")) continue;  // focus targets, not controls
  if (!visible(e)) continue;
  const r = e.getBoundingClientRect();
  if (r.bottom <= 0 || r.right <= 0) continue;  // off screen (the skip link until focused)
  out.push({ control: describe(e), width: r.width, height: r.height });
}
return out;
"""

FOCUS_JS = COLOUR_JS + r"""
const { backdrop, parse, visible, describe, CONTROLS } = window.__a11y;
const out = [];
const controls = Array.from(document.querySelectorAll(CONTROLS))
  .filter((e) => e.tabIndex >= 0 && !e.disabled && visible(e) || e.classList.contains("skip-link"));
for (const e of controls.slice(0, arguments[0])) {
  e.focus({ preventScroll: true });
  if (document.activeElement !== e) continue;
  const s = getComputedStyle(e);
  const behind = backdrop(e.parentElement);
  out.push({
    control: describe(e),
    focusVisible: e.matches(":focus-visible"),
    style: s.outlineStyle, width: parseFloat(s.outlineWidth) || 0, offset: parseFloat(s.outlineOffset) || 0,
    ring: parse(s.outlineColor), behind, own: backdrop(e),
  });
}
return out;
"""

COLOURS_JS = COLOUR_JS + r"""
const { backdrop, parse } = window.__a11y;
const e = document.querySelector(arguments[0]);
if (!e) return null;
const s = getComputedStyle(e);
return { text: parse(s.color), background: backdrop(e), border: parse(s.borderTopColor),
         borderWidth: parseFloat(s.borderTopWidth) || 0, behind: backdrop(e.parentElement),
         dataColor: e.getAttribute("data-color"), inlineStyle: e.getAttribute("style") };
"""

FIELDS_JS = r"""
return Array.from(document.querySelectorAll("#page input")).map((field) => {
  const ids = (field.getAttribute("aria-describedby") || "").split(/\s+/).filter(Boolean);
  return { id: field.id, invalid: field.getAttribute("aria-invalid"), describedby: ids,
           descriptions: ids.map((id) => { const e = document.getElementById(id); return e ? e.textContent.trim() : null; }) };
});
"""

ACTIVE_JS = r"""
const a = document.activeElement;
const page = document.getElementById("page");
return { inPage: !!a && a !== document.body && page.contains(a), tag: a ? a.tagName.toLowerCase() : null,
         text: a ? (a.textContent || a.value || "").trim().slice(0, 30) : null, id: a ? a.id : null,
         action: a ? a.getAttribute("data-action") : null };
"""

DIALOG_JS = r"""
const page = document.getElementById("page");
const labelId = page.getAttribute("aria-labelledby");
const label = labelId ? document.getElementById(labelId) : null;
const outside = ["#back", ".brand", ".skip-link", "#notice"].map((selector) => {
  const e = document.querySelector(selector);
  return { selector, hidden: !e || !!e.closest("[inert], [aria-hidden=true], [hidden]"),
           inert: !!e && !!e.closest("[inert], [aria-hidden=true]") };
});
return { role: page.getAttribute("role"), modal: page.getAttribute("aria-modal"), presented: page.dataset.presented,
         label: label ? label.textContent.trim() : null, labelInside: !!label && page.contains(label), outside,
         focusables: Array.from(page.querySelectorAll("a[href], button, input, select, textarea, [tabindex]"))
           .filter((e) => e.tabIndex >= 0 && !e.disabled).length };
"""


def luminance(colour):
    def channel(value):
        value /= 255
        return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4
    r, g, b = (channel(c) for c in colour[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a, b):
    if a is None or b is None:
        return 0.0
    if len(a) > 3 and a[3] < 1:  # a translucent foreground shows blended with what is behind it
        a = [a[i] * a[3] + b[i] * (1 - a[3]) for i in range(3)]
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def hex_of(colour):
    return "#" + "".join(f"{round(c):02x}" for c in colour[:3]) if colour else "none"


# MARK: the tour

class Tour:
    """Drives one browser through every state, recording what the tests assert on."""

    def __init__(self, browser, base, prefix, phone):
        self.browser = browser
        self.base = base
        self.prefix = prefix
        self.phone = phone
        self.axe = {}        # state -> violations
        self.targets = {}    # state -> [{control, width, height}]
        self.focus = {}      # state -> [ring records]
        self.colours = {}    # name -> colour record
        self.fields = {}     # state -> login fields
        self.dialog = {}     # observations of the presented settings page
        self.console = []
        self.problems = []   # steps of the tour that did not happen as expected

    def run_axe(self):
        if not self.browser.execute_script("return typeof window.axe === 'object'"):
            self.browser.execute_script(AXE_SCRIPT)
        self.browser.set_script_timeout(30)
        result = self.browser.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "axe.run(document, arguments[0]).then((r) => done(r.violations), (e) => done({error: String(e)}));",
            {"runOnly": {"type": "tag", "values": AXE_TAGS}, "resultTypes": ["violations"]})
        if isinstance(result, dict):
            raise AssertionError(f"axe failed: {result['error']}")
        return result

    def state(self, name, focus_rings=True, max_focus=40):
        """Records everything about the page as it is now, under `name`."""
        self.browser.execute_script("window.scrollTo(0, 0)")
        shoot(self.browser, self.prefix + name)
        self.axe[name] = self.run_axe()
        self.targets[name] = self.browser.execute_script(TARGETS_JS)
        if focus_rings:
            # One real key press makes the browser show focus as for a keyboard user; focus moved by script
            # afterwards keeps showing it (:focus-visible).
            self.keyboard_focus()
            self.focus[name] = self.browser.execute_script(FOCUS_JS, max_focus)
        self.console += console_errors(self.browser)

    def keyboard_focus(self):
        """Moves focus with a real Tab key press, so the browser shows focus as for a keyboard user: later focus
        moves by script keep showing it (:focus-visible)."""
        self.browser.execute_script(
            "const first = Array.from(document.querySelectorAll('a[href], button, input, select, textarea'))"
            ".find((e) => !e.disabled && !e.closest('[inert], [hidden]') && e.getClientRects().length > 0);"
            "if (first) first.focus();")
        ActionChains(self.browser).send_keys(Keys.TAB).perform()

    def back(self, unit):
        self.browser.find_element(By.ID, "back").click()
        wait_for_unit(self.browser, unit)

    def open_from_home(self, unit):
        self.browser.find_element(By.CSS_SELECTOR, f'#page [data-row-key="{unit}"] [data-action="open"]').click()
        wait_for_unit(self.browser, unit)

    def walk(self):
        b = self.browser
        b.get(self.base + "/")
        wait_for_unit(b, "home")
        wait_for_text(b, "Greeting")
        wait_until_settled(b)
        self.state("home")
        self.skip_link()

        self.open_from_home("greeting")
        wait_for_text(b, "Say hello to who?")
        self.state("greeting-before")
        click_action(b, "showGreeting")
        wait_for_text(b, "Hello David Blaine")
        self.state("greeting-after")
        self.back("home")

        self.open_from_home("demo")
        wait_for_text(b, "Tap")
        self.colours["demo-before"] = b.execute_script(COLOURS_JS, "#page .demo-button")
        self.state("demo-before")
        click_action(b, "refresh")
        wait_for_text(b, "Data refreshed")
        wait_until_settled(b)
        self.colours["demo-after"] = b.execute_script(COLOURS_JS, "#page .demo-button")
        self.state("demo-after")
        self.unknown_colour()
        self.back("home")

        self.open_from_home("login")
        wait_for_text(b, "Enter your username")
        self.fields["login-empty"] = b.execute_script(FIELDS_JS)
        self.colours["login-field"] = b.execute_script(COLOURS_JS, "#login-username")
        self.state("login-empty")
        type_into(b, "username", "david")
        type_into(b, "password", "wrong-pass")
        wait_for_text(b, "Ready to sign in")
        click_action(b, "submit")
        wait_for_text(b, "Wrong username or password")
        wait_until_settled(b)
        self.fields["login-error"] = b.execute_script(FIELDS_JS)
        self.state("login-error")
        type_into(b, "password", "blaine123")
        wait_for_text(b, "Ready to sign in")
        wait_until_settled(b)
        wait_for(b, lambda d: "Wrong username" not in d.find_element(By.ID, "page").text)
        self.fields["login-ready"] = b.execute_script(FIELDS_JS)
        self.state("login-ready")
        click_action(b, "submit")
        wait_for_unit(b, "main")
        wait_for_text(b, "Welcome, david")
        wait_until_settled(b)
        self.state("main")

        self.settings_dialog()

        click_action(b, "openSettings")
        wait_for_unit(b, "settings")
        wait_until_settled(b)
        Select(b.find_element(By.CSS_SELECTOR, '#page select[data-action="theme"]')).select_by_visible_text("dark")
        wait_until_settled(b)
        self.state("settings-dark")
        click_action(b, "done")
        wait_for_unit(b, "main")
        wait_for_text(b, "Theme: dark")
        wait_until_settled(b)
        self.state("main-dark-theme")

        b.get(self.base + "/employees")
        wait_for_unit(b, "employees")
        busy = b.find_element(By.CSS_SELECTOR, "#page ul.employees").get_attribute("aria-busy")
        if busy != "true":
            self.problems.append("employees: the loading state was over before it could be checked")
        self.state("employees-loading", focus_rings=False)
        wait_for(b, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#page [data-row-key]")) >= 20, timeout=15)
        self.state("employees-loaded")

        b.get(self.base + "/counters")
        wait_for_unit(b, "counters")
        wait_for_text(b, "Row 1")
        click_action(b, "increment", index=1)
        click_action(b, "increment", index=1)
        wait_for(b, lambda d: d.find_elements(By.CSS_SELECTOR, "#page [data-row-key] .row-count")[1].text == "2")
        click_action(b, "loadMore")
        wait_for_text(b, "Loaded page 2")
        wait_until_settled(b)
        self.state("counters", max_focus=12)

        b.get(self.base + "/dashboard")
        wait_for_unit(b, "dashboard")
        wait_for(b, lambda d: d.find_element(By.CSS_SELECTOR, '#page [data-text="/clock/time"]').text != "")
        self.state("dashboard")

        b.get(self.base + "/board")
        wait_for_unit(b, "board")
        b.find_element(By.ID, "board-draft").send_keys("Hello, board")
        click_action(b, "post")
        wait_for(b, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#page [data-row-key]")) >= 1)
        wait_until_settled(b)
        self.state("board")

        b.get(self.base + "/nosuchpage")
        wait_for(b, lambda d: "There is no page named" in d.find_element(By.ID, "notice-text").text)
        wait_for(b, lambda d: current_unit(d) not in ("", None))
        wait_until_settled(b)
        self.state("notice")

    def skip_link(self):
        """The skip link, shown while focused, measured then."""
        b = self.browser
        self.keyboard_focus()
        b.execute_script("document.querySelector('.brand').focus()")
        ActionChains(b).key_down(Keys.SHIFT).send_keys(Keys.TAB).key_up(Keys.SHIFT).perform()
        shown = b.execute_script(
            "const e = document.activeElement; const r = e.getBoundingClientRect();"
            "return {skip: e.classList.contains('skip-link'), width: r.width, height: r.height, top: r.top};")
        self.targets["skip-link-focused"] = [{"control": "a.skip-link (focused)", **shown}] if self.phone else []
        if not shown["skip"]:
            self.problems.append("the first Tab does not reach the skip link")

    def unknown_colour(self):
        """A colour name the client does not know shows in the default accent."""
        b = self.browser
        expected = b.execute_script(
            "const probe = document.createElement('button'); probe.className = 'secondary';"
            "document.getElementById('page').append(probe); const c = getComputedStyle(probe).color; probe.remove(); return c;")
        b.execute_script("document.querySelector('#page .demo-button').setAttribute('data-color', 'chartreuse-ish')")
        record = b.execute_script(COLOURS_JS, "#page .demo-button")
        record["expectedAccent"] = expected
        self.colours["demo-unknown"] = record
        b.execute_script("document.querySelector('#page .demo-button').setAttribute('data-color', 'orange')")

    def settings_dialog(self):
        """The presented settings page as a modal dialog: focus inside and kept there, Escape goes back."""
        b = self.browser
        d = self.dialog
        click_action(b, "openSettings")
        wait_for_unit(b, "settings")
        wait_until_settled(b)
        time.sleep(0.1)
        d["opened"] = b.execute_script(DIALOG_JS)
        d["focus-after-open"] = b.execute_script(ACTIVE_JS)
        self.state("settings-dialog")
        # Tab and Shift+Tab, more times than the dialog has controls: focus must stay inside and visit them all.
        b.execute_script("const h = document.querySelector('#page h1'); if (h) { h.tabIndex = -1; h.focus(); }")
        count = max(d["opened"]["focusables"], 1)
        d["tab"] = []
        for _ in range(count + 2):
            ActionChains(b).send_keys(Keys.TAB).perform()
            d["tab"].append(b.execute_script(ACTIVE_JS))
        d["shift-tab"] = []
        for _ in range(count + 2):
            ActionChains(b).key_down(Keys.SHIFT).send_keys(Keys.TAB).key_up(Keys.SHIFT).perform()
            d["shift-tab"].append(b.execute_script(ACTIVE_JS))
        ActionChains(b).send_keys(Keys.ESCAPE).perform()
        try:
            wait_for(b, lambda x: current_unit(x) == "main", timeout=5)
            wait_until_settled(b)
            time.sleep(0.1)
            d["escaped"] = True
        except TimeoutException:
            d["escaped"] = False
        d["after-escape"] = b.execute_script(DIALOG_JS)
        d["focus-after-escape"] = b.execute_script(ACTIVE_JS)
        if not d["escaped"]:
            # Leave the way the page offers, so the rest of the tour goes on.
            click_action(b, "done")
            wait_for_unit(b, "main")
            wait_until_settled(b)


@pytest.fixture(scope="module")
def a11y_server():
    from conftest import Server

    # A slow employee service, so the loading state lasts long enough to be checked.
    server = Server({"EMPLOYEE_LATENCY_MS": 2500})
    yield server
    server.stop()


@pytest.fixture(scope="module", params=CONFIGS, ids=[config[0] for config in CONFIGS])
def tour(request, a11y_server):
    name, size, dark, phone, prefix = request.param
    browser = open_chromium(size, dark=dark, mobile=phone)
    try:
        tour = Tour(browser, f"http://127.0.0.1:{a11y_server.port}", prefix, phone)
        tour.name = name
        tour.dark = dark
        tour.walk()
        yield tour
    finally:
        browser.quit()


# MARK: the tests

def report(violations):
    lines = []
    for violation in violations:
        lines.append(f"  [{violation['impact']}] {violation['id']}: {violation['help']} ({violation['helpUrl']})")
        for node in violation["nodes"][:6]:
            summary = (node.get("failureSummary") or "").replace("\n", " ")
            lines.append(f"      {', '.join(map(str, node['target']))}: {summary[:220]}")
        if len(violation["nodes"]) > 6:
            lines.append(f"      … and {len(violation['nodes']) - 6} more")
    return "\n".join(lines)


def test_axe_runs_a_wcag_22_engine():
    # axe-core learnt the WCAG 2.2 rules (target-size) in 4.5; an older bundle would check less than it says.
    assert AXE_VERSION >= (4, 5, 0), f"{AXE_PATH} is axe-core {AXE_VERSION}: install selenium-axe-python"


def test_axe_finds_no_wcag_violations_in_any_state(tour):
    counts = {state: sum(len(v["nodes"]) for v in violations) for state, violations in tour.axe.items()}
    print(f"\naxe-core {'.'.join(map(str, AXE_VERSION))}, {tour.name}: violations (nodes) per state: {json.dumps(counts)}")
    failing = {state: violations for state, violations in tour.axe.items() if violations}
    assert not failing, f"axe found WCAG violations ({tour.name}):\n" + "\n".join(
        f"{state}:\n{report(violations)}" for state, violations in failing.items())
    assert not tour.problems, tour.problems


def test_no_console_errors_or_csp_refusals_during_the_tour(tour):
    assert [m for m in tour.console if "Content Security Policy" in m or "Refused" in m] == []
    assert [m for m in tour.console if "favicon" not in m and "404" not in m] == []


def test_every_visible_control_is_at_least_44px_on_a_phone_and_24px_elsewhere(tour):
    # 44×44 on a phone (the bar); WCAG 2.2 AA's own minimum (2.5.8, 24×24) at desktop size.
    minimum = MIN_TARGET if tour.phone else 24
    small = []
    for state, targets in tour.targets.items():
        for target in targets:
            if target["width"] < minimum - 0.5 or target["height"] < minimum - 0.5:
                small.append(f"{state}: {target['control']} is {target['width']:.0f}×{target['height']:.0f}")
    assert sum(len(t) for t in tour.targets.values()) > 20, "the tour measured almost nothing"
    assert not small, f"controls under {minimum}×{minimum} CSS px:\n" + "\n".join(sorted(set(small)))


def test_focus_ring_contrasts_3_to_1_with_what_is_behind_it(tour):
    weak = []
    measured = 0
    figures = {}
    for state, rings in tour.focus.items():
        for ring in rings:
            measured += 1
            if ring["style"] in ("none", "hidden") or ring["width"] < 2:
                weak.append(f"{state}: {ring['control']} has no visible ring ({ring['style']} {ring['width']}px)")
                continue
            ratio = contrast(ring["ring"], ring["behind"])
            if ring["offset"] <= 0:
                ratio = min(ratio, contrast(ring["ring"], ring["own"]))
            figures[(hex_of(ring["ring"]), hex_of(ring["behind"]))] = round(ratio, 2)
            if ratio < MIN_UI_CONTRAST:
                weak.append(f"{state}: {ring['control']}: ring {hex_of(ring['ring'])} on {hex_of(ring['behind'])} is {ratio:.2f}:1")
    print(f"\nfocus ring contrast ({tour.name}): " + ", ".join(f"{r} on {b}: {v}:1" for (r, b), v in sorted(figures.items())))
    assert measured > 20, "the tour focused almost nothing"
    assert not weak, "focus rings under 3:1:\n" + "\n".join(sorted(set(weak)))


def test_demo_button_colour_is_a_named_token_with_4_5_to_1_text_contrast(tour):
    figures = {}
    for state in ("demo-before", "demo-after"):
        record = tour.colours[state]
        assert record, f"{state}: no demo button"
        text = contrast(record["text"], record["background"])
        border = contrast(record["border"], record["behind"])
        figures[state] = f"text {hex_of(record['text'])} on {hex_of(record['background'])} {text:.2f}:1, " \
                         f"border on {hex_of(record['behind'])} {border:.2f}:1"
    print(f"\ndemo button ({tour.name}): {figures}")
    for state in ("demo-before", "demo-after"):
        record = tour.colours[state]
        assert contrast(record["text"], record["background"]) >= MIN_TEXT_CONTRAST, f"{state}: {figures[state]}"
        assert contrast(record["border"], record["behind"]) >= MIN_UI_CONTRAST, f"{state}: {figures[state]}"
    # The view names the colour; the client styles by that name, with no raw CSS colour bound inline.
    assert tour.colours["demo-before"]["dataColor"] == "blue"
    assert tour.colours["demo-after"]["dataColor"] == "orange"
    for state in ("demo-before", "demo-after"):
        assert "color" not in (tour.colours[state]["inlineStyle"] or ""), tour.colours[state]["inlineStyle"]
    assert tour.colours["demo-before"]["text"] != tour.colours["demo-after"]["text"], "blue and orange look alike"
    unknown = tour.colours["demo-unknown"]
    assert hex_of(unknown["text"]) == hex_of(parse_css(unknown["expectedAccent"])), \
        f"an unknown colour name shows {hex_of(unknown['text'])}, not the default accent {unknown['expectedAccent']}"


def parse_css(text):
    match = re.search(r"rgba?\(([^)]+)\)", text or "")
    return [float(part) for part in re.split(r"[\s,/]+", match.group(1).strip())][:4] if match else None


def test_form_field_boundaries_contrast_3_to_1(tour):
    record = tour.colours["login-field"]
    ratio = contrast(record["border"], record["behind"])
    assert record["borderWidth"] >= 1 and ratio >= MIN_UI_CONTRAST, \
        f"field border {hex_of(record['border'])} on {hex_of(record['behind'])} is {ratio:.2f}:1"


def test_login_fields_are_tied_to_the_error(tour):
    for field in tour.fields["login-error"]:
        assert field["invalid"] == "true", field
        assert "Wrong username or password" in field["descriptions"], field
    for state in ("login-empty", "login-ready"):
        for field in tour.fields[state]:
            assert field["invalid"] in (None, "false"), (state, field)
            assert "Wrong username or password" not in field["descriptions"], (state, field)
    assert len(tour.fields["login-error"]) == 2


def test_presented_settings_page_is_a_modal_dialog(tour):
    d = tour.dialog
    opened = d["opened"]
    assert opened["presented"] == "true"
    assert opened["role"] == "dialog" and opened["modal"] == "true", opened
    assert opened["label"] == "Settings" and opened["labelInside"], opened
    assert all(part["hidden"] for part in opened["outside"]), f"the rest of the app is not inert: {opened['outside']}"
    assert d["focus-after-open"]["inPage"], f"focus is not in the dialog: {d['focus-after-open']}"
    for key in ("tab", "shift-tab"):
        outside = [step for step in d[key] if not step["inPage"]]
        assert not outside, f"{key} left the dialog: {outside}"
    visited = {(step["tag"], step["id"], step["action"]) for step in d["tab"]}
    assert len(visited) >= opened["focusables"] >= 2, f"Tab did not cycle through the dialog's controls: {d['tab']}"


def test_escape_closes_the_dialog_and_focus_returns_to_the_page(tour):
    d = tour.dialog
    assert d["escaped"], "Escape did not go back from the presented settings page"
    after = d["after-escape"]
    assert after["presented"] == "false" and after["role"] in (None, "main", "region"), after
    assert not any(part["inert"] for part in after["outside"]), f"the app stays inert: {after['outside']}"
    assert d["focus-after-escape"]["inPage"], f"focus did not return to the page: {d['focus-after-escape']}"
    assert d["focus-after-escape"]["action"] == "openSettings", \
        f"focus did not return to the control that opened the dialog: {d['focus-after-escape']}"


def test_axe_is_injected_past_the_pages_csp_which_still_refuses_inline_script(tour):
    b = tour.browser
    # WebDriver's execute_script is not page script: the CSP (script-src 'self') does not stop it, which is how
    # axe got in. An inline <script> the page itself would run is still refused.
    assert b.execute_script("return typeof window.axe") == "object"
    b.execute_script("const s = document.createElement('script'); s.textContent = 'window.__inline = 1';"
                     "document.head.append(s);")
    time.sleep(0.2)
    assert b.execute_script("return window.__inline === undefined")
    assert any("Content Security Policy" in m for m in console_errors(b)), "the page has no CSP to test against"


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_the_outage_banner_is_announced_and_passes_axe_with_readable_contrast(start_server, dark):
    """The server dies under the counters page: the banner that says so is a polite status region, axe finds
    nothing wrong with the page in that state, and its text contrasts 4.5:1 with its background."""
    server = start_server()
    browser = open_chromium(DESKTOP, dark=dark)
    try:
        browser.get(f"http://127.0.0.1:{server.port}/counters")
        wait_for_unit(browser, "counters")
        wait_for(browser, lambda b: "Row 1" in b.find_element(By.ID, "page").text)
        server.stop(signal.SIGKILL)
        banner = browser.find_element(By.ID, "connection")
        wait_for(browser, lambda b: banner.get_attribute("data-state") == "reconnecting" and banner.is_displayed())
        browser.find_elements(By.CSS_SELECTOR, '#page button[data-action="increment"]')[0].click()
        wait_for(browser, lambda b: banner.get_attribute("data-state") == "pending")
        assert banner.get_attribute("role") == "status" and banner.get_attribute("aria-live") == "polite"
        shoot(browser, f"a11y-{'dark' if dark else 'light'}-outage-banner")
        violations = Tour(browser, "", "", False).run_axe()
        assert violations == [], report(violations)
        colours = browser.execute_script(
            "const s = getComputedStyle(arguments[0]);"
            "const parse = (c) => c.match(/[\\d.]+/g).map(Number);"
            "return [parse(s.color), parse(s.backgroundColor)];", banner)
        ratio = contrast(colours[0], colours[1])
        assert ratio >= 4.5, f"banner text {hex_of(colours[0])} on {hex_of(colours[1])}: {ratio:.2f}:1"
    finally:
        browser.quit()
