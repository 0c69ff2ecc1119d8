#!/bin/bash
# IOR's strided-view row alone (-t 4k -b 4k -s 4096 through a strided file
# view, --mpiio.useFileView --mpiio.useStridedDatatype), write only or write
# and read, for several courier builds and Open MPI (ompio, ROMIO) run
# interleaved (the order turning round each repetition); prints each
# variant's median, range and median CPU time of the whole job (user + system
# of every rank, from a preloaded destructor), then the runs. Under a heavy
# load the CPU column says more than the bandwidth does.
#   bench/io/ior_view.sh COURIER_IOR OMPI_IOR NP coll|indep REPS VARIANT...
# VARIANT: ompio, romio, or NAME=BUILD[,ENV=VAL...] (a courier build dir;
# ENV: e.g. IOR_HINT__MPI__romio_cb_write=disable, IOR's way to pass hints).
# RW="-w -r" measures the read too (its figures follow the write's).
set -eu
[ $# -ge 6 ] || { echo "usage: $0 COURIER_IOR OMPI_IOR NP coll|indep REPS VARIANT..." >&2; exit 2; }
cior=$1 oior=$2 np=$3 mode=$4 reps=$5
shift 5
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/ru.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
__attribute__((destructor)) static void ru(void)
{
    const char *o = getenv("RU_OUT");
    struct rusage r;
    if (!o || getrusage(RUSAGE_SELF, &r)) return;
    FILE *f = fopen(o, "a");
    if (!f) return;
    fprintf(f, "%.1f\n", (r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1e3 +
                             (r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e3);
    fclose(f);
}
C
cc -shared -fPIC -O2 -o "$tmp/ru.so" "$tmp/ru.c"
c=
[ "$mode" = coll ] && c=-c
args="-a MPIIO $c -t 4k -b 4k -s 4096 --mpiio.useFileView --mpiio.useStridedDatatype ${RW:--w} -i 1"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
vs=("$@")
n=${#vs[@]}
l0=$(cut -d' ' -f1-3 /proc/loadavg)
for r in $(seq "$reps"); do
    for ((i = 0; i < n; i++)); do
        v=${vs[$(((i + r - 1) % n))]}
        rm -f "$tmp/f" "$tmp/ru"
        case $v in
        ompio | romio)
            mca=
            [ "$v" = romio ] && mca="--mca io romio321"
            # shellcheck disable=SC2086
            out=$(RU_OUT=$tmp/ru mpirun.openmpi -x RU_OUT -x LD_PRELOAD="$tmp/ru.so" --oversubscribe $mca -n "$np" "$oior" $args -o "$tmp/f" 2>&1) ;;
        *)
            name=${v%%=*} spec=${v#*=}
            b=${spec%%,*} envs=
            [ "$spec" != "$b" ] && envs=$(echo "${spec#*,}" | tr ',' ' ')
            # shellcheck disable=SC2086
            out=$(env $envs RU_OUT="$tmp/ru" LD_PRELOAD="$tmp/ru.so" LD_LIBRARY_PATH="$b/src" "$b/tools/courier" run -n "$np" "$cior" $args -o "$tmp/f" 2>&1)
            v=$name ;;
        esac
        bw=$(echo "$out" | awk '$1 == "write" || $1 == "read" { if (!s[$1]++) printf "%s ", $2 }')
        [ -n "$bw" ] || { echo "$0: $v: no result lines:" >&2; echo "$out" | tail -5 >&2; exit 1; }
        echo "$v $bw$(awk '{ c += $1 } END { printf "%.0f", c }' "$tmp/ru")" >>"$tmp/runs"
    done
done
echo "IOR strided view, $np ranks, $mode, ${RW:--w}, $reps interleaved runs, $(date -u '+%F %H:%M') UTC, $(nproc) cores, load average $l0 before, $(cut -d' ' -f1-3 /proc/loadavg) after"
# median (low-high) of column $2 of the runs of variant $1, with sort(1): no
# gawk needed
med() {
    awk -v v="$1" -v c="$2" '$1 == v && NF >= c { print $c }' "$tmp/runs" | sort -g |
        awk '{ x[NR] = $1 } END { if (NR) printf "%.1f (%.1f-%.1f)", x[int((NR + 1) / 2)], x[1], x[NR] }'
}
awk '!s[$1]++ { print $1 }' "$tmp/runs" | while read -r v; do
    nf=$(awk -v v="$v" '$1 == v { print NF; exit }' "$tmp/runs")
    line=$(printf "%-8s write median %s MiB/s" "$v" "$(med "$v" 2)")
    [ "$nf" -gt 3 ] && line="$line  read median $(med "$v" 3)"
    echo "$line  CPU median $(med "$v" "$nf" | cut -d' ' -f1) ms"
done
cat "$tmp/runs"
