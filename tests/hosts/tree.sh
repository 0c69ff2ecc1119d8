#!/bin/bash
# hosts_tree_4: 8 ranks on four pretend hosts (NS-1..4, 2 each), the agents a
# tree two wide (the launcher starts hosts 1-2, host 1 starts 3-4). Each rank
# runs nx_stress (its traffic crosses the tree; rank 0 prints the total), then
# prints 1..500: the job must exit 0, and every rank's lines must come back
# labelled [rank], all of them, in order.
#   tree.sh COURIER NS NX_STRESS
set -u
courier=$1 ns=$2 stress=$3
out=$(mktemp)
trap 'rm -f "$out"' EXIT
COURIER_TREE_FANOUT=2 "$courier" run --label --hosts "$ns-1:2,$ns-2:2,$ns-3:2,$ns-4:2" \
    --rsh "ip netns exec" -n 8 sh -c '"$0" 2000 && seq 1 500' "$stress" >"$out"
status=$?
cat "$out"
fail=0
[ $status -eq 0 ] || { echo "FAIL: the job exited with status $status, wanted 0"; fail=1; }
grep -qx '\[0\] stress: 16000 messages among 8 nodes, all intact and in order' "$out" ||
    { echo "FAIL: no line of rank 0's total"; fail=1; }
want=$(seq 1 500)
for r in 0 1 2 3 4 5 6 7; do
    got=$(sed -n "s/^\[$r\] \([0-9][0-9]*\)$/\1/p" "$out")
    [ "$got" = "$want" ] || { echo "FAIL: rank $r's lines 1..500 are not all there, labelled, in order"; fail=1; }
done
[ $fail -eq 0 ] && echo "tree: 8 ranks on 4 hosts, every rank's 500 lines labelled and in order"
exit $fail
