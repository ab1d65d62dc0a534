// A small in-memory stand-in for the MVVMR demo server, for trying the browser client
// without the Swift server: serves Public/ and implements PROTOCOL.md's endpoints for the
// demo units closely enough for manual and browser smoke tests. Not a conformance
// reference. Run: node Tests/BrowserClient/dev-server.mjs [port]

import { createServer } from "node:http";
import { readFile } from "node:fs/promises";
import { randomBytes } from "node:crypto";
import { extname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";

const publicDirectory = fileURLToPath(new URL("../../Public/", import.meta.url));
const port = Number(process.argv[2] ?? process.env.PORT ?? 8099);
const types = { ".svg": "image/svg+xml", ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".json": "application/json" };

const units = {
  home: { actions: { open: "string" }, make: () => ({ title: "MVVMR demo", items: ["greeting", "demo", "login", "employees", "counters", "dashboard"].map((id) => ({ id, title: id[0].toUpperCase() + id.slice(1), summary: `The ${id} page` })) }) },
  greeting: { actions: { showGreeting: "none" }, make: () => ({ person: { firstName: "David", lastName: "Blaine" }, greeting: "Say hello to who?" }) },
  demo: { actions: { refresh: "none" }, make: () => ({ button: { title: "Tap", color: "blue" } }) },
  login: { actions: { username: "string", password: "string", submit: "none" }, make: () => ({ username: "", canSubmit: false, message: "Enter your username", error: null }) },
  main: { actions: { openSettings: "none", logout: "none" }, make: () => ({ user: "david", welcome: "Welcome, david", theme: "light", themeLabel: "Theme: light" }) },
  settings: { actions: { theme: "string", done: "none" }, make: () => ({ theme: "light", themes: ["light", "dark"] }) },
  employees: { actions: { reload: "none" }, make: () => ({ status: "loading", message: "Loading employees…", employees: [], count: 0 }) },
  counters: { actions: { increment: "int", loadMore: "none" }, make: () => ({ rows: rowsFor(1), page: 1, pageSize: 10, hasMore: true, loading: false, status: "Loaded page 1" }) },
  dashboard: { actions: { "quote.shuffle": "none", "stats.reset": "none" }, make: () => ({ clock: { time: clock(), ticks: 0 }, quote: { text: "Simplicity is prerequisite for reliability.", author: "Dijkstra", index: 0 }, stats: { ticks: 0, shuffles: 0 } }) },
};
// A unit without a template, to exercise the generic renderer.
units.profile = { actions: { rename: "string", setAge: "int", setActive: "bool", clear: "none" }, make: () => ({ name: "Ada", age: 36, active: true, tags: ["math", "engines"], address: { city: "London", zip: null } }) };
const quotes = [["Simplicity is prerequisite for reliability.", "Dijkstra"], ["Make it work, make it right, make it fast.", "Beck"], ["Programs must be written for people to read.", "Abelson"]];

function rowsFor(page) {
  return Array.from({ length: 10 }, (_, i) => ({ id: (page - 1) * 10 + i + 1, title: `Row ${(page - 1) * 10 + i + 1}`, count: 0 }));
}
function clock() {
  return new Date().toISOString().slice(11, 19);
}

const sessions = new Map();

function newSession(rootUnit = "home") {
  const session = { id: randomBytes(16).toString("base64url"), seq: 0, events: [], streams: new Set(), pages: new Map(), stack: [], presented: null, revs: new Map(), keys: new Map(), private: {} };
  sessions.set(session.id, session);
  bind(session, rootUnit);
  session.stack = [rootUnit];
  return session;
}

function bind(session, unit, view) {
  const rev = session.revs.get(unit) ?? 0;
  const page = { unit, rev, view: view ?? units[unit].make() };
  session.pages.set(unit, page);
  if (unit === "employees") setTimeout(() => loadEmployees(session), 800);
  return page;
}

function snapshot(session, unit) {
  const page = session.pages.get(unit);
  return { session: session.id, unit, rev: page.rev, seq: session.seq, view: page.view, actions: Object.entries(units[unit].actions).map(([name, value]) => ({ name, value })), navigation: navigation(session) };
}
function navigation(session) {
  return { stack: [...session.stack], presented: session.presented };
}

function emit(session, type, data) {
  session.seq += 1;
  const event = { id: session.seq, type, data };
  session.events.push(event);
  if (session.events.length > 256) session.events.shift();
  for (const stream of session.streams) write(stream, event);
}
function write(stream, { id, type, data }) {
  stream.write(`id: ${id}\nevent: ${type}\ndata: ${JSON.stringify(data)}\n\n`);
}

/** Top-level diff: enough for the demo views. */
function diff(before, after) {
  const patch = [];
  for (const key of Object.keys(before)) if (!(key in after)) patch.push({ op: "remove", path: `/${key}` });
  for (const [key, value] of Object.entries(after)) {
    if (!(key in before)) patch.push({ op: "add", path: `/${key}`, value });
    else if (JSON.stringify(before[key]) !== JSON.stringify(value)) {
      if (Array.isArray(value) && Array.isArray(before[key]) && value.length > before[key].length && JSON.stringify(value.slice(0, before[key].length)) === JSON.stringify(before[key])) {
        for (const item of value.slice(before[key].length)) patch.push({ op: "add", path: `/${key}/-`, value: item });
      } else patch.push({ op: "replace", path: `/${key}`, value });
    }
  }
  return patch;
}

/** Changes a page's view; returns {rev, patch}. */
function change(session, unit, mutate) {
  const page = session.pages.get(unit);
  if (!page) return null;
  const before = structuredClone(page.view);
  mutate(page.view);
  const patch = diff(before, page.view);
  if (patch.length === 0) return { rev: page.rev, patch: [] };
  page.rev += 1;
  session.revs.set(unit, page.rev);
  emit(session, "patch", { unit, rev: page.rev, patch });
  return { rev: page.rev, patch };
}

function navigate(session, type, unit, view) {
  if (type === "root") {
    session.pages.clear();
    session.stack = [unit];
    session.presented = null;
    bind(session, unit, view);
  } else if (type === "push" || type === "present") {
    session.stack.push(unit);
    session.presented = type === "present" ? unit : null;
    bind(session, unit, view);
  } else if (type === "back") {
    const top = session.stack.pop();
    session.pages.delete(top);
    session.presented = null;
  }
  const top = session.stack.at(-1);
  const nav = { type, unit: top, ...navigation(session), page: snapshot(session, top) };
  delete nav.page.session;
  emit(session, "navigate", nav);
  return nav;
}

function loadEmployees(session) {
  change(session, "employees", (v) => {
    v.status = "loaded";
    v.message = null;
    v.employees = Array.from({ length: 24 }, (_, i) => ({ id: i + 1, employee_name: `Employee ${i + 1}`, employee_salary: 100000 + i * 7919, employee_age: 20 + i, profile_image: "" }));
    v.count = 24;
  });
}

function loginMessage(v, password) {
  if (!v.username) return "Enter your username";
  if (password.length < 6) return "The password needs at least 6 characters";
  return "Ready to sign in";
}

/** Runs an action; returns {rev, patch, navigation} or throws [status, code]. */
function perform(session, unit, action, value) {
  let nav = null;
  let result;
  switch (`${unit}.${action}`) {
    case "home.open":
      if (!units[value] || value === "home") throw [422, "invalid_value"];
      result = change(session, unit, () => {});
      nav = navigate(session, "push", value);
      break;
    case "greeting.showGreeting":
      result = change(session, unit, (v) => (v.greeting = `Hello ${v.person.firstName} ${v.person.lastName}`));
      break;
    case "demo.refresh":
      result = change(session, unit, (v) => (v.button = { title: "Data refreshed", color: "orange" }));
      break;
    case "login.username":
    case "login.password":
      if (action === "password") session.private.password = String(value);
      result = change(session, unit, (v) => {
        if (action === "username") v.username = String(value);
        v.message = loginMessage(v, session.private.password ?? "");
        v.canSubmit = v.message === "Ready to sign in";
        v.error = null;
      });
      break;
    case "login.submit": {
      const ok = session.pages.get("login").view.username === "david" && session.private.password === "blaine123";
      result = change(session, unit, (v) => (v.error = ok ? null : "Wrong username or password"));
      if (ok) nav = navigate(session, "push", "main");
      break;
    }
    case "main.openSettings":
      result = change(session, unit, () => {});
      nav = navigate(session, "present", "settings", { theme: session.pages.get("main").view.theme, themes: ["light", "dark"] });
      break;
    case "main.logout":
      result = change(session, unit, () => {});
      nav = navigate(session, "root", "login");
      break;
    case "settings.theme":
      if (value !== "light" && value !== "dark") throw [422, "invalid_value"];
      result = change(session, unit, (v) => (v.theme = value));
      break;
    case "settings.done": {
      const theme = session.pages.get("settings").view.theme;
      change(session, "main", (v) => {
        v.theme = theme;
        v.themeLabel = `Theme: ${theme}`;
      });
      result = { rev: session.pages.get("settings").rev, patch: [] };
      nav = navigate(session, "back");
      break;
    }
    case "employees.reload":
      result = change(session, unit, (v) => Object.assign(v, units.employees.make()));
      setTimeout(() => loadEmployees(session), 800);
      break;
    case "counters.increment":
      if (!Number.isInteger(value)) throw [422, "invalid_value"];
      result = change(session, unit, (v) => v.rows.forEach((r) => r.id === value && (r.count += 1)));
      break;
    case "counters.loadMore": {
      const v0 = session.pages.get("counters").view;
      if (!v0.hasMore) {
        result = change(session, unit, () => {});
        break;
      }
      result = change(session, unit, (v) => (v.loading = true));
      setTimeout(() => {
        change(session, "counters", (v) => {
          v.page += 1;
          v.rows.push(...rowsFor(v.page));
          v.loading = false;
          v.hasMore = v.page < 5;
          v.status = `Loaded page ${v.page}`;
        });
      }, 500);
      break;
    }
    case "dashboard.quote.shuffle":
      result = change(session, unit, (v) => {
        const index = (v.quote.index + 1) % quotes.length;
        v.quote = { text: quotes[index][0], author: quotes[index][1], index };
        v.stats = { ...v.stats, shuffles: v.stats.shuffles + 1 };
      });
      break;
    case "profile.rename":
      result = change(session, unit, (v) => (v.name = String(value)));
      break;
    case "profile.setAge":
      if (!Number.isInteger(value)) throw [422, "invalid_value"];
      result = change(session, unit, (v) => (v.age = value));
      break;
    case "profile.setActive":
      result = change(session, unit, (v) => (v.active = Boolean(value)));
      break;
    case "profile.clear":
      result = change(session, unit, (v) => (v.tags = []));
      break;
    case "dashboard.stats.reset":
      result = change(session, unit, (v) => (v.stats = { ticks: 0, shuffles: 0 }));
      break;
    default:
      throw [422, "unknown_action"];
  }
  return { unit, rev: result.rev, seq: session.seq, patch: result.patch, navigation: nav };
}

setInterval(() => {
  for (const session of sessions.values()) {
    if (!session.pages.has("dashboard")) continue;
    change(session, "dashboard", (v) => {
      v.clock = { time: clock(), ticks: v.clock.ticks + 1 };
      v.stats = { ...v.stats, ticks: v.stats.ticks + 1 };
    });
  }
}, 1000).unref();

function send(response, status, body, headers = {}) {
  response.writeHead(status, { "Content-Type": "application/json", "Cache-Control": "no-store", ...headers });
  response.end(body === null ? "" : JSON.stringify(body));
}
function fail(response, status, code) {
  send(response, status, { error: { code, message: code } });
}
function sessionOf(request) {
  const header = request.headers["x-session-id"];
  const cookie = /(?:^|;\s*)mvvmr_session=([^;]+)/.exec(request.headers.cookie ?? "")?.[1];
  return header ?? cookie ?? null;
}
const cookie = (session) => ({ "Set-Cookie": `mvvmr_session=${session.id}; Path=/; HttpOnly; SameSite=Lax` });
async function readBody(request) {
  let text = "";
  for await (const chunk of request) text += chunk;
  return text ? JSON.parse(text) : {};
}

const server = createServer(async (request, response) => {
  const url = new URL(request.url, "http://localhost");
  const path = url.pathname;
  if (process.env.DEV_LOG) console.log(request.method, request.url);
  try {
    if (path === "/api/units") {
      return send(response, 200, { root: "home", units: Object.entries(units).map(([name, u]) => ({ name, route: `/${name}`, actions: Object.entries(u.actions).map(([n, v]) => ({ name: n, value: v })) })) });
    }
    if (path === "/api/sessions" && request.method === "POST") {
      const body = await readBody(request);
      const session = newSession(units[body.unit] && body.unit !== "home" ? "home" : "home");
      return send(response, 201, { session: session.id, navigation: navigation(session), page: snapshot(session, "home") }, cookie(session));
    }
    if (path === "/__expire" && request.method === "POST") {
      // Test hook: expires every session (emitting `expired` on their streams).
      for (const session of sessions.values()) for (const stream of session.streams) stream.end("event: expired\ndata: {}\n\n");
      sessions.clear();
      return send(response, 204, null);
    }
    if (path === "/__drop" && request.method === "POST") {
      // Test hook: forgets every session silently (as a restarted server would).
      for (const session of sessions.values()) for (const stream of session.streams) stream.destroy();
      sessions.clear();
      return send(response, 204, null);
    }
    if (path.startsWith("/api/")) {
      let session = sessions.get(sessionOf(request));
      const pageMatch = /^\/api\/pages\/([^/]+)(\/actions)?$/.exec(path);
      if (!session && pageMatch && !pageMatch[2] && !sessionOf(request) && request.method === "GET") {
        const unit = decodeURIComponent(pageMatch[1]);
        if (!units[unit]) return fail(response, 404, "unknown_unit");
        session = newSession(unit);
        return send(response, 200, snapshot(session, unit), cookie(session));
      }
      if (!session) return fail(response, 404, "unknown_session");
      if (path === "/api/session" && request.method === "GET") {
        return send(response, 200, { session: session.id, seq: session.seq, navigation: navigation(session), pages: [...session.pages.keys()].map((u) => snapshot(session, u)) });
      }
      if (path === "/api/events") {
        response.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-store" });
        const last = Number(request.headers["last-event-id"] ?? url.searchParams.get("lastEventId") ?? session.seq);
        for (const event of session.events) if (event.id > last) write(response, event);
        session.streams.add(response);
        if (process.env.DEV_LOG) console.log("stream open", request.url, request.headers["last-event-id"] ?? "");
        response.on("close", () => { session.streams.delete(response); if (process.env.DEV_LOG) console.log("stream closed"); });
        return;
      }
      if (path === "/api/navigation" && request.method === "POST") {
        const body = await readBody(request);
        const top = session.stack.at(-1);
        if (body.type === "back") {
          if (session.stack.length < 2) return fail(response, 409, "invalid_request");
          const nav = navigate(session, "back");
          return send(response, 200, { unit: nav.unit, rev: nav.page.rev, seq: session.seq, patch: [], navigation: nav });
        }
        if (!units[body.unit]) return fail(response, 404, "unknown_unit");
        let nav = null;
        if (body.unit !== top) {
          if (session.stack.includes(body.unit)) {
            while (session.stack.at(-2) !== body.unit) session.pages.delete(session.stack.pop());
            nav = navigate(session, "back");
          } else nav = navigate(session, "push", body.unit);
        }
        const page = session.pages.get(body.unit);
        return send(response, 200, { unit: body.unit, rev: page.rev, seq: session.seq, patch: [], navigation: nav });
      }
      if (pageMatch) {
        const unit = decodeURIComponent(pageMatch[1]);
        if (!units[unit]) return fail(response, 404, "unknown_unit");
        if (!pageMatch[2]) {
          if (!session.pages.has(unit)) {
            bind(session, unit);
            emit(session, "snapshot", snapshot(session, unit));
          }
          return send(response, 200, snapshot(session, unit));
        }
        if (!session.pages.has(unit)) return fail(response, 409, "page_not_bound");
        const body = await readBody(request);
        const key = request.headers["idempotency-key"];
        if (key && session.keys.has(key)) return send(response, 200, session.keys.get(key));
        const page = session.pages.get(unit);
        const fromRev = Number.isInteger(body.rev) ? body.rev : page.rev;
        if (fromRev !== page.rev) {
          // Behind: answer with a snapshot (this stand-in keeps no history).
          const result = perform(session, unit, body.action, body.value);
          const answer = { ...result, patch: undefined, snapshot: snapshot(session, unit) };
          return send(response, 200, answer);
        }
        const result = perform(session, unit, body.action, body.value);
        if (key) session.keys.set(key, result);
        return send(response, 200, result);
      }
      return fail(response, 404, "not_found");
    }
    // Static files; unit routes serve index.html for HTML requests.
    const name = path === "/" ? "index.html" : normalize(path).replace(/^([/\\])+/, "");
    if (units[name] && (request.headers.accept ?? "").includes("text/html")) {
      response.writeHead(200, { "Content-Type": types[".html"] });
      return response.end(await readFile(join(publicDirectory, "index.html")));
    }
    const file = join(publicDirectory, name);
    if (!file.startsWith(publicDirectory)) return fail(response, 404, "not_found");
    const data = await readFile(file);
    response.writeHead(200, { "Content-Type": types[extname(file)] ?? "application/octet-stream", "Content-Security-Policy": "default-src 'self'" });
    return response.end(data);
  } catch (error) {
    if (Array.isArray(error)) return fail(response, error[0], error[1]);
    if (error.code === "ENOENT" || error.code === "EISDIR") return fail(response, 404, "not_found");
    console.error(error);
    return fail(response, 500, "internal_error");
  }
});

server.listen(port, "127.0.0.1", () => console.log(`dev server on http://127.0.0.1:${port}/`));
