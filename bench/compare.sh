#!/bin/bash
# Side-by-side benchmark: the same source (bench/pingpong.c) built against
# courier, Open MPI and MPICH, run interleaved on this machine; prints a
# Markdown table of medians and ratios, and plots when gnuplot is there.
#   bench/compare.sh [--build DIR] [--reps N] [--quick] [--out FILE.md] [--only shm|tcp]
# Two sections, both in every rep: each library's own choice between ranks of
# one host (shared memory), and TCP on loopback for all three (sbs_run_tcp in
# bench/side-by-side.sh says how each is forced onto it), with 0 B latency again
# while bench/hammer, a stranger, connects to the ranks' ports, sends junk and
# closes ($HAMMER_RATE connections a second, default 1000), and while it does
# the same to a port outside the job (the control: what any busy neighbour costs).
# Needs the Debian packages libopenmpi-dev openmpi-bin mpich libmpich-dev (it
# offers the apt-get line when they are missing). Timing is noisy on shared
# machines: use the medians, and run it twice before believing a ratio.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$here/../build usage="$0 [--build DIR] [--reps N] [--quick] [--out FILE.md] [--only shm|tcp]"
. "$here/side-by-side.sh"
sbs_options "$@"
case $only in "" | shm | tcp) ;; *) echo "usage: $usage" >&2; exit 2 ;; esac
pp=$build/bench/pingpong hammer=$build/bench/hammer hammer_rate=${HAMMER_RATE:-1000}
[ -x "$pp" ] && [ -x "$build/bench/load" ] && [ -x "$hammer" ] ||
    { echo "missing $pp, bench/load or bench/hammer: build courier first" >&2; exit 2; }
[ -n "$out" ] && rawcopy=${out%.md}.raw || rawcopy=""
sbs_build "$here/pingpong.c" pp -DUSE_MPI
run() { local impl=$1; shift; sbs_run "$impl" "$1" "$pp" pp "${@:2}"; }

# ---- TCP on loopback --------------------------------------------------------
# Messages in one `pingpong echo --max 0` run (warm + iters round trips, as
# pingpong.c's iters_for counts them), for loopback packets per message.
[ -n "$quick" ] && it=20001 || it=200000
echo0_msgs=$((2 * (it + it / 10 + 1)))
lo_packets() { cat /sys/class/net/lo/statistics/tx_packets 2>/dev/null || echo 0; }
# tcp_zero IMPL MODE: 0 B latency of one `echo --max 0` run over TCP (the whole
# run is the 0 B measurement, so the stranger is there all along); MODE quiet,
# hammered (bench/hammer at the ranks' listening ports, found in /proc), or
# control (bench/hammer --sink: the same connections at a port of its own, so
# the machine does the same work outside the job)
tcp_zero() {
    local impl=$1 mode=$2 hp= p0 p1 lat
    case $mode in
    hammered) "$hammer" --seconds 300 --rate "$hammer_rate" --exe "$(sbs_exe "$impl" "$pp" pp)" \
        2>"$work/hammer.err" & hp=$! ;;
    control) "$hammer" --seconds 300 --rate "$hammer_rate" --sink 2>"$work/hammer.err" & hp=$! ;;
    esac
    p0=$(lo_packets)
    lat=$(sbs_run_tcp "$impl" 2 "$pp" pp echo --max 0 $quick 2>"$work/job.err" |
        awk '$1=="echo" && $2==0 {print $3}') || true
    p1=$(lo_packets)
    echo "$impl tcp$mode 0 ${lat:-NA}" >>"$raw"
    if [ -n "$hp" ]; then
        kill "$hp" 2>/dev/null; wait "$hp" 2>/dev/null || true
        echo "$impl rate$mode 0 $(sed -n 's/.*(\([0-9.]*\)\/s).*/\1/p' "$work/hammer.err" | grep . || echo NA)" >>"$raw"
    fi
    [ $mode = hammered ] && echo "$impl hammerlog 0 $(wc -l <"$work/job.err")" >>"$raw"
    [ $mode = quiet ] && [ -n "$lat" ] &&
        echo "$impl lopkts 0 $(awk -v a="$p0" -v b="$p1" -v m="$echo0_msgs" 'BEGIN{printf "%.2f", (b - a) / m}')" >>"$raw"
    echo "${lat:-NA}"
}
ratio4() { awk -v a="$1" -v b="$2" 'BEGIN{if (a=="NA"||b=="NA"||b==0) print "NA"; else printf "%.4f", a/b}'; }
tcp_rep() {
    local impl=$1 rep=$2 q= h= c= m
    echo "rep $rep: $impl over tcp" >&2
    sbs_run_tcp "$impl" 2 "$pp" pp echo --max 4194304 $quick 2>/dev/null |
        awk -v i="$impl" '$1=="echo"{print i, "tcplat", $2, $3; print i, "tcpbw", $2, $4}' >>"$raw" || true
    # the stranger's cost: quiet, hammered and control runs back to back, in an
    # order that turns with the rep; ratios within a rep's triple (the machine's
    # speed drifts less within it than between reps)
    for m in $(case $((rep % 3)) in 1) echo quiet hammered control ;; 2) echo hammered control quiet ;;
               *) echo control quiet hammered ;; esac); do
        case $m in
        quiet) q=$(tcp_zero "$impl" quiet) ;;
        hammered) h=$(tcp_zero "$impl" hammered) ;;
        control) c=$(tcp_zero "$impl" control) ;;
        esac
    done
    echo "$impl costquiet 0 $(ratio4 "$h" "$q")" >>"$raw"
    echo "$impl costcontrol 0 $(ratio4 "$h" "$c")" >>"$raw"
}

for rep in $(seq "$reps"); do
    if [ "$only" != shm ]; then
        for impl in courier ompi mpich; do tcp_rep $impl "$rep"; done
    fi
    [ "$only" = tcp ] && continue
    for impl in courier ompi mpich; do
        echo "rep $rep: $impl" >&2
        run $impl 2 echo $quick | awk -v i=$impl '$1=="echo"{print i, "lat", $2, $3; print i, "bw", $2, $4}' >>"$raw" || true
        if out8=$(run $impl 8 ring --iters 20000 2>/dev/null); then
            echo "$out8" | awk -v i=$impl '$1=="ring"{print i, "ring8", 0, $3}' >>"$raw"
        else
            echo "$impl ring8 0 NA" >>"$raw"
        fi
        echo "$impl launch2 0 $(sbs_launch_ms $impl 2 "$pp" pp)" >>"$raw"
        # a loaded machine: another user's CPU-bound processes (bench/load.c), one
        # and then one per core, while the two ranks ping-pong
        for hogs in 1 "$(nproc)"; do
            "$build/bench/load" "$hogs" 200 & hp=$!
            sleep 0.5
            run $impl 2 echo --max 4096 $quick |
                awk -v i=$impl -v h=$hogs '$1=="echo"{print i, "load" h, $2, $3}' >>"$raw" || true
            kill $hp; wait $hp 2>/dev/null || true
        done
        # both ranks on one CPU although the job sees them all (the scheduler
        # can do this on a loaded machine): courier only — Open MPI and MPICH
        # spin through their time slices and do not finish in minutes
        if [ $impl = courier ] && command -v taskset >/dev/null; then
            timeout 120 "$courier" run -n 2 taskset -c 0 "$pp" echo --max 4096 $quick |
                awk '$1=="echo"{print "courier onecpu", $2, $3}' >>"$raw" || true
        fi
        echo "$impl launch8 0 $(sbs_launch_ms $impl 8 "$pp" pp)" >>"$raw"
    done
    # the machine's floors, without any library, in the same run (bench/floors.c)
    "$build/bench/floors" line | awk '{print "floor line 0", $3}' >>"$raw"
    "$build/bench/floors" ring 8 | awk '{print "floor ring8 0", $3}' >>"$raw"
done

{
    sbs_machine
    table_head() {
        echo
        echo "| measure | courier | Open MPI | MPICH | courier/Open MPI | courier/MPICH |"
        echo "|---|---|---|---|---|---|"
    }
    row() { # label metric size unit
        local c o m
        c=$(sbs_median courier "$2" "$3"); o=$(sbs_median ompi "$2" "$3"); m=$(sbs_median mpich "$2" "$3")
        echo "| $1 | $c $4 | $o $4 | $m $4 | $(sbs_ratio "$c" "$o") | $(sbs_ratio "$c" "$m") |"
    }
    if [ "$only" != tcp ]; then
    table_head
    row "latency 0 B (one way)" lat 0 us
    row "latency 8 B" lat 8 us
    row "latency 1 KiB" lat 1024 us
    row "latency 64 KiB" lat 65536 us
    row "bandwidth 1 MiB" bw 1048576 MB/s
    row "bandwidth 4 MiB" bw 4194304 MB/s
    row "bandwidth 64 MiB" bw 67108864 MB/s
    row "token ring, 8 ranks on $(nproc) cores, per hop" ring8 0 us
    row "latency 8 B, 1 CPU-bound process beside" load1 8 us
    row "latency 4 KiB, 1 CPU-bound process beside" load1 4096 us
    row "latency 8 B, $(nproc) CPU-bound processes beside" "load$(nproc)" 8 us
    row "latency 4 KiB, $(nproc) CPU-bound processes beside" "load$(nproc)" 4096 us
    row "latency 8 B, both ranks on one CPU (courier only)" onecpu 8 us
    row "launch, 2 ranks (empty program)" launch2 0 ms
    row "launch, 8 ranks (empty program)" launch8 0 ms
    echo
    echo "Floors in the same run, without any library (bench/floors): one cache line one way" \
        "$(sbs_median floor line 0) us; a token ring of 8 processes waiting with sched_yield" \
        "$(sbs_median floor ring8 0) us per hop."
    fi
    if [ "$only" != shm ]; then
    echo
    echo "TCP on loopback, 2 ranks: courier with COURIER_TRANSPORTS=tcp, Open MPI with" \
        "--mca pml ob1 --mca btl tcp,self, MPICH (ch4:ucx) with MPIR_CVAR_NOLOCAL=1 UCX_TLS=tcp."
    table_head
    row "tcp latency 0 B (one way; goal courier ≤ 0.8x Open MPI)" tcplat 0 us
    row "tcp latency 8 B" tcplat 8 us
    row "tcp bandwidth 4 MiB (goal courier ≥ 1.2x Open MPI)" tcpbw 4194304 MB/s
    row "tcp latency 0 B alone (echo --max 0, beside the next two)" tcpquiet 0 us
    row "tcp latency 0 B with a stranger hammering the port ($hammer_rate connections/s asked)" tcphammered 0 us
    row "tcp latency 0 B, the same stranger hammering a port outside the job (control)" tcpcontrol 0 us
    echo "| tcp 0 B, hammered / alone (median of each rep's ratio; goal < 1.05) |" \
        "$(sbs_median courier costquiet 0) | $(sbs_median ompi costquiet 0) | $(sbs_median mpich costquiet 0) | — | — |"
    echo "| tcp 0 B, hammered / control (what the library itself pays) |" \
        "$(sbs_median courier costcontrol 0) | $(sbs_median ompi costcontrol 0) | $(sbs_median mpich costcontrol 0) | — | — |"
    echo
    echo "Loopback packets per message in the 0 B runs alone (1 or more: the messages went" \
        "over TCP): courier $(sbs_median courier lopkts 0), Open MPI $(sbs_median ompi lopkts 0)," \
        "MPICH $(sbs_median mpich lopkts 0). The stranger's connections per second (bench/hammer)," \
        "at the job / outside it: courier $(sbs_median courier ratehammered 0) / $(sbs_median courier ratecontrol 0)," \
        "Open MPI $(sbs_median ompi ratehammered 0) / $(sbs_median ompi ratecontrol 0)," \
        "MPICH $(sbs_median mpich ratehammered 0) / $(sbs_median mpich ratecontrol 0); lines on the" \
        "job's stderr while hammered: courier $(sbs_median courier hammerlog 0), Open MPI" \
        "$(sbs_median ompi hammerlog 0), MPICH $(sbs_median mpich hammerlog 0)."
    fi
} | tee "${out:-/dev/null}"
[ -n "$rawcopy" ] && cp "$raw" "$rawcopy" # every sample: impl metric size value

if [ "$only" != tcp ] && command -v gnuplot >/dev/null; then
    for impl in courier ompi mpich; do
        for s in $(awk -v i=$impl '$1==i && $2=="lat"{print $3}' "$raw" | sort -gu); do
            echo "$s $(sbs_median $impl lat "$s") $(sbs_median $impl bw "$s")"
        done >"$work/$impl.dat"
    done
    plots=$(dirname "${out:-./x}")
    gnuplot <<GP
set terminal png size 900,600
set logscale x 2
set xlabel "message size (bytes)"
set output "$plots/echo-latency.png"
set logscale y
set ylabel "one-way latency (us)"
plot "$work/courier.dat" u (\$1>0?\$1:0.5):2 w lp t "courier", "$work/ompi.dat" u (\$1>0?\$1:0.5):2 w lp t "Open MPI", "$work/mpich.dat" u (\$1>0?\$1:0.5):2 w lp t "MPICH"
set output "$plots/echo-bandwidth.png"
unset logscale y
set ylabel "bandwidth (MB/s)"
plot "$work/courier.dat" u 1:3 w lp t "courier", "$work/ompi.dat" u 1:3 w lp t "Open MPI", "$work/mpich.dat" u 1:3 w lp t "MPICH"
GP
    echo "plots: $plots/echo-latency.png $plots/echo-bandwidth.png" >&2
fi
