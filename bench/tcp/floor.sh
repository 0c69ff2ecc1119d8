#!/bin/bash
# floor.sh: osu_latency 8 B over loopback TCP, courier (COURIER_TRANSPORTS=tcp)
# and Open MPI (ob1, tcp,self on lo), beside the floor under both: floor.c's
# bare ping-pong of courier's 56-byte frame over one TCP connection with no
# library, waiting by recv, poll or epoll+recv. Each repetition runs all five
# in turn; prints median, min and max of each (us, one way) and its ratio to
# Open MPI's median. Issue 44's goal is courier <= 0.8x Open MPI: floor.sh
# shows how near the kernel's own loopback TCP path lets any library come.
#   bench/tcp/floor.sh --bins DIR [--reps N] [--courier BUILD] [--fifo]
# --bins DIR: DIR/courier/osu_latency (built with courier-cc; run with BUILD's
# libcourier) and DIR/ompi/osu_latency (mpicc.openmpi), as bench/mpi/tcp.sh.
# --fifo runs everything under SCHED_FIFO (chrt -f 1, root): on a loaded
# machine the figures are otherwise the load's (bench/results/tcp-osu.md).
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$here/../../build bins='' reps=7 fifo=''
die() { echo "floor.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case $1 in
    --bins) bins=${2:?}; shift 2 ;;
    --reps) reps=${2:?}; shift 2 ;;
    --courier) build=${2:?}; shift 2 ;;
    --fifo) fifo='chrt -f 1'; shift ;;
    *) die "usage: $0 --bins DIR [--reps N] [--courier BUILD] [--fifo]" ;;
    esac
done
[ -x "$bins/courier/osu_latency" ] && [ -x "$bins/ompi/osu_latency" ] ||
    die "--bins DIR: DIR/courier/osu_latency and DIR/ompi/osu_latency"
[ -x "$build/tools/courier" ] || die "no $build/tools/courier: build courier first"
command -v mpirun.openmpi >/dev/null || die "mpirun.openmpi not found (apt-get install openmpi-bin libopenmpi-dev)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
${CC:-cc} -O2 -o "$work/floor" "$here/floor.c" || die "cannot build floor.c"
osu="-m 8:8 -i 30000 -x 3000"
one() {
    case $1 in
    floor-*) $fifo "$work/floor" "${1#floor-}" 56 100000 | awk '{print $5}' ;;
    courier) # shellcheck disable=SC2086 # $fifo and $osu are word lists
        LD_LIBRARY_PATH=$build/src COURIER_TRANSPORTS=tcp $fifo timeout 60 \
            "$build/tools/courier" run -n 2 "$bins/courier/osu_latency" $osu 2>/dev/null |
            awk '$1==8{print $2}' ;;
    ompi) # shellcheck disable=SC2086
        $fifo timeout 60 mpirun.openmpi -n 2 --mca pml ob1 --mca btl tcp,self \
            --mca btl_tcp_if_include lo "$bins/ompi/osu_latency" $osu 2>/dev/null |
            awk '$1==8{print $2}' ;;
    esac
}
names="floor-recv floor-poll floor-epoll courier ompi"
for _ in $(seq 1 "$reps"); do
    for n in $names; do
        v=$(one "$n")
        echo "$n ${v:-NA}" >>"$work/raw"
    done
done
med() { awk -v n="$1" '$1==n && $2!="NA"{print $2}' "$work/raw" | sort -g |
    awk '{v[NR]=$1} END{if(!NR){print "NA NA NA"; exit}
         printf "%.2f %.2f %.2f\n", (NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2, v[1], v[NR]}'; }
read -r om _ _ <<<"$(med ompi)"
echo "osu_latency 8 B on loopback TCP, one way (us); $reps interleaved reps${fifo:+, SCHED_FIFO}; load $(cut -d' ' -f1 /proc/loadavg)"
echo
echo "| what | median | min | max | / Open MPI |"
echo "|---|---|---|---|---|"
for n in $names; do
    read -r m lo hi <<<"$(med "$n")"
    echo "| $n | $m | $lo | $hi | $(awk -v m="$m" -v o="$om" 'BEGIN{if(m=="NA"||o=="NA")print "NA"; else printf "%.2f", m/o}') |"
done
