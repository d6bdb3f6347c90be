#!/bin/sh
# make test-install (also the last step of make test): what the README's "Install" section tells a newcomer.
# 1. `make install-files PREFIX=…` installs a working binary and a man page generated from --help.
# 2. A scratch SwiftPM package depending on this clone with `path:` resolves the whole product graph
#    (`swift package describe` names every product, MockServerTesting included) and builds and runs a tiny
#    executable against the HTTPCore library (one small module, so this stays cheap).
set -e
SWIFT=${SWIFT:-swift}
repo=$(cd "$(dirname "$0")/.." && pwd)
binary="$repo/.build/debug/mockserver"
[ -x "$binary" ] || { echo "install-check: $binary missing: run swift build first" >&2; exit 1; }
scratch=$(mktemp -d "${TMPDIR:-/tmp}/mockserver-install-XXXXXX")
trap 'rm -rf "$scratch"' EXIT

make -s -C "$repo" install-files PREFIX="$scratch/prefix" MOCKSERVER_BIN="$binary" >/dev/null
"$scratch/prefix/bin/mockserver" --version | grep -q '^mockserver '
grep -q '^\.TH MOCKSERVER 1' "$scratch/prefix/share/man/man1/mockserver.1"
grep -q -- '--root-dir DIR' "$scratch/prefix/share/man/man1/mockserver.1"
if command -v man >/dev/null 2>&1; then
  MANWIDTH=100 man -l "$scratch/prefix/share/man/man1/mockserver.1" 2>/dev/null | grep -q 'enable-stub-cors'
fi

# The package identity of a path: dependency is the folder's name (SwiftPM), so `package:` names it.
identity=$(basename "$repo")
mkdir -p "$scratch/app/Sources/app"
cat > "$scratch/app/Package.swift" <<SWIFT
// swift-tools-version:6.0
import PackageDescription

let package = Package(
  name: "app",
  platforms: [.macOS(.v15)],
  dependencies: [.package(path: "$repo")],
  targets: [
    .executableTarget(name: "app", dependencies: [.product(name: "HTTPCore", package: "$identity")]),
    .testTarget(
      name: "appTests",
      dependencies: [.product(name: "MockServerTesting", package: "$identity")]),
  ]
)
SWIFT
mkdir -p "$scratch/app/Tests/appTests"
echo 'import MockServerTesting' > "$scratch/app/Tests/appTests/Smoke.swift"
cat > "$scratch/app/Sources/app/main.swift" <<'SWIFT'
import HTTPCore

print(HTTPDate.format(0))
SWIFT
cd "$scratch/app"
"$SWIFT" package describe --type json | grep -q '"MockServerTesting"' \
  || { echo "install-check: the path dependency does not resolve MockServerTesting" >&2; exit 1; }
"$SWIFT" build --product app -q
out=$("$scratch/app/.build/debug/app")
[ "$out" = "Thu, 01 Jan 1970 00:00:00 GMT" ] || { echo "install-check: unexpected output '$out'" >&2; exit 1; }
echo "install-check: make install-files and a path: dependency work"
