#!/usr/bin/env bash
# expect.sh CODE PATTERN [--fresh FILE]... -- COMMAND...
# Runs COMMAND; passes when it exits with CODE and its output (stdout and stderr) has a line
# matching the extended regular expression PATTERN. Prints the output either way. --fresh
# removes a database (with its -wal and -shm files) first, so every run starts from none.
set -u
code=$1 pattern=$2
shift 2
while [[ $1 == --fresh ]]; do
  rm -f "$2" "$2-wal" "$2-shm"
  shift 2
done
shift  # --
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if [[ $rc -ne $code ]]; then
  echo "expect.sh: exit code $rc, expected $code" >&2
  exit 1
fi
if ! grep -Eq -- "$pattern" <<<"$out"; then
  echo "expect.sh: no line matches: $pattern" >&2
  exit 1
fi
