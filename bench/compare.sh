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
build=$here/../build reps=3 quick= out=
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --quick) quick=--quick; shift ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: $0 [--build DIR] [--reps N] [--quick] [--out FILE.md]" >&2; exit 2 ;;
    esac
done
courier=$build/tools/courier
pp=$build/bench/pingpong
[ -x "$courier" ] && [ -x "$pp" ] || { echo "build courier first: cmake -S . -B build && cmake --build build" >&2; exit 2; }
for c in mpicc.openmpi mpicc.mpich mpirun.openmpi mpirun.mpich; do
    command -v $c >/dev/null || {
        echo "missing $c: apt-get install -y libopenmpi-dev openmpi-bin mpich libmpich-dev" >&2
        exit 2
    }
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[ -n "$out" ] && rawcopy=${out%.md}.raw || rawcopy=
mpicc.openmpi -O2 -DUSE_MPI "$here/pingpong.c" -o "$work/pp_ompi"
mpicc.mpich -O2 -DUSE_MPI "$here/pingpong.c" -o "$work/pp_mpich"

# run IMPL NRANKS ARGS... : one run, output lines on stdout
run() {
    local impl=$1 n=$2
    shift 2
    case $impl in
    courier) timeout 120 "$courier" run -n "$n" "$pp" "$@" ;;
    ompi) timeout 120 mpirun.openmpi --oversubscribe -n "$n" "$work/pp_ompi" "$@" ;;
    mpich) timeout 60 mpirun.mpich -n "$n" "$work/pp_mpich" "$@" ;;
    esac
}
launch_ms() { # one timing of an empty job, in ms
    local t0 t1
    t0=$(date +%s%N)
    run "$@" hello >/dev/null 2>&1 || { echo NA; return; }
    t1=$(date +%s%N)
    awk -v d=$((t1 - t0)) 'BEGIN{printf "%.1f", d / 1e6}'
}

raw=$work/raw
: >"$raw"
for rep in $(seq "$reps"); do
    for impl in courier ompi mpich; do
        echo "rep $rep: $impl" >&2
        run $impl 2 echo $quick | awk -v i=$impl '$1=="echo"{print i, "lat", $2, $3; print i, "bw", $2, $4}' >>"$raw" || true
        if out8=$(run $impl 8 ring --iters 20000 2>/dev/null); then
            echo "$out8" | awk -v i=$impl '$1=="ring"{print i, "ring8", 0, $3}' >>"$raw"
        else
            echo "$impl ring8 0 NA" >>"$raw"
        fi
        echo "$impl launch2 0 $(launch_ms $impl 2)" >>"$raw"
        echo "$impl launch8 0 $(launch_ms $impl 8)" >>"$raw"
    done
done

median() { # impl metric size
    awk -v i="$1" -v m="$2" -v s="$3" '$1==i && $2==m && $3==s && $4!="NA"{print $4}' "$raw" |
        sort -g | awk '{v[NR]=$1} END{if(NR==0) print "NA"; else if(NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{if(a=="NA"||b=="NA"||b==0) print "—"; else printf "%.2f", a/b}'; }

{
    echo "Machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(uname -r); $(date -u +%Y-%m-%d); median of $reps runs"
    echo
    echo "| measure | courier | Open MPI | MPICH | courier/Open MPI | courier/MPICH |"
    echo "|---|---|---|---|---|---|"
    row() { # label metric size unit
        local c o m
        c=$(median courier "$2" "$3"); o=$(median ompi "$2" "$3"); m=$(median mpich "$2" "$3")
        echo "| $1 | $c $4 | $o $4 | $m $4 | $(ratio "$c" "$o") | $(ratio "$c" "$m") |"
    }
    row "latency 0 B (one way)" lat 0 us
    row "latency 8 B" lat 8 us
    row "latency 1 KiB" lat 1024 us
    row "latency 64 KiB" lat 65536 us
    row "bandwidth 1 MiB" bw 1048576 MB/s
    row "bandwidth 4 MiB" bw 4194304 MB/s
    row "bandwidth 64 MiB" bw 67108864 MB/s
    row "token ring, 8 ranks on $(nproc) cores, per hop" ring8 0 us
    row "launch, 2 ranks (empty program)" launch2 0 ms
    row "launch, 8 ranks (empty program)" launch8 0 ms
} | tee "${out:-/dev/null}"
[ -n "$rawcopy" ] && cp "$raw" "$rawcopy" # every sample: impl metric size value

if command -v gnuplot >/dev/null; then
    for impl in courier ompi mpich; do
        for s in $(awk -v i=$impl '$1==i && $2=="lat"{print $3}' "$raw" | sort -gu); do
            echo "$s $(median $impl lat "$s") $(median $impl bw "$s")"
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
