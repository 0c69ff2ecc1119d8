#!/bin/bash
# Consecutive short jobs (400 in the suite) leave no process, no shared memory and no
# temporary file behind, and each exits 0.   jobs.sh COURIER PROGRAM [COUNT]
# Descriptors: PROGRAM is rel_fds, whose ranks check in every job that they
# hold none but their own (a launcher's leak into its ranks fails that job);
# the launcher's own end with it, and what survives a job is a process, found
# by its marker.
set -u
courier=$1 prog=$2 count=${3:-1000}
marker="courier-jobs-$$"
shm0=$(ls /dev/shm | sort)
# A private, empty TMPDIR: other tests running beside this one use /tmp too.
TMPDIR=$(mktemp -d)
export TMPDIR
trap 'rm -rf "$TMPDIR"' EXIT
for i in $(seq "$count"); do
    "$courier" run -n 2 "$prog" "$marker" >/dev/null || { echo "FAIL: job $i exited with status $?"; exit 1; }
done
fail=0
pgrep -f "$marker" >/dev/null && { echo "FAIL: processes left:"; pgrep -af "$marker"; fail=1; }
# (by name, not by count: other tests beside this one come and go there; a new
# file that a live process maps or holds open is that process's, not a job's)
for f in $(comm -13 <(echo "$shm0") <(ls /dev/shm | sort)); do
    [ -e "/dev/shm/$f" ] || continue
    if ! grep -qsF "/dev/shm/$f" /proc/[0-9]*/maps &&
        ! find /proc/[0-9]*/fd -lname "/dev/shm/$f" 2>/dev/null | grep -q .; then
        echo "FAIL: new file left in /dev/shm: $f"
        fail=1
    fi
done
[ -z "$(ls -A "$TMPDIR")" ] || { echo "FAIL: temporary files left:"; ls -A "$TMPDIR"; fail=1; }
[ $fail -eq 0 ] && echo "ok: $count jobs, nothing left behind"
exit $fail
