# shellcheck shell=bash disable=SC2034  # cg_*: set here, read by the scripts that source this
# Memory cgroups for memlimit.sh (its cgroup_run.sh), v1 or v2, whichever
# the host has the memory controller on. Sourced; needs root. Each run gets a fresh group so
# its peak and its limit hits count from zero:
#   cg_detect                  sets cg_version (1 or 2) and cg_root, or fails
#                              (the cgroup filesystem is at $SYNAPSE_CGROUP_FS,
#                              default /sys/fs/cgroup; tests point it at a fake tree)
#   cg_make NAME LIMIT         creates the group (no swapping around the
#                              limit where the kernel can say so); sets cg,
#                              cg_swap_limited (yes/no)
#   cg_enter                   moves the calling shell into the group
#   cg_peak, cg_limit_hits, cg_oom_kills
#   cg_remove                  kills what is left in the group, removes it

cg_detect() {
  local fs=${SYNAPSE_CGROUP_FS:-/sys/fs/cgroup} v2_root
  for v2_root in "$fs" "$fs/unified"; do
    if grep -qw memory "$v2_root/cgroup.controllers" 2>/dev/null; then
      cg_version=2 cg_root=$v2_root
      # Children get the memory controller only if the root hands it down.
      # A non-root group holding processes cannot (v2's no-internal-processes rule).
      if ! grep -qw memory "$cg_root/cgroup.subtree_control" &&
        ! { echo +memory >"$cg_root/cgroup.subtree_control"; } 2>/dev/null; then
        echo "cannot hand the memory controller to children of $cg_root (cgroup.subtree_control):" \
          "move the processes in $cg_root/cgroup.procs into a child group first" >&2
        return 1
      fi
      return 0
    fi
  done
  if [[ -f $fs/memory/memory.limit_in_bytes ]]; then
    cg_version=1 cg_root=$fs/memory
    return 0
  fi
  echo "no memory cgroup controller (v1 at $fs/memory, or v2 listing memory in cgroup.controllers)" >&2
  return 1
}

cg_make() {
  cg="$cg_root/$1"
  mkdir "$cg"
  cg_swap_limited=no
  if (( cg_version == 2 )); then
    echo "$2" >"$cg/memory.max"
    if [[ -f "$cg/memory.swap.max" ]]; then echo 0 >"$cg/memory.swap.max"; cg_swap_limited=yes; fi
  else
    echo "$2" >"$cg/memory.limit_in_bytes"
    if [[ -f "$cg/memory.memsw.limit_in_bytes" ]]; then
      echo "$2" >"$cg/memory.memsw.limit_in_bytes"
      cg_swap_limited=yes
    fi
  fi
}

cg_enter() { echo "$BASHPID" >"$cg/cgroup.procs"; }  # BASHPID: the subshell calling it, not the script

# A key's count in a v2 "key value" file such as memory.events.
cg_event() { awk -v k="$1" '$1 == k { print $2; found = 1 } END { if (!found) print 0 }' "$cg/memory.events"; }

cg_peak() {
  if (( cg_version == 1 )); then cat "$cg/memory.max_usage_in_bytes"
  elif [[ -f "$cg/memory.peak" ]]; then cat "$cg/memory.peak"  # Linux 5.19 and later
  else cat "$cg/memory.current"                                # older: what is charged now
  fi
}

# How often usage hit the limit (v1 failcnt, v2 the "max" event).
cg_limit_hits() {
  if (( cg_version == 1 )); then cat "$cg/memory.failcnt"; else cg_event max; fi
}

cg_oom_kills() {
  if (( cg_version == 1 )); then sed -n 's/^oom_kill \([0-9]*\)$/\1/p' "$cg/memory.oom_control"; else cg_event oom_kill; fi
}

cg_remove() {
  [[ -n "${cg:-}" && -d "$cg" ]] || return 0
  local pid
  while read -r pid; do kill -9 "$pid" 2>/dev/null || true; done <"$cg/cgroup.procs"
  # Killed processes leave the group asynchronously.
  local _
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    rmdir "$cg" 2>/dev/null && return 0
    sleep 0.2
  done
  echo "could not remove $cg" >&2
}
