#!/usr/bin/env bash
# gpu_smoke.sh SYNK_BENCH OUT_DIR: synk-bench's GPU paths on a GPU machine (the lent one), with
# every result kept in OUT_DIR: a train step on cuda ranks (the intro example), a split step whose
# all_reduce goes through NCCL and through host staging (the testkit model), the collectives on
# nccl, host and cpu, and each run's context. Exits non-zero if any run failed.
set -uo pipefail
bench=$1 out=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
db=$out/gpu.db
mkdir -p "$out"
status=0
run() {  # name, args...
  local name=$1
  shift
  "$bench" "$@" --db "$db" >"$out/$name.txt" 2>&1
  local rc=$?
  echo "== $name: exit $rc"
  tail -n 40 "$out/$name.txt"
  [[ $rc -eq 0 ]] || status=1
}
nvidia-smi -L || true
run intro run "$src/tests/harness/experiments/intro.ini" --html "$out/intro.html"
run split run "$src/tests/harness/experiments/intro.ini" --set experiment.plugin=synk_testkit \
  --set "experiment.step=shared_update, all_reduce(s)" --set axes.collectives=nccl,host \
  --set input.x.shape=batch,2 --set axes.batch=64 --html "$out/split.html"
run collectives collectives --op all --backend nccl,host,cpu --ranks 1,2 -b 8 -e 256M -f 4 \
  -n 20 -w 5 --html "$out/collectives.html"
"$bench" show 1 --db "$db" >"$out/context.txt" 2>&1
head -n 20 "$out/context.txt"
exit $status
