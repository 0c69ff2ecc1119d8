#!/bin/bash
# Jobs across hosts, side by side: courier, Open MPI and MPICH on pretend hosts,
# two network namespaces joined by veth pairs on a bridge (tests/hosts/netns.sh;
# root only), in the same run, interleaved. The same sources (bench/pingpong.c,
# bench/coll.c) are built against courier and, with mpicc.openmpi / mpicc.mpich,
# against each MPI. Measured, ranks split over both hosts:
#   - p2p, `pingpong echo --max 4194304 --quick`, one rank per host: one-way
#     latency of 0 B and 8 B, ping-pong bandwidth (size / one-way time) of
#     64 KiB and 4 MiB, for courier tcp (the default across hosts), courier ucx
#     (COURIER_TRANSPORTS=shm,ucx), Open MPI ob1 + the tcp BTL, Open MPI's ucx
#     PML, and MPICH (Debian's is ch4:ucx; UCX over TCP);
#   - collectives, `coll --quick` (every operation and size coll.c has, as in
#     bench/compare_coll.sh), 2 hosts x 2 ranks: courier as it chooses (shm
#     within a host, tcp across), Open MPI ob1 with vader + tcp, as it comes
#     and with mpi_yield_when_idle 1, MPICH. The 4 ranks share this machine's
#     2 cores, which neither MPI knows (each host's daemon sees 2 ranks on 2
#     cores): their busy-polling ranks wait for each other's time slices,
#     4-40 ms an operation. Open MPI yields the CPU when it knows a node is
#     oversubscribed; the yield column is what it does then. MPICH's
#     MPIR_CVAR_POLLS_BEFORE_YIELD=1 changed nothing here (ch4:ucx);
#   - launch: wall time of an empty job (`pingpong hello`), 2 hosts x 1 and
#     2 hosts x 8 ranks: courier run, mpirun.openmpi, mpiexec.hydra (MPICH).
#   bench/hosts.sh [--build DIR] [--reps N] [--out FILE.md]
# Prints a Markdown table of medians with ratios (--out also writes FILE.md
# and every sample to FILE.raw). About 75 s a rep on a quiet 2-core machine
# (--reps 5: 6 minutes); up to 5 minutes a rep on a loaded one. Needs root; Open MPI and MPICH columns need the Debian packages
# (openmpi-bin libopenmpi-dev, mpich libmpich-dev): a missing one is skipped,
# with the apt-get line, and the table says so.
#
# How each starts its ranks in the namespaces, and why:
#  - All three are given the same ssh-like command, tests/hosts/rsh-uts.sh:
#    `rsh-uts.sh [-x] HOST CMD...` runs CMD through a shell in namespace HOST,
#    in a UTS namespace of its own whose hostname is HOST (`ip netns exec
#    HOST unshare --uts`). The
#    namespaces share this machine's hostname, and both MPIs tell nodes apart
#    by hostname (Open MPI's daemons report it; hydra's proxies and MPICH's
#    node map use it): with one name for both, they would take the two hosts
#    for one node. courier does not need the hostnames (--rsh "ip netns exec"
#    works as well); it gets the same wrapper so that launch times compare
#    alike (the wrapper costs a few ms a host more than plain ip netns exec).
#  - courier: courier run --hosts A:n,B:n --rsh rsh-uts.sh.
#  - Open MPI: mpirun.openmpi --host A:n,B:n --mca plm_rsh_agent rsh-uts.sh,
#    oob and btl_tcp_if_include on the bridge's subnet, and --bind-to none.
#    Why --bind-to none: each host's orted sees the whole machine as its node
#    and binds its first rank to core 0, so with one rank per host both ranks
#    land on the same CPU; they busy-poll, each waits for the other's time
#    slice, and `echo` crawls at 8-20 ms a round trip on a loaded machine
#    (22,000 round trips for 0 B alone: what looked like a hang
#    in the first version of this script: the connection and the messages were
#    fine, seen with btl_base_verbose, ss and strace). courier binds only when
#    ranks outnumber CPUs (--bind auto) and MPICH does not bind, so no one is
#    bound here. Its ucx PML declines to run without InfiniBand unless told
#    pml_ucx_tls=any and pml_ucx_devices=any.
#  - MPICH: mpiexec.hydra -launcher ssh -launcher-exec rsh-uts.sh -hosts A:n,B:n
#    -localhost ADDR: the hydra proxies call back to ADDR (the bridge's
#    address here); by default they are given this machine's hostname, which
#    /etc/hosts may map to 127.0.0.1, a namespace's own loopback.
#  - UCX (courier ucx, Open MPI ucx, MPICH): UCX_TLS=tcp UCX_NET_DEVICES=eth0.
#    The namespaces share one kernel and /dev/shm, and UCX takes them for one
#    machine: left to itself MPICH goes through shared memory across the two
#    "hosts" (0.3 us), which is no measure of the network.
# Timing is noisy (veth pairs, a bridge, 2 busy-polling MPIs on 2 cores): use
# the medians, run it twice, and run it on a quiet machine.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$here/../build reps=3 out=
usage="$0 [--build DIR] [--reps N] [--out FILE.md]"
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: $usage" >&2; exit 2 ;;
    esac
done
case $reps in '' | *[!0-9]*) echo "usage: $usage" >&2; exit 2 ;; esac
[ "$(id -u)" -eq 0 ] || { echo "bench/hosts.sh: needs root (network namespaces)" >&2; exit 2; }
courier=$build/tools/courier pp=$build/bench/pingpong cb=$build/bench/coll_bench
for f in "$courier" "$pp" "$cb"; do
    [ -x "$f" ] || { echo "missing $f: build courier first" >&2; exit 2; }
done
command -v unshare >/dev/null || { echo "missing unshare: apt-get install -y util-linux" >&2; exit 2; }
netns=$here/../tests/hosts/netns.sh
ns=crbench2 a=crbench2-1 b=crbench2-2
work=$(mktemp -d)
cleanup() { "$netns" down $ns; rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
"$netns" up $ns 2
brip=$(ip -4 -o addr show dev $ns-br | awk '{print $4}' | cut -d/ -f1)
subnet=${brip%.*}.0/24
raw=$work/raw
: >"$raw"

rsh=$here/../tests/hosts/rsh-uts.sh

# The MPIs: built from the same sources, or skipped with the apt-get line
ompi='' mpich='' notes=''
if command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null; then
    mpicc.openmpi -O2 -DUSE_MPI "$here/pingpong.c" -o "$work/pp_ompi"
    mpicc.openmpi -O2 -DUSE_MPI "$here/coll.c" -o "$work/coll_ompi"
    ompi=$(dpkg-query -W -f '${Version}' openmpi-bin 2>/dev/null || echo "?")
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
else
    echo "Open MPI missing: apt-get install -y openmpi-bin libopenmpi-dev (its columns are skipped)" >&2
    notes="$notes Open MPI not installed (apt-get install -y openmpi-bin libopenmpi-dev): its columns are skipped."
fi
if command -v mpicc.mpich >/dev/null && command -v mpiexec.hydra >/dev/null; then
    mpicc.mpich -O2 -DUSE_MPI "$here/pingpong.c" -o "$work/pp_mpich"
    mpicc.mpich -O2 -DUSE_MPI "$here/coll.c" -o "$work/coll_mpich"
    mpich=$(dpkg-query -W -f '${Version}' mpich 2>/dev/null || echo "?")
else
    echo "MPICH missing: apt-get install -y mpich libmpich-dev (its columns are skipped)" >&2
    notes="$notes MPICH not installed (apt-get install -y mpich libmpich-dev): its columns are skipped."
fi

# reap: after a run, nothing of it may stay in the namespaces (a run cut off by
# its timeout can leave an orted or a hydra proxy there)
reap() { "$netns" reap $ns; }

# job IMPL N PROG ARGS...: one job of IMPL, N ranks on each host; PROG is pp or
# coll; IMPL courier-tcp, courier-ucx, ompi-tcp, ompi-ucx or mpich
job() {
    local impl=$1 n=$2 prog=$3 exe rc=0
    shift 3
    case $impl in
    courier*) [ "$prog" = pp ] && exe=$pp || exe=$cb ;;
    ompi*) exe=$work/${prog}_ompi ;;
    mpich) exe=$work/${prog}_mpich ;;
    esac
    case $impl in
    courier-tcp) timeout -k 5 120 "$courier" run --hosts $a:"$n",$b:"$n" --rsh "$rsh" \
        -n $((2 * n)) "$exe" "$@" || rc=$? ;;
    courier-ucx) COURIER_TRANSPORTS=shm,ucx UCX_TLS=tcp UCX_NET_DEVICES=eth0 \
        timeout -k 5 120 "$courier" run --hosts $a:"$n",$b:"$n" --rsh "$rsh" \
        -n $((2 * n)) "$exe" "$@" || rc=$? ;;
    ompi-tcp | ompi-yield) timeout -k 5 120 mpirun.openmpi --host $a:"$n",$b:"$n" -n $((2 * n)) \
        --bind-to none --mca plm_rsh_agent "$rsh" --mca oob_tcp_if_include "$subnet" \
        --mca pml ob1 --mca btl self,vader,tcp --mca btl_tcp_if_include "$subnet" \
        --mca mpi_yield_when_idle "$([ "$impl" = ompi-yield ] && echo 1 || echo 0)" \
        "$exe" "$@" || rc=$? ;;
    ompi-ucx) timeout -k 5 120 mpirun.openmpi --host $a:"$n",$b:"$n" -n $((2 * n)) \
        --bind-to none --mca plm_rsh_agent "$rsh" --mca oob_tcp_if_include "$subnet" \
        --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any --mca btl self \
        -x UCX_TLS=tcp -x UCX_NET_DEVICES=eth0 "$exe" "$@" || rc=$? ;;
    mpich) UCX_TLS=tcp UCX_NET_DEVICES=eth0 timeout -k 5 120 mpiexec.hydra -launcher ssh \
        -launcher-exec "$rsh" -localhost "$brip" -hosts $a:"$n",$b:"$n" -n $((2 * n)) \
        "$exe" "$@" || rc=$? ;;
    esac
    reap
    return $rc
}

# launch_ms IMPL N: wall time of an empty job, N ranks on each host, in ms
launch_ms() {
    local t0 t1
    t0=$(date +%s%N)
    job "$1" "$2" pp hello >/dev/null 2>&1 || { echo NA; return; }
    t1=$(date +%s%N)
    awk -v d=$((t1 - t0)) 'BEGIN{printf "%.1f", d / 1e6}'
}

# coll_job IMPL: `coll --quick`, 2 hosts x 2 ranks, on standard output. MPICH's
# job prints every figure and then hangs in MPI_Finalize (one rank in UCX's
# endpoint close, flushing to peers that have gone on to the PMI barrier and no
# longer progress UCX; seen with gdb): a job whose last line is out and that
# has not ended 10 s later is ended here and said so under the table, its
# figures kept (they were all taken before MPI_Finalize).
coll_job() {
    local impl=$1 jp i last=0
    job "$impl" 2 coll --quick >"$work/coll.out" 2>>"$work/err" &
    jp=$!
    for i in $(seq 1 260); do # bounded: the job's own timeout is 120 s
        kill -0 $jp 2>/dev/null || break
        if [ "$last" = 0 ] && grep -q '^coll allgather 1024 ' "$work/coll.out"; then last=$i; fi
        if [ "$last" != 0 ] && [ $((i - last)) -ge 20 ]; then
            echo "FAILED $impl coll: hung after its last line (in MPI_Finalize), ended" >>"$work/err"
            pkill -TERM -P $jp 2>/dev/null || true # the job's timeout, which ends the launcher
            break
        fi
        sleep 0.5
    done
    wait $jp || [ "$last" != 0 ] || echo "FAILED $impl coll: exit status or timeout" >>"$work/err"
    reap
    cat "$work/coll.out"
}

p2p_impls=courier-tcp coll_impls=courier-tcp launch_impls=courier-tcp
[ -z "$ompi" ] || { p2p_impls="$p2p_impls ompi-tcp ompi-ucx"; coll_impls="$coll_impls ompi-tcp ompi-yield"; launch_impls="$launch_impls ompi-tcp"; }
p2p_impls="$p2p_impls courier-ucx"
[ -z "$mpich" ] || { p2p_impls="$p2p_impls mpich"; coll_impls="$coll_impls mpich"; launch_impls="$launch_impls mpich"; }
load0=$(cut -d' ' -f1 /proc/loadavg)
t_start=$(date +%s)
for rep in $(seq 1 "$reps"); do
    for impl in $p2p_impls; do
        echo "rep $rep: p2p $impl" >&2
        { job "$impl" 1 pp echo --max 4194304 --quick 2>>"$work/err" || echo "FAILED $impl p2p: exit status or timeout" >>"$work/err"; } |
            awk -v i="$impl" '$1=="echo" && ($2==0 || $2==8) {print i, "lat", $2, $3}
                              $1=="echo" && ($2==65536 || $2==4194304) {print i, "bw", $2, $4}' >>"$raw"
    done
    for impl in $coll_impls; do
        echo "rep $rep: coll $impl" >&2
        coll_job "$impl" | awk -v i="$impl" '$1=="coll"{print i, "coll", $2 "/" $3, $4}' >>"$raw"
    done
    for n in 1 8; do
        for impl in $launch_impls; do
            echo "$impl launch $n $(launch_ms "$impl" $n)" >>"$raw"
        done
    done
done
t_end=$(date +%s)
load1=$(cut -d' ' -f1 /proc/loadavg)

# med IMPL KIND KEY: median of the samples; "NA" when there are none
med() {
    awk -v i="$1" -v k="$2" -v s="$3" '$1==i && $2==k && $3==s && $4!="NA" {print $4}' "$raw" |
        sort -g | awk '{v[NR]=$1} END{if(NR==0) print "NA"; else if(NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{if(a=="NA"||b=="NA"||b==0) print "—"; else printf "%.2f", a/b}'; }
# cell IMPL KIND KEY: the median, or why there is none
cell() {
    case $1 in ompi*) [ -n "$ompi" ] || { echo "skipped"; return; } ;; mpich) [ -n "$mpich" ] || { echo "skipped"; return; } ;; esac
    med "$@"
}
{
    echo "Machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(uname -r); $(date -u +%Y-%m-%d);" \
        "median of $reps runs; 2 network namespaces on a bridge (veth pairs); load average $load0 at the start," \
        "$load1 at the end; $((t_end - t_start)) s. Open MPI ${ompi:-none}, MPICH ${mpich:-none}.${notes}"
    echo
    echo "Point to point, one rank on each host (\`pingpong echo --quick\`): one-way latency in us, ping-pong bandwidth in MB/s"
    echo
    echo "(ratios: below 1 is courier faster for latency, above 1 is courier faster for bandwidth)"
    echo
    echo "| measure | courier tcp | courier ucx | Open MPI tcp (ob1) | Open MPI ucx | MPICH (ucx over tcp) | courier tcp/Open MPI tcp | courier tcp/MPICH |"
    echo "|---|---|---|---|---|---|---|---|"
    for row in "lat 0 latency 0 B (us)" "lat 8 latency 8 B (us)" "bw 65536 bandwidth 64 KiB (MB/s)" "bw 4194304 bandwidth 4 MiB (MB/s)"; do
        read -r k s what <<<"$row"
        c=$(cell courier-tcp "$k" "$s") o=$(cell ompi-tcp "$k" "$s") m=$(cell mpich "$k" "$s")
        echo "| $what | $c | $(cell courier-ucx "$k" "$s") | $o | $(cell ompi-ucx "$k" "$s") | $m | $(ratio "$c" "$o") | $(ratio "$c" "$m") |"
    done
    echo
    echo "Collectives, 2 hosts x 2 ranks (\`coll --quick\`): time per operation in us (the slowest rank's)"
    echo
    echo "| operation | bytes | courier | Open MPI | Open MPI, yield when idle | MPICH | courier/Open MPI | courier/Open MPI yield | courier/MPICH |"
    echo "|---|---|---|---|---|---|---|---|---|"
    awk '$1=="courier-tcp" && $2=="coll" {print $3}' "$raw" | awk '!seen[$0]++' | while read -r key; do
        c=$(cell courier-tcp coll "$key") o=$(cell ompi-tcp coll "$key") y=$(cell ompi-yield coll "$key") m=$(cell mpich coll "$key")
        echo "| ${key%/*} | ${key#*/} | $c | $o | $y | $m | $(ratio "$c" "$o") | $(ratio "$c" "$y") | $(ratio "$c" "$m") |"
    done
    echo
    echo "Launch: wall time of an empty job (\`pingpong hello\`) in ms"
    echo
    echo "| ranks | courier | Open MPI (mpirun) | MPICH (mpiexec.hydra) | courier/Open MPI | courier/MPICH |"
    echo "|---|---|---|---|---|---|"
    for n in 1 8; do
        c=$(cell courier-tcp launch $n) o=$(cell ompi-tcp launch $n) m=$(cell mpich launch $n)
        echo "| 2 hosts x $n | $c | $o | $m | $(ratio "$c" "$o") | $(ratio "$c" "$m") |"
    done
    if grep -q '^FAILED ' "$work/err" 2>/dev/null; then
        echo
        echo "Runs that failed, were cut off (timeout 120 s) or were ended:"
        echo
        grep '^FAILED ' "$work/err" | sort | uniq -c | awk '{$1 = "- " $1 " x"; $2 = ""; print}'
    fi
} | tee "${out:-/dev/null}"
[ -z "$out" ] || cp "$raw" "${out%.md}.raw" # every sample: impl kind size-or-key value
