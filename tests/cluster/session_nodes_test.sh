#!/usr/bin/env bash
# One synk session over several nodes (cluster/README.md) under a real mpirun, each launcher a
# simulated node of this host (SYNK_SIMULATE_NODES=1) forking its node's cpu ranks:
#  - 2 nodes x 1 rank, 2 x 2, 3 x 1, 3 x 2: the master sees every node's ranks and passes 300
#    barrier steps; close ends every node's processes, and the job ends with every launcher's
#    exit 0 (MPI finished cleanly everywhere); no shared memory is left behind;
#  - 2 x 1, 3 x 1, 2 x 2 and 3 x 2 (and 2 x 2 with master rank 1, node 0's launcher): the test
#    model's calls (without inputs; on a scattered Data, rewritten, then grown) and every variable
#    collective, op and dtype (also on values whose result depends on the order of the ranks),
#    three steps of the mlp (all-reduces inside its calls), collectives larger than the leaders'
#    4 MiB pipeline chunk (digests), calls on other rows of a Data and on rows by index list
#    (shipped to each node only as its ranks read them) print exactly what one machine's
#    session of as many ranks prints;
#  - 2 x 1: a Data read by calls on every node: node 1's copy holds only the rows its rank read
#    (its segment's allocated bytes: half, then three quarters), the totals exact;
#  - launchers bound to one CPU (taskset): each warns, naming `mpirun --bind-to none`;
#  - ForkOptions::step_times over 2 nodes: refused by every launcher (the cuda backend over
#    nodes: session_nodes_cuda_test.sh, on GPUs);
#  - 2 x 2: a rank of node 1 killed (SIGKILL) while the master steps: the master raises
#    PeerFailure naming rank 3 and how it ended, within seconds; every process ends;
#  - 2 x 2: node 1's launcher killed (under mpirun's orte_enable_recovery, which keeps the
#    master alive): the launcher watch (cluster/launcher_watch.h) raises PeerFailure naming node
#    1's launcher and ranks 2-3 at once (the step deadline is a minute); with
#    SYNK_LAUNCHER_WATCH=0 the master's 2 s deadline names ranks 2 and 3 and node 1, late whole.
#    Either way node 1's other rank dies with its launcher and its watcher removes its memory;
#  - 2 x 2: node 1's launcher stopped (SIGSTOP, alive but silent): with SYNK_LAUNCHER_SILENCE=5
#    the master raises Timeout naming node 1's launcher as silent and ranks 2-3 within seconds
#    (the step deadline is a minute); the stopped launcher is then killed and its node cleaned up;
#  - 2 x 2: the master's process (node 0's launcher) killed: node 1's launcher and ranks end on
#    their own within seconds (without the watch they would wait for the master for good), and
#    node 1's shared memory is removed.
# Skips (77) where mpirun is missing.
set -u
check=$1
command -v mpirun >/dev/null || { echo "SKIPPED: no mpirun (openmpi-bin)"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
# mpirun binds each of 2 processes to one core by default: a node's ranks would share it.
export OMPI_MCA_hwloc_base_binding_policy=none
work=$(mktemp -d) && trap 'rm -rf "$work"' EXIT
source "$(dirname "$0")/nodes_lib.sh"  # await_ready, left_behind, await_node_memory_gone

for shape in 2x1 2x2 3x1 3x2; do
  nodes=${shape%x*} per_node=${shape#*x}
  rm -f "$work"/node-*.pid
  out=$(SYNK_CHECK_PID_DIR=$work timeout 120 mpirun --oversubscribe -np "$nodes" \
          -x SYNK_SIMULATE_NODES=1 -x SYNK_CHECK_PID_DIR "$check" ok "$per_node" 2>&1) \
    || { echo "FAIL: $shape: the job did not end well:"; echo "$out"; exit 1; }
  grep -qxF "master: $((nodes * per_node)) ranks, master rank 0" <<< "$out" \
    || { echo "FAIL: $shape: the session's size:"; echo "$out"; exit 1; }
  [[ $(grep -c '^master: [0-9]* ranks' <<< "$out") == 1 ]] \
    || { echo "FAIL: $shape: fork() returned on a node without the master:"; echo "$out"; exit 1; }
  grep -qxF "master: closed" <<< "$out" || { echo "FAIL: $shape: no close:"; echo "$out"; exit 1; }
  [[ $(ls "$work"/node-*.pid | wc -l) == "$nodes" ]] || { echo "FAIL: $shape: pid files"; exit 1; }
  [[ -z $(left_behind) ]] || { echo "FAIL: $shape: shared memory left: $(left_behind)"; exit 1; }
done

# A launcher bound to fewer CPUs than its node's ranks and bridge (mpirun's default --bind-to core
# for 2 processes; here taskset) is warned on every node, naming the mpirun option to use.
# (The step-times scenario: the warning comes first, then fork() refuses, before any rank would
# have to share the one CPU.)
out=$(taskset -c 0 timeout 60 mpirun --oversubscribe -np 2 -x SYNK_SIMULATE_NODES=1 "$check" step-times 1 2>&1) \
  || { echo "FAIL: bound to one CPU:"; echo "$out"; exit 1; }
[[ $(grep -c "this launcher may run on 1 CPU(s), which its 1 rank(s) and the node's bridge (2 busy threads) would share: start it with \`mpirun --bind-to none\`" <<< "$out") == 2 ]] \
  || { echo "FAIL: a narrow binding not warned on both launchers:"; echo "$out"; exit 1; }

# Step times do not travel between nodes yet: every launcher refuses them by name.
out=$(timeout 60 mpirun --oversubscribe -np 2 -x SYNK_SIMULATE_NODES=1 "$check" step-times 1 2>&1) \
  || { echo "FAIL: step-times:"; echo "$out"; exit 1; }
[[ $(grep -c "^launcher: refused: fork: step_times over several nodes is not built yet" <<< "$out") == 2 ]] \
  || { echo "FAIL: step_times not refused on both launchers:"; echo "$out"; exit 1; }

# The test model's call (outputs reduced) and every variable collective with every op on every
# dtype give exactly what one machine's session of as many ranks gives: one rank per node (the
# leaders' communicator) and several (shared memory inside a node, reductions chained across nodes
# in rank order); 2x2m1: master rank 1, so node 0's leader is rank 1 and the roots are rank 1.
for shape in 2x1 3x1 2x2 3x2 2x2m1; do
  master=0
  [[ $shape == *m* ]] && master=${shape#*m} && shape=${shape%m*}
  nodes=${shape%x*} per_node=${shape#*x}
  local_out=$(timeout 120 "$check" models-local $((nodes * per_node)) "$master" 2>&1) \
    || { echo "FAIL: models on one machine, $((nodes * per_node)) ranks:"; echo "$local_out"; exit 1; }
  rm -f "$work"/node-*.pid
  out=$(SYNK_CHECK_PID_DIR=$work timeout 120 mpirun --oversubscribe -np "$nodes" \
          -x SYNK_SIMULATE_NODES=1 -x SYNK_CHECK_PID_DIR "$check" models "$per_node" "$master" 2>&1) \
    || { echo "FAIL: models over $shape (master $master):"; echo "$out"; exit 1; }
  values=$(grep '^value: ' <<< "$out")
  [[ $(wc -l <<< "$values") -ge 150 ]] || { echo "FAIL: $shape: too few values:"; echo "$out"; exit 1; }
  [[ $values == "$(grep '^value: ' <<< "$local_out")" ]] \
    || { echo "FAIL: $shape (master $master) differs from one machine:"; diff <(grep '^value: ' <<< "$local_out") <(echo "$values"); exit 1; }
  [[ -z $(left_behind) ]] || { echo "FAIL: models: shared memory left: $(left_behind)"; exit 1; }
done

# Rows of a Data shipped only to the node whose ranks read them.
rm -f "$work"/node-*.pid
out=$(SYNK_CHECK_PID_DIR=$work timeout 120 mpirun --oversubscribe -np 2 -x SYNK_SIMULATE_NODES=1 \
        -x SYNK_CHECK_PID_DIR "$check" ship-rows 1 2>&1) \
  || { echo "FAIL: ship-rows:"; echo "$out"; exit 1; }
[[ $(grep -c "^master: ok " <<< "$out") == 3 ]] || { echo "FAIL: ship-rows:"; echo "$out"; exit 1; }
[[ -z $(left_behind) ]] || { echo "FAIL: ship-rows: shared memory left: $(left_behind)"; exit 1; }

# A rank of node 1 (2 x 2: ranks 2 and 3; rank 3 is the only child of node 1's launcher) killed.
# After the failure node 1's launcher ends on its own (MPI unfinished, exit 71): mpirun must not
# take that for the job's failure before the master reported.
start=$SECONDS
rm -f "$work"/node-*.pid
SYNK_CHECK_PID_DIR=$work timeout 120 mpirun --oversubscribe -np 2 -x SYNK_SIMULATE_NODES=1 \
  -x SYNK_CHECK_PID_DIR --mca orte_allowed_exit_without_sync 1 \
  --mca orte_abort_on_non_zero_status 0 "$check" kill 2 > "$work/out" 2>&1 &
job=$!
await_ready "kill"
leader=$(cat "$work/node-1.pid")
victim=""  # the launcher's child that is a rank, not its shared-memory watcher
for child in $(pgrep -P "$leader"); do
  [[ $(cat "/proc/$child/comm" 2>/dev/null) == synk-watcher ]] || victim=$child
done
[[ -n $victim ]] || { echo "FAIL: node 1's launcher $leader has no rank child"; cat "$work/out"; exit 1; }
kill -KILL $victim
wait $job
took=$((SECONDS - start))
out=$(cat "$work/out")
grep -q "^master: PeerFailure: rank 3 (pid $victim) was killed by signal 9 (SIGKILL" <<< "$out" \
  || { echo "FAIL: the master did not name the killed rank:"; echo "$out"; exit 1; }
(( took < 30 )) || { echo "FAIL: the failure took $took s to end the job"; echo "$out"; exit 1; }
kill -0 "$leader" 2>/dev/null && { echo "FAIL: node 1's launcher outlived the job"; exit 1; }
[[ -z $(left_behind) ]] || { echo "FAIL: after the kill, shared memory left: $(left_behind)"; exit 1; }

# Node 1's launcher itself killed (2 x 2: rank 2, whose child rank 3 dies with it); mpirun must keep
# the master alive to report (orte_enable_recovery). With the launcher watch the master names
# node 1's launcher at once; without (SYNK_LAUNCHER_WATCH=0) nothing of node 1 is left to say so,
# and the master's step deadline (2 s in that scenario) names node 1's ranks and node 1, late
# whole. Node 1's watcher removes its shared memory.
# Starts scenario $1 over 2 x 2 in the background ($job; $start, the time) under mpirun's
# recovery, which keeps the master alive to report when node 1's launcher ends, passing the
# launcher watch's variables that are set.
start_recovering_job() {
  start=$SECONDS
  rm -f "$work"/node-*.pid "$work/out"
  local pass=(-x SYNK_SIMULATE_NODES=1 -x SYNK_CHECK_PID_DIR) v
  for v in SYNK_LAUNCHER_WATCH SYNK_LAUNCHER_SILENCE; do [[ -n ${!v:-} ]] && pass+=(-x "$v"); done
  SYNK_CHECK_PID_DIR=$work timeout 120 mpirun --oversubscribe -np 2 "${pass[@]}" \
    --mca orte_enable_recovery 1 --mca orte_allowed_exit_without_sync 1 \
    --mca orte_abort_on_non_zero_status 0 "$check" "$1" 2 > "$work/out" 2>&1 &
  job=$!
}
kill_launcher() {  # $1: SYNK_LAUNCHER_WATCH, $2: the master's line that must come
  SYNK_LAUNCHER_WATCH=$1 start_recovering_job kill-launcher
  await_ready "kill-launcher (watch $1)"
  leader=$(cat "$work/node-1.pid")
  children=$(pgrep -P "$leader")
  kill -KILL "$leader"
  wait $job
  took=$((SECONDS - start))
  out=$(cat "$work/out")
  grep -qE "$2" <<< "$out" \
    || { echo "FAIL: kill-launcher (watch $1): the master did not say what it should:"; echo "$out"; exit 1; }
  (( took < 30 )) || { echo "FAIL: kill-launcher (watch $1) took $took s"; echo "$out"; exit 1; }
  alive=$(await_gone $children)
  [[ -z $alive ]] || { echo "FAIL: node 1's process(es) $alive outlived its launcher"; exit 1; }
  await_node_memory_gone  # node 1's watcher removes its segments once its launcher is gone
  [[ -z $(left_behind) ]] || { echo "FAIL: node 1's shared memory left: $(left_behind)"; exit 1; }
}
# The step deadline is a minute here: only the watch can end it within 30 s.
kill_launcher 1 "^master: PeerFailure: node 1's launcher process \(pid [0-9]+ on .*\) ended without leaving the session \(killed, or it crashed\): its ranks 2-3 ended with it"
took_watched=$took
# Whichever of node 0's ranks (0, 1) reaches its deadline first names node 1's.
kill_launcher 0 "^master: Timeout: rank [01] timed out at .*: rank\(s\) 2, 3 did not arrive before the deadline; on node\(s\) 1 \(all its ranks\) of 2: a node late whole may have lost its launcher process"

# Node 1's launcher stopped (SIGSTOP): alive, so nothing closes; its silence past the bound
# (SYNK_LAUNCHER_SILENCE=5 s; the step deadline is a minute) makes the master raise Timeout
# naming it. The job cannot end while it is stopped: the script kills it once the master spoke.
SYNK_LAUNCHER_SILENCE=5 start_recovering_job stop-launcher
await_ready "stop-launcher"
leader=$(cat "$work/node-1.pid")
children=$(pgrep -P "$leader")
kill -STOP "$leader"
said="^master: Timeout: node 1's launcher process \(pid $leader on .*\) has sent nothing for [0-9.]+ s, not even the watch's heartbeat \(stopped, or hung; SYNK_LAUNCHER_SILENCE.*\): its ranks 2-3 cannot go on"
for _ in $(seq 300); do  # at most 30 s
  grep -qE "$said" "$work/out" 2>/dev/null && break
  read -rt 0.1 <> <(:) || true
done
took_stopped=$((SECONDS - start))
kill -KILL "$leader" 2>/dev/null
wait $job
grep -qE "$said" "$work/out" \
  || { echo "FAIL: stop-launcher: the master did not name the silent launcher:"; cat "$work/out"; exit 1; }
alive=$(await_gone $children)
[[ -z $alive ]] || { echo "FAIL: stop-launcher: node 1's process(es) $alive outlived its launcher"; exit 1; }
await_node_memory_gone
[[ -z $(left_behind) ]] || { echo "FAIL: stop-launcher: shared memory left: $(left_behind)"; exit 1; }

# The master's process killed: node 1 (its launcher and rank 3) must end on its own.
start_recovering_job kill-master
await_ready "kill-master"
leader=$(cat "$work/node-1.pid")
children=$(pgrep -P "$leader")
start=$SECONDS
kill -KILL "$(cat "$work/node-0.pid")"
for _ in $(seq 300); do  # at most 30 s; a node left waiting for the master never ends
  kill -0 "$leader" 2>/dev/null || break
  read -rt 0.1 <> <(:) || true
done
took_master=$((SECONDS - start))
if kill -0 "$leader" 2>/dev/null; then
  kill -KILL "$leader" $children 2>/dev/null
  wait $job
  echo "FAIL: kill-master: node 1's launcher still runs after $took_master s"; cat "$work/out"; exit 1
fi
wait $job
alive=$(await_gone $children)
[[ -z $alive ]] || { echo "FAIL: kill-master: node 1's process(es) $alive outlived it"; exit 1; }
# Node 1 ended because its watch saw the master's process end (not mpirun tearing it down).
grep -q "node 1: the master's process (node 0's launcher, pid [0-9]* on .*) ended without leaving the session (killed, or it crashed): this node's ranks stop" "$work/out" \
  || { echo "FAIL: kill-master: node 1 did not say why it ended:"; cat "$work/out"; exit 1; }
await_node_memory_gone
# Node 0's own segments: its watcher removes them once the master is gone (the same wait).
[[ -z $(left_behind) ]] || { echo "FAIL: kill-master: shared memory left: $(left_behind)"; exit 1; }
echo "PASS (kill-launcher took ${took_watched} s with the watch, ${took} s without; stop-launcher ${took_stopped} s; kill-master ${took_master} s)"
