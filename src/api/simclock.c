/* The simulated mode's timer shim, libcourier_simclock.so: `courier run --sim`
 * preloads it into every rank (LD_PRELOAD), so that a program that times itself
 * with clock_gettime, gettimeofday or time reads the virtual clock, as dclock,
 * mclock and MPI_Wtime do. It is the interface of libc's timers, translated.
 *
 * Invariants:
 *  - the virtual time is libcourier's (cr_virtual_ns); the shim keeps nothing of
 *    the job, only what it found at its first call: the real functions (the next
 *    definitions, libc's), where libcourier is, and the real time of that moment,
 *    to which virtual time 0 is mapped (so dates stay dates);
 *  - what is not the program's time stays real: the CPU-time clocks, every call
 *    made from inside libcourier (its own timeouts and statistics), and a process
 *    that is not a simulated rank, or not yet one (before MPI_Init or the first
 *    NX call; a program that is not linked with courier). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/time.h>
#include <time.h>

#include "simshim.h"

typedef int clock_gettime_fn(clockid_t, struct timespec *);
typedef int gettimeofday_fn(struct timeval *, void *);
typedef time_t time_fn(time_t *);

static struct {
    pthread_once_t once;
    clock_gettime_fn *real_clock_gettime;
    gettimeofday_fn *real_gettimeofday;
    time_fn *real_time;
    long long (*virtual_ns)(void); /* libcourier's; NULL: not linked with courier */
    uintptr_t lib_lo, lib_hi;      /* libcourier's loaded segments */
    int64_t real0, mono0;          /* the real clocks at the first call, ns */
} shim = {.once = PTHREAD_ONCE_INIT};

static int find_lib(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    uintptr_t want = (uintptr_t)arg, lo, hi;
    cr_shim_load_range(info, &lo, &hi);
    if (want < lo || want >= hi) return 0;
    shim.lib_lo = lo;
    shim.lib_hi = hi;
    return 1;
}

static int64_t ns_of(const struct timespec *ts)
{
    return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

static void init(void)
{
    shim.real_clock_gettime = (clock_gettime_fn *)dlsym(RTLD_NEXT, "clock_gettime");
    shim.real_gettimeofday = (gettimeofday_fn *)dlsym(RTLD_NEXT, "gettimeofday");
    shim.real_time = (time_fn *)dlsym(RTLD_NEXT, "time");
    shim.virtual_ns = (long long (*)(void))dlsym(RTLD_DEFAULT, "cr_virtual_ns");
    if (shim.virtual_ns) dl_iterate_phdr(find_lib, (void *)(uintptr_t)shim.virtual_ns);
    struct timespec ts;
    if (shim.real_clock_gettime) {
        shim.real_clock_gettime(CLOCK_REALTIME, &ts);
        shim.real0 = ns_of(&ts);
        shim.real_clock_gettime(CLOCK_MONOTONIC, &ts);
        shim.mono0 = ns_of(&ts);
    }
}

/* Virtual ns for a call from 'caller', or -1 when the real time is wanted. */
static long long virtual_for(const void *caller)
{
    pthread_once(&shim.once, init);
    uintptr_t c = (uintptr_t)caller;
    if (!shim.virtual_ns || (c >= shim.lib_lo && c < shim.lib_hi)) return -1;
    return shim.virtual_ns();
}

static void to_timespec(int64_t ns, struct timespec *ts)
{
    ts->tv_sec = (time_t)(ns / 1000000000);
    ts->tv_nsec = (long)(ns % 1000000000);
}

int clock_gettime(clockid_t clk, struct timespec *ts)
{
    long long v = -1;
    switch (clk) {
    case CLOCK_REALTIME:
    case CLOCK_REALTIME_COARSE:
    case CLOCK_TAI:
    case CLOCK_MONOTONIC:
    case CLOCK_MONOTONIC_RAW:
    case CLOCK_MONOTONIC_COARSE:
    case CLOCK_BOOTTIME:
        v = virtual_for(__builtin_return_address(0));
        break;
    default: /* CPU-time clocks: courier's compute counting reads them too */
        pthread_once(&shim.once, init);
        break;
    }
    if (v < 0) return shim.real_clock_gettime(clk, ts);
    bool real = clk == CLOCK_REALTIME || clk == CLOCK_REALTIME_COARSE || clk == CLOCK_TAI;
    to_timespec((real ? shim.real0 : shim.mono0) + v, ts);
    return 0;
}

int gettimeofday(struct timeval *tv, void *tz)
{
    long long v = virtual_for(__builtin_return_address(0));
    if (v < 0) return shim.real_gettimeofday(tv, tz);
    int64_t ns = shim.real0 + v;
    tv->tv_sec = (time_t)(ns / 1000000000);
    tv->tv_usec = (suseconds_t)(ns % 1000000000 / 1000);
    return 0;
}

time_t time(time_t *t)
{
    long long v = virtual_for(__builtin_return_address(0));
    if (v < 0) return shim.real_time(t);
    time_t s = (time_t)((shim.real0 + v) / 1000000000);
    if (t) *t = s;
    return s;
}
