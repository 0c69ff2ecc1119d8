/* What a wait costs, for the tests that check a waiting rank sleeps (quiet.c,
 * asleep.c): the monotonic clock, and the CPU time and voluntary context
 * switches of the whole process (every thread), from getrusage. */
#ifndef TESTS_TRANSPORT_WAITCOST_H
#define TESTS_TRANSPORT_WAITCOST_H
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
#endif
