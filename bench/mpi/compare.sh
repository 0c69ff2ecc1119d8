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
build=$here/../../build np=4 usage="$0 [--build DIR] [--reps N] [--quick] [--out FILE.md] [--np N]"
. "$here/../side-by-side.sh"
sbs_options "$@"
mb=$build/bench/mpi/mpi_mb
[ -x "$mb" ] || { echo "missing $mb: build courier first" >&2; exit 2; }
sbs_build "$here/mb.c" mb
run() { local impl=$1; shift; sbs_run "$impl" "$1" "$mb" mb "${@:2}"; }
tests2="latency bw bibw"
testsr="put_bw put get acc fop cas" # one-sided, 8 bytes, ns per operation
testsn="multi barrier allreduce bcast alltoall allgather"
# Open MPI's shared-memory windows: with UCX installed it would pick osc/ucx,
# ten times slower on one host from 4 KiB (bench/results/rma.md)
export OMPI_MCA_osc=sm
for rep in $(seq "$reps"); do
    for impl in courier ompi mpich; do
        echo "rep $rep: $impl" >&2
        for t in $tests2; do
            max=1048576
            [ "$t" = latency ] && max=4194304
            run $impl 2 $t $quick --max $max 2>/dev/null | awk -v i=$impl 'NF==3{print i, $1, $2, $3}' >>"$raw" || true
        done
        for t in $testsr; do
            run $impl 2 $t $quick 2>/dev/null | awk -v i=$impl 'NF==3{print i, $1, $2, $3}' >>"$raw" || true
        done
        for t in $testsn; do
            run $impl "$np" $t $quick --max 65536 2>/dev/null | awk -v i=$impl 'NF==3{print i, $1, $2, $3}' >>"$raw" || true
        done
        for k in 1 2 3; do
            echo "$impl launch2 0 $(sbs_launch_ms $impl 2 "$mb" mb)" >>"$raw"
            echo "$impl launch8 0 $(sbs_launch_ms $impl 8 "$mb" mb)" >>"$raw"
        done
    done
done

human() { awk -v s="$1" 'BEGIN{if(s>=1048576) printf "%g MiB", s/1048576; else if(s>=1024) printf "%g KiB", s/1024; else printf "%d B", s}'; }

{
    echo "$(sbs_machine)${quick:+ (--quick)}; multi-pair and collectives on $np ranks"
    echo "Versions: courier $("$courier" info 2>/dev/null | head -1); $(mpirun.openmpi --version 2>/dev/null | head -1); MPICH $(mpichversion 2>/dev/null | sed -n 's/^MPICH Version: *//p' | head -1)"
    echo
    echo "| test | size | unit | better | courier | Open MPI | MPICH | courier/Open MPI | courier/MPICH |"
    echo "|---|---|---|---|---|---|---|---|---|"
    for t in latency bw bibw $testsr multi barrier allreduce bcast alltoall allgather launch2 launch8; do
        case $t in
        bw | bibw) unit=MB/s better=higher ;;
        launch*) unit=ms better=lower ;;
        put_bw | put | get | acc | fop | cas) unit=ns better=lower ;;
        *) unit=us better=lower ;;
        esac
        for s in $(awk -v t=$t '$2==t{print $3}' "$raw" | sort -gu); do
            c=$(sbs_median courier $t "$s"); o=$(sbs_median ompi $t "$s"); m=$(sbs_median mpich $t "$s")
            label=$t size=$(human "$s")
            case $t in
            launch2) label="launch (hello)"; size="2 ranks" ;;
            launch8) label="launch (hello)"; size="8 ranks" ;;
            barrier) size="—" ;;
            multi) label="multi-pair latency" ;;
            put_bw) label="MPI_Put, 64 per flush" ;;
            put) label="MPI_Put + flush" ;;
            get) label="MPI_Get + flush" ;;
            acc) label="MPI_Accumulate + flush" ;;
            fop) label="MPI_Fetch_and_op + flush" ;;
            cas) label="MPI_Compare_and_swap + flush" ;;
            esac
            echo "| $label | $size | $unit | $better | $c | $o | $m | $(sbs_ratio "$c" "$o") | $(sbs_ratio "$c" "$m") |"
        done
    done
} | tee "${out:-/dev/null}"
[ -n "$out" ] && cp "$raw" "${out%.md}.raw" # every sample: impl test size value

if command -v gnuplot >/dev/null; then
    plots=$(dirname "${out:-./x}")
    for impl in courier ompi mpich; do
        for t in latency bw bibw; do
            for s in $(awk -v i=$impl -v t=$t '$1==i && $2==t{print $3}' "$raw" | sort -gu); do
                echo "$s $(sbs_median $impl $t "$s")"
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
