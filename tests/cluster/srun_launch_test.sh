#!/usr/bin/env bash
# synk-launch-info under a real srun: starts a single-host Slurm of its own (munged, slurmctld,
# slurmd from Debian's slurm-wlm, in a temporary folder, on ports of its own), runs 3 tasks on
# this one node as simulated nodes (one line per node, ranks node-major), then 2 tasks without:
# every task must refuse, naming the srun option to use; then, given session_nodes_check (a build
# with Open MPI), one synk session over 2 srun tasks. Stops the daemons on exit.
# Skips (77) without slurm-wlm, when not root (slurmd runs as root), and where slurmd cannot run
# at all: Slurm 22.05's slurmd needs a cgroup filesystem at /sys/fs/cgroup, which a bare
# container may not mount.
set -u
tool=$1 session=${2:-}
for daemon in munged slurmctld slurmd srun sinfo; do
  command -v "$daemon" >/dev/null || { echo "SKIPPED: no $daemon (slurm-wlm)"; exit 77; }
done
[[ $(id -u) -eq 0 ]] || { echo "SKIPPED: slurmd needs root"; exit 77; }
[[ -e /sys/fs/cgroup/cgroup.controllers || -d /sys/fs/cgroup/cpu || -d /sys/fs/cgroup/cpuset ]] ||
  { echo "SKIPPED: no cgroup filesystem at /sys/fs/cgroup (slurmd cannot start here)"; exit 77; }
dir=$(mktemp -d /tmp/synk-slurm.XXXXXX)
chmod 755 "$dir"  # munged's socket must be reachable
stop() {
  for pid in slurmd slurmctld munged; do
    [[ -s $dir/$pid.pid ]] && kill "$(cat "$dir/$pid.pid")" 2>/dev/null
  done
  rm -rf "$dir"
}
trap stop EXIT
fail() { echo "FAIL: $*"; for log in "$dir"/*.log; do echo "== $log"; tail -20 "$log"; done; exit 1; }
mkdir -p "$dir/state" "$dir/spool"
port=$((20000 + ($$ % 20000) * 2))  # two ports of this run's own
host=$(hostname -s)
cat > "$dir/slurm.conf" <<CONF
ClusterName=synktest
SlurmctldHost=$host(127.0.0.1)
AuthType=auth/munge
AuthInfo=socket=$dir/munge.sock
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$port
SlurmdPort=$((port + 1))
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=synktest Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
CONF
export SLURM_CONF=$dir/slurm.conf
head -c 1024 /dev/urandom > "$dir/munge.key" && chmod 400 "$dir/munge.key"
munged --force --socket="$dir/munge.sock" --key-file="$dir/munge.key" --pid-file="$dir/munged.pid" \
  --log-file="$dir/munged.log" --seed-file="$dir/munge.seed" || fail "munged did not start"
slurmctld -i || fail "slurmctld did not start"
slurmd || fail "slurmd did not start"
# The node registers within seconds; wait for it to be idle, with a deadline.
for _ in $(seq 300); do
  [[ $(sinfo -h -o %t 2>/dev/null) == idle ]] && break
  sleep 0.1
done
[[ $(sinfo -h -o %t 2>/dev/null) == idle ]] || fail "the node did not come up within 30 s"
out=$(timeout 60 srun -N1 -n3 --overcommit --export=ALL,SYNK_SIMULATE_NODES=1 "$tool" \
        --ranks-per-node 2 2>&1) || fail "srun with simulated nodes exited non-zero: $out"
echo "$out"
for node in 0 1 2; do
  want="slurm process $node of 3 (3 on this host): node $node of 3, ranks $((2 * node))-$((2 * node + 1)) of 6 (2 per node)"
  grep -qxF "$want" <<< "$out" || fail "missing line: $want"
done
if err=$(timeout 60 srun -N1 -n2 --overcommit "$tool" 2>&1); then
  fail "two tasks on one node were accepted: $err"
fi
grep -q "synk-launch-info: 2 slurm processes share this host.*srun --ntasks-per-node=1" <<< "$err" \
  || fail "the refusal does not say what to change: $err"
# One synk session over the step's tasks (2 simulated nodes x 1 cpu rank), where the build has
# Open MPI (session_nodes_check given): srun starts the launchers and Open MPI meets them through
# Slurm's PMIx plugin (--mpi=pmix; Debian's Open MPI has no PMI-2 client). The same checks as
# under mpirun (session_nodes_test.sh): the session's size and close, and the test model's
# values equal to one machine's line for line.
if [[ -n $session ]]; then
  env=ALL,SYNK_SIMULATE_NODES=1,OMPI_MCA_btl_tcp_if_include=lo,OMPI_MCA_oob_tcp_if_include=lo
  out=$(timeout 60 srun -N1 -n2 --overcommit --mpi=pmix --export=$env "$session" ok 1 2>&1) \
    || fail "a session under srun --mpi=pmix failed: $out"
  grep -qxF "master: 2 ranks, master rank 0" <<< "$out" && grep -qxF "master: closed" <<< "$out" \
    || fail "the session under srun: $out"
  local_out=$(timeout 60 "$session" models-local 2 2>&1) || fail "models on one machine: $local_out"
  out=$(timeout 60 srun -N1 -n2 --overcommit --mpi=pmix --export=$env "$session" models 1 2>&1) \
    || fail "models under srun: $out"
  [[ $(grep -c '^value: ' <<< "$out") -ge 75 && $(grep '^value: ' <<< "$out") == "$(grep '^value: ' <<< "$local_out")" ]] \
    || fail "models under srun differ from one machine: $(diff <(grep '^value: ' <<< "$local_out") <(grep '^value: ' <<< "$out"))"
  echo "a session over 2 srun tasks: as on one machine"
fi
echo "PASS"
