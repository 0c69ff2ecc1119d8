#!/bin/bash
# Runs a courier program under Slurm's srun with PMI-2, as a user on a cluster
# would, or says "skipped" (exit 77, CTest's SKIP_RETURN_CODE) when no Slurm
# answers here (.ci/slurm start makes a one-node one).
#   srun.sh [--fail REGEX | --once REGEX] [--no-kill] [--mpi=KIND | --salloc | --sbatch] N prog [args]
# Without --fail: srun --mpi=pmi2 -n N prog args, its status is ours (--mpi=KIND
# asks srun for another kind, to see what courier says then). With
# --fail: the job must end non-zero, srun's and the ranks' output must match
# REGEX (extended), and no process of the job may be left once srun returns.
# Every job ends a failing job at once (--kill-on-bad-exit) and is bounded
# (120 s) so that a broken Slurm fails the test instead of hanging it.
# --once REGEX: the job must succeed and exactly one line of its output match.
# --salloc / --sbatch: instead of srun, the command runs inside an allocation
# of N tasks, as a user's would: salloc -n N command, or a batch job
# (sbatch --wait -n N --wrap command; its output file is shown after it).
# --no-kill: srun --kill-on-bad-exit=0 (what many users run: srun does not end
# the others when a task fails; the ranks' own watchdog must, src/core/pmiwatch.c).
set -u
fail= once=
if [ "${1:-}" = --fail ]; then
    fail=$2
    shift 2
elif [ "${1:-}" = --once ]; then
    once=$2
    shift 2
fi
kill=--kill-on-bad-exit=1
if [ "${1:-}" = --no-kill ]; then
    kill=--kill-on-bad-exit=0
    shift
fi
mpi=--mpi=pmi2 alloc=
case ${1:-} in
--mpi=*) mpi=$1 && shift ;;
--salloc | --sbatch) alloc=${1#--} && shift ;;
esac
n=$1
shift
# the configuration .ci/slurm writes, when nothing else names one
ci_conf=${COURIER_SLURM_DIR:-/tmp/courier-slurm}/slurm.conf
[ -z "${SLURM_CONF:-}" ] && [ ! -e /etc/slurm/slurm.conf ] && [ -e "$ci_conf" ] &&
    export SLURM_CONF=$ci_conf
if ! command -v srun >/dev/null || ! command -v sinfo >/dev/null; then
    echo "skipped: no srun here (.ci/slurm start installs and starts a one-node Slurm)"
    exit 77
fi
states=$(timeout 10 sinfo -h -o %t 2>/dev/null)
if [ -z "$states" ]; then
    echo "skipped: Slurm does not answer (sinfo); .ci/slurm start starts a one-node one"
    exit 77
fi
# a node that can run a step: not down, drained, failed, unknown or silent (*)
if ! grep -qvE '^(down|drain|drng|fail|unk|boot|pow|maint|inval)|[*~#%!]$' <<<"$states"; then
    echo "skipped: no Slurm node is up (sinfo says: $(tr "\n" " " <<<"$states"))"
    exit 77
fi
# another kind than pmi2 (pmix): only where this Slurm has its plugin
kind=${mpi#--mpi=}
if [ "$kind" != pmi2 ] && [ "$kind" != none ] &&
    ! timeout 10 srun --mpi=list 2>&1 | grep -qE "^[[:space:]]*$kind\$"; then
    echo "skipped: this Slurm has no $kind plugin (srun --mpi=list)"
    exit 77
fi
# The job's processes carry a marker in their environment (checked with --fail).
export COURIER_SRUN_TEST_MARKER=courier-srun-$$-$RANDOM
run() {
    case $alloc in
    salloc) timeout -k 5 120 salloc -Q -n "$n" "$@" ;;
    sbatch)
        local o rc
        o=$(mktemp)
        timeout -k 5 120 sbatch -Q --wait -n "$n" -o "$o" --wrap "$(printf '%q ' "$@")"
        rc=$?
        cat "$o"
        rm -f "$o"
        return $rc
        ;;
    *) timeout -k 5 120 srun "$mpi" "$kill" -n "$n" "$@" ;;
    esac
}
if [ -n "$once" ]; then
    out=$(run "$@" 2>&1)
    rc=$?
    echo "$out"
    count=$(grep -cE -- "$once" <<<"$out")
    [ $rc -eq 0 ] || { echo "srun.sh: FAIL: srun exited with status $rc"; exit 1; }
    [ "$count" -eq 1 ] || { echo "srun.sh: FAIL: $count lines match '$once', not one"; exit 1; }
    exit 0
fi
if [ -z "$fail" ]; then
    run "$@"
    exit
fi
out=$(run "$@" 2>&1)
rc=$?
echo "$out"
echo "srun.sh: srun exited with status $rc"
status=0
if [ $rc -eq 0 ]; then
    echo "srun.sh: FAIL: the job should have failed"
    status=1
fi
if ! grep -qE -- "$fail" <<<"$out"; then
    echo "srun.sh: FAIL: the output does not match '$fail'"
    status=1
fi
# (the marker is in the environment of every process srun started, and of no
# other: this script exported it after it started, and grep runs without it).
# slurmstepd may still be reaping a killed step when srun returns: 5 s grace.
marker=$COURIER_SRUN_TEST_MARKER
for _ in $(seq 50); do
    left=$(env -u COURIER_SRUN_TEST_MARKER grep -lsa "$marker" /proc/[0-9]*/environ)
    [ -z "$left" ] && break
    sleep 0.1
done
if [ -n "$left" ]; then
    echo "srun.sh: FAIL: processes of the job are still there: $(tr "\n" " " <<<"$left")"
    status=1
fi
exit $status
