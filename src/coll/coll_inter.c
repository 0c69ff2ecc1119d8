/* Collectives between the two groups of an intercommunicator (MPI-3.1 §5.2.2):
 * every call pairs a phase inside each group (an ordinary collective of the
 * local group) with messages across the groups.
 *
 * Algorithms (m: size of the remote group):
 *  - barrier: local barrier, the two leaders (member 0 of each group) swap an
 *    empty message, local broadcast of nothing from the leader;
 *  - bcast: the root sends to the remote leader, which broadcasts in its group;
 *  - gather(v) / scatter(v): linear at the root, straight to and from each
 *    remote member (the root has to touch m blocks anyway);
 *  - allgather(v): every member sends its block to the remote leader, which
 *    broadcasts the m blocks it got in its group;
 *  - alltoall(v,w): every member exchanges directly with every remote member;
 *  - reduce: the non-root group reduces to its leader, which sends to the root;
 *  - allreduce / reduce_scatter: each group reduces to its leader, the leaders
 *    swap results, each leader broadcasts / scatters what it got.
 * Invariants: every member of both groups calls the same intercommunicator
 * collectives in the same order and advances *seq once per call, so the tag of
 * a cross message (CR_INTER_TAG: negative, disjoint from the local groups'
 * tags >= 0 and from MPI_INTER_TAG) is the same on both sides and two calls'
 * messages never match; each member posts the receives it may need before a
 * send that could wait for them, so no cycle of blocked sends can form. */
#include <stdlib.h>
#include <string.h>

#include "coll.h"

static void xsend(cr_job *job, cr_inter *x, const char *op, int r, int32_t tag, const void *buf,
                  size_t len)
{
    cr_send(job, op, x->rranks[r], x->ctx, tag, buf, len);
}

static cr_req *xisend(cr_job *job, cr_inter *x, const char *op, int r, int32_t tag, const void *buf,
                      size_t len)
{
    return cr_isend(job, op, x->rranks[r], x->ctx, tag, buf, len);
}

static cr_req *xirecv(cr_job *job, cr_inter *x, const char *op, int r, int32_t tag, void *buf,
                      size_t len)
{
    cr_sel sel = {.src = x->rranks[r], .ctx = x->ctx, .tag_mode = CR_TAG_EXACT, .tag = tag};
    return cr_irecv_note(job, op, &sel, buf, len, x->local->trunc);
}

static void xrecv(cr_job *job, cr_inter *x, const char *op, int r, int32_t tag, void *buf,
                  size_t len)
{
    cr_sel sel = {.src = x->rranks[r], .ctx = x->ctx, .tag_mode = CR_TAG_EXACT, .tag = tag};
    cr_status st;
    cr_recv_note(job, op, &sel, buf, len, x->local->trunc, &st);
}

/* Leaders only: send mine to the other leader, receive theirs from it. */
static void xswap(cr_job *job, cr_inter *x, const char *op, int32_t tag, const void *mine,
                  size_t mlen, void *theirs, size_t tlen)
{
    cr_req *r = xirecv(job, x, op, 0, tag, theirs, tlen);
    xsend(job, x, op, 0, tag, mine, mlen);
    cr_coll_wait(job, r);
}

static cr_req **reqs(cr_job *job, const char *op, int n)
{
    cr_req **r = calloc(n > 0 ? (size_t)n : 1, sizeof *r);
    if (!r) cr_fatal(job, op, "out of memory for %d requests", n);
    return r;
}

static void wait_free(cr_job *job, cr_req **r, int n)
{
    for (int i = 0; i < n; i++)
        if (r[i]) cr_coll_wait(job, r[i]);
    free(r);
}

static int32_t next_tag(cr_inter *x)
{
    uint32_t seq = (*x->seq)++;
    return CR_INTER_TAG(seq, 0);
}

void cr_inter_barrier(cr_job *job, cr_inter *x, const char *op)
{
    int32_t tag = next_tag(x);
    cr_coll_barrier(job, x->local, op);
    if (x->local->me == 0) xswap(job, x, op, tag, NULL, 0, NULL, 0);
    cr_coll_bcast(job, x->local, op, NULL, 0, 0);
}

void cr_inter_bcast(cr_job *job, cr_inter *x, const char *op, void *buf, size_t len, int root)
{
    int32_t tag = next_tag(x);
    if (root == CR_INTER_NONE) return;
    if (root == CR_INTER_ROOT) {
        xsend(job, x, op, 0, tag, buf, len);
        return;
    }
    if (x->local->me == 0) xrecv(job, x, op, root, tag, buf, len);
    cr_coll_bcast(job, x->local, op, buf, len, 0);
}

void cr_inter_gatherv(cr_job *job, cr_inter *x, const char *op, const void *sbuf, size_t slen,
                      void *rbuf, const size_t *rlens, const size_t *rdispls, int root)
{
    int32_t tag = next_tag(x);
    if (root == CR_INTER_NONE) return;
    if (root != CR_INTER_ROOT) {
        xsend(job, x, op, root, tag, sbuf, slen);
        return;
    }
    cr_req **r = reqs(job, op, x->rsize);
    for (int i = 0; i < x->rsize; i++)
        r[i] = xirecv(job, x, op, i, tag, (char *)rbuf + rdispls[i], rlens[i]);
    wait_free(job, r, x->rsize);
}

void cr_inter_scatterv(cr_job *job, cr_inter *x, const char *op, const void *sbuf,
                       const size_t *slens, const size_t *sdispls, void *rbuf, size_t rlen,
                       int root)
{
    int32_t tag = next_tag(x);
    if (root == CR_INTER_NONE) return;
    if (root != CR_INTER_ROOT) {
        xrecv(job, x, op, root, tag, rbuf, rlen);
        return;
    }
    cr_req **r = reqs(job, op, x->rsize);
    for (int i = 0; i < x->rsize; i++)
        r[i] = xisend(job, x, op, i, tag, (const char *)sbuf + sdispls[i], slens[i]);
    wait_free(job, r, x->rsize);
}

void cr_inter_allgatherv(cr_job *job, cr_inter *x, const char *op, const void *sbuf, size_t slen,
                         void *rbuf, const size_t *rlens, const size_t *rdispls)
{
    int32_t tag = next_tag(x);
    int m = x->rsize;
    size_t total = 0;
    bool packed = true; /* the blocks lie back to back in rbuf, in order */
    for (int i = 0; i < m; i++) {
        packed = packed && rdispls[i] == total;
        total += rlens[i];
    }
    char *buf = packed ? rbuf : cr_coll_alloc(job, op, total);
    if (x->local->me == 0) {
        cr_req **r = reqs(job, op, m);
        size_t off = 0;
        for (int i = 0; i < m; off += rlens[i], i++)
            r[i] = xirecv(job, x, op, i, tag, buf + off, rlens[i]);
        xsend(job, x, op, 0, tag, sbuf, slen);
        wait_free(job, r, m);
    } else {
        xsend(job, x, op, 0, tag, sbuf, slen);
    }
    cr_coll_bcast(job, x->local, op, buf, total, 0);
    if (!packed) {
        size_t off = 0;
        for (int i = 0; i < m; off += rlens[i], i++)
            if (rlens[i]) memcpy((char *)rbuf + rdispls[i], buf + off, rlens[i]);
        free(buf);
    }
}

void cr_inter_alltoallv(cr_job *job, cr_inter *x, const char *op, const void *sbuf,
                        const size_t *slens, const size_t *sdispls, void *rbuf, const size_t *rlens,
                        const size_t *rdispls)
{
    int32_t tag = next_tag(x);
    int m = x->rsize, first = x->local->me % m;
    cr_req **r = reqs(job, op, 2 * m);
    for (int k = 0; k < m; k++) {
        int i = (first + k) % m;
        r[i] = xirecv(job, x, op, i, tag, (char *)rbuf + rdispls[i], rlens[i]);
    }
    for (int k = 0; k < m; k++) {
        int i = (first + k) % m;
        r[m + i] = xisend(job, x, op, i, tag, (const char *)sbuf + sdispls[i], slens[i]);
    }
    wait_free(job, r, 2 * m);
}

void cr_inter_reduce(cr_job *job, cr_inter *x, const char *op, const void *sbuf, void *rbuf,
                     size_t count, const cr_redop *o, int root)
{
    int32_t tag = next_tag(x);
    if (root == CR_INTER_NONE) return;
    size_t len = count * o->elem;
    if (root == CR_INTER_ROOT) {
        xrecv(job, x, op, 0, tag, rbuf, len);
        return;
    }
    bool lead = x->local->me == 0;
    char *tmp = lead ? cr_coll_alloc(job, op, len) : NULL;
    cr_coll_reduce(job, x->local, op, sbuf, tmp, count, o, 0);
    if (lead) xsend(job, x, op, root, tag, tmp, len);
    free(tmp);
}

void cr_inter_allreduce(cr_job *job, cr_inter *x, const char *op, const void *sbuf, void *rbuf,
                        size_t count, const cr_redop *o)
{
    int32_t tag = next_tag(x);
    size_t len = count * o->elem;
    bool lead = x->local->me == 0;
    char *tmp = lead ? cr_coll_alloc(job, op, len) : NULL;
    cr_coll_reduce(job, x->local, op, sbuf, tmp, count, o, 0);
    if (lead) xswap(job, x, op, tag, tmp, len, rbuf, len);
    free(tmp);
    cr_coll_bcast(job, x->local, op, rbuf, len, 0);
}

void cr_inter_reduce_scatter(cr_job *job, cr_inter *x, const char *op, const void *sbuf, void *rbuf,
                             size_t count, const cr_redop *o, const size_t *llens,
                             const size_t *loffs)
{
    int32_t tag = next_tag(x);
    size_t len = count * o->elem;
    bool lead = x->local->me == 0;
    char *tmp = lead ? cr_coll_alloc(job, op, 2 * len) : NULL, *res = tmp ? tmp + len : NULL;
    cr_coll_reduce(job, x->local, op, sbuf, tmp, count, o, 0);
    if (lead) xswap(job, x, op, tag, tmp, len, res, len);
    cr_coll_scatterv(job, x->local, op, res, llens, loffs, rbuf, llens[x->local->me], 0);
    free(tmp);
}
