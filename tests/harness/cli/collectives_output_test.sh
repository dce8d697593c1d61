#!/usr/bin/env bash
# collectives_output_test.sh SYNK_BENCH WORK_DIR
# `synk-bench collectives` as nccl-tests' parsers read it: on standard output every line is either
# '#'-prefixed or a data line of nccl-tests' 13 columns; all_reduce and broadcast have numbers in
# both the out-of-place and the in-place group; one '# Avg bus bandwidth' per op; -g is refused
# naming --ranks. And how it times: back to back (the default) stores one sample per rank and
# repetition, --timing iteration one per iteration.
set -euo pipefail
bench=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
fail() { echo "collectives_output_test: $*" >&2; exit 1; }

"$bench" collectives --op all_reduce,broadcast,all_gather --backend cpu --ranks 2 -b 64 -e 4K -f 8 \
  -n 5 -w 1 --db "$work/c.db" >"$work/out.txt" 2>"$work/err.txt" || fail "exit $? $(cat "$work/err.txt")"
cat "$work/out.txt"
awk '!/^#/ && NF != 13 { print "not 13 columns: " $0; bad = 1 } END { exit bad }' "$work/out.txt" ||
  fail "a data line nccl-tests' parsers would not read"
[[ $(grep -c '^# Avg bus bandwidth *: [0-9.e+-]' "$work/out.txt") -eq 3 ]] ||
  fail "expected one '# Avg bus bandwidth' per op (3)"
[[ $(grep -c '^# Out of bounds values : 0 OK' "$work/out.txt") -eq 3 ]] ||
  fail "expected one '# Out of bounds values : 0 OK' per op (3)"
# Data lines: size count type redop root | time algbw busbw #wrong (out of place) | the same (in place)
# (all_reduce: redop sum; broadcast: root 0; all_gather: none and -1, out of place only)
awk '!/^#/ && ($4 != "none" || $5 != "-1") && ($6 == "N/A" || $10 == "N/A") {
       print "all_reduce/broadcast without both forms: " $0; bad = 1 }
     END { exit bad }' "$work/out.txt" || fail "an out-of-place or in-place column not measured"
rows=$(grep -vc '^#' "$work/out.txt")
[[ $rows -eq 9 ]] || fail "expected 9 data lines (3 ops x 3 sizes), got $rows"

# One sample per rank and repetition back to back; one per iteration with --timing iteration.
samples() { "$bench" export "$1" --csv --db "$work/c.db" | tail -n +2 | wc -l; }
points=$("$bench" export latest --csv --db "$work/c.db" | tail -n +2 | cut -d, -f2 | sort -u | wc -l)
[[ $(samples latest) -eq $((points * 2)) ]] || fail "back to back: $(samples latest) samples for $points points x 2 ranks"
"$bench" collectives --op all_reduce --backend cpu --ranks 2 -b 64 -e 64 -n 5 -w 1 --timing iteration \
  --db "$work/c.db" >/dev/null 2>&1 || fail "--timing iteration failed"
[[ $(samples latest) -eq $((2 * 2 * 5)) ]] || fail "per iteration: $(samples latest) samples, not 2 points x 2 ranks x 5"
grep -q 'timing: per iteration' <("$bench" show latest --db "$work/c.db") || fail "show does not say per iteration"

if "$bench" collectives -g 2 --db "$work/c.db" >/dev/null 2>"$work/err.txt"; then fail "-g accepted"; fi
grep -q -- '--ranks' "$work/err.txt" || fail "-g refused without naming --ranks"
echo "collectives_output_test: ok"
