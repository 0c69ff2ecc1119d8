#!/bin/sh
# courier run --check with --trace: the report is a mark in the trace.
#   trace.sh COURIER PROGRAM ARG: runs PROGRAM ARG on 3 ranks with --check and
#   --trace, wants status 98 (a check report), then prints courier trace's
#   summary of the trace (which lists the mark among the calls).
courier=$1 prog=$2 arg=$3
d=$(mktemp -d) || exit 1
trap 'rm -rf "$d"' EXIT
"$courier" run -n 3 --timeout 60 --check --trace "$d/t.json" "$prog" "$arg" 2>"$d/err"
rc=$?
if [ $rc != 98 ]; then
    cat "$d/err"
    echo "FAIL: status $rc, wanted 98 (a check report)"
    exit 1
fi
"$courier" trace "$d/t.json"
