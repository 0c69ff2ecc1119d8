#!/bin/bash
# Started persistent and partitioned point-to-point latency beside Open MPI's
# persistent point-to-point (issue: courier at most 0.8x Open MPI 4.1's): one
# source, bench/mpi/part_lat.c, built as part of courier's build (persistent
# and partitioned rows, HAVE_PART) and here with mpicc.openmpi (Open MPI 4.1
# has no partitioned calls: its persistent rows only); each repetition runs
# every size on each implementation in turn, 2 ranks. part_lat itself prints
# half the round trip of MPI_Start + (MPI_Pready of every partition) +
# MPI_Wait, the median of 5 runs of 20,000; this script prints one Markdown
# table of the medians over the repetitions and the ratios to Open MPI's
# persistent row (below 1: courier is faster).
#   bench/mpi/part_lat.sh [--build DIR] [--reps N] [--out FILE.md]
#       [--sizes "8:1 4096:1 4096:4 65536:8"]   (bytes:partitions)
# Run it on a quiet machine, twice, before believing a ratio.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$here/../../build usage="$0 [--build DIR] [--reps N] [--out FILE.md] [--sizes \"B:P ...\"]"
sizes="8:1 4096:1 4096:4 65536:8"
args=()
while [ $# -gt 0 ]; do
    case $1 in
    --sizes) sizes=$2; shift 2 ;;
    *) args+=("$1"); shift ;;
    esac
done
. "$here/../side-by-side.sh"
sbs_options "${args[@]+"${args[@]}"}"
prog=$build/bench/mpi/mpi_part_lat
[ -x "$prog" ] || { echo "missing $prog: build courier first" >&2; exit 2; }
mpicc.openmpi -O2 "$here/part_lat.c" -o "$work/part_lat_ompi"
for rep in $(seq "$reps"); do
    for sp in $sizes; do
        b=${sp%%:*} p=${sp##*:}
        for impl in courier ompi; do
            echo "rep $rep: $impl $b B, $p partitions" >&2
            sbs_run "$impl" 2 "$prog" part_lat "$b" "$p" 2>/dev/null |
                awk -v i=$impl -v b=$b -v p=$p '
                    /^persistent/ {print i, "persistent", b, p, $(NF-1)}
                    /^partitioned/ {print i, "partitioned", b, p, $(NF-1)}' >>"$raw" || true
        done
    done
done
{
    echo "$(sbs_machine); 2 ranks, one-way latency in us"
    echo "Versions: courier $("$courier" info 2>/dev/null | head -1); $(mpirun.openmpi --version 2>/dev/null | head -1)"
    echo
    echo "| size | partitions | courier persistent | courier partitioned | Open MPI persistent | persistent / Open MPI | partitioned / Open MPI |"
    echo "|---|---|---|---|---|---|---|"
    for sp in $sizes; do
        b=${sp%%:*} p=${sp##*:}
        cp=$(sbs_median courier persistent "$b" "$p")
        cq=$(sbs_median courier partitioned "$b" "$p")
        op=$(sbs_median ompi persistent "$b" "$p")
        echo "| $b B | $p | $cp | $cq | $op | $(sbs_ratio "$cp" "$op") | $(sbs_ratio "$cq" "$op") |"
    done
} | tee ${out:+"$out"}
