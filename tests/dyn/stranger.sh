#!/bin/sh
# A process without the user's key cannot connect: a server job (1 rank)
# writes its port to a file; a client that holds another key (its
# XDG_RUNTIME_DIR, so its user directory, is another) must be refused
# (MPI_ERR_PORT, both ends say why); then a client with the key connects, and
# the server ends well.
#   stranger.sh COURIER PROGRAM NAME
courier=$1 prog=$2 name=$3
dir=$(mktemp -d) other=$(mktemp -d)
trap 'rm -rf "$dir" "$other"' EXIT
chmod 700 "$other"
DYN_PORT_FILE=$dir/port
export DYN_PORT_FILE
"$courier" run --timeout 120 -n 1 "$prog" server "$name" &
s=$!
while [ ! -s "$DYN_PORT_FILE" ]; do
    kill -0 $s 2>/dev/null || exit 1
    sleep 0.05
done
XDG_RUNTIME_DIR=$other "$courier" run --timeout 120 -n 1 "$prog" stranger "$name" ||
    { kill -TERM $s; wait $s; exit 1; }
"$courier" run --timeout 120 -n 1 "$prog" client "$name"
c=$?
[ $c -eq 0 ] || kill -TERM $s 2>/dev/null
wait $s || exit 1
exit $c
