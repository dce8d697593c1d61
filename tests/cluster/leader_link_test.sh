#!/usr/bin/env bash
# The node leaders' link (cluster/leader_link.h) under a real mpirun: 2 and 3 simulated nodes on
# this host. Bytes broadcast from node 0 and from the last node arrive whole; an all-reduce of
# every dtype with every op (avg, sum, prod, max, min) equals core's host kernels combining the
# nodes' inputs in node order, bit for bit, and what core refuses (avg of an integer, gather) is
# refused by name; a node that never comes to a barrier is reported by the others at their
# deadline and the job ends; a layout the launch does not give is refused by name. Skips (77)
# where mpirun is missing.
set -u
check=$1
command -v mpirun >/dev/null || { echo "SKIPPED: no mpirun (openmpi-bin)"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
# mpirun binds each of 2 processes to one core by default: a node's ranks would share it.
export OMPI_MCA_hwloc_base_binding_policy=none
for nodes in 2 3; do
  out=$(timeout 60 mpirun --oversubscribe -np $nodes -x SYNK_SIMULATE_NODES=1 "$check" ok 2>&1) \
    || { echo "FAIL: $nodes nodes:"; echo "$out"; exit 1; }
  for node in $(seq 0 $((nodes - 1))); do
    grep -qxF "node $node of $nodes: ok" <<< "$out" || { echo "FAIL: node $node:"; echo "$out"; exit 1; }
  done
  grep -qxF "node 0: every dtype x op: 32 equal to node order bit for bit, 4 refused" <<< "$out" \
    || { echo "FAIL: $nodes nodes, every dtype x op:"; echo "$out"; exit 1; }
  grep -q "node 0: refused: int32 avg: .*int32 with 'avg'" <<< "$out" \
    || { echo "FAIL: $nodes nodes, the refusal of int32 avg:"; echo "$out"; exit 1; }
done
start=$SECONDS
if out=$(timeout 60 mpirun --oversubscribe -np 2 -x SYNK_SIMULATE_NODES=1 "$check" late 2>&1); then
  echo "FAIL: a barrier without node 1 ended well:"; echo "$out"; exit 1
fi
(( SECONDS - start < 50 )) || { echo "FAIL: the late node's job took $((SECONDS - start)) s"; exit 1; }
grep -q "node 0: the step's barrier: not done within 500 ms on node 0 of 2" <<< "$out" \
  || { echo "FAIL: no timeout named:"; echo "$out"; exit 1; }
out=$(timeout 60 mpirun --oversubscribe -np 2 -x SYNK_SIMULATE_NODES=1 "$check" mismatch 2>&1) \
  || { echo "FAIL: the mismatch check:"; echo "$out"; exit 1; }
grep -q "refused: MPI's world has 2 processes and this is process [01], but the session's layout has 3 nodes.*ppr:1:node" \
  <<< "$out" || { echo "FAIL: the mismatch is not named:"; echo "$out"; exit 1; }
echo "PASS"
