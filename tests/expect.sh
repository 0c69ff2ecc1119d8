#!/bin/bash
# Runs a command that must fail in a given way, and checks that nothing is left.
#   expect.sh STATUS REGEX [--sigint S | --sigkill-launcher S | --kill-rank S] -- command...
# STATUS is an exit status or "nonzero"; REGEX must match the command's stderr
# ("any": not checked).
# With --sigint S the launcher gets SIGINT after S seconds; with
# --sigkill-launcher S it gets SIGKILL (the ranks must then die on their own);
# with --kill-rank S one rank, chosen at random, gets SIGKILL.
set -u
want=$1 regex=$2
shift 2
action= delay=
case "${1:-}" in
--sigint | --sigkill-launcher | --kill-rank) action=$1 delay=$2; shift 2 ;;
esac
[ "$1" = "--" ] && shift
marker="courier-test-$$-$RANDOM"
err=$(mktemp)
shm_before=$(ls /dev/shm | wc -l)
"$@" "$marker" 2>"$err" >/dev/null &
pid=$!
if [ -n "$action" ]; then
    sleep "$delay"
    case $action in
    --sigint) kill -INT $pid ;;
    --sigkill-launcher) kill -KILL $pid ;;
    --kill-rank)
        # a rank: a process of the job that is not the launcher (or its group leader)
        victim=$(comm -23 <(pgrep -f "$marker" | sort) <(pgrep -f "courier run.*$marker" | sort) | shuf -n 1)
        echo "killing rank process $victim" >&2
        kill -KILL "$victim" ;;
    esac
fi
wait $pid
status=$?
fail=0
cat "$err" >&2
if [ "$want" = nonzero ]; then
    [ $status -ne 0 ] || { echo "FAIL: exit status 0, wanted non-zero" >&2; fail=1; }
elif [ "$action" != --sigkill-launcher ] && [ $status -ne "$want" ]; then
    echo "FAIL: exit status $status, wanted $want" >&2; fail=1
fi
if [ "$regex" != any ] && [ "$action" != --sigkill-launcher ] && ! grep -Eq -- "$regex" "$err"; then
    echo "FAIL: stderr does not match /$regex/" >&2; fail=1
fi
# No process of the job may survive (give PDEATHSIG a moment after a SIGKILL).
for i in 1 2 3 4 5 6 7 8 9 10; do
    pgrep -f "$marker" >/dev/null || break
    sleep 0.2
done
if pgrep -f "$marker" >/dev/null; then
    echo "FAIL: processes left behind:" >&2; pgrep -af "$marker" >&2
    pkill -KILL -f "$marker"; fail=1
fi
[ "$(ls /dev/shm | wc -l)" -le "$shm_before" ] || { echo "FAIL: new files in /dev/shm" >&2; fail=1; }
rm -f "$err"
[ $fail -eq 0 ] && echo "ok: status $status, message as expected, nothing left behind"
exit $fail
