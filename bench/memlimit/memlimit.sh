#!/usr/bin/env bash
# Synapse against llama.cpp on one model under the same memory limit:
#   memlimit.sh -m FILE -l LIMIT [-p 0] [-n 32] [-t 1] [-k 3] [-T 900] [-b build] [-x 'SYNAPSE ARGS']
# Puts each run in a fresh memory cgroup (v1 or v2) limited to LIMIT (bytes,
# K/M/G suffixes, or a percentage of the file), with the page cache dropped
# first so the model file is read inside the group (page cache counts
# against the limit). Runs `synapse bench` and `synapse-peer bench`
# interleaved (A B A B ...) for K rounds, one timed repetition each, and
# prints per test the median t/s of each engine, their ratio, and each run's
# peak memory (v1 memory.max_usage_in_bytes, v2 memory.peak) and what it read from storage (the
# rusage block inputs GNU time reports: page cache misses and direct reads,
# loading included). A run killed by the OOM killer or the per-run timeout is
# reported as such and leaves out its t/s. -x passes extra arguments to
# synapse bench (e.g. -x '--mem-budget 2G').
# Needs root and a memory cgroup controller (cgroup_memory.sh); bash, sed,
# awk, sort, GNU time.
set -euo pipefail

usage() {
  echo "usage: $0 -m FILE -l LIMIT [-p N_PROMPT] [-n N_GEN] [-t THREADS] [-k ROUNDS] [-T RUN_TIMEOUT_S]" \
    "[-b BUILD_DIR] [-x EXTRA_SYNAPSE_ARGS]" >&2
  echo "  LIMIT: bytes, NK/NM/NG (binary), or N% of FILE's size" >&2
  exit 2
}

model="" limit_text="" n_prompt=0 n_gen=32 threads=1 rounds=3 run_timeout=900 build=build extra=""
while getopts "m:l:p:n:t:k:T:b:x:h" opt; do
  case "$opt" in
    m) model=$OPTARG ;;
    l) limit_text=$OPTARG ;;
    p) n_prompt=$OPTARG ;;
    n) n_gen=$OPTARG ;;
    t) threads=$OPTARG ;;
    k) rounds=$OPTARG ;;
    T) run_timeout=$OPTARG ;;
    b) build=$OPTARG ;;
    x) extra=$OPTARG ;;
    *) usage ;;
  esac
done
[[ -n "$model" && -f "$model" ]] || { echo "$0: -m FILE: no such model file" >&2; usage; }
[[ -n "$limit_text" ]] || { echo "$0: -l LIMIT is required" >&2; usage; }
for v in "$n_prompt" "$n_gen" "$threads" "$rounds" "$run_timeout"; do
  [[ "$v" =~ ^[0-9]+$ ]] || { echo "$0: '$v' is not a count" >&2; usage; }
done
(( rounds >= 1 && run_timeout >= 1 )) || usage
(( n_prompt > 0 || n_gen > 0 )) || { echo "$0: -p and -n are both 0" >&2; usage; }
read -r -a extra_args <<<"$extra"

file_bytes=$(stat -c %s "$model")
limit=$(awk -v s="$limit_text" -v f="$file_bytes" 'BEGIN {
  if (match(s, /^[0-9]+(\.[0-9]+)?%$/)) { printf "%.0f", f * substr(s, 1, length(s) - 1) / 100; exit }
  if (!match(s, /^[0-9]+(\.[0-9]+)?[KMGkmg]?$/)) exit
  u = toupper(substr(s, length(s))); m = (u == "K" ? 2^10 : u == "M" ? 2^20 : u == "G" ? 2^30 : 1)
  printf "%.0f", (m > 1 ? substr(s, 1, length(s) - 1) : s) * m }')
[[ -n "$limit" ]] && (( limit > 0 )) || { echo "$0: -l '$limit_text' is not a size (N, NK, NM, NG or N%)" >&2; usage; }

(( EUID == 0 )) || { echo "$0: needs root (cgroups, drop_caches)" >&2; exit 1; }
source "$(dirname "$0")/cgroup_memory.sh"
cg_detect || exit 1

synapse="$build/synapse"
peer="$build/bench/peer/synapse-peer"
for exe in "$synapse" "$peer"; do
  [[ -x "$exe" ]] || { echo "$0: $exe not built (ninja -C $build synapse synapse-peer)" >&2; exit 1; }
done

results=$(mktemp)
run_out=$(mktemp)
io_out=$(mktemp)
reads=$(mktemp)  # "engine read_bytes", one line per run
cleanup() {
  cg_remove  # our own run's group: whatever is still in it was started here
  rm -f "$results" "$run_out" "$io_out" "$reads"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mib() { awk -v b="$1" 'BEGIN { printf "%.0f", b / 2^20 }'; }

echo "# $0 -m $model -l $limit_text -p $n_prompt -n $n_gen -t $threads -k $rounds -T $run_timeout -b $build -x '$extra'"
echo "# limit $(mib "$limit") MiB ($(awk -v l="$limit" -v f="$file_bytes" 'BEGIN { printf "%.1f", 100 * l / f }')% of the" \
  "$(mib "$file_bytes") MiB file), cgroup v$cg_version"

# Runs one engine's bench in the group from a cold page cache; appends
# "engine test tps peak_bytes status" lines to $results (one per test, or
# one "engine - - peak status" line if the run failed) and what it read to $reads.
run_engine() {
  local engine=$1 parse=$2
  shift 2
  sync
  echo 3 >/proc/sys/vm/drop_caches
  cg_make "synapse-memlimit-$$-$engine" "$limit"
  local start rc=0 status
  start=$(date +%s.%N)
  # time outside timeout: its children's rusage still counts when timeout kills the engine.
  ( cg_enter && exec /usr/bin/time -o "$io_out" -f %I timeout "$run_timeout" "$@" ) >"$run_out" 2>&1 || rc=$?
  local wall peak failcnt kills read
  wall=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
  read=$(tail -n 1 "$io_out" | awk '{ printf "%.0f", $1 * 512 }')  # 512-byte blocks
  read=${read:-0}
  peak=$(cg_peak)
  failcnt=$(cg_limit_hits)
  kills=$(cg_oom_kills)
  local swap_limited=$cg_swap_limited
  cg_remove
  if (( kills > 0 )); then
    status="oom-killed"
  elif (( rc == 124 )); then
    status="timeout"
  elif (( rc != 0 )); then
    status="failed(exit=$rc)"
  else
    status=ok
  fi
  echo "# $engine: $status after ${wall}s, exit $rc, peak $(mib "$peak") MiB, limit hits $failcnt, oom kills $kills, swap limited $swap_limited," \
    "read $(mib "$read") MiB" >&2
  echo "$engine $read" >>"$reads"
  if [[ $status != ok ]]; then
    tail -n 3 "$run_out" | sed 's/^/#   /' >&2
    echo "$engine - - $peak $status" >>"$results"
    return
  fi
  "$parse" <"$run_out" | awk -v e="$engine" -v p="$peak" '{ print e, $1, $2, p, "ok" }' >>"$results"
}

# "test tps" lines from synapse bench -o jsonl (llama-bench fields).
parse_synapse() {
  sed -n '/"avg_ts"/p' | while IFS= read -r line; do
    local ts p n
    ts=$(sed -n 's/.*"avg_ts":\([0-9.eE+-]*\).*/\1/p' <<<"$line")
    p=$(sed -n 's/.*"n_prompt":\([0-9]*\).*/\1/p' <<<"$line")
    n=$(sed -n 's/.*"n_gen":\([0-9]*\).*/\1/p' <<<"$line")
    if (( p > 0 )); then echo "pp$p $ts"; else echo "tg$n $ts"; fi
  done
}
# "test tps" lines from synapse-peer bench ("test" and "median_tps").
parse_peer() {
  sed -n 's/.*"median_tps":\([0-9.eE+-]*\).*"test":"\([a-z0-9]*\)".*/\2 \1/p'
}

for ((round = 1; round <= rounds; ++round)); do
  echo "# round $round/$rounds" >&2
  run_engine synapse parse_synapse "$synapse" bench -m "$model" -p "$n_prompt" -n "$n_gen" -t "$threads" -r 1 \
    -o jsonl "${extra_args[@]}"
  run_engine llama.cpp parse_peer "$peer" bench "$model" --pp "$n_prompt" --tg "$n_gen" -t "$threads" -r 1
done

# Median of the t/s an engine reached on a test over its successful runs.
median_tps() {
  awk -v e="$1" -v t="$2" '$1 == e && $2 == t { print $3 }' "$results" | sort -g |
    awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2];
                             else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
rounds_tps() {
  awk -v e="$1" -v t="$2" '$1 == e && $2 == t { printf "%s%.2f", (n++ ? "," : ""), $3 } END { print "" }' "$results"
}
# Highest peak over an engine's runs, in MiB.
max_peak_mib() {
  awk -v e="$1" '$1 == e && $4 > m { m = $4 } END { printf "%.0f", m / 2^20 }' "$results"
}
# What each of an engine's runs read from storage, in MiB (one entry per run).
reads_mib() {
  awk -v e="$1" '$1 == e { printf "%s%.0f", (n++ ? "," : ""), $2 / 2^20 }' "$reads"
}
# How the engine's runs ended that did not end well, e.g. "2 oom-killed".
failures() {
  awk -v e="$1" '$1 == e && $2 == "-" { n[$5]++ } END { for (s in n) printf "%s%d %s", (k++ ? ", " : ""), n[s], s;
                                                          if (!k) printf "none" }' "$results"
}

tests=()
(( n_prompt > 0 )) && tests+=("pp$n_prompt")
(( n_gen > 0 )) && tests+=("tg$n_gen")

echo
printf "| %-7s | %13s | %13s | %8s | %-20s | %-20s |\n" test "synapse t/s" "llama.cpp t/s" ratio \
  "synapse rounds" "llama.cpp rounds"
printf "| %-7s | %13s | %13s | %8s | %-20s | %-20s |\n" ------- ------------: ------------: -------: \
  -------------------- --------------------
for t in "${tests[@]}"; do
  s=$(median_tps synapse "$t")
  l=$(median_tps llama.cpp "$t")
  ratio=$(awk -v s="$s" -v l="$l" 'BEGIN { if (l + 0 > 0 && s + 0 > 0) printf "%.3f", s / l; else print "nan" }')
  printf "| %-7s | %13.2f | %13.2f | %8s | %-20s | %-20s |\n" "$t" "$s" "$l" "$ratio" \
    "$(rounds_tps synapse "$t")" "$(rounds_tps llama.cpp "$t")"
done
echo
for e in synapse llama.cpp; do
  printf "%s: peak %s MiB of the %s MiB limit (highest over its runs); read from storage per run: %s MiB;" \
    "$e" "$(max_peak_mib "$e")" "$(mib "$limit")" "$(reads_mib "$e")"
  printf " failed runs: %s\n" "$(failures "$e")"
done
