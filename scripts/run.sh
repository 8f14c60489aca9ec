#!/usr/bin/env bash
# Sets up, builds, and runs the main job on MODEL (a GGUF file). With no
# model it synthesizes a small random-weight model first.
#   scripts/run.sh [MODEL.gguf]
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${SYNAPSE_JOBS:-$(nproc)}

bash scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C build -j "$jobs" synapse

model=${1:-}
if [ -z "$model" ]; then
  model=build/demo-tiny-llama.gguf
  echo "No model given: synthesizing a tiny Llama-architecture model with RANDOM weights"
  echo "(its output is meaningless; pass a real GGUF file to use a real model)."
  ./build/synapse synth --arch llama --preset tiny --type q8_0 --seed 1 -o "$model"
fi
./build/synapse inspect "$model"
