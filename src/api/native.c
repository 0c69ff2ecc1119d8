/* The native interface's job calls (courier.h): rank, size, barrier, clock, and
 * the group the native collectives share (cr_native_enter).
 *
 * Invariants: the native state lives in job->native, made on the first native
 * call and changed only under the engine lock; every entry point takes the lock
 * (cr_native_enter) and releases it on every return (cr_native_leave, which
 * also ends the call in the trace). The native
 * collectives run over the whole job on context CR_CTX_NATIVE, so they never
 * match another interface's traffic. */
#include <stdlib.h>

#include "native.h"

cr_job *cr_native_enter(const char *call)
{
    cr_job *job = cr_job_get();
    cr_lock(job);
    cr_call_enter(job, call);
    if (!job->native) {
        cr_native *n = calloc(1, sizeof *n);
        if (!n) cr_fatal(job, "courier", "out of memory for the native interface's state");
        n->group = (cr_group){.size = job->size, .me = job->rank, .ctx = CR_CTX_NATIVE};
        job->native = n;
    }
    return job;
}

int cr_rank(void)
{
    return cr_job_get()->rank;
}

int cr_size(void)
{
    return cr_job_get()->size;
}

void cr_sync(void)
{
    cr_job *job = cr_native_enter("cr_sync");
    cr_coll_barrier(job, &job->native->group, "cr_sync");
    cr_native_leave(job);
}

double cr_time(void)
{
    return (double)cr_timer_ns() * 1e-9;
}

long long cr_virtual_ns(void)
{
    /* never starts the job: the shim calls it for whatever reads a clock */
    if (!atomic_load_explicit(&cr_job_ready, memory_order_acquire) || !cr_the_job.vt.base)
        return -1;
    return (long long)cr_timer_ns(); /* from any thread: only the rank's counts compute */
}
