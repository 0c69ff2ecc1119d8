/* Shared by the native interface's files (src/api/native.c, rma.c, stream.c,
 * modes.c): the entry that starts the job and takes the engine lock, and the
 * job-wide group of the native collectives. */
#ifndef COURIER_NATIVE_H
#define COURIER_NATIVE_H

#include "../coll/coll.h"
#include "courier/courier.h"

/* Events per rank (cr_event_new). */
#define CR_NEVENTS 1024

/* A region (onesided.c): every rank's memory under one key. */
typedef struct cr_region {
    bool used;
    cr_rtable t;
    void *alloc;  /* cr_region_alloc's memory here, or NULL */
    cr_shared sh; /* ... and how others map it (fd -1: private) */
} cr_region;

/* A handle not yet waited for: its transfer's ticket (0: complete). */
typedef struct cr_pending {
    uint64_t handle, ticket;
} cr_pending;

typedef struct cr_native {
    cr_group group; /* every rank of the job, on CR_CTX_NATIVE */
    /* one-sided (onesided.c) */
    cr_region *regions;
    int nregions;
    uint64_t *events; /* this rank's event counters (shared memory when it could be made) */
    cr_shared evsh;
    cr_rtable evt; /* every rank's counters, once published (evt.pub non-NULL) */
    uint8_t ev_used[CR_NEVENTS];
    cr_pending *pend; /* handles not yet waited for */
    int npend, cpend;
    uint64_t next_handle;
} cr_native;

/* Entry of every native call that uses the engine: the job, with the lock
 * held and the call begun in the trace; cr_native_leave ends both. */
cr_job *cr_native_enter(const char *call);
static inline void cr_native_leave(cr_job *job)
{
    cr_call_leave(job);
    cr_unlock(job);
}

#endif
