/* The job's clock: what every interface's timer reads (dclock, mclock,
 * MPI_Wtime, through cr_timer_ns), and the plain monotonic clock that waiting
 * measures real time with (cr_mono_ns).
 *
 * Invariants: the clock never steps back or jumps (a new line starts where the
 * old one is); a counter that went back turns the counter off for good. */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "engine.h"

uint64_t cr_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The clock every interface's timer reads (dclock, mclock, MPI_Wtime): one
 * place for the simulated mode to give virtual time instead. Waiting keeps
 * cr_mono_ns: it measures real time spent off the CPU.
 *
 * clock_gettime costs 26 ns on this project's virtual machine (kvm-clock),
 * reading the time-stamp counter 11; OSU's latency loops call MPI_Wtime twice
 * per iteration, so on a small one-sided operation the clock was two thirds
 * of what they measured. Where the counter is a clock, the job's start sets
 * an origin in both clocks, and calls return clock_gettime until 0.1 ms has
 * passed; the first call after that takes the counter's rate over that time
 * and anchors a line at its own reading of both, read through the counter
 * from then on. At 1 ms, 100 ms and 3 s the rate is taken again over the
 * whole time since the origin (ever closer: the readings' error over a longer
 * time), and a new line starts where the old one is at that moment, so the
 * clock never steps (measured: within 1 us of clock_gettime over 3.5 s). The
 * first line's rate is good to about 1e-4 (two readings' error over 0.1 ms),
 * so it is off by well under a microsecond when the 1 ms line takes over;
 * with the first line at 1 ms, OSU's first size ran on clock_gettime (an
 * 8-byte put and flush with two MPI_Wtime 44-48 ns in the first millisecond,
 * 33-35 ns after). A line never changes once published; a counter that went
 * back (a virtual machine moved) turns the counter off for good. */
/* Phases: NONE -> SETTING -> ORIGIN -> FIRST_FIT (line 0 being made) -> LINE
 * + 2n (line n in use) -> LINE + 2n + 1 (line n in use, n+1 being made) ...;
 * PLAIN: clock_gettime only. */
enum { CLK_NONE = 0, CLK_SETTING, CLK_ORIGIN, CLK_PLAIN, CLK_FIRST_FIT = 15, CLK_LINE = 16 };
#define CLK_LINES 4
static const uint64_t clk_fit_ns[CLK_LINES] = {100000u, 1000000u, 100000000u, 3000000000u};

bool cr_tsc_ok(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u) return false;
    __get_cpuid(0x80000007u, &a, &b, &c, &d);
    return (d >> 8) & 1u;
#else
    return false;
#endif
}

static inline uint64_t tsc_now(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return __builtin_ia32_rdtsc();
#else
    return 0;
#endif
}

/* A moment in both clocks: the counter read just before and just after
 * clock_gettime, the closest of five tries (a preemption between two readings
 * would otherwise put its length into the rate). */
static void clk_pair(uint64_t *ns, uint64_t *tick)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        uint64_t t1 = tsc_now(), n = cr_mono_ns(), t2 = tsc_now();
        if (t2 >= t1 && t2 - t1 < best) {
            best = t2 - t1;
            *ns = n;
            *tick = t1 + (t2 - t1) / 2;
        }
    }
    if (best == UINT64_MAX) { /* the counter went back each time */
        *ns = cr_mono_ns();
        *tick = 0;
    }
}

static inline uint64_t on_line(const struct cr_clk_line *l, uint64_t t)
{
    return l->ns + (uint64_t)((double)(t - l->tick) * l->ns_per_tick);
}

/* Move the clock from phase `from` to `to` if this thread wins it. */
static bool clk_take(int from, int to)
{
    return atomic_compare_exchange_strong_explicit(&cr_the_job.clk.phase, &from, to,
                                                   memory_order_acq_rel, memory_order_acquire);
}

static uint64_t clk_slow(int ph);

uint64_t cr_timer_ns(void)
{
    if (__builtin_expect(cr_the_job.vt.base != NULL, 0)) {
        if (cr_the_job.poll.misses) cr_poll_clock(&cr_the_job);
        return (uint64_t)cr_vt_timer(&cr_the_job.vt) / 1000u;
    }
    return cr_clock_ns();
}

uint64_t cr_clock_ns(void)
{
    if (__builtin_expect(cr_the_job.vt.base != NULL, 0))
        return (uint64_t)cr_vt_read(&cr_the_job.vt) / 1000u; /* virtual time (--sim) */
    typeof(cr_the_job.clk) *k = &cr_the_job.clk;
    int ph = atomic_load_explicit(&k->phase, memory_order_acquire);
    if (__builtin_expect(ph >= CLK_LINE, 1)) {
        int n = (ph - CLK_LINE) >> 1; /* line n; odd: line n+1 is being made */
        const struct cr_clk_line *l = &k->line[n];
        uint64_t t = tsc_now();
        if (__builtin_expect(t >= l->tick, 1)) {
            uint64_t ns = on_line(l, t);
            if ((ph & 1) || n == CLK_LINES - 1 || ns - k->ns0 < clk_fit_ns[n + 1]) return ns;
        }
    }
    return clk_slow(ph);
}

static uint64_t clk_slow(int ph)
{
    typeof(cr_the_job.clk) *k = &cr_the_job.clk;
    uint64_t ns = 0, t = 0; /* (set by clk_pair; some gcc versions cannot see it) */
    if (ph == CLK_NONE && clk_take(CLK_NONE, CLK_SETTING)) {
        bool tsc = cr_tsc_ok(); /* (CPUID traps to the hypervisor: tens of us in a VM) */
        clk_pair(&ns, &t);      /* after the check */
        if (!tsc || !t) {
            atomic_store_explicit(&k->phase, CLK_PLAIN, memory_order_release);
            return ns;
        }
        k->ns0 = ns;
        k->tick0 = t;
        atomic_store_explicit(&k->phase, CLK_ORIGIN, memory_order_release);
        return ns;
    }
    if (ph < CLK_ORIGIN || ph == CLK_PLAIN) return cr_mono_ns();
    if (ph == CLK_ORIGIN) { /* no line before 0.1 ms: clock_gettime alone, no counter read */
        ns = cr_mono_ns();
        if (ns - k->ns0 < clk_fit_ns[0]) return ns;
    }
    int n = ph < CLK_LINE ? -1 : (ph - CLK_LINE) >> 1; /* the line in use */
    bool making = ph == CLK_FIRST_FIT || (ph >= CLK_LINE && (ph & 1));
    ns = cr_mono_ns();
    t = tsc_now();
    if (n >= 0 && t < k->line[n].tick) { /* the counter went back */
        if (!making) atomic_store_explicit(&k->phase, CLK_PLAIN, memory_order_release);
        return ns;
    }
    uint64_t at = n >= 0 ? on_line(&k->line[n], t) : ns; /* what the clock says now */
    if (!making && n + 1 < CLK_LINES && at - k->ns0 >= clk_fit_ns[n + 1] &&
        clk_take(ph, n < 0 ? CLK_FIRST_FIT : ph + 1)) { /* this thread makes line n+1 */
        clk_pair(&ns, &t);
        if (t <= k->tick0 || (n >= 0 && t < k->line[n].tick)) {
            atomic_store_explicit(&k->phase, CLK_PLAIN, memory_order_release);
            return ns;
        }
        at = n >= 0 ? on_line(&k->line[n], t) : ns;
        k->line[n + 1] =
            (struct cr_clk_line){t, at, (double)(ns - k->ns0) / (double)(t - k->tick0)};
        atomic_store_explicit(&k->phase, CLK_LINE + 2 * (n + 1), memory_order_release);
    }
    return at;
}
