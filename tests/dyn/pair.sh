#!/bin/sh
# Two jobs started apart: a server of NS ranks and a client of NC ranks
# (tests/dyn/pair.c), the client DELAY seconds after the server (default 0),
# the server with --hang-timeout 1: waiting for a client is no deadlock. The
# client's status is the script's once the server has ended well too; a
# client that failed takes its server down (by pid: the server's accept would
# wait for a client for ever).
#   pair.sh COURIER PROGRAM NS NC NAME [DELAY]
courier=$1 prog=$2 ns=$3 nc=$4 name=$5 delay=${6:-0}
"$courier" run --timeout 120 --hang-timeout 1 -n "$ns" "$prog" server "$name" &
s=$!
sleep "$delay"
"$courier" run --timeout 120 -n "$nc" "$prog" client "$name"
c=$?
[ $c -eq 0 ] || kill -TERM $s 2>/dev/null
wait $s || exit 1
exit $c
