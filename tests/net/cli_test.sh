#!/bin/sh
# CLI checks for `courier netsim`: $1 = scratch dir, the rest = the command (e.g. courier netsim).
out=$1; shift
fail=0
t() { # expect-status description args...
    want=$1; what=$2; shift 2
    "$@" > "$out/cli.out" 2> "$out/cli.err"; got=$?
    if [ "$got" != "$want" ]; then echo "FAIL $what: exit $got, want $want"; cat "$out/cli.err"; fail=1; fi
}
one_line_err() {
    n=$(wc -l < "$out/cli.err")
    if [ "$n" != 1 ]; then echo "FAIL $1: error is $n lines"; cat "$out/cli.err"; fail=1; fi
}
t 2 "node outside" "$@" --machine ipsc2 --dim 3 --pattern echo --src 0 --dst 9; one_line_err node
t 2 "dim 8" "$@" --machine ipsc2 --dim 8 --pattern echo; one_line_err dim
grep -q "over 7" "$out/cli.err" || { echo "FAIL dim message"; fail=1; }
t 2 "mesh 8x" "$@" --machine iwarp --mesh 8x --pattern uniform; one_line_err mesh
t 2 "mesh 8x8x2" "$@" --machine iwarp --mesh 8x8x2 --pattern uniform; one_line_err mesh3
t 2 "negative load" "$@" --machine cs2 --nodes 16 --pattern uniform --load -0.5; one_line_err load
t 2 "unknown machine" "$@" --machine cray --pattern echo; one_line_err machine
t 0 "help" "$@" --help
# echo sweep on the iPSC/2: 1 hop vs 5 hops; the 0-byte row must be about 350 us
t 0 "echo" "$@" --machine ipsc2 --dim 5 --pattern echo --sizes 0,1024 --hops 1,5 --csv
lines=$(grep -c '^ipsc2,echo' "$out/cli.out")
[ "$lines" = 4 ] || { echo "FAIL echo rows: $lines"; fail=1; }
awk -F, '$1=="ipsc2" && $3==0 && $4==1 { if ($7 < 330 || $7 > 370) { print "FAIL 0-byte latency " $7; exit 1 } }' "$out/cli.out" || fail=1
# a load sweep gives one row per load, latency grows with load
t 0 "sweep" "$@" --machine cs2 --nodes 64 --pattern uniform --load 0.1,0.9 --count 40 --csv
awk -F, 'NR==2{a=$7} NR==3{b=$7} END{ if (!(b > a)) { print "FAIL latency not rising with load", a, b; exit 1 } }' "$out/cli.out" || fail=1
for p in transpose shift bit-reversal hotspot neighbour all-to-all broadcast; do
    t 0 "pattern $p" "$@" --machine sp2 --nodes 16 --pattern $p --count 3 --size 512
    grep -q "$p" "$out/cli.out" || { echo "FAIL no row for $p"; fail=1; }
done
t 0 "iwarp" "$@" --machine iwarp --mesh 4x4 --pattern uniform --count 5 --size 256 --sw hw
t 0 "routing" "$@" --machine cs2 --nodes 64 --pattern shift --route topswitch --count 5
# --plot: works with gnuplot, says so clearly without it
if command -v gnuplot >/dev/null 2>&1; then
    t 0 "plot" "$@" --machine ipsc2 --dim 5 --pattern echo --sizes 0,100,1024 --hops 1,5 --plot "$out/echo.png"
    [ -s "$out/echo.png" ] || { echo "FAIL no png"; fail=1; }
fi
PATH=/nonexistent t 1 "plot without gnuplot" "$@" --machine ipsc2 --dim 3 --pattern echo --plot "$out/x.png"
grep -q "gnuplot is not installed" "$out/cli.err" || { echo "FAIL no gnuplot message"; cat "$out/cli.err"; fail=1; }
[ $fail = 0 ] && echo "cli ok"
exit $fail
