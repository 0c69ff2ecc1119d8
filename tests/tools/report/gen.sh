#!/bin/sh
# Writes a synthetic courier trace on stdout, for the large-file test and for timing:
#   gen.sh RANKS ITERATIONS [interleaved|by-rank]
# Each rank runs for ITERATIONS x 10 us; in each 10 us it makes one MPI_Sendrecv
# [t, t+4] (wait 1 us) with an MPI_Send [t+1, t+3] nested in it (written first, as a
# writer that emits calls when they end does), and sends one 64-byte message to the next
# rank, which posted its receive 0.5 us before the send (a late sender of 0.5 us).
# interleaved: events in time order across ranks; by-rank: all of rank 0, then rank 1...
# (as if per-rank files were concatenated). Both must give the same report.
ranks=$1 iters=$2 order=${3:-interleaved}
awk -v R="$ranks" -v K="$iters" -v O="$order" '
function ev(r, i,   t, to, id, from) {
    t = i * 10; to = (r + 1) % R; from = (r + R - 1) % R
    id = r * K + i; fid = from * K + i
    printf "{\"ph\":\"X\",\"cat\":\"call\",\"name\":\"MPI_Send\",\"pid\":%d,\"tid\":0,\"ts\":%.3f,\"dur\":2.000,\"args\":{\"peer\":%d,\"tag\":1,\"bytes\":64,\"ctx\":8192,\"how\":\"eager\",\"wait\":0.000}},\n", r, t + 1, to
    printf "{\"ph\":\"s\",\"cat\":\"msg\",\"name\":\"msg\",\"id\":%d,\"pid\":%d,\"tid\":0,\"ts\":%.3f,\"args\":{\"to\":%d,\"bytes\":64,\"tag\":1,\"ctx\":8192,\"how\":\"eager\"}},\n", id, r, t + 1, to
    printf "{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"msg\",\"name\":\"msg\",\"id\":%d,\"pid\":%d,\"tid\":0,\"ts\":%.3f,\"args\":{\"from\":%d,\"bytes\":64,\"tag\":1,\"ctx\":8192,\"how\":\"eager\",\"posted\":%.3f}},\n", fid, r, t + 1.5, from, t + 0.5
    printf "{\"ph\":\"X\",\"cat\":\"call\",\"name\":\"MPI_Sendrecv\",\"pid\":%d,\"tid\":0,\"ts\":%.3f,\"dur\":4.000,\"args\":{\"peer\":%d,\"tag\":1,\"bytes\":64,\"ctx\":8192,\"how\":\"\",\"wait\":1.000}},\n", r, t, to
}
BEGIN {
    print "{\"traceEvents\":["
    for (r = 0; r < R; r++)
        printf "{\"ph\":\"X\",\"cat\":\"run\",\"name\":\"rank %d\",\"pid\":%d,\"tid\":0,\"ts\":0.000,\"dur\":%.3f},\n", r, r, K * 10
    if (O == "by-rank") { for (r = 0; r < R; r++) for (i = 0; i < K; i++) ev(r, i) }
    else { for (i = 0; i < K; i++) for (r = 0; r < R; r++) ev(r, i) }
    print "{\"ph\":\"M\",\"pid\":0,\"name\":\"process_name\",\"args\":{\"name\":\"rank 0\"}}"
    print "],"
    print "\"displayTimeUnit\":\"ns\","
    printf "\"otherData\":{\"courier_trace\":1,\"ranks\":%d,\"command\":\"gen.sh\",\"clock\":\"real\",\"lost\":{}}}\n", R
}'
