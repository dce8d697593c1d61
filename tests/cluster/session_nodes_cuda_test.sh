#!/usr/bin/env bash
# One synk session over several nodes on the cuda backend (cluster/README.md), on one GPU host:
# mpirun starts a launcher per simulated node (SYNK_SIMULATE_NODES=1); the nodes split the host's
# GPUs and each gets an NCCL host id of its own, so NCCL connects them as separate machines,
# through its network transport (sockets on loopback here).
#  - 2 nodes x 1 GPU (and 2 x 2 with 4 GPUs): the test model's calls and every variable
#    collective, op and dtype print exactly what one machine's cuda session of as many ranks
#    prints (at 2 x 2 only the lines whose bits cannot depend on NCCL's order of summing: the
#    integers); NCCL's log shows the ranks of different nodes connected through NET/Socket
#    (at 1 GPU per node never through P2P or SHM);
#  - the session's size, 300 barrier steps, host-staged collectives refused by name (shared
#    memory does not cross nodes), close ending every process with MPI finished (mpirun exits 0),
#    no shared memory left;
#  - 2 x 1: node 1's launcher (rank 1 itself) killed: the launcher watch (cluster/launcher_watch.h)
#    raises PeerFailure naming it at once (the step deadline is a minute), the master's NCCL
#    communicator is aborted and the job ends within a minute; node 1's watcher removes its
#    shared memory.
# Skips (77) without mpirun or with fewer than 2 GPUs.
set -u
check=$1
command -v mpirun >/dev/null || { echo "SKIPPED: no mpirun (openmpi-bin)"; exit 77; }
gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null | wc -l)
(( gpus >= 2 )) || { echo "SKIPPED: needs 2 GPUs, $gpus visible"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
# mpirun binds each of 2 processes to one core by default: a node's ranks would share it.
export OMPI_MCA_hwloc_base_binding_policy=none
export SYNK_CHECK_BACKEND=cuda
# NCCL between the simulated nodes: sockets on loopback, as issue 26 asks; its log says how the
# ranks connected.
export NCCL_SOCKET_IFNAME=lo NCCL_IB_DISABLE=1 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT
run() {  # nodes scenario ranks_per_node [mpirun options...]
  local nodes=$1 scenario=$2 per_node=$3; shift 3
  SYNK_CHECK_PID_DIR=$work timeout 180 mpirun --oversubscribe --bind-to none -np "$nodes" "$@" \
    -x SYNK_SIMULATE_NODES=1 -x SYNK_CHECK_PID_DIR -x SYNK_CHECK_BACKEND -x NCCL_SOCKET_IFNAME \
    -x NCCL_IB_DISABLE -x NCCL_DEBUG -x NCCL_DEBUG_SUBSYS "$check" "$scenario" "$per_node"
}
work=$(mktemp -d) && trap 'rm -rf "$work"' EXIT
source "$(dirname "$0")/nodes_lib.sh"  # await_ready, left_behind, await_node_memory_gone

shapes=(2x1)
(( gpus >= 4 )) && shapes+=(2x2)
for shape in "${shapes[@]}"; do
  nodes=${shape%x*} per_node=${shape#*x}
  local_out=$(NCCL_DEBUG=WARN timeout 180 "$check" models-local $((nodes * per_node)) 2>&1) \
    || { echo "FAIL: models on one machine, $((nodes * per_node)) ranks:"; echo "$local_out"; exit 1; }
  rm -f "$work"/node-*.pid
  out=$(run "$nodes" models "$per_node" 2>&1) \
    || { echo "FAIL: $shape: models:"; echo "$out"; exit 1; }
  values=$(grep '^value: ' <<< "$out")
  expected=$(grep '^value: ' <<< "$local_out")
  [[ $(wc -l <<< "$values") -ge 150 ]] || { echo "FAIL: $shape: too few values:"; echo "$out"; exit 1; }
  if (( nodes * per_node > 2 )); then
    # NCCL sums more than two ranks in an order of its own, which differs between one host's
    # NVLink rings and a network between nodes: exact only where the order cannot matter.
    pattern='^value: (rank_info|var_(i32|i64|u8) )'
    values=$(grep -E "$pattern" <<< "$values"); expected=$(grep -E "$pattern" <<< "$expected")
  fi
  [[ $values == "$expected" ]] \
    || { echo "FAIL: $shape differs from one machine:"; diff <(echo "$expected") <(echo "$values"); exit 1; }
  # Ranks of different nodes must meet through NCCL's network transport.
  grep -q "via NET/Socket" <<< "$out" \
    || { echo "FAIL: $shape: NCCL did not connect the nodes through NET/Socket:"; echo "$out"; exit 1; }
  # Every connection NCCL logs ("Channel 00/0 : 0[0] -> 1[1] [send] via NET/Socket/0") between
  # ranks of different nodes must be its network's, never P2P or SHM.
  crossing=$(sed -nE 's/.*Channel [0-9]+\/[0-9]+ : ([0-9]+)\[[0-9]+\] -> ([0-9]+)\[[0-9]+\].* via ([A-Za-z0-9]+).*/\1 \2 \3/p' <<< "$out" \
               | awk -v n="$per_node" 'int($1 / n) != int($2 / n) && $3 != "NET"')
  [[ -z $crossing ]] \
    || { echo "FAIL: $shape: NCCL joined ranks of different nodes other than through NET: $crossing"; exit 1; }
  [[ -z $(left_behind) ]] || { echo "FAIL: $shape: shared memory left: $(left_behind)"; exit 1; }

  rm -f "$work"/node-*.pid
  out=$(run "$nodes" ok "$per_node" 2>&1) || { echo "FAIL: $shape: ok:"; echo "$out"; exit 1; }
  grep -qxF "master: $((nodes * per_node)) ranks, master rank 0" <<< "$out" \
    || { echo "FAIL: $shape: the session's size:"; echo "$out"; exit 1; }
  grep -q "^master: refused: host-staged collectives (CollectiveOptions{.native = false}) do not cross nodes yet" \
    <<< "$out" || { echo "FAIL: $shape: host staging not refused by name:"; echo "$out"; exit 1; }
  grep -qxF "master: closed" <<< "$out" || { echo "FAIL: $shape: no close:"; echo "$out"; exit 1; }
  [[ -z $(left_behind) ]] || { echo "FAIL: $shape: shared memory left: $(left_behind)"; exit 1; }
  echo "ok: $shape"
done

# Node 1's launcher killed (2 x 1: it is rank 1): the launcher watch names it (the step deadline,
# a minute, would end the job only after the bound below).
start=$SECONDS
rm -f "$work"/node-*.pid
run 2 kill-launcher 1 --mca orte_enable_recovery 1 --mca orte_allowed_exit_without_sync 1 \
  --mca orte_abort_on_non_zero_status 0 > "$work/out" 2>&1 &
job=$!
await_ready "kill-launcher" 120  # NCCL's start included
leader=$(cat "$work/node-1.pid")
kill -KILL "$leader"
wait $job
rc=$?
took=$((SECONDS - start))
out=$(cat "$work/out")
(( rc != 124 && took < 60 )) || { echo "FAIL: kill-launcher: the job did not end (rc $rc, $took s):"; echo "$out"; exit 1; }
grep -qE "^master: PeerFailure: node 1's launcher process \(pid [0-9]+ on .*\) ended without leaving the session \(killed, or it crashed\): its rank 1 ended with it" \
  <<< "$out" || { echo "FAIL: the master did not name node 1's launcher:"; echo "$out"; exit 1; }
await_node_memory_gone  # node 1's watcher removes its segments once its launcher is gone
[[ -z $(left_behind) ]] || { echo "FAIL: node 1's shared memory left: $(left_behind)"; exit 1; }
echo "PASS (shapes ${shapes[*]}; kill-launcher took ${took} s)"
