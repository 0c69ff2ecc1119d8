/* Collectives over blocks of any layout, as schedules: gather and scatter
 * (linear at the root), the all-gather ring, and the all-to-all exchanges
 * (pairwise, all at once, in a window), each for blocks of one size (block i
 * at i*blk) and for the "v" forms MPI needs (block i: lens[i] bytes at
 * displs[i]), which are the same schedule with another layout.
 *
 * Algorithms: gather(v) and scatter(v) post every transfer of the root in one
 * round; the ring (allgather of blocks too long for recursive doubling, and
 * allgatherv) takes n-1 rounds, each member passing on the block it received
 * in the round before; the all-to-all exchanges pair member me with me+i and
 * me-i in the order i = 1, 2, ... n-1: one pair a round (pairwise), every pair
 * in one round (all at once: every receive first, then the sends), or w pairs
 * a round (window). alltoallv is the all-at-once exchange.
 * Invariants: the same as coll.c's: one sequence number per call (in every
 * tag), all traffic in the group's context, and in a round every receive is
 * posted before a long send; in gather(v), scatter(v) and allgather(v) a NULL
 * own send buffer (sbuf; scatter: rbuf at the root) means the own block is in
 * place already (the all-to-all exchanges always copy it). */
#include <stdlib.h>
#include <string.h>

#include "coll.h"

/* Block i of a layout: lens NULL: blk bytes at i*blk. */
static inline size_t blen(const size_t *lens, size_t blk, int i)
{
    return lens ? lens[i] : blk;
}

static inline size_t boff(const size_t *displs, size_t blk, int i)
{
    return displs ? displs[i] : (size_t)i * blk;
}

static inline int wrap(int i, int n)
{
    return i >= n ? i - n : i;
}

static void run(cr_job *job, cr_sched *s)
{
    cr_sched_run(job, s);
    cr_sched_free(job, s);
}

/* ---- gather and scatter -------------------------------------------------- */

static void gather_any(cr_job *job, cr_sched *s, const cr_group *g, const void *sbuf, size_t slen,
                       char *rbuf, const size_t *rlens, const size_t *rdispls, size_t blk, int root)
{
    cr_trace_how(job, "linear");
    if (g->me != root) {
        cr_sched_send(job, s, cr_group_rank(g, root), 0, sbuf, slen);
    } else {
        for (int i = 0; i < g->size; i++)
            if (i != root)
                cr_sched_recv(job, s, cr_group_rank(g, i), 0, rbuf + boff(rdispls, blk, i),
                              blen(rlens, blk, i));
        if (sbuf)
            cr_sched_copy(job, s, rbuf + boff(rdispls, blk, root), sbuf, blen(rlens, blk, root));
    }
    cr_sched_round(job, s);
}

static void scatter_any(cr_job *job, cr_sched *s, const cr_group *g, const char *sbuf,
                        const size_t *slens, const size_t *sdispls, size_t blk, void *rbuf,
                        size_t rlen, int root)
{
    cr_trace_how(job, "linear");
    int n = g->size;
    if (g->me != root) {
        cr_sched_recv(job, s, cr_group_rank(g, root), 0, rbuf, rlen);
    } else {
        for (int k = 1; k < n; k++) { /* in the order root+1, root+2, ... */
            int i = wrap(root + k, n);
            cr_sched_send(job, s, cr_group_rank(g, i), 0, sbuf + boff(sdispls, blk, i),
                          blen(slens, blk, i));
        }
        if (rbuf)
            cr_sched_copy(job, s, rbuf, sbuf + boff(sdispls, blk, root), blen(slens, blk, root));
    }
    cr_sched_round(job, s);
}

void cr_build_gather(cr_job *job, cr_sched *s, const cr_group *g, const void *sbuf, void *rbuf,
                     size_t blk, int root)
{
    gather_any(job, s, g, sbuf, blk, rbuf, NULL, NULL, blk, root);
}

void cr_build_gatherv(cr_job *job, cr_sched *s, const cr_group *g, const void *sbuf, size_t slen,
                      void *rbuf, const size_t *rlens, const size_t *rdispls, int root)
{
    gather_any(job, s, g, sbuf, slen, rbuf, rlens, rdispls, 0, root);
}

void cr_build_scatter(cr_job *job, cr_sched *s, const cr_group *g, const void *sbuf, void *rbuf,
                      size_t blk, int root)
{
    scatter_any(job, s, g, sbuf, NULL, NULL, blk, rbuf, blk, root);
}

void cr_build_scatterv(cr_job *job, cr_sched *s, const cr_group *g, const void *sbuf,
                       const size_t *slens, const size_t *sdispls, void *rbuf, size_t rlen,
                       int root)
{
    scatter_any(job, s, g, sbuf, slens, sdispls, 0, rbuf, rlen, root);
}

void cr_coll_gatherv(cr_job *job, cr_group *g, const char *op, const void *sbuf, size_t slen,
                     void *rbuf, const size_t *rlens, const size_t *rdispls, int root)
{
    cr_sched s;
    cr_sched_blocking(&s, g, op, g->seq++);
    cr_build_gatherv(job, &s, g, sbuf, slen, rbuf, rlens, rdispls, root);
    run(job, &s);
}

void cr_coll_scatterv(cr_job *job, cr_group *g, const char *op, const void *sbuf,
                      const size_t *slens, const size_t *sdispls, void *rbuf, size_t rlen, int root)
{
    cr_sched s;
    cr_sched_blocking(&s, g, op, g->seq++);
    cr_build_scatterv(job, &s, g, sbuf, slens, sdispls, rbuf, rlen, root);
    run(job, &s);
}

/* ---- all-gather ring ------------------------------------------------------ */

void cr_build_allgather_ring(cr_job *job, cr_sched *s, const cr_group *g, char *rbuf,
                             const size_t *rlens, const size_t *rdispls, size_t blk)
{
    cr_trace_how(job, "ring");
    int n = g->size, me = g->me;
    int right = cr_group_rank(g, wrap(me + 1, n)), left = cr_group_rank(g, wrap(me - 1 + n, n));
    for (int i = 0; i < n - 1; i++) {
        int sb = wrap(me - i + n, n), rb = wrap(me - i - 1 + n, n);
        cr_sched_recv(job, s, left, i, rbuf + boff(rdispls, blk, rb), blen(rlens, blk, rb));
        cr_sched_send(job, s, right, i, rbuf + boff(rdispls, blk, sb), blen(rlens, blk, sb));
        cr_sched_round(job, s);
    }
}

void cr_build_allgather_once(cr_job *job, cr_sched *s, const cr_group *g, char *rbuf,
                             const size_t *rlens, const size_t *rdispls, size_t blk)
{
    int n = g->size, me = g->me;
    size_t *own = cr_sched_alloc(job, s, 2 * (size_t)n * sizeof *own); /* lens, then displs */
    for (int i = 0; i < n; i++) {
        own[i] = blen(rlens, blk, me);
        own[n + i] = boff(rdispls, blk, me);
    }
    cr_build_alltoall_pairs(job, s, g, rbuf, own, own + n, rbuf, rlens, rdispls, blk,
                            CR_ALL_AT_ONCE);
}

void cr_build_allgatherv(cr_job *job, cr_sched *s, const cr_group *g, const void *sbuf, size_t slen,
                         void *rbuf, const size_t *rlens, const size_t *rdispls)
{
    if (sbuf) cr_sched_copy(job, s, (char *)rbuf + rdispls[g->me], sbuf, slen);
    if (cr_sched_polled(job, s, g, CR_ALG_AUTO) && g->size > 2)
        cr_build_allgather_once(job, s, g, rbuf, rlens, rdispls, 0);
    else
        cr_build_allgather_ring(job, s, g, rbuf, rlens, rdispls, 0);
}

/* As the all-gather (coll.c): with more ranks than cores, from a mean block
 * of 32 KiB, each member reads the others' blocks (4 ranks on 2 cores, 32-64
 * KiB: 1.65-1.78x Open MPI's time by the ring). */
void cr_coll_allgatherv(cr_job *job, cr_group *g, const char *op, const void *sbuf, size_t slen,
                        void *rbuf, const size_t *rlens, const size_t *rdispls)
{
    size_t total = 0;
    for (int i = 0; i < g->size; i++) total += rlens[i];
    if (cr_coll_allgather_reads(job, g, total / (size_t)g->size)) {
        char *own = (char *)rbuf + rdispls[g->me];
        if (sbuf && own != sbuf) memmove(own, sbuf, slen);
        sbuf = NULL; /* others read it there */
        if (cr_coll_allgatherv_direct(job, g, op, rbuf, rlens, rdispls)) return;
    }
    cr_sched s;
    cr_sched_blocking(&s, g, op, g->seq++);
    cr_build_allgatherv(job, &s, g, sbuf, slen, rbuf, rlens, rdispls);
    run(job, &s);
}

/* ---- all-to-all exchanges -------------------------------------------------- */

void cr_build_alltoall_pairs(cr_job *job, cr_sched *s, const cr_group *g, const void *sbuf,
                             const size_t *slens, const size_t *sdispls, void *rbuf,
                             const size_t *rlens, const size_t *rdispls, size_t blk, int w)
{
    int n = g->size, me = g->me;
    const char *sb = sbuf;
    char *rb = rbuf;
    cr_trace_how(job, w == 1 ? "pairwise" : w == CR_ALL_AT_ONCE ? "scatter" : "window");
    cr_sched_copy(job, s, rb + boff(rdispls, blk, me), sb + boff(sdispls, blk, me),
                  blen(rlens, blk, me));
    if (w == CR_ALL_AT_ONCE) { /* every receive, then the sends in the order me+1, me+2, ... */
        for (int i = 1; i < n; i++) {
            int from = wrap(me - i + n, n);
            cr_sched_recv(job, s, cr_group_rank(g, from), 0, rb + boff(rdispls, blk, from),
                          blen(rlens, blk, from));
        }
        for (int i = 1; i < n; i++) {
            int to = wrap(me + i, n);
            cr_sched_send(job, s, cr_group_rank(g, to), 0, sb + boff(sdispls, blk, to),
                          blen(slens, blk, to));
        }
        cr_sched_round(job, s);
        return;
    }
    for (int i = 1; i < n; i++) { /* w exchanges a round; pairwise: each its own step */
        int to = wrap(me + i, n), from = wrap(me - i + n, n), step = w == 1 ? i : 0;
        cr_sched_recv(job, s, cr_group_rank(g, from), step, rb + boff(rdispls, blk, from),
                      blen(rlens, blk, from));
        cr_sched_send(job, s, cr_group_rank(g, to), step, sb + boff(sdispls, blk, to),
                      blen(slens, blk, to));
        if (i % w == 0) cr_sched_round(job, s);
    }
    cr_sched_round(job, s);
}

void cr_build_alltoallv(cr_job *job, cr_sched *s, const cr_group *g, const void *sbuf,
                        const size_t *slens, const size_t *sdispls, void *rbuf, const size_t *rlens,
                        const size_t *rdispls)
{
    cr_build_alltoall_pairs(job, s, g, sbuf, slens, sdispls, rbuf, rlens, rdispls, 0,
                            CR_ALL_AT_ONCE);
}

void cr_coll_alltoallv(cr_job *job, cr_group *g, const char *op, const void *sbuf,
                       const size_t *slens, const size_t *sdispls, void *rbuf, const size_t *rlens,
                       const size_t *rdispls)
{
    cr_sched s;
    cr_sched_blocking(&s, g, op, g->seq++);
    cr_build_alltoallv(job, &s, g, sbuf, slens, sdispls, rbuf, rlens, rdispls);
    run(job, &s);
}
