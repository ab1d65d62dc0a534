#!/usr/bin/env bash
# Builds the libFuzzer targets (with AddressSanitizer) from the library sources and runs each for a bounded time.
# Usage: Fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]   (default 25 s each; targets: json-parser request-fields
# request-target request-head). Exits non-zero when a target finds a crash, a sanitizer report or a violated property.
#
#   json-parser     Sources/JSONPatch: the JSON parser, encoder, pointers and the patch engine
#   request-fields  Sources/MVVMRProtocol's action request (an action body's fields) and
#                   Sources/MVVMRServer/Protocol/RequestParsing.swift (Last-Event-ID)
#   request-target  Sources/MicroHTTP: path segments, percent-decoding, the packed headers, cookies and query
#   request-head    Sources/MicroHTTP's own engine: a request's head read from raw bytes, and a chunked body
set -euo pipefail

cd "$(dirname "$0")/.."
SECONDS_PER_TARGET="${1:-25}"
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(json-parser request-fields request-target request-head)
BUILD="Fuzz/.build"
MODULES="$BUILD/modules"
mkdir -p "$MODULES"

# lld links the sanitizer runtimes without gold's "cannot export local symbol" noise.
LINKER=()
if command -v ld.lld >/dev/null 2>&1 || [ -x "$(dirname "$(command -v swiftc)")/ld.lld" ]; then
    LINKER=(-use-ld=lld)
fi
# Every module is instrumented alike, so the fuzzer sees coverage in the libraries, not only in the target.
SWIFTC=(swiftc -sanitize=fuzzer,address -parse-as-library -O -swift-version 6)

# A library module as a static archive plus its .swiftmodule; -enable-testing lets a target `@testable import` it.
library() {
    local name="$1"; shift
    "${SWIFTC[@]}" -enable-testing -emit-library -static -emit-module -module-name "$name" \
        -emit-module-path "$MODULES/$name.swiftmodule" -I "$MODULES" "$@" -o "$MODULES/lib$name.a"
}

build() {
    case "$1" in
        json-parser)
            # One module from the library sources plus the target (no import), as before.
            "${SWIFTC[@]}" "${LINKER[@]}" -module-name JSONParserFuzz \
                Sources/JSONPatch/*.swift Fuzz/JSONParserFuzz.swift -o "$BUILD/json-parser-fuzz" ;;
        request-fields)
            library JSONPatch Sources/JSONPatch/*.swift
            library MVVMRProtocol Sources/MVVMRProtocol/*.swift
            # RequestParsing.swift needs only JSONPatch: it joins the target's module, so its internal types are seen.
            "${SWIFTC[@]}" "${LINKER[@]}" -module-name RequestFieldsFuzz -I "$MODULES" -L "$MODULES" -lMVVMRProtocol -lJSONPatch \
                Sources/MVVMRServer/Protocol/RequestParsing.swift Fuzz/RequestFieldsFuzz.swift \
                -o "$BUILD/request-fields-fuzz" ;;
        request-target|request-head)
            library Locking Sources/Locking/*.swift
            library MicroHTTP -I Sources/CMicroHTTPD Sources/MicroHTTP/*.swift
            local module=RequestTargetFuzz
            [ "$1" = request-head ] && module=RequestHeadFuzz
            "${SWIFTC[@]}" "${LINKER[@]}" -module-name "$module" -I "$MODULES" -I Sources/CMicroHTTPD \
                -L "$MODULES" -lMicroHTTP -lLocking -lmicrohttpd \
                "Fuzz/$module.swift" -o "$BUILD/$1-fuzz" ;;
        *)
            echo "unknown fuzz target $1 (json-parser, request-fields, request-target, request-head)" >&2; return 2 ;;
    esac
}

# Swift's own crash backtracer stops the process and reads its memory from a helper thread, which AddressSanitizer
# reports as a crash of its own and which then never ends: libFuzzer's handler is the one wanted here.
export SWIFT_BACKTRACE=enable=no

for target in "${TARGETS[@]}"; do
    echo "--- fuzz target $target: build"
    build "$target"
    # New inputs go to the scratch corpus; the committed seeds in Fuzz/corpus/<target> are read-only input.
    mkdir -p "$BUILD/corpus/$target" "$BUILD/artifacts/$target"
    echo "--- fuzz target $target: run ${SECONDS_PER_TARGET} s"
    "$BUILD/$target-fuzz" \
        -max_total_time="$SECONDS_PER_TARGET" \
        -max_len=4096 \
        -timeout=10 \
        -rss_limit_mb=2048 \
        -artifact_prefix="$BUILD/artifacts/$target/" \
        -print_final_stats=1 \
        "$BUILD/corpus/$target" "Fuzz/corpus/$target"
done
