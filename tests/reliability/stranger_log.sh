#!/bin/bash
# What a job attacked by a stranger says (issue 11): tests/reliability/stranger.c
# run over TCP through tests/expect.sh, which wants exit status 0, a refused
# connection named on stderr, and nothing left behind (the stranger carries the
# job's marker too). Then, from the job's stderr: every rank refused someone,
# and each rank logged each kind of refusal at most once, however many
# connections of that kind it refused (hundreds).
#   stranger_log.sh EXPECT_SH COURIER STRANGER_PROGRAM [SECONDS]
# A kind is the reason after "refused a connection from ADDR:" with numbers
# left out; "hung up before" and "reset the connection before" are one kind
# (a connection that closed before proving itself), as are the lines about too
# many unproven connections at once.
# Invariant: bounded by the job's --timeout and expect.sh's own bounded waits.
set -u
expect=$1 courier=$2 prog=$3 secs=${4:-8} np=4
export COURIER_TRANSPORTS=${COURIER_TRANSPORTS:-tcp}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$expect" 0 "courier: rank [0-9]+: tcp: refused a connection from" \
    -- "$courier" run -n $np --timeout 120 "$prog" "$secs" 2>"$log"
status=$?
cat "$log" >&2
[ $status -eq 0 ] || exit 1
awk -v np=$np '
/^courier: rank [0-9]+: tcp: / {
    split($3, a, ":"); rank = a[1]
    line = $0
    if (line ~ /refused a connection from [^ ]+: /) {
        sub(/.*refused a connection from [^ ]+: /, "", line)
        refusals[rank]++
    } else if (line ~ /connections at once/)
        line = "too many unproven connections"
    else
        next
    gsub(/[0-9]+/, "N", line)
    sub(/^it (hung up|reset the connection) before/, "it closed before", line)
    if (++seen[rank SUBSEP line] == 2) {
        printf "FAIL: rank %s logged this kind of refusal more than once: %s\n", rank, line
        bad = 1
    }
}
END {
    for (r = 0; r < np; r++)
        if (!refusals[r]) { printf "FAIL: rank %d logged no refused connection\n", r; bad = 1 }
    if (!bad) print "ok: each rank logged each kind of refusal once"
    exit bad
}' "$log" >&2
