/* MPI's nonblocking and persistent collectives on an intercommunicator
 * (MPI-3.1 §5.2.2), the builders mpi_nbc.c's entry points hand them to: the
 * arguments checked as the blocking forms check them, the data packed and
 * unpacked as mpi_nbc.c's intracommunicator forms do (its steps,
 * mpi_nbc_impl.h), and the algorithm src/coll's (coll_inter.c:
 * cr_build_inter_*), the very schedule the blocking form runs.
 *
 * Invariants: roots are MPI_ROOT, MPI_PROC_NULL (the rest of the root's
 * group, whose other arguments are not looked at) or the root's rank in the
 * remote group; MPI_IN_PLACE is MPI_ERR_BUFFER; each builder leaves the call
 * (mpi_nb_launch or mpi_nb_done) exactly once. */
#include "mpi_check.h"
#include "mpi_nbc_impl.h"

/* The layer's view of the intercommunicator (its sequence number is taken by
 * mpi_nb_seq, from mpi_nb_counter's count). */
cr_inter mpi_nbx_of(const nb *b)
{
    return (cr_inter){&b->c->g, b->c->rsize, b->c->rranks, b->c->g.ctx, mpi_nb_counter(b)};
}

/* The layer's name for a root argument (checked). */
static int x_root(int root)
{
    return root == MPI_ROOT ? CR_INTER_ROOT : root == MPI_PROC_NULL ? CR_INTER_NONE : root;
}

/* Lengths and offsets (v->len, v->off) of R blocks of blk bytes, back to back. */
static void x_uniform(nb *b, vlay *v, int R, size_t blk)
{
    v->len = mpi_nb_alloc(b, 2 * (size_t)R * sizeof(size_t));
    v->off = v->len + R;
    for (int i = 0; i < R; i++) {
        v->len[i] = blk;
        v->off[i] = (size_t)i * blk;
    }
}

int mpi_nbx_barrier(nb *b, MPI_Request *req)
{
    cr_inter x = mpi_nbx_of(b);
    mpi_nb_seq(b);
    cr_build_inter_barrier(b->job, &b->s->s, &x);
    return mpi_nb_launch(b, req);
}

int mpi_nbx_bcast(nb *b, void *buf, int count, MPI_Datatype dt, int root, MPI_Request *req)
{
    mpi_type *t = NULL;
    int rc = mpi_chk_root(b, root);
    if (!rc && root != MPI_PROC_NULL) rc = mpi_chk_count(b, count, "count");
    if (!rc && root != MPI_PROC_NULL) rc = mpi_chk_type(b, dt, &t);
    if (!rc && root != MPI_PROC_NULL) rc = mpi_chk_buf(b, buf, count, t, "buffer");
    if (rc) return mpi_nb_done(b, rc);
    cr_inter x = mpi_nbx_of(b);
    mpi_nb_seq(b);
    if (root != MPI_PROC_NULL) {
        size_t cnt = (size_t)count;
        char *data = root == MPI_ROOT ? (char *)mpi_nb_bytes_in(b, t, buf, cnt)
                                      : mpi_nb_bytes_out(b, t, buf, cnt);
        cr_build_inter_bcast(b->job, &b->s->s, &x, data, cnt * t->size, x_root(root));
    }
    return mpi_nb_launch(b, req);
}

/* gather (rcounts NULL: rcount each) and gatherv */
int mpi_nbx_gather(nb *b, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                   const int *rcounts, const int *displs, MPI_Datatype rtype, int root,
                   MPI_Request *req)
{
    mpi_type *ts = NULL, *tr = NULL;
    vlay v = {0};
    int rc = mpi_chk_root(b, root), R = b->c->rsize;
    if (!rc && root == MPI_ROOT) {
        rc = mpi_chk_no_inplace(b, rbuf);
        if (!rc && rcounts) rc = mpi_chk_type(b, rtype, &tr);
        if (!rc && rcounts) rc = mpi_nb_vlay_make(b, &v, tr, rcounts, displs, "recv");
        if (!rc && !rcounts) rc = mpi_chk_triple(b, rbuf, rcount, rtype, &tr, "receive");
    } else if (!rc && root != MPI_PROC_NULL) {
        rc = mpi_chk_no_inplace(b, sbuf);
        if (!rc) rc = mpi_chk_triple(b, sbuf, scount, stype, &ts, "send");
    }
    if (rc) return mpi_nb_done(b, rc);
    cr_inter x = mpi_nbx_of(b);
    mpi_nb_seq(b);
    if (root == MPI_ROOT) {
        char *r;
        if (rcounts) {
            r = mpi_nb_vlay_out(b, &v, tr, rbuf, rcounts, displs, R);
        } else {
            x_uniform(b, &v, R, (size_t)rcount * tr->size);
            r = mpi_nb_bytes_out(b, tr, rbuf, (size_t)rcount * (size_t)R);
        }
        cr_build_inter_gatherv(b->job, &b->s->s, &x, NULL, 0, r, v.len, v.off, CR_INTER_ROOT);
    } else if (root != MPI_PROC_NULL) {
        cr_build_inter_gatherv(b->job, &b->s->s, &x, mpi_nb_bytes_in(b, ts, sbuf, (size_t)scount),
                               (size_t)scount * ts->size, NULL, NULL, NULL, root);
    }
    return mpi_nb_launch(b, req);
}

/* scatter (scounts NULL: scount each) and scatterv */
int mpi_nbx_scatter(nb *b, const void *sbuf, int scount, const int *scounts, const int *displs,
                    MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root,
                    MPI_Request *req)
{
    mpi_type *ts = NULL, *tr = NULL;
    vlay v = {0};
    int rc = mpi_chk_root(b, root), R = b->c->rsize;
    if (!rc && root == MPI_ROOT) {
        rc = mpi_chk_no_inplace(b, sbuf);
        if (!rc && scounts) rc = mpi_chk_type(b, stype, &ts);
        if (!rc && scounts) rc = mpi_nb_vlay_make(b, &v, ts, scounts, displs, "send");
        if (!rc && !scounts) rc = mpi_chk_triple(b, sbuf, scount, stype, &ts, "send");
    } else if (!rc && root != MPI_PROC_NULL) {
        rc = mpi_chk_no_inplace(b, rbuf);
        if (!rc) rc = mpi_chk_triple(b, rbuf, rcount, rtype, &tr, "receive");
    }
    if (rc) return mpi_nb_done(b, rc);
    cr_inter x = mpi_nbx_of(b);
    mpi_nb_seq(b);
    if (root == MPI_ROOT) {
        const char *s = sbuf;
        if (scounts && v.staged) {
            char *p = mpi_nb_alloc(b, v.total);
            mpi_nb_vlay_pack(b, &v, ts, sbuf, scounts, displs, p, R);
            s = p;
        } else if (!scounts) {
            x_uniform(b, &v, R, (size_t)scount * ts->size);
            s = mpi_nb_bytes_in(b, ts, sbuf, (size_t)scount * (size_t)R);
        }
        cr_build_inter_scatterv(b->job, &b->s->s, &x, s, v.len, v.off, NULL, 0, CR_INTER_ROOT);
    } else if (root != MPI_PROC_NULL) {
        char *r = mpi_nb_bytes_out(b, tr, rbuf, (size_t)rcount);
        cr_build_inter_scatterv(b->job, &b->s->s, &x, NULL, NULL, NULL, r,
                                (size_t)rcount * tr->size, root);
    }
    return mpi_nb_launch(b, req);
}

/* allgather (rcounts NULL: rcount each) and allgatherv */
int mpi_nbx_allgather(nb *b, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                      int rcount, const int *rcounts, const int *displs, MPI_Datatype rtype,
                      MPI_Request *req)
{
    mpi_type *ts = NULL, *tr = NULL;
    vlay v = {0};
    int rc = mpi_chk_no_inplace(b, sbuf), R = b->c->rsize;
    if (!rc) rc = mpi_chk_no_inplace(b, rbuf);
    if (!rc) rc = mpi_chk_triple(b, sbuf, scount, stype, &ts, "send");
    if (!rc && rcounts) rc = mpi_chk_type(b, rtype, &tr);
    if (!rc && rcounts) rc = mpi_nb_vlay_make(b, &v, tr, rcounts, displs, "recv");
    if (!rc && !rcounts) rc = mpi_chk_triple(b, rbuf, rcount, rtype, &tr, "receive");
    if (rc) return mpi_nb_done(b, rc);
    char *r;
    if (rcounts) {
        r = mpi_nb_vlay_out(b, &v, tr, rbuf, rcounts, displs, R);
    } else {
        x_uniform(b, &v, R, (size_t)rcount * tr->size);
        r = mpi_nb_bytes_out(b, tr, rbuf, (size_t)rcount * (size_t)R);
    }
    cr_inter x = mpi_nbx_of(b);
    mpi_nb_seq(b);
    cr_build_inter_allgatherv(b->job, &b->s->s, &x, mpi_nb_bytes_in(b, ts, sbuf, (size_t)scount),
                              (size_t)scount * ts->size, r, v.len, v.off);
    return mpi_nb_launch(b, req);
}

/* alltoall (counts NULL: scount/rcount each) and alltoallv */
int mpi_nbx_alltoall(nb *b, const void *sbuf, int scount, const int *scounts, const int *sdispls,
                     MPI_Datatype stype, void *rbuf, int rcount, const int *rcounts,
                     const int *rdispls, MPI_Datatype rtype, MPI_Request *req)
{
    mpi_type *ts = NULL, *tr = NULL;
    vlay vs = {0}, vr = {0};
    bool v = scounts || rcounts;
    int rc = mpi_chk_no_inplace(b, sbuf), R = b->c->rsize;
    if (!rc && v) rc = mpi_chk_type(b, stype, &ts);
    if (!rc && v) rc = mpi_nb_vlay_make(b, &vs, ts, scounts, sdispls, "send");
    if (!rc && v) rc = mpi_chk_type(b, rtype, &tr);
    if (!rc && v) rc = mpi_nb_vlay_make(b, &vr, tr, rcounts, rdispls, "recv");
    if (!rc && !v) rc = mpi_chk_triple(b, sbuf, scount, stype, &ts, "send");
    if (!rc && !v) rc = mpi_chk_triple(b, rbuf, rcount, rtype, &tr, "receive");
    if (rc) return mpi_nb_done(b, rc);
    const char *s;
    char *r;
    if (v) {
        s = sbuf;
        if (vs.staged) {
            char *p = mpi_nb_alloc(b, vs.total);
            mpi_nb_vlay_pack(b, &vs, ts, sbuf, scounts, sdispls, p, R);
            s = p;
        }
        r = mpi_nb_vlay_out(b, &vr, tr, rbuf, rcounts, rdispls, R);
    } else {
        s = mpi_nb_bytes_in(b, ts, sbuf, (size_t)scount * (size_t)R);
        r = mpi_nb_bytes_out(b, tr, rbuf, (size_t)rcount * (size_t)R);
        x_uniform(b, &vs, R, (size_t)scount * ts->size);
        x_uniform(b, &vr, R, (size_t)rcount * tr->size);
    }
    cr_inter x = mpi_nbx_of(b);
    mpi_nb_seq(b);
    cr_build_inter_alltoallv(b->job, &b->s->s, &x, s, vs.len, vs.off, r, vr.len, vr.off);
    return mpi_nb_launch(b, req);
}

/* The member's data as the reduction takes it (packed when the type needs it). */
static char *x_acc(nb *b, mpi_type *t, const void *sbuf, size_t cnt, bool packed, size_t len)
{
    char *acc = mpi_nb_alloc(b, len);
    mpi_nb_pre(b, packed ? t : NULL, sbuf, cnt, acc, len);
    return acc;
}

/* reduce (root given), allreduce (root MPI_NBX_ALL) */
int mpi_nbx_reduce(nb *b, const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                   int root, MPI_Request *req)
{
    mpi_type *t = NULL;
    bool all = root == MPI_NBX_ALL;
    int rc = mpi_chk_xreduce(b, all, sbuf, rbuf, count, dt, root, &t);
    mpi_chk_nbc(b, all ? -1 : root, op, 0, NULL, 0, NULL);
    if (rc || root == MPI_PROC_NULL) {
        if (!rc) mpi_nb_seq(b);
        return rc ? mpi_nb_done(b, rc) : mpi_nb_launch(b, req);
    }
    bool packed = false;
    size_t n = 0, cnt = (size_t)count;
    if (!rc) rc = mpi_nb_redop(b, op, t, cnt, &packed, &n);
    if (rc) return mpi_nb_done(b, rc);
    size_t len = n * b->s->s.o.elem;
    char *out = NULL; /* where the other group's result lands */
    if (all || root == MPI_ROOT) {
        out = packed ? mpi_nb_alloc(b, len) : mpi_chk_nbc_rbuf(b, rbuf, len);
        if (packed) mpi_nb_fin(b, t, out, len, rbuf, cnt);
    }
    char *acc = root == MPI_ROOT ? NULL : x_acc(b, t, sbuf, cnt, packed, len);
    cr_inter x = mpi_nbx_of(b);
    mpi_nb_seq(b);
    if (all)
        cr_build_inter_allreduce(b->job, &b->s->s, &x, acc, out, n);
    else
        cr_build_inter_reduce(b->job, &b->s->s, &x, acc, out, n, x_root(root));
    return mpi_nb_launch(b, req);
}

/* reduce_scatter (counts: one per local member) and _block (counts NULL) */
int mpi_nbx_reduce_scatter(nb *b, const void *sbuf, void *rbuf, const int *counts, bool is_block,
                           int block, MPI_Datatype dt, MPI_Op op, MPI_Request *req)
{
    mpi_type *t = NULL;
    int np = b->c->size, me = b->c->me;
    size_t total = 0, below = 0;
    int rc = mpi_chk_reduce_scatter(b, sbuf, rbuf, counts, is_block, block, dt, &t, &total, &below);
    bool packed = false;
    size_t n = 0;
    if (!rc) rc = mpi_nb_redop(b, op, t, total, &packed, &n);
    if (rc) return mpi_nb_done(b, rc);
    mpi_chk_nbc(b, -1, op, 0, NULL, 0, NULL);
    size_t len = n * b->s->s.o.elem, per = total ? len / total : 0; /* bytes per instance */
    size_t *ll = mpi_nb_alloc(b, 2 * (size_t)np * sizeof *ll), *lo = ll + np, at = 0; /* bytes */
    for (int i = 0; i < np; i++) {
        ll[i] = (size_t)(is_block ? block : counts[i]) * per;
        lo[i] = at;
        at += ll[i];
    }
    size_t mine = (size_t)(is_block ? block : counts[me]);
    char *out = packed ? mpi_nb_alloc(b, ll[me]) : mpi_chk_nbc_rbuf(b, rbuf, ll[me]);
    if (packed) mpi_nb_fin(b, t, out, ll[me], rbuf, mine);
    char *acc = x_acc(b, t, sbuf, total, packed, len);
    cr_inter x = mpi_nbx_of(b);
    mpi_nb_seq(b);
    cr_build_inter_reduce_scatter(b->job, &b->s->s, &x, acc, out, n, ll, lo);
    return mpi_nb_launch(b, req);
}
