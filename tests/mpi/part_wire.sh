#!/bin/bash
# tests/mpi/part_wire.c, and from the job's trace how its range- and
# list-marked operation travelled: part_wire.sh NP COURIER PROG
# Each of its 3 rounds sends the chunks that one MPI_Pready_range (partitions
# 0..11) and one MPI_Pready_list (13..23) complete as one message each:
# 786432 and 720896 bytes, 3 of each in the trace.
set -u
np=$1 courier=$2 prog=$3
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
"$courier" run -n "$np" --timeout 120 --trace "$d/t.json" "$prog" >"$d/out" 2>&1
status=$?
cat "$d/out"
[ $status -eq 0 ] || { echo "FAIL: the job exited with status $status"; exit 1; }
grep -q '^partitioned wire ok' "$d/out" || { echo "FAIL: rank 0 did not say ok"; exit 1; }
count() { grep '"ph":"f",[^}]*"cat":"msg"' "$d/t.json" | grep -c "\"bytes\":$1,"; }
range=$(count 786432) list=$(count 720896)
echo "runs: $range messages of 786432 bytes (a range), $list of 720896 (a list)"
[ "$range" -eq 3 ] && [ "$list" -eq 3 ] || { echo "FAIL: each run should be one message per round"; exit 1; }
echo "part wire runs ok"
