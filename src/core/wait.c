/* Waiting, in one place: the waiting point where a thread sleeps and what
 * wakes it, the idle policy (spin, yield, sleep), the waiting loops every
 * blocking call of the engine and the interfaces goes through (cr_req_wait,
 * cr_wait_until), and the watchdog's view of a rank's waits (its board).
 * engine.c and this file are one concern in two files: the engine's blocking
 * calls wait here, and a wait moves the engine (cr_progress_poll).
 *
 * Invariants:
 *  - a waiting thread spins only briefly (almost not at all when there are more
 *    ranks than cores), then yields (not when ranks outnumber cores on a
 *    machine with other work), then sleeps on its futex doorbell: a rank
 *    that waits for long keeps no core busy; the spin adapts between
 *    spin_floor and spin_limit to what the last idle spell showed (cr_idle);
 *  - with several program threads (cr_multi_begin: MPI_THREAD_MULTIPLE) each
 *    thread that waits makes progress itself: the lock is dropped only while a
 *    wait spins, yields or sleeps, so another thread may enter meanwhile;
 *  - no wake-up is lost, whichever thread sleeps: a sleeper announces itself
 *    (the host doorbell's sleepers; job->sleepers and what it waits for:
 *    engine.h; job->pollers) under the lock before it looks once more at what
 *    it waits for, and whatever another thread does under the lock that may
 *    end its wait wakes it (engine.c); the wake-up eventfd is read only by the
 *    last poller to leave poll(2), so a poller never misses a wake-up another
 *    one consumed, and no thread polls again before that (cr_wait_point);
 *  - what a wait tests (ready) has no side effects: it is looked at any number
 *    of times, in the loop and once more in the waiting point. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>

#include "engine.h"
#include "pmiwatch.h"

/* ---- the waiting point ---------------------------------------------------- */

void cr_wake_self(cr_job *job)
{
    if (job->host.base) cr_host_ring(&job->host, job->rank);
    if (job->wake_fd >= 0) eventfd_write(job->wake_fd, 1);
    cr_nap_end(job);
}

void cr_nap_end(cr_job *job)
{
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

void cr_wait_point(cr_job *job, int timeout_ms, bool (*ready)(void *), void *arg, cr_wait *w)
{
    /* The eventfd is set, and a thread still in poll(2) must see it (the last
     * to leave reads it): a poll now would return at once. With threads coming
     * and going the pollers never all left, and every poll of every thread
     * returned at once, for good (MPI_THREAD_MULTIPLE over tcp: 99.9 % of
     * polls, the ranks at 100 % of a core in system calls). Let them leave. */
    if (job->wake_seen) {
        cr_unlock(job);
        sched_yield();
        cr_lock(job);
        return;
    }
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

/* ---- waiting ------------------------------------------------------------- */

/* How an idle spell (idle rounds with no progress between) ended, for the next
 * one's spin. The length of a yield says who else wants this core: the system
 * call alone takes 0.4 us here, a switch to another process and back at least
 * 2.8 us, and a process that computes keeps the core for a time slice (0.75 ms
 * and more under EEVDF and CFS). */
enum { SPELL_SPUN, SPELL_YIELDED, SPELL_CEDED, SPELL_PREEMPTED, SPELL_SLEPT };
#define YIELD_RAN_NS 3000u  /* longer: another process ran on this core */
#define CEDED_TO_MOVE 16u   /* spells in a row that only a hand-over ended */
#define OVERSUB_PREEMPTS 4u /* ranks outnumber cores: slices lost to shorten */

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
    uint64_t now = cr_mono_ns();
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
 * OVERSUB_PREEMPTS lost slices within CR_SLICE_KEEP_NS, and the request is taken
 * back (shortened false) once no yield has lost a slice for CR_SLICE_KEEP_NS.
 * Older kernels take the requests and ignore them. */
static void set_slice(cr_job *job, bool shortened)
{
    job->short_slice = shortened;
    cr_host_short_slice(shortened);
}

/* Another process computes on this machine: over the last window of at least
 * OTHERS_WINDOW_NS, the CPU time that went to tasks (the online CPUs' time less
 * idle, I/O wait and steal) exceeds what this job's own processes had (every
 * thread of its ranks here and of the launcher that started them) by
 * OTHERS_MIN_PCT of a CPU. A process that computes takes a share of a CPU all
 * the time (beside 4 ranks on 2 cores, one took 0.65-0.94 CPU per 200 ms
 * window); a quiet machine's own work stays under 0.1. Ranks that outnumber the
 * cores also lose slices to each other, so a lost slice alone cannot tell; nor
 * can the runnable tasks counted at one instant (/proc/loadavg against the
 * ranks' states, as before): such ranks sleep and wake faster than the files
 * are read, and one look in five took a quiet machine for a busy one
 * (docs/engine.md). The verdict holds from window to window; a window longer
 * than OTHERS_STALE_NS says nothing of now and starts again. One rank of the
 * host looks for all (host.h: cr_host_others; a look left half-taken by a rank
 * that ended is taken over after OTHERS_STALE_NS), the others read its verdict:
 * reading every rank's CPU time in every rank cost n^2 reads of /proc a window.
 * Unknown (no /proc): yes, the safe answer on a shared machine. */
#define OTHERS_WINDOW_NS 200000000
#define OTHERS_STALE_NS 2000000000
#define OTHERS_MIN_PCT 30u
static bool others_run(cr_job *job)
{
    cr_host_others *o = job->host.base ? job->host.others : &job->others;
    int64_t now = (int64_t)cr_mono_ns();
    if (!cr_host_look_take(o, now, OTHERS_WINDOW_NS, OTHERS_STALE_NS)) return atomic_load(&o->seen);
    int64_t at = (int64_t)atomic_load(&o->at);
    uint64_t dt = (uint64_t)(now - at), idle;
    unsigned cpus;
    bool seen = atomic_load(&o->seen);
    if (!cr_host_unused_ns(&idle, &cpus)) {
        o->idle = UINT64_MAX; /* no window from this look */
        cr_host_look_done(o, now, true);
        return true;
    }
    uint64_t ours = cr_host_cpu_ns(getppid());
    for (int p = 0; job->host.base && p < job->size; p++) {
        pid_t pid = cr_host_pid(&job->host, p); /* a rank on another host has none here */
        if (pid > 0) ours += cr_host_cpu_ns(pid);
    }
    /* A thread or rank that ended took its time with it, and the ticks of
     * /proc/stat may overshoot: no verdict from such a window. Without pids to
     * look at, the job's ranks may have had every CPU. */
    if (at && now > at && dt < OTHERS_STALE_NS && ours >= o->ours && idle >= o->idle &&
        idle - o->idle <= (uint64_t)cpus * dt) {
        uint64_t used = (uint64_t)cpus * dt - (idle - o->idle);
        uint64_t mine = job->host.base ? ours - o->ours : dt * (uint64_t)job->size;
        seen = used > mine && (used - mine) * 100u > dt * OTHERS_MIN_PCT;
    }
    o->idle = idle;
    o->ours = ours;
    cr_host_look_done(o, now, seen);
    return seen;
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
    uint64_t now = cr_mono_ns();
    if (!w->idle_since) { /* the spin is over (when multi, another thread may move spin_now) */
        w->idle_since = now;
        cr_tp_flush(job);          /* a sender may be waiting for our credits */
        cr_engine_buffer_rts(job); /* ... or for us to take its long message */
        w->spell_reported = false;
        job->spell_end = SPELL_YIELDED;
        if (job->short_slice && now - job->preempted_at > CR_SLICE_KEEP_NS) set_slice(job, false);
    }
    /* Yield for a while, then sleep; but with more ranks than cores on a
     * machine that has other work (short_slice), sleep at once: a yield there
     * mostly hands the core to the computing process, while a sleeping rank is
     * woken by the message it waits for and, with its short slice, runs at
     * once. 4 ranks on 2 cores beside one CPU-bound process: osu_bcast 8-128 B
     * 120-155 -> 15-24 us, osu_allreduce 122-151 -> 9-48 us; without the
     * process unchanged (1.5-1.7 us). */
    if (now - w->idle_since < job->yield_ns && !(job->oversub && job->short_slice)) {
        cr_unlock(job);
        sched_yield();
        cr_lock(job);
        uint64_t took = cr_mono_ns() - now;
        if (took > CR_YIELD_SLICE_NS) {
            job->spell_end = SPELL_PREEMPTED;
            job->preempts = now - job->preempted_at < CR_SLICE_KEEP_NS ? job->preempts + 1 : 1;
            job->preempted_at = now;
            /* With more ranks than cores the computing process may be one of
             * ours (starting up, or between its calls): not one lost slice
             * but several in a second, while processes other than the job's
             * take CPU time (others_run, whose window runs meanwhile), say the
             * machine has other work. */
            bool others = job->oversub && !job->short_slice && others_run(job);
            if (!job->short_slice &&
                (!job->oversub || (job->preempts >= OVERSUB_PREEMPTS && others)))
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
    cr_wait_point(job, job->nap_ms, ready, arg, w);
}

/* ---- waiting loops -------------------------------------------------------- */

static bool req_done(void *r)
{
    return ((cr_req *)r)->done;
}

/* The waiting loop, inlined into each caller so that a constant 'ready' (a
 * request's done flag) costs a load, not a call. */
static inline __attribute__((always_inline)) void
wait_loop(cr_job *job, const char *op, bool (*ready)(void *), void *arg, cr_req *r, bool r_only)
{
    if (ready(arg)) return;
    /* A collective of coll_shm.c named the member it waits for: this wait
     * takes it (and no wait nested in this one's progress does). */
    cr_wait w = {.until = r_only ? r : NULL,
                 .req = r,
                 .op = job->wait_op,
                 .peer = job->wait_peer,
                 .ctx = job->wait_ctx,
                 .call = op};
    job->wait_op = NULL;
    job->wait_peer = NULL;
    job->wait_ctx = 0;
    cr_wait_enter(job);
    uint64_t since = __builtin_expect(job->trace != NULL, 0) ? cr_trace_ns(job) : 0;
    uint64_t timed = __builtin_expect(job->time_waits != 0, 0) ? cr_mono_ns() : 0;
    do {
        if (cr_progress_poll(job)) {
            w.spins = 0;
            continue;
        }
        if (job->npeers == 1 && !job->threaded && !ready(arg))
            cr_fatal(job, op,
                     "waits for a message that can never come: this is the only rank "
                     "(start the program with courier run -n N)");
        cr_idle(job, &w, ready, arg);
    } while (!ready(arg));
    cr_wait_leave(job);
    if (since && job->trace) cr_trace_wait_on(job, cr_trace_ns(job) - since);
    if (timed) {
        job->wait_ns += cr_mono_ns() - timed;
        job->waits++;
    }
    if (w.listed) cr_wait_report(job, &w, false);
}

void cr_req_wait(cr_job *job, cr_req *r)
{
    wait_loop(job, r->op, req_done, r, r, true);
}

void cr_wait_until(cr_job *job, const char *op, bool (*ready)(void *), void *arg, const cr_req *r)
{
    wait_loop(job, op, ready, arg, (cr_req *)r, false);
}

/* ---- the watchdog's view of this rank --------------------------------------- */

/* Threads of this process, or -1 when that cannot be told (no /proc). */
static int thread_count(void)
{
    char buf[1024];
    int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return -1;
    buf[n] = '\0';
    char *p = strrchr(buf, ')'); /* after the command name, which may hold anything */
    for (int field = 2; p && field < 20; field++) p = strchr(p + 1, ' ');
    return p ? atoi(p + 1) : -1; /* field 20: num_threads */
}

/* Multi: is every thread of the process in a wait reported blocked (the
 * progress thread aside, which only ever waits)? A thread that computes, or
 * that has not called yet, may still send what the others wait for. The count
 * is read at most every 50 ms. */
static bool all_threads_blocked(cr_job *job)
{
    uint64_t now = cr_clock_ns();
    if (!job->nthreads || now - job->board_checked >= 50000000u) {
        job->nthreads = thread_count();
        job->board_checked = now;
    }
    int n = job->nthreads;
    return n > 0 && (int)job->nblocked >= n - (job->progress_on ? 1 : 0);
}

/* src into dst[len], cut to fit and ended (snprintf's "%s", without its cost:
 * the board is written at every blocked wait, which --sim makes every wait). */
static void board_str(char *dst, size_t len, const char *src)
{
    size_t n = strnlen(src, len - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* The interface's name for context ctx (job->ctx_name) into group; true for a
 * group's collective context. Asked again only when the context or the names
 * (ctx_names_gen) changed since the last wait shown: a name lookup at every
 * wait reaches into the interface's tables, cold in a simulated job's
 * thousands of ranks. */
static bool board_ctx_name(cr_job *job, uint16_t ctx, char *group, size_t len)
{
    if (job->board_ctx != ctx || job->board_names_gen != job->ctx_names_gen || !ctx) {
        job->board_group[0] = '\0';
        job->board_coll = job->ctx_name(job, ctx, job->board_group, sizeof job->board_group);
        job->board_ctx = ctx;
        job->board_names_gen = job->ctx_names_gen;
    }
    board_str(group, len, job->board_group);
    return job->board_coll;
}

/* Describe wait v for the board: what it is for, in the words of the
 * interface's call under way (job->in_call) where it said one. */
static void describe_wait(cr_job *job, cr_wait *v, cr_waitinfo *w)
{
    *w = (cr_waitinfo){.peer = -1};
    const cr_req *r = v->req;
    const cr_sel *sel = r && r->kind == CR_REQ_RECV ? &r->sel : v->sel;
    const char *what = r ? r->op : sel ? "probe" : v->op ? v->op : v->call ? v->call : "exit";
    if (job->in_call && job->in_call_on)
        snprintf(w->call, sizeof w->call, "%s on %s", job->in_call, job->in_call_on);
    else
        board_str(w->call, sizeof w->call, job->in_call ? job->in_call : what);
    if (r && strcmp(r->op, w->call)) board_str(w->op, sizeof w->op, r->op);
    uint16_t ctx = r && r->kind == CR_REQ_SEND ? r->ctx : sel ? sel->ctx : 0;
    if (job->ctx_name && (r || sel)) w->coll = board_ctx_name(job, ctx, w->group, sizeof w->group);
    if (!r && !sel && v->lock_of) {
        w->kind = CR_WAIT_LOCK; /* its holder is not known: peer stays -1 */
        w->tag = *v->lock_of;
    } else if (!r && !sel && v->op) {
        w->kind = CR_WAIT_ARRIVE;
        w->peer = v->peer ? *v->peer : -1;
        if (job->ctx_name && v->ctx) board_ctx_name(job, v->ctx, w->group, sizeof w->group);
        v->peer_shown = w->peer;
    } else if (r && r->kind == CR_REQ_SEND) {
        w->kind = r->stage == CR_STAGE_WAIT ? CR_WAIT_MATCH : CR_WAIT_CREDIT;
        w->peer = r->peer;
        w->ctx = r->ctx;
        w->tag = r->tag;
        w->tag_mode = CR_TAG_EXACT;
        w->size = r->cap;
    } else if (sel) {
        w->kind = CR_WAIT_RECV;
        w->peer = sel->src;
        w->ctx = sel->ctx;
        w->tag = sel->tag;
        w->tag_mode = sel->tag_mode;
        w->mask = sel->mask;
        w->size = r ? r->cap : 0;
    }
}

/* Show wait v on the board (each showing counts as a new spell there), or
 * nothing (v NULL: not blocked). */
static void board_show(cr_job *job, cr_wait *v)
{
    job->board_blocked = v != NULL;
    job->board_some = false;
    if (!v) {
        if (job->host.base) cr_host_report_wait(&job->host, NULL);
        if (job->pmiwatch) cr_pmiwatch_report(job, NULL); /* under srun (pmiwatch.c) */
        return;
    }
    cr_waitinfo w;
    describe_wait(job, v, &w);
    if (job->host.base) cr_host_report_wait(&job->host, &w);
    if (job->pmiwatch) cr_pmiwatch_report(job, &w);
}

/* A rank of several threads, not all blocked: the board shows one of those
 * that wait, as such (the hang watchdog counts the rank as running; a
 * --timeout report says what that thread waits for), or nothing. */
static void board_some(cr_job *job)
{
    cr_wait *v = job->blocked;
    if (!v || !job->host.base) {
        if (job->board_blocked || job->board_some) board_show(job, NULL);
        return;
    }
    cr_waitinfo w;
    describe_wait(job, v, &w);
    cr_host_report_some(&job->host, &w);
    if (job->pmiwatch && job->board_blocked) cr_pmiwatch_report(job, NULL);
    job->board_blocked = false;
    job->board_some = true;
}

/* Does wait w wait on a peer of another job (xpeers.h), or maybe on one (any
 * source, several requests, a collective), while there are such peers? That
 * job's ranks are on no board this job's watchdog reads: a master waiting for
 * its spawned workers, or a server for its client's next request, is not
 * hung however long they compute, so such a wait does not count as blocked. */
static bool waits_outside(const cr_job *job, const cr_wait *w)
{
    if (job->npeers == job->size) return false;
    int p;
    if (w->req)
        p = w->req->kind == CR_REQ_SEND ? w->req->peer : w->req->sel.src;
    else if (w->sel)
        p = w->sel->src;
    else if (w->peer)
        p = *w->peer;
    else
        return true;
    return p == CR_ANY_SOURCE || p >= job->size;
}

void cr_wait_report(cr_job *job, cr_wait *w, bool blocked)
{
    if (blocked && waits_outside(job, w)) blocked = false;
    if (!job->multi) { /* one thread: the board shows its wait, or nothing */
        w->listed = blocked;
        board_show(job, blocked ? w : NULL);
        return;
    }
    if (blocked && !w->listed) {
        w->next = job->blocked;
        job->blocked = w;
        job->nblocked++;
        w->listed = true;
    } else if (!blocked && w->listed) {
        for (cr_wait **pp = &job->blocked; *pp; pp = &(*pp)->next)
            if (*pp == w) {
                *pp = w->next;
                job->nblocked--;
                break;
            }
        w->listed = false;
    }
    if (blocked && all_threads_blocked(job))
        board_show(job, w);
    else /* a thread runs (this one, when !blocked) */
        board_some(job);
}

void cr_board_check(cr_job *job)
{
    if (!job->nblocked) return;
    bool all = all_threads_blocked(job);
    if (all && !job->board_blocked)
        board_show(job, job->blocked);
    else if (!all && job->board_blocked)
        board_some(job);
}

/* ---- a rank that waits by polling ----------------------------------------- */

/* A program that waits by polling (while (!flag) MPI_Test(...)) is never
 * blocked in a call, so the watchdog would never see a deadlock among such
 * ranks: the job would spin for ever. The board shows a polling rank as
 * blocked once, for POLL_QUIET windows in a row (each at least POLL_WINDOW_NS
 * long, looked at every POLL_LOOK misses; once a window has begun, the clock
 * is read as each poll returns and as the next one is entered),
 *  - its polls found nothing and no other call came between them,
 *  - fewer than a quarter of the gaps between those polls were longer than
 *    POLL_GAP_NS: a loop that computes between its polls is working, however
 *    many it makes (counted, not timed: on a busy machine a preemption makes
 *    one gap long, and may take as long as a whole window), and
 *  - the process's other threads used less CPU than a quarter of the polling
 *    thread's: an OpenMP team computing while its master polls is working.
 * The watchdog then treats it as it treats a blocked rank: the job is hung when
 * every rank still running is blocked or polls so and nothing moves for the hang
 * timeout. Not with several program threads (MPI_THREAD_MULTIPLE: the board
 * there counts threads in waits), nor for a wait on a peer
 * of another job (waits_outside); a loop that sleeps between its polls is not
 * seen either (its gaps are long). */
#define POLL_LOOK 1024u
#define POLL_YIELD 4u
#define POLL_WINDOW_NS 50000000ull
#define POLL_GAP_NS 10000u
#define POLL_QUIET 2

/* A gap between polls longer than this is work: POLL_GAP_NS of the machine's
 * time, which simulated (--sim, where cr_clock_ns is virtual) is the modelled
 * CPU's, cpu_factor times as long. */
static uint64_t poll_gap_ns(const cr_job *job)
{
    if (!job->vt.base) return POLL_GAP_NS;
    double f = job->vt.hd->cpu_factor;
    return f > 0 ? (uint64_t)(POLL_GAP_NS * f) : 0;
}

static void poll_window(struct cr_poll *p, uint64_t now, uint64_t cpu, uint64_t all)
{
    p->win_ns = now;
    p->win_cpu = cpu;
    p->win_others = all - cpu;
    p->win_misses = p->misses;
    p->gaps = 0;
    p->left = 0;
}

static void poll_end(cr_job *job)
{
    if (job->poll.shown && job->board_blocked) board_show(job, NULL);
    job->poll = (struct cr_poll){0};
}

void cr_poll_enter(cr_job *job, const char *name)
{
    struct cr_poll *p = &job->poll;
    if (p->depth++) return; /* a call inside a call */
    for (int i = 0; i < 4 && p->calls[i]; i++)
        if (p->calls[i] == name || !strcmp(p->calls[i], name)) {
            if (p->left && cr_clock_ns() - p->left > poll_gap_ns(job)) p->gaps++;
            return;
        }
    poll_end(job); /* another call: the loop does more than poll */
}

void cr_poll_leave(cr_job *job)
{
    struct cr_poll *p = &job->poll;
    if (p->depth && --p->depth) return;
    if (!p->missed) {
        poll_end(job); /* it found something, or failed */
        return;
    }
    p->missed = false;
    if (p->win_ns) p->left = cr_clock_ns();
}

/* Show the streak on the board as a wait for what. */
static void poll_show(cr_job *job, const char *call, const cr_wait *what)
{
    cr_wait v = *what;
    const char *was = job->in_call;
    if (!was) job->in_call = call; /* NX/2 and MPL do not set it */
    cr_waitinfo w;
    describe_wait(job, &v, &w);
    job->in_call = was;
    w.polls = 1;
    job->board_blocked = true;
    job->board_some = false;
    job->poll.shown = true;
    if (job->host.base) cr_host_report_wait(&job->host, &w);
    if (job->pmiwatch) cr_pmiwatch_report(job, &w);
}

/* Simulated (--sim), the clock is virtual and a poll costs virtual time: once
 * POLL_LOOK polls in a row found nothing with almost no work between them
 * (fewer than a quarter of the gaps longer than poll_gap_ns of the rank's
 * virtual time), the rank waits for its next arrival as a blocked wait does
 * (sim_idle), the board showing it polling: as much virtual time passes as
 * the polls would have taken, at no real cost, and a rank that polls for what
 * never comes is blocked in the simulator's eyes, which reports the deadlock
 * instead of running on until --timeout. Not in a process with other threads
 * (ranks as contexts share one): what one of them does may end the loop
 * without a message, and nothing would wake the rank then. */
static void sim_poll(cr_job *job, const char *call, const cr_wait *what)
{
    struct cr_poll *p = &job->poll;
    if (!p->win_ns) p->win_ns = 1; /* the gaps are timed from here (cr_poll_leave) */
    if (p->misses % POLL_LOOK) return;
    bool only_polls = p->gaps * 4 < POLL_LOOK;
    p->gaps = 0;
    if (!only_polls || job->board_blocked || waits_outside(job, what) || thread_count() != 1)
        return;
    poll_show(job, call, what);
    cr_unlock(job);
    cr_vt_block(&job->vt);
    cr_lock(job);
    p->shown = false;
    board_show(job, NULL);
}

void cr_poll_clock(cr_job *job)
{
    if (!job->poll.depth && pthread_equal(pthread_self(), job->vt.owner)) poll_end(job);
}

/* With more ranks than cores, a rank that polls in a loop (MPI_Test until its
 * request is done, msgdone, mpc_status) keeps the core that the ranks it waits
 * for need: a blocked wait would yield (cr_idle), a poll loop never blocks.
 * Every POLL_YIELD missed polls it gives the core up (Open MPI yields at each
 * idle poll when oversubscribed). Graph500's AML barrier (MPI_Ibarrier
 * completed by MPI_Test and MPI_Testany in a loop), 4 ranks on 2 cores:
 * 7.3-13 ms a barrier and 4-7 million polls before, against Open MPI's
 * 0.09-0.6 ms. Not simulated (a poll costs virtual time there: sim_poll). */
static void poll_yield(cr_job *job, bool locked)
{
    if (!job->oversub || job->vt.base || ++job->poll_yield % POLL_YIELD) return;
    if (locked) cr_unlock(job);
    sched_yield();
    if (locked) cr_lock(job);
}

void cr_poll_missed_direct(cr_job *job, const char *call)
{
    if (!job->vt.base) cr_poll_missed(job, call, &(cr_wait){.call = call});
}

void cr_poll_spun(cr_job *job, bool locked)
{
    poll_yield(job, locked);
}

void cr_poll_missed(cr_job *job, const char *call, const cr_wait *what)
{
    struct cr_poll *p = &job->poll;
    poll_yield(job, true);
    if (job->multi || (!job->vt.base && !job->host.base && !job->pmiwatch)) return;
    p->missed = true;
    p->misses++;
    int i = 0;
    while (i < 4 && p->calls[i] && p->calls[i] != call && strcmp(p->calls[i], call)) i++;
    if (i < 4 && !p->calls[i]) p->calls[i] = call;
    if (job->vt.base) {
        sim_poll(job, call, what);
        return;
    }
    if (p->misses % POLL_LOOK) return;
    uint64_t now = cr_clock_ns();
    if (p->win_ns && now - p->win_ns < POLL_WINDOW_NS) return;
    uint64_t cpu = cr_host_clock_ns(CLOCK_THREAD_CPUTIME_ID);
    uint64_t all = cr_host_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    if (p->win_ns) {
        int64_t mine = (int64_t)(cpu - p->win_cpu), others = (int64_t)(all - cpu - p->win_others);
        bool only_polls = p->gaps * 4 < p->misses - p->win_misses && others * 4 <= mine;
        p->quiet = only_polls ? (uint8_t)(p->quiet + (p->quiet < POLL_QUIET)) : 0;
        if (p->quiet >= POLL_QUIET && !p->shown && !job->board_blocked && !waits_outside(job, what))
            poll_show(job, call, what);
        else if (!only_polls && p->shown) {
            p->shown = false;
            if (job->board_blocked) board_show(job, NULL);
        }
    }
    poll_window(p, now, cpu, all);
}
