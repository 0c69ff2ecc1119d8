#!/bin/bash
# Runs a command that must end in a given way, and checks that nothing is left.
#   expect.sh STATUS REGEX [--output] [--min-seconds S] [--sigint S |
#             --sigkill-launcher S | --kill-rank-when-ready] -- command...
# STATUS is an exit status or "nonzero"; REGEX must match a line of the
# command's stderr ("any": not checked). The command gets a unique marker as its
# last argument, and in its environment (COURIER_TEST_MARK): whatever carries
# either when it has ended is left behind.
# With --output (a job that must succeed and say so: STATUS 0, tests/CMakeLists
# pass_test) REGEX is matched against its standard output and error both, which
# are shown, and the marker is only in the environment: the arguments are the
# test's own. An error report of AddressSanitizer, LeakSanitizer,
# UndefinedBehaviorSanitizer or ThreadSanitizer in the command's output fails
# the test whatever the status (.ci/sanitize).
# With --sigint S the launcher gets SIGINT, with --sigkill-launcher S SIGKILL
# (the ranks must then die on their own), S seconds after the job's first rank
# has started (so the launcher is watching, whatever the machine's speed).
# With --kill-rank-when-ready the program decides when: one of its ranks writes
# its pid to the file $COURIER_TEST_KILL_FILE and waits; that rank then gets
# SIGKILL, and the launcher's report must name its pid.
# With --min-seconds S the command must not end before S seconds have passed
# (a lower bound only: a slow machine cannot fail it), e.g. a deadlock report
# that must wait out the hang timeout.
# Waits are bounded by the command's own life (give it a --timeout).
set -u
want=$1 regex=$2
shift 2
action= delay= output= min_s=
while [ $# -gt 0 ] && [ "$1" != -- ]; do
    case $1 in
    --output) output=1; shift ;;
    --min-seconds) min_s=$2; shift 2 ;;
    --sigint | --sigkill-launcher) action=$1 delay=$2; shift 2 ;;
    --kill-rank-when-ready) action=$1; shift ;;
    *) echo "expect.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[ "${1:-}" = "--" ] && shift
marker="courier-test-$$-$RANDOM"
# (Few programs started here: the suite runs this script about 800 times.)
tmp=$(mktemp -d)
err=$tmp/err out=/dev/null killfile=$tmp/kill
[ -n "$output" ] && out=$tmp/out
declare -A shm_before
for f in /dev/shm/*; do shm_before[$f]=1; done
fail=0
# The job's ranks: its processes other than the launcher (and its group leader,
# a fork of the launcher with the same command line).
ranks() { comm -23 <(pgrep -f "$marker" | sort) <(pgrep -f "courier run.*$marker" | sort); }
if [ -n "$output" ]; then
    COURIER_TEST_MARK=$marker COURIER_TEST_KILL_FILE=$killfile "$@" 2>"$err" >"$out" &
else
    COURIER_TEST_MARK=$marker COURIER_TEST_KILL_FILE=$killfile "$@" "$marker" 2>"$err" >/dev/null &
fi
pid=$!
started=$(date +%s%N)
victim=
case $action in
--sigint | --sigkill-launcher)
    while kill -0 $pid 2>/dev/null && [ -z "$(ranks)" ]; do sleep 0.02; done
    sleep "$delay"
    if [ $action = --sigint ]; then kill -INT $pid; else kill -KILL $pid; fi ;;
--kill-rank-when-ready)
    while kill -0 $pid 2>/dev/null && [ ! -s "$killfile" ]; do sleep 0.02; done
    [ -s "$killfile" ] && victim=$(<"$killfile")
    if [ -z "$victim" ]; then
        echo "FAIL: the job ended before a rank wrote its pid to \$COURIER_TEST_KILL_FILE" >&2
        fail=1
    elif ! ranks | grep -qx "$victim"; then
        echo "FAIL: pid $victim in \$COURIER_TEST_KILL_FILE is not a rank of the job" >&2
        fail=1
    else
        echo "killing rank process $victim" >&2
        kill -KILL "$victim"
    fi ;;
esac
wait $pid
status=$?
took_ms=$((($(date +%s%N) - started) / 1000000))
[ -n "$output" ] && cat "$out"
cat "$err" >&2
if [ "$want" = nonzero ]; then
    [ $status -ne 0 ] || { echo "FAIL: exit status 0, wanted non-zero" >&2; fail=1; }
elif [ "$action" != --sigkill-launcher ] && [ $status -ne "$want" ]; then
    echo "FAIL: exit status $status, wanted $want" >&2; fail=1
fi
if [ -n "$min_s" ] && [ "$took_ms" -lt $((min_s * 1000)) ]; then
    echo "FAIL: the command ended after $took_ms ms, before $min_s s" >&2; fail=1
fi
said=$err what=stderr
[ -n "$output" ] && said="$out $err" what=output
# shellcheck disable=SC2086 # two files with --output
if [ "$regex" != any ] && [ "$action" != --sigkill-launcher ] && ! grep -Eqh -- "$regex" $said; then
    echo "FAIL: $what does not match /$regex/" >&2; fail=1
fi
# shellcheck disable=SC2086
if grep -Eqh '^(==[0-9]+==ERROR: (Address|Leak)Sanitizer|WARNING: ThreadSanitizer|SUMMARY: UndefinedBehaviorSanitizer)|: runtime error: ' $said; then
    echo "FAIL: a sanitizer reported an error (above)" >&2; fail=1
fi
if [ -n "$victim" ] && ! grep -q "(pid $victim)" "$err"; then
    echo "FAIL: the report does not name the killed rank (pid $victim)" >&2; fail=1
fi
# No process of the job may survive (give PDEATHSIG a moment after a SIGKILL).
# (one grep for both: the marker in a process's arguments or environment; the
# pattern "[c]ourier-test-..." matches the marker but not grep's own arguments)
marked() {
    local f p=
    for f in $(grep -lsa -e "[${marker:0:1}]${marker:1}" /proc/[0-9]*/cmdline /proc/[0-9]*/environ); do
        f=${f#/proc/} f=${f%%/*}
        [ "$f" = $$ ] || [[ " $p " == *" $f "* ]] || p="$p $f"
    done
    echo $p
}
for i in 1 2 3 4 5 6 7 8 9 10; do
    [ -z "$(marked)" ] && break
    sleep 0.2
done
left=$(marked)
if [ -n "$left" ]; then
    echo "FAIL: processes left behind:" >&2
    for p in $left; do tr '\0' ' ' <"/proc/$p/cmdline" >&2 2>/dev/null; echo >&2; done
    kill -KILL $left 2>/dev/null; fail=1
fi
# A new file in /dev/shm that a live process still maps or holds open belongs
# to that process, another program running beside the test (Open MPI's vader
# segments during a benchmark), not to the job, whose processes are all gone.
# Open MPI's vader segments are never the job's: one killed beside the test
# (a benchmark's timeout) leaves its segment with no process holding it.
for f in /dev/shm/*; do
    [ -z "${shm_before[$f]:-}" ] && [ -e "$f" ] || continue # old, or removed meanwhile by its owner
    case $f in /dev/shm/vader_segment.*) continue ;; esac
    if ! grep -qsF "$f" /proc/[0-9]*/maps &&
        ! find /proc/[0-9]*/fd -lname "$f" 2>/dev/null | grep -q .; then
        echo "FAIL: new file left in /dev/shm: ${f#/dev/shm/}" >&2
        fail=1
    fi
done
rm -rf "$tmp"
[ $fail -eq 0 ] && echo "ok: status $status, message as expected, nothing left behind"
exit $fail
