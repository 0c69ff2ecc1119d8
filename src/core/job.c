/* The job of this process: start-up from the launcher's environment, waiting
 * (spin, yield, sleep), the progress thread that runs receive handlers, errors,
 * and the orderly exit.
 *
 * Invariants:
 *  - the job is created once, on the first call of any interface (NX/2 programs
 *    call no init function), and finalized at exit after every send a live peer
 *    may still read has completed;
 *  - a waiting thread spins only briefly (almost not at all when there are more
 *    ranks than cores), then yields, then sleeps on its futex doorbell: a rank
 *    that waits for long keeps no core busy; the spin adapts between
 *    spin_floor and spin_limit to what the last idle spell showed (cr_idle);
 *  - the progress thread exists only once a handler receive (or a nonblocking
 *    collective) was posted; from then on every engine call holds job->lock, and
 *    handlers run without it, one at a time, under trap_lock (which masktrap
 *    takes to keep them out); in the simulated mode there is none, and due
 *    handlers run in the rank's own thread when it waits, polls or unmasks;
 *  - with several program threads (cr_multi_begin: MPI_THREAD_MULTIPLE) every
 *    call holds job->lock too, and each thread that waits makes progress itself
 *    (no progress thread is needed): the lock is dropped only while a wait
 *    spins, yields or sleeps, so another thread may enter meanwhile;
 *  - no wake-up is lost, whichever thread sleeps: a sleeper announces itself
 *    (the host doorbell's sleepers; job->sleepers and what it waits for:
 *    engine.h; job->pollers) under the lock before it looks once more at what
 *    it waits for, and whatever another thread does under the lock that may
 *    end its wait wakes it (engine.c); the wake-up eventfd is read only by the
 *    last poller to leave poll(2), so a poller never misses a wake-up another
 *    one consumed. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <linux/futex.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "../host/contexts.h"
#include "engine.h"
#include "pmi.h"

cr_job cr_the_job;
_Atomic int cr_job_ready;
static pthread_once_t job_once = PTHREAD_ONCE_INIT;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The clock every interface's timer reads (dclock, mclock, MPI_Wtime): one
 * place for the simulated mode to give virtual time instead. Waiting keeps
 * now_ns: it measures real time spent off the CPU.
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
        uint64_t t1 = tsc_now(), n = now_ns(), t2 = tsc_now();
        if (t2 >= t1 && t2 - t1 < best) {
            best = t2 - t1;
            *ns = n;
            *tick = t1 + (t2 - t1) / 2;
        }
    }
    if (best == UINT64_MAX) { /* the counter went back each time */
        *ns = now_ns();
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
    if (__builtin_expect(cr_the_job.vt.base != NULL, 0))
        return (uint64_t)cr_vt_timer(&cr_the_job.vt) / 1000u;
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
    if (ph < CLK_ORIGIN || ph == CLK_PLAIN) return now_ns();
    if (ph == CLK_ORIGIN) { /* no line before 0.1 ms: clock_gettime alone, no counter read */
        ns = now_ns();
        if (ns - k->ns0 < clk_fit_ns[0]) return ns;
    }
    int n = ph < CLK_LINE ? -1 : (ph - CLK_LINE) >> 1; /* the line in use */
    bool making = ph == CLK_FIRST_FIT || (ph >= CLK_LINE && (ph & 1));
    ns = now_ns();
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

/* ---- errors -------------------------------------------------------------- */

_Noreturn void cr_fatal(cr_job *job, const char *call, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (job && job->on_fatal) job->on_fatal(job, msg);
    fflush(stdout);
    fprintf(stderr, "courier: rank %d: %s: %s\n", job ? job->rank : -1, call, msg);
    fflush(stderr);
    _exit(1);
}

_Noreturn void cr_die_errno(const char *what)
{
    cr_fatal(cr_the_job.size ? &cr_the_job : NULL, what, "%s", strerror(errno));
}

/* ---- start-up ------------------------------------------------------------ */

static long env_long(const char *name, long dflt, long lo, long hi)
{
    const char *v = getenv(name);
    if (!v || !*v) return dflt;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || *end || x < lo || x > hi) {
        fprintf(stderr, "courier: %s=%s is not a number in %ld..%ld; fix the environment\n", name,
                v, lo, hi);
        _exit(1);
    }
    return x;
}

static int online_cpus(void)
{
    long job_cpus = env_long("COURIER_CPUS", 0, 0, CPU_SETSIZE); /* the launcher's, if any */
    if (job_cpus > 0) return (int)job_cpus;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* ---- transports ---------------------------------------------------------- */

/* This host's ranks per CPU, rounded up. */
static int crowding(const cr_job *job, int cpus)
{
    int here = 0;
    for (int p = 0; p < job->size; p++) here += job->host_of[p] == job->host_of[job->rank];
    return here > cpus ? (here + cpus - 1) / cpus : 1;
}

/* The host segment the launcher made for this host's ranks (none in a job of
 * one rank started without courier run, nor under srun: PMI-2, pmi.c). */
static void attach_host(cr_job *job)
{
    job->wake_fd = -1;
    job->stats = &job->own_stats;
    if (job->pmi) return;
    int fd = (int)env_long("COURIER_SHM_FD", -1, 0, INT_MAX);
    if (job->size == 1) { /* no peer to share it with: only its descriptor to drop */
        if (fd >= 0) cr_ctx_close_fd(fd);
        return;
    }
    if (fd < 0)
        cr_fatal(job, "init",
                 "COURIER_SIZE is set but COURIER_SHM_FD is not; start the program with "
                 "courier run");
    int rc = cr_host_attach(&job->host, fd, job->rank, job->size);
    if (rc)
        cr_fatal(job, "init", "cannot attach the job's shared segment (fd %d): %s", fd,
                 strerror(-rc));
    job->stats = &job->host.status[job->rank].stats;
    /* Which host each rank is on: across hosts the agents say how many ranks
     * each host runs, in order (COURIER_HOST_LAYOUT=4,4); tests split one host
     * into COURIER_TEST_HOSTS pretend hosts (consecutive ranks), whose ranks
     * reach each other only by network. */
    const char *layout = getenv("COURIER_HOST_LAYOUT");
    if (layout && *layout) {
        int p = 0, h = 0;
        for (const char *c = layout; *c; h++) {
            char *end;
            long n = strtol(c, &end, 10);
            if (end == c || n < 1 || n > job->size - p || (*end && *end != ',')) break;
            for (long k = 0; k < n; k++) job->host_of[p++] = h;
            c = *end ? end + 1 : end;
        }
        if (p != job->size)
            cr_fatal(job, "init",
                     "COURIER_HOST_LAYOUT=%s does not add up to the job's %d ranks; start the "
                     "program with courier run",
                     layout, job->size);
        return;
    }
    long hosts = env_long("COURIER_TEST_HOSTS", 1, 1, job->size);
    for (int p = 0; p < job->size; p++) job->host_of[p] = (int)((long)p * hosts / job->size);
}

/* The job's secret, which proves a connection belongs to the job (tcp): the
 * launcher hands it in a sealed memfd, read once and closed, so it is in no
 * file, argument or environment. */
static void read_secret(cr_job *job)
{
    if (job->pmi) { /* under srun: through the PMI KVS (pmi.c) */
        cr_pmi_secret(job);
        return;
    }
    int fd = (int)env_long("COURIER_SECRET_FD", -1, 0, INT_MAX);
    if (fd < 0) return;
    ssize_t n = pread(fd, job->secret, sizeof job->secret, 0);
    cr_ctx_close_fd(fd);
    if (n != (ssize_t)sizeof job->secret)
        cr_fatal(job, "init",
                 "cannot read the job's secret (fd %d); start the program with "
                 "courier run",
                 fd);
    job->has_secret = true;
}

/* courier run --sim: the simulated mode's segment (src/host/vtime.h),
 * inherited as fd (COURIER_SIM_FD; -1: not simulated). */
static void attach_vtime(cr_job *job, int fd)
{
    if (fd < 0) return;
    int rc = cr_vt_attach(&job->vt, fd, job->rank, job->size);
    if (rc == -EPROTO)
        cr_fatal(job, "init",
                 "the simulator's segment comes from a courier run of another build; run the "
                 "program with the courier of the libcourier it loads");
    if (rc)
        cr_fatal(job, "init", "cannot attach the simulator's segment (fd %d): %s", fd,
                 strerror(-rc));
    /* Each rank is a node of the modelled machine, with memory of its own: no
     * window or region is mapped between ranks, so every one-sided operation
     * goes through the target's service as messages the model times, and
     * MPI_COMM_TYPE_SHARED gives each rank alone (docs/sim.md). */
    for (int p = 0; p < job->size; p++) job->host_of[p] = p;
}

static int tp_deliver(void *owner, int src, const cr_hdr *h, const void *payload, size_t len)
{
    return cr_engine_deliver(owner, src, h, payload, len);
}

__attribute__((noreturn)) static void tp_fatal(void *owner, const char *call, const char *msg)
{
    cr_fatal(owner, call, "%s", msg);
}

static void tp_warn(void *owner, const char *msg)
{
    fprintf(stderr, "courier: rank %d: %s\n", ((cr_job *)owner)->rank, msg);
}

static int tp_card_put(void *owner, const void *card, size_t len)
{
    cr_job *job = owner;
    if (job->pmi) return cr_pmi_card_put(job, card, len);
    return job->host.base ? cr_host_card_put(&job->host, card, len) : -ENODEV;
}

static int tp_card_get(void *owner, int peer, void *card, size_t *len)
{
    cr_job *job = owner;
    if (job->pmi) return cr_pmi_card_get(job, peer, card, len);
    if (!job->host.base) return -ENODEV;
    int rc = cr_host_card_get(&job->host, peer, card, len);
    if (rc == -EAGAIN && cr_host_gone(&job->host, peer)) return -ECONNREFUSED;
    return rc;
}

/* The registry, in order of preference: the first transport that reaches a
 * peer owns it. COURIER_TRANSPORTS (e.g. "tcp", "shm,tcp") picks from it; self
 * always serves the rank itself. */
static const cr_transport *const registry[] = {
    &cr_transport_self, &cr_transport_sim, &cr_transport_shm, &cr_transport_tcp, &cr_transport_ucx};
#define NREGISTRY (int)(sizeof registry / sizeof registry[0])

static bool wanted(cr_job *job, const cr_transport *t, const char *list)
{
    /* sim opens only in the simulated mode, and then it must serve */
    if (t == &cr_transport_self || t == &cr_transport_sim || !list || !*list) return true;
    size_t n = strlen(t->name);
    for (const char *p = list; *p;) {
        size_t k = strcspn(p, ",");
        if (k == n && strncmp(p, t->name, n) == 0) return true;
        p += k + (p[k] == ',');
    }
    (void)job;
    return false;
}

static void check_transport_list(cr_job *job, const char *list)
{
    for (const char *p = list; p && *p;) {
        size_t k = strcspn(p, ",");
        bool known = false;
        for (int i = 0; i < NREGISTRY; i++)
            known |= strlen(registry[i]->name) == k && strncmp(p, registry[i]->name, k) == 0;
        if (!known)
            cr_fatal(
                job, "init",
                "COURIER_TRANSPORTS=%s names '%.*s', which is not a transport (self, shm, tcp, "
                "ucx); "
                "fix the environment",
                list, (int)k, p);
        p += k + (p[k] == ',');
    }
}

static void open_transports(cr_job *job, int cpus)
{
    const char *list = getenv("COURIER_TRANSPORTS");
    check_transport_list(job, list);
    bool no_cma = env_long("COURIER_NO_CMA", 0, 0, 1) != 0;
    cr_tp_env env = {.rank = job->rank,
                     .size = job->size,
                     .owner = job,
                     .deliver = tp_deliver,
                     .fatal = tp_fatal,
                     .warn = tp_warn,
                     .recv_gen = &job->recv_gen,
                     .host = job->host.base ? &job->host : NULL,
                     .host_of = job->host_of,
                     .secret = job->has_secret ? job->secret : NULL,
                     .net = getenv("COURIER_NET"),
                     .crowding = crowding(job, cpus),
                     .card_put = tp_card_put,
                     .card_get = tp_card_get,
                     .vt = job->vt.base ? &job->vt : NULL,
                     .onesided_ctx = CR_CTX_RMA};
    int left = job->size, nfd = 0;
    for (int i = 0; i < NREGISTRY && left; i++) {
        const cr_transport *t = registry[i];
        if (!wanted(job, t, list)) continue;
        cr_link *l = &job->links[job->nlinks];
        int rc = t->open(&l->ctx, &env);
        if (rc == -ENODEV) continue;
        if (rc) cr_fatal(job, "init", "cannot open the %s transport: %s", t->name, strerror(-rc));
        l->ops = t;
        int owned = 0;
        for (int p = 0; p < job->size; p++) {
            if (job->via[p] || !t->reaches(l->ctx, p)) continue;
            job->via[p] = l;
            job->single_copy[p] = (t->caps & CR_CAP_GET) && (p == job->rank || !no_cma);
            t->own(l->ctx, p);
            owned++;
        }
        if (!owned) {
            t->close(l->ctx);
            continue;
        }
        left -= owned;
        job->nlinks++;
        if (t->caps & CR_CAP_BELL) job->use_bell = true;
        if (t->caps & CR_CAP_FD) nfd++;
        if ((t->caps & CR_CAP_PEEK) && !job->peek_link) job->peek_link = l;
    }
    for (int p = 0; p < job->size; p++)
        if (!job->via[p])
            cr_fatal(job, "init",
                     "no transport reaches rank %d (COURIER_TRANSPORTS=%s); allow "
                     "shm or tcp",
                     p, list ? list : "");
    job->coll_area_ok = job->host.base != NULL;
    for (int p = 0; p < job->size; p++)
        if (job->via[p]->ops != &cr_transport_shm && p != job->rank) job->coll_area_ok = false;
    /* The waiting point polls the transports' descriptors and an eventfd that
     * wakes this rank's own threads, unless the host doorbell alone will do. */
    if (!job->use_bell || nfd) {
        job->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (job->wake_fd < 0) cr_die_errno("init: eventfd");
        job->pfds = calloc((size_t)nfd + 1, sizeof *job->pfds);
        if (!job->pfds) cr_fatal(job, "init", "out of memory");
        job->pfds[job->npfds++] = (struct pollfd){.fd = job->wake_fd, .events = POLLIN};
        for (int i = 0; i < job->nlinks; i++)
            if (job->links[i].ops->caps & CR_CAP_FD)
                job->pfds[job->npfds++] = (struct pollfd){
                    .fd = job->links[i].ops->fd(job->links[i].ctx), .events = POLLIN};
        /* shm peers, too: their rings reach poll(2) through the eventfd */
        if (job->use_bell) cr_host_sleep_on_fd(&job->host, job->wake_fd);
    }
}

void cr_tp_flush(cr_job *job)
{
    for (int i = 0; i < job->nlinks; i++) job->links[i].ops->flush(job->links[i].ctx);
}

void cr_wake_self(cr_job *job)
{
    if (job->host.base) cr_host_ring(&job->host, job->rank);
    if (job->wake_fd >= 0) eventfd_write(job->wake_fd, 1);
    /* the progress thread's nap: the word changes first, so a nap about to
     * begin does not begin (FUTEX_WAIT sees another value) */
    atomic_fetch_add(&job->nap_word, 1);
    if (atomic_load(&job->napping))
        syscall(SYS_futex, (uint32_t *)&job->nap_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* The one waiting point: sleep until a peer rings our doorbell, a transport's
 * descriptor has work, our own threads wake us, or timeout_ms passes. Called
 * with the engine lock held, which is released while asleep. ready(arg), when
 * given, is looked at once more after the sleep is announced, as is every
 * transport (arm), so that no wake-up is lost. With doorbell and descriptors
 * both (shm and tcp peers), the rank sleeps in poll(2) and its shm peers' rings
 * write its eventfd (src/host); where the kernel does not let them
 * (pidfd_getfd), the sleep is cut into 1 ms naps. A waiter w (a thread in
 * cr_idle; NULL: the progress thread) says meanwhile what it waits for
 * (engine.h: job->sleepers), so that another thread that ends its wait wakes
 * it. */
static void sleep_as(cr_job *job, cr_wait *w, int d)
{
    job->sleepers += (unsigned)d;
    if (w->until)
        w->until->sleeper = d > 0;
    else if (w->sel && !w->req)
        job->sleep_msg += (unsigned)d;
    else
        job->sleep_any += (unsigned)d;
}

static void wait_point(cr_job *job, int timeout_ms, bool (*ready)(void *), void *arg, cr_wait *w)
{
    uint32_t bell = job->use_bell ? cr_host_announce(&job->host) : 0;
    int nfds = job->npfds;
    if (w) sleep_as(job, w, 1);
    job->pollers += nfds != 0;
    bool busy = ready && ready(arg), woken = false;
    for (int i = 0; i < job->nlinks && !busy; i++) busy = job->links[i].ops->arm(job->links[i].ctx);
    if (!busy) {
        /* Each waiting thread (the callers, the progress thread) polls its own
         * copy: poll(2) writes revents. */
        struct pollfd fds[1 + sizeof job->links / sizeof job->links[0]];
        if (nfds) memcpy(fds, job->pfds, (size_t)nfds * sizeof *fds);
        cr_unlock(job);
        if (!nfds)
            cr_host_wait(&job->host, bell, timeout_ms * 1000L);
        else
            woken =
                poll(fds, (nfds_t)nfds,
                     job->use_bell && cr_host_fd_unreachable(&job->host) ? 1 : timeout_ms) > 0 &&
                (fds[0].revents & POLLIN);
        cr_lock(job);
    }
    if (w) sleep_as(job, w, -1);
    if (nfds) {
        /* The eventfd stays set until no other thread is between its
         * announcement and the end of its poll: each of them sees it. */
        job->wake_seen |= woken;
        if (!--job->pollers && job->wake_seen) {
            eventfd_t v;
            eventfd_read(job->wake_fd, &v);
            job->wake_seen = false;
        }
    }
    if (job->use_bell) cr_host_unannounce(&job->host);
}

static void job_exit(void)
{
    cr_job_finalize(&cr_the_job);
}

static void job_init(void)
{
    cr_job *job = &cr_the_job;
    cr_clock_ns();            /* the clock's origin (its rate is known 0.1 ms later) */
    if (!cr_pmi_start(job)) { /* not under srun --mpi=pmi2: courier run, or alone */
        job->size = (int)env_long("COURIER_SIZE", 1, 1, 1 << 20);
        job->rank = (int)env_long("COURIER_RANK", 0, 0, job->size - 1);
        job->appnum = (int)env_long("COURIER_APPNUM", 0, 0, INT_MAX);
    }
    int sim_fd = (int)env_long("COURIER_SIM_FD", -1, 0, INT_MAX);
    cr_trace_open(job, sim_fd >= 0); /* first: the trace's run starts with the job */
    job->host_rank = (int)env_long("COURIER_HOST_RANK", 0, 0, job->size - 1);
    job->unexp_limit = (size_t)env_long("COURIER_UNEXPECTED_LIMIT", 64L << 20, 0, LONG_MAX);
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
    /* recursive: a user callback run under the lock (an MPI reduction
     * operation, on the progress thread too) may call the interface again */
    pthread_mutex_init(&job->lock, &ma);
    pthread_mutex_init(&job->trap_lock, &ma);
    pthread_mutexattr_destroy(&ma);
    job->posted_tail = &job->posted;
    job->unexp_tail = &job->unexp;
    job->handlers_due_tail = &job->handlers_due;

    size_t n = (size_t)job->size;
    job->via = calloc(n, sizeof *job->via);
    job->single_copy = calloc(n, sizeof *job->single_copy);
    job->host_of = calloc(n, sizeof *job->host_of);
    job->eager = calloc(n, sizeof *job->eager);
    job->backlog = calloc(2 * n, sizeof *job->backlog);
    job->ctrlq = calloc(n, sizeof *job->ctrlq);
    job->owed = calloc(n, sizeof *job->owed);
    cr_idt_init(&job->reqs, sizeof(cr_req), 0);
    if (!job->via || !job->single_copy || !job->host_of || !job->eager || !job->backlog ||
        !job->ctrlq || !job->owed)
        cr_fatal(job, "init", "out of memory for %d peers", job->size);

    attach_host(job);
    attach_vtime(job, sim_fd);
    read_secret(job);
    int cpus = online_cpus();
    open_transports(job, cpus);
    if (job->pmi) cr_pmi_fence(job); /* every rank's card (tcp's open) and the secret are in */
    /* Simulated: every message is one message of the model, whose node
     * software has protocols of its own (NX/2's three trips) */
    long eager = job->vt.base ? LONG_MAX : env_long("COURIER_EAGER_LIMIT", 16384, 0, INT_MAX);
    for (int p = 0; p < job->size; p++) {
        size_t max = job->via[p]->ops->max_payload(job->via[p]->ctx, p);
        job->eager[p] = p == job->rank ? SIZE_MAX : (size_t)eager < max ? (size_t)eager : max;
    }

    /* Oversubscribed: a spinning rank only steals the core from the one it waits for.
     * With network peers a poll is a system call (~1 us, not ~25 ns): 100 polls
     * spin about as long as 4000 over shared memory. At 4000, a TCP echo beside
     * two CPU-bound processes took 35-38 us one way, at 100 17-18 us; unloaded
     * the same. */
    job->oversub = job->size > cpus && !job->vt.base; /* simulated: the model's nodes */
    bool net = job->npfds > 1; /* a transport's descriptor beside the wake-up eventfd */
    job->spin_limit = (unsigned)env_long("COURIER_SPIN",
                                         job->oversub ? 2
                                         : net        ? 100
                                                      : 4000,
                                         1, INT_MAX);
    job->spin_floor = (unsigned)env_long("COURIER_SPIN_MIN", 16, 1, INT_MAX);
    if (job->spin_floor > job->spin_limit) job->spin_floor = job->spin_limit;
    job->spin_now = job->spin_limit;
    job->yield_ns =
        (uint64_t)env_long("COURIER_YIELD_US", job->oversub ? 2000 : 1000, 0, INT_MAX) * 1000u;

    /* Let peers read our buffers with process_vm_readv (Yama's ptrace_scope 1). */
#ifdef PR_SET_PTRACER
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
#endif
    if (getenv("COURIER_LAUNCHED")) setvbuf(stdout, NULL, _IOLBF, 0);
    cr_ctx_atexit(job_exit);                /* a context's: when its rank ends */
    if (job->vt.base) cr_vt_mark(&job->vt); /* the library's start is not the program's compute */
}

cr_job *cr_job_init(void)
{
    pthread_once(&job_once, job_init);
    atomic_store_explicit(&cr_job_ready, 1, memory_order_release);
    return &cr_the_job;
}

/* ---- waiting ------------------------------------------------------------- */

/* How an idle spell (idle rounds with no progress between) ended, for the next
 * one's spin. The length of a yield says who else wants this core: the system
 * call alone takes 0.4 us here, a switch to another process and back at least
 * 2.8 us, and a process that computes keeps the core for a time slice (0.75 ms
 * and more under EEVDF and CFS). */
enum { SPELL_SPUN, SPELL_YIELDED, SPELL_CEDED, SPELL_PREEMPTED, SPELL_SLEPT };
#define YIELD_RAN_NS 3000u        /* longer: another process ran on this core */
#define YIELD_SLICE_NS 200000u    /* longer: one that computes, not one that waits */
#define SHORT_SLICE_NS 100000u    /* the shortest slice Linux grants */
#define CEDED_TO_MOVE 16u         /* spells in a row that only a hand-over ended */
#define SLICE_KEEP_NS 1000000000u /* short slices this long after a yield lost one */
#define OVERSUB_PREEMPTS 4u       /* ranks outnumber cores: slices lost to shorten */

/* Adapt the spin to what the last spell showed. When what we waited for came
 * after this core went briefly to another process, a process that waits as we
 * do (most likely the rank we wait for, sharing our core: the scheduler put two
 * ranks on one CPU, or others' load did), spinning could not have brought it
 * and every idle round delayed it: halve the spin, down to the floor, which
 * still covers a reply from a peer that runs on another core. When yields
 * returned at once (the core is ours alone), or a computing process took the
 * core for a slice (every yield hands it a slice; spinning keeps the core until
 * the scheduler takes it), spinning longer is the better bet: double it, up to
 * COURIER_SPIN. Spells that slept (a peer computing) and spells that ended while
 * spinning say nothing. Measured in docs/engine.md. */
static void move_off_cpu(cr_job *job);

static void spell_learn(cr_job *job)
{
    if (job->spell_end == SPELL_CEDED) {
        job->spin_now = job->spin_now / 2 > job->spin_floor ? job->spin_now / 2 : job->spin_floor;
        /* staggered by rank, so two ranks on one CPU do not both move at once */
        if (++job->ceded_run >= CEDED_TO_MOVE + 4 * (unsigned)(job->rank & 7)) move_off_cpu(job);
    } else {
        job->ceded_run = 0;
        if (job->spell_end == SPELL_YIELDED || job->spell_end == SPELL_PREEMPTED)
            job->spin_now =
                job->spin_now < job->spin_limit / 2 ? job->spin_now * 2 : job->spin_limit;
    }
    job->spell_end = SPELL_SPUN;
}

/* Spell after spell, what we wait for comes only once we hand our CPU over: the
 * rank we wait for runs on this CPU, although the job has a CPU for each rank
 * (the scheduler put them together: with other load on the machine, two ranks
 * on one CPU and the load on the other look as balanced to it as one of each).
 * Every message then costs two context switches (2.4 us here, against 0.1-0.6
 * us with a CPU each). Step off this CPU: leave it out of our affinity for a
 * moment, which moves us to another one at once, then allow every CPU again
 * (the scheduler leaves us where we are). Not when the ranks outnumber the
 * CPUs, when the user or --bind pinned us, or more often than every 50 ms. */
static void move_off_cpu(cr_job *job)
{
    job->ceded_run = 0;
    uint64_t now = now_ns();
    if (job->oversub || now - job->moved_at < 50000000u) return;
    job->moved_at = now;
    cpu_set_t all, others;
    int cpu = sched_getcpu();
    if (cpu < 0 || sched_getaffinity(0, sizeof all, &all) || CPU_COUNT(&all) < 2 ||
        !CPU_ISSET(cpu, &all))
        return;
    others = all;
    CPU_CLR(cpu, &others);
    if (sched_setaffinity(0, sizeof others, &others) == 0) sched_setaffinity(0, sizeof all, &all);
}

/* A computing process took this core for a slice when we yielded: the machine
 * is shared. Ask the scheduler for short slices (EEVDF, Linux 6.12+): a rank
 * woken by its peer's message then preempts the computing process at once,
 * instead of after the rest of its slice. Without it two ranks, each sharing its
 * core with a computing process, can fall into step the wrong way round — each
 * runs while the other waits for its turn — and every message costs a slice
 * (2-3 ms; 2 runs of 15 of the ping-pong took over 10x their time). With more
 * ranks than cores it matters most: a yield hands the core to the computing
 * process for a whole slice (1 yield in 30 waited 1-4 ms here), while with a
 * short slice a yield only moves our deadline that much and we run again at
 * once (none of 20,000 waited over 200 us): 4 ranks on 2 cores beside 4
 * CPU-bound processes, osu_bcast 8 B 1900-2300 -> 152-186 us, osu_allreduce
 * 2500-2900 -> 177-189 (Open MPI 117-610 and 11,500-15,200). Ranks among
 * themselves hand the core over worse with short slices (that 4-rank allreduce
 * with no other work: 1.6 -> 3.5 us when a rank's own start-up, one lost slice,
 * was taken for other work), so with more ranks than cores it takes
 * OVERSUB_PREEMPTS lost slices within SLICE_KEEP_NS, and the request is taken
 * back (shortened false) once no yield has lost a slice for SLICE_KEEP_NS.
 * Older kernels take the requests and ignore them. */
static void set_slice(cr_job *job, bool shortened)
{
    job->short_slice = shortened;
    struct {
        uint32_t size, policy;
        uint64_t flags;
        int32_t nice;
        uint32_t priority;
        uint64_t runtime, deadline, period;
    } attr = {.size = sizeof attr,
              .policy = SCHED_OTHER,
              .runtime = shortened ? SHORT_SLICE_NS : 0}; /* 0: the default slice */
    if (sched_getscheduler(0) != SCHED_OTHER) return;     /* the user chose; keep it */
    attr.nice = getpriority(PRIO_PROCESS, 0);
    syscall(SYS_sched_setattr, 0, &attr, 0);
}

/* Simulated: nothing to spin for (time stands still while the rank waits).
 * Make the arrivals before the clock visible when that needs no word with the
 * simulator; if none of them moves the wait, block until the next arrival
 * (which also makes the rest before the clock visible, in one exchange). */
static void sim_idle(cr_job *job, cr_wait *w, bool (*ready)(void *), void *arg)
{
    cr_vt_try_sync(&job->vt);
    if (cr_progress_poll(job) || (ready && ready(arg))) return;
    if (job->handlers_due && cr_sim_handlers(job)) return; /* they may have ended the wait */
    if (!w->spell_reported) {
        cr_wait_report(job, w, true);
        w->spell_reported = true;
    }
    cr_unlock(job);
    cr_vt_block(&job->vt);
    cr_lock(job);
}

void cr_idle(cr_job *job, cr_wait *w, bool (*ready)(void *), void *arg)
{
    if (__builtin_expect(job->vt.base != NULL, 0)) {
        sim_idle(job, w, ready, arg);
        return;
    }
    unsigned s = ++w->spins;
    if (s == 1) {
        spell_learn(job);
        w->idle_since = 0; /* spinning */
    }
    if (!w->idle_since && s < job->spin_now) {
        cr_unlock(job);
        cr_cpu_relax();
        cr_lock(job);
        return;
    }
    uint64_t now = now_ns();
    if (!w->idle_since) { /* the spin is over (when multi, another thread may move spin_now) */
        w->idle_since = now;
        cr_tp_flush(job);          /* a sender may be waiting for our credits */
        cr_engine_buffer_rts(job); /* ... or for us to take its long message */
        w->spell_reported = false;
        job->spell_end = SPELL_YIELDED;
        if (job->short_slice && now - job->preempted_at > SLICE_KEEP_NS) set_slice(job, false);
    }
    if (now - w->idle_since < job->yield_ns) {
        cr_unlock(job);
        sched_yield();
        cr_lock(job);
        uint64_t took = now_ns() - now;
        if (took > YIELD_SLICE_NS) {
            job->spell_end = SPELL_PREEMPTED;
            job->preempts = now - job->preempted_at < SLICE_KEEP_NS ? job->preempts + 1 : 1;
            job->preempted_at = now;
            /* With more ranks than cores the computing process may be one of
             * ours (starting up, or between its calls): not one lost slice
             * but several in a second say the machine has other work. */
            if (!job->short_slice && (!job->oversub || job->preempts >= OVERSUB_PREEMPTS))
                set_slice(job, true);
        } else if (took > YIELD_RAN_NS && job->spell_end != SPELL_PREEMPTED)
            job->spell_end = SPELL_CEDED;
        return;
    }
    job->spell_end = SPELL_SLEPT;
    cr_tp_flush(job);
    /* The watchdog sees each blocked spell that sleeps, and a collective's
     * first missing member again when the one it named has come. */
    if (!w->spell_reported || (w->peer && *w->peer != w->peer_shown)) {
        cr_wait_report(job, w, true);
        w->spell_reported = true;
    } else if (job->multi) {
        cr_board_check(job); /* threads may have come or gone since */
    }
    wait_point(job, 100, ready, arg, w);
}

/* ---- handlers and the progress thread ------------------------------------ */

static void run_handlers(cr_job *job)
{
    pthread_mutex_lock(&job->trap_lock);
    while (!job->trap_masked) {
        pthread_mutex_lock(&job->lock);
        cr_req *r = job->handlers_due;
        if (r) {
            job->handlers_due = r->next;
            if (!job->handlers_due) job->handlers_due_tail = &job->handlers_due;
        }
        cr_status st = r ? r->st : (cr_status){0};
        cr_handler_fn fn = r ? r->handler : NULL;
        void (*user)(void) = r ? r->user_fn : NULL;
        if (r) cr_req_release(job, r);
        pthread_mutex_unlock(&job->lock);
        if (!r) break;
        if (job->host.base) cr_host_report_busy(&job->host, 1); /* computing is no hang */
        fn(job, user, &st);
        if (job->host.base) cr_host_report_busy(&job->host, 0);
    }
    pthread_mutex_unlock(&job->trap_lock);
}

/* How long the progress thread naps while a program thread waits, before it
 * looks again; its naps with nothing pending start there and double up to
 * PROGRESS_NAP_MAX_US. */
#define STEP_ASIDE_US 200
#define PROGRESS_NAP_MAX_US 100000

static void *progress_main(void *arg)
{
    cr_job *job = arg;
    while (!atomic_load(&job->stopping)) {
        pthread_mutex_lock(&job->lock);
        job->progress_long = false; /* awake */
        if (!job->handlers_due && !atomic_load(&job->stopping) &&
            (job->waiting || (!job->handlers_on && !job->bg_pending))) {
            /* A program thread waits in a call and moves the engine itself
             * (polling beside it would only take the lock and a core from it:
             * an 8-byte MPI_Iallreduce + MPI_Wait took 4x as long, and a
             * blocking MPI_Allreduce after it 3x), or there is nothing to move.
             * Nap on a word of this process's own, so that no sender rings
             * this thread: cr_wake_self (a handler due, masktrap(0), the end,
             * cr_bg_kick) still ends the nap. Beside a waiter the nap is
             * short: a program that goes back to computing with collectives
             * under way has them moved on within STEP_ASIDE_US. What ends a
             * nap is changed under the lock, as here: a waker came before (we
             * saw it) or sees napping set and finds a word that moved on. */
            long us = STEP_ASIDE_US;
            if (!job->waiting) {
                us = job->progress_nap;
                job->progress_nap = us * 2 > PROGRESS_NAP_MAX_US ? PROGRESS_NAP_MAX_US : us * 2;
            }
            job->progress_long = us > STEP_ASIDE_US;
            atomic_store(&job->napping, 1);
            uint32_t word = atomic_load(&job->nap_word);
            pthread_mutex_unlock(&job->lock);
            struct timespec ts = {us / 1000000, (us % 1000000) * 1000L};
            syscall(SYS_futex, (uint32_t *)&job->nap_word, FUTEX_WAIT_PRIVATE, word, &ts, NULL, 0);
            atomic_store(&job->napping, 0);
            continue;
        }
        job->progress_nap = STEP_ASIDE_US;
        int n = cr_progress(job);
        /* Sleep unless a handler can run now (masked handlers wait for masktrap(0),
         * which wakes us). */
        if (!n && (!job->handlers_due || atomic_load(&job->trap_masked)) &&
            !atomic_load(&job->stopping)) {
            cr_tp_flush(job);
            cr_engine_buffer_rts(job);
            wait_point(job, 100, NULL, NULL, NULL);
        }
        pthread_mutex_unlock(&job->lock);
        run_handlers(job);
    }
    return NULL;
}

void cr_bg_kick(cr_job *job)
{
    if (job->progress_long) {
        job->progress_long = false;
        cr_wake_self(job);
    }
}

/* Called without the engine lock by the first handler receive or background
 * work (or with it held once, when multi: then another thread may be starting
 * it too). */
static void progress_start(cr_job *job, bool handlers)
{
    if (job->vt.base) {
        /* Simulated: no thread moves the engine behind the program's back (its
         * timing would depend on the host); background work moves in waits
         * and tests, which is when the modelled node's library ran it, and
         * handlers run there too (cr_sim_handlers). */
        if (handlers) job->handlers_on = true;
        return;
    }
    bool locked = job->threaded;
    if (locked) pthread_mutex_lock(&job->lock);
    if (handlers) {
        job->handlers_on = true;
        cr_bg_kick(job); /* out of a long nap: from now on it answers at once */
    }
    if (!job->progress_on) {
        job->progress_on = true;
        job->progress_nap = STEP_ASIDE_US;
        if (!job->threaded) job->threaded = true;
        if (pthread_create(&job->progress_thread, NULL, progress_main, job))
            cr_fatal(job, handlers ? "hrecv" : "progress", "cannot start the progress thread: %s",
                     strerror(errno));
    }
    if (locked) pthread_mutex_unlock(&job->lock);
}

/* The node ran a handler when its message came in (an interrupt); a simulated
 * rank runs it at its next wait or poll after the arrival, in its own thread and
 * on its own clock, which is where the handler's compute and messages belong. */
bool cr_sim_handlers(cr_job *job)
{
    if (job->sim_handling || !job->handlers_due || job->trap_masked) return false;
    job->sim_handling = true;
    run_handlers(job);
    job->sim_handling = false;
    return true;
}

void cr_handlers_start(cr_job *job)
{
    progress_start(job, true);
}

void cr_progress_start(cr_job *job)
{
    progress_start(job, false);
}

void cr_multi_begin(cr_job *job)
{
    if (job->multi) return;
    job->multi = true;
    if (!job->threaded) {
        job->threaded = true;
        pthread_mutex_lock(&job->lock); /* as the caller's cr_lock would have */
    }
}

int cr_handlers_mask(cr_job *job, int masked)
{
    pthread_mutex_lock(&job->trap_lock); /* waits for a running handler to return */
    int old = job->trap_masked;
    job->trap_masked = masked;
    pthread_mutex_unlock(&job->trap_lock);
    if (!masked && job->progress_on) cr_wake_self(job);
    if (!masked && job->vt.base) cr_sim_handlers(job); /* those held back run now */
    return old;
}

/* ---- exit ---------------------------------------------------------------- */

void cr_job_finalize(cr_job *job)
{
    if (!job->via) return;
    if (job->progress_on) {
        pthread_mutex_lock(&job->lock); /* the thread looks at it under the lock */
        atomic_store(&job->stopping, 1);
        pthread_mutex_unlock(&job->lock);
        cr_wake_self(job);
        if (!pthread_equal(pthread_self(), job->progress_thread))
            pthread_join(job->progress_thread, NULL);
        job->progress_on = false;
    }
    /* From here on only this thread should run the engine. With one program
     * thread, without the lock; with several (multi), the others should be done
     * with it (MPI_Finalize's rule), but one may not be (a thread called exit
     * while another waits): the lock is taken for the rest, so that such a
     * thread gets in only while the drain waits, as in any wait, and never once
     * the transports are closed. */
    if (job->multi)
        pthread_mutex_lock(&job->lock);
    else
        job->threaded = false;
    cr_engine_drain(job);
    for (int i = job->nlinks - 1; i >= 0; i--) job->links[i].ops->close(job->links[i].ctx);
    job->nlinks = 0;
    if (job->vt.base) cr_vt_done(&job->vt); /* its clock stays readable */
    cr_host_detach(&job->host);
    if (job->wake_fd >= 0) close(job->wake_fd);
    cr_trace_close(job);
}
