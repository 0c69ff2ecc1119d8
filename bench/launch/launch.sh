#!/bin/bash
# Launch time of an empty MPI job (empty.c: MPI_Init, MPI_Finalize) across two
# pretend hosts, N ranks on each (default 8): `courier run`, courier's
# `mpiexec` (tools/mpiexec.c, the standard's command mapped onto courier run)
# and Open MPI's mpirun, interleaved: each repetition runs the three once, in
# turn (the order turning each repetition), so load drifts over all three
# alike. Prints the median, min and max wall time of each (ms), the ratio of
# medians to `courier run`, and the median of the per-repetition ratios (each
# against `courier run` of the same repetition, which cancels slow drift of
# the load); the goal of issue 44 is mpiexec within 10 % of courier run.
#   bench/launch/launch.sh [--build DIR] [--reps N] [--ppn N] [--out FILE.md]
# --out also writes every sample to FILE.raw. Needs root: the hosts are network
# namespaces on a bridge (tests/hosts/netns.sh), reached through one ssh-like
# wrapper for all three (tests/hosts/rsh-uts.sh): CMD run by a shell in
# namespace HOST with a hostname of its own (HOST), as bench/hosts.sh does
# (Open MPI tells nodes apart by hostname; courier gets the same wrapper so
# that the three compare alike). Open MPI: --mca plm_rsh_agent that wrapper,
# oob on the bridge's subnet, --bind-to none (each orted would bind its
# first rank to core 0), and ob1 with self,vader,tcp. A missing Open MPI
# (apt-get install -y openmpi-bin libopenmpi-dev) is skipped and said so.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$here/../../build reps=7 ppn=8 out=
usage="$0 [--build DIR] [--reps N] [--ppn N] [--out FILE.md]"
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --ppn) ppn=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: $usage" >&2; exit 2 ;;
    esac
done
case $reps$ppn in '' | *[!0-9]*) echo "usage: $usage" >&2; exit 2 ;; esac
[ "$(id -u)" -eq 0 ] || { echo "bench/launch/launch.sh: needs root (network namespaces)" >&2; exit 2; }
courier=$build/tools/courier mpiexec=$build/tools/mpiexec cc=$build/tools/courier-cc
for f in "$courier" "$mpiexec" "$cc"; do
    [ -x "$f" ] || { echo "missing $f: build courier first" >&2; exit 2; }
done
command -v unshare >/dev/null || { echo "missing unshare: apt-get install -y util-linux" >&2; exit 2; }
netns=$here/../../tests/hosts/netns.sh
ns=crlaunch a=crlaunch-1 b=crlaunch-2
work=$(mktemp -d)
cleanup() { "$netns" down $ns; rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
"$netns" up $ns 2
brip=$(ip -4 -o addr show dev $ns-br | awk '{print $4}' | cut -d/ -f1)
subnet=${brip%.*}.0/24

rsh=$here/../../tests/hosts/rsh-uts.sh

"$cc" -O2 "$here/empty.c" -o "$work/empty_courier"
impls="courier-run mpiexec" ompi='' notes=''
if command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null; then
    mpicc.openmpi -O2 "$here/empty.c" -o "$work/empty_ompi"
    ompi=$(dpkg-query -W -f '${Version}' openmpi-bin 2>/dev/null || echo "?")
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    impls="$impls ompi"
else
    echo "Open MPI missing: apt-get install -y openmpi-bin libopenmpi-dev (its column is skipped)" >&2
    notes="Open MPI not installed: its column is skipped."
fi

# reap: nothing of a run may stay in the namespaces (a run cut off by its
# timeout can leave an orted there)
reap() { "$netns" reap $ns; }

# job IMPL: the empty job, $ppn ranks on each host
job() {
    local n=$((2 * ppn))
    case $1 in
    courier-run) timeout -k 5 120 "$courier" run --hosts $a:$ppn,$b:$ppn --rsh "$rsh" \
        -n $n "$work/empty_courier" ;;
    mpiexec) timeout -k 5 120 "$mpiexec" -host $a,$b -ppn $ppn --rsh "$rsh" \
        -n $n "$work/empty_courier" ;;
    ompi) timeout -k 5 120 mpirun.openmpi --host $a:$ppn,$b:$ppn -n $n --oversubscribe \
        --bind-to none --mca plm_rsh_agent "$rsh" --mca oob_tcp_if_include "$subnet" \
        --mca pml ob1 --mca btl self,vader,tcp --mca btl_tcp_if_include "$subnet" \
        "$work/empty_ompi" ;;
    esac
}

raw=$work/raw
: >"$raw"
# one untimed run of each first: page cache, the namespaces' ARP
for impl in $impls; do job "$impl" >/dev/null 2>&1 || true; reap; done
load0=$(cut -d' ' -f1 /proc/loadavg)
set -- $impls
k=$#
for rep in $(seq 1 "$reps"); do
    # the order turns each repetition (a b c, b c a, c a b): none always runs
    # first, or always right after Open MPI's daemons were reaped
    order=$(for j in $(seq 0 $((k - 1))); do eval "echo \${$(((rep + j) % k + 1))}"; done)
    for impl in $order; do
        t0=$(date +%s%N)
        if job "$impl" >"$work/out" 2>&1; then
            t1=$(date +%s%N)
            echo "$impl $rep $(awk -v d=$((t1 - t0)) 'BEGIN{printf "%.1f", d / 1e6}')" >>"$raw"
        else
            echo "$impl $rep NA" >>"$raw"
            { echo "FAILED $impl rep $rep:"; tail -5 "$work/out"; } | tee -a "$work/err" >&2
        fi
        reap
    done
done
load1=$(cut -d' ' -f1 /proc/loadavg)

# stats IMPL: "median min max" of its samples, or NA
stats() {
    awk -v i="$1" '$1==i && $3!="NA"{print $3}' "$raw" | sort -g |
        awk '{v[NR]=$1} END{if(!NR){print "NA NA NA"; exit}
             m=(NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2; printf "%.1f %.1f %.1f\n", m, v[1], v[NR]}'
}
read -r cmed _ _ <<<"$(stats courier-run)"
# paired IMPL: the median over repetitions of IMPL's time / courier run's in it
paired() {
    awk -v i="$1" '$3!="NA"{t[$1" "$2]=$3; r[$2]=1}
        END{for(k in r) if((i" "k) in t && ("courier-run "k) in t) print t[i" "k]/t["courier-run "k]}' "$raw" |
        sort -g | awk '{v[NR]=$1} END{if(!NR){print "NA"; exit}
            printf "%.2f\n", (NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2}'
}
table() {
    echo "Empty MPI job (MPI_Init, MPI_Finalize), 2 pretend hosts x $ppn ranks, wall time in ms;"
    echo "$reps interleaved repetitions; load average $load0 before, $load1 after; $(nproc) CPUs."
    [ -z "$ompi" ] || echo "Open MPI $ompi."
    [ -z "$notes" ] || echo "$notes"
    echo
    echo "| launcher | median | min | max | median / courier run's | median of ratios in a repetition |"
    echo "|---|---|---|---|---|---|"
    for impl in $impls; do
        read -r med lo hi <<<"$(stats "$impl")"
        r=$(awk -v m="$med" -v c="$cmed" 'BEGIN{if(m=="NA"||c=="NA"||c==0)print "NA"; else printf "%.2f", m/c}')
        case $impl in
        courier-run) name='`courier run`' ;; mpiexec) name="courier's \`mpiexec\`" ;;
        ompi) name="Open MPI's \`mpirun\`" ;; esac
        echo "| $name | $med | $lo | $hi | $r | $(paired "$impl") |"
    done
    if [ -s "$work/err" ]; then
        echo
        echo "Failed runs (not in the figures), the last lines of each:"
        echo
        sed 's/^/    /' "$work/err"
    fi
}
table
if [ -n "$out" ]; then
    table >"$out"
    cp "$raw" "${out%.md}.raw"
fi
