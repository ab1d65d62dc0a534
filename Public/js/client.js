// The protocol client: sessions, pages, actions, navigation and the event stream.
// No DOM: `fetch`, the EventSource factory, timers and the random key source are
// injected, so the rules below are tested in Node with fakes.
//
// Rev rules (PROTOCOL.md): a page's copy moves only forward. A patch is applied only
// from the rev this client holds; one whose rev is not newer is ignored (the acting
// client sees its changes twice, in the response and over SSE); a gap triggers a
// resync (GET the page). A snapshot or a navigation always replaces the copy.

import { applyPatch } from "./patch.js";

/** An error answered by the server (`{"error": {"code", "message", "details"}}`) or the network. */
export class ProtocolError extends Error {
  /**
   * @param {string} code the stable error code, or `network_error`
   * @param {string} message
   * @param {{status?: number, details?: unknown}} [info]
   */
  constructor(code, message, { status = 0, details = null } = {}) {
    super(message);
    this.name = "ProtocolError";
    this.code = code;
    this.status = status;
    this.details = details;
  }
}

/**
 * @typedef {{name: string, value: string}} ActionInfo
 * @typedef {{unit: string, rev: number, view: unknown, actions: ActionInfo[]}} Page
 * @typedef {{stack: string[], presented: string|null, forward: string[]}} Navigation  `forward`: pages a forward navigation brings back, nearest first
 */

/**
 * Statuses that say the server, or the store that keeps its sessions, is unavailable for now
 * (`store_unavailable`, `draining`, `overloaded`, a proxy's 502/504): the request was not
 * applied ("a failed request changes nothing"), so it is sent again until it is answered.
 */
const UNAVAILABLE = new Set([502, 503, 504]);

/** 429: a live server's "not now"; retried `maxRetries` times, then reported. */
const THROTTLED = 429;

/**
 * Whether an error means "try again later" rather than an answer: the server could not be
 * reached, or it (or its store) is unavailable.
 * @param {unknown} error
 * @returns {boolean}
 */
export function isUnavailable(error) {
  return error instanceof ProtocolError && (error.code === "network_error" || UNAVAILABLE.has(error.status));
}

/**
 * Reads a `Retry-After` header: delay-seconds or an HTTP date.
 * @param {string|null|undefined} text
 * @param {number} [now] the current time in ms
 * @returns {number|null} seconds, or null when absent or unreadable
 */
export function parseRetryAfter(text, now = Date.now()) {
  if (typeof text !== "string" || !text.trim()) return null;
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? null : Math.max(0, (date - now) / 1000);
}

/**
 * The wait before retry number `attempt` (0 for the first retry): what the server's
 * `Retry-After` asked for, else an exponential backoff from `base` up to `max`.
 * @param {number} attempt
 * @param {{retryAfter?: number|null}|null} error the failure being retried
 * @param {{base?: number, max?: number, maxRetryAfter?: number}} [limits] in ms
 * @returns {number} ms
 */
export function retryDelay(attempt, error, { base = 250, max = 4000, maxRetryAfter = 60_000 } = {}) {
  const retryAfter = error?.retryAfter;
  if (typeof retryAfter === "number" && Number.isFinite(retryAfter)) return Math.max(100, Math.min(maxRetryAfter, retryAfter * 1000));
  return Math.min(max, base * 2 ** Math.min(attempt, 30));
}

/** The failure of an outbox entry whose session was lost and replaced before it was answered. */
function lostSessionError() {
  return new ProtocolError("unknown_session", "The session this was made in was lost; it was not sent to the new one.", { status: 404 });
}

function defaultRandomKey() {
  if (globalThis.crypto?.randomUUID) return globalThis.crypto.randomUUID();
  const bytes = new Uint8Array(16);
  globalThis.crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * A client for one browser tab's view of a session.
 *
 * Events (subscribe with {@link MvvmrClient#on}):
 * - `page` `{unit, page, reason}`: a page's copy changed (`reason`: `patch`, `snapshot`, `navigation`, `resync`)
 * - `navigation` `{type, stack, presented, previousStack, origin}`: the stack changed
 * - `session` `{session, recovered, previousSession}`: a session was opened or resumed
 * - `recovered` `{previousSession, session, unit}`: the session was lost and a new one started
 * - `navigationerror` `{error, unit}`: an action was applied but the navigation it caused failed
 * - `error` `{error, context}`: something failed that no caller awaited
 * - `connection` `{state}`: `open`, `reconnecting`, `closed`
 * - `dropped` `{unit, action}`: an action made on the page on top was not sent because that page
 *   was no longer on top at its turn (an earlier action or navigation in the outbox navigated away)
 * - `resumed` `{actions}`: actions a reload interrupted were queued again (see `outboxStorage`)
 * - `outbox` `{pending, waiting, error}`: actions and navigations not yet answered (`pending`),
 *   how many of them wait for an unavailable server (`waiting`: 0 or 1, since they go one at a
 *   time) and the failure they wait out
 *
 * Actions and navigations go out one at a time, in the order they were made. One the server
 * could not take (unreachable, 502/503/504) is not dropped: it waits, with its
 * Idempotency-Key, and is sent again with backoff until it is answered.
 */
export class MvvmrClient {
  /**
   * @param {object} options
   * @param {typeof fetch} options.fetch the fetch function (the browser's, or a fake)
   * @param {(url: string) => EventSource} [options.createEventSource] opens the event stream
   * @param {string} [options.baseURL] prefix for every path, `""` for same origin
   * @param {() => string} [options.randomKey] makes Idempotency-Keys
   * @param {(ms: number) => Promise<void>} [options.sleep] waits between retries
   * @param {number} [options.maxRetries] retries of an action answered 429; an unavailable server
   *   (network error, 502/503/504) is retried until it answers
   * @param {{base?: number, max?: number, maxRetryAfter?: number}} [options.backoff] retry waits, ms
   * @param {number} [options.reconnectDelay] ms before reopening a stream the browser gave up on
   * @param {{load: () => any, save: (value: any) => void}|null} [options.outboxStorage] keeps the
   *   actions not yet answered across a reload of the tab (the app gives it sessionStorage), so
   *   they are sent, with their keys, when the tab comes back to the same session
   */
  constructor({ fetch, createEventSource = null, baseURL = "", randomKey = defaultRandomKey, sleep, maxRetries = 3, backoff = {}, reconnectDelay = 2000, outboxStorage = null }) {
    if (typeof fetch !== "function") throw new TypeError("MvvmrClient needs a fetch function");
    this.fetchFunction = fetch;
    this.createEventSource = createEventSource;
    this.baseURL = baseURL;
    this.randomKey = randomKey;
    this.sleep = sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.maxRetries = maxRetries;
    this.backoff = backoff;
    this.reconnectDelay = reconnectDelay;
    this.outboxStorage = outboxStorage;
    /** @type {string|null} */ this.session = null;
    /** @type {number} the id of the latest session event this client knows of */
    this.seq = 0;
    /** @type {Map<string, Page>} */ this.pages = new Map();
    /** @type {Navigation} */ this.navigation = { stack: [], presented: null, forward: [] };
    /** @type {EventSource|null} */ this.events = null;
    /** The stream's last reported state (`connection` event): `open`, `reconnecting` or `closed`. */
    this.streamState = "open";
    this.listeners = new Map();
    this.resyncs = new Map();
    /** Actions and navigations not yet answered, in order; the first is the one being sent. */
    this.outbox = [];
    this.outboxTail = Promise.resolve();
    /** Ends the retry waits early (the stream reopened, the browser came online). */
    this.wakers = new Set();
    /** +1 for every session this client opens: an outbox entry belongs to the one it was made in. */
    this.generation = 0;
    this.recovery = null;
    this.closed = false;
  }

  // MARK: events

  /**
   * Subscribes to a client event.
   * @param {string} type
   * @param {(detail: any) => void} listener
   * @returns {() => void} unsubscribes
   */
  on(type, listener) {
    if (!this.listeners.has(type)) this.listeners.set(type, new Set());
    this.listeners.get(type).add(listener);
    return () => this.listeners.get(type)?.delete(listener);
  }

  emit(type, detail) {
    for (const listener of this.listeners.get(type) ?? []) {
      try {
        listener(detail);
      } catch (error) {
        if (type !== "error") this.emit("error", { error, context: `listener for ${type}` });
      }
    }
  }

  // MARK: state accessors

  /** @returns {string|null} the unit on top of the navigation stack */
  get topUnit() {
    const { stack } = this.navigation;
    return stack.length ? stack[stack.length - 1] : null;
  }

  /**
   * The client's copy of a page.
   * @param {string} unit
   * @returns {Page|undefined}
   */
  page(unit) {
    return this.pages.get(unit);
  }

  // MARK: HTTP

  /**
   * Sends one request; JSON in and out. Throws {@link ProtocolError} for error statuses
   * and network failures. Does not recover sessions (see {@link MvvmrClient#call}).
   * @returns {Promise<{status: number, body: any}>}
   */
  async request(method, path, { body, headers = {} } = {}) {
    const init = { method, credentials: "same-origin", headers: { Accept: "application/json", ...headers } };
    // The tab's own session: the cookie is shared by every tab, the header wins over it.
    if (this.session && !init.headers["X-Session-ID"]) init.headers["X-Session-ID"] = this.session;
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    let response;
    try {
      response = await this.fetchFunction(this.baseURL + path, init);
    } catch (error) {
      throw new ProtocolError("network_error", `Could not reach the server (${error?.message ?? error})`);
    }
    let parsed = null;
    const text = await response.text();
    if (text) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = null;
      }
    }
    if (!response.ok) {
      const error = parsed?.error ?? {};
      const problem = new ProtocolError(error.code ?? `http_${response.status}`, error.message ?? `HTTP ${response.status}`, {
        status: response.status,
        details: error.details ?? null,
      });
      problem.retryAfter = parseRetryAfter(response.headers?.get?.("Retry-After"));
      throw problem;
    }
    return { status: response.status, body: parsed };
  }

  /**
   * Like {@link MvvmrClient#request}, but a `404 unknown_session` starts a new session
   * at the current page (see {@link MvvmrClient#recover}) before rethrowing.
   */
  async call(method, path, options) {
    try {
      return await this.request(method, path, options);
    } catch (error) {
      if (error instanceof ProtocolError && error.code === "unknown_session") {
        await this.recover();
      }
      throw error;
    }
  }

  // MARK: sessions

  /**
   * Opens the client for one tab. With `knownSession` (the id this tab used before, kept in
   * its sessionStorage) it resumes that session (`GET /api/session`, the id in `X-Session-ID`);
   * when it is gone, a new one is started and a `recovered` event emitted. Without one (a new
   * tab) it creates a session at once (`POST /api/sessions`), at `unit` when given, so a deep
   * link costs one request and no failed one. Then it connects the event stream.
   * @param {{knownSession?: string|null, unit?: string|null}} [options]
   * @returns {Promise<void>}
   */
  async start({ knownSession = null, unit = null } = {}) {
    this.closed = false;
    if (knownSession) {
      this.session = knownSession;
      try {
        const { body } = await this.request("GET", "/api/session");
        this.adoptSession(body);
        this.emit("session", { session: this.session, recovered: false, previousSession: null });
        this.resumeOutbox();
        this.connect();
        return;
      } catch (error) {
        if (!(error instanceof ProtocolError) || ![401, 404].includes(error.status)) throw error;
        this.session = null;
      }
    }
    await this.createSession(unit);
    if (knownSession && knownSession !== this.session) {
      this.emit("recovered", { previousSession: knownSession, session: this.session, unit: this.topUnit });
    }
    this.emit("session", { session: this.session, recovered: Boolean(knownSession), previousSession: knownSession });
    this.connect();
  }

  /** Takes over the body of `GET /api/session`. */
  adoptSession(body) {
    this.session = body.session ?? this.session;
    this.seq = Number.isInteger(body.seq) ? body.seq : this.seq;
    this.pages.clear();
    for (const snapshot of body.pages ?? []) this.storeSnapshot(snapshot, "snapshot");
    this.setNavigation({ type: "resume", ...(body.navigation ?? { stack: [], presented: null }) }, "resume");
  }

  /**
   * Creates a session. `unit`, when given, asks the server to start at that page; if the
   * server starts elsewhere, the client opens the page itself, so a deep link survives.
   * @param {string|null} unit
   */
  async createSession(unit) {
    let body;
    try {
      ({ body } = await this.request("POST", "/api/sessions", { body: unit ? { unit } : {} }));
    } catch (error) {
      if (!unit || !(error instanceof ProtocolError) || error.code !== "unknown_unit") throw error;
      // A deep link to a page the app does not have: start at the root and say so.
      ({ body } = await this.request("POST", "/api/sessions", { body: {} }));
      this.emit("navigationerror", { error, unit });
      unit = null;
    }
    this.session = body.session ?? null;
    this.generation += 1;
    this.pages.clear();
    this.navigation = { stack: [], presented: null, forward: [] };
    if (body.page) {
      this.seq = Number.isInteger(body.page.seq) ? body.page.seq : 0;
      this.storeSnapshot(body.page, "snapshot");
    }
    const navigation = body.navigation ?? body.page?.navigation ?? { stack: body.page ? [body.page.unit] : [], presented: null };
    this.setNavigation({ type: "root", ...navigation }, "session");
    if (body.navigation_error) {
      // The server would not start at `unit` (`entry_refused`: it opens only from within the app),
      // and started at its root instead: that is where the tab now is.
      const { code = "entry_refused", message = "That page opens only from within the app.", details = null } = body.navigation_error;
      this.emit("navigationerror", { error: new ProtocolError(code, message, { status: 403, details }), unit });
      return;
    }
    // Not through the outbox: a recovery may run inside one of its entries.
    if (unit && this.topUnit !== unit) await this.postNavigation({ type: "open", unit });
  }

  /**
   * Replaces a lost session (404 `unknown_session`, or an `expired` event) with a new one
   * at the page that was on top, reconnects the stream and emits `recovered`.
   * Concurrent callers share one recovery.
   * @returns {Promise<void>}
   */
  recover() {
    if (this.recovery) return this.recovery;
    const previousSession = this.session;
    const unit = this.topUnit;
    this.recovery = (async () => {
      this.disconnect();
      await this.createSession(unit);
      this.emit("recovered", { previousSession, session: this.session, unit: this.topUnit });
      this.emit("session", { session: this.session, recovered: true, previousSession });
      this.connect();
    })().finally(() => {
      this.recovery = null;
    });
    return this.recovery;
  }

  /** Ends the session on the server and closes the stream. */
  async end() {
    this.close();
    await this.request("DELETE", "/api/session");
    this.session = null;
  }

  /** Closes the event stream for good (no reconnects); actions waiting for the server give up. */
  close() {
    this.closed = true;
    this.disconnect();
    this.retryNow();
  }

  // MARK: pages

  /** Stores a snapshot as the page's copy (snapshots always replace). */
  storeSnapshot(snapshot, reason) {
    if (!snapshot || typeof snapshot.unit !== "string") return;
    const previous = this.pages.get(snapshot.unit);
    const page = {
      unit: snapshot.unit,
      rev: snapshot.rev ?? 0,
      view: snapshot.view ?? {},
      actions: snapshot.actions ?? previous?.actions ?? [],
    };
    this.pages.set(page.unit, page);
    this.emit("page", { unit: page.unit, page, reason, patch: null });
  }

  /**
   * Applies a patch that takes a page from `fromRev` to `rev`, following the rev rules:
   * not newer → ignored; from another rev than the one held → resync; a patch that does
   * not apply → resync.
   * @param {string} unit
   * @param {number} fromRev the rev the patch starts from
   * @param {number} rev the rev it produces
   * @param {object[]} patch RFC 6902 operations
   * @returns {"applied"|"ignored"|"resync"}
   */
  receivePatch(unit, fromRev, rev, patch) {
    const page = this.pages.get(unit);
    if (!page) return "ignored"; // not a page this tab shows; a navigation or GET brings it
    if (!(rev > page.rev)) return "ignored";
    if (fromRev !== page.rev) {
      this.resync(unit);
      return "resync";
    }
    let view;
    try {
      view = applyPatch(page.view, patch);
    } catch (error) {
      this.emit("error", { error, context: `patch of ${unit} did not apply; resyncing` });
      this.resync(unit);
      return "resync";
    }
    const updated = { ...page, rev, view };
    this.pages.set(unit, updated);
    this.emit("page", { unit, page: updated, reason: "patch", patch });
    return "applied";
  }

  /**
   * Fetches a fresh snapshot of a page (`GET /api/pages/{unit}`) and replaces the copy.
   * Concurrent resyncs of one unit share one request.
   * @param {string} unit
   * @returns {Promise<Page|undefined>}
   */
  resync(unit) {
    if (this.resyncs.has(unit)) return this.resyncs.get(unit);
    const promise = (async () => {
      try {
        const { body } = await this.call("GET", `/api/pages/${encodeURIComponent(unit)}`);
        this.storeSnapshot(body, "resync");
        return this.pages.get(unit);
      } catch (error) {
        this.emit("error", { error, context: `resync of ${unit}` });
        return undefined;
      } finally {
        this.resyncs.delete(unit);
      }
    })();
    this.resyncs.set(unit, promise);
    return promise;
  }

  /**
   * Fetches a page (binding it on the server if needed) without changing the stack.
   * @param {string} unit
   * @returns {Promise<Page|undefined>}
   */
  async loadPage(unit) {
    return this.resync(unit);
  }

  // MARK: navigation

  /**
   * Updates the stack; emits `navigation` only when it actually changed, so a navigation
   * seen twice (response and SSE) is reported once.
   */
  setNavigation(navigation, origin) {
    const stack = Array.isArray(navigation?.stack) ? [...navigation.stack] : this.navigation.stack;
    const presented = navigation?.presented ?? null;
    const forward = Array.isArray(navigation?.forward) ? [...navigation.forward] : [];
    const previousStack = this.navigation.stack;
    const same = stack.length === previousStack.length && stack.every((u, i) => u === previousStack[i]) && presented === this.navigation.presented;
    this.navigation = { stack, presented, forward };
    if (!same) this.emit("navigation", { type: navigation?.type ?? null, stack, presented, previousStack, origin });
  }

  /** Handles a `navigation` object (response member or `navigate` event). */
  receiveNavigation(navigation, origin) {
    if (!navigation) return;
    if (navigation.page) this.storeSnapshot({ unit: navigation.unit, ...navigation.page }, "navigation");
    // `root` and `back` release pages on the server, except those kept for going forward:
    // forget copies that left both.
    if ((navigation.type === "root" || navigation.type === "back") && Array.isArray(navigation.stack)) {
      const forward = Array.isArray(navigation.forward) ? navigation.forward : [];
      for (const unit of [...this.pages.keys()]) {
        if (!navigation.stack.includes(unit) && !forward.includes(unit)) this.pages.delete(unit);
      }
    }
    this.setNavigation(navigation, origin);
  }

  /**
   * Handles an action or navigation response.
   * @param {any} body the response body
   * @param {number|null} requestRev the rev the request named, or null
   */
  receiveResponse(body, requestRev) {
    if (!body) return;
    const { unit, rev } = body;
    const navigated = body.navigation?.page ? body.navigation.page.unit ?? body.navigation.unit : null;
    // When the response's unit is the page the navigation brings, its snapshot supersedes the patch.
    if (typeof unit === "string" && Number.isInteger(rev) && navigated !== unit) {
      if (body.snapshot) {
        const page = this.pages.get(unit);
        if (!page || rev > page.rev || body.snapshot.rev > page.rev) this.storeSnapshot({ unit, ...body.snapshot }, "snapshot");
      } else if (Array.isArray(body.patch)) {
        // Without a request rev, the patch starts at the server's rev before the action,
        // which is rev - 1 since one action makes at most one rev.
        const fromRev = requestRev ?? rev - 1;
        this.receivePatch(unit, fromRev, rev, body.patch);
      }
    }
    this.receiveNavigation(body.navigation, "response");
    if (body.navigation_error) {
      // The action was applied, but the navigation it asked for failed (e.g. an unknown unit).
      const { code = "navigation_failed", message = "The page could not be opened." } = body.navigation_error;
      this.emit("navigationerror", { error: new ProtocolError(code, message), unit });
    }
  }

  /**
   * Asks the server to navigate: `back` pops the top page, `open` pops back to a unit
   * on the stack or pushes it (for browser back buttons and deep links). It goes out after
   * the actions made before it and, like them, waits out an unavailable server: `open` is
   * sent again as it is (opening the unit on top changes nothing), `back` after a network
   * error only once `GET /api/session` shows the first one did not pop the stack.
   * @param {{type: "back"} | {type: "forward"} | {type: "open", unit: string}} request
   * @param {{onWaiting?: (waiting: boolean) => void}} [options] told when it starts and stops waiting for the server
   * @returns {Promise<any>} the response body
   */
  navigate(request, { onWaiting } = {}) {
    return this.enqueue({ kind: "navigation", request, onWaiting }, (entry) => this.deliverNavigation(entry));
  }

  /** `navigate({type: "back"})`. */
  back(options) {
    return this.navigate({ type: "back" }, options);
  }

  /** `navigate({type: "forward"})`: the server brings back the page the last back left, as it was. */
  forward(options) {
    return this.navigate({ type: "forward" }, options);
  }

  /**
   * `navigate({type: "open", unit})`.
   * @param {string} unit
   */
  open(unit, options) {
    return this.navigate({ type: "open", unit }, options);
  }

  /** Sends one navigation request now and takes in its response. */
  async postNavigation(request) {
    const { body } = await this.call("POST", "/api/navigation", { body: request });
    this.receiveResponse(body, null);
    return body;
  }

  async deliverNavigation(entry) {
    const stackBefore = [...this.navigation.stack];
    let uncertain = false;
    return this.withRetries(entry, async () => {
      if (uncertain && (entry.request.type === "back" || entry.request.type === "forward")) {
        // The last attempt may have reached the server before the connection broke, and
        // a second back (or forward) would move another page: look first.
        const { body } = await this.call("GET", "/api/session");
        const stack = body?.navigation?.stack ?? [];
        if (stack.length !== stackBefore.length || stack.some((unit, index) => unit !== stackBefore[index])) {
          this.adoptSession(body);
          return { seq: body.seq, patch: [], unit: this.topUnit, navigation: body.navigation };
        }
      }
      try {
        return await this.postNavigation(entry.request);
      } catch (error) {
        uncertain = error instanceof ProtocolError && error.code === "network_error";
        throw error;
      }
    });
  }

  // MARK: actions

  /**
   * Sends an action to a page. Actions (and navigations) go out one after another, in the
   * order they were made, each naming the rev held when it leaves. Each call is one logical
   * action with its own random Idempotency-Key; retries reuse the key and the exact body, so
   * the server delivers the action at most once. While the server is unreachable or answers
   * 502/503/504 the action waits and is retried (backoff, `Retry-After`, and at once when the
   * stream reopens) until it gets an answer; a 429 is retried `maxRetries` times.
   * @param {string} unit
   * @param {string} action the action name, e.g. `increment` or `quote.shuffle`
   * @param {unknown} [value] the action's value (`null` for `none`)
   * @param {{onWaiting?: (waiting: boolean) => void}} [options] told when it starts and stops waiting for the server
   * @returns {Promise<any>} the response body
   */
  sendAction(unit, action, value = null, { onWaiting } = {}) {
    return this.enqueue({ kind: "action", unit, action, value, onWaiting, key: this.randomKey(), body: null }, (entry) => this.deliverAction(entry));
  }

  async deliverAction(entry) {
    const { unit, action, value, key } = entry;
    const page = this.pages.get(unit);
    let requestBody = entry.body;
    if (!requestBody) {
      // Fixed when it first leaves: every retry, even after a reload, sends these exact bytes.
      requestBody = { action, value: value === undefined ? null : value };
      if (page) requestBody.rev = page.rev;
      entry.body = requestBody;
      this.saveOutbox();
    }
    const path = `/api/pages/${encodeURIComponent(unit)}/actions`;
    return this.withRetries(entry, async () => {
      const { body } = await this.call("POST", path, { body: requestBody, headers: { "Idempotency-Key": key } });
      this.receiveResponse(body, requestBody.rev ?? null);
      return body;
    });
  }

  // MARK: outbox

  /**
   * Puts an entry at the end of the outbox; it is delivered when those before it are answered.
   * @returns {Promise<any>} what `deliver` returns
   */
  enqueue(entry, deliver) {
    entry.generation = this.generation;
    entry.madeOnTop = entry.kind === "action" && entry.unit === this.topUnit;
    entry.waiting = false;
    entry.error = null;
    this.outbox.push(entry);
    this.saveOutbox();
    this.emitOutbox();
    const run = this.outboxTail
      .then(() => {
        if (entry.generation !== this.generation) throw lostSessionError();
        if (entry.kind === "action" && entry.madeOnTop && this.topUnit !== entry.unit) {
          // Made on the page on top, which an earlier entry navigated away from (a second click
          // on "Sign in"): what the user acted on is no longer shown, so it is not sent.
          this.emit("dropped", { unit: entry.unit, action: entry.action });
          return null;
        }
        return deliver(entry);
      })
      .finally(() => {
        this.outbox.splice(this.outbox.indexOf(entry), 1);
        this.saveOutbox();
        if (entry.waiting) this.setWaiting(entry, false, null);
        else this.emitOutbox();
      });
    this.outboxTail = run.catch(() => {});
    return run;
  }

  /**
   * Writes the actions not yet answered to `outboxStorage`: those before the first navigation
   * (one queued behind a navigation would be dropped or land elsewhere, and a navigation is not
   * safe to repeat blindly after a reload), with their keys and, once sent, their bodies.
   */
  saveOutbox() {
    if (!this.outboxStorage) return;
    const kept = [];
    for (const entry of this.outbox) {
      if (entry.generation !== this.generation) continue;
      if (entry.kind !== "action") break;
      kept.push({ unit: entry.unit, action: entry.action, value: entry.value ?? null, key: entry.key, body: entry.body });
    }
    try {
      this.outboxStorage.save(kept.length ? { session: this.session, actions: kept } : null);
    } catch (error) {
      this.emit("error", { error, context: "saving the outbox" });
    }
  }

  /**
   * Sends again, with their keys and bodies, the actions a reload interrupted in this session
   * (`outboxStorage`); those of another session are forgotten. The server applies each at most
   * once: one it applied before the reload is answered from its idempotency cache.
   */
  resumeOutbox() {
    if (!this.outboxStorage) return;
    let stored = null;
    try {
      stored = this.outboxStorage.load();
    } catch {
      stored = null;
    }
    if (!stored || stored.session !== this.session || !Array.isArray(stored.actions)) {
      if (stored) this.outboxStorage.save(null);
      return;
    }
    for (const saved of stored.actions) {
      if (typeof saved?.unit !== "string" || typeof saved.action !== "string" || typeof saved.key !== "string") continue;
      const entry = { kind: "action", unit: saved.unit, action: saved.action, value: saved.value ?? null, key: saved.key, body: saved.body ?? null, resumed: true };
      this.enqueue(entry, (queued) => this.deliverAction(queued)).catch((error) => this.emit("error", { error, context: "an action resumed after a reload" }));
    }
    this.emit("resumed", { actions: stored.actions.length });
  }

  /**
   * Runs `attempt` until it is answered: an unavailable server is waited out (the entry is
   * marked waiting meanwhile), a 429 retried `maxRetries` times, anything else thrown.
   */
  async withRetries(entry, attempt) {
    let throttled = 0;
    for (let retry = 0; ; retry += 1) {
      try {
        const result = await attempt();
        if (entry.waiting) {
          this.setWaiting(entry, false, null);
          // The server answers again: reopen a broken stream now rather than at its next try.
          if (this.streamState !== "open" && !this.closed) this.connect();
        }
        return result;
      } catch (error) {
        if (this.closed) throw error;
        if (isUnavailable(error)) {
          this.setWaiting(entry, true, error);
        } else if (error instanceof ProtocolError && error.status === THROTTLED && throttled < this.maxRetries) {
          throttled += 1;
        } else {
          throw error;
        }
        await this.waitBeforeRetry(retryDelay(retry, error, this.backoff));
        if (this.closed) throw error;
        if (entry.generation !== this.generation) throw lostSessionError();
      }
    }
  }

  setWaiting(entry, waiting, error) {
    const changed = entry.waiting !== waiting || entry.error?.code !== error?.code;
    entry.waiting = waiting;
    entry.error = error;
    if (!changed) return;
    if (entry.onWaiting) {
      try {
        entry.onWaiting(waiting);
      } catch (problem) {
        this.emit("error", { error: problem, context: "onWaiting" });
      }
    }
    this.emitOutbox();
  }

  emitOutbox() {
    const waiting = this.outbox.filter((entry) => entry.waiting);
    this.emit("outbox", { pending: this.outbox.length, waiting: waiting.length, error: waiting[0]?.error ?? null });
  }

  /** Waits `ms`, or less when {@link MvvmrClient#retryNow} is called meanwhile. */
  waitBeforeRetry(ms) {
    return new Promise((resolve) => {
      const wake = () => {
        this.wakers.delete(wake);
        resolve();
      };
      this.wakers.add(wake);
      this.sleep(ms).then(wake, wake);
    });
  }

  /** Ends the current retry wait, so a waiting action is sent now (the server looks back). */
  retryNow() {
    for (const wake of [...this.wakers]) wake();
  }

  // MARK: server push

  /**
   * Opens the event stream. EventSource cannot set headers: the session goes in `?session=`,
   * and the first connect passes `lastEventId=SEQ`; the browser sends `Last-Event-ID` itself
   * on reconnects.
   */
  connect() {
    if (!this.createEventSource || this.closed) return;
    this.disconnect();
    // EventSource cannot set headers: the tab's session goes in the query (the cookie is every tab's).
    const session = this.session ? `session=${encodeURIComponent(this.session)}&` : "";
    const source = this.createEventSource(`${this.baseURL}/api/events?${session}lastEventId=${encodeURIComponent(this.seq)}`);
    this.events = source;
    const guard = (handler) => (event) => {
      if (this.events !== source) return; // a stale stream
      this.noteEventId(event.lastEventId);
      let data = null;
      try {
        data = event.data ? JSON.parse(event.data) : null;
      } catch (error) {
        this.emit("error", { error, context: `malformed ${event.type} event` });
        return;
      }
      handler(data);
    };
    source.addEventListener("patch", guard((data) => this.onPatchEvent(data)));
    source.addEventListener("navigate", guard((data) => this.receiveNavigation(data, "event")));
    source.addEventListener("snapshot", guard((data) => this.onSnapshotEvent(data)));
    source.addEventListener("expired", guard(() => this.onExpired()));
    source.addEventListener("open", () => {
      if (this.events !== source) return;
      this.setStreamState("open");
      this.retryNow(); // a server answers again: a waiting action need not sit out its backoff
    });
    source.addEventListener("error", () => this.onStreamError(source));
  }

  /** Closes the current stream, if any. */
  disconnect() {
    if (this.events) {
      const source = this.events;
      this.events = null;
      source.close();
    }
    clearTimeout(this.reconnectTimer);
  }

  setStreamState(state) {
    this.streamState = state;
    this.emit("connection", { state });
  }

  noteEventId(id) {
    const seq = Number(id);
    if (id !== "" && Number.isInteger(seq) && seq > this.seq) this.seq = seq;
  }

  onPatchEvent(data) {
    if (!data || typeof data.unit !== "string" || !Number.isInteger(data.rev)) return;
    this.receivePatch(data.unit, data.rev - 1, data.rev, data.patch ?? []);
  }

  onSnapshotEvent(data) {
    if (!data || typeof data.unit !== "string") return;
    this.storeSnapshot(data, "snapshot");
    if (data.navigation) this.setNavigation(data.navigation, "event");
  }

  onExpired() {
    this.recover().catch((error) => this.emit("error", { error, context: "session recovery" }));
  }

  /**
   * The browser retries a dropped stream by itself (readyState CONNECTING). When it gave
   * up (CLOSED, e.g. the server answered 404 because the session is gone), check the
   * session and either recover or reopen the stream from the last seq.
   */
  onStreamError(source) {
    if (this.events !== source) return;
    if (source.readyState !== 2) {
      this.setStreamState("reconnecting");
      return;
    }
    this.setStreamState("closed");
    this.events = null;
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(async () => {
      if (this.closed || this.events) return;
      try {
        await this.request("GET", "/api/session");
        this.connect();
      } catch (error) {
        if (error instanceof ProtocolError && error.code === "unknown_session") this.onExpired();
        else this.scheduleReconnect();
      }
    }, this.reconnectDelay);
  }

  scheduleReconnect() {
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(() => {
      if (!this.closed && !this.events) this.connect();
    }, this.reconnectDelay);
  }
}
