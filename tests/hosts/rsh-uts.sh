#!/bin/sh
# An ssh-like command for pretend hosts (netns.sh): `rsh-uts.sh [-x] HOST
# CMD...` runs CMD's words, joined as ssh joins them, by a shell in network
# namespace HOST with a hostname of its own (HOST). Launchers that tell nodes
# apart by hostname (Open MPI, MPICH's hydra) then see two hosts; courier is
# given the same command where the benchmarks compare them alike
# (bench/hosts.sh, bench/launch/launch.sh).
[ "$1" = -x ] && shift
h=$1
shift
exec ip netns exec "$h" unshare --uts sh -c "hostname $h && exec $*"
