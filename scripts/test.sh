#!/usr/bin/env bash
# Runs every test of the project: builds with zero warnings allowed, the whole test suite, the concurrency
# tests and the session stores' tests again under ThreadSanitizer, the Foundation check, the other suites as they
# exist (the server against its OpenAPI document with schemathesis among them), and last the quick benchmarks
# (release build; throughput ratios against their floors, instructions per request against their budgets).
# Each stage prints its time. Installs what it needs first (idempotent).
set -euo pipefail
cd "$(dirname "$0")/.."

started=$(date +%s)
stage() {
  local name="$1"; shift
  local begin=$(date +%s)
  echo "=== $name"
  "$@"
  echo "=== $name: $(( $(date +%s) - begin )) s"
}

build_without_warnings() {
  local log
  log=$(mktemp)
  if ! swift build --build-tests "$@" 2>&1 | tee "$log"; then
    echo "build failed"; return 1
  fi
  if grep -E '(^|[^a-z])warning:' "$log" | grep -v '^warning: (multiple|unable to find)' | grep . >/dev/null; then
    echo "the build has warnings; the project allows none:"
    grep -E 'warning:' "$log" | sort -u
    return 1
  fi
}

tsan_flags=(--sanitize=thread -Xswiftc -DMVVMR_PTHREAD_LOCK --scratch-path .build/tsan)
run_tsan_tests() {
  # Two runs: the session stores' tests keep threads busy writing, which under ThreadSanitizer on two cores would
  # starve the timing-sensitive HTTP tests beside them (their deadlines are what they check).
  local options="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/Tests/tsan-suppressions.txt"
  TSAN_OPTIONS="$options" swift test --skip-build "${tsan_flags[@]}" --filter ConcurrencyTests
  TSAN_OPTIONS="$options" MICROHTTP_ENGINE=libmicrohttpd swift test --skip-build "${tsan_flags[@]}" --filter ConcurrencyTests
  TSAN_OPTIONS="$options" swift test --skip-build "${tsan_flags[@]}" --filter "SessionStore|StoreRaceTests"
}

stage "install dependencies" scripts/install-deps.sh test
stage "build (debug, tests, zero warnings)" build_without_warnings
stage "foundation check" scripts/check-foundation.sh
stage "tests" swift test --skip-build
# Every server of the suite on the other engine (MicroHTTP's own epoll loops are the default).
stage "tests on libmicrohttpd" env MICROHTTP_ENGINE=libmicrohttpd swift test --skip-build
stage "build under ThreadSanitizer" build_without_warnings "${tsan_flags[@]}"
stage "concurrency tests under ThreadSanitizer" run_tsan_tests
stage "browser client unit tests (node)" node --test Tests/BrowserClient/
stage "system tests: protocol, browser, shutdown (pytest)" python3 -m pytest -q -p no:cacheprovider Tests/system
stage "cluster check: 3 NATS servers, 3 nodes, nginx; a node and a NATS server killed" scripts/check-cluster.sh
stage "API schema: schemathesis against /api/openapi.json" scripts/check-api-schema.sh
stage "container runtime check (debootstrap)" scripts/check-runtime-image.sh
if [ -x Fuzz/run.sh ]; then
  stage "fuzzing: JSON parser, request fields, request target, request head (4 targets x 25 s)" Fuzz/run.sh 25
fi
stage "quick benchmarks: ratio floors, instruction budgets (release build)" python3 Benchmarks/run.py --quick
echo "all test stages passed in $(( $(date +%s) - started )) s"
