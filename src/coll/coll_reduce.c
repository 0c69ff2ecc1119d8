/* Collective reductions over point-to-point: reduce to one member, reduce to
 * all (allreduce), reduce-scatter and inclusive prefix (scan), plus the
 * predefined operations.
 *
 * Algorithms:
 *  - reduce: binomial tree. Data is combined over contiguous runs of members,
 *    lower run on the left; for a non-commutative operation and a root other
 *    than member 0 the tree is rooted at member 0 and the result sent on.
 *  - allreduce: recursive doubling for short vectors; Rabenseifner
 *    (reduce-scatter by recursive halving, then all-gather by recursive
 *    doubling) for long ones. With a group size that is not a power of two, the
 *    first 2*extra members pair up (2i folds into 2i+1) so that the remaining
 *    power of two still holds contiguous runs in member order. With more ranks
 *    than cores, up to 4 KiB (cr_coll_linear): member 0 takes the others' data
 *    one a round in member order, joins them as a binary counter (a balanced
 *    tree for a power of two) and sends the result back (linear). The
 *    first step reads the caller's input where it is (no copy into the
 *    result buffer first: 1 MiB at 2 ranks 114 -> 90 us). With more ranks
 *    than cores and every member on this host, long vectors by single copy
 *    instead (cr_coll_allreduce_direct): member i reduces share i of the
 *    vector read out of every member's input, then reads the other shares.
 *    A schedule moved on by polling (nonblocking, persistent) with more ranks
 *    than cores and a power of two of members does Rabenseifner's exchanges
 *    in two rounds, each member's share from all at once, then to all at once
 *    (allreduce_once): 4 ranks on 2 cores, osu_iallreduce 256 KiB 204-225 ->
 *    164-168 us, 1 MiB 544-751 -> 475-493.
 *  - reduce-scatter: Rabenseifner's first half alone, each member ending
 *    with one block, which a last swap brings to its owner. With a group size
 *    that is not a power of two, pairs fold first as in allreduce; the
 *    member a pair folded into stands for both their blocks, and sends the
 *    folded member its block at the end: no all-gather and no sending the
 *    whole result back, which the allreduce of which each kept its part had.
 *    There, a commutative operation goes round a ring instead (n-1 steps,
 *    each member sending (n-1)/n of the vector where the fold sends all of
 *    it): where the ring's steps are at most twice the halving's, or from
 *    16 KiB per member. 3 and 5 ranks on 2 cores, osu_reduce_scatter 256
 *    KiB: 81 -> 65 us, 605 -> 441 (medians of 5). With more ranks than
 *    cores, up to 4 KiB: linear, as allreduce.
 *  - scan: recursive doubling (member i adds the run ending at i-2^k);
 *    exscan: the same, each member's result then passed one member up.
 * Invariants: every combine puts the data of lower members on the left, and the
 * runs it joins are adjacent, so any associative operation gives x0 op x1 op ...
 * op x(n-1) exactly, and every member of an allreduce gets bit-identical
 * results; vectors are split only at element boundaries (o->elem); when the
 * operation may not write over its inputs (!alias_ok) results go through scratch. */
#include <stdlib.h>
#include <string.h>

#include "coll.h"

#define RABENSEIFNER_MIN 4096 /* bytes */
#define RS_RING_BLOCK 16384   /* bytes per member: a reduce-scatter's ring at any group size */
/* With more ranks than cores, an allreduce of at least this many bytes, and
 * as many per member, reads the others' inputs by single copy (coll_direct.c)
 * when every member is on this host: each member reduces its share at its own
 * pace between two agreements, where each of Rabenseifner's steps needs both
 * partners on a core at once. osu_allreduce on 2 cores, 2 interleaved runs
 * (bench/results/osu_coll2.md), direct's time over Rabenseifner's (and over
 * Open MPI's): 4 ranks 256 KiB-2 MiB 0.60-1.05 (0.71-1.05), 4 MiB 0.97-1.18
 * (1.18-1.23); 8 ranks 256 KiB-4 MiB 0.63-0.95 (0.67-1.00), 128 KiB 0.78-0.93;
 * 3 ranks 512 KiB-4 MiB 0.76-0.94 (0.80-1.03), 128-256 KiB 1.14-1.26: there
 * its three short collectives cost more than the steps they save. */
#define ALLREDUCE_DIRECT_OVERSUB_MIN (256u << 10)
#define ALLREDUCE_DIRECT_SHARE_MIN (32u << 10)

/* out = lo op hi, honouring alias_ok. Under --sim the arithmetic is the
 * node's compute (vtime.h), though the call it is in is not. */
void cr_coll_combine(cr_job *job, const cr_redop *o, const void *lo, const void *hi, void *out,
                     size_t count, void *scratch)
{
    if (!count) return;
    int sim = __builtin_expect(job->vt.base != NULL, 0) ? cr_vt_compute_begin(&job->vt) : -1;
    if (o->alias_ok || (out != lo && out != hi)) {
        o->fn(lo, hi, out, count, o->arg);
    } else {
        o->fn(lo, hi, scratch, count, o->arg);
        memcpy(out, scratch, count * o->elem);
    }
    if (sim >= 0) cr_vt_compute_end(&job->vt, sim);
}

/* A blocking collective's schedule: seq taken, its tags CR_COLL_TAG's. */
static void sched_of(cr_job *job, cr_sched *s, cr_group *g, const char *op, uint32_t seq,
                     const cr_redop *o, size_t count)
{
    cr_sched_blocking(s, g, op, seq);
    cr_sched_redop(job, s, o, count);
}

/* ---- reduce -------------------------------------------------------------- */

/* Children's data arrive at once, then combine in member order (lower run on
 * the left) and go to the parent. */
void cr_build_reduce(cr_job *job, cr_sched *s, const cr_group *g, const char *in, char *acc,
                     size_t count, int root, char *res)
{
    const cr_redop *o = &s->o;
    size_t len = count * o->elem;
    int n = g->size, me = g->me;
    /* Non-commutative: the tree's root must be member 0 for runs to stay in order. */
    int troot = o->commute ? root : 0, rel = (me - troot + n) % n, mask = 1;
    char *tmp[32];
    int kids = 0;
    for (; mask < n && !(rel & mask); mask <<= 1)
        if (rel + mask < n) {
            tmp[kids] = cr_sched_alloc(job, s, len);
            cr_sched_recv(job, s, cr_group_rank(g, (rel + mask + troot) % n), 0, tmp[kids++], len);
        }
    cr_sched_round(job, s);
    /* With the input apart, the first combine reads it (a leaf sends it as it
     * is): the same operands in the same order as when acc held it. */
    const char *mine = in ? in : acc;
    for (int k = 0; k < kids; k++, mine = acc) cr_sched_combine(job, s, mine, tmp[k], acc, count);
    if (rel) cr_sched_send(job, s, cr_group_rank(g, (rel - mask + troot) % n), 0, mine, len);
    cr_sched_round(job, s);
    if (troot != root) {
        if (me == troot) cr_sched_send(job, s, cr_group_rank(g, root), 1, mine, len);
        if (me == root) cr_sched_recv(job, s, cr_group_rank(g, troot), 1, acc, len);
        cr_sched_round(job, s);
        if (me == root) mine = acc;
    }
    if (me == root && res != mine && len) cr_sched_copy(job, s, res, mine, len);
    cr_sched_round(job, s);
}

/* Whether an all-reduce (or a reduce, forced direct) of count elements reads
 * its members' inputs directly (coll_direct.c): with more ranks than cores,
 * from ALLREDUCE_DIRECT_OVERSUB_MIN (the same on every member). */
static bool reads_inputs(cr_job *job, const cr_group *g, size_t count, size_t elem)
{
    int f = cr_coll_forced(job);
    size_t len = count * elem;
    return count >= (size_t)g->size &&
           (f == CR_ALG_DIRECT || (f == CR_ALG_AUTO && g->size > 2 && cr_group_oversub(job, g) &&
                                   len >= ALLREDUCE_DIRECT_OVERSUB_MIN &&
                                   len / (size_t)g->size >= ALLREDUCE_DIRECT_SHARE_MIN)) &&
           cr_coll_direct_ok(job, g);
}

/* The binomial tree. The direct form (coll_direct.c: each member combines its
 * share of every member's input in the tree's order, the root reads the
 * shares) only where asked for (COURIER_COLL_ALG=direct): with more ranks
 * than cores it beat the tree while the tree copied its input first, but the
 * tree that reads the input where it is beats it at every size measured, 3, 4
 * and 8 ranks on 2 cores, 256 KiB-8 MiB (osu_reduce, 4 ranks, medians of 5:
 * 79 us against 151 at 256 KiB, 239 against 368 at 1 MiB, 813 against 1,298
 * at 4 MiB; Open MPI 70, 244, 1,454). */
void cr_coll_reduce(cr_job *job, cr_group *g, const char *op, const void *sbuf, void *rbuf,
                    size_t count, const cr_redop *o, int root)
{
    if (g->size > 1 && cr_coll_forced(job) == CR_ALG_DIRECT &&
        reads_inputs(job, g, count, o->elem) &&
        cr_coll_reduce_direct(job, g, op, sbuf, rbuf, count, o, root))
        return;
    cr_trace_how(job, "binomial");
    size_t len = count * o->elem;
    cr_sched s;
    sched_of(job, &s, g, op, g->seq++, o, count);
    /* The root combines into its receive buffer, the others into scratch; the
     * input is read where it is, not copied first */
    char *acc = g->me == root ? rbuf : cr_sched_alloc(job, &s, len);
    cr_build_reduce(job, &s, g, sbuf, acc, count, root, rbuf);
    cr_sched_run(job, &s);
    cr_sched_free(job, &s);
}

/* ---- allreduce ----------------------------------------------------------- */

/* Member index of power-of-two rank nr after the fold. */
static int unfold(int nr, int extra)
{
    return nr < extra ? 2 * nr + 1 : nr + extra;
}

static size_t disp(size_t count, int b, int pof2)
{
    return count / (size_t)pof2 * (size_t)b + count % (size_t)pof2 * (size_t)b / (size_t)pof2;
}

static void allreduce_rabenseifner(cr_job *job, cr_sched *s, const cr_group *g, const char *in,
                                   char *acc, char *tmp, size_t count, int nr, int pof2, int extra)
{
    cr_trace_how(job, "rabenseifner");
    size_t e = s->o.elem;
    int lo = 0, hi = pof2, step = 2, nsteps = 0;
    int los[32], his[32];
    /* Reduce-scatter, partners at distance 1, 2, 4...: each step joins adjacent runs. */
    for (int mask = 1; mask < pof2; mask <<= 1, step++) {
        int pnr = nr ^ mask, peer = cr_group_rank(g, unfold(pnr, extra)), mid = (lo + hi) / 2;
        int klo = nr & mask ? mid : lo, khi = nr & mask ? hi : mid;
        int slo = nr & mask ? lo : mid, shi = nr & mask ? mid : hi;
        size_t ko = disp(count, klo, pof2), kn = disp(count, khi, pof2) - ko;
        size_t so = disp(count, slo, pof2), sn = disp(count, shi, pof2) - so;
        cr_sched_recv(job, s, peer, step, tmp, kn * e);
        cr_sched_send(job, s, peer, step, in + so * e, sn * e);
        cr_sched_round(job, s);
        if (pnr < nr)
            cr_sched_combine(job, s, tmp, in + ko * e, acc + ko * e, kn);
        else
            cr_sched_combine(job, s, in + ko * e, tmp, acc + ko * e, kn);
        in = acc; /* what this member keeps is in acc from now on */
        los[nsteps] = lo;
        his[nsteps++] = hi;
        lo = klo;
        hi = khi;
    }
    /* All-gather: undo the halving in reverse. */
    for (int mask = pof2 >> 1; mask >= 1; mask >>= 1, step++) {
        int pnr = nr ^ mask, peer = cr_group_rank(g, unfold(pnr, extra));
        nsteps--;
        int plo = los[nsteps], phi = his[nsteps], mid = (plo + phi) / 2;
        int olo = lo == plo ? mid : plo, ohi = lo == plo ? phi : mid; /* the partner's run */
        size_t mo = disp(count, lo, pof2), mn = disp(count, hi, pof2) - mo;
        size_t oo = disp(count, olo, pof2), on = disp(count, ohi, pof2) - oo;
        cr_sched_recv(job, s, peer, step, acc + oo * e, on * e);
        cr_sched_send(job, s, peer, step, acc + mo * e, mn * e);
        cr_sched_round(job, s);
        lo = plo;
        hi = phi;
    }
}

/* Rabenseifner's exchanges in two rounds, for a schedule moved on by polling
 * with more ranks than cores (cr_sched_polled) and a power of two of members:
 * each of the halving's 2 log2(n) rounds waits until its partner has had a
 * core. Member me's share (block me of n) comes from every other member at
 * once and is combined as the halving combines it, pairs of members, then
 * pairs of pairs (the same operands in the same order: the same bits); then
 * each share goes to every other member at once. */
static void allreduce_once(cr_job *job, cr_sched *s, const cr_group *g, const char *in, char *acc,
                           size_t count)
{
    cr_trace_how(job, "rabenseifner, all at once");
    size_t e = s->o.elem;
    int n = g->size, me = g->me;
    size_t mo = disp(count, me, n), mn = disp(count, me + 1, n) - mo, sh = mn * e;
    char *part = cr_sched_alloc(job, s, (size_t)n * sh); /* member i's piece of my share at i */
    for (int i = 1; i < n; i++) {
        int from = (me - i + n) % n, to = (me + i) % n;
        size_t to_o = disp(count, to, n), to_n = disp(count, to + 1, n) - to_o;
        cr_sched_recv(job, s, cr_group_rank(g, from), 2, part + (size_t)from * sh, sh);
        cr_sched_send(job, s, cr_group_rank(g, to), 2, in + to_o * e, to_n * e);
    }
    cr_sched_round(job, s);
    for (int w = 1; w < n; w <<= 1) /* slot i holds the run i .. i+w-1 */
        for (int i = 0; i < n; i += 2 * w) {
            const char *lo = w == 1 && i == me ? in + mo * e : part + (size_t)i * sh;
            const char *hi = w == 1 && i + 1 == me ? in + mo * e : part + (size_t)(i + w) * sh;
            cr_sched_combine(job, s, lo, hi, 2 * w == n ? acc + mo * e : part + (size_t)i * sh, mn);
        }
    for (int i = 1; i < n; i++) {
        int from = (me - i + n) % n, to = (me + i) % n;
        size_t fo = disp(count, from, n), fn = disp(count, from + 1, n) - fo;
        cr_sched_recv(job, s, cr_group_rank(g, from), 3, acc + fo * e, fn * e);
        cr_sched_send(job, s, cr_group_rank(g, to), 3, acc + mo * e, sh);
    }
    cr_sched_round(job, s);
}

/* The linear forms' first half: every member sends its vector to member 0,
 * which takes them one a round in member order and combines them as a binary
 * counter does (two partial results of as many members join, lower members
 * on the left; the rest from the top down at the end): acc (member 0's) then
 * holds the whole reduction, combined as the binomial tree and the shared
 * area combine it (a balanced tree where the members are a power of two: 16
 * equal floats sum to 16 times one exactly, where a running sum rounds). */
static void linear_fan_in(cr_job *job, cr_sched *s, const cr_group *g, const char *in, char *acc,
                          size_t count)
{
    size_t len = count * s->o.elem;
    if (g->me) {
        cr_sched_send(job, s, cr_group_rank(g, 0), 0, in, len);
        cr_sched_round(job, s);
        return;
    }
    const char *part[33];          /* the stack of partial results; part[0] is in, then acc */
    char *room[33] = {acc};        /* where each place's partial result is made */
    int height[33] = {0}, top = 1; /* (a place above the top is free: its room is reused) */
    part[0] = in;
    for (int i = 1; i < g->size; i++) {
        if (!room[top]) room[top] = cr_sched_alloc(job, s, len);
        cr_sched_recv(job, s, cr_group_rank(g, i), 0, room[top], len);
        cr_sched_round(job, s);
        part[top] = room[top], height[top++] = 0;
        for (; top >= 2 && height[top - 1] == height[top - 2]; top--) {
            cr_sched_combine(job, s, part[top - 2], part[top - 1], room[top - 2], count);
            part[top - 2] = room[top - 2], height[top - 2]++;
        }
    }
    for (; top >= 2; top--) {
        cr_sched_combine(job, s, part[top - 2], part[top - 1], room[top - 2], count);
        part[top - 2] = room[top - 2];
    }
}

/* Everyone sends to member 0 (linear_fan_in), which sends the result back. */
static void allreduce_linear(cr_job *job, cr_sched *s, const cr_group *g, const char *in, char *acc,
                             size_t count)
{
    cr_trace_how(job, "linear");
    size_t len = count * s->o.elem;
    linear_fan_in(job, s, g, in, acc, count);
    if (g->me)
        cr_sched_recv(job, s, cr_group_rank(g, 0), 1, acc, len);
    else
        for (int i = 1; i < g->size; i++) cr_sched_send(job, s, cr_group_rank(g, i), 1, acc, len);
    cr_sched_round(job, s);
}

void cr_build_allreduce(cr_job *job, cr_sched *s, const cr_group *g, const char *in, char *acc,
                        size_t count)
{
    size_t len = count * s->o.elem;
    int n = g->size, me = g->me, pof2 = 1;
    if (!in) in = acc;
    if (n == 1) {
        cr_sched_copy(job, s, acc, in, len);
        return;
    }
    if (cr_coll_linear(job, g, len)) {
        allreduce_linear(job, s, g, in, acc, count);
        return;
    }
    if (cr_sched_polled(job, s, g, CR_ALG_AUTO) && !(n & (n - 1)) && len >= RABENSEIFNER_MIN &&
        count >= (size_t)n) {
        allreduce_once(job, s, g, in, acc, count);
        return;
    }
    while (pof2 * 2 <= n) pof2 *= 2;
    int extra = n - pof2, nr;
    if (me < 2 * extra && !(me & 1)) { /* fold into me+1, get the result back at the end */
        cr_sched_send(job, s, cr_group_rank(g, me + 1), 0, in, len);
        cr_sched_round(job, s);
        cr_sched_recv(job, s, cr_group_rank(g, me + 1), 1, acc, len);
        cr_sched_round(job, s);
        return;
    }
    char *tmp = cr_sched_alloc(job, s, len);
    if (me < 2 * extra) {
        cr_sched_recv(job, s, cr_group_rank(g, me - 1), 0, tmp, len);
        cr_sched_round(job, s);
        cr_sched_combine(job, s, tmp, in, acc, count);
        in = acc;
        nr = me / 2;
    } else {
        nr = me - extra;
    }
    int f = cr_coll_forced(job);
    bool rab = f == CR_ALG_RABENSEIFNER ||
               (f != CR_ALG_RECDBL && len >= RABENSEIFNER_MIN && count >= (size_t)pof2);
    if (rab && count >= (size_t)pof2) {
        allreduce_rabenseifner(job, s, g, in, acc, tmp, count, nr, pof2, extra);
    } else {
        cr_trace_how(job, "recursive doubling");
        for (int mask = 1, step = 2; mask < pof2; mask <<= 1, step++) {
            int pnr = nr ^ mask, peer = cr_group_rank(g, unfold(pnr, extra));
            cr_sched_recv(job, s, peer, step, tmp, len);
            cr_sched_send(job, s, peer, step, in, len);
            cr_sched_round(job, s);
            if (pnr < nr)
                cr_sched_combine(job, s, tmp, in, acc, count);
            else
                cr_sched_combine(job, s, in, tmp, acc, count);
            in = acc;
        }
    }
    if (me < 2 * extra) cr_sched_send(job, s, cr_group_rank(g, me - 1), 1, acc, len);
    cr_sched_round(job, s);
}

void cr_coll_allreduce(cr_job *job, cr_group *g, const char *op, const void *sbuf, void *rbuf,
                       size_t count, const cr_redop *o)
{
    if (g->size == 1) {
        if (rbuf != sbuf && count) memcpy(rbuf, sbuf, count * o->elem);
        g->seq++;
        return;
    }
    if (cr_coll_shm_allreduce(job, g, op, sbuf, rbuf, count, o)) return;
    if (reads_inputs(job, g, count, o->elem) &&
        cr_coll_allreduce_direct(job, g, op, sbuf, rbuf, count, o))
        return;
    uint32_t seq = g->seq++;
    cr_sched s;
    sched_of(job, &s, g, op, seq, o, count);
    cr_build_allreduce(job, &s, g, sbuf, rbuf, count); /* reads sbuf: no copy into rbuf first */
    cr_sched_run(job, &s);
    cr_sched_free(job, &s);
}

/* ---- reduce-scatter -------------------------------------------------------- */

/* i with its low 'bits' bits in reverse order. */
static int bit_reverse(int i, int bits)
{
    int r = 0;
    for (int b = 0; b < bits; b++) r |= ((i >> b) & 1) << (bits - 1 - b);
    return r;
}

/* Member r passes block r-1-k on to r+1 in step k, its own input combined
 * in, and receives block r-2-k from r-1: after n-1 steps block r is whole at
 * r. Combines in no fixed order: commutative operations only. */
static void reduce_scatter_ring(cr_job *job, cr_sched *s, const cr_group *g, const char *in,
                                char *out, const size_t *off)
{
    cr_trace_how(job, "ring");
    size_t e = s->o.elem, most = 0;
    int n = g->size, me = g->me;
    for (int i = 0; i < n; i++)
        if (off[i + 1] - off[i] > most) most = off[i + 1] - off[i];
    char *tmp = cr_sched_alloc(job, s, most * e), *acc = cr_sched_alloc(job, s, off[n] * e);
    int to = cr_group_rank(g, (me + 1) % n), from = cr_group_rank(g, (me + n - 1) % n);
    for (int k = 0; k < n - 1; k++) {
        int sb = ((me - 1 - k) % n + n) % n, rb = ((me - 2 - k) % n + n) % n;
        const char *src = k ? acc : in;
        cr_sched_recv(job, s, from, 2 + k, tmp, (off[rb + 1] - off[rb]) * e);
        cr_sched_send(job, s, to, 2 + k, src + off[sb] * e, (off[sb + 1] - off[sb]) * e);
        cr_sched_round(job, s);
        cr_sched_combine(job, s, tmp, in + off[rb] * e, k == n - 2 ? out : acc + off[rb] * e,
                         off[rb + 1] - off[rb]);
    }
}

/* Everyone sends its vector to member 0 (linear_fan_in), which sends each
 * member its block. */
static void reduce_scatter_linear(cr_job *job, cr_sched *s, const cr_group *g, const char *in,
                                  char *out, const size_t *off)
{
    cr_trace_how(job, "linear");
    size_t e = s->o.elem;
    int n = g->size, me = g->me;
    char *acc = me ? NULL : cr_sched_alloc(job, s, off[n] * e);
    linear_fan_in(job, s, g, in, acc, off[n]);
    if (me) {
        cr_sched_recv(job, s, cr_group_rank(g, 0), 1, out, (off[me + 1] - off[me]) * e);
    } else {
        for (int i = 1; i < n; i++)
            cr_sched_send(job, s, cr_group_rank(g, i), 1, acc + off[i] * e,
                          (off[i + 1] - off[i]) * e);
        cr_sched_copy(job, s, out, acc, off[1] * e);
    }
    cr_sched_round(job, s);
}

void cr_build_reduce_scatter(cr_job *job, cr_sched *s, const cr_group *g, const char *in, char *out,
                             const size_t *off)
{
    size_t e = s->o.elem;
    int n = g->size, me = g->me, pof2 = 1, bits = 0, lo, hi, step = 2;
    if (n == 1) {
        cr_trace_how(job, "recursive halving");
        cr_sched_copy(job, s, out, in, off[1] * e);
        return;
    }
    if (cr_coll_linear(job, g, off[n] * e)) { /* more ranks than cores, a short vector */
        reduce_scatter_linear(job, s, g, in, out, off);
        return;
    }
    while (pof2 * 2 <= n) pof2 *= 2, bits++;
    /* Outside a power of two, a commutative operation goes round the ring where
     * its n-1 steps are not many more than the fold and halving's bits+2, or
     * each block is long enough for its bytes to count more than its steps */
    int f = cr_coll_forced(job);
    if (s->o.commute &&
        (f == CR_ALG_RING || (f == CR_ALG_AUTO && pof2 != n &&
                              (n - 1 <= 2 * (bits + 2) || off[n] * e / n >= RS_RING_BLOCK)))) {
        reduce_scatter_ring(job, s, g, in, out, off);
        return;
    }
    cr_trace_how(job, "recursive halving");
    int extra = n - pof2, nr;
    int last = 2 + bits;               /* the tag of the blocks' way to their owners */
    if (me < 2 * extra && !(me & 1)) { /* fold into me+1; the block comes back at the end */
        int h = unfold(bit_reverse(me / 2, bits), extra);
        cr_sched_send(job, s, cr_group_rank(g, me + 1), 0, in, off[n] * e);
        cr_sched_round(job, s);
        cr_sched_recv(job, s, cr_group_rank(g, h), last, out, (off[me + 1] - off[me]) * e);
        cr_sched_round(job, s);
        return;
    }
    /* Virtual member v of the power of two owns the blocks of the members it
     * stands for (2v and 2v+1 where a pair folded, else v+extra): vo[v] is
     * where they start. */
    size_t *vo = cr_sched_alloc(job, s, (size_t)(pof2 + 1) * sizeof *vo);
    for (int v = 0; v <= pof2; v++) vo[v] = off[v < extra ? 2 * v : v + extra];
    bool fold = me < 2 * extra;
    nr = fold ? me / 2 : me - extra;
    int b = bit_reverse(nr, bits); /* the virtual block this member ends with */
    /* tmp: the folded partner's vector or the first step's half, the most any
     * step receives; acc: the runs combined so far, at their place in the
     * vector (2 members: none) */
    int k0 = nr & 1 ? pof2 / 2 : 0;
    char *tmp = cr_sched_alloc(job, s, (fold ? off[n] : vo[k0 + pof2 / 2] - vo[k0]) * e);
    char *acc = n > 2 ? cr_sched_alloc(job, s, off[n] * e) : NULL;
    const char *cur = in;
    if (fold) { /* member me-1's vector, on the left */
        cr_sched_recv(job, s, cr_group_rank(g, me - 1), 0, tmp, off[n] * e);
        cr_sched_round(job, s);
        cr_sched_combine(job, s, tmp, in, acc, off[n]);
        cur = acc;
    }
    lo = 0;
    hi = pof2;
    for (int mask = 1; mask < pof2; mask <<= 1, step++) {
        int pnr = nr ^ mask, peer = cr_group_rank(g, unfold(pnr, extra)), mid = (lo + hi) / 2;
        int klo = nr & mask ? mid : lo, khi = nr & mask ? hi : mid;
        int slo = nr & mask ? lo : mid, shi = nr & mask ? mid : hi;
        size_t ko = vo[klo], kn = vo[khi] - ko, so = vo[slo], sn = vo[shi] - so;
        cr_sched_recv(job, s, peer, step, tmp, kn * e);
        cr_sched_send(job, s, peer, step, cur + so * e, sn * e);
        cr_sched_round(job, s);
        /* the last step of a member that ends with its own block alone lands in out */
        char *dst = mask << 1 == pof2 && b == nr && !fold ? out : acc + ko * e;
        if (pnr < nr)
            cr_sched_combine(job, s, tmp, cur + ko * e, dst, kn);
        else
            cr_sched_combine(job, s, cur + ko * e, tmp, dst, kn);
        if (acc) cur = acc;
        lo = klo;
        hi = khi;
    }
    /* Virtual block b to the members it stands for, this member's own block
     * from the one that holds it (member bit_reverse(nr): the reverse is its
     * own inverse). */
    for (int m = b < extra ? 2 * b : b + extra, to = b < extra ? 2 * b + 1 : m; m <= to; m++) {
        size_t len = (off[m + 1] - off[m]) * e;
        if (m != me)
            cr_sched_send(job, s, cr_group_rank(g, m), last, acc + off[m] * e, len);
        else if (fold) /* (a member alone with its block has it in out) */
            cr_sched_copy(job, s, out, acc + off[m] * e, len);
    }
    if (b != nr)
        cr_sched_recv(job, s, cr_group_rank(g, unfold(b, extra)), last, out,
                      (off[me + 1] - off[me]) * e);
    cr_sched_round(job, s);
}

bool cr_coll_reduce_scatter(cr_job *job, cr_group *g, const char *op, const void *sbuf, void *rbuf,
                            const size_t *off, const cr_redop *o)
{
    if (cr_coll_shm_reduces(job, g, off[g->size] * o->elem)) return false;
    uint32_t seq = g->seq++;
    cr_sched s;
    sched_of(job, &s, g, op, seq, o, off[g->size]);
    cr_build_reduce_scatter(job, &s, g, sbuf, rbuf, off);
    cr_sched_run(job, &s);
    cr_sched_free(job, &s);
    return true;
}

/* ---- scan ---------------------------------------------------------------- */

/* acc holds the run of members (me-2^k, me]; it goes to me+2^k, and the run
 * just below arrives from me-2^k. */
void cr_build_scan(cr_job *job, cr_sched *s, const cr_group *g, char *acc, size_t count)
{
    size_t len = count * s->o.elem;
    int n = g->size, me = g->me, step = 0;
    char *tmp = n > 1 ? cr_sched_alloc(job, s, len) : NULL;
    bool got = false;
    for (int mask = 1; mask < n; mask <<= 1, step++) {
        if (got) cr_sched_combine(job, s, tmp, acc, acc, count);
        got = me - mask >= 0;
        if (got) cr_sched_recv(job, s, cr_group_rank(g, me - mask), step, tmp, len);
        if (me + mask < n) cr_sched_send(job, s, cr_group_rank(g, me + mask), step, acc, len);
        cr_sched_round(job, s);
    }
    if (got) cr_sched_combine(job, s, tmp, acc, acc, count);
    cr_sched_round(job, s);
}

void cr_coll_scan(cr_job *job, cr_group *g, const char *op, const void *sbuf, void *rbuf,
                  size_t count, const cr_redop *o)
{
    cr_trace_how(job, "recursive doubling");
    if (rbuf != sbuf && count) memcpy(rbuf, sbuf, count * o->elem);
    cr_sched s;
    sched_of(job, &s, g, op, g->seq++, o, count);
    cr_build_scan(job, &s, g, rbuf, count);
    cr_sched_run(job, &s);
    cr_sched_free(job, &s);
}

/* Exclusive prefix: the inclusive one passed one member up (member i > 0
 * gets x0 op ... op x(i-1) in out; member 0's out is left as it was). */
void cr_build_exscan(cr_job *job, cr_sched *s, const cr_group *g, char *acc, size_t count,
                     void *out)
{
    size_t len = count * s->o.elem;
    int n = g->size, me = g->me;
    cr_build_scan(job, s, g, acc, count);
    if (me > 0) cr_sched_recv(job, s, cr_group_rank(g, me - 1), 0xfff, out, len);
    if (me + 1 < n) cr_sched_send(job, s, cr_group_rank(g, me + 1), 0xfff, acc, len);
    cr_sched_round(job, s);
}

void cr_coll_exscan(cr_job *job, cr_group *g, const char *op, const void *sbuf, void *rbuf,
                    size_t count, const cr_redop *o)
{
    cr_trace_how(job, "recursive doubling");
    size_t len = count * o->elem;
    cr_sched s;
    sched_of(job, &s, g, op, g->seq++, o, count);
    char *acc = cr_sched_alloc(job, &s, len);
    if (len) memcpy(acc, sbuf, len);
    cr_build_exscan(job, &s, g, acc, count, rbuf);
    cr_sched_run(job, &s);
    cr_sched_free(job, &s);
}

/* ---- predefined operations ----------------------------------------------- */

#define DEFINE_OP(name, T, expr)                                                                   \
    void name(const void *lo, const void *hi, void *out, size_t n, const void *arg)                \
    {                                                                                              \
        (void)arg;                                                                                 \
        const T *a = lo, *b = hi;                                                                  \
        T *o = out;                                                                                \
        for (size_t i = 0; i < n; i++) o[i] = (expr);                                              \
    }

DEFINE_OP(cr_op_sum_double, double, a[i] + b[i])
DEFINE_OP(cr_op_max_double, double, a[i] > b[i] ? a[i] : b[i])
DEFINE_OP(cr_op_min_double, double, a[i] < b[i] ? a[i] : b[i])
DEFINE_OP(cr_op_sum_long, long, (long)((unsigned long)a[i] + (unsigned long)b[i]))
DEFINE_OP(cr_op_max_long, long, a[i] > b[i] ? a[i] : b[i])
DEFINE_OP(cr_op_min_long, long, a[i] < b[i] ? a[i] : b[i])
DEFINE_OP(cr_op_prod_double, double, a[i] * b[i])
DEFINE_OP(cr_op_sum_float, float, a[i] + b[i])
DEFINE_OP(cr_op_max_float, float, a[i] > b[i] ? a[i] : b[i])
DEFINE_OP(cr_op_min_float, float, a[i] < b[i] ? a[i] : b[i])
DEFINE_OP(cr_op_prod_float, float, a[i] * b[i])
DEFINE_OP(cr_op_prod_long, long, (long)((unsigned long)a[i] * (unsigned long)b[i]))
DEFINE_OP(cr_op_band_long, long, a[i] & b[i])
DEFINE_OP(cr_op_bor_long, long, a[i] | b[i])
DEFINE_OP(cr_op_bxor_long, long, a[i] ^ b[i])
