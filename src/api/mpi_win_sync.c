/* MPI one-sided synchronization (mpi_win.h): the epochs of a window. Fence
 * (collective), lock and lock_all (passive target: the target's window lock
 * word, shared or exclusive), post/start/complete/wait/test (general active
 * target: counters in each member's control block), flush and sync.
 *
 * Invariants:
 *  - every synchronization is an atomic on some member's control block; a
 *    lock held is recorded in w->lockst (per target) and given back by the
 *    matching unlock, or by unlock_all for lock_all;
 *  - an epoch closes only once every transfer this member started in it has
 *    completed at the target (the engine's one-sided operations are waited
 *    for), so the data is there for whoever synchronizes after;
 *  - a wait for a lock word held by another member backs off (lock_wait) and,
 *    once it naps, shows the watchdog whom it waits for. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"
#include "mpi_win.h"

/* ---- synchronization ----------------------------------------------------------- */

static int assert_check(cr_job *job, MPI_Win win, const char *call, int mode, int allowed)
{
    if (mode & ~allowed)
        return win_fail(job, win, call, MPI_ERR_ASSERT,
                        "assertion %#x has bits this call does not take (allowed: %#x)",
                        (unsigned)mode, (unsigned)allowed);
    return MPI_SUCCESS;
}

PMPI_WEAK(Win_fence);
int PMPI_Win_fence(int mode, MPI_Win win)
{
    const char *call = "MPI_Win_fence";
    cr_job *job = mpi_enter(call);
    mpi_win *w;
    int rc = win_check(job, call, win, &w);
    if (!rc)
        rc = assert_check(job, win, call, mode,
                          MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE |
                              MPI_MODE_NOSUCCEED);
    if (!rc && (w->nlocks || w->lock_all || w->acc_on || w->exp_on))
        rc = win_fail(job, win, call, MPI_ERR_RMA_SYNC,
                      "a lock or post/start epoch is open on this window: fences cannot mix "
                      "with it");
    if (rc) return mpi_leave(job, rc);
    win_defer_send(job, call, w, -1);
    cr_rma_flush(job, call, -1);
    if (w->chk) mpi_check_rma_fence(job, w, call, mode); /* --check=rma */
    cr_coll_barrier(job, &w->c->g, call);
    w->fence_on = !(mode & MPI_MODE_NOSUCCEED);
    return mpi_leave(job, MPI_SUCCESS);
}

static int lock_check(cr_job *job, const char *call, MPI_Win win, mpi_win **w, int rank)
{
    int rc = win_check(job, call, win, w);
    if (rc) return rc;
    if (rank != MPI_PROC_NULL && (rank < 0 || rank >= (*w)->size))
        return win_fail(job, win, call, MPI_ERR_RANK, "rank %d is not a member (0..%d)", rank,
                        (*w)->size - 1);
    return MPI_SUCCESS;
}

static void lock_take(cr_job *job, const char *call, mpi_win *w, int t, int type)
{
    lock_wait lw;
    lock_wait_begin(&lw, call, cr_group_rank(&w->c->g, t));
    if (type == MPI_LOCK_EXCLUSIVE) {
        while (ctl_amo(job, call, w, t, CTL_LOCK, CR_AMO_CAS | CR_AMO_QUIET, LOCK_WRITER, 0) != 0)
            backoff(job, &lw);
    } else {
        while (ctl_amo(job, call, w, t, CTL_LOCK, CR_AMO_ADD | CR_AMO_QUIET, 1, 0) & LOCK_WRITER) {
            ctl_amo(job, call, w, t, CTL_LOCK, CR_AMO_ADD | CR_AMO_QUIET, (uint64_t)-1, 0);
            backoff(job, &lw);
        }
    }
    lock_wait_end(job, &lw);
}

static void lock_give(cr_job *job, const char *call, mpi_win *w, int t, int type)
{
    ctl_amo(job, call, w, t, CTL_LOCK, CR_AMO_ADD | CR_AMO_QUIET,
            type == MPI_LOCK_EXCLUSIVE ? (uint64_t)-LOCK_WRITER : (uint64_t)-1, 0);
}

PMPI_WEAK(Win_lock);
int PMPI_Win_lock(int lock_type, int rank, int mode, MPI_Win win)
{
    const char *call = "MPI_Win_lock";
    cr_job *job = mpi_enter(call);
    mpi_win *w;
    int rc = lock_check(job, call, win, &w, rank);
    if (!rc && lock_type != MPI_LOCK_SHARED && lock_type != MPI_LOCK_EXCLUSIVE)
        rc = win_fail(job, win, call, MPI_ERR_LOCKTYPE,
                      "lock type %d is neither MPI_LOCK_SHARED nor MPI_LOCK_EXCLUSIVE", lock_type);
    if (!rc) rc = assert_check(job, win, call, mode, MPI_MODE_NOCHECK);
    if (!rc && rank != MPI_PROC_NULL && (w->lockst[rank] || w->lock_all))
        rc = win_fail(job, win, call, MPI_ERR_RMA_SYNC,
                      w->lockst[rank] ? "rank %d is locked by this process already"
                                      : "another epoch is open on this window (rank %d)",
                      rank);
    if (rc || rank == MPI_PROC_NULL) return mpi_leave(job, rc);
    if (!(mode & MPI_MODE_NOCHECK)) lock_take(job, call, w, rank, lock_type);
    w->lockst[rank] =
        (uint8_t)(lock_type == MPI_LOCK_EXCLUSIVE ? 2 : 1) | (mode & MPI_MODE_NOCHECK ? 4 : 0);
    w->nlocks++;
    if (w->chk) mpi_check_rma_lock(job, w, call, rank); /* --check=rma */
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Win_unlock);
int PMPI_Win_unlock(int rank, MPI_Win win)
{
    const char *call = "MPI_Win_unlock";
    cr_job *job = mpi_enter(call);
    mpi_win *w;
    int rc = lock_check(job, call, win, &w, rank);
    if (rc || rank == MPI_PROC_NULL) return mpi_leave(job, rc);
    if (!w->lockst[rank])
        return mpi_leave(job, win_fail(job, win, call, MPI_ERR_RMA_SYNC,
                                       "rank %d is not locked by this process", rank));
    cr_rma_flush(job, call, cr_group_rank(&w->c->g, rank));
    if (w->chk) mpi_check_rma_flush(job, w, call, rank, true); /* --check=rma */
    uint8_t st = w->lockst[rank];
    if (!(st & 4)) lock_give(job, call, w, rank, st & 2 ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED);
    w->lockst[rank] = 0;
    w->nlocks--;
    cr_poll_spun(job, true); /* a loop may poll memory in lock-get-unlock epochs */
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Win_lock_all);
int PMPI_Win_lock_all(int mode, MPI_Win win)
{
    const char *call = "MPI_Win_lock_all";
    cr_job *job = mpi_enter(call);
    mpi_win *w;
    int rc = win_check(job, call, win, &w);
    if (!rc) rc = assert_check(job, win, call, mode, MPI_MODE_NOCHECK);
    if (!rc && (w->lock_all || w->nlocks))
        rc = win_fail(job, win, call, MPI_ERR_RMA_SYNC, "another epoch is open on this window");
    if (rc) return mpi_leave(job, rc);
    if (!(mode & MPI_MODE_NOCHECK))
        for (int t = 0; t < w->size; t++) lock_take(job, call, w, t, MPI_LOCK_SHARED);
    w->lock_all = mode & MPI_MODE_NOCHECK ? 2 : 1;
    if (w->chk) mpi_check_rma_lock(job, w, call, -1); /* --check=rma */
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Win_unlock_all);
int PMPI_Win_unlock_all(MPI_Win win)
{
    const char *call = "MPI_Win_unlock_all";
    cr_job *job = mpi_enter(call);
    mpi_win *w;
    int rc = win_check(job, call, win, &w);
    if (!rc && !w->lock_all)
        rc = win_fail(job, win, call, MPI_ERR_RMA_SYNC, "MPI_Win_lock_all was not called");
    if (rc) return mpi_leave(job, rc);
    cr_rma_flush(job, call, -1);
    if (w->chk) mpi_check_rma_flush(job, w, call, -1, true); /* --check=rma */
    if (w->lock_all != 2)
        for (int t = 0; t < w->size; t++) lock_give(job, call, w, t, MPI_LOCK_SHARED);
    w->lock_all = 0;
    cr_poll_spun(job, true);
    return mpi_leave(job, MPI_SUCCESS);
}

static int flush(const char *call, int rank, MPI_Win win, bool all)
{
    /* Nothing of this rank's in flight (its puts and gets into mapped memory
     * are done in their calls), in a passive-target epoch: nothing to do, and
     * no lock needed to see it (mpi_enter_owned). No fence either: what shows
     * the transfers' stores to the target is the synchronization the program
     * uses next (a message, a barrier, an unlock, MPI_Win_sync), each with a
     * barrier of its own, as without a progress thread before. */
    cr_job *job = mpi_enter_owned();
    if (job) {
        mpi_win *w = win_get(win);
        if (w && !w->chk && (all || (rank >= 0 && rank < w->size)) && (w->nlocks || w->lock_all) &&
            cr_rma_idle(job)) {
            cr_poll_spun(job, false); /* a loop may poll memory with it */
            return MPI_SUCCESS;
        }
    }
    job = mpi_enter(call);
    mpi_win *w;
    int rc = lock_check(job, call, win, &w, all ? MPI_PROC_NULL : rank);
    if (!rc && !w->nlocks && !w->lock_all)
        rc = win_fail(job, win, call, MPI_ERR_RMA_SYNC,
                      "no passive-target epoch (lock) is open on this window");
    if (rc) return mpi_leave(job, rc);
    if (all || rank != MPI_PROC_NULL)
        cr_rma_flush(job, call, all ? -1 : cr_group_rank(&w->c->g, rank));
    if (w->chk && (all || rank != MPI_PROC_NULL)) /* --check=rma */
        mpi_check_rma_flush(job, w, call, all ? -1 : rank, !strstr(call, "_local"));
    cr_poll_spun(job, true);
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Win_flush);
int PMPI_Win_flush(int rank, MPI_Win win)
{
    return flush("MPI_Win_flush", rank, win, false);
}

PMPI_WEAK(Win_flush_all);
int PMPI_Win_flush_all(MPI_Win win)
{
    return flush("MPI_Win_flush_all", 0, win, true);
}

PMPI_WEAK(Win_flush_local);
int PMPI_Win_flush_local(int rank, MPI_Win win)
{
    return flush("MPI_Win_flush_local", rank, win, false);
}

PMPI_WEAK(Win_flush_local_all);
int PMPI_Win_flush_local_all(MPI_Win win)
{
    return flush("MPI_Win_flush_local_all", 0, win, true);
}

PMPI_WEAK(Win_sync);
int PMPI_Win_sync(MPI_Win win)
{
    const char *call = "MPI_Win_sync";
    cr_job *job = mpi_enter(call);
    mpi_win *w;
    int rc = win_check(job, call, win, &w);
    /* a full barrier: a locked read-modify-write (ThreadSanitizer does not
     * take a bare fence) */
    if (!rc) __atomic_fetch_add(&w->sync_word, 0, __ATOMIC_SEQ_CST);
    if (!rc && w->chk) mpi_check_rma_sync(job, w, call); /* --check=rma */
    if (!rc) cr_rma_sim_serve(job);
    if (!rc) cr_poll_spun(job, true); /* a loop may poll shared memory with it */
    return mpi_leave(job, rc);
}

/* Members of group g (job ranks) as window members; -1 when one is not. */
static int group_members(cr_job *job, const char *call, MPI_Win win, mpi_win *w, MPI_Group g,
                         int *out, int *n)
{
    mpi_group *gr = NULL;
    int rc = mpi_group_check(job, call, g, &gr);
    if (rc) return rc;
    *n = gr ? gr->size : 0;
    for (int i = 0; i < *n; i++) {
        int m = mpi_comm_job_to_rank(w->c, gr->ranks[i]);
        if (m < 0)
            return win_fail(job, win, call, MPI_ERR_GROUP,
                            "member %d of the group is not a member of the window", i);
        out[i] = m;
    }
    return MPI_SUCCESS;
}

PMPI_WEAK(Win_post);
int PMPI_Win_post(MPI_Group group, int mode, MPI_Win win)
{
    const char *call = "MPI_Win_post";
    cr_job *job = mpi_enter(call);
    mpi_win *w;
    int rc = win_check(job, call, win, &w);
    if (!rc)
        rc = assert_check(job, win, call, mode,
                          MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT);
    if (!rc && w->exp_on)
        rc = win_fail(job, win, call, MPI_ERR_RMA_SYNC,
                      "an exposure epoch is open already on this window");
    if (!rc) rc = group_members(job, call, win, w, group, w->expose, &w->nexp);
    if (rc) return mpi_leave(job, rc);
    w->exp_on = true;
    if (w->chk) mpi_check_rma_post(job, w, call); /* --check=rma */
    for (int i = 0; i < w->nexp; i++)
        ctl_amo(job, call, w, w->expose[i], ctl_post(w->me), CR_AMO_ADD, 1, 0);
    return mpi_leave(job, MPI_SUCCESS);
}

typedef struct words_arg {
    uint64_t *ctl;
    const int *who;
    int n;
    size_t (*word)(const mpi_win *, int);
    const mpi_win *w;
} words_arg;

/* Every counter named is positive. */
static bool words_ready(void *p)
{
    words_arg *a = p;
    for (int i = 0; i < a->n; i++)
        if (!__atomic_load_n(&a->ctl[a->word(a->w, a->who[i])], __ATOMIC_ACQUIRE)) return false;
    return true;
}

static void words_take(words_arg *a)
{
    for (int i = 0; i < a->n; i++)
        __atomic_fetch_sub(&a->ctl[a->word(a->w, a->who[i])], 1, __ATOMIC_ACQ_REL);
}

static size_t post_word(const mpi_win *w, int i)
{
    (void)w;
    return ctl_post(i);
}

PMPI_WEAK(Win_start);
int PMPI_Win_start(MPI_Group group, int mode, MPI_Win win)
{
    const char *call = "MPI_Win_start";
    cr_job *job = mpi_enter(call);
    mpi_win *w;
    int rc = win_check(job, call, win, &w);
    if (!rc) rc = assert_check(job, win, call, mode, MPI_MODE_NOCHECK);
    if (!rc && w->acc_on)
        rc = win_fail(job, win, call, MPI_ERR_RMA_SYNC,
                      "an access epoch is open already on this window");
    if (!rc) rc = group_members(job, call, win, w, group, w->access, &w->nacc);
    if (rc) return mpi_leave(job, rc);
    words_arg a = {w->myctl, w->access, w->nacc, post_word, w};
    if (!words_ready(&a)) cr_rma_wait_word(job, call, words_ready, &a);
    words_take(&a);
    w->acc_on = true;
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Win_complete);
int PMPI_Win_complete(MPI_Win win)
{
    const char *call = "MPI_Win_complete";
    cr_job *job = mpi_enter(call);
    mpi_win *w;
    int rc = win_check(job, call, win, &w);
    if (!rc && !w->acc_on)
        rc = win_fail(job, win, call, MPI_ERR_RMA_SYNC, "MPI_Win_start was not called");
    if (rc) return mpi_leave(job, rc);
    win_defer_send(job, call, w, -1);
    cr_rma_flush(job, call, -1);
    if (w->chk) mpi_check_rma_complete(job, w, call); /* --check=rma */
    for (int i = 0; i < w->nacc; i++)
        ctl_amo(job, call, w, w->access[i], ctl_done(w, w->me), CR_AMO_ADD, 1, 0);
    w->acc_on = false;
    return mpi_leave(job, MPI_SUCCESS);
}

static int wait_or_test(const char *call, MPI_Win win, int *flag)
{
    cr_job *job = mpi_enter(call);
    mpi_win *w;
    int rc = win_check(job, call, win, &w);
    if (!rc && !w->exp_on)
        rc = win_fail(job, win, call, MPI_ERR_RMA_SYNC, "MPI_Win_post was not called");
    if (rc) return mpi_leave(job, rc);
    words_arg a = {w->myctl, w->expose, w->nexp, ctl_done, w};
    if (flag) {
        if (!words_ready(&a)) cr_progress(job);
        *flag = words_ready(&a);
        if (!*flag) {
            cr_poll_missed_direct(job, call); /* the posts come as words */
            return mpi_leave(job, MPI_SUCCESS);
        }
    } else if (!words_ready(&a)) {
        cr_rma_wait_word(job, call, words_ready, &a);
    }
    words_take(&a);
    if (w->chk) mpi_check_rma_wait(job, w, call); /* --check=rma */
    w->exp_on = false;
    return mpi_leave(job, MPI_SUCCESS);
}

PMPI_WEAK(Win_wait);
int PMPI_Win_wait(MPI_Win win)
{
    return wait_or_test("MPI_Win_wait", win, NULL);
}

PMPI_WEAK(Win_test);
int PMPI_Win_test(MPI_Win win, int *flag)
{
    int dummy;
    return wait_or_test("MPI_Win_test", win, flag ? flag : &dummy);
}
