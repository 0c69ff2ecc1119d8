#!/bin/bash
# An rsh for tests that behaves like ssh: the agent is not a child of the
# launcher (no PDEATHSIG ties them), so when the launcher dies the agent must
# notice by itself. stdin (the job's secret) goes through, as with ssh.
#   rsh-detached.sh NAMESPACE command...
ns=$1
shift
exec 3<&0
setsid ip netns exec "$ns" "$@" <&3 &
exec 3<&-
wait $!
