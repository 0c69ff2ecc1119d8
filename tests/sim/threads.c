/* MPI_Init_thread under courier run --sim (tests/sim): a rank is one node's
 * sequence of calls on one clock, so a program that asks for
 * MPI_THREAD_MULTIPLE is told MPI_THREAD_FUNNELED (the most the simulated
 * mode provides), and MPI_Query_thread says the same; lower levels are
 * provided as asked. Prints "provided LEVEL" (a number) and runs a ring. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int required = argc > 1 ? atoi(argv[1]) : MPI_THREAD_MULTIPLE, provided = -1, q = -1, me, n;
    MPI_Init_thread(&argc, &argv, required, &provided);
    MPI_Query_thread(&q);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (q != provided) {
        fprintf(stderr, "threads: MPI_Query_thread says %d, MPI_Init_thread %d\n", q, provided);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int token = me;
    MPI_Sendrecv_replace(&token, 1, MPI_INT, (me + 1) % n, 0, (me + n - 1) % n, 0, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
    if (token != (me + n - 1) % n) MPI_Abort(MPI_COMM_WORLD, 1);
    if (me == 0) printf("threads: required %d provided %d\n", required, provided);
    MPI_Finalize();
    return 0;
}
