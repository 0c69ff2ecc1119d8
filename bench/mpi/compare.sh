#!/bin/bash
# The side-by-side MPI benchmark: bench/mpi/mb.c built against courier (as part
# of the build), Open MPI and MPICH (with their mpicc here), run interleaved
# (every repetition runs each implementation in turn), then one Markdown table
# of medians with courier/Open MPI and courier/MPICH ratios, and latency and
# bandwidth plots (PNG, when gnuplot is there).
#   bench/mpi/compare.sh [--build DIR] [--reps N] [--quick] [--out FILE.md] [--np N]
# --np is the rank count of the multi-pair and collective tests (default 4).
# Ratios below 1 mean courier is faster for times (us, ms) and slower for
# bandwidths (MB/s); the "better" column says which way each row reads.
# Needs libopenmpi-dev openmpi-bin mpich libmpich-dev (the apt-get line is
# printed when they are missing). Timing is noisy on shared machines: use the
# medians, and run it twice before believing a ratio.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$here/../../build reps=3 quick= out= np=4
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --quick) quick=--quick; shift ;;
    --out) out=$2; shift 2 ;;
    --np) np=$2; shift 2 ;;
    *) echo "usage: $0 [--build DIR] [--reps N] [--quick] [--out FILE.md] [--np N]" >&2; exit 2 ;;
    esac
done
courier=$build/tools/courier
mb=$build/bench/mpi/mpi_mb
[ -x "$courier" ] && [ -x "$mb" ] || { echo "build courier first: cmake -S . -B build && cmake --build build" >&2; exit 2; }
for c in mpicc.openmpi mpicc.mpich mpirun.openmpi mpirun.mpich; do
    command -v $c >/dev/null || {
        echo "missing $c: apt-get install -y libopenmpi-dev openmpi-bin mpich libmpich-dev" >&2
        exit 2
    }
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpicc.openmpi -O2 "$here/mb.c" -o "$work/mb_ompi"
mpicc.mpich -O2 "$here/mb.c" -o "$work/mb_mpich"

run() { # IMPL NRANKS ARGS...
    local impl=$1 n=$2
    shift 2
    case $impl in
    courier) timeout 120 "$courier" run -n "$n" "$mb" "$@" ;;
    ompi) timeout 120 mpirun.openmpi --oversubscribe -n "$n" "$work/mb_ompi" "$@" ;;
    mpich) timeout 60 mpirun.mpich -n "$n" "$work/mb_mpich" "$@" ;;
    esac
}
launch_ms() { # IMPL NRANKS: wall time of an empty MPI program, in ms
    local t0 t1
    t0=$(date +%s%N)
    run "$1" "$2" hello >/dev/null 2>&1 || { echo NA; return; }
    t1=$(date +%s%N)
    awk -v d=$((t1 - t0)) 'BEGIN{printf "%.1f", d / 1e6}'
}

raw=$work/raw
: >"$raw"
tests2="latency bw bibw"
testsn="multi barrier allreduce bcast alltoall allgather"
for rep in $(seq "$reps"); do
    for impl in courier ompi mpich; do
        echo "rep $rep: $impl" >&2
        for t in $tests2; do
            max=1048576
            [ "$t" = latency ] && max=4194304
            run $impl 2 $t $quick --max $max 2>/dev/null | awk -v i=$impl 'NF==3{print i, $1, $2, $3}' >>"$raw" || true
        done
        for t in $testsn; do
            run $impl "$np" $t $quick --max 65536 2>/dev/null | awk -v i=$impl 'NF==3{print i, $1, $2, $3}' >>"$raw" || true
        done
        for k in 1 2 3; do
            echo "$impl launch2 0 $(launch_ms $impl 2)" >>"$raw"
            echo "$impl launch8 0 $(launch_ms $impl 8)" >>"$raw"
        done
    done
done

median() { # impl metric size
    awk -v i="$1" -v m="$2" -v s="$3" '$1==i && $2==m && $3==s && $4!="NA"{print $4}' "$raw" |
        sort -g | awk '{v[NR]=$1} END{if(NR==0) print "NA"; else if(NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{if(a=="NA"||b=="NA"||b==0) print "—"; else printf "%.2f", a/b}'; }
human() { awk -v s="$1" 'BEGIN{if(s>=1048576) printf "%g MiB", s/1048576; else if(s>=1024) printf "%g KiB", s/1024; else printf "%d B", s}'; }

{
    echo "Machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(uname -r); $(date -u +%Y-%m-%d); median of $reps runs${quick:+ (--quick)}; multi-pair and collectives on $np ranks"
    echo "Versions: courier $("$courier" info 2>/dev/null | head -1); $(mpirun.openmpi --version 2>/dev/null | head -1); MPICH $(mpichversion 2>/dev/null | sed -n 's/^MPICH Version: *//p' | head -1)"
    echo
    echo "| test | size | unit | better | courier | Open MPI | MPICH | courier/Open MPI | courier/MPICH |"
    echo "|---|---|---|---|---|---|---|---|---|"
    for t in latency bw bibw multi barrier allreduce bcast alltoall allgather launch2 launch8; do
        case $t in
        bw | bibw) unit=MB/s better=higher ;;
        launch*) unit=ms better=lower ;;
        *) unit=us better=lower ;;
        esac
        for s in $(awk -v t=$t '$2==t{print $3}' "$raw" | sort -gu); do
            c=$(median courier $t "$s"); o=$(median ompi $t "$s"); m=$(median mpich $t "$s")
            label=$t size=$(human "$s")
            case $t in
            launch2) label="launch (hello)"; size="2 ranks" ;;
            launch8) label="launch (hello)"; size="8 ranks" ;;
            barrier) size="—" ;;
            multi) label="multi-pair latency" ;;
            esac
            echo "| $label | $size | $unit | $better | $c | $o | $m | $(ratio "$c" "$o") | $(ratio "$c" "$m") |"
        done
    done
} | tee "${out:-/dev/null}"
[ -n "$out" ] && cp "$raw" "${out%.md}.raw" # every sample: impl test size value

if command -v gnuplot >/dev/null; then
    plots=$(dirname "${out:-./x}")
    for impl in courier ompi mpich; do
        for t in latency bw bibw; do
            for s in $(awk -v i=$impl -v t=$t '$1==i && $2==t{print $3}' "$raw" | sort -gu); do
                echo "$s $(median $impl $t "$s")"
            done >"$work/$impl.$t.dat"
        done
    done
    gnuplot <<GP
set terminal png size 900,600
set logscale x 2
set xlabel "message size (bytes)"
set key left top
set output "$plots/mpi-latency.png"
set logscale y
set ylabel "one-way latency (us)"
set title "MPI ping-pong latency: courier, Open MPI, MPICH"
plot "$work/courier.latency.dat" u (\$1>0?\$1:0.5):2 w lp t "courier", "$work/ompi.latency.dat" u (\$1>0?\$1:0.5):2 w lp t "Open MPI", "$work/mpich.latency.dat" u (\$1>0?\$1:0.5):2 w lp t "MPICH"
set output "$plots/mpi-bandwidth.png"
unset logscale y
set ylabel "bandwidth (MB/s)"
set title "MPI streaming bandwidth (window of 64), and bidirectional"
plot "$work/courier.bw.dat" u 1:2 w lp t "courier bw", "$work/ompi.bw.dat" u 1:2 w lp t "Open MPI bw", "$work/mpich.bw.dat" u 1:2 w lp t "MPICH bw", "$work/courier.bibw.dat" u 1:2 w lp dt 2 t "courier bibw", "$work/ompi.bibw.dat" u 1:2 w lp dt 2 t "Open MPI bibw", "$work/mpich.bibw.dat" u 1:2 w lp dt 2 t "MPICH bibw"
GP
    echo "plots: $plots/mpi-latency.png $plots/mpi-bandwidth.png" >&2
fi
