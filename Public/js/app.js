// The browser app: connects the protocol client to the DOM, the address bar and the
// back button. Everything protocol-related lives in client.js, binding rules in
// bindings.js/render.js, URL rules in routes.js.

import { MvvmrClient, ProtocolError } from "./client.js";
import { PageView } from "./render.js";
import { humanize } from "./bindings.js";
import { routeOf, unitForPath, navigationForHistoryEntry, historyActionFor } from "./routes.js";
import { claimSession } from "./tabs.js";

const SESSION_KEY = "mvvmr.session";
const pageElement = document.getElementById("page");
const noticeElement = document.getElementById("notice");
const noticeText = document.getElementById("notice-text");
const announcer = document.getElementById("announcer");
const backButton = document.getElementById("back");
const connectionElement = document.getElementById("connection");

const OUTBOX_KEY = "mvvmr.outbox";

const client = new MvvmrClient({
  fetch: (...args) => window.fetch(...args),
  createEventSource: (url) => new EventSource(url),
  // Actions not yet answered survive a reload of the tab (not its closing).
  outboxStorage: {
    load: () => JSON.parse(sessionStorage.getItem(OUTBOX_KEY) ?? "null"),
    save: (value) => (value ? sessionStorage.setItem(OUTBOX_KEY, JSON.stringify(value)) : sessionStorage.removeItem(OUTBOX_KEY)),
  },
});

/** @type {{root: string|null, units: Array<{name: string, route?: string}>}} */
let catalogue = { root: null, units: [] };
/** @type {PageView|null} */
let view = null;
/** Stacks of the history entries this document created, by `history.state.index`. */
const historyStacks = [];
let historyIndex = 0;
let expectedPop = false;
let handlingPop = false;
let started = false;
/** The claim on this tab's session id (tabs.js), released when the tab moves to another session. */
let sessionClaim = { claimed: true, release: () => {} };
/** Set when the tab resumed its session after a reload: the first page shown resets its write-only fields. */
let resumedAfterReload = false;
/** A refusal of the page the address named, while the tab was starting (it was told already). */
let startRefused = null;

// MARK: notices and announcements

let noticeTimer = null;

/**
 * Shows a message in the notice area.
 * @param {string} text
 * @param {"info"|"error"} [kind]
 */
function notify(text, kind = "info") {
  announce(text);
  noticeText.textContent = text;
  noticeElement.dataset.kind = kind;
  noticeElement.hidden = false;
  clearTimeout(noticeTimer);
  if (kind === "info") noticeTimer = setTimeout(() => (noticeElement.hidden = true), 10_000);
}

document.getElementById("notice-close").addEventListener("click", () => {
  noticeElement.hidden = true;
});

/** Speaks a change through the polite live region. */
function announce(text) {
  // Clearing first makes screen readers repeat an identical message.
  announcer.textContent = "";
  setTimeout(() => (announcer.textContent = text), 50);
}

function describeError(error) {
  if (error instanceof ProtocolError) {
    if (error.code === "network_error") return "The server cannot be reached. Check your connection and try again.";
    if (error.code === "rate_limited" || error.code === "overloaded" || error.code === "draining") return "The server is busy. Please try again in a moment.";
    return error.message || error.code;
  }
  return error?.message ?? String(error);
}

function reportError(error) {
  if (error instanceof ProtocolError && error.code === "unknown_session") return; // recovery tells the user
  notify(describeError(error), "error");
}

// MARK: connection status

/** The event stream's state, and the actions not yet answered (client.js: `connection`, `outbox`). */
let streamState = "open";
let outboxState = { pending: 0, waiting: 0, error: null };

function waitingText({ pending, error }) {
  const reason =
    error?.code === "network_error" ? "it cannot be reached" : error?.code === "store_unavailable" ? "it cannot save changes right now" : "it is busy or restarting";
  const changes = pending === 1 ? "1 change to send" : `${pending} changes to send`;
  return `Waiting for the server… (${reason}; ${changes})`;
}

/**
 * The status line in the header (a polite live region, always in the page so that what it
 * says is read out): pending while an action waits for the server, reconnecting while the
 * stream is down, empty otherwise.
 */
function showStatus() {
  let state = "open";
  let text = "";
  if (outboxState.waiting > 0) {
    state = "pending";
    text = waitingText(outboxState);
  } else if (streamState !== "open") {
    state = "reconnecting";
    text = "The server cannot be reached. Reconnecting… Anything you do meanwhile is kept and sent when it is back.";
  }
  connectionElement.dataset.outbox = String(outboxState.pending); // actions not yet answered (tests wait on it)
  const previous = connectionElement.dataset.state ?? "open";
  if (previous === state && connectionElement.textContent === text) return;
  connectionElement.dataset.state = state;
  connectionElement.textContent = text;
  if (previous === "pending" && state !== "pending" && outboxState.pending === 0) announce("Connected to the server again.");
}

/** Marks a control whose action waits for the server (`data-pending`, styled and kept busy). */
function markPending(element, waiting) {
  if (!element) return;
  if (waiting) element.setAttribute("data-pending", "true");
  else element.removeAttribute("data-pending");
}

// MARK: rendering

function templateFor(unit) {
  const template = document.getElementById(`tpl-${unit}`);
  return template instanceof HTMLTemplateElement ? template.content : null;
}

function titleOf(page) {
  const title = page?.view && typeof page.view === "object" ? page.view.title : null;
  return typeof title === "string" && title ? title : humanize(page?.unit ?? "");
}

/** Shows the page on top of the stack, reusing the current view when the unit is the same. */
async function showTop({ focus = false } = {}) {
  const unit = client.topUnit;
  if (!unit) return;
  let page = client.page(unit);
  if (!page) {
    setBusy(true);
    page = await client.loadPage(unit);
    setBusy(false);
    if (!page || client.topUnit !== unit) return;
  }
  if (view && view.unit === unit) {
    view.update(page, null);
  } else {
    view?.destroy();
    view = new PageView(pageElement, page, {
      template: templateFor(unit),
      onAction: (name, value, element) => runAction(unit, name, value, element),
      announce,
      onError: (error) => notify(error.message, "error"),
    });
    if (resumedAfterReload) view.resetWriteOnlyFields();
    if (focus) {
      const heading = pageElement.querySelector("h1, h2");
      if (heading) {
        heading.tabIndex = -1;
        heading.focus({ preventScroll: false });
      }
    }
  }
  resumedAfterReload = false;
  pageElement.dataset.unit = unit;
  pageElement.dataset.rev = String(page.rev);
  pageElement.dataset.presented = client.navigation.presented === unit ? "true" : "false";
  document.title = `${titleOf(page)} · MVVMR`;
  backButton.hidden = client.navigation.stack.length <= 1;
  setBusy(false);
}

function setBusy(busy) {
  pageElement.setAttribute("aria-busy", busy ? "true" : "false");
}

async function runAction(unit, name, value, element) {
  try {
    return await client.sendAction(unit, name, value, { onWaiting: (waiting) => markPending(element, waiting) });
  } catch (error) {
    if (error instanceof ProtocolError && error.code === "unknown_session") {
      notify("Your session expired; a new one was started. Your last change was not saved.");
    }
    reportError(error);
    throw error;
  }
}

client.on("page", ({ unit, page, patch }) => {
  if (!view || unit !== client.topUnit || view.unit !== unit) return;
  view.update(page, patch);
  pageElement.dataset.rev = String(page.rev);
  document.title = `${titleOf(page)} · MVVMR`;
});

client.on("navigation", (navigation) => {
  if (!started) return;
  syncHistory(navigation);
  showTop({ focus: true }).catch(reportError);
});

client.on("session", ({ session }) => {
  try {
    sessionStorage.setItem(SESSION_KEY, session);
  } catch {
    // Storage may be unavailable (private mode); a reload then starts a new session.
  }
  if (!sessionClaim.claimed || sessionClaim.session !== session) {
    // A new session (first visit, recovery): claim it, so a duplicate of this tab starts its own.
    sessionClaim.release();
    sessionClaim = { claimed: false, session, release: () => {} };
    claimSession(session, tabEnvironment()).then((claim) => {
      if (sessionClaim.session === session) sessionClaim = { ...claim, session };
      else claim.release();
    });
  }
});

function tabEnvironment() {
  return { locks: globalThis.navigator?.locks ?? null, BroadcastChannel: globalThis.BroadcastChannel ?? null };
}

/** Which units open only from within the app (`GET /api/units`: `entry: "flow_only"`). */
function opensOnlyInFlow(unit) {
  return catalogue.units.some((info) => info.name === unit && info.entry === "flow_only");
}

client.on("recovered", () => notify("Your session expired; a new one was started."));
client.on("navigationerror", ({ error, unit }) => {
  if (!started) startRefused = error;
  if (error.code === "unknown_unit") notify(`There is no page named “${unit ?? "?"}”.`, "error");
  else if (error.code === "entry_refused") notify(`“${humanize(unit ?? "")}” opens only from within the app, so you are at its start.`);
  else notify(describeError(error), "error");
});
client.on("error", ({ error, context }) => console.warn(`MVVMR: ${context}`, error));
client.on("connection", ({ state }) => {
  streamState = state;
  showStatus();
});
client.on("outbox", (state) => {
  outboxState = state;
  showStatus();
});
// The browser thinks the network is back: a waiting action need not sit out its backoff.
window.addEventListener("online", () => client.retryNow());

// MARK: history

function entryState(stack) {
  return { mvvmr: true, index: historyIndex, stack: [...stack] };
}

function writeHistory(action, stack) {
  const path = routeOf(stack.at(-1), catalogue.units, catalogue.root);
  // Keep route parameters (?id=7) only on the entry whose page they belong to.
  const url = action === "replace" && path === location.pathname ? path + location.search : path;
  if (action === "push") {
    historyIndex += 1;
    historyStacks.length = historyIndex;
    historyStacks[historyIndex] = [...stack];
    history.pushState(entryState(stack), "", url);
  } else {
    historyStacks[historyIndex] = [...stack];
    history.replaceState(entryState(stack), "", url);
  }
}

/** Keeps the address bar and the back button in step with the server's navigation. */
function syncHistory(navigation) {
  if (handlingPop || client.recovery) {
    // The browser already shows this entry (back/forward, deep link), or a lost session is
    // being replaced: make the current entry describe the stack we now have.
    writeHistory("replace", navigation.stack);
    return;
  }
  const action = historyActionFor(navigation, historyStacks[historyIndex - 1] ?? null);
  if (action === "back") {
    expectedPop = true;
    history.back();
    return;
  }
  writeHistory(action, navigation.stack);
}

window.addEventListener("popstate", async (event) => {
  const state = event.state?.mvvmr ? event.state : null;
  if (state) historyIndex = state.index;
  if (expectedPop) {
    expectedPop = false;
    return;
  }
  const request = navigationForHistoryEntry(client.navigation.stack, state, unitForPath(location.pathname, catalogue), client.navigation.forward);
  if (!request) return;
  handlingPop = true;
  try {
    await client.navigate(request);
  } catch (error) {
    reportError(error);
    // Put the address bar back on the page that is still shown.
    writeHistory("replace", client.navigation.stack);
  } finally {
    handlingPop = false;
  }
});

backButton.addEventListener("click", async () => {
  // Busy, not disabled: disabling would drop the keyboard focus; a second click goes back once more.
  backButton.setAttribute("aria-busy", "true");
  try {
    await client.back({ onWaiting: (waiting) => markPending(backButton, waiting) });
  } catch (error) {
    reportError(error);
  } finally {
    if (client.outbox.length === 0) backButton.removeAttribute("aria-busy");
  }
});

// MARK: presented pages as modal dialogs (dialog.js; a11y, issue 13 item 6)
// While the page on top was presented (`data-presented`, set in showTop), it is a modal
// dialog; Escape goes back as the Back button does. Kept in this one block on purpose.
import { watchPresentedPage } from "./dialog.js";

watchPresentedPage(pageElement, {
  dismiss: () => client.back({ onWaiting: (waiting) => markPending(backButton, waiting) }).catch(reportError),
});

// The stream holds one of the browser's few connections per host: let it go when the
// page is hidden for good or put in the back/forward cache, and follow on from the last
// seq when the page comes back.
window.addEventListener("pagehide", () => client.disconnect());
window.addEventListener("pageshow", (event) => {
  if (event.persisted && started) client.connect();
});

// MARK: start

async function loadCatalogue() {
  try {
    const response = await fetch("/api/units", { credentials: "same-origin", headers: { Accept: "application/json" } });
    if (response.ok) {
      const body = await response.json();
      catalogue = { root: body.root ?? null, units: Array.isArray(body.units) ? body.units : [] };
    }
  } catch {
    // Without the catalogue, routes fall back to /{unit} and / to the stack's bottom.
  }
}

async function start() {
  setBusy(true);
  let knownSession = null;
  try {
    knownSession = sessionStorage.getItem(SESSION_KEY);
  } catch {
    knownSession = null;
  }
  if (knownSession) {
    // A reload keeps the tab's session; a duplicated tab (its sessionStorage is a copy) finds the
    // id held by the tab it came from and starts its own, rather than moving that one.
    const claim = await claimSession(knownSession, tabEnvironment());
    if (claim.claimed) {
      sessionClaim = { ...claim, session: knownSession };
      resumedAfterReload = true;
    } else {
      knownSession = null;
    }
  }
  await loadCatalogue();
  const wanted = unitForPath(location.pathname, catalogue);
  const known = catalogue.units.length === 0 || catalogue.units.some((info) => info.name === wanted);
  try {
    // A new tab's session starts at the root; the page its address names is opened on top of it
    // below, so Back leads to the root as it does after following a link.
    await client.start({ knownSession });
  } catch (error) {
    pageElement.querySelector(".loading")?.replaceChildren(document.createTextNode("The app could not start."));
    notify(describeError(error), "error");
    return;
  }
  historyIndex = history.state?.mvvmr && Number.isInteger(history.state.index) ? history.state.index : 0;
  historyStacks[historyIndex] = [...client.navigation.stack];
  history.replaceState(entryState(client.navigation.stack), "", location.href);
  started = true;
  if (startRefused) {
    // The server started elsewhere and said why (navigationerror).
  } else if (wanted && !known) {
    notify(`There is no page named “${wanted}”.`, "error");
  } else if (wanted && wanted !== client.topUnit && !client.navigation.stack.includes(wanted) && opensOnlyInFlow(wanted)) {
    notify(`“${humanize(wanted)}” opens only from within the app, so you are at its start.`);
  } else if (wanted && wanted !== client.topUnit) {
    try {
      handlingPop = true; // the address bar already shows the deep link
      await client.open(wanted);
    } catch (error) {
      if (error instanceof ProtocolError && error.code === "unknown_unit") notify(`There is no page named “${wanted}”.`, "error");
      else if (error instanceof ProtocolError && error.code === "entry_refused") notify(`“${humanize(wanted)}” opens only from within the app, so you are at its start.`);
      else reportError(error);
    } finally {
      handlingPop = false;
    }
  }
  // The address bar follows the page the tab really shows (a refused or unknown link lands elsewhere).
  writeHistory("replace", client.navigation.stack);
  await showTop({ focus: false });
}

start();
