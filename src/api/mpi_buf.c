/* MPI-4.1 buffers for buffered sends per communicator (MPI_Comm_attach_buffer,
 * MPI_Comm_detach_buffer), flushing them (MPI_Buffer_flush/_iflush,
 * MPI_Comm_flush_buffer/_iflush_buffer) and MPI_BUFFER_AUTOMATIC; the pools'
 * bookkeeping that MPI_Buffer_attach/_detach (mpi_p2p.c) share. A pool's size
 * is a size_t: the _c forms attach more than INT_MAX bytes, and an int
 * detach of such a buffer says MPI_UNDEFINED for its size.
 *
 * courier copies a buffered send's data into memory of its own: an attached
 * buffer only bounds the bytes (+ MPI_BSEND_OVERHEAD each) that the buffered
 * sends charged to it may hold until delivered; MPI_BUFFER_AUTOMATIC sets no
 * bound. A buffered send on a communicator with a buffer of its own is charged
 * to that one, else to its session's when it was made from a session's group
 * and the session has one (MPI_Session_attach_buffer, mpi_session.c), else to
 * the process's (MPI-4.1 §4.6).
 *
 * Invariants:
 *  - a communicator's or a session's pool is in job->mpi->mpi4.bufs, keyed by the communicator's
 *    table index while attached (comm >= 0); detaching or freeing the
 *    communicator sets comm -1, and the struct is reused by a later attach
 *    only once nothing is charged to it (pending sends point at it): pools are
 *    never freed;
 *  - detach and flush return only once every buffered send charged to the pool
 *    has been delivered (the request layer's list, mpi_bsends_done). */
#include <limits.h>
#include <stdlib.h>

#include "mpi_impl.h"

#define BS (&job->mpi->mpi4)

mpi_bpool *mpi_bpool_of(MPI_Comm comm)
{
    const mpi4_state *bs = &mpi_st()->mpi4; /* no job at hand: the state's accessor */
    if (!bs->bufs || !h_is(comm, K_COMM)) return NULL;
    for (mpi_bpool *b = bs->bufs; b; b = b->next)
        if (b->comm == h_idx(comm)) return b;
    return NULL;
}

void mpi_bpool_attach(mpi_bpool *b, void *buf, MPI_Count size)
{
    b->buf = buf ? buf : (void *)b;
    b->size = buf == MPI_BUFFER_AUTOMATIC ? SIZE_MAX : (size_t)size;
}

MPI_Count mpi_bpool_size(const mpi_bpool *b)
{
    return !b || !b->buf || b->buf == MPI_BUFFER_AUTOMATIC ? 0 : (MPI_Count)b->size;
}

void mpi_bpool_detach(mpi_bpool *b, void *buffer_addr, int *isize, MPI_Count *csize)
{
    MPI_Count n = mpi_bpool_size(b);
    *(void **)buffer_addr = b->buf == (void *)b ? NULL : b->buf;
    if (csize)
        *csize = n;
    else
        *isize = n > INT_MAX ? MPI_UNDEFINED : (int)n; /* attached by a _c form */
    b->buf = NULL;
    b->size = 0;
}

void mpi_bpool_forget(int comm_idx)
{
    for (mpi_bpool *b = mpi_st()->mpi4.bufs; b; b = b->next)
        if (b->comm == comm_idx) {
            b->comm = -1;
            b->buf = NULL;
            b->size = 0;
        }
}

mpi_bpool *mpi_bpool_of_session(cr_job *job, int session)
{
    for (mpi_bpool *b = BS->bufs; b && session; b = b->next)
        if (b->session == session) return b;
    return NULL;
}

mpi_bpool *mpi_bpool_for(cr_job *job, MPI_Comm comm)
{
    mpi_bpool *b = mpi_bpool_of(comm);
    const mpi_comm *c = b ? NULL : mpi_comm_get(comm);
    if (c && c->session) b = mpi_bpool_of_session(job, c->session);
    return b ? b : &job->mpi->p2p.proc;
}

mpi_bpool *mpi_bpool_new(cr_job *job, const char *call)
{
    mpi_bpool *b = BS->bufs;
    while (b && (b->comm >= 0 || b->session || b->used)) b = b->next;
    if (!b) {
        b = calloc(1, sizeof *b);
        if (!b) cr_fatal(job, call, "out of memory");
        b->next = BS->bufs;
        BS->bufs = b;
    }
    b->comm = -1;
    b->session = 0;
    return b;
}

void mpi_bpool_drain(cr_job *job, const char *call, mpi_bpool *b)
{
    cr_wait_until(job, call, mpi_bsends_done, b, NULL);
    mpi_bpool_process(job); /* reaps: the space comes back */
}

static int buf_args(cr_job *job, const char *call, MPI_Comm comm, const void *buffer,
                    MPI_Count size)
{
    if (buffer != MPI_BUFFER_AUTOMATIC && (size < 0 || (!buffer && size)))
        return mpi_fail(job, comm, call, MPI_ERR_BUFFER, "buffer %p of %lld bytes is invalid",
                        buffer, (long long)size);
    return 0;
}

static int comm_attach(const char *call, MPI_Comm comm, void *buffer, MPI_Count size)
{
    cr_job *job = mpi_enter(call);
    mpi_comm *c = NULL;
    int rc = mpi_comm_check(job, call, comm, &c);
    if (!rc) rc = buf_args(job, call, comm, buffer, size);
    if (!rc && mpi_bpool_of(comm))
        rc = mpi_fail(job, comm, call, MPI_ERR_BUFFER,
                      "this communicator has a buffer attached already: detach it first "
                      "(MPI_Comm_detach_buffer)");
    if (rc) return mpi_leave(job, rc);
    mpi_bpool *b = mpi_bpool_new(job, call);
    b->comm = h_idx(comm);
    mpi_bpool_attach(b, buffer, size);
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Comm_attach_buffer);
int PMPI_Comm_attach_buffer(MPI_Comm comm, void *buffer, int size)
{
    return comm_attach("MPI_Comm_attach_buffer", comm, buffer, size);
}

PMPI_WEAK(Comm_attach_buffer_c);
int PMPI_Comm_attach_buffer_c(MPI_Comm comm, void *buffer, MPI_Count size)
{
    return comm_attach("MPI_Comm_attach_buffer_c", comm, buffer, size);
}

/* The int form's size is MPI_UNDEFINED for a buffer of more than INT_MAX
 * bytes (attached by the _c form); the buffer is detached all the same. */
static int comm_detach(const char *call, MPI_Comm comm, void *buffer_addr, int *isize,
                       MPI_Count *csize)
{
    cr_job *job = mpi_enter(call);
    mpi_comm *c = NULL;
    int rc = mpi_comm_check(job, call, comm, &c);
    if (!rc && (!buffer_addr || (!isize && !csize)))
        rc = mpi_fail(job, comm, call, MPI_ERR_ARG, "buffer_addr or size is NULL");
    mpi_bpool *b = rc ? NULL : mpi_bpool_of(comm);
    if (!rc && !b)
        rc = mpi_fail(job, comm, call, MPI_ERR_BUFFER,
                      "no buffer is attached to this communicator (MPI_Comm_attach_buffer)");
    if (rc) return mpi_leave(job, rc);
    mpi_bpool_drain(job, call, b);
    mpi_bpool_detach(b, buffer_addr, isize, csize);
    b->comm = -1;
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Comm_detach_buffer);
int PMPI_Comm_detach_buffer(MPI_Comm comm, void *buffer_addr, int *size)
{
    return comm_detach("MPI_Comm_detach_buffer", comm, buffer_addr, size, NULL);
}

PMPI_WEAK(Comm_detach_buffer_c);
int PMPI_Comm_detach_buffer_c(MPI_Comm comm, void *buffer_addr, MPI_Count *size)
{
    return comm_detach("MPI_Comm_detach_buffer_c", comm, buffer_addr, NULL, size);
}

/* ---- flushing: wait until every buffered send charged to the pool is
 * delivered; the nonblocking forms are requests that complete then ---------- */

typedef struct bflush {
    mpi_bpool *pool;
} bflush;

static bool bflush_test(cr_job *job, void *obj, MPI_Status *st)
{
    (void)st;
    bflush *f = obj;
    if (!mpi_bsends_done(f->pool)) return false;
    mpi_bpool_process(job);
    return true;
}

static void bflush_free(cr_job *job, void *obj)
{
    (void)job;
    free(obj);
}

static const mpi_ext_ops iflush_ops = {
    .what = "MPI_Buffer_iflush", .test = bflush_test, .free = bflush_free};
static const mpi_ext_ops ciflush_ops = {
    .what = "MPI_Comm_iflush_buffer", .test = bflush_test, .free = bflush_free};
static const mpi_ext_ops siflush_ops = {
    .what = "MPI_Session_iflush_buffer", .test = bflush_test, .free = bflush_free};

int mpi_bpool_iflush(cr_job *job, mpi_bpool *b, MPI_Request *req)
{
    bflush *f = malloc(sizeof *f);
    if (!f) cr_fatal(job, siflush_ops.what, "out of memory");
    f->pool = b;
    return mpi_request_ext(job, MPI_COMM_WORLD, &siflush_ops, f, req);
}

/* The pool of comm (MPI_COMM_NULL: the process's) for a flush, or an error. */
static int flush_pool(cr_job *job, const char *call, MPI_Comm comm, mpi_bpool **out)
{
    if (comm == MPI_COMM_NULL) {
        *out = mpi_bpool_process(job);
        return 0;
    }
    mpi_comm *c = NULL;
    int rc = mpi_comm_check(job, call, comm, &c);
    *out = rc ? NULL : mpi_bpool_of(comm);
    if (!rc && !*out)
        rc = mpi_fail(job, comm, call, MPI_ERR_BUFFER,
                      "no buffer is attached to this communicator (MPI_Comm_attach_buffer)");
    return rc;
}

static int flush_common(const char *call, MPI_Comm comm)
{
    cr_job *job = mpi_enter(call);
    mpi_bpool *b;
    int rc = flush_pool(job, call, comm, &b);
    if (rc) return mpi_leave(job, rc);
    mpi_bpool_drain(job, call, b);
    return mpi_leave(job, MPI_SUCCESS);
}

static int iflush_common(const char *call, MPI_Comm comm, const mpi_ext_ops *ops, MPI_Request *req)
{
    cr_job *job = mpi_enter(call);
    mpi_bpool *b;
    int rc = flush_pool(job, call, comm, &b);
    if (!rc && !req)
        rc = mpi_fail(job, comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm, call, MPI_ERR_REQUEST,
                      "request is NULL");
    if (rc) return mpi_leave(job, rc);
    bflush *f = malloc(sizeof *f);
    if (!f) cr_fatal(job, call, "out of memory");
    f->pool = b;
    return mpi_leave(
        job, mpi_request_ext(job, comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm, ops, f, req));
}

PMPI_WEAK(Buffer_flush);
int PMPI_Buffer_flush(void)
{
    return flush_common("MPI_Buffer_flush", MPI_COMM_NULL);
}

PMPI_WEAK(Buffer_iflush);
int PMPI_Buffer_iflush(MPI_Request *request)
{
    return iflush_common("MPI_Buffer_iflush", MPI_COMM_NULL, &iflush_ops, request);
}

PMPI_WEAK(Comm_flush_buffer);
int PMPI_Comm_flush_buffer(MPI_Comm comm)
{
    return flush_common("MPI_Comm_flush_buffer", comm);
}

PMPI_WEAK(Comm_iflush_buffer);
int PMPI_Comm_iflush_buffer(MPI_Comm comm, MPI_Request *request)
{
    return iflush_common("MPI_Comm_iflush_buffer", comm, &ciflush_ops, request);
}
