#!/bin/sh
# Runs `courier trace ARGS...` in this directory (so the fixtures' names print as given)
# and checks its exit status, its stdout and its stderr.
#   check.sh COURIER STATUS OUT ERR ARGS...
# OUT: a file stdout must equal, or - (not checked). ERR: the one line stderr must be,
# "" (stderr empty), or - (not checked).
set -u
courier=$1 want=$2 out=$3 err=$4
shift 4
cd "$(dirname "$0")" || exit 1
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
"$courier" trace "$@" >"$tmp/out" 2>"$tmp/err"
rc=$?
fail=0
if [ "$rc" != "$want" ]; then
    echo "exit status $rc, wanted $want"
    fail=1
fi
if [ "$out" != - ] && ! diff -u "$out" "$tmp/out"; then
    echo "stdout differs from $out (above: - wanted, + got)"
    fail=1
fi
if [ "$err" != - ]; then
    if [ -n "$err" ]; then printf '%s\n' "$err" >"$tmp/want_err"; else : >"$tmp/want_err"; fi
    if ! diff -u "$tmp/want_err" "$tmp/err"; then
        echo "stderr differs (above: - wanted, + got)"
        fail=1
    fi
fi
exit $fail
