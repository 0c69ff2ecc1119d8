#!/bin/bash
# 1,000 consecutive short jobs leave no process, no descriptor, no shared memory
# and no temporary file behind.   jobs.sh COURIER PROGRAM [COUNT]
set -u
courier=$1 prog=$2 count=${3:-1000}
marker="courier-jobs-$$"
shm0=$(ls /dev/shm | wc -l)
fd0=$(ls /proc/$$/fd | wc -l)
# A private, empty TMPDIR: other tests running beside this one use /tmp too.
TMPDIR=$(mktemp -d)
export TMPDIR
trap 'rm -rf "$TMPDIR"' EXIT
for i in $(seq "$count"); do
    "$courier" run -n 2 "$prog" "$marker" >/dev/null || { echo "FAIL: job $i exited $?"; exit 1; }
done
fail=0
pgrep -f "$marker" >/dev/null && { echo "FAIL: processes left:"; pgrep -af "$marker"; fail=1; }
[ "$(ls /dev/shm | wc -l)" -le "$shm0" ] || { echo "FAIL: /dev/shm grew"; fail=1; }
[ -z "$(ls -A "$TMPDIR")" ] || { echo "FAIL: temporary files left:"; ls -A "$TMPDIR"; fail=1; }
[ "$(ls /proc/$$/fd | wc -l)" -le "$fd0" ] || { echo "FAIL: descriptors leaked"; fail=1; }
[ $fail -eq 0 ] && echo "ok: $count jobs, nothing left behind"
exit $fail
