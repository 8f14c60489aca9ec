#!/usr/bin/env bash
# Sets up, builds, and runs the main job: generation through the region
# scheduler. With no model given it takes $SYNAPSE_MODEL, else the first GGUF
# model in the llama.cpp, Hugging Face or Ollama caches, else a Hugging Face
# safetensors snapshot (synapse find-model), and only when there is none
# synthesizes a small random-weight model.
#   scripts/run.sh [MODEL.gguf|MODEL.bin|FOLDER] [TOKENS]
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${SYNAPSE_JOBS:-$(nproc)}

bash scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C build -j "$jobs" synapse

model=${1:-}
n=${2:-64}
if [ -z "$model" ]; then
  found=0
  model=$(./build/synapse find-model) || found=$?
  if [ "$found" -eq 2 ]; then exit 2; fi  # $SYNAPSE_MODEL names nothing (said on stderr)
  if [ "$found" -eq 0 ]; then
    echo "No model given: using $model (pass a path, or set SYNAPSE_MODEL, to choose another)."
  else
    model=build/demo-tiny-llama.gguf
    echo "No model given and none found: synthesizing a tiny Llama-architecture model with RANDOM weights."
    echo "Its output is meaningless text; pass a real GGUF file to use a real model."
    ./build/synapse synth --arch llama --preset tiny --type q8_0 --seed 1 -o "$model"
  fi
fi
./build/synapse inspect "$model" | sed -n '1,3p'
echo "== greedy generation of $n tokens from BOS:"
./build/synapse run -m "$model" -n "$n" --temp 0 --trace-regions build/demo-trace.jsonl
echo "== region trace: build/demo-trace.jsonl ($(wc -l < build/demo-trace.jsonl) events)"
