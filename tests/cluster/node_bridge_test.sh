#!/usr/bin/env bash
# The node bridge (cluster/node_bridge.h) under a real mpirun: simulated nodes on this host, each
# with its own control block and forked ranks passing core's barriers with every other node's.
# 2 nodes x 1 rank, 2 x 2 and 3 x 2: 300 barriers carrying exchanges (up to 5000 bytes),
# commands (up to 3000), statuses, messages and ok flags, checked byte for byte by every rank;
# a rank at another barrier site is reported as a divergence naming it; a rank that never
# arrives is named, with the other ranks of its node, by node 0's ranks at their 500 ms deadline, and the abort node 0 sends ends
# the ranks of the other nodes, which wait with 30 s, long before theirs. Skips (77) where mpirun
# is missing.
set -u
check=$1
command -v mpirun >/dev/null || { echo "SKIPPED: no mpirun (openmpi-bin)"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
# mpirun binds each of 2 processes to one core by default: a node's ranks would share it.
export OMPI_MCA_hwloc_base_binding_policy=none
# After an abort the bridges leave MPI unfinished (a node may never come to its end): each
# launcher then exits on its own, which mpirun must not take for the job's failure.
mpi=(mpirun --oversubscribe --mca orte_allowed_exit_without_sync 1 -x SYNK_SIMULATE_NODES=1)
for shape in 2x1 2x2 3x2; do
  nodes=${shape%x*} per_node=${shape#*x}
  out=$(timeout 120 "${mpi[@]}" -np "$nodes" "$check" ok "$per_node" 2>&1) \
    || { echo "FAIL: $shape ok:"; echo "$out"; exit 1; }
  for node in $(seq 0 $((nodes - 1))); do
    grep -qE "^node $node of $nodes: ok \(300 barriers bridged\)$" <<< "$out" \
      || { echo "FAIL: $shape: node $node:"; echo "$out"; exit 1; }
  done
  for rank in $(seq 0 $((nodes * per_node - 1))); do
    grep -qxF "rank $rank: ok" <<< "$out" || { echo "FAIL: $shape: rank $rank:"; echo "$out"; exit 1; }
  done
done

out=$(timeout 120 "${mpi[@]}" -np 2 "$check" diverge 2 2>&1)
# Whichever node notices first aborts every node with its message: each names rank 3 at 'agree'.
for rank in 0 3; do
  grep -qE "^rank $rank: ended: ranks diverged: .*rank 3 arrived at (barrier )?'agree'" <<< "$out" \
    || { echo "FAIL: the divergence is not named to rank $rank:"; echo "$out"; exit 1; }
done

# A node's ranks reach the other nodes together (one packet per node and barrier): node 0 names
# every rank of the late rank's node, and the node.
for shape in 2x2 3x1; do
  nodes=${shape%x*} per_node=${shape#*x}
  [[ $shape == 2x2 ]] && last="2, 3" || last=2
  start=$SECONDS
  out=$(timeout 120 "${mpi[@]}" -np "$nodes" "$check" late "$per_node" 2>&1)
  took=$((SECONDS - start))
  grep -q "^rank 0: ended: rank [0-9]* timed out at the check's barrier: rank(s) $last did not arrive before the deadline; on node(s) $((nodes - 1)) (all its ranks) of $nodes" \
    <<< "$out" || { echo "FAIL: $shape: the late rank is not named on node 0:"; echo "$out"; exit 1; }
  # A rank of another node that waits with 30 s ends with node 0's message (a rank of node 0
  # timed out), not its own deadline; and before that deadline. The job's time includes mpirun's
  # start, which a loaded host stretches (21 s once on a bare container): the bound is the 30 s.
  [[ $shape == 2x2 ]] && other=2 node0="[01]" || { other=1; node0=0; }
  grep -q "^rank $other: ended: rank $node0 timed out at the check's barrier: rank(s) $last did not arrive" \
    <<< "$out" || { echo "FAIL: $shape: rank $other was not ended by node 0's abort:"; echo "$out"; exit 1; }
  (( took < 30 )) || { echo "FAIL: $shape: the late job took $took s (the abort did not travel)"; echo "$out"; exit 1; }
  for node in $(seq 0 $((nodes - 1))); do
    grep -qE "^node $node of $nodes: ok" <<< "$out" || { echo "FAIL: $shape late: node $node:"; echo "$out"; exit 1; }
  done
done
echo "PASS"
