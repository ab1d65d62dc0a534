import { test, describe, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { MvvmrClient, ProtocolError } from "../../Public/js/client.js";
import { FakeServer, FakeEventSource, makeClient, settle, errorBody } from "./fakes.mjs";

const counterActions = [{ name: "increment", value: "int" }, { name: "loadMore", value: "none" }];

function snapshot(unit, rev, view, extra = {}) {
  return { session: "s1", unit, rev, seq: extra.seq ?? 3, view, actions: extra.actions ?? counterActions, navigation: { stack: extra.stack ?? ["home", unit], presented: null } };
}

/** A server whose cookie names an existing session with `counters` on top at rev 5. */
function resumedServer() {
  const server = new FakeServer();
  server.route("GET", "/api/session", () => ({
    body: {
      session: "s1",
      seq: 9,
      navigation: { stack: ["home", "counters"], presented: null },
      pages: [snapshot("home", 0, { title: "MVVMR demo", items: [] }), snapshot("counters", 5, { rows: [{ id: 1, count: 0 }], status: "Loaded page 1" })],
    },
  }));
  return server;
}


beforeEach(() => {
  FakeEventSource.instances = [];
});

describe("starting", () => {
  test("resumes the tab's session, naming it in every request and in the stream's query", async () => {
    const server = resumedServer();
    const client = makeClient(server);
    await client.start({ knownSession: "s1" });
    assert.equal(client.session, "s1");
    assert.deepStrictEqual(client.navigation.stack, ["home", "counters"]);
    assert.equal(client.page("counters").rev, 5);
    assert.equal(server.calls[0].credentials, "same-origin");
    assert.equal(server.calls[0].headers["X-Session-ID"], "s1", "the tab's own session, not the cookie every tab shares");
    assert.equal(FakeEventSource.instances.length, 1);
    assert.equal(FakeEventSource.instances[0].url, "/api/events?session=s1&lastEventId=9");
  });

  test("a new tab creates its session at once, with no failed request", async () => {
    const server = new FakeServer();
    server.route("GET", "/api/session", () => ({ status: 404, body: errorBody("unknown_session") }));
    server.route("POST", "/api/sessions", () => ({
      status: 201,
      body: { session: "new", navigation: { stack: ["home"], presented: null }, page: { ...snapshot("home", 0, { title: "t" }), seq: 1 } },
    }));
    const client = makeClient(server);
    const recovered = [];
    client.on("recovered", (detail) => recovered.push(detail));
    await client.start();
    assert.equal(client.session, "new");
    assert.equal(client.topUnit, "home");
    assert.deepStrictEqual(client.page("home").view, { title: "t" });
    assert.equal(FakeEventSource.instances[0].url, "/api/events?session=new&lastEventId=1");
    assert.equal(recovered.length, 0, "a first visit is not a recovery");
    assert.deepStrictEqual(server.calls.map((call) => `${call.method} ${call.url}`), ["POST /api/sessions"]);
  });

  test("reports a recovery when the tab's known session is gone", async () => {
    const server = new FakeServer();
    server.route("GET", "/api/session", () => ({ status: 404, body: errorBody("unknown_session") }));
    server.route("POST", "/api/sessions", () => ({ status: 201, body: { session: "new", navigation: { stack: ["home"], presented: null }, page: snapshot("home", 0, {}) } }));
    const client = makeClient(server);
    const recovered = [];
    client.on("recovered", (detail) => recovered.push(detail));
    await client.start({ knownSession: "old" });
    assert.deepStrictEqual(recovered, [{ previousSession: "old", session: "new", unit: "home" }]);
  });
});

describe("rev rules", () => {
  let server;
  let client;
  let pages;
  beforeEach(async () => {
    server = resumedServer();
    client = makeClient(server);
    await client.start({ knownSession: "s1" });
    pages = [];
    client.on("page", (detail) => pages.push(detail));
  });

  test("an SSE patch from the held rev is applied and advances seq", () => {
    FakeEventSource.instances[0].emit("patch", 10, { unit: "counters", rev: 6, patch: [{ op: "replace", path: "/rows/0/count", value: 1 }] });
    assert.equal(client.page("counters").rev, 6);
    assert.equal(client.page("counters").view.rows[0].count, 1);
    assert.equal(client.seq, 10);
    assert.equal(pages.length, 1);
    assert.equal(pages[0].reason, "patch");
  });

  test("a patch whose rev is not newer is ignored", () => {
    const before = client.page("counters");
    FakeEventSource.instances[0].emit("patch", 10, { unit: "counters", rev: 5, patch: [{ op: "replace", path: "/status", value: "stale" }] });
    FakeEventSource.instances[0].emit("patch", 11, { unit: "counters", rev: 4, patch: [{ op: "replace", path: "/status", value: "older" }] });
    assert.strictEqual(client.page("counters"), before);
    assert.equal(pages.length, 0);
  });

  test("a gap triggers a resync with GET /api/pages/{unit}", async () => {
    server.route("GET", "/api/pages/counters", () => ({ body: snapshot("counters", 8, { rows: [{ id: 1, count: 3 }], status: "fresh" }) }));
    const outcome = client.receivePatch("counters", 6, 7, [{ op: "replace", path: "/status", value: "x" }]);
    assert.equal(outcome, "resync");
    FakeEventSource.instances[0].emit("patch", 12, { unit: "counters", rev: 7, patch: [] }); // same gap: one request
    await settle();
    assert.equal(server.callsTo("GET", "/api/pages/counters").length, 1);
    assert.equal(client.page("counters").rev, 8);
    assert.equal(client.page("counters").view.status, "fresh");
    assert.equal(pages.at(-1).reason, "resync");
  });

  test("a patch that does not apply triggers a resync and leaves the copy as it was", async () => {
    server.route("GET", "/api/pages/counters", () => ({ body: snapshot("counters", 6, { rows: [], status: "resynced" }) }));
    const before = structuredClone(client.page("counters").view);
    const errors = [];
    client.on("error", (e) => errors.push(e));
    const outcome = client.receivePatch("counters", 5, 6, [{ op: "remove", path: "/missing" }]);
    assert.equal(outcome, "resync");
    assert.deepStrictEqual(before, { rows: [{ id: 1, count: 0 }], status: "Loaded page 1" });
    await settle();
    assert.equal(client.page("counters").view.status, "resynced");
    assert.equal(errors.length, 1);
  });

  test("the action response and its SSE echo are applied once, whichever comes first", async () => {
    const patch = [{ op: "replace", path: "/rows/0/count", value: 1 }];
    server.route("POST", "/api/pages/counters/actions", () => ({ body: { unit: "counters", rev: 6, seq: 10, patch, navigation: null } }));
    await client.sendAction("counters", "increment", 1);
    FakeEventSource.instances[0].emit("patch", 10, { unit: "counters", rev: 6, patch });
    assert.equal(client.page("counters").view.rows[0].count, 1);
    assert.equal(pages.length, 1);

    // Echo first, response second.
    const patch2 = [{ op: "replace", path: "/rows/0/count", value: 2 }];
    server.route("POST", "/api/pages/counters/actions", () => {
      FakeEventSource.instances[0].emit("patch", 11, { unit: "counters", rev: 7, patch: patch2 });
      return { body: { unit: "counters", rev: 7, seq: 11, patch: patch2, navigation: null } };
    });
    await client.sendAction("counters", "increment", 1);
    assert.equal(client.page("counters").view.rows[0].count, 2);
    assert.equal(pages.length, 2);
  });

  test("a response patch from another rev than the held one is not applied; the page is resynced", async () => {
    server.route("GET", "/api/pages/counters", () => ({ body: snapshot("counters", 7, { rows: [{ id: 1, count: 9 }], status: "s" }) }));
    server.route("POST", "/api/pages/counters/actions", (call) => {
      // While the action is in flight, a timer change arrives over SSE (5 → 6).
      FakeEventSource.instances[0].emit("patch", 10, { unit: "counters", rev: 6, patch: [{ op: "replace", path: "/status", value: "timer" }] });
      assert.equal(call.body.rev, 5);
      return { body: { unit: "counters", rev: 7, seq: 11, patch: [{ op: "replace", path: "/rows/0/count", value: 1 }, { op: "replace", path: "/status", value: "timer" }], navigation: null } };
    });
    await client.sendAction("counters", "increment", 1);
    await settle();
    assert.equal(server.callsTo("GET", "/api/pages/counters").length, 1);
    assert.equal(client.page("counters").rev, 7);
    assert.equal(client.page("counters").view.rows[0].count, 9);
  });

  test("a response with a snapshot instead of a patch replaces the page", async () => {
    server.route("POST", "/api/pages/counters/actions", () => ({ body: { unit: "counters", rev: 40, seq: 50, snapshot: snapshot("counters", 40, { rows: [], status: "big jump" }), navigation: null } }));
    await client.sendAction("counters", "loadMore");
    assert.equal(client.page("counters").rev, 40);
    assert.equal(client.page("counters").view.status, "big jump");
  });

  test("snapshot events always replace the copy, even at a lower rev", () => {
    FakeEventSource.instances[0].emit("snapshot", 20, snapshot("counters", 2, { rows: [], status: "rebound" }));
    assert.equal(client.page("counters").rev, 2);
    assert.equal(client.seq, 20);
  });

  test("patches for pages the tab does not hold are ignored", () => {
    FakeEventSource.instances[0].emit("patch", 10, { unit: "dashboard", rev: 1, patch: [] });
    assert.equal(client.page("dashboard"), undefined);
    assert.equal(server.calls.length, 1);
  });
});

describe("actions", () => {
  test("send the held rev, a JSON body and a fresh Idempotency-Key per logical action", async () => {
    const server = resumedServer();
    server.route("POST", "/api/pages/counters/actions", () => ({ body: { unit: "counters", rev: 5, seq: 9, patch: [], navigation: null } }));
    const client = makeClient(server);
    await client.start({ knownSession: "s1" });
    await client.sendAction("counters", "increment", 1);
    await client.sendAction("counters", "increment", 1);
    const calls = server.callsTo("POST", "/api/pages/counters/actions");
    assert.deepStrictEqual(calls[0].body, { action: "increment", value: 1, rev: 5 });
    assert.equal(calls[0].headers["Content-Type"], "application/json");
    assert.equal(calls[0].credentials, "same-origin");
    assert.notEqual(calls[0].headers["Idempotency-Key"], calls[1].headers["Idempotency-Key"]);
  });

  test("a retry after a network failure or 503 reuses the key and the exact body", async () => {
    const server = resumedServer();
    let attempts = 0;
    server.route("POST", "/api/pages/counters/actions", () => {
      attempts += 1;
      if (attempts === 1) throw new TypeError("connection reset");
      if (attempts === 2) return { status: 503, body: errorBody("overloaded"), headers: { "Retry-After": "1" } };
      return { body: { unit: "counters", rev: 6, seq: 10, patch: [{ op: "replace", path: "/rows/0/count", value: 1 }], navigation: null } };
    });
    const sleeps = [];
    const client = makeClient(server, { sleep: async (ms) => sleeps.push(ms) });
    await client.start({ knownSession: "s1" });
    await client.sendAction("counters", "increment", 1);
    const calls = server.callsTo("POST", "/api/pages/counters/actions");
    assert.equal(calls.length, 3);
    assert.equal(new Set(calls.map((c) => c.headers["Idempotency-Key"])).size, 1);
    assert.ok(calls.every((c) => JSON.stringify(c.body) === JSON.stringify(calls[0].body)));
    assert.equal(sleeps[1], 1000, "Retry-After is honoured");
    assert.equal(client.page("counters").view.rows[0].count, 1);
  });

  test("client errors are not retried and reject with the server's code", async () => {
    const server = resumedServer();
    server.route("POST", "/api/pages/counters/actions", () => ({ status: 422, body: { error: { code: "invalid_value", message: "bad", details: { expected: "int" } } } }));
    const client = makeClient(server);
    await client.start({ knownSession: "s1" });
    await assert.rejects(client.sendAction("counters", "increment", "x"), (error) => error instanceof ProtocolError && error.code === "invalid_value" && error.status === 422);
    assert.equal(server.callsTo("POST", "/api/pages/counters/actions").length, 1);
  });

  test("a 429 gives up after maxRetries", async () => {
    const server = resumedServer();
    server.route("POST", "/api/pages/counters/actions", () => ({ status: 429, body: errorBody("rate_limited"), headers: { "Retry-After": "1" } }));
    const client = makeClient(server, { maxRetries: 2 });
    await client.start({ knownSession: "s1" });
    await assert.rejects(client.sendAction("counters", "loadMore"), (error) => error.code === "rate_limited");
    assert.equal(server.callsTo("POST", "/api/pages/counters/actions").length, 3);
  });

  test("actions of one page go out one after another, each with the rev it then holds", async () => {
    const server = resumedServer();
    let rev = 5;
    let inFlight = 0;
    server.route("POST", "/api/pages/counters/actions", async (call) => {
      inFlight += 1;
      assert.equal(inFlight, 1, "no overlap");
      await settle();
      inFlight -= 1;
      assert.equal(call.body.rev, rev);
      rev += 1;
      return { body: { unit: "counters", rev, seq: 10 + rev, patch: [{ op: "replace", path: "/rows/0/count", value: rev }], navigation: null } };
    });
    const client = makeClient(server);
    await client.start({ knownSession: "s1" });
    await Promise.all([client.sendAction("counters", "increment", 1), client.sendAction("counters", "increment", 1), client.sendAction("counters", "increment", 1)]);
    assert.equal(client.page("counters").rev, 8);
  });
});

describe("navigation", () => {
  test("a push in an action response stores the new page and reports the stack once", async () => {
    const server = new FakeServer();
    server.route("GET", "/api/session", () => ({ body: { session: "s", seq: 1, navigation: { stack: ["login"], presented: null }, pages: [snapshot("login", 3, { username: "david" }, { stack: ["login"] })] } }));
    const navigation = { type: "push", unit: "main", stack: ["login", "main"], presented: null, page: { unit: "main", rev: 0, view: { welcome: "Welcome, david" }, actions: [] } };
    server.route("POST", "/api/pages/login/actions", () => ({ body: { unit: "login", rev: 3, seq: 5, patch: [], navigation } }));
    const client = makeClient(server);
    await client.start({ knownSession: "s1" });
    const events = [];
    client.on("navigation", (detail) => events.push(detail));
    await client.sendAction("login", "submit");
    FakeEventSource.instances[0].emit("navigate", 5, navigation); // the SSE echo
    assert.equal(client.topUnit, "main");
    assert.deepStrictEqual(client.page("main").view, { welcome: "Welcome, david" });
    assert.equal(events.length, 1);
    assert.equal(events[0].type, "push");
    assert.deepStrictEqual(events[0].previousStack, ["login"]);
  });

  test("back and open post to /api/navigation; back forgets the popped page", async () => {
    const server = resumedServer();
    server.route("POST", "/api/navigation", (call) =>
      call.body.type === "back"
        ? { body: { unit: "home", rev: 0, seq: 10, patch: [], navigation: { type: "back", unit: "home", stack: ["home"], presented: null, page: snapshot("home", 0, { title: "MVVMR demo", items: [] }) } } }
        : { body: { unit: "greeting", rev: 0, seq: 11, patch: [], navigation: { type: "push", unit: "greeting", stack: ["home", "greeting"], presented: null, page: snapshot("greeting", 0, { greeting: "Say hello to who?" }) } } },
    );
    const client = makeClient(server);
    await client.start({ knownSession: "s1" });
    await client.back();
    assert.deepStrictEqual(server.calls.at(-1).body, { type: "back" });
    assert.deepStrictEqual(client.navigation.stack, ["home"]);
    assert.equal(client.page("counters"), undefined);
    await client.open("greeting");
    assert.deepStrictEqual(server.calls.at(-1).body, { type: "open", unit: "greeting" });
    assert.equal(client.topUnit, "greeting");
  });
});

describe("navigation responses", () => {
  test("a navigation response about the page it brings does not trigger a resync", async () => {
    const server = resumedServer();
    // The server's own shape: {seq, patch: [], unit, rev, navigation} with the top page's rev.
    server.route("POST", "/api/navigation", () => ({
      body: { seq: 12, patch: [], unit: "greeting", rev: 4, navigation: { type: "push", unit: "greeting", stack: ["home", "counters", "greeting"], presented: null, page: { unit: "greeting", rev: 4, view: { greeting: "Say hello to who?" }, actions: [] } } },
    }));
    const client = makeClient(server);
    await client.start({ knownSession: "s1" });
    client.pages.set("greeting", { unit: "greeting", rev: 1, view: { greeting: "old" }, actions: [] }); // an old copy
    await client.open("greeting");
    await settle();
    assert.equal(server.callsTo("GET", "/api/pages/greeting").length, 0);
    assert.equal(client.page("greeting").rev, 4);
    assert.equal(client.page("greeting").view.greeting, "Say hello to who?");
  });

  test("a navigation_error in an action response is reported, the patch still applied", async () => {
    const server = resumedServer();
    server.route("POST", "/api/pages/counters/actions", () => ({
      body: { unit: "counters", rev: 6, seq: 10, patch: [{ op: "replace", path: "/status", value: "x" }], navigation: null, navigation_error: { code: "unknown_unit", message: "No unit named nowhere." } },
    }));
    const client = makeClient(server);
    await client.start({ knownSession: "s1" });
    const reported = [];
    client.on("navigationerror", (detail) => reported.push(detail));
    await client.sendAction("counters", "loadMore");
    assert.equal(client.page("counters").view.status, "x");
    assert.equal(reported.length, 1);
    assert.equal(reported[0].error.code, "unknown_unit");
    assert.equal(reported[0].error.message, "No unit named nowhere.");
  });

  test("an open that changes nothing (navigation null) keeps the stack", async () => {
    const server = resumedServer();
    server.route("POST", "/api/navigation", () => ({ body: { seq: 9, patch: [], navigation: null } }));
    const client = makeClient(server);
    await client.start({ knownSession: "s1" });
    const events = [];
    client.on("navigation", (e) => events.push(e));
    await client.open("counters");
    assert.deepStrictEqual(client.navigation.stack, ["home", "counters"]);
    assert.equal(events.length, 0);
  });
});

describe("session recovery", () => {
  function recoveringServer() {
    const server = resumedServer();
    server.route("POST", "/api/sessions", (call) => ({
      status: 201,
      body: { session: "s2", navigation: { stack: ["home"], presented: null }, page: { ...snapshot("home", 0, { title: "MVVMR demo", items: [] }), seq: 1 } },
    }));
    server.route("POST", "/api/navigation", (call) => ({
      body: { unit: call.body.unit, rev: 0, seq: 2, patch: [], navigation: { type: "push", unit: call.body.unit, stack: ["home", call.body.unit], presented: null, page: snapshot(call.body.unit, 0, { rows: [], status: "Loaded page 1" }) } },
    }));
    return server;
  }

  test("a 404 unknown_session on an action opens a new session at the current deep link and tells the app", async () => {
    const server = recoveringServer();
    server.route("POST", "/api/pages/counters/actions", () => ({ status: 404, body: errorBody("unknown_session") }));
    const client = makeClient(server);
    await client.start({ knownSession: "s1" });
    const recovered = [];
    client.on("recovered", (detail) => recovered.push(detail));
    await assert.rejects(client.sendAction("counters", "increment", 1), (error) => error.code === "unknown_session");
    const create = server.callsTo("POST", "/api/sessions");
    assert.equal(create.length, 1);
    assert.deepStrictEqual(create[0].body, { unit: "counters" });
    // The server started at its root, so the client opened the deep link itself.
    assert.deepStrictEqual(server.callsTo("POST", "/api/navigation")[0].body, { type: "open", unit: "counters" });
    assert.equal(client.session, "s2");
    assert.equal(client.topUnit, "counters");
    assert.deepStrictEqual(recovered, [{ previousSession: "s1", session: "s2", unit: "counters" }]);
    // The old stream is closed, a new one follows the new session from its seq.
    assert.equal(FakeEventSource.instances[0].closed, true);
    assert.equal(FakeEventSource.instances.length, 2);
    // From the new session's snapshot seq: the navigation's own event comes again, harmlessly.
    assert.equal(FakeEventSource.instances[1].url, "/api/events?session=s2&lastEventId=1");
  });

  test("an expired event recovers once, even when a request fails at the same time", async () => {
    const server = recoveringServer();
    server.route("GET", "/api/pages/counters", () => ({ status: 404, body: errorBody("unknown_session") }));
    const client = makeClient(server);
    await client.start({ knownSession: "s1" });
    const recovered = [];
    client.on("recovered", (detail) => recovered.push(detail));
    FakeEventSource.instances[0].emit("expired", 10, {});
    client.resync("counters");
    await settle();
    await client.recovery;
    await settle();
    assert.equal(server.callsTo("POST", "/api/sessions").length, 1);
    assert.equal(recovered.length, 1);
    assert.equal(client.session, "s2");
  });

  test("a stream the browser gave up on is reopened from the last seq when the session lives", async () => {
    const server = resumedServer();
    const client = makeClient(server);
    await client.start({ knownSession: "s1" });
    FakeEventSource.instances[0].emit("patch", 12, { unit: "counters", rev: 6, patch: [] });
    FakeEventSource.instances[0].fail(2);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(FakeEventSource.instances.length, 2);
    assert.equal(FakeEventSource.instances[1].url, "/api/events?session=s1&lastEventId=12");
    client.close();
  });

  test("a stream the browser gave up on because the session is gone triggers recovery", async () => {
    const server = recoveringServer();
    const client = makeClient(server);
    await client.start({ knownSession: "s1" });
    server.route("GET", "/api/session", () => ({ status: 404, body: errorBody("unknown_session") }));
    const recovered = [];
    client.on("recovered", (detail) => recovered.push(detail));
    FakeEventSource.instances[0].fail(2);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(recovered.length, 1);
    assert.equal(client.topUnit, "counters");
    client.close();
  });
});
