#!/bin/bash
# Signals to the launcher of a job across hosts (--rsh none: every agent on
# this machine, pretend hosts a and b).
#   signals.sh once|stopped-agent COURIER PROG
# once: one SIGINT ends the job with status 130 and the launcher's line
#   "got SIGINT; ending the job", as on one host.
# stopped-agent: host b's agent is stopped (SIGSTOP), so it cannot act on what
#   the launcher sends it; a first SIGINT, then a second, must kill everything
#   at once: the launcher returns within 20 s (it waited forever before) and no
#   process of the job is left, the stopped agent and its rank included.
# PROG is tests/nx/fail.c (hang: every rank waits forever).
set -u
how=$1 courier=$2 prog=$3
tag="signals-$$-$RANDOM" # in the environment of the job alone
tagged() { grep -lsa "COURIER_TEST_TAG=$tag" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3; }
ranks() { for p in $(tagged); do grep -qsa "$prog" /proc/$p/cmdline && echo $p; done; }
err=$(mktemp)
trap 'rm -f "$err"' EXIT
COURIER_TEST_TAG=$tag "$courier" run --hosts a:1,b:1 --rsh none --hang-timeout 0 --timeout 100 -n 2 "$prog" hang \
    2>"$err" >/dev/null &
launcher=$!
for i in $(seq 1 1000); do # both ranks started (bounded: 100 s)
    [ "$(ranks | wc -l)" -ge 2 ] && break
    kill -0 $launcher 2>/dev/null || break
    sleep 0.1
done
[ "$(ranks | wc -l)" -ge 2 ] || { cat "$err"; echo "FAIL: the job's 2 ranks did not start"; exit 1; }
sleep 0.3
fail=0
agent=
case $how in
once)
    kill -INT $launcher ;;
stopped-agent)
    agent=$(for p in $(tagged); do
        tr '\0' ' ' </proc/$p/cmdline 2>/dev/null | grep -q "courier agent .*--node 2 " && echo $p
    done | head -1)
    [ -n "$agent" ] || { echo "FAIL: no agent for host b"; kill -9 $(tagged); exit 1; }
    kill -STOP "$agent"
    kill -INT $launcher
    sleep 1
    kill -INT $launcher ;;
*) echo "signals.sh: once or stopped-agent"; exit 2 ;;
esac
for i in $(seq 1 200); do # 20 s
    kill -0 $launcher 2>/dev/null || break
    sleep 0.1
done
if kill -0 $launcher 2>/dev/null; then
    echo "FAIL: the launcher still runs 20 s after the signal"
    fail=1
    [ -n "$agent" ] && kill -CONT "$agent"
    kill -9 $launcher
fi
wait $launcher
status=$?
cat "$err"
[ $status -eq 130 ] || { echo "FAIL: exit status $status, wanted 130"; fail=1; }
grep -q "^courier: got SIGINT; ending the job$" "$err" ||
    { echo "FAIL: the launcher does not say it got SIGINT and ends the job"; fail=1; }
for i in $(seq 1 15); do # PDEATHSIG needs a moment
    [ -z "$(tagged)" ] && break
    sleep 0.2
done
left=$(tagged)
if [ -n "$left" ]; then
    echo "FAIL: processes left behind:"
    for p in $left; do tr 2>/dev/null '\0' ' ' </proc/$p/cmdline; echo; done
    kill -CONT $left 2>/dev/null; kill -9 $left 2>/dev/null
    fail=1
fi
[ $fail -eq 0 ] && echo "ok: SIGINT ($how) ended the job across hosts"
exit $fail
