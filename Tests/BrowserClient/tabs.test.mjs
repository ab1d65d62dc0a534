// A session per tab, queued clicks, forward navigation and refused entries: the rules of
// tabs.js and client.js that the browser tests (Tests/system/test_browser_tabs_and_input.py)
// see from outside, checked here one by one with fakes.
import { test, describe, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { claimSession } from "../../Public/js/tabs.js";
import { MvvmrClient, ProtocolError } from "../../Public/js/client.js";
import { navigationForHistoryEntry, historyActionFor } from "../../Public/js/routes.js";
import { FakeServer, FakeEventSource, makeClient, settle, errorBody } from "./fakes.mjs";

const actions = [{ name: "increment", value: "int" }, { name: "submit", value: "none" }];

function snapshot(unit, rev, view, stack = ["home", unit]) {
  return { session: "s1", unit, rev, seq: 3, view, actions, navigation: { stack, presented: null, forward: [] } };
}


beforeEach(() => {
  FakeEventSource.instances = [];
});

/** `navigator.locks` for one browser: a lock is granted when free, else waits for its release or the abort. */
class FakeLocks {
  constructor() {
    this.held = new Map(); // name -> release promise
  }

  request(name, { signal }, callback) {
    return new Promise((resolve, reject) => {
      const attempt = () => {
        if (signal?.aborted) return; // an aborted request leaves the queue
        if (this.held.has(name)) {
          this.held.get(name).then(attempt);
          return;
        }
        const hold = Promise.resolve(callback());
        this.held.set(name, hold);
        hold.then(() => {
          this.held.delete(name);
          resolve();
        });
      };
      signal?.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError")));
      attempt();
    });
  }
}

/** BroadcastChannel for one browser: every other open channel of the same name gets each message. */
function fakeChannelClass() {
  const open = new Set();
  return class {
    constructor(name) {
      this.name = name;
      this.onmessage = null;
      open.add(this);
    }
    postMessage(data) {
      for (const other of open) {
        if (other !== this && other.name === this.name) setTimeout(() => other.onmessage?.({ data }), 1);
      }
    }
    close() {
      open.delete(this);
    }
  };
}

describe("claiming a tab's session", () => {
  test("with Web Locks: the first tab holds its id; a duplicate is refused; after release (a reload) it is granted", async () => {
    const locks = new FakeLocks();
    const first = await claimSession("s1", { locks, lockWait: 30 });
    assert.equal(first.claimed, true);
    const duplicate = await claimSession("s1", { locks, lockWait: 30 });
    assert.equal(duplicate.claimed, false, "another open tab holds s1");
    assert.equal((await claimSession("s2", { locks, lockWait: 30 })).claimed, true, "other ids are free");
    // A reload: the old document lets go while the new one waits.
    const reloaded = claimSession("s1", { locks, lockWait: 200 });
    setTimeout(() => first.release(), 20);
    assert.equal((await reloaded).claimed, true);
  });

  test("without Web Locks: a roll call on a BroadcastChannel finds the tab that holds the id", async () => {
    const BroadcastChannel = fakeChannelClass();
    const first = await claimSession("s1", { BroadcastChannel, rollCallWait: 20 });
    assert.equal(first.claimed, true);
    assert.equal((await claimSession("s1", { BroadcastChannel, rollCallWait: 20 })).claimed, false);
    first.release();
    assert.equal((await claimSession("s1", { BroadcastChannel, rollCallWait: 20 })).claimed, true, "a closed tab answers no more");
  });

  test("with neither, every claim is granted (one tab cannot tell)", async () => {
    assert.equal((await claimSession("s1", {})).claimed, true);
  });
});

describe("a session per tab", () => {
  test("every request and the stream name the tab's session, not the shared cookie", async () => {
    const server = new FakeServer();
    server.route("GET", "/api/session", () => ({ body: { session: "tab-a", seq: 4, navigation: { stack: ["home"], presented: null }, pages: [snapshot("home", 0, {}, ["home"])] } }));
    server.route("POST", "/api/pages/home/actions", () => ({ body: { unit: "home", rev: 1, seq: 5, patch: [] } }));
    const client = makeClient(server);
    await client.start({ knownSession: "tab-a" });
    await client.sendAction("home", "submit");
    assert.deepStrictEqual(server.calls.map((call) => call.headers["X-Session-ID"]), ["tab-a", "tab-a"]);
    assert.equal(FakeEventSource.instances[0].url, "/api/events?session=tab-a&lastEventId=4");
  });

  test("a recovery for a page that opens only in its flow stays at the root and reports entry_refused", async () => {
    const server = new FakeServer();
    server.route("POST", "/api/sessions", () => ({
      status: 201,
      body: {
        session: "new",
        navigation: { stack: ["home"], presented: null, forward: [] },
        page: { ...snapshot("home", 0, {}, ["home"]), seq: 1 },
        navigation_error: { code: "entry_refused", message: "main opens only from within the app", details: { unit: "main" } },
      },
    }));
    const client = makeClient(server);
    const errors = [];
    client.on("navigationerror", (detail) => errors.push(detail));
    await client.createSession("main");
    assert.equal(client.topUnit, "home");
    assert.equal(server.callsTo("POST", "/api/navigation").length, 0, "no second try at a refused page");
    assert.equal(errors.length, 1);
    assert.equal(errors[0].error.code, "entry_refused");
    assert.equal(errors[0].unit, "main");
  });

  test("a session asked for at an unknown unit starts at the root and says so", async () => {
    const server = new FakeServer();
    server.route("POST", "/api/sessions", (call) =>
      call.body.unit
        ? { status: 404, body: errorBody("unknown_unit") }
        : { status: 201, body: { session: "new", navigation: { stack: ["home"], presented: null }, page: { ...snapshot("home", 0, {}, ["home"]), seq: 1 } } },
    );
    const client = makeClient(server);
    const errors = [];
    client.on("navigationerror", (detail) => errors.push(detail));
    await client.createSession("nosuchpage");
    assert.equal(client.session, "new");
    assert.equal(client.topUnit, "home");
    assert.deepStrictEqual(errors.map((e) => [e.error.code, e.unit]), [["unknown_unit", "nosuchpage"]]);
  });
});

describe("queued clicks", () => {
  test("five quick clicks are five actions, sent one after another with five keys", async () => {
    const server = new FakeServer();
    server.route("GET", "/api/session", () => ({ body: { session: "s1", seq: 1, navigation: { stack: ["home", "counters"], presented: null }, pages: [snapshot("counters", 0, { rows: [{ id: 1, count: 0 }] })] } }));
    let inFlight = 0;
    let most = 0;
    server.route("POST", "/api/pages/counters/actions", async (call) => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 2));
      inFlight -= 1;
      const rev = call.body.rev + 1;
      return { body: { unit: "counters", rev, seq: rev + 1, patch: [{ op: "replace", path: "/rows/0/count", value: rev }] } };
    });
    const client = makeClient(server);
    await client.start({ knownSession: "s1" });
    await Promise.all([1, 2, 3, 4, 5].map(() => client.sendAction("counters", "increment", 1)));
    const sent = server.callsTo("POST", "/api/pages/counters/actions");
    assert.equal(sent.length, 5);
    assert.equal(most, 1, "one at a time");
    assert.deepStrictEqual(sent.map((call) => call.body.rev), [0, 1, 2, 3, 4], "each with the rev it then holds");
    assert.equal(new Set(sent.map((call) => call.headers["Idempotency-Key"])).size, 5);
    assert.equal(client.page("counters").view.rows[0].count, 5);
  });

  test("an action queued behind one that navigated away is dropped, not sent to a page that is gone", async () => {
    const server = new FakeServer();
    server.route("GET", "/api/session", () => ({ body: { session: "s1", seq: 1, navigation: { stack: ["login"], presented: null }, pages: [snapshot("login", 0, {}, ["login"])] } }));
    server.route("POST", "/api/pages/login/actions", () => ({
      body: { unit: "login", rev: 1, seq: 3, patch: [], navigation: { type: "push", unit: "main", stack: ["login", "main"], presented: null, forward: [], page: snapshot("main", 0, { welcome: "Welcome, david" }, ["login", "main"]) } },
    }));
    server.route("POST", "/api/navigation", () => ({
      body: { unit: "login", rev: 1, seq: 4, patch: [], navigation: { type: "back", unit: "login", stack: ["login"], presented: null, forward: ["main"], page: snapshot("login", 1, {}, ["login"]) } },
    }));
    const client = makeClient(server);
    await client.start({ knownSession: "s1" });
    const dropped = [];
    client.on("dropped", (detail) => dropped.push(detail));
    const first = client.sendAction("login", "submit");
    const second = client.sendAction("login", "submit"); // a double click on "Sign in"
    assert.equal((await first).navigation.unit, "main");
    assert.equal(await second, null);
    assert.equal(server.callsTo("POST", "/api/pages/login/actions").length, 1);
    assert.deepStrictEqual(dropped, [{ unit: "login", action: "submit" }]);
  });
});

describe("actions kept across a reload", () => {
  function memoryStorage() {
    let value = null;
    return { load: () => (value ? JSON.parse(value) : null), save: (next) => (value = next ? JSON.stringify(next) : null), peek: () => (value ? JSON.parse(value) : null) };
  }

  function counterServer(session = "s1") {
    const server = new FakeServer();
    server.route("GET", "/api/session", () => ({ body: { session, seq: 1, navigation: { stack: ["home", "counters"], presented: null }, pages: [snapshot("counters", 1, { rows: [{ id: 1, count: 1 }] })] } }));
    return server;
  }

  test("waiting actions are saved with their keys and bodies, and a reload sends them again, in order, with the same ones", async () => {
    const storage = memoryStorage();
    const down = counterServer();
    down.route("POST", "/api/pages/counters/actions", () => {
      throw new TypeError("connection refused");
    });
    let keys = 0;
    const before = new MvvmrClient({ fetch: down.fetch, randomKey: () => `key-${++keys}`, sleep: () => new Promise(() => {}), outboxStorage: storage });
    await before.start({ knownSession: "s1" });
    before.sendAction("counters", "increment", 1).catch(() => {});
    before.sendAction("counters", "increment", 1).catch(() => {});
    await settle();
    const saved = storage.peek();
    assert.equal(saved.session, "s1");
    assert.deepStrictEqual(saved.actions.map((a) => a.key), ["key-1", "key-2"]);
    assert.deepStrictEqual(saved.actions[0].body, { action: "increment", value: 1, rev: 1 }, "the first left: its bytes are fixed");
    assert.equal(saved.actions[1].body, null, "the second never left");

    // The tab reloads (the old client is gone) and the server is back.
    const up = counterServer();
    up.route("POST", "/api/pages/counters/actions", (call) => ({ body: { unit: "counters", rev: (call.body.rev ?? 1) + 1, seq: 9, patch: [] } }));
    const after = new MvvmrClient({ fetch: up.fetch, randomKey: () => "fresh", sleep: async () => {}, outboxStorage: storage });
    await after.start({ knownSession: "s1" });
    while (after.outbox.length) await settle();
    const sent = up.callsTo("POST", "/api/pages/counters/actions");
    assert.deepStrictEqual(sent.map((call) => call.headers["Idempotency-Key"]), ["key-1", "key-2"]);
    assert.deepStrictEqual(sent[0].body, { action: "increment", value: 1, rev: 1 });
    assert.equal(storage.peek(), null, "nothing left to send");
  });

  test("actions saved in another session are forgotten, not sent to this one", async () => {
    const storage = memoryStorage();
    storage.save({ session: "gone", actions: [{ unit: "counters", action: "increment", value: 1, key: "k", body: null }] });
    const server = counterServer("s1");
    const client = makeClient(server);
    client.outboxStorage = storage;
    await client.start({ knownSession: "s1" });
    await settle();
    assert.equal(server.callsTo("POST", "/api/pages/counters/actions").length, 0);
    assert.equal(storage.peek(), null);
  });

  test("only the actions before a waiting navigation are kept", async () => {
    const storage = memoryStorage();
    const down = counterServer();
    down.route("POST", "/api/pages/counters/actions", () => {
      throw new TypeError("connection refused");
    });
    const client = new MvvmrClient({ fetch: down.fetch, randomKey: () => "k", sleep: () => new Promise(() => {}), outboxStorage: storage });
    await client.start({ knownSession: "s1" });
    client.sendAction("counters", "increment", 1).catch(() => {});
    client.back().catch(() => {});
    client.sendAction("home", "open", "greeting").catch(() => {});
    await settle();
    assert.deepStrictEqual(storage.peek().actions.map((a) => a.unit), ["counters"]);
  });
});

describe("forward navigation", () => {
  test("back keeps the copy of the page the server keeps for going forward; forward brings it back", async () => {
    const counters = snapshot("counters", 2, { rows: [{ id: 1, count: 2 }] });
    const server = new FakeServer();
    server.route("GET", "/api/session", () => ({ body: { session: "s1", seq: 5, navigation: { stack: ["home", "counters"], presented: null, forward: [] }, pages: [snapshot("home", 0, {}, ["home"]), counters] } }));
    server.route("POST", "/api/navigation", (call) =>
      call.body.type === "back"
        ? { body: { unit: "home", rev: 0, seq: 6, patch: [], navigation: { type: "back", unit: "home", stack: ["home"], presented: null, forward: ["counters"], page: snapshot("home", 0, {}, ["home"]) } } }
        : { body: { unit: "counters", rev: 2, seq: 7, patch: [], navigation: { type: "forward", unit: "counters", stack: ["home", "counters"], presented: null, forward: [], page: counters } } },
    );
    const client = makeClient(server);
    await client.start({ knownSession: "s1" });
    await client.back();
    assert.deepStrictEqual(client.navigation.forward, ["counters"]);
    assert.equal(client.page("counters").rev, 2, "kept: the server still holds it");
    await client.forward();
    assert.deepStrictEqual(server.calls.at(-1).body, { type: "forward" });
    assert.deepStrictEqual(client.navigation.stack, ["home", "counters"]);
    assert.equal(client.page("counters").view.rows[0].count, 2);
  });

  test("a history entry one page past the stack is a forward when the server keeps that page, else an open", () => {
    assert.deepStrictEqual(navigationForHistoryEntry(["home"], { stack: ["home", "counters"] }, "counters", ["counters"]), { type: "forward" });
    assert.deepStrictEqual(navigationForHistoryEntry(["home"], null, "counters", ["counters"]), { type: "forward" });
    assert.deepStrictEqual(navigationForHistoryEntry(["home"], { stack: ["home", "counters"] }, "counters", ["greeting"]), { type: "open", unit: "counters" });
    assert.deepStrictEqual(navigationForHistoryEntry(["home"], { stack: ["home", "counters"] }, "counters"), { type: "open", unit: "counters" });
    assert.equal(historyActionFor({ type: "forward", stack: ["home", "counters"], previousStack: ["home"] }, null), "push");
  });

  test("a forward whose connection broke is not sent twice when the first one moved the stack", async () => {
    const server = new FakeServer();
    let stack = ["home"];
    server.route("GET", "/api/session", () => ({ body: { session: "s1", seq: 5, navigation: { stack, presented: null, forward: stack.length === 1 ? ["counters"] : [] }, pages: [snapshot("home", 0, {}, ["home"])] } }));
    let posts = 0;
    server.route("POST", "/api/navigation", () => {
      posts += 1;
      stack = ["home", "counters"]; // applied, but the answer is lost
      throw new TypeError("connection reset");
    });
    const client = makeClient(server);
    await client.start({ knownSession: "s1" });
    await client.forward();
    await settle();
    assert.equal(posts, 1);
    assert.deepStrictEqual(client.navigation.stack, ["home", "counters"]);
  });
});

test("ProtocolError carries the status of a refused entry", () => {
  const error = new ProtocolError("entry_refused", "no", { status: 403 });
  assert.equal(error.status, 403);
});
