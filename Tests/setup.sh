#!/bin/sh
# Installs what the tests need beyond the Swift toolchain, only when it is missing.
# Tools the tests drive: curl and python3 (both on the Debian Swift image), and headless Chromium with
# chromedriver for the dashboard test (Tests/Browser/dashboard_test.py).
set -e
if ! command -v curl >/dev/null 2>&1; then
  echo "setup: installing curl"
  apt-get update -qq >/dev/null 2>&1 || true
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq curl >/dev/null
fi
# The Python WireMock admin client (PyPI package `wiremock`) for the admin API compatibility test.
if command -v python3 >/dev/null 2>&1 || { apt-get update -qq >/dev/null 2>&1 || true; \
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 >/dev/null; }; then :; fi
if ! python3 -c "import wiremock.client" >/dev/null 2>&1; then
  echo "setup: installing the python wiremock client"
  if ! python3 -m pip --version >/dev/null 2>&1; then
    apt-get update -qq >/dev/null 2>&1 || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-pip >/dev/null
  fi
  python3 -m pip install -q --disable-pip-version-check wiremock >/dev/null 2>&1 \
    || python3 -m pip install -q --disable-pip-version-check --break-system-packages wiremock >/dev/null
fi
# The Python WebSocket client (PyPI package `websockets`), an independent RFC 6455 peer for the WebSocket
# tests (Tests/RobustnessTests/WebSocketTests.swift).
if ! python3 -c "import websockets" >/dev/null 2>&1; then
  echo "setup: installing the python websockets client"
  python3 -m pip install -q --disable-pip-version-check websockets >/dev/null 2>&1 \
    || python3 -m pip install -q --disable-pip-version-check --break-system-packages websockets >/dev/null
fi
# Pact's reference implementation (PyPI package `pact-python`, v3 or later: the Pact FFI with its mock server
# and verifier) for the Pact round-trip tests (Tests/ContractsTests/Pact/).
if ! python3 -c "import pact; assert int(pact.__version__.split('.')[0]) >= 3" >/dev/null 2>&1; then
  echo "setup: installing pact-python"
  python3 -m pip install -q --disable-pip-version-check 'pact-python>=3' >/dev/null 2>&1 \
    || python3 -m pip install -q --disable-pip-version-check --break-system-packages 'pact-python>=3' >/dev/null
fi
# Debian's redis-server for the shared state store's tests (Tests/TestSupport/RedisServer.swift starts it on a
# free loopback port; issue 47, docs/scaling.md).
if ! command -v redis-server >/dev/null 2>&1; then
  echo "setup: installing redis-server"
  apt-get update -qq >/dev/null 2>&1 || true
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
fi
# Headless Chromium and chromedriver (Debian packages) for the browser tests: CORS
# (Tests/RobustnessTests/CORSBrowserTests.swift, driving Tests/Browser/cors_fetch.py) and the dashboard
# (Tests/Browser/dashboard_test.py).
if ! command -v chromedriver >/dev/null 2>&1 || ! command -v chromium >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing chromium and chromium-driver"
    apt-get update -qq >/dev/null 2>&1 || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null \
      || echo "setup: chromium could not be installed; the browser tests are skipped (make test-browser fails)"
  else
    echo "setup: no apt-get; install Chromium and chromedriver to run the browser tests"
  fi
fi
# Java for the differential compatibility run against WireMock 2.35.1 (the standalone jar ships in the
# Python `wiremock` package above; Tests/CompatibilityTests).
if ! command -v java >/dev/null 2>&1; then
  echo "setup: installing openjdk-17-jre-headless"
  apt-get update -qq >/dev/null 2>&1 || true
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless >/dev/null
fi
