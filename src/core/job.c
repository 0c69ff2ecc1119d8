/* The job of this process: start-up from the launcher's environment (or PMI-2),
 * the transports it opens (from src/transport's registry), errors, and the
 * orderly exit. The clock is clock.c's, waiting wait.c's, the progress thread
 * progress.c's.
 *
 * Invariants:
 *  - the job is created once, on the first call of any interface (NX/2 programs
 *    call no init function), and finalized at exit after every send a live peer
 *    may still read has completed;
 *  - every peer is reached by exactly one transport (job->link_of, cr_via), the
 *    first of the registry's order that reaches it among those
 *    COURIER_TRANSPORTS allows;
 *  - all of this process's engine state is in cr_the_job, on the heap (one per
 *    process; in the contexts of the simulated mode, one per context: only the
 *    pointer to it, cr_the_job_ptr, is swapped with the context's data). */
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
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "../host/contexts.h"
#include "crash.h"
#include "engine.h"
#include "pmi.h"
#include "pmiwatch.h"

cr_job *cr_the_job_ptr;
_Atomic int cr_job_ready;
static pthread_once_t job_once = PTHREAD_ONCE_INIT;

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

_Noreturn void cr_abort_exit(cr_job *job, int code)
{
    int st = code & 0xff ? code & 0xff : code != 0;
    if (!st && job && job->host.base) cr_host_aborted(&job->host);
    _exit(st);
}

cr_job *cr_job_make(void)
{
    size_t align = _Alignof(cr_job), bytes = (sizeof(cr_job) + align - 1) / align * align;
    cr_job *j = aligned_alloc(align, bytes), *none = NULL;
    if (!j) {
        fprintf(stderr,
                "courier: out of memory for the job (%zu bytes); free memory or run "
                "fewer ranks on this host\n",
                bytes);
        _exit(1);
    }
    memset(j, 0, sizeof *j);
    /* two threads may get here before the job is made (the clock): one wins */
    if (!__atomic_compare_exchange_n(&cr_the_job_ptr, &none, j, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        free(j);
        return none;
    }
    return j;
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
 * one rank started without courier run); under srun or another PMI process
 * manager the ranks of each machine make their own (pmi.c). Returns how many of
 * the job's ranks run on this machine: the layout's count for this host across
 * hosts, else all of them (pretend hosts share a machine). */
static int attach_host(cr_job *job, int *cpus, bool *same)
{
    *same = !job->pmi; /* one launcher counted every rank's CPUs */
    job->wake_fd = -1;
    job->stats = &job->own_stats;
    if (job->pmi) { /* the ranks of each machine make their segment (pmi.c) */
        const char *list = getenv("COURIER_TRANSPORTS");
        if (job->size == 1 || !cr_tp_allowed(&cr_transport_shm, list)) return job->size;
        int here = cr_pmi_host(job, cpus, same);
        if (job->host.base) job->stats = &job->host.status[job->rank].stats;
        return here;
    }
    int fd = (int)env_long("COURIER_SHM_FD", -1, 0, INT_MAX);
    if (job->size == 1) { /* no peer to share it with: only its descriptor to drop */
        if (fd >= 0) cr_ctx_close_fd(fd);
        return 1;
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
        int here = 0;
        for (p = 0; p < job->size; p++) here += job->host_of[p] == job->host_of[job->rank];
        job->hosts_differ = job->host_of[job->size - 1] != 0;
        return here;
    }
    long hosts = env_long("COURIER_TEST_HOSTS", 1, 1, job->size);
    for (int p = 0; p < job->size; p++) job->host_of[p] = (int)((long)p * hosts / job->size);
    return job->size;
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

static void *tp_data_dest(void *owner, int src, const cr_hdr *h, size_t len)
{
    return cr_engine_data_dest(owner, src, h, len);
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

/* COURIER_TRANSPORTS names only transports of the registry. */
static void check_transport_list(cr_job *job, const char *list)
{
    size_t k;
    int at = cr_tp_unknown(list, &k);
    if (at >= 0)
        cr_fatal(job, "init",
                 "COURIER_TRANSPORTS=%s names '%.*s', which is not a transport (self, shm, tcp, "
                 "ucx); fix the environment",
                 list, (int)k, list + at);
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
                     .data_dest = tp_data_dest,
                     .fatal = tp_fatal,
                     .warn = tp_warn,
                     .recv_gen = &job->recv_gen,
                     .pollers = &job->pollers,
                     .host = job->host.base ? &job->host : NULL,
                     .host_of = job->host_of,
                     .secret = job->has_secret ? job->secret : NULL,
                     .net = getenv("COURIER_NET"),
                     .crowding = crowding(job, cpus),
                     .card_put = tp_card_put,
                     .card_get = tp_card_get,
                     .vt = job->vt.base ? &job->vt : NULL,
                     .onesided_ctx = CR_CTX_RMA,
                     .full_us = (unsigned)env_long("COURIER_TEST_SHM_FULL_US", 0, 0, 1000000)};
    int left = job->size, nfd = 0, nreg;
    uint8_t *owner = calloc((size_t)job->size, 1); /* for the loop below only */
    if (!owner) cr_fatal(job, "init", "out of memory for %d peers", job->size);
    /* Simulated: every message is one message of the model, whose node
     * software has protocols of its own (NX/2's three trips) */
    long eager = job->vt.base ? LONG_MAX : env_long("COURIER_EAGER_LIMIT", 16384, 0, INT_MAX);
    const cr_transport *const *registry = cr_tp_registry(&nreg);
    for (int i = 0; i < nreg && left; i++) {
        const cr_transport *t = registry[i];
        if (!cr_tp_allowed(t, list)) continue;
        cr_link *l = &job->links[job->nlinks];
        int rc = t->open(&l->ctx, &env);
        if (rc == -ENODEV) continue;
        if (rc) cr_fatal(job, "init", "cannot open the %s transport: %s", t->name, strerror(-rc));
        l->ops = t;
        size_t max = t->max_payload(l->ctx, 0); /* the same for every peer */
        l->eager = (size_t)eager < max ? (size_t)eager : max;
        int owned = 0;
        for (int p = 0; p < job->size; p++) {
            if (owner[p] || !t->reaches(l->ctx, p)) continue;
            owner[p] = 1;
            job->link_of[p] = (uint8_t)job->nlinks;
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
        if (!owner[p])
            cr_fatal(job, "init",
                     "no transport reaches rank %d (COURIER_TRANSPORTS=%s); allow "
                     "shm or tcp",
                     p, list ? list : "");
    free(owner);
    job->one_link = -1;
    for (int p = 0; p < job->size; p++) {
        if (p == job->rank) continue;
        if (job->one_link < 0) job->one_link = job->link_of[p];
        if (job->one_link != job->link_of[p]) {
            job->one_link = -1;
            break;
        }
    }
    job->coll_area_ok = job->host.base != NULL;
    for (int p = 0; p < job->size; p++)
        if (cr_via(job, p)->ops != &cr_transport_shm && p != job->rank) job->coll_area_ok = false;
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

/* Anonymous pages: zero, and resident only once written. A rank of a 16384-rank
 * simulated job writes the entries of the peers it talks to (a few dozen for
 * Bruck's all-to-all); from the heap, whose pages calloc may have to clear, the
 * 53 bytes per peer were 14 GiB in all. */
void *cr_peer_array(cr_job *job, void *old, size_t oldn, size_t n, size_t each)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), len = (n * each + page - 1) / page * page;
    void *a =
        mmap(NULL, len ? len : page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (a == MAP_FAILED) cr_fatal(job, "init", "out of memory for %zu peers", n);
    if (old) {
        size_t oldlen = (oldn * each + page - 1) / page * page;
        memcpy(a, old, oldn * each);
        munmap(old, oldlen ? oldlen : page);
    }
    return a;
}

void cr_tp_flush(cr_job *job)
{
    for (int i = 0; i < job->nlinks; i++) job->links[i].ops->flush(job->links[i].ctx);
}

/* At the exit of the rank's process; a child it forked that calls exit (a
 * helper process) is not the rank: it must not drain, close or mark the
 * rank's state in the host segment (its peers would take the rank for gone),
 * nor say that the rank ended. */
static void job_exit(void)
{
    if (getpid() != cr_the_job.pid) return;
    cr_job_finalize(&cr_the_job);
}

static void job_init(void)
{
    cr_job *job = &cr_the_job;
    job->pid = getpid();
    cr_clock_ns();            /* the clock's origin (its rate is known 0.1 ms later) */
    if (!cr_pmi_start(job)) { /* not under srun --mpi=pmi2: courier run, or alone */
        job->size = (int)env_long("COURIER_SIZE", 1, 1, 1 << 20);
        job->rank = (int)env_long("COURIER_RANK", 0, 0, job->size - 1);
        job->appnum = (int)env_long("COURIER_APPNUM", 0, 0, INT_MAX);
    }
    int sim_fd = (int)env_long("COURIER_SIM_FD", -1, 0, INT_MAX);
    cr_trace_open(job, sim_fd >= 0); /* first: the trace's run starts with the job */
    cr_crash_hook();
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

    job->npeers = job->size;
    size_t n = (size_t)job->size;
    job->link_of = cr_peer_array(job, NULL, 0, n, sizeof *job->link_of);
    job->one_link = -1; /* until open_transports knows */
    job->single_copy = cr_peer_array(job, NULL, 0, n, sizeof *job->single_copy);
    job->host_of = calloc(n, sizeof *job->host_of);
    job->backlog = cr_peer_array(job, NULL, 0, 2 * n, sizeof *job->backlog);
    job->ctrlq = cr_peer_array(job, NULL, 0, n, sizeof *job->ctrlq);
    job->owed = cr_peer_array(job, NULL, 0, n, sizeof *job->owed);
    job->sends_to = cr_peer_array(job, NULL, 0, n, sizeof *job->sends_to);
    cr_idt_init(&job->reqs, sizeof(cr_req), 0);
    if (!job->host_of) cr_fatal(job, "init", "out of memory for %d peers", job->size);

    int cpus = online_cpus();
    bool same;
    int here = attach_host(job, &cpus, &same);
    attach_vtime(job, sim_fd);
    read_secret(job);
    open_transports(job, cpus);
    if (job->pmi) cr_pmi_fence(job); /* every rank's card (tcp's open) and the secret are in */

    /* Oversubscribed: a spinning rank only steals the core from the one it waits for.
     * With network peers a poll is a system call (~1 us, not ~25 ns): 100 polls
     * spin about as long as 4000 over shared memory. At 4000, a TCP echo beside
     * two CPU-bound processes took 35-38 us one way, at 100 17-18 us; unloaded
     * the same. */
    job->oversub = here > cpus && !job->vt.base; /* simulated: the model's nodes */
    /* What a collective chooses by must be the same on every member: only on
     * one machine, where one launcher's COURIER_CPUS (or, under srun or mpirun,
     * the union of the ranks' masks: pmi.c) counted for every rank. Across
     * hosts, whose CPUs may differ, collectives never take the oversubscribed
     * forms (cr_group_oversub): a job on hosts of 16 and 1 CPUs hung in
     * MPI_Allreduce when each chose by its own count. */
    job->oversub_coll = job->oversub && same && !job->hosts_differ;
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
    job->nap_ms = (int)env_long("COURIER_NAP_MS", 100, 1, INT_MAX);

    /* Let peers read our buffers with process_vm_readv (Yama's ptrace_scope 1). */
#ifdef PR_SET_PTRACER
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
#endif
    if (getenv("COURIER_LAUNCHED")) setvbuf(stdout, NULL, _IOLBF, 0);
    cr_ctx_atexit(job_exit);                /* a context's: when its rank ends */
    cr_ctx_warm(job, sizeof *job);          /* a context's: cached before its turns */
    if (job->pmi) cr_pmiwatch_start(job);   /* no launcher: the ranks watch each other */
    if (job->vt.base) cr_vt_mark(&job->vt); /* the library's start is not the program's compute */
}

cr_job *cr_job_init(void)
{
    pthread_once(&job_once, job_init);
    atomic_store_explicit(&cr_job_ready, 1, memory_order_release);
    return &cr_the_job;
}

/* ---- exit ---------------------------------------------------------------- */

void cr_job_finalize(cr_job *job)
{
    if (!job->link_of) return;
    if (job->must_call) { /* an erroneous program: say so, and fail the job */
        fflush(stdout);
        fprintf(stderr,
                "courier: rank %d: the program ended without calling %s, which every process "
                "that started the interface must call; call %s before it returns or exits\n",
                job->rank, job->must_call, job->must_call);
        if (job->host.base) cr_host_unfinished(&job->host);
        job->must_call = NULL;
    }
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
    job->own_stats =
        *job->stats; /* readable after the segment is gone (MPI_T after MPI_Finalize) */
    job->stats = &job->own_stats;
    cr_host_detach(&job->host);
    if (job->wake_fd >= 0) close(job->wake_fd);
    cr_trace_close(job);
}
