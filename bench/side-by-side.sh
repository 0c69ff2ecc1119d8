# Sourced by the side-by-side benchmark scripts (bench/compare.sh,
# bench/compare_coll.sh, bench/mpi/compare.sh): their common options, the Open MPI
# and MPICH toolchains, running one implementation, medians and ratios.
# A script sets `usage` and `build` (its default build dir), then calls
# sbs_options "$@"; afterwards build, reps, quick, out, np and only are set
# (--only SECTION: a script with sections runs that one alone; "" runs all).

sbs_options() {
    reps=3 quick= out= np=${np:-4} only=
    while [ $# -gt 0 ]; do
        case $1 in
        --build) build=$2; shift 2 ;;
        --only) only=$2; shift 2 ;;
        --reps) reps=$2; shift 2 ;;
        --quick) quick=--quick; shift ;;
        --out) out=$2; shift 2 ;;
        --np) np=$2; shift 2 ;;
        *) echo "usage: $usage" >&2; exit 2 ;;
        esac
    done
    courier=$build/tools/courier
    [ -x "$courier" ] || { echo "build courier first: cmake -S . -B build && cmake --build build" >&2; exit 2; }
    for c in mpicc.openmpi mpicc.mpich mpirun.openmpi mpirun.mpich; do
        command -v $c >/dev/null || {
            echo "missing $c: apt-get install -y libopenmpi-dev openmpi-bin mpich libmpich-dev" >&2
            exit 2
        }
    done
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    raw=$work/raw
    : >"$raw"
}

# sbs_build SOURCE NAME [CFLAGS...]: $work/NAME_ompi and $work/NAME_mpich
sbs_build() {
    local src=$1 name=$2
    shift 2
    mpicc.openmpi -O2 "$@" "$src" -o "$work/${name}_ompi"
    mpicc.mpich -O2 "$@" "$src" -o "$work/${name}_mpich"
}

# sbs_run IMPL NRANKS COURIER_PROGRAM NAME ARGS...: one run of one implementation
sbs_run() {
    local impl=$1 n=$2 prog=$3 name=$4
    shift 4
    case $impl in
    courier) timeout 120 "$courier" run -n "$n" "$prog" "$@" ;;
    ompi) timeout 120 mpirun.openmpi --oversubscribe -n "$n" "$work/${name}_ompi" "$@" ;;
    mpich) timeout 60 mpirun.mpich -n "$n" "$work/${name}_mpich" "$@" ;; # may busy-poll for minutes
    esac
}

# sbs_run_tcp IMPL NRANKS COURIER_PROGRAM NAME ARGS...: one run with every
# rank reaching the others over TCP on loopback (127.0.0.1), shared memory off:
#  - courier: COURIER_TRANSPORTS=tcp;
#  - Open MPI: the ob1 PML with the tcp and self BTLs (no vader), on lo (its
#    default leaves out 127.0.0.0/8 and would take eth0's address, which the
#    kernel routes through lo all the same);
#  - MPICH (Debian's 4.0.2 is built with the ch4:ucx device; `mpichversion`):
#    MPIR_CVAR_NOLOCAL=1 takes away its local shortcut, and UCX, its network
#    module, has shared-memory transports of its own (posix, sysv, cma), so
#    UCX_TLS=tcp keeps it to TCP and UCX_NET_DEVICES=lo to loopback. Either
#    alone is not enough: NOLOCAL alone still measures 0.13 us (UCX's shm).
# Checked with strace (each rank's traffic is sendto/recvfrom or writev/readv on
# one AF_INET socket to 127.0.0.1, one call per message) and by bench/compare.sh
# itself, which reports loopback packets per message.
sbs_run_tcp() {
    local impl=$1 n=$2 prog=$3 name=$4
    shift 4
    case $impl in
    courier) COURIER_TRANSPORTS=tcp timeout 300 "$courier" run -n "$n" "$prog" "$@" ;;
    ompi) timeout 300 mpirun.openmpi --oversubscribe -n "$n" --mca pml ob1 --mca btl tcp,self \
        --mca btl_tcp_if_include lo "$work/${name}_ompi" "$@" ;;
    mpich) MPIR_CVAR_NOLOCAL=1 UCX_TLS=tcp UCX_NET_DEVICES=lo \
        timeout 300 mpirun.mpich -n "$n" "$work/${name}_mpich" "$@" ;;
    esac
}

# sbs_exe IMPL COURIER_PROGRAM NAME: the executable the ranks of IMPL run
sbs_exe() {
    case $1 in
    courier) echo "$2" ;;
    *) echo "$work/${3}_$1" ;;
    esac
}

# sbs_launch_ms IMPL NRANKS COURIER_PROGRAM NAME: wall time of an empty job, in ms
sbs_launch_ms() {
    local t0 t1
    t0=$(date +%s%N)
    sbs_run "$@" hello >/dev/null 2>&1 || { echo NA; return; }
    t1=$(date +%s%N)
    awk -v d=$((t1 - t0)) 'BEGIN{printf "%.1f", d / 1e6}'
}

# sbs_median KEY...: median of the value that follows these keys in $raw
sbs_median() {
    awk -v keys="$*" 'BEGIN{n=split(keys,k," ")} {for(i=1;i<=n;i++) if($i!=k[i]) next; if($(n+1)!="NA") print $(n+1)}' "$raw" |
        sort -g | awk '{v[NR]=$1} END{if(NR==0) print "NA"; else if(NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'
}

# sbs_best KEY...: the least of those values (a time's best run: on a machine
# whose speed changes between runs, each implementation's best runs compare alike)
sbs_best() {
    awk -v keys="$*" 'BEGIN{n=split(keys,k," ")} {for(i=1;i<=n;i++) if($i!=k[i]) next; if($(n+1)!="NA") print $(n+1)}' "$raw" |
        sort -g | head -1 | awk '{print} END{if(NR==0) print "NA"}'
}

sbs_ratio() { awk -v a="$1" -v b="$2" 'BEGIN{if(a=="NA"||b=="NA"||b==0) print "—"; else printf "%.2f", a/b}'; }

sbs_machine() {
    echo "Machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(uname -r); $(date -u +%Y-%m-%d); median of $reps runs"
}
