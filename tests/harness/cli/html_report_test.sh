#!/usr/bin/env bash
# html_report_test.sh SYNK_BENCH SOURCE_DIR WORK_DIR
# Loads synk-bench's HTML reports (a train run with a split step, a collectives run, a train run
# with a compare and its experiment's history over two commits' runs, a train run with a
# straggler and its step timeline) and every page of the static site over their database
# (`synk-bench site`) in headless Chromium: every <svg class="plot"> must have drawn all its data
# marks (the page's own check writes the counts into <body>), nothing may be written to the
# browser's console, and a screenshot of each report is saved in WORK_DIR. A report leads with
# its headline and lists only the versions there are; only a run with rank times has a timeline.
# Skips (exit 77) without Chromium (Debian: apt-get install chromium; scripts/install-deps).
set -euo pipefail
bench=$1 src=$2 work=$3
# Runs a command; on failure says which one, its exit status and its output (a failure on a busy
# CI machine must name its cause).
must() {
  local out rc=0
  out=$("$@" 2>&1) || rc=$?
  if [[ $rc -ne 0 ]]; then
    printf 'html_report_test: exit %d from: %s\n%s\n' "$rc" "$*" "$out" >&2
    exit 1
  fi
}
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [[ -z $browser ]]; then
  echo "SKIPPED: no chromium on PATH (scripts/install-deps installs it)"
  exit 77
fi
rm -rf "$work" && mkdir -p "$work"
db=$work/r.db
must "$bench" run "$src/tests/harness/experiments/toy_scaling.ini" --db "$db" \
  --set "experiment.step=grad, all_reduce(grad), update" --set experiment.repetitions=2
must "$bench" collectives --op all_reduce,all_gather --backend cpu --ranks 1,2 -b 1K -e 256K -f 4 \
  -n 4 -w 1 --db "$db"
must "$bench" report 1 --html "$work/train.html" --db "$db"
must "$bench" report 2 --html "$work/collectives.html" --db "$db"
must "$bench" run "$src/tests/harness/experiments/toy_scaling.ini" --db "$db" \
  --set "experiment.step=grad, all_reduce(grad), update" --set experiment.repetitions=2
must "$bench" report 3 --html "$work/regression.html" --db "$db" --compare 1 --history
grep -q '<section id="compare">' "$work/regression.html"
grep -q '<section id="history">' "$work/regression.html"
grep -q '<div class="headline"><p>2 CPU ranks: [0-9]* % efficiency' "$work/train.html" ||
  { echo "train: no headline with the efficiency"; exit 1; }
grep -q '<div class="headline"><p>all_reduce, 2 ranks: CPU busbw' "$work/collectives.html" ||
  { echo "collectives: no headline with the busbw"; exit 1; }
if grep -q '<dd> / \| / </dd>' "$work/train.html"; then echo "train: an empty version"; exit 1; fi
# Step times, rank by rank (experiment.step_times; a split step records none): a run whose rank 1
# sleeps 3 ms a step gets the step timeline with the straggler marked; the others get none.
must "$bench" run "$src/tests/harness/experiments/straggler.ini" --db "$db"
must "$bench" report 4 --html "$work/straggler.html" --db "$db"
grep -q '<section id="timeline">' "$work/straggler.html" || { echo "straggler: no timeline"; exit 1; }
grep -q '<text class="lane marked"[^>]*>rank 1 (straggler)</text>' "$work/straggler.html" ||
  { echo "straggler: rank 1 not marked in the timeline"; exit 1; }
grep -q '<tr class="straggler"><td>1</td>' "$work/straggler.html" ||
  { echo "straggler: rank 1 not marked in the medians table"; exit 1; }
if grep -q 'id="timeline' "$work/train.html"; then echo "train: a timeline without rank times"; exit 1; fi
must "$bench" site "$work/site" --db "$db"
# The browser is a tool here, not what is tested: on 2 busy cores it may start slowly or crash;
# it gets a generous deadline and a second try, and a failure says it was the browser.
chrome=(timeout 300 "$browser" --headless --no-sandbox --disable-gpu --no-first-run
        --user-data-dir="$work/profile")
# dump URL: the page's <body ...> tag after its scripts ran; fails naming them when the page wrote
# to the console (a script error, a refused load: the pages write nothing there).
dump() {
  local body log=$work/console.log
  for try in 1 2; do
    body=$("${chrome[@]}" --enable-logging=stderr --v=0 --dump-dom "$1" 2>"$log" |
             grep -o '<body[^>]*>' || true)
    if [[ -n $body ]]; then
      if grep -q ':CONSOLE' "$log"; then
        echo "html_report_test: $1 wrote to the console:" >&2
        grep ':CONSOLE' "$log" >&2
        return 1
      fi
      echo "$body"
      return 0
    fi
    echo "html_report_test: the browser gave no page for $1 (try $try)" >&2
  done
  return 1
}
for page in train collectives regression straggler; do
  html=$work/$page.html
  if grep -Eq '(src|href)="https?:' "$html"; then
    echo "$page: the page loads something from the network"; exit 1
  fi
  plots=$(grep -o '<svg class="plot"' "$html" | wc -l)
  body=$(dump "file://$html") || { echo "$page: no clean page from the browser (above)"; exit 1; }
  echo "$page: $plots plot(s) in the file; browser: $body"
  [[ $plots -gt 0 ]] || { echo "$page: no plot"; exit 1; }
  [[ $body == *"data-plots=\"$plots\""* ]] || { echo "$page: the browser found another count"; exit 1; }
  [[ $body == *"data-plots-drawn=\"$plots\""* ]] || { echo "$page: not every plot drew all its marks"; exit 1; }
  for try in 1 2; do
    "${chrome[@]}" --screenshot="$work/$page.png" --window-size=1400,3000 "file://$html" \
      >/dev/null 2>&1 || true
    [[ -s $work/$page.png ]] && break
  done
  [[ -s $work/$page.png ]] || { echo "$page: no screenshot (the browser failed twice)"; exit 1; }
  echo "$page: screenshot $work/$page.png"
done
for html in "$work"/site/*.html; do
  page=site/$(basename "$html")
  if grep -Eq '(src|href)="https?:' "$html"; then
    echo "$page: the page loads something from the network"; exit 1
  fi
  for target in $( (grep -o 'href="[^"]*"' "$html" || true) | sed 's/href="//; s/"$//' | sort -u); do
    [[ -f $work/site/$target ]] || { echo "$page: a link to $target, which is not there"; exit 1; }
  done
  plots=$( (grep -o '<svg class="plot"' "$html" || true) | wc -l)
  body=$(dump "file://$html") || { echo "$page: no clean page from the browser (above)"; exit 1; }
  echo "$page: $plots plot(s); browser: $body"
  [[ $body == *"data-plots=\"$plots\""* ]] || { echo "$page: the browser found another count"; exit 1; }
  [[ $body == *"data-plots-drawn=\"$plots\""* ]] || { echo "$page: not every plot drew all its marks"; exit 1; }
done
