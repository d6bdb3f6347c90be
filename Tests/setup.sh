#!/bin/sh
# Installs what the tests need beyond the Swift toolchain, only when it is missing.
# Tools the tests drive: curl and python3 (both on the Debian Swift image).
set -e
if ! command -v curl >/dev/null 2>&1; then
  echo "setup: installing curl"
  apt-get update -qq >/dev/null 2>&1 || true
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq curl >/dev/null
fi
