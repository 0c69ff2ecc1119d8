/* Collective data movement over point-to-point: barrier, broadcast, gather,
 * scatter, all-gather, all-to-all and shift (reductions are in coll_reduce.c).
 *
 * Algorithms, chosen by message and group size (COURIER_COLL_ALG forces one):
 *  - barrier: dissemination, ceil(log2 n) rounds of zero-byte messages;
 *  - bcast: whole-job groups of more than 2 from 16 KiB, where no rank shares
 *    a core: in chunks through the collective area (coll_shm.c; between 2,
 *    one single-copy message is one copy, the area two: 1 MiB took 57 us by
 *    message, 125 through the area on 16 cores); otherwise binomial tree;
 *    long messages (>= 256 KiB, more than 2 members) go
 *    down a chain in segments so that every link works at once (pipeline);
 *    where every member is on this host with single copy (more than 2
 *    members, no more ranks than cores), from 1 MiB each member reads a share
 *    from the root and the rest from the others (split, coll_direct.c; every
 *    member reading the whole root's buffer, direct, is forced only);
 *  - gather/scatter: the root posts every transfer at once (linear, nonblocking);
 *  - allgather: through the collective area (coll_shm.c) for whole-job groups
 *    (blocks longer than a slot only where no rank shares a core); recursive
 *    doubling when the group size is a power of two and the total is small, a
 *    ring otherwise;
 *  - alltoall: Bruck (log2 n rounds of packed blocks) for small blocks, the
 *    pairwise exchange (n-1 rounds, one partner each) for middle ones, and from
 *    4 KiB every transfer posted at once (scatter: receives first, sends in the
 *    order me+1, me+2, ...) unless there are more ranks than cores (then
 *    pairwise: a rank that waits gives its core to the one it waits for). At 16
 *    ranks on 16 cores, scatter took 0.62-0.88 of pairwise's time from 4 KiB to
 *    1 MiB, but 1.3x at 2 KiB (bench/results/osu_coll16.md). From 8 KiB, where
 *    every member is on this host with single copy (same conditions as bcast),
 *    each member reads its blocks out of the others' send buffers in pairwise
 *    order (direct, coll_direct.c); forced only: pairwise with a bounded
 *    number of exchanges in flight (window, COURIER_COLL_WINDOW).
 * Invariants: every member calls the same collectives in the same order, so the
 * group's sequence number (part of every tag) is the same everywhere and the
 * messages of two successive collectives never match each other; all traffic
 * stays in the group's context, so it never matches point-to-point traffic;
 * a member never blocks in a send whose receiver waits for it in turn (when both
 * sides of an exchange may be long, the receive is posted before the send). */
#include <stdlib.h>
#include <string.h>

#include "coll.h"

/* Exchanges up to this size send first and then receive: the send is eager. */
#define SMALL_EXCHANGE 1024
#define BCAST_PIPE_MIN (256u << 10)
#define BCAST_LINEAR_MIN (16u << 10) /* oversubscribed: longer than the default eager limit */
#define BCAST_SEG_MIN (64u << 10)
#define ALLGATHER_RD_MAX (64u << 10)
#define BRUCK_BLK_MAX 256
#define SCATTER_BLK_MIN 4096
/* Single copy (coll_direct.c), where every member is on this host, more than
 * 2 members and no more ranks than cores. Set from COURIER_COLL_ALG sweeps on
 * 16 cores (bench/results/scale16.md): split beat the pipeline from 1 MiB
 * (0.61x Open MPI's time at 8 ranks, 0.98x at 16; 4 MiB 0.49x, 0.74x) and
 * lost below; direct all-to-all took 0.47-0.61x from 8 KiB. The direct
 * broadcast (every member reading the root's pages at once) lost everywhere,
 * 1.2-5x Open MPI's time: readers contend in the kernel on the root's pages;
 * it is left to be forced only. */
#define BCAST_SPLIT_MIN (1u << 20)
/* Through the collective area (coll_shm.c): on 16 cores 16 KiB-4 MiB took
 * 0.21-0.55x Open MPI's time at 16 ranks (binomial, pipeline and split
 * 0.5-2.4x); shorter ones stay with the binomial tree, whose root waits for
 * nobody (bench/results/scale16.md). */
#define BCAST_AREA_MIN (16u << 10)
#define ALLTOALL_DIRECT_MIN 8192
#define WINDOW_DEFAULT 4

int cr_coll_forced(void)
{
    static int forced = -1;
    if (forced >= 0) return forced;
    static const char *names[] = {"auto",   "binomial", "pipeline", "recdbl", "rabenseifner",
                                  "ring",   "bruck",    "pairwise", "linear", "scatter",
                                  "direct", "split",    "window",   "area"};
    const char *v = getenv("COURIER_COLL_ALG");
    int f = 0;
    for (int i = 0; v && i < (int)(sizeof names / sizeof *names); i++)
        if (!strcmp(v, names[i])) f = i;
    forced = f;
    return f;
}

/* ---- point-to-point helpers ---------------------------------------------- */

void cr_coll_send(cr_job *job, cr_group *g, const char *op, int to, int32_t tag, const void *buf,
                  size_t len)
{
    cr_send(job, op, cr_group_rank(g, to), g->ctx, tag, buf, len);
}

cr_req *cr_coll_irecv(cr_job *job, cr_group *g, const char *op, int from, int32_t tag, void *buf,
                      size_t len)
{
    cr_sel sel = {
        .src = cr_group_rank(g, from), .ctx = g->ctx, .tag_mode = CR_TAG_EXACT, .tag = tag};
    return cr_irecv_note(job, op, &sel, buf, len, g->trunc);
}

void cr_coll_wait(cr_job *job, cr_req *r)
{
    cr_req_wait(job, r);
    cr_req_release(job, r);
}

void cr_coll_recv(cr_job *job, cr_group *g, const char *op, int from, int32_t tag, void *buf,
                  size_t len)
{
    cr_sel sel = {
        .src = cr_group_rank(g, from), .ctx = g->ctx, .tag_mode = CR_TAG_EXACT, .tag = tag};
    cr_status st;
    cr_recv_note(job, op, &sel, buf, len, g->trunc, &st); /* the engine's blocking receive */
}

void cr_coll_sendrecv(cr_job *job, cr_group *g, const char *op, int to, const void *sbuf,
                      size_t slen, int from, void *rbuf, size_t rlen, int32_t tag)
{
    if (slen <= SMALL_EXCHANGE) {
        cr_coll_send(job, g, op, to, tag, sbuf, slen);
        cr_coll_recv(job, g, op, from, tag, rbuf, rlen);
        return;
    }
    cr_req *r = cr_coll_irecv(job, g, op, from, tag, rbuf, rlen);
    cr_coll_send(job, g, op, to, tag, sbuf, slen);
    cr_coll_wait(job, r);
}

void *cr_coll_alloc(cr_job *job, const char *op, size_t len)
{
    void *p = malloc(len ? len : 1);
    if (!p) cr_fatal(job, op, "out of memory for %zu bytes of collective scratch space", len);
    return p;
}

static void wait_all(cr_job *job, cr_req **r, int n)
{
    for (int i = 0; i < n; i++)
        if (r[i]) cr_coll_wait(job, r[i]);
}

/* ---- barrier ------------------------------------------------------------- */

#define LINEAR_MAX 4096

bool cr_coll_linear(const cr_job *job, const cr_group *g, size_t len)
{
    int f = cr_coll_forced();
    if (f == CR_ALG_LINEAR) return g->size > 2;
    return f == CR_ALG_AUTO && job->oversub && g->size > 2 && len <= LINEAR_MAX;
}

/* i mod n for 0 <= i < 2n, without a division (on every blocking call's path). */
static inline int wrap(int i, int n)
{
    return i >= n ? i - n : i;
}

void cr_build_barrier(cr_job *job, cr_sched *s, const cr_group *g)
{
    int n = g->size, me = g->me, step = 0;
    for (int k = 1; k < n; k <<= 1, step++) {
        cr_sched_recv(job, s, cr_group_rank(g, wrap(me - k + n, n)), step, NULL, 0);
        cr_sched_send(job, s, cr_group_rank(g, wrap(me + k, n)), step, NULL, 0);
        cr_sched_round(job, s);
    }
}

/* A blocking collective's schedule: seq taken, its tags CR_COLL_TAG's. */
static void sched_of(cr_sched *s, cr_group *g, const char *op, uint32_t seq)
{
    cr_sched_init(s, op, g->ctx, 0, 0x7ffffu, seq);
    s->trunc = g->trunc;
    cr_sched_now(s);
}

void cr_coll_barrier(cr_job *job, cr_group *g, const char *op)
{
    if (cr_coll_shm_barrier(job, g, op)) return;
    uint32_t seq = g->seq++;
    int n = g->size;
    if (cr_coll_linear(job, g, 0)) {
        cr_trace_how(job, "linear");
        if (g->me) {
            cr_coll_send(job, g, op, 0, CR_COLL_TAG(seq, 0), NULL, 0);
            cr_coll_recv(job, g, op, 0, CR_COLL_TAG(seq, 1), NULL, 0);
            return;
        }
        for (int i = 1; i < n; i++) cr_coll_recv(job, g, op, i, CR_COLL_TAG(seq, 0), NULL, 0);
        for (int i = 1; i < n; i++) cr_coll_send(job, g, op, i, CR_COLL_TAG(seq, 1), NULL, 0);
        return;
    }
    cr_trace_how(job, "dissemination");
    cr_sched s;
    sched_of(&s, g, op, seq);
    cr_build_barrier(job, &s, g);
    cr_sched_run(job, &s);
    cr_sched_free(job, &s);
}

/* ---- broadcast ----------------------------------------------------------- */

void cr_build_bcast(cr_job *job, cr_sched *s, const cr_group *g, void *buf, size_t len, int root,
                    int step)
{
    int n = g->size, rel = wrap(g->me - root + n, n), mask = 1;
    while (mask < n) {
        if (rel & mask) {
            cr_sched_recv(job, s, cr_group_rank(g, wrap(rel - mask + root, n)), step, buf, len);
            cr_sched_round(job, s);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (rel + mask < n)
            cr_sched_send(job, s, cr_group_rank(g, wrap(rel + mask + root, n)), step, buf, len);
    cr_sched_round(job, s);
}

void cr_coll_bcast_tree(cr_job *job, cr_group *g, const char *op, void *buf, size_t len, int root,
                        uint32_t seq, int step)
{
    cr_trace_how(job, "binomial");
    cr_sched s;
    sched_of(&s, g, op, seq);
    cr_build_bcast(job, &s, g, buf, len, root, step);
    cr_sched_run(job, &s);
    cr_sched_free(job, &s);
}

/* Chain root -> root+1 -> ... in segments: member i forwards segment s while
 * it receives segment s+1. */
static void bcast_pipeline(cr_job *job, cr_group *g, const char *op, void *buf, size_t len,
                           int root, int32_t tag)
{
    cr_trace_how(job, "pipeline");
    int n = g->size, rel = (g->me - root + n) % n;
    size_t seg = len / 64 > BCAST_SEG_MIN ? len / 64 : BCAST_SEG_MIN;
    size_t nseg = (len + seg - 1) / seg;
    int prev = (g->me - 1 + n) % n, next = (g->me + 1) % n;
    cr_req **rr = cr_coll_alloc(job, op, 2 * nseg * sizeof *rr), **sr = rr + nseg;
    for (size_t s = 0; s < nseg; s++) {
        size_t off = s * seg, l = len - off < seg ? len - off : seg;
        rr[s] = rel ? cr_coll_irecv(job, g, op, prev, tag, (char *)buf + off, l) : NULL;
        sr[s] = NULL;
    }
    for (size_t s = 0; s < nseg; s++) {
        size_t off = s * seg, l = len - off < seg ? len - off : seg;
        if (rr[s]) cr_coll_wait(job, rr[s]);
        if (rel < n - 1)
            sr[s] = cr_isend(job, op, cr_group_rank(g, next), g->ctx, tag, (char *)buf + off, l);
    }
    for (size_t s = 0; s < nseg; s++)
        if (sr[s]) cr_coll_wait(job, sr[s]);
    free(rr);
}

/* The root sends to every member at once. With more ranks than cores and long
 * messages this beats the tree: each member needs the CPU once to pull its copy,
 * none waits for a parent to be scheduled first (8 ranks on 2 cores: 64 KiB 44-45
 * -> 34-35 us, 1 MiB 390-470 -> 325-340). */
static void bcast_linear(cr_job *job, cr_group *g, const char *op, void *buf, size_t len, int root,
                         int32_t tag)
{
    cr_trace_how(job, "linear");
    if (g->me != root) {
        cr_coll_recv(job, g, op, root, tag, buf, len);
        return;
    }
    cr_req **r = cr_coll_alloc(job, op, (size_t)g->size * sizeof *r);
    int n = 0;
    for (int i = 0; i < g->size; i++)
        if (i != root) r[n++] = cr_isend(job, op, cr_group_rank(g, i), g->ctx, tag, buf, len);
    wait_all(job, r, n);
    free(r);
}

void cr_coll_bcast(cr_job *job, cr_group *g, const char *op, void *buf, size_t len, int root)
{
    uint32_t seq = g->seq++;
    int32_t tag = CR_COLL_TAG(seq, 0);
    if (g->size == 1) return;
    int f = cr_coll_forced();
    if ((f == CR_ALG_AREA ||
         (f == CR_ALG_AUTO && !job->oversub && g->size > 2 && len >= BCAST_AREA_MIN)) &&
        cr_coll_shm_bcast(job, g, op, buf, len, root))
        return;
    bool single = f == CR_ALG_DIRECT || f == CR_ALG_SPLIT;
    if ((single || (f == CR_ALG_AUTO && !job->oversub && g->size > 2 && len >= BCAST_SPLIT_MIN)) &&
        len > 0 && cr_coll_direct_ok(job, g)) {
        if (f == CR_ALG_DIRECT)
            cr_coll_bcast_direct(job, g, op, buf, len, root, seq);
        else
            cr_coll_bcast_split(job, g, op, buf, len, root, seq);
        return;
    }
    if (single) f = CR_ALG_AUTO; /* forced where it does not apply: the automatic choice */
    if (f == CR_ALG_LINEAR || (f == CR_ALG_AUTO && job->oversub && len >= BCAST_LINEAR_MIN)) {
        bcast_linear(job, g, op, buf, len, root, tag);
        return;
    }
    bool pipe = f == CR_ALG_PIPELINE ||
                (f != CR_ALG_BINOMIAL && len >= BCAST_PIPE_MIN && g->size > 2 && !job->oversub);
    if (pipe && len > 0)
        bcast_pipeline(job, g, op, buf, len, root, tag);
    else
        cr_coll_bcast_tree(job, g, op, buf, len, root, seq, 0);
}

/* ---- gather and scatter -------------------------------------------------- */

void cr_coll_gather(cr_job *job, cr_group *g, const char *op, const void *sbuf, void *rbuf,
                    size_t blk, int root)
{
    cr_trace_how(job, "linear");
    int32_t tag = CR_COLL_TAG(g->seq++, 0);
    if (g->me != root) {
        cr_coll_send(job, g, op, root, tag, sbuf, blk);
        return;
    }
    cr_req **r = cr_coll_alloc(job, op, (size_t)g->size * sizeof *r);
    for (int i = 0; i < g->size; i++)
        r[i] = i == root ? NULL : cr_coll_irecv(job, g, op, i, tag, (char *)rbuf + i * blk, blk);
    if ((char *)rbuf + root * blk != sbuf) memmove((char *)rbuf + root * blk, sbuf, blk);
    wait_all(job, r, g->size);
    free(r);
}

void cr_coll_scatter(cr_job *job, cr_group *g, const char *op, const void *sbuf, void *rbuf,
                     size_t blk, int root)
{
    cr_trace_how(job, "linear");
    int32_t tag = CR_COLL_TAG(g->seq++, 0);
    if (g->me != root) {
        cr_coll_recv(job, g, op, root, tag, rbuf, blk);
        return;
    }
    cr_req **r = cr_coll_alloc(job, op, (size_t)g->size * sizeof *r);
    for (int i = 0; i < g->size; i++)
        r[i] = i == root ? NULL
                         : cr_isend(job, op, cr_group_rank(g, i), g->ctx, tag,
                                    (const char *)sbuf + i * blk, blk);
    if ((const char *)sbuf + root * blk != rbuf)
        memmove(rbuf, (const char *)sbuf + root * blk, blk);
    wait_all(job, r, g->size);
    free(r);
}

/* ---- all-gather ---------------------------------------------------------- */

static void allgather_recdbl(cr_job *job, cr_group *g, const char *op, char *rbuf, size_t blk,
                             uint32_t seq)
{
    cr_trace_how(job, "recursive doubling");
    int me = g->me, step = 0;
    for (int mask = 1; mask < g->size; mask <<= 1, step++) {
        int peer = me ^ mask;
        int mine = me & ~(mask - 1), theirs = peer & ~(mask - 1);
        cr_coll_sendrecv(job, g, op, peer, rbuf + mine * blk, mask * blk, peer, rbuf + theirs * blk,
                         mask * blk, CR_COLL_TAG(seq, step));
    }
}

static void allgather_ring(cr_job *job, cr_group *g, const char *op, char *rbuf, size_t blk,
                           uint32_t seq)
{
    cr_trace_how(job, "ring");
    int n = g->size, me = g->me, right = (me + 1) % n, left = (me - 1 + n) % n;
    for (int i = 0; i < n - 1; i++) {
        int sb = (me - i + n) % n, rb = (me - i - 1 + n) % n;
        cr_coll_sendrecv(job, g, op, right, rbuf + sb * blk, blk, left, rbuf + rb * blk, blk,
                         CR_COLL_TAG(seq, i & 0xfff));
    }
}

void cr_coll_allgather(cr_job *job, cr_group *g, const char *op, const void *sbuf, void *rbuf,
                       size_t blk)
{
    char *r = rbuf;
    if (r + g->me * blk != sbuf) memmove(r + g->me * blk, sbuf, blk);
    if (cr_coll_shm_allgather(job, g, op, rbuf, blk)) return;
    uint32_t seq = g->seq++;
    int n = g->size, f = cr_coll_forced();
    bool pof2 = (n & (n - 1)) == 0;
    if (n == 1) return;
    if (pof2 && (f == CR_ALG_RECDBL || (f != CR_ALG_RING && blk * n <= ALLGATHER_RD_MAX)))
        allgather_recdbl(job, g, op, r, blk, seq);
    else
        allgather_ring(job, g, op, r, blk, seq);
}

/* ---- all-to-all ---------------------------------------------------------- */

/* Bruck: rotate so that block i is for member me+i; in round k every block whose
 * index has bit k set moves k members on; at the end block i came from me-i. */
static void alltoall_bruck(cr_job *job, cr_group *g, const char *op, const char *sbuf, char *rbuf,
                           size_t blk, uint32_t seq)
{
    cr_trace_how(job, "bruck");
    int n = g->size, me = g->me;
    char *tmp = cr_coll_alloc(job, op, 3 * (size_t)n * blk);
    char *pack = tmp + (size_t)n * blk, *unpack = pack + (size_t)n * blk;
    for (int i = 0; i < n; i++) memcpy(tmp + i * blk, sbuf + ((me + i) % n) * blk, blk);
    int step = 0;
    for (int k = 1; k < n; k <<= 1, step++) {
        size_t m = 0;
        for (int i = 0; i < n; i++)
            if (i & k) memcpy(pack + (m++) * blk, tmp + i * blk, blk);
        cr_coll_sendrecv(job, g, op, (me + k) % n, pack, m * blk, (me - k + n) % n, unpack, m * blk,
                         CR_COLL_TAG(seq, step));
        m = 0;
        for (int i = 0; i < n; i++)
            if (i & k) memcpy(tmp + i * blk, unpack + (m++) * blk, blk);
    }
    for (int i = 0; i < n; i++) memcpy(rbuf + ((me - i + n) % n) * blk, tmp + i * blk, blk);
    free(tmp);
}

static void alltoall_pairwise(cr_job *job, cr_group *g, const char *op, const char *sbuf,
                              char *rbuf, size_t blk, uint32_t seq)
{
    cr_trace_how(job, "pairwise");
    int n = g->size, me = g->me;
    memmove(rbuf + me * blk, sbuf + me * blk, blk);
    for (int i = 1; i < n; i++) {
        int to = (me + i) % n, from = (me - i + n) % n;
        cr_coll_sendrecv(job, g, op, to, sbuf + to * blk, blk, from, rbuf + from * blk, blk,
                         CR_COLL_TAG(seq, i & 0xfff));
    }
}

static void alltoall_scatter(cr_job *job, cr_group *g, const char *op, const char *sbuf, char *rbuf,
                             size_t blk, uint32_t seq)
{
    cr_trace_how(job, "scatter");
    int n = g->size, me = g->me;
    cr_req **r = cr_coll_alloc(job, op, 2 * (size_t)n * sizeof *r);
    memmove(rbuf + me * blk, sbuf + me * blk, blk);
    for (int i = 1; i < n; i++) {
        int from = (me - i + n) % n;
        r[i] = cr_coll_irecv(job, g, op, from, CR_COLL_TAG(seq, 0), rbuf + from * blk, blk);
    }
    for (int i = 1; i < n; i++) {
        int to = (me + i) % n;
        r[n + i] = cr_isend(job, op, cr_group_rank(g, to), g->ctx, CR_COLL_TAG(seq, 0),
                            sbuf + to * blk, blk);
    }
    for (int i = 1; i < n; i++) cr_coll_wait(job, r[i]);
    for (int i = 1; i < n; i++) cr_coll_wait(job, r[n + i]);
    free(r);
}

/* Pairwise order with up to w exchanges in flight: step i receives from me-i
 * and sends to me+i; step i is posted once step i-w is complete. Every member
 * posts its steps in the same order and waits only for steps posted w before,
 * so the wait of step i needs only steps <= i of the others: no deadlock. */
static void alltoall_window(cr_job *job, cr_group *g, const char *op, const char *sbuf, char *rbuf,
                            size_t blk, uint32_t seq, int w)
{
    cr_trace_how(job, "window");
    int n = g->size, me = g->me, done = 1;
    cr_req **r = cr_coll_alloc(job, op, 2 * (size_t)n * sizeof *r);
    memmove(rbuf + me * blk, sbuf + me * blk, blk);
    for (int i = 1; i < n; i++) {
        for (; i - done >= w; done++) {
            cr_coll_wait(job, r[2 * done]);
            cr_coll_wait(job, r[2 * done + 1]);
        }
        int to = (me + i) % n, from = (me - i + n) % n;
        r[2 * i] = cr_coll_irecv(job, g, op, from, CR_COLL_TAG(seq, 0), rbuf + from * blk, blk);
        r[2 * i + 1] = cr_isend(job, op, cr_group_rank(g, to), g->ctx, CR_COLL_TAG(seq, 0),
                                sbuf + to * blk, blk);
    }
    for (; done < n; done++) {
        cr_coll_wait(job, r[2 * done]);
        cr_coll_wait(job, r[2 * done + 1]);
    }
    free(r);
}

/* Exchanges in flight for the window all-to-all: COURIER_COLL_WINDOW (read
 * per call: no state kept), else WINDOW_DEFAULT. */
static int window_of(void)
{
    const char *v = getenv("COURIER_COLL_WINDOW");
    long w = v ? strtol(v, NULL, 10) : WINDOW_DEFAULT;
    return w < 1 ? 1 : w > 4096 ? 4096 : (int)w;
}

void cr_coll_alltoall(cr_job *job, cr_group *g, const char *op, const void *sbuf, void *rbuf,
                      size_t blk)
{
    if (cr_coll_shm_alltoall(job, g, op, sbuf, rbuf, blk)) return;
    uint32_t seq = g->seq++;
    int f = cr_coll_forced();
    if ((f == CR_ALG_DIRECT ||
         (f == CR_ALG_AUTO && !job->oversub && g->size > 2 && blk >= ALLTOALL_DIRECT_MIN)) &&
        blk > 0 && g->size > 1 && cr_coll_direct_ok(job, g)) {
        if (!cr_coll_alltoall_direct(job, g, op, sbuf, rbuf, blk))
            alltoall_pairwise(job, g, op, sbuf, rbuf, blk, seq); /* a read was refused */
        return;
    }
    if (f == CR_ALG_DIRECT || f == CR_ALG_SPLIT) f = CR_ALG_AUTO; /* does not apply here */
    if (f == CR_ALG_WINDOW && g->size > 1)
        alltoall_window(job, g, op, sbuf, rbuf, blk, seq, window_of());
    else if (g->size > 2 && (f == CR_ALG_BRUCK || (f == CR_ALG_AUTO && blk <= BRUCK_BLK_MAX)))
        alltoall_bruck(job, g, op, sbuf, rbuf, blk, seq);
    else if (g->size > 2 &&
             (f == CR_ALG_SCATTER || (f == CR_ALG_AUTO && !job->oversub && blk >= SCATTER_BLK_MIN)))
        alltoall_scatter(job, g, op, sbuf, rbuf, blk, seq);
    else
        alltoall_pairwise(job, g, op, sbuf, rbuf, blk, seq);
}

/* ---- shift --------------------------------------------------------------- */

void cr_coll_shift(cr_job *job, cr_group *g, const char *op, const void *sbuf, void *rbuf,
                   size_t len, int step, bool circular)
{
    cr_trace_how(job, "shift");
    int32_t tag = CR_COLL_TAG(g->seq++, 0);
    int n = g->size;
    long to = (long)g->me + step, from = (long)g->me - step;
    if (circular) {
        to = ((to % n) + n) % n;
        from = ((from % n) + n) % n;
    }
    bool has_to = to >= 0 && to < n, has_from = from >= 0 && from < n;
    cr_req *r = has_from ? cr_coll_irecv(job, g, op, (int)from, tag, rbuf, len) : NULL;
    if (has_to) cr_coll_send(job, g, op, (int)to, tag, sbuf, len);
    if (r) cr_coll_wait(job, r);
}
