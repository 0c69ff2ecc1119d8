#!/bin/bash
# How the messages of tests/mpi/xchg.c went, from the job's trace:
#   xchg.sh push|read COURIER PROG
# push: the collectives' 32 KiB blocks (MPI_Allgather, MPI_Iallgather: two
# each) were pushed through the transport, their 256 KiB blocks and 512 KiB
# halves (MPI_Allgather, MPI_Allreduce) read, the point-to-point exchanges'
# messages (MPI_Sendrecv's 300,000 bytes, MPI_Isend's 270,000) read whole by
# single copy, the one-way 290,000 bytes cooperatively; read (ranks outnumber
# CPUs): none was pushed, nothing cooperative. Exit 77 where this machine
# refuses single copy (the Sendrecv's were pushed too).
set -u
want=$1 courier=$2 prog=$3
. "$(dirname "$0")/traced_job.sh"
traced_job 2 "$courier" "$prog" '^xchg ok$' 2
how() { msgs_of "$1" | grep -c "^$2\$"; }
sr_pushed=$(how 300000 pushed) sr_all=$(how 300000 '[a-z-]*')
blk_pushed=$(how 32768 pushed) blk_all=$(how 32768 '[a-z-]*')
big_pushed=$(($(how 262144 pushed) + $(how 524288 pushed))) big_all=$(($(how 262144 '[a-z-]*') + $(how 524288 '[a-z-]*')))
whole=$(($(how 300000 single-copy) + $(how 270000 single-copy))) nb_all=$(how 270000 '[a-z-]*')
oneway=$(msgs_of 290000)
echo "sendrecv: $sr_pushed of $sr_all pushed; exchanges read whole: $whole of 4;" \
    "one way: $oneway; blocks: $blk_pushed of $blk_all pushed; long: $big_pushed of $big_all pushed"
[ "$sr_all" -eq 2 ] && [ "$nb_all" -eq 2 ] && [ "$blk_all" -eq 4 ] && [ "$big_all" -ge 4 ] &&
    [ -n "$oneway" ] ||
    { echo "FAIL: messages missing from the trace"; exit 1; }
[ "$sr_pushed" -eq 0 ] || { echo "SKIP: no single copy on this machine"; exit 77; }
[ "$whole" -eq 4 ] ||
    { echo "FAIL: an exchange's message was not read whole by single copy"; exit 1; }
[ "$big_pushed" -eq 0 ] ||
    { echo "FAIL: a collective's exchange of 64 KiB or more was pushed, not read"; exit 1; }
case $want in
push)
    [ "$blk_pushed" -eq 4 ] || { echo "FAIL: an exchange's block was not pushed"; exit 1; }
    [ "$oneway" = cooperative ] || { echo "FAIL: the one-way message went $oneway"; exit 1; }
    ;;
read)
    [ "$blk_pushed" -eq 0 ] || { echo "FAIL: a block was pushed with ranks outnumbering CPUs"; exit 1; }
    [ "$oneway" = single-copy ] || { echo "FAIL: the one-way message went $oneway"; exit 1; }
    ;;
esac
echo "xchg trace ok"
