#!/usr/bin/env bash
# Two hosts on one machine: two network namespaces joined by a veth pair,
# each with an address of its own and nothing else. mpirun (in the first)
# treats them as two hosts, reaching the second through a launch agent that
# enters its namespace where ssh would log in, so each rank and its MPI
# daemon live in their own namespace and the ranks' frames cross the veth
# pair over TCP (--mca btl tcp,self). The tokens must equal a single
# process's. Exits 77 (skipped) where namespaces cannot be made (no
# CAP_SYS_ADMIN, no iproute2) or OpenMPI is absent.
#   two_hosts_mpi_test.sh SYNAPSE SYNAPSE_MPI
set -euo pipefail

synapse=$1 synapse_mpi=$2
skip() { echo "SKIP: $*"; exit 77; }
command -v ip >/dev/null || skip "no ip(8) (apt-get install iproute2)"
command -v mpirun >/dev/null || skip "no mpirun (apt-get install openmpi-bin)"

id=$$
ns_a=synapse-a-$id ns_b=synapse-b-$id
veth_a=syna$id veth_b=synb$id
addr_a=10.213.0.1 addr_b=10.213.0.2
work=$(mktemp -d)
cleanup() {
  ip netns del "$ns_a" 2>/dev/null || true
  ip netns del "$ns_b" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
# Where this machine does not let us make or enter namespaces or veth
# pairs (a container without CAP_SYS_ADMIN or CAP_NET_ADMIN), the test
# skips; past these steps, any failure is the test's.
ip netns add "$ns_a" 2>/dev/null || skip "cannot create network namespaces here (needs CAP_SYS_ADMIN)"
ip netns add "$ns_b" 2>/dev/null || skip "cannot create a second network namespace here"
ip link add "$veth_a" type veth peer name "$veth_b" 2>/dev/null || skip "cannot create a veth pair here (needs CAP_NET_ADMIN)"
{
  ip link set "$veth_a" netns "$ns_a" &&
    ip link set "$veth_b" netns "$ns_b" &&
    ip -n "$ns_a" addr add "$addr_a/24" dev "$veth_a" &&
    ip -n "$ns_b" addr add "$addr_b/24" dev "$veth_b" &&
    ip -n "$ns_a" link set lo up && ip -n "$ns_b" link set lo up &&
    ip -n "$ns_a" link set "$veth_a" up && ip -n "$ns_b" link set "$veth_b" up &&
    ip netns exec "$ns_a" true
} 2>/dev/null || skip "cannot set up or enter the network namespaces here"

# mpirun's launch agent (in place of ssh): runs the daemon's command in the
# namespace of the "host" it names.
agent=$work/netns-agent.sh
cat >"$agent" <<AGENT
#!/bin/sh
host=\$1
shift
case "\$host" in
  $addr_a) ns=$ns_a ;;
  $addr_b) ns=$ns_b ;;
  *) echo "netns-agent: unknown host \$host" >&2; exit 1 ;;
esac
exec ip netns exec "\$ns" sh -c "\$*"
AGENT
chmod +x "$agent"

model=$work/model.gguf
"$synapse" synth --arch qwen2 --preset tiny --n-layer 4 --type q8_0 --seed 3 -o "$model" >/dev/null
run=(run -m "$model" --tokens "1 17 300 42 7" -n 16 --temp 0 --ids --ignore-eos)
expected=$("$synapse" "${run[@]}" 2>/dev/null | tail -1)

got=$(ip netns exec "$ns_a" timeout 120 mpirun --allow-run-as-root --host "$addr_a,$addr_b" -np 2 \
  --mca plm_rsh_agent "$agent" --mca btl tcp,self --mca btl_tcp_if_include 10.213.0.0/24 \
  --mca oob_tcp_if_include 10.213.0.0/24 \
  "$synapse_mpi" "${run[@]}" --rank-timeout 30 --trace-regions "$work/trace.jsonl" 2>"$work/err" | tail -1) || {
  cat "$work/err" >&2
  echo "FAIL: the two-namespace run failed" >&2
  exit 1
}
if [[ "$got" != "$expected" ]]; then
  echo "FAIL: tokens over TCP between namespaces differ" >&2
  echo "  one process: $expected" >&2
  echo "  two hosts:   $got" >&2
  exit 1
fi
[[ -f "$work/trace.jsonl.rank1" ]] || { echo "FAIL: rank 1 wrote no trace" >&2; exit 1; }
"$synapse" trace "$work/trace.jsonl" | grep '^hop'
echo "PASS: 2 ranks in 2 network namespaces over TCP give the single-process tokens: $got"
