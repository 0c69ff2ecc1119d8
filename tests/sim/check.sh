#!/bin/bash
# The simulated mode's checks (tests/sim/CMakeLists.txt): run a program under
# courier run --sim and compare what it measured in virtual time with the
# figure the seed papers give, within 5 %.
#   check.sh COURIER ECHO MODE...
#     echo MACHINE PROG_MODE NRANKS PEER SIZE FIGURE_US [MBPS_MIN]
#         one-way time of SIZE bytes (within 5 % of FIGURE_US, or with
#         MBPS_MIN: bandwidth at least MBPS_MIN and within 5 % of FIGURE_US
#         read as MB/s); PROG_MODE exchange: the total bandwidth of both
#         directions (MACHINE may carry keys: sp2,sw=mpl-fat)
#     gmdmodes MACHINE SIZE FIGURE_US  trains of GMD's modes (echo gmdmodes): a synchronous
#                                      send blocks its sender FIGURE_US (within 5 %), a
#                                      single-buffer one as long (its next send waits for
#                                      the rendezvous), a no-wait one under a tenth of it
#     hops MACHINE NRANKS NEAR FAR     0-byte one-way time to FAR within 5 % of NEAR's
#     torus MACHINE NRANKS NEAR FAR    0-byte one-way time to FAR the same as to NEAR
#                                      (as many hops: iwarp's wraparound)
#     same MACHINE NRANKS ARGS...      two runs give identical virtual times
#     reports MACHINE NRANKS RUNS ARGS...
#                                      RUNS runs print the same summary
#                                      and --sim-report, byte for byte but the wall time
#     modes MACHINE NRANKS ARGS...     the same, one run with the ranks as processes and
#                                      one as contexts of one process
#     output MACHINE NRANKS            with --label, every rank's lines of stdout and
#                                      stderr (the contexts program) carry its own rank,
#                                      its last line (no newline) too
#     anysrc MACHINE NRANKS            wildcard receives see the messages in the
#                                      order of their arrival (nearest first)
#     clock MACHINE FIGURE_US          a ping-pong timed with clock_gettime and
#                                      gettimeofday reads virtual time (within 5 %
#                                      of FIGURE_US, and as dclock does)
#     handler MACHINE                  an hrecv handler runs while its rank waits
#     flick MACHINE                    ... and in a loop of flicks
#                                      for a later message (at least 0.5 ms of
#                                      virtual time before that one), not while
#                                      masked, and once unmasked
#     hotspot MACHINE NRANKS HOT SIZE COUNT BG GAP_US
#                                      with HOT ranks flooding rank 0, the other
#                                      ranks' own traffic takes at least twice as
#                                      long as without them, and rank 0's link is
#                                      among the three busiest, carrying the most
#     spin MACHINE MS                  a loop that only reads dclock until MS ms have
#                                      passed ends (each read costs virtual time)
#     trace MACHINE                    --trace of a ping-pong is in virtual time: it says
#                                      so, ends where the simulated job ends, every
#                                      send lasts the modelled overhead, and two runs'
#                                      traces are identical
#     rma MACHINE                      an MPI put or get with its flush takes about a
#                                      round trip (1.5 to 3 one-way times), for both
#                                      window flavors alike, and the words arrive
#                                      (every message by one model: cs2,rma=nx2); cs2:
#                                      in one job the sends cost NX/2's and the puts
#                                      and gets the Elan DMA's (as with sw=dma)
#     bcast MACHINE NRANKS SIZE HW     cr_put_bcast of SIZE bytes to every rank: with
#                                      HW=yes (the CS-2's hardware broadcast, answers
#                                      combined) under half the time of the same puts
#                                      one by one to the others, and within 10 % of one
#                                      put (the same broadcast with 2 ranks); with HW=no
#                                      the same puts (within 1 %); the data arrive
#     stream MACHINE NRANKS WORDS DEPTH HOW FIGURE_MBPS
#                                      a stream of WORDS words from rank 0 to rank 1
#                                      (tests/sim/stream.c; queue depth DEPTH, 0 the
#                                      default; HOW word or block reads) moves them at
#                                      FIGURE_MBPS within 5 %, the same twice
#     putevent MACHINE SIZE FIGURE_US  a ping-pong of SIZE-byte cr_puts, each setting the
#                                      other rank's event (tests/sim/putevent.c): one way
#                                      within 5 % of FIGURE_US, the same twice
set -u
courier=$1 prog=$2 what=$3
shift 3
fail() { echo "FAIL: $*" >&2; exit 1; }
within() { awk -v a="$1" -v b="$2" 'BEGIN { d = (a - b) / b; if (d < 0) d = -d; exit !(d <= 0.05) }'; }
measure() { # machine mode nranks peer size -> "us MB/s" (one way; an exchange: per exchange, total)
    "$courier" run --timeout 120 --sim "$1,cpu=0" -n "$3" "$prog" "$2" "$4" 20 "$5" 2>/dev/null |
        awk '$1 == "echo" || $1 == "exchange" { print $3, $4 }'
}
one_way() { measure "$@" | awk '{ print $1 }'; }
case $what in
echo)
    m=$1 mode=$2 n=$3 peer=$4 size=$5 fig=$6 min=${7:-}
    read -r us mbps < <(measure "$m" "$mode" "$n" "$peer" "$size")
    [ -n "$us" ] || fail "no measurement from $m $mode"
    if [ -n "$min" ]; then
        echo "$m $mode $size bytes: $mbps MB/s (figure $fig, at least $min)"
        awk -v x="$mbps" -v m="$min" 'BEGIN { exit !(x >= m) }' || fail "$mbps MB/s < $min"
        within "$mbps" "$fig" || fail "$mbps MB/s not within 5 % of $fig"
    else
        echo "$m $mode $size bytes: $us us one way (figure $fig)"
        within "$us" "$fig" || fail "$us us not within 5 % of $fig"
    fi
    ;;
stream)
    m=$1 n=$2 words=$3 depth=$4 how=$5 fig=$6
    run_stream() {
        "$courier" run --timeout 120 --sim "$m,cpu=0" -n "$n" "$prog" "$words" "$depth" "$how" \
            2>/dev/null | awk '$1 == "stream" { print $4, $5 }'
    }
    read -r us mbps < <(run_stream)
    [ -n "$mbps" ] || fail "no measurement from $m stream"
    read -r us2 mbps2 < <(run_stream)
    echo "$m: $words words, depth $depth, $how reads: $us us, $mbps MB/s (figure $fig)"
    [ "$us" = "$us2" ] || fail "two runs differ: $us and $us2 us"
    within "$mbps" "$fig" || fail "$mbps MB/s not within 5 % of $fig"
    ;;
putevent)
    m=$1 size=$2 fig=$3
    run_put() {
        "$courier" run --timeout 120 --sim "$m,cpu=0" -n 2 "$prog" "$size" 20 2>/dev/null |
            awk '$1 == "putevent" { print $3 }'
    }
    us=$(run_put) us2=$(run_put)
    [ -n "$us" ] || fail "no measurement from $m putevent"
    echo "$m: a $size-byte put with its remote event, one way: $us us (figure $fig)"
    [ "$us" = "$us2" ] || fail "two runs differ: $us and $us2 us"
    within "$us" "$fig" || fail "$us us not within 5 % of $fig"
    ;;
gmdmodes)
    m=$1 size=$2 fig=$3
    read -r sync single nowait < <("$courier" run --timeout 120 --sim "$m,cpu=0" -n 2 "$prog" \
        gmdmodes 1 20 "$size" 2>/dev/null | awk '$1 == "gmdmodes" { print $3, $4, $5 }')
    [ -n "$nowait" ] || fail "no measurement from $m gmdmodes"
    echo "$m, $size bytes, per send: synchronous $sync us, single-buffer $single us, no-wait $nowait us"
    within "$sync" "$fig" || fail "synchronous $sync us not within 5 % of $fig"
    within "$single" "$sync" || fail "single-buffer $single us not within 5 % of synchronous $sync"
    awk -v a="$nowait" -v b="$sync" 'BEGIN { exit !(a < b / 10) }' ||
        fail "no-wait $nowait us is not under a tenth of synchronous $sync"
    ;;
hops)
    m=$1 n=$2 near=$3 far=$4
    a=$(one_way "$m" nx "$n" "$near" 0) b=$(one_way "$m" nx "$n" "$far" 0)
    echo "$m: 0 bytes to rank $near $a us, to rank $far $b us"
    [ -n "$a" ] && [ -n "$b" ] || fail "no measurement"
    within "$b" "$a" || fail "far $b us not within 5 % of near $a us"
    awk -v a="$a" -v b="$b" 'BEGIN { exit !(b > a) }' || fail "more hops should cost more"
    ;;
torus)
    m=$1 n=$2 near=$3 far=$4
    a=$(one_way "$m" nx "$n" "$near" 0) b=$(one_way "$m" nx "$n" "$far" 0)
    echo "$m: 0 bytes to rank $near $a us, to rank $far $b us"
    [ -n "$a" ] && [ -n "$b" ] || fail "no measurement"
    [ "$a" = "$b" ] || fail "rank $far ($b us) is not as near as rank $near ($a us): no wraparound"
    ;;
reports)
    m=$1 n=$2 runs=$3
    shift 3
    dir=$(mktemp -d)
    one() { # run i of the program with args
        local i=$1
        shift
        "$courier" run --timeout 120 --sim "$m,cpu=0" --sim-report "$dir/r$i.json" -n "$n" "$prog" "$@" \
            >/dev/null 2>"$dir/e$i" || echo "run $i failed" >>"$dir/failed"
    }
    for ((i = 1; i <= runs; i++)); do one "$i" "$@"; done
    [ -e "$dir/failed" ] && { cat "$dir/failed" >&2; rm -rf "$dir"; fail "a run failed"; }
    for ((i = 1; i <= runs; i++)); do
        # (not the lines wall time decides: the progress line every few seconds
        # of a slow run, and the hint of a rank that seems to compute alone)
        { grep '^courier:' "$dir/e$i" | grep -v -e '^courier: simulating ' \
              -e '^courier: rank [0-9]* computes without calling courier' |
              sed 's/ in [0-9.]* s;/ in (wall) s;/'
          sed 's/"wall_s": [0-9.]*,//' "$dir/r$i.json"; } >"$dir/all$i"
    done
    grep -q 'events' "$dir/all1" || { rm -rf "$dir"; fail "no summary"; }
    head -1 "$dir/all1"
    for ((i = 2; i <= runs; i++)); do
        if ! cmp -s "$dir/all1" "$dir/all$i"; then
            diff "$dir/all1" "$dir/all$i" | head >&2
            rm -rf "$dir"
            fail "runs 1 and $i differ"
        fi
    done
    rm -rf "$dir"
    echo "$runs runs: identical reports"
    ;;
same | modes)
    m=$1 n=$2
    shift 2
    r1=$(mktemp) r2=$(mktemp)
    s1=$m,cpu=0 s2=$m,cpu=0
    [ "$what" = modes ] && s1=$s1,ranks=processes s2=$s2,ranks=contexts
    "$courier" run --timeout 120 --sim "$s1" --sim-report "$r1" -n "$n" "$prog" "$@" >/dev/null 2>&1 || fail "run 1"
    "$courier" run --timeout 120 --sim "$s2" --sim-report "$r2" -n "$n" "$prog" "$@" >/dev/null 2>&1 || fail "run 2"
    strip() { sed 's/"wall_s": [0-9.]*,//' "$1"; }
    if ! diff <(strip "$r1") <(strip "$r2") >/dev/null; then
        diff <(strip "$r1") <(strip "$r2") | head >&2
        rm -f "$r1" "$r2"
        fail "two runs differ"
    fi
    grep -o '"virtual_us": [0-9.]*' "$r1"
    grep -q '"per_rank": \[' "$r1" || fail "no per-rank accounts"
    rm -f "$r1" "$r2"
    echo "two runs: identical virtual times"
    ;;
anysrc)
    m=$1 n=$2
    out=$("$courier" run --timeout 120 --sim "$m,cpu=0" -n "$n" "$prog" anysrc 2>/dev/null)
    order=$(echo "$out" | awk '$1 == "from" { printf "%s ", $2 }')
    echo "order of arrival at rank 0: $order"
    [ "$(echo "$order" | wc -w)" -eq $((n - 1)) ] || fail "expected $((n - 1)) messages"
    # on a hypercube, a message from rank r crosses popcount(r) channels
    echo "$order" | awk '{ prev = 0; for (i = 1; i <= NF; i++) { h = 0; for (x = $i; x; x = int(x / 2)) h += x % 2;
        if (h < prev) exit 1; prev = h } }' || fail "a farther rank's message came first"
    out2=$("$courier" run --timeout 120 --sim "$m,cpu=0" -n "$n" "$prog" anysrc 2>/dev/null)
    [ "$out" = "$out2" ] || fail "the order changed between runs"
    ;;
hotspot)
    m=$1 n=$2 hot=$3
    shift 3
    err=$(mktemp)
    hotbg=$("$courier" run --timeout 120 --sim "$m,cpu=0" -n "$n" "$prog" hotspot "$hot" "$@" 2>"$err" |
        awk '$1 == "background" { print $2 }')
    # the three busiest links, "NAME|BYTES", busiest first
    busiest=$(sed -n 's/^courier: *\(busiest links: \)\{0,1\}\([^:]*\): busy .*, \([0-9]*\) bytes$/\2|\3/p' "$err")
    rm -f "$err"
    base=$("$courier" run --timeout 120 --sim "$m,cpu=0" -n "$n" "$prog" hotspot 0 "$@" 2>/dev/null |
        awk '$1 == "background" { print $2 }')
    echo "background one-way time: $base us alone, $hotbg us beside the hot spot; busiest links:" $busiest
    [ -n "$hotbg" ] && [ -n "$base" ] || fail "no measurement"
    awk -v a="$hotbg" -v b="$base" 'BEGIN { exit !(a >= 2 * b) }' ||
        fail "the hot spot should slow the other traffic (tree saturation)"
    # Saturated, the hot senders' own links are held as long as rank 0's (their
    # packets wait in the tree): rank 0's is among the busiest, and carries most.
    top=$(echo "$busiest" | sort -t'|' -k2,2nr | head -1)
    [ "${top%|*}" = "node 0 down" ] ||
        fail "rank 0's link should be among the three busiest and carry the most bytes"
    ;;
clock)
    out=$("$courier" run --timeout 60 --sim "$1,cpu=0" -n 2 "$prog" clock 20 2>/dev/null)
    echo "$out"
    read -r cg gt dc < <(echo "$out" | awk '$1 == "clock" { print $2, $3, $4 }')
    [ -n "$dc" ] || fail "no report from the program"
    within "$cg" "$2" || fail "clock_gettime: $cg us, not within 5 % of $2"
    within "$gt" "$2" || fail "gettimeofday: $gt us, not within 5 % of $2"
    # (each read of a timer costs 25 ns of virtual time, timer=: the reads between
    # the two timers' own make them differ by a few ns per one-way trip)
    awk -v a="$cg" -v b="$dc" 'BEGIN { d = a - b; exit !(d < 0.005 && d > -0.005) }' ||
        fail "clock_gettime ($cg) and dclock ($dc) disagree"
    ;;
handler)
    out=$("$courier" run --timeout 60 --sim "$1,cpu=0" -n 2 "$prog" handler 2>/dev/null)
    echo "$out"
    read -r h c m n < <(echo "$out" | awk '$1 == "handler" { print $2, $4, $6, $8 }')
    [ -n "$n" ] || fail "no report from the program"
    [ "$n" = 2 ] || fail "$n handlers ran, expected 2"
    awk -v h="$h" -v c="$c" 'BEGIN { exit !(h + 500 < c) }' ||
        fail "the handler should run at its message, not when the wait ends"
    [ "$m" = "$h" ] || fail "a handler ran while masked"
    ;;
flick)
    out=$("$courier" run --timeout 60 --sim "$1,cpu=0" -n 2 "$prog" flick 2>&1) ||
        fail "$(echo "$out" | tail -2)"
    echo "$out" | grep '^flick'
    echo "$out" | grep -q '^flick handled 1 after' || fail "the handler did not run in a loop of flicks"
    ;;
spin)
    out=$("$courier" run --timeout 60 --sim "$1,cpu=0" -n 2 "$prog" spin "$2" 2>&1) ||
        fail "a loop that waits on the timer did not end: $(echo "$out" | tail -2)"
    us=$(echo "$out" | awk '$1 == "spin" { print $2 }')
    echo "waited $us us of virtual time for $2 ms"
    [ -n "$us" ] && within "$us" "$(awk -v m="$2" 'BEGIN { print m * 1000 }')" ||
        fail "the wait took $us us"
    ;;
rma)
    m=$1
    rma() { # SPEC FLAVOR: sets ow, put, get (us)
        out=$("$courier" run --timeout 120 --sim "$1,cpu=0" -n 2 "$prog" "$2" 20 2>&1) ||
            fail "$1 $2: $(echo "$out" | grep -v '^courier:  ' | tail -3)"
        read -r _ _ ow put get < <(echo "$out" | grep '^rma ')
        [ -n "${get:-}" ] || fail "$1 $2: no measurement"
        echo "$1 $2: one way $ow us, put and flush $put us, get and flush $get us"
    }
    one=$m
    [ "$m" = cs2 ] && one=cs2,rma=nx2 # every message by NX/2's costs
    for f in create allocate; do
        rma "$one" "$f"
        for x in "$put" "$get"; do # a request one way, the answer back
            awk -v x="$x" -v o="$ow" 'BEGIN { exit !(x >= 1.5 * o && x <= 3 * o) }' ||
                fail "$f: $x us is not about a round trip ($ow us one way)"
        done
        eval "put_$f=$put get_$f=$get"
    done
    within "$put_allocate" "$put_create" && within "$get_allocate" "$get_create" ||
        fail "an allocated window's operations ($put_allocate, $get_allocate us) should cost what a created one's do"
    if [ "$m" = cs2 ]; then
        # the CS-2's default: NX/2's sends beside the Elan DMA's one-sided operations
        ow_nx=$ow
        rma cs2,sw=dma allocate
        put_dma=$put get_dma=$get
        rma cs2 allocate
        within "$ow" "$ow_nx" || fail "the sends should keep NX/2's costs ($ow us, $ow_nx with rma=nx2)"
        within "$get" "$get_dma" || fail "a get should cost what the DMA's does ($get us, $get_dma with sw=dma)"
        # the first put also waits for the target's own NX/2 send (it serves at its calls)
        awk -v x="$put" -v d="$put_dma" 'BEGIN { exit !(x >= 0.95 * d && x <= 1.5 * d) }' ||
            fail "a put should cost about what the DMA's does ($put us, $put_dma with sw=dma)"
    fi
    ;;
trace)
    m=$1 dir=$(mktemp -d)
    trap 'rm -rf "$dir"' EXIT
    for k in a b; do
        out=$("$courier" run --timeout 120 --sim "$m,cpu=0" --trace "$dir/$k.json" -n 2 "$prog" \
            mpl 1 20 1024 2>&1) || fail "run $k: $(echo "$out" | grep -v '^courier:  ' | tail -3)"
    done
    vt=$(echo "$out" | sed -n 's/.*: \([0-9.]*\) us of virtual time in .*/\1/p')
    grep -q '"clock":"virtual (--sim '"$m"',cpu=0)"' "$dir/a.json" ||
        fail "the trace does not say that its clock is the virtual one"
    # the last event ends where the simulated job ended
    end=$(awk '/"ts":/ { t = $0; sub(/.*"ts":/, "", t); t += 0; d = 0
                         if (match($0, /"dur":[0-9.]+/)) d = substr($0, RSTART + 6, RLENGTH - 6) + 0
                         if (t + d > e) e = t + d }
               END { printf "%.3f", e }' "$dir/a.json")
    echo "$m: the trace ends at $end us, the simulated job at $vt us"
    awk -v a="$end" -v b="$vt" 'BEGIN { d = a - b; exit !(d < 0.002 && d > -0.002) }' ||
        fail "the trace ends at $end us, the simulated job at $vt us"
    # every send takes the modelled send overhead, whatever this host's speed
    n=$(grep '"name":"mpc_bsend"' "$dir/a.json" | sed 's/.*"dur":\([0-9.]*\).*/\1/' | sort -u | wc -l)
    [ "$n" = 1 ] || fail "the sends' durations differ ($n values): not virtual time"
    cmp -s <(grep '"ts"' "$dir/a.json") <(grep '"ts"' "$dir/b.json") ||
        fail "two runs' traces differ"
    ;;
bcast)
    m=$1 n=$2 size=$3 hw=$4
    out=$("$courier" run --timeout 120 --sim "$m,cpu=0" -n "$n" "$prog" "$size" 2>&1) ||
        fail "the run failed: $out"
    read -r b p < <(echo "$out" | awk '$1 == "bcast" { print $4, $5 }')
    [ -n "$b" ] || fail "no measurement: $out"
    echo "$m, $n ranks, $size bytes: cr_put_bcast $b us, one put per rank $p us"
    if [ "$hw" = yes ]; then
        awk -v b="$b" -v p="$p" 'BEGIN { exit !(b > 0 && b < 0.5 * p) }' ||
            fail "the broadcast is not under half the puts' time"
        one=$("$courier" run --timeout 120 --sim "$m,cpu=0" -n 2 "$prog" "$size" 2>/dev/null |
            awk '$1 == "bcast" { print $4 }')
        echo "the same with 2 ranks (one target): $one us"
        awk -v b="$b" -v o="$one" 'BEGIN { exit !(o > 0 && b <= 1.1 * o) }' ||
            fail "the broadcast to $((n - 1)) targets costs more than one put (+10 %)"
    else
        awk -v b="$b" -v p="$p" 'BEGIN { d = (b - p) / p; exit !(d < 0.01 && d > -0.01) }' ||
            fail "without a hardware broadcast it should cost the puts"
    fi
    ;;
output)
    m=$1 n=$2
    out=$(mktemp) err=$(mktemp)
    "$courier" run --label --timeout 120 --sim "$m,cpu=0" -n "$n" "$prog" output >"$out" 2>"$err" ||
        fail "the run failed: $(head -3 "$err")"
    for ((r = 0; r < n; r++)); do
        for i in 0 1 2; do
            [ "$(grep -cx "\[$r\] out $i of rank $r" "$out")" = 1 ] || fail "rank $r's stdout line $i"
        done
        [ "$(grep -cx "\[$r\] err of rank $r" "$err")" = 1 ] || fail "rank $r's stderr line"
        [ "$(grep -cx "\[$r\] tail of rank $r" "$out")" = 1 ] || fail "rank $r's last line"
    done
    [ "$(grep -c . "$out")" = $((4 * n)) ] || fail "stdout has other lines: $(head -5 "$out")"
    rm -f "$out" "$err"
    echo "every rank's output under its own label"
    ;;
*) fail "unknown check $what" ;;
esac
echo ok
