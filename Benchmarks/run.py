#!/usr/bin/env python3
"""MVVMR's benchmark harness: one command that builds in release mode, starts what it needs on
loopback, measures side by side, prints a table and updates BENCHMARKS.md (its own sections only).

    python3 Benchmarks/run.py              # every section, full rounds, updates BENCHMARKS.md
    python3 Benchmarks/run.py listener     # one section
    python3 Benchmarks/run.py --quick      # seconds, not minutes; checks floors and budgets, writes nothing
    python3 Benchmarks/run.py callgrind --record-budgets   # rewrites Benchmarks/budgets.json

Figures are ratios measured in one run against a reference, alternating, because this machine is
shared and noisy, and instructions per request counted by callgrind, which that noise does not move.
The quick mode (what CI runs) fails (exit 1) when a ratio falls below its floor in FLOORS, or when a
request's instructions exceed its budget in Benchmarks/budgets.json by more than its tolerance.
"""
import argparse
import atexit
import contextlib
import datetime
import functools
import glob
import json
import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import threading
import tempfile
import sys
import time  # noqa: E401

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCHMARKS_MD = os.path.join(ROOT, "BENCHMARKS.md")
OUT = os.path.join(ROOT, "Benchmarks/.out")

# Throughput sections: (rounds, seconds per measurement). Quick mode keeps each server running across its rounds
# and warms it up once; full mode starts a fresh server process per round and warms it up each time. Full mode takes
# the median of five rounds (three until 2026-12-05): on this shared machine the C server alone moved between 120,000
# and 158,000 req/s from one 2 s round to the next, and a median of three still moved a ratio by ±0.05 between runs.
FULL_ROUNDS = (5, 5)
QUICK_ROUNDS = (3, 2)

# Floors for the quick mode (3 alternating rounds of 2 s, medians). Set 2026-11-30 from ten quick runs on this shared
# 2-core machine, most of them while other builds ran (load average 2-6; the C server alone measured 18,000-88,000
# req/s from one 2 s round to the next). Each floor is about 80 % of the lowest ratio seen, in those runs or in the
# full runs of BENCHMARKS.md, so that only a real regression fails CI, not the machine's noise; the instruction
# budgets (Benchmarks/budgets.json) are the fine guard. Raise the floors when the code gets faster.
# Raised 2026-11-30 after the page-read and action work (quick in CI: page read 0.70, action 0.28; full: 0.67, 0.28),
# again about 70 % of what the quick mode measures, since CI machines are as noisy as this one. Raised again
# 2026-12-04, when the action's reference became the C server answering the same POSTs (issue 15's definition) and the
# C server began sending the demo's headers: quick page read 0.73-0.81 (full 0.77-0.94), action 0.41-0.52 (full
# 0.45-0.54; 0.41 in a CI run).
FLOORS = {
    # MicroHTTP / C libmicrohttpd, req/s (quick 0.67-1.04, full 0.81-0.92; target 0.9). Raised 2026-12-06 when the
    # epoll engine became the default (quick 0.90 in its first run, 9,331 instructions a request against C's 10,990):
    # 0.60 is about two thirds of it.
    "listener": 0.60,
    # GET /api/pages/greeting / C, req/s (quick 0.73-0.81, full 0.77-0.94; 2026-12-04: quick 0.64-0.98, full
    # 0.77-0.98; target 0.85). Kept: 0.55 is about 85 % of the lowest quick figure of 2026-12-04.
    # Raised 2026-12-05 (issue 15's route cache and request line: quick 0.87-0.97 in CI, full 0.85-0.88; target 0.9):
    # 0.60 is about 70 % of the lowest quick figure.
    # Raised 2026-12-06 (an answer equal to a kept one sent again, the body's room on the stack: quick 0.92, full 1.00
    # and 0.83 in one run): 0.65 is about 70 % of the quick figure.
    # Raised 2026-12-06 again, the epoll engine the default (quick 1.13, 14,467 instructions against 20,104): 0.75.
    "page-read": 0.75,
    # POST counters increment / C answering the same POSTs, req/s (quick 0.41-0.52; 2026-12-04, after the stored route's
    # answer object went: quick 0.50-0.60, full 0.51). Raised from 0.30: 0.35 is 70 % of the lowest quick figure.
    # Raised again 2026-12-05 (quick 0.56-0.66 since the fourth round, full 0.58-0.64): 0.40 is 70 % of 0.56.
    # Raised 2026-12-06, the epoll engine the default (quick 0.70; 0.67-0.70 in alternating runs against the C
    # server and libmicrohttpd): 0.47 is 70 % of 0.67.
    "action": 0.47,
    "patch": 50.0,     # Python jsonpatch time / Swift diff time (measured 237-581; target 50)
    # SQLite store (process durability) / memory store, the action load, req/s. Raised 2026-12-01 (afternoon) with the
    # shared-log store, from quick-length runs (3 alternating rounds of 2 s) on this machine: 0.41-0.60 (0.61 in a full
    # run), so 0.28 is about 70 % of the lowest. The store before it measured 0.25-0.44 and would fail now and then:
    # it fails a store that costs about half as much again as now (the per-session layout, a checkpoint in the commit,
    # a lock held across the commit), not small changes: those are the action-sqlite instruction budget's. It cannot
    # catch answers that block their worker thread until their own commit at this durability: with a commit as cheap
    # as the operating system's cache makes it, that measured 0.17-0.27 with the old store, inside this machine's
    # noise; MACHINE_DURABILITY_FLOOR catches that.
    # Raised 2026-12-04 after the allocator change (jemalloc): quick 0.63-0.83, full 0.72-0.85; 0.42 is about two
    # thirds of the lowest. Lowered 2026-12-05 to 0.36: issue 15 made the memory store's action faster (from 0.44
    # to 0.54-0.65 of C) while the SQLite store's is held by the connection's suspension and the commits (0.30-0.36 of
    # C, BENCHMARKS.md "Issue 15, ninth round"), so the ratio fell (quick 0.50-0.60, full 0.56-0.66); 0.36 is about
    # 70 % of the lowest, and SQLITE_TO_C_FLOOR guards the store against C.
    "action-store": 0.36,  # (quick 0.50-0.60, full 0.56-0.66; target 0.7)
}
# SQLite store at machine durability (fsync at every commit) / memory store, the same load: the quick mode's guard of
# group commit, which is what keeps one fsync from costing every answer its own. Measured 2026-12-01 in quick-length
# runs (nine, load average up to 5.6): 0.24-0.38 with group commit; 0.08-0.14 with the same store made to block each
# answer's worker thread until its record was committed (an experiment, not in the code), so that records of
# concurrent requests no longer share a commit. 0.17 is about 70 % of the lowest with group commit, above the highest
# without.
MACHINE_DURABILITY_FLOOR = 0.17
# SQLite store (process durability) / the C server answering the same POSTs, the same load: issue 15's SQLite target
# (0.5) as a ratio of one run. Measured 2026-12-05: quick 0.30, full 0.36 (the memory store 0.54-0.63 of C in the same
# runs). 0.21 is 70 % of the quick figure: it fails a SQLite path that costs a third more, or a memory path whose loss
# the SQLite/memory ratio hides because both stores pay it.
# Raised 2026-12-06 with the epoll engine the default (no suspension: quick 0.40, alternating runs 0.41-0.42): 0.28.
SQLITE_TO_C_FLOOR = 0.28
# RSS per passivated session, quick mode (10,000 sessions): measured 464 bytes (the SQLite connections' page caches
# and other fixed costs weigh more over fewer sessions; 84 bytes over 100,000). The bound fails a passivated session
# that keeps kilobytes (12,496 bytes before the server gave freed pages back; a session object kept alive costs more),
# not the target's 256 bytes, which the full run measures over 100,000 sessions.
PASSIVATED_QUICK_BOUND_BYTES = 1_024
# RSS per idle (hibernated) greeting session, quick mode (10,000 sessions): the issue's target, 2 KiB. Quick runs
# measure 600 to 1,300 bytes (fewer sessions spread the freed slabs' slack thinner; the full run's 100,000 measure
# 1,640-1,850, BENCHMARKS.md "Issue 15, sixth round"); a page that no longer hibernates measures about 2,800.
MEMORY_QUICK_BOUND_BYTES = 2_048


def log(message):
    print(message, flush=True)


def run(command, **kwargs):
    return subprocess.run(command, cwd=ROOT, check=True, **kwargs)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def poll_until(check, timeout):
    """Calls `check` every 0.2 s until it is true; fails (RuntimeError) after `timeout` seconds."""
    deadline = time.time() + timeout
    while not check():
        if time.time() > deadline:
            raise RuntimeError(f"not so after {timeout} s")
        time.sleep(0.2)


def wait_for_port(port, timeout=10.0, process=None):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"{process.args[0]} exited with status {process.returncode} before listening on {port}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port}")


class Server:
    """A server process started for a measurement and always stopped afterwards."""

    def __init__(self, command, port, environment=None, start_timeout=10.0, stderr_path=None, stop_timeout=10.0,
                 stdout_pipe=False):
        self.stdout_pipe = stdout_pipe
        self.stdout_bytes = 0
        self.command = command
        self.port = port
        self.environment = environment
        self.start_timeout = start_timeout
        self.stderr_path = stderr_path
        self.stop_timeout = stop_timeout
        self.process = None

    def __enter__(self):
        stderr = open(self.stderr_path, "w") if self.stderr_path else subprocess.DEVNULL
        try:
            self.process = subprocess.Popen(self.command, cwd=ROOT, env=self.environment,
                                            stdout=subprocess.PIPE if self.stdout_pipe else subprocess.DEVNULL,
                                            stderr=stderr)
            if self.stdout_pipe:
                # Standard output is a pipe, drained as a container runtime's log driver drains it.
                def drain():
                    for chunk in iter(lambda: self.process.stdout.read1(65536), b""):
                        self.stdout_bytes += len(chunk)
                threading.Thread(target=drain, daemon=True).start()
        finally:
            if self.stderr_path:
                stderr.close()
        try:
            wait_for_port(self.port, self.start_timeout, self.process)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc):
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=self.stop_timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def parse_latency(text):
    value = float(re.match(r"([\d.]+)", text).group(1))
    unit = text[len(str(re.match(r"([\d.]+)", text).group(1))):].strip()
    return value * {"us": 0.001, "ms": 1.0, "s": 1000.0}.get(unit, 1.0)


def process_cpu_seconds(pid):
    """User and system CPU seconds a process has used so far (all its threads), from /proc."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / ticks, int(fields[12]) / ticks


def wrk(url, seconds, connections=64, threads=2, script=None, script_arguments=(), pid=None):
    """Runs wrk; returns requests/s, p50 and p99 latency in milliseconds, and, when the server's `pid` is given,
    the server's user and system CPU microseconds per request during the run (else None, None)."""
    command = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--latency"]
    if script:
        command += ["-s", script]
    command.append(url)
    if script_arguments:
        command += ["--", *script_arguments]
    before = process_cpu_seconds(pid) if pid else None
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    after = process_cpu_seconds(pid) if pid else None
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
    p50 = parse_latency(re.search(r"^\s+50%\s+(\S+)", output, re.M).group(1))
    p99 = parse_latency(re.search(r"^\s+99%\s+(\S+)", output, re.M).group(1))
    errors = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", output)
    if errors:
        raise RuntimeError(f"{url}: {errors.group(1)} non-2xx responses")
    user_us = system_us = None
    requests = int(re.search(r"(\d+) requests in", output).group(1))
    if before and after and requests:
        user_us = (after[0] - before[0]) * 1e6 / requests
        system_us = (after[1] - before[1]) * 1e6 / requests
    return rate, p50, p99, user_us, system_us


class Load:
    """A contender's load, what its `opened()` yields: `load(seconds)` runs `wrk` against its server (see `wrk`), and
    `pid` is the server's process (the profile section samples it while the load runs)."""

    def __init__(self, url, pid, script=None, script_arguments=()):
        self.url = url
        self.pid = pid
        self.script = script
        self.script_arguments = script_arguments

    def __call__(self, seconds):
        return wrk(self.url, seconds, script=self.script, script_arguments=self.script_arguments, pid=self.pid)


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


def cpu_text(value):
    return "" if value is None else f"{value:.1f}"


def results_table(results, ratio_line):
    return [
        "| server | req/s (median) | p50 ms | p99 ms | server CPU µs/request: user | system |",
        "|---|---:|---:|---:|---:|---:|",
        *[f"| {name} | {r:,.0f} | {p50:.3f} | {p99:.3f} | {cpu_text(user)} | {cpu_text(system)} |"
          for name, (r, p50, p99, user, system) in results.items()],
        "",
        ratio_line,
        "",
        "Server CPU per request: the server process's user and system time (/proc) over the requests `wrk` "
        "counted in the same run (medians). `wrk` runs on the same two cores.",
    ]


def alternate_measured(contenders, rounds, seconds, keep_running):
    """Measures each contender in turn, `rounds` times, and returns the medians (req/s, p50, p99) per name.

    `contenders` are (name, opened): `opened()` is a context manager that starts the contender's server, prepares
    it, and yields `measure(seconds)` (a `wrk` run returning req/s, p50, p99 and the server's CPU per request).
    Every server is warmed up for 1 s
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
                    sample = measures[name](seconds)
                else:
                    with opened() as measure:
                        measure(1)
                        sample = measure(seconds)
                samples[name].append(sample)
                rate, p50, p99, user, system = sample
                log(f"  round {round_index + 1}: {name:>16}: {rate:>9.0f} req/s  p50 {p50:.3f} ms  p99 {p99:.3f} ms"
                    f"  CPU/request user {cpu_text(user)} µs  system {cpu_text(system)} µs")

    def median_of(values):
        known = [value for value in values if value is not None]
        return median(known) if known else None
    return {name: tuple(median_of([s[i] for s in values]) for i in range(5)) for name, values in samples.items()}


def rounds_description(rounds, keep_running):
    if keep_running:
        return f"{rounds} alternating rounds (medians) on servers started once and warmed up for 1 s"
    return f"{rounds} alternating rounds (medians), a fresh server process per round, each after a 1 s warm-up"


def c_server(body_file=None, headers=(), script=None, script_arguments=()):
    """The C reference as a contender; it answers every request (any method and path; a request's body is read and
    discarded) with `body_file`'s bytes, or with its built-in body (the same as microhttp-bench's), and the extra
    `headers` ("Name: value"). It is loaded with `GET /api/pages/greeting`, or with `wrk`'s `script`."""
    binary = build_c_server()

    @contextlib.contextmanager
    def opened():
        port = free_port()
        # The C server reads its headers after its body file: headers without one would be taken for the file.
        if headers and not body_file:
            raise ValueError("the C server's extra headers need a body file")
        with Server([binary, str(port), *([body_file] if body_file else []), *headers], port) as server:
            url = f"http://127.0.0.1:{port}" + ("" if script else "/api/pages/greeting")
            yield Load(url, server.process.pid, script, script_arguments)
    return opened


def section_listener(quick):
    """MicroHTTP against a raw C libmicrohttpd server answering the same bytes."""
    swift_server = build_swift("microhttp-bench")
    rounds, seconds = QUICK_ROUNDS if quick else FULL_ROUNDS

    @contextlib.contextmanager
    def microhttp():
        port = free_port()
        with Server([swift_server, str(port)], port) as server:
            yield Load(f"http://127.0.0.1:{port}/api/pages/greeting", server.process.pid)

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
              "C: libmicrohttpd 0.9.75, thread pool of one thread per core, epoll, turbo, suspend/resume allowed; "
              "MicroHTTP: its default engine, its own epoll loops, one per core; "
              f"the same {len(bodies['C'])}-byte JSON body (checked). "
              "C: `Benchmarks/c-server/server.c`; MicroHTTP: `Benchmarks/Sources/microhttp-bench`.")
    return "listener", "MicroHTTP vs raw libmicrohttpd (C)", method, table, ratio


# Session stores. The demo keeps every session's inputs in SESSION_STORE, by default the SQLite file
# data/sessions.sqlite under its working directory. The harness never uses that file: every demo server it starts gets
# a store of its own, a fresh SQLite file (process durability, as the demo ships) in a directory of this run's under
# the system's temporary directory (the same disk as the worktree here), removed when the harness exits. So no run
# writes into the worktree, and no server finds sessions of an earlier one. Sections that compare stores name them.
_STORE_ROOT = []


def store_directory():
    """This run's directory for session stores (made on first use, removed at exit)."""
    if not _STORE_ROOT:
        _STORE_ROOT.append(tempfile.mkdtemp(prefix="mvvmr-bench-stores-"))
        atexit.register(shutil.rmtree, _STORE_ROOT[0], True)
    return _STORE_ROOT[0]


def fresh_sqlite_path(name):
    """A path for a new SQLite store file named after `name`, in this run's store directory (no file there yet)."""
    directory = store_directory()
    for index in range(1, 1_000_000):
        path = os.path.join(directory, f"{name}-{index}.sqlite")
        if not os.path.exists(path):
            open(path, "w").close()  # reserves the name; SQLite takes an empty file as a new database
            return path
    raise RuntimeError("no free store file name")


def sqlite_store(path, durability="process"):
    """The environment that points a demo server at the SQLite store file `path`."""
    return {"SESSION_STORE": f"sqlite:{path}", "SESSION_DURABILITY": durability}


MEMORY_STORE = {"SESSION_STORE": "memory"}


def demo_command(port, extra_env=None):
    """The release demo server on `port`, logging only errors (a log line per request would be measured too).

    Its session store is a fresh SQLite file (process durability) unless `extra_env` names one (SESSION_STORE)."""
    binary = build_swift("mvvmr-demo")
    environment = {"PORT": str(port), "HOST": "127.0.0.1", "LOG_LEVEL": "error", "DATA_DIR": os.path.join(ROOT, "Data"),
                   "PUBLIC_DIR": os.path.join(ROOT, "Public")}
    if "SESSION_STORE" not in (extra_env or {}):
        environment.update(sqlite_store(fresh_sqlite_path("demo")))
    environment.update(extra_env or {})
    return ["env", *[f"{key}={value}" for key, value in environment.items()], binary]


def http_request(port, method, path, body=None, headers=None, with_headers=False):
    """One request on a new connection; returns (status, body bytes), or with `with_headers` (status, body bytes,
    the response's headers as (name, value) pairs). `body` is encoded as JSON."""
    import http.client
    import json as json_module
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request(method, path, body=None if body is None else json_module.dumps(body), headers=headers or {})
    response = connection.getresponse()
    payload = response.read()
    connection.close()
    if with_headers:
        return response.status, payload, response.getheaders()
    return response.status, payload


# The demo's response headers that the C reference sends too, so that both send the same bytes (the C server adds
# Date, Content-Type and Content-Length itself).
MIRRORED_HEADERS = ("Cache-Control", "X-Content-Type-Options")


def mirrored_headers(response_headers):
    """The `MIRRORED_HEADERS` of a demo response, as "Name: value" arguments for the C server; fails when the demo's
    response has a header the C server would not send, so that a new header cannot silently make the comparison
    unequal."""
    known = {"date", "content-type", "content-length", *(name.lower() for name in MIRRORED_HEADERS)}
    unknown = [name for name, _ in response_headers if name.lower() not in known]
    if unknown:
        raise RuntimeError(f"the demo answered with headers the C reference does not send: {unknown}")
    return [f"{name}: {value}" for name, value in response_headers if name in MIRRORED_HEADERS]


def http_json(port, method, path, body=None, headers=None):
    import json as json_module
    status, payload = http_request(port, method, path, body, headers)
    return status, (json_module.loads(payload) if payload else None)


def demo_response_file(name, unit, method, path, body=None, store_environment=None):
    """The demo's response to one request (`method` `path`, JSON `body`) in a new session of `unit`, its body written
    to `OUT/name` for the C reference to answer with: returns (the file's path, the body, the mirrored headers'
    arguments)."""
    os.makedirs(OUT, exist_ok=True)
    body_file = os.path.join(OUT, name)
    port = free_port()
    with Server(demo_command(port, store_environment), port):
        _, created = http_json(port, "POST", "/api/sessions", {"unit": unit})
        headers = {"X-Session-ID": created["session"], **({"Content-Type": "application/json"} if body else {})}
        status, answer, answer_headers = http_request(port, method, path, body=body, headers=headers,
                                                      with_headers=True)
    if status != 200:
        raise RuntimeError(f"{method} {path} answered {status}: {answer!r}")
    with open(body_file, "wb") as output:
        output.write(answer)
    return body_file, answer, mirrored_headers(answer_headers)


def page_read_body_file():
    """The demo's answer to a session's `GET /api/pages/greeting` (its snapshot), for the C reference."""
    return demo_response_file("page-read-body.json", "greeting", "GET", "/api/pages/greeting")


def action_body_file():
    """The demo's answer to one increment on the memory store (the action section's request), for the C reference
    to answer the same POSTs with. Increments' answers differ only in their numbers, so their sizes stay within a
    few bytes."""
    return demo_response_file("action-body.json", "counters", "POST", "/api/pages/counters/actions",
                              body={"action": "increment", "value": 5}, store_environment=MEMORY_STORE)


def section_page_read(quick):
    """GET /api/pages/greeting of an existing session against the C server answering the same bytes."""
    rounds, seconds = QUICK_ROUNDS if quick else FULL_ROUNDS
    os.makedirs(OUT, exist_ok=True)

    body_file, body, headers = page_read_body_file()

    @contextlib.contextmanager
    def page_read():
        port = free_port()
        with Server(demo_command(port), port) as server:
            _, created = http_json(port, "POST", "/api/sessions", {"unit": "greeting"})
            script = os.path.join(OUT, "session-header.lua")
            with open(script, "w") as output:
                output.write(f'wrk.headers["X-Session-ID"] = "{created["session"]}"\n')
            yield Load(f"http://127.0.0.1:{port}/api/pages/greeting", server.process.pid, script)

    results = alternate_measured([("C", c_server(body_file, headers)), ("MVVMR page read", page_read)], rounds, seconds, quick)
    ratio = results["MVVMR page read"][0] / results["C"][0]
    table = results_table(results, f"**Ratio page read / C: {ratio:.2f}** (target ≥ 0.9 with request logs off, as "
                                   "here; ≥ 0.85 with them: the page-read-logged section).")
    method = (f"`wrk -t2 -c64 -d{seconds}s --latency`, {rounds_description(rounds, quick)}. MVVMR: the release "
              "`mvvmr-demo` (`LOG_LEVEL=error`, a fresh SQLite session store, which a read does not write), "
              "`GET /api/pages/greeting` with `X-Session-ID` of one existing "
              "session (a full snapshot: session lookup, page lock, JSON encoding). C: `Benchmarks/c-server` "
              f"answering with the same {len(body)} bytes: the harness first fetches the demo's response body for "
              "this request and gives it to the C server (`c-server PORT BODY_FILE`). The demo also sends "
              "`Cache-Control: no-store`.")
    return "page-read", "Page read: GET /api/pages/greeting vs raw libmicrohttpd", method, table, ratio


def logged_page_read(log_level, logged_bytes=None):
    """`GET /api/pages/greeting` of one session as a contender: the demo at `log_level`, its standard output a pipe that
    the harness drains (as a container runtime's log driver does); adds the bytes it wrote to
    `logged_bytes[log_level]`."""
    @contextlib.contextmanager
    def contender():
        port = free_port()
        with Server(demo_command(port, {"LOG_LEVEL": log_level}), port, stdout_pipe=True) as server:
            _, created = http_json(port, "POST", "/api/sessions", {"unit": "greeting"})
            # One script per contender: in quick mode both servers run at once, each with its own session.
            script = os.path.join(OUT, f"session-header-{log_level}.lua")
            with open(script, "w") as output:
                output.write(f'wrk.headers["X-Session-ID"] = "{created["session"]}"\n')
            yield Load(f"http://127.0.0.1:{port}/api/pages/greeting", server.process.pid, script)
            if logged_bytes is not None:
                logged_bytes[log_level] = logged_bytes.get(log_level, 0) + server.stdout_bytes
    return contender


def section_page_read_logged(quick):
    """The page read with the default log level (a JSON line per request to standard output, a pipe) against the
    same read with request logs off, in one run: what the request log costs."""
    rounds, seconds = QUICK_ROUNDS if quick else FULL_ROUNDS
    os.makedirs(OUT, exist_ok=True)
    logged_bytes = {}
    body_file, body, headers = page_read_body_file()
    results = alternate_measured([("C", c_server(body_file, headers)),
                                  ("logs off (LOG_LEVEL=error)", logged_page_read("error", logged_bytes)),
                                  ("request logs (LOG_LEVEL=info)", logged_page_read("info", logged_bytes))],
                                 rounds, seconds, quick)
    logged = results["request logs (LOG_LEVEL=info)"][0]
    ratio = logged / results["logs off (LOG_LEVEL=error)"][0]
    table = results_table(results, f"**Ratio with request logs / without: {ratio:.2f}** "
                                   f"({logged_bytes.get('info', 0) / 1e6:.1f} MB of log lines written).\n\n"
                                   f"Ratio with request logs / C: {logged / results['C'][0]:.2f} (target ≥ 0.85); "
                                   f"logs off / C: {results['logs off (LOG_LEVEL=error)'][0] / results['C'][0]:.2f} "
                                   "(target ≥ 0.9).")
    method = (f"`wrk -t2 -c64 -d{seconds}s --latency`, {rounds_description(rounds, quick)}. The release "
              "`mvvmr-demo`, `GET /api/pages/greeting` of one session, its standard output a pipe that the harness "
              "drains (as a container runtime's log driver does): with `LOG_LEVEL=info` (the default), one JSON line "
              "per request; with `LOG_LEVEL=error`, none. C: `Benchmarks/c-server` answering with the same "
              f"{len(body)} bytes, as in the page-read section.")
    return "page-read-logged", "Page read with request logs vs without", method, table, ratio


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


def action_script():
    """Writes the action load's `wrk` script (`ACTION_SCRIPT`) and returns its path."""
    os.makedirs(OUT, exist_ok=True)
    script = os.path.join(OUT, "action.lua")
    with open(script, "w") as output:
        output.write(ACTION_SCRIPT)
    return script


def action_contender(store_environment):
    """The action load as a contender: a demo server on the store `store_environment()` returns (called once per
    server start, so each server can get a fresh store), 256 counters sessions, and `wrk -s action.lua`."""
    script = action_script()

    @contextlib.contextmanager
    def opened():
        port = free_port()
        with Server(demo_command(port, store_environment()), port) as server:
            sessions_file = os.path.join(OUT, f"sessions-{port}.txt")
            with open(sessions_file, "w") as output:
                for _ in range(256):
                    _, created = http_json(port, "POST", "/api/sessions", {"unit": "counters"})
                    output.write(created["session"] + "\n")
            yield Load(f"http://127.0.0.1:{port}", server.process.pid, script, [sessions_file])
    return opened


def action_reference():
    """The C server as the action load's reference: it answers the action script's POSTs (reading and discarding
    each body) with the demo's response body to one increment and the demo's own headers. Returns the contender and
    that body."""
    body_file, body, headers = action_body_file()
    script, sessions_file = action_script(), os.path.join(OUT, "sessions-c-server.txt")
    with open(sessions_file, "w") as output:
        output.write("".join(f"c-server-session-{index}\n" for index in range(256)))
    return c_server(body_file, headers, script=script, script_arguments=[sessions_file]), body


def section_action(quick):
    """POST /api/pages/counters/actions (increment a row) spread over 256 sessions, against the C server answering
    the same POSTs with the same response bytes."""
    rounds, seconds = QUICK_ROUNDS if quick else FULL_ROUNDS
    action = action_contender(lambda: MEMORY_STORE)
    reference, body = action_reference()
    results = alternate_measured([("C (the same POSTs)", reference), ("MVVMR action", action)], rounds, seconds, quick)
    ratio = results["MVVMR action"][0] / results["C (the same POSTs)"][0]
    table = results_table(results, f"**Ratio action round trip / C: {ratio:.2f}** (target ≥ 0.6; the goal 0.8).")
    method = (f"`wrk -t2 -c64 -d{seconds}s --latency -s action.lua`, {rounds_description(rounds, quick)}. Each "
              "request increments one of ten rows of the counters page in one of 256 sessions, round-robin "
              "(parse the body, deliver the action in the session's lock, diff the written row, encode the "
              "patch, log the input, push it to the session's event log). The demo runs on the memory session store "
              "(`SESSION_STORE=memory`), so that this is the session's own work; the SQLite store's cost is the "
              "action-store section's. Reference: `Benchmarks/c-server` under the same `wrk` script (the same POSTs "
              f"and bodies; it reads and discards each body), answering with the demo's {len(body)}-byte response "
              "body to one increment and the demo's own headers (`c-server PORT BODY_FILE 'Cache-Control: "
              "no-store' 'X-Content-Type-Options: nosniff'`). Before 2026-12-04 the reference was the C server's "
              "fixed 67-byte `GET`.")
    return "action", "Action round trip: POST counters increment vs raw libmicrohttpd answering the same POSTs", \
        method, table, ratio


def section_action_store(quick):
    """The action round trip with the SQLite store against the memory store, alternated in one run."""
    rounds, seconds = QUICK_ROUNDS if quick else FULL_ROUNDS
    reference, _ = action_reference()
    contenders = [
        ("C (the same POSTs)", reference),
        ("memory store", action_contender(lambda: MEMORY_STORE)),
        ("SQLite, process", action_contender(lambda: sqlite_store(fresh_sqlite_path("action-process"), "process"))),
    ]
    contenders.append(
        ("SQLite, machine", action_contender(lambda: sqlite_store(fresh_sqlite_path("action-machine"), "machine"))))
    results = alternate_measured(contenders, rounds, seconds, quick)
    ratio = results["SQLite, process"][0] / results["memory store"][0]
    machine = results["SQLite, machine"][0] / results["memory store"][0]
    c_rate = results["C (the same POSTs)"][0]
    to_c = results["SQLite, process"][0] / c_rate
    lines = [f"**Ratio SQLite (process durability) / memory store: {ratio:.2f}** (target ≥ 0.7).", "",
             f"**Ratio SQLite (process durability) / C: {to_c:.2f}** (issue 15's "
             f"target ≥ 0.5); memory store / C in the same run: {results['memory store'][0] / c_rate:.2f}.", "",
             f"Ratio SQLite (machine durability, `fsync` at every commit) / memory store: {machine:.2f} "
             "(reported, no target)."]
    table = results_table(results, "\n".join(lines))
    failures = []
    if quick and machine < MACHINE_DURABILITY_FLOOR:
        failures.append(f"action-store: machine durability ratio {machine:.2f} below floor {MACHINE_DURABILITY_FLOOR:.2f}")
    if quick and to_c < SQLITE_TO_C_FLOOR:
        failures.append(f"action-store: SQLite / C ratio {to_c:.2f} below floor {SQLITE_TO_C_FLOOR:.2f}")
    method = (f"The action section's load (`wrk -t2 -c64 -d{seconds}s --latency -s action.lua`: increments spread "
              "round-robin over 256 counters sessions) against the release `mvvmr-demo` on each session store, "
              "and against the action section's C reference (the same POSTs, the same response bytes), "
              f"{rounds_description(rounds, quick)}. Memory: `SESSION_STORE=memory` (an append completes at once). "
              "SQLite: `SESSION_STORE=sqlite:PATH` with `SESSION_DURABILITY=process` (`synchronous=NORMAL` in WAL "
              "mode: a commit is written to the operating system) or `machine` (`synchronous=FULL`: `fsync` of the "
              "log at every commit); a fresh file per server, in a temporary directory on the same ext4 disk as the "
              "worktree. Every answer waits until its input's record is committed; one writer thread commits "
              "everything queued in one transaction (group commit), so the 64 connections' records share commits.")
    return "action-store", "Action round trip: SQLite session store vs memory store", method, table, ratio, failures


@contextlib.contextmanager
def nats_server():
    """A nats-server with JetStream on a free loopback port, its store in this run's store directory; yields its URL
    and stops it (SIGTERM) afterwards."""
    port = free_port()
    directory = tempfile.mkdtemp(prefix="nats-", dir=store_directory())
    process = subprocess.Popen(["nats-server", "-js", "-a", "127.0.0.1", "-p", str(port), "-sd", directory],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, 10, process)
        yield f"nats://127.0.0.1:{port}"
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def section_action_nats(quick):
    """The action round trip with the NATS JetStream store against the SQLite store, alternated in one run."""
    rounds, seconds = QUICK_ROUNDS if quick else FULL_ROUNDS
    with nats_server() as url:
        contenders = [
            ("SQLite, process", action_contender(lambda: sqlite_store(fresh_sqlite_path("action-nats"), "process"))),
            ("NATS JetStream", action_contender(lambda: {"SESSION_STORE": url})),
        ]
        results = alternate_measured(contenders, rounds, seconds, quick)
    ratio = results["NATS JetStream"][0] / results["SQLite, process"][0]
    table = results_table(results, f"**Ratio NATS JetStream / SQLite (process durability): {ratio:.2f}** "
                                   "(the issue's aim: near 1; reported, no floor yet).")
    method = (f"The action section's load (`wrk -t2 -c64 -d{seconds}s --latency -s action.lua`: increments spread "
              "round-robin over 256 counters sessions) against the release `mvvmr-demo` on each store, "
              f"{rounds_description(rounds, quick)}. SQLite: a fresh `SESSION_STORE=sqlite:PATH` file per server, "
              "`SESSION_DURABILITY=process`. NATS: `SESSION_STORE=nats://127.0.0.1:PORT` on one local `nats-server "
              "-js` (Debian's 2.9, file storage in a temporary directory, one replica) that the harness starts for "
              "the section and that runs on the same cores as the demo and wrk; every answer waits for JetStream's "
              "acknowledgement of its record, published asynchronously (many sessions' records in flight at once, "
              "each session's one after the other, each naming its subject's last sequence).")
    return "action-nats", "Action round trip: NATS JetStream session store vs SQLite", method, table, ratio


# Restore (section_restore, and the restore kind of section_callgrind): a session with RESTORE_RECORDS records in its
# log: a counters session's start and RESTORE_RECORDS - 1 increments.
RESTORE_RECORDS = 1_000


def make_logged_sessions(port, count, records, unit="counters", compacted=False):
    """Creates `count` sessions of `unit` on the demo at `port`, each with `records` inputs (the start and
    `records - 1` increments, sent one after the other on one keep-alive connection), checks each log
    (`GET /api/session/log`: `records` records; or, `compacted`, a snapshot and fewer records) and returns the
    sessions' ids and, per session, how many records follow its snapshot."""
    import http.client
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    identifiers = []
    for _ in range(count):
        identifier = demo_session(connection, unit)
        send = http_sender(connection, "POST", f"/api/pages/{unit}/actions",
                           body=json.dumps({"action": "increment", "value": 1}),
                           headers={"X-Session-ID": identifier, "Content-Type": "application/json"})
        for _ in range(records - 1):
            send()
        connection.request("GET", "/api/session/log", headers={"X-Session-ID": identifier})
        response = connection.getresponse()
        session_log = json.loads(response.read())
        logged = len(session_log["records"])
        if compacted:
            if session_log.get("snapshot") is None or logged >= records:
                raise RuntimeError(f"a session of {records} inputs was not compacted ({logged} records)")
        elif logged != records:
            raise RuntimeError(f"a session's log holds {logged} records, not {records}")
        identifiers.append((identifier, logged))
    connection.close()
    return identifiers


NO_COMPACTION = {"SNAPSHOT_AFTER_RECORDS": "0"}  # a log of RESTORE_RECORDS records stays whole


def metric_value(port, name):
    """The value of the metric `name` (without labels) on the demo at `port` (0 when it has none yet)."""
    status, body = http_request(port, "GET", "/metrics")
    found = re.search(rf"^{re.escape(name)} (\S+)", body.decode(), re.M)
    return float(found.group(1)) if found else 0.0


def section_restore(quick):
    """The time a session of RESTORE_RECORDS records takes to restore: its first GET after a restart, minus a GET of
    the same page once it is in memory."""
    import http.client
    count = 3 if quick else 9
    samples = measure_restores(count, compacted=False)
    compacted_samples = measure_restores(count, compacted=True)
    restore_ms = median([first - baseline for first, baseline, _ in samples])
    compacted_ms = median([first - baseline for first, baseline, _ in compacted_samples])
    left = median([records for _, _, records in compacted_samples])
    table = [
        "| figure | measured | target |",
        "|---|---:|---:|",
        f"| records per session | {RESTORE_RECORDS:,} | 1,000 |",
        f"| first `GET` after the restart (median of {count} sessions) | {median([f for f, _, _ in samples]):.2f} ms | |",
        f"| the same `GET` once the session is in memory (median) | {median([b for _, b, _ in samples]):.3f} ms | |",
        f"| restore: first `GET` minus the in-memory `GET` (median of {count} sessions) | {restore_ms:.2f} ms | ≤ 50 ms |",
        f"| slowest restore of the {count} | {max(f - b for f, b, _ in samples):.2f} ms | |",
        f"| the same {RESTORE_RECORDS:,} inputs compacted (`SNAPSHOT_AFTER_RECORDS` 500): a snapshot and {left:.0f} "
        f"records, restore (median of {count}) | {compacted_ms:.2f} ms | |",
    ]
    method = (f"Release `mvvmr-demo` on a fresh SQLite store (process durability) with `SNAPSHOT_AFTER_RECORDS=0`, so "
              f"that no log is compacted. The harness creates {count} counters "
              f"sessions and sends each {RESTORE_RECORDS - 1:,} increments, one after the other on one keep-alive "
              f"connection, so each log holds {RESTORE_RECORDS:,} records (checked with `GET /api/session/log`); stops "
              "the server (SIGTERM) and starts a new one on the same file. After 50 warm-up reads of a new session, "
              "it times each stored session's first `GET /api/pages/counters` on an open keep-alive connection "
              "(the server loads the log, parses and replays every record, then answers), then the same `GET` "
              f"5 times more, now from memory (median: the baseline), and takes the difference; the figure is "
              "the median over the sessions. The restored page is checked to show every increment, and "
              "`mvvmr_session_restores_total` to count one restore per session. The last row does the same with "
              "compaction on as the demo ships (a snapshot every 500 records), so each log is a snapshot and the "
              "records after it.")
    return "restore", f"Restore of a stored session ({RESTORE_RECORDS:,} records)", method, table, restore_ms


def measure_restores(count, compacted):
    """Restores `count` sessions of RESTORE_RECORDS inputs after a restart (compaction on or off while they were
    made); returns per session (first GET ms, in-memory GET ms, records after the snapshot)."""
    import http.client
    reads = 5  # in-memory GETs after the restore: their median is the baseline
    store = sqlite_store(fresh_sqlite_path("restore-compacted" if compacted else "restore"))
    port = free_port()
    with Server(demo_command(port, dict(store, **({} if compacted else NO_COMPACTION))), port):
        identifiers = make_logged_sessions(port, count, RESTORE_RECORDS, compacted=compacted)
    # The server above stopped on SIGTERM (Server's exit); this one starts on the same file and holds no session.
    port = free_port()
    samples = []  # (first GET ms, baseline ms, records)
    with Server(demo_command(port, store), port):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        # Warm up this process (code paths, allocator) on a session of its own, as every GET below comes after it.
        warm = http_sender(connection, "GET", "/api/pages/counters",
                           headers={"X-Session-ID": demo_session(connection, "counters")})
        for _ in range(50):
            warm()
        for identifier, records in identifiers:
            send = http_sender(connection, "GET", "/api/pages/counters", headers={"X-Session-ID": identifier})
            started = time.perf_counter()
            body = send()
            first = (time.perf_counter() - started) * 1000
            if json.loads(body)["view"]["rows"][0]["count"] != RESTORE_RECORDS - 1:
                raise RuntimeError("the restored page does not show every increment")
            baseline = []
            for _ in range(reads):
                started = time.perf_counter()
                send()
                baseline.append((time.perf_counter() - started) * 1000)
            # What the restore read (a compaction may have finished after the log was looked at above).
            connection.request("GET", "/api/session/log", headers={"X-Session-ID": identifier})
            records = len(json.loads(connection.getresponse().read())["records"])
            samples.append((first, median(baseline), records))
            log(f"  session {len(samples)}: first GET {first:.2f} ms, in memory {median(baseline):.3f} ms"
                f" ({records} records{' after a snapshot' if compacted else ''})")
        connection.close()
        restored = metric_value(port, "mvvmr_session_restores_total")
    if restored != count:
        raise RuntimeError(f"{restored:.0f} sessions restored, not {count}")
    return samples


# Many stored sessions (section_passivated_memory, section_startup_stored): counters sessions created over HTTP by
# wrk, each with STORED_SESSION_ACTIONS increments. wrk's Lua keeps, per thread, the sessions it created that still
# owe actions: each connection sends an owed action when there is one, else creates a session (POST /api/sessions),
# else asks /healthz while the last actions are in flight. 64 keep-alive connections keep the group commit busy;
# one Python thread per connection would manage a few thousand requests per second, wrk many times that.
STORED_SESSIONS = 100_000
STORED_SESSION_ACTIONS = 2
STORED_SESSIONS_DEADLINE = 150   # seconds for the creation; fewer sessions are measured (and said) beyond it
CREATE_SESSIONS_SCRIPT = r"""
target, actions, created, sessions, acted, failed = 0, 0, 0, 0, 0, 0
owed = {}
primed, finished = false, false
init = function(args)
  target = tonumber(args[1])
  actions = tonumber(args[2])
end
request = function()
  -- wrk calls the first thread's request() once to look at it, and never sends that one: so the first call of every
  -- thread makes nothing (thread 1's is dropped, the others' ask /healthz).
  if not primed then
    primed = true
    return wrk.format("GET", "/healthz")
  end
  local last = #owed
  if last > 0 then
    local item = owed[last]
    item[2] = item[2] - 1
    if item[2] == 0 then owed[last] = nil end
    return wrk.format("POST", "/api/pages/counters/actions",
      {["X-Session-ID"] = item[1], ["Content-Type"] = "application/json"}, '{"action":"increment","value":1}')
  end
  if created < target then
    created = created + 1
    return wrk.format("POST", "/api/sessions", {["Content-Type"] = "application/json"}, '{"unit":"counters"}')
  end
  return wrk.format("GET", "/healthz")
end
response = function(status, headers, body)
  if status == 201 then
    sessions = sessions + 1
    if actions > 0 then owed[#owed + 1] = {body:match('"session":"([^"]+)"'), actions} end
  elseif status == 200 then
    if body:sub(1, 8) == '{"unit":' then acted = acted + 1 end
  else
    failed = failed + 1
  end
  if not finished and created >= target and #owed == 0 and sessions + failed >= target
      and acted + failed >= sessions * actions then
    -- wrk's main thread sleeps for the whole -d whatever its threads do: the harness reads this line and interrupts
    -- it (SIGINT) once every thread has said it.
    finished = true
    io.write("thread finished\n")
    io.flush()
    wrk.thread:stop()
  end
end
threads = {}
setup = function(thread) threads[#threads + 1] = thread end
done = function(summary, latency, requests)
  local s, a, f = 0, 0, 0
  for _, thread in ipairs(threads) do
    s = s + thread:get("sessions")
    a = a + thread:get("acted")
    f = f + thread:get("failed")
  end
  io.write(string.format("created %d sessions, %d actions, %d failed\n", s, a, f))
end
"""


def create_stored_sessions(port, count, deadline):
    """Creates up to `count` counters sessions with STORED_SESSION_ACTIONS increments each on the demo at `port`,
    within `deadline` seconds; returns (sessions created, actions answered, seconds taken)."""
    os.makedirs(OUT, exist_ok=True)
    script = os.path.join(OUT, "create-sessions.lua")
    with open(script, "w") as output:
        output.write(CREATE_SESSIONS_SCRIPT)
    import selectors
    threads = 2
    started = time.perf_counter()
    process = subprocess.Popen(["wrk", f"-t{threads}", "-c64", f"-d{deadline}s", "-s", script,
                                f"http://127.0.0.1:{port}", "--", str(count // threads), str(STORED_SESSION_ACTIONS)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    output, finished = "", 0
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while finished < threads and process.poll() is None and time.perf_counter() - started < deadline + 10:
            if selector.select(timeout=0.5):
                line = process.stdout.readline()
                output += line
                finished += line.strip() == "thread finished"
    took = time.perf_counter() - started
    if process.poll() is None:
        process.send_signal(signal.SIGINT)  # wrk stops its threads, prints its summary and exits
    rest, errors_text = process.communicate(timeout=30)
    output += rest
    found = re.search(r"created (\d+) sessions, (\d+) actions, (\d+) failed", output)
    if not found or errors_text.strip():  # a Lua error goes to standard error, and wrk goes on without the script
        raise RuntimeError(f"wrk did not report the sessions it created:\n{output}{errors_text}")
    created, acted, failed = (int(value) for value in found.groups())
    errors = re.search(r"Socket errors: (.*)", output)
    if failed or errors:
        raise RuntimeError(f"creating sessions: {failed} unexpected answers, {errors.group(1) if errors else 'no'} "
                           f"socket errors:\n{output}")
    return created, acted, took


def stored_session_count(path):
    """How many sessions, and records, the SQLite store file at `path` holds (read with Python's sqlite3)."""
    import sqlite3
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        sessions = connection.execute("SELECT count(*) FROM sessions").fetchone()[0]
        records = connection.execute("SELECT count(*) FROM log").fetchone()[0]
        return sessions, records
    finally:
        connection.close()


def stored_session_identifiers(path, count):
    """`count` session ids from the store file at `path`, spread over the file (by rowid)."""
    import sqlite3
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        total = connection.execute("SELECT max(rowid) FROM sessions").fetchone()[0]
        step = max(1, total // (count + 1))
        return [row[0] for row in connection.execute(
            "SELECT id FROM sessions WHERE rowid % ?1 = 0 LIMIT ?2", (step, count))]
    finally:
        connection.close()


def process_rss_kib(pid):
    """The resident set size of process `pid`, in KiB (`VmRSS`; 0 when /proc does not give it)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


# The store section_passivated_memory filled in this run (path, sessions), for section_startup_stored to start on.
_FILLED_STORE = {}

PASSIVATED_WARMUP_SESSIONS = 2_000


def section_passivated_memory(quick):
    """RSS per passivated session: many sessions created, left to passivate, RSS compared with before them."""
    import threading
    target = 10_000 if quick else STORED_SESSIONS
    path = fresh_sqlite_path("passivated")
    environment = {**sqlite_store(path), "PASSIVATE_AFTER_SECONDS": 1, "MAX_SESSIONS": 10 * STORED_SESSIONS}
    port = free_port()
    with Server(demo_command(port, environment), port) as server:
        pid = server.process.pid

        def wait_until_passivated(expected, timeout):
            """Waits until no session is live and `expected` passivations are counted; returns the seconds waited."""
            began = time.perf_counter()
            while time.perf_counter() - began < timeout:
                if (metric_value(port, "mvvmr_sessions_live") == 0
                        and metric_value(port, "mvvmr_session_passivations_total") >= expected):
                    return time.perf_counter() - began
                time.sleep(0.25)
            raise RuntimeError(f"sessions still live after {timeout} s: "
                               f"{metric_value(port, 'mvvmr_sessions_live'):.0f} live, "
                               f"{metric_value(port, 'mvvmr_session_passivations_total'):.0f} passivated")

        # Warm up: the same traffic on fewer sessions, passivated too (allocator arenas, SQLite's page caches, code).
        warm, _, _ = create_stored_sessions(port, PASSIVATED_WARMUP_SESSIONS, 60)
        wait_until_passivated(warm, 60)
        time.sleep(0.5)
        rss_before = process_rss_kib(pid)
        peak = [rss_before, 0.0]  # the highest RSS KiB and live sessions sampled (not necessarily at once)

        stop = threading.Event()

        def sampler():
            while not stop.wait(0.5):
                peak[0] = max(peak[0], process_rss_kib(pid))
                peak[1] = max(peak[1], metric_value(port, "mvvmr_sessions_live"))
        watcher = threading.Thread(target=sampler, daemon=True)
        watcher.start()
        try:
            created, acted, took = create_stored_sessions(port, target, STORED_SESSIONS_DEADLINE)
            passivation_wait = wait_until_passivated(warm + created, 120)
        finally:
            stop.set()
            watcher.join()
        time.sleep(0.5)
        rss_after = process_rss_kib(pid)
        passivated = metric_value(port, "mvvmr_session_passivations_total") - warm
    stored, records = stored_session_count(path)
    if stored != warm + created:
        raise RuntimeError(f"the store holds {stored} sessions, {warm + created} were created")
    _FILLED_STORE.update(path=path, sessions=stored, records=records)
    per_session = (rss_after - rss_before) * 1024 / created
    mib = lambda kib: f"{kib / 1024:,.1f} MiB"  # noqa: E731
    table = [
        "| figure | measured | target |",
        "|---|---:|---:|",
        f"| sessions created (each with {STORED_SESSION_ACTIONS} actions), then passivated | {created:,} | {STORED_SESSIONS:,} |",
        f"| creation over HTTP (wrk, 64 connections) | {took:.1f} s ({(created + acted) / took:,.0f} requests/s) | |",
        f"| last session created → every session passivated | {passivation_wait:.1f} s | |",
        f"| most sessions live at once (sampled every 0.5 s) | {peak[1]:,.0f} | |",
        f"| RSS before → peak → after | {mib(rss_before)} → {mib(peak[0])} → {mib(rss_after)} | |",
        f"| RSS per passivated session | {per_session:,.0f} bytes | ≤ 256 bytes |",
        f"| store file: sessions, records | {stored:,}, {records:,} | |",
    ]
    failures = []
    if quick and per_session > PASSIVATED_QUICK_BOUND_BYTES:
        failures.append(f"passivated-memory: {per_session:,.0f} bytes per passivated session, above the quick bound "
                        f"{PASSIVATED_QUICK_BOUND_BYTES:,}")
    method = (f"Release `mvvmr-demo` on a fresh SQLite store (process durability) with `PASSIVATE_AFTER_SECONDS=1` "
              f"(the sweeper runs every second) and `MAX_SESSIONS={10 * STORED_SESSIONS:,}` (no eviction). `wrk` "
              "(2 threads, 64 keep-alive connections, a Lua script) creates counters sessions (`POST /api/sessions`) "
              f"and sends each {STORED_SESSION_ACTIONS} increments, with the session's id from the creation's answer; "
              f"creation is bounded to {STORED_SESSIONS_DEADLINE} s (fewer sessions are measured, and said, beyond it). "
              f"First {PASSIVATED_WARMUP_SESSIONS:,} sessions the same way, left to passivate (warm-up: allocator "
              "arenas, SQLite's page caches); then `VmRSS`; then the sessions measured; the harness waits until "
              "`mvvmr_sessions_live` is 0 and `mvvmr_session_passivations_total` counts them all, and reads `VmRSS` "
              "again. The figure is the growth divided by the sessions created; the store file is checked to hold "
              "every session.")
    return "passivated-memory", "Memory per passivated session", method, table, per_session, failures


def wait_until_healthy(port, started, seconds):
    """Polls `/healthz` on `port` every half millisecond (a new connection each time, so that the first answer is
    timed to within that) until it answers 200; fails `seconds` after `started` (a `perf_counter` reading)."""
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as connection:
                connection.sendall(b"GET /healthz HTTP/1.0\r\n\r\n")
                if connection.recv(64).startswith(b"HTTP/1.1 200"):
                    return
        except OSError:
            time.sleep(0.0005)
        if time.perf_counter() - started > seconds:
            raise RuntimeError("the server did not start")


def section_startup_stored(quick):
    """Time from exec to the first answers with many sessions in the store: /healthz, then a stored session's page."""
    import http.client
    if not _FILLED_STORE:
        # Run alone: fill a store the same way (no passivation needed: a session is in the file once created).
        path = fresh_sqlite_path("startup-stored")
        port = free_port()
        with Server(demo_command(port, {**sqlite_store(path), "MAX_SESSIONS": 10 * STORED_SESSIONS}), port):
            create_stored_sessions(port, 10_000 if quick else STORED_SESSIONS, STORED_SESSIONS_DEADLINE)
        stored, records = stored_session_count(path)
        _FILLED_STORE.update(path=path, sessions=stored, records=records)
    path, stored, records = _FILLED_STORE["path"], _FILLED_STORE["sessions"], _FILLED_STORE["records"]
    starts = 3 if quick else 7
    identifiers = stored_session_identifiers(path, starts)
    empty_path = fresh_sqlite_path("startup-empty")
    binary = build_swift("mvvmr-demo")

    def start(store_path, identifier):
        """Starts the demo on `store_path`; returns ms from Popen to /healthz's 200 and to the stored page's 200."""
        port = free_port()
        environment = dict(os.environ, PORT=str(port), HOST="127.0.0.1", LOG_LEVEL="error",
                           DATA_DIR=os.path.join(ROOT, "Data"), PUBLIC_DIR=os.path.join(ROOT, "Public"),
                           **sqlite_store(store_path))
        started = time.perf_counter()
        process = subprocess.Popen([binary], cwd=ROOT, env=environment, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        try:
            wait_until_healthy(port, started, 30)
            healthy = (time.perf_counter() - started) * 1000
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            if identifier is None:
                identifier = demo_session(connection, "counters")
            send = http_sender(connection, "GET", "/api/pages/counters", headers={"X-Session-ID": identifier})
            body = send()
            first_page = (time.perf_counter() - started) * 1000
            connection.close()
            if json.loads(body)["view"]["rows"][0]["count"] != (STORED_SESSION_ACTIONS if store_path == path else 0):
                raise RuntimeError("the stored session's page does not show its increments")
            return healthy, first_page
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)

    # Alternated with starts on an empty store (whose first page is a session created then), in the same run.
    full, empty = [], []
    for index in range(starts):
        full.append(start(path, identifiers[index]))
        empty.append(start(empty_path, None))
        log(f"  start {index + 1}: {stored:,} sessions stored: /healthz {full[-1][0]:.1f} ms, stored page "
            f"{full[-1][1]:.1f} ms; empty store: /healthz {empty[-1][0]:.1f} ms, new session's page {empty[-1][1]:.1f} ms")
    healthy, first_page = median([h for h, _ in full]), median([p for _, p in full])
    table = [
        "| figure | measured | target |",
        "|---|---:|---:|",
        f"| sessions in the store (records) | {stored:,} ({records:,}) | {STORED_SESSIONS:,} |",
        f"| exec → first 200 from `/healthz` (median of {starts}) | {healthy:.1f} ms | < 1,000 ms |",
        f"| exec → first 200 for a stored session's page (restored on that request) | {first_page:.1f} ms | < 1,000 ms |",
        f"| the same on an empty store: `/healthz`; a new session's page | {median([h for h, _ in empty]):.1f} ms; "
        f"{median([p for _, p in empty]):.1f} ms | |",
    ]
    method = ("The release `mvvmr-demo` started on the store the passivated-memory section filled (or, run alone, one "
              "filled the same way), timed from `Popen` to the first 200 from `/healthz`, and then to the first 200 "
              "of `GET /api/pages/counters` for a stored session (a different one each start, restored on that "
              f"request; its page is checked to show its increments); median of {starts} starts, each stopped with "
              "SIGTERM, alternated with starts on an empty store (a new session's page instead) in the same run. "
              "Restore is lazy: nothing of the stored sessions is read at start.")
    return "startup-stored", "Start with stored sessions", method, table, first_page


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
            wait_until_healthy(port, started, 10)
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
    """RSS growth per idle session, sessions created by GET /api/pages/greeting without credentials: awake (hibernation
    off) and idle (their pages hibernated, HIBERNATE_AFTER_SECONDS=1)."""
    target = 10_000 if quick else 100_000

    def measure(hibernate_after):
        port = free_port()
        settings = {"MAX_SESSIONS": 2_000_000, "HIBERNATE_AFTER_SECONDS": hibernate_after}
        with Server(demo_command(port, settings), port) as server:
            def rss_kib():
                return process_rss_kib(server.process.pid)

            def metric(name):
                return int(metric_value(port, name))

            # Warm up (allocator arenas, first pages), then measure from there.
            subprocess.run(["wrk", "-t2", "-c32", "-d1s", f"http://127.0.0.1:{port}/api/pages/greeting"],
                           capture_output=True)
            time.sleep(0.5)
            if hibernate_after:
                poll_until(lambda: metric("mvvmr_page_hibernations_total") >= metric("mvvmr_sessions_live"), 30)
            sessions_before, rss_before = metric("mvvmr_sessions_live"), rss_kib()
            hibernated_before = metric("mvvmr_page_hibernations_total")
            os.makedirs(OUT, exist_ok=True)
            script = os.path.join(OUT, "count.lua")
            with open(script, "w") as output:
                output.write(f"""
local done = 0
response = function()
  done = done + 1
  if done >= {target // 2} then wrk.thread:stop() end
end
""")
            # wrk runs its whole duration even once its threads stopped at the target, so the duration is a bound,
            # not a wait: 30 s is room for 10,000 sessions at 350 a second.
            duration = "30s" if quick else "120s"
            subprocess.run(["wrk", "-t2", "-c32", f"-d{duration}", "-s", script,
                            f"http://127.0.0.1:{port}/api/pages/greeting"], capture_output=True, check=True)
            time.sleep(1.0)
            created = metric("mvvmr_sessions_live") - sessions_before
            hibernated = 0
            if hibernate_after:
                # Every session's page hibernates within a second or two of its last request (the sweep runs every
                # second); then the sweep's trim gives the freed pages back.
                poll_until(lambda: metric("mvvmr_page_hibernations_total") - hibernated_before >= created, 60)
                time.sleep(2.5)
                hibernated = metric("mvvmr_page_hibernations_total") - hibernated_before
            rss_after = rss_kib()
        return created, rss_before, rss_after, hibernated

    awake = measure(0)
    idle = measure(1)
    rows = {}
    for name, (created, rss_before, rss_after, _) in [("awake", awake), ("idle", idle)]:
        rows[name] = (rss_after - rss_before) * 1024 / max(1, created)
    per_session = rows["idle"]
    table = [
        "| figure | awake (hibernation off) | idle (pages hibernated) | target |",
        "|---|---:|---:|---:|",
        f"| sessions created | {awake[0]:,} | {idle[0]:,} | {target:,} |",
        f"| pages hibernated | – | {idle[3]:,} | |",
        f"| RSS before → after | {awake[1] / 1024:,.1f} MiB → {awake[2] / 1024:,.1f} MiB | "
        f"{idle[1] / 1024:,.1f} MiB → {idle[2] / 1024:,.1f} MiB | |",
        f"| RSS growth per session (greeting page bound) | {rows['awake']:,.0f} bytes | {rows['idle']:,.0f} bytes "
        "| ≤ 2,048 bytes idle |",
        "",
        "References: Phoenix LiveView starts around 40 KB per live view process; Blazor Server plans about 250 KB per circuit.",
    ]
    method = ("Release `mvvmr-demo` on a fresh SQLite session store (each session's records are in the file, not in "
              "memory); after a 1 s warm-up, `wrk` sends `GET /api/pages/greeting` without credentials, so "
              "every request creates a session bound to the greeting page; RSS (`VmRSS`) and `mvvmr_sessions_live` are "
              "read before and after. Two servers, one after the other: one with `HIBERNATE_AFTER_SECONDS=0` (every "
              "page stays awake: its View/ViewModel pair and streams in memory), one with `HIBERNATE_AFTER_SECONDS=1` "
              "(the demo's default is 15 s): a page idle for a second keeps only its document, and the harness waits "
              "until `mvvmr_page_hibernations_total` counts every session's page, then 2.5 s for the sweep's trim.")
    failures = []
    if quick and per_session > MEMORY_QUICK_BOUND_BYTES:
        failures.append(f"memory: {per_session:,.0f} bytes per idle session, above the quick bound "
                        f"{MEMORY_QUICK_BOUND_BYTES:,}")
    return "memory", "Memory per session", method, table, per_session, failures


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
    # Every stream comes from 127.0.0.1: no per-address limits (128 connections, 64 streams by default) here.
    environment = {"PORT": port, "HOST": "127.0.0.1", "LOG_LEVEL": "error", "MAX_CONNECTIONS": count + 1_000,
                   "MAX_CONNECTIONS_PER_IP": 0, "MAX_STREAMS_PER_IP": count + 1_000, "MAX_SESSIONS": count + 1_000, "DATA_DIR": os.path.join(ROOT, "Data")}
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

        missing = read_until(b"retry: ", 120)
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


def section_stream_memory(quick):
    """RSS per idle SSE stream: many streams opened on the release demo, RSS read before and after."""
    count = 500 if quick else 2_000
    per_address = 50  # under MAX_CONNECTIONS_PER_IP (128) and MAX_STREAMS_PER_IP (64)
    per_session = 4  # under MAX_STREAMS_PER_SESSION (8)
    port = free_port()
    with Server(demo_command(port), port) as server:
        def rss_bytes():
            return process_rss_kib(server.process.pid) * 1024

        def open_streams(total, first_address):
            streams = []
            for index in range(total):
                sock = socket.socket()
                sock.setsockopt(socket.IPPROTO_IP, 24, 1)  # IP_BIND_ADDRESS_NO_PORT
                sock.bind((f"127.0.{first_address}.{1 + index // per_address}", 0))
                sock.connect(("127.0.0.1", port))
                sock.sendall((f"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Session-ID: "
                              f"{sessions[index // per_session]}\r\nAccept: text/event-stream\r\n\r\n").encode())
                streams.append(sock)
            for sock in streams:
                sock.settimeout(10)
                if not sock.recv(65536).startswith(b"HTTP/1.1 200"):
                    raise RuntimeError("a stream did not open")
            return streams

        sessions = [http_json(port, "POST", "/api/sessions", {})[1]["session"] for _ in range(count // per_session + 1)]
        for sock in open_streams(100, first_address=200):  # warm-up: allocator arenas, first pages
            sock.close()
        time.sleep(1.0)
        before = rss_bytes()
        streams = open_streams(count, first_address=1)
        time.sleep(1.0)  # every stream has sent its first bytes and is idle (suspended)
        after = rss_bytes()
        for sock in streams:
            sock.close()
    per_stream = (after - before) / count
    table = [
        "| figure | measured | target |",
        "|---|---:|---:|",
        f"| idle SSE streams open | {count:,} | |",
        f"| RSS before → after | {before / 1048576:,.1f} MiB → {after / 1048576:,.1f} MiB | |",
        f"| RSS per idle stream | {per_stream:,.0f} bytes | ≤ 8,192 bytes |",
        "",
        "Before (32 KiB connection pool, 16 KiB callback block, send buffer kept while idle; commit 279b738): 29,516 "
        "bytes per stream, measured the same way on 2026-12-01. With streams still served by libmicrohttpd and its "
        "12 KiB pool (commit 627b494): 12,102 bytes per stream (Tests/system/test_stream_resources.py, debug build, "
        "1,500 streams, 2026-12-01).",
    ]
    method = ("Release `mvvmr-demo` on its defaults. The harness creates one session per four streams, opens and closes "
              "100 streams to warm up, reads `VmRSS` from /proc, opens the streams (`GET /api/events`, 50 per source "
              "address 127.0.1.x), waits 1 s for every stream to send its first bytes and go idle, and reads `VmRSS` "
              "again. MicroHTTP serves each stream itself once its handler has answered (libmicrohttpd frees the "
              "connection and its pool), so a stream holds its `EventStream` (no buffer while idle), its entries in the "
              "server's tables and the session's, and the kernel's socket, whatever `maxHeaderBytes` is; see "
              "docs/HTTP.md, \"Memory per connection\".")
    return "stream-memory", "Memory per idle event stream", method, table, None


def section_connection_memory(quick):
    """RSS per idle kept-alive connection, on each HTTP engine: connections opened on the release demo, each after one
    request, RSS read before and after."""
    count = 1_000 if quick else 5_000
    rows = []
    for engine in ("epoll", "libmicrohttpd"):
        port = free_port()
        environment = {"MICROHTTP_ENGINE": engine, "MAX_CONNECTIONS_PER_IP": "0", "REQUEST_HEADER_TIMEOUT_SECONDS": "0",
                       "CONNECTION_TIMEOUT_SECONDS": "600"}
        with Server(demo_command(port, environment), port) as server:
            def open_connections(total):
                connections = []
                for _ in range(total):
                    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
                    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                    if not sock.recv(65536).startswith(b"HTTP/1.1 200"):
                        raise RuntimeError("a request was not answered")
                    connections.append(sock)
                return connections
            for sock in open_connections(100):  # warm-up: allocator arenas, first pages
                sock.close()
            time.sleep(1.0)
            before = process_rss_kib(server.process.pid) * 1024
            connections = open_connections(count)
            time.sleep(1.0)
            after = process_rss_kib(server.process.pid) * 1024
            for sock in connections:
                sock.close()
        rows.append((engine, before, after, (after - before) / count))
    table = [
        "| engine | idle kept-alive connections | RSS before → after | RSS per connection |",
        "|---|---:|---|---:|",
    ] + [f"| {engine} | {count:,} | {before / 1048576:,.1f} MiB → {after / 1048576:,.1f} MiB | {per:,.0f} bytes |"
         for engine, before, after, per in rows]
    method = ("Release `mvvmr-demo` on each engine (`MICROHTTP_ENGINE`), without the per-address limit and the header "
              "deadline (so that the connections stay open while they are counted). The harness opens and closes 100 "
              "connections to warm up, reads `VmRSS` from /proc, opens the connections, each sending one "
              "`GET /healthz` and reading its answer, then leaving the connection open and idle, waits 1 s and reads "
              "`VmRSS` again. libmicrohttpd holds each connection's memory pool (`maxHeaderBytes` + 4 KiB, zeroed and "
              "resident); the epoll engine holds an `EpollConnection` and nothing else (docs/HTTP.md).")
    return "connection-memory", "Memory per idle connection", method, table, None


# Soak (section_soak): mixed traffic over a fixed set of sessions for a long while, watching the server's memory and
# descriptors. The session set stays SOAK_SESSIONS strong (a new session replaces, and deletes, an old one), so what
# the server holds is bounded by what each session may hold: MAX_SESSION_BYTES (1 MiB) each, plus allocator slack.
# A leak of 100 bytes per request passes that bound within the quick run (some 9,000 requests/s here for 40 s).
SOAK_SESSIONS = 16
SOAK_WORKERS = 4                 # threads, each with one keep-alive connection (far below MAX_CONNECTIONS_PER_IP)
SOAK_STREAMS_PER_WORKER = 3      # SSE streams a worker keeps open at once, opened and closed as it goes
SOAK_QUICK_SECONDS = 40
SOAK_RSS_SLACK_MIB = 8           # allocator arenas and caches beyond the sessions' own bound
SOAK_DESCRIPTOR_SLACK = 2        # descriptors the server may open lazily (files it reads on first use); at most 1 seen
SOAK_HEARTBEAT_SECONDS = 5       # a closed stream is noticed at once (hang-up watcher); at its next write at the latest
SOAK_SETTLE_SECONDS = 2 * SOAK_HEARTBEAT_SECONDS + 2


def section_soak(quick, seconds=None):
    """Mixed traffic on loopback for a configured time, sampling the server's RSS and open descriptors every second."""
    import http.client
    import json as json_module
    import random
    import threading

    seconds = seconds or (SOAK_QUICK_SECONDS if quick else 300)
    warm_up = max(5.0, seconds * 0.2)
    rss_bound_mib = SOAK_SESSIONS * 1 + SOAK_RSS_SLACK_MIB
    port = free_port()
    # The server's standard error is kept, so that a crash under the soak shows its message and backtrace.
    server_log = os.path.join(tempfile.gettempdir(), f"mvvmr-soak-server-{port}.log")
    with Server(demo_command(port, {"HEARTBEAT_SECONDS": SOAK_HEARTBEAT_SECONDS}), port, stderr_path=server_log) as server:
        pid = server.process.pid

        def rss_kib():
            return process_rss_kib(pid)

        def descriptors():
            return len(os.listdir(f"/proc/{pid}/fd"))

        time.sleep(0.5)
        start_rss, start_descriptors = rss_kib(), descriptors()
        samples = []  # (seconds since start, RSS KiB, descriptors)
        lock = threading.Lock()
        counts = {}      # kind → requests answered as expected
        errors = {}      # kind → unexpected answers or broken connections
        error_examples = []
        stop = threading.Event()
        began = time.perf_counter()

        def record(kind, ok, detail=""):
            with lock:
                table = counts if ok else errors
                table[kind] = table.get(kind, 0) + 1
                if not ok and len(error_examples) < 5:
                    error_examples.append(f"{kind}: {detail}")

        def new_session(connection):
            connection.request("POST", "/api/sessions", body=json_module.dumps({"unit": "counters"}),
                               headers={"Content-Type": "application/json"})
            response = connection.getresponse()
            payload = response.read()
            return json_module.loads(payload)["session"] if response.status == 201 else None

        setup = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        sessions = [new_session(setup) for _ in range(SOAK_SESSIONS)]
        setup.close()
        if None in sessions:
            raise RuntimeError("the soak could not create its sessions")

        def sampler():
            while not stop.is_set():
                samples.append((time.perf_counter() - began, rss_kib(), descriptors()))
                stop.wait(1.0)

        def open_stream(session, last_event_id):
            stream = socket.create_connection(("127.0.0.1", port), timeout=5)
            extra = f"Last-Event-ID: {last_event_id}\r\n" if last_event_id is not None else ""
            stream.sendall(f"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Session-ID: {session}\r\n{extra}\r\n".encode())
            received = b""
            while b"\r\n\r\n" not in received or (received.startswith(b"HTTP/1.1 200") and b"retry: " not in received):
                chunk = stream.recv(65536)
                if not chunk:
                    break
                received += chunk
            return stream, received

        def worker(seed):
            chooser = random.Random(seed)
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            streams = []
            last_keyed = None  # (session, key, body) of the last action sent with an Idempotency-Key

            def call(method, path, body=None, headers=None):
                nonlocal connection
                try:
                    connection.request(method, path, body=body, headers=headers or {})
                    response = connection.getresponse()
                    return response.status, response.read(), response.getheader("Idempotent-Replayed")
                except (OSError, http.client.HTTPException):
                    connection.close()
                    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                    raise

            def expect(kind, outcome, statuses, session=None):
                status = outcome[0]
                if status in statuses:
                    record(kind, True)
                elif session is not None and session not in sessions and (
                        400 <= status < 500 or (status == 503 and b"store_unavailable" in outcome[1])):
                    # Another worker deleted it meanwhile: 404 unknown_session, or 409 page_not_bound when the
                    # request found the session just before the delete released its pages. Or 503
                    # store_unavailable: a request restored the session from the store before the delete while the
                    # copy being deleted still had an input on its way to the store; the store's number fence
                    # refused the restored copy's next record (a retry finds the session gone: 404).
                    record("raced a deleted session", True)
                else:
                    record(kind, False, f"status {status}: {outcome[1][:160]!r}")

            kinds = ["page read", "action", "keyed action", "stream", "new session", "bad request"]
            weights = [30, 30, 15, 8, 4, 13]
            while not stop.is_set():
                kind = chooser.choices(kinds, weights)[0]
                session = chooser.choice(sessions)
                headers = {"X-Session-ID": session, "Content-Type": "application/json"}
                try:
                    if kind == "page read":
                        unit = chooser.choice(["counters", "greeting"])
                        expect(kind, call("GET", f"/api/pages/{unit}", headers=headers), {200}, session)
                    elif kind == "action":
                        body = json_module.dumps({"action": "increment", "value": chooser.randint(1, 10)})
                        expect(kind, call("POST", "/api/pages/counters/actions", body, headers), {200}, session)
                    elif kind == "keyed action":
                        if last_keyed and chooser.random() < 0.4 and last_keyed[0] in sessions:
                            keyed_session, key, body = last_keyed  # a retry: must be replayed
                        else:
                            keyed_session, key = session, f"soak-{seed}-{chooser.getrandbits(64):x}"
                            body = json_module.dumps({"action": "increment", "value": chooser.randint(1, 10)})
                            last_keyed = (keyed_session, key, body)
                        outcome = call("POST", "/api/pages/counters/actions", body,
                                       {"X-Session-ID": keyed_session, "Idempotency-Key": key})
                        expect(kind, outcome, {200}, keyed_session)
                    elif kind == "stream":
                        if len(streams) >= SOAK_STREAMS_PER_WORKER or (streams and chooser.random() < 0.5):
                            streams.pop(chooser.randrange(len(streams))).close()
                            record("stream closed", True)
                        else:
                            stream, head = open_stream(session, chooser.choice([None, 0, 10 ** 20]))
                            if head.startswith(b"HTTP/1.1 200") and b"retry: " in head:
                                streams.append(stream)
                                record(kind, True)
                            elif head.startswith(b"HTTP/1.1 429"):
                                stream.close()
                                record("stream refused (limit)", True)
                            else:
                                stream.close()
                                expect(kind, (int(head[9:12] or b"0"), head), set(), session)
                    elif kind == "new session":
                        fresh = new_session(connection)
                        if fresh is None:
                            record(kind, False, "POST /api/sessions did not answer 201")
                            continue
                        with lock:
                            slot = chooser.randrange(len(sessions))
                            old, sessions[slot] = sessions[slot], fresh
                        expect(kind, call("DELETE", "/api/session", headers={"X-Session-ID": old}), {204, 404})
                    else:
                        case = chooser.randrange(6)
                        if case == 0:
                            outcome = call("POST", "/api/pages/counters/actions", "{not json", headers)
                        elif case == 1:
                            outcome = call("POST", "/api/pages/counters/actions", '{"action":"explode"}', headers)
                        elif case == 2:
                            outcome = call("POST", "/api/pages/counters/actions", '{"action":"increment","value":1,"rev":0.5}', headers)
                        elif case == 3:
                            outcome = call("GET", "/api/events", headers={"X-Session-ID": session, "Last-Event-ID": "-3"})
                        elif case == 4:
                            outcome = call("GET", "/api/pages/%zz", headers=headers)
                        else:
                            outcome = call("GET", "/api/pages/counters", headers={"X-Session-ID": "not-a-session"})
                        expect(kind, outcome, set(range(400, 500)))
                except (OSError, http.client.HTTPException, ValueError) as error:
                    record(kind, False, repr(error))
            for stream in streams:
                stream.close()
            connection.close()

        threads = [threading.Thread(target=sampler, daemon=True)]
        threads += [threading.Thread(target=worker, args=(seed,), daemon=True) for seed in range(SOAK_WORKERS)]
        for thread in threads:
            thread.start()
        time.sleep(warm_up)
        warm_rss = rss_kib()
        time.sleep(max(0.0, seconds - warm_up))
        stop.set()
        for thread in threads:
            thread.join(timeout=30)
        traffic_seconds = time.perf_counter() - began
        # Every client socket is closed now; the server drops a closed stream at its next write (a heartbeat at the
        # latest). Wait until it is back at its starting count, or the settling time is up.
        settle_began = time.perf_counter()
        end_descriptors = descriptors()
        while end_descriptors > start_descriptors and time.perf_counter() - settle_began < SOAK_SETTLE_SECONDS:
            time.sleep(0.5)
            end_descriptors = descriptors()
        settle_seconds = time.perf_counter() - settle_began
        end_rss = rss_kib()
        samples.append((time.perf_counter() - began, end_rss, end_descriptors))
    peak_rss = max(sample[1] for sample in samples)
    peak_descriptors = max(sample[2] for sample in samples)
    answered = sum(counts.values())
    failed = sum(errors.values())
    growth_mib = (end_rss - warm_rss) / 1024
    failures = []
    if end_descriptors > start_descriptors + SOAK_DESCRIPTOR_SLACK:
        failures.append(f"soak: {end_descriptors} descriptors open after the traffic and {settle_seconds:.0f} s of settling, "
                        f"{start_descriptors} at the start (slack {SOAK_DESCRIPTOR_SLACK}): a descriptor leak")
    if growth_mib > rss_bound_mib:
        failures.append(f"soak: RSS grew {growth_mib:.1f} MiB after the warm-up, above the {rss_bound_mib} MiB bound")
    if failed:
        failures.append(f"soak: {failed} unexpected answers or broken connections, e.g. {error_examples}")
        with open(server_log, errors="replace") as log_file:
            tail = log_file.read()[-3000:]
        if tail.strip():
            failures.append(f"soak: the server's standard error ({server_log}) ends with:\n{tail}")
    mib = lambda kib: f"{kib / 1024:,.1f} MiB"  # noqa: E731
    table = [
        "| figure | measured | bound |",
        "|---|---:|---:|",
        f"| traffic | {traffic_seconds:,.0f} s, {answered + failed:,} requests ({(answered + failed) / traffic_seconds:,.0f}/s) | |",
        f"| RSS start → after {warm_up:.0f} s warm-up → peak → end | {mib(start_rss)} → {mib(warm_rss)} → {mib(peak_rss)} → {mib(end_rss)} | |",
        f"| RSS growth after the warm-up | {growth_mib:+.1f} MiB | ≤ {rss_bound_mib} MiB |",
        f"| descriptors start → peak → end (after {settle_seconds:.1f} s settling) | {start_descriptors} → {peak_descriptors} → {end_descriptors} | end ≤ start + {SOAK_DESCRIPTOR_SLACK} |",
        f"| unexpected answers or broken connections | {failed:,} | 0 |",
        *[f"| {kind} | {count:,} | |" for kind, count in sorted(counts.items())],
    ]
    method = (f"Release `mvvmr-demo` with its defaults (a fresh SQLite session store, process durability) but "
              f"`HEARTBEAT_SECONDS={SOAK_HEARTBEAT_SECONDS}` (so closed streams "
              f"are noticed sooner). {SOAK_WORKERS} Python threads, each on one keep-alive "
              f"connection from 127.0.0.1, send for {seconds} s a random mix over {SOAK_SESSIONS} counters sessions: page "
              "reads (counters, greeting), `increment` actions, actions with an `Idempotency-Key` (40 % of them retries "
              f"of the thread's last key, which must be replayed), SSE streams (up to {SOAK_STREAMS_PER_WORKER} open per "
              "thread, opened without, with `0` and with a 20-digit `Last-Event-ID`, closed at random), new sessions "
              "(each replaces one of the set and deletes it, so the set stays the same size) and bad requests (broken "
              "JSON, unknown action, fractional `rev`, negative `Last-Event-ID`, bad escape, unknown session), each "
              "checked for its expected status (a session another thread deleted meanwhile may answer 4xx, or 503 "
              "`store_unavailable` when the store's number fence refused a copy restored just before the delete: "
              "counted as raced). RSS (`VmRSS`) and descriptors (`/proc/PID/fd`) are sampled every second. "
              f"Bounds (`--quick` fails beyond them): descriptors after the streams closed and at most "
              f"{SOAK_SETTLE_SECONDS} s of settling (a closed stream is noticed at once, by the server's hang-up "
              f"watcher, and at its next write, the heartbeat, at the latest) within {SOAK_DESCRIPTOR_SLACK} of the start; RSS growth after the warm-up within "
              f"{SOAK_SESSIONS} sessions × 1 MiB (MAX_SESSION_BYTES) + {SOAK_RSS_SLACK_MIB} MiB of allocator slack; no "
              "unexpected answer.")
    return "soak", "Soak", method, table, None, failures


# Instruction budgets (section_callgrind). Counts per request repeat within 0.4 % from run to run on a busy machine
# (eight runs, 2026-11-30: listener and page read within 0.06 %, the action within 0.35 %), so the tolerance is not
# there for noise: 10 % is some 30 times the widest spread; it lets small changes through and stops a real regression.
BUDGETS_JSON = os.path.join(ROOT, "Benchmarks/budgets.json")
CALLGRIND_WARMUP = 200      # requests sent before the counters are zeroed
CALLGRIND_REQUESTS = 2000   # requests counted, on one keep-alive connection
DEFAULT_TOLERANCE = 0.10    # a count may exceed its budget by this fraction
FAR_BELOW = 0.25            # a count this much below its budget suggests recording the budgets again


def callgrind_environment():
    """The environment of a server under callgrind (and of callgrind_control, which must see the same USER and HOST)."""
    # Swift seeds its hashing randomly per process; a fixed seed makes dictionary work repeatable. valgrind names the
    # pipes that callgrind_control reaches it by after the USER and HOST environment variables, so the server and
    # callgrind_control must see the same ones: the demo gets its address as a flag, never as HOST.
    environment = dict(os.environ, SWIFT_DETERMINISTIC_HASHING="1", LOG_LEVEL="error")
    # glibc clears and copies large blocks with `rep stosb` / `rep movsb` on CPUs that have ERMS, and callgrind counts
    # one instruction per byte for them: libmicrohttpd's clearing of its connection pool alone (32 KiB per request)
    # would count about 49,000 of the C server's 57,000 instructions per request, hiding the servers' own work and
    # making the counts depend on the CPU. These tunables make glibc use its vector loops at every size, as it does on
    # CPUs without ERMS (then the clearing counts about 2,700); they change no behaviour.
    environment["GLIBC_TUNABLES"] = ":".join(filter(None, [
        os.environ.get("GLIBC_TUNABLES"),
        "glibc.cpu.x86_rep_stosb_threshold=4294967295",
        "glibc.cpu.x86_rep_movsb_threshold=4294967295",
    ]))
    return environment


@contextlib.contextmanager
def callgrind_server(name, command, port):
    """Runs the server `command` (listening on `port`) under callgrind; yields `count(action)`, which zeroes the
    counters, runs `action()`, dumps the counters and returns the instructions executed meanwhile (event Ir, user
    space, every thread of the server). The client (`action`) is this process, so only the server's work counts."""
    directory = os.path.join(OUT, "callgrind")
    os.makedirs(directory, exist_ok=True)
    out_file = os.path.join(directory, f"{name}.out")
    for stale in glob.glob(out_file + "*"):
        os.remove(stale)
    environment = callgrind_environment()
    valgrind = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}", *command]

    def control(action, pid):
        answer = subprocess.run(["callgrind_control", action, str(pid)], env=environment, capture_output=True,
                                text=True, timeout=60)
        if answer.returncode != 0 or "OK" not in answer.stdout:
            raise RuntimeError(f"callgrind_control {action} {pid} failed: {answer.stdout}{answer.stderr}")

    def dumps():
        return sorted((path for path in glob.glob(out_file + ".*") if path.rsplit(".", 1)[1].isdigit()),
                      key=lambda path: int(path.rsplit(".", 1)[1]))

    with Server(valgrind, port, environment, start_timeout=60, stderr_path=os.path.join(directory, f"{name}.log"),
                stop_timeout=30) as server:
        def count(action):
            before = dumps()
            control("--zero", server.process.pid)
            action()
            control("--dump=measured", server.process.pid)
            # callgrind_control can answer OK without reaching the process (see above), so insist on the dump.
            new = [path for path in dumps() if path not in before]
            if len(new) != 1:
                raise RuntimeError(f"{name}: expected one new callgrind dump next to {out_file}, found {new}")
            totals = {}
            with open(new[0]) as dump:
                for line in dump:
                    if line.startswith(("summary:", "totals:")):
                        key, value = line.split(":", 1)
                        totals[key] = int(value.split()[0])
            instructions = totals.get("summary", totals.get("totals"))
            if instructions is None:
                raise RuntimeError(f"{name}: no summary or totals line in {new[0]}")
            return instructions
        yield count


def callgrind_per_request(name, command, port, prepare):
    """Instructions per request of the server `command` (listening on `port`), counted by valgrind's callgrind.

    `prepare(connection)` gets an http.client connection to the server, does any setup (creating a session) and
    returns `send()`, which sends one request on that connection, checks the answer and returns its body. After
    CALLGRIND_WARMUP requests the counters are zeroed (`callgrind_control --zero`), CALLGRIND_REQUESTS requests are
    sent on the same keep-alive connection, the counters are dumped (`callgrind_control --dump`), and the dump's
    total (event Ir: instructions executed in user space by every thread of the server) is divided by the number of
    requests. The client is another process, so only the server's instructions count. Returns (instructions per
    request, the last response's body)."""
    import http.client
    started = time.perf_counter()
    with callgrind_server(name, command, port) as count:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        send = prepare(connection)
        for _ in range(CALLGRIND_WARMUP):
            body = send()
        kept_alive = connection.sock
        bodies = []

        def measured():
            for _ in range(CALLGRIND_REQUESTS):
                bodies.append(send())
        instructions = count(measured)
        body = bodies[-1]
        if connection.sock is not kept_alive:
            raise RuntimeError(f"{name}: the server closed the keep-alive connection during the measurement")
        connection.close()
    per_request = instructions / CALLGRIND_REQUESTS
    log(f"  {name:>24}: {per_request:>10,.0f} instructions/request  ({time.perf_counter() - started:.1f} s)")
    return per_request, body


def http_sender(connection, method, path, body=None, headers=None):
    """`send()` for callgrind_per_request: one request on `connection`, which must answer 200."""
    def send():
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        payload = response.read()
        if response.status != 200:
            raise RuntimeError(f"{method} {path} answered {response.status}: {payload[:200]!r}")
        return payload
    return send


def demo_session(connection, unit):
    """Creates a session bound to `unit` on `connection`; returns its id."""
    connection.request("POST", "/api/sessions", body=json.dumps({"unit": unit}),
                       headers={"Content-Type": "application/json"})
    response = connection.getresponse()
    payload = response.read()
    if response.status not in (200, 201):
        raise RuntimeError(f"POST /api/sessions answered {response.status}: {payload[:200]!r}")
    return json.loads(payload)["session"]


def demo_flags(port, store="memory", durability="process", log_level="error"):
    """The release demo's command line for callgrind (flags, not environment: see callgrind_per_request).

    `store` is its SESSION_STORE: the memory store by default, so that the page read's and the action's counts are the
    session's own work; the action-sqlite kind names a SQLite file. `log_level` is `error` (no request lines) but for
    the page-read-logged kind (`info`, the default: a line per request)."""
    return [build_swift("mvvmr-demo"), "--port", str(port), "--host", "127.0.0.1", "--log-level", log_level,
            "--data-dir", os.path.join(ROOT, "Data"), "--public-dir", os.path.join(ROOT, "Public"),
            "--session-store", store, "--session-durability", durability]


def callgrind_kinds(quick):
    """Measures every request kind (and, outside the quick mode, the C references); returns {kind: count}."""
    counts = {}

    def measure(kind, command_for_port, prepare):
        port = free_port()
        counts[kind], body = callgrind_per_request(kind, command_for_port(port), port, prepare)
        return body

    def greeting_get(connection):
        return http_sender(connection, "GET", "/api/pages/greeting")

    if not quick:
        measure("c-server", lambda port: [build_c_server(), str(port)], greeting_get)
    measure("listener", lambda port: [build_swift("microhttp-bench"), str(port)], greeting_get)

    def page_read(connection):
        session = demo_session(connection, "greeting")
        return http_sender(connection, "GET", "/api/pages/greeting", headers={"X-Session-ID": session})

    page_body = measure("page-read", demo_flags, page_read)
    # The same read at the default log level: what a request's log line costs (its encoding on the request thread,
    # its copy into the log writer's buffer, the writer thread's batched writes).
    measure("page-read-logged", lambda port: demo_flags(port, log_level="info"), page_read)
    if not quick:
        os.makedirs(OUT, exist_ok=True)
        body_file = os.path.join(OUT, "callgrind-page-body.json")
        with open(body_file, "wb") as output:
            output.write(page_body)
        measure("c-server-page-body", lambda port: [build_c_server(), str(port), body_file], greeting_get)
        counts["page-body-bytes"] = len(page_body)

    def action(connection):
        session = demo_session(connection, "counters")
        return http_sender(connection, "POST", "/api/pages/counters/actions",
                           body=json.dumps({"action": "increment", "value": 1}),
                           headers={"X-Session-ID": session, "Content-Type": "application/json"})

    measure("action", demo_flags, action)

    def action_with_stream(connection):
        """The same increment with an event stream open on its session, as a browser client keeps one: each patch is
        also framed and sent down the stream, which a thread here drains. The last request waits until the stream
        carried a patch event for every increment, so their sending is counted, and fails the kind if it did not."""
        session = demo_session(connection, "counters")
        stream = socket.create_connection(("127.0.0.1", connection.port), timeout=60)
        stream.sendall(f"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Session-ID: {session}\r\n"
                       "Accept: text/event-stream\r\n\r\n".encode())
        received = {"patches": 0, "head": b""}
        ready = threading.Condition()

        def drain():
            tail = b""
            try:
                while chunk := stream.recv(65536):
                    text = tail + chunk
                    with ready:
                        if not received["head"]:
                            tail, text = b"", text
                            if b"\r\n\r\n" not in text:
                                tail = text
                                continue
                            received["head"], text = text.split(b"\r\n\r\n", 1)
                        received["patches"] += text.count(b"event: patch\n")
                        ready.notify_all()
                    tail = text[-16:]
            except OSError:
                pass
        threading.Thread(target=drain, daemon=True).start()
        # The stream is the session's once its answer began: increments sent before would not go down it.
        with ready:
            if not ready.wait_for(lambda: received["head"], timeout=60):
                raise RuntimeError("action-stream: the event stream did not answer")
        if not received["head"].startswith(b"HTTP/1.1 200"):
            raise RuntimeError(f"action-stream: the event stream answered {received['head'][:80]!r}")
        increment = http_sender(
            connection, "POST", "/api/pages/counters/actions", body=json.dumps({"action": "increment", "value": 1}),
            headers={"X-Session-ID": session, "Content-Type": "application/json"})
        sent = {"count": 0}

        def send():
            body = increment()
            sent["count"] += 1
            if sent["count"] == CALLGRIND_WARMUP + CALLGRIND_REQUESTS:
                with ready:
                    if not ready.wait_for(lambda: received["patches"] >= sent["count"], timeout=60):
                        raise RuntimeError(f"action-stream: the stream carried {received['patches']} patch events "
                                           f"for {sent['count']} increments")
                stream.close()
            return body
        return send

    measure("action-stream", demo_flags, action_with_stream)
    # The same action on the SQLite store (process durability, a fresh file): what logging each input to the file
    # adds. One request at a time, so every record is a transaction of its own (group commit groups nothing here).
    measure("action-sqlite", lambda port: demo_flags(port, store=f"sqlite:{fresh_sqlite_path('callgrind-action')}"),
            action)
    counts["restore"] = callgrind_restore()
    return counts


def callgrind_restore():
    """Instructions to restore a session of RESTORE_RECORDS records: its first GET after a restart, minus a GET of
    it once in memory. The log is written by a native server; the restarted one runs under callgrind."""
    import http.client
    path = fresh_sqlite_path("callgrind-restore")
    port = free_port()
    with Server(demo_command(port, dict(sqlite_store(path), **NO_COMPACTION)), port):
        [(identifier, _)] = make_logged_sessions(port, 1, RESTORE_RECORDS)
    port = free_port()
    started = time.perf_counter()
    with callgrind_server("restore", demo_flags(port, store=f"sqlite:{path}"), port) as count:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        warm = http_sender(connection, "GET", "/api/pages/counters",
                           headers={"X-Session-ID": demo_session(connection, "counters")})
        for _ in range(CALLGRIND_WARMUP):
            warm()
        send = http_sender(connection, "GET", "/api/pages/counters", headers={"X-Session-ID": identifier})
        first = count(send)
        reads = CALLGRIND_REQUESTS // 10
        per_read = count(lambda: [send() for _ in range(reads)]) / reads
        connection.close()
    restore = first - per_read
    log(f"  {'restore':>24}: {restore:>10,.0f} instructions ({restore / RESTORE_RECORDS:,.0f} per record; first GET "
        f"{first:,.0f}, in memory {per_read:,.0f})  ({time.perf_counter() - started:.1f} s)")
    return restore


BUDGETED_KINDS = {
    "listener": "`microhttp-bench`: `GET /api/pages/greeting`",
    "page-read": "`mvvmr-demo`: `GET /api/pages/greeting` of an existing session",
    "page-read-logged": "`mvvmr-demo --log-level info` (the default): the same read, with its request log line",
    "action": "`mvvmr-demo`: `POST /api/pages/counters/actions` (increment)",
    "action-stream": "`mvvmr-demo`: the same increment with an event stream open on the session (its patch framed "
                     "and sent down the stream too)",
    "action-sqlite": "`mvvmr-demo`, SQLite store (process durability): the same increment",
    "restore": f"`mvvmr-demo`, SQLite store: restore of a {RESTORE_RECORDS:,}-record session (its first `GET`, less an "
               "in-memory `GET`; per restore, not per request)",
}


def tool_versions():
    """What the counts depend on besides the code: the toolchain and libraries (recorded with the budgets)."""
    def first_line(command):
        try:
            answer = subprocess.run(command, capture_output=True, text=True, timeout=60)
            return (answer.stdout or answer.stderr).strip().splitlines()[0]
        except (OSError, IndexError, subprocess.TimeoutExpired):
            return "unknown"
    return {
        "valgrind": first_line(["valgrind", "--version"]),
        "libmicrohttpd": first_line(["pkg-config", "--modversion", "libmicrohttpd"]),
        "glibc": first_line(["ldd", "--version"]),
        "jemalloc": first_line(["pkg-config", "--modversion", "jemalloc"]),
        "swift": first_line(["swift", "--version"]),
        "machine": machine_description(),
    }


def load_budgets():
    if not os.path.exists(BUDGETS_JSON):
        return None
    with open(BUDGETS_JSON) as budgets:
        return json.load(budgets)


def record_budgets(counts, previous):
    previous_kinds = (previous or {}).get("kinds", {})
    budgets = {
        "about": ("Instructions per request (valgrind callgrind, event Ir, user space, every server thread), "
                  "written by `python3 Benchmarks/run.py callgrind --record-budgets`. `python3 Benchmarks/run.py "
                  "--quick` fails when a count exceeds instructions_per_request x (1 + tolerance). The restore kind "
                  f"counts one whole restore (of a {RESTORE_RECORDS:,}-record session), not a request."),
        "recorded": datetime.date.today().isoformat(),
        "recorded_with": tool_versions(),
        "warmup_requests": CALLGRIND_WARMUP,
        "counted_requests": CALLGRIND_REQUESTS,
        "kinds": {
            kind: {
                "instructions_per_request": round(counts[kind]),
                "tolerance": previous_kinds.get(kind, {}).get("tolerance", DEFAULT_TOLERANCE),
            }
            for kind in BUDGETED_KINDS
        },
    }
    with open(BUDGETS_JSON, "w") as output:
        json.dump(budgets, output, indent=2)
        output.write("\n")
    log(f"  recorded budgets in {os.path.relpath(BUDGETS_JSON, ROOT)}")
    return budgets


def check_budgets(counts, budgets):
    """Returns (failures, notes): counts over budget x (1 + tolerance) fail; counts far below suggest re-recording."""
    failures, notes = [], []
    if budgets is None:
        return [f"no {os.path.relpath(BUDGETS_JSON, ROOT)}; record it with "
                "`python3 Benchmarks/run.py callgrind --record-budgets`"], notes
    if (budgets.get("warmup_requests"), budgets.get("counted_requests")) != (CALLGRIND_WARMUP, CALLGRIND_REQUESTS):
        notes.append("the budgets were recorded with other request counts; record them again")
    recorded_with = budgets.get("recorded_with", {})
    current = tool_versions()
    for tool in ("valgrind", "libmicrohttpd", "glibc", "jemalloc", "swift"):
        if recorded_with.get(tool) != current[tool]:
            notes.append(f"the budgets were recorded with {tool} {recorded_with.get(tool)!r}, this machine has "
                         f"{current[tool]!r}: counts may differ for that reason alone")
    for kind in BUDGETED_KINDS:
        entry = budgets.get("kinds", {}).get(kind)
        if entry is None:
            failures.append(f"callgrind {kind}: no budget recorded; record them with "
                            "`python3 Benchmarks/run.py callgrind --record-budgets`")
            continue
        budget, tolerance = entry["instructions_per_request"], entry.get("tolerance", DEFAULT_TOLERANCE)
        limit = budget * (1 + tolerance)
        measured = counts[kind]
        if measured > limit:
            failures.append(f"callgrind {kind}: {measured:,.0f} instructions/request exceed the budget {budget:,} "
                            f"+ {tolerance:.0%} = {limit:,.0f} (Benchmarks/budgets.json)")
        elif measured < budget * (1 - FAR_BELOW):
            notes.append(f"callgrind {kind}: {measured:,.0f} instructions/request, {1 - measured / budget:.0%} below "
                         f"the budget {budget:,}; record the budgets again to keep the gain "
                         "(`python3 Benchmarks/run.py callgrind --record-budgets`)")
    return failures, notes


# The profile section: where a request's CPU time goes, kernel included, sampled by `perf` (cpu-clock, so it works on
# virtual machines without hardware counters) while `wrk` loads the server. Shared objects are grouped as below.
PROFILE_SECONDS = 5
PROFILE_FREQUENCY = 499  # samples a second per CPU: enough for a share to the percent, little overhead
PROFILE_GROUPS = [
    ("kernel (system calls, TCP, scheduling)", lambda dso: dso.startswith("[kernel")),
    ("libmicrohttpd", lambda dso: dso.startswith("libmicrohttpd")),
    ("Swift runtime (reference counting, metadata, generics)", lambda dso: dso.startswith("libswift")),
    ("the server's own code", lambda dso: dso in ("mvvmr-demo", "c-server")),
    ("C library and allocator (copies, malloc, locks)", lambda dso: dso.startswith(("libc.", "libjemalloc", "libm."))),
    ("SQLite", lambda dso: dso.startswith("libsqlite3")),
]
PROFILE_TOP_SYMBOLS = 12


def perf_report(data, sort):
    """(percent, name) rows of `perf report --sort sort` for the samples in `data`, largest first."""
    output = subprocess.run(["perf", "report", "-i", data, "--stdio", "--no-children", "--sort", sort, "-q"],
                            capture_output=True, text=True, check=True).stdout
    rows = []
    for line in output.splitlines():
        match = re.match(r"\s*([\d.]+)%\s+(.*\S)", line)
        if match:
            rows.append((float(match.group(1)), match.group(2)))
    return rows


def demangled(names):
    """Swift symbols demangled (simplified) by the toolchain's `swift demangle`; other names as they are."""
    answer = subprocess.run(["swift", "demangle", "--simplified"], input="\n".join(names), capture_output=True,
                            text=True)
    lines = answer.stdout.splitlines() if answer.returncode == 0 else []
    return lines if len(lines) == len(names) else names


def profiled(name, opened, seconds):
    """Runs `opened()`'s load for `seconds` while `perf record` samples its server; returns the load's figures and the
    groups' and symbols' shares of the server's samples."""
    os.makedirs(OUT, exist_ok=True)
    data = os.path.join(OUT, "perf-" + re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") + ".data")
    with opened() as load:
        load(1)
        recorder = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-F", str(PROFILE_FREQUENCY),
                                     "-p", str(load.pid), "-o", data, "--", "sleep", str(seconds + 1)],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)  # perf attaches to every thread of the server before the load starts
        figures = load(seconds)
        if recorder.wait(timeout=seconds + 30) != 0:
            raise RuntimeError(f"perf record of {name} failed")
    dsos = perf_report(data, "dso")
    symbols = perf_report(data, "dso,sym")
    return figures, dsos, symbols


def section_profile(quick):
    """Where the server's CPU time goes per request, for the C server and MVVMR, by shared object and by function."""
    seconds = 2 if quick else PROFILE_SECONDS
    page_file, _, page_headers = page_read_body_file()
    action_file, _, action_headers = action_body_file()
    script, c_sessions = action_script(), os.path.join(OUT, "sessions-c-server.txt")
    with open(c_sessions, "w") as output:
        output.write("".join(f"c-server-session-{index}\n" for index in range(256)))
    workloads = [
        ("C, the page read's bytes", c_server(page_file, page_headers)),
        ("page read, logs off", logged_page_read("error")),
        ("page read, request logs", logged_page_read("info")),
        ("C, the action's POSTs", c_server(action_file, action_headers, script=script, script_arguments=[c_sessions])),
        ("action, memory store", action_contender(lambda: MEMORY_STORE)),
        ("action, SQLite store", action_contender(lambda: sqlite_store(fresh_sqlite_path("profile"), "process"))),
    ]
    group_names = [group for group, _ in PROFILE_GROUPS] + ["other"]
    header = ["| load | req/s | server CPU µs/request | " + " | ".join(group_names) + " |",
              "|---|---:|---:|" + "---:|" * len(group_names)]
    rows, top_tables, ratio = [], [], None
    rates = {}
    for name, opened in workloads:
        (rate, _, _, user, system), dsos, symbols = profiled(name, opened, seconds)
        rates[name] = rate
        cpu = (user or 0) + (system or 0)
        shares = dict.fromkeys(group_names, 0.0)
        for percent, dso in dsos:
            group = next((group for group, matches in PROFILE_GROUPS if matches(dso)), "other")
            shares[group] += percent
        total = sum(shares.values()) or 100.0
        cells = [f"{cpu * shares[group] / total:.2f} ({shares[group] / total * 100:.0f} %)" for group in group_names]
        rows.append(f"| {name} | {rate:,.0f} | {cpu:.2f} | " + " | ".join(cells) + " |")
        log(f"  {name}: {rate:,.0f} req/s, {cpu:.2f} µs CPU/request; " +
            ", ".join(f"{group.split(' (')[0]} {shares[group] / total * 100:.0f} %" for group in group_names))
        if not name.startswith("C,"):
            top = symbols[:PROFILE_TOP_SYMBOLS]
            names = demangled([symbol.split("[.] ", 1)[-1].split("[k] ", 1)[-1] for _, symbol in top])
            table = [f"**{name}**: the {len(top)} functions with the most samples (share of the server's CPU time; "
                     "`[k]` kernel)", "", "| share | function | in |", "|---:|---|---|"]
            for (percent, symbol), pretty in zip(top, names):
                where = symbol.split()[0]
                kernel = " `[k]`" if "[k]" in symbol else ""
                pretty = pretty.replace("|", "\\|")
                if len(pretty) > 110:
                    pretty = pretty[:107] + "…"
                table.append(f"| {percent:.1f} % | `{pretty}`{kernel} | {where} |")
            top_tables += [""] + table
    if rates.get("C, the page read's bytes"):
        ratio = rates["page read, logs off"] / rates["C, the page read's bytes"]
    table = [*header, *rows, "",
             "Server CPU per request is the server process's user and system time over the requests `wrk` counted "
             "(one run each, under `perf`, so a few percent slower than in the throughput sections); each group's "
             "share is its share of the samples of every thread of the server. `wrk` runs on the same two cores and "
             "is not sampled.", *top_tables]
    method = (f"`perf record -e cpu-clock -F {PROFILE_FREQUENCY} -p PID` samples every thread of the server, kernel "
              f"included, while `wrk -t2 -c64 -d{seconds}s` loads it (after a 1 s warm-up), one run per load: the "
              "page-read-logged section's servers and loads (the demo's standard output a drained pipe), and the "
              "action section's (256 counters sessions; the SQLite store with process durability), each next to the C "
              "server answering the same requests with the same bytes. `perf report --sort dso` and `--sort dso,sym` "
              "give the shares; Swift names are demangled by `swift demangle --simplified`.")
    return "profile", "Where a request's CPU time goes (perf, kernel included)", method, table, ratio


def section_callgrind(quick, record=False):
    """Instructions per request under valgrind's callgrind, against recorded budgets (Benchmarks/budgets.json)."""
    previous = load_budgets()
    counts = callgrind_kinds(quick)
    budgets = record_budgets(counts, previous) if record else previous
    failures, notes = check_budgets(counts, budgets)
    if not quick:  # only the quick mode enforces the budgets; the full mode reports
        notes, failures = notes + failures, []
    for note in notes:
        log(f"  note: {note}")
    kinds = (budgets or {}).get("kinds", {})

    def budget_cells(kind):
        entry = kinds.get(kind)
        if entry is None:
            return "none", ""
        budget = entry["instructions_per_request"]
        return (f"{budget:,} (+{entry.get('tolerance', DEFAULT_TOLERANCE):.0%})",
                f"{(counts[kind] - budget) / budget:+.1%}")

    rows = []
    if "c-server" in counts:
        rows.append(("C libmicrohttpd, the listener's body (reference)", counts["c-server"], "", "", "1.00"))
    references = {"listener": "c-server", "page-read": "c-server-page-body", "page-read-logged": "c-server-page-body",
                  "action": "c-server", "action-stream": "c-server",
                  "action-sqlite": "c-server"}
    for kind, description in BUDGETED_KINDS.items():
        if kind == "page-read" and "c-server-page-body" in counts:
            rows.append((f"C libmicrohttpd, the page read's {counts['page-body-bytes']}-byte body (reference)",
                         counts["c-server-page-body"], "", "", "1.00"))
        reference = counts.get(references.get(kind))
        rows.append((f"{kind}: {description}", counts[kind], *budget_cells(kind),
                     f"{counts[kind] / reference:.2f}" if reference else "–"))
    table = [
        "| request | instructions / request | budget (tolerance) | vs budget | × C |",
        "|---|---:|---:|---:|---:|",
        *[f"| {label} | {count:,.0f} | {budget} | {versus} | {ratio} |" for label, count, budget, versus, ratio in rows],
        "",
        "× C: instructions per request over the C server's for the same `GET` (for the action: the C server's "
        "`GET` of the listener's body)." if "c-server" in counts else "(The quick mode does not measure the C server.)",
    ]
    method = (f"Each server runs alone under `valgrind --tool=callgrind` (release build, `LOG_LEVEL=error` but for "
              "page-read-logged, whose request lines go to `/dev/null`, "
              "`SWIFT_DETERMINISTIC_HASHING=1`, and `GLIBC_TUNABLES` raising glibc's `rep stosb`/`rep movsb` "
              "thresholds: callgrind counts those one instruction per byte, so libmicrohttpd's clearing of its "
              "connection pool (32 KiB, the library's default, in the C server; MicroHTTP's default engine has no pool) "
              "would otherwise count up to about 49,000 instructions per request and depend on the CPU; with "
              f"glibc's vector loops it counts about 2,700 for 32 KiB). The harness sends {CALLGRIND_WARMUP} requests to warm it up, zeroes "
              f"the counters (`callgrind_control --zero`), sends {CALLGRIND_REQUESTS} requests one after the other on "
              "one keep-alive connection (Python `http.client`, another process, so not counted), dumps the counters "
              "(`callgrind_control --dump`) and divides the dump's total of instructions executed in user space, by "
              "every thread of the server, by the number of requests. Kernel work (system calls, loopback) is not "
              "counted. The page read uses one session created by `POST /api/sessions {\"unit\":\"greeting\"}`; the "
              "action, one counters session receiving `{\"action\":\"increment\",\"value\":1}` every time; action-stream, "
              "the same with `GET /api/events` of that session open on another connection (drained by a thread of the "
              "harness; the last request waits until the stream carried a patch event for every increment). The "
              "budgets are in `Benchmarks/budgets.json` (record them with "
              "`python3 Benchmarks/run.py callgrind --record-budgets`); `--quick` fails when a count exceeds its "
              "budget by more than its tolerance.")
    return ("callgrind", "Instructions per request (callgrind)", method, table, None, failures)


SECTIONS = {
    "listener": section_listener,
    "page-read": section_page_read,
    "page-read-logged": section_page_read_logged,
    "action": section_action,
    "action-store": section_action_store,
    "action-nats": section_action_nats,
    "restore": section_restore,
    "patch": section_patch,
    "memory": section_memory,
    "startup": section_startup,
    "passivated-memory": section_passivated_memory,
    "startup-stored": section_startup_stored,
    "fanout": section_fanout,
    "stream-memory": section_stream_memory,
    "connection-memory": section_connection_memory,
    "callgrind": section_callgrind,
    "profile": section_profile,
    "soak": section_soak,
}
# What `--quick` runs when no section is named: the ratio sections and the instruction budgets. memory, startup and
# fanout have no floor to check, and startup needs a second release build (static stdlib).
# soak runs short (SOAK_QUICK_SECONDS) and fails on a descriptor leak or memory growth.
# Durable sessions: action-store (its two floors, about 25 s), callgrind's action-sqlite and restore budgets (about
# 15 s), passivated-memory over 10,000 sessions (its bound, about 8 s). restore's and startup-stored's times are
# absolute milliseconds, which this machine's noise moves: the restore budget guards the first, and the second has
# nothing to guard that startup does not (restore is lazy).
QUICK_SECTIONS = ["listener", "page-read", "action", "action-store", "patch", "callgrind", "memory", "passivated-memory", "soak"]


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
    parser.add_argument("--quick", action="store_true",
                        help=f"short runs of {', '.join(QUICK_SECTIONS)} (unless sections are named); check the "
                             "floors and the instruction budgets; write nothing")
    parser.add_argument("--record-budgets", action="store_true",
                        help="with the callgrind section: write the measured counts to Benchmarks/budgets.json")
    parser.add_argument("--soak-seconds", type=int, default=None,
                        help=f"how long the soak section sends traffic (default 300, {SOAK_QUICK_SECONDS} with --quick)")
    arguments = parser.parse_args()
    unknown = [name for name in arguments.sections if name not in SECTIONS]
    if unknown:
        parser.error(f"unknown sections {unknown}; choose from {', '.join(SECTIONS)}")
    sections = arguments.sections or (QUICK_SECTIONS if arguments.quick else list(SECTIONS.keys()))
    if arguments.record_budgets and (arguments.quick or "callgrind" not in sections):
        parser.error("--record-budgets goes with the callgrind section, without --quick")
    subprocess.run([os.path.join(ROOT, "scripts/install-deps.sh"), "bench"], check=True)
    started = time.perf_counter()
    failures = []
    for key in sections:
        log(f"== {key}")
        if key == "callgrind":
            result = section_callgrind(arguments.quick, record=arguments.record_budgets)
        elif key == "soak":
            result = section_soak(arguments.quick, arguments.soak_seconds)
        else:
            result = SECTIONS[key](arguments.quick)
        key, title, method, table, ratio = result[:5]
        failures += result[5] if len(result) > 5 else []
        log("\n".join(table))
        if arguments.quick:
            floor = FLOORS.get(key)
            if floor is not None and ratio is not None and ratio < floor:
                failures.append(f"{key}: ratio {ratio:.2f} below floor {floor:.2f}")
        else:
            update_markdown(key, title, method, table)
    elapsed = f" in {time.perf_counter() - started:.0f} s"
    if failures:
        log(f"FAILED{elapsed}:\n  " + "\n  ".join(failures))
        sys.exit(1)
    log("benchmarks done" + elapsed + (" (quick mode: floors and instruction budgets held)" if arguments.quick
                                       else f"; {BENCHMARKS_MD} updated"))


if __name__ == "__main__":
    main()
