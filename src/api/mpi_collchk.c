/* The argument checks of the MPI collectives, one copy for the blocking forms
 * (mpi_coll.c) and the nonblocking ones (mpi_nbc.c): the same call with the
 * same arguments is refused by both with the same code and message.
 *
 * Invariants: a check reports what it finds through mpi_fail (the
 * communicator's error handler) and returns the code; it changes nothing, so
 * a refused call has taken no sequence number and sent nothing. */
#include <stdarg.h>
#include <stdio.h>

#include "mpi_impl.h"

int mpi_cfail(const mpi_cargs *a, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = mpi_vfail(a->job, a->comm, a->call, code, fmt, ap);
    va_end(ap);
    return rc;
}

int mpi_chk_count(const mpi_cargs *a, int count, const char *what)
{
    return count < 0 ? mpi_cfail(a, MPI_ERR_COUNT, "%s %d is negative", what, count) : 0;
}

int mpi_chk_type(const mpi_cargs *a, MPI_Datatype dt, mpi_type **t)
{
    return mpi_type_check(a->job, a->comm, a->call, dt, t);
}

int mpi_chk_buf(const mpi_cargs *a, const void *buf, int count, const mpi_type *t, const char *what)
{
    if (buf == MPI_IN_PLACE)
        return mpi_cfail(a, MPI_ERR_BUFFER, "%s cannot be MPI_IN_PLACE here", what);
    if (!buf && count > 0 && t->predef && t->size)
        return mpi_cfail(a, MPI_ERR_BUFFER, "%s is NULL but count is %d", what, count);
    return 0;
}

int mpi_chk_root(const mpi_cargs *a, int root)
{
    if (a->c->inter) {
        if (root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < a->c->rsize))
            return 0;
        return mpi_cfail(a, MPI_ERR_ROOT,
                         "root %d is invalid on an intercommunicator: MPI_ROOT at the root, "
                         "MPI_PROC_NULL at the rest of its group, the root's rank 0..%d in the "
                         "other group",
                         root, a->c->rsize - 1);
    }
    if (root < 0 || root >= a->c->size)
        return mpi_cfail(a, MPI_ERR_ROOT,
                         "root %d is invalid: ranks in this communicator are 0..%d", root,
                         a->c->size - 1);
    return 0;
}

int mpi_chk_alias(const mpi_cargs *a, const void *s, const void *r, size_t len)
{
    if (s && s == r && len)
        return mpi_cfail(a, MPI_ERR_BUFFER,
                         "send and receive buffers are the same: use MPI_IN_PLACE instead");
    return 0;
}

int mpi_chk_no_inplace(const mpi_cargs *a, const void *buf)
{
    if (buf == MPI_IN_PLACE)
        return mpi_cfail(a, MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed on an intercommunicator");
    return 0;
}

int mpi_chk_triple(const mpi_cargs *a, const void *buf, int count, MPI_Datatype dt, mpi_type **t,
                   const char *what)
{
    int rc = mpi_chk_count(a, count, what);
    if (!rc) rc = mpi_chk_type(a, dt, t);
    if (!rc && buf != MPI_IN_PLACE && !buf && count > 0 && (*t)->predef && (*t)->size)
        rc = mpi_cfail(a, MPI_ERR_BUFFER, "%s buffer is NULL but its count is %d", what, count);
    return rc;
}

int mpi_chk_match(const mpi_cargs *a, size_t sbytes, size_t rbytes)
{
    if (sbytes != rbytes)
        return mpi_cfail(a, MPI_ERR_TRUNCATE,
                         "send block of %zu bytes and receive block of %zu bytes differ: the type "
                         "signatures must match",
                         sbytes, rbytes);
    return 0;
}

int mpi_chk_bcast(const mpi_cargs *a, void *buf, int count, MPI_Datatype dt, int root, mpi_type **t)
{
    int rc = mpi_chk_count(a, count, "count");
    if (!rc) rc = mpi_chk_type(a, dt, t);
    if (!rc) rc = mpi_chk_buf(a, buf, count, *t, "buffer");
    if (!rc) rc = mpi_chk_root(a, root);
    return rc;
}

int mpi_chk_gather(const mpi_cargs *a, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                   int rcount, MPI_Datatype rtype, int root, mpi_type **ts, mpi_type **tr)
{
    int rc = mpi_chk_root(a, root);
    bool isroot = !rc && a->c->me == root, inplace = sbuf == MPI_IN_PLACE;
    if (!rc && inplace && !isroot)
        rc = mpi_cfail(a, MPI_ERR_BUFFER, "MPI_IN_PLACE is for the root only");
    if (!rc && !inplace) rc = mpi_chk_triple(a, sbuf, scount, stype, ts, "send");
    if (!rc && isroot) rc = mpi_chk_triple(a, rbuf, rcount, rtype, tr, "receive");
    if (!rc && isroot && !inplace)
        rc = mpi_chk_match(a, (size_t)scount * (*ts)->size, (size_t)rcount * (*tr)->size);
    if (!rc && isroot) rc = mpi_chk_alias(a, sbuf, rbuf, (size_t)rcount * (*tr)->size);
    return rc;
}

int mpi_chk_scatter(const mpi_cargs *a, const void *sbuf, int scount, MPI_Datatype stype,
                    void *rbuf, int rcount, MPI_Datatype rtype, int root, mpi_type **ts,
                    mpi_type **tr)
{
    int rc = mpi_chk_root(a, root);
    bool isroot = !rc && a->c->me == root, inplace = rbuf == MPI_IN_PLACE;
    if (!rc && inplace && !isroot)
        rc = mpi_cfail(a, MPI_ERR_BUFFER, "MPI_IN_PLACE is for the root only");
    if (!rc && isroot) rc = mpi_chk_triple(a, sbuf, scount, stype, ts, "send");
    if (!rc && !inplace) rc = mpi_chk_triple(a, rbuf, rcount, rtype, tr, "receive");
    if (!rc && isroot && !inplace)
        rc = mpi_chk_match(a, (size_t)scount * (*ts)->size, (size_t)rcount * (*tr)->size);
    if (!rc && isroot) rc = mpi_chk_alias(a, sbuf, rbuf, (size_t)scount * (*ts)->size);
    return rc;
}

int mpi_chk_blocks(const mpi_cargs *a, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                   int rcount, MPI_Datatype rtype, mpi_type **ts, mpi_type **tr)
{
    bool inplace = sbuf == MPI_IN_PLACE;
    int rc = inplace ? MPI_SUCCESS : mpi_chk_triple(a, sbuf, scount, stype, ts, "send");
    if (!rc) rc = mpi_chk_triple(a, rbuf, rcount, rtype, tr, "receive");
    if (!rc && !inplace)
        rc = mpi_chk_match(a, (size_t)scount * (*ts)->size, (size_t)rcount * (*tr)->size);
    if (!rc) rc = mpi_chk_alias(a, sbuf, rbuf, (size_t)rcount * (*tr)->size);
    return rc;
}

int mpi_chk_reduce(const mpi_cargs *a, bool rooted, const void *sbuf, void *rbuf, int count,
                   MPI_Datatype dt, int root, mpi_type **t)
{
    int rc = rooted ? mpi_chk_root(a, root) : 0;
    if (!rc) rc = mpi_chk_count(a, count, "count");
    if (!rc) rc = mpi_chk_type(a, dt, t);
    bool recv_here = !rooted || a->c->me == root, inplace = sbuf == MPI_IN_PLACE;
    if (!rc && inplace && !recv_here)
        rc = mpi_cfail(a, MPI_ERR_BUFFER, "MPI_IN_PLACE is for the root only");
    if (!rc && !inplace) rc = mpi_chk_buf(a, sbuf, count, *t, "send buffer");
    if (!rc && recv_here) rc = mpi_chk_buf(a, rbuf, count, *t, "receive buffer");
    if (!rc && recv_here) rc = mpi_chk_alias(a, sbuf, rbuf, (size_t)count * (*t)->size);
    return rc;
}

int mpi_chk_counts(const mpi_cargs *a, const int *counts, const int *displs, const char *what)
{
    if (!counts || !displs) return mpi_cfail(a, MPI_ERR_ARG, "%scounts or displs is NULL", what);
    for (int i = 0, np = comm_peer_size(a->c); i < np; i++)
        if (counts[i] < 0)
            return mpi_cfail(a, MPI_ERR_COUNT, "%scounts[%d] = %d is negative", what, i, counts[i]);
    return 0;
}

void mpi_vlay_fill(mpi_vlay *v, const mpi_type *t, const int *counts, const int *displs, int np)
{
    v->off = v->len + np;
    v->staged = !t->contig;
    v->total = 0;
    for (int i = 0; i < np; i++) {
        v->len[i] = (size_t)counts[i] * t->size;
        v->off[i] = v->staged ? v->total : (size_t)((ptrdiff_t)displs[i] * type_extent(t));
        v->total += v->len[i];
    }
}
