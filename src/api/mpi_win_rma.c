/* MPI one-sided transfers (mpi_win.h): put, get, their request forms, the
 * accumulates (accumulate, get_accumulate, fetch_and_op, compare_and_swap and
 * their request forms), and the target's service that does an accumulate for
 * an origin that does not map its control block.
 *
 * Invariants:
 *  - a transfer is refused unless this member is in an epoch that gives it
 *    access to the target, and unless every byte it touches lies inside the
 *    target's window (or, dynamic, inside a region attached there): nothing
 *    is ever written outside (args_check);
 *  - every transfer is one engine put or get per contiguous run of the target
 *    datatype, or (a small one of an active-target epoch into memory this
 *    rank does not map: "deferred") a record queued for the target's service
 *    that the epoch's end sends; its temporaries are freed by its completion
 *    (xfer_done), so a call that returns leaves none of a completed transfer
 *    behind;
 *  - accumulates, fetch-and-op and compare-and-swap run under the target's
 *    accumulate lock (its control block's CTL_ACC word), taken by the origin
 *    or, for one that does not map the control block, by the target's service
 *    (acc_serve), so that two of them on one location never interleave;
 *  - the short paths (a put, get or accumulate into a window whose memory this
 *    process maps) run without the engine lock only where mpi_enter_owned
 *    allows, and touch only what the calling thread owns. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"
#include "mpi_win.h"

/* ---- transfers ---------------------------------------------------------------- */

/* A transfer's temporaries, freed once all its engine transfers completed. */
typedef struct xfer {
    int pending;
    char *tmp;  /* packed data */
    void *obuf; /* get: unpack tmp into count instances of ot here */
    size_t ocount;
    int otype; /* its table index (a reference held), -1: none */
    bool has_req, req_gone;
    /* --check=rma: a request-based get's or get-accumulate's passive records
     * (chk_from..chk_to-1 of window chk_win, to chk_target), complete at the
     * target once its request completes */
    MPI_Win chk_win;
    int chk_target;
    size_t chk_from, chk_to;
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

/* --check=rma: a request-based get's records (from..to-1 of win's passive
 * ones, to target) end where its request completes (xreq_test). */
static void chk_keep(xfer *x, MPI_Win win, int target, size_t from, size_t to)
{
    x->chk_win = win;
    x->chk_target = target;
    x->chk_from = from;
    x->chk_to = to;
}

static bool xreq_test(cr_job *job, void *obj, MPI_Status *st)
{
    xfer *x = obj;
    cr_rma_reap(job);
    if (x->pending) return false;
    if (x->chk_to > x->chk_from) {
        mpi_win *w = win_get(x->chk_win);
        if (w && w->chk)
            mpi_check_rma_done(job, w, "MPI_Wait", x->chk_target, x->chk_from, x->chk_to);
        x->chk_to = x->chk_from;
    }
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

static const mpi_ext_ops xreq_ops = {.what = "MPI_Rput", .test = xreq_test, .free = xreq_free};
static const mpi_ext_ops xreq_get_ops = {.what = "MPI_Rget", .test = xreq_test, .free = xreq_free};
static const mpi_ext_ops xreq_acc_ops = {
    .what = "MPI_Raccumulate", .test = xreq_test, .free = xreq_free};

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

/* A NULL origin, result or compare buffer with data to move: MPI_ERR_BUFFER, as for a send
 * (a derived datatype may hold absolute addresses from MPI_BOTTOM). The runs of a are freed
 * when it fails. */
static int null_buf(cr_job *job, const char *call, rma_args *a, const void *buf, size_t count,
                    const mpi_type *t, const char *what)
{
    if (buf || !count || !t->predef || !t->size) return 0;
    runs_free(&a->rs);
    return win_fail(job, a->h, call, MPI_ERR_BUFFER, "the %s buffer is NULL but its count is %zu",
                    what, count);
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
    if (!w || w->chk || type != ttype || count != tcount || count < 0 || target < 0 ||
        target >= w->size || disp < 0 || w->flavor == MPI_WIN_FLAVOR_DYNAMIC ||
        !w->mem.map[target] || !has_access(w, target))
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
    if (!p || !obuf) return false; /* (a NULL buffer: transfer_rest says what is wrong) */
    if (put)
        memmove(p, obuf, bytes);
    else
        memmove(obuf, p, bytes);
    return true;
}

static bool defer(cr_job *job, const char *call, const rma_args *a, const cr_rtarget *t, MPI_Op op,
                  const char *odata, size_t bytes);

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
    if (!rc) rc = null_buf(job, call, &a, obuf, a.ocount, a.ot, "origin");
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
    if (a.w->chk && a.target != MPI_PROC_NULL) { /* --check=rma */
        size_t mark = mpi_check_rma_mark(a.w);
        mpi_check_rma_access(job, call, a.w, a.target, a.taddr, a.rs.r, a.rs.n,
                             put ? MPI_CHK_RMA_PUT : MPI_CHK_RMA_GET, MPI_OP_NULL, -1,
                             put ? data : NULL, put && !req && a.ot->contig ? obuf : NULL, bytes);
        if (req && !put) chk_keep(x, win, a.target, mark, mpi_check_rma_mark(a.w));
    }
    bool later = false; /* deferred to the epoch's end */
    if (put && !req && a.target != MPI_PROC_NULL && bytes) {
        cr_rtarget t = args_target(&a);
        later = defer(job, call, &a, &t, MPI_REPLACE, data, bytes);
    }
    if (a.target != MPI_PROC_NULL && !later) move_runs(job, call, &a, data, put, x);
    if (a.w->chk && a.target != MPI_PROC_NULL && !put && !req && !packs && bytes) /* --check=rma */
        mpi_check_rma_got(job, call, a.w, a.target, a.taddr, obuf, bytes);
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
    /* accumulates this rank sent to t's service, or queued for it, come first
     * (MPI orders a rank's accumulates to a location): they may wait there for
     * this lock */
    bool queued = w->dq && w->dq[t].len;
    if (queued) win_defer_send(job, call, w, t);
    if (!word || queued) cr_rma_flush(job, call, cr_group_rank(&w->c->g, t));
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
    const mpi_state *m = mpi_st();
    for (int i = 0; i < m->wins.n; i++)
        if (m->wins.w[i] && m->wins.w[i]->myctl && (uintptr_t)m->wins.w[i]->myctl == ctl)
            return m->wins.w[i];
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

/* One record of a call, checked: the header, its pieces and the origin's data. */
typedef struct acc_rec {
    acc_call q;
    const acc_piece *pc;
    const char *odata;
    const mpi_type *b;
} acc_rec;

/* Check the record at in (at most len bytes left of the call) from origin
 * into window w (every record of a call is for one window: win_by_ctl found
 * it from the first): its length, or a fatal error for a record this rank
 * cannot take. */
static size_t acc_check(cr_job *job, const char *call, int origin, const char *in, size_t len,
                        const mpi_win *w, acc_rec *r)
{
    if (len < sizeof r->q) cr_fatal(job, call, "a call from rank %d is %zu bytes", origin, len);
    memcpy(&r->q, in, sizeof r->q);
    const acc_call *q = &r->q;
    r->pc = (const acc_piece *)(in + sizeof *q);
    size_t want = len / sizeof *r->pc < q->nrun
                      ? SIZE_MAX
                      : sizeof *q + q->nrun * sizeof *r->pc + (q->op == MPI_NO_OP ? 0 : q->bytes);
    r->odata = (const char *)(r->pc + q->nrun);
    r->b = q->base > 0 && q->base < job->mpi->ntypes && mpi_type_at(q->base) &&
                   mpi_type_at(q->base)->predef
               ? mpi_type_at(q->base)
               : NULL;
    if (want > len || q->ctl != (uintptr_t)w->myctl || !r->b || !r->b->size ||
        q->bytes % r->b->size)
        cr_fatal(job, call, "rank %d sent an accumulate this rank cannot take (%zu bytes)", origin,
                 len);
    uint64_t total = 0;
    for (uint32_t i = 0; i < q->nrun; i++) {
        total += r->pc[i].len;
        if (!cr_rma_exposed(job, r->pc[i].addr, r->pc[i].len) || total > q->bytes ||
            (r->b->contig && r->pc[i].len % r->b->size))
            cr_fatal(job, call,
                     "rank %d accumulates into %llu bytes at %#llx, outside this rank's window",
                     origin, (unsigned long long)r->pc[i].len, (unsigned long long)r->pc[i].addr);
    }
    if (total != q->bytes || !q->bytes)
        cr_fatal(job, call, "rank %d sent %llu bytes of pieces for %llu", origin,
                 (unsigned long long)total, (unsigned long long)q->bytes);
    return want;
}

/* Apply a checked record (under the window's accumulate lock). */
static void acc_apply(cr_job *job, const char *call, int origin, mpi_win *w, const acc_rec *r,
                      void **out, size_t *outlen)
{
    const acc_call *q = &r->q;
    const acc_piece *pc = r->pc;
    const char *odata = r->odata;
    const mpi_type *b = r->b;
    if (q->fetch) { /* the old data, packed */
        if (!(*out = malloc(q->bytes)))
            cr_fatal(job, call, "out of memory for %llu bytes", (unsigned long long)q->bytes);
        pieces_move(pc, q->nrun, *out, false);
        *outlen = q->bytes;
    }
    if (q->op == MPI_NO_OP) return;
    if (q->op == MPI_REPLACE) { /* a put, or an accumulate that replaces */
        pieces_move(pc, q->nrun, (char *)odata, true);
        return;
    }
    cr_redop o = {0};
    mpi_opctx octx;
    bool packed;
    size_t n = 0;
    if (mpi_redop(job, w->comm, call, q->op, b, q->bytes / b->size, &o, &octx, &packed, &n))
        cr_fatal(job, call, "rank %d sent an operation this rank cannot apply", origin);
    if (!b->contig) { /* a pair type: its gaps need its C layout, the pieces packed together first
                       */
        char *tdata = malloc(q->bytes);
        if (!tdata)
            cr_fatal(job, call, "out of memory for %llu bytes", (unsigned long long)q->bytes);
        pieces_move(pc, q->nrun, tdata, false);
        combine(job, call, q->op, &o, n, b, tdata, odata, q->bytes);
        pieces_move(pc, q->nrun, tdata, true);
        free(tdata);
    } else { /* piece by piece in place; n counts the elements of all (> 0, checked) */
        size_t per = n / (q->bytes / b->size);
        for (uint32_t i = 0; i < q->nrun; odata += pc[i++].len)
            combine(job, call, q->op, &o, per * (pc[i].len / b->size), NULL,
                    (char *)(uintptr_t)pc[i].addr, odata, pc[i].len);
    }
}

/* The target's side (the service's handler): 1 while another holds the lock.
 * A call is one record (acc_remote), or the records an origin queued in an
 * epoch (win_defer_send), applied in the order they were made; only a call of
 * one record fetches. */
int acc_serve(cr_job *job, int origin, const void *in, size_t len, void **out, size_t *outlen)
{
    const char *call = "MPI_Accumulate (at the target)";
    const char *p = in;
    acc_call first;
    if (len < sizeof first) cr_fatal(job, call, "a call from rank %d is %zu bytes", origin, len);
    memcpy(&first, p, sizeof first);
    mpi_win *w = win_by_ctl(first.ctl);
    if (!w)
        cr_fatal(job, call,
                 "rank %d sent an accumulate for a window not found here: freed before the "
                 "accumulate completed?",
                 origin);
    if (!w->used) return 1; /* still being made here: later */
    uint64_t free_word = 0;
    if (!__atomic_compare_exchange_n(&w->myctl[CTL_ACC], &free_word, 1, false, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED))
        return 1;
    acc_rec r;
    for (size_t at = 0; at < len;) { /* each checked before it is applied */
        at += acc_check(job, call, origin, p + at, len - at, w, &r);
        if (r.q.fetch && at != len)
            cr_fatal(job, call, "rank %d sent a call of many records, one fetching", origin);
        acc_apply(job, call, origin, w, &r, out, outlen);
    }
    __atomic_store_n(&w->myctl[CTL_ACC], 0, __ATOMIC_RELEASE);
    return 0;
}

/* The length of the record of a's accumulate (op on bytes of packed origin
 * data): the acc_call, its pieces, the data (none for MPI_NO_OP). */
static size_t acc_rec_len(const rma_args *a, MPI_Op op, size_t bytes)
{
    return sizeof(acc_call) + (size_t)a->rs.n * sizeof(acc_piece) + (op == MPI_NO_OP ? 0 : bytes);
}

/* Write that record at at: op on odata into a's runs at t, fetching or not. */
static void acc_rec_write(char *at, const rma_args *a, const cr_rtarget *t, MPI_Op op, bool fetch,
                          const char *odata, size_t bytes)
{
    acc_call q = {.ctl = ctl_at(a->w, a->target, 0).addr,
                  .op = op,
                  .base = a->tt->base,
                  .nrun = (uint32_t)a->rs.n,
                  .fetch = fetch,
                  .bytes = bytes};
    memcpy(at, &q, sizeof q);
    acc_piece *pc = (acc_piece *)(void *)(at + sizeof q);
    for (int i = 0; i < a->rs.n; i++)
        pc[i] = (acc_piece){t->addr + (uint64_t)a->rs.r[i].off, a->rs.r[i].len};
    if (op != MPI_NO_OP) memcpy(pc + a->rs.n, odata, bytes);
}

/* ---- deferred: small transfers of an active-target epoch --------------------------- */

/* A put or an accumulate that fetches nothing, of up to DEFER_BYTES in up to
 * DEFER_PIECES runs, into a member's memory this rank does not map, in a
 * fence or start/complete epoch, is queued as an acc_call record (a put is
 * MPI_REPLACE) and sent to the target's service with the others of the epoch
 * when the epoch closes, or when the member's queue would pass DEFER_BATCH
 * (what travels inside one request: larger calls cost a receive of what
 * follows at the target, and buffers that come and go). Done on its own, such
 * a transfer costs a system call or two (process_vm_writev; the accumulate
 * lock, a read and a write) or a round trip to that service: 7-13 us; queued,
 * its copy. The service applies a call's records in order, under the
 * accumulate lock; a transfer that is not queued sends the queue first where
 * MPI orders them (accumulates: acc_lock, acc_remote). Not queued:
 * passive-target epochs (the target may compute without calling courier, and
 * single copy needs none of its CPU), courier run --sim (its model costs each
 * transfer) and --check=rma (it records each). */
#define DEFER_BYTES 4096
#define DEFER_PIECES 64
#define DEFER_BATCH CR_RMA_INLINE

/* Send member m's queue: answered (the flush that follows waits for it and
 * for every quiet one before), or quiet (a full batch in the epoch, whose
 * record that did not fit is queued next: an answered send follows). */
static void defer_send_one(cr_job *job, const char *call, mpi_win *w, int m, bool quiet)
{
    struct win_defer *d = &w->dq[m];
    if (quiet)
        cr_rma_call_quiet(job, call, cr_group_rank(&w->c->g, m), d->buf, d->len);
    else
        cr_rma_call(job, call, cr_group_rank(&w->c->g, m), d->buf, d->len, NULL, 0);
    /* the buffer is the engine's now; the next one starts as large */
    *d = (struct win_defer){.cap = d->cap};
    w->ndq--;
}

void win_defer_send(cr_job *job, const char *call, mpi_win *w, int t)
{
    if (!w->ndq) return;
    for (int m = t < 0 ? 0 : t; m < (t < 0 ? w->size : t + 1); m++)
        if (w->dq[m].len) defer_send_one(job, call, w, m, false);
}

/* Queue the transfer (op on the packed odata, bytes long, into a's runs at
 * t), when it may be: true when it was. */
static bool defer(cr_job *job, const char *call, const rma_args *a, const cr_rtarget *t, MPI_Op op,
                  const char *odata, size_t bytes)
{
    mpi_win *w = a->w;
    if (job->vt.base || w->chk || t->map || t->peer == job->rank || !bytes || bytes > DEFER_BYTES ||
        a->rs.n > DEFER_PIECES || a->tt->base <= 0 || w->lock_all || w->lockst[a->target])
        return false; /* (else the epoch is a fence's or a start's: args_check) */
    size_t len = acc_rec_len(a, op, bytes);
    if (!w->dq && !(w->dq = calloc((size_t)w->size, sizeof *w->dq)))
        cr_fatal(job, call, "out of memory");
    struct win_defer *d = &w->dq[a->target];
    if (d->len && d->len + len > DEFER_BATCH) defer_send_one(job, call, w, a->target, true);
    if (!d->buf || d->len + len > d->cap) {
        size_t cap = d->cap ? d->cap : 4096;
        while (cap < d->len + len) cap *= 2;
        char *nb = realloc(d->buf, cap);
        if (!nb) cr_fatal(job, call, "out of memory for %zu bytes of queued transfers", cap);
        d->buf = nb;
        d->cap = cap;
    }
    if (!d->len) w->ndq++;
    acc_rec_write(d->buf + d->len, a, t, op, false, odata, bytes);
    d->len += len;
    return true;
}

/* The origin's side: an accumulate waits for its answer only when it fetches. */
static void acc_remote(cr_job *job, const char *call, rma_args *a, const char *odata, char *rdata,
                       MPI_Op op, size_t bytes)
{
    cr_rtarget t = args_target(a);
    win_defer_send(job, call, a->w, a->target); /* queued ones first: the service keeps the order */
    size_t len = acc_rec_len(a, op, bytes);
    char *buf = malloc(len); /* the engine's from here: sent from, then freed */
    if (!buf) cr_fatal(job, call, "out of memory for an accumulate of %zu bytes", len);
    acc_rec_write(buf, a, &t, op, rdata != NULL, odata, bytes);
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
    if (!rdata && defer(job, call, a, &t, op, odata, bytes)) return MPI_SUCCESS;
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
    if (!rc && !noop) rc = null_buf(job, call, &a, obuf, a.ocount, a.ot, "origin");
    if (!rc && fetch) rc = null_buf(job, call, &a, rbuf, (size_t)rcount, rt, "result");
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
    size_t mark = 0, mark2 = 0;
    if (a.w->chk && a.target != MPI_PROC_NULL) { /* --check=rma */
        mark = mpi_check_rma_mark(a.w);
        bool watch = !req && !noop && a.ot->contig; /* its origin buffer, until the close */
        mpi_check_rma_access(job, call, a.w, a.target, a.taddr, a.rs.r, a.rs.n, MPI_CHK_RMA_ACC, op,
                             a.tt->base, NULL, watch ? obuf : NULL,
                             watch ? a.ot->size * a.ocount : 0);
        mark2 = mpi_check_rma_mark(a.w);
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
        if (fetch) chk_keep(x, win, a.target, mark, mark2);
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
    if (!rc) rc = null_buf(job, call, &a, origin_addr, 1, a.ot, "origin");
    if (!rc) rc = null_buf(job, call, &a, compare_addr, 1, a.ot, "compare");
    if (!rc) rc = null_buf(job, call, &a, result_addr, 1, a.ot, "result");
    if (!rc && (!a.ot->contig || a.ot->base < 0 || a.ot->size > 16))
        rc = win_fail(job, win, call, MPI_ERR_TYPE,
                      "compare-and-swap takes one element of a predefined integer type");
    if (rc || a.target == MPI_PROC_NULL) {
        runs_free(&a.rs);
        return mpi_leave(job, rc);
    }
    if (a.w->chk) /* --check=rma: an accumulate of its own operation */
        mpi_check_rma_access(job, call, a.w, a.target, a.taddr, a.rs.r, a.rs.n, MPI_CHK_RMA_ACC,
                             MPI_REPLACE, a.ot->base, NULL, NULL, 0);
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
