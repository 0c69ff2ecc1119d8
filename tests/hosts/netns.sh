#!/bin/bash
# Pretend hosts for the tests of jobs across hosts: network namespaces joined by
# veth pairs on a bridge, the way CI builds 2-4 "hosts" on one machine.
#
#   netns.sh up NAME N     namespaces NAME-1 .. NAME-N, addresses 10.213.K.1..N/24
#                          (K from NAME, or the next free), the bridge NAME-br
#                          holding .254 here
#   netns.sh down NAME     remove them, and kill what still runs inside
#   netns.sh reap NAME     kill what still runs inside them, and keep them
#   netns.sh check NAME    exit 0 when nothing runs inside any of them
#
# Needs root (ip netns). Bounded: every loop runs over N <= 8 hosts.
set -u
cmd=${1:-}
name=${2:-}
[ -n "$name" ] || { echo "usage: netns.sh up|down|reap|check NAME [N]" >&2; exit 2; }
# the third octet, from the name, so that two build trees do not collide
k=$(( $(printf '%s' "$name" | cksum | cut -d' ' -f1) % 200 + 20 ))
br="${name}-br"
nss() { ip netns list 2>/dev/null | awk '{print $1}' | grep -x "${name}-[0-9]*"; }
case "$cmd" in
up)
    n=${3:-2}
    [ "$n" -ge 1 ] && [ "$n" -le 8 ] || { echo "netns.sh: 1..8 hosts" >&2; exit 2; }
    "$0" down "$name" 2>/dev/null
    ip link add "$br" type bridge || exit 1
    ip link set "$br" type bridge forward_delay 0 2>/dev/null # forwards at once
    # a subnet no other bridge here has (bounded: 200 tries)
    for _ in $(seq 1 200); do
        ip -4 addr show | grep -q "inet 10\.213\.$k\." || break
        k=$(( (k - 20 + 1) % 200 + 20 ))
    done
    ip addr add "10.213.$k.254/24" dev "$br" || exit 1
    ip link set "$br" up
    for i in $(seq 1 "$n"); do
        ns="${name}-$i"
        ip netns add "$ns" || exit 1
        ip link add "${name}v$i" type veth peer name eth0 netns "$ns" || exit 1
        ip link set "${name}v$i" master "$br" up
        ip -n "$ns" addr add "10.213.$k.$i/24" dev eth0
        ip -n "$ns" link set eth0 up
        ip -n "$ns" link set lo up
    done
    ;;
reap)
    for ns in $(nss); do
        pids=$(ip netns pids "$ns" 2>/dev/null)
        [ -n "$pids" ] && kill -9 $pids 2>/dev/null
    done
    true
    ;;
down)
    "$0" reap "$name"
    for ns in $(nss); do ip netns del "$ns"; done
    # the host ends of the veth pairs: a deleted namespace is cleaned up by the
    # kernel later, and its pairs with it; delete them now, and wait (bounded)
    # until the names are free for the next `up`
    for l in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1 |
        grep -x "${name}v[0-9]*"); do
        ip link del "$l" 2>/dev/null
    done
    ip link del "$br" 2>/dev/null
    for _ in $(seq 1 50); do
        ip -o link show 2>/dev/null | grep -q " ${name}\(v[0-9]*\|-br\)[@:]" || break
        sleep 0.1
    done
    true
    ;;
check)
    left=0
    for ns in $(nss); do
        pids=$(ip netns pids "$ns" 2>/dev/null)
        if [ -n "$pids" ]; then
            echo "netns.sh: still running in $ns:" >&2
            ps -o pid,args -p $(echo $pids | tr ' ' ',') >&2
            left=1
        fi
    done
    exit $left
    ;;
*)
    echo "usage: netns.sh up|down|reap|check NAME [N]" >&2
    exit 2
    ;;
esac
