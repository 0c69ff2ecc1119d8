#!/bin/bash
# Runs a command (a job) and keeps its exit status, unless its standard error
# has more than one line from courier ("courier: ..."): then says so and exits
# 99. A failure must be reported once, whichever jobs it ends.
#   one_line.sh command...
err=$(mktemp)
"$@" 2>"$err"
status=$?
cat "$err" >&2
n=$(grep -c '^courier: ' "$err")
rm -f "$err"
if [ "$n" -gt 1 ]; then
    echo "FAIL: $n lines from courier, wanted one" >&2
    exit 99
fi
exit $status
