#!/usr/bin/env bash
# Synapse against llama.cpp on one model, back to back:
#   compare.sh -m FILE [-p 512] [-n 128] [-t 1] [-k 5] [-s 1G] [-b build]
# Runs `synapse bench` and `synapse-peer bench` interleaved (A B A B ...) for
# K rounds, each with one timed repetition per round, so drift in the
# machine's speed hits both engines alike; measures read bandwidth with
# synapse-membw before and after. Prints per test the median t/s of each
# engine, their ratio and the bandwidth figures. Needs only bash, sed, awk
# and sort (no jq, no python).
set -euo pipefail

usage() {
  echo "usage: $0 -m FILE [-p N_PROMPT] [-n N_GEN] [-t THREADS] [-k ROUNDS] [-s MEMBW_SIZE] [-b BUILD_DIR]" >&2
  exit 2
}

model="" n_prompt=512 n_gen=128 threads=1 rounds=5 membw_size=1G build=build
while getopts "m:p:n:t:k:s:b:h" opt; do
  case "$opt" in
    m) model=$OPTARG ;;
    p) n_prompt=$OPTARG ;;
    n) n_gen=$OPTARG ;;
    t) threads=$OPTARG ;;
    k) rounds=$OPTARG ;;
    s) membw_size=$OPTARG ;;
    b) build=$OPTARG ;;
    *) usage ;;
  esac
done
[[ -n "$model" && -f "$model" ]] || { echo "$0: -m FILE: no such model file" >&2; usage; }
for v in "$n_prompt" "$n_gen" "$threads" "$rounds"; do
  [[ "$v" =~ ^[0-9]+$ ]] || { echo "$0: '$v' is not a count" >&2; usage; }
done
(( rounds >= 1 )) || usage
(( n_prompt > 0 || n_gen > 0 )) || { echo "$0: -p and -n are both 0" >&2; usage; }

synapse="$build/synapse"
peer="$build/bench/peer/synapse-peer"
membw="$build/bench/membw/synapse-membw"
for exe in "$synapse" "$peer" "$membw"; do
  [[ -x "$exe" ]] || { echo "$0: $exe not built (ninja -C $build synapse synapse-peer synapse-membw)" >&2; exit 1; }
done

echo "# $0 -m $model -p $n_prompt -n $n_gen -t $threads -k $rounds -s $membw_size -b $build"

# Median GB/s of one bandwidth run, from its JSON line.
membw_gbps() {
  "$membw" -t "$threads" -s "$membw_size" -r 3 -o json | sed -n 's/.*"median_gbps":\([0-9.eE+-]*\).*/\1/p'
}

results=$(mktemp)
trap 'rm -f "$results"' EXIT

bw_before=$(membw_gbps)
for ((round = 1; round <= rounds; ++round)); do
  # synapse: llama-bench JSON lines; the test name comes from n_prompt/n_gen.
  "$synapse" bench -m "$model" -p "$n_prompt" -n "$n_gen" -t "$threads" -r 1 -o jsonl |
    sed -n 's/.*"avg_ts":\([0-9.eE+-]*\).*"decode_weight_bytes":\([0-9]*\).*"n_gen":\([0-9]*\).*"n_prompt":\([0-9]*\).*/\1 \2 \3 \4/p' |
    awk '{ print "synapse", ($4 > 0 ? "pp" $4 : "tg" $3), $1, $2 }' >>"$results"
  # synapse-peer: JSON lines with "test" and "median_tps" (of its one rep).
  "$peer" bench "$model" --pp "$n_prompt" --tg "$n_gen" -t "$threads" -r 1 |
    sed -n 's/.*"median_tps":\([0-9.eE+-]*\).*"test":"\([a-z0-9]*\)".*/\2 \1/p' |
    awk '{ print "llama.cpp", $1, $2 }' >>"$results"
  echo "# round $round/$rounds done" >&2
done
bw_after=$(membw_gbps)

# Median of the t/s an engine reached on a test over the rounds.
median_tps() {
  awk -v e="$1" -v t="$2" '$1 == e && $2 == t { print $3 }' "$results" | sort -g |
    awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2];
                             else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# The per-round values, comma separated, in round order.
rounds_tps() {
  awk -v e="$1" -v t="$2" '$1 == e && $2 == t { printf "%s%.2f", (n++ ? "," : ""), $3 } END { print "" }' "$results"
}

tests=()
(( n_prompt > 0 )) && tests+=("pp$n_prompt")
(( n_gen > 0 )) && tests+=("tg$n_gen")

echo
printf "membw (%s threads, %s): %.2f GB/s before, %.2f GB/s after\n" "$threads" "$membw_size" "$bw_before" "$bw_after"
echo
printf "| %-7s | %13s | %13s | %8s | %-24s | %-24s |\n" test "synapse t/s" "llama.cpp t/s" ratio \
  "synapse rounds" "llama.cpp rounds"
printf "| %-7s | %13s | %13s | %8s | %-24s | %-24s |\n" ------- ------------: ------------: -------: \
  ------------------------ ------------------------
decode_bytes=$(awk '$1 == "synapse" { print $4; exit }' "$results")
for t in "${tests[@]}"; do
  s=$(median_tps synapse "$t")
  l=$(median_tps llama.cpp "$t")
  ratio=$(awk -v s="$s" -v l="$l" 'BEGIN { if (l + 0 > 0) printf "%.3f", s / l; else print "nan" }')
  printf "| %-7s | %13.2f | %13.2f | %8s | %-24s | %-24s |\n" "$t" "$s" "$l" "$ratio" \
    "$(rounds_tps synapse "$t")" "$(rounds_tps llama.cpp "$t")"
done

# Decode is bound by reading the weights: the bandwidth each engine's median
# decode rate implies (same bytes per token for both), against membw's.
if (( n_gen > 0 )); then
  echo
  for e in synapse llama.cpp; do
    awk -v e="$e" -v tps="$(median_tps "$e" "tg$n_gen")" -v bytes="$decode_bytes" -v bw="$bw_before" -v bw2="$bw_after" \
      'BEGIN { gbps = tps * bytes / 1e9; lo = (bw < bw2 ? bw : bw2);
               printf "%s decode moves %.2f GB/s of weights (%.0f%% of the lower membw figure)\n", e, gbps, 100 * gbps / lo }'
  done
fi
