/* The progress thread and receive handlers: the thread that moves the engine
 * while the program computes (handler receives, nonblocking collectives,
 * one-sided service), and the running of handlers, on that thread or, in the
 * simulated mode, on the rank's own.
 *
 * Invariants:
 *  - the progress thread exists only once a handler receive (or a nonblocking
 *    collective) was posted; from then on every engine call holds job->lock, and
 *    handlers run without it, one at a time, under trap_lock (which masktrap
 *    takes to keep them out); in the simulated mode there is none, and due
 *    handlers run in the rank's own thread when it waits, polls or unmasks;
 *  - the thread steps aside while a program thread waits (that one moves the
 *    engine), and sleeps where nothing is pending: it never keeps a core busy,
 *    nor wakes more than a few times a second while a wait goes on; the end of
 *    the wait (cr_wait_leave) or new work (cr_bg_kick) ends its long naps. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"

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

/* The progress thread's naps start at STEP_ASIDE_US and double, up to
 * PROGRESS_NAP_MAX_US, while nothing is pending or while one wait of a program
 * thread goes on. */
#define STEP_ASIDE_US 200
#define PROGRESS_NAP_MAX_US 100000

/* The progress thread's scheduling. Moving background work (nonblocking
 * collectives, one-sided service) it is a batch thread (SCHED_BATCH): woken, it
 * does not take the core from its own program thread at once, but at the end
 * of that thread's slice, when it waits, or on an idle core. Started work
 * (MPI_Iallreduce) wakes it, and a program that waits for the work right away
 * moves the engine itself: woken as a normal thread it took that thread's core
 * for two context switches each time (2 ranks on 2 cores, osu_iallreduce 64-256
 * KiB 29-96 us against 17-44 us without the thread; as a batch thread 17-62 us,
 * and a 1 MiB MPI_Iallreduce beside 20 ms of computing still 99-100 % hidden).
 * Handlers (NX/2 hrecv, MPL rcvncall) run like interrupts: a program may spin
 * on a flag that one sets, so with handlers on it is a normal thread again. A
 * policy the user chose for the process (not SCHED_OTHER) is kept. */
static void progress_policy(cr_job *job, pthread_t t)
{
    if (job->policy_kept) return;
    struct sched_param sp = {0};
    pthread_setschedparam(t, job->handlers_on ? SCHED_OTHER : SCHED_BATCH, &sp);
}

static void *progress_main(void *arg)
{
    cr_job *job = arg;
    pthread_mutex_lock(&job->lock);
    progress_policy(job, pthread_self());
    pthread_mutex_unlock(&job->lock);
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
             * this thread: cr_wake_self (a handler due, masktrap(0), the end)
             * and cr_bg_kick (background work started, the end of a wait:
             * cr_wait_leave) end the nap. Beside a new wait, with work to move
             * once it is over, the first nap is short, so that a wait that ends
             * within it needs no wake-up; while that wait goes on the naps
             * double like idle ones (napping 200 us throughout, a rank blocked
             * in MPI_Recv woke ~2,600 times a second: 9 % of a core here), and
             * the wait's end, or new work, ends a long one. What ends a nap is
             * changed under the lock, as here: a waker came before (we saw it)
             * or sees napping set and finds a word that moved on. */
            if (job->waiting && (job->handlers_on || job->bg_pending) &&
                job->aside_seq != job->wait_seq) {
                job->aside_seq = job->wait_seq;
                job->progress_nap = STEP_ASIDE_US;
            }
            long us = job->progress_nap;
            job->progress_nap = us * 2 > PROGRESS_NAP_MAX_US ? PROGRESS_NAP_MAX_US : us * 2;
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
            cr_wait_point(job, job->nap_ms, NULL, NULL, NULL);
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
        cr_nap_end(job); /* a long nap is on nap_word, not at the waiting point */
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
        bool was = job->handlers_on;
        job->handlers_on = true;
        if (!was && job->progress_on) progress_policy(job, job->progress_thread);
        cr_bg_kick(job); /* out of a long nap: from now on it answers at once */
    }
    if (!job->progress_on) {
        job->policy_kept = sched_getscheduler(0) != SCHED_OTHER;
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
    int c = cr_vt_compute_begin(&job->vt); /* the handler's own time is compute */
    run_handlers(job);
    cr_vt_compute_end(&job->vt, c);
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
