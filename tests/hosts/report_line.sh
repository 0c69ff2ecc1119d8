#!/bin/bash
# A report line starts a line of its own even where stdout and stderr are two
# pipes that a reader merges (ctest, srun, a CI log): rank 0 writes 5000 bytes
# to stdout and no newline (the launcher forwards 4 KiB of it), rank 1 exits 3.
# The launcher's stderr must end the merged line before its report: the line
# before the report on stderr is empty.
#   report_line.sh CMD
set -u
cmd=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$cmd" run --hosts a,b --rsh none -n 1 sh -c "printf '%5000s' '' && sleep 30" \
    : -n 1 sh -c "sleep 0.5 && exit 3" >"$tmp/out" 2>"$tmp/err"
st=$?
cat "$tmp/err"
[ $st -eq 3 ] || { echo "FAIL: status $st (want 3)"; exit 1; }
awk '/^courier: rank 1 on host b \(pid [0-9]+\) exited with status 3. ending the job$/ {
         found = 1; exit !(NR > 1 && prev == "") }
     { prev = $0 }
     END { if (!found) exit 1 }' "$tmp/err" ||
    { echo "FAIL: the report does not follow an empty line on stderr"; exit 1; }
echo "report on a line of its own"
