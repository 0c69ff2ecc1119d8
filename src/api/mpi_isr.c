/* MPI-4.0 calls made of other requests: MPI_Isendrecv, MPI_Isendrecv_replace
 * (a receive and a send under one request), MPI_Comm_idup_with_info (an
 * MPI_Comm_idup whose completion sets the new communicator's hints), and the
 * use of the communicator assertions (mpi_assert_no_any_source / _tag) that
 * the receive paths ask about (mpi_assert_wild).
 *
 * Invariants:
 *  - the arguments are checked here, under the call's own name, before the
 *    inner requests are made (PMPI_Irecv, PMPI_Isend, PMPI_Comm_idup), so an
 *    inner call never fails on what was checked; the outer request (an
 *    mpi_request_ext of this file) owns the inner ones and completes only once
 *    every inner one has completed, which it then completes itself (statuses,
 *    unpacking, slots: mpi_request_take), exactly once;
 *  - MPI_Isendrecv_replace sends from a packed copy of the buffer made at the
 *    call, so the receive may land in the buffer at any time; the copy lives
 *    until the outer request is released;
 *  - the status of an Isendrecv is the receive's; an error of the receive
 *    (truncation) is the request's error, reported by the wait/test;
 *  - the assertion keys are read from the communicator's hints only on the
 *    wildcard paths: an ordinary receive costs nothing more. */
#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

/* ---- MPI_Isendrecv, MPI_Isendrecv_replace ----------------------------------- */

typedef struct isr {
    MPI_Request rq, sq; /* the receive and the send (MPI_REQUEST_NULL once taken) */
    char *copy;         /* _replace: the packed data sent */
} isr;

static bool isr_test(cr_job *job, void *obj, MPI_Status *st)
{
    isr *x = obj;
    if (!mpi_request_done(job, x->rq) || !mpi_request_done(job, x->sq)) return false;
    int err = mpi_request_take(job, &x->rq, st);
    mpi_request_take(job, &x->sq, MPI_STATUS_IGNORE); /* a send has no error of its own */
    st->MPI_ERROR = err;
    return true;
}

static void isr_free(cr_job *job, void *obj)
{
    isr *x = obj;
    (void)job;
    free(x->copy);
    free(x);
}

static const mpi_ext_ops isr_ops = {.what = "MPI_Isendrecv", .test = isr_test, .free = isr_free};
static const mpi_ext_ops isrr_ops = {
    .what = "MPI_Isendrecv_replace", .test = isr_test, .free = isr_free};

/* Post the inner receive and send (the arguments checked) and make the outer
 * request; sbuf/scount/stype is what to send (the packed copy for _replace). */
static int isr_post(cr_job *job, const mpi_ext_ops *ops, isr *x, const void *sbuf, int scount,
                    MPI_Datatype stype, int dest, int stag, void *rbuf, int rcount,
                    MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Request *req)
{
    mpi_leave(job, 0);
    int rc = PMPI_Irecv(rbuf, rcount, rtype, source, rtag, comm, &x->rq);
    if (!rc) rc = PMPI_Isend(sbuf, scount, stype, dest, stag, comm, &x->sq);
    cr_lock(job);
    if (rc) { /* only under MPI_THREAD_MULTIPLE, with another thread freeing what we use */
        if (x->rq != MPI_REQUEST_NULL) mpi_request_take(job, &x->rq, MPI_STATUS_IGNORE);
        isr_free(job, x);
        return mpi_leave(job, rc);
    }
    return mpi_leave(job, mpi_request_ext(job, comm, ops, x, req));
}

static isr *isr_new(cr_job *job, const char *call)
{
    isr *x = calloc(1, sizeof *x);
    if (!x) cr_fatal(job, call, "out of memory for a request");
    x->rq = x->sq = MPI_REQUEST_NULL;
    return x;
}

PMPI_WEAK(Isendrecv);
int PMPI_Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                   void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                   MPI_Comm comm, MPI_Request *request)
{
    const char *call = "MPI_Isendrecv";
    cr_job *job = mpi_enter(call);
    mpi_comm *c = NULL;
    mpi_type *ts = NULL, *tr = NULL;
    int rc =
        mpi_p2p_check(job, call, sendbuf, sendcount, sendtype, dest, sendtag, comm, false, &c, &ts);
    if (!rc)
        rc = mpi_p2p_check(job, call, recvbuf, recvcount, recvtype, source, recvtag, comm, true, &c,
                           &tr);
    if (!rc && !request) rc = mpi_fail(job, comm, call, MPI_ERR_REQUEST, "request is NULL");
    if (rc) return mpi_leave(job, rc);
    return isr_post(job, &isr_ops, isr_new(job, call), sendbuf, sendcount, sendtype, dest, sendtag,
                    recvbuf, recvcount, recvtype, source, recvtag, comm, request);
}

PMPI_WEAK(Isendrecv_replace);
int PMPI_Isendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                           int source, int recvtag, MPI_Comm comm, MPI_Request *request)
{
    const char *call = "MPI_Isendrecv_replace";
    cr_job *job = mpi_enter(call);
    mpi_comm *c = NULL;
    mpi_type *t = NULL;
    int rc = mpi_p2p_check(job, call, buf, count, datatype, dest, sendtag, comm, false, &c, &t);
    if (!rc)
        rc = mpi_p2p_check(job, call, buf, count, datatype, source, recvtag, comm, true, &c, &t);
    if (!rc && !request) rc = mpi_fail(job, comm, call, MPI_ERR_REQUEST, "request is NULL");
    if (rc) return mpi_leave(job, rc);
    isr *x = isr_new(job, call);
    size_t len = (size_t)count * t->size;
    if (len > INT32_MAX)
        return mpi_leave(job, mpi_fail(job, comm, call, MPI_ERR_COUNT,
                                       "%zu bytes are more than one message of MPI_BYTE can "
                                       "carry here (%d): send it in parts",
                                       len, INT32_MAX));
    x->copy = malloc(len ? len : 1);
    if (!x->copy) cr_fatal(job, call, "out of memory for a %zu-byte copy of the buffer", len);
    mpi_pack_data(t, buf, (size_t)count, x->copy);
    return isr_post(job, &isrr_ops, x, x->copy, (int)len, MPI_BYTE, dest, sendtag, buf, count,
                    datatype, source, recvtag, comm, request);
}

/* ---- MPI_Comm_idup_with_info -------------------------------------------------- */

typedef struct idupi {
    MPI_Request inner; /* the MPI_Comm_idup */
    MPI_Comm *newcomm;
    MPI_Info info; /* a copy of the hints to set (MPI_INFO_NULL: none) */
} idupi;

static bool idupi_test(cr_job *job, void *obj, MPI_Status *st)
{
    idupi *x = obj;
    if (!mpi_request_done(job, x->inner)) return false;
    int err = mpi_request_take(job, &x->inner, st);
    if (!err && *x->newcomm != MPI_COMM_NULL)
        mpi_comm_hints_replace(job, "MPI_Comm_idup_with_info", *x->newcomm, x->info);
    st->MPI_ERROR = err;
    return true;
}

static void idupi_free(cr_job *job, void *obj)
{
    idupi *x = obj;
    (void)job;
    mpi_info_drop(x->info);
    free(x);
}

static const mpi_ext_ops idupi_ops = {
    .what = "MPI_Comm_idup_with_info", .test = idupi_test, .free = idupi_free};

PMPI_WEAK(Comm_idup_with_info);
int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request)
{
    const char *call = "MPI_Comm_idup_with_info";
    cr_job *job = mpi_enter(call);
    mpi_comm *c = NULL;
    int rc = mpi_comm_check(job, call, comm, &c);
    if (!rc) rc = mpi_info_arg(job, comm, call, info, true); /* as MPI_Comm_dup_with_info */
    if (!rc && !newcomm) rc = mpi_fail(job, comm, call, MPI_ERR_ARG, "newcomm is NULL");
    if (!rc && !request) rc = mpi_fail(job, comm, call, MPI_ERR_REQUEST, "request is NULL");
    if (rc) return mpi_leave(job, rc);
    idupi *x = calloc(1, sizeof *x);
    if (!x) cr_fatal(job, call, "out of memory for a request");
    x->newcomm = newcomm;
    x->info = mpi_info_copy(info); /* the program may free its info at once (NULL: none) */
    mpi_leave(job, 0);
    rc = PMPI_Comm_idup(comm, newcomm, &x->inner);
    cr_lock(job);
    if (rc) {
        idupi_free(job, x);
        return mpi_leave(job, rc);
    }
    return mpi_leave(job, mpi_request_ext(job, comm, &idupi_ops, x, request));
}

/* ---- communicator assertions (MPI-4.0 §7.4.4) ------------------------------------ */

static bool asserted(const mpi_comm *c, const char *key)
{
    const char *v = mpi_info_lookup(c->info, key);
    return v && !strcmp(v, "true");
}

int mpi_assert_wild_check(cr_job *job, const char *call, MPI_Comm comm, const mpi_comm *c,
                          int source, int tag)
{
    if (source == MPI_ANY_SOURCE && asserted(c, "mpi_assert_no_any_source"))
        return mpi_fail(job, comm, call, MPI_ERR_ARG,
                        "source is MPI_ANY_SOURCE on a communicator whose info asserts "
                        "mpi_assert_no_any_source: name the source, or receive on a "
                        "communicator without that assertion");
    if (tag == MPI_ANY_TAG && asserted(c, "mpi_assert_no_any_tag"))
        return mpi_fail(job, comm, call, MPI_ERR_ARG,
                        "tag is MPI_ANY_TAG on a communicator whose info asserts "
                        "mpi_assert_no_any_tag: name the tag, or receive on a communicator "
                        "without that assertion");
    return 0;
}
