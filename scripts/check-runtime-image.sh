#!/usr/bin/env bash
# Proves the Dockerfile's final stage without a Docker engine: builds the static binary with the same
# script the Dockerfile runs, creates the final stage's root filesystem with debootstrap (cached between
# runs) installing exactly the packages that stage names (read from the Dockerfile, so the two cannot
# drift), copies what the stage copies, runs the binary there as the stage's user with /proc mounted,
# checks /healthz, a page, an action and the --healthcheck mode, sends SIGTERM and checks a clean exit.
# Every mount is cleaned up. Needs root.
set -euo pipefail
cd "$(dirname "$0")/.."
root_dir=$PWD
cache_dir=${MVVMR_ROOTFS_CACHE:-/var/cache/mvvmr/rootfs}

fail() { echo "runtime check: FAILED: $*" >&2; exit 1; }

# --- Read the final stage of the Dockerfile ---------------------------------------------------------
# Join continuation lines, keep the lines after the last FROM.
final_stage=$(sed -e ':a' -e '/\\$/N; s/\\\n/ /; ta' Dockerfile | awk '/^FROM /{buffer=""} {buffer=buffer $0 "\n"} END{printf "%s", buffer}')
base_image=$(printf '%s\n' "$final_stage" | awk '/^FROM /{print $2; exit}')
case "$base_image" in
  debian:bookworm-slim|debian:bookworm) suite=bookworm ;;
  *) fail "the final stage's base image '$base_image' is not a Debian bookworm image this check knows" ;;
esac
packages=$(printf '%s\n' "$final_stage" | grep -E '^RUN .*apt-get install' | head -1 \
  | sed -E 's/.*apt-get install//; s/&&.*//' | tr ' ' '\n' | grep -vE '^(-.*|)$' | sort -u | tr '\n' ' ')
[ -n "$packages" ] || fail "no 'apt-get install' in the final stage"
uid=$(printf '%s\n' "$final_stage" | grep -oE 'useradd[^&]*--uid [0-9]+' | grep -oE '[0-9]+$' | head -1)
user=$(printf '%s\n' "$final_stage" | awk '/^USER /{print $2}' | tail -1)
[ -n "$uid" ] && [ -n "$user" ] || fail "the final stage must create its user with 'useradd --uid N' and switch with USER"
workdir=$(printf '%s\n' "$final_stage" | awk '/^WORKDIR /{print $2}' | tail -1)
entrypoint=$(printf '%s\n' "$final_stage" | awk '/^ENTRYPOINT /{print}' | grep -oE '"[^"]+"' | head -1 | tr -d '"')
environment=$(printf '%s\n' "$final_stage" | awk '/^ENV /{for (i = 2; i <= NF; i++) print $i}')
echo "final stage: $base_image ($suite), packages: $packages, user $user ($uid), entrypoint $entrypoint"

# --- The root filesystem, cached by its package list -----------------------------------------------
command -v debootstrap >/dev/null || { apt-get update -qq && apt-get install -y -qq debootstrap >/dev/null; }
key=$(printf '%s %s' "$suite" "$packages" | sha256sum | cut -c1-16)
rootfs_cache="$cache_dir/$key"
if [ ! -f "$rootfs_cache/.complete" ]; then
  echo "creating the root filesystem with debootstrap (cached in $rootfs_cache)"
  rm -rf "$rootfs_cache"
  mkdir -p "$cache_dir"
  mirror=$( (cat /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null || true) \
    | grep -E '^(URIs:|deb )' | grep -oE 'https?://[^ ]+/debian' | grep -v security | head -1 || true)
  if ! debootstrap --variant=minbase --include="$(echo $packages | tr ' ' ',')" "$suite" "$rootfs_cache" \
    "${mirror:-http://deb.debian.org/debian}" > "$cache_dir/debootstrap.log" 2>&1; then
    tail -20 "$cache_dir/debootstrap.log" >&2
    rm -rf "$rootfs_cache"
    fail "debootstrap"
  fi
  touch "$rootfs_cache/.complete"
fi

# --- A fresh copy for this run, with the stage's files --------------------------------------------
work=$(mktemp -d /tmp/mvvmr-rootfs.XXXXXX)
rootfs="$work/root"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then kill -KILL "$server_pid" 2>/dev/null || true; fi
  if mountpoint -q "$rootfs/proc" 2>/dev/null; then umount -l "$rootfs/proc" || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
cp -a "$rootfs_cache" "$rootfs"
chroot "$rootfs" useradd --system --uid "$uid" --no-create-home "$user"
# The stage's volumes (the session store's directory), owned by its user as its RUN line makes them.
for volume in $(printf '%s\n' "$final_stage" | awk '/^VOLUME /{for (i = 2; i <= NF; i++) print $i}'); do
  mkdir -p "$rootfs$volume"
  chown "$uid:$uid" "$rootfs$volume"
done

binary=$(scripts/build-release.sh)
while read -r line; do
  [ -n "$line" ] || continue
  set -- $line
  shift  # COPY
  from_build=false
  if [[ "$1" == --from=* ]]; then from_build=true; shift; fi
  source_path=$1
  destination=$2
  if $from_build; then
    # The build stage works in /src and produces what scripts/build-release.sh produces.
    case "$source_path" in
      */.build/image/mvvmr-demo|*/.build/release/mvvmr-demo) local_source="$root_dir/$binary" ;;
      /src/*) local_source="$root_dir/${source_path#/src/}" ;;
      *) fail "unknown build-stage path $source_path" ;;
    esac
  else
    local_source="$root_dir/$source_path"
  fi
  mkdir -p "$rootfs$(dirname "$destination")"
  cp -a "$local_source" "$rootfs$destination"
done < <(printf '%s\n' "$final_stage" | grep -E '^COPY ')

# --- Run it there, as the stage's user ---------------------------------------------------------------
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mount -t proc proc "$rootfs/proc"
env_arguments=()
for assignment in $environment; do env_arguments+=("$assignment"); done
env_arguments+=("PORT=$port" "HOST=127.0.0.1" "LOG_LEVEL=warning")
# Starts the binary there as the stage's user, in its WORKDIR with its ENV, logging to $1; waits for /healthz.
start_server() {
  chroot --userspec="$uid:$uid" "$rootfs" /usr/bin/env -i "${env_arguments[@]}" sh -c "cd ${workdir:-/} && exec $entrypoint" \
    > "$1" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 100); do
    curl -fs "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && return 0
    kill -0 "$server_pid" 2>/dev/null || { cat "$1"; fail "the server exited at start"; }
    sleep 0.1
  done
}
start_server "$work/server.log"
curl -fs "http://127.0.0.1:$port/healthz" | grep '"ok"' >/dev/null || fail "/healthz"
session=$(curl -fs -X POST "http://127.0.0.1:$port/api/sessions" | python3 -c 'import json, sys; print(json.load(sys.stdin)["session"])')
curl -fs -H "X-Session-ID: $session" "http://127.0.0.1:$port/api/pages/greeting" | grep 'Say hello to who?' >/dev/null || fail "a page"
curl -fs -X POST -H "X-Session-ID: $session" -d '{"action":"showGreeting"}' "http://127.0.0.1:$port/api/pages/greeting/actions" \
  | grep 'Hello David Blaine' >/dev/null || fail "an action"
curl -fs "http://127.0.0.1:$port/" | grep -i '<html' >/dev/null || fail "the browser client's files"
chroot --userspec="$uid:$uid" "$rootfs" /usr/bin/env -i "PORT=$port" "$entrypoint" --healthcheck || fail "--healthcheck"
owner=$(awk '/^Uid:/{print $2}' "/proc/$(pgrep -P "$server_pid" -f mvvmr-demo | head -1 || echo "$server_pid")/status" 2>/dev/null || echo "")
echo "server runs as uid ${owner:-?}"

kill -TERM "$server_pid"
status=0
wait "$server_pid" || status=$?
server_pid=""
[ "$status" -eq 0 ] || { cat "$work/server.log"; fail "exit status $status after SIGTERM"; }

# --- Started again on the same volume, the session is still there (its store is in the image's volume) ---
start_server "$work/server2.log"
curl -fs -H "X-Session-ID: $session" "http://127.0.0.1:$port/api/pages/greeting" | grep 'Hello David Blaine' >/dev/null \
  || { cat "$work/server2.log"; fail "the session did not survive the restart"; }
kill -TERM "$server_pid"
wait "$server_pid" || true
server_pid=""
echo "runtime check passed: binary $(stat -c %s "$binary") bytes; /healthz, a page, an action, --healthcheck, SIGTERM → exit 0, the session back after a restart"
