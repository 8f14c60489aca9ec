#!/usr/bin/env bash
# Decode throughput of one model over 1, 2 and 3 pipeline ranks, one
# sequence and --parallel P, in interleaved rounds:
#   ranks.sh -m FILE [-n 64] [-P 8] [-k 3] [-t 1] [-b build]
# Each round runs, in turn: one process with -t T and with -t T*R for each R
# (the same cores as R ranks), then mpirun -np R synapse-mpi with -t T per
# rank; each for -np 1 and -np P. synapse-membw runs before the first round
# and after the last. Prints a markdown table of decode tok/s per round (one
# sequence: llama.cpp's "eval" rate; -np P: the aggregate rate) and the
# host's CPU model.
set -euo pipefail

usage() {
  echo "usage: $0 -m FILE [-n N_GEN] [-P PARALLEL] [-k ROUNDS] [-t THREADS_PER_RANK] [-b BUILD_DIR]" >&2
  exit 2
}

model="" n_gen=64 parallel=8 rounds=3 threads=1 build=build
while getopts "m:n:P:k:t:b:h" opt; do
  case "$opt" in
    m) model=$OPTARG ;;
    n) n_gen=$OPTARG ;;
    P) parallel=$OPTARG ;;
    k) rounds=$OPTARG ;;
    t) threads=$OPTARG ;;
    b) build=$OPTARG ;;
    *) usage ;;
  esac
done
[[ -n "$model" ]] || usage
for tool in synapse synapse-mpi bench/membw/synapse-membw; do
  [[ -x "$build/$tool" ]] || { echo "$0: $build/$tool is not built" >&2; exit 1; }
done
command -v mpirun >/dev/null || { echo "$0: mpirun not found (apt-get install openmpi-bin)" >&2; exit 1; }

run_args=(run -m "$model" --tokens "1 17 300 42 7" -n "$n_gen" --temp 0 --ignore-eos --ids)
mpi=(mpirun --allow-run-as-root --oversubscribe --bind-to none)

# The decode rate a run printed on stderr.
rate() {
  local err=$1
  if grep -q "sequences:" "$err"; then
    sed -n 's/.*sequences:.* \([0-9.]*\) tok\/s$/\1/p' "$err" | tail -1
  else
    sed -n 's/.*run: *eval:.* \([0-9.]*\) tok\/s$/\1/p' "$err" | tail -1
  fi
}

err=$(mktemp)
trap 'rm -f "$err"' EXIT
membw() { "$build/bench/membw/synapse-membw" 2>&1 | grep 'read bandwidth'; }

echo "host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs"
echo "synapse-membw before: $(membw)"
echo
echo "| round | setup | -np 1 tok/s | -np $parallel tok/s |"
echo "|---|---|--:|--:|"
for round in $(seq 1 "$rounds"); do
  for ranks in 1 2 3; do
    setups=("1 process, -t $((threads * ranks))")
    ((ranks > 1)) && setups+=("$ranks ranks x -t $threads")
    for setup in "${setups[@]}"; do
      row="| $round | $setup |"
      for np in 1 "$parallel"; do
        if [[ $setup == 1\ process* ]]; then
          "$build/synapse" "${run_args[@]}" -np "$np" -t "$((threads * ranks))" >/dev/null 2>"$err"
        else
          "${mpi[@]}" -np "$ranks" "$build/synapse-mpi" "${run_args[@]}" -np "$np" -t "$threads" >/dev/null 2>"$err"
        fi
        row+=" $(rate "$err") |"
      done
      echo "$row"
    done
  done
done
echo
echo "synapse-membw after: $(membw)"
