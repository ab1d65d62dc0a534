"""The cluster check (scripts/check-cluster.sh): three nats-servers (one JetStream cluster, the session stream
with three replicas), three mvvmr-demo nodes on it and nginx in front, all on loopback ports and from the
project's own deploy/ files. It drives sessions through nginx — actions with idempotency keys, event-stream
listeners that reconnect with Last-Event-ID as browsers do — kills one app node with SIGKILL mid-run and later the
NATS server that leads the session stream, and then checks and prints:

- every action that was answered 200 was applied exactly once (each row's count is the number of increments
  acknowledged for it);
- every listener's snapshot plus the patches it received (applied with Python's jsonpatch) equals the final view;
- every board message reached every open board exactly once (boards on every node; posts before the kills,
  while the dead node's boards are not yet restored elsewhere — those catch up on them when they are — and after);
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
from conftest import Server, parse_event  # noqa: E402
from proxying import Nginx  # noqa: E402

UNAVAILABLE = {502, 503, 504}
# The longest an action may take around each kill, retries included (README, "Running several nodes"). An app node's
# death costs a reconnect through nginx and a restore from JetStream. The NATS server killed is the session stream's
# leader (the worst one to lose): its followers wait out JetStream's election timeout (4 to 9 s of silence on
# nats-server 2.9) before electing another, and meanwhile each JetStream request waits its 3 s before the input is
# refused (503) and the client retries. One that leads nothing (--kill-nats follower) costs a reconnect and at most
# one such wait.
NODE_PAUSE_BOUND_SECONDS = 5.0
NATS_PAUSE_BOUND_SECONDS = {"stream-leader": 20.0, "follower": 15.0}
# nats-server's election now and then takes longer than its usual 4 to 9 s (a split vote starts it again). The
# check measures it (ElectionWatch) and then bounds an action by the election plus this: the JetStream request in
# flight when the leader appears (3 s), its retry, and a restore.
NATS_BOUND_AFTER_ELECTION_SECONDS = 11.0


class ElectionWatch(threading.Thread):
    """Polls the surviving NATS servers until one reports a leader for `stream` other than the killed server."""

    def __init__(self, cluster, stream, victim, timeout=60):
        super().__init__(daemon=True)
        self.cluster, self.stream, self.victim, self.timeout = cluster, stream, victim, timeout
        self.elected_at = None

    def run(self):
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            leader = self.cluster.stream_leader(self.stream)
            if leader is not None and leader != self.victim:
                self.elected_at = time.monotonic()
                return
            time.sleep(0.2)


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
            if "json" not in (response.getheader("Content-Type") or ""):
                return response.status, data.decode(errors="replace")[:200]  # nginx's own pages (502) are HTML
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
        event = parse_event(block)
        if not event:
            return
        if event["id"] is not None:
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
    parser.add_argument("--boards", type=int, default=30, help="sessions with the board open")
    parser.add_argument("--posts", type=int, default=10, help="board posts before the kills, and again after")
    parser.add_argument("--kill-nats", choices=("follower", "stream-leader"), default="stream-leader",
                        help="which NATS server is killed: one that leads nothing, or the session stream's leader")
    parser.add_argument("--show-logs", action="store_true", help="print the nodes' log lines at the end")
    parser.add_argument("--log-level", default="debug",
                        help="the nodes' LOG_LEVEL (debug, the default, keeps restores and takeovers: on a failure the "
                             "log lines of the sessions it names are printed)")
    args = parser.parse_args()

    started = time.monotonic()
    cluster = NatsCluster()
    nodes, proxy_process = [], None
    problems = []
    try:
        cluster.wait_formed()
        settings = {"SESSION_STORE": cluster.url, "NATS_REPLICAS": 3, "TRUST_FORWARDED_HEADERS": "true",
                    "MAX_CONNECTIONS_PER_IP": 4096, "MAX_STREAMS_PER_IP": 4096,
                    "NEW_SESSIONS_PER_IP_PER_MINUTE": 0, "LOG_LEVEL": args.log_level}
        for _ in range(3):
            nodes.append(Server(settings))  # one by one: a node that fails to start leaves the others to be stopped
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
        boards = []
        for _ in range(args.boards):
            status, created = with_retries(proxy, failures, "POST", "/api/sessions", body={"unit": "board"})
            if status != 201:
                problems.append(f"a board session could not be created: {status} {created}")
                continue
            boards.append(created["session"])
        posted = []

        def post_round(label):
            for index in range(args.posts):
                session = random.choice(boards)
                text = f"{label} post {index + 1} from {session[:6]}"
                for action, value in (("draft", text), ("post", None)):
                    body = {"action": action} if value is None else {"action": action, "value": value}
                    status, answer = with_retries(proxy, failures, "POST", "/api/pages/board/actions", session=session,
                                                  body=body, headers={"Idempotency-Key": secrets.token_hex(8)})
                    if status != 200:
                        problems.append(f"board {action} by {session[:6]}… answered {status}: {answer}")
                posted.append(text)

        time.sleep(0.5)  # every node has subscribed to the board topic
        post_round("before")
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
        # Posts while the dead node's boards are live nowhere: each catches up on them where it is restored.
        phase = time.monotonic()
        post_round("while a node is down")
        print(f"posts while a node is down in {time.monotonic() - phase:.1f} s")
        time.sleep(max(0.0, args.seconds * 0.3 - (time.monotonic() - phase)))
        # The session stream's leader by default; with --kill-nats follower, one that leads neither the JetStream
        # meta cluster nor the session stream nor the activity bucket.
        leaders = {cluster.stream_leader("MVVMR_SESSIONS"), cluster.stream_leader("KV_MVVMR_ACTIVITY"),
                   cluster.meta_leader()}
        if args.kill_nats == "stream-leader":
            victim = cluster.stream_leader("MVVMR_SESSIONS")
            victim = 2 if victim is None else victim
        else:
            victim = next((index for index in range(3) if index not in leaders), 2)
        print(f"killing {cluster.names[victim]}; leaders: sessions {cluster.stream_leader('MVVMR_SESSIONS')}, "
              f"activity {cluster.stream_leader('KV_MVVMR_ACTIVITY')}, meta {cluster.meta_leader()}")
        nats_killed_at = time.monotonic()
        cluster.kill(victim)
        election = ElectionWatch(cluster, "MVVMR_SESSIONS", victim)
        election.start()
        for worker in workers:
            worker.join(timeout=300)
        run_ended = time.monotonic()
        time.sleep(1.5)  # the last events reach the listeners
        for listener in listeners:
            listener.stopping.set()
        checking_started = time.monotonic()
        # Every board live again (a request restores one whose node died), then a second round of posts.
        phase = time.monotonic()
        for session in boards:
            with_retries(proxy, failures, "GET", "/api/pages/board", session=session)
        print(f"boards touched again in {time.monotonic() - phase:.1f} s")
        time.sleep(1)
        phase = time.monotonic()
        post_round("after")
        print(f"second posts in {time.monotonic() - phase:.1f} s")
        time.sleep(1.5)
        board_problems = 0
        for session in boards:
            status, page = with_retries(proxy, failures, "GET", "/api/pages/board", session=session)
            texts = [message["text"] for message in page["view"]["messages"]] if status == 200 else None
            if texts is None or sorted(texts) != sorted(posted):
                board_problems += 1
                missing = [text for text in posted if texts is None or text not in texts]
                twice = sorted({text for text in (texts or []) if texts.count(text) > 1})
                problems.append(f"board {session[:6]}…: {len(missing)} posts missing {missing[:3]}, {len(twice)} twice "
                                f"({status})")

        # Exactly once: each row holds the increments acknowledged for it, no more, no less.
        wrong = 0
        reads = []
        for created in sessions:
            read_started = time.monotonic()
            status, page = with_retries(proxy, failures, "GET", "/api/pages/counters", session=created["session"])
            reads.append((read_started - nats_killed_at, time.monotonic() - read_started, status))
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
                differing = [f"row {index + 1}: {row.get('count')} against {final.get('count')}"
                             for index, (row, final) in enumerate(zip(built.get("rows", []), created["final"]["rows"]))
                             if row != final]
                problems.append(f"listener of {created['session'][:6]}…: its view is not the final one "
                                f"({len(listener.events)} events, {listener.reconnects} reconnects; "
                                f"{', '.join(differing[:3]) or 'not a counters view'})")
        total = sum(sum(counts.values()) for counts in acknowledged.values())
        print(f"final views read and compared in {time.monotonic() - checking_started:.1f} s")
        slow_reads = sorted(reads, key=lambda item: -item[1])[:5]
        print("slowest final reads: " + ", ".join(f"{took * 1000:.0f} ms at NATS kill +{at:.1f} s ({status})"
                                                  for at, took, status in slow_reads))
        print(f"{len(sessions)} sessions, {total} actions acknowledged, {len(errors)} answered with an error, "
              f"in {run_ended - run_started:.1f} s")
        print(f"exactly once: {'yes' if wrong == 0 else f'NO, {wrong} rows wrong'}")
        print(f"boards: {len(boards)} open over the nodes, {len(posted)} posts; every board has every post once: "
              f"{'yes' if board_problems == 0 else f'NO, {board_problems} boards wrong'}")
        print(f"listeners: {len(listeners)}, their views equal the final views: "
              f"{'yes' if diverged == 0 else f'NO, {diverged} differ'}; reconnects: "
              f"{sum(listener.reconnects for listener in listeners)}")
        slowest = sorted(latencies, key=lambda item: -item[1])[:3]
        print("slowest actions: " + ", ".join(f"{latency * 1000:.0f} ms sent at +{when - run_started:.1f} s"
                                              for when, latency in slowest))
        before_kills = sorted(latency for when, latency in latencies if when < node_killed_at)
        typical = before_kills[len(before_kills) // 2] if before_kills else 0.0
        print(f"action round trip before the kills: median {typical * 1000:.1f} ms")
        election.join(timeout=5)
        election_seconds = None if election.elected_at is None else election.elected_at - nats_killed_at
        # A slow election is nats-server's, not ours: past the documented bound, an action may take what the
        # election took plus what the bound leaves for the rest (one JetStream wait, the retry and a restore).
        nats_bound = NATS_PAUSE_BOUND_SECONDS[args.kill_nats]
        if election_seconds is not None and args.kill_nats == "stream-leader":
            nats_bound = max(nats_bound, election_seconds + NATS_BOUND_AFTER_ELECTION_SECONDS)
        print("the session stream's new leader elected "
              + (f"{election_seconds:.1f} s after the kill" if election_seconds is not None else
                 "(not seen: no surviving server reported one)"))
        windows = (
            ("app node killed (SIGKILL)", node_killed_at - 0.5, nats_killed_at - 0.5, NODE_PAUSE_BOUND_SECONDS),
            (f"NATS server {cluster.names[victim]} "
             f"({'the session stream' + chr(39) + 's leader' if args.kill_nats == 'stream-leader' else 'no leader'}) "
             f"killed (SIGKILL)", nats_killed_at - 0.5, run_ended, nats_bound),
        )
        for name, start, end, bound in windows:
            failed = failures.around(start, end)
            span = (failed[-1][0] - failed[0][0]) if failed else 0.0
            around = [latency for when, latency in latencies if start <= when < end]
            pause = max(around) if around else 0.0
            print(f"{name} at +{start + 0.5 - run_started:.1f} s: {len(failed)} failed attempts over {span:.2f} s "
                  f"(each retried with its key); the longest action round trip after it {pause * 1000:.0f} ms "
                  f"(bound {bound:.0f} s)")
            if pause > bound:
                problems.append(f"{name}: an action took {pause:.1f} s, over the documented bound of {bound:.0f} s")
        after_kill = failures.around(nats_killed_at, float("inf"))
        if after_kill:
            seconds = {}
            for when, what in after_kill:
                seconds.setdefault(int(when - nats_killed_at), []).append(what)
            print("failed attempts after the NATS kill, by second: " + ", ".join(
                f"+{second} s: {len(items)}" for second, items in sorted(seconds.items())))
        for session, status, answer in errors[:5]:
            problems.append(f"an action of {session[:6]}… was answered {status}: {answer}")
        # What the live nodes counted: no code changed during the run, so no replay may have diverged.
        counted = {}
        for node in nodes[1:]:
            text = node.request("GET", "/metrics").body.decode()
            for name in ("divergences", "page_resets", "restores", "takeovers", "claims_refused", "setaside_reruns"):
                found = re.search(rf"^mvvmr_session_{name}_total (\S+)", text, re.M)
                counted[name] = counted.get(name, 0) + (int(float(found.group(1))) if found else 0)
        print("the live nodes counted: " + ", ".join(f"{name} {count}" for name, count in counted.items()))
        if counted["divergences"] or counted["page_resets"]:
            problems.append(f"{counted['divergences']} replays diverged and {counted['page_resets']} pages were reset, "
                            f"with no code changed")
    finally:
        if args.show_logs:
            for index, node in enumerate(nodes):
                for line in node.output:
                    print(f"node {index}: {line.rstrip()[:400]}")
        elif problems:
            # What the nodes logged of each session a problem names (restores, takeovers, refusals, requests).
            named = sorted({found for problem in problems for found in re.findall(r"([A-Za-z0-9_-]{6})…", problem)})
            for prefix in named[:5]:
                lines = [(index, line) for index, node in enumerate(nodes) for line in node.output
                         if f'"{prefix}…"' in line]
                lines.sort(key=lambda item: item[1])
                print(f"log lines of session {prefix}… ({len(lines)}):")
                for index, line in lines[:80]:
                    print(f"  node {index}: {line.rstrip()[:1000]}")
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
