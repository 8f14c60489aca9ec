#!/usr/bin/env bash
# Sets up, builds and runs every test:
#   1. the release build and its test suite (ctest),
#   2. a clang ASan/UBSan build running the suite (all but the big llama.cpp
#      load matrix) and the fuzzers,
#   3. a clang ThreadSanitizer build of the tests of the threaded code (chunk
#      file, residency manager, thread pool, paged sessions, the server's batch engine).
# The llama.cpp peer is installed from npm; peer tests skip if the registry
# cannot be reached, and CI fails if it can and the install still failed.
# Every skipped test is listed with its reason.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${SYNAPSE_JOBS:-$(nproc)}

bash scripts/setup.sh

echo "== release build"
# -Werror here (not for users' own builds): a new warning fails CI.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DSYNAPSE_WERROR=ON >/dev/null
ninja -C build -j "$jobs"

echo "== llama.cpp peer"
if ! bash bench/peer/install.sh build/peer; then
  if bash bench/peer/install.sh --registry-reachable; then
    echo "the npm registry is reachable, yet the llama.cpp peer did not install" >&2
    exit 1
  fi
  echo "peer not installed (the npm registry is unreachable): tests that need it will skip"
fi

echo "== npm packages for the server's client tests"
# The OpenAI client and playwright-core (driving Debian's chromium); the
# tests that need them skip if the registry cannot be reached.
if ! bash tests/serve/node/install.sh build/node; then
  if bash bench/peer/install.sh --registry-reachable; then
    echo "the npm registry is reachable, yet the server's test packages did not install" >&2
    exit 1
  fi
  echo "npm test packages not installed (the npm registry is unreachable): tests that need them will skip"
fi

echo "== tests"
# The full llama.cpp logits matrix (label slow, about an hour) is for people.
ctest --test-dir build --output-on-failure -j "$jobs" -LE slow
bash scripts/list_skipped_tests.sh build

echo "== sanitizer build (clang, ASan + UBSan) and fuzzing"
# Line tables only: reports still name functions and lines, and the build
# (the longest of CI's) compiles and links faster than with full -g.
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG" \
  -DCMAKE_CXX_COMPILER=clang++ -DSYNAPSE_SANITIZE=ON -DSYNAPSE_FUZZ=ON -DSYNAPSE_WERROR=ON >/dev/null
ninja -C build-asan -j "$jobs" synapse synapse_tests fuzz_gguf fuzz_tokenizer fuzz_chat_template fuzz_request fuzz_imatrix \
  fuzz_safetensors fuzz_frame
# Everything but the large llama.cpp load matrix (its files are big and the
# peer is not instrumented anyway) and the perplexity comparisons with
# llama.cpp (numerics; their code paths run in the eval tests). Full malloc
# stacks let the suppression name the one libstdc++ function it covers.
# One process per core, each a shard of the tests (most tests use one core).
ASAN_OPTIONS=detect_leaks=1:fast_unwind_on_malloc=0 LSAN_OPTIONS=suppressions=tests/lsan.supp \
  bash scripts/run_gtest_shards.sh "$jobs" build-asan/shards ./build-asan/tests/synapse_tests --gtest_brief=1 \
  --gtest_filter='-SynthPeer*:CliInspect.JsonTotals*:*PeerLogits*:FullMatrix*:*PerplexityCliStories*:PerplexityCli.KlDivergence*'

# The fuzzers, and the instruction-set objects' symbol check on clang's objects.
ctest --test-dir build-asan --output-on-failure -j "$jobs" -L 'fuzz|symbols'

echo "== thread sanitizer build (clang, TSan): the threaded code's tests"
# -O1 with line tables: cheap to compile, and reports still name the lines.
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
  -DCMAKE_CXX_COMPILER=clang++ -DSYNAPSE_TSAN=ON -DSYNAPSE_WERROR=ON >/dev/null
ninja -C build-tsan -j "$jobs" synapse_tsan_tests
# Not the allocation-counting test: its counting operator new is not linked
# (TSan's runtime brings its own).
TSAN_OPTIONS=halt_on_error=1 bash scripts/run_gtest_shards.sh "$jobs" build-tsan/shards \
  ./build-tsan/tests/synapse_tsan_tests --gtest_brief=1 \
  --gtest_filter='-PagedSession.PagedDecodeStepsAllocateNothing'
