/* The engine's one-sided operations (src/core/rma.c): what the native
 * interface's regions (src/api/onesided.c) and MPI's windows (src/api/mpi_win.c)
 * are built on.
 *
 * A target is a peer's memory as this rank sees it (cr_rtarget): its address
 * there and, when it is shared memory of this host that this rank mapped, its
 * address here. Each operation takes the fastest path the target allows:
 *  - mapped: plain loads, stores and atomic instructions, no system call and no
 *    CPU of the target;
 *  - single copy (shm transport, process_vm_readv/writev): put and get without
 *    the target's CPU;
 *  - otherwise (tcp, ucx, a kernel that denies single copy) a request to the
 *    target's service: a background hook of the target's engine, run by any of
 *    its calls and by its progress thread, which wakes on incoming messages, so
 *    a target computing without calling courier still serves it.
 * Atomics on unmapped memory always go to the service (single copy is not
 * atomic), so every atomic on one word is made by the same instructions,
 * whichever ranks race for it.
 *
 * The service accepts only addresses inside memory its rank exposed
 * (cr_rma_expose): a request outside is refused, with one line, and never
 * written. The callers check their own bounds before (they know the target's
 * sizes): the service's check is the last line of defence. */
#ifndef COURIER_RMA_H
#define COURIER_RMA_H

#include "engine.h"

/* Shared memory this rank made for others of its host to map (memfd). */
typedef struct cr_shared {
    int32_t pid; /* the process that holds fd */
    int32_t fd;  /* -1: none */
    uint64_t len;
    uint64_t off; /* where what is published starts in it (a window in an MPI_Alloc_mem block) */
} cr_shared;

/* A peer's memory as seen from here. */
typedef struct cr_rtarget {
    int peer;      /* job rank */
    uint64_t addr; /* its address at the peer */
    char *map;     /* its address here (mapped shared memory), or NULL */
} cr_rtarget;

/* Atomic operations on one 64-bit word. */
enum cr_amo {
    CR_AMO_READ = 0, /* no change; returns the word */
    CR_AMO_SWAP,     /* word = a */
    CR_AMO_ADD,      /* word += a */
    CR_AMO_CAS,      /* if word == b: word = a */
    CR_AMO_OR,
    CR_AMO_AND,
    CR_AMO_XOR,
    /* or'ed into op for cr_rma_amo: nobody sleeps waiting for this word to
     * change (a lock word whose waiters try again), so the target is not
     * woken: a wake-up is a system call when it sleeps */
    CR_AMO_QUIET = 0x100
};
/* Apply op to *p (the one place the instructions are chosen); returns the old word. */
uint64_t cr_amo_apply(uint64_t *p, int op, uint64_t a, uint64_t b);

/* Memory that the same-host ranks may map: len bytes (zeroed, page-aligned),
 * described in *out for them; NULL (errno set) when it cannot be made. */
void *cr_shared_alloc(cr_job *job, size_t len, cr_shared *out);
void cr_shared_free(void *p, const cr_shared *s);
/* Map peer's shared memory s here, returning where s->off is in it; NULL when
 * that cannot be done (another host, or the kernel denies it): the caller then
 * takes the other paths. cr_shared_unmap takes what cr_shared_map returned. */
void *cr_shared_map(cr_job *job, int peer, const cr_shared *s);
void cr_shared_unmap(void *p, const cr_shared *s);

/* Can this rank reach len bytes at t without the peer's service: mapped, or
 * by single copy (tried once on a byte of it, since a kernel may deny what the
 * transport offers; denied, the peer takes the service from now on)? With
 * atomics, only mapped memory (or none at all) will do. */
bool cr_rma_reaches(cr_job *job, const cr_rtarget *t, size_t len, bool atomics);

/* The service: len bytes at base may be read and written by peers' requests
 * from now on (cr_rma_hide: no longer). Expose memory before any peer can
 * know its address: a request that comes first is refused. cr_rma_serve:
 * some peer will send requests, so the service must run (the first call starts
 * it and the progress thread); peers that reach the memory themselves need
 * neither. */
void cr_rma_expose(cr_job *job, const void *base, size_t len);
void cr_rma_serve(cr_job *job);
/* A message on the one-sided context found no receive here (the engine says
 * so): a request for a service that was never started, because its origin
 * reached this memory by single copy when the window was made and was
 * refused since. The service starts in the next progress round and serves
 * while this rank is in a call (no progress thread: that is started only
 * outside the engine's rounds, by cr_rma_serve). */
void cr_rma_unexpected(cr_job *job, int tag);
void cr_rma_hide(cr_job *job, const void *base);

/* Transfers. Each returns a ticket (0: complete already); cr_rma_done says
 * whether a ticket's transfer is complete (src reusable and the data at the
 * target; dst filled), cr_rma_flush waits for every transfer to peer (-1:
 * every peer). A transfer's done(arg) runs, under the lock, once it completes
 * (before cr_rma_done says so). event >= 0: the target's event counter of that
 * index (in the array of counters at address evaddr there) is incremented once
 * the data is there / was read (see cr_rma_event_target). */
typedef struct cr_rma_opt {
    const cr_rtarget *ev; /* target of the event word, or NULL: none */
    void (*done)(cr_job *job, void *arg);
    void *arg;
    /* a put of the simulator's hardware broadcast (cr_vt_group_begin): its group
     * (0: none) and range, so that the targets' answers are combined */
    uint32_t bcast_grp;
    int bcast_lo, bcast_hi;
} cr_rma_opt;
/* The puts to ranks lo..hi between these two calls are one broadcast (the CS-2
 * Elite switch's, cr_put_bcast): under courier run --sim, one hardware
 * broadcast of the model where it has one, their answers combined. bcast_begin
 * returns the option the puts take (in *o; NULL: none, as for real). */
const cr_rma_opt *cr_rma_bcast_begin(cr_job *job, int lo, int hi, cr_rma_opt *o);
void cr_rma_bcast_end(cr_job *job);
uint64_t cr_rma_put(cr_job *job, const char *call, const cr_rtarget *t, const void *src, size_t len,
                    const cr_rma_opt *opt);
uint64_t cr_rma_get(cr_job *job, const char *call, const cr_rtarget *t, void *dst, size_t len,
                    const cr_rma_opt *opt);
/* Many pieces at once: run i is runs[i].len bytes at t->addr + runs[i].off
 * there, and the next runs[i].len bytes of data here (packed, in order).
 * opt->done runs once, when all of them are complete; returns whether that
 * happened already. */
typedef struct cr_run {
    int64_t off;
    size_t len;
} cr_run;
bool cr_rma_putv(cr_job *job, const char *call, const cr_rtarget *t, const cr_run *runs, int n,
                 const char *data, const cr_rma_opt *opt);
bool cr_rma_getv(cr_job *job, const char *call, const cr_rtarget *t, const cr_run *runs, int n,
                 char *data, const cr_rma_opt *opt);
/* An atomic on the 64-bit word at t (8-byte aligned): blocks until it is done;
 * returns the old word. */
uint64_t cr_rma_amo(cr_job *job, const char *call, const cr_rtarget *t, int op, uint64_t a,
                    uint64_t b);
/* Work done at the target by the layer above (MPI's accumulates): a handler
 * registered there gets each call's len bytes, in the order they came; it
 * returns 1 when it cannot run now (a lock another holds: it is called again,
 * and the calls after wait), else 0 with *out (malloc'd, or NULL) and *outlen
 * the answer. cr_rma_call sends one (at most CR_RMA_CALL_MAX bytes at in,
 * malloc'd: the engine frees it once sent);
 * the answer lands in out (outlen bytes) once its ticket is done. The handler
 * runs under the lock, in the service: it must not wait. */
#define CR_RMA_CALL_MAX (64 << 20)
/* Puts and calls up to this size travel inside their request: one message,
 * copied there, without a receive posted for what follows. */
#define CR_RMA_INLINE 4096
typedef int (*cr_rma_call_fn)(cr_job *job, int origin, const void *in, size_t len, void **out,
                              size_t *outlen);
void cr_rma_set_call(cr_job *job, cr_rma_call_fn fn);
uint64_t cr_rma_call(cr_job *job, const char *call, int peer, void *in, size_t len, void *out,
                     size_t outlen);
/* A call without an answer (in, len as for cr_rma_call; out of nothing): the
 * peer runs it before the next call this rank sends it, whose answer therefore
 * says both are done. Nothing waits for it before then: a flush does not. For
 * a queue of calls whose last is answered (MPI's deferred transfers). */
void cr_rma_call_quiet(cr_job *job, const char *call, int peer, void *in, size_t len);
/* Does [addr, addr+len) lie in memory this rank exposed (for a handler)? */
bool cr_rma_exposed(cr_job *job, uint64_t addr, uint64_t len);
bool cr_rma_done(cr_job *job, uint64_t ticket);
/* Retire the transfers that completed (their done callbacks run). */
void cr_rma_reap(cr_job *job);
void cr_rma_flush(cr_job *job, const char *call, int peer);
/* Nothing of this rank's in flight: cr_rma_flush would return at once. Only
 * the threads that start transfers change that (the progress thread never
 * does), so with one program thread it may be asked without the lock. */
bool cr_rma_idle(cr_job *job);
/* courier run --sim has no progress thread: the rank's service runs only in
 * its calls. Synchronization calls (a flush, MPI_Win_sync) serve pending
 * requests there (one poll, which costs virtual time when it finds nothing),
 * so that a loop of them, waiting on a word others set, lets them set it. */
void cr_rma_sim_serve(cr_job *job);
/* A wait for this rank's own word *p to satisfy ready (peers change it with
 * atomics): progress and sleep like any wait; ringing is the writers' part. */
void cr_rma_wait_word(cr_job *job, const char *call, bool (*ready)(void *), void *arg);

#endif
