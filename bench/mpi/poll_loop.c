/* A barrier completed by polling (a benchmark, not a test: its figures depend
 * on the machine and its load).
 *
 * What Graph500's AML layer does thousands of times in its SSSP: each rank
 * keeps NRECV persistent any-source receives posted, starts MPI_Ibarrier and
 * completes it with MPI_Test and MPI_Testany in a loop (never a blocking
 * wait), once on a communicator of one rank each and once on all ranks, then
 * calls MPI_Barrier and an MPI_Allreduce. With more ranks than cores the loop
 * must give its core to the ranks it waits for (courier's poll_yield, Open
 * MPI's yield when idle). Printed by rank 0: the time per iteration and the
 * polls rank 0 made.
 * Plain MPI: builds with courier-cc, Open MPI's and MPICH's mpicc alike.
 *   courier-cc -O2 bench/mpi/poll_loop.c -o poll_loop
 *   courier run -n 4 ./poll_loop [iterations] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { NRECV = 4 };

static long poll_until(MPI_Request *h, int n, MPI_Request *a, MPI_Request *b)
{
    long polls = 0;
    int flag = 0, idx;
    while (!flag) {
        MPI_Test(h, &flag, MPI_STATUS_IGNORE);
        MPI_Testany(n, a, &idx, &idx, MPI_STATUS_IGNORE);
        if (b) MPI_Testany(n, b, &idx, &idx, MPI_STATUS_IGNORE);
        polls++;
    }
    return polls;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, iters = argc > 1 ? atoi(argv[1]) : 300;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm all, self;
    MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &all);
    MPI_Comm_split(MPI_COMM_WORLD, rank, 0, &self);
    static char ba[NRECV][64], bs[NRECV][64];
    MPI_Request ra[NRECV], rs[NRECV];
    for (int i = 0; i < NRECV; i++) {
        MPI_Recv_init(ba[i], 64, MPI_CHAR, MPI_ANY_SOURCE, MPI_ANY_TAG, all, &ra[i]);
        MPI_Recv_init(bs[i], 64, MPI_CHAR, MPI_ANY_SOURCE, MPI_ANY_TAG, self, &rs[i]);
    }
    MPI_Startall(NRECV, ra);
    MPI_Startall(NRECV, rs);
    MPI_Barrier(MPI_COMM_WORLD);
    long polls = 0;
    double t0 = MPI_Wtime();
    for (int it = 0; it < iters; it++) {
        MPI_Request h;
        MPI_Ibarrier(self, &h);
        polls += poll_until(&h, NRECV, ra, rs);
        MPI_Ibarrier(all, &h);
        polls += poll_until(&h, NRECV, ra, NULL);
        MPI_Barrier(MPI_COMM_WORLD);
        long v = rank, s;
        MPI_Allreduce(&v, &s, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    }
    double t = MPI_Wtime() - t0;
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0)
        printf("poll_loop: %d ranks, %d iterations: %.1f us each, %ld polls on rank 0\n", size,
               iters, t * 1e6 / iters, polls);
    for (int i = 0; i < NRECV; i++) {
        MPI_Cancel(&ra[i]);
        MPI_Cancel(&rs[i]);
    }
    MPI_Waitall(NRECV, ra, MPI_STATUSES_IGNORE);
    MPI_Waitall(NRECV, rs, MPI_STATUSES_IGNORE);
    for (int i = 0; i < NRECV; i++) {
        MPI_Request_free(&ra[i]);
        MPI_Request_free(&rs[i]);
    }
    MPI_Comm_free(&all);
    MPI_Comm_free(&self);
    MPI_Finalize();
    return 0;
}
