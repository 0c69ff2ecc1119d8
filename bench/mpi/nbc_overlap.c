/* Overlap of a nonblocking collective with computation (a benchmark, not a
 * test: its figures depend on the machine).
 *
 * Each rank starts MPI_Iallreduce of 1 MiB (doubles, MPI_SUM), computes for
 * about 50 ms without calling MPI, then waits. Printed (rank 0, medians of the
 * repetitions, max over ranks):
 *   pure      Iallreduce + Wait with nothing between
 *   compute   the computation alone
 *   overlap   Iallreduce + compute + Wait
 *   wait      the Wait alone after the computation
 *   hidden    100 * (1 - wait / pure), at least 0: 100 when the collective
 *             was done entirely during the computation, 0 when none of it was
 *             (the computation's own time varies on a loaded machine; the wait
 *             after it does not depend on it).
 * Plain MPI: builds with courier-cc, Open MPI's and MPICH's mpicc alike.
 *   courier-cc -O2 bench/mpi/nbc_overlap.c -o nbc_overlap
 *   courier run -n 4 ./nbc_overlap [bytes] [compute_ms] [reps] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static volatile double sink;

/* About ms milliseconds of arithmetic, calibrated once. */
static long iters_per_ms;
static void compute(double ms)
{
    double acc = 0;
    long n = (long)(ms * (double)iters_per_ms);
    for (long i = 0; i < n; i++) acc += (double)i * 1e-9;
    sink = acc;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return v[n / 2];
}

static double maxall(double v)
{
    double m;
    MPI_Allreduce(&v, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return m;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long bytes = argc > 1 ? atol(argv[1]) : 1 << 20;
    double ms = argc > 2 ? atof(argv[2]) : 50;
    int reps = argc > 3 ? atoi(argv[3]) : 15;
    int n = (int)(bytes / (long)sizeof(double));
    double *a = malloc((size_t)n * sizeof *a), *r = malloc((size_t)n * sizeof *r);
    for (int i = 0; i < n; i++) a[i] = rank + i;

    iters_per_ms = 100000;
    double t0 = MPI_Wtime();
    compute(20);
    double took = (MPI_Wtime() - t0) * 1e3;
    iters_per_ms = (long)(iters_per_ms * 20 / took);
    MPI_Allreduce(MPI_IN_PLACE, &iters_per_ms, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);

    double *pure = malloc(4 * (size_t)reps * sizeof(double)), *comp = pure + reps,
           *ovl = comp + reps, *wt = ovl + reps;
    MPI_Request rq;
    for (int k = 0; k < reps + 2; k++) { /* two warm-up rounds */
        int j = k - 2 < 0 ? 0 : k - 2;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        MPI_Iallreduce(a, r, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        pure[j] = maxall(MPI_Wtime() - t0);

        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        compute(ms);
        comp[j] = maxall(MPI_Wtime() - t0);

        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        MPI_Iallreduce(a, r, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq);
        compute(ms);
        double t1 = MPI_Wtime();
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        double t2 = MPI_Wtime();
        ovl[j] = maxall(t2 - t0);
        wt[j] = maxall(t2 - t1);
        if (r[n - 1] != (double)size * (n - 1) + size * (size - 1) / 2.0 && rank == 0)
            printf("wrong result %g\n", r[n - 1]);
    }
    double p = median(pure, reps), c = median(comp, reps), o = median(ovl, reps),
           w = median(wt, reps);
    if (rank == 0)
        printf("ranks %d bytes %ld: pure %.3f ms, compute %.3f ms, overlap %.3f ms, wait %.3f ms, "
               "hidden %.0f%%\n",
               size, bytes, p * 1e3, c * 1e3, o * 1e3, w * 1e3, w > p ? 0 : 100 * (1 - w / p));
    free(pure);
    free(a);
    free(r);
    MPI_Finalize();
    return 0;
}
