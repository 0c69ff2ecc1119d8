/* MPI requests (mpi_p2p.h): the table every request kind lives in
 * (point-to-point, persistent, generalized, and other files' kinds through
 * mpi_request_ext: nonblocking collectives, one-sided request forms; and
 * mpi_request_ext_persistent: partitioned communication), their
 * completion by every wait and test form, MPI_Request_free, MPI_Cancel,
 * generalized requests, and the status queries (MPI-4.1's accessors too).
 *
 * Invariants:
 *  - an MPI_Request is RQ_MARK | an id of job->mpi->p2p.reqs (index +
 *    generation): a completed, freed or made-up handle is reported, never
 *    taken for another request; slots never move, so a pointer to one stays
 *    valid while the lock is released (a wait, a user callback);
 *  - a request completes exactly once (finish): its status is filled, a staged
 *    receive unpacked, what the operation holds released, then its slot is
 *    freed or, persistent, made inactive (RQ_IDLE), which every wait/test form
 *    treats like MPI_REQUEST_NULL; MPI_Request_get_status and its _all/_any/
 *    _some forms (MPI-4.1) only read a done request's status, never finish it;
 *  - a plain request (plain(): a send or receive, or one done when made, with
 *    nothing staged, persistent, checked, cancelled or cut short) is
 *    completed by finish_plain, which does what recv_status, op_end and
 *    retire do for it, no more (the message rate: docs/engine.md);
 *  - a request freed while active (MPI_Request_free) is retired once its
 *    operation completes, found by the next req_new (reap_freed);
 *  - a generalized request completes only through MPI_Grequest_complete, and
 *    its callbacks run without the engine lock. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"
#include "mpi_p2p.h"

/* ---- requests -------------------------------------------------------------------- */

static void retire(cr_job *job, mreq *q);
static bool req_done(cr_job *job, mreq *q);

/* Retire the freed requests whose operation has completed (not generalized
 * ones: MPI_Grequest_complete retires those). */
static __attribute__((noinline)) void reap_freed(cr_job *job)
{
    for (int i = 0; i < (int)job->mpi->p2p.reqs.n && job->mpi->p2p.nfreed; i++) {
        mreq *q = slot(i);
        if (q->kind != RQ_FREE && q->kind != RQ_GREQ && q->freed && req_done(job, q)) {
            job->mpi->p2p.nfreed--;
            retire(job, q);
        }
    }
}

mreq *req_new(cr_job *job, const char *call, uint8_t kind, MPI_Comm comm, MPI_Request *handle)
{
    if (job->mpi->p2p.nfreed) reap_freed(job);
    mreq *q = cr_idt_alloc(&job->mpi->p2p.reqs);
    if (!q && cr_idt_full(&job->mpi->p2p.reqs))
        cr_fatal(job, call, "more than %u requests pending; complete some first",
                 (unsigned)CR_ID_MAX_SLOTS);
    if (!q) cr_fatal(job, call, "out of memory for requests");
    /* Every field but the slot's own, one store each: a whole-struct
     * initializer became a `rep stos` of 200 bytes, slow to start, on every
     * request. A field added to mreq gets its first value here. */
    q->kind = kind;
    q->freed = q->cancelled = false;
    q->r = NULL;
    q->tmp = NULL;
    q->ubuf = NULL;
    q->count = 0;
    q->type = -1;
    q->umask = 0;
    q->comm = comm;
    q->call = call;
    q->cbuf = NULL;
    q->clen = 0;
    q->csum = 0;
    q->cpeer = q->ctag = 0;
    status_empty(&q->st);
    q->ps = NULL;
    q->gdone = false;
    q->query = NULL;
    q->gfree = NULL;
    q->gcancel = NULL;
    q->extra = NULL;
    q->ops = NULL;
    q->obj = NULL;
    q->xdone = false;
    *handle = (MPI_Request)(RQ_MARK | cr_idt_id(q));
    return q;
}

/* Has the request's operation completed? An RQ_EXT request is advanced here.
 * (An inactive request counts as done; the wait/test forms skip it first.) */
static bool req_done(cr_job *job, mreq *q)
{
    switch (q->kind) {
    case RQ_SEND:
    case RQ_RECV:
        return q->r->done;
    case RQ_GREQ:
        return q->gdone;
    case RQ_EXT:
        if (!q->xdone && q->ops->test(job, q->obj, &q->st)) q->xdone = true;
        return q->xdone;
    default:
        return true;
    }
}

/* Fill the status of a completed request (not a generalized one); its error. */
static int recv_status(mreq *q, MPI_Status *st)
{
    int err = MPI_SUCCESS;
    if (q->kind == RQ_RECV && !q->cancelled) err = mpi_recv_err(&q->r->st, q->umask);
    if (q->kind == RQ_EXT) err = q->st.MPI_ERROR;
    if (ignore(st)) return err;
    if (q->kind == RQ_DONE || q->kind == RQ_EXT) {
        *st = q->st;
        return err;
    }
    if (q->kind != RQ_RECV) { /* a send, or inactive */
        status_empty(st);
        st->cr_cancelled = q->kind == RQ_SEND && q->r->cancel == CR_CANCEL_DONE;
        return err;
    }
    const cr_status *cs = &q->r->st;
    mpi_comm *c = mpi_comm_get(q->comm);
    st->MPI_SOURCE = q->cancelled ? MPI_ANY_SOURCE : c ? mpi_comm_job_to_peer(c, cs->src) : cs->src;
    st->MPI_TAG = q->cancelled ? MPI_ANY_TAG : cs->tag;
    st->MPI_ERROR = err;
    st->cr_cancelled = q->cancelled;
    st->cr_bytes = q->cancelled ? 0 : (long long)cs->count;
    return err;
}

/* A generalized request's callbacks run without the engine lock: they may call
 * MPI (MPI_Status_set_elements, ...). The slot does not move meanwhile. */
static int greq_query(cr_job *job, mreq *q, MPI_Status *st)
{
    status_empty(st);
    if (!q->query) return MPI_SUCCESS;
    MPI_Grequest_query_function *fn = q->query; /* read under the lock */
    void *extra = q->extra;
    cr_unlock(job);
    int rc = fn(extra, st);
    cr_lock(job);
    return rc;
}

static int greq_free(cr_job *job, mreq *q)
{
    if (!q->gfree) return MPI_SUCCESS;
    MPI_Grequest_free_function *fn = q->gfree;
    void *extra = q->extra;
    cr_unlock(job);
    int rc = fn(extra);
    cr_lock(job);
    return rc;
}

/* End the operation a request carries: unpack a staged receive, release what
 * the operation holds. The slot stays. */
static void op_end(cr_job *job, mreq *q)
{
    if (q->kind == RQ_RECV && !q->cancelled && q->type >= 0 && mpi_chk_on(job, MPI_CHK_TYPES))
        mpi_check_recv(job, q->r->op, q->comm, mpi_type_at(q->type), q->count, &q->r->st);
    /* --check=buffers (not a request the program freed: no wait told it when) */
    if (q->cbuf && !q->freed && mpi_check_sum(q->cbuf, q->clen) != q->csum)
        mpi_check_buf_changed(job, q->call, q->comm, q->cpeer, q->ctag, q->clen,
                              q->kind == RQ_RECV);
    q->cbuf = NULL;
    if (q->kind == RQ_RECV && q->tmp && !q->cancelled) {
        if (mpi_type_at(q->type)->contig) /* --check=buffers' staging: one copy */
            memcpy(q->ubuf, q->tmp, q->r->st.count);
        else
            mpi_unpack_data(mpi_type_at(q->type), q->tmp, q->r->st.count, q->ubuf, q->count);
        mpi_chk_landed(job, q->ubuf, q->r->st.count); /* --check=buffers */
    }
    if (q->type >= 0) mpi_type_unref(q->type);
    if (q->r) cr_req_release(job, q->r);
    if (q->kind == RQ_EXT && !q->ps) q->ops->free(job, q->obj); /* else retire frees it */
    if (q->kind == RQ_RECV && mpi_chk_on(job, MPI_CHK_BUFFERS))
        mpi_check_unstage(job, q->tmp); /* recv_dest's, kept for the next receive */
    else
        free(q->tmp);
    q->tmp = NULL;
    q->r = NULL;
    q->type = -1;
    q->cancelled = q->xdone = false;
    q->obj = NULL;
}

static void retire(cr_job *job, mreq *q)
{
    if (q->kind != RQ_IDLE) op_end(job, q);
    if (q->ps) {
        if (q->ps->mode == M_EXT)
            q->ps->ops->free(job, q->ps->obj);
        else
            mpi_type_unref(q->ps->type);
        free(q->ps);
        q->ps = NULL;
    }
    q->kind = RQ_FREE;
    cr_idt_free(&job->mpi->p2p.reqs, q);
}

/* A request of the common kind: a send or receive, or one done when made, not
 * persistent, nothing staged, checked, cancelled or cut short, so that
 * completing it is a status and freeing its slots (finish_plain). */
static inline bool plain(const mreq *q)
{
    switch (q->kind) {
    case RQ_DONE:
        break;
    case RQ_SEND:
        if (q->r->cancel) return false;
        break;
    case RQ_RECV:
        if (q->cancelled || q->r->st.size > q->r->st.count || (q->r->st.size & q->umask))
            return false;
        break;
    default:
        return false;
    }
    return !q->ps && !q->tmp && !q->cbuf && q->type < 0 && !q->freed;
}

/* finish of a plain request: what recv_status, op_end and retire do for it. */
static inline void finish_plain(cr_job *job, mreq *q, MPI_Status *st, bool multi)
{
    if (!ignore(st)) {
        int keep = multi ? MPI_SUCCESS : st->MPI_ERROR;
        if (q->kind == RQ_RECV) {
            const cr_status *cs = &q->r->st;
            mpi_comm *c = mpi_comm_get(q->comm);
            st->MPI_SOURCE =
                c && (c->inter || c->ranks) ? mpi_comm_job_to_peer(c, cs->src) : cs->src;
            st->MPI_TAG = cs->tag;
            st->cr_cancelled = 0;
            st->cr_bytes = (long long)cs->count;
        } else if (q->kind == RQ_DONE) {
            *st = q->st;
        } else {
            status_empty(st);
        }
        st->MPI_ERROR = keep;
    }
    if (q->r) cr_req_release(job, q->r);
    q->r = NULL;
    q->kind = RQ_FREE;
    cr_idt_free(&job->mpi->p2p.reqs, q);
}

int mpi_recv_fail(cr_job *job, MPI_Comm comm, const char *call, int err, const cr_status *cs,
                  int src, uint32_t umask)
{
    if (err == MPI_ERR_TRUNCATE)
        return mpi_fail(job, comm, call, err,
                        "message of %zu bytes (tag %d from rank %d) is longer than the %zu-byte "
                        "receive buffer",
                        cs->size, cs->tag, src, cs->count);
    return mpi_fail(job, comm, call, err,
                    "message of %zu bytes (tag %d from rank %d) is not a whole number of the "
                    "receive datatype's %u-byte elements: the sender's datatype does not match "
                    "this receive's; send and receive the same types (MPI_BYTE on both sides "
                    "for raw bytes)",
                    cs->size, cs->tag, src, umask + 1);
}

/* Complete a done request: status, unpack, free the slot (a persistent request
 * becomes inactive and keeps its handle); its error code (truncation, or what
 * a generalized or other request's operation reported). The calls that
 * complete several requests (multi) set the status's MPI_ERROR; the others
 * set it only to an error and otherwise leave it as it was (MPI-3.1 §3.2.5:
 * their return code says it). */
static __attribute__((noinline)) int finish_any(cr_job *job, const char *call, mreq *q,
                                                MPI_Status *st, MPI_Request *h, bool multi)
{
    MPI_Status local;
    int err, keep = ignore(st) ? 0 : st->MPI_ERROR;
    if (q->kind == RQ_GREQ) {
        err = greq_query(job, q, &local);
        int frc = greq_free(job, q);
        if (!err) err = frc;
    } else {
        err = recv_status(q, &local);
    }
    if (!ignore(st)) *st = local;
    cr_status cs = q->r ? q->r->st : (cr_status){0};
    int src = local.MPI_SOURCE;
    uint8_t kind = q->kind;
    uint32_t umask = q->umask;
    const char *what = kind == RQ_EXT ? q->ops->what : "the generalized request";
    MPI_Comm comm = q->comm;
    if (q->ps) {
        op_end(job, q);
        q->kind = RQ_IDLE;
    } else {
        retire(job, q);
        if (h) *h = MPI_REQUEST_NULL;
    }
    if (err && kind == RQ_RECV)
        err = mpi_recv_fail(job, comm, call, err, &cs, src, umask);
    else if (err == MPI_ERR_TRUNCATE && kind == RQ_EXT)
        err = mpi_fail(job, comm, call, MPI_ERR_TRUNCATE,
                       "%s: a member sent more data than this rank's arguments make room for: the "
                       "ranks' counts and datatypes must describe the same amount of data",
                       what);
    else if (err)
        err = mpi_fail(job, comm, call, err, "%s completed with error %d", what, err);
    if (!ignore(st)) st->MPI_ERROR = multi || err ? err : keep;
    return err;
}

/* finish, the plain case inline (the wait and test forms here). */
static inline __attribute__((always_inline)) int
finish_in(cr_job *job, const char *call, mreq *q, MPI_Status *st, MPI_Request *h, bool multi)
{
    if (__builtin_expect(plain(q), 1)) {
        finish_plain(job, q, st, multi);
        if (h) *h = MPI_REQUEST_NULL;
        return MPI_SUCCESS;
    }
    return finish_any(job, call, q, st, h, multi);
}

int finish(cr_job *job, const char *call, mreq *q, MPI_Status *st, MPI_Request *h, bool multi)
{
    return finish_in(job, call, q, st, h, multi);
}

/* cr_wait_until's readiness over request slots: one of n (NULL ignored) is
 * done; *which is its index. */
typedef struct qset {
    cr_job *job;
    mreq **qs;
    int n, which;
} qset;

static bool qset_ready(void *arg)
{
    qset *s = arg;
    for (int i = 0; i < s->n; i++)
        if (s->qs[i] && req_done(s->job, s->qs[i])) {
            s->which = i;
            return true;
        }
    return false;
}

/* What the hang watchdog is told a wait is for. */
static const cr_req *qset_first(const qset *s)
{
    for (int i = 0; i < s->n; i++)
        if (s->qs[i] && s->qs[i]->r && !s->qs[i]->r->done) return s->qs[i]->r;
    return NULL;
}

/* The program polled requests hs[0..n) and none of them is done: what the
 * watchdog is told of a rank that only polls (engine.h: cr_poll_missed). A
 * generalized request is the program's own to complete, and a local one (a
 * nonblocking file access) completes without another rank: a poll that
 * includes one is not counted. */
static void polled(cr_job *job, const char *call, const MPI_Request *hs, int n)
{
    const mreq *q = NULL;
    for (int i = 0; i < n; i++) {
        const mreq *x = active(hs[i]);
        if (!x || x->kind == RQ_DONE) continue;
        if (x->kind == RQ_GREQ || (x->kind == RQ_EXT && x->ops->local)) return;
        if (!q) q = x;
    }
    if (!q) return;
    cr_wait w = {.call = call};
    if (q->kind == RQ_SEND || q->kind == RQ_RECV) w.req = q->r;
    const char *was = job->in_call_on;
    if (q->kind == RQ_EXT) job->in_call_on = q->ops->what;
    cr_poll_missed(job, call, &w);
    job->in_call_on = was;
}

/* Is q's operation known done without a call (a send or receive the engine
 * completed, or one done when made)? */
static inline bool settled(const mreq *q)
{
    return q->kind == RQ_DONE || ((q->kind == RQ_SEND || q->kind == RQ_RECV) && q->r->done);
}

/* Block until q's operation is done. */
void req_wait(cr_job *job, const char *call, mreq *q)
{
    if (q->kind == RQ_DONE) return;
    if (q->kind == RQ_SEND || q->kind == RQ_RECV) {
        cr_req_wait(job, q->r);
        return;
    }
    qset s = {job, &q, 1, -1};
    if (qset_ready(&s)) return;
    /* the watchdog's board says which operation: "MPI_Wait on MPI_Ibcast" */
    const char *was = job->in_call_on;
    if (q->kind == RQ_EXT) job->in_call_on = q->ops->what;
    cr_wait_until(job, call, qset_ready, &s, NULL);
    job->in_call_on = was;
}

/* ---- the hook of other request kinds (mpi_impl.h) ---------------------------------- */

int mpi_request_ext(cr_job *job, MPI_Comm comm, const mpi_ext_ops *ops, void *obj, MPI_Request *out)
{
    mreq *q = req_new(job, ops->what, RQ_EXT, comm, out);
    q->ops = ops;
    q->obj = obj;
    return MPI_SUCCESS;
}

int mpi_request_ext_persistent(cr_job *job, MPI_Comm comm, const mpi_ext_ops *ops,
                               int (*start)(cr_job *job, void *obj), void *obj, MPI_Request *out)
{
    mpersist *ps = malloc(sizeof *ps);
    if (!ps) cr_fatal(job, ops->what, "out of memory for a persistent request");
    *ps = (mpersist){.type = -1, .mode = M_EXT, .ops = ops, .start = start, .obj = obj};
    mreq *q = req_new(job, ops->what, RQ_IDLE, comm, out);
    q->ps = ps;
    return MPI_SUCCESS;
}

void *mpi_request_ext_obj(MPI_Request h, const mpi_ext_ops *ops, bool *active)
{
    mreq *q = h == MPI_REQUEST_NULL ? NULL : req_get(h);
    if (!q || !q->ps || q->ps->mode != M_EXT || q->ps->ops != ops) return NULL;
    *active = q->kind != RQ_IDLE;
    return q->ps->obj;
}

bool mpi_request_done(cr_job *job, MPI_Request h)
{
    mreq *q = req_get(h);
    return !q || q->kind == RQ_IDLE || req_done(job, q);
}

int mpi_request_take(cr_job *job, MPI_Request *h, MPI_Status *st)
{
    mreq *q = req_get(*h);
    int err = q && q->kind != RQ_IDLE ? recv_status(q, st) : MPI_SUCCESS;
    if (q && q->ps) {
        if (q->kind != RQ_IDLE) op_end(job, q);
        q->kind = RQ_IDLE;
    } else if (q) {
        retire(job, q);
        *h = MPI_REQUEST_NULL;
    }
    return err;
}

/* ---- wait and test ----------------------------------------------------------------- */

/* Look up *h for a wait/test: NULL with *rc = 0 for MPI_REQUEST_NULL. */
static mreq *req_arg(cr_job *job, const char *call, MPI_Request *h, int *rc)
{
    *rc = 0;
    if (!h) {
        *rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_REQUEST, "request pointer is NULL");
        return NULL;
    }
    if (*h == MPI_REQUEST_NULL) return NULL;
    mreq *q = req_get(*h);
    if (!q)
        *rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_REQUEST,
                       "request %#x is not active: already completed, freed, or never returned "
                       "by a nonblocking call",
                       (unsigned)*h);
    return q;
}

PMPI_WEAK(Wait);
int PMPI_Wait(MPI_Request *h, MPI_Status *st)
{
    const char *call = "MPI_Wait";
    cr_job *job = mpi_enter(call);
    int rc;
    mreq *q = req_arg(job, call, h, &rc);
    if (rc) return mpi_leave(job, rc);
    if (!q || q->kind == RQ_IDLE) {
        status_empty(st);
        return mpi_leave(job, MPI_SUCCESS);
    }
    req_wait(job, call, q);
    return mpi_leave(job, finish_in(job, call, q, st, h, false));
}

PMPI_WEAK(Test);
int PMPI_Test(MPI_Request *h, int *flag, MPI_Status *st)
{
    const char *call = "MPI_Test";
    cr_job *job = mpi_enter(call);
    int rc;
    mreq *q = req_arg(job, call, h, &rc);
    if (!rc && !flag) rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "flag is NULL");
    if (rc) return mpi_leave(job, rc);
    if (!q || q->kind == RQ_IDLE) {
        *flag = 1;
        status_empty(st);
        return mpi_leave(job, MPI_SUCCESS);
    }
    if (!req_done(job, q)) cr_progress(job);
    *flag = req_done(job, q);
    if (!*flag) {
        polled(job, call, h, 1);
        return mpi_leave(job, MPI_SUCCESS);
    }
    return mpi_leave(job, finish_in(job, call, q, st, h, false));
}

PMPI_WEAK(Request_get_status);
int PMPI_Request_get_status(MPI_Request h, int *flag, MPI_Status *st)
{
    const char *call = "MPI_Request_get_status";
    cr_job *job = mpi_enter(call);
    int rc;
    mreq *q = req_arg(job, call, &h, &rc);
    if (!rc && !flag) rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "flag is NULL");
    if (rc) return mpi_leave(job, rc);
    if (!q || q->kind == RQ_IDLE) {
        *flag = 1;
        status_empty(st);
        return mpi_leave(job, MPI_SUCCESS);
    }
    if (!req_done(job, q)) cr_progress(job);
    *flag = req_done(job, q);
    if (!*flag) polled(job, call, &h, 1);
    if (*flag && q->kind == RQ_GREQ) {
        MPI_Status local;
        rc = greq_query(job, q, &local);
        if (!ignore(st)) *st = local;
        if (rc) rc = mpi_fail(job, q->comm, call, rc, "the query function returned error %d", rc);
        return mpi_leave(job, rc);
    }
    if (*flag) recv_status(q, st);
    return mpi_leave(job, MPI_SUCCESS);
}

/* Check an array of requests; 0 or an error code. */
static int reqs_check(cr_job *job, const char *call, int n, const MPI_Request *hs)
{
    if (n < 0) return mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_COUNT, "count %d < 0", n);
    if (n && !hs)
        return mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_REQUEST, "request array is NULL");
    for (int i = 0; i < n; i++)
        if (hs[i] != MPI_REQUEST_NULL && !req_get(hs[i]))
            return mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_REQUEST,
                            "request %d (%#x) is not active", i, (unsigned)hs[i]);
    return 0;
}

static MPI_Status *st_at(MPI_Status *sts, int i)
{
    return ignore(sts) ? MPI_STATUS_IGNORE : &sts[i];
}

PMPI_WEAK(Waitall);
int PMPI_Waitall(int n, MPI_Request hs[], MPI_Status sts[])
{
    const char *call = "MPI_Waitall";
    cr_job *job = mpi_enter(call);
    int rc = reqs_check(job, call, n, hs);
    if (rc) return mpi_leave(job, rc);
    bool failed = false;
    for (int i = 0; i < n; i++) {
        mreq *q = active(hs[i]);
        if (!q) {
            status_empty(st_at(sts, i));
            continue;
        }
        if (!settled(q)) req_wait(job, call, q);
        if (finish_in(job, call, q, st_at(sts, i), &hs[i], true)) failed = true;
    }
    return mpi_leave(job, failed ? MPI_ERR_IN_STATUS : MPI_SUCCESS);
}

/* The active requests of hs (NULL elsewhere) in a new array; *k how many. */
static mreq **active_set(cr_job *job, const char *call, int n, const MPI_Request *hs, int *k)
{
    mreq **qs = malloc((size_t)(n ? n : 1) * sizeof *qs);
    if (!qs) cr_fatal(job, call, "out of memory");
    *k = 0;
    for (int i = 0; i < n; i++)
        if ((qs[i] = active(hs[i]))) ++*k;
    return qs;
}

static int any_common(const char *call, int n, MPI_Request *hs, int *index, int *flag,
                      MPI_Status *st)
{
    cr_job *job = mpi_enter(call);
    int rc = reqs_check(job, call, n, hs);
    if (!rc && !index) rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "index is NULL");
    if (rc) return mpi_leave(job, rc);
    int k;
    mreq **qs = active_set(job, call, n, hs, &k);
    if (!k) {
        free(qs);
        *index = MPI_UNDEFINED;
        if (flag) *flag = 1;
        status_empty(st);
        return mpi_leave(job, MPI_SUCCESS);
    }
    qset s = {job, qs, n, -1};
    if (!qset_ready(&s)) {
        if (flag) {
            cr_progress(job);
            qset_ready(&s);
        } else {
            cr_wait_until(job, call, qset_ready, &s, qset_first(&s));
        }
    }
    int done = s.which;
    free(qs);
    if (flag) *flag = done >= 0;
    if (done < 0) {
        polled(job, call, hs, n);
        *index = MPI_UNDEFINED;
        return mpi_leave(job, MPI_SUCCESS);
    }
    *index = done;
    return mpi_leave(job, finish_in(job, call, req_get(hs[done]), st, &hs[done], false));
}

PMPI_WEAK(Waitany);
int PMPI_Waitany(int n, MPI_Request hs[], int *index, MPI_Status *st)
{
    return any_common("MPI_Waitany", n, hs, index, NULL, st);
}

PMPI_WEAK(Testany);
int PMPI_Testany(int n, MPI_Request hs[], int *index, int *flag, MPI_Status *st)
{
    if (!flag) {
        cr_job *job = mpi_enter("MPI_Testany");
        return mpi_leave(job,
                         mpi_fail(job, MPI_COMM_WORLD, "MPI_Testany", MPI_ERR_ARG, "flag is NULL"));
    }
    return any_common("MPI_Testany", n, hs, index, flag, st);
}

static int some_common(const char *call, int n, MPI_Request *hs, int *outcount, int *idx,
                       MPI_Status *sts, bool wait)
{
    cr_job *job = mpi_enter(call);
    int rc = reqs_check(job, call, n, hs);
    if (!rc && (!outcount || (n && !idx)))
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "outcount or indices is NULL");
    if (rc) return mpi_leave(job, rc);
    int k;
    mreq **qs = active_set(job, call, n, hs, &k);
    if (!k) {
        free(qs);
        *outcount = MPI_UNDEFINED;
        return mpi_leave(job, MPI_SUCCESS);
    }
    qset s = {job, qs, n, -1};
    if (!qset_ready(&s)) {
        if (wait)
            cr_wait_until(job, call, qset_ready, &s, qset_first(&s));
        else
            cr_progress(job);
    }
    int m = 0;
    bool failed = false;
    for (int i = 0; i < n; i++) {
        if (!qs[i] || !req_done(job, qs[i])) continue;
        idx[m] = i;
        if (finish_in(job, call, qs[i], st_at(sts, m), &hs[i], true)) failed = true;
        m++;
    }
    if (!m) polled(job, call, hs, n);
    free(qs);
    *outcount = m;
    return mpi_leave(job, failed ? MPI_ERR_IN_STATUS : MPI_SUCCESS);
}

PMPI_WEAK(Waitsome);
int PMPI_Waitsome(int n, MPI_Request hs[], int *outcount, int idx[], MPI_Status sts[])
{
    return some_common("MPI_Waitsome", n, hs, outcount, idx, sts, true);
}

PMPI_WEAK(Testsome);
int PMPI_Testsome(int n, MPI_Request hs[], int *outcount, int idx[], MPI_Status sts[])
{
    return some_common("MPI_Testsome", n, hs, outcount, idx, sts, false);
}

/* MPI_Testall's and MPI_Request_get_status_all's start: the arguments
 * checked, one round of progress, *flag whether every active request is done. */
static int all_done(cr_job *job, const char *call, int n, const MPI_Request hs[], int *flag)
{
    int rc = reqs_check(job, call, n, hs);
    if (!rc && !flag) rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "flag is NULL");
    if (rc) return rc;
    cr_progress(job);
    *flag = 1;
    for (int i = 0; i < n && *flag; i++) {
        mreq *q = active(hs[i]);
        if (q && !req_done(job, q)) *flag = 0;
    }
    return MPI_SUCCESS;
}

PMPI_WEAK(Testall);
int PMPI_Testall(int n, MPI_Request hs[], int *flag, MPI_Status sts[])
{
    const char *call = "MPI_Testall";
    cr_job *job = mpi_enter(call);
    int rc = all_done(job, call, n, hs, flag);
    if (!rc && !*flag) polled(job, call, hs, n);
    if (rc || !*flag) return mpi_leave(job, rc);
    bool failed = false;
    for (int i = 0; i < n; i++) {
        mreq *q = active(hs[i]);
        if (!q) {
            status_empty(st_at(sts, i));
            continue;
        }
        if (finish_in(job, call, q, st_at(sts, i), &hs[i], true)) failed = true;
    }
    return mpi_leave(job, failed ? MPI_ERR_IN_STATUS : MPI_SUCCESS);
}

/* ---- MPI-4.1 MPI_Request_get_status_all/_any/_some ---------------------------------- */

/* The status of a done request, left as it is (not freed, not made inactive):
 * its error, reported on the request's communicator's handler. multi: the
 * status's MPI_ERROR is set whatever the error (the array forms), else only to
 * an error. */
static int peek(cr_job *job, const char *call, mreq *q, MPI_Status *st, int i, bool multi)
{
    MPI_Status local;
    int keep = ignore(st) ? 0 : st->MPI_ERROR;
    int err = q->kind == RQ_GREQ ? greq_query(job, q, &local) : recv_status(q, &local);
    if (err)
        err = mpi_fail(job, q->comm, call, err,
                       "request %d's operation completed with error %d (a receive longer than "
                       "its buffer: MPI_ERR_TRUNCATE)",
                       i, err);
    if (!ignore(st)) {
        *st = local;
        st->MPI_ERROR = multi || err ? err : keep;
    }
    return err;
}

PMPI_WEAK(Request_get_status_all);
int PMPI_Request_get_status_all(int n, const MPI_Request hs[], int *flag, MPI_Status sts[])
{
    const char *call = "MPI_Request_get_status_all";
    cr_job *job = mpi_enter(call);
    int rc = all_done(job, call, n, hs, flag);
    if (!rc && !*flag) polled(job, call, hs, n);
    if (rc || !*flag) return mpi_leave(job, rc);
    bool failed = false;
    for (int i = 0; i < n; i++) {
        mreq *q = active(hs[i]);
        if (!q)
            status_empty(st_at(sts, i));
        else if (peek(job, call, q, st_at(sts, i), i, true))
            failed = true;
    }
    return mpi_leave(job, failed ? MPI_ERR_IN_STATUS : MPI_SUCCESS);
}

PMPI_WEAK(Request_get_status_any);
int PMPI_Request_get_status_any(int n, const MPI_Request hs[], int *index, int *flag,
                                MPI_Status *st)
{
    const char *call = "MPI_Request_get_status_any";
    cr_job *job = mpi_enter(call);
    int rc = reqs_check(job, call, n, hs);
    if (!rc && (!index || !flag))
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "index or flag is NULL");
    if (rc) return mpi_leave(job, rc);
    int k;
    mreq **qs = active_set(job, call, n, hs, &k);
    qset s = {job, qs, n, -1};
    if (k && !qset_ready(&s)) {
        cr_progress(job);
        qset_ready(&s);
    }
    free(qs);
    *index = MPI_UNDEFINED;
    *flag = !k || s.which >= 0;
    if (!k) status_empty(st);
    if (!k || s.which < 0) return mpi_leave(job, MPI_SUCCESS);
    *index = s.which;
    return mpi_leave(job, peek(job, call, req_get(hs[s.which]), st, s.which, false));
}

PMPI_WEAK(Request_get_status_some);
int PMPI_Request_get_status_some(int n, const MPI_Request hs[], int *outcount, int idx[],
                                 MPI_Status sts[])
{
    const char *call = "MPI_Request_get_status_some";
    cr_job *job = mpi_enter(call);
    int rc = reqs_check(job, call, n, hs);
    if (!rc && (!outcount || (n && !idx)))
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "outcount or indices is NULL");
    if (rc) return mpi_leave(job, rc);
    int k;
    mreq **qs = active_set(job, call, n, hs, &k);
    qset s = {job, qs, n, -1};
    if (k && !qset_ready(&s)) cr_progress(job);
    int m = 0;
    bool failed = false;
    for (int i = 0; i < n; i++) {
        if (!qs[i] || !req_done(job, qs[i])) continue;
        idx[m] = i;
        if (peek(job, call, qs[i], st_at(sts, m), i, true)) failed = true;
        m++;
    }
    free(qs);
    *outcount = k ? m : MPI_UNDEFINED;
    return mpi_leave(job, failed ? MPI_ERR_IN_STATUS : MPI_SUCCESS);
}

PMPI_WEAK(Request_free);
int PMPI_Request_free(MPI_Request *h)
{
    const char *call = "MPI_Request_free";
    cr_job *job = mpi_enter(call);
    int rc;
    mreq *q = req_arg(job, call, h, &rc);
    if (!rc && !q)
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_REQUEST, "request is MPI_REQUEST_NULL");
    if (rc) return mpi_leave(job, rc);
    *h = MPI_REQUEST_NULL;
    if (q->kind == RQ_GREQ) {
        if (!q->gdone) { /* its free function runs at MPI_Grequest_complete */
            q->freed = true;
            return mpi_leave(job, MPI_SUCCESS);
        }
        rc = greq_free(job, q);
        retire(job, q);
        if (rc) rc = mpi_fail(job, MPI_COMM_WORLD, call, rc, "the free function returned %d", rc);
        return mpi_leave(job, rc);
    }
    if (q->kind == RQ_IDLE || req_done(job, q)) {
        retire(job, q);
    } else {
        q->freed = true; /* retired once complete (reap_freed) */
        job->mpi->p2p.nfreed++;
    }
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Cancel);
int PMPI_Cancel(MPI_Request *h)
{
    const char *call = "MPI_Cancel";
    cr_job *job = mpi_enter(call);
    int rc;
    mreq *q = req_arg(job, call, h, &rc);
    if (!rc && !q)
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_REQUEST, "request is MPI_REQUEST_NULL");
    if (!rc && q->kind == RQ_IDLE)
        rc = mpi_fail(job, q->comm, call, MPI_ERR_REQUEST,
                      "request %#x is an inactive persistent request: only an active one (after "
                      "MPI_Start) can be cancelled",
                      (unsigned)*h);
    if (rc) return mpi_leave(job, rc);
    /* A send is cancelled only while nothing of it has reached a receive: still
     * queued for credits, or a rendezvous message (every synchronous send is
     * one) that no receive has matched; the receiver settles that when it next
     * makes progress, and the wait/test then completes the send either way
     * (cr_cancel_send). An eager message already sent (at once, with no engine
     * request, or from the queue) and a buffered send (complete when copied) are
     * not recalled: MPI-3.1 §3.8.4 allows a cancel that does not take effect;
     * the send completes as usual and MPI_Test_cancelled says false. A
     * generalized request's cancel function is called (without the lock); an
     * other kind's hook, when it has one. */
    if (q->kind == RQ_RECV && cr_cancel_recv(job, q->r)) q->cancelled = true;
    if (q->kind == RQ_SEND) cr_cancel_send(job, q->r);
    if (q->kind == RQ_GREQ && q->gcancel) {
        MPI_Grequest_cancel_function *fn = q->gcancel;
        void *extra = q->extra;
        int complete = q->gdone;
        cr_unlock(job);
        rc = fn(extra, complete);
        cr_lock(job);
    }
    if (q->kind == RQ_EXT && q->ops->cancel) rc = q->ops->cancel(job, q->obj);
    if (rc) rc = mpi_fail(job, q->comm, call, rc, "the cancel function returned %d", rc);
    return mpi_leave(job, rc);
}

/* ---- generalized requests ------------------------------------------------------------ */

PMPI_WEAK(Grequest_start);
int PMPI_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                        MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                        MPI_Request *request)
{
    const char *call = "MPI_Grequest_start";
    cr_job *job = mpi_enter(call);
    if (!request)
        return mpi_leave(job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "request is NULL"));
    mreq *q = req_new(job, call, RQ_GREQ, MPI_COMM_WORLD, request);
    q->query = query_fn;
    q->gfree = free_fn;
    q->gcancel = cancel_fn;
    q->extra = extra_state;
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Grequest_complete);
int PMPI_Grequest_complete(MPI_Request request)
{
    const char *call = "MPI_Grequest_complete";
    cr_job *job = mpi_enter(call);
    mreq *q = req_lookup(request, true);
    if (!q || q->kind != RQ_GREQ)
        return mpi_leave(job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_REQUEST,
                                       "request %#x is not a live generalized request",
                                       (unsigned)request));
    if (q->gdone)
        return mpi_leave(job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_REQUEST,
                                       "request %#x is already complete", (unsigned)request));
    q->gdone = true;
    if (q->freed) { /* MPI_Request_free came first: only the free function is left */
        int rc = greq_free(job, q);
        retire(job, q);
        if (rc) rc = mpi_fail(job, MPI_COMM_WORLD, call, rc, "the free function returned %d", rc);
        return mpi_leave(job, rc);
    }
    cr_wake_self(job); /* a thread may sleep in a wait for it */
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Status_set_cancelled);
int PMPI_Status_set_cancelled(MPI_Status *st, int flag)
{
    if (ignore(st)) return MPI_ERR_ARG;
    st->cr_cancelled = flag != 0;
    return MPI_SUCCESS;
}

/* MPI-4.1 status accessors (get/set of MPI_SOURCE, MPI_TAG, MPI_ERROR) on a
 * status the program owns; a NULL status or result (or MPI_STATUS_IGNORE) is
 * MPI_ERR_ARG, reported on MPI_COMM_WORLD's handler. */
static int status_arg(const char *call, const void *st, const void *res)
{
    cr_job *job = mpi_enter(call);
    int rc = MPI_SUCCESS;
    if (!st || !res)
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG,
                      "the %s is NULL (or MPI_STATUS_IGNORE): pass a status the program owns",
                      st ? "result pointer" : "status");
    return mpi_leave(job, rc);
}

#define STATUS_ACCESSORS(Name, FIELD)                                                              \
    PMPI_WEAK(Status_get_##Name);                                                                  \
    int PMPI_Status_get_##Name(MPI_Status *st, int *v)                                             \
    {                                                                                              \
        int rc = status_arg("MPI_Status_get_" #Name, st, v);                                       \
        if (!rc) *v = st->FIELD;                                                                   \
        return rc;                                                                                 \
    }                                                                                              \
    PMPI_WEAK(Status_set_##Name);                                                                  \
    int PMPI_Status_set_##Name(MPI_Status *st, int v)                                              \
    {                                                                                              \
        int rc = status_arg("MPI_Status_set_" #Name, st, st);                                      \
        if (!rc) st->FIELD = v;                                                                    \
        return rc;                                                                                 \
    }
STATUS_ACCESSORS(source, MPI_SOURCE)
STATUS_ACCESSORS(tag, MPI_TAG)
STATUS_ACCESSORS(error, MPI_ERROR)

PMPI_WEAK(Test_cancelled);
int PMPI_Test_cancelled(const MPI_Status *st, int *flag)
{
    if (!st || st == MPI_STATUS_IGNORE || !flag) return MPI_ERR_ARG;
    *flag = st->cr_cancelled;
    return MPI_SUCCESS;
}

/* ---- status queries ---------------------------------------------------------------- */

static int count_common(const char *call, const MPI_Status *st, MPI_Datatype dt, int *count,
                        bool elements)
{
    cr_job *job = mpi_enter(call);
    mpi_type *t = NULL;
    int rc = mpi_type_check(job, MPI_COMM_WORLD, call, dt, &t);
    if (!rc && (ignore(st) || !count))
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "status or count is NULL/ignored");
    if (rc) return mpi_leave(job, rc);
    size_t bytes = (size_t)st->cr_bytes, n;
    if (elements) {
        n = mpi_elements(t, bytes);
    } else if (!t->size) {
        n = 0;
    } else if (bytes % t->size) {
        *count = MPI_UNDEFINED;
        return mpi_leave(job, MPI_SUCCESS);
    } else {
        n = bytes / t->size;
    }
    *count = n > INT_MAX ? MPI_UNDEFINED : (int)n;
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Get_count);
int PMPI_Get_count(const MPI_Status *st, MPI_Datatype dt, int *count)
{
    return count_common("MPI_Get_count", st, dt, count, false);
}

PMPI_WEAK(Get_elements);
int PMPI_Get_elements(const MPI_Status *st, MPI_Datatype dt, int *count)
{
    return count_common("MPI_Get_elements", st, dt, count, true);
}
