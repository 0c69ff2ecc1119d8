#!/bin/bash
# How the messages of tests/mpi/waited.c went, from the job's trace:
#   waited.sh push|read COURIER PROG
# push: the 65536-, 98304-, 73728-, 90112-, 106496- and 114688-byte messages
# (their senders waited for them) were pushed, the 81920-, 262144- and
# 57344-byte ones read by single copy; read (ranks outnumber CPUs): none pushed. Exit 77 where this machine
# refuses single copy (the 262144 bytes were pushed too).
set -u
want=$1 courier=$2 prog=$3
. "$(dirname "$0")/traced_job.sh"
traced_job 2 "$courier" "$prog" '^waited ok$' 2
how() { msgs_of "$1"; }
fail=0
for n in 65536 98304 81920 262144 73728 90112 106496 114688 57344; do
    h=$(how $n | tr '\n' ' ')
    echo "$n bytes: ${h:-missing}"
    [ "$(how $n | wc -l)" -eq 1 ] || { echo "FAIL: one message of $n bytes expected in the trace"; exit 1; }
done
[ "$(how 262144)" = pushed ] && { echo "SKIP: no single copy on this machine"; exit 77; }
for n in 65536 98304 81920 262144 73728 90112 106496 114688 57344; do
    case $want:$n in
    push:65536 | push:98304 | push:73728 | push:90112 | push:106496 | push:114688) expect=pushed ;;
    *) expect=read ;;
    esac
    h=$(how $n)
    if [ $expect = pushed ] && [ "$h" != pushed ]; then
        echo "FAIL: $n bytes went $h: its sender waited for it, so it should be pushed"
        fail=1
    elif [ $expect = read ] && [ "$h" = pushed ]; then
        echo "FAIL: $n bytes were pushed, should be read by single copy"
        fail=1
    fi
done
[ $fail -eq 0 ] && echo "waited trace ok"
exit $fail
