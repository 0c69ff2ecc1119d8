#!/bin/bash
# busy.sh: courier beside Open MPI (and MPICH) on a machine with other work on it.
# For each load N (CPU-bound processes it starts itself, bench/load.c, unbound,
# as another user's jobs would be) and each rank count, every test runs once per
# implementation per repetition, interleaved, so that all see the same machine:
#   latency    osu_latency, 8 bytes, 2 ranks (us)
#   bw         osu_bw, 64 KiB, 2 ranks (MB/s; turned into time per byte)
#   bcast allreduce alltoall   osu_<name>, 8 bytes (alltoall: 1 KiB), NP ranks (us)
#   pingpong   IMB-MPI1 PingPong, 8 bytes, 2 ranks (us)
#   imb_allreduce  IMB-MPI1 Allreduce, 8 bytes, NP ranks (t_avg, us)
# It prints one Markdown table: per load, rank count and test, Open MPI's median,
# courier's median and worst repetition, the worst as a ratio of Open MPI's
# median (the goal: at most 1.5, never 10), and how many repetitions passed 1.5x.
# Beside it, Open MPI's own worst repetition over its median: the same yardstick
# held to Open MPI, which shows how much of a row is the machine's placement.
# A run that does not finish in 120 s counts as 120 s (and is listed).
#
# usage: bench/mpi/busy.sh --bins DIR [--loads "0 1 2 4 8 16"] [--np "2 4"]
#            [--reps 5] [--tests "latency bw bcast allreduce alltoall pingpong imb_allreduce"]
#            [--mpich] [--courier BUILD] [--out FILE.md]     (samples: FILE.md.raw)
#        bench/mpi/busy.sh --table FILE.md.raw   (the table again from kept samples)
# --bins DIR holds the benchmark programs, built beforehand from their own
# sources (this script builds nobody's project): DIR/courier/, DIR/ompi/ and,
# with --mpich, DIR/mpich/, each with osu_latency osu_bw osu_bcast
# osu_allreduce osu_alltoall (OSU 7.x, built with build/tools/courier-cc,
# mpicc.openmpi, mpicc.mpich) and IMB-MPI1 (Intel MPI Benchmarks, `make
# IMB-MPI1 CC=... CXX=...`; Open MPI's C++ headers want
# CXX="mpicxx.openmpi -DOMPI_SKIP_MPICXX=1"). A missing program skips its test.
# Timing goals live here, never in tests.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bins="" loads="0 1 2 4 8 16" nps="2 4" reps=5 mpich=0 out="" build=$root/build
tests="latency bw bcast allreduce alltoall pingpong imb_allreduce"
die() { echo "busy.sh: $*" >&2; exit 2; }
# table RAW: the Markdown table of RAW's lines "LOAD NP TEST IMPL MICROSECONDS"
table() {
    echo "| load | ranks | test | Open MPI median (us) | Open MPI worst / its median | courier median (us) | courier worst (us) | worst / Open MPI | reps > 1.5x |"
    echo "|---|---|---|---|---|---|---|---|---|"
    awk '
    function med(s,   a, n, i, j, t) { n = split(s, a, " "); for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }; return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
    { k = $1 " " $2 " " $3; if (!(k in seen)) { seen[k] = 1; order[++m] = k } v[k, $4] = v[k, $4] " " $5 }
    END {
        for (i = 1; i <= m; i++) {
            k = order[i]; split(k, f, " ")
            if (v[k, "ompi"] == "" || v[k, "courier"] == "") continue
            o = med(v[k, "ompi"]); c = med(v[k, "courier"]); n = split(v[k, "courier"], a, " ")
            no = split(v[k, "ompi"], b, " "); ow = 0
            for (j = 1; j <= no; j++) if (b[j] + 0 > ow) ow = b[j] + 0
            w = 0; over = 0
            for (j = 1; j <= n; j++) { if (a[j] + 0 > w) w = a[j] + 0; if (a[j] > 1.5 * o) over++ }
            printf "| %s | %s | %s | %.3g | %.2f | %.3g | %.3g | %.2f | %d of %d |\n", f[1], f[2], f[3], o, ow / o, c, w, w / o, over, n
        }
    }' "$1"
    echo
    echo "bw is in microseconds per 64 KiB message (65536 / MB/s); a timeout counts as 120 s."
}
while [ $# -gt 0 ]; do
    case $1 in
    --bins) bins=${2:?}; shift 2 ;;
    --loads) loads=${2:?}; shift 2 ;;
    --np) nps=${2:?}; shift 2 ;;
    --reps) reps=${2:?}; shift 2 ;;
    --tests) tests=${2:?}; shift 2 ;;
    --mpich) mpich=1; shift ;;
    --courier) build=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    --table) table "${2:?}"; exit 0 ;;
    -h | --help) sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option $1 (--help lists them)" ;;
    esac
done
[ -d "$bins/courier" ] && [ -d "$bins/ompi" ] || die "--bins DIR: DIR/courier and DIR/ompi hold the programs (--help)"
courier=$build/tools/courier
[ -x "$courier" ] || die "no $courier: build courier first"
command -v mpirun.openmpi >/dev/null || die "mpirun.openmpi not found (apt-get install openmpi-bin libopenmpi-dev)"
cc -O2 -o "${TMPDIR:-/tmp}/busy-load.$$" "$root/bench/load.c" || die "cannot build bench/load.c"
loadbin=${TMPDIR:-/tmp}/busy-load.$$
raw=$(mktemp)
loadpid=""
trap '[ -n "$loadpid" ] && kill $loadpid 2>/dev/null; rm -f "$raw" "$loadbin"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
impls="courier ompi"
[ "$mpich" = 1 ] && impls="$impls mpich"

# run IMPL NP PROGRAM ARGS...: the program's output (timeout: nothing)
run() {
    local impl=$1 n=$2 prog=$bins/$1/$3
    shift 3
    case $impl in
    courier) timeout 120 "$courier" run -n "$n" "$prog" "$@" ;;
    ompi) timeout 120 mpirun.openmpi --oversubscribe -n "$n" "$prog" "$@" ;;
    mpich) timeout 120 mpirun.mpich -n "$n" "$prog" "$@" ;;
    esac 2>/dev/null
}
# measure IMPL NP TEST: one number, microseconds (bw: us per 64 KiB message)
measure() {
    local impl=$1 n=$2 t=$3
    case $t in
    latency) run "$impl" 2 osu_latency -m 8:8 -i 2000 | awk '$1 == 8 {print $2}' ;;
    bw) run "$impl" 2 osu_bw -m 65536:65536 | awk '$1 == 65536 && $2 > 0 {print 65536 / $2}' ;;
    bcast | allreduce) run "$impl" "$n" osu_$t -m 8:8 -i 1000 | awk '$1 == 8 {print $2}' ;;
    alltoall) run "$impl" "$n" osu_alltoall -m 1024:1024 -i 500 | awk '$1 == 1024 {print $2}' ;;
    pingpong) run "$impl" 2 IMB-MPI1 PingPong -msglog 3:3 -iter 2000 |
        awk '$1 == 8 && NF >= 3 && $3 ~ /^[0-9.]+$/ {print $3}' ;;
    imb_allreduce) run "$impl" "$n" IMB-MPI1 Allreduce -msglog 3:3 -npmin "$n" -iter 1000 |
        awk '$1 == 8 && NF >= 5 && $5 ~ /^[0-9.]+$/ {print $5}' ;;
    esac | tail -1
}
have() { # have IMPL TEST: its program is there
    case $2 in
    pingpong | imb_allreduce) [ -x "$bins/$1/IMB-MPI1" ] ;;
    bw) [ -x "$bins/$1/osu_bw" ] ;;
    latency) [ -x "$bins/$1/osu_latency" ] ;;
    *) [ -x "$bins/$1/osu_$2" ] ;;
    esac
}
cpus=$(nproc)
for load in $loads; do
    loadpid=""
    if [ "$load" -gt 0 ]; then
        "$loadbin" "$load" 36000 &
        loadpid=$!
        sleep 1
    fi
    for np in $nps; do
        for t in $tests; do
            case $t in latency | bw | pingpong) [ "$np" = "${nps%% *}" ] || continue ;; esac
            n=$np
            case $t in latency | bw | pingpong) n=2 ;; esac
            for rep in $(seq "$reps"); do
                for impl in $impls; do
                    have "$impl" "$t" || continue
                    v=$(measure "$impl" "$n" "$t")
                    echo "load $load np $n $t rep $rep: $impl ${v:-timeout}" >&2
                    echo "$load $n $t $impl ${v:-120000000}" >>"$raw"
                done
            done
        done
    done
    [ -n "$loadpid" ] && { kill "$loadpid"; wait "$loadpid" 2>/dev/null; loadpid=""; }
done

{
    echo "$(uname -n): $cpus CPUs, $(uname -r); $(date -u +%Y-%m-%d); $reps repetitions, interleaved; load = CPU-bound processes beside the job"
    echo "Versions: courier $("$courier" info 2>/dev/null | head -1); $(mpirun.openmpi --version 2>/dev/null | head -1)"
    echo
    table "$raw"
} | tee ${out:+"$out"}
[ -n "$out" ] && cp "$raw" "$out.raw" # the samples, for bench/mpi/busy.sh --table FILE.raw
