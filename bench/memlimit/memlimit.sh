#!/usr/bin/env bash
# Synapse against llama.cpp on one model under the same memory limit:
#   memlimit.sh -m FILE -l LIMIT [-p 0] [-n 32] [-t 1] [-k 3] [-T 900] [-b build] [-x 'SYNAPSE ARGS'] [-o DIR]
# A caller of synapse-bench-run (bench/run) whose --wrap, cgroup_run.sh,
# puts each engine run in a fresh memory cgroup (v1 or v2,
# cgroup_memory.sh) limited to LIMIT (bytes, K/M/G suffixes, or a
# percentage of the file), from a dropped page cache. The runner prints per
# test the median t/s of each engine, the ratio, its interval and a verdict;
# then this script prints each run's end, peak memory and what it read from
# storage (GNU time's block inputs, loading included). A run the OOM killer
# or the per-run timeout ends counts in no median (--keep-going). -x passes
# extra arguments to synapse bench (e.g. -x '--mem-budget 2G').
# Needs root and a memory cgroup controller; bash, awk, GNU time.
# shellcheck source-path=SCRIPTDIR
set -euo pipefail

usage() {
  echo "usage: $0 -m FILE -l LIMIT [-p N_PROMPT] [-n N_GEN] [-t THREADS] [-k ROUNDS] [-T RUN_TIMEOUT_S]" \
    "[-b BUILD_DIR] [-x EXTRA_SYNAPSE_ARGS] [-o OUT_DIR]" >&2
  echo "  LIMIT: bytes, NK/NM/NG (binary), or N% of FILE's size" >&2
  exit 2
}

model="" limit_text="" n_prompt=0 n_gen=32 threads=1 rounds=3 run_timeout=900 build=build extra="" out=""
while getopts "m:l:p:n:t:k:T:b:x:o:h" opt; do
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
    o) out=$OPTARG ;;
    *) usage ;;
  esac
done
[[ -n "$model" && -f "$model" ]] || { echo "$0: -m FILE: no such model file" >&2; usage; }
[[ -n "$limit_text" ]] || { echo "$0: -l LIMIT is required" >&2; usage; }
if ! [[ "$run_timeout" =~ ^[1-9][0-9]*$ ]]; then echo "$0: -T '$run_timeout' is not a count" >&2; usage; fi

file_bytes=$(stat -c %s "$model")
limit=$(awk -v s="$limit_text" -v f="$file_bytes" 'BEGIN {
  if (match(s, /^[0-9]+(\.[0-9]+)?%$/)) { printf "%.0f", f * substr(s, 1, length(s) - 1) / 100; exit }
  if (!match(s, /^[0-9]+(\.[0-9]+)?[KMGkmg]?$/)) exit
  u = toupper(substr(s, length(s))); m = (u == "K" ? 2^10 : u == "M" ? 2^20 : u == "G" ? 2^30 : 1)
  printf "%.0f", (m > 1 ? substr(s, 1, length(s) - 1) : s) * m }')
if [[ -z "$limit" ]] || (( limit == 0 )); then
  echo "$0: -l '$limit_text' is not a size (N, NK, NM, NG or N%)" >&2
  usage
fi

(( EUID == 0 )) || { echo "$0: needs root (cgroups, drop_caches)" >&2; exit 1; }
here=$(dirname "$0")
source "$here/cgroup_memory.sh"
cg_detect || exit 1
runner="$build/bench/run/synapse-bench-run"
[[ -x "$runner" ]] || { echo "$0: $runner not built (ninja -C $build synapse-bench-run)" >&2; exit 1; }

export MEMLIMIT_GROUP="synapse-memlimit-$$" MEMLIMIT_LIMIT=$limit MEMLIMIT_RUN_TIMEOUT=$run_timeout
MEMLIMIT_LOG=$(mktemp)
export MEMLIMIT_LOG
# shellcheck disable=SC2317  # run by the EXIT trap
cleanup() {
  # A group cgroup_run.sh left behind (the runner interrupted): ours, by name.
  for cg in "$cg_root/$MEMLIMIT_GROUP"-*; do cg_remove; done
  rm -f "$MEMLIMIT_LOG"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mib() { awk -v b="$1" 'BEGIN { printf "%.0f", b / 2^20 }'; }

echo "# $0 -m $model -l $limit_text -p $n_prompt -n $n_gen -t $threads -k $rounds -T $run_timeout -b $build -x '$extra'"
echo "# limit $(mib "$limit") MiB ($(awk -v l="$limit" -v f="$file_bytes" 'BEGIN { printf "%.1f", 100 * l / f }')% of the" \
  "$(mib "$file_bytes") MiB file), cgroup v$cg_version"

rc=0
"$runner" -m "$model" -p "$n_prompt" -n "$n_gen" -t "$threads" -k "$rounds" -b "$build" --keep-going \
  --wrap "$here/cgroup_run.sh" ${extra:+--synapse-args "$extra"} ${out:+-o "$out"} || rc=$?

echo
awk '{ printf "# round %s %s: %s after %ss, exit %s, peak %.0f MiB, limit hits %s, oom kills %s, swap limited %s,",
         $2, $1, $3, $4, $5, $6 / 2^20, $7, $8, $9
       printf " read %.0f MiB\n", $10 / 2^20 }' "$MEMLIMIT_LOG"
for engine in synapse llama.cpp; do
  awk -v e="$engine" -v limit="$limit" '$1 == e {
      if ($6 > peak) peak = $6
      reads = reads (n++ ? "," : "") sprintf("%.0f", $10 / 2^20)
      if ($3 != "ok") failed[$3]++
    }
    END {
      for (s in failed) failures = failures (k++ ? ", " : "") failed[s] " " s
      printf "%s: peak %.0f MiB of the %.0f MiB limit (highest over its runs); read from storage per run: %s MiB;" \
             " failed runs: %s\n", e, peak / 2^20, limit / 2^20, reads, (k ? failures : "none")
    }' "$MEMLIMIT_LOG"
done
exit "$rc"
