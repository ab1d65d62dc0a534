#!/usr/bin/env bash
# The cluster check: three nats-servers (one JetStream cluster), three mvvmr-demo nodes with their sessions in it,
# nginx in front — all on free loopback ports, from the files in deploy/ — driven through nginx while one app node
# and then one NATS server are killed (scripts/check_cluster.py says what it checks). Installs what it needs
# (idempotent), builds the demo if needed, and stops everything it started.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh test >/dev/null
[ -x .build/debug/mvvmr-demo ] || swift build --product mvvmr-demo
exec python3 scripts/check_cluster.py "$@"
