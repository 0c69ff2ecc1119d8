/* Single copy: the engine's one place that calls a transport's get, put, getv
 * and putv, and that applies the rule for a refusal (single_copy.h).
 *
 * Invariants: job->single_copy[p] only ever goes from 1 to 0 after start-up
 * (job.c sets it), and only here, on a refusal (EPERM, EACCES, ENOSYS) of a
 * copy with p in either direction; a copy with a peer whose flag is 0 is never
 * tried. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "single_copy.h"

bool cr_sc_offered(const cr_job *job, int peer)
{
    const cr_link *l = cr_via(job, peer);
    return l && (l->ops->caps & CR_CAP_GET) && l->ops->get;
}

static bool refusal(int rc)
{
    return rc == -EPERM || rc == -EACCES || rc == -ENOSYS;
}

/* A single copy of BUSY_COPY bytes or more may take seconds on a busy
 * machine, inside a wait whose rank the status board still shows blocked: the
 * rank shows itself busy meanwhile, so that the hang watchdog does not take the
 * copy for a deadlock (mpi_large's 2 GiB receive beside other tests was
 * reported as one, its rank "waiting" in MPI_Wait for the message it was
 * copying). */
#define BUSY_COPY (16u << 20)

/* The copy itself, if single copy with peer is on: 0 or -errno (-ENOSYS: off,
 * or the transport lacks the operation). A refusal turns it off for peer. */
static int copy(cr_job *job, int peer, bool write, const struct iovec *local,
                const struct iovec *remote, int n)
{
    unsigned what = (write ? CR_SC_WRITE : CR_SC_READ) | (n > 1 ? CR_SC_VEC : 0);
    if (!cr_sc_on(job, peer, what)) return -ENOSYS;
    const cr_link *l = cr_via(job, peer);
    size_t len = 0;
    for (int i = 0; i < n; i++) len += local[i].iov_len;
    bool busy = len >= BUSY_COPY && job->host.base;
    if (busy) cr_host_report_busy(&job->host, 1);
    int rc;
    if (n > 1)
        rc = write ? l->ops->putv(l->ctx, peer, local, remote, n)
                   : l->ops->getv(l->ctx, peer, local, remote, n);
    else if (write)
        rc =
            l->ops->put(l->ctx, peer, (uintptr_t)remote->iov_base, local->iov_base, local->iov_len);
    else
        rc =
            l->ops->get(l->ctx, peer, local->iov_base, (uintptr_t)remote->iov_base, local->iov_len);
    if (busy) cr_host_report_busy(&job->host, 0);
    if (rc && refusal(rc)) job->single_copy[peer] = 0; /* messages from now on */
    return rc;
}

/* A copy failed other than by a refusal. The peer is gone (ESRCH): it died,
 * and the launcher is ending the job; wait for that, so that the report names
 * the rank that died rather than this one. */
__attribute__((noreturn, cold)) static void copy_failed(cr_job *job, const char *op, int peer,
                                                        size_t len, int rc, bool write)
{
    if (rc == -ESRCH)
        for (int i = 0; i < 100 && cr_tp_gone(job, peer) == 0; i++)
            usleep(100000); /* SIGTERM from the launcher ends this */
    cr_fatal(job, op, "%s %zu bytes %s rank %d failed: %s%s", write ? "writing" : "reading", len,
             write ? "to" : "from", peer, strerror(-rc), rc == -ESRCH ? " (rank has died)" : "");
}

static bool copy_or_die(cr_job *job, const char *op, int peer, bool write, void *local,
                        uint64_t addr, size_t len)
{
    if (!len) return true;
    struct iovec l = {local, len}, r = {(void *)(uintptr_t)addr, len};
    int rc = copy(job, peer, write, &l, &r, 1);
    if (!rc) return true;
    if (refusal(rc)) return false;
    copy_failed(job, op, peer, len, rc, write);
}

bool cr_sc_read(cr_job *job, const char *op, int peer, void *dst, uint64_t addr, size_t len)
{
    return copy_or_die(job, op, peer, false, dst, addr, len);
}

bool cr_sc_write(cr_job *job, const char *op, int peer, uint64_t addr, const void *src, size_t len)
{
    return copy_or_die(job, op, peer, true, (void *)src, addr, len);
}

bool cr_sc_try(cr_job *job, int peer, bool write, const struct iovec *local,
               const struct iovec *remote, int n)
{
    return copy(job, peer, write, local, remote, n) == 0;
}
