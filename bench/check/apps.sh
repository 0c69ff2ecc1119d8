#!/bin/bash
# What `courier run --check` costs on real programs: LULESH 2.0 and HPCCG
# (total time of the job) and OSU's latency and bandwidth, each run unchecked,
# with --check and with --check=all, interleaved (every round runs every mode,
# in an order that turns by one each round), medians over the rounds, and
# each checked mode's ratio to the unchecked one. The programs are prebuilt by
# the user with courier-c++ against the courier build measured (this script
# builds nothing: pass their paths); a program that is not given is skipped.
# Every run's /proc/loadavg is recorded beside its time (the machine may be
# shared). A run that exits non-zero, or says `courier: check:` on stderr, is
# counted as a failure and its stderr kept: on these correct programs that
# would be a false alarm. See bench/results/check-apps.md and docs/check.md
# (What it costs).
set -u
export LC_ALL=C

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

usage() {
    cat >&2 <<EOF
usage: $0 [options]
  --courier DIR       courier build dir (default: $root/build): its tools/courier runs
                      the jobs and its src/ goes first in LD_LIBRARY_PATH (so OSU
                      binaries linked against another courier build use this one)
  --lulesh BIN        LULESH 2.0 executable (built with USE_MPI=1)
  --lulesh-ranks N    its ranks (a cube: 1, 8, 27; default 8)
  --lulesh-args A     its arguments (default "-s 15 -i 300")
  --hpccg BIN         HPCCG executable (built with -DUSING_MPI)
  --hpccg-ranks L     its rank counts (default "2 4")
  --hpccg-args A      its arguments (default "64 64 64": per rank, so 4 ranks do twice
                      the work of 2)
  --osu DIR           directory of osu_latency and osu_bw (2 ranks)
  --rounds N          rounds (default 3)
  --modes L           modes, "off" for none (default "off --check --check=all")
  --work DIR          scratch directory: runs' stdout/stderr, raw.tsv (default
                      /tmp/courier-check-apps)
EOF
    exit 2
}

courier_dir=$root/build lulesh='' lranks=8 largs='-s 15 -i 300' hpccg=''
hranks='2 4' hargs='64 64 64' osu='' rounds=3 modes='off --check --check=all'
work=/tmp/courier-check-apps
while [ $# -gt 0 ]; do
    case $1 in
    --courier) courier_dir=${2:?}; shift 2 ;;
    --lulesh) lulesh=${2:?}; shift 2 ;;
    --lulesh-ranks) lranks=${2:?}; shift 2 ;;
    --lulesh-args) largs=${2:?}; shift 2 ;;
    --hpccg) hpccg=${2:?}; shift 2 ;;
    --hpccg-ranks) hranks=${2:?}; shift 2 ;;
    --hpccg-args) hargs=${2:?}; shift 2 ;;
    --osu) osu=${2:?}; shift 2 ;;
    --rounds) rounds=${2:?}; shift 2 ;;
    --modes) modes=${2:?}; shift 2 ;;
    --work) work=${2:?}; shift 2 ;;
    *) usage ;;
    esac
done
courier=$courier_dir/tools/courier
[ -x "$courier" ] || { echo "$0: no courier launcher at $courier (--courier: a build dir)" >&2; exit 2; }
for b in "$lulesh" "$hpccg"; do
    [ -z "$b" ] || [ -x "$b" ] || { echo "$0: $b is not an executable" >&2; exit 2; }
done
[ -z "$osu" ] || [ -x "$osu/osu_latency" ] || { echo "$0: no $osu/osu_latency" >&2; exit 2; }
[ -n "$lulesh$hpccg$osu" ] || { echo "$0: nothing to run: give --lulesh, --hpccg or --osu" >&2; usage; }
export LD_LIBRARY_PATH=$courier_dir/src${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p "$work" || exit 2
raw=$work/raw.tsv
: >"$raw"
read -r -a modev <<<"$modes"
nm=${#modev[@]}
failures=0

# One run: name, mode, round, what to measure (wall, or an OSU size), ranks, command.
# Appends "name mode round value load1" to raw.tsv.
run1() {
    local name=$1 mode=$2 round=$3 what=$4 n=$5
    shift 5
    local flag=() tag=${mode#--}
    [ "$mode" = off ] || flag=("$mode")
    local out=$work/$name.$tag.$round.out err=$work/$name.$tag.$round.err
    local load t0 t1 rc value
    load=$(cut -d' ' -f1 /proc/loadavg)
    t0=$(date +%s.%N)
    (cd "$work" && "$courier" run "${flag[@]}" -n "$n" "$@") >"$out" 2>"$err"
    rc=$?
    t1=$(date +%s.%N)
    if [ $rc -ne 0 ] || grep -q '^courier: check' "$err"; then
        echo "$0: $name $mode round $round: exit $rc; stderr in $err:" >&2
        head -5 "$err" >&2
        failures=$((failures + 1))
        return
    fi
    if [ "$what" = wall ]; then
        value=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
    else
        value=$(awk -v s="$what" '$1 == s { print $2 }' "$out")
    fi
    printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$mode" "$round" "$value" "$load" >>"$raw"
}

for ((r = 1; r <= rounds; r++)); do
    for ((k = 0; k < nm; k++)); do
        mode=${modev[$(((k + r - 1) % nm))]}
        if [ -n "$lulesh" ]; then
            # shellcheck disable=SC2086 # the arguments are a list
            run1 "lulesh-$lranks" "$mode" "$r" wall "$lranks" "$lulesh" $largs
        fi
        if [ -n "$hpccg" ]; then
            for n in $hranks; do
                # shellcheck disable=SC2086
                run1 "hpccg-$n" "$mode" "$r" wall "$n" "$hpccg" $hargs
            done
            rm -f "$work"/hpccg*.yaml
        fi
        if [ -n "$osu" ]; then
            run1 lat-8B "$mode" "$r" 8 2 "$osu/osu_latency" -m 8:8 -i 20000
            run1 lat-1MiB "$mode" "$r" 1048576 2 "$osu/osu_latency" -m 1048576:1048576 -i 200
            run1 bw-8B "$mode" "$r" 8 2 "$osu/osu_bw" -m 8:8 -i 2000
            run1 bw-1MiB "$mode" "$r" 1048576 2 "$osu/osu_bw" -m 1048576:1048576 -i 100
        fi
    done
done

# Medians per program and mode, each checked mode's ratio to "off" (for
# bandwidth higher is better: the ratio is still checked / off).
echo "| program | unit | $(printf '%s | ' "${modev[@]}")ratios to off | load (1 min) |"
echo "|---|---$(printf '|---%.0s' "${modev[@]}")|---|---|"
awk -F'\t' -v modes="$modes" '
function median(list,   a, n, i, j, t) {
    n = split(list, a, " ")
    for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{
    if (!($1 in seen)) { seen[$1] = 1; order[++np] = $1 }
    v[$1, $2] = v[$1, $2] " " $4
    if (!(($1) in lmin) || $5 < lmin[$1]) lmin[$1] = $5
    if (!(($1) in lmax) || $5 > lmax[$1]) lmax[$1] = $5
}
END {
    nm = split(modes, m, " ")
    for (p = 1; p <= np; p++) {
        name = order[p]
        unit = name ~ /^lat/ ? "us" : name ~ /^bw/ ? "MB/s" : "s"
        line = "| " name " | " unit " |"
        for (i = 1; i <= nm; i++) {
            med[i] = ((name, m[i]) in v) ? median(v[name, m[i]]) : ""
            line = line " " med[i] " (" v[name, m[i]] " ) |"
        }
        rat = ""
        for (i = 2; i <= nm; i++)
            if (med[1] != "" && med[i] != "" && med[1] > 0) rat = rat sprintf("%s%.2fx", rat == "" ? "" : ", ", med[i] / med[1])
        print line " " rat " | " lmin[name] "-" lmax[name] " |"
    }
}' "$raw"
[ $failures -eq 0 ] || { echo "$0: $failures runs failed (see above)" >&2; exit 1; }
