#!/bin/bash
# osu.sh: build the OSU micro-benchmarks' MPI programs (7.x) with courier-cc, and
# with Open MPI's mpicc beside it when present, then run each one with the
# benchmark's own validation (-c) and say, per program: built or not (and the
# first missing symbol), passed, failed (a "Fail" line, a non-zero status) or
# timed out. It fetches nothing: give it an OSU source tree you already have.
#
# usage: bench/conformance/osu.sh --osu DIR [--courier BUILD] [--only courier|ompi|both]
#                                 [--np N] [--max BYTES] [--timeout S] [--work DIR]
#                                 [--groups "pt2pt coll nbc neighbor persistent onesided"]
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
osu="" courier="$root/build" only=auto np=4 max=65536 tmo=60
work=/tmp/courier-osu groups="pt2pt coll nbc neighbor"
die() { echo "osu.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case $1 in
    --osu) osu=${2:?}; shift 2 ;;
    --courier) courier=${2:?}; shift 2 ;;
    --only) only=${2:?}; shift 2 ;;
    --np) np=${2:?}; shift 2 ;;
    --max) max=${2:?}; shift 2 ;;
    --timeout) tmo=${2:?}; shift 2 ;;
    --work) work=${2:?}; shift 2 ;;
    --groups) groups=${2:?}; shift 2 ;;
    -h | --help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option $1 (--help lists them)" ;;
    esac
done
[ -n "$osu" ] || die "--osu DIR is required (an OSU micro-benchmarks 7.x source tree)"
# absolute: the programs are built from inside the OSU tree
[ -d "$courier" ] && courier=$(cd "$courier" && pwd)
mkdir -p "$work" && work=$(cd "$work" && pwd)
[ -f "$osu/c/util/osu_util_mpi.c" ] || die "$osu: no c/util/osu_util_mpi.c (not an OSU 7.x tree)"
cc_courier=""
for c in "$courier/tools/courier-cc" "$courier/bin/courier-cc"; do [ -x "$c" ] && cc_courier=$c && break; done
[ -n "$cc_courier" ] || die "no courier-cc under $courier (build courier first)"
run_courier="$(dirname "$cc_courier")/courier"
cc_ompi=$(command -v mpicc.openmpi || true)
case $only in
auto) impls=courier; [ -n "$cc_ompi" ] && impls="courier ompi" ;;
both) [ -n "$cc_ompi" ] || die "Open MPI's mpicc.openmpi not found"; impls="courier ompi" ;;
courier | ompi) impls=$only ;;
*) die "--only wants courier, ompi or both" ;;
esac
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# group: directory, ranks, programs (all of the directory's C programs).
group_dir() {
    case $1 in
    pt2pt) echo c/mpi/pt2pt/standard ;;
    persistent) echo c/mpi/pt2pt/persistent ;;
    coll) echo c/mpi/collective/blocking ;;
    nbc) echo c/mpi/collective/non_blocking ;;
    neighbor) echo c/mpi/collective/neighborhood ;;
    onesided) echo c/mpi/one-sided ;;
    *) die "unknown group $1" ;;
    esac
}
util="c/util/osu_util.c c/util/osu_util_mpi.c c/util/osu_util_graph.c c/util/osu_util_papi.c"
[ -f "$osu/c/util/osu_util_validation.c" ] && util="$util c/util/osu_util_validation.c" # 7.4: one-sided validation
mkdir -p "$work"
printf '%-10s %-28s %-8s %s\n' group program impl result
pass=0 fail=0
for g in $groups; do
    d=$(group_dir "$g")
    for src in "$osu/$d"/osu_*.c; do
        p=$(basename "$src" .c)
        n=$np
        case $g in pt2pt | persistent | onesided) n=2 ;; esac
        args="-c -i 20 -x 5 -m 1:$max"
        case $p in
        osu_latency_mt) args="-c -i 20 -x 5 -m 1:$max -t 2:2" ;;
        osu_latency_mp) continue ;; # forks processes after MPI_Init: not an MPI test
        osu_barrier | osu_ibarrier) args="-i 20 -x 5" ;;
        esac
        for impl in $impls; do
            exe="$work/$impl/$p" log="$work/$impl/$p.log"
            mkdir -p "$work/$impl"
            cc=$cc_courier
            [ "$impl" = ompi ] && cc=$cc_ompi
            # shellcheck disable=SC2086
            if ! (cd "$osu" && $cc -O2 -w -DPACKAGE_VERSION='"7.x"' -Ic/util -o "$exe" "$d/$p.c" $util -lm -lpthread) >"$log.build" 2>&1; then
                miss=$(grep -o "undefined reference to \`[A-Za-z_0-9]*'" "$log.build" | sed "s/.*\`//; s/'//" | sort -u | head -4 | tr '\n' ' ')
                [ -n "$miss" ] && miss="(undefined: $miss)" || miss="($(grep -m1 'error:' "$log.build" | cut -c1-80))"
                printf '%-10s %-28s %-8s %s\n' "$g" "$p" "$impl" "NOT BUILT ${miss}"
                fail=$((fail + 1))
                continue
            fi
            if [ "$impl" = courier ]; then
                cmd=("$run_courier" run --timeout "$tmo" -n "$n" "$exe")
            else
                cmd=(mpirun.openmpi --oversubscribe --bind-to none -n "$n" "$exe")
            fi
            # shellcheck disable=SC2206
            cmd+=($args)
            timeout -k 5 $((tmo + 10)) setsid "${cmd[@]}" >"$log" 2>&1
            rc=$?
            if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
                res="TIMEOUT"
            elif [ $rc -ne 0 ]; then
                res="FAIL (status $rc: $(grep -v '^#' "$log" | grep -m1 -i 'error\|courier:' | cut -c1-90))"
            elif grep -q 'Fail' "$log"; then
                res="FAIL (validation: $(grep -c 'Fail' "$log") sizes)"
            else
                res=ok
            fi
            [ "$res" = ok ] && pass=$((pass + 1)) || fail=$((fail + 1))
            printf '%-10s %-28s %-8s %s\n' "$g" "$p" "$impl" "$res"
        done
    done
done
echo "$pass passed, $fail failed"
