/* MPI point-to-point: the four send modes, receives, probes, requests and
 * every wait/test form, cancel, buffered-send buffers and status queries.
 *
 * Translation: a communicator's point-to-point traffic uses its own engine
 * context and MPI tags are the engine's tags, so MPI_Send is cr_send, MPI_Irecv
 * is cr_irecv_call (truncation reported as MPI_ERR_TRUNCATE, not fatal), and
 * MPI_Ssend is cr_issend (always rendezvous: it completes only once a receive
 * has matched). Buffered sends copy the data and go out as ordinary sends; the
 * attached buffer's size bounds what may be outstanding.
 *
 * Invariants:
 *  - an MPI_Request names one slot of this file's table (index + generation);
 *    the slot lives from the nonblocking call until a wait/test completes it
 *    (or, after MPI_Request_free, until the operation has completed), so a
 *    completed or made-up request handle is reported, never reused;
 *  - a receive into a non-contiguous datatype lands in a staging buffer and is
 *    unpacked exactly once, when its request completes; the datatype stays
 *    alive (reference) until then even if the program frees it;
 *  - statuses report ranks of the request's communicator, not job ranks;
 *  - a cancelled send completes exactly once, either cancelled (the receiver
 *    never sees it) or as usual (MPI_Test_cancelled false): the engine decides
 *    (cr_cancel_send), and its status is read when the request completes. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

#define RQ_IDX_BITS 20
#define RQ_GEN_MASK 0x3ffu
#define RQ_MARK 0x40000000u

enum { RQ_FREE = 0, RQ_SEND, RQ_RECV, RQ_DONE };

typedef struct mreq {
    uint32_t gen;
    uint8_t kind;
    bool freed;     /* MPI_Request_free while active: retire when complete */
    bool cancelled; /* receive: taken off the posted queue (a send: see q->r->cancel) */
    bool sent;      /* RQ_DONE: a send that completed at once (cr_send_now) */
    int next_free;
    cr_req *r;
    char *tmp;  /* packed copy (send) or staging buffer (receive) */
    void *ubuf; /* receive: where to unpack */
    size_t count;
    int type;      /* receive with tmp: index of the datatype (holds a reference) */
    MPI_Comm comm; /* for errors and rank translation */
    MPI_Status st; /* RQ_DONE: the status to report */
} mreq;

static struct {
    mreq *q;
    int n, free_head, nfreed;
    /* buffered sends */
    void *bbuf;
    size_t bsize, bused;
    struct bsend {
        cr_req *r;
        char *copy;
        size_t cost;
    } * bs;
    int nbs, bscap;
} P;

void mpi_requests_init(void)
{
    P.free_head = -1;
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
    if (!rc) rc = mpi_type_check(job, comm, call, dt, t);
    if (!rc) rc = check_buf(job, comm, call, buf, count, *t);
    if (!rc) rc = check_peer(job, comm, call, *c, peer, recv, recv ? "source" : "destination");
    if (!rc) rc = check_tag(job, comm, call, tag, recv);
    return rc;
}

/* ---- requests -------------------------------------------------------------------- */

static void retire(cr_job *job, mreq *q);

static void reap_freed(cr_job *job)
{
    for (int i = 0; i < P.n && P.nfreed; i++) {
        mreq *q = &P.q[i];
        if (q->kind != RQ_FREE && q->freed && (q->kind == RQ_DONE || q->r->done)) {
            P.nfreed--;
            retire(job, q);
        }
    }
}

static mreq *req_new(cr_job *job, const char *call, uint8_t kind, MPI_Comm comm,
                     MPI_Request *handle)
{
    if (P.nfreed) reap_freed(job);
    int i = P.free_head;
    if (i >= 0) {
        P.free_head = P.q[i].next_free;
    } else {
        if (P.n >= (1 << RQ_IDX_BITS))
            cr_fatal(job, call, "more than %d requests pending; complete some first",
                     1 << RQ_IDX_BITS);
        if ((P.n & (P.n - 1)) == 0) {
            mreq *n = realloc(P.q, (size_t)(P.n ? 2 * P.n : 64) * sizeof *n);
            if (!n) cr_fatal(job, call, "out of memory for requests");
            P.q = n;
        }
        i = P.n++;
        P.q[i].gen = 0;
    }
    mreq *q = &P.q[i];
    uint32_t gen = (q->gen + 1) & RQ_GEN_MASK;
    *q = (mreq){.gen = gen ? gen : 1, .kind = kind, .next_free = -1, .type = -1, .comm = comm};
    *handle = (MPI_Request)(RQ_MARK | q->gen << RQ_IDX_BITS | (uint32_t)i);
    return q;
}

static mreq *req_get(MPI_Request h)
{
    if (!((unsigned)h & RQ_MARK) || ((unsigned)h & 0x80000000u)) return NULL;
    uint32_t idx = (uint32_t)h & ((1u << RQ_IDX_BITS) - 1);
    uint32_t gen = ((uint32_t)h >> RQ_IDX_BITS) & RQ_GEN_MASK;
    if (idx >= (uint32_t)P.n) return NULL;
    mreq *q = &P.q[idx];
    return q->kind != RQ_FREE && q->gen == gen && !q->freed ? q : NULL;
}

static bool req_done(const mreq *q)
{
    return q->kind == RQ_DONE || q->r->done;
}

/* Fill the status of a completed request from the engine's. */
static int recv_status(mreq *q, MPI_Status *st)
{
    int err = MPI_SUCCESS;
    if (q->kind == RQ_RECV && !q->cancelled && q->r->st.size > q->r->st.count)
        err = MPI_ERR_TRUNCATE;
    if (ignore(st)) return err;
    if (q->kind == RQ_DONE) {
        *st = q->st;
        return err;
    }
    if (q->kind == RQ_SEND) {
        status_empty(st);
        st->cr_cancelled = q->r->cancel == CR_CANCEL_DONE;
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

static void retire(cr_job *job, mreq *q)
{
    if (q->kind == RQ_RECV && q->tmp && !q->cancelled)
        mpi_unpack_data(mpi_type_at(q->type), q->tmp, q->r->st.count, q->ubuf, q->count);
    if (q->type >= 0) mpi_type_unref(q->type);
    if (q->r) cr_req_release(job, q->r);
    free(q->tmp);
    q->tmp = NULL;
    q->r = NULL;
    q->kind = RQ_FREE;
    q->next_free = P.free_head;
    P.free_head = (int)(q - P.q);
}

/* Complete a done request: status, unpack, free the slot; error code (truncation). */
static int finish(cr_job *job, const char *call, mreq *q, MPI_Status *st, MPI_Request *h)
{
    MPI_Status local;
    int err = recv_status(q, &local);
    if (!ignore(st)) *st = local;
    size_t got = q->r ? q->r->st.count : 0, had = q->r ? q->r->st.size : 0;
    int src = local.MPI_SOURCE, tag = local.MPI_TAG;
    MPI_Comm comm = q->comm;
    retire(job, q);
    if (h) *h = MPI_REQUEST_NULL;
    if (err == MPI_ERR_TRUNCATE)
        err = mpi_fail(job, comm, call, MPI_ERR_TRUNCATE,
                       "message of %zu bytes (tag %d from rank %d) is longer than the %zu-byte "
                       "receive buffer",
                       had, tag, src, got);
    if (!ignore(st)) st->MPI_ERROR = err;
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

enum { M_STD, M_SYNC, M_READY, M_BUF };

static void bsend_reap(cr_job *job)
{
    int k = 0;
    for (int i = 0; i < P.nbs; i++) {
        if (P.bs[i].r->done) {
            cr_req_release(job, P.bs[i].r);
            free(P.bs[i].copy);
            P.bused -= P.bs[i].cost;
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
    if (!P.bbuf)
        return mpi_fail(job, comm, call, MPI_ERR_BUFFER,
                        "no buffer is attached: call MPI_Buffer_attach before buffered sends");
    if (P.bused + cost > P.bsize)
        return mpi_fail(job, comm, call, MPI_ERR_BUFFER,
                        "%zu bytes (+%d overhead) do not fit the attached buffer: %zu of %zu "
                        "bytes are free",
                        len, MPI_BSEND_OVERHEAD, P.bsize - P.bused, P.bsize);
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
    P.bs[P.nbs++] = (struct bsend){cr_isend(job, call, jd, ctx, tag, copy, len), copy, cost};
    P.bused += cost;
    return 0;
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
    mreq *q = NULL;
    if (dest == MPI_PROC_NULL) {
        if (req) {
            q = req_new(job, call, RQ_DONE, comm, req);
            status_empty(&q->st);
            q->st.MPI_SOURCE = MPI_PROC_NULL;
        }
        return mpi_leave(job, MPI_SUCCESS);
    }
    int jd = comm_peer_to_job(c, dest);
    if (mode == M_BUF) {
        rc = bsend_start(job, call, comm, t, buf, count, jd, c->ctx, tag);
        if (!rc && req) {
            q = req_new(job, call, RQ_DONE, comm, req);
            status_empty(&q->st);
        }
        return mpi_leave(job, rc);
    }
    size_t len;
    char *tmp;
    const void *data = send_data(job, call, t, buf, count, &len, &tmp);
    if (!req) {
        if (mode == M_SYNC) {
            cr_ssend(job, call, jd, c->ctx, tag, data, len);
        } else {
            cr_send(job, call, jd, c->ctx, tag, data, len);
        }
        free(tmp);
        return mpi_leave(job, MPI_SUCCESS);
    }
    if (mode != M_SYNC && cr_send_now(job, jd, c->ctx, tag, data, len)) { /* eager: done */
        free(tmp);
        q = req_new(job, call, RQ_DONE, comm, req);
        status_empty(&q->st);
        q->sent = true;
        return mpi_leave(job, MPI_SUCCESS);
    }
    q = req_new(job, call, RQ_SEND, comm, req);
    q->tmp = tmp;
    q->r = mode == M_SYNC ? cr_issend(job, call, jd, c->ctx, tag, data, len)
                          : cr_isend(job, call, jd, c->ctx, tag, data, len);
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

/* Post a receive (after the checks) into a new request slot. */
static mreq *recv_post(cr_job *job, const char *call, void *buf, int count, mpi_type *t, int source,
                       int tag, MPI_Comm comm, mpi_comm *c, MPI_Request *h)
{
    if (source == MPI_PROC_NULL) {
        mreq *q = req_new(job, call, RQ_DONE, comm, h);
        status_empty(&q->st);
        q->st.MPI_SOURCE = MPI_PROC_NULL;
        return q;
    }
    cr_sel s = make_sel(c, source, tag);
    size_t cap = (size_t)count * t->size;
    char *tmp = NULL;
    if (!t->contig) {
        tmp = malloc(cap ? cap : 1);
        if (!tmp) cr_fatal(job, call, "out of memory for %zu bytes of staging", cap);
    }
    mreq *q = req_new(job, call, RQ_RECV, comm, h);
    if (tmp) {
        q->tmp = tmp;
        q->ubuf = buf;
        q->count = (size_t)count;
        q->type = t->idx;
        t->refs++;
    }
    q->r = cr_irecv_call(job, call, &s, tmp ? tmp : buf, cap, true, NULL, NULL);
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
                            .cr_bytes = (long long)cs.count};
        if (cs.size > cs.count)
            local.MPI_ERROR = mpi_fail(job, comm, call, MPI_ERR_TRUNCATE,
                                       "message of %zu bytes (tag %d from rank %d) is longer than "
                                       "the %zu-byte receive buffer",
                                       cs.size, cs.tag, local.MPI_SOURCE, cs.count);
        if (!ignore(st)) *st = local;
        return mpi_leave(job, local.MPI_ERROR);
    }
    MPI_Request h;
    mreq *q = recv_post(job, call, buf, count, t, source, tag, comm, c, &h);
    if (q->r) cr_req_wait(job, q->r);
    return mpi_leave(job, finish(job, call, q, st, NULL));
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
    return mpi_leave(job, finish(job, call, q, st, NULL));
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
    return mpi_leave(job, finish(job, call, q, st, NULL));
}

PMPI_WEAK(Buffer_attach);
int PMPI_Buffer_attach(void *buffer, int size)
{
    const char *call = "MPI_Buffer_attach";
    cr_job *job = mpi_enter(call);
    if (size < 0 || (!buffer && size))
        return mpi_leave(job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_BUFFER,
                                       "buffer %p of %d bytes is invalid", buffer, size));
    if (P.bbuf)
        return mpi_leave(job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_BUFFER,
                                       "a buffer is already attached: detach it first"));
    P.bbuf = buffer ? buffer : (void *)&P;
    P.bsize = (size_t)size;
    return mpi_leave(job, MPI_SUCCESS);
}

static bool bsends_done(void *arg)
{
    (void)arg;
    for (int i = 0; i < P.nbs; i++)
        if (!P.bs[i].r->done) return false;
    return true;
}

PMPI_WEAK(Buffer_detach);
int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
    const char *call = "MPI_Buffer_detach";
    cr_job *job = mpi_enter(call);
    if (!buffer_addr || !size)
        return mpi_leave(
            job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "buffer_addr or size is NULL"));
    if (!P.bbuf)
        return mpi_leave(
            job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_BUFFER, "no buffer is attached"));
    /* Every buffered message must be delivered before the buffer is returned. */
    cr_wait_until(job, call, bsends_done, NULL, P.nbs ? P.bs[0].r : NULL);
    bsend_reap(job);
    *(void **)buffer_addr = P.bbuf == (void *)&P ? NULL : P.bbuf;
    *size = (int)P.bsize;
    P.bbuf = NULL;
    P.bsize = 0;
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
    if (!rc && call[4] == 'I' && !flag) rc = mpi_fail(job, comm, call, MPI_ERR_ARG, "flag is NULL");
    if (rc) return mpi_leave(job, rc);
    if (source == MPI_PROC_NULL) {
        if (flag) *flag = 1;
        status_empty(st);
        if (!ignore(st)) st->MPI_SOURCE = MPI_PROC_NULL;
        return mpi_leave(job, MPI_SUCCESS);
    }
    cr_sel s = make_sel(c, source, tag);
    cr_status cs;
    bool found = cr_probe(job, &s, flag == NULL, &cs);
    if (flag) *flag = found;
    if (found && !ignore(st)) {
        st->MPI_SOURCE = mpi_comm_job_to_peer(mpi_comm_get(comm), cs.src);
        st->MPI_TAG = cs.tag;
        st->MPI_ERROR = MPI_SUCCESS;
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
    if (!q) {
        status_empty(st);
        return mpi_leave(job, MPI_SUCCESS);
    }
    if (q->kind != RQ_DONE) cr_req_wait(job, q->r);
    return mpi_leave(job, finish(job, call, q, st, h));
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
    if (!q) {
        *flag = 1;
        status_empty(st);
        return mpi_leave(job, MPI_SUCCESS);
    }
    if (!req_done(q)) cr_progress(job);
    *flag = req_done(q);
    if (!*flag) return mpi_leave(job, MPI_SUCCESS);
    return mpi_leave(job, finish(job, call, q, st, h));
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
    if (!q) {
        *flag = 1;
        status_empty(st);
        return mpi_leave(job, MPI_SUCCESS);
    }
    if (!req_done(q)) cr_progress(job);
    *flag = req_done(q);
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
        if (hs[i] == MPI_REQUEST_NULL) {
            status_empty(st_at(sts, i));
            continue;
        }
        mreq *q = req_get(hs[i]);
        if (q->kind != RQ_DONE) cr_req_wait(job, q->r);
        if (finish(job, call, q, st_at(sts, i), &hs[i])) failed = true;
    }
    return mpi_leave(job, failed ? MPI_ERR_IN_STATUS : MPI_SUCCESS);
}

/* The engine requests of the active entries (NULL elsewhere); returns how many
 * are active, and the index of one already done in *done (or -1). */
static int active_set(int n, MPI_Request *hs, cr_req **rs, int *done)
{
    int k = 0;
    *done = -1;
    for (int i = 0; i < n; i++) {
        rs[i] = NULL;
        if (hs[i] == MPI_REQUEST_NULL) continue;
        mreq *q = req_get(hs[i]);
        k++;
        if (q->kind == RQ_DONE || q->r->done) {
            if (*done < 0) *done = i;
        } else {
            rs[i] = q->r;
        }
    }
    return k;
}

static cr_req **rs_alloc(cr_job *job, const char *call, int n)
{
    cr_req **rs = malloc((size_t)(n ? n : 1) * sizeof *rs);
    if (!rs) cr_fatal(job, call, "out of memory");
    return rs;
}

static const cr_req *first_of(cr_req **rs, int n)
{
    for (int i = 0; i < n; i++)
        if (rs[i]) return rs[i];
    return NULL;
}

static int any_common(const char *call, int n, MPI_Request *hs, int *index, int *flag,
                      MPI_Status *st)
{
    cr_job *job = mpi_enter(call);
    int rc = reqs_check(job, call, n, hs);
    if (!rc && !index) rc = mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "index is NULL");
    if (rc) return mpi_leave(job, rc);
    cr_req **rs = rs_alloc(job, call, n);
    int done, k = active_set(n, hs, rs, &done);
    if (!k) {
        free(rs);
        *index = MPI_UNDEFINED;
        if (flag) *flag = 1;
        status_empty(st);
        return mpi_leave(job, MPI_SUCCESS);
    }
    if (done < 0) {
        cr_req_set set = {rs, n, -1};
        if (flag) {
            cr_progress(job);
            if (cr_req_any_done(&set)) done = set.which;
        } else {
            cr_wait_until(job, call, cr_req_any_done, &set, first_of(rs, n));
            done = set.which;
        }
    }
    free(rs);
    if (flag) *flag = done >= 0;
    if (done < 0) {
        *index = MPI_UNDEFINED;
        return mpi_leave(job, MPI_SUCCESS);
    }
    *index = done;
    return mpi_leave(job, finish(job, call, req_get(hs[done]), st, &hs[done]));
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
    cr_req **rs = rs_alloc(job, call, n);
    int done, k = active_set(n, hs, rs, &done);
    if (!k) {
        free(rs);
        *outcount = MPI_UNDEFINED;
        return mpi_leave(job, MPI_SUCCESS);
    }
    if (done < 0) {
        cr_req_set set = {rs, n, -1};
        if (wait)
            cr_wait_until(job, call, cr_req_any_done, &set, first_of(rs, n));
        else
            cr_progress(job);
    }
    free(rs);
    int m = 0;
    bool failed = false;
    for (int i = 0; i < n; i++) {
        if (hs[i] == MPI_REQUEST_NULL) continue;
        mreq *q = req_get(hs[i]);
        if (!req_done(q)) continue;
        idx[m] = i;
        if (finish(job, call, q, st_at(sts, m), &hs[i])) failed = true;
        m++;
    }
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
    for (int i = 0; i < n && *flag; i++)
        if (hs[i] != MPI_REQUEST_NULL && !req_done(req_get(hs[i]))) *flag = 0;
    if (!*flag) return mpi_leave(job, MPI_SUCCESS);
    bool failed = false;
    for (int i = 0; i < n; i++) {
        if (hs[i] == MPI_REQUEST_NULL) {
            status_empty(st_at(sts, i));
            continue;
        }
        if (finish(job, call, req_get(hs[i]), st_at(sts, i), &hs[i])) failed = true;
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
    if (req_done(q)) {
        retire(job, q);
    } else {
        q->freed = true; /* retired once complete (reap_freed) */
        P.nfreed++;
    }
    *h = MPI_REQUEST_NULL;
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
    if (rc) return mpi_leave(job, rc);
    /* A send is cancelled only while nothing of it has reached a receive: still
     * queued for credits, or a rendezvous message (every synchronous send is
     * one) that no receive has matched; the receiver settles that when it next
     * makes progress, and the wait/test then completes the send either way
     * (cr_cancel_send). An eager message already sent (at once, with no engine
     * request, or from the queue) and a buffered send (complete when copied) are
     * not recalled: MPI-3.1 §3.8.4 allows a cancel that does not take effect;
     * the send completes as usual and MPI_Test_cancelled says false. */
    if (q->kind == RQ_RECV && cr_cancel_recv(job, q->r)) q->cancelled = true;
    if (q->kind == RQ_SEND) cr_cancel_send(job, q->r);
    return mpi_leave(job, MPI_SUCCESS);
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
