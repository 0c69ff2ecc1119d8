#!/bin/bash
# The automatic choice of a collective's algorithm, checked in the job's trace
# (courier run --trace: each call's "how", docs/tools.md):
#   auto_how.sh CALL NP BLOCK HOW -- courier run -n NP ... prog [args]
# The job must exit 0; CALL must have run with blocks of BLOCK bytes or more
# (its record's bytes over NP), and every such record must name HOW; no record
# with smaller blocks may name it. Exit 77 where single copy is refused.
set -u
call=$1 np=$2 block=$3 how=$4
shift 4
[ "$1" = -- ] && shift
# HOW direct reads by single copy, which Yama's ptrace_scope 2 and 3 refuse
if [ "$how" = direct ] && [ "$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo 0)" -ge 2 ]; then
    echo "SKIP: no single copy on this machine (kernel.yama.ptrace_scope)"
    exit 77
fi
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
. "$(dirname "$0")/traced.sh"
run_traced "$d/t.json" "$@"
grep '"cat":"call"' "$d/t.json" |
    sed -n 's/.*"name":"\([^"]*\)".*"bytes":\([0-9]*\),.*"how":"\([^"]*\)".*/\1\t\2\t\3/p' |
    awk -F'\t' -v c="$call" '$1 == c' >"$d/calls"
big=$(awk -F'\t' -v n="$np" -v b="$block" '$2 / n >= b' "$d/calls" | wc -l)
wrong=$(awk -F'\t' -v n="$np" -v b="$block" -v h="$how" '($2 / n >= b) != ($3 == h)' "$d/calls" |
    sort -u -k2,2n)
[ "$big" -gt 0 ] || { echo "FAIL: no $call with blocks of $block bytes or more"; exit 1; }
[ -z "$wrong" ] || { echo "FAIL: $call ran $how exactly from blocks of $block bytes? these did not:"; echo "$wrong"; exit 1; }
echo "$call: $how from blocks of $block bytes ($big calls)"
