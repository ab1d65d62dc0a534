#!/usr/bin/env bash
# Builds the libFuzzer target (with AddressSanitizer) from the library sources and runs it.
# Usage: Fuzz/run.sh [SECONDS]   (default 20). Exits non-zero if the fuzzer finds a crash.
set -euo pipefail

cd "$(dirname "$0")/.."
SECONDS_TO_RUN="${1:-20}"
BUILD="Fuzz/.build"
mkdir -p "$BUILD/corpus" "$BUILD/artifacts"

# lld links the sanitizer runtimes without gold's "cannot export local symbol" noise.
LINKER=""
if command -v ld.lld >/dev/null 2>&1 || [ -x "$(dirname "$(command -v swiftc)")/ld.lld" ]; then
    LINKER="-use-ld=lld"
fi

# One module from the library sources plus the target; -parse-as-library because the target
# has no top-level code (libFuzzer provides main).
swiftc -sanitize=fuzzer,address -parse-as-library -O $LINKER \
    -module-name JSONParserFuzz \
    Sources/JSONPatch/*.swift Fuzz/JSONParserFuzz.swift \
    -o "$BUILD/json-parser-fuzz"

# New inputs go to the scratch corpus; the committed seeds in Fuzz/corpus are read-only input.
"$BUILD/json-parser-fuzz" \
    -max_total_time="$SECONDS_TO_RUN" \
    -max_len=4096 \
    -timeout=10 \
    -rss_limit_mb=2048 \
    -artifact_prefix="$BUILD/artifacts/" \
    -print_final_stats=1 \
    "$BUILD/corpus" Fuzz/corpus
