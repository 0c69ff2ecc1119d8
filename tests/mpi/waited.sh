#!/bin/bash
# How the messages of tests/mpi/waited.c went, from the job's trace:
#   waited.sh COURIER PROG
# Every one of them (65536 to 262144 bytes, whatever its sender did while
# waiting for it) is read by single copy, never pushed through the transport:
# on one host the read won at every size, with the sender waiting or not
# (docs/engine.md). Exit 77 where this machine refuses single copy.
set -u
courier=$1 prog=$2
. "$(dirname "$0")/traced_job.sh"
traced_job 2 "$courier" "$prog" '^waited ok$' 2
sizes="65536 98304 81920 262144 73728 90112 106496 114688 57344"
for n in $sizes; do
    h=$(msgs_of $n | tr '\n' ' ')
    echo "$n bytes: ${h:-missing}"
    [ "$(msgs_of $n | wc -l)" -eq 1 ] || { echo "FAIL: one message of $n bytes expected in the trace"; exit 1; }
done
[ "$(msgs_of 262144)" = pushed ] && { echo "SKIP: no single copy on this machine"; exit 77; }
fail=0
for n in $sizes; do
    if [ "$(msgs_of $n)" = pushed ]; then
        echo "FAIL: $n bytes were pushed, should be read by single copy"
        fail=1
    fi
done
[ $fail -eq 0 ] && echo "waited trace ok"
exit $fail
