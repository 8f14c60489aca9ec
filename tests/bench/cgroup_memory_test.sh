#!/usr/bin/env bash
# bench/memlimit/cgroup_memory.sh against fake cgroup trees: which version it
# finds, the files it writes a limit to, and where it reads the peak, the
# limit hits and the OOM kills, for v2 (memory.max, memory.peak,
# memory.events), v2 mounted under unified/ beside v1 controllers, and v1.
# The real kernel files need root and a host of each kind; their names and
# formats are what these fakes hold.
set -euo pipefail
source "$(dirname "$0")/../../bench/memlimit/cgroup_memory.sh"

failures=0
expect() {  # expect NAME ACTUAL EXPECTED
  if [[ "$2" != "$3" ]]; then
    echo "FAIL $1: got '$2', expected '$3'" >&2
    failures=$((failures + 1))
  fi
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# v2 at the top, the memory controller not yet handed to children.
export SYNAPSE_CGROUP_FS=$tmp/v2
mkdir -p "$SYNAPSE_CGROUP_FS"
echo "cpuset cpu io memory pids" >"$SYNAPSE_CGROUP_FS/cgroup.controllers"
: >"$SYNAPSE_CGROUP_FS/cgroup.subtree_control"
cg_detect
expect "v2 version" "$cg_version" 2
expect "v2 root" "$cg_root" "$SYNAPSE_CGROUP_FS"
expect "v2 hands memory down" "$(cat "$SYNAPSE_CGROUP_FS/cgroup.subtree_control")" "+memory"
cg_make bench 1073741824
expect "v2 limit file" "$(cat "$cg/memory.max")" 1073741824
expect "v2 swap not limited where memory.swap.max is absent" "$cg_swap_limited" no
printf 'low 0\nhigh 0\nmax 7\noom 1\noom_kill 2\n' >"$cg/memory.events"
echo 123456 >"$cg/memory.current"
expect "v2 peak without memory.peak (before 5.19)" "$(cg_peak)" 123456
echo 654321 >"$cg/memory.peak"
expect "v2 peak" "$(cg_peak)" 654321
expect "v2 limit hits" "$(cg_limit_hits)" 7
expect "v2 oom kills" "$(cg_oom_kills)" 2
printf 'low 0\nhigh 0\n' >"$cg/memory.events"
expect "v2 absent event counts 0" "$(cg_oom_kills)" 0

# The hybrid layout: v1 controllers, v2 under unified/ without memory.
export SYNAPSE_CGROUP_FS=$tmp/hybrid
mkdir -p "$SYNAPSE_CGROUP_FS/unified" "$SYNAPSE_CGROUP_FS/memory"
echo "" >"$SYNAPSE_CGROUP_FS/unified/cgroup.controllers"
echo 9223372036854771712 >"$SYNAPSE_CGROUP_FS/memory/memory.limit_in_bytes"
cg_detect
expect "hybrid picks v1" "$cg_version" 1
cg_make bench 536870912
expect "v1 limit file" "$(cat "$cg/memory.limit_in_bytes")" 536870912
echo 42 >"$cg/memory.max_usage_in_bytes"
echo 3 >"$cg/memory.failcnt"
printf 'oom_kill_disable 0\nunder_oom 0\noom_kill 1\n' >"$cg/memory.oom_control"
expect "v1 peak" "$(cg_peak)" 42
expect "v1 limit hits" "$(cg_limit_hits)" 3
expect "v1 oom kills" "$(cg_oom_kills)" 1

# v2 under unified/ with the memory controller.
export SYNAPSE_CGROUP_FS=$tmp/unified-memory
mkdir -p "$SYNAPSE_CGROUP_FS/unified"
echo "memory pids" >"$SYNAPSE_CGROUP_FS/unified/cgroup.controllers"
echo "memory" >"$SYNAPSE_CGROUP_FS/unified/cgroup.subtree_control"
cg_detect
expect "unified v2 version" "$cg_version" 2
expect "unified v2 root" "$cg_root" "$SYNAPSE_CGROUP_FS/unified"

# Neither: a clear failure.
export SYNAPSE_CGROUP_FS=$tmp/none
mkdir -p "$SYNAPSE_CGROUP_FS"
if message=$(cg_detect 2>&1); then
  echo "FAIL: cg_detect succeeded without a memory controller" >&2
  failures=$((failures + 1))
fi
expect "no controller message" "${message%% (*}" "no memory cgroup controller"

if ((failures > 0)); then exit 1; fi
echo "cgroup_memory.sh: all checks passed"
