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
cb=$build/bench/coll_bench
[ -x "$courier" ] && [ -x "$cb" ] || { echo "build courier first: cmake -S . -B build && cmake --build build" >&2; exit 2; }
for c in mpicc.openmpi mpicc.mpich mpirun.openmpi mpirun.mpich; do
    command -v $c >/dev/null || {
        echo "missing $c: apt-get install -y libopenmpi-dev openmpi-bin mpich libmpich-dev" >&2
        exit 2
    }
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpicc.openmpi -O2 -DUSE_MPI "$here/coll.c" -o "$work/coll_ompi"
mpicc.mpich -O2 -DUSE_MPI "$here/coll.c" -o "$work/coll_mpich"

# run IMPL NRANKS ARGS... : one run, "coll OP BYTES US" lines on stdout
run() {
    local impl=$1 n=$2
    shift 2
    case $impl in
    courier) timeout 120 "$courier" run -n "$n" "$cb" "$@" ;;
    ompi) timeout 120 mpirun.openmpi --oversubscribe -n "$n" "$work/coll_ompi" "$@" ;;
    mpich) timeout 60 mpirun.mpich -n "$n" "$work/coll_mpich" "$@" ;;
    esac
}

raw=$work/raw
: >"$raw"
for rep in $(seq "$reps"); do
    for n in 2 8; do
        for impl in courier ompi mpich; do
            echo "rep $rep: $impl, $n ranks" >&2
            { run $impl $n $quick 2>/dev/null || true; } |
                awk -v i=$impl -v n=$n '$1=="coll"{print i, n, $2, $3, $4}' >>"$raw"
        done
    done
done

median() { # impl nranks op bytes
    awk -v i="$1" -v n="$2" -v o="$3" -v s="$4" '$1==i && $2==n && $3==o && $4==s{print $5}' "$raw" |
        sort -g | awk '{v[NR]=$1} END{if(NR==0) print "NA"; else if(NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{if(a=="NA"||b=="NA"||b==0) print "—"; else printf "%.2f", a/b}'; }

{
    echo "Machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(uname -r); $(date -u +%Y-%m-%d); median of $reps runs; time per operation in us"
    echo
    echo "| ranks | operation | bytes | courier | Open MPI | MPICH | courier/Open MPI | courier/MPICH |"
    echo "|---|---|---|---|---|---|---|---|"
    for n in 2 8; do
        awk -v n=$n '$1=="courier" && $2==n{print $3, $4}' "$raw" | awk '!seen[$0]++' |
            while read -r op bytes; do
                c=$(median courier $n $op $bytes); o=$(median ompi $n $op $bytes); m=$(median mpich $n $op $bytes)
                echo "| $n | $op | $bytes | $c | $o | $m | $(ratio "$c" "$o") | $(ratio "$c" "$m") |"
            done
    done
} | tee "${out:-/dev/null}"
