#!/bin/sh
# A larger trace (8 ranks, 100000 messages, 400013 lines) from gen.sh, in time order and
# rank by rank: both reports must be the same, with the totals gen.sh's pattern gives.
#   large.sh COURIER WORKDIR
set -u
courier=$1 work=$2
here=$(cd "$(dirname "$0")" && pwd) || exit 1
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
sh "$here/gen.sh" 8 12500 interleaved >a.json && sh "$here/gen.sh" 8 12500 by-rank >b.json || exit 1
"$courier" trace a.json >a.out || { echo "courier trace a.json failed"; exit 1; }
"$courier" trace b.json | sed 's/^Trace b.json$/Trace a.json/' >b.out
fail=0
diff -u a.out b.out || { echo "the two orders give different reports"; fail=1; }
for line in \
    "  events   400009 read, 0 lost" \
    "     5     125.000 ms      75.000 ms   60.0      50.000 ms   40.0      12.500 ms   10.0" \
    "  MPI_Sendrecv     100000     400.000 ms       4.000 us   100.0     100.000 ms     6.1 MiB" \
    "  MPI_Send     100000     200.000 ms" \
    "Matching by message id: 100000 sent, 100000 received, 100000 matched; unmatched: 0 sent, 0 received" \
    "  100000 messages, 50.000 ms in all"; do
    grep -qxF "$line" a.out || { echo "no line: $line"; fail=1; }
done
[ $fail = 0 ] && rm -f a.json b.json
exit $fail
