#!/usr/bin/env bash
# ab_test.sh SYNK_BENCH LIB_DIR SOURCE_DIR WORK_DIR
# `synk-bench compare --ab` with two copies of one build (the same commit twice, as CI would
# build it twice): the loop must alternate them, store one run per build with every round as a
# repetition, pair their points (same keys) and find no regression. One point of the toy model,
# 5 rounds, q = 0.01 and a 25 % minimum change: a false alarm needs the 5 rounds of one copy all
# faster than all 5 of the other (chance 2/252) and by more than 25 %.
set -euo pipefail
bench=$1 lib=$2 src=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
for side in base cand; do
  mkdir -p "$work/$side/bin" "$work/$side/lib"
  cp "$bench" "$work/$side/bin/synk-bench"
  ln -s "$lib/libsynk_bench_toy.so" "$work/$side/lib/libsynk_bench_toy.so"
done
set +e
"$bench" compare --ab "$work/base" "$work/cand" "$src/tests/harness/experiments/toy_scaling.ini" \
  --set axes.ranks=1 --set axes.batch=32 --repetitions 5 --q 0.01 --min-change 0.25 \
  --db "$work/ab.db" --json > "$work/compare.json" 2> "$work/progress.txt"
rc=$?
set -e
cat "$work/progress.txt" "$work/compare.json"
[[ $rc == 0 ]] || { echo "ab_test: compare --ab exited $rc, expected 0"; exit 1; }
# Alternation: ABBA rounds, each build's process once per round.
[[ $(grep -c '^ab round .*: baseline .*exited with code 0' "$work/progress.txt") == 5 ]]
[[ $(grep -c '^ab round .*: candidate .*exited with code 0' "$work/progress.txt") == 5 ]]
grep -q '^ab round 2/5: candidate' "$work/progress.txt"
json=$(cat "$work/compare.json")
for want in '"tag":"ab-baseline"' '"tag":"ab-candidate"' '"repetitions":5,' '"verdict":"same"' \
            '"incomplete":false' '"same":1,'; do
  [[ $json == *"$want"* ]] || { echo "ab_test: the compare lacks $want"; exit 1; }
done
# Both builds' points carry one comparability key.
keys=$(grep -o '"[a-z]*_key":"[0-9a-f]*"' "$work/compare.json" | grep -v machine | cut -d'"' -f4 | sort -u | wc -l)
[[ $keys == 1 ]] || { echo "ab_test: the two builds' points have $keys keys"; exit 1; }
"$bench" list --db "$work/ab.db" | grep -Eq '^ +2 .* complete +toy_scaling +train +ab-candidate'
