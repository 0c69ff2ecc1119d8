#!/bin/sh
# An rsh command for pretend hosts on this machine (courier run --rsh):
# `rsh-one-cpu.sh HOST CMD...` runs CMD here, pinned to the first CPU it may use
# when HOST's name starts with "one", on all of them otherwise: hosts with
# different numbers of CPUs (hosts_cpus_differ).
h=$1
shift
case $h in
one*)
    cpu=$(taskset -cp $$ | sed 's/.*: *//; s/[,-].*//')
    exec taskset -c "$cpu" "$@"
    ;;
*) exec "$@" ;;
esac
