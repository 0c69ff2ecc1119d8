#!/bin/sh
# iWarp's bursts (src/net/iwarp.c): a message alone in the network takes the closed form
# instead of five events per word and hop. Checked with the real `courier netsim`:
#  - where messages travel alone (echo sweeps, a pathway's messages one after another) the
#    report is the word-by-word run's to the last digit (COURIER_IWARP_WORDS=1), and the
#    bursts' run takes far fewer events;
#  - where messages are wired while a burst runs (light random traffic of long messages, so
#    bursts are undone), every message is delivered, the latencies stay within 1 us of the
#    word-by-word run's, and two runs give the same report.
# usage: iwarp_bursts.sh SCRATCH COURIER
out=$1 courier=$2
fail=0
# A netsim that fails leaves "$out/failed" (run's output is read in a subshell)
# and says so: two empty reports would compare equal.
rm -f "$out/failed"
run() {
    o=$("$courier" netsim --machine iwarp "$@" --csv 2>"$out/err") || {
        s=$?
        echo "FAIL: courier netsim --machine iwarp $* exited with status $s: $(tail -1 "$out/err")" >&2
        : >"$out/failed"
    }
    printf '%s\n' "$o" | tail -1
}
same() { # description args...
    what=$1; shift
    a=$(COURIER_IWARP_WORDS=1 run "$@") b=$(run "$@")
    [ -n "$a" ] && [ "$a" = "$b" ] || { echo "FAIL $what: words [$a] bursts [$b]"; fail=1; }
}
same "echo 64 KiB, 1-8 hops" --mesh 8x8 --pattern echo --sizes 4,1000,65536 --hops 1,3,8
same "echo 256 KiB on a mesh" --mesh 4x4 --mesh-only --pattern echo --size 262144 --count 3
same "exchange" --mesh 4x4 --pattern exchange --size 100000 --count 4
# the bursts' run must be much cheaper: compare wall time of a long echo
t0=$(date +%s%N); COURIER_IWARP_WORDS=1 run --mesh 8x8 --pattern echo --size 1048576 --count 4 >"$out/w.txt"
t1=$(date +%s%N); run --mesh 8x8 --pattern echo --size 1048576 --count 4 >"$out/b.txt"; t2=$(date +%s%N)
cmp -s "$out/w.txt" "$out/b.txt" || { echo "FAIL echo 1 MiB: $(cat "$out/w.txt") / $(cat "$out/b.txt")"; fail=1; }
[ $(((t2 - t1) * 5)) -lt $((t1 - t0)) ] ||
    echo "note: bursts took $(((t2 - t1) / 1000000)) ms, words $(((t1 - t0) / 1000000)) ms (timing is not asserted)"
# undone bursts: deterministic, all delivered, latencies close to the word-by-word run's
for load in 0.002 0.02; do
    args="--mesh 4x4 --pattern uniform --size 300000 --count 8 --load $load"
    a=$(COURIER_IWARP_WORDS=1 run $args) b=$(run $args) c=$(run $args)
    [ "$b" = "$c" ] || { echo "FAIL load $load: two runs differ: [$b] [$c]"; fail=1; }
    echo "$a
$b" | awk -F, -v l="$load" '
        NR == 1 { m = $7; mx = $11; n = $6; u = $16 }
        NR == 2 { d1 = $7 - m; d2 = $11 - mx; if (d1 < 0) d1 = -d1; if (d2 < 0) d2 = -d2
                  if ($6 != n || $16 != 0 || u != 0 || d1 > 1 || d2 > 1) {
                      print "FAIL load " l ": words " m " us mean, " mx " max, " n " msgs; bursts " $7 ", " $11 ", " $6; exit 1 } }' ||
        fail=1
done
[ -e "$out/failed" ] && fail=1
[ $fail = 0 ] && echo "ok: bursts"
exit $fail
