/* Collective algorithms over point-to-point.
 *
 * - barrier: dissemination (ceil(log2 n) rounds of zero-byte messages);
 * - allreduce: recursive doubling; with a group size that is not a power of two
 *   the extra members first fold their data into a partner and get the result
 *   back at the end.
 * Invariants: every member calls the same collectives in the same order, so the
 * group's sequence number (part of every tag) is the same everywhere and the
 * messages of two successive collectives never match each other; combining
 * always puts the lower member's data on the left, so every member computes
 * bit-identical results and non-commutative operations see rank order. */
#include <string.h>

#include "coll.h"

#define TAG(seq, step) ((int32_t)(((seq)&0xffffu) << 8 | (step)))

static int rank_of(const cr_group *g, int i)
{
    return g->ranks ? g->ranks[i] : i;
}

static void exchange(cr_job *job, cr_group *g, const char *op, int peer, int32_t tag,
                     const void *sbuf, void *rbuf, size_t len)
{
    cr_sel sel = {.src = rank_of(g, peer), .ctx = g->ctx, .tag_mode = CR_TAG_EXACT, .tag = tag};
    cr_req *r = cr_irecv(job, op, &sel, rbuf, len);
    cr_send(job, op, rank_of(g, peer), g->ctx, tag, sbuf, len);
    cr_req_wait(job, r);
    cr_req_release(job, r);
}

void cr_coll_barrier(cr_job *job, cr_group *g, const char *op)
{
    uint32_t seq = g->seq++;
    int step = 0;
    for (int k = 1; k < g->size; k <<= 1, step++) {
        int to = (g->me + k) % g->size, from = (g->me - k + g->size) % g->size;
        int32_t tag = TAG(seq, step);
        cr_sel sel = {.src = rank_of(g, from), .ctx = g->ctx, .tag_mode = CR_TAG_EXACT, .tag = tag};
        cr_req *r = cr_irecv(job, op, &sel, NULL, 0);
        cr_send(job, op, rank_of(g, to), g->ctx, tag, NULL, 0);
        cr_req_wait(job, r);
        cr_req_release(job, r);
    }
}

void cr_coll_allreduce(cr_job *job, cr_group *g, const char *op, void *x, void *work, size_t count,
                       size_t elem, cr_op_fn fn)
{
    uint32_t seq = g->seq++;
    size_t len = count * elem;
    int n = g->size, me = g->me, pof2 = 1;
    while (pof2 * 2 <= n) pof2 *= 2;
    int extra = n - pof2; /* members pof2.. fold into members 0..extra-1 */
    if (me >= pof2) {
        cr_send(job, op, rank_of(g, me - pof2), g->ctx, TAG(seq, 0), x, len);
        cr_sel sel = {.src = rank_of(g, me - pof2),
                      .ctx = g->ctx,
                      .tag_mode = CR_TAG_EXACT,
                      .tag = TAG(seq, 1)};
        cr_status st;
        cr_recv(job, op, &sel, x, len, &st);
        return;
    }
    if (me < extra) {
        cr_sel sel = {.src = rank_of(g, me + pof2),
                      .ctx = g->ctx,
                      .tag_mode = CR_TAG_EXACT,
                      .tag = TAG(seq, 0)};
        cr_status st;
        cr_recv(job, op, &sel, work, len, &st);
        fn(x, work, x, count);
    }
    int step = 2;
    for (int k = 1; k < pof2; k <<= 1, step++) {
        int peer = me ^ k;
        exchange(job, g, op, peer, TAG(seq, step), x, work, len);
        if (peer < me)
            fn(work, x, x, count);
        else
            fn(x, work, x, count);
    }
    if (me < extra) cr_send(job, op, rank_of(g, me + pof2), g->ctx, TAG(seq, 1), x, len);
}

#define DEFINE_OP(name, T, expr)                                                                   \
    void name(const void *lo, const void *hi, void *out, size_t n)                                 \
    {                                                                                              \
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
