// Test doubles for the browser APIs the client uses: fetch and EventSource.

import { MvvmrClient } from "../../Public/js/client.js";

/** A scripted fetch: routes `METHOD /path` to handlers and records every call. */
export class FakeServer {
  constructor() {
    this.routes = [];
    this.calls = [];
  }

  /**
   * Adds a handler; later routes win. A handler returns `{status, body, headers}` or throws
   * (to simulate a network failure).
   */
  route(method, path, handler) {
    this.routes.unshift({ method, path, handler });
    return this;
  }

  get fetch() {
    return async (url, init = {}) => {
      const method = init.method ?? "GET";
      const call = { method, url, headers: init.headers ?? {}, body: init.body ? JSON.parse(init.body) : undefined, credentials: init.credentials };
      this.calls.push(call);
      const path = url.split("?")[0];
      const route = this.routes.find((r) => r.method === method && (r.path instanceof RegExp ? r.path.test(path) : r.path === path));
      if (!route) return jsonResponse(404, { error: { code: "not_found", message: `no route ${method} ${path}` } });
      const { status = 200, body = null, headers = {} } = await route.handler(call);
      return jsonResponse(status, body, headers);
    };
  }

  callsTo(method, path) {
    return this.calls.filter((c) => c.method === method && c.url.split("?")[0] === path);
  }
}

function jsonResponse(status, body, headers = {}) {
  const text = body === null || body === undefined ? "" : JSON.stringify(body);
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), String(v)]));
  return {
    ok: status >= 200 && status < 300,
    status,
    headers: { get: (name) => lower[name.toLowerCase()] ?? null },
    text: async () => text,
  };
}

/** An EventSource double that tests drive by hand. */
export class FakeEventSource {
  static instances = [];

  constructor(url) {
    this.url = url;
    this.readyState = 0;
    this.closed = false;
    this.listeners = new Map();
    FakeEventSource.instances.push(this);
  }

  addEventListener(type, listener) {
    if (!this.listeners.has(type)) this.listeners.set(type, []);
    this.listeners.get(type).push(listener);
  }

  close() {
    this.closed = true;
    this.readyState = 2;
  }

  /** Delivers a server event like the browser would. */
  emit(type, id, data) {
    for (const listener of this.listeners.get(type) ?? []) {
      listener({ type, lastEventId: id === null ? "" : String(id), data: data === undefined ? "" : JSON.stringify(data) });
    }
  }

  fail(readyState) {
    this.readyState = readyState;
    for (const listener of this.listeners.get("error") ?? []) listener({ type: "error" });
  }
}

/** Resolves after pending promise callbacks have run. */
export const settle = () => new Promise((resolve) => setImmediate(resolve));

export function errorBody(code, message = code) {
  return { error: { code, message } };
}

/**
 * A client on `server` with fake event sources, numbered keys (`key-1`, `key-2`…), no waiting between retries and a
 * 1 ms reconnect delay; `options` override any of these.
 */
export function makeClient(server, options = {}) {
  let keys = 0;
  return new MvvmrClient({
    fetch: server.fetch,
    createEventSource: (url) => new FakeEventSource(url),
    randomKey: () => `key-${++keys}`,
    sleep: async () => {},
    reconnectDelay: 1,
    ...options,
  });
}
