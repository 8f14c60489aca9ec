#!/usr/bin/env bash
# Sets up, builds and runs every test:
#   1. the release build and its test suite (ctest),
#   2. a clang ASan/UBSan build running the suite (all but the big llama.cpp
#      load matrix) and the fuzzers.
# The llama.cpp peer is installed from npm; peer tests skip if that fails.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${SYNAPSE_JOBS:-$(nproc)}

bash scripts/setup.sh

echo "== release build"
# -Werror here (not for users' own builds): a new warning fails CI.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DSYNAPSE_WERROR=ON >/dev/null
ninja -C build -j "$jobs"

echo "== llama.cpp peer"
bash bench/peer/install.sh build/peer || echo "peer not installed: tests that need it will skip"

echo "== tests"
ctest --test-dir build --output-on-failure -j "$jobs" -LE slow

echo "== sanitizer build (clang, ASan + UBSan) and fuzzing"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER=clang++ -DSYNAPSE_SANITIZE=ON -DSYNAPSE_FUZZ=ON -DSYNAPSE_WERROR=ON >/dev/null
ninja -C build-asan -j "$jobs" synapse synapse_tests fuzz_gguf fuzz_tokenizer fuzz_chat_template
# Everything but the large llama.cpp load matrix (its files are big and the
# peer is not instrumented anyway). Full malloc stacks let the suppression
# name the one libstdc++ function it covers.
ASAN_OPTIONS=detect_leaks=1:fast_unwind_on_malloc=0 LSAN_OPTIONS=suppressions=tests/lsan.supp ./build-asan/tests/synapse_tests --gtest_brief=1 \
  --gtest_filter='-SynthPeer*:CliInspect.JsonTotals*'

ctest --test-dir build-asan --output-on-failure -L fuzz
