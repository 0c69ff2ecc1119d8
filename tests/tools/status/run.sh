#!/bin/sh
# Tests of `courier ps` and `courier status` (src/run/jobs.c), each against a
# registry of its own (XDG_RUNTIME_DIR is a fresh directory), so that jobs of
# other tests running meanwhile are never seen.
#   run.sh job    COURIER PROG   a job in a known state (status_prog.c): ps, status, --json, --watch
#   run.sh hosts  COURIER PROG   the same job across two pretend hosts (--rsh none)
#   run.sh signal COURIER PROG   the entry goes with a launcher ended by SIGINT; after SIGKILL ps deletes it
#   run.sh errors COURIER        status of no job, of a process that is no job, bad arguments
#   run.sh stale  COURIER        ps deletes the entries of processes that are gone
#   run.sh unsafe COURIER        a registry writable by others, or a symlink, is refused
#   run.sh memory COURIER PROG   96 ranks that talk to few peers (ring_hold.c) take a
#                                fraction of the N^2 channels' shared memory
# Every wait is bounded; the job is given its "go" file whatever happens.
# KEEP=1 keeps the temporary directory (the registry, the outputs) to look at.
set -u
mode=$1 C=$2 PROG=${3:-}
tmp=$(mktemp -d)
export XDG_RUNTIME_DIR=$tmp
reg=$tmp/courier
ready=$tmp/ready go=$tmp/go
job=
cleanup() {
    touch "$go"
    [ -n "$job" ] && kill -0 "$job" 2>/dev/null && sleep 2 && kill "$job" 2>/dev/null
    [ -n "$job" ] && wait "$job" 2>/dev/null
    [ -n "${KEEP:-}" ] && echo "kept $tmp" || rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
    echo "FAIL: $*"
    [ -s "$tmp/err" ] && sed 's/^/job stderr: /' "$tmp/err"
    exit 1
}
host=$(uname -n)

# The rank lines of a status table, normalized: "POSTED UNEXP UNEXP_BYTES SENT
# SENT_BYTES RECV RECV_BYTES|STATE" (the total line: "total ...").
fields() { # RANK (or total) < table
    awk -v r="$1" '$1 == r { o = (r == "total") ? 2 : 3; s = $(o + 7)
        for (i = o + 8; i <= NF; i++) s = s " " $i
        print $o, $(o+1), $(o+2), $(o+3), $(o+4), $(o+5), $(o+6) "|" s; exit }'
}

# Start the job of $nranks ranks (3 unless set; the launcher's arguments before
# -n in "$@") and wait until rank 0 says it is ready and the job is registered.
start_job() {
    "$C" run --timeout 60 "$@" -n "${nranks:-3}" "$PROG" "$ready" "$go" >"$tmp/out" 2>"$tmp/err" &
    job=$!
    i=0
    while [ ! -e "$ready" ] || [ ! -e "$reg/$job" ]; do
        kill -0 "$job" 2>/dev/null || fail "the job ended before it was ready"
        i=$((i + 1))
        [ $i -lt 900 ] || fail "the job is not ready and registered after 90 s"
        sleep 0.1
    done
}

# Does the table in $tmp/status show $want0, $want1, $want2 (patterns) for
# ranks 0, 1, 2?
shows() {
    for r in 0 1 2; do
        eval "want=\$want$r"
        got=$(fields $r <"$tmp/status")
        case $got in $want) ;; *) return 1 ;; esac
    done
}
status_shows() { "$C" status "$@" >"$tmp/status" 2>"$tmp/status_err" && shows; }

# until_ok COMMAND...: run it until it succeeds, 0.2 s apart, at most 60 s: the
# state the test program reaches comes late on a loaded machine (rank 2 shows
# blocked only after its spin phase, rank 0's queue fills as it polls), and
# may go for a moment (rank 2 wakes when rank 1 leaves, then blocks again).
until_ok() {
    i=0
    until "$@"; do
        i=$((i + 1))
        [ $i -lt 300 ] || return 1
        sleep 0.2
    done
}

# Rank 0's unexpected messages hold their 300 bytes plus courier's record of each.
check_unexp0() {
    set -- $(fields 0 <"$tmp/status")
    [ "$1" = 2 ] && [ "$2" = 3 ] && [ "$3" -ge 300 ] && [ $((($3 - 300) % 3)) = 0 ] ||
        fail "rank 0: want 2 posted, 3 unexpected holding 300 bytes or more; got '$*'"
}

finish_job() {
    touch "$go"
    i=0
    while kill -0 "$job" 2>/dev/null; do
        i=$((i + 1))
        [ $i -lt 600 ] || fail "the job has not ended 60 s after go"
        sleep 0.1
    done
    wait "$job"
    rc=$?
    [ $rc = 0 ] || fail "the job exited with status $rc"
    [ ! -e "$reg/$job" ] || fail "the job's registry entry is left behind"
    ls -A "$reg" | grep -q . && fail "the registry holds: $(ls -A "$reg")"
    job=
}

blocked2="blocked: waits for any rank in crecv(type 5, 8 bytes)"
case $mode in
job)
    start_job
    # rank 0's unexpected messages hold 300 bytes and courier's records: checked apart
    want0="2 3 * 0 0 0 0|running" want1="0 0 0 3 300 0 0|finished" want2="1 0 0 0 0 0 0|$blocked2"
    until_ok status_shows "$job" || { cat "$tmp/status" "$tmp/status_err"; fail "courier status never showed the expected state"; }
    check_unexp0
    cat "$tmp/status"
    head -1 "$tmp/status" | grep -qF "job $job on $host: 3 ranks, up " || fail "status heading: $(head -1 "$tmp/status")"
    for r in 0 1 2; do
        awk -v r=$r '$1 == r { exit !($2 ~ /^[0-9]+$/ && $2 > 0) }' "$tmp/status" || fail "rank $r has no pid"
    done
    set -- $(fields 0 <"$tmp/status" | tr '|' ' ')
    [ "$(fields total <"$tmp/status")" = "3 3 $3 3 300 0 0|1 of 3 blocked, 1 of 3 finished" ] ||
        fail "total line: $(fields total <"$tmp/status")"
    # courier ps: the job's line
    ps_shows() {
        "$C" ps >"$tmp/ps" || return 1
        line=$(awk -v j="$job" '$1 == j' "$tmp/ps")
        [ "$(echo "$line" | awk '{print $2, $3}')" = "3 $host" ] &&
            echo "$line" | grep -qF " 1 of 3 blocked, 1 of 3 finished "
    }
    until_ok ps_shows || fail "courier ps: $(cat "$tmp/ps")"
    cat "$tmp/ps"
    head -1 "$tmp/ps" | grep -q '^JOB  *RANKS  *HOSTS  *ELAPSED  *STATE  *COMMAND$' || fail "ps header"
    case $line in
    *" courier run --timeout 60 -n 3 $PROG $ready $go") ;;
    *) fail "ps command: $line" ;;
    esac
    [ "$(wc -l <"$tmp/ps")" = 2 ] || fail "ps lists more than the job"
    # the only job: status needs no JOB
    until_ok status_shows || fail "status without JOB: $(cat "$tmp/status" "$tmp/status_err")"
    # --json
    json_shows() {
        "$C" status --json "$job" >"$tmp/json" || return 1
        if command -v python3 >/dev/null; then
            python3 - "$tmp/json" "$job" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["rank"]
assert d["job"] == int(sys.argv[2]) and d["ranks"] == 3 and not d["ended"], d
assert [x["state"] for x in r] == ["running", "finished", "blocked"], r
assert r[2]["wait"] == "waits for any rank in crecv(type 5, 8 bytes)", r[2]
assert (r[0]["posted"], r[0]["unexpected"]) == (2, 3) and r[0]["unexp_bytes"] >= 300, r[0]
assert (r[1]["sent_msgs"], r[1]["sent_bytes"], r[1]["recv_msgs"]) == (3, 300, 0), r[1]
assert d["total"]["blocked"] == 1 and d["total"]["finished"] == 1, d["total"]
PY
        else
            grep -q '"state":"blocked","pid":[0-9]*,"wait":"waits for any rank in crecv(type 5, 8 bytes)"' "$tmp/json"
        fi
    }
    until_ok json_shows || fail "status --json: $(cat "$tmp/json")"
    # --watch follows the job to its end, then stops by itself
    "$C" status --watch 0.2 "$job" >"$tmp/watch" 2>&1 &
    watcher=$!
    sleep 0.5
    j=$job
    finish_job
    i=0
    while kill -0 $watcher 2>/dev/null; do
        i=$((i + 1))
        [ $i -lt 100 ] || { kill $watcher; fail "courier status --watch did not stop when the job ended"; }
        sleep 0.1
    done
    wait $watcher || fail "courier status --watch exited with status $?"
    grep -qF "job $j has ended; its last state:" "$tmp/watch" || fail "--watch: no last state"
    sed -n '/has ended; its last state/,$p' "$tmp/watch" >"$tmp/last"
    [ "$(fields total <"$tmp/last" | sed 's/.*|//')" = finished ] || fail "--watch last state: $(cat "$tmp/last")"
    [ "$(grep -c '^RANK ' "$tmp/watch")" -ge 2 ] || fail "--watch showed the job once"
    "$C" status "$j" 2>"$tmp/e" && fail "courier status of an ended job succeeded"
    grep -qF "courier status: no job $j:" "$tmp/e" || fail "status of the ended job: $(cat "$tmp/e")"
    ;;
hosts)
    start_job --hosts a:1,b:2 --rsh none
    "$C" ps >"$tmp/ps" || fail "courier ps failed"
    "$C" ps --all >"$tmp/psall" || fail "courier ps --all failed"
    cat "$tmp/psall"
    line=$(awk -v j="$job" '$1 == j' "$tmp/ps")
    [ "$(echo "$line" | awk '{print $2, $3}')" = "3 a,b" ] || fail "ps line: $line"
    echo "$line" | grep -qF " running on 2 hosts " || fail "ps state: $line"
    [ "$(wc -l <"$tmp/ps")" = 2 ] || fail "ps lists the agents without --all: $(cat "$tmp/ps")"
    agent_a=$(awk '$2 == "0-0/3" && $3 == "a" && $4 == "(agent)" { print $1 }' "$tmp/psall")
    agent_b=$(awk '$2 == "1-2/3" && $3 == "b" && $4 == "(agent)" { print $1 }' "$tmp/psall")
    [ -n "$agent_a" ] && [ -n "$agent_b" ] || fail "ps --all lists no agents of hosts a and b"
    # the launcher knows where each rank is
    "$C" status "$job" >"$tmp/status" || fail "courier status of the launcher"
    cat "$tmp/status"
    grep -q "^0 .* on host a: run courier status there$" "$tmp/status" &&
        grep -q "^2 .* on host b: run courier status there$" "$tmp/status" ||
        fail "the launcher's status does not say where the ranks are"
    # host b's agent has ranks 1 and 2; host a's has rank 0
    want0="- - - - - - -|on host a: run courier status there"
    want1="0 0 0 3 300 0 0|finished" want2="1 0 0 0 0 0 0|$blocked2"
    until_ok status_shows "$agent_b" || { cat "$tmp/status" "$tmp/status_err"; fail "host b's agent never showed the expected state"; }
    cat "$tmp/status"
    want0="2 3 * 0 0 0 0|running" want1="- - - - - - -|on host b: run courier status there"
    want2="$want1"
    until_ok status_shows "$agent_a" || { cat "$tmp/status" "$tmp/status_err"; fail "host a's agent never showed rank 0's queue"; }
    check_unexp0
    finish_job
    ;;
signal)
    start_job
    kill -INT "$job"
    wait "$job"
    rc=$?
    [ $rc = 130 ] || fail "the job ended by SIGINT exited with status $rc"
    [ -z "$(ls -A "$reg")" ] || fail "SIGINT left the registry holding: $(ls -A "$reg")"
    rm -f "$ready"
    start_job
    kill -KILL "$job"
    wait "$job"
    [ -e "$reg/$job" ] || fail "the entry of a launcher killed by SIGKILL is gone (how?)"
    "$C" ps >"$tmp/ps" || fail "courier ps failed"
    [ "$(wc -l <"$tmp/ps")" = 1 ] || fail "ps lists the killed job: $(cat "$tmp/ps")"
    [ -z "$(ls -A "$reg")" ] || fail "ps left the killed job's entry: $(ls -A "$reg")"
    job=
    ;;
errors)
    "$C" status 2>"$tmp/e"
    rc=$?
    [ $rc = 1 ] && grep -qx "courier status: no job of yours is running here (courier run starts one)" "$tmp/e" ||
        fail "status with no job: status $rc, $(cat "$tmp/e")"
    sh -c 'exit 0' &
    dead=$!
    wait $dead
    "$C" status $dead 2>"$tmp/e"
    rc=$?
    [ $rc = 1 ] && grep -qx "courier status: no job $dead: no such process (it has ended, or never was); courier ps lists your running jobs" "$tmp/e" ||
        fail "status of a process that is gone: status $rc, $(cat "$tmp/e")"
    "$C" status $$ 2>"$tmp/e"
    rc=$?
    [ $rc = 1 ] && grep -qx "courier status: process $$ is not a courier job (or runs unregistered); courier ps lists your running jobs" "$tmp/e" ||
        fail "status of a process that is no job: status $rc, $(cat "$tmp/e")"
    "$C" status banana 2>"$tmp/e"
    rc=$?
    [ $rc = 2 ] && grep -q "^courier status: not a job number" "$tmp/e" || fail "status banana: $rc, $(cat "$tmp/e")"
    "$C" status --watch 0 1 2>"$tmp/e"
    [ $? = 2 ] || fail "status --watch 0 accepted"
    "$C" ps --bogus 2>/dev/null
    [ $? = 2 ] || fail "ps --bogus accepted"
    "$C" ps >"$tmp/ps" && [ "$(cat "$tmp/ps" | wc -l)" = 1 ] || fail "ps with no job: $(cat "$tmp/ps")"
    ;;
stale)
    mkdir -m 700 "$reg"
    sh -c 'exit 0' &
    dead=$!
    wait $dead
    entry() { # PID START
        printf 'pid=%s\nstart=%s\nstarted=1\nrole=launcher\nranks=2\nfirst=0\ncount=2\nhosts=h:2\ncwd=/\ncommand=courier run -n 2 x\nsegfd=3\ntimeout=0\ntrace=\n' "$1" "$2" >"$reg/$1"
    }
    entry $dead 1         # its process is gone
    entry $$ 1            # its pid now names another process (ours: a later start time)
    touch "$reg/.$dead.tmp" # a half-written entry of a process that is gone
    "$C" ps >"$tmp/ps" || fail "courier ps failed"
    [ "$(wc -l <"$tmp/ps")" = 1 ] || fail "ps lists stale entries: $(cat "$tmp/ps")"
    [ -z "$(ls -A "$reg")" ] || fail "ps left stale entries: $(ls -A "$reg")"
    entry $$ 1
    "$C" status $$ 2>"$tmp/e" && fail "status of a stale entry succeeded"
    [ ! -e "$reg/$$" ] || fail "status left the stale entry"
    ;;
unsafe)
    mkdir "$reg" && chmod 777 "$reg"
    "$C" run -n 2 true >"$tmp/out" 2>"$tmp/err" || fail "the job failed in an unsafe registry"
    [ "$(cat "$tmp/err")" = "courier run: warning: the job is not registered for courier ps/status: $reg is writable by others (mode 777); chmod 700 it" ] ||
        fail "warning: $(cat "$tmp/err")"
    [ -z "$(ls -A "$reg")" ] || fail "an entry was written in an unsafe registry"
    "$C" ps >"$tmp/ps" 2>"$tmp/e"
    [ $? = 1 ] && grep -qx "courier ps: cannot use the registry of jobs: $reg is writable by others (mode 777); chmod 700 it" "$tmp/e" ||
        fail "ps in an unsafe registry: $(cat "$tmp/e")"
    rmdir "$reg" && mkdir -m 700 "$tmp/elsewhere" && ln -s "$tmp/elsewhere" "$reg"
    "$C" run -n 2 true >"$tmp/out" 2>"$tmp/err" || fail "the job failed with a symlinked registry"
    grep -qx "courier run: warning: .*: $reg is a symbolic link; remove it" "$tmp/err" || fail "symlink: $(cat "$tmp/err")"
    [ -z "$(ls -A "$tmp/elsewhere")" ] || fail "an entry was written through a symlink"
    if [ "$(id -u)" = 0 ]; then # a registry of another user's
        rm "$reg" && mkdir -m 700 "$reg" && chown 65534 "$reg"
        "$C" run -n 2 true >"$tmp/out" 2>"$tmp/err" || fail "the job failed with another's registry"
        grep -qx "courier run: warning: .*: $reg belongs to uid 65534, not to you; remove it or set XDG_RUNTIME_DIR" "$tmp/err" ||
            fail "another's registry: $(cat "$tmp/err")"
    fi
    ;;
memory)
    # 96 ranks: the ring's channel and the barrier's (7 rounds) per rank, 8 of 95
    nranks=96 start_job
    "$C" status --json "$job" >"$tmp/json" 2>"$tmp/status_err" || fail "status --json: $(cat "$tmp/status_err")"
    "$C" status "$job" >"$tmp/status" 2>"$tmp/status_err" || fail "status: $(cat "$tmp/status_err")"
    used=$(sed -n 's/.*"shm_bytes":\([0-9]*\).*/\1/p' "$tmp/json")
    space=$(sed -n 's/.*"shm_space":\([0-9]*\).*/\1/p' "$tmp/json")
    [ -n "$used" ] && [ -n "$space" ] || fail "no shm_bytes/shm_space in: $(head -c 400 "$tmp/json")"
    echo "shared memory in use $used of $space bytes"
    grep -q "^shared memory: [0-9.]* MiB in use " "$tmp/status" || fail "no shared memory line: $(head -3 "$tmp/status")"
    # all 96*96 channels would need the whole space; 8 per rank need under a tenth
    [ "$used" -gt 0 ] && [ "$used" -lt $((space / 10)) ] ||
        fail "the job took $used bytes of shared memory of $space: more than its channels need"
    touch "$go"
    wait "$job" || fail "the job failed: $(cat "$tmp/err")"
    job=
    ;;
*)
    echo "run.sh: unknown mode $mode" >&2
    exit 2
    ;;
esac
echo "ok: status $mode"
