#!/bin/bash
# Side-by-side benchmark: the same source (bench/pingpong.c) built against
# courier, Open MPI and MPICH, run interleaved on this machine; prints a
# Markdown table of medians and ratios, and plots when gnuplot is there.
#   bench/compare.sh [--build DIR] [--reps N] [--quick] [--out FILE.md]
# Needs the Debian packages libopenmpi-dev openmpi-bin mpich libmpich-dev (it
# offers the apt-get line when they are missing). Timing is noisy on shared
# machines: use the medians, and run it twice before believing a ratio.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$here/../build usage="$0 [--build DIR] [--reps N] [--quick] [--out FILE.md]"
. "$here/side-by-side.sh"
sbs_options "$@"
pp=$build/bench/pingpong
[ -x "$pp" ] && [ -x "$build/bench/load" ] || { echo "missing $pp or bench/load: build courier first" >&2; exit 2; }
[ -n "$out" ] && rawcopy=${out%.md}.raw || rawcopy=""
sbs_build "$here/pingpong.c" pp -DUSE_MPI
run() { local impl=$1; shift; sbs_run "$impl" "$1" "$pp" pp "${@:2}"; }
for rep in $(seq "$reps"); do
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
    echo
    echo "| measure | courier | Open MPI | MPICH | courier/Open MPI | courier/MPICH |"
    echo "|---|---|---|---|---|---|"
    row() { # label metric size unit
        local c o m
        c=$(sbs_median courier "$2" "$3"); o=$(sbs_median ompi "$2" "$3"); m=$(sbs_median mpich "$2" "$3")
        echo "| $1 | $c $4 | $o $4 | $m $4 | $(sbs_ratio "$c" "$o") | $(sbs_ratio "$c" "$m") |"
    }
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
} | tee "${out:-/dev/null}"
[ -n "$rawcopy" ] && cp "$raw" "$rawcopy" # every sample: impl metric size value

if command -v gnuplot >/dev/null; then
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
