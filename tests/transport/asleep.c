/* A rank blocked in a receive sleeps, progress thread or not: while a program
 * thread waits in a call (it moves the engine itself), the progress thread must
 * not wake every few hundred microseconds to look (progress.c napped 200 us at
 * a time beside a waiter: some 4,000 futex time-outs a second, 7 % of a core
 * here, for a rank that did nothing but wait), and once the wait is over it must
 * move the engine again while the program computes.
 * A window (a one-sided service, with COURIER_RMA_NO_MAP=1) and a nonblocking
 * collective under way start the progress thread. In turn one rank waits in
 * MPI_Recv with its MPI_Iallreduce outstanding while the other sleeps 700 ms,
 * reads the waiter's window (MPI_Get, served by the waiting thread) and sends;
 * then the waiter computes without calling MPI while the other reads its window
 * again and joins the collective: both served by the waiter's progress thread
 * (else the other's calls wait until the waiter's next call, which is no hang:
 * this part checks values, not time). Run with COURIER_NAP_MS high, so that a
 * lost wake-up hangs (the launcher's --timeout ends it) instead of costing a nap.
 * Checked over each rank's waits in MPI_Recv (getrusage of the whole process,
 * both threads): under 100 sleeps (voluntary context switches) per second of
 * waiting, and CPU time under a tenth of the wall time. Not a timing: counts and
 * a ratio of CPU to wall time, which load beside the job does not raise.
 * Invariant: every value is checked (message, window, collective). */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

#include "waitcost.h"

#define ROUNDS 6
#define SLEEPS_PER_S 100 /* a sleeping waiter: ~10 a second; napping 200 us: ~4,000 */

/* Read rank t's window word, passive target: 1 when it is 100 + t. */
static int get_ok(MPI_Win win, int t)
{
    long got = -1;
    MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win);
    MPI_Get(&got, 1, MPI_LONG, t, 0, 1, MPI_LONG, win);
    MPI_Win_unlock(t, win);
    if (got != 100 + t) printf("asleep: window of rank %d holds %ld, not %d\n", t, got, 100 + t);
    return got == 100 + t;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0) fprintf(stderr, "asleep: run with 2 ranks (-n 2), not %d\n", size);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int peer = 1 - rank, bad = 0;
    long word = 100 + rank;
    MPI_Win win;
    MPI_Win_create(&word, sizeof word, sizeof word, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    double wall = 0, used = 0; /* over this rank's waits in MPI_Recv */
    long slept = 0;
    for (long i = 0; i < ROUNDS; i++) {
        long v = -1, sum = -1;
        if (rank == (int)(i & 1)) {
            MPI_Request r;
            MPI_Iallreduce(&i, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &r);
            long s0, s1;
            double t0 = now(), c0 = usage(&s0);
            MPI_Recv(&v, 1, MPI_LONG, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            double c1 = usage(&s1);
            wall += now() - t0;
            used += c1 - c0;
            slept += s1 - s0;
            usleep(200000); /* computing: the progress thread serves the peer */
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        } else {
            usleep(700000);
            bad += !get_ok(win, peer); /* served by the waiting thread */
            MPI_Send(&i, 1, MPI_LONG, peer, 1, MPI_COMM_WORLD);
            bad += !get_ok(win, peer); /* by its progress thread, if it computes */
            MPI_Request r;             /* a nonblocking collective matches only its own kind */
            MPI_Iallreduce(&i, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            v = i;
        }
        if (v != i || sum != 2 * i) {
            printf("asleep: rank %d round %ld: received %ld, sum %ld (want %ld, %ld)\n", rank, i, v,
                   sum, i, 2 * i);
            bad++;
        }
    }
    printf("asleep: rank %d waited %.2f s in MPI_Recv: %.3f s of CPU, %ld sleeps\n", rank, wall,
           used, slept);
    if (used > wall / 10 || (double)slept > SLEEPS_PER_S * wall) {
        printf("asleep: rank %d woke too often while it waited (asleep: ~0 s of CPU, ~10 sleeps a "
               "second)\n",
               rank);
        bad++;
    }
    MPI_Win_free(&win);
    return waitcost_end("asleep", bad);
}
