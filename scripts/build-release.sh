#!/usr/bin/env bash
# The release build the container image ships (the Dockerfile runs this same script): the demo server
# with the Swift standard library linked statically, stripped. Prints the binary's path.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --static-swift-stdlib --product mvvmr-demo >&2
mkdir -p .build/image
strip -o .build/image/mvvmr-demo .build/release/mvvmr-demo
echo .build/image/mvvmr-demo
