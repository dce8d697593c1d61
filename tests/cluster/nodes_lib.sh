# Sourced by the session-over-nodes test scripts (session_nodes_test.sh, the cuda one): what they
# share. They set $work (a temporary folder where each launcher writes node-<index>.pid before it
# forks), and $job / $work/out for a job run in the background.

# Until the job in the background ($job, writing $work/out) says its master steps: at most
# ${2:-60} s, or until the job ended without. $1 names the scenario in the failure.
await_ready() {
  for _ in $(seq $(( ${2:-60} * 10 ))); do
    grep -q "^master: ready" "$work/out" 2>/dev/null && break
    kill -0 "$job" 2>/dev/null || break
    read -rt 0.1 <> <(:) || true
  done
  grep -q "^master: ready" "$work/out" || { echo "FAIL: $1: the master never got ready:"; cat "$work/out"; exit 1; }
}

# Shared memory left by this job's nodes: names carry their owner's pid (the launchers'). Other
# tests may run beside this one: only these names count.
left_behind() {
  for file in "$work"/node-*.pid; do
    ls /dev/shm 2>/dev/null | grep "^synk-[^-]*-$(cat "$file")-"
  done
}

# Until node 1's watcher has removed its segments (its launcher is gone): at most 10 s.
await_node_memory_gone() {
  for _ in $(seq 100); do
    [[ -z $(left_behind) ]] && return
    read -rt 0.1 <> <(:) || true
  done
}

# Until every pid given has ended (a node's rank dies with its launcher at once; its shared-memory
# watcher after removing the node's segments): at most 10 s. Prints the pids still alive.
await_gone() {
  for _ in $(seq 100); do
    local alive=""
    for pid in "$@"; do kill -0 "$pid" 2>/dev/null && alive="$alive $pid"; done
    [[ -z $alive ]] && return
    read -rt 0.1 <> <(:) || true
  done
  for pid in "$@"; do kill -0 "$pid" 2>/dev/null && echo "$pid"; done
}
