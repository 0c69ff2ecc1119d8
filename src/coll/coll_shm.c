/* Collectives of a whole-job group through memory every rank shares (the
 * transport's collective area), instead of point-to-point messages: barrier,
 * allreduce of up to 1 KiB, all-to-all of up to one slot (the transport's
 * choice: 16 KiB per rank up to 16 ranks) of data per rank, all-gather (longer
 * blocks in pieces of a slot, one area collective each), and broadcast of long
 * messages in chunks.
 *
 * Why: with messages, a barrier or allreduce is log2(n) rounds of send, receive
 * and match; with more ranks than cores every round is also a trip through the
 * scheduler. Here each member publishes its data and a generation word once, and
 * leaves when every member's word shows the generation: one cache-line transfer
 * per peer, and each rank needs the CPU about once per operation. Those forms
 * wait for all members, so each synchronizes like a barrier (MPI allows it).
 * Broadcast does not: the root copies a chunk into the area and goes on, every
 * other member copies it out, so the data crosses memory twice whatever the
 * group size, with no system call, and the root writes chunk k+1 while the
 * others read chunk k. A short broadcast stays with messages, whose root need
 * not wait for anyone (measured: 8 ranks on 2 cores, 8 bytes, 0.6-0.8 us by
 * messages, 6.6-8.2 us through the area as a barrier-like form).
 *
 * Protocol, for the collective number s done through the area (g->area_seq, the
 * same on every member; a broadcast takes one number per chunk): gen = s + 1,
 * parity p = gen & 1. A member's line of parity p shows gen once the member has
 * arrived at gen, which it does only after it is done with gen - 1 and
 * everything before; lines only grow. In the barrier-like forms a member writes
 * its data into its line (inline, up to 48 bytes) or its slot of parity p,
 * stores gen into its line of parity p (release), nudges sleeping peers, and
 * waits until the lines of parity p of all members show gen (acquire).
 * Allreduce then combines the members' data in member order, so every member
 * computes the same bits and non-commutative operations get x0 op x1 op ... op
 * x(n-1). In a broadcast chunk the root waits until every line of parity 1-p
 * shows gen - 1 (all are done with gen - 2, the parity's previous use), copies
 * the chunk into all the slots of parity p, and stores gen; every other member
 * stores gen (arrived), waits for the root's gen and copies the chunk out.
 * Invariants: whoever writes data of parity p for gen knows that every member
 * is done with gen - 2. After a barrier-like gen - 1 everyone has arrived
 * there, so that holds; after a broadcast (g->area_loose) a member knows only
 * of the root, so before writing data it waits for every line of parity 1-p to
 * show gen - 1. So two parities suffice, and a member still looking for gen
 * finds it or a later generation (every wait is "at least gen"). This needs a
 * count of the area's own collectives: the group's seq also counts
 * point-to-point collectives, which do not synchronize everyone. */
#include <string.h>

#include "coll.h"

/* Bytes: the largest allreduce taken this way. Every member combines all the
 * members' data, which beyond this costs more than the message algorithms. */
#define REDUCE_MAX 1024
/* Bytes of a broadcast chunk (at most the n slots of a parity): small enough
 * that the root's copy of the next chunk overlaps the others' copies of this
 * one, large enough that the handshake per chunk is a small part of it. */
#define BCAST_CHUNK (64u << 10)

/* The area of group g, when it has one and len bytes fit in a slot. */
static const cr_coll_area *area_of(cr_job *job, const cr_group *g, size_t len)
{
    int f = cr_coll_forced(job);
    if (!g->area || g->ranks || g->size != job->size || g->size < 2 ||
        (f != CR_ALG_AUTO && f != CR_ALG_AREA))
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
        if (atomic_load_explicit(&w->a->lines[w->next * 2 + w->par].gen, memory_order_acquire) <
            w->gen)
            return false;
    return true;
}

/* Wait until the lines of parity par of members first..end-1 show at least gen. */
static void wait_arrived(cr_job *job, const cr_group *g, const char *op, const cr_coll_area *a,
                         int first, int end, int par, uint64_t gen, arrival *w)
{
    *w = (arrival){.a = a, .n = end, .next = first, .par = par, .gen = gen};
    job->wait_op = op; /* for the hang watchdog: which member has not come, and where */
    job->wait_peer = &w->next;
    job->wait_ctx = g->ctx;
    cr_wait_until(job, op, all_arrived, w, NULL);
    job->wait_op = NULL;
    job->wait_peer = NULL;
    job->wait_ctx = 0;
}

static inline const unsigned char *data_of(const arrival *w, int member, size_t len)
{
    if (len <= sizeof w->a->lines[0].data) return w->a->lines[member * 2 + w->par].data;
    return w->a->slots + ((size_t)w->par * (size_t)w->n + (size_t)member) * w->a->slot;
}

/* The generation of the group's next barrier-like area collective (how: the
 * trace's word for it). */
static uint64_t next_gen(cr_job *job, cr_group *g, const char *how)
{
    cr_trace_how(job, how);
    g->seq++; /* one more collective of the group, as every other form counts it */
    job->coll_shm_done++;
    return (uint64_t)g->area_seq++ + 1;
}

/* Publish len bytes of data (may be none) and wait for every member's. */
static void arrive_and_wait(cr_job *job, cr_group *g, const char *op, const cr_coll_area *a,
                            const void *data, size_t len, arrival *w)
{
    uint64_t gen = next_gen(job, g, "shared area");
    int par = (int)(gen & 1);
    if (g->area_loose && len) /* after a broadcast: is everyone done with gen - 2? */
        wait_arrived(job, g, op, a, 0, g->size, par ^ 1, gen - 1, w);
    g->area_loose = false; /* after this wait everyone has arrived at gen */
    *w = (arrival){.a = a, .n = g->size, .gen = gen, .par = par};
    cr_coll_line *mine = &a->lines[g->me * 2 + par];
    if (len) memcpy((void *)data_of(w, g->me, len), data, len);
    atomic_store_explicit(&mine->gen, gen, memory_order_release);
    for (int i = 0; i < g->size; i++)
        if (i != g->me) cr_nudge(job, i);
    wait_arrived(job, g, op, a, 0, g->size, par, gen, w);
}

/* With more ranks than cores, member 0 alone waits for everyone and then lets
 * the others go: it leaves first, while they still wait for a core. A
 * program's next step after a barrier is most often member 0's (the root of a
 * broadcast, the one who hands out work), and what it sends is then there when
 * the others come for it, instead of each of them yielding until member 0 gets
 * a core. It costs the barrier itself one hand-over more. 4 ranks on 2 cores,
 * interleaved with Open MPI 4.1: osu_bcast 8 B 1.6-1.8 -> 0.23-0.36 us (Open
 * MPI 0.18-0.72), osu_barrier 1.6 -> 2.2-2.5 (2.3-7.9); beside one CPU-bound
 * process osu_bcast 40-46 -> 9-15 (0.2-12.5), osu_barrier 40-55 -> 95-117
 * (6-190). With a core for each rank every member leaves as soon as it sees
 * the last one come (one cache-line transfer less). */
bool cr_coll_shm_barrier(cr_job *job, cr_group *g, const char *op)
{
    const cr_coll_area *a = area_of(job, g, 0);
    if (!a) return false;
    arrival w;
    if (!cr_group_oversub(job, g)) {
        arrive_and_wait(job, g, op, a, NULL, 0, &w);
        return true;
    }
    uint64_t gen = next_gen(job, g, "shared area, member 0 releases");
    int par = (int)(gen & 1);
    g->area_loose = false; /* when this member leaves, everyone has arrived at gen */
    if (g->me == 0) {
        wait_arrived(job, g, op, a, 1, g->size, par, gen, &w);
        atomic_store_explicit(&a->lines[par].gen, gen, memory_order_release);
        for (int i = 1; i < g->size; i++) cr_nudge(job, i);
    } else {
        atomic_store_explicit(&a->lines[g->me * 2 + par].gen, gen, memory_order_release);
        cr_nudge(job, 0);
        wait_arrived(job, g, op, a, 0, 1, par, gen, &w);
    }
    return true;
}

bool cr_coll_shm_reduces(cr_job *job, const cr_group *g, size_t len)
{
    return len <= REDUCE_MAX && area_of(job, g, len);
}

bool cr_coll_shm_allreduce(cr_job *job, cr_group *g, const char *op, const void *sbuf, void *rbuf,
                           size_t count, const cr_redop *o)
{
    size_t len = count * o->elem;
    const cr_coll_area *a = len <= REDUCE_MAX ? area_of(job, g, len) : NULL;
    if (!a) return false;
    arrival w;
    arrive_and_wait(job, g, op, a, sbuf, len, &w);
    if (!len) return true;
    /* Combined in the order the message algorithms combine (coll_reduce.c),
     * so that MPI_Iallreduce's schedule gives the same bits: with more ranks
     * than cores the members in order, joined as a binary counter; else runs
     * of them (the first 2 * extra members in pairs), a balanced tree over the
     * power of two of runs, as recursive doubling joins them. The places of
     * the stack above the bottom (rbuf) are room[], one vector each. */
    int n = g->size, pof2 = 1;
    while (pof2 * 2 <= n) pof2 *= 2;
    bool linear = cr_coll_linear(job, g, len);
    int runs = linear ? n : pof2, extra = linear ? 0 : n - pof2;
    /* (at most log2(n) places above the bottom: 14 for courier's 16384 ranks) */
    unsigned char tmp[REDUCE_MAX], room[15][REDUCE_MAX];
    const void *part[33];
    int height[33], top = 0;
    for (int v = 0; v < runs; v++) {
        int m = v < extra ? 2 * v : v + extra;
        void *at = top ? (void *)room[top - 1] : rbuf;
        if (v < extra)
            cr_coll_combine(job, o, data_of(&w, m, len), data_of(&w, m + 1, len), at, count, tmp);
        part[top] = v < extra ? at : data_of(&w, m, len);
        height[top++] = 0;
        for (; top >= 2 && height[top - 1] == height[top - 2]; top--) {
            void *out = top > 2 ? (void *)room[top - 3] : rbuf;
            cr_coll_combine(job, o, part[top - 2], part[top - 1], out, count, tmp);
            part[top - 2] = out, height[top - 2]++;
        }
    }
    for (; top >= 2; top--) {
        void *out = top > 2 ? (void *)room[top - 3] : rbuf;
        cr_coll_combine(job, o, part[top - 2], part[top - 1], out, count, tmp);
        part[top - 2] = out;
    }
    return true;
}

bool cr_coll_shm_allgather(cr_job *job, cr_group *g, const char *op, void *rbuf, size_t blk)
{
    const cr_coll_area *a = area_of(job, g, 0);
    /* Blocks longer than a slot go in pieces of a slot, one area collective
     * each: worth it only when every member has a core to copy with, and with
     * more than 2 members (between 2, one single-copy message moves a block);
     * forced ("area"), whenever there are more than 2. */
    if (!a ||
        (blk > a->slot && ((job->oversub && cr_coll_forced(job) != CR_ALG_AREA) || g->size < 3)))
        return false;
    arrival w;
    char *r = rbuf;
    size_t off = 0;
    do {
        size_t l = blk - off < a->slot ? blk - off : a->slot;
        arrive_and_wait(job, g, op, a, r + (size_t)g->me * blk + off, l, &w);
        for (int i = 0; i < g->size && l; i++)
            if (i != g->me) memcpy(r + (size_t)i * blk + off, data_of(&w, i, l), l);
        off += l;
    } while (off < blk);
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

bool cr_coll_shm_bcast(cr_job *job, cr_group *g, const char *op, void *buf, size_t len, int root)
{
    const cr_coll_area *a = area_of(job, g, 0);
    if (!a || !len) return false;
    cr_trace_how(job, "shared area");
    int n = g->size;
    size_t chunk = (size_t)n * a->slot;
    if (chunk > BCAST_CHUNK) chunk = BCAST_CHUNK;
    for (size_t off = 0; off < len; off += chunk) {
        size_t l = len - off < chunk ? len - off : chunk;
        uint64_t gen = (uint64_t)g->area_seq++ + 1;
        int par = (int)(gen & 1);
        unsigned char *data = a->slots + (size_t)par * (size_t)n * a->slot;
        arrival w;
        if (g->me == root) {
            wait_arrived(job, g, op, a, 0, n, par ^ 1, gen - 1, &w); /* all done with gen - 2 */
            memcpy(data, (const char *)buf + off, l);
            atomic_store_explicit(&a->lines[root * 2 + par].gen, gen, memory_order_release);
            for (int i = 0; i < n; i++)
                if (i != root) cr_nudge(job, i);
        } else {
            atomic_store_explicit(&a->lines[g->me * 2 + par].gen, gen, memory_order_release);
            cr_nudge(job, root); /* it may wait for this arrival to write the next chunk */
            wait_arrived(job, g, op, a, root, root + 1, par, gen, &w); /* the root's line alone */
            memcpy((char *)buf + off, data, l);
        }
    }
    g->area_loose = true; /* the others may still be reading: see arrive_and_wait */
    return true;
}
