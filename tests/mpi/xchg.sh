#!/bin/bash
# How the messages of tests/mpi/xchg.c went, from the job's trace:
#   xchg.sh push|read COURIER PROG
# push: the collectives' 256 KiB blocks (MPI_Allgather, MPI_Iallgather: two
# each) were pushed through the transport, the MPI_Sendrecv's 300,000 bytes
# read by single copy; read (ranks outnumber CPUs): none was pushed. Exit 77
# where this machine refuses single copy (the Sendrecv's were pushed too).
set -u
want=$1 courier=$2 prog=$3
. "$(dirname "$0")/traced_job.sh"
traced_job 2 "$courier" "$prog" '^xchg ok$' 2
how() { msgs_of "$1" | grep -c "^$2\$"; }
sr_pushed=$(how 300000 pushed) sr_all=$(how 300000 '[a-z-]*')
blk_pushed=$(how 262144 pushed) blk_all=$(how 262144 '[a-z-]*')
echo "sendrecv: $sr_pushed of $sr_all pushed; blocks: $blk_pushed of $blk_all pushed"
[ "$sr_all" -eq 2 ] && [ "$blk_all" -eq 4 ] || { echo "FAIL: messages missing from the trace"; exit 1; }
[ "$sr_pushed" -eq 0 ] || { echo "SKIP: no single copy on this machine"; exit 77; }
case $want in
push) [ "$blk_pushed" -eq 4 ] || { echo "FAIL: an exchange's block was not pushed"; exit 1; } ;;
read) [ "$blk_pushed" -eq 0 ] || { echo "FAIL: a block was pushed with ranks outnumbering CPUs"; exit 1; } ;;
esac
echo "xchg trace ok"
