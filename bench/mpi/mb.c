/* courier's OSU-style micro-benchmarks, written once to MPI and built against
 * courier (courier-cc), Open MPI and MPICH (their mpicc) so that one source
 * measures all three (bench/mpi/compare.sh runs them side by side).
 *
 *   mb TEST [--quick] [--max BYTES] [--untouched] [--progress]
 * TEST: latency  ping-pong between ranks 0 and 1, half round trip (us)
 *       bw       rank 0 streams a window of 64 Isends to rank 1 (MB/s)
 *       bibw     both directions at once (MB/s, total)
 *       multi    multi-pair latency: rank i and i+n/2 ping-pong at once (us)
 *       barrier allreduce bcast alltoall allgather: time per call, the largest
 *                average over the ranks (us); sizes are per rank (bytes)
 *       hello    init and finalize only (launch time is measured outside)
 *       put_bw put get acc fop cas: one-sided, rank 0 into rank 1's
 *                MPI_Win_allocate window under a shared lock, 8 bytes: 64 puts per
 *                MPI_Win_flush (put_bw), or each operation with its flush (put,
 *                get, MPI_Accumulate of MPI_SUM, MPI_Fetch_and_op,
 *                MPI_Compare_and_swap); ns per operation
 *   --progress   first completes an MPI_Ibarrier (courier then runs its progress
 *                thread for the rest of the job; Open MPI and MPICH have none)
 * Each line printed by rank 0 is "TEST BYTES VALUE". Iteration counts are
 * calibrated so that each size takes about 0.2 s (0.05 s with --quick).
 * The buffers are filled before the first test, as OSU's benchmarks do; with
 * --untouched they stay as calloc left them, pages never written. Reading
 * such pages with process_vm_readv (single copy) costs much more: on 16 cores
 * an all-to-all of 32 KiB blocks took 228-268 us untouched, 93-116 filled. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int me, np;
static double budget = 0.2;
static long maxsize = 1 << 20;
static int touch = 1;
static char *sbuf, *rbuf;
static MPI_Win win; /* the one-sided tests' */

/* Run body(iters) until it has taken about 'budget' seconds; returns seconds per
 * iteration, agreed on by every rank (rank 0 decides the iteration count). */
static double timed(void (*body)(long, size_t), size_t size)
{
    long iters = 1;
    double t = 0;
    body(1, size); /* warm up */
    for (;;) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        body(iters, size);
        t = MPI_Wtime() - t0;
        long next = 0; /* rank 0 decides for everyone: 0 means done */
        if (me == 0 && t < budget / 4 && iters < (1L << 26)) {
            double f = budget / 2 / (t > 1e-6 ? t : 1e-6);
            next = f > 2 ? (long)(iters * f) : iters * 2;
            if (next > (1L << 26)) next = 1L << 26;
        }
        MPI_Bcast(&next, 1, MPI_LONG, 0, MPI_COMM_WORLD);
        if (!next) break;
        iters = next;
    }
    double per = t / (double)iters, worst;
    MPI_Reduce(&per, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    return worst;
}

static void pingpong(long iters, size_t n)
{
    int peer = me ^ 1;
    if (np > 2 && me >= 2) return;
    for (long i = 0; i < iters; i++) {
        if (me == 0) {
            MPI_Send(sbuf, (int)n, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
            MPI_Recv(rbuf, (int)n, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(rbuf, (int)n, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(sbuf, (int)n, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
        }
    }
}

static void multipair(long iters, size_t n)
{
    int half = np / 2, peer = me < half ? me + half : me - half;
    if (me >= 2 * half) return;
    for (long i = 0; i < iters; i++) {
        if (me < half) {
            MPI_Send(sbuf, (int)n, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
            MPI_Recv(rbuf, (int)n, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(rbuf, (int)n, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(sbuf, (int)n, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
        }
    }
}

#define WINDOW 64
static void stream(long iters, size_t n, int both)
{
    MPI_Request rq[2 * WINDOW];
    MPI_Status st[2 * WINDOW]; /* not MPI_STATUSES_IGNORE: some mpi.h make GCC warn */
    int peer = me ^ 1, ack = 0;
    if (me >= 2) return;
    for (long i = 0; i < iters; i++) {
        int k = 0;
        if (me == 0 || both)
            for (int w = 0; w < WINDOW; w++)
                MPI_Isend(sbuf, (int)n, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &rq[k++]);
        if (me == 1 || both)
            for (int w = 0; w < WINDOW; w++)
                MPI_Irecv(rbuf + (size_t)w * n, (int)n, MPI_CHAR, peer, 2, MPI_COMM_WORLD,
                          &rq[k++]);
        MPI_Waitall(k, rq, st);
        if (me == 1)
            MPI_Send(&ack, 0, MPI_INT, 0, 3, MPI_COMM_WORLD);
        else
            MPI_Recv(&ack, 0, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}
static void bw_body(long iters, size_t n)
{
    stream(iters, n, 0);
}
static void bibw_body(long iters, size_t n)
{
    stream(iters, n, 1);
}

static void barrier_body(long iters, size_t n)
{
    (void)n;
    for (long i = 0; i < iters; i++) MPI_Barrier(MPI_COMM_WORLD);
}
static void allreduce_body(long iters, size_t n)
{
    for (long i = 0; i < iters; i++)
        MPI_Allreduce(sbuf, rbuf, (int)(n / 8), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}
static void bcast_body(long iters, size_t n)
{
    for (long i = 0; i < iters; i++) MPI_Bcast(sbuf, (int)n, MPI_CHAR, 0, MPI_COMM_WORLD);
}
static void alltoall_body(long iters, size_t n)
{
    for (long i = 0; i < iters; i++)
        MPI_Alltoall(sbuf, (int)n, MPI_CHAR, rbuf, (int)n, MPI_CHAR, MPI_COMM_WORLD);
}
static void allgather_body(long iters, size_t n)
{
    for (long i = 0; i < iters; i++)
        MPI_Allgather(sbuf, (int)n, MPI_CHAR, rbuf, (int)n, MPI_CHAR, MPI_COMM_WORLD);
}

/* The one-sided tests: rank 0 alone works, inside the lock main takes. */
static void put_bw_body(long iters, size_t n)
{
    if (me != 0) return;
    for (long i = 0; i < iters; i++) {
        for (int w = 0; w < WINDOW; w++)
            MPI_Put(sbuf + (size_t)w * n, (int)n, MPI_CHAR, 1, (MPI_Aint)(w * n), (int)n, MPI_CHAR,
                    win);
        MPI_Win_flush(1, win);
    }
}
static void put_body(long iters, size_t n)
{
    if (me != 0) return;
    for (long i = 0; i < iters; i++) {
        MPI_Put(sbuf, (int)n, MPI_CHAR, 1, 0, (int)n, MPI_CHAR, win);
        MPI_Win_flush(1, win);
    }
}
static void get_body(long iters, size_t n)
{
    if (me != 0) return;
    for (long i = 0; i < iters; i++) {
        MPI_Get(rbuf, (int)n, MPI_CHAR, 1, 0, (int)n, MPI_CHAR, win);
        MPI_Win_flush(1, win);
    }
}
static void acc_body(long iters, size_t n)
{
    if (me != 0) return;
    for (long i = 0; i < iters; i++) {
        MPI_Accumulate(sbuf, (int)n, MPI_CHAR, 1, 0, (int)n, MPI_CHAR, MPI_SUM, win);
        MPI_Win_flush(1, win);
    }
}
static void fop_body(long iters, size_t n)
{
    (void)n;
    if (me != 0) return;
    for (long i = 0; i < iters; i++) {
        MPI_Fetch_and_op(sbuf, rbuf, MPI_LONG_LONG, 1, 0, MPI_SUM, win);
        MPI_Win_flush(1, win);
    }
}

static void cas_body(long iters, size_t n)
{
    (void)n;
    if (me != 0) return;
    long long cmp = 0;
    for (long i = 0; i < iters; i++) {
        MPI_Compare_and_swap(sbuf, &cmp, rbuf, MPI_LONG_LONG, 1, 8, win);
        MPI_Win_flush(1, win);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const char *test = argc > 1 ? argv[1] : "hello";
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) budget = 0.05;
        if (!strcmp(argv[i], "--max") && i + 1 < argc) maxsize = atol(argv[++i]);
        if (!strcmp(argv[i], "--untouched")) touch = 0;
        if (!strcmp(argv[i], "--progress")) {
            MPI_Request rq;
            MPI_Ibarrier(MPI_COMM_WORLD, &rq);
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
        }
    }
    if (!strcmp(test, "hello")) {
        MPI_Finalize();
        return 0;
    }
    size_t cap = (size_t)maxsize * (size_t)(np > WINDOW ? np : WINDOW) + 64;
    sbuf = calloc(cap, 1);
    rbuf = calloc(cap, 1);
    if (!sbuf || !rbuf) MPI_Abort(MPI_COMM_WORLD, 2);
    if (touch) { /* zeros still, but every page written: memory of its own */
        memset(sbuf, 0, cap);
        memset(rbuf, 0, cap);
    }
    struct {
        const char *name;
        void (*body)(long, size_t);
        size_t min;
        int kind; /* 0: latency (us, half round trip), 1: bandwidth, 2: time per call,
                     3: bandwidth both ways, 4: one-sided (ns per operation, 8 bytes) */
    } tests[] = {{"latency", pingpong, 0, 0},
                 {"bw", bw_body, 1, 1},
                 {"bibw", bibw_body, 1, 2 + 1},
                 {"multi", multipair, 0, 0},
                 {"barrier", barrier_body, 0, 2},
                 {"allreduce", allreduce_body, 8, 2},
                 {"bcast", bcast_body, 1, 2},
                 {"alltoall", alltoall_body, 1, 2},
                 {"allgather", allgather_body, 1, 2},
                 {"put_bw", put_bw_body, 8, 4},
                 {"put", put_body, 8, 4},
                 {"get", get_body, 8, 4},
                 {"acc", acc_body, 8, 4},
                 {"fop", fop_body, 8, 4},
                 {"cas", cas_body, 8, 4}};
    int found = 0;
    for (size_t t = 0; t < sizeof tests / sizeof *tests; t++) {
        if (strcmp(test, tests[t].name)) continue;
        found = 1;
        if (tests[t].kind != 2 && np < 2) break;
        size_t lim = tests[t].body == barrier_body ? 0 : tests[t].kind == 4 ? 8 : (size_t)maxsize;
        if (tests[t].kind == 4) {
            char *base;
            MPI_Win_allocate(WINDOW * 8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
            memset(base, 0, WINDOW * 8);
            MPI_Barrier(MPI_COMM_WORLD);
            if (me == 0) MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        }
        for (size_t n = tests[t].min;; n = n ? n * 8 : 1) {
            if (n > lim) break;
            double s = timed(tests[t].body, n);
            double v = tests[t].kind == 0   ? s / 2 * 1e6
                       : tests[t].kind == 2 ? s * 1e6
                       : tests[t].kind == 4
                           ? s * 1e9 / (tests[t].body == put_bw_body ? WINDOW : 1)
                           : (double)n * WINDOW * (tests[t].kind == 3 ? 2 : 1) / s / 1e6;
            if (me == 0) printf("%s %zu %.3f\n", test, n, v);
            if (tests[t].body == barrier_body) break;
        }
        if (tests[t].kind == 4) {
            if (me == 0) MPI_Win_unlock(1, win);
            MPI_Win_free(&win);
        }
    }
    if (!found && me == 0) fprintf(stderr, "mb: unknown test %s\n", test);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return found ? 0 : 2;
}
