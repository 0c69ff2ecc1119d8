/* MPI point-to-point's private header (mpi_p2p.c, mpi_req.c): the request
 * object and what the two files share. mpi_p2p.c posts operations (sends,
 * receives, probes, matched probes, persistent requests' start);
 * mpi_req.c keeps the request table and completes requests (every wait and
 * test form, free, cancel, generalized requests, status queries).
 *
 * Invariants: those of mpi_p2p.c's opening comment; and a request slot
 * (mreq) is in job->mpi->p2p.reqs from req_new until retired, its kind
 * saying what it carries. */
#ifndef COURIER_MPI_P2P_H
#define COURIER_MPI_P2P_H

#include "mpi_impl.h"

/* An MPI_Request and an MPI_Message are RQ_MARK | an id of job->mpi->p2p's tables (reqs, msgs)
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
    cr_idslot id; /* its slot in job->mpi->p2p.reqs */
    uint8_t kind;
    bool freed;     /* MPI_Request_free while active: retire when complete */
    bool cancelled; /* receive: taken off the posted queue (a send: see q->r->cancel) */
    cr_req *r;
    char *tmp;  /* packed copy (send) or staging buffer (receive) */
    void *ubuf; /* receive: where to unpack */
    size_t count;
    int type;         /* receive with tmp: index of the datatype (holds a reference) */
    uint32_t umask;   /* receive: its datatype's mpi_unit_mask; a message of a length with
                         any of these bits set does not match it (MPI_ERR_TYPE) */
    MPI_Comm comm;    /* for errors and rank translation */
    const char *call; /* the call that made it (courier run --check=leaks) */
    /* courier run --check=buffers: a nonblocking send's or staged receive's
     * buffer (cbuf NULL: not checked), its checksum at the start, and its peer */
    const void *cbuf;
    size_t clen;
    uint64_t csum;
    int cpeer, ctag;
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

/* What a receive completed as cs, into a datatype of unit mask umask
 * (mpi_unit_mask), must report: MPI_ERR_TRUNCATE for a message longer than
 * its buffer, MPI_ERR_TYPE for one that ends inside a basic element, else
 * MPI_SUCCESS. */
static inline int mpi_recv_err(const cr_status *cs, uint32_t umask)
{
    return cs->size > cs->count ? MPI_ERR_TRUNCATE : cs->size & umask ? MPI_ERR_TYPE : MPI_SUCCESS;
}
/* Report err (mpi_recv_err's) through comm's handler, saying what arrived
 * from src (its rank in comm). */
int mpi_recv_fail(cr_job *job, MPI_Comm comm, const char *call, int err, const cr_status *cs,
                  int src, uint32_t umask);

static inline void status_empty(MPI_Status *st)
{
    if (st == MPI_STATUS_IGNORE || !st) return;
    st->MPI_SOURCE = MPI_ANY_SOURCE;
    st->MPI_TAG = MPI_ANY_TAG;
    st->MPI_ERROR = MPI_SUCCESS;
    st->cr_cancelled = 0;
    st->cr_bytes = 0;
}

static inline bool ignore(const MPI_Status *st)
{
    return st == MPI_STATUS_IGNORE || !st;
}

/* Request slot i of the table (for a walk over it). */
static inline mreq *slot(int i)
{
    return cr_idt_at(&mpi_st()->p2p.reqs, (uint32_t)i);
}

/* The slot of handle h; NULL when h names none (freed ones only with freed_ok). */
static inline mreq *req_lookup(MPI_Request h, bool freed_ok)
{
    if (((unsigned)h & 0xc0000000u) != RQ_MARK) return NULL;
    mreq *q = cr_idt_get(&mpi_st()->p2p.reqs, (unsigned)h & ~RQ_MARK);
    return q && (freed_ok || !q->freed) ? q : NULL;
}

static inline mreq *req_get(MPI_Request h)
{
    return req_lookup(h, false);
}

/* The request of handle h for the wait/test forms, after reqs_check: NULL for
 * MPI_REQUEST_NULL and an inactive persistent request. */
static inline mreq *active(MPI_Request h)
{
    mreq *q = h == MPI_REQUEST_NULL ? NULL : req_get(h);
    return q && q->kind != RQ_IDLE ? q : NULL;
}

/* A new request of kind in a slot, its handle in *handle (mpi_req.c). */
mreq *req_new(cr_job *job, const char *call, uint8_t kind, MPI_Comm comm, MPI_Request *handle);
/* Complete the done request q: its status into st, its slot freed or, persistent, made
 * inactive (h set to MPI_REQUEST_NULL where freed); its error code (mpi_req.c). */
int finish(cr_job *job, const char *call, mreq *q, MPI_Status *st, MPI_Request *h, bool multi);
/* Block until q's operation is done (mpi_req.c). */
void req_wait(cr_job *job, const char *call, mreq *q);

#endif
