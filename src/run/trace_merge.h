/* The launcher's end of tracing (trace_merge.c): the ranks' part files become
 * the one trace file the user asked for. */
#ifndef COURIER_TRACE_MERGE_H
#define COURIER_TRACE_MERGE_H

#include <stdint.h>
#include <stdio.h>

typedef struct cr_trace_job {
    const char *dir; /* the part files: DIR/rank-R */
    const char *out; /* the trace to write */
    int nranks;
    const char *command; /* the job's command line, as the trace names it */
    const char *clock;   /* "real", or "virtual (--sim SPEC)" in the simulated mode */
    const char *hang;    /* the hang watchdog's report (lines), or NULL */
    uint64_t hang_at;    /* when it was made (cr_clock_ns's clock) */
} cr_trace_job;

/* Write j->out from the parts; problems (a missing part, one cut short) are
 * one line each on err. Returns the number of events written, or -1 when the
 * trace could not be written. */
int cr_trace_merge(const cr_trace_job *j, FILE *err);
/* Remove the parts and their directory. */
void cr_trace_parts_remove(const char *dir, int nranks);

#endif
