#!/usr/bin/env bash
# Checks the server against its own OpenAPI document with schemathesis: every operation the document lists gets
# generated requests, valid and invalid, and every answer must be documented (status, content type, headers,
# body schema), no answer may be a 5xx, and invalid input must be refused.
#
# Starts the debug demo binary on a free loopback port, opens one session and sends it as `X-Session-ID` with every
# generated request (so session endpoints are tested past the credentials check), runs schemathesis, stops the
# server. Fails on any failure schemathesis reports.
#
# Bounds: a fixed seed and a fixed number of examples per operation, so a run is repeatable and short. The event
# stream (`GET /api/events`) never ends: each of its answers is read for at most 1 s or 2 events, then closed
# (scripts/schemathesis/schemathesis.toml), and its events are checked against the document's event schema.
# `DELETE /api/session` runs last, in a pass of its own with a session of its own, because the first request it
# accepts ends the session every other operation uses.
#
# Usage: scripts/check-api-schema.sh [examples per operation]   (default 50)
#   MVVMR_DEMO_BINARY overrides the binary, SCHEMATHESIS_SEED the seed (to look further than CI does).
set -euo pipefail
cd "$(dirname "$0")/.."

examples="${1:-50}"
seed="${SCHEMATHESIS_SEED:-20261201}"
binary="${MVVMR_DEMO_BINARY:-.build/debug/mvvmr-demo}"
[ -x "$binary" ] || { echo "no $binary: build first (swift build --build-tests)"; exit 1; }

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
base="http://127.0.0.1:$port"
log=$(mktemp)
PORT="$port" HOST=127.0.0.1 PUBLIC_DIR="$PWD/Public" DATA_DIR="$PWD/Data" LOG_LEVEL=error EMPLOYEE_LATENCY_MS=50 \
  "$binary" >"$log" 2>&1 &
server=$!
stop_server() {
  if kill -0 "$server" 2>/dev/null; then
    kill -TERM "$server"
    wait "$server" || true
  fi
  rm -f "$log"
}
trap stop_server EXIT

for _ in $(seq 200); do
  curl -fsS -o /dev/null "$base/healthz" 2>/dev/null && break
  kill -0 "$server" 2>/dev/null || { echo "mvvmr-demo exited:"; cat "$log"; exit 1; }
  sleep 0.1
done
curl -fsS -o /dev/null "$base/healthz" || { echo "mvvmr-demo did not start:"; cat "$log"; exit 1; }

new_session() {
  curl -fsS -X POST "$base/api/sessions" | python3 -c 'import json, sys; print(json.load(sys.stdin)["session"])'
}

run_schemathesis() {
  local session="$1"; shift
  # --generation-database none: each run starts from the seed alone. Hypothesis keeps its other files under .build.
  HYPOTHESIS_STORAGE_DIRECTORY="$PWD/.build/hypothesis" schemathesis --no-color --config-file scripts/schemathesis/schemathesis.toml run "$base/api/openapi.json" \
    --checks all --max-examples "$examples" --seed "$seed" --generation-database none \
    --workers 1 --request-timeout 10 --header "X-Session-ID: $session" "$@"
}

failed=0
echo "--- every operation but DELETE /api/session"
run_schemathesis "$(new_session)" --exclude-operation-id deleteSession || failed=1
echo "--- DELETE /api/session"
run_schemathesis "$(new_session)" --include-operation-id deleteSession || failed=1

if ! kill -0 "$server" 2>/dev/null; then
  echo "mvvmr-demo died during the run:"; cat "$log"; exit 1
fi
exit "$failed"
