#!/usr/bin/env bash
# scripts/compare-nccl-tests (the table and bounds of issue 22's comparison with nccl-tests) on
# outputs written here, and scripts/bench-collectives-vs-nccl-tests with stand-ins for nccl-tests
# and synk-bench that log their calls: which rows miss (time over +1 us up to 128 KiB, busbw under
# 97 % from 2 MiB, synk's #wrong), the median run of each side, refused outputs, and the two
# sides alternating run by run with --bytes and --iters handed to both. Skips (77) without python3.
#   tests/harness/cli/compare_nccl_tests_test.sh PROJECT_SOURCE_DIR
set -uo pipefail
root=${1:?project source dir}
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
compare="$root/scripts/compare-nccl-tests"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# One data line in nccl-tests' 13 columns: size count type redop root, then time algbw busbw
# #wrong out of place and in place (busbw given; algbw is not compared).
line() {
  printf '%12s %10s  float  sum  -1  %s 0.00 %s %s  %s 0.00 %s %s\n' \
    "$1" $(($1 / 4)) "$2" "$3" "$4" "$5" "$6" "$7"
}
# An output: a header line, then data lines.
output() {
  local f=$1
  shift
  { echo "#  size  count  type  redop  root  time algbw busbw #wrong  time algbw busbw #wrong"
    printf '%s\n' "$@"; } > "$f"
}

# 1. The bounds. nccl-tests 10 us up to 128 KiB, busbw 100 from 2 MiB.
output "$tmp/ref.txt" "$(line 8 10.00 0.00 0 10.00 0.00 0)" \
  "$(line 131072 10.00 10.00 0 10.00 10.00 0)" "$(line 1048576 20.00 50.00 0 20.00 50.00 0)" \
  "$(line 2097152 30.00 100.00 0 30.00 100.00 0)" "$(line 0 1.00 0.00 0 1.00 0.00 0)"
# synk: 8 B +0.9 us (met) / +1.1 us (miss); 128 KiB out #wrong 1 (miss), in fine; 1 MiB at half
# the busbw (no bound there); 2 MiB 97.1 % (met) / 96.9 % (miss); size 0 rows are skipped.
output "$tmp/synk.txt" "$(line 8 10.90 0.00 0 11.10 0.00 0)" \
  "$(line 131072 10.00 10.00 1 10.00 10.00 0)" "$(line 1048576 40.00 25.00 0 40.00 25.00 0)" \
  "$(line 2097152 31.00 97.10 0 31.00 96.90 0)" "$(line 0 9.00 0.00 0 9.00 0.00 0)"
table=$(python3 "$compare" all_reduce "$tmp/ref.txt" "$tmp/synk.txt"); rc=$?
[[ $rc == 1 ]] || fail "misses: exit $rc, want 1"
grep -q "all_reduce: 3 row(s) miss the targets" <<< "$table" \
  || fail "misses: want 3 rows missed: $table"
row() { grep -E "^\| $1 \| $2 \|" <<< "$table"; }
row 8 out | grep -q "+0.90 .*|  |$" || fail "8 B out +0.90 us is within the bound: $(row 8 out)"
row 8 in | grep -q "+1.10 .*| MISS |$" || fail "8 B in +1.10 us misses: $(row 8 in)"
row 131072 out | grep -q "| 0 / 1 | MISS |$" || fail "synk's #wrong misses: $(row 131072 out)"
row 1048576 out | grep -q "|  |$" || fail "1 MiB carries no bound: $(row 1048576 out)"
row 2097152 out | grep -q "97.1 % .*|  |$" || fail "97.1 % is within the bound: $(row 2097152 out)"
row 2097152 in | grep -q "96.9 % .*| MISS |$" || fail "96.9 % misses: $(row 2097152 in)"
[[ -z $(row 0 out) ]] || fail "size-0 rows are not compared"
# nccl-tests' own #wrong is shown, not counted: everything else within bounds exits 0.
output "$tmp/ref_wrong.txt" "$(line 8 10.00 0.00 2 10.00 0.00 0)"
output "$tmp/synk_ok.txt" "$(line 8 10.50 0.00 0 10.50 0.00 0)"
table=$(python3 "$compare" reduce "$tmp/ref_wrong.txt" "$tmp/synk_ok.txt") \
  || fail "nccl-tests' #wrong counted as a miss: $table"
row 8 out | grep -q "| 2 / 0 |  |$" || fail "nccl-tests' #wrong shown: $(row 8 out)"

# 2. Medians: the run of median time on each side, with its own busbw (three runs each; neither
# median-time run holds its side's median busbw, so a median of each column would differ).
for r in 1 2 3; do
  t=(0 10.00 30.00 12.00); b=(0 101.00 33.00 120.00)
  output "$tmp/ref$r.txt" "$(line 2097152 "${t[r]}" "${b[r]}" 0 "${t[r]}" "${b[r]}" 0)"
  t=(0 50.00 12.50 12.40); b=(0 20.00 99.90 98.50)
  output "$tmp/synk$r.txt" "$(line 2097152 "${t[r]}" "${b[r]}" 0 "${t[r]}" "${b[r]}" 0)"
done
table=$(python3 "$compare" broadcast "$tmp/ref1.txt,$tmp/ref2.txt,$tmp/ref3.txt" \
  "$tmp/synk1.txt,$tmp/synk2.txt,$tmp/synk3.txt"); rc=$?
[[ $rc == 1 ]] || fail "medians: 99.90 against 120.00 misses, exit $rc: $table"
grep -q "median of 3 runs" <<< "$table" || fail "medians: the title names the runs: $table"
row 2097152 out | grep -q "| 12.00 | 12.50 | +0.50 | 120.00 | 99.90 |" \
  || fail "medians: want nccl-tests' 12.00 us run and synk's 12.50 us run: $(row 2097152 out)"

# An even count takes the lower middle run; the title says each side's count where they differ.
table=$(python3 "$compare" broadcast "$tmp/ref1.txt,$tmp/ref3.txt" "$tmp/synk2.txt") \
  || fail "two runs: exit $?: $table"
grep -q "nccl-tests median of 2 runs, synk-bench one run" <<< "$table" \
  || fail "two runs: the title names each side's runs: $table"
row 2097152 out | grep -q "| 10.00 | 12.50 |" \
  || fail "two runs: want the lower middle (10.00 us): $(row 2097152 out)"

# 3. Refused: a size twice in one output (independent runs side by side), on either side.
output "$tmp/twice.txt" "$(line 8 10.00 0.00 0 10.00 0.00 0)" "$(line 8 11.00 0.00 0 11.00 0.00 0)"
out=$(python3 "$compare" all_reduce "$tmp/twice.txt" "$tmp/synk_ok.txt" 2>&1); rc=$?
[[ $rc == 1 ]] && grep -q "size 8 twice" <<< "$out" \
  || fail "a repeated size (nccl-tests): exit $rc: $out"
out=$(python3 "$compare" all_reduce "$tmp/ref.txt" "$tmp/twice.txt" 2>&1); rc=$?
[[ $rc == 1 ]] && grep -q "size 8 twice" <<< "$out" \
  || fail "a repeated size (synk-bench): exit $rc: $out"
out=$(python3 "$compare" all_reduce "$tmp/ref.txt" "$tmp/missing.txt" 2>&1); rc=$?
[[ $rc == 1 ]] && grep -q "all_reduce: cannot read $tmp/missing.txt: No such file" <<< "$out" \
  || fail "a missing output is named: exit $rc: $out"

# 4. The driver: stand-ins log their calls; the sides alternate, --bytes and --iters reach both.
mkdir -p "$tmp/nt"
cat > "$tmp/nt/all_reduce_perf" <<EOF
#!/usr/bin/env bash
echo "nccl-tests \$*" >> "$tmp/calls.log"
printf '%s\n' "$(line 8 10.00 0.00 0 10.00 0.00 0)"
EOF
cat > "$tmp/synk-bench" <<EOF
#!/usr/bin/env bash
echo "synk-bench \$*" >> "$tmp/calls.log"
printf '%s\n' "$(line 8 10.20 0.00 0 10.20 0.00 0)"
EOF
chmod +x "$tmp/nt/all_reduce_perf" "$tmp/synk-bench"
(cd "$root" && NCCL_TESTS="$tmp/nt" SYNK_BENCH="$tmp/synk-bench" OUT="$tmp/out" \
  scripts/bench-collectives-vs-nccl-tests --ops all_reduce --repetitions 3 --bytes 8:128K) \
  > "$tmp/driver.txt" 2>&1 || fail "driver: exit $?: $(cat "$tmp/driver.txt")"
order=$(awk '{print $1}' "$tmp/calls.log" | tr '\n' ' ')
[[ $order == "nccl-tests synk-bench nccl-tests synk-bench nccl-tests synk-bench " ]] \
  || fail "driver: the sides alternate run by run, got: $order"
[[ $(grep -c -- "-b 8 -e 128K" "$tmp/calls.log") == 6 ]] \
  || fail "driver: --bytes 8:128K reaches every run: $(cat "$tmp/calls.log")"
[[ $(grep "^synk-bench" "$tmp/calls.log" | grep -c -E -- "--repetitions 1( |$)") == 3 ]] \
  || fail "driver: one synk-bench repetition a run: $(cat "$tmp/calls.log")"
grep -q "median of 3 runs" "$tmp/driver.txt" \
  || fail "driver: the table compares the 3 runs: $(cat "$tmp/driver.txt")"
[[ $(grep -c -- "-n 20 " "$tmp/calls.log") == 6 ]] \
  || fail "driver: nccl-tests' 20 iterations by default on both sides: $(cat "$tmp/calls.log")"
: > "$tmp/calls.log"
(cd "$root" && NCCL_TESTS="$tmp/nt" SYNK_BENCH="$tmp/synk-bench" OUT="$tmp/out" \
  scripts/bench-collectives-vs-nccl-tests --ops all_reduce --repetitions 1 --iters 200) \
  > "$tmp/driver.txt" 2>&1 || fail "driver --iters: exit $?: $(cat "$tmp/driver.txt")"
[[ $(grep -c -- "-n 200 " "$tmp/calls.log") == 2 ]] \
  || fail "driver: --iters 200 reaches both sides: $(cat "$tmp/calls.log")"
for bad in 0 x -3; do
  out=$(cd "$root" && scripts/bench-collectives-vs-nccl-tests --iters "$bad" 2>&1); rc=$?
  [[ $rc == 2 ]] && grep -q "iters must be a positive integer, got '$bad'" <<< "$out" \
    || fail "driver: a bad --iters $bad: exit $rc: $out"
done
for bad in 8-1G 1G:8 0:8 8:; do
  out=$(cd "$root" && scripts/bench-collectives-vs-nccl-tests --bytes "$bad" 2>&1); rc=$?
  [[ $rc == 2 ]] && grep -q "bytes takes MIN:MAX" <<< "$out" \
    || fail "driver: a bad --bytes $bad: exit $rc: $out"
done

[[ $failures == 0 ]] && echo "compare_nccl_tests_test: ok"
exit $((failures > 0))
