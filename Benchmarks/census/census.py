#!/usr/bin/env python3
"""What an idle session is made of: the live Swift objects one more session adds, by type and allocation site.

    python3 Benchmarks/census/census.py              # 2,000 greeting sessions on a fresh SQLite store
    python3 Benchmarks/census/census.py 5000 counters
    HIBERNATE_AFTER_SECONDS=1 CENSUS_SETTLE_SECONDS=3 python3 Benchmarks/census/census.py   # hibernated sessions

Builds census.c (gcc) into an LD_PRELOAD library, starts the release demo (`swift build -c release` first) with it,
opens 200 sessions to warm up and takes a census, opens N more and takes another, and prints the difference per
session: bytes as requested from the allocator (jemalloc rounds each up to its size class), objects, and where
each was allocated (the first frames outside the allocating helpers, resolved with addr2line). A closure's context
shows as `<<< invalid type >>>`. A profile, not a measurement: the memory section of run.py measures RSS.
"""
import http.client
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BINARY = os.path.join(ROOT, ".build", "release", "mvvmr-demo")
# Frames that only allocate (array growth, initialisers, the lock wrapper): the site is the first frame after them.
HELPERS = re.compile(r"_consumeAndCreateNew|_allocateUninitializedArray|__allocating_init|Locked\.init|"
                     r"_copyToContiguousArray|append|_createNewBuffer|reserveCapacity|allocateUninitialized|"
                     r"_allocateBuffer|^\?\?")


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def open_sessions(port, unit, count):
    for _ in range(count):
        connection = http.client.HTTPConnection("127.0.0.1", port)
        connection.request("GET", f"/api/pages/{unit}")
        response = connection.getresponse()
        response.read()
        connection.close()
        if response.status != 200:
            sys.exit(f"GET /api/pages/{unit} answered {response.status}")


def load(path):
    counts = {}
    for line in open(path):
        count, size, callers, name = line.rstrip("\n").split("\t", 3)
        counts[(name, callers)] = (int(count), int(size))
    return counts


def resolver():
    cache = {}

    def resolve(module, offset):
        if (module, offset) not in cache:
            lines = subprocess.run(["addr2line", "-f", "-i", "-e", module, hex(int(offset, 16) - 1)],
                                   capture_output=True, text=True).stdout.split("\n")
            frames = [(lines[i], lines[i + 1]) for i in range(0, len(lines) - 1, 2)]
            names = subprocess.run(["swift", "demangle", "--simplified", "--compact"],
                                   input="\n".join(name for name, _ in frames), capture_output=True,
                                   text=True).stdout.split("\n")
            cache[(module, offset)] = [(name, place.split("/")[-1]) for name, (_, place) in zip(names, frames)]
        return cache[(module, offset)]
    return resolve


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    unit = sys.argv[2] if len(sys.argv) > 2 else "greeting"
    work = tempfile.mkdtemp(prefix="census-")
    library = os.path.join(work, "census.so")
    subprocess.run(["gcc", "-O2", "-shared", "-fPIC", "-o", library, os.path.join(HERE, "census.c"), "-ldl",
                    "-lpthread"], check=True)
    for old in os.listdir("/tmp"):
        if re.fullmatch(r"census\.\d+\.txt", old):
            os.remove(os.path.join("/tmp", old))
    port = free_port()
    environment = dict(os.environ, LD_PRELOAD=library, PORT=str(port), HOST="127.0.0.1", LOG_LEVEL="error",
                       DATA_DIR=os.path.join(ROOT, "Data"), PUBLIC_DIR=os.path.join(ROOT, "Public"),
                       SESSION_STORE="sqlite:" + os.path.join(work, "store.sqlite"), SESSION_DURABILITY="process",
                       MAX_SESSIONS="2000000")
    server = subprocess.Popen([BINARY], env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        for index, sessions in enumerate([200, count]):
            open_sessions(port, unit, sessions)
            # Long enough for idle pages to hibernate when HIBERNATE_AFTER_SECONDS is 1 (the sweep runs every second).
            time.sleep(float(os.environ.get("CENSUS_SETTLE_SECONDS", "1")))
            server.send_signal(signal.SIGUSR2)
            while not os.path.exists(f"/tmp/census.{index}.txt"):
                time.sleep(0.1)
            time.sleep(0.5)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    before, after = load("/tmp/census.0.txt"), load("/tmp/census.1.txt")
    rows = []
    for key in set(before) | set(after):
        (count0, bytes0), (count1, bytes1) = before.get(key, (0, 0)), after.get(key, (0, 0))
        if (bytes1 - bytes0) / count >= 0.5:
            rows.append(((bytes1 - bytes0) / count, (count1 - count0) / count, key))
    rows.sort(reverse=True)
    print(f"per {unit} session: {sum(row[0] for row in rows):,.0f} bytes in {sum(row[1] for row in rows):.1f} objects")
    resolve = resolver()
    for size, objects, (name, callers) in rows:
        chain = []
        for caller in callers.strip(";").split(";"):
            module, offset = caller.rsplit(" ", 1)
            if module == "?" or "libswiftCore" in module:
                continue
            chain += [f"{frame.split('(')[0][:45]}@{place}" for frame, place in resolve(module, offset)
                      if not HELPERS.search(frame)]
        short = re.sub(r"unknown context at \S+", "", name)[:60]
        print(f"{size:7.1f} B {objects:5.2f}  {short:60}  {' < '.join(chain[:3])[:220]}")


if __name__ == "__main__":
    main()
