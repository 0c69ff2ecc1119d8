/* All-to-all benchmark for comparing simulators (bench/sim/run.sh): plain MPI,
 * built unchanged with courier-cc (run under `courier run --sim`) and with
 * SimGrid's smpicc (run under smpirun).
 *
 *   alltoall [BLOCK [ROUNDS [nocheck]]]
 *     bytes per peer (default 1024), rounds (default 12); nocheck: do not check
 *     the blocks received (for buffers whose pages the ranks share: courier's
 *     --sim ...,shared=BYTES, SMPI's smpi/auto-shared-malloc-thresh)
 * Rank 0 prints "alltoall ranks=N block=B rounds=R virtual_s=T", where T is the
 * MPI_Wtime span of the rounds (virtual time under a simulator). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    long block = argc > 1 ? atol(argv[1]) : 1024;
    int rounds = argc > 2 ? atoi(argv[2]) : 12;
    int check = !(argc > 3 && !strcmp(argv[3], "nocheck"));
    if (block < 1 || rounds < 1 || (argc > 3 && check)) {
        if (rank == 0) fprintf(stderr, "usage: alltoall [BLOCK [ROUNDS [nocheck]]]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    size_t total = (size_t)block * (size_t)size;
    char *sendbuf = malloc(total);
    char *recvbuf = malloc(total);
    if (!sendbuf || !recvbuf) {
        fprintf(stderr, "alltoall: rank %d: out of memory (%zu bytes)\n", rank, 2 * total);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(sendbuf, rank & 0xff, total);
    memset(recvbuf, 0, total);

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int r = 0; r < rounds; r++)
        MPI_Alltoall(sendbuf, (int)block, MPI_BYTE, recvbuf, (int)block, MPI_BYTE, MPI_COMM_WORLD);
    double t1 = MPI_Wtime();

    /* every block from peer p holds p's rank byte */
    int bad = 0;
    for (int p = 0; check && p < size; p++)
        if (recvbuf[(size_t)p * block] != (char)(p & 0xff) ||
            recvbuf[(size_t)p * block + block - 1] != (char)(p & 0xff))
            bad++;
    int badall = 0;
    MPI_Reduce(&bad, &badall, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);

    if (rank == 0) {
        printf("alltoall ranks=%d block=%ld rounds=%d virtual_s=%.9f\n", size, block, rounds,
               t1 - t0);
        if (badall) fprintf(stderr, "alltoall: %d wrong blocks\n", badall);
    }
    free(sendbuf);
    free(recvbuf);
    MPI_Finalize();
    return badall ? 1 : 0;
}
