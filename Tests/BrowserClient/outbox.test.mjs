// The outbox: actions and navigations made while the server is down or unavailable wait,
// in order, with their Idempotency-Keys, and are sent again until they are answered.
import { test, describe, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { MvvmrClient, ProtocolError, isUnavailable, parseRetryAfter, retryDelay } from "../../Public/js/client.js";
import { FakeServer, FakeEventSource, makeClient, settle, errorBody } from "./fakes.mjs";

const actions = [{ name: "increment", value: "int" }];

function snapshot(unit, rev, view, stack = ["home", unit]) {
  return { session: "s1", unit, rev, seq: 3, view, actions, navigation: { stack, presented: null } };
}

/** A server whose cookie names session s1: counters on top of home at rev 5, row 1 at 0. */
function resumedServer() {
  const server = new FakeServer();
  server.route("GET", "/api/session", () => ({
    body: {
      session: "s1",
      seq: 9,
      navigation: { stack: ["home", "counters"], presented: null },
      pages: [snapshot("home", 0, { title: "MVVMR demo" }, ["home"]), snapshot("counters", 5, { rows: [{ id: 1, count: 0 }] })],
    },
  }));
  return server;
}

/** A sleep the test releases by hand; records every wait asked for. */
function manualSleep() {
  const waits = [];
  const sleeps = [];
  return {
    sleeps,
    sleep: (ms) => {
      sleeps.push(ms);
      return new Promise((resolve) => waits.push(resolve));
    },
    /** Ends every wait so far and lets the retries that follow run. */
    async release() {
      for (const resolve of waits.splice(0)) resolve();
      await settle();
      await settle();
    },
  };
}


/** An action route that is down (network error) while `down()` says so, then counts up row 1. */
function flakyCounter(server, down) {
  let rev = 5;
  const answered = new Map(); // Idempotency-Key → response, as the server's cache
  server.route("POST", "/api/pages/counters/actions", (call) => {
    if (down()) throw new TypeError("Failed to fetch");
    const key = call.headers["Idempotency-Key"];
    if (!answered.has(key)) {
      rev += 1;
      answered.set(key, { unit: "counters", rev, seq: 10 + rev, patch: [{ op: "replace", path: "/rows/0/count", value: rev - 5 }], navigation: null });
    }
    return { body: answered.get(key) };
  });
  return answered;
}

beforeEach(() => {
  FakeEventSource.instances = [];
});

describe("retry rules", () => {
  test("network errors and 502/503/504 are unavailability; 4xx and 500 are answers", () => {
    assert.ok(isUnavailable(new ProtocolError("network_error", "down")));
    for (const status of [502, 503, 504]) assert.ok(isUnavailable(new ProtocolError("store_unavailable", "x", { status })));
    for (const status of [400, 404, 409, 422, 429, 500]) assert.ok(!isUnavailable(new ProtocolError("x", "x", { status })));
    assert.ok(!isUnavailable(new Error("not a protocol error")));
  });

  test("Retry-After is read as seconds or an HTTP date", () => {
    assert.equal(parseRetryAfter("3"), 3);
    assert.equal(parseRetryAfter(" 0 "), 0);
    assert.equal(parseRetryAfter(null), null);
    assert.equal(parseRetryAfter("soon"), null);
    const now = Date.parse("Wed, 21 Oct 2026 07:28:00 GMT");
    assert.equal(parseRetryAfter("Wed, 21 Oct 2026 07:28:05 GMT", now), 5);
    assert.equal(parseRetryAfter("Wed, 21 Oct 2026 07:27:00 GMT", now), 0);
  });

  test("the backoff doubles up to its cap; Retry-After wins, within bounds", () => {
    assert.deepStrictEqual([0, 1, 2, 3, 4, 5, 40].map((n) => retryDelay(n, null)), [250, 500, 1000, 2000, 4000, 4000, 4000]);
    assert.equal(retryDelay(0, { retryAfter: 2 }), 2000);
    assert.equal(retryDelay(7, { retryAfter: 0 }), 100);
    assert.equal(retryDelay(0, { retryAfter: 3600 }), 60_000);
    assert.equal(retryDelay(3, null, { base: 10, max: 50 }), 50);
  });
});

describe("an action while the server is down", () => {
  test("waits, marked waiting, and is sent again with the same key and body until it is answered", async () => {
    const server = resumedServer();
    let down = true;
    const answered = flakyCounter(server, () => down);
    const timing = manualSleep();
    const client = makeClient(server, { sleep: timing.sleep });
    await client.start({ knownSession: "s1" });
    const outbox = [];
    client.on("outbox", (state) => outbox.push({ pending: state.pending, waiting: state.waiting, code: state.error?.code ?? null }));
    const waiting = [];
    const sent = client.sendAction("counters", "increment", 1, { onWaiting: (flag) => waiting.push(flag) });
    let settled = false;
    sent.then(() => (settled = true), () => (settled = true));
    await settle();
    for (let i = 0; i < 12; i += 1) await timing.release(); // a long outage: many more tries than maxRetries
    assert.equal(settled, false, "not dropped");
    assert.deepStrictEqual(waiting, [true]);
    assert.equal(client.page("counters").view.rows[0].count, 0);
    down = false;
    await timing.release();
    const body = await sent;
    assert.equal(body.rev, 6);
    const calls = server.callsTo("POST", "/api/pages/counters/actions");
    assert.equal(calls.length, 14);
    assert.equal(new Set(calls.map((c) => c.headers["Idempotency-Key"])).size, 1);
    assert.ok(calls.every((c) => JSON.stringify(c.body) === JSON.stringify({ action: "increment", value: 1, rev: 5 })));
    assert.equal(answered.size, 1, "applied once");
    assert.equal(client.page("counters").view.rows[0].count, 1);
    assert.deepStrictEqual(waiting, [true, false]);
    assert.deepStrictEqual(timing.sleeps.slice(0, 6), [250, 500, 1000, 2000, 4000, 4000]);
    assert.deepStrictEqual(outbox[0], { pending: 1, waiting: 0, code: null });
    assert.deepStrictEqual(outbox[1], { pending: 1, waiting: 1, code: "network_error" });
    assert.deepStrictEqual(outbox.at(-1), { pending: 0, waiting: 0, code: null });
  });

  test("store_unavailable, draining and a proxy's 502 are waited out, honouring Retry-After", async () => {
    const server = resumedServer();
    const answers = [
      { status: 503, body: errorBody("store_unavailable"), headers: { "Retry-After": "2" } },
      { status: 503, body: errorBody("draining"), headers: { "Retry-After": "1" } },
      { status: 502, body: null },
      { status: 504, body: null },
      { status: 503, body: errorBody("overloaded"), headers: { "Retry-After": "3" } },
    ];
    server.route("POST", "/api/pages/counters/actions", () =>
      answers.shift() ?? { body: { unit: "counters", rev: 6, seq: 10, patch: [{ op: "replace", path: "/rows/0/count", value: 1 }], navigation: null } },
    );
    const sleeps = [];
    const codes = [];
    const client = makeClient(server, { sleep: async (ms) => sleeps.push(ms) });
    client.on("outbox", ({ error }) => codes.push(error?.code ?? null));
    await client.start({ knownSession: "s1" });
    await client.sendAction("counters", "increment", 1);
    assert.deepStrictEqual(sleeps, [2000, 1000, 1000, 2000, 3000]);
    assert.equal(client.page("counters").view.rows[0].count, 1);
    assert.deepStrictEqual([...new Set(codes)], [null, "store_unavailable", "draining", "http_502", "http_504", "overloaded"]);
  });

  test("an answer that is not unavailability ends the wait with that answer", async () => {
    const server = resumedServer();
    let attempts = 0;
    server.route("POST", "/api/pages/counters/actions", () => {
      attempts += 1;
      if (attempts < 3) throw new TypeError("Failed to fetch");
      return { status: 409, body: errorBody("page_not_bound") };
    });
    const waiting = [];
    const client = makeClient(server);
    await client.start({ knownSession: "s1" });
    await assert.rejects(client.sendAction("counters", "increment", 1, { onWaiting: (flag) => waiting.push(flag) }), (error) => error.code === "page_not_bound");
    assert.equal(attempts, 3);
    assert.deepStrictEqual(waiting, [true, false]);
    assert.equal(client.outbox.length, 0);
  });

  test("actions made meanwhile keep their order, across pages, each with its own key, none sent early", async () => {
    const server = resumedServer();
    let down = true;
    const log = [];
    server.route("POST", /^\/api\/pages\/[^/]+\/actions$/, (call) => {
      log.push(`${call.url.split("/")[3]}:${call.body.value}:${call.headers["Idempotency-Key"]}${down ? " (down)" : ""}`);
      if (down) throw new TypeError("Failed to fetch");
      return { body: { unit: call.url.split("/")[3], rev: 5, seq: 9, patch: [], navigation: null } };
    });
    const timing = manualSleep();
    const client = makeClient(server, { sleep: timing.sleep });
    await client.start({ knownSession: "s1" });
    const outbox = [];
    client.on("outbox", ({ pending, waiting }) => outbox.push([pending, waiting]));
    const done = [];
    const first = client.sendAction("counters", "increment", 1).then(() => done.push(1));
    await settle();
    const second = client.sendAction("counters", "increment", 2).then(() => done.push(2));
    const third = client.sendAction("home", "open", 3).then(() => done.push(3));
    await timing.release();
    await timing.release();
    assert.deepStrictEqual(log, ["counters:1:key-1 (down)", "counters:1:key-1 (down)", "counters:1:key-1 (down)"], "only the first goes out while it waits");
    assert.deepStrictEqual(outbox.at(-1), [3, 1]);
    down = false;
    await timing.release();
    await Promise.all([first, second, third]);
    assert.deepStrictEqual(log.slice(3), ["counters:1:key-1", "counters:2:key-2", "home:3:key-3"]);
    assert.deepStrictEqual(done, [1, 2, 3]);
    assert.deepStrictEqual(outbox.at(-1), [0, 0]);
  });

  test("the stream reopening ends the backoff: the waiting action is sent at once", async () => {
    const server = resumedServer();
    let down = true;
    flakyCounter(server, () => down);
    const never = [];
    const client = makeClient(server, { sleep: (ms) => new Promise(() => never.push(ms)) }); // only a wake ends a wait
    await client.start({ knownSession: "s1" });
    const sent = client.sendAction("counters", "increment", 1);
    await settle();
    assert.equal(server.callsTo("POST", "/api/pages/counters/actions").length, 1);
    down = false;
    FakeEventSource.instances[0].emit("open", null); // the browser reconnected the stream to the restarted server
    assert.equal((await sent).rev, 6);
    assert.equal(server.callsTo("POST", "/api/pages/counters/actions").length, 2);
  });

  test("retryNow (the browser's online event) ends the wait too", async () => {
    const server = resumedServer();
    let down = true;
    flakyCounter(server, () => down);
    const client = makeClient(server, { sleep: () => new Promise(() => {}) });
    await client.start({ knownSession: "s1" });
    const sent = client.sendAction("counters", "increment", 1);
    await settle();
    down = false;
    client.retryNow();
    assert.equal((await sent).rev, 6);
  });

  test("a response lost in the restart is answered from the server's cache: the action counts once", async () => {
    const server = resumedServer();
    let attempts = 0;
    const answered = flakyCounter(server, () => false);
    const inner = server.routes[0].handler;
    server.route("POST", "/api/pages/counters/actions", (call) => {
      attempts += 1;
      const response = inner(call); // the server applied and stored it…
      if (attempts === 1) throw new TypeError("Failed to fetch"); // …and died before answering
      return response;
    });
    const client = makeClient(server);
    await client.start({ knownSession: "s1" });
    const body = await client.sendAction("counters", "increment", 1);
    assert.equal(attempts, 2);
    assert.equal(answered.size, 1);
    assert.equal(body.rev, 6);
    assert.equal(client.page("counters").view.rows[0].count, 1);
  });

  test("close() gives up the wait", async () => {
    const server = resumedServer();
    flakyCounter(server, () => true);
    const client = makeClient(server, { sleep: () => new Promise(() => {}) });
    await client.start({ knownSession: "s1" });
    const sent = client.sendAction("counters", "increment", 1);
    await settle();
    client.close();
    await assert.rejects(sent, (error) => error.code === "network_error");
  });
});

describe("the same session coming back", () => {
  test("a restart (network errors, then the same session) tells nothing of a new session", async () => {
    const server = resumedServer();
    let down = false;
    flakyCounter(server, () => down);
    const sessionRoute = server.routes.find((r) => r.path === "/api/session").handler;
    server.route("GET", "/api/session", (call) => {
      if (down) throw new TypeError("Failed to fetch");
      return sessionRoute(call);
    });
    const client = makeClient(server, { sleep: () => new Promise((resolve) => setTimeout(resolve, 1)) });
    const recovered = [];
    const sessions = [];
    client.on("recovered", (detail) => recovered.push(detail));
    client.on("session", (detail) => sessions.push(detail));
    await client.start({ knownSession: "s1" });
    down = true;
    const stream = FakeEventSource.instances[0];
    stream.fail(0); // the browser reconnects by itself…
    stream.fail(2); // …until it gives up; the client checks the session, which cannot be reached
    const sent = client.sendAction("counters", "increment", 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    // Meanwhile the stream was opened again from the last seq (the browser retries it from there).
    const reopened = FakeEventSource.instances.at(-1);
    assert.notEqual(reopened, stream);
    assert.equal(reopened.url, "/api/events?session=s1&lastEventId=9");
    down = false;
    reopened.emit("open", null);
    assert.equal((await sent).rev, 6);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(client.session, "s1");
    assert.deepStrictEqual(recovered, []);
    assert.equal(sessions.length, 1);
    assert.equal(server.callsTo("POST", "/api/sessions").length, 0);
    assert.equal(client.page("counters").view.rows[0].count, 1);
    client.close();
  });

  test("an answer after a wait reopens a broken stream at once, from the last event seen", async () => {
    const server = resumedServer();
    let down = true;
    flakyCounter(server, () => down);
    const timing = manualSleep();
    const client = makeClient(server, { sleep: timing.sleep, reconnectDelay: 60_000 });
    await client.start({ knownSession: "s1" });
    const stream = FakeEventSource.instances[0];
    stream.emit("patch", 10, { unit: "counters", rev: 5, patch: [] }); // not newer, but its id is noted
    stream.fail(0); // the browser's own reconnect, still trying
    const sent = client.sendAction("counters", "increment", 1);
    await settle();
    down = false;
    await timing.release();
    await sent;
    assert.equal(FakeEventSource.instances.length, 2);
    assert.equal(stream.closed, true);
    assert.equal(FakeEventSource.instances[1].url, "/api/events?session=s1&lastEventId=10", "not the response's seq: events in between would be missed");
    client.close();
  });

  test("an answer after a wait leaves an open stream alone", async () => {
    const server = resumedServer();
    let down = true;
    flakyCounter(server, () => down);
    const timing = manualSleep();
    const client = makeClient(server, { sleep: timing.sleep });
    await client.start({ knownSession: "s1" });
    FakeEventSource.instances[0].emit("open", null);
    const sent = client.sendAction("counters", "increment", 1);
    await settle();
    down = false;
    await timing.release();
    await sent;
    assert.equal(FakeEventSource.instances.length, 1);
    client.close();
  });

  test("a waiting action whose session turns out lost is refused, and so are those behind it", async () => {
    const server = resumedServer();
    let down = true;
    server.route("POST", "/api/pages/counters/actions", () => {
      if (down) throw new TypeError("Failed to fetch");
      return { status: 404, body: errorBody("unknown_session") }; // restarted without the session's store
    });
    server.route("POST", "/api/sessions", () => ({
      status: 201,
      body: { session: "s2", navigation: { stack: ["counters"], presented: null }, page: { ...snapshot("counters", 0, { rows: [{ id: 1, count: 0 }] }, ["counters"]), seq: 1 } },
    }));
    const timing = manualSleep();
    const client = makeClient(server, { sleep: timing.sleep });
    await client.start({ knownSession: "s1" });
    const recovered = [];
    client.on("recovered", (detail) => recovered.push(detail));
    const first = client.sendAction("counters", "increment", 1);
    const second = client.sendAction("counters", "increment", 1);
    const failures = [first.catch((e) => e.code), second.catch((e) => e.code)];
    await settle();
    down = false;
    await timing.release();
    assert.deepStrictEqual(await Promise.all(failures), ["unknown_session", "unknown_session"]);
    assert.equal(server.callsTo("POST", "/api/pages/counters/actions").length, 2, "the second was never sent to the new session");
    assert.equal(recovered.length, 1);
    assert.equal(client.session, "s2");
  });
});

describe("navigation in the outbox", () => {
  function navigationServer() {
    const server = resumedServer();
    const back = { unit: "home", rev: 0, seq: 10, patch: [], navigation: { type: "back", unit: "home", stack: ["home"], presented: null, page: snapshot("home", 0, { title: "MVVMR demo" }, ["home"]) } };
    return { server, back };
  }

  test("a back made after a waiting action goes out after it", async () => {
    const { server, back } = navigationServer();
    let down = true;
    flakyCounter(server, () => down);
    const order = [];
    server.route("POST", "/api/navigation", () => {
      order.push("back");
      return { body: back };
    });
    const timing = manualSleep();
    const client = makeClient(server, { sleep: timing.sleep });
    await client.start({ knownSession: "s1" });
    const action = client.sendAction("counters", "increment", 1).then(() => order.push("action"));
    const navigation = client.back();
    await timing.release();
    assert.deepStrictEqual(order, []);
    down = false;
    await timing.release();
    await Promise.all([action, navigation]);
    assert.deepStrictEqual(order, ["action", "back"]);
    assert.deepStrictEqual(client.navigation.stack, ["home"]);
  });

  test("a back after a 503 is sent again as it is (it was not applied)", async () => {
    const { server, back } = navigationServer();
    let attempts = 0;
    server.route("POST", "/api/navigation", () => (++attempts === 1 ? { status: 503, body: errorBody("store_unavailable"), headers: { "Retry-After": "1" } } : { body: back }));
    const waiting = [];
    const client = makeClient(server);
    await client.start({ knownSession: "s1" });
    await client.back({ onWaiting: (flag) => waiting.push(flag) });
    assert.equal(attempts, 2);
    assert.equal(server.callsTo("GET", "/api/session").length, 1, "only start's");
    assert.deepStrictEqual(waiting, [true, false]);
    assert.deepStrictEqual(client.navigation.stack, ["home"]);
  });

  test("a back whose connection broke is not sent again when the server shows it popped", async () => {
    const { server, back } = navigationServer();
    let applied = false;
    server.route("POST", "/api/navigation", () => {
      applied = true;
      throw new TypeError("Failed to fetch"); // applied, then the connection broke
    });
    const client = makeClient(server);
    await client.start({ knownSession: "s1" });
    server.route("GET", "/api/session", () => ({ body: { session: "s1", seq: 10, navigation: back.navigation, pages: [back.navigation.page] } }));
    await client.back();
    assert.ok(applied);
    assert.equal(server.callsTo("POST", "/api/navigation").length, 1);
    assert.deepStrictEqual(client.navigation.stack, ["home"]);
    assert.equal(client.page("counters"), undefined);
  });

  test("a back whose connection broke is sent again when the server shows the stack unchanged", async () => {
    const { server, back } = navigationServer();
    let attempts = 0;
    server.route("POST", "/api/navigation", () => {
      attempts += 1;
      if (attempts === 1) throw new TypeError("Failed to fetch"); // never reached the server
      return { body: back };
    });
    const client = makeClient(server);
    await client.start({ knownSession: "s1" });
    await client.back();
    assert.equal(attempts, 2);
    assert.equal(server.callsTo("GET", "/api/session").length, 2, "start's, and the look before sending again");
    assert.deepStrictEqual(client.navigation.stack, ["home"]);
  });

  test("an open is sent again as it is after a network error", async () => {
    const { server } = navigationServer();
    let attempts = 0;
    server.route("POST", "/api/navigation", (call) => {
      attempts += 1;
      if (attempts === 1) throw new TypeError("Failed to fetch");
      return { body: { unit: "greeting", rev: 0, seq: 11, patch: [], navigation: { type: "push", unit: "greeting", stack: ["home", "counters", "greeting"], presented: null, page: snapshot("greeting", 0, { greeting: "hi" }) } } };
    });
    const client = makeClient(server);
    await client.start({ knownSession: "s1" });
    await client.open("greeting");
    assert.equal(attempts, 2);
    assert.deepStrictEqual(server.callsTo("POST", "/api/navigation").map((c) => c.body), [{ type: "open", unit: "greeting" }, { type: "open", unit: "greeting" }]);
    assert.equal(client.topUnit, "greeting");
  });
});
