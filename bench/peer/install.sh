#!/usr/bin/env bash
# Installs the pinned llama.cpp peer (prebuilt CPU libraries from the npm
# package below) into DEST:
#   DEST/lib/      libllama, libggml, libggml-base and the libggml-cpu-* variants
#   DEST/VERSION   the package spec, written last; its presence means "installed"
#   DEST/npm.log   npm's output (kept for diagnosis, never printed)
# synapse-peer looks in <build>/peer/lib by default, so install with
#   bench/peer/install.sh <build>/peer
# Idempotent: does nothing when DEST/VERSION already names this package.
# bench/peer/install.sh --registry-reachable exits 0 when npm can see the
# pinned package (CI: an install that failed then is an error).
set -euo pipefail

readonly PACKAGE='@node-llama-cpp/linux-x64'
readonly VERSION='3.22.1'
# The registry's dist.integrity of that tarball: a re-published or corrupted
# tarball is refused rather than silently compared against.
readonly SHA512_BASE64='5uCCDNqWCNfaAm8aR/Uzxbo4HBpKgNF91kCHPepKhgMgV2OAmatoefbOlMihsqCiH2Od35E/eUHQCFbfRBJuOg=='
readonly SPEC="${PACKAGE}@${VERSION}"

die() { echo "install.sh: $*" >&2; exit 1; }

[[ $# -eq 1 ]] || die "usage: bench/peer/install.sh DEST   (e.g. build/peer)"
if [[ "$1" == --registry-reachable ]]; then
  exec npm view "$SPEC" version >/dev/null 2>&1
fi
DEST=$1

if [[ -f "$DEST/VERSION" && "$(cat "$DEST/VERSION")" == "$SPEC" ]]; then
  echo "llama.cpp peer $SPEC already installed in $DEST"
  exit 0
fi

command -v npm >/dev/null || die "npm not found; install Node.js/npm to fetch $SPEC"
mkdir -p "$DEST"
DEST=$(cd "$DEST" && pwd)
LOG="$DEST/npm.log"

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

if ! (cd "$WORK" && npm pack --silent "$SPEC") >"$LOG" 2>&1; then
  die "could not fetch $SPEC with npm (is the npm registry reachable? details in $LOG)"
fi
TARBALL=$(ls "$WORK"/*.tgz 2>/dev/null | head -n1)
[[ -n "$TARBALL" ]] || die "npm pack produced no tarball (details in $LOG)"

actual=$(sha512sum "$TARBALL" | cut -d' ' -f1 | xxd -r -p | base64 -w0)
[[ "$actual" == "$SHA512_BASE64" ]] || die "checksum mismatch for $SPEC; refusing to install"

tar -xzf "$TARBALL" -C "$WORK"
SRC="$WORK/package/bins/linux-x64"
[[ -f "$SRC/libllama.v0.5.0.so" ]] || die "unexpected package layout: no bins/linux-x64/libllama.v0.5.0.so"

# Replace the lib folder as a whole so a half-finished earlier run leaves no
# stale variants behind; VERSION is written only once everything is in place.
rm -rf "$DEST/lib" "$DEST/VERSION"
mkdir -p "$DEST/lib"
cp "$SRC"/*.so "$DEST/lib/"
echo "$SPEC" >"$DEST/VERSION"
echo "installed llama.cpp peer $SPEC into $DEST/lib"
