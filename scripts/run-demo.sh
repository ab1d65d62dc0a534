#!/usr/bin/env bash
# Builds the demo server in release mode and starts it on port 8080 (PORT, HOST and the other settings
# in the README may be set in the environment or passed as flags after the script's name).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh run
swift build -c release --product mvvmr-demo
exec .build/release/mvvmr-demo --public-dir "${PUBLIC_DIR:-Public}" "$@"
