#!/usr/bin/env bash
# Installs the npm packages the server's client tests use into DEST
# (DEST/node_modules): the official OpenAI client and playwright-core (which
# drives the Debian chromium; it never downloads a browser). Pinned
# versions; idempotent. Tests that need them skip when DEST lacks them.
#   tests/serve/node/install.sh build/node
set -euo pipefail
readonly PACKAGES=(openai@4.95.0 playwright-core@1.65.1)
[[ $# -eq 1 ]] || { echo "usage: tests/serve/node/install.sh DEST" >&2; exit 1; }
DEST=$1
STAMP="$DEST/INSTALLED"
if [[ -f "$STAMP" && "$(cat "$STAMP")" == "${PACKAGES[*]}" ]]; then
  echo "node test packages already installed in $DEST"
  exit 0
fi
command -v npm >/dev/null || { echo "install.sh: npm not found" >&2; exit 1; }
mkdir -p "$DEST"
rm -f "$STAMP"
# No package.json or lock file is written into the repository: the exact
# versions above are the pin.
npm install --prefix "$DEST" --no-save --no-package-lock --no-audit --no-fund "${PACKAGES[@]}" >"$DEST/npm.log" 2>&1 ||
  { echo "install.sh: npm install failed (details in $DEST/npm.log)" >&2; exit 1; }
echo "${PACKAGES[*]}" >"$STAMP"
echo "node test packages installed in $DEST"
