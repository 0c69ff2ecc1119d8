#!/bin/bash
# osu_coll.sh: OSU micro-benchmarks (7.x; written for the collectives, and takes
# any OSU program: the one-sided ones with --np 2), courier beside Open MPI in
# one run: each program built from the same OSU sources with courier-cc and with
# Open MPI's mpicc, run interleaved --reps times at --np ranks, the best (or
# median) time of each size kept, printed as a Markdown table with courier /
# Open MPI ratios
# (nonblocking programs: OSU's pure communication time and its best overlap).
# It fetches nothing: give it an OSU source tree you already have. Timing goals
# live here, never in tests.
#
# usage: bench/mpi/osu_coll.sh --osu DIR [--courier BUILD] [--np N] [--reps R]
#            [--progs "osu_iallreduce osu_ialltoall osu_allreduce osu_alltoall"]
#            [--max BYTES] [--iters N|osu] [--nothread] [--before LIBDIR]
#            [--stat best|median] [--ompi-run "mpirun.openmpi"] [--work DIR]
# --iters: iterations per size (-i N -x N/10); default 100 (all-to-alls 50), a
# short run for the collectives. `--iters osu` passes none, so each program
# runs OSU's own defaults (the one-sided latencies: 10,000 per size up to
# 8 KiB, 1,000 above; 100 iterations of a 40 ns operation are 4 us, where one
# interrupt moves the average by a quarter).
# --nothread also runs courier with COURIER_NBC_THREAD=0. --before LIBDIR also
# runs the same courier binaries against the libcourier.so in LIBDIR (another
# build's src/, through LD_LIBRARY_PATH): a change's before and after in one
# interleaved run. --stat: each size's best run (default) or its median.
# With more ranks than cores, Open MPI needs --oversubscribe (added). Where Open MPI is relocated
# (../shared/tools/device-openmpi.sh), source its env.sh first and pass
# --ompi-run orterun and --ompi-bin DIR (programs built elsewhere with mpicc).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
osu="" courier="$root/build" np=4 reps=2 max=1048576 nothread=0 work=/tmp/courier-osu-coll
before="" stat=best
progs="osu_iallreduce osu_ialltoall osu_allreduce osu_alltoall"
ompi_run=mpirun.openmpi ompi_bin="" iters=""
die() { echo "osu_coll.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case $1 in
    --osu) osu=${2:?}; shift 2 ;;
    --courier) courier=${2:?}; shift 2 ;;
    --np) np=${2:?}; shift 2 ;;
    --reps) reps=${2:?}; shift 2 ;;
    --progs) progs=${2:?}; shift 2 ;;
    --max) max=${2:?}; shift 2 ;;
    --iters) iters=${2:?}; shift 2 ;;
    --nothread) nothread=1; shift ;;
    --before) before=${2:?}; shift 2 ;;
    --stat) stat=${2:?}; shift 2 ;;
    --ompi-run) ompi_run=${2:?}; shift 2 ;;
    --ompi-bin) ompi_bin=${2:?}; shift 2 ;;
    --work) work=${2:?}; shift 2 ;;
    -h | --help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option $1 (--help lists them)" ;;
    esac
done
[ -z "$before" ] || [ -f "$before/libcourier.so.0" ] || die "--before LIBDIR: no libcourier.so.0 in $before"
case $stat in best | median) ;; *) die "--stat takes best or median" ;; esac
[ -f "$osu/c/util/osu_util_mpi.c" ] || die "--osu DIR: an OSU micro-benchmarks 7.x tree (c/util/osu_util_mpi.c)"
osu=$(cd "$osu" && pwd)
[ -d "$courier" ] && courier=$(cd "$courier" && pwd)
cc=""
for d in "$courier/tools" "$courier/bin"; do [ -x "$d/courier-cc" ] && cc=$d/courier-cc && run=$d/courier; done
[ -n "$cc" ] || die "no courier-cc under $courier (build courier first)"
mkdir -p "$work/courier" "$work/ompi" && work=$(cd "$work" && pwd)
util="c/util/osu_util.c c/util/osu_util_mpi.c c/util/osu_util_graph.c c/util/osu_util_papi.c"
[ -f "$osu/c/util/osu_util_validation.c" ] && util="$util c/util/osu_util_validation.c" # 7.4: one-sided validation
src_of() { find "$osu/c/mpi" -name "$1.c" | head -1; }
for p in $progs; do
    s=$(src_of "$p")
    [ -n "$s" ] || die "$p: no $p.c under $osu/c/mpi"
    # shellcheck disable=SC2086
    (cd "$osu" && "$cc" -O2 -w -DPACKAGE_VERSION='"7.x"' -Ic/util -o "$work/courier/$p" "$s" $util -lm -lpthread) ||
        die "$p: courier-cc failed"
    if [ -z "$ompi_bin" ]; then
        command -v mpicc.openmpi >/dev/null || die "mpicc.openmpi not found (apt-get install libopenmpi-dev openmpi-bin)"
        # shellcheck disable=SC2086
        (cd "$osu" && mpicc.openmpi -O2 -w -DPACKAGE_VERSION='"7.x"' -Ic/util -o "$work/ompi/$p" "$s" $util -lm -lpthread) ||
            die "$p: mpicc.openmpi failed"
    else
        cp "$ompi_bin/$p" "$work/ompi/$p" || die "$p: not in $ompi_bin"
    fi
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
impls="courier"
[ "$nothread" = 1 ] && impls="$impls nothread"
[ -n "$before" ] && impls="$impls before"
impls="$impls ompi"
raw=$work/raw.txt
: >"$raw"
for rep in $(seq "$reps"); do
    for p in $progs; do
        case $iters in
        "")
            it="-i 100 -x 10"
            case $p in *alltoall*) it="-i 50 -x 5" ;; esac
            ;;
        osu) it="" ;;
        *) it="-i $iters -x $(((iters + 9) / 10))" ;;
        esac
        for impl in $impls; do
            # shellcheck disable=SC2086
            case $impl in
            courier) out=$(timeout 300 "$run" run --timeout 280 -n "$np" "$work/courier/$p" -m "8:$max" $it 2>&1) ;;
            nothread) out=$(COURIER_NBC_THREAD=0 timeout 300 "$run" run --timeout 280 -n "$np" "$work/courier/$p" -m "8:$max" $it 2>&1) ;;
            before) out=$(LD_LIBRARY_PATH=$before timeout 300 "$run" run --timeout 280 -n "$np" "$work/courier/$p" -m "8:$max" $it 2>&1) ;;
            ompi) out=$(timeout 300 $ompi_run --oversubscribe --bind-to none -np "$np" "$work/ompi/$p" -m "8:$max" $it 2>&1) ;;
            esac
            echo "$out" | awk -v r="$rep" -v p="$p" -v i="$impl" '/^[0-9]+[ \t]+[0-9.]+/ {
                print r, p, i, $1, $2, (NF >= 5 ? $4 : "-"), (NF >= 5 ? $5 : "-") }' >>"$raw"
        done
    done
done
# the table: per program and size, the best (or median) time of the reps
# (nonblocking: pure communication, column 4 of OSU's output) and the best overlap
echo "# OSU micro-benchmarks, $np ranks, $stat of $reps interleaved runs ($(nproc) CPUs, $(uname -m))"
awk -v impls="$impls" -v stat="$stat" '
    { p = $2; i = $3; s = $4; t = ($6 != "-") ? $6 : $5
      bw = p ~ /_(bw|bibw|mbw)$/ # MB/s: the best is the highest
      if (!((p, s) in seen)) { seen[p, s] = 1; order[p] = order[p] " " s }
      if (!(p in pseen)) { pseen[p] = 1; plist[++np] = p }
      if (!((p, i, s) in best) || (bw ? t > best[p, i, s] : t < best[p, i, s])) best[p, i, s] = t
      all[p, i, s] = all[p, i, s] " " t
      if ($7 != "-" && (!((p, i, s) in ov) || $7 > ov[p, i, s])) ov[p, i, s] = $7 }
    END {
        if (stat == "median")
            for (k in all) {
                m = split(all[k], srt, " ")
                for (a = 2; a <= m; a++) # insertion sort: a few runs
                    for (b = a; b > 1 && srt[b] + 0 < srt[b - 1] + 0; b--) { x = srt[b]; srt[b] = srt[b - 1]; srt[b - 1] = x }
                best[k] = m % 2 ? srt[(m + 1) / 2] : (srt[m / 2] + srt[m / 2 + 1]) / 2
            }
        n = split(impls, im, " ")
        for (k = 1; k <= np; k++) {
            p = plist[k]
            bw = p ~ /_(bw|bibw|mbw)$/
            printf "\n## %s\n\n| bytes |", p
            for (j = 1; j <= n; j++)
                printf " %s %s |", im[j] == "ompi" ? "Open MPI" : im[j] == "nothread" ? "courier, no progress thread" : im[j] == "before" ? "courier before (--before)" : im[j], bw ? "MB/s" : "µs"
            printf " %s |\n|---|", bw ? "Open MPI / courier (time ratio)" : "courier / Open MPI"
            for (j = 1; j <= n; j++) printf "---|"
            printf "---|\n"
            m = split(order[p], sz, " ")
            for (q = 1; q <= m; q++) {
                s = sz[q]; printf "| %s |", s
                for (j = 1; j <= n; j++) {
                    v = best[p, im[j], s]
                    f = v < 10 ? "%.2f" : "%.1f" # OSU prints two decimals
                    if ((p, im[j], s) in ov) printf " " f " (%s %%) |", v, ov[p, im[j], s]
                    else printf " " f " |", v
                }
                c = best[p, "courier", s]; o = best[p, "ompi", s]
                if (bw) { x = c; c = o; o = x } # bandwidth: the inverse, so below 1 is faster
                printf " %s |\n", (o > 0 ? sprintf("%.2f", c / o) : "-")
            }
        }
    }' "$raw"
echo
echo "raw samples: $raw"
