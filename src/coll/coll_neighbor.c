/* Neighbourhood exchanges (MPI's neighbourhood collectives, MPI-3.1 §7.6),
 * written once as a schedule builder (cr_build_neighbor, sched.c): the
 * blocking form here (cr_coll_neighbor) builds it and runs it as built, MPI's
 * nonblocking and persistent forms (mpi_nbc.c) start the same schedule and
 * keep it. The layer sees bytes: the interface finds the neighbours in its
 * topology and stages the blocks of non-contiguous types.
 *
 * Algorithm: one round that posts every receive (in the neighbours' order),
 * then every send (in theirs); a block's tag carries the step the interface
 * gives it (a Cartesian direction), so a neighbour met twice (a periodic
 * dimension of size 1 or 2) still gets each block in its place, and repeated
 * graph edges between two members pair up in the order they are posted.
 * Invariants: one sequence number of the group per call, taken by the caller
 * on every member (blocking: CR_COLL_TAG's; the nonblocking forms: their own
 * tag bits, so a blocking exchange never takes a message of one outstanding
 * on the same group); all traffic in the group's context; per pair of members
 * the transfers of one tag are posted in the same order on both sides; a
 * missing neighbour (negative member) moves nothing and leaves its receive
 * block untouched. */
#include "coll.h"

void cr_build_neighbor(cr_job *job, cr_sched *s, const cr_group *g, const cr_nbrs *n,
                       const cr_nbuf *rb, const cr_nbuf *sb)
{
    for (int i = 0; i < n->nin; i++)
        if (n->in[i] >= 0)
            cr_sched_recv(job, s, cr_group_rank(g, n->in[i]), n->rstep ? n->rstep[i] : 0, rb[i].buf,
                          rb[i].len);
    /* run as built too, the receives are posted before the first send: the
     * neighbours' blocks then land in place, not in the unexpected queue
     * first (1 rank, its own neighbour twice, 1 KiB blocks: 4,206
     * instructions a call with the short sends ahead of the receives, 3,486
     * in the hand-written exchange before) */
    cr_sched_post(job, s);
    for (int i = 0; i < n->nout; i++)
        if (n->out[i] >= 0)
            cr_sched_send(job, s, cr_group_rank(g, n->out[i]), n->sstep ? n->sstep[i] : 0,
                          sb[i].buf, sb[i].len);
    cr_sched_round(job, s);
}

void cr_coll_neighbor(cr_job *job, cr_group *g, const char *op, const cr_nbrs *n, const cr_nbuf *rb,
                      const cr_nbuf *sb)
{
    cr_sched s;
    cr_sched_blocking(&s, g, op, g->seq++);
    cr_build_neighbor(job, &s, g, n, rb, sb);
    cr_sched_run(job, &s);
    cr_sched_free(job, &s);
}
