#!/usr/bin/env bash
# run_fuzz.sh FUZZER SYNAPSE CORPUS_DIR SECONDS
# Seeds the corpus with small synthetic models, then fuzzes for SECONDS.
set -euo pipefail
fuzzer=$1 synapse=$2 corpus=$3 seconds=$4
mkdir -p "$corpus"
if [ -z "$(ls -A "$corpus")" ]; then
  for arch in llama qwen2 qwen3 olmoe; do
    for type in f16 q8_0 q4_k; do
      "$synapse" synth --arch "$arch" --preset tiny --type "$type" --n-layer 1 --n-vocab 300 \
        --n-embd 256 --n-ff 256 -o "$corpus/seed-$arch-$type.gguf" >/dev/null
    done
  done
fi
# -max_len covers the seeds' headers; tensor data past it is not where parsers break.
exec "$fuzzer" "$corpus" -max_total_time="$seconds" -max_len=65536 -timeout=10 \
  -rss_limit_mb=2048 -print_final_stats=1
