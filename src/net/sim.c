/* Discrete-event kernel: a binary min-heap of events keyed by (time, sequence number), and
 * beside it a FIFO of the events scheduled for the current time (a header crossing a switch
 * of no delay, a zero-cost step of a protocol: most of a fat tree's events), which need no
 * sorting.
 *
 * Invariants: time never goes backwards (scheduling in the past is clamped to now and counts
 * as a bug in debug builds); two events at the same picosecond run in the order they were
 * scheduled, so a run depends only on the seed. The FIFO keeps that order: an event goes
 * there only when scheduled at the current time, so every event of the heap at that time was
 * scheduled before it (the heap's run first), and the FIFO is empty whenever time moves on.
 * All randomness comes from the per-simulation xoshiro256** state, seeded with splitmix64.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "cr_net.h"

typedef struct cr_event {
    cr_time t;
    uint64_t seq;
    cr_event_fn fn;
    void *obj;
    uint64_t arg;
} cr_event;

struct cr_sim {
    cr_event *heap;
    size_t n, cap;
    cr_event *q; /* the FIFO of events at now: a ring of qcap (a power of 2) */
    size_t qhead, qn, qcap;
    uint64_t seq;
    cr_time now;
    uint64_t events;
    int stopped;
    uint64_t rng[4];
    uint64_t prog_every;
    void (*prog_fn)(void *, cr_time);
    void *prog_ctx;
};

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint64_t cr_hash64(uint64_t x)
{
    return splitmix64(&x);
}

cr_sim *cr_sim_new(uint64_t seed)
{
    cr_sim *s = calloc(1, sizeof(*s));
    if (!s) return NULL;
    s->cap = 1024;
    s->heap = malloc(s->cap * sizeof(cr_event));
    s->qcap = 256;
    s->q = malloc(s->qcap * sizeof(cr_event));
    if (!s->heap || !s->q) {
        free(s->heap);
        free(s->q);
        free(s);
        return NULL;
    }
    s->prog_every = 1u << 20;
    for (int i = 0; i < 4; i++) s->rng[i] = splitmix64(&seed);
    return s;
}

void cr_sim_free(cr_sim *s)
{
    if (!s) return;
    free(s->heap);
    free(s->q);
    free(s);
}

static int ev_less(const cr_event *a, const cr_event *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

/* An event at the current time: to the FIFO's tail. */
static void q_push(cr_sim *s, cr_event e)
{
    if (s->qn == s->qcap) { /* grow, unrolling the ring */
        cr_event *q = malloc(2 * s->qcap * sizeof(cr_event));
        if (!q) abort();
        for (size_t i = 0; i < s->qn; i++) q[i] = s->q[(s->qhead + i) & (s->qcap - 1)];
        free(s->q);
        s->q = q;
        s->qhead = 0;
        s->qcap *= 2;
    }
    s->q[(s->qhead + s->qn++) & (s->qcap - 1)] = e;
}

void cr_sim_at(cr_sim *s, cr_time t, cr_event_fn fn, void *obj, uint64_t arg)
{
    assert(t >= s->now);
    if (t <= s->now) {
        q_push(s, (cr_event){s->now, s->seq++, fn, obj, arg});
        return;
    }
    if (s->n == s->cap) {
        s->cap *= 2;
        cr_event *h = realloc(s->heap, s->cap * sizeof(cr_event));
        if (!h) abort(); /* out of memory in the middle of a run: nothing sane to return */
        s->heap = h;
    }
    cr_event e = {t, s->seq++, fn, obj, arg};
    size_t i = s->n++;
    while (i > 0) { /* sift up */
        size_t p = (i - 1) / 2;
        if (!ev_less(&e, &s->heap[p])) break;
        s->heap[i] = s->heap[p];
        i = p;
    }
    s->heap[i] = e;
}

void cr_sim_after(cr_sim *s, cr_time dt, cr_event_fn fn, void *obj, uint64_t arg)
{
    cr_sim_at(s, s->now + dt, fn, obj, arg);
}

static cr_event pop_min(cr_sim *s)
{
    cr_event top = s->heap[0];
    cr_event last = s->heap[--s->n];
    size_t i = 0, n = s->n;
    for (;;) { /* sift down */
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && ev_less(&s->heap[c + 1], &s->heap[c])) c++;
        if (!ev_less(&s->heap[c], &last)) break;
        s->heap[i] = s->heap[c];
        i = c;
    }
    if (n) s->heap[i] = last;
    return top;
}

uint64_t cr_sim_run(cr_sim *s, cr_time until)
{
    uint64_t ran = 0;
    s->stopped = 0;
    while (!s->stopped) {
        cr_event e;
        if (s->n && s->heap[0].t <= until && (s->heap[0].t == s->now || !s->qn)) {
            e = pop_min(s); /* the heap's events at now were scheduled before the FIFO's */
        } else if (s->qn && s->now <= until) {
            e = s->q[s->qhead];
            s->qhead = (s->qhead + 1) & (s->qcap - 1);
            s->qn--;
        } else {
            break;
        }
        s->now = e.t;
        e.fn(s, e.obj, e.arg);
        ran++;
        if (++s->events % s->prog_every == 0 && s->prog_fn) s->prog_fn(s->prog_ctx, s->now);
    }
    return ran;
}

cr_time cr_sim_next(const cr_sim *s)
{
    return s->qn ? s->now : s->n ? s->heap[0].t : CR_TIME_NEVER;
}

void cr_sim_advance(cr_sim *s, cr_time t)
{
    assert(!s->n || s->heap[0].t >= t);
    assert(!s->qn || t <= s->now);
    if (t > s->now) s->now = t;
}

void cr_sim_stop(cr_sim *s)
{
    s->stopped = 1;
}

cr_time cr_sim_now(const cr_sim *s)
{
    return s->now;
}

uint64_t cr_sim_events(const cr_sim *s)
{
    return s->events;
}

size_t cr_sim_pending(const cr_sim *s)
{
    return s->n + s->qn;
}

void cr_sim_set_progress(cr_sim *s, uint64_t every, void (*fn)(void *, cr_time), void *ctx)
{
    s->prog_every = every ? every : 1;
    s->prog_fn = fn;
    s->prog_ctx = ctx;
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t cr_sim_rand(cr_sim *s)
{
    uint64_t *r = s->rng;
    uint64_t result = rotl(r[1] * 5, 7) * 9, t = r[1] << 17;
    r[2] ^= r[0];
    r[3] ^= r[1];
    r[1] ^= r[2];
    r[0] ^= r[3];
    r[2] ^= t;
    r[3] = rotl(r[3], 45);
    return result;
}

uint64_t cr_sim_rand_below(cr_sim *s, uint64_t n)
{
    if (n <= 1) return 0;
    /* Lemire's multiply-shift with rejection keeps the draw unbiased. */
    for (;;) {
        unsigned __int128 m = (unsigned __int128)cr_sim_rand(s) * n;
        uint64_t lo = (uint64_t)m;
        if (lo >= n || lo >= (uint64_t)(-n) % n) return (uint64_t)(m >> 64);
    }
}

cr_time cr_xfer_time(uint64_t bytes, uint64_t bps)
{
    unsigned __int128 num = (unsigned __int128)bytes * (uint64_t)CR_SEC;
    return (cr_time)((num + bps - 1) / bps);
}
