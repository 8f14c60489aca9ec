#!/usr/bin/env bash
# Runs a GoogleTest binary as N shards at once (GTEST_TOTAL_SHARDS), one
# process each, so a slow single-process suite (a sanitizer build's) uses
# every core:
#   run_gtest_shards.sh N LOG_DIR BINARY [GTEST FLAGS...]
# Each shard's output goes to LOG_DIR/shard-I.log; a failed shard's log is
# printed whole, then every shard's closing lines. Exits 1 when any failed.
set -uo pipefail
(( $# >= 3 )) || { echo "usage: $0 N LOG_DIR BINARY [FLAGS...]" >&2; exit 2; }
shards=$1 logs=$2
shift 2
[[ "$shards" =~ ^[1-9][0-9]*$ ]] || { echo "$0: '$shards' is not a shard count" >&2; exit 2; }
mkdir -p "$logs"
pids=()
for ((i = 0; i < shards; ++i)); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i "$@" >"$logs/shard-$i.log" 2>&1 &
  pids+=($!)
done
failed=0
for ((i = 0; i < shards; ++i)); do
  if ! wait "${pids[$i]}"; then
    failed=1
    echo "== shard $i of $shards failed:"
    cat "$logs/shard-$i.log"
  fi
done
for ((i = 0; i < shards; ++i)); do
  echo "== shard $i of $shards:"
  tail -n 3 "$logs/shard-$i.log"
done
exit "$failed"
