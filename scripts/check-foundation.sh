#!/usr/bin/env bash
# The server-side modules stay off full Foundation (it adds about 50 MB to a static binary):
# they may import FoundationEssentials, never Foundation, FoundationNetworking, FoundationXML or
# FoundationInternationalization. Checks the sources, and the demo binary's linked libraries when built.
set -euo pipefail
cd "$(dirname "$0")/.."
server_modules=(Locking CMicroHTTPD CSQLite CNATS MicroHTTP JSONPatch MVVMRProtocol MVVMR MVVMRServer DemoPages DemoApp)
status=0
for module in "${server_modules[@]}"; do
  [ -d "Sources/$module" ] || continue
  if hits=$(grep -rnE '^\s*(@[A-Za-z_]+\s+)*((public|internal|package|private|fileprivate)\s+)?import\s+(Foundation|FoundationNetworking|FoundationXML|FoundationInternationalization)\s*$' "Sources/$module"); then
    echo "full Foundation imported by server module $module:"
    echo "$hits"
    status=1
  fi
done
for binary in .build/debug/mvvmr-demo .build/release/mvvmr-demo; do
  if [ -x "$binary" ] && ldd "$binary" | grep -E 'libFoundation(Networking|XML|Internationalization)?\.so' >/dev/null; then
    echo "$binary links full Foundation:"
    ldd "$binary" | grep -E 'libFoundation'
    status=1
  fi
done
[ "$status" -eq 0 ] && echo "foundation check: server modules use FoundationEssentials at most"
exit "$status"
