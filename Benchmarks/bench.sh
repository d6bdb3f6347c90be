#!/bin/sh
# make bench: MockServer against nginx answering the same body from memory, on loopback.
# Installs wrk, nginx, ab (apache2-utils) when missing, builds the release binary, then runs
# Benchmarks/bench.py, which prints one table and writes .build/bench.json.
#
# Environment:
#   BENCH_QUICK=1        1 s runs, 1 round (for iterating on the harness; figures are not comparable)
#   BENCH_ROUNDS=N       rounds of A B alternation (default 3)
#   BENCH_DURATION=S     seconds per wrk run (default 5)
#   BENCH_SKIP_BUILD=1   use the existing .build/release/mockserver
#   BENCH_STATIC=0       build without --static-swift-stdlib (default: static, as `make run` ships it)
#   BENCH_BINARY=PATH    benchmark this binary instead
#   BENCH_FIXTURES=DIR   the "bundled" fixtures for the startup figure (default Fixtures/)
#   BENCH_ONLY=proxy     only the proxy rows (req/s through a proxy stub against the upstream alone)
#   BENCH_ONLY=matching  only the matching-cost rows (1 stub, 10,000 stubs: literal and template hit)
#   BENCH_ONLY=startup   only start-up with 10,000 stubs, pinned to CPU 0 and unpinned
#   BENCH_ONLY=templating only the templating rows (the same JSON answer prepared and templated)
#   BENCH_ONLY=openapi   only the --openapi rows (a generated document's GET, with and without --validate-requests)
#   BENCH_ONLY=state     only the stateful-mocking rows (create-then-read cycles/s, a state-matcher stub against a plain one)
#   BENCH_ONLY=sse       only the x-sse rows (events/s to one client and to 1,000 open streams, RSS per stream)
#   BENCH_ONLY=websocket only the x-websocket rows (echo round trips/s, 1 and 32 clients; RSS per open WebSocket)
#   BENCH_ONLY=sessions  only the session rows (a plain stub without a session, the same stub in one, a session's own stub)
#   BENCH_ONLY=store     only the --state-store rows (plain, scenario and proxied stubs, journal, create-then-read cycles; needs redis-server)
set -eu

cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; fi
fi

have() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] || [ -x "/sbin/$1" ]; }

missing=""
have wrk || missing="$missing wrk"
have ab || missing="$missing apache2-utils"
have nginx || missing="$missing nginx"
have taskset || missing="$missing util-linux"
have python3 || missing="$missing python3"

if [ -n "$missing" ]; then
  echo "bench: installing:$missing"
  if ! $SUDO apt-get update -qq >/dev/null 2>&1; then
    echo "bench: warning: apt-get update failed" >&2
  fi
  pkgs=""
  for p in $missing; do
    if [ "$p" = nginx ]; then
      # nginx-light is gone from Debian 12; the full nginx package serves the same purpose.
      if apt-cache show nginx-light >/dev/null 2>&1; then p=nginx-light; fi
    fi
    pkgs="$pkgs $p"
  done
  # shellcheck disable=SC2086
  if ! $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $pkgs >/dev/null; then
    echo "bench: error: could not install:$pkgs (install them by hand: apt-get install -y wrk nginx-light apache2-utils)" >&2
    exit 1
  fi
  # The Debian package may start an nginx service on port 80; the benchmark runs its own instance.
  $SUDO service nginx stop >/dev/null 2>&1 || true
fi

for tool in wrk ab nginx taskset python3; do
  if ! have "$tool"; then
    echo "bench: error: $tool is missing and could not be installed" >&2
    exit 1
  fi
done

if [ "$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)" -lt 2 ]; then
  echo "bench: error: needs 2 CPUs (server on CPU 0, load generator on CPU 1)" >&2
  exit 1
fi

BUILD_FLAGS="-c release --static-swift-stdlib -Xlinker -no-pie --product mockserver"  # as `make run`
BINARY=.build/release/mockserver
if [ "${BENCH_STATIC:-1}" = 0 ]; then
  BUILD_FLAGS="-c release --product mockserver --scratch-path .build/dynamic"
  BINARY=.build/dynamic/release/mockserver
fi
LABEL="swift build $BUILD_FLAGS"
if [ -n "${BENCH_BINARY:-}" ]; then
  BINARY="$BENCH_BINARY"
  LABEL="$BENCH_BINARY"
elif [ "${BENCH_SKIP_BUILD:-0}" != 1 ]; then
  echo "bench: building: swift build $BUILD_FLAGS"
  # Other builds may share this machine: take the shared build lock when flock is there.
  # shellcheck disable=SC2086
  if command -v flock >/dev/null 2>&1; then
    flock /tmp/swift-build.lock ${SWIFT:-swift} build $BUILD_FLAGS
  else
    ${SWIFT:-swift} build $BUILD_FLAGS
  fi
fi
if [ ! -x "$BINARY" ]; then
  echo "bench: error: $BINARY not found (build with: swift build -c release --product mockserver)" >&2
  exit 1
fi

exec python3 Benchmarks/bench.py --binary "$BINARY" --build-label "$LABEL"
