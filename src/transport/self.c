/* Self transport: messages a rank sends to itself. Delivery is immediate and
 * always accepted (the engine buffers unexpected self messages without limit,
 * so a blocking send to oneself never waits for a receive that the same thread
 * has yet to post); get is a plain copy. In a job of one rank it is the only
 * transport, and its sleep/wake (a process-private futex) let the progress
 * thread wait without spinning. */
#define _GNU_SOURCE
#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../core/engine.h"

static int self_send_am(cr_job *job, int peer, const cr_hdr *h, const void *payload, size_t len)
{
    (void)peer;
    cr_engine_deliver(job, job->rank, h, payload, len);
    return 0;
}

static int self_poll(cr_job *job)
{
    (void)job;
    return 0;
}

static int self_get(cr_job *job, int peer, void *dst, uint64_t addr, size_t len)
{
    (void)job;
    (void)peer;
    memcpy(dst, (const void *)(uintptr_t)addr, len);
    return 0;
}

static int self_put(cr_job *job, int peer, uint64_t addr, const void *src, size_t len)
{
    (void)job;
    (void)peer;
    memcpy((void *)(uintptr_t)addr, src, len);
    return 0;
}

static void self_nothing(cr_job *job)
{
    (void)job;
}

static _Atomic uint32_t self_bell;

static void self_sleep(cr_job *job, int timeout_ms, bool (*ready)(void *), void *arg)
{
    uint32_t v = atomic_load(&self_bell);
    if (ready && ready(arg)) return;
    struct timespec ts = {timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L};
    cr_unlock(job);
    syscall(SYS_futex, (uint32_t *)&self_bell, FUTEX_WAIT_PRIVATE, v, &ts, NULL, 0);
    cr_lock(job);
}

static void self_wake(cr_job *job, int peer)
{
    (void)job;
    (void)peer;
    atomic_fetch_add(&self_bell, 1);
    syscall(SYS_futex, (uint32_t *)&self_bell, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static int self_peer_gone(cr_job *job, int peer)
{
    (void)job;
    (void)peer;
    return 0;
}

static void self_report_wait(cr_job *job, const cr_waitinfo *w)
{
    (void)job;
    (void)w;
}

static void self_report_busy(cr_job *job, int busy)
{
    (void)job;
    (void)busy;
}

static size_t self_max_payload(cr_job *job)
{
    (void)job;
    return SIZE_MAX;
}

const cr_transport cr_transport_self = {
    .name = "self",
    .send_am = self_send_am,
    .poll = self_poll,
    .get = self_get,
    .put = self_put,
    .flush = self_nothing,
    .sleep = self_sleep,
    .wake = self_wake,
    .nudge = self_wake,
    .peer_gone = self_peer_gone,
    .report_wait = self_report_wait,
    .report_busy = self_report_busy,
    .max_payload = self_max_payload,
};
