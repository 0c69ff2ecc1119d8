/* MPI point-to-point: the four send modes, receives, probes and matched probes,
 * persistent and generalized requests, every wait/test form, cancel,
 * buffered-send buffers and status queries; and the request table that other
 * request kinds (nonblocking collectives: mpi_request_ext) share.
 *
 * Translation: a communicator's point-to-point traffic uses its own engine
 * context and MPI tags are the engine's tags, so MPI_Send is cr_send, MPI_Irecv
 * is cr_irecv_call (truncation reported as MPI_ERR_TRUNCATE, not fatal), and
 * MPI_Ssend is cr_issend (always rendezvous: it completes only once a receive
 * has matched). Buffered sends copy the data and go out as ordinary sends; the
 * attached buffer's size bounds what may be outstanding. MPI_Mprobe takes the
 * message off the engine's unexpected queue (cr_mprobe) into an MPI_Message,
 * and MPI_Mrecv receives exactly that entry (cr_irecv_unexp).
 *
 * Invariants:
 *  - an MPI_Request names one slot of this file's id table (core/idtable.h:
 *    index + generation); slots live in chunks that never move, so a slot pointer stays valid while
 *    the engine lock is released (a wait, a user callback) and another thread
 *    (MPI_THREAD_MULTIPLE) makes requests meanwhile; the slot lives from
 *    the call that made the request until a wait/test completes it (or, after
 *    MPI_Request_free, until the operation has completed), so a completed or
 *    made-up request handle is reported, never reused;
 *  - a persistent request keeps its slot (and a reference to its datatype)
 *    from MPI_*_init to MPI_Request_free: MPI_Start makes it active (one
 *    operation, as the nonblocking call would), its completion makes it
 *    inactive (RQ_IDLE) again, and every wait/test form treats an inactive
 *    request like MPI_REQUEST_NULL (MPI-3.1 §3.9);
 *  - a generalized request completes only through MPI_Grequest_complete; its
 *    query and free callbacks run once, when a wait/test completes it (free
 *    alone when it was freed first), and every user callback runs without the
 *    engine lock;
 *  - a matched message (MPI_Message) is off every matching queue from the
 *    probe that returned it until MPI_Mrecv/MPI_Imrecv receives it, so no other
 *    receive, in any thread, can take it;
 *  - a receive into a non-contiguous datatype lands in a staging buffer and is
 *    unpacked exactly once, when its operation completes; the datatype stays
 *    alive (reference) until then even if the program frees it;
 *  - statuses report ranks of the request's communicator, not job ranks;
 *  - a cancelled send completes exactly once, either cancelled (the receiver
 *    never sees it) or as usual (MPI_Test_cancelled false): the engine decides
 *    (cr_cancel_send), and its status is read when the request completes. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

/* An MPI_Request and an MPI_Message are RQ_MARK | an id of this file's tables
 * (core/idtable.h: 30 bits, never 0 = MPI_REQUEST_NULL = MPI_MESSAGE_NULL; the
 * index of MPI_MESSAGE_NO_PROC, 0xfffff, is never issued). */
#define RQ_MARK 0x40000000u
#define RQ_REUSE_MIN 64  /* free request slots before one is reused (idtable.h) */
#define MSG_REUSE_MIN 16 /* and matched-message slots */

/* RQ_DONE: complete when made (status in st); RQ_IDLE: an inactive persistent
 * request; RQ_GREQ: generalized; RQ_EXT: another file's (mpi_ext_ops). */
enum { RQ_FREE = 0, RQ_SEND, RQ_RECV, RQ_DONE, RQ_IDLE, RQ_GREQ, RQ_EXT };

/* Send modes; M_RECV: a persistent receive. */
enum { M_STD, M_SYNC, M_READY, M_BUF, M_RECV, M_EXT };

/* What each MPI_Start of a persistent request does. M_EXT: another file's
 * persistent operation (mpi_request_ext_persistent): ops->start(obj), no type. */
typedef struct mpersist {
    void *buf;
    int count, type; /* type: index of the datatype (holds a reference) */
    int peer, tag, mode;
    const mpi_ext_ops *ops;
    int (*start)(cr_job *job, void *obj);
    void *obj;
} mpersist;

typedef struct mreq {
    cr_idslot id; /* its slot in P.reqs */
    uint8_t kind;
    bool freed;     /* MPI_Request_free while active: retire when complete */
    bool cancelled; /* receive: taken off the posted queue (a send: see q->r->cancel) */
    bool sent;      /* RQ_DONE: a send that completed at once (cr_send_now) */
    cr_req *r;
    char *tmp;  /* packed copy (send) or staging buffer (receive) */
    void *ubuf; /* receive: where to unpack */
    size_t count;
    int type;      /* receive with tmp: index of the datatype (holds a reference) */
    MPI_Comm comm; /* for errors and rank translation */
    MPI_Status st; /* RQ_DONE, RQ_EXT: the status to report */
    mpersist *ps;  /* persistent: the operation MPI_Start starts; else NULL */
    /* RQ_GREQ */
    bool gdone; /* MPI_Grequest_complete was called */
    MPI_Grequest_query_function *query;
    MPI_Grequest_free_function *gfree;
    MPI_Grequest_cancel_function *gcancel;
    void *extra;
    /* RQ_EXT */
    const mpi_ext_ops *ops;
    void *obj;
    bool xdone; /* ops->test said complete (st filled) */
} mreq;

/* A matched message: the engine's detached unexpected entry. */
typedef struct mmsg {
    cr_idslot id; /* its slot in P.msgs */
    cr_unexp *u;
    MPI_Comm comm;
} mmsg;

static struct {
    cr_idt reqs;
    int nfreed;
    cr_idt msgs; /* matched messages */
    /* buffered sends */
    mpi_bpool proc; /* MPI_Buffer_attach's (a communicator's: mpi_buf.c) */
    struct bsend {
        cr_req *r;
        char *copy;
        size_t cost;
        mpi_bpool *pool; /* whose space it holds */
    } * bs;
    int nbs, bscap;
} P;

void mpi_requests_init(void)
{
    cr_idt_init(&P.reqs, sizeof(mreq), RQ_REUSE_MIN);
    cr_idt_init(&P.msgs, sizeof(mmsg), MSG_REUSE_MIN);
}

static void status_empty(MPI_Status *st)
{
    if (st == MPI_STATUS_IGNORE || !st) return;
    st->MPI_SOURCE = MPI_ANY_SOURCE;
    st->MPI_TAG = MPI_ANY_TAG;
    st->MPI_ERROR = MPI_SUCCESS;
    st->cr_cancelled = 0;
    st->cr_bytes = 0;
}

static bool ignore(const MPI_Status *st)
{
    return st == MPI_STATUS_IGNORE || !st;
}

/* ---- argument checks ----------------------------------------------------------- */

static int check_buf(cr_job *job, MPI_Comm comm, const char *call, const void *buf, int count,
                     const mpi_type *t)
{
    if (count < 0) return mpi_fail(job, comm, call, MPI_ERR_COUNT, "count %d is negative", count);
    if (!buf && count > 0 && t->predef && t->size)
        return mpi_fail(job, comm, call, MPI_ERR_BUFFER, "buffer is NULL but count is %d", count);
    return 0;
}

static int check_peer(cr_job *job, MPI_Comm comm, const char *call, const mpi_comm *c, int peer,
                      bool any_ok, const char *what)
{
    if (peer == MPI_PROC_NULL || (any_ok && peer == MPI_ANY_SOURCE)) return 0;
    if (peer < 0 || peer >= comm_peer_size(c))
        return mpi_fail(job, comm, call, MPI_ERR_RANK,
                        "%s %d is invalid: ranks in this communicator%s are 0..%d", what, peer,
                        c->inter ? "'s remote group" : "", comm_peer_size(c) - 1);
    return 0;
}

static int check_tag(cr_job *job, MPI_Comm comm, const char *call, int tag, bool any_ok)
{
    if (tag == MPI_ANY_TAG && any_ok) return 0;
    if (tag < 0)
        return mpi_fail(job, comm, call, MPI_ERR_TAG, "tag %d is invalid: tags are 0..%d%s", tag,
                        INT32_MAX, any_ok ? " or MPI_ANY_TAG" : "");
    return 0;
}

/* Communicator, datatype, buffer, peer and tag of a send or receive. */
static int check_p2p(cr_job *job, const char *call, const void *buf, int count, MPI_Datatype dt,
                     int peer, int tag, MPI_Comm comm, bool recv, mpi_comm **c, mpi_type **t)
{
    int rc = mpi_comm_check(job, call, comm, c);
    /* Nothing moves to or from MPI_PROC_NULL: its datatype may be null too
     * (as MPICH and Open MPI accept; MPICH's pt2pt/recvnull). */
    if (!rc && peer == MPI_PROC_NULL && dt == MPI_DATATYPE_NULL)
        *t = mpi_type_get(MPI_BYTE);
    else if (!rc)
        rc = mpi_type_check(job, comm, call, dt, t);
    if (!rc) rc = check_buf(job, comm, call, buf, count, *t);
    if (!rc) rc = check_peer(job, comm, call, *c, peer, recv, recv ? "source" : "destination");
    if (!rc) rc = check_tag(job, comm, call, tag, recv);
    if (!rc && recv) rc = mpi_assert_wild(job, call, comm, *c, peer, tag);
    return rc;
}

int mpi_p2p_check(cr_job *job, const char *call, const void *buf, int count, MPI_Datatype dt,
                  int peer, int tag, MPI_Comm comm, bool recv, mpi_comm **c, mpi_type **t)
{
    return check_p2p(job, call, buf, count, dt, peer, tag, comm, recv, c, t);
}

/* ---- requests -------------------------------------------------------------------- */

static mreq *slot(int i)
{
    return cr_idt_at(&P.reqs, (uint32_t)i);
}

static void retire(cr_job *job, mreq *q);
static bool req_done(cr_job *job, mreq *q);

/* Retire the freed requests whose operation has completed (not generalized
 * ones: MPI_Grequest_complete retires those). */
static void reap_freed(cr_job *job)
{
    for (int i = 0; i < (int)P.reqs.n && P.nfreed; i++) {
        mreq *q = slot(i);
        if (q->kind != RQ_FREE && q->kind != RQ_GREQ && q->freed && req_done(job, q)) {
            P.nfreed--;
            retire(job, q);
        }
    }
}

static mreq *req_new(cr_job *job, const char *call, uint8_t kind, MPI_Comm comm,
                     MPI_Request *handle)
{
    if (P.nfreed) reap_freed(job);
    mreq *q = cr_idt_alloc(&P.reqs);
    if (!q && cr_idt_full(&P.reqs))
        cr_fatal(job, call, "more than %u requests pending; complete some first",
                 (unsigned)CR_ID_MAX_SLOTS);
    if (!q) cr_fatal(job, call, "out of memory for requests");
    *q = (mreq){.id = q->id, .kind = kind, .type = -1, .comm = comm};
    status_empty(&q->st);
    *handle = (MPI_Request)(RQ_MARK | cr_idt_id(q));
    return q;
}

/* The slot of handle h; NULL when h names none (freed ones only with freed_ok). */
static mreq *req_lookup(MPI_Request h, bool freed_ok)
{
    if (((unsigned)h & 0xc0000000u) != RQ_MARK) return NULL;
    mreq *q = cr_idt_get(&P.reqs, (unsigned)h & ~RQ_MARK);
    return q && (freed_ok || !q->freed) ? q : NULL;
}

static mreq *req_get(MPI_Request h)
{
    return req_lookup(h, false);
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

/* The request of handle h for the wait/test forms, after reqs_check: NULL for
 * MPI_REQUEST_NULL and an inactive persistent request. */
static mreq *active(MPI_Request h)
{
    mreq *q = h == MPI_REQUEST_NULL ? NULL : req_get(h);
    return q && q->kind != RQ_IDLE ? q : NULL;
}

/* Fill the status of a completed request (not a generalized one); its error. */
static int recv_status(mreq *q, MPI_Status *st)
{
    int err = MPI_SUCCESS;
    if (q->kind == RQ_RECV && !q->cancelled && q->r->st.size > q->r->st.count)
        err = MPI_ERR_TRUNCATE;
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
    if (q->kind == RQ_RECV && q->tmp && !q->cancelled)
        mpi_unpack_data(mpi_type_at(q->type), q->tmp, q->r->st.count, q->ubuf, q->count);
    if (q->type >= 0) mpi_type_unref(q->type);
    if (q->r) cr_req_release(job, q->r);
    if (q->kind == RQ_EXT && !q->ps) q->ops->free(job, q->obj);
    free(q->tmp);
    q->tmp = NULL;
    q->r = NULL;
    q->type = -1;
    q->cancelled = q->sent = q->xdone = false;
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
    cr_idt_free(&P.reqs, q);
}

/* Complete a done request: status, unpack, free the slot (a persistent request
 * becomes inactive and keeps its handle); its error code (truncation, or what
 * a generalized or other request's operation reported). The calls that
 * complete several requests (multi) set the status's MPI_ERROR; the others
 * set it only to an error and otherwise leave it as it was (MPI-3.1 §3.2.5:
 * their return code says it). */
static int finish(cr_job *job, const char *call, mreq *q, MPI_Status *st, MPI_Request *h,
                  bool multi)
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
    size_t got = q->r ? q->r->st.count : 0, had = q->r ? q->r->st.size : 0;
    int src = local.MPI_SOURCE, tag = local.MPI_TAG;
    uint8_t kind = q->kind;
    const char *what = kind == RQ_EXT ? q->ops->what : "the generalized request";
    MPI_Comm comm = q->comm;
    if (q->ps) {
        op_end(job, q);
        q->kind = RQ_IDLE;
    } else {
        retire(job, q);
        if (h) *h = MPI_REQUEST_NULL;
    }
    if (err == MPI_ERR_TRUNCATE && kind == RQ_RECV)
        err = mpi_fail(job, comm, call, MPI_ERR_TRUNCATE,
                       "message of %zu bytes (tag %d from rank %d) is longer than the %zu-byte "
                       "receive buffer",
                       had, tag, src, got);
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

/* Block until q's operation is done. */
static void req_wait(cr_job *job, const char *call, mreq *q)
{
    if (q->kind == RQ_SEND || q->kind == RQ_RECV) {
        cr_req_wait(job, q->r);
        return;
    }
    qset s = {job, &q, 1, -1};
    if (qset_ready(&s)) return;
    /* the watchdog's board says which operation: "MPI_Wait on MPI_Ibcast" */
    char on[64];
    const char *was = job->in_call;
    if (q->kind == RQ_EXT && was) {
        snprintf(on, sizeof on, "%s on %s", was, q->ops->what);
        job->in_call = on;
    }
    cr_wait_until(job, call, qset_ready, &s, NULL);
    job->in_call = was;
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

/* ---- posting --------------------------------------------------------------------- */

/* Bytes of 'count' instances and where they are: the buffer itself or a packed copy. */
static const void *send_data(cr_job *job, const char *call, const mpi_type *t, const void *buf,
                             int count, size_t *len, char **tmp)
{
    *len = (size_t)count * t->size;
    *tmp = NULL;
    if (t->contig) return buf;
    *tmp = malloc(*len ? *len : 1);
    if (!*tmp) cr_fatal(job, call, "out of memory for %zu bytes of packed data", *len);
    mpi_pack_data(t, buf, (size_t)count, *tmp);
    return *tmp;
}

static void bsend_reap(cr_job *job)
{
    int k = 0;
    for (int i = 0; i < P.nbs; i++) {
        if (P.bs[i].r->done) {
            cr_req_release(job, P.bs[i].r);
            free(P.bs[i].copy);
            P.bs[i].pool->used -= P.bs[i].cost;
        } else {
            P.bs[k++] = P.bs[i];
        }
    }
    P.nbs = k;
}

static int bsend_start(cr_job *job, const char *call, MPI_Comm comm, const mpi_type *t,
                       const void *buf, int count, int jd, uint16_t ctx, int tag)
{
    bsend_reap(job);
    size_t len = (size_t)count * t->size, cost = len + MPI_BSEND_OVERHEAD;
    mpi_bpool *b = mpi_bpool_of(comm);
    if (!b) b = &P.proc;
    if (!b->buf)
        return mpi_fail(job, comm, call, MPI_ERR_BUFFER,
                        "no buffer is attached: call MPI_Buffer_attach (or "
                        "MPI_Comm_attach_buffer) before buffered sends");
    /* Space held by messages already delivered comes back only when their
     * completion (a rendezvous send's FIN) has been read: a rank that waited
     * meanwhile only in collectives of the shared area never read it. Read what
     * has arrived before calling the buffer full. */
    while (b->used + cost > b->size && P.nbs && cr_progress(job) > 0) bsend_reap(job);
    if (b->used + cost > b->size)
        return mpi_fail(job, comm, call, MPI_ERR_BUFFER,
                        "%zu bytes (+%d overhead) do not fit the attached buffer: %zu of %zu "
                        "bytes are free",
                        len, MPI_BSEND_OVERHEAD, b->size - b->used, b->size);
    char *copy = malloc(len ? len : 1);
    if (!copy) cr_fatal(job, call, "out of memory for a buffered send of %zu bytes", len);
    mpi_pack_data(t, buf, (size_t)count, copy);
    if (P.nbs == P.bscap) {
        int cap = P.bscap ? 2 * P.bscap : 16;
        struct bsend *n = realloc(P.bs, (size_t)cap * sizeof *n);
        if (!n) cr_fatal(job, call, "out of memory");
        P.bs = n;
        P.bscap = cap;
    }
    P.bs[P.nbs++] = (struct bsend){cr_isend(job, call, jd, ctx, tag, copy, len), copy, cost, b};
    b->used += cost;
    return 0;
}

/* Start a nonblocking send that is not buffered into slot q (checks done). */
static void isend_start(cr_job *job, const char *call, mreq *q, const mpi_comm *c,
                        const mpi_type *t, const void *buf, int count, int dest, int tag, int mode)
{
    if (dest == MPI_PROC_NULL) {
        q->kind = RQ_DONE;
        status_empty(&q->st);
        q->st.MPI_SOURCE = MPI_PROC_NULL;
        return;
    }
    int jd = comm_peer_to_job(c, dest);
    size_t len;
    char *tmp;
    const void *data = send_data(job, call, t, buf, count, &len, &tmp);
    if (mode != M_SYNC && cr_send_now(job, jd, c->ctx, tag, data, len)) { /* eager: done */
        free(tmp);
        q->kind = RQ_DONE;
        status_empty(&q->st);
        q->sent = true;
        return;
    }
    q->kind = RQ_SEND;
    q->tmp = tmp;
    q->r = mode == M_SYNC ? cr_issend(job, call, jd, c->ctx, tag, data, len)
                          : cr_isend(job, call, jd, c->ctx, tag, data, len);
}

static int send_common(const char *call, const void *buf, int count, MPI_Datatype dt, int dest,
                       int tag, MPI_Comm comm, int mode, MPI_Request *req)
{
    cr_job *job = mpi_enter(call);
    mpi_comm *c = NULL;
    mpi_type *t = NULL;
    int rc = check_p2p(job, call, buf, count, dt, dest, tag, comm, false, &c, &t);
    if (!rc && req == NULL && call[4] == 'I')
        rc = mpi_fail(job, comm, call, MPI_ERR_REQUEST, "request is NULL");
    if (rc) return mpi_leave(job, rc);
    if (mode == M_BUF && dest != MPI_PROC_NULL) {
        rc = bsend_start(job, call, comm, t, buf, count, comm_peer_to_job(c, dest), c->ctx, tag);
        if (!rc && req) req_new(job, call, RQ_DONE, comm, req);
        return mpi_leave(job, rc);
    }
    if (req) {
        mreq *q = req_new(job, call, RQ_DONE, comm, req);
        isend_start(job, call, q, c, t, buf, count, dest, tag, mode);
        return mpi_leave(job, MPI_SUCCESS);
    }
    if (dest == MPI_PROC_NULL) return mpi_leave(job, MPI_SUCCESS);
    int jd = comm_peer_to_job(c, dest);
    size_t len;
    char *tmp;
    const void *data = send_data(job, call, t, buf, count, &len, &tmp);
    if (mode == M_SYNC) {
        cr_ssend(job, call, jd, c->ctx, tag, data, len);
    } else {
        cr_send(job, call, jd, c->ctx, tag, data, len);
    }
    free(tmp);
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Send);
int PMPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    return send_common("MPI_Send", buf, count, dt, dest, tag, comm, M_STD, NULL);
}

PMPI_WEAK(Ssend);
int PMPI_Ssend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    return send_common("MPI_Ssend", buf, count, dt, dest, tag, comm, M_SYNC, NULL);
}

PMPI_WEAK(Rsend);
int PMPI_Rsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    return send_common("MPI_Rsend", buf, count, dt, dest, tag, comm, M_READY, NULL);
}

PMPI_WEAK(Bsend);
int PMPI_Bsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    return send_common("MPI_Bsend", buf, count, dt, dest, tag, comm, M_BUF, NULL);
}

PMPI_WEAK(Isend);
int PMPI_Isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
               MPI_Request *req)
{
    return send_common("MPI_Isend", buf, count, dt, dest, tag, comm, M_STD, req);
}

PMPI_WEAK(Issend);
int PMPI_Issend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                MPI_Request *req)
{
    return send_common("MPI_Issend", buf, count, dt, dest, tag, comm, M_SYNC, req);
}

PMPI_WEAK(Irsend);
int PMPI_Irsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                MPI_Request *req)
{
    return send_common("MPI_Irsend", buf, count, dt, dest, tag, comm, M_READY, req);
}

PMPI_WEAK(Ibsend);
int PMPI_Ibsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                MPI_Request *req)
{
    return send_common("MPI_Ibsend", buf, count, dt, dest, tag, comm, M_BUF, req);
}

static cr_sel make_sel(const mpi_comm *c, int source, int tag)
{
    cr_sel s = {.src = source == MPI_ANY_SOURCE ? CR_ANY_SOURCE : comm_peer_to_job(c, source),
                .ctx = c->ctx,
                .tag_mode = tag == MPI_ANY_TAG ? CR_TAG_ANY : CR_TAG_EXACT,
                .tag = tag};
    return s;
}

/* Where a receive into slot q lands: the buffer itself, or for a
 * non-contiguous datatype a staging buffer unpacked when the operation ends
 * (q then holds a reference to the datatype). */
static void *recv_dest(cr_job *job, const char *call, mreq *q, mpi_type *t, void *buf, int count,
                       size_t *cap)
{
    *cap = (size_t)count * t->size;
    if (t->contig) return buf;
    char *tmp = malloc(*cap ? *cap : 1);
    if (!tmp) cr_fatal(job, call, "out of memory for %zu bytes of staging", *cap);
    q->tmp = tmp;
    q->ubuf = buf;
    q->count = (size_t)count;
    q->type = t->idx;
    t->refs++;
    return tmp;
}

/* Start a receive (after the checks) in slot q. */
static void recv_start(cr_job *job, const char *call, mreq *q, const mpi_comm *c, mpi_type *t,
                       void *buf, int count, int source, int tag)
{
    if (source == MPI_PROC_NULL) {
        q->kind = RQ_DONE;
        status_empty(&q->st);
        q->st.MPI_SOURCE = MPI_PROC_NULL;
        return;
    }
    cr_sel s = make_sel(c, source, tag);
    size_t cap;
    void *dst = recv_dest(job, call, q, t, buf, count, &cap);
    q->kind = RQ_RECV;
    q->r = cr_irecv_call(job, call, &s, dst, cap, true, NULL, NULL);
}

/* Post a receive (after the checks) into a new request slot. */
static mreq *recv_post(cr_job *job, const char *call, void *buf, int count, mpi_type *t, int source,
                       int tag, MPI_Comm comm, mpi_comm *c, MPI_Request *h)
{
    mreq *q = req_new(job, call, RQ_DONE, comm, h);
    recv_start(job, call, q, c, t, buf, count, source, tag);
    return q;
}

PMPI_WEAK(Irecv);
int PMPI_Irecv(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm,
               MPI_Request *req)
{
    const char *call = "MPI_Irecv";
    cr_job *job = mpi_enter(call);
    mpi_comm *c = NULL;
    mpi_type *t = NULL;
    int rc = check_p2p(job, call, buf, count, dt, source, tag, comm, true, &c, &t);
    if (!rc && !req) rc = mpi_fail(job, comm, call, MPI_ERR_REQUEST, "request is NULL");
    if (rc) return mpi_leave(job, rc);
    recv_post(job, call, buf, count, t, source, tag, comm, c, req);
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Recv);
int PMPI_Recv(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm,
              MPI_Status *st)
{
    const char *call = "MPI_Recv";
    cr_job *job = mpi_enter(call);
    mpi_comm *c = NULL;
    mpi_type *t = NULL;
    int rc = check_p2p(job, call, buf, count, dt, source, tag, comm, true, &c, &t);
    if (rc) return mpi_leave(job, rc);
    if (t->contig && source != MPI_PROC_NULL) { /* the engine's blocking receive: no request */
        cr_sel s = make_sel(c, source, tag);
        cr_status cs;
        cr_recv_trunc(job, call, &s, buf, (size_t)count * t->size, true, &cs);
        MPI_Status local = {.MPI_SOURCE = mpi_comm_job_to_peer(c, cs.src),
                            .MPI_TAG = cs.tag,
                            .MPI_ERROR = ignore(st) ? 0 : st->MPI_ERROR, /* left as it was */
                            .cr_bytes = (long long)cs.count};
        int err = MPI_SUCCESS;
        if (cs.size > cs.count)
            err = mpi_fail(job, comm, call, MPI_ERR_TRUNCATE,
                           "message of %zu bytes (tag %d from rank %d) is longer than "
                           "the %zu-byte receive buffer",
                           cs.size, cs.tag, local.MPI_SOURCE, cs.count);
        if (err) local.MPI_ERROR = err;
        if (!ignore(st)) *st = local;
        return mpi_leave(job, err);
    }
    MPI_Request h;
    mreq *q = recv_post(job, call, buf, count, t, source, tag, comm, c, &h);
    if (q->r) cr_req_wait(job, q->r);
    return mpi_leave(job, finish(job, call, q, st, NULL, false));
}

static bool overlap(const void *a, size_t la, const void *b, size_t lb)
{
    const char *x = a, *y = b;
    return la && lb && x < y + lb && y < x + la;
}

PMPI_WEAK(Sendrecv);
int PMPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf,
                  int rcount, MPI_Datatype rtype, int source, int rtag, MPI_Comm comm,
                  MPI_Status *st)
{
    const char *call = "MPI_Sendrecv";
    cr_job *job = mpi_enter(call);
    mpi_comm *c = NULL;
    mpi_type *ts = NULL, *tr = NULL;
    int rc = check_p2p(job, call, sbuf, scount, stype, dest, stag, comm, false, &c, &ts);
    if (!rc) rc = check_p2p(job, call, rbuf, rcount, rtype, source, rtag, comm, true, &c, &tr);
    if (!rc && ts->contig && tr->contig &&
        overlap(sbuf, (size_t)scount * ts->size, rbuf, (size_t)rcount * tr->size))
        rc = mpi_fail(job, comm, call, MPI_ERR_BUFFER,
                      "send and receive buffers overlap: use MPI_Sendrecv_replace");
    if (rc) return mpi_leave(job, rc);
    MPI_Request h;
    mreq *q = recv_post(job, call, rbuf, rcount, tr, source, rtag, comm, c, &h);
    if (dest != MPI_PROC_NULL) {
        size_t len;
        char *tmp;
        const void *data = send_data(job, call, ts, sbuf, scount, &len, &tmp);
        cr_send(job, call, comm_peer_to_job(c, dest), c->ctx, stag, data, len);
        free(tmp);
    }
    if (q->r) cr_req_wait(job, q->r);
    return mpi_leave(job, finish(job, call, q, st, NULL, false));
}

PMPI_WEAK(Sendrecv_replace);
int PMPI_Sendrecv_replace(void *buf, int count, MPI_Datatype dt, int dest, int stag, int source,
                          int rtag, MPI_Comm comm, MPI_Status *st)
{
    const char *call = "MPI_Sendrecv_replace";
    cr_job *job = mpi_enter(call);
    mpi_comm *c = NULL;
    mpi_type *t = NULL;
    int rc = check_p2p(job, call, buf, count, dt, dest, stag, comm, false, &c, &t);
    if (!rc) rc = check_p2p(job, call, buf, count, dt, source, rtag, comm, true, &c, &t);
    if (rc) return mpi_leave(job, rc);
    /* Send from a packed copy, receive in place. */
    size_t len = (size_t)count * t->size;
    char *copy = malloc(len ? len : 1);
    if (!copy) cr_fatal(job, call, "out of memory for %zu bytes", len);
    mpi_pack_data(t, buf, (size_t)count, copy);
    MPI_Request h;
    mreq *q = recv_post(job, call, buf, count, t, source, rtag, comm, c, &h);
    if (dest != MPI_PROC_NULL)
        cr_send(job, call, comm_peer_to_job(c, dest), c->ctx, stag, copy, len);
    free(copy);
    if (q->r) cr_req_wait(job, q->r);
    return mpi_leave(job, finish(job, call, q, st, NULL, false));
}

PMPI_WEAK(Buffer_attach);
int PMPI_Buffer_attach(void *buffer, int size)
{
    const char *call = "MPI_Buffer_attach";
    cr_job *job = mpi_enter(call);
    if (size < 0 || (!buffer && size))
        return mpi_leave(job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_BUFFER,
                                       "buffer %p of %d bytes is invalid", buffer, size));
    if (P.proc.buf)
        return mpi_leave(job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_BUFFER,
                                       "a buffer is already attached: detach it first"));
    mpi_bpool_attach(&P.proc, buffer, size);
    return mpi_leave(job, MPI_SUCCESS);
}

bool mpi_bsends_done(void *pool)
{
    for (int i = 0; i < P.nbs; i++)
        if ((!pool || P.bs[i].pool == pool) && !P.bs[i].r->done) return false;
    return true;
}

mpi_bpool *mpi_bpool_process(cr_job *job)
{
    bsend_reap(job);
    return &P.proc;
}

PMPI_WEAK(Buffer_detach);
int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
    const char *call = "MPI_Buffer_detach";
    cr_job *job = mpi_enter(call);
    if (!buffer_addr || !size)
        return mpi_leave(
            job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "buffer_addr or size is NULL"));
    if (!P.proc.buf)
        return mpi_leave(
            job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_BUFFER, "no buffer is attached"));
    /* Every buffered message must be delivered before the buffer is returned. */
    cr_wait_until(job, call, mpi_bsends_done, &P.proc, P.nbs ? P.bs[0].r : NULL);
    bsend_reap(job);
    mpi_bpool_detach(&P.proc, buffer_addr, size);
    return mpi_leave(job, MPI_SUCCESS);
}

/* ---- probe ----------------------------------------------------------------------- */

static int probe_common(const char *call, int source, int tag, MPI_Comm comm, int *flag,
                        MPI_Status *st)
{
    cr_job *job = mpi_enter(call);
    mpi_comm *c = NULL;
    int rc = mpi_comm_check(job, call, comm, &c);
    if (!rc) rc = check_peer(job, comm, call, c, source, true, "source");
    if (!rc) rc = check_tag(job, comm, call, tag, true);
    if (!rc) rc = mpi_assert_wild(job, call, comm, c, source, tag);
    if (!rc && call[4] == 'I' && !flag) rc = mpi_fail(job, comm, call, MPI_ERR_ARG, "flag is NULL");
    if (rc) return mpi_leave(job, rc);
    if (source == MPI_PROC_NULL) {
        if (flag) *flag = 1;
        if (!ignore(st)) {
            int keep = st->MPI_ERROR; /* left as it was */
            status_empty(st);
            st->MPI_SOURCE = MPI_PROC_NULL;
            st->MPI_ERROR = keep;
        }
        return mpi_leave(job, MPI_SUCCESS);
    }
    cr_sel s = make_sel(c, source, tag);
    cr_status cs;
    bool found = cr_probe(job, &s, flag == NULL, &cs);
    if (flag) *flag = found;
    if (found && !ignore(st)) {
        st->MPI_SOURCE = mpi_comm_job_to_peer(mpi_comm_get(comm), cs.src);
        st->MPI_TAG = cs.tag; /* (MPI_ERROR is left as it was) */
        st->cr_cancelled = 0;
        st->cr_bytes = (long long)cs.size;
    }
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Probe);
int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *st)
{
    return probe_common("MPI_Probe", source, tag, comm, NULL, st);
}

PMPI_WEAK(Iprobe);
int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *st)
{
    return probe_common("MPI_Iprobe", source, tag, comm, flag, st);
}

/* ---- matched probe ----------------------------------------------------------------- */

static MPI_Message msg_new(cr_job *job, const char *call, cr_unexp *u, MPI_Comm comm)
{
    mmsg *m = cr_idt_alloc(&P.msgs);
    if (!m && cr_idt_full(&P.msgs))
        cr_fatal(job, call, "more than %u matched messages not yet received (MPI_Mrecv)",
                 (unsigned)CR_ID_MAX_SLOTS);
    if (!m) cr_fatal(job, call, "out of memory for matched messages");
    m->u = u;
    m->comm = comm;
    return (MPI_Message)(RQ_MARK | cr_idt_id(m));
}

static mmsg *msg_get(MPI_Message h)
{
    if (((unsigned)h & 0xc0000000u) != RQ_MARK) return NULL;
    return cr_idt_get(&P.msgs, (unsigned)h & ~RQ_MARK);
}

static void msg_free(mmsg *m)
{
    m->u = NULL;
    cr_idt_free(&P.msgs, m);
}

static int mprobe_common(const char *call, int source, int tag, MPI_Comm comm, int *flag,
                         MPI_Message *msg, MPI_Status *st)
{
    cr_job *job = mpi_enter(call);
    mpi_comm *c = NULL;
    int rc = mpi_comm_check(job, call, comm, &c);
    if (!rc) rc = check_peer(job, comm, call, c, source, true, "source");
    if (!rc) rc = check_tag(job, comm, call, tag, true);
    if (!rc) rc = mpi_assert_wild(job, call, comm, c, source, tag);
    if (!rc && call[4] == 'I' && !flag) rc = mpi_fail(job, comm, call, MPI_ERR_ARG, "flag is NULL");
    if (!rc && !msg) rc = mpi_fail(job, comm, call, MPI_ERR_ARG, "message is NULL");
    if (rc) return mpi_leave(job, rc);
    if (source == MPI_PROC_NULL) {
        if (flag) *flag = 1;
        *msg = MPI_MESSAGE_NO_PROC;
        if (!ignore(st)) {
            int keep = st->MPI_ERROR; /* left as it was */
            status_empty(st);
            st->MPI_SOURCE = MPI_PROC_NULL;
            st->MPI_ERROR = keep;
        }
        return mpi_leave(job, MPI_SUCCESS);
    }
    cr_sel s = make_sel(c, source, tag);
    cr_status cs;
    cr_unexp *u = NULL;
    bool found = cr_mprobe(job, &s, flag == NULL, &cs, &u);
    if (flag) *flag = found;
    if (!found) return mpi_leave(job, MPI_SUCCESS);
    *msg = msg_new(job, call, u, comm);
    if (!ignore(st)) {
        c = mpi_comm_get(comm); /* (the table may have grown while this thread waited) */
        st->MPI_SOURCE = c ? mpi_comm_job_to_peer(c, cs.src) : cs.src;
        st->MPI_TAG = cs.tag; /* (MPI_ERROR is left as it was) */
        st->cr_cancelled = 0;
        st->cr_bytes = (long long)cs.size;
    }
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Mprobe);
int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    return mprobe_common("MPI_Mprobe", source, tag, comm, NULL, message, status);
}

PMPI_WEAK(Improbe);
int PMPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                 MPI_Status *status)
{
    return mprobe_common("MPI_Improbe", source, tag, comm, flag, message, status);
}

/* MPI_Mrecv (req NULL: wait and fill st) and MPI_Imrecv. */
static int mrecv_common(const char *call, void *buf, int count, MPI_Datatype dt, MPI_Message *msg,
                        MPI_Request *req, MPI_Status *st)
{
    cr_job *job = mpi_enter(call);
    bool nb = call[4] == 'I';
    if (!msg || (nb && !req))
        return mpi_leave(job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "%s is NULL",
                                       msg ? "request" : "message"));
    mmsg *m = NULL;
    if (*msg != MPI_MESSAGE_NO_PROC && !(m = msg_get(*msg)))
        return mpi_leave(job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_REQUEST,
                                       "message %#x is not a matched message: MPI_MESSAGE_NULL, "
                                       "already received, or never returned by "
                                       "MPI_Mprobe/MPI_Improbe",
                                       (unsigned)*msg));
    MPI_Comm comm = m ? m->comm : MPI_COMM_WORLD;
    mpi_comm *c = mpi_comm_get(comm);
    mpi_type *t = NULL;
    int rc = c ? 0
               : mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_COMM,
                          "the message's communicator has been freed");
    if (!rc) rc = mpi_type_check(job, comm, call, dt, &t);
    if (!rc) rc = check_buf(job, comm, call, buf, count, t);
    if (rc) return mpi_leave(job, rc);
    MPI_Request h;
    mreq *q = req_new(job, call, RQ_DONE, comm, nb ? req : &h);
    if (!m) { /* MPI_MESSAGE_NO_PROC: as a receive from MPI_PROC_NULL */
        q->st.MPI_SOURCE = MPI_PROC_NULL;
    } else {
        size_t cap;
        void *dst = recv_dest(job, call, q, t, buf, count, &cap);
        q->kind = RQ_RECV;
        q->r = cr_irecv_unexp(job, call, m->u, dst, cap, true);
        msg_free(m);
    }
    *msg = MPI_MESSAGE_NULL;
    if (nb) return mpi_leave(job, MPI_SUCCESS);
    req_wait(job, call, q);
    return mpi_leave(job, finish(job, call, q, st, NULL, false));
}

PMPI_WEAK(Message_c2f);
MPI_Fint PMPI_Message_c2f(MPI_Message message)
{
    return (MPI_Fint)message; /* handles are ints in both languages */
}

PMPI_WEAK(Message_f2c);
MPI_Message PMPI_Message_f2c(MPI_Fint message)
{
    return (MPI_Message)message;
}

PMPI_WEAK(Mrecv);
int PMPI_Mrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *message, MPI_Status *status)
{
    return mrecv_common("MPI_Mrecv", buf, count, dt, message, NULL, status);
}

PMPI_WEAK(Imrecv);
int PMPI_Imrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *message, MPI_Request *request)
{
    return mrecv_common("MPI_Imrecv", buf, count, dt, message, request, MPI_STATUS_IGNORE);
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
    return mpi_leave(job, finish(job, call, q, st, h, false));
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
    if (!*flag) return mpi_leave(job, MPI_SUCCESS);
    return mpi_leave(job, finish(job, call, q, st, h, false));
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
static int reqs_check(cr_job *job, const char *call, int n, MPI_Request *hs)
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
        req_wait(job, call, q);
        if (finish(job, call, q, st_at(sts, i), &hs[i], true)) failed = true;
    }
    return mpi_leave(job, failed ? MPI_ERR_IN_STATUS : MPI_SUCCESS);
}

/* The active requests of hs (NULL elsewhere) in a new array; *k how many. */
static mreq **active_set(cr_job *job, const char *call, int n, MPI_Request *hs, int *k)
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
        *index = MPI_UNDEFINED;
        return mpi_leave(job, MPI_SUCCESS);
    }
    *index = done;
    return mpi_leave(job, finish(job, call, req_get(hs[done]), st, &hs[done], false));
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
        if (finish(job, call, qs[i], st_at(sts, m), &hs[i], true)) failed = true;
        m++;
    }
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

PMPI_WEAK(Testall);
int PMPI_Testall(int n, MPI_Request hs[], int *flag, MPI_Status sts[])
{
    const char *call = "MPI_Testall";
    cr_job *job = mpi_enter(call);
    int rc = reqs_check(job, call, n, hs);
    if (!rc && !flag) rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "flag is NULL");
    if (rc) return mpi_leave(job, rc);
    cr_progress(job);
    *flag = 1;
    for (int i = 0; i < n && *flag; i++) {
        mreq *q = active(hs[i]);
        if (q && !req_done(job, q)) *flag = 0;
    }
    if (!*flag) return mpi_leave(job, MPI_SUCCESS);
    bool failed = false;
    for (int i = 0; i < n; i++) {
        mreq *q = active(hs[i]);
        if (!q) {
            status_empty(st_at(sts, i));
            continue;
        }
        if (finish(job, call, q, st_at(sts, i), &hs[i], true)) failed = true;
    }
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
        P.nfreed++;
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

/* ---- persistent requests ------------------------------------------------------------- */

static int init_common(const char *call, const void *buf, int count, MPI_Datatype dt, int peer,
                       int tag, MPI_Comm comm, int mode, MPI_Request *req)
{
    cr_job *job = mpi_enter(call);
    mpi_comm *c = NULL;
    mpi_type *t = NULL;
    bool recv = mode == M_RECV;
    int rc = check_p2p(job, call, buf, count, dt, peer, tag, comm, recv, &c, &t);
    if (!rc && !req) rc = mpi_fail(job, comm, call, MPI_ERR_REQUEST, "request is NULL");
    if (rc) return mpi_leave(job, rc);
    mpersist *ps = malloc(sizeof *ps);
    if (!ps) cr_fatal(job, call, "out of memory for a persistent request");
    *ps = (mpersist){
        .buf = (void *)buf, .count = count, .type = t->idx, .peer = peer, .tag = tag, .mode = mode};
    t->refs++;
    mreq *q = req_new(job, call, RQ_IDLE, comm, req);
    q->ps = ps;
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Send_init);
int PMPI_Send_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                   MPI_Request *req)
{
    return init_common("MPI_Send_init", buf, count, dt, dest, tag, comm, M_STD, req);
}

PMPI_WEAK(Bsend_init);
int PMPI_Bsend_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                    MPI_Request *req)
{
    return init_common("MPI_Bsend_init", buf, count, dt, dest, tag, comm, M_BUF, req);
}

PMPI_WEAK(Ssend_init);
int PMPI_Ssend_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                    MPI_Request *req)
{
    return init_common("MPI_Ssend_init", buf, count, dt, dest, tag, comm, M_SYNC, req);
}

PMPI_WEAK(Rsend_init);
int PMPI_Rsend_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                    MPI_Request *req)
{
    return init_common("MPI_Rsend_init", buf, count, dt, dest, tag, comm, M_READY, req);
}

PMPI_WEAK(Recv_init);
int PMPI_Recv_init(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm,
                   MPI_Request *req)
{
    return init_common("MPI_Recv_init", buf, count, dt, source, tag, comm, M_RECV, req);
}

/* Is h an inactive persistent request (else report why not)? */
static int start_check(cr_job *job, const char *call, MPI_Request h, int i)
{
    mreq *q = h == MPI_REQUEST_NULL ? NULL : req_get(h);
    if (!q)
        return mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_REQUEST,
                        "request %d (%#x) is not a live request: MPI_REQUEST_NULL, freed, or "
                        "never returned by MPI_*_init",
                        i, (unsigned)h);
    if (!q->ps)
        return mpi_fail(job, q->comm, call, MPI_ERR_REQUEST,
                        "request %d (%#x) is not persistent: only requests made by "
                        "MPI_Send_init, MPI_Recv_init, ... can be started",
                        i, (unsigned)h);
    if (q->kind != RQ_IDLE)
        return mpi_fail(job, q->comm, call, MPI_ERR_REQUEST,
                        "request %d (%#x) is already active: complete it (wait/test) before "
                        "starting it again",
                        i, (unsigned)h);
    if (!mpi_comm_get(q->comm))
        return mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_COMM,
                        "request %d (%#x): its communicator has been freed", i, (unsigned)h);
    return 0;
}

/* Start inactive persistent request q (start_check passed). */
static int start_one(cr_job *job, const char *call, mreq *q)
{
    const mpersist *ps = q->ps;
    mpi_comm *c = mpi_comm_get(q->comm);
    if (ps->mode == M_EXT) {
        int rc = ps->start(job, ps->obj);
        if (rc) return rc;
        q->kind = RQ_EXT;
        q->ops = ps->ops;
        q->obj = ps->obj;
        status_empty(&q->st);
        return 0;
    }
    mpi_type *t = mpi_type_at(ps->type);
    if (ps->mode == M_RECV) {
        recv_start(job, call, q, c, t, ps->buf, ps->count, ps->peer, ps->tag);
        return 0;
    }
    if (ps->mode == M_BUF && ps->peer != MPI_PROC_NULL) {
        int rc = bsend_start(job, call, q->comm, t, ps->buf, ps->count,
                             comm_peer_to_job(c, ps->peer), c->ctx, ps->tag);
        if (rc) return rc;
        q->kind = RQ_DONE;
        status_empty(&q->st);
        return 0;
    }
    isend_start(job, call, q, c, t, ps->buf, ps->count, ps->peer, ps->tag, ps->mode);
    return 0;
}

PMPI_WEAK(Start);
int PMPI_Start(MPI_Request *h)
{
    const char *call = "MPI_Start";
    cr_job *job = mpi_enter(call);
    int rc = h ? start_check(job, call, *h, 0)
               : mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_REQUEST, "request pointer is NULL");
    if (rc) return mpi_leave(job, rc);
    return mpi_leave(job, start_one(job, call, req_get(*h)));
}

PMPI_WEAK(Startall);
int PMPI_Startall(int n, MPI_Request hs[])
{
    const char *call = "MPI_Startall";
    cr_job *job = mpi_enter(call);
    int rc = 0;
    if (n < 0) rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_COUNT, "count %d < 0", n);
    if (!rc && n && !hs)
        rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_REQUEST, "request array is NULL");
    for (int i = 0; i < n && !rc; i++) rc = start_check(job, call, hs[i], i);
    for (int i = 0; i < n && !rc; i++) {
        mreq *q = req_get(hs[i]);
        rc = q->kind == RQ_IDLE
                 ? start_one(job, call, q)
                 : mpi_fail(job, q->comm, call, MPI_ERR_REQUEST,
                            "request %d (%#x) appears twice in the array", i, (unsigned)hs[i]);
    }
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
