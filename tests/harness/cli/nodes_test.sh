#!/usr/bin/env bash
# synk-bench over several nodes (experiment.launch, harness/README.md "Points over several
# nodes") under a real mpirun, each launcher process a simulated node of this host
# (SYNK_SIMULATE_NODES=1), with experiments/nodes_toy.ini (the test model's split step: inputs
# scattered, an all_reduce and the check across nodes):
#  - nodes 1, 2 x 1 rank: both points ok with #wrong 0, every repetition's steps stored, the
#    points' nodes, ranks per node and hosts stored (export --json) and in the table, step_times
#    said to be left off;
#  - Ctrl-C while a 2-node point runs: exit 3, the run interrupted;
#  - the repetition's deadline: the point fails naming it, exit 3;
#  - a launcher that fails: each point fails with its reason and the sweep goes on;
#  - a launch line starting more processes than the point's nodes: refused by node 0, by name;
#  - synk-bench itself run under mpirun: refused by name before anything is written;
# and after each, no node process and no shared memory of one is left. The launch line runs a
# wrapper that records each node process's pid before it execs synk-bench (same pid).
# Skips (77) where mpirun is missing.
set -u
bench=$1 experiment=$2
command -v mpirun >/dev/null || { echo "SKIPPED: no mpirun (openmpi-bin)"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
# mpirun binds each of 2 processes to one core by default: a node's ranks would share it.
export OMPI_MCA_hwloc_base_binding_policy=none
work=$(mktemp -d) && trap 'rm -rf "$work"' EXIT
host=$(hostname)
printf '#!/bin/sh\necho $$ >> "%s/pids"\nexec "$@"\n' "$work" > "$work/record"
chmod +x "$work/record"
launch="experiment.launch=mpirun --oversubscribe -np {nodes} -x SYNK_SIMULATE_NODES=1 $work/record"
fail() { echo "FAIL: $1"; [[ -n ${2:-} ]] && echo "$2"; exit 1; }
# Polls (at most 10 s) until no recorded node process is alive (zombies awaiting their reaper
# hold nothing) and none has shared memory left.
nothing_left() {
  local what=$1 left=""
  for _ in $(seq 100); do
    left=""
    for pid in $(cat "$work/pids" 2>/dev/null); do
      state=$(awk '/^State:/ {print $2}' "/proc/$pid/status" 2>/dev/null)
      [[ -n $state && $state != Z ]] && left+=" process $pid"
      left+=$(ls /dev/shm | grep "^synk-[^-]*-$pid-" | sed 's/^/ /')
    done
    [[ -z $left ]] && break
    read -rt 0.1 <> <(:) || true
  done
  [[ -z $left ]] || fail "$what: left behind:$left"
  [[ -z $(ls -A "$work" | grep '^\.synk-bench-launch') ]] || fail "$what: the launch folder is left"
  rm -f "$work/pids"
}
run() { "$bench" run "$experiment" --set experiment.repetitions=2 --set experiment.steps=10 "$@" 2>&1; }

# nodes 1, 2 x 1 rank.
out=$(run --db "$work/ok.db" --set "$launch") || fail "the sweep did not end well (exit $?)" "$out"
grep -Eq "^ +1 +1 +1 +32 .* $host +ok$" <<< "$out" || fail "no 1-node row" "$out"
grep -Eq "^ +2 +1 +2 +32 .* [0-9.]+ +\[[0-9., ]+\] +[0-9]+ % +$host,$host +ok$" <<< "$out" \
  || fail "no 2-node row with its speedup and hosts" "$out"
grep -q "experiment.step_times is left off for points over several nodes" <<< "$out" \
  || fail "step_times not said to be left off" "$out"
json=$("$bench" export --db "$work/ok.db" --json) || fail "export" "$json"
for point in "1,\"ranks_per_node\":1,\"hosts\":\"$host\"" \
             "2,\"ranks_per_node\":1,\"hosts\":\"$host,$host\""; do
  grep -qF "\"status\":\"ok\",\"reason\":\"\",\"wrong\":0,\"nodes\":$point" <<< "$json" \
    || fail "point not stored as nodes $point, ok, #wrong 0" "$json"
done
[[ $(grep -o '"steps":10,"status":"ok"' <<< "$json" | wc -l) == 4 ]] \
  || fail "not 2 points x 2 repetitions of 10 steps" "$json"
[[ $(grep -o "\"hosts\":\"$host,$host\"}" <<< "$json" | wc -l) == 2 ]] \
  || fail "the 2-node repetitions' hosts" "$json"
[[ $(wc -l < "$work/pids") == 6 ]] || fail "not 3 launches of 1 + 2 nodes: $(cat "$work/pids")"
nothing_left "a sweep"

# Ctrl-C while a 2-node point steps (it would take 10 minutes): the run is interrupted.
"$bench" run "$experiment" --db "$work/stop.db" --set "$launch" --set axes.nodes=2 \
  --set experiment.min_time=600 --set experiment.repetition_timeout=120 > "$work/out" 2>&1 &
job=$!
for _ in $(seq 600); do  # both node processes started (at most 60 s)
  [[ $(cat "$work/pids" 2>/dev/null | wc -l) == 2 ]] && break
  read -rt 0.1 <> <(:) || true
done
[[ $(cat "$work/pids" 2>/dev/null | wc -l) == 2 ]] || fail "the nodes never started" "$(cat "$work/out")"
kill -INT $job
wait $job
rc=$?
[[ $rc == 3 ]] || fail "Ctrl-C: exit $rc, not 3" "$(cat "$work/out")"
grep -q "(interrupted): 0 ok, 0 wrong, 0 failed, 0 skipped, 1 not run" "$work/out" \
  || fail "Ctrl-C: not interrupted" "$(cat "$work/out")"
nothing_left "Ctrl-C"

# The repetition's deadline: the launcher is killed, the point fails naming it.
out=$("$bench" run "$experiment" --db "$work/late.db" --set "$launch" --set axes.nodes=2 \
        --set experiment.min_time=600 --set experiment.repetition_timeout=3 2>&1)
rc=$?
[[ $rc == 3 ]] || fail "deadline: exit $rc, not 3" "$out"
grep -q "^failed: cpu batch=32 collectives=shm nodes=2 ranks=2 ranks_per_node=1: repetition 1: the launcher (mpirun) did not finish within its deadline (3 s) and was killed" \
  <<< "$out" || fail "deadline: no reason" "$out"
nothing_left "deadline"

# A launcher that fails: both points fail with its reason, the sweep goes on to the second.
out=$(run --db "$work/false.db" --set "experiment.launch=env SYNK_NODES={nodes} false")
rc=$?
[[ $rc == 3 ]] || fail "failing launcher: exit $rc, not 3" "$out"
[[ $(grep -c "^failed: .*: repetition 1: the launcher (false) exited with code 1 and started no synk-bench node process" <<< "$out") == 2 ]] \
  || fail "failing launcher: not both points failed with the reason" "$out"

# A launch line that starts 2 processes whatever the point's nodes: node 0 refuses it by name.
out=$(run --db "$work/fixed.db" --set axes.nodes=1 \
        --set "experiment.launch=mpirun --oversubscribe -np 2 -x SYNK_SIMULATE_NODES=1 -x N={nodes} $work/record")
rc=$?
[[ $rc == 3 ]] || fail "fixed -np: exit $rc, not 3" "$out"
grep -q "^failed: .*nodes=1 .*: --set experiment.launch=.*: it started 2 synk-bench process(es) for a point of 1 node(s)" \
  <<< "$out" || fail "fixed -np: not refused by name" "$out"
nothing_left "fixed -np"
# synk-bench itself under the launcher: every process would sweep; refused by name, exit 2.
out=$(mpirun --oversubscribe -np 2 -x SYNK_SIMULATE_NODES=1 "$bench" run "$experiment" \
        --db "$work/under.db" 2>&1)
grep -q "^synk-bench run: started by a launcher (open-mpi process [01] of 2): run synk-bench once" \
  <<< "$out" || fail "synk-bench under mpirun not refused" "$out"
[[ ! -e $work/under.db ]] || fail "synk-bench under mpirun wrote its database"
echo PASS
