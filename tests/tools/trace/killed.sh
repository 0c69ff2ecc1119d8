#!/bin/sh
# A launcher killed by SIGKILL leaves its ranks' parts (FILE.parts.PID) unmerged:
# `courier trace` reads that directory all the same. trace_ring's rings are
# traced with 16-record buffers (written out as they fill), rank 1 then hangs
# (hang mode), the launcher is killed, and the report must count the rings'
# MPI_Recv calls (20 per rank) and say that it merged the parts.
#   killed.sh COURIER TRACE_RING
set -u
courier=$1 prog=$2
d=$(mktemp -d) || exit 1
trap 'rm -rf "$d"' EXIT
cd "$d" || exit 1
COURIER_TRACE_BUF=16 "$courier" run -n 3 --hang-timeout 60 --trace "$d/t.json" "$prog" hang \
    >/dev/null 2>&1 &
pid=$!
rings() { # the parts hold the rings' receives (the buffers are written as they fill)
    parts=$(ls -d "$d"/t.json.parts.* 2>/dev/null)
    [ -n "$parts" ] && "$courier" trace "$parts" 2>/dev/null | grep -Eq "^  MPI_Recv +60 "
}
i=0
until [ $i -ge 150 ] || rings; do
    sleep 0.2
    i=$((i + 1))
done
kill -9 $pid
wait $pid 2>/dev/null
parts=$(ls -d "$d"/t.json.parts.* 2>/dev/null)
[ -n "$parts" ] || { echo "killed: no parts directory was left"; exit 1; }
"$courier" trace "$parts" >"$d/out" 2>"$d/err"
grep -q "is a parts directory that its launcher did not merge: merged 3 ranks' parts" "$d/err" ||
    { echo "killed: no word of the merge"; cat "$d/err"; exit 1; }
grep -Eq "^  MPI_Recv +60 " "$d/out" || { echo "killed: the rings' receives are not counted"; cat "$d/out" "$d/err"; exit 1; }
echo "killed: the parts of a killed launcher read ($(grep -c . "$d/out") report lines)"
