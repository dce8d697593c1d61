#!/usr/bin/env bash
# html_report_test.sh SYNK_BENCH SOURCE_DIR WORK_DIR
# Loads synk-bench's HTML reports (a train run with a split step, a collectives run, a train run
# with a compare and its experiment's history over two commits' runs) in headless
# Chromium: every <svg class="plot"> must have drawn all its data marks (the page's own check
# writes the counts into <body>), and a screenshot of each page is saved in WORK_DIR.
# Skips (exit 77) without Chromium (Debian: apt-get install chromium; scripts/install-deps).
set -euo pipefail
bench=$1 src=$2 work=$3
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [[ -z $browser ]]; then
  echo "SKIPPED: no chromium on PATH (scripts/install-deps installs it)"
  exit 77
fi
rm -rf "$work" && mkdir -p "$work"
db=$work/r.db
"$bench" run "$src/tests/harness/experiments/toy_scaling.ini" --db "$db" \
  --set "experiment.step=grad, all_reduce(grad), update" --set experiment.repetitions=2 >/dev/null
"$bench" collectives --op all_reduce,all_gather --backend cpu --ranks 1,2 -b 1K -e 256K -f 4 \
  -n 4 -w 1 --db "$db" >/dev/null
"$bench" report 1 --html "$work/train.html" --db "$db" >/dev/null
"$bench" report 2 --html "$work/collectives.html" --db "$db" >/dev/null
"$bench" run "$src/tests/harness/experiments/toy_scaling.ini" --db "$db" \
  --set "experiment.step=grad, all_reduce(grad), update" --set experiment.repetitions=2 >/dev/null
"$bench" report 3 --html "$work/regression.html" --db "$db" --compare 1 --history >/dev/null
grep -q '<section id="compare">' "$work/regression.html"
grep -q '<section id="history">' "$work/regression.html"
chrome=(timeout 120 "$browser" --headless --no-sandbox --disable-gpu --no-first-run
        --user-data-dir="$work/profile")
for page in train collectives regression; do
  html=$work/$page.html
  if grep -Eq '(src|href)="https?:' "$html"; then
    echo "$page: the page loads something from the network"; exit 1
  fi
  plots=$(grep -o '<svg class="plot"' "$html" | wc -l)
  body=$("${chrome[@]}" --dump-dom "file://$html" 2>/dev/null | grep -o '<body[^>]*>')
  echo "$page: $plots plot(s) in the file; browser: $body"
  [[ $plots -gt 0 ]] || { echo "$page: no plot"; exit 1; }
  [[ $body == *"data-plots=\"$plots\""* ]] || { echo "$page: the browser found another count"; exit 1; }
  [[ $body == *"data-plots-drawn=\"$plots\""* ]] || { echo "$page: not every plot drew all its marks"; exit 1; }
  "${chrome[@]}" --screenshot="$work/$page.png" --window-size=1280,3000 "file://$html" >/dev/null 2>&1
  [[ -s $work/$page.png ]] || { echo "$page: no screenshot"; exit 1; }
  echo "$page: screenshot $work/$page.png"
done
