#!/usr/bin/env bash
# synk-launch-info under a real mpirun (Open MPI from Debian): 3 launcher processes on this one
# host, first as simulated nodes (SYNK_SIMULATE_NODES=1: one line per node, ranks node-major),
# then without: every process must refuse, naming the mapping to use, and mpirun must fail.
# Then a synk program (intro_example, cpu ranks) under mpirun -np 2 on this one host: fork()
# refuses to make two nodes of one host unless told to (SYNK_SIMULATE_NODES=1), naming the
# mapping to use; SYNK_INDEPENDENT_SESSIONS=1 runs a session per process on purpose.
# Skips (77) where mpirun is missing.
set -u
tool=$1 program=$2
command -v mpirun >/dev/null || { echo "SKIPPED: no mpirun (openmpi-bin)"; exit 77; }
# As root (CI containers) Open MPI refuses to start without these.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# One host, no network: keep Open MPI's TCP/shared-memory transports from probing interfaces.
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
# mpirun binds each of 2 processes to one core by default: a node's ranks would share it.
export OMPI_MCA_hwloc_base_binding_policy=none
out=$(timeout 60 mpirun --oversubscribe -np 3 -x SYNK_SIMULATE_NODES=1 "$tool" --ranks-per-node 2 2>&1) \
  || { echo "FAIL: mpirun with simulated nodes exited non-zero:"; echo "$out"; exit 1; }
echo "$out"
for node in 0 1 2; do
  want="open-mpi process $node of 3 (3 on this host): node $node of 3, ranks $((2 * node))-$((2 * node + 1)) of 6 (2 per node)"
  grep -qxF "$want" <<< "$out" || { echo "FAIL: missing line: $want"; exit 1; }
done
if err=$(timeout 60 mpirun --oversubscribe -np 2 -x SYNK_SIMULATE_NODES=0 "$tool" 2>&1); then
  echo "FAIL: two processes on one host were accepted:"; echo "$err"; exit 1
fi
grep -q "synk-launch-info: 2 open-mpi processes share this host.*mpirun --map-by ppr:1:node" <<< "$err" \
  || { echo "FAIL: the refusal does not say what to change:"; echo "$err"; exit 1; }
if err=$(timeout 120 mpirun --oversubscribe -np 2 "$program" --ranks 2 2>&1); then
  echo "FAIL: a synk program under mpirun -np 2 forked sessions:"; echo "$err"; exit 1
fi
grep -q "2 open-mpi processes share this host.*mpirun --map-by ppr:1:node.*SYNK_SIMULATE_NODES=1" \
  <<< "$err" || { echo "FAIL: the program's refusal does not say why:"; echo "$err"; exit 1; }
out=$(timeout 120 mpirun --oversubscribe -np 2 -x SYNK_INDEPENDENT_SESSIONS=1 "$program" --ranks 2 2>&1) \
  || { echo "FAIL: independent sessions on purpose failed:"; echo "$out"; exit 1; }
echo "PASS"
