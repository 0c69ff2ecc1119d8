#!/bin/bash
# tests/mpi/part_wire.c, and from the job's trace how its range- and
# list-marked operation travelled: part_wire.sh NP COURIER PROG
# Each of its 3 rounds sends the chunks that one MPI_Pready_range (partitions
# 0..11) and one MPI_Pready_list (13..23) complete as one message each:
# 786432 and 720896 bytes, 3 of each in the trace.
set -u
np=$1 courier=$2 prog=$3
. "$(dirname "$0")/traced_job.sh"
traced_job "$np" "$courier" "$prog" '^partitioned wire ok' 1
count() { msgs_of "$1" | wc -l; }
range=$(count 786432) list=$(count 720896)
echo "runs: $range messages of 786432 bytes (a range), $list of 720896 (a list)"
[ "$range" -eq 3 ] && [ "$list" -eq 3 ] || { echo "FAIL: each run should be one message per round"; exit 1; }
echo "part wire runs ok"
