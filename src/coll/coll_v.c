/* Collectives whose blocks differ in size from member to member (the "v"
 * forms MPI needs: gatherv, scatterv, allgatherv, alltoallv).
 *
 * Algorithms: gatherv and scatterv are linear at the root (every transfer
 * posted at once, then waited for); allgatherv is a ring (n-1 steps, each
 * member passes on the block it received in the step before); alltoallv posts
 * every receive, then every send in the order me+1, me+2, ... so that no two
 * members start on the same peer.
 * Invariants: the same as coll.c's: one sequence number per call (in every
 * tag), all traffic in the group's context, receives posted before any send
 * that could wait for them. Block i of a buffer is lens[i] bytes at offset
 * displs[i]; a NULL own send buffer means the data is already in place. */
#include <stdlib.h>
#include <string.h>

#include "coll.h"

static void wait_all(cr_job *job, cr_req **r, int n)
{
    for (int i = 0; i < n; i++)
        if (r[i]) cr_coll_wait(job, r[i]);
}

static cr_req **reqs(cr_job *job, const char *op, int n)
{
    cr_req **r = calloc((size_t)(n ? n : 1), sizeof *r);
    if (!r) cr_fatal(job, op, "out of memory for %d requests", n);
    return r;
}

static void copy_own(void *dst, const void *src, size_t len)
{
    if (src && len && dst != src) memmove(dst, src, len);
}

void cr_coll_gatherv(cr_job *job, cr_group *g, const char *op, const void *sbuf, size_t slen,
                     void *rbuf, const size_t *rlens, const size_t *rdispls, int root)
{
    cr_trace_how(job, "linear");
    int32_t tag = CR_COLL_TAG(g->seq++, 0);
    if (g->me != root) {
        cr_coll_send(job, g, op, root, tag, sbuf, slen);
        return;
    }
    cr_req **r = reqs(job, op, g->size);
    for (int i = 0; i < g->size; i++)
        if (i != root)
            r[i] = cr_coll_irecv(job, g, op, i, tag, (char *)rbuf + rdispls[i], rlens[i]);
    copy_own((char *)rbuf + rdispls[root], sbuf, rlens[root]);
    wait_all(job, r, g->size);
    free(r);
}

void cr_coll_scatterv(cr_job *job, cr_group *g, const char *op, const void *sbuf,
                      const size_t *slens, const size_t *sdispls, void *rbuf, size_t rlen, int root)
{
    cr_trace_how(job, "linear");
    int32_t tag = CR_COLL_TAG(g->seq++, 0);
    if (g->me != root) {
        cr_coll_recv(job, g, op, root, tag, rbuf, rlen);
        return;
    }
    cr_req **r = reqs(job, op, g->size);
    for (int i = 0; i < g->size; i++)
        if (i != root)
            r[i] = cr_isend(job, op, cr_group_rank(g, i), g->ctx, tag,
                            (const char *)sbuf + sdispls[i], slens[i]);
    if (rbuf) copy_own(rbuf, (const char *)sbuf + sdispls[root], slens[root]);
    wait_all(job, r, g->size);
    free(r);
}

void cr_coll_allgatherv(cr_job *job, cr_group *g, const char *op, const void *sbuf, size_t slen,
                        void *rbuf, const size_t *rlens, const size_t *rdispls)
{
    cr_trace_how(job, "linear");
    uint32_t seq = g->seq++;
    int n = g->size, me = g->me, right = (me + 1) % n, left = (me - 1 + n) % n;
    copy_own((char *)rbuf + rdispls[me], sbuf, slen);
    for (int s = 0; s < n - 1; s++) {
        int sb = (me - s + n) % n, rb = (me - s - 1 + n) % n;
        cr_coll_sendrecv(job, g, op, right, (char *)rbuf + rdispls[sb], rlens[sb], left,
                         (char *)rbuf + rdispls[rb], rlens[rb], CR_COLL_TAG(seq, s));
    }
}

void cr_coll_alltoallv(cr_job *job, cr_group *g, const char *op, const void *sbuf,
                       const size_t *slens, const size_t *sdispls, void *rbuf, const size_t *rlens,
                       const size_t *rdispls)
{
    cr_trace_how(job, "pairwise");
    int32_t tag = CR_COLL_TAG(g->seq++, 0);
    int n = g->size, me = g->me;
    cr_req **r = reqs(job, op, 2 * n);
    for (int k = 1; k < n; k++) {
        int i = (me - k + n) % n;
        r[i] = cr_coll_irecv(job, g, op, i, tag, (char *)rbuf + rdispls[i], rlens[i]);
    }
    for (int k = 1; k < n; k++) {
        int i = (me + k) % n;
        r[n + i] = cr_isend(job, op, cr_group_rank(g, i), g->ctx, tag,
                            (const char *)sbuf + sdispls[i], slens[i]);
    }
    copy_own((char *)rbuf + rdispls[me], (const char *)sbuf + sdispls[me], rlens[me]);
    wait_all(job, r, 2 * n);
    free(r);
}
