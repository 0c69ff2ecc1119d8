/* Single copy (single_copy.c): reading and writing another rank's memory through
 * the transport that owns it (shm: process_vm_readv/writev), and the one rule
 * for a refusal. The engine's rendezvous (engine.c), the single-copy
 * collectives (src/coll/coll_direct.c), the one-sided operations (rma.c) and
 * MPI-IO's collective buffering (src/api/mpi_file_coll.c) move memory this
 * way; nothing else calls a transport's get, put, getv or putv, or reads its
 * capabilities for them.
 *
 * The rule: when the kernel or the transport refuses a copy with a peer
 * (EPERM, EACCES, ENOSYS: seccomp, Yama, a process made undumpable), single
 * copy with that peer is off from then on, in both directions and for every
 * caller, and the data goes by messages; the caller that met the refusal moves
 * its bytes another way. COURIER_NO_CMA=1 turns it off for every peer from the
 * start (job.c). */
#ifndef COURIER_SINGLE_COPY_H
#define COURIER_SINGLE_COPY_H

#include <sys/uio.h>

#include "engine.h"

/* What a caller needs of the peer's transport besides single copy being on. */
enum {
    CR_SC_READ = 1,  /* get */
    CR_SC_WRITE = 2, /* put */
    CR_SC_VEC = 4    /* with READ and/or WRITE: their vector forms (getv, putv) */
};

/* Does the transport that owns peer offer single copy (reads of its memory)?
 * A fact of the transport table, the same on every rank whatever was refused
 * since: what a collective may choose its algorithm by. */
bool cr_sc_offered(const cr_job *job, int peer);

/* May this rank copy with peer now, in the ways 'what' names: its transport
 * has them, and single copy with peer is neither off (COURIER_NO_CMA) nor
 * refused so far. */
static inline bool cr_sc_on(const cr_job *job, int peer, unsigned what)
{
    const cr_transport *t = cr_via(job, peer)->ops;
    bool vec = what & CR_SC_VEC;
    return job->single_copy[peer] &&
           (!(what & CR_SC_READ) || (vec ? t->getv != NULL : t->get != NULL)) &&
           (!(what & CR_SC_WRITE) || (vec ? t->putv != NULL : t->put != NULL));
}

/* Read len bytes at addr in peer's memory into dst (cr_sc_read), or write len
 * bytes of src to addr there (cr_sc_write). True: done (len 0: always). False:
 * single copy with peer is refused, now (recorded here: see the rule above)
 * or before; the caller moves these bytes by messages. Any other failure ends
 * the job with one line naming op, the peer, the size and the reason (a peer
 * that died: once the launcher has had the time to say so itself). */
bool cr_sc_read(cr_job *job, const char *op, int peer, void *dst, uint64_t addr, size_t len);
bool cr_sc_write(cr_job *job, const char *op, int peer, uint64_t addr, const void *src, size_t len);

/* For a caller whose other way reports a bad address in its own words (the
 * one-sided service checks every request against the memory its rank
 * exposed): n pieces (local[i] here, remote[i] at the peer, the same length;
 * one piece: get or put, more: getv or putv), true when done. False when not:
 * a refusal is recorded as above, and any other failure is left to the other
 * way. */
bool cr_sc_try(cr_job *job, int peer, bool write, const struct iovec *local,
               const struct iovec *remote, int n);

#endif
