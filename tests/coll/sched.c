/* The collective layer's schedules (src/coll/sched.c) used directly, as the
 * persistent collectives (MPI_*_init) will use them: one schedule built once
 * and started again and again with new data in its input, moved on by polling
 * (cr_sched_start, cr_sched_advance). Each start must give what a schedule
 * built afresh and run blocking (cr_sched_run) gives, bit for bit, and the
 * right values: allreduce (doubles whose sum depends on the combining order;
 * restarted reading its input where it is, built afresh in place;
 * counts below and above Rabenseifner's 4 KiB, and past the schedule's inline
 * arena and steps), broadcast from each root, and the barrier; then every
 * data collective and each of its message algorithms (bcast, gather(v),
 * scatter(v), allgather(v), alltoall(v)) blocking, nonblocking and restarted,
 * against each other and the values the definition gives; and the reduce
 * that reads its members' inputs directly against the binomial schedule. Runs on any
 * number of ranks; linked statically for the layer's internal symbols. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "../../src/coll/coll.h"

static int failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FAIL rank %d: ", cr_job_get()->rank);                                 \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static double val(int rank, int rep, size_t i)
{
    return 1.0 / (double)(1 + rank * 7 + rep * 3 + (int)(i % 11));
}

/* Poll until s is done. */
static void finish(cr_job *job, cr_sched *s)
{
    cr_sched_advance(job, s);
    while (!s->done) {
        cr_progress(job);
        cr_sched_advance(job, s);
    }
}

static void test_allreduce(cr_job *job, cr_group *g, size_t count, uint32_t *seq)
{
    cr_redop o = CR_OP_PREDEF(cr_op_sum_double, double);
    size_t len = count * sizeof(double);
    double *in = malloc(len), *acc = malloc(len), *ref = malloc(len);
    cr_sched s;
    cr_sched_init(&s, "sched allreduce", g->ctx, 0x80000000u, 0x7ffffu, (*seq)++);
    cr_sched_redop(job, &s, &o, count);
    cr_build_allreduce(job, &s, g, (char *)in, (char *)acc, count); /* reads in at each start */
    for (int rep = 0; rep < 4; rep++) {
        for (size_t i = 0; i < count; i++) in[i] = val(g->me, rep, i);
        cr_sched_start(job, &s);
        finish(job, &s);
        /* the same collective built afresh and run blocking */
        cr_sched f;
        cr_sched_init(&f, "sched allreduce ref", g->ctx, 0x80000000u, 0x7ffffu, (*seq)++);
        cr_sched_redop(job, &f, &o, count);
        memcpy(ref, in, len);
        cr_build_allreduce(job, &f, g, NULL, (char *)ref, count); /* in place */
        cr_sched_run(job, &f);
        cr_sched_free(job, &f);
        CHECK(!memcmp(acc, ref, len),
              "allreduce of %zu doubles, start %d: differs from a fresh one", count, rep);
        /* and from the blocking collective (its schedule where no area serves) */
        cr_coll_allreduce(job, g, "allreduce", in, ref, count, &o);
        CHECK(!memcmp(acc, ref, len),
              "allreduce of %zu doubles, start %d: differs from cr_coll_allreduce", count, rep);
        for (size_t i = 0; i < count; i += 1 + count / 7) {
            double want = 0;
            for (int r = 0; r < g->size; r++) want += val(r, rep, i);
            CHECK(fabs(acc[i] - want) <= 1e-12 * want,
                  "allreduce of %zu, start %d: [%zu] %g, not %g", count, rep, i, acc[i], want);
        }
    }
    cr_sched_free(job, &s);
    free(in);
    free(acc);
    free(ref);
}

/* lo * 0.75 + hi: its result depends on the order of the operands, not only
 * on the grouping */
static void skew(const void *lo, const void *hi, void *out, size_t n, const void *arg)
{
    (void)arg;
    const double *a = lo, *b = hi;
    double *c = out;
    for (size_t i = 0; i < n; i++) c[i] = a[i] * 0.75 + b[i];
}

/* The reduce that reads every member's input directly (coll_direct.c, taken
 * with more ranks than cores) combines as MPI_Ireduce's binomial schedule
 * does: the same bits at every root, for a sum of doubles and for an
 * operation that does not commute, in place at the root or not. */
static void test_reduce(cr_job *job, cr_group *g, size_t count, uint32_t *seq)
{
    cr_redop ops[2] = {CR_OP_PREDEF(cr_op_sum_double, double),
                       {skew, NULL, sizeof(double), false, true}};
    size_t len = count * sizeof(double);
    double *in = malloc(len), *out = malloc(len), *ref = malloc(len);
    for (int k = 0; k < 2; k++)
        for (int root = 0; root < g->size; root++) {
            bool in_place = (root + k) % 2;
            for (size_t i = 0; i < count; i++) in[i] = val(g->me, root + 5 * k, i);
            cr_sched f;
            cr_sched_init(&f, "sched reduce ref", g->ctx, 0x80000000u, 0x7ffffu, (*seq)++);
            cr_sched_redop(job, &f, &ops[k], count);
            char *acc = cr_sched_alloc(job, &f, len);
            memcpy(acc, in, len);
            cr_build_reduce(job, &f, g, NULL, acc, count, root, (char *)ref);
            cr_sched_run(job, &f);
            cr_sched_free(job, &f);
            if (in_place && g->me == root) memcpy(out, in, len);
            bool direct =
                cr_coll_reduce_direct(job, g, "sched reduce", in_place && g->me == root ? out : in,
                                      out, count, &ops[k], root);
            CHECK(direct, "reduce of %zu doubles: the direct form was refused", count);
            if (g->me == root && direct)
                CHECK(!memcmp(out, ref, len),
                      "reduce of %zu doubles (%s, root %d%s): direct differs from the binomial "
                      "schedule",
                      count, k ? "not commuting" : "sum", root, in_place ? ", in place" : "");
        }
    free(in);
    free(out);
    free(ref);
}

static void test_bcast(cr_job *job, cr_group *g, size_t len, uint32_t *seq)
{
    char *buf = malloc(len + 1);
    for (int root = 0; root < g->size; root++) {
        cr_sched s;
        cr_sched_init(&s, "sched bcast", g->ctx, 0x80000000u, 0x7ffffu, (*seq)++);
        cr_build_bcast(job, &s, g, buf, len, root, 0);
        for (int rep = 0; rep < 3; rep++) {
            for (size_t i = 0; i < len; i++)
                buf[i] =
                    (char)(g->me == root ? (int)(i * 31 + (size_t)rep * 7 + (size_t)root) : -1);
            cr_sched_start(job, &s);
            finish(job, &s);
            size_t bad = len;
            for (size_t i = 0; i < len && bad == len; i++)
                if (buf[i] != (char)(int)(i * 31 + (size_t)rep * 7 + (size_t)root)) bad = i;
            CHECK(bad == len, "bcast of %zu bytes from %d, start %d: byte %zu wrong", len, root,
                  rep, bad);
        }
        cr_sched_free(job, &s);
    }
    free(buf);
}

/* ---- the data collectives: blocking, nonblocking and restarted agree ------
 * Each collective three ways: blocking (cr_coll_*, or the builder run as built
 * where the blocking form has no algorithm argument), a schedule built with
 * the nonblocking forms' tags and moved on by polling, and that one schedule
 * started again with new input; the three outputs must be the same bytes,
 * and those the collective's definition gives (computed here). Member r's
 * input byte i at start 'rep' is B(r, rep, i); untouched output stays 0xee. */

#define UNTOUCHED 0xee
static unsigned char B(int r, int rep, size_t i)
{
    return (unsigned char)(r * 131 + rep * 17 + (int)(i * 7) + 1);
}

typedef struct dc {
    const char *name;
    int alg, root;
    size_t blk;
    bool vform;
} dc;

/* Layout of the v forms: member a sends member b L(a, b) bytes; block i of
 * a buffer lies at displs[i], in reverse member order with a gap. */
static size_t L(const dc *c, int a, int b)
{
    return (size_t)((a * 3 + b * 5) % 7 == 0 ? 0 : c->blk + (size_t)((a * 3 + b * 5) % 7));
}

typedef struct lay {
    size_t *lens, *displs, total;
} lay;

/* lens[i] = L(i, me) (into) or L(me, i) (out of this member). */
static lay layout(const dc *c, int n, int me, bool into)
{
    lay l = {calloc((size_t)n, sizeof(size_t)), calloc((size_t)n, sizeof(size_t)), 0};
    for (int i = n - 1; i >= 0; i--) {
        l.lens[i] = into ? L(c, i, me) : L(c, me, i);
        l.displs[i] = l.total;
        l.total += l.lens[i] + 3;
    }
    return l;
}

enum { GATHER, SCATTER, ALLGATHER, ALLTOALL, BCAST, GATHERV, SCATTERV, ALLGATHERV, ALLTOALLV };

/* The collective 'which' into s (blocking: s run as built, or NULL: the
 * cr_coll_* form itself). */
static void coll_build(cr_job *job, cr_sched *s, cr_group *g, int which, const dc *c,
                       const char *in, char *out)
{
    int n = g->size, me = g->me, root = c->root;
    size_t blk = c->blk;
    lay li = layout(c, n, me, true), lo = layout(c, n, me, false);
    /* gatherv at the root: every member's block to it (L(i, root)); scatterv: L(root, i) */
    lay gv = layout(c, n, root, true), sv = layout(c, n, root, false);
    switch (which) {
    case GATHER:
        if (s)
            cr_build_gather(job, s, g, in, me == root ? out : NULL, blk, root);
        else
            cr_coll_gather(job, g, "gather", in, me == root ? out : NULL, blk, root);
        break;
    case SCATTER:
        if (s)
            cr_build_scatter(job, s, g, me == root ? in : NULL, out, blk, root);
        else
            cr_coll_scatter(job, g, "scatter", me == root ? in : NULL, out, blk, root);
        break;
    case ALLGATHER:
        if (s)
            cr_build_allgather(job, s, g, in, out, blk, c->alg);
        else
            cr_coll_allgather(job, g, "allgather", in, out, blk);
        break;
    case ALLTOALL:
        if (s)
            cr_build_alltoall(job, s, g, in, out, blk, c->alg);
        else
            cr_coll_alltoall(job, g, "alltoall", in, out, blk);
        break;
    case BCAST: /* the root's input copied into the buffer first (a step: taken at each start) */
        if (s) {
            if (me == root) cr_sched_copy(job, s, out, in, blk);
            cr_build_bcast_msg(job, s, g, out, blk, root, c->alg);
        } else {
            if (me == root) memcpy(out, in, blk);
            cr_coll_bcast(job, g, "bcast", out, blk, root);
        }
        break;
    case GATHERV:
        if (s)
            cr_build_gatherv(job, s, g, in, L(c, me, root), out, gv.lens, gv.displs, root);
        else
            cr_coll_gatherv(job, g, "gatherv", in, L(c, me, root), out, gv.lens, gv.displs, root);
        break;
    case SCATTERV:
        if (s)
            cr_build_scatterv(job, s, g, in, sv.lens, sv.displs, out, L(c, root, me), root);
        else
            cr_coll_scatterv(job, g, "scatterv", in, sv.lens, sv.displs, out, L(c, root, me), root);
        break;
    case ALLGATHERV: { /* member i's block: L(i, 0) bytes */
        lay a = layout(c, n, 0, true);
        if (s)
            cr_build_allgatherv(job, s, g, in, a.lens[me], out, a.lens, a.displs);
        else
            cr_coll_allgatherv(job, g, "allgatherv", in, a.lens[me], out, a.lens, a.displs);
        free(a.lens);
        free(a.displs);
        break;
    }
    default:
        if (s)
            cr_build_alltoallv(job, s, g, in, lo.lens, lo.displs, out, li.lens, li.displs);
        else
            cr_coll_alltoallv(job, g, "alltoallv", in, lo.lens, lo.displs, out, li.lens, li.displs);
        break;
    }
    free(li.lens), free(li.displs), free(lo.lens), free(lo.displs);
    free(gv.lens), free(gv.displs), free(sv.lens), free(sv.displs);
}

/* What member me's output holds after 'which' at start rep (inputs: member r
 * sends from byte i of its input B(r, rep, i); a send block i at displs[i]
 * of the sender's layout). */
static void coll_want(const cr_group *g, int which, const dc *c, int rep, unsigned char *w,
                      size_t cap)
{
    int n = g->size, me = g->me, root = c->root;
    size_t blk = c->blk;
    memset(w, UNTOUCHED, cap);
    for (int i = 0; i < n; i++) {
        lay li = layout(c, n, me, true), lr = layout(c, n, i, false);
        lay gv = layout(c, n, root, true), sv = layout(c, n, root, false),
            a = layout(c, n, 0, true);
        for (size_t j = 0; j < cap; j++) {
            switch (which) {
            case GATHER:
                if (me == root && j < blk) w[i * blk + j] = B(i, rep, j);
                break;
            case SCATTER:
                if (i == root && j < blk) w[j] = B(root, rep, (size_t)me * blk + j);
                break;
            case ALLGATHER:
                if (j < blk) w[i * blk + j] = B(i, rep, j);
                break;
            case ALLTOALL:
                if (j < blk) w[i * blk + j] = B(i, rep, (size_t)me * blk + j);
                break;
            case BCAST:
                if (i == root && j < blk) w[j] = B(root, rep, j);
                break;
            case GATHERV:
                if (me == root && j < gv.lens[i]) w[gv.displs[i] + j] = B(i, rep, j);
                break;
            case SCATTERV:
                if (i == root && j < sv.lens[me]) w[j] = B(root, rep, sv.displs[me] + j);
                break;
            case ALLGATHERV:
                if (j < a.lens[i]) w[a.displs[i] + j] = B(i, rep, j);
                break;
            default: /* from member i: its block for me, at its layout's displs[me] */
                if (j < li.lens[i]) w[li.displs[i] + j] = B(i, rep, lr.displs[me] + j);
                break;
            }
        }
        free(li.lens), free(li.displs), free(lr.lens), free(lr.displs);
        free(gv.lens), free(gv.displs), free(sv.lens), free(sv.displs);
        free(a.lens), free(a.displs);
    }
}

static const char *names[] = {"gather",  "scatter",  "allgather",  "alltoall", "bcast",
                              "gatherv", "scatterv", "allgatherv", "alltoallv"};

static void test_data(cr_job *job, cr_group *g, int which, const dc *c, uint32_t *seq)
{
    int n = g->size;
    size_t cap = (size_t)n * (c->blk + 16) + 64; /* every layout here fits */
    unsigned char *in = malloc(cap), *out = malloc(cap), *ref = malloc(cap), *want = malloc(cap);
    cr_sched p; /* the one restarted */
    cr_sched_init(&p, names[which], g->ctx, 0x80000000u, 0x7ffffu, (*seq)++);
    coll_build(job, &p, g, which, c, (char *)in, (char *)out);
    for (int rep = 0; rep < 3; rep++) {
        for (size_t i = 0; i < cap; i++) in[i] = B(g->me, rep, i);
        coll_want(g, which, c, rep, want, cap);
        /* blocking */
        memset(ref, UNTOUCHED, cap);
        if (c->alg == CR_ALG_AUTO) {
            coll_build(job, NULL, g, which, c, (char *)in, (char *)ref);
        } else { /* that algorithm run as built, as the blocking forms run theirs */
            cr_sched f;
            cr_sched_init(&f, names[which], g->ctx, 0, 0x7ffffu, g->seq++);
            cr_sched_now(&f);
            coll_build(job, &f, g, which, c, (char *)in, (char *)ref);
            cr_sched_run(job, &f);
            cr_sched_free(job, &f);
        }
        CHECK(!memcmp(ref, want, cap), "%s %s of %zu, root %d, rep %d: blocking result wrong",
              names[which], c->name, c->blk, c->root, rep);
        /* nonblocking, built afresh */
        memset(out, UNTOUCHED, cap);
        cr_sched f;
        cr_sched_init(&f, names[which], g->ctx, 0x80000000u, 0x7ffffu, (*seq)++);
        coll_build(job, &f, g, which, c, (char *)in, (char *)out);
        cr_sched_start(job, &f);
        finish(job, &f);
        cr_sched_free(job, &f);
        CHECK(!memcmp(out, ref, cap), "%s %s of %zu, root %d, rep %d: nonblocking differs",
              names[which], c->name, c->blk, c->root, rep);
        /* the first schedule started again */
        memset(out, UNTOUCHED, cap);
        cr_sched_start(job, &p);
        finish(job, &p);
        CHECK(!memcmp(out, ref, cap), "%s %s of %zu, root %d, rep %d: restarted differs",
              names[which], c->name, c->blk, c->root, rep);
    }
    cr_sched_free(job, &p);
    free(in), free(out), free(ref), free(want);
}

static void test_data_all(cr_job *job, cr_group *g, uint32_t *seq)
{
    int n = g->size;
    const dc bc[] = {{"auto", CR_ALG_AUTO, 0, 5, false},
                     {"linear", CR_ALG_LINEAR, 0, 3000, false},
                     {"pipeline", CR_ALG_PIPELINE, 0, 300000, false},
                     {"binomial", CR_ALG_BINOMIAL, 0, 70, false}};
    for (size_t k = 0; k < sizeof bc / sizeof *bc; k++)
        for (int root = 0; root < n; root++) {
            dc c = bc[k];
            c.root = root;
            test_data(job, g, BCAST, &c, seq);
        }
    const dc ag[] = {{"auto", CR_ALG_AUTO, 0, 40, false},
                     {"recdbl", CR_ALG_RECDBL, 0, 100, false},
                     {"ring", CR_ALG_RING, 0, 2000, false}};
    for (size_t k = 0; k < sizeof ag / sizeof *ag; k++) test_data(job, g, ALLGATHER, &ag[k], seq);
    const dc aa[] = {{"auto", CR_ALG_AUTO, 0, 30, false},
                     {"bruck", CR_ALG_BRUCK, 0, 24, false},
                     {"pairwise", CR_ALG_PAIRWISE, 0, 1500, false},
                     {"scatter", CR_ALG_SCATTER, 0, 5000, false},
                     {"window", CR_ALG_WINDOW, 0, 100, false}};
    for (size_t k = 0; k < sizeof aa / sizeof *aa; k++) test_data(job, g, ALLTOALL, &aa[k], seq);
    size_t blks[] = {0, 9, 3000};
    for (size_t k = 0; k < sizeof blks / sizeof *blks; k++)
        for (int root = 0; root<n; root += n> 2 ? n - 1 : 1) {
            dc c = {"linear", CR_ALG_AUTO, root, blks[k], true};
            test_data(job, g, GATHER, &c, seq);
            test_data(job, g, SCATTER, &c, seq);
            test_data(job, g, GATHERV, &c, seq);
            test_data(job, g, SCATTERV, &c, seq);
            c.name = "v";
            if (root == 0) test_data(job, g, ALLGATHERV, &c, seq);
            if (root == 0) test_data(job, g, ALLTOALLV, &c, seq);
        }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    cr_job *job = cr_job_get();
    /* the native interface's context: this program does not use that interface */
    cr_group g = {.size = job->size, .me = job->rank, .ctx = CR_CTX_NATIVE};
    uint32_t seq = 0;
    size_t counts[] = {1, 3, 100, 600, 70000};
    for (size_t k = 0; k < sizeof counts / sizeof *counts; k++)
        test_allreduce(job, &g, counts[k], &seq);
    if (cr_coll_direct_ok(job, &g)) { /* single copy between every two (shared memory) */
        test_reduce(job, &g, (size_t)g.size, &seq);
        test_reduce(job, &g, 70001, &seq);
    }
    test_bcast(job, &g, 5, &seq);
    test_bcast(job, &g, 300000, &seq);
    cr_sched s;
    cr_sched_init(&s, "sched barrier", g.ctx, 0x80000000u, 0x7ffffu, seq++);
    cr_build_barrier(job, &s, &g);
    for (int rep = 0; rep < 5; rep++) {
        cr_sched_start(job, &s);
        finish(job, &s);
    }
    cr_sched_free(job, &s);
    test_data_all(job, &g, &seq);
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (job->rank == 0 && !all) printf("sched: restarted schedules agree\n");
    MPI_Finalize();
    return all != 0;
}
