/* Unit test of what a rank reads to tell whether other processes compute on
 * its machine (cr_host_cpu_ns, cr_host_unused_ns: src/host/host.c; the
 * engine's verdict from them is core/wait.c's others_run):
 *  - a process's CPU time counts every thread's, not the main thread's alone:
 *    a second thread that computes while the main one sleeps shows, and the sum
 *    agrees with CLOCK_PROCESS_CPUTIME_ID;
 *  - a process that is not there has none;
 *  - the machine's unused time leaves out what a computing process took: over
 *    its run, the CPUs' time less the unused is at least that process's CPU
 *    time (other tests' tasks may add to it, never take from it);
 *  - the online CPUs are counted;
 *  - one look for a host (cr_host_look_take, cr_host_look_done): while a
 *    process of the host takes it, and for a window after, another is
 *    refused (in a shared mapping, across fork); a look left half-taken is
 *    taken over once stale; a clock a little behind another rank's does not
 *    take a look again.
 * Exits non-zero, naming the check, when the code is wrong. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "host.h"
#include "unit.h"

static uint64_t clock_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Compute until the calling thread has had ms of CPU time. */
static void burn(unsigned ms)
{
    uint64_t end = clock_ns(CLOCK_THREAD_CPUTIME_ID) + (uint64_t)ms * 1000000u;
    volatile uint64_t x = 0;
    while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < end) x++;
}

static _Atomic int burned; /* the burner's CPU time so far, ms */

static void *burner(void *arg)
{
    (void)arg;
    for (int i = 0; i < 100; i++) { /* 100 ms of CPU, then wait to be joined */
        burn(1);
        burned = i + 1;
    }
    while (burned >= 0) {
        struct timespec ms1 = {0, 1000000};
        nanosleep(&ms1, NULL);
    }
    return NULL;
}

static uint64_t rusage_ns(const struct rusage *ru)
{
    return (uint64_t)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) * 1000000000u +
           (uint64_t)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) * 1000u;
}

int main(void)
{
    /* every thread's time: the main thread sleeps while the second computes */
    uint64_t p0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID), s0 = cr_host_cpu_ns(getpid());
    CHECK(s0 > 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, burner, NULL) == 0);
    while (burned < 100) {
        struct timespec ms5 = {0, 5000000};
        nanosleep(&ms5, NULL);
    }
    uint64_t s1 = cr_host_cpu_ns(getpid()), p1 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    burned = -1;
    pthread_join(t, NULL);
    double ds = (double)(s1 - s0) / 1e6, dp = (double)(p1 - p0) / 1e6;
    printf("process: +%.1f ms (schedstat of its threads), +%.1f ms (CLOCK_PROCESS_CPUTIME_ID)\n",
           ds, dp);
    CHECK(ds >= 95.0);                                 /* the second thread's 100 ms */
    CHECK(ds >= dp * 0.95 - 1 && ds <= dp * 1.05 + 1); /* and the same count as the kernel's */
    CHECK(cr_host_cpu_ns(0x7ffffff0) == 0);

    /* the machine: a computing child's time is not unused */
    uint64_t u0, u1;
    unsigned cpus;
    CHECK(cr_host_unused_ns(&u0, &cpus));
    CHECK(cpus == (unsigned)sysconf(_SC_NPROCESSORS_ONLN));
    uint64_t w0 = clock_ns(CLOCK_MONOTONIC);
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        burn(300);
        _exit(0);
    }
    int st;
    struct rusage ru;
    CHECK(wait4(c, &st, 0, &ru) == c && WIFEXITED(st));
    CHECK(cr_host_unused_ns(&u1, &cpus));
    uint64_t dt = clock_ns(CLOCK_MONOTONIC) - w0, all = (uint64_t)cpus * dt;
    CHECK(u1 >= u0);
    uint64_t used = all > u1 - u0 ? all - (u1 - u0) : 0, child = rusage_ns(&ru);
    /* /proc/stat counts in clock ticks: one at each end */
    uint64_t slop = 2u * (1000000000u / (uint64_t)sysconf(_SC_CLK_TCK));
    printf("machine: %u CPUs, %.1f ms of wall time, %.1f ms used by tasks, the child's %.1f ms\n",
           cpus, (double)dt / 1e6, (double)used / 1e6, (double)child / 1e6);
    CHECK(child >= 290000000u);
    CHECK(used + slop >= child);

    /* one look a window for the whole host (times in ns, as the engine's) */
    const int64_t W = 200000000, S = 2000000000, T = 5000000000;
    cr_host_others *o =
        mmap(NULL, sizeof *o, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(o != MAP_FAILED);
    CHECK(cr_host_look_take(o, T, W, S));
    pid_t k = fork();
    CHECK(k >= 0);
    if (k == 0) /* another rank of the host, while the look is under way */
        _exit(cr_host_look_take(o, T + 1000, W, S) ? 1 : 0);
    CHECK(waitpid(k, &st, 0) == k && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    cr_host_look_done(o, T + 2000, true);
    CHECK(atomic_load(&o->seen) == 1);
    k = fork();
    CHECK(k >= 0);
    if (k == 0) /* the same window: refused, the verdict read; the next: taken */
        _exit(cr_host_look_take(o, T + W / 2, W, S)       ? 1
              : !cr_host_look_take(o, T + 2000 + W, W, S) ? 2
                                                          : 0);
    CHECK(waitpid(k, &st, 0) == k && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CHECK(!cr_host_look_take(o, T + 2000 + W + 1, W, S)); /* the child's look is under way */
    CHECK(!cr_host_look_take(o, T, W, S));                /* a clock behind the taker's */
    CHECK(cr_host_look_take(o, T + 2000 + W + S, W, S));  /* the child left it half-taken */
    cr_host_look_done(o, T + 2000 + W + S, false);
    CHECK(atomic_load(&o->seen) == 0 && atomic_load(&o->taking) == 0);
    munmap(o, sizeof *o);
    if (!failures) printf("host_cpu: ok\n");
    return failures != 0;
}
