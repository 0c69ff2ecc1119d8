/* Collective benchmark (OSU style), written once and built against courier's
 * MPL or, with -DUSE_MPI, against any MPI (Open MPI, MPICH), so that the same
 * source measures all of them.
 *
 *   coll [--quick] [--only OP]   OP: barrier allreduce bcast alltoall allgather
 * For each operation and size, every rank runs the operation back to back; the
 * iteration count is calibrated so that a size takes about 0.3 s (0.05 s with
 * --quick) whatever the implementation's speed, and the line printed is
 * "coll OP BYTES US" with the largest per-rank average time per operation.
 * Sizes are per rank: the vector of allreduce, the message of bcast, one block
 * of alltoall and allgather. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef USE_MPI
#include <mpi.h>
static int me, np;
static void start(int *argc, char ***argv)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
}
static void stop(void)
{
    MPI_Finalize();
}
static void barrier(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
}
static void allreduce(double *s, double *r, int n)
{
    MPI_Allreduce(s, r, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}
static void bcast(char *b, int len)
{
    MPI_Bcast(b, len, MPI_BYTE, 0, MPI_COMM_WORLD);
}
static void alltoall(char *s, char *r, int blk)
{
    MPI_Alltoall(s, blk, MPI_BYTE, r, blk, MPI_BYTE, MPI_COMM_WORLD);
}
static void allgather(char *s, char *r, int blk)
{
    MPI_Allgather(s, blk, MPI_BYTE, r, blk, MPI_BYTE, MPI_COMM_WORLD);
}
static double max_to_root(double x)
{
    double m;
    MPI_Reduce(&x, &m, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    return m;
}
static long bcast_long(long x)
{
    MPI_Bcast(&x, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    return x;
}
#else
#include <courier/mpl.h>
static int me, np;
static void start(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    mpc_environ(&np, &me);
}
static void stop(void) {}
static void barrier(void)
{
    mpc_sync(ALLGRP);
}
static void allreduce(double *s, double *r, int n)
{
    mpc_combine(s, r, n * (int)sizeof(double), d_vadd, ALLGRP);
}
static void bcast(char *b, int len)
{
    mpc_bcast(b, len, 0, ALLGRP);
}
static void alltoall(char *s, char *r, int blk)
{
    mpc_index(s, r, blk, ALLGRP);
}
static void allgather(char *s, char *r, int blk)
{
    mpc_concat(s, r, blk, ALLGRP);
}
static double max_to_root(double x)
{
    double m;
    mpc_reduce(&x, &m, sizeof x, 0, d_vmax, ALLGRP);
    return m;
}
static long bcast_long(long x)
{
    mpc_bcast(&x, sizeof x, 0, ALLGRP);
    return x;
}
#endif

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static char *sbuf, *rbuf;

/* Write every page of the buffers (zeros, as calloc gave them), as OSU's
 * benchmarks do: a page never written is the kernel's shared zero page, and
 * single-copy reads of such pages (process_vm_readv) cost much more (see
 * bench/mpi/mb.c), which no real send buffer shows. */
static void touch(char *s, char *r, size_t cap)
{
    if (s) memset(s, 0, cap);
    if (r) memset(r, 0, cap);
}

static void run_op(const char *op, long size)
{
    int n = (int)size;
    if (!strcmp(op, "barrier"))
        barrier();
    else if (!strcmp(op, "allreduce"))
        allreduce((double *)sbuf, (double *)rbuf, n / 8);
    else if (!strcmp(op, "bcast"))
        bcast(sbuf, n);
    else if (!strcmp(op, "alltoall"))
        alltoall(sbuf, rbuf, n);
    else
        allgather(sbuf, rbuf, n);
}

static void measure(const char *op, long size, double budget)
{
    long iters = 10;
    barrier();
    double t0 = now();
    for (long i = 0; i < iters; i++) run_op(op, size); /* warm up and calibrate */
    double per = (now() - t0) / (double)iters;
    long want = per > 0 ? (long)(budget / per) : 100000;
    iters = bcast_long(want < 5 ? 5 : want > 1000000 ? 1000000 : want);
    barrier();
    t0 = now();
    for (long i = 0; i < iters; i++) run_op(op, size);
    double us = max_to_root((now() - t0) / (double)iters * 1e6);
    if (me == 0) printf("coll %s %ld %.3f\n", op, size, us);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    start(&argc, &argv);
    double budget = 0.3;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) budget = 0.05;
        if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    }
    size_t cap = (size_t)np * 65536 + (1 << 20);
    sbuf = calloc(cap, 1);
    rbuf = calloc(cap, 1);
    touch(sbuf, rbuf, cap);
    static const struct {
        const char *op;
        long sizes[4];
    } plan[] = {{"barrier", {0, -1}},
                {"allreduce", {8, 1024, 65536, -1}},
                {"bcast", {8, 65536, 1 << 20, -1}},
                {"alltoall", {8, 1024, -1}},
                {"allgather", {8, 1024, -1}}};
    if (me == 0) printf("# op bytes us_per_op (%d ranks)\n", np);
    for (size_t p = 0; p < sizeof plan / sizeof *plan; p++) {
        if (only && strcmp(only, plan[p].op)) continue;
        for (int s = 0; s < 4 && plan[p].sizes[s] >= 0; s++)
            measure(plan[p].op, plan[p].sizes[s], budget);
    }
    free(sbuf);
    free(rbuf);
    stop();
    return 0;
}
