/* Small collectives of a whole-job group through memory every rank shares (the
 * transport's collective area), instead of point-to-point messages: barrier,
 * allreduce of up to 1 KiB, all-gather and all-to-all of up to one slot (the
 * transport's choice: 16 KiB per rank up to 16 ranks) of data per rank.
 *
 * Why: with messages, a barrier or allreduce is log2(n) rounds of send, receive
 * and match; with more ranks than cores every round is also a trip through the
 * scheduler. Here each member publishes its data and a generation word once, and
 * leaves when every member's word shows the generation: one cache-line transfer
 * per peer, and each rank needs the CPU about once per operation. Every form
 * waits for all members, so each synchronizes like a barrier (MPI allows it);
 * that is why broadcast stays with messages: a root that need not wait for
 * anyone runs ahead through a series of broadcasts (measured: 8 ranks on 2
 * cores, 8 bytes, 0.6-0.8 us by messages, 6.6-8.2 us here).
 *
 * Protocol, for the collective number s done through the area (g->area_seq, the
 * same on every member): gen = s + 1, parity p = gen & 1. A member writes its data into its
 * line (inline, up to 48 bytes) or its slot of parity p, stores gen into its
 * line of parity p (release), nudges sleeping peers, and waits until the lines
 * of parity p of all members hold gen (acquire). Allreduce then combines the
 * members' data in member order, so every member computes the same bits and
 * non-commutative operations get x0 op x1 op ... op x(n-1).
 * Invariants: a member cannot start area collective gen+2 (and so overwrite its
 * parity-p line or slot) before every member has arrived at gen+1, which each
 * does only after it has finished reading the data of gen; so two parities
 * suffice and a line that shows gen keeps showing it while anyone may still look
 * for it. This needs a count of the area's own collectives: the group's seq also
 * counts point-to-point collectives, which do not synchronize everyone. */
#include <string.h>

#include "coll.h"

/* Bytes: the largest allreduce taken this way. Every member combines all the
 * members' data, which beyond this costs more than the message algorithms. */
#define REDUCE_MAX 1024

/* The area of group g, when it has one and len bytes fit in a slot. */
static const cr_coll_area *area_of(cr_job *job, const cr_group *g, size_t len)
{
    if (!g->area || g->ranks || g->size != job->size || g->size < 2 ||
        cr_coll_forced() != CR_ALG_AUTO)
        return NULL;
    const cr_coll_area *a = cr_coll_area_get(job, g->area - 1);
    return a && len <= a->slot ? a : NULL;
}

typedef struct arrival {
    const cr_coll_area *a;
    int n, par, next; /* members 0..next-1 are known to have arrived */
    uint64_t gen;
} arrival;

static bool all_arrived(void *arg)
{
    arrival *w = arg;
    for (; w->next < w->n; w->next++)
        if (atomic_load_explicit(&w->a->lines[w->next * 2 + w->par].gen, memory_order_acquire) !=
            w->gen)
            return false;
    return true;
}

static inline const unsigned char *data_of(const arrival *w, int member, size_t len)
{
    if (len <= sizeof w->a->lines[0].data) return w->a->lines[member * 2 + w->par].data;
    return w->a->slots + ((size_t)w->par * (size_t)w->n + (size_t)member) * w->a->slot;
}

/* Publish len bytes of data (may be none) and wait for every member's. */
static void arrive_and_wait(cr_job *job, cr_group *g, const char *op, const cr_coll_area *a,
                            const void *data, size_t len, arrival *w)
{
    cr_trace_how(job, "shared area");
    g->seq++; /* one more collective of the group, as every other form counts it */
    *w = (arrival){.a = a, .n = g->size, .gen = (uint64_t)g->area_seq++ + 1};
    w->par = (int)(w->gen & 1);
    cr_coll_line *mine = &a->lines[g->me * 2 + w->par];
    if (len) memcpy((void *)data_of(w, g->me, len), data, len);
    atomic_store_explicit(&mine->gen, w->gen, memory_order_release);
    for (int i = 0; i < g->size; i++)
        if (i != g->me) cr_nudge(job, i);
    job->wait_op = op; /* for the hang watchdog: which member has not come */
    job->wait_peer = &w->next;
    cr_wait_until(job, op, all_arrived, w, NULL);
    job->wait_op = NULL;
    job->wait_peer = NULL;
}

bool cr_coll_shm_barrier(cr_job *job, cr_group *g, const char *op)
{
    const cr_coll_area *a = area_of(job, g, 0);
    if (!a) return false;
    arrival w;
    arrive_and_wait(job, g, op, a, NULL, 0, &w);
    return true;
}

bool cr_coll_shm_allreduce(cr_job *job, cr_group *g, const char *op, void *buf, size_t count,
                           const cr_redop *o)
{
    size_t len = count * o->elem;
    const cr_coll_area *a = len <= REDUCE_MAX ? area_of(job, g, len) : NULL;
    if (!a) return false;
    arrival w;
    arrive_and_wait(job, g, op, a, buf, len, &w);
    if (!len) return true;
    unsigned char tmp[REDUCE_MAX];
    o->fn(data_of(&w, 0, len), data_of(&w, 1, len), buf, count, o->arg);
    for (int i = 2; i < g->size; i++) cr_coll_combine(o, buf, data_of(&w, i, len), buf, count, tmp);
    return true;
}

bool cr_coll_shm_allgather(cr_job *job, cr_group *g, const char *op, void *rbuf, size_t blk)
{
    const cr_coll_area *a = area_of(job, g, blk);
    if (!a) return false;
    arrival w;
    char *r = rbuf;
    arrive_and_wait(job, g, op, a, r + (size_t)g->me * blk, blk, &w);
    for (int i = 0; i < g->size && blk; i++)
        if (i != g->me) memcpy(r + (size_t)i * blk, data_of(&w, i, blk), blk);
    return true;
}

bool cr_coll_shm_alltoall(cr_job *job, cr_group *g, const char *op, const void *sbuf, void *rbuf,
                          size_t blk)
{
    size_t all = blk * (size_t)g->size;
    if (blk && all / blk != (size_t)g->size) return false;
    const cr_coll_area *a = area_of(job, g, all);
    if (!a) return false;
    arrival w;
    arrive_and_wait(job, g, op, a, sbuf, all, &w);
    for (int i = 0; i < g->size && blk; i++)
        memcpy((char *)rbuf + (size_t)i * blk, data_of(&w, i, all) + (size_t)g->me * blk, blk);
    return true;
}
