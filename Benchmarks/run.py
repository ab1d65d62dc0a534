#!/usr/bin/env python3
"""MVVMR's benchmark harness: one command that builds in release mode, starts what it needs on
loopback, measures side by side, prints a table and updates BENCHMARKS.md (its own sections only).

    python3 Benchmarks/run.py              # every section, full rounds, updates BENCHMARKS.md
    python3 Benchmarks/run.py listener     # one section
    python3 Benchmarks/run.py --quick      # seconds, not minutes; checks the floors, writes nothing

Figures are ratios measured in one run against a reference, alternating, because this machine is
shared and noisy. The quick mode fails (exit 1) when a ratio falls below its floor in FLOORS.
"""
import argparse
import contextlib
import datetime
import functools
import os
import platform
import re
import signal
import socket
import subprocess
import sys
import time  # noqa: E401

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCHMARKS_MD = os.path.join(ROOT, "BENCHMARKS.md")
OUT = os.path.join(ROOT, "Benchmarks/.out")

# Throughput sections: (rounds, seconds per measurement). Quick mode keeps each server running across its rounds
# and warms it up once; full mode starts a fresh server process per round and warms it up each time.
FULL_ROUNDS = (3, 5)
QUICK_ROUNDS = (3, 2)

# Floors for the quick mode, set from the measured figures with room for this machine's noise.
FLOORS = {
    "listener": 0.75,  # MicroHTTP / C libmicrohttpd, req/s (target 0.9 in full runs)
    "page-read": 0.6,  # GET /api/pages/greeting / C, req/s (target 0.85)
    "action": 0.35,    # POST counters increment / C GET, req/s (target 0.6)
    "patch": 50.0,     # Python jsonpatch time / Swift diff time (target 50)
}


def log(message):
    print(message, flush=True)


def run(command, **kwargs):
    return subprocess.run(command, cwd=ROOT, check=True, **kwargs)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_port(port, timeout=10.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port}")


class Server:
    """A server process started for a measurement and always stopped afterwards."""

    def __init__(self, command, port):
        self.command = command
        self.port = port
        self.process = None

    def __enter__(self):
        self.process = subprocess.Popen(self.command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for_port(self.port)
        return self

    def __exit__(self, *exc):
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def parse_latency(text):
    value = float(re.match(r"([\d.]+)", text).group(1))
    unit = text[len(str(re.match(r"([\d.]+)", text).group(1))):].strip()
    return value * {"us": 0.001, "ms": 1.0, "s": 1000.0}.get(unit, 1.0)


def wrk(url, seconds, connections=64, threads=2, script=None, script_arguments=()):
    """Runs wrk; returns requests/s, p50 and p99 latency in milliseconds."""
    command = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--latency"]
    if script:
        command += ["-s", script]
    command.append(url)
    if script_arguments:
        command += ["--", *script_arguments]
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
    p50 = parse_latency(re.search(r"^\s+50%\s+(\S+)", output, re.M).group(1))
    p99 = parse_latency(re.search(r"^\s+99%\s+(\S+)", output, re.M).group(1))
    errors = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", output)
    if errors:
        raise RuntimeError(f"{url}: {errors.group(1)} non-2xx responses")
    return rate, p50, p99


def median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


@functools.lru_cache(maxsize=None)
def build_c_server():
    source = os.path.join(ROOT, "Benchmarks/c-server/server.c")
    binary = os.path.join(ROOT, "Benchmarks/c-server/c-server")
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "libmicrohttpd"], capture_output=True, text=True,
                           check=True).stdout.split()
    run(["gcc", "-O2", "-o", binary, source, *flags, "-lpthread"])
    return binary


@functools.lru_cache(maxsize=None)
def build_swift(product):
    """Builds `product` in release mode, once per run of the harness; returns the binary's path."""
    run(["swift", "build", "-c", "release", "--product", product], stdout=subprocess.DEVNULL)
    return os.path.join(ROOT, ".build/release", product)


def results_table(results, ratio_line):
    return [
        "| server | req/s (median) | p50 ms | p99 ms |",
        "|---|---:|---:|---:|",
        *[f"| {name} | {r:,.0f} | {p50:.3f} | {p99:.3f} |" for name, (r, p50, p99) in results.items()],
        "",
        ratio_line,
    ]


def alternate_measured(contenders, rounds, seconds, keep_running):
    """Measures each contender in turn, `rounds` times, and returns the medians (req/s, p50, p99) per name.

    `contenders` are (name, opened): `opened()` is a context manager that starts the contender's server, prepares
    it, and yields `measure(seconds)` (a `wrk` run returning req/s, p50, p99). Every server is warmed up for 1 s
    before it is measured. With `keep_running` (quick mode) each server is started and warmed up once and the
    rounds alternate on the running servers; otherwise each round starts a fresh server process."""
    samples = {name: [] for name, _ in contenders}
    with contextlib.ExitStack() as running:
        measures = {}
        if keep_running:
            for name, opened in contenders:
                measures[name] = running.enter_context(opened())
                measures[name](1)
        for round_index in range(rounds):
            for name, opened in contenders:
                if keep_running:
                    rate, p50, p99 = measures[name](seconds)
                else:
                    with opened() as measure:
                        measure(1)
                        rate, p50, p99 = measure(seconds)
                samples[name].append((rate, p50, p99))
                log(f"  round {round_index + 1}: {name:>16}: {rate:>9.0f} req/s  p50 {p50:.3f} ms  p99 {p99:.3f} ms")
    return {name: tuple(median([s[i] for s in values]) for i in range(3)) for name, values in samples.items()}


def rounds_description(rounds, keep_running):
    if keep_running:
        return f"{rounds} alternating rounds (medians) on servers started once and warmed up for 1 s"
    return f"{rounds} alternating rounds (medians), a fresh server process per round, each after a 1 s warm-up"


def c_server(body_file=None):
    """The C reference as a contender; it answers `GET /api/pages/greeting` (any path) with `body_file`'s bytes,
    or with its built-in body (the same as microhttp-bench's)."""
    binary = build_c_server()

    @contextlib.contextmanager
    def opened():
        port = free_port()
        with Server([binary, str(port), *([body_file] if body_file else [])], port):
            yield lambda seconds: wrk(f"http://127.0.0.1:{port}/api/pages/greeting", seconds)
    return opened


def section_listener(quick):
    """MicroHTTP against a raw C libmicrohttpd server answering the same bytes."""
    swift_server = build_swift("microhttp-bench")
    rounds, seconds = QUICK_ROUNDS if quick else FULL_ROUNDS

    @contextlib.contextmanager
    def microhttp():
        port = free_port()
        with Server([swift_server, str(port)], port):
            yield lambda seconds: wrk(f"http://127.0.0.1:{port}/api/pages/greeting", seconds)

    # Both answer with the same bytes: check it, since each has its own copy of the body.
    bodies = {}
    for name, command in (("C", [build_c_server()]), ("MicroHTTP", [swift_server])):
        port = free_port()
        with Server([*command, str(port)], port):
            bodies[name] = http_request(port, "GET", "/api/pages/greeting")[1]
    if bodies["C"] != bodies["MicroHTTP"]:
        raise RuntimeError(f"the listener's servers answer different bodies: {bodies}")

    results = alternate_measured([("C", c_server()), ("MicroHTTP", microhttp)], rounds, seconds, quick)
    ratio = results["MicroHTTP"][0] / results["C"][0]
    table = results_table(results, f"**Ratio MicroHTTP / C: {ratio:.2f}** (target ≥ 0.90).")
    method = (f"`wrk -t2 -c64 -d{seconds}s --latency` on loopback against `GET /api/pages/greeting`, "
              f"{rounds_description(rounds, quick)}. "
              "Both servers: libmicrohttpd 0.9.75, thread pool of one thread per core, epoll, turbo, "
              f"suspend/resume allowed, the same {len(bodies['C'])}-byte JSON body (checked). "
              "C: `Benchmarks/c-server/server.c`; MicroHTTP: `Benchmarks/Sources/microhttp-bench`.")
    return "listener", "MicroHTTP vs raw libmicrohttpd (C)", method, table, ratio


def demo_command(port, extra_env=None):
    """The release demo server on `port`, logging only errors (a log line per request would be measured too)."""
    binary = build_swift("mvvmr-demo")
    environment = {"PORT": str(port), "HOST": "127.0.0.1", "LOG_LEVEL": "error", "DATA_DIR": os.path.join(ROOT, "Data"),
                   "PUBLIC_DIR": os.path.join(ROOT, "Public")}
    environment.update(extra_env or {})
    return ["env", *[f"{key}={value}" for key, value in environment.items()], binary]


def http_request(port, method, path, body=None, headers=None):
    """One request on a new connection; returns (status, body bytes). `body` is encoded as JSON."""
    import http.client
    import json as json_module
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request(method, path, body=None if body is None else json_module.dumps(body), headers=headers or {})
    response = connection.getresponse()
    payload = response.read()
    connection.close()
    return response.status, payload


def http_json(port, method, path, body=None, headers=None):
    import json as json_module
    status, payload = http_request(port, method, path, body, headers)
    return status, (json_module.loads(payload) if payload else None)


def section_page_read(quick):
    """GET /api/pages/greeting of an existing session against the C server answering the same bytes."""
    rounds, seconds = QUICK_ROUNDS if quick else FULL_ROUNDS
    os.makedirs(OUT, exist_ok=True)

    # The C reference answers with the demo's own response body for this request (the session's snapshot).
    body_file = os.path.join(OUT, "page-read-body.json")
    port = free_port()
    with Server(demo_command(port), port):
        _, created = http_json(port, "POST", "/api/sessions", {"unit": "greeting"})
        status, body = http_request(port, "GET", "/api/pages/greeting", headers={"X-Session-ID": created["session"]})
    if status != 200:
        raise RuntimeError(f"GET /api/pages/greeting answered {status}: {body!r}")
    with open(body_file, "wb") as output:
        output.write(body)

    @contextlib.contextmanager
    def page_read():
        port = free_port()
        with Server(demo_command(port), port):
            _, created = http_json(port, "POST", "/api/sessions", {"unit": "greeting"})
            script = os.path.join(OUT, "session-header.lua")
            with open(script, "w") as output:
                output.write(f'wrk.headers["X-Session-ID"] = "{created["session"]}"\n')
            yield lambda seconds: wrk(f"http://127.0.0.1:{port}/api/pages/greeting", seconds, script=script)

    results = alternate_measured([("C", c_server(body_file)), ("MVVMR page read", page_read)], rounds, seconds, quick)
    ratio = results["MVVMR page read"][0] / results["C"][0]
    table = results_table(results, f"**Ratio page read / C: {ratio:.2f}** (target ≥ 0.85).")
    method = (f"`wrk -t2 -c64 -d{seconds}s --latency`, {rounds_description(rounds, quick)}. MVVMR: the release "
              "`mvvmr-demo` (`LOG_LEVEL=error`), `GET /api/pages/greeting` with `X-Session-ID` of one existing "
              "session (a full snapshot: session lookup, page lock, JSON encoding). C: `Benchmarks/c-server` "
              f"answering with the same {len(body)} bytes: the harness first fetches the demo's response body for "
              "this request and gives it to the C server (`c-server PORT BODY_FILE`). The demo also sends "
              "`Cache-Control: no-store`.")
    return "page-read", "Page read: GET /api/pages/greeting vs raw libmicrohttpd", method, table, ratio


ACTION_SCRIPT = """
local sessions = {}
local counter = 0
init = function(args)
  for line in io.lines(args[1]) do sessions[#sessions + 1] = line end
end
request = function()
  counter = counter + 1
  local session = sessions[(counter % #sessions) + 1]
  local body = '{"action":"increment","value":' .. ((counter % 10) + 1) .. '}'
  return wrk.format("POST", "/api/pages/counters/actions",
    {["X-Session-ID"] = session, ["Content-Type"] = "application/json"}, body)
end
"""


def section_action(quick):
    """POST /api/pages/counters/actions (increment a row) spread over 256 sessions, against the C server's GET."""
    rounds, seconds = QUICK_ROUNDS if quick else FULL_ROUNDS
    os.makedirs(OUT, exist_ok=True)
    script = os.path.join(OUT, "action.lua")
    with open(script, "w") as output:
        output.write(ACTION_SCRIPT)

    @contextlib.contextmanager
    def action():
        port = free_port()
        with Server(demo_command(port), port):
            sessions_file = os.path.join(OUT, "sessions.txt")
            with open(sessions_file, "w") as output:
                for _ in range(256):
                    _, created = http_json(port, "POST", "/api/sessions", {"unit": "counters"})
                    output.write(created["session"] + "\n")
            yield lambda seconds: wrk(f"http://127.0.0.1:{port}", seconds, script=script,
                                      script_arguments=[sessions_file])

    results = alternate_measured([("C (GET)", c_server()), ("MVVMR action", action)], rounds, seconds, quick)
    ratio = results["MVVMR action"][0] / results["C (GET)"][0]
    table = results_table(results, f"**Ratio action round trip / C GET: {ratio:.2f}** (target ≥ 0.6).")
    method = (f"`wrk -t2 -c64 -d{seconds}s --latency -s action.lua`, {rounds_description(rounds, quick)}. Each "
              "request increments one of ten rows of the counters page in one of 256 sessions, round-robin "
              "(parse the body, deliver the action in the session's lock, diff the written row, encode the "
              "patch, push it to the session's event log). Reference: the C server's fixed GET.")
    return "action", "Action round trip: POST counters increment vs raw libmicrohttpd GET", method, table, ratio


def section_patch(quick):
    """JSONPatch.diff against Python's jsonpatch.make_patch on a 10,000-row keyed list."""
    # Python's side takes about 2.5 s per run: the quick mode times one run (the floor is far below the ratio).
    python_runs = 1 if quick else 5
    output = subprocess.run(["bash", os.path.join(ROOT, "Benchmarks/patch-bench.sh")], cwd=ROOT,
                            env=dict(os.environ, PYTHON_RUNS=str(python_runs)), capture_output=True, text=True,
                            check=True).stdout
    log(output.rstrip())
    swift_ms = float(re.search(r"swift_diff_ms\D+([\d.]+)", output).group(1))
    python_ms = float(re.search(r"python_diff_ms\D+([\d.]+)", output).group(1))
    swift_bytes = int(re.search(r"swift_patch_bytes\D+(\d+)", output).group(1))
    python_bytes = int(re.search(r"python_patch_bytes\D+(\d+)", output).group(1))
    ratio = python_ms / swift_ms
    table = [
        "| implementation | diff time (median) | patch bytes |",
        "|---|---:|---:|",
        f"| Swift `JSONPatch.diff` | {swift_ms:.2f} ms | {swift_bytes:,} |",
        f"| Python `jsonpatch.make_patch` | {python_ms:.1f} ms | {python_bytes:,} |",
        "",
        f"**Swift is {ratio:.0f}× faster** (target ≥ 50×); its patch is {python_bytes / max(1, swift_bytes):,.0f}× smaller "
        "(target: no larger). Both patches are applied with Python's jsonpatch and checked to turn A into B.",
    ]
    method = ("`Benchmarks/patch-bench.sh`: a 10,000-row keyed list (`id`, `title`, `count`, `tags`) and a copy with "
              "one field changed, one row inserted and one row moved; both documents parsed from text; median of "
              f"repeated runs on each side ({python_runs} on Python's).")
    return "patch", "Patch generation: 10,000-row keyed list", method, table, ratio


def section_startup(quick):
    """Time from exec to the first successful /healthz, and the stripped release binary's size."""
    binary = subprocess.run([os.path.join(ROOT, "scripts/build-release.sh")], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.strip().splitlines()[-1]
    size = os.path.getsize(os.path.join(ROOT, binary))
    times = []
    for _ in range(3 if quick else 10):
        port = free_port()
        environment = dict(os.environ, PORT=str(port), HOST="127.0.0.1", LOG_LEVEL="error",
                           DATA_DIR=os.path.join(ROOT, "Data"), PUBLIC_DIR=os.path.join(ROOT, "Public"))
        started = time.perf_counter()
        process = subprocess.Popen([os.path.join(ROOT, binary)], cwd=ROOT, env=environment, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        try:
            while True:
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=1) as connection:
                        connection.sendall(b"GET /healthz HTTP/1.0\r\n\r\n")
                        if connection.recv(64).startswith(b"HTTP/1.1 200"):
                            break
                except OSError:
                    time.sleep(0.0005)
                if time.perf_counter() - started > 10:
                    raise RuntimeError("the server did not start")
            times.append((time.perf_counter() - started) * 1000)
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=10)
    start_ms = median(times)
    table = [
        "| figure | measured | target |",
        "|---|---:|---:|",
        f"| exec → first 200 from `/healthz` (median of {len(times)}) | {start_ms:.1f} ms | < 100 ms |",
        f"| stripped release binary (`scripts/build-release.sh`, static Swift stdlib) | {size / 1e6:.1f} MB | < 25 MB |",
    ]
    method = "Absolute figures. The binary is the one the container ships; the start is timed from `Popen` to the first answer."
    return "startup", "Start and size", method, table, None


def section_memory(quick):
    """RSS growth per idle session, sessions created by GET /api/pages/greeting without credentials."""
    port = free_port()
    target = 10_000 if quick else 100_000
    with Server(demo_command(port, {"MAX_SESSIONS": 2_000_000}), port) as server:
        def rss_kib():
            with open(f"/proc/{server.process.pid}/status") as status:
                for line in status:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1])
            return 0

        def live_sessions():
            import urllib.request
            text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics").read().decode()
            return int(float(re.search(r"^mvvmr_sessions_live (\S+)", text, re.M).group(1)))

        # Warm up (allocator arenas, first pages), then measure from there.
        subprocess.run(["wrk", "-t2", "-c32", "-d1s", f"http://127.0.0.1:{port}/api/pages/greeting"], capture_output=True)
        time.sleep(0.5)
        sessions_before, rss_before = live_sessions(), rss_kib()
        script = os.path.join(ROOT, "Benchmarks/.out/count.lua")
        with open(script, "w") as output:
            output.write(f"""
local done = 0
response = function()
  done = done + 1
  if done >= {target // 2} then wrk.thread:stop() end
end
""")
        subprocess.run(["wrk", "-t2", "-c32", "-d120s", "-s", script, f"http://127.0.0.1:{port}/api/pages/greeting"],
                       capture_output=True, check=True)
        time.sleep(1.0)
        sessions_after, rss_after = live_sessions(), rss_kib()
    created = sessions_after - sessions_before
    per_session = (rss_after - rss_before) * 1024 / max(1, created)
    table = [
        "| figure | measured | target |",
        "|---|---:|---:|",
        f"| sessions created | {created:,} | 100,000 |",
        f"| RSS before → after | {rss_before / 1024:,.1f} MiB → {rss_after / 1024:,.1f} MiB | |",
        f"| RSS growth per idle session (greeting page bound) | {per_session:,.0f} bytes | ≤ 4,096 bytes |",
        "",
        "References: Phoenix LiveView starts around 40 KB per live view process; Blazor Server plans about 250 KB per circuit.",
    ]
    method = ("Release `mvvmr-demo`; after a 1 s warm-up, `wrk` sends `GET /api/pages/greeting` without credentials, so "
              "every request creates a session bound to the greeting page; RSS (`VmRSS`) and `mvvmr_sessions_live` are "
              "read before and after.")
    return "memory", "Memory per session", method, table, per_session


def section_fanout(quick):
    """One change of a shared service pushed to many sessions, each with one SSE stream; then idle CPU."""
    import resource
    import selectors

    count = 1_000 if quick else 10_000
    idle_seconds = 5 if quick else 30
    # Each process (this harness, the server) holds one descriptor per stream, plus a few.
    needed = count + 1_000
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < needed:
        raise RuntimeError(f"the file limit's hard maximum ({hard}) is below the {needed} descriptors needed")
    if soft != resource.RLIM_INFINITY and soft < needed:
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))  # inherited by the server
    binary = build_swift("page-bench")
    port = free_port()
    environment = {"PORT": port, "HOST": "127.0.0.1", "LOG_LEVEL": "error", "MAX_CONNECTIONS": count + 1_000,
                   "MAX_SESSIONS": count + 1_000, "DATA_DIR": os.path.join(ROOT, "Data")}
    command = ["env", *[f"{key}={value}" for key, value in environment.items()], binary]
    with Server(command, port) as server:
        import http.client
        import json as json_module
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

        def create(unit):
            connection.request("POST", "/api/sessions", body=json_module.dumps({"unit": unit}))
            return json_module.loads(connection.getresponse().read())["session"]

        sessions = [create("broadcast") for _ in range(count)]
        publisher = create("publisher")
        selector = selectors.DefaultSelector()
        received = {}
        for session in sessions:
            stream = socket.create_connection(("127.0.0.1", port))
            stream.sendall(f"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Session-ID: {session}\r\n\r\n".encode())
            stream.setblocking(False)
            selector.register(stream, selectors.EVENT_READ)
            received[stream] = b""

        def read_until(marker, timeout):
            waiting = {stream for stream, data in received.items() if marker not in data}
            deadline = time.perf_counter() + timeout
            while waiting and time.perf_counter() < deadline:
                for key, _ in selector.select(timeout=0.5):
                    try:
                        chunk = key.fileobj.recv(65536)
                    except BlockingIOError:
                        continue
                    received[key.fileobj] += chunk
                    if marker in received[key.fileobj]:
                        waiting.discard(key.fileobj)
            return len(waiting)

        missing = read_until(b"retry: 2000", 120)
        if missing:
            raise RuntimeError(f"{missing} streams did not open")
        started = time.perf_counter()
        connection.request("POST", "/api/pages/publisher/actions", body=json_module.dumps({"action": "publish", "value": "go"}),
                           headers={"X-Session-ID": publisher})
        connection.getresponse().read()
        missing = read_until(b'"value":"go"', 60)
        delivered_ms = (time.perf_counter() - started) * 1000
        if missing:
            raise RuntimeError(f"{missing} streams did not receive the change")

        def cpu_seconds():
            with open(f"/proc/{server.process.pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

        cpu_before = cpu_seconds()
        time.sleep(idle_seconds)
        idle_percent = (cpu_seconds() - cpu_before) / idle_seconds * 100
        for stream in received:
            stream.close()
    table = [
        "| figure | measured | target |",
        "|---|---:|---:|",
        f"| sessions, one SSE stream each | {count:,} | 10,000 |",
        f"| one change of the shared service → every stream has it | {delivered_ms:,.0f} ms | ≤ 1,000 ms |",
        f"| server CPU while the streams idle ({idle_seconds} s, heartbeat every 15 s) | {idle_percent:.2f} % of one core | < 2 % |",
    ]
    method = ("`Benchmarks/Sources/page-bench`: the demo's units plus `broadcast`, whose ViewModel waits (`scheduler.perform`) "
              "for the next message of a shared `Broadcaster` service, and `publisher`, whose `publish` action wakes every "
              "waiter. The harness opens the sessions and their streams over loopback (file limit raised), posts one "
              "`publish`, and times until every stream has read the resulting `patch` event; then it reads the server's "
              "CPU time from /proc while the streams idle.")
    return "fanout", "Push fan-out", method, table, None


SECTIONS = {
    "listener": section_listener,
    "page-read": section_page_read,
    "action": section_action,
    "patch": section_patch,
    "memory": section_memory,
    "startup": section_startup,
    "fanout": section_fanout,
}


def machine_description():
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    memory = ""
    try:
        with open("/proc/meminfo") as meminfo:
            kib = int(meminfo.readline().split()[1])
            memory = f", {kib / 1024 / 1024:.0f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return f"{os.cpu_count()} cores, {model}{memory}, {platform.system()} {platform.release()}"


def update_markdown(key, title, method, table):
    begin, end = f"<!-- section:{key}:begin -->", f"<!-- section:{key}:end -->"
    today = datetime.date.today().isoformat()
    body = "\n".join([
        begin,
        f"## {title}",
        "",
        f"Measured {today} on {machine_description()} with `python3 Benchmarks/run.py {key}`.",
        "",
        method,
        "",
        *table,
        end,
    ])
    text = open(BENCHMARKS_MD).read() if os.path.exists(BENCHMARKS_MD) else "# Benchmarks\n"
    if begin in text and end in text:
        text = text[:text.index(begin)] + body + text[text.index(end) + len(end):]
    else:
        text = text.rstrip("\n") + "\n\n" + body + "\n"
    with open(BENCHMARKS_MD, "w") as output:
        output.write(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sections", nargs="*", help=f"sections to run (default: all): {', '.join(SECTIONS)}")
    parser.add_argument("--quick", action="store_true", help="short runs; check floors; do not write BENCHMARKS.md")
    arguments = parser.parse_args()
    unknown = [name for name in arguments.sections if name not in SECTIONS]
    if unknown:
        parser.error(f"unknown sections {unknown}; choose from {', '.join(SECTIONS)}")
    subprocess.run([os.path.join(ROOT, "scripts/install-deps.sh"), "bench"], check=True)
    failures = []
    for key in arguments.sections or list(SECTIONS.keys()):
        log(f"== {key}")
        key, title, method, table, ratio = SECTIONS[key](arguments.quick)
        log("\n".join(table))
        if arguments.quick:
            floor = FLOORS.get(key)
            if floor is not None and ratio is not None and ratio < floor:
                failures.append(f"{key}: ratio {ratio:.2f} below floor {floor:.2f}")
        else:
            update_markdown(key, title, method, table)
    if failures:
        log("FAILED: " + "; ".join(failures))
        sys.exit(1)
    log("benchmarks done" + (" (quick mode, floors held)" if arguments.quick else f"; {BENCHMARKS_MD} updated"))


if __name__ == "__main__":
    main()
