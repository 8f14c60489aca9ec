#!/usr/bin/env bash
# Sets up, builds, and runs the main job: generation through the region
# scheduler. With no model it synthesizes a small random-weight model first.
#   scripts/run.sh [MODEL.gguf|MODEL.bin] [TOKENS]
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${SYNAPSE_JOBS:-$(nproc)}

bash scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C build -j "$jobs" synapse

model=${1:-}
n=${2:-64}
if [ -z "$model" ]; then
  model=build/demo-tiny-llama.gguf
  echo "No model given: synthesizing a tiny Llama-architecture model with RANDOM weights."
  echo "Its output is meaningless text; pass a real GGUF file to use a real model."
  ./build/synapse synth --arch llama --preset tiny --type q8_0 --seed 1 -o "$model"
fi
./build/synapse inspect "$model" | sed -n '1,3p'
echo "== greedy generation of $n tokens from BOS:"
./build/synapse run -m "$model" -n "$n" --temp 0 --trace-regions build/demo-trace.jsonl
echo "== region trace: build/demo-trace.jsonl ($(wc -l < build/demo-trace.jsonl) events)"
