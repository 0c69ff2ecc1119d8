/* The simulated mode's segment (vtime.h): its layout, the byte rings, and a
 * rank's side of the virtual clock (counting compute, syncing with the
 * simulator, blocking until the next arrival).
 *
 * Invariants:
 *  - a rank's clock only grows, and it stores it (release) before it says
 *    anything to the simulator; a message is stamped with the clock plus its
 *    send overhead and is in the out ring before the clock moves there, so
 *    the simulator, reading a clock before the ring, may take that clock plus
 *    the rank's look as a lower bound of every message it has not read yet;
 *  - look only comes down, stored before the clock moves on, and a rank that
 *    lowers it sends nothing into the network before its clock then plus the
 *    old look (floor): whatever clock the simulator read with whichever look,
 *    the bound holds;
 *  - a ring has one producer and one consumer: the producer alone writes
 *    head, the consumer alone tail; a record is published by the release
 *    store of head after its bytes;
 *  - a rank waits for the simulator only on its slot's wake word (as a
 *    context, in its process's scheduler, which the wake queue wakes), and
 *    empties its in ring each time it wakes (once the simulator has seen how
 *    far a block had read it), so the simulator can always write on. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "contexts.h"
#include "host.h"
#include "vtime.h"

#define ALIGN64(x) (((x) + 63) & ~(size_t)63)

/* Each rank's two rings: smaller as ranks grow (measured at 256 ranks of an
 * all-to-all: 16 KiB rings as fast as 32 KiB ones, 8 MiB less; bench/results/sim.md). */
size_t cr_vt_ring_bytes(int nranks)
{
    return nranks <= 64 ? 65536 : nranks <= 128 ? 32768 : 16384;
}

static size_t ring_total(int nranks)
{
    return sizeof(cr_vt_ring) + cr_vt_ring_bytes(nranks);
}

static uint32_t wq_cap(int nranks)
{
    uint32_t c = 64;
    while (c < 2 * (uint32_t)nranks) c *= 2;
    return c;
}

static size_t rings_off(int nranks)
{
    size_t slots = ALIGN64(sizeof(cr_vt_head)) + (size_t)nranks * sizeof(cr_vt_slot);
    return ALIGN64(ALIGN64(slots) + wq_cap(nranks) * sizeof(_Atomic int32_t));
}

size_t cr_vt_segment_size(int nranks)
{
    return rings_off(nranks) + (size_t)nranks * 2 * ring_total(nranks);
}

void cr_vt_segment_init(void *base, int nranks)
{
    cr_vt_head *h = base;
    h->magic = CR_VT_MAGIC;
    h->nranks = (uint32_t)nranks;
    h->ring_bytes = cr_vt_ring_bytes(nranks);
    h->slot_off = ALIGN64(sizeof(cr_vt_head));
    h->wq_off = ALIGN64(h->slot_off + (size_t)nranks * sizeof(cr_vt_slot));
    h->wq_cap = wq_cap(nranks);
    h->ring_off = rings_off(nranks);
    h->total = cr_vt_segment_size(nranks);
    atomic_store(&h->done, -1);
    for (int r = 0; r < nranks; r++) {
        cr_vt_slot *s = cr_vt_slot_of(base, r);
        atomic_store(&s->held_from, CR_VT_NEVER);
        atomic_store(&s->block_head, CR_VT_SEEN);
        atomic_store(&s->state, CR_VT_RUN);
    }
}

/* ---- rings ---------------------------------------------------------------- */

cr_vt_rec *cr_vt_ring_reserve(cr_vt_ring *q, uint64_t cap, uint32_t bytes)
{
    uint64_t head = atomic_load_explicit(&q->head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&q->tail, memory_order_acquire);
    uint64_t pos = head % cap, pad = pos + bytes > cap ? cap - pos : 0;
    if (cap - (head - tail) < pad + bytes) return NULL;
    if (pad) {
        cr_vt_rec *p = (cr_vt_rec *)(q->data + pos);
        p->bytes = (uint32_t)pad;
        p->kind = CR_VT_REC_PAD;
        atomic_store_explicit(&q->head, head + pad, memory_order_release);
        pos = 0;
    }
    return (cr_vt_rec *)(q->data + pos);
}

void cr_vt_ring_put(cr_vt_ring *q, cr_vt_rec *rec)
{
    uint64_t head = atomic_load_explicit(&q->head, memory_order_relaxed);
    atomic_store_explicit(&q->head, head + rec->bytes, memory_order_release);
}

cr_vt_rec *cr_vt_ring_peek(cr_vt_ring *q, uint64_t cap)
{
    for (;;) {
        uint64_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
        if (tail == atomic_load_explicit(&q->head, memory_order_acquire)) return NULL;
        cr_vt_rec *rec = (cr_vt_rec *)(q->data + tail % cap);
        if (rec->kind != CR_VT_REC_PAD) return rec;
        atomic_store_explicit(&q->tail, tail + rec->bytes, memory_order_release);
    }
}

void cr_vt_ring_take(cr_vt_ring *q, const cr_vt_rec *rec)
{
    uint64_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
    atomic_store_explicit(&q->tail, tail + rec->bytes, memory_order_release);
}

/* ---- the wake queue ----------------------------------------------------------- */

static _Atomic int32_t *wq(void *base)
{
    return (_Atomic int32_t *)((char *)base + cr_vt_head_of(base)->wq_off);
}

bool cr_vt_wq_push(void *base, int r)
{
    cr_vt_head *h = base;
    uint64_t t = atomic_load_explicit(&h->wq_tail, memory_order_relaxed);
    if (t - atomic_load_explicit(&h->wq_head, memory_order_acquire) >= h->wq_cap) return false;
    atomic_store_explicit(&wq(base)[t & (h->wq_cap - 1)], r, memory_order_relaxed);
    atomic_store_explicit(&h->wq_tail, t + 1, memory_order_release);
    return true;
}

/* An entry is read before the claim: the simulator refills entry i only once
 * head has passed i, and then the claim of i fails. */
int cr_vt_wq_pop(void *base)
{
    cr_vt_head *h = base;
    uint64_t i = atomic_load_explicit(&h->wq_head, memory_order_acquire);
    for (;;) {
        if (i >= atomic_load_explicit(&h->wq_tail, memory_order_acquire)) return -1;
        int r = atomic_load_explicit(&wq(base)[i & (h->wq_cap - 1)], memory_order_relaxed);
        if (atomic_compare_exchange_weak_explicit(&h->wq_head, &i, i + 1, memory_order_acq_rel,
                                                  memory_order_acquire))
            return r;
    }
}

void cr_vt_wake_slot(cr_vt_slot *sl)
{
    syscall(SYS_futex, &sl->wake, FUTEX_WAKE, 1, NULL, NULL, 0);
}

#define REC_WARM 1152 /* bytes of the next in-ring record: its header and 1 KiB */
void cr_vt_prefetch_rank(void *base, int r)
{
    const cr_vt_slot *sl = cr_vt_slot_of(base, r);
    for (size_t i = 0; i < sizeof *sl; i += 64) __builtin_prefetch((const char *)sl + i, 0, 3);
    const cr_vt_ring *in = cr_vt_ring_of(base, r, 1);
    uint64_t cap = cr_vt_head_of(base)->ring_bytes;
    uint64_t pos = atomic_load_explicit(&in->tail, memory_order_relaxed) % cap;
    for (uint64_t i = 0; i < REC_WARM && pos + i < cap; i += 64)
        __builtin_prefetch(in->data + pos + i, 0, 3);
}

int cr_vt_wq_help(void *base, int max)
{
    int n = 0, r;
    if (cr_vt_head_of(base)->contexts) return 0; /* the ranks' process takes the queue */
    while (n < max && (r = cr_vt_wq_pop(base)) >= 0) {
        cr_vt_wake_slot(cr_vt_slot_of(base, r));
        n++;
    }
    return n;
}

/* ---- bells ---------------------------------------------------------------- */

void cr_vt_bell_ring(_Atomic uint32_t *bell, _Atomic uint32_t *sleeping)
{
    atomic_fetch_add_explicit(bell, 1, memory_order_seq_cst);
    if (atomic_load_explicit(sleeping, memory_order_seq_cst))
        syscall(SYS_futex, bell, FUTEX_WAKE, 1, NULL, NULL, 0);
}

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void cr_vt_yield(cr_vt_waiter *w)
{
    int64_t t0 = mono_ns();
    if (w->short_slice && t0 - w->lost_at > CR_SLICE_KEEP_NS) {
        w->short_slice = false; /* a second without a loss: the default slice again */
        cr_host_short_slice(false);
    }
    sched_yield();
    int64_t t1 = mono_ns();
    if (t1 - t0 < CR_YIELD_SLICE_NS) return;
    w->lost_at = t1;
    if (!w->short_slice) cr_host_short_slice(true);
    w->short_slice = true;
}

void cr_vt_bell_wait(_Atomic uint32_t *bell, _Atomic uint32_t *sleeping, uint32_t seen,
                     long spin_ns, long sleep_ns, bool (*ready)(void *), void *arg, cr_vt_waiter *w)
{
    int64_t t0 = mono_ns();
    for (int i = 0;; i++) {
        if (ready(arg)) return;
        if (i < 64) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
            continue;
        }
        cr_vt_yield(w);
        if (mono_ns() - t0 > spin_ns) break;
    }
    atomic_store(sleeping, 1);
    atomic_thread_fence(memory_order_seq_cst);
    if (!ready(arg)) { /* a ring after this look changes the bell from seen */
        struct timespec ts = {sleep_ns / 1000000000L, sleep_ns % 1000000000L};
        syscall(SYS_futex, bell, FUTEX_WAIT, seen, &ts, NULL, 0);
    }
    atomic_store(sleeping, 0);
}

void cr_vt_ring_host(void *base)
{
    cr_vt_head *h = base;
    cr_vt_bell_ring(&h->host_bell, &h->host_sleeping);
}

static bool host_has_work(void *base)
{
    cr_vt_head *h = base;
    return atomic_load_explicit(&h->wq_head, memory_order_acquire) !=
               atomic_load_explicit(&h->wq_tail, memory_order_acquire) ||
           atomic_load_explicit(&h->wq_lost, memory_order_acquire) ||
           atomic_load_explicit(&h->stopped, memory_order_acquire);
}

/* The simulator answers within microseconds while it has work: look for a
 * while (HOST_SPIN_NS) before the system call of a sleep and of its wake. */
#define HOST_SPIN_NS 50000
void cr_vt_host_idle(void *base, cr_vt_waiter *w)
{
    cr_vt_head *h = base;
    uint32_t seen = atomic_load_explicit(&h->host_bell, memory_order_acquire);
    cr_vt_bell_wait(&h->host_bell, &h->host_sleeping, seen, HOST_SPIN_NS, 100000000L, host_has_work,
                    base, w);
}

/* ---- a rank's clock --------------------------------------------------------- */

static int64_t cpu_ns(void)
{
    return (int64_t)cr_host_clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

static int64_t wall_ns(void)
{
    return (int64_t)cr_host_clock_ns(CLOCK_MONOTONIC);
}

/* Compute is counted from a reading of the thread's CPU clock (mark) to the
 * next (cr_vt_now). That clock is a system call, 1.2-2.8 us on this project's
 * virtual machine, and the time between two readings holds part of both: times
 * the iPSC/2's 2000 it made a ping-pong of empty loop bodies 3.4-7.8 ms one way
 * instead of 350 us. So the monotonic clock (vDSO, tens of ns) is read just
 * after a mark and just before the next reading, and the shorter of the two
 * spans counts: the CPU clock's where the thread lost its CPU meanwhile. */
static void mark_now(cr_vt *v)
{
    v->cpu_last = cpu_ns();
    v->wall_last = wall_ns();
}

int cr_vt_probe(int fd, int nranks, size_t *total)
{
    cr_vt_head hd;
    int rc = pread(fd, &hd, sizeof hd, 0) != (ssize_t)sizeof hd ? -EINVAL
             : hd.magic != CR_VT_MAGIC                          ? -EPROTO /* another build's */
             : hd.nranks != (uint32_t)nranks                    ? -EINVAL
                                                                : 0;
    *total = hd.total;
    return rc;
}

int cr_vt_attach(cr_vt *v, int fd, int rank, int size)
{
    memset(v, 0, sizeof *v);
    size_t total;
    int rc = cr_vt_probe(fd, size, &total);
    if (rc) {
        cr_ctx_close_fd(fd);
        return rc;
    }
    void *base = cr_ctx_map(fd, total); /* (shared by contexts: contexts.h) */
    if (base == MAP_FAILED) return -errno;
    v->base = base;
    v->len = total;
    v->hd = base;
    v->me = cr_vt_slot_of(base, rank);
    v->rank = rank;
    v->owner = pthread_self();
    v->size = size;
    if (v->hd->cpu_factor > 0) mark_now(v);
    return 0;
}

void cr_vt_detach(cr_vt *v)
{
    if (!v->base) return;
    free(v->chains);
    v->chains = NULL;
    v->nchains = v->capchains = 0;
    cr_ctx_unmap(v->base, v->len);
    v->base = NULL;
}

static inline void set_clock(cr_vt *v, int64_t c)
{
    atomic_store_explicit(&v->me->clock, c, memory_order_release);
}

int64_t cr_vt_now(cr_vt *v)
{
    int64_t c = atomic_load_explicit(&v->me->clock, memory_order_relaxed);
    double f = v->hd->cpu_factor;
    if (f > 0 && !v->in_call) {
        int64_t wall = wall_ns(), cpu = cpu_ns(), span = cpu - v->cpu_last;
        if (wall - v->wall_last < span) span = wall - v->wall_last;
        int64_t dt = (int64_t)((double)span * 1000.0 * f);
        v->cpu_last = cpu;
        v->wall_last = wall_ns();
        if (dt > 0) {
            c += dt;
            v->me->acct.compute += dt;
            set_clock(v, c);
        }
    }
    return c;
}

int64_t cr_vt_read(cr_vt *v)
{
    if (pthread_equal(pthread_self(), v->owner)) return cr_vt_now(v);
    return atomic_load_explicit(&v->me->clock, memory_order_acquire);
}

int64_t cr_vt_timer(cr_vt *v)
{
    if (!pthread_equal(pthread_self(), v->owner))
        return atomic_load_explicit(&v->me->clock, memory_order_acquire);
    int64_t c = cr_vt_now(v);
    if (v->hd->timer_ps) {
        set_clock(v, c + v->hd->timer_ps);
        v->me->acct.compute += v->hd->timer_ps;
    }
    return c;
}

void cr_vt_mark(cr_vt *v)
{
    if (v->hd->cpu_factor > 0) mark_now(v);
}

void cr_vt_call_enter(cr_vt *v)
{
    if (v->hd->cpu_factor <= 0 || !pthread_equal(pthread_self(), v->owner)) return;
    if (!v->in_call) cr_vt_now(v);
    v->in_call++;
}

void cr_vt_call_leave(cr_vt *v)
{
    if (v->hd->cpu_factor <= 0 || !pthread_equal(pthread_self(), v->owner) || !v->in_call) return;
    if (!--v->in_call) cr_vt_mark(v);
}

int cr_vt_compute_begin(cr_vt *v)
{
    int saved = v->in_call;
    if (v->hd->cpu_factor <= 0 || !saved || !pthread_equal(pthread_self(), v->owner)) return -1;
    v->in_call = 0;
    cr_vt_mark(v);
    return saved;
}

void cr_vt_compute_end(cr_vt *v, int saved)
{
    if (saved < 0) return;
    cr_vt_now(v);
    v->in_call = saved;
}

void cr_vt_use_class(cr_vt *v, int cls)
{
    int64_t o = v->hd->cost[cls].o_send;
    int64_t look = atomic_load_explicit(&v->me->look, memory_order_relaxed); /* ours */
    if (o >= look) return;
    int64_t c = cr_vt_now(v);
    atomic_store_explicit(&v->me->look, o, memory_order_seq_cst);
    if (c + look > v->floor) v->floor = c + look;
}

void cr_vt_spend(cr_vt *v, int64_t dt, int64_t *account)
{
    set_clock(v, atomic_load_explicit(&v->me->clock, memory_order_relaxed) + dt);
    if (account) *account += dt;
}

void cr_vt_group_begin(cr_vt *v, int cls, int lo, int hi)
{
    if (!v->hd->hw_bcast) return;
    cr_vt_use_class(v, cls); /* its lookahead before the clock is taken */
    int64_t c = cr_vt_now(v);
    cr_vt_group *g = &v->grp;
    *g = (cr_vt_group){
        .on = true, .cls = cls, .lo = lo, .hi = hi, .lead = -1, .cur = -1, .id = g->id + 1};
    g->clock = g->end = c;
}

void cr_vt_group_end(cr_vt *v)
{
    cr_vt_group *g = &v->grp;
    if (!g->on) return;
    g->on = false;
    cr_vt_spend(v, g->end - g->clock, &v->me->acct.send);
}

bool cr_vt_group_stamp(cr_vt *v, int cls, int peer, int64_t cost, int64_t *t, cr_vt_bcast *bc)
{
    cr_vt_group *g = &v->grp;
    if (!g->on || cls != g->cls || peer < g->lo || peer > g->hi) return false;
    /* Something moved the clock (a receive's cost): copies stamped with the
     * lead's times might be behind what the simulator has handled. */
    if (atomic_load_explicit(&v->me->clock, memory_order_relaxed) != g->clock) {
        cr_vt_group_end(v);
        return false;
    }
    if (g->lead < 0) g->lead = peer;
    int ord;
    if (peer == g->lead) {
        if (g->n == CR_VT_GROUP_MSGS) {
            cr_vt_group_end(v);
            return false;
        }
        g->end += cost;
        *t = g->end < v->floor ? v->floor : g->end;
        ord = g->n;
        g->t[g->n++] = *t;
    } else {
        if (peer != g->cur) {
            g->cur = peer;
            g->ord = 0;
        }
        if (g->ord >= g->n) { /* more than the lead had: not a copy */
            cr_vt_group_end(v);
            return false;
        }
        ord = g->ord++;
        *t = g->t[ord];
    }
    *bc = (cr_vt_bcast){.id = g->id,
                        .lo = g->lo,
                        .hi = g->hi,
                        .ord = (uint16_t)ord,
                        .part = peer == g->lead ? CR_VT_GRP_LEAD : CR_VT_GRP_COPY};
    return true;
}

void cr_vt_answer_next(cr_vt *v, int root, uint32_t id, int lo, int hi)
{
    v->answer.on = true;
    v->answer.root = root;
    v->answer.bc = (cr_vt_bcast){.id = id, .lo = lo, .hi = hi, .part = CR_VT_GRP_ANSWER};
}

void cr_vt_answer_mark(cr_vt *v, int cls, int peer, cr_vt_bcast *bc)
{
    if (!v->answer.on || cls != CR_VT_CLASS_ONESIDED || peer != v->answer.root) return;
    v->answer.on = false;
    *bc = v->answer.bc;
}

void cr_vt_hw_next(cr_vt *v, int peer, size_t len, uint32_t ctl, bool answer)
{
    v->hw.len = len;
    v->hw.on = v->hd->hw_answers != 0;
    v->hw.answer = answer;
    v->hw.peer = peer;
    v->hw.ctl = ctl;
}

bool cr_vt_hw_mark(cr_vt *v, int cls, int peer, size_t len, uint32_t *ctl, bool *answer)
{
    if (!v->hw.on || cls != CR_VT_CLASS_ONESIDED || peer != v->hw.peer || len != v->hw.len)
        return false;
    v->hw.on = false;
    *ctl = v->hw.ctl;
    *answer = v->hw.answer;
    return true;
}

void cr_vt_chain_open(cr_vt *v, int peer, int ctx, int32_t tag)
{
    if (v->nchains == v->capchains) {
        int cap = v->capchains ? 2 * v->capchains : 8;
        cr_vt_chain *a = realloc(v->chains, (size_t)cap * sizeof *a);
        if (!a) abort(); /* out of memory for a few bytes */
        v->chains = a;
        v->capchains = cap;
    }
    v->chains[v->nchains++] = (cr_vt_chain){peer, ctx, tag, ++v->chain_ids};
}

uint32_t cr_vt_chain_mark(cr_vt *v, int peer, int ctx, int32_t tag, size_t len, uint32_t *end)
{
    *end = 0;
    for (int i = 0; i < v->nchains; i++) {
        cr_vt_chain *c = &v->chains[i];
        if (c->peer != peer || c->ctx != ctx || c->tag != tag) continue;
        uint32_t id = c->id;
        if (!len) { /* the empty message ends it */
            *end = 1;
            *c = v->chains[--v->nchains];
        }
        return id;
    }
    return 0;
}

void cr_vt_ring_sim(cr_vt *v)
{
    v->unrung = false;
    cr_vt_bell_ring(&v->hd->bell, &v->hd->sleeping);
}

void cr_vt_ring_soon(cr_vt *v)
{
    if (v->hd->contexts)
        v->unrung = true;
    else
        cr_vt_ring_sim(v);
}

/* Until the simulator has answered (state RUN again): drain the in ring each
 * time it writes (and tell it when it waits for room), sleep on the wake word.
 * A block's in ring is not drained until the simulator has seen how far the
 * rank had read it (so the simulator finds what it wrote after that still
 * there). */
#define WAKE_BEFORE_SLEEP 4 /* ranks a rank wakes from the queue before it sleeps */
#define WAKE_ON_ANSWER 2    /* ... and once answered: the woken wake in a tree */
static void await_state(cr_vt *v, uint32_t w)
{
    for (int round = 0;; round++) {
        if (v->drain &&
            atomic_load_explicit(&v->me->block_head, memory_order_acquire) == CR_VT_SEEN)
            v->drain(v->drain_arg);
        if (atomic_load_explicit(&v->me->need_room, memory_order_acquire)) {
            atomic_store(&v->me->need_room, 0);
            cr_vt_ring_sim(v);
        }
        if (atomic_load_explicit(&v->me->state, memory_order_acquire) == CR_VT_RUN) return;
        if (v->hd->contexts) { /* the other ranks run meanwhile (contexts.h) */
            atomic_store(&v->me->sleeping, 1);
            atomic_thread_fence(memory_order_seq_cst);
            if (atomic_load_explicit(&v->me->state, memory_order_acquire) != CR_VT_RUN)
                cr_ctx_wait();
            atomic_store(&v->me->sleeping, 0);
            cr_vt_mark(v); /* their CPU time is not this rank's compute */
            continue;
        }
        /* the answer often comes within microseconds: hand the CPU round a
         * few times (the simulator may share ours) before sleeping */
        if ((uint32_t)round < v->hd->yields) {
            cr_vt_yield(&v->waiter);
            w = atomic_load_explicit(&v->me->wake, memory_order_acquire);
            continue;
        }
        /* idle from here: wake ranks that the simulator answered */
        if (cr_vt_wq_help(v->base, WAKE_BEFORE_SLEEP)) {
            w = atomic_load_explicit(&v->me->wake, memory_order_acquire);
            continue;
        }
        atomic_store(&v->me->sleeping, 1);
        atomic_thread_fence(memory_order_seq_cst);
        if (atomic_load_explicit(&v->me->state, memory_order_acquire) != CR_VT_RUN) {
            struct timespec ts = {1, 0};
            syscall(SYS_futex, &v->me->wake, FUTEX_WAIT, w, &ts, NULL, 0);
        }
        atomic_store(&v->me->sleeping, 0);
        w = atomic_load_explicit(&v->me->wake, memory_order_acquire);
        if (atomic_load(&v->hd->stopped)) {
            /* the simulator ended the job (a deadlock it reported): wait for
             * the launcher's signal rather than run on in a wrong time */
            pause();
        }
    }
}

/* ... then wake ranks of the wake queue, where this one is one of the CPUs
 * that the answers of one pass start at once. */
static void await_answer(cr_vt *v, uint32_t w)
{
    await_state(v, w);
    cr_vt_wq_help(v->base, WAKE_ON_ANSWER);
}

/* Is the in ring complete for every arrival before c? done is read first: the
 * simulator sets held_from before it moves done past that arrival. */
static bool complete_before(cr_vt *v, int64_t c)
{
    int64_t done = atomic_load_explicit(&v->hd->done, memory_order_acquire);
    int64_t held = atomic_load_explicit(&v->me->held_from, memory_order_acquire);
    return done >= c - 1 && held >= c;
}

bool cr_vt_try_sync(cr_vt *v)
{
    int64_t c = cr_vt_now(v);
    if (v->synced < c && complete_before(v, c)) v->synced = c;
    return v->synced >= c;
}

void cr_vt_sync(cr_vt *v)
{
    if (cr_vt_try_sync(v)) return;
    int64_t c = atomic_load_explicit(&v->me->clock, memory_order_relaxed);
    uint32_t w = atomic_load_explicit(&v->me->wake, memory_order_acquire);
    atomic_store_explicit(&v->me->state, CR_VT_SYNC, memory_order_release);
    cr_vt_ring_sim(v);
    await_answer(v, w);
    cr_vt_mark(v);
    v->synced = c;
}

void cr_vt_block(cr_vt *v)
{
    int64_t c = atomic_load_explicit(&v->me->clock, memory_order_relaxed), nc;
    /* The simulator handles events up to its lookahead ahead of the running
     * ranks, so the next arrival may be here already: the in ring holds
     * records in the order of arrival, so no other can come before it. */
    int64_t next = v->next_arrival ? v->next_arrival(v->drain_arg, v->synced) : CR_VT_NEVER;
    nc = next != CR_VT_NEVER && next + 1 > c ? next + 1 : c;
    if (next != CR_VT_NEVER && complete_before(v, nc)) {
        set_clock(v, nc);
    } else {
        uint32_t w = atomic_load_explicit(&v->me->wake, memory_order_acquire);
        cr_vt_ring *in = cr_vt_ring_of(v->base, v->rank, 1);
        atomic_store_explicit(&v->me->block_next, next, memory_order_relaxed);
        atomic_store_explicit(&v->me->block_head, atomic_load(&in->tail), memory_order_relaxed);
        atomic_store_explicit(&v->me->state, CR_VT_BLOCK, memory_order_release);
        cr_vt_ring_sim(v);
        await_answer(v, w);
        nc = atomic_load_explicit(&v->me->clock, memory_order_relaxed); /* the answer's */
    }
    if (nc > c) v->me->acct.wait += nc - c;
    v->synced = nc > c ? nc : c;
    cr_vt_mark(v);
}

void cr_vt_done(cr_vt *v)
{
    cr_vt_now(v);
    atomic_store_explicit(&v->me->state, CR_VT_DONE, memory_order_release);
    cr_vt_ring_sim(v);
}
