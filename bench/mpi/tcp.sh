#!/bin/bash
# tcp.sh: courier's TCP transport beside Open MPI's and MPICH's TCP, measured
# with the OSU micro-benchmarks (the measure users run), 2 ranks on this host
# over loopback, every repetition running each implementation in turn:
#   courier   COURIER_TRANSPORTS=tcp (no shared memory; no single copy either:
#             tcp offers none, so long messages are pushed as DATA frames)
#   Open MPI  --mca pml ob1 --mca btl tcp,self on lo
#   MPICH     MPIR_CVAR_NOLOCAL=1 UCX_TLS=tcp UCX_NET_DEVICES=lo (with --mpich;
#             NOLOCAL alone leaves UCX's own shared memory: bench/side-by-side.sh)
# Tests: osu_latency at 8 bytes (us, one way) and osu_bw at 64 KiB and
# 4 MiB (MB/s). Prints one Markdown table of medians and courier's ratios
# (the goals of issue 44: latency <= 0.8x Open MPI's, 4 MiB bandwidth >= 1.2x).
#
# usage: bench/mpi/tcp.sh --bins DIR [--reps 5] [--mpich] [--courier BUILD] [--out FILE.md]
# --bins DIR holds osu_latency and osu_bw built beforehand from OSU's own sources
# (this script builds nobody's project): DIR/courier/ (build/tools/courier-cc;
# they run with BUILD's libcourier, whatever RUNPATH they carry),
# DIR/ompi/ (mpicc.openmpi) and, with --mpich, DIR/mpich/ (mpicc.mpich).
# The figures move with the machine's load: the load average before each run
# is kept, and its range printed with the table (bench/results/tcp.md says how
# the figures there were shielded from it, and why not with SCHED_FIFO here).
# Timing goals live here, never in tests.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bins="" reps=5 mpich=0 out="" build=$root/build
die() { echo "tcp.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case $1 in
    --bins) bins=${2:?}; shift 2 ;;
    --reps) reps=${2:?}; shift 2 ;;
    --mpich) mpich=1; shift ;;
    --courier) build=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    -h | --help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option $1 (--help lists them)" ;;
    esac
done
[ -d "$bins/courier" ] && [ -d "$bins/ompi" ] || die "--bins DIR: DIR/courier and DIR/ompi hold the programs (--help)"
courier=$build/tools/courier
[ -x "$courier" ] || die "no $courier: build courier first"
command -v mpirun.openmpi >/dev/null || die "mpirun.openmpi not found (apt-get install openmpi-bin libopenmpi-dev)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
impls="courier ompi"
[ "$mpich" = 1 ] && impls="$impls mpich"
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT

# run IMPL PROGRAM ARGS...: the program's output over TCP (timeout: nothing)
run() {
    local impl=$1 prog=$bins/$1/$2
    shift 2
    case $impl in
    courier) LD_LIBRARY_PATH=$build/src${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
        COURIER_TRANSPORTS=tcp timeout 120 "$courier" run -n 2 "$prog" "$@" ;;
    ompi) timeout 120 mpirun.openmpi -n 2 --mca pml ob1 --mca btl tcp,self \
        --mca btl_tcp_if_include lo "$prog" "$@" ;;
    mpich) MPIR_CVAR_NOLOCAL=1 UCX_TLS=tcp UCX_NET_DEVICES=lo timeout 120 \
        mpirun.mpich -n 2 "$prog" "$@" ;;
    esac 2>/dev/null
}
for rep in $(seq "$reps"); do
    for impl in $impls; do
        echo "load $(cut -d' ' -f1 /proc/loadavg)" >>"$raw"
        run "$impl" osu_latency -m 8 -i 20000 -x 2000 |
            awk -v i="$impl" '$1 == 8 {print "latency_" $1, i, $2}' >>"$raw"
        run "$impl" osu_bw -m 4194304 -i 50 -x 5 |
            awk -v i="$impl" '($1 == 65536 || $1 == 4194304) && $2 > 0 {print "bw_" $1, i, $2}' >>"$raw"
        echo "rep $rep: $impl done" >&2
    done
done
{
    echo "TCP on loopback, 2 ranks, OSU 7.x; medians of $reps interleaved repetitions."
    echo "Machine: $(nproc) cores, $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg) at the end," \
        "$(awk '$1 == "load" {if (n++ == 0 || $2 < lo) lo = $2; if ($2 > hi) hi = $2} END {printf "%s-%s", lo, hi}' "$raw") before the runs; $(date -u +%F)."
    echo
    echo "| measure | courier | Open MPI | MPICH | courier / Open MPI | goal |"
    echo "|---|---|---|---|---|---|"
    awk '
    function med(s,   a, n, i, j, t) { n = split(s, a, " "); for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }; return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
    { v[$1, $2] = v[$1, $2] " " $3 }
    END {
        split("latency_8 bw_65536 bw_4194304", order, " ")
        split("osu_latency 8 B (us)|osu_bw 64 KiB (MB/s)|osu_bw 4 MiB (MB/s)", name, "|")
        split("<= 0.8||>= 1.2", goal, "|")
        for (k = 1; k <= 3; k++) {
            t = order[k]
            if (v[t, "courier"] == "" || v[t, "ompi"] == "") continue
            c = med(v[t, "courier"]); o = med(v[t, "ompi"])
            m = v[t, "mpich"] == "" ? "" : sprintf("%.3g", med(v[t, "mpich"]))
            printf "| %s | %.3g | %.3g | %s | %.2f | %s |\n", name[k], c, o, m, c / o, goal[k]
        }
    }' "$raw"
} | tee ${out:+"$out"}
[ -n "$out" ] && cp "$raw" "$out.raw"
exit 0
