/* The collective layer's schedules (src/coll/sched.c) used directly, as the
 * persistent collectives (MPI_*_init) will use them: one schedule built once
 * and started again and again with new data in its input, moved on by polling
 * (cr_sched_start, cr_sched_advance). Each start must give what a schedule
 * built afresh and run blocking (cr_sched_run) gives, bit for bit, and the
 * right values: allreduce (doubles whose sum depends on the combining order;
 * counts below and above Rabenseifner's 4 KiB, and past the schedule's inline
 * arena and steps), broadcast from each root, and the barrier. Runs on any
 * number of ranks; linked statically for the layer's internal symbols. */
#include <math.h>
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
    cr_sched_copy(job, &s, acc, in, len); /* the input, taken at each start */
    cr_build_allreduce(job, &s, g, (char *)acc, count);
    for (int rep = 0; rep < 4; rep++) {
        for (size_t i = 0; i < count; i++) in[i] = val(g->me, rep, i);
        cr_sched_start(job, &s);
        finish(job, &s);
        /* the same collective built afresh and run blocking */
        cr_sched f;
        cr_sched_init(&f, "sched allreduce ref", g->ctx, 0x80000000u, 0x7ffffu, (*seq)++);
        cr_sched_redop(job, &f, &o, count);
        memcpy(ref, in, len);
        cr_build_allreduce(job, &f, g, (char *)ref, count);
        cr_sched_run(job, &f);
        cr_sched_free(job, &f);
        CHECK(!memcmp(acc, ref, len),
              "allreduce of %zu doubles, start %d: differs from a fresh one", count, rep);
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
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (job->rank == 0 && !all) printf("sched: restarted schedules agree\n");
    MPI_Finalize();
    return all != 0;
}
