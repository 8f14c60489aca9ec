#!/usr/bin/env bash
# Synapse against llama.cpp on one model, back to back:
#   compare.sh -m FILE [-p 512] [-n 128] [-t 1] [-k 10] [-s 1G] [-b build] [-o DIR] [-r]
# A caller of synapse-bench-run (bench/run): K paired rounds of `synapse
# bench` and `synapse-peer bench`, the engine that goes first alternating,
# synapse-membw before and after; prints per test the median t/s of each
# engine, the median ratio, its bootstrap 95% interval and a verdict, and
# leaves rounds.json, summary.md and ratios.png in DIR. -r: before every
# run the model is dropped from the page cache and read back (--reread).
set -euo pipefail

usage() {
  echo "usage: $0 -m FILE [-p N_PROMPT] [-n N_GEN] [-t THREADS] [-k ROUNDS] [-s MEMBW_SIZE] [-b BUILD_DIR]" \
    "[-o OUT_DIR] [-r]" >&2
  exit 2
}

model="" n_prompt=512 n_gen=128 threads=1 rounds=10 membw_size=1G build=build out="" reread=""
while getopts "m:p:n:t:k:s:b:o:rh" opt; do
  case "$opt" in
    m) model=$OPTARG ;;
    p) n_prompt=$OPTARG ;;
    n) n_gen=$OPTARG ;;
    t) threads=$OPTARG ;;
    k) rounds=$OPTARG ;;
    s) membw_size=$OPTARG ;;
    b) build=$OPTARG ;;
    o) out=$OPTARG ;;
    r) reread=--reread ;;
    *) usage ;;
  esac
done
[[ -n "$model" ]] || usage

runner="$build/bench/run/synapse-bench-run"
[[ -x "$runner" ]] || { echo "$0: $runner not built (ninja -C $build synapse-bench-run)" >&2; exit 1; }
exec "$runner" -m "$model" -p "$n_prompt" -n "$n_gen" -t "$threads" -k "$rounds" -s "$membw_size" -b "$build" \
  ${out:+-o "$out"} ${reread}
