#!/bin/bash
# Hosts that are this machine (localhost, a loopback address, its own name, in
# --hosts, a hostfile or mpiexec's -host) make a job on this machine, as other
# MPIs' launchers do: no agent and no ssh, and as many ranks as asked (a
# laptop or a container has no ssh server). An ssh that fails is first on PATH,
# so a launcher that used it fails.
#   localhost.sh COURIER MPIEXEC PROG   (PROG: mpi_p2p, which says "ok on N ranks")
set -u
courier=$1 mpiexec=$2 prog=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '#!/bin/sh\necho "ssh was called: $*" >&2\nexit 255\n' >"$tmp/ssh"
chmod +x "$tmp/ssh"
export PATH="$tmp:$PATH"
printf 'localhost slots=1\n%s slots=1  # this machine by name\n' "$(hostname)" >"$tmp/hosts"
fail=0
check() { # want-ranks command...
    local want=$1
    shift
    out=$("$@" 2>&1)
    if ! grep -q "ok on $want ranks" <<<"$out" || grep -q "ssh was called" <<<"$out"; then
        echo "FAIL: $*"
        echo "$out" | head -20
        fail=1
    else
        echo "ok: $* ($(grep -c . <<<"$out") lines)"
    fi
}
check 3 "$courier" run --hosts localhost:1,127.0.0.1:1 -n 3 "$prog"
check 2 "$courier" run --hosts "$(hostname)" -n 2 "$prog"
check 4 "$courier" run --hostfile "$tmp/hosts" -n 4 "$prog"
check 2 "$mpiexec" -n 2 -host localhost "$prog"
# A host that is not this machine still goes through the agent's command.
out=$("$courier" run --hosts localhost:1,not-this-machine-xyz:1 -n 2 "$prog" 2>&1)
if ! grep -q "ssh was called" <<<"$out"; then
    echo "FAIL: a list with another host ran without starting its agent:"
    echo "$out" | head
    fail=1
fi
[ $fail = 0 ] && echo "localhost: all passed"
exit $fail
