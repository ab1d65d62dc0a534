#!/usr/bin/env bash
# Diff micro-benchmark: JSONPatch.diff (release build) against Python's jsonpatch.make_patch
# on the same 10,000-row documents. Checks that both patches turn A into B, then prints a table.
# Usage: Benchmarks/patch-bench.sh [ROWS]   (PYTHON_RUNS=N: timed Python runs, default 5; the quick mode uses 1)
set -euo pipefail

cd "$(dirname "$0")/.."
ROWS="${1:-10000}"
export PYTHON_RUNS="${PYTHON_RUNS:-5}"

swift build -c release --product patch-bench >&2
BIN="$(swift build -c release --show-bin-path)/patch-bench"

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

"$BIN" --rows "$ROWS" --write-documents "$WORK" > "$WORK/swift-result.json"

if ! python3 -c 'import jsonpatch' 2>/dev/null; then
    python3 -m pip install -q jsonpatch >&2
fi

python3 - "$WORK" <<'PYTHON'
import json, os, statistics, sys, time
import jsonpatch

work = sys.argv[1]
def load(name):
    with open(f"{work}/{name}") as handle:
        return json.load(handle)

old, new = load("old.json"), load("new.json")
swift = load("swift-result.json")
swift_patch = load("swift-patch.json")

runs = []
python_patch = None
for _ in range(int(os.environ["PYTHON_RUNS"])):
    start = time.perf_counter()
    python_patch = jsonpatch.make_patch(old, new)
    runs.append((time.perf_counter() - start) * 1000)
python_ms = statistics.median(runs)

failures = []
if jsonpatch.apply_patch(old, python_patch.patch) != new:
    failures.append("the Python patch does not turn A into B")
if jsonpatch.apply_patch(old, swift_patch) != new:
    failures.append("the Swift patch does not turn A into B (checked with Python's jsonpatch)")

compact = lambda value: len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())
python_bytes = compact(python_patch.patch)
swift_bytes = swift["swift_patch_bytes"]
if compact(swift_patch) != swift_bytes:
    failures.append("swift-patch.json size differs from the reported size")
ratio = python_ms / swift["swift_diff_ms"] if swift["swift_diff_ms"] > 0 else float("inf")

print(f"documents: {swift['rows']} rows, A {compact(old)} bytes, B {compact(new)} bytes")
print(f"{'':24}{'time (ms, median)':>20}{'patch bytes':>14}{'ops':>6}")
print(f"{'Swift JSONPatch.diff':24}{swift['swift_diff_ms']:>20.3f}{swift_bytes:>14}{swift['ops']:>6}")
print(f"{'Python make_patch':24}{python_ms:>20.3f}{python_bytes:>14}{len(python_patch.patch):>6}")
print(f"speed ratio (Python / Swift): {ratio:.1f}x   patch bytes (Swift / Python): {swift_bytes / python_bytes:.6f}")
print(f"Swift also: equal-documents diff {swift['swift_equal_diff_ms']} ms, parse B {swift['swift_parse_ms']} ms, encode B {swift['swift_encode_ms']} ms")
print(json.dumps({"swift_diff_ms": swift["swift_diff_ms"], "swift_patch_bytes": swift_bytes, "ops": swift["ops"],
                  "python_diff_ms": round(python_ms, 3), "python_patch_bytes": python_bytes, "speed_ratio": round(ratio, 1)}))
if ratio < 50:
    print("note: below the 50x target", file=sys.stderr)
if swift_bytes > python_bytes:
    print("note: Swift patch is larger than Python's", file=sys.stderr)
if failures:
    for failure in failures:
        print("FAIL: " + failure, file=sys.stderr)
    sys.exit(1)
PYTHON
