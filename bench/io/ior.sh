#!/bin/bash
# IOR (github.com/hpc/ior) with its MPIIO back end, courier against Open MPI,
# side by side: the same IOR source built twice beforehand (this script never
# builds IOR; see bench/results/ior.md for how), each run interleaved with the
# other (every repetition runs every row with courier, Open MPI's default io
# component (ompio) and Open MPI with ROMIO, in an order that turns round from
# one repetition to the next), one shared file, write then
# read back. Prints a Markdown table of the medians over the repetitions of
# IOR's bandwidth (MiB/s) and the ratios courier / Open MPI (above 1: courier
# faster), then the raw lines.
#   bench/io/ior.sh COURIER_IOR OMPI_IOR [--build DIR] [--reps N] [--np "2 4"]
#                   [--dir D] [--no-romio] [--out FILE.md]
# Rows, at each rank count, independent and collective (-c):
#   1m, 16m, 64m   one block per rank of that size, 1 MiB transfers
#   strided        -t 4k -b 4k -s 4096: 4 KiB segments dealt round-robin over
#                  the ranks, one call per 4 KiB
#   strided-view   the same pattern as one call per rank through a strided
#                  file view (--mpiio.useFileView --mpiio.useStridedDatatype)
# The courier runs load DIR/src's libcourier (LD_LIBRARY_PATH, before the run
# path COURIER_IOR was linked with), so they measure the build given.
# The files go to D (default: a directory under /tmp, removed at the end); they
# stay in the page cache, so this measures the I/O layer (copies, system calls,
# collective exchanges) more than the disk.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
usage="usage: $0 COURIER_IOR OMPI_IOR [--build DIR] [--reps N] [--np \"2 4\"] [--dir D] [--no-romio] [--out FILE.md]"
[ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
cior=$1 oior=$2
shift 2
build=$here/../../build reps=3 nps="2 4" dir= out= romio=1
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --np) nps=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --no-romio) romio=0; shift ;;
    --out) out=$2; shift 2 ;;
    *) echo "$usage" >&2; exit 2 ;;
    esac
done
for b in "$cior" "$oior"; do
    [ -x "$b" ] || { echo "$0: '$b' is not an executable IOR binary (build IOR first: see bench/results/ior.md)" >&2; exit 2; }
done
command -v mpirun.openmpi >/dev/null || { echo "$0: needs Open MPI's mpirun.openmpi: apt-get install openmpi-bin" >&2; exit 2; }
courier=$build/tools/courier
[ -x "$courier" ] || { echo "$0: no courier launcher at $courier (build courier, or pass --build DIR)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -n "$dir" ] || dir=$tmp/files
mkdir -p "$dir"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
rows="1m:-b 1m -t 1m
16m:-b 16m -t 1m
64m:-b 64m -t 1m
strided:-t 4k -b 4k -s 4096
strided-view:-t 4k -b 4k -s 4096 --mpiio.useFileView --mpiio.useStridedDatatype"
impls="courier ompio"
[ "$romio" = 1 ] && impls="$impls romio"
raw=$tmp/raw
# one IOR run: prints "IMPL NP MODE ROW write W read R" (MiB/s, IOR's first
# result lines)
one() {
    local impl=$1 np=$2 mode=$3 row=$4 args=$5 cflag= res
    [ "$mode" = coll ] && cflag=-c
    rm -f "$dir/ior.$impl"
    # shellcheck disable=SC2086
    case $impl in
    courier) res=$(LD_LIBRARY_PATH="$build/src${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$courier" run -n "$np" "$cior" -a MPIIO $cflag $args -w -r -i 1 -o "$dir/ior.$impl" 2>&1 </dev/null) ;;
    ompio) res=$(mpirun.openmpi --oversubscribe -n "$np" "$oior" -a MPIIO $cflag $args -w -r -i 1 -o "$dir/ior.$impl" 2>&1 </dev/null) ;;
    romio) res=$(mpirun.openmpi --oversubscribe --mca io romio321 -n "$np" "$oior" -a MPIIO $cflag $args -w -r -i 1 -o "$dir/ior.$impl" 2>&1 </dev/null) ;;
    esac || { echo "$0: $impl, $np ranks, $mode $row failed:" >&2; echo "$res" | tail -5 >&2; exit 1; }
    echo "$res" | awk -v p="$impl $np $mode $row" '
        $1 == "write" && w == "" { w = $2 } $1 == "read" && r == "" { r = $2 }
        END { if (w == "" || r == "") exit 1; print p, "write", w, "read", r }' ||
        { echo "$0: $impl, $np ranks, $mode $row: no result lines in IOR's output:" >&2; echo "$res" | tail -5 >&2; exit 1; }
    rm -f "$dir/ior.$impl"
}
load0=$(cut -d' ' -f1-3 /proc/loadavg)
for rep in $(seq "$reps"); do
    for np in $nps; do
        for mode in indep coll; do
            while IFS=: read -r row args; do
                echo "rep $rep: $np ranks, $mode, $row" >&2
                # the order turns round from one repetition to the next: the
                # run after a big file's removal is slower (the kernel frees
                # its pages), and no implementation should always pay it
                set -- $impls
                for _ in $(seq $(((rep - 1) % $#))); do set -- "${@:2}" "$1"; done
                for impl in "$@"; do
                    one "$impl" "$np" "$mode" "$row" "$args" >>"$raw"
                done
            done <<<"$rows"
        done
    done
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)
# lines: IMPL NP MODE ROW write W read R
table=$(awk -v romio="$romio" '
function med(s,   a, n, i, j, t) { n = split(s, a, " "); for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }; return a[int((n + 1) / 2)] }
function rat(a, b) { return b > 0 ? sprintf("%.2f", a / b) : "-" }
{ k = $2 " | " $3 " | " $4; w[$1, k] = w[$1, k] " " $6; r[$1, k] = r[$1, k] " " $8; if (!(k in seen)) { seen[k] = 1; order[++nk] = k } }
END {
    for (i = 1; i <= nk; i++) {
        k = order[i]
        cw = med(w["courier", k]); ow = med(w["ompio", k]); cr = med(r["courier", k]); orr = med(r["ompio", k])
        line = sprintf("| %s | %.0f | %.0f | %s | %.0f | %.0f | %s |", k, cw, ow, rat(cw, ow), cr, orr, rat(cr, orr))
        if (romio) {
            rw = med(w["romio", k]); rr = med(r["romio", k])
            line = line sprintf(" %.0f | %s | %.0f | %s |", rw, rat(cw, rw), rr, rat(cr, rr))
        }
        print line
    }
}' "$raw")
if [ "$romio" = 1 ]; then
    head="| ranks | mode | row | courier write | ompio write | ratio | courier read | ompio read | ratio | ROMIO write | ratio | ROMIO read | ratio |
|---|---|---|---|---|---|---|---|---|---|---|---|---|"
else
    head="| ranks | mode | row | courier write | ompio write | ratio | courier read | ompio read | ratio |
|---|---|---|---|---|---|---|---|---|"
fi
{
    echo "IOR MPIIO, MiB/s, medians of $reps interleaved runs ($(date -u '+%F %H:%M') UTC, $(nproc) cores, load average $load0 before, $load1 after)"
    echo
    echo "$head"
    echo "$table"
    echo
    echo '```'
    cat "$raw"
    echo '```'
} >"${out:-/dev/stdout}"
