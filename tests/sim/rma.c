/* One-sided operations under courier run --sim (tests/sim): an MPI program,
 * unchanged, whose puts and gets must take virtual time on the model, through
 * the target's library, whatever the window's flavor.
 *
 *   rma create|allocate ITERS
 *     rank 0 times (MPI_Wtime, virtual time under --sim) a ping-pong of 8
 *     bytes with rank 1, then ITERS puts of 8 bytes into rank 1's window, each
 *     followed by MPI_Win_flush, then ITERS gets the same way, in a
 *     MPI_Win_lock_all epoch while rank 1 waits in a barrier; it prints
 *     "rma FLAVOR ONE_WAY_US PUT_US GET_US" (per operation). Every rank checks
 *     what the puts left in rank 1's window and what the gets read back, and
 *     exits 1 on a wrong word. */
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (argc < 3 || n < 2) {
        if (me == 0) fprintf(stderr, "usage: rma create|allocate ITERS (2 ranks or more)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int iters = atoi(argv[2]);
    bool alloc = strcmp(argv[1], "allocate") == 0;
    MPI_Aint bytes = (MPI_Aint)iters * 8;
    uint64_t *win_mem = NULL;
    MPI_Win win;
    if (alloc) {
        MPI_Win_allocate(bytes, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &win_mem, &win);
    } else {
        win_mem = malloc((size_t)bytes);
        MPI_Win_create(win_mem, bytes, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    }
    memset(win_mem, 0, (size_t)bytes);
    MPI_Barrier(MPI_COMM_WORLD);

    uint64_t word = 0, back = 0;
    int bad = 0;
    double one_way = 0, put = 0, get = 0;
    if (me == 0) {
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) {
            MPI_Send(&word, 1, MPI_UINT64_T, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(&word, 1, MPI_UINT64_T, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        one_way = (MPI_Wtime() - t0) / (2.0 * iters);
    } else if (me == 1) {
        for (int i = 0; i < iters; i++) {
            MPI_Recv(&word, 1, MPI_UINT64_T, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&word, 1, MPI_UINT64_T, 0, 0, MPI_COMM_WORLD);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    if (me == 0) {
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) {
            word = 1000u + (uint64_t)i;
            MPI_Put(&word, 1, MPI_UINT64_T, 1, i, 1, MPI_UINT64_T, win);
            MPI_Win_flush(1, win);
        }
        put = (MPI_Wtime() - t0) / iters;
        t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) {
            MPI_Get(&back, 1, MPI_UINT64_T, 1, i, 1, MPI_UINT64_T, win);
            MPI_Win_flush(1, win);
            if (back != 1000u + (uint64_t)i) bad++;
        }
        get = (MPI_Wtime() - t0) / iters;
    }
    MPI_Barrier(MPI_COMM_WORLD); /* rank 1 serves the operations while it waits here */
    MPI_Win_unlock_all(win);
    if (me == 1)
        for (int i = 0; i < iters; i++)
            if (win_mem[i] != 1000u + (uint64_t)i) bad++;
    if (bad) fprintf(stderr, "rma %s: rank %d found %d wrong words\n", argv[1], me, bad);
    if (me == 0) printf("rma %s %.3f %.3f %.3f\n", argv[1], one_way * 1e6, put * 1e6, get * 1e6);
    MPI_Win_free(&win);
    if (!alloc) free(win_mem);
    MPI_Finalize();
    return bad ? 1 : 0;
}
