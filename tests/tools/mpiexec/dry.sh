#!/bin/bash
# courier's mpiexec maps its options onto courier run: mpiexec --dry-run prints
# the courier run command it would run; it must be exactly WANT.
#   dry.sh MPIEXEC WANT [mpiexec's arguments...]
set -u
mpiexec=$1 want=$2
shift 2
got=$("$mpiexec" --dry-run "$@")
rc=$?
echo "mpiexec $*"
echo "  gives: $got"
[ $rc -eq 0 ] || { echo "FAIL: mpiexec --dry-run exited with status $rc"; exit 1; }
[ "$got" = "$want" ] || { echo "FAIL: wanted $want"; exit 1; }
echo ok
