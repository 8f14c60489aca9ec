#!/usr/bin/env bash
# One engine run of memlimit.sh inside a fresh memory cgroup, as
# synapse-bench-run's --wrap:  cgroup_run.sh COMMAND...
# Syncs and drops the page cache (so the model is read inside the group,
# where page cache counts against the limit), runs COMMAND in the group
# under GNU time and timeout, appends one line to $MEMLIMIT_LOG:
#   engine round status wall_s exit peak_bytes limit_hits oom_kills swap_limited read_bytes
# (status: ok, oom-killed, timeout or failed(exit=N); read_bytes: GNU time's
# block inputs × 512, page-cache misses and direct reads together), removes
# the group and exits non-zero unless the run ended well.
# Environment: MEMLIMIT_GROUP (name prefix), MEMLIMIT_LIMIT (bytes),
# MEMLIMIT_RUN_TIMEOUT (seconds), MEMLIMIT_LOG from memlimit.sh;
# SYNAPSE_BENCH_ENGINE and SYNAPSE_BENCH_ROUND from synapse-bench-run.
# shellcheck source-path=SCRIPTDIR
set -euo pipefail

source "$(dirname "$0")/cgroup_memory.sh"
cg_detect
engine=${SYNAPSE_BENCH_ENGINE:?set by synapse-bench-run}
io_out=$(mktemp)
trap 'cg_remove; rm -f "$io_out"' EXIT
trap 'exit 130' INT TERM

sync
echo 3 >/proc/sys/vm/drop_caches
cg_make "$MEMLIMIT_GROUP-$engine" "$MEMLIMIT_LIMIT"
start=$(date +%s.%N)
rc=0
# time outside timeout: its children's rusage still counts when timeout kills the engine.
( cg_enter && exec /usr/bin/time -o "$io_out" -f %I timeout "$MEMLIMIT_RUN_TIMEOUT" "$@" ) || rc=$?
wall=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
read_bytes=$(tail -n 1 "$io_out" | awk '{ printf "%.0f", $1 * 512 }')  # 512-byte blocks
kills=$(cg_oom_kills)
if (( kills > 0 )); then
  status=oom-killed
elif (( rc == 124 )); then
  status=timeout
elif (( rc != 0 )); then
  status="failed(exit=$rc)"
else
  status=ok
fi
echo "$engine ${SYNAPSE_BENCH_ROUND:-0} $status $wall $rc $(cg_peak) $(cg_limit_hits) $kills $cg_swap_limited" \
  "${read_bytes:-0}" >>"$MEMLIMIT_LOG"
[[ $status == ok ]] || { echo "$engine: $status after ${wall}s" >&2; exit $(( rc != 0 ? rc : 1 )); }
