/* Collectives between the two groups of an intercommunicator (MPI-3.1 §5.2.2),
 * written once as schedule builders (cr_build_inter_*, sched.c): the blocking
 * forms here (cr_inter_*) build one and run it as built, MPI's nonblocking and
 * persistent forms (mpi_nbc.c) start the same schedule. Every call pairs
 * phases inside each group (the local group's own builders: coll.c,
 * coll_reduce.c, coll_v.c) with transfers across the groups, in one schedule.
 *
 * Algorithms (m: size of the remote group; the leader: member 0 of a group):
 *  - barrier: local barrier, the two leaders swap an empty message, local
 *    broadcast of nothing from the leader;
 *  - bcast: the root sends to the remote leader, which broadcasts in its group;
 *  - gather(v) / scatter(v): linear at the root, straight to and from each
 *    remote member (the root has to touch m blocks anyway);
 *  - allgather(v): every member sends its block to the remote leader, which
 *    broadcasts the m blocks it got in its group (packed back to back, then
 *    put in their places);
 *  - alltoall(v,w): every member exchanges directly with every remote member;
 *  - reduce: the non-root group reduces to its leader, which sends to the root;
 *  - allreduce / reduce_scatter: each group reduces to its leader, the leaders
 *    swap results, each leader broadcasts / scatters what it got.
 * The local phases take the selector's message algorithms (binomial reduce;
 * broadcast: binomial, pipeline or linear as cr_build_bcast_msg picks); the
 * collective area and single copy are not used inside an intercommunicator
 * collective (its local group has no area).
 * Invariants: every member of both groups calls the same intercommunicator
 * collectives in the same order and advances *seq once per call, so the tags
 * of a call (its sequence number in every one) are the same on both sides and
 * two calls' messages never match; the blocking forms tag CR_INTER_TAG's (bit
 * 31 set, bit 30 clear), the nonblocking ones CR_INTER_NB_TAGBITS's (bits 31
 * and 30), so a blocking call never takes the messages of a nonblocking one
 * outstanding on the same intercommunicator, and neither meets the local
 * group's own collectives (tags >= 0) nor MPI_INTER_TAG (step 0xffe, far above
 * any used here); local and cross transfers of one call never share a pair of
 * members (the groups are disjoint), and per pair the transfers of one tag are
 * posted in the same order on both sides; in a round every receive is posted
 * before a long send, so no cycle of blocked sends can form. */
#include <stdlib.h>
#include <string.h>

#include "coll.h"

#define XSTEP 3 /* the step of every transfer across the groups */

static void xsend(cr_job *job, cr_sched *s, const cr_inter *x, int r, const void *buf, size_t len)
{
    cr_sched_send(job, s, x->rranks[r], XSTEP, buf, len);
}

static void xrecv(cr_job *job, cr_sched *s, const cr_inter *x, int r, void *buf, size_t len)
{
    cr_sched_recv(job, s, x->rranks[r], XSTEP, buf, len);
}

static bool leader(const cr_inter *x)
{
    return x->local->me == 0;
}

/* ---- the builders ---------------------------------------------------------- */

void cr_build_inter_barrier(cr_job *job, cr_sched *s, const cr_inter *x)
{
    cr_build_barrier(job, s, x->local);
    cr_sched_round(job, s);
    if (leader(x)) {
        xrecv(job, s, x, 0, NULL, 0);
        xsend(job, s, x, 0, NULL, 0);
        cr_sched_round(job, s);
    }
    cr_build_bcast_msg(job, s, x->local, NULL, 0, 0, CR_ALG_AUTO);
}

void cr_build_inter_bcast(cr_job *job, cr_sched *s, const cr_inter *x, void *buf, size_t len,
                          int root)
{
    if (root == CR_INTER_NONE) return;
    if (root == CR_INTER_ROOT) {
        xsend(job, s, x, 0, buf, len);
        cr_sched_round(job, s);
        return;
    }
    if (leader(x)) {
        xrecv(job, s, x, root, buf, len);
        cr_sched_round(job, s);
    }
    cr_build_bcast_msg(job, s, x->local, buf, len, 0, CR_ALG_AUTO);
}

void cr_build_inter_gatherv(cr_job *job, cr_sched *s, const cr_inter *x, const void *sbuf,
                            size_t slen, void *rbuf, const size_t *rlens, const size_t *rdispls,
                            int root)
{
    if (root == CR_INTER_NONE) return;
    if (root != CR_INTER_ROOT)
        xsend(job, s, x, root, sbuf, slen);
    else
        for (int i = 0; i < x->rsize; i++) xrecv(job, s, x, i, (char *)rbuf + rdispls[i], rlens[i]);
    cr_sched_round(job, s);
}

void cr_build_inter_scatterv(cr_job *job, cr_sched *s, const cr_inter *x, const void *sbuf,
                             const size_t *slens, const size_t *sdispls, void *rbuf, size_t rlen,
                             int root)
{
    if (root == CR_INTER_NONE) return;
    if (root != CR_INTER_ROOT)
        xrecv(job, s, x, root, rbuf, rlen);
    else
        for (int i = 0; i < x->rsize; i++)
            xsend(job, s, x, i, (const char *)sbuf + sdispls[i], slens[i]);
    cr_sched_round(job, s);
}

void cr_build_inter_allgatherv(cr_job *job, cr_sched *s, const cr_inter *x, const void *sbuf,
                               size_t slen, void *rbuf, const size_t *rlens, const size_t *rdispls)
{
    int m = x->rsize;
    size_t total = 0;
    bool packed = true; /* the blocks lie back to back in rbuf, in order */
    for (int i = 0; i < m; i++) {
        packed = packed && rdispls[i] == total;
        total += rlens[i];
    }
    char *buf = packed ? rbuf : cr_sched_alloc(job, s, total);
    if (leader(x)) {
        size_t off = 0;
        for (int i = 0; i < m; off += rlens[i], i++) xrecv(job, s, x, i, buf + off, rlens[i]);
    }
    xsend(job, s, x, 0, sbuf, slen);
    cr_sched_round(job, s);
    cr_build_bcast_msg(job, s, x->local, buf, total, 0, CR_ALG_AUTO);
    if (packed) return;
    cr_sched_round(job, s);
    size_t off = 0;
    for (int i = 0; i < m; off += rlens[i], i++)
        cr_sched_copy(job, s, (char *)rbuf + rdispls[i], buf + off, rlens[i]);
    cr_sched_round(job, s);
}

void cr_build_inter_alltoallv(cr_job *job, cr_sched *s, const cr_inter *x, const void *sbuf,
                              const size_t *slens, const size_t *sdispls, void *rbuf,
                              const size_t *rlens, const size_t *rdispls)
{
    int m = x->rsize, first = x->local->me % m;
    for (int i = 0; i < m; i++) xrecv(job, s, x, i, (char *)rbuf + rdispls[i], rlens[i]);
    for (int k = 0; k < m; k++) { /* in the order me, me+1, ... (mod m) */
        int i = (first + k) % m;
        xsend(job, s, x, i, (const char *)sbuf + sdispls[i], slens[i]);
    }
    cr_sched_round(job, s);
}

void cr_build_inter_reduce(cr_job *job, cr_sched *s, const cr_inter *x, char *acc, void *rbuf,
                           size_t count, int root)
{
    if (root == CR_INTER_NONE) return;
    size_t len = count * s->o.elem;
    if (root == CR_INTER_ROOT) {
        xrecv(job, s, x, 0, rbuf, len);
        cr_sched_round(job, s);
        return;
    }
    cr_build_reduce(job, s, x->local, NULL, acc, count, 0, acc);
    if (leader(x)) {
        xsend(job, s, x, root, acc, len);
        cr_sched_round(job, s);
    }
}

/* The group's reduction to its leader (in acc), swapped there for the other
 * group's (into theirs). */
static void reduce_swap(cr_job *job, cr_sched *s, const cr_inter *x, char *acc, char *theirs,
                        size_t count)
{
    size_t len = count * s->o.elem;
    cr_build_reduce(job, s, x->local, NULL, acc, count, 0, acc);
    if (!leader(x)) return;
    xrecv(job, s, x, 0, theirs, len);
    xsend(job, s, x, 0, acc, len);
    cr_sched_round(job, s);
}

void cr_build_inter_allreduce(cr_job *job, cr_sched *s, const cr_inter *x, char *acc, void *rbuf,
                              size_t count)
{
    reduce_swap(job, s, x, acc, rbuf, count);
    cr_build_bcast_msg(job, s, x->local, rbuf, count * s->o.elem, 0, CR_ALG_AUTO);
}

void cr_build_inter_reduce_scatter(cr_job *job, cr_sched *s, const cr_inter *x, char *acc,
                                   void *rbuf, size_t count, const size_t *llens,
                                   const size_t *loffs)
{
    char *theirs = leader(x) ? cr_sched_alloc(job, s, count * s->o.elem) : NULL;
    reduce_swap(job, s, x, acc, theirs, count);
    cr_build_scatterv(job, s, x->local, theirs, llens, loffs, rbuf, llens[x->local->me], 0);
}

/* ---- the blocking forms: a schedule run as built ----------------------------- */

/* The call's schedule: its sequence number taken, its tags CR_INTER_TAG's
 * (then built, run and freed inline: the blocking path of a small call). A
 * member that takes no part in a rooted call (CR_INTER_NONE: its schedule is
 * empty) only counts the call. */
static void blocking(cr_sched *s, cr_inter *x, const char *op)
{
    cr_sched_base(s, op, x->ctx, CR_INTER_TAGBITS, CR_INTER_SEQMASK, (*x->seq)++, x->local->trunc);
    s->now = true;
}

void cr_inter_barrier(cr_job *job, cr_inter *x, const char *op)
{
    cr_sched s;
    blocking(&s, x, op);
    cr_build_inter_barrier(job, &s, x);
    cr_sched_run(job, &s);
    cr_sched_free(job, &s);
}

void cr_inter_bcast(cr_job *job, cr_inter *x, const char *op, void *buf, size_t len, int root)
{
    if (root == CR_INTER_NONE) {
        (*x->seq)++;
        return;
    }
    cr_sched s;
    blocking(&s, x, op);
    cr_build_inter_bcast(job, &s, x, buf, len, root);
    cr_sched_run(job, &s);
    cr_sched_free(job, &s);
}

void cr_inter_gatherv(cr_job *job, cr_inter *x, const char *op, const void *sbuf, size_t slen,
                      void *rbuf, const size_t *rlens, const size_t *rdispls, int root)
{
    if (root == CR_INTER_NONE) {
        (*x->seq)++;
        return;
    }
    cr_sched s;
    blocking(&s, x, op);
    cr_build_inter_gatherv(job, &s, x, sbuf, slen, rbuf, rlens, rdispls, root);
    cr_sched_run(job, &s);
    cr_sched_free(job, &s);
}

void cr_inter_scatterv(cr_job *job, cr_inter *x, const char *op, const void *sbuf,
                       const size_t *slens, const size_t *sdispls, void *rbuf, size_t rlen,
                       int root)
{
    if (root == CR_INTER_NONE) {
        (*x->seq)++;
        return;
    }
    cr_sched s;
    blocking(&s, x, op);
    cr_build_inter_scatterv(job, &s, x, sbuf, slens, sdispls, rbuf, rlen, root);
    cr_sched_run(job, &s);
    cr_sched_free(job, &s);
}

void cr_inter_allgatherv(cr_job *job, cr_inter *x, const char *op, const void *sbuf, size_t slen,
                         void *rbuf, const size_t *rlens, const size_t *rdispls)
{
    cr_sched s;
    blocking(&s, x, op);
    cr_build_inter_allgatherv(job, &s, x, sbuf, slen, rbuf, rlens, rdispls);
    cr_sched_run(job, &s);
    cr_sched_free(job, &s);
}

void cr_inter_alltoallv(cr_job *job, cr_inter *x, const char *op, const void *sbuf,
                        const size_t *slens, const size_t *sdispls, void *rbuf, const size_t *rlens,
                        const size_t *rdispls)
{
    cr_sched s;
    blocking(&s, x, op);
    cr_build_inter_alltoallv(job, &s, x, sbuf, slens, sdispls, rbuf, rlens, rdispls);
    cr_sched_run(job, &s);
    cr_sched_free(job, &s);
}

/* This member's data in a temporary of the schedule (the reduction writes
 * over it). */
static char *acc_of(cr_job *job, cr_sched *s, const cr_redop *o, const void *sbuf, size_t count)
{
    size_t len = count * o->elem;
    cr_sched_redop(job, s, o, count);
    char *acc = cr_sched_alloc(job, s, len);
    if (len) memcpy(acc, sbuf, len);
    return acc;
}

void cr_inter_reduce(cr_job *job, cr_inter *x, const char *op, const void *sbuf, void *rbuf,
                     size_t count, const cr_redop *o, int root)
{
    if (root == CR_INTER_NONE) {
        (*x->seq)++;
        return;
    }
    cr_sched s;
    blocking(&s, x, op);
    char *acc = NULL; /* the root only receives */
    if (root == CR_INTER_ROOT)
        s.o = *o;
    else
        acc = acc_of(job, &s, o, sbuf, count);
    cr_build_inter_reduce(job, &s, x, acc, rbuf, count, root);
    cr_sched_run(job, &s);
    cr_sched_free(job, &s);
}

void cr_inter_allreduce(cr_job *job, cr_inter *x, const char *op, const void *sbuf, void *rbuf,
                        size_t count, const cr_redop *o)
{
    cr_sched s;
    blocking(&s, x, op);
    cr_build_inter_allreduce(job, &s, x, acc_of(job, &s, o, sbuf, count), rbuf, count);
    cr_sched_run(job, &s);
    cr_sched_free(job, &s);
}

void cr_inter_reduce_scatter(cr_job *job, cr_inter *x, const char *op, const void *sbuf, void *rbuf,
                             size_t count, const cr_redop *o, const size_t *llens,
                             const size_t *loffs)
{
    cr_sched s;
    blocking(&s, x, op);
    cr_build_inter_reduce_scatter(job, &s, x, acc_of(job, &s, o, sbuf, count), rbuf, count, llens,
                                  loffs);
    cr_sched_run(job, &s);
    cr_sched_free(job, &s);
}
