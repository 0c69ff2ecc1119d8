/* MPI partitioned communication (MPI-4.0 chapter 4): MPI_Psend_init,
 * MPI_Precv_init, MPI_Pready(_range/_list), MPI_Parrived; MPI_Start(all),
 * the wait/test forms and MPI_Request_free take the requests as persistent
 * requests of the request layer (mpi_request_ext_persistent).
 *
 * Protocol, on the engine context CR_CTX_MPI_PART, which no other traffic uses
 * (so it never meets a program's messages or a collective's):
 *  - MPI_Psend_init picks a channel of this rank (0..CHAN_MAX-1, unique among
 *    its live partitioned sends) and sends the receiver an announcement (tag
 *    HELLO_TAG): the communicator's context, the tag, the channel, the number
 *    of sender partitions and their size in bytes;
 *  - the sender's partitions travel in "wire chunks": W runs of consecutive
 *    partitions, chunk j holding partitions [j*P/W, (j+1)*P/W); when the last
 *    partition of a chunk is marked ready, the chunk goes out as one message
 *    with tag (channel << 16) | j before the MPI_Pready call returns. Chunks
 *    that one call (MPI_Pready_range, MPI_Pready_list) completes side by
 *    side go out together: the first chunk's message carries the whole run's
 *    bytes, and each other chunk of the run gets a message of no bytes, so
 *    that every chunk's tag still has one message per round. Each message of
 *    a rendezvous costs its handshake and a system call (about 3 us on this
 *    project's VM whatever the length): 1 MiB in 16 partitions, all marked
 *    ready by one MPI_Pready_range, took 103 us as 16 chunks and takes what
 *    one 1 MiB message does. W is as many chunks of at least four times
 *    the eager limit to the receiver as the data makes (at least 1, at most
 *    min(partitions, WIRE_MAX)): small data goes as one message, large data
 *    in chunks the engine sends by single copy (rendezvous), each big
 *    enough that its fixed cost (RTS, FIN, a system call) is small beside its
 *    copy. A chunk per partition cost a message and two copies (in and out of
 *    the shm data ring) each: 64 KiB in 8 partitions took 2-3 times one 64 KiB
 *    message;
 *  - a receiver takes announcements (any receive's call or test pumps them)
 *    and gives each to the oldest partitioned receive of the same source,
 *    context and tag that has none; one nobody takes yet is parked. The
 *    announcements of one sender arrive in the order of its MPI_Psend_init
 *    calls, so the i-th send and the i-th receive of one (source, tag,
 *    communicator) pair up, as MPI says (§4.1);
 *  - once its announcement is there, each started receive posts one engine
 *    receive per wire chunk, at the chunk's byte offset and able to take
 *    every byte from there to the end (a run): the partition counts of the
 *    two sides may differ; a chunk is in once its message is, or, when that
 *    came with no bytes, once the message of the chunk that began its run
 *    is; MPI_Parrived(i) is true once every chunk that overlaps receive
 *    partition i's bytes is in (partitions of no bytes: the chunks of the
 *    same share of the sender's partitions; never before the sender marked
 *    them ready).
 *
 * Invariants:
 *  - a chunk's message of round r is the r-th message with its tag from its
 *    sender, and the receive of round r is the r-th posted with that tag, so
 *    rounds never mix (the engine keeps one sender's order per tag);
 *  - every engine request is released only once done; a send completes once
 *    all its chunks went out and their sends are done, a receive once every
 *    chunk is in (a non-contiguous datatype: unpacked, each partition once);
 *  - the datatype is held (a reference) from init to MPI_Request_free;
 *  - state lives in job->mpi->mpi4 (channels, live receives, parked
 *    announcements), never in file globals. */
#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

#define PCTX CR_CTX_MPI_PART
#define HELLO_TAG (-1)
#define CHAN_MAX (1u << 14)
#define WIRE_MAX (1u << 16)

typedef struct hello_msg {
    int32_t ctx, tag, chan, nwire;
    uint64_t parts, pbytes; /* sender partitions, bytes of each */
} hello_msg;

typedef struct mpi_hello {
    struct mpi_hello *next;
    int src; /* job rank */
    hello_msg h;
} mpi_hello;

typedef struct mpi_prt {
    bool send;
    struct mpi_prt *next; /* receives: in job->mpi->mpi4.recvs */
    MPI_Comm comm;
    int peer, peer_job; /* rank in comm (MPI_PROC_NULL: nothing moves), job rank */
    uint16_t ctx;
    int tag;
    char *buf;
    int parts;
    size_t count; /* instances per partition */
    int type;     /* datatype index (holds a reference) */
    size_t pbytes, total;
    char *stage; /* non-contiguous datatype: the packed data */
    bool active;
    cr_req **wr; /* per wire chunk: its message (NULL: none yet) */
    /* send */
    uint32_t chan;
    hello_msg hello; /* the announcement (live until hr is done) */
    cr_req *hr;
    int nwire;
    uint32_t *left; /* per wire chunk: partitions not yet ready this round */
    uint32_t *due;  /* chunks completed by the MPI_Pready call under way */
    int ndue;
    uint8_t *ready; /* per partition: marked ready this round */
    int nsent;      /* chunks sent this round */
    /* receive */
    bool have_hello, posted;
    hello_msg h;       /* the sender's announcement */
    uint8_t *unpacked; /* non-contiguous: per partition, unpacked this round */
    int err;
} mpi_prt;

#define PS (&job->mpi->mpi4)

/* First sender partition of wire chunk j of h; the chunk of sender partition p. */
static uint64_t ws(const hello_msg *h, uint64_t j)
{
    return j * h->parts / (uint64_t)h->nwire;
}
static uint64_t chunk_of(const hello_msg *h, uint64_t p)
{
    return ((p + 1) * (uint64_t)h->nwire - 1) / h->parts;
}

/* ---- announcements (receive side) ------------------------------------------ */

static bool hello_fits(const mpi_prt *p, int src, const hello_msg *h)
{
    return !p->have_hello && p->peer_job == src && p->ctx == (uint16_t)h->ctx && p->tag == h->tag;
}

static void post(cr_job *job, const char *call, mpi_prt *p);

/* Give parked announcements to the oldest receive each fits. */
static void hellos_assign(cr_job *job, const char *call)
{
    for (mpi_hello **hp = &PS->parked; *hp;) {
        mpi_hello *x = *hp;
        mpi_prt *p = PS->recvs;
        while (p && !hello_fits(p, x->src, &x->h)) p = p->next;
        if (!p) {
            hp = &x->next;
            continue;
        }
        p->h = x->h;
        p->have_hello = true;
        if (p->active && !p->posted) post(job, call, p);
        *hp = x->next;
        free(x);
    }
}

/* Take in every announcement that has arrived. */
static void hellos_pump(cr_job *job, const char *call)
{
    cr_sel s = {.src = CR_ANY_SOURCE, .ctx = PCTX, .tag_mode = CR_TAG_EXACT, .tag = HELLO_TAG};
    cr_status cs;
    bool got = false;
    while (cr_probe(job, &s, false, &cs)) {
        mpi_hello *x = calloc(1, sizeof *x);
        if (!x) cr_fatal(job, call, "out of memory for a partitioned-send announcement");
        cr_sel one = s;
        one.src = cs.src;
        cr_recv_trunc(job, call, &one, &x->h, sizeof x->h, false, &cs);
        x->src = cs.src;
        mpi_hello **end = &PS->parked;
        while (*end) end = &(*end)->next;
        *end = x;
        got = true;
    }
    if (got) hellos_assign(job, call);
}

/* ---- the operations -------------------------------------------------------- */

static mpi_type *ptype(const mpi_prt *p)
{
    return mpi_type_at(p->type);
}

static void wr_release(cr_job *job, mpi_prt *p, int n)
{
    for (int j = 0; p->wr && j < n; j++)
        if (p->wr[j]) {
            if (!p->wr[j]->done) cr_req_wait(job, p->wr[j]);
            cr_req_release(job, p->wr[j]);
            p->wr[j] = NULL;
        }
}

static int nwire_recv(const mpi_prt *p)
{
    return p->have_hello ? p->h.nwire : 0;
}

/* Post the receive's chunk receives (announcement in, started). */
static void post(cr_job *job, const char *call, mpi_prt *p)
{
    const hello_msg *h = &p->h;
    uint64_t stotal = h->parts * h->pbytes;
    if (stotal != p->total) p->err = MPI_ERR_TRUNCATE;
    if (!p->wr) {
        p->wr = calloc((size_t)h->nwire, sizeof *p->wr);
        if (!p->wr) cr_fatal(job, call, "out of memory for %d chunk receives", h->nwire);
    }
    char *base = p->stage ? p->stage : p->buf;
    for (int j = 0; j < h->nwire; j++) {
        uint64_t off = ws(h, (uint64_t)j) * h->pbytes;
        size_t cap = off >= p->total ? 0 : (size_t)(p->total - off); /* a run may start here */
        cr_sel s = {.src = p->peer_job,
                    .ctx = PCTX,
                    .tag_mode = CR_TAG_EXACT,
                    .tag = (int32_t)((h->chan << 16) | (uint32_t)j)};
        p->wr[j] = cr_irecv_call(job, call, &s, cap ? base + off : NULL, cap, true, NULL, NULL);
    }
    p->posted = true;
}

/* Wire chunk c's bytes are in: its message brought them, or it came with none
 * (a run's later chunk) and the message that began its run is in. */
static bool chunk_in(const mpi_prt *p, uint64_t c)
{
    for (;; c--) {
        const cr_req *r = p->wr[c];
        if (!r->done) return false;
        if (r->st.count || !c || !p->h.pbytes) return true;
    }
}

/* Receive partition i's bytes: are they all in? */
static bool rpart_in(const mpi_prt *p, int i)
{
    if (!p->posted) return false;
    const hello_msg *h = &p->h;
    uint64_t first, last; /* the sender's partitions that partition i waits for */
    if (!p->pbytes || !h->pbytes) {
        /* no bytes to place it by (partitions of nothing still arrive only
         * once marked ready): the same share of the partitions */
        first = (uint64_t)i * h->parts / (uint64_t)p->parts;
        last = (((uint64_t)i + 1) * h->parts + (uint64_t)p->parts - 1) / (uint64_t)p->parts - 1;
    } else {
        uint64_t a = (uint64_t)i * p->pbytes, b = a + p->pbytes;
        if (a >= h->parts * h->pbytes) return true; /* beyond what the sender has */
        first = a / h->pbytes;
        last = (b - 1) / h->pbytes;
    }
    if (last >= h->parts) last = h->parts - 1;
    for (uint64_t j = chunk_of(h, first); j <= chunk_of(h, last); j++)
        if (!chunk_in(p, j)) return false;
    return true;
}

static void unpack_part(mpi_prt *p, int i)
{
    if (!p->stage || p->unpacked[i]) return;
    mpi_type *t = ptype(p);
    mpi_unpack_data(t, p->stage + (size_t)i * p->pbytes, p->pbytes,
                    p->buf + (ptrdiff_t)((size_t)i * p->count) * type_extent(t), p->count);
    p->unpacked[i] = 1;
}

static bool prt_test(cr_job *job, void *obj, MPI_Status *st)
{
    mpi_prt *p = obj;
    if (p->peer == MPI_PROC_NULL) {
        st->MPI_SOURCE = p->send ? MPI_ANY_SOURCE : MPI_PROC_NULL;
        return true;
    }
    if (p->send) {
        if (p->nsent < p->nwire) return false;
        for (int j = 0; j < p->nwire; j++)
            if (!p->wr[j]->done) return false;
        wr_release(job, p, p->nwire);
        p->active = false;
        return true;
    }
    if (!p->have_hello) hellos_pump(job, "MPI_Wait");
    if (!p->posted) return false;
    for (int j = 0; j < p->h.nwire; j++)
        if (!p->wr[j]->done) return false;
    for (int i = 0; i < p->parts; i++) unpack_part(p, i);
    size_t got = 0;
    for (int j = 0; j < p->h.nwire; j++) got += p->wr[j]->st.count;
    wr_release(job, p, p->h.nwire);
    st->MPI_SOURCE = p->peer;
    st->MPI_TAG = p->tag;
    st->cr_bytes = (long long)got;
    st->MPI_ERROR = p->err;
    p->active = p->posted = false;
    return true;
}

static void prt_free(cr_job *job, void *obj)
{
    mpi_prt *p = obj;
    wr_release(job, p, p->send ? p->nwire : nwire_recv(p));
    if (p->send && p->hr) {
        if (!p->hr->done) cr_req_wait(job, p->hr);
        cr_req_release(job, p->hr);
    }
    if (p->send && p->peer != MPI_PROC_NULL)
        PS->chan_used[p->chan / 64] &= ~(1ull << (p->chan % 64));
    if (!p->send) {
        mpi_prt **pp = &PS->recvs;
        while (*pp && *pp != p) pp = &(*pp)->next;
        if (*pp) *pp = p->next;
    }
    mpi_type_unref(p->type);
    free(p->wr);
    free(p->left);
    free(p->due);
    free(p->ready);
    free(p->unpacked);
    free(p->stage);
    free(p);
}

static int prt_start(cr_job *job, void *obj)
{
    mpi_prt *p = obj;
    p->active = true;
    if (p->peer == MPI_PROC_NULL) return 0;
    if (p->send) {
        const hello_msg *h = &p->hello;
        for (int j = 0; j < p->nwire; j++)
            p->left[j] = (uint32_t)(ws(h, (uint64_t)j + 1) - ws(h, (uint64_t)j));
        memset(p->ready, 0, (size_t)p->parts);
        p->nsent = 0;
        return 0;
    }
    p->err = 0;
    if (p->unpacked) memset(p->unpacked, 0, (size_t)p->parts);
    if (!p->have_hello) hellos_pump(job, "MPI_Start");
    if (p->have_hello && !p->posted) post(job, "MPI_Start", p);
    return 0;
}

static const mpi_ext_ops psend_ops = {.what = "MPI_Psend_init", .test = prt_test, .free = prt_free};
static const mpi_ext_ops precv_ops = {.what = "MPI_Precv_init", .test = prt_test, .free = prt_free};

/* ---- init calls ---------------------------------------------------------------- */

/* The number of wire chunks of a send of total bytes in parts partitions to
 * job rank dst (the protocol above). */
static int wire_chunks(const cr_job *job, int dst, size_t total, int parts)
{
    size_t eager = cr_eager(job, dst), min = eager > SIZE_MAX / 4 ? SIZE_MAX : 4 * eager;
    if (!min) min = 1; /* COURIER_EAGER_LIMIT=0: a chunk per partition */
    size_t most = (size_t)parts < WIRE_MAX ? (size_t)parts : WIRE_MAX, w = total / min;
    return (int)(w < 1 ? 1 : w > most ? most : w);
}

static int init_common(const char *call, bool send, const void *buf, int partitions,
                       MPI_Count count, MPI_Datatype dt, int peer, int tag, MPI_Comm comm,
                       MPI_Info info, MPI_Request *req)
{
    cr_job *job = mpi_enter(call);
    mpi_comm *c = NULL;
    mpi_type *t = NULL;
    int rc = mpi_comm_check(job, call, comm, &c);
    if (!rc && partitions < 1)
        rc = mpi_fail(job, comm, call, MPI_ERR_ARG, "partitions is %d: it must be at least 1",
                      partitions);
    if (!rc && (count < 0 || count > INT32_MAX))
        rc = mpi_fail(job, comm, call, MPI_ERR_COUNT, "count %lld is out of range (0..%d)",
                      (long long)count, INT32_MAX);
    if (!rc && !send && peer == MPI_ANY_SOURCE)
        rc = mpi_fail(job, comm, call, MPI_ERR_RANK,
                      "source is MPI_ANY_SOURCE: a partitioned receive names its source");
    if (!rc && !send && tag == MPI_ANY_TAG)
        rc = mpi_fail(job, comm, call, MPI_ERR_TAG,
                      "tag is MPI_ANY_TAG: a partitioned receive names its tag");
    if (!rc) rc = mpi_p2p_check(job, call, buf, (int)count, dt, peer, tag, comm, !send, &c, &t);
    if (!rc) rc = mpi_info_arg(job, comm, call, info, true);
    if (!rc && !req) rc = mpi_fail(job, comm, call, MPI_ERR_REQUEST, "request is NULL");
    size_t pbytes = (size_t)count * (t ? t->size : 0);
    if (!rc && pbytes && (size_t)partitions > SIZE_MAX / pbytes)
        rc = mpi_fail(job, comm, call, MPI_ERR_COUNT, "%d partitions of %zu bytes do not fit",
                      partitions, pbytes);
    uint32_t chan = 0;
    if (!rc && send && peer != MPI_PROC_NULL) {
        if (!PS->chan_used) {
            PS->chan_used = calloc(CHAN_MAX / 64, sizeof *PS->chan_used);
            if (!PS->chan_used) cr_fatal(job, call, "out of memory");
        }
        uint32_t k = 0;
        for (chan = PS->next_chan; k < CHAN_MAX; k++, chan = (chan + 1) % CHAN_MAX)
            if (!(PS->chan_used[chan / 64] & (1ull << (chan % 64)))) break;
        if (k == CHAN_MAX)
            rc = mpi_fail(job, comm, call, MPI_ERR_OTHER,
                          "%u partitioned sends are alive on this rank: free some "
                          "(MPI_Request_free) first",
                          CHAN_MAX);
    }
    if (rc) return mpi_leave(job, rc);
    mpi_prt *p = calloc(1, sizeof *p);
    if (!p) cr_fatal(job, call, "out of memory for a partitioned request");
    *p = (mpi_prt){.send = send,
                   .comm = comm,
                   .peer = peer,
                   .peer_job = peer == MPI_PROC_NULL ? -1 : comm_peer_to_job(c, peer),
                   .ctx = c->ctx,
                   .tag = tag,
                   .buf = (char *)buf,
                   .parts = partitions,
                   .count = (size_t)count,
                   .type = t->idx,
                   .pbytes = pbytes,
                   .total = pbytes * (size_t)partitions};
    t->refs++;
    if (!t->contig && p->total) {
        p->stage = malloc(p->total);
        p->unpacked = send ? NULL : calloc((size_t)partitions, 1);
        if (!p->stage || (!send && !p->unpacked))
            cr_fatal(job, call, "out of memory for %zu bytes of staging", p->total);
    }
    if (send && peer != MPI_PROC_NULL) {
        PS->chan_used[chan / 64] |= 1ull << (chan % 64);
        PS->next_chan = (chan + 1) % CHAN_MAX;
        p->chan = chan;
        p->nwire = wire_chunks(job, p->peer_job, p->total, partitions);
        p->hello = (hello_msg){.ctx = c->ctx,
                               .tag = tag,
                               .chan = (int32_t)chan,
                               .nwire = p->nwire,
                               .parts = (uint64_t)partitions,
                               .pbytes = pbytes};
        p->left = calloc((size_t)p->nwire, sizeof *p->left);
        p->due = calloc((size_t)p->nwire, sizeof *p->due);
        p->ready = calloc((size_t)partitions, 1);
        p->wr = calloc((size_t)p->nwire, sizeof *p->wr);
        if (!p->left || !p->due || !p->ready || !p->wr)
            cr_fatal(job, call, "out of memory for %d partitions", partitions);
        p->hr = cr_isend(job, call, p->peer_job, PCTX, HELLO_TAG, &p->hello, sizeof p->hello);
    }
    if (!send && peer != MPI_PROC_NULL) {
        mpi_prt **end = &PS->recvs;
        while (*end) end = &(*end)->next;
        *end = p;
        hellos_pump(job, call);
        hellos_assign(job, call);
    }
    rc = mpi_request_ext_persistent(job, comm, send ? &psend_ops : &precv_ops, prt_start, p, req);
    return mpi_leave(job, rc);
}

PMPI_WEAK(Psend_init);
int PMPI_Psend_init(const void *buf, int partitions, MPI_Count count, MPI_Datatype datatype,
                    int dest, int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return init_common("MPI_Psend_init", true, buf, partitions, count, datatype, dest, tag, comm,
                       info, request);
}

PMPI_WEAK(Precv_init);
int PMPI_Precv_init(void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int source,
                    int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return init_common("MPI_Precv_init", false, buf, partitions, count, datatype, source, tag, comm,
                       info, request);
}

PMPI_WEAK(Psend_init_c);
int PMPI_Psend_init_c(const void *buf, int partitions, MPI_Count count, MPI_Datatype datatype,
                      int dest, int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return init_common("MPI_Psend_init_c", true, buf, partitions, count, datatype, dest, tag, comm,
                       info, request);
}

PMPI_WEAK(Precv_init_c);
int PMPI_Precv_init_c(void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int source,
                      int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return init_common("MPI_Precv_init_c", false, buf, partitions, count, datatype, source, tag,
                       comm, info, request);
}

/* ---- MPI_Pready, MPI_Parrived ------------------------------------------------------ */

/* The active request h of ops, or an error reported. */
static int prt_arg(cr_job *job, const char *call, MPI_Request h, const mpi_ext_ops *ops,
                   const char *want, mpi_prt **out)
{
    bool active = false;
    mpi_prt *p = mpi_request_ext_obj(h, ops, &active);
    *out = p;
    if (!p)
        return mpi_fail(job, MPI_COMM_WORLD, call, MPI_ERR_REQUEST,
                        "request %#x is not a live request made by %s", (unsigned)h, want);
    if (!active && ops == &psend_ops)
        return mpi_fail(job, p->comm, call, MPI_ERR_REQUEST,
                        "request %#x is inactive: start it (MPI_Start) before marking "
                        "partitions ready",
                        (unsigned)h);
    return 0;
}

/* Mark partition k of p ready; a chunk it completes is due (ready_flush). */
static int ready_one(cr_job *job, const char *call, mpi_prt *p, int k)
{
    if (k < 0 || k >= p->parts)
        return mpi_fail(job, p->comm, call, MPI_ERR_ARG,
                        "partition %d is out of range: this request has partitions 0..%d", k,
                        p->parts - 1);
    if (p->peer == MPI_PROC_NULL) return 0;
    if (p->ready[k])
        return mpi_fail(job, p->comm, call, MPI_ERR_ARG,
                        "partition %d is already marked ready in this round", k);
    p->ready[k] = 1;
    mpi_type *t = ptype(p);
    if (p->stage)
        mpi_pack_data(t, p->buf + (ptrdiff_t)((size_t)k * p->count) * type_extent(t), p->count,
                      p->stage + (size_t)k * p->pbytes);
    const hello_msg *h = &p->hello;
    uint64_t j = chunk_of(h, (uint64_t)k);
    if (!--p->left[j]) p->due[p->ndue++] = (uint32_t)j;
    return 0;
}

/* Send the chunks the call completed: each run of consecutive complete chunks
 * not yet sent as one message from its first chunk, and a message of no
 * bytes for each of its other chunks (the protocol above). */
static void ready_flush(cr_job *job, const char *call, mpi_prt *p)
{
    const hello_msg *h = &p->hello;
    char *base = p->stage ? p->stage : p->buf;
    for (int i = 0; i < p->ndue; i++) {
        uint32_t a = p->due[i], b = a + 1;
        if (p->wr[a]) continue; /* went with an earlier run of this call */
        while (a > 0 && !p->left[a - 1] && !p->wr[a - 1]) a--;
        while (b < (uint32_t)p->nwire && !p->left[b] && !p->wr[b]) b++;
        uint64_t off = ws(h, a) * p->pbytes, end = ws(h, b) * p->pbytes;
        for (uint32_t c = a; c < b; c++)
            p->wr[c] = cr_isend(job, call, p->peer_job, PCTX, (int32_t)((p->chan << 16) | c),
                                c == a ? base + off : NULL, c == a ? (size_t)(end - off) : 0);
        p->nsent += (int)(b - a);
    }
    p->ndue = 0;
}

PMPI_WEAK(Pready);
int PMPI_Pready(int partition, MPI_Request request)
{
    const char *call = "MPI_Pready";
    cr_job *job = mpi_enter(call);
    mpi_prt *p;
    int rc = prt_arg(job, call, request, &psend_ops, "MPI_Psend_init", &p);
    if (!rc) rc = ready_one(job, call, p, partition);
    if (p) ready_flush(job, call, p);
    return mpi_leave(job, rc);
}

PMPI_WEAK(Pready_range);
int PMPI_Pready_range(int partition_low, int partition_high, MPI_Request request)
{
    const char *call = "MPI_Pready_range";
    cr_job *job = mpi_enter(call);
    mpi_prt *p;
    int rc = prt_arg(job, call, request, &psend_ops, "MPI_Psend_init", &p);
    if (!rc && partition_low > partition_high)
        rc = mpi_fail(job, p->comm, call, MPI_ERR_ARG, "partition_low %d > partition_high %d",
                      partition_low, partition_high);
    for (int k = partition_low; !rc && k <= partition_high; k++) rc = ready_one(job, call, p, k);
    if (p) ready_flush(job, call, p);
    return mpi_leave(job, rc);
}

PMPI_WEAK(Pready_list);
int PMPI_Pready_list(int length, const int array_of_partitions[], MPI_Request request)
{
    const char *call = "MPI_Pready_list";
    cr_job *job = mpi_enter(call);
    mpi_prt *p;
    int rc = prt_arg(job, call, request, &psend_ops, "MPI_Psend_init", &p);
    if (!rc && (length < 0 || (length && !array_of_partitions)))
        rc = mpi_fail(job, p->comm, call, MPI_ERR_ARG,
                      "length %d with %s array: give length >= 0 partitions", length,
                      array_of_partitions ? "an" : "a NULL");
    for (int i = 0; !rc && i < length; i++) rc = ready_one(job, call, p, array_of_partitions[i]);
    if (p) ready_flush(job, call, p);
    return mpi_leave(job, rc);
}

PMPI_WEAK(Parrived);
int PMPI_Parrived(MPI_Request request, int partition, int *flag)
{
    const char *call = "MPI_Parrived";
    cr_job *job = mpi_enter(call);
    mpi_prt *p;
    int rc = prt_arg(job, call, request, &precv_ops, "MPI_Precv_init", &p);
    if (!rc && !flag) rc = mpi_fail(job, p->comm, call, MPI_ERR_ARG, "flag is NULL");
    if (!rc && (partition < 0 || partition >= p->parts))
        rc = mpi_fail(job, p->comm, call, MPI_ERR_ARG,
                      "partition %d is out of range: this request has partitions 0..%d", partition,
                      p->parts - 1);
    if (rc) return mpi_leave(job, rc);
    if (!p->active || p->peer == MPI_PROC_NULL) { /* complete, or never started */
        *flag = 1;
        return mpi_leave(job, MPI_SUCCESS);
    }
    if (!p->have_hello) hellos_pump(job, call);
    if (!rpart_in(p, partition)) cr_progress(job);
    *flag = rpart_in(p, partition);
    if (*flag)
        unpack_part(p, partition);
    else
        cr_poll_missed_direct(job, call);
    return mpi_leave(job, MPI_SUCCESS);
}
