#!/bin/bash
# Strangers at a job across pretend hosts (netns.sh), named by address so that
# the launcher knows its route to them (rsh-by-addr.sh):
#  - the launcher listens for its agents only on the address its route to the
#    hosts leaves from (the bridge's), never on every address;
#  - a process of a third host that connects to that port and sends what is not
#    the handshake is refused, twice, and the job says so in one line and goes on;
#  - with ucx (UCX_STRANGER: tests/hosts/ucx_stranger.c), the same stranger
#    knocks at the UCX ports of host 1's rank, then speaks UCX to them: builds
#    the rank's worker address and sends messages the size of courier's, twice
#    over: the rank refuses them and says so once, and the job goes on.
#   stranger.sh CMD NS PROG [UCX_STRANGER]
# PROG: tests/hosts/wait_go.c (every rank polls until a file exists).
set -u
cmd=$1 ns=$2 prog=$3 ucx=${4:-}
tp=${ucx:+ucx}
here=$(cd "$(dirname "$0")" && pwd)
addr() { ip -n "$1" -4 -o addr show eth0 | awk '{print $4}' | cut -d/ -f1; }
a1=$(addr "$ns-1") a2=$(addr "$ns-2") a3=$(addr "$ns-3")
[ -n "$a1" ] && [ -n "$a2" ] && [ -n "$a3" ] || { echo "FAIL: no addresses on $ns-1..3"; exit 1; }
br=${a1%.*}.254
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go=$tmp/go
# each rank waits (bounded) for the strangers to be done
env ${tp:+COURIER_TRANSPORTS=$tp} "$cmd" run --hosts "$a1:1,$a2:1" --rsh "$here/rsh-by-addr.sh" \
    -n 2 "$prog" "$go" >"$tmp/out" 2>"$tmp/err" &
pid=$!
fail=0 skip=0
ports=
for _ in $(seq 1 200); do
    ports=$(ss -ltnpH 2>/dev/null | grep "pid=$pid," | awk '{print $4}')
    [ -n "$ports" ] && break
    sleep 0.05
done
[ -n "$ports" ] || { echo "FAIL: the launcher (pid $pid) listens nowhere"; fail=1; }
for p in $ports; do
    case $p in
    "$br":*) ;;
    *) echo "FAIL: the launcher listens on $p (only $br, its route to the hosts, is theirs)"; fail=1 ;;
    esac
done
# knock: send what is not the handshake, twice, from the third host
knock() { ip netns exec "$ns-3" timeout 5 bash -c "exec 3<>/dev/tcp/$1/$2 && printf 'GET / HTTP/1.0\r\n\r\n%300s' '' >&3 && timeout 2 cat <&3 >/dev/null" 2>/dev/null; }
port=$(echo "$ports" | head -n1)
knock "$br" "${port##*:}"
knock "$br" "${port##*:}"
if [ -n "$ucx" ]; then
    # the UCX ports of host 1's rank, once it has talked to rank 1
    name=$(basename "$prog" | cut -c1-15)
    uports=
    for _ in $(seq 1 200); do
        uports=$(ip netns exec "$ns-1" ss -ltnpH 2>/dev/null | grep "((\"$name\"" | awk '{print $4}')
        [ -n "$uports" ] && break
        sleep 0.05
    done
    [ -n "$uports" ] || { echo "FAIL: host 1's rank listens nowhere"; fail=1; }
    for p in $uports; do knock "$a1" "${p##*:}"; done
    for _ in 1 2; do
        ip netns exec "$ns-3" env UCX_TLS=tcp UCX_NET_DEVICES=eth0 UCX_WARN_UNUSED_ENV_VARS=n \
            timeout 20 "$ucx" "$a3" "$a1" $(for p in $uports; do echo "${p##*:}"; done)
        case $? in
        0) ;;
        77) skip=1 ;;
        *) echo "FAIL: the UCX stranger could not speak"; fail=1 ;;
        esac
    done
fi
touch "$go"
wait $pid
st=$?
[ $st -eq 0 ] || { echo "FAIL: the job ended with status $st"; fail=1; }
n=$(grep -c "courier run: refused a connection from $a3 on the agents' port ${port##*:}: " "$tmp/err")
[ "$n" = 1 ] || { echo "FAIL: $n lines about the stranger at the launcher's port (want 1)"; fail=1; }
if [ -n "$ucx" ] && [ $skip = 0 ]; then
    n=$(grep -c "ucx: refused a message from outside the job" "$tmp/err")
    [ "$n" = 1 ] || { echo "FAIL: $n lines about the UCX stranger (want 1)"; fail=1; }
fi
[ "$(grep -c '^rank done$' "$tmp/out")" = 2 ] || { echo "FAIL: the ranks did not both finish"; fail=1; }
echo "--- stderr:"; cat "$tmp/err"
[ $fail = 0 ] && [ $skip = 1 ] && { echo "skipped: this UCX's worker address is not 1.13's layout"; exit 77; }
exit $fail
