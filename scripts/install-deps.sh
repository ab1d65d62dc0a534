#!/usr/bin/env bash
# Installs what the project needs on a fresh Debian bookworm machine with the Swift toolchain, as root.
# Idempotent: installs only what is missing, and runs `apt-get update` only when something is.
# Usage: scripts/install-deps.sh [run|test|bench]   (default: run)
set -euo pipefail

purpose="${1:-run}"
# libnats-dev: the NATS JetStream session store (SESSION_STORE=nats://…); the demo links it.
# libjemalloc-dev: the demo server's allocator (Sources/CJemalloc), in place of glibc's malloc.
apt_packages=(libmicrohttpd-dev libsqlite3-dev libnats-dev libjemalloc-dev pkg-config)
pip_packages=()
case "$purpose" in
  run) ;;
  test)
    # nats-server: the JetStream store's tests start one of their own on a free loopback port, the cluster check
    # three. nginx: the load-balancer tests and the cluster check run the deploy/ configuration in front of nodes.
    apt_packages+=(curl chromium chromium-driver debootstrap nats-server nginx)
    # schemathesis is pinned: its command line changes between major versions (scripts/check-api-schema.sh).
    # axe-core for Tests/system/test_accessibility.py: axe-selenium-python bundles axe-core 3.1, which predates
    # the WCAG 2.1/2.2 rules; its fork selenium-axe-python bundles axe-core 4.x (the test uses the newer one).
    pip_packages+=(pytest pyyaml jsonpatch openapi-spec-validator selenium schemathesis==4.32.5 axe-selenium-python selenium-axe-python)
    ;;
  bench)
    # gcc builds the C reference server (Benchmarks/c-server); nats-server serves the action-nats section; linux-perf
    # samples the servers in the profile section.
    apt_packages+=(curl wrk valgrind gcc nats-server linux-perf)
    pip_packages+=(jsonpatch)
    ;;
  *) echo "usage: $0 [run|test|bench]" >&2; exit 2 ;;
esac

missing=()
for package in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# A package given as name==version is missing unless that version is the one installed.
installed_version() {
  python3 -m pip show "$1" 2>/dev/null | sed -n 's/^Version: //p'
}
missing_pip=()
for package in "${pip_packages[@]}"; do
  name="${package%%==*}"
  if [ "$name" != "$package" ]; then
    [ "$(installed_version "$name")" = "${package#*==}" ] || missing_pip+=("$package")
  else
    python3 -m pip show -q "$package" >/dev/null 2>&1 || missing_pip+=("$package")
  fi
done
if [ "${#missing_pip[@]}" -gt 0 ]; then
  echo "installing from PyPI: ${missing_pip[*]}"
  python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore "${missing_pip[@]}"
fi
