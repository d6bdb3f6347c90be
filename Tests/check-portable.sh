#!/bin/sh
# make check-portable: compiles ClientKit's portable core on Linux the way Apple platforms get it, with the
# Linux-only parts left out, and fails when the core reaches for something an Apple SDK lacks.
#
#   1. Sources/ClientKit minus Sources/ClientKit/Linux is compiled with swiftc, CLIENTKIT_NATIVE undefined
#      (so every `#if CLIENTKIT_NATIVE` branch is out), and an include path holding HTTPCore's module
#      only: `import NativeSupport`, `COpenSSL`, `CZlib` or `CLinuxShims` fails with "no such module".
#   2. The object's undefined symbols may only be Swift symbols and the Swift runtime's: a direct call to
#      a C library function (Glibc's poll, socket, epoll_*, errno...) fails the check, even though
#      Foundation re-exports Glibc on Linux.
#   3. No core source imports Glibc, Musl, a C module, or a module only swift-corelibs-foundation has
#      (FoundationEssentials, FoundationInternationalization…); FoundationNetworking only under
#      `#if canImport(FoundationNetworking)` (Apple's Foundation has URLSession itself).
#   4. No core source names an API Apple platforms only have from their 2025 releases (iOS/macOS 26),
#      later than the platforms Package.swift declares (iOS 18, macOS 15, tvOS 18, watchOS 11): the Linux
#      toolchain has no availability checking, so these would compile here and fail in Xcode.
#   5. The core compiles without warnings (-warnings-as-errors).
set -eu
SWIFT=${SWIFT:-swift}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${CHECK_PORTABLE_DIR:-$ROOT/.build/check-portable}
PACKAGE=$(basename "$ROOT" | tr A-Z a-z)

$SWIFT build --target HTTPCore >/dev/null
BIN=$($SWIFT build --show-bin-path)
rm -rf "$OUT" && mkdir -p "$OUT/modules"
cp -R "$BIN/Modules/HTTPCore.swiftmodule" "$OUT/modules/"

SOURCES=$(find "$ROOT/Sources/ClientKit" -name '*.swift' -not -path "$ROOT/Sources/ClientKit/Linux/*" | sort)
echo "check-portable: compiling $(echo "$SOURCES" | wc -l | tr -d ' ') core sources without Sources/ClientKit/Linux"

# shellcheck disable=SC2086
if grep -nE '^[[:space:]]*(@_exported[[:space:]]+)?import[[:space:]]+(struct[[:space:]]+|enum[[:space:]]+|class[[:space:]]+|func[[:space:]]+)?(Glibc|Musl|Android|WinSDK|COpenSSL|CZlib|CLinuxShims|NativeSupport|FoundationEssentials|FoundationInternationalization|_FoundationCollections|_FoundationCShims|_CoreFoundation)\b' $SOURCES; then
  echo "check-portable: FAILED: the portable core imports a Linux-only module (above)" >&2
  exit 1
fi

# FoundationNetworking exists on Linux only: every import of it must sit right under its canImport check.
# shellcheck disable=SC2086
UNGUARDED=$(awk '
  /^[[:space:]]*#if[[:space:]]+canImport\(FoundationNetworking\)/ { guarded = 1; next }
  /^[[:space:]]*(@_exported[[:space:]]+)?import[[:space:]]+FoundationNetworking/ {
    if (!guarded) print FILENAME ":" FNR ": " $0
    next
  }
  /^[[:space:]]*$/ { next }
  { guarded = 0 }
' $SOURCES)
if [ -n "$UNGUARDED" ]; then
  echo "$UNGUARDED" >&2
  echo "check-portable: FAILED: import FoundationNetworking outside #if canImport(FoundationNetworking) (above)" >&2
  exit 1
fi

# APIs Apple platforms have only from iOS 26 / macOS 26 / tvOS 26 / watchOS 26 (2025), later than the
# declared platforms; swift-corelibs-foundation and the Linux standard library have them unconditionally.
# Comments (// and ///) are skipped, and so are lines marked `// check-portable: allow (reason)`, for a
# branch Apple platforms never compile (e.g. the `#else` of `#if canImport(Darwin)`).
NEWER='String\.Encoding\(ianaName|\.ianaName\b|\bInlineArray\b|Task\.immediate|\bTask[[:space:]]*\(name:|\bUTF8Span\b|\butf8Span\b|\bObservations[[:space:]]*[({]|\bTaskGroup\.addImmediateTask|\bwithTaskCancellationShield\b'
# shellcheck disable=SC2086
if grep -nE "$NEWER" $SOURCES | grep -vE '^[^:]+:[0-9]+:[[:space:]]*//' | grep -v 'check-portable: allow'; then
  echo "check-portable: FAILED: the portable core uses an API Apple platforms only have from their 2025 releases (above); the package declares iOS 18 / macOS 15 / tvOS 18 / watchOS 11" >&2
  exit 1
fi

# shellcheck disable=SC2086
swiftc -parse-as-library -swift-version 6 -module-name ClientKit -package-name "$PACKAGE" \
  -D CLIENTKIT_PORTABLE_CHECK -I "$OUT/modules" -wmo -warnings-as-errors -c $SOURCES -o "$OUT/ClientKitCore.o" \
  || { echo "check-portable: FAILED: the portable core does not compile without the Linux-only parts, or compiles with a warning" >&2; exit 1; }

# Undefined symbols that are neither Swift symbols ($s…) nor the Swift runtime's entry points, minus a
# short list of C symbols every Apple platform has too: the C math library (Double.rounded, pow), the
# blocks runtime (Dispatch closures), ELF thread-local storage and `syscall`, which Synchronization's Mutex
# inlines on Linux (its futex). Anything else, e.g. poll, socket, close, __errno_location, is a C call
# made by the core itself.
ALLOWED='^(ceil|floor|pow|rint|round|trunc|log|log10|exp|sqrt|fmod|memcpy|memmove|memset|malloc|free|_Block_copy|_Block_release|_NSConcreteStackBlock|_NSConcreteGlobalBlock|__tls_get_addr|syscall|__stack_chk_fail|__stack_chk_guard)$'
nm -u "$OUT/ClientKitCore.o" | awk '{print $NF}' \
  | grep -vE '^_?\$s|^_?swift_|^_?_swift|^_?__swift' | grep -vE "$ALLOWED" \
  > "$OUT/foreign-symbols.txt" || true
if [ -s "$OUT/foreign-symbols.txt" ]; then
  echo "check-portable: FAILED: the portable core calls C functions directly (Glibc or another C library):" >&2
  sed 's/^/  /' "$OUT/foreign-symbols.txt" >&2
  exit 1
fi
echo "check-portable: OK ($(nm -u "$OUT/ClientKitCore.o" | wc -l | tr -d ' ') undefined symbols: Swift, the Swift runtime and the allowed C symbols)"
