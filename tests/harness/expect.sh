#!/usr/bin/env bash
# expect.sh CODE PATTERN -- COMMAND...
# Runs COMMAND; passes when it exits with CODE and its output (stdout and stderr) has a line
# matching the extended regular expression PATTERN. Prints the output either way.
set -u
code=$1 pattern=$2
shift 3
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
