"""The cluster check (scripts/check-cluster.sh): three nats-servers (one JetStream cluster, the session stream
with three replicas), three mvvmr-demo nodes on it and nginx in front, all on loopback ports and from the
project's own deploy/ files. It drives sessions through nginx — actions with idempotency keys, event-stream
listeners that reconnect with Last-Event-ID as browsers do — kills one app node with SIGKILL mid-run and later one
NATS server, and then checks and prints:

- every action that was answered 200 was applied exactly once (each row's count is the number of increments
  acknowledged for it);
- every listener's snapshot plus the patches it received (applied with Python's jsonpatch) equals the final view;
- how many requests failed around each kill, and for how long.

It exits non-zero when a check fails. Every process it starts is stopped at the end."""
import argparse
import http.client
import json
import os
import random
import re
import secrets
import signal
import socket
import sys
import threading
import time

import jsonpatch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Tests", "system"))

from clustering import NatsCluster  # noqa: E402
from conftest import Server  # noqa: E402
from proxying import Nginx  # noqa: E402

UNAVAILABLE = {502, 503, 504}
# The longest an action may take around a kill, retries included (README, "Running several nodes"): NATS needs up to
# its 2 s request timeout and a reconnect to notice a dead server, and a node's stale copy costs one refused append.
PAUSE_BOUND_SECONDS = 5.0


class Proxy:
    """HTTP through nginx, one connection per call (a client that retries opens a new one)."""

    def __init__(self, port):
        self.port = port

    def call(self, method, path, session=None, body=None, headers=None, timeout=10):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            all_headers = dict(headers or {})
            if session:
                all_headers["X-Session-ID"] = session
            payload = None if body is None else json.dumps(body)
            if payload is not None:
                all_headers["Content-Type"] = "application/json"
            connection.request(method, path, body=payload, headers=all_headers)
            response = connection.getresponse()
            data = response.read()
            return response.status, (json.loads(data) if data else None)
        finally:
            connection.close()


class Failures:
    """Failed attempts (a network error or an error status), with when they happened."""

    def __init__(self):
        self.lock = threading.Lock()
        self.items = []

    def add(self, what):
        with self.lock:
            self.items.append((time.monotonic(), what))

    def around(self, start, end):
        with self.lock:
            return [item for item in self.items if start <= item[0] < end]


def with_retries(proxy, failures, method, path, session=None, body=None, headers=None, deadline=30):
    """Calls until an answer that is not 'unavailable', as a client does (same body, same key)."""
    give_up = time.monotonic() + deadline
    delay = 0.05
    while True:
        try:
            status, answer = proxy.call(method, path, session=session, body=body, headers=headers)
            if status not in UNAVAILABLE:
                return status, answer
            failures.add(f"{method} {path} {status}")
        except OSError as error:
            failures.add(f"{method} {path} {type(error).__name__}")
        if time.monotonic() > give_up:
            return None, None
        time.sleep(delay)
        delay = min(delay * 2, 0.5)


class Listener(threading.Thread):
    """An event-stream client of one session through nginx: reconnects after a broken stream with the last
    event id it saw, as a browser's EventSource does, and keeps every event."""

    def __init__(self, port, session, last_event_id):
        super().__init__(daemon=True)
        self.port, self.session, self.last_id = port, session, last_event_id
        self.events = []
        self.reconnects = 0
        self.stopping = threading.Event()

    def run(self):
        while not self.stopping.is_set():
            try:
                self.follow()
            except OSError:
                pass
            if self.stopping.is_set():
                return
            self.reconnects += 1
            time.sleep(0.2)

    def follow(self):
        with socket.create_connection(("127.0.0.1", self.port), timeout=2) as connection:
            request = (f"GET /api/events?session={self.session} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                       f"Accept: text/event-stream\r\nLast-Event-ID: {self.last_id}\r\n\r\n")
            connection.sendall(request.encode())
            buffer = b""
            while b"\r\n\r\n" not in buffer:
                chunk = connection.recv(65536)
                if not chunk:
                    return
                buffer += chunk
            head, buffer = buffer.split(b"\r\n\r\n", 1)
            if not head.startswith(b"HTTP/1.1 200"):
                time.sleep(0.3)
                return
            chunked = b"transfer-encoding: chunked" in head.lower()
            raw = b""
            while not self.stopping.is_set():
                if chunked:
                    while True:
                        line_end = buffer.find(b"\r\n")
                        if line_end < 0:
                            break
                        size = int(buffer[:line_end].split(b";")[0] or b"0", 16)
                        if len(buffer) < line_end + 2 + size + 2:
                            break
                        raw += buffer[line_end + 2:line_end + 2 + size]
                        buffer = buffer[line_end + 2 + size + 2:]
                        if size == 0:
                            return
                else:
                    raw, buffer = raw + buffer, b""
                while b"\n\n" in raw:
                    block, raw = raw.split(b"\n\n", 1)
                    self.take(block.decode())
                try:
                    chunk = connection.recv(65536)
                except socket.timeout:
                    continue
                if not chunk:
                    return
                buffer += chunk

    def take(self, block):
        event = {"id": None, "event": "message", "data": []}
        for line in block.split("\n"):
            if not line or line.startswith(":") or line.startswith("retry:"):
                continue
            field, _, value = line.partition(": ")
            if field == "data":
                event["data"].append(value)
            else:
                event[field] = value
        if not event["data"]:
            return
        event["data"] = json.loads("\n".join(event["data"]))
        if event["id"] is not None:
            event["id"] = int(event["id"])
            if event["id"] <= self.last_id:
                return  # already seen (a replay after a reconnect starts after Last-Event-ID; this guards it)
            self.last_id = event["id"]
        self.events.append(event)


def view_from_events(base, events, unit="counters"):
    """The page's view as a client builds it: the snapshot it started from, then every patch and snapshot."""
    view = base
    for event in events:
        data = event["data"]
        if event["event"] == "patch" and data.get("unit") == unit:
            view = jsonpatch.apply_patch(view, data["patch"])
        elif event["event"] == "snapshot" and data.get("unit") == unit:
            view = data["view"]
    return view


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--listeners", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=9, help="how long actions are sent")
    parser.add_argument("--workers", type=int, default=8)
    args = parser.parse_args()

    started = time.monotonic()
    cluster = NatsCluster()
    nodes, proxy_process = [], None
    problems = []
    try:
        cluster.wait_formed()
        settings = {"SESSION_STORE": cluster.url, "NATS_REPLICAS": 3, "TRUST_FORWARDED_HEADERS": "true",
                    "MAX_CONNECTIONS_PER_IP": 4096, "MAX_STREAMS_PER_IP": 4096,
                    "NEW_SESSIONS_PER_IP_PER_MINUTE": 0, "LOG_LEVEL": "error"}
        nodes = [Server(settings) for _ in range(3)]
        proxy_process = Nginx([node.port for node in nodes])
        proxy = Proxy(proxy_process.port)
        failures = Failures()
        print(f"cluster up in {time.monotonic() - started:.1f} s: NATS {cluster.url}, nodes "
              f"{[node.port for node in nodes]}, nginx {proxy_process.port}")

        sessions = []
        for _ in range(args.sessions):
            status, created = with_retries(proxy, failures, "POST", "/api/sessions", body={"unit": "counters"})
            if status != 201:
                problems.append(f"a session could not be created: {status} {created}")
                continue
            sessions.append(created)
        listeners = []
        for created in sessions[:args.listeners]:
            listener = Listener(proxy_process.port, created["session"], created["page"]["seq"])
            listener.base = created["page"]["view"]
            listener.start()
            listeners.append(listener)
        time.sleep(0.5)

        acknowledged = {created["session"]: {} for created in sessions}
        lock = threading.Lock()
        errors = []
        latencies = []  # (when sent, seconds to its answer, retries included)

        def work(mine):
            rows = len(mine[0]["page"]["view"]["rows"]) if mine else 0
            while time.monotonic() < run_started + args.seconds:
                for created in mine:
                    row = random.randrange(rows)
                    key = secrets.token_hex(8)
                    body = {"action": "increment", "value": created["page"]["view"]["rows"][row]["id"]}
                    sent = time.monotonic()
                    status, answer = with_retries(proxy, failures, "POST", "/api/pages/counters/actions",
                                                  session=created["session"], body=body,
                                                  headers={"Idempotency-Key": key})
                    with lock:
                        latencies.append((sent, time.monotonic() - sent))
                    if status == 200:
                        with lock:
                            counts = acknowledged[created["session"]]
                            counts[row] = counts.get(row, 0) + 1
                    else:
                        with lock:
                            errors.append((created["session"], status, answer))
                    time.sleep(0.01)

        workers = [threading.Thread(target=work, args=(sessions[index::args.workers],), daemon=True)
                   for index in range(args.workers)]
        run_started = time.monotonic()
        print(f"{len(sessions)} sessions made, {len(listeners)} listening, in {run_started - started:.1f} s")
        for worker in workers:
            worker.start()

        # The kills: an app node (SIGKILL), then a NATS server (SIGKILL).
        time.sleep(args.seconds * 0.3)
        node_killed_at = time.monotonic()
        nodes[0].stop(signal.SIGKILL)
        time.sleep(args.seconds * 0.3)
        nats_killed_at = time.monotonic()
        cluster.kill(2)
        for worker in workers:
            worker.join(timeout=300)
        run_ended = time.monotonic()
        time.sleep(1.5)  # the last events reach the listeners
        for listener in listeners:
            listener.stopping.set()
        checking_started = time.monotonic()

        # Exactly once: each row holds the increments acknowledged for it, no more, no less.
        wrong = 0
        for created in sessions:
            status, page = with_retries(proxy, failures, "GET", "/api/pages/counters", session=created["session"])
            if status != 200:
                problems.append(f"session {created['session'][:6]}…: final read {status} {page}")
                continue
            counts = acknowledged[created["session"]]
            for index, row in enumerate(page["view"]["rows"]):
                if row["count"] != counts.get(index, 0):
                    wrong += 1
                    problems.append(f"session {created['session'][:6]}… row {index + 1}: count {row['count']}, "
                                    f"{counts.get(index, 0)} acknowledged")
            created["final"] = page["view"]
        # Every listener's snapshot plus patches is the final view.
        diverged = 0
        for listener, created in zip(listeners, sessions):
            if "final" not in created:
                continue
            built = view_from_events(listener.base, listener.events)
            if built != created["final"]:
                diverged += 1
                problems.append(f"listener of {created['session'][:6]}…: its view is not the final one "
                                f"({len(listener.events)} events, {listener.reconnects} reconnects)")
        total = sum(sum(counts.values()) for counts in acknowledged.values())
        print(f"final views read and compared in {time.monotonic() - checking_started:.1f} s")
        print(f"{len(sessions)} sessions, {total} actions acknowledged, {len(errors)} answered with an error, "
              f"in {run_ended - run_started:.1f} s")
        print(f"exactly once: {'yes' if wrong == 0 else f'NO, {wrong} rows wrong'}")
        print(f"listeners: {len(listeners)}, their views equal the final views: "
              f"{'yes' if diverged == 0 else f'NO, {diverged} differ'}; reconnects: "
              f"{sum(listener.reconnects for listener in listeners)}")
        before_kills = sorted(latency for when, latency in latencies if when < node_killed_at)
        typical = before_kills[len(before_kills) // 2] if before_kills else 0.0
        print(f"action round trip before the kills: median {typical * 1000:.1f} ms")
        for name, at in (("app node killed (SIGKILL)", node_killed_at), ("NATS server killed (SIGKILL)", nats_killed_at)):
            failed = failures.around(at - 0.5, at + 4)
            span = (failed[-1][0] - failed[0][0]) if failed else 0.0
            around = [latency for when, latency in latencies if at - 0.5 <= when < at + 4]
            pause = max(around) if around else 0.0
            print(f"{name} at +{at - run_started:.1f} s: {len(failed)} failed attempts over {span:.2f} s "
                  f"(each retried with its key); the longest action round trip around it {pause * 1000:.0f} ms")
            if pause > PAUSE_BOUND_SECONDS:
                problems.append(f"{name}: an action took {pause:.1f} s, over the documented bound of "
                                f"{PAUSE_BOUND_SECONDS:.0f} s")
        for session, status, answer in errors[:5]:
            problems.append(f"an action of {session[:6]}… was answered {status}: {answer}")
    finally:
        if proxy_process:
            proxy_process.stop()
        for node in nodes:
            node.stop()
        cluster.stop()
    if problems:
        print(f"{len(problems)} problems:")
        for problem in problems[:30]:
            print("  " + problem)
        sys.exit(1)
    print(f"cluster check passed in {time.monotonic() - started:.1f} s")


if __name__ == "__main__":
    main()
