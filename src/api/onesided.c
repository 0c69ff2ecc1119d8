/* The native one-sided calls (courier.h), after the Meiko CS-2's Elan (seed
 * 001): regions under a key, put and get with remote events, atomics on 64-bit
 * words, the broadcast put. Arguments are checked here; the transfers are the
 * engine's (src/core/rma.c), the tables of the group's memory src/coll/coll_rma.c.
 *
 * Invariants:
 *  - keys are slots of job->native->regions, given out in the order of the
 *    collective calls, so the same on every rank; a freed key is refused;
 *  - every transfer is checked against the target's published length before
 *    it starts: nothing is ever written outside a region;
 *  - a handle is listed in native->pend from its transfer's start until the
 *    wait or the test that reports it done, and then never again: a second
 *    wait is refused;
 *  - the event counters of a rank are published with its first region, on
 *    every rank at once (the region calls are collective). */
#include <stdlib.h>
#include <string.h>

#include "native.h"

static cr_native *events_ready(cr_job *job, const char *call)
{
    cr_native *n = job->native;
    if (n->events) return n;
    n->events = cr_shared_alloc(job, CR_NEVENTS * sizeof(uint64_t), &n->evsh);
    if (!n->events) {
        n->evsh = (cr_shared){.fd = -1};
        n->events = calloc(CR_NEVENTS, sizeof(uint64_t));
        if (!n->events) cr_fatal(job, call, "out of memory for the event counters");
    }
    return n;
}

/* Collective: the first region call publishes every rank's events too. */
static void events_publish(cr_job *job, const char *call)
{
    cr_native *n = events_ready(job, call);
    if (n->evt.pub) return;
    cr_coll_publish(job, &n->group, call, n->events, CR_NEVENTS * sizeof(uint64_t),
                    n->evsh.fd >= 0 ? &n->evsh : NULL, CR_PUB_ATOMICS, &n->evt);
}

static int region_add(cr_job *job, const char *call, void *base, size_t len, void *alloc,
                      const cr_shared *sh)
{
    cr_native *n = job->native;
    events_publish(job, call);
    int key = 0;
    while (key < n->nregions && n->regions[key].used) key++;
    if (key == n->nregions) {
        cr_region *r = realloc(n->regions, (size_t)(n->nregions + 1) * sizeof *r);
        if (!r) cr_fatal(job, call, "out of memory for region %d", key);
        n->regions = r;
        n->nregions++;
    }
    cr_region *r = &n->regions[key];
    *r = (cr_region){.used = true, .alloc = alloc, .sh = sh ? *sh : (cr_shared){.fd = -1}};
    cr_coll_publish(job, &n->group, call, base, len, sh, CR_PUB_ATOMICS, &r->t);
    return key;
}

int cr_region_register(void *base, size_t len)
{
    cr_job *job = cr_native_enter("cr_region_register");
    if (!base && len)
        cr_fatal(job, "cr_region_register", "base is NULL but len is %zu (NULL only with 0)", len);
    int key = region_add(job, "cr_region_register", base, len, NULL, NULL);
    cr_native_leave(job);
    return key;
}

void *cr_region_alloc(size_t len, int *key)
{
    cr_job *job = cr_native_enter("cr_region_alloc");
    if (!key) cr_fatal(job, "cr_region_alloc", "key is NULL");
    cr_shared sh;
    void *p = cr_shared_alloc(job, len, &sh);
    if (!p) {
        /* no shared memory here: private memory, reached through the service */
        if (posix_memalign(&p, 64, len ? len : 64))
            cr_fatal(job, "cr_region_alloc", "out of memory for %zu bytes", len);
        memset(p, 0, len);
        sh = (cr_shared){.fd = -1};
    }
    *key = region_add(job, "cr_region_alloc", p, len, p, sh.fd >= 0 ? &sh : NULL);
    cr_native_leave(job);
    return p;
}

static cr_region *region_get(cr_job *job, const char *call, int key)
{
    cr_native *n = job->native;
    if (key < 0 || key >= n->nregions || !n->regions[key].used)
        cr_fatal(job, call, "region key %d is not a registered region (%s)", key,
                 key >= 0 && key < n->nregions ? "it was freed" : "no such key");
    return &n->regions[key];
}

void cr_region_free(int key)
{
    cr_job *job = cr_native_enter("cr_region_free");
    cr_region *r = region_get(job, "cr_region_free", key);
    cr_rma_flush(job, "cr_region_free", -1);
    cr_coll_barrier(job, &job->native->group, "cr_region_free"); /* nobody uses it any more */
    cr_coll_unpublish(job, &r->t);
    if (r->alloc) {
        if (r->sh.fd >= 0)
            cr_shared_free(r->alloc, &r->sh);
        else
            free(r->alloc);
    }
    r->used = false;
    cr_native_leave(job);
}

/* The target of len bytes at off in rank's region key, checked. */
static cr_rtarget target(cr_job *job, const char *call, int rank, int key, size_t off, size_t len)
{
    if (rank < 0 || rank >= job->size)
        cr_fatal(job, call, "rank %d is out of range (the job has ranks 0..%d)", rank,
                 job->size - 1);
    cr_region *r = region_get(job, call, key);
    uint64_t have = r->t.pub[rank].len;
    if (off > have || len > have - off)
        cr_fatal(job, call,
                 "%zu bytes at offset %zu are outside region %d of rank %d, which has %llu bytes",
                 len, off, key, rank, (unsigned long long)have);
    return cr_rtable_at(&job->native->group, &r->t, rank, off);
}

static cr_rtarget event_target(cr_job *job, const char *call, int rank, int ev)
{
    if (ev < 0 || ev >= CR_NEVENTS)
        cr_fatal(job, call, "remote event %d is out of range (events are 0..%d)", ev,
                 CR_NEVENTS - 1);
    return cr_rtable_at(&job->native->group, &job->native->evt, rank, (uint64_t)ev * 8);
}

static cr_handle handle_new(cr_job *job, uint64_t ticket)
{
    cr_native *n = job->native;
    if (n->npend == n->cpend) {
        int c = n->cpend ? 2 * n->cpend : 16;
        cr_pending *p = realloc(n->pend, (size_t)c * sizeof *p);
        if (!p) cr_fatal(job, "cr_put", "out of memory for handles");
        n->pend = p;
        n->cpend = c;
    }
    cr_handle h = ++n->next_handle;
    n->pend[n->npend++] = (cr_pending){h, ticket};
    return h;
}

static cr_handle transfer(bool put, int rank, int key, size_t off, void *buf, size_t len,
                          int remote_event)
{
    const char *call = put ? "cr_put" : "cr_get";
    cr_job *job = cr_native_enter(call);
    if (!buf && len) cr_fatal(job, call, "the buffer is NULL but len is %zu", len);
    cr_rtarget t = target(job, call, rank, key, off, len);
    cr_rtarget ev;
    cr_rma_opt opt = {0};
    if (remote_event != CR_NO_EVENT) {
        ev = event_target(job, call, rank, remote_event);
        opt.ev = &ev;
    }
    uint64_t ticket =
        put ? cr_rma_put(job, call, &t, buf, len, &opt) : cr_rma_get(job, call, &t, buf, len, &opt);
    cr_handle h = handle_new(job, ticket);
    cr_native_leave(job);
    return h;
}

cr_handle cr_put(int rank, int key, size_t off, const void *src, size_t len, int remote_event)
{
    return transfer(true, rank, key, off, (void *)src, len, remote_event);
}

cr_handle cr_get(int rank, int key, size_t off, void *dst, size_t len, int remote_event)
{
    return transfer(false, rank, key, off, dst, len, remote_event);
}

static int pending_find(cr_job *job, const char *call, cr_handle h)
{
    cr_native *n = job->native;
    for (int i = 0; i < n->npend; i++)
        if (n->pend[i].handle == h) return i;
    cr_fatal(job, call,
             "handle %llu is not a transfer in flight (%s): wait for each handle exactly once",
             (unsigned long long)h,
             h && h <= n->next_handle ? "it was waited for already" : "no call returned it");
}

static bool ticket_done(void *p)
{
    cr_job *job = cr_job_get();
    return cr_rma_done(job, *(uint64_t *)p);
}

void cr_handle_wait(cr_handle h)
{
    cr_job *job = cr_native_enter("cr_handle_wait");
    cr_native *n = job->native;
    int i = pending_find(job, "cr_handle_wait", h);
    uint64_t ticket = n->pend[i].ticket;
    n->pend[i] = n->pend[--n->npend];
    if (!cr_rma_done(job, ticket)) cr_wait_until(job, "cr_handle_wait", ticket_done, &ticket, NULL);
    cr_native_leave(job);
}

int cr_handle_test(cr_handle h)
{
    cr_job *job = cr_native_enter("cr_handle_test");
    cr_native *n = job->native;
    int i = pending_find(job, "cr_handle_test", h);
    int done = cr_rma_done(job, n->pend[i].ticket);
    if (!done && cr_progress(job)) done = cr_rma_done(job, n->pend[i].ticket);
    if (done)
        n->pend[i] = n->pend[--n->npend];
    else
        cr_poll_missed_direct(job, "cr_handle_test");
    cr_native_leave(job);
    return done;
}

void cr_quiet(void)
{
    cr_job *job = cr_native_enter("cr_quiet");
    cr_rma_flush(job, "cr_quiet", -1);
    cr_native_leave(job);
}

void cr_put_bcast(int first, int last, int key, size_t off, const void *src, size_t len)
{
    cr_job *job = cr_native_enter("cr_put_bcast");
    const char *call = "cr_put_bcast";
    if (first < 0 || last >= job->size || first > last)
        cr_fatal(job, call, "ranks %d..%d are not a range of the job's ranks 0..%d", first, last,
                 job->size - 1);
    if (!src && len) cr_fatal(job, call, "src is NULL but len is %zu", len);
    for (int r = first; r <= last; r++) target(job, call, r, key, off, len); /* all checked first */
    /* Like the Elite's broadcast, every copy leaves at once; then wait for all.
     * Simulated, the puts are one broadcast of the model's (its hardware's,
     * where it has one: the CS-2's). */
    cr_rma_opt o;
    const cr_rma_opt *opt = cr_rma_bcast_begin(job, first, last, &o);
    for (int r = first; r <= last; r++) {
        cr_rtarget t = target(job, call, r, key, off, len);
        cr_rma_put(job, call, &t, src, len, opt);
    }
    cr_rma_bcast_end(job);
    cr_rma_flush(job, call, -1);
    cr_native_leave(job);
}

/* ---- events ----------------------------------------------------------------- */

int cr_event_new(void)
{
    cr_job *job = cr_native_enter("cr_event_new");
    cr_native *n = events_ready(job, "cr_event_new");
    int ev = 0;
    while (ev < CR_NEVENTS && n->ev_used[ev]) ev++;
    if (ev == CR_NEVENTS)
        cr_fatal(job, "cr_event_new", "all %d events are in use: free some with cr_event_free",
                 CR_NEVENTS);
    n->ev_used[ev] = 1; /* its counter is 0: never used, or cleared when freed */
    cr_native_leave(job);
    return ev;
}

static uint64_t *event_mine(cr_job *job, const char *call, int ev)
{
    cr_native *n = events_ready(job, call);
    if (ev < 0 || ev >= CR_NEVENTS || !n->ev_used[ev])
        cr_fatal(job, call, "event %d is not an event of this rank (%s)", ev,
                 ev < 0 || ev >= CR_NEVENTS ? "out of range"
                                            : "not made by cr_event_new, or freed");
    return &n->events[ev];
}

void cr_event_free(int ev)
{
    cr_job *job = cr_native_enter("cr_event_free");
    __atomic_store_n(event_mine(job, "cr_event_free", ev), 0, __ATOMIC_SEQ_CST);
    job->native->ev_used[ev] = 0;
    cr_native_leave(job);
}

/* Take one from the counter if it is positive. */
static bool event_take(void *p)
{
    uint64_t *w = p;
    uint64_t v = __atomic_load_n(w, __ATOMIC_ACQUIRE);
    while (v > 0)
        if (__atomic_compare_exchange_n(w, &v, v - 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return true;
    return false;
}

/* Whether the counter is positive: a wait's readiness test, which the waiting
 * loop may call any number of times, so it takes nothing. */
static bool event_set(void *p)
{
    return __atomic_load_n((uint64_t *)p, __ATOMIC_ACQUIRE) > 0;
}

void cr_event_wait(int ev)
{
    cr_job *job = cr_native_enter("cr_event_wait");
    uint64_t *w = event_mine(job, "cr_event_wait", ev);
    /* Taken after the wait, not as its test: a test that took lost the count
     * whenever the waiting point looked before the loop did (test
     * native_rma_events_sleep hung 4 runs in 5). Another thread may take it
     * first: then wait again. */
    while (!event_take(w)) cr_rma_wait_word(job, "cr_event_wait", event_set, w);
    cr_native_leave(job);
}

int cr_event_test(int ev)
{
    cr_job *job = cr_native_enter("cr_event_test");
    uint64_t *w = event_mine(job, "cr_event_test", ev);
    int got = event_take(w);
    if (!got && cr_progress(job)) got = event_take(w);
    if (!got) cr_poll_missed_direct(job, "cr_event_test");
    cr_native_leave(job);
    return got;
}

/* ---- atomics ---------------------------------------------------------------- */

static uint64_t amo(const char *call, int rank, int key, size_t off, int op, uint64_t a, uint64_t b)
{
    cr_job *job = cr_native_enter(call);
    cr_rtarget t = target(job, call, rank, key, off, 8);
    if (t.addr % 8)
        cr_fatal(job, call,
                 "offset %zu of region %d is at %#llx on rank %d: atomics need 8-byte "
                 "aligned words",
                 off, key, (unsigned long long)t.addr, rank);
    uint64_t old = cr_rma_amo(job, call, &t, op, a, b);
    cr_native_leave(job);
    return old;
}

uint64_t cr_swap(int rank, int key, size_t off, uint64_t value)
{
    return amo("cr_swap", rank, key, off, CR_AMO_SWAP, value, 0);
}

uint64_t cr_fetch_add(int rank, int key, size_t off, uint64_t value)
{
    return amo("cr_fetch_add", rank, key, off, CR_AMO_ADD, value, 0);
}

/* The two calls a spin lock or a flag loop repeats: a miss gives the core up
 * every few calls with more ranks than cores (engine.h: cr_poll_spun). */
static int spun(int missed)
{
    if (missed) {
        cr_job *job = cr_job_get();
        cr_lock(job);
        cr_poll_spun(job, true);
        cr_unlock(job);
    }
    return missed;
}

int cr_test_and_set(int rank, int key, size_t off)
{
    return spun(amo("cr_test_and_set", rank, key, off, CR_AMO_SWAP, 1, 0) != 0);
}

uint64_t cr_cas(int rank, int key, size_t off, uint64_t expected, uint64_t desired)
{
    return amo("cr_cas", rank, key, off, CR_AMO_CAS, desired, expected);
}

int cr_remote_test(int rank, int key, size_t off, uint64_t value)
{
    return !spun(amo("cr_remote_test", rank, key, off, CR_AMO_READ, 0, 0) != value);
}
