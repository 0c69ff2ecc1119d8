#!/bin/bash
# An rsh command for pretend hosts named by address (netns.sh): runs the
# command in the network namespace that holds ADDR, as ssh would on the host
# of that address. The launcher can then see where each host is (its route to
# the address), as with real hosts named in DNS or /etc/hosts.
#   rsh-by-addr.sh ADDR command...
set -u
addr=$1
shift
for ns in $(ip netns list 2>/dev/null | awk '{print $1}'); do
    if ip -n "$ns" -o -4 addr show 2>/dev/null | grep -q " inet $addr/"; then
        exec ip netns exec "$ns" "$@"
    fi
done
echo "rsh-by-addr.sh: no pretend host has the address $addr" >&2
exit 255
