/* MPI one-sided communication (MPI-3.1 ch. 11): windows, their epochs, and
 * put/get/accumulate translated into the engine's one-sided operations
 * (src/core/rma.c) over the group's published memory (src/coll/coll_rma.c).
 *
 * Each member of a window publishes two things: its window memory (the
 * program's for MPI_Win_create, shared memory for MPI_Win_allocate, one
 * segment for MPI_Win_allocate_shared, nothing for a dynamic window, whose
 * targets are absolute addresses of attached memory) and a control block of
 * 64-bit words (shared memory when it can be made): a lock word, an
 * accumulate lock, per member a "posted" and a "completed" counter for
 * post/start/complete/wait, and a dynamic window's attached regions. Every
 * synchronization is an atomic on some member's control block; every transfer
 * is one engine put or get per contiguous run of the target datatype.
 *
 * Invariants:
 *  - a window handle is K_WIN | slot; a freed window's slot is cleared and a
 *    stale handle refused (MPI_ERR_WIN);
 *  - a transfer is refused unless this member is in an epoch that gives it
 *    access to the target (fence, lock, lock_all, start), and unless every
 *    byte it touches lies inside the target's window (or, dynamic, inside a
 *    region attached there): nothing is ever written outside;
 *  - accumulates, fetch-and-op and compare-and-swap run under the target's
 *    accumulate lock (its control block's word 1), so that two of them on one
 *    location never interleave, whichever ranks and paths they come from;
 *  - a call that returns leaves no temporary of a completed transfer behind:
 *    each transfer's temporary is freed by its completion (xfer_done). */
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
    /* Scratch buffers of the accumulates, kept between calls (a fresh large
     * malloc is a page fault per page, every call); one in use is not shared
     * (another thread's call takes its own). */
    struct scratch {
        char *p;
        size_t cap;
        bool busy;
    } scratch[3];
} mpi_win;

enum { SCR_TARGET, SCR_SPAN, SCR_ORIGIN };

static char *scratch_get(cr_job *job, const char *call, mpi_win *w, int k, size_t len)
{
    struct scratch *s = &w->scratch[k];
    char *p;
    if (s->busy) {
        p = malloc(len ? len : 1);
    } else {
        if (s->cap < len) {
            free(s->p);
            s->p = malloc(len);
            s->cap = s->p ? len : 0;
        }
        p = s->p;
        s->busy = p != NULL;
    }
    if (!p && len) cr_fatal(job, call, "out of memory for %zu bytes", len);
    return p;
}

static void scratch_put(mpi_win *w, int k, char *p)
{
    if (p && p == w->scratch[k].p)
        w->scratch[k].busy = false;
    else
        free(p);
}

static struct {
    mpi_win **w;
    int n;
} wins;

/* ---- handles and errors ------------------------------------------------------ */

static mpi_win *win_get(MPI_Win h)
{
    if (!h_is(h, K_WIN)) return NULL;
    int i = h_idx(h);
    return i < wins.n && wins.w[i] && wins.w[i]->used ? wins.w[i] : NULL;
}

static int win_fail(cr_job *job, MPI_Win h, const char *call, int code, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int win_fail(cr_job *job, MPI_Win h, const char *call, int code, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    mpi_win *w = win_get(h);
    if (!w) return mpi_fail(job, MPI_COMM_WORLD, call, code, "%s", msg);
    return mpi_fail_with(job, w->errh, &h, call, code, msg);
}

static int win_check(cr_job *job, const char *call, MPI_Win h, mpi_win **out)
{
    *out = win_get(h);
    if (*out) return MPI_SUCCESS;
    return mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_WIN,
                    h == MPI_WIN_NULL ? "window is MPI_WIN_NULL"
                                      : "%#x is not a window (freed, or another kind of handle)",
                    (unsigned)h);
}

static size_t ctl_words(int n, int flavor)
{
    return CTL_FIRST + 2 * (size_t)n + 1 + (flavor == MPI_WIN_FLAVOR_DYNAMIC ? 2 * MAX_ATTACH : 0);
}
static size_t ctl_post(int i)
{
    return CTL_FIRST + (size_t)i;
}
static size_t ctl_done(const mpi_win *w, int i)
{
    return CTL_FIRST + (size_t)w->size + (size_t)i;
}
static size_t ctl_natt(const mpi_win *w)
{
    return CTL_FIRST + 2 * (size_t)w->size;
}

static cr_rtarget ctl_at(const mpi_win *w, int m, size_t word)
{
    return cr_rtable_at(&w->c->g, &w->ctl, m, word * 8);
}

static uint64_t ctl_amo(cr_job *job, const char *call, mpi_win *w, int m, size_t word, int op,
                        uint64_t a, uint64_t b)
{
    cr_rtarget t = ctl_at(w, m, word);
    return cr_rma_amo(job, call, &t, op, a, b);
}

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

static void lock_wait_begin(lock_wait *lw, const char *call, int owner_rank)
{
    *lw = (lock_wait){.owner = owner_rank};
    lw->w.call = call;
    lw->w.lock_of = &lw->owner;
}

/* Back off between tries: move the engine (our own service included), then
 * give the CPU up for a moment. */
static void backoff(cr_job *job, lock_wait *lw)
{
    if (cr_progress(job)) return;
    if (++lw->tries < 64) {
        cr_cpu_relax();
        return;
    }
    if (lw->tries == 256) cr_wait_report(job, &lw->w, true);
    cr_unlock(job);
    if (lw->tries < 256) {
        sched_yield();
    } else {
        struct timespec ts = {0, 20000};
        nanosleep(&ts, NULL);
    }
    cr_lock(job);
}

static void lock_wait_end(cr_job *job, lock_wait *lw)
{
    if (lw->w.listed) cr_wait_report(job, &lw->w, false);
}

/* ---- creation ----------------------------------------------------------------- */

static mpi_win *win_slot(cr_job *job, const char *call, MPI_Win *h)
{
    int i = 0;
    while (i < wins.n && wins.w[i]) i++;
    if (i == wins.n) {
        mpi_win **t = realloc(wins.w, (size_t)(wins.n + 1) * sizeof *t);
        if (!t) cr_fatal(job, call, "out of memory for windows");
        wins.w = t;
        wins.w[wins.n++] = NULL;
    }
    mpi_win *w = calloc(1, sizeof *w);
    if (!w) cr_fatal(job, call, "out of memory for a window");
    wins.w[i] = w;
    *h = (MPI_Win)(K_WIN | (unsigned)i);
    return w;
}

static int acc_serve(cr_job *job, int origin, const void *in, size_t len, void **out,
                     size_t *outlen);

/* The collective part of every constructor: control blocks, memory tables. */
static void win_setup(cr_job *job, const char *call, mpi_win *w, void *base, size_t len,
                      const cr_shared *sh)
{
    cr_group *g = &w->c->g;
    w->size = w->c->size;
    w->me = w->c->me;
    cr_rma_set_call(job, acc_serve); /* before anyone can know the window */
    size_t cw = ctl_words(w->size, w->flavor);
    w->myctl = cr_shared_alloc(job, cw * 8, &w->ctlsh);
    if (!w->myctl) {
        w->ctlsh = (cr_shared){.fd = -1};
        w->myctl = calloc(cw, 8);
        if (!w->myctl) cr_fatal(job, call, "out of memory for the window's control block");
    }
    cr_coll_publish(job, g, call, w->myctl, cw * 8, w->ctlsh.fd >= 0 ? &w->ctlsh : NULL,
                    CR_PUB_ATOMICS, &w->ctl);
    cr_coll_publish(job, g, call, base, len, sh,
                    w->flavor == MPI_WIN_FLAVOR_DYNAMIC ? CR_PUB_ATTACH : 0, &w->mem);
    w->disps = malloc((size_t)w->size * sizeof *w->disps);
    w->lockst = calloc((size_t)w->size, 1);
    w->access = malloc((size_t)w->size * sizeof *w->access);
    w->expose = malloc((size_t)w->size * sizeof *w->expose);
    if (!w->disps || !w->lockst || !w->access || !w->expose)
        cr_fatal(job, call, "out of memory for a window of %d members", w->size);
    cr_coll_allgather(job, g, call, &w->disp_unit, w->disps, sizeof(int));
    w->errh = MPI_ERRORS_ARE_FATAL;
    w->info = MPI_INFO_NULL;
    w->used = true;
}

/* Checks shared by the constructors, before anything is made. */
static int create_check(cr_job *job, MPI_Comm comm, const char *call, MPI_Aint size, int disp_unit,
                        MPI_Win *win)
{
    mpi_comm *c = NULL;
    int rc = mpi_comm_check(job, call, comm, &c);
    if (rc) return rc;
    if (c->inter)
        return mpi_fail(job, comm, call, MPI_ERR_COMM,
                        "windows are made over intracommunicators only");
    if (!win) return mpi_fail(job, comm, call, MPI_ERR_ARG, "win is NULL");
    if (size < 0)
        return mpi_fail(job, comm, call, MPI_ERR_SIZE, "size %ld is negative", (long)size);
    if (disp_unit <= 0)
        return mpi_fail(job, comm, call, MPI_ERR_DISP, "disp_unit %d is not positive", disp_unit);
    return MPI_SUCCESS;
}

/* The constructors' common path: dup the communicator (outside the lock), make
 * the window, publish. kind: MPI_WIN_FLAVOR_*. */
static int win_make(const char *call, int flavor, void *base, MPI_Aint size, int disp_unit,
                    MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    cr_job *job = mpi_enter(call);
    int rc = create_check(job, comm, call, size, disp_unit, win);
    if (!rc) rc = mpi_info_arg(job, comm, call, info, true);
    if (!rc && flavor != MPI_WIN_FLAVOR_CREATE && flavor != MPI_WIN_FLAVOR_DYNAMIC && !baseptr)
        rc = mpi_fail(job, comm, call, MPI_ERR_ARG, "baseptr is NULL");
    if (!rc && flavor == MPI_WIN_FLAVOR_CREATE && !base && size)
        rc = mpi_fail(job, comm, call, MPI_ERR_ARG, "base is NULL but size is %ld", (long)size);
    cr_unlock(job);
    MPI_Comm dup;
    if (!rc) rc = PMPI_Comm_dup(comm, &dup); /* inside this call, as the trace shows it */
    if (rc) return mpi_leave_unlocked(job, rc);
    cr_lock(job);
    mpi_win *w = win_slot(job, call, win);
    w->comm = dup;
    w->c = mpi_comm_get(dup);
    const mpi_comm *parent = mpi_comm_get(comm);
    if (parent && w->c) /* how the watchdog names the window's traffic */
        snprintf(w->c->name, sizeof w->c->name, "the window on %.100s", parent->name);
    w->flavor = flavor;
    w->disp_unit = disp_unit;
    w->wsize = size;
    w->base = base;
    if (info != MPI_INFO_NULL) w->info = mpi_info_copy(info);
    size_t len = (size_t)size;
    if (flavor == MPI_WIN_FLAVOR_ALLOCATE) {
        w->alloc = cr_shared_alloc(job, len, &w->allocsh);
        if (!w->alloc) {
            w->allocsh = (cr_shared){.fd = -1};
            if (posix_memalign(&w->alloc, 64, len ? len : 64)) w->alloc = NULL;
            if (w->alloc) memset(w->alloc, 0, len);
        }
        if (!w->alloc) cr_fatal(job, call, "cannot allocate %zu bytes for the window", len);
        w->alloclen = len;
        w->base = w->alloc;
        win_setup(job, call, w, w->base, len, w->allocsh.fd >= 0 ? &w->allocsh : NULL);
        *(void **)baseptr = w->base;
    } else if (flavor == MPI_WIN_FLAVOR_SHARED) {
        /* One segment, member 0's, each member's part right after the one
         * before (the contiguous layout MPI promises by default). */
        cr_group *g = &w->c->g;
        uint64_t *sizes = malloc((size_t)g->size * sizeof *sizes);
        uint64_t mine = len;
        if (!sizes) cr_fatal(job, call, "out of memory");
        cr_coll_allgather(job, g, call, &mine, sizes, sizeof mine);
        uint64_t total = 0, off = 0;
        for (int m = 0; m < g->size; m++) {
            if (m == g->me) off = total;
            total += sizes[m];
        }
        free(sizes);
        cr_shared seg = {.fd = -1};
        if (g->me == 0 && !(w->alloc = cr_shared_alloc(job, total, &seg))) seg.fd = -1;
        cr_coll_bcast(job, g, call, &seg, sizeof seg, 0);
        if (g->me != 0 && seg.fd >= 0) {
            w->alloc = cr_shared_map(job, cr_group_rank(g, 0), &seg);
            seg.fd = -2; /* mapped, not owned */
        }
        int ok = w->alloc != NULL, all = 0;
        cr_redop o = CR_OP_PREDEF(cr_op_min_long, long);
        long okl = ok, alll = 0;
        cr_coll_allreduce(job, g, call, &okl, &alll, 1, &o);
        all = (int)alll;
        if (!all) {
            if (w->alloc && g->me == 0)
                cr_shared_free(w->alloc, &seg);
            else if (w->alloc)
                cr_shared_unmap(w->alloc, &seg);
            int pair_rc = mpi_fail(job, comm, call, MPI_ERR_RMA_SHARED,
                                   "the members are not all on one host, or this host does not "
                                   "let them share memory");
            wins.w[h_idx(*win)] = NULL;
            free(w);
            *win = MPI_WIN_NULL;
            cr_unlock(job);
            PMPI_Comm_free(&dup);
            return mpi_leave_unlocked(job, pair_rc);
        }
        w->allocsh = seg;
        w->alloclen = total;
        w->base = (char *)w->alloc + off;
        win_setup(job, call, w, w->base, len, NULL);
        /* every member's part is mapped here, at its offset in the segment */
        uint64_t at = 0;
        for (int m = 0; m < g->size; m++) {
            if (m != g->me) w->mem.map[m] = (char *)w->alloc + at;
            at += w->mem.pub[m].len;
        }
        *(void **)baseptr = w->base;
    } else {
        win_setup(job, call, w, flavor == MPI_WIN_FLAVOR_DYNAMIC ? NULL : base,
                  flavor == MPI_WIN_FLAVOR_DYNAMIC ? 0 : len, NULL);
    }
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Win_create);
int PMPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                    MPI_Win *win)
{
    return win_make("MPI_Win_create", MPI_WIN_FLAVOR_CREATE, base, size, disp_unit, info, comm,
                    NULL, win);
}

PMPI_WEAK(Win_allocate);
int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                      MPI_Win *win)
{
    return win_make("MPI_Win_allocate", MPI_WIN_FLAVOR_ALLOCATE, NULL, size, disp_unit, info, comm,
                    baseptr, win);
}

PMPI_WEAK(Win_allocate_shared);
int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                             void *baseptr, MPI_Win *win)
{
    return win_make("MPI_Win_allocate_shared", MPI_WIN_FLAVOR_SHARED, NULL, size, disp_unit, info,
                    comm, baseptr, win);
}

PMPI_WEAK(Win_create_dynamic);
int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    return win_make("MPI_Win_create_dynamic", MPI_WIN_FLAVOR_DYNAMIC, NULL, 0, 1, info, comm, NULL,
                    win);
}

PMPI_WEAK(Win_attach);
int PMPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    const char *call = "MPI_Win_attach";
    cr_job *job = mpi_enter(call);
    mpi_win *w;
    int rc = win_check(job, call, win, &w);
    if (rc) return mpi_leave(job, rc);
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return mpi_leave(job, win_fail(job, win, call, MPI_ERR_RMA_FLAVOR,
                                       "the window was not made by MPI_Win_create_dynamic"));
    if (size < 0 || (!base && size))
        return mpi_leave(job, win_fail(job, win, call, MPI_ERR_ARG, "base %p, size %ld: invalid",
                                       base, (long)size));
    uint64_t *n = &w->myctl[ctl_natt(w)];
    uint64_t k = __atomic_load_n(n, __ATOMIC_ACQUIRE);
    if (k == MAX_ATTACH)
        return mpi_leave(job, win_fail(job, win, call, MPI_ERR_RMA_ATTACH,
                                       "%d regions are attached already (the most courier "
                                       "takes): detach one first",
                                       MAX_ATTACH));
    cr_rma_expose(job, base, (size_t)size); /* first: peers may use it once it is listed
                                                (served already if it must be) */
    w->myctl[ctl_natt(w) + 1 + 2 * k] = (uintptr_t)base;
    w->myctl[ctl_natt(w) + 2 + 2 * k] = (uint64_t)size;
    __atomic_store_n(n, k + 1, __ATOMIC_RELEASE);
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Win_detach);
int PMPI_Win_detach(MPI_Win win, const void *base)
{
    const char *call = "MPI_Win_detach";
    cr_job *job = mpi_enter(call);
    mpi_win *w;
    int rc = win_check(job, call, win, &w);
    if (rc) return mpi_leave(job, rc);
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return mpi_leave(job, win_fail(job, win, call, MPI_ERR_RMA_FLAVOR,
                                       "the window was not made by MPI_Win_create_dynamic"));
    uint64_t *att = &w->myctl[ctl_natt(w)];
    uint64_t n = att[0];
    for (uint64_t k = 0; k < n; k++)
        if (att[1 + 2 * k] == (uintptr_t)base) {
            att[1 + 2 * k] = att[1 + 2 * (n - 1)];
            att[2 + 2 * k] = att[2 + 2 * (n - 1)];
            __atomic_store_n(att, n - 1, __ATOMIC_RELEASE);
            cr_rma_hide(job, base);
            return mpi_leave(job, MPI_SUCCESS);
        }
    return mpi_leave(job, win_fail(job, win, call, MPI_ERR_RMA_ATTACH,
                                   "%p is not the base of a region attached to this window", base));
}

PMPI_WEAK(Win_free);
int PMPI_Win_free(MPI_Win *win)
{
    const char *call = "MPI_Win_free";
    cr_job *job = mpi_enter(call);
    mpi_win *w;
    int rc = win_check(job, call, win ? *win : MPI_WIN_NULL, &w);
    if (rc) return mpi_leave(job, rc);
    if (w->nlocks || w->lock_all || w->acc_on || w->exp_on)
        return mpi_leave(job, win_fail(job, *win, call, MPI_ERR_RMA_SYNC,
                                       "an epoch is still open (%s): close it first",
                                       w->exp_on   ? "post without wait"
                                       : w->acc_on ? "start without complete"
                                                   : "a lock without unlock"));
    cr_rma_flush(job, call, -1);
    cr_coll_barrier(job, &w->c->g, call); /* nobody reaches this memory any more */
    /* Past the barrier the others free theirs: a delete callback that fails is
     * reported, but the window goes all the same. */
    int kv = 0, cb = mpi_attrs_delete(job, MPI_OBJ_WIN, *win, &kv);
    w = win_get(*win);
    mpi_attrs_forget(&w->attrs, MPI_OBJ_WIN);
    if (w->flavor == MPI_WIN_FLAVOR_SHARED) /* the parts are the segment's, unmapped below */
        for (int m = 0; m < w->mem.n; m++)
            if (m != w->mem.me) w->mem.map[m] = NULL;
    cr_coll_unpublish(job, &w->mem);
    cr_coll_unpublish(job, &w->ctl);
    if (w->ctlsh.fd >= 0)
        cr_shared_free(w->myctl, &w->ctlsh);
    else
        free(w->myctl);
    if (w->flavor == MPI_WIN_FLAVOR_ALLOCATE) {
        if (w->allocsh.fd >= 0)
            cr_shared_free(w->alloc, &w->allocsh);
        else
            free(w->alloc);
    } else if (w->flavor == MPI_WIN_FLAVOR_SHARED) {
        if (w->allocsh.fd >= 0)
            cr_shared_free(w->alloc, &w->allocsh);
        else
            cr_shared_unmap(w->alloc, &(cr_shared){.len = w->alloclen, .fd = -1});
    }
    if (w->info != MPI_INFO_NULL) mpi_info_drop(w->info);
    MPI_Comm dup = w->comm;
    for (int k = 0; k < 3; k++) free(w->scratch[k].p);
    free(w->disps);
    free(w->lockst);
    free(w->access);
    free(w->expose);
    if (cb != MPI_SUCCESS)
        cb = win_fail(job, *win, call, mpi_attr_cb_class(cb),
                      "the delete callback of keyval %#x returned %d (the window is freed: its "
                      "other members have freed theirs)",
                      (unsigned)kv, cb);
    wins.w[h_idx(*win)] = NULL;
    free(w);
    *win = MPI_WIN_NULL;
    cr_unlock(job);
    rc = PMPI_Comm_free(&dup);
    return mpi_leave_unlocked(job, cb != MPI_SUCCESS ? cb : rc);
}

PMPI_WEAK(Win_shared_query);
int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr)
{
    const char *call = "MPI_Win_shared_query";
    cr_job *job = mpi_enter(call);
    mpi_win *w;
    int rc = win_check(job, call, win, &w);
    if (rc) return mpi_leave(job, rc);
    if (!size || !disp_unit || !baseptr)
        return mpi_leave(job, win_fail(job, win, call, MPI_ERR_ARG, "an output argument is NULL"));
    if (rank != MPI_PROC_NULL && (rank < 0 || rank >= w->size))
        return mpi_leave(job, win_fail(job, win, call, MPI_ERR_RANK,
                                       "rank %d is not a member (0..%d)", rank, w->size - 1));
    int m = rank;
    if (rank == MPI_PROC_NULL) { /* the first member with memory */
        m = 0;
        while (m < w->size - 1 && !w->mem.pub[m].len) m++;
    }
    /* What this rank can load and store directly (MPI-4 lets every flavor
     * be asked): a shared window's parts, an allocated window's memory on
     * this host; otherwise nothing (size 0, NULL). */
    bool direct =
        w->mem.map[m] && w->mem.pub[m].len && (m != w->me || w->flavor != MPI_WIN_FLAVOR_DYNAMIC);
    *size = direct ? (MPI_Aint)w->mem.pub[m].len : 0;
    *disp_unit = w->disps[m];
    *(void **)baseptr = direct ? w->mem.map[m] : NULL;
    return mpi_leave(job, MPI_SUCCESS);
}

/* ---- transfers ---------------------------------------------------------------- */

/* A transfer's temporaries, freed once all its engine transfers completed. */
typedef struct xfer {
    int pending;
    char *tmp;  /* packed data */
    void *obuf; /* get: unpack tmp into count instances of ot here */
    size_t ocount;
    int otype; /* its table index (a reference held), -1: none */
    bool has_req, req_gone;
} xfer;

static void xfer_free(xfer *x)
{
    free(x->tmp);
    free(x);
}

static void xfer_done(cr_job *job, void *arg)
{
    (void)job;
    xfer *x = arg;
    if (--x->pending) return;
    if (x->obuf) mpi_unpack_data(mpi_type_at(x->otype), x->tmp, SIZE_MAX, x->obuf, x->ocount);
    if (x->otype >= 0) mpi_type_unref(x->otype);
    x->otype = -1;
    x->obuf = NULL;
    if (!x->has_req || x->req_gone) xfer_free(x);
}

static bool xreq_test(cr_job *job, void *obj, MPI_Status *st)
{
    xfer *x = obj;
    cr_rma_reap(job);
    if (x->pending) return false;
    st->MPI_SOURCE = MPI_PROC_NULL;
    st->MPI_TAG = MPI_ANY_TAG;
    st->MPI_ERROR = MPI_SUCCESS;
    st->cr_bytes = 0;
    st->cr_cancelled = 0;
    return true;
}

static void xreq_free(cr_job *job, void *obj)
{
    (void)job;
    xfer *x = obj;
    x->req_gone = true;
    if (!x->pending) xfer_free(x);
}

static const mpi_ext_ops xreq_ops = {"MPI_Rput", xreq_test, xreq_free, NULL};
static const mpi_ext_ops xreq_get_ops = {"MPI_Rget", xreq_test, xreq_free, NULL};
static const mpi_ext_ops xreq_acc_ops = {"MPI_Raccumulate", xreq_test, xreq_free, NULL};

/* The runs of a target datatype. */
typedef struct runs {
    cr_run *r; /* 'few' until there are more */
    int n, cap;
    bool oom;
    cr_run few[4];
} runs;

static void runs_free(runs *rs)
{
    if (rs->r != rs->few) free(rs->r);
    rs->r = NULL;
}

static void run_add(void *ctx, ptrdiff_t off, size_t len)
{
    runs *rs = ctx;
    if (rs->n == rs->cap) {
        int cap = rs->cap ? 2 * rs->cap : 8;
        cr_run *r = malloc((size_t)cap * sizeof *r);
        if (!r) {
            rs->oom = true;
            return;
        }
        memcpy(r, rs->r, (size_t)rs->n * sizeof *r);
        if (rs->r != rs->few) free(rs->r);
        rs->r = r;
        rs->cap = cap;
    }
    rs->r[rs->n++] = (cr_run){off, len};
}

/* What one call moves: checked arguments. */
typedef struct rma_args {
    mpi_win *w;
    MPI_Win h;
    int target;     /* member; MPI_PROC_NULL: nothing to do */
    uint64_t taddr; /* the target's address of displacement 0 of the target datatype, there */
    const mpi_type *ot, *tt, *rt;
    size_t ocount, tcount, rcount;
    runs rs; /* the target datatype's runs, offsets from taddr */
} rma_args;

/* Is this member in an epoch that lets it reach member t? */
static bool has_access(const mpi_win *w, int t)
{
    if (w->fence_on || w->lock_all || w->lockst[t]) return true;
    if (w->acc_on)
        for (int i = 0; i < w->nacc; i++)
            if (w->access[i] == t) return true;
    return false;
}

/* Does [addr, addr+len) lie in regions attached at member t (dynamic; it may
 * run from one into the next)? */
static bool attached(cr_job *job, const char *call, mpi_win *w, int t, uint64_t addr, size_t len)
{
    uint64_t n = ctl_amo(job, call, w, t, ctl_natt(w), CR_AMO_READ, 0, 0);
    if (n > MAX_ATTACH) return false;
    uint64_t *buf = malloc(n * 16 + 16);
    if (!buf) cr_fatal(job, call, "out of memory");
    cr_rtarget at = ctl_at(w, t, ctl_natt(w) + 1);
    uint64_t tk = cr_rma_get(job, call, &at, buf, n * 16, NULL);
    if (tk) cr_rma_flush(job, call, cr_group_rank(&w->c->g, t));
    bool found = true;
    while (len && found) {
        found = false;
        for (uint64_t k = 0; k < n && !found; k++)
            if (addr >= buf[2 * k] && addr - buf[2 * k] < buf[2 * k + 1]) {
                uint64_t room = buf[2 * k + 1] - (addr - buf[2 * k]);
                uint64_t take = room < len ? room : len;
                addr += take;
                len -= take;
                found = true;
            }
    }
    free(buf);
    return len == 0;
}

static int args_check(cr_job *job, const char *call, MPI_Win win, int ocount, MPI_Datatype otype,
                      int target, MPI_Aint disp, int tcount, MPI_Datatype ttype, rma_args *a)
{
    memset(a, 0, sizeof *a);
    a->rs.r = a->rs.few;
    a->rs.cap = 4;
    int rc = win_check(job, call, win, &a->w);
    if (rc) return rc;
    mpi_win *w = a->w;
    a->h = win;
    MPI_Comm comm = w->comm;
    mpi_type *ot = NULL, *tt = NULL;
    if (ocount < 0 || tcount < 0)
        return win_fail(job, win, call, MPI_ERR_COUNT, "count %d is negative",
                        ocount < 0 ? ocount : tcount);
    if ((rc = mpi_type_check(job, comm, call, otype, &ot))) return rc;
    if ((rc = mpi_type_check(job, comm, call, ttype, &tt))) return rc;
    a->ot = ot;
    a->tt = tt;
    a->ocount = (size_t)ocount;
    a->tcount = (size_t)tcount;
    if (target == MPI_PROC_NULL) {
        a->target = MPI_PROC_NULL;
        return MPI_SUCCESS;
    }
    if (target < 0 || target >= w->size)
        return win_fail(job, win, call, MPI_ERR_RANK, "target rank %d is not a member (0..%d)",
                        target, w->size - 1);
    a->target = target;
    if (!has_access(w, target))
        return win_fail(job, win, call, MPI_ERR_RMA_SYNC,
                        "no access epoch to rank %d is open: call MPI_Win_fence, MPI_Win_lock, "
                        "MPI_Win_lock_all or MPI_Win_start first",
                        target);
    if (ot->size * a->ocount != tt->size * a->tcount)
        return win_fail(job, win, call, MPI_ERR_TYPE,
                        "the origin has %zu bytes of data, the target %zu: the type signatures "
                        "must match",
                        ot->size * a->ocount, tt->size * a->tcount);
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        a->taddr = (uint64_t)disp;
    else if (disp < 0)
        return win_fail(job, win, call, MPI_ERR_DISP, "target displacement %ld is negative",
                        (long)disp);
    else
        a->taddr = (uint64_t)disp * (uint64_t)w->disps[target];
    mpi_type_runs(tt, a->tcount, run_add, &a->rs);
    if (a->rs.oom) cr_fatal(job, call, "out of memory for the target datatype's runs");
    /* every run inside the target's window (or attached memory) */
    uint64_t have = w->mem.pub[target].len;
    for (int i = 0; i < a->rs.n; i++) {
        int64_t o = (int64_t)a->taddr + a->rs.r[i].off;
        size_t len = a->rs.r[i].len;
        bool in = w->flavor == MPI_WIN_FLAVOR_DYNAMIC
                      ? o >= 0 && attached(job, call, w, target, (uint64_t)o, len)
                      : o >= 0 && (uint64_t)o <= have && len <= have - (uint64_t)o;
        if (!in) {
            runs_free(&a->rs);
            return win_fail(job, win, call, MPI_ERR_RMA_RANGE,
                            w->flavor == MPI_WIN_FLAVOR_DYNAMIC
                                ? "%zu bytes at address %#llx of rank %d are not in memory "
                                  "attached to the window there"
                                : "%zu bytes at offset %lld are outside the window of rank %d "
                                  "(%llu bytes)",
                            len, (long long)o, target, (unsigned long long)have);
        }
    }
    return MPI_SUCCESS;
}

/* The target's displacement 0 (the runs' offsets are from there). */
static cr_rtarget args_target(const rma_args *a)
{
    if (a->w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        return (cr_rtarget){cr_group_rank(&a->w->c->g, a->target), a->taddr, NULL};
    return cr_rtable_at(&a->w->c->g, &a->w->mem, a->target, a->taddr); /* from the window's base */
}

/* Put or get the packed bytes data (the target datatype's runs, in order). */
static void move_runs(cr_job *job, const char *call, const rma_args *a, char *data, bool put,
                      xfer *x)
{
    cr_rma_opt opt = {.done = x ? xfer_done : NULL, .arg = x};
    cr_rtarget t = args_target(a);
    if (x) x->pending++;
    if (put)
        cr_rma_putv(job, call, &t, a->rs.r, a->rs.n, data, x ? &opt : NULL);
    else
        cr_rma_getv(job, call, &t, a->rs.r, a->rs.n, data, x ? &opt : NULL);
}

/* Put, Get, Rput, Rget. The short paths' common check: count instances of the
 * same predefined contiguous type on both sides, to member target of a window
 * that is not dynamic, in an epoch, inside the window, in memory this rank
 * maps. Their place here (*bytes long), or NULL: the full path then checks and
 * reports. */
static inline __attribute__((always_inline)) char *
mapped_span(MPI_Win win, MPI_Datatype type, int count, MPI_Datatype ttype, int tcount, int target,
            MPI_Aint disp, mpi_win **wp, const mpi_type **tp, size_t *bytes)
{
    mpi_win *w = win_get(win);
    if (!w || type != ttype || count != tcount || count < 0 || target < 0 || target >= w->size ||
        disp < 0 || w->flavor == MPI_WIN_FLAVOR_DYNAMIC || !w->mem.map[target] ||
        !has_access(w, target))
        return NULL;
    const mpi_type *t = mpi_type_get(type);
    if (!t || !t->predef || !t->contig) return NULL;
    uint64_t off = (uint64_t)disp * (uint64_t)w->disps[target], have = w->mem.pub[target].len;
    *bytes = t->size * (size_t)count;
    if (off > have || *bytes > have - off) return NULL;
    *wp = w;
    *tp = t;
    return w->mem.map[target] + off;
}

static inline __attribute__((always_inline)) bool transfer_fast(bool put, void *obuf, int count,
                                                                MPI_Datatype otype, int target,
                                                                MPI_Aint disp, int tcount,
                                                                MPI_Datatype ttype, MPI_Win win)
{
    mpi_win *w;
    const mpi_type *t;
    size_t bytes;
    char *p = mapped_span(win, otype, count, ttype, tcount, target, disp, &w, &t, &bytes);
    if (!p) return false;
    if (put)
        memmove(p, obuf, bytes);
    else
        memmove(obuf, p, bytes);
    return true;
}

/* A put or a get that transfer_fast did not make (the call has entered). */
static __attribute__((noinline)) int transfer_rest(cr_job *job, const char *call, bool put,
                                                   void *obuf, int ocount, MPI_Datatype otype,
                                                   int target, MPI_Aint disp, int tcount,
                                                   MPI_Datatype ttype, MPI_Win win,
                                                   MPI_Request *req)
{
    rma_args a;
    bool want_req = call[4] == 'R'; /* MPI_Rput, MPI_Rget */
    if (want_req && !req)
        return mpi_leave(job, win_fail(job, win, call, MPI_ERR_ARG, "request is NULL"));
    int rc = args_check(job, call, win, ocount, otype, target, disp, tcount, ttype, &a);
    if (rc) return mpi_leave(job, rc);
    if (req) *req = MPI_REQUEST_NULL;
    size_t bytes = a.ot->size * a.ocount;
    bool packs = a.target != MPI_PROC_NULL && bytes && !a.ot->contig;
    xfer *x = NULL; /* only for a temporary or a request */
    if (packs || req) {
        x = calloc(1, sizeof *x);
        if (!x) cr_fatal(job, call, "out of memory");
        x->otype = -1;
        x->pending = 1; /* this call's own hold, dropped below */
    }
    char *data = obuf;
    if (packs) {
        x->tmp = malloc(bytes);
        if (!x->tmp) cr_fatal(job, call, "out of memory for %zu bytes of packed data", bytes);
        if (put) {
            mpi_pack_data(a.ot, obuf, a.ocount, x->tmp);
        } else {
            x->obuf = obuf;
            x->ocount = a.ocount;
            x->otype = a.ot->idx;
            ((mpi_type *)a.ot)->refs++;
        }
        data = x->tmp;
    }
    if (a.target != MPI_PROC_NULL) move_runs(job, call, &a, data, put, x);
    runs_free(&a.rs);
    if (req) {
        x->has_req = true;
        rc = mpi_request_ext(job, a.w->comm, put ? &xreq_ops : &xreq_get_ops, x, req);
    }
    if (x) xfer_done(job, x); /* the call's hold */
    return mpi_leave(job, rc);
}

/* Put and Get: a contiguous transfer into mapped memory is a memmove, in a
 * function small enough that the call costs little more, and without the
 * engine lock where mpi_enter_owned allows (an 8-byte put: 8 ns here, 14 with
 * the lock). */
static inline __attribute__((always_inline)) int
transfer(const char *call, bool put, void *obuf, int ocount, MPI_Datatype otype, int target,
         MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Win win, MPI_Request *req)
{
    bool owned = !req && mpi_enter_owned();
    if (owned && transfer_fast(put, obuf, ocount, otype, target, disp, tcount, ttype, win))
        return MPI_SUCCESS;
    cr_job *job = mpi_enter(call);
    if (!req && !owned && transfer_fast(put, obuf, ocount, otype, target, disp, tcount, ttype, win))
        return mpi_leave(job, MPI_SUCCESS);
    return transfer_rest(job, call, put, obuf, ocount, otype, target, disp, tcount, ttype, win,
                         req);
}

PMPI_WEAK(Put);
int PMPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
             MPI_Win win)
{
    return transfer("MPI_Put", true, (void *)origin_addr, origin_count, origin_datatype,
                    target_rank, target_disp, target_count, target_datatype, win, NULL);
}

PMPI_WEAK(Get);
int PMPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    return transfer("MPI_Get", false, origin_addr, origin_count, origin_datatype, target_rank,
                    target_disp, target_count, target_datatype, win, NULL);
}

PMPI_WEAK(Rput);
int PMPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
              int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
              MPI_Win win, MPI_Request *request)
{
    return transfer("MPI_Rput", true, (void *)origin_addr, origin_count, origin_datatype,
                    target_rank, target_disp, target_count, target_datatype, win, request);
}

PMPI_WEAK(Rget);
int PMPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
              MPI_Request *request)
{
    return transfer("MPI_Rget", false, origin_addr, origin_count, origin_datatype, target_rank,
                    target_disp, target_count, target_datatype, win, request);
}

/* ---- accumulate ---------------------------------------------------------------- */

/* Word `word` of member m's control block where this rank maps it, or NULL. */
static uint64_t *ctl_word(const mpi_win *w, int m, size_t word)
{
    return w->ctl.map[m] ? (uint64_t *)(void *)(w->ctl.map[m] + word * 8) : NULL;
}

/* The accumulate lock of member t: one compare-and-swap where the word is
 * mapped (and free), the general path's tries and backoff otherwise. */
static void acc_lock(cr_job *job, const char *call, mpi_win *w, int t)
{
    uint64_t *word = ctl_word(w, t, CTL_ACC), free_word = 0;
    /* accumulates this rank sent to t's service come first (MPI orders a
     * rank's accumulates to a location): they may wait there for this lock */
    if (!word) cr_rma_flush(job, call, cr_group_rank(&w->c->g, t));
    if (word ? __atomic_compare_exchange_n(word, &free_word, 1, false, __ATOMIC_ACQUIRE,
                                           __ATOMIC_RELAXED)
             : ctl_amo(job, call, w, t, CTL_ACC, CR_AMO_CAS | CR_AMO_QUIET, 1, 0) == 0)
        return;
    lock_wait lw;
    lock_wait_begin(&lw, call, cr_group_rank(&w->c->g, t));
    while (ctl_amo(job, call, w, t, CTL_ACC, CR_AMO_CAS | CR_AMO_QUIET, 1, 0) != 0)
        backoff(job, &lw);
    lock_wait_end(job, &lw);
}

static void acc_unlock(cr_job *job, const char *call, mpi_win *w, int t)
{
    uint64_t *word = ctl_word(w, t, CTL_ACC);
    if (word) /* the holder alone writes it now: a store that orders what it did before */
        __atomic_store_n(word, 0, __ATOMIC_RELEASE);
    else
        ctl_amo(job, call, w, t, CTL_ACC, CR_AMO_SWAP | CR_AMO_QUIET, 0, 0);
}

/* Read the target datatype's runs into data (packed), under the accumulate
 * lock: when there are many runs close together, one read of the span they
 * cover (a system call per run costs more than the gaps), then the runs taken
 * out of it here. */
static void read_runs(cr_job *job, const char *call, const rma_args *a, char *data, size_t bytes)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (int i = 0; i < a->rs.n; i++) {
        if (a->rs.r[i].off < lo) lo = a->rs.r[i].off;
        if (a->rs.r[i].off + (int64_t)a->rs.r[i].len > hi)
            hi = a->rs.r[i].off + (int64_t)a->rs.r[i].len;
    }
    if (a->rs.n <= 8 || (uint64_t)(hi - lo) > 2 * bytes + 65536) {
        move_runs(job, call, a, data, false, NULL);
        return;
    }
    char *span = scratch_get(job, call, a->w, SCR_SPAN, (size_t)(hi - lo));
    cr_rtarget t = args_target(a);
    cr_run whole = {lo, (size_t)(hi - lo)};
    cr_rma_getv(job, call, &t, &whole, 1, span, NULL);
    cr_rma_flush(job, call, t.peer);
    size_t at = 0;
    for (int i = 0; i < a->rs.n; i++) {
        memcpy(data + at, span + (a->rs.r[i].off - lo), a->rs.r[i].len);
        at += a->rs.r[i].len;
    }
    scratch_put(a->w, SCR_SPAN, span);
}

/* tdata = tdata op odata over bytes of packed elements (op not MPI_NO_OP); o
 * and n from mpi_redop. Pair types (MPI_DOUBLE_INT, ...) have gaps: the
 * operation works on them in their C layout (pair: b the pair type). */
static void combine(cr_job *job, const char *call, MPI_Op op, const cr_redop *o, size_t n,
                    const mpi_type *pair, char *tdata, const char *odata, size_t bytes)
{
    if (op == MPI_REPLACE) {
        memcpy(tdata, odata, bytes);
    } else if (pair) {
        size_t ne = bytes / pair->size, ext = (size_t)type_extent(pair);
        char *tc = malloc(ne * ext), *oc = malloc(ne * ext);
        if (!tc || !oc) cr_fatal(job, call, "out of memory for %zu pairs", ne);
        mpi_unpack_data(pair, tdata, bytes, tc, ne);
        mpi_unpack_data(pair, odata, bytes, oc, ne);
        o->fn(tc, oc, tc, n, o->arg);
        mpi_pack_data(pair, tc, ne, tdata);
        free(tc);
        free(oc);
    } else {
        o->fn(tdata, odata, tdata, n, o->arg);
    }
}

/* ---- accumulates done by the target's service ----------------------------------- */

/* Into a member whose control block this rank does not map (another host, or
 * no mapping at all), an accumulate is one call to the target's service
 * (cr_rma_call), which does it all there under the window's accumulate lock:
 * one round trip, not four (the lock, a read, a write, the unlock, each through
 * that service). The call: this header, the pieces
 * (absolute addresses there), then the origin's packed data (not for
 * MPI_NO_OP); the answer: the old data when fetched. */
typedef struct acc_call {
    uint64_t ctl;  /* the target's control block: its window there */
    int32_t op;    /* MPI_Op */
    int32_t base;  /* the basic datatype the operation works on */
    uint32_t nrun; /* pieces */
    uint32_t fetch;
    uint64_t bytes; /* of target data */
} acc_call;
typedef struct acc_piece {
    uint64_t addr, len;
} acc_piece;

/* The window whose control block is at ctl here (maybe still being made:
 * an origin may use it once the collectives it takes part in are over, while
 * this member is still in them). */
static mpi_win *win_by_ctl(uint64_t ctl)
{
    for (int i = 0; i < wins.n; i++)
        if (wins.w[i] && wins.w[i]->myctl && (uintptr_t)wins.w[i]->myctl == ctl) return wins.w[i];
    return NULL;
}

/* Copy the pieces' bytes into buf, packed (or, into: buf into the pieces). */
static void pieces_move(const acc_piece *pc, uint32_t n, char *buf, bool into)
{
    for (uint32_t i = 0; i < n; buf += pc[i++].len)
        if (into)
            memcpy((void *)(uintptr_t)pc[i].addr, buf, pc[i].len);
        else
            memcpy(buf, (const void *)(uintptr_t)pc[i].addr, pc[i].len);
}

/* The target's side (the service's handler): 1 while another holds the lock. */
static int acc_serve(cr_job *job, int origin, const void *in, size_t len, void **out,
                     size_t *outlen)
{
    const char *call = "MPI_Accumulate (at the target)";
    acc_call q;
    if (len < sizeof q) cr_fatal(job, call, "a call from rank %d is %zu bytes", origin, len);
    memcpy(&q, in, sizeof q);
    const acc_piece *pc = (const acc_piece *)((const char *)in + sizeof q);
    const char *odata = (const char *)(pc + q.nrun);
    size_t want = sizeof q + q.nrun * sizeof *pc + (q.op == MPI_NO_OP ? 0 : q.bytes);
    mpi_win *w = win_by_ctl(q.ctl);
    const mpi_type *b =
        q.base > 0 && q.base < mpi_g.ntypes && mpi_type_at(q.base) && mpi_type_at(q.base)->predef
            ? mpi_type_at(q.base)
            : NULL;
    if (len != want || !w || !b || !b->size || q.bytes % b->size)
        cr_fatal(job, call,
                 "rank %d sent an accumulate this rank cannot take (%zu bytes, window %s)", origin,
                 len, w ? "found" : "not found: freed before the accumulate completed?");
    if (!w->used) return 1; /* still being made here: later */
    uint64_t free_word = 0;
    if (!__atomic_compare_exchange_n(&w->myctl[CTL_ACC], &free_word, 1, false, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED))
        return 1;
    uint64_t total = 0;
    for (uint32_t i = 0; i < q.nrun; i++) {
        total += pc[i].len;
        if (!cr_rma_exposed(job, pc[i].addr, pc[i].len) || total > q.bytes ||
            (b->contig && pc[i].len % b->size))
            cr_fatal(job, call,
                     "rank %d accumulates into %llu bytes at %#llx, outside this rank's window",
                     origin, (unsigned long long)pc[i].len, (unsigned long long)pc[i].addr);
    }
    if (total != q.bytes || !q.bytes)
        cr_fatal(job, call, "rank %d sent %llu bytes of pieces for %llu", origin,
                 (unsigned long long)total, (unsigned long long)q.bytes);
    if (q.fetch) { /* the old data, packed */
        if (!(*out = malloc(q.bytes)))
            cr_fatal(job, call, "out of memory for %llu bytes", (unsigned long long)q.bytes);
        pieces_move(pc, q.nrun, *out, false);
        *outlen = q.bytes;
    }
    if (q.op != MPI_NO_OP) {
        cr_redop o = {0};
        mpi_opctx octx;
        bool packed;
        size_t n = 0;
        bool pair = !b->contig && q.op != MPI_REPLACE;
        if (q.op != MPI_REPLACE &&
            mpi_redop(job, w->comm, call, q.op, b, q.bytes / b->size, &o, &octx, &packed, &n))
            cr_fatal(job, call, "rank %d sent an operation this rank cannot apply", origin);
        if (pair) { /* its gaps need its C layout: the pieces packed together first */
            char *tdata = malloc(q.bytes);
            if (!tdata)
                cr_fatal(job, call, "out of memory for %llu bytes", (unsigned long long)q.bytes);
            pieces_move(pc, q.nrun, tdata, false);
            combine(job, call, q.op, &o, n, b, tdata, odata, q.bytes);
            pieces_move(pc, q.nrun, tdata, true);
            free(tdata);
        } else { /* piece by piece in place; n counts the elements of all (> 0, checked) */
            size_t per = n / (q.bytes / b->size);
            for (uint32_t i = 0; i < q.nrun; odata += pc[i++].len)
                combine(job, call, q.op, &o, per * (pc[i].len / b->size), NULL,
                        (char *)(uintptr_t)pc[i].addr, odata, pc[i].len);
        }
    }
    __atomic_store_n(&w->myctl[CTL_ACC], 0, __ATOMIC_RELEASE);
    return 0;
}

/* The origin's side: an accumulate waits for its answer only when it fetches. */
static void acc_remote(cr_job *job, const char *call, rma_args *a, const char *odata, char *rdata,
                       MPI_Op op, size_t bytes)
{
    cr_rtarget t = args_target(a), c = ctl_at(a->w, a->target, 0);
    size_t len =
        sizeof(acc_call) + (size_t)a->rs.n * sizeof(acc_piece) + (op == MPI_NO_OP ? 0 : bytes);
    char *buf = malloc(len); /* the engine's from here: sent from, then freed */
    if (!buf) cr_fatal(job, call, "out of memory for an accumulate of %zu bytes", len);
    acc_call q = {.ctl = c.addr,
                  .op = op,
                  .base = a->tt->base,
                  .nrun = (uint32_t)a->rs.n,
                  .fetch = rdata != NULL,
                  .bytes = bytes};
    memcpy(buf, &q, sizeof q);
    acc_piece *pc = (acc_piece *)(buf + sizeof q);
    for (int i = 0; i < a->rs.n; i++)
        pc[i] = (acc_piece){t.addr + (uint64_t)a->rs.r[i].off, a->rs.r[i].len};
    if (op != MPI_NO_OP) memcpy(pc + a->rs.n, odata, bytes);
    cr_rma_call(job, call, t.peer, buf, len, rdata, rdata ? bytes : 0);
    if (rdata) cr_rma_flush(job, call, t.peer);
}

/* target = target op origin, with the old target data into result (when
 * given): the whole of it under the target's accumulate lock. odata is the
 * packed origin data (NULL for MPI_NO_OP), rdata where the packed old target
 * data goes (NULL: not wanted). */
static int accumulate(cr_job *job, const char *call, rma_args *a, const char *odata, char *rdata,
                      MPI_Op op)
{
    mpi_win *w = a->w;
    size_t bytes = a->tt->size * a->tcount;
    cr_redop o = {0};
    mpi_opctx octx;
    bool packed;
    size_t n = 0;
    if (a->target == MPI_PROC_NULL || !bytes) return MPI_SUCCESS; /* nothing moves */
    /* Pair types (MPI_DOUBLE_INT, ...) have gaps: the operation works on them
     * in their C layout, so the packed data is laid out so around it. */
    const mpi_type *b = a->tt->base >= 0 ? mpi_type_at(a->tt->base) : NULL;
    bool pair = b && !b->contig && op != MPI_REPLACE && op != MPI_NO_OP;
    if (op != MPI_REPLACE && op != MPI_NO_OP) {
        int rc = pair
                     ? mpi_redop(job, w->comm, call, op, b, bytes / b->size, &o, &octx, &packed, &n)
                     : mpi_redop(job, w->comm, call, op, a->tt, a->tcount, &o, &octx, &packed, &n);
        if (rc) return rc;
        if (h_idx(op) > h_idx(MPI_NO_OP)) /* beyond the predefined ones */
            return win_fail(job, a->h, call, MPI_ERR_OP,
                            "user-defined operations are not allowed in one-sided accumulates");
    }
    int jr = cr_group_rank(&w->c->g, a->target);
    cr_rtarget t = args_target(a);
    if ((t.map || jr == job->rank) && a->rs.n == 1 && !pair) {
        /* memory this rank maps, one run: combine in place (one pass) */
        char *p = (t.map ? t.map : (char *)(uintptr_t)t.addr) + a->rs.r[0].off;
        acc_lock(job, call, w, a->target);
        if (rdata) memcpy(rdata, p, bytes);
        if (op == MPI_REPLACE)
            memcpy(p, odata, bytes);
        else if (op != MPI_NO_OP)
            o.fn(p, odata, p, n, o.arg);
        acc_unlock(job, call, w, a->target);
        return MPI_SUCCESS;
    }
    /* where the accumulate lock needs the target's service anyway (its
     * control block is not mapped here; CR_PUB_ATOMICS made it serve) */
    if (!ctl_word(w, a->target, CTL_ACC) && jr != job->rank && b && a->rs.n <= ACC_CALL_PIECES &&
        bytes <= ACC_CALL_BYTES) {
        acc_remote(job, call, a, odata, rdata, op, bytes);
        return MPI_SUCCESS;
    }
    char *tdata = scratch_get(job, call, w, SCR_TARGET, bytes);
    acc_lock(job, call, w, a->target);
    read_runs(job, call, a, tdata, bytes);
    cr_rma_flush(job, call, jr);
    if (rdata) memcpy(rdata, tdata, bytes);
    if (op != MPI_NO_OP) {
        combine(job, call, op, &o, n, pair ? b : NULL, tdata, odata, bytes);
        move_runs(job, call, a, tdata, true, NULL);
        cr_rma_flush(job, call, jr);
    }
    acc_unlock(job, call, w, a->target);
    scratch_put(w, SCR_TARGET, tdata);
    return MPI_SUCCESS;
}

/* Packed copy of count instances of t at buf (or buf itself when contiguous). */
static const char *packed_in(cr_job *job, const char *call, mpi_win *w, const mpi_type *t,
                             const void *buf, size_t count, char **tmp)
{
    *tmp = NULL;
    if (t->contig || !count) return buf;
    *tmp = scratch_get(job, call, w, SCR_ORIGIN, t->size * count);
    mpi_pack_data(t, buf, count, *tmp);
    return *tmp;
}

/* The common case of an accumulate (MPI_Fetch_and_op above all): one
 * predefined type of one basic type everywhere, into memory this rank maps,
 * inside the window, in an epoch: combined in place under the target's
 * accumulate lock (cmp: compare-and-swap, op MPI_REPLACE). True when done;
 * false, with nothing done, when it is not that case (the full path then
 * checks and reports) or, job NULL (mpi_enter_owned's path, without the
 * engine lock), when the accumulate lock is not free at once or not mapped. */
static inline __attribute__((always_inline)) bool
acc_fast(cr_job *job, const char *call, const void *obuf, int count, MPI_Datatype type, void *rbuf,
         int rcount, MPI_Datatype rtype, int target, MPI_Aint disp, int tcount, MPI_Datatype ttype,
         MPI_Op op, const void *cmp, MPI_Win win)
{
    if (count <= 0 || (rbuf && (rtype != type || rcount != count)) || !h_is(op, K_OP) ||
        h_idx(op) < 1 || h_idx(op) > h_idx(MPI_NO_OP))
        return false;
    mpi_win *w;
    const mpi_type *t;
    size_t bytes;
    char *p = mapped_span(win, type, count, ttype, tcount, target, disp, &w, &t, &bytes);
    if (!p || t->base < 0 || !mpi_type_at(t->base)->contig || (cmp && bytes > 16)) return false;
    cr_op_fn fn = NULL;
    if (op != MPI_REPLACE && op != MPI_NO_OP && !(fn = mpi_op_fn(op, t))) return false;
    if (job) {
        acc_lock(job, call, w, target);
    } else {
        uint64_t *word = ctl_word(w, target, CTL_ACC), free_word = 0;
        if (!word || !__atomic_compare_exchange_n(word, &free_word, 1, false, __ATOMIC_ACQUIRE,
                                                  __ATOMIC_RELAXED))
            return false;
    }
    if (cmp && bytes == 8) { /* the usual word, with no call to libc */
        uint64_t old, want;
        memcpy(&old, p, 8);
        memcpy(&want, cmp, 8);
        if (old == want) memcpy(p, obuf, 8);
        memcpy(rbuf, &old, 8);
    } else if (cmp) {
        char old[16];
        memcpy(old, p, bytes);
        if (!memcmp(old, cmp, bytes)) memcpy(p, obuf, bytes);
        memcpy(rbuf, old, bytes);
    } else {
        if (rbuf && bytes == 8) /* (a copy of a constant size is a move, not a call) */
            memcpy(rbuf, p, 8);
        else if (rbuf)
            memcpy(rbuf, p, bytes);
        if (op == MPI_REPLACE)
            memcpy(p, obuf, bytes);
        else if (fn)
            fn(p, obuf, p, (size_t)count * (t->size / mpi_type_at(t->base)->size), NULL);
    }
    acc_unlock(job, call, w, target);
    return true;
}

/* An accumulate that acc_fast did not make (the call has entered). */
static __attribute__((noinline)) int
get_acc_rest(cr_job *job, const char *call, const void *obuf, int ocount, MPI_Datatype otype,
             void *rbuf, int rcount, MPI_Datatype rtype, int target, MPI_Aint disp, int tcount,
             MPI_Datatype ttype, MPI_Op op, MPI_Win win, MPI_Request *req, bool fetch)
{
    rma_args a;
    /* MPI_NO_OP ignores the origin: check the result buffer's signature instead */
    bool noop = op == MPI_NO_OP;
    int rc = args_check(job, call, win, noop ? rcount : ocount, noop ? rtype : otype, target, disp,
                        tcount, ttype, &a);
    mpi_type *rt = NULL;
    if (!rc && fetch) {
        rc = rcount < 0
                 ? win_fail(job, win, call, MPI_ERR_COUNT, "result count %d is negative", rcount)
                 : mpi_type_check(job, a.w->comm, call, rtype, &rt);
        if (!rc && rt->size * (size_t)rcount != a.tt->size * a.tcount)
            rc = win_fail(job, win, call, MPI_ERR_TYPE,
                          "the result buffer has room for %zu bytes, the target has %zu",
                          rt->size * (size_t)rcount, a.tt->size * a.tcount);
    }
    if (!rc && !noop && a.ot->base != a.tt->base && a.tt->size && a.tcount)
        rc = win_fail(job, win, call, MPI_ERR_TYPE,
                      "the origin and target datatypes hold different basic types");
    if (rc) {
        runs_free(&a.rs);
        return mpi_leave(job, rc);
    }
    if (req) *req = MPI_REQUEST_NULL;
    char *otmp = NULL, *rtmp = NULL;
    const char *od = noop ? NULL : packed_in(job, call, a.w, a.ot, obuf, a.ocount, &otmp);
    char *rd = NULL;
    if (fetch && a.target != MPI_PROC_NULL) {
        if (rt->contig) {
            rd = rbuf;
        } else {
            rd = rtmp = malloc(rt->size * (size_t)rcount + 1);
            if (!rtmp) cr_fatal(job, call, "out of memory");
        }
    }
    rc = accumulate(job, call, &a, od, rd, op);
    if (!rc && rtmp) mpi_unpack_data(rt, rtmp, SIZE_MAX, rbuf, (size_t)rcount);
    scratch_put(a.w, SCR_ORIGIN, otmp);
    free(rtmp);
    runs_free(&a.rs);
    if (!rc && req) {
        xfer *x = calloc(1, sizeof *x); /* complete already */
        if (!x) cr_fatal(job, call, "out of memory");
        x->otype = -1;
        x->has_req = true;
        rc = mpi_request_ext(job, a.w->comm, &xreq_acc_ops, x, req);
    }
    return mpi_leave(job, rc);
}

/* The accumulates: into mapped memory under the target's accumulate lock, in
 * the call itself (as transfer for put and get). */
static inline __attribute__((always_inline)) int
get_acc(const char *call, const void *obuf, int ocount, MPI_Datatype otype, void *rbuf, int rcount,
        MPI_Datatype rtype, int target, MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Op op,
        MPI_Win win, MPI_Request *req, bool fetch)
{
    bool quick = !req && (obuf || op == MPI_NO_OP) && (!fetch || rbuf);
    if (quick && mpi_enter_owned() &&
        acc_fast(NULL, call, obuf, ocount, otype, fetch ? rbuf : NULL, rcount, rtype, target, disp,
                 tcount, ttype, op, NULL, win))
        return MPI_SUCCESS;
    cr_job *job = mpi_enter(call);
    if (quick && acc_fast(job, call, obuf, ocount, otype, fetch ? rbuf : NULL, rcount, rtype,
                          target, disp, tcount, ttype, op, NULL, win))
        return mpi_leave(job, MPI_SUCCESS);
    return get_acc_rest(job, call, obuf, ocount, otype, rbuf, rcount, rtype, target, disp, tcount,
                        ttype, op, win, req, fetch);
}

PMPI_WEAK(Accumulate);
int PMPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    if (op == MPI_NO_OP) op = MPI_OP_NULL; /* not allowed here: reported by mpi_redop */
    return get_acc("MPI_Accumulate", origin_addr, origin_count, origin_datatype, NULL, 0,
                   origin_datatype, target_rank, target_disp, target_count, target_datatype, op,
                   win, NULL, false);
}

PMPI_WEAK(Raccumulate);
int PMPI_Raccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                     int target_rank, MPI_Aint target_disp, int target_count,
                     MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
    if (op == MPI_NO_OP) op = MPI_OP_NULL;
    return get_acc("MPI_Raccumulate", origin_addr, origin_count, origin_datatype, NULL, 0,
                   origin_datatype, target_rank, target_disp, target_count, target_datatype, op,
                   win, request, false);
}

PMPI_WEAK(Get_accumulate);
int PMPI_Get_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                        void *result_addr, int result_count, MPI_Datatype result_datatype,
                        int target_rank, MPI_Aint target_disp, int target_count,
                        MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    return get_acc("MPI_Get_accumulate", origin_addr, origin_count, origin_datatype, result_addr,
                   result_count, result_datatype, target_rank, target_disp, target_count,
                   target_datatype, op, win, NULL, true);
}

PMPI_WEAK(Rget_accumulate);
int PMPI_Rget_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                         void *result_addr, int result_count, MPI_Datatype result_datatype,
                         int target_rank, MPI_Aint target_disp, int target_count,
                         MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
    return get_acc("MPI_Rget_accumulate", origin_addr, origin_count, origin_datatype, result_addr,
                   result_count, result_datatype, target_rank, target_disp, target_count,
                   target_datatype, op, win, request, true);
}

PMPI_WEAK(Fetch_and_op);
int PMPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype,
                      int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win)
{
    return get_acc("MPI_Fetch_and_op", origin_addr, 1, datatype, result_addr, 1, datatype,
                   target_rank, target_disp, 1, datatype, op, win, NULL, true);
}

PMPI_WEAK(Compare_and_swap);
int PMPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                          MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win)
{
    const char *call = "MPI_Compare_and_swap";
    bool quick = origin_addr && compare_addr && result_addr;
    if (quick && mpi_enter_owned() &&
        acc_fast(NULL, call, origin_addr, 1, datatype, result_addr, 1, datatype, target_rank,
                 target_disp, 1, datatype, MPI_REPLACE, compare_addr, win))
        return MPI_SUCCESS;
    cr_job *job = mpi_enter(call);
    if (quick && acc_fast(job, call, origin_addr, 1, datatype, result_addr, 1, datatype,
                          target_rank, target_disp, 1, datatype, MPI_REPLACE, compare_addr, win))
        return mpi_leave(job, MPI_SUCCESS);
    rma_args a;
    int rc = args_check(job, call, win, 1, datatype, target_rank, target_disp, 1, datatype, &a);
    if (!rc && (!a.ot->contig || a.ot->base < 0 || a.ot->size > 16))
        rc = win_fail(job, win, call, MPI_ERR_TYPE,
                      "compare-and-swap takes one element of a predefined integer type");
    if (rc || a.target == MPI_PROC_NULL) {
        runs_free(&a.rs);
        return mpi_leave(job, rc);
    }
    size_t n = a.ot->size;
    char old[16];
    int jr = cr_group_rank(&a.w->c->g, a.target);
    acc_lock(job, call, a.w, a.target);
    move_runs(job, call, &a, old, false, NULL);
    cr_rma_flush(job, call, jr);
    if (!memcmp(old, compare_addr, n)) {
        move_runs(job, call, &a, (char *)origin_addr, true, NULL);
        cr_rma_flush(job, call, jr);
    }
    acc_unlock(job, call, a.w, a.target);
    memcpy(result_addr, old, n);
    runs_free(&a.rs);
    return mpi_leave(job, MPI_SUCCESS);
}

/* ---- synchronization ----------------------------------------------------------- */

static int assert_check(cr_job *job, MPI_Win win, const char *call, int mode, int allowed)
{
    if (mode & ~allowed)
        return win_fail(job, win, call, MPI_ERR_ASSERT,
                        "assertion %#x has bits this call does not take (allowed: %#x)",
                        (unsigned)mode, (unsigned)allowed);
    return MPI_SUCCESS;
}

PMPI_WEAK(Win_fence);
int PMPI_Win_fence(int mode, MPI_Win win)
{
    const char *call = "MPI_Win_fence";
    cr_job *job = mpi_enter(call);
    mpi_win *w;
    int rc = win_check(job, call, win, &w);
    if (!rc)
        rc = assert_check(job, win, call, mode,
                          MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE |
                              MPI_MODE_NOSUCCEED);
    if (!rc && (w->nlocks || w->lock_all || w->acc_on || w->exp_on))
        rc = win_fail(job, win, call, MPI_ERR_RMA_SYNC,
                      "a lock or post/start epoch is open on this window: fences cannot mix "
                      "with it");
    if (rc) return mpi_leave(job, rc);
    cr_rma_flush(job, call, -1);
    cr_coll_barrier(job, &w->c->g, call);
    w->fence_on = !(mode & MPI_MODE_NOSUCCEED);
    return mpi_leave(job, MPI_SUCCESS);
}

static int lock_check(cr_job *job, const char *call, MPI_Win win, mpi_win **w, int rank)
{
    int rc = win_check(job, call, win, w);
    if (rc) return rc;
    if (rank != MPI_PROC_NULL && (rank < 0 || rank >= (*w)->size))
        return win_fail(job, win, call, MPI_ERR_RANK, "rank %d is not a member (0..%d)", rank,
                        (*w)->size - 1);
    return MPI_SUCCESS;
}

static void lock_take(cr_job *job, const char *call, mpi_win *w, int t, int type)
{
    lock_wait lw;
    lock_wait_begin(&lw, call, cr_group_rank(&w->c->g, t));
    if (type == MPI_LOCK_EXCLUSIVE) {
        while (ctl_amo(job, call, w, t, CTL_LOCK, CR_AMO_CAS | CR_AMO_QUIET, LOCK_WRITER, 0) != 0)
            backoff(job, &lw);
    } else {
        while (ctl_amo(job, call, w, t, CTL_LOCK, CR_AMO_ADD | CR_AMO_QUIET, 1, 0) & LOCK_WRITER) {
            ctl_amo(job, call, w, t, CTL_LOCK, CR_AMO_ADD | CR_AMO_QUIET, (uint64_t)-1, 0);
            backoff(job, &lw);
        }
    }
    lock_wait_end(job, &lw);
}

static void lock_give(cr_job *job, const char *call, mpi_win *w, int t, int type)
{
    ctl_amo(job, call, w, t, CTL_LOCK, CR_AMO_ADD | CR_AMO_QUIET,
            type == MPI_LOCK_EXCLUSIVE ? (uint64_t)-LOCK_WRITER : (uint64_t)-1, 0);
}

PMPI_WEAK(Win_lock);
int PMPI_Win_lock(int lock_type, int rank, int mode, MPI_Win win)
{
    const char *call = "MPI_Win_lock";
    cr_job *job = mpi_enter(call);
    mpi_win *w;
    int rc = lock_check(job, call, win, &w, rank);
    if (!rc && lock_type != MPI_LOCK_SHARED && lock_type != MPI_LOCK_EXCLUSIVE)
        rc = win_fail(job, win, call, MPI_ERR_LOCKTYPE,
                      "lock type %d is neither MPI_LOCK_SHARED nor MPI_LOCK_EXCLUSIVE", lock_type);
    if (!rc) rc = assert_check(job, win, call, mode, MPI_MODE_NOCHECK);
    if (!rc && rank != MPI_PROC_NULL && (w->lockst[rank] || w->lock_all))
        rc = win_fail(job, win, call, MPI_ERR_RMA_SYNC,
                      w->lockst[rank] ? "rank %d is locked by this process already"
                                      : "another epoch is open on this window (rank %d)",
                      rank);
    if (rc || rank == MPI_PROC_NULL) return mpi_leave(job, rc);
    if (!(mode & MPI_MODE_NOCHECK)) lock_take(job, call, w, rank, lock_type);
    w->lockst[rank] =
        (uint8_t)(lock_type == MPI_LOCK_EXCLUSIVE ? 2 : 1) | (mode & MPI_MODE_NOCHECK ? 4 : 0);
    w->nlocks++;
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Win_unlock);
int PMPI_Win_unlock(int rank, MPI_Win win)
{
    const char *call = "MPI_Win_unlock";
    cr_job *job = mpi_enter(call);
    mpi_win *w;
    int rc = lock_check(job, call, win, &w, rank);
    if (rc || rank == MPI_PROC_NULL) return mpi_leave(job, rc);
    if (!w->lockst[rank])
        return mpi_leave(job, win_fail(job, win, call, MPI_ERR_RMA_SYNC,
                                       "rank %d is not locked by this process", rank));
    cr_rma_flush(job, call, cr_group_rank(&w->c->g, rank));
    uint8_t st = w->lockst[rank];
    if (!(st & 4)) lock_give(job, call, w, rank, st & 2 ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED);
    w->lockst[rank] = 0;
    w->nlocks--;
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Win_lock_all);
int PMPI_Win_lock_all(int mode, MPI_Win win)
{
    const char *call = "MPI_Win_lock_all";
    cr_job *job = mpi_enter(call);
    mpi_win *w;
    int rc = win_check(job, call, win, &w);
    if (!rc) rc = assert_check(job, win, call, mode, MPI_MODE_NOCHECK);
    if (!rc && (w->lock_all || w->nlocks))
        rc = win_fail(job, win, call, MPI_ERR_RMA_SYNC, "another epoch is open on this window");
    if (rc) return mpi_leave(job, rc);
    if (!(mode & MPI_MODE_NOCHECK))
        for (int t = 0; t < w->size; t++) lock_take(job, call, w, t, MPI_LOCK_SHARED);
    w->lock_all = mode & MPI_MODE_NOCHECK ? 2 : 1;
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Win_unlock_all);
int PMPI_Win_unlock_all(MPI_Win win)
{
    const char *call = "MPI_Win_unlock_all";
    cr_job *job = mpi_enter(call);
    mpi_win *w;
    int rc = win_check(job, call, win, &w);
    if (!rc && !w->lock_all)
        rc = win_fail(job, win, call, MPI_ERR_RMA_SYNC, "MPI_Win_lock_all was not called");
    if (rc) return mpi_leave(job, rc);
    cr_rma_flush(job, call, -1);
    if (w->lock_all != 2)
        for (int t = 0; t < w->size; t++) lock_give(job, call, w, t, MPI_LOCK_SHARED);
    w->lock_all = 0;
    return mpi_leave(job, MPI_SUCCESS);
}

static int flush(const char *call, int rank, MPI_Win win, bool all)
{
    /* Nothing of this rank's in flight (its puts and gets into mapped memory
     * are done in their calls), in a passive-target epoch: nothing to do, and
     * no lock needed to see it (mpi_enter_owned). No fence either: what shows
     * the transfers' stores to the target is the synchronization the program
     * uses next (a message, a barrier, an unlock, MPI_Win_sync), each with a
     * barrier of its own, as without a progress thread before. */
    cr_job *job = mpi_enter_owned();
    if (job) {
        mpi_win *w = win_get(win);
        if (w && (all || (rank >= 0 && rank < w->size)) && (w->nlocks || w->lock_all) &&
            cr_rma_idle(job))
            return MPI_SUCCESS;
    }
    job = mpi_enter(call);
    mpi_win *w;
    int rc = lock_check(job, call, win, &w, all ? MPI_PROC_NULL : rank);
    if (!rc && !w->nlocks && !w->lock_all)
        rc = win_fail(job, win, call, MPI_ERR_RMA_SYNC,
                      "no passive-target epoch (lock) is open on this window");
    if (rc) return mpi_leave(job, rc);
    if (all || rank != MPI_PROC_NULL)
        cr_rma_flush(job, call, all ? -1 : cr_group_rank(&w->c->g, rank));
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Win_flush);
int PMPI_Win_flush(int rank, MPI_Win win)
{
    return flush("MPI_Win_flush", rank, win, false);
}

PMPI_WEAK(Win_flush_all);
int PMPI_Win_flush_all(MPI_Win win)
{
    return flush("MPI_Win_flush_all", 0, win, true);
}

PMPI_WEAK(Win_flush_local);
int PMPI_Win_flush_local(int rank, MPI_Win win)
{
    return flush("MPI_Win_flush_local", rank, win, false);
}

PMPI_WEAK(Win_flush_local_all);
int PMPI_Win_flush_local_all(MPI_Win win)
{
    return flush("MPI_Win_flush_local_all", 0, win, true);
}

PMPI_WEAK(Win_sync);
int PMPI_Win_sync(MPI_Win win)
{
    const char *call = "MPI_Win_sync";
    cr_job *job = mpi_enter(call);
    mpi_win *w;
    int rc = win_check(job, call, win, &w);
    /* a full barrier: a locked read-modify-write (ThreadSanitizer does not
     * take a bare fence) */
    if (!rc) __atomic_fetch_add(&w->sync_word, 0, __ATOMIC_SEQ_CST);
    if (!rc) cr_rma_sim_serve(job);
    return mpi_leave(job, rc);
}

/* Members of group g (job ranks) as window members; -1 when one is not. */
static int group_members(cr_job *job, const char *call, MPI_Win win, mpi_win *w, MPI_Group g,
                         int *out, int *n)
{
    mpi_group *gr = NULL;
    int rc = mpi_group_check(job, call, g, &gr);
    if (rc) return rc;
    *n = gr ? gr->size : 0;
    for (int i = 0; i < *n; i++) {
        int m = mpi_comm_job_to_rank(w->c, gr->ranks[i]);
        if (m < 0)
            return win_fail(job, win, call, MPI_ERR_GROUP,
                            "member %d of the group is not a member of the window", i);
        out[i] = m;
    }
    return MPI_SUCCESS;
}

PMPI_WEAK(Win_post);
int PMPI_Win_post(MPI_Group group, int mode, MPI_Win win)
{
    const char *call = "MPI_Win_post";
    cr_job *job = mpi_enter(call);
    mpi_win *w;
    int rc = win_check(job, call, win, &w);
    if (!rc)
        rc = assert_check(job, win, call, mode,
                          MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT);
    if (!rc && w->exp_on)
        rc = win_fail(job, win, call, MPI_ERR_RMA_SYNC,
                      "an exposure epoch is open already on this window");
    if (!rc) rc = group_members(job, call, win, w, group, w->expose, &w->nexp);
    if (rc) return mpi_leave(job, rc);
    w->exp_on = true;
    for (int i = 0; i < w->nexp; i++)
        ctl_amo(job, call, w, w->expose[i], ctl_post(w->me), CR_AMO_ADD, 1, 0);
    return mpi_leave(job, MPI_SUCCESS);
}

typedef struct words_arg {
    uint64_t *ctl;
    const int *who;
    int n;
    size_t (*word)(const mpi_win *, int);
    const mpi_win *w;
} words_arg;

/* Every counter named is positive. */
static bool words_ready(void *p)
{
    words_arg *a = p;
    for (int i = 0; i < a->n; i++)
        if (!__atomic_load_n(&a->ctl[a->word(a->w, a->who[i])], __ATOMIC_ACQUIRE)) return false;
    return true;
}

static void words_take(words_arg *a)
{
    for (int i = 0; i < a->n; i++)
        __atomic_fetch_sub(&a->ctl[a->word(a->w, a->who[i])], 1, __ATOMIC_ACQ_REL);
}

static size_t post_word(const mpi_win *w, int i)
{
    (void)w;
    return ctl_post(i);
}

PMPI_WEAK(Win_start);
int PMPI_Win_start(MPI_Group group, int mode, MPI_Win win)
{
    const char *call = "MPI_Win_start";
    cr_job *job = mpi_enter(call);
    mpi_win *w;
    int rc = win_check(job, call, win, &w);
    if (!rc) rc = assert_check(job, win, call, mode, MPI_MODE_NOCHECK);
    if (!rc && w->acc_on)
        rc = win_fail(job, win, call, MPI_ERR_RMA_SYNC,
                      "an access epoch is open already on this window");
    if (!rc) rc = group_members(job, call, win, w, group, w->access, &w->nacc);
    if (rc) return mpi_leave(job, rc);
    words_arg a = {w->myctl, w->access, w->nacc, post_word, w};
    if (!words_ready(&a)) cr_rma_wait_word(job, call, words_ready, &a);
    words_take(&a);
    w->acc_on = true;
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Win_complete);
int PMPI_Win_complete(MPI_Win win)
{
    const char *call = "MPI_Win_complete";
    cr_job *job = mpi_enter(call);
    mpi_win *w;
    int rc = win_check(job, call, win, &w);
    if (!rc && !w->acc_on)
        rc = win_fail(job, win, call, MPI_ERR_RMA_SYNC, "MPI_Win_start was not called");
    if (rc) return mpi_leave(job, rc);
    cr_rma_flush(job, call, -1);
    for (int i = 0; i < w->nacc; i++)
        ctl_amo(job, call, w, w->access[i], ctl_done(w, w->me), CR_AMO_ADD, 1, 0);
    w->acc_on = false;
    return mpi_leave(job, MPI_SUCCESS);
}

static int wait_or_test(const char *call, MPI_Win win, int *flag)
{
    cr_job *job = mpi_enter(call);
    mpi_win *w;
    int rc = win_check(job, call, win, &w);
    if (!rc && !w->exp_on)
        rc = win_fail(job, win, call, MPI_ERR_RMA_SYNC, "MPI_Win_post was not called");
    if (rc) return mpi_leave(job, rc);
    words_arg a = {w->myctl, w->expose, w->nexp, ctl_done, w};
    if (flag) {
        if (!words_ready(&a)) cr_progress(job);
        *flag = words_ready(&a);
        if (!*flag) return mpi_leave(job, MPI_SUCCESS);
    } else if (!words_ready(&a)) {
        cr_rma_wait_word(job, call, words_ready, &a);
    }
    words_take(&a);
    w->exp_on = false;
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Win_wait);
int PMPI_Win_wait(MPI_Win win)
{
    return wait_or_test("MPI_Win_wait", win, NULL);
}

PMPI_WEAK(Win_test);
int PMPI_Win_test(MPI_Win win, int *flag)
{
    int dummy;
    return wait_or_test("MPI_Win_test", win, flag ? flag : &dummy);
}

/* ---- naming, groups, info, error handlers, attributes ------------------------- */

PMPI_WEAK(Win_get_group);
int PMPI_Win_get_group(MPI_Win win, MPI_Group *group)
{
    const char *call = "MPI_Win_get_group";
    cr_job *job = mpi_enter(call);
    mpi_win *w;
    int rc = win_check(job, call, win, &w);
    if (!rc && !group) rc = win_fail(job, win, call, MPI_ERR_ARG, "group is NULL");
    if (rc) return mpi_leave(job, rc);
    int *r = malloc((size_t)w->size * sizeof *r);
    if (!r) cr_fatal(job, call, "out of memory");
    for (int i = 0; i < w->size; i++) r[i] = comm_rank_to_job(w->c, i);
    *group = mpi_group_add(job, call, r, w->size);
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Win_set_name);
int PMPI_Win_set_name(MPI_Win win, const char *name)
{
    const char *call = "MPI_Win_set_name";
    cr_job *job = mpi_enter(call);
    mpi_win *w;
    int rc = win_check(job, call, win, &w);
    if (!rc && !name) rc = win_fail(job, win, call, MPI_ERR_ARG, "name is NULL");
    if (rc) return mpi_leave(job, rc);
    snprintf(w->name, sizeof w->name, "%s", name);
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Win_get_name);
int PMPI_Win_get_name(MPI_Win win, char *name, int *resultlen)
{
    const char *call = "MPI_Win_get_name";
    cr_job *job = mpi_enter(call);
    mpi_win *w;
    int rc = win_check(job, call, win, &w);
    if (!rc && (!name || !resultlen))
        rc = win_fail(job, win, call, MPI_ERR_ARG, "%s is NULL", name ? "resultlen" : "name");
    if (rc) return mpi_leave(job, rc);
    *resultlen = snprintf(name, MPI_MAX_OBJECT_NAME, "%s", w->name);
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Win_set_info);
int PMPI_Win_set_info(MPI_Win win, MPI_Info info)
{
    const char *call = "MPI_Win_set_info";
    cr_job *job = mpi_enter(call);
    mpi_win *w;
    int rc = win_check(job, call, win, &w);
    if (!rc) rc = mpi_info_arg(job, w->comm, call, info, true);
    if (rc) return mpi_leave(job, rc);
    if (w->info != MPI_INFO_NULL) mpi_info_drop(w->info);
    w->info = info == MPI_INFO_NULL ? MPI_INFO_NULL : mpi_info_copy(info);
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Win_get_info);
int PMPI_Win_get_info(MPI_Win win, MPI_Info *info)
{
    const char *call = "MPI_Win_get_info";
    cr_job *job = mpi_enter(call);
    mpi_win *w;
    int rc = win_check(job, call, win, &w);
    if (!rc && !info) rc = win_fail(job, win, call, MPI_ERR_ARG, "info is NULL");
    if (rc) return mpi_leave(job, rc);
    MPI_Info src = w->info;
    cr_unlock(job);
    return mpi_leave_unlocked(job, src != MPI_INFO_NULL ? PMPI_Info_dup(src, info)
                                                        : PMPI_Info_create(info));
}

PMPI_WEAK(Win_create_errhandler);
int PMPI_Win_create_errhandler(MPI_Win_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    /* one table of handlers for communicators and windows (their first
     * arguments are both int handles) */
    return PMPI_Comm_create_errhandler((MPI_Comm_errhandler_function *)(void (*)(void))fn,
                                       errhandler);
}

PMPI_WEAK(Win_set_errhandler);
int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler h)
{
    const char *call = "MPI_Win_set_errhandler";
    cr_job *job = mpi_enter(call);
    mpi_win *w;
    int rc = win_check(job, call, win, &w);
    if (!rc && !mpi_errh_valid(h))
        rc = win_fail(job, win, call, MPI_ERR_ARG, "error handler %#x is not valid", (unsigned)h);
    if (rc) return mpi_leave(job, rc);
    w->errh = h;
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Win_get_errhandler);
int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *h)
{
    const char *call = "MPI_Win_get_errhandler";
    cr_job *job = mpi_enter(call);
    mpi_win *w;
    int rc = win_check(job, call, win, &w);
    if (!rc && !h) rc = win_fail(job, win, call, MPI_ERR_ARG, "errhandler is NULL");
    if (rc) return mpi_leave(job, rc);
    *h = w->errh;
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Win_call_errhandler);
int PMPI_Win_call_errhandler(MPI_Win win, int errorcode)
{
    const char *call = "MPI_Win_call_errhandler";
    cr_job *job = mpi_enter(call);
    mpi_win *w;
    int rc = win_check(job, call, win, &w);
    if (!rc) win_fail(job, win, call, errorcode, "error %d raised by the program", errorcode);
    return mpi_leave(job, rc);
}

/* Window keyvals and attribute lists are mpi_attr.c's, shared with
 * communicators and datatypes; the predefined MPI_WIN_* keyvals are answered
 * here (MPI_Win_get_attr). */

int MPI_WIN_DUP_FN(MPI_Win oldwin, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)oldwin, (void)keyval, (void)extra;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

mpi_attrs *mpi_win_attrs(int h)
{
    mpi_win *w = win_get(h);
    return w ? &w->attrs : NULL;
}

PMPI_WEAK(Win_create_keyval);
int PMPI_Win_create_keyval(MPI_Win_copy_attr_function *copy, MPI_Win_delete_attr_function *del,
                           int *keyval, void *extra)
{
    const char *call = "MPI_Win_create_keyval";
    cr_job *job = mpi_enter(call);
    if (!keyval)
        return mpi_leave(job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "keyval is NULL"));
    *keyval = mpi_keyval_create(job, call, MPI_OBJ_WIN, copy, del, extra);
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Win_free_keyval);
int PMPI_Win_free_keyval(int *keyval)
{
    const char *call = "MPI_Win_free_keyval";
    cr_job *job = mpi_enter(call);
    if (!mpi_keyval_free(keyval, MPI_OBJ_WIN))
        return mpi_leave(job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_KEYVAL,
                                       "not a keyval from MPI_Win_create_keyval, or one freed "
                                       "already"));
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Win_set_attr);
int PMPI_Win_set_attr(MPI_Win win, int keyval, void *val)
{
    const char *call = "MPI_Win_set_attr";
    cr_job *job = mpi_enter(call);
    mpi_win *w;
    int rc = win_check(job, call, win, &w);
    if (!rc && !mpi_keyval_live(keyval, MPI_OBJ_WIN))
        rc = win_fail(job, win, call, MPI_ERR_KEYVAL,
                      "keyval %#x is not from MPI_Win_create_keyval (or was freed)",
                      (unsigned)keyval);
    if (rc) return mpi_leave(job, rc);
    rc = mpi_attr_set(job, MPI_OBJ_WIN, win, keyval, val);
    if (rc != MPI_SUCCESS)
        rc = win_fail(job, win, call, mpi_attr_cb_class(rc),
                      "the delete callback of keyval %#x returned %d: the old value stays",
                      (unsigned)keyval, rc);
    return mpi_leave(job, rc);
}

PMPI_WEAK(Win_get_attr);
int PMPI_Win_get_attr(MPI_Win win, int keyval, void *val, int *flag)
{
    const char *call = "MPI_Win_get_attr";
    cr_job *job = mpi_enter(call);
    mpi_win *w;
    int rc = win_check(job, call, win, &w);
    if (!rc && (!val || !flag))
        rc = win_fail(job, win, call, MPI_ERR_ARG, "%s is NULL", val ? "flag" : "attribute_val");
    if (rc) return mpi_leave(job, rc);
    static int unified = MPI_WIN_UNIFIED; /* never changed: what every window's model points at */
    *flag = 1;
    switch (keyval) {
    case MPI_WIN_BASE:
        *(void **)val = w->base;
        break;
    case MPI_WIN_SIZE:
        *(MPI_Aint **)val = &w->wsize;
        break;
    case MPI_WIN_DISP_UNIT:
        *(int **)val = &w->disp_unit;
        break;
    case MPI_WIN_CREATE_FLAVOR:
        *(int **)val = &w->flavor;
        break;
    case MPI_WIN_MODEL:
        *(int **)val = &unified;
        break;
    default: {
        mpi_attr *a = mpi_attr_find(MPI_OBJ_WIN, win, keyval);
        if (!a && !mpi_keyval_live(keyval, MPI_OBJ_WIN))
            return mpi_leave(job, win_fail(job, win, call, MPI_ERR_KEYVAL,
                                           "keyval %#x is not a window keyval", (unsigned)keyval));
        *flag = a != NULL;
        if (a) *(void **)val = a->val;
    }
    }
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Win_delete_attr);
int PMPI_Win_delete_attr(MPI_Win win, int keyval)
{
    const char *call = "MPI_Win_delete_attr";
    cr_job *job = mpi_enter(call);
    mpi_win *w;
    int rc = win_check(job, call, win, &w);
    if (!rc && !mpi_attr_find(MPI_OBJ_WIN, win, keyval))
        rc = win_fail(job, win, call, MPI_ERR_KEYVAL, "keyval %#x has no value on this window",
                      (unsigned)keyval);
    if (rc) return mpi_leave(job, rc);
    rc = mpi_attr_delete(job, MPI_OBJ_WIN, win, keyval);
    if (rc != MPI_SUCCESS)
        rc = win_fail(job, win, call, mpi_attr_cb_class(rc),
                      "the delete callback of keyval %#x returned %d: the attribute stays",
                      (unsigned)keyval, rc);
    return mpi_leave(job, rc);
}
