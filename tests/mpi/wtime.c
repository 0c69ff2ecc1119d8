/* MPI_Wtime is a clock (it reads the time-stamp counter once its rate is
 * known, src/core/job.c's cr_clock_ns): over 3.2 s, across its switches (the
 * fits at 0.1 ms, 1 ms, 100 ms and 3 s after the job's start), every interval agrees
 * with CLOCK_MONOTONIC's within 50 us plus 0.01 % (a 0.1 % error in the rate
 * fails it within 0.2 s), and no thread ever sees it
 * go back, while two threads read it at once (MPI_THREAD_MULTIPLE: MPI_Wtime
 * takes no lock). MPI_Wtick is between 1 ns and 10 ms. Any number of ranks. */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "mcheck.h"

static double mono(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static _Atomic int stop;

/* Reads MPI_Wtime until told to stop; returns how often it went back. */
static void *reader(void *arg)
{
    long *back = arg;
    double last = MPI_Wtime();
    while (!stop) {
        double x = MPI_Wtime();
        if (x < last) ++*back;
        last = x;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    double tick = MPI_Wtick();
    CHECK(tick >= 1e-9 && tick <= 0.01, "MPI_Wtick is %g", tick);
    long back[2] = {0, 0};
    pthread_t th;
    CHECK(pthread_create(&th, NULL, reader, &back[1]) == 0, "no thread");
    /* Each reading of MPI_Wtime is bracketed by two of CLOCK_MONOTONIC, so a
     * preemption between them widens the bracket instead of failing. */
    double m0a = mono(), w0 = MPI_Wtime(), m0b = mono(), last = w0;
    for (int i = 0; i < 64; i++) { /* 64 x 50 ms, reading hard in between */
        double until = mono() + 0.05;
        while (mono() < until) {
            double x = MPI_Wtime();
            if (x < last) back[0]++;
            last = x;
        }
        double ma = mono(), w = MPI_Wtime(), mb = mono(), dw = w - w0;
        double lo = ma - m0b, hi = mb - m0a, tol = 50e-6 + 1e-4 * hi;
        CHECK(dw >= lo - tol && dw <= hi + tol,
              "after %.6f-%.6f s of CLOCK_MONOTONIC, MPI_Wtime says %.6f s", lo, hi, dw);
    }
    stop = 1;
    pthread_join(th, NULL);
    CHECK(back[0] == 0 && back[1] == 0, "MPI_Wtime went back %ld times (main) and %ld (thread)",
          back[0], back[1]);
    OK(MPI_Finalize());
    return 0;
}
