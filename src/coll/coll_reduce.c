/* Collective reductions over point-to-point: reduce to one member, reduce to
 * all (allreduce) and inclusive prefix (scan), plus the predefined operations.
 *
 * Algorithms:
 *  - reduce: binomial tree. Data is combined over contiguous runs of members,
 *    lower run on the left; for a non-commutative operation and a root other
 *    than member 0 the tree is rooted at member 0 and the result sent on.
 *  - allreduce: recursive doubling for short vectors; Rabenseifner
 *    (reduce-scatter by recursive halving, then all-gather by recursive
 *    doubling) for long ones. With a group size that is not a power of two, the
 *    first 2*extra members pair up (2i folds into 2i+1) so that the remaining
 *    power of two still holds contiguous runs in member order.
 *  - scan: recursive doubling (member i adds the run ending at i-2^k).
 * Invariants: every combine puts the data of lower members on the left, and the
 * runs it joins are adjacent, so any associative operation gives x0 op x1 op ...
 * op x(n-1) exactly, and every member of an allreduce gets bit-identical
 * results; vectors are split only at element boundaries (o->elem); when the
 * operation may not write over its inputs (!alias_ok) results go through scratch. */
#include <stdlib.h>
#include <string.h>

#include "coll.h"

#define RABENSEIFNER_MIN 4096 /* bytes */
#define STACK_SCRATCH 256

/* out = lo op hi, honouring alias_ok. */
void cr_coll_combine(const cr_redop *o, const void *lo, const void *hi, void *out, size_t count,
                     void *scratch)
{
    if (!count) return;
    if (o->alias_ok || (out != lo && out != hi)) {
        o->fn(lo, hi, out, count, o->arg);
        return;
    }
    o->fn(lo, hi, scratch, count, o->arg);
    memcpy(out, scratch, count * o->elem);
}

/* Scratch for 'nbuf' vectors of len bytes: on the stack when small. */
typedef struct scratch {
    char small[STACK_SCRATCH * 3];
    char *p;
} scratch;

static char *scratch_get(cr_job *job, const char *op, scratch *s, size_t len, int nbuf)
{
    size_t need = len * (size_t)nbuf;
    s->p = need <= sizeof s->small ? s->small : cr_coll_alloc(job, op, need);
    return s->p;
}

static void scratch_put(scratch *s)
{
    if (s->p != s->small) free(s->p);
}

/* ---- reduce -------------------------------------------------------------- */

void cr_coll_reduce(cr_job *job, cr_group *g, const char *op, const void *sbuf, void *rbuf,
                    size_t count, const cr_redop *o, int root)
{
    cr_trace_how(job, "binomial");
    uint32_t seq = g->seq++;
    int32_t tag = CR_COLL_TAG(seq, 0);
    size_t len = count * o->elem;
    int n = g->size;
    /* Non-commutative: the tree's root must be member 0 for runs to stay in order. */
    int troot = o->commute ? root : 0;
    int rel = (g->me - troot + n) % n;
    scratch s;
    char *acc = scratch_get(job, op, &s, len, 3), *tmp = acc + len, *out = tmp + len;
    memcpy(acc, sbuf, len);
    for (int mask = 1; mask < n; mask <<= 1) {
        if (rel & mask) {
            cr_coll_send(job, g, op, (rel - mask + troot) % n, tag, acc, len);
            break;
        }
        if (rel + mask < n) {
            cr_coll_recv(job, g, op, (rel + mask + troot) % n, tag, tmp, len);
            cr_coll_combine(o, acc, tmp, acc, count, out);
        }
    }
    if (troot != root) {
        int32_t tag2 = CR_COLL_TAG(seq, 1);
        if (g->me == troot) cr_coll_send(job, g, op, root, tag2, acc, len);
        if (g->me == root) cr_coll_recv(job, g, op, troot, tag2, acc, len);
    }
    if (g->me == root) memcpy(rbuf, acc, len);
    scratch_put(&s);
}

/* ---- allreduce ----------------------------------------------------------- */

/* Member index of power-of-two rank nr after the fold. */
static int unfold(int nr, int extra)
{
    return nr < extra ? 2 * nr + 1 : nr + extra;
}

static void allreduce_recdbl(cr_job *job, cr_group *g, const char *op, char *acc, char *tmp,
                             char *out, size_t count, const cr_redop *o, int nr, int pof2,
                             int extra, uint32_t seq)
{
    cr_trace_how(job, "recursive doubling");
    size_t len = count * o->elem;
    int step = 2;
    for (int mask = 1; mask < pof2; mask <<= 1, step++) {
        int pnr = nr ^ mask;
        cr_coll_sendrecv(job, g, op, unfold(pnr, extra), acc, len, unfold(pnr, extra), tmp, len,
                         CR_COLL_TAG(seq, step));
        if (pnr < nr)
            cr_coll_combine(o, tmp, acc, acc, count, out);
        else
            cr_coll_combine(o, acc, tmp, acc, count, out);
    }
}

static size_t disp(size_t count, int b, int pof2)
{
    return count / (size_t)pof2 * (size_t)b + count % (size_t)pof2 * (size_t)b / (size_t)pof2;
}

static void allreduce_rabenseifner(cr_job *job, cr_group *g, const char *op, char *acc, char *tmp,
                                   char *out, size_t count, const cr_redop *o, int nr, int pof2,
                                   int extra, uint32_t seq)
{
    cr_trace_how(job, "rabenseifner");
    size_t e = o->elem;
    int lo = 0, hi = pof2, step = 2, nsteps = 0;
    int los[32], his[32];
    /* Reduce-scatter, partners at distance 1, 2, 4...: each step joins adjacent runs. */
    for (int mask = 1; mask < pof2; mask <<= 1, step++) {
        int pnr = nr ^ mask, peer = unfold(pnr, extra), mid = (lo + hi) / 2;
        int klo = nr & mask ? mid : lo, khi = nr & mask ? hi : mid;
        int slo = nr & mask ? lo : mid, shi = nr & mask ? mid : hi;
        size_t ko = disp(count, klo, pof2), kn = disp(count, khi, pof2) - ko;
        size_t so = disp(count, slo, pof2), sn = disp(count, shi, pof2) - so;
        cr_coll_sendrecv(job, g, op, peer, acc + so * e, sn * e, peer, tmp, kn * e,
                         CR_COLL_TAG(seq, step));
        if (pnr < nr)
            cr_coll_combine(o, tmp, acc + ko * e, acc + ko * e, kn, out);
        else
            cr_coll_combine(o, acc + ko * e, tmp, acc + ko * e, kn, out);
        los[nsteps] = lo;
        his[nsteps++] = hi;
        lo = klo;
        hi = khi;
    }
    /* All-gather: undo the halving in reverse. */
    for (int mask = pof2 >> 1; mask >= 1; mask >>= 1, step++) {
        int pnr = nr ^ mask, peer = unfold(pnr, extra);
        nsteps--;
        int plo = los[nsteps], phi = his[nsteps], mid = (plo + phi) / 2;
        int olo = lo == plo ? mid : plo, ohi = lo == plo ? phi : mid; /* the partner's run */
        size_t mo = disp(count, lo, pof2), mn = disp(count, hi, pof2) - mo;
        size_t oo = disp(count, olo, pof2), on = disp(count, ohi, pof2) - oo;
        cr_coll_sendrecv(job, g, op, peer, acc + mo * e, mn * e, peer, acc + oo * e, on * e,
                         CR_COLL_TAG(seq, step));
        lo = plo;
        hi = phi;
    }
}

/* Everyone sends to member 0, which combines in member order and sends back. */
static void allreduce_linear(cr_job *job, cr_group *g, const char *op, char *acc, size_t count,
                             const cr_redop *o, uint32_t seq)
{
    cr_trace_how(job, "linear");
    size_t len = count * o->elem;
    int n = g->size;
    if (g->me) {
        cr_coll_send(job, g, op, 0, CR_COLL_TAG(seq, 0), acc, len);
        cr_coll_recv(job, g, op, 0, CR_COLL_TAG(seq, 1), acc, len);
        return;
    }
    scratch s;
    char *tmp = scratch_get(job, op, &s, len, 2), *out = tmp + len;
    for (int i = 1; i < n; i++) {
        cr_coll_recv(job, g, op, i, CR_COLL_TAG(seq, 0), tmp, len);
        cr_coll_combine(o, acc, tmp, acc, count, out);
    }
    for (int i = 1; i < n; i++) cr_coll_send(job, g, op, i, CR_COLL_TAG(seq, 1), acc, len);
    scratch_put(&s);
}

void cr_coll_allreduce(cr_job *job, cr_group *g, const char *op, const void *sbuf, void *rbuf,
                       size_t count, const cr_redop *o)
{
    size_t len = count * o->elem;
    int n = g->size, me = g->me, pof2 = 1;
    if (rbuf != sbuf) memcpy(rbuf, sbuf, len);
    if (n == 1) {
        g->seq++;
        return;
    }
    if (cr_coll_shm_allreduce(job, g, op, rbuf, count, o)) return;
    uint32_t seq = g->seq++;
    if (cr_coll_linear(job, g, len)) {
        allreduce_linear(job, g, op, rbuf, count, o, seq);
        return;
    }
    while (pof2 * 2 <= n) pof2 *= 2;
    int extra = n - pof2, nr;
    scratch s;
    char *acc = rbuf, *tmp = scratch_get(job, op, &s, len, 2), *out = tmp + len;
    if (me < 2 * extra) {
        if (!(me & 1)) { /* fold into me+1, get the result back at the end */
            cr_coll_send(job, g, op, me + 1, CR_COLL_TAG(seq, 0), acc, len);
            cr_coll_recv(job, g, op, me + 1, CR_COLL_TAG(seq, 1), acc, len);
            scratch_put(&s);
            return;
        }
        cr_coll_recv(job, g, op, me - 1, CR_COLL_TAG(seq, 0), tmp, len);
        cr_coll_combine(o, tmp, acc, acc, count, out);
        nr = me / 2;
    } else {
        nr = me - extra;
    }
    int f = cr_coll_forced();
    bool rab = f == CR_ALG_RABENSEIFNER ||
               (f != CR_ALG_RECDBL && len >= RABENSEIFNER_MIN && count >= (size_t)pof2);
    if (rab && count >= (size_t)pof2)
        allreduce_rabenseifner(job, g, op, acc, tmp, out, count, o, nr, pof2, extra, seq);
    else
        allreduce_recdbl(job, g, op, acc, tmp, out, count, o, nr, pof2, extra, seq);
    if (me < 2 * extra) cr_coll_send(job, g, op, me - 1, CR_COLL_TAG(seq, 1), acc, len);
    scratch_put(&s);
}

/* ---- scan ---------------------------------------------------------------- */

void cr_coll_scan(cr_job *job, cr_group *g, const char *op, const void *sbuf, void *rbuf,
                  size_t count, const cr_redop *o)
{
    cr_trace_how(job, "recursive doubling");
    uint32_t seq = g->seq++;
    size_t len = count * o->elem;
    int n = g->size, me = g->me, step = 0;
    if (rbuf != sbuf) memcpy(rbuf, sbuf, len);
    scratch s;
    char *tmp = scratch_get(job, op, &s, len, 2), *out = tmp + len;
    /* rbuf holds the run of members (me-2^k, me]; it goes to me+2^k, and the run
     * just below arrives from me-2^k. */
    for (int mask = 1; mask < n; mask <<= 1, step++) {
        int32_t tag = CR_COLL_TAG(seq, step);
        cr_req *r = me - mask >= 0 ? cr_coll_irecv(job, g, op, me - mask, tag, tmp, len) : NULL;
        if (me + mask < n) cr_coll_send(job, g, op, me + mask, tag, rbuf, len);
        if (r) {
            cr_coll_wait(job, r);
            cr_coll_combine(o, tmp, rbuf, rbuf, count, out);
        }
    }
    scratch_put(&s);
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
DEFINE_OP(cr_op_prod_long, long, (long)((unsigned long)a[i] * (unsigned long)b[i]))
DEFINE_OP(cr_op_band_long, long, a[i] & b[i])
DEFINE_OP(cr_op_bor_long, long, a[i] | b[i])
DEFINE_OP(cr_op_bxor_long, long, a[i] ^ b[i])
