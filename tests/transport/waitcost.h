/* What a wait costs, for the tests that check a waiting rank sleeps (quiet.c,
 * asleep.c, threads_asleep.c): the monotonic clock, and the CPU time and
 * voluntary context switches of the whole process (every thread), from
 * getrusage; and the tests' common end. */
#ifndef TESTS_TRANSPORT_WAITCOST_H
#define TESTS_TRANSPORT_WAITCOST_H
#include <mpi.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

static inline double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* CPU seconds of the process; its voluntary context switches in *sleeps
 * (when not NULL). */
static inline double usage(long *sleeps)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    if (sleeps) *sleeps = u.ru_nvcsw;
    return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

/* The end of such a test: the failed checks of every rank added up, rank 0
 * says "NAME: 2 ranks ok" or how many failed; MPI_Finalize; the exit status. */
static inline int waitcost_end(const char *name, int bad)
{
    int rank, all = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Reduce(&bad, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (all)
            printf("%s: %d checks failed (messages wrong or waits that spun)\n", name, all);
        else
            printf("%s: 2 ranks ok\n", name);
    }
    MPI_Finalize();
    return all != 0;
}
#endif
