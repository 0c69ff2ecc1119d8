#!/bin/bash
# MPI-IO bandwidth side by side: bench/io/iobench.c built with courier-cc and
# Open MPI's mpicc (its default io component, ompio), run interleaved (each
# repetition runs both in turn) at 2 and 4 ranks; prints a Markdown table of
# the medians of the best-of-2 figures each run reports, with courier / Open
# MPI ratios (above 1: courier faster), and keeps the raw lines. --base DIR:
# a second courier build (the one before a change) runs in the same
# interleave, and a second table gives its figures.
#   bench/io/compare.sh [--build DIR] [--base DIR] [--reps N] [--mib M] [--dir D] [--out FILE.md]
# The files go to D (default: a directory under /tmp, removed at the end);
# most of them stay in the page cache, so this measures the I/O layer's own
# cost (copies, system calls, collective exchanges) more than the disk.
# Then bench/io/overlap.c (nonblocking writes beside a compute loop) at 1
# rank, both in turn, its lines appended as they are.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$here/../../build base= reps=3 mib=16 dir= out=
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$2; shift 2 ;;
    --base) base=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --mib) mib=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: $0 [--build DIR] [--base DIR] [--reps N] [--mib M] [--dir D] [--out FILE.md]" >&2; exit 2 ;;
    esac
done
command -v mpicc.openmpi >/dev/null || { echo "needs Open MPI: apt-get install libopenmpi-dev openmpi-bin" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -n "$dir" ] || dir=$tmp/files
mkdir -p "$dir"
"$build/tools/courier-cc" -O2 "$here/iobench.c" -o "$tmp/ib-courier"
mpicc.openmpi -O2 "$here/iobench.c" -o "$tmp/ib-ompi"
[ -z "$base" ] || "$base/tools/courier-cc" -O2 "$here/iobench.c" -o "$tmp/ib-base"
"$build/tools/courier-cc" -O2 "$here/overlap.c" -o "$tmp/ov-courier"
mpicc.openmpi -O2 "$here/overlap.c" -o "$tmp/ov-ompi"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
raw=$tmp/raw
for rep in $(seq "$reps"); do
    for np in 2 4; do
        echo "rep $rep: $np ranks" >&2
        cut -d' ' -f1 /proc/loadavg >>"$tmp/load"
        "$build/tools/courier" run -n "$np" "$tmp/ib-courier" "$dir" "$mib" 2 | sed 's/^/courier /' >>"$raw"
        [ -z "$base" ] || "$base/tools/courier" run -n "$np" "$tmp/ib-base" "$dir" "$mib" 2 | sed 's/^/base /' >>"$raw"
        mpirun.openmpi --oversubscribe -n "$np" "$tmp/ib-ompi" "$dir" "$mib" 2 | sed 's/^/ompi /' >>"$raw"
    done
done
ov=$tmp/overlap
for rep in $(seq "$reps"); do
    echo "rep $rep: overlap" >&2
    "$build/tools/courier" run -n 1 "$tmp/ov-courier" "$dir" 64 5 | sed 's/^/courier /' >>"$ov"
    mpirun.openmpi -n 1 "$tmp/ov-ompi" "$dir" 64 5 | sed 's/^/ompi /' >>"$ov"
done
# lines: IMPL PATTERN NP ranks MIB MiB: write W MB/s read R MB/s
# table IMPL: IMPL's medians against Open MPI's
table() {
    echo "| pattern, ranks | $1 write | Open MPI write | ratio | $1 read | Open MPI read | ratio |"
    echo "|---|---|---|---|---|---|---|"
    awk -v impl="$1" '
function med(s,   a, n, i, j, t) { n = split(s, a, " "); for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }; return a[int((n + 1) / 2)] }
{ k = $2 " " $3; w[$1, k] = w[$1, k] " " $8; r[$1, k] = r[$1, k] " " $11; keys[k] = 1 }
END {
    for (k in keys) {
        cw = med(w[impl, k]); ow = med(w["ompi", k]); cr = med(r[impl, k]); orr = med(r["ompi", k])
        printf "| %s | %d MB/s | %d MB/s | %.2f | %d MB/s | %d MB/s | %.2f |\n", k, cw, ow, ow ? cw / ow : 0, cr, orr, orr ? cr / orr : 0
    }
}' "$raw" | sort
}
{
    echo "MPI-IO bandwidth, bench/io/iobench.c, $mib MiB per rank, medians of $reps interleaved runs ($(date -u +%F))"
    echo
    echo "Load average (1 min) as each repetition started: $(tr '\n' ' ' <"$tmp/load")"
    echo
    table courier
    echo
    if [ -n "$base" ]; then
        echo "The base build ($base), in the same interleave:"
        echo
        table base
        echo
    fi
    echo '```'
    cat "$raw"
    echo '```'
    echo
    echo "Nonblocking writes beside computation (bench/io/overlap.c, 1 rank, 64 MiB, medians of 5):"
    echo
    echo '```'
    cat "$ov"
    echo '```'
} >"${out:-/dev/stdout}"
