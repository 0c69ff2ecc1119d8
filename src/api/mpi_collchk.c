/* The argument checks of the MPI collectives, one copy for the blocking forms
 * (mpi_coll.c) and the nonblocking ones (mpi_nbc.c): the same call with the
 * same arguments is refused by both with the same code and message.
 *
 * Invariants: a check reports what it finds through mpi_fail (the
 * communicator's error handler) and returns the code; it changes nothing, so
 * a refused call has taken no sequence number and sent nothing; a check that
 * passes gives a nonblocking collective's --check=coll record (a->chk, NULL
 * otherwise) what it found: the root, the counts and datatypes, and
 * --check=buffers the send buffers to watch (mpi_chk_nbc_buf). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "mpi_check.h"

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
    if (count >= 0) return 0;
    /* what: "count", or the side ("send" count, "receive" count) */
    return mpi_cfail(a, MPI_ERR_COUNT,
                     strcmp(what, "count") ? "%s count %d is negative" : "%s %d is negative", what,
                     count);
}

int mpi_chk_type(const mpi_cargs *a, MPI_Datatype dt, mpi_type **t)
{
    return mpi_type_check(a->job, a->comm, a->call, dt, t);
}

int mpi_chk_type_n(const mpi_cargs *a, MPI_Datatype dt, int count, mpi_type **t)
{
    return mpi_type_check_n(a->job, a->comm, a->call, dt, count, t);
}

int mpi_chk_buf(const mpi_cargs *a, const void *buf, int count, const mpi_type *t, const char *what)
{
    if (buf == MPI_IN_PLACE)
        return mpi_cfail(a, MPI_ERR_BUFFER, "%s cannot be MPI_IN_PLACE here", what);
    if (!buf && count > 0 && t->predef && t->size)
        return mpi_cfail(a, MPI_ERR_BUFFER, "%s is NULL but count is %d", what, count);
    if (!strcmp(what, "send buffer")) mpi_chk_nbc_buf(a, buf, count, t, what);
    return 0;
}

int mpi_chk_root(const mpi_cargs *a, int root)
{
    if (a->c->inter) {
        if (root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < a->c->rsize)) {
            mpi_chk_nbc(a, root, MPI_OP_NULL, 0, NULL, 0, NULL);
            return 0;
        }
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
    mpi_chk_nbc(a, root, MPI_OP_NULL, 0, NULL, 0, NULL);
    return 0;
}

int mpi_chk_alias(const mpi_cargs *a, const void *s, const void *r, size_t len)
{
    if (s && s == r && len)
        return mpi_cfail(a, MPI_ERR_BUFFER,
                         "send and receive buffers are the same: use MPI_IN_PLACE instead");
    return 0;
}

int mpi_chk_own_block(const mpi_cargs *a, const void *s, const void *whole, ptrdiff_t own,
                      size_t len)
{
    if (!len || !s || s == MPI_IN_PLACE || whole == MPI_IN_PLACE) return 0;
    if (s == whole || (const char *)s == (const char *)whole + own)
        return mpi_cfail(a, MPI_ERR_BUFFER,
                         "send and receive buffers overlap (one is %s of the other): use "
                         "MPI_IN_PLACE instead",
                         s == whole ? "the start" : "this rank's own block");
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
    if (!rc) rc = mpi_chk_type_n(a, dt, count, t);
    if (!rc && buf != MPI_IN_PLACE && !buf && count > 0 && (*t)->predef && (*t)->size)
        rc = mpi_cfail(a, MPI_ERR_BUFFER, "%s buffer is NULL but its count is %d", what, count);
    if (!rc && what[0] == 's') mpi_chk_nbc_buf(a, buf, count, *t, "send buffer");
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
    if (!rc) rc = mpi_chk_type_n(a, dt, count, t);
    if (!rc) rc = mpi_chk_buf(a, buf, count, *t, "buffer");
    if (!rc) rc = mpi_chk_root(a, root);
    if (!rc && !a->c->inter && a->c->me == root) mpi_chk_nbc_buf(a, buf, count, *t, "buffer");
    if (!rc) mpi_chk_nbc(a, root, MPI_OP_NULL, count, *t, count, *t);
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
    if (!rc && isroot)
        rc = mpi_chk_own_block(a, sbuf, rbuf, (ptrdiff_t)root * rcount * type_extent(*tr),
                               (size_t)rcount * (*tr)->size);
    if (!rc) mpi_chk_nbc(a, root, MPI_OP_NULL, scount, *ts, rcount, *tr);
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
    if (!rc && isroot)
        rc = mpi_chk_own_block(a, rbuf, sbuf, (ptrdiff_t)root * scount * type_extent(*ts),
                               (size_t)scount * (*ts)->size);
    if (!rc) mpi_chk_nbc(a, root, MPI_OP_NULL, scount, *ts, rcount, *tr);
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
    if (!rc)
        rc = mpi_chk_own_block(a, sbuf, rbuf,
                               a->c->inter ? 0 : (ptrdiff_t)a->c->me * rcount * type_extent(*tr),
                               (size_t)rcount * (*tr)->size);
    if (!rc) mpi_chk_nbc(a, -1, MPI_OP_NULL, scount, *ts, rcount, *tr);
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

int mpi_chk_xreduce(const mpi_cargs *a, bool all, const void *sbuf, void *rbuf, int count,
                    MPI_Datatype dt, int root, mpi_type **t)
{
    int rc = all ? 0 : mpi_chk_root(a, root);
    if (rc || (!all && root == MPI_PROC_NULL)) return rc;
    bool recv_here = all || root == MPI_ROOT, send_here = all || root >= 0;
    rc = mpi_chk_count(a, count, "count");
    if (!rc) rc = mpi_chk_type(a, dt, t);
    if (!rc && send_here) rc = mpi_chk_no_inplace(a, sbuf);
    if (!rc && send_here) rc = mpi_chk_buf(a, sbuf, count, *t, "send buffer");
    if (!rc && recv_here) rc = mpi_chk_no_inplace(a, rbuf);
    if (!rc && recv_here) rc = mpi_chk_buf(a, rbuf, count, *t, "receive buffer");
    if (!rc && all) rc = mpi_chk_alias(a, sbuf, rbuf, (size_t)count * (*t)->size);
    return rc;
}

int mpi_chk_reduce_scatter(const mpi_cargs *a, const void *sbuf, void *rbuf, const int *counts,
                           bool is_block, int block, MPI_Datatype dt, mpi_type **t, size_t *total,
                           size_t *below)
{
    int rc = mpi_chk_type(a, dt, t);
    if (rc) return rc;
    if (is_block && block < 0)
        return mpi_cfail(a, MPI_ERR_COUNT, "recvcount %d is negative", block);
    if (!is_block && !counts) return mpi_cfail(a, MPI_ERR_ARG, "recvcounts is NULL");
    int me = a->c->me;
    *total = *below = 0;
    for (int i = 0; i < a->c->size; i++) {
        int c = is_block ? block : counts[i];
        if (c < 0) return mpi_cfail(a, MPI_ERR_COUNT, "recvcounts[%d] = %d is negative", i, c);
        if (i < me) *below += (size_t)c;
        *total += (size_t)c;
    }
    int mine = is_block ? block : counts[me];
    bool inplace = sbuf == MPI_IN_PLACE;
    if (a->c->inter) rc = mpi_chk_no_inplace(a, sbuf);
    if (!rc && a->c->inter) rc = mpi_chk_no_inplace(a, rbuf);
    if (!rc && !inplace) rc = mpi_chk_buf(a, sbuf, (int)*total, *t, "send buffer");
    if (!rc) rc = mpi_chk_buf(a, rbuf, mine, *t, "receive buffer");
    if (!rc) rc = mpi_chk_alias(a, sbuf, rbuf, *total * (*t)->size);
    return rc;
}

void mpi_reduce_scatter_blocks(size_t *bo, int np, const int *counts, bool is_block, int block,
                               size_t k)
{
    bo[0] = 0;
    for (int i = 0; i < np; i++) bo[i + 1] = bo[i] + (size_t)(is_block ? block : counts[i]) * k;
}

/* One side of an Alltoallw (what: "send", "recv"); *staged: a block with data
 * is not contiguous or lies below the buffer. */
static int wside(const mpi_cargs *a, const int *counts, const int *displs,
                 const MPI_Datatype *types, const char *what, mpi_type **t, size_t *len,
                 size_t *total, bool *staged)
{
    if (!counts || !displs || !types)
        return mpi_cfail(a, MPI_ERR_ARG, "%scounts, %sdispls or %stypes is NULL", what, what, what);
    *total = 0;
    *staged = false;
    for (int i = 0, np = comm_peer_size(a->c); i < np; i++) {
        t[i] = NULL;
        len[i] = 0;
        if (counts[i] < 0)
            return mpi_cfail(a, MPI_ERR_COUNT, "%scounts[%d] = %d is negative", what, i, counts[i]);
        int rc = mpi_chk_type_n(a, types[i], counts[i], &t[i]);
        if (rc) return rc;
        len[i] = (size_t)counts[i] * t[i]->size;
        if (len[i] && (!t[i]->contig || displs[i] < 0)) *staged = true;
        *total += len[i];
    }
    return 0;
}

int mpi_chk_alltoallw(const mpi_cargs *a, const void *sbuf, const int *scounts, const int *sdispls,
                      const MPI_Datatype *stypes, void *rbuf, const int *rcounts,
                      const int *rdispls, const MPI_Datatype *rtypes, mpi_wside *s, mpi_wside *r)
{
    bool inplace = sbuf == MPI_IN_PLACE, inter = a->c->inter;
    int rc = inter ? mpi_chk_no_inplace(a, sbuf) : 0, me = a->c->me;
    if (!rc) rc = wside(a, rcounts, rdispls, rtypes, "recv", r->t, r->len, &r->total, &r->staged);
    if (!rc && !inplace)
        rc = wside(a, scounts, sdispls, stypes, "send", s->t, s->len, &s->total, &s->staged);
    if (!rc && !inplace && !inter && s->len[me] != r->len[me])
        rc = mpi_chk_match(a, s->len[me], r->len[me]);
    if (!rc && !inplace && sbuf == rbuf && s->total && r->total)
        rc = mpi_chk_alias(a, sbuf, rbuf, 1);
    if (!rc && !inplace && !s->staged && s->total && !sbuf)
        rc = mpi_cfail(a, MPI_ERR_BUFFER, "send buffer is NULL but there is data to send");
    if (!rc && !r->staged && r->total && !rbuf)
        rc = mpi_cfail(a, MPI_ERR_BUFFER, "receive buffer is NULL but there is data to receive");
    return rc;
}

void mpi_wside_offsets(const mpi_wside *w, const int *displs, size_t *off, int np)
{
    size_t at = 0;
    for (int i = 0; i < np; i++) {
        off[i] = w->staged ? at : (size_t)displs[i];
        at += w->len[i];
    }
}

void mpi_wside_pack(const mpi_wside *w, const size_t *off, const void *buf, const int *counts,
                    const int *displs, char *out, int np)
{
    for (int i = 0; i < np; i++)
        if (w->len[i])
            mpi_pack_data(w->t[i], (const char *)buf + displs[i], (size_t)counts[i], out + off[i]);
}
