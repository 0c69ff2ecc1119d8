#!/bin/bash
# Runs a courier program under Open MPI's mpirun, a PMIx server other than
# Slurm's (its daemons serve PMIx to the processes they start: Debian's Open MPI
# 4 is built on the same libpmix2 courier loads), as a user with Open MPI's
# mpirun first on PATH would; or says "skipped" (exit 77, CTest's
# SKIP_RETURN_CODE) when Open MPI's mpirun is not installed here
# (apt-get install -y openmpi-bin).
#   ompi.sh [--fail REGEX | --once REGEX] [--no-kill] N prog [args]
# Without --fail: mpirun -n N prog args, its status is ours. --fail: the job
# must end non-zero and its output (mpirun's and the ranks') match REGEX
# (extended). --no-kill: Open MPI does not end the others when a rank exits
# non-zero (--mca orte_abort_on_non_zero_status 0), as srun -K0 does not: the
# ranks' own watchdog must (src/core/pmiwatch.c); mpirun then exits 0 whatever
# the ranks' statuses, so --fail asks only that the job ended (no timeout). --once: the job must succeed and exactly one line of its output
# match REGEX. Either way no process of the job may be left once mpirun
# returns, and the job is bounded (120 s) so that a broken launch fails the
# test instead of hanging it.
set -u
fail= once=
case ${1:-} in
--fail) fail=$2 && shift 2 ;;
--once) once=$2 && shift 2 ;;
esac
nokill=()
if [ "${1:-}" = --no-kill ]; then
    nokill=(--mca orte_abort_on_non_zero_status 0)
    shift
fi
n=$1
shift
mpirun=$(command -v mpirun.openmpi)
if [ -z "$mpirun" ]; then
    echo "skipped: no Open MPI mpirun here (apt-get install -y openmpi-bin)"
    exit 77
fi
# Open MPI refuses root unless told; more ranks than cores need --oversubscribe.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# The job's processes carry a marker in their environment (mpirun passes it on).
export COURIER_OMPI_TEST_MARKER=courier-ompi-$$-$RANDOM
out=$(timeout -k 5 120 "$mpirun" --oversubscribe --bind-to none "${nokill[@]}" -n "$n" "$@" 2>&1)
rc=$?
echo "$out"
echo "ompi.sh: mpirun exited with status $rc"
status=0
if [ -n "$fail" ]; then
    if [ ${#nokill[@]} -eq 0 ]; then
        [ $rc -ne 0 ] || { echo "ompi.sh: FAIL: the job should have failed"; status=1; }
    elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        echo "ompi.sh: FAIL: the job did not end by itself (timed out)"
        status=1
    fi
    grep -qE -- "$fail" <<<"$out" || { echo "ompi.sh: FAIL: the output does not match '$fail'"; status=1; }
else
    [ $rc -eq 0 ] || { echo "ompi.sh: FAIL: mpirun exited with status $rc"; status=1; }
    if [ -n "$once" ]; then
        count=$(grep -cE -- "$once" <<<"$out")
        [ "$count" -eq 1 ] || { echo "ompi.sh: FAIL: $count lines match '$once', not one"; status=1; }
    fi
fi
# (the marker is in the environment of every process mpirun started, and of no
# other: grep runs without it). Open MPI's daemons may still be reaping: 5 s.
marker=$COURIER_OMPI_TEST_MARKER left=
for _ in $(seq 50); do
    left=$(env -u COURIER_OMPI_TEST_MARKER grep -lsa "$marker" /proc/[0-9]*/environ)
    [ -z "$left" ] && break
    sleep 0.1
done
if [ -n "$left" ]; then
    echo "ompi.sh: FAIL: processes of the job are still there: $(tr "\n" " " <<<"$left")"
    status=1
fi
exit $status
