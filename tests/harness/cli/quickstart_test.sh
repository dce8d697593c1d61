#!/usr/bin/env bash
# quickstart_test.sh SYNK_BENCH LIB_DIR SOURCE_DIR WORK_DIR
# The quick start as scripts/demo runs it: experiments/quickstart.ini with the mlp plugin when it
# is built; otherwise the same sweep (CPU ranks 1 and 2, GPU counts skipped without GPUs) with
# the harness's test model, saying so. Checks the table, the report and the exit code.
set -euo pipefail
bench=$1 lib=$2 src=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
config=$src/experiments/quickstart.ini
"$bench" run "$config" --db "$work/synk.db" --html "$work/quickstart.html" | tee "$work/table"
# A row per CPU point (the backend column appears when GPU points are listed too).
grep -Eq '^ *(cpu +)?1 +32 .* 1\.00 .*ok$' "$work/table"
grep -Eq '^ *(cpu +)?2 +128 .*ok$' "$work/table"
grep -q '<svg class="plot"' "$work/quickstart.html"
# Into a file, not a pipe: `grep -q` leaves at its first match, and under pipefail the closed
# pipe would fail the test whenever `show` writes more than one pipe buffer.
"$bench" show --db "$work/synk.db" > "$work/show.txt"
grep -q 'status         complete' "$work/show.txt"
