#!/bin/bash
# Runs a test across the pretend hosts of tests/hosts/netns.sh, and checks that
# nothing of it is left on any of them afterwards.
#   in_hosts.sh NAME command...
# Skips (77) when the namespaces NAME-1.. are not there (not root, no ip). Every
# process of the test inherits COURIER_TEST_TAG (the agents pass COURIER_*
# settings on), so whatever survives the command, on any host, is found by it.
set -u
name=$1
shift
ip netns list 2>/dev/null | grep -q "^$name-1\b" || {
    echo "skipped: no pretend hosts $name-* (tests/hosts/netns.sh needs root and iproute2)"
    exit 77
}
export COURIER_TEST_TAG="hosts-$$-$RANDOM"
"$@"
status=$?
tag=$COURIER_TEST_TAG
export -n COURIER_TEST_TAG # what looks must not carry it
tagged() { grep -lsa "COURIER_TEST_TAG=$tag" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3; }
for i in $(seq 1 15); do # PDEATHSIG and the agents' own ends need a moment
    [ -z "$(tagged)" ] && break
    sleep 0.2
done
left=$(tagged)
if [ -n "$left" ]; then
    echo "FAIL: processes left behind:" >&2
    for p in $left; do tr '\0' ' ' </proc/$p/cmdline >&2 2>/dev/null; echo >&2; done
    kill -9 $left 2>/dev/null
    exit 1
fi
exit $status
