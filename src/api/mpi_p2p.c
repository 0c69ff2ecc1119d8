/* MPI point-to-point: the four send modes, receives, probes and matched probes,
 * persistent requests and buffered-send buffers. The request table that
 * other request kinds (nonblocking collectives: mpi_request_ext) share, every
 * wait/test form, cancel, generalized requests and status queries are in
 * mpi_req.c; what the two share in mpi_p2p.h.
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
 *  - check_p2p's inline test passes only arguments every check would pass;
 *    anything else goes through the checks one by one, which report;
 *  - statuses report ranks of the request's communicator, not job ranks;
 *  - a cancelled send completes exactly once, either cancelled (the receiver
 *    never sees it) or as usual (MPI_Test_cancelled false): the engine decides
 *    (cr_cancel_send), and its status is read when the request completes. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"
#include "mpi_p2p.h"

/* A matched message: the engine's detached unexpected entry. */
typedef struct mmsg {
    cr_idslot id; /* its slot in job->mpi->p2p.msgs */
    cr_unexp *u;
    MPI_Comm comm;
} mmsg;

void mpi_requests_init(cr_job *job)
{
    cr_idt_init(&job->mpi->p2p.reqs, sizeof(mreq), RQ_REUSE_MIN);
    cr_idt_init(&job->mpi->p2p.msgs, sizeof(mmsg), MSG_REUSE_MIN);
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

/* Communicator, datatype, buffer, peer and tag of a send or receive: each
 * check in turn, the first that fails reported. */
static __attribute__((noinline)) int check_p2p_each(cr_job *job, const char *call, const void *buf,
                                                    int count, MPI_Datatype dt, int peer, int tag,
                                                    MPI_Comm comm, bool recv, mpi_comm **c,
                                                    mpi_type **t)
{
    int rc = mpi_comm_check(job, call, comm, c);
    /* Nothing moves to or from MPI_PROC_NULL: its datatype may be null too
     * (as MPICH and Open MPI accept; MPICH's pt2pt/recvnull), as it may for
     * no elements (MPICH's part/nonblocking_pready). */
    if (!rc && peer == MPI_PROC_NULL && dt == MPI_DATATYPE_NULL)
        *t = mpi_type_get(MPI_BYTE);
    else if (!rc)
        rc = mpi_type_check_n(job, comm, call, dt, count, t);
    if (!rc) rc = check_buf(job, comm, call, buf, count, *t);
    if (!rc) rc = check_peer(job, comm, call, *c, peer, recv, recv ? "source" : "destination");
    if (!rc) rc = check_tag(job, comm, call, tag, recv);
    if (!rc && recv) rc = mpi_assert_wild(job, call, comm, *c, peer, tag);
    return rc;
}

/* The same, the common case tested inline first (it is on the path of every
 * message): a live communicator, a committed datatype, a buffer unless the
 * count is 0, a peer of the communicator (or any source), a tag in range, and
 * no assertion about wildcards to consult. Anything else takes the checks one
 * by one, which say what is wrong. */
static inline __attribute__((always_inline)) int
check_p2p(cr_job *job, const char *call, const void *buf, int count, MPI_Datatype dt, int peer,
          int tag, MPI_Comm comm, bool recv, mpi_comm **c, mpi_type **t)
{
    mpi_comm *cc = mpi_comm_get(comm);
    mpi_type *tt = mpi_type_get(dt);
    bool wild = recv && (peer == MPI_ANY_SOURCE || tag == MPI_ANY_TAG);
    if (__builtin_expect(cc && tt && tt->committed && count >= 0 && (buf || !count) &&
                             ((unsigned)peer < (unsigned)comm_peer_size(cc) ||
                              (recv && peer == MPI_ANY_SOURCE)) &&
                             (tag >= 0 || (recv && tag == MPI_ANY_TAG)) &&
                             (!wild || cc->info == MPI_INFO_NULL),
                         1)) {
        *c = cc;
        *t = tt;
        return 0;
    }
    return check_p2p_each(job, call, buf, count, dt, peer, tag, comm, recv, c, t);
}

int mpi_p2p_check(cr_job *job, const char *call, const void *buf, int count, MPI_Datatype dt,
                  int peer, int tag, MPI_Comm comm, bool recv, mpi_comm **c, mpi_type **t)
{
    return check_p2p(job, call, buf, count, dt, peer, tag, comm, recv, c, t);
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
    for (int i = 0; i < job->mpi->p2p.nbs; i++) {
        if (job->mpi->p2p.bs[i].r->done) {
            cr_req_release(job, job->mpi->p2p.bs[i].r);
            free(job->mpi->p2p.bs[i].copy);
            job->mpi->p2p.bs[i].pool->used -= job->mpi->p2p.bs[i].cost;
        } else {
            job->mpi->p2p.bs[k++] = job->mpi->p2p.bs[i];
        }
    }
    job->mpi->p2p.nbs = k;
}

static int bsend_start(cr_job *job, const char *call, MPI_Comm comm, const mpi_type *t,
                       const void *buf, int count, int jd, uint16_t ctx, int tag)
{
    bsend_reap(job);
    size_t len = (size_t)count * t->size, cost = len + MPI_BSEND_OVERHEAD;
    mpi_bpool *b = mpi_bpool_for(job, comm);
    if (!b->buf)
        return mpi_fail(job, comm, call, MPI_ERR_BUFFER,
                        "no buffer is attached: call MPI_Buffer_attach (or "
                        "MPI_Comm_attach_buffer) before buffered sends");
    /* Space held by messages already delivered comes back only when their
     * completion (a rendezvous send's FIN) has been read: a rank that waited
     * meanwhile only in collectives of the shared area never read it. Read what
     * has arrived before calling the buffer full. */
    while (b->used + cost > b->size && job->mpi->p2p.nbs && cr_progress(job) > 0) bsend_reap(job);
    if (b->used + cost > b->size)
        return mpi_fail(job, comm, call, MPI_ERR_BUFFER,
                        "%zu bytes (+%d overhead) do not fit the attached buffer: %zu of %zu "
                        "bytes are free",
                        len, MPI_BSEND_OVERHEAD, b->size - b->used, b->size);
    char *copy = malloc(len ? len : 1);
    if (!copy) cr_fatal(job, call, "out of memory for a buffered send of %zu bytes", len);
    mpi_pack_data(t, buf, (size_t)count, copy);
    if (job->mpi->p2p.nbs == job->mpi->p2p.bscap) {
        int cap = job->mpi->p2p.bscap ? 2 * job->mpi->p2p.bscap : 16;
        struct mpi_bsend *n = realloc(job->mpi->p2p.bs, (size_t)cap * sizeof *n);
        if (!n) cr_fatal(job, call, "out of memory");
        job->mpi->p2p.bs = n;
        job->mpi->p2p.bscap = cap;
    }
    mpi_chk_stamp(job, t, (size_t)count, call);
    job->mpi->p2p.bs[job->mpi->p2p.nbs++] =
        (struct mpi_bsend){cr_isend(job, call, jd, ctx, tag, copy, len), copy, cost, b};
    job->chk_sig = 0;
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
    mpi_chk_stamp(job, t, (size_t)count, call);
    if (t->contig && len && mpi_chk_on(job, MPI_CHK_BUFFERS)) { /* op_end compares */
        q->cbuf = buf;
        q->clen = len;
        q->csum = mpi_check_sum(buf, len);
        q->cpeer = dest;
        q->ctag = tag;
    }
    if (mode == M_STD && mpi_chk_on(job, MPI_CHK_SYNC)) { /* --check=sync */
        mode = M_SYNC;
        call = "MPI_Isend [check=sync]";
    }
    if (mode != M_SYNC && cr_send_now(job, jd, c->ctx, tag, data, len)) { /* eager: done */
        job->chk_sig = 0;
        free(tmp);
        q->kind = RQ_DONE;
        status_empty(&q->st);
        return;
    }
    q->kind = RQ_SEND;
    q->tmp = tmp;
    q->r = mode == M_SYNC ? cr_issend(job, call, jd, c->ctx, tag, data, len)
                          : cr_isend(job, call, jd, c->ctx, tag, data, len);
    job->chk_sig = 0;
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
    if (req && mode == M_STD && dest != MPI_PROC_NULL && t->contig && !job->mpi->chk) {
        /* MPI_Isend's common case, isend_start's steps with nothing to pack or check */
        mreq *q = req_new(job, call, RQ_DONE, comm, req);
        int jd = comm_peer_to_job(c, dest);
        size_t len = (size_t)count * t->size;
        if (!cr_send_now(job, jd, c->ctx, tag, buf, len)) { /* else eager: done */
            q->kind = RQ_SEND;
            q->r = cr_isend(job, call, jd, c->ctx, tag, buf, len);
        }
        return mpi_leave(job, MPI_SUCCESS);
    }
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
    mpi_chk_stamp(job, t, (size_t)count, call);
    if (mode == M_STD && mpi_chk_on(job, MPI_CHK_SYNC)) /* --check=sync */
        cr_ssend(job, "MPI_Send [check=sync]", jd, c->ctx, tag, data, len);
    else if (mode == M_SYNC)
        cr_ssend(job, call, jd, c->ctx, tag, data, len);
    else
        cr_send(job, call, jd, c->ctx, tag, data, len);
    job->chk_sig = 0;
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

static inline cr_sel make_sel(const mpi_comm *c, int source, int tag)
{
    cr_sel s = {.src = source == MPI_ANY_SOURCE ? CR_ANY_SOURCE : comm_peer_to_job(c, source),
                .ctx = c->ctx,
                .tag_mode = tag == MPI_ANY_TAG ? CR_TAG_ANY : CR_TAG_EXACT,
                .tag = tag};
    return s;
}

/* Where a receive into slot q lands: the buffer itself, or for a
 * non-contiguous datatype (and with --check=buffers, any: the buffer stays
 * the program's until the operation ends, and op_end compares its checksum)
 * a staging buffer unpacked when the operation ends (q then holds a
 * reference to the datatype; with --check=buffers one of the buffers the
 * rank keeps, mpi_check_stage, given back by op_end). */
static void *recv_dest(cr_job *job, const char *call, mreq *q, mpi_type *t, void *buf, int count,
                       size_t *cap)
{
    *cap = (size_t)count * t->size;
    q->umask = mpi_unit_mask(t);
    bool stage = !t->contig || mpi_chk_on(job, MPI_CHK_BUFFERS);
    if (stage || mpi_chk_on(job, MPI_CHK_TYPES)) { /* op_end compares the signatures */
        q->count = (size_t)count;
        q->type = t->idx;
        t->refs++;
    }
    if (!stage) return buf;
    char *tmp = mpi_chk_on(job, MPI_CHK_BUFFERS) ? mpi_check_stage(job, call, *cap) /* kept ones */
                                                 : malloc(*cap ? *cap : 1);
    if (!tmp) cr_fatal(job, call, "out of memory for %zu bytes of staging", *cap);
    q->tmp = tmp;
    q->ubuf = buf;
    if (t->contig) q->csum = mpi_check_sum(q->cbuf = buf, q->clen = *cap); /* --check=buffers */
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
    q->cpeer = source, q->ctag = tag; /* --check=buffers' report */
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
    if (source != MPI_PROC_NULL && t->contig && !job->mpi->chk) {
        /* the common case, recv_start's steps with no staging and no check */
        mreq *q = req_new(job, call, RQ_RECV, comm, req);
        cr_sel s = make_sel(c, source, tag);
        q->umask = mpi_unit_mask(t);
        q->r = cr_irecv_call(job, call, &s, buf, (size_t)count * t->size, true, NULL, NULL);
        return mpi_leave(job, MPI_SUCCESS);
    }
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
        if (mpi_chk_on(job, MPI_CHK_TYPES)) mpi_check_recv(job, call, comm, t, (size_t)count, &cs);
        MPI_Status local = {.MPI_SOURCE = mpi_comm_job_to_peer(c, cs.src),
                            .MPI_TAG = cs.tag,
                            .MPI_ERROR = ignore(st) ? 0 : st->MPI_ERROR, /* left as it was */
                            .cr_bytes = (long long)cs.count};
        uint32_t umask = mpi_unit_mask(t);
        int err = mpi_recv_err(&cs, umask);
        if (err)
            local.MPI_ERROR = err =
                mpi_recv_fail(job, comm, call, err, &cs, local.MPI_SOURCE, umask);
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
        mpi_chk_stamp(job, ts, (size_t)scount, call);
        cr_send(job, call, comm_peer_to_job(c, dest), c->ctx, stag, data, len);
        job->chk_sig = 0;
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
    mpi_chk_stamp(job, t, (size_t)count, call);
    if (dest != MPI_PROC_NULL)
        cr_send(job, call, comm_peer_to_job(c, dest), c->ctx, stag, copy, len);
    job->chk_sig = 0;
    free(copy);
    if (q->r) cr_req_wait(job, q->r);
    return mpi_leave(job, finish(job, call, q, st, NULL, false));
}

/* MPI_Buffer_attach(_c): the size a _c form gives is kept whole (past INT_MAX:
 * courier never writes the buffer, it bounds what buffered sends hold). */
static int buffer_attach(const char *call, void *buffer, MPI_Count size)
{
    cr_job *job = mpi_enter(call);
    if (size < 0 || (!buffer && size))
        return mpi_leave(job,
                         mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_BUFFER,
                                  "buffer %p of %lld bytes is invalid", buffer, (long long)size));
    if (job->mpi->p2p.proc.buf)
        return mpi_leave(job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_BUFFER,
                                       "a buffer is already attached: detach it first"));
    mpi_bpool_attach(&job->mpi->p2p.proc, buffer, size);
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Buffer_attach);
int PMPI_Buffer_attach(void *buffer, int size)
{
    return buffer_attach("MPI_Buffer_attach", buffer, size);
}

PMPI_WEAK(Buffer_attach_c);
int PMPI_Buffer_attach_c(void *buffer, MPI_Count size)
{
    return buffer_attach("MPI_Buffer_attach_c", buffer, size);
}

bool mpi_bsends_done(void *pool)
{
    const struct mpi_p2p *p = &mpi_st()->p2p;
    for (int i = 0; i < p->nbs; i++)
        if ((!pool || p->bs[i].pool == pool) && !p->bs[i].r->done) return false;
    return true;
}

mpi_bpool *mpi_bpool_process(cr_job *job)
{
    bsend_reap(job);
    return &job->mpi->p2p.proc;
}

/* MPI_Buffer_detach(_c): the size in the form's width (isize: the int
 * form's, MPI_UNDEFINED past INT_MAX; csize: the _c form's). */
static int buffer_detach(const char *call, void *buffer_addr, int *isize, MPI_Count *csize)
{
    cr_job *job = mpi_enter(call);
    if (!buffer_addr || (!isize && !csize))
        return mpi_leave(
            job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_ARG, "buffer_addr or size is NULL"));
    if (!job->mpi->p2p.proc.buf)
        return mpi_leave(
            job, mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_BUFFER, "no buffer is attached"));
    /* Every buffered message must be delivered before the buffer is returned. */
    cr_wait_until(job, call, mpi_bsends_done, &job->mpi->p2p.proc,
                  job->mpi->p2p.nbs ? job->mpi->p2p.bs[0].r : NULL);
    bsend_reap(job);
    mpi_bpool_detach(&job->mpi->p2p.proc, buffer_addr, isize, csize);
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Buffer_detach);
int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
    return buffer_detach("MPI_Buffer_detach", buffer_addr, size, NULL);
}

PMPI_WEAK(Buffer_detach_c);
int PMPI_Buffer_detach_c(void *buffer_addr, MPI_Count *size)
{
    return buffer_detach("MPI_Buffer_detach_c", buffer_addr, NULL, size);
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
    if (!found) cr_poll_missed(job, call, &(cr_wait){.sel = &s});
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
    mmsg *m = cr_idt_alloc(&job->mpi->p2p.msgs);
    if (!m && cr_idt_full(&job->mpi->p2p.msgs))
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
    return cr_idt_get(&mpi_st()->p2p.msgs, (unsigned)h & ~RQ_MARK);
}

static void msg_free(mmsg *m)
{
    m->u = NULL;
    cr_idt_free(&mpi_st()->p2p.msgs, m);
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
    if (!found) {
        cr_poll_missed(job, call, &(cr_wait){.sel = &s});
        return mpi_leave(job, MPI_SUCCESS);
    }
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
