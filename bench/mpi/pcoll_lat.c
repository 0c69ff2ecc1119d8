/* Latency of a small all-reduce three ways: the blocking MPI_Allreduce, the
 * nonblocking MPI_Iallreduce + MPI_Wait, and the persistent one (MPI-4.0
 * MPI_Allreduce_init once, then MPI_Start + MPI_Wait each time); SIZE bytes of
 * doubles summed over every rank; prints microseconds per operation, the
 * median of 5 runs. Plain MPI: built against courier (bench/mpi/CMakeLists.txt)
 * and with Open MPI 4.1's mpicc, whose persistent collectives are the
 * extension MPIX_Allreduce_init (mpi-ext.h):
 *   mpicc.openmpi -O2 bench/mpi/pcoll_lat.c -o pcoll_lat
 *   pcoll_lat [SIZE]   (default 8) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#ifdef OPEN_MPI
#include <mpi-ext.h>
#define ALLREDUCE_INIT MPIX_Allreduce_init
#else
#define ALLREDUCE_INIT MPI_Allreduce_init
#endif

#define ITERS 20000
#define WARM 1000
#define RUNS 5

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One run of form f (0 blocking, 1 nonblocking, 2 persistent request p). */
static double run(int f, double *s, double *r, int n, MPI_Request p)
{
    double t0 = 0;
    for (int i = 0; i < WARM + ITERS; i++) {
        if (i == WARM) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
        }
        MPI_Request q;
        if (f == 0) {
            MPI_Allreduce(s, r, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        } else if (f == 1) {
            MPI_Iallreduce(s, r, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &q);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
        } else {
            MPI_Start(&p);
            MPI_Wait(&p, MPI_STATUS_IGNORE);
        }
    }
    return (MPI_Wtime() - t0) * 1e6 / ITERS;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, np, size = argc > 1 ? atoi(argv[1]) : 8;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    int n = size / (int)sizeof(double) > 0 ? size / (int)sizeof(double) : 1;
    double *s = calloc((size_t)n, sizeof *s), *r = calloc((size_t)n, sizeof *r);
    MPI_Request p;
    ALLREDUCE_INIT(s, r, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &p);
    static const char *const name[] = {"MPI_Allreduce", "MPI_Iallreduce+MPI_Wait",
                                       "Allreduce_init:MPI_Start+MPI_Wait"};
    for (int f = 0; f < 3; f++) {
        double t[RUNS];
        for (int k = 0; k < RUNS; k++) t[k] = run(f, s, r, n, p);
        qsort(t, RUNS, sizeof *t, cmp);
        if (me == 0)
            printf("pcoll %d ranks %d bytes %s %.3f us\n", np, n * 8, name[f], t[RUNS / 2]);
    }
    MPI_Request_free(&p);
    free(s);
    free(r);
    MPI_Finalize();
    return 0;
}
