#!/bin/bash
# A rank stopped for longer than --hang-timeout while the other waits for it is
# not a deadlock: the watchdog says once that it is stopped, waits, and the job
# ends well once it is continued.
#   stopped.sh signal|gdb|signal-hosts COURIER PROG
# signal: SIGSTOP, then SIGCONT 3 s later; gdb: gdb -p attaches for 3 s (skips,
# 77, without gdb or where ptrace is not allowed); signal-hosts: SIGSTOP in a
# job across two pretend hosts (--rsh none: agents on this machine), where the
# second host's agent watches the rank and says it. Waits are bounded by the
# job's own --timeout.
set -u
how=$1 courier=$2 prog=$3
if [ "$how" = gdb ]; then
    command -v gdb >/dev/null || { echo "skipped: no gdb"; exit 77; }
fi
err=$(mktemp)
kill_file=$(mktemp -u)
trap 'rm -f "$err" "$kill_file" "$kill_file.go" "$kill_file.tmp"' EXIT
hosts=
[ "$how" = signal-hosts ] && hosts="--hosts a:1,b:1 --rsh none"
COURIER_TEST_KILL_FILE=$kill_file "$courier" run $hosts -n 2 --hang-timeout 1 --timeout 60 "$prog" \
    2>"$err" &
launcher=$!
while kill -0 $launcher 2>/dev/null && [ ! -s "$kill_file" ]; do sleep 0.05; done
pid=$(cat "$kill_file" 2>/dev/null)
[ -n "$pid" ] || { cat "$err"; echo "FAIL: the job ended before node 1 was ready"; exit 1; }
# node 1 asleep in crecv (state S), past its spin and yield
while kill -0 "$pid" 2>/dev/null && ! grep -q '^[0-9]* (.*) S ' /proc/$pid/stat; do sleep 0.02; done
sleep 0.3
case $how in
signal | signal-hosts)
    kill -STOP "$pid"
    touch "$kill_file.go"
    sleep 3
    kill -CONT "$pid"
    want="rank 1 \\(pid $pid\\) is stopped by a signal" ;;
gdb)
    # the go file only once gdb has attached (TracerPid set)
    gdb -nx -batch -p "$pid" \
        -ex "shell grep -q 'TracerPid:[[:space:]]*[1-9]' /proc/$pid/status && touch $kill_file.go" \
        -ex "shell sleep 3" >/dev/null 2>&1 &
    gdbpid=$!
    wait $gdbpid
    [ -e "$kill_file.go" ] || { echo "skipped: gdb could not attach"; touch "$kill_file.go"; wait $launcher; exit 77; }
    want="rank 1 \\(pid $pid\\) is stopped \\(traced by pid [0-9]+, gdb\\)" ;;
*) echo "stopped.sh: signal, gdb or signal-hosts"; exit 2 ;;
esac
wait $launcher
status=$?
cat "$err"
fail=0
[ $status -eq 0 ] || { echo "FAIL: exit status $status, wanted 0"; fail=1; }
grep -Eq -- "$want" "$err" || { echo "FAIL: stderr does not say /$want/"; fail=1; }
[ $(grep -c "is stopped" "$err") -eq 1 ] || { echo "FAIL: the stop is not said once"; fail=1; }
[ $fail -eq 0 ] && echo "ok: a rank stopped ($how) for 3 s is no deadlock"
exit $fail
