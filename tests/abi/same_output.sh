#!/bin/bash
# One program, built against courier's mpi.h and against the MPI-5 ABI's
# (tests/abi/CMakeLists.txt), run under courier run: the two must print the
# same lines, and each must succeed.
#   same_output.sh COURIER NP PROG_COURIER PROG_ABI
set -u -o pipefail
courier=$1 np=$2 native=$3 abi=$4
a=$(mktemp) b=$(mktemp)
trap 'rm -f "$a" "$b"' EXIT
"$courier" run -n "$np" --timeout 120 "$native" >"$a" || { echo "FAIL: courier's build failed"; exit 1; }
"$courier" run -n "$np" --timeout 120 "$abi" >"$b" || { echo "FAIL: the ABI build failed"; exit 1; }
if ! diff "$a" "$b"; then
    echo "FAIL: the ABI build printed otherwise (above: < courier's build, > the ABI's)"
    exit 1
fi
lines=$(wc -l <"$a")
echo "abi same output: $np ranks, $lines lines ok"
