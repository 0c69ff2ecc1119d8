/* Unit test of the simulated mode's yield (cr_vt_yield, src/host/vtime.c),
 * with no job: the simulator thread and the ranks' process hand the core
 * round with it while they wait for each other.
 *  - with a CPU-bound process on the same CPU a yield loses the core for a
 *    slice: the waiter asks for short slices (and, on Linux 6.12 and later,
 *    sched_getattr shows the 100 us slice);
 *  - a second after the last loss the request is given back before the next
 *    yield (the default slice again, as sched_getattr reported it at first),
 *    which asks anew only with a loss of its own (a newer lost_at).
 * Whether a yield alone on its CPU keeps the default slice is not checked:
 * the suite's other tests may share the CPU. Exits non-zero, naming the
 * check, when the code is wrong. */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "host.h"
#include "vtime.h"
#include "unit.h"

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The calling thread's slice as sched_getattr reports it. */
static uint64_t slice_ns(void)
{
    cr_sched_attr attr;
    memset(&attr, 0, sizeof attr);
    if (syscall(SYS_sched_getattr, 0, &attr, sizeof attr, 0)) return 0;
    return attr.runtime;
}

/* EEVDF's custom slices (Linux 6.12): older kernels take the request silently. */
static int kernel_has_slices(void)
{
    struct utsname u;
    int major = 0, minor = 0;
    if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2) return 0;
    return major > 6 || (major == 6 && minor >= 12);
}

int main(void)
{
    uint64_t dflt = slice_ns(); /* the default slice, as the kernel reports it */
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu(), &one);
    if (sched_setaffinity(0, sizeof one, &one)) {
        perror("sched_setaffinity");
        return 1;
    }

    /* a CPU-bound process on our CPU: a yield hands it the core for a slice */
    pid_t hog = fork();
    if (hog == 0) {
        for (volatile unsigned long x = 0;; x++) {
        }
    }
    cr_vt_waiter w = {0};
    int64_t t0 = now_ns();
    int yields = 0;
    while (!w.short_slice && now_ns() - t0 < 10000000000LL) {
        cr_vt_yield(&w);
        yields++;
    }
    kill(hog, SIGKILL);
    waitpid(hog, NULL, 0);
    CHECK(w.short_slice);
    CHECK(w.lost_at > t0);
    if (kernel_has_slices()) CHECK(slice_ns() == 100000);

    /* a loss over a second ago: the request goes back before the next yield,
     * and only a loss of that yield's own asks again */
    int64_t old = now_ns() - 2000000000LL;
    w.lost_at = old;
    cr_vt_yield(&w);
    CHECK(!w.short_slice || w.lost_at > old);
    if (!w.short_slice) CHECK(slice_ns() == dflt);

    printf("%d yields until one lost the core; %s\n", yields,
           failures ? "FAILED" : "all checks passed");
    return failures ? 1 : 0;
}
