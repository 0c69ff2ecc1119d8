#!/bin/bash
# Side-by-side collective benchmark: the same source (bench/coll.c) built against
# courier's MPL, Open MPI and MPICH, run interleaved on this machine, for 2 ranks
# and for 8 ranks (oversubscribed when the machine has fewer cores); prints a
# Markdown table of medians and ratios.
#   bench/compare_coll.sh [--build DIR] [--reps N] [--quick] [--out FILE.md]
# Needs the Debian packages libopenmpi-dev openmpi-bin mpich libmpich-dev. MPICH
# busy-polls and may take minutes per operation with 8 ranks on 2 cores: its runs
# are cut off after 60 s and the missing figures show as NA.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$here/../build usage="$0 [--build DIR] [--reps N] [--quick] [--out FILE.md]"
. "$here/side-by-side.sh"
sbs_options "$@"
cb=$build/bench/coll_bench
[ -x "$cb" ] || { echo "missing $cb: build courier first" >&2; exit 2; }
sbs_build "$here/coll.c" coll -DUSE_MPI
run() { local impl=$1; shift; sbs_run "$impl" "$1" "$cb" coll "${@:2}"; }
for rep in $(seq "$reps"); do
    for n in 2 8; do
        for impl in courier ompi mpich; do
            echo "rep $rep: $impl, $n ranks" >&2
            { run $impl $n $quick 2>/dev/null || true; } |
                awk -v i=$impl -v n=$n '$1=="coll"{print i, n, $2, $3, $4}' >>"$raw"
        done
    done
done

{
    echo "$(sbs_machine); time per operation in us"
    echo
    echo "| ranks | operation | bytes | courier | Open MPI | MPICH | courier/Open MPI | courier/MPICH | best courier/best Open MPI |"
    echo "|---|---|---|---|---|---|---|---|---|"
    for n in 2 8; do
        awk -v n=$n '$1=="courier" && $2==n{print $3, $4}' "$raw" | awk '!seen[$0]++' |
            while read -r op bytes; do
                c=$(sbs_median courier $n $op $bytes); o=$(sbs_median ompi $n $op $bytes); m=$(sbs_median mpich $n $op $bytes)
                echo "| $n | $op | $bytes | $c | $o | $m | $(sbs_ratio "$c" "$o") | $(sbs_ratio "$c" "$m") | $(sbs_ratio "$(sbs_best courier $n $op $bytes)" "$(sbs_best ompi $n $op $bytes)") |"
            done
    done
} | tee "${out:-/dev/null}"
[ -n "$out" ] && cp "$raw" "${out%.md}.raw" # every sample: impl ranks operation bytes us
