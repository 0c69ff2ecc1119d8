/* A rank that forks a helper process which ends with exit(0): the helper is
 * not the rank, so its exit must neither end the rank's part of the job (its
 * peers would take the rank for gone) nor say that the rank ended without
 * MPI_Finalize (which fails the job). Each rank forks one such helper, waits
 * for it, then the ranks sum their ranks with MPI_Allreduce and exchange a
 * message around a ring, twice (before and after the helpers); every rank
 * prints "fork exit ok" when the sums and the ring are right. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void round_trip(int me, int np, const char *when)
{
    int sum = 0, got = -1, next = (me + 1) % np, prev = (me + np - 1) % np;
    MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Sendrecv(&me, 1, MPI_INT, next, 7, &got, 1, MPI_INT, prev, 7, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    if (sum != np * (np - 1) / 2 || got != prev) {
        printf("fork exit: rank %d %s: sum %d, from rank %d\n", me, when, sum, got);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, np, st = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    round_trip(me, np, "before");
    fflush(stdout);
    pid_t p = fork();
    if (p == 0) exit(0); /* the helper: libc's exit, so the atexit handlers run */
    if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st)) {
        printf("fork exit: rank %d: the helper did not end with status 0\n", me);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    round_trip(me, np, "after");
    MPI_Finalize();
    printf("fork exit ok\n");
    return 0;
}
