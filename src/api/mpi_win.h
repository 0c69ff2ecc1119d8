/* MPI one-sided communication's private header (src/api/mpi_win*.c): the
 * window object, the layout of a member's control block, and what the three
 * files share. mpi_win.c makes, frees and describes windows (handles,
 * errors, names, info, attributes); mpi_win_rma.c moves data (put, get, the
 * accumulates, the queue of an active-target epoch's small transfers, and the
 * target's service that does an accumulate for an origin that does not map its
 * control block); mpi_win_sync.c opens and closes the
 * epochs (fence, lock, lock_all, post/start/complete/wait, flush, sync).
 *
 * Invariants (mpi_win.c's opening comment holds the window's):
 *  - a member's control block is ctl_words() 64-bit words: the window lock
 *    (CTL_LOCK: readers count, LOCK_WRITER for the writer), the accumulate
 *    lock (CTL_ACC), then per member its "posted" (ctl_post) and "completed"
 *    (ctl_done) counters, the number of attached regions (ctl_natt), for a
 *    dynamic window their (address, length) pairs, and last the clock of
 *    --check=rma (ctl_chk);
 *  - a window handle names a live window only while win_get finds it used; a
 *    scratch buffer (scratch_get) is given back with scratch_put by the call
 *    that took it. */
#ifndef COURIER_MPI_WIN_H
#define COURIER_MPI_WIN_H

#include "mpi_impl.h"

enum { CTL_LOCK = 0, CTL_ACC = 1, CTL_FIRST = 2 };
/* Regions a dynamic window's member may have attached at once. */
#define MAX_ATTACH 16384
/* An accumulate into a member whose control block this rank does not map is
 * done by the target's service up to this many pieces and bytes (acc_remote),
 * beyond by the origin. */
#define ACC_CALL_PIECES 65536
#define ACC_CALL_BYTES (16u << 20)
#define LOCK_WRITER (1ull << 62)

typedef struct mpi_rmachk mpi_rmachk;

typedef struct mpi_win {
    bool used;
    MPI_Comm comm; /* a private duplicate of the creating communicator */
    mpi_comm *c;
    int size, me;
    int flavor;
    void *base;
    MPI_Aint wsize;
    int disp_unit;
    int *disps;      /* per member: its disp_unit */
    cr_rtable mem;   /* every member's window memory */
    cr_rtable ctl;   /* every member's control block */
    uint64_t *myctl; /* mine */
    cr_shared ctlsh;
    void *alloc; /* MPI_Win_allocate's memory, or the shared segment (shared: seg) */
    cr_shared allocsh;
    size_t alloclen;
    /* epochs */
    bool fence_on;   /* a fence opened an epoch (no MPI_MODE_NOSUCCEED) */
    uint8_t *lockst; /* per member: 0, MPI_LOCK_SHARED or MPI_LOCK_EXCLUSIVE (held by me) */
    int nlocks;
    int lock_all;      /* 1: MPI_Win_lock_all, 2: ... with MPI_MODE_NOCHECK (no lock taken) */
    int *access, nacc; /* start: the targets */
    bool acc_on;
    int *expose, nexp; /* post: the origins */
    bool exp_on;
    MPI_Errhandler errh;
    char name[MPI_MAX_OBJECT_NAME];
    mpi_attrs attrs;
    MPI_Info info;
    uint64_t sync_word; /* MPI_Win_sync's barrier */
    mpi_rmachk *chk;    /* courier run --check=rma (mpi_check_rma.c): NULL while off */
    /* Scratch buffers of the accumulates, kept between calls (a fresh large
     * malloc is a page fault per page, every call); one in use is not shared
     * (another thread's call takes its own). */
    struct scratch {
        char *p;
        size_t cap;
        bool busy;
    } scratch[3];
    /* Small puts and accumulates of an active-target epoch into members'
     * memory this rank does not map, queued per member as records for its
     * service (mpi_win_rma.c, "Deferred"): dq[m] (NULL until the first), ndq
     * members whose queue holds some. */
    struct win_defer {
        char *buf;
        size_t len, cap;
    } * dq;
    int ndq;
} mpi_win;

enum { SCR_TARGET, SCR_SPAN, SCR_ORIGIN };

/* A scratch buffer k of w of len bytes (the window's own when free, else
 * one of its own), given back with scratch_put. */
char *scratch_get(cr_job *job, const char *call, mpi_win *w, int k, size_t len);
void scratch_put(mpi_win *w, int k, char *p);

/* The window of handle h, or NULL: not a live window. Inline: every put and
 * get takes it. */
static inline mpi_win *win_get(MPI_Win h)
{
    if (!h_is(h, K_WIN)) return NULL;
    int i = h_idx(h);
    const mpi_state *m = mpi_st();
    return i < m->wins.n && m->wins.w[i] && m->wins.w[i]->used ? m->wins.w[i] : NULL;
}

/* Report an error on window h (its handler; COMM_WORLD's when h is no window). */
int win_fail(cr_job *job, MPI_Win h, const char *call, int code, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* *out: the window of h; else MPI_ERR_WIN reported. */
int win_check(cr_job *job, const char *call, MPI_Win h, mpi_win **out);

static inline size_t ctl_words(int n, int flavor)
{
    return CTL_FIRST + 2 * (size_t)n + 2 + (flavor == MPI_WIN_FLAVOR_DYNAMIC ? 2 * MAX_ATTACH : 0);
}
static inline size_t ctl_post(int i)
{
    return CTL_FIRST + (size_t)i;
}
static inline size_t ctl_done(const mpi_win *w, int i)
{
    return CTL_FIRST + (size_t)w->size + (size_t)i;
}
static inline size_t ctl_natt(const mpi_win *w)
{
    return CTL_FIRST + 2 * (size_t)w->size;
}
/* The last word: --check=rma's clock of this member (mpi_check_rma.c). */
static inline size_t ctl_chk(const mpi_win *w)
{
    return ctl_words(w->size, w->flavor) - 1;
}

static inline cr_rtarget ctl_at(const mpi_win *w, int m, size_t word)
{
    return cr_rtable_at(&w->c->g, &w->ctl, m, word * 8);
}

/* An atomic operation (op, a, b) on word of member m's control block: its old value. */
uint64_t ctl_amo(cr_job *job, const char *call, mpi_win *w, int m, size_t word, int op, uint64_t a,
                 uint64_t b);

/* A wait for a lock word (a window's lock or its accumulate lock) held by
 * someone else: the word is tried again and again, so the engine's waits, which
 * wake on messages, do not serve; once it naps, the wait is shown to the
 * watchdog as blocked (a holder that waits for this rank in turn is a hang it
 * reports; one that computes keeps the job from counting as hung). */
typedef struct lock_wait {
    unsigned tries;
    int owner; /* whose window */
    cr_wait w;
} lock_wait;
void lock_wait_begin(lock_wait *lw, const char *call, int owner_rank);
void backoff(cr_job *job, lock_wait *lw);
void lock_wait_end(cr_job *job, lock_wait *lw);

/* Send member t's queued records (t = -1: every member's) to its service;
 * the epoch's flush (cr_rma_flush) then waits until they were applied. The
 * calls that close an active-target epoch, and MPI_Win_free, call it first. */
void win_defer_send(cr_job *job, const char *call, mpi_win *w, int t);

/* The target's service (cr_rma_call) for the accumulates of origins that do not
 * map this member's control block (mpi_win_rma.c); every window registers it. */
int acc_serve(cr_job *job, int origin, const void *in, size_t len, void **out, size_t *outlen);

#endif
