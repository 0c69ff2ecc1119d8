#!/bin/bash
# A job across the pretend hosts meets a failure; it must end, everywhere, with
# one line that names the host and the cause, and a non-zero status. (What is
# left behind is checked by in_hosts.sh, which runs this.)
#   fail.sh SCENARIO NAME COURIER STRESSKILL
# SCENARIO: rank-killed, agent-killed, launcher-killed, link-down. The job is
# tests/reliability/stresskill.c on 2 hosts x 2 ranks: rank 2 (on host 2) stops
# half-way and waits to be killed, so the job cannot end before the failure,
# whatever the machine's speed; the failure comes once it has written its pid.
set -u
scenario=$1 name=$2 courier=$3 prog=$4
here=$(cd "$(dirname "$0")" && pwd)
rsh="ip netns exec"
hosts=$name
case $scenario in
launcher-killed) rsh="$here/rsh-detached.sh" ;;
link-down) # its own hosts: the shared ones must keep their network
    hosts="${name}l"
    "$here/netns.sh" up "$hosts" 2 || exit 1
    trap '"$here/netns.sh" down "$hosts"' EXIT ;;
esac
err=$(mktemp)
kill_file=$(mktemp -u)
trap 'rm -f "$err" "$kill_file"; [ "$scenario" = link-down ] && "$here/netns.sh" down "$hosts"' EXIT
COURIER_TEST_VICTIM=2 COURIER_TEST_KILL_FILE=$kill_file \
    "$courier" run --hosts "$hosts-1:2,$hosts-2:2" --rsh "$rsh" -n 4 --timeout 120 \
    "$prog" 2000 2>"$err" >/dev/null &
launcher=$!
while kill -0 $launcher 2>/dev/null && [ ! -s "$kill_file" ]; do sleep 0.05; done
victim=$(cat "$kill_file" 2>/dev/null)
[ -n "$victim" ] || { cat "$err"; echo "FAIL: the job ended before rank 2 was ready"; exit 1; }
agent2=$(pgrep -f "courier agent .*--node 2 " | while read -r p; do
    grep -qsa "COURIER_TEST_TAG=$COURIER_TEST_TAG" /proc/$p/environ && echo $p; done | head -1)
start=$(date +%s%N)
case $scenario in
rank-killed) kill -9 "$victim"; want="rank 2 on host $hosts-2 \\(pid $victim\\) killed by SIGKILL; ending the job" ;;
agent-killed)
    [ -n "$agent2" ] || { echo "FAIL: no agent on host 2"; exit 1; }
    kill -9 "$agent2"; want="host $hosts-2: its agent was killed by SIGKILL; ending the job" ;;
launcher-killed) kill -9 $launcher; want= ;;
link-down) ip -n "$hosts-2" link set eth0 down
    want="host $hosts-2: no answer for [0-9]+ ms: the host or the network to it may be down; ending the job" ;;
*) echo "fail.sh: unknown scenario $scenario"; exit 2 ;;
esac
wait $launcher
status=$?
# the launcher's end is not all: in_hosts.sh waits for every process
ms=$(( ($(date +%s%N) - start) / 1000000 ))
cat "$err"
echo "the launcher ended $ms ms after the failure, status $status"
fail=0
[ $status -ne 0 ] || { echo "FAIL: exit status 0"; fail=1; }
if [ -n "$want" ] && ! grep -Eq -- "$want" "$err"; then
    echo "FAIL: stderr does not say /$want/"; fail=1
fi
[ $fail -eq 0 ] && echo "ok: $scenario"
exit $fail
