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
import datetime
import os
import platform
import re
import signal
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCHMARKS_MD = os.path.join(ROOT, "BENCHMARKS.md")

# Floors for the quick mode, set from the measured figures with room for this machine's noise.
FLOORS = {
    "listener": 0.75,  # MicroHTTP / C libmicrohttpd, req/s (target 0.9 in full runs)
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


def wrk(url, seconds, connections=64, threads=2, script=None):
    """Runs wrk; returns requests/s, p50 and p99 latency in milliseconds."""
    command = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--latency"]
    if script:
        command += ["-s", script]
    output = subprocess.run(command + [url], capture_output=True, text=True, check=True).stdout
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


def build_c_server():
    source = os.path.join(ROOT, "Benchmarks/c-server/server.c")
    binary = os.path.join(ROOT, "Benchmarks/c-server/c-server")
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "libmicrohttpd"], capture_output=True, text=True,
                           check=True).stdout.split()
    run(["gcc", "-O2", "-o", binary, source, *flags, "-lpthread"])
    return binary


def build_swift(product):
    run(["swift", "build", "-c", "release", "--product", product], stdout=subprocess.DEVNULL)
    return os.path.join(ROOT, ".build/release", product)


def alternate(contenders, rounds, seconds):
    """Measures each (name, command, port, path) in turn, `rounds` times; returns medians per name."""
    samples = {name: [] for name, *_ in contenders}
    for round_index in range(rounds):
        for name, command, port, path in contenders:
            with Server(command, port):
                wrk(f"http://127.0.0.1:{port}{path}", 1)  # warm-up
                rate, p50, p99 = wrk(f"http://127.0.0.1:{port}{path}", seconds)
            samples[name].append((rate, p50, p99))
            log(f"  round {round_index + 1}: {name:>10}: {rate:>9.0f} req/s  p50 {p50:.3f} ms  p99 {p99:.3f} ms")
    return {name: tuple(median([s[i] for s in values]) for i in range(3)) for name, values in samples.items()}


def section_listener(quick):
    """MicroHTTP against a raw C libmicrohttpd server answering the same bytes."""
    c_server = build_c_server()
    swift_server = build_swift("microhttp-bench")
    rounds, seconds = (1, 2) if quick else (3, 5)
    c_port, swift_port = free_port(), free_port()
    results = alternate([
        ("C", [c_server, str(c_port)], c_port, "/api/pages/greeting"),
        ("MicroHTTP", [swift_server, str(swift_port)], swift_port, "/api/pages/greeting"),
    ], rounds, seconds)
    ratio = results["MicroHTTP"][0] / results["C"][0]
    table = [
        "| server | req/s (median) | p50 ms | p99 ms |",
        "|---|---:|---:|---:|",
        *[f"| {name} | {r:,.0f} | {p50:.3f} | {p99:.3f} |" for name, (r, p50, p99) in results.items()],
        "",
        f"**Ratio MicroHTTP / C: {ratio:.2f}** (target ≥ 0.90).",
    ]
    method = (f"`wrk -t2 -c64 -d{seconds}s --latency` on loopback against `GET /api/pages/greeting`, "
              f"{rounds} alternating rounds (medians), a fresh server process per round, after a 1 s warm-up. "
              "Both servers: libmicrohttpd 0.9.75, thread pool of one thread per core, epoll, turbo, "
              "suspend/resume allowed, same 71-byte JSON body. C: `Benchmarks/c-server/server.c`; "
              "MicroHTTP: `Benchmarks/Sources/microhttp-bench`.")
    return "listener", "MicroHTTP vs raw libmicrohttpd (C)", method, table, ratio


SECTIONS = {"listener": section_listener}


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
    parser.add_argument("sections", nargs="*", choices=list(SECTIONS.keys()),
                        help="sections to run (default: all)")
    parser.add_argument("--quick", action="store_true", help="short runs; check floors; do not write BENCHMARKS.md")
    arguments = parser.parse_args()
    subprocess.run([os.path.join(ROOT, "scripts/install-deps.sh"), "bench"], check=True)
    failures = []
    for key in arguments.sections or list(SECTIONS.keys()):
        log(f"== {key}")
        key, title, method, table, ratio = SECTIONS[key](arguments.quick)
        log("\n".join(table))
        if arguments.quick:
            floor = FLOORS.get(key)
            if floor is not None and ratio < floor:
                failures.append(f"{key}: ratio {ratio:.2f} below floor {floor:.2f}")
        else:
            update_markdown(key, title, method, table)
    if failures:
        log("FAILED: " + "; ".join(failures))
        sys.exit(1)
    log("benchmarks done" + (" (quick mode, floors held)" if arguments.quick else f"; {BENCHMARKS_MD} updated"))


if __name__ == "__main__":
    main()
