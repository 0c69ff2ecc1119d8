#!/bin/bash
# courier beside Open MPI at 16 ranks and beyond, in one bounded run (the
# 16-core machine's short slot; bench/device-prepare.sh packs it with its
# binaries into .device/, whose run.sh calls this). Raw samples only; turn them
# into tables with bench/scale-report.sh. The programs are those of the
# side-by-side scripts, each built against courier and against Open MPI:
#   - p2p (bench/compare.sh): pingpong echo --max 4194304 --quick at 2 ranks;
#     pingpong ring at RING_N ranks (the last oversubscribed 2x);
#   - collectives (bench/compare_coll.sh): coll.c's measurement, through
#     bench/coll_sizes (coll.c with a size list): coll.c's fixed plan plus
#     broadcast 16 KiB..4 MiB, all-to-all 8..128 KiB and all-gather 8..128 KiB,
#     at COLL_N ranks; barrier and allreduce at OVER_N ranks (oversubscribed
#     2x); courier once for each name in ALGS (COURIER_COLL_ALG);
#   - MPI (bench/mpi/compare.sh): mb latency at 2 ranks; mb multi barrier
#     allreduce bcast alltoall allgather --max 65536 at NP ranks (courier once
#     per name in MB_ALGS, default ALGS);
#   - launch: mb hello (MPI_Init + MPI_Finalize) at NP and LAUNCH_N ranks;
#   - memory: bench/memhold (a token ring that holds still) under bench/memsample
#     at MEM_N ranks: the ranks' PSS, Shmem of /proc/meminfo before and during,
#     launch-to-ready and launch-to-exit; courier's NX/2 and MPI builds and
#     Open MPI's;
#   - floors: bench/floors line, ring at RING_N, futex (no library).
# Every run is bounded (timeout); a failed or cut-off run leaves "fail" lines
# in raw.txt and the run goes on. Courier and Open MPI run in turn (the order
# turns with the repetition). Order, most wanted first, each part bounded so
# that the later ones keep their time: floors; one repetition of the tables and
# launch (until MEM_RESERVE_S before the end); memory at all but the largest
# MEM_N; the other repetitions (until BIG_RESERVE_S before the end); memory at
# the largest MEM_N. A memory run's timeout is its share of the time left.
#
# Environment (defaults in brackets):
#   OUT       results folder [./scale-out]: raw.txt, log.txt, machine.txt
#   CB        courier's build (tools/courier, bench/*, bench/mpi/mpi_mb) [build]
#   OMPI_BIN  Open MPI builds: pingpong coll_sizes mb memhold, each NAME_ompi
#             [$OUT/ompi-bin, built here with mpicc.openmpi when missing]
#   OMPI_ENV  a file to source before every Open MPI command (a relocated Open
#             MPI's env.sh) [none: orterun from PATH]
#   ALGS      names for COURIER_COLL_ALG: courier runs every collective row of
#             the collective table once per name ["auto"]; MB_ALGS likewise for
#             the collectives of the MPI table ["auto"; e.g. MB_ALGS="$ALGS"]
#   REPS [2], MEM_REPS [1], BUDGET_S [400]: seconds for the whole run; a run
#             gets at most what is left; MEM_RESERVE_S [220], BIG_RESERVE_S [130]
#   SECTIONS  [floors p2p ring coll mpi launch mem]
#   NP [16] RING_N ["8 16 32"] COLL_N ["8 16"] OVER_N [32] LAUNCH_N [1024]
#   MEM_N ["256 1024 4096"] MEM_IMPLS ["courier ompi courier-mpi"]
#   MEM_BIG_IMPLS (at the largest MEM_N) ["courier ompi"]
#   SMALL=1   a dry run for a 2-core machine: NP=4 RING_N="2 4 8" COLL_N="2 4"
#             OVER_N=8 LAUNCH_N=64 MEM_N="64 128" (anything set explicitly wins)
set -u
here=$(cd "$(dirname "$0")" && pwd)
if [ "${SMALL:-0}" = 1 ]; then
    : "${NP:=4}" "${RING_N:=2 4 8}" "${COLL_N:=2 4}" "${OVER_N:=8}" "${LAUNCH_N:=64}" "${MEM_N:=64 128}"
fi
OUT=${OUT:-./scale-out} CB=${CB:-build} ALGS=${ALGS:-auto} MB_ALGS=${MB_ALGS:-auto}
REPS=${REPS:-2} MEM_REPS=${MEM_REPS:-1} BUDGET_S=${BUDGET_S:-400}
MEM_RESERVE_S=${MEM_RESERVE_S:-220} BIG_RESERVE_S=${BIG_RESERVE_S:-130}
SECTIONS=${SECTIONS:-floors p2p ring coll mpi launch mem}
NP=${NP:-16} RING_N=${RING_N:-8 16 32} COLL_N=${COLL_N:-8 16} OVER_N=${OVER_N:-32}
LAUNCH_N=${LAUNCH_N:-1024} MEM_N=${MEM_N:-256 1024 4096} MEM_IMPLS=${MEM_IMPLS:-courier ompi courier-mpi}
MEM_BIG_IMPLS=${MEM_BIG_IMPLS:-courier ompi}
OMPI_ENV=${OMPI_ENV:-}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
CB=$(cd "$CB" && pwd) || exit 2
raw=$OUT/raw.txt log=$OUT/log.txt
: >"$raw"
: >"$log"
t_start=$(date +%s)
courier=$CB/tools/courier
ncpu=$(nproc)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ulimit -n "$(ulimit -Hn)" 2>/dev/null
ulimit -u unlimited 2>/dev/null || ulimit -u "$(ulimit -Hu)" 2>/dev/null

say() { echo "[$(($(date +%s) - t_start))s] $*" | tee -a "$log" >&2; }
elapsed() { echo $(($(date +%s) - t_start)); }
# left [RESERVE]: seconds left of the budget, less RESERVE
left() { echo $((BUDGET_S - ${1:-0} - $(elapsed))); }
# bound T [RESERVE]: T cut to what is left (0: less than 3 s left)
bound() {
    local l
    l=$(left "${2:-0}")
    [ "$l" -lt 3 ] && { echo 0; return; }
    [ "$1" -lt "$l" ] && echo "$1" || echo "$l"
}
# rec IMPL ALG RANKS METRIC SIZE VALUE
rec() { echo "$*" >>"$raw"; }

# ---- the Open MPI programs ---------------------------------------------------------
# with_ompi CMD...: CMD with Open MPI's environment (OMPI_ENV sourced in a subshell)
with_ompi() (
    # shellcheck disable=SC1090 # given at run time
    if [ -n "$OMPI_ENV" ]; then . "$OMPI_ENV"; fi
    exec "$@"
)
# orterun_args N: the launcher's command line for N ranks (no binding past the cores)
orterun_args() {
    echo "orterun --oversubscribe -np $1"
    [ "$1" -gt "$ncpu" ] && echo "--bind-to none"
}
if [ -z "${OMPI_BIN:-}" ]; then
    OMPI_BIN=$OUT/ompi-bin
    mkdir -p "$OMPI_BIN"
    say "building the Open MPI programs into $OMPI_BIN"
    mpicc.openmpi -O2 -DUSE_MPI "$here/pingpong.c" -o "$OMPI_BIN/pingpong_ompi" &&
        mpicc.openmpi -O2 -DUSE_MPI "$here/coll_sizes.c" -o "$OMPI_BIN/coll_sizes_ompi" &&
        mpicc.openmpi -O2 "$here/mpi/mb.c" -o "$OMPI_BIN/mb_ompi" &&
        mpicc.openmpi -O2 -DUSE_MPI "$here/memhold.c" -o "$OMPI_BIN/memhold_ompi" || exit 2
fi
OMPI_BIN=$(cd "$OMPI_BIN" && pwd)

# reap_strays: after a failed or cut-off job, end (by pid) any process still
# running one of this run's benchmark programs, so that it cannot slow what follows
reap_strays() {
    local p e n=0
    for p in /proc/[0-9]*; do
        e=$(readlink "$p/exe" 2>/dev/null) || continue
        case $e in "$CB"/bench/* | "$OMPI_BIN"/*) kill -9 "${p#/proc/}" 2>/dev/null && n=$((n + 1)) ;; esac
    done
    [ $n = 0 ] || say "ended $n processes left behind"
}

# job IMPL ALG N TIMEOUT PROG ARGS...: one job, stdout on stdout; IMPL courier or
# ompi; PROG pingpong coll_sizes mb memhold (courier: CB/bench/..., Open MPI:
# OMPI_BIN/PROG_ompi); a failure or a timeout is recorded and logged
job() {
    local impl=$1 alg=$2 n=$3 t=$4 prog=$5 rc=0 t0 t1 exe what
    shift 5
    what=$prog
    case ${1:-} in -* | "") ;; *) what=$prog:$1 ;; esac
    if [ "$t" -le 0 ]; then
        rec "$impl $alg $n fail:$what 0 skipped"
        say "skipped (out of time): $impl $alg $n $prog $*"
        return 1
    fi
    t0=$(date +%s%N)
    case $impl in
    courier)
        case $prog in mb) exe=$CB/bench/mpi/mpi_mb ;; *) exe=$CB/bench/$prog ;; esac
        if [ "$alg" = - ]; then
            timeout -k 5 "$t" "$courier" run -n "$n" "$exe" "$@" 2>>"$log" || rc=$?
        else
            COURIER_COLL_ALG=$alg timeout -k 5 "$t" "$courier" run -n "$n" "$exe" "$@" 2>>"$log" || rc=$?
        fi
        ;;
    ompi)
        # shellcheck disable=SC2046 # orterun_args: words
        with_ompi timeout -k 5 "$t" $(orterun_args "$n") "$OMPI_BIN/${prog}_ompi" "$@" 2>>"$log" || rc=$? ;;
    esac
    t1=$(date +%s%N)
    echo "  $impl alg=$alg n=$n $prog $* -> rc $rc, $(((t1 - t0) / 1000000)) ms" >>"$log"
    if [ $rc != 0 ]; then
        reap_strays
        rec "$impl $alg $n fail:$what 0 $([ $rc = 124 ] || [ $rc = 137 ] && echo timeout || echo rc$rc)"
        return 1
    fi
}

# ---- the machine -------------------------------------------------------------------
{
    echo "date $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "cpus $ncpu"
    echo "model $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)"
    echo "kernel $(uname -r)"
    echo "glibc $(ldd --version 2>/dev/null | head -1)"
    echo "os $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")"
    echo "memtotal_kb $(awk '$1=="MemTotal:"{print $2}' /proc/meminfo)"
    echo "memavailable_kb $(awk '$1=="MemAvailable:"{print $2}' /proc/meminfo)"
    echo "cgroup_memory_max $(cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || echo none)"
    echo "cgroup_pids_max $(cat /sys/fs/cgroup/pids.max 2>/dev/null || echo none)"
    echo "pid_max $(cat /proc/sys/kernel/pid_max) threads_max $(cat /proc/sys/kernel/threads-max)"
    echo "ulimit_n $(ulimit -n) ulimit_u $(ulimit -u)"
    echo "dev_shm $(df -k /dev/shm 2>/dev/null | awk 'NR==2{print $2 " kB, " $4 " kB free"}')"
    echo "loadavg $(cat /proc/loadavg)"
    echo "courier $("$courier" info 2>/dev/null | head -1) ($courier)"
    echo "ompi $(with_ompi orterun --version 2>/dev/null | head -1)"
    echo "algs $ALGS; mb_algs $MB_ALGS; reps $REPS; mem_reps $MEM_REPS; budget_s $BUDGET_S; small ${SMALL:-0}"
    echo "np $NP; ring_n $RING_N; coll_n $COLL_N; over_n $OVER_N; launch_n $LAUNCH_N; mem_n $MEM_N; mem_impls $MEM_IMPLS; mem_big_impls $MEM_BIG_IMPLS"
} >"$OUT/machine.txt"
cat "$OUT/machine.txt" >>"$log"

has() { case " $SECTIONS " in *" $1 "*) return 0 ;; esac; return 1; }
order() { [ $(($1 % 2)) = 1 ] && echo courier ompi || echo ompi courier; }

# ---- floors (once: they move little) -----------------------------------------------
if has floors; then
    say "floors"
    timeout 20 "$CB/bench/floors" line | awk '{print "floor - 2 line 0", $3}' >>"$raw"
    for n in $RING_N; do
        timeout 20 "$CB/bench/floors" ring "$n" | awk -v n="$n" '{print "floor - " n " ring 0", $3}' >>"$raw"
    done
    timeout 20 "$CB/bench/floors" futex | awk '{print "floor - 2 futex 0", $3}' >>"$raw"
fi

# ---- the tables: one repetition of each, courier and Open MPI in turn ---------------
coll_sizes="barrier:0 allreduce:8,1024,65536 bcast:8,16384,65536,262144,1048576,4194304"
coll_sizes="$coll_sizes alltoall:8,1024,8192,32768,131072 allgather:8,1024,8192,32768,131072"
# tables REP RESERVE: every table section once; runs stop RESERVE s before the budget's end
tables() {
    local rep=$1 reserve=$2 n it impl alg algs sizes t t0 t1
    tt() { bound "$1" "$reserve"; }
    if has p2p; then
        say "rep $rep: p2p echo"
        for impl in $(order "$rep"); do
            job "$impl" - 2 "$(tt 60)" pingpong echo --max 4194304 --quick |
                awk -v i="$impl" '$1=="echo"{print i, "- 2 lat", $2, $3; print i, "- 2 bw", $2, $4}' >>"$raw"
        done
    fi
    if has ring; then
        for n in $RING_N; do
            say "rep $rep: ring $n"
            it=20000
            [ "$n" -gt "$ncpu" ] && it=4000
            for impl in $(order "$rep"); do
                job "$impl" - "$n" "$(tt 40)" pingpong ring --iters $it |
                    awk -v i="$impl" -v n="$n" '$1=="ring"{print i, "-", n, "ring 0", $3}' >>"$raw"
            done
        done
    fi
    if has coll; then
        for n in $COLL_N $OVER_N; do
            sizes=$coll_sizes
            [ "$n" = "$OVER_N" ] && sizes="barrier:0 allreduce:8,1024,65536"
            say "rep $rep: collectives at $n ranks (courier: $ALGS)"
            for impl in $(order "$rep"); do
                if [ "$impl" = courier ]; then algs=$ALGS; else algs=-; fi
                for alg in $algs; do
                    # shellcheck disable=SC2086 # sizes: a list
                    job "$impl" "$alg" "$n" "$(tt 60)" coll_sizes --quick $sizes |
                        awk -v i="$impl" -v a="$alg" -v n="$n" '$1=="coll"{print i, a, n, "coll:" $2, $3, $4}' >>"$raw"
                done
            done
        done
    fi
    if has mpi; then
        say "rep $rep: MPI (mb) latency at 2, the rest at $NP ranks (courier: $MB_ALGS)"
        for impl in $(order "$rep"); do
            job "$impl" - 2 "$(tt 60)" mb latency --quick --max 4194304 |
                awk -v i="$impl" 'NF==3{print i, "- 2 mb:" $1, $2, $3}' >>"$raw"
            job "$impl" - "$NP" "$(tt 60)" mb multi --quick --max 65536 |
                awk -v i="$impl" -v n="$NP" 'NF==3{print i, "-", n, "mb:" $1, $2, $3}' >>"$raw"
            if [ "$impl" = courier ]; then algs=$MB_ALGS; else algs=-; fi
            for alg in $algs; do
                for t in barrier allreduce bcast alltoall allgather; do
                    job "$impl" "$alg" "$NP" "$(tt 60)" mb $t --quick --max 65536 |
                        awk -v i="$impl" -v a="$alg" -v n="$NP" 'NF==3{print i, a, n, "mb:" $1, $2, $3}' >>"$raw"
                done
            done
        done
    fi
    if has launch; then # MPI_Init + MPI_Finalize, the launcher's wall time
        for n in $NP $LAUNCH_N; do
            say "rep $rep: launch $n ranks"
            for impl in $(order "$rep"); do
                t0=$(date +%s%N)
                if job "$impl" - "$n" "$(tt 90)" mb hello >/dev/null; then
                    t1=$(date +%s%N)
                    rec "$impl - $n launch 0 $(awk -v d=$((t1 - t0)) 'BEGIN{printf "%.1f", d / 1e6}')"
                fi
            done
        done
    fi
}

# ---- memory ------------------------------------------------------------------------
# memory "N..." "IMPL..." RESERVE: bench/memhold under bench/memsample; each run's
# timeout is its fair share of what is left (less RESERVE), at most 30 + N/40 s
memory() {
    local ns=$1 impls=$2 reserve=$3 n rep impl t k todo base cmd line rd=$OUT/.ready rl=$OUT/.release
    local ms=$CB/bench/memsample
    has mem || return 0
    todo=$(($(echo "$ns" | wc -w) * $(echo "$impls" | wc -w) * MEM_REPS))
    for n in $ns; do
        base=$((30 + n / 40)) # 256: 36 s, 1024: 55 s, 4096: 132 s
        for rep in $(seq "$MEM_REPS"); do
            for impl in $impls; do
                k=$(left "$reserve")
                t=$((k / todo))
                [ "$t" -gt "$base" ] && t=$base
                todo=$((todo - 1))
                if [ "$t" -lt 5 ]; then
                    rec "$impl - $n mem:status 0 skipped"
                    say "memory: $impl, $n ranks: skipped (out of time)"
                    continue
                fi
                say "memory: $impl, $n ranks (timeout $t s)"
                case $impl in
                courier) cmd=("$ms" --timeout "$t" memhold "$rd" "$rl" -- "$courier" run -n "$n"
                              "$CB/bench/memhold" "$rd" "$rl" "$t") ;;
                courier-mpi) cmd=("$ms" --timeout "$t" memhold_mpi "$rd" "$rl" -- "$courier" run -n "$n"
                                  "$CB/bench/memhold_mpi" "$rd" "$rl" "$t") ;;
                ompi) # shellcheck disable=SC2207 # orterun_args: words
                    cmd=(with_ompi "$ms" --timeout "$t" memhold_ompi "$rd" "$rl" -- $(orterun_args "$n")
                           "$OMPI_BIN/memhold_ompi" "$rd" "$rl" "$t") ;;
                esac
                line=$("${cmd[@]}" 2>>"$log")
                echo "  $impl $n: $line" >>"$log"
                echo "$line" | tr ' ' '\n' | awk -F= -v i="$impl" -v n="$n" 'NF==2{print i, "-", n, "mem:" $1, 0, $2}' >>"$raw"
                say "memory: $impl, $n ranks: $(echo "$line" | cut -d' ' -f1-3)"
                rm -f "$rd" "$rl"
            done
        done
    done
}

# In order of what matters most, each part bounded so that the later ones keep
# their time: one repetition of the tables (stopping MEM_RESERVE_S before the
# end), memory at all but the largest MEM_N, the other repetitions (stopping
# BIG_RESERVE_S before the end), memory at the largest MEM_N (MEM_BIG_IMPLS).
small_n=$(echo "$MEM_N" | awk '{$NF=""; print}') big_n=$(echo "$MEM_N" | awk '{print $NF}')
tables 1 "$MEM_RESERVE_S"
memory "$small_n" "$MEM_IMPLS" "$BIG_RESERVE_S"
for rep in $(seq 2 "$REPS"); do tables "$rep" "$BIG_RESERVE_S"; done
memory "$big_n" "$MEM_BIG_IMPLS" 0
say "done in $(elapsed) s; raw samples: $raw"
