/* Latency of started persistent and partitioned point-to-point (MPI-4.0
 * chapter 4) between ranks 0 and 1: a ping-pong of SIZE bytes, each way one
 * MPI_Start(all) + (partitioned: MPI_Pready of every partition) + MPI_Wait per
 * side; prints half the round trip in microseconds, the median of 5 runs.
 * Plain MPI: built against courier (bench/mpi/CMakeLists.txt, HAVE_PART) and,
 * for the persistent rows, with any mpicc (Open MPI 4.1 has no partitioned
 * calls):  mpicc -O2 bench/mpi/part_lat.c -o part_lat
 *   part_lat [SIZE] [PARTITIONS]   (defaults 8 and 1) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define ITERS 20000
#define WARM 1000
#define RUNS 5

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One ping-pong run with requests s (send) and r (receive); parts > 0:
 * partitioned, Pready each. */
static double run(int me, MPI_Request s, MPI_Request r, int parts)
{
    double t0 = 0;
    for (int i = 0; i < WARM + ITERS; i++) {
        if (i == WARM) t0 = MPI_Wtime();
        if (me == 0) {
            MPI_Start(&s);
#ifdef HAVE_PART
            if (parts) MPI_Pready_range(0, parts - 1, s);
#endif
            MPI_Start(&r);
            MPI_Wait(&s, MPI_STATUS_IGNORE);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        } else {
            MPI_Start(&r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            MPI_Start(&s);
#ifdef HAVE_PART
            if (parts) MPI_Pready_range(0, parts - 1, s);
#endif
            MPI_Wait(&s, MPI_STATUS_IGNORE);
        }
    }
    return (MPI_Wtime() - t0) * 1e6 / ITERS / 2;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    int size = argc > 1 ? atoi(argv[1]) : 8, parts = argc > 2 ? atoi(argv[2]) : 1;
    char *sb = calloc((size_t)size + 1, 1), *rb = calloc((size_t)size + 1, 1);
    if (me > 1) {
        MPI_Finalize();
        return 0;
    }
    int peer = 1 - me;
    double t[RUNS];
    MPI_Request s, r;
    MPI_Send_init(sb, size, MPI_CHAR, peer, 1, MPI_COMM_WORLD, &s);
    MPI_Recv_init(rb, size, MPI_CHAR, peer, 1, MPI_COMM_WORLD, &r);
    for (int k = 0; k < RUNS; k++) t[k] = run(me, s, r, 0);
    qsort(t, RUNS, sizeof *t, cmp);
    if (!me) printf("persistent %d bytes: %.2f us\n", size, t[RUNS / 2]);
    MPI_Request_free(&s);
    MPI_Request_free(&r);
#ifdef HAVE_PART
    MPI_Psend_init(sb, parts, size / parts, MPI_CHAR, peer, 2, MPI_COMM_WORLD, MPI_INFO_NULL, &s);
    MPI_Precv_init(rb, parts, size / parts, MPI_CHAR, peer, 2, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    for (int k = 0; k < RUNS; k++) t[k] = run(me, s, r, parts);
    qsort(t, RUNS, sizeof *t, cmp);
    if (!me) printf("partitioned %d bytes in %d partitions: %.2f us\n", size, parts, t[RUNS / 2]);
    MPI_Request_free(&s);
    MPI_Request_free(&r);
#endif
    free(sb);
    free(rb);
    MPI_Finalize();
    return 0;
}
