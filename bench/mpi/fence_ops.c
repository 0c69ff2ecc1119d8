/* Many one-element one-sided operations in fence epochs (a benchmark, not a
 * test): the pattern of Graph500 2.1.4's one-sided BFS. Each rank issues OPS
 * single-element operations per epoch to its right neighbour's window, at
 * random places, between two MPI_Win_fence calls.
 * The window is MPI_Win_create over MPI_Alloc_mem's memory (as Graph500
 * makes it), over malloc's (mem=malloc), or MPI_Win_allocate's (mem=allocate).
 * Printed by rank 0: microseconds per operation (the slowest rank's time).
 * Plain MPI: builds with courier-cc, Open MPI's and MPICH's mpicc alike.
 *   courier-cc -O2 bench/mpi/fence_ops.c -o fence_ops
 *   courier run -n 2 ./fence_ops [min|put] [alloc_mem|malloc|allocate] [ops] [epochs] */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SLOTS = 4096 };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *op = argc > 1 ? argv[1] : "min", *mem = argc > 2 ? argv[2] : "alloc_mem";
    long ops = argc > 3 ? atol(argv[3]) : 20000;
    int epochs = argc > 4 ? atoi(argv[4]) : 3;
    int64_t *a = NULL;
    MPI_Win win;
    MPI_Aint bytes = SLOTS * sizeof(int64_t);
    if (!strcmp(mem, "allocate")) {
        MPI_Win_allocate(bytes, sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &a, &win);
    } else {
        if (!strcmp(mem, "malloc"))
            a = malloc((size_t)bytes);
        else
            MPI_Alloc_mem(bytes, MPI_INFO_NULL, &a);
        MPI_Win_create(a, bytes, sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    }
    MPI_Win_fence(0, win);
    for (int i = 0; i < SLOTS; i++) a[i] = INT64_MAX;
    MPI_Win_fence(0, win);
    int64_t mine = rank;
    int right = (rank + 1) % size;
    srand((unsigned)rank + 1);
    double t0 = MPI_Wtime();
    for (int e = 0; e < epochs; e++) {
        MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
        for (long i = 0; i < ops; i++) {
            MPI_Aint at = rand() % SLOTS;
            if (!strcmp(op, "put"))
                MPI_Put(&mine, 1, MPI_INT64_T, right, at, 1, MPI_INT64_T, win);
            else
                MPI_Accumulate(&mine, 1, MPI_INT64_T, right, at, 1, MPI_INT64_T, MPI_MIN, win);
        }
        MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    }
    double t = MPI_Wtime() - t0, tmax;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    long bad = 0; /* every slot written holds the left neighbour's rank */
    for (int i = 0; i < SLOTS; i++) bad += a[i] != INT64_MAX && a[i] != (rank + size - 1) % size;
    if (rank == 0)
        printf("fence_ops: %s into %s windows, %d ranks: %.2f us per operation%s\n", op, mem, size,
               tmax * 1e6 / ((double)ops * epochs), bad ? " (WRONG DATA)" : "");
    MPI_Win_free(&win);
    if (!strcmp(mem, "malloc")) free(a);
    if (!strcmp(mem, "alloc_mem")) MPI_Free_mem(a);
    MPI_Finalize();
    return 0;
}
