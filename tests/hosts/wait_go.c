/* Every rank keeps its transports polled (MPI_Iprobe) until the file named by
 * its first argument exists (at most 60 s), then all meet in a barrier and each
 * says "rank done". For tests that knock at a running job's ports from outside
 * it (stranger.sh). */
#include <mpi.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, flag;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* talk once first, so that every pair's connection stands */
    int token = rank, got = -1;
    MPI_Sendrecv(&token, 1, MPI_INT, (rank + 1) % size, 0, &got, 1, MPI_INT,
                 (rank + size - 1) % size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    struct timespec nap = {0, 10 * 1000 * 1000};
    for (int i = 0; i < 6000 && argc > 1 && access(argv[1], F_OK); i++) {
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        nanosleep(&nap, NULL);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    printf("rank done\n");
    MPI_Finalize();
    return 0;
}
