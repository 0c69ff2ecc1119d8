#!/bin/bash
# ab.sh: an A/B of libcourier builds over loopback TCP with OSU, beside Open MPI
# (ob1, tcp,self on lo): osu_latency 8 B (one way, us) or, with --bw, osu_bw
# 4 MiB (MB/s). Each repetition runs every build and then Open MPI, in turn,
# so that the machine's load falls alike on all; prints each one's sorted
# figures, its median and the median's ratio to Open MPI's, and the load.
#   bench/tcp/ab.sh --bins DIR [--reps N] [--bw] [--fifo] LIBDIR...
# LIBDIR: a folder holding a libcourier.so.0 (a build's src/, or a copy of
# one): the ranks run with it by LD_LIBRARY_PATH whatever the program's
# RUNPATH, under the launcher of the first LIBDIR's build when it has one,
# else ../tools/courier of this checkout's build. --bins DIR as floor.sh:
# DIR/courier/osu_* built with courier-cc, DIR/ompi/osu_* with mpicc.openmpi.
# --fifo runs everything under SCHED_FIFO (chrt -f 1, root).
set -u
here=$(cd "$(dirname "$0")" && pwd)
bins='' reps=7 fifo='' bw=''
die() { echo "ab.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case $1 in
    --bins) bins=${2:?}; shift 2 ;;
    --reps) reps=${2:?}; shift 2 ;;
    --bw) bw=1; shift ;;
    --fifo) fifo='chrt -f 1'; shift ;;
    -*) die "usage: $0 --bins DIR [--reps N] [--bw] [--fifo] LIBDIR..." ;;
    *) break ;;
    esac
done
[ $# -gt 0 ] || die "usage: $0 --bins DIR [--reps N] [--bw] [--fifo] LIBDIR..."
for d in "$@"; do [ -e "$d/libcourier.so.0" ] || die "no $d/libcourier.so.0"; done
if [ -n "$bw" ]; then prog=osu_bw osu="-m 4194304:4194304 -i 200 -x 20" size=4194304
else prog=osu_latency osu="-m 8:8 -i 30000 -x 3000" size=8; fi
if [ ! -x "$bins/courier/$prog" ] || [ ! -x "$bins/ompi/$prog" ]; then
    die "--bins DIR: DIR/courier/$prog and DIR/ompi/$prog"
fi
cmd=$1/../tools/courier
[ -x "$cmd" ] || cmd=$here/../../build/tools/courier
[ -x "$cmd" ] || die "no courier launcher at $1/../tools or in this checkout's build"
command -v mpirun.openmpi >/dev/null || die "mpirun.openmpi not found (apt-get install openmpi-bin libopenmpi-dev)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
loads=''
for _ in $(seq 1 "$reps"); do
    loads="$loads $(cut -d' ' -f1 /proc/loadavg)"
    i=0
    for d in "$@"; do
        i=$((i + 1))
        # shellcheck disable=SC2086 # $fifo and $osu are word lists
        v=$(LD_LIBRARY_PATH=$d COURIER_TRANSPORTS=tcp $fifo timeout 60 "$cmd" run -n 2 \
            "$bins/courier/$prog" $osu 2>/dev/null | awk -v s=$size '$1==s{print $2}')
        echo "$i ${v:-NA}" >>"$raw"
    done
    # shellcheck disable=SC2086
    v=$($fifo timeout 60 mpirun.openmpi -n 2 --mca pml ob1 --mca btl tcp,self \
        --mca btl_tcp_if_include lo "$bins/ompi/$prog" $osu 2>/dev/null |
        awk -v s=$size '$1==s{print $2}')
    echo "ompi ${v:-NA}" >>"$raw"
done
med() { awk -v n="$1" '$1==n && $2!="NA"{print $2}' "$raw" | sort -g |
    awk '{v[NR]=$1} END{if(!NR){print "NA"; exit}
         printf "%.2f\n", (NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2}'; }
om=$(med ompi)
echo "$prog ${size} B over loopback TCP; $reps interleaved reps${fifo:+, SCHED_FIFO}; load at each:$loads"
i=0
for d in "$@" ompi; do
    i=$((i + 1))
    n=$i name=$d
    [ "$d" = ompi ] && n=ompi name="Open MPI"
    m=$(med "$n")
    echo "$name: median $m ($(awk -v o="$om" -v m="$m" 'BEGIN{if(m=="NA"||o=="NA")print "NA"; else printf "%.2f", m/o}')x Open MPI):" \
        "$(awk -v n="$n" '$1==n{print $2}' "$raw" | sort -g | tr '\n' ' ')"
done
