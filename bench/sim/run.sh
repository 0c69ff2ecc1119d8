#!/bin/bash
# run.sh: the same MPI all-to-all (bench/sim/alltoall.c) in courier's simulated
# mode and in SimGrid's SMPI, one run at a time, with wall time and memory.
#   bench/sim/run.sh [N ...]        default: 64 256
#   bench/sim/run.sh 64 256 1024    also 1024 ranks (courier only, and only when
#                                   courier's 256-rank run took under 30 s)
# For each N: (a) courier run --sim cluster,cpu=0,bw=GBITS,lat=LAT_US -n N
#                 ./alltoall_courier (or --sim $SIM)
#             (b) smpirun on a one-<cluster> platform with the same link
#                 parameters (platform.sh: GBITS/8 GBps, LAT_US us), SMPI's
#                 default alltoall, then --cfg=smpi/alltoall:pair
# Each run: timeout $TIMEOUT, under /usr/bin/time -v (wall seconds, CPU seconds
# (user + system, of every process of the job: on a shared machine the figure
# that load does not inflate as much), maximum resident set size of the largest
# single process waited for; with SHARED it counts each mapping of the shared
# pages again), and memwatch.py (the largest sum of Pss / Rss over all
# processes of the job, every 0.5 s: Pss is the memory the job holds).
# Environment: COURIER_BUILD (default: the repository's build/), GBITS (link
# Gb/s, 100), LAT_US (link latency, 1), SIM (courier's machine, default the
# cluster above; e.g. cs2,cpu=0), BLOCK (1024), ROUNDS (12), TIMEOUT (300),
# WORK (a new directory under /tmp: binaries, platform files, every run's
# stdout/stderr/time output), SHARED (a size, e.g. 64K: the program's buffers of
# that size or more share their pages, courier's --sim ...,shared=SHARED and
# SMPI's smpi/auto-shared-malloc-thresh; the program then does not check what it
# received), BIG (1: run courier beyond 256 ranks whatever its 256-rank run took),
# SMPI_MAX (the most ranks SMPI runs, 256; beyond 256 only its pairwise all-to-all).
# Prints a table and leaves it in $WORK/table.txt.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=${COURIER_BUILD:-$repo/build}
GBITS=${GBITS:-100}
LAT_US=${LAT_US:-1}
SIM=${SIM:-cluster,cpu=0,bw=$GBITS,lat=$LAT_US}
BW=$(awk -v g="$GBITS" 'BEGIN { printf "%gGBps", g / 8 }')
LAT=${LAT_US}us
BLOCK=${BLOCK:-1024}
ROUNDS=${ROUNDS:-12}
TIMEOUT=${TIMEOUT:-300}
WORK=${WORK:-$(mktemp -d /tmp/courier-simbench.XXXXXX)}
SHARED=${SHARED:-}
BIG=${BIG:-0}
SMPI_MAX=${SMPI_MAX:-256}
args=("$BLOCK" "$ROUNDS")
smpi_shared=()
if [ -n "$SHARED" ]; then
    SIM=$SIM,shared=$SHARED
    args+=(nocheck)
    smpi_bytes=$(awk -v s="$SHARED" 'BEGIN { m = 1; u = toupper(substr(s, length(s)))
        if (u == "K") m = 1024; else if (u == "M") m = 1048576; else if (u == "G") m = 1073741824
        printf "%d", (m > 1 ? substr(s, 1, length(s) - 1) : s) * m }')
    smpi_shared=(--cfg=smpi/auto-shared-malloc-thresh:"$smpi_bytes")
fi
mkdir -p "$WORK"
ns=${*:-64 256}

courier=$build/tools/courier
if [ ! -x "$courier" ] || [ ! -x "$build/tools/courier-cc" ]; then
    echo "run.sh: no courier in $build/tools (build it first)" >&2
    exit 2
fi
"$build/tools/courier-cc" -O2 "$here/alltoall.c" -o "$WORK/alltoall_courier" || exit 1
have_smpi=0
if command -v smpicc > /dev/null && command -v smpirun > /dev/null; then
    if smpicc -O2 "$here/alltoall.c" -o "$WORK/alltoall_smpi"; then
        have_smpi=1
    fi
fi
[ $have_smpi = 1 ] || echo "run.sh: no SimGrid SMPI (smpicc, smpirun): courier only" >&2

py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3 # not a version manager's shim: starts faster
table=$WORK/table.txt
printf '%-14s %5s %8s %8s %8s %9s %9s %6s %9s %12s %12s %s\n' tool N wall_s cpu_s \
    maxrss_MiB pss_MiB rss_MiB procs messages virtual_s job_virt_s status > "$table"
cat "$table"

# run NAME N CMD...: one timed, watched run; sets $wall (seconds)
run() {
    local name=$1 n=$2
    shift 2
    local base=$WORK/$name-$n
    echo "+ $*" > "$base.cmd"
    (cd "$WORK" && exec setsid /usr/bin/time -v -o "$base.time" timeout "$TIMEOUT" "$@" \
        > "$base.out" 2> "$base.err") &
    local pid=$!
    "$py" "$here/memwatch.py" "$pid" 0.5 > "$base.mem" &
    local mpid=$!
    wait "$pid"
    local rc=$?
    wait "$mpid"
    local status=ok
    [ $rc = 0 ] || status="exit:$rc"
    [ $rc = 124 ] && status=timeout
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {
        n = split($2, a, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + a[i]; print s }' \
        "$base.time")
    local cpu maxrss pss rss procs msgs virt jobvirt
    cpu=$(awk -F': ' '/User time|System time/ { s += $2 } END { printf "%.2f", s }' "$base.time")
    maxrss=$(awk -F': ' '/Maximum resident set size/ { printf "%.1f", $2 / 1024 }' "$base.time")
    pss=$(sed -n 's/.*max_pss_kib=\([0-9]*\).*/\1/p' "$base.mem" | awk '{ printf "%.1f", $1 / 1024 }')
    rss=$(sed -n 's/.*max_rss_kib=\([0-9]*\).*/\1/p' "$base.mem" | awk '{ printf "%.1f", $1 / 1024 }')
    procs=$(sed -n 's/.*max_procs=\([0-9]*\).*/\1/p' "$base.mem")
    virt=$(sed -n 's/^alltoall .*virtual_s=\([0-9.e+-]*\).*/\1/p' "$base.out")
    msgs=$(sed -n 's/^courier: simulated .*; \([0-9]*\) messages.*/\1/p' "$base.err")
    jobvirt=$(sed -n 's/^courier: simulated .*: \([0-9.]*\) us of virtual time.*/\1/p' "$base.err" |
        awk '{ printf "%.9f", $1 / 1e6 }')
    printf '%-14s %5s %8s %8s %8s %9s %9s %6s %9s %12s %12s %s\n' "$name" "$n" "${wall:--}" \
        "${cpu:--}" "${maxrss:--}" "${pss:--}" "${rss:--}" "${procs:--}" "${msgs:--}" "${virt:--}" \
        "${jobvirt:--}" "$status" | tee -a "$table"
}

courier256=
for n in $ns; do
    if [ "$n" -gt 256 ]; then
        if [ "$BIG" != 1 ] && { [ -z "$courier256" ] || awk -v w="$courier256" 'BEGIN { exit !(w >= 30) }'; }; then
            echo "run.sh: N=$n skipped (courier's N=256 run did not finish under 30 s)" | tee -a "$table"
            continue
        fi
    fi
    wall=
    run courier "$n" "$courier" run --sim "$SIM" -n "$n" ./alltoall_courier "${args[@]}"
    [ "$n" = 256 ] && [ -n "$wall" ] && grep -q ' ok$' <(tail -1 "$table") && courier256=$wall
    if [ $have_smpi = 1 ] && [ "$n" -le "$SMPI_MAX" ]; then
        "$here/platform.sh" "$n" "$BW" "$LAT" "$WORK/platform-$n"
        smpi=(smpirun -np "$n" -platform "$WORK/platform-$n.xml" -hostfile "$WORK/platform-$n.hosts"
            --cfg=smpi/simulate-computation:no)
        # SMPI's default all-to-all posts every exchange at once: over 150 s at 256 ranks
        [ "$n" -le 256 ] && run smpi-default "$n" "${smpi[@]}" "${smpi_shared[@]}" ./alltoall_smpi "${args[@]}"
        run smpi-pair "$n" "${smpi[@]}" "${smpi_shared[@]}" --cfg=smpi/alltoall:pair \
            ./alltoall_smpi "${args[@]}"
    fi
done
echo "run.sh: outputs in $WORK (table: $table)"
