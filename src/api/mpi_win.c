/* MPI one-sided communication (MPI-3.1 ch. 11): windows, their epochs, and
 * put/get/accumulate translated into the engine's one-sided operations
 * (src/core/rma.c) over the group's published memory (src/coll/coll_rma.c).
 * This file makes, frees and describes windows; the transfers are in
 * mpi_win_rma.c, the epochs in mpi_win_sync.c, what they share in mpi_win.h.
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

#include "mpi_check.h"
#include "mpi_win.h"

char *scratch_get(cr_job *job, const char *call, mpi_win *w, int k, size_t len)
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

void scratch_put(mpi_win *w, int k, char *p)
{
    if (p && p == w->scratch[k].p)
        w->scratch[k].busy = false;
    else
        free(p);
}

/* ---- handles and errors ------------------------------------------------------ */

int win_fail(cr_job *job, MPI_Win h, const char *call, int code, const char *fmt, ...)
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

int win_check(cr_job *job, const char *call, MPI_Win h, mpi_win **out)
{
    *out = win_get(h);
    if (*out) return MPI_SUCCESS;
    return mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_WIN,
                    h == MPI_WIN_NULL ? "window is MPI_WIN_NULL"
                                      : "%#x is not a window (freed, or another kind of handle)",
                    (unsigned)h);
}

uint64_t ctl_amo(cr_job *job, const char *call, mpi_win *w, int m, size_t word, int op, uint64_t a,
                 uint64_t b)
{
    cr_rtarget t = ctl_at(w, m, word);
    return cr_rma_amo(job, call, &t, op, a, b);
}

void lock_wait_begin(lock_wait *lw, const char *call, int owner_rank)
{
    *lw = (lock_wait){.owner = owner_rank};
    lw->w.call = call;
    lw->w.lock_of = &lw->owner;
}

/* Back off between tries: move the engine (our own service included), then
 * give the CPU up for a moment. */
void backoff(cr_job *job, lock_wait *lw)
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

void lock_wait_end(cr_job *job, lock_wait *lw)
{
    if (lw->w.listed) cr_wait_report(job, &lw->w, false);
}

/* ---- creation ----------------------------------------------------------------- */

static mpi_win *win_slot(cr_job *job, const char *call, MPI_Win *h)
{
    int i = 0;
    while (i < job->mpi->wins.n && job->mpi->wins.w[i]) i++;
    if (i == job->mpi->wins.n) {
        mpi_win **t = realloc(job->mpi->wins.w, (size_t)(job->mpi->wins.n + 1) * sizeof *t);
        if (!t) cr_fatal(job, call, "out of memory for windows");
        job->mpi->wins.w = t;
        job->mpi->wins.w[job->mpi->wins.n++] = NULL;
    }
    mpi_win *w = calloc(1, sizeof *w);
    if (!w) cr_fatal(job, call, "out of memory for a window");
    job->mpi->wins.w[i] = w;
    *h = (MPI_Win)(K_WIN | (unsigned)i);
    return w;
}

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
    if (mpi_chk_on(job, MPI_CHK_RMA)) mpi_check_rma_win(job, w); /* --check=rma */
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
            job->mpi->wins.w[h_idx(*win)] = NULL;
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
    } else if (flavor == MPI_WIN_FLAVOR_CREATE) {
        cr_shared sh; /* over a block of MPI_Alloc_mem's: the members here map it */
        win_setup(job, call, w, base, len, len && mpi_amem_find(job, base, len, &sh) ? &sh : NULL);
    } else {
        win_setup(job, call, w, NULL, 0, NULL);
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
    win_defer_send(job, call, w, -1); /* a fence epoch left open */
    cr_rma_flush(job, call, -1);
    if (w->chk) mpi_check_rma_free(job, w, call); /* --check=rma */
    cr_coll_barrier(job, &w->c->g, call);         /* nobody reaches this memory any more */
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
    free(w->dq);
    free(w->disps);
    free(w->lockst);
    free(w->access);
    free(w->expose);
    if (cb != MPI_SUCCESS)
        cb = win_fail(job, *win, call, mpi_attr_cb_class(cb),
                      "the delete callback of keyval %#x returned %d (the window is freed: its "
                      "other members have freed theirs)",
                      (unsigned)kv, cb);
    job->mpi->wins.w[h_idx(*win)] = NULL;
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
    mpi_win *w = NULL;
    /* MPI-4.1: the null handle has a name too, its own */
    int rc = win == MPI_WIN_NULL ? 0 : win_check(job, call, win, &w);
    if (!rc && (!name || !resultlen))
        rc = win_fail(job, win, call, MPI_ERR_ARG, "%s is NULL", name ? "resultlen" : "name");
    if (rc) return mpi_leave(job, rc);
    *resultlen = snprintf(name, MPI_MAX_OBJECT_NAME, "%s", w ? w->name : "MPI_WIN_NULL");
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
        rc = win_fail(job, win, call, MPI_ERR_ERRHANDLER, "error handler %#x is not valid",
                      (unsigned)h);
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
        job->mpi->attrv.win_model = MPI_WIN_UNIFIED; /* every window's, set at each call */
        *(int **)val = &job->mpi->attrv.win_model;
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
